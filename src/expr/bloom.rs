//! The runtime Bloom filter of Spark's `InjectRuntimeFilter`: `bloom_filter_agg` hashes the
//! creation side's join key into one, `might_contain` keeps the application side's rows whose
//! key may be in it (no false negatives, so dropping the others never changes a join's result).
//!
//! Layout (kiln's own; Spark's bytes are never exchanged): a power-of-two number of 64-bit
//! words, little-endian, in one BINARY value. An item's xxhash64 picks one word with its high
//! half and sets three bits of it with its low bits: a blocked filter, so a probe reads one
//! cache line, and generated code tests it in a few instructions (`codegen/emit.rs`).

use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, BooleanArray};
use arrow::datatypes::{DataType, Int64Type};
use arrow::record_batch::RecordBatch;

use super::{Attribute, Expr};
use crate::error::{KilnError, Result};

/// Spark's `spark.sql.optimizer.runtime.bloomFilter.maxNumBits` default: the largest filter.
pub const MAX_NUM_BITS: u64 = 67_108_864;

/// The words of a filter of `num_bits` bits (at least one, a power of two, at most the maximum).
pub fn words_for(num_bits: u64) -> usize {
    (num_bits.clamp(64, MAX_NUM_BITS) / 64).next_power_of_two() as usize
}

/// The word an item's hash sets bits in: its high half, masked to the word count. Generated
/// code tests the same word and bits (`codegen/emit.rs`).
pub const WORD_SHIFT: u32 = 32;
/// The hash's shifts whose low six bits each pick one of the item's three bits in its word.
pub const BIT_SHIFTS: [u32; 3] = [0, 6, 12];

/// The word an item's hash sets bits in.
#[inline]
pub fn word_index(h: u64, words: usize) -> usize {
    (h >> WORD_SHIFT) as usize & (words - 1)
}

/// The three bits an item's hash sets in its word.
#[inline]
pub fn bit_mask(h: u64) -> u64 {
    BIT_SHIFTS.iter().fold(0, |m, s| m | 1u64 << ((h >> s) & 63))
}

/// Adds an item (its xxhash64) to a filter.
#[inline]
pub fn insert(words: &mut [u64], h: u64) {
    let n = words.len();
    words[word_index(h, n)] |= bit_mask(h);
}

/// Whether a serialized filter may contain the item whose xxhash64 is `h`.
#[inline]
pub fn may_contain(bytes: &[u8], h: u64) -> bool {
    let words = bytes.len() / 8;
    if words == 0 {
        return false;
    }
    let at = word_index(h, words) * 8;
    let word = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
    let m = bit_mask(h);
    word & m == m
}

/// A filter's bytes.
pub fn serialize(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// ORs a serialized filter into `words` (partial filters of one aggregate have one size).
pub fn merge(words: &mut Vec<u64>, bytes: &[u8]) -> Result<()> {
    let n = bytes.len() / 8;
    if words.is_empty() {
        words.resize(n, 0);
    }
    if n != words.len() || bytes.len() % 8 != 0 {
        return Err(KilnError::internal(format!("merging Bloom filters of {} and {} bytes", words.len() * 8, bytes.len())));
    }
    for (w, c) in words.iter_mut().zip(bytes.chunks_exact(8)) {
        *w |= u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
    }
    Ok(())
}

/// The filter bytes `might_contain`'s first argument holds: None for a NULL filter (an empty
/// creation side), which keeps no row.
pub(crate) fn filter_bytes(filter: &Expr) -> Result<Option<Arc<dyn Array>>> {
    let value: ArrayRef = match filter {
        Expr::ScalarSubqueryExec(s) => super::eval::subquery_array(s)?.clone(),
        Expr::Literal(v) => v.to_array(1)?,
        other => return Err(KilnError::internal(format!("might_contain over {other}, not a planned subquery"))),
    };
    Ok((value.len() == 1 && value.is_valid(0) && value.data_type() == &DataType::Binary).then_some(value))
}

/// `might_contain(filter, hash)` over a batch: the filter is read in place, once.
pub(crate) fn might_contain(args: &[Expr], batch: &RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    let [filter, value] = args else { return Err(KilnError::internal("might_contain takes two arguments")) };
    let Some(filter) = filter_bytes(filter)? else { return Ok(new_null_array(&DataType::Boolean, batch.num_rows())) };
    let bytes = filter.as_binary::<i32>().value(0);
    let hashes = super::eval::evaluate(value, batch, input)?;
    let hashes = hashes.as_primitive_opt::<Int64Type>().ok_or_else(|| KilnError::internal("might_contain of a value that is not a bigint hash"))?;
    Ok(Arc::new(hashes.iter().map(|h| h.map(|h| may_contain(bytes, h as u64))).collect::<BooleanArray>()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserted_items_are_found_and_most_others_are_not() {
        let mut words = vec![0u64; words_for(8 * 1000)];
        let hash = crate::common::hash::xxh64_long;
        for i in 0..1000 {
            insert(&mut words, hash(i));
        }
        let bytes = serialize(&words);
        assert!((0..1000).all(|i| may_contain(&bytes, hash(i))));
        let false_positives = (1000..101_000).filter(|i| may_contain(&bytes, hash(*i))).count();
        assert!(false_positives < 10_000, "{false_positives} false positives in 100,000");
        let mut merged = vec![];
        merge(&mut merged, &bytes).unwrap();
        assert_eq!(merged, words);
    }
}
