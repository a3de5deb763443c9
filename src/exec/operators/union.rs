//! `Union`: partitions of every child, one after another, each batch given the union's
//! schema.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::interpreted::{self, schema_of};

/// Partition `i`: the child partition it numbers.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Union { children } = plan.as_ref() else { return Err(not_this(plan)) };
    // Every child's batches take the union's schema (names of the first child).
    let schema = schema_of(exec.attrs(plan));
    let mut rest = i;
    for child in children {
        let n = exec.partitions(child);
        if rest < n {
            return Ok(Box::new(exec.stream(child, rest)?.map(move |b| {
                let b = b?;
                // All columns may be pruned (count(*) over a union): the rows stay.
                interpreted::make_batch(schema.clone(), b.columns().to_vec(), b.num_rows())
            })));
        }
        rest -= n;
    }
    Ok(Box::new(std::iter::empty()))
}
