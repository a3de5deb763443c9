//! `RemoveRedundantAliases`: `a#1 AS a#5` renames nothing, so it becomes `a#1` and what read
//! `#5` reads `#1`.
//!
//! ```text
//! Aggregate [c_custkey#1], [c_custkey#1, ...]        Aggregate [c_custkey#1], [c_custkey#1, ...]
//! +- Project [c_custkey#1 AS c_custkey#5, ...]  =>  +- Project [c_custkey#1, ...]
//! ```
//! Must not fire: on the query's own output (its ids are the result schema); when the alias
//! changes the name (`a AS b` is the column's name in the result); when dropping it would let
//! one id appear on both sides of a Join or twice in the first input of a Union.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::error::Result;
use crate::expr::{Attribute, Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::LogicalPlan;

/// Removes aliases that neither rename nor de-duplicate a column.
pub struct RemoveRedundantAliases;

impl Rule for RemoveRedundantAliases {
    fn name(&self) -> &'static str {
        "RemoveRedundantAliases"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        let excluded = ids(plan);
        Ok(remove(plan, &excluded))
    }
}

fn ids(plan: &LogicalPlan) -> BTreeSet<ExprId> {
    plan.output_ids().into_iter().collect()
}

/// Old output id -> new output attribute, where a child's output changed.
fn mapping(old: &LogicalPlan, new: &LogicalPlan, into: &mut HashMap<ExprId, Attribute>) {
    for (o, n) in old.output().iter().zip(new.output()) {
        if o.id != n.id {
            into.insert(o.id, n);
        }
    }
}

fn rewrite(e: Expr, map: &HashMap<ExprId, Attribute>) -> Expr {
    if map.is_empty() {
        return e;
    }
    let r: std::result::Result<Expr, std::convert::Infallible> = e.transform_up(&mut |x| match &x {
        // The reader keeps its own name for the column.
        Expr::Attribute(a) => Ok(map.get(&a.id).map(|n| Expr::Attribute(Attribute { name: a.name.clone(), ..n.clone() })).unwrap_or(x)),
        _ => Ok(x),
    });
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

fn redundant(e: &Expr, excluded: &BTreeSet<ExprId>) -> Option<Expr> {
    match e {
        Expr::Alias { child, name, id } => match child.as_ref() {
            Expr::Attribute(a) if &a.name == name && !excluded.contains(&a.id) && !excluded.contains(id) => Some(Expr::Attribute(a.clone())),
            _ => None,
        },
        _ => None,
    }
}

fn remove(plan: &Arc<LogicalPlan>, excluded: &BTreeSet<ExprId>) -> Arc<LogicalPlan> {
    let mut map = HashMap::new();
    let children: Vec<Arc<LogicalPlan>> = match plan.as_ref() {
        LogicalPlan::Join { left, right, .. } => {
            let new_left = remove(left, &excluded.union(&ids(right)).copied().collect());
            let new_right = remove(right, &excluded.union(&ids(&new_left)).copied().collect());
            vec![new_left, new_right]
        }
        LogicalPlan::Union { children } => children
            .iter()
            .enumerate()
            .map(|(i, c)| {
                // The Union's columns are its first input's: they stay distinct.
                let ex: BTreeSet<ExprId> = if i == 0 { excluded.union(&ids(c)).copied().collect() } else { excluded.clone() };
                remove(c, &ex)
            })
            .collect(),
        _ => plan.children().into_iter().map(|c| remove(c, excluded)).collect(),
    };
    for (old, new) in plan.children().into_iter().zip(&children) {
        if !Arc::ptr_eq(old, new) {
            mapping(old, new, &mut map);
        }
    }
    let cleans = matches!(plan.as_ref(), LogicalPlan::Project { .. } | LogicalPlan::Aggregate { .. });
    let needs_clean = cleans
        && match plan.as_ref() {
            LogicalPlan::Project { list, .. } | LogicalPlan::Aggregate { aggregates: list, .. } => {
                list.iter().any(|e| redundant(&rewrite(e.clone(), &map), excluded).is_some())
            }
            _ => false,
        };
    let children_same = children.iter().zip(plan.children()).all(|(n, o)| Arc::ptr_eq(n, o));
    if children_same && map.is_empty() && !needs_clean {
        return plan.clone();
    }
    let node = plan.with_new_children(children);
    let node = match node.map_expressions(|e| Ok::<Expr, std::convert::Infallible>(rewrite(e, &map))) {
        Ok(n) => n,
        Err(never) => match never {},
    };
    let node = match node {
        LogicalPlan::Project { list, child } if needs_clean => {
            LogicalPlan::Project { list: list.into_iter().map(|e| redundant(&e, excluded).unwrap_or(e)).collect(), child }
        }
        LogicalPlan::Aggregate { grouping, aggregates, child } if needs_clean => LogicalPlan::Aggregate {
            grouping,
            aggregates: aggregates.into_iter().map(|e| redundant(&e, excluded).unwrap_or(e)).collect(),
            child,
        },
        other => other,
    };
    Arc::new(node)
}
