//! Adaptive execution's rule for null-aware anti joins (Spark's `AQEPropagateEmptyRelation`
//! on `ExtractSingleColumnNullAwareAntiJoin`): once the build side has run, a NULL among its
//! keys means `x NOT IN (subquery)` holds for no row, so the join and everything under its
//! stream side become an empty `LocalTableScan`.

use std::sync::Arc;

use super::{PhysicalPlan, QueryStageKind};
use crate::expr::eval::evaluate;

/// `plan` with every null-aware anti join whose finished broadcast side has a NULL key replaced
/// by an empty relation of the join's columns; also whether one was.
pub fn eliminate_null_aware_anti_joins(plan: &Arc<PhysicalPlan>) -> (Arc<PhysicalPlan>, bool) {
    if let PhysicalPlan::HashJoin { null_aware: true, right_keys, right, .. } = plan.as_ref() {
        if let (PhysicalPlan::QueryStage { kind: QueryStageKind::Broadcast, output, .. }, [key]) = (right.as_ref(), right_keys.as_slice()) {
            let attrs = right.output();
            // A partition that cannot be read or a key that does not evaluate leaves the join
            // as it is: it runs and reports the problem itself.
            let null_key = (0..output.num_partitions())
                .filter_map(|i| output.partition(i).ok())
                .flatten()
                .any(|b| evaluate(key, &b, &attrs).is_ok_and(|k| k.logical_null_count() > 0));
            if null_key {
                return (Arc::new(PhysicalPlan::LocalTableScan { output: plan.output(), data: vec![] }), true);
            }
        }
    }
    let mut changed = false;
    let children = plan
        .children()
        .into_iter()
        .map(|c| {
            let (c, ch) = eliminate_null_aware_anti_joins(c);
            changed |= ch;
            c
        })
        .collect();
    (plan.with_children_if_changed(children), changed)
}
