//! `InferFiltersFromConstraints`: a null-intolerant predicate or an equi-join key implies
//! `isnotnull(col)`, which can be evaluated at the scan and pushed to the data source.
//!
//! ```text
//! Filter (status = paid)          =>  Filter (isnotnull(status) AND (status = paid))
//! Join Inner, (o.cid = c.cid)     =>  Join Inner, (o.cid = c.cid)
//! :- orders                           :- Filter isnotnull(o.cid)
//! +- customers                        :  +- orders
//!                                     +- Filter isnotnull(c.cid)
//!                                        +- customers
//! ```
//! Equalities carry constraints across a join: with `a.id = b.id` in the join condition and
//! `a.id > 10` known of the left side, `b.id > 10` holds for every right row that can match,
//! so it filters the right side too.
//!
//! ```text
//! Join Inner, (id#1 = id#2)              Join Inner, (id#1 = id#2)
//! :- Filter (id#1 > 10)              =>  :- Filter (id#1 > 10)
//! :  +- a                                :  +- a
//! +- b                                   +- Filter (isnotnull(id#2) AND (id#2 > 10))
//!                                           +- b
//! ```
//! An outer join only gets filters on its null-supplying side (the preserved side must keep
//! its rows, matched or not); a full outer join gets none. Non-deterministic predicates are
//! never constraints.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::null_intolerant;
use crate::error::Result;
use crate::expr::{Attribute, BinaryOp, Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};

/// Adds `isnotnull` filters implied by predicates and join keys.
pub struct InferFiltersFromConstraints;

impl Rule for InferFiltersFromConstraints {
    fn name(&self) -> &'static str {
        "InferFiltersFromConstraints"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| Ok(infer(&p).unwrap_or(p)))
    }
}

/// Nullable columns that a null-intolerant conjunct of `cond` reads, in order of appearance.
fn implied_not_null(cond: &Expr) -> Vec<Attribute> {
    let mut out: Vec<Attribute> = vec![];
    for c in cond.split_conjunction() {
        let c = match c {
            Expr::IsNotNull(inner) => inner.as_ref(),
            c => c,
        };
        if null_intolerant(c) && c.deterministic() {
            for a in c.attributes() {
                if a.nullable && !out.iter().any(|o| o.id == a.id) {
                    out.push(a);
                }
            }
        }
    }
    out
}

/// Columns already known not to be NULL in `plan`'s output.
fn known_not_null(plan: &LogicalPlan) -> BTreeSet<ExprId> {
    match plan {
        LogicalPlan::Filter { condition, child } => {
            let mut s = known_not_null(child);
            s.extend(implied_not_null(condition).iter().map(|a| a.id));
            s
        }
        LogicalPlan::Project { child, .. } | LogicalPlan::Sort { child, .. } => {
            let out: BTreeSet<ExprId> = plan.output_ids().into_iter().collect();
            known_not_null(child).into_iter().filter(|id| out.contains(id)).collect()
        }
        LogicalPlan::Join { left, right, join_type, .. } => match join_type {
            JoinType::Inner | JoinType::Cross => known_not_null(left).union(&known_not_null(right)).copied().collect(),
            JoinType::LeftSemi | JoinType::LeftAnti | JoinType::LeftOuter => known_not_null(left),
            JoinType::RightOuter => known_not_null(right),
            JoinType::FullOuter => plan.output().iter().filter(|a| !a.nullable).map(|a| a.id).collect(),
        },
        _ => plan.output().iter().filter(|a| !a.nullable).map(|a| a.id).collect(),
    }
}

fn not_null_filter(attrs: Vec<Attribute>, child: &Arc<LogicalPlan>) -> Arc<LogicalPlan> {
    match Expr::conjunction(attrs.into_iter().map(|a| Expr::IsNotNull(Box::new(a.expr())))) {
        Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: child.clone() }),
        None => child.clone(),
    }
}

fn infer(plan: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    match plan.as_ref() {
        LogicalPlan::Filter { condition, child } => {
            let present: BTreeSet<ExprId> = condition
                .split_conjunction()
                .iter()
                .filter_map(|c| match c {
                    Expr::IsNotNull(inner) => match inner.as_ref() {
                        Expr::Attribute(a) => Some(a.id),
                        _ => None,
                    },
                    _ => None,
                })
                .chain(known_not_null(child))
                .collect();
            let new: Vec<Attribute> = implied_not_null(condition).into_iter().filter(|a| !present.contains(&a.id)).collect();
            let inferred = Expr::conjunction(new.into_iter().map(|a| Expr::IsNotNull(Box::new(a.expr()))))?;
            Some(Arc::new(LogicalPlan::Filter { condition: inferred.and(condition.clone()), child: child.clone() }))
        }
        LogicalPlan::Join { left, right, join_type, condition: Some(cond), using, hint } => {
            let (to_left, to_right) = match join_type {
                JoinType::Inner | JoinType::Cross | JoinType::LeftSemi => (true, true),
                JoinType::LeftOuter => (false, true),
                JoinType::RightOuter => (true, false),
                _ => (false, false),
            };
            let implied = implied_not_null(cond);
            let side = |ok: bool, child: &Arc<LogicalPlan>| -> Vec<Attribute> {
                if !ok {
                    return vec![];
                }
                let out: BTreeSet<ExprId> = child.output_ids().into_iter().collect();
                let known = known_not_null(child);
                implied.iter().filter(|a| out.contains(&a.id) && !known.contains(&a.id)).cloned().collect()
            };
            let (l, r) = (side(to_left, left), side(to_right, right));
            let inferred = transferred(&[constraints(left), constraints(right), cond.split_conjunction().into_iter().cloned().collect()].concat(), cond);
            let (li, ri) = (new_for(to_left, left, &inferred), new_for(to_right, right, &inferred));
            if l.is_empty() && r.is_empty() && li.is_empty() && ri.is_empty() {
                return None;
            }
            Some(Arc::new(LogicalPlan::Join {
                left: with_filter(not_null_filter(l, left), li),
                right: with_filter(not_null_filter(r, right), ri),
                join_type: *join_type,
                condition: Some(cond.clone()),
                using: using.clone(),
                hint: *hint,
            }))
        }
        _ => None,
    }
}

/// Catalyst's `hasCorrelatedSubquery`: an uncorrelated scalar subquery is a value like any other.
fn correlated_subquery(e: &Expr) -> bool {
    e.exists(&|x| match x {
        Expr::ScalarSubquery { plan, .. } => !plan.outer_references().is_empty(),
        other => matches!(other, Expr::Exists { .. } | Expr::InSubquery { .. }),
    })
}

/// The deterministic predicates known to hold for every row of `plan`'s output (Catalyst's
/// `constraints`, without the alias bookkeeping).
fn constraints(plan: &LogicalPlan) -> Vec<Expr> {
    let all = match plan {
        LogicalPlan::Filter { condition, child } => {
            let mut v = constraints(child);
            v.extend(condition.split_conjunction().into_iter().filter(|c| c.deterministic() && !correlated_subquery(c)).cloned());
            v
        }
        LogicalPlan::Project { child, .. }
        | LogicalPlan::Sort { child, .. }
        | LogicalPlan::GlobalLimit { child, .. }
        | LogicalPlan::LocalLimit { child, .. }
        | LogicalPlan::Offset { child, .. }
        | LogicalPlan::Aggregate { child, .. } => constraints(child),
        LogicalPlan::Join { left, right, join_type, condition, .. } => match join_type {
            JoinType::Inner | JoinType::Cross | JoinType::LeftSemi => {
                let mut v = [constraints(left), constraints(right)].concat();
                v.extend(condition.iter().flat_map(|c| c.split_conjunction()).filter(|c| c.deterministic()).cloned());
                v
            }
            JoinType::LeftOuter | JoinType::LeftAnti => constraints(left),
            JoinType::RightOuter => constraints(right),
            JoinType::FullOuter => vec![],
        },
        _ => vec![],
    };
    let out: BTreeSet<ExprId> = plan.output_ids().into_iter().collect();
    all.into_iter().filter(|c| !c.references().is_empty() && c.references().is_subset(&out)).collect()
}

/// Predicates that follow from `known` by replacing one side of an `x = y` of the join
/// condition with the other.
fn transferred(known: &[Expr], cond: &Expr) -> Vec<Expr> {
    let equalities: Vec<(Attribute, Attribute)> = cond
        .split_conjunction()
        .into_iter()
        .filter_map(|c| match c {
            Expr::Binary { op: BinaryOp::Eq, left, right } => match (left.as_ref(), right.as_ref()) {
                (Expr::Attribute(a), Expr::Attribute(b)) if a.id != b.id && a.data_type == b.data_type => Some((a.clone(), b.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let mut out: Vec<Expr> = vec![];
    for c in known {
        if matches!(c, Expr::IsNotNull(_)) {
            continue; // the key filters above already infer these
        }
        for (a, b) in &equalities {
            for (from, to) in [(a, b), (b, a)] {
                if !c.references().contains(&from.id) {
                    continue;
                }
                let replaced = replace_attribute(c, from.id, to);
                let trivial = matches!(&replaced, Expr::Binary { op: BinaryOp::Eq, left, right } if left == right);
                if !trivial && !out.contains(&replaced) {
                    out.push(replaced);
                }
            }
        }
    }
    out
}

fn replace_attribute(e: &Expr, from: ExprId, to: &Attribute) -> Expr {
    let r: std::result::Result<Expr, std::convert::Infallible> = e.clone().transform_up(&mut |x| match &x {
        Expr::Attribute(a) if a.id == from => Ok(to.expr()),
        _ => Ok(x),
    });
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// The inferred predicates over `child`'s columns that `child` does not already guarantee.
fn new_for(ok: bool, child: &Arc<LogicalPlan>, inferred: &[Expr]) -> Vec<Expr> {
    if !ok {
        return vec![];
    }
    let out: BTreeSet<ExprId> = child.output_ids().into_iter().collect();
    let known: Vec<String> = constraints(child).iter().map(|c| c.to_string()).collect();
    inferred.iter().filter(|c| c.references().is_subset(&out) && !known.contains(&c.to_string())).cloned().collect()
}

/// `child` under a Filter of `predicates`, merged into the Filter already on top if any.
fn with_filter(child: Arc<LogicalPlan>, predicates: Vec<Expr>) -> Arc<LogicalPlan> {
    let Some(extra) = Expr::conjunction(predicates) else { return child };
    match child.as_ref() {
        LogicalPlan::Filter { condition, child: below } => {
            Arc::new(LogicalPlan::Filter { condition: condition.clone().and(extra), child: below.clone() })
        }
        _ => Arc::new(LogicalPlan::Filter { condition: extra, child }),
    }
}
