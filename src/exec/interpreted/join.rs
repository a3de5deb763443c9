//! Joins over one partition: a hash join or a merge join on equi-keys, and a nested-loop join
//! for the rest. Each produces candidate (left row, right row) pairs, filters them by the extra
//! condition, then assembles the output for the join type (null-extending unmatched rows).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, UInt32Array};
use arrow::buffer::NullBuffer;
use arrow::compute::{cast, take};
use arrow::datatypes::{Field, Schema};
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, Rows, SortField};

use super::join_table::{JoinTable, END};
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
/// null-aware anti join (see `probe_hash_table`).
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
    if left_keys.is_empty() {
        return nested_loop_join(join_type, condition, left, right);
    }
    if left_keys.len() != right_keys.len() {
        return Err(KilnError::internal("hash join with different numbers of left and right keys"));
    }
    let (build_keys, probe_keys, build, probe) = match build_side {
        BuildSide::BuildLeft => (left_keys, right_keys, left, right),
        BuildSide::BuildRight => (right_keys, left_keys, right, left),
    };
    let table = HashTable::build(build_keys, build)?;
    probe_hash_table(join_type, null_aware, probe_keys, condition, build_side, &table, probe)
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

/// Whether every key is a deterministic expression of `columns` alone: a later join's stream
/// keys that `rows_matching` can read from an earlier join's build rows.
pub fn keys_read_only(keys: &[Expr], columns: &[Attribute]) -> bool {
    let own: std::collections::BTreeSet<_> = columns.iter().map(|a| a.id).collect();
    keys.iter().all(|e| {
        let refs = e.references();
        e.deterministic() && !refs.is_empty() && refs.is_subset(&own)
    })
}

/// The rows of a build side that a later inner (or semi) join of the same pipeline keeps:
/// those whose `keys` (that join's stream keys, read from these rows' columns `attrs`) find a
/// match in its `table`. That join drops every other row, so leaving them out of this join's
/// table changes no result, and spares this join's probe and the rows carried between.
pub fn rows_matching(batches: Vec<RecordBatch>, attrs: &[Attribute], keys: &[Expr], table: &JoinTable) -> Result<Vec<RecordBatch>> {
    batches
        .into_iter()
        .map(|b| {
            let heads = table.probe(&probe_keys(keys, &b, attrs, table)?)?;
            let keep: arrow::array::BooleanArray = heads.iter().map(|h| Some(*h != END)).collect();
            Ok(arrow::compute::filter_record_batch(&b, &keep)?)
        })
        .collect()
}

/// Probes `table` with one partition of the stream side: the rows of `hash_join` for it.
/// A `null_aware` anti join (`x NOT IN (subquery)`, one key) keeps every row when the build
/// side is empty, no row when a build key is NULL, and otherwise the rows whose key is not
/// NULL and matches nothing.
pub fn probe_hash_table(
    join_type: JoinType,
    null_aware: bool,
    probe_keys: &[Expr],
    condition: Option<&Expr>,
    build_side: BuildSide,
    table: &HashTable,
    probe: (&[Attribute], Vec<RecordBatch>),
) -> Result<Vec<RecordBatch>> {
    let probe = Side::new(probe)?;
    let probe_keys = self::probe_keys(probe_keys, &probe.batch, probe.attrs, &table.table)?;
    // Probe: every (probe row, build row) pair with equal non-NULL keys.
    let heads = table.table.probe(&probe_keys)?;
    let first_only = matches!(join_type, JoinType::LeftSemi | JoinType::LeftAnti)
        && condition.is_none()
        && build_side == BuildSide::BuildRight;
    let (mut probe_idx, mut build_idx) = (vec![], vec![]);
    let drop_all = null_aware && table.table.has_null_key();
    let drop_null = null_aware && table.table.rows() > 0;
    let probe_valid = if drop_null { keys_valid(&probe_keys) } else { None };
    for (p, head) in heads.iter().enumerate() {
        // Paired with build row 0 (there is one): the anti join drops it as matched.
        if drop_all || (drop_null && !is_valid(&probe_valid, p)) {
            probe_idx.push(p as u32);
            build_idx.push(0);
            continue;
        }
        let mut b = *head;
        while b != END {
            probe_idx.push(p as u32);
            build_idx.push(b);
            if first_only {
                break;
            }
            b = table.table.next(b);
        }
    }
    let (left, right, li, ri) = match build_side {
        BuildSide::BuildLeft => (&table.side, &probe, build_idx, probe_idx),
        BuildSide::BuildRight => (&probe, &table.side, probe_idx, build_idx),
    };
    let (li, ri) = match condition {
        Some(c) => filter_pairs(c, left, right, &li, &ri)?,
        None => (li, ri),
    };
    assemble(join_type, left, right, li, ri)
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
    let (lsorted, rsorted) = MergeKeys::of(&lkeys, &rkeys)?;
    let (lvalid, rvalid) = (keys_valid(&lkeys), keys_valid(&rkeys));
    // A semi or anti join needs one match per left row, not every pair: without a condition
    // the first pair is it; with one, the pairs are tried a few per row at a time.
    let existence = matches!(join_type, JoinType::LeftSemi | JoinType::LeftAnti);
    let one_match = condition.is_none() && existence;
    let mut runs: Vec<(u32, u32, u32)> = vec![];
    let (mut li, mut ri) = (vec![], vec![]);
    let on_match = |ls: std::ops::Range<usize>, rs: std::ops::Range<usize>| {
        if existence && !one_match {
            runs.extend(ls.map(|a| (a as u32, rs.start as u32, rs.end as u32)));
            return;
        }
        let rs = if one_match { rs.start..rs.start + 1 } else { rs };
        for a in ls {
            for b in rs.clone() {
                li.push(a as u32);
                ri.push(b as u32);
            }
        }
    };
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
    let (li, ri) = match condition {
        Some(c) if existence => first_matches(c, &left, &right, runs)?,
        Some(c) => filter_pairs(c, &left, &right, &li, &ri)?,
        None => (li, ri),
    };
    assemble_in_order(join_type, &left, &right, li, ri)
}

/// For each left row and its run of right rows with equal keys `(left, from, to)`, the first
/// pair found that meets `condition`: each round tries the next pairs of the rows still
/// unmatched, twice as many per row as the round before, so most rows stop after a pair or
/// two and a long run costs a few rounds.
fn first_matches(condition: &Expr, left: &Side, right: &Side, mut runs: Vec<(u32, u32, u32)>) -> Result<(Vec<u32>, Vec<u32>)> {
    let (mut out_l, mut out_r) = (vec![], vec![]);
    let mut matched = vec![false; left.rows()];
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
            if !matched[a as usize] {
                matched[a as usize] = true;
                out_l.push(a);
                out_r.push(b);
            }
        }
        runs.retain_mut(|(a, from, to)| {
            *from = from.saturating_add(width);
            !matched[*a as usize] && *from < *to
        });
        width = width.saturating_mul(2);
    }
    Ok((out_l, out_r))
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
    let (left, right) = (Side::new(left)?, Side::new(right)?);
    let (nl, nr) = (left.rows(), right.rows());
    let (mut li, mut ri) = (vec![], vec![]);
    if nl > 0 && nr > 0 {
        let left_rows_per_chunk = (CHUNK / nr).max(1);
        for start in (0..nl).step_by(left_rows_per_chunk) {
            let end = (start + left_rows_per_chunk).min(nl);
            let cl: Vec<u32> = (start..end).flat_map(|l| std::iter::repeat_n(l as u32, nr)).collect();
            let cr: Vec<u32> = (start..end).flat_map(|_| 0..nr as u32).collect();
            let (cl, cr) = match condition {
                Some(c) => filter_pairs(c, &left, &right, &cl, &cr)?,
                None => (cl, cr),
            };
            li.extend(cl);
            ri.extend(cr);
        }
    }
    assemble(join_type, &left, &right, li, ri)
}

/// The pairs for which `condition`, over the joined left ++ right columns, is TRUE.
fn filter_pairs(condition: &Expr, left: &Side, right: &Side, li: &[u32], ri: &[u32]) -> Result<(Vec<u32>, Vec<u32>)> {
    // Only the columns the condition reads are gathered per pair.
    let used = condition.references();
    let pick = |side: &Side| -> Vec<usize> { (0..side.attrs.len()).filter(|i| used.contains(&side.attrs[*i].id)).collect() };
    let (lcols, rcols) = (pick(left), pick(right));
    let attrs: Vec<Attribute> = lcols.iter().map(|i| left.attrs[*i].clone()).chain(rcols.iter().map(|i| right.attrs[*i].clone())).collect();
    // An internal batch: nullable fields with the arrays' own types.
    let field = |b: &RecordBatch, i: usize| b.schema().field(i).clone().with_nullable(true);
    let fields: Vec<Field> = lcols.iter().map(|i| field(&left.batch, *i)).chain(rcols.iter().map(|i| field(&right.batch, *i))).collect();
    let schema = Arc::new(Schema::new(fields));
    let (mut out_l, mut out_r) = (vec![], vec![]);
    for start in (0..li.len()).step_by(CHUNK) {
        let end = (start + CHUNK).min(li.len());
        let (lix, rix) = (UInt32Array::from(li[start..end].to_vec()), UInt32Array::from(ri[start..end].to_vec()));
        let mut cols = take_columns(&left.batch, &lcols, &lix)?;
        cols.extend(take_columns(&right.batch, &rcols, &rix)?);
        let joined = make_batch(schema.clone(), cols, end - start)?;
        let mask = evaluate(condition, &joined, &attrs)?;
        let mask = mask
            .as_boolean_opt()
            .ok_or_else(|| KilnError::internal(format!("join condition {condition} is {}, not boolean", mask.data_type())))?;
        // NULL is not a match.
        let valid = mask.nulls();
        for i in mask.values().set_indices().filter(|i| valid.is_none_or(|v| v.is_valid(*i))) {
            out_l.push(li[start + i]);
            out_r.push(ri[start + i]);
        }
    }
    Ok((out_l, out_r))
}

fn take_columns(batch: &RecordBatch, columns: &[usize], idx: &UInt32Array) -> Result<Vec<ArrayRef>> {
    columns.iter().map(|i| Ok(take(batch.column(*i).as_ref(), idx, None)?)).collect()
}

fn take_all(batch: &RecordBatch, idx: &UInt32Array) -> Result<Vec<ArrayRef>> {
    batch.columns().iter().map(|c| Ok(take(c.as_ref(), idx, None)?)).collect()
}

/// Rows of a side that appear in no pair.
fn unmatched(rows: usize, matched_idx: &[u32]) -> Vec<u32> {
    let mut matched = vec![false; rows];
    for i in matched_idx {
        matched[*i as usize] = true;
    }
    (0..rows as u32).filter(|i| !matched[*i as usize]).collect()
}

/// The output attributes of a join (outer sides become nullable), as `PhysicalPlan::output`.
fn output_attrs(join_type: JoinType, left: &[Attribute], right: &[Attribute]) -> Vec<Attribute> {
    join_type.output(left.to_vec(), right.to_vec())
}

/// Builds the output from the matching pairs: matches, plus null-extended unmatched rows of
/// the preserved sides (outer), or the left rows with / without a match (semi / anti).
fn assemble(join_type: JoinType, left: &Side, right: &Side, li: Vec<u32>, ri: Vec<u32>) -> Result<Vec<RecordBatch>> {
    let attrs = output_attrs(join_type, left.attrs, right.attrs);
    let schema = schema_of(&attrs);
    let (lidx, ridx): (UInt32Array, UInt32Array) = match join_type {
        JoinType::Inner | JoinType::Cross => (li.into(), ri.into()),
        JoinType::LeftSemi | JoinType::LeftAnti => {
            let mut matched = vec![false; left.rows()];
            for i in &li {
                matched[*i as usize] = true;
            }
            let want = join_type == JoinType::LeftSemi;
            let rows: Vec<u32> = (0..left.rows() as u32).filter(|i| matched[*i as usize] == want).collect();
            let n = rows.len();
            return Ok(vec![make_batch(schema, take_all(&left.batch, &rows.into())?, n)?]);
        }
        JoinType::LeftOuter | JoinType::RightOuter | JoinType::FullOuter => {
            let (keep_left, keep_right) = join_type.preserved_sides();
            let extra_left = if keep_left { unmatched(left.rows(), &li) } else { vec![] };
            let extra_right = if keep_right { unmatched(right.rows(), &ri) } else { vec![] };
            let l: Vec<Option<u32>> = li
                .iter()
                .map(|i| Some(*i))
                .chain(extra_left.iter().map(|i| Some(*i)))
                .chain(extra_right.iter().map(|_| None))
                .collect();
            let r: Vec<Option<u32>> = ri
                .iter()
                .map(|i| Some(*i))
                .chain(extra_left.iter().map(|_| None))
                .chain(extra_right.iter().map(|i| Some(*i)))
                .collect();
            (l.into(), r.into())
        }
    };
    take_pairs(join_type, left, right, &lidx, &ridx)
}

/// The output rows for index pairs (a NULL index null-extends that side).
fn take_pairs(join_type: JoinType, left: &Side, right: &Side, lidx: &UInt32Array, ridx: &UInt32Array) -> Result<Vec<RecordBatch>> {
    let schema = schema_of(&output_attrs(join_type, left.attrs, right.attrs));
    let mut cols = take_all(&left.batch, lidx)?;
    cols.extend(take_all(&right.batch, ridx)?);
    Ok(vec![make_batch(schema, cols, lidx.len())?])
}

/// A left (right) outer join's output in the order of the left (right) rows: each preserved
/// row's matches where the row is, or the row null-extended. `li`/`ri` are the matching pairs
/// with `li` ascending. This keeps a sort-merge join's output sorted by the preserved side's keys.
fn assemble_in_order(join_type: JoinType, left: &Side, right: &Side, li: Vec<u32>, ri: Vec<u32>) -> Result<Vec<RecordBatch>> {
    let (rows, mut pairs): (usize, Vec<(u32, u32)>) = match join_type {
        JoinType::LeftOuter => (left.rows(), li.into_iter().zip(ri).collect()),
        JoinType::RightOuter => (right.rows(), ri.into_iter().zip(li).collect()),
        _ => return assemble(join_type, left, right, li, ri),
    };
    pairs.sort_by_key(|(kept, _)| *kept);
    let (mut kept_idx, mut other_idx): (Vec<Option<u32>>, Vec<Option<u32>>) = (vec![], vec![]);
    let mut next = pairs.iter().peekable();
    for row in 0..rows as u32 {
        let before = kept_idx.len();
        while let Some((_, other)) = next.next_if(|(kept, _)| *kept == row) {
            kept_idx.push(Some(row));
            other_idx.push(Some(*other));
        }
        if kept_idx.len() == before {
            kept_idx.push(Some(row));
            other_idx.push(None);
        }
    }
    let (kept_idx, other_idx): (UInt32Array, UInt32Array) = (kept_idx.into(), other_idx.into());
    match join_type {
        JoinType::LeftOuter => take_pairs(join_type, left, right, &kept_idx, &other_idx),
        _ => take_pairs(join_type, left, right, &other_idx, &kept_idx),
    }
}

#[cfg(test)]
#[path = "join_tests.rs"]
mod tests;
