//! Runs a physical plan as pipelines. The plan is cut at its breakers — Exchange,
//! BroadcastExchange and a broadcast join's build side, TakeOrderedAndProject, the build sides
//! of nested-loop joins — whose state is computed once, bottom-up, before anything reads it
//! (`prepare`). Everything else streams: a partition of an operator is an iterator of batches
//! pulled from its child's partition (`stream`), so between breakers only the batches in flight
//! are held, and a LIMIT stops pulling from its scan once it has its rows. Per-partition
//! breakers (HashAggregate, Sort, the sides of a sort-merge join) drain their input when first
//! pulled. Partitions run on the rayon pool (work stealing), so the cores stay busy at any
//! partition count.
//!
//! Each operator's part (its `prepare` and `stream`) is its file under `exec/operators/`; what a
//! run holds is `exec/state.rs`; this file has the entry points.
//!
//! One executor, two ways to run a codegen stage: with `spark.sql.codegen.wholeStage` on, a
//! `WholeStageCodegen` partition runs its compiled function over each batch of its input;
//! off (or when the stage cannot compile), its operators stream interpreted.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use crate::codegen::StageCache;
use crate::config::Config;
use crate::error::{KilnError, Result};
use crate::exec::context::ExecContext;
use crate::exec::metrics::{CodegenMetrics, PlanMetrics};
use crate::physical::{output_partitioning, PhysicalPlan};

pub use super::stream::{BatchStream, Partitions};
use super::state::{key, Executor, Outputs, State};
use crate::common::spill::SpillablePartition;

/// Runs `plan` and returns all rows, partitions in order (stages compiled into a cache of
/// their own).
pub fn collect(plan: &Arc<PhysicalPlan>, config: &Config) -> Result<Vec<RecordBatch>> {
    collect_in(plan, config, &StageCache::default(), &CodegenMetrics::default())
}

/// Runs `plan` and returns all rows, partitions in order: compiled stages come from `cache`,
/// and what code generation did is counted in `metrics`.
pub fn collect_in(plan: &Arc<PhysicalPlan>, config: &Config, cache: &StageCache, metrics: &CodegenMetrics) -> Result<Vec<RecordBatch>> {
    Ok(collect_plan(plan, config, cache, metrics)?.0)
}

/// Runs `plan` (adaptively when `spark.sql.adaptive.enabled` and it has an exchange) and
/// returns all rows, partitions in order, with the final plan of an adaptive run.
pub fn collect_plan(plan: &Arc<PhysicalPlan>, config: &Config, cache: &StageCache, metrics: &CodegenMetrics) -> Result<(Vec<RecordBatch>, Option<Arc<PhysicalPlan>>)> {
    collect_measured(plan, &ExecContext::new(plan, config, cache, metrics, &PlanMetrics::default()))
}

/// [`collect_plan`] under `ctx`, counting what each operator did in its metrics.
pub fn collect_measured(plan: &Arc<PhysicalPlan>, ctx: &ExecContext) -> Result<(Vec<RecordBatch>, Option<Arc<PhysicalPlan>>)> {
    let (parts, final_plan) = collect_partitions(plan, ctx)?;
    Ok((parts.into_iter().flatten().collect(), final_plan))
}

/// [`collect_measured`], the batches kept by output partition.
pub fn collect_partitions(plan: &Arc<PhysicalPlan>, ctx: &ExecContext) -> Result<(Partitions, Option<Arc<PhysicalPlan>>)> {
    let (parts, final_plan) = on_a_worker(ctx, || {
        if super::adaptive::is_adaptive(plan, ctx.config) {
            let run = super::adaptive::execute_adaptive(plan, ctx, &execute_stage)?;
            Ok::<_, KilnError>((run.partitions, Some(run.final_plan)))
        } else {
            Ok((execute_with(plan, ctx)?, None))
        }
    })?;
    let parts = parts.into_iter().map(|p| p.into_iter().filter(|b| b.num_rows() > 0 || b.num_columns() == 0).collect()).collect();
    Ok((parts, final_plan))
}

/// Runs a query's coordination (its stages one after another, the serial steps between them)
/// on a worker of the thread pool, not on the caller's thread: each stage's partitions then
/// start on that worker at once, and it goes on after them without being woken, where a caller
/// outside the pool sleeps through every stage and waits to be scheduled again after it (tens
/// of microseconds a time on a virtual machine, a hundred times a query). The worker takes
/// the query's cap on one string result, which the caller's thread had from planning.
fn on_a_worker<R: Send>(ctx: &ExecContext, run: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return run();
    }
    let limit = ctx.memory().limit();
    rayon::scope(|_| {
        crate::expr::builtins::set_result_limit(limit);
        run()
    })
}

/// Runs `plan` and returns its partitions.
pub fn execute(plan: &Arc<PhysicalPlan>, config: &Config, cache: &StageCache, metrics: &CodegenMetrics) -> Result<Partitions> {
    execute_with(plan, &ExecContext::new(plan, config, cache, metrics, &PlanMetrics::default()))
}

/// Runs `plan` under `ctx` and returns its partitions (an exchange's spilled ones read back).
pub fn execute_with(plan: &Arc<PhysicalPlan>, ctx: &ExecContext) -> Result<Partitions> {
    execute_stage(plan, ctx)?.0.into_iter().map(SpillablePartition::read_all).collect()
}

/// Runs a query stage's plan: when it is an exchange, its output partitions as the exchange
/// holds them (some perhaps spilled) with the reservation holding them; else its partitions.
pub fn execute_stage(plan: &Arc<PhysicalPlan>, ctx: &ExecContext) -> Result<super::adaptive::StageRun> {
    run_subqueries(plan, ctx)?;
    let outputs = Outputs::of(plan);
    let mut exec = Executor::new(ctx, &outputs);
    exec.prepare(plan)?;
    if matches!(exec.states.get(&key(plan)), Some(State::Handoff(..))) {
        if let Some(State::Handoff(parts, held)) = exec.states.remove(&key(plan)) {
            let parts = parts.into_iter().map(|p| p.into_inner().ok().flatten().unwrap_or_default()).collect();
            return Ok((parts, Some(held)));
        }
    }
    Ok((exec.drain_all(plan)?.into_iter().map(SpillablePartition::in_memory).collect(), None))
}

/// Spark's `waitForSubqueries`: runs, once each, the scalar subqueries `plan` reads (those of
/// finished query stages ran with them) as queries of their own (adaptively when they have an
/// exchange), and stores their values, which the stage's operators then read as constants.
pub(super) fn run_subqueries(plan: &PhysicalPlan, ctx: &ExecContext) -> Result<()> {
    super::operators::union_loop::run(plan, ctx, &|p, ctx| Ok(collect_measured(p, ctx)?.0))?;
    for s in plan.subqueries() {
        if s.value.get().is_some() {
            continue;
        }
        let (batches, final_plan) = collect_measured(s.physical_plan(), ctx)?;
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        if rows > 1 {
            return Err(KilnError::exec(format!(
                "[SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression (scalar-subquery#{}, {rows} rows). SQLSTATE: 21000",
                s.id.0
            )));
        }
        let value = match batches.iter().find(|b| b.num_rows() > 0).and_then(|b| b.columns().first()) {
            Some(a) => a.slice(0, 1),
            None => arrow::array::new_null_array(&s.data_type, 1),
        };
        let _ = s.value.set(value);
        if let Some(f) = final_plan {
            s.set_final_plan(f);
        }
    }
    for c in plan.children() {
        run_subqueries(c, ctx)?;
    }
    Ok(())
}

/// Runs `plan` and hands its batches to `sink` one at a time, partition after partition, each
/// partition streamed rather than collected (the host API's `execute_stream`). `sink` returns
/// false to stop early.
pub fn for_each_batch(plan: &Arc<PhysicalPlan>, ctx: &ExecContext, mut sink: impl FnMut(RecordBatch) -> bool) -> Result<()> {
    if super::adaptive::is_adaptive(plan, ctx.config) {
        // The query stages run one by one; the result stage is collected, not yet streamed.
        let run = on_a_worker(ctx, || super::adaptive::execute_adaptive(plan, ctx, &execute_stage))?;
        for batch in run.partitions.into_iter().flatten() {
            if !sink(batch) {
                return Ok(());
            }
        }
        return Ok(());
    }
    run_subqueries(plan, ctx)?;
    let outputs = Outputs::of(plan);
    let mut exec = Executor::new(ctx, &outputs);
    exec.prepare(plan)?;
    for i in 0..exec.partitions(plan) {
        for batch in exec.stream(plan, i)? {
            if !sink(batch?) {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The partition count the plan's root will produce (for tests and metrics).
pub fn num_output_partitions(plan: &PhysicalPlan) -> usize {
    output_partitioning(plan).num_partitions()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::metrics::CodegenStats;

    fn run(s: &crate::Session, plan: &Arc<PhysicalPlan>) -> (usize, CodegenStats) {
        let metrics = CodegenMetrics::default();
        let config = s.config().expect("config");
        let rows = collect_in(plan, &config, s.stage_cache(), &metrics).expect("runs").iter().map(|b| b.num_rows()).sum();
        (rows, metrics.get())
    }

    #[test]
    fn an_exchange_over_many_small_input_partitions_hands_on_merged_batches() {
        // 64 partitions of a first aggregate, each split again 64 ways: thousands of slivers of
        // a row or two unless the exchange merges them.
        for mode in ["true", "false"] {
            // One partial table per input partition (`kiln.aggregate.partialRunRows` 0), as
            // Spark's tasks: merged tasks would leave few slivers to merge.
            let s = crate::Session::builder()
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.sql.shuffle.partitions", "64")
                .config("spark.sql.codegen.wholeStage", mode)
                .config("kiln.aggregate.partialRunRows", "0")
                .build()
                .expect("session");
            let df = s.sql("SELECT k % 64 AS m, count(*) AS c FROM (SELECT id % 5000 AS k, count(*) AS n FROM range(0, 20000) GROUP BY id % 5000) GROUP BY k % 64").expect("plans");
            let (batches, metrics) = df.collect_with_metrics().expect("runs");
            assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 64);
            let exchanges: Vec<_> = metrics.operators.iter().filter(|(line, _)| line.contains("Exchange hashpartitioning((k")).collect();
            assert_eq!(exchanges.len(), 1, "{}", metrics.plan);
            let (_, stats) = exchanges[0];
            // Nearly every (input, output) pair of partitions holds a row or two.
            assert!(stats.rows > 2000, "{}", metrics.plan);
            assert!(stats.batches <= 64, "{} batches for 64 partitions:\n{}", stats.batches, metrics.plan);
        }
    }

    #[test]
    fn an_exchange_over_many_input_partitions_keeps_their_order_in_each_output_partition() {
        // 64 input partitions written by fewer tasks, each a contiguous run of them: an output
        // partition still reads its rows in the input's order (ids ascending per key).
        for mode in ["true", "false"] {
            let s = crate::Session::builder()
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.sql.shuffle.partitions", "3")
                .config("spark.sql.codegen.wholeStage", mode)
                .build()
                .expect("session");
            let df = s.sql("SELECT /*+ REPARTITION(3, k) */ id, k FROM (SELECT id, id % 5 AS k FROM range(0, 20000, 1, 64))").expect("plans");
            let ids: Vec<i64> = df
                .collect()
                .expect("runs")
                .iter()
                .flat_map(|b| b.column(0).as_any().downcast_ref::<arrow::array::Int64Array>().expect("bigint").values().to_vec())
                .collect();
            assert_eq!(ids.len(), 20000);
            for k in 0..5 {
                let of_k: Vec<i64> = ids.iter().copied().filter(|id| id % 5 == k).collect();
                assert!(of_k.windows(2).all(|w| w[0] < w[1]), "key {k} out of order in codegen={mode}");
                assert_eq!(of_k.len(), 4000);
            }
        }
    }

    #[test]
    fn compiled_stages_are_counted_and_a_silent_fallback_is_seen() {
        // The plan as given (adaptive execution re-forms stages, undoing the wrapped exchange).
        let s = crate::Session::builder().config("spark.sql.adaptive.enabled", "false").build().expect("session");
        s.sql("CREATE TABLE t AS SELECT * FROM VALUES (1, 10), (2, 20), (3, 30) AS v(a, b)").expect("table");
        let df = s.sql("SELECT a + b AS c FROM t WHERE a > 1 ORDER BY c").expect("plans");
        let (rows, first) = run(&s, df.physical_plan());
        assert_eq!(rows, 2);
        // The projection's stage and the sort's.
        assert_eq!((first.stages_compiled, first.stages_fell_back, first.cache_misses), (2, 0, 2), "{first:?}");
        let (_, again) = run(&s, df.physical_plan());
        assert_eq!((again.cache_hits, again.cache_misses, again.compile_micros), (2, 0, 0), "the session's cache: {again:?}");
        // A stage planned around an operator generated code cannot run falls back silently:
        // the count the tests assert on sees it.
        fn wrap_exchange(p: &Arc<PhysicalPlan>) -> Arc<PhysicalPlan> {
            if let PhysicalPlan::Exchange { .. } = p.as_ref() {
                return Arc::new(PhysicalPlan::WholeStageCodegen { id: 99, fallback: None, child: p.clone() });
            }
            Arc::new(p.with_new_children(p.children().into_iter().map(wrap_exchange).collect()))
        }
        let (rows, silent) = run(&s, &wrap_exchange(df.physical_plan()));
        assert_eq!(rows, 2);
        assert_eq!(silent.stages_fell_back, 1, "{silent:?}");
    }
}
