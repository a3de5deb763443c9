//! `CostBasedJoinReorder` (Spark's rule and its `JoinReorderDP`): a tree of inner joins with
//! conditions, over items that all have a row count, is rebuilt by dynamic programming over
//! the item sets, level by level (Selinger-style): level `k` holds the cheapest plan found for
//! each connected set of `k + 1` items; a plan's cost is the rows and bytes of all its
//! intermediate joins, and plan A beats plan B when
//! `rows(A)/rows(B) * w + bytes(A)/bytes(B) * (1 - w) < 1` (`w` =
//! `spark.sql.cbo.joinReorder.card.weight`). Cartesian products are never built. Only with
//! `spark.sql.cbo.enabled` and `spark.sql.cbo.joinReorder.enabled`, for 3 to
//! `spark.sql.cbo.joinReorder.dp.threshold` items. Unlike Spark, the items' estimates give a
//! LIKE a selectivity (`REORDER_LIKE_SELECTIVITY`) rather than none: TPC-H Q9's
//! `p_name LIKE '%green%'` part would otherwise look as large as the whole table and be joined
//! after orders (2.5x slower at SF 1).
//!
//! ```text
//! Join Inner, (b.y = c.y)                 Join Inner, (a.x = c.x)
//! :- Join Inner, (a.x = b.x)          =>  :- Join Inner, (b.y = c.y)      (when b ⋈ c is
//! :  :- a                                 :  :- b                          the smallest)
//! :  +- b                                 :  +- c
//! +- c                                    +- a
//! ```

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::{output_ids, reads_only};
use crate::error::Result;
use crate::expr::{Attribute, Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};
use crate::stats::estimation::{estimate_for_reorder, join_estimate, project_estimate, Estimate};

/// Reorders inner joins by estimated cost.
pub struct CostBasedJoinReorder {
    /// Both `spark.sql.cbo.enabled` and `spark.sql.cbo.joinReorder.enabled`.
    pub enabled: bool,
    /// `spark.sql.cbo.joinReorder.dp.threshold`.
    pub dp_threshold: usize,
    /// `spark.sql.cbo.joinReorder.card.weight`.
    pub card_weight: f64,
}

impl Rule for CostBasedJoinReorder {
    fn name(&self) -> &'static str {
        "CostBasedJoinReorder"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        if !self.enabled {
            return Ok(plan.clone());
        }
        Ok(self.reorder_tree(plan))
    }
}

fn is_joinable(p: &LogicalPlan) -> bool {
    matches!(p, LogicalPlan::Join { join_type: JoinType::Inner | JoinType::Cross, condition: Some(_), using, hint, .. }
        if using.is_empty() && *hint == Default::default())
}

fn is_column_project_over_join(p: &LogicalPlan) -> bool {
    matches!(p, LogicalPlan::Project { list, child } if list.iter().all(|e| matches!(e, Expr::Attribute(_))) && is_joinable(child))
}

/// Spark's `extractInnerJoins`: the items of consecutive inner joins (bushy or deep) and their
/// conditions.
fn extract(p: &Arc<LogicalPlan>, items: &mut Vec<Arc<LogicalPlan>>, conditions: &mut Vec<Expr>) {
    match p.as_ref() {
        LogicalPlan::Join { left, right, condition: Some(c), .. } if is_joinable(p) => {
            extract(left, items, conditions);
            extract(right, items, conditions);
            for e in c.split_conjunction() {
                if !conditions.contains(e) {
                    conditions.push(e.clone());
                }
            }
        }
        LogicalPlan::Project { child, .. } if is_column_project_over_join(p) => extract(child, items, conditions),
        _ => items.push(p.clone()),
    }
}

/// One entry of the DP memo: the best plan found for a set of items.
#[derive(Clone)]
struct JoinPlan {
    items: u64,
    plan: Arc<LogicalPlan>,
    est: Estimate,
    /// Indexes of the conditions this plan applies.
    conds: BTreeSet<usize>,
    /// Rows and bytes of every join inside (not the root).
    cost: (f64, f64),
}

impl JoinPlan {
    /// The root's own cost: nothing for a single item, its rows and bytes for a join.
    fn root_cost(&self) -> (f64, f64) {
        if self.items.count_ones() > 1 {
            (self.est.row_count.unwrap_or(0) as f64, self.est.size_in_bytes as f64)
        } else {
            (0.0, 0.0)
        }
    }
    fn better_than(&self, other: &JoinPlan, card_weight: f64) -> bool {
        if other.cost.0 == 0.0 || other.cost.1 == 0.0 {
            return false;
        }
        let rows = self.cost.0 / other.cost.0;
        let size = self.cost.1 / other.cost.1;
        rows * card_weight + size * (1.0 - card_weight) < 1.0
    }
}

/// Plans by item set, in insertion order (Spark's LinkedHashMap).
#[derive(Default)]
struct Level {
    plans: Vec<JoinPlan>,
    index: HashMap<u64, usize>,
}

impl CostBasedJoinReorder {
    fn reorder_tree(&self, p: &Arc<LogicalPlan>) -> Arc<LogicalPlan> {
        if is_joinable(p) || is_column_project_over_join(p) {
            let (mut items, mut conditions) = (vec![], vec![]);
            extract(p, &mut items, &mut conditions);
            let items: Vec<Arc<LogicalPlan>> = items.iter().map(|i| self.reorder_tree(i)).collect();
            if let Some(reordered) = self.search(&items, &conditions, &p.output()) {
                return reordered;
            }
            // Not reordered: the same tree, over the reordered items.
            return rebuild(p, &mut items.into_iter());
        }
        let children: Vec<Arc<LogicalPlan>> = p.children().into_iter().map(|c| self.reorder_tree(c)).collect();
        if children.iter().zip(p.children()).all(|(a, b)| Arc::ptr_eq(a, b)) {
            return p.clone();
        }
        Arc::new(p.with_new_children(children))
    }

    /// Spark's `JoinReorderDP.search`; None when the items do not qualify or cannot all be
    /// joined without a cartesian product.
    fn search(&self, items: &[Arc<LogicalPlan>], conditions: &[Expr], output: &[Attribute]) -> Option<Arc<LogicalPlan>> {
        let n = items.len();
        if n <= 2 || n > self.dp_threshold.min(63) || conditions.is_empty() {
            return None;
        }
        let estimates: Vec<Estimate> = items.iter().map(|i| estimate_for_reorder(i)).collect();
        if estimates.iter().any(|e| e.row_count.is_none()) {
            return None;
        }
        let item_ids: Vec<BTreeSet<ExprId>> = items.iter().map(|i| output_ids(i)).collect();
        // A condition one item can evaluate alone would never become a join condition.
        if conditions.iter().any(|c| item_ids.iter().any(|ids| reads_only(c, ids))) {
            return None;
        }
        let top: BTreeSet<ExprId> = output.iter().map(|a| a.id).collect();
        let mut levels: Vec<Level> = vec![Level::default()];
        for (i, (item, est)) in items.iter().zip(estimates).enumerate() {
            let plan = JoinPlan { items: 1 << i, plan: item.clone(), est, conds: BTreeSet::new(), cost: (0.0, 0.0) };
            let at = levels[0].plans.len();
            levels[0].index.insert(plan.items, at);
            levels[0].plans.push(plan);
        }
        while levels.len() < n {
            let next = self.search_level(&levels, conditions, &top);
            if next.plans.is_empty() {
                return None;
            }
            levels.push(next);
        }
        let best = levels.last()?.plans.first()?;
        if best.conds.len() != conditions.len() {
            return None;
        }
        let plan = best.plan.clone();
        let same_order = plan.output_ids().into_iter().eq(output.iter().map(|a| a.id));
        Some(match plan.as_ref() {
            _ if same_order => plan,
            LogicalPlan::Project { child, .. } => {
                Arc::new(LogicalPlan::Project { list: output.iter().cloned().map(Expr::Attribute).collect(), child: child.clone() })
            }
            _ => Arc::new(LogicalPlan::Project { list: output.iter().cloned().map(Expr::Attribute).collect(), child: plan }),
        })
    }

    fn search_level(&self, levels: &[Level], conditions: &[Expr], top: &BTreeSet<ExprId>) -> Level {
        let mut next = Level::default();
        let lev = levels.len() - 1;
        let mut k = 0;
        while 2 * k <= lev {
            let one_side = &levels[k].plans;
            for (i, one) in one_side.iter().enumerate() {
                let others: &[JoinPlan] = if k == lev - k { &one_side[i..] } else { &levels[lev - k].plans };
                for other in others {
                    let Some(joined) = build_join(one, other, conditions, top) else { continue };
                    match next.index.get(&joined.items) {
                        Some(&at) if !joined.better_than(&next.plans[at], self.card_weight) => {}
                        Some(&at) => next.plans[at] = joined,
                        None => {
                            next.index.insert(joined.items, next.plans.len());
                            next.plans.push(joined);
                        }
                    }
                }
            }
            k += 1;
        }
        next
    }
}

/// Spark's `buildJoin`: the join of two disjoint item sets on the conditions that connect
/// them, the deeper side on the left, pruned to the columns still needed.
fn build_join(one: &JoinPlan, other: &JoinPlan, conditions: &[Expr], top: &BTreeSet<ExprId>) -> Option<JoinPlan> {
    if one.items & other.items != 0 {
        return None;
    }
    let (one_ids, other_ids) = (output_ids(&one.plan), output_ids(&other.plan));
    let both: BTreeSet<ExprId> = one_ids.union(&other_ids).copied().collect();
    let here: Vec<usize> = (0..conditions.len())
        .filter(|&i| {
            let c = &conditions[i];
            !reads_only(c, &one_ids) && !reads_only(c, &other_ids) && reads_only(c, &both)
        })
        .collect();
    if here.is_empty() {
        return None;
    }
    let (left, right) = if one.items.count_ones() >= other.items.count_ones() { (one, other) } else { (other, one) };
    let join = Arc::new(LogicalPlan::Join {
        left: left.plan.clone(),
        right: right.plan.clone(),
        join_type: JoinType::Inner,
        condition: Expr::conjunction(here.iter().map(|&i| conditions[i].clone())),
        using: vec![],
        hint: Default::default(),
    });
    let mut conds: BTreeSet<usize> = here.into_iter().collect();
    conds.extend(one.conds.iter().copied());
    conds.extend(other.conds.iter().copied());
    let mut needed = top.clone();
    for (i, c) in conditions.iter().enumerate() {
        if !conds.contains(&i) {
            needed.extend(c.references());
        }
    }
    let join_est = join_estimate(&join, &left.est, &right.est);
    let out = join.output();
    let kept: Vec<Attribute> = out.iter().filter(|a| needed.contains(&a.id)).cloned().collect();
    let (plan, est) = if kept.len() < out.len() {
        let project = Arc::new(LogicalPlan::Project { list: kept.into_iter().map(Expr::Attribute).collect(), child: join });
        let est = project_estimate(&project, &join_est);
        (project, est)
    } else {
        (join, join_est)
    };
    let (r1, r2) = (one.root_cost(), other.root_cost());
    let cost = (one.cost.0 + r1.0 + other.cost.0 + r2.0, one.cost.1 + r1.1 + other.cost.1 + r2.1);
    Some(JoinPlan { items: one.items | other.items, plan, est, conds, cost })
}

/// `p` with the items `extract` found in it replaced, in the same order.
fn rebuild(p: &Arc<LogicalPlan>, items: &mut impl Iterator<Item = Arc<LogicalPlan>>) -> Arc<LogicalPlan> {
    match p.as_ref() {
        LogicalPlan::Join { left, right, .. } if is_joinable(p) => {
            let (l, r) = (rebuild(left, items), rebuild(right, items));
            if Arc::ptr_eq(&l, left) && Arc::ptr_eq(&r, right) {
                return p.clone();
            }
            Arc::new(p.with_new_children(vec![l, r]))
        }
        LogicalPlan::Project { child, .. } if is_column_project_over_join(p) => {
            let c = rebuild(child, items);
            if Arc::ptr_eq(&c, child) {
                return p.clone();
            }
            Arc::new(p.with_new_children(vec![c]))
        }
        _ => items.next().unwrap_or_else(|| p.clone()),
    }
}
