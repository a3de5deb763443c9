//! `BroadcastExchange`: a breaker gathering its whole input once, which every task of the
//! join above reads (its output partition 0).

use std::sync::Arc;

use super::not_this;
use crate::error::Result;
use crate::exec::state::{key, Executor, State};
use crate::physical::PhysicalPlan;

/// Gathers the input.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    let PhysicalPlan::BroadcastExchange { child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    exec.prepare(child)?;
    let held = exec.reserve(plan);
    let all = exec.drain_reserved(child, &held)?.concat();
    exec.held.push(held);
    exec.states.insert(key(plan), State::Partitions(vec![all]));
    exec.control.stage_done();
    Ok(())
}
