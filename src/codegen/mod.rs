//! Whole-stage code generation: `CollapseCodegenStages` groups each pipeline of
//! Filter / Project / partial HashAggregate over an input into a numbered stage, and each stage
//! is compiled by Cranelift into native loops over the rows of an Arrow batch.
//!
//! A stage compiles to two functions: a *filter* that writes the indices of the rows passing
//! every Filter (a selection vector), and a *sink* that, for the selected rows, computes the
//! Project's columns into output buffers or updates the partial aggregate's accumulators in
//! place. Values, null flags, decimal arithmetic and overflow checks are emitted inline; the
//! loops call nothing per row (see `shared/notes/codegen-lessons.md`). Grouping keys are
//! hashed per batch by the interpreter's `Grouper`, whose group ids the sink reads.
//!
//! Anything generated code does not support leaves the stage interpreted, with the reason
//! recorded and shown by `EXPLAIN CODEGEN`. A batch that the generated code cannot finish (an
//! overflow, a division by zero, a decimal too wide for the fast path) makes the whole
//! partition run again interpreted, so errors and results are exactly the interpreter's.

mod emit;
mod jit;
mod run;
mod spec;

use std::sync::Arc;

pub use jit::{compile_stage, CompiledStage};
pub use run::execute_stage;
pub use spec::{AggSpec, StageSink, StageSpec};

use crate::physical::{AggregateMode, PhysicalPlan};

/// True for operators a stage fuses.
pub fn fuses(plan: &PhysicalPlan) -> bool {
    matches!(
        plan,
        PhysicalPlan::Filter { .. } | PhysicalPlan::Project { .. } | PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, .. }
    )
}

/// Wraps every maximal chain of fusable operators in a `WholeStageCodegen` node, numbering the
/// stages bottom-up. A chain that cannot be compiled is wrapped too, with the reason, and runs
/// interpreted.
pub fn collapse_codegen_stages(plan: &Arc<PhysicalPlan>) -> Arc<PhysicalPlan> {
    let mut next_id = 1;
    collapse(plan, &mut next_id, false)
}

fn collapse(plan: &Arc<PhysicalPlan>, next_id: &mut usize, inside: bool) -> Arc<PhysicalPlan> {
    // A partial aggregate ends a stage: it can only be the top of one.
    let top = fuses(plan) && !inside;
    let children: Vec<Arc<PhysicalPlan>> = plan
        .children()
        .into_iter()
        .map(|c| {
            let continues = fuses(plan) && fuses(c) && !matches!(c.as_ref(), PhysicalPlan::HashAggregate { .. });
            collapse(c, next_id, continues)
        })
        .collect();
    let node = if children.iter().zip(plan.children()).all(|(n, o)| Arc::ptr_eq(n, o)) {
        plan.clone()
    } else {
        Arc::new(plan.with_new_children(children))
    };
    if !top {
        return node;
    }
    let id = *next_id;
    *next_id += 1;
    let fallback = StageSpec::from_plan(&node).err();
    Arc::new(PhysicalPlan::WholeStageCodegen { id, fallback, child: node })
}
