//! The Generate operator: each input batch becomes the rows its generator makes, each joined to
//! the kept columns of the row it came from (Arrow's `take` on the repeated row indices).

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::{evaluate_all, make_batch};
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Generator};

/// The output batches of one input `batch` (columns `input`), at most `chunk` rows each:
/// the `keep` columns, then the generated ones, as `schema` names them.
pub fn generate(generator: &Generator, outer: bool, keep: &[Attribute], input: &[Attribute], schema: &SchemaRef, batch: &RecordBatch, chunk: usize) -> Result<Vec<RecordBatch>> {
    let args = evaluate_all(&generator.args, batch, input)?;
    let types: Vec<_> = schema.fields().iter().skip(keep.len()).map(|f| f.data_type().clone()).collect();
    let (parent, generated) = generator.generate(&args, batch.num_rows(), outer, &types)?;
    let kept: Vec<&ArrayRef> = keep
        .iter()
        .map(|a| input.iter().position(|c| c.id == a.id).map(|i| batch.column(i)).ok_or_else(|| KilnError::internal(format!("Generate lacks its input column {a}"))))
        .collect::<Result<_>>()?;
    let (total, chunk) = (parent.len(), chunk.max(1));
    let mut out = Vec::with_capacity(total.div_ceil(chunk));
    for start in (0..total).step_by(chunk) {
        let len = chunk.min(total - start);
        let rows = parent.slice(start, len);
        let mut cols = kept.iter().map(|c| Ok(arrow::compute::take(c.as_ref(), &rows, None)?)).collect::<Result<Vec<ArrayRef>>>()?;
        cols.extend(generated.iter().map(|g| g.slice(start, len)));
        out.push(make_batch(schema.clone(), cols, len)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::interpreted::test_util::{attr, batch, col_i64, rows};
    use crate::expr::{Builtin, Expr, GeneratorFunc, ScalarFunc};
    use arrow::datatypes::DataType;

    #[test]
    fn one_batch_in_makes_batches_of_at_most_the_chunk_size_with_the_kept_columns_repeated() {
        let (k, n) = (attr("k", DataType::Int64), attr("n", DataType::Int32));
        let input = vec![k.clone(), n.clone()];
        let b = batch(&input, vec![crate::exec::interpreted::test_util::ints(&[Some(1), Some(2)]), std::sync::Arc::new(arrow::array::Int32Array::from(vec![3, 4]))]);
        // explode(array_repeat(k, n)): k repeated n times.
        let repeat = Expr::Function { func: ScalarFunc::Builtin(Builtin::ArrayRepeat), args: vec![k.expr(), n.expr()] };
        let g = Generator { func: GeneratorFunc::Explode, args: vec![repeat] };
        let col = attr("col", DataType::Int64);
        let schema = crate::exec::interpreted::schema_of(&[k.clone(), col]);
        let out = generate(&g, false, std::slice::from_ref(&k), &input, &schema, &b, 3).unwrap();
        assert_eq!(out.iter().map(|b| b.num_rows()).collect::<Vec<_>>(), [3, 3, 1]);
        assert_eq!(rows(&out), 7);
        assert_eq!(col_i64(&out, 0), col_i64(&out, 1));
        assert_eq!(col_i64(&out, 0), [1, 1, 1, 2, 2, 2, 2].map(Some));
    }
}
