//! `CollectLimit`, `GlobalLimit` (LIMIT n OFFSET m over all partitions, pulled in order and no
//! further once the limit is met) and `LocalLimit` (the first n rows of each partition).

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;

/// Partition `i`: a global limit's single partition, or partition `i` of a local limit.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    match plan.as_ref() {
        PhysicalPlan::CollectLimit { limit, offset, child } | PhysicalPlan::GlobalLimit { limit, offset, child } => {
            // Partitions are pulled in order, and no further once the limit is met.
            let n = exec.partitions(child);
            let parts = (0..n).map(move |p| exec.stream(child, p)).flat_map(|s| match s {
                Ok(s) => s,
                Err(e) => Box::new(std::iter::once(Err(e))),
            });
            Ok(limit_stream(offset_stream(Box::new(parts), *offset), *limit))
        }
        PhysicalPlan::LocalLimit { limit, child } => Ok(limit_stream(exec.stream(child, i)?, *limit)),
        _ => Err(not_this(plan)),
    }
}

/// The rows of `input` after the first `n`.
fn offset_stream<'s>(input: BatchStream<'s>, n: usize) -> BatchStream<'s> {
    if n == 0 {
        return input;
    }
    let mut skip = n;
    Box::new(input.filter_map(move |b| match b {
        Ok(b) if skip == 0 => Some(Ok(b)),
        Ok(b) if b.num_rows() <= skip => {
            skip -= b.num_rows();
            None
        }
        Ok(b) => {
            let out = b.slice(skip, b.num_rows() - skip);
            skip = 0;
            Some(Ok(out))
        }
        Err(e) => Some(Err(e)),
    }))
}

/// The first `n` rows of `input`; pulls nothing more once they are there.
fn limit_stream<'s>(input: BatchStream<'s>, n: usize) -> BatchStream<'s> {
    let mut left = n;
    let mut input = input;
    Box::new(std::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        match input.next()? {
            Ok(b) if b.num_rows() <= left => {
                left -= b.num_rows();
                Some(Ok(b))
            }
            Ok(b) => {
                let out = b.slice(0, left);
                left = 0;
                Some(Ok(out))
            }
            Err(e) => Some(Err(e)),
        }
    }))
}

