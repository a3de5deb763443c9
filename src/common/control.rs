//! A running query's control: a cancel flag the host sets (Ctrl-C in `kiln shell`), the
//! deadline (`kiln.query.timeout`), the memory pool, and the progress counters the host reads
//! while the query runs (stages done of total, rows and bytes scanned). Shared as an `Arc`
//! between the host and the executor (`exec::control` builds one for a plan).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use super::memory::MemoryPool;
use super::spill::SpillBudget;
use crate::error::{KilnError, Result};

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
    /// What its spill files take on disk, against `kiln.spill.limit`.
    spill: Arc<SpillBudget>,
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
    /// A control for a run of `stages` breakers (the result stage included).
    pub fn with_stages(stages: u64) -> QueryControl {
        let c = QueryControl::default();
        c.stages_total.store(stages, Ordering::Relaxed);
        c
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
    /// The run's spill budget: what its spill files may take on disk, and take now.
    pub fn spill(&self) -> &Arc<SpillBudget> {
        &self.spill
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
    /// Adaptive execution re-planned what is left: `stages` breakers (the result stage
    /// included) are still to run.
    pub fn replanned(&self, stages: u64) {
        let done = self.stages_done.load(Ordering::Relaxed);
        self.stages_total.store(done + stages, Ordering::Relaxed);
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
