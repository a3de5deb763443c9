//! Sort (full or top-k) and limit over one partition.

use arrow::compute::{lexsort_to_indices, take_record_batch, SortColumn, SortOptions};
use arrow::record_batch::RecordBatch;

use super::concat;
use crate::error::Result;
use crate::expr::eval::evaluate;
use crate::expr::{Attribute, SortOrder};

/// Arrow's sort options for one sort key.
pub(crate) fn sort_options(o: &SortOrder) -> SortOptions {
    SortOptions { descending: !o.ascending, nulls_first: o.nulls_first }
}

/// Sorts all rows of a partition by `order`; with `limit`, only the first `limit` rows (top-k).
pub fn sort(order: &[SortOrder], input: &[Attribute], batches: Vec<RecordBatch>, limit: Option<usize>) -> Result<Vec<RecordBatch>> {
    let batch = concat(input, &batches)?;
    drop(batches);
    if order.is_empty() || batch.num_rows() == 0 {
        return Ok(self::limit(vec![batch], limit.unwrap_or(usize::MAX)));
    }
    let columns = order
        .iter()
        .map(|o| Ok(SortColumn { values: evaluate(&o.expr, &batch, input)?, options: Some(sort_options(o)) }))
        .collect::<Result<Vec<_>>>()?;
    let indices = lexsort_to_indices(&columns, limit)?;
    Ok(vec![take_record_batch(&batch, &indices)?])
}

/// The first `n` rows of `batches`.
pub fn limit(batches: Vec<RecordBatch>, n: usize) -> Vec<RecordBatch> {
    let mut left = n;
    let mut out = vec![];
    for b in batches {
        if left == 0 {
            break;
        }
        if b.num_rows() <= left {
            left -= b.num_rows();
            out.push(b);
        } else {
            out.push(b.slice(0, left));
            left = 0;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::interpreted::test_util::*;
    use arrow::datatypes::DataType;

    fn order(a: &Attribute, ascending: bool, nulls_first: bool) -> SortOrder {
        SortOrder { expr: a.expr(), ascending, nulls_first }
    }

    #[test]
    fn sorts_with_null_placement_direction_and_ties() {
        let (k, v) = (attr("k", DataType::Int64), attr("v", DataType::Utf8));
        let input = [k.clone(), v.clone()];
        let b1 = batch(&input, vec![ints(&[Some(2), None, Some(1)]), strs(&[Some("a"), Some("b"), Some("c")])]);
        let b2 = batch(&input, vec![ints(&[Some(2), Some(3)]), strs(&[Some("d"), None])]);
        let run = |o: Vec<SortOrder>, limit| sort(&o, &input, vec![b1.clone(), b2.clone()], limit).unwrap();
        assert_eq!(col_i64(&run(vec![order(&k, true, true)], None), 0), vec![None, Some(1), Some(2), Some(2), Some(3)]);
        assert_eq!(col_i64(&run(vec![order(&k, true, false)], None), 0), vec![Some(1), Some(2), Some(2), Some(3), None]);
        // Spark's default for DESC is NULLS LAST.
        let desc = run(vec![order(&k, false, false), order(&v, false, true)], None);
        assert_eq!(col_i64(&desc, 0), vec![Some(3), Some(2), Some(2), Some(1), None]);
        assert_eq!(col_str(&desc, 1), vec!["NULL", "d", "a", "c", "b"]);
        let top = run(vec![order(&k, false, true)], Some(2));
        assert_eq!(col_i64(&top, 0), vec![None, Some(3)]);
        assert_eq!(rows(&sort(&[order(&k, true, true)], &input, vec![], Some(3)).unwrap()), 0);
    }

    #[test]
    fn limit_slices_across_batches() {
        let k = attr("k", DataType::Int64);
        let bs = vec![batch(std::slice::from_ref(&k), vec![ints(&[Some(1), Some(2)])]), batch(&[k], vec![ints(&[Some(3), Some(4)])])];
        assert_eq!(col_i64(&limit(bs.clone(), 3), 0), vec![Some(1), Some(2), Some(3)]);
        assert_eq!(rows(&limit(bs, 0)), 0);
    }
}
