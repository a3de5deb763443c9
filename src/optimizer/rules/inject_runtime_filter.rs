//! Spark's `InjectRuntimeFilter` (Bloom filter flavour): where one side of an equi-join is a
//! selective filter over a small scan and the other side reads a big table through a shuffle
//! (an aggregate or a join), the big side gets `might_contain(bloom filter of the small side's
//! keys, xxhash64(key))`, which "Pushdown Filters from PartitionPruning" moves down to its scan.
//!
//! ```text
//! Join Inner, (p_partkey = l_partkey)                 Join Inner, (p_partkey = l_partkey)
//! :- Filter (p_brand = Brand#23) ...                  :- Filter (p_brand = Brand#23) ...
//! :  +- Relation part                             =>  :  +- Relation part
//! +- Aggregate [l_partkey], [avg(l_quantity) ...]     +- Aggregate [l_partkey], [avg(l_quantity) ...]
//!    +- Relation lineitem                                +- Filter might_contain(scalar-subquery#9 [], xxhash64(l_partkey, 42))
//!                                                           :  +- Aggregate [bloom_filter_agg(xxhash64(p_partkey, 42), ...) AS bloomFilter]
//!                                                           :     +- Filter (p_brand = Brand#23) ... part
//!                                                           +- Relation lineitem
//! ```
//! TPC-H Q17 then aggregates lineitem's rows of the 204 chosen parts instead of all 6M rows (the
//! effect DuckDB gets from its delim join). The filter has no false negatives, so it only drops
//! rows the join would drop. Conditions, as Spark's: the join type can prune that side; the key
//! traces down to one scan; that side's largest scan is at least the application-side
//! threshold; the other side is a simple, likely selective filter over a scan (also reached
//! through a join on the same key) of at most the creation-side threshold; the join is
//! probably a shuffle join or the pruned side has a shuffle below it. And, kiln's own: the scan
//! the key traces to is at least 1/64 of the application-side threshold.

use std::sync::Arc;

use crate::config::{Config, RuntimeFilterConfig};
use crate::error::Result;
use crate::expr::{AggBuiltin, AggFunc, Builtin, Expr, ExprId, MoreFn, ScalarFunc, SubqueryPlan};
use crate::optimizer::Rule;
use crate::plan::{JoinStrategyHint, JoinType, LogicalPlan};

/// The scan a filter prunes is at least this share of the application-side threshold
/// (1 MB of the default 64 MB).
const PRUNED_SCAN_SHARE: u64 = 64;

/// Plants runtime Bloom filters (see the module notes).
pub struct InjectRuntimeFilter {
    /// The `spark.sql.optimizer.runtime.bloomFilter.*` settings.
    pub settings: RuntimeFilterConfig,
    /// `spark.sql.autoBroadcastJoinThreshold`: a side under it is broadcast, not shuffled.
    pub broadcast_threshold: i64,
    /// `spark.sql.cbo.enabled`: sizes and rows from the CBO's estimates.
    pub cbo: bool,
}

impl InjectRuntimeFilter {
    /// The rule under the session's settings.
    pub fn new(config: &Config) -> Self {
        InjectRuntimeFilter { settings: config.runtime_filter.clone(), broadcast_threshold: config.auto_broadcast_join_threshold, cbo: config.cbo_enabled }
    }
}

impl Rule for InjectRuntimeFilter {
    fn name(&self) -> &'static str {
        "InjectRuntimeFilter"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        if !self.settings.enabled || self.settings.max_filters == 0 {
            return Ok(plan.clone());
        }
        let mut planted = 0usize;
        plan.transform_up(&mut |p| {
            let LogicalPlan::Join { left, right, join_type, condition: Some(condition), using, hint } = p.as_ref() else { return Ok(p) };
            let (mut new_left, mut new_right) = (left.clone(), right.clone());
            let shuffle_join = !hint.either(JoinStrategyHint::Broadcast) && !self.broadcastable(left) && !self.broadcastable(right);
            for (l, r) in equi_keys(condition, left, right) {
                if planted >= self.settings.max_filters {
                    break;
                }
                let (old_left, old_right) = (new_left.clone(), new_right.clone());
                if prunes_left(*join_type) && (shuffle_join || has_shuffle(left)) && !has_filter_on(left, &l) {
                    if let Some((key, creation)) = self.creation_side(left, right, &l, &r) {
                        new_left = self.inject(&l, new_left, key, creation);
                    }
                }
                if Arc::ptr_eq(&new_left, &old_left) && prunes_right(*join_type) && (shuffle_join || has_shuffle(right)) && !has_filter_on(right, &r) {
                    if let Some((key, creation)) = self.creation_side(right, left, &r, &l) {
                        new_right = self.inject(&r, new_right, key, creation);
                    }
                }
                if !Arc::ptr_eq(&new_left, &old_left) || !Arc::ptr_eq(&new_right, &old_right) {
                    planted += 1;
                }
            }
            if Arc::ptr_eq(&new_left, left) && Arc::ptr_eq(&new_right, right) {
                return Ok(p);
            }
            Ok(Arc::new(LogicalPlan::Join {
                left: new_left,
                right: new_right,
                join_type: *join_type,
                condition: Some(condition.clone()),
                using: using.clone(),
                hint: *hint,
            }))
        })
    }
}

impl InjectRuntimeFilter {
    fn size(&self, plan: &LogicalPlan) -> u64 {
        crate::stats::size_in_bytes_u64_with(plan, self.cbo)
    }

    fn broadcastable(&self, plan: &LogicalPlan) -> bool {
        self.broadcast_threshold >= 0 && self.size(plan) <= self.broadcast_threshold as u64
    }

    /// Spark's `extractBeneficialFilterCreatePlan`: the creation side's key and plan, when the
    /// application side is big enough and its key reaches a scan.
    fn creation_side(&self, application: &Arc<LogicalPlan>, creation: &Arc<LogicalPlan>, app_key: &Expr, creation_key: &Expr) -> Option<(Expr, Arc<LogicalPlan>)> {
        let traced = traced_scan(app_key, application)?;
        let threshold = self.settings.application_side_threshold.max(0) as u64;
        let largest_scan = leaves(application).iter().map(|l| self.size(l)).max().unwrap_or(0);
        if largest_scan < threshold {
            return None;
        }
        // kiln's own condition: the scan the filter would prune is not tiny. A table of a few
        // rows (TPC-H's nation) costs the join no more than the filter would, and the filter
        // costs a subquery.
        if self.size(traced) < threshold / PRUNED_SCAN_SHARE {
            return None;
        }
        selective_filter_over_scan(creation, creation_key)
    }

    /// `Filter(might_contain(bloom filter of the creation side's keys, xxhash64(key)), side)`;
    /// the side unchanged when the creation side is over its threshold.
    fn inject(&self, app_key: &Expr, application: Arc<LogicalPlan>, creation_key: Expr, creation: Arc<LogicalPlan>) -> Arc<LogicalPlan> {
        if self.size(&creation) > self.settings.creation_side_threshold.max(0) as u64 {
            return application;
        }
        let rows = crate::stats::plan_stats_with(&creation, self.cbo).row_count.filter(|r| *r > 0);
        let s = &self.settings;
        // Spark's BloomFilterAggregate: one byte per expected item, both capped.
        let (items, bits) = match rows {
            Some(r) => (u64::try_from(r).unwrap_or(u64::MAX).min(s.max_items), u64::try_from(r).unwrap_or(u64::MAX).saturating_mul(8).min(s.max_bits)),
            None => (s.expected_items.min(s.max_items), s.num_bits.min(s.max_bits)),
        };
        let agg = Expr::Aggregate { func: AggFunc::Builtin(AggBuiltin::bloom_filter(items, bits)), args: vec![xxhash64(creation_key)], distinct: false };
        let subquery = LogicalPlan::Aggregate { grouping: vec![], aggregates: vec![agg.alias("bloomFilter")], child: creation };
        let filter = Expr::Function {
            func: ScalarFunc::MightContain,
            args: vec![Expr::ScalarSubquery { plan: SubqueryPlan::new(Arc::new(subquery)), id: ExprId::next() }, xxhash64(app_key.clone())],
        };
        Arc::new(LogicalPlan::Filter { condition: filter, child: application })
    }
}

fn xxhash64(e: Expr) -> Expr {
    Expr::Function { func: ScalarFunc::Builtin(Builtin::More(MoreFn::XxHash64)), args: vec![e] }
}

/// Spark's `canPruneLeft` / `canPruneRight`.
fn prunes_left(t: JoinType) -> bool {
    matches!(t, JoinType::Inner | JoinType::LeftSemi | JoinType::RightOuter)
}

fn prunes_right(t: JoinType) -> bool {
    matches!(t, JoinType::Inner | JoinType::LeftSemi | JoinType::LeftOuter)
}

/// Equi-join key pairs (left side's, right side's) of plain columns.
fn equi_keys(condition: &Expr, left: &LogicalPlan, right: &LogicalPlan) -> Vec<(Expr, Expr)> {
    let (l_ids, r_ids) = (super::output_ids(left), super::output_ids(right));
    condition
        .split_conjunction()
        .into_iter()
        .filter_map(|c| match c {
            Expr::Binary { op: crate::expr::BinaryOp::Eq, left: a, right: b } if simple(a) && simple(b) => {
                let (a, b) = (a.as_ref(), b.as_ref());
                if super::reads_only(a, &l_ids) && super::reads_only(b, &r_ids) {
                    Some((a.clone(), b.clone()))
                } else if super::reads_only(b, &l_ids) && super::reads_only(a, &r_ids) {
                    Some((b.clone(), a.clone()))
                } else {
                    None
                }
            }
            _ => None,
        })
        .collect()
}

/// A key worth hashing: a column, maybe cast.
fn simple(e: &Expr) -> bool {
    match e {
        Expr::Attribute(_) => true,
        Expr::Cast { child, .. } => simple(child),
        _ => false,
    }
}

/// Spark's `isSimpleExpression` for filter conditions: no UDFs, regexps or subqueries.
fn cheap(e: &Expr) -> bool {
    !e.exists(&|x| {
        matches!(x, Expr::ScalarUdf { .. })
            || x.contains_subquery()
            || matches!(x, Expr::Function { func: ScalarFunc::Builtin(b), .. } if b.name().starts_with("regexp") || b.name() == "rlike")
    })
}

/// Spark's `isLikelySelective`.
fn likely_selective(e: &Expr) -> bool {
    use crate::expr::BinaryOp;
    match e {
        Expr::Not(c) => likely_selective(c),
        Expr::Binary { op: BinaryOp::And, left, right } => likely_selective(left) || likely_selective(right),
        Expr::Binary { op: BinaryOp::Or, left, right } => likely_selective(left) && likely_selective(right),
        Expr::Binary { op, .. } => op.is_comparison(),
        Expr::Like { .. } | Expr::InList { .. } | Expr::InSet { .. } => true,
        Expr::Function { func: ScalarFunc::Builtin(b), .. } => matches!(b.name(), "startswith" | "endswith" | "contains"),
        _ => false,
    }
}

fn has_shuffle(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Join { .. } | LogicalPlan::Aggregate { .. }) || plan.children().iter().any(|c| has_shuffle(c))
}

fn leaves(plan: &Arc<LogicalPlan>) -> Vec<Arc<LogicalPlan>> {
    let children = plan.children();
    if children.is_empty() {
        return vec![plan.clone()];
    }
    children.into_iter().flat_map(leaves).collect()
}

/// Whether a Filter below already tests `might_contain(_, xxhash64(key))` (the rule ran before).
fn has_filter_on(plan: &LogicalPlan, key: &Expr) -> bool {
    let planted = |c: &Expr| {
        c.exists(&|x| matches!(x, Expr::Function { func: ScalarFunc::MightContain, args } if args.get(1).is_some_and(|h| h.references() == key.references())))
    };
    matches!(plan, LogicalPlan::Filter { condition, .. } if planted(condition)) || plan.children().iter().any(|c| has_filter_on(c, key))
}

/// Spark's `findExpressionAndTrackLineageDown`: the one scan the key's columns come from,
/// through projections (aliases followed), filters, aggregates' grouping and joins.
fn traced_scan<'p>(key: &Expr, plan: &'p Arc<LogicalPlan>) -> Option<&'p Arc<LogicalPlan>> {
    if key.references().is_empty() {
        return None;
    }
    match plan.as_ref() {
        LogicalPlan::Project { list, child } => traced_scan(&super::substitute_aliases(key, list), child),
        LogicalPlan::Aggregate { aggregates, child, .. } => {
            let key = super::substitute_aliases(key, aggregates);
            if key.contains_aggregate() { None } else { traced_scan(&key, child) }
        }
        LogicalPlan::Relation { .. } => super::reads_only(key, &super::output_ids(plan)).then_some(plan),
        other => other.children().into_iter().find(|c| super::reads_only(key, &super::output_ids(c))).and_then(|c| traced_scan(key, c)),
    }
}

/// Spark's `extractSelectiveFilterOverScan`: the creation side's key and the subtree (a likely
/// selective, simple filter over a scan, maybe under projections) the Bloom filter is built
/// from; through an equi-join, the side holding the key or, by the join keys, the other side.
fn selective_filter_over_scan(plan: &Arc<LogicalPlan>, key: &Expr) -> Option<(Expr, Arc<LogicalPlan>)> {
    fn extract(p: &Arc<LogicalPlan>, hit_filter: bool, hit_selective: bool, current: &Arc<LogicalPlan>, key: &Expr) -> Option<(Expr, Arc<LogicalPlan>)> {
        match p.as_ref() {
            LogicalPlan::Project { list, child } => {
                if hit_filter && !list.iter().all(cheap) {
                    return None;
                }
                extract(child, hit_filter, hit_selective, current, key)
            }
            LogicalPlan::Filter { condition, child } if cheap(condition) => {
                extract(child, true, hit_selective || likely_selective(condition), current, key)
            }
            LogicalPlan::Join { left, right, condition: Some(condition), join_type, .. } if !matches!(join_type, JoinType::Cross) => {
                let pairs = equi_keys(condition, left, right);
                let on = |side: &Arc<LogicalPlan>| super::reads_only(key, &super::output_ids(side));
                let through = |from: &Arc<LogicalPlan>, other: &Arc<LogicalPlan>, other_key: Option<&Expr>| {
                    extract(from, false, false, from, key).or_else(|| other_key.and_then(|k| extract(other, false, false, other, k)))
                };
                if on(left) {
                    let other = pairs.iter().find(|(l, _)| l.references() == key.references()).map(|(_, r)| r);
                    through(left, right, other)
                } else if on(right) {
                    let other = pairs.iter().find(|(_, r)| r.references() == key.references()).map(|(l, _)| l);
                    through(right, left, other)
                } else {
                    None
                }
            }
            LogicalPlan::Relation { .. } if hit_selective => Some((key.clone(), current.clone())),
            _ => None,
        }
    }
    extract(plan, false, false, plan, key)
}
