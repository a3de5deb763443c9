//! Vectorized expression evaluation over Arrow arrays with Spark's (ANSI) semantics.

use arrow::array::ArrayRef;
use arrow::record_batch::RecordBatch;

use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr};

/// Evaluates a resolved expression over `batch`, whose columns are the attributes `input`.
pub fn evaluate(expr: &Expr, batch: &RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    match expr {
        Expr::Attribute(a) => {
            let i = input
                .iter()
                .position(|c| c.id == a.id)
                .ok_or_else(|| KilnError::internal(format!("attribute {a} not in input")))?;
            Ok(batch.column(i).clone())
        }
        Expr::Literal(v) => v.to_array(batch.num_rows()),
        Expr::Alias { child, .. } => evaluate(child, batch, input),
        other => Err(KilnError::unsupported(format!("evaluating {other}"))),
    }
}

/// Evaluates a foldable expression to one value.
pub fn evaluate_scalar(expr: &Expr) -> Result<crate::types::ScalarValue> {
    match expr {
        Expr::Literal(v) => Ok(v.clone()),
        other => Err(KilnError::unsupported(format!("evaluating {other}"))),
    }
}
