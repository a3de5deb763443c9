//! Union rewrites: `CombineUnions` flattens nested unions; `PushProjectionThroughUnion` moves
//! a deterministic Project into every input. (Filters cross a Union in `PushDownPredicates`.)
//!
//! ```text
//! Project [a#1, (b#2 + 1) AS c#9]          Union false, false
//! +- Union false, false               =>   :- Project [a#1, (b#2 + 1) AS c#9]
//!    :- Relation t[a#1,b#2]                :  +- Relation t[a#1,b#2]
//!    +- Relation u[x#3,y#4]                +- Project [x#3, (y#4 + 1) AS c#10]
//!                                             +- Relation u[x#3,y#4]
//! ```
//! A Union's columns are its first input's, so every other input reads its own columns in
//! their place (by position) and gets fresh ids for what it computes. Must not fire: a
//! non-deterministic projection (`rand()` would be evaluated per input, not once per row of
//! the union — the same rows, but Spark keeps it above, and so do we); the `DISTINCT` of
//! `UNION` (an Aggregate above the Union) is not a Project and never moves.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::Result;
use crate::expr::{Attribute, Expr, ExprId};
use crate::optimizer::Rule;
use crate::plan::LogicalPlan;

/// `Union(Union(a, b), c)` -> `Union(a, b, c)`.
pub struct CombineUnions;

impl Rule for CombineUnions {
    fn name(&self) -> &'static str {
        "CombineUnions"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Union { children } if children.iter().any(|c| matches!(c.as_ref(), LogicalPlan::Union { .. })) => {
                let flat = children
                    .iter()
                    .flat_map(|c| match c.as_ref() {
                        LogicalPlan::Union { children } => children.clone(),
                        _ => vec![c.clone()],
                    })
                    .collect();
                Ok(Arc::new(LogicalPlan::Union { children: flat }))
            }
            _ => Ok(p),
        })
    }
}

/// For input `child` of `union`: the union's column ids mapped to the input's columns.
pub(crate) fn union_rewrites(union_output: &[Attribute], child: &LogicalPlan) -> HashMap<ExprId, Attribute> {
    union_output.iter().map(|a| a.id).zip(child.output()).collect()
}

/// `e` with the union's columns replaced by the input's.
pub(crate) fn rewrite_for_input(e: &Expr, rewrites: &HashMap<ExprId, Attribute>) -> Expr {
    let r: std::result::Result<Expr, std::convert::Infallible> = e.clone().transform_up(&mut |x| match &x {
        Expr::Attribute(a) => Ok(rewrites.get(&a.id).map(|b| b.expr()).unwrap_or(x)),
        _ => Ok(x),
    });
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// Moves a deterministic Project below a Union, into each input.
pub struct PushProjectionThroughUnion;

impl Rule for PushProjectionThroughUnion {
    fn name(&self) -> &'static str {
        "PushProjectionThroughUnion"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| {
            let LogicalPlan::Project { list, child } = p.as_ref() else { return Ok(p) };
            let LogicalPlan::Union { children } = child.as_ref() else { return Ok(p) };
            if !list.iter().all(|e| e.deterministic()) || children.is_empty() {
                return Ok(p);
            }
            let union_output = child.output();
            let mut inputs = vec![Arc::new(LogicalPlan::Project { list: list.clone(), child: children[0].clone() })];
            for c in &children[1..] {
                let rewrites = union_rewrites(&union_output, c);
                let pushed = list
                    .iter()
                    .map(|e| match rewrite_for_input(e, &rewrites) {
                        // Ids are unique per input: the first input keeps the Project's.
                        Expr::Alias { child, name, .. } => Expr::Alias { child, name, id: ExprId::next() },
                        other => other,
                    })
                    .collect();
                inputs.push(Arc::new(LogicalPlan::Project { list: pushed, child: c.clone() }));
            }
            Ok(Arc::new(LogicalPlan::Union { children: inputs }))
        })
    }
}
