//! `CartesianProduct`: every left partition meets every right partition (output partition
//! `i * |right| + j`); both sides are drained once, when prepared.

use std::sync::Arc;

use super::not_this;
use crate::error::{KilnError, Result};
use crate::exec::state::{key, Executor, State};
use crate::exec::interpreted;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::plan::JoinType;

/// Drains both sides.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    let PhysicalPlan::CartesianProduct { left, right, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    exec.prepare(left)?;
    exec.prepare(right)?;
    let held = exec.reserve(plan);
    let sides = State::Sides(exec.drain_reserved(left, &held)?, exec.drain_reserved(right, &held)?);
    exec.held.push(held);
    exec.states.insert(key(plan), sides);
    Ok(())
}

/// Partition `i`: left partition `i / |right|` with right partition `i % |right|`.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::CartesianProduct { condition, left, right } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let (lo, ro) = (exec.attrs(left), exec.attrs(right));
    let State::Sides(lp, rp) = exec.state(plan)? else { return Err(KilnError::internal("cartesian state")) };
    // Every left partition meets every right partition: output partition i * |right| + j.
    let n = rp.len().max(1);
    let (l, r) = (lp.get(i / n).cloned().unwrap_or_default(), rp.get(i % n).cloned().unwrap_or_default());
    let out = interpreted::join::nested_loop_join_stream(JoinType::Inner, condition.as_ref(), (lo, l), (ro, r), config.batch_size)?;
    Ok(Box::new(out))
}
