//! One entry point for a plan fragment: runs one partition of a physical plan over input the
//! caller supplies — Arrow batches for its `FragmentInput` leaves, its file scans' splits by
//! partition — under an [`ExecContext`], and hands on its batches as they are produced. What a
//! host engine's task calls (the Spark plugin's per-task entry) and what a server streams from.
//!
//! A fragment is one task's work: it holds no exchange (the host engine shuffles between
//! fragments) and runs without adaptive re-planning.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use crate::error::{KilnError, Result};
use crate::exec::context::ExecContext;
use crate::exec::executor::run_subqueries;
use crate::exec::state::{Executor, Outputs};
use crate::physical::PhysicalPlan;

pub use crate::exec::context::{FragmentInputs, InputBatches};

/// Runs partition `partition` of `plan` under `ctx` (whose inputs feed its `FragmentInput`
/// leaves) and hands each batch to `sink`, which returns false to stop early.
pub fn run_fragment(plan: &Arc<PhysicalPlan>, partition: usize, ctx: &ExecContext, mut sink: impl FnMut(RecordBatch) -> bool) -> Result<()> {
    if let Some(e) = first_exchange(plan) {
        return Err(KilnError::exec(format!(
            "[KILN_FRAGMENT_WITH_EXCHANGE] a plan fragment runs one task and cannot hold an exchange ({}); split the plan at its exchanges",
            e.node_string(ctx.config)
        )));
    }
    run_subqueries(plan, ctx)?;
    let outputs = Outputs::of(plan);
    let mut exec = Executor::new(ctx, &outputs);
    exec.prepare(plan)?;
    for batch in exec.stream(plan, partition)? {
        let batch = batch?;
        if batch.num_rows() > 0 && !sink(batch) {
            break;
        }
    }
    ctx.control.stage_done();
    Ok(())
}

fn first_exchange(plan: &Arc<PhysicalPlan>) -> Option<&Arc<PhysicalPlan>> {
    if matches!(plan.as_ref(), PhysicalPlan::Exchange { .. } | PhysicalPlan::QueryStage { .. } | PhysicalPlan::ShuffleRead { .. }) {
        return Some(plan);
    }
    plan.children().into_iter().find_map(first_exchange)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::StageCache;
    use crate::exec::metrics::{CodegenMetrics, PlanMetrics};
    use arrow::array::{Array, AsArray, Int64Array};
    use arrow::datatypes::Int64Type;

    /// `plan` with its Range leaf read from fragment input 0.
    fn over_input(plan: &Arc<PhysicalPlan>) -> Arc<PhysicalPlan> {
        if let PhysicalPlan::Range { output, .. } = plan.as_ref() {
            return Arc::new(PhysicalPlan::FragmentInput { index: 0, output: output.clone() });
        }
        let children = plan.children().into_iter().map(over_input).collect();
        Arc::new(plan.with_new_children(children))
    }

    /// The stage under the plan's exchange: the partial aggregate's pipeline.
    fn below_exchange(plan: &Arc<PhysicalPlan>) -> Option<Arc<PhysicalPlan>> {
        if let PhysicalPlan::Exchange { child, .. } = plan.as_ref() {
            return Some(child.clone());
        }
        plan.children().into_iter().find_map(below_exchange)
    }

    /// Rows of (key, sum) sorted.
    fn pairs(batches: &[RecordBatch]) -> Vec<(i64, i64)> {
        let mut out: Vec<(i64, i64)> = batches
            .iter()
            .flat_map(|b| {
                let (k, v) = (b.column(0).as_primitive::<Int64Type>().clone(), b.column(1).as_primitive::<Int64Type>().clone());
                (0..b.num_rows()).map(move |r| (k.value(r), if v.is_null(r) { i64::MIN } else { v.value(r) }))
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_fragment_over_supplied_batches_gives_what_the_same_pipeline_gives_over_its_scan() {
        for codegen in ["true", "false"] {
            let s = crate::Session::new();
            s.set_conf("spark.sql.codegen.wholeStage", codegen).expect("set");
            s.set_conf("spark.sql.adaptive.enabled", "false").expect("set");
            let df = s.sql("SELECT id % 7 AS k, sum(id) AS s FROM range(0, 5000, 1, 1) WHERE id > 10 GROUP BY 1").expect("plans");
            let stage = below_exchange(df.physical_plan()).expect("an exchange");
            let config = s.config().expect("config");
            let (cache, ops) = (StageCache::default(), PlanMetrics::default());
            let expected = crate::exec::collect_in(&stage, &config, &cache, &CodegenMetrics::default()).expect("runs over its scan");
            let fragment = over_input(&stage);
            let input: Vec<InputBatches> = vec![Box::new(
                (0..5).map(|c| Ok(RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from_iter_values(c * 1000..(c + 1) * 1000)) as _)]).expect("batch"))),
            )];
            let metrics = CodegenMetrics::default();
            let ctx = ExecContext::new(&fragment, &config, &cache, &metrics, &ops).with_inputs(FragmentInputs::new(input));
            let mut got = vec![];
            run_fragment(&fragment, 0, &ctx, |b| {
                got.push(b);
                true
            })
            .expect("the fragment runs");
            assert_eq!(pairs(&got), pairs(&expected), "codegen {codegen}");
            assert_eq!(pairs(&got).len(), 7);
            let stats = metrics.get();
            assert_eq!((stats.stages_compiled > 0, stats.stages_fell_back), (codegen == "true", 0), "codegen {codegen}: {stats:?}");
        }
    }

    #[test]
    fn a_fragment_with_an_exchange_or_an_input_read_twice_is_an_error() {
        let s = crate::Session::new();
        s.set_conf("spark.sql.adaptive.enabled", "false").expect("set");
        let config = s.config().expect("config");
        let (cache, metrics, ops) = (StageCache::default(), CodegenMetrics::default(), PlanMetrics::default());
        let df = s.sql("SELECT id % 7 AS k, count(*) FROM range(100) GROUP BY 1").expect("plans");
        let whole = over_input(df.physical_plan());
        let ctx = ExecContext::new(&whole, &config, &cache, &metrics, &ops);
        let err = run_fragment(&whole, 0, &ctx, |_| true).expect_err("an exchange");
        assert!(err.to_string().contains("KILN_FRAGMENT_WITH_EXCHANGE"), "{err}");

        let leaf = Arc::new(PhysicalPlan::FragmentInput { index: 0, output: vec![crate::expr::Attribute::new("id", arrow::datatypes::DataType::Int64, false)] });
        let twice = Arc::new(PhysicalPlan::Union { children: vec![leaf.clone(), leaf] });
        let input: Vec<InputBatches> = vec![Box::new(std::iter::empty())];
        let ctx = ExecContext::new(&twice, &config, &cache, &metrics, &ops).with_inputs(FragmentInputs::new(input));
        let mut result = Ok(());
        for p in 0..2 {
            result = result.and_then(|_| run_fragment(&twice, p, &ctx, |_| true));
        }
        assert!(result.expect_err("read twice").to_string().contains("KILN_FRAGMENT_INPUT_READ_TWICE"));
    }
}
