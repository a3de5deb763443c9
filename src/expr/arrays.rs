//! Spark's array functions over the arrays kiln makes (collect_list / collect_set results):
//! size/cardinality, sort_array, array_sort, array_contains, array_join, array_distinct,
//! array_max, array_min. Arrays are arrow `ListArray`s of `types::list_type`.

use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, BooleanArray, Int32Array, ListArray, StringArray};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::compute::{cast, SortOptions};
use arrow::datatypes::DataType;
use arrow::row::{RowConverter, SortField};

use crate::error::{KilnError, Result};

/// Which array function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArrayFn {
    /// size(a) / cardinality(a): the element count; NULL for a NULL array (ANSI).
    Size,
    /// sort_array(a[, asc]): NULLs first ascending, last descending.
    SortArray,
    /// array_sort(a): ascending, NULLs last.
    ArraySort,
    /// array_contains(a, v).
    Contains,
    /// array_join(a, delimiter[, nullReplacement]).
    Join,
    /// array_distinct(a): the first of equal elements, in order.
    Distinct,
    /// array_max(a) / array_min(a): NULL elements skipped.
    Max,
    /// array_min(a).
    Min,
    /// element_at(a, i): 1-based, negative from the end; out of bounds an error (ANSI).
    ElementAt,
    /// try_element_at(a, i): element_at with NULL out of bounds.
    TryElementAt,
    /// get(a, i): 0-based, NULL out of bounds.
    Get,
    /// a[i]: 0-based, an error out of bounds (ANSI).
    GetItem,
    /// array_position(a, v): the 1-based position of the first v, 0 when absent.
    Position,
    /// array_remove(a, v): a without the elements equal to v.
    Remove,
    /// slice(a, start, length): start 1-based or negative from the end.
    Slice,
}

fn lists(a: &ArrayRef) -> Result<&ListArray> {
    a.as_list_opt::<i32>().ok_or_else(|| KilnError::internal(format!("an array function over {}", a.data_type())))
}

/// The largest (smallest) non-NULL element of each row's array, by row-format order.
fn extremum(l: &ListArray, max: bool) -> Result<ArrayRef> {
    let values = l.values();
    let conv = RowConverter::new(vec![SortField::new(values.data_type().clone())])?;
    let rows = conv.convert_columns(std::slice::from_ref(values))?;
    let offsets = l.value_offsets();
    let mut picks: Vec<Option<usize>> = Vec::with_capacity(l.len());
    for i in 0..l.len() {
        let mut best: Option<usize> = None;
        if l.is_valid(i) {
            for k in offsets[i] as usize..offsets[i + 1] as usize {
                if values.is_null(k) {
                    continue;
                }
                best = match best {
                    Some(b) if (max && rows.row(k) <= rows.row(b)) || (!max && rows.row(k) >= rows.row(b)) => Some(b),
                    _ => Some(k),
                };
            }
        }
        picks.push(best);
    }
    let idx = arrow::array::UInt32Array::from(picks.iter().map(|p| p.map(|k| k as u32)).collect::<Vec<_>>());
    Ok(arrow::compute::take(values, &idx, None)?)
}

/// Rebuilds `l` with each row's elements in the order (and selection) `order` gives.
fn reorder(l: &ListArray, mut order: impl FnMut(usize, &[usize]) -> Vec<usize>) -> Result<ArrayRef> {
    let offsets = l.value_offsets();
    let mut idx: Vec<u32> = Vec::with_capacity(l.values().len());
    let mut lengths = Vec::with_capacity(l.len());
    for i in 0..l.len() {
        let items: Vec<usize> = (offsets[i] as usize..offsets[i + 1] as usize).collect();
        let kept = if l.is_valid(i) { order(i, &items) } else { vec![] };
        lengths.push(kept.len());
        idx.extend(kept.into_iter().map(|k| k as u32));
    }
    let values = arrow::compute::take(l.values(), &arrow::array::UInt32Array::from(idx), None)?;
    let DataType::List(field) = l.data_type() else { return Err(KilnError::internal("reorder of a non-list")) };
    Ok(Arc::new(ListArray::try_new(field.clone(), OffsetBuffer::from_lengths(lengths), values, l.nulls().cloned())?))
}

/// Evaluates `f` over argument arrays of `rows` rows; `result` is the result type.
pub fn eval(f: ArrayFn, args: &[ArrayRef], rows: usize, result: &DataType) -> Result<ArrayRef> {
    let arg = |i: usize| args.get(i).ok_or_else(|| KilnError::internal(format!("{f:?} lacks argument {i}")));
    if arg(0)?.data_type() == &DataType::Null {
        return Ok(new_null_array(result, rows));
    }
    let l = lists(arg(0)?)?;
    let offsets = l.value_offsets();
    let len = |i: usize| (offsets[i + 1] - offsets[i]) as usize;
    Ok(match f {
        ArrayFn::Size => Arc::new((0..l.len()).map(|i| l.is_valid(i).then(|| len(i) as i32)).collect::<Int32Array>()),
        ArrayFn::SortArray | ArrayFn::ArraySort => {
            let ascending = match (f, args.get(1)) {
                (ArrayFn::SortArray, Some(a)) => {
                    let a = cast(a, &DataType::Boolean)?;
                    let a = a.as_boolean();
                    a.is_valid(0) && a.value(0) || a.is_empty()
                }
                _ => true,
            };
            let nulls_first = f == ArrayFn::SortArray && ascending;
            let conv = RowConverter::new(vec![SortField::new_with_options(l.values().data_type().clone(), SortOptions { descending: !ascending, nulls_first })])?;
            let keys = conv.convert_columns(std::slice::from_ref(l.values()))?;
            reorder(l, |_, items| {
                let mut v = items.to_vec();
                v.sort_by(|a, b| keys.row(*a).cmp(&keys.row(*b)));
                v
            })?
        }
        ArrayFn::Distinct => {
            let conv = RowConverter::new(vec![SortField::new(l.values().data_type().clone())])?;
            let keys = conv.convert_columns(std::slice::from_ref(l.values()))?;
            reorder(l, |_, items| {
                let mut seen = std::collections::HashSet::new();
                items.iter().copied().filter(|k| seen.insert(keys.row(*k))).collect()
            })?
        }
        ArrayFn::Max | ArrayFn::Min => extremum(l, f == ArrayFn::Max)?,
        ArrayFn::ElementAt | ArrayFn::TryElementAt | ArrayFn::Get | ArrayFn::GetItem => element(f, l, arg(1)?)?,
        ArrayFn::Position | ArrayFn::Remove => {
            let (v, items, wanted) = elements_and_values(l, arg(1)?)?;
            let equal = |k: usize, i: usize| !l.values().is_null(k) && items.row(k) == wanted.row(i);
            if f == ArrayFn::Position {
                Arc::new(
                    (0..l.len())
                        .map(|i| (l.is_valid(i) && v.is_valid(i)).then(|| (offsets[i] as usize..offsets[i + 1] as usize).position(|k| equal(k, i)).map_or(0, |p| p as i64 + 1)))
                        .collect::<arrow::array::Int64Array>(),
                )
            } else {
                let kept = reorder(l, |i, items| if v.is_valid(i) { items.iter().copied().filter(|k| !equal(*k, i)).collect() } else { vec![] })?;
                with_nulls(kept, v.logical_nulls())?
            }
        }
        ArrayFn::Slice => {
            let (start, length) = (cast(arg(1)?, &DataType::Int32)?, cast(arg(2)?, &DataType::Int32)?);
            let (start, length) = (start.as_primitive::<arrow::datatypes::Int32Type>(), length.as_primitive::<arrow::datatypes::Int32Type>());
            for i in 0..l.len() {
                if l.is_null(i) || start.is_null(i) || length.is_null(i) {
                    continue;
                }
                if start.value(i) == 0 {
                    return Err(KilnError::exec("[INVALID_PARAMETER_VALUE.START] The value of parameter(s) `start` in `slice` is invalid: Expects a positive or a negative value for `start`, but got 0. SQLSTATE: 22023"));
                }
                if length.value(i) < 0 {
                    return Err(KilnError::exec(format!("[INVALID_PARAMETER_VALUE.LENGTH] The value of parameter(s) `length` in `slice` is invalid: Expects `length` greater than or equal to 0, but got {}. SQLSTATE: 22023", length.value(i))));
                }
            }
            let kept = reorder(l, |i, items| {
                if start.is_null(i) || length.is_null(i) {
                    return vec![];
                }
                let (n, s) = (items.len() as i64, start.value(i) as i64);
                let from = if s > 0 { s - 1 } else { n + s };
                if from < 0 || from >= n {
                    return vec![];
                }
                items[from as usize..(from + length.value(i) as i64).min(n) as usize].to_vec()
            })?;
            with_nulls(kept, NullBuffer::union(start.nulls(), length.nulls()))?
        }
        ArrayFn::Contains => {
            let (v, items, wanted) = elements_and_values(l, arg(1)?)?;
            let out: BooleanArray = (0..l.len())
                .map(|i| {
                    if l.is_null(i) || v.is_null(i) {
                        return None;
                    }
                    let range = offsets[i] as usize..offsets[i + 1] as usize;
                    if range.clone().any(|k| !l.values().is_null(k) && items.row(k) == wanted.row(i)) {
                        Some(true)
                    } else if range.into_iter().any(|k| l.values().is_null(k)) {
                        None
                    } else {
                        Some(false)
                    }
                })
                .collect();
            Arc::new(out)
        }
        ArrayFn::Join => {
            let items = cast(l.values(), &DataType::Utf8)?;
            let items = items.as_string::<i32>();
            let delim = cast(arg(1)?, &DataType::Utf8)?;
            let delim = delim.as_string::<i32>();
            let repl = args.get(2).map(|r| cast(r, &DataType::Utf8)).transpose()?;
            let repl = repl.as_ref().map(|r| r.as_string::<i32>());
            let out: StringArray = (0..l.len())
                .map(|i| {
                    if l.is_null(i) || delim.is_null(i) || repl.is_some_and(|r| r.is_null(i)) {
                        return None;
                    }
                    let parts: Vec<&str> = (offsets[i] as usize..offsets[i + 1] as usize)
                        .filter_map(|k| if items.is_valid(k) { Some(items.value(k)) } else { repl.map(|r| r.value(i)) })
                        .collect();
                    Some(parts.join(delim.value(i)))
                })
                .collect();
            Arc::new(out)
        }
    })
}

/// For comparing each row's elements with that row's value `v`: `v` in the element type, and
/// the elements and the values as rows that compare equal when the values are.
fn elements_and_values(l: &ListArray, v: &ArrayRef) -> Result<(ArrayRef, arrow::row::Rows, arrow::row::Rows)> {
    let v = if v.data_type() == l.values().data_type() { v.clone() } else { cast(v, l.values().data_type())? };
    let conv = RowConverter::new(vec![SortField::new(l.values().data_type().clone())])?;
    let (items, wanted) = (conv.convert_columns(std::slice::from_ref(l.values()))?, conv.convert_columns(std::slice::from_ref(&v))?);
    Ok((v, items, wanted))
}

/// Spark's error for an index of 0 where indices count from 1 (element_at, split_part).
pub(crate) fn index_of_zero() -> KilnError {
    KilnError::exec("[INVALID_INDEX_OF_ZERO] The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1). SQLSTATE: 22003")
}

/// One element of each row's array (`f` says how the index counts and what out of bounds is).
fn element(f: ArrayFn, l: &ListArray, index: &ArrayRef) -> Result<ArrayRef> {
    let index = cast(index, &DataType::Int32)?;
    let index = index.as_primitive::<arrow::datatypes::Int32Type>();
    let offsets = l.value_offsets();
    let mut picks: Vec<Option<u32>> = Vec::with_capacity(l.len());
    for i in 0..l.len() {
        if l.is_null(i) || index.is_null(i) {
            picks.push(None);
            continue;
        }
        let (start, len, k) = (offsets[i] as i64, (offsets[i + 1] - offsets[i]) as i64, index.value(i) as i64);
        let at = match f {
            ArrayFn::Get | ArrayFn::GetItem => (0..len).contains(&k).then_some(k),
            _ if k == 0 => return Err(index_of_zero()),
            _ if k > 0 => (k <= len).then_some(k - 1),
            _ => (-k <= len).then_some(len + k),
        };
        match (at, f) {
            (Some(at), _) => picks.push(u32::try_from(start + at).ok()),
            (None, ArrayFn::ElementAt) => {
                return Err(KilnError::exec(format!(
                    "[INVALID_ARRAY_INDEX_IN_ELEMENT_AT] The index {k} is out of bounds. The array has {len} elements. Use `try_element_at` to tolerate accessing element at invalid index and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22003"
                )));
            }
            (None, ArrayFn::GetItem) => {
                return Err(KilnError::exec(format!(
                    "[INVALID_ARRAY_INDEX] The index {k} is out of bounds. The array has {len} elements. Use the SQL function `get()` to tolerate accessing element at invalid index and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22003"
                )));
            }
            (None, _) => picks.push(None),
        }
    }
    Ok(arrow::compute::take(l.values().as_ref(), &arrow::array::UInt32Array::from(picks), None)?)
}

/// `array(a, b, ...)`: one array per row of the arguments' values (already of one type).
pub fn make_array(args: &[ArrayRef], rows: usize, result: &DataType) -> Result<ArrayRef> {
    let DataType::List(field) = result else { return Err(KilnError::internal(format!("array() of type {result}"))) };
    let k = args.len();
    let values = if k == 0 {
        arrow::array::new_empty_array(field.data_type())
    } else {
        let refs: Vec<&dyn Array> = args.iter().map(|a| a.as_ref()).collect();
        let order: Vec<(usize, usize)> = (0..rows).flat_map(|r| (0..k).map(move |c| (c, r))).collect();
        arrow::compute::interleave(&refs, &order)?
    };
    let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(k, rows));
    Ok(Arc::new(ListArray::try_new(field.clone(), offsets, values, None)?))
}

/// `a` with the rows NULL where `nulls` says so as well.
fn with_nulls(a: ArrayRef, nulls: Option<NullBuffer>) -> Result<ArrayRef> {
    let l = lists(&a)?;
    let DataType::List(field) = l.data_type() else { return Err(KilnError::internal("with_nulls of a non-list")) };
    let nulls = NullBuffer::union(l.nulls(), nulls.as_ref());
    Ok(Arc::new(ListArray::try_new(field.clone(), l.offsets().clone(), l.values().clone(), nulls)?))
}

/// `array_repeat(v, n)`: n copies of v per row (none for n <= 0; NULL when n is).
pub fn array_repeat(args: &[ArrayRef], result: &DataType) -> Result<ArrayRef> {
    let DataType::List(field) = result else { return Err(KilnError::internal(format!("array_repeat of type {result}"))) };
    let (v, n) = match args {
        [v, n] => (v, cast(n, &DataType::Int32)?),
        _ => return Err(KilnError::internal("array_repeat arity")),
    };
    let n = n.as_primitive::<arrow::datatypes::Int32Type>();
    let counts: Vec<usize> = (0..n.len()).map(|i| if n.is_valid(i) { n.value(i).max(0) as usize } else { 0 }).collect();
    let total: usize = counts.iter().sum();
    if total > i32::MAX as usize {
        return Err(KilnError::exec(format!("array_repeat: {total} elements, over the limit of {} for the arrays of one batch", i32::MAX)));
    }
    let idx: Vec<u32> = counts.iter().enumerate().flat_map(|(i, c)| std::iter::repeat_n(i as u32, *c)).collect();
    let values = arrow::compute::take(v.as_ref(), &arrow::array::UInt32Array::from(idx), None)?;
    let values = if values.data_type() == field.data_type() { values } else { cast(&values, field.data_type())? };
    Ok(Arc::new(ListArray::try_new(field.clone(), OffsetBuffer::from_lengths(counts), values, n.nulls().cloned())?))
}
