//! Adaptive query execution (Spark's `AdaptiveSparkPlanExec`): a plan with exchanges runs one
//! query stage at a time — an exchange whose input has no exchange left to run — bottom-up.
//! A finished stage becomes a `QueryStage` leaf holding its output and real sizes, and the
//! rest of the plan is re-planned from them (`physical::adaptive`) before the next stage
//! starts: shuffled joins with a small finished side become broadcast joins, the shuffles a
//! stage reads are coalesced (and a skewed join partition split) just before it runs. Each
//! stage runs on the ordinary executor, compiled or interpreted as the session says. A
//! broadcast the memory budget refuses is re-planned as a shuffled hash join, which spills.

use std::sync::Arc;

use super::stream::Partitions;
use crate::config::Config;
use crate::error::Result;
use crate::common::memory::Reservation;
use crate::common::spill::SpillablePartition;
use crate::exec::context::ExecContext;
use crate::physical::adaptive::{coalesce, convert_joins, estimated_bytes, shuffle_origin, skew_join_reads, ShuffleReadSpec, StageOutput};
use crate::physical::{eliminate_null_aware_anti_joins, ensure_requirements, next_plan_id, HashJoinKind, Partitioning, PhysicalPlan, QueryStageKind, ShuffleOrigin};

/// What an adaptive run returns: the rows, and the plan that actually ran.
pub struct AdaptiveRun {
    /// The result partitions.
    pub partitions: Partitions,
    /// `ResultQueryStage` over the final plan: the query stages that ran, their shuffle reads
    /// and the join strategies chosen at run time.
    pub final_plan: Arc<PhysicalPlan>,
}

pub use crate::physical::adaptive::is_adaptive;

/// What running a stage gives: its output partitions, and the reservation that holds them
/// when it is the stage's own exchange's.
pub type StageRun = (Vec<SpillablePartition>, Option<Reservation>);

/// Runs `initial` stage by stage, re-planning between stages; each stage runs through
/// `run_stage` (the executor).
pub fn execute_adaptive(initial: &Arc<PhysicalPlan>, ctx: &ExecContext, run_stage: &dyn Fn(&Arc<PhysicalPlan>, &ExecContext) -> Result<StageRun>) -> Result<AdaptiveRun> {
    let mut config = ctx.config;
    // Once a broadcast was refused, no join becomes one again (it would be refused again).
    let no_broadcast = Config { adaptive_broadcast_threshold: Some(-1), ..config.clone() };
    let mut plan = strip_codegen(initial);
    let (mut stage_id, mut codegen_id) = (0, 1);
    let mut estimates = Estimates::default();
    // Finished stages' outputs count against the query's memory budget until released.
    let memory = ctx.memory().clone();
    while let Some(exchange) = next_stage(&plan, &mut estimates) {
        let kind = match exchange.as_ref() {
            PhysicalPlan::BroadcastExchange { .. } => QueryStageKind::Broadcast,
            _ => QueryStageKind::Shuffle,
        };
        let partitioning = match exchange.as_ref() {
            PhysicalPlan::Exchange { partitioning, .. } => partitioning.clone(),
            _ => Partitioning::SinglePartition,
        };
        let ran = prepare_stage(&exchange, config, &mut codegen_id);
        let (parts, held) = match run_stage(&ran, ctx) {
            Err(e) if kind == QueryStageKind::Broadcast && e.error_class() == Some("UNABLE_TO_ACQUIRE_MEMORY") => match shuffle_instead(&plan, &exchange, config) {
                Some(shuffled) => {
                    plan = shuffled;
                    config = &no_broadcast;
                    ctx.control.replanned_to(&plan);
                    continue;
                }
                None => return Err(e),
            },
            run => run?,
        };
        let output = Arc::new(StageOutput::new(parts, partitioning));
        output.hold(held.unwrap_or_else(|| Reservation::new(&memory, &exchange)))?;
        let stage = Arc::new(PhysicalPlan::QueryStage { id: stage_id, kind, plan: ran.clone(), output });
        stage_id += 1;
        plan = replace(&plan, &exchange, &stage);
        release_inputs(&ran, &plan);
        plan = reoptimize(&plan, config);
        ctx.control.replanned_to(&plan);
    }
    let ran = prepare_stage(&plan, config, &mut codegen_id);
    let partitions = run_stage(&ran, ctx)?.0.into_iter().map(SpillablePartition::read_all).collect::<Result<_>>()?;
    release_inputs(&ran, &Arc::new(PhysicalPlan::LocalTableScan { output: vec![], data: vec![] }));
    let output = Arc::new(StageOutput::new(vec![], Partitioning::SinglePartition));
    Ok(AdaptiveRun { partitions, final_plan: Arc::new(PhysicalPlan::QueryStage { id: stage_id, kind: QueryStageKind::Result, plan: ran, output }) })
}

/// `plan` with the broadcast hash join that reads `broadcast` (refused by the memory budget)
/// made a shuffled hash join, both sides shuffled on their keys; None when the join cannot
/// be shuffled (a null-aware anti join, or a join without keys).
fn shuffle_instead(plan: &Arc<PhysicalPlan>, broadcast: &Arc<PhysicalPlan>, config: &Config) -> Option<Arc<PhysicalPlan>> {
    fn walk(p: &Arc<PhysicalPlan>, broadcast: &Arc<PhysicalPlan>, found: &mut bool) -> Arc<PhysicalPlan> {
        if let PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, left_keys, right_keys, join_type, build_side, condition, null_aware: false, left, right } = p.as_ref() {
            let unwrap = |side: &Arc<PhysicalPlan>| match side.as_ref() {
                PhysicalPlan::BroadcastExchange { child, .. } if Arc::ptr_eq(side, broadcast) => Some(child.clone()),
                _ => None,
            };
            let (l, r) = (unwrap(left), unwrap(right));
            if l.is_some() || r.is_some() {
                *found = true;
                return Arc::new(PhysicalPlan::HashJoin {
                    kind: HashJoinKind::Shuffled,
                    left_keys: left_keys.clone(),
                    right_keys: right_keys.clone(),
                    join_type: *join_type,
                    build_side: *build_side,
                    condition: condition.clone(),
                    null_aware: false,
                    left: l.unwrap_or_else(|| left.clone()),
                    right: r.unwrap_or_else(|| right.clone()),
                });
            }
        }
        p.with_children_if_changed(p.children().into_iter().map(|c| walk(c, broadcast, found)).collect())
    }
    let mut found = false;
    let shuffled = walk(plan, broadcast, &mut found);
    found.then(|| ensure_requirements(&shuffled, config.shuffle_partitions))
}

/// The plan without codegen stages: they are formed per query stage, just before it runs.
fn strip_codegen(plan: &Arc<PhysicalPlan>) -> Arc<PhysicalPlan> {
    match plan.as_ref() {
        PhysicalPlan::WholeStageCodegen { child, .. } => strip_codegen(child),
        PhysicalPlan::QueryStage { .. } => plan.clone(),
        other => plan.with_children_if_changed(other.children().into_iter().map(strip_codegen).collect()),
    }
}

/// The next exchange to run: one with no exchange left under it. Broadcasts first (small, and
/// every join waiting on one needs it), then the shuffle with the least data, so that a join
/// whose small side turns out small enough to broadcast never shuffles its large side.
fn next_stage(plan: &Arc<PhysicalPlan>, estimates: &mut Estimates) -> Option<Arc<PhysicalPlan>> {
    fn ready(p: &Arc<PhysicalPlan>, out: &mut Vec<Arc<PhysicalPlan>>) -> bool {
        // Returns whether the subtree has an exchange still to run.
        let mut below = false;
        for c in p.children() {
            below |= ready(c, out);
        }
        match p.as_ref() {
            PhysicalPlan::Exchange { .. } | PhysicalPlan::BroadcastExchange { .. } => {
                if !below {
                    out.push(p.clone());
                }
                true
            }
            _ => below,
        }
    }
    let mut candidates = vec![];
    ready(plan, &mut candidates);
    if candidates.len() <= 1 {
        // No choice to make: skip the estimate (an in-memory table's size walks its batches).
        return candidates.pop();
    }
    candidates.into_iter().min_by_key(|e| (!matches!(e.as_ref(), PhysicalPlan::BroadcastExchange { .. }), estimates.of(e)))
}

/// The estimated input of each exchange still to run, computed once per run (an in-memory
/// table's size walks its batches). Holds the exchanges, so a key is never a freed node's.
#[derive(Default)]
struct Estimates(Vec<(Arc<PhysicalPlan>, u64)>);

impl Estimates {
    fn of(&mut self, exchange: &Arc<PhysicalPlan>) -> u64 {
        if let Some((_, bytes)) = self.0.iter().find(|(e, _)| Arc::ptr_eq(e, exchange)) {
            return *bytes;
        }
        let bytes = estimated_bytes(exchange);
        self.0.push((exchange.clone(), bytes));
        bytes
    }
}

/// `plan` with the node `old` replaced by `new`.
fn replace(plan: &Arc<PhysicalPlan>, old: &Arc<PhysicalPlan>, new: &Arc<PhysicalPlan>) -> Arc<PhysicalPlan> {
    if Arc::ptr_eq(plan, old) {
        return new.clone();
    }
    plan.with_children_if_changed(plan.children().into_iter().map(|c| replace(c, old, new)).collect())
}

/// Re-plans what has not run from what has: null-aware anti joins with a NULL build key
/// emptied, joins converted, then the exchanges the new plan needs (a converted join's
/// output is no longer clustered on its keys).
fn reoptimize(plan: &Arc<PhysicalPlan>, config: &Config) -> Arc<PhysicalPlan> {
    let plan = &eliminate_null_aware_anti_joins(plan).0;
    let (converted, changed) = convert_joins(plan, config, true, &mut next_plan_id);
    if !changed {
        return plan.clone();
    }
    let local = ensure_requirements(&converted, config.shuffle_partitions);
    // `OptimizeShuffleWithLocalRead`: a local read loses the hash layout; when an operator
    // above needed it (another join on the same key), read the stage as it is instead.
    if pending_exchanges(&local) == pending_exchanges(&converted) {
        return local;
    }
    let (kept, _) = convert_joins(plan, config, false, &mut next_plan_id);
    let kept = ensure_requirements(&kept, config.shuffle_partitions);
    if pending_exchanges(&kept) < pending_exchanges(&local) {
        kept
    } else {
        local
    }
}

/// Exchanges still to run.
fn pending_exchanges(p: &PhysicalPlan) -> usize {
    usize::from(matches!(p, PhysicalPlan::Exchange { .. })) + p.children().into_iter().map(|c| pending_exchanges(c)).sum::<usize>()
}

/// The query stage rooted at `root`, ready to run: its skewed joins split, the shuffles it
/// reads coalesced, its operators fused into codegen stages.
fn prepare_stage(root: &Arc<PhysicalPlan>, config: &Config, codegen_id: &mut usize) -> Arc<PhysicalPlan> {
    let (mut plan, skewed) = split_skew(root, config);
    if config.adaptive_coalesce_enabled && !skewed {
        plan = coalesce_reads(&plan, config);
    }
    if config.whole_stage_codegen {
        let (collapsed, next) = crate::codegen::collapse_codegen_stages_from(&plan, *codegen_id);
        *codegen_id = next;
        collapsed
    } else {
        plan
    }
}

/// `OptimizeSkewedJoin` over the sort-merge joins of one stage whose sides are finished
/// shuffles; returns whether one was split.
fn split_skew(plan: &Arc<PhysicalPlan>, config: &Config) -> (Arc<PhysicalPlan>, bool) {
    if let PhysicalPlan::SortMergeJoin { join_type, left, right, .. } = plan.as_ref() {
        if let (Some((ls, lo)), Some((rs, ro))) = (sorted_stage(left), sorted_stage(right)) {
            if let Some((lspec, rspec)) = skew_join_reads(*join_type, &lo.bytes, &ro.bytes, config) {
                let left = wrap_stage(left, ls, lspec);
                let right = wrap_stage(right, rs, rspec);
                return (Arc::new(plan.with_new_children(vec![left, right])), true);
            }
        }
    }
    let mut skewed = false;
    let children: Vec<_> = plan
        .children()
        .into_iter()
        .map(|c| {
            let (c, s) = split_skew(c, config);
            skewed |= s;
            c
        })
        .collect();
    (plan.with_children_if_changed(children), skewed)
}

/// A sort-merge join side: a local Sort over a finished shuffle stage.
fn sorted_stage(side: &Arc<PhysicalPlan>) -> Option<(&Arc<PhysicalPlan>, &StageOutput)> {
    match side.as_ref() {
        PhysicalPlan::Sort { global: false, child, .. } => match child.as_ref() {
            PhysicalPlan::QueryStage { kind: QueryStageKind::Shuffle, output, .. } => Some((child, output)),
            _ => None,
        },
        _ => None,
    }
}

/// `side` with `stage` under it read through `spec`.
fn wrap_stage(side: &Arc<PhysicalPlan>, stage: &Arc<PhysicalPlan>, spec: ShuffleReadSpec) -> Arc<PhysicalPlan> {
    let read = Arc::new(PhysicalPlan::ShuffleRead { spec, child: stage.clone() });
    replace(side, stage, &read)
}

/// `CoalesceShufflePartitions`: the finished shuffles this stage reads directly, when they all
/// have the same width, read as the same fewer contiguous partitions.
fn coalesce_reads(plan: &Arc<PhysicalPlan>, config: &Config) -> Arc<PhysicalPlan> {
    fn direct<'a>(p: &'a Arc<PhysicalPlan>, out: &mut Vec<&'a Arc<PhysicalPlan>>) {
        match p.as_ref() {
            PhysicalPlan::QueryStage { kind: QueryStageKind::Shuffle, .. } => out.push(p),
            // Already read another way (local, skewed).
            PhysicalPlan::ShuffleRead { .. } => {}
            _ => p.children().into_iter().for_each(|c| direct(c, out)),
        }
    }
    let mut stages = vec![];
    direct(plan, &mut stages);
    let outputs: Vec<&StageOutput> = stages
        .iter()
        .filter_map(|s| match s.as_ref() {
            PhysicalPlan::QueryStage { output, .. } => Some(output.as_ref()),
            _ => None,
        })
        .collect();
    // Spark's CoalesceShufflePartitions: only when no stage is a repartition to a number.
    if stages.iter().any(|s| shuffle_origin(s) == ShuffleOrigin::RepartitionByNum) {
        return plan.clone();
    }
    let Some(width) = outputs.first().map(|o| o.num_partitions()) else { return plan.clone() };
    if width <= 1 || outputs.iter().any(|o| o.num_partitions() != width) {
        return plan.clone();
    }
    let sizes: Vec<&[u64]> = outputs.iter().map(|o| o.bytes.as_slice()).collect();
    let ranges = coalesce(&sizes, config);
    if ranges.len() >= width {
        return plan.clone();
    }
    let spec = ShuffleReadSpec::ranges(ranges, false);
    let mut out = plan.clone();
    let stages: Vec<Arc<PhysicalPlan>> = stages.into_iter().cloned().collect();
    for stage in &stages {
        let read = Arc::new(PhysicalPlan::ShuffleRead { spec: spec.clone(), child: stage.clone() });
        out = replace(&out, stage, &read);
    }
    out
}

/// Frees the outputs of the stages `ran` read that the plan still to run does not read.
fn release_inputs(ran: &Arc<PhysicalPlan>, rest: &Arc<PhysicalPlan>) {
    fn stages(p: &Arc<PhysicalPlan>, out: &mut Vec<Arc<StageOutput>>) {
        match p.as_ref() {
            PhysicalPlan::QueryStage { output, .. } => out.push(output.clone()),
            other => other.children().into_iter().for_each(|c| stages(c, out)),
        }
    }
    let (mut read, mut pending) = (vec![], vec![]);
    stages(ran, &mut read);
    stages(rest, &mut pending);
    for output in read {
        if !pending.iter().any(|p| Arc::ptr_eq(p, &output)) {
            output.release();
        }
    }
}
