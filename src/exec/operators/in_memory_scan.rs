//! `InMemoryScan` (Spark's `InMemoryTableScanExec`): a source over a session table held in
//! memory, each partition a contiguous run of its batches; or over a host's table provider,
//! each partition one call of its scan.

use std::sync::Arc;

use super::not_this;
use crate::error::{KilnError, Result};
use crate::exec::state::Executor;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;
use crate::catalog::TableSource;
use crate::exec::control::on_scan_batch;
use crate::datasource::pushed_filter::PushedFilter;
use crate::exec::interpreted::{self, schema_of};

/// Partition `i`: a contiguous run of the table's batches.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::InMemoryScan { table, output, predicates, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let indices: Vec<usize> = output.iter().map(|a| table.schema.index_of(&a.name)).collect::<std::result::Result<_, _>>()?;
    let schema = schema_of(output);
    let (n, control) = (exec.partitions(plan), exec.control);
    let batches = match &table.source {
        TableSource::Memory(batches) => batches,
        TableSource::Provider(provided) => {
            let filters: Vec<PushedFilter> = predicates.iter().filter_map(PushedFilter::translate).collect();
            let batches = provided.scan(&indices, &filters, i)?;
            return Ok(Box::new(batches.map(move |b| {
                let b = b?;
                on_scan_batch(control, &b)?;
                interpreted::make_batch(schema.clone(), b.columns().to_vec(), b.num_rows())
            })));
        }
        _ => return Err(KilnError::internal("InMemoryScan over a file table")),
    };
    // Each task reads a contiguous run of batches, as a file's splits are read: a
    // table stored in key order then leaves each shuffle partition in key order.
    let range = batches.len() * i / n.max(1)..batches.len() * (i + 1) / n.max(1);
    // Counted as read: the columns the scan reads, not the table's others.
    Ok(Box::new(batches.get(range).unwrap_or_default().iter().map(move |b| {
        let cols = indices.iter().map(|&c| b.column(c).clone()).collect();
        let b = interpreted::make_batch(schema.clone(), cols, b.num_rows())?;
        on_scan_batch(control, &b)?;
        Ok(b)
    })))
}
