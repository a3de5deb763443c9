//! The physical operators' execution, one file each, and the registry that dispatches to
//! them. An operator is a source (scans), an operator (filter, project, expand, generate,
//! joins' probe side) or a sink — a breaker whose input pipeline runs to completion first:
//! globally, when the plan is prepared (`prepare`: exchanges, broadcasts, a broadcast join's
//! table, top-k, cartesian sides), or per partition when first pulled (aggregate, sort,
//! window, a shuffled join's sides). Every operator hands its output on as a stream of
//! batches of at most `kiln.batchSize` rows, pulled by the operator above it.
//!
//! Adding an operator: its file here, and its lines in `prepare` / `stream` below.

use std::sync::Arc;

use crate::error::{KilnError, Result};
use crate::exec::state::{key, Executor, State};
use crate::exec::stream::{BatchStream, Counted};
use crate::physical::{HashJoinKind, PhysicalPlan};

mod broadcast_exchange;
mod cartesian_product;
mod coalesce;
mod exchange;
mod expand;
mod file_scan;
mod filter;
mod fragment_input;
mod generate;
mod hash_aggregate;
mod hash_join;
mod in_memory_scan;
mod limit;
mod local_table_scan;
mod nested_loop_join;
mod project;
mod query_stage;
mod range;
mod sort;
mod sort_merge_join;
mod take_ordered_and_project;
pub(in crate::exec) mod union_loop;
mod union;
mod whole_stage_codegen;
mod window;


impl Executor<'_> {
    /// Computes, bottom-up, the state of every breaker under (and at) `plan`.
    pub(in crate::exec) fn prepare(&mut self, plan: &Arc<PhysicalPlan>) -> Result<()> {
        if self.states.contains_key(&key(plan)) {
            return Ok(());
        }
        let start = std::time::Instant::now();
        prepare_node(self, plan)?;
        // A breaker's own time: its inputs' preparation counts on them.
        let below: u64 = plan.children().iter().filter_map(|c| self.ops.get(c)).map(|m| m.prepare_nanos).sum();
        let held = match self.states.get(&key(plan)) {
            Some(State::Partitions(parts)) => parts.iter().flatten().map(crate::physical::adaptive::batch_bytes).sum(),
            Some(State::Handoff(parts, _)) => parts.iter().filter_map(|p| p.lock().ok().and_then(|p| p.as_ref().map(|p| p.memory_bytes()))).sum(),
            _ => 0,
        };
        if self.states.contains_key(&key(plan)) {
            self.ops.of(plan).add_prepared((start.elapsed().as_nanos() as u64).saturating_sub(below), held);
        }
        Ok(())
    }

    /// Partition `i` of `plan`'s output, as a stream, its rows and time counted. Breakers
    /// under it must be prepared.
    pub(in crate::exec) fn stream<'s>(&'s self, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
        let inner = stream_node(self, plan, i)?;
        Ok(Box::new(Counted { inner, metrics: self.ops.of(plan), nanos: 0, control: self.control }))
    }
}

/// Prepares the breaker `plan` is, if it is one: its input pipeline runs and its state is
/// kept for its readers. Other operators prepare their children.
fn prepare_node(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    match plan.as_ref() {
        PhysicalPlan::WholeStageCodegen { .. } => whole_stage_codegen::prepare(exec, plan),
        PhysicalPlan::Exchange { .. } => exchange::prepare(exec, plan),
        PhysicalPlan::BroadcastExchange { .. } => broadcast_exchange::prepare(exec, plan),
        PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, left_keys, .. } if !left_keys.is_empty() => hash_join::prepare(exec, plan),
        PhysicalPlan::CartesianProduct { .. } => cartesian_product::prepare(exec, plan),
        PhysicalPlan::TakeOrderedAndProject { .. } => take_ordered_and_project::prepare(exec, plan),
        PhysicalPlan::FileScan { .. } => file_scan::prepare(exec, plan),
        _ => {
            for c in plan.children() {
                exec.prepare(c)?;
            }
            Ok(())
        }
    }
}

/// Partition `i` of `plan`'s output. Breakers under it must be prepared.
fn stream_node<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    match plan.as_ref() {
        PhysicalPlan::FileScan { .. } => file_scan::stream(exec, plan, i),
        PhysicalPlan::InMemoryScan { .. } => in_memory_scan::stream(exec, plan, i),
        PhysicalPlan::LocalTableScan { .. } => local_table_scan::stream(plan, i),
        PhysicalPlan::Range { .. } => range::stream(exec, plan, i),
        PhysicalPlan::UnionLoop { .. } => union_loop::stream(plan, i),
        PhysicalPlan::FragmentInput { .. } => fragment_input::stream(exec, plan),
        PhysicalPlan::Filter { .. } => filter::stream(exec, plan, i),
        PhysicalPlan::Project { .. } => project::stream(exec, plan, i),
        PhysicalPlan::Expand { .. } => expand::stream(exec, plan, i),
        PhysicalPlan::Generate { .. } => generate::stream(exec, plan, i),
        PhysicalPlan::HashAggregate { .. } => hash_aggregate::stream(exec, plan, i),
        PhysicalPlan::Exchange { .. } | PhysicalPlan::BroadcastExchange { .. } | PhysicalPlan::TakeOrderedAndProject { .. } => exchange::stream(exec, plan, i),
        PhysicalPlan::HashJoin { .. } => hash_join::stream(exec, plan, i),
        PhysicalPlan::SortMergeJoin { .. } => sort_merge_join::stream(exec, plan, i),
        PhysicalPlan::CartesianProduct { .. } => cartesian_product::stream(exec, plan, i),
        PhysicalPlan::NestedLoopJoin { .. } => nested_loop_join::stream(exec, plan, i),
        PhysicalPlan::Sort { .. } => sort::stream(exec, plan, i),
        PhysicalPlan::Window { .. } => window::stream(exec, plan, i),
        PhysicalPlan::CollectLimit { .. } | PhysicalPlan::GlobalLimit { .. } | PhysicalPlan::LocalLimit { .. } => limit::stream(exec, plan, i),
        PhysicalPlan::Union { .. } => union::stream(exec, plan, i),
        PhysicalPlan::Coalesce { .. } => coalesce::stream(exec, plan, i),
        PhysicalPlan::WholeStageCodegen { .. } => whole_stage_codegen::stream(exec, plan, i),
        PhysicalPlan::QueryStage { .. } | PhysicalPlan::ShuffleRead { .. } => query_stage::stream(plan, i),
    }
}

/// An operator's file handed a node of another kind: a dispatch bug.
fn not_this(plan: &PhysicalPlan) -> KilnError {
    KilnError::internal(format!("operator dispatch: {} sent to the wrong operator", format!("{plan:?}").split([' ', '{', '(']).next().unwrap_or_default()))
}
