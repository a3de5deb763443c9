//! Running a compiled stage: per batch, fill the slot array with the batch's buffers, call
//! the filter and the sink, and turn output buffers or accumulator memory into Arrow arrays.
//! A partition whose generated code reports a failure runs again on the interpreter.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, PrimitiveArray,
    UInt32Array,
};
use arrow::buffer::{NullBuffer, ScalarBuffer};
use arrow::compute::{concat_batches, take};
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::emit::{out_width, ACC_BYTES};
use super::jit::CompiledStage;
use super::spec::{AggSpec, JoinSpec, OutputColumn, StageSink, StageSpec};
use crate::error::{KilnError, Result};
use crate::exec::interpreted::group_table::GroupTable;
use crate::exec::interpreted::groups::{Grouper, NO_GROUP};
use crate::exec::interpreted::{evaluate_all, make_batch, schema_of};
use crate::expr::{AggFunc, Attribute};

/// Why compiled execution of a partition stopped: the interpreter takes over.
struct Fallback;

/// A join's build side, ready to probe: the rows in one batch, grouped by key.
pub struct BuildTable {
    batch: RecordBatch,
    grouper: Grouper,
    /// Build rows of group g: `rows[offsets[g]..offsets[g + 1]]`.
    offsets: Vec<u32>,
    rows: Vec<u32>,
    /// An all-valid bitmap for build columns without NULLs, made once.
    all_valid: Vec<u8>,
}

impl BuildTable {
    /// The build side's rows, in one batch.
    pub fn rows(&self) -> &RecordBatch {
        &self.batch
    }

    /// Groups the build side by its keys; rows with a NULL key never match and are left out.
    pub fn new(join: &JoinSpec, batches: Vec<RecordBatch>) -> Result<BuildTable> {
        let schema = schema_of(&join.build);
        let batch = if batches.is_empty() { RecordBatch::new_empty(schema.clone()) } else { concat_batches(&schema, &batches)? };
        let keys = evaluate_all(&join.build_keys, &batch, &join.build)?;
        let valid: Vec<u32> = (0..batch.num_rows()).filter(|r| keys.iter().all(|k| k.is_valid(*r))).map(|r| r as u32).collect();
        let mut grouper = Grouper::new(&join.build_keys.iter().map(|k| k.data_type()).collect::<Result<Vec<_>>>()?)?;
        let mut ids = vec![];
        grouper.push_selected(keys, Some(&valid), &mut ids)?;
        let mut offsets = vec![0u32; grouper.num_groups() + 1];
        for id in &ids {
            offsets[*id as usize + 1] += 1;
        }
        for g in 0..grouper.num_groups() {
            offsets[g + 1] += offsets[g];
        }
        let mut fill = offsets.clone();
        let mut rows = vec![0u32; ids.len()];
        for (row, id) in valid.iter().zip(&ids) {
            rows[fill[*id as usize] as usize] = *row;
            fill[*id as usize] += 1;
        }
        let all_valid = vec![0xFFu8; batch.num_rows() / 8 + 2];
        Ok(BuildTable { batch, grouper, offsets, rows, all_valid })
    }

    /// The (stream row, build row) pairs whose keys match, for the selected stream rows.
    fn probe(&self, join: &JoinSpec, stream: &RecordBatch, input: &[Attribute], sel: Option<&[u32]>) -> Result<(Vec<u32>, Vec<u32>)> {
        let mut keys = evaluate_all(&join.stream_keys, stream, input)?;
        // Only the selected rows are hashed: ids[j] is the group of stream row rows[j].
        let every_row: Vec<u32>;
        let rows: &[u32] = match sel {
            Some(s) => {
                let ix = UInt32Array::from(s.to_vec());
                keys = keys.iter().map(|k| take(k.as_ref(), &ix, None)).collect::<std::result::Result<_, _>>()?;
                s
            }
            None => {
                every_row = (0..stream.num_rows() as u32).collect();
                &every_row
            }
        };
        let valid = crate::exec::interpreted::join::keys_valid(&keys);
        let mut ids = vec![];
        self.grouper.probe(&keys, &mut ids)?;
        let (mut left, mut right) = (Vec::with_capacity(rows.len()), Vec::with_capacity(rows.len()));
        for (j, (&row, &id)) in rows.iter().zip(&ids).enumerate() {
            if id == NO_GROUP || !crate::exec::interpreted::join::is_valid(&valid, j) {
                continue;
            }
            for b in &self.rows[self.offsets[id as usize] as usize..self.offsets[id as usize + 1] as usize] {
                left.push(row);
                right.push(*b);
            }
        }
        Ok((left, right))
    }
}

/// Rows per batch below which consecutive batches are merged before an aggregate stage runs.
const COALESCE_ROWS: usize = 8192;

/// Runs of small batches merged into batches of about `COALESCE_ROWS` rows, as they stream by:
/// each batch costs a round of per-batch work (hashing the keys, filling slots).
fn coalesce(batches: impl Iterator<Item = Result<RecordBatch>>) -> impl Iterator<Item = Result<RecordBatch>> {
    let mut batches = batches.peekable();
    std::iter::from_fn(move || {
        let first = batches.next()?;
        let Ok(first) = first else { return Some(first) };
        if first.num_rows() >= COALESCE_ROWS {
            return Some(Ok(first));
        }
        let mut run = vec![first];
        let mut rows = run[0].num_rows();
        while rows < COALESCE_ROWS {
            match batches.peek() {
                Some(Ok(b)) if rows + b.num_rows() <= 2 * COALESCE_ROWS => {
                    rows += b.num_rows();
                    if let Some(Ok(b)) = batches.next() {
                        run.push(b);
                    }
                }
                _ => break,
            }
        }
        Some(if run.len() == 1 { Ok(run.remove(0)) } else { concat_batches(&run[0].schema(), &run).map_err(Into::into) })
    })
}

/// The rows a batch's sink runs over: selected stream rows, and for a join the matching build
/// row of each.
struct Rows {
    stream: Option<Vec<u32>>,
    build: Option<Vec<u32>>,
    count: usize,
}

/// Filters a batch and, for a join, probes the build side: the rows the sink runs over.
fn rows_of(
    spec: &StageSpec,
    compiled: &CompiledStage,
    slots: &[u64],
    batch: &RecordBatch,
    build: Option<&BuildTable>,
    no_nulls: bool,
) -> Result<std::result::Result<Rows, Fallback>> {
    let n = batch.num_rows();
    let Ok(sel) = select(compiled, slots, n, no_nulls) else { return Ok(Err(Fallback)) };
    Ok(Ok(match (&spec.join, build) {
        (Some(j), Some(t)) => {
            let (stream, built) = t.probe(j, batch, &spec.input, sel.as_deref())?;
            let count = stream.len();
            Rows { stream: Some(stream), build: Some(built), count }
        }
        _ => {
            let count = sel.as_ref().map_or(n, |s| s.len());
            Rows { stream: sel, build: None, count }
        }
    }))
}

/// The arrays of `attrs` for the sink's rows: stream columns taken at the stream rows, build
/// columns at the build rows.
fn gather(spec: &StageSpec, batch: &RecordBatch, build: Option<&BuildTable>, rows: &Rows, attrs: &[Attribute]) -> Result<Vec<ArrayRef>> {
    let columns = spec.columns();
    let stream_ix = rows.stream.as_ref().map(|v| UInt32Array::from(v.clone()));
    let build_ix = rows.build.as_ref().map(|v| UInt32Array::from(v.clone()));
    attrs
        .iter()
        .map(|a| {
            let i = columns.iter().position(|c| c.id == a.id).ok_or_else(|| KilnError::internal("gathered column not in the stage"))?;
            let (col, ix) = if i < spec.input.len() {
                (batch.column(i).clone(), &stream_ix)
            } else {
                let t = build.ok_or_else(|| KilnError::internal("build column without a build side"))?;
                (t.batch.column(i - spec.input.len()).clone(), &build_ix)
            };
            Ok(match ix {
                Some(ix) => take(col.as_ref(), ix, None)?,
                None => col,
            })
        })
        .collect()
}

/// The slot array for one batch, with the column pointers filled in (stream columns from
/// `batch`, build columns from the build side), and whether none of those columns has a NULL
/// (the variant without validity reads then runs). The returned buffer backs the validity of
/// columns without nulls and must outlive the calls.
fn input_slots(spec: &StageSpec, compiled: &CompiledStage, batch: &RecordBatch, build: Option<&BuildTable>) -> Result<(Vec<u64>, Vec<u8>, bool)> {
    let mut slots = vec![0u64; compiled.layout.len];
    let all_valid = vec![0xFFu8; batch.num_rows() / 8 + 2];
    let mut no_nulls = true;
    for (i, cols) in compiled.layout.columns.iter().enumerate() {
        let Some([values, validity, voff, boff]) = *cols else { continue };
        let array = if i < spec.input.len() {
            batch.columns().get(i)
        } else {
            build.and_then(|b| b.batch.columns().get(i - spec.input.len()))
        };
        let array = array.ok_or_else(|| KilnError::internal("stage input lacks a column"))?;
        let (ptr, bit_offset) = match array.data_type() {
            DataType::Boolean => {
                let b = array.as_boolean().values();
                (b.values().as_ptr() as u64, b.offset() as u64)
            }
            DataType::Int32 => (array.as_primitive::<Int32Type>().values().as_ptr() as u64, 0),
            DataType::Date32 => (array.as_primitive::<Date32Type>().values().as_ptr() as u64, 0),
            DataType::Int64 => (array.as_primitive::<Int64Type>().values().as_ptr() as u64, 0),
            DataType::Float64 => (array.as_primitive::<Float64Type>().values().as_ptr() as u64, 0),
            DataType::Decimal128(..) => (array.as_primitive::<Decimal128Type>().values().as_ptr() as u64, 0),
            // Strings: the offsets, and the bytes in the slot booleans use for their bit offset.
            DataType::Utf8 => {
                let s = array.as_string::<i32>();
                (s.value_offsets().as_ptr() as u64, s.value_data().as_ptr() as u64)
            }
            // Generated code tests only the validity of other columns.
            _ => (0, 0),
        };
        slots[values] = ptr;
        slots[boff] = bit_offset;
        no_nulls &= array.null_count() == 0;
        match array.nulls() {
            Some(n) => {
                slots[validity] = n.buffer().as_ptr() as u64;
                slots[voff] = n.offset() as u64;
            }
            None => {
                let ones = match build {
                    Some(b) if i >= spec.input.len() => &b.all_valid,
                    _ => &all_valid,
                };
                slots[validity] = ones.as_ptr() as u64;
                slots[voff] = 0;
            }
        }
    }
    Ok((slots, all_valid, no_nulls))
}

/// Calls the sink (the variant for the batch's NULLs) over `rows`: the number of rows an output
/// sink wrote, None when it failed.
fn call_sink(compiled: &CompiledStage, slots: &mut [u64], rows: &Rows, no_nulls: bool) -> Option<usize> {
    if let (Some(k), Some(b)) = (compiled.layout.build_sel, &rows.build) {
        slots[k] = b.as_ptr() as u64;
    }
    let sel_ptr = rows.stream.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    let sink = if no_nulls { compiled.sink_no_nulls } else { compiled.sink };
    // SAFETY: every slot points at a live buffer sized for the batch's rows and `rows.count`
    // selected rows or pairs; accumulators and outputs are sized by the caller.
    let status = unsafe { sink(slots.as_ptr(), sel_ptr, rows.count as i64) };
    usize::try_from(status).ok()
}

/// Runs the filter: the selection vector, or None when every row passes without a filter.
fn select(compiled: &CompiledStage, slots: &[u64], n: usize, no_nulls: bool) -> std::result::Result<Option<Vec<u32>>, Fallback> {
    let filter = if no_nulls { compiled.filter_no_nulls } else { compiled.filter };
    let Some(filter) = filter else { return Ok(None) };
    let mut sel = vec![0u32; n];
    // SAFETY: the slots point at live buffers of `n` rows; `sel` has room for every row.
    let count = unsafe { filter(slots.as_ptr(), n as i64, sel.as_mut_ptr()) };
    if count < 0 {
        return Err(Fallback);
    }
    sel.truncate(count as usize);
    Ok(Some(sel))
}

/// Runs an output stage over one batch of its input: the stage's output rows, or None when
/// the generated code gave up on the batch (the interpreter then runs it).
pub fn output_batch(spec: &StageSpec, compiled: &CompiledStage, batch: &RecordBatch, builds: &[&BuildTable]) -> Result<Option<RecordBatch>> {
    let StageSink::Output { columns, output } = &spec.sink else {
        return Err(KilnError::internal("output_batch on an aggregate stage"));
    };
    if batch.num_rows() == 0 {
        return Ok(Some(RecordBatch::new_empty(schema_of(output))));
    }
    let build = builds.first().copied();
    let (mut slots, _all_valid, no_nulls) = input_slots(spec, compiled, batch, build)?;
    let Ok(rows) = rows_of(spec, compiled, &slots, batch, build, no_nulls)? else { return Ok(None) };
    let count = rows.count;
    // Output buffers: u128 backing keeps decimals aligned.
    let mut buffers: Vec<Option<(Vec<u128>, Vec<u8>)>> = vec![];
    for (c, out) in columns.iter().zip(&compiled.layout.outputs) {
        match (c, out) {
            (OutputColumn::Computed(e), Some([v, ok])) => {
                let t = e.data_type()?;
                let words = (count * out_width(&t)).div_ceil(16).max(1);
                let mut values = vec![0u128; words];
                let mut valid = vec![0u8; count.max(1)];
                slots[*v] = values.as_mut_ptr() as u64;
                slots[*ok] = valid.as_mut_ptr() as u64;
                buffers.push(Some((values, valid)));
            }
            _ => buffers.push(None),
        }
    }
    let mut emitted = vec![0u32; count.max(1)];
    if let Some(k) = compiled.layout.emitted {
        slots[k] = emitted.as_mut_ptr() as u64;
    }
    let Some(written) = call_sink(compiled, &mut slots, &rows, no_nulls) else { return Ok(None) };
    // Conditions on joined rows dropped some pairs: copied columns follow the written ones.
    let (rows, count) = if compiled.layout.emitted.is_some() {
        emitted.truncate(written);
        let pick = |v: &Option<Vec<u32>>| v.as_ref().map(|v| emitted.iter().map(|j| v[*j as usize]).collect::<Vec<u32>>());
        (Rows { stream: pick(&rows.stream), build: pick(&rows.build), count: written }, written)
    } else {
        (rows, count)
    };
    let all = spec.columns();
    // Copied columns are gathered together (one index array per side).
    let copied: Vec<Attribute> = columns
        .iter()
        .filter_map(|c| match c {
            OutputColumn::Copied(i) => all.get(*i).cloned(),
            OutputColumn::Computed(_) => None,
        })
        .collect();
    let mut gathered = gather(spec, batch, build, &rows, &copied)?.into_iter();
    let mut arrays = vec![];
    for ((c, buf), attr) in columns.iter().zip(buffers).zip(output) {
        let array: ArrayRef = match (c, buf) {
            (OutputColumn::Computed(_), Some((values, valid))) => to_array(&attr.data_type, &values, &valid[..count], count)?,
            (OutputColumn::Copied(_), _) => gathered.next().ok_or_else(|| KilnError::internal("copied column out of range"))?,
            _ => return Err(KilnError::internal("output column without a buffer")),
        };
        arrays.push(array);
    }
    Ok(Some(make_batch(schema_of(output), arrays, count)?))
}

fn bytes(words: &[u128]) -> &[u8] {
    // SAFETY: u128 has no padding; any byte pattern is a valid u8.
    unsafe { std::slice::from_raw_parts(words.as_ptr() as *const u8, std::mem::size_of_val(words)) }
}

fn read<const N: usize>(b: &[u8], at: usize) -> Result<[u8; N]> {
    b.get(at..at + N).and_then(|s| s.try_into().ok()).ok_or_else(|| KilnError::internal("read past a generated buffer"))
}

fn nulls(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|v| *v) {
        None
    } else {
        Some(NullBuffer::from(valid))
    }
}

/// An Arrow array from a buffer written by generated code (values of `out_width` bytes).
fn to_array(t: &DataType, values: &[u128], valid: &[u8], count: usize) -> Result<ArrayRef> {
    let b = bytes(values);
    let nulls = nulls(valid.iter().map(|v| *v != 0).collect());
    let w = out_width(t);
    Ok(match t {
        DataType::Boolean => {
            let vals: Vec<bool> = (0..count).map(|i| b.get(i).is_some_and(|v| *v != 0)).collect();
            Arc::new(BooleanArray::new(vals.into(), nulls))
        }
        DataType::Int32 => Arc::new(Int32Array::new(collect(count, |i| read::<4>(b, i * w).map(i32::from_le_bytes))?, nulls)),
        DataType::Date32 => Arc::new(Date32Array::new(collect(count, |i| read::<4>(b, i * w).map(i32::from_le_bytes))?, nulls)),
        DataType::Int64 => Arc::new(Int64Array::new(collect(count, |i| read::<8>(b, i * w).map(i64::from_le_bytes))?, nulls)),
        DataType::Float64 => Arc::new(Float64Array::new(collect(count, |i| read::<8>(b, i * w).map(f64::from_le_bytes))?, nulls)),
        DataType::Decimal128(p, s) => Arc::new(
            Decimal128Array::new(collect(count, |i| read::<16>(b, i * w).map(i128::from_le_bytes))?, nulls).with_precision_and_scale(*p, *s)?,
        ),
        other => return Err(KilnError::internal(format!("generated output of type {other}"))),
    })
}

fn collect<T: ArrowNativeType>(n: usize, f: impl Fn(usize) -> Result<T>) -> Result<ScalarBuffer<T>> {
    // Sized up front: collecting through `Result` would grow the vector from empty.
    let mut values = Vec::with_capacity(n);
    for i in 0..n {
        values.push(f(i)?);
    }
    Ok(values.into())
}

/// Runs an aggregate stage over one partition of its input, batch by batch: the partial
/// aggregate's output, or None when the generated code gave up (the interpreter then runs the
/// partition again).
pub fn aggregate_partition(
    spec: &StageSpec,
    compiled: &CompiledStage,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    builds: &[&BuildTable],
) -> Result<Option<Vec<RecordBatch>>> {
    let StageSink::Aggregate { keys, keys_in_code, aggregates, output, finish } = &spec.sink else {
        return Err(KilnError::internal("aggregate_partition on an output stage"));
    };
    let build = builds.first().copied();
    let merged = coalesce(batches);
    let stride = ACC_BYTES * aggregates.len();
    let key_types = keys.iter().map(|k| k.data_type()).collect::<Result<Vec<_>>>()?;
    // Generated code groups the rows in the shared table, whose payload holds the accumulators.
    let mut table = if *keys_in_code { Some(GroupTable::new(&key_types, stride)?) } else { None };
    let mut grouper = if keys.is_empty() || table.is_some() { None } else { Some(Grouper::new(&key_types)?) };
    let mut groups = 1;
    let mut acc: Vec<u128> = vec![0; stride.div_ceil(16).max(1)];
    let mut gids: Vec<u32> = vec![];
    // Columns the grouping keys read, gathered per batch when keys see joined rows.
    let key_columns = attributes_of(keys);
    let condition_columns = attributes_of(&spec.post_conditions);
    for batch in merged {
        let batch = &batch?;
        let (mut slots, _all_valid, no_nulls) = input_slots(spec, compiled, batch, build)?;
        let Ok(mut rows) = rows_of(spec, compiled, &slots, batch, build, no_nulls)? else { return Ok(None) };
        if grouper.is_some() && !spec.post_conditions.is_empty() {
            // A group exists only for pairs that pass the join's other conditions, so they are
            // applied before the keys are hashed (the sink tests them again, and they hold).
            let Ok(passing) = passing_pairs(spec, batch, build, rows, &condition_columns) else { return Ok(None) };
            rows = passing;
        }
        if rows.count == 0 {
            continue;
        }
        if let Some(g) = &mut grouper {
            // Keys are hashed per batch, for the selected rows (or joined pairs) only.
            if spec.join.is_some() {
                let gathered = gather(spec, batch, build, &rows, &key_columns)?;
                let key_batch = make_batch(schema_of(&key_columns), gathered, rows.count)?;
                g.push(evaluate_all(keys, &key_batch, &key_columns)?, &mut gids)?;
            } else {
                g.push_selected(evaluate_all(keys, batch, &spec.input)?, rows.stream.as_deref(), &mut gids)?;
            }
            groups = g.num_groups();
            acc.resize((groups * stride).div_ceil(16).max(1), 0);
        }
        if let (Some(k), Some(_)) = (compiled.layout.gids, &grouper) {
            slots[k] = gids.as_ptr() as u64;
        }
        if let Some(k) = compiled.layout.acc {
            slots[k] = acc.as_mut_ptr() as u64;
        }
        if let (Some(k), Some(t)) = (compiled.layout.table, &mut table) {
            slots[k] = t.header_ptr() as u64;
        }
        if call_sink(compiled, &mut slots, &rows, no_nulls).is_none() {
            return Ok(None);
        }
    }
    // Without keys there is one group even over no rows; with keys, only the groups seen.
    let (groups, mut columns, b) = match (&table, &grouper) {
        (Some(t), _) => (t.num_groups(), t.keys()?, t.payload()),
        (None, Some(g)) => (g.num_groups(), g.keys()?, bytes(&acc)),
        (None, None) => (groups, vec![], bytes(&acc)),
    };
    for (i, a) in aggregates.iter().enumerate() {
        match state_arrays(a, b, i * ACC_BYTES, stride, groups)? {
            Some(arrays) => columns.extend(arrays),
            None => return Ok(None),
        }
    }
    let merged = make_batch(schema_of(output), columns, groups)?;
    // A final aggregate: the interpreter finishes the merged buffers (one row per group) into
    // the results, so they are exactly its own.
    if let Some(node) = finish {
        let crate::physical::PhysicalPlan::HashAggregate { grouping, aggregates, result, .. } = node.as_ref() else {
            return Err(KilnError::internal("a final aggregate stage without its HashAggregate"));
        };
        let mut agg = crate::exec::interpreted::HashAggregator::new(crate::physical::AggregateMode::Final, grouping, aggregates, result, output)?;
        agg.push(&merged)?;
        return agg.finish().map(Some);
    }
    Ok(Some(vec![merged]))
}

/// The distinct columns `exprs` read, in order of first use.
fn attributes_of(exprs: &[crate::expr::Expr]) -> Vec<Attribute> {
    let mut v: Vec<Attribute> = vec![];
    for a in exprs.iter().flat_map(|e| e.attributes()) {
        if !v.iter().any(|x| x.id == a.id) {
            v.push(a);
        }
    }
    v
}

/// The joined pairs of `rows` for which every one of the stage's post-join conditions is TRUE,
/// evaluated by the interpreter.
fn passing_pairs(spec: &StageSpec, batch: &RecordBatch, build: Option<&BuildTable>, rows: Rows, columns: &[Attribute]) -> Result<Rows> {
    let gathered = gather(spec, batch, build, &rows, columns)?;
    let pairs = make_batch(schema_of(columns), gathered, rows.count)?;
    let mut keep = vec![true; rows.count];
    for c in &spec.post_conditions {
        let pass = crate::exec::eval::evaluate_predicate(c, &pairs, columns)?;
        for (k, i) in keep.iter_mut().zip(0..) {
            *k &= pass.is_valid(i) && pass.value(i);
        }
    }
    let pick = |v: Option<Vec<u32>>| v.map(|v| v.into_iter().zip(&keep).filter(|(_, k)| **k).map(|(x, _)| x).collect::<Vec<u32>>());
    let (stream, build) = (pick(rows.stream), pick(rows.build));
    let count = keep.iter().filter(|k| **k).count();
    Ok(Rows { stream, build, count })
}

/// The buffer columns of one aggregate, exactly as the interpreter's partial aggregate writes
/// them; None when a decimal sum exceeds its precision (the interpreter reports it).
fn state_arrays(a: &AggSpec, b: &[u8], base: usize, stride: usize, groups: usize) -> Result<Option<Vec<ArrayRef>>> {
    let value_at = |g: usize| base + g * stride;
    let aux = |g: usize| read::<8>(b, value_at(g) + 16).map(i64::from_le_bytes);
    let seen: Vec<bool> = (0..groups).map(|g| aux(g).map(|v| v != 0)).collect::<Result<_>>()?;
    let i64s = |off: usize| collect(groups, |g| read::<8>(b, value_at(g) + off).map(i64::from_le_bytes));
    let f64s = || collect(groups, |g| read::<8>(b, value_at(g)).map(f64::from_le_bytes));
    let i128s = || collect(groups, |g| read::<16>(b, value_at(g)).map(i128::from_le_bytes));
    let buffer_type = |i: usize| a.buffer.get(i).map(|x| x.data_type.clone()).ok_or_else(|| KilnError::internal("missing buffer attribute"));
    let decimal = |values: ScalarBuffer<i128>, t: DataType, nulls: Option<NullBuffer>| -> Result<Option<ArrayRef>> {
        let DataType::Decimal128(p, s) = t else { return Err(KilnError::internal("decimal buffer of another type")) };
        let bound = 10i128.checked_pow(p as u32).unwrap_or(i128::MAX);
        if values.iter().any(|v| v.unsigned_abs() >= bound.unsigned_abs()) {
            return Ok(None);
        }
        Ok(Some(Arc::new(Decimal128Array::new(values, nulls).with_precision_and_scale(p, s)?)))
    };
    let counts = || -> Result<ArrayRef> { Ok(Arc::new(Int64Array::new(i64s(16)?, None))) };
    Ok(Some(match (a.func, &a.arg_type) {
        (AggFunc::Count, _) => vec![counts()?],
        (AggFunc::Sum, DataType::Int32 | DataType::Int64) => vec![Arc::new(Int64Array::new(i64s(0)?, nulls(seen)))],
        (AggFunc::Sum, DataType::Float64) => vec![Arc::new(Float64Array::new(f64s()?, nulls(seen)))],
        (AggFunc::Sum, DataType::Decimal128(..)) => {
            let Some(sums) = decimal(i128s()?, buffer_type(0)?, None)? else { return Ok(None) };
            let empty: BooleanArray = seen.iter().map(|s| Some(!s)).collect();
            vec![sums, Arc::new(empty)]
        }
        (AggFunc::Avg, DataType::Decimal128(..)) => {
            let Some(sums) = decimal(i128s()?, buffer_type(0)?, None)? else { return Ok(None) };
            vec![sums, counts()?]
        }
        (AggFunc::Avg, _) => vec![Arc::new(Float64Array::new(f64s()?, None)), counts()?],
        (AggFunc::Min | AggFunc::Max, t) => {
            let n = nulls(seen);
            let array: ArrayRef = match t {
                DataType::Int32 => Arc::new(Int32Array::new(collect(groups, |g| read::<4>(b, value_at(g)).map(i32::from_le_bytes))?, n)),
                DataType::Date32 => Arc::new(Date32Array::new(collect(groups, |g| read::<4>(b, value_at(g)).map(i32::from_le_bytes))?, n)),
                DataType::Int64 => Arc::new(Int64Array::new(i64s(0)?, n)),
                DataType::Float64 => Arc::new(Float64Array::new(f64s()?, n)),
                DataType::Decimal128(p, s) => {
                    let values = if *p <= 18 { collect(groups, |g| read::<8>(b, value_at(g)).map(|x| i64::from_le_bytes(x) as i128))? } else { i128s()? };
                    Arc::new(PrimitiveArray::<Decimal128Type>::new(values, n).with_precision_and_scale(*p, *s)?)
                }
                other => return Err(KilnError::internal(format!("generated min/max over {other}"))),
            };
            vec![array]
        }
        (f, t) => return Err(KilnError::internal(format!("generated {} over {t}", f.name()))),
    }))
}
