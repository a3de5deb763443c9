//! A table's collected statistics (Spark's `CatalogStatistics` and `CatalogColumnStat`): its
//! size and row count and, per column, distinct count, min, max, null count, average and
//! maximum length, and an optional equi-height histogram (`stats::column` computes them).
//!
//! A managed table's statistics live in `_kiln_stats` in its folder (a hidden name, so readers
//! skip it), written atomically, with the file count and bytes they were computed from: a table
//! whose files changed since does not use them.

use std::collections::BTreeMap;
use std::path::Path;

pub use crate::datasource::owned::STATS_FILE;
use crate::error::{KilnError, Result};

/// Spark's `Histogram`: equal-height bins; `height` rows per bin.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    /// Rows in each bin (non-null rows / bins).
    pub height: f64,
    /// Bins in ascending order; the first includes its lower bound, the others do not.
    pub bins: Vec<HistogramBin>,
}

/// One bin: `(lo, hi]` (the first `[lo, hi]`) with `ndv` distinct values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HistogramBin {
    /// The lower bound.
    pub lo: f64,
    /// The upper bound.
    pub hi: f64,
    /// Distinct values within the bin.
    pub ndv: u64,
}

/// Spark's `ColumnStat`. Every field may be unknown (after estimation some are).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnStat {
    /// Distinct non-null values.
    pub distinct_count: Option<u128>,
    /// The smallest value, as a double (numbers, dates as days, timestamps as microseconds).
    pub min: Option<f64>,
    /// The largest value.
    pub max: Option<f64>,
    /// NULLs.
    pub null_count: Option<u128>,
    /// Average bytes (strings: characters) of a value.
    pub avg_len: Option<u64>,
    /// Largest bytes (strings: characters) of a value.
    pub max_len: Option<u64>,
    /// The equi-height histogram, when `spark.sql.statistics.histogram.enabled`.
    pub histogram: Option<std::sync::Arc<Histogram>>,
}

/// A table's collected statistics (Spark's `CatalogStatistics`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TableStats {
    /// The bytes of the table's files (memory tables: their Arrow buffers).
    pub size_in_bytes: u128,
    /// Rows; None after `NOSCAN`.
    pub row_count: Option<u128>,
    /// Column statistics by lower-case column name.
    pub columns: BTreeMap<String, ColumnStat>,
    /// (files, bytes) of the files the statistics were computed from; a table whose files differ
    /// now does not use them.
    pub fingerprint: (usize, u128),
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or("-".into(), |x| x.to_string())
}

fn float(v: &Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:?}"))
}

/// The statistics as text: a header, then one tab-separated line per column.
pub fn serialize(stats: &TableStats) -> String {
    let mut out = format!(
        "kiln-stats 1\nfingerprint\t{}\t{}\nsize\t{}\nrows\t{}\n",
        stats.fingerprint.0,
        stats.fingerprint.1,
        stats.size_in_bytes,
        opt(&stats.row_count)
    );
    for (name, c) in &stats.columns {
        if name.contains(['\t', '\n']) {
            continue;
        }
        let hist = c.histogram.as_ref().map_or("-".into(), |h| {
            let bins: Vec<String> = h.bins.iter().map(|b| format!("{:?}:{:?}:{}", b.lo, b.hi, b.ndv)).collect();
            format!("{:?};{}", h.height, bins.join(";"))
        });
        out.push_str(&format!(
            "col\t{name}\t{}\t{}\t{}\t{}\t{}\t{}\t{hist}\n",
            opt(&c.distinct_count),
            float(&c.min),
            float(&c.max),
            opt(&c.null_count),
            opt(&c.avg_len),
            opt(&c.max_len)
        ));
    }
    out
}

/// Reads `serialize`'s text; None when it is not such text.
pub fn deserialize(text: &str) -> Option<TableStats> {
    fn num<T: std::str::FromStr>(s: &str) -> Option<Option<T>> {
        if s == "-" {
            Some(None)
        } else {
            s.parse().ok().map(Some)
        }
    }
    let mut lines = text.lines();
    if lines.next()? != "kiln-stats 1" {
        return None;
    }
    let mut stats = TableStats::default();
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["fingerprint", files, bytes] => stats.fingerprint = (files.parse().ok()?, bytes.parse().ok()?),
            ["size", size] => stats.size_in_bytes = size.parse().ok()?,
            ["rows", rows] => stats.row_count = num(rows)?,
            ["col", name, ndv, min, max, nulls, avg, max_len, hist] => {
                let histogram = if *hist == "-" {
                    None
                } else {
                    let mut parts = hist.split(';');
                    let height = parts.next()?.parse().ok()?;
                    let bins = parts
                        .map(|b| {
                            let mut x = b.split(':');
                            Some(HistogramBin { lo: x.next()?.parse().ok()?, hi: x.next()?.parse().ok()?, ndv: x.next()?.parse().ok()? })
                        })
                        .collect::<Option<Vec<_>>>()?;
                    Some(std::sync::Arc::new(Histogram { height, bins }))
                };
                let stat = ColumnStat {
                    distinct_count: num(ndv)?,
                    min: num(min)?,
                    max: num(max)?,
                    null_count: num(nulls)?,
                    avg_len: num(avg)?,
                    max_len: num(max_len)?,
                    histogram,
                };
                stats.columns.insert(name.to_string(), stat);
            }
            _ => return None,
        }
    }
    Some(stats)
}

/// Writes the statistics next to a managed table's files, atomically (a temporary file renamed).
pub fn save(folder: &Path, stats: &TableStats) -> Result<()> {
    let tmp = folder.join(format!("{STATS_FILE}.tmp"));
    let path = folder.join(STATS_FILE);
    let io = |e: std::io::Error| KilnError::io(path.display().to_string(), format!("cannot write table statistics: {e}"));
    std::fs::write(&tmp, serialize(stats)).map_err(io)?;
    std::fs::rename(&tmp, &path).map_err(io)
}

/// The statistics saved in a managed table's folder, if any and readable.
pub fn load(folder: &Path) -> Option<TableStats> {
    deserialize(&std::fs::read_to_string(folder.join(STATS_FILE)).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_round_trip_through_text() {
        let mut stats = TableStats { size_in_bytes: 123, row_count: Some(10), fingerprint: (2, 123), ..Default::default() };
        let hist = Histogram { height: 2.5, bins: vec![HistogramBin { lo: 1.0, hi: 2.5, ndv: 2 }, HistogramBin { lo: 2.5, hi: 9.0, ndv: 3 }] };
        stats.columns.insert(
            "a".into(),
            ColumnStat { distinct_count: Some(5), min: Some(0.1), max: Some(9.0), null_count: Some(0), avg_len: Some(8), max_len: Some(8), histogram: Some(hist.into()) },
        );
        stats.columns.insert("s".into(), ColumnStat { distinct_count: Some(3), null_count: Some(1), avg_len: Some(4), max_len: Some(7), ..Default::default() });
        assert_eq!(deserialize(&serialize(&stats)), Some(stats));
        assert_eq!(deserialize("something else"), None);
    }
}
