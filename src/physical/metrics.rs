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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryMetrics {
    /// One entry per Parquet scan, in plan order (root first, left before right):
    /// the table's qualified name and what the scan did.
    pub scans: Vec<(String, ScanStats)>,
    /// What code generation did.
    pub codegen: CodegenStats,
    /// Every operator that ran, in the tree order of the plan that ran (the final plan of an
    /// adaptive run): its plan line and numbers.
    pub operators: Vec<(String, OperatorStats)>,
    /// The plan that ran with each operator's numbers after it.
    pub plan: String,
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

/// What one operator did in a run (Spark UI's SQL tab numbers): rows out, time per
/// partition, what a breaker held, and for a codegen stage whether it ran compiled.
#[derive(Debug, Default)]
pub struct OperatorMetrics {
    rows: AtomicU64,
    batches: AtomicU64,
    partition_nanos: std::sync::Mutex<Vec<u64>>,
    prepare_nanos: AtomicU64,
    held_bytes: AtomicU64,
    build_rows: AtomicU64,
    compiled: std::sync::Mutex<Option<(bool, u64)>>,
    spill_bytes: AtomicU64,
    spill_files: AtomicU64,
    spill_nanos: AtomicU64,
}

/// A snapshot of [`OperatorMetrics`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OperatorStats {
    /// Rows the operator produced (over every partition pulled).
    pub rows: u64,
    /// Batches it produced.
    pub batches: u64,
    /// Time spent pulling each partition's batches (its inputs included), in nanoseconds.
    pub partition_nanos: Vec<u64>,
    /// Time a breaker took to compute its state (an exchange's shuffle, a broadcast), ns.
    pub prepare_nanos: u64,
    /// Bytes a breaker held: an exchange's output, a broadcast's rows.
    pub held_bytes: u64,
    /// Rows of a join's build side.
    pub build_rows: u64,
    /// For a codegen stage: whether it ran compiled, and its compile time (µs, 0 from cache).
    pub compiled: Option<(bool, u64)>,
    /// Bytes a breaker wrote to spill files (Spark UI's "spill size").
    pub spill_bytes: u64,
    /// Spill files it wrote.
    pub spill_files: u64,
    /// Time spent writing and opening them, ns.
    pub spill_nanos: u64,
}

impl OperatorStats {
    /// All partitions' time, ns.
    pub fn total_nanos(&self) -> u64 {
        self.partition_nanos.iter().sum::<u64>() + self.prepare_nanos
    }

    /// (min, median, max) of the per-partition times, ns.
    pub fn partition_spread(&self) -> Option<(u64, u64, u64)> {
        let mut v = self.partition_nanos.clone();
        v.sort_unstable();
        Some((*v.first()?, v[v.len() / 2], *v.last()?))
    }

    /// One line of the numbers that are set: `rows: 1,234, time: 3.2 ms (...)`. The time's
    /// parts add up to it: a breaker's preparing (a shuffle, a broadcast) plus its partitions,
    /// whose spread (min, median, max) is of each partition's own time.
    pub fn summary(&self) -> String {
        let mut parts = vec![format!("rows: {}", group_digits(self.rows))];
        let partitions = self.partition_nanos.len();
        let pulled: u64 = self.partition_nanos.iter().sum();
        let spread = match self.partition_spread() {
            Some(_) if partitions == 1 => format!("1 partition {}", duration(pulled)),
            Some((min, med, max)) => format!("{partitions} partitions {} (min {}, med {}, max {})", duration(pulled), duration(min), duration(med), duration(max)),
            None => String::new(),
        };
        match (self.prepare_nanos, spread.is_empty()) {
            (0, true) => {}
            (0, false) => parts.push(format!("time: {spread}")),
            (prepare, true) => parts.push(format!("time: {}", duration(prepare))),
            (prepare, false) => parts.push(format!("time: {} = preparing {} + {spread}", duration(self.total_nanos()), duration(prepare))),
        }
        if self.held_bytes > 0 {
            parts.push(format!("memory: {}", crate::common::bytes_to_string(self.held_bytes as u128)));
        }
        if self.build_rows > 0 {
            parts.push(format!("build rows: {}", group_digits(self.build_rows)));
        }
        if self.spill_files > 0 {
            parts.push(format!(
                "spilled: {} in {} files ({})",
                crate::common::bytes_to_string(self.spill_bytes as u128),
                self.spill_files,
                duration(self.spill_nanos)
            ));
        }
        match self.compiled {
            Some((true, 0)) => parts.push("compiled (cached)".into()),
            Some((true, us)) => parts.push(format!("compiled in {:.1} ms", us as f64 / 1e3)),
            Some((false, _)) => parts.push("interpreted".into()),
            None => {}
        }
        parts.join(", ")
    }
}

/// A time in nanoseconds as people read it: `12.3 ms`, or `45 µs` under a millisecond.
fn duration(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{} µs", ns / 1_000)
    } else {
        format!("{:.1} ms", ns as f64 / 1e6)
    }
}

/// `1234567` as `1,234,567`.
pub(crate) fn group_digits(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl OperatorMetrics {
    /// A batch produced.
    pub fn add_batch(&self, rows: usize) {
        self.rows.fetch_add(rows as u64, Ordering::Relaxed);
        self.batches.fetch_add(1, Ordering::Relaxed);
    }

    /// Rows counted inside a compiled stage (whose batches are the stage's).
    pub fn add_rows(&self, rows: u64) {
        self.rows.fetch_add(rows, Ordering::Relaxed);
    }

    /// A partition's stream finished (or was dropped) after `nanos` of pulling.
    pub fn add_partition(&self, nanos: u64) {
        if let Ok(mut v) = self.partition_nanos.lock() {
            v.push(nanos);
        }
    }

    /// A breaker's state took `nanos` and holds `bytes`.
    pub fn add_prepared(&self, nanos: u64, bytes: u64) {
        self.prepare_nanos.fetch_add(nanos, Ordering::Relaxed);
        self.held_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// A join's build side had `rows` rows.
    pub fn add_build_rows(&self, rows: u64) {
        self.build_rows.fetch_add(rows, Ordering::Relaxed);
    }

    /// A spill file written: its size on disk and the time writing it took.
    pub fn add_spill(&self, file: &crate::common::spill::SpillFile) {
        self.spill_bytes.fetch_add(file.disk_bytes(), Ordering::Relaxed);
        self.spill_files.fetch_add(1, Ordering::Relaxed);
        self.spill_nanos.fetch_add(file.nanos(), Ordering::Relaxed);
    }

    /// A codegen stage ran compiled (with its compile time in µs) or interpreted.
    pub fn set_compiled(&self, compiled: bool, micros: u64) {
        if let Ok(mut c) = self.compiled.lock() {
            *c = Some((compiled, micros));
        }
    }

    /// The numbers so far.
    pub fn get(&self) -> OperatorStats {
        OperatorStats {
            rows: self.rows.load(Ordering::Relaxed),
            batches: self.batches.load(Ordering::Relaxed),
            partition_nanos: self.partition_nanos.lock().map(|v| v.clone()).unwrap_or_default(),
            prepare_nanos: self.prepare_nanos.load(Ordering::Relaxed),
            held_bytes: self.held_bytes.load(Ordering::Relaxed),
            build_rows: self.build_rows.load(Ordering::Relaxed),
            compiled: self.compiled.lock().ok().and_then(|c| *c),
            spill_bytes: self.spill_bytes.load(Ordering::Relaxed),
            spill_files: self.spill_files.load(Ordering::Relaxed),
            spill_nanos: self.spill_nanos.load(Ordering::Relaxed),
        }
    }
}

/// Every operator's metrics in one run, by operator (the plan node that ran; the map keeps
/// each node alive so its address stays its identity).
#[derive(Debug, Default)]
pub struct PlanMetrics {
    nodes: std::sync::Mutex<std::collections::HashMap<usize, (std::sync::Arc<super::PhysicalPlan>, std::sync::Arc<OperatorMetrics>)>>,
}

impl PlanMetrics {
    /// The metrics of `node`, created on first use.
    pub fn of(&self, node: &std::sync::Arc<super::PhysicalPlan>) -> std::sync::Arc<OperatorMetrics> {
        let key = std::sync::Arc::as_ptr(node) as usize;
        match self.nodes.lock() {
            Ok(mut map) => map.entry(key).or_insert_with(|| (node.clone(), Default::default())).1.clone(),
            Err(_) => Default::default(),
        }
    }

    /// The numbers of `node`, if it ran.
    pub fn get(&self, node: &super::PhysicalPlan) -> Option<OperatorStats> {
        let key = node as *const super::PhysicalPlan as usize;
        self.nodes.lock().ok()?.get(&key).map(|(_, m)| m.get())
    }
}

#[cfg(test)]
mod tests {
    use super::OperatorStats;

    #[test]
    fn a_summary_s_times_add_up() {
        // A shuffle's 60.6 ms of preparing and 200 partitions of 1 µs each: the total is both.
        let exchange = OperatorStats { rows: 5, partition_nanos: vec![1_000; 200], prepare_nanos: 60_600_000, ..Default::default() };
        let s = exchange.summary();
        assert!(s.contains("time: 60.8 ms = preparing 60.6 ms + 200 partitions 200 µs (min 1 µs, med 1 µs, max 1 µs)"), "{s}");
        // One partition has no spread to show.
        let scan = OperatorStats { rows: 1, partition_nanos: vec![2_200_000], ..Default::default() };
        assert!(scan.summary().contains("time: 1 partition 2.2 ms"), "{}", scan.summary());
        let scan = OperatorStats { partition_nanos: vec![1_000_000, 3_000_000, 2_000_000], ..Default::default() };
        assert!(scan.summary().contains("time: 3 partitions 6.0 ms (min 1.0 ms, med 2.0 ms, max 3.0 ms)"), "{}", scan.summary());
    }
}
