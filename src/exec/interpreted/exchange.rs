//! Exchange: splits one partition's rows into `n` output partitions, by Spark's Murmur3 hash
//! of the keys (`hashpartitioning`) or by sorted ranges (`rangepartitioning`).

use arrow::array::{Array, ArrowPrimitiveType, AsArray, UInt32Array};
use arrow::compute::take_record_batch;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, SortField};

use super::sort::sort_options;
use super::{concat, evaluate_all};
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr, SortOrder};

/// Spark's Murmur3_x86_32 (`org.apache.spark.unsafe.hash.Murmur3_x86_32`).
mod murmur3 {
    const C1: i32 = 0xcc9e_2d51_u32 as i32;
    const C2: i32 = 0x1b87_3593;

    fn mix_k1(k1: i32) -> i32 {
        k1.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
    }
    fn mix_h1(h1: i32, k1: i32) -> i32 {
        (h1 ^ k1).rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64_u32 as i32)
    }
    fn fmix(mut h1: i32, len: i32) -> i32 {
        h1 ^= len;
        h1 ^= ((h1 as u32) >> 16) as i32;
        h1 = h1.wrapping_mul(0x85eb_ca6b_u32 as i32);
        h1 ^= ((h1 as u32) >> 13) as i32;
        h1 = h1.wrapping_mul(0xc2b2_ae35_u32 as i32);
        h1 ^ ((h1 as u32) >> 16) as i32
    }
    pub fn hash_int(v: i32, seed: i32) -> i32 {
        fmix(mix_h1(seed, mix_k1(v)), 4)
    }
    pub fn hash_long(v: i64, seed: i32) -> i32 {
        let h1 = mix_h1(seed, mix_k1(v as i32));
        fmix(mix_h1(h1, mix_k1((v >> 32) as i32)), 8)
    }
    /// `hashUnsafeBytes`: little-endian words, then each trailing byte (sign-extended) alone.
    pub fn hash_bytes(b: &[u8], seed: i32) -> i32 {
        let aligned = b.len() - b.len() % 4;
        let mut h1 = seed;
        for w in b[..aligned].chunks_exact(4) {
            h1 = mix_h1(h1, mix_k1(i32::from_le_bytes([w[0], w[1], w[2], w[3]])));
        }
        for &byte in &b[aligned..] {
            h1 = mix_h1(h1, mix_k1(byte as i8 as i32));
        }
        fmix(h1, b.len() as i32)
    }
}

/// Java's `BigInteger.toByteArray`: minimal big-endian two's complement.
fn big_integer_bytes(v: i128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let mut start = 0;
    while start < 15 && ((b[start] == 0 && b[start + 1] & 0x80 == 0) || (b[start] == 0xff && b[start + 1] & 0x80 != 0)) {
        start += 1;
    }
    b[start..].to_vec()
}

/// Folds one key column into the running row hashes (NULL leaves a hash unchanged, as Spark).
fn hash_column(arr: &dyn Array, hashes: &mut [i32]) -> Result<()> {
    fn each<T: ArrowPrimitiveType>(arr: &dyn Array, hashes: &mut [i32], f: impl Fn(T::Native, i32) -> i32) {
        let a = arr.as_primitive::<T>();
        for (i, (h, v)) in hashes.iter_mut().zip(a.values().iter()).enumerate() {
            if a.is_valid(i) {
                *h = f(*v, *h);
            }
        }
    }
    use murmur3::*;
    match arr.data_type() {
        DataType::Null => {}
        DataType::Boolean => {
            let a = arr.as_boolean();
            for (i, h) in hashes.iter_mut().enumerate() {
                if a.is_valid(i) {
                    *h = hash_int(i32::from(a.value(i)), *h);
                }
            }
        }
        DataType::Int8 => each::<Int8Type>(arr, hashes, |v, h| hash_int(v as i32, h)),
        DataType::Int16 => each::<Int16Type>(arr, hashes, |v, h| hash_int(v as i32, h)),
        DataType::Int32 => each::<Int32Type>(arr, hashes, hash_int),
        DataType::Date32 => each::<Date32Type>(arr, hashes, hash_int),
        DataType::Int64 => each::<Int64Type>(arr, hashes, hash_long),
        DataType::Timestamp(TimeUnit::Microsecond, _) => each::<TimestampMicrosecondType>(arr, hashes, hash_long),
        // -0.0 hashes as 0.0; Java's floatToIntBits makes every NaN the canonical one.
        DataType::Float32 => each::<Float32Type>(arr, hashes, |v, h| {
            let bits = if v == 0.0 { 0 } else if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() as i32 };
            hash_int(bits, h)
        }),
        DataType::Float64 => each::<Float64Type>(arr, hashes, |v, h| {
            let bits = if v == 0.0 { 0 } else if v.is_nan() { 0x7ff8_0000_0000_0000 } else { v.to_bits() as i64 };
            hash_long(bits, h)
        }),
        DataType::Decimal128(p, _) if *p <= 18 => each::<Decimal128Type>(arr, hashes, |v, h| hash_long(v as i64, h)),
        DataType::Decimal128(_, _) => each::<Decimal128Type>(arr, hashes, |v, h| hash_bytes(&big_integer_bytes(v), h)),
        DataType::Utf8 => {
            let a = arr.as_string::<i32>();
            for (i, h) in hashes.iter_mut().enumerate() {
                if a.is_valid(i) {
                    *h = hash_bytes(a.value(i).as_bytes(), *h);
                }
            }
        }
        DataType::LargeUtf8 | DataType::Utf8View => {
            let a = arrow::compute::cast(arr, &DataType::Utf8)?;
            hash_column(a.as_ref(), hashes)?;
        }
        DataType::Binary => {
            let a = arr.as_binary::<i32>();
            for (i, h) in hashes.iter_mut().enumerate() {
                if a.is_valid(i) {
                    *h = hash_bytes(a.value(i), *h);
                }
            }
        }
        // Spark hashes a year-month interval as its int of months, a day-time one as its long of microseconds.
        DataType::Interval(IntervalUnit::YearMonth) => each::<IntervalYearMonthType>(arr, hashes, hash_int),
        DataType::Interval(IntervalUnit::DayTime) => {
            each::<IntervalDayTimeType>(arr, hashes, |v, h| hash_long(v.days as i64 * crate::types::timestamp::MICROS_PER_DAY, h))
        }
        DataType::Duration(TimeUnit::Microsecond) => each::<DurationMicrosecondType>(arr, hashes, hash_long),
        // A struct hashes its fields in order, an array its elements (Spark's Murmur3Hash); a
        // NULL struct or array leaves the hash unchanged, as does a NULL field or element.
        DataType::Struct(_) => {
            let s = arr.as_struct();
            for c in s.columns() {
                let merged = arrow::buffer::NullBuffer::union(c.nulls(), s.nulls());
                let c = arrow::array::make_array(c.to_data().into_builder().nulls(merged).build()?);
                hash_column(c.as_ref(), hashes)?;
            }
        }
        DataType::List(_) => {
            let l = arr.as_list::<i32>();
            let offsets = l.value_offsets();
            for (i, h) in hashes.iter_mut().enumerate() {
                if l.is_valid(i) {
                    for k in offsets[i] as usize..offsets[i + 1] as usize {
                        let mut one = [*h];
                        hash_column(l.values().slice(k, 1).as_ref(), &mut one)?;
                        *h = one[0];
                    }
                }
            }
        }
        // A map hashes each entry's key, then its value (Spark's Murmur3Hash of a MapType).
        DataType::Map(..) => {
            let m = arr.as_map();
            let offsets = m.value_offsets();
            for (i, h) in hashes.iter_mut().enumerate() {
                if m.is_valid(i) {
                    for k in offsets[i] as usize..offsets[i + 1] as usize {
                        let mut one = [*h];
                        hash_column(m.keys().slice(k, 1).as_ref(), &mut one)?;
                        hash_column(m.values().slice(k, 1).as_ref(), &mut one)?;
                        *h = one[0];
                    }
                }
            }
        }
        other => return Err(KilnError::unsupported(format!("hash partitioning on a key of type {other}"))),
    }
    Ok(())
}

/// Spark's `Murmur3Hash(keys, 42)` of every row.
pub(crate) fn spark_hash(columns: &[std::sync::Arc<dyn Array>], rows: usize) -> Result<Vec<i32>> {
    let mut hashes = vec![42i32; rows];
    for c in columns {
        hash_column(c.as_ref(), &mut hashes)?;
    }
    Ok(hashes)
}

/// Splits rows into `n` partitions by `pmod(murmur3(keys), n)`: equal keys, NULLs included,
/// land in the same partition, exactly as Spark's `hashpartitioning`.
pub fn hash_partition(keys: &[Expr], input: &[Attribute], batches: Vec<RecordBatch>, n: usize) -> Result<Vec<Vec<RecordBatch>>> {
    if n == 0 {
        return Err(KilnError::internal("hash partitioning into 0 partitions"));
    }
    if n == 1 {
        return Ok(vec![batches]);
    }
    // One batch, its rows ordered by partition (a stable counting sort), taken once per
    // column and sliced: columnar kernels instead of a row-by-row gather across batches.
    let batch = concat(input, &batches)?;
    drop(batches);
    let rows = batch.num_rows();
    let hashes = spark_hash(&evaluate_all(keys, &batch, input)?, rows)?;
    let pids: Vec<usize> = hashes.iter().map(|h| h.rem_euclid(n as i32) as usize).collect();
    let mut starts = vec![0usize; n + 1];
    for p in &pids {
        starts[p + 1] += 1;
    }
    for i in 0..n {
        starts[i + 1] += starts[i];
    }
    let mut next = starts.clone();
    let mut order = vec![0u32; rows];
    for (row, p) in pids.iter().enumerate() {
        order[next[*p]] = row as u32;
        next[*p] += 1;
    }
    let sorted = take_record_batch(&batch, &arrow::array::UInt32Array::from(order))?;
    Ok((0..n).map(|i| if starts[i] == starts[i + 1] { vec![] } else { vec![sorted.slice(starts[i], starts[i + 1] - starts[i])] }).collect())
}

/// Splits rows into `n` sorted ranges of `order`: partition i holds rows after boundary i-1 and
/// up to boundary i, so sorting each and concatenating gives a total order.
///
/// Boundaries come from the rows given, so pass every input partition's batches in one call
/// (Spark samples all partitions before splitting any).
pub fn range_partition(order: &[SortOrder], input: &[Attribute], batches: Vec<RecordBatch>, n: usize) -> Result<Vec<Vec<RecordBatch>>> {
    if n == 0 {
        return Err(KilnError::internal("range partitioning into 0 partitions"));
    }
    let batch = concat(input, &batches)?;
    drop(batches);
    if n == 1 || order.is_empty() || batch.num_rows() == 0 {
        let mut out = vec![vec![]; n];
        out[0].push(batch);
        return Ok(out);
    }
    let exprs: Vec<Expr> = order.iter().map(|o| o.expr.clone()).collect();
    let columns = evaluate_all(&exprs, &batch, input)?;
    let fields = order.iter().zip(&columns).map(|(o, c)| SortField::new_with_options(c.data_type().clone(), sort_options(o))).collect();
    let rows = RowConverter::new(fields)?.convert_columns(&columns)?;
    // A deterministic sample of up to 100 rows per partition, as Spark's sampleSizeHint.
    let stride = (rows.num_rows() / (100 * n)).max(1);
    let mut sample: Vec<_> = (0..rows.num_rows()).step_by(stride).map(|i| rows.row(i)).collect();
    sample.sort_unstable();
    let bounds: Vec<_> = (1..n).map(|i| sample[(i * sample.len() / n).min(sample.len() - 1)]).collect();
    let mut parts: Vec<Vec<u32>> = vec![vec![]; n];
    for i in 0..rows.num_rows() {
        let r = rows.row(i);
        parts[bounds.partition_point(|b| *b < r)].push(i as u32);
    }
    parts
        .into_iter()
        .map(|ix| if ix.is_empty() { Ok(vec![]) } else { Ok(vec![take_record_batch(&batch, &UInt32Array::from(ix))?]) })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::interpreted::test_util::*;
    use std::collections::HashMap;

    #[test]
    fn murmur3_matches_spark() {
        // spark.sql("SELECT hash(1)") = -559580957
        assert_eq!(murmur3::hash_int(1, 42), -559580957);
        assert_eq!(big_integer_bytes(255), vec![0, 255]);
        assert_eq!(big_integer_bytes(-1), vec![255]);
        assert_eq!(big_integer_bytes(-129), vec![255, 127]);
    }

    #[test]
    fn hash_partition_keeps_equal_keys_together() {
        let (k, s) = (attr("k", DataType::Int64), attr("s", DataType::Utf8));
        let input = [k.clone(), s.clone()];
        let mk = |ks: &[Option<i64>], ss: &[Option<&str>]| batch(&input, vec![ints(ks), strs(ss)]);
        let b1 = mk(&[Some(1), None, Some(3), Some(1)], &[Some("a"), None, Some("c"), Some("a")]);
        let b2 = mk(&[Some(3), None, Some(1), Some(2)], &[Some("c"), None, Some("a"), Some("b")]);
        let parts = hash_partition(&[k.expr(), s.expr()], &input, vec![b1, b2], 4).unwrap();
        assert_eq!(parts.len(), 4);
        let mut home: HashMap<Option<i64>, usize> = HashMap::new();
        let mut total = 0;
        for (p, bs) in parts.iter().enumerate() {
            for key in col_i64(bs, 0) {
                total += 1;
                assert_eq!(*home.entry(key).or_insert(p), p, "key {key:?} split across partitions");
            }
        }
        assert_eq!(total, 8);
    }

    #[test]
    fn range_partition_gives_a_total_order() {
        let k = attr("k", DataType::Int64);
        let vals: Vec<Option<i64>> = (0..50).map(|i| if i % 7 == 0 { None } else { Some((i * 37) % 23) }).collect();
        let b = batch(std::slice::from_ref(&k), vec![ints(&vals)]);
        let order = [SortOrder { expr: k.expr(), ascending: false, nulls_first: true }];
        let parts = range_partition(&order, std::slice::from_ref(&k), vec![b], 3).unwrap();
        let mut all = vec![];
        for p in parts {
            let sorted = crate::exec::interpreted::sort(&order, std::slice::from_ref(&k), p, None).unwrap();
            all.extend(col_i64(&sorted, 0));
        }
        let mut expected = vals.clone();
        expected.sort_by(|a, b| match (a, b) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, _) => std::cmp::Ordering::Less,
            (_, None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => y.cmp(x),
        });
        assert_eq!(all, expected);
    }
}
