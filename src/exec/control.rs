//! A query's control for a run of a plan: its stage count, and the check where a scan yields a
//! batch, so a query stops within a batch of every running partition. The control itself is
//! `common::control` (below every layer that holds one).

use crate::error::Result;
use crate::physical::PhysicalPlan;

pub use crate::common::control::{Progress, QueryControl};

impl QueryControl {
    /// A control for a run of `plan`: its stage count is known from the start.
    pub fn for_plan(plan: &PhysicalPlan) -> std::sync::Arc<QueryControl> {
        std::sync::Arc::new(QueryControl::with_stages(stage_count(plan) + 1))
    }
    /// Adaptive execution re-planned what is left: `rest` is the plan still to run.
    pub fn replanned_to(&self, rest: &PhysicalPlan) {
        self.replanned(stage_count(rest) + 1);
    }
}

/// Where a scan yields `batch`: stops a cancelled query and counts what was scanned.
pub fn on_scan_batch(control: &QueryControl, batch: &arrow::record_batch::RecordBatch) -> Result<()> {
    control.check()?;
    crate::expr::builtins::set_result_limit(control.memory().limit());
    control.scanned(batch.num_rows(), crate::physical::adaptive::batch_bytes(batch) as usize);
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
    use crate::error::KilnError;

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
