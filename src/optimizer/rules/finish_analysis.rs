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
//! either node). `EliminateResolvedHint` runs first and moves each join strategy hint into the
//! Join it applies to:
//!
//! ```text
//! Join Inner, (a#1 = b#2)                       Join Inner, (a#1 = b#2), rightHint=(strategy=broadcast)
//! :- ...                                  =>    :- ...
//! +- ResolvedHint (strategy=broadcast)          +- Filter ...
//!    +- Filter ...
//! ```

use std::sync::Arc;

use crate::error::Result;
use crate::optimizer::Rule;
use crate::plan::{JoinHint, JoinStrategyHint, LogicalPlan};

/// Folds `ResolvedHint`s into the hint of the Join right above them (through unary
/// operators, as Spark's `extractHintsFromPlan`), then drops hints no join takes.
pub struct EliminateResolvedHint;

impl Rule for EliminateResolvedHint {
    fn name(&self) -> &'static str {
        "EliminateResolvedHint"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        let pulled = plan.transform_up(&mut |p| -> Result<Arc<LogicalPlan>> {
            match p.as_ref() {
            LogicalPlan::Join { left, right, join_type, condition, using, hint } if *hint == JoinHint::default() => {
                let ((l, lh), (r, rh)) = (extract_hint(left), extract_hint(right));
                if lh.is_none() && rh.is_none() {
                    return Ok(p);
                }
                let hint = JoinHint { left: lh, right: rh };
                Ok(Arc::new(LogicalPlan::Join { left: l, right: r, join_type: *join_type, condition: condition.clone(), using: using.clone(), hint }))
            }
            _ => Ok(p),
            }
        })?;
        pulled.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::ResolvedHint { child, .. } => Ok(child.clone()),
            _ => Ok(p),
        })
    }
}

/// Spark's ReplaceExpressions: each function Spark defines as another expression (`nullif`,
/// `nvl`, `nvl2`, `ifnull`; `pmod`'s name) becomes that expression, so no later rule needs to
/// know it.
pub struct ReplaceExpressions;

impl Rule for ReplaceExpressions {
    fn name(&self) -> &'static str {
        "ReplaceExpressions"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        use crate::expr::Expr;
        super::rewrite_expressions(plan, true, &|e| match e {
            Expr::Replaceable { replacement, .. } => Some(replacement.as_ref().clone()),
            _ => None,
        })
    }
}

/// Spark's ComputeCurrentTime: `current_timestamp()`, `current_date()` and `localtimestamp()`
/// are one instant per query (`current_timestamp = current_timestamp` holds), folded to literals.
pub struct ComputeCurrentTime;

impl Rule for ComputeCurrentTime {
    fn name(&self) -> &'static str {
        "ComputeCurrentTime"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        use crate::expr::{Builtin, Expr, ScalarFunc};
        use crate::types::ScalarValue;
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64);
        super::rewrite_expressions(plan, true, &|x| {
            let value = match x {
                Expr::Function { func: ScalarFunc::Builtin(Builtin::CurrentTimestamp), .. } => ScalarValue::Timestamp(now, false),
                Expr::Function { func: ScalarFunc::Builtin(Builtin::LocalTimestamp(zone)), .. } => ScalarValue::Timestamp(zone.from_utc(now).unwrap_or(now), true),
                Expr::Function { func: ScalarFunc::Builtin(Builtin::CurrentDate(zone)), .. } => {
                    let local = zone.from_utc(now).unwrap_or(now);
                    ScalarValue::Date32(local.div_euclid(crate::types::timestamp::MICROS_PER_DAY) as i32)
                }
                _ => return None,
            };
            Some(Expr::Literal(value))
        })
    }
}

/// `plan` without the hints above its first non-unary node, and the outermost of them.
fn extract_hint(plan: &Arc<LogicalPlan>) -> (Arc<LogicalPlan>, Option<JoinStrategyHint>) {
    match plan.as_ref() {
        LogicalPlan::ResolvedHint { strategy, child } => (extract_hint(child).0, Some(*strategy)),
        other if other.children().len() == 1 && !matches!(other, LogicalPlan::UnresolvedHint { .. }) => {
            let (child, hint) = extract_hint(other.children()[0]);
            if hint.is_none() {
                return (plan.clone(), None);
            }
            (Arc::new(other.with_new_children(vec![child])), hint)
        }
        _ => (plan.clone(), None),
    }
}

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
