//! `FileScan` (Spark's `FileSourceScanExec`): a source. Prepared, it lists its (file, row
//! group) units, one per partition, and which row groups the pushed filters let it skip;
//! partition `i` reads unit `i`.

use std::collections::BTreeMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::not_this;
use crate::catalog::TableSource;
use crate::datasource::pushed_filter::PushedFilter;
use crate::datasource::spark_parquet::ReadSettings;
use crate::error::{KilnError, Result};
use crate::exec::control::on_scan_batch;
use crate::exec::state::{key, Executor, State};
use crate::exec::interpreted::{self, schema_of};
use crate::exec::metrics::ScanStats;
use crate::exec::stream::BatchStream;
use crate::physical::PhysicalPlan;

/// Lists the scan's units and the row groups it reads.
pub(in crate::exec) fn prepare(exec: &mut Executor<'_>, plan: &Arc<PhysicalPlan>) -> Result<()> {
    let PhysicalPlan::FileScan { table, pushed_filters, selected_files, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    if matches!(table.source, TableSource::Text(_)) {
        // One unit per file, none skipped.
        exec.states.insert(key(plan), State::Scan { units: table.source.scan_units(selected_files), keep: BTreeMap::new() });
        return Ok(());
    }
    let TableSource::Parquet(parquet) = &table.source else {
        return Err(KilnError::internal("FileScan over a memory table"));
    };
    let filters: &[PushedFilter] = if exec.config.parquet_filter_pushdown { pushed_filters } else { &[] };
    let units = table.source.scan_units(selected_files);
    let mut files: Vec<usize> = units.iter().map(|(f, _)| *f).collect();
    files.dedup();
    let keep = files.into_par_iter().map(|f| Ok((f, parquet.row_groups_to_read(f, filters, &ReadSettings::of(exec.config))?))).collect::<Result<_>>()?;
    exec.states.insert(key(plan), State::Scan { units, keep });
    Ok(())
}

/// Partition `i`: the batches of the scan's unit `i`.
pub(in crate::exec) fn stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::FileScan { table, output, pushed_filters, metrics, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    if matches!(table.source, TableSource::Text(_)) {
        return text_stream(exec, plan, i);
    }
    let TableSource::Parquet(parquet) = &table.source else {
        return Err(KilnError::internal("FileScan over a memory table"));
    };
    let State::Scan { units, keep } = exec.state(plan)? else { return Err(KilnError::internal("scan state")) };
    let Some(&(f, g)) = units.get(i) else { return Ok(Box::new(std::iter::empty())) };
    if keep.get(&f).and_then(|k| k.get(g)) == Some(&false) {
        metrics.add(ScanStats { row_groups_skipped: 1, ..Default::default() });
        return Ok(Box::new(std::iter::empty()));
    }
    let filters: &[PushedFilter] = if config.parquet_filter_pushdown { pushed_filters } else { &[] };
    let selection = if filters.is_empty() { None } else { parquet.page_selection(f, g, filters, &ReadSettings::of(config))? };
    let skipped = selection.as_ref().map_or(0, |s| s.skipped_row_count() as u64);
    // A file counts as read once, by its first row group read.
    let first_read = keep.get(&f).and_then(|k| k.iter().position(|r| *r)) == Some(g);
    metrics.add(ScanStats {
        files_read: u64::from(first_read),
        row_groups_read: 1,
        rows_skipped_by_page_index: skipped,
        ..Default::default()
    });
    let names: Vec<String> = output.iter().map(|a| a.name.clone()).collect();
    let schema = schema_of(output);
    let batches = parquet.row_group_batches(f, g, selection, &names, &ReadSettings::of(config))?;
    let control = exec.control;
    Ok(Box::new(batches.map(move |b| {
        let b = b?;
        on_scan_batch(control, &b)?;
        metrics.add(ScanStats { rows_out: b.num_rows() as u64, ..Default::default() });
        interpreted::make_batch(schema.clone(), b.columns().to_vec(), b.num_rows())
    })))
}

fn text_stream<'s>(exec: &'s Executor<'_>, plan: &'s Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'s>> {
    let PhysicalPlan::FileScan { table, output, metrics, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let config = exec.config;
    let (TableSource::Text(text), State::Scan { units, .. }) = (&table.source, exec.state(plan)?) else {
        return Err(KilnError::internal("text scan state"));
    };
    let Some(&(f, _)) = units.get(i) else { return Ok(Box::new(std::iter::empty())) };
    metrics.add(ScanStats { files_read: 1, ..Default::default() });
    let names: Vec<String> = output.iter().map(|a| a.name.clone()).collect();
    let schema = schema_of(output);
    let control = exec.control;
    Ok(Box::new(text.batches(f, &names, config.batch_size, config.time_zone())?.map(move |b| {
        let b = b?;
        on_scan_batch(control, &b)?;
        metrics.add(ScanStats { rows_out: b.num_rows() as u64, ..Default::default() });
        interpreted::make_batch(schema.clone(), b.columns().to_vec(), b.num_rows())
    })))
}
