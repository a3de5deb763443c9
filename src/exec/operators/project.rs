//! `Project`: an operator computing its expressions for every row.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::interpreted::{self, schema_of};
use crate::expr::eval::random::{with_partition, RandState};

/// Partition `i`: each input batch projected.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Project { list, child } = plan.as_ref() else { return Err(not_this(plan)) };
    let input = exec.attrs(child);
    let schema = schema_of(exec.attrs(plan));
    let mut rand = RandState::new(i);
    Ok(Box::new(exec.stream(child, i)?.map(move |b| with_partition(&mut rand, || interpreted::project(list, input, &schema, &b?)))))
}
