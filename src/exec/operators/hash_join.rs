//! `HashJoin` (Spark's `BroadcastHashJoinExec` and `ShuffledHashJoinExec`). A broadcast join
//! is a breaker on its build side: prepared, its table is built once and probed by every
//! stream partition; a shuffled join builds partition `i`'s table when first pulled, and
//! when its sides do not fit its share of the memory limit it writes both out by a hash of
//! their keys and joins them a partition pair at a time (a grace hash join, `SidesSpill`).
//! The output streams in pieces of at most a batch. The join-side helpers serve every join.

use std::sync::Arc;

use super::not_this;
use crate::common::spill::{spill_folder, PartitionFiles, SpillFile, SPILL_LEVELS};
use crate::error::Result;
use crate::exec::state::{key, Executor, State};
use crate::exec::interpreted;
use crate::exec::interpreted::join::HashTable;
use crate::common::memory::Reservation;
use crate::exec::stream::{collect_reserved, deferred_stream, BatchStream};
use crate::hashtable::join_table::JoinTable;
use crate::expr::eval::evaluate_all;
use crate::expr::{Attribute, Expr};
use crate::physical::adaptive::batch_bytes;
use crate::physical::metrics::OperatorMetrics;
use crate::physical::{BuildSide, HashJoinKind, PhysicalPlan};
use crate::plan::JoinType;
use arrow::array::ArrayRef;
use arrow::compute::cast;
use arrow::record_batch::RecordBatch;

/// One side of a join partition, drained when the join first runs, what it holds taken from
/// the join's reservation.
pub(in crate::exec) type Drain<'a> = Box<dyn FnOnce(&Reservation) -> Result<Vec<RecordBatch>> + 'a>;

/// Builds a broadcast join's table (after its build side's pipeline ran), then prepares the
/// stream side.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    let PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, left_keys, right_keys, build_side, join_type, null_aware, left, right, .. } = plan.as_ref() else {
        return Err(not_this(plan));
    };
    let (keys, build, stream, stream_keys) = match build_side {
        BuildSide::BuildRight => (right_keys, right, left, left_keys),
        BuildSide::BuildLeft => (left_keys, left, right, right_keys),
    };
    // The build side first: the inner joins below in the pipeline keep only the
    // build rows this table matches (as a compiled stage's `matching_joins`).
    exec.prepare(build)?;
    let held = exec.reserve(plan);
    let mut rows = exec.drain_reserved(build, &held)?.concat();
    for (later, keys) in exec.matching.remove(&key(plan)).unwrap_or_default() {
        if let Some(State::JoinTable(t)) = exec.states.get(&later) {
            rows = interpreted::join::rows_matching(rows, exec.attrs(build), &keys, t.join_table())?;
        }
    }
    exec.ops.of(plan).add_build_rows(rows.iter().map(|b| b.num_rows() as u64).sum());
    let table = HashTable::build(keys, (exec.attrs(build), rows))?;
    held.resize(table.memory_size())?;
    exec.held.push(held);
    exec.states.insert(key(plan), State::JoinTable(table));
    if !null_aware && matches!((join_type, build_side), (JoinType::Inner, _) | (JoinType::LeftSemi, BuildSide::BuildRight)) {
        for (below, below_build) in exec.inner_joins_below(stream) {
            if interpreted::join::keys_read_only(stream_keys, exec.attrs(below_build)) {
                exec.matching.entry(key(below)).or_default().push((key(plan), stream_keys.clone()));
            }
        }
    }
    exec.prepare(stream)?;
    Ok(())
}

/// Partition `i` of the join: the stream side's partition probing the broadcast table, or both sides' partitions.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::HashJoin { kind, left_keys, right_keys, join_type, build_side, condition, null_aware, left, right } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let (lo, ro) = (exec.attrs(left), exec.attrs(right));
    let piece = config.batch_size;
    if let Some(State::JoinTable(table)) = exec.states.get(&key(plan)) {
        let (probe_keys, stream, stream_attrs) = match build_side {
            BuildSide::BuildRight => (left_keys, left, lo),
            BuildSide::BuildLeft => (right_keys, right, ro),
        };
        return Ok(Box::new(exec.stream(stream, i)?.flat_map(move |b| -> BatchStream<'s> {
            match b.and_then(|b| interpreted::join::probe_stream(*join_type, *null_aware, probe_keys, condition.as_ref(), *build_side, table, (stream_attrs, vec![b]), piece)) {
                Ok(out) => Box::new(out),
                Err(e) => Box::new(std::iter::once(Err(e))),
            }
        })));
    }
    if *kind == HashJoinKind::Shuffled && !null_aware && !left_keys.is_empty() {
        let sides = [exec.stream(left, i)?, exec.stream(right, i)?];
        return Ok(deferred_stream(exec.reserve(plan), move |held| join_sides(exec, plan, sides, held, 0)));
    }
    let (l, r) = exec.join_inputs(*kind == HashJoinKind::Broadcast, *build_side, left, right, i)?;
    let held = exec.reserve(plan);
    Ok(deferred_stream(held, move |held| {
        let out = interpreted::join::hash_join_stream(*join_type, *null_aware, left_keys, right_keys, condition.as_ref(), *build_side, (lo, l(held)?), (ro, r(held)?), piece)?;
        Ok(Box::new(out) as BatchStream<'s>)
    }))
}

/// A shuffled join of `sides` (left, right), the build side read first: both held while they
/// fit the task's share of the memory limit, else both written out by their keys and joined a
/// partition pair at a time. `level`: how many times these rows were partitioned before (at
/// the last level they are held whatever the share, as far as the limit allows).
fn join_sides<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, mut sides: [BatchStream<'s>; 2], held: &Reservation, level: u32) -> Result<BatchStream<'s>> {
    let PhysicalPlan::HashJoin { left_keys, right_keys, join_type, build_side, condition, left, right, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let attrs = [exec.attrs(left), exec.attrs(right)];
    let order = if *build_side == BuildSide::BuildRight { [1, 0] } else { [0, 1] };
    let share = held.task_share();
    let mut rows: [Vec<RecordBatch>; 2] = [vec![], vec![]];
    let (mut data, mut build_rows) = (0, 0);
    for (n, s) in order.into_iter().enumerate() {
        while let Some(b) = sides[s].next() {
            let b = b?;
            data += batch_bytes(&b);
            if n == 0 {
                build_rows += b.num_rows();
            }
            let need = join_bytes(data, build_rows, left_keys.len());
            if level >= SPILL_LEVELS {
                held.resize(need)?;
            } else if need > share || held.resize(need).is_err() {
                let mut spill = SidesSpill::new(exec, plan, [(left_keys, attrs[0]), (right_keys, attrs[1])], level);
                for (side, batches) in rows.into_iter().enumerate() {
                    spill.write_stream(side, batches.into_iter().map(Ok))?;
                }
                held.resize(0)?;
                spill.write(s, &b)?;
                spill.write_stream(s, sides[s].by_ref())?;
                if n == 0 {
                    spill.write_stream(order[1], sides[order[1]].by_ref())?;
                }
                let pairs = spill.finish()?;
                return Ok(Box::new(pairs.into_iter().flat_map(move |pair| joined_pair(exec, plan, pair, level + 1))));
            }
            rows[s].push(b);
        }
    }
    let [l, r] = rows;
    let out = interpreted::join::hash_join_stream(*join_type, false, left_keys, right_keys, condition.as_ref(), *build_side, (attrs[0], l), (attrs[1], r), exec.config.batch_size)?;
    Ok(Box::new(out))
}

/// What a join holding `data` bytes of rows reserves for them: the rows, their copy in one
/// batch, and a hash table over its build side's `build_rows` rows and `keys` keys.
pub(in crate::exec) fn join_bytes(data: u64, build_rows: usize, keys: usize) -> u64 {
    2 * data + JoinTable::bytes_for(build_rows, keys)
}

/// One partition pair of a spilled shuffled join, joined; what it holds is reserved until its
/// output ends.
fn joined_pair<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, pair: [Option<SpillFile>; 2], level: u32) -> BatchStream<'s> {
    let held = exec.reserve(plan);
    let joined = read_pair(&pair).and_then(|sides| join_sides(exec, plan, sides, &held, level));
    // Both sides were read whole (held or written out again): the files can go.
    drop(pair);
    match joined {
        Ok(out) => Box::new(out.map(move |b| {
            let _ = &held;
            b
        })),
        Err(e) => Box::new(std::iter::once(Err(e))),
    }
}

/// A spilled partition pair's two sides' batches (none for a side nothing was written to).
pub(in crate::exec) fn read_pair<'s>(pair: &[Option<SpillFile>; 2]) -> Result<[BatchStream<'s>; 2]> {
    let read = |file: &Option<SpillFile>| -> Result<BatchStream<'s>> {
        Ok(match file {
            Some(f) => Box::new(f.read()?),
            None => Box::new(std::iter::empty()),
        })
    };
    Ok([read(&pair[0])?, read(&pair[1])?])
}

/// A join's two sides written out by a hash of their keys, when they do not fit together in
/// memory: partition p of one side meets only partition p of the other, so each pair is joined
/// on its own (and partitioned again a level down when it still does not fit). The second
/// side's keys are cast to the first's types, so equal keys hash alike.
pub(in crate::exec) struct SidesSpill<'s> {
    metrics: Arc<OperatorMetrics>,
    level: u32,
    /// Each side's keys and the columns they are over.
    sides: [(&'s [Expr], &'s [Attribute]); 2],
    files: [PartitionFiles; 2],
}

impl<'s> SidesSpill<'s> {
    /// Nothing written yet for `plan`'s sides, partitioned for the `level`th time.
    pub(in crate::exec) fn new(exec: &Executor<'_>, plan: &Arc<PhysicalPlan>, sides: [(&'s [Expr], &'s [Attribute]); 2], level: u32) -> SidesSpill<'s> {
        let files = || PartitionFiles::new(spill_folder(&exec.config.local_dir), exec.control.spill());
        SidesSpill { metrics: exec.ops.of(plan), level, sides, files: [files(), files()] }
    }

    /// Writes `batch`, rows of side `side`, to its partitions.
    pub(in crate::exec) fn write(&mut self, side: usize, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let columns = side_keys(&self.sides, side, batch)?;
        self.files[side].write_hashed(batch, &columns, self.level)
    }

    /// Writes every batch of `batches`, rows of side `side`.
    pub(in crate::exec) fn write_stream(&mut self, side: usize, batches: impl Iterator<Item = Result<RecordBatch>>) -> Result<()> {
        for b in batches {
            self.write(side, &b?)?;
        }
        Ok(())
    }

    /// The partition pairs written (a side's file `None` when no row went to it), the files
    /// counted on the operator.
    pub(in crate::exec) fn finish(self) -> Result<Vec<[Option<SpillFile>; 2]>> {
        let [first, second] = self.files;
        let (first, second) = (first.finish()?, second.finish()?);
        let (n, mut first, mut second) = (first.len().max(second.len()), first.into_iter(), second.into_iter());
        let pairs: Vec<[Option<SpillFile>; 2]> = (0..n).map(|_| [first.next().flatten(), second.next().flatten()]).filter(|p| p.iter().any(Option::is_some)).collect();
        pairs.iter().flatten().flatten().for_each(|f| self.metrics.add_spill(f));
        Ok(pairs)
    }
}

/// Side `side`'s join keys over `batch` (rows of that side), the second side's cast to the
/// first's types, so equal keys of both sides hash and encode alike.
pub(in crate::exec) fn side_keys(sides: &[(&[Expr], &[Attribute]); 2], side: usize, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
    let (keys, attrs) = sides[side];
    let mut columns = evaluate_all(keys, batch, attrs)?;
    if side == 1 {
        for (c, k) in columns.iter_mut().zip(sides[0].0) {
            let t = k.data_type()?;
            if c.data_type() != &t {
                *c = cast(c, &t)?;
            }
        }
    }
    Ok(columns)
}

impl<'a> Executor<'a> {
    /// The broadcast inner hash joins of the pipeline below `plan` (through Projects, Filters
    /// and broadcast hash joins' stream sides), each with its build side.
    pub(in crate::exec) fn inner_joins_below(&self, plan: &'a Arc<PhysicalPlan>) -> Vec<(&'a Arc<PhysicalPlan>, &'a Arc<PhysicalPlan>)> {
        let mut out = vec![];
        let mut at = plan;
        loop {
            match at.as_ref() {
                PhysicalPlan::Project { child, .. } | PhysicalPlan::Filter { child, .. } => at = child,
                PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, join_type, build_side, left, right, .. } => {
                    let (build, stream) = match build_side {
                        BuildSide::BuildRight => (right, left),
                        BuildSide::BuildLeft => (left, right),
                    };
                    if *join_type == JoinType::Inner {
                        out.push((at, build));
                    }
                    at = stream;
                }
                _ => return out,
            }
        }
    }


    /// The two sides of partition `i` of a join, drained when the join first runs: for a
    /// broadcast, the whole build side (prepared) with the stream side's partition i; else both
    /// sides' partition i.
    pub(in crate::exec) fn join_inputs<'s>(&'s self, broadcast: bool, build_side: BuildSide, left: &'s Arc<PhysicalPlan>, right: &'s Arc<PhysicalPlan>, i: usize) -> Result<(Drain<'s>, Drain<'s>)> {
        let side = |p: &'s Arc<PhysicalPlan>| -> Result<Drain<'s>> {
            let s = self.stream(p, i)?;
            Ok(Box::new(move |held| collect_reserved(s, held)))
        };
        Ok(match (broadcast, build_side) {
            (true, BuildSide::BuildRight) => (side(left)?, self.build_side(right)?),
            (true, BuildSide::BuildLeft) => (self.build_side(left)?, side(right)?),
            (false, _) => (side(left)?, side(right)?),
        })
    }

    /// A broadcast side: the whole child, from the join's or the exchange's prepared state.
    pub(in crate::exec) fn build_side<'s>(&'s self, p: &'s Arc<PhysicalPlan>) -> Result<Drain<'s>> {
        let rows = match self.states.get(&key(p)) {
            Some(State::Partitions(parts)) => parts.concat(),
            _ => self.drain_all(p)?.concat(),
        };
        Ok(Box::new(move |_| Ok(rows)))
    }
}
