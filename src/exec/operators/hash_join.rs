//! `HashJoin` (Spark's `BroadcastHashJoinExec` and `ShuffledHashJoinExec`). A broadcast join
//! is a breaker on its build side: prepared, its table is built once and probed by every
//! stream partition; a shuffled join builds partition `i`'s table when first pulled. The
//! output streams in pieces of at most a batch. The join-side helpers serve every join.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::{key, Executor, State};
use crate::exec::interpreted;
use crate::exec::interpreted::join::HashTable;
use crate::common::memory::Reservation;
use crate::exec::stream::{collect_reserved, deferred_stream, BatchStream};
use crate::physical::{BuildSide, HashJoinKind, PhysicalPlan};
use crate::plan::JoinType;
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
    let (l, r) = exec.join_inputs(*kind == HashJoinKind::Broadcast, *build_side, left, right, i)?;
    let held = exec.reserve(plan);
    Ok(deferred_stream(held, move |held| {
        let out = interpreted::join::hash_join_stream(*join_type, *null_aware, left_keys, right_keys, condition.as_ref(), *build_side, (lo, l(held)?), (ro, r(held)?), piece)?;
        Ok(Box::new(out) as BatchStream<'s>)
    }))
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
