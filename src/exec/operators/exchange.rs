//! `Exchange` (Spark's `ShuffleExchangeExec`): a breaker. Prepared, its input pipeline runs
//! into its output partitions (hash, range, round robin or single); each output partition is then handed
//! to its one reader, and freed with it. Hash and range partitions past the memory budget are
//! written to spill files (Spark's shuffle spill), one per partition, read back by the reader.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arrow::record_batch::RecordBatch;

use super::not_this;
use crate::common::memory::{batch_bytes, MemoryPool, Reservation};
use crate::common::spill::{spill_folder, SpillBudget, SpillFile, SpillWriter, SpillablePartition};
use crate::error::{KilnError, Result};
use crate::exec::control::QueryControl;
use crate::exec::interpreted;
use crate::exec::state::{handoff, key, Executor, State};
use crate::exec::stream::BatchStream;
use crate::physical::metrics::OperatorMetrics;
use crate::physical::{Partitioning, PhysicalPlan};

/// The most rows a hash exchange merges its small input batches into (at most twice this); a
/// huge `kiln.batchSize` would hold a lot twice while they are merged.
const MERGED_INPUT_ROWS_MAX: usize = 1 << 13;

/// Runs the input pipeline into the output partitions.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    let PhysicalPlan::Exchange { partitioning, child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    exec.prepare(child)?;
    exec.merge_partial_aggregate(child);
    let held = exec.reserve(plan);
    let parts = exec.exchange(plan, partitioning, child, &held)?;
    exec.states.insert(key(plan), handoff(parts, held));
    exec.control.stage_done();
    Ok(())
}

/// Partition `i` of a prepared breaker's output (an exchange's, a broadcast's, a top-k's): a
/// handed-off partition is taken, and its bytes released.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let config = exec.config;
    match exec.state(plan)? {
        State::Partitions(parts) => Ok(Box::new(parts.get(i).cloned().unwrap_or_default().into_iter().map(Ok))),
        State::Handoff(parts, held) => match parts.get(i).map(|p| p.lock().map(|mut p| p.take())) {
            Some(Ok(Some(part))) => {
                held.shrink(part.memory_bytes());
                Ok(part.into_stream())
            }
            Some(Ok(None)) => Err(KilnError::internal(format!("partition {i} of {} read twice", plan.node_string(config)))),
            _ => Ok(Box::new(std::iter::empty())),
        },
        _ => Err(KilnError::internal("exchange state")),
    }
}

impl<'a> Executor<'a> {
    /// Runs an exchange's input pipeline into its output partitions, spilling them to disk
    /// when `held` would pass the memory budget.
    pub(in crate::exec) fn exchange(&self, plan: &Arc<PhysicalPlan>, partitioning: &Partitioning, child: &Arc<PhysicalPlan>, held: &Reservation) -> Result<Vec<SpillablePartition>> {
        let input = self.attrs(child);
        let batch_size = self.config.batch_size.max(1);
        let sink = |n| PartitionSink::new(n, held, spill_folder(&self.config.local_dir), self.control.spill().clone(), self.ops.of(plan));
        let parts = match partitioning {
            Partitioning::SinglePartition | Partitioning::Unknown(1) => vec![SpillablePartition::in_memory(self.drain_reserved(child, held)?.concat())],
            Partitioning::Hash(keys, n) => {
                let sink = sink(*n);
                // A selective filter's small batches merged first: each partition's run of a
                // batch is then a few times longer, and runs of a few rows into each of 200
                // partitions' buffers cost more per row than the rows themselves.
                let merged = batch_size.min(MERGED_INPUT_ROWS_MAX);
                self.run_partition_runs(child, writer_tasks(), |t, s| {
                    let s: BatchStream = Box::new(crate::common::coalesce_small(s, merged));
                    sink.fill(t, s, self.control, interpreted::HashPartitioner::new(keys, input, *n, batch_size)?, |p, b| p.push(b))
                })?;
                sink.finish(self.control.memory(), batch_size)?
            }
            Partitioning::Range(order, n) => {
                let gathered = sink(1);
                self.run_partitions(child, |t, s| gathered.fill(t, s, self.control, interpreted::HashPartitioner::new(&[], input, 1, batch_size)?, |p, b| p.push(b)))?;
                let mut all = gathered.finish(self.control.memory(), batch_size)?;
                let all = all.pop().unwrap_or_default();
                if all.files.is_empty() {
                    let batches = all.batches;
                    interpreted::range_partition(order, input, batches, *n)?.into_iter().map(SpillablePartition::in_memory).collect()
                } else {
                    // Spilled: bounds from a sample read in one pass, then each batch routed.
                    let bounds = interpreted::RangeBounds::sample(order, input, all.clone().into_stream(), all.rows() as usize, *n)?;
                    held.shrink(all.memory_bytes());
                    let sink = sink(*n);
                    let rows = all.into_stream();
                    sink.fill(0, Box::new(rows), self.control, interpreted::HashPartitioner::new(&[], input, *n, batch_size)?, |p, b| p.push_to(b, &bounds.partition_ids(b)?))?;
                    sink.finish(self.control.memory(), batch_size)?
                }
            }
            Partitioning::RoundRobin(n) => {
                let sink = sink(*n);
                self.run_partition_runs(child, writer_tasks(), |t, s| {
                    // Each task deals from a position of its own (Spark's starts at random).
                    let next = std::cell::Cell::new(t % n);
                    sink.fill(t, s, self.control, interpreted::HashPartitioner::new(&[], input, *n, batch_size)?, |p, b| {
                        let start = next.get();
                        next.set((start + b.num_rows()) % n);
                        p.push_to(b, &(0..b.num_rows()).map(|r| ((start + r) % n) as u32).collect::<Vec<_>>())
                    })
                })?;
                sink.finish(self.control.memory(), batch_size)?
            }
            Partitioning::Unknown(n) => return Err(KilnError::internal(format!("exchange to unknown partitioning of {n}"))),
            Partitioning::Collection(_) => return Err(KilnError::internal("exchange to a partitioning collection")),
        };
        Ok(parts)
    }
}

/// How many tasks write an exchange: its input partitions are read in that many contiguous
/// runs, so 200 small input partitions (a sort-merge join's, a local shuffle read's) leave each
/// output partition a few slivers, not 200 of a row or two each to copy, hold and merge.
/// Enough runs per thread for work stealing to even out unequal partitions.
fn writer_tasks() -> usize {
    4 * rayon::current_num_threads().max(1)
}

/// An exchange's output partitions as its input tasks fill them: held in memory against the
/// reservation, and, when the budget refuses more, written to one spill file per partition.
/// A task refused memory spills what it and the sink hold and raises the pressure; every
/// other task then spills what it holds before its next batch.
struct PartitionSink<'r> {
    parts: Vec<Mutex<SinkPartition>>,
    held: &'r Reservation,
    folder: PathBuf,
    budget: Arc<SpillBudget>,
    metrics: Arc<OperatorMetrics>,
    pressure: AtomicU64,
    /// The most it holds in memory: half the limit, for the operators that make its input
    /// (an aggregate merging what it spilled, in the same thread) need room to make it.
    share: u64,
}

#[derive(Default)]
struct SinkPartition {
    /// Batches in memory by input task: read back in the input's order (a window over a
    /// sorted input may count on it), whichever task ends first.
    batches: Vec<(usize, Vec<RecordBatch>)>,
    bytes: u64,
    writer: Option<SpillWriter>,
    files: Vec<Arc<SpillFile>>,
}

impl SinkPartition {
    fn spill(&mut self, batches: &[RecordBatch], folder: &Path, budget: &Arc<SpillBudget>) -> Result<()> {
        for b in batches.iter().filter(|b| b.num_rows() > 0) {
            let writer = match &mut self.writer {
                Some(w) => w,
                None => self.writer.insert(SpillWriter::new(folder, &b.schema(), budget)?),
            };
            writer.write(b)?;
        }
        Ok(())
    }
}

impl<'r> PartitionSink<'r> {
    fn new(n: usize, held: &'r Reservation, folder: PathBuf, budget: Arc<SpillBudget>, metrics: Arc<OperatorMetrics>) -> PartitionSink<'r> {
        let share = held.pool_limit() / 2;
        PartitionSink { parts: (0..n).map(|_| Mutex::default()).collect(), held, folder, budget, metrics, pressure: AtomicU64::new(0), share }
    }

    fn part(&self, p: usize) -> Result<std::sync::MutexGuard<'_, SinkPartition>> {
        self.parts.get(p).ok_or_else(|| KilnError::internal("an exchange partition out of range"))?.lock().map_err(|_| KilnError::internal("an exchange partition's lock was poisoned"))
    }

    /// One input task: its batches routed by `route` into `parts` (the task's own chunks),
    /// handed to the sink when the task ends.
    fn fill(&self, task: usize, stream: BatchStream, control: &QueryControl, mut parts: interpreted::HashPartitioner, route: impl Fn(&mut interpreted::HashPartitioner, &RecordBatch) -> Result<()>) -> Result<()> {
        let mut task_bytes = 0;
        let mut seen = self.pressure.load(Ordering::Acquire);
        for b in stream {
            let b = b?;
            let bytes = batch_bytes(&b);
            if self.pressure.load(Ordering::Acquire) != seen && task_bytes > 0 {
                seen = self.pressure.load(Ordering::Acquire);
                self.spill_task(&mut parts, &mut task_bytes)?;
            }
            if self.held.bytes() + bytes > self.share || self.held.grow(bytes).is_err() {
                seen = self.pressure.fetch_add(1, Ordering::AcqRel) + 1;
                self.spill_task(&mut parts, &mut task_bytes)?;
                self.spill_held()?;
                self.held.grow_when_freed(bytes, || control.check())?;
            }
            task_bytes += bytes;
            route(&mut parts, &b)?;
        }
        self.held.shrink(task_bytes);
        for (p, batches) in parts.finish()?.into_iter().enumerate() {
            if batches.is_empty() {
                continue;
            }
            let bytes: u64 = batches.iter().map(batch_bytes).sum();
            let within = |held: &Reservation| held.bytes() + bytes <= self.share && held.grow(bytes).is_ok();
            if !within(self.held) {
                self.spill_held()?;
                if !within(self.held) {
                    self.part(p)?.spill(&batches, &self.folder, &self.budget)?;
                    continue;
                }
            }
            let mut part = self.part(p)?;
            part.bytes += bytes;
            part.batches.push((task, batches));
        }
        Ok(())
    }

    /// A task's chunks written out, its bytes given back.
    fn spill_task(&self, parts: &mut interpreted::HashPartitioner, task_bytes: &mut u64) -> Result<()> {
        for (p, batches) in parts.take()?.into_iter().enumerate() {
            if !batches.is_empty() {
                self.part(p)?.spill(&batches, &self.folder, &self.budget)?;
            }
        }
        self.held.shrink(std::mem::take(task_bytes));
        Ok(())
    }

    /// What the sink holds in memory written out, its bytes given back.
    fn spill_held(&self) -> Result<()> {
        for p in 0..self.parts.len() {
            self.spill_partition(p)?;
        }
        Ok(())
    }

    fn spill_partition(&self, p: usize) -> Result<()> {
        let mut part = self.part(p)?;
        let batches = in_input_order(std::mem::take(&mut part.batches));
        part.spill(&batches, &self.folder, &self.budget)?;
        self.held.shrink(std::mem::take(&mut part.bytes));
        Ok(())
    }

    /// The output partitions. When the exchange spilled, or the query holds over half the
    /// budget, its largest partitions are written out until it holds at most half: its readers
    /// (a sort, a join's side) need room of their own.
    fn finish(self, pool: &MemoryPool, batch_size: usize) -> Result<Vec<SpillablePartition>> {
        let spilled = self.parts.iter().any(|p| p.lock().map(|p| p.writer.is_some()).unwrap_or(false));
        if spilled || pool.used() > pool.limit() / 2 {
            let mut by_size: Vec<(u64, usize)> = (0..self.parts.len()).map(|p| Ok((self.part(p)?.bytes, p))).collect::<Result<_>>()?;
            by_size.sort_unstable_by(|a, b| b.cmp(a));
            for (bytes, p) in by_size {
                if pool.used() <= pool.limit() / 2 || bytes == 0 {
                    break;
                }
                self.spill_partition(p)?;
            }
        }
        let parts = self
            .parts
            .into_iter()
            .map(|p| {
                let mut p = p.into_inner().map_err(|_| KilnError::internal("an exchange partition's lock was poisoned"))?;
                if let Some(w) = p.writer.take() {
                    let file = w.finish()?;
                    self.metrics.add_spill(&file);
                    p.files.push(Arc::new(file));
                }
                Ok(p)
            })
            .collect::<Result<Vec<_>>>()?;
        // Many input partitions leave each output partition many slivers (200 x 200 of a few
        // rows each after a sort-merge join): read back merged, they do not cost every reader
        // a per-batch overhead.
        Ok(parts.into_iter().map(|p| SpillablePartition { files: p.files, batches: in_input_order(p.batches), merge_rows: batch_size }).collect())
    }
}

/// A partition's batches by input task, in the tasks' order.
fn in_input_order(mut by_task: Vec<(usize, Vec<RecordBatch>)>) -> Vec<RecordBatch> {
    by_task.sort_by_key(|(task, _)| *task);
    by_task.into_iter().flat_map(|(_, b)| b).collect()
}
