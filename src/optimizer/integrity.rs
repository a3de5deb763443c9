//! What a rule must leave intact (Catalyst's `LogicalPlanIntegrity`): the schema always; in
//! strict mode also a resolved plan in which every ExprId is defined once (by a scan or an
//! Alias) and every node reads only columns its children produce.

use std::collections::{BTreeSet, HashMap};

use crate::error::{KilnError, Result};
use crate::expr::{Expr, ExprId};
use crate::plan::LogicalPlan;

/// A rule must keep the output columns (ids and types) of the plan it rewrites.
pub fn check_schema(rule: &str, before: &LogicalPlan, after: &LogicalPlan) -> Result<()> {
    let key = |p: &LogicalPlan| p.output().into_iter().map(|a| (a.id, a.data_type)).collect::<Vec<_>>();
    if key(before) != key(after) {
        return Err(KilnError::internal(format!(
            "optimizer rule {rule} changed the output of the plan from {:?} to {:?}",
            before.output().iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            after.output().iter().map(|a| a.to_string()).collect::<Vec<_>>()
        )));
    }
    Ok(())
}

/// The first integrity problem of `plan`, if any.
pub fn check_plan(plan: &LogicalPlan) -> std::result::Result<(), String> {
    if !plan.resolved() {
        return Err("the plan is not resolved".into());
    }
    let mut defined: HashMap<ExprId, String> = HashMap::new();
    check_node(plan, &mut defined)
}

fn check_node(plan: &LogicalPlan, defined: &mut HashMap<ExprId, String>) -> std::result::Result<(), String> {
    for child in plan.children() {
        check_node(child, defined)?;
    }
    let mut define = |id: ExprId, what: String| -> std::result::Result<(), String> {
        match defined.insert(id, what.clone()) {
            Some(other) => Err(format!("ExprId #{} is defined twice: by `{other}` and by `{what}`", id.0)),
            None => Ok(()),
        }
    };
    match plan {
        LogicalPlan::Relation { output, .. } | LogicalPlan::LocalRelation { output, .. } | LogicalPlan::Range { output, .. } => {
            for a in output {
                define(a.id, a.to_string())?;
            }
        }
        LogicalPlan::Project { list, .. } | LogicalPlan::Aggregate { aggregates: list, .. } => {
            for e in list {
                if let Expr::Alias { id, .. } = e {
                    define(*id, e.to_string())?;
                }
            }
        }
        _ => {}
    }
    let mut available: BTreeSet<ExprId> = plan.children().iter().flat_map(|c| c.output()).map(|a| a.id).collect();
    // A lateral join's condition also reads its subquery's columns.
    if let LogicalPlan::LateralJoin { right, .. } = plan {
        available.extend(right.plan().output().iter().map(|a| a.id));
    }
    for e in plan.expressions() {
        if let Some(missing) = e.references().into_iter().find(|id| !available.contains(id)) {
            return Err(format!("`{}` reads #{} ({e}), which its children do not produce", plan.node_string(), missing.0));
        }
    }
    Ok(())
}
