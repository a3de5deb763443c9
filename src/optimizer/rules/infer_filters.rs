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
//! An outer join only gets the filter on its null-supplying side (the preserved side must keep
//! its NULL-keyed rows).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::null_intolerant;
use crate::error::Result;
use crate::expr::{Attribute, Expr, ExprId};
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
        LogicalPlan::Project { child, .. } | LogicalPlan::Sort { child, .. } => known_not_null(child),
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
        LogicalPlan::Join { left, right, join_type, condition: Some(cond), using } => {
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
                let out: BTreeSet<ExprId> = child.output().iter().map(|a| a.id).collect();
                let known = known_not_null(child);
                implied.iter().filter(|a| out.contains(&a.id) && !known.contains(&a.id)).cloned().collect()
            };
            let (l, r) = (side(to_left, left), side(to_right, right));
            if l.is_empty() && r.is_empty() {
                return None;
            }
            Some(Arc::new(LogicalPlan::Join {
                left: not_null_filter(l, left),
                right: not_null_filter(r, right),
                join_type: *join_type,
                condition: Some(cond.clone()),
                using: using.clone(),
            }))
        }
        _ => None,
    }
}
