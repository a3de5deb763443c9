//! Filter: keeps the rows whose predicate is TRUE (NULL drops the row, as in SQL).

use arrow::array::{Array, AsArray};
use arrow::compute::{filter_record_batch, prep_null_mask_filter};
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;

use crate::error::{KilnError, Result};
use crate::expr::eval::evaluate;
use crate::expr::{Attribute, Expr};

/// The rows of `batch` (columns = `input`) for which `condition` is TRUE.
pub fn filter(condition: &Expr, input: &[Attribute], batch: &RecordBatch) -> Result<RecordBatch> {
    if !condition.deterministic() {
        // As Spark's FilterExec: each conjunct sees only the rows every earlier one kept, so
        // rand() draws once per row it is evaluated on (`status = 'paid' AND rand(42) < 0.5`).
        let mut out = batch.clone();
        for c in condition.split_conjunction() {
            if out.num_rows() == 0 {
                break;
            }
            out = filter_by(c, input, &out)?;
        }
        return Ok(out);
    }
    filter_by(condition, input, batch)
}

fn filter_by(condition: &Expr, input: &[Attribute], batch: &RecordBatch) -> Result<RecordBatch> {
    let mask = evaluate(condition, batch, input)?;
    if mask.data_type() != &DataType::Boolean {
        return Err(KilnError::internal(format!("filter condition {condition} is {}, not boolean", mask.data_type())));
    }
    let mask = mask.as_boolean();
    if mask.true_count() == batch.num_rows() {
        return Ok(batch.clone());
    }
    let out = if mask.null_count() > 0 {
        filter_record_batch(batch, &prep_null_mask_filter(mask))?
    } else {
        filter_record_batch(batch, mask)?
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::interpreted::test_util::*;
    use crate::types::ScalarValue;
    use arrow::array::{ArrayRef, BooleanArray};
    use std::sync::Arc;

    #[test]
    fn null_predicate_drops_row() {
        let (a, p) = (attr("a", DataType::Int64), attr("p", DataType::Boolean));
        let pred: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), None, Some(false), Some(true)]));
        let b = batch(&[a.clone(), p.clone()], vec![ints(&[Some(1), Some(2), Some(3), None]), pred]);
        let out = filter(&p.expr(), &[a.clone(), p.clone()], &b).unwrap();
        assert_eq!(col_i64(&[out], 0), vec![Some(1), None]);
        let all = filter(&Expr::lit(ScalarValue::Boolean(true)), &[a.clone(), p.clone()], &b).unwrap();
        assert_eq!(all.num_rows(), 4);
        let none = filter(&Expr::lit(ScalarValue::Null(DataType::Boolean)), &[a, p], &b).unwrap();
        assert_eq!(none.num_rows(), 0);
    }
}
