//! Running a compiled stage: per batch, fill the slot array with the batch's buffers, call
//! the filter and the sink, and turn output buffers or accumulator memory into Arrow arrays.
//! A partition whose generated code reports a failure runs again on the interpreter.

use std::sync::Arc;

use arrow::array::{
    new_null_array, Array, ArrayRef, AsArray, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, PrimitiveArray,
    UInt32Array,
};
use arrow::buffer::{BooleanBuffer, MutableBuffer, NullBuffer, ScalarBuffer};
use arrow::compute::{concat_batches, take};
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::expr::out_width;
use super::operators::hash_aggregate::ACC_BYTES;
use super::jit::CompiledStage;
use super::jit::SinkFn;
use super::spec::{counter, AggSpec, JoinSpec, OutputColumn, StageJoinType, StageSink, StageSpec};
use crate::error::{KilnError, Result};
use crate::hashtable::group_table::GroupTable;
use crate::hashtable::groups::Grouper;
use crate::hashtable::join_table::{JoinTable, KEY_WORDS, TABLE_WORDS};
use crate::expr::eval::{evaluate_all, make_batch, schema_of};
use crate::expr::{AggFunc, Attribute};
use crate::physical::adaptive::batch_bytes;

/// Why compiled execution of a partition stopped: the interpreter takes over.
struct Fallback;

/// A join's build side, ready for generated code to probe: its rows in one batch and their
/// `JoinTable` (the interpreter's join probes the same layout).
pub struct BuildTable {
    /// The build rows, as run.
    rows: RecordBatch,
    /// `rows`, then for an outer join one row of NULLs: what null-extended rows read.
    batch: RecordBatch,
    /// Owns what `words` points at (a hash join's).
    table: Option<JoinTable>,
    /// A sort-merge join's right keys, merged with each stream batch's.
    merge: Option<MergeSide>,
    /// The table's words for generated code (`JoinTable::pointers`), then the NULL row's index.
    words: Vec<u64>,
    /// An all-valid bitmap for build columns without NULLs, made once.
    all_valid: Vec<u8>,
}

impl BuildTable {
    /// The build side's rows, in one batch.
    pub fn rows(&self) -> &RecordBatch {
        &self.rows
    }

    /// The hash table of the rows (None for a sort-merge join's side).
    pub fn table(&self) -> Option<&JoinTable> {
        self.table.as_ref()
    }

    /// Bytes the table holds: its rows (and their null-extended copy) and the hash table.
    pub fn memory_size(&self) -> u64 {
        let copy = if self.batch.num_rows() == self.rows.num_rows() { 0 } else { batch_bytes(&self.batch) };
        let index = self.table.as_ref().map_or(0, |t| t.memory_size()) + self.merge.as_ref().map_or(0, |m| m.memory_size());
        batch_bytes(&self.rows) + copy + index + self.words.len() as u64 * 8 + self.all_valid.len() as u64
    }

    /// Hashes the build side by its keys, leaving out rows with a NULL key (they never match);
    /// a sort-merge join's side keeps its keys in order for the merge instead.
    pub fn new(join: &JoinSpec, batches: Vec<RecordBatch>) -> Result<BuildTable> {
        let schema = schema_of(&join.build);
        let rows = crate::common::concat_on_threads(&schema, &batches)?;
        let keys = evaluate_all(&join.build_keys, &rows, &join.build)?;
        let (table, merge) = if join.merge { (None, Some(MergeSide::new(&keys)?)) } else { (Some(JoinTable::build(&keys)?), None) };
        let batch = if join.join_type == StageJoinType::Outer {
            let nulls = RecordBatch::try_new(schema.clone(), schema.fields().iter().map(|f| new_null_array(f.data_type(), 1)).collect())?;
            concat_batches(&schema, &[rows.clone(), nulls])?
        } else {
            rows.clone()
        };
        // A merge join's first two words, its ranges, are filled per stream batch.
        let mut words = match &table {
            Some(t) => t.pointers(),
            None => vec![0; TABLE_WORDS + KEY_WORDS * join.stream_keys.len()],
        };
        words.push(rows.num_rows() as u64);
        if let (StageJoinType::NullAwareAnti, Some(table)) = (join.join_type, &table) {
            words.push(if table.has_null_key() {
                super::spec::NULL_AWARE_NULL_KEY
            } else if table.rows() == 0 {
                super::spec::NULL_AWARE_EMPTY
            } else {
                0
            });
        }
        let all_valid = vec![0xFFu8; batch.num_rows() / 8 + 2];
        Ok(BuildTable { rows, batch, table, merge, words, all_valid })
    }
}

/// A sort-merge join's right partition for the merge, ordered as the Sort below left it
/// (ascending, NULLs first); a NULL never equals a stream key, whose NULL gives an empty range.
struct MergeSide {
    keys: MergeKeyValues,
    /// Each row's end of its run of equal keys (of the valid ones, for one key), made when a
    /// stream batch first needs them: a few stream rows against many right rows search.
    run_end: std::sync::OnceLock<Vec<u32>>,
}

type KeyValue = (bool, i64);

enum MergeKeyValues {
    /// One key: the right side's longs after its leading NULLs (read in place from the column,
    /// a cast to long being free for a long), and how many NULLs lead.
    One { nulls: usize, values: ScalarBuffer<i64> },
    /// Two keys as (valid, value) pairs per row (a NULL's value 0).
    Two(Vec<(KeyValue, KeyValue)>),
}

/// Integer-like key columns as longs.
fn longs(keys: &[ArrayRef]) -> Result<Vec<PrimitiveArray<Int64Type>>> {
    keys.iter().map(|k| Ok(arrow::compute::cast(k, &DataType::Int64)?.as_primitive::<Int64Type>().clone())).collect()
}

/// `partition_point` searching from the front in doubling steps: a merge's next key is
/// usually a few rows on, found in a few comparisons rather than log(rows).
fn gallop<K>(keys: &[K], before: impl Fn(&K) -> bool) -> usize {
    let mut step = 1;
    while step <= keys.len() && before(&keys[step - 1]) {
        step *= 2;
    }
    let from = step / 2;
    let to = step.min(keys.len());
    from + keys[from..to].partition_point(before)
}

/// For each stream key its range `[lower, upper)` among sorted `keys` (offset by `base`). With
/// `run_end` (each row's end of its run of equal keys), whole runs are stepped over from the
/// previous key's range on (the next key is most often a run or two on: one mispredicted branch
/// where two searches per key take several); past a few runs, without run ends, or for a key
/// below the last one, a search takes over, so the answer holds for any order.
fn ranges_of<K: Ord + Copy>(
    keys: &[K],
    base: usize,
    run_end: Option<&[u32]>,
    stream: impl Iterator<Item = Option<K>>,
    from: &mut Vec<u32>,
    to: &mut Vec<u32>,
) {
    const RUNS: usize = 4;
    let n = keys.len();
    let mut last: Option<(K, usize, usize)> = None;
    for k in stream {
        let (lo, hi) = match (k, last) {
            (None, _) => (0, 0),
            (Some(k), Some((p, lo, hi))) if k == p => (lo, hi),
            (Some(k), prev) => {
                let mut lo = prev.filter(|(p, ..)| *p < k).map_or(0, |(_, _, hi)| hi);
                if let Some(ends) = run_end {
                    let mut runs = 0;
                    while lo < n && keys[lo] < k && runs < RUNS {
                        lo = ends[lo] as usize;
                        runs += 1;
                    }
                }
                if lo < n && keys[lo] < k {
                    lo += gallop(&keys[lo..], |x| *x < k);
                }
                let hi = match run_end {
                    Some(ends) if lo < n && keys[lo] == k => ends[lo] as usize,
                    Some(_) => lo,
                    None => lo + gallop(&keys[lo..], |x| *x <= k),
                };
                last = Some((k, lo, hi));
                (lo, hi)
            }
        };
        from.push((base + lo) as u32);
        to.push((base + hi) as u32);
    }
}

/// Each row's end of its run of equal keys (the first row after it).
fn run_ends<K: PartialEq>(keys: &[K]) -> Vec<u32> {
    let mut ends = vec![0u32; keys.len()];
    let mut end = keys.len();
    for i in (0..keys.len()).rev() {
        if keys.get(i + 1).is_some_and(|next| *next != keys[i]) {
            end = i + 1;
        }
        ends[i] = end as u32;
    }
    ends
}

impl MergeSide {
    fn new(keys: &[ArrayRef]) -> Result<MergeSide> {
        let unsorted = || KilnError::internal("sort-merge join: the right input is not sorted by its keys");
        let keys = match longs(keys)?.as_slice() {
            [a] => {
                let nulls = a.null_count();
                if (0..nulls).any(|i| a.is_valid(i)) || !a.values()[nulls..].is_sorted() {
                    return Err(unsorted());
                }
                MergeKeyValues::One { nulls, values: a.values().slice(nulls, a.len() - nulls) }
            }
            [a, b] => {
                let pair = |x: &PrimitiveArray<Int64Type>, i: usize| (x.is_valid(i), if x.is_valid(i) { x.value(i) } else { 0 });
                let k: Vec<(KeyValue, KeyValue)> = (0..a.len()).map(|i| (pair(a, i), pair(b, i))).collect();
                if !k.is_sorted() {
                    return Err(unsorted());
                }
                MergeKeyValues::Two(k)
            }
            _ => return Err(KilnError::internal("a compiled sort-merge join with other than one or two keys")),
        };
        Ok(MergeSide { keys, run_end: std::sync::OnceLock::new() })
    }

    fn rows(&self) -> usize {
        match &self.keys {
            MergeKeyValues::One { nulls, values } => nulls + values.len(),
            MergeKeyValues::Two(k) => k.len(),
        }
    }

    fn memory_size(&self) -> u64 {
        let keys = match &self.keys {
            MergeKeyValues::One { .. } => 0,
            MergeKeyValues::Two(k) => k.len() * 2 * std::mem::size_of::<KeyValue>(),
        };
        (keys + self.run_end.get().map_or(0, |e| e.len() * 4)) as u64
    }

    /// Each stream row's range of right rows with equal keys (empty for a NULL key).
    fn ranges(&self, stream_keys: &[ArrayRef]) -> Result<(Vec<u32>, Vec<u32>)> {
        let longs = longs(stream_keys)?;
        let rows = longs.first().map_or(0, |v| v.len());
        let (mut from, mut to) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
        // Run ends pay when the stream has rows for a good share of the right side's keys.
        let dense = rows * 16 >= self.rows();
        let valid = |a: &PrimitiveArray<Int64Type>, i: usize| a.nulls().is_none_or(|n| n.is_valid(i));
        match (&self.keys, longs.as_slice()) {
            (MergeKeyValues::One { nulls, values }, [a]) => {
                let ends = dense.then(|| self.run_end.get_or_init(|| run_ends(values)).as_slice());
                if a.null_count() == 0 {
                    ranges_of(values, *nulls, ends, a.values().iter().map(|v| Some(*v)), &mut from, &mut to)
                } else {
                    ranges_of(values, *nulls, ends, (0..rows).map(|i| valid(a, i).then(|| a.value(i))), &mut from, &mut to)
                }
            }
            (MergeKeyValues::Two(k), [a, b]) => {
                let ends = dense.then(|| self.run_end.get_or_init(|| run_ends(k)).as_slice());
                ranges_of(k, 0, ends, (0..rows).map(|i| (valid(a, i) && valid(b, i)).then(|| ((true, a.value(i)), (true, b.value(i))))), &mut from, &mut to)
            }
            _ => return Err(KilnError::internal("a sort-merge join's sides have different key counts")),
        }
        Ok((from, to))
    }
}

/// An aggregate stage's selection keeping under one row in this many is gathered before the
/// sink runs (TPC-H Q6 and Q15, a few percent of lineitem: 10-20 % faster compiled).
const SPARSE_SELECTION: usize = 8;

/// Build sides from this size on miss the caches on most rows a probe finds.
const WARM_BUILD_BYTES: usize = 1 << 20;

/// True when a join every row reaches drops every row: an inner or semi join whose side holds no
/// rows (a sort-merge join's partition of it, or an empty broadcast), so the stage's batches
/// need not run (TPC-H Q18's semi join with 57 order keys over 200 partitions).
fn drops_every_row(spec: &StageSpec, builds: &[&BuildTable]) -> bool {
    spec.joins_reached_by_all().any(|(k, j)| {
        j.join_type.drops_unmatched() && builds.get(k).is_some_and(|t| t.rows.num_rows() == 0)
    })
}

/// Before a batch's probe: each hash join over the stage's input that every selected row
/// reaches (`StageSpec::joins_reached_by_all`) and whose slots are larger than the caches
/// fetches the selected rows' home slots (`JoinTable::prefetch_slots`), so the generated
/// probe, which takes a row at a time, does not wait for each row's miss in turn (TPC-H Q5's
/// orders table, 8 MiB of slots: its probe 1.3x faster, one thread).
fn prefetch_join_slots(spec: &StageSpec, batch: &RecordBatch, builds: &[&BuildTable], selected: Option<&[u32]>) -> Result<()> {
    for (k, j) in spec.joins_reached_by_all() {
        let Some(table) = builds.get(k).and_then(|t| t.table()).filter(|t| !j.merge && t.slot_bytes() >= WARM_BUILD_BYTES) else { continue };
        if spec.keys_read_input(j) {
            table.prefetch_slots(&evaluate_all(&j.stream_keys, batch, &spec.input)?, selected)?;
        }
    }
    Ok(())
}

/// Reads, for the joined rows' build rows, the first byte of each of their string values in
/// large build sides: in this loop the rows are independent, so their cache misses overlap;
/// the sink, which reads a row at a time, then finds those values in the caches.
fn warm_build_rows(builds: &[&BuildTable], joined: &[Vec<u32>]) {
    let mut touched = 0u8;
    for (b, rows) in builds.iter().zip(joined) {
        if b.rows.get_array_memory_size() < WARM_BUILD_BYTES {
            continue;
        }
        for column in b.rows.columns() {
            let Some(s) = column.as_string_opt::<i32>() else { continue };
            let (offsets, bytes) = (s.value_offsets(), s.value_data());
            for r in rows {
                if let Some(&at) = offsets.get(*r as usize) {
                    touched ^= bytes.get(at as usize).copied().unwrap_or(0);
                }
            }
        }
    }
    std::hint::black_box(touched);
}

/// Rows per batch below which consecutive batches are merged before an aggregate stage runs:
/// each batch costs a round of per-batch work (hashing the keys, filling slots).
const COALESCE_ROWS: usize = 8192;

/// The rows a sink runs over: selected stream rows, and for joined rows each join's build row.
struct Rows {
    stream: Option<Vec<u32>>,
    builds: Vec<Vec<u32>>,
    count: usize,
}

/// The arrays of `attrs` for the sink's rows: stream columns taken at the stream rows, build
/// columns at their join's build rows.
fn gather(spec: &StageSpec, batch: &RecordBatch, builds: &[&BuildTable], rows: &Rows, attrs: &[Attribute]) -> Result<Vec<ArrayRef>> {
    let columns = spec.columns();
    // Every row in order (a filter that passed all): the columns as they are, not a copy.
    let identity = |v: &Vec<u32>| v.len() == batch.num_rows() && v.iter().enumerate().all(|(i, r)| *r as usize == i);
    let stream_ix = rows.stream.as_ref().filter(|v| !identity(v)).map(|v| UInt32Array::from(v.clone()));
    let build_ix: Vec<UInt32Array> = rows.builds.iter().map(|v| UInt32Array::from(v.clone())).collect();
    attrs
        .iter()
        .map(|a| {
            let i = columns.iter().position(|c| c.id == a.id).ok_or_else(|| KilnError::internal("gathered column not in the stage"))?;
            let (col, ix) = match side_of(spec, i) {
                None => (batch.column(i).clone(), stream_ix.as_ref()),
                Some(k) => {
                    let t = builds.get(k).ok_or_else(|| KilnError::internal("build column without a build side"))?;
                    (t.batch.column(i - spec.joins()[k].offset).clone(), build_ix.get(k))
                }
            };
            Ok(match ix {
                Some(ix) => take(col.as_ref(), ix, None)?,
                None => col,
            })
        })
        .collect()
}

/// The join whose build side column `i` of the stage is (None: a stream column).
fn side_of(spec: &StageSpec, i: usize) -> Option<usize> {
    spec.joins().iter().rposition(|j| j.offset <= i)
}

/// The slot array for one batch, with the column pointers filled in (stream columns from
/// `batch`, build columns from the build side), and whether none of those columns has a NULL
/// (the variant without validity reads then runs). The returned buffer backs the validity of
/// columns without nulls and must outlive the calls.
///
/// This is the boundary where generated code gets its buffers: each column must have the type
/// the stage was compiled for (the code reads values of that width) and the row count the code
/// loops over, else the batch is an error before any generated code runs.
fn input_slots(spec: &StageSpec, compiled: &CompiledStage, batch: &RecordBatch, builds: &[&BuildTable], counts: &mut [u64]) -> Result<(Vec<u64>, SlotBuffers, bool)> {
    let mut slots = vec![0u64; compiled.layout.len];
    if counts.len() != spec.counters() {
        return Err(KilnError::internal("a compiled stage's row counts of another size"));
    }
    slots[compiled.layout.counters] = counts.as_mut_ptr() as u64;
    // Validity for columns without a bitmap: all-valid bits for the batch's rows, then
    // all-NULL bits for any side's rows (a NULL-typed column has no bitmap, yet only NULLs).
    let ones = batch.num_rows() / 8 + 2;
    let mut all_valid = vec![0xFFu8; ones];
    // The all-NULL bits only when a NULL-typed column reads them: sized for the largest side,
    // they would cost a build table's rows per batch.
    if spec.columns().iter().any(|a| a.data_type == DataType::Null) {
        let most_rows = builds.iter().map(|t| t.batch.num_rows()).fold(batch.num_rows(), usize::max);
        all_valid.resize(ones + most_rows / 8 + 2, 0);
    }
    let mut no_nulls = true;
    if builds.len() != spec.joins().len() {
        return Err(KilnError::internal("a compiled stage without one build table per join"));
    }
    if compiled.layout.tables.len() != builds.len() || compiled.layout.columns.len() != spec.columns().len() {
        return Err(KilnError::internal("a compiled stage whose slot layout does not match its plan"));
    }
    let mut ranges = vec![];
    for ((t, first), j) in builds.iter().zip(&compiled.layout.tables).zip(spec.joins()) {
        let dest = slots.get_mut(*first..*first + t.words.len()).ok_or_else(|| KilnError::internal("a join table's words past the slot array"))?;
        dest.copy_from_slice(&t.words);
        if let Some(m) = &t.merge {
            let (from, to) = m.ranges(&evaluate_all(&j.stream_keys, batch, &spec.input)?)?;
            dest[0] = from.as_ptr() as u64;
            dest[1] = to.as_ptr() as u64;
            ranges.push((from, to));
        }
    }
    for (i, cols) in compiled.layout.columns.iter().enumerate() {
        let Some([values, validity, voff, boff]) = *cols else { continue };
        let side = side_of(spec, i);
        let (array, rows) = match side {
            None => (batch.columns().get(i), batch.num_rows()),
            Some(k) => (builds[k].batch.columns().get(i - spec.joins()[k].offset), builds[k].batch.num_rows()),
        };
        let array = array.ok_or_else(|| KilnError::internal("stage input lacks a column"))?;
        let expected = &spec.columns()[i];
        if array.data_type() != &expected.data_type {
            return Err(KilnError::internal(format!(
                "stage input column {} ({}) is {}, the compiled stage reads {}",
                i,
                expected.name,
                array.data_type(),
                expected.data_type
            )));
        }
        if array.len() != rows {
            return Err(KilnError::internal(format!("stage input column {} ({}) has {} rows, the batch {rows}", i, expected.name, array.len())));
        }
        if !expected.nullable && array.null_count() > 0 {
            return Err(KilnError::internal(format!("stage input column {} ({}) has NULLs, the plan says it has none", i, expected.name)));
        }
        let (ptr, bit_offset) = match array.data_type() {
            DataType::Boolean => {
                let b = array.as_boolean().values();
                (b.values().as_ptr() as u64, b.offset() as u64)
            }
            DataType::Int8 => (array.as_primitive::<arrow::datatypes::Int8Type>().values().as_ptr() as u64, 0),
            DataType::Int16 => (array.as_primitive::<arrow::datatypes::Int16Type>().values().as_ptr() as u64, 0),
            DataType::Float32 => (array.as_primitive::<arrow::datatypes::Float32Type>().values().as_ptr() as u64, 0),
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
            // Generated code tests only the validity of other columns (`unsupported_reason`).
            t if !super::spec::supported_type(t) => (0, 0),
            t => return Err(KilnError::internal(format!("stage input column {i} of type {t} has no slot reader"))),
        };
        slots[values] = ptr;
        slots[boff] = bit_offset;
        no_nulls &= array.null_count() == 0;
        if array.data_type() == &DataType::Null {
            no_nulls = false;
            slots[validity] = all_valid[ones..].as_ptr() as u64;
            slots[voff] = 0;
            continue;
        }
        match array.nulls() {
            Some(n) => {
                slots[validity] = n.buffer().as_ptr() as u64;
                slots[voff] = n.offset() as u64;
            }
            None => {
                let ones = match side {
                    Some(k) => &builds[k].all_valid,
                    None => &all_valid,
                };
                slots[validity] = ones.as_ptr() as u64;
                slots[voff] = 0;
            }
        }
    }
    Ok((slots, SlotBuffers { _all_valid: all_valid, _ranges: ranges }, no_nulls))
}

/// What a batch's slots point into besides the batch and the build sides: kept alive while the
/// generated code runs.
struct SlotBuffers {
    _all_valid: Vec<u8>,
    _ranges: Vec<(Vec<u32>, Vec<u32>)>,
}

/// Calls `f` (a sink or probe, the variant for the batch's NULLs) over `rows`: its status
/// (rows written, -1 failed, -2 output full).
fn call(f: (SinkFn, SinkFn), slots: &mut [u64], layout: &super::layout::SlotLayout, rows: &Rows, no_nulls: bool) -> i64 {
    for (k, b) in layout.build_sel.iter().zip(&rows.builds) {
        slots[*k] = b.as_ptr() as u64;
    }
    let sel_ptr = rows.stream.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    let f = if no_nulls { f.1 } else { f.0 };
    // SAFETY: every slot points at a live buffer sized for the batch's rows and `rows.count`
    // selected or joined rows; accumulators and outputs are sized by the caller (a fused join's
    // output by its capacity slot).
    unsafe { f(slots.as_ptr(), sel_ptr, rows.count as i64) }
}

/// Calls the sink over `rows`: the number of rows an output sink wrote, None when it failed.
fn call_sink(compiled: &CompiledStage, slots: &mut [u64], rows: &Rows, no_nulls: bool) -> Option<usize> {
    usize::try_from(call((compiled.sink, compiled.sink_no_nulls), slots, &compiled.layout, rows, no_nulls)).ok()
}

/// Runs a function that emits joined rows (a fused output sink, or the probe of an indexed
/// sink) over the selected stream rows, in chunks of at most the output capacity: `chunk`
/// gets the slots and, per chunk, the rows written and their indices (stream row, then each
/// join's build row). False when the generated code failed.
fn run_emitting(
    f: (SinkFn, SinkFn),
    layout: &super::layout::SlotLayout,
    slots: &mut [u64],
    rows: &Rows,
    no_nulls: bool,
    chunk: &mut dyn FnMut(&mut [u64], Option<usize>, &[Vec<u32>]) -> Result<()>,
) -> Result<bool> {
    let mut emitter = Emitter::new(rows);
    while !emitter.done {
        match emitter.step(f, layout, slots, rows, no_nulls, &mut |slots| chunk(slots, None, &[]))? {
            Some((written, out)) => chunk(slots, Some(written), &out)?,
            None => return Ok(false),
        }
    }
    Ok(true)
}

/// Where a function that emits joined rows resumes: the stream row it stopped at, its output
/// capacity and the state it left (the build row it was at, the rows written).
struct Emitter {
    start: usize,
    cap: usize,
    state: [u64; 2],
    done: bool,
}

impl Emitter {
    fn new(rows: &Rows) -> Emitter {
        Emitter { start: 0, cap: rows.count.max(1024), state: [0; 2], done: false }
    }

    /// One chunk: the rows written and their indices (stream row, then each join's build row),
    /// or None when the generated code failed. `before` sizes the chunk's output buffers.
    fn step(
        &mut self,
        f: (SinkFn, SinkFn),
        layout: &super::layout::SlotLayout,
        slots: &mut [u64],
        rows: &Rows,
        no_nulls: bool,
        before: &mut dyn FnMut(&mut [u64]) -> Result<()>,
    ) -> Result<Option<(usize, Vec<Vec<u32>>)>> {
        let Some([start_slot, cap_slot, state_slot]) = layout.resume else { return Err(KilnError::internal("a fused join without a resume state")) };
        loop {
            let mut out: Vec<Vec<u32>> = layout.rows_out.iter().map(|_| vec![0u32; self.cap]).collect();
            for (k, o) in layout.rows_out.iter().zip(&mut out) {
                slots[*k] = o.as_mut_ptr() as u64;
            }
            slots[start_slot] = self.start as u64;
            slots[cap_slot] = self.cap as u64;
            slots[state_slot] = self.state.as_mut_ptr() as u64;
            before(slots)?;
            let status = call(f, slots, layout, rows, no_nulls);
            let (written, resume) = match status {
                -1 => return Ok(None),
                -2 => (self.state[1] as usize, Some(self.state[0] as usize)),
                n if n >= 0 => (n as usize, None),
                _ => return Err(KilnError::internal("a generated function's unknown status")),
            };
            out.iter_mut().for_each(|o| o.truncate(written));
            match resume {
                // One stream row alone fills the output: more room, same row.
                Some(r) if r == self.start && written == 0 => self.cap *= 2,
                Some(r) => {
                    self.start = r;
                    return Ok(Some((written, out)));
                }
                None => {
                    self.done = true;
                    return Ok(Some((written, out)));
                }
            }
        }
    }
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
    match output_pieces(spec, compiled, batch, builds)? {
        StageOutput::Fallback => Ok(None),
        StageOutput::Batch(b, _) => Ok(Some(b)),
        StageOutput::Pieces(mut pieces) => {
            let mut chunks = vec![];
            loop {
                match pieces.next_piece(builds)? {
                    Piece::Rows(b, _) => chunks.push(b),
                    Piece::Failed => return Ok(None),
                    Piece::End => break,
                }
            }
            let schema = pieces.schema.clone();
            Ok(Some(match chunks.len() {
                1 => chunks.remove(0),
                _ => concat_batches(&schema, &chunks)?,
            }))
        }
    }
}

/// An output stage's rows for one batch of its input.
pub enum StageOutput<'s> {
    /// The generated code gave up on the batch: the interpreter runs it.
    Fallback,
    /// The rows, in one batch (a stage without joins), and the stage's row counts
    /// (`spec::counter`).
    Batch(RecordBatch, Vec<u64>),
    /// Joined rows, a piece at a time (one batch's joins may match many times its rows).
    Pieces(Box<OutputPieces<'s>>),
}

/// One piece of an output stage's joined rows.
pub enum Piece {
    /// Rows, and the stage's row counts since the piece before (`spec::counter`).
    Rows(RecordBatch, Vec<u64>),
    /// The generated code failed after the pieces before this one.
    Failed,
    End,
}

/// Runs an output stage over one batch of its input, its joined rows left to pull a piece (the
/// size of the output buffers) at a time, with the same `builds`.
pub fn output_pieces<'s>(spec: &'s StageSpec, compiled: &'s CompiledStage, batch: &RecordBatch, builds: &[&BuildTable]) -> Result<StageOutput<'s>> {
    let StageSink::Output { columns, output } = &spec.sink else {
        return Err(KilnError::internal("output_batch on an aggregate stage"));
    };
    let mut counts = vec![0u64; spec.counters()];
    counts[counter::INPUT] = batch.num_rows() as u64;
    if batch.num_rows() == 0 || drops_every_row(spec, builds) {
        return Ok(StageOutput::Batch(RecordBatch::new_empty(schema_of(output)), counts));
    }
    let (mut slots, buffers, no_nulls) = input_slots(spec, compiled, batch, builds, &mut counts)?;
    let Ok(sel) = select(compiled, &slots, batch.num_rows(), no_nulls) else { return Ok(StageOutput::Fallback) };
    if sel.is_none() {
        counts[counter::FILTERED] = batch.num_rows() as u64;
    }
    let count = sel.as_ref().map_or(batch.num_rows(), |s| s.len());
    let rows = Rows { stream: sel, builds: vec![], count };
    let all = spec.columns();
    // Copied columns are gathered together (one index array per side).
    let copied: Vec<Attribute> = columns
        .iter()
        .filter_map(|c| match c {
            OutputColumn::Copied(i) => all.get(*i).cloned(),
            OutputColumn::Computed(_) => None,
        })
        .collect();
    let mut out = OutputPieces { spec, compiled, batch: batch.clone(), slots: vec![], _buffers: buffers, rows, no_nulls, emitter: None, copied, schema: schema_of(output), counts };
    if spec.joins().is_empty() && columns.iter().all(|c| matches!(c, OutputColumn::Copied(_))) {
        // Nothing to compute: the selected rows' columns, without running the sink's loop.
        let b = out.assemble(builds, columns.iter().map(|_| None).collect(), &out.rows)?;
        return Ok(StageOutput::Batch(b, out.counts));
    }
    if spec.joins().is_empty() {
        let buffers = out.alloc(&mut slots, count)?;
        let Some(written) = call_sink(compiled, &mut slots, &out.rows, no_nulls) else { return Ok(StageOutput::Fallback) };
        if written != count {
            return Err(KilnError::internal("a sink without joins wrote another row count"));
        }
        let b = out.assemble(builds, buffers, &out.rows)?;
        return Ok(StageOutput::Batch(b, out.counts));
    }
    // Joins probed by the sink: joined rows come in chunks the size of the output buffers.
    prefetch_join_slots(spec, batch, builds, out.rows.stream.as_deref())?;
    out.emitter = Some(Emitter::new(&out.rows));
    out.slots = slots;
    Ok(StageOutput::Pieces(Box::new(out)))
}

/// An output stage's joined rows for one batch of its input, a piece at a time: the batch, its
/// slots and where the generated code stopped.
pub struct OutputPieces<'s> {
    spec: &'s StageSpec,
    compiled: &'s CompiledStage,
    batch: RecordBatch,
    slots: Vec<u64>,
    /// What the slots point into besides the batch and the build sides.
    _buffers: SlotBuffers,
    rows: Rows,
    no_nulls: bool,
    emitter: Option<Emitter>,
    copied: Vec<Attribute>,
    schema: SchemaRef,
    /// The stage's row counts (the generated code's slot points here) since the last piece.
    counts: Vec<u64>,
}

type OutputBuffers = Vec<Option<(MutableBuffer, Vec<u8>)>>;

impl OutputPieces<'_> {
    /// The next piece of joined rows (`builds`: those the pieces began with).
    pub fn next_piece(&mut self, builds: &[&BuildTable]) -> Result<Piece> {
        let Some(emitter) = self.emitter.as_mut().filter(|e| !e.done) else { return Ok(Piece::End) };
        let (compiled, spec) = (self.compiled, self.spec);
        let StageSink::Output { columns, .. } = &spec.sink else { return Err(KilnError::internal("output pieces of an aggregate stage")) };
        let mut buffers: OutputBuffers = vec![];
        let layout = &compiled.layout;
        let step = emitter.step((compiled.sink, compiled.sink_no_nulls), layout, &mut self.slots, &self.rows, self.no_nulls, &mut |slots| {
            let cap = slots[layout.resume.map_or(0, |r| r[1])] as usize;
            buffers = alloc_outputs(columns, compiled, slots, cap)?;
            Ok(())
        })?;
        let Some((n, out)) = step else { return Ok(Piece::Failed) };
        let emitted = Rows { stream: out.first().cloned(), builds: out[1..].to_vec(), count: n };
        self.counts[spec.sink_counter()] += n as u64;
        let counts = self.counts.clone();
        // Zeroed in place: the slots point at this buffer.
        self.counts.fill(0);
        Ok(Piece::Rows(self.assemble(builds, buffers, &emitted)?, counts))
    }

    fn alloc(&self, slots: &mut [u64], cap: usize) -> Result<OutputBuffers> {
        let StageSink::Output { columns, .. } = &self.spec.sink else { return Err(KilnError::internal("output buffers of an aggregate stage")) };
        alloc_outputs(columns, self.compiled, slots, cap)
    }

    /// The output batch of `rows`: computed columns from the buffers the generated code
    /// wrote, copied ones gathered.
    fn assemble(&self, builds: &[&BuildTable], buffers: OutputBuffers, rows: &Rows) -> Result<RecordBatch> {
        let StageSink::Output { columns, output } = &self.spec.sink else { return Err(KilnError::internal("output rows of an aggregate stage")) };
        let count = rows.count;
        let mut gathered = gather(self.spec, &self.batch, builds, rows, &self.copied)?.into_iter();
        let mut arrays = vec![];
        for ((c, buf), attr) in columns.iter().zip(buffers).zip(output) {
            let array: ArrayRef = match (c, buf) {
                (OutputColumn::Computed(_), Some((values, valid))) => to_array(&attr.data_type, values, valid.get(..count).ok_or_else(|| KilnError::internal("generated output past its buffer"))?, count)?,
                (OutputColumn::Copied(_), _) => gathered.next().ok_or_else(|| KilnError::internal("copied column out of range"))?,
                _ => return Err(KilnError::internal("output column without a buffer")),
            };
            arrays.push(array);
        }
        make_batch(self.schema.clone(), arrays, count)
    }
}

/// Output buffers for `cap` rows, their addresses in the slots: arrow's (64-byte aligned), so
/// the values become the array's without a copy; generated code writes every row it counts,
/// so they need no zeroing.
fn alloc_outputs(columns: &[OutputColumn], compiled: &CompiledStage, slots: &mut [u64], cap: usize) -> Result<OutputBuffers> {
    let mut buffers = vec![];
    for (c, out) in columns.iter().zip(&compiled.layout.outputs) {
        match (c, out) {
            (OutputColumn::Computed(e), Some([v, ok])) => {
                let t = e.data_type()?;
                let mut values = MutableBuffer::with_capacity(cap.max(1) * out_width(&t));
                let mut valid = vec![0u8; cap.max(1)];
                slots[*v] = values.as_mut_ptr() as u64;
                slots[*ok] = valid.as_mut_ptr() as u64;
                buffers.push(Some((values, valid)));
            }
            _ => buffers.push(None),
        }
    }
    Ok(buffers)
}

fn bytes(words: &[u128]) -> &[u8] {
    // SAFETY: u128 has no padding; any byte pattern is a valid u8.
    unsafe { std::slice::from_raw_parts(words.as_ptr() as *const u8, std::mem::size_of_val(words)) }
}

/// Arrow's validity of one byte per row written by generated code (None: no NULL).
fn nulls(valid: &[u8]) -> Option<NullBuffer> {
    valid.contains(&0).then(|| NullBuffer::new(BooleanBuffer::collect_bool(valid.len(), |i| valid[i] != 0)))
}

/// An Arrow array from a buffer generated code wrote (`count` values of `out_width` bytes),
/// taking the buffer as the array's values.
fn to_array(t: &DataType, mut values: MutableBuffer, valid: &[u8], count: usize) -> Result<ArrayRef> {
    let nulls = nulls(valid);
    let len = count * out_width(t);
    if len > values.capacity() {
        return Err(KilnError::internal("generated output past its buffer"));
    }
    // SAFETY: generated code wrote each of the `count` rows' bytes, within the capacity.
    unsafe { values.set_len(len) };
    let buffer: arrow::buffer::Buffer = values.into();
    Ok(match t {
        DataType::Boolean => {
            let b = buffer.as_slice();
            Arc::new(BooleanArray::new(BooleanBuffer::collect_bool(count, |i| b[i] != 0), nulls))
        }
        DataType::Int32 => Arc::new(Int32Array::new(ScalarBuffer::new(buffer, 0, count), nulls)),
        DataType::Date32 => Arc::new(Date32Array::new(ScalarBuffer::new(buffer, 0, count), nulls)),
        DataType::Int64 => Arc::new(Int64Array::new(ScalarBuffer::new(buffer, 0, count), nulls)),
        DataType::Float64 => Arc::new(Float64Array::new(ScalarBuffer::new(buffer, 0, count), nulls)),
        DataType::Decimal128(p, s) => Arc::new(Decimal128Array::new(ScalarBuffer::new(buffer, 0, count), nulls).with_precision_and_scale(*p, *s)?),
        other => return Err(KilnError::internal(format!("generated output of type {other}"))),
    })
}

/// Where an aggregate stage's groups are held: the memory budget, and where they go when it
/// refuses them.
pub trait GroupBudget {
    /// Holds `bytes` for the groups (and fails a query that was stopped); false when refused
    /// and the groups can be written out ([`GroupBudget::spill`]) to make room.
    fn hold(&mut self, bytes: u64) -> Result<bool>;
    /// Holds `bytes` once the groups were written out, waiting a while for other operators to
    /// free memory; refused, an error.
    fn hold_freed(&mut self, bytes: u64) -> Result<()>;
    /// Writes groups out: their keys and buffers, as a partial aggregate outputs them.
    fn spill(&mut self, groups: Vec<RecordBatch>) -> Result<()>;
}

/// An aggregate stage's groups over one partition: the keys (in the shared table generated code
/// probes, or a grouper), their accumulators, and what a partial aggregate emitted.
struct StageGroups<'a> {
    aggregates: &'a [AggSpec],
    output: &'a [Attribute],
    key_types: Vec<DataType>,
    stride: usize,
    table: Option<Box<GroupTable>>,
    grouper: Option<Grouper>,
    /// Groups without keys: always one.
    groups: usize,
    acc: Vec<u128>,
    emitted: Vec<RecordBatch>,
    emitted_bytes: u64,
}

impl<'a> StageGroups<'a> {
    fn new(aggregates: &'a [AggSpec], output: &'a [Attribute], key_types: Vec<DataType>, keys_in_code: bool) -> Result<StageGroups<'a>> {
        let stride = ACC_BYTES * aggregates.len();
        // Generated code groups the rows in the shared table, whose payload holds the accumulators.
        let table = if keys_in_code { Some(GroupTable::new(&key_types, stride)?) } else { None };
        let grouper = if key_types.is_empty() || table.is_some() { None } else { Some(Grouper::new(&key_types)?) };
        let acc = vec![0; stride.div_ceil(16).max(1)];
        Ok(StageGroups { aggregates, output, key_types, stride, table, grouper, groups: 1, acc, emitted: vec![], emitted_bytes: 0 })
    }

    fn held_groups(&self) -> usize {
        self.table.as_ref().map(|t| t.num_groups()).or(self.grouper.as_ref().map(Grouper::num_groups)).unwrap_or(0)
    }

    /// Bytes held once `rows` rows (`group_rows` of them reaching the groups) added as many
    /// groups at most.
    fn bytes_after(&self, rows: usize, group_rows: usize) -> u64 {
        let keys = self.table.as_ref().map(|t| t.memory_size_after(group_rows)).or(self.grouper.as_ref().map(|g| g.memory_size_after(rows))).unwrap_or(0);
        let acc = match &self.grouper {
            Some(g) => ((g.num_groups() + rows) * self.stride).div_ceil(16).max(self.acc.capacity()) as u64 * 16,
            None => self.acc.capacity() as u64 * 16,
        };
        keys + acc + self.emitted_bytes
    }

    /// Bytes held now.
    fn bytes(&self) -> u64 {
        let keys = self.table.as_ref().map(|t| t.memory_size()).or(self.grouper.as_ref().map(Grouper::memory_size)).unwrap_or(0);
        keys + self.acc.capacity() as u64 * 16 + self.emitted_bytes
    }

    /// The groups as one batch of `output`; None when a decimal sum exceeds its precision.
    fn batch(&self) -> Result<Option<RecordBatch>> {
        groups_batch(self.table.as_deref(), self.grouper.as_ref(), &self.acc, self.groups, self.aggregates, self.output)
    }

    /// A partial aggregate's groups emitted; it starts again with none, its table kept.
    fn flush(&mut self) -> Result<bool> {
        let Some(b) = self.batch()? else { return Ok(false) };
        self.emitted_bytes += batch_bytes(&b);
        self.emitted.push(b);
        if let Some(t) = &mut self.table {
            t.clear();
        }
        if let Some(g) = &mut self.grouper {
            g.clear()?;
        }
        self.acc.fill(0);
        Ok(true)
    }

    /// The groups (and what was emitted) written to `budget`'s spill; it starts again with
    /// none, their memory given back.
    fn spill(&mut self, budget: &mut dyn GroupBudget) -> Result<bool> {
        let Some(b) = self.batch()? else { return Ok(false) };
        let mut out = std::mem::take(&mut self.emitted);
        out.push(b);
        budget.spill(out)?;
        self.emitted_bytes = 0;
        if self.table.is_some() {
            self.table = Some(GroupTable::new(&self.key_types, self.stride)?);
        }
        if let Some(g) = &mut self.grouper {
            g.release()?;
        }
        self.acc = vec![0; self.stride.div_ceil(16).max(1)];
        Ok(true)
    }

    /// Holds `bytes()` of the groups, spilling them first when refused; false when they could
    /// not be read out.
    fn hold(&mut self, budget: &mut dyn GroupBudget, bytes: impl Fn(&Self) -> u64) -> Result<bool> {
        if budget.hold(bytes(self))? {
            return Ok(true);
        }
        if !self.spill(budget)? {
            return Ok(false);
        }
        budget.hold_freed(bytes(self))?;
        Ok(true)
    }
}

/// Runs an aggregate stage over one partition of its input, batch by batch: the partial
/// aggregate's output, or None when the generated code gave up (the interpreter then runs the
/// partition again). Before and after each batch the groups' bytes are held in `budget`,
/// which may stop the run with its error, or have the groups written out and the run go on
/// with none. `input_rows`: the rows to come, where known. A final aggregate's (`finish`)
/// output is its merged buffers, one row per group, for the caller to finish into results.
#[allow(clippy::too_many_arguments)]
pub fn aggregate_partition(
    spec: &StageSpec,
    compiled: &CompiledStage,
    batches: impl Iterator<Item = Result<RecordBatch>>,
    builds: &[&BuildTable],
    flush_groups: usize,
    input_rows: Option<usize>,
    budget: &mut dyn GroupBudget,
    counts: &mut [u64],
) -> Result<Option<Vec<RecordBatch>>> {
    let StageSink::Aggregate { keys, keys_in_code, aggregates, output, finish } = &spec.sink else {
        return Err(KilnError::internal("aggregate_partition on an output stage"));
    };
    let merged = crate::common::coalesce_small(batches, COALESCE_ROWS);
    let key_types = keys.iter().map(|k| k.data_type()).collect::<Result<Vec<_>>>()?;
    let mut g = StageGroups::new(aggregates, output, key_types, *keys_in_code)?;
    if let (Some(_), Some(rows)) = (finish, input_rows) {
        let groups = crate::hashtable::groups::final_groups_expected(rows);
        g.table.iter_mut().for_each(|t| t.reserve_groups(groups));
        g.grouper.iter_mut().for_each(|g| g.reserve_groups(groups));
    }
    let mut gids: Vec<u32> = vec![];
    let mut rows_in = 0usize;
    // Columns the grouping keys read, gathered per batch when keys see joined rows.
    let key_columns = attributes_of(keys);
    let dropped = drops_every_row(spec, builds);
    for batch in merged {
        let mut batch = batch?;
        counts[counter::INPUT] += batch.num_rows() as u64;
        if dropped {
            continue;
        }
        let (mut slots, mut _all_valid, no_nulls) = input_slots(spec, compiled, &batch, builds, counts)?;
        let Ok(mut sel) = select(compiled, &slots, batch.num_rows(), no_nulls) else { return Ok(None) };
        if sel.is_none() {
            counts[counter::FILTERED] += batch.num_rows() as u64;
        }
        // Few rows selected: gathered first, column by column, the sink then reads them in a
        // row rather than missing the caches on every column of every row it reads.
        if let (Some(s), true) = (&sel, spec.joins().is_empty()) {
            if s.len() * SPARSE_SELECTION < batch.num_rows() {
                batch = arrow::compute::take_record_batch(&batch, &UInt32Array::from(s.clone()))?;
                (slots, _all_valid, _) = input_slots(spec, compiled, &batch, builds, counts)?;
                sel = Some((0..batch.num_rows() as u32).collect());
            }
        }
        let batch = &batch;
        let count = sel.as_ref().map_or(batch.num_rows(), |s| s.len());
        let rows = Rows { stream: sel, builds: vec![], count };
        prefetch_join_slots(spec, batch, builds, rows.stream.as_deref())?;
        // Sinks `rows` (selected, or joined, rows of the batch): false when the generated code failed.
        let mut sink = |slots: &mut [u64], rows: &Rows| -> Result<bool> {
            if rows.count == 0 {
                return Ok(true);
            }
            // The groups' growth first: refused, it is never allocated.
            // Under an Expand each row reaches the groups once per projection.
            let group_rows = rows.count * spec.rows_per_row();
            if !g.hold(budget, |g| g.bytes_after(rows.count, group_rows))? {
                return Ok(false);
            }
            if let Some(grouper) = &mut g.grouper {
                // Keys are hashed per batch, for the selected rows (or joined rows) only.
                if !spec.joins().is_empty() {
                    let gathered = gather(spec, batch, builds, rows, &key_columns)?;
                    let key_batch = make_batch(schema_of(&key_columns), gathered, rows.count)?;
                    grouper.push(evaluate_all(keys, &key_batch, &key_columns)?, &mut gids)?;
                } else {
                    grouper.push_selected(evaluate_all(keys, batch, &spec.input)?, rows.stream.as_deref(), &mut gids)?;
                }
                g.groups = grouper.num_groups();
                g.acc.resize((g.groups * g.stride).div_ceil(16).max(1), 0);
            }
            if let (Some(k), Some(_)) = (compiled.layout.gids, &g.grouper) {
                slots[k] = gids.as_ptr() as u64;
            }
            if let Some(k) = compiled.layout.acc {
                slots[k] = g.acc.as_mut_ptr() as u64;
            }
            if compiled.probe.is_none() && compiled.layout.resume.is_some() {
                return Err(KilnError::internal("an aggregate sink with an output capacity"));
            }
            if let (Some(k), Some(t)) = (compiled.layout.table, &mut g.table) {
                slots[k] = t.header_ptr() as u64;
            }
            if call_sink(compiled, slots, rows, no_nulls).is_none() {
                return Ok(false);
            }
            rows_in += group_rows;
            // A partial aggregate whose rows fold well emits its groups and starts again.
            if finish.is_none() && crate::hashtable::groups::partial_flush_due(g.held_groups(), rows_in, flush_groups) {
                if !g.flush()? {
                    return Ok(false);
                }
                rows_in = 0;
            }
            g.hold(budget, StageGroups::bytes)
        };
        let ok = match compiled.probe {
            // An aggregate over joins: the probe materializes the joined rows (all conditions
            // applied) a chunk at a time, each chunk sunk before the next is probed.
            Some(probe) => {
                let mut sunk = true;
                let sink_counter = spec.sink_counter();
                let mut joined_rows = 0;
                let ran = run_emitting(probe, &compiled.layout, &mut slots, &rows, no_nulls, &mut |slots, written, out| {
                    let Some(written) = written.filter(|_| sunk) else { return Ok(()) };
                    joined_rows += written as u64;
                    let mut joined = out.iter().cloned();
                    let stream = joined.next().unwrap_or_default();
                    let rows = Rows { count: stream.len(), stream: Some(stream), builds: joined.collect() };
                    warm_build_rows(builds, &rows.builds);
                    sunk = sink(slots, &rows)?;
                    Ok(())
                })?;
                counts[sink_counter] += joined_rows;
                ran && sunk
            }
            None => sink(&mut slots, &rows)?,
        };
        if !ok {
            return Ok(None);
        }
    }
    let Some(merged) = g.batch()? else { return Ok(None) };
    let mut out = std::mem::take(&mut g.emitted);
    out.push(merged);
    Ok(Some(out))
}

/// The groups an aggregate stage holds as one batch of `output` (keys, then each aggregate's
/// buffer columns); None when a decimal sum exceeds its precision (the interpreter reports it).
fn groups_batch(
    table: Option<&GroupTable>,
    grouper: Option<&Grouper>,
    acc: &[u128],
    groups: usize,
    aggregates: &[AggSpec],
    output: &[Attribute],
) -> Result<Option<RecordBatch>> {
    // Without keys there is one group even over no rows; with keys, only the groups seen.
    let (groups, mut columns, b) = match (table, grouper) {
        (Some(t), _) => (t.num_groups(), t.keys()?, t.payload()),
        (None, Some(g)) => (g.num_groups(), g.keys()?, bytes(acc)),
        (None, None) => (groups, vec![], bytes(acc)),
    };
    let stride = ACC_BYTES * aggregates.len();
    for (i, a) in aggregates.iter().enumerate() {
        match state_arrays(a, b, i * ACC_BYTES, stride, groups)? {
            Some(arrays) => columns.extend(arrays),
            None => return Ok(None),
        }
    }
    Ok(Some(make_batch(schema_of(output), columns, groups)?))
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

/// The buffer columns of one aggregate, exactly as the interpreter's partial aggregate writes
/// them; None when a decimal sum exceeds its precision (the interpreter reports it).
fn state_arrays(a: &AggSpec, b: &[u8], base: usize, stride: usize, groups: usize) -> Result<Option<Vec<ArrayRef>>> {
    // Every group's accumulator checked to lie in the buffer once, then read without a check
    // per group (a flushing partial aggregate emits millions of groups).
    let b = match groups {
        0 => &[],
        _ => b.get(base..base + (groups - 1) * stride + ACC_BYTES).ok_or_else(|| KilnError::internal("accumulators past the groups' buffer"))?,
    };
    fn values<T: ArrowNativeType, const N: usize>(b: &[u8], stride: usize, off: usize, f: impl Fn([u8; N]) -> T) -> Vec<T> {
        b.chunks(stride)
            .map(|acc| {
                let mut w = [0u8; N];
                w.copy_from_slice(&acc[off..off + N]);
                f(w)
            })
            .collect()
    }
    let seen: Vec<u8> = values(b, stride, 16, |w| u8::from(i64::from_le_bytes(w) != 0));
    let i64s = |off: usize| -> ScalarBuffer<i64> { values(b, stride, off, i64::from_le_bytes).into() };
    let f64s = || -> ScalarBuffer<f64> { values(b, stride, 0, f64::from_le_bytes).into() };
    let i128s = || -> ScalarBuffer<i128> { values(b, stride, 0, i128::from_le_bytes).into() };
    let buffer_type = |i: usize| a.buffer.get(i).map(|x| x.data_type.clone()).ok_or_else(|| KilnError::internal("missing buffer attribute"));
    let decimal = |values: ScalarBuffer<i128>, t: DataType, nulls: Option<NullBuffer>| -> Result<Option<ArrayRef>> {
        let DataType::Decimal128(p, s) = t else { return Err(KilnError::internal("decimal buffer of another type")) };
        let bound = 10i128.checked_pow(p as u32).unwrap_or(i128::MAX);
        if values.iter().any(|v| v.unsigned_abs() >= bound.unsigned_abs()) {
            return Ok(None);
        }
        Ok(Some(Arc::new(Decimal128Array::new(values, nulls).with_precision_and_scale(p, s)?)))
    };
    let counts = || -> ArrayRef { Arc::new(Int64Array::new(i64s(16), None)) };
    Ok(Some(match (a.func, &a.arg_type) {
        (AggFunc::Count, _) => vec![counts()],
        (f, DataType::Int32 | DataType::Int64) if crate::codegen::operators::hash_aggregate::integral_sum(f) => vec![Arc::new(Int64Array::new(i64s(0), nulls(&seen)))],
        (AggFunc::Sum, DataType::Float64) => vec![Arc::new(Float64Array::new(f64s(), nulls(&seen)))],
        (AggFunc::Sum, DataType::Decimal128(..)) => {
            let Some(sums) = decimal(i128s(), buffer_type(0)?, None)? else { return Ok(None) };
            let empty = BooleanArray::new(BooleanBuffer::collect_bool(seen.len(), |g| seen[g] == 0), None);
            vec![sums, Arc::new(empty)]
        }
        (AggFunc::Avg, DataType::Decimal128(..)) => {
            let Some(sums) = decimal(i128s(), buffer_type(0)?, None)? else { return Ok(None) };
            vec![sums, counts()]
        }
        (AggFunc::Avg, _) => vec![Arc::new(Float64Array::new(f64s(), None)), counts()],
        (AggFunc::Min | AggFunc::Max, t) => {
            let n = nulls(&seen);
            let array: ArrayRef = match t {
                DataType::Int32 => Arc::new(Int32Array::new(values(b, stride, 0, i32::from_le_bytes).into(), n)),
                DataType::Date32 => Arc::new(Date32Array::new(values(b, stride, 0, i32::from_le_bytes).into(), n)),
                DataType::Int64 => Arc::new(Int64Array::new(i64s(0), n)),
                DataType::Float64 => Arc::new(Float64Array::new(f64s(), n)),
                DataType::Decimal128(p, s) => {
                    let decimals = if *p <= 18 { values(b, stride, 0, |w| i64::from_le_bytes(w) as i128).into() } else { i128s() };
                    Arc::new(PrimitiveArray::<Decimal128Type>::new(decimals, n).with_precision_and_scale(*p, *s)?)
                }
                other => return Err(KilnError::internal(format!("generated min/max over {other}"))),
            };
            vec![array]
        }
        (f, t) => return Err(KilnError::internal(format!("generated {} over {t}", f.name()))),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gallop_finds_the_partition_point_at_every_distance() {
        let keys: Vec<i64> = (0..100).map(|k| k / 3).collect();
        for k in -1..40 {
            assert_eq!(gallop(&keys, |x| *x < k), keys.partition_point(|x| *x < k), "key {k}");
            assert_eq!(gallop(&keys, |x| *x <= k), keys.partition_point(|x| *x <= k), "key {k}");
        }
        assert_eq!(gallop::<i64>(&[], |_| true), 0);
    }

    #[test]
    fn merge_ranges_skip_null_keys_on_both_sides_in_any_stream_order() {
        // Right side sorted NULLs first per key, as the Sort under a sort-merge join leaves it.
        let a: ArrayRef = Arc::new(Int64Array::from(vec![None, Some(1), Some(1), Some(2), Some(2), Some(2)]));
        let b: ArrayRef = Arc::new(Int32Array::from(vec![Some(5), None, Some(7), None, Some(7), Some(7)]));
        let side = MergeSide::new(&[a, b]).expect("sorted");
        let sa: ArrayRef = Arc::new(Int64Array::from(vec![Some(2), Some(1), None, Some(2), Some(3), Some(1)]));
        let sb: ArrayRef = Arc::new(Int32Array::from(vec![Some(7), Some(7), Some(7), None, Some(7), Some(5)]));
        let (from, to) = side.ranges(&[sa, sb]).expect("ranges");
        let ranges: Vec<(u32, u32)> = from.into_iter().zip(to).collect();
        // (2,7) -> rows 4..6; (1,7) -> row 2 (searched again from the start: the stream is not
        // sorted); NULL keys and absent keys match nothing.
        assert_eq!(ranges[0], (4, 6));
        assert_eq!(ranges[1], (2, 3));
        assert!(ranges[2].0 == ranges[2].1 && ranges[3].0 == ranges[3].1 && ranges[4].0 == ranges[4].1 && ranges[5].0 == ranges[5].1);
    }

    #[test]
    fn merge_ranges_step_over_runs_and_search_far_keys_as_a_search_would() {
        // Runs of 1 to 4 equal keys with gaps, NULLs first; streams sorted, sparse, dense and
        // shuffled: every range equals the one partition_point gives.
        let mut right: Vec<Option<i64>> = vec![None, None];
        for k in 0..400i64 {
            right.extend(std::iter::repeat_n(Some(k * 3), (k % 4) as usize + if k % 5 == 0 { 3 } else { 0 }));
        }
        let a: ArrayRef = Arc::new(Int64Array::from(right.clone()));
        let side = MergeSide::new(&[a]).expect("sorted");
        let valid: Vec<i64> = right.iter().flatten().copied().collect();
        let nulls = right.len() - valid.len();
        for stream in [
            (-5..1300).collect::<Vec<i64>>(),
            (0..1300).step_by(97).collect(),
            (0..1300).rev().step_by(7).collect(),
            (0..600).map(|i| (i * 7919) % 1250).collect(),
        ] {
            let s: ArrayRef = Arc::new(Int64Array::from(stream.clone()));
            let (from, to) = side.ranges(&[s]).expect("ranges");
            for (i, k) in stream.iter().enumerate() {
                let lo = nulls + valid.partition_point(|x| x < k);
                let hi = nulls + valid.partition_point(|x| x <= k);
                let expected = if lo == hi { (from[i], from[i]) } else { (lo as u32, hi as u32) };
                assert_eq!((from[i], to[i]), expected, "key {k}");
                assert_eq!(to[i] - from[i], (hi - lo) as u32, "key {k}");
            }
        }
    }

    #[test]
    fn an_unsorted_right_side_is_an_error_not_a_wrong_answer() {
        let a: ArrayRef = Arc::new(Int64Array::from(vec![3, 1, 2]));
        assert!(MergeSide::new(&[a]).is_err());
    }
}
