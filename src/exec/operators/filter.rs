//! `Filter`: an operator keeping the rows for which its condition is true.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::exec::interpreted;
use crate::expr::eval::random::{with_partition, RandState};

/// Partition `i`: each input batch's rows that pass.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Filter { condition, child } = plan.as_ref() else { return Err(not_this(plan)) };
    let input = exec.attrs(child);
    let mut rand = RandState::new(i);
    Ok(Box::new(exec.stream(child, i)?.map(move |b| with_partition(&mut rand, || interpreted::filter(condition, input, &b?)))))
}
