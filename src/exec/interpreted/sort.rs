//! Sort (full or top-k) and limit over one partition.

use arrow::array::{make_comparator, Array, ArrayRef, ArrowPrimitiveType, AsArray, PrimitiveArray, UInt32Array};
use arrow::compute::{lexsort_to_indices, take_record_batch, SortColumn, SortOptions};
use arrow::record_batch::RecordBatch;

use super::concat;
use crate::error::Result;
use crate::expr::eval::evaluate;
use crate::expr::{Attribute, SortOrder};

/// A sort key's values as Spark orders them: -0.0 ties with 0.0 and every NaN is one NaN, the
/// largest value (arrow orders floats by `total_cmp`, where -0.0 < 0.0 and -NaN is smallest).
pub(crate) fn sort_key(e: &crate::expr::Expr, batch: &RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    crate::expr::eval::normalize_floats(&evaluate(e, batch, input)?, true)
}

/// Arrow's sort options for one sort key.
pub(crate) fn sort_options(o: &SortOrder) -> SortOptions {
    SortOptions { descending: !o.ascending, nulls_first: o.nulls_first }
}

/// Sorts all rows of a partition by `order`; with `limit`, only the first `limit` rows (top-k).
pub fn sort(order: &[SortOrder], input: &[Attribute], batches: Vec<RecordBatch>, limit: Option<usize>) -> Result<Vec<RecordBatch>> {
    // Rows already in order (a shuffle of a table stored by its key) are neither copied into
    // one batch nor sorted.
    if limit.is_none() && in_order(order, input, &batches)? {
        return Ok(batches);
    }
    let batch = concat(input, &batches)?;
    drop(batches);
    if order.is_empty() || batch.num_rows() == 0 {
        return Ok(self::limit(vec![batch], limit.unwrap_or(usize::MAX)));
    }
    let columns = order
        .iter()
        .map(|o| Ok(SortColumn { values: sort_key(&o.expr, &batch, input)?, options: Some(sort_options(o)) }))
        .collect::<Result<Vec<_>>>()?;
    let packed = match (&columns[..], limit) {
        ([c], None) => packed_sort_indices(&c.values, sort_options(&order[0])),
        _ => None,
    };
    let indices = match packed {
        Some(ix) => ix,
        None => lexsort_to_indices(&columns, limit)?,
    };
    // Rows in order after all (a NaN or -0.0 among floats) are not copied again.
    if indices.len() == batch.num_rows() && indices.values().iter().enumerate().all(|(i, &ix)| ix as usize == i) {
        return Ok(vec![batch]);
    }
    Ok(vec![take_record_batch(&batch, &indices)?])
}

/// Whether the rows of `batches`, read in turn, are already in `order` (ties in any order):
/// stops at the first row out of order.
fn in_order(order: &[SortOrder], input: &[Attribute], batches: &[RecordBatch]) -> Result<bool> {
    use std::cmp::Ordering;
    // The keys of the last row of the batch before.
    let mut last: Option<Vec<ArrayRef>> = None;
    for b in batches.iter().filter(|b| b.num_rows() > 0) {
        let keys = order.iter().map(|o| sort_key(&o.expr, b, input)).collect::<Result<Vec<_>>>()?;
        let lex = |left: &[ArrayRef], i: usize, right: &[ArrayRef], j: usize| -> Result<Ordering> {
            for ((l, r), o) in left.iter().zip(right).zip(order) {
                match make_comparator(l.as_ref(), r.as_ref(), sort_options(o))?(i, j) {
                    Ordering::Equal => continue,
                    other => return Ok(other),
                }
            }
            Ok(Ordering::Equal)
        };
        if let Some(last) = &last {
            if lex(last, 0, &keys, 0)? == Ordering::Greater {
                return Ok(false);
            }
        }
        let sorted = match (&keys[..], &order[..]) {
            ([k], [o]) if k.null_count() == 0 => match sorted_integers(k, o.ascending) {
                Some(sorted) => sorted,
                None => rows_in_order(&keys, order)?,
            },
            _ => rows_in_order(&keys, order)?,
        };
        if !sorted {
            return Ok(false);
        }
        last = Some(keys.iter().map(|k| k.slice(b.num_rows() - 1, 1)).collect());
    }
    Ok(true)
}

/// Whether one batch's rows are in order by its sort keys `keys`, compared as arrow's sort does.
fn rows_in_order(keys: &[ArrayRef], order: &[SortOrder]) -> Result<bool> {
    use std::cmp::Ordering;
    let compare = keys.iter().zip(order).map(|(k, o)| make_comparator(k.as_ref(), k.as_ref(), sort_options(o))).collect::<std::result::Result<Vec<_>, _>>()?;
    let rows = keys.first().map_or(0, |k| k.len());
    Ok((1..rows).all(|i| compare.iter().map(|c| c(i - 1, i)).find(|o| *o != Ordering::Equal) != Some(Ordering::Greater)))
}

/// Whether an integer-like key without NULLs is sorted; None for other types.
fn sorted_integers(values: &ArrayRef, ascending: bool) -> Option<bool> {
    use arrow::datatypes::{DataType, Date32Type, Int32Type, Int64Type};
    fn sorted<T: Ord>(v: &[T], ascending: bool) -> bool {
        if ascending { v.is_sorted() } else { v.is_sorted_by(|a, b| a >= b) }
    }
    match values.data_type() {
        DataType::Int64 => Some(sorted(values.as_primitive::<Int64Type>().values(), ascending)),
        DataType::Int32 => Some(sorted(values.as_primitive::<Int32Type>().values(), ascending)),
        DataType::Date32 => Some(sorted(values.as_primitive::<Date32Type>().values(), ascending)),
        _ => None,
    }
}

/// Up to this many ascending runs, packed keys are merged as they are rather than sorted by radix.
const PRESORTED_RUNS_MAX: usize = 64;

/// The sorting permutation of one integer-like key: each row's rank (the key less the
/// smallest, or the largest less the key descending; NULLs before or after every value) above
/// its row index in one u64, so a sort of plain integers orders the rows (ties in input order)
/// without a comparator per pair. None when rank and index need more than 64 bits.
fn packed_sort_indices(values: &ArrayRef, o: SortOptions) -> Option<UInt32Array> {
    use arrow::datatypes::{DataType, Date32Type, Int16Type, Int32Type, Int64Type, Int8Type};
    fn packed<T: ArrowPrimitiveType>(a: &PrimitiveArray<T>, o: SortOptions) -> Option<UInt32Array>
    where
        T::Native: Into<i64>,
    {
        let n = a.len();
        if n < 2 || n > u32::MAX as usize {
            return None;
        }
        let value = |i: usize| -> Option<i64> { a.is_valid(i).then(|| a.value(i).into()) };
        let (min, max) = (0..n).filter_map(value).fold(None, |acc: Option<(i64, i64)>, v| Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v)))))?;
        // Ranks 1..=range for values, 0 or range + 1 for NULLs.
        let range = (max as i128 - min as i128 + 1) as u128;
        let index_bits = 64 - ((n - 1) as u64).leading_zeros();
        let rank_bits = 128 - (range + 1).leading_zeros();
        if index_bits + rank_bits > 64 {
            return None;
        }
        let null_rank = if o.nulls_first { 0 } else { range as u64 + 1 };
        let mut keys: Vec<u64> = (0..n)
            .map(|i| {
                let rank = match value(i) {
                    Some(v) if o.descending => (max - v) as u64 + 1,
                    Some(v) => (v - min) as u64 + 1,
                    None => null_rank,
                };
                (rank << index_bits) | i as u64
            })
            .collect();
        // A stable sort (driftsort) merges the sorted runs it finds: a shuffle's partition of
        // a table stored in key order is a few such runs, one per input partition. Keys in
        // many runs (a random order) sort faster by radix. The keys are distinct (the row
        // index is in them), so every order they sort to is the same.
        let runs = 1 + keys.windows(2).filter(|w| w[0] > w[1]).count();
        if runs <= PRESORTED_RUNS_MAX {
            keys.sort();
        } else if rank_bits <= 32 {
            // By rank alone, stably: the keys are in row order already, so the row index
            // below the rank costs no radix passes of its own.
            radsort::sort_by_key(&mut keys, |k| (k >> index_bits) as u32);
        } else {
            radsort::sort_by_key(&mut keys, |k| k >> index_bits);
        }
        let mask = (1u64 << index_bits) - 1;
        Some(keys.into_iter().map(|k| (k & mask) as u32).collect::<Vec<u32>>().into())
    }
    match values.data_type() {
        DataType::Int64 => packed(values.as_primitive::<Int64Type>(), o),
        DataType::Int32 => packed(values.as_primitive::<Int32Type>(), o),
        DataType::Date32 => packed(values.as_primitive::<Date32Type>(), o),
        DataType::Int16 => packed(values.as_primitive::<Int16Type>(), o),
        DataType::Int8 => packed(values.as_primitive::<Int8Type>(), o),
        _ => None,
    }
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
    fn one_integer_key_sorts_packed_as_arrow_sorts() {
        // Extremes, negatives, duplicates and NULLs in a random order (sorted by radix, by a
        // rank of 32 bits or of 64), and in three ascending runs (merged); arrow's lexsort is
        // the oracle.
        let mut random: Vec<Option<i64>> = (0..300i64).map(|i| if i % 17 == 0 { None } else { Some((i * 7919) % 101 - 50) }).collect();
        random.extend([Some(i32::MIN as i64), Some(i32::MAX as i64)]);
        let runs: Vec<Option<i64>> = (0..3).flat_map(|r| (0..100i64).map(move |i| if i == 50 { None } else { Some(i * 3 - r) })).collect();
        // Ranks past 32 bits (radix passes over a 64-bit rank).
        let wide_ranks: Vec<Option<i64>> = random.iter().map(|v| v.map(|x| (x % 1000) << 34)).collect();
        for vals in [random, runs, wide_ranks] {
            let a: ArrayRef = std::sync::Arc::new(arrow::array::Int64Array::from(vals.clone()));
            for (descending, nulls_first) in [(false, true), (false, false), (true, true), (true, false)] {
                let o = SortOptions { descending, nulls_first };
                let packed = packed_sort_indices(&a, o).expect("fits 64 bits");
                let arrow_sorted = lexsort_to_indices(&[SortColumn { values: a.clone(), options: Some(o) }], None).unwrap();
                let keys = |ix: &UInt32Array| ix.values().iter().map(|i| vals[*i as usize]).collect::<Vec<_>>();
                assert_eq!(keys(&packed), keys(&arrow_sorted), "{o:?}");
                // Ties keep their input order.
                assert!(packed.values().windows(2).all(|w| vals[w[0] as usize] != vals[w[1] as usize] || w[0] < w[1]), "{o:?}");
            }
        }
        // i64's whole range needs 64 bits of rank: arrow sorts it.
        let wide: ArrayRef = std::sync::Arc::new(arrow::array::Int64Array::from(vec![i64::MIN, 0, i64::MAX]));
        assert!(packed_sort_indices(&wide, SortOptions::default()).is_none());
        let dates: ArrayRef = std::sync::Arc::new(arrow::array::Date32Array::from(vec![Some(3), None, Some(-1)]));
        assert_eq!(packed_sort_indices(&dates, SortOptions { descending: false, nulls_first: true }).expect("packs").values().to_vec(), vec![1, 2, 0]);
    }

    #[test]
    fn rows_already_in_order_are_handed_on_unsorted_and_uncopied() {
        let (k, v) = (attr("k", DataType::Int64), attr("v", DataType::Utf8));
        let input = [k.clone(), v.clone()];
        let b = |ks: &[Option<i64>], vs: &[Option<&str>]| batch(&input, vec![ints(ks), strs(vs)]);
        let asc = [order(&k, true, true), order(&v, true, true)];
        // Ties on k ordered by v, NULLs first, across a batch boundary and an empty batch.
        let sorted = vec![b(&[None, Some(1), Some(1)], &[Some("z"), None, Some("a")]), b(&[], &[]), b(&[Some(1), Some(5)], &[Some("a"), None])];
        let out = sort(&asc, &input, sorted.clone(), None).unwrap();
        assert_eq!(out.len(), 3, "handed on batch for batch");
        assert!(out.iter().zip(&sorted).all(|(o, s)| o.column(0).to_data().ptr_eq(&s.column(0).to_data())), "not copied");
        // Out of order only at the boundary (5 then 4), or only on the second key, or only by
        // NULL placement: sorted as before.
        let cases = [
            (vec![b(&[Some(1), Some(5)], &[None, None]), b(&[Some(4), Some(6)], &[None, None])], asc.to_vec(), vec![Some(1), Some(4), Some(5), Some(6)]),
            (vec![b(&[Some(1), Some(1)], &[Some("b"), Some("a")])], asc.to_vec(), vec![Some(1), Some(1)]),
            (vec![b(&[Some(1), None], &[None, None])], vec![order(&k, true, true)], vec![None, Some(1)]),
            (vec![b(&[Some(3), Some(1), Some(2)], &[None, None, None])], vec![order(&k, false, false)], vec![Some(3), Some(2), Some(1)]),
        ];
        for (batches, o, expected) in cases {
            let out = sort(&o, &input, batches, None).unwrap();
            assert_eq!(out.len(), 1, "{o:?}");
            assert_eq!(col_i64(&out, 0), expected, "{o:?}");
        }
        let out = sort(&asc, &input, vec![b(&[Some(1), Some(1)], &[Some("b"), Some("a")])], None).unwrap();
        assert_eq!(col_str(&out, 1), vec!["a", "b"]);
        // Descending integers already in order, the fast path: handed on.
        let desc = vec![b(&[Some(9), Some(9), Some(2)], &[None, None, None]), b(&[Some(2), Some(-4)], &[None, None])];
        assert_eq!(sort(&[order(&k, false, false)], &input, desc, None).unwrap().len(), 2);
    }

    #[test]
    fn limit_slices_across_batches() {
        let k = attr("k", DataType::Int64);
        let bs = vec![batch(std::slice::from_ref(&k), vec![ints(&[Some(1), Some(2)])]), batch(&[k], vec![ints(&[Some(3), Some(4)])])];
        assert_eq!(col_i64(&limit(bs.clone(), 3), 0), vec![Some(1), Some(2), Some(3)]);
        assert_eq!(rows(&limit(bs, 0)), 0);
    }
}
