//! `EXCEPT` and `INTERSECT` as joins, as Spark's "Replace Operators" batch rewrites them:
//! the distinct forms with a null-safe equality of every column and a Distinct
//! (`ReplaceExceptWithAntiJoin`, `ReplaceIntersectWithSemiJoin`):
//!
//! ```text
//! Except false                 Distinct
//! :- left               =>     +- Join LeftAnti, ((a#1 <=> a#3) AND (b#2 <=> b#4))
//! +- right                        :- left
//!                                 +- right
//! ```
//! The ALL forms (`RewriteExceptAll`, `RewriteIntersectAll`; Spark replicates rows with a
//! Generate, which kiln has not) number the copies of each row on both sides with
//! `row_number() OVER (PARTITION BY every column)` and join on the columns and the number:
//! the left's n-th copy of a row survives EXCEPT ALL when the right has fewer than n copies,
//! and INTERSECT ALL when it has at least n.

use std::sync::Arc;

use crate::error::Result;
use crate::expr::{Attribute, BinaryOp, Expr, SortOrder, WindowFrame, WindowFunc, WindowSpec};
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan, SetOperationKind};

/// `Except` (distinct) to a left anti join under a Distinct.
pub struct ReplaceExceptWithAntiJoin;
/// `Intersect` (distinct) to a left semi join under a Distinct.
pub struct ReplaceIntersectWithSemiJoin;
/// `Except All` to an anti join of numbered copies.
pub struct RewriteExceptAll;
/// `Intersect All` to a semi join of numbered copies.
pub struct RewriteIntersectAll;

fn rewrite(plan: &Arc<LogicalPlan>, kind: SetOperationKind, all: bool) -> Result<Arc<LogicalPlan>> {
    plan.transform_up(&mut |p| match p.as_ref() {
        LogicalPlan::SetOperation { kind: k, all: a, left, right } if *k == kind && *a == all => {
            let join_type = if kind == SetOperationKind::Except { JoinType::LeftAnti } else { JoinType::LeftSemi };
            Ok(Arc::new(if all { numbered_join(left, right, join_type) } else { distinct_join(left, right, join_type) }))
        }
        _ => Ok(p),
    })
}

fn null_safe_equal(l: &[Attribute], r: &[Attribute]) -> Vec<Expr> {
    l.iter().zip(r).map(|(a, b)| a.expr().binary(BinaryOp::EqNullSafe, b.expr())).collect()
}

fn join(left: Arc<LogicalPlan>, right: Arc<LogicalPlan>, join_type: JoinType, condition: Option<Expr>) -> LogicalPlan {
    LogicalPlan::Join { left, right, join_type, condition, using: vec![], hint: Default::default() }
}

fn distinct_join(left: &Arc<LogicalPlan>, right: &Arc<LogicalPlan>, join_type: JoinType) -> LogicalPlan {
    let condition = Expr::conjunction(null_safe_equal(&left.output(), &right.output()));
    LogicalPlan::Distinct { child: Arc::new(join(left.clone(), right.clone(), join_type, condition)) }
}

/// `plan` with a column numbering the copies of each row.
fn numbered(plan: &Arc<LogicalPlan>) -> (Arc<LogicalPlan>, Attribute) {
    let cols: Vec<Expr> = plan.output().iter().map(|a| a.expr()).collect();
    let order = cols.iter().map(|c| SortOrder { expr: c.clone(), ascending: true, nulls_first: true }).collect::<Vec<_>>();
    let spec = WindowSpec { partition_by: cols.clone(), order_by: order.clone(), frame: Some(WindowFrame::running_rows()) };
    let rn = Expr::WindowExpression { function: Box::new(Expr::WindowFunction { func: WindowFunc::RowNumber, args: vec![] }), spec, ignore_nulls: false }
        .alias("copy_number");
    let attr = crate::plan::named_output(&rn).unwrap_or_else(|| Attribute::new("copy_number", arrow::datatypes::DataType::Int32, false));
    (Arc::new(LogicalPlan::Window { window_exprs: vec![rn], partition_by: cols, order_by: order, child: plan.clone() }), attr)
}

fn numbered_join(left: &Arc<LogicalPlan>, right: &Arc<LogicalPlan>, join_type: JoinType) -> LogicalPlan {
    let (l, ln) = numbered(left);
    let (r, rn) = numbered(right);
    let mut conds = null_safe_equal(&left.output(), &right.output());
    conds.push(ln.expr().binary(BinaryOp::Eq, rn.expr()));
    let joined = join(l, r, join_type, Expr::conjunction(conds));
    LogicalPlan::Project { list: left.output().iter().map(|a| a.expr()).collect(), child: Arc::new(joined) }
}

impl Rule for ReplaceExceptWithAntiJoin {
    fn name(&self) -> &'static str {
        "ReplaceExceptWithAntiJoin"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite(plan, SetOperationKind::Except, false)
    }
}

impl Rule for ReplaceIntersectWithSemiJoin {
    fn name(&self) -> &'static str {
        "ReplaceIntersectWithSemiJoin"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite(plan, SetOperationKind::Intersect, false)
    }
}

impl Rule for RewriteExceptAll {
    fn name(&self) -> &'static str {
        "RewriteExceptAll"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite(plan, SetOperationKind::Except, true)
    }
}

impl Rule for RewriteIntersectAll {
    fn name(&self) -> &'static str {
        "RewriteIntersectAll"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        rewrite(plan, SetOperationKind::Intersect, true)
    }
}
