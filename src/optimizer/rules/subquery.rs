//! Subquery expressions become joins: `RewritePredicateSubquery` (IN / EXISTS and their
//! negations in a WHERE conjunct -> LeftSemi / LeftAnti joins) and
//! `RewriteCorrelatedScalarSubquery` (a correlated scalar subquery -> a LeftOuter join with a
//! per-key aggregate; an uncorrelated one stays an expression, planned by `PlanSubqueries`). Correlated predicates (those reading `outer(..)` columns) are pulled out
//! of the subquery into the join condition (Catalyst's `PullupCorrelatedPredicates`).
//!
//! ```text
//! Filter exists#9 [o_orderkey#1]                 Join LeftSemi, (l_orderkey#5 = o_orderkey#1)
//! +- Relation orders[o_orderkey#1,...]     =>    :- Relation orders[o_orderkey#1,...]
//!    (Filter (l_orderkey#5 = outer(o_orderkey#1))  +- Relation lineitem[l_orderkey#5,...]
//!     +- Relation lineitem[l_orderkey#5,...])
//!
//! Filter (x#1 > scalar-subquery#9 [k#2])         Project [x#1, k#2]
//! +- Relation t[x#1,k#2]                         +- Filter (x#1 > avg(y)#8)
//!    (Aggregate [avg(y#4) AS avg(y)#8]      =>      +- Join LeftOuter, (k#3 = k#2)
//!     +- Filter (k#3 = outer(k#2))                     :- Relation t[x#1,k#2]
//!        +- Relation u[y#4,k#3])                       +- Aggregate [k#3], [avg(y#4) AS avg(y)#8, k#3]
//!                                                         +- Relation u[y#4,k#3]
//! ```
//! `x NOT IN (subquery)` is null-aware: a row goes when some subquery value equals `x` or the
//! comparison is NULL, so the anti-join condition is `(x = c) OR isnull(x = c)`;
//! `NullPropagation` reduces it to `x = c` when neither side can be NULL.
//!
//! A correlation that is not `inner = f(outer)` under an aggregate goes through a domain join
//! (the distinct outer values, `domain_join`); a count over no matching rows is 0 (`count_bug`);
//! EXISTS / IN below OR / NOT / CASE or in a SELECT list are marker columns of a left outer
//! join (`existence_columns`); subqueries in ORDER BY and aggregates move into Projects first
//! (`pull_out_subqueries`); a scalar subquery without an aggregate reads `single_value`.
//! Outer references below an operator a predicate cannot cross (a Limit, a Window, a Union,
//! an outer join) take the general route, `decorrelate::push_domain`.
//! IN / EXISTS in a join condition become marker columns of one side
//! (`join_condition_subqueries`). Not supported (a clear error instead): correlation to a
//! query two levels out; correlated subqueries, IN or EXISTS in GROUP BY.
//! These rules run before the operator optimizations, which do not look into subqueries.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::finish_analysis::{EliminateSubqueryAliases, ReplaceDistinctWithAggregate};
use super::set_operations::{ReplaceExceptWithAntiJoin, ReplaceIntersectWithSemiJoin, RewriteExceptAll, RewriteIntersectAll};
use super::decorrelate::{push_domain, Domain};
use super::limits::max_rows;
use crate::error::{KilnError, Result};
use crate::expr::eval::evaluate_scalar;
use crate::expr::{AggBuiltin, AggFunc, AggKind, Attribute, BinaryOp, Expr, ExprId, SubqueryPlan};
use crate::types::ScalarValue;
use crate::optimizer::Rule;
use crate::plan::{named_output, JoinType, LogicalPlan};

/// IN / EXISTS (and NOT IN / NOT EXISTS) conjuncts of a Filter become semi / anti joins.
pub struct RewritePredicateSubquery;

impl Rule for RewritePredicateSubquery {
    fn name(&self) -> &'static str {
        "RewritePredicateSubquery"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        let plan = &pull_out_subqueries(plan)?;
        plan.transform_up(&mut |p| {
            let is_subquery = |e: &Expr| e.exists(&|x| matches!(x, Expr::Exists { .. } | Expr::InSubquery { .. }));
            let (condition, child) = match p.as_ref() {
                LogicalPlan::Filter { condition, child } => (condition, child),
                // In a SELECT list: each subquery becomes a boolean column of a join.
                LogicalPlan::Project { list, child } if list.iter().any(is_subquery) => {
                    let list = list.iter().map(|e| one_row_subqueries(e.clone())).collect::<Result<Vec<_>>>()?;
                    let mut cur = child.clone();
                    let list = list.into_iter().map(|e| existence_columns(e, &mut cur)).collect::<Result<Vec<_>>>()?;
                    return Ok(Arc::new(LogicalPlan::Project { list, child: cur }));
                }
                _ => return Ok(p),
            };
            if !is_subquery(condition) {
                return Ok(p);
            }
            let condition = &one_row_subqueries(condition.clone())?;
            if !is_subquery(condition) {
                return Ok(Arc::new(LogicalPlan::Filter { condition: condition.clone(), child: child.clone() }));
            }
            let (with, without): (Vec<&Expr>, Vec<&Expr>) = condition.split_conjunction().into_iter().partition(|c| is_subquery(c));
            // As Catalyst: the other conjuncts filter first, the joins go on top.
            let mut cur = match Expr::conjunction(without.into_iter().cloned()) {
                Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: child.clone() }),
                None => child.clone(),
            };
            let mut nested = vec![];
            for c in with {
                let (negated, inner) = match c {
                    Expr::Not(inner) => (true, inner.as_ref()),
                    other => (false, other),
                };
                let (plan, value) = match inner {
                    Expr::Exists { plan, .. } => (plan, None),
                    Expr::InSubquery { values, plan, .. } => (plan, Some(values.as_slice())),
                    _ => {
                        nested.push(c.clone());
                        continue;
                    }
                };
                let (sub, preds) = decorrelate(plan, &cur)?;
                let mut conds = vec![];
                if let Some(values) = value {
                    // NOT IN is null-aware per column (Spark's `(a = x OR isnull(a = x)) AND ...`).
                    let eqs = in_conditions(values, &sub)?;
                    conds.extend(if negated { eqs.into_iter().map(null_aware).collect() } else { eqs });
                }
                conds.extend(preds);
                check_correlation(&conds, &cur, &sub)?;
                let join_type = if negated { JoinType::LeftAnti } else { JoinType::LeftSemi };
                cur = Arc::new(LogicalPlan::Join { left: cur, right: sub, join_type, condition: Expr::conjunction(conds), using: vec![], hint: Default::default() });
            }
            if let Some(rest) = Expr::conjunction(nested) {
                // Under OR / NOT / CASE: the subqueries become boolean columns, the Filter reads them.
                let output = cur.output();
                let condition = existence_columns(rest, &mut cur)?;
                cur = Arc::new(LogicalPlan::Project {
                    list: output.iter().map(|a| a.expr()).collect(),
                    child: Arc::new(LogicalPlan::Filter { condition, child: cur }),
                });
            }
            Ok(cur)
        })
    }
}

/// Replaces each EXISTS / IN subquery in `e` (not a top-level conjunct) by a boolean column
/// that a left outer join adds to `cur` (kiln's form of Spark's ExistenceJoin): `EXISTS` is
/// whether a marker row matched; `x IN (..)` is three-valued, true on a match, NULL when only
/// a NULL comparison matched, false otherwise.
fn existence_columns(e: Expr, cur: &mut Arc<LogicalPlan>) -> Result<Expr> {
    e.transform_up(&mut |x| match x {
        Expr::Exists { plan, .. } => {
            let (sub, preds) = decorrelate(&plan, cur)?;
            existence_marker(cur, &sub, preds)
        }
        Expr::InSubquery { values, plan, .. } => {
            let (sub, preds) = decorrelate(&plan, cur)?;
            let eqs = in_conditions(&values, &sub)?;
            let matched = existence_marker(cur, &sub, [eqs.clone(), preds.clone()].concat())?;
            if !values.iter().any(Expr::nullable) && !sub.output().iter().any(|c| c.nullable) {
                return Ok(matched);
            }
            // The second lookup reads a second instance of the subquery.
            let (sub, ids) = crate::sql::fresh_instance(&sub)?;
            let renamed = |e: Expr| with_ids(e, &ids);
            let unknown = eqs.into_iter().map(|eq| renamed(eq).map(null_aware)).collect::<Result<Vec<_>>>()?;
            let preds = preds.into_iter().map(renamed).collect::<Result<Vec<_>>>()?;
            let maybe = existence_marker(cur, &sub, [unknown, preds].concat())?;
            Ok(Expr::CaseWhen {
                branches: vec![(matched, Expr::lit(ScalarValue::Boolean(true))), (maybe, Expr::lit(ScalarValue::Null(arrow::datatypes::DataType::Boolean)))],
                else_expr: Some(Box::new(Expr::lit(ScalarValue::Boolean(false)))),
                if_form: false,
            })
        }
        other => Ok(other),
    })
}

/// `value = column` for each value of an IN subquery and the column of `sub` it meets.
fn in_conditions(values: &[Expr], sub: &LogicalPlan) -> Result<Vec<Expr>> {
    let cols = sub.output();
    if cols.len() < values.len() {
        return Err(KilnError::internal("IN subquery with fewer columns than values"));
    }
    Ok(values.iter().zip(cols).map(|(v, c)| v.clone().binary(BinaryOp::Eq, c.expr())).collect())
}

/// `eq OR isnull(eq)`: a comparison NOT IN counts as a match when it is unknown.
fn null_aware(eq: Expr) -> Expr {
    eq.clone().binary(BinaryOp::Or, Expr::IsNull(Box::new(eq)))
}

/// Joins `cur` with one marker row per outer row that some row of `sub` matches on `conds`,
/// and returns `isnotnull(marker)`. Each outer row meets at most one marker: the markers are
/// per distinct outer value (the domain, semi-joined with `sub`), or one row when `conds`
/// read no outer column.
fn existence_marker(cur: &mut Arc<LogicalPlan>, sub: &Arc<LogicalPlan>, conds: Vec<Expr>) -> Result<Expr> {
    check_correlation(&conds, cur, sub)?;
    let exists = Expr::lit(ScalarValue::Boolean(true)).alias("exists");
    let mut marker = named_output(&exists).ok_or_else(|| KilnError::internal("alias without an output"))?;
    // Read above the outer join, which NULL-extends it.
    marker.nullable = true;
    let sub_ids: BTreeSet<ExprId> = sub.output_ids().into_iter().collect();
    let correlated = conds.iter().any(|c| !c.references().is_subset(&sub_ids));
    let (right, condition) = if correlated {
        let (domain, inner, joins) = domain_join(&conds, &sub_ids, cur)?;
        let mut list: Vec<Expr> = domain.output().iter().map(|a| a.expr()).collect();
        list.push(exists);
        let semi = Arc::new(LogicalPlan::Join { left: domain, right: sub.clone(), join_type: JoinType::LeftSemi, condition: Expr::conjunction(inner), using: vec![], hint: Default::default() });
        (Arc::new(LogicalPlan::Project { list, child: semi }), Expr::conjunction(joins))
    } else {
        let rows = match Expr::conjunction(conds) {
            Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: sub.clone() }),
            None => sub.clone(),
        };
        let one = Arc::new(LogicalPlan::GlobalLimit { limit: 1, child: Arc::new(LogicalPlan::LocalLimit { limit: 1, child: rows }) });
        (Arc::new(LogicalPlan::Project { list: vec![exists], child: one }), None)
    };
    *cur = Arc::new(LogicalPlan::Join { left: cur.clone(), right, join_type: JoinType::LeftOuter, condition, using: vec![], hint: Default::default() });
    Ok(Expr::IsNotNull(Box::new(marker.expr())))
}

/// Subqueries in an ORDER BY or an aggregate move into Projects, where the rewrites below
/// answer them: under a Sort into a Project below it (the Sort reads the new column); inside
/// an aggregate function's argument into a Project below the Aggregate (per input row); in
/// an aggregate's output list, outside aggregate functions, into a Project above it (per
/// group, reading the grouping columns).
fn pull_out_subqueries(plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
    let within_project = |child: &Arc<LogicalPlan>, extra: Vec<Expr>| -> Arc<LogicalPlan> {
        if extra.is_empty() {
            return child.clone();
        }
        let list = child.output().iter().map(|a| a.expr()).chain(extra).collect();
        Arc::new(LogicalPlan::Project { list, child: child.clone() })
    };
    plan.transform_up(&mut |p| match p.as_ref() {
        LogicalPlan::Sort { order, global, child } if order.iter().any(|o| o.expr.contains_subquery()) => {
            let mut extra = vec![];
            let order = order
                .iter()
                .map(|o| Ok(crate::expr::SortOrder { expr: lift_subqueries(o.expr.clone(), &mut extra)?, ..o.clone() }))
                .collect::<Result<Vec<_>>>()?;
            let sort = Arc::new(LogicalPlan::Sort { order, global: *global, child: within_project(child, extra) });
            Ok(Arc::new(LogicalPlan::Project { list: p.output().iter().map(|a| a.expr()).collect(), child: sort }))
        }
        LogicalPlan::Aggregate { grouping, aggregates, child } if aggregates.iter().chain(grouping).any(|e| e.contains_subquery()) => {
            // An uncorrelated scalar subquery is a constant there; a correlated one or IN /
            // EXISTS would need a join below the aggregate.
            if grouping.iter().any(|e| e.exists(&is_planned_subquery)) {
                return Err(KilnError::unsupported("a correlated subquery, IN or EXISTS in GROUP BY"));
            }
            let mut pre = vec![];
            let mut aggs = vec![];
            for e in aggregates {
                aggs.push(e.clone().transform_down(&mut |x| match x {
                    Expr::Aggregate { func, args, distinct } => Ok::<_, KilnError>(Expr::Aggregate {
                        func,
                        args: args.into_iter().map(|a| lift_subqueries(a, &mut pre)).collect::<Result<Vec<_>>>()?,
                        distinct,
                    }),
                    other => Ok(other),
                })?);
            }
            let child = within_project(child, pre);
            if !aggs.iter().any(|e| e.contains_subquery()) {
                return Ok(Arc::new(LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: aggs, child }));
            }
            let mut inner = vec![];
            let mut post = vec![];
            for e in aggs {
                if !e.contains_subquery() {
                    post.push(named_output(&e).ok_or_else(|| KilnError::internal(format!("unnamed aggregate output {e}")))?.expr());
                    inner.push(e);
                    continue;
                }
                post.push(e.transform_down(&mut |x| match x {
                    Expr::Aggregate { .. } => {
                        let a = x.alias("_agg");
                        let attr = named_output(&a).ok_or_else(|| KilnError::internal("alias without an output"))?;
                        inner.push(a);
                        Ok::<_, KilnError>(attr.expr())
                    }
                    other => Ok(other),
                })?);
            }
            // The grouping columns the projection above reads (outer references included).
            let below = child.output();
            for id in post.iter().flat_map(|e| e.references()) {
                if let Some(a) = below.iter().find(|a| a.id == id) {
                    if !inner.iter().any(|e| named_output(e).is_some_and(|n| n.id == id)) {
                        inner.push(a.expr());
                    }
                }
            }
            let agg = Arc::new(LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: inner, child });
            Ok(Arc::new(LogicalPlan::Project { list: post, child: agg }))
        }
        LogicalPlan::Join { left, right, join_type, condition: Some(condition), using, hint } if condition.exists(&is_planned_subquery) => {
            join_condition_subqueries(left, right, *join_type, condition, using, *hint)
        }
        LogicalPlan::Filter { .. } | LogicalPlan::Project { .. } => Ok(p),
        // An uncorrelated scalar subquery is a constant wherever it is (a join condition too).
        other if other.expressions().iter().any(|e| e.exists(&|x| match x {
            Expr::ScalarSubquery { plan, .. } => correlated(plan),
            x => matches!(x, Expr::Exists { .. } | Expr::InSubquery { .. }),
        })) => {
            Err(KilnError::unsupported(format!("a subquery in `{}` (kiln plans them in WHERE, HAVING, SELECT, ORDER BY and aggregates)", other.node_string())))
        }
        _ => Ok(p),
    })
}

/// A subquery expression the rewrites here turn into a join (an uncorrelated scalar subquery
/// stays an expression).
fn is_planned_subquery(x: &Expr) -> bool {
    match x {
        Expr::ScalarSubquery { plan, .. } => correlated(plan),
        x => matches!(x, Expr::Exists { .. } | Expr::InSubquery { .. }),
    }
}

/// Subqueries in a join condition: each one, reading the columns of one side only, becomes a
/// column of a Project over that side (a marker join, Spark's ExistenceJoin below the join),
/// which the condition reads, so outer joins keep their meaning. As in Spark, a subquery
/// reading both sides is UNSUPPORTED_CORRELATED_EXPRESSION_IN_JOIN_CONDITION and a correlated
/// scalar subquery there UNSUPPORTED_CORRELATED_SCALAR_SUBQUERY.
fn join_condition_subqueries(left: &Arc<LogicalPlan>, right: &Arc<LogicalPlan>, join_type: JoinType, condition: &Expr, using: &[String], hint: crate::plan::JoinHint) -> Result<Arc<LogicalPlan>> {
    let output = join_type.output(left.output(), right.output());
    let ids = |p: &LogicalPlan| p.output_ids().into_iter().collect::<BTreeSet<ExprId>>();
    let (left_ids, right_ids) = (ids(left), ids(right));
    let (mut lx, mut rx, mut conds) = (vec![], vec![], vec![]);
    for c in condition.split_conjunction() {
        let (mut l, mut r, mut both) = (vec![], vec![], false);
        let lifted = c.clone().transform_down(&mut |x| {
            if !is_planned_subquery(&x) {
                return Ok(x);
            }
            if let Expr::ScalarSubquery { .. } = x {
                return Err(KilnError::analysis(
                    "UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.UNSUPPORTED_CORRELATED_SCALAR_SUBQUERY",
                    format!("Correlated scalar subqueries can only be used in filters, aggregations, projections, and UPDATE/MERGE/DELETE commands: {x}."),
                ));
            }
            let refs = x.references();
            let side = if refs.is_subset(&left_ids) { &mut l } else if refs.is_subset(&right_ids) { &mut r } else {
                both = true;
                return Ok(x);
            };
            let a = x.alias("_subquery");
            let attr = named_output(&a).ok_or_else(|| KilnError::internal("alias without an output"))?;
            side.push(a);
            Ok::<_, KilnError>(attr.expr())
        })?;
        if both {
            return Err(KilnError::analysis(
                "UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.UNSUPPORTED_CORRELATED_EXPRESSION_IN_JOIN_CONDITION",
                format!("Unsupported subquery expression: Correlated subqueries in the join predicate cannot reference both join inputs:\n{c}"),
            ));
        }
        lx.extend(l);
        rx.extend(r);
        conds.push(lifted);
    }
    let with = |side: &Arc<LogicalPlan>, extra: Vec<Expr>| -> Arc<LogicalPlan> {
        if extra.is_empty() {
            return side.clone();
        }
        Arc::new(LogicalPlan::Project { list: side.output().iter().map(|a| a.expr()).chain(extra).collect(), child: side.clone() })
    };
    let join_type = if join_type == JoinType::Cross && !conds.is_empty() { JoinType::Inner } else { join_type };
    let join = Arc::new(LogicalPlan::Join { left: with(left, lx), right: with(right, rx), join_type, condition: Expr::conjunction(conds), using: using.to_vec(), hint });
    Ok(Arc::new(LogicalPlan::Project { list: output.iter().map(|a| a.expr()).collect(), child: join }))
}

/// Replaces each subquery expression in `e` by a column that `extra` computes.
fn lift_subqueries(e: Expr, extra: &mut Vec<Expr>) -> Result<Expr> {
    e.transform_down(&mut |x| match x {
        Expr::ScalarSubquery { .. } | Expr::Exists { .. } | Expr::InSubquery { .. } => {
            let a = x.alias("_subquery");
            let attr = named_output(&a).ok_or_else(|| KilnError::internal("alias without an output"))?;
            extra.push(a);
            Ok(attr.expr())
        }
        other => Ok(other),
    })
}

/// A subquery that is an aggregate without GROUP BY returns exactly one row, even over no
/// input rows (count 0, max NULL): EXISTS of it is true and `x IN (it)` is `x = (it)`, which
/// the scalar subquery rewrite answers with the count bug handled.
fn one_row_subqueries(condition: Expr) -> Result<Expr> {
    let one_row = |p: &LogicalPlan| global_aggregate(p, false);
    condition.transform_up(&mut |e| {
        Ok(match e {
            Expr::Exists { plan, .. } if one_row(plan.plan()) => Expr::lit(ScalarValue::Boolean(true)),
            Expr::InSubquery { mut values, plan, id } if values.len() == 1 && one_row(plan.plan()) => {
                values.remove(0).binary(BinaryOp::Eq, Expr::ScalarSubquery { plan, id })
            }
            other => other,
        })
    })
}

/// Scalar subqueries in a Filter or Project become LeftOuter joins.
pub struct RewriteCorrelatedScalarSubquery;

impl Rule for RewriteCorrelatedScalarSubquery {
    fn name(&self) -> &'static str {
        "RewriteCorrelatedScalarSubquery"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| {
            let child = match p.as_ref() {
                LogicalPlan::Filter { child, .. } | LogicalPlan::Project { child, .. } => child,
                _ => {
                    if p.expressions().iter().any(|e| e.exists(&|x| matches!(x, Expr::ScalarSubquery { plan, .. } if correlated(plan)))) {
                        return Err(KilnError::unsupported(format!("scalar subquery in `{}` (only in WHERE, HAVING or a SELECT list)", p.node_string())));
                    }
                    return Ok(p);
                }
            };
            let mut subqueries: Vec<(ExprId, SubqueryPlan)> = vec![];
            for e in p.expressions() {
                e.visit(&mut |x| {
                    // An uncorrelated one stays an expression: it runs once, before the query.
                    if let Expr::ScalarSubquery { plan, id } = x {
                        if correlated(plan) && !subqueries.iter().any(|(i, _)| i == id) {
                            subqueries.push((*id, plan.clone()));
                        }
                    }
                });
            }
            if subqueries.is_empty() {
                return Ok(p);
            }
            let mut cur = child.clone();
            let mut values: Vec<(ExprId, Expr)> = vec![];
            for (id, plan) in subqueries {
                // Spark's OptimizeOneRowRelationSubquery: `(SELECT outer.a + 1)` is that
                // expression of the outer row, no join.
                if let Some(v) = one_row_value(&plan, &cur)? {
                    values.push((id, v));
                    continue;
                }
                let (mut sub, preds) = decorrelate(&single_row(plan)?, &cur)?;
                let mut value = sub.output().first().cloned().ok_or_else(|| KilnError::internal("scalar subquery without a column"))?;
                // Read above the outer join, which NULL-extends it.
                value.nullable = true;
                let mut value_expr = value.expr();
                if preds.is_empty() {
                    if max_rows(&sub).is_none_or(|n| n > 1) {
                        return Err(KilnError::unsupported(
                            "a scalar subquery that may return more than one row (kiln needs an aggregate without GROUP BY or LIMIT 1, as it cannot check the row count at run time)",
                        ));
                    }
                } else if let Some((fixed, v)) = count_bug(&sub, &value)? {
                    // (`single_row` made sure the subquery has at most one row per outer row.)
                    sub = fixed;
                    value_expr = v;
                }
                check_correlation(&preds, &cur, &sub)?;
                cur = Arc::new(LogicalPlan::Join { left: cur, right: sub, join_type: JoinType::LeftOuter, condition: Expr::conjunction(preds), using: vec![], hint: Default::default() });
                values.push((id, value_expr));
            }
            let replace = |e: Expr| -> Result<Expr> {
                e.transform_up(&mut |x| match &x {
                    Expr::ScalarSubquery { id, .. } => match values.iter().find(|(i, _)| i == id) {
                        Some((_, v)) => Ok(v.clone()),
                        None => Ok(x),
                    },
                    _ => Ok(x),
                })
            };
            let node = p.with_new_children(vec![cur]).map_expressions(replace)?;
            Ok(match node {
                // The join added the subquery's columns: project the Filter's own back.
                LogicalPlan::Filter { .. } => {
                    Arc::new(LogicalPlan::Project { list: p.output().iter().map(|a| a.expr()).collect(), child: Arc::new(node) })
                }
                other => Arc::new(other),
            })
        })
    }
}

/// The value of a scalar subquery that is one expression over no FROM (`Project [e] <-
/// OneRowRelation`), as an expression of `outer`'s row; None for any other subquery.
fn one_row_value(plan: &SubqueryPlan, outer: &Arc<LogicalPlan>) -> Result<Option<Expr>> {
    let sub = prepare(plan)?;
    let LogicalPlan::Project { list, child } = sub.as_ref() else { return Ok(None) };
    let [e] = list.as_slice() else { return Ok(None) };
    // (An uncorrelated scalar subquery inside stays an expression, run once.)
    let nested = |x: &Expr| match x {
        Expr::ScalarSubquery { plan, .. } => correlated(plan),
        Expr::Exists { .. } | Expr::InSubquery { .. } => true,
        _ => false,
    };
    if e.exists(&nested) || !matches!(child.as_ref(), LogicalPlan::OneRowRelation) {
        return Ok(None);
    }
    let local: BTreeSet<ExprId> = outer.output_ids().into_iter().collect();
    Ok(Some(strip_outer_of(e.unalias(), &local)?))
}

/// `LateralJoin`s become Joins, as Spark's `OptimizeOneRowRelationSubquery` and
/// `RewriteLateralSubquery` over `DecorrelateInnerQuery`'s result plan them:
///
/// ```text
/// LateralJoin lateral-subquery#7 [a#1], Inner        Project [a#1, k#2, (a#1 + 1) AS b#5]
/// :  +- Project [(outer(a#1) + 1) AS b#5]       =>   +- Relation t[a#1,k#2]
/// :     +- OneRowRelation
/// +- Relation t[a#1,k#2]
///
/// LateralJoin lateral-subquery#7 [k#2], Inner        Join Inner, (k#4 = k#2)
/// :  +- Project [v#3]                           =>   :- Relation t[a#1,k#2]
/// :     +- Filter (k#4 = outer(k#2))                 +- Project [v#3, k#4]
/// :        +- Relation u[v#3,k#4]                       +- Relation u[v#3,k#4]
/// +- Relation t[a#1,k#2]
/// ```
/// A subquery that is an aggregate without GROUP BY gives every outer row one row, also an
/// outer row no input row matches (`max` NULL, `count` 0: `count_bug`): a LeftOuter join. An
/// outer column in the subquery's select list above a FROM is computed over the inner join.
pub struct RewriteLateralSubquery;

impl Rule for RewriteLateralSubquery {
    fn name(&self) -> &'static str {
        "RewriteLateralSubquery"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::LateralJoin { left, right, join_type, condition, .. } => rewrite_lateral(left, right, *join_type, condition.as_ref()),
            _ => Ok(p),
        })
    }
}

fn rewrite_lateral(left: &Arc<LogicalPlan>, right: &SubqueryPlan, join_type: JoinType, condition: Option<&Expr>) -> Result<Arc<LogicalPlan>> {
    let sub = prepare(right)?;
    let columns = sub.output();
    if let LogicalPlan::Project { list, child } = sub.as_ref() {
        if !list.iter().any(Expr::contains_subquery) {
            // The left side's columns; references further out stay outer.
            let local: BTreeSet<ExprId> = left.output_ids().into_iter().collect();
            let defs = list.iter().map(|e| strip_outer_of(e.unalias(), &local)).collect::<Result<Vec<_>>>()?;
            // Over the one empty row: each outer row gets the list's values.
            if matches!(child.as_ref(), LogicalPlan::OneRowRelation) {
                return lateral_columns(left.clone(), left, &columns, defs, join_type, condition);
            }
            if list.iter().any(is_correlated) {
                return lateral_select_list(left, child, &columns, defs, join_type, condition);
            }
        }
    }
    let (dec, preds) = pull_up_all(&sub, left)?;
    check_correlation(&preds, left, &dec)?;
    if !preds.is_empty() && global_aggregate(&sub, true) {
        if !global_aggregate(&sub, false) {
            return Err(KilnError::unsupported("a correlated LATERAL subquery with an aggregate and HAVING"));
        }
        // One row per outer row: a LeftOuter join, with the values over no rows where they are not NULL.
        let (dec, values, preds) = match count_bug_columns(&dec, &columns)? {
            None => (dec, columns.iter().map(|a| a.expr()).collect(), preds),
            // The plan above reads the columns' ids: the join's copy of the subquery gets new ones.
            Some((fixed, values)) => {
                let (fixed, ids) = crate::sql::fresh_instance(&fixed)?;
                let values = values.into_iter().map(|v| with_ids(v, &ids)).collect::<Result<Vec<_>>>()?;
                let preds = preds.into_iter().map(|v| with_ids(v, &ids)).collect::<Result<Vec<_>>>()?;
                (fixed, values, preds)
            }
        };
        let joined = Arc::new(LogicalPlan::Join { left: left.clone(), right: dec, join_type: JoinType::LeftOuter, condition: Expr::conjunction(preds), using: vec![], hint: Default::default() });
        return lateral_columns(joined, left, &columns, values, join_type, condition);
    }
    let condition = Expr::conjunction(preds.into_iter().chain(condition.cloned()));
    let joined = Arc::new(LogicalPlan::Join { left: left.clone(), right: dec, join_type, condition, using: vec![], hint: Default::default() });
    // The pulled-up predicates' columns leave with a Project.
    let output: Vec<Attribute> = left.output().into_iter().chain(columns).collect();
    if joined.output_ids().into_iter().eq(output.iter().map(|a| a.id)) {
        return Ok(joined);
    }
    Ok(Arc::new(LogicalPlan::Project { list: output.iter().map(|a| a.expr()).collect(), child: joined }))
}

/// A lateral subquery `SELECT <defs> FROM child ...` whose select list reads the left side:
/// the join is with `child`, the condition reads the defs, a Project above computes them (NULL
/// where a left outer join found no row, which a marker column tells).
fn lateral_select_list(left: &Arc<LogicalPlan>, child: &Arc<LogicalPlan>, columns: &[Attribute], defs: Vec<Expr>, join_type: JoinType, condition: Option<&Expr>) -> Result<Arc<LogicalPlan>> {
    let (mut c, preds) = pull_up_all(child, left)?;
    check_correlation(&preds, left, &c)?;
    let substituted = condition.map(|e| substitute_columns(e, columns, &defs)).transpose()?;
    let mut defs = defs;
    if join_type == JoinType::LeftOuter {
        let matched = Expr::lit(ScalarValue::Boolean(true)).alias("matched");
        let mut marker = named_output(&matched).ok_or_else(|| KilnError::internal("alias without an output"))?;
        marker.nullable = true;
        let list = c.output().iter().map(|a| a.expr()).chain([matched]).collect();
        c = Arc::new(LogicalPlan::Project { list, child: c });
        let found = Expr::IsNotNull(Box::new(marker.expr()));
        defs = defs.into_iter().map(|d| Expr::CaseWhen { branches: vec![(found.clone(), d)], else_expr: None, if_form: false }).collect();
    }
    let condition = Expr::conjunction(preds.into_iter().chain(substituted));
    let joined = Arc::new(LogicalPlan::Join { left: left.clone(), right: c, join_type, condition, using: vec![], hint: Default::default() });
    lateral_columns(joined, left, columns, defs, JoinType::Inner, None)
}

/// `e` reading the lateral subquery's `columns` as the expressions `defs`.
fn substitute_columns(e: &Expr, columns: &[Attribute], defs: &[Expr]) -> Result<Expr> {
    e.clone().transform_up(&mut |x| {
        Ok::<_, KilnError>(match &x {
            Expr::Attribute(a) => columns.iter().position(|col| col.id == a.id).map(|i| defs[i].clone()).unwrap_or(x),
            _ => x,
        })
    })
}

/// `e` with its outer references to the columns `local` as plain columns.
fn strip_outer_of(e: &Expr, local: &BTreeSet<ExprId>) -> Result<Expr> {
    e.clone().transform_up(&mut |x| {
        Ok::<_, KilnError>(match x {
            Expr::OuterReference(a) if local.contains(&a.id) => Expr::Attribute(a),
            other => other,
        })
    })
}

/// A lateral join's rows when its subquery's `columns` are `defs`, expressions over `input`
/// (which has `left`'s columns): `left`'s columns and the defs under the columns' ids; the
/// join condition filters (inner) or NULLs the defs where it does not hold (left outer).
fn lateral_columns(input: Arc<LogicalPlan>, left: &LogicalPlan, columns: &[Attribute], defs: Vec<Expr>, join_type: JoinType, condition: Option<&Expr>) -> Result<Arc<LogicalPlan>> {
    let named = |d: Expr, a: &Attribute| match &d {
        Expr::Attribute(b) if b.id == a.id => d,
        _ => Expr::Alias { child: Box::new(d), name: a.name.clone(), id: a.id },
    };
    let mut list: Vec<Expr> = left.output().iter().map(|a| a.expr()).collect();
    match (condition, join_type) {
        (Some(c), JoinType::LeftOuter) => {
            let c = substitute_columns(c, columns, &defs)?;
            list.extend(defs.into_iter().zip(columns).map(|(d, a)| named(Expr::CaseWhen { branches: vec![(c.clone(), d)], else_expr: None, if_form: false }, a)));
            Ok(Arc::new(LogicalPlan::Project { list, child: input }))
        }
        (c, _) => {
            list.extend(defs.into_iter().zip(columns).map(|(d, a)| named(d, a)));
            let project = Arc::new(LogicalPlan::Project { list, child: input });
            Ok(match c {
                Some(c) => Arc::new(LogicalPlan::Filter { condition: c.clone(), child: project }),
                None => project,
            })
        }
    }
}

/// `e` with the attribute ids `ids` maps replaced (a second instance of a plan).
fn with_ids(e: Expr, ids: &std::collections::HashMap<ExprId, ExprId>) -> Result<Expr> {
    e.transform_up(&mut |x| {
        Ok::<_, KilnError>(match x {
            Expr::Attribute(a) => Expr::Attribute(Attribute { id: ids.get(&a.id).copied().unwrap_or(a.id), ..a }),
            other => other,
        })
    })
}

fn correlated(plan: &SubqueryPlan) -> bool {
    !plan.outer_references().is_empty()
}

/// Whether `p` is an aggregate without GROUP BY (under Projects, and a HAVING Filter when
/// `having`): one row, or at most one with a HAVING.
fn global_aggregate(p: &LogicalPlan, having: bool) -> bool {
    match p {
        LogicalPlan::SubqueryAlias { child, .. } | LogicalPlan::Project { child, .. } => global_aggregate(child, having),
        LogicalPlan::Filter { child, .. } if having => global_aggregate(child, having),
        LogicalPlan::Aggregate { grouping, .. } => grouping.is_empty(),
        _ => false,
    }
}

/// A scalar subquery that may return more than one row reads its value through
/// `single_value`, which fails at run time on a second row (per outer row once decorrelated).
fn single_row(plan: SubqueryPlan) -> Result<SubqueryPlan> {
    let p = plan.plan();
    if global_aggregate(p, true) || max_rows(p).is_some_and(|n| n <= 1) {
        return Ok(plan);
    }
    let col = p.output().first().cloned().ok_or_else(|| KilnError::internal("scalar subquery without a column"))?;
    let value = Expr::Aggregate { func: AggFunc::Builtin(AggBuiltin::single_value()), args: vec![col.expr()], distinct: false }.alias(col.name.clone());
    Ok(SubqueryPlan::new(Arc::new(LogicalPlan::Aggregate { grouping: vec![], aggregates: vec![value], child: p.clone() })))
}

/// Spark's count bug (`RewriteCorrelatedScalarSubquery`): an outer row that no group matches
/// gets NULL from the outer join, but the subquery's value over no rows may not be NULL
/// (`count(*)` is 0, `count(*) + 1` is 1). Then the aggregate outputs `true AS alwaysTrue`,
/// and the value becomes `CASE WHEN isnull(alwaysTrue) THEN <value on no rows> ELSE value END`;
/// a HAVING moves into the value (`WHEN havingCondition THEN value`, else NULL).
/// None when the value over no rows is NULL (the outer join is right as it is).
fn count_bug(sub: &Arc<LogicalPlan>, value: &Attribute) -> Result<Option<(Arc<LogicalPlan>, Expr)>> {
    Ok(count_bug_columns(sub, std::slice::from_ref(value))?.and_then(|(sub, mut values)| values.pop().map(|v| (sub, v))))
}

/// `count_bug` for the first `values.len()` columns of `sub` (a lateral subquery's columns):
/// the fixed subquery and each column's value (unchanged where it is NULL over no rows).
pub(super) fn count_bug_columns(sub: &Arc<LogicalPlan>, values: &[Attribute]) -> Result<Option<(Arc<LogicalPlan>, Vec<Expr>)>> {
    let (list, having, agg) = match sub.as_ref() {
        LogicalPlan::Aggregate { .. } => (None, None, sub),
        LogicalPlan::Project { list, child } => match child.as_ref() {
            LogicalPlan::Aggregate { .. } => (Some(list), None, child),
            LogicalPlan::Filter { condition, child: a } if matches!(a.as_ref(), LogicalPlan::Aggregate { .. }) => (Some(list), Some(condition), a),
            _ => return Ok(None),
        },
        LogicalPlan::Filter { condition, child } if matches!(child.as_ref(), LogicalPlan::Aggregate { .. }) => (None, Some(condition), child),
        _ => return Ok(None),
    };
    let LogicalPlan::Aggregate { grouping, aggregates, child } = agg.as_ref() else { return Ok(None) };
    // Each aggregate output over no rows: count is 0, the rest (and grouping columns) NULL.
    let mut empty: Vec<(ExprId, Expr)> = vec![];
    for e in aggregates {
        let Some(a) = named_output(e) else { continue };
        let inner = match e {
            Expr::Alias { child, .. } => child.as_ref().clone(),
            other => other.clone(),
        };
        let v = inner.transform_up(&mut |x| {
            Ok::<_, KilnError>(match &x {
                Expr::Aggregate { func: AggFunc::Count, .. } => Expr::lit(ScalarValue::Int64(0)),
                Expr::Aggregate { func: AggFunc::Builtin(b), .. } if !b.nullable() => Expr::lit(ScalarValue::Int64(0)),
                Expr::Aggregate { .. } | Expr::Attribute(_) => Expr::lit(ScalarValue::Null(x.data_type()?)),
                _ => x,
            })
        })?;
        empty.push((a.id, v));
    }
    let on_empty = |e: &Expr| -> Option<ScalarValue> {
        let e = e.clone().transform_up(&mut |x| {
            Ok::<_, KilnError>(match &x {
                Expr::Attribute(a) => match empty.iter().find(|(id, _)| *id == a.id) {
                    Some((_, v)) => v.clone(),
                    None => Expr::lit(ScalarValue::Null(a.data_type.clone())),
                },
                Expr::Alias { child, .. } => child.as_ref().clone(),
                _ => x,
            })
        });
        e.ok().and_then(|e| evaluate_scalar(&e).ok())
    };
    let results: Vec<Option<ScalarValue>> = values
        .iter()
        .enumerate()
        .map(|(i, value)| match list {
            Some(list) => list.get(i).and_then(on_empty),
            None => on_empty(&value.expr()),
        })
        .map(|r| r.filter(|v| !matches!(v, ScalarValue::Null(_))))
        .collect();
    if results.iter().all(Option::is_none) {
        return Ok(None);
    }
    if let Some(h) = having {
        if on_empty(h) != Some(ScalarValue::Boolean(true)) {
            // No rows fail the HAVING: the subquery is empty, NULL is right.
            return Ok(None);
        }
    }
    let always_true = Expr::lit(ScalarValue::Boolean(true)).alias("alwaysTrue");
    let mut at = named_output(&always_true).ok_or_else(|| KilnError::internal("alias without an output"))?;
    // Read above the outer join, which NULL-extends it.
    at.nullable = true;
    let mut aggregates = aggregates.clone();
    aggregates.push(always_true);
    let new_agg = Arc::new(LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates, child: child.clone() });
    let having_alias = having.map(|h| h.clone().alias("havingCondition"));
    let hv = having_alias.as_ref().and_then(named_output).map(|mut a| {
        a.nullable = true;
        a
    });
    let new_sub = match (list, having_alias) {
        (None, None) => new_agg,
        (list, h) => {
            let mut list = list.cloned().unwrap_or_else(|| agg.output().iter().map(|a| a.expr()).collect());
            list.push(at.expr());
            list.extend(h);
            Arc::new(LogicalPlan::Project { list, child: new_agg })
        }
    };
    let mut out = vec![];
    for (value, result) in values.iter().zip(results) {
        let Some(result) = result else {
            out.push(value.expr());
            continue;
        };
        let mut result = Expr::lit(result);
        if result.data_type()? != value.data_type {
            result = Expr::Cast { child: Box::new(result), to: value.data_type.clone(), zone: None };
        }
        let mut branches = vec![(Expr::IsNull(Box::new(at.expr())), result)];
        let else_expr = match &hv {
            Some(hv) => {
                branches.push((hv.expr(), value.expr()));
                None
            }
            None => Some(Box::new(value.expr())),
        };
        out.push(Expr::CaseWhen { branches, else_expr, if_form: false });
    }
    Ok(Some((new_sub, out)))
}

/// Every column a join condition reads must come from one of its two sides (a subquery
/// correlated to a query two levels out would not).
fn check_correlation(conds: &[Expr], left: &LogicalPlan, right: &LogicalPlan) -> Result<()> {
    let available: BTreeSet<ExprId> = left.output().iter().chain(right.output().iter()).map(|a| a.id).collect();
    for c in conds {
        if c.exists(&|e| matches!(e, Expr::OuterReference(_))) || !c.references().is_subset(&available) {
            return Err(KilnError::unsupported(format!("a subquery correlated to a query more than one level out ({c})")));
        }
    }
    Ok(())
}

/// The subquery's plan, cleaned like the main plan (aliases, DISTINCT, nested subqueries) with
/// its correlated predicates pulled out, and those predicates over plain columns.
fn decorrelate(plan: &SubqueryPlan, outer: &Arc<LogicalPlan>) -> Result<(Arc<LogicalPlan>, Vec<Expr>)> {
    pull_up_all(&prepare(plan)?, outer)
}

/// The subquery's plan cleaned like the main plan (aliases, DISTINCT, nested subqueries).
fn prepare(plan: &SubqueryPlan) -> Result<Arc<LogicalPlan>> {
    let mut p = plan.plan().clone();
    check_mixed_aggregates(&p)?;
    let rules: [&dyn Rule; 9] = [
        &RewriteLateralSubquery,
        &EliminateSubqueryAliases,
        &ReplaceIntersectWithSemiJoin,
        &ReplaceExceptWithAntiJoin,
        &RewriteExceptAll,
        &RewriteIntersectAll,
        &ReplaceDistinctWithAggregate,
        &RewritePredicateSubquery,
        &RewriteCorrelatedScalarSubquery,
    ];
    for rule in rules {
        p = rule.apply(&p)?;
    }
    Ok(p)
}

/// Spark's CheckAnalysis: an aggregate function of the subquery may not read both outer and
/// local columns (`sum(v + outer.i)`).
fn check_mixed_aggregates(plan: &LogicalPlan) -> Result<()> {
    for e in plan.expressions() {
        let mut mixed = None;
        e.visit(&mut |x| {
            if let Expr::Aggregate { args, .. } = x {
                let outer = args.iter().any(is_correlated);
                let local = args.iter().any(|a| a.exists(&|y| matches!(y, Expr::Attribute(_))));
                if outer && local && mixed.is_none() {
                    mixed = Some(x.to_string());
                }
            }
        });
        if let Some(f) = mixed {
            return Err(KilnError::analysis(
                "UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.AGGREGATE_FUNCTION_MIXED_OUTER_LOCAL_REFERENCES",
                format!("Found an aggregate function in a correlated predicate that has both outer and local references, which is not supported: {f}."),
            ));
        }
    }
    plan.children().into_iter().try_for_each(|c| check_mixed_aggregates(c))
}

/// `pull_up`, which must leave no outer reference behind.
fn pull_up_all(p: &Arc<LogicalPlan>, outer: &Arc<LogicalPlan>) -> Result<(Arc<LogicalPlan>, Vec<Expr>)> {
    let (p, preds) = pull_up(p, outer, &mut BTreeSet::new())?;
    if has_outer(&p) {
        return Err(KilnError::unsupported(format!(
            "a correlated subquery whose outer references are not in WHERE conditions kiln can pull up:\n{}",
            p.tree_string()
        )));
    }
    Ok((p, preds))
}

fn is_correlated(e: &Expr) -> bool {
    e.exists(&|x| matches!(x, Expr::OuterReference(_)))
}

pub(super) fn has_outer(plan: &LogicalPlan) -> bool {
    plan.expressions().iter().any(|e| is_correlated(e)) || plan.children().iter().any(|c| has_outer(c))
}

fn strip_outer(e: &Expr) -> Expr {
    let r: std::result::Result<Expr, std::convert::Infallible> = e.clone().transform_up(&mut |x| match x {
        Expr::OuterReference(a) => Ok(Expr::Attribute(a)),
        other => Ok(other),
    });
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// Pulls correlated Filter conjuncts up to the top of `plan`, widening the Projects and
/// Aggregates in between so the columns those conjuncts read stay available. Below an
/// operator they cannot cross, the domain goes down instead (`push_domain`); its columns
/// join `domains`.
fn pull_up(plan: &Arc<LogicalPlan>, outer: &Arc<LogicalPlan>, domains: &mut BTreeSet<ExprId>) -> Result<(Arc<LogicalPlan>, Vec<Expr>)> {
    if !has_outer(plan) {
        return Ok((plan.clone(), vec![]));
    }
    match plan.as_ref() {
        LogicalPlan::Filter { condition, child } => {
            let (c, mut preds) = pull_up(child, outer, domains)?;
            let (correlated, local): (Vec<&Expr>, Vec<&Expr>) = condition.split_conjunction().into_iter().partition(|e| is_correlated(e));
            preds.extend(correlated.into_iter().map(strip_outer));
            let node = match Expr::conjunction(local.into_iter().cloned()) {
                Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: c }),
                None => c,
            };
            Ok((node, preds))
        }
        LogicalPlan::Project { list, child } if !list.iter().any(is_correlated) => {
            let (c, preds) = pull_up(child, outer, domains)?;
            let mut list = list.clone();
            let below: BTreeSet<ExprId> = c.output_ids().into_iter().collect();
            for a in preds.iter().flat_map(|p| p.attributes()) {
                if below.contains(&a.id) && !list.iter().any(|e| named_output(e).is_some_and(|n| n.id == a.id)) {
                    list.push(a.expr());
                }
            }
            Ok((Arc::new(LogicalPlan::Project { list, child: c }), preds))
        }
        LogicalPlan::Aggregate { grouping, aggregates, child } if !grouping.iter().chain(aggregates).any(is_correlated) => {
            let (c, preds) = pull_up(child, outer, domains)?;
            let below: BTreeSet<ExprId> = c.output_ids().into_iter().collect();
            let mut grouping = grouping.clone();
            let mut aggregates = aggregates.clone();
            let keys: Option<Vec<Attribute>> = preds.iter().map(|p| equality_key(p, &below)).collect();
            // single_value fails on a group of two rows: only the groups some outer row reads
            // (the domain's) may be formed.
            let single = aggregates.iter().any(|e| e.exists(&|x| matches!(x, Expr::Aggregate { func: AggFunc::Builtin(b), .. } if b.kind == AggKind::SingleValue)));
            if let Some(keys) = keys.filter(|k| !single || k.iter().all(|a| domains.contains(&a.id))) {
                // `inner = f(outer)` is answered per group: the inner side becomes a key.
                for a in keys {
                    if !grouping.iter().any(|g| matches!(g, Expr::Attribute(b) if b.id == a.id)) {
                        grouping.push(a.expr());
                        aggregates.push(a.expr());
                    }
                }
                return Ok((Arc::new(LogicalPlan::Aggregate { grouping, aggregates, child: c }), preds));
            }
            // Any other correlation (DecorrelateInnerQuery's domain join): the distinct outer
            // values join the input on the predicates, the aggregate groups by them too, and
            // the outer query joins the result on those values (null-safe).
            let (domain, inner_preds, outer_preds) = domain_join(&preds, &below, outer)?;
            let domain_attrs = domain.output();
            let joined = Arc::new(LogicalPlan::Join {
                left: c,
                right: domain,
                join_type: JoinType::Inner,
                condition: Expr::conjunction(inner_preds),
                using: vec![],
                hint: Default::default(),
            });
            for d in domain_attrs {
                grouping.push(d.expr());
                aggregates.push(d.expr());
            }
            Ok((Arc::new(LogicalPlan::Aggregate { grouping, aggregates, child: joined }), outer_preds))
        }
        LogicalPlan::Sort { order, global, child } => {
            let (c, preds) = pull_up(child, outer, domains)?;
            Ok((Arc::new(LogicalPlan::Sort { order: order.clone(), global: *global, child: c }), preds))
        }
        LogicalPlan::Join { left, right, join_type: JoinType::Inner | JoinType::Cross, condition, using, hint } if !condition.as_ref().is_some_and(is_correlated) => {
            let (l, mut preds) = pull_up(left, outer, domains)?;
            let (r, more) = pull_up(right, outer, domains)?;
            preds.extend(more);
            let join_type = if condition.is_some() { JoinType::Inner } else { JoinType::Cross };
            Ok((Arc::new(LogicalPlan::Join { left: l, right: r, join_type, condition: condition.clone(), using: using.clone(), hint: *hint }), preds))
        }
        // DecorrelateInnerQuery's general case: the subquery per distinct outer value.
        _ => {
            let dom = Domain::of(plan, outer)?;
            let (p, d) = push_domain(plan, &dom)?;
            domains.extend(d.iter().map(|a| a.id));
            Ok((p, dom.join_conditions(&d)))
        }
    }
}

/// `inner = f(outer)` or `<=>` (either way round): the inner column, which can become a grouping key.
fn equality_key(p: &Expr, below: &BTreeSet<ExprId>) -> Option<Attribute> {
    let Expr::Binary { op: BinaryOp::Eq | BinaryOp::EqNullSafe, left, right } = p else { return None };
    for (a, b) in [(left, right), (right, left)] {
        if let Expr::Attribute(a) = a.as_ref() {
            if below.contains(&a.id) && b.references().is_disjoint(below) && !b.references().is_empty() {
                return Some(a.clone());
            }
        }
    }
    None
}

/// The domain of correlated predicates `preds` (their outer columns, those not in `below`):
/// `Aggregate [o..], [o AS d, ..]` over the outer plan; the predicates over the domain's
/// columns instead; and `o <=> d` for each, the condition that joins the outer rows back.
fn domain_join(preds: &[Expr], below: &BTreeSet<ExprId>, outer: &Arc<LogicalPlan>) -> Result<(Arc<LogicalPlan>, Vec<Expr>, Vec<Expr>)> {
    let available: BTreeSet<ExprId> = outer.output_ids().into_iter().collect();
    let mut outer_attrs: Vec<Attribute> = vec![];
    for a in preds.iter().flat_map(|p| p.attributes()) {
        if below.contains(&a.id) || outer_attrs.iter().any(|o| o.id == a.id) {
            continue;
        }
        if !available.contains(&a.id) {
            return Err(KilnError::unsupported(format!("a subquery correlated to a query more than one level out ({a})")));
        }
        outer_attrs.push(a);
    }
    let dom = Domain::new(outer_attrs, outer)?;
    let (domain, domain_attrs) = dom.instance()?;
    let to_domain = |e: &Expr| -> Result<Expr> {
        e.clone().transform_up(&mut |x| match &x {
            Expr::Attribute(a) => match dom.outer.iter().position(|o| o.id == a.id) {
                Some(i) => Ok(domain_attrs[i].expr()),
                None => Ok(x),
            },
            _ => Ok(x),
        })
    };
    let inner = preds.iter().map(to_domain).collect::<Result<Vec<_>>>()?;
    Ok((domain, inner, dom.join_conditions(&domain_attrs)))
}
