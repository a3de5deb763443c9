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
    /// What code generation did.
    pub codegen: CodegenStats,
}

/// The counters of code generation in one run of a query.
#[derive(Debug, Default)]
pub struct CodegenMetrics {
    stages_compiled: AtomicU64,
    stages_interpreted: AtomicU64,
    stages_fell_back: AtomicU64,
    cache_hits: AtomicU64,
    cache_misses: AtomicU64,
    compile_micros: AtomicU64,
    batches_reinterpreted: AtomicU64,
    partitions_reinterpreted: AtomicU64,
}

/// What code generation did in one run of a query.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodegenStats {
    /// `WholeStageCodegen` stages that ran as generated code.
    pub stages_compiled: u64,
    /// Stages that ran interpreted for a reason EXPLAIN CODEGEN shows (an unsupported expression).
    pub stages_interpreted: u64,
    /// Stages planned to compile that ran interpreted anyway (the stage could not be built or
    /// compiled when the query ran): a silent fallback, which the tests treat as a failure.
    pub stages_fell_back: u64,
    /// Compiled stages taken from the session's cache, and stages compiled for this run.
    pub cache_hits: u64,
    /// Stages compiled for this run (cache misses).
    pub cache_misses: u64,
    /// Time spent compiling this run's stages, in microseconds.
    pub compile_micros: u64,
    /// Batches the generated code handed back to the interpreter (an overflow, a value too wide).
    pub batches_reinterpreted: u64,
    /// Aggregate partitions the interpreter ran again after the generated code gave up.
    pub partitions_reinterpreted: u64,
}

impl CodegenMetrics {
    /// One stage that will run as generated code: compiled now (taking `compile`) or a cache hit.
    pub fn stage_compiled(&self, hit: bool, compile: std::time::Duration) {
        self.stages_compiled.fetch_add(1, Ordering::Relaxed);
        if hit {
            self.cache_hits.fetch_add(1, Ordering::Relaxed);
        } else {
            self.cache_misses.fetch_add(1, Ordering::Relaxed);
            self.compile_micros.fetch_add(compile.as_micros() as u64, Ordering::Relaxed);
        }
    }
    /// One stage running interpreted: `silent` when no planned reason explains it.
    pub fn stage_interpreted(&self, silent: bool) {
        let c = if silent { &self.stages_fell_back } else { &self.stages_interpreted };
        c.fetch_add(1, Ordering::Relaxed);
    }
    /// One batch the interpreter ran for the generated code.
    pub fn batch_reinterpreted(&self) {
        self.batches_reinterpreted.fetch_add(1, Ordering::Relaxed);
    }
    /// One partition the interpreter ran again for the generated code.
    pub fn partition_reinterpreted(&self) {
        self.partitions_reinterpreted.fetch_add(1, Ordering::Relaxed);
    }
    /// The counts so far.
    pub fn get(&self) -> CodegenStats {
        let l = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CodegenStats {
            stages_compiled: l(&self.stages_compiled),
            stages_interpreted: l(&self.stages_interpreted),
            stages_fell_back: l(&self.stages_fell_back),
            cache_hits: l(&self.cache_hits),
            cache_misses: l(&self.cache_misses),
            compile_micros: l(&self.compile_micros),
            batches_reinterpreted: l(&self.batches_reinterpreted),
            partitions_reinterpreted: l(&self.partitions_reinterpreted),
        }
    }
}
