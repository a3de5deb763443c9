//! `FragmentInput`: a source reading batches the caller of a plan fragment supplies (Arrow
//! batches from the host engine's task), each input read once.

use std::sync::Arc;

use super::not_this;
use crate::error::{KilnError, Result};
use crate::exec::state::Executor;
use crate::exec::interpreted::make_batch;
use crate::exec::interpreted::schema_of;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;

/// The caller's input, its batches given the input's column names and checked against its
/// types.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>) -> Result<BatchStream<'s>> {
    let PhysicalPlan::FragmentInput { index, output } = plan.as_ref() else { return Err(not_this(plan)) };
    let input = exec.inputs.take(*index)?;
    let schema = schema_of(output);
    let index = *index;
    Ok(Box::new(input.map(move |b| {
        let b = b?;
        if b.num_columns() != schema.fields().len() || b.columns().iter().zip(schema.fields()).any(|(c, f)| c.data_type() != f.data_type()) {
            return Err(KilnError::exec(format!(
                "[KILN_FRAGMENT_INPUT_MISMATCH] fragment input {index} gave a batch of schema {} where the fragment reads [{}]",
                b.schema(),
                schema.fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect::<Vec<_>>().join(", ")
            )));
        }
        make_batch(schema.clone(), b.columns().to_vec(), b.num_rows())
    })))
}
