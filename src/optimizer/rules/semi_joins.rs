//! Moving LeftSemi / LeftAnti joins towards the rows they filter: `PushDownLeftSemiAntiJoin`
//! (below a Project) and `PushLeftSemiLeftAntiThroughJoin` (into one side of a join).
//!
//! ```text
//! Join LeftSemi, (o_orderkey = k)              Join Inner, (o_orderkey = l_orderkey)
//! :- Project [o_orderkey, l_quantity]          :- Join LeftSemi, (o_orderkey = k)
//! :  +- Join Inner, (o_orderkey = l_orderkey)  :  :- orders
//! :     :- orders                          =>  :  +- big_orders
//! :     +- lineitem                            +- lineitem
//! +- big_orders
//! ```
//! kiln rewrites `IN` / `EXISTS` subqueries into these joins before the operator rules run, so
//! the semi join starts above the whole FROM clause (TPC-H Q18: over orders ⋈ lineitem's 6M
//! rows); moved down, it filters orders to 57 rows before they meet lineitem. The rewrite is
//! exact: a row of `orders ⋈ lineitem` has a match in `big_orders` exactly when its orders
//! part has, when the condition reads only orders' and big_orders' columns.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{output_ids, reads_only, substitute_aliases};
use crate::error::Result;
use crate::expr::{Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};

fn semi_or_anti(t: JoinType) -> bool {
    matches!(t, JoinType::LeftSemi | JoinType::LeftAnti)
}

/// Moves a LeftSemi / LeftAnti join below the Project on its left.
pub struct PushDownLeftSemiAntiJoin;

impl Rule for PushDownLeftSemiAntiJoin {
    fn name(&self) -> &'static str {
        "PushDownLeftSemiAntiJoin"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_down(&mut |p| {
            let LogicalPlan::Join { left, right, join_type, condition, using, hint } = p.as_ref() else { return Ok(p) };
            if !semi_or_anti(*join_type) {
                return Ok(p);
            }
            let LogicalPlan::Project { list, child } = left.as_ref() else { return Ok(p) };
            if !list.iter().all(|e| e.deterministic() && !e.contains_subquery()) {
                return Ok(p);
            }
            let condition = condition.as_ref().map(|c| substitute_aliases(c, list));
            // Spark's canPushThroughCondition: the right side must not share a column with the
            // Project's input (a self-join would then read the wrong copy).
            let (below, filter) = (output_ids(child), output_ids(right));
            if condition.as_ref().is_some_and(|c| c.references().iter().any(|id| below.contains(id) && filter.contains(id))) {
                return Ok(p);
            }
            let join = LogicalPlan::Join { left: child.clone(), right: right.clone(), join_type: *join_type, condition, using: using.clone(), hint: *hint };
            Ok(Arc::new(LogicalPlan::Project { list: list.clone(), child: Arc::new(join) }))
        })
    }
}

/// Moves a LeftSemi / LeftAnti join over an inner or outer join into the side its condition
/// reads (Spark's rule of the same name).
pub struct PushLeftSemiLeftAntiThroughJoin;

enum Direction {
    Left,
    Right,
}

/// Where the semi join's `condition` lets it go below `left ⋈ right` (Spark's `pushTo`).
fn direction(child_type: JoinType, left: &LogicalPlan, right: &LogicalPlan, filter: &BTreeSet<ExprId>, condition: Option<&Expr>) -> Option<Direction> {
    let with = |side: &LogicalPlan| -> BTreeSet<ExprId> { output_ids(side).union(filter).copied().collect() };
    let Some(condition) = condition else {
        return match child_type {
            JoinType::Inner | JoinType::Cross | JoinType::LeftOuter => Some(Direction::Left),
            JoinType::RightOuter => Some(Direction::Right),
            _ => None,
        };
    };
    let (l, r) = (with(left), with(right));
    let conjuncts = condition.split_conjunction();
    let (on_left, rest): (Vec<&Expr>, Vec<&Expr>) = conjuncts.into_iter().partition(|c| reads_only(c, &l));
    let (on_right, common): (Vec<&Expr>, Vec<&Expr>) = rest.iter().partition(|c| reads_only(c, &r));
    if rest.is_empty() && !on_left.is_empty() {
        Some(Direction::Left)
    } else if on_left.is_empty() && !on_right.is_empty() && common.is_empty() {
        Some(Direction::Right)
    } else {
        None
    }
}

impl Rule for PushLeftSemiLeftAntiThroughJoin {
    fn name(&self) -> &'static str {
        "PushLeftSemiLeftAntiThroughJoin"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_down(&mut |p| {
            let LogicalPlan::Join { left: child, right: filter, join_type, condition, using, hint } = p.as_ref() else { return Ok(p) };
            if !semi_or_anti(*join_type) {
                return Ok(p);
            }
            let LogicalPlan::Join { left, right, join_type: child_type, condition: child_condition, using: child_using, hint: child_hint } = child.as_ref() else {
                return Ok(p);
            };
            let semi = |side: &Arc<LogicalPlan>| -> Arc<LogicalPlan> {
                Arc::new(LogicalPlan::Join { left: side.clone(), right: filter.clone(), join_type: *join_type, condition: condition.clone(), using: using.clone(), hint: *hint })
            };
            let (new_left, new_right) = match (direction(*child_type, left, right, &output_ids(filter), condition.as_ref()), child_type) {
                (Some(Direction::Left), JoinType::Inner | JoinType::Cross | JoinType::LeftOuter) => (semi(left), right.clone()),
                (Some(Direction::Right), JoinType::Inner | JoinType::Cross | JoinType::RightOuter) => (left.clone(), semi(right)),
                _ => return Ok(p),
            };
            Ok(Arc::new(LogicalPlan::Join {
                left: new_left,
                right: new_right,
                join_type: *child_type,
                condition: child_condition.clone(),
                using: child_using.clone(),
                hint: *child_hint,
            }))
        })
    }
}
