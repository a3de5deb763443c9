//! `Coalesce` (Spark's `CoalesceExec`): the child's partitions merged, in order, into fewer,
//! without a shuffle.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;

/// Partition `i`: child partitions `i*m/n .. (i+1)*m/n` one after another, as Spark's
/// `CoalescedRDD` groups them when no partition has a preferred location.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Coalesce { child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let (m, n) = (exec.partitions(child), exec.partitions(plan));
    let parts = (i * m / n)..((i + 1) * m / n);
    let streams = parts.map(|p| exec.stream(child, p)).collect::<Result<Vec<_>>>()?;
    Ok(Box::new(streams.into_iter().flatten()))
}
