//! `ReorderJoin`: inner joins written as `FROM a, b, c WHERE ...` are joined in an order that
//! gives each join a condition where one exists, so no cartesian product is planned that a
//! condition could avoid (TPC-H Q9's `part, supplier, lineitem, ...` joined part with supplier
//! in a nested loop). Spark's greedy rule, without statistics: keep the first relation, then
//! repeatedly join the first remaining one a condition connects to what is joined so far.
//!
//! ```text
//! Filter ((a.x = c.x) AND (b.y = c.y))        Join Inner, (b.y = c.y)
//! +- Join Inner                            => :- Join Inner, (a.x = c.x)
//!    :- Join Inner                            :  :- a
//!    :  :- a                                  :  +- c
//!    :  +- b                                  +- b
//!    +- c
//! ```

use std::collections::BTreeSet;
use std::sync::Arc;

use super::{output_ids, reads_only};
use crate::error::Result;
use crate::expr::{Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};

/// Reorders a tree of inner joins so conditions connect each join.
pub struct ReorderJoin;

impl Rule for ReorderJoin {
    fn name(&self) -> &'static str {
        "ReorderJoin"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_down(&mut |p| {
            if !matches!(p.as_ref(), LogicalPlan::Filter { .. } | LogicalPlan::Join { .. }) {
                return Ok(p);
            }
            let (mut inputs, mut conditions) = (vec![], vec![]);
            flatten_join(&p, JoinType::Inner, &mut inputs, &mut conditions);
            if inputs.len() <= 2 || conditions.is_empty() {
                return Ok(p);
            }
            let reordered = ordered_join(inputs, conditions);
            // The same columns in the same order, or a Project restores them.
            let output = p.output();
            if reordered.output_ids().into_iter().eq(output.iter().map(|a| a.id)) {
                return Ok(reordered);
            }
            Ok(Arc::new(LogicalPlan::Project { list: output.into_iter().map(Expr::Attribute).collect(), child: reordered }))
        })
    }
}

fn is_plain_inner_join(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Join { join_type: JoinType::Inner | JoinType::Cross, using, hint, .. } if using.is_empty() && *hint == Default::default())
}

/// Spark's `ExtractFiltersAndInnerJoins`: the relations along the left spine of a tree of inner
/// joins (without hints) and the Filters on it, left to right, each with the type of the join
/// that adds it (`parent` for the leftmost), and the conditions of those joins and Filters.
fn flatten_join(plan: &Arc<LogicalPlan>, parent: JoinType, inputs: &mut Vec<(Arc<LogicalPlan>, JoinType)>, conditions: &mut Vec<Expr>) {
    match plan.as_ref() {
        LogicalPlan::Join { left, right, join_type, condition, .. } if is_plain_inner_join(plan) => {
            flatten_join(left, *join_type, inputs, conditions);
            inputs.push((right.clone(), *join_type));
            conditions.extend(condition.iter().flat_map(|c| c.split_conjunction()).cloned());
        }
        LogicalPlan::Filter { condition, child } if condition.deterministic() && is_plain_inner_join(child) => {
            flatten_join(child, JoinType::Inner, inputs, conditions);
            conditions.extend(condition.split_conjunction().into_iter().cloned());
        }
        _ => inputs.push((plan.clone(), parent)),
    }
}

/// Spark's `createOrderedJoin`: a left-deep tree from `inputs`, each step joining the first
/// input that a remaining condition connects to what is joined so far (else the next one).
fn ordered_join(mut inputs: Vec<(Arc<LogicalPlan>, JoinType)>, mut conditions: Vec<Expr>) -> Arc<LogicalPlan> {
    let (mut left, _) = inputs.remove(0);
    while !inputs.is_empty() {
        let left_ids = output_ids(&left);
        let pick = inputs
            .iter()
            .position(|(plan, _)| {
                let ids = output_ids(plan);
                let both: BTreeSet<ExprId> = left_ids.union(&ids).copied().collect();
                conditions.iter().any(|c| {
                    let refs = c.references();
                    !refs.is_empty() && !reads_only(c, &left_ids) && !reads_only(c, &ids) && reads_only(c, &both)
                })
            })
            .unwrap_or(0);
        let (right, join_type) = inputs.remove(pick);
        let joined_ids: BTreeSet<ExprId> = left_ids.union(&output_ids(&right)).copied().collect();
        let (here, rest): (Vec<Expr>, Vec<Expr>) = conditions.into_iter().partition(|c| reads_only(c, &joined_ids));
        conditions = rest;
        let join_type = if join_type == JoinType::Inner { JoinType::Inner } else { JoinType::Cross };
        left = Arc::new(LogicalPlan::Join {
            left,
            right,
            join_type,
            condition: Expr::conjunction(here),
            using: vec![],
            hint: Default::default(),
        });
    }
    match Expr::conjunction(conditions) {
        Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: left }),
        None => left,
    }
}
