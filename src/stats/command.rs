//! `ANALYZE TABLE` (Spark's `AnalyzeTableCommand` / `AnalyzeColumnCommand`) and
//! `DESCRIBE [EXTENDED] t [col]` (`DescribeTableCommand` / `DescribeColumnCommand`).

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use super::column::{compute_column_stats, supports_type, TableStats};
use crate::catalog::{Table, TableKind, TableSource};
use crate::config::Config;
use crate::error::{KilnError, Result};

/// What `ANALYZE TABLE` collects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnalyzeColumns {
    /// `NOSCAN`: the size only.
    NoScan,
    /// No clause: size and row count.
    Table,
    /// `FOR COLUMNS a, b`: also these columns' statistics.
    Columns(Vec<String>),
    /// `FOR ALL COLUMNS`.
    All,
}

/// The table's total bytes, as Spark's `CommandUtils.calculateTotalSize` (files) or the
/// memory its batches hold.
pub fn total_size(table: &Table) -> u128 {
    match &table.source {
        TableSource::Memory(_) => table.memory_bytes(),
        TableSource::Parquet(t) => t.files_size(0..t.files.len()),
        TableSource::Text(t) => t.files_size(),
        TableSource::Provider(p) => p.statistics().bytes.map_or(0, u128::from),
    }
}

/// The statistics `ANALYZE TABLE table COMPUTE STATISTICS <what>` leaves: `rows` are the
/// table's rows (None for NOSCAN, which reads nothing). Earlier column statistics stay while
/// the table's files are the same; columns analyzed now replace theirs.
pub fn analyze(table: &Table, what: &AnalyzeColumns, rows: Option<&[RecordBatch]>, config: &Config) -> Result<TableStats> {
    let fingerprint = table.fingerprint();
    let old = table.stats.as_deref().filter(|s| s.fingerprint == fingerprint);
    let mut stats = TableStats {
        size_in_bytes: total_size(table),
        row_count: old.and_then(|s| s.row_count),
        columns: old.map(|s| s.columns.clone()).unwrap_or_default(),
        fingerprint,
    };
    let Some(batches) = rows else { return Ok(stats) };
    stats.row_count = Some(batches.iter().map(|b| b.num_rows() as u128).sum());
    let fields = table.schema.fields();
    let columns: Vec<usize> = match what {
        AnalyzeColumns::NoScan | AnalyzeColumns::Table => vec![],
        AnalyzeColumns::All => (0..fields.len()).filter(|&i| supports_type(fields[i].data_type())).collect(),
        AnalyzeColumns::Columns(names) => names
            .iter()
            .map(|n| {
                let i = fields.iter().position(|f| f.name().eq_ignore_ascii_case(n)).ok_or_else(|| {
                    KilnError::analysis("COLUMN_NOT_FOUND", format!("The column `{n}` does not exist in table `{}`.", table.name))
                })?;
                if !supports_type(fields[i].data_type()) {
                    return Err(KilnError::analysis(
                        "UNSUPPORTED_FEATURE.ANALYZE_UNSUPPORTED_COLUMN_TYPE",
                        format!(
                            "ANALYZE TABLE cannot collect statistics of column `{n}` of type {} in table `{}`.",
                            crate::types::spark_type_name(fields[i].data_type()),
                            table.name
                        ),
                    ));
                }
                Ok(i)
            })
            .collect::<Result<_>>()?,
    };
    let bins = config.histogram_enabled.then_some(config.histogram_num_bins);
    for i in columns {
        let stat = compute_column_stats(batches, i, fields[i].data_type(), config.ndv_max_error, bins)?;
        stats.columns.insert(fields[i].name().to_lowercase(), stat);
    }
    Ok(stats)
}

/// Java's `Date.toString` of a Unix time in UTC: `Sun Nov 29 13:55:52 UTC 2026`.
fn java_date(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let date = crate::types::format_date(days as i32);
    let (y, m, d) = (&date[..date.len() - 6], date[date.len() - 5..date.len() - 3].parse::<usize>().unwrap_or(1), &date[date.len() - 2..]);
    format!(
        "{} {} {d} {:02}:{:02}:{:02} UTC {y}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1).min(11)],
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The rows of `DESCRIBE [EXTENDED] table`: (col_name, data_type, comment).
pub fn describe_table(table: &Table, extended: bool) -> Vec<[Option<String>; 3]> {
    let row = |a: &str, b: &str, c: &str| [Some(a.to_string()), Some(b.to_string()), Some(c.to_string())];
    let mut rows: Vec<[Option<String>; 3]> = table
        .schema
        .fields()
        .iter()
        .map(|f| [Some(f.name().clone()), Some(crate::types::spark_type_name(f.data_type())), None])
        .collect();
    if let TableSource::Parquet(t) = &table.source {
        let parts = t.partition_values.schema();
        if !parts.fields().is_empty() {
            rows.push(row("# Partition Information", "", ""));
            rows.push(row("# col_name", "data_type", "comment"));
            for f in parts.fields() {
                rows.push([Some(f.name().clone()), Some(crate::types::spark_type_name(f.data_type())), None]);
            }
        }
    }
    if !extended {
        return rows;
    }
    rows.push(row("", "", ""));
    rows.push(row("# Detailed Table Information", "", ""));
    rows.push(row("Catalog", "spark_catalog", ""));
    rows.push(row("Database", &table.database, ""));
    rows.push(row("Table", &table.name, ""));
    let location = match &table.source {
        TableSource::Parquet(t) => Some(std::fs::canonicalize(&t.location).unwrap_or_else(|_| t.location.clone())),
        TableSource::Text(t) => Some(std::fs::canonicalize(&t.location).unwrap_or_else(|_| t.location.clone())),
        TableSource::Memory(_) | TableSource::Provider(_) => None,
    };
    let created = location
        .as_ref()
        .and_then(|l| std::fs::metadata(l).ok()?.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| java_date(d.as_secs() as i64));
    if let Some(created) = created {
        rows.push(row("Created Time", &created, ""));
    }
    rows.push(row("Last Access", "UNKNOWN", ""));
    rows.push(row("Created By", concat!("kiln ", env!("CARGO_PKG_VERSION")), ""));
    let kind = match (table.kind, &table.source) {
        (TableKind::Managed, _) => "MANAGED",
        (_, TableSource::Parquet(_) | TableSource::Text(_)) => "EXTERNAL",
        (_, TableSource::Memory(_) | TableSource::Provider(_)) => "TEMPORARY",
    };
    rows.push(row("Type", kind, ""));
    rows.push(row("Provider", table.format_name(), ""));
    if let Some(s) = &table.stats {
        let rows_part = s.row_count.map(|r| format!(", {r} rows")).unwrap_or_default();
        rows.push(row("Statistics", &format!("{} bytes{rows_part}", s.size_in_bytes), ""));
    }
    if let Some(l) = location {
        rows.push(row("Location", &format!("file:{}", l.display()), ""));
    }
    rows
}

/// The rows of `DESCRIBE [EXTENDED] table column`: (info_name, info_value).
pub fn describe_column(table: &Table, column: &str, extended: bool) -> Result<Vec<[String; 2]>> {
    let field = table.schema.fields().iter().find(|f| f.name().eq_ignore_ascii_case(column)).ok_or_else(|| {
        KilnError::analysis("COLUMN_NOT_FOUND", format!("The column `{column}` does not exist in table `{}`.", table.name))
    })?;
    let dt = field.data_type();
    let pair = |a: &str, b: String| [a.to_string(), b];
    let mut rows = vec![pair("col_name", field.name().clone()), pair("data_type", crate::types::spark_type_name(dt)), pair("comment", "NULL".into())];
    if !extended {
        return Ok(rows);
    }
    let stat = table.stats.as_ref().and_then(|s| s.columns.get(&field.name().to_lowercase()));
    let show = |v: Option<String>| v.unwrap_or_else(|| "NULL".into());
    rows.push(pair("min", show(stat.and_then(|s| s.min).map(|v| super::column::format_bound(v, dt)))));
    rows.push(pair("max", show(stat.and_then(|s| s.max).map(|v| super::column::format_bound(v, dt)))));
    rows.push(pair("num_nulls", show(stat.and_then(|s| s.null_count).map(|v| v.to_string()))));
    rows.push(pair("distinct_count", show(stat.and_then(|s| s.distinct_count).map(|v| v.to_string()))));
    rows.push(pair("avg_col_len", show(stat.and_then(|s| s.avg_len).map(|v| v.to_string()))));
    rows.push(pair("max_col_len", show(stat.and_then(|s| s.max_len).map(|v| v.to_string()))));
    match stat.and_then(|s| s.histogram.as_ref()) {
        None => rows.push(pair("histogram", "NULL".into())),
        Some(h) => {
            let d = crate::types::java_double;
            rows.push(pair("histogram", format!("height: {}, num_of_bins: {}", d(h.height), h.bins.len())));
            for (i, b) in h.bins.iter().enumerate() {
                rows.push(pair(&format!("bin_{i}"), format!("lower_bound: {}, upper_bound: {}, distinct_count: {}", d(b.lo), d(b.hi), b.ndv)));
            }
        }
    }
    Ok(rows)
}

/// The table with `stats`, to register in place of `table`.
pub fn with_stats(table: &Table, stats: TableStats) -> Table {
    table.with_stats(Some(Arc::new(stats)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn java_dates_print_as_java_prints_them() {
        // 2026-11-29 13:55:52 UTC, a Sunday.
        assert_eq!(super::java_date(1_795_960_552), "Sun Nov 29 13:55:52 UTC 2026");
        assert_eq!(super::java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
    }
}
