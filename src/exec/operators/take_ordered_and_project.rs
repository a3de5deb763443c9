//! `TakeOrderedAndProject` (ORDER BY ... LIMIT n): a breaker keeping each input partition's
//! top `n` rows, then the top `n` of those, projected; read once, as an exchange's partition.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use super::not_this;
use crate::error::Result;
use crate::common::spill::SpillablePartition;
use crate::exec::state::{handoff, key, Executor};
use crate::exec::interpreted::{self, schema_of};
use crate::physical::adaptive::batch_bytes;
use crate::physical::PhysicalPlan;

/// Keeps the top rows.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    let PhysicalPlan::TakeOrderedAndProject { limit, order, list, child } = plan.as_ref() else { return Err(not_this(plan)) };
    exec.prepare(child)?;
    let input = exec.attrs(child);
    let tops = exec.run_partitions(child, |_, s| interpreted::sort(order, input, s.collect::<Result<_>>()?, Some(*limit)))?;
    let top = interpreted::sort(order, input, tops.concat(), Some(*limit))?;
    let schema = schema_of(exec.attrs(plan));
    let rows: Vec<RecordBatch> = top.iter().map(|b| interpreted::project(list, input, &schema, b)).collect::<Result<_>>()?;
    let held = exec.reserve(plan);
    held.grow(rows.iter().map(batch_bytes).sum())?;
    exec.states.insert(key(plan), handoff(vec![SpillablePartition::in_memory(rows)], held));
    exec.control.stage_done();
    Ok(())
}
