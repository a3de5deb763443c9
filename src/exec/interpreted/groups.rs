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

/// Marks "no group" in probe results.
pub(crate) const NO_GROUP: u32 = u32::MAX;

enum Table {
    /// One integer-like key: hash the value itself.
    Int { map: FastMap<i64, u32>, null: Option<u32> },
    /// Any keys: hash their arrow_row encoding.
    Rows { converter: RowConverter, map: FastMap<Box<[u8]>, u32> },
}

/// Assigns dense group ids (0, 1, ...) to distinct key tuples, NULL equal to NULL.
pub(crate) struct Grouper {
    table: Table,
    types: Vec<DataType>,
    /// Key arrays of every pushed batch, kept to materialize group keys with `interleave`.
    batches: Vec<Vec<ArrayRef>>,
    /// (batch, row) where each group was first seen.
    first: Vec<(usize, usize)>,
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
        } else {
            let fields = types.iter().map(|t| SortField::new(t.clone())).collect();
            Table::Rows { converter: RowConverter::new(fields)?, map: FastMap::default() }
        };
        Ok(Grouper { table, types: types.to_vec(), batches: vec![], first: vec![] })
    }

    pub fn num_groups(&self) -> usize {
        self.first.len()
    }

    /// Assigns a group id to every row of `keys` (one array per key), new ids to new tuples.
    pub fn push(&mut self, keys: Vec<ArrayRef>, ids: &mut Vec<u32>) -> Result<()> {
        ids.clear();
        let b = self.batches.len();
        let first = &mut self.first;
        match &mut self.table {
            Table::Int { map, null } => {
                for_each_int(keys[0].as_ref(), |row, v| {
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
                let rows = converter.convert_columns(&keys)?;
                for (row, r) in rows.iter().enumerate() {
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
        }
        self.batches.push(keys);
        Ok(())
    }

    /// Looks up the group id of every row of `keys` without adding groups (`NO_GROUP` if absent).
    pub fn probe(&self, keys: &[ArrayRef], ids: &mut Vec<u32>) -> Result<()> {
        ids.clear();
        match &self.table {
            Table::Int { map, null } => for_each_int(keys[0].as_ref(), |_, v| {
                let id = match v {
                    Some(v) => map.get(&v).copied(),
                    None => *null,
                };
                ids.push(id.unwrap_or(NO_GROUP));
            })?,
            Table::Rows { converter, map } => {
                let rows = converter.convert_columns(keys)?;
                ids.extend(rows.iter().map(|r| map.get(r.as_ref()).copied().unwrap_or(NO_GROUP)));
            }
        }
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
    fn groups_ints_and_strings_with_nulls() {
        for keys in [ints(&[Some(1), None, Some(1), Some(2), None]), strs(&[Some("a"), None, Some("a"), Some("b"), None])] {
            let mut g = Grouper::new(&[keys.data_type().clone()]).unwrap();
            let mut ids = vec![];
            g.push(vec![keys.clone()], &mut ids).unwrap();
            assert_eq!(ids, vec![0, 1, 0, 2, 1]);
            assert_eq!(g.num_groups(), 3);
            let mut probed = vec![];
            g.probe(&[keys], &mut probed).unwrap();
            assert_eq!(probed, ids);
            assert_eq!(g.keys().unwrap()[0].null_count(), 1);
        }
    }
}
