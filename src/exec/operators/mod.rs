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
use crate::exec::executor::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::{HashJoinKind, PhysicalPlan};

mod broadcast_exchange;
mod cartesian_product;
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

pub(in crate::exec) use whole_stage_codegen::Stage;

/// Prepares the breaker `plan` is, if it is one: its input pipeline runs and its state is
/// kept for its readers. Other operators prepare their children.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
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
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
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
        PhysicalPlan::WholeStageCodegen { .. } => whole_stage_codegen::stream(exec, plan, i),
        PhysicalPlan::QueryStage { .. } | PhysicalPlan::ShuffleRead { .. } => query_stage::stream(plan, i),
    }
}

/// An operator's file handed a node of another kind: a dispatch bug.
fn not_this(plan: &PhysicalPlan) -> KilnError {
    KilnError::internal(format!("operator dispatch: {} sent to the wrong operator", format!("{plan:?}").split([' ', '{', '(']).next().unwrap_or_default()))
}
