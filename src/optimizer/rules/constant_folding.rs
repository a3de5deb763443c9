//! Expression simplification (Catalyst's `expressions.scala`): `ConstantFolding`,
//! `NullPropagation`, `OptimizeIn`, `BooleanSimplification`, `SimplifyCasts`, and `PruneFilters`
//! (a Filter that is always true goes away, one that is never true empties its subtree).
//!
//! ```text
//! Filter ((a > 1 AND b = 2) OR (a > 1 AND c = 3))   =>  Filter (a > 1 AND (b = 2 OR c = 3))
//! Filter (x IN (1,2,...,11))                         =>  Filter x INSET 1, 10, 11, 2, ...
//! Filter (isnull(k) OR (amount + NULL > 1))          =>  Filter false  (k not nullable)
//! Filter false                                       =>  LocalRelation <empty>, [...]
//! ```
//! None of them moves or drops a non-deterministic expression (rand()): `false AND rand() < 1`
//! stays, and a common factor is only pulled out of deterministic disjunctions.

use std::sync::Arc;

use crate::error::Result;
use crate::expr::eval::evaluate_scalar;
use crate::expr::{BinaryOp, Expr};
use crate::optimizer::Rule;
use crate::plan::LogicalPlan;
use crate::types::ScalarValue;

use super::rewrite_expressions;

/// Evaluates expressions without column references once, at planning time. An expression
/// whose evaluation fails (1/0) is left for the executor, which reports it only if it runs.
pub struct ConstantFolding;

impl Rule for ConstantFolding {
    fn name(&self) -> &'static str {
        "ConstantFolding"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite_expressions(plan, false, &|e| match e {
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
        rewrite_expressions(plan, false, &|e| match e {
            Expr::Binary { op: BinaryOp::And, left, right } => {
                if is_true(left) || same(left, right) {
                    Some(right.as_ref().clone())
                } else if is_true(right) {
                    Some(left.as_ref().clone())
                } else if (is_false(left) && right.deterministic()) || (is_false(right) && left.deterministic()) {
                    Some(Expr::Literal(ScalarValue::Boolean(false)))
                } else {
                    factor_common(e, BinaryOp::And)
                }
            }
            Expr::Binary { op: BinaryOp::Or, left, right } => {
                if is_false(left) || same(left, right) {
                    Some(right.as_ref().clone())
                } else if is_false(right) {
                    Some(left.as_ref().clone())
                } else if (is_true(left) && right.deterministic()) || (is_true(right) && left.deterministic()) {
                    Some(Expr::Literal(ScalarValue::Boolean(true)))
                } else {
                    factor_common(e, BinaryOp::Or)
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

/// One value twice (Spark's semanticEquals): equal trees that are deterministic; two rand(1)
/// are two draws.
fn same(a: &Expr, b: &Expr) -> bool {
    a == b && a.deterministic()
}

/// `a AND b` or `a OR b`, split at the given operator.
fn split(e: &Expr, op: BinaryOp) -> Vec<&Expr> {
    match e {
        Expr::Binary { op: o, left, right } if *o == op => {
            let mut v = split(left, op);
            v.extend(split(right, op));
            v
        }
        e => vec![e],
    }
}

fn join(items: Vec<Expr>, op: BinaryOp) -> Option<Expr> {
    items.into_iter().reduce(|a, b| a.binary(op, b))
}

/// `(a AND b) OR (a AND c)` -> `a AND (b OR c)` and its dual `(a OR b) AND (a OR c)` ->
/// `a OR (b AND c)`; `(a AND b) OR a` -> `a`. `outer` is the operator of `e`. Only for
/// deterministic expressions: the rewrite evaluates the common factor once instead of twice.
fn factor_common(e: &Expr, outer: BinaryOp) -> Option<Expr> {
    let Expr::Binary { left, right, .. } = e else { return None };
    let inner = if outer == BinaryOp::Or { BinaryOp::And } else { BinaryOp::Or };
    let (lhs, rhs) = (split(left, inner), split(right, inner));
    let common: Vec<Expr> = lhs.iter().filter(|l| rhs.contains(l)).map(|l| (*l).clone()).collect();
    if common.is_empty() || !e.deterministic() {
        return None;
    }
    let ldiff: Vec<Expr> = lhs.into_iter().filter(|l| !common.contains(l)).cloned().collect();
    let rdiff: Vec<Expr> = rhs.into_iter().filter(|r| !common.contains(r)).cloned().collect();
    match (join(ldiff, inner), join(rdiff, inner)) {
        (Some(l), Some(r)) => join([common, vec![l.binary(outer, r)]].concat(), inner),
        // One side is the common part alone: it absorbs the other.
        _ => join(common, inner),
    }
}

/// Folds what NULL makes certain: `isnull(c)` / `isnotnull(c)` of a non-nullable `c`, a
/// null-intolerant expression with a NULL literal operand (`a + NULL`, `a = NULL`), `x <=> NULL`,
/// `NULL IN (...)`, and NULL literals inside `coalesce`.
pub struct NullPropagation;

impl Rule for NullPropagation {
    fn name(&self) -> &'static str {
        "NullPropagation"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite_expressions(plan, false, &null_propagation)
    }
}

fn is_null_literal(e: &Expr) -> bool {
    matches!(e, Expr::Literal(v) if v.is_null())
}

fn null_of(e: &Expr) -> Option<Expr> {
    e.data_type().ok().map(|t| Expr::Literal(ScalarValue::Null(t)))
}

fn null_propagation(e: &Expr) -> Option<Expr> {
    use crate::expr::ScalarFunc;
    match e {
        Expr::IsNull(c) if !c.nullable() => Some(Expr::Literal(ScalarValue::Boolean(false))),
        Expr::IsNotNull(c) if !c.nullable() => Some(Expr::Literal(ScalarValue::Boolean(true))),
        Expr::Binary { op: BinaryOp::EqNullSafe, left, right } if is_null_literal(left) => Some(Expr::IsNull(right.clone())),
        Expr::Binary { op: BinaryOp::EqNullSafe, left, right } if is_null_literal(right) => Some(Expr::IsNull(left.clone())),
        Expr::InList { child, .. } | Expr::InSet { child, .. } if is_null_literal(child) => {
            Some(Expr::Literal(ScalarValue::Null(arrow::datatypes::DataType::Boolean)))
        }
        Expr::Function { func: ScalarFunc::Coalesce, args } => {
            let kept: Vec<Expr> = args.iter().filter(|a| !is_null_literal(a)).cloned().collect();
            // Arguments after the first non-nullable one are never reached.
            let kept = match kept.iter().position(|a| !a.nullable()) {
                Some(i) => kept[..=i].to_vec(),
                None => kept,
            };
            match kept.len() {
                0 => null_of(e),
                1 => kept.into_iter().next(),
                n if n < args.len() => Some(Expr::Function { func: ScalarFunc::Coalesce, args: kept }),
                _ => None,
            }
        }
        // `false AND NULL` is false, `1 IN (1, NULL)` is true: not null-intolerant in every operand.
        Expr::Binary { op: BinaryOp::And | BinaryOp::Or, .. } | Expr::InList { .. } | Expr::InSet { .. } => None,
        e if !matches!(e, Expr::Literal(_) | Expr::Attribute(_)) && super::null_intolerant(e) && e.children().iter().any(|c| is_null_literal(c)) => {
            null_of(e)
        }
        _ => None,
    }
}

/// `OptimizeIn`: drops duplicate IN items; one item left becomes `=`; more literals than
/// `spark.sql.optimizer.inSetConversionThreshold` become an `INSET` hash lookup.
pub struct OptimizeIn {
    /// `spark.sql.optimizer.inSetConversionThreshold`: an IN list of more literals than this becomes an INSET.
    pub threshold: usize,
}

impl Rule for OptimizeIn {
    fn name(&self) -> &'static str {
        "OptimizeIn"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite_expressions(plan, false, &|e| {
            let Expr::InList { child, list, negated } = e else { return None };
            // Items bucketed by a hash of their debug text, so a long list dedups in linear
            // time; equality within a bucket decides.
            let mut unique: Vec<Expr> = Vec::with_capacity(list.len());
            let mut seen: std::collections::HashMap<u64, Vec<usize>> = std::collections::HashMap::with_capacity(list.len());
            for item in list {
                let bucket = seen.entry(debug_hash(item)).or_default();
                if !bucket.iter().any(|&i| unique[i] == *item) {
                    bucket.push(unique.len());
                    unique.push(item.clone());
                }
            }
            if unique.len() == 1 {
                let eq = child.as_ref().clone().binary(BinaryOp::Eq, unique.remove(0));
                return Some(if *negated { Expr::Not(Box::new(eq)) } else { eq });
            }
            if unique.len() > self.threshold && unique.iter().all(|i| matches!(i, Expr::Literal(_))) {
                let values = unique.into_iter().filter_map(|i| if let Expr::Literal(v) = i { Some(v) } else { None }).collect();
                return Some(Expr::InSet { child: child.clone(), values, negated: *negated });
            }
            (unique.len() < list.len()).then(|| Expr::InList { child: child.clone(), list: unique, negated: *negated })
        })
    }
}

/// A hash of `e`'s debug text, written straight into the hasher (no string per item).
fn debug_hash(e: &Expr) -> u64 {
    use std::hash::Hasher;
    struct Writer(std::collections::hash_map::DefaultHasher);
    impl std::fmt::Write for Writer {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.write(s.as_bytes());
            Ok(())
        }
    }
    let mut w = Writer(Default::default());
    let _ = std::fmt::Write::write_fmt(&mut w, format_args!("{e:?}"));
    w.0.finish()
}

/// `ReplaceNullWithFalseInPredicate`: where a NULL can only mean "row not selected" — a Filter
/// or join condition, through AND, OR and CASE branches — it becomes `false`, which
/// `BooleanSimplification` and `PruneFilters` then fold (`x > NULL AND y` drops every row).
/// Must not fire inside NOT or any other expression, where NULL and false differ.
pub struct ReplaceNullWithFalseInPredicate;

impl Rule for ReplaceNullWithFalseInPredicate {
    fn name(&self) -> &'static str {
        "ReplaceNullWithFalseInPredicate"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Filter { condition, child } => Ok(match null_to_false(condition) {
                Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: child.clone() }),
                None => p,
            }),
            LogicalPlan::Join { left, right, join_type, condition: Some(c), using, hint } => Ok(match null_to_false(c) {
                Some(c) => Arc::new(LogicalPlan::Join { left: left.clone(), right: right.clone(), join_type: *join_type, condition: Some(c), using: using.clone(), hint: *hint }),
                None => p,
            }),
            _ => Ok(p),
        })
    }
}

/// The predicate with NULL literals in selecting positions replaced by `false`, if any.
fn null_to_false(e: &Expr) -> Option<Expr> {
    match e {
        Expr::Literal(v) if v.is_null() => Some(Expr::Literal(ScalarValue::Boolean(false))),
        Expr::Binary { op: op @ (BinaryOp::And | BinaryOp::Or), left, right } => {
            let (l, r) = (null_to_false(left), null_to_false(right));
            if l.is_none() && r.is_none() {
                return None;
            }
            Some(Expr::Binary {
                op: *op,
                left: Box::new(l.unwrap_or_else(|| left.as_ref().clone())),
                right: Box::new(r.unwrap_or_else(|| right.as_ref().clone())),
            })
        }
        Expr::CaseWhen { branches, else_expr, if_form } => {
            let mut changed = false;
            let branches = branches
                .iter()
                .map(|(c, v)| {
                    let v2 = null_to_false(v);
                    changed |= v2.is_some();
                    (c.clone(), v2.unwrap_or_else(|| v.clone()))
                })
                .collect();
            let else_expr = else_expr.as_ref().map(|e| match null_to_false(e) {
                Some(x) => {
                    changed = true;
                    Box::new(x)
                }
                None => e.clone(),
            });
            changed.then_some(Expr::CaseWhen { branches, else_expr, if_form: *if_form })
        }
        _ => None,
    }
}

/// Removes casts to the type the value already has.
pub struct SimplifyCasts;

impl Rule for SimplifyCasts {
    fn name(&self) -> &'static str {
        "SimplifyCasts"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite_expressions(plan, false, &|e| match e {
            Expr::Cast { child, to, .. } if child.data_type().ok().as_ref() == Some(to) => Some(child.as_ref().clone()),
            _ => None,
        })
    }
}

/// Removes `Filter(true)`; `Filter(false)` and `Filter(null)` become an empty `LocalRelation`
/// with the child's columns.
pub struct PruneFilters;

impl Rule for PruneFilters {
    fn name(&self) -> &'static str {
        "PruneFilters"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Filter { condition, child } if is_true(condition) => Ok(child.clone()),
            LogicalPlan::Filter { condition, child } if is_false(condition) || matches!(condition, Expr::Literal(v) if v.is_null()) => {
                Ok(Arc::new(LogicalPlan::LocalRelation { output: child.output(), data: vec![] }))
            }
            _ => Ok(p),
        })
    }
}
