//! The operators a stage compiles, one file each (produce/consume, as Spark's
//! `doProduce`/`doConsume`): what each adds to the flattened `StageSpec` (`flatten`), and the IR
//! it emits for a row. This file is their registry.

use std::sync::Arc;

use super::spec::Flattening;
use crate::physical::{AggregateMode, PhysicalPlan};

pub(super) mod filter;
pub(super) mod group_lookup;
pub(super) mod hash_aggregate;
pub(super) mod hash_probe;
pub(super) mod merge_join;
pub(super) mod project;
pub(super) mod sort;

/// Adds `node` (the stage's operators are flattened bottom-up) to the stage being flattened.
pub(super) fn flatten(node: &Arc<PhysicalPlan>, f: &mut Flattening) -> Result<(), String> {
    match node.as_ref() {
        // Only at the top (see `stage_chain`): it sorts what the rest produces.
        PhysicalPlan::Sort { order, .. } => sort::flatten(order, f),
        PhysicalPlan::SortMergeJoin { .. } => merge_join::flatten(node, f),
        PhysicalPlan::HashJoin { .. } => hash_probe::flatten(node, f),
        PhysicalPlan::Filter { condition, .. } => filter::flatten(condition, f),
        PhysicalPlan::Project { .. } => project::flatten(node, f),
        PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, .. } => hash_aggregate::flatten_partial(node, f),
        PhysicalPlan::HashAggregate { mode: AggregateMode::Final, .. } => hash_aggregate::flatten_final(node, f),
        _ => Err("not a fused operator".into()),
    }
}
