//! `Generate` (explode, posexplode, inline, stack ...): an operator giving each input row
//! the generator's rows, in pieces of at most a batch.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::interpreted::{self, schema_of};

/// Partition `i`: each input batch's generated rows.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Generate { generator, required_child_output, outer, child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let input = exec.attrs(child);
    let schema = schema_of(exec.attrs(plan));
    let chunk = config.batch_size;
    Ok(Box::new(exec.stream(child, i)?.flat_map(move |b| {
        match b.and_then(|b| interpreted::generate(generator, *outer, required_child_output, input, &schema, &b, chunk)) {
            Ok(batches) => batches.into_iter().map(Ok).collect::<Vec<_>>(),
            Err(e) => vec![Err(e)],
        }
    })))
}
