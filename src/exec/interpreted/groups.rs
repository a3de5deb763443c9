//! Vectorized group-id assignment: maps the key tuples of a batch to dense ids (used by the
//! aggregate, by DISTINCT and by the join's build side).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use arrow::array::{new_empty_array, Array, ArrayRef, ArrowPrimitiveType, AsArray};
use arrow::compute::interleave;
use arrow::datatypes::{DataType, Date32Type, Int16Type, Int32Type, Int64Type, Int8Type};
use arrow::row::{RowConverter, SortField};

use crate::error::{KilnError, Result};

/// A cheap multiplicative hash with a final avalanche (plain Fx hashes give equal low bits
/// to keys that differ only in high bits, which the table's bucket index uses).
#[derive(Default, Clone, Copy)]
pub(crate) struct FastHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl FastHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
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
        // splitmix64's finalizer
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

enum Table {
    /// One integer-like key: hash the value itself.
    Int { map: FastMap<i64, u32>, null: Option<u32> },
    /// Several short keys (small integers, strings) packed into 16 bytes per row; becomes
    /// `Rows` the first time a row does not fit.
    Packed { map: FastMap<u128, u32> },
    /// Any keys: hash their arrow_row encoding.
    Rows { converter: RowConverter, map: FastMap<Box<[u8]>, u32> },
}

/// Key types the packed path encodes: fixed-width up to 4 bytes, and strings.
fn packable(dt: &DataType) -> bool {
    matches!(dt, DataType::Boolean | DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Date32 | DataType::Utf8)
}

/// Packs the key tuple of each selected row (`rows`, or all `n` rows) into a u128: a byte of
/// null flags, then per key its 4 value bytes or a string's length byte and bytes. The encoding
/// is prefix-free for a fixed list of types, so equal u128s mean equal tuples. None if some row
/// does not fit. Works column by column so each array is downcast once.
fn pack_rows(keys: &[ArrayRef], rows: Option<&[u32]>, n: usize, out: &mut Vec<u128>) -> Option<()> {
    let count = rows.map_or(n, |r| r.len());
    let row_at = |j: usize| -> usize {
        match rows {
            Some(r) => r[j] as usize,
            None => j,
        }
    };
    out.clear();
    out.resize(count, 0);
    let mut used = vec![8u32; count];
    for (k, arr) in keys.iter().enumerate() {
        let nulls = arr.nulls().filter(|n| n.null_count() > 0);
        match arr.data_type() {
            DataType::Utf8 => {
                let s = arr.as_string::<i32>();
                let (offsets, data) = (s.value_offsets(), s.value_data());
                for j in 0..count {
                    let row = row_at(j);
                    if nulls.is_some_and(|n| n.is_null(row)) {
                        out[j] |= 1u128 << k;
                        continue;
                    }
                    let (start, end) = (*offsets.get(row)? as usize, *offsets.get(row + 1)? as usize);
                    let bytes = data.get(start..end)?;
                    let width = bytes.len() as u32 + 1;
                    if bytes.len() > 14 || used[j] + width * 8 > 128 {
                        return None;
                    }
                    let mut v = bytes.len() as u128;
                    for (i, b) in bytes.iter().enumerate() {
                        v |= (*b as u128) << (8 * (i + 1));
                    }
                    out[j] |= v << used[j];
                    used[j] += width * 8;
                }
            }
            DataType::Boolean => {
                let a = arr.as_boolean();
                for j in 0..count {
                    let row = row_at(j);
                    if nulls.is_some_and(|n| n.is_null(row)) {
                        out[j] |= 1u128 << k;
                    } else {
                        if used[j] + 8 > 128 {
                            return None;
                        }
                        out[j] |= (a.value(row) as u128) << used[j];
                        used[j] += 8;
                    }
                }
            }
            DataType::Int8 => pack_ints(arr.as_primitive::<Int8Type>().values(), k, nulls, count, &row_at, out, &mut used)?,
            DataType::Int16 => pack_ints(arr.as_primitive::<Int16Type>().values(), k, nulls, count, &row_at, out, &mut used)?,
            DataType::Int32 => pack_ints(arr.as_primitive::<Int32Type>().values(), k, nulls, count, &row_at, out, &mut used)?,
            DataType::Date32 => pack_ints(arr.as_primitive::<Date32Type>().values(), k, nulls, count, &row_at, out, &mut used)?,
            _ => return None,
        }
    }
    Some(())
}

/// Packs 4-byte integer keys (see `pack_rows`).
fn pack_ints<T: Copy + Into<i32>>(
    values: &[T],
    k: usize,
    nulls: Option<&arrow::buffer::NullBuffer>,
    count: usize,
    row_at: &impl Fn(usize) -> usize,
    out: &mut [u128],
    used: &mut [u32],
) -> Option<()> {
    for j in 0..count {
        let row = row_at(j);
        if nulls.is_some_and(|n| n.is_null(row)) {
            out[j] |= 1u128 << k;
        } else {
            if used[j] + 32 > 128 {
                return None;
            }
            out[j] |= ((*values.get(row)?).into() as u32 as u128) << used[j];
            used[j] += 32;
        }
    }
    Some(())
}

/// Assigns dense group ids (0, 1, ...) to distinct key tuples, NULL equal to NULL.
pub(crate) struct Grouper {
    table: Table,
    types: Vec<DataType>,
    /// Key arrays of every pushed batch, kept to materialize group keys with `interleave`.
    batches: Vec<Vec<ArrayRef>>,
    /// (batch, row) where each group was first seen.
    first: Vec<(usize, usize)>,
    /// Scratch space of the packed path.
    packed: Vec<u128>,
}

/// True for types the single-integer fast path reads.
fn int_like(dt: &DataType) -> bool {
    matches!(dt, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Date32)
}

/// Calls `f(row, value)` for every row of an integer-like array.
fn for_each_int(arr: &dyn Array, f: impl FnMut(usize, Option<i64>)) -> Result<()> {
    fn go<T: ArrowPrimitiveType>(arr: &dyn Array, mut f: impl FnMut(usize, Option<i64>))
    where
        T::Native: Into<i64>,
    {
        let a = arr.as_primitive::<T>();
        let values = a.values();
        if a.null_count() == 0 {
            for (i, v) in values.iter().enumerate() {
                f(i, Some((*v).into()));
            }
        } else {
            for (i, v) in values.iter().enumerate() {
                f(i, a.is_valid(i).then(|| (*v).into()));
            }
        }
    }
    match arr.data_type() {
        DataType::Int8 => go::<Int8Type>(arr, f),
        DataType::Int16 => go::<Int16Type>(arr, f),
        DataType::Int32 => go::<Int32Type>(arr, f),
        DataType::Date32 => go::<Date32Type>(arr, f),
        DataType::Int64 => go::<Int64Type>(arr, f),
        other => return Err(KilnError::internal(format!("grouping key of type {other} where an integer was planned"))),
    }
    Ok(())
}

impl Grouper {
    /// A grouper for keys of these types (at least one).
    pub fn new(types: &[DataType]) -> Result<Grouper> {
        let table = if types.len() == 1 && int_like(&types[0]) {
            Table::Int { map: FastMap::default(), null: None }
        } else if types.len() <= 8 && types.iter().all(packable) {
            Table::Packed { map: FastMap::default() }
        } else {
            let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
            Table::Rows { converter: RowConverter::new(fields)?, map: FastMap::default() }
        };
        Ok(Grouper { table, types: types.to_vec(), batches: vec![], first: vec![], packed: vec![] })
    }

    pub fn num_groups(&self) -> usize {
        self.first.len()
    }

    /// Assigns a group id to every row of `keys` (one array per key), new ids to new tuples.
    pub fn push(&mut self, keys: Vec<ArrayRef>, ids: &mut Vec<u32>) -> Result<()> {
        self.push_selected(keys, None, ids)
    }

    /// As `push`, for the rows `selection` lists only (all rows when None): `ids[j]` is the
    /// group of row `selection[j]`.
    pub fn push_selected(&mut self, keys: Vec<ArrayRef>, selection: Option<&[u32]>, ids: &mut Vec<u32>) -> Result<()> {
        ids.clear();
        let b = self.batches.len();
        let n = keys.first().map_or(0, |k| k.len());
        let rows = || -> Box<dyn Iterator<Item = usize> + '_> {
            match selection {
                Some(s) => Box::new(s.iter().map(|r| *r as usize)),
                None => Box::new(0..n),
            }
        };
        if let Table::Packed { .. } = &self.table {
            let mut packed = std::mem::take(&mut self.packed);
            let fits = pack_rows(&keys, selection, n, &mut packed).is_some();
            if !fits {
                self.to_rows()?;
            } else if let Table::Packed { map } = &mut self.table {
                let first = &mut self.first;
                ids.reserve(packed.len());
                for (j, p) in packed.iter().enumerate() {
                    let row = selection.map_or(j, |s| s[j] as usize);
                    let id = *map.entry(*p).or_insert_with(|| {
                        first.push((b, row));
                        (first.len() - 1) as u32
                    });
                    ids.push(id);
                }
            }
            self.packed = packed;
            if fits {
                self.batches.push(keys);
                return Ok(());
            }
        }
        let first = &mut self.first;
        match &mut self.table {
            Table::Int { map, null } => {
                let selected: Vec<bool> = match selection {
                    Some(s) => {
                        let mut m = vec![false; n];
                        s.iter().for_each(|r| m[*r as usize] = true);
                        m
                    }
                    None => vec![],
                };
                for_each_int(keys[0].as_ref(), |row, v| {
                    if selection.is_some() && !selected[row] {
                        return;
                    }
                    let id = match v {
                        Some(v) => *map.entry(v).or_insert_with(|| {
                            first.push((b, row));
                            (first.len() - 1) as u32
                        }),
                        None => *null.get_or_insert_with(|| {
                            first.push((b, row));
                            (first.len() - 1) as u32
                        }),
                    };
                    ids.push(id);
                })?;
            }
            Table::Rows { converter, map } => {
                let encoded = converter.convert_columns(&keys)?;
                for row in rows() {
                    let r = encoded.row(row);
                    let id = match map.get(r.as_ref()) {
                        Some(id) => *id,
                        None => {
                            first.push((b, row));
                            let id = (first.len() - 1) as u32;
                            map.insert(r.as_ref().into(), id);
                            id
                        }
                    };
                    ids.push(id);
                }
            }
            Table::Packed { .. } => return Err(KilnError::internal("packed grouping after switching to rows")),
        }
        self.batches.push(keys);
        Ok(())
    }

    /// Leaves the packed path: re-encodes the groups seen so far as arrow rows.
    fn to_rows(&mut self) -> Result<()> {
        let fields = self.types.iter().map(|t| SortField::new(t.clone())).collect();
        let converter = RowConverter::new(fields)?;
        let mut map: FastMap<Box<[u8]>, u32> = FastMap::default();
        if !self.first.is_empty() {
            let keys = self.keys()?;
            let rows = converter.convert_columns(&keys)?;
            for (id, r) in rows.iter().enumerate() {
                map.insert(r.as_ref().into(), id as u32);
            }
        }
        self.table = Table::Rows { converter, map };
        Ok(())
    }

    /// The key columns of all groups, in group id order.
    pub fn keys(&self) -> Result<Vec<ArrayRef>> {
        (0..self.types.len())
            .map(|c| {
                if self.first.is_empty() {
                    return Ok(new_empty_array(&self.types[c]));
                }
                let arrays: Vec<&dyn Array> = self.batches.iter().map(|b| b[c].as_ref()).collect();
                Ok(interleave(&arrays, &self.first)?)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::interpreted::test_util::*;

    #[test]
    fn packed_keys_group_like_rows_and_survive_a_long_string() {
        let a = strs(&[Some("A"), Some("N"), Some("A"), None, Some("N")]);
        let b = strs(&[Some("F"), Some("O"), Some("F"), Some("F"), Some("O")]);
        let mut g = Grouper::new(&[DataType::Utf8, DataType::Utf8]).unwrap();
        assert!(matches!(g.table, Table::Packed { .. }));
        let mut ids = vec![];
        g.push_selected(vec![a.clone(), b.clone()], Some(&[0, 1, 2, 3]), &mut ids).unwrap();
        assert_eq!(ids, vec![0, 1, 0, 2]);
        // A key longer than the packed budget switches to row encoding, keeping the ids.
        let long = strs(&[Some("a string far too long to pack"), Some("A")]);
        let f = strs(&[Some("F"), Some("F")]);
        g.push(vec![long, f], &mut ids).unwrap();
        assert!(matches!(g.table, Table::Rows { .. }));
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
