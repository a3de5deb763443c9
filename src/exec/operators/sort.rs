//! `Sort`: a per-partition breaker; its input drained (reserved batch by batch) when the
//! partition is first pulled, then sorted.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::interpreted;
use crate::exec::stream::{collect_reserved, deferred};

/// Partition `i`, sorted.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Sort { order, child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let input = exec.attrs(child);
    let child_stream = exec.stream(child, i)?;
    let held = exec.reserve(plan);
    Ok(deferred(move || interpreted::sort(order, input, collect_reserved(child_stream, &held)?, None)))
}
