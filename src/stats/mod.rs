//! Size estimates of logical plans, as Spark computes them without collected statistics
//! (`SizeInBytesOnlyStatsPlanVisitor`, CBO off):
//!
//! - leaves report their bytes: a Parquet table the size of its files (all of them, or the
//!   partitions a partition filter above it keeps; a partitioned table read whole reports
//!   `spark.sql.defaultSizeInBytes`, as Spark's `CatalogFileIndex` does), a memory table its
//!   Arrow buffers, rows known at planning time `rows * row size`;
//! - a unary node keeps its child's row count and scales the bytes by the row widths
//!   (`size * outputRowSize / childRowSize`, `EstimationUtils.getSizePerRow`): a Filter does
//!   not shrink, a Project narrows, Expand multiplies by its projections;
//! - a global aggregate is one row; a GlobalLimit is `limit * row size`;
//! - joins multiply their children (semi and anti joins keep the left side); Union sums.
//!
//! `EXPLAIN COST` prints these next to every node; `JoinSelection` compares them with
//! `spark.sql.autoBroadcastJoinThreshold`.

pub mod column;
pub mod command;
pub mod estimation;

use crate::common::{bytes_to_string, three_digits};
use std::collections::HashMap;
use std::fmt;

pub use column::{ColumnStat, Histogram, HistogramBin, TableStats};

use arrow::datatypes::DataType;

use crate::catalog::TableSource;
use crate::expr::{Attribute, Expr};
use crate::plan::{JoinType, LogicalPlan};

/// Spark's `spark.sql.defaultSizeInBytes` (`Long.MaxValue`): the size of a table whose size is
/// unknown, so that it is never broadcast.
pub const DEFAULT_SIZE_IN_BYTES: u128 = i64::MAX as u128;

/// What the planner knows of a plan's output. Sizes are Spark's `BigInt`s; a product that
/// outgrows `u128` saturates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Statistics {
    /// Estimated bytes of the output rows.
    pub size_in_bytes: u128,
    /// The number of rows, when a node knows it (a limit, a global aggregate).
    pub row_count: Option<u128>,
}

impl Statistics {
    pub(crate) fn size(size_in_bytes: u128) -> Statistics {
        Statistics { size_in_bytes, row_count: None }
    }
}

/// `Statistics(sizeInBytes=27.9 MiB, rowCount=10)`, Spark's `Statistics.toString`.
impl fmt::Display for Statistics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Statistics(sizeInBytes={}", bytes_to_string(self.size_in_bytes))?;
        if let Some(rows) = self.row_count {
            write!(f, ", rowCount={}", three_digits(rows))?;
        }
        write!(f, ")")
    }
}

/// Spark's `DataType.defaultSize`: the bytes one value is assumed to take.
pub fn default_size(dt: &DataType) -> u128 {
    match dt {
        DataType::Null | DataType::Boolean | DataType::Int8 | DataType::UInt8 => 1,
        DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
        DataType::Int32 | DataType::UInt32 | DataType::Float32 | DataType::Date32 => 4,
        t if crate::types::interval::is_year_month(t) => 4,
        DataType::Decimal128(p, _) | DataType::Decimal256(p, _) => {
            if *p <= 18 {
                8
            } else {
                16
            }
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => 20,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => 100,
        DataType::Interval(_) => 16,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => default_size(f.data_type()),
        DataType::Map(f, _) => default_size(f.data_type()),
        DataType::Struct(fields) => fields.iter().map(|f| default_size(f.data_type())).sum(),
        _ => 8,
    }
}

/// Spark's `EstimationUtils.getSizePerRow`: 8 bytes of row overhead plus each column's
/// default size.
pub fn size_per_row(attrs: &[Attribute]) -> u128 {
    8 + attrs.iter().map(|a| default_size(&a.data_type)).sum::<u128>()
}

/// The statistics of `plan`'s output.
pub fn plan_stats(plan: &LogicalPlan) -> Statistics {
    visit(plan, &mut None)
}

/// The statistics of every node of `plan`, by node address (for printing them beside each line).
pub fn all_stats(plan: &LogicalPlan) -> HashMap<*const LogicalPlan, Statistics> {
    all_stats_with(plan, false)
}

/// `all_stats`, with the CBO's row counts and column statistics when `cbo`
/// (`spark.sql.cbo.enabled`).
pub fn all_stats_with(plan: &LogicalPlan, cbo: bool) -> HashMap<*const LogicalPlan, Statistics> {
    let mut map = HashMap::new();
    if cbo {
        estimation::visit(plan, &mut estimation::Map { nodes: Some(&mut map), like_selectivity: None });
    } else {
        visit(plan, &mut Some(&mut map));
    }
    map
}

/// `plan_stats`, with the CBO's estimate when `cbo`.
pub fn plan_stats_with(plan: &LogicalPlan, cbo: bool) -> Statistics {
    if cbo {
        let e = estimation::estimate(plan);
        Statistics { size_in_bytes: e.size_in_bytes, row_count: e.row_count }
    } else {
        plan_stats(plan)
    }
}

type StatsMap<'a> = Option<&'a mut HashMap<*const LogicalPlan, Statistics>>;

fn visit(plan: &LogicalPlan, map: &mut StatsMap<'_>) -> Statistics {
    let stats = compute(plan, map);
    if let Some(m) = map {
        m.insert(plan as *const LogicalPlan, stats);
    }
    stats
}

fn compute(plan: &LogicalPlan, map: &mut StatsMap<'_>) -> Statistics {
    match plan {
        LogicalPlan::Relation { table, .. } => relation_size(table),
        LogicalPlan::LocalRelation { output, data } => {
            Statistics::size(size_per_row(output) * data.iter().map(|b| b.num_rows() as u128).sum::<u128>())
        }
        // Spark's Range: a bigint's 8 bytes a row.
        LogicalPlan::Range { range, .. } => Statistics { size_in_bytes: 8 * range.count(), row_count: Some(range.count()) },
        LogicalPlan::OneRowRelation => Statistics::size(1),
        LogicalPlan::UnresolvedRelation { .. } => Statistics::size(DEFAULT_SIZE_IN_BYTES),
        // Spark's PruneFileSourcePartitions gives the relation under a partition filter a file
        // index of the kept partitions, and the relation reports their size.
        LogicalPlan::Filter { condition, child } if pruned_size(condition, child).is_some() => {
            let pruned = Statistics::size(pruned_size(condition, child).unwrap_or(DEFAULT_SIZE_IN_BYTES));
            if let Some(m) = map {
                m.insert(child.as_ref() as *const LogicalPlan, pruned);
            }
            // The Filter itself is a unary node: same row width, at least one byte.
            Statistics::size(pruned.size_in_bytes.max(1))
        }
        other => {
            let children: Vec<Statistics> = other.children().into_iter().map(|c| visit(c, map)).collect();
            from_children(other, &children)
        }
    }
}

/// A relation's size without row counts: its collected size when ANALYZE ran (and the files are
/// still those), else its files' or batches' bytes.
fn relation_size(table: &crate::catalog::Table) -> Statistics {
    if let Some(s) = table.stats.as_deref().filter(|s| s.fingerprint == table.fingerprint()) {
        return Statistics::size(s.size_in_bytes);
    }
    Statistics::size(match &table.source {
        TableSource::Memory(_) => table.memory_bytes(),
        TableSource::Parquet(t) if t.is_partitioned() => DEFAULT_SIZE_IN_BYTES,
        TableSource::Parquet(t) => t.files_size(0..t.files.len()),
        TableSource::Text(t) => t.files_size(),
        TableSource::Provider(p) => {
            let known = p.statistics();
            return Statistics { size_in_bytes: known.bytes.map_or(DEFAULT_SIZE_IN_BYTES, u128::from), row_count: known.rows.map(u128::from) };
        }
    })
}

/// Spark's `SizeInBytesOnlyStatsPlanVisitor` for a node that is not a leaf, given its
/// children's statistics (also the CBO's fallback where it cannot estimate).
pub(crate) fn from_children(plan: &LogicalPlan, children: &[Statistics]) -> Statistics {
    let first = children.first().copied().unwrap_or(Statistics::size(1));
    match plan {
        LogicalPlan::Aggregate { grouping, .. } if grouping.is_empty() => {
            Statistics { size_in_bytes: size_per_row(&plan.output()), row_count: Some(1) }
        }
        LogicalPlan::Project { child, .. } | LogicalPlan::Filter { child, .. } | LogicalPlan::Aggregate { child, .. } => {
            Statistics::size(scale_by_row_size(first.size_in_bytes, &plan.output(), &child.output()))
        }
        // Each row once per projection.
        LogicalPlan::Expand { projections, output, child } => {
            let size = scale_by_row_size(first.size_in_bytes, output, &child.output());
            Statistics::size(size.saturating_mul(projections.len() as u128))
        }
        LogicalPlan::GlobalLimit { limit, .. } => {
            let rows = first.row_count.map_or(*limit as u128, |r| r.min(*limit as u128));
            let size = if rows == 0 { 1 } else { rows.saturating_mul(size_per_row(&plan.output())) };
            Statistics { size_in_bytes: size, row_count: Some(rows) }
        }
        LogicalPlan::LocalLimit { limit: 0, .. } => Statistics { size_in_bytes: 1, row_count: Some(0) },
        LogicalPlan::Join { join_type: JoinType::LeftSemi | JoinType::LeftAnti, .. } => first,
        LogicalPlan::Union { .. } => {
            Statistics::size(children.iter().map(|s| s.size_in_bytes).fold(0u128, u128::saturating_add))
        }
        // Spark's `default`: the product of the children (sizes and, when all are known, row
        // counts), which for one child is the child's statistics.
        _ => {
            let product = |v: &mut dyn Iterator<Item = u128>| v.filter(|x| *x > 0).fold(1u128, u128::saturating_mul);
            let size_in_bytes = product(&mut children.iter().map(|s| s.size_in_bytes));
            let row_count = if children.iter().all(|s| s.row_count.is_some()) {
                Some(product(&mut children.iter().filter_map(|s| s.row_count)))
            } else {
                None
            };
            Statistics { size_in_bytes, row_count }
        }
    }
}

/// `sizeInBytes * outputRowSize / childRowSize`, at least 1 (Spark's `visitUnaryNode`).
fn scale_by_row_size(size: u128, output: &[Attribute], child_output: &[Attribute]) -> u128 {
    let out = size_per_row(output);
    let scaled = match size.checked_mul(out) {
        Some(product) => product / size_per_row(child_output),
        None => (size / size_per_row(child_output)).saturating_mul(out),
    };
    scaled.max(1)
}

/// The bytes of the partitions of a partitioned Parquet relation that `condition`'s partition
/// filters keep; None when the child is no such relation or no conjunct filters partitions.
pub(crate) fn pruned_size(condition: &Expr, child: &LogicalPlan) -> Option<u128> {
    let LogicalPlan::Relation { table, output } = child else { return None };
    let TableSource::Parquet(t) = &table.source else { return None };
    let filters = t.partition_filters(output, condition);
    if filters.is_empty() {
        return None;
    }
    // A filter the planner cannot evaluate here reads every file, as the scan would fail anyway.
    let files = t.select_files(output, &filters).unwrap_or_else(|_| (0..t.files.len()).collect());
    Some(t.files_size(files))
}

/// `physical::estimate_size`'s contract: the estimated bytes as a u64 (saturating).
pub fn size_in_bytes_u64(plan: &LogicalPlan) -> u64 {
    size_in_bytes_u64_with(plan, false)
}

/// `size_in_bytes_u64`, from the CBO's estimate when `cbo` (Spark's JoinSelection reads
/// `plan.stats`, which CBO computes).
pub fn size_in_bytes_u64_with(plan: &LogicalPlan, cbo: bool) -> u64 {
    u64::try_from(plan_stats_with(plan, cbo).size_in_bytes).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
