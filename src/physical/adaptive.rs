//! Adaptive query execution's physical rules (Spark's `AdaptiveSparkPlanExec` and its
//! `queryStageOptimizerRules`). The executor runs a plan stage by stage (`exec::adaptive`);
//! between stages these rules re-plan the rest from what the finished stages really produced:
//!
//! - `DynamicJoinSelection` + `OptimizeShuffleWithLocalRead`: a shuffled join one of whose
//!   sides is a finished stage under the broadcast threshold becomes a broadcast hash join;
//!   the other side reads its finished shuffle locally (`AQEShuffleRead local`) or, when its
//!   shuffle has not run yet, is not shuffled at all (Spark would run that shuffle first: kiln
//!   runs the smaller side's stage first so the larger one can be dropped);
//! - `OptimizeSkewedJoin`: a sort-merge join's partition far above the median is split, the
//!   other side's matching partition read once per split (`AQEShuffleRead skewed`);
//! - `CoalesceShufflePartitions`: the shuffles a stage reads are merged into fewer contiguous
//!   partitions of about the advisory size (`AQEShuffleRead coalesced`).

use std::sync::{Arc, Mutex};

use arrow::record_batch::RecordBatch;

use super::{BuildSide, HashJoinKind, Partitioning, PhysicalPlan, QueryStageKind, ShuffleOrigin};
use crate::catalog::TableSource;
use crate::config::Config;
use crate::error::{KilnError, Result};
use crate::expr::Expr;
use crate::plan::JoinType;

/// What a finished query stage produced: its partitions and their sizes, which the
/// re-planning rules read. A shuffle stage's partition read once is handed to its reader and
/// freed with it (as an exchange's is); the rest are freed once the stages reading them ran.
pub struct StageOutput {
    parts: Vec<Mutex<Option<SpillablePartition>>>,
    /// Bytes of each output partition (Arrow buffer sizes), spilled rows included.
    pub bytes: Vec<u64>,
    /// Rows of each output partition.
    pub rows: Vec<u64>,
    /// Bytes of each output partition held in memory.
    memory: Vec<u64>,
    /// How the rows are spread over the partitions (the exchange's partitioning).
    pub partitioning: Partitioning,
    /// The query's memory the partitions hold until they are handed off or released.
    held: Mutex<Option<crate::common::memory::Reservation>>,
}

impl std::fmt::Debug for StageOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StageOutput({} partitions, {} rows, {} bytes)", self.bytes.len(), self.total_rows(), self.total_bytes())
    }
}

impl StageOutput {
    /// A finished stage's partitions.
    pub fn new(parts: Vec<SpillablePartition>, partitioning: Partitioning) -> StageOutput {
        let bytes = parts.iter().map(SpillablePartition::bytes).collect();
        let rows = parts.iter().map(SpillablePartition::rows).collect();
        let memory = parts.iter().map(SpillablePartition::memory_bytes).collect();
        StageOutput { parts: parts.into_iter().map(|p| Mutex::new(Some(p))).collect(), bytes, rows, memory, partitioning, held: Mutex::new(None) }
    }

    /// Counts the partitions held in memory against the query's memory budget, in `held`
    /// (which may hold them already: the exchange's own reservation).
    pub fn hold(&self, held: crate::common::memory::Reservation) -> Result<()> {
        held.resize(self.memory.iter().sum())?;
        if let Ok(mut slot) = self.held.lock() {
            *slot = Some(held);
        }
        Ok(())
    }

    /// The number of partitions.
    pub fn num_partitions(&self) -> usize {
        self.bytes.len()
    }

    /// All bytes.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }

    /// All rows.
    pub fn total_rows(&self) -> u64 {
        self.rows.iter().sum()
    }

    fn slot(&self, i: usize, take: bool) -> Result<SpillablePartition> {
        let Some(slot) = self.parts.get(i) else { return Ok(SpillablePartition::default()) };
        let mut slot = slot.lock().map_err(|_| KilnError::internal("a query stage's output lock was poisoned"))?;
        let part = if take { slot.take() } else { slot.clone() };
        if let (true, Ok(Some(held))) = (take, self.held.lock().as_deref()) {
            held.shrink(self.memory.get(i).copied().unwrap_or(0));
        }
        part.ok_or_else(|| KilnError::internal(format!("partition {i} of a query stage read after it was handed off")))
    }

    /// Partition `i`'s batches, kept for other readers (a broadcast's, a skewed split's),
    /// spilled ones read back.
    pub fn partition(&self, i: usize) -> Result<Vec<RecordBatch>> {
        self.slot(i, false)?.read_all()
    }

    /// Partition `i`, handed to its one reader.
    pub fn take(&self, i: usize) -> Result<SpillablePartition> {
        self.slot(i, true)
    }

    /// Frees the partitions: every stage reading them has run.
    pub fn release(&self) {
        for p in &self.parts {
            if let Ok(mut p) = p.lock() {
                *p = None;
            }
        }
        if let Ok(mut held) = self.held.lock() {
            *held = None;
        }
    }
}

pub use crate::common::memory::batch_bytes;
use crate::common::spill::SpillablePartition;

/// One output partition of a shuffle read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPart {
    /// Shuffle partitions `start..end`, concatenated.
    Partitions(usize, usize),
    /// Part `index` of `of` of one shuffle partition's rows (a split skewed partition).
    Slice {
        /// The shuffle partition split.
        partition: usize,
        /// Which part.
        index: usize,
        /// Into how many parts it is split.
        of: usize,
    },
}

/// The partitions a shuffle read produces, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ShuffleReadSpec {
    /// One entry per output partition.
    pub parts: Vec<ReadPart>,
    /// Read without the hash layout (the consumer needs none: a broadcast join's stream side).
    pub local: bool,
}

impl ShuffleReadSpec {
    /// A read of contiguous partition ranges.
    pub fn ranges(ranges: Vec<(usize, usize)>, local: bool) -> ShuffleReadSpec {
        ShuffleReadSpec { parts: ranges.into_iter().map(|(s, e)| ReadPart::Partitions(s, e)).collect(), local }
    }

    /// Whether each shuffle partition is read at most once (disjoint ranges, no splits), so
    /// partitions can be handed to their reader.
    pub fn reads_once(&self) -> bool {
        let mut end = 0;
        self.parts.iter().all(|p| match *p {
            ReadPart::Partitions(s, e) if s >= end => {
                end = e;
                true
            }
            _ => false,
        })
    }

    /// Spark's `AQEShuffleReadExec` description: `local`, `coalesced`, `skewed` or
    /// `coalesced and skewed`.
    pub fn description(&self) -> &'static str {
        let coalesced = self.parts.iter().any(|p| matches!(p, ReadPart::Partitions(s, e) if e - s > 1));
        let skewed = self.parts.iter().any(|p| matches!(p, ReadPart::Slice { .. }));
        match (self.local, coalesced, skewed) {
            (true, _, _) => "local",
            (_, true, true) => "coalesced and skewed",
            (_, true, false) => "coalesced",
            (_, false, true) => "skewed",
            _ => "",
        }
    }
}

/// The partitioning of a shuffle read's output.
pub fn read_partitioning(spec: &ShuffleReadSpec, child: &Partitioning) -> Partitioning {
    let n = spec.parts.len().max(1);
    if spec.local || spec.parts.iter().any(|p| matches!(p, ReadPart::Slice { .. })) {
        return Partitioning::Unknown(n);
    }
    // Contiguous partitions merged keep keys together and ranges in order.
    match child {
        Partitioning::Hash(keys, _) => Partitioning::Hash(keys.clone(), n),
        Partitioning::Range(order, _) => Partitioning::Range(order.clone(), n),
        Partitioning::SinglePartition => Partitioning::SinglePartition,
        _ => Partitioning::Unknown(n),
    }
}

/// Whether `plan` runs adaptively: AQE is on and there is an exchange to cut it at or a
/// subquery (Spark's `InsertAdaptiveSparkPlan`).
pub fn is_adaptive(plan: &PhysicalPlan, config: &Config) -> bool {
    fn has_exchange(p: &PhysicalPlan) -> bool {
        matches!(p, PhysicalPlan::Exchange { .. } | PhysicalPlan::BroadcastExchange { .. })
            || !p.subqueries().is_empty()
            || p.children().into_iter().any(|c| has_exchange(c))
    }
    config.adaptive_enabled && has_exchange(plan)
}

/// The largest stage output broadcast at run time (None: never).
fn broadcast_threshold(config: &Config) -> Option<u64> {
    u64::try_from(config.adaptive_broadcast_threshold()).ok()
}

/// A join side that has run converts its join before the other side runs only when it is
/// under this share of the broadcast threshold.
const EAGER_BROADCAST_SHARE: u64 = 2;

/// Once both sides of a sort-merge join have been shuffled, converting it saves only the two
/// sorts, and costs a hash table built in one thread and probed at random: worth it only while
/// the table stays about cache-sized. Rows of the build side, at most (TPC-H Q21 at SF1: 730k
/// orders rows probed by 3.8M lineitem rows ran 11 % slower converted than merged).
const LATE_BROADCAST_MAX_ROWS: u64 = 128 * 1024;

/// The finished shuffle stage under a sort a shuffled join added, if the side is one.
fn finished_shuffle(side: &Arc<PhysicalPlan>) -> Option<&Arc<PhysicalPlan>> {
    match side.as_ref() {
        PhysicalPlan::Sort { global: false, child, .. } => finished_shuffle(child),
        PhysicalPlan::QueryStage { kind: QueryStageKind::Shuffle, .. } => Some(side),
        _ => None,
    }
}

fn stage_bytes(stage: &PhysicalPlan) -> u64 {
    match stage {
        PhysicalPlan::QueryStage { output, .. } => output.total_bytes(),
        _ => u64::MAX,
    }
}

/// Who asked for the exchange a shuffle stage ran (or the exchange itself): AQE changes only
/// the layouts no repartition to a number asked for.
pub fn shuffle_origin(plan: &PhysicalPlan) -> ShuffleOrigin {
    match plan {
        PhysicalPlan::QueryStage { plan, .. } => shuffle_origin(plan),
        PhysicalPlan::Exchange { origin, .. } => *origin,
        _ => ShuffleOrigin::EnsureRequirements,
    }
}

/// A shuffle stage read without its layout (one partition per core's worth of data).
fn local_read(stage: &Arc<PhysicalPlan>, config: &Config) -> Arc<PhysicalPlan> {
    let PhysicalPlan::QueryStage { output, .. } = stage.as_ref() else { return stage.clone() };
    if !config.adaptive_local_shuffle_reader {
        return stage.clone();
    }
    let spec = ShuffleReadSpec::ranges(coalesce(&[&output.bytes], config), true);
    Arc::new(PhysicalPlan::ShuffleRead { spec, child: stage.clone() })
}

/// The side of a join that feeds it without a shuffle it needed only for this join: a finished
/// stage is read locally (when `local`; else as it is, keeping its hash layout for the
/// operators above), an exchange that has not run is dropped.
fn unshuffled(side: &Arc<PhysicalPlan>, config: &Config, local: bool) -> Arc<PhysicalPlan> {
    match side.as_ref() {
        PhysicalPlan::Sort { global: false, child, .. } => unshuffled(child, config, local),
        PhysicalPlan::QueryStage { kind: QueryStageKind::Shuffle, .. } if local && shuffle_origin(side) == ShuffleOrigin::EnsureRequirements => local_read(side, config),
        PhysicalPlan::QueryStage { kind: QueryStageKind::Shuffle, .. } => side.clone(),
        PhysicalPlan::Exchange { partitioning: Partitioning::Hash(..), origin: ShuffleOrigin::EnsureRequirements, child, .. } => child.clone(),
        _ => side.clone(),
    }
}

/// `DynamicJoinSelection`: shuffled joins with a finished side under the broadcast threshold
/// become broadcast hash joins, the other side read locally when `local`. Returns the plan and
/// whether anything changed.
pub fn convert_joins(plan: &Arc<PhysicalPlan>, config: &Config, local: bool, next_plan_id: &mut dyn FnMut() -> u64) -> (Arc<PhysicalPlan>, bool) {
    let mut changed = false;
    let children: Vec<Arc<PhysicalPlan>> = plan
        .children()
        .into_iter()
        .map(|c| {
            let (c, ch) = convert_joins(c, config, local, next_plan_id);
            changed |= ch;
            c
        })
        .collect();
    let node = plan.with_children_if_changed(children);
    let (left_keys, right_keys, join_type, condition, left, right) = match node.as_ref() {
        PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, left, right }
        | PhysicalPlan::HashJoin { kind: HashJoinKind::Shuffled, left_keys, right_keys, join_type, condition, left, right, .. } => {
            (left_keys, right_keys, *join_type, condition, left, right)
        }
        _ => return (node, changed),
    };
    let Some(threshold) = broadcast_threshold(config) else { return (node, changed) };
    // Converting before the other side has run saves its shuffle but bets that this side is
    // the smaller: only a side well under the threshold takes the bet; one near it waits for
    // the other side, which may turn out smaller (TPC-H Q8: 457k orders rows against 44k
    // lineitem rows after the part join).
    let other_finished = |side: &Arc<PhysicalPlan>| finished_shuffle(side).is_some();
    let fits_beside = |side: &Arc<PhysicalPlan>, other: &Arc<PhysicalPlan>| {
        let late = other_finished(other);
        let limit = if late { threshold } else { threshold / EAGER_BROADCAST_SHARE };
        let stage = finished_shuffle(side)?;
        let rows = match stage.as_ref() {
            PhysicalPlan::QueryStage { output, .. } => output.total_rows(),
            _ => u64::MAX,
        };
        Some(stage_bytes(stage)).filter(|b| *b <= limit && (!late || rows <= LATE_BROADCAST_MAX_ROWS))
    };
    let fits = |side: &Arc<PhysicalPlan>| fits_beside(side, if Arc::ptr_eq(side, left) { right } else { left });
    let can_build_right = matches!(join_type, JoinType::Inner | JoinType::Cross | JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti);
    let can_build_left = matches!(join_type, JoinType::Inner | JoinType::Cross | JoinType::RightOuter);
    let build = match (fits(left).filter(|_| can_build_left), fits(right).filter(|_| can_build_right)) {
        (Some(l), Some(r)) if l < r => BuildSide::BuildLeft,
        (_, Some(_)) => BuildSide::BuildRight,
        (Some(_), None) => BuildSide::BuildLeft,
        (None, None) => return (node, changed),
    };
    let broadcast = |side: &Arc<PhysicalPlan>, keys: &[Expr], next_plan_id: &mut dyn FnMut() -> u64| -> Arc<PhysicalPlan> {
        let stage = finished_shuffle(side).cloned().unwrap_or_else(|| side.clone());
        Arc::new(PhysicalPlan::BroadcastExchange { keys: keys.to_vec(), null_aware: false, plan_id: next_plan_id(), child: local_read(&stage, config) })
    };
    let (new_left, new_right) = match build {
        BuildSide::BuildLeft => (broadcast(left, left_keys, next_plan_id), unshuffled(right, config, local)),
        BuildSide::BuildRight => (unshuffled(left, config, local), broadcast(right, right_keys, next_plan_id)),
    };
    let join = PhysicalPlan::HashJoin {
        kind: HashJoinKind::Broadcast,
        left_keys: left_keys.clone(),
        right_keys: right_keys.clone(),
        join_type,
        build_side: build,
        condition: condition.clone(),
        null_aware: false,
        left: new_left,
        right: new_right,
    };
    (Arc::new(join), true)
}

/// `CoalesceShufflePartitions`' target: per output partition, about the advisory size, or
/// (parallelism first) the total spread over `minPartitionNum` partitions, but not below the
/// minimum size.
fn target_size(total: u64, config: &Config) -> u64 {
    let advisory = config.adaptive_advisory_partition_bytes.max(1) as u64;
    if !config.adaptive_parallelism_first {
        return advisory;
    }
    let parallelism = config.adaptive_min_partition_num().max(1) as u64;
    total.div_ceil(parallelism).min(advisory).max(config.adaptive_min_partition_bytes.max(1) as u64)
}

/// Contiguous ranges of partitions, each about `target_size` over all the stages read
/// together (`ShufflePartitionsUtil.coalescePartitions`): a range ends before the partition
/// that would take it over the target, then a range under a fifth of the target joins its
/// neighbour when the two stay within 1.2 times it.
pub fn coalesce(sizes: &[&[u64]], config: &Config) -> Vec<(usize, usize)> {
    let n = sizes.first().map_or(0, |s| s.len());
    let size_of = |i: usize| sizes.iter().map(|s| s.get(i).copied().unwrap_or(0)).sum::<u64>();
    let total: u64 = (0..n).map(size_of).sum();
    let target = target_size(total, config);
    coalesce_range(0, n, &size_of, target)
}

fn coalesce_range(start: usize, end: usize, size_of: &dyn Fn(usize) -> u64, target: u64) -> Vec<(usize, usize)> {
    let mut ranges: Vec<(usize, usize, u64)> = vec![];
    let (mut from, mut acc) = (start, 0u64);
    for i in start..end {
        let s = size_of(i);
        if i > from && acc + s > target {
            ranges.push((from, i, acc));
            from = i;
            acc = 0;
        }
        acc += s;
    }
    if end > from {
        ranges.push((from, end, acc));
    }
    // Merge ranges far under the target into a neighbour.
    let small = |s: u64| (s as f64) < target as f64 * 0.2;
    let mut merged: Vec<(usize, usize, u64)> = vec![];
    for r in ranges {
        match merged.last_mut() {
            Some(last) if (small(r.2) || small(last.2)) && ((last.2 + r.2) as f64) <= target as f64 * 1.2 => {
                last.1 = r.1;
                last.2 += r.2;
            }
            _ => merged.push(r),
        }
    }
    merged.into_iter().map(|(s, e, _)| (s, e)).collect()
}

/// The median of some sizes.
fn median(sizes: &[u64]) -> u64 {
    let mut v = sizes.to_vec();
    v.sort_unstable();
    match v.len() {
        0 => 0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

/// `OptimizeSkewedJoin` for one sort-merge join over two finished shuffles of equal width:
/// the read specs of both sides when some partition is skewed (partitions far above the
/// median split into parts of about the target size, the other side's partition read once
/// per part; the partitions between coalesced as usual).
pub fn skew_join_reads(join_type: JoinType, left: &[u64], right: &[u64], config: &Config) -> Option<(ShuffleReadSpec, ShuffleReadSpec)> {
    if !config.adaptive_skew_join_enabled || left.len() != right.len() || left.is_empty() {
        return None;
    }
    let threshold = |sizes: &[u64]| (config.adaptive_skew_threshold_bytes.max(0) as u64).max((median(sizes) as f64 * config.adaptive_skew_factor) as u64);
    // Parts of about the advisory size, or the average of the partitions that are not skewed.
    let target = |sizes: &[u64], thr: u64| {
        let normal: Vec<u64> = sizes.iter().copied().filter(|s| *s <= thr).collect();
        let avg = if normal.is_empty() { 0 } else { normal.iter().sum::<u64>() / normal.len() as u64 };
        (config.adaptive_advisory_partition_bytes.max(1) as u64).max(avg).max(1)
    };
    let can_split_left = matches!(join_type, JoinType::Inner | JoinType::Cross | JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti);
    let can_split_right = matches!(join_type, JoinType::Inner | JoinType::Cross | JoinType::RightOuter);
    let (lt, rt) = (threshold(left), threshold(right));
    let (ltarget, rtarget) = (target(left, lt), target(right, rt));
    let splits = |size: u64, thr: u64, tgt: u64, allowed: bool| if allowed && size > thr { size.div_ceil(tgt).max(2) as usize } else { 1 };
    let counts: Vec<(usize, usize)> =
        (0..left.len()).map(|p| (splits(left[p], lt, ltarget, can_split_left), splits(right[p], rt, rtarget, can_split_right))).collect();
    if counts.iter().all(|c| *c == (1, 1)) {
        return None;
    }
    let mut l = vec![];
    let mut r = vec![];
    let both = |i: usize| left[i] + right[i];
    let coalesce_target = target_size(left.iter().sum::<u64>() + right.iter().sum::<u64>(), config);
    let mut p = 0;
    while p < left.len() {
        if counts[p] == (1, 1) {
            // A run of partitions that are not skewed: coalesced together on both sides.
            let end = (p..left.len()).find(|&q| counts[q] != (1, 1)).unwrap_or(left.len());
            for (s, e) in coalesce_range(p, end, &both, coalesce_target) {
                l.push(ReadPart::Partitions(s, e));
                r.push(ReadPart::Partitions(s, e));
            }
            p = end;
            continue;
        }
        let (ln, rn) = counts[p];
        let part = |index: usize, of: usize| if of == 1 { ReadPart::Partitions(p, p + 1) } else { ReadPart::Slice { partition: p, index, of } };
        for li in 0..ln {
            for ri in 0..rn {
                l.push(part(li, ln));
                r.push(part(ri, rn));
            }
        }
        p += 1;
    }
    Some((ShuffleReadSpec { parts: l, local: false }, ShuffleReadSpec { parts: r, local: false }))
}

/// `bytes` after a filter: halved for each comparison of a column with a literal (at most four
/// times), a guess where no statistics are at hand, so that of two shuffles the filtered one runs
/// first — and a join whose filtered side turns out small becomes a broadcast before its other side
/// is shuffled (TPC-H Q10: three months of orders against all customers).
fn filtered_share(condition: &Expr, bytes: u64) -> u64 {
    let literal = |e: &Expr| matches!(e, Expr::Literal(_));
    let compares = condition
        .split_conjunction()
        .into_iter()
        .filter(|c| matches!(c, Expr::Binary { op, left, right } if op.is_comparison() && literal(left) != literal(right)))
        .count()
        .min(4);
    bytes >> compares
}

/// Estimated bytes a subtree produces in memory, to run the smaller of two ready stages first:
/// finished stages their real size, scans their decoded columns, a filter its input's share
/// (`filtered_share`), a semi or anti join its left side, everything else the sum of its inputs.
pub fn estimated_bytes(plan: &PhysicalPlan) -> u64 {
    match plan {
        PhysicalPlan::QueryStage { output, .. } => output.total_bytes(),
        PhysicalPlan::FileScan { table, output, selected_files, .. } => match &table.source {
            TableSource::Parquet(t) => selected_files.iter().filter_map(|f| t.files.get(*f)).map(|f| decoded_bytes(f, output)).fold(0u64, u64::saturating_add),
            TableSource::Memory(_) => u64::try_from(table.memory_bytes()).unwrap_or(u64::MAX),
            TableSource::Provider(p) => provided_bytes(p, &table.schema, output.len()),
            TableSource::Text(t) => {
                let width = t.schema.fields().len().max(1) as u64;
                (t.files_size() as u64).saturating_mul(output.len().min(width as usize) as u64) / width
            }
        },
        PhysicalPlan::InMemoryScan { table, output, .. } => match &table.source {
            TableSource::Memory(_) => {
                let width = table.schema.fields().len().max(1) as u64;
                u64::try_from(table.memory_bytes()).unwrap_or(u64::MAX).saturating_mul(output.len() as u64) / width
            }
            TableSource::Provider(p) => provided_bytes(p, &table.schema, output.len()),
            TableSource::Parquet(_) | TableSource::Text(_) => 0,
        },
        PhysicalPlan::LocalTableScan { data, .. } => data.iter().map(|b| b.get_array_memory_size() as u64).sum(),
        PhysicalPlan::Range { range, .. } => u64::try_from(8 * range.count()).unwrap_or(u64::MAX),
        PhysicalPlan::Filter { condition, child } => filtered_share(condition, estimated_bytes(child)),
        PhysicalPlan::SortMergeJoin { join_type: JoinType::LeftSemi | JoinType::LeftAnti, left, .. }
        | PhysicalPlan::HashJoin { join_type: JoinType::LeftSemi | JoinType::LeftAnti, left, .. } => estimated_bytes(left),
        other => other.children().into_iter().map(|c| estimated_bytes(c)).fold(0u64, u64::saturating_add),
    }
}

/// What `columns` of a Parquet file take decoded: rows times the width of a fixed-width type,
/// the uncompressed column chunks of others (compressed file bytes would rank a scan of a
/// well-compressed table below a smaller stage already in memory).
fn decoded_bytes(file: &crate::datasource::parquet::ParquetFile, columns: &[crate::expr::Attribute]) -> u64 {
    let meta = file.metadata.metadata();
    let rows = meta.file_metadata().num_rows().max(0) as u64;
    let schema = meta.file_metadata().schema_descr();
    columns
        .iter()
        .map(|a| match a.data_type.primitive_width() {
            Some(w) => rows.saturating_mul(w as u64),
            None => (0..schema.num_columns())
                .filter(|i| schema.column(*i).path().parts().first().is_some_and(|p| p.eq_ignore_ascii_case(&a.name)))
                .flat_map(|i| meta.row_groups().iter().map(move |g| g.column(i).uncompressed_size().max(0) as u64))
                .fold(0u64, u64::saturating_add),
        })
        .fold(0u64, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: &[(&str, &str)]) -> Config {
        let mut c = Config::default();
        for (k, v) in pairs {
            c.set(k, v).expect("setting");
        }
        c
    }

    #[test]
    fn small_partitions_coalesce_to_the_target_and_tiny_ones_join_a_neighbour() {
        let c = config(&[("spark.sql.adaptive.advisoryPartitionSizeInBytes", "100"), ("spark.sql.adaptive.coalescePartitions.parallelismFirst", "false")]);
        // 40+40 fit, +30 would not; 30+50 fit; 5 is tiny and joins 90 -> 95 <= 120.
        assert_eq!(coalesce(&[&[40, 40, 30, 50, 5]], &c), vec![(0, 2), (2, 5)]);
        // Two stages read together are summed per partition.
        assert_eq!(coalesce(&[&[60, 60], &[30, 30]], &c), vec![(0, 1), (1, 2)]);
        // Parallelism first: the total over the cores, but at least the minimum size (1 MiB).
        let c = Config::default();
        assert_eq!(coalesce(&[&[10; 8]], &c), vec![(0, 8)]);
    }

    #[test]
    fn a_skewed_partition_is_split_and_its_partner_replicated() {
        let c = config(&[
            ("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "100"),
            ("spark.sql.adaptive.advisoryPartitionSizeInBytes", "100"),
            ("spark.sql.adaptive.coalescePartitions.parallelismFirst", "false"),
        ]);
        let left = [10, 10, 450, 10];
        let right = [10, 10, 10, 10];
        let (l, r) = skew_join_reads(JoinType::Inner, &left, &right, &c).expect("skewed");
        let split: Vec<_> = l.parts.iter().filter(|p| matches!(p, ReadPart::Slice { partition: 2, .. })).collect();
        assert_eq!(split.len(), 5, "{l:?}");
        assert_eq!(r.parts.iter().filter(|p| **p == ReadPart::Partitions(2, 3)).count(), 5, "{r:?}");
        assert_eq!(l.parts.len(), r.parts.len());
        assert_eq!(l.description(), "coalesced and skewed");
        // A left outer join cannot split its right side.
        assert!(skew_join_reads(JoinType::LeftOuter, &right, &left, &c).is_none());
    }
}

/// A provided table's bytes for `columns` of its columns, as its statistics say (0: unknown).
fn provided_bytes(p: &crate::datasource::provider::ProvidedTable, schema: &arrow::datatypes::SchemaRef, columns: usize) -> u64 {
    let width = schema.fields().len().max(1) as u64;
    p.statistics().bytes.unwrap_or(0).saturating_mul(columns as u64) / width
}
