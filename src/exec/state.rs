//! The state of one run of a plan: what every breaker holds once its input ran (keyed by its
//! node), the run's context pieces, and how many partitions each operator produces. The
//! operators (`exec/operators/`) read and fill it; their registry adds `prepare` and
//! `stream` to the [`Executor`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use crate::codegen::{BuildTable, CompiledStage, StageCache, StageSpec};
use crate::common::memory::Reservation;
use crate::common::spill::SpillablePartition;
use crate::config::Config;
use crate::error::{KilnError, Result};
use crate::exec::context::{ExecContext, FragmentInputs};
use crate::exec::control::QueryControl;
use crate::exec::interpreted::join::HashTable;
use crate::exec::metrics::{CodegenMetrics, PlanMetrics};
use crate::exec::stream::{collect_reserved, BatchStream, Partitions};
use crate::expr::Attribute;
use crate::physical::{output_partitioning, BuildSide, HashJoinKind, PhysicalPlan};
use crate::plan::JoinType;

/// Every operator's output attributes, computed once: breaker state borrows them.
pub(in crate::exec) struct Outputs(HashMap<usize, Vec<Attribute>>);

impl Outputs {
    pub(in crate::exec) fn of(plan: &Arc<PhysicalPlan>) -> Outputs {
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
pub(in crate::exec) fn key(p: &Arc<PhysicalPlan>) -> usize {
    Arc::as_ptr(p) as usize
}

/// A codegen stage ready to run.
pub(in crate::exec) struct Stage {
    pub(in crate::exec) spec: StageSpec,
    pub(in crate::exec) compiled: Arc<CompiledStage>,
    /// Per join of the stage: its table when broadcast (else built per partition).
    pub(in crate::exec) builds: Vec<Option<BuildTable>>,
    /// Its compile time (0: from the cache).
    pub(in crate::exec) compiled_micros: u64,
    /// The metrics of the operators inside it, and where their rows are counted
    /// (`StageSpec::members`).
    pub(in crate::exec) members: Vec<(Arc<crate::physical::metrics::OperatorMetrics>, usize, u64)>,
}

impl Stage {
    /// Adds a run's row counts (`codegen::spec::counter`) to the operators inside the stage.
    pub(in crate::exec) fn add_member_rows(&self, counts: &[u64]) {
        for (m, counter, times) in &self.members {
            m.add_rows(counts.get(*counter).copied().unwrap_or(0) * times);
        }
    }
}

/// What a breaker holds once its input pipeline has run.
pub(in crate::exec) enum State<'a> {
    /// Output partitions read by many (a broadcast's one).
    Partitions(Partitions),
    /// Output partitions each read once (an exchange's, a top-k's): a partition is handed to
    /// its reader and freed with it, so memory shrinks as the consuming pipeline advances
    /// (and the reservation with it).
    Handoff(Vec<Mutex<Option<SpillablePartition>>>, Reservation),
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

/// One run of a plan.
pub(in crate::exec) struct Executor<'a> {
    pub(in crate::exec) config: &'a Config,
    pub(in crate::exec) outputs: &'a Outputs,
    pub(in crate::exec) states: HashMap<usize, State<'a>>,
    pub(in crate::exec) cache: &'a StageCache,
    pub(in crate::exec) metrics: &'a CodegenMetrics,
    pub(in crate::exec) ops: &'a PlanMetrics,
    /// The run's cancel flag, deadline and progress counters.
    pub(in crate::exec) control: &'a QueryControl,
    /// A plan fragment's inputs.
    pub(in crate::exec) inputs: &'a FragmentInputs,
    /// What the run's shared breaker states hold (broadcasts, join tables), until it ends.
    pub(in crate::exec) held: Vec<Reservation>,
    /// Per broadcast inner hash join: the joins above it in its pipeline whose tables its build
    /// rows must match, with their stream keys (over its build columns).
    pub(in crate::exec) matching: HashMap<usize, Vec<(usize, Vec<crate::expr::Expr>)>>,
    /// Partial HashAggregates feeding an exchange that run as fewer tasks than their input has
    /// partitions (see `merge_partial_aggregate`): the task count.
    pub(in crate::exec) merged: HashMap<usize, usize>,
}

impl<'a> Executor<'a> {
    pub(in crate::exec) fn new(ctx: &'a ExecContext<'a>, outputs: &'a Outputs) -> Executor<'a> {
        let (config, cache, metrics, ops) = (ctx.config, ctx.cache, ctx.metrics, ctx.ops);
        Executor { config, outputs, states: HashMap::new(), cache, metrics, ops, control: &ctx.control, inputs: &ctx.inputs, held: vec![], matching: HashMap::new(), merged: HashMap::new() }
    }

    /// An empty reservation of the query's memory, for what `plan` holds.
    pub(in crate::exec) fn reserve(&self, plan: &Arc<PhysicalPlan>) -> Reservation {
        Reservation::new(self.control.memory(), plan)
    }

    /// Every partition of `plan`, drained, their bytes taken from `held` as they arrive.
    pub(in crate::exec) fn drain_reserved(&self, plan: &Arc<PhysicalPlan>, held: &Reservation) -> Result<Partitions> {
        self.run_partitions(plan, |_, s| collect_reserved(s, held))
    }

    pub(in crate::exec) fn attrs(&self, p: &Arc<PhysicalPlan>) -> &'a [Attribute] {
        self.outputs.0.get(&key(p)).map(Vec::as_slice).unwrap_or(&[])
    }

    pub(in crate::exec) fn state(&self, p: &Arc<PhysicalPlan>) -> Result<&State<'a>> {
        self.states.get(&key(p)).ok_or_else(|| KilnError::internal(format!("{} ran before its input", p.node_string(self.config))))
    }

    /// The number of partitions `stream` produces for `plan`.
    pub(in crate::exec) fn partitions(&self, plan: &Arc<PhysicalPlan>) -> usize {
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
            PhysicalPlan::Coalesce { partitions, child } => (*partitions).min(self.partitions(child)).max(1),
            PhysicalPlan::ShuffleRead { spec, .. } => spec.parts.len(),
            PhysicalPlan::Union { children } => children.iter().map(|c| self.partitions(c)).sum(),
            _ => output_partitioning(plan).num_partitions().max(1),
        }
    }

    /// Every partition of `plan` handed to `sink` with its index, in parallel.
    pub(in crate::exec) fn run_partitions<T: Send>(&self, plan: &Arc<PhysicalPlan>, sink: impl Fn(usize, BatchStream) -> Result<T> + Sync + Send) -> Result<Vec<T>> {
        (0..self.partitions(plan)).into_par_iter().map(|i| sink(i, self.stream(plan, i)?)).collect()
    }

    /// The partitions of `plan` in at most `runs` contiguous runs, each run's partitions read
    /// one after another as one stream and handed to `sink` with the run's index, in parallel.
    pub(in crate::exec) fn run_partition_runs<T: Send>(&self, plan: &Arc<PhysicalPlan>, runs: usize, sink: impl Fn(usize, BatchStream) -> Result<T> + Sync + Send) -> Result<Vec<T>> {
        let n = self.partitions(plan);
        let runs = runs.clamp(1, n.max(1));
        (0..runs)
            .into_par_iter()
            .map(|r| {
                // Each partition's stream is dropped (its memory given back) before the next opens.
                let mut parts = r * n / runs..(r + 1) * n / runs;
                let mut current: Option<BatchStream> = None;
                let stream: BatchStream = Box::new(std::iter::from_fn(move || loop {
                    if let Some(b) = current.as_mut().and_then(|s| s.next()) {
                        return Some(b);
                    }
                    current = None;
                    match self.stream(plan, parts.next()?) {
                        Ok(s) => current = Some(s),
                        Err(e) => return Some(Err(e)),
                    }
                }));
                sink(r, stream)
            })
            .collect()
    }

    /// Every partition of `plan`, drained.
    pub(in crate::exec) fn drain_all(&self, plan: &Arc<PhysicalPlan>) -> Result<Partitions> {
        self.run_partitions(plan, |_, s| s.collect())
    }
}

pub(in crate::exec) fn handoff<'a>(parts: Vec<SpillablePartition>, held: Reservation) -> State<'a> {
    State::Handoff(parts.into_iter().map(|p| Mutex::new(Some(p))).collect(), held)
}

