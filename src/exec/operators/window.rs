//! `Window` (Spark's `WindowExec`): computes window functions over its input, which arrives
//! clustered and sorted by the window's partition and order keys. Window partitions are
//! computed as they complete, about a batch of rows at a time, so the operator holds its
//! largest window partition rather than its whole input partition.
//!
//! A window partition that passes the memory budget is written to a spill file (Spark's
//! `spark.sql.windowExec.buffer.spill.threshold`) and computed a chunk of whole peer groups at a
//! time, each chunk's values carried on from the chunks before: row_number, rank, dense_rank,
//! and count, integral sum, min and max over running or whole-partition frames. A partition
//! with any other function still fails at the limit.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, Int32Array, UInt32Array};
use arrow::compute::kernels::cmp::{gt, lt};
use arrow::compute::kernels::numeric::add;
use arrow::compute::kernels::zip::zip;
use arrow::compute::{concat_batches, is_not_null, take};
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use arrow::row::{OwnedRow, RowConverter, Rows};

use super::not_this;
use crate::common::control::QueryControl;
use crate::common::memory::{batch_bytes, Reservation};
use crate::common::spill::{normalized_key_rows, spill_folder, SpillBudget, SpillFile, SpillWriter};
use crate::error::{KilnError, Result};
use crate::exec::interpreted;
use crate::exec::interpreted::evaluate_all;
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::expr::eval::evaluate;
use crate::expr::{AggFunc, Attribute, Expr, FrameBound, FrameType, SortOrder, WindowFrame, WindowFunc};
use crate::physical::metrics::OperatorMetrics;
use crate::physical::PhysicalPlan;

/// Partition `i` with its window columns.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::Window { window_exprs, partition_by, order_by, child } = plan.as_ref() else { return Err(not_this(plan)) };
    let (input, output) = (exec.attrs(child), exec.attrs(plan));
    let rows = exec.stream(child, i)?;
    let held = exec.reserve(plan);
    Ok(Box::new(Windows {
        exprs: window_exprs,
        partition_by,
        order_by,
        input,
        output,
        rows,
        share: held.task_share(),
        held,
        batch_size: exec.config.batch_size.max(1),
        metrics: exec.ops.of(plan),
        folder: spill_folder(&exec.config.local_dir),
        budget: exec.control.spill().clone(),
        control: exec.control,
        keys: None,
        last_key: None,
        buffered: vec![],
        buffered_rows: 0,
        complete: 0,
        spilling: None,
        large: None,
        after_large: None,
        out: VecDeque::new(),
        ended: false,
    }))
}

/// One input partition's window computation, pulled a batch at a time.
struct Windows<'s> {
    exprs: &'s [Expr],
    partition_by: &'s [Expr],
    order_by: &'s [SortOrder],
    input: &'s [Attribute],
    output: &'s [Attribute],
    rows: BatchStream<'s>,
    held: Reservation,
    /// The most it holds before a partition is spilled.
    share: u64,
    batch_size: usize,
    metrics: Arc<OperatorMetrics>,
    folder: PathBuf,
    budget: Arc<SpillBudget>,
    control: &'s QueryControl,
    /// Partition keys in the row format, and the last row's (the partition still open).
    keys: Option<RowConverter>,
    last_key: Option<OwnedRow>,
    /// Rows not yet computed; the first `complete` of them are whole partitions.
    buffered: Vec<RecordBatch>,
    buffered_rows: usize,
    complete: usize,
    /// The open partition, being written out.
    spilling: Option<SpillWriter>,
    /// A spilled partition being computed, and the rows that came after it.
    large: Option<LargePartition>,
    after_large: Option<RecordBatch>,
    out: VecDeque<RecordBatch>,
    ended: bool,
}

impl Iterator for Windows<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        let step = self.step();
        if step.is_err() {
            self.ended = true;
            self.large = None;
        }
        step.transpose()
    }
}

impl Windows<'_> {
    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            if let Some(b) = self.out.pop_front() {
                return Ok(Some(b));
            }
            if let Some(mut large) = self.large.take() {
                if let Some(b) = self.large_chunk(&mut large)? {
                    self.large = Some(large);
                    return Ok(Some(b));
                }
                if let Some(rest) = self.after_large.take() {
                    self.push(rest)?;
                }
                continue;
            }
            if self.ended {
                return Ok(None);
            }
            match self.rows.next() {
                Some(b) => self.push(b?)?,
                None => {
                    self.ended = true;
                    self.end()?;
                }
            }
        }
    }

    /// Partition keys of a batch in the row format (None without partition keys: one partition).
    fn partition_rows(&mut self, b: &RecordBatch) -> Result<Option<Rows>> {
        if self.partition_by.is_empty() {
            return Ok(None);
        }
        Ok(Some(normalized_key_rows(&mut self.keys, &evaluate_all(self.partition_by, b, self.input)?)?))
    }

    fn push(&mut self, b: RecordBatch) -> Result<()> {
        let n = b.num_rows();
        if n == 0 {
            return Ok(());
        }
        let keys = self.partition_rows(&b)?;
        if self.spilling.is_some() {
            return self.push_spilled(b, keys);
        }
        // Where the last partition in the batch starts, and whether the first row continues
        // the partition open before it.
        let (last_start, continues) = match &keys {
            None => (0, true),
            Some(k) => (last_run_start(k, n), self.last_key.as_ref().is_none_or(|last| k.row(0) == last.row())),
        };
        if !continues {
            self.complete = self.buffered_rows;
        }
        if last_start > 0 {
            self.complete = self.buffered_rows + last_start;
        }
        self.last_key = keys.as_ref().map(|k| k.row(n - 1).owned());
        let bytes = batch_bytes(&b);
        self.buffered.push(b);
        self.buffered_rows += n;
        let held = self.held.bytes() + bytes <= self.share && self.held.grow(bytes).is_ok();
        if !held || self.complete >= self.batch_size {
            self.emit_complete()?;
            if !self.hold_remainder()? {
                self.start_spill()?;
            }
        }
        Ok(())
    }

    /// The whole partitions buffered, computed into `out`; the open one kept.
    fn emit_complete(&mut self) -> Result<()> {
        if self.complete == 0 {
            return Ok(());
        }
        let all = interpreted::concat(self.input, &std::mem::take(&mut self.buffered))?;
        let rest = self.buffered_rows - self.complete;
        if rest > 0 {
            // A copy: a slice would keep the whole buffer alive.
            self.buffered = vec![concat_batches(&all.schema(), &[all.slice(self.complete, rest)])?];
        }
        self.out.extend(self.compute(all.slice(0, self.complete))?);
        self.buffered_rows = rest;
        self.complete = 0;
        Ok(())
    }

    /// Reserves what is still buffered (the open partition) after whole partitions were
    /// computed; false when the budget refuses it.
    fn hold_remainder(&mut self) -> Result<bool> {
        self.held.shrink(self.held.bytes());
        let bytes: u64 = self.buffered.iter().map(batch_bytes).sum();
        if bytes <= self.share && self.held.grow(bytes).is_ok() {
            return Ok(true);
        }
        if self.carries().is_some() {
            return Ok(false);
        }
        // Other partitions' breakers may give memory back; past that, the partition fails.
        self.held.grow_when_freed(bytes, || self.control.check())?;
        Ok(true)
    }

    /// The open partition, past the budget, written out (its functions allow it: `carries`).
    fn start_spill(&mut self) -> Result<()> {
        let schema = self.buffered[0].schema();
        let mut writer = SpillWriter::new(&self.folder, &schema, &self.budget)?;
        for b in std::mem::take(&mut self.buffered) {
            writer.write(&b)?;
        }
        self.buffered_rows = 0;
        self.held.shrink(self.held.bytes());
        self.spilling = Some(writer);
        Ok(())
    }

    /// A batch while the open partition is being written out: its rows of that partition
    /// go to the file; a new partition's rows wait until the spilled one is computed.
    fn push_spilled(&mut self, b: RecordBatch, keys: Option<Rows>) -> Result<()> {
        let n = b.num_rows();
        let same = match (&keys, &self.last_key) {
            (Some(k), Some(last)) => (0..n).find(|&i| k.row(i) != last.row()).unwrap_or(n),
            _ => n,
        };
        let writer = self.spilling.as_mut().ok_or_else(|| KilnError::internal("a window partition's spill file"))?;
        if same > 0 {
            writer.write(&b.slice(0, same))?;
        }
        if same < n {
            self.finish_spill()?;
            self.last_key = None;
            self.after_large = Some(b.slice(same, n - same));
        }
        Ok(())
    }

    fn finish_spill(&mut self) -> Result<()> {
        if let Some(writer) = self.spilling.take() {
            let file = writer.finish()?;
            self.metrics.add_spill(&file);
            self.large = Some(self.large_partition(file)?);
        }
        Ok(())
    }

    /// The input ended: the open partition computed (or its spill file).
    fn end(&mut self) -> Result<()> {
        if self.spilling.is_some() {
            return self.finish_spill();
        }
        self.complete = self.buffered_rows;
        self.emit_complete()
    }

    /// Window functions over whole partitions.
    fn compute(&self, rows: RecordBatch) -> Result<Vec<RecordBatch>> {
        interpreted::window(self.exprs, self.partition_by, self.order_by, self.input, self.output, vec![rows])
    }

    /// How each window expression's value over a chunk of a partition becomes its value over
    /// the whole partition; None when one of them cannot be computed in chunks.
    fn carries(&self) -> Option<Vec<Carry>> {
        self.exprs.iter().enumerate().map(|(k, e)| carry(e, self.output.get(self.input.len() + k)?.data_type.clone(), !self.order_by.is_empty())).collect()
    }

    fn large_partition(&mut self, file: SpillFile) -> Result<LargePartition> {
        let carries = self.carries().ok_or_else(|| KilnError::internal("a window partition spilled with functions that cannot be computed in chunks"))?;
        let mut whole: Vec<Option<ArrayRef>> = vec![None; carries.len()];
        if carries.iter().any(|c| matches!(c, Carry::Whole(_))) {
            // First pass: the whole-partition aggregates, a batch at a time.
            for b in file.read()? {
                let b = b?;
                self.control.check()?;
                for out in self.compute(b)? {
                    for (k, c) in carries.iter().enumerate() {
                        if let (Carry::Whole(op), Some(col)) = (c, out.columns().get(self.input.len() + k)) {
                            let value = col.slice(0, 1);
                            whole[k] = Some(match &whole[k] {
                                None => value,
                                Some(total) => op.combine(&value, total)?,
                            });
                        }
                    }
                }
            }
        }
        let reader = Box::new(file.read()?);
        Ok(LargePartition { _file: file, reader, pending: vec![], pending_rows: 0, read_ahead: self.batch_size, carries, prefix: vec![None; self.exprs.len()], whole, rows_before: 0, peers: None, read_all: false })
    }

    /// The spilled partition's next chunk of whole peer groups, its values carried on.
    fn large_chunk(&mut self, large: &mut LargePartition) -> Result<Option<RecordBatch>> {
        loop {
            self.control.check()?;
            if !large.read_all && large.pending_rows < large.read_ahead {
                match large.reader.next() {
                    Some(b) => {
                        let b = b?;
                        large.pending_rows += b.num_rows();
                        large.pending.push(b);
                        continue;
                    }
                    None => large.read_all = true,
                }
            }
            if large.pending_rows == 0 {
                return Ok(None);
            }
            let all = interpreted::concat(self.input, &std::mem::take(&mut large.pending))?;
            let cut = if large.read_all { all.num_rows() } else { self.peer_cut(large, &all)? };
            if cut == 0 {
                // One peer group so far: held, and twice as much read ahead.
                self.held.shrink(self.held.bytes());
                self.held.grow_when_freed(batch_bytes(&all), || self.control.check())?;
                large.pending = vec![all];
                large.read_ahead = large.read_ahead.saturating_mul(2);
                continue;
            }
            large.read_ahead = self.batch_size;
            let rest = all.num_rows() - cut;
            if rest > 0 {
                large.pending = vec![concat_batches(&all.schema(), &[all.slice(cut, rest)])?];
            }
            large.pending_rows = rest;
            let chunk = all.slice(0, cut);
            self.held.shrink(self.held.bytes());
            self.held.grow_when_freed(2 * batch_bytes(&chunk), || self.control.check())?;
            let Some(out) = self.compute(chunk)?.pop() else { continue };
            let out = large.carry_on(out, self.input.len())?;
            self.held.shrink(self.held.bytes());
            return Ok(Some(out));
        }
    }

    /// Where the last peer group of `all` starts (0 when all its rows are peers); without an
    /// order every row is its own place to cut.
    fn peer_cut(&self, large: &mut LargePartition, all: &RecordBatch) -> Result<usize> {
        if self.order_by.is_empty() {
            return Ok(all.num_rows());
        }
        let keys: Vec<ArrayRef> = self.order_by.iter().map(|o| evaluate(&o.expr, all, self.input)).collect::<Result<_>>()?;
        Ok(last_run_start(&normalized_key_rows(&mut large.peers, &keys)?, all.num_rows()))
    }
}

/// Where the last run of equal rows among the first `n` (> 0) of `rows` starts.
fn last_run_start(rows: &Rows, n: usize) -> usize {
    let mut j = n - 1;
    while j > 0 && rows.row(j - 1) == rows.row(n - 1) {
        j -= 1;
    }
    j
}

/// A partition past the budget, read back from its spill file a chunk at a time.
struct LargePartition {
    /// Deleted when the partition is done (or the query ends).
    _file: SpillFile,
    reader: Box<dyn Iterator<Item = Result<RecordBatch>> + Send>,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    /// Rows read before a chunk is cut (doubled while one peer group fills them).
    read_ahead: usize,
    carries: Vec<Carry>,
    /// Each running expression's value on the last row before the chunk.
    prefix: Vec<Option<ArrayRef>>,
    /// Each whole-partition aggregate's value.
    whole: Vec<Option<ArrayRef>>,
    rows_before: usize,
    peers: Option<RowConverter>,
    read_all: bool,
}

impl LargePartition {
    /// A chunk's window columns (from `first`) made the partition's.
    fn carry_on(&mut self, out: RecordBatch, first: usize) -> Result<RecordBatch> {
        let n = out.num_rows();
        let mut columns = out.columns().to_vec();
        for (k, c) in self.carries.iter().enumerate() {
            let Some(col) = columns.get_mut(first + k) else { continue };
            *col = match c {
                Carry::RowsBefore => add(col, &Int32Array::new_scalar(self.rows_before as i32))?,
                Carry::Running(op) => match &self.prefix[k] {
                    Some(prefix) => op.combine(col, &repeat(prefix, n)?)?,
                    None => col.clone(),
                },
                Carry::Whole(_) => match &self.whole[k] {
                    Some(total) => repeat(total, n)?,
                    None => col.clone(),
                },
            };
            if n > 0 {
                self.prefix[k] = Some(col.slice(n - 1, 1));
            }
        }
        self.rows_before += n;
        Ok(RecordBatch::try_new(out.schema(), columns)?)
    }
}

/// A one-row array repeated `n` times.
fn repeat(value: &ArrayRef, n: usize) -> Result<ArrayRef> {
    Ok(take(value.as_ref(), &UInt32Array::from(vec![0u32; n]), None)?)
}

/// How a window expression computed over a chunk of whole peer groups of a partition becomes
/// its value over the partition.
#[derive(Clone, Copy, Debug)]
enum Carry {
    /// row_number, rank: plus the rows before the chunk.
    RowsBefore,
    /// A running value (dense_rank, and aggregates from the partition's start to the row)
    /// combined with the one on the last row before the chunk.
    Running(Combine),
    /// An aggregate over the whole partition: the same on every row, from a first pass.
    Whole(Combine),
}

#[derive(Clone, Copy, Debug)]
enum Combine {
    Sum,
    Min,
    Max,
}

impl Combine {
    /// `local` (a chunk's values) combined row by row with `before` (a value of the rows
    /// before it, repeated); NULL is no value.
    fn combine(self, local: &ArrayRef, before: &ArrayRef) -> Result<ArrayRef> {
        let local_valid = is_not_null(local.as_ref())?;
        let before_valid = is_not_null(before.as_ref())?;
        // The chunk's own value where the rows before have none, or where it wins.
        let local_wins = |wins: BooleanArray| -> BooleanArray {
            local_valid.iter().zip(before_valid.iter()).zip(wins.iter()).map(|((l, b), w)| Some(l == Some(true) && (b != Some(true) || w == Some(true)))).collect()
        };
        Ok(match self {
            Combine::Sum => {
                let both = add(local, before)?;
                zip(&local_valid, &zip(&before_valid, &both, local)?, before)?
            }
            Combine::Min => zip(&local_wins(lt(local, before)?), local, before)?,
            Combine::Max => zip(&local_wins(gt(local, before)?), local, before)?,
        })
    }
}

/// The carry of a window expression whose result has type `out`, or None when it cannot be
/// computed in chunks exactly (floating-point sums would add in another order; a float's
/// min or max must order NaN and -0.0 as Spark does).
fn carry(e: &Expr, out: DataType, ordered: bool) -> Option<Carry> {
    let Expr::WindowExpression { function, spec, .. } = e.unalias() else { return None };
    let frame = spec.frame.clone().unwrap_or(WindowFrame::running_rows());
    let running = matches!(frame.lower, FrameBound::UnboundedPreceding) && matches!(frame.upper, FrameBound::CurrentRow);
    let whole = matches!(frame.lower, FrameBound::UnboundedPreceding) && matches!(frame.upper, FrameBound::UnboundedFollowing);
    match function.as_ref() {
        Expr::WindowFunction { func: WindowFunc::RowNumber | WindowFunc::Rank, .. } if ordered => Some(Carry::RowsBefore),
        Expr::WindowFunction { func: WindowFunc::DenseRank, .. } if ordered => Some(Carry::Running(Combine::Sum)),
        Expr::Aggregate { func, distinct: false, .. } => {
            let combine = match func {
                AggFunc::Count => Combine::Sum,
                AggFunc::Sum if out == DataType::Int64 => Combine::Sum,
                AggFunc::Min | AggFunc::Max if comparable(&out) => if matches!(func, AggFunc::Min) { Combine::Min } else { Combine::Max },
                _ => return None,
            };
            // Without an order a RANGE frame's current row is the whole partition.
            if running && (ordered || frame.frame_type == FrameType::Rows) {
                Some(Carry::Running(combine))
            } else if whole {
                Some(Carry::Whole(combine))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Types whose min and max arrow's comparisons order as Spark does.
fn comparable(t: &DataType) -> bool {
    use DataType::*;
    matches!(t, Boolean | Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Decimal128(..) | Decimal256(..) | Date32 | Date64 | Timestamp(..) | Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary)
}
