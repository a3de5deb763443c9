//! `Window` (Spark's `WindowExec`): a per-partition breaker computing window functions over
//! its input, which arrives clustered and sorted by the window's partition and order keys.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::interpreted;
use crate::exec::stream::{collect_reserved, deferred};

/// Partition `i` with its window columns.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Window { window_exprs, partition_by, order_by, child } = plan.as_ref() else { return Err(not_this(plan)) };
    let (input, output) = (exec.attrs(child), exec.attrs(plan));
    let child_stream = exec.stream(child, i)?;
    let held = exec.reserve(plan);
    Ok(deferred(move || interpreted::window(window_exprs, partition_by, order_by, input, output, collect_reserved(child_stream, &held)?)))
}
