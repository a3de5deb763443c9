//! `Expand` (ROLLUP, CUBE, GROUPING SETS): an operator giving each input row once per
//! projection; an input batch yields one output batch per projection.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use arrow::record_batch::RecordBatch;
use crate::exec::interpreted::{self, schema_of};

/// Partition `i`: per input batch, one batch per projection.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Expand { projections, child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let input = exec.attrs(child);
    let schema = schema_of(exec.attrs(plan));
    Ok(Box::new(exec.stream(child, i)?.flat_map(move |b| -> Vec<Result<RecordBatch>> {
        match b {
            Ok(b) => projections.iter().map(|p| interpreted::project(p, input, &schema, &b)).collect(),
            Err(e) => vec![Err(e)],
        }
    })))
}
