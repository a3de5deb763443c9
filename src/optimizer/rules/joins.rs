//! Join rewrites: `EliminateOuterJoin`.
//!
//! ```text
//! Filter (o.status = paid)             Filter (o.status = paid)
//! +- Join LeftOuter, (c.id = o.cid) => +- Join Inner, (c.id = o.cid)
//! ```
//! A predicate above the join that is false or NULL for a null-extended row of the
//! null-supplying side removes exactly the rows the outer join added, so an inner join
//! gives the same result.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{output_ids, rejects_nulls_of};
use crate::error::Result;
use crate::expr::ExprId;
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};

/// Turns outer joins into inner (or one-sided) joins under null-rejecting filters.
pub struct EliminateOuterJoin;

impl Rule for EliminateOuterJoin {
    fn name(&self) -> &'static str {
        "EliminateOuterJoin"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| {
            let LogicalPlan::Filter { condition, child } = p.as_ref() else { return Ok(p) };
            let LogicalPlan::Join { left, right, join_type, condition: jc, using, hint } = child.as_ref() else { return Ok(p) };
            let (l, r): (BTreeSet<ExprId>, BTreeSet<ExprId>) = (output_ids(left), output_ids(right));
            let (left_rejected, right_rejected) = (rejects_nulls_of(condition, &l), rejects_nulls_of(condition, &r));
            let new_type = match join_type {
                JoinType::LeftOuter if right_rejected => JoinType::Inner,
                JoinType::RightOuter if left_rejected => JoinType::Inner,
                JoinType::FullOuter if left_rejected && right_rejected => JoinType::Inner,
                JoinType::FullOuter if left_rejected => JoinType::LeftOuter,
                JoinType::FullOuter if right_rejected => JoinType::RightOuter,
                _ => return Ok(p),
            };
            let join = LogicalPlan::Join { left: left.clone(), right: right.clone(), join_type: new_type, condition: jc.clone(), using: using.clone(), hint: *hint };
            Ok(Arc::new(LogicalPlan::Filter { condition: condition.clone(), child: Arc::new(join) }))
        })
    }
}
