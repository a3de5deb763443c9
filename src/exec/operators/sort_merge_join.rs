//! `SortMergeJoin`: both sides' partition `i`, sorted by the join keys, merged; the output
//! streams in pieces of at most a batch, in key order.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::interpreted;
use crate::physical::BuildSide;
use crate::exec::stream::deferred_stream;

/// Partition `i` of the join.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, left, right } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let (lo, ro) = (exec.attrs(left), exec.attrs(right));
    let (l, r) = exec.join_inputs(false, BuildSide::BuildRight, left, right, i)?;
    let held = exec.reserve(plan);
    let piece = config.batch_size;
    Ok(deferred_stream(held, move |held| {
        let l = l(held)?;
        // As Spark's merge join, which pulls the buffered side only for streamed
        // rows: an empty left partition leaves the right one unsorted and unread
        // when no right row outlives the join.
        let r = if !join_type.preserved_sides().1 && l.iter().all(|b| b.num_rows() == 0) { vec![] } else { r(held)? };
        let out = interpreted::join::sort_merge_join_stream(*join_type, left_keys, right_keys, condition.as_ref(), (lo, l), (ro, r), piece)?;
        Ok(Box::new(out) as BatchStream<'s>)
    }))
}
