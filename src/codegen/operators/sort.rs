//! Sort topping a stage (Spark stars it): the stage's output batches of a partition are sorted
//! with Arrow's kernels after the generated code runs; it adds no code of its own.

use super::Flattening;
use crate::expr::SortOrder;

/// Records the order the stage's output is sorted by.
pub fn flatten(order: &[SortOrder], f: &mut Flattening) -> Result<(), String> {
    f.sort = Some(order.to_vec());
    Ok(())
}
