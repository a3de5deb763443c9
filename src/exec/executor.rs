//! Runs a physical plan: every operator produces its partitions, each partition's work runs
//! on the rayon thread pool (sized to the machine). Exchanges move batches between partitions
//! in memory.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use rayon::prelude::*;

use super::interpreted::{self, schema_of};
use crate::catalog::TableSource;
use crate::datasource::parquet::ParquetTable;
use crate::datasource::pushed_filter::PushedFilter;
use crate::exec::metrics::ScanStats;
use crate::expr::Attribute;
use crate::config::Config;
use crate::error::Result;
use crate::physical::{output_partitioning, BuildSide, HashJoinKind, Partitioning, PhysicalPlan};
use crate::plan::JoinType;

/// A partitioned result: one `Vec<RecordBatch>` per partition.
pub type Partitions = Vec<Vec<RecordBatch>>;

/// Runs `plan` and returns all rows, partitions in order.
pub fn collect(plan: &Arc<PhysicalPlan>, config: &Config) -> Result<Vec<RecordBatch>> {
    Ok(execute(plan, config)?.into_iter().flatten().filter(|b| b.num_rows() > 0 || b.num_columns() == 0).collect())
}

/// Applies `f` to every partition in parallel.
fn par_map(parts: Partitions, f: impl Fn(Vec<RecordBatch>) -> Result<Vec<RecordBatch>> + Sync + Send) -> Result<Partitions> {
    parts.into_par_iter().map(f).collect()
}

/// Runs `plan` and returns its partitions.
pub fn execute(plan: &Arc<PhysicalPlan>, config: &Config) -> Result<Partitions> {
    match plan.as_ref() {
        PhysicalPlan::FileScan { table, output, pushed_filters, selected_files, metrics, .. } => {
            let TableSource::Parquet(parquet) = &table.source else {
                return Err(crate::error::KilnError::internal("FileScan over a memory table"));
            };
            let filters: &[PushedFilter] = if config.parquet_filter_pushdown { pushed_filters } else { &[] };
            let (parts, stats) = scan_parquet(parquet, &table.source.scan_units(selected_files), output, filters, config)?;
            metrics.add(stats);
            Ok(parts)
        }
        PhysicalPlan::InMemoryScan { table, output } => {
            let TableSource::Memory(batches) = &table.source else {
                return Err(crate::error::KilnError::internal("InMemoryScan over a file table"));
            };
            let indices: Vec<usize> = output
                .iter()
                .map(|a| table.schema.index_of(&a.name))
                .collect::<std::result::Result<_, _>>()?;
            let schema = schema_of(output);
            let n = crate::physical::output_partitioning(plan).num_partitions().max(1);
            let mut parts: Partitions = vec![vec![]; n];
            for (i, b) in batches.iter().enumerate() {
                let cols = indices.iter().map(|&c| b.column(c).clone()).collect();
                parts[i % n].push(RecordBatch::try_new(schema.clone(), cols)?);
            }
            Ok(parts)
        }
        PhysicalPlan::LocalTableScan { data, .. } => Ok(vec![data.clone()]),
        PhysicalPlan::Filter { condition, child } => {
            let input = child.output();
            par_map(execute(child, config)?, |batches| {
                batches.iter().map(|b| interpreted::filter(condition, &input, b)).collect()
            })
        }
        PhysicalPlan::Project { list, child } => {
            let input = child.output();
            let schema = schema_of(&plan.output());
            par_map(execute(child, config)?, |batches| {
                batches.iter().map(|b| interpreted::project(list, &input, &schema, b)).collect()
            })
        }
        PhysicalPlan::Expand { projections, child, .. } => {
            let input = child.output();
            let schema = schema_of(&plan.output());
            par_map(execute(child, config)?, |batches| {
                batches.iter().flat_map(|b| projections.iter().map(|p| interpreted::project(p, &input, &schema, b))).collect()
            })
        }
        PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, child } => {
            let input = child.output();
            par_map(execute(child, config)?, |batches| interpreted::hash_aggregate(*mode, grouping, aggregates, result, &input, batches))
        }
        PhysicalPlan::Exchange { partitioning, child, .. } => {
            let input = child.output();
            let parts = execute(child, config)?;
            match partitioning {
                Partitioning::SinglePartition | Partitioning::Unknown(1) => Ok(vec![parts.into_iter().flatten().collect()]),
                Partitioning::Hash(keys, n) => {
                    let split: Vec<Partitions> =
                        parts.into_par_iter().map(|p| interpreted::hash_partition(keys, &input, p, *n)).collect::<Result<_>>()?;
                    let mut out: Partitions = vec![vec![]; *n];
                    for s in split {
                        for (i, batches) in s.into_iter().enumerate() {
                            if let Some(slot) = out.get_mut(i) {
                                slot.extend(batches);
                            }
                        }
                    }
                    Ok(out)
                }
                Partitioning::Range(order, n) => interpreted::range_partition(order, &input, parts.into_iter().flatten().collect(), *n),
                Partitioning::Unknown(n) => Err(crate::error::KilnError::internal(format!("exchange to unknown partitioning of {n}"))),
                Partitioning::Collection(_) => Err(crate::error::KilnError::internal("exchange to a partitioning collection")),
            }
        }
        PhysicalPlan::BroadcastExchange { child, .. } => Ok(vec![execute(child, config)?.into_iter().flatten().collect()]),
        PhysicalPlan::HashJoin { kind, left_keys, right_keys, join_type, build_side, condition, left, right } => {
            let (lo, ro) = (left.output(), right.output());
            let (lp, rp) = (execute(left, config)?, execute(right, config)?);
            if *kind == HashJoinKind::Broadcast && !left_keys.is_empty() {
                // The broadcast side's hash table is built once and probed by every partition.
                let (build_keys, probe_keys, build, stream, build_attrs, stream_attrs) = match build_side {
                    BuildSide::BuildRight => (right_keys, left_keys, rp, lp, &ro, &lo),
                    BuildSide::BuildLeft => (left_keys, right_keys, lp, rp, &lo, &ro),
                };
                let table = interpreted::join::HashTable::build(build_keys, (build_attrs, build.into_iter().flatten().collect()))?;
                return stream
                    .into_par_iter()
                    .map(|part| {
                        interpreted::join::probe_hash_table(*join_type, probe_keys, condition.as_ref(), *build_side, &table, (stream_attrs, part))
                    })
                    .collect();
            }
            let pairs = pair_partitions(*kind == HashJoinKind::Broadcast, *build_side, lp, rp);
            pairs
                .into_par_iter()
                .map(|(l, r)| {
                    interpreted::hash_join(*join_type, left_keys, right_keys, condition.as_ref(), *build_side, (&lo, l), (&ro, r))
                })
                .collect()
        }
        PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, left, right } => {
            let (lo, ro) = (left.output(), right.output());
            let (lp, rp) = (execute(left, config)?, execute(right, config)?);
            pair_partitions(false, BuildSide::BuildRight, lp, rp)
                .into_par_iter()
                .map(|(l, r)| interpreted::sort_merge_join(*join_type, left_keys, right_keys, condition.as_ref(), (&lo, l), (&ro, r)))
                .collect()
        }
        PhysicalPlan::CartesianProduct { condition, left, right } => {
            let (lo, ro) = (left.output(), right.output());
            let (lp, rp) = (execute(left, config)?, execute(right, config)?);
            // Every left partition meets every right partition: output partition i * |right| + j.
            let pairs: Vec<(Vec<RecordBatch>, Vec<RecordBatch>)> =
                lp.iter().flat_map(|l| rp.iter().map(move |r| (l.clone(), r.clone()))).collect();
            pairs
                .into_par_iter()
                .map(|(l, r)| interpreted::nested_loop_join(JoinType::Inner, condition.as_ref(), (&lo, l), (&ro, r)))
                .collect()
        }
        PhysicalPlan::NestedLoopJoin { join_type, build_side, condition, left, right } => {
            let (lo, ro) = (left.output(), right.output());
            let (lp, rp) = (execute(left, config)?, execute(right, config)?);
            let broadcast = *join_type != JoinType::FullOuter;
            let pairs = pair_partitions(broadcast, *build_side, lp, rp);
            pairs
                .into_par_iter()
                .map(|(l, r)| interpreted::nested_loop_join(*join_type, condition.as_ref(), (&lo, l), (&ro, r)))
                .collect()
        }
        PhysicalPlan::Sort { order, child, .. } => {
            let input = child.output();
            par_map(execute(child, config)?, |batches| interpreted::sort(order, &input, batches, None))
        }
        PhysicalPlan::TakeOrderedAndProject { limit, order, list, child } => {
            let input = child.output();
            let tops = par_map(execute(child, config)?, |batches| interpreted::sort(order, &input, batches, Some(*limit)))?;
            let top = interpreted::sort(order, &input, tops.into_iter().flatten().collect(), Some(*limit))?;
            let schema = schema_of(&plan.output());
            Ok(vec![top.iter().map(|b| interpreted::project(list, &input, &schema, b)).collect::<Result<_>>()?])
        }
        PhysicalPlan::CollectLimit { limit, child } | PhysicalPlan::GlobalLimit { limit, child } => {
            let parts = execute(child, config)?;
            Ok(vec![interpreted::limit(parts.into_iter().flatten().collect(), *limit)])
        }
        PhysicalPlan::LocalLimit { limit, child } => par_map(execute(child, config)?, |b| Ok(interpreted::limit(b, *limit))),
        PhysicalPlan::Union { children } => {
            // Every child's batches take the union's schema (names of the first child).
            let schema = schema_of(&plan.output());
            let mut out: Partitions = vec![];
            for child in children {
                for part in execute(child, config)? {
                    out.push(part.into_iter().map(|b| Ok(RecordBatch::try_new(schema.clone(), b.columns().to_vec())?)).collect::<Result<_>>()?);
                }
            }
            Ok(out)
        }
        PhysicalPlan::WholeStageCodegen { fallback, child, .. } => {
            if !config.whole_stage_codegen || fallback.is_some() {
                return execute(child, config);
            }
            let spec = match crate::codegen::StageSpec::from_plan(child) {
                Ok(s) => s,
                Err(_) => return execute(child, config),
            };
            let compiled = match crate::codegen::compile_stage(&spec) {
                Ok(c) => c,
                // A stage that does not compile runs interpreted; EXPLAIN CODEGEN shows why.
                Err(_) => return execute(child, config),
            };
            let input = execute(&spec.input_plan, config)?;
            let build = match &spec.join {
                Some(j) => Some(execute(&j.build_plan, config)?),
                None => None,
            };
            // The build side a partition joins: all of it for a broadcast, else partition i.
            let build_of = |i: usize| -> Vec<RecordBatch> {
                match (&spec.join, &build) {
                    (Some(j), Some(parts)) if j.broadcast => parts.iter().flatten().cloned().collect(),
                    (Some(_), Some(parts)) => parts.get(i).cloned().unwrap_or_default(),
                    _ => vec![],
                }
            };
            let interpret = |i: usize, batches: Vec<RecordBatch>| execute_chain(child, &spec.input_plan, batches, &build_of(i));
            crate::codegen::execute_stage(&spec, &compiled, input, build.as_deref(), &interpret)
        }
    }
}

/// Runs the operators from `plan` down to (not including) `input` on one partition of
/// `input`'s output: the interpreted twin of a compiled stage.
fn execute_chain(plan: &Arc<PhysicalPlan>, input: &Arc<PhysicalPlan>, batches: Vec<RecordBatch>, build: &[RecordBatch]) -> Result<Vec<RecordBatch>> {
    if Arc::ptr_eq(plan, input) {
        return Ok(batches);
    }
    match plan.as_ref() {
        PhysicalPlan::HashJoin { left_keys, right_keys, join_type, build_side, condition, left, right, .. } => {
            let (lo, ro) = (left.output(), right.output());
            let (l, r) = match build_side {
                BuildSide::BuildRight => (execute_chain(left, input, batches, build)?, build.to_vec()),
                BuildSide::BuildLeft => (build.to_vec(), execute_chain(right, input, batches, build)?),
            };
            interpreted::hash_join(*join_type, left_keys, right_keys, condition.as_ref(), *build_side, (&lo, l), (&ro, r))
        }
        PhysicalPlan::Filter { condition, child } => {
            let rows = execute_chain(child, input, batches, build)?;
            let attrs = child.output();
            rows.iter().map(|b| interpreted::filter(condition, &attrs, b)).collect()
        }
        PhysicalPlan::Project { list, child } => {
            let rows = execute_chain(child, input, batches, build)?;
            let (attrs, schema) = (child.output(), schema_of(&plan.output()));
            rows.iter().map(|b| interpreted::project(list, &attrs, &schema, b)).collect()
        }
        PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, child } => {
            let rows = execute_chain(child, input, batches, build)?;
            interpreted::hash_aggregate(*mode, grouping, aggregates, result, &child.output(), rows)
        }
        other => Err(crate::error::KilnError::internal(format!("{} inside a compiled stage", other.node_string(&Config::default())))),
    }
}

/// One partition per (file, row group) unit. A row group whose statistics rule out a pushed
/// filter is skipped: its partition stays empty, so the partition count is the planned one.
/// Within a row group read, pages the page index rules out are not decoded.
fn scan_parquet(
    parquet: &ParquetTable,
    units: &[(usize, usize)],
    output: &[Attribute],
    filters: &[PushedFilter],
    config: &Config,
) -> Result<(Partitions, ScanStats)> {
    if units.is_empty() {
        return Ok((vec![vec![]], ScanStats::default()));
    }
    let names: Vec<String> = output.iter().map(|a| a.name.clone()).collect();
    let schema = schema_of(output);
    let mut files: Vec<usize> = units.iter().map(|(f, _)| *f).collect();
    files.dedup();
    let keep: BTreeMap<usize, Vec<bool>> =
        files.into_par_iter().map(|f| Ok((f, parquet.row_groups_to_read(f, filters)?))).collect::<Result<_>>()?;
    let read = |&(f, g): &(usize, usize)| keep.get(&f).and_then(|k| k.get(g)) != Some(&false);
    let parts: Vec<(Vec<RecordBatch>, u64)> = units
        .par_iter()
        .map(|&(f, g)| {
            if !read(&(f, g)) {
                return Ok((vec![], 0));
            }
            let selection = if filters.is_empty() { None } else { parquet.page_selection(f, g, filters)? };
            let skipped = selection.as_ref().map_or(0, |s| s.skipped_row_count() as u64);
            let batches = parquet
                .read_row_group(f, g, selection, &names, config.batch_size)?
                .into_iter()
                .map(|b| Ok(RecordBatch::try_new(schema.clone(), b.columns().to_vec())?))
                .collect::<Result<_>>()?;
            Ok((batches, skipped))
        })
        .collect::<Result<_>>()?;
    let row_groups_read = units.iter().filter(|u| read(u)).count() as u64;
    let stats = ScanStats {
        files_read: keep.values().filter(|k| k.contains(&true)).count() as u64,
        row_groups_read,
        row_groups_skipped: units.len() as u64 - row_groups_read,
        rows_skipped_by_page_index: parts.iter().map(|(_, skipped)| skipped).sum(),
        rows_out: parts.iter().flat_map(|(b, _)| b).map(|b| b.num_rows() as u64).sum(),
    };
    let parts: Partitions = parts.into_iter().map(|(b, _)| b).collect();
    Ok((parts, stats))
}

/// Pairs the partitions a join runs on: a broadcast side goes whole with every partition of
/// the other side; shuffled sides pair partition i with partition i.
fn pair_partitions(broadcast: bool, build_side: BuildSide, lp: Partitions, rp: Partitions) -> Vec<(Vec<RecordBatch>, Vec<RecordBatch>)> {
    if broadcast {
        match build_side {
            BuildSide::BuildRight => {
                let build: Vec<RecordBatch> = rp.into_iter().flatten().collect();
                lp.into_iter().map(|l| (l, build.clone())).collect()
            }
            BuildSide::BuildLeft => {
                let build: Vec<RecordBatch> = lp.into_iter().flatten().collect();
                rp.into_iter().map(|r| (build.clone(), r)).collect()
            }
        }
    } else {
        let n = lp.len().max(rp.len());
        let mut l = lp.into_iter();
        let mut r = rp.into_iter();
        (0..n).map(|_| (l.next().unwrap_or_default(), r.next().unwrap_or_default())).collect()
    }
}

/// The partition count the plan's root will produce (for tests and metrics).
pub fn num_output_partitions(plan: &PhysicalPlan) -> usize {
    output_partitioning(plan).num_partitions()
}
