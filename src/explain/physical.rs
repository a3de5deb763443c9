//! Spark's one-line description of each physical operator.

use std::collections::HashMap;
use std::sync::Arc;
use std::path::Path;

use arrow::datatypes::DataType;

use crate::catalog::{Table, TableSource};
use crate::datasource::parquet::ParquetTable;
use crate::config::Config;
use crate::physical::metrics::{OperatorStats, PlanMetrics};
use crate::expr::{Attribute, Expr};
use crate::physical::{AggregateMode, BuildSide, HashJoinKind, Partitioning, PhysicalPlan, QueryStageKind};
use crate::types::spark_type_name;

fn list(items: &[Expr], sep: &str) -> String {
    items.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(sep)
}

/// Cuts a metadata value to `max` characters ending in `...`, as Spark's
/// `StringUtils.abbreviate` with `spark.sql.maxMetadataStringLength` does.
fn abbreviate(s: String, max: usize) -> String {
    if s.chars().count() > max {
        format!("{}...", s.chars().take(max.saturating_sub(3)).collect::<String>())
    } else {
        s
    }
}

fn partitioning(p: &Partitioning) -> String {
    match p {
        Partitioning::Hash(keys, n) => format!("hashpartitioning({}, {n})", list(keys, ", ")),
        Partitioning::Range(order, n) => {
            format!("rangepartitioning({}, {n})", order.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", "))
        }
        Partitioning::RoundRobin(n) => format!("RoundRobinPartitioning({n})"),
        Partitioning::SinglePartition => "SinglePartition".into(),
        Partitioning::Unknown(n) => format!("UnknownPartitioning({n})"),
        Partitioning::Collection(members) => format!("PartitioningCollection({})", members.iter().map(partitioning).collect::<Vec<_>>().join(", ")),
    }
}

/// A scan's file index: Spark's class name and root paths. An unpartitioned table is an
/// `InMemoryFileIndex` of its root; a partitioned one a `CatalogFileIndex` of its root until a
/// partition filter prunes it, then an `InMemoryFileIndex` of the partition folders read.
pub(super) fn file_index_paths(table: &ParquetTable, partition_filters: &[Expr], selected_files: &[usize]) -> (&'static str, Vec<String>) {
    let root = vec![format!("file:{}", table.location.display())];
    if !table.is_partitioned() {
        return ("InMemoryFileIndex", root);
    }
    if partition_filters.is_empty() {
        return ("CatalogFileIndex", root);
    }
    let mut dirs: Vec<&Path> = selected_files.iter().filter_map(|&f| table.files.get(f)?.path.parent()).collect();
    dirs.dedup();
    ("InMemoryFileIndex", dirs.iter().map(|d| format!("file:{}", d.display())).collect())
}

/// Spark's file index description: `InMemoryFileIndex(1 paths)[file:/t]`, paths appended until
/// the text reaches `max` characters (`Utils.buildLocationMetadata`).
fn file_index(table: &ParquetTable, partition_filters: &[Expr], selected_files: &[usize], max: usize) -> String {
    let (class, paths) = file_index_paths(table, partition_filters, selected_files);
    let mut text = format!("{class}({} paths)[", paths.len());
    for (i, path) in paths.iter().enumerate() {
        if text.len() >= max {
            break;
        }
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(path);
    }
    text.push(']');
    text
}

/// A scan's `ReadSchema`: the columns read from the files (partition columns come from folder
/// names).
pub(super) fn read_schema(table: &Table, output: &[Attribute]) -> String {
    let read = output.iter().filter(|a| !matches!(&table.source, TableSource::Parquet(t) if t.is_partition_column(&a.name)));
    format!("struct<{}>", read.map(|a| format!("{}:{}", a.name, spark_type_name(&a.data_type))).collect::<Vec<_>>().join(","))
}

/// Spark's `HashJoin.rewriteKeyExpr`: integral keys that fit in 8 bytes together are packed
/// into one bigint key (`cast(input[1, int, true] as bigint)`); other keys stay as they are.
fn long_key(keys: &[String], types: &[DataType]) -> Vec<String> {
    let integral = types.iter().all(crate::types::is_integral);
    if keys.is_empty() || !integral || types.iter().map(crate::stats::default_size).sum::<u128>() > 8 {
        return keys.to_vec();
    }
    let as_long = |k: &str, t: &DataType| if *t == DataType::Int64 { k.to_string() } else { format!("cast({k} as bigint)") };
    let mut key = as_long(&keys[0], &types[0]);
    for (k, t) in keys.iter().zip(types).skip(1) {
        let bits = crate::stats::default_size(t) * 8;
        key = format!("(shiftleft({key}, {bits}) | ({} & {}))", as_long(k, t), (1u128 << bits) - 1);
    }
    vec![key]
}

/// A reservation's operator, as its out-of-memory error names it: the line EXPLAIN prints.
impl crate::common::memory::MemoryConsumer for PhysicalPlan {
    fn consumer_name(&self) -> String {
        self.node_string(&Config::default())
    }
}

impl PhysicalPlan {
    /// The operator's line in a tree string.
    pub fn node_string(&self, config: &Config) -> String {
        let max = config.max_metadata_string_length;
        match self {
            PhysicalPlan::FileScan { table, output, partition_filters, data_filters, pushed_filters, selected_files, .. } => {
                let cols = output.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",");
                let (location, format, batched) = match &table.source {
                    TableSource::Parquet(t) => (file_index(t, partition_filters, selected_files, max), "Parquet", true),
                    TableSource::Text(t) => (format!("InMemoryFileIndex(1 paths)[file:{}]", t.location.display()), if t.format == crate::datasource::text::TextFormat::Csv { "CSV" } else { "JSON" }, false),
                    TableSource::Memory(_) | TableSource::Provider(_) => ("memory".to_string(), "Memory", true),
                };
                let pushed: Vec<String> = pushed_filters.iter().map(|f| f.to_string()).collect();
                let schema = read_schema(table, output);
                format!(
                    "FileScan {} {}[{cols}] Batched: {batched}, DataFilters: {}, Format: {format}, Location: {}, PartitionFilters: {}, PushedFilters: {}, ReadSchema: {}",
                    table.format_name(),
                    table.qualified_name(),
                    abbreviate(format!("[{}]", list(data_filters, ", ")), max),
                    abbreviate(location, max),
                    abbreviate(format!("[{}]", list(partition_filters, ", ")), max),
                    abbreviate(format!("[{}]", pushed.join(", ")), max),
                    abbreviate(schema, max)
                )
            }
            PhysicalPlan::InMemoryScan { table, output, predicates, .. } => match &table.cached {
                Some(cache) => {
                    let scan = match &cache.table_name {
                        Some(name) => format!("Scan In-memory table {name}"),
                        None => "InMemoryTableScan".to_string(),
                    };
                    let predicates = if predicates.is_empty() { String::new() } else { format!(", [{}]", list(predicates, ", ")) };
                    format!("{scan} [{}]{predicates}", attributes(output))
                }
                None => {
                    let cols = output.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",");
                    match &table.source {
                        // A provider's scan shows what it is handed, as a file scan does.
                        TableSource::Provider(_) => {
                            let pushed: Vec<String> = predicates.iter().filter_map(crate::datasource::pushed_filter::PushedFilter::translate).map(|f| f.to_string()).collect();
                            format!("Scan provider {}[{cols}] PushedFilters: [{}]", table.qualified_name(), pushed.join(", "))
                        }
                        _ => format!("InMemoryTableScan {}[{cols}]", table.qualified_name()),
                    }
                }
            },
            PhysicalPlan::LocalTableScan { output, data } => {
                let cols = output.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
                if output.is_empty() {
                    "Scan OneRowRelation[]".to_string()
                } else if data.iter().all(|b| b.num_rows() == 0) {
                    format!("LocalTableScan <empty>, [{cols}]")
                } else {
                    format!("LocalTableScan [{cols}]")
                }
            }
            PhysicalPlan::Range { range, .. } => range.physical_string(),
            PhysicalPlan::FragmentInput { index, output } => {
                format!("FragmentInput {index}, [{}]", output.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "))
            }
            PhysicalPlan::UnionLoop { id, output, .. } => {
                format!("UnionLoop {}, [{}]", id.0, output.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "))
            }
            PhysicalPlan::Filter { condition, .. } => format!("Filter {condition}"),
            PhysicalPlan::Project { list: l, .. } => format!("Project [{}]", list(l, ", ")),
            PhysicalPlan::HashAggregate { mode, grouping, aggregates, .. } => {
                let prefix = if *mode == AggregateMode::Partial { "partial_" } else { "" };
                let funcs: Vec<String> = aggregates
                    .iter()
                    .map(|a| format!("{prefix}{}({}{}{})", a.func.name(), if a.distinct { "distinct " } else { "" }, list(&a.args, ", "), a.func.extra_arguments()))
                    .collect();
                let output = self.output().iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
                let keys: Vec<String> = grouping.iter().map(|g| g.to_string()).collect();
                format!("HashAggregate(keys=[{}], functions=[{}], output=[{output}])", keys.join(", "), funcs.join(", "))
            }
            PhysicalPlan::Exchange { partitioning: p, origin, plan_id, .. } => {
                format!("Exchange {}, {}, [plan_id={plan_id}]", partitioning(p), origin.name())
            }
            PhysicalPlan::Coalesce { partitions, .. } => format!("Coalesce {partitions}"),
            PhysicalPlan::BroadcastExchange { keys, null_aware, plan_id, child } => {
                if keys.is_empty() {
                    return format!("BroadcastExchange IdentityBroadcastMode, [plan_id={plan_id}]");
                }
                let out = child.output();
                let bound: Vec<String> = keys
                    .iter()
                    .map(|k| match k {
                        Expr::Attribute(a) => match out.iter().position(|o| o.id == a.id) {
                            Some(i) => format!("input[{i}, {}, {}]", spark_type_name(&a.data_type), out[i].nullable),
                            None => k.to_string(),
                        },
                        other => other.to_string(),
                    })
                    .collect();
                let types: Vec<DataType> = keys.iter().map(|k| k.data_type().unwrap_or(DataType::Null)).collect();
                format!("BroadcastExchange HashedRelationBroadcastMode(List({}),{null_aware}), [plan_id={plan_id}]", long_key(&bound, &types).join(", "))
            }
            PhysicalPlan::HashJoin { kind, left_keys, right_keys, join_type, build_side, condition, null_aware, .. } => {
                let side = match build_side {
                    BuildSide::BuildLeft => "BuildLeft",
                    BuildSide::BuildRight => "BuildRight",
                };
                let cond = condition.as_ref().map(|c| format!(", {c}")).unwrap_or_default();
                match kind {
                    // Spark's last two arguments: isNullAwareAntiJoin, isSkewJoin.
                    HashJoinKind::Broadcast => format!(
                        "BroadcastHashJoin [{}], [{}], {}, {side}{}, false",
                        list(left_keys, ", "),
                        list(right_keys, ", "),
                        join_type.name(),
                        if cond.is_empty() { format!(", {null_aware}") } else { cond }
                    ),
                    HashJoinKind::Shuffled => {
                        format!("ShuffledHashJoin [{}], [{}], {}, {side}{cond}", list(left_keys, ", "), list(right_keys, ", "), join_type.name())
                    }
                }
            }
            PhysicalPlan::SortMergeJoin { left_keys, right_keys, join_type, condition, .. } => {
                let cond = condition.as_ref().map(|c| format!(", {c}")).unwrap_or_default();
                format!("SortMergeJoin [{}], [{}], {}{cond}", list(left_keys, ", "), list(right_keys, ", "), join_type.name())
            }
            PhysicalPlan::CartesianProduct { condition, .. } => match condition {
                Some(c) => format!("CartesianProduct {c}"),
                None => "CartesianProduct".to_string(),
            },
            PhysicalPlan::NestedLoopJoin { join_type, build_side, condition, .. } => {
                let side = match build_side {
                    BuildSide::BuildLeft => "BuildLeft",
                    BuildSide::BuildRight => "BuildRight",
                };
                let cond = condition.as_ref().map(|c| format!(", {c}")).unwrap_or_default();
                format!("BroadcastNestedLoopJoin {side}, {}{cond}", join_type.name())
            }
            PhysicalPlan::Sort { order, global, .. } => {
                format!("Sort [{}], {global}, 0", order.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", "))
            }
            PhysicalPlan::TakeOrderedAndProject { limit, order, list: l, .. } => format!(
                "TakeOrderedAndProject(limit={limit}, orderBy=[{}], output=[{}])",
                order.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(","),
                crate::plan::named_outputs(l).iter().map(|a| a.to_string()).collect::<Vec<_>>().join(",")
            ),
            PhysicalPlan::CollectLimit { limit, offset: 0, .. } => format!("CollectLimit {limit}"),
            PhysicalPlan::CollectLimit { limit, offset, .. } => format!("CollectLimit {}, {offset}", shown_limit(*limit)),
            PhysicalPlan::LocalLimit { limit, .. } => format!("LocalLimit {limit}"),
            PhysicalPlan::GlobalLimit { limit, offset, .. } => format!("GlobalLimit {}, {offset}", shown_limit(*limit)),
            PhysicalPlan::Union { .. } => "Union".to_string(),
            PhysicalPlan::Expand { projections, output, .. } => {
                let rows: Vec<String> = projections.iter().map(|p| format!("[{}]", list(p, ", "))).collect();
                let cols: Vec<String> = output.iter().map(|a| a.to_string()).collect();
                format!("Expand [{}], [{}]", rows.join(", "), cols.join(", "))
            }
            // Spark's GenerateExec: generator, requiredChildOutput (left out when empty), outer, output.
            PhysicalPlan::Generate { generator, required_child_output, outer, generator_output, .. } => {
                let attrs = |v: &[crate::expr::Attribute]| v.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ");
                let kept = if required_child_output.is_empty() { String::new() } else { format!("[{}], ", attrs(required_child_output)) };
                format!("Generate {generator}, {kept}{outer}, [{}]", attrs(generator_output))
            }
            PhysicalPlan::Window { window_exprs, partition_by, order_by, .. } => {
                let keys = order_by.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", ");
                format!("Window [{}], [{}], [{keys}]", list(window_exprs, ", "), list(partition_by, ", "))
            }
            PhysicalPlan::WholeStageCodegen { id, .. } => format!("WholeStageCodegen ({id})"),
            PhysicalPlan::QueryStage { id, kind, .. } => match kind {
                QueryStageKind::Shuffle => format!("ShuffleQueryStage {id}"),
                QueryStageKind::Broadcast => format!("BroadcastQueryStage {id}"),
                QueryStageKind::Result => format!("ResultQueryStage {id}"),
            },
            PhysicalPlan::ShuffleRead { spec, .. } => format!("AQEShuffleRead {}", spec.description()).trim_end().to_string(),
        }
    }

    /// Spark's tree string of this physical plan: stages are not printed themselves, their
    /// operators carry `*(id)` (compiled stages only).
    pub fn tree_string(&self, config: &Config) -> String {
        self.annotated_tree_string(config, &|_| None)
    }

    /// The tree string with each operator's run-time numbers after it, in brackets; a codegen
    /// stage's numbers (rows out, time, compiled or not) go on its top operator.
    pub fn tree_string_with_metrics(&self, config: &Config, ops: &PlanMetrics) -> String {
        self.annotated_tree_string(config, &|p| match p {
            PhysicalPlan::QueryStage { kind: QueryStageKind::Shuffle | QueryStageKind::Broadcast, output, .. } => Some(format!(
                "output: {} rows, {} in {} partitions",
                output.total_rows(),
                crate::common::bytes_to_string(output.total_bytes() as u128),
                output.num_partitions()
            )),
            _ => ops.get(p).map(|m| m.summary()),
        })
    }

    /// (operator line, numbers) of every operator that ran, in tree order.
    pub fn operator_metrics(&self, config: &Config, ops: &PlanMetrics) -> Vec<(String, OperatorStats)> {
        let mut out = vec![];
        fn walk(p: &PhysicalPlan, config: &Config, ops: &PlanMetrics, out: &mut Vec<(String, OperatorStats)>) {
            if let Some(m) = ops.get(p) {
                out.push((p.node_string(config), m));
            }
            for c in p.tree_children() {
                walk(c, config, ops, out);
            }
        }
        walk(self, config, ops, &mut out);
        out
    }

    fn annotated_tree_string(&self, config: &Config, note: &dyn Fn(&PhysicalPlan) -> Option<String>) -> String {
        let mut stars = HashMap::new();
        mark_stages(self, &mut stars);
        // A stage's top operator speaks for the stage wrapper it is printed without.
        let mut wrappers: HashMap<*const PhysicalPlan, &PhysicalPlan> = HashMap::new();
        fn wrappers_of<'a>(p: &'a PhysicalPlan, out: &mut HashMap<*const PhysicalPlan, &'a PhysicalPlan>) {
            if let PhysicalPlan::WholeStageCodegen { child, .. } = p {
                out.insert(skip_stage(child) as *const PhysicalPlan, p);
            }
            for c in p.tree_children() {
                wrappers_of(c, out);
            }
        }
        wrappers_of(self, &mut wrappers);
        super::draw_tree(
            skip_stage(self),
            &|p: &PhysicalPlan| {
                let line = match stars.get(&(p as *const PhysicalPlan)) {
                    Some(id) => format!("*({id}) {}", p.node_string(config)),
                    None => p.node_string(config),
                };
                let notes: Vec<String> = [wrappers.get(&(p as *const PhysicalPlan)).and_then(|w| note(w)), note(p)].into_iter().flatten().collect();
                let line = if notes.is_empty() { line } else { format!("{line} [{}]", notes.join("; ")) };
                with_subqueries(line, p, config)
            },
            &|p: &PhysicalPlan| p.tree_children().into_iter().map(|c| skip_stage(c)).collect(),
        )
    }
}

/// Spark's inner children: the subqueries an operator hosts hang below its line, before its
/// children, each `Subquery scalar-subquery#N, [id=#M]` over its own plan (under an
/// `AdaptiveSparkPlan` when it runs adaptively, its final plan once it ran).
fn with_subqueries(line: String, p: &PhysicalPlan, config: &Config) -> String {
    if let PhysicalPlan::InMemoryScan { table, relation, .. } = p {
        if let Some(cache) = &table.cached {
            return super::with_inner_children(line, false, &[cache.tree_string(relation)]);
        }
    }
    let indent = |tree: String| tree.lines().enumerate().map(|(i, l)| format!("{}{l}\n", if i == 0 { "+- " } else { "   " })).collect::<String>();
    let inner: Vec<String> = p
        .subqueries()
        .iter()
        .map(|s| {
            let plan = match s.final_physical_plan() {
                Some(final_plan) => super::adaptive_string(final_plan, s.physical_plan(), config),
                None if crate::physical::adaptive::is_adaptive(s.physical_plan(), config) => {
                    format!("AdaptiveSparkPlan isFinalPlan=false\n{}", indent(super::without_stages(s.physical_plan()).tree_string(config)))
                }
                None => s.physical_plan().tree_string(config),
            };
            format!("{}\n{}", Expr::ScalarSubqueryExec(s.clone()), indent(plan))
        })
        .collect();
    super::with_inner_children(line, !p.tree_children().is_empty(), &inner)
}

fn attributes(attrs: &[crate::expr::Attribute]) -> String {
    attrs.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", ")
}

/// The operator under any WholeStageCodegen wrappers.
pub fn skip_stage(p: &PhysicalPlan) -> &PhysicalPlan {
    match p {
        PhysicalPlan::WholeStageCodegen { child, .. } => skip_stage(child),
        other => other,
    }
}

/// Records, for every operator inside a compiled stage, the stage's id.
pub(super) fn mark_stages(p: &PhysicalPlan, stars: &mut HashMap<*const PhysicalPlan, usize>) {
    if let PhysicalPlan::WholeStageCodegen { id, fallback: None, child } = p {
        if let Some((chain, _)) = crate::codegen::StageSpec::chain(child) {
            for op in chain {
                stars.insert(Arc::as_ptr(&op), *id);
            }
        }
    }
    for c in p.tree_children() {
        mark_stages(c, stars);
    }
}

/// A limit as Spark prints it: -1 for none (OFFSET alone).
fn shown_limit(limit: usize) -> String {
    if limit == usize::MAX {
        "-1".into()
    } else {
        limit.to_string()
    }
}
