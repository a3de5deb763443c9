//! Joins over one partition: a hash join or a merge join on equi-keys, and a nested-loop join
//! for the rest. Each produces candidate (left row, right row) pairs a piece at a time, filters
//! them by the extra condition and assembles the piece's output for the join type
//! (null-extending unmatched rows), so one input's output is never held whole (`JoinStream`).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, UInt32Array};
use arrow::buffer::NullBuffer;
use arrow::compute::{cast, take};
use arrow::datatypes::{Field, Schema};
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, Rows, SortField};
use rayon::prelude::*;

use crate::hashtable::join_table::{JoinTable, END};
use super::{concat, evaluate_all, make_batch, schema_of};
use crate::error::{KilnError, Result};
use crate::expr::eval::evaluate;
use crate::expr::{Attribute, Expr};
use crate::physical::BuildSide;
use crate::plan::JoinType;

/// Pairs whose condition is evaluated in one go: bounds the joined batch's size.
const CHUNK: usize = 64 * 1024;

/// One join input, all its batches concatenated.
struct Side<'a> {
    attrs: &'a [Attribute],
    batch: RecordBatch,
}

impl<'a> Side<'a> {
    fn new((attrs, batches): (&'a [Attribute], Vec<RecordBatch>)) -> Result<Side<'a>> {
        Ok(Side { attrs, batch: concat(attrs, &batches)? })
    }
    fn rows(&self) -> usize {
        self.batch.num_rows()
    }
}

/// The rows where every key is non-NULL (None: all rows).
pub(crate) fn keys_valid(keys: &[ArrayRef]) -> Option<NullBuffer> {
    keys.iter().fold(None, |acc, k| NullBuffer::union(acc.as_ref(), k.logical_nulls().as_ref()))
}

pub(crate) fn is_valid(nulls: &Option<NullBuffer>, i: usize) -> bool {
    nulls.as_ref().is_none_or(|n| n.is_valid(i))
}

/// An equi-join of `left` and `right` on `left_keys = right_keys` (plus `condition`), for one
/// partition. The `build_side` is loaded into the hash table; the other side streams.
/// Output columns: left then right (LeftSemi/LeftAnti: left only). `null_aware`: Spark's
/// null-aware anti join (see `probe_stream`).
#[allow(clippy::too_many_arguments)]
pub fn hash_join(
    join_type: JoinType,
    null_aware: bool,
    left_keys: &[Expr],
    right_keys: &[Expr],
    condition: Option<&Expr>,
    build_side: BuildSide,
    left: (&[Attribute], Vec<RecordBatch>),
    right: (&[Attribute], Vec<RecordBatch>),
) -> Result<Vec<RecordBatch>> {
    hash_join_stream(join_type, null_aware, left_keys, right_keys, condition, build_side, left, right, CHUNK)?.collect()
}

/// [`hash_join`]'s output in pieces of at most `piece` rows, produced as they are pulled.
#[allow(clippy::too_many_arguments)]
pub fn hash_join_stream<'a>(
    join_type: JoinType,
    null_aware: bool,
    left_keys: &[Expr],
    right_keys: &[Expr],
    condition: Option<&'a Expr>,
    build_side: BuildSide,
    left: (&'a [Attribute], Vec<RecordBatch>),
    right: (&'a [Attribute], Vec<RecordBatch>),
    piece: usize,
) -> Result<JoinStream<'a>> {
    if left_keys.is_empty() {
        return nested_loop_join_stream(join_type, condition, left, right, piece);
    }
    if left_keys.len() != right_keys.len() {
        return Err(KilnError::internal("hash join with different numbers of left and right keys"));
    }
    let (build_keys, probe_keys, build, probe) = match build_side {
        BuildSide::BuildLeft => (left_keys, right_keys, left, right),
        BuildSide::BuildRight => (right_keys, left_keys, right, left),
    };
    let table = HashTable::build(build_keys, build)?;
    probe_table(join_type, null_aware, probe_keys, condition, build_side, TableRef::Own(table), probe, piece)
}

/// A hash join's build side: its rows in one batch and their `JoinTable` (the layout generated
/// code probes too). Built once, it serves every partition a broadcast pairs with it.
pub struct HashTable<'a> {
    side: Side<'a>,
    table: JoinTable,
}

impl<'a> HashTable<'a> {
    /// Hashes `side`'s rows by `keys`; rows with a NULL key are left out (they never match).
    pub fn build(keys: &[Expr], side: (&'a [Attribute], Vec<RecordBatch>)) -> Result<HashTable<'a>> {
        let side = Side::new(side)?;
        let build_keys = evaluate_all(keys, &side.batch, side.attrs)?;
        Ok(HashTable { side, table: JoinTable::build(&build_keys)? })
    }

    /// Bytes the table holds: its rows in one batch and the hash table.
    pub fn memory_size(&self) -> u64 {
        crate::physical::adaptive::batch_bytes(&self.side.batch) + self.table.memory_size()
    }
}

impl HashTable<'_> {
    /// The hash table itself (the layout generated code probes).
    pub fn join_table(&self) -> &JoinTable {
        &self.table
    }
}

/// `keys` evaluated over `batch`, as `table`'s key types.
fn probe_keys(keys: &[Expr], batch: &RecordBatch, attrs: &[Attribute], table: &JoinTable) -> Result<Vec<ArrayRef>> {
    // The analyzer makes key types equal; cast defensively so the key words agree.
    evaluate_all(keys, batch, attrs)?
        .iter()
        .zip(table.key_types())
        .map(|(k, t)| if k.data_type() == t { Ok(k.clone()) } else { Ok(cast(k, t)?) })
        .collect()
}

pub use crate::physical::keys_read_only;

/// The rows of a build side that a later inner (or semi) join of the same pipeline keeps:
/// those whose `keys` (that join's stream keys, read from these rows' columns `attrs`) find a
/// match in its `table`. That join drops every other row, so leaving them out of this join's
/// table changes no result, and spares this join's probe and the rows carried between.
pub fn rows_matching(batches: Vec<RecordBatch>, attrs: &[Attribute], keys: &[Expr], table: &JoinTable) -> Result<Vec<RecordBatch>> {
    // On the threads: a stage's partitions wait for this.
    batches
        .into_par_iter()
        .map(|b| {
            let heads = table.probe(&probe_keys(keys, &b, attrs, table)?)?;
            let keep: arrow::array::BooleanArray = heads.iter().map(|h| Some(*h != END)).collect();
            Ok(arrow::compute::filter_record_batch(&b, &keep)?)
        })
        .collect()
}

/// Probes `table` with one partition (or batch) of the stream side: the rows of `hash_join`
/// for it, in pieces of at most `piece` rows. A `null_aware` anti join (`x NOT IN (subquery)`,
/// one key) keeps every row when the build side is empty, no row when a build key is NULL, and
/// otherwise the rows whose key is not NULL and matches nothing.
#[allow(clippy::too_many_arguments)]
pub fn probe_stream<'a>(
    join_type: JoinType,
    null_aware: bool,
    probe_keys: &[Expr],
    condition: Option<&'a Expr>,
    build_side: BuildSide,
    table: &'a HashTable<'a>,
    probe: (&'a [Attribute], Vec<RecordBatch>),
    piece: usize,
) -> Result<JoinStream<'a>> {
    probe_table(join_type, null_aware, probe_keys, condition, build_side, TableRef::Shared(table), probe, piece)
}

#[allow(clippy::too_many_arguments)]
fn probe_table<'a>(
    join_type: JoinType,
    null_aware: bool,
    probe_keys: &[Expr],
    condition: Option<&'a Expr>,
    build_side: BuildSide,
    table: TableRef<'a>,
    probe: (&'a [Attribute], Vec<RecordBatch>),
    piece: usize,
) -> Result<JoinStream<'a>> {
    let probe = Side::new(probe)?;
    let t = table.get();
    let probe_keys = self::probe_keys(probe_keys, &probe.batch, probe.attrs, &t.table)?;
    // Each probe row's first build row with equal non-NULL keys; the rest follow its chain.
    let mut heads = t.table.probe(&probe_keys)?;
    let first_only = matches!(join_type, JoinType::LeftSemi | JoinType::LeftAnti) && condition.is_none() && build_side == BuildSide::BuildRight;
    let drop_all = null_aware && t.table.has_null_key();
    let drop_null = null_aware && t.table.rows() > 0;
    if drop_all || drop_null {
        // Paired with build row 0 (there is one): the anti join drops the row as matched.
        let probe_valid = if drop_null { keys_valid(&probe_keys) } else { None };
        for (p, head) in heads.iter_mut().enumerate() {
            if drop_all || !is_valid(&probe_valid, p) {
                *head = 0;
            }
        }
    }
    let left_drives = build_side == BuildSide::BuildRight;
    let markers = needs_markers(join_type, left_drives);
    let pairs = Pairs::Chains { heads, row: 0, at: END, first_only, markers };
    JoinStream::new(join_type, condition, Inputs::Probe { table, probe }, left_drives, pairs, piece)
}

/// An equi-join of `left` and `right` on `left_keys = right_keys` (plus `condition`) for one
/// partition whose two sides are each sorted ascending by their keys, NULLs first (the Sorts
/// `EnsureRequirements` puts under a SortMergeJoin). One merge pass pairs every run of equal
/// keys on the left with the run of the same key on the right; rows with a NULL key never
/// match. Output columns as `hash_join`.
pub fn sort_merge_join(
    join_type: JoinType,
    left_keys: &[Expr],
    right_keys: &[Expr],
    condition: Option<&Expr>,
    left: (&[Attribute], Vec<RecordBatch>),
    right: (&[Attribute], Vec<RecordBatch>),
) -> Result<Vec<RecordBatch>> {
    sort_merge_join_stream(join_type, left_keys, right_keys, condition, left, right, CHUNK)?.collect()
}

/// [`sort_merge_join`]'s output in pieces of at most `piece` rows, produced as they are
/// pulled. A left (right) outer join's output follows the left (right) rows' order: each
/// preserved row's matches where the row is, or the row null-extended, so the output stays
/// sorted by the preserved side's keys.
pub fn sort_merge_join_stream<'a>(
    join_type: JoinType,
    left_keys: &[Expr],
    right_keys: &[Expr],
    condition: Option<&'a Expr>,
    left: (&'a [Attribute], Vec<RecordBatch>),
    right: (&'a [Attribute], Vec<RecordBatch>),
    piece: usize,
) -> Result<JoinStream<'a>> {
    if left_keys.is_empty() || left_keys.len() != right_keys.len() {
        return Err(KilnError::internal("sort-merge join needs the same non-zero number of left and right keys"));
    }
    let (left, right) = (Side::new(left)?, Side::new(right)?);
    let lkeys = evaluate_all(left_keys, &left.batch, left.attrs)?;
    let rkeys = evaluate_all(right_keys, &right.batch, right.attrs)?;
    // The analyzer makes key types equal; cast defensively so the row encodings agree.
    let rkeys = rkeys
        .iter()
        .zip(&lkeys)
        .map(|(r, l)| if r.data_type() == l.data_type() { Ok(r.clone()) } else { Ok(cast(r, l.data_type())?) })
        .collect::<Result<Vec<_>>>()?;
    // -0.0 meets 0.0 and NaN meets NaN, as Spark's normalized join keys do.
    let normalized = |keys: &[ArrayRef]| keys.iter().map(crate::common::spill::normalized_floats).collect::<Vec<_>>();
    let (lsorted, rsorted) = MergeKeys::of(&normalized(&lkeys), &normalized(&rkeys))?;
    let (lvalid, rvalid) = (keys_valid(&lkeys), keys_valid(&rkeys));
    // Runs of equal keys, (left rows, right rows), in the order of both sides.
    let mut runs: Vec<(u32, u32, u32, u32)> = vec![];
    let on_match = |ls: std::ops::Range<usize>, rs: std::ops::Range<usize>| runs.push((ls.start as u32, ls.end as u32, rs.start as u32, rs.end as u32));
    // Each key kind merges in a loop of its own, its comparisons inlined.
    match (&lsorted, &rsorted) {
        (MergeKeys::Int(a), MergeKeys::Int(b)) => merge_runs(a, b, (&lvalid, &rvalid), on_match)?,
        (MergeKeys::Int2(a), MergeKeys::Int2(b)) => merge_runs(a, b, (&lvalid, &rvalid), on_match)?,
        (MergeKeys::Rows(a), MergeKeys::Rows(b)) => {
            let (a, b): (Vec<_>, Vec<_>) = (a.iter().collect(), b.iter().collect());
            merge_runs(&a, &b, (&lvalid, &rvalid), on_match)?
        }
        _ => return Err(KilnError::internal("sort-merge join keys of two kinds")),
    }
    let existence = matches!(join_type, JoinType::LeftSemi | JoinType::LeftAnti);
    // A right outer join follows the right rows.
    let left_drives = join_type != JoinType::RightOuter;
    let (rows, runs) = if left_drives {
        (left.rows(), runs)
    } else {
        (right.rows(), runs.into_iter().map(|(a, b, c, d)| (c, d, a, b)).collect())
    };
    let runs = match condition {
        // A semi or anti join needs one match per left row, not every pair: with a condition,
        // the pairs are tried a few per row at a time (`first_matches`), each row's first
        // passing pair a run of one.
        Some(c) if existence => {
            let per_row = runs.iter().flat_map(|&(a, b, from, to)| (a..b).map(move |l| (l, from, to))).collect();
            first_matches(c, &left, &right, per_row)?
        }
        _ => runs,
    };
    let markers = needs_markers(join_type, left_drives);
    let pairs = Pairs::Runs { runs, rows: rows as u32, run: 0, row: 0, at: END, first_only: existence && condition.is_none(), markers };
    JoinStream::new(join_type, condition.filter(|_| !existence), Inputs::Sides { left, right }, left_drives, pairs, piece)
}

/// For each left row and its run of right rows with equal keys `(left, from, to)`, the first
/// pair found that meets `condition`: each round tries the next pairs of the rows still
/// unmatched, twice as many per row as the round before, so most rows stop after a pair or
/// two and a long run costs a few rounds. The result: each matched left row's pair as a run of
/// one, `(l, l + 1, r, r + 1)`, in left-row order (found by row, not sorted).
fn first_matches(condition: &Expr, left: &Side, right: &Side, mut runs: Vec<(u32, u32, u32)>) -> Result<Vec<(u32, u32, u32, u32)>> {
    const NONE: u32 = u32::MAX;
    // Per left row, its first passing right row (NONE while unmatched).
    let mut first = vec![NONE; left.rows()];
    let mut width = 1u32;
    while !runs.is_empty() {
        let (mut li, mut ri) = (vec![], vec![]);
        for &(a, from, to) in &runs {
            for b in from..to.min(from.saturating_add(width)) {
                li.push(a);
                ri.push(b);
            }
        }
        let (ml, mr) = filter_pairs(condition, left, right, &li, &ri)?;
        for (a, b) in ml.into_iter().zip(mr) {
            if first[a as usize] == NONE {
                first[a as usize] = b;
            }
        }
        runs.retain_mut(|(a, from, to)| {
            *from = from.saturating_add(width);
            first[*a as usize] == NONE && *from < *to
        });
        width = width.saturating_mul(2);
    }
    Ok(first.into_iter().enumerate().filter(|&(_, r)| r != NONE).map(|(l, r)| (l as u32, l as u32 + 1, r, r + 1)).collect())
}

/// A sort-merge join side's keys in the order its Sort produced (ascending, NULLs first): one
/// or two integer-like keys as their values, others as arrow rows, which compare bytewise in
/// that order.
enum MergeKeys {
    Int(Vec<i64>),
    Int2(Vec<(i64, i64)>),
    Rows(Rows),
}

impl MergeKeys {
    fn of(left: &[ArrayRef], right: &[ArrayRef]) -> Result<(MergeKeys, MergeKeys)> {
        use arrow::datatypes::{DataType, Int64Type};
        let int_like = |a: &ArrayRef| matches!(a.data_type(), DataType::Int64 | DataType::Int32 | DataType::Int16 | DataType::Int8 | DataType::Date32);
        let ints = |a: &ArrayRef| -> Result<Vec<i64>> { Ok(cast(a, &DataType::Int64)?.as_primitive::<Int64Type>().values().to_vec()) };
        if left.iter().all(int_like) {
            match (left, right) {
                ([l], [r]) => return Ok((MergeKeys::Int(ints(l)?), MergeKeys::Int(ints(r)?))),
                ([l1, l2], [r1, r2]) => {
                    let pairs = |a: &ArrayRef, b: &ArrayRef| -> Result<MergeKeys> { Ok(MergeKeys::Int2(ints(a)?.into_iter().zip(ints(b)?).collect())) };
                    return Ok((pairs(l1, l2)?, pairs(r1, r2)?));
                }
                _ => {}
            }
        }
        let converter = RowConverter::new(left.iter().map(|k| SortField::new(k.data_type().clone())).collect())?;
        Ok((MergeKeys::Rows(converter.convert_columns(left)?), MergeKeys::Rows(converter.convert_columns(right)?)))
    }
}

/// Merges two sides' keys, each ascending where valid (a NULL key's value is arbitrary and
/// never matches): `on_match` gets each pair of runs of equal keys.
fn merge_runs<K: Ord>(l: &[K], r: &[K], (lvalid, rvalid): (&Option<NullBuffer>, &Option<NullBuffer>), mut on_match: impl FnMut(std::ops::Range<usize>, std::ops::Range<usize>)) -> Result<()> {
    for (keys, valid, side) in [(l, lvalid, "left"), (r, rvalid, "right")] {
        if !is_sorted(keys, valid) {
            return Err(KilnError::internal(format!("sort-merge join: the {side} input is not sorted by its keys")));
        }
    }
    // One past the last row equal to row `start`.
    let run_end = |keys: &[K], start: usize| (start + 1..keys.len()).find(|&i| keys[i] != keys[start]).unwrap_or(keys.len());
    let (mut a, mut b) = (0, 0);
    while a < l.len() && b < r.len() {
        if !is_valid(lvalid, a) {
            a += 1;
            continue;
        }
        if !is_valid(rvalid, b) {
            b += 1;
            continue;
        }
        match l[a].cmp(&r[b]) {
            std::cmp::Ordering::Less => a += 1,
            std::cmp::Ordering::Greater => b += 1,
            std::cmp::Ordering::Equal => {
                let (a_end, b_end) = (run_end(l, a), run_end(r, b));
                on_match(a..a_end, b..b_end);
                (a, b) = (a_end, b_end);
            }
        }
    }
    Ok(())
}

/// Whether the keys of valid rows are in order.
fn is_sorted<K: Ord>(keys: &[K], valid: &Option<NullBuffer>) -> bool {
    let mut last: Option<&K> = None;
    for (i, k) in keys.iter().enumerate() {
        if !is_valid(valid, i) {
            continue;
        }
        if last.is_some_and(|p| p > k) {
            return false;
        }
        last = Some(k);
    }
    true
}

/// A join without equi-keys: every (left, right) pair is tested against `condition` (none =
/// a cross product). All join types.
pub fn nested_loop_join(
    join_type: JoinType,
    condition: Option<&Expr>,
    left: (&[Attribute], Vec<RecordBatch>),
    right: (&[Attribute], Vec<RecordBatch>),
) -> Result<Vec<RecordBatch>> {
    nested_loop_join_stream(join_type, condition, left, right, CHUNK)?.collect()
}

/// [`nested_loop_join`]'s output in pieces of at most `piece` rows, produced as they are pulled.
pub fn nested_loop_join_stream<'a>(
    join_type: JoinType,
    condition: Option<&'a Expr>,
    left: (&'a [Attribute], Vec<RecordBatch>),
    right: (&'a [Attribute], Vec<RecordBatch>),
    piece: usize,
) -> Result<JoinStream<'a>> {
    let (left, right) = (Side::new(left)?, Side::new(right)?);
    let pairs = Pairs::Cross { rows: left.rows() as u32, others: right.rows() as u32, row: 0, at: 0, markers: needs_markers(join_type, true) };
    JoinStream::new(join_type, condition, Inputs::Sides { left, right }, true, pairs, piece)
}

/// The pairs for which `condition`, over the joined left ++ right columns, is TRUE.
fn filter_pairs(condition: &Expr, left: &Side, right: &Side, li: &[u32], ri: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
    let (mut out_l, mut out_r) = (vec![], vec![]);
    for start in (0..li.len()).step_by(CHUNK) {
        let end = (start + CHUNK).min(li.len());
        let pass = pair_mask(condition, left, right, &li[start..end], &ri[start..end])?;
        for i in pass.set_indices() {
            out_l.push(li[start + i]);
            out_r.push(ri[start + i]);
        }
    }
    Ok((out_l, out_r))
}

/// Per pair, whether `condition` over the joined left ++ right columns is TRUE (NULL is not).
fn pair_mask(condition: &Expr, left: &Side, right: &Side, li: &[u32], ri: &[u32]) -> Result<arrow::buffer::BooleanBuffer> {
    // Only the columns the condition reads are gathered per pair.
    let used = condition.references();
    let pick = |side: &Side| -> Vec<usize> { (0..side.attrs.len()).filter(|i| used.contains(&side.attrs[*i].id)).collect() };
    let (lcols, rcols) = (pick(left), pick(right));
    let attrs: Vec<Attribute> = lcols.iter().map(|i| left.attrs[*i].clone()).chain(rcols.iter().map(|i| right.attrs[*i].clone())).collect();
    // An internal batch: nullable fields with the arrays' own types.
    let field = |b: &RecordBatch, i: usize| b.schema().field(i).clone().with_nullable(true);
    let fields: Vec<Field> = lcols.iter().map(|i| field(&left.batch, *i)).chain(rcols.iter().map(|i| field(&right.batch, *i))).collect();
    let schema = Arc::new(Schema::new(fields));
    let (lix, rix) = (UInt32Array::from(li.to_vec()), UInt32Array::from(ri.to_vec()));
    let mut cols = take_columns(&left.batch, &lcols, &lix)?;
    cols.extend(take_columns(&right.batch, &rcols, &rix)?);
    let joined = make_batch(schema, cols, li.len())?;
    let mask = evaluate(condition, &joined, &attrs)?;
    let mask = mask
        .as_boolean_opt()
        .ok_or_else(|| KilnError::internal(format!("join condition {condition} is {}, not boolean", mask.data_type())))?;
    Ok(match mask.nulls() {
        Some(valid) => mask.values() & valid.inner(),
        None => mask.values().clone(),
    })
}

fn take_columns(batch: &RecordBatch, columns: &[usize], idx: &UInt32Array) -> Result<Vec<ArrayRef>> {
    columns.iter().map(|i| Ok(take(batch.column(*i).as_ref(), idx, None)?)).collect()
}

fn take_all(batch: &RecordBatch, idx: &UInt32Array) -> Result<Vec<ArrayRef>> {
    batch.columns().iter().map(|c| Ok(take(c.as_ref(), idx, None)?)).collect()
}

/// The output attributes of a join (outer sides become nullable), as `PhysicalPlan::output`.
fn output_attrs(join_type: JoinType, left: &[Attribute], right: &[Attribute]) -> Vec<Attribute> {
    join_type.output(left.to_vec(), right.to_vec())
}

/// No row of the other side: a driving row without candidate pairs (a marker), or the
/// null-extended side of an output row.
const NONE: u32 = u32::MAX;

/// Whether the pairs must also mark the driving rows that have no candidate pair: the rows a
/// join keeps unmatched (outer on the driving side, anti with the left driving).
fn needs_markers(join_type: JoinType, left_drives: bool) -> bool {
    match join_type {
        JoinType::FullOuter => true,
        JoinType::LeftOuter | JoinType::LeftAnti => left_drives,
        JoinType::RightOuter => !left_drives,
        _ => false,
    }
}

/// A join's candidate pairs (driving row, other row), produced a piece at a time in the order
/// of the driving side's rows; a driving row's pairs are contiguous.
enum Pairs {
    /// Each driving (probe) row's chain in a hash table: `heads[row]`, then `JoinTable::next`.
    /// `at`: the next build row of the row being produced (`END`: the row not begun).
    Chains { heads: Vec<u32>, row: usize, at: u32, first_only: bool, markers: bool },
    /// Runs of equal keys (driving rows `a..b`, other rows `c..d`), ascending on both sides,
    /// each driving row paired with the run's other rows.
    Runs { runs: Vec<(u32, u32, u32, u32)>, rows: u32, run: usize, row: u32, at: u32, first_only: bool, markers: bool },
    /// Every driving row with every other row.
    Cross { rows: u32, others: u32, row: u32, at: u32, markers: bool },
}

impl Pairs {
    /// Appends up to `max` more pairs (a marker's other row is `NONE`); false when none is left.
    fn next_piece(&mut self, table: Option<&JoinTable>, max: usize, d: &mut Vec<u32>, o: &mut Vec<u32>) -> Result<bool> {
        match self {
            Pairs::Chains { heads, row, at, first_only, markers } => {
                let table = table.ok_or_else(|| KilnError::internal("hash join pairs without a table"))?;
                while *row < heads.len() && d.len() < max {
                    if *at == END {
                        let head = heads[*row];
                        if head == END {
                            if *markers {
                                d.push(*row as u32);
                                o.push(NONE);
                            }
                            *row += 1;
                            continue;
                        }
                        *at = head;
                    }
                    d.push(*row as u32);
                    o.push(*at);
                    *at = if *first_only { END } else { table.next(*at) };
                    if *at == END {
                        *row += 1;
                    }
                }
                Ok(*row < heads.len())
            }
            Pairs::Runs { runs, rows, run, row, at, first_only, markers } => {
                while *row < *rows && d.len() < max {
                    while *run < runs.len() && runs[*run].1 <= *row {
                        *run += 1;
                    }
                    let Some(&(a, _, c, e)) = runs.get(*run).filter(|r| r.0 <= *row) else {
                        if *markers {
                            d.push(*row);
                            o.push(NONE);
                            *row += 1;
                        } else {
                            // No pair before the next run.
                            *row = runs.get(*run).map_or(*rows, |r| r.0.max(*row + 1));
                        }
                        continue;
                    };
                    debug_assert!(a <= *row);
                    if *at == END {
                        *at = c;
                    }
                    d.push(*row);
                    o.push(*at);
                    *at += 1;
                    if *first_only || *at >= e {
                        *at = END;
                        *row += 1;
                    }
                }
                Ok(*row < *rows)
            }
            Pairs::Cross { rows, others, row, at, markers } => {
                while *row < *rows && d.len() < max {
                    if *others == 0 {
                        if !*markers {
                            *row = *rows;
                            break;
                        }
                        d.push(*row);
                        o.push(NONE);
                        *row += 1;
                        continue;
                    }
                    let n = ((*others - *at) as usize).min(max - d.len()) as u32;
                    d.extend(std::iter::repeat_n(*row, n as usize));
                    o.extend(*at..*at + n);
                    *at += n;
                    if *at == *others {
                        *at = 0;
                        *row += 1;
                    }
                }
                Ok(*row < *rows)
            }
        }
    }
}

/// A hash join's table: its own (a shuffled join's partition) or shared (a broadcast).
enum TableRef<'a> {
    Own(HashTable<'a>),
    Shared(&'a HashTable<'a>),
}

impl<'a> TableRef<'a> {
    fn get(&self) -> &HashTable<'a> {
        match self {
            TableRef::Own(t) => t,
            TableRef::Shared(t) => t,
        }
    }
}

/// What a join reads: a probe side and a hash table over the build side, or both sides.
enum Inputs<'a> {
    Probe { table: TableRef<'a>, probe: Side<'a> },
    Sides { left: Side<'a>, right: Side<'a> },
}

/// One partition's (or batch's) join output, in pieces of at most `piece` rows, each computed
/// when pulled: a join whose matches for one input are many times its rows never holds them
/// all. The pairs follow the driving side's rows; that side's kept rows (outer, semi, anti)
/// come out in place, the other side's unmatched rows (outer) at the end.
pub struct JoinStream<'a> {
    join_type: JoinType,
    condition: Option<&'a Expr>,
    inputs: Inputs<'a>,
    /// Whether the driving side is the left (else the right).
    left_drives: bool,
    pairs: Pairs,
    piece: usize,
    /// The driving row being paired, and whether a pair of it passed.
    current: Option<(u32, bool)>,
    /// Per row of the other side, whether a pair with it passed: for the rows that side keeps
    /// unmatched (outer), or for a semi/anti join driven by its right side.
    other_matched: Option<Vec<bool>>,
    /// Whether the driving row's kept rows are emitted in place, and whether unmatched ones are.
    keep_driving: bool,
    schema: arrow::datatypes::SchemaRef,
    more: bool,
    done: bool,
    /// Reused buffers for a piece's pairs.
    d: Vec<u32>,
    o: Vec<u32>,
}

impl<'a> JoinStream<'a> {
    fn new(join_type: JoinType, condition: Option<&'a Expr>, inputs: Inputs<'a>, left_drives: bool, pairs: Pairs, piece: usize) -> Result<JoinStream<'a>> {
        let mut s = JoinStream {
            join_type,
            condition,
            inputs,
            left_drives,
            pairs,
            piece: piece.max(1),
            current: None,
            other_matched: None,
            keep_driving: false,
            schema: Arc::new(Schema::empty()),
            more: true,
            done: false,
            d: vec![],
            o: vec![],
        };
        let (left, right) = s.sides();
        let (lrows, rrows) = (left.rows(), right.rows());
        let schema = schema_of(&output_attrs(join_type, left.attrs, right.attrs));
        s.schema = schema;
        let other_rows = if left_drives { rrows } else { lrows };
        let existence = matches!(join_type, JoinType::LeftSemi | JoinType::LeftAnti);
        let other_kept = match join_type {
            JoinType::FullOuter => true,
            JoinType::LeftOuter => !left_drives,
            JoinType::RightOuter => left_drives,
            _ => existence && !left_drives,
        };
        if other_kept {
            s.other_matched = Some(vec![false; other_rows]);
        }
        s.keep_driving = needs_markers(join_type, left_drives) || (existence && left_drives);
        Ok(s)
    }

    /// (left, right)
    fn sides(&self) -> (&Side<'a>, &Side<'a>) {
        match &self.inputs {
            Inputs::Sides { left, right } => (left, right),
            Inputs::Probe { table, probe } => {
                if self.left_drives {
                    (probe, &table.get().side)
                } else {
                    (&table.get().side, probe)
                }
            }
        }
    }

    /// The next piece: the rows of the next `piece` pairs (possibly none), or, once the pairs
    /// are done, the other side's kept rows; None at the end.
    fn next_piece(&mut self) -> Result<Option<RecordBatch>> {
        if self.done {
            return Ok(None);
        }
        let (mut d, mut o) = (std::mem::take(&mut self.d), std::mem::take(&mut self.o));
        d.clear();
        o.clear();
        if self.more {
            let table = match &self.inputs {
                Inputs::Probe { table, .. } => Some(&table.get().table),
                Inputs::Sides { .. } => None,
            };
            self.more = self.pairs.next_piece(table, self.piece, &mut d, &mut o)?;
        }
        let out = if d.is_empty() && !self.more {
            self.done = true;
            self.finish()?
        } else {
            Some(self.emit(&d, &o)?)
        };
        (self.d, self.o) = (d, o);
        Ok(out)
    }

    /// The output rows of a piece of pairs, in order.
    fn emit(&mut self, d: &[u32], o: &[u32]) -> Result<RecordBatch> {
        let pass = self.pass(d, o)?;
        let existence = matches!(self.join_type, JoinType::LeftSemi | JoinType::LeftAnti);
        let semi = self.join_type == JoinType::LeftSemi;
        let (mut out_d, mut out_o) = (Vec::with_capacity(d.len()), Vec::with_capacity(d.len()));
        if !self.keep_driving && self.other_matched.is_none() {
            // Inner: the passing pairs.
            match &pass {
                None => return self.rows_of(d, o, false),
                Some(p) => {
                    for i in p.set_indices() {
                        out_d.push(d[i]);
                        out_o.push(o[i]);
                    }
                    return self.rows_of(&out_d, &out_o, false);
                }
            }
        }
        let passed = |i: usize| o[i] != NONE && pass.as_ref().is_none_or(|p| p.value(i));
        let mut current = self.current.take();
        for i in 0..d.len() {
            let row = d[i];
            if current.is_some_and(|(r, _)| r != row) {
                if let Some((r, matched)) = current {
                    self.row_done(r, matched, &mut out_d, &mut out_o);
                }
                current = None;
            }
            let cur = current.get_or_insert((row, false));
            if !passed(i) {
                continue;
            }
            let first = !cur.1;
            cur.1 = true;
            if let Some(m) = &mut self.other_matched {
                m[o[i] as usize] = true;
            }
            if existence {
                if semi && first && self.left_drives {
                    out_d.push(row);
                    out_o.push(NONE);
                }
            } else {
                out_d.push(row);
                out_o.push(o[i]);
            }
        }
        self.current = current;
        self.rows_of(&out_d, &out_o, true)
    }

    /// A driving row whose pairs are all seen: kept unmatched (outer, null-extended; anti).
    fn row_done(&self, row: u32, matched: bool, out_d: &mut Vec<u32>, out_o: &mut Vec<u32>) {
        if matched || !self.keep_driving || self.join_type == JoinType::LeftSemi {
            return;
        }
        out_d.push(row);
        out_o.push(NONE);
    }

    /// After the last pair: the last driving row, then the other side's kept rows.
    fn finish(&mut self) -> Result<Option<RecordBatch>> {
        let (mut out_d, mut out_o) = (vec![], vec![]);
        if let Some((r, matched)) = self.current.take() {
            self.row_done(r, matched, &mut out_d, &mut out_o);
        }
        if let Some(m) = &self.other_matched {
            let want = self.join_type == JoinType::LeftSemi;
            let existence = matches!(self.join_type, JoinType::LeftSemi | JoinType::LeftAnti);
            for (row, matched) in m.iter().enumerate() {
                if (existence && *matched == want) || (!existence && !*matched) {
                    out_d.push(NONE);
                    out_o.push(row as u32);
                }
            }
            if existence {
                // The left side is the other side here: its rows alone are the output.
                return Ok(Some(self.rows_of(&out_d, &out_o, true)?).filter(|b| b.num_rows() > 0));
            }
        }
        if out_d.is_empty() {
            return Ok(None);
        }
        self.rows_of(&out_d, &out_o, true).map(Some)
    }

    /// Per pair, whether the condition holds (None: every pair without a condition; markers
    /// are told apart by `NONE`).
    fn pass(&self, d: &[u32], o: &[u32]) -> Result<Option<arrow::buffer::BooleanBuffer>> {
        let Some(c) = self.condition else { return Ok(None) };
        let real: Vec<usize> = (0..d.len()).filter(|i| o[*i] != NONE).collect();
        let (dr, or): (Vec<u32>, Vec<u32>) = real.iter().map(|i| (d[*i], o[*i])).unzip();
        let (li, ri) = if self.left_drives { (&dr, &or) } else { (&or, &dr) };
        let (left, right) = self.sides();
        let mask = if real.is_empty() { arrow::buffer::BooleanBuffer::new_unset(0) } else { pair_mask(c, left, right, li, ri)? };
        if real.len() == d.len() {
            return Ok(Some(mask));
        }
        let mut all = arrow::array::BooleanBufferBuilder::new(d.len());
        all.append_n(d.len(), false);
        for (k, i) in real.iter().enumerate() {
            if mask.value(k) {
                all.set_bit(*i, true);
            }
        }
        Ok(Some(all.finish()))
    }

    /// The output rows for (driving row, other row) pairs; `NONE` null-extends that side (with
    /// `nulls`). A semi/anti join's rows are the left side's alone.
    fn rows_of(&self, d: &[u32], o: &[u32], nulls: bool) -> Result<RecordBatch> {
        let (left, right) = self.sides();
        let index = |v: &[u32]| -> UInt32Array {
            if nulls && v.contains(&NONE) {
                v.iter().map(|i| (*i != NONE).then_some(*i)).collect()
            } else {
                UInt32Array::from(v.to_vec())
            }
        };
        let (l, r) = if self.left_drives { (d, o) } else { (o, d) };
        let lidx = index(l);
        let mut cols = take_all(&left.batch, &lidx)?;
        if !matches!(self.join_type, JoinType::LeftSemi | JoinType::LeftAnti) {
            cols.extend(take_all(&right.batch, &index(r))?);
        }
        make_batch(self.schema.clone(), cols, lidx.len())
    }
}

impl Iterator for JoinStream<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_piece() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
#[path = "join_tests.rs"]
mod tests;
