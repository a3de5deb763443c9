//! Vectorized group-id assignment: maps the key tuples of a batch to dense ids (used by the
//! aggregate, by DISTINCT and by the join's build side).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use arrow::array::{new_empty_array, Array, ArrayRef, ArrowPrimitiveType, AsArray};
use arrow::compute::interleave;
use arrow::datatypes::*;
use arrow::row::{RowConverter, SortField};

use super::group_table::{key_kind, GroupTable};
use crate::common::hash::{finish, mix};
use crate::error::{KilnError, Result};

/// A cheap multiplicative hash with a final avalanche (plain Fx hashes give equal low bits
/// to keys that differ only in high bits, which the table's bucket index uses).
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = mix(self.0, w);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.add(i as u64);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        finish(self.0)
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// Marks "no group" in lookups that do not add groups.
pub(crate) const NO_GROUP: u32 = u32::MAX;

enum Table {
    /// Keys the shared group table holds (see `group_table`).
    Shared(Box<GroupTable>),
    /// Any other keys: hash their arrow_row encoding.
    Rows {
        converter: RowConverter,
        map: FastMap<Box<[u8]>, u32>,
        /// Key arrays of every pushed batch, kept to materialize group keys with `interleave`.
        batches: Vec<Vec<ArrayRef>>,
        /// (batch, row) where each group was first seen.
        first: Vec<(usize, usize)>,
        /// Bytes of the encoded keys and the kept key arrays, counted as they come.
        bytes: u64,
    },
}

/// Assigns dense group ids (0, 1, ...) to distinct key tuples, NULL equal to NULL, -0.0 equal
/// to 0.0 and every NaN equal (Spark's NormalizeFloatingNumbers).
pub(crate) struct Grouper {
    table: Table,
    types: Vec<DataType>,
    /// Scratch space of the general layout: candidate rows and their hashes.
    cand: Vec<u64>,
    hashes: Vec<u64>,
}

/// Calls `f(j, value)` for the rows `rows` lists (all rows when None) of an integer-like array.
fn for_each_int(arr: &dyn Array, rows: Option<&[u32]>, f: impl FnMut(usize, Option<i64>)) -> Result<()> {
    fn go<T: ArrowPrimitiveType>(arr: &dyn Array, rows: Option<&[u32]>, mut f: impl FnMut(usize, Option<i64>), to: impl Fn(T::Native) -> i64) {
        let a = arr.as_primitive::<T>();
        let values = a.values();
        match (rows, a.null_count() == 0) {
            (None, true) => values.iter().enumerate().for_each(|(i, v)| f(i, Some(to(*v)))),
            (None, false) => values.iter().enumerate().for_each(|(i, v)| f(i, a.is_valid(i).then(|| to(*v)))),
            (Some(r), true) => r.iter().enumerate().for_each(|(j, row)| f(j, Some(to(values[*row as usize])))),
            (Some(r), false) => r.iter().enumerate().for_each(|(j, row)| f(j, a.is_valid(*row as usize).then(|| to(values[*row as usize])))),
        }
    }
    match arr.data_type() {
        DataType::Int8 => go::<Int8Type>(arr, rows, f, |v| v as i64),
        DataType::Int16 => go::<Int16Type>(arr, rows, f, |v| v as i64),
        DataType::Int32 => go::<Int32Type>(arr, rows, f, |v| v as i64),
        DataType::Date32 => go::<Date32Type>(arr, rows, f, |v| v as i64),
        DataType::Int64 => go::<Int64Type>(arr, rows, f, |v| v),
        DataType::UInt8 => go::<UInt8Type>(arr, rows, f, |v| v as i64),
        DataType::UInt16 => go::<UInt16Type>(arr, rows, f, |v| v as i64),
        DataType::UInt32 => go::<UInt32Type>(arr, rows, f, |v| v as i64),
        DataType::Decimal128(..) => go::<Decimal128Type>(arr, rows, f, |v| v as i64),
        other => return Err(KilnError::internal(format!("grouping key of type {other} where an integer was planned"))),
    }
    Ok(())
}

impl Grouper {
    /// A grouper for keys of these types (at least one).
    pub fn new(types: &[DataType]) -> Result<Grouper> {
        let table = if types.len() <= 64 && types.iter().all(|t| key_kind(t).is_some()) {
            Table::Shared(GroupTable::new(types, 0)?)
        } else {
            let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
            Table::Rows { converter: RowConverter::new(fields)?, map: FastMap::default(), batches: vec![], first: vec![], bytes: 0 }
        };
        Ok(Grouper { table, types: types.to_vec(), cand: vec![], hashes: vec![] })
    }

    pub fn num_groups(&self) -> usize {
        match &self.table {
            Table::Shared(t) => t.num_groups(),
            Table::Rows { first, .. } => first.len(),
        }
    }

    /// Bytes the grouper holds: its table, or the encoded keys and the key arrays it keeps.
    pub fn memory_size(&self) -> u64 {
        match &self.table {
            Table::Shared(t) => t.memory_size(),
            Table::Rows { bytes, first, .. } => bytes + first.capacity() as u64 * 16,
        }
    }

    /// Bytes the grouper holds once it has room for `rows` more groups (the shared table's
    /// growth; the general layout's keys are counted as they come).
    pub fn memory_size_after(&self, rows: usize) -> u64 {
        match &self.table {
            Table::Shared(t) => t.memory_size_after(rows),
            Table::Rows { .. } => self.memory_size(),
        }
    }

    /// Makes room for `groups` groups at once, where the table grows in place.
    pub fn reserve_groups(&mut self, groups: usize) {
        if let Table::Shared(t) = &mut self.table {
            t.reserve_groups(groups);
        }
    }

    /// Forgets every group (ids start again at 0), keeping the shared table's memory.
    pub fn clear(&mut self) -> Result<()> {
        match &mut self.table {
            Table::Shared(t) => t.clear(),
            Table::Rows { .. } => *self = Grouper::new(&self.types)?,
        }
        Ok(())
    }

    /// Forgets every group and gives back the memory they took.
    pub fn release(&mut self) -> Result<()> {
        *self = Grouper::new(&self.types)?;
        Ok(())
    }

    /// Assigns a group id to every row of `keys` (one array per key), new ids to new tuples.
    pub fn push(&mut self, keys: Vec<ArrayRef>, ids: &mut Vec<u32>) -> Result<()> {
        self.push_selected(keys, None, ids)
    }

    /// As `push`, for the rows `selection` lists only (all rows when None): `ids[j]` is the
    /// group of row `selection[j]`.
    pub fn push_selected(&mut self, keys: Vec<ArrayRef>, selection: Option<&[u32]>, ids: &mut Vec<u32>) -> Result<()> {
        self.find(&keys, selection, true, ids)?;
        if let Table::Rows { batches, bytes, .. } = &mut self.table {
            *bytes += keys.iter().map(|a| a.get_array_memory_size() as u64).sum::<u64>();
            batches.push(keys);
        }
        Ok(())
    }

    fn find(&mut self, keys: &[ArrayRef], selection: Option<&[u32]>, insert: bool, ids: &mut Vec<u32>) -> Result<()> {
        ids.clear();
        let n = keys.first().map_or(0, |k| k.len());
        match &mut self.table {
            Table::Shared(t) if t.is_int() => {
                ids.reserve(selection.map_or(n, |s| s.len()));
                // Rows with the key of the row before (clustered data) reuse its group.
                let mut last: Option<(i64, u32)> = None;
                for_each_int(keys[0].as_ref(), selection, |_, v| {
                    let id = match (v, last) {
                        (Some(k), Some((l, g))) if k == l => g,
                        _ => {
                            let g = t.find_int(v, insert);
                            last = v.filter(|_| g != super::group_table::EMPTY).map(|k| (k, g));
                            g
                        }
                    };
                    ids.push(id);
                })?;
            }
            Table::Shared(t) => {
                t.encode(keys, selection, &mut self.cand, &mut self.hashes)?;
                ids.reserve(self.hashes.len());
                // SAFETY: the candidates' string words address `keys`' bytes, alive here.
                unsafe { t.find_rows(&self.cand, &self.hashes, insert, ids) };
            }
            Table::Rows { converter, map, batches, first, bytes } => {
                let encoded = converter.convert_columns(keys)?;
                let b = batches.len();
                let rows: Box<dyn Iterator<Item = usize>> = match selection {
                    Some(s) => Box::new(s.iter().map(|r| *r as usize)),
                    None => Box::new(0..n),
                };
                for row in rows {
                    let r = encoded.row(row);
                    let id = match map.get(r.as_ref()) {
                        Some(id) => *id,
                        None if !insert => NO_GROUP,
                        None => {
                            first.push((b, row));
                            let id = (first.len() - 1) as u32;
                            *bytes += r.as_ref().len() as u64 + 32;
                            map.insert(r.as_ref().into(), id);
                            id
                        }
                    };
                    ids.push(id);
                }
            }
        }
        Ok(())
    }

    /// The key columns of all groups, in group id order.
    pub fn keys(&self) -> Result<Vec<ArrayRef>> {
        match &self.table {
            Table::Shared(t) => t.keys(),
            Table::Rows { batches, first, .. } => (0..self.types.len())
                .map(|c| {
                    if first.is_empty() {
                        return Ok(new_empty_array(&self.types[c]));
                    }
                    let arrays: Vec<&dyn Array> = batches.iter().map(|b| b[c].as_ref()).collect();
                    Ok(interleave(&arrays, first)?)
                })
                .collect(),
        }
    }
}

/// Whether a partial aggregate holding `groups` groups made from `rows` rows (since it last
/// emitted) emits them now (`kiln.aggregate.partialFlushGroups`, `limit`, 0: never): it has
/// `limit` groups and its rows fold at least two to a group (clustered keys, such as TPC-H's
/// lineitem by order, whose groups do not come back). A table that size stays in the caches,
/// where one of every group in the partition grows and misses them on each new key. Rows that
/// barely fold keep the table growing: emitted, their keys would come back and leave through
/// the exchange as many rows as came in. The final aggregate merges whatever the partial
/// ones emit, so results do not change.
pub fn partial_flush_due(groups: usize, rows: usize, limit: usize) -> bool {
    limit > 0 && groups >= limit && rows >= 2 * groups
}

/// Groups a final aggregate makes room for when `rows` input rows are to come: at most one
/// per row, and no more than a cache-sized table (rows that fold well would leave a larger
/// one empty), so it neither grows nor rehashes on the way.
pub fn final_groups_expected(rows: usize) -> usize {
    rows.min(1 << 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::interpreted::test_util::*;

    #[test]
    fn string_keys_group_by_bytes_past_the_prefix() {
        let a = strs(&[Some("A"), Some("N"), Some("A"), None, Some("N")]);
        let b = strs(&[Some("F"), Some("O"), Some("F"), Some("F"), Some("O")]);
        let mut g = Grouper::new(&[DataType::Utf8, DataType::Utf8]).unwrap();
        assert!(matches!(g.table, Table::Shared(_)));
        let mut ids = vec![];
        g.push_selected(vec![a.clone(), b.clone()], Some(&[0, 1, 2, 3]), &mut ids).unwrap();
        assert_eq!(ids, vec![0, 1, 0, 2]);
        // Long keys are compared past their prefix.
        let long = strs(&[Some("a string far too long to pack"), Some("A")]);
        let f = strs(&[Some("F"), Some("F")]);
        g.push(vec![long, f], &mut ids).unwrap();
        assert_eq!(ids, vec![3, 0]);
        assert_eq!(g.num_groups(), 4);
        let keys = g.keys().unwrap();
        assert_eq!(keys[0].as_string::<i32>().value(3), "a string far too long to pack");
    }

    #[test]
    fn groups_ints_and_strings_with_nulls() {
        for keys in [ints(&[Some(1), None, Some(1), Some(2), None]), strs(&[Some("a"), None, Some("a"), Some("b"), None])] {
            let mut g = Grouper::new(&[keys.data_type().clone()]).unwrap();
            let mut ids = vec![];
            g.push(vec![keys.clone()], &mut ids).unwrap();
            assert_eq!(ids, vec![0, 1, 0, 2, 1]);
            assert_eq!(g.num_groups(), 3);
            assert_eq!(g.keys().unwrap()[0].null_count(), 1);
        }
    }
}
