//! `HashAggregate`: a per-partition breaker grouping its input in a hash table. A partial
//! aggregate under an exchange may run as fewer tasks than its input has partitions, each
//! task reading several input partitions in runs (`run_stream`).

use std::cell::Cell;
use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::{key, Executor, State};
use crate::exec::interpreted::HashAggregator;
use crate::exec::stream::{deferred, BatchStream};
use crate::physical::adaptive::{batch_bytes, ReadPart};
use crate::physical::{AggregateMode, PhysicalPlan, QueryStageKind};
use arrow::record_batch::RecordBatch;

/// Partition (task) `i`: its groups, once its input is read.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, child } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let input = exec.attrs(child);
    let parts = exec.task_parts(plan, child, i);
    let held = exec.reserve(plan);
    Ok(deferred(move || {
        let cursor = Cell::new(0);
        // The finished runs' rows, held with the groups of the run going on.
        let (mut out, mut out_bytes) = (vec![], 0);
        // One run unless the task is merged (see `run_stream`).
        let rows = exec.known_rows(child, &parts);
        while cursor.get() < parts.len() {
            let mut agg = HashAggregator::new(*mode, grouping, aggregates, result, input)?.flushing_at(config.partial_flush_groups).expecting_rows(rows);
            for b in exec.run_stream(child, &parts, &cursor) {
                let b = b?;
                // The growth first: refused, it is never allocated.
                held.resize(out_bytes + agg.memory_size_after(b.num_rows()))?;
                agg.push(&b)?;
                held.resize(out_bytes + agg.memory_size())?;
            }
            let rows = agg.finish()?;
            out_bytes += rows.iter().map(batch_bytes).sum::<u64>();
            held.resize(out_bytes)?;
            out.extend(rows);
        }
        Ok(out)
    }))
}

impl<'a> Executor<'a> {
    /// How many partitions (tasks) an aggregate over `input` partitions runs as: fewer when
    /// its partial tables are merged across input partitions.
    pub(in crate::exec) fn tasks(&self, aggregate: &Arc<PhysicalPlan>, input: usize) -> usize {
        self.merged.get(&key(aggregate)).map_or(input, |k| input.min(*k))
    }

    /// The input partitions of task `i` of `aggregate`: partition `i`, or, when the aggregate's
    /// tasks are merged, partitions i, i + k, i + 2k ...
    pub(in crate::exec) fn task_parts(&self, aggregate: &Arc<PhysicalPlan>, input: &Arc<PhysicalPlan>, i: usize) -> Vec<usize> {
        match self.merged.get(&key(aggregate)) {
            Some(&k) => (i..self.partitions(input)).step_by(k.max(1)).collect(),
            None => vec![i],
        }
    }

    /// The rows partitions `parts` of `input` hold, where known before they are read: a
    /// shuffle stage's output, read whole or coalesced (a final aggregate sizes its table by
    /// them).
    pub(in crate::exec) fn known_rows(&self, input: &Arc<PhysicalPlan>, parts: &[usize]) -> Option<usize> {
        let rows = |output: &crate::physical::adaptive::StageOutput, p: usize| output.rows.get(p).copied().unwrap_or(0) as usize;
        match input.as_ref() {
            PhysicalPlan::QueryStage { output, kind: QueryStageKind::Shuffle, .. } => Some(parts.iter().map(|p| rows(output, *p)).sum()),
            PhysicalPlan::ShuffleRead { spec, child } => {
                let PhysicalPlan::QueryStage { output, .. } = child.as_ref() else { return None };
                Some(
                    parts
                        .iter()
                        .map(|p| match spec.parts.get(*p) {
                            Some(ReadPart::Partitions(start, end)) => (*start..*end).map(|q| rows(output, q)).sum(),
                            Some(ReadPart::Slice { partition, of, .. }) => rows(output, *partition).div_ceil((*of).max(1)),
                            None => 0,
                        })
                        .sum(),
                )
            }
            _ => None,
        }
    }

    /// One run of an aggregate task's input: `parts` of `input` from `cursor` on, one after
    /// another, ending at a partition boundary once it has `kiln.aggregate.partialRunRows` rows
    /// (so a merged partial table stays bounded). `cursor` moves past each partition begun.
    pub(in crate::exec) fn run_stream<'c>(&'c self, input: &'c Arc<PhysicalPlan>, parts: &'c [usize], cursor: &'c Cell<usize>) -> impl Iterator<Item = Result<RecordBatch>> + 'c {
        let (mut rows, mut begun) = (0, false);
        let mut current: Option<BatchStream<'c>> = None;
        std::iter::from_fn(move || loop {
            if let Some(s) = &mut current {
                match s.next() {
                    Some(b) => {
                        rows += b.as_ref().map_or(0, |b| b.num_rows());
                        return Some(b);
                    }
                    None => current = None,
                }
            }
            // A run takes at least one partition, so every run moves the cursor.
            let p = cursor.get();
            if p >= parts.len() || (begun && rows >= self.config.partial_run_rows) {
                return None;
            }
            begun = true;
            cursor.set(p + 1);
            match self.stream(input, parts[p]) {
                Ok(s) => current = Some(s),
                Err(e) => return Some(Err(e)),
            }
        })
    }

    /// A partial aggregate under an exchange keeps one table per task, not per input partition,
    /// as morsel-driven engines keep one per thread: a group seen in several input partitions is
    /// then one partial row, not one per partition, so the exchange and the final aggregate see
    /// fewer rows (TPC-H Q17 from Parquet: 53 partitions of lineitem left 4.6M partial rows for
    /// 200k groups). The partial rows' partitioning does not matter: the exchange redistributes
    /// them. Not for a stage whose shuffled join reads its own partition of a build side.
    pub(in crate::exec) fn merge_partial_aggregate(&mut self, child: &Arc<PhysicalPlan>) {
        let aggregate = match child.as_ref() {
            PhysicalPlan::WholeStageCodegen { child: top, .. } => {
                if let Some(State::Stage(s)) = self.states.get(&key(child)) {
                    if s.spec.joins().iter().any(|j| !j.broadcast) {
                        return;
                    }
                }
                top
            }
            _ => child,
        };
        if self.config.partial_run_rows == 0 || !matches!(aggregate.as_ref(), PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, .. }) {
            return;
        }
        // Enough tasks for work stealing to even out unequal partitions.
        let k = 2 * rayon::current_num_threads().max(1);
        if self.partitions(child) > k {
            self.merged.insert(key(aggregate), k);
        }
    }
}
