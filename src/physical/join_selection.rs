//! `JoinSelection`: the join operator for one logical Join, in Spark 3's precedence.
//!
//! With equi-join keys:
//! 1. hints first: BroadcastHashJoin for a BROADCAST side the join type can build, then
//!    SortMergeJoin for MERGE, ShuffledHashJoin for a SHUFFLE_HASH side it can build, then
//!    CartesianProduct for SHUFFLE_REPLICATE_NL (inner joins only);
//! 2. BroadcastHashJoin when a side it can build is estimated at most
//!    `spark.sql.autoBroadcastJoinThreshold` (-1 disables); the smaller one if both are;
//! 3. ShuffledHashJoin when `spark.sql.join.preferSortMergeJoin` is false and a side it can build
//!    fits a per-partition hash map (under threshold x shuffle partitions) and is 3x smaller;
//! 4. SortMergeJoin when the keys are orderable;
//! 5. CartesianProduct for inner joins; 6. otherwise ShuffledHashJoin.
//!
//! Without equi-join keys: BroadcastNestedLoopJoin when hinted or small enough, CartesianProduct
//! for inner joins, else BroadcastNestedLoopJoin. Before that, `x NOT IN (subquery)`'s single
//! column shape, a LeftAnti join on `(a = b) OR isnull(a = b)`, is a null-aware
//! BroadcastHashJoin building the right side when that side fits the broadcast threshold
//! (Spark's `ExtractSingleColumnNullAwareAntiJoin`, `spark.sql.optimizeNullAwareAntiJoin`).
//!
//! A hint that cannot be honoured (BROADCAST on the preserved side of an outer join, MERGE
//! without equi-keys) is reported as Spark's `HintErrorLogger` words it and planning goes on
//! without it.

use std::sync::Arc;

use super::{BuildSide, HashJoinKind, PhysicalPlan};
use crate::config::Config;
use crate::expr::Expr;
use crate::plan::{JoinHint, JoinStrategyHint, JoinType};

/// One join to plan: its keys, condition, hints, size estimates and planned children.
pub(super) struct JoinSelection<'a> {
    /// The session settings (threshold, shuffle partitions, preferSortMergeJoin).
    pub config: &'a Config,
    /// Which rows the join keeps.
    pub join_type: JoinType,
    /// The strategy hints on either side.
    pub hint: JoinHint,
    /// Equi-join keys over the left input, paired with `right_keys` by position.
    pub left_keys: Vec<Expr>,
    /// Equi-join keys over the right input.
    pub right_keys: Vec<Expr>,
    /// The conjuncts that are not equi-join keys.
    pub extra: Option<Expr>,
    /// The whole join condition (a CartesianProduct evaluates it all).
    pub condition: Option<Expr>,
    /// `estimate_size` of the left logical input.
    pub left_size: u64,
    /// `estimate_size` of the right logical input.
    pub right_size: u64,
    /// The planned left input.
    pub left: Arc<PhysicalPlan>,
    /// The planned right input.
    pub right: Arc<PhysicalPlan>,
}

/// Which sides a broadcast (hash or nested-loop) join of this type can build: never the
/// preserved side of an outer join, whose unmatched rows every task would emit again.
fn can_broadcast(join_type: JoinType) -> (bool, bool) {
    let left = matches!(join_type, JoinType::Inner | JoinType::Cross | JoinType::RightOuter);
    let right = matches!(join_type, JoinType::Inner | JoinType::Cross | JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti);
    (left, right)
}

/// Which sides a shuffled hash join of this type can build (a full outer join either).
fn can_shuffle_hash(join_type: JoinType) -> (bool, bool) {
    let (left, right) = can_broadcast(join_type);
    (left || join_type == JoinType::FullOuter, right || join_type == JoinType::FullOuter)
}

fn is_inner(join_type: JoinType) -> bool {
    matches!(join_type, JoinType::Inner | JoinType::Cross)
}

/// Spark's `JoinType.sql`, lower-cased, as in its hint warnings.
fn join_type_sql(join_type: JoinType) -> &'static str {
    match join_type {
        JoinType::Inner => "inner",
        JoinType::LeftOuter => "left outer",
        JoinType::RightOuter => "right outer",
        JoinType::FullOuter => "full outer",
        JoinType::LeftSemi => "left semi",
        JoinType::LeftAnti => "left anti",
        JoinType::Cross => "cross",
    }
}

/// Spark's `HintErrorLogger.joinHintNotSupported`.
fn not_supported(strategy: JoinStrategyHint, reason: &str) -> String {
    format!("Hint (strategy={}) is not supported in the query: {reason}.", strategy.display_name())
}

impl JoinSelection<'_> {
    /// The chosen operator; `warnings` gets every hint that could not be honoured.
    pub fn select(self, warnings: &mut Vec<String>) -> PhysicalPlan {
        if self.left_keys.is_empty() {
            if let Some(plan) = self.null_aware_anti_join() {
                return plan;
            }
            return self.select_without_keys(warnings);
        }
        let hinted = self
            .broadcast_hash_join(true, warnings)
            .or_else(|| self.hint.either(JoinStrategyHint::ShuffleMerge).then(|| self.sort_merge_join()).flatten())
            .or_else(|| self.shuffled_hash_join(true, warnings))
            .or_else(|| self.hinted_cartesian_product(warnings));
        if let Some(plan) = hinted {
            return plan;
        }
        self.broadcast_hash_join(false, warnings)
            .or_else(|| self.shuffled_hash_join(false, warnings))
            .or_else(|| self.sort_merge_join())
            .or_else(|| self.cartesian_product())
            .unwrap_or_else(|| {
                let (l, r) = can_shuffle_hash(self.join_type);
                let side = self.build_side(l, r).unwrap_or(BuildSide::BuildRight);
                self.hash_join(HashJoinKind::Shuffled, side)
            })
    }

    fn fits_broadcast(&self, size: u64) -> bool {
        let threshold = self.config.auto_broadcast_join_threshold;
        threshold >= 0 && size <= threshold as u64
    }

    /// The side to build among the allowed ones: the smaller one when both are (right on ties).
    fn build_side(&self, left: bool, right: bool) -> Option<BuildSide> {
        match (left, right) {
            (true, true) if self.right_size <= self.left_size => Some(BuildSide::BuildRight),
            (true, true) | (true, false) => Some(BuildSide::BuildLeft),
            (false, true) => Some(BuildSide::BuildRight),
            (false, false) => None,
        }
    }

    /// `(left, right)`: which sides carry `strategy`.
    fn hinted(&self, strategy: JoinStrategyHint) -> (bool, bool) {
        (self.hint.left == Some(strategy), self.hint.right == Some(strategy))
    }

    /// Warns about each hinted side the join type cannot build.
    fn check_build_hint(&self, strategy: JoinStrategyHint, allowed: (bool, bool), warnings: &mut Vec<String>) {
        let (hl, hr) = self.hinted(strategy);
        let jt = join_type_sql(self.join_type);
        if hl && !allowed.0 {
            warnings.push(not_supported(strategy, &format!("build left for {jt} join")));
        }
        if hr && !allowed.1 {
            warnings.push(not_supported(strategy, &format!("build right for {jt} join")));
        }
    }

    fn hash_join(&self, kind: HashJoinKind, build_side: BuildSide) -> PhysicalPlan {
        PhysicalPlan::HashJoin {
            kind,
            left_keys: self.left_keys.clone(),
            right_keys: self.right_keys.clone(),
            join_type: self.join_type,
            build_side,
            condition: self.extra.clone(),
            null_aware: false,
            left: self.left.clone(),
            right: self.right.clone(),
        }
    }

    fn broadcast_hash_join(&self, only_hint: bool, warnings: &mut Vec<String>) -> Option<PhysicalPlan> {
        let (can_l, can_r) = can_broadcast(self.join_type);
        let (l, r) = if only_hint {
            let (hl, hr) = self.hinted(JoinStrategyHint::Broadcast);
            self.check_build_hint(JoinStrategyHint::Broadcast, (can_l, can_r), warnings);
            (hl && can_l, hr && can_r)
        } else {
            (can_l && self.fits_broadcast(self.left_size), can_r && self.fits_broadcast(self.right_size))
        };
        self.build_side(l, r).map(|side| self.hash_join(HashJoinKind::Broadcast, side))
    }

    fn shuffled_hash_join(&self, only_hint: bool, warnings: &mut Vec<String>) -> Option<PhysicalPlan> {
        let (can_l, can_r) = can_shuffle_hash(self.join_type);
        let (l, r) = if only_hint {
            let (hl, hr) = self.hinted(JoinStrategyHint::ShuffleHash);
            self.check_build_hint(JoinStrategyHint::ShuffleHash, (can_l, can_r), warnings);
            (hl && can_l, hr && can_r)
        } else if self.config.prefer_sort_merge_join {
            (false, false)
        } else {
            // Spark's canBuildLocalHashMapBySize and muchSmaller.
            let per_partition = self.config.auto_broadcast_join_threshold.saturating_mul(self.config.shuffle_partitions as i64);
            let local = |size: u64| per_partition > 0 && size < per_partition as u64;
            let much_smaller = |a: u64, b: u64| a.saturating_mul(3) <= b;
            (
                can_l && local(self.left_size) && much_smaller(self.left_size, self.right_size),
                can_r && local(self.right_size) && much_smaller(self.right_size, self.left_size),
            )
        };
        self.build_side(l, r).map(|side| self.hash_join(HashJoinKind::Shuffled, side))
    }

    fn sort_merge_join(&self) -> Option<PhysicalPlan> {
        let orderable = self.left_keys.iter().all(|k| k.data_type().is_ok_and(|t| !t.is_nested()));
        orderable.then(|| PhysicalPlan::SortMergeJoin {
            left_keys: self.left_keys.clone(),
            right_keys: self.right_keys.clone(),
            join_type: self.join_type,
            condition: self.extra.clone(),
            left: self.left.clone(),
            right: self.right.clone(),
        })
    }

    fn cartesian_product(&self) -> Option<PhysicalPlan> {
        is_inner(self.join_type).then(|| PhysicalPlan::CartesianProduct {
            condition: self.condition.clone(),
            left: self.left.clone(),
            right: self.right.clone(),
        })
    }

    fn hinted_cartesian_product(&self, warnings: &mut Vec<String>) -> Option<PhysicalPlan> {
        if !self.hint.either(JoinStrategyHint::ShuffleReplicateNl) {
            return None;
        }
        let plan = self.cartesian_product();
        if plan.is_none() {
            warnings.push(not_supported(JoinStrategyHint::ShuffleReplicateNl, &format!("{} join", join_type_sql(self.join_type))));
        }
        plan
    }

    fn nested_loop_join(&self, build_side: BuildSide) -> PhysicalPlan {
        PhysicalPlan::NestedLoopJoin {
            join_type: self.join_type,
            build_side,
            condition: self.condition.clone(),
            left: self.left.clone(),
            right: self.right.clone(),
        }
    }

    /// The null-aware anti join for a LeftAnti condition `(a = b) OR isnull(a = b)` with `a`
    /// over one side and `b` over the other, when the right side can be broadcast. Only one
    /// column: `(a, b) NOT IN (..)` stays a nested-loop join, as in Spark.
    fn null_aware_anti_join(&self) -> Option<PhysicalPlan> {
        use crate::expr::BinaryOp;
        if self.join_type != JoinType::LeftAnti || !self.config.optimize_null_aware_anti_join || !self.fits_broadcast(self.right_size) {
            return None;
        }
        let Some(Expr::Binary { op: BinaryOp::Or, left: eq, right: unknown }) = &self.condition else { return None };
        let (Expr::Binary { op: BinaryOp::Eq, left: a, right: b }, Expr::IsNull(again)) = (eq.as_ref(), unknown.as_ref()) else { return None };
        if again.as_ref() != eq.as_ref() {
            return None;
        }
        let (left_ids, right_ids) = (super::ids(&self.left.output()), super::ids(&self.right.output()));
        let within = |e: &Expr, ids: &[crate::expr::ExprId]| e.references().iter().all(|id| ids.contains(id));
        let (stream, build) = if within(a, &left_ids) && within(b, &right_ids) {
            (a, b)
        } else if within(a, &right_ids) && within(b, &left_ids) {
            (b, a)
        } else {
            return None;
        };
        Some(PhysicalPlan::HashJoin {
            kind: HashJoinKind::Broadcast,
            left_keys: vec![stream.as_ref().clone()],
            right_keys: vec![build.as_ref().clone()],
            join_type: JoinType::LeftAnti,
            build_side: BuildSide::BuildRight,
            condition: None,
            null_aware: true,
            left: self.left.clone(),
            right: self.right.clone(),
        })
    }

    fn select_without_keys(self, warnings: &mut Vec<String>) -> PhysicalPlan {
        for strategy in [JoinStrategyHint::ShuffleMerge, JoinStrategyHint::ShuffleHash] {
            if self.hint.either(strategy) {
                warnings.push(not_supported(strategy, "no equi-join keys"));
            }
        }
        let (can_l, can_r) = can_broadcast(self.join_type);
        // A full outer nested-loop join gathers both sides into one task, so either side builds.
        let allowed = if self.join_type == JoinType::FullOuter { (true, true) } else { (can_l, can_r) };
        let desired = if is_inner(self.join_type) || self.join_type == JoinType::FullOuter {
            self.build_side(true, true).unwrap_or(BuildSide::BuildRight)
        } else if can_l {
            BuildSide::BuildLeft
        } else {
            BuildSide::BuildRight
        };
        let pick = |l: bool, r: bool| match (l, r) {
            (true, true) => Some(desired),
            (true, false) => Some(BuildSide::BuildLeft),
            (false, true) => Some(BuildSide::BuildRight),
            (false, false) => None,
        };
        let (hl, hr) = self.hinted(JoinStrategyHint::Broadcast);
        self.check_build_hint(JoinStrategyHint::Broadcast, allowed, warnings);
        if let Some(side) = pick(hl && allowed.0, hr && allowed.1) {
            return self.nested_loop_join(side);
        }
        if let Some(plan) = self.hinted_cartesian_product(warnings) {
            return plan;
        }
        let by_size = pick(allowed.0 && self.fits_broadcast(self.left_size), allowed.1 && self.fits_broadcast(self.right_size));
        if let Some(side) = by_size {
            return self.nested_loop_join(side);
        }
        self.cartesian_product().unwrap_or_else(|| self.nested_loop_join(desired))
    }
}
