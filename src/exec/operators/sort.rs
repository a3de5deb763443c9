//! `Sort`: a per-partition breaker; its input drained (reserved batch by batch) when the
//! partition is first pulled, then sorted. When the memory budget refuses a batch, the rows
//! held so far are sorted and written to a spill file (a sorted run) and the reservation
//! starts again; at the end the runs are merged (an external merge sort, as Spark's
//! `UnsafeExternalSorter`), the output streamed a batch at a time.

use std::cmp::Ordering;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::compute::interleave_record_batch;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, Rows, SortField};

use super::not_this;
use crate::common::memory::Reservation;
use crate::error::Result;
use crate::exec::interpreted;
use crate::exec::interpreted::sort::sort_options;
use crate::common::control::QueryControl;
use crate::common::spill::{spill_folder, SpillBudget, SpillFile, SpillWriter};
use crate::exec::state::Executor;
use crate::exec::stream::{deferred_stream, BatchStream};
use crate::expr::eval::evaluate;
use crate::expr::{Attribute, SortOrder};
use crate::physical::adaptive::batch_bytes;
use crate::physical::metrics::OperatorMetrics;
use crate::physical::PhysicalPlan;

/// Most runs merged at once; more are merged in passes (each run open holds a batch).
const MERGE_FAN_IN: usize = 32;

/// Partition `i`, sorted.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Sort { order, child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    Ok(external_sort(exec, plan, order, exec.attrs(child), exec.stream(child, i)?))
}

/// `rows` (of `input`'s columns) sorted by `order` for `plan` (a Sort, or the compiled stage
/// it tops), spilling sorted runs when the memory budget refuses more.
pub(in crate::exec) fn external_sort<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, order: &'s [SortOrder], input: &'s [Attribute], rows: BatchStream<'s>) -> BatchStream<'s> {
    let (metrics, folder, batch_size) = (exec.ops.of(plan), spill_folder(&exec.config.local_dir), exec.config.batch_size.max(1));
    let (budget, control) = (exec.control.spill().clone(), exec.control);
    deferred_stream(exec.reserve(plan), move |held| {
        let mut sorter = ExternalSorter { order, input, held, share: held.task_share(), metrics, folder, budget, control, batch_size, buffered: vec![], runs: vec![] };
        for b in rows {
            sorter.push(b?)?;
        }
        sorter.finish()
    })
}

/// One partition's rows on their way to being sorted: those held in memory, and the sorted
/// runs spilled so far.
struct ExternalSorter<'s, 'r> {
    order: &'s [SortOrder],
    input: &'s [Attribute],
    held: &'r Reservation,
    /// The most it holds before it spills a run.
    share: u64,
    metrics: Arc<OperatorMetrics>,
    folder: PathBuf,
    budget: Arc<SpillBudget>,
    control: &'s QueryControl,
    batch_size: usize,
    buffered: Vec<RecordBatch>,
    runs: Vec<SpillFile>,
}

impl<'s> ExternalSorter<'s, '_> {
    /// Holds a batch, spilling what is held first when the budget refuses it.
    fn push(&mut self, batch: RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        // What sorting the batch's rows into a run takes besides the rows: their key rows and
        // their place in the order, so a run is sorted within what was reserved.
        let bytes = batch_bytes(&batch) + batch.num_rows() as u64 * sort_bytes_per_row(self.order, self.input, &batch)?;
        // Past its share a run is spilled even with room left in the limit.
        let within_share = self.order.is_empty() || self.buffered.is_empty() || self.held.bytes() + bytes <= self.share;
        let held = within_share
            && match self.held.grow(bytes) {
                Ok(()) => true,
                Err(refused) if self.order.is_empty() => return Err(refused),
                Err(_) => false,
            };
        if !held {
            if !self.buffered.is_empty() {
                self.spill()?;
            }
            // Other partitions' sorts may hold the rest; they spill when next refused.
            self.held.grow_when_freed(bytes, || self.control.check())?;
        }
        self.buffered.push(batch);
        Ok(())
    }

    /// The rows held, sorted into a run on disk; their memory given back.
    fn spill(&mut self) -> Result<()> {
        let batches = std::mem::take(&mut self.buffered);
        let schema = batches[0].schema();
        let mut writer = SpillWriter::new(&self.folder, &schema, &self.budget)?;
        sorted_chunks(self.order, self.input, &batches, self.batch_size, &mut |b| writer.write(&b))?;
        drop(batches);
        self.held.shrink(self.held.bytes());
        self.runs.push(self.spilled(writer)?);
        Ok(())
    }

    /// A run finished, counted on the operator.
    fn spilled(&self, writer: SpillWriter) -> Result<SpillFile> {
        let file = writer.finish()?;
        self.metrics.add_spill(&file);
        Ok(file)
    }

    /// The sorted rows: sorted in memory when nothing spilled, else the runs merged.
    fn finish(mut self) -> Result<BatchStream<'s>> {
        if self.runs.is_empty() {
            let sorted = interpreted::sort(self.order, self.input, std::mem::take(&mut self.buffered), None)?;
            return Ok(Box::new(sorted.into_iter().map(Ok)));
        }
        if !self.buffered.is_empty() {
            self.spill()?;
        }
        let schema = self.runs[0].read()?.next().transpose()?.map(|b| b.schema());
        let Some(schema) = schema else { return Ok(Box::new(std::iter::empty())) };
        let converter = Arc::new(key_converter(self.order, self.input, &schema)?);
        // Passes over the runs until few enough remain to merge at once.
        while self.runs.len() > MERGE_FAN_IN {
            let rest = self.runs.split_off(MERGE_FAN_IN);
            let first = std::mem::replace(&mut self.runs, rest);
            let merge = Merge::new(self.order, self.input, converter.clone(), first, self.batch_size)?;
            let mut writer = SpillWriter::new(&self.folder, &schema, &self.budget)?;
            for b in merge {
                writer.write(&b?)?;
            }
            self.runs.push(self.spilled(writer)?);
        }
        Ok(Box::new(Merge::new(self.order, self.input, converter, self.runs, self.batch_size)?))
    }
}

/// The sort keys' row encoding (arrow's row format: compared as bytes, in `order`).
fn key_converter(order: &[SortOrder], input: &[Attribute], schema: &SchemaRef) -> Result<RowConverter> {
    let empty = RecordBatch::new_empty(schema.clone());
    let fields = order
        .iter()
        .map(|o| Ok(SortField::new_with_options(evaluate(&o.expr, &empty, input)?.data_type().clone(), sort_options(o))))
        .collect::<Result<Vec<_>>>()?;
    Ok(RowConverter::new(fields)?)
}

/// The sort keys of `batch`, row-encoded.
fn key_rows(converter: &RowConverter, order: &[SortOrder], input: &[Attribute], batch: &RecordBatch) -> Result<Rows> {
    let keys = order.iter().map(|o| evaluate(&o.expr, batch, input)).collect::<Result<Vec<ArrayRef>>>()?;
    Ok(converter.convert_columns(&keys)?)
}

/// `batches`' rows in `order`, handed to `emit` `batch_size` rows at a time, gathered from the
/// batches by index (no copy of the whole input at once).
fn sorted_chunks(order: &[SortOrder], input: &[Attribute], batches: &[RecordBatch], batch_size: usize, emit: &mut dyn FnMut(RecordBatch) -> Result<()>) -> Result<()> {
    let converter = key_converter(order, input, &batches[0].schema())?;
    let rows = batches.iter().map(|b| key_rows(&converter, order, input, b)).collect::<Result<Vec<_>>>()?;
    let mut index: Vec<(u32, u32)> = batches.iter().enumerate().flat_map(|(i, b)| (0..b.num_rows() as u32).map(move |r| (i as u32, r))).collect();
    index.sort_unstable_by(|a, b| rows[a.0 as usize].row(a.1 as usize).cmp(&rows[b.0 as usize].row(b.1 as usize)));
    drop(rows);
    let refs: Vec<&RecordBatch> = batches.iter().collect();
    for chunk in index.chunks(batch_size) {
        let chunk: Vec<(usize, usize)> = chunk.iter().map(|&(b, r)| (b as usize, r as usize)).collect();
        emit(interleave_record_batch(&refs, &chunk)?)?;
    }
    Ok(())
}

/// Bytes per row sorting a run takes besides the rows: its place in the order (8) and its
/// key row (each key's width and a null byte; 24 for a variable-width key, a guess).
fn sort_bytes_per_row(order: &[SortOrder], input: &[Attribute], batch: &RecordBatch) -> Result<u64> {
    let empty = batch.slice(0, 0);
    let mut bytes = 8 + 8;
    for o in order {
        let t = evaluate(&o.expr, &empty, input)?.data_type().clone();
        bytes += t.primitive_width().map_or(24, |w| w as u64 + 1);
    }
    Ok(bytes)
}

/// Sorted runs read back and merged into one sorted stream, `batch_size` rows a batch. A
/// binary heap of the runs orders them by their next row's key.
struct Merge<'s> {
    order: &'s [SortOrder],
    input: &'s [Attribute],
    converter: Arc<RowConverter>,
    cursors: Vec<Cursor>,
    /// Runs with rows left, a min-heap by their next row.
    heap: Vec<usize>,
    batch_size: usize,
    /// The runs' files, deleted when the merge is dropped.
    _runs: Vec<SpillFile>,
}

/// A run being read: its current batch, that batch's key rows, and the next row's position.
struct Cursor {
    source: Box<dyn Iterator<Item = Result<RecordBatch>>>,
    batch: RecordBatch,
    keys: Rows,
    pos: usize,
}

impl<'s> Merge<'s> {
    fn new(order: &'s [SortOrder], input: &'s [Attribute], converter: Arc<RowConverter>, runs: Vec<SpillFile>, batch_size: usize) -> Result<Merge<'s>> {
        let mut merge = Merge { order, input, converter, cursors: vec![], heap: vec![], batch_size, _runs: vec![] };
        for run in &runs {
            let mut source: Box<dyn Iterator<Item = Result<RecordBatch>>> = Box::new(run.read()?);
            if let Some((batch, keys)) = merge.load(&mut source)? {
                merge.heap.push(merge.cursors.len());
                merge.cursors.push(Cursor { source, batch, keys, pos: 0 });
            }
        }
        merge._runs = runs;
        for i in (0..merge.heap.len() / 2).rev() {
            merge.sift_down(i);
        }
        Ok(merge)
    }

    /// The next non-empty batch of a run, with its key rows.
    fn load(&self, source: &mut Box<dyn Iterator<Item = Result<RecordBatch>>>) -> Result<Option<(RecordBatch, Rows)>> {
        for b in source.by_ref() {
            let b = b?;
            if b.num_rows() > 0 {
                let keys = key_rows(&self.converter, self.order, self.input, &b)?;
                return Ok(Some((b, keys)));
            }
        }
        Ok(None)
    }

    fn less(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.cursors[a], &self.cursors[b]);
        x.keys.row(x.pos).cmp(&y.keys.row(y.pos)).then(a.cmp(&b)) == Ordering::Less
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut least = i;
            if l < self.heap.len() && self.less(self.heap[l], self.heap[least]) {
                least = l;
            }
            if r < self.heap.len() && self.less(self.heap[r], self.heap[least]) {
                least = r;
            }
            if least == i {
                return;
            }
            self.heap.swap(i, least);
            i = least;
        }
    }

    /// Up to `batch_size` rows, the least first; None when every run is read.
    fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        let mut picks: Vec<(usize, usize)> = Vec::with_capacity(self.batch_size);
        // The batches the picks read, and which of them is each run's current one.
        let mut batches: Vec<RecordBatch> = vec![];
        let mut slot: Vec<Option<usize>> = vec![None; self.cursors.len()];
        while picks.len() < self.batch_size {
            let Some(&run) = self.heap.first() else { break };
            let at = match slot[run] {
                Some(at) => at,
                None => {
                    batches.push(self.cursors[run].batch.clone());
                    slot[run] = Some(batches.len() - 1);
                    batches.len() - 1
                }
            };
            let cursor = &mut self.cursors[run];
            picks.push((at, cursor.pos));
            cursor.pos += 1;
            if cursor.pos == cursor.batch.num_rows() {
                let mut source = std::mem::replace(&mut self.cursors[run].source, Box::new(std::iter::empty()));
                let next = self.load(&mut source)?;
                let cursor = &mut self.cursors[run];
                cursor.source = source;
                match next {
                    Some((batch, keys)) => {
                        (cursor.batch, cursor.keys, cursor.pos) = (batch, keys, 0);
                        slot[run] = None;
                    }
                    None => {
                        let last = self.heap.len() - 1;
                        self.heap.swap(0, last);
                        self.heap.pop();
                    }
                }
            }
            if !self.heap.is_empty() {
                self.sift_down(0);
            }
        }
        if picks.is_empty() {
            return Ok(None);
        }
        let refs: Vec<&RecordBatch> = batches.iter().collect();
        Ok(Some(interleave_record_batch(&refs, &picks)?))
    }
}

impl Iterator for Merge<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        self.next_batch().transpose()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Array, AsArray, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Int64Type};

    use super::*;
    use crate::common::memory::{MemoryConsumer, MemoryPool};

    #[derive(Debug)]
    struct Sorter;
    impl MemoryConsumer for Sorter {
        fn consumer_name(&self) -> String {
            "Sort".into()
        }
    }

    /// `n` rows in batches of 1,000: a key out of order (with NULLs and ties) and a string.
    fn input(n: i64) -> (Vec<Attribute>, Vec<RecordBatch>) {
        let attrs = vec![Attribute::new("k", DataType::Int64, true), Attribute::new("id", DataType::Int64, false), Attribute::new("s", DataType::Utf8, false)];
        let schema = Arc::new(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new("k", DataType::Int64, true),
            arrow::datatypes::Field::new("id", DataType::Int64, false),
            arrow::datatypes::Field::new("s", DataType::Utf8, false),
        ]));
        let batches = (0..n)
            .step_by(1000)
            .map(|start| {
                let ids: Vec<i64> = (start..(start + 1000).min(n)).collect();
                let k = Int64Array::from(ids.iter().map(|i| (i % 97 != 0).then_some((i * 7919) % 1009)).collect::<Vec<_>>());
                let s = StringArray::from(ids.iter().map(|i| format!("row {i}")).collect::<Vec<_>>());
                RecordBatch::try_new(schema.clone(), vec![Arc::new(k), Arc::new(Int64Array::from(ids)), Arc::new(s)]).unwrap()
            })
            .collect();
        (attrs, batches)
    }

    /// Sorts by k DESC NULLS LAST, id under a pool of `limit` bytes spilling to `folder`.
    fn sort_under(limit: u64, folder: &std::path::Path, attrs: &[Attribute], batches: &[RecordBatch]) -> Result<(Vec<RecordBatch>, u64)> {
        let order = vec![
            SortOrder { expr: attrs[0].expr(), ascending: false, nulls_first: false },
            SortOrder { expr: attrs[1].expr(), ascending: true, nulls_first: true },
        ];
        let pool = Arc::new(MemoryPool::new(limit));
        let held = Reservation::new(&pool, &Arc::new(Sorter));
        let metrics = Arc::new(OperatorMetrics::default());
        let control = QueryControl::default();
        let mut sorter = ExternalSorter { order: &order, input: attrs, held: &held, share: limit, metrics: metrics.clone(), folder: folder.to_path_buf(), budget: Arc::default(), control: &control, batch_size: 700, buffered: vec![], runs: vec![] };
        for b in batches {
            sorter.push(b.clone())?;
        }
        let out = sorter.finish()?.collect::<Result<Vec<_>>>()?;
        Ok((out, metrics.get().spill_files))
    }

    fn keys(batches: &[RecordBatch]) -> Vec<(Option<i64>, i64)> {
        batches
            .iter()
            .flat_map(|b| {
                let (k, id) = (b.column(0).as_primitive::<Int64Type>(), b.column(1).as_primitive::<Int64Type>());
                (0..b.num_rows()).map(move |i| (k.is_valid(i).then(|| k.value(i)), id.value(i)))
            })
            .collect()
    }

    #[test]
    fn a_sort_past_its_budget_spills_runs_and_merges_them_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (attrs, batches) = input(50_000);
        let (in_memory, spilled) = sort_under(u64::MAX, dir.path(), &attrs, &batches).unwrap();
        assert_eq!(spilled, 0);
        let expected = keys(&in_memory);
        assert_eq!(expected.len(), 50_000);
        // Descending keys, NULLs last, ties by id.
        let mut check = expected.clone();
        check.sort_by(|a, b| match (a.0, b.0) {
            (None, None) => a.1.cmp(&b.1),
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(x), Some(y)) => y.cmp(&x).then(a.1.cmp(&b.1)),
        });
        assert_eq!(check, expected);
        // 80 KiB of budget (a batch and its sorting): dozens of runs, merged in more than one pass.
        let (out, files) = sort_under(80 << 10, dir.path(), &attrs, &batches).unwrap();
        assert!(files > MERGE_FAN_IN as u64, "{files} spill files");
        assert_eq!(keys(&out), expected);
        assert!(out.iter().all(|b| b.num_rows() <= 700), "batches of the batch size");
        let strings: Vec<&str> = out.iter().flat_map(|b| b.column(2).as_string::<i32>().iter().map(|s| s.unwrap_or(""))).collect();
        assert_eq!(strings[0], format!("row {}", expected[0].1));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "spill files deleted");
    }

    #[test]
    fn a_batch_larger_than_the_whole_budget_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let (attrs, batches) = input(5_000);
        let err = sort_under(1 << 10, dir.path(), &attrs, &batches).unwrap_err();
        assert!(err.to_string().contains("UNABLE_TO_ACQUIRE_MEMORY"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_spill_folder_that_cannot_be_written_is_an_error_naming_it() {
        let (attrs, batches) = input(5_000);
        let missing = std::path::Path::new("/nonexistent/kiln-spill-folder");
        let err = sort_under(80 << 10, missing, &attrs, &batches).unwrap_err().to_string();
        assert!(err.contains("KILN_SPILL_FAILED") && err.contains("/nonexistent/kiln-spill-folder") && err.contains("spark.local.dir"), "{err}");
    }
}
