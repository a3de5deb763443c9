//! Rules that finish what the analyzer started: aliases and DISTINCT become what the
//! planner understands.
//!
//! ```text
//! Distinct                        Aggregate [status#2], [status#2]
//! +- SubqueryAlias o         =>   +- Project [status#2]
//!    +- Project [status#2]           +- Relation orders[...]
//!       +- Relation orders[...]
//! ```
//! Both always fire and neither can be excluded (the physical planner has no operator for
//! either node).

use std::sync::Arc;

use crate::error::Result;
use crate::optimizer::Rule;
use crate::plan::LogicalPlan;

/// Removes `SubqueryAlias`: after analysis, names are ExprIds and qualifiers no longer matter.
pub struct EliminateSubqueryAliases;

impl Rule for EliminateSubqueryAliases {
    fn name(&self) -> &'static str {
        "EliminateSubqueryAliases"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::SubqueryAlias { child, .. } => Ok(child.clone()),
            _ => Ok(p),
        })
    }
}

/// `Distinct(child)` becomes `Aggregate(child.output, child.output, child)`.
pub struct ReplaceDistinctWithAggregate;

impl Rule for ReplaceDistinctWithAggregate {
    fn name(&self) -> &'static str {
        "ReplaceDistinctWithAggregate"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Distinct { child } => {
                let cols: Vec<_> = child.output().iter().map(|a| a.expr()).collect();
                Ok(Arc::new(LogicalPlan::Aggregate { grouping: cols.clone(), aggregates: cols, child: child.clone() }))
            }
            _ => Ok(p),
        })
    }
}
