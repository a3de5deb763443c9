//! Run-time metrics, as Spark's `SQLMetrics`: counters that live on a physical operator and
//! that its tasks add to while the plan runs.

use std::sync::atomic::{AtomicU64, Ordering};

/// The counters of one `FileScan`.
#[derive(Debug, Default)]
pub struct ScanMetrics {
    files_read: AtomicU64,
    row_groups_read: AtomicU64,
    row_groups_skipped: AtomicU64,
    rows_skipped_by_page_index: AtomicU64,
    rows_out: AtomicU64,
}

/// What one scan did in a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Files with at least one row group read (after partition pruning and row-group skipping).
    pub files_read: u64,
    /// Row groups decoded.
    pub row_groups_read: u64,
    /// Row groups not read because their statistics proved no row passes the pushed filters.
    pub row_groups_skipped: u64,
    /// Rows of the row groups read that were not decoded, because page-index statistics proved
    /// that no row of their pages passes the pushed filters.
    pub rows_skipped_by_page_index: u64,
    /// Rows the scan produced.
    pub rows_out: u64,
}

impl ScanMetrics {
    /// Adds one run's counts.
    pub fn add(&self, s: ScanStats) {
        self.files_read.fetch_add(s.files_read, Ordering::Relaxed);
        self.row_groups_read.fetch_add(s.row_groups_read, Ordering::Relaxed);
        self.row_groups_skipped.fetch_add(s.row_groups_skipped, Ordering::Relaxed);
        self.rows_skipped_by_page_index.fetch_add(s.rows_skipped_by_page_index, Ordering::Relaxed);
        self.rows_out.fetch_add(s.rows_out, Ordering::Relaxed);
    }
    /// The counts so far.
    pub fn get(&self) -> ScanStats {
        ScanStats {
            files_read: self.files_read.load(Ordering::Relaxed),
            row_groups_read: self.row_groups_read.load(Ordering::Relaxed),
            row_groups_skipped: self.row_groups_skipped.load(Ordering::Relaxed),
            rows_skipped_by_page_index: self.rows_skipped_by_page_index.load(Ordering::Relaxed),
            rows_out: self.rows_out.load(Ordering::Relaxed),
        }
    }
    /// Back to zero, before a run.
    pub fn reset(&self) {
        for c in [&self.files_read, &self.row_groups_read, &self.row_groups_skipped, &self.rows_skipped_by_page_index, &self.rows_out] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// The metrics of one run of a query.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryMetrics {
    /// One entry per Parquet scan, in plan order (root first, left before right):
    /// the table's qualified name and what the scan did.
    pub scans: Vec<(String, ScanStats)>,
}
