//! The operators a stage compiles, one file each (produce/consume, as Spark's
//! `doProduce`/`doConsume`): what each adds to the flattened `StageSpec` (`flatten`), and the IR
//! it emits for a row. This file is their registry.

use std::sync::Arc;

use std::collections::HashMap;

use super::spec::{column_index, counter, join_condition, JoinSpec, MemberRows, OutputColumn, StageJoinType, StageSink, StageSpec};
use crate::expr::{Attribute, Expr, ExprId};
use crate::physical::{AggregateMode, PhysicalPlan};

pub(super) mod expand;
pub(super) mod filter;
pub(super) mod group_lookup;
pub(super) mod hash_aggregate;
pub(super) mod hash_probe;
pub(super) mod merge_join;
pub(super) mod project;
pub(super) mod sort;

/// A stage being flattened, its operators bottom-up: what those below the current one made of
/// it. Each operator's `flatten` (under `operators/`) reads and extends it.
pub(super) struct Flattening {
    /// The stage's top operator.
    pub top: Arc<PhysicalPlan>,
    /// The stage's input columns.
    pub input: Vec<Attribute>,
    /// What each column seen so far stands for, over the input and the build sides.
    pub env: HashMap<ExprId, Expr>,
    /// The input's columns, then each build side's.
    pub all_columns: Vec<Attribute>,
    /// Conjuncts of the Filters below any join.
    pub conditions: Vec<Expr>,
    /// The joins, bottom-up.
    pub joins: Vec<JoinSpec>,
    /// The top operator's sink, once it is flattened.
    pub sink: Option<StageSink>,
    /// A Sort topping the stage.
    pub sort: Option<Vec<crate::expr::SortOrder>>,
    /// An Expand under the top aggregate: its output columns, and each projection over the input.
    pub expand: Option<(Vec<Attribute>, Vec<Vec<Expr>>)>,
    /// The operators flattened so far (below the top) and where their rows are counted.
    pub members: Vec<MemberRows>,
}

impl Flattening {
    /// Adds a join whose build side `build_plan` produces `build`: its columns follow those
    /// seen so far, and `condition` (over the joined row) becomes the join's extra condition.
    #[allow(clippy::too_many_arguments)]
    pub fn push_join(
        &mut self,
        join_type: StageJoinType,
        condition: Option<&Expr>,
        build_plan: &Arc<PhysicalPlan>,
        build: Vec<Attribute>,
        stream_keys: Vec<Expr>,
        build_keys: &[Expr],
        broadcast: bool,
        merge: bool,
    ) -> Result<(), String> {
        let condition = join_condition(condition, &self.env)?;
        let offset = self.all_columns.len();
        self.all_columns.extend(build.iter().cloned());
        self.joins.push(JoinSpec {
            join_type,
            condition,
            filters: vec![],
            offset,
            build_plan: build_plan.clone(),
            build,
            stream_keys,
            build_keys: build_keys.to_vec(),
            broadcast,
            merge,
        });
        Ok(())
    }
}

impl StageSpec {
    /// Flattens the operator chain under a stage; the error says why it cannot be compiled.
    pub fn from_plan(top: &Arc<PhysicalPlan>) -> Result<StageSpec, String> {
        let (chain, input_plan) = stage_chain(top).ok_or("not a fused operator")?;
        Self::from_chain(top, &chain, input_plan)
    }

    /// Flattens `chain` (top first) over `input_plan`: each operator, bottom-up, adds what it
    /// does to the stage (`operators::flatten`).
    fn from_chain(top: &Arc<PhysicalPlan>, chain: &[Arc<PhysicalPlan>], input_plan: Arc<PhysicalPlan>) -> Result<StageSpec, String> {
        let input = input_plan.output();
        let mut f = Flattening {
            top: top.clone(),
            env: input.iter().map(|a| (a.id, a.expr())).collect(),
            all_columns: input.clone(),
            input,
            conditions: vec![],
            joins: vec![],
            sink: None,
            sort: None,
            expand: None,
            members: vec![],
        };
        for node in chain.iter().rev() {
            flatten(node, &mut f)?;
            count_rows(node, &mut f);
        }
        let Flattening { input, conditions, joins, all_columns, sink, sort, expand, members, .. } = f;
        let sink = match sink {
            Some(s) => s,
            // A stage topped by a Filter or a join outputs its operator's columns; a Sort over
            // its input alone passes the columns through.
            None => {
                let output = top.output();
                let columns = output
                    .iter()
                    .map(|a| match column_index(&all_columns, a.id) {
                        Some(i) => Ok(OutputColumn::Copied(i)),
                        None => Err(format!("output column {a} not in the stage input")),
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                StageSink::Output { columns, output }
            }
        };
        let expand = expand.map(|x| expand::instantiate(&x, &sink)).transpose()?;
        Ok(StageSpec { input_plan, input, conditions, sink, joins, sort, expand, all_columns, members })
    }

    /// The operators of the stage topped by `top` and its input (see `stage_chain`).
    pub fn chain(top: &Arc<PhysicalPlan>) -> Option<(Vec<Arc<PhysicalPlan>>, Arc<PhysicalPlan>)> {
        stage_chain(top)
    }

}

/// The operators of the stage topped by `top`, top first, and the operator it reads from:
/// Filters, Projects and hash joins below the top, followed through each broadcast join's
/// stream side (as Spark's CollapseCodegenStages: a shuffled join's inputs start stages of
/// their own). None if `top` does not fuse.
pub(super) fn stage_chain(top: &Arc<PhysicalPlan>) -> Option<(Vec<Arc<PhysicalPlan>>, Arc<PhysicalPlan>)> {
    let with_expand = chain_below(top, true)?;
    // An Expand joins its aggregate's stage only when the stage then compiles: else the stage
    // starts above it and the operators below it still compile (as before Expand compiled).
    if with_expand.0.iter().any(|n| matches!(n.as_ref(), PhysicalPlan::Expand { .. })) && StageSpec::from_chain(top, &with_expand.0, with_expand.1.clone()).is_err() {
        return chain_below(top, false);
    }
    // An aggregate of a function generated code lacks (collect_list, bloom_filter_agg: Spark's
    // ObjectHashAggregate, outside its stages too) stays out of the stage, so the operators
    // below it still compile, as a stage of their own.
    if with_expand.0.len() > 1 && aggregate_outside_reason(top).is_some() {
        return None;
    }
    Some(with_expand)
}

/// Why an aggregate runs interpreted outside the stage below it: one of its functions is one
/// generated code lacks.
pub(super) fn aggregate_outside_reason(node: &PhysicalPlan) -> Option<String> {
    match node {
        PhysicalPlan::HashAggregate { aggregates, .. } => aggregates.iter().find_map(|a| hash_aggregate::compiles(a).err()),
        _ => None,
    }
}

/// `stage_chain`, an Expand under the top partial aggregate followed when `expand` is set.
fn chain_below(top: &Arc<PhysicalPlan>, expand: bool) -> Option<(Vec<Arc<PhysicalPlan>>, Arc<PhysicalPlan>)> {
    if !super::fuses(top) {
        return None;
    }
    let mut chain = vec![top.clone()];
    let mut cur = top.clone();
    loop {
        let child = match cur.as_ref() {
            PhysicalPlan::Filter { child, .. }
            | PhysicalPlan::Project { child, .. }
            | PhysicalPlan::HashAggregate { child, .. }
            | PhysicalPlan::Expand { child, .. }
            | PhysicalPlan::Sort { child, .. } => child.clone(),
            PhysicalPlan::HashJoin { kind, .. } => {
                let stream = super::stream_child(&cur)?.clone();
                if *kind != crate::physical::HashJoinKind::Broadcast {
                    return Some((chain, stream));
                }
                stream
            }
            // Its left side is sorted (a Sort stage, or another join's ordered output).
            PhysicalPlan::SortMergeJoin { left, .. } => return Some((chain, left.clone())),
            _ => return None,
        };
        // A sort-merge join's right side is per partition, so an aggregate over it could not
        // keep one table across a task's partitions (`merge_partial_aggregate`): under an
        // aggregate the join is a stage of its own, whose rows the aggregate's stage reads.
        let merge_under_aggregate = matches!(child.as_ref(), PhysicalPlan::SortMergeJoin { .. }) && matches!(top.as_ref(), PhysicalPlan::HashAggregate { .. });
        let joinable = super::fuses(&child) && matches!(child.as_ref(), PhysicalPlan::HashJoin { .. } | PhysicalPlan::SortMergeJoin { .. }) && !merge_under_aggregate;
        let expands = expand && Arc::ptr_eq(&cur, top) && expand::fuses_under(top, &child);
        if matches!(child.as_ref(), PhysicalPlan::Filter { .. } | PhysicalPlan::Project { .. }) || joinable || expands {
            chain.push(child.clone());
            cur = child;
        } else {
            return Some((chain, child));
        }
    }
}

/// Records where `node`'s output rows are counted (just flattened, above the members so far):
/// a Filter's are the rows passing the conditions of its level (below every join, or over the
/// last join's rows), a join's its rows out, a Project's those of the operator below it, an
/// Expand's those times its projections. The top operator's rows are the stage's own.
fn count_rows(node: &Arc<PhysicalPlan>, f: &mut Flattening) {
    if Arc::ptr_eq(node, &f.top) {
        return;
    }
    let below = f.members.last().map_or((counter::INPUT, 1), |m| (m.counter, m.times));
    let (counter, times) = match node.as_ref() {
        PhysicalPlan::Filter { .. } => {
            let level = f.joins.len().checked_sub(1).map_or(counter::FILTERED, counter::join_filtered);
            // Filters at one level are tested together: only the rows above the last are known.
            f.members.retain(|m| m.counter != level);
            (level, 1)
        }
        PhysicalPlan::HashJoin { .. } | PhysicalPlan::SortMergeJoin { .. } => (counter::joined(f.joins.len().saturating_sub(1)), 1),
        PhysicalPlan::Expand { projections, .. } => (below.0, below.1 * projections.len() as u64),
        _ => below,
    };
    f.members.push(MemberRows { node: node.clone(), counter, times });
}

/// Adds `node` (the stage's operators are flattened bottom-up) to the stage being flattened.
pub(super) fn flatten(node: &Arc<PhysicalPlan>, f: &mut Flattening) -> Result<(), String> {
    match node.as_ref() {
        // Only at the top (see `stage_chain`): it sorts what the rest produces.
        PhysicalPlan::Sort { order, .. } => sort::flatten(order, f),
        PhysicalPlan::SortMergeJoin { .. } => merge_join::flatten(node, f),
        PhysicalPlan::HashJoin { .. } => hash_probe::flatten(node, f),
        PhysicalPlan::Filter { condition, .. } => filter::flatten(condition, f),
        PhysicalPlan::Project { .. } => project::flatten(node, f),
        PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, .. } => hash_aggregate::flatten_partial(node, f),
        PhysicalPlan::HashAggregate { mode: AggregateMode::Final, .. } => hash_aggregate::flatten_final(node, f),
        PhysicalPlan::Expand { projections, output, .. } => expand::flatten(projections, output, f),
        _ => Err("not a fused operator".into()),
    }
}
