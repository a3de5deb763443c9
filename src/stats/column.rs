//! Computing column statistics (`ANALYZE TABLE ... COMPUTE STATISTICS FOR COLUMNS`): per
//! column, Spark's `ColumnStat` — distinct count (HyperLogLog++), min, max, null count, average
//! and maximum length, and an optional equi-height histogram. What they are and where they
//! are kept is `catalog::statistics`.
//!
//! Numeric, date and timestamp bounds are kept as doubles, as Spark's estimators use them
//! (`EstimationUtils.toDouble`); DESCRIBE prints them back in the column's type. Strings and
//! binaries have no min, max or histogram, as in Spark.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Float64Array};
use arrow::datatypes::{DataType, Date32Type, Decimal128Type, Float64Type, TimeUnit, TimestampMicrosecondType};
use arrow::record_batch::RecordBatch;

pub use crate::catalog::statistics::{ColumnStat, Histogram, HistogramBin, TableStats};
use crate::common::hash::spark_xxhash64;
use crate::error::{KilnError, Result};

/// Whether ANALYZE collects statistics for a column of this type (Spark's `supportsType`).
pub fn supports_type(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Boolean
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::Float32
            | DataType::Float64
            | DataType::Decimal128(..)
            | DataType::Date32
            | DataType::Timestamp(TimeUnit::Microsecond, _)
            | DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
    )
}

/// Whether Spark builds a histogram (and keeps min/max) for this type.
fn is_ordered_numeric(dt: &DataType) -> bool {
    supports_type(dt) && !is_string_or_binary(dt)
}

fn is_string_or_binary(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    )
}

/// One column's values as Spark's estimators and HLL++ see them.
enum Values {
    /// Hashed as Spark's `hashInt` / `hashLong`, ordered as doubles.
    Numbers(Vec<(u64, f64)>),
    /// UTF-8 or binary bytes and their length (characters for strings).
    Bytes(Vec<(u64, u64)>),
}

/// Computes the statistics of the named columns over `batches` (column index, type).
pub fn compute_column_stats(
    batches: &[RecordBatch],
    column: usize,
    dt: &DataType,
    relative_sd: f64,
    histogram_bins: Option<usize>,
) -> Result<ColumnStat> {
    let rows: u128 = batches.iter().map(|b| b.num_rows() as u128).sum();
    let mut values = if is_string_or_binary(dt) { Values::Bytes(vec![]) } else { Values::Numbers(vec![]) };
    for b in batches {
        let array = b.column(column);
        collect_values(array, dt, &mut values)?;
    }
    let non_null = match &values {
        Values::Numbers(v) => v.len(),
        Values::Bytes(v) => v.len(),
    } as u128;
    let mut hll = HyperLogLogPlusPlus::new(relative_sd);
    let default = crate::stats::default_size(dt) as u64;
    let mut stat = ColumnStat { null_count: Some(rows - non_null), ..Default::default() };
    match values {
        Values::Numbers(mut v) => {
            for (h, _) in &v {
                hll.add_hash(*h);
            }
            stat.avg_len = Some(default);
            stat.max_len = Some(default);
            if !v.is_empty() {
                // Spark orders NaN above every number.
                v.sort_by(|a, b| a.1.total_cmp(&b.1));
                stat.min = v.first().map(|x| x.1);
                stat.max = v.last().map(|x| x.1);
                if let Some(bins) = histogram_bins.filter(|_| is_ordered_numeric(dt)) {
                    let sorted: Vec<f64> = v.iter().map(|x| x.1).collect();
                    stat.histogram = Some(std::sync::Arc::new(equi_height(&sorted, bins)));
                }
            }
        }
        Values::Bytes(v) => {
            for (h, _) in &v {
                hll.add_hash(*h);
            }
            let total: u128 = v.iter().map(|x| x.1 as u128).sum();
            // Spark: ceil(avg(length(col))), the type's default size when there is no value.
            stat.avg_len = Some(if v.is_empty() { default } else { total.div_ceil(v.len() as u128) as u64 });
            stat.max_len = Some(v.iter().map(|x| x.1).max().unwrap_or(default));
        }
    }
    stat.distinct_count = Some(hll.query().min(non_null));
    Ok(stat)
}

fn collect_values(array: &ArrayRef, dt: &DataType, out: &mut Values) -> Result<()> {
    let Some(hashes) = spark_xxhash64(array) else {
        return Err(KilnError::analysis(
            "UNSUPPORTED_FEATURE.ANALYZE_UNSUPPORTED_COLUMN_TYPE",
            format!("ANALYZE cannot collect statistics of a column of type {}", crate::types::spark_type_name(dt)),
        ));
    };
    let lengths = |it: &mut dyn Iterator<Item = Option<u64>>| hashes.iter().zip(it).filter_map(|(h, l)| Some((h.as_ref().copied()?, l?))).collect::<Vec<_>>();
    match out {
        Values::Bytes(v) => v.extend(match dt {
            DataType::Utf8 => lengths(&mut array.as_string::<i32>().iter().map(|x| x.map(|s| s.chars().count() as u64))),
            DataType::LargeUtf8 => lengths(&mut array.as_string::<i64>().iter().map(|x| x.map(|s| s.chars().count() as u64))),
            DataType::Utf8View => lengths(&mut array.as_string_view().iter().map(|x| x.map(|s| s.chars().count() as u64))),
            DataType::Binary => lengths(&mut array.as_binary::<i32>().iter().map(|x| x.map(|s| s.len() as u64))),
            DataType::LargeBinary => lengths(&mut array.as_binary::<i64>().iter().map(|x| x.map(|s| s.len() as u64))),
            _ => lengths(&mut array.as_binary_view().iter().map(|x| x.map(|s| s.len() as u64))),
        }),
        Values::Numbers(v) => {
            let numbers: ArrayRef = match dt {
                DataType::Decimal128(_, s) => {
                    let scale = 10f64.powi(*s as i32);
                    Arc::new(array.as_primitive::<Decimal128Type>().iter().map(|x| x.map(|v| v as f64 / scale)).collect::<Float64Array>())
                }
                DataType::Date32 => Arc::new(array.as_primitive::<Date32Type>().iter().map(|x| x.map(|v| v as f64)).collect::<Float64Array>()),
                DataType::Timestamp(TimeUnit::Microsecond, _) => {
                    Arc::new(array.as_primitive::<TimestampMicrosecondType>().iter().map(|x| x.map(|v| v as f64)).collect::<Float64Array>())
                }
                _ => arrow::compute::cast(array, &DataType::Float64)?,
            };
            let numbers = numbers.as_primitive::<Float64Type>();
            v.extend(hashes.iter().zip(numbers.iter()).filter_map(|(h, x)| Some((h.as_ref().copied()?, x?))));
        }
    }
    Ok(())
}

/// Equal-height bins over sorted values: bound `i` is the value at percentile `i / bins`
/// (exact, where Spark's ApproximatePercentile is within 1/10000), each bin's distinct count
/// exact over its values.
fn equi_height(sorted: &[f64], bins: usize) -> Histogram {
    let n = sorted.len();
    let at = |q: f64| -> f64 {
        let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
        sorted[rank - 1]
    };
    let bounds: Vec<f64> = (0..=bins).map(|i| at(i as f64 / bins as f64)).collect();
    let mut out = Vec::with_capacity(bins);
    for i in 0..bins {
        let (lo, hi) = (bounds[i], bounds[i + 1]);
        let in_bin = |v: f64| if i == 0 { v >= lo && v <= hi } else { v > lo && v <= hi };
        let start = sorted.partition_point(|v| if i == 0 { *v < lo } else { *v <= lo });
        let mut ndv = 0u64;
        let mut last = None;
        for &v in sorted[start..].iter().take_while(|v| in_bin(**v)) {
            if last != Some(v) {
                ndv += 1;
                last = Some(v);
            }
        }
        out.push(HistogramBin { lo, hi, ndv });
    }
    Histogram { height: n as f64 / bins as f64, bins: out }
}

/// HyperLogLog++ as Spark's `HyperLogLogPlusPlusHelper`: `p` index bits from the relative
/// error, linear counting for small estimates. Spark also subtracts an empirical bias
/// (the HLL++ paper's tables) from raw estimates below `5m` that linear counting does not
/// cover; kiln does not carry those tables, so such estimates (for the default error:
/// roughly 1,300 to 2,600 distinct values) are the raw HLL estimate.
pub struct HyperLogLogPlusPlus {
    p: u32,
    registers: Vec<u8>,
}

impl HyperLogLogPlusPlus {
    /// A sketch for the relative standard deviation `relative_sd` (Spark's default 0.05: p = 9).
    pub fn new(relative_sd: f64) -> Self {
        let p = (2.0 * (1.106 / relative_sd).ln() / 2f64.ln()).ceil().clamp(4.0, 18.0) as u32;
        HyperLogLogPlusPlus { p, registers: vec![0; 1 << p] }
    }
    /// Adds a value by its hash (`spark_xxhash64`).
    pub fn add_hash(&mut self, x: u64) {
        let idx = (x >> (64 - self.p)) as usize;
        let w_padding = 1u64 << (self.p - 1);
        let pw = (((x << self.p) | w_padding).leading_zeros() + 1) as u8;
        if let Some(r) = self.registers.get_mut(idx) {
            *r = (*r).max(pw);
        }
    }
    /// The registers, one byte each.
    pub fn registers(&self) -> &[u8] {
        &self.registers
    }

    /// Merges another sketch's registers (Spark's merge: the larger of each register).
    pub fn merge_registers(&mut self, other: &[u8]) {
        for (r, o) in self.registers.iter_mut().zip(other) {
            *r = (*r).max(*o);
        }
    }

    /// The estimate, rounded to the nearest integer.
    pub fn query(&self) -> u128 {
        let m = self.registers.len() as f64;
        let alpha_m2 = match self.p {
            4 => 0.673 * m * m,
            5 => 0.697 * m * m,
            6 => 0.709 * m * m,
            _ => (0.7213 / (1.0 + 1.079 / m)) * m * m,
        };
        let z_inverse: f64 = self.registers.iter().map(|r| 1.0 / (1u64 << r) as f64).sum();
        let zeros = self.registers.iter().filter(|r| **r == 0).count() as f64;
        let e = alpha_m2 / z_inverse;
        // Spark's THRESHOLDS, by p from 4: linear counting below these.
        const THRESHOLDS: [f64; 15] = [10.0, 20.0, 40.0, 80.0, 220.0, 400.0, 900.0, 1800.0, 3100.0, 6500.0, 15500.0, 20000.0, 50000.0, 120000.0, 350000.0];
        let estimate = if zeros > 0.0 {
            let h = m * (m / zeros).ln();
            if h <= THRESHOLDS[(self.p - 4) as usize] || e <= 2.5 * m {
                h
            } else {
                e
            }
        } else {
            e
        };
        estimate.round().max(0.0) as u128
    }
}

/// A bound as DESCRIBE prints it (Spark's `CatalogColumnStat.toExternalString`).
pub fn format_bound(v: f64, dt: &DataType) -> String {
    match dt {
        DataType::Date32 => crate::types::format_date(v as i32),
        DataType::Decimal128(_, s) => crate::types::format_decimal((v * 10f64.powi(*s as i32)).round() as i128, *s),
        DataType::Boolean => (v != 0.0).to_string(),
        DataType::Float32 => crate::types::java_float(v as f32),
        DataType::Float64 => crate::types::java_double(v),
        DataType::Timestamp(..) => {
            let micros = v as i64;
            let (days, rem) = (micros.div_euclid(86_400_000_000), micros.rem_euclid(86_400_000_000));
            let secs = rem / 1_000_000;
            let frac = rem % 1_000_000;
            let base = format!("{} {:02}:{:02}:{:02}", crate::types::format_date(days as i32), secs / 3600, secs / 60 % 60, secs % 60);
            if frac == 0 {
                base
            } else {
                format!("{base}.{}", format!("{frac:06}").trim_end_matches('0'))
            }
        }
        _ => format!("{}", v as i64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hll_counts_small_sets_exactly_and_large_ones_within_the_error() {
        let mut h = HyperLogLogPlusPlus::new(0.05);
        for v in 0..50i64 {
            h.add_hash(crate::common::hash::xxh64_long(v % 10));
        }
        assert_eq!(h.query(), 10);
        let mut h = HyperLogLogPlusPlus::new(0.05);
        for v in 0..100_000i64 {
            h.add_hash(crate::common::hash::xxh64_long(v));
        }
        let e = h.query() as f64;
        assert!((e - 100_000.0).abs() / 100_000.0 < 0.15, "{e}");
    }

    #[test]
    fn equi_height_bins_cover_the_values() {
        let values: Vec<f64> = (1..=100).map(|v| v as f64).collect();
        let h = equi_height(&values, 4);
        assert_eq!(h.height, 25.0);
        assert_eq!(h.bins.iter().map(|b| (b.lo, b.hi, b.ndv)).collect::<Vec<_>>(), vec![(1.0, 25.0, 25), (25.0, 50.0, 25), (50.0, 75.0, 25), (75.0, 100.0, 25)]);
    }
}
