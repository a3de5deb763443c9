//! The hash table of a hash join's build side, laid out for generated code and shared with the
//! interpreter: open addressing over flat arrays, so generated code can hash, probe and compare
//! keys inline, and the interpreted join probes the very same table from Rust.
//!
//! - `slots`: a power of two of at least twice the build rows; each `u64` is the hash's high 32
//!   bits (a tag) over `row + 1` of the first build row of one key (0: empty), with bit 31 set
//!   when more rows have that key (a unique key's match then reads no `next`). Linear probing.
//!   With one integer-like key, each slot is followed by its key (16 bytes a slot), so a probe
//!   compares the key on the slot's cache line.
//! - `next`: per build row, the next row with the same key (`END` at the chain's end), in
//!   build order.
//! - keys in flat arrays per key column: one `i64` per row for integer-like keys (ints, dates,
//!   booleans, decimals up to 18 digits, doubles as normalized bits), or Arrow-style offsets,
//!   bytes and a 4-byte prefix per row for strings (other types as their arrow row encoding).
//!
//! - `bloom`: one bit per hash (its tag bits) over 16 bits per build row, for build sides up
//!   to `BLOOM_ROWS` rows (else one all-ones word): generated code tests a stream row's bit
//!   in the stage's filter, without branches, so rows whose key no build row has leave the
//!   stage before the probe loop's unpredictable branches.
//!
//! Rows with a NULL key are never inserted: NULL never matches.

use std::borrow::Cow;

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::*;
use arrow::row::{RowConverter, SortField};

use crate::common::hash::{finish, mix};
use crate::error::{KilnError, Result};

/// End of a chain in `next`.
pub const END: u32 = u32::MAX;

/// In a slot: more than one build row has the slot's key.
pub const MULTI: u64 = 1 << 31;

/// In a slot: the bits of `row + 1`.
pub const ROW_BITS: u64 = MULTI - 1;

/// The key word of a string (or encoded) key: a hash of its bytes.
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = mix(h, u64::from_le_bytes(w));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = mix(h, u64::from_le_bytes(w));
    }
    finish(h)
}

/// The key word of a double: -0.0 as 0.0 and every NaN as one NaN (Spark normalizes join keys).
#[inline]
pub fn double_bits(v: f64) -> i64 {
    if v.is_nan() {
        f64::NAN.to_bits() as i64
    } else {
        (v + 0.0).to_bits() as i64
    }
}

/// The first up-to-4 bytes of a key, little-endian, zero padded.
#[inline]
fn prefix_of(b: &[u8]) -> u32 {
    let mut w = [0u8; 4];
    let n = b.len().min(4);
    w[..n].copy_from_slice(&b[..n]);
    u32::from_le_bytes(w)
}

/// One key column's values, one per row.
pub enum KeyData<'a> {
    /// Integer-like values as i64.
    Int(Cow<'a, [i64]>),
    /// Byte strings: Arrow offsets (rows + 1), the bytes, and each row's 4-byte prefix (build
    /// side only; empty on the probe side).
    Bytes { offsets: Cow<'a, [i32]>, data: Cow<'a, [u8]>, prefix: Vec<u32> },
}

impl KeyData<'_> {
    fn bytes(&self, row: usize) -> &[u8] {
        match self {
            KeyData::Bytes { offsets, data, .. } => &data[offsets[row] as usize..offsets[row + 1] as usize],
            KeyData::Int(_) => &[],
        }
    }
    fn word(&self, row: usize) -> u64 {
        match self {
            KeyData::Int(v) => v[row] as u64,
            KeyData::Bytes { .. } => hash_bytes(self.bytes(row)),
        }
    }
    fn into_owned(self) -> KeyData<'static> {
        match self {
            KeyData::Int(v) => KeyData::Int(Cow::Owned(v.into_owned())),
            KeyData::Bytes { offsets, data, prefix } => KeyData::Bytes { offsets: Cow::Owned(offsets.into_owned()), data: Cow::Owned(data.into_owned()), prefix },
        }
    }
}

/// True when the table keeps the key beside each slot: one integer-like key.
pub fn inline_key(types: &[DataType]) -> bool {
    matches!(types, [t] if int_key(t))
}

/// True for key types that generated code reads as one i64 word (the table's fast layout).
pub fn int_key(t: &DataType) -> bool {
    matches!(t, DataType::Boolean | DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Date32 | DataType::Float64)
        || matches!(t, DataType::Decimal128(p, _) if *p <= 18)
}

fn ints<T: ArrowPrimitiveType>(a: &dyn Array, f: impl Fn(T::Native) -> i64) -> Vec<i64> {
    a.as_primitive::<T>().values().iter().map(|v| f(*v)).collect()
}

/// A key array's values in the table's form (borrowed where the layout is Arrow's own).
pub fn key_data(a: &ArrayRef) -> Result<KeyData<'_>> {
    let v = match a.data_type() {
        DataType::Int64 => KeyData::Int(Cow::Borrowed(a.as_primitive::<Int64Type>().values().as_ref())),
        DataType::Int32 => KeyData::Int(Cow::Owned(ints::<Int32Type>(a, |v| v as i64))),
        DataType::Date32 => KeyData::Int(Cow::Owned(ints::<Date32Type>(a, |v| v as i64))),
        DataType::Int16 => KeyData::Int(Cow::Owned(ints::<Int16Type>(a, |v| v as i64))),
        DataType::Int8 => KeyData::Int(Cow::Owned(ints::<Int8Type>(a, |v| v as i64))),
        DataType::Float64 => KeyData::Int(Cow::Owned(ints::<Float64Type>(a, double_bits))),
        DataType::Decimal128(p, _) if *p <= 18 => KeyData::Int(Cow::Owned(ints::<Decimal128Type>(a, |v| v as i64))),
        DataType::Boolean => {
            let b = a.as_boolean();
            KeyData::Int(Cow::Owned((0..b.len()).map(|i| b.value(i) as i64).collect()))
        }
        DataType::Utf8 => {
            let s = a.as_string::<i32>();
            KeyData::Bytes { offsets: Cow::Borrowed(s.value_offsets()), data: Cow::Borrowed(s.value_data()), prefix: vec![] }
        }
        // Any other type: its arrow row encoding, compared as bytes.
        t => {
            let converter = RowConverter::new(vec![SortField::new(t.clone())])?;
            let rows = converter.convert_columns(std::slice::from_ref(a))?;
            let mut offsets = Vec::with_capacity(rows.num_rows() + 1);
            let mut data = vec![];
            offsets.push(0i32);
            for r in rows.iter() {
                data.extend_from_slice(r.as_ref());
                offsets.push(i32::try_from(data.len()).map_err(|_| KilnError::internal("join keys over 2 GiB"))?);
            }
            KeyData::Bytes { offsets: Cow::Owned(offsets), data: Cow::Owned(data), prefix: vec![] }
        }
    };
    Ok(v)
}

/// The rows where every key is valid, as a bitmap (None: all rows).
fn valid_rows(keys: &[ArrayRef]) -> Option<arrow::buffer::NullBuffer> {
    keys.iter().fold(None, |acc, k| arrow::buffer::NullBuffer::union(acc.as_ref(), k.logical_nulls().as_ref()))
}

/// The hash of each row's keys (see the module notes).
fn hashes(keys: &[KeyData], n: usize) -> Vec<u64> {
    let mut h = vec![0u64; n];
    for k in keys {
        match k {
            KeyData::Int(v) => h.iter_mut().zip(v.iter()).for_each(|(h, v)| *h = mix(*h, *v as u64)),
            KeyData::Bytes { .. } => h.iter_mut().enumerate().for_each(|(r, h)| *h = mix(*h, k.word(r))),
        }
    }
    h.iter_mut().for_each(|h| *h = finish(*h));
    h
}

/// How many rows ahead of its insertion a build row's home slot is prefetched.
const PREFETCH_AHEAD: usize = 16;

/// A join's build-side hash table (see the module notes).
pub struct JoinTable {
    slots: Vec<u64>,
    mask: u64,
    /// Words per slot: 2 when the key sits beside it (`inline_key`), else 1.
    width: usize,
    next: Vec<u32>,
    keys: Vec<KeyData<'static>>,
    types: Vec<DataType>,
    rows: usize,
    /// Some build row has a NULL key (a null-aware anti join then keeps no row).
    null_keys: bool,
    /// The Bloom bits (see the module notes) and the mask of a bit's index.
    bloom: Vec<u64>,
    bloom_mask: u64,
}

/// The largest build side that gets a Bloom filter (2 MiB of bits at this size: beyond, its
/// test would miss the caches as the probe does).
pub const BLOOM_ROWS: usize = 1 << 20;

/// The Bloom bit of a row hash: its index, from the tag bits (the slot comes from the low ones).
#[inline]
pub fn bloom_bit(h: u64, mask: u64) -> u64 {
    (h >> 32) & mask
}

impl JoinTable {
    /// Inserts every row of `keys` (one array per key column) whose keys are all non-NULL.
    pub fn build(keys: &[ArrayRef]) -> Result<JoinTable> {
        let rows = keys.first().map_or(0, |k| k.len());
        if rows as u64 >= ROW_BITS {
            return Err(KilnError::internal(format!("a join build side of {rows} rows")));
        }
        let types: Vec<DataType> = keys.iter().map(|k| k.data_type().clone()).collect();
        let width = if inline_key(&types) { 2 } else { 1 };
        let data: Vec<KeyData<'static>> = keys
            .iter()
            .map(|k| Ok(key_data(k)?.into_owned()))
            .collect::<Result<_>>()?;
        let capacity = (rows * 2).next_power_of_two().max(16);
        let valid = valid_rows(keys);
        let null_keys = valid.as_ref().is_some_and(|v| v.null_count() > 0);
        let bloom_on = rows <= BLOOM_ROWS;
        let bits = if bloom_on { (rows * 16).next_power_of_two().max(64) } else { 64 };
        let mut t = JoinTable {
            slots: vec![0; capacity * width],
            mask: capacity as u64 - 1,
            width,
            next: vec![END; rows],
            keys: data,
            types,
            rows,
            null_keys,
            bloom: vec![if bloom_on { 0 } else { u64::MAX }; bits / 64],
            bloom_mask: bits as u64 - 1,
        };
        t.fill_prefixes();
        let h = hashes(&t.keys, rows);
        // Inserted last row first, each prepended to its key's chain: chains run in build order.
        for row in (0..rows).rev() {
            // The slot a few rows on is fetched while this row is placed: each insertion
            // otherwise waits for its own cache miss.
            if let Some(ahead) = row.checked_sub(PREFETCH_AHEAD) {
                t.prefetch(std::iter::once((h[ahead] & t.mask) as usize * width));
            }
            if valid.as_ref().is_some_and(|v| v.is_null(row)) {
                continue;
            }
            let h = h[row];
            let bit = bloom_bit(h, t.bloom_mask);
            t.bloom[(bit >> 6) as usize] |= 1 << (bit & 63);
            let mut i = h & t.mask;
            loop {
                let at = i as usize * width;
                let s = t.slots[at];
                let head = ((s & ROW_BITS) as u32).wrapping_sub(1);
                if s == 0 || ((s ^ h) >> 32 == 0 && t.same_build_keys(head as usize, row)) {
                    let multi = if s != 0 {
                        t.next[row] = head;
                        MULTI
                    } else {
                        0
                    };
                    t.slots[at] = (h & !0xFFFF_FFFF) | multi | (row as u64 + 1);
                    if let (2, Some(KeyData::Int(v))) = (width, t.keys.first()) {
                        t.slots[at + 1] = v[row] as u64;
                    }
                    break;
                }
                i = (i + 1) & t.mask;
            }
        }
        Ok(t)
    }

    fn fill_prefixes(&mut self) {
        let rows = self.rows;
        for k in &mut self.keys {
            if let KeyData::Bytes { offsets, data, prefix } = k {
                *prefix = (0..rows).map(|r| prefix_of(&data[offsets[r] as usize..offsets[r + 1] as usize])).collect();
            }
        }
    }

    fn same_build_keys(&self, a: usize, b: usize) -> bool {
        self.keys.iter().all(|k| match k {
            KeyData::Int(v) => v[a] == v[b],
            KeyData::Bytes { .. } => k.bytes(a) == k.bytes(b),
        })
    }

    /// At least [`JoinTable::memory_size`] of a table over `rows` rows and `keys` key columns
    /// (counted at eight bytes a key): what a join holds for it before it builds it.
    pub fn bytes_for(rows: usize, keys: usize) -> u64 {
        let capacity = (rows * 2).next_power_of_two().max(16);
        let bits = if rows <= BLOOM_ROWS { (rows * 16).next_power_of_two().max(64) } else { 64 };
        (capacity * 2 * 8 + rows * 4 + bits / 8 + rows * keys * 8) as u64
    }

    /// Bytes the table holds beyond the build rows: slots, chains and its copy of the keys.
    pub fn memory_size(&self) -> u64 {
        let keys: usize = self
            .keys
            .iter()
            .map(|k| match k {
                KeyData::Int(v) => v.len() * 8,
                KeyData::Bytes { offsets, data, prefix } => offsets.len() * 4 + data.len() + prefix.len() * 4,
            })
            .sum();
        (self.slots.len() * 8 + self.next.len() * 4 + self.bloom.len() * 8 + keys) as u64
    }

    /// Build rows, those with a NULL key included.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// True when some build row has a NULL key.
    pub fn has_null_key(&self) -> bool {
        self.null_keys
    }

    /// The key types, as built.
    pub fn key_types(&self) -> &[DataType] {
        &self.types
    }

    /// The next build row with the same key as `row` (`END` after the last).
    #[inline]
    pub fn next(&self, row: u32) -> u32 {
        self.next[row as usize]
    }

    /// For every probe row, the first build row with equal keys (`END`: none, or a NULL key).
    pub fn probe(&self, keys: &[ArrayRef]) -> Result<Vec<u32>> {
        let n = keys.first().map_or(0, |k| k.len());
        let data = keys.iter().map(key_data).collect::<Result<Vec<_>>>()?;
        let valid = valid_rows(keys);
        let h = hashes(&data, n);
        let mut heads = Vec::with_capacity(n);
        for (p, h) in h.iter().enumerate() {
            if valid.as_ref().is_some_and(|v| v.is_null(p)) {
                heads.push(END);
                continue;
            }
            let mut i = h & self.mask;
            let head = loop {
                let at = i as usize * self.width;
                let s = self.slots[at];
                if s == 0 {
                    break END;
                }
                let b = ((s & ROW_BITS) as u32).wrapping_sub(1);
                let inline_match = || match (self.width, data.first()) {
                    (2, Some(KeyData::Int(pv))) => self.slots[at + 1] as i64 == pv[p],
                    _ => false,
                };
                if (s ^ h) >> 32 == 0
                    && (self.width == 2 && inline_match()
                        || self.width == 1
                            && self.keys.iter().zip(&data).all(|(k, d)| match (k, d) {
                        (KeyData::Int(bv), KeyData::Int(pv)) => bv[b as usize] == pv[p],
                                _ => k.bytes(b as usize) == d.bytes(p),
                            }))
                {
                    break b;
                }
                i = (i + 1) & self.mask;
            };
            heads.push(head);
        }
        Ok(heads)
    }

    /// Bytes of the slots.
    pub fn slot_bytes(&self) -> usize {
        self.slots.len() * 8
    }

    /// Asks the CPU to fetch the home slot of each of `rows` (of `keys`, the probe side's key
    /// columns; None: every row) into its caches, without waiting: the probe that follows finds
    /// them there, where a probe a row at a time waits for each miss in turn.
    pub fn prefetch_slots(&self, keys: &[ArrayRef], rows: Option<&[u32]>) -> Result<()> {
        let data = keys.iter().map(key_data).collect::<Result<Vec<_>>>()?;
        match rows {
            Some(rows) => self.prefetch(self.home_slots(&data, rows.iter().map(|r| *r as usize))),
            None => self.prefetch(self.home_slots(&data, 0..keys.first().map_or(0, |k| k.len()))),
        }
        Ok(())
    }

    fn prefetch(&self, slots: impl Iterator<Item = usize>) {
        for at in slots {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch reads nothing, and `at` lies in the slots (masked).
            unsafe {
                std::arch::x86_64::_mm_prefetch(self.slots.as_ptr().add(at) as *const i8, std::arch::x86_64::_MM_HINT_T0)
            };
            #[cfg(not(target_arch = "x86_64"))]
            let _ = at;
        }
    }

    /// Where in `slots` each of `rows`' probe starts; a row whose keys hash as the row
    /// before's (keys in runs, as lineitem's by order) is left out.
    fn home_slots<'d>(&'d self, data: &'d [KeyData], rows: impl Iterator<Item = usize> + 'd) -> impl Iterator<Item = usize> + 'd {
        let mut last = None;
        rows.filter_map(move |r| {
            let h = data.iter().fold(0, |h, k| mix(h, k.word(r)));
            if last == Some(h) {
                return None;
            }
            last = Some(h);
            Some((finish(h) & self.mask) as usize * self.width)
        })
    }

    /// The pointers generated code reads: slots, mask, next, the Bloom bits and their index
    /// mask, then per key column three words
    /// (an integer key's values and two zeros; a string key's offsets, bytes and prefixes).
    /// They stay valid while the table lives.
    pub fn pointers(&self) -> Vec<u64> {
        let mut p = vec![self.slots.as_ptr() as u64, self.mask, self.next.as_ptr() as u64, self.bloom.as_ptr() as u64, self.bloom_mask];
        for k in &self.keys {
            match k {
                KeyData::Int(v) => p.extend([v.as_ptr() as u64, 0, 0]),
                KeyData::Bytes { offsets, data, prefix } => p.extend([offsets.as_ptr() as u64, data.as_ptr() as u64, prefix.as_ptr() as u64]),
            }
        }
        p
    }
}

/// Words `JoinTable::pointers` gives before the key columns', and per key column.
pub const TABLE_WORDS: usize = 5;
pub const KEY_WORDS: usize = 3;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::Int64Array;

    use super::*;

    fn bit_set(t: &JoinTable, h: u64) -> bool {
        let bit = bloom_bit(h, t.bloom_mask);
        t.bloom[(bit >> 6) as usize] >> (bit & 63) & 1 == 1
    }

    #[test]
    fn every_build_key_has_its_bloom_bit_and_few_others_do() {
        let keys: ArrayRef = Arc::new(Int64Array::from_iter_values((0..1000).map(|k| k * 7)));
        let t = JoinTable::build(&[keys.clone()]).expect("build");
        let h = hashes(&[key_data(&keys).expect("keys")], 1000);
        assert!(h.iter().all(|h| bit_set(&t, *h)), "a build key without its bit: its rows would be filtered out");
        let others: ArrayRef = Arc::new(Int64Array::from_iter_values((0..10_000).map(|k| k * 7 + 3)));
        let h = hashes(&[key_data(&others).expect("keys")], 10_000);
        let passing = h.iter().filter(|h| bit_set(&t, **h)).count();
        // 16 bits a row: about 6 % of absent keys pass.
        assert!(passing < 1_500, "{passing} of 10000 absent keys pass the Bloom test");
    }

    #[test]
    fn prefetched_slots_are_where_probes_start() {
        let keys: ArrayRef = Arc::new(Int64Array::from_iter_values((0..5000).map(|k| k * 13)));
        let t = JoinTable::build(&[keys.clone()]).expect("build");
        // Runs of equal keys, as a sorted stream side has them: one slot a run.
        let stream: ArrayRef = Arc::new(Int64Array::from_iter_values([5, 5, 5, 26, 26, 7, 5]));
        let data = [key_data(&stream).expect("keys")];
        let h = hashes(&data, 7);
        let expected: Vec<usize> = [0, 3, 5, 6].iter().map(|r| (h[*r] & t.mask) as usize * t.width).collect();
        assert_eq!(t.home_slots(&data, 0..7).collect::<Vec<_>>(), expected);
        t.prefetch_slots(&[stream.clone()], Some(&[6, 0, 3])).expect("prefetch");
        t.prefetch_slots(&[stream], None).expect("prefetch");
    }
}
