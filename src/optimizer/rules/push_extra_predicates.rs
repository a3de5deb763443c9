//! `PushExtraPredicateThroughJoin`: a join condition that reads both sides may still imply a
//! filter on one of them, found inside its disjunctions. TPC-H Q7's
//!
//! ```text
//! Join Inner, ... AND (((n1 = FRANCE) AND (n2 = GERMANY)) OR ((n1 = GERMANY) AND (n2 = FRANCE)))
//! ```
//! keeps its condition and also filters each nation scan by `(n = FRANCE) OR (n = GERMANY)`.
//!
//! Spark tags a join once processed; kiln runs the rule in a batch of its own, once, and skips a
//! predicate its side's Filter already holds, so a second run changes nothing.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{output_ids, reads_only};
use crate::error::Result;
use crate::expr::{BinaryOp, Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};

/// Pushes the one-side parts of a join condition's disjunctions below the join.
pub struct PushExtraPredicateThroughJoin;

impl Rule for PushExtraPredicateThroughJoin {
    fn name(&self) -> &'static str {
        "PushExtraPredicateThroughJoin"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| {
            let LogicalPlan::Join { left, right, join_type, condition: Some(condition), using, hint } = p.as_ref() else { return Ok(p) };
            // Which sides a join condition may filter (Spark's canPushThrough for conditions).
            let (push_left, push_right) = match join_type {
                JoinType::Inner | JoinType::Cross | JoinType::LeftSemi => (true, true),
                JoinType::LeftOuter | JoinType::LeftAnti => (false, true),
                JoinType::RightOuter => (true, false),
                JoinType::FullOuter => (false, false),
            };
            let new_left = if push_left { with_extra_filter(condition, left) } else { None };
            let new_right = if push_right { with_extra_filter(condition, right) } else { None };
            if new_left.is_none() && new_right.is_none() {
                return Ok(p);
            }
            Ok(Arc::new(LogicalPlan::Join {
                left: new_left.unwrap_or_else(|| left.clone()),
                right: new_right.unwrap_or_else(|| right.clone()),
                join_type: *join_type,
                condition: Some(condition.clone()),
                using: using.clone(),
                hint: *hint,
            }))
        })
    }
}

/// `side` under a Filter of what `condition` implies about it, or None when it implies
/// nothing new (only conditions that read both sides are looked into: the rest was pushed).
fn with_extra_filter(condition: &Expr, side: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    let out = output_ids(side);
    let existing: Vec<&Expr> = match side.as_ref() {
        LogicalPlan::Filter { condition, .. } => condition.split_conjunction(),
        _ => vec![],
    };
    let extra: Vec<Expr> = condition
        .split_conjunction()
        .into_iter()
        .filter(|c| !reads_only(c, &out))
        .filter_map(|c| within(c, &out))
        .filter(|e| !existing.contains(&e))
        .collect();
    let extra = Expr::conjunction(extra)?;
    Some(Arc::new(LogicalPlan::Filter { condition: extra, child: side.clone() }))
}

/// Spark's `extractPredicatesWithinOutputSet`: the weakest predicate over `out` that `e`
/// implies, from its AND/OR structure; None when there is none.
fn within(e: &Expr, out: &BTreeSet<ExprId>) -> Option<Expr> {
    match e {
        Expr::Binary { op: BinaryOp::And, left, right } => match (within(left, out), within(right, out)) {
            (Some(l), Some(r)) => Some(l.and(r)),
            (one, other) => one.or(other),
        },
        Expr::Binary { op: BinaryOp::Or, left, right } => Some(within(left, out)?.binary(BinaryOp::Or, within(right, out)?)),
        other if other.deterministic() && reads_only(other, out) => Some(other.clone()),
        _ => None,
    }
}
