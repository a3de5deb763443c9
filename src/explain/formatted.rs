//! `EXPLAIN FORMATTED` (Spark's `ExplainUtils.processPlan`): an outline of the physical plan
//! naming each operator with an id, then one block per operator, in id order, with its
//! inputs, outputs and arguments.
//!
//! ```text
//! == Physical Plan ==
//! * Filter (2)
//! +- Scan parquet spark_catalog.default.orders (1)
//!
//!
//! (1) Scan parquet spark_catalog.default.orders
//! Output [2]: [order_id#85, status#87]
//! ...
//!
//! (2) Filter [codegen id : 1]
//! Input [2]: [order_id#85, status#87]
//! Condition : (isnotnull(status#87) AND (status#87 = paid))
//! ```
//!
//! Ids follow the data: children before parents, left subtree first. With
//! `spark.sql.adaptive.enabled` a plan with an exchange prints as Spark prints it before
//! execution: under an `AdaptiveSparkPlan` root, without codegen stages. Otherwise operators
//! fused into a compiled stage carry `* ` in the outline and `[codegen id : n]` in their block.

use std::collections::HashMap;
use std::fmt::Display;
use std::sync::Arc;

use super::physical::{file_index_paths, mark_stages, read_schema, skip_stage};
use crate::catalog::TableSource;
use crate::config::Config;
use crate::expr::{Attribute, Expr, ExprId, ScalarSubqueryExec};
use crate::physical::{AggregateExpr, AggregateMode, BuildSide, HashJoinKind, PhysicalPlan};

/// The text of `EXPLAIN FORMATTED` for a physical plan.
pub fn formatted_string(plan: &PhysicalPlan, config: &Config) -> String {
    let (text, mut next, mut pending) = render(plan, config, 1);
    let mut out = format!("== Physical Plan ==\n{text}");
    if pending.is_empty() {
        return out;
    }
    // Spark's `===== Subqueries =====`: each subquery plan (nested ones too, in the order
    // found) with the operator and expression hosting it; the ids continue.
    out.push_str("\n===== Subqueries =====\n\n");
    let mut i = 0;
    while i < pending.len() {
        let (host, s) = pending[i].clone();
        let (text, after, more) = render(s.physical_plan(), config, next);
        next = after;
        pending.extend(more);
        i += 1;
        out.push_str(&format!("Subquery:{i} Hosting operator id = {host} Hosting Expression = {}\n{text}\n", Expr::ScalarSubqueryExec(s.clone())));
    }
    out
}

/// The outline and detail blocks of one plan numbered from `first`; the next free id; the
/// subqueries its operators host, with the hosting operator's id.
fn render(plan: &PhysicalPlan, config: &Config, first: usize) -> (String, usize, Vec<(usize, Arc<ScalarSubqueryExec>)>) {
    let adaptive = crate::physical::adaptive::is_adaptive(plan, config);
    let mut stages = HashMap::new();
    if !adaptive {
        mark_stages(plan, &mut stages);
    }
    let root = skip_stage(plan);
    let mut ids: HashMap<*const PhysicalPlan, usize> = HashMap::new();
    let mut order: Vec<&PhysicalPlan> = vec![];
    number(root, &mut ids, &mut order, first - 1);
    let key = |p: &PhysicalPlan| p as *const PhysicalPlan;
    let outline = super::draw_tree(
        root,
        &|p: &PhysicalPlan| {
            let star = if stages.contains_key(&key(p)) { "* " } else { "" };
            format!("{star}{} ({})", outline_name(p), ids[&key(p)])
        },
        &|p: &PhysicalPlan| p.children().into_iter().map(|c| skip_stage(c)).collect(),
    );
    let mut blocks: Vec<String> = order
        .iter()
        .map(|p| {
            let codegen = stages.get(&key(p)).map(|id| format!(" [codegen id : {id}]")).unwrap_or_default();
            let mut lines = vec![format!("({}) {}{codegen}", ids[&key(p)], node_name(p))];
            lines.extend(details(p, config));
            lines.join("\n")
        })
        .collect();
    let subqueries = order.iter().flat_map(|p| p.subqueries().into_iter().map(|s| (ids[&key(p)], s))).collect();
    let mut outline = outline;
    let mut next = first + order.len();
    if adaptive {
        // The AdaptiveSparkPlan root wraps the whole outline one level down.
        let id = next;
        next += 1;
        let indented: String = outline.lines().enumerate().map(|(i, l)| if i == 0 { format!("+- {l}\n") } else { format!("   {l}\n") }).collect();
        outline = format!("AdaptiveSparkPlan ({id})\n{indented}");
        blocks.push(format!("({id}) AdaptiveSparkPlan\n{}\nArguments: isFinalPlan=false", field("Output", &root.output())));
    }
    let body: String = blocks.iter().map(|b| format!("\n{b}\n")).collect();
    (format!("{outline}\n{body}"), next, subqueries)
}

/// Post-order ids, skipping the WholeStageCodegen wrappers (Spark skips them and InputAdapters).
fn number<'a>(p: &'a PhysicalPlan, ids: &mut HashMap<*const PhysicalPlan, usize>, order: &mut Vec<&'a PhysicalPlan>, offset: usize) {
    for c in p.children() {
        number(skip_stage(c), ids, order, offset);
    }
    order.push(p);
    ids.insert(p as *const PhysicalPlan, offset + order.len());
}

fn side(b: &BuildSide) -> &'static str {
    match b {
        BuildSide::BuildLeft => "BuildLeft",
        BuildSide::BuildRight => "BuildRight",
    }
}

/// Spark's `nodeName`: the operator's name, and for a file scan the format and table.
fn node_name(p: &PhysicalPlan) -> String {
    match p {
        PhysicalPlan::FileScan { table, .. } => format!("Scan parquet {}", table.qualified_name()),
        PhysicalPlan::InMemoryScan { table, .. } => match table.cached.as_ref().map(|c| c.table_name.as_deref()) {
            Some(Some(name)) => format!("Scan In-memory table {name}"),
            _ => "InMemoryTableScan".to_string(),
        },
        PhysicalPlan::LocalTableScan { output, .. } if output.is_empty() => "Scan OneRowRelation".to_string(),
        PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, .. } => "BroadcastHashJoin".to_string(),
        PhysicalPlan::HashJoin { kind: HashJoinKind::Shuffled, .. } => "ShuffledHashJoin".to_string(),
        PhysicalPlan::NestedLoopJoin { .. } => "BroadcastNestedLoopJoin".to_string(),
        // The operator line starts with its name: `Sort [...]`, `HashAggregate(keys=...`.
        other => leading_name(&other.node_string(&Config::default())),
    }
}

fn leading_name(line: &str) -> String {
    line.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or(line).to_string()
}

/// The outline's name: joins add their type and build side (`BroadcastHashJoin Inner BuildRight`).
fn outline_name(p: &PhysicalPlan) -> String {
    match p {
        PhysicalPlan::HashJoin { join_type, build_side, .. } | PhysicalPlan::NestedLoopJoin { join_type, build_side, .. } => {
            format!("{} {} {}", node_name(p), join_type.name(), side(build_side))
        }
        PhysicalPlan::SortMergeJoin { join_type, .. } => format!("{} {}", node_name(p), join_type.name()),
        _ => node_name(p),
    }
}

/// `Output [2]: [a#1, b#2]`, or `Output: []` (Spark's `ExplainUtils.generateFieldString`).
fn field<T: Display>(name: &str, items: &[T]) -> String {
    let text = items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    if items.is_empty() {
        format!("{name}: []")
    } else {
        format!("{name} [{}]: [{text}]", items.len())
    }
}

fn input(p: &PhysicalPlan) -> String {
    let child = p.children().first().map(|c| c.output()).unwrap_or_default();
    field("Input", &child)
}

/// `Arguments: ...`: the operator line after its name.
fn arguments(p: &PhysicalPlan, config: &Config) -> Option<String> {
    let line = p.node_string(config);
    let name = leading_name(&line);
    let rest = line[name.len()..].trim_start();
    (!rest.is_empty()).then(|| format!("Arguments: {rest}"))
}

/// The lines of one operator's block after its title.
fn details(p: &PhysicalPlan, config: &Config) -> Vec<String> {
    match p {
        PhysicalPlan::FileScan { table, output, partition_filters, pushed_filters, selected_files, .. } => {
            let mut lines = vec![field("Output", output), "Batched: true".to_string()];
            if let TableSource::Parquet(t) = &table.source {
                let (class, paths) = file_index_paths(t, partition_filters, selected_files);
                let shown = match paths.as_slice() {
                    [first, _, ..] => format!("[{first}, ... {} entries]", paths.len() - 1),
                    _ => format!("[{}]", paths.join(", ")),
                };
                lines.push(format!("Location: {class} {shown}"));
            }
            if !partition_filters.is_empty() {
                lines.push(format!("PartitionFilters: [{}]", join(partition_filters)));
            }
            if !pushed_filters.is_empty() {
                lines.push(format!("PushedFilters: [{}]", join(pushed_filters)));
            }
            lines.push(format!("ReadSchema: {}", read_schema(table, output)));
            lines
        }
        PhysicalPlan::InMemoryScan { table, output, predicates, .. } if table.cached.is_some() => {
            let predicates = if predicates.is_empty() { String::new() } else { format!(", [{}]", join(predicates)) };
            vec![field("Output", output), format!("Arguments: [{}]{predicates}", join(output))]
        }
        PhysicalPlan::InMemoryScan { output, .. } => vec![field("Output", output)],
        PhysicalPlan::FragmentInput { index, output } => vec![field("Output", output), format!("Arguments: {index}")],
        PhysicalPlan::Range { output, range } => vec![field("Output", output), format!("Arguments: {}", range.logical_string())],
        PhysicalPlan::LocalTableScan { output, .. } => {
            vec![field("Output", output), format!("Arguments: [{}]", join(output))]
        }
        PhysicalPlan::Filter { condition, .. } => vec![input(p), format!("Condition : {condition}")],
        PhysicalPlan::Project { list, .. } => vec![field("Output", list), input(p)],
        PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, .. } => {
            let prefix = if *mode == AggregateMode::Partial { "partial_" } else { "" };
            let call = |a: &AggregateExpr| format!("{}({}{}{})", a.func.name(), if a.distinct { "distinct " } else { "" }, join(&a.args), a.func.extra_arguments());
            let functions: Vec<String> = aggregates.iter().map(|a| format!("{prefix}{}", call(a))).collect();
            // Spark names an aggregate's result after the call with its ids: `sum(amount#179)#188`.
            let named: HashMap<ExprId, Attribute> =
                aggregates.iter().map(|a| (a.result.id, Attribute { name: call(a), ..a.result.clone() })).collect();
            let (attributes, results): (Vec<Attribute>, Vec<String>) = match mode {
                AggregateMode::Partial => {
                    (aggregates.iter().flat_map(|a| a.buffer.iter().cloned()).collect(), p.output().iter().map(|a| a.to_string()).collect())
                }
                _ => (
                    aggregates.iter().filter_map(|a| named.get(&a.result.id).cloned()).collect(),
                    result.iter().map(|e| rename(e, &named).to_string()).collect(),
                ),
            };
            vec![input(p), field("Keys", grouping), field("Functions", &functions), field("Aggregate Attributes", &attributes), field("Results", &results)]
        }
        PhysicalPlan::HashJoin { left_keys, right_keys, join_type, condition, .. }
        | PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, .. } => vec![
            field("Left keys", left_keys),
            field("Right keys", right_keys),
            format!("Join type: {}", join_type.name()),
            format!("Join condition: {}", condition.as_ref().map_or("None".to_string(), |c| c.to_string())),
        ],
        PhysicalPlan::NestedLoopJoin { join_type, condition, .. } => vec![
            format!("Join type: {}", join_type.name()),
            format!("Join condition: {}", condition.as_ref().map_or("None".to_string(), |c| c.to_string())),
        ],
        PhysicalPlan::CartesianProduct { condition, .. } => vec![
            format!("Join condition: {}", condition.as_ref().map_or("None".to_string(), |c| c.to_string())),
        ],
        PhysicalPlan::TakeOrderedAndProject { limit, order, list, .. } => vec![
            input(p),
            format!("Arguments: {limit}, [{}], [{}]", join(order), join(&crate::plan::named_outputs(list))),
        ],
        // Other operators: Spark's default block, `Input` for one child, then the arguments.
        other => {
            let mut lines = vec![];
            if other.children().len() == 1 {
                lines.push(input(other));
            }
            lines.extend(arguments(other, config));
            lines
        }
    }
}

/// `e` with the attributes in `named` renamed.
fn rename(e: &Expr, named: &HashMap<ExprId, Attribute>) -> Expr {
    let renamed: Result<Expr, std::convert::Infallible> = e.clone().transform_up(&mut |x| match &x {
        Expr::Attribute(a) => Ok(named.get(&a.id).map_or(x.clone(), |n| n.expr())),
        _ => Ok(x),
    });
    renamed.unwrap_or_else(|never| match never {})
}

fn join<T: Display>(items: &[T]) -> String {
    items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use crate::datasource::demo::{shop_customers, shop_orders};
    use crate::{ExplainMode, Session};

    fn formatted(settings: &[(&str, &str)], sql: &str) -> String {
        let s = Session::new();
        for (k, v) in settings {
            s.set_conf(k, v).expect("setting");
        }
        s.register_batches("orders", vec![shop_orders()]).expect("orders");
        s.register_batches("customers", vec![shop_customers()]).expect("customers");
        let text = s.sql(sql).and_then(|df| df.explain_string(ExplainMode::Formatted)).expect("explain formatted");
        crate::sql::tests::normalize(&text)
    }

    #[test]
    fn without_adaptive_execution_stages_are_marked() {
        let text = formatted(&[("spark.sql.adaptive.enabled", "false")], "SELECT order_id FROM orders WHERE amount > 10");
        // Operators numbered from the scan up; the fused ones carry `* ` and their stage.
        assert!(text.starts_with("== Physical Plan ==\n* Project (3)\n+- * Filter (2)\n   +- InMemoryTableScan (1)\n\n\n(1) InMemoryTableScan\nOutput [2]: [order_id#, amount#]\n\n"), "{text}");
        assert!(text.contains("\n\n(2) Filter [codegen id : 1]\nInput [2]: [order_id#, amount#]\nCondition : (isnotnull(amount#) AND "), "{text}");
        assert!(text.ends_with("\n\n(3) Project [codegen id : 1]\nOutput [1]: [order_id#]\nInput [2]: [order_id#, amount#]"), "{text}");
    }

    #[test]
    fn exchanges_put_the_plan_under_adaptive_spark_plan() {
        let text = formatted(&[], "SELECT status, count(*) AS n FROM orders GROUP BY status");
        assert!(text.starts_with("== Physical Plan ==\nAdaptiveSparkPlan (6)\n+- HashAggregate (5)\n   +- Exchange (4)\n      +- HashAggregate (3)\n"), "{text}");
        assert!(!text.contains("codegen id") && !text.contains('*'), "{text}");
        assert!(text.contains("\n\n(3) HashAggregate\nInput [1]: [status#]\nKeys [1]: [status#]\nFunctions [1]: [partial_count(1)]\nAggregate Attributes [1]: [count#L]\nResults [2]: [status#, count#L]\n\n"), "{text}");
        assert!(text.contains("\n\n(4) Exchange\nInput [2]: [status#, count#L]\nArguments: hashpartitioning(status#, 200), ENSURE_REQUIREMENTS, [plan_id="), "{text}");
        assert!(text.contains("\nAggregate Attributes [1]: [count(1)#L]\nResults [2]: [status#, count(1)#L AS n#L]\n"), "{text}");
        assert!(text.ends_with("\n\n(6) AdaptiveSparkPlan\nOutput [2]: [status#, n#L]\nArguments: isFinalPlan=false"), "{text}");
    }

    #[test]
    fn joins_union_and_global_aggregates_print_their_fields() {
        let text = formatted(&[], "SELECT o.order_id FROM orders o JOIN customers c ON o.amount > c.customer_id UNION ALL SELECT count(*) FROM customers");
        assert!(text.contains(":  +- BroadcastNestedLoopJoin Inner BuildLeft (6)\n"), "{text}");
        assert!(text.contains("\n\n(6) BroadcastNestedLoopJoin\nJoin type: Inner\nJoin condition: (cast(amount# as decimal(12,2)) > "), "{text}");
        // Union has neither input nor arguments: its title only.
        assert!(text.contains("\n\n(12) Union\n\n"), "{text}");
        assert!(text.contains("\nKeys: []\nFunctions [1]: [partial_count(1)]\n"), "{text}");
    }
}
