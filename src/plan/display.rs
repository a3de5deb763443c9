//! Spark's one-line description of each logical node; `common::tree::draw_tree` draws the tree.

use super::{GroupingSetsKind, LogicalPlan, RepartitionScheme};
use crate::expr::Expr;

fn list(items: &[Expr], sep: &str) -> String {
    items.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(sep)
}

impl LogicalPlan {
    /// The node's line in a tree string, without children (Spark's `simpleString`).
    pub fn node_string(&self) -> String {
        if let (Some(cache), LogicalPlan::Relation { output, .. }) = (self.cached_relation(), self) {
            return cache.line(output);
        }
        let mark = if self.resolved() { "" } else { "'" };
        let body = match self {
            LogicalPlan::UnresolvedRelation { name, args: None } => format!("UnresolvedRelation [{}], [], false", name.join(", ")),
            LogicalPlan::UnresolvedRelation { name, args: Some(args) } => {
                format!("UnresolvedTableValuedFunction [{}], [{}], false", name.join(", "), args.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "))
            }
            LogicalPlan::SubqueryAlias { alias, .. } => format!("SubqueryAlias {alias}"),
            LogicalPlan::Relation { table, output } => {
                let cols = output.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",");
                format!("Relation {}[{}] {}", table.qualified_name(), cols, table.format_name())
            }
            LogicalPlan::LocalRelation { output, data } => {
                let cols = output.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
                if data.iter().all(|b| b.num_rows() == 0) {
                    format!("LocalRelation <empty>, [{cols}]")
                } else {
                    format!("LocalRelation [{cols}]")
                }
            }
            LogicalPlan::Range { range, .. } => range.logical_string(),
            LogicalPlan::OneRowRelation => "OneRowRelation".to_string(),
            LogicalPlan::Project { list: l, .. } => format!("Project [{}]", list(l, ", ")),
            LogicalPlan::Filter { condition, .. } => format!("Filter {condition}"),
            // Spark's argString leaves out empty lists: a global aggregate is `Aggregate [aggs]`.
            LogicalPlan::Aggregate { grouping, aggregates, .. } if grouping.is_empty() => format!("Aggregate [{}]", list(aggregates, ", ")),
            LogicalPlan::Aggregate { grouping, aggregates, .. } => {
                format!("Aggregate [{}], [{}]", list(grouping, ", "), list(aggregates, ", "))
            }
            LogicalPlan::GroupingSets { kind, elements, exprs, aggregates, .. } => {
                let name = match kind {
                    GroupingSetsKind::Rollup => "rollup",
                    GroupingSetsKind::Cube => "cube",
                    GroupingSetsKind::GroupingSets => "groupingsets",
                };
                let vectors = elements.iter().map(|e| format!("Vector({})", e.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")));
                let args: Vec<String> = vectors.chain(exprs.iter().map(|e| e.to_string())).collect();
                format!("Aggregate [{name}({})], [{}]", args.join(", "), list(aggregates, ", "))
            }
            LogicalPlan::Expand { projections, output, .. } => {
                let rows: Vec<String> = projections.iter().map(|p| format!("[{}]", list(p, ", "))).collect();
                let cols: Vec<String> = output.iter().map(|a| a.to_string()).collect();
                format!("Expand [{}], [{}]", rows.join(", "), cols.join(", "))
            }
            // Spark's argString: generator, unrequiredChildIndex and qualifier when there are any,
            // outer, the generated columns (their names before analysis).
            LogicalPlan::Generate { generator, unrequired, outer, qualifier, names, generator_output, .. } => {
                let mut parts = vec![generator.to_string()];
                if !unrequired.is_empty() {
                    parts.push(format!("[{}]", unrequired.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")));
                }
                parts.push(outer.to_string());
                parts.extend(qualifier.clone());
                let cols: Vec<String> = if generator_output.is_empty() { names.iter().map(|n| format!("'{n}")).collect() } else { generator_output.iter().map(|a| a.to_string()).collect() };
                if !cols.is_empty() {
                    parts.push(format!("[{}]", cols.join(", ")));
                }
                format!("Generate {}", parts.join(", "))
            }
            LogicalPlan::Join { join_type, condition, using, hint, .. } => {
                // Spark's argString leaves out a missing condition and an empty hint.
                let hint = Some(hint.to_string()).filter(|h| !h.is_empty()).map(|h| format!(", {h}")).unwrap_or_default();
                if using.len() == 1 && using[0] == crate::plan::NATURAL_JOIN {
                    format!("Join NaturalJoin({}), None{hint}", join_type.name())
                } else if !using.is_empty() {
                    format!("Join UsingJoin({},List({})), None{hint}", join_type.name(), using.join(", "))
                } else {
                    match condition {
                        Some(c) => format!("Join {}, {c}{hint}", join_type.name()),
                        None => format!("Join {}{hint}", join_type.name()),
                    }
                }
            }
            // Spark's argString: the subquery expression, the join type, the condition if any.
            LogicalPlan::LateralJoin { right, id, join_type, condition, .. } => {
                let outer = right.outer_references().iter().map(|a| a.to_string()).collect::<Vec<_>>().join(" && ");
                let cond = condition.as_ref().map(|c| format!(", {c}")).unwrap_or_default();
                format!("LateralJoin lateral-subquery#{} [{outer}], {}{cond}", id.0, join_type.name())
            }
            LogicalPlan::UnresolvedSubqueryColumnAliases { names, .. } => format!("UnresolvedSubqueryColumnAliases [{}]", names.join(", ")),
            LogicalPlan::Pivot { aggregates, .. } => format!("Pivot [{}]", list(aggregates, ", ")),
            LogicalPlan::Unpivot { columns, names, value_names, name_column, .. } => {
                let cols: Vec<String> = columns.iter().map(|c| format!("[{}]", list(c, ", "))).collect();
                format!("Unpivot [{}], [{}], {name_column}, [{}]", cols.join(", "), names.join(", "), value_names.join(", "))
            }
            LogicalPlan::UnresolvedHint { name, params, .. } => {
                // A number is a literal, a name an unresolved attribute: `[3, 'id]`.
                let shown = params.iter().map(|p| if p.parse::<i64>().is_ok() { p.clone() } else { format!("'{p}") });
                format!("UnresolvedHint {name}, [{}]", shown.collect::<Vec<_>>().join(", "))
            }
            LogicalPlan::ResolvedHint { strategy, .. } => format!("ResolvedHint (strategy={})", strategy.display_name()),
            LogicalPlan::Sort { order, global, .. } => {
                let keys = order.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", ");
                format!("Sort [{keys}], {global}")
            }
            LogicalPlan::Window { window_exprs, partition_by, order_by, .. } => {
                let keys = order_by.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", ");
                format!("Window [{}], [{}], [{keys}]", list(window_exprs, ", "), list(partition_by, ", "))
            }
            LogicalPlan::SetOperation { kind, all, .. } => {
                format!("{}{} {all}", kind.name(), if *all { "All" } else { "" })
            }
            LogicalPlan::GlobalLimit { limit, .. } => format!("GlobalLimit {limit}"),
            LogicalPlan::LocalLimit { limit, .. } => format!("LocalLimit {limit}"),
            LogicalPlan::Offset { offset, .. } => format!("Offset {offset}"),
            LogicalPlan::Repartition { scheme, .. } => match scheme {
                RepartitionScheme::Count { partitions, shuffle } => format!("Repartition {partitions}, {shuffle}"),
                // Spark leaves an empty key list out: `RepartitionByExpression 3`.
                RepartitionScheme::Hash { keys, partitions: Some(n) } if keys.is_empty() => format!("RepartitionByExpression {n}"),
                RepartitionScheme::Hash { keys, partitions } => format!("RepartitionByExpression [{}]{}", list(keys, ", "), partitions.map(|n| format!(", {n}")).unwrap_or_default()),
                RepartitionScheme::Range { order, partitions } => {
                    let keys = order.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", ");
                    format!("RepartitionByExpression [{keys}]{}", partitions.map(|n| format!(", {n}")).unwrap_or_default())
                }
            },
            LogicalPlan::Distinct { .. } => "Distinct".to_string(),
            // Spark prints `byName, allowMissingCol`; kiln's unions are by position.
            LogicalPlan::Union { .. } => "Union false, false".to_string(),
            LogicalPlan::UnionLoop { id, limit, .. } => match limit {
                Some(n) => format!("UnionLoop {}, {n}", id.0),
                None => format!("UnionLoop {}", id.0),
            },
            LogicalPlan::UnionLoopRef { id, output } => {
                let cols = output.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
                format!("UnionLoopRef {}, [{cols}], false", id.0)
            },
        };
        format!("{mark}{body}")
    }
}

/// Spark's tree string of a logical plan.
pub fn tree_string(plan: &LogicalPlan) -> String {
    crate::common::tree::draw_tree(plan, &|p: &LogicalPlan| with_subquery_plans(p), &|p: &LogicalPlan| {
        p.children().into_iter().map(|c| c.as_ref()).collect()
    })
}

/// The node's line with the plans of the subquery expressions it holds below it, as Spark
/// prints them (inner children, before the children).
fn with_subquery_plans(p: &LogicalPlan) -> String {
    let mut seen = vec![];
    let mut inner = vec![];
    if let LogicalPlan::LateralJoin { right, .. } = p {
        inner.push(tree_string(right.plan()));
    }
    if let Some(cache) = p.cached_relation() {
        inner.push(cache.plan.clone());
    }
    for e in p.expressions() {
        e.visit(&mut |x| {
            if let Expr::ScalarSubquery { plan, id } | Expr::Exists { plan, id } | Expr::InSubquery { plan, id, .. } = x {
                if !seen.contains(id) {
                    seen.push(*id);
                    inner.push(tree_string(plan.plan()));
                }
            }
        });
    }
    crate::common::tree::with_inner_children(p.node_string(), !p.children().is_empty(), &inner)
}
