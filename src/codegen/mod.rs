//! Whole-stage code generation: `CollapseCodegenStages` groups each pipeline of
//! Filter / Project / partial HashAggregate over an input into a numbered stage, and each stage
//! is compiled by Cranelift into native loops over the rows of an Arrow batch.
//!
//! A stage compiles to two functions: a *filter* that writes the indices of the rows passing
//! every Filter (a selection vector), and a *sink* that, for the selected rows, computes the
//! Project's columns into output buffers or updates the partial aggregate's accumulators in
//! place. Values, null flags, decimal arithmetic and overflow checks are emitted inline; the
//! loops call nothing per row (see `shared/notes/codegen-lessons.md`) except a substring search
//! for the middle pieces of a LIKE pattern (string work, one `extern "C"` helper). Grouping keys are
//! hashed per batch by the interpreter's `Grouper`, whose group ids the sink reads.
//!
//! Broadcast hash joins fuse their probes (any number per stage, inner, stream-preserving
//! outer, left semi and left anti): the sink hashes each stream key, probes the build side's
//! `JoinTable` and walks the matches in IR (`join.rs`), consuming each joined row in place. An
//! aggregate over joins runs the same loop as a *probe* function that writes the joined rows'
//! indices, which the grouper then hashes (keyed) and the sink reads by index: the probe's
//! cache misses overlap across rows, where a sink that probes, then reads, one row at a time
//! would wait for each in turn.
//!
//! A sort-merge join (inner, left outer, left semi, left anti) fuses the same way with its left
//! side streaming: per stream batch, Rust merges the sorted keys against the right partition's
//! into each row's range of equal-keyed right rows (`run::MergeSide`), and the generated code
//! walks that range in place of a hash chain, testing the join condition inline.
//!
//! Anything generated code does not support leaves the stage interpreted, with the reason
//! recorded and shown by `EXPLAIN CODEGEN`. A batch that the generated code cannot finish (an
//! overflow, a division by zero, a decimal too wide for the fast path) makes the whole
//! partition run again interpreted, so errors and results are exactly the interpreter's.

mod expr;
mod helpers;
mod jit;
mod layout;
mod operators;
mod pipeline;
mod rows;
mod run;
mod spec;

use std::collections::HashMap;
use std::sync::Arc;

pub use jit::{compile_stage, CompiledStage, StageCache};
pub use run::{aggregate_partition, output_batch, output_pieces, BuildTable, GroupBudget, OutputPieces, Piece, StageOutput};
pub use spec::{AggSpec, JoinSpec, StageJoinType, StageSink, StageSpec};

use crate::physical::{AggregateMode, PhysicalPlan};

/// How a stage that can compile only once the query runs says so (EXPLAIN CODEGEN).
pub const COMPILED_WHEN_RUN: &str = "compiled when the query runs";

/// True for operators a stage fuses (a hash join fuses its probe when the stream side is the
/// preserved one).
pub fn fuses(plan: &PhysicalPlan) -> bool {
    match plan {
        PhysicalPlan::Filter { .. }
        | PhysicalPlan::Project { .. }
        | PhysicalPlan::HashAggregate { mode: AggregateMode::Partial | AggregateMode::Final, .. }
        | PhysicalPlan::Sort { .. } => true,
        PhysicalPlan::HashJoin { join_type, build_side, .. } => spec::stage_join_type(*join_type, *build_side).is_some(),
        // Its left side streams in key order; the right partition is the "build" side.
        PhysicalPlan::SortMergeJoin { join_type, .. } => spec::stage_join_type(*join_type, crate::physical::BuildSide::BuildRight).is_some(),
        _ => false,
    }
}

/// Why an operator Spark compiles into its codegen stage runs between kiln's stages,
/// interpreted (`EXPLAIN CODEGEN` lists it); None for other operators.
pub fn outside_stage_reason(plan: &PhysicalPlan) -> Option<String> {
    match plan {
        PhysicalPlan::Generate { generator, .. } => Some(format!("generated code lacks generators ({}): the Generate cuts the stage and runs interpreted", generator.func.name())),
        // Over a stage of its own (alone, it is a stage that lists the reason).
        PhysicalPlan::HashAggregate { child, .. } if matches!(child.as_ref(), PhysicalPlan::WholeStageCodegen { .. }) => operators::aggregate_outside_reason(plan),
        _ => None,
    }
}

/// The side of a hash join that streams through a stage (the other side is built).
pub fn stream_child(plan: &PhysicalPlan) -> Option<&Arc<PhysicalPlan>> {
    match plan {
        PhysicalPlan::HashJoin { build_side: crate::physical::BuildSide::BuildRight, left, .. } => Some(left),
        PhysicalPlan::HashJoin { build_side: crate::physical::BuildSide::BuildLeft, right, .. } => Some(right),
        PhysicalPlan::SortMergeJoin { left, .. } => Some(left),
        _ => None,
    }
}

/// Wraps every maximal chain of fusable operators in a `WholeStageCodegen` node, numbering the
/// stages bottom-up. A chain that cannot be compiled is wrapped too, with the reason, and runs
/// interpreted.
pub fn collapse_codegen_stages(plan: &Arc<PhysicalPlan>) -> Arc<PhysicalPlan> {
    collapse_codegen_stages_from(plan, 1).0
}

/// `collapse_codegen_stages` numbering the stages from `first_id` (adaptive execution plans
/// one query stage at a time, its codegen ids continuing the stages before); also returns the
/// next free id.
pub fn collapse_codegen_stages_from(plan: &Arc<PhysicalPlan>, first_id: usize) -> (Arc<PhysicalPlan>, usize) {
    let mut next_id = 1;
    let collapsed = collapse(plan, &mut next_id);
    // Spark's ids (as its captures show): every stage after all the stages below any stage of
    // lower height, ties left to right, e.g. both sides of a sort-merge join are numbered before
    // either side's Sort.
    let mut stages = vec![];
    stage_heights(&collapsed, &mut stages);
    let mut order: Vec<(usize, usize, usize)> = stages.iter().enumerate().map(|(seq, (id, h))| (*h, seq, *id)).collect();
    order.sort();
    let ids: HashMap<usize, usize> = order.iter().enumerate().map(|(n, (_, _, id))| (*id, first_id + n)).collect();
    (renumber(&collapsed, &ids), first_id + order.len())
}

/// The height of `plan` in stages (1 for a stage with none below it), recording each stage's
/// (id, height) in post-order.
fn stage_heights(plan: &Arc<PhysicalPlan>, out: &mut Vec<(usize, usize)>) -> usize {
    let below = plan.children().into_iter().map(|c| stage_heights(c, out)).max().unwrap_or(0);
    match plan.as_ref() {
        PhysicalPlan::WholeStageCodegen { id, .. } => {
            out.push((*id, below + 1));
            below + 1
        }
        _ => below,
    }
}

fn renumber(plan: &Arc<PhysicalPlan>, ids: &HashMap<usize, usize>) -> Arc<PhysicalPlan> {
    let children: Vec<Arc<PhysicalPlan>> = plan.children().into_iter().map(|c| renumber(c, ids)).collect();
    match plan.as_ref() {
        PhysicalPlan::WholeStageCodegen { id, fallback, .. } => {
            let child = children.into_iter().next().unwrap_or_else(|| plan.clone());
            Arc::new(PhysicalPlan::WholeStageCodegen { id: ids.get(id).copied().unwrap_or(*id), fallback: fallback.clone(), child })
        }
        _ => rebuild(plan, children),
    }
}

fn rebuild(plan: &Arc<PhysicalPlan>, children: Vec<Arc<PhysicalPlan>>) -> Arc<PhysicalPlan> {
    plan.with_children_if_changed(children)
}

fn collapse(plan: &Arc<PhysicalPlan>, next_id: &mut usize) -> Arc<PhysicalPlan> {
    let Some((chain, _input)) = operators::stage_chain(plan) else {
        let children = plan.children().into_iter().map(|c| collapse(c, next_id)).collect();
        return rebuild(plan, children);
    };
    // Below the stage: its input and any join's build side form stages of their own.
    let node = collapse_chain(plan, &chain, next_id);
    let id = *next_id;
    *next_id += 1;
    let fallback = StageSpec::from_plan(&node).err();
    Arc::new(PhysicalPlan::WholeStageCodegen { id, fallback, child: node })
}

/// Rebuilds the stage's operators over collapsed inputs.
fn collapse_chain(node: &Arc<PhysicalPlan>, chain: &[Arc<PhysicalPlan>], next_id: &mut usize) -> Arc<PhysicalPlan> {
    let children = node
        .children()
        .into_iter()
        .map(|c| if chain.iter().any(|x| Arc::ptr_eq(x, c)) { collapse_chain(c, chain, next_id) } else { collapse(c, next_id) })
        .collect();
    rebuild(node, children)
}
