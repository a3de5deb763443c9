//! `WholeStageCodegen`: the operators of a pipeline fused into one compiled function (with
//! `spark.sql.codegen.wholeStage` on and the stage compiling), else its operators stream
//! interpreted. Prepared, a compiled stage builds its broadcast joins' tables; a batch the
//! generated code hands back runs through the stage's operators interpreted
//! (`interpret_chain`), so errors and results are always the interpreter's.

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use super::not_this;
use super::hash_aggregate::{aggregate_into, hold_run_output, GroupSpill, Merger};
use super::hash_join::{join_bytes, read_pair, SidesSpill};
use super::sort_merge_join::{hold_within, SortedSidesSpill};
use crate::codegen::{BuildTable, GroupBudget, StageJoinType, StageSink, StageSpec};
use crate::common::spill::SPILL_LEVELS;
use crate::common::control::QueryControl;
use crate::error::{KilnError, Result};
use crate::exec::state::{key, Executor, Stage, State};
use crate::exec::interpreted::{self, schema_of, HashAggregator};
use crate::common::memory::Reservation;
use crate::exec::stream::{collect_reserved, deferred_stream, BatchStream};
use crate::physical::adaptive::batch_bytes;
use crate::physical::{AggregateMode, BuildSide, HashJoinKind, PhysicalPlan, QueryStageKind};

/// Compiles the stage (from the cache) and builds its broadcast tables; or, when it runs
/// interpreted, prepares its operators.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    let PhysicalPlan::WholeStageCodegen { fallback, child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    if let Some(stage) = exec.compile(fallback.is_some(), child)? {
        exec.prepare(&stage.spec.input_plan)?;
        let joins = stage.spec.joins();
        let mut builds: Vec<Option<BuildTable>> = joins.iter().map(|_| None).collect();
        // Last join first: a join's build rows keep only those the later joins'
        // tables match (`StageSpec::matching_joins`).
        for (k, j) in joins.iter().enumerate().rev() {
            exec.prepare(&j.build_plan)?;
            // A broadcast side is one partition: its table is built once.
            if j.broadcast {
                let held = exec.reserve(&j.build_plan);
                let mut rows = exec.drain_reserved(&j.build_plan, &held)?.concat();
                for m in stage.spec.matching_joins(k) {
                    if let Some(table) = builds[m].as_ref().and_then(|b| b.table()) {
                        rows = interpreted::join::rows_matching(rows, &j.build, &joins[m].stream_keys, table)?;
                    }
                }
                let table = BuildTable::new(j, rows)?;
                held.resize(table.memory_size())?;
                exec.held.push(held);
                builds[k] = Some(table);
            }
        }
        let m = exec.ops.of(plan);
        m.set_compiled(true, stage.compiled_micros);
        m.add_build_rows(builds.iter().flatten().map(|b| b.rows().num_rows() as u64).sum());
        exec.states.insert(key(plan), State::Stage(Box::new(Stage { builds, ..stage })));
        return Ok(());
    }
    exec.ops.of(plan).set_compiled(false, 0);
    exec.prepare(child)?;
    Ok(())
}

/// Partition `i`: compiled, or its operators interpreted.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::WholeStageCodegen { child, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    match exec.states.get(&key(plan)) {
        Some(State::Stage(stage)) => exec.stage_stream(stage, child, i),
        _ => exec.stream(child, i),
    }
}

impl<'a> Executor<'a> {
    /// The compiled stage for a `WholeStageCodegen` node's operators, or None when it runs
    /// interpreted (code generation off, or the stage cannot compile: EXPLAIN CODEGEN says why).
    pub(in crate::exec) fn compile(&self, has_fallback: bool, child: &Arc<PhysicalPlan>) -> Result<Option<Stage>> {
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
        let members = spec.members.iter().map(|m| (self.ops.of(&m.node), m.counter, m.times)).collect();
        Ok(Some(Stage { spec, compiled, builds: vec![], compiled_micros, members }))
    }

    /// Partition `i` of a compiled stage. A batch the generated code hands back runs through the
    /// stage's operators interpreted; for an aggregate sink, the partition starts again
    /// interpreted. Errors and results are thus always the interpreter's.
    pub(in crate::exec) fn stage_stream<'s>(&'s self, stage: &'s Stage, top: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
        let out = self.stage_part(stage, top, i, None, 0)?;
        // A Sort topping the stage sorts what the operators below it produce (in every
        // partition pair, when its join spilled).
        match (&stage.spec.sink, &stage.spec.sort) {
            (StageSink::Output { .. }, Some(order)) => Ok(super::sort::external_sort(self, top, order, self.attrs(stage_below(stage, top)), out)),
            _ => Ok(out),
        }
    }

    /// Partition `i` of a compiled stage (below a Sort topping it), or, `pair` given, one
    /// partition pair (stream input, build side) its shuffled join's sides were written to at
    /// `level` (see [`SidesSpill`]).
    fn stage_part<'s>(&'s self, stage: &'s Stage, top: &'s Arc<PhysicalPlan>, i: usize, pair: Option<[BatchStream<'s>; 2]>, level: u32) -> Result<BatchStream<'s>> {
        let spec = &stage.spec;
        let [mut pair_input, mut pair_build] = match pair {
            Some([input, build]) => [Some(input), Some(build)],
            None => [None, None],
        };
        // The stream side first, when a join's side is this partition's own: no stream row
        // leaves the join nothing to keep, so that side is never run (its Sort never sorts), as
        // Spark's merge join pulls its buffered side only for streamed rows.
        if pair_input.is_none() && matches!(spec.sink, StageSink::Output { .. }) && stage.builds.iter().any(Option::is_none) {
            let mut input = self.stream(&spec.input_plan, i)?;
            let first = input.by_ref().find(|b| b.as_ref().map_or(true, |b| b.num_rows() > 0));
            let Some(first) = first else { return Ok(Box::new(std::iter::empty())) };
            pair_input = Some(Box::new(std::iter::once(first).chain(input)) as BatchStream<'s>);
        }
        // A shuffled join's table is this partition's own; a broadcast's is shared.
        let held = self.reserve(top);
        let spillable = level < SPILL_LEVELS && self.spillable_join(stage, top);
        let mut tables: Vec<Table<'s>> = vec![];
        for (j, b) in spec.joins().iter().zip(&stage.builds) {
            if let Some(t) = b {
                tables.push(Table::Shared(t));
                continue;
            }
            let mut build = match pair_build.take() {
                Some(build) => build,
                None => self.stream(&j.build_plan, i)?,
            };
            if !spillable {
                tables.push(Table::Own(BuildTable::new(j, collect_reserved(build, &held)?)?));
                continue;
            }
            if j.merge {
                // A merge join's sorted sides, past the task's share, are written out in their
                // order and run a key range at a time.
                let sides = [(j.stream_keys.as_slice(), self.attrs(&spec.input_plan)), (j.build_keys.as_slice(), j.build.as_slice())];
                let share = held.task_share();
                let (rows, over) = hold_within(&mut build, &held, share, SortedSidesSpill::can_split(&sides))?;
                let Some(over) = over else {
                    tables.push(Table::Own(BuildTable::new(j, rows)?));
                    continue;
                };
                let join = spec.members.iter().map(|m| &m.node).find(|n| matches!(n.as_ref(), PhysicalPlan::SortMergeJoin { .. })).unwrap_or(top);
                let mut spill = SortedSidesSpill::new(self, join, sides);
                spill.write_stream(1, rows.into_iter().map(Ok).chain(std::iter::once(Ok(over))).chain(build))?;
                held.resize(0)?;
                let input = match pair_input.take() {
                    Some(input) => input,
                    None => self.stream(&spec.input_plan, i)?,
                };
                spill.write_stream(0, input)?;
                let pairs = spill.finish(self.reserve(top), self.control, share)?;
                return Ok(Box::new(pairs.flat_map(move |pair| {
                    let part = pair.and_then(|[l, r]| {
                        let sides: [BatchStream<'s>; 2] = [Box::new(l.into_iter().map(Ok)), Box::new(r.into_iter().map(Ok))];
                        self.stage_part(stage, top, i, Some(sides), SPILL_LEVELS)
                    });
                    match part {
                        Ok(out) => out,
                        Err(e) => Box::new(std::iter::once(Err(e))) as BatchStream<'s>,
                    }
                })));
            }
            // Its build side and table held up to the task's share; past it both sides are
            // written out.
            let (share, mut rows, mut data, mut build_rows) = (held.task_share(), vec![], 0, 0);
            while let Some(b) = build.next() {
                let b = b?;
                data += batch_bytes(&b);
                build_rows += b.num_rows();
                let need = join_bytes(data, build_rows, j.build_keys.len());
                if need <= share && held.resize(need).is_ok() {
                    rows.push(b);
                    continue;
                }
                // What it wrote counts on the join.
                let join = spec.members.iter().map(|m| &m.node).find(|n| matches!(n.as_ref(), PhysicalPlan::HashJoin { kind: HashJoinKind::Shuffled, .. })).unwrap_or(top);
                let mut spill = SidesSpill::new(self, join, [(&j.stream_keys, self.attrs(&spec.input_plan)), (&j.build_keys, &j.build)], level);
                spill.write_stream(1, rows.into_iter().chain(std::iter::once(b)).map(Ok))?;
                held.resize(0)?;
                spill.write_stream(1, build)?;
                let input = match pair_input.take() {
                    Some(input) => input,
                    None => self.stream(&spec.input_plan, i)?,
                };
                spill.write_stream(0, input)?;
                let pairs = spill.finish()?;
                return Ok(Box::new(pairs.into_iter().flat_map(move |pair| {
                    let part = read_pair(&pair).and_then(|sides| self.stage_part(stage, top, i, Some(sides), level + 1));
                    match part {
                        // The input file is read as the pair's rows are pulled.
                        Ok(out) => Box::new(out.map(move |b| {
                            let _ = &pair;
                            b
                        })) as BatchStream<'s>,
                        Err(e) => Box::new(std::iter::once(Err(e))),
                    }
                })));
            }
            tables.push(Table::Own(BuildTable::new(j, rows)?));
        }
        held.resize(tables.iter().map(|t| match t {
            Table::Own(t) => t.memory_size(),
            Table::Shared(_) => 0,
        }).sum())?;
        match &spec.sink {
            StageSink::Output { .. } => {
                let input = match pair_input {
                    Some(input) => input,
                    None => self.stream(&spec.input_plan, i)?,
                };
                let below = stage_below(stage, top);
                Ok(Box::new(CompiledOutput { exec: self, stage, below, input, tables, _held: held, current: None }))
            }
            StageSink::Aggregate { .. } => Ok(deferred_stream(self.reserve(top), move |out_held| {
                // The partition's own join tables stay reserved while its groups are made.
                let _tables_held = held;
                self.aggregate_stage(stage, top, i, &tables, out_held, pair_input)
            })),
        }
    }

    /// Whether the stage's shuffled or merge join can write its sides out when its build side
    /// does not fit: it is the stage's only such join and the first over its input (whose
    /// columns its keys read), not a null-aware anti join, under an output or a partial
    /// aggregate (whose groups may come out of each partition pair apart).
    fn spillable_join(&self, stage: &Stage, top: &Arc<PhysicalPlan>) -> bool {
        let spec = &stage.spec;
        let (joins, input) = (spec.joins(), self.attrs(&spec.input_plan));
        let own = stage.builds.iter().enumerate().filter(|(_, b)| b.is_none()).map(|(k, _)| k).collect::<Vec<_>>();
        let sink = match &spec.sink {
            StageSink::Output { .. } => true,
            StageSink::Aggregate { .. } => matches!(top.as_ref(), PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, .. }),
        };
        sink && own == [0]
            && joins.first().is_some_and(|j| {
                j.join_type != StageJoinType::NullAwareAnti && j.stream_keys.iter().all(|k| k.references().iter().all(|id| input.iter().any(|a| a.id == *id)))
            })
    }

    /// Partition `i` of a compiled stage whose sink is a HashAggregate: its groups, held in
    /// `out_held` until pulled. When the generated code gives up, the run starts again
    /// interpreted. Groups the memory budget refuses are written out as the interpreter's
    /// aggregate writes them, and merged the same way (see `hash_aggregate`).
    /// `input`: a partition pair's stream input (see `stage_part`), in place of partition `i`'s.
    fn aggregate_stage<'s>(&'s self, stage: &'s Stage, top: &'s Arc<PhysicalPlan>, i: usize, tables: &[Table<'_>], out_held: &Reservation, mut input: Option<BatchStream<'s>>) -> Result<BatchStream<'s>> {
        let spec = &stage.spec;
        let builds: Vec<&BuildTable> = tables.iter().map(Table::get).collect();
        let PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, child } = top.as_ref() else {
            return Err(KilnError::internal("an aggregate stage not topped by a HashAggregate"));
        };
        let StageSink::Aggregate { keys, finish, output, .. } = &spec.sink else {
            return Err(KilnError::internal("an aggregate stage without an aggregate sink"));
        };
        // The compiled final aggregate's merged buffers are `output`'s columns.
        let merger = match finish.as_deref() {
            Some(PhysicalPlan::HashAggregate { grouping, aggregates, result, .. }) => Some(Merger { grouping, aggregates, result, state: output.clone() }),
            Some(_) => return Err(KilnError::internal("a final aggregate stage without its HashAggregate")),
            None => None,
        };
        let mut spill = GroupSpill::new(self, top, merger);
        let parts = if input.is_some() { vec![i] } else { self.task_parts(top, &spec.input_plan, i) };
        // An input that cannot be read twice is kept (it was held upstream anyway) in
        // case the interpreter must run it again.
        let keep = input.is_some() || !self.replayable(&spec.input_plan);
        let cursor = Cell::new(0);
        // The finished runs' rows, held until handed on.
        let mut out = vec![];
        // One run unless the task is merged (see `run_stream`).
        while cursor.get() < parts.len() {
            let start = cursor.get();
            let mut run: BatchStream<'_> = match input.take() {
                Some(input) => {
                    cursor.set(parts.len());
                    input
                }
                None => Box::new(self.run_stream(&spec.input_plan, &parts, &cursor)),
            };
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
            // The run's rows per operator, kept only if the generated code finishes it.
            let mut counts = vec![0; spec.counters()];
            let mut budget = StageBudget { held: &groups, control: self.control, spill: &mut spill, can_spill: !keys.is_empty() };
            if let Some(o) = crate::codegen::aggregate_partition(spec, &stage.compiled, &mut recorded, &builds, self.config.partial_flush_groups, rows, &mut budget, &mut counts)? {
                stage.add_member_rows(&counts);
                drop((recorded, groups));
                if spill.spilled() && finish.is_some() {
                    return spill.output(o);
                }
                let o = match finish {
                    Some(node) => finish_final(node, output, o)?,
                    None => o,
                };
                hold_run_output(&mut out, o, out_held, &mut spill, *mode)?;
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
            // then the rest (or, replayable, all of it again), its spilled groups forgotten
            // (a merged partial task's earlier runs' stay).
            self.metrics.partition_reinterpreted();
            if *mode != AggregateMode::Partial {
                spill = GroupSpill::new(self, top, Some(Merger { grouping, aggregates, result, state: interpreted::state_attrs(grouping, aggregates) }));
            }
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
            let rows = again.map(|b| b.and_then(|b| self.interpret_chain(child, &spec.input_plan, vec![b], &build_rows, Some(stage)))).flat_map(|r| match r {
                Ok(batches) => batches.into_iter().map(Ok).collect::<Vec<_>>(),
                Err(e) => vec![Err(e)],
            });
            aggregate_into(&mut agg, rows, &groups, Some(&mut spill), self.control)?;
            drop(kept_held);
            if spill.spilled() && *mode != AggregateMode::Partial {
                let rest = agg.take_states()?;
                return spill.output(rest);
            }
            let rows = agg.finish()?;
            hold_run_output(&mut out, rows, out_held, &mut spill, *mode)?;
        }
        if spill.spilled() {
            return spill.output(out);
        }
        Ok(Box::new(out.into_iter().map(Ok)))
    }

    /// Whether streaming a partition of `plan` again gives its batches again (nothing under it
    /// hands a partition off).
    pub(in crate::exec) fn replayable(&self, plan: &Arc<PhysicalPlan>) -> bool {
        match plan.as_ref() {
            // A fragment's input batches come from the host once.
            PhysicalPlan::QueryStage { kind: QueryStageKind::Shuffle, .. } | PhysicalPlan::FragmentInput { .. } => return false,
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
    /// The rows of the operators inside `stage` count as its members' (`Stage::members`).
    pub(in crate::exec) fn interpret_chain(
        &self,
        plan: &Arc<PhysicalPlan>,
        input: &Arc<PhysicalPlan>,
        batches: Vec<RecordBatch>,
        builds: &[Vec<RecordBatch>],
        stage: Option<&Stage>,
    ) -> Result<Vec<RecordBatch>> {
        let out = self.interpret_operator(plan, input, batches, builds, stage)?;
        if let Some(stage) = stage {
            if let Some((m, ..)) = stage.spec.members.iter().position(|m| Arc::ptr_eq(&m.node, plan)).and_then(|i| stage.members.get(i)) {
                m.add_rows(out.iter().map(|b| b.num_rows() as u64).sum());
            }
        }
        Ok(out)
    }

    /// `interpret_chain`'s operator `plan`, over its child's rows.
    fn interpret_operator(&self, plan: &Arc<PhysicalPlan>, input: &Arc<PhysicalPlan>, batches: Vec<RecordBatch>, builds: &[Vec<RecordBatch>], stage: Option<&Stage>) -> Result<Vec<RecordBatch>> {
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
                    BuildSide::BuildRight => (self.interpret_chain(left, input, batches, below, stage)?, build),
                    BuildSide::BuildLeft => (build, self.interpret_chain(right, input, batches, below, stage)?),
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
                let l = self.interpret_chain(left, input, batches, below, stage)?;
                interpreted::sort_merge_join(*join_type, left_keys, right_keys, condition.as_ref(), (self.attrs(left), l), (self.attrs(right), build))
            }
            PhysicalPlan::Sort { order, child, .. } => {
                let rows = self.interpret_chain(child, input, batches, builds, stage)?;
                interpreted::sort(order, self.attrs(child), rows, None)
            }
            PhysicalPlan::Filter { condition, child } => {
                let rows = self.interpret_chain(child, input, batches, builds, stage)?;
                let attrs = self.attrs(child);
                rows.iter().map(|b| interpreted::filter(condition, attrs, b)).collect()
            }
            PhysicalPlan::Project { list, child } => {
                let rows = self.interpret_chain(child, input, batches, builds, stage)?;
                let (attrs, schema) = (self.attrs(child), schema_of(self.attrs(plan)));
                rows.iter().map(|b| interpreted::project(list, attrs, &schema, b)).collect()
            }
            PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, grouping, aggregates, result, child } => {
                let rows = self.interpret_chain(child, input, batches, builds, stage)?;
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
        let out = exec.interpret_chain(self.below, &spec.input_plan, vec![batch], &build_rows, Some(self.stage))?;
        interpreted::concat(exec.attrs(self.below), &out)
    }
}

impl Iterator for CompiledOutput<'_, '_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        use crate::codegen::{Piece, StageOutput};
        // A join's fan-out may make batches long after its last input batch was pulled (and
        // checked): a sort over the stage pulls them directly.
        if let Err(e) = self.exec.control.check() {
            return Some(Err(e));
        }
        loop {
            if let Some((batch, pieces, emitted)) = &mut self.current {
                let builds: Vec<&BuildTable> = self.tables.iter().map(Table::get).collect();
                match pieces.next_piece(&builds) {
                    Ok(Piece::Rows(b, counts)) => {
                        self.stage.add_member_rows(&counts);
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
                Ok(StageOutput::Batch(out, counts)) => {
                    stage.add_member_rows(&counts);
                    return Some(Ok(out));
                }
                Ok(StageOutput::Fallback) => return Some(self.interpret(b)),
                Ok(StageOutput::Pieces(p)) => self.current = Some((b, *p, false)),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// A compiled aggregate's groups held in `held`, written to `spill` when refused.
struct StageBudget<'r, 's> {
    held: &'r Reservation,
    control: &'r QueryControl,
    spill: &'r mut GroupSpill<'s>,
    /// Whether the stage has keys (without, its one group is all it holds).
    can_spill: bool,
}

impl GroupBudget for StageBudget<'_, '_> {
    fn hold(&mut self, bytes: u64) -> Result<bool> {
        // Once per batch, and per chunk of a batch's joined rows.
        self.control.check()?;
        if self.can_spill && bytes > self.held.task_share() {
            return Ok(false);
        }
        match self.held.resize(bytes) {
            Ok(()) => Ok(true),
            Err(_) if self.can_spill => Ok(false),
            Err(refused) => Err(refused),
        }
    }

    fn hold_freed(&mut self, bytes: u64) -> Result<()> {
        self.held.resize_when_freed(bytes, || self.control.check())
    }

    fn spill(&mut self, groups: Vec<RecordBatch>) -> Result<()> {
        self.spill.write(groups)
    }
}

/// A compiled final aggregate's merged buffers (one row per group) finished by the
/// interpreter's aggregator, so the results are exactly its own.
fn finish_final(node: &PhysicalPlan, merged_output: &[crate::expr::Attribute], merged: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
    let PhysicalPlan::HashAggregate { grouping, aggregates, result, .. } = node else {
        return Err(KilnError::internal("a final aggregate stage without its HashAggregate"));
    };
    let [merged] = merged.as_slice() else {
        return Err(KilnError::internal("a final aggregate stage gave more than its merged groups"));
    };
    HashAggregator::new(AggregateMode::Final, grouping, aggregates, result, merged_output)?.finish_distinct(merged)
}

/// The operator a compiled stage's rows come out of: below a Sort that tops it.
fn stage_below<'s>(stage: &Stage, top: &'s Arc<PhysicalPlan>) -> &'s Arc<PhysicalPlan> {
    match (top.as_ref(), &stage.spec.sort) {
        (PhysicalPlan::Sort { child, .. }, Some(_)) => child,
        _ => top,
    }
}
