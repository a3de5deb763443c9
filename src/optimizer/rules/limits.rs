//! `LimitPushDown`: a `LocalLimit` is copied below a Union into every input, and below a Join
//! into the side whose every row reaches the output (the preserved side of an outer join;
//! both sides of a cross join without a condition). A Project between the limit and the join
//! does not stop it. A recursive CTE's loop takes the limit as its own (it stops early).
//!
//! ```text
//! LocalLimit 10                        LocalLimit 10
//! +- Join LeftOuter, (a = b)      =>   +- Join LeftOuter, (a = b)
//!    :- Relation t[a]                     :- LocalLimit 10
//!    +- Relation u[b]                     :  +- Relation t[a]
//!                                         +- Relation u[b]
//! ```
//! Must not fire: into the null-supplying side of an outer join or either side of an inner
//! join with a condition (the join may drop the rows the limit kept); below a Sort (the limit
//! would keep arbitrary rows instead of the first ones: the limit stays above the Sort); into
//! an input that already returns no more rows than the limit.

use std::sync::Arc;

use crate::error::Result;
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};

/// Pushes local limits into unions and the preserved sides of joins.
pub struct LimitPushDown;

impl Rule for LimitPushDown {
    fn name(&self) -> &'static str {
        "LimitPushDown"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_down(&mut |p| Ok(push(&p).unwrap_or(p)))
    }
}

/// The most rows `plan` can return, when known (Catalyst's `maxRows`).
pub(crate) fn max_rows(plan: &LogicalPlan) -> Option<usize> {
    match plan {
        LogicalPlan::GlobalLimit { limit, child } | LogicalPlan::LocalLimit { limit, child } => {
            Some(max_rows(child).map_or(*limit, |m| m.min(*limit)))
        }
        LogicalPlan::Offset { offset, child } => max_rows(child).map(|m| m.saturating_sub(*offset)),
        LogicalPlan::LocalRelation { data, .. } => Some(data.iter().map(|b| b.num_rows()).sum()),
        LogicalPlan::OneRowRelation => Some(1),
        LogicalPlan::Aggregate { grouping, child, .. } => if grouping.is_empty() { Some(1) } else { max_rows(child) },
        LogicalPlan::Project { child, .. }
        | LogicalPlan::Filter { child, .. }
        | LogicalPlan::Sort { child, .. }
        | LogicalPlan::SubqueryAlias { child, .. }
        | LogicalPlan::Distinct { child } => max_rows(child),
        LogicalPlan::Union { children } => children.iter().map(|c| max_rows(c)).sum(),
        LogicalPlan::Join { left, join_type: JoinType::LeftSemi | JoinType::LeftAnti, .. } => max_rows(left),
        _ => None,
    }
}

/// `LocalLimit(limit, plan)` unless `plan` already returns at most `limit` rows.
fn limited(limit: usize, plan: &Arc<LogicalPlan>) -> Arc<LogicalPlan> {
    if max_rows(plan).is_some_and(|m| m <= limit) {
        return plan.clone();
    }
    let child = match plan.as_ref() {
        LogicalPlan::GlobalLimit { child, .. } => child.clone(),
        _ => plan.clone(),
    };
    Arc::new(LogicalPlan::LocalLimit { limit, child })
}

/// The join with the limit copied into the sides where every row reaches the output.
fn through_join(limit: usize, join: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    let LogicalPlan::Join { left, right, join_type, condition, using, hint } = join.as_ref() else { return None };
    let (new_left, new_right) = match (join_type, condition) {
        (JoinType::LeftOuter, _) => (limited(limit, left), right.clone()),
        (JoinType::RightOuter, _) => (left.clone(), limited(limit, right)),
        (JoinType::Inner | JoinType::Cross, None) => (limited(limit, left), limited(limit, right)),
        (JoinType::LeftSemi | JoinType::LeftAnti, None) => (limited(limit, left), right.clone()),
        _ => return None,
    };
    if Arc::ptr_eq(&new_left, left) && Arc::ptr_eq(&new_right, right) {
        return None;
    }
    Some(Arc::new(LogicalPlan::Join { left: new_left, right: new_right, join_type: *join_type, condition: condition.clone(), using: using.clone(), hint: *hint }))
}

/// A recursive CTE's loop that stops once it has `limit` rows (Spark pushes the limit into
/// UnionLoop, so `SELECT * FROM t LIMIT 5` ends even when the recursion would not).
fn into_loop(limit: usize, lp: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    let LogicalPlan::UnionLoop { id, anchor, recursion, output, limit: old } = lp.as_ref() else { return None };
    if old.is_some_and(|o| o <= limit) {
        return None;
    }
    Some(Arc::new(LogicalPlan::UnionLoop { id: *id, anchor: anchor.clone(), recursion: recursion.clone(), output: output.clone(), limit: Some(limit) }))
}

fn push(plan: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    let LogicalPlan::LocalLimit { limit, child } = plan.as_ref() else { return None };
    let new_child = match child.as_ref() {
        LogicalPlan::Union { children } => {
            let inputs: Vec<Arc<LogicalPlan>> = children.iter().map(|c| limited(*limit, c)).collect();
            if inputs.iter().zip(children).all(|(n, o)| Arc::ptr_eq(n, o)) {
                return None;
            }
            Arc::new(LogicalPlan::Union { children: inputs })
        }
        LogicalPlan::Join { .. } => through_join(*limit, child)?,
        LogicalPlan::Project { list, child: join } if matches!(join.as_ref(), LogicalPlan::Join { .. }) => {
            Arc::new(LogicalPlan::Project { list: list.clone(), child: through_join(*limit, join)? })
        }
        LogicalPlan::UnionLoop { .. } => into_loop(*limit, child)?,
        LogicalPlan::Project { list, child: lp } if matches!(lp.as_ref(), LogicalPlan::UnionLoop { .. }) => {
            Arc::new(LogicalPlan::Project { list: list.clone(), child: into_loop(*limit, lp)? })
        }
        _ => return None,
    };
    Some(Arc::new(LogicalPlan::LocalLimit { limit: *limit, child: new_child }))
}
