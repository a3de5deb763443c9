//! `Exchange` (Spark's `ShuffleExchangeExec`): a breaker. Prepared, its input pipeline runs
//! into its output partitions (hash, range or single); each output partition is then handed
//! to its one reader, and freed with it.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use super::not_this;
use crate::error::{KilnError, Result};
use crate::exec::state::{handoff, key, Executor, State};
use crate::exec::stream::Partitions;
use crate::exec::interpreted;
use crate::common::memory::Reservation;
use crate::exec::stream::BatchStream;
use crate::physical::adaptive::batch_bytes;
use crate::physical::{Partitioning, PhysicalPlan};

/// Runs the input pipeline into the output partitions.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    let PhysicalPlan::Exchange { partitioning, child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    exec.prepare(child)?;
    exec.merge_partial_aggregate(child);
    let held = exec.reserve(plan);
    let parts = exec.exchange(partitioning, child, &held)?;
    exec.states.insert(key(plan), handoff(parts, held));
    exec.control.stage_done();
    Ok(())
}

/// Partition `i` of a prepared breaker's output (an exchange's, a broadcast's, a top-k's): a
/// handed-off partition is taken, and its bytes released.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let config = exec.config;
    let batches = match exec.state(plan)? {
        State::Partitions(parts) => parts.get(i).cloned().unwrap_or_default(),
        State::Handoff(parts, held) => match parts.get(i).map(|p| p.lock().map(|mut p| p.take())) {
            Some(Ok(Some(batches))) => {
                held.shrink(batches.iter().map(batch_bytes).sum());
                batches
            }
            Some(Ok(None)) => return Err(KilnError::internal(format!("partition {i} of {} read twice", plan.node_string(config)))),
            _ => vec![],
        },
        _ => return Err(KilnError::internal("exchange state")),
    };
    Ok(Box::new(batches.into_iter().map(Ok)))
}

impl<'a> Executor<'a> {
    /// Runs an exchange's input pipeline into its output partitions.
    pub(in crate::exec) fn exchange(&self, partitioning: &Partitioning, child: &Arc<PhysicalPlan>, held: &Reservation) -> Result<Partitions> {
        let input = self.attrs(child);
        let parts = match partitioning {
            Partitioning::SinglePartition | Partitioning::Unknown(1) => vec![self.drain_reserved(child, held)?.concat()],
            Partitioning::Hash(keys, n) => {
                let batch_size = self.config.batch_size.max(1);
                let split = self.run_partitions(child, |s| {
                    let mut parts = interpreted::HashPartitioner::new(keys, input, *n, batch_size)?;
                    for b in s {
                        let b = b?;
                        held.grow(batch_bytes(&b))?;
                        parts.push(&b)?;
                    }
                    parts.finish()
                })?;
                let mut out: Partitions = vec![vec![]; *n];
                for s in split {
                    for (slot, batches) in out.iter_mut().zip(s) {
                        slot.extend(batches);
                    }
                }
                // Many input partitions leave each output partition many slivers (200 x 200
                // of a few rows each after a sort-merge join): merged here, once, they do not
                // cost every reader a per-batch overhead.
                out.into_par_iter().map(|part| merge_slivers(part, batch_size)).collect::<Result<_>>()?
            }
            Partitioning::Range(order, n) => interpreted::range_partition(order, input, self.drain_reserved(child, held)?.concat(), *n)?,
            Partitioning::Unknown(n) => return Err(KilnError::internal(format!("exchange to unknown partitioning of {n}"))),
            Partitioning::Collection(_) => return Err(KilnError::internal("exchange to a partitioning collection")),
        };
        Ok(parts)
    }

}

/// A partition's batches, merged into batches of up to `batch_size` rows when they are small
/// (on average under a quarter of it); left as they are otherwise.
fn merge_slivers(part: Vec<RecordBatch>, batch_size: usize) -> Result<Vec<RecordBatch>> {
    let rows: usize = part.iter().map(|b| b.num_rows()).sum();
    let Some(first) = part.first() else { return Ok(part) };
    if part.len() <= 1 || rows / part.len() >= batch_size / 4 {
        return Ok(part);
    }
    // Runs of whole batches up to `batch_size` rows, each concatenated in one pass: one
    // allocation per column (arrow's `BatchCoalescer` copies string columns batch by batch).
    let schema = first.schema();
    let mut merged = Vec::with_capacity(rows.div_ceil(batch_size));
    let mut run: Vec<RecordBatch> = vec![];
    let mut run_rows = 0;
    for b in part {
        if run_rows + b.num_rows() > batch_size && !run.is_empty() {
            merged.push(arrow::compute::concat_batches(&schema, &run)?);
            run.clear();
            run_rows = 0;
        }
        run_rows += b.num_rows();
        run.push(b);
    }
    if !run.is_empty() {
        merged.push(arrow::compute::concat_batches(&schema, &run)?);
    }
    Ok(merged)
}

