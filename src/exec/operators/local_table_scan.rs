//! `LocalTableScan`: rows known at planning time, all in partition 0.

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;

/// Partition `i`: every row for partition 0, none for the others.
pub(in crate::exec) fn stream(plan: &Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'_>> {
    let PhysicalPlan::LocalTableScan { data, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    Ok(Box::new(data.clone().into_iter().filter(move |_| i == 0).map(Ok)))
}
