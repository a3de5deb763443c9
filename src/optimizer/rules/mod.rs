//! Optimizer rules, one family per file.

mod aliases;
mod check_cartesian;
mod column_pruning;
mod constant_folding;
mod cost_based_join_reorder;
mod decorrelate;
mod finish_analysis;
mod infer_filters;
mod inject_runtime_filter;
mod joins;
mod limits;
mod local_relation;
mod partitions;
mod push_down_predicates;
mod push_extra_predicates;
mod reorder_join;
mod semi_joins;
mod set_operations;
mod sorts;
mod subquery;
mod unions;

pub use aliases::RemoveRedundantAliases;
pub use check_cartesian::CheckCartesianProducts;
pub use column_pruning::{CollapseProject, ColumnPruning, RemoveNoopOperators};
pub use constant_folding::{
    BooleanSimplification, ConstantFolding, NullPropagation, OptimizeIn, PruneFilters, ReplaceNullWithFalseInPredicate, SimplifyCasts,
};
pub use cost_based_join_reorder::CostBasedJoinReorder;
pub use finish_analysis::{ComputeCurrentTime, EliminateResolvedHint, EliminateSubqueryAliases, ReplaceDistinctWithAggregate, ReplaceExpressions};
pub use infer_filters::InferFiltersFromConstraints;
pub use inject_runtime_filter::InjectRuntimeFilter;
pub use joins::EliminateOuterJoin;
pub use limits::LimitPushDown;
pub use local_relation::{ConvertToLocalRelation, OptimizeLimitZero, PropagateEmptyRelation};
pub use partitions::PruneFileSourcePartitions;
pub use push_down_predicates::PushDownPredicates;
pub use push_extra_predicates::PushExtraPredicateThroughJoin;
pub use reorder_join::ReorderJoin;
pub use semi_joins::{PushDownLeftSemiAntiJoin, PushLeftSemiLeftAntiThroughJoin};
pub use set_operations::{ReplaceExceptWithAntiJoin, ReplaceIntersectWithSemiJoin, RewriteExceptAll, RewriteIntersectAll};
pub use sorts::EliminateSorts;
pub use subquery::{RewriteCorrelatedScalarSubquery, RewriteLateralSubquery, RewritePredicateSubquery};
pub use unions::{CombineUnions, PushProjectionThroughUnion};

use std::collections::HashMap;
use std::sync::Arc;

use crate::expr::{Expr, ExprId};
use crate::plan::LogicalPlan;

/// Replaces references to a Project's aliases by the aliased expressions, so a predicate or
/// projection above the Project can move below it.
pub(crate) fn substitute_aliases(e: &Expr, list: &[Expr]) -> Expr {
    let map: HashMap<ExprId, &Expr> = list
        .iter()
        .filter_map(|x| match x {
            Expr::Alias { child, id, .. } => Some((*id, child.as_ref())),
            _ => None,
        })
        .collect();
    if map.is_empty() {
        return e.clone();
    }
    let r: Result<Expr, std::convert::Infallible> = e.clone().transform_up(&mut |x| match &x {
        Expr::Attribute(a) => Ok(map.get(&a.id).map(|c| (*c).clone()).unwrap_or(x)),
        _ => Ok(x),
    });
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

/// Applies `f` bottom-up to every expression of every node (with `subqueries`, of the plans of
/// subquery expressions too); returns the same Arc where nothing changed.
pub(super) fn rewrite_expressions(plan: &Arc<LogicalPlan>, subqueries: bool, f: &impl Fn(&Expr) -> Option<Expr>) -> crate::error::Result<Arc<LogicalPlan>> {
    let mut rewrite_node = |p: Arc<LogicalPlan>| {
        // A node none of whose expressions `f` rewrites is kept without copying them (most
        // nodes: the rules run to a fixed point over every node).
        if !p.expressions().iter().any(|e| e.exists(&|x| f(x).is_some())) {
            return Ok(p);
        }
        let mut changed = false;
        let new = p.map_expressions(|e| {
            e.transform_up(&mut |x| match f(&x) {
                Some(y) => {
                    changed = true;
                    Ok::<_, crate::error::KilnError>(y)
                }
                None => Ok(x),
            })
        })?;
        Ok(if changed { Arc::new(new) } else { p })
    };
    if subqueries {
        plan.transform_up_with_subqueries(&mut rewrite_node)
    } else {
        plan.transform_up(&mut rewrite_node)
    }
}

/// The ExprIds a plan outputs.
pub(crate) fn output_ids(plan: &LogicalPlan) -> std::collections::BTreeSet<ExprId> {
    plan.output_ids().into_iter().collect()
}

/// True when every column `e` reads is among `ids` (so it can be evaluated over them).
pub(crate) fn reads_only(e: &Expr, ids: &std::collections::BTreeSet<ExprId>) -> bool {
    e.references().iter().all(|id| ids.contains(id))
}

/// True when the expression is NULL whenever any column it reads is NULL (comparisons,
/// arithmetic, casts, most functions). `IS NULL`, `COALESCE`, `CASE` and `OR` are not.
pub(crate) fn null_intolerant(e: &Expr) -> bool {
    use crate::expr::ScalarFunc;
    match e {
        Expr::Attribute(_) | Expr::Literal(_) | Expr::ScalarSubqueryExec(_) => true,
        // An uncorrelated scalar subquery is a constant.
        Expr::ScalarSubquery { plan, .. } => plan.outer_references().is_empty(),
        // Three-valued AND and OR are not: `false AND NULL` is false, `true OR NULL` true.
        Expr::Binary { op: crate::expr::BinaryOp::And | crate::expr::BinaryOp::Or | crate::expr::BinaryOp::EqNullSafe, .. } => false,
        Expr::Binary { left, right, .. } => null_intolerant(left) && null_intolerant(right),
        Expr::Not(c) | Expr::Negative(c) | Expr::Cast { child: c, .. } => null_intolerant(c),
        Expr::Like { child, pattern, .. } => null_intolerant(child) && null_intolerant(pattern),
        Expr::InList { child, .. } | Expr::InSet { child, .. } => null_intolerant(child),
        Expr::Function { func, args } => {
            !matches!(func, ScalarFunc::Coalesce | ScalarFunc::Concat | ScalarFunc::Rand)
                && !matches!(func, ScalarFunc::Builtin(b) if !b.null_intolerant())
                && args.iter().all(null_intolerant)
        }
        _ => false,
    }
}

/// Conjuncts that are false or NULL when one of the given columns is NULL.
pub(crate) fn rejects_nulls_of(e: &Expr, ids: &std::collections::BTreeSet<ExprId>) -> bool {
    e.split_conjunction().iter().any(|c| match c {
        Expr::IsNotNull(inner) => inner.references().iter().any(|id| ids.contains(id)) && null_intolerant(inner),
        c => null_intolerant(c) && c.references().iter().any(|id| ids.contains(id)),
    })
}

#[cfg(test)]
mod tests;
