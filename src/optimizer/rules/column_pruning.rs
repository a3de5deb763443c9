//! Column pruning: read and carry only the columns something above needs.
//!
//! `ColumnPruning` puts a `Project` of the needed columns under Aggregates and on both sides of
//! Joins, and drops unused items of Projects; `CollapseProject` merges adjacent Projects;
//! `RemoveNoopOperators` drops a Project that passes its child through unchanged. The scan
//! itself is narrowed by the physical planner, which reads only the columns above it use.
//!
//! ```text
//! Aggregate [c], [c, sum(a)]             Aggregate [c], [c, sum(a)]
//! +- Project [a, b, c]              =>   +- Project [a, c]
//!    +- Relation t[a,b,c,d]                 +- Relation t[a,b,c,d]
//! ```
//! Must not fire: a non-deterministic select-list item is kept even when nothing reads it
//! (dropping it changes how often rand() runs); a Distinct needs all of its child's columns.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::substitute_aliases;
use crate::error::Result;
use crate::expr::{Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::{named_output, LogicalPlan};

/// Removes columns nothing above reads.
pub struct ColumnPruning;

impl Rule for ColumnPruning {
    fn name(&self) -> &'static str {
        "ColumnPruning"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        Ok(prune(plan, None))
    }
}

fn refs(exprs: &[&Expr]) -> BTreeSet<ExprId> {
    exprs.iter().flat_map(|e| e.references()).collect()
}

/// `child`, narrowed by a Project when it outputs more than `needed`.
fn narrow(child: &Arc<LogicalPlan>, needed: &BTreeSet<ExprId>) -> Arc<LogicalPlan> {
    let pruned = prune(child, Some(needed));
    let out = pruned.output();
    if out.iter().all(|a| needed.contains(&a.id)) {
        return pruned;
    }
    let list: Vec<Expr> = out.iter().filter(|a| needed.contains(&a.id)).map(|a| a.expr()).collect();
    if list.is_empty() && matches!(pruned.as_ref(), LogicalPlan::Relation { .. }) {
        return pruned; // count(*) over a scan still needs the rows, not the columns
    }
    Arc::new(LogicalPlan::Project { list, child: pruned })
}

/// Prunes below `plan` given the ids its parent needs (None: all of its output).
fn prune(plan: &Arc<LogicalPlan>, needed: Option<&BTreeSet<ExprId>>) -> Arc<LogicalPlan> {
    let rebuilt = |children: Vec<Arc<LogicalPlan>>| -> Arc<LogicalPlan> {
        if children.iter().zip(plan.children()).all(|(n, o)| Arc::ptr_eq(n, o)) {
            plan.clone()
        } else {
            Arc::new(plan.with_new_children(children))
        }
    };
    let needed = needed.cloned().unwrap_or_else(|| plan.output_ids().into_iter().collect());
    match plan.as_ref() {
        LogicalPlan::Project { list, child } => {
            let kept: Vec<Expr> = list
                .iter()
                .filter(|e| named_output(e).is_some_and(|a| needed.contains(&a.id)) || !e.deterministic())
                .cloned()
                .collect();
            let child_needed = refs(&kept.iter().collect::<Vec<_>>());
            let new_child = prune(child, Some(&child_needed));
            if kept.len() == list.len() {
                return rebuilt(vec![new_child]);
            }
            Arc::new(LogicalPlan::Project { list: kept, child: new_child })
        }
        LogicalPlan::Aggregate { grouping, aggregates, child } => {
            let child_needed = refs(&grouping.iter().chain(aggregates.iter()).collect::<Vec<_>>());
            rebuilt(vec![narrow(child, &child_needed)])
        }
        LogicalPlan::Join { left, right, condition, .. } => {
            let mut all = needed.clone();
            if let Some(c) = condition {
                all.extend(c.references());
            }
            rebuilt(vec![narrow(left, &all), narrow(right, &all)])
        }
        LogicalPlan::Filter { condition, child } => {
            let mut all = needed.clone();
            all.extend(condition.references());
            rebuilt(vec![prune(child, Some(&all))])
        }
        LogicalPlan::Sort { order, child, .. } => {
            let mut all = needed.clone();
            all.extend(refs(&order.iter().map(|o| &o.expr).collect::<Vec<_>>()));
            rebuilt(vec![prune(child, Some(&all))])
        }
        LogicalPlan::GlobalLimit { child, .. } | LogicalPlan::LocalLimit { child, .. } | LogicalPlan::Offset { child, .. } => {
            rebuilt(vec![prune(child, Some(&needed))])
        }
        LogicalPlan::Repartition { child, .. } => {
            let mut all = needed.clone();
            all.extend(refs(&plan.expressions()));
            rebuilt(vec![prune(child, Some(&all))])
        }
        // Expand keeps only the columns read above, in every projection.
        LogicalPlan::Expand { projections, output, child } => {
            let keep: Vec<bool> = output.iter().map(|a| needed.contains(&a.id)).collect();
            let kept = |row: &[Expr]| -> Vec<Expr> { row.iter().zip(&keep).filter(|(_, k)| **k).map(|(e, _)| e.clone()).collect() };
            let projections: Vec<Vec<Expr>> = projections.iter().map(|p| kept(p)).collect();
            let child_needed = refs(&projections.iter().flatten().collect::<Vec<_>>());
            let new_child = narrow(child, &child_needed);
            if keep.iter().all(|k| *k) {
                return rebuilt(vec![new_child]);
            }
            let output = output.iter().zip(&keep).filter(|(_, k)| **k).map(|(a, _)| a.clone()).collect();
            Arc::new(LogicalPlan::Expand { projections, output, child: new_child })
        }
        // A Window passes its child's columns through: the child keeps those read above and
        // those the window expressions read.
        LogicalPlan::Window { window_exprs, partition_by, order_by, child } => {
            let mut child_needed: BTreeSet<ExprId> = needed.clone();
            child_needed.extend(refs(&window_exprs.iter().chain(partition_by).chain(order_by.iter().map(|o| &o.expr)).collect::<Vec<_>>()));
            rebuilt(vec![narrow(child, &child_needed)])
        }
        // A Generate passes through the child's columns read above; the generator's own inputs
        // that nothing above reads are left out of its output (Spark's unrequiredChildIndex).
        LogicalPlan::Generate { generator, unrequired, generator_output, child, .. } => {
            let produced: BTreeSet<ExprId> = generator_output.iter().map(|a| a.id).collect();
            let mut child_needed: BTreeSet<ExprId> = needed.difference(&produced).copied().collect();
            child_needed.extend(refs(&generator.args.iter().collect::<Vec<_>>()));
            let new_child = narrow(child, &child_needed);
            let new_unrequired: Vec<usize> = new_child.output().iter().enumerate().filter(|(_, a)| !needed.contains(&a.id)).map(|(i, _)| i).collect();
            if &new_unrequired == unrequired {
                return rebuilt(vec![new_child]);
            }
            let LogicalPlan::Generate { generator, outer, qualifier, names, generator_output, .. } = plan.as_ref().clone() else { return plan.clone() };
            Arc::new(LogicalPlan::Generate { generator, unrequired: new_unrequired, outer, qualifier, names, generator_output, child: new_child })
        }
        // Distinct needs every column of its child; aliases and leaves are left alone.
        _ => plan.clone(),
    }
}

/// Merges `Project(a, Project(b, x))` into one Project when the upper one only renames or
/// computes deterministic expressions of the lower one.
pub struct CollapseProject;

impl Rule for CollapseProject {
    fn name(&self) -> &'static str {
        "CollapseProject"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Project { list, child } => match child.as_ref() {
                LogicalPlan::Project { list: lower, child: grandchild } if lower.iter().all(|e| e.deterministic()) => {
                    let merged = list.iter().map(|e| keep_name(e, substitute_aliases(e, lower))).collect();
                    Ok(Arc::new(LogicalPlan::Project { list: merged, child: grandchild.clone() }))
                }
                // Catalyst folds a Project over an Aggregate into the Aggregate's list (a
                // DataFrame's `.agg(..).select(..)` plans as SQL's select list), unless an
                // aggregate would then be computed twice.
                LogicalPlan::Aggregate { grouping, aggregates, child: below }
                    if list.iter().chain(aggregates).all(|e| e.deterministic()) && each_alias_read_once(list, aggregates) =>
                {
                    let merged = list.iter().map(|e| keep_name(e, substitute_aliases(e, aggregates))).collect();
                    Ok(Arc::new(LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: merged, child: below.clone() }))
                }
                _ => Ok(p),
            },
            LogicalPlan::Aggregate { grouping, aggregates, child } => match child.as_ref() {
                // An Aggregate over a Project of plain columns reads the columns directly.
                LogicalPlan::Project { list: lower, child: grandchild }
                    if lower.iter().all(|e| matches!(e, Expr::Alias { .. })) && lower.iter().all(|e| e.deterministic()) && !lower.is_empty() =>
                {
                    let aggregates = aggregates.iter().map(|e| keep_name(e, substitute_aliases(e, lower))).collect();
                    let grouping = grouping.iter().map(|e| substitute_aliases(e, lower)).collect();
                    Ok(Arc::new(LogicalPlan::Aggregate { grouping, aggregates, child: grandchild.clone() }))
                }
                _ => Ok(p),
            },
            _ => Ok(p),
        })
    }
}

/// True when no aliased item of `lower` is read more than once by `upper`.
fn each_alias_read_once(upper: &[Expr], lower: &[Expr]) -> bool {
    lower.iter().all(|l| match l {
        Expr::Alias { id, .. } => {
            let mut reads = 0;
            upper.iter().for_each(|u| u.visit(&mut |e| reads += usize::from(matches!(e, Expr::Attribute(a) if a.id == *id))));
            reads <= 1
        }
        _ => true,
    })
}

/// After substituting an attribute by an expression, keep the attribute's name and id.
fn keep_name(original: &Expr, substituted: Expr) -> Expr {
    match (original, &substituted) {
        (Expr::Attribute(a), e) if !matches!(e, Expr::Attribute(b) if b.id == a.id) => {
            Expr::Alias { child: Box::new(substituted.unalias().clone()), name: a.name.clone(), id: a.id }
        }
        _ => substituted,
    }
}

/// Removes a Project that outputs exactly its child's columns.
pub struct RemoveNoopOperators;

impl Rule for RemoveNoopOperators {
    fn name(&self) -> &'static str {
        "RemoveNoopOperators"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Project { list, child } => {
                let out = child.output();
                let same = list.len() == out.len()
                    && list.iter().zip(out.iter()).all(|(e, a)| matches!(e, Expr::Attribute(b) if b.id == a.id && b.name == a.name));
                Ok(if same { child.clone() } else { p })
            }
            _ => Ok(p),
        })
    }
}
