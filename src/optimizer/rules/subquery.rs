//! Subquery expressions become joins: `RewritePredicateSubquery` (IN / EXISTS and their
//! negations in a WHERE conjunct -> LeftSemi / LeftAnti joins) and
//! `RewriteCorrelatedScalarSubquery` (a scalar subquery -> a LeftOuter join with a one-row or
//! per-key aggregate). Correlated predicates (those reading `outer(..)` columns) are pulled out
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
//! Not supported (a clear error instead): a subquery under OR or inside another expression in
//! a WHERE clause; a correlated scalar subquery that is not an aggregate, or whose aggregate is
//! not NULL on no rows (count); an uncorrelated scalar subquery that may return more than one
//! row; correlation below a Limit or an outer join, or to a query two levels out.
//! These rules run before the operator optimizations, which do not look into subqueries.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::finish_analysis::{EliminateSubqueryAliases, ReplaceDistinctWithAggregate};
use super::set_operations::{ReplaceExceptWithAntiJoin, ReplaceIntersectWithSemiJoin, RewriteExceptAll, RewriteIntersectAll};
use super::limits::max_rows;
use crate::error::{KilnError, Result};
use crate::expr::{AggFunc, Attribute, BinaryOp, Expr, ExprId, SubqueryPlan};
use crate::optimizer::Rule;
use crate::plan::{named_output, JoinType, LogicalPlan};

/// IN / EXISTS (and NOT IN / NOT EXISTS) conjuncts of a Filter become semi / anti joins.
pub struct RewritePredicateSubquery;

impl Rule for RewritePredicateSubquery {
    fn name(&self) -> &'static str {
        "RewritePredicateSubquery"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| {
            let LogicalPlan::Filter { condition, child } = p.as_ref() else { return Ok(p) };
            if !condition.exists(&|e| matches!(e, Expr::Exists { .. } | Expr::InSubquery { .. })) {
                return Ok(p);
            }
            let (with, without): (Vec<&Expr>, Vec<&Expr>) =
                condition.split_conjunction().into_iter().partition(|c| c.exists(&|e| matches!(e, Expr::Exists { .. } | Expr::InSubquery { .. })));
            // As Catalyst: the other conjuncts filter first, the joins go on top.
            let mut cur = match Expr::conjunction(without.into_iter().cloned()) {
                Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: child.clone() }),
                None => child.clone(),
            };
            for c in with {
                let (negated, inner) = match c {
                    Expr::Not(inner) => (true, inner.as_ref()),
                    other => (false, other),
                };
                let (plan, value) = match inner {
                    Expr::Exists { plan, .. } => (plan, None),
                    Expr::InSubquery { child, plan, .. } => (plan, Some(child.as_ref())),
                    _ => return Err(unsupported_position(c)),
                };
                let (sub, preds) = decorrelate(plan)?;
                let mut conds = vec![];
                if let Some(v) = value {
                    let col = sub.output().first().cloned().ok_or_else(|| KilnError::internal("IN subquery without a column"))?;
                    let eq = v.clone().binary(BinaryOp::Eq, col.expr());
                    conds.push(if negated { eq.clone().binary(BinaryOp::Or, Expr::IsNull(Box::new(eq))) } else { eq });
                }
                conds.extend(preds);
                check_correlation(&conds, &cur, &sub)?;
                let join_type = if negated { JoinType::LeftAnti } else { JoinType::LeftSemi };
                cur = Arc::new(LogicalPlan::Join { left: cur, right: sub, join_type, condition: Expr::conjunction(conds), using: vec![], hint: Default::default() });
            }
            Ok(cur)
        })
    }
}

fn unsupported_position(c: &Expr) -> KilnError {
    KilnError::unsupported(format!(
        "subquery inside another expression in a WHERE clause ({c}); kiln plans [NOT] IN / [NOT] EXISTS only as a top-level AND-ed condition"
    ))
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
                    if p.expressions().iter().any(|e| e.exists(&|x| matches!(x, Expr::ScalarSubquery { .. }))) {
                        return Err(KilnError::unsupported(format!("scalar subquery in `{}` (only in WHERE, HAVING or a SELECT list)", p.node_string())));
                    }
                    return Ok(p);
                }
            };
            let mut subqueries: Vec<(ExprId, SubqueryPlan)> = vec![];
            for e in p.expressions() {
                e.visit(&mut |x| {
                    if let Expr::ScalarSubquery { plan, id } = x {
                        if !subqueries.iter().any(|(i, _)| i == id) {
                            subqueries.push((*id, plan.clone()));
                        }
                    }
                });
            }
            if subqueries.is_empty() {
                return Ok(p);
            }
            let mut cur = child.clone();
            let mut values: Vec<(ExprId, Attribute)> = vec![];
            for (id, plan) in subqueries {
                let (sub, preds) = decorrelate(&plan)?;
                let value = sub.output().first().cloned().ok_or_else(|| KilnError::internal("scalar subquery without a column"))?;
                if preds.is_empty() {
                    if max_rows(&sub).is_none_or(|n| n > 1) {
                        return Err(KilnError::unsupported(
                            "a scalar subquery that may return more than one row (kiln needs an aggregate without GROUP BY or LIMIT 1, as it cannot check the row count at run time)",
                        ));
                    }
                } else {
                    check_count_bug(&sub)?;
                }
                check_correlation(&preds, &cur, &sub)?;
                cur = Arc::new(LogicalPlan::Join { left: cur, right: sub, join_type: JoinType::LeftOuter, condition: Expr::conjunction(preds), using: vec![], hint: Default::default() });
                values.push((id, value));
            }
            let replace = |e: Expr| -> Result<Expr> {
                e.transform_up(&mut |x| match &x {
                    Expr::ScalarSubquery { id, .. } => match values.iter().find(|(i, _)| i == id) {
                        Some((_, a)) => Ok(a.expr()),
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

/// A correlated aggregate that is not NULL over no rows (count) would need Spark's
/// "count bug" handling; kiln refuses it.
fn check_count_bug(sub: &LogicalPlan) -> Result<()> {
    let aggregates = match sub {
        LogicalPlan::Aggregate { aggregates, .. } => aggregates,
        LogicalPlan::Project { child, .. } => match child.as_ref() {
            LogicalPlan::Aggregate { aggregates, .. } => aggregates,
            _ => return Err(not_aggregated()),
        },
        _ => return Err(not_aggregated()),
    };
    if aggregates.iter().any(|e| e.exists(&|x| matches!(x, Expr::Aggregate { func: AggFunc::Count, .. }))) {
        return Err(KilnError::unsupported("a correlated scalar subquery with count(): its value on no matching rows is 0, not NULL"));
    }
    Ok(())
}

fn not_aggregated() -> KilnError {
    KilnError::analysis(
        "UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY.MUST_AGGREGATE_CORRELATED_SCALAR_SUBQUERY",
        "Correlated scalar subqueries must be aggregated to return at most one row.",
    )
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
fn decorrelate(plan: &SubqueryPlan) -> Result<(Arc<LogicalPlan>, Vec<Expr>)> {
    let mut p = plan.0.clone();
    let rules: [&dyn Rule; 8] = [
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
    let (p, preds) = pull_up(&p)?;
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

fn has_outer(plan: &LogicalPlan) -> bool {
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
/// Aggregates in between so the columns those conjuncts read stay available.
fn pull_up(plan: &Arc<LogicalPlan>) -> Result<(Arc<LogicalPlan>, Vec<Expr>)> {
    if !has_outer(plan) {
        return Ok((plan.clone(), vec![]));
    }
    match plan.as_ref() {
        LogicalPlan::Filter { condition, child } => {
            let (c, mut preds) = pull_up(child)?;
            let (correlated, local): (Vec<&Expr>, Vec<&Expr>) = condition.split_conjunction().into_iter().partition(|e| is_correlated(e));
            preds.extend(correlated.into_iter().map(strip_outer));
            let node = match Expr::conjunction(local.into_iter().cloned()) {
                Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: c }),
                None => c,
            };
            Ok((node, preds))
        }
        LogicalPlan::Project { list, child } if !list.iter().any(is_correlated) => {
            let (c, preds) = pull_up(child)?;
            let mut list = list.clone();
            let below: BTreeSet<ExprId> = c.output().iter().map(|a| a.id).collect();
            for a in preds.iter().flat_map(|p| p.attributes()) {
                if below.contains(&a.id) && !list.iter().any(|e| named_output(e).is_some_and(|n| n.id == a.id)) {
                    list.push(a.expr());
                }
            }
            Ok((Arc::new(LogicalPlan::Project { list, child: c }), preds))
        }
        LogicalPlan::Aggregate { grouping, aggregates, child } if !grouping.iter().chain(aggregates).any(is_correlated) => {
            let (c, preds) = pull_up(child)?;
            let below: BTreeSet<ExprId> = c.output().iter().map(|a| a.id).collect();
            let mut grouping = grouping.clone();
            let mut aggregates = aggregates.clone();
            for p in &preds {
                // Only `inner = outer` can be answered per group: the inner side becomes a key.
                let Expr::Binary { op: BinaryOp::Eq, left, right } = p else {
                    return Err(KilnError::unsupported(format!("correlated predicate {p} under an aggregate (only equalities)")));
                };
                for side in [left, right] {
                    if let Expr::Attribute(a) = side.as_ref() {
                        if below.contains(&a.id) && !grouping.iter().any(|g| matches!(g, Expr::Attribute(b) if b.id == a.id)) {
                            grouping.push(a.expr());
                            aggregates.push(a.expr());
                        }
                    }
                }
            }
            Ok((Arc::new(LogicalPlan::Aggregate { grouping, aggregates, child: c }), preds))
        }
        LogicalPlan::Sort { order, global, child } => {
            let (c, preds) = pull_up(child)?;
            Ok((Arc::new(LogicalPlan::Sort { order: order.clone(), global: *global, child: c }), preds))
        }
        LogicalPlan::Join { left, right, join_type: JoinType::Inner | JoinType::Cross, condition, using, hint } if !condition.as_ref().is_some_and(is_correlated) => {
            let (l, mut preds) = pull_up(left)?;
            let (r, more) = pull_up(right)?;
            preds.extend(more);
            let join_type = if condition.is_some() { JoinType::Inner } else { JoinType::Cross };
            Ok((Arc::new(LogicalPlan::Join { left: l, right: r, join_type, condition: condition.clone(), using: using.clone(), hint: *hint }), preds))
        }
        other => Err(KilnError::unsupported(format!("a correlated subquery with outer references below `{}`", other.node_string()))),
    }
}
