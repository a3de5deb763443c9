//! `SortMergeJoin`: both sides' partition `i`, sorted by the join keys, merged; the output
//! streams in pieces of at most a batch, in key order. Sides past the memory budget are
//! written out in their order and merged a key range at a time ([`SortedSidesSpill`]).

use std::sync::Arc;

use arrow::compute::concat_batches;
use arrow::record_batch::RecordBatch;
use arrow::row::{OwnedRow, RowConverter, Rows};

use super::hash_join::side_keys;
use super::not_this;
use crate::common::control::QueryControl;
use crate::common::memory::{batch_bytes, Reservation};
use crate::common::spill::{normalized_key_rows, spill_folder, PartitionFiles, SpillFile};
use crate::error::{KilnError, Result};
use crate::exec::interpreted;
use crate::exec::state::Executor;
use crate::exec::stream::{deferred_stream, BatchStream};
use crate::expr::{Attribute, Expr};
use crate::physical::metrics::OperatorMetrics;
use crate::physical::PhysicalPlan;

/// Partition `i` of the join.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, left, right } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let (lo, ro) = (exec.attrs(left), exec.attrs(right));
    let (mut lrows, mut rrows) = (exec.stream(left, i)?, exec.stream(right, i)?);
    let held = exec.reserve(plan);
    let piece = config.batch_size;
    Ok(deferred_stream(held, move |held| {
        let sides = [(left_keys.as_slice(), lo), (right_keys.as_slice(), ro)];
        let spillable = SortedSidesSpill::can_split(&sides);
        let share = held.task_share();
        let join = move |l: Vec<RecordBatch>, r: Vec<RecordBatch>| -> Result<BatchStream<'s>> {
            Ok(Box::new(interpreted::join::sort_merge_join_stream(*join_type, left_keys, right_keys, condition.as_ref(), (lo, l), (ro, r), piece)?))
        };
        let (l, l_over) = hold_within(&mut lrows, held, share, spillable)?;
        // As Spark's merge join, which pulls the buffered side only for streamed
        // rows: an empty left partition leaves the right one unsorted and unread
        // when no right row outlives the join.
        if l_over.is_none() && !join_type.preserved_sides().1 && l.iter().all(|b| b.num_rows() == 0) {
            return join(l, vec![]);
        }
        let (r, r_over) = match l_over {
            None => hold_within(&mut rrows, held, share, spillable)?,
            Some(_) => (vec![], None),
        };
        if l_over.is_none() && r_over.is_none() {
            return join(l, r);
        }
        // Past the budget: both sides written out, then merged a key range at a time.
        let mut spill = SortedSidesSpill::new(exec, plan, sides);
        spill.write_stream(0, l.into_iter().map(Ok).chain(l_over.map(Ok)).chain(lrows))?;
        spill.write_stream(1, r.into_iter().map(Ok).chain(r_over.map(Ok)).chain(rrows))?;
        held.resize(0)?;
        let pairs = spill.finish(exec.reserve(plan), exec.control, share)?;
        Ok(Box::new(pairs.flat_map(move |pair| match pair.and_then(|[l, r]| join(l, r)) {
            Ok(out) => out,
            Err(e) => Box::new(std::iter::once(Err(e))),
        })))
    }))
}

/// A side's batches held while they fit in `share` of the budget, and the first batch that
/// did not (None: the side is all held). Without `spillable` every batch must be held.
pub(in crate::exec) fn hold_within(rows: &mut BatchStream<'_>, held: &Reservation, share: u64, spillable: bool) -> Result<(Vec<RecordBatch>, Option<RecordBatch>)> {
    let mut out = vec![];
    for b in rows.by_ref() {
        let b = b?;
        let bytes = batch_bytes(&b);
        if !spillable {
            held.grow(bytes)?;
        } else if held.bytes() + bytes > share || held.grow(bytes).is_err() {
            return Ok((out, Some(b)));
        }
        out.push(b);
    }
    Ok((out, None))
}

/// A merge join's two sides, each sorted by its keys (ascending, NULLs first), written out in
/// their order, one file a side, and read back as pairs of chunks over the same range of keys
/// (every row of both sides with a key below a bound): joined one pair after another they give
/// the join's rows in key order. The second side's keys are cast to the first's types, so both
/// encode alike.
pub(in crate::exec) struct SortedSidesSpill<'s> {
    metrics: Arc<OperatorMetrics>,
    /// One file a side: partition 0 the first side's, 1 the second's.
    files: PartitionFiles,
    sides: [(&'s [Expr], &'s [Attribute]); 2],
}

impl<'s> SortedSidesSpill<'s> {
    /// Whether sides with these keys can be cut by key: they have keys.
    pub(in crate::exec) fn can_split(sides: &[(&[Expr], &[Attribute]); 2]) -> bool {
        !sides[0].0.is_empty()
    }

    pub(in crate::exec) fn new(exec: &Executor<'_>, plan: &Arc<PhysicalPlan>, sides: [(&'s [Expr], &'s [Attribute]); 2]) -> SortedSidesSpill<'s> {
        SortedSidesSpill { metrics: exec.ops.of(plan), files: PartitionFiles::new(spill_folder(&exec.config.local_dir), exec.control.spill()), sides }
    }

    /// Writes every batch of `batches`, rows of side `side` in their order.
    pub(in crate::exec) fn write_stream(&mut self, side: usize, batches: impl Iterator<Item = Result<RecordBatch>>) -> Result<()> {
        for b in batches {
            let b = b?;
            if b.num_rows() > 0 {
                self.files.write_to(side, &b)?;
            }
        }
        Ok(())
    }

    /// The pairs of chunks, each side's chunk about a quarter of `share`, held in `held`.
    pub(in crate::exec) fn finish(self, held: Reservation, control: &'s QueryControl, share: u64) -> Result<KeyRangePairs<'s>> {
        let mut files = self.files.finish()?.into_iter();
        let files = [files.next().flatten(), files.next().flatten()];
        for f in files.iter().flatten() {
            self.metrics.add_spill(f);
        }
        let readers = [reader(&files[0])?, reader(&files[1])?];
        Ok(KeyRangePairs { sides: self.sides, _files: files, readers, bufs: [vec![], vec![]], bytes: [0, 0], done: [false, false], target: (share / 4).max(1), converter: None, held, control })
    }
}

type Batches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

fn reader(file: &Option<SpillFile>) -> Result<Option<Batches>> {
    Ok(match file {
        Some(f) => Some(Box::new(f.read()?)),
        None => None,
    })
}

/// Pairs of chunks of two sorted sides over the same key ranges (see [`SortedSidesSpill`]).
pub(in crate::exec) struct KeyRangePairs<'s> {
    sides: [(&'s [Expr], &'s [Attribute]); 2],
    /// Deleted when the join is done (or the query ends).
    _files: [Option<SpillFile>; 2],
    readers: [Option<Batches>; 2],
    bufs: [Vec<RecordBatch>; 2],
    bytes: [u64; 2],
    done: [bool; 2],
    /// Bytes of a side read ahead before a chunk is cut (doubled while one key's rows fill it).
    target: u64,
    converter: Option<RowConverter>,
    held: Reservation,
    control: &'s QueryControl,
}

impl KeyRangePairs<'_> {
    /// A side's keys in the row format, the second side's cast to the first's types, floats
    /// normalized (-0.0 and 0.0 one key, NaN above every number, as the sides were sorted).
    fn keys(&mut self, side: usize, batch: &RecordBatch) -> Result<Rows> {
        normalized_key_rows(&mut self.converter, &side_keys(&self.sides, side, batch)?)
    }

    fn next_pair(&mut self) -> Result<Option<[Vec<RecordBatch>; 2]>> {
        loop {
            self.control.check()?;
            for s in 0..2 {
                while !self.done[s] && self.bytes[s] < self.target {
                    match self.readers[s].as_mut().and_then(|r| r.next()) {
                        Some(b) => {
                            let b = b?;
                            self.bytes[s] += batch_bytes(&b);
                            self.bufs[s].push(b);
                        }
                        None => self.done[s] = true,
                    }
                }
            }
            self.held.resize_when_freed(self.bytes[0] + self.bytes[1], || self.control.check())?;
            if self.done == [true, true] {
                if self.bufs.iter().all(Vec::is_empty) {
                    return Ok(None);
                }
                let [l, r] = std::mem::take(&mut self.bufs);
                self.bytes = [0, 0];
                return Ok(Some([l, r]));
            }
            let all = [interpreted::concat(self.sides[0].1, &std::mem::take(&mut self.bufs[0]))?, interpreted::concat(self.sides[1].1, &std::mem::take(&mut self.bufs[1]))?];
            let rows = [self.keys(0, &all[0])?, self.keys(1, &all[1])?];
            // The bound: the smaller of the last keys read of the sides not read to the end
            // (every row below it, on both sides, has been read).
            let mut bound: Option<OwnedRow> = None;
            for s in 0..2 {
                if self.done[s] || all[s].num_rows() == 0 {
                    continue;
                }
                let last = rows[s].row(all[s].num_rows() - 1);
                if bound.as_ref().is_none_or(|b| last < b.row()) {
                    bound = Some(last.owned());
                }
            }
            let bound = bound.ok_or_else(|| KilnError::internal("a merge join's spilled sides without a key bound"))?;
            let cut = |s: usize| {
                let (mut lo, mut hi) = (0, all[s].num_rows());
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if rows[s].row(mid) < bound.row() {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                lo
            };
            let cuts = [cut(0), cut(1)];
            let mut pair: [Vec<RecordBatch>; 2] = [vec![], vec![]];
            for s in 0..2 {
                let (n, c) = (all[s].num_rows(), cuts[s]);
                if c > 0 {
                    pair[s].push(all[s].slice(0, c));
                }
                // The rest is copied: a slice would keep the whole chunk alive.
                self.bufs[s] = if c < n { vec![concat_batches(&all[s].schema(), &[all[s].slice(c, n - c)])?] } else { vec![] };
                self.bytes[s] = self.bufs[s].iter().map(batch_bytes).sum();
            }
            if cuts == [0, 0] {
                // One key's rows fill what is read ahead: read further.
                self.target = self.target.saturating_mul(2);
                continue;
            }
            return Ok(Some(pair));
        }
    }
}

impl Iterator for KeyRangePairs<'_> {
    type Item = Result<[Vec<RecordBatch>; 2]>;

    fn next(&mut self) -> Option<Self::Item> {
        let next = self.next_pair();
        if next.is_err() {
            self.done = [true, true];
            self.bufs = [vec![], vec![]];
        }
        next.transpose()
    }
}
