//! The group-by hash table both execution modes share: open addressing (linear probing) over
//! flat arrays — a group id and a word (the key itself, or the key's hash) per slot — and one
//! fixed-width key row per group. Generated code probes and inserts through the `#[repr(C)]`
//! [`Header`] (see `codegen/aggregate.rs`), calling Rust only to grow the table or, on the
//! general path, to insert a new group; the interpreter's `Grouper` runs the same table from
//! Rust over whole columns.
//!
//! Two layouts:
//! - *int*: one integer-like key (int, bigint, date, decimal up to 18 digits, as an i64). A slot's
//!   word is the key; a group's row is the key; the NULL key has its own group id in the header.
//! - *general*: any number of keys. A group's row is a NULL mask word, then per key one word
//!   (integers, booleans and decimals up to 18 digits as i64, doubles as normalized bits) or two
//!   (wide decimals; strings as `len | 4-byte prefix << 32` and a pointer to the bytes, which
//!   the table copies into its own arena). A slot's word is the row's hash.

use std::sync::Arc;

use arrow::array::{
    new_empty_array, Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Float64Array, PrimitiveArray, StringArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::*;

use crate::common::hash::{finish, mix};
use crate::error::{KilnError, Result};

/// A slot without a group.
pub const EMPTY: u32 = u32::MAX;
/// `Header::null_gid` before the NULL key has a group.
pub const NO_NULL_GROUP: u64 = u64::MAX;

/// Byte offsets of the header fields generated code reads and writes.
pub mod offsets {
    pub const MASK: i32 = 0;
    pub const SLOT_GIDS: i32 = 8;
    pub const SLOT_WORDS: i32 = 16;
    pub const GROUPS: i32 = 24;
    pub const GROW_AT: i32 = 32;
    pub const ROWS: i32 = 40;
    pub const PAYLOAD: i32 = 48;
    pub const NULL_GID: i32 = 56;
    pub const SCRATCH: i32 = 64;
}

/// What generated code sees of a table. Pointers stay valid until the next growth, which only
/// `grow` / `insert_scratch` do.
#[repr(C)]
pub struct Header {
    /// Slots - 1 (a power of two minus one).
    pub mask: u64,
    pub slot_gids: *mut u32,
    pub slot_words: *mut u64,
    /// Groups so far.
    pub groups: u64,
    /// The group count at which the table must grow (slots half full or rows full).
    pub grow_at: u64,
    /// Key rows, `row_words` u64s per group.
    pub rows: *mut u64,
    /// Per-group bytes for the caller (accumulators), zeroed, `stride` bytes per group.
    pub payload: *mut u8,
    /// Int layout: the NULL key's group.
    pub null_gid: u64,
    /// General layout: the probing row, written by generated code before `insert_scratch`.
    pub scratch: *mut u64,
}

/// How one key is stored in a general row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// One word: a sign- (or zero-) extended integer, boolean, date or short decimal.
    Int,
    /// One word: the bits of a double, -0.0 as 0.0 and every NaN as one NaN (Spark's
    /// NormalizeFloatingNumbers).
    Float,
    /// Two words: an i128 (decimals over 18 digits).
    Wide,
    /// Two words: length | prefix << 32, then the address of the bytes.
    Str,
}

/// The kind of a key of type `t`, None for types the table does not hold.
pub fn key_kind(t: &DataType) -> Option<KeyKind> {
    match t {
        DataType::Boolean | DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Date32 => Some(KeyKind::Int),
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => Some(KeyKind::Int),
        DataType::Decimal128(p, _) if *p <= 18 => Some(KeyKind::Int),
        DataType::Decimal128(..) => Some(KeyKind::Wide),
        DataType::Float64 => Some(KeyKind::Float),
        DataType::Utf8 => Some(KeyKind::Str),
        _ => None,
    }
}

/// True when keys of these types take the int layout.
pub fn int_layout(types: &[DataType]) -> bool {
    matches!(types, [t] if key_kind(t) == Some(KeyKind::Int) && *t != DataType::Boolean)
}

pub const INT_K1: u64 = 0xff51_afd7_ed55_8ccd;

/// The int layout's hash (generated code emits the same instructions).
#[inline]
pub fn hash_int(k: u64) -> u64 {
    let h = (k ^ (k >> 33)).wrapping_mul(INT_K1);
    h ^ (h >> 29)
}

/// Up to 7 bytes (`n` > 0) as one word, with at most two loads: two overlapping 4-byte reads
/// for 4 or more, else the first, middle and last byte. With the length mixed in, equal words
/// mean equal bytes.
#[inline]
pub fn short_word(b: &[u8]) -> u64 {
    let n = b.len();
    if n >= 4 {
        let lo = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let hi = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        lo | (hi << 32)
    } else if n > 0 {
        b[0] as u64 | ((b[n / 2] as u64) << 8) | ((b[n - 1] as u64) << 16)
    } else {
        0
    }
}

/// A string folded into `h`: its `len_prefix` word, then the bytes past the first four in
/// 8-byte little-endian words and a `short_word` tail.
#[inline]
pub fn hash_string(mut h: u64, bytes: &[u8]) -> u64 {
    h = mix(h, len_prefix(bytes));
    if bytes.len() > 4 {
        let mut chunks = bytes[4..].chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = mix(h, u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            h = mix(h, short_word(rest));
        }
    }
    h
}

/// A string's first word in a general row: its length, and its first four bytes (fewer as
/// `short_word` encodes them) above.
#[inline]
pub fn len_prefix(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let p = if n >= 4 { u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64 } else { short_word(bytes) };
    (n as u64 & 0xFFFF_FFFF) | (p << 32)
}

/// A double's word: -0.0 as 0.0, every NaN as the canonical NaN.
#[inline]
pub fn float_word(v: f64) -> u64 {
    if v.is_nan() {
        f64::NAN.to_bits()
    } else if v == 0.0 {
        0
    } else {
        v.to_bits()
    }
}

const ARENA_CHUNK: usize = 1 << 16;

/// The table. `header` comes first, so a pointer to the table is a pointer to its header.
#[repr(C)]
pub struct GroupTable {
    header: Header,
    int: bool,
    types: Vec<DataType>,
    kinds: Vec<KeyKind>,
    /// Word offset of each key in a general row (after the NULL mask word).
    at: Vec<usize>,
    /// The words two equal rows share (all but string addresses), and the string keys' words.
    compared: Vec<usize>,
    strings: Vec<usize>,
    row_words: usize,
    stride: usize,
    slot_gids: Vec<u32>,
    slot_words: Vec<u64>,
    rows: Vec<u64>,
    payload: Vec<u128>,
    /// Groups the rows and payload have room for.
    capacity: usize,
    arena: Vec<Vec<u8>>,
    scratch: Vec<u64>,
}

// The raw pointers point into the table's own vectors.
unsafe impl Send for GroupTable {}
unsafe impl Sync for GroupTable {}

impl GroupTable {
    /// A table for keys of `types` (see `key_kind`), with `stride` payload bytes per group.
    pub fn new(types: &[DataType], stride: usize) -> Result<Box<GroupTable>> {
        let kinds = types
            .iter()
            .map(|t| key_kind(t).ok_or_else(|| KilnError::internal(format!("a group table over keys of type {t}"))))
            .collect::<Result<Vec<_>>>()?;
        let int = int_layout(types);
        let mut at = vec![];
        let mut w = 1;
        for k in &kinds {
            at.push(w);
            w += match k {
                KeyKind::Int | KeyKind::Float => 1,
                KeyKind::Wide | KeyKind::Str => 2,
            };
        }
        let row_words = if int { 1 } else { w };
        let strings: Vec<usize> = kinds.iter().zip(&at).filter(|(k, _)| **k == KeyKind::Str).map(|(_, a)| *a).collect();
        let compared: Vec<usize> = (0..row_words).filter(|i| !strings.iter().any(|a| a + 1 == *i)).collect();
        let null = std::ptr::null_mut();
        let header = Header {
            mask: 0,
            slot_gids: null as *mut u32,
            slot_words: null as *mut u64,
            groups: 0,
            grow_at: 0,
            rows: null as *mut u64,
            payload: null as *mut u8,
            null_gid: NO_NULL_GROUP,
            scratch: null as *mut u64,
        };
        let mut t = Box::new(GroupTable {
            header,
            int,
            types: types.to_vec(),
            kinds,
            at,
            compared,
            strings,
            row_words,
            stride: stride.div_ceil(16) * 16,
            slot_gids: vec![EMPTY; 256],
            slot_words: vec![0; 256],
            rows: vec![0; 64 * row_words],
            payload: vec![0; 64 * stride.div_ceil(16)],
            capacity: 64,
            arena: vec![],
            scratch: vec![0; row_words],
        });
        t.sync();
        Ok(t)
    }

    /// Points the header at the vectors and recomputes when to grow.
    fn sync(&mut self) {
        let h = &mut self.header;
        h.mask = self.slot_gids.len() as u64 - 1;
        h.slot_gids = self.slot_gids.as_mut_ptr();
        h.slot_words = self.slot_words.as_mut_ptr();
        h.rows = self.rows.as_mut_ptr();
        h.payload = self.payload.as_mut_ptr() as *mut u8;
        h.scratch = self.scratch.as_mut_ptr();
        h.grow_at = (self.slot_gids.len() as u64 / 2).min(self.capacity as u64);
    }

    /// The header generated code reads.
    pub fn header_ptr(&mut self) -> *mut Header {
        &mut self.header
    }

    pub fn is_int(&self) -> bool {
        self.int
    }

    pub fn num_groups(&self) -> usize {
        self.header.groups as usize
    }

    /// Bytes the table holds (slots, rows, payload, string arena): its share of the query's
    /// memory budget.
    pub fn memory_size(&self) -> u64 {
        let words = self.slot_words.capacity() + self.rows.capacity() + self.scratch.capacity();
        let arena: usize = self.arena.iter().map(Vec::capacity).sum();
        (self.slot_gids.capacity() * 4 + words * 8 + self.payload.capacity() * 16 + arena) as u64
    }

    /// Bytes the table holds once it has room for `rows` more groups: reserved before a batch
    /// of that many rows runs, so a refused reservation leaves the growth unallocated.
    pub fn memory_size_after(&self, rows: usize) -> u64 {
        let groups = self.num_groups() + rows;
        let (mut capacity, mut slots) = (self.capacity, self.slot_gids.len());
        while groups > capacity {
            capacity *= 2;
        }
        while groups * 2 > slots {
            slots *= 2;
        }
        let grown = (slots * 12 + capacity * (self.row_words * 8 + self.stride)) as u64;
        let now = (self.slot_gids.len() * 12 + self.capacity * (self.row_words * 8 + self.stride)) as u64;
        self.memory_size() + grown.saturating_sub(now)
    }

    /// The payload bytes of every group (`stride` bytes each).
    pub fn payload(&self) -> &[u8] {
        let n = self.num_groups() * self.stride;
        // SAFETY: u128 has no padding; the payload holds `capacity * stride >= n` bytes.
        unsafe { std::slice::from_raw_parts(self.payload.as_ptr() as *const u8, n) }
    }

    /// Makes room for at least one more group: doubles the slots when half full and the rows
    /// and payload when full.
    pub fn grow(&mut self) {
        let groups = self.num_groups();
        if groups + 1 > self.capacity {
            self.capacity *= 2;
            self.rows.resize(self.capacity * self.row_words, 0);
            self.payload.resize(self.capacity * (self.stride / 16), 0);
        }
        if (groups + 1) * 2 > self.slot_gids.len() {
            self.rehash(self.slot_gids.len() * 2);
        }
        self.sync();
    }

    /// Makes room for `groups` groups at once (a final aggregate whose input rows are known):
    /// no growing, and no rehashing, until then.
    pub fn reserve_groups(&mut self, groups: usize) {
        if groups > self.capacity {
            self.capacity = groups.next_power_of_two();
            self.rows.resize(self.capacity * self.row_words, 0);
            self.payload.resize(self.capacity * (self.stride / 16), 0);
        }
        let slots = (groups * 2).next_power_of_two();
        if slots > self.slot_gids.len() {
            self.rehash(slots);
        }
        self.sync();
    }

    /// Moves the slots to a table of `n` slots (a power of two).
    fn rehash(&mut self, n: usize) {
        let mask = n - 1;
        let mut gids = vec![EMPTY; n];
        let mut words = vec![0u64; n];
        for (g, w) in self.slot_gids.iter().zip(&self.slot_words) {
            if *g == EMPTY {
                continue;
            }
            let h = if self.int { hash_int(*w) } else { *w };
            let mut i = h as usize & mask;
            while gids[i] != EMPTY {
                i = (i + 1) & mask;
            }
            gids[i] = *g;
            words[i] = *w;
        }
        self.slot_gids = gids;
        self.slot_words = words;
    }

    /// Forgets every group, keeping the memory: a partial aggregate that emitted its groups
    /// (`kiln.aggregate.partialFlushGroups`) starts again in the same cache-sized table.
    pub fn clear(&mut self) {
        let used = self.num_groups() * self.stride / 16;
        self.payload[..used].fill(0);
        self.slot_gids.fill(EMPTY);
        self.arena.clear();
        self.header.groups = 0;
        self.header.null_gid = NO_NULL_GROUP;
        self.sync();
    }

    /// Copies string bytes into the arena: their address there (stable for the table's life).
    fn intern(&mut self, bytes: &[u8]) -> u64 {
        let fits = self.arena.last().is_some_and(|c| c.capacity() - c.len() >= bytes.len());
        if !fits {
            self.arena.push(Vec::with_capacity(ARENA_CHUNK.max(bytes.len())));
        }
        let Some(chunk) = self.arena.last_mut() else { return 0 };
        let at = chunk.len();
        chunk.extend_from_slice(bytes);
        chunk[at..].as_ptr() as u64
    }

    /// General layout: adds the group whose row is `row` (string words pointing at the caller's
    /// bytes) at the empty slot `slot`, for hash `hash`. Returns its id.
    ///
    /// # Safety
    /// String words of `row` must address `len` readable bytes.
    unsafe fn insert_row(&mut self, row: *const u64, hash: u64, slot: usize) -> u32 {
        let g = self.num_groups();
        let w = self.row_words;
        for i in 0..w {
            // SAFETY: `row` holds `row_words` words (the caller's scratch or candidate row).
            self.rows[g * w + i] = unsafe { *row.add(i) };
        }
        for k in 0..self.kinds.len() {
            if self.kinds[k] == KeyKind::Str {
                let a = g * w + self.at[k];
                let len = (self.rows[a] & 0xFFFF_FFFF) as usize;
                if len <= 4 {
                    self.rows[a + 1] = 0;
                } else {
                    // SAFETY: the caller's string word addresses `len` bytes.
                    let bytes = unsafe { std::slice::from_raw_parts(self.rows[a + 1] as *const u8, len) };
                    self.rows[a + 1] = self.intern(bytes);
                }
            }
        }
        self.slot_gids[slot] = g as u32;
        self.slot_words[slot] = hash;
        self.header.groups += 1;
        if self.header.groups >= self.header.grow_at {
            self.grow();
        }
        g as u32
    }

    /// Whether group `g`'s row equals `row`.
    ///
    /// # Safety
    /// String words of `row` must address `len` readable bytes.
    #[inline(always)]
    unsafe fn row_equals(&self, g: usize, row: &[u64]) -> bool {
        let stored = &self.rows[g * self.row_words..(g + 1) * self.row_words];
        // Equal words are equal keys (a long string's address is the same bytes).
        if stored == row {
            return true;
        }
        if self.strings.is_empty() {
            return false;
        }
        if !self.compared.iter().all(|i| stored[*i] == row[*i]) {
            return false;
        }
        self.strings.iter().all(|&a| {
            let len = (row[a] & 0xFFFF_FFFF) as usize;
            // SAFETY: both words address `len` bytes (the arena's, the caller's).
            len <= 4 || unsafe { std::slice::from_raw_parts((stored[a + 1] as *const u8).add(4), len - 4) == std::slice::from_raw_parts((row[a + 1] as *const u8).add(4), len - 4) }
        })
    }

    /// Int layout: the group of `key` (None: the NULL key), added when `insert`.
    #[inline]
    pub fn find_int(&mut self, key: Option<i64>, insert: bool) -> u32 {
        let Some(k) = key else {
            if self.header.null_gid == NO_NULL_GROUP {
                if !insert {
                    return EMPTY;
                }
                let g = self.num_groups();
                self.rows[g] = 0;
                self.header.null_gid = g as u64;
                self.header.groups += 1;
                if self.header.groups >= self.header.grow_at {
                    self.grow();
                }
            }
            return self.header.null_gid as u32;
        };
        let k = k as u64;
        let mask = self.slot_gids.len() - 1;
        let mut i = hash_int(k) as usize & mask;
        loop {
            let g = self.slot_gids[i];
            if g == EMPTY {
                if !insert {
                    return EMPTY;
                }
                let g = self.num_groups();
                self.rows[g] = k;
                self.slot_gids[i] = g as u32;
                self.slot_words[i] = k;
                self.header.groups += 1;
                if self.header.groups >= self.header.grow_at {
                    self.grow();
                }
                return g as u32;
            }
            if self.slot_words[i] == k {
                return g;
            }
            i = (i + 1) & mask;
        }
    }

    /// General layout: the group of each candidate row (`row_words` words each, with their
    /// hashes), added when `insert` (else `EMPTY` for an unknown row).
    ///
    /// # Safety
    /// String words of the candidates must address `len` readable bytes.
    pub unsafe fn find_rows(&mut self, cand: &[u64], hashes: &[u64], insert: bool, ids: &mut Vec<u32>) {
        let w = self.row_words;
        for (r, &h) in hashes.iter().enumerate() {
            let row = &cand[r * w..(r + 1) * w];
            let mask = self.slot_gids.len() - 1;
            let mut i = h as usize & mask;
            let id = loop {
                let g = self.slot_gids[i];
                if g == EMPTY {
                    if !insert {
                        break EMPTY;
                    }
                    // SAFETY: as the caller promises for `cand`.
                    break unsafe { self.insert_row(row.as_ptr(), h, i) };
                }
                // SAFETY: as the caller promises for `cand`.
                if self.slot_words[i] == h && unsafe { self.row_equals(g as usize, row) } {
                    break g;
                }
                i = (i + 1) & mask;
            };
            ids.push(id);
        }
    }

    /// General layout: the candidate rows and hashes of `rows` (or all rows) of `keys`.
    pub fn encode(&self, keys: &[ArrayRef], rows: Option<&[u32]>, cand: &mut Vec<u64>, hashes: &mut Vec<u64>) -> Result<()> {
        let n = rows.map_or_else(|| keys.first().map_or(0, |k| k.len()), |r| r.len());
        let w = self.row_words;
        cand.clear();
        cand.resize(n * w, 0);
        hashes.clear();
        hashes.resize(n, 0);
        let row_at = |j: usize| rows.map_or(j, |r| r[j] as usize);
        for (k, arr) in keys.iter().enumerate() {
            let a = self.at[k];
            let nulls = arr.logical_nulls().filter(|n| n.null_count() > 0);
            let null_at = |row: usize| nulls.as_ref().is_some_and(|n| n.is_null(row));
            macro_rules! ints {
                ($t:ty) => {{
                    let v = arr.as_primitive::<$t>().values();
                    for j in 0..n {
                        let row = row_at(j);
                        let word = if null_at(row) {
                            cand[j * w] |= 1 << k;
                            0
                        } else {
                            v[row] as i64 as u64
                        };
                        cand[j * w + a] = word;
                        hashes[j] = mix(hashes[j], word);
                    }
                }};
            }
            match arr.data_type() {
                DataType::Int8 => ints!(Int8Type),
                DataType::Int16 => ints!(Int16Type),
                DataType::Int32 => ints!(Int32Type),
                DataType::Int64 => ints!(Int64Type),
                DataType::Date32 => ints!(Date32Type),
                DataType::UInt8 => ints!(UInt8Type),
                DataType::UInt16 => ints!(UInt16Type),
                DataType::UInt32 => ints!(UInt32Type),
                DataType::Decimal128(p, _) if *p <= 18 => ints!(Decimal128Type),
                DataType::Boolean => {
                    let b = arr.as_boolean();
                    for j in 0..n {
                        let row = row_at(j);
                        let word = if null_at(row) {
                            cand[j * w] |= 1 << k;
                            0
                        } else {
                            b.value(row) as u64
                        };
                        cand[j * w + a] = word;
                        hashes[j] = mix(hashes[j], word);
                    }
                }
                DataType::Float64 => {
                    let v = arr.as_primitive::<Float64Type>().values();
                    for j in 0..n {
                        let row = row_at(j);
                        let word = if null_at(row) {
                            cand[j * w] |= 1 << k;
                            0
                        } else {
                            float_word(v[row])
                        };
                        cand[j * w + a] = word;
                        hashes[j] = mix(hashes[j], word);
                    }
                }
                DataType::Decimal128(..) => {
                    let v = arr.as_primitive::<Decimal128Type>().values();
                    for j in 0..n {
                        let row = row_at(j);
                        let x = if null_at(row) {
                            cand[j * w] |= 1 << k;
                            0
                        } else {
                            v[row]
                        };
                        let (lo, hi) = (x as u64, (x >> 64) as u64);
                        cand[j * w + a] = lo;
                        cand[j * w + a + 1] = hi;
                        hashes[j] = mix(mix(hashes[j], lo), hi);
                    }
                }
                DataType::Utf8 => {
                    let s = arr.as_string::<i32>();
                    let (offsets, data) = (s.value_offsets(), s.value_data());
                    for j in 0..n {
                        let row = row_at(j);
                        let bytes: &[u8] = if null_at(row) {
                            cand[j * w] |= 1 << k;
                            &[]
                        } else {
                            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
                            data.get(start..end).ok_or_else(|| KilnError::internal("string offsets past the data"))?
                        };
                        cand[j * w + a] = len_prefix(bytes);
                        // Up to 4 bytes live in the prefix word: no address, so rows compare whole.
                        cand[j * w + a + 1] = if bytes.len() > 4 { bytes.as_ptr() as u64 } else { 0 };
                        hashes[j] = hash_string(hashes[j], bytes);
                    }
                }
                other => return Err(KilnError::internal(format!("a group key of type {other}"))),
            }
        }
        for j in 0..n {
            hashes[j] = finish(mix(hashes[j], cand[j * w]));
        }
        Ok(())
    }

    /// The key columns of every group, in group id order.
    pub fn keys(&self) -> Result<Vec<ArrayRef>> {
        let n = self.num_groups();
        let w = self.row_words;
        (0..self.types.len())
            .map(|k| {
                let t = &self.types[k];
                if n == 0 {
                    return Ok(new_empty_array(t));
                }
                let (word, valid): (Vec<u64>, Vec<bool>) = if self.int {
                    let null = self.header.null_gid;
                    (self.rows[..n].to_vec(), (0..n).map(|g| g as u64 != null).collect())
                } else {
                    let a = self.at[k];
                    ((0..n).map(|g| self.rows[g * w + a]).collect(), (0..n).map(|g| self.rows[g * w] & (1 << k) == 0).collect())
                };
                let nulls = if valid.iter().all(|v| *v) { None } else { Some(NullBuffer::from(valid)) };
                macro_rules! prim {
                    ($t:ty, $n:ty) => {
                        Arc::new(PrimitiveArray::<$t>::new(word.iter().map(|v| *v as i64 as $n).collect::<ScalarBuffer<$n>>(), nulls)) as ArrayRef
                    };
                }
                Ok(match t {
                    DataType::Int8 => prim!(Int8Type, i8),
                    DataType::Int16 => prim!(Int16Type, i16),
                    DataType::Int32 => prim!(Int32Type, i32),
                    DataType::Int64 => prim!(Int64Type, i64),
                    DataType::Date32 => prim!(Date32Type, i32),
                    DataType::UInt8 => prim!(UInt8Type, u8),
                    DataType::UInt16 => prim!(UInt16Type, u16),
                    DataType::UInt32 => prim!(UInt32Type, u32),
                    DataType::Boolean => Arc::new(BooleanArray::new(word.iter().map(|v| *v != 0).collect(), nulls)),
                    DataType::Float64 => Arc::new(Float64Array::new(word.iter().map(|v| f64::from_bits(*v)).collect(), nulls)),
                    DataType::Decimal128(p, s) if *p <= 18 => {
                        Arc::new(Decimal128Array::new(word.iter().map(|v| *v as i64 as i128).collect(), nulls).with_precision_and_scale(*p, *s)?)
                    }
                    DataType::Decimal128(p, s) => {
                        let a = self.at[k];
                        let v: ScalarBuffer<i128> = (0..n).map(|g| (self.rows[g * w + a] as u128 | ((self.rows[g * w + a + 1] as u128) << 64)) as i128).collect();
                        Arc::new(Decimal128Array::new(v, nulls).with_precision_and_scale(*p, *s)?)
                    }
                    DataType::Utf8 => {
                        let a = self.at[k];
                        let mut bytes = vec![];
                        let mut offs = vec![0i32];
                        for g in 0..n {
                            let word = self.rows[g * w + a];
                            let len = (word & 0xFFFF_FFFF) as usize;
                            let p = ((word >> 32) as u32).to_le_bytes();
                            if len == 4 {
                                bytes.extend_from_slice(&p);
                            } else if len > 0 && len < 4 {
                                // short_word: the first, middle and last byte.
                                let b = [p[0], p[1], p[2]];
                                bytes.extend_from_slice(&[b[0], b[1], b[2]][..len]);
                                if len == 2 {
                                    let n = bytes.len();
                                    bytes[n - 1] = b[1];
                                }
                            } else if len > 4 {
                                // SAFETY: a stored string word addresses `len` bytes of the arena.
                                bytes.extend_from_slice(unsafe { std::slice::from_raw_parts(self.rows[g * w + a + 1] as *const u8, len) });
                            }
                            let end = i32::try_from(bytes.len()).map_err(|_| KilnError::internal("group keys past 2 GiB of strings"))?;
                            offs.push(end);
                        }
                        Arc::new(StringArray::try_new(OffsetBuffer::new(offs.into()), bytes.into(), nulls)?)
                    }
                    other => return Err(KilnError::internal(format!("group keys of type {other}"))),
                })
            })
            .collect()
    }
}

/// Grows the table generated code passes (per new group, when `groups` reached `grow_at`):
/// 0, or -1 when it cannot. Never panics.
///
/// # Safety
/// `header` must be the header of a live `GroupTable`.
pub unsafe extern "C" fn kiln_group_grow(header: *mut Header) -> i64 {
    debug_assert!(!header.is_null(), "kiln_group_grow without a table");
    if header.is_null() {
        return -1;
    }
    // SAFETY: the header is the table's first field (repr(C)).
    let table = unsafe { &mut *(header as *mut GroupTable) };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| table.grow())) {
        Ok(()) => 0,
        Err(_) => -1,
    }
}

/// Adds the group whose row generated code wrote to the scratch row, at empty slot `slot`, for
/// hash `hash` (general layout, per new group): its id, or -1. Never panics.
///
/// # Safety
/// `header` must be the header of a live `GroupTable`; the scratch row's string words must
/// address their bytes.
pub unsafe extern "C" fn kiln_group_insert(header: *mut Header, hash: u64, slot: u64) -> i64 {
    debug_assert!(!header.is_null(), "kiln_group_insert without a table");
    if header.is_null() {
        return -1;
    }
    // SAFETY: the header is the table's first field (repr(C)).
    let table = unsafe { &mut *(header as *mut GroupTable) };
    if slot as usize >= table.slot_gids.len() || table.slot_gids[slot as usize] != EMPTY {
        return -1;
    }
    // The scratch row is moved out while the table takes it in (not copied: this runs per new
    // group), then put back and the header pointed at it again (a growth re-reads the vectors).
    let scratch = std::mem::take(&mut table.scratch);
    // SAFETY: generated code wrote a full row whose strings address the batch's bytes.
    let inserted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { table.insert_row(scratch.as_ptr(), hash, slot as usize) }));
    table.scratch = scratch;
    table.header.scratch = table.scratch.as_mut_ptr();
    match inserted {
        Ok(g) => g as i64,
        Err(_) => -1,
    }
}

/// `a[..n] == b[..n]` for generated code comparing the bytes of two strings whose lengths and
/// prefixes matched: 1 or 0.
///
/// # Safety
/// Both must address `n` readable bytes.
pub unsafe extern "C" fn kiln_bytes_equal(a: *const u8, b: *const u8, n: i64) -> i64 {
    debug_assert!(super::value_bytes_ok(a, n) && super::value_bytes_ok(b, n), "kiln_bytes_equal({a:?}, {b:?}, {n})");
    let Ok(n) = usize::try_from(n) else { return 0 };
    if a.is_null() || b.is_null() {
        return (n == 0) as i64;
    }
    // SAFETY: as the caller promises.
    let (x, y) = unsafe { (std::slice::from_raw_parts(a, n), std::slice::from_raw_parts(b, n)) };
    (x == y) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, Int32Array, StringArray};

    #[test]
    fn general_rows_group_strings_doubles_and_nulls() {
        let mut t = GroupTable::new(&[DataType::Utf8, DataType::Float64], 0).unwrap();
        let s: ArrayRef = Arc::new(StringArray::from(vec![Some("a long string key"), None, Some("a long string key"), Some("a long string kez"), None]));
        let f: ArrayRef = Arc::new(Float64Array::from(vec![Some(0.0), Some(f64::NAN), Some(-0.0), Some(0.0), Some(-f64::NAN)]));
        let (mut cand, mut hashes, mut ids) = (vec![], vec![], vec![]);
        t.encode(&[s.clone(), f.clone()], None, &mut cand, &mut hashes).unwrap();
        unsafe { t.find_rows(&cand, &hashes, true, &mut ids) };
        assert_eq!(ids, vec![0, 1, 0, 2, 1]);
        let keys = t.keys().unwrap();
        assert_eq!(keys[0].as_string::<i32>().value(2), "a long string kez");
        assert_eq!(keys[1].as_primitive::<Float64Type>().value(0).to_bits(), 0);
        ids.clear();
        unsafe { t.find_rows(&cand, &hashes, false, &mut ids) };
        assert_eq!(ids, vec![0, 1, 0, 2, 1]);
    }

    #[test]
    fn int_layout_grows_and_keeps_ids() {
        let mut t = GroupTable::new(&[DataType::Int32], 32).unwrap();
        let v: Vec<Option<i64>> = (0..10_000).map(|i| if i % 1000 == 7 { None } else { Some((i % 3000) * 7919) }).collect();
        let ids: Vec<u32> = v.iter().map(|k| t.find_int(*k, true)).collect();
        let again: Vec<u32> = v.iter().map(|k| t.find_int(*k, false)).collect();
        assert_eq!(ids, again);
        assert_eq!(t.num_groups(), 2998, "2997 values (i = 7 mod 1000 are NULL) and NULL");
        assert_eq!(t.payload().len(), 2998 * 32);
        let keys = t.keys().unwrap();
        let k = keys[0].as_primitive::<Int32Type>();
        assert_eq!(k.null_count(), 1);
        assert_eq!(k.value(ids[1] as usize), 7919);
        let _ = Int32Array::from(vec![1]);
    }

    #[test]
    fn reserved_groups_fit_without_growing() {
        let keys: Vec<Option<i64>> = (0..3000).map(|i| Some(i * 31)).chain([None]).collect();
        let mut grown = GroupTable::new(&[DataType::Int64], 16).unwrap();
        let mut reserved = GroupTable::new(&[DataType::Int64], 16).unwrap();
        // Groups already held move with the reservation.
        assert_eq!(reserved.find_int(Some(0), true), 0);
        reserved.reserve_groups(keys.len());
        let slots = reserved.header.slot_gids;
        let ids: Vec<u32> = keys.iter().map(|k| reserved.find_int(*k, true)).collect();
        assert_eq!(reserved.header.slot_gids, slots, "the table grew past its reservation");
        assert_eq!(ids, keys.iter().map(|k| grown.find_int(*k, true)).collect::<Vec<_>>());
        assert_eq!(reserved.payload().len(), keys.len() * 16);
    }
}
