//! `HashAggregate`: a per-partition breaker grouping its input in a hash table. A partial
//! aggregate under an exchange may run as fewer tasks than its input has partitions, each
//! task reading several input partitions in runs (`run_stream`). When the memory budget
//! refuses its groups, they are written out ([`GroupSpill`]) and it starts again with none:
//! a partial aggregate's groups are output as they are (the final aggregate merges them), a
//! final or complete aggregate's go to hash partitions of their keys, each merged on its own.

use std::cell::Cell;
use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use super::not_this;
use crate::common::control::QueryControl;
use crate::common::memory::Reservation;
use crate::common::spill::{spill_folder, PartitionFiles, SpillFile, SpillablePartition, SPILL_LEVELS};
use crate::error::Result;
use crate::exec::interpreted::{state_attrs, HashAggregator};
use crate::exec::state::{key, Executor, State};
use crate::exec::stream::{deferred_stream, BatchStream};
use crate::expr::{Attribute, Expr};
use crate::physical::adaptive::{batch_bytes, ReadPart};
use crate::physical::metrics::OperatorMetrics;
use crate::physical::{AggregateExpr, AggregateMode, PhysicalPlan, QueryStageKind};

/// Partition (task) `i`: its groups, once its input is read.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, child } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let input = exec.attrs(child);
    let parts = exec.task_parts(plan, child, i);
    Ok(deferred_stream(exec.reserve(plan), move |held| {
        let cursor = Cell::new(0);
        let groups = exec.reserve(plan);
        let merger = (*mode != AggregateMode::Partial).then(|| Merger { grouping, aggregates, result, state: state_attrs(grouping, aggregates) });
        let mut spill = GroupSpill::new(exec, plan, merger);
        // The finished runs' rows, held (in `held`) with the groups of the run going on.
        let mut out = vec![];
        // One run unless the task is merged (see `run_stream`).
        let rows = exec.known_rows(child, &parts);
        while cursor.get() < parts.len() {
            let mut agg = HashAggregator::new(*mode, grouping, aggregates, result, input)?.flushing_at(config.partial_flush_groups).expecting_rows(rows);
            aggregate_into(&mut agg, exec.run_stream(child, &parts, &cursor), &groups, Some(&mut spill), exec.control)?;
            if spill.spilled() && *mode != AggregateMode::Partial {
                return spill.output(agg.take_states()?);
            }
            let rows = agg.finish()?;
            groups.resize(0)?;
            hold_run_output(&mut out, rows, held, &mut spill, *mode)?;
        }
        if spill.spilled() {
            return spill.output(out);
        }
        Ok(Box::new(out.into_iter().map(Ok)))
    }))
}

/// Feeds `input` to `agg`, its groups' memory held in `held`. When the budget refuses them,
/// they go to `spill` (where it is given and they can) and the aggregate starts again with none.
pub(in crate::exec) fn aggregate_into(
    agg: &mut HashAggregator<'_>,
    input: impl Iterator<Item = Result<RecordBatch>>,
    held: &Reservation,
    mut spill: Option<&mut GroupSpill<'_>>,
    control: &QueryControl,
) -> Result<()> {
    for b in input {
        let b = b?;
        // The growth first: refused, it is never allocated.
        let rows = b.num_rows();
        fit(agg, |a| a.memory_size_after(rows), held, spill.as_deref_mut(), control)?;
        agg.push(&b)?;
        fit(agg, |a| a.memory_size(), held, spill.as_deref_mut(), control)?;
    }
    Ok(())
}

/// Holds what `bytes` says `agg` takes; refused, its groups are spilled first (where they can
/// be), then what other operators free is waited for.
fn fit(agg: &mut HashAggregator<'_>, bytes: impl Fn(&HashAggregator<'_>) -> u64, held: &Reservation, spill: Option<&mut GroupSpill<'_>>, control: &QueryControl) -> Result<()> {
    let spill = spill.filter(|_| agg.can_spill());
    // Past its share (see `Reservation::task_share`) it spills even with room left.
    if spill.is_none() || bytes(agg) <= held.task_share() {
        match held.resize(bytes(agg)) {
            Ok(()) => return Ok(()),
            Err(refused) if spill.is_none() => return Err(refused),
            Err(_) => {}
        }
    }
    if let Some(spill) = spill {
        spill.write(agg.take_states()?)?;
    }
    held.resize_when_freed(bytes(agg), || control.check())
}

/// Adds a run's output `rows` to `out`, held in `held`; refused, a partial aggregate's output
/// is written out (it is its groups), any other's an error.
pub(in crate::exec) fn hold_run_output(out: &mut Vec<RecordBatch>, rows: Vec<RecordBatch>, held: &Reservation, spill: &mut GroupSpill<'_>, mode: AggregateMode) -> Result<()> {
    let bytes = rows.iter().map(batch_bytes).sum();
    out.extend(rows);
    if let Err(refused) = held.grow(bytes) {
        if mode != AggregateMode::Partial {
            return Err(refused);
        }
        spill.write(std::mem::take(out))?;
        held.resize(0)?;
    }
    Ok(())
}

/// What merges a final (or complete) aggregate's spilled groups: a final aggregate over their
/// state columns.
#[derive(Clone)]
pub(in crate::exec) struct Merger<'s> {
    pub grouping: &'s [Expr],
    pub aggregates: &'s [AggregateExpr],
    pub result: &'s [Expr],
    /// The spilled batches' columns: the grouping attributes, then every aggregate's buffer.
    pub state: Vec<Attribute>,
}

impl<'s> Merger<'s> {
    fn aggregator(&self) -> Result<HashAggregator<'s>> {
        HashAggregator::new(AggregateMode::Final, self.grouping, self.aggregates, self.result, self.state.clone())
    }
}

/// The groups an aggregate wrote out when the memory budget refused them. A partial
/// aggregate's go to one file, read back as its output; a final or complete aggregate's
/// (`merger` given) to hash partitions of their keys, each partition merged on its own
/// afterwards — as Spark's aggregate falls back to sorting, with no sort.
pub(in crate::exec) struct GroupSpill<'s> {
    control: &'s QueryControl,
    plan: &'s Arc<PhysicalPlan>,
    metrics: Arc<OperatorMetrics>,
    merger: Option<Merger<'s>>,
    /// How many times the groups were partitioned before (the partitions' hash seed).
    level: u32,
    files: PartitionFiles,
}

impl<'s> GroupSpill<'s> {
    /// Nothing spilled yet for `plan` (a HashAggregate, or the compiled stage it tops).
    pub(in crate::exec) fn new(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, merger: Option<Merger<'s>>) -> GroupSpill<'s> {
        let files = PartitionFiles::new(spill_folder(&exec.config.local_dir), exec.control.spill());
        GroupSpill { control: exec.control, plan, metrics: exec.ops.of(plan), merger, level: 0, files }
    }

    /// Whether any group was written out.
    pub(in crate::exec) fn spilled(&self) -> bool {
        self.files.written()
    }

    /// Writes out groups' state (or a partial aggregate's output).
    pub(in crate::exec) fn write(&mut self, batches: Vec<RecordBatch>) -> Result<()> {
        for b in batches.iter().filter(|b| b.num_rows() > 0) {
            match &self.merger {
                None => self.files.write_to(0, b)?,
                Some(m) => self.files.write_hashed(b, &b.columns()[..m.grouping.len()], self.level)?,
            }
        }
        Ok(())
    }

    /// The aggregate's output, `rest` being what it still holds: a partial aggregate's
    /// spilled groups then `rest`; a final aggregate's partitions (`rest` written out too)
    /// merged one at a time as the output is pulled.
    pub(in crate::exec) fn output(mut self, rest: Vec<RecordBatch>) -> Result<BatchStream<'s>> {
        let rest = match self.merger {
            Some(_) => {
                self.write(rest)?;
                vec![]
            }
            None => rest,
        };
        let GroupSpill { control, plan, metrics, merger, level, files } = self;
        let folder = files.folder().to_path_buf();
        // The files written, counted on the operator.
        let files: Vec<SpillFile> = files.finish()?.into_iter().flatten().collect();
        files.iter().for_each(|f| metrics.add_spill(f));
        let Some(merger) = merger else {
            return Ok(SpillablePartition { files: files.into_iter().map(Arc::new).collect(), batches: rest, merge_rows: 0 }.into_stream());
        };
        Ok(Box::new(files.into_iter().flat_map(move |file| {
            let files = PartitionFiles::new(folder.clone(), control.spill());
            let nested = GroupSpill { control, plan, metrics: metrics.clone(), merger: Some(merger.clone()), level: level + 1, files };
            match nested.merge(file) {
                Ok(s) => s,
                Err(e) => Box::new(std::iter::once(Err(e))),
            }
        })))
    }

    /// One partition's groups merged (self: the spill for those that still do not fit, a level
    /// down), its results streamed.
    fn merge(mut self, file: SpillFile) -> Result<BatchStream<'s>> {
        let Some(mut agg) = self.merger.as_ref().map(Merger::aggregator).transpose()? else { return Ok(Box::new(std::iter::empty())) };
        let (control, held) = (self.control, Reservation::new(self.control.memory(), self.plan));
        let deeper = (self.level < SPILL_LEVELS).then_some(&mut self);
        aggregate_into(&mut agg, file.read()?, &held, deeper, control)?;
        drop(file);
        if self.spilled() {
            let rest = agg.take_states()?;
            return self.output(rest);
        }
        let out = agg.finish()?;
        held.resize(out.iter().map(batch_bytes).sum())?;
        // The results stay reserved until pulled.
        Ok(Box::new(out.into_iter().map(move |b| {
            let _ = &held;
            Ok(b)
        })))
    }
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
