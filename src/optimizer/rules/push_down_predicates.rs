//! Predicate pushdown: `CombineFilters`, `PushPredicateThroughNonJoin` and
//! `PushPredicateThroughJoin`, chained as Catalyst's `PushDownPredicates` in one pass.
//!
//! ```text
//! Filter (status = paid)                 Project [customer_id, amount]
//! +- Project [customer_id, amount,   =>  +- Filter (status = paid)
//!             status]                       +- Relation orders[...]
//!    +- Relation orders[...]
//! ```
//! A Filter over a Union goes into every input, each reading its own columns in the union's
//! place; conjuncts of a Filter over a Generate that read none of the generated columns go
//! below it.
//!
//! Where a predicate must NOT move: it is non-deterministic (rand()); it would cross a Limit
//! (the Limit picks rows before the filter sees them: `Filter` over `GlobalLimit` stays);
//! it filters the null-supplying side of an outer join from above (that changes which rows
//! are null-extended); it reads an aggregate result (it stays above the Aggregate).

use std::sync::Arc;

use super::{output_ids, reads_only, substitute_aliases};
use crate::error::Result;
use crate::expr::Expr;
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};

/// Pushes filters down towards the scans.
pub struct PushDownPredicates;

impl Rule for PushDownPredicates {
    fn name(&self) -> &'static str {
        "PushDownPredicates"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_down(&mut |p| Ok(rewrite_node(&p).unwrap_or(p)))
    }
}

/// One step of pushdown at this node, or None when nothing applies.
pub fn rewrite_node(plan: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    match plan.as_ref() {
        LogicalPlan::Filter { condition, child } => push_filter(condition, child),
        LogicalPlan::Join { .. } => push_join_condition(plan),
        _ => None,
    }
}

fn filter(condition: Option<Expr>, child: Arc<LogicalPlan>) -> Arc<LogicalPlan> {
    match condition {
        Some(condition) => Arc::new(LogicalPlan::Filter { condition, child }),
        None => child,
    }
}

fn references_within(e: &Expr, plan: &LogicalPlan) -> bool {
    reads_only(e, &output_ids(plan))
}

fn push_filter(condition: &Expr, child: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    match child.as_ref() {
        // CombineFilters: the lower condition first, as Catalyst's And(nc, fc).
        LogicalPlan::Filter { condition: lower, child: grandchild } if lower.deterministic() => {
            Some(filter(Some(lower.clone().and(condition.clone())), grandchild.clone()))
        }
        LogicalPlan::Project { list, child: grandchild } if list.iter().all(|e| e.deterministic()) && condition.deterministic() => {
            let pushed = substitute_aliases(condition, list);
            Some(Arc::new(LogicalPlan::Project { list: list.clone(), child: filter(Some(pushed), grandchild.clone()) }))
        }
        LogicalPlan::Sort { order, global, child: grandchild } if condition.deterministic() => Some(Arc::new(LogicalPlan::Sort {
            order: order.clone(),
            global: *global,
            child: filter(Some(condition.clone()), grandchild.clone()),
        })),
        // Spark's canPushThrough: a repartition changes where rows go, not which rows there are.
        LogicalPlan::Repartition { scheme, child: grandchild } if condition.deterministic() => {
            Some(Arc::new(LogicalPlan::Repartition { scheme: scheme.clone(), child: filter(Some(condition.clone()), grandchild.clone()) }))
        }
        // A global aggregate gives one row even over no input: a filter above it (HAVING 1 = 0)
        // must stay there (Spark's guard: grouping expressions non-empty).
        LogicalPlan::Aggregate { grouping, aggregates, child: grandchild } if !grouping.is_empty() => {
            // Only conjuncts over grouping columns cross an Aggregate.
            let grouping_ids: Vec<_> = grouping
                .iter()
                .filter_map(|g| match g {
                    Expr::Attribute(a) => Some(a.id),
                    _ => None,
                })
                .collect();
            let (push, stay): (Vec<&Expr>, Vec<&Expr>) = condition.split_conjunction().into_iter().partition(|c| {
                let c = substitute_aliases(c, aggregates);
                c.deterministic() && !c.contains_aggregate() && c.references().iter().all(|id| grouping_ids.contains(id))
            });
            if push.is_empty() {
                return None;
            }
            let pushed = Expr::conjunction(push.into_iter().map(|c| substitute_aliases(c, aggregates)));
            let agg = Arc::new(LogicalPlan::Aggregate {
                grouping: grouping.clone(),
                aggregates: aggregates.clone(),
                child: filter(pushed, grandchild.clone()),
            });
            Some(filter(Expr::conjunction(stay.into_iter().cloned()), agg))
        }
        // Conjuncts over the child's columns filter its rows before they are generated from.
        LogicalPlan::Generate { generator, child: grandchild, .. } if generator.args.iter().all(|a| a.deterministic()) => {
            let (push, stay): (Vec<&Expr>, Vec<&Expr>) =
                condition.split_conjunction().into_iter().partition(|c| c.deterministic() && references_within(c, grandchild));
            let pushed = Expr::conjunction(push.into_iter().cloned())?;
            let generate = Arc::new(child.with_new_children(vec![filter(Some(pushed), grandchild.clone())]));
            Some(filter(Expr::conjunction(stay.into_iter().cloned()), generate))
        }
        LogicalPlan::Union { children } => {
            let (push, stay): (Vec<&Expr>, Vec<&Expr>) = condition.split_conjunction().into_iter().partition(|c| c.deterministic());
            let pushed = Expr::conjunction(push.into_iter().cloned())?;
            let union_output = child.output();
            let inputs = children
                .iter()
                .map(|c| {
                    let rewrites = super::unions::union_rewrites(&union_output, c);
                    filter(Some(super::unions::rewrite_for_input(&pushed, &rewrites)), c.clone())
                })
                .collect();
            Some(filter(Expr::conjunction(stay.into_iter().cloned()), Arc::new(LogicalPlan::Union { children: inputs })))
        }
        LogicalPlan::Join { left, right, join_type, condition: join_cond, using, hint } => {
            let (mut to_left, mut to_right, mut to_join, mut stay) = (vec![], vec![], vec![], vec![]);
            for c in condition.split_conjunction() {
                if !c.deterministic() {
                    stay.push(c.clone());
                } else if references_within(c, left) {
                    to_left.push(c.clone());
                } else if references_within(c, right) {
                    to_right.push(c.clone());
                } else {
                    to_join.push(c.clone());
                }
            }
            // A filter above an outer join may only enter the preserved side.
            let (left_ok, right_ok, join_ok) = match join_type {
                JoinType::Inner | JoinType::Cross => (true, true, true),
                JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti => (true, false, false),
                JoinType::RightOuter => (false, true, false),
                JoinType::FullOuter => (false, false, false),
            };
            if !left_ok {
                stay.append(&mut to_left);
            }
            if !right_ok {
                stay.append(&mut to_right);
            }
            if !join_ok {
                stay.append(&mut to_join);
            }
            if to_left.is_empty() && to_right.is_empty() && to_join.is_empty() {
                return None;
            }
            let new_cond = Expr::conjunction(join_cond.iter().cloned().chain(to_join));
            let join_type = if *join_type == JoinType::Cross && new_cond.is_some() { JoinType::Inner } else { *join_type };
            let join = Arc::new(LogicalPlan::Join {
                left: filter(Expr::conjunction(to_left), left.clone()),
                right: filter(Expr::conjunction(to_right), right.clone()),
                join_type,
                condition: new_cond,
                using: using.clone(),
                hint: *hint,
            });
            Some(filter(Expr::conjunction(stay), join))
        }
        _ => None,
    }
}

/// Join-condition conjuncts over one side only move into that side, where the join type allows:
/// for an outer join only into the null-supplying side (filtering the preserved side in ON
/// would drop rows it must keep).
fn push_join_condition(plan: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    let LogicalPlan::Join { left, right, join_type, condition: Some(cond), using, hint } = plan.as_ref() else {
        return None;
    };
    let (left_ok, right_ok) = match join_type {
        JoinType::Inner | JoinType::Cross | JoinType::LeftSemi => (true, true),
        JoinType::LeftOuter | JoinType::LeftAnti => (false, true),
        JoinType::RightOuter => (true, false),
        JoinType::FullOuter => (false, false),
    };
    let (mut to_left, mut to_right, mut keep) = (vec![], vec![], vec![]);
    for c in cond.split_conjunction() {
        if c.deterministic() && left_ok && references_within(c, left) {
            to_left.push(c.clone());
        } else if c.deterministic() && right_ok && references_within(c, right) {
            to_right.push(c.clone());
        } else {
            keep.push(c.clone());
        }
    }
    if to_left.is_empty() && to_right.is_empty() {
        return None;
    }
    Some(Arc::new(LogicalPlan::Join {
        left: filter(Expr::conjunction(to_left), left.clone()),
        right: filter(Expr::conjunction(to_right), right.clone()),
        join_type: *join_type,
        condition: Expr::conjunction(keep),
        using: using.clone(),
                hint: *hint,
    }))
}
