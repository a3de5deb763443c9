//! Empty and local relation collapse: `OptimizeLimitZero`, `PropagateEmptyRelation` and `ConvertToLocalRelation`.
//!
//! ```text
//! Aggregate [k], [k, sum(v)]                 LocalRelation <empty>, [k, sum(v)]
//! +- Join Inner, (a = b)                 =>
//!    :- LocalRelation <empty>, [a, k, v]
//!    +- Relation t[b]
//!
//! Project [(col1 + 1) AS x]              =>  LocalRelation [x]      (evaluated now)
//! +- LocalRelation [col1]
//! ```
//! Must not fire: a global Aggregate (no grouping) over an empty input still returns one row;
//! the preserved side of an outer join keeps its rows (null-extended); a non-deterministic
//! projection or filter over a LocalRelation is left for the executor, as is one whose
//! evaluation fails (the error belongs to execution).

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use crate::error::Result;
use crate::expr::eval::{filter, project, schema_of};
use crate::expr::{Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::{named_outputs, JoinType, LogicalPlan};
use crate::types::ScalarValue;

/// A LocalRelation without rows.
pub(crate) fn is_empty(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::LocalRelation { data, .. } if data.iter().all(|b| b.num_rows() == 0))
}

/// An empty LocalRelation with the columns of `plan`.
fn empty(plan: &LogicalPlan) -> Arc<LogicalPlan> {
    Arc::new(LogicalPlan::LocalRelation { output: plan.output(), data: vec![] })
}

/// `NULL AS col#id` for every column of `plan`: the null-extended side of an outer join.
fn nulls_for(plan: &LogicalPlan) -> Vec<Expr> {
    plan.output()
        .into_iter()
        .map(|a| Expr::Alias { child: Box::new(Expr::Literal(ScalarValue::Null(a.data_type.clone()))), name: a.name.clone(), id: a.id })
        .collect()
}

/// `LIMIT 0` is an empty relation (Spark's OptimizeLimitZero): what is under it never runs.
pub struct OptimizeLimitZero;

impl Rule for OptimizeLimitZero {
    fn name(&self) -> &'static str {
        "OptimizeLimitZero"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| {
            Ok(match p.as_ref() {
                LogicalPlan::GlobalLimit { limit: 0, .. } | LogicalPlan::LocalLimit { limit: 0, .. } => empty(&p),
                _ => p,
            })
        })
    }
}

/// Removes operators over empty relations.
pub struct PropagateEmptyRelation;

impl Rule for PropagateEmptyRelation {
    fn name(&self) -> &'static str {
        "PropagateEmptyRelation"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| Ok(propagate(&p).unwrap_or(p)))
    }
}

fn propagate(plan: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    match plan.as_ref() {
        LogicalPlan::Project { child, .. }
        | LogicalPlan::Filter { child, .. }
        | LogicalPlan::Sort { child, .. }
        | LogicalPlan::GlobalLimit { child, .. }
        | LogicalPlan::LocalLimit { child, .. }
        | LogicalPlan::Offset { child, .. }
        | LogicalPlan::Distinct { child }
            if is_empty(child) =>
        {
            Some(empty(plan))
        }
        // Without grouping an Aggregate returns one row even for no input (count = 0).
        LogicalPlan::Aggregate { grouping, child, .. } if !grouping.is_empty() && is_empty(child) => Some(empty(plan)),
        LogicalPlan::Join { left, right, join_type, .. } => {
            let (l, r) = (is_empty(left), is_empty(right));
            if !l && !r {
                return None;
            }
            match join_type {
                JoinType::Inner | JoinType::Cross => Some(empty(plan)),
                JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti if l => Some(empty(plan)),
                JoinType::LeftSemi => Some(empty(plan)),
                JoinType::LeftAnti => Some(left.clone()),
                JoinType::RightOuter if r => Some(empty(plan)),
                JoinType::FullOuter if l && r => Some(empty(plan)),
                JoinType::LeftOuter | JoinType::FullOuter if r => {
                    let list = [left.output().iter().map(|a| a.expr()).collect(), nulls_for(right)].concat();
                    Some(Arc::new(LogicalPlan::Project { list, child: left.clone() }))
                }
                JoinType::LeftOuter => None,
                JoinType::RightOuter | JoinType::FullOuter => {
                    let list = [nulls_for(left), right.output().iter().map(|a| a.expr()).collect()].concat();
                    Some(Arc::new(LogicalPlan::Project { list, child: right.clone() }))
                }
            }
        }
        LogicalPlan::Union { children } if children.iter().any(|c| is_empty(c)) => {
            let kept: Vec<Arc<LogicalPlan>> = children.iter().filter(|c| !is_empty(c)).cloned().collect();
            match kept.len() {
                0 => Some(empty(plan)),
                // The survivor must still produce the union's columns (ids of the first child).
                1 => Some(rename_to(&kept[0], &plan.output().iter().map(|a| (a.id, a.name.clone())).collect::<Vec<_>>())),
                _ if Arc::ptr_eq(&kept[0], &children[0]) => Some(Arc::new(LogicalPlan::Union { children: kept })),
                _ => {
                    let out: Vec<(ExprId, String)> = plan.output().iter().map(|a| (a.id, a.name.clone())).collect();
                    let mut kept = kept;
                    kept[0] = rename_to(&kept[0], &out);
                    Some(Arc::new(LogicalPlan::Union { children: kept }))
                }
            }
        }
        _ => None,
    }
}

/// `child` with its columns carrying the given ids and names (a Project of aliases when needed).
fn rename_to(child: &Arc<LogicalPlan>, ids: &[(ExprId, String)]) -> Arc<LogicalPlan> {
    let out = child.output();
    if out.iter().zip(ids).all(|(a, (id, _))| a.id == *id) {
        return child.clone();
    }
    let list = out.iter().zip(ids).map(|(a, (id, name))| Expr::Alias { child: Box::new(a.expr()), name: name.clone(), id: *id }).collect();
    Arc::new(LogicalPlan::Project { list, child: child.clone() })
}

/// Evaluates a Project, Filter or Limit over a LocalRelation at planning time.
pub struct ConvertToLocalRelation;

impl Rule for ConvertToLocalRelation {
    fn name(&self) -> &'static str {
        "ConvertToLocalRelation"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| Ok(convert(&p).unwrap_or(p)))
    }
}

/// Expressions the executor would evaluate row by row, the same way, now.
fn evaluable(e: &Expr) -> bool {
    e.deterministic() && !e.contains_aggregate() && !e.contains_subquery()
}

fn convert(plan: &Arc<LogicalPlan>) -> Option<Arc<LogicalPlan>> {
    let local = |child: &Arc<LogicalPlan>| match child.as_ref() {
        LogicalPlan::LocalRelation { output, data } => Some((output.clone(), data.clone())),
        _ => None,
    };
    match plan.as_ref() {
        LogicalPlan::Project { list, child } if list.iter().all(evaluable) => {
            let (input, data) = local(child)?;
            let output = named_outputs(list);
            let schema = schema_of(&output);
            let data = data.iter().map(|b| project(list, &input, &schema, b)).collect::<Result<Vec<RecordBatch>>>().ok()?;
            Some(Arc::new(LogicalPlan::LocalRelation { output, data }))
        }
        LogicalPlan::Filter { condition, child } if evaluable(condition) => {
            let (output, data) = local(child)?;
            let data = data.iter().map(|b| filter(condition, &output, b)).collect::<Result<Vec<RecordBatch>>>().ok()?;
            Some(Arc::new(LogicalPlan::LocalRelation { output, data }))
        }
        LogicalPlan::LocalLimit { limit, child } | LogicalPlan::GlobalLimit { limit, child } => {
            let (output, data) = local(child)?;
            let mut left = *limit;
            let mut taken = vec![];
            for b in data {
                let n = b.num_rows().min(left);
                taken.push(b.slice(0, n));
                left -= n;
            }
            Some(Arc::new(LogicalPlan::LocalRelation { output, data: taken }))
        }
        _ => None,
    }
}
