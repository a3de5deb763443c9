//! Project: evaluates the select list over each batch.

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::error::Result;
use crate::expr::{Attribute, Expr};

use super::{evaluate_all, make_batch};

/// Evaluates `list` over `batch` (columns = `input`) into a batch of `output_schema`.
pub fn project(list: &[Expr], input: &[Attribute], output_schema: &SchemaRef, batch: &RecordBatch) -> Result<RecordBatch> {
    let columns = evaluate_all(list, batch, input)?;
    make_batch(output_schema.clone(), columns, batch.num_rows())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::eval::schema_of;
    use crate::exec::interpreted::test_util::*;
    use crate::types::ScalarValue;
    use arrow::datatypes::DataType;

    #[test]
    fn projects_columns_literals_and_nothing() {
        let (a, b) = (attr("a", DataType::Int64), attr("b", DataType::Utf8));
        let input = batch(&[a.clone(), b.clone()], vec![ints(&[Some(1), None]), strs(&[Some("x"), Some("y")])]);
        let list = vec![b.expr(), Expr::lit(ScalarValue::Int64(7)).alias("seven"), a.expr()];
        let schema = schema_of(&crate::plan::named_outputs(&list));
        let out = project(&list, &[a.clone(), b.clone()], &schema, &input).unwrap();
        assert_eq!(col_str(std::slice::from_ref(&out), 0), vec!["x", "y"]);
        assert_eq!(col_i64(std::slice::from_ref(&out), 1), vec![Some(7), Some(7)]);
        assert_eq!(col_i64(&[out], 2), vec![Some(1), None]);
        let empty = project(&[], &[a, b], &schema_of(&[]), &input).unwrap();
        assert_eq!(empty.num_rows(), 2);
    }
}
