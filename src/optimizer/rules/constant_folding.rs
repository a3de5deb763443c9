//! Expression simplification: `ConstantFolding`, `BooleanSimplification`, `SimplifyCasts`,
//! and `PruneFilters` (a Filter that is always true goes away).

use std::sync::Arc;

use crate::error::Result;
use crate::exec::eval::evaluate_scalar;
use crate::expr::{BinaryOp, Expr};
use crate::optimizer::Rule;
use crate::plan::LogicalPlan;
use crate::types::ScalarValue;

/// Applies `f` to every expression of every node; returns the same Arc where nothing changed.
fn rewrite_expressions(plan: &Arc<LogicalPlan>, f: &impl Fn(&Expr) -> Option<Expr>) -> Result<Arc<LogicalPlan>> {
    plan.transform_up(&mut |p| {
        let mut changed = false;
        let new = p.map_expressions(|e| {
            let r: std::result::Result<Expr, crate::error::KilnError> = e.transform_up(&mut |x| match f(&x) {
                Some(y) => {
                    changed = true;
                    Ok(y)
                }
                None => Ok(x),
            });
            r
        })?;
        Ok(if changed { Arc::new(new) } else { p })
    })
}

/// Evaluates expressions without column references once, at planning time. An expression
/// whose evaluation fails (1/0) is left for the executor, which reports it only if it runs.
pub struct ConstantFolding;

impl Rule for ConstantFolding {
    fn name(&self) -> &'static str {
        "ConstantFolding"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite_expressions(plan, &|e| match e {
            Expr::Literal(_) | Expr::Alias { .. } => None,
            e if e.foldable() => evaluate_scalar(e).ok().map(Expr::Literal),
            _ => None,
        })
    }
}

fn is_true(e: &Expr) -> bool {
    matches!(e, Expr::Literal(ScalarValue::Boolean(true)))
}
fn is_false(e: &Expr) -> bool {
    matches!(e, Expr::Literal(ScalarValue::Boolean(false)))
}

/// `true AND x` -> `x`, `false AND x` -> `false`, `x OR true` -> `true`, `NOT NOT x` -> `x`,
/// `x AND x` -> `x`.
pub struct BooleanSimplification;

impl Rule for BooleanSimplification {
    fn name(&self) -> &'static str {
        "BooleanSimplification"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite_expressions(plan, &|e| match e {
            Expr::Binary { op: BinaryOp::And, left, right } => {
                if is_true(left) || left == right {
                    Some(right.as_ref().clone())
                } else if is_true(right) {
                    Some(left.as_ref().clone())
                } else if (is_false(left) && right.deterministic()) || (is_false(right) && left.deterministic()) {
                    Some(Expr::Literal(ScalarValue::Boolean(false)))
                } else {
                    None
                }
            }
            Expr::Binary { op: BinaryOp::Or, left, right } => {
                if is_false(left) || left == right {
                    Some(right.as_ref().clone())
                } else if is_false(right) {
                    Some(left.as_ref().clone())
                } else if (is_true(left) && right.deterministic()) || (is_true(right) && left.deterministic()) {
                    Some(Expr::Literal(ScalarValue::Boolean(true)))
                } else {
                    None
                }
            }
            Expr::Not(inner) => match inner.as_ref() {
                Expr::Not(x) => Some(x.as_ref().clone()),
                _ => None,
            },
            _ => None,
        })
    }
}

/// Removes casts to the type the value already has.
pub struct SimplifyCasts;

impl Rule for SimplifyCasts {
    fn name(&self) -> &'static str {
        "SimplifyCasts"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite_expressions(plan, &|e| match e {
            Expr::Cast { child, to } if child.data_type().ok().as_ref() == Some(to) => Some(child.as_ref().clone()),
            _ => None,
        })
    }
}

/// Removes `Filter(true)`.
pub struct PruneFilters;

impl Rule for PruneFilters {
    fn name(&self) -> &'static str {
        "PruneFilters"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Filter { condition, child } if is_true(condition) => Ok(child.clone()),
            _ => Ok(p),
        })
    }
}
