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
//! One executor, two ways to run a codegen stage: with `spark.sql.codegen.wholeStage` on, a
//! `WholeStageCodegen` partition runs its compiled function over each batch of its input;
//! off (or when the stage cannot compile), its operators stream interpreted.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use crate::codegen::StageCache;
use crate::config::Config;
use crate::error::{KilnError, Result};
use crate::exec::context::ExecContext;
use crate::exec::control::QueryControl;
use crate::exec::interpreted::join::HashTable;
use crate::common::memory::{MemoryPool, Reservation};
use crate::exec::metrics::{CodegenMetrics, PlanMetrics};
use crate::expr::Attribute;
use crate::physical::{output_partitioning, BuildSide, HashJoinKind, PhysicalPlan};
use crate::plan::JoinType;

/// A partitioned result: one `Vec<RecordBatch>` per partition.
pub type Partitions = Vec<Vec<RecordBatch>>;

pub use super::stream::BatchStream;
use super::stream::{collect_reserved, Counted};
use super::operators::Stage;

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
    let (parts, final_plan) = if super::adaptive::is_adaptive(plan, ctx.config) {
        let run = super::adaptive::execute_adaptive(plan, ctx)?;
        (run.partitions, Some(run.final_plan))
    } else {
        (execute_with(plan, ctx)?, None)
    };
    Ok((parts.into_iter().flatten().filter(|b| b.num_rows() > 0 || b.num_columns() == 0).collect(), final_plan))
}

/// Runs `plan` and returns its partitions.
pub fn execute(plan: &Arc<PhysicalPlan>, config: &Config, cache: &StageCache, metrics: &CodegenMetrics) -> Result<Partitions> {
    execute_with(plan, &ExecContext::new(plan, config, cache, metrics, &PlanMetrics::default()))
}

/// Runs `plan` under `ctx` and returns its partitions.
pub fn execute_with(plan: &Arc<PhysicalPlan>, ctx: &ExecContext) -> Result<Partitions> {
    run_subqueries(plan, ctx)?;
    let outputs = Outputs::of(plan);
    let mut exec = Executor::new(ctx, &outputs);
    exec.prepare(plan)?;
    exec.drain_all(plan)
}

/// Spark's `waitForSubqueries`: runs, once each, the scalar subqueries `plan` reads (those of
/// finished query stages ran with them) as queries of their own (adaptively when they have an
/// exchange), and stores their values, which the stage's operators then read as constants.
pub(super) fn run_subqueries(plan: &PhysicalPlan, ctx: &ExecContext) -> Result<()> {
    super::operators::union_loop::run(plan, ctx)?;
    for s in plan.subqueries() {
        if s.value.get().is_some() {
            continue;
        }
        let (batches, final_plan) = collect_measured(&s.plan, ctx)?;
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
            let _ = s.final_plan.set(f);
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
        let run = super::adaptive::execute_adaptive(plan, ctx)?;
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

/// Every operator's output attributes, computed once: breaker state borrows them.
pub(super) struct Outputs(HashMap<usize, Vec<Attribute>>);

impl Outputs {
    pub(super) fn of(plan: &Arc<PhysicalPlan>) -> Outputs {
        fn walk(p: &Arc<PhysicalPlan>, out: &mut HashMap<usize, Vec<Attribute>>) {
            if out.contains_key(&key(p)) {
                return;
            }
            out.insert(key(p), p.output());
            for c in p.children() {
                walk(c, out);
            }
        }
        let mut map = HashMap::new();
        walk(plan, &mut map);
        Outputs(map)
    }
}

/// Identity of an operator in the plan being run.
pub(super) fn key(p: &Arc<PhysicalPlan>) -> usize {
    Arc::as_ptr(p) as usize
}

/// What a breaker holds once its input pipeline has run.
pub(super) enum State<'a> {
    /// Output partitions read by many (a broadcast's one).
    Partitions(Partitions),
    /// Output partitions each read once (an exchange's, a top-k's): a partition is handed to
    /// its reader and freed with it, so memory shrinks as the consuming pipeline advances
    /// (and the reservation with it).
    Handoff(Vec<Mutex<Option<Vec<RecordBatch>>>>, Reservation),
    /// A broadcast hash join's table, probed by every stream partition.
    JoinTable(HashTable<'a>),
    /// Both sides of a cartesian product, every partition.
    Sides(Partitions, Partitions),
    /// A compiled stage and the build tables of its broadcast joins.
    Stage(Box<Stage>),
    /// A scan's (file, row group) units, one per partition, and the row groups it reads (per
    /// file: false = skipped by statistics).
    Scan { units: Vec<(usize, usize)>, keep: BTreeMap<usize, Vec<bool>> },
}

pub(super) struct Executor<'a> {
    pub(super) config: &'a Config,
    pub(super) outputs: &'a Outputs,
    pub(super) states: HashMap<usize, State<'a>>,
    pub(super) cache: &'a StageCache,
    pub(super) metrics: &'a CodegenMetrics,
    pub(super) ops: &'a PlanMetrics,
    /// The run's cancel flag, deadline and progress counters.
    pub(super) control: Option<&'a QueryControl>,
    /// The query's memory budget.
    pub(super) memory: Arc<MemoryPool>,
    /// A plan fragment's inputs.
    pub(super) inputs: &'a crate::exec::fragment::FragmentInputs,
    /// What the run's shared breaker states hold (broadcasts, join tables), until it ends.
    pub(super) held: Vec<Reservation>,
    /// Per broadcast inner hash join: the joins above it in its pipeline whose tables its build
    /// rows must match, with their stream keys (over its build columns).
    pub(super) matching: HashMap<usize, Vec<(usize, Vec<crate::expr::Expr>)>>,
    /// Partial HashAggregates feeding an exchange that run as fewer tasks than their input has
    /// partitions (see `merge_partial_aggregate`): the task count.
    pub(super) merged: HashMap<usize, usize>,
}

impl<'a> Executor<'a> {
    pub(super) fn new(ctx: &'a ExecContext<'a>, outputs: &'a Outputs) -> Executor<'a> {
        let (config, cache, metrics, ops) = (ctx.config, ctx.cache, ctx.metrics, ctx.ops);
        Executor { config, outputs, states: HashMap::new(), cache, metrics, ops, control: Some(&ctx.control), memory: ctx.memory().clone(), inputs: &ctx.inputs, held: vec![], matching: HashMap::new(), merged: HashMap::new() }
    }

    /// Stops a cancelled or timed-out query.
    pub(super) fn check(&self) -> Result<()> {
        self.control.map_or(Ok(()), QueryControl::check)
    }

    /// An empty reservation of the query's memory, for what `plan` holds.
    pub(super) fn reserve(&self, plan: &Arc<PhysicalPlan>) -> Reservation {
        Reservation::new(&self.memory, plan)
    }

    /// Every partition of `plan`, drained, their bytes taken from `held` as they arrive.
    pub(super) fn drain_reserved(&self, plan: &Arc<PhysicalPlan>, held: &Reservation) -> Result<Partitions> {
        self.run_partitions(plan, |s| collect_reserved(s, held))
    }

    pub(super) fn attrs(&self, p: &Arc<PhysicalPlan>) -> &'a [Attribute] {
        self.outputs.0.get(&key(p)).map(Vec::as_slice).unwrap_or(&[])
    }

    pub(super) fn state(&self, p: &Arc<PhysicalPlan>) -> Result<&State<'a>> {
        self.states.get(&key(p)).ok_or_else(|| KilnError::internal(format!("{} ran before its input", p.node_string(self.config))))
    }


    /// The number of partitions `stream` produces for `plan`.
    pub(super) fn partitions(&self, plan: &Arc<PhysicalPlan>) -> usize {
        match plan.as_ref() {
            PhysicalPlan::FileScan { table, selected_files, .. } => table.source.scan_units(selected_files).len().max(1),
            PhysicalPlan::WholeStageCodegen { child, .. } => match self.states.get(&key(plan)) {
                Some(State::Stage(s)) => self.tasks(child, self.partitions(&s.spec.input_plan)),
                _ => self.partitions(child),
            },
            PhysicalPlan::HashAggregate { child, .. } => self.tasks(plan, self.partitions(child)),
            PhysicalPlan::Filter { child, .. }
            | PhysicalPlan::Project { child, .. }
            | PhysicalPlan::Expand { child, .. }
            | PhysicalPlan::Generate { child, .. }
            | PhysicalPlan::Window { child, .. }
            | PhysicalPlan::Sort { child, .. }
            | PhysicalPlan::LocalLimit { child, .. } => self.partitions(child),
            PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, build_side, left, right, .. } => match build_side {
                BuildSide::BuildRight => self.partitions(left),
                BuildSide::BuildLeft => self.partitions(right),
            },
            PhysicalPlan::NestedLoopJoin { join_type, build_side, left, right, .. } if *join_type != JoinType::FullOuter => match build_side {
                BuildSide::BuildRight => self.partitions(left),
                BuildSide::BuildLeft => self.partitions(right),
            },
            PhysicalPlan::HashJoin { left, right, .. } | PhysicalPlan::SortMergeJoin { left, right, .. } | PhysicalPlan::NestedLoopJoin { left, right, .. } => {
                self.partitions(left).max(self.partitions(right))
            }
            PhysicalPlan::CartesianProduct { left, right, .. } => self.partitions(left) * self.partitions(right),
            PhysicalPlan::QueryStage { output, .. } => output.num_partitions().max(1),
            PhysicalPlan::ShuffleRead { spec, .. } => spec.parts.len(),
            PhysicalPlan::Union { children } => children.iter().map(|c| self.partitions(c)).sum(),
            _ => output_partitioning(plan).num_partitions().max(1),
        }
    }


    pub(super) fn run_partitions<T: Send>(&self, plan: &Arc<PhysicalPlan>, sink: impl Fn(BatchStream) -> Result<T> + Sync + Send) -> Result<Vec<T>> {
        (0..self.partitions(plan)).into_par_iter().map(|i| sink(self.stream(plan, i)?)).collect()
    }

    /// Every partition of `plan`, drained.
    pub(super) fn drain_all(&self, plan: &Arc<PhysicalPlan>) -> Result<Partitions> {
        self.run_partitions(plan, |s| s.collect())
    }

    /// Computes, bottom-up, the state of every breaker under (and at) `plan`.
    pub(super) fn prepare(&mut self, plan: &Arc<PhysicalPlan>) -> Result<()> {
        if self.states.contains_key(&key(plan)) {
            return Ok(());
        }
        let start = std::time::Instant::now();
        super::operators::prepare(self, plan)?;
        // A breaker's own time: its inputs' preparation counts on them.
        let below: u64 = plan.children().iter().filter_map(|c| self.ops.get(c)).map(|m| m.prepare_nanos).sum();
        let held = match self.states.get(&key(plan)) {
            Some(State::Partitions(parts)) => parts.iter().flatten().map(crate::physical::adaptive::batch_bytes).sum(),
            Some(State::Handoff(parts, _)) => parts.iter().filter_map(|p| p.lock().ok().map(|p| p.iter().flatten().map(crate::physical::adaptive::batch_bytes).sum::<u64>())).sum(),
            _ => 0,
        };
        if self.states.contains_key(&key(plan)) {
            self.ops.of(plan).add_prepared((start.elapsed().as_nanos() as u64).saturating_sub(below), held);
        }
        Ok(())
    }

    /// Partition `i` of `plan`'s output, as a stream, its rows and time counted. Breakers
    /// under it must be prepared.
    pub(super) fn stream<'s>(&'s self, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
        let inner = super::operators::stream(self, plan, i)?;
        Ok(Box::new(Counted { inner, metrics: self.ops.of(plan), nanos: 0, control: self.control }))
    }

}

pub(super) fn handoff<'a>(parts: Partitions, held: Reservation) -> State<'a> {
    State::Handoff(parts.into_iter().map(|p| Mutex::new(Some(p))).collect(), held)
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
