//! `BroadcastNestedLoopJoin` / `NestedLoopJoin`: every pair of rows tested by the condition;
//! the output streams in pieces of at most a batch.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::interpreted;
use crate::plan::JoinType;
use crate::exec::stream::deferred_stream;

/// Partition `i` of the join.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::NestedLoopJoin { join_type, build_side, condition, left, right } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let (lo, ro) = (exec.attrs(left), exec.attrs(right));
    let (l, r) = exec.join_inputs(*join_type != JoinType::FullOuter, *build_side, left, right, i)?;
    let held = exec.reserve(plan);
    let piece = config.batch_size;
    Ok(deferred_stream(held, move |held| {
        let out = interpreted::join::nested_loop_join_stream(*join_type, condition.as_ref(), (lo, l(held)?), (ro, r(held)?), piece)?;
        Ok(Box::new(out) as BatchStream<'s>)
    }))
}
