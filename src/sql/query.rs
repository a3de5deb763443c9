//! sqlparser queries to unresolved logical plans, built node for node as Spark's `AstBuilder`
//! builds them: FROM, then WHERE (Filter), then Aggregate or Project, HAVING (Filter),
//! DISTINCT, and on top ORDER BY (Sort) and LIMIT (GlobalLimit over LocalLimit).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use sqlparser::ast::{
    self, Distinct, GroupByExpr, SetOperator, SetQuantifier, JoinConstraint, JoinOperator, LimitClause, OrderByKind, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, Spanned, TableFactor, WildcardAdditionalOptions,
};
use sqlparser::tokenizer::Span;

use super::hints::{key as hint_key, SelectHints};
use super::expr::{convert_expr, object_name, object_name_parts, start_span};
use super::{parse_error, unsupported};
use crate::error::Result;
use crate::expr::{Attribute, Expr, ExprId, Generator, GeneratorFunc, SortOrder, SubqueryPlan};
use crate::plan::{GroupingSetsKind, JoinType, LogicalPlan, SetOperationKind};
use crate::types::{spark_type_name, wider_type, ScalarValue};

/// A copy of a CTE's plan for one reference to it, with new ExprIds for every alias, VALUES or
/// range column and subquery it defines: two references (a self-join, or the query and its subquery
/// as in TPC-H Q15) must not define the same attribute twice.
fn fresh_ids(plan: &LogicalPlan) -> Result<LogicalPlan> {
    let mut ids = std::collections::HashMap::new();
    renumber_plan(&Arc::new(plan.clone()), &mut ids).map(|p| p.as_ref().clone())
}

/// A copy of an analyzed plan with a new ExprId for every attribute it defines (a second
/// instance of a plan in one tree, as a subquery's domain over its outer query), and the map
/// from the old ids to the new.
pub(crate) fn fresh_instance(plan: &Arc<LogicalPlan>) -> Result<(Arc<LogicalPlan>, std::collections::HashMap<ExprId, ExprId>)> {
    let mut ids = std::collections::HashMap::new();
    let p = renumber_plan(plan, &mut ids)?;
    Ok((p, ids))
}

fn renumber_plan(plan: &Arc<LogicalPlan>, ids: &mut std::collections::HashMap<ExprId, ExprId>) -> Result<Arc<LogicalPlan>> {
    plan.transform_up(&mut |node| {
        let node = match node.as_ref() {
            LogicalPlan::LocalRelation { output, data } => LogicalPlan::LocalRelation {
                output: output.iter().map(|a| Attribute { id: renumber(ids, a.id), ..a.clone() }).collect(),
                data: data.clone(),
            },
            LogicalPlan::Range { output, range } => LogicalPlan::Range {
                output: output.iter().map(|a| Attribute { id: renumber(ids, a.id), ..a.clone() }).collect(),
                range: range.clone(),
            },
            LogicalPlan::Relation { table, output } => LogicalPlan::Relation {
                table: table.clone(),
                output: output.iter().map(|a| Attribute { id: renumber(ids, a.id), ..a.clone() }).collect(),
            },
            LogicalPlan::Expand { projections, output, child } => LogicalPlan::Expand {
                projections: projections.iter().map(|l| l.iter().map(|e| renumber_expr(e.clone(), ids)).collect::<Result<Vec<_>>>()).collect::<Result<Vec<_>>>()?,
                output: output.iter().map(|a| Attribute { id: renumber(ids, a.id), ..a.clone() }).collect(),
                child: child.clone(),
            },
            LogicalPlan::Generate { generator, unrequired, outer, qualifier, names, generator_output, child } => LogicalPlan::Generate {
                generator: Generator { func: generator.func, args: generator.args.iter().map(|e| renumber_expr(e.clone(), ids)).collect::<Result<_>>()? },
                unrequired: unrequired.clone(),
                outer: *outer,
                qualifier: qualifier.clone(),
                names: names.clone(),
                generator_output: generator_output.iter().map(|a| Attribute { id: renumber(ids, a.id), ..a.clone() }).collect(),
                child: child.clone(),
            },
            LogicalPlan::LateralJoin { left, right, id, join_type, condition } => LogicalPlan::LateralJoin {
                left: left.clone(),
                right: SubqueryPlan::new(renumber_plan(right.plan(), ids)?),
                id: renumber(ids, *id),
                join_type: *join_type,
                condition: condition.clone().map(|e| renumber_expr(e, ids)).transpose()?,
            },
            other => other.map_expressions(|e| renumber_expr(e, ids))?,
        };
        Ok(Arc::new(node))
    })
}

fn renumber(ids: &mut std::collections::HashMap<ExprId, ExprId>, id: ExprId) -> ExprId {
    *ids.entry(id).or_insert_with(ExprId::next)
}

fn renumber_expr(e: Expr, ids: &mut std::collections::HashMap<ExprId, ExprId>) -> Result<Expr> {
    e.transform_up(&mut |e| {
        Ok(match e {
            Expr::Alias { child, name, id } => Expr::Alias { child, name, id: renumber(ids, id) },
            Expr::Attribute(a) => Expr::Attribute(Attribute { id: renumber(ids, a.id), ..a }),
            Expr::ScalarSubquery { plan, id } => Expr::ScalarSubquery { plan: SubqueryPlan::new(renumber_plan(plan.plan(), ids)?), id: renumber(ids, id) },
            Expr::Exists { plan, id } => Expr::Exists { plan: SubqueryPlan::new(renumber_plan(plan.plan(), ids)?), id: renumber(ids, id) },
            Expr::InSubquery { values, plan, id } => {
                Expr::InSubquery { values, plan: SubqueryPlan::new(renumber_plan(plan.plan(), ids)?), id: renumber(ids, id) }
            }
            other => other,
        })
    })
}

/// The alias Spark gives a FROM subquery written without one.
const AUTO_SUBQUERY_ALIAS: &str = "__auto_generated_subquery_name";

/// Plans queries; holds the CTEs in scope (innermost last) so references can be inlined, and
/// the statement's hint comments by SELECT position.
#[derive(Default)]
pub(crate) struct QueryPlanner<'a> {
    ctes: Vec<(String, LogicalPlan)>,
    hints: Option<&'a SelectHints>,
}

thread_local! {
    /// The CTEs in scope of the query being planned. Expressions are lowered without a planner
    /// at hand, so a subquery expression's planner starts from this.
    static CTES_IN_SCOPE: std::cell::RefCell<Vec<(String, LogicalPlan)>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl<'a> QueryPlanner<'a> {
    /// A planner for a subquery expression (`IN (SELECT ..)`, `EXISTS`, a scalar subquery):
    /// the enclosing query's CTEs are in scope, as in Spark. (Hints inside it are dropped.)
    pub(crate) fn for_subquery() -> QueryPlanner<'a> {
        QueryPlanner { ctes: CTES_IN_SCOPE.with(|c| c.borrow().clone()), hints: None }
    }

    /// A planner that puts each SELECT's hint comment over it as `UnresolvedHint`s.
    pub(crate) fn with_hints(hints: &'a SelectHints) -> QueryPlanner<'a> {
        QueryPlanner { ctes: vec![], hints: Some(hints) }
    }

    /// A full query: WITH, body, ORDER BY, LIMIT.
    pub(crate) fn plan_query(&mut self, q: &ast::Query) -> Result<LogicalPlan> {
        // Errors point at cheap spans: `span()` walks the whole subtree (see `start_span`).
        if q.fetch.is_some() {
            return Err(unsupported("FETCH (use LIMIT)", query_span(q)));
        }
        if !q.locks.is_empty() || q.for_clause.is_some() || q.settings.is_some() || q.format_clause.is_some() {
            return Err(unsupported("FOR / SETTINGS / FORMAT clause on a query", query_span(q)));
        }
        if !q.pipe_operators.is_empty() {
            return Err(unsupported("pipe syntax |>", query_span(q)));
        }
        let scope = self.ctes.len();
        let outer = CTES_IN_SCOPE.with(|c| c.borrow().clone());
        let result = self.with_clause(q).and_then(|()| {
            CTES_IN_SCOPE.with(|c| *c.borrow_mut() = self.ctes.clone());
            self.plan_query_body(q)
        });
        CTES_IN_SCOPE.with(|c| *c.borrow_mut() = outer);
        self.ctes.truncate(scope);
        result
    }

    /// Plans each CTE in order (a later one may read an earlier one) and brings it into scope.
    fn with_clause(&mut self, q: &ast::Query) -> Result<()> {
        let Some(with) = &q.with else { return Ok(()) };
        for cte in &with.cte_tables {
            let span = cte.alias.name.span;
            if cte.materialized.is_some() || cte.from.is_some() {
                return Err(unsupported("MATERIALIZED common table expression", span));
            }
            let name = cte.alias.name.value.clone();
            let plan = if with.recursive {
                // While its body is planned, the name reads the previous step of the loop.
                let id = ExprId::next();
                self.ctes.push((name.clone(), column_aliases(LogicalPlan::UnionLoopRef { id, output: vec![] }, &cte.alias.columns)));
                let body = self.plan_query(&cte.query);
                self.ctes.pop();
                recursive_cte(id, body?, &name)?
            } else {
                self.plan_query(&cte.query)?
            };
            self.ctes.push((name, column_aliases(plan, &cte.alias.columns)));
        }
        Ok(())
    }

    fn plan_query_body(&mut self, q: &ast::Query) -> Result<LogicalPlan> {
        let mut plan = self.plan_set_expr(&q.body)?;
        if let Some(order_by) = &q.order_by {
            let order = sort_orders(order_by)?;
            plan = LogicalPlan::Sort { order, global: true, child: Arc::new(plan) };
        }
        if let Some(limit) = &q.limit_clause {
            let (limit, offset) = limit_value(limit)?;
            match (limit, offset) {
                (Some(n), 0) => {
                    let local = LogicalPlan::LocalLimit { limit: n, child: Arc::new(plan) };
                    plan = LogicalPlan::GlobalLimit { limit: n, child: Arc::new(local) };
                }
                // Spark's LimitPushDown shape: the local limit takes limit + offset rows.
                (Some(n), o) => {
                    let local = LogicalPlan::LocalLimit { limit: n.saturating_add(o), child: Arc::new(plan) };
                    let off = LogicalPlan::Offset { offset: o, child: Arc::new(local) };
                    plan = LogicalPlan::GlobalLimit { limit: n, child: Arc::new(off) };
                }
                (None, 0) => {}
                (None, o) => plan = LogicalPlan::Offset { offset: o, child: Arc::new(plan) },
            }
        }
        Ok(plan)
    }

    fn plan_set_expr(&mut self, body: &SetExpr) -> Result<LogicalPlan> {
        match body {
            SetExpr::Select(s) => self.plan_select(s),
            SetExpr::Query(q) => self.plan_query(q),
            SetExpr::SetOperation { op: SetOperator::Union, set_quantifier, left, right }
                if matches!(set_quantifier, SetQuantifier::All | SetQuantifier::Distinct | SetQuantifier::None) =>
            {
                if let Some(union) = self.long_union(body)? {
                    return Ok(union);
                }
                // As Spark's AstBuilder: a binary Union, under a Distinct for UNION [DISTINCT].
                let union = LogicalPlan::Union { children: vec![Arc::new(self.plan_set_expr(left)?), Arc::new(self.plan_set_expr(right)?)] };
                Ok(match set_quantifier {
                    SetQuantifier::All => union,
                    _ => LogicalPlan::Distinct { child: Arc::new(union) },
                })
            }
            SetExpr::SetOperation { op: op @ (SetOperator::Except | SetOperator::Minus | SetOperator::Intersect), set_quantifier, left, right }
                if matches!(set_quantifier, SetQuantifier::All | SetQuantifier::Distinct | SetQuantifier::None) =>
            {
                let kind = if *op == SetOperator::Intersect { SetOperationKind::Intersect } else { SetOperationKind::Except };
                Ok(LogicalPlan::SetOperation {
                    kind,
                    all: *set_quantifier == SetQuantifier::All,
                    left: Arc::new(self.plan_set_expr(left)?),
                    right: Arc::new(self.plan_set_expr(right)?),
                })
            }
            SetExpr::SetOperation { op, set_quantifier, .. } => {
                let quantifier = set_quantifier.to_string();
                let sep = if quantifier.is_empty() { "" } else { " " };
                Err(unsupported(format!("set operation {op}{sep}{quantifier}"), body_span(body)))
            }
            SetExpr::Values(v) => values_relation(v, &[], body_span(body)),
            _ => Err(unsupported("INSERT / UPDATE / DELETE / MERGE / TABLE as a query", body_span(body))),
        }
    }

    /// A run of more than `FLAT_UNION_FROM` UNIONs of one kind (ALL, or DISTINCT) as one Union
    /// of all its queries, as CombineUnions makes it later: nested one Union per query, the
    /// plan would be as deep as the run is long, past what recursion over it can take on a
    /// thread's stack. None for a shorter run (nested as Spark's parser nests it).
    fn long_union(&mut self, body: &SetExpr) -> Result<Option<LogicalPlan>> {
        let distinct = |q: &SetQuantifier| !matches!(q, SetQuantifier::All);
        let SetExpr::SetOperation { set_quantifier: kind, .. } = body else { return Ok(None) };
        let mut rights = vec![];
        let mut node = body;
        while let SetExpr::SetOperation { op: SetOperator::Union, set_quantifier, left, right } = node {
            if distinct(set_quantifier) != distinct(kind) || !matches!(set_quantifier, SetQuantifier::All | SetQuantifier::Distinct | SetQuantifier::None) {
                break;
            }
            rights.push(right.as_ref());
            node = left;
        }
        if rights.len() <= FLAT_UNION_FROM {
            return Ok(None);
        }
        let mut children = vec![Arc::new(self.plan_set_expr(node)?)];
        for r in rights.into_iter().rev() {
            children.push(Arc::new(self.plan_set_expr(r)?));
        }
        let union = LogicalPlan::Union { children };
        Ok(Some(if distinct(kind) { LogicalPlan::Distinct { child: Arc::new(union) } } else { union }))
    }

    fn plan_select(&mut self, s: &ast::Select) -> Result<LogicalPlan> {
        reject_select_clauses(s)?;
        // `WINDOW w AS (...)`: in scope while this SELECT's expressions are lowered.
        let named: Vec<(String, ast::NamedWindowExpr)> = s.named_window.iter().map(|d| (d.0.value.clone(), d.1.clone())).collect();
        if let Some((name, _)) = named.iter().enumerate().find_map(|(i, (n, _))| named[..i].iter().find(|(m, _)| m.eq_ignore_ascii_case(n))) {
            return Err(parse_error(format!("[INVALID_SQL_SYNTAX.REPETITIVE_WINDOW_DEFINITION] Invalid SQL syntax: The definition of window `{name}` is repetitive."), s.select_token.0.span));
        }
        let outer = super::expr::NAMED_WINDOWS.with(|w| std::mem::replace(&mut *w.borrow_mut(), named));
        let result = self.plan_select_body(s);
        super::expr::NAMED_WINDOWS.with(|w| *w.borrow_mut() = outer);
        result
    }

    fn plan_select_body(&mut self, s: &ast::Select) -> Result<LogicalPlan> {
        let mut plan = self.plan_from(&s.from)?;
        // Spark's withGenerate: each LATERAL VIEW a Generate over what comes before it.
        for view in &s.lateral_views {
            let qualifier = object_name_parts(&view.lateral_view_name)?.join(".").to_lowercase();
            let names = view.lateral_col_alias.iter().map(|i| i.value.clone()).collect();
            plan = generate_node(convert_expr(&view.lateral_view)?, view.outer, Some(qualifier), names, plan)?;
        }
        if let Some(w) = &s.selection {
            plan = LogicalPlan::Filter { condition: convert_expr(w)?, child: Arc::new(plan) };
        }
        let mut list = s.projection.iter().map(select_item).collect::<Result<Vec<_>>>()?;
        // `FROM t` alone: every column.
        if s.flavor == ast::SelectFlavor::FromFirstNoSelect {
            list = vec![Expr::UnresolvedStar(None)];
        }
        let qualify = match &s.qualify {
            Some(q) => Some(qualify_windows(convert_expr(q)?, &mut list, s.select_token.0.span)?),
            None => None,
        };
        // ROLLUP / CUBE / GROUPING SETS: the construct and its elements (indices into `grouping`).
        let mut analytics = None;
        let mut group_all = false;
        let grouping = match &s.group_by {
            GroupByExpr::Expressions(exprs, modifiers) => {
                let (grouping, sets) = grouping_analytics(exprs, modifiers, s.select_token.0.span)?;
                analytics = sets;
                grouping
            }
            // Spark's GROUP BY ALL: every select-list item without an aggregate.
            GroupByExpr::All(_) => {
                group_all = true;
                list.iter().filter(|e| !e.contains_aggregate() && !e.contains_window()).map(|e| e.unalias().clone()).collect()
            }
        };
        let having = s.having.as_ref().map(convert_expr).transpose()?;
        // HAVING without GROUP BY is a global aggregate, as in Spark.
        let aggregate = group_all || !grouping.is_empty() || having.is_some() || list.iter().any(Expr::contains_aggregate);
        plan = if let Some((kind, elements)) = analytics {
            LogicalPlan::GroupingSets { kind, elements, exprs: grouping, aggregates: list, child: Arc::new(plan) }
        } else if aggregate {
            LogicalPlan::Aggregate { grouping, aggregates: list, child: Arc::new(plan) }
        } else {
            LogicalPlan::Project { list, child: Arc::new(plan) }
        };
        if let Some(condition) = having {
            plan = LogicalPlan::Filter { condition, child: Arc::new(plan) };
        }
        if let Some((condition, hidden)) = qualify {
            plan = LogicalPlan::Filter { condition, child: Arc::new(plan) };
            if !hidden.is_empty() {
                let except = hidden.into_iter().map(|h| vec![h]).collect();
                plan = LogicalPlan::Project { list: vec![Expr::UnresolvedStarExcept { qualifier: None, except }], child: Arc::new(plan) };
            }
        }
        match &s.distinct {
            None | Some(Distinct::All) => {}
            Some(Distinct::Distinct) => plan = LogicalPlan::Distinct { child: Arc::new(plan) },
            Some(Distinct::On(_)) => return Err(unsupported("SELECT DISTINCT ON (...)", s.select_token.0.span)),
        }
        // Spark's AstBuilder: hints go over the DISTINCT, the first hint outermost.
        let hints = self.hints.and_then(|h| h.get(&hint_key(s.select_token.0.span.start)));
        for h in hints.into_iter().flatten().rev() {
            plan = LogicalPlan::UnresolvedHint { name: h.name.clone(), params: h.params.clone(), child: Arc::new(plan) };
        }
        Ok(plan)
    }

    /// Comma-separated FROM items are inner joins without a condition, left-deep.
    fn plan_from(&mut self, from: &[ast::TableWithJoins]) -> Result<LogicalPlan> {
        let mut plan: Option<LogicalPlan> = None;
        for twj in from {
            // `FROM t, LATERAL explode(t.a) [AS g(x)]`: a Generate over the items before it.
            if let (Some(left), TableFactor::Function { lateral: true, name, args, alias, .. }, true) = (&plan, &twj.relation, twj.joins.is_empty()) {
                let span = name.span();
                let call = Expr::UnresolvedFunction { name: object_name_parts(name)?.join("."), args: function_args(args, span)?, distinct: false };
                let qualifier = alias.as_ref().map(|a| a.name.value.clone());
                let names = alias.iter().flat_map(|a| a.columns.iter().map(|c| c.name.value.clone())).collect();
                plan = Some(generate_node(call, false, qualifier, names, left.clone())?);
                continue;
            }
            // `FROM t, LATERAL (SELECT ...)`: a LateralJoin over the items before it (Spark's
            // visitFromClause; a first item's LATERAL means nothing).
            if let (Some(left), TableFactor::Derived { lateral: true, .. }) = (&plan, &twj.relation) {
                let right = self.plan_factor(&twj.relation)?;
                plan = Some(self.plan_joins(lateral_join(left.clone(), right, JoinType::Inner, None), &twj.joins)?);
                continue;
            }
            // Spark's visitFromClause: an item's joins apply over the items before it too
            // (`FROM t1 JOIN t2 ON .., t3 JOIN t4 ON t1.i = t4.l` reads t1 in the last ON).
            plan = Some(match plan {
                None => self.plan_table_with_joins(twj)?,
                Some(left) => {
                    let right = self.plan_factor(&twj.relation)?;
                    self.plan_joins(join(left, right, JoinType::Inner, None, vec![]), &twj.joins)?
                }
            });
        }
        Ok(plan.unwrap_or(LogicalPlan::OneRowRelation))
    }

    fn plan_table_with_joins(&mut self, twj: &ast::TableWithJoins) -> Result<LogicalPlan> {
        let plan = self.plan_factor(&twj.relation)?;
        self.plan_joins(plan, &twj.joins)
    }

    /// `plan JOIN x ON ... JOIN y ...`, left-deep.
    fn plan_joins(&mut self, mut plan: LogicalPlan, joins: &[ast::Join]) -> Result<LogicalPlan> {
        for j in joins {
            let span = factor_span(&j.relation);
            let right = self.plan_factor(&j.relation)?;
            let (join_type, constraint) = join_kind(&j.join_operator, span)?;
            if matches!(j.relation, TableFactor::Derived { lateral: true, .. }) {
                plan = lateral_join_with(plan, right, join_type, constraint, span)?;
                continue;
            }
            let (condition, using) = match constraint {
                JoinConstraint::On(e) => (Some(convert_expr(e)?), vec![]),
                JoinConstraint::Using(names) => {
                    let cols = names.iter().map(|n| object_name_parts(n).map(|p| p.join("."))).collect::<Result<Vec<_>>>()?;
                    (None, cols)
                }
                JoinConstraint::None => (None, vec![]),
                // The common columns are known once the sides resolve.
                JoinConstraint::Natural => (None, vec![crate::plan::NATURAL_JOIN.to_string()]),
                JoinConstraint::UsingAlias(..) => return Err(unsupported("JOIN ... USING (...) AS alias", span)),
            };
            plan = join(plan, right, join_type, condition, using);
        }
        Ok(plan)
    }

    fn plan_factor(&mut self, factor: &TableFactor) -> Result<LogicalPlan> {
        let span = factor_span(factor);
        match factor {
            TableFactor::Table {
                name,
                alias,
                args,
                with_hints,
                version,
                with_ordinality,
                partitions,
                json_path,
                sample,
                index_directives,
                inheritance,
            } => {
                if let Some(args) = args {
                    let parts = object_name_parts(name)?;
                    if parts.len() == 1 && parts[0].eq_ignore_ascii_case("range") {
                        return with_alias(range_relation(&args.args, span)?, alias.as_ref());
                    }
                    // A generator as a table (Spark's table-valued explode, stack, ...): over the
                    // one empty row; `AS t(a, b)` names its columns.
                    if let [name] = parts.as_slice() {
                        if GeneratorFunc::from_name(name).is_some() {
                            let call = Expr::UnresolvedFunction { name: name.clone(), args: function_args(&args.args, span)?, distinct: false };
                            let names = alias.iter().flat_map(|a| a.columns.iter().map(|c| c.name.value.clone())).collect();
                            let plan = generate_node(call, false, None, names, LogicalPlan::OneRowRelation)?;
                            return Ok(match alias {
                                Some(a) => LogicalPlan::SubqueryAlias { alias: a.name.value.clone(), child: Arc::new(plan) },
                                None => plan,
                            });
                        }
                    }
                    // A host's table function (`Session::register_udtf`), looked up by the analyzer.
                    let call = LogicalPlan::UnresolvedRelation { name: parts, args: Some(function_args(&args.args, span)?) };
                    return with_alias(call, alias.as_ref());
                }
                if sample.is_some() {
                    return Err(unsupported("TABLESAMPLE", span));
                }
                if !with_hints.is_empty()
                    || version.is_some()
                    || *with_ordinality
                    || !partitions.is_empty()
                    || json_path.is_some()
                    || !index_directives.is_empty()
                    || inheritance.is_some()
                {
                    return Err(unsupported(format!("table modifiers on {name} (hints, time travel, partitions, ...)"), span));
                }
                let parts = object_name_parts(name)?;
                let base = match self.cte(&parts) {
                    Some((cte_name, plan)) => LogicalPlan::SubqueryAlias { alias: cte_name, child: Arc::new(fresh_ids(&plan)?) },
                    None => LogicalPlan::UnresolvedRelation { name: parts, args: None },
                };
                with_alias(base, alias.as_ref())
            }
            // (LATERAL is the caller's: a LateralJoin over what comes before.)
            TableFactor::Derived { lateral: _, subquery, alias, sample } => {
                if sample.is_some() {
                    return Err(unsupported("TABLESAMPLE", span));
                }
                let columns: Vec<String> = alias.iter().flat_map(|a| a.columns.iter().map(|c| c.name.value.clone())).collect();
                let plan = match subquery.body.as_ref() {
                    // `VALUES ... AS t(a, b)`: the column names belong to the inline table.
                    SetExpr::Values(v) if subquery.with.is_none() && subquery.order_by.is_none() && subquery.limit_clause.is_none() => {
                        values_relation(v, &columns, span)?
                    }
                    _ if !columns.is_empty() => {
                        let plan = self.plan_query(subquery)?;
                        rename_outputs(&plan, &columns).unwrap_or_else(|| column_aliases(plan, &alias.iter().flat_map(|a| a.columns.clone()).collect::<Vec<_>>()))
                    }
                    _ => self.plan_query(subquery)?,
                };
                let name = alias.as_ref().map(|a| a.name.value.clone()).unwrap_or_else(|| AUTO_SUBQUERY_ALIAS.to_string());
                Ok(LogicalPlan::SubqueryAlias { alias: name, child: Arc::new(plan) })
            }
            TableFactor::NestedJoin { table_with_joins, alias } => {
                let plan = self.plan_table_with_joins(table_with_joins)?;
                with_alias(plan, alias.as_ref())
            }
            TableFactor::UNNEST { .. } => Err(unsupported("UNNEST in FROM", span)),
            TableFactor::Pivot { table, aggregate_functions, value_column, value_source, default_on_null, alias } => {
                if default_on_null.is_some() {
                    return Err(unsupported("PIVOT ... DEFAULT ON NULL", span));
                }
                let ast::PivotValueSource::List(values) = value_source else {
                    return Err(unsupported("PIVOT ... IN (ANY) or IN (subquery) (Spark takes a list of literals)", span));
                };
                let child = self.plan_factor(table)?;
                let aggregates = pivot_aggregates(aggregate_functions, value_column, values, span)?;
                let columns = value_column.iter().map(convert_expr).collect::<Result<Vec<_>>>()?;
                with_alias(LogicalPlan::Pivot { columns, aggregates, child: Arc::new(child) }, alias.as_ref())
            }
            TableFactor::Unpivot { table, value, null_inclusion, name, columns, alias } => {
                let child = self.plan_factor(table)?;
                let plan = unpivot(child, value, null_inclusion, name, columns, span)?;
                with_alias(plan, alias.as_ref())
            }
            TableFactor::TableFunction { .. } | TableFactor::Function { .. } => Err(unsupported("table function in FROM", span)),
            _ => Err(unsupported("this FROM item", span)),
        }
    }

    /// The innermost CTE named `parts` (a one-part name), with the name as written in WITH.
    fn cte(&self, parts: &[String]) -> Option<(String, LogicalPlan)> {
        let [name] = parts else { return None };
        self.ctes.iter().rev().find(|(n, _)| n.eq_ignore_ascii_case(name)).cloned()
    }
}

/// The body of a CTE in `WITH RECURSIVE`: as written when it does not read itself, else a
/// UnionLoop of `anchor UNION ALL recursion` (Spark's rule: two children, only the second
/// reading the CTE).
fn recursive_cte(id: ExprId, body: LogicalPlan, name: &str) -> Result<LogicalPlan> {
    let reads = |p: &Arc<LogicalPlan>| p.exists_with_subqueries(&|n| matches!(n, LogicalPlan::UnionLoopRef { id: r, .. } if *r == id));
    let body = Arc::new(body);
    if !reads(&body) {
        return Ok(body.as_ref().clone());
    }
    match body.as_ref() {
        LogicalPlan::Union { children } if children.len() == 2 && !reads(&children[0]) => Ok(LogicalPlan::UnionLoop {
            id,
            anchor: children[0].clone(),
            recursion: children[1].clone(),
            output: vec![],
            limit: None,
        }),
        LogicalPlan::Distinct { child } if matches!(child.as_ref(), LogicalPlan::Union { .. }) => Err(crate::error::KilnError::analysis(
            "UNION_NOT_SUPPORTED_IN_RECURSIVE_CTE",
            format!("The UNION operator is not yet supported within recursive common table expressions (WITH clauses that refer to themselves, directly or indirectly). Please use UNION ALL instead (in `{name}`)."),
        )),
        _ => Err(crate::error::KilnError::analysis(
            "INVALID_RECURSIVE_CTE",
            format!("Invalid recursive definition found. Recursive queries must contain an UNION or an UNION ALL statement with 2 children. The first child needs to be the anchor term without any recursive references. Any top level inner CTE must not contain self references (in `{name}`)."),
        )),
    }
}

/// `(query) AS t(a, b)`: renames the query's select list in place, when it has one of as many
/// named columns (no `*`); None otherwise, for an `UnresolvedSubqueryColumnAliases` to rename
/// the columns once they are resolved.
fn rename_outputs(plan: &LogicalPlan, names: &[String]) -> Option<LogicalPlan> {
    let rename = |list: &[Expr]| -> Option<Vec<Expr>> {
        if list.len() != names.len() || list.iter().any(|e| matches!(e, Expr::UnresolvedStar(_))) {
            return None;
        }
        Some(list.iter().zip(names).map(|(e, n)| e.unalias().clone().alias(n.clone())).collect())
    };
    let under = |child: &Arc<LogicalPlan>| rename_outputs(child, names).map(Arc::new);
    Some(match plan {
        LogicalPlan::Project { list, child } => LogicalPlan::Project { list: rename(list)?, child: child.clone() },
        LogicalPlan::Aggregate { grouping, aggregates, child } => {
            LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: rename(aggregates)?, child: child.clone() }
        }
        LogicalPlan::Distinct { child } => LogicalPlan::Distinct { child: under(child)? },
        LogicalPlan::GlobalLimit { limit, child } => LogicalPlan::GlobalLimit { limit: *limit, child: under(child)? },
        LogicalPlan::LocalLimit { limit, child } => LogicalPlan::LocalLimit { limit: *limit, child: under(child)? },
        _ => return None,
    })
}

/// `plan` with its columns renamed by position to `columns` (none: `plan` as it is); the
/// analyzer checks the count.
fn column_aliases(plan: LogicalPlan, columns: &[ast::TableAliasColumnDef]) -> LogicalPlan {
    if columns.is_empty() {
        return plan;
    }
    let names = columns.iter().map(|c| c.name.value.clone()).collect();
    LogicalPlan::UnresolvedSubqueryColumnAliases { names, child: Arc::new(plan) }
}

/// Where a query starts (its first SELECT), cheaply.
fn query_span(q: &ast::Query) -> Span {
    body_span(&q.body)
}

fn body_span(body: &SetExpr) -> Span {
    let mut cur = body;
    // A loop, not recursion: `SELECT 1 UNION SELECT 2 UNION ...` nests to the left.
    loop {
        cur = match cur {
            SetExpr::Select(s) => return s.select_token.0.span,
            SetExpr::Query(q) => &q.body,
            SetExpr::SetOperation { left, .. } => left,
            SetExpr::Values(v) => return v.rows.first().map(|r| r.opening_token.0.span).unwrap_or(Span::empty()),
            _ => return Span::empty(),
        };
    }
}

fn factor_span(factor: &TableFactor) -> Span {
    match factor {
        TableFactor::Table { name, .. } => name.span(),
        TableFactor::Derived { alias: Some(a), .. } | TableFactor::NestedJoin { alias: Some(a), .. } => a.name.span,
        TableFactor::Derived { subquery, .. } => query_span(subquery),
        _ => Span::empty(),
    }
}

fn join(left: LogicalPlan, right: LogicalPlan, join_type: JoinType, condition: Option<Expr>, using: Vec<String>) -> LogicalPlan {
    LogicalPlan::Join { left: Arc::new(left), right: Arc::new(right), join_type, condition, using, hint: Default::default() }
}

fn lateral_join(left: LogicalPlan, right: LogicalPlan, join_type: JoinType, condition: Option<Expr>) -> LogicalPlan {
    LogicalPlan::LateralJoin { left: Arc::new(left), right: SubqueryPlan::new(Arc::new(right)), id: ExprId::next(), join_type, condition }
}

/// `left [INNER | LEFT | CROSS] JOIN LATERAL (subquery) [ON c]`, as Spark's AstBuilder checks it.
fn lateral_join_with(left: LogicalPlan, right: LogicalPlan, join_type: JoinType, constraint: &JoinConstraint, span: Span) -> Result<LogicalPlan> {
    let syntax = |what: &str, text: &str| parse_error(format!("[INVALID_SQL_SYNTAX.{what}] Invalid SQL syntax: {text}."), span);
    let condition = match constraint {
        JoinConstraint::On(e) => Some(convert_expr(e)?),
        JoinConstraint::None => None,
        JoinConstraint::Natural => return Err(syntax("LATERAL_NATURAL_JOIN", "NATURAL join with LATERAL correlation is not allowed")),
        JoinConstraint::Using(_) | JoinConstraint::UsingAlias(..) => return Err(syntax("LATERAL_JOIN_USING", "JOIN USING with LATERAL correlation is not allowed")),
    };
    let join_type = match join_type {
        JoinType::Inner | JoinType::Cross => JoinType::Inner,
        JoinType::LeftOuter => JoinType::LeftOuter,
        other => {
            let name = match other {
                JoinType::RightOuter => "RIGHT OUTER",
                JoinType::FullOuter => "FULL OUTER",
                JoinType::LeftSemi => "LEFT SEMI",
                _ => "LEFT ANTI",
            };
            return Err(parse_error(format!("[INVALID_LATERAL_JOIN_TYPE] The {name} JOIN with LATERAL correlation is not allowed because an OUTER subquery cannot correlate to its join partner. Remove the LATERAL correlation or use an INNER JOIN, or LEFT OUTER JOIN instead."), span));
        }
    };
    Ok(lateral_join(left, right, join_type, condition))
}

/// PIVOT's output columns (Spark's ResolvePivot, with `agg(if(col <=> value, x, null))`): per
/// value, per aggregate, the aggregate over the rows of that value, named by the value's alias
/// or text, with `_<aggregate's alias or text>` when there are several aggregates.
fn pivot_aggregates(aggregates: &[ast::ExprWithAlias], columns: &[ast::Expr], values: &[ast::ExprWithAlias], span: Span) -> Result<Vec<Expr>> {
    let columns = columns.iter().map(convert_expr).collect::<Result<Vec<_>>>()?;
    let mut out = vec![];
    for v in values {
        let items: Vec<Expr> = match &v.expr {
            ast::Expr::Tuple(items) if columns.len() > 1 && items.len() == columns.len() => items.iter().map(convert_expr).collect::<Result<_>>()?,
            e if columns.len() == 1 && !matches!(e, ast::Expr::Tuple(_)) => vec![convert_expr(e)?],
            e => {
                return Err(crate::error::KilnError::analysis(
                    "PIVOT_VALUE_DATA_TYPE_MISMATCH",
                    format!("Invalid pivot value '{e}': value data type does not match pivot column data type (the FOR clause has {} column(s)).", columns.len()),
                ))
            }
        };
        if let Some(bad) = items.iter().find(|e| !e.foldable()) {
            return Err(crate::error::KilnError::analysis("NON_LITERAL_PIVOT_VALUES", format!("Literal expressions required for pivot values, found \"{}\".", crate::expr::sql_name(bad))));
        }
        // Spark names a column by its value cast to a string: a timestamp literal by its
        // wall-clock time.
        let text = |e: &Expr| match e {
            Expr::Literal(ScalarValue::Timestamp(..)) => text_of_timestamp(e),
            Expr::Cast { child, .. } if matches!(child.as_ref(), Expr::Literal(ScalarValue::Timestamp(..))) => text_of_timestamp(child),
            Expr::Literal(v) => v.to_string(),
            // `'2022-01-01'::DATE` is named `2022-01-01`, by its value.
            other => match crate::expr::eval::evaluate_scalar(other) {
                Ok(v) => v.to_string(),
                Err(_) => crate::expr::sql_name(other),
            },
        };
        let value_name = match (&v.alias, items.as_slice()) {
            (Some(a), _) => a.value.clone(),
            (None, [one]) => text(one),
            // Spark casts a struct of values to a string.
            (None, many) => format!("{{{}}}", many.iter().map(text).collect::<Vec<_>>().join(", ")),
        };
        let condition = columns
            .iter()
            .zip(&items)
            .map(|(c, i)| c.clone().binary(crate::expr::BinaryOp::EqNullSafe, i.clone()))
            .reduce(|a, b| a.and(b))
            .ok_or_else(|| unsupported("PIVOT without a FOR column", span))?;
        for agg in aggregates {
            let ast::Expr::Function(f) = &agg.expr else {
                return Err(crate::error::KilnError::analysis("_LEGACY_ERROR_TEMP_1006", format!("Aggregate expression required for pivot, but '{}' did not appear in any aggregate function.", agg.expr)));
            };
            let e = super::expr::aggregate_where(f, condition.clone(), 0, span).map_err(|_| {
                crate::error::KilnError::analysis("_LEGACY_ERROR_TEMP_1006", format!("Aggregate expression required for pivot, but '{}' did not appear in any aggregate function.", agg.expr))
            })?;
            let name = if aggregates.len() == 1 {
                value_name.clone()
            } else {
                let suffix = match &agg.alias {
                    Some(a) => a.value.clone(),
                    None => {
                        // Spark's toPrettySQL: lower-case names, `count(*)` is `count(1)`.
                        let text = f.to_string();
                        let open = text.find('(').unwrap_or(text.len());
                        format!("{}{}", text[..open].to_lowercase(), &text[open..]).replace("(*)", "(1)")
                    }
                };
                format!("{value_name}_{suffix}")
            };
            out.push(e.alias(name));
        }
    }
    Ok(out)
}

/// A timestamp literal's wall-clock time as Spark casts it to a string.
fn text_of_timestamp(e: &Expr) -> String {
    match e {
        Expr::Literal(ScalarValue::Timestamp(wall, _)) => crate::types::format_timestamp(*wall),
        other => crate::expr::sql_name(other),
    }
}

/// UNPIVOT as Spark's AstBuilder writes it: the node, under `Filter isnotnull(coalesce(values))`
/// unless INCLUDE NULLS. An item's name is its alias, or its columns' names joined by `_`.
fn unpivot(child: LogicalPlan, value: &ast::Expr, nulls: &Option<ast::NullInclusion>, name: &ast::Ident, columns: &[ast::ExprWithAlias], span: Span) -> Result<LogicalPlan> {
    let ident = |e: &ast::Expr| match e {
        ast::Expr::Identifier(i) => Ok(i.value.clone()),
        other => Err(parse_error(format!("UNPIVOT takes value column names, got {other}"), span)),
    };
    let value_names: Vec<String> = match value {
        ast::Expr::Tuple(items) => items.iter().map(ident).collect::<Result<_>>()?,
        ast::Expr::Nested(inner) => vec![ident(inner)?],
        other => vec![ident(other)?],
    };
    let mut items = vec![];
    let mut names = vec![];
    for c in columns {
        let cols: Vec<Expr> = match &c.expr {
            ast::Expr::Tuple(items) => items.iter().map(convert_expr).collect::<Result<_>>()?,
            ast::Expr::Nested(inner) => vec![convert_expr(inner)?],
            other => vec![convert_expr(other)?],
        };
        if cols.len() != value_names.len() {
            return Err(crate::error::KilnError::analysis(
                "UNPIVOT_VALUE_SIZE_MISMATCH",
                format!("All unpivot value columns must have the same size as there are value column names ({}).", value_names.len()),
            ));
        }
        if let Some(bad) = cols.iter().find(|e| !matches!(e, Expr::UnresolvedAttribute(_))) {
            return Err(parse_error(format!("UNPIVOT ... IN takes columns, got {bad}"), span));
        }
        let written = |e: &Expr| match e {
            Expr::UnresolvedAttribute(parts) => parts.last().cloned().unwrap_or_default(),
            other => crate::expr::sql_name(other),
        };
        names.push(match &c.alias {
            Some(a) => a.value.clone(),
            None => cols.iter().map(written).collect::<Vec<_>>().join("_"),
        });
        items.push(cols);
    }
    let include_nulls = matches!(nulls, Some(ast::NullInclusion::IncludeNulls));
    let plan = LogicalPlan::Unpivot { columns: items, names, value_names: value_names.clone(), name_column: name.value.clone(), include_nulls, child: Arc::new(child) };
    if include_nulls {
        return Ok(plan);
    }
    let values = value_names.iter().map(|n| Expr::UnresolvedAttribute(vec![n.clone()])).collect();
    let any = Expr::IsNotNull(Box::new(Expr::UnresolvedFunction { name: "coalesce".into(), args: values, distinct: false }));
    Ok(LogicalPlan::Filter { condition: any, child: Arc::new(plan) })
}

fn with_alias(plan: LogicalPlan, alias: Option<&ast::TableAlias>) -> Result<LogicalPlan> {
    let Some(alias) = alias else { return Ok(plan) };
    let plan = column_aliases(plan, &alias.columns);
    Ok(LogicalPlan::SubqueryAlias { alias: alias.name.value.clone(), child: Arc::new(plan) })
}

fn join_kind(op: &JoinOperator, span: Span) -> Result<(JoinType, &JoinConstraint)> {
    Ok(match op {
        JoinOperator::Join(c) | JoinOperator::Inner(c) => (JoinType::Inner, c),
        JoinOperator::Left(c) | JoinOperator::LeftOuter(c) => (JoinType::LeftOuter, c),
        JoinOperator::Right(c) | JoinOperator::RightOuter(c) => (JoinType::RightOuter, c),
        JoinOperator::FullOuter(c) => (JoinType::FullOuter, c),
        JoinOperator::CrossJoin(c @ (JoinConstraint::On(_) | JoinConstraint::Using(_))) => (JoinType::Inner, c),
        JoinOperator::CrossJoin(c) => (JoinType::Cross, c),
        JoinOperator::Semi(c) | JoinOperator::LeftSemi(c) => (JoinType::LeftSemi, c),
        JoinOperator::Anti(c) | JoinOperator::LeftAnti(c) => (JoinType::LeftAnti, c),
        JoinOperator::RightSemi(_) => return Err(unsupported("RIGHT SEMI JOIN", span)),
        JoinOperator::RightAnti(_) => return Err(unsupported("RIGHT ANTI JOIN", span)),
        JoinOperator::CrossApply | JoinOperator::OuterApply => return Err(unsupported("CROSS/OUTER APPLY", span)),
        JoinOperator::AsOf { .. } => return Err(unsupported("ASOF JOIN", span)),
        JoinOperator::StraightJoin(_) => return Err(unsupported("STRAIGHT_JOIN", span)),
        _ => return Err(unsupported("ARRAY JOIN", span)),
    })
}

/// Clauses of other dialects (or of Spark beyond kiln) that must not be silently dropped.
fn reject_select_clauses(s: &ast::Select) -> Result<()> {
    let found = [
        (s.top.is_some(), "SELECT TOP"),
        (s.into.is_some(), "SELECT INTO"),
        (s.exclude.is_some(), "SELECT * EXCLUDE"),
        (s.select_modifiers.is_some(), "SELECT modifiers"),
        (s.prewhere.is_some(), "PREWHERE"),
        (!s.connect_by.is_empty(), "CONNECT BY"),
        (!s.cluster_by.is_empty(), "CLUSTER BY"),
        (!s.distribute_by.is_empty(), "DISTRIBUTE BY"),
        (!s.sort_by.is_empty(), "SORT BY"),
        (s.value_table_mode.is_some(), "SELECT AS VALUE/STRUCT"),
    ];
    match found.iter().find(|(present, _)| *present) {
        Some((_, what)) => Err(unsupported(*what, s.select_token.0.span)),
        None => Ok(()),
    }
}

/// QUALIFY (filters a SELECT's rows after its window functions, before DISTINCT): the window
/// calls of the condition join the select list under hidden names, which the condition then
/// reads and a `* EXCEPT (...)` over the Filter drops. Spark's QUALIFY_REQUIRES_WINDOW_FUNCTION
/// when neither the condition nor the select list has a window function.
fn qualify_windows(condition: Expr, list: &mut Vec<Expr>, span: Span) -> Result<(Expr, Vec<String>)> {
    let mut hidden = vec![];
    let condition = condition.transform_down::<crate::error::KilnError>(&mut |e| {
        if !matches!(e, Expr::WindowExpression { .. }) {
            return Ok(e);
        }
        let name = format!("__qualify_{}", hidden.len());
        list.push(e.alias(name.clone()));
        hidden.push(name.clone());
        Ok(Expr::UnresolvedAttribute(vec![name]))
    })?;
    if hidden.is_empty() && !list.iter().any(Expr::contains_window) {
        return Err(crate::error::KilnError::analysis(
            "QUALIFY_REQUIRES_WINDOW_FUNCTION",
            format!("The QUALIFY clause requires at least one window function in the current SELECT list or the QUALIFY condition (QUALIFY {condition}){}.", super::at(span.start)),
        ));
    }
    Ok((condition, hidden))
}

fn select_item(item: &SelectItem) -> Result<Expr> {
    match item {
        SelectItem::UnnamedExpr(e) => convert_expr(e),
        SelectItem::ExprWithAlias { expr, alias } => match convert_expr(expr)? {
            // `x::int unsigned AS a`: Spark reads `unsigned` as an alias already.
            Expr::Alias { name, .. } if name == "unsigned" && matches!(expr, ast::Expr::Cast { .. }) => Err(crate::error::KilnError::analysis(
                "PARSE_SYNTAX_ERROR",
                format!("Syntax error at or near '{}': Spark has no unsigned types, `{expr}` is a cast with the alias `unsigned`.", alias.value),
            )),
            e => Ok(e.alias(alias.value.clone())),
        },
        SelectItem::Wildcard(opts) => star(None, opts),
        SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(name), opts) => star(Some(object_name(name)?), opts),
        SelectItem::ExprWithAliases { expr, aliases } => {
            Ok(Expr::MultiAlias { child: Box::new(convert_expr(expr)?), names: aliases.iter().map(|a| a.value.clone()).collect() })
        }
        SelectItem::QualifiedWildcard(_, opts) => Err(unsupported("wildcard on an expression", opts.wildcard_token.0.span)),
    }
}

/// `*` / `t.*`, with Spark's `EXCEPT (a, b)`; the other modifiers (EXCLUDE, REPLACE, ...) are not Spark's.
fn star(qualifier: Option<String>, opts: &WildcardAdditionalOptions) -> Result<Expr> {
    let other = opts.opt_ilike.is_some() || opts.opt_exclude.is_some() || opts.opt_replace.is_some() || opts.opt_rename.is_some() || opts.opt_alias.is_some();
    if other {
        return Err(parse_error("[PARSE_SYNTAX_ERROR] Syntax error: Spark's SELECT * takes only EXCEPT (col, ...), not EXCLUDE / REPLACE / RENAME / ILIKE / AS", opts.wildcard_token.0.span));
    }
    match &opts.opt_except {
        None => Ok(Expr::UnresolvedStar(qualifier)),
        Some(e) => {
            let except = std::iter::once(&e.first_element).chain(&e.additional_elements).map(|i| vec![i.value.clone()]).collect();
            Ok(Expr::UnresolvedStarExcept { qualifier, except })
        }
    }
}

/// Spark's defaults: ascending; NULLS FIRST when ascending, NULLS LAST when descending.
fn sort_orders(order_by: &ast::OrderBy) -> Result<Vec<SortOrder>> {
    if order_by.interpolate.is_some() {
        return Err(unsupported("ORDER BY ... INTERPOLATE", Span::empty()));
    }
    let items = match &order_by.kind {
        OrderByKind::Expressions(items) => items,
        OrderByKind::All(_) => return Err(unsupported("ORDER BY ALL", Span::empty())),
    };
    items.iter().map(super::expr::sort_order).collect()
}

/// The row count of `LIMIT n` (None for `LIMIT ALL` or no LIMIT) and of `OFFSET m` (0 without).
fn limit_value(limit: &LimitClause) -> Result<(Option<usize>, usize)> {
    let (limit, offset, limit_by) = match limit {
        LimitClause::LimitOffset { limit, offset, limit_by } => (limit, offset.as_ref().map(|o| &o.value), limit_by),
        LimitClause::OffsetCommaLimit { offset, .. } => {
            return Err(unsupported("LIMIT offset, count (use LIMIT count OFFSET offset)", start_span(offset)))
        }
    };
    if let Some(by) = limit_by.first() {
        return Err(unsupported("LIMIT ... BY", start_span(by)));
    }
    let offset = match offset {
        Some(e) => constant_count(e, "OFFSET")?,
        None => 0,
    };
    let limit = match limit {
        Some(e) => Some(constant_count(e, "LIMIT")?),
        None => None,
    };
    Ok((limit, offset))
}

/// A LIMIT/OFFSET count: a constant integer expression, not negative (Spark's
/// INVALID_LIMIT_LIKE_EXPRESSION errors).
fn constant_count(e: &ast::Expr, clause: &str) -> Result<usize> {
    let x = convert_expr(e)?;
    let err = |what: &str| parse_error(format!("[INVALID_LIMIT_LIKE_EXPRESSION.{what}] The {clause} like expression \"{x}\" is invalid."), start_span(e));
    if !x.resolved() || !x.foldable() {
        return Err(err("IS_UNFOLDABLE"));
    }
    let typed = crate::analyzer::coerce_expr(x.clone())?;
    let v = match crate::expr::eval::evaluate_scalar(&typed)? {
        ScalarValue::Int32(n) => n as i64,
        ScalarValue::Int64(n) => n,
        ScalarValue::Null(_) => return Err(err("IS_NULL")),
        _ => return Err(err("DATA_TYPE")),
    };
    usize::try_from(v).map_err(|_| parse_error(format!("[INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE] The {clause} like expression \"{x}\" is invalid. The expression must be equal to or greater than 0, but got {v}."), start_span(e)))
}

/// An unresolved Generate of the generator call `call` over `child` (LATERAL VIEW, a FROM item).
fn generate_node(call: Expr, outer: bool, qualifier: Option<String>, names: Vec<String>, child: LogicalPlan) -> Result<LogicalPlan> {
    let generator = match &call {
        Expr::UnresolvedFunction { name, args, .. } => GeneratorFunc::from_name(name).map(|(func, o)| (Generator { func, args: args.clone() }, o)),
        _ => None,
    };
    let Some((generator, outer_form)) = generator else {
        let name = match &call {
            Expr::UnresolvedFunction { name, .. } => name.clone(),
            other => crate::expr::sql_name(other),
        };
        return Err(crate::error::KilnError::analysis(
            "UNSUPPORTED_GENERATOR.NOT_GENERATOR",
            format!("The generator is not supported: `{name}` is expected to be a generator. However, it is not a generator."),
        ));
    };
    Ok(LogicalPlan::Generate { generator, unrequired: vec![], outer: outer || outer_form, qualifier, names, generator_output: vec![], child: Arc::new(child) })
}

/// The positional arguments of a table function.
fn function_args(args: &[ast::FunctionArg], span: Span) -> Result<Vec<Expr>> {
    args.iter()
        .map(|a| match a {
            ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => convert_expr(e),
            _ => Err(unsupported("named or * arguments of a table function", span)),
        })
        .collect()
}

/// Spark's table-valued `range(end)`, `range(start, end[, step[, partitions]])`: one bigint
/// column `id`, generated as the query reads it.
fn range_relation(args: &[ast::FunctionArg], span: Span) -> Result<LogicalPlan> {
    let mut nums = vec![];
    for a in args {
        let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) = a else {
            return Err(unsupported("named arguments of range(...)", span));
        };
        // Constant expressions fold here (`range(10 * 1024)`), as Spark evaluates them.
        let x = convert_expr(e)?;
        let value = if x.resolved() && x.foldable() { Some(crate::expr::eval::evaluate_scalar(&crate::analyzer::coerce_expr(x.clone())?)?) } else { None };
        match value {
            Some(ScalarValue::Int8(v)) => nums.push(v as i64),
            Some(ScalarValue::Int16(v)) => nums.push(v as i64),
            Some(ScalarValue::Int32(v)) => nums.push(v as i64),
            Some(ScalarValue::Int64(v)) => nums.push(v),
            _ => return Err(parse_error(format!("[NON_FOLDABLE_ARGUMENT] The function `range` requires its arguments to be foldable expressions of an integer type, but got {x}"), span)),
        }
    }
    let (start, end, step, splits) = match nums.as_slice() {
        [end] => (0, *end, 1, None),
        [start, end] => (*start, *end, 1, None),
        [start, end, step] => (*start, *end, *step, None),
        [start, end, step, splits] => (*start, *end, *step, Some(*splits)),
        _ => return Err(parse_error(format!("range(...) takes 1 to 4 arguments, got {}", nums.len()), span)),
    };
    if step == 0 {
        return Err(parse_error("[FAILED_FUNCTION_CALL] range(...): the step must not be 0", span));
    }
    let splits = match splits.map(usize::try_from) {
        Some(Ok(n)) if n > 0 => Some(n),
        None => None,
        Some(_) => return Err(parse_error("[FAILED_FUNCTION_CALL] range(...): the number of partitions must be positive", span)),
    };
    let output = vec![Attribute::new("id", DataType::Int64, false)];
    Ok(LogicalPlan::Range { output, range: crate::datasource::range::RangeSpec { start, end, step, splits } })
}

/// Inline rows (`VALUES (1, 'a'), (2, 'b')`) as a LocalRelation. Columns are named
/// `col1, col2, ...` as Spark names them unless `names` are given; each column takes the
/// wider type of its values.
pub(crate) fn values_relation(values: &ast::Values, names: &[String], span: Span) -> Result<LogicalPlan> {
    let mut rows: Vec<Vec<ScalarValue>> = Vec::with_capacity(values.rows.len());
    let exprs: Vec<Vec<Expr>> = values.rows.iter().map(|r| r.content.iter().map(convert_expr).collect::<Result<Vec<_>>>()).collect::<Result<_>>()?;
    // Rows with expressions (`VALUES (1 + 1, upper('a'))`): one projection of the empty row
    // per row, unioned (the analyzer widens the column types as for UNION ALL).
    if exprs.iter().flatten().any(|e| !matches!(e, Expr::Literal(_))) {
        let width = exprs.first().map(Vec::len).unwrap_or(0);
        if exprs.iter().any(|r| r.len() != width) || (!names.is_empty() && names.len() != width) {
            return Err(parse_error("[INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH] Invalid inline table: VALUES rows have different numbers of columns (or names)", span));
        }
        let children = exprs
            .into_iter()
            .map(|row| {
                let list = row.into_iter().enumerate().map(|(c, e)| e.alias(names.get(c).cloned().unwrap_or_else(|| format!("col{}", c + 1)))).collect();
                Arc::new(LogicalPlan::Project { list, child: Arc::new(LogicalPlan::OneRowRelation) })
            })
            .collect::<Vec<_>>();
        return Ok(match children.len() {
            1 => children[0].as_ref().clone(),
            _ => LogicalPlan::Union { children },
        });
    }
    for row in exprs {
        rows.push(row.into_iter().filter_map(|e| if let Expr::Literal(v) = e { Some(v) } else { None }).collect());
    }
    let width = rows.first().map(Vec::len).unwrap_or(0);
    if let Some(bad) = rows.iter().find(|r| r.len() != width) {
        return Err(parse_error(format!("[INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH] Invalid inline table: VALUES rows have different numbers of columns ({width} and {})", bad.len()), span));
    }
    if !names.is_empty() && names.len() != width {
        return Err(parse_error(format!("[INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH] Invalid inline table: {} column names given for VALUES with {width} columns", names.len()), span));
    }
    let mut output = Vec::with_capacity(width);
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(width);
    for c in 0..width {
        let cells: Vec<&ScalarValue> = rows.iter().filter_map(|r| r.get(c)).collect();
        let mut dt = DataType::Null;
        for v in &cells {
            dt = wider_type(&dt, &v.data_type()).ok_or_else(|| {
                parse_error(
                    format!("VALUES column {} mixes {} and {}", c + 1, spark_type_name(&dt), spark_type_name(&v.data_type())),
                    span,
                )
            })?;
        }
        let arrays = cells
            .iter()
            .map(|v| Ok(arrow::compute::cast(&v.to_array(1)?, &dt)?))
            .collect::<Result<Vec<ArrayRef>>>()?;
        let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
        columns.push(arrow::compute::concat(&refs)?);
        let name = names.get(c).cloned().unwrap_or_else(|| format!("col{}", c + 1));
        output.push(Attribute::new(name, dt, cells.iter().any(|v| v.is_null())));
    }
    let schema = Schema::new(output.iter().map(|a: &Attribute| Field::new(&a.name, a.data_type.clone(), a.nullable)).collect::<Vec<_>>());
    let batch = RecordBatch::try_new(Arc::new(schema), columns)?;
    Ok(LogicalPlan::LocalRelation { output, data: vec![batch] })
}

/// A GROUP BY list as grouping expressions and, for grouping analytics, the construct and its
/// elements (indices into the expressions). One ROLLUP / CUBE / GROUPING SETS keeps its kind
/// and items; `GROUP BY a, b WITH ROLLUP | WITH CUBE` is `ROLLUP(a, b)` / `CUBE(a, b)`; a list
/// mixing them (`GROUP BY a, GROUPING SETS ((b), (c))`, `CUBE(a, b), ROLLUP(c)`) is the GROUPING
/// SETS of the cross product of each part's sets, as Spark's GroupingAnalytics expands it.
fn grouping_analytics(exprs: &[ast::Expr], modifiers: &[ast::GroupByWithModifier], span: Span) -> Result<(Vec<Expr>, Option<(GroupingSetsKind, Vec<Vec<usize>>)>)> {
    let mut grouping: Vec<Expr> = vec![];
    let mut index = |e: &ast::Expr| -> Result<usize> {
        let e = convert_expr(e)?;
        Ok(grouping.iter().position(|g| g == &e).unwrap_or_else(|| {
            grouping.push(e);
            grouping.len() - 1
        }))
    };
    let construct = |e: &ast::Expr| matches!(e, ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_));
    match modifiers {
        [] => {}
        [m @ (ast::GroupByWithModifier::Rollup | ast::GroupByWithModifier::Cube)] if !exprs.iter().any(construct) => {
            let kind = if *m == ast::GroupByWithModifier::Rollup { GroupingSetsKind::Rollup } else { GroupingSetsKind::Cube };
            let elements = exprs.iter().map(|e| index(e).map(|i| vec![i])).collect::<Result<Vec<_>>>()?;
            return Ok((grouping, Some((kind, elements))));
        }
        // Hive's `GROUP BY a, b GROUPING SETS ((a), (a, b), ())`: sets of the listed expressions.
        [ast::GroupByWithModifier::GroupingSets(ast::Expr::GroupingSets(sets))] => {
            if let Some(e) = exprs.iter().find(|e| construct(e)) {
                let name = match e {
                    ast::Expr::Rollup(_) => "ROLLUP",
                    ast::Expr::Cube(_) => "CUBE",
                    _ => "GROUPING SETS",
                };
                return Err(crate::error::KilnError::analysis("UNRESOLVED_ROUTINE", format!("Cannot resolve routine `{name}` on search path [`system`.`builtin`, `system`.`session`].")));
            }
            for e in exprs {
                index(e)?;
            }
            let elements = sets.iter().map(|set| set.iter().map(&mut index).collect::<Result<Vec<_>>>()).collect::<Result<Vec<_>>>()?;
            return Ok((grouping, Some((GroupingSetsKind::GroupingSets, elements))));
        }
        _ => return Err(unsupported("GROUP BY ... WITH TOTALS, or WITH ROLLUP / CUBE over grouping analytics", span)),
    }
    // Spark's grammar has no empty set inside ROLLUP or CUBE.
    for e in exprs {
        if let ast::Expr::Rollup(sets) | ast::Expr::Cube(sets) = e {
            if sets.iter().any(Vec::is_empty) {
                let name = if matches!(e, ast::Expr::Rollup(_)) { "ROLLUP" } else { "CUBE" };
                return Err(crate::error::KilnError::Parse(format!("Empty set in {name} grouping sets is not supported.")));
            }
        }
    }
    if let [only @ (ast::Expr::Rollup(sets) | ast::Expr::Cube(sets) | ast::Expr::GroupingSets(sets))] = exprs {
        let kind = match only {
            ast::Expr::Rollup(_) => GroupingSetsKind::Rollup,
            ast::Expr::Cube(_) => GroupingSetsKind::Cube,
            _ => GroupingSetsKind::GroupingSets,
        };
        let elements = sets.iter().map(|set| set.iter().map(&mut index).collect::<Result<Vec<_>>>()).collect::<Result<Vec<_>>>()?;
        return Ok((grouping, Some((kind, elements))));
    }
    if !exprs.iter().any(construct) {
        for e in exprs {
            let e = convert_expr(e)?;
            grouping.push(e);
        }
        return Ok((grouping, None));
    }
    // Each part's grouping sets, then their cross product.
    let mut product: Vec<Vec<usize>> = vec![vec![]];
    for e in exprs {
        let items = |sets: &[Vec<ast::Expr>], index: &mut dyn FnMut(&ast::Expr) -> Result<usize>| -> Result<Vec<Vec<usize>>> {
            sets.iter().map(|set| set.iter().map(|x| index(x)).collect::<Result<Vec<usize>>>()).collect()
        };
        let part: Vec<Vec<usize>> = match e {
            ast::Expr::Rollup(sets) => {
                let items = items(sets, &mut index)?;
                (0..=items.len()).rev().map(|n| items[..n].concat()).collect()
            }
            ast::Expr::Cube(sets) => {
                let items = items(sets, &mut index)?;
                // Spark's cubeExprs: with the first item, then without, recursively.
                let mut cube: Vec<Vec<usize>> = vec![vec![]];
                for item in items.iter().rev() {
                    cube = cube.iter().map(|rest| [item.clone(), rest.clone()].concat()).chain(cube.iter().cloned()).collect();
                }
                cube
            }
            ast::Expr::GroupingSets(sets) => items(sets, &mut index)?,
            plain => vec![vec![index(plain)?]],
        };
        product = product.iter().flat_map(|acc| part.iter().map(move |p| [acc.clone(), p.clone()].concat())).collect();
    }
    Ok((grouping, Some((GroupingSetsKind::GroupingSets, product))))
}

/// UNIONs of one kind in a row past which the parsed plan holds them in one Union.
const FLAT_UNION_FROM: usize = 64;
