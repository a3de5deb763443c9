//! `CheckCartesianProducts`: with `spark.sql.crossJoin.enabled=false`, an inner or outer join
//! whose condition (after every filter has been pushed into it) has no conjunct reading both
//! sides is an implicit cartesian product, refused as Spark refuses it.
//!
//! ```text
//! Join Inner, (a = 1)          the conjunct reads one side only: refused
//! Join Inner, (a = c)          reads both: runs
//! Join Cross                   written CROSS JOIN: runs
//! ```
//! A condition that is only `false` (or NULL) is no product. Joins folded away as empty before
//! this batch (`WHERE false`) are never seen, as in Spark.

use std::sync::Arc;

use super::output_ids;
use crate::error::{KilnError, Result};
use crate::expr::Expr;
use crate::optimizer::Rule;
use crate::plan::{JoinType, LogicalPlan};
use crate::types::ScalarValue;

/// Refuses implicit cartesian products unless `spark.sql.crossJoin.enabled` is on.
pub struct CheckCartesianProducts {
    /// `spark.sql.crossJoin.enabled`: when on, the rule does nothing.
    pub cross_join_enabled: bool,
}

impl Rule for CheckCartesianProducts {
    fn name(&self) -> &'static str {
        "CheckCartesianProducts"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        if self.cross_join_enabled {
            return Ok(plan.clone());
        }
        plan.transform_up(&mut |p| {
            if let LogicalPlan::Join { left, right, join_type, condition, .. } = p.as_ref() {
                let checked = matches!(join_type, JoinType::Inner | JoinType::LeftOuter | JoinType::RightOuter | JoinType::FullOuter);
                if checked && is_cartesian_product(left, right, condition.as_ref()) {
                    return Err(implicit_product(*join_type, left, right));
                }
            }
            Ok(p)
        })
    }
}

/// True when no conjunct of `condition` reads a column of each side.
fn is_cartesian_product(left: &LogicalPlan, right: &LogicalPlan, condition: Option<&Expr>) -> bool {
    let conjuncts = condition.map(|c| c.split_conjunction()).unwrap_or_default();
    if let [Expr::Literal(ScalarValue::Boolean(false) | ScalarValue::Null(_))] = conjuncts.as_slice() {
        return false;
    }
    let (l, r) = (output_ids(left), output_ids(right));
    !conjuncts.iter().any(|c| {
        let refs = c.references();
        refs.iter().any(|id| l.contains(id)) && refs.iter().any(|id| r.contains(id))
    })
}

/// Spark's `joinConditionMissingOrTrivialError`, with both sides' plans.
fn implicit_product(join_type: JoinType, left: &LogicalPlan, right: &LogicalPlan) -> KilnError {
    let sql = match join_type {
        JoinType::LeftOuter => "LEFT OUTER",
        JoinType::RightOuter => "RIGHT OUTER",
        JoinType::FullOuter => "FULL OUTER",
        _ => "INNER",
    };
    let (l, r) = (crate::plan::tree_string(left), crate::plan::tree_string(right));
    KilnError::analysis(
        "_LEGACY_ERROR_TEMP_1211",
        format!(
            "Detected implicit cartesian product for {sql} join between logical plans\n{}\nand\n{}\nJoin condition is missing or trivial.\n\
             Either: use the CROSS JOIN syntax to allow cartesian products between these relations, or: enable implicit cartesian \
             products by setting the configuration variable spark.sql.crossJoin.enabled=true.",
            l.trim(),
            r.trim()
        ),
    )
}
