//! `PruneFileSourcePartitions`, the optimizer's part of partition pruning: a Filter over a
//! partitioned Parquet table that reads a partition column is rebuilt from its conjuncts,
//! left-deep, as Spark rebuilds it when it splits partition filters from data filters. (The
//! pruning itself — which folders to read — is the physical scan's, from the same Filter.)
//!
//! ```text
//! Filter (isnotnull(d) AND ((d >= 2026-10-01) AND (d <= 2026-10-03)))
//! =>
//! Filter ((isnotnull(d) AND (d >= 2026-10-01)) AND (d <= 2026-10-03))
//! ```
//! Must not fire: over a table without partition columns, or when no conjunct reads one.

use std::sync::Arc;

use crate::catalog::TableSource;
use crate::error::Result;
use crate::expr::Expr;
use crate::optimizer::Rule;
use crate::plan::LogicalPlan;

/// Re-associates a Filter on partition columns of a Parquet table.
pub struct PruneFileSourcePartitions;

impl Rule for PruneFileSourcePartitions {
    fn name(&self) -> &'static str {
        "PruneFileSourcePartitions"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| {
            let LogicalPlan::Filter { condition, child } = p.as_ref() else { return Ok(p) };
            let LogicalPlan::Relation { table, output } = child.as_ref() else { return Ok(p) };
            let TableSource::Parquet(parquet) = &table.source else { return Ok(p) };
            let schema = parquet.partition_values.schema();
            let partition_ids: Vec<_> =
                output.iter().filter(|a| schema.fields().iter().any(|f| f.name() == &a.name)).map(|a| a.id).collect();
            let conjuncts = condition.split_conjunction();
            let reads_partition = conjuncts.iter().any(|c| c.deterministic() && c.references().iter().any(|id| partition_ids.contains(id)));
            match Expr::conjunction(conjuncts.into_iter().cloned()) {
                Some(left_deep) if reads_partition && &left_deep != condition => {
                    Ok(Arc::new(LogicalPlan::Filter { condition: left_deep, child: child.clone() }))
                }
                _ => Ok(p),
            }
        })
    }
}
