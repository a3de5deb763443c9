//! `Range` (Spark's `RangeExec`): a source generating the values of `range(...)` a batch at
//! a time as each partition is read.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::control::on_scan_batch;
use crate::exec::interpreted::schema_of;

/// Partition `i` of the range.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Range { output, range } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let control = exec.control;
    Ok(Box::new(range.batches(i, schema_of(output), config.batch_size).map(move |b| {
        let b = b?;
        on_scan_batch(control, &b)?;
        Ok(b)
    })))
}
