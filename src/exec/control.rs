//! A running query's control: a cancel flag the host sets (Ctrl-C in `kiln shell`) and the
//! progress counters it reads while the query runs (stages done of total, rows and bytes
//! scanned). Shared as an `Arc` between the host and the executor; the executor checks the flag
//! where a scan yields a batch, so a query stops within a batch of every running partition.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{KilnError, Result};
use crate::exec::memory::MemoryPool;
use crate::physical::PhysicalPlan;

/// Cancel flag and progress of one query run.
#[derive(Debug, Default)]
pub struct QueryControl {
    cancelled: AtomicBool,
    stages_total: AtomicU64,
    stages_done: AtomicU64,
    rows_scanned: AtomicU64,
    bytes_scanned: AtomicU64,
    /// When the run must have finished (`kiln.query.timeout`), and the limit, for the error.
    deadline: std::sync::OnceLock<(std::time::Instant, std::time::Duration)>,
    /// What the run's breakers hold, against `kiln.memory.limit`.
    memory: Arc<MemoryPool>,
}

/// A snapshot of a query's progress.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Progress {
    /// Breakers (exchanges, broadcasts, top-k) whose input has run, and the result stage once done.
    pub stages_done: u64,
    /// Breakers of the plan plus the final result stage.
    pub stages_total: u64,
    /// Rows the scans have produced so far.
    pub rows_scanned: u64,
    /// Bytes (Arrow buffers) the scans have produced so far.
    pub bytes_scanned: u64,
}

impl QueryControl {
    /// A control for a run of `plan`: its stage count is known from the start.
    pub fn for_plan(plan: &PhysicalPlan) -> Arc<QueryControl> {
        let c = QueryControl::default();
        c.stages_total.store(stage_count(plan) + 1, Ordering::Relaxed);
        Arc::new(c)
    }
    /// Asks the query to stop; it ends with [`KilnError::Cancelled`].
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
    /// Whether [`QueryControl::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
    /// Cancels the run once it has taken longer than `limit` from now (the first limit set
    /// holds).
    pub fn set_timeout(&self, limit: std::time::Duration) {
        let _ = self.deadline.set((std::time::Instant::now() + limit, limit));
    }
    /// `Err(Cancelled)` once the query was cancelled, an error naming `kiln.query.timeout` once
    /// it ran past its deadline.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            return Err(KilnError::Cancelled);
        }
        if let Some((deadline, limit)) = self.deadline.get() {
            if std::time::Instant::now() > *deadline {
                return Err(KilnError::exec(format!("query cancelled: it ran longer than kiln.query.timeout ({} ms)", limit.as_millis())));
            }
        }
        Ok(())
    }
    /// The run's memory budget: its limit, and what its breakers hold now and at most.
    pub fn memory(&self) -> &Arc<MemoryPool> {
        &self.memory
    }
    /// A scan produced `rows` rows in `bytes` bytes.
    pub fn scanned(&self, rows: usize, bytes: usize) {
        self.rows_scanned.fetch_add(rows as u64, Ordering::Relaxed);
        self.bytes_scanned.fetch_add(bytes as u64, Ordering::Relaxed);
    }
    /// A breaker's state is ready (or the result is complete).
    pub fn stage_done(&self) {
        self.stages_done.fetch_add(1, Ordering::Relaxed);
    }
    /// Adaptive execution re-planned what is left: `rest` is the plan still to run.
    pub fn replanned(&self, rest: &PhysicalPlan) {
        let done = self.stages_done.load(Ordering::Relaxed);
        self.stages_total.store(done + stage_count(rest) + 1, Ordering::Relaxed);
    }
    /// The progress so far.
    pub fn progress(&self) -> Progress {
        Progress {
            stages_done: self.stages_done.load(Ordering::Relaxed),
            stages_total: self.stages_total.load(Ordering::Relaxed),
            rows_scanned: self.rows_scanned.load(Ordering::Relaxed),
            bytes_scanned: self.bytes_scanned.load(Ordering::Relaxed),
        }
    }
}

/// Where a scan yields `batch`: stops a cancelled query and counts what was scanned.
pub fn on_scan_batch(control: Option<&QueryControl>, batch: &arrow::record_batch::RecordBatch) -> Result<()> {
    if let Some(c) = control {
        c.check()?;
        crate::expr::builtins::set_result_limit(c.memory().limit());
        c.scanned(batch.num_rows(), crate::physical::adaptive::batch_bytes(batch) as usize);
    }
    Ok(())
}

/// The breakers the executor prepares and counts with [`QueryControl::stage_done`]: each a
/// boundary between stages, as Spark counts its stages at exchanges.
fn stage_count(plan: &PhysicalPlan) -> u64 {
    let own = u64::from(matches!(plan, PhysicalPlan::Exchange { .. } | PhysicalPlan::BroadcastExchange { .. } | PhysicalPlan::TakeOrderedAndProject { .. }));
    own + plan.children().into_iter().map(|c| stage_count(c)).sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_query_stops_with_a_clear_error_and_progress_counts_stages() {
        let s = crate::Session::new();
        s.sql("CREATE TABLE t AS SELECT * FROM VALUES (1, 10), (2, 20), (3, 30) AS v(a, b)").expect("table");
        let df = s.sql("SELECT a, count(*) FROM t GROUP BY a ORDER BY a").expect("plans");
        let control = QueryControl::for_plan(df.physical_plan());
        let rows: usize = df.collect_with_control(&control).expect("runs").iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 3);
        let p = control.progress();
        assert!(p.stages_total >= 2, "an exchange and the result: {p:?}");
        assert_eq!(p.stages_done, p.stages_total, "{p:?}");
        assert_eq!(p.rows_scanned, 3, "{p:?}");
        assert!(p.bytes_scanned > 0, "{p:?}");

        let cancelled = QueryControl::for_plan(df.physical_plan());
        cancelled.cancel();
        let err = df.collect_with_control(&cancelled).expect_err("cancelled");
        assert!(matches!(err, KilnError::Cancelled), "{err}");
        assert_eq!(err.to_string(), "query cancelled");
    }
}
