//! `EliminateSorts`: a sort whose order nothing can observe is removed.
//!
//! ```text
//! Aggregate [k], [k, sum(v)]              Aggregate [k], [k, sum(v)]
//! +- Sort [v ASC NULLS FIRST], true   =>  +- Relation t[k,v]
//!    +- Relation t[k,v]
//!
//! Sort [a ASC], true                      Sort [a ASC], true
//! +- Project [a, b]                   =>  +- Project [a, b]
//!    +- Sort [b DESC], true                  +- Relation t[a,b]
//!       +- Relation t[a,b]
//! ```
//! Also: keys that are constants (`ORDER BY 1 + 1`, literals after folding) are dropped, and a
//! sort with no key left goes. Under a Join the input order is not observable either.
//! Must not fire: a Sort under a Limit (`ORDER BY .. LIMIT n` keeps the first n rows: the
//! order decides which), or at the top of the query; nor through a non-deterministic Project
//! or Filter (rand() would see the rows in another order).

use std::sync::Arc;

use crate::error::Result;
use crate::expr::Expr;
use crate::optimizer::Rule;
use crate::plan::LogicalPlan;

/// Removes sorts whose order is not observable.
pub struct EliminateSorts;

impl Rule for EliminateSorts {
    fn name(&self) -> &'static str {
        "EliminateSorts"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| Ok(eliminate(&p).unwrap_or(p)))
    }
}

/// `plan` without the sorts directly below it (looking through deterministic Projects and
/// Filters). `global`: the caller orders everything, so a lower global sort may go too.
fn remove_sorts(plan: &Arc<LogicalPlan>, global: bool) -> Arc<LogicalPlan> {
    match plan.as_ref() {
        LogicalPlan::Sort { global: g, child, .. } if global || !*g => remove_sorts(child, global),
        LogicalPlan::Project { list, child } if list.iter().all(Expr::deterministic) => {
            let c = remove_sorts(child, global);
            if Arc::ptr_eq(&c, child) { plan.clone() } else { Arc::new(LogicalPlan::Project { list: list.clone(), child: c }) }
        }
        LogicalPlan::Filter { condition, child } if condition.deterministic() => {
            let c = remove_sorts(child, global);
            if Arc::ptr_eq(&c, child) { plan.clone() } else { Arc::new(LogicalPlan::Filter { condition: condition.clone(), child: c }) }
        }
        _ => plan.clone(),
    }
}

fn eliminate(plan: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    match plan.as_ref() {
        LogicalPlan::Sort { order, child, .. } if order.iter().any(|o| o.expr.foldable()) => {
            let kept: Vec<_> = order.iter().filter(|o| !o.expr.foldable()).cloned().collect();
            if kept.is_empty() {
                return Some(child.clone());
            }
            Some(Arc::new(LogicalPlan::Sort { order: kept, global: matches!(plan.as_ref(), LogicalPlan::Sort { global: true, .. }), child: child.clone() }))
        }
        LogicalPlan::Sort { order, global, child } => {
            let c = remove_sorts(child, *global);
            (!Arc::ptr_eq(&c, child)).then(|| Arc::new(LogicalPlan::Sort { order: order.clone(), global: *global, child: c }))
        }
        // count, sum, avg, min and max do not depend on the order of their input.
        LogicalPlan::Aggregate { grouping, aggregates, child } => {
            let c = remove_sorts(child, true);
            (!Arc::ptr_eq(&c, child)).then(|| Arc::new(LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: aggregates.clone(), child: c }))
        }
        LogicalPlan::Join { left, right, join_type, condition, using, hint } if condition.as_ref().is_none_or(Expr::deterministic) => {
            let (l, r) = (remove_sorts(left, true), remove_sorts(right, true));
            (!Arc::ptr_eq(&l, left) || !Arc::ptr_eq(&r, right)).then(|| {
                Arc::new(LogicalPlan::Join { left: l, right: r, join_type: *join_type, condition: condition.clone(), using: using.clone(), hint: *hint })
            })
        }
        _ => None,
    }
}
