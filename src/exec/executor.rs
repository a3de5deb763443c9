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

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use super::interpreted::{self, schema_of, HashAggregator};
use crate::catalog::TableSource;
use crate::codegen::{BuildTable, CompiledStage, StageCache, StageSink, StageSpec};
use crate::config::Config;
use crate::datasource::pushed_filter::PushedFilter;
use crate::datasource::spark_parquet::ReadSettings;
use crate::error::{KilnError, Result};
use crate::exec::interpreted::join::HashTable;
use crate::exec::control::{on_scan_batch, QueryControl};
use crate::common::memory::{MemoryPool, Reservation};
use crate::exec::metrics::{CodegenMetrics, OperatorMetrics, PlanMetrics, ScanStats};
use crate::expr::eval::random::{with_partition, RandState};
use crate::expr::Attribute;
use crate::physical::adaptive::{batch_bytes, ReadPart};
use crate::physical::{output_partitioning, AggregateMode, BuildSide, HashJoinKind, Partitioning, PhysicalPlan, QueryStageKind};
use crate::plan::JoinType;

/// A partitioned result: one `Vec<RecordBatch>` per partition.
pub type Partitions = Vec<Vec<RecordBatch>>;

/// One partition of an operator's output, produced as it is pulled.
pub type BatchStream<'a> = Box<dyn Iterator<Item = Result<RecordBatch>> + 'a>;

/// One side of a join partition, drained when the join first runs, what it holds taken from
/// the join's reservation.
type Drain<'a> = Box<dyn FnOnce(&Reservation) -> Result<Vec<RecordBatch>> + 'a>;

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
    collect_measured(plan, config, cache, metrics, &PlanMetrics::default())
}

/// [`collect_plan`], counting what each operator did in `ops`.
pub fn collect_measured(
    plan: &Arc<PhysicalPlan>,
    config: &Config,
    cache: &StageCache,
    metrics: &CodegenMetrics,
    ops: &PlanMetrics,
) -> Result<(Vec<RecordBatch>, Option<Arc<PhysicalPlan>>)> {
    let (parts, final_plan) = if super::adaptive::is_adaptive(plan, config) {
        let run = super::adaptive::execute_adaptive(plan, config, cache, metrics, ops)?;
        (run.partitions, Some(run.final_plan))
    } else {
        (execute_with(plan, config, cache, metrics, ops)?, None)
    };
    Ok((parts.into_iter().flatten().filter(|b| b.num_rows() > 0 || b.num_columns() == 0).collect(), final_plan))
}

/// Runs `plan` and returns its partitions.
pub fn execute(plan: &Arc<PhysicalPlan>, config: &Config, cache: &StageCache, metrics: &CodegenMetrics) -> Result<Partitions> {
    execute_with(plan, config, cache, metrics, &PlanMetrics::default())
}

/// Runs `plan` and returns its partitions, counting what each operator did in `ops`.
pub fn execute_with(plan: &Arc<PhysicalPlan>, config: &Config, cache: &StageCache, metrics: &CodegenMetrics, ops: &PlanMetrics) -> Result<Partitions> {
    run_subqueries(plan, config, cache, metrics, ops)?;
    let outputs = Outputs::of(plan);
    let mut exec = Executor::new(config, &outputs, cache, metrics, ops);
    exec.prepare(plan)?;
    exec.drain_all(plan)
}

/// Spark's `waitForSubqueries`: runs, once each, the scalar subqueries `plan` reads (those of
/// finished query stages ran with them) as queries of their own (adaptively when they have an
/// exchange), and stores their values, which the stage's operators then read as constants.
fn run_subqueries(plan: &PhysicalPlan, config: &Config, cache: &StageCache, metrics: &CodegenMetrics, ops: &PlanMetrics) -> Result<()> {
    super::union_loop::run(plan, config, cache, metrics, ops)?;
    for s in plan.subqueries() {
        if s.value.get().is_some() {
            continue;
        }
        let (batches, final_plan) = collect_measured(&s.plan, config, cache, metrics, ops)?;
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
        run_subqueries(c, config, cache, metrics, ops)?;
    }
    Ok(())
}

/// Runs `plan` and hands its batches to `sink` one at a time, partition after partition, each
/// partition streamed rather than collected (the host API's `execute_stream`). `sink` returns
/// false to stop early.
pub fn for_each_batch(
    plan: &Arc<PhysicalPlan>,
    config: &Config,
    cache: &StageCache,
    metrics: &CodegenMetrics,
    mut sink: impl FnMut(RecordBatch) -> bool,
) -> Result<()> {
    let ops = PlanMetrics::default();
    if super::adaptive::is_adaptive(plan, config) {
        // The query stages run one by one; the result stage is collected, not yet streamed.
        let run = super::adaptive::execute_adaptive(plan, config, cache, metrics, &ops)?;
        for batch in run.partitions.into_iter().flatten() {
            if !sink(batch) {
                return Ok(());
            }
        }
        return Ok(());
    }
    run_subqueries(plan, config, cache, metrics, &ops)?;
    let outputs = Outputs::of(plan);
    let mut exec = Executor::new(config, &outputs, cache, metrics, &ops);
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
struct Outputs(HashMap<usize, Vec<Attribute>>);

impl Outputs {
    fn of(plan: &Arc<PhysicalPlan>) -> Outputs {
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
fn key(p: &Arc<PhysicalPlan>) -> usize {
    Arc::as_ptr(p) as usize
}

/// What a breaker holds once its input pipeline has run.
enum State<'a> {
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

/// A codegen stage ready to run.
struct Stage {
    spec: StageSpec,
    compiled: Arc<CompiledStage>,
    /// Per join of the stage: its table when broadcast (else built per partition).
    builds: Vec<Option<BuildTable>>,
    /// Its compile time (0: from the cache).
    compiled_micros: u64,
}

struct Executor<'a> {
    config: &'a Config,
    outputs: &'a Outputs,
    states: HashMap<usize, State<'a>>,
    cache: &'a StageCache,
    metrics: &'a CodegenMetrics,
    ops: &'a PlanMetrics,
    /// The host's cancel flag and progress counters (`DataFrame::collect_with_control`).
    control: Option<&'a QueryControl>,
    /// The query's memory budget (the control's, or this run's own).
    memory: Arc<MemoryPool>,
    /// What the run's shared breaker states hold (broadcasts, join tables), until it ends.
    held: Vec<Reservation>,
    /// Per broadcast inner hash join: the joins above it in its pipeline whose tables its build
    /// rows must match, with their stream keys (over its build columns).
    matching: HashMap<usize, Vec<(usize, Vec<crate::expr::Expr>)>>,
    /// Partial HashAggregates feeding an exchange that run as fewer tasks than their input has
    /// partitions (see `merge_partial_aggregate`): the task count.
    merged: HashMap<usize, usize>,
}

impl<'a> Executor<'a> {
    fn new(config: &'a Config, outputs: &'a Outputs, cache: &'a StageCache, metrics: &'a CodegenMetrics, ops: &'a PlanMetrics) -> Executor<'a> {
        let control = config.control.as_deref();
        let memory = control.map_or_else(|| Arc::new(MemoryPool::new(config.memory_limit)), |c| c.memory().clone());
        Executor { config, outputs, states: HashMap::new(), cache, metrics, ops, control, memory, held: vec![], matching: HashMap::new(), merged: HashMap::new() }
    }

    /// Stops a cancelled or timed-out query.
    fn check(&self) -> Result<()> {
        self.control.map_or(Ok(()), QueryControl::check)
    }

    /// An empty reservation of the query's memory, for what `plan` holds.
    fn reserve(&self, plan: &Arc<PhysicalPlan>) -> Reservation {
        Reservation::new(&self.memory, plan)
    }

    /// Every partition of `plan`, drained, their bytes taken from `held` as they arrive.
    fn drain_reserved(&self, plan: &Arc<PhysicalPlan>, held: &Reservation) -> Result<Partitions> {
        self.run_partitions(plan, |s| collect_reserved(s, held))
    }

    fn attrs(&self, p: &Arc<PhysicalPlan>) -> &'a [Attribute] {
        self.outputs.0.get(&key(p)).map(Vec::as_slice).unwrap_or(&[])
    }

    fn state(&self, p: &Arc<PhysicalPlan>) -> Result<&State<'a>> {
        self.states.get(&key(p)).ok_or_else(|| KilnError::internal(format!("{} ran before its input", p.node_string(self.config))))
    }

    /// The broadcast inner hash joins of the pipeline below `plan` (through Projects, Filters
    /// and broadcast hash joins' stream sides), each with its build side.
    fn inner_joins_below(&self, plan: &'a Arc<PhysicalPlan>) -> Vec<(&'a Arc<PhysicalPlan>, &'a Arc<PhysicalPlan>)> {
        let mut out = vec![];
        let mut at = plan;
        loop {
            match at.as_ref() {
                PhysicalPlan::Project { child, .. } | PhysicalPlan::Filter { child, .. } => at = child,
                PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, join_type, build_side, left, right, .. } => {
                    let (build, stream) = match build_side {
                        BuildSide::BuildRight => (right, left),
                        BuildSide::BuildLeft => (left, right),
                    };
                    if *join_type == JoinType::Inner {
                        out.push((at, build));
                    }
                    at = stream;
                }
                _ => return out,
            }
        }
    }

    /// The number of partitions `stream` produces for `plan`.
    fn partitions(&self, plan: &Arc<PhysicalPlan>) -> usize {
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

    /// How many partitions (tasks) an aggregate over `input` partitions runs as: fewer when
    /// its partial tables are merged across input partitions.
    fn tasks(&self, aggregate: &Arc<PhysicalPlan>, input: usize) -> usize {
        self.merged.get(&key(aggregate)).map_or(input, |k| input.min(*k))
    }

    /// The input partitions of task `i` of `aggregate`: partition `i`, or, when the aggregate's
    /// tasks are merged, partitions i, i + k, i + 2k ...
    fn task_parts(&self, aggregate: &Arc<PhysicalPlan>, input: &Arc<PhysicalPlan>, i: usize) -> Vec<usize> {
        match self.merged.get(&key(aggregate)) {
            Some(&k) => (i..self.partitions(input)).step_by(k.max(1)).collect(),
            None => vec![i],
        }
    }

    /// The rows partitions `parts` of `input` hold, where known before they are read: a
    /// shuffle stage's output, read whole or coalesced (a final aggregate sizes its table by
    /// them).
    fn known_rows(&self, input: &Arc<PhysicalPlan>, parts: &[usize]) -> Option<usize> {
        let rows = |output: &crate::physical::adaptive::StageOutput, p: usize| output.rows.get(p).copied().unwrap_or(0) as usize;
        match input.as_ref() {
            PhysicalPlan::QueryStage { output, kind: QueryStageKind::Shuffle, .. } => Some(parts.iter().map(|p| rows(output, *p)).sum()),
            PhysicalPlan::ShuffleRead { spec, child } => {
                let PhysicalPlan::QueryStage { output, .. } = child.as_ref() else { return None };
                Some(
                    parts
                        .iter()
                        .map(|p| match spec.parts.get(*p) {
                            Some(ReadPart::Partitions(start, end)) => (*start..*end).map(|q| rows(output, q)).sum(),
                            Some(ReadPart::Slice { partition, of, .. }) => rows(output, *partition).div_ceil((*of).max(1)),
                            None => 0,
                        })
                        .sum(),
                )
            }
            _ => None,
        }
    }

    /// One run of an aggregate task's input: `parts` of `input` from `cursor` on, one after
    /// another, ending at a partition boundary once it has `kiln.aggregate.partialRunRows` rows
    /// (so a merged partial table stays bounded). `cursor` moves past each partition begun.
    fn run_stream<'c>(&'c self, input: &'c Arc<PhysicalPlan>, parts: &'c [usize], cursor: &'c Cell<usize>) -> impl Iterator<Item = Result<RecordBatch>> + 'c {
        let (mut rows, mut begun) = (0, false);
        let mut current: Option<BatchStream<'c>> = None;
        std::iter::from_fn(move || loop {
            if let Some(s) = &mut current {
                match s.next() {
                    Some(b) => {
                        rows += b.as_ref().map_or(0, |b| b.num_rows());
                        return Some(b);
                    }
                    None => current = None,
                }
            }
            // A run takes at least one partition, so every run moves the cursor.
            let p = cursor.get();
            if p >= parts.len() || (begun && rows >= self.config.partial_run_rows) {
                return None;
            }
            begun = true;
            cursor.set(p + 1);
            match self.stream(input, parts[p]) {
                Ok(s) => current = Some(s),
                Err(e) => return Some(Err(e)),
            }
        })
    }

    /// A partial aggregate under an exchange keeps one table per task, not per input partition,
    /// as morsel-driven engines keep one per thread: a group seen in several input partitions is
    /// then one partial row, not one per partition, so the exchange and the final aggregate see
    /// fewer rows (TPC-H Q17 from Parquet: 53 partitions of lineitem left 4.6M partial rows for
    /// 200k groups). The partial rows' partitioning does not matter: the exchange redistributes
    /// them. Not for a stage whose shuffled join reads its own partition of a build side.
    fn merge_partial_aggregate(&mut self, child: &Arc<PhysicalPlan>) {
        let aggregate = match child.as_ref() {
            PhysicalPlan::WholeStageCodegen { child: top, .. } => {
                if let Some(State::Stage(s)) = self.states.get(&key(child)) {
                    if s.spec.joins().iter().any(|j| !j.broadcast) {
                        return;
                    }
                }
                top
            }
            _ => child,
        };
        if self.config.partial_run_rows == 0 || !matches!(aggregate.as_ref(), PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, .. }) {
            return;
        }
        // Enough tasks for work stealing to even out unequal partitions.
        let k = 2 * rayon::current_num_threads().max(1);
        if self.partitions(child) > k {
            self.merged.insert(key(aggregate), k);
        }
    }

    /// Runs every partition of `plan` in parallel, each into `sink`.
    fn run_partitions<T: Send>(&self, plan: &Arc<PhysicalPlan>, sink: impl Fn(BatchStream) -> Result<T> + Sync + Send) -> Result<Vec<T>> {
        (0..self.partitions(plan)).into_par_iter().map(|i| sink(self.stream(plan, i)?)).collect()
    }

    /// Every partition of `plan`, drained.
    fn drain_all(&self, plan: &Arc<PhysicalPlan>) -> Result<Partitions> {
        self.run_partitions(plan, |s| s.collect())
    }

    /// Computes, bottom-up, the state of every breaker under (and at) `plan`.
    fn prepare(&mut self, plan: &Arc<PhysicalPlan>) -> Result<()> {
        if self.states.contains_key(&key(plan)) {
            return Ok(());
        }
        let start = std::time::Instant::now();
        self.prepare_node(plan)?;
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

    fn prepare_node(&mut self, plan: &Arc<PhysicalPlan>) -> Result<()> {
        match plan.as_ref() {
            PhysicalPlan::WholeStageCodegen { fallback, child, .. } => {
                if let Some(stage) = self.compile(fallback.is_some(), child)? {
                    self.prepare(&stage.spec.input_plan)?;
                    let joins = stage.spec.joins();
                    let mut builds: Vec<Option<BuildTable>> = joins.iter().map(|_| None).collect();
                    // Last join first: a join's build rows keep only those the later joins'
                    // tables match (`StageSpec::matching_joins`).
                    for (k, j) in joins.iter().enumerate().rev() {
                        self.prepare(&j.build_plan)?;
                        // A broadcast side is one partition: its table is built once.
                        if j.broadcast {
                            let held = self.reserve(&j.build_plan);
                            let mut rows = self.drain_reserved(&j.build_plan, &held)?.concat();
                            for m in stage.spec.matching_joins(k) {
                                if let Some(table) = builds[m].as_ref().and_then(|b| b.table()) {
                                    rows = interpreted::join::rows_matching(rows, &j.build, &joins[m].stream_keys, table)?;
                                }
                            }
                            let table = BuildTable::new(j, rows)?;
                            held.resize(table.memory_size())?;
                            self.held.push(held);
                            builds[k] = Some(table);
                        }
                    }
                    let m = self.ops.of(plan);
                    m.set_compiled(true, stage.compiled_micros);
                    m.add_build_rows(builds.iter().flatten().map(|b| b.rows().num_rows() as u64).sum());
                    self.states.insert(key(plan), State::Stage(Box::new(Stage { builds, ..stage })));
                    return Ok(());
                }
                self.ops.of(plan).set_compiled(false, 0);
                self.prepare(child)?;
            }
            PhysicalPlan::Exchange { partitioning, child, .. } => {
                self.prepare(child)?;
                self.merge_partial_aggregate(child);
                let held = self.reserve(plan);
                let parts = self.exchange(partitioning, child, &held)?;
                self.states.insert(key(plan), handoff(parts, held));
                if let Some(c) = self.control { c.stage_done() }
            }
            PhysicalPlan::BroadcastExchange { child, .. } => {
                self.prepare(child)?;
                let held = self.reserve(plan);
                let all = self.drain_reserved(child, &held)?.concat();
                self.held.push(held);
                self.states.insert(key(plan), State::Partitions(vec![all]));
                if let Some(c) = self.control { c.stage_done() }
            }
            PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, left_keys, right_keys, build_side, join_type, null_aware, left, right, .. } if !left_keys.is_empty() => {
                let (keys, build, stream, stream_keys) = match build_side {
                    BuildSide::BuildRight => (right_keys, right, left, left_keys),
                    BuildSide::BuildLeft => (left_keys, left, right, right_keys),
                };
                // The build side first: the inner joins below in the pipeline keep only the
                // build rows this table matches (as a compiled stage's `matching_joins`).
                self.prepare(build)?;
                let held = self.reserve(plan);
                let mut rows = self.drain_reserved(build, &held)?.concat();
                for (later, keys) in self.matching.remove(&key(plan)).unwrap_or_default() {
                    if let Some(State::JoinTable(t)) = self.states.get(&later) {
                        rows = interpreted::join::rows_matching(rows, self.attrs(build), &keys, t.join_table())?;
                    }
                }
                self.ops.of(plan).add_build_rows(rows.iter().map(|b| b.num_rows() as u64).sum());
                let table = HashTable::build(keys, (self.attrs(build), rows))?;
                held.resize(table.memory_size())?;
                self.held.push(held);
                self.states.insert(key(plan), State::JoinTable(table));
                if !null_aware && matches!((join_type, build_side), (JoinType::Inner, _) | (JoinType::LeftSemi, BuildSide::BuildRight)) {
                    for (below, below_build) in self.inner_joins_below(stream) {
                        if interpreted::join::keys_read_only(stream_keys, self.attrs(below_build)) {
                            self.matching.entry(key(below)).or_default().push((key(plan), stream_keys.clone()));
                        }
                    }
                }
                self.prepare(stream)?;
            }
            PhysicalPlan::CartesianProduct { left, right, .. } => {
                self.prepare(left)?;
                self.prepare(right)?;
                let held = self.reserve(plan);
                let sides = State::Sides(self.drain_reserved(left, &held)?, self.drain_reserved(right, &held)?);
                self.held.push(held);
                self.states.insert(key(plan), sides);
            }
            PhysicalPlan::TakeOrderedAndProject { limit, order, list, child } => {
                self.prepare(child)?;
                let input = self.attrs(child);
                let tops = self.run_partitions(child, |s| interpreted::sort(order, input, s.collect::<Result<_>>()?, Some(*limit)))?;
                let top = interpreted::sort(order, input, tops.concat(), Some(*limit))?;
                let schema = schema_of(self.attrs(plan));
                let rows: Vec<RecordBatch> = top.iter().map(|b| interpreted::project(list, input, &schema, b)).collect::<Result<_>>()?;
                let held = self.reserve(plan);
                held.grow(rows.iter().map(batch_bytes).sum())?;
                self.states.insert(key(plan), handoff(vec![rows], held));
                if let Some(c) = self.control { c.stage_done() }
            }
            PhysicalPlan::FileScan { table, selected_files, .. } if matches!(table.source, TableSource::Text(_)) => {
                // One unit per file, none skipped.
                self.states.insert(key(plan), State::Scan { units: table.source.scan_units(selected_files), keep: BTreeMap::new() });
            }
            PhysicalPlan::FileScan { table, pushed_filters, selected_files, .. } => {
                let TableSource::Parquet(parquet) = &table.source else {
                    return Err(KilnError::internal("FileScan over a memory table"));
                };
                let filters: &[PushedFilter] = if self.config.parquet_filter_pushdown { pushed_filters } else { &[] };
                let units = table.source.scan_units(selected_files);
                let mut files: Vec<usize> = units.iter().map(|(f, _)| *f).collect();
                files.dedup();
                let keep = files.into_par_iter().map(|f| Ok((f, parquet.row_groups_to_read(f, filters, &ReadSettings::of(self.config))?))).collect::<Result<_>>()?;
                self.states.insert(key(plan), State::Scan { units, keep });
            }
            _ => {
                for c in plan.children() {
                    self.prepare(c)?;
                }
            }
        }
        Ok(())
    }

    /// The compiled stage for a `WholeStageCodegen` node's operators, or None when it runs
    /// interpreted (code generation off, or the stage cannot compile: EXPLAIN CODEGEN says why).
    fn compile(&self, has_fallback: bool, child: &Arc<PhysicalPlan>) -> Result<Option<Stage>> {
        if !self.config.whole_stage_codegen {
            return Ok(None);
        }
        if has_fallback {
            self.metrics.stage_interpreted(false);
            return Ok(None);
        }
        // Planned to compile: failing now is a silent fallback, counted as such.
        let Ok(spec) = StageSpec::from_plan(child) else {
            self.metrics.stage_interpreted(true);
            return Ok(None);
        };
        let (compiled, hit) = self.cache.get_or_compile(&spec);
        let Ok(compiled) = compiled else {
            self.metrics.stage_interpreted(true);
            return Ok(None);
        };
        self.metrics.stage_compiled(hit, compiled.compile_time);
        let compiled_micros = if hit { 0 } else { compiled.compile_time.as_micros() as u64 };
        Ok(Some(Stage { spec, compiled, builds: vec![], compiled_micros }))
    }

    /// Runs an exchange's input pipeline into its output partitions.
    fn exchange(&self, partitioning: &Partitioning, child: &Arc<PhysicalPlan>, held: &Reservation) -> Result<Partitions> {
        let input = self.attrs(child);
        let parts = match partitioning {
            Partitioning::SinglePartition | Partitioning::Unknown(1) => vec![self.drain_reserved(child, held)?.concat()],
            Partitioning::Hash(keys, n) => {
                let batch_size = self.config.batch_size.max(1);
                let split = self.run_partitions(child, |s| {
                    let mut parts = interpreted::HashPartitioner::new(keys, input, *n, batch_size)?;
                    for b in s {
                        let b = b?;
                        held.grow(batch_bytes(&b))?;
                        parts.push(&b)?;
                    }
                    parts.finish()
                })?;
                let mut out: Partitions = vec![vec![]; *n];
                for s in split {
                    for (slot, batches) in out.iter_mut().zip(s) {
                        slot.extend(batches);
                    }
                }
                // Many input partitions leave each output partition many slivers (200 x 200
                // of a few rows each after a sort-merge join): merged here, once, they do not
                // cost every reader a per-batch overhead.
                out.into_par_iter().map(|part| merge_slivers(part, batch_size)).collect::<Result<_>>()?
            }
            Partitioning::Range(order, n) => interpreted::range_partition(order, input, self.drain_reserved(child, held)?.concat(), *n)?,
            Partitioning::Unknown(n) => return Err(KilnError::internal(format!("exchange to unknown partitioning of {n}"))),
            Partitioning::Collection(_) => return Err(KilnError::internal("exchange to a partitioning collection")),
        };
        Ok(parts)
    }

    /// Partition `i` of `plan`'s output, as a stream, its rows and time counted. Breakers
    /// under it must be prepared.
    fn stream<'s>(&'s self, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
        let inner = self.stream_node(plan, i)?;
        Ok(Box::new(Counted { inner, metrics: self.ops.of(plan), nanos: 0, control: self.control }))
    }

    fn stream_node<'s>(&'s self, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
        let config = self.config;
        Ok(match plan.as_ref() {
            PhysicalPlan::FileScan { table, output, metrics, .. } if matches!(table.source, TableSource::Text(_)) => {
                let (TableSource::Text(text), State::Scan { units, .. }) = (&table.source, self.state(plan)?) else {
                    return Err(KilnError::internal("text scan state"));
                };
                let Some(&(f, _)) = units.get(i) else { return Ok(Box::new(std::iter::empty())) };
                metrics.add(ScanStats { files_read: 1, ..Default::default() });
                let names: Vec<String> = output.iter().map(|a| a.name.clone()).collect();
                let schema = schema_of(output);
                let control = self.control;
                Box::new(text.batches(f, &names, config.batch_size)?.map(move |b| {
                    let b = b?;
                    on_scan_batch(control, &b)?;
                    metrics.add(ScanStats { rows_out: b.num_rows() as u64, ..Default::default() });
                    interpreted::make_batch(schema.clone(), b.columns().to_vec(), b.num_rows())
                }))
            }
            PhysicalPlan::FileScan { table, output, pushed_filters, metrics, .. } => {
                let TableSource::Parquet(parquet) = &table.source else {
                    return Err(KilnError::internal("FileScan over a memory table"));
                };
                let State::Scan { units, keep } = self.state(plan)? else { return Err(KilnError::internal("scan state")) };
                let Some(&(f, g)) = units.get(i) else { return Ok(Box::new(std::iter::empty())) };
                if keep.get(&f).and_then(|k| k.get(g)) == Some(&false) {
                    metrics.add(ScanStats { row_groups_skipped: 1, ..Default::default() });
                    return Ok(Box::new(std::iter::empty()));
                }
                let filters: &[PushedFilter] = if config.parquet_filter_pushdown { pushed_filters } else { &[] };
                let selection = if filters.is_empty() { None } else { parquet.page_selection(f, g, filters, &ReadSettings::of(config))? };
                let skipped = selection.as_ref().map_or(0, |s| s.skipped_row_count() as u64);
                // A file counts as read once, by its first row group read.
                let first_read = keep.get(&f).and_then(|k| k.iter().position(|r| *r)) == Some(g);
                metrics.add(ScanStats {
                    files_read: u64::from(first_read),
                    row_groups_read: 1,
                    rows_skipped_by_page_index: skipped,
                    ..Default::default()
                });
                let names: Vec<String> = output.iter().map(|a| a.name.clone()).collect();
                let schema = schema_of(output);
                let batches = parquet.row_group_batches(f, g, selection, &names, &ReadSettings::of(config))?;
                let control = self.control;
                Box::new(batches.map(move |b| {
                    let b = b?;
                    on_scan_batch(control, &b)?;
                    metrics.add(ScanStats { rows_out: b.num_rows() as u64, ..Default::default() });
                    interpreted::make_batch(schema.clone(), b.columns().to_vec(), b.num_rows())
                }))
            }
            PhysicalPlan::InMemoryScan { table, output } => {
                let TableSource::Memory(batches) = &table.source else {
                    return Err(KilnError::internal("InMemoryScan over a file table"));
                };
                let indices: Vec<usize> = output.iter().map(|a| table.schema.index_of(&a.name)).collect::<std::result::Result<_, _>>()?;
                let schema = schema_of(output);
                let (n, control) = (self.partitions(plan), self.control);
                // Each task reads a contiguous run of batches, as a file's splits are read: a
                // table stored in key order then leaves each shuffle partition in key order.
                let range = batches.len() * i / n.max(1)..batches.len() * (i + 1) / n.max(1);
                Box::new(batches.get(range).unwrap_or_default().iter().map(move |b| {
                    on_scan_batch(control, b)?;
                    let cols = indices.iter().map(|&c| b.column(c).clone()).collect();
                    interpreted::make_batch(schema.clone(), cols, b.num_rows())
                }))
            }
            PhysicalPlan::LocalTableScan { data, .. } => Box::new(data.clone().into_iter().filter(move |_| i == 0).map(Ok)),
            PhysicalPlan::Range { output, range } => {
                let control = self.control;
                Box::new(range.batches(i, schema_of(output), config.batch_size).map(move |b| {
                    let b = b?;
                    on_scan_batch(control, &b)?;
                    Ok(b)
                }))
            }
            PhysicalPlan::UnionLoop { rows, .. } => {
                let rows = rows.get().ok_or_else(|| KilnError::internal("UnionLoop read before its loop ran"))?;
                Box::new(rows.clone().into_iter().filter(move |_| i == 0).map(Ok))
            }
            PhysicalPlan::Filter { condition, child } => {
                let input = self.attrs(child);
                let mut rand = RandState::new(i);
                Box::new(self.stream(child, i)?.map(move |b| with_partition(&mut rand, || interpreted::filter(condition, input, &b?))))
            }
            PhysicalPlan::Project { list, child } => {
                let input = self.attrs(child);
                let schema = schema_of(self.attrs(plan));
                let mut rand = RandState::new(i);
                Box::new(self.stream(child, i)?.map(move |b| with_partition(&mut rand, || interpreted::project(list, input, &schema, &b?))))
            }
            PhysicalPlan::Expand { projections, child, .. } => {
                let input = self.attrs(child);
                let schema = schema_of(self.attrs(plan));
                Box::new(self.stream(child, i)?.flat_map(move |b| -> Vec<Result<RecordBatch>> {
                    match b {
                        Ok(b) => projections.iter().map(|p| interpreted::project(p, input, &schema, &b)).collect(),
                        Err(e) => vec![Err(e)],
                    }
                }))
            }
            PhysicalPlan::Generate { generator, required_child_output, outer, child, .. } => {
                let input = self.attrs(child);
                let schema = schema_of(self.attrs(plan));
                let chunk = config.batch_size;
                Box::new(self.stream(child, i)?.flat_map(move |b| {
                    match b.and_then(|b| interpreted::generate(generator, *outer, required_child_output, input, &schema, &b, chunk)) {
                        Ok(batches) => batches.into_iter().map(Ok).collect::<Vec<_>>(),
                        Err(e) => vec![Err(e)],
                    }
                }))
            }
            PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, child } => {
                let input = self.attrs(child);
                let parts = self.task_parts(plan, child, i);
                let held = self.reserve(plan);
                deferred(move || {
                    let cursor = Cell::new(0);
                    // The finished runs' rows, held with the groups of the run going on.
                    let (mut out, mut out_bytes) = (vec![], 0);
                    // One run unless the task is merged (see `run_stream`).
                    let rows = self.known_rows(child, &parts);
                    while cursor.get() < parts.len() {
                        let mut agg = HashAggregator::new(*mode, grouping, aggregates, result, input)?.flushing_at(config.partial_flush_groups).expecting_rows(rows);
                        for b in self.run_stream(child, &parts, &cursor) {
                            let b = b?;
                            // The growth first: refused, it is never allocated.
                            held.resize(out_bytes + agg.memory_size_after(b.num_rows()))?;
                            agg.push(&b)?;
                            held.resize(out_bytes + agg.memory_size())?;
                        }
                        let rows = agg.finish()?;
                        out_bytes += rows.iter().map(batch_bytes).sum::<u64>();
                        held.resize(out_bytes)?;
                        out.extend(rows);
                    }
                    Ok(out)
                })
            }
            PhysicalPlan::Exchange { .. } | PhysicalPlan::BroadcastExchange { .. } | PhysicalPlan::TakeOrderedAndProject { .. } => {
                let batches = match self.state(plan)? {
                    State::Partitions(parts) => parts.get(i).cloned().unwrap_or_default(),
                    State::Handoff(parts, held) => match parts.get(i).map(|p| p.lock().map(|mut p| p.take())) {
                        Some(Ok(Some(batches))) => {
                            held.shrink(batches.iter().map(batch_bytes).sum());
                            batches
                        }
                        Some(Ok(None)) => return Err(KilnError::internal(format!("partition {i} of {} read twice", plan.node_string(config)))),
                        _ => vec![],
                    },
                    _ => return Err(KilnError::internal("exchange state")),
                };
                Box::new(batches.into_iter().map(Ok))
            }
            PhysicalPlan::HashJoin { kind, left_keys, right_keys, join_type, build_side, condition, null_aware, left, right } => {
                let (lo, ro) = (self.attrs(left), self.attrs(right));
                let piece = config.batch_size;
                if let Some(State::JoinTable(table)) = self.states.get(&key(plan)) {
                    let (probe_keys, stream, stream_attrs) = match build_side {
                        BuildSide::BuildRight => (left_keys, left, lo),
                        BuildSide::BuildLeft => (right_keys, right, ro),
                    };
                    return Ok(Box::new(self.stream(stream, i)?.flat_map(move |b| -> BatchStream<'s> {
                        match b.and_then(|b| interpreted::join::probe_stream(*join_type, *null_aware, probe_keys, condition.as_ref(), *build_side, table, (stream_attrs, vec![b]), piece)) {
                            Ok(out) => Box::new(out),
                            Err(e) => Box::new(std::iter::once(Err(e))),
                        }
                    })));
                }
                let (l, r) = self.join_inputs(*kind == HashJoinKind::Broadcast, *build_side, left, right, i)?;
                let held = self.reserve(plan);
                deferred_stream(held, move |held| {
                    let out = interpreted::join::hash_join_stream(*join_type, *null_aware, left_keys, right_keys, condition.as_ref(), *build_side, (lo, l(held)?), (ro, r(held)?), piece)?;
                    Ok(Box::new(out) as BatchStream<'s>)
                })
            }
            PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, left, right } => {
                let (lo, ro) = (self.attrs(left), self.attrs(right));
                let (l, r) = self.join_inputs(false, BuildSide::BuildRight, left, right, i)?;
                let held = self.reserve(plan);
                let piece = config.batch_size;
                deferred_stream(held, move |held| {
                    let l = l(held)?;
                    // As Spark's merge join, which pulls the buffered side only for streamed
                    // rows: an empty left partition leaves the right one unsorted and unread
                    // when no right row outlives the join.
                    let r = if !join_type.preserved_sides().1 && l.iter().all(|b| b.num_rows() == 0) { vec![] } else { r(held)? };
                    let out = interpreted::join::sort_merge_join_stream(*join_type, left_keys, right_keys, condition.as_ref(), (lo, l), (ro, r), piece)?;
                    Ok(Box::new(out) as BatchStream<'s>)
                })
            }
            PhysicalPlan::CartesianProduct { condition, left, right } => {
                let (lo, ro) = (self.attrs(left), self.attrs(right));
                let State::Sides(lp, rp) = self.state(plan)? else { return Err(KilnError::internal("cartesian state")) };
                // Every left partition meets every right partition: output partition i * |right| + j.
                let n = rp.len().max(1);
                let (l, r) = (lp.get(i / n).cloned().unwrap_or_default(), rp.get(i % n).cloned().unwrap_or_default());
                let out = interpreted::join::nested_loop_join_stream(JoinType::Inner, condition.as_ref(), (lo, l), (ro, r), config.batch_size)?;
                Box::new(out)
            }
            PhysicalPlan::NestedLoopJoin { join_type, build_side, condition, left, right } => {
                let (lo, ro) = (self.attrs(left), self.attrs(right));
                let (l, r) = self.join_inputs(*join_type != JoinType::FullOuter, *build_side, left, right, i)?;
                let held = self.reserve(plan);
                let piece = config.batch_size;
                deferred_stream(held, move |held| {
                    let out = interpreted::join::nested_loop_join_stream(*join_type, condition.as_ref(), (lo, l(held)?), (ro, r(held)?), piece)?;
                    Ok(Box::new(out) as BatchStream<'s>)
                })
            }
            PhysicalPlan::Sort { order, child, .. } => {
                let input = self.attrs(child);
                let child_stream = self.stream(child, i)?;
                let held = self.reserve(plan);
                deferred(move || interpreted::sort(order, input, collect_reserved(child_stream, &held)?, None))
            }
            PhysicalPlan::Window { window_exprs, partition_by, order_by, child } => {
                let (input, output) = (self.attrs(child), self.attrs(plan));
                let child_stream = self.stream(child, i)?;
                let held = self.reserve(plan);
                deferred(move || interpreted::window(window_exprs, partition_by, order_by, input, output, collect_reserved(child_stream, &held)?))
            }
            PhysicalPlan::CollectLimit { limit, offset, child } | PhysicalPlan::GlobalLimit { limit, offset, child } => {
                // Partitions are pulled in order, and no further once the limit is met.
                let n = self.partitions(child);
                let parts = (0..n).map(move |p| self.stream(child, p)).flat_map(|s| match s {
                    Ok(s) => s,
                    Err(e) => Box::new(std::iter::once(Err(e))),
                });
                limit_stream(offset_stream(Box::new(parts), *offset), *limit)
            }
            PhysicalPlan::LocalLimit { limit, child } => limit_stream(self.stream(child, i)?, *limit),
            PhysicalPlan::Union { children } => {
                // Every child's batches take the union's schema (names of the first child).
                let schema = schema_of(self.attrs(plan));
                let mut rest = i;
                for child in children {
                    let n = self.partitions(child);
                    if rest < n {
                        return Ok(Box::new(self.stream(child, rest)?.map(move |b| {
                            let b = b?;
                            // All columns may be pruned (count(*) over a union): the rows stay.
                            interpreted::make_batch(schema.clone(), b.columns().to_vec(), b.num_rows())
                        })));
                    }
                    rest -= n;
                }
                Box::new(std::iter::empty())
            }
            PhysicalPlan::WholeStageCodegen { child, .. } => match self.states.get(&key(plan)) {
                Some(State::Stage(stage)) => self.stage_stream(stage, child, i)?,
                _ => self.stream(child, i)?,
            },
            // A shuffle stage's partition has one reader; a broadcast's is read by every task.
            PhysicalPlan::QueryStage { output, kind, .. } => {
                let batches = if *kind == QueryStageKind::Shuffle { output.take(i)? } else { output.partition(i)? };
                Box::new(batches.into_iter().map(Ok))
            }
            PhysicalPlan::ShuffleRead { spec, child } => {
                let PhysicalPlan::QueryStage { output, .. } = child.as_ref() else {
                    return Err(KilnError::internal("a shuffle read over something other than a query stage"));
                };
                let batches = match spec.parts.get(i) {
                    Some(ReadPart::Partitions(start, end)) if spec.reads_once() => (*start..*end).map(|p| output.take(p)).collect::<Result<Vec<_>>>()?.concat(),
                    Some(ReadPart::Partitions(start, end)) => (*start..*end).map(|p| output.partition(p)).collect::<Result<Vec<_>>>()?.concat(),
                    Some(ReadPart::Slice { partition, index, of }) => slice_rows(output.partition(*partition)?, *index, *of),
                    None => vec![],
                };
                Box::new(batches.into_iter().map(Ok))
            }
        })
    }

    /// The two sides of partition `i` of a join, drained when the join first runs: for a
    /// broadcast, the whole build side (prepared) with the stream side's partition i; else both
    /// sides' partition i.
    fn join_inputs<'s>(&'s self, broadcast: bool, build_side: BuildSide, left: &'s Arc<PhysicalPlan>, right: &'s Arc<PhysicalPlan>, i: usize) -> Result<(Drain<'s>, Drain<'s>)> {
        let side = |p: &'s Arc<PhysicalPlan>| -> Result<Drain<'s>> {
            let s = self.stream(p, i)?;
            Ok(Box::new(move |held| collect_reserved(s, held)))
        };
        Ok(match (broadcast, build_side) {
            (true, BuildSide::BuildRight) => (side(left)?, self.build_side(right)?),
            (true, BuildSide::BuildLeft) => (self.build_side(left)?, side(right)?),
            (false, _) => (side(left)?, side(right)?),
        })
    }

    /// A broadcast side: the whole child, from the join's or the exchange's prepared state.
    fn build_side<'s>(&'s self, p: &'s Arc<PhysicalPlan>) -> Result<Drain<'s>> {
        let rows = match self.states.get(&key(p)) {
            Some(State::Partitions(parts)) => parts.concat(),
            _ => self.drain_all(p)?.concat(),
        };
        Ok(Box::new(move |_| Ok(rows)))
    }

    /// Partition `i` of a compiled stage. A batch the generated code hands back runs through the
    /// stage's operators interpreted; for an aggregate sink, the partition starts again
    /// interpreted. Errors and results are thus always the interpreter's.
    fn stage_stream<'s>(&'s self, stage: &'s Stage, top: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
        let spec = &stage.spec;
        // The stream side first, when a join's side is this partition's own: no stream row
        // leaves the join nothing to keep, so that side is never run (its Sort never sorts), as
        // Spark's merge join pulls its buffered side only for streamed rows.
        let mut first_input = None;
        if matches!(spec.sink, StageSink::Output { .. }) && stage.builds.iter().any(Option::is_none) {
            let mut input = self.stream(&spec.input_plan, i)?;
            let first = input.by_ref().find(|b| b.as_ref().map_or(true, |b| b.num_rows() > 0));
            let Some(first) = first else { return Ok(Box::new(std::iter::empty())) };
            first_input = Some(Box::new(std::iter::once(first).chain(input)) as BatchStream<'s>);
        }
        // A shuffled join's table is this partition's own; a broadcast's is shared.
        let held = self.reserve(top);
        let tables: Vec<Table<'s>> = spec
            .joins()
            .iter()
            .zip(&stage.builds)
            .map(|(j, b)| match b {
                Some(t) => Ok(Table::Shared(t)),
                None => {
                    let table = BuildTable::new(j, collect_reserved(self.stream(&j.build_plan, i)?, &held)?)?;
                    Ok(Table::Own(table))
                }
            })
            .collect::<Result<_>>()?;
        held.resize(tables.iter().map(|t| match t {
            Table::Own(t) => t.memory_size(),
            Table::Shared(_) => 0,
        }).sum())?;
        match &spec.sink {
            StageSink::Output { .. } => {
                let input = match first_input {
                    Some(input) => input,
                    None => self.stream(&spec.input_plan, i)?,
                };
                // A Sort topping the stage sorts what the operators below it produce.
                let below = match (top.as_ref(), &spec.sort) {
                    (PhysicalPlan::Sort { child, .. }, Some(_)) => child,
                    _ => top,
                };
                let batches = CompiledOutput { exec: self, stage, below, input, tables, _held: held, current: None };
                match &spec.sort {
                    Some(order) => {
                        let attrs = self.attrs(below);
                        let sorted = self.reserve(top);
                        Ok(deferred(move || interpreted::sort(order, attrs, collect_reserved(Box::new(batches), &sorted)?, None)))
                    }
                    None => Ok(Box::new(batches)),
                }
            }
            StageSink::Aggregate { .. } => Ok(deferred(move || {
                let builds: Vec<&BuildTable> = tables.iter().map(Table::get).collect();
                let PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, child } = top.as_ref() else {
                    return Err(KilnError::internal("an aggregate stage not topped by a HashAggregate"));
                };
                let parts = self.task_parts(top, &spec.input_plan, i);
                // An input that cannot be read twice is kept (it was held upstream anyway) in
                // case the interpreter must run it again.
                let keep = !self.replayable(&spec.input_plan);
                let cursor = Cell::new(0);
                // The finished runs' rows, held until handed on.
                let mut out = vec![];
                let out_held = self.reserve(top);
                // One run unless the task is merged (see `run_stream`).
                while cursor.get() < parts.len() {
                    let start = cursor.get();
                    let mut run = self.run_stream(&spec.input_plan, &parts, &cursor);
                    let kept = RefCell::new(vec![]);
                    let kept_held = self.reserve(top);
                    // Up to a share of the memory limit: past it (an input made by a join's
                    // fan-out, held nowhere else) the run streams, and a fallback is an error.
                    let (kept_bytes, lost) = (Cell::new(0u64), Cell::new(false));
                    let mut recorded = run.by_ref().map(|b| {
                        if let (true, false, Ok(b)) = (keep, lost.get(), &b) {
                            let bytes = batch_bytes(b);
                            if kept_bytes.get() + bytes > self.config.memory_limit / 8 {
                                lost.set(true);
                                kept.borrow_mut().clear();
                                kept_held.shrink(kept_bytes.take());
                            } else {
                                kept_held.grow(bytes)?;
                                kept_bytes.set(kept_bytes.get() + bytes);
                                kept.borrow_mut().push(b.clone());
                            }
                        }
                        b
                    });
                    let groups = self.reserve(top);
                    let rows = self.known_rows(&spec.input_plan, &parts);
                    if let Some(o) = crate::codegen::aggregate_partition(spec, &stage.compiled, &mut recorded, &builds, self.config.partial_flush_groups, rows, &|bytes| {
                        // Once per batch, and per chunk of a batch's joined rows.
                        self.check()?;
                        groups.resize(bytes)
                    })? {
                        out_held.grow(o.iter().map(batch_bytes).sum())?;
                        out.extend(o);
                        continue;
                    }
                    drop((recorded, groups));
                    if lost.get() {
                        return Err(KilnError::exec(format!(
                            "the compiled stage {} gave up on its input, which cannot be read again; run it with spark.sql.codegen.wholeStage=false",
                            top.node_string(self.config)
                        )));
                    }
                    // The generated code gave up: this run again, interpreted: what it read,
                    // then the rest (or, replayable, all of it again).
                    self.metrics.partition_reinterpreted();
                    let build_rows: Vec<Vec<RecordBatch>> = builds.iter().map(|t| vec![t.rows().clone()]).collect();
                    let mut agg = HashAggregator::new(*mode, grouping, aggregates, result, self.attrs(child))?.flushing_at(self.config.partial_flush_groups);
                    let again: Box<dyn Iterator<Item = Result<RecordBatch>>> = if keep {
                        Box::new(kept.take().into_iter().map(Ok).chain(run))
                    } else {
                        drop(run);
                        cursor.set(start);
                        Box::new(self.run_stream(&spec.input_plan, &parts, &cursor))
                    };
                    let groups = self.reserve(top);
                    for b in again {
                        for rows in self.interpret_chain(child, &spec.input_plan, vec![b?], &build_rows)? {
                            groups.resize(agg.memory_size_after(rows.num_rows()))?;
                            agg.push(&rows)?;
                            groups.resize(agg.memory_size())?;
                        }
                    }
                    drop(kept_held);
                    let rows = agg.finish()?;
                    out_held.grow(rows.iter().map(batch_bytes).sum())?;
                    out.extend(rows);
                }
                Ok(out)
            })),
        }
    }

    /// Whether streaming a partition of `plan` again gives its batches again (nothing under it
    /// hands a partition off).
    fn replayable(&self, plan: &Arc<PhysicalPlan>) -> bool {
        match plan.as_ref() {
            PhysicalPlan::QueryStage { kind: QueryStageKind::Shuffle, .. } => return false,
            PhysicalPlan::ShuffleRead { spec, .. } => return !spec.reads_once(),
            _ => {}
        }
        match self.states.get(&key(plan)) {
            Some(State::Handoff(..)) => return false,
            Some(State::Partitions(_) | State::JoinTable(_) | State::Sides(..) | State::Scan { .. }) => {
                if !matches!(plan.as_ref(), PhysicalPlan::HashJoin { .. }) {
                    return true;
                }
            }
            Some(State::Stage(stage)) => {
                return self.replayable(&stage.spec.input_plan) && stage.spec.joins().iter().all(|j| j.broadcast || self.replayable(&j.build_plan))
            }
            None => {}
        }
        match plan.as_ref() {
            PhysicalPlan::HashJoin { build_side, left, right, .. } if self.states.contains_key(&key(plan)) => {
                self.replayable(if *build_side == BuildSide::BuildRight { left } else { right })
            }
            _ => plan.children().iter().all(|c| self.replayable(c)),
        }
    }

    /// Runs the operators from `plan` down to (not including) `input` over `batches`, one
    /// partition's batches of `input`'s output: the interpreted twin of a compiled stage.
    /// `builds` holds each join's build rows, joins in stage order from the input up.
    fn interpret_chain(&self, plan: &Arc<PhysicalPlan>, input: &Arc<PhysicalPlan>, batches: Vec<RecordBatch>, builds: &[Vec<RecordBatch>]) -> Result<Vec<RecordBatch>> {
        if Arc::ptr_eq(plan, input) {
            return Ok(batches);
        }
        match plan.as_ref() {
            PhysicalPlan::HashJoin { left_keys, right_keys, join_type, build_side, condition, null_aware, left, right, .. } => {
                let (lo, ro) = (self.attrs(left), self.attrs(right));
                let (below, build) = match builds.split_last() {
                    Some((last, below)) => (below, last.clone()),
                    None => return Err(KilnError::internal("a join in a compiled stage without its build side")),
                };
                let (l, r) = match build_side {
                    BuildSide::BuildRight => (self.interpret_chain(left, input, batches, below)?, build),
                    BuildSide::BuildLeft => (build, self.interpret_chain(right, input, batches, below)?),
                };
                interpreted::hash_join(*join_type, *null_aware, left_keys, right_keys, condition.as_ref(), *build_side, (lo, l), (ro, r))
            }
            // The stream rows of a batch are a sorted run of the left partition: merged with the
            // whole right partition they give that run's output.
            PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, left, right } => {
                let (below, build) = match builds.split_last() {
                    Some((last, below)) => (below, last.clone()),
                    None => return Err(KilnError::internal("a sort-merge join in a compiled stage without its right side")),
                };
                let l = self.interpret_chain(left, input, batches, below)?;
                interpreted::sort_merge_join(*join_type, left_keys, right_keys, condition.as_ref(), (self.attrs(left), l), (self.attrs(right), build))
            }
            PhysicalPlan::Sort { order, child, .. } => {
                let rows = self.interpret_chain(child, input, batches, builds)?;
                interpreted::sort(order, self.attrs(child), rows, None)
            }
            PhysicalPlan::Filter { condition, child } => {
                let rows = self.interpret_chain(child, input, batches, builds)?;
                let attrs = self.attrs(child);
                rows.iter().map(|b| interpreted::filter(condition, attrs, b)).collect()
            }
            PhysicalPlan::Project { list, child } => {
                let rows = self.interpret_chain(child, input, batches, builds)?;
                let (attrs, schema) = (self.attrs(child), schema_of(self.attrs(plan)));
                rows.iter().map(|b| interpreted::project(list, attrs, &schema, b)).collect()
            }
            PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, grouping, aggregates, result, child } => {
                let rows = self.interpret_chain(child, input, batches, builds)?;
                interpreted::hash_aggregate(AggregateMode::Partial, grouping, aggregates, result, self.attrs(child), rows)
            }
            other => Err(KilnError::internal(format!("{} inside a compiled stage", other.node_string(self.config)))),
        }
    }
}

/// A compiled stage's join table: shared (broadcast) or this partition's own.
enum Table<'s> {
    Shared(&'s BuildTable),
    Own(BuildTable),
}

impl Table<'_> {
    fn get(&self) -> &BuildTable {
        match self {
            Table::Shared(t) => t,
            Table::Own(t) => t,
        }
    }
}

/// A compiled output stage's partition: each input batch's rows, a piece at a time when its
/// joins match many rows. A batch the generated code gives up on runs through the stage's
/// operators interpreted (before any of its rows was emitted; after, the interpreter's error).
struct CompiledOutput<'s, 'a> {
    exec: &'s Executor<'a>,
    stage: &'s Stage,
    /// The operator the stage's rows come out of (below a Sort that tops it).
    below: &'s Arc<PhysicalPlan>,
    input: BatchStream<'s>,
    tables: Vec<Table<'s>>,
    /// The partition's own join tables, held while its batches flow.
    _held: Reservation,
    /// The batch being joined, its pieces, and whether one was emitted.
    current: Option<(RecordBatch, crate::codegen::OutputPieces<'s>, bool)>,
}

impl CompiledOutput<'_, '_> {
    /// The interpreter's rows for `batch`: the stage's operators run over it.
    fn interpret(&self, batch: RecordBatch) -> Result<RecordBatch> {
        let (exec, spec) = (self.exec, &self.stage.spec);
        exec.metrics.batch_reinterpreted();
        let build_rows: Vec<Vec<RecordBatch>> = self.tables.iter().map(|t| vec![t.get().rows().clone()]).collect();
        let out = exec.interpret_chain(self.below, &spec.input_plan, vec![batch], &build_rows)?;
        interpreted::concat(exec.attrs(self.below), &out)
    }
}

impl Iterator for CompiledOutput<'_, '_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        use crate::codegen::{Piece, StageOutput};
        loop {
            if let Some((batch, pieces, emitted)) = &mut self.current {
                let builds: Vec<&BuildTable> = self.tables.iter().map(Table::get).collect();
                match pieces.next_piece(&builds) {
                    Ok(Piece::Rows(b)) => {
                        *emitted = true;
                        return Some(Ok(b));
                    }
                    Ok(Piece::End) => self.current = None,
                    Ok(Piece::Failed) => {
                        let (batch, emitted) = (batch.clone(), *emitted);
                        self.current = None;
                        return Some(match (emitted, self.interpret(batch)) {
                            (false, out) => out,
                            (true, Err(e)) => Err(e),
                            (true, Ok(_)) => Err(KilnError::internal("a compiled stage failed part way through a batch the interpreter runs")),
                        });
                    }
                    Err(e) => {
                        self.current = None;
                        return Some(Err(e));
                    }
                }
                continue;
            }
            let b = match self.input.next()? {
                Ok(b) => b,
                Err(e) => return Some(Err(e)),
            };
            let builds: Vec<&BuildTable> = self.tables.iter().map(Table::get).collect();
            let stage = self.stage;
            match crate::codegen::output_pieces(&stage.spec, &stage.compiled, &b, &builds) {
                Ok(StageOutput::Batch(out)) => return Some(Ok(out)),
                Ok(StageOutput::Fallback) => return Some(self.interpret(b)),
                Ok(StageOutput::Pieces(p)) => self.current = Some((b, *p, false)),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// A partition's batches, merged into batches of up to `batch_size` rows when they are small
/// (on average under a quarter of it); left as they are otherwise.
fn merge_slivers(part: Vec<RecordBatch>, batch_size: usize) -> Result<Vec<RecordBatch>> {
    let rows: usize = part.iter().map(|b| b.num_rows()).sum();
    let Some(first) = part.first() else { return Ok(part) };
    if part.len() <= 1 || rows / part.len() >= batch_size / 4 {
        return Ok(part);
    }
    // Runs of whole batches up to `batch_size` rows, each concatenated in one pass: one
    // allocation per column (arrow's `BatchCoalescer` copies string columns batch by batch).
    let schema = first.schema();
    let mut merged = Vec::with_capacity(rows.div_ceil(batch_size));
    let mut run: Vec<RecordBatch> = vec![];
    let mut run_rows = 0;
    for b in part {
        if run_rows + b.num_rows() > batch_size && !run.is_empty() {
            merged.push(arrow::compute::concat_batches(&schema, &run)?);
            run.clear();
            run_rows = 0;
        }
        run_rows += b.num_rows();
        run.push(b);
    }
    if !run.is_empty() {
        merged.push(arrow::compute::concat_batches(&schema, &run)?);
    }
    Ok(merged)
}

/// Partitions each handed to one reader.
fn handoff<'a>(parts: Partitions, held: Reservation) -> State<'a> {
    State::Handoff(parts.into_iter().map(|p| Mutex::new(Some(p))).collect(), held)
}

/// A stream drained, its bytes taken from `held` batch by batch: a breaker's input fails as
/// soon as it would pass the memory limit.
fn collect_reserved(stream: BatchStream, held: &Reservation) -> Result<Vec<RecordBatch>> {
    stream
        .map(|b| {
            let b = b?;
            held.grow(batch_bytes(&b))?;
            Ok(b)
        })
        .collect()
}

/// A stream whose batches `f` computes when first pulled (a per-partition breaker: its input
/// is drained then, not when the plan is opened).
fn deferred<'s>(f: impl FnOnce() -> Result<Vec<RecordBatch>> + 's) -> BatchStream<'s> {
    let mut f = Some(f);
    let mut out: Option<std::vec::IntoIter<RecordBatch>> = None;
    Box::new(std::iter::from_fn(move || {
        if let Some(f) = f.take() {
            match f() {
                Ok(v) => out = Some(v.into_iter()),
                Err(e) => return Some(Err(e)),
            }
        }
        out.as_mut()?.next().map(Ok)
    }))
}

/// A stream that `f` opens when first pulled, holding `held` (what it reserved for its inputs)
/// until it ends: a join drains its sides then and streams its output.
fn deferred_stream<'s>(held: Reservation, f: impl FnOnce(&Reservation) -> Result<BatchStream<'s>> + 's) -> BatchStream<'s> {
    let mut f = Some(f);
    let mut held = Some(held);
    let mut out: Option<BatchStream<'s>> = None;
    Box::new(std::iter::from_fn(move || {
        if let (Some(f), Some(h)) = (f.take(), held.as_ref()) {
            match f(h) {
                Ok(s) => out = Some(s),
                Err(e) => return Some(Err(e)),
            }
        }
        let next = out.as_mut()?.next();
        if next.is_none() {
            // Released when the output ends, not when the stream is dropped.
            out = None;
            held = None;
        }
        next
    }))
}

/// The rows of `input` after the first `n`.
fn offset_stream<'s>(input: BatchStream<'s>, n: usize) -> BatchStream<'s> {
    if n == 0 {
        return input;
    }
    let mut skip = n;
    Box::new(input.filter_map(move |b| match b {
        Ok(b) if skip == 0 => Some(Ok(b)),
        Ok(b) if b.num_rows() <= skip => {
            skip -= b.num_rows();
            None
        }
        Ok(b) => {
            let out = b.slice(skip, b.num_rows() - skip);
            skip = 0;
            Some(Ok(out))
        }
        Err(e) => Some(Err(e)),
    }))
}

/// The first `n` rows of `input`; pulls nothing more once they are there.
fn limit_stream<'s>(input: BatchStream<'s>, n: usize) -> BatchStream<'s> {
    let mut left = n;
    let mut input = input;
    Box::new(std::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        match input.next()? {
            Ok(b) if b.num_rows() <= left => {
                left -= b.num_rows();
                Some(Ok(b))
            }
            Ok(b) => {
                let out = b.slice(0, left);
                left = 0;
                Some(Ok(out))
            }
            Err(e) => Some(Err(e)),
        }
    }))
}

/// A stream whose batches and pulling time are counted on its operator, and which stops a
/// cancelled (or timed out) query before each batch: every operator checks once per batch.
struct Counted<'s> {
    inner: BatchStream<'s>,
    metrics: Arc<OperatorMetrics>,
    nanos: u64,
    control: Option<&'s QueryControl>,
}

impl Iterator for Counted<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(Err(e)) = self.control.map(QueryControl::check) {
            return Some(Err(e));
        }
        let start = std::time::Instant::now();
        let next = self.inner.next();
        self.nanos += start.elapsed().as_nanos() as u64;
        if let Some(Ok(b)) = &next {
            self.metrics.add_batch(b.num_rows());
        }
        next
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.metrics.add_partition(self.nanos);
    }
}

/// Part `index` of `of` equal parts of some batches' rows.
fn slice_rows(batches: Vec<RecordBatch>, index: usize, of: usize) -> Vec<RecordBatch> {
    let total: usize = batches.iter().map(|b| b.num_rows()).sum();
    let of = of.max(1);
    let (from, to) = (total * index / of, total * (index + 1) / of);
    let mut out = vec![];
    let mut at = 0;
    for b in batches {
        let (start, end) = (at, at + b.num_rows());
        at = end;
        let (lo, hi) = (start.max(from), end.min(to));
        if lo < hi {
            out.push(b.slice(lo - start, hi - lo));
        }
    }
    out
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
