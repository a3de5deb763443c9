//! `EnsureRequirements`: one bottom-up pass that inserts an Exchange (or a BroadcastExchange)
//! wherever a child's partitioning does not satisfy what its parent requires, then a
//! within-partition Sort wherever a child's ordering does not (a SortMergeJoin's inputs).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::{AggregateMode, BuildSide, Distribution, HashJoinKind, Partitioning, PhysicalPlan, ShuffleOrigin};
use crate::catalog::TableSource;
use crate::expr::{Expr, SortOrder};
use crate::plan::JoinType;

static NEXT_PLAN_ID: AtomicU64 = AtomicU64::new(0);

/// A fresh `[plan_id=N]` for an exchange.
pub fn next_plan_id() -> u64 {
    NEXT_PLAN_ID.fetch_add(1, Ordering::Relaxed)
}

/// What each child of `plan` must look like.
pub fn required_child_distribution(plan: &PhysicalPlan) -> Vec<Distribution> {
    match plan {
        PhysicalPlan::HashAggregate { mode: AggregateMode::Final | AggregateMode::Complete, grouping, .. } => {
            vec![if grouping.is_empty() { Distribution::AllTuples } else { Distribution::Clustered(grouping.clone()) }]
        }
        PhysicalPlan::HashJoin { kind: HashJoinKind::Shuffled, left_keys, right_keys, .. } | PhysicalPlan::SortMergeJoin { left_keys, right_keys, .. } => {
            vec![Distribution::Clustered(left_keys.clone()), Distribution::Clustered(right_keys.clone())]
        }
        PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, build_side, .. } => match build_side {
            BuildSide::BuildLeft => vec![Distribution::Broadcast, Distribution::Unspecified],
            BuildSide::BuildRight => vec![Distribution::Unspecified, Distribution::Broadcast],
        },
        PhysicalPlan::NestedLoopJoin { join_type: JoinType::FullOuter, .. } => vec![Distribution::AllTuples, Distribution::AllTuples],
        PhysicalPlan::NestedLoopJoin { build_side, .. } => match build_side {
            BuildSide::BuildLeft => vec![Distribution::Broadcast, Distribution::Unspecified],
            BuildSide::BuildRight => vec![Distribution::Unspecified, Distribution::Broadcast],
        },
        PhysicalPlan::Sort { global: true, order, .. } => vec![Distribution::Ordered(order.clone())],
        PhysicalPlan::GlobalLimit { .. } => vec![Distribution::AllTuples],
        PhysicalPlan::Window { partition_by, .. } => {
            vec![if partition_by.is_empty() { Distribution::AllTuples } else { Distribution::Clustered(partition_by.clone()) }]
        }
        other => other.children().iter().map(|_| Distribution::Unspecified).collect(),
    }
}

/// The order each child's partitions must be sorted in (empty: none). Spark's
/// `requiredChildOrdering`: a SortMergeJoin reads both sides ascending by key, NULLs first.
pub fn required_child_ordering(plan: &PhysicalPlan) -> Vec<Vec<SortOrder>> {
    let ascending = |keys: &[Expr]| keys.iter().map(|k| SortOrder { expr: k.clone(), ascending: true, nulls_first: true }).collect();
    match plan {
        PhysicalPlan::SortMergeJoin { left_keys, right_keys, .. } => vec![ascending(left_keys), ascending(right_keys)],
        // Spark's WindowExec: the partition keys ascending, then the window's order.
        PhysicalPlan::Window { partition_by, order_by, .. } => {
            let mut order: Vec<SortOrder> = ascending(partition_by);
            order.extend(order_by.iter().cloned());
            vec![order]
        }
        other => other.children().iter().map(|_| vec![]).collect(),
    }
}

/// The order the rows of every output partition are in (empty: none known).
pub fn output_ordering(plan: &PhysicalPlan) -> Vec<SortOrder> {
    match plan {
        PhysicalPlan::Sort { order, .. } | PhysicalPlan::TakeOrderedAndProject { order, .. } => order.clone(),
        // Rows come out in the order of the left (right outer: the right) input; a full outer
        // join's null-extended rows of both sides break any order.
        PhysicalPlan::SortMergeJoin { join_type, left, right, .. } => match join_type {
            JoinType::FullOuter => vec![],
            JoinType::RightOuter => output_ordering(right),
            _ => output_ordering(left),
        },
        // Row-by-row operators keep their input's order while the sort keys are still columns.
        PhysicalPlan::Filter { child, .. } | PhysicalPlan::Project { child, .. } | PhysicalPlan::WholeStageCodegen { child, .. } => {
            let out = crate::physical::ids(&plan.output());
            output_ordering(child).into_iter().take_while(|o| o.expr.references().iter().all(|id| out.contains(id))).collect()
        }
        PhysicalPlan::LocalLimit { child, .. }
        | PhysicalPlan::GlobalLimit { child, .. }
        | PhysicalPlan::CollectLimit { child, .. }
        | PhysicalPlan::Window { child, .. } => output_ordering(child),
        _ => vec![],
    }
}

/// Whether rows in `actual` order are also in `required` order: `required` is a prefix.
fn ordering_satisfies(actual: &[SortOrder], required: &[SortOrder]) -> bool {
    required.len() <= actual.len() && required.iter().zip(actual).all(|(r, a)| r == a)
}

/// The keys of a join whose two sides must be hash-partitioned alike.
fn co_partitioned_keys(plan: &PhysicalPlan) -> Option<(&[Expr], &[Expr])> {
    match plan {
        PhysicalPlan::HashJoin { kind: HashJoinKind::Shuffled, left_keys, right_keys, .. } | PhysicalPlan::SortMergeJoin { left_keys, right_keys, .. } => {
            Some((left_keys, right_keys))
        }
        _ => None,
    }
}

/// For a hash partitioning on some of `keys`: the positions in `keys` it hashes, and its
/// width (the first such member of a collection).
fn hash_positions(p: &Partitioning, keys: &[Expr]) -> Option<(Vec<usize>, usize)> {
    match p {
        Partitioning::Hash(exprs, n) => {
            exprs.iter().map(|e| keys.iter().position(|k| k.to_string() == e.to_string())).collect::<Option<Vec<usize>>>().map(|p| (p, *n))
        }
        Partitioning::Collection(members) => members.iter().find_map(|m| hash_positions(m, keys)),
        _ => None,
    }
}

/// How an operator's output rows are spread over partitions.
pub fn output_partitioning(plan: &PhysicalPlan) -> Partitioning {
    match plan {
        PhysicalPlan::FileScan { table, selected_files, .. } => Partitioning::Unknown(table.source.scan_units(selected_files).len().max(1)),
        PhysicalPlan::InMemoryScan { table, .. } => Partitioning::Unknown(scan_partitions(&table.source)),
        PhysicalPlan::LocalTableScan { .. } | PhysicalPlan::UnionLoop { .. } | PhysicalPlan::FragmentInput { .. } => Partitioning::Unknown(1),
        PhysicalPlan::Range { range, .. } => Partitioning::Unknown(range.partitions()),
        PhysicalPlan::Exchange { partitioning, .. } => partitioning.clone(),
        PhysicalPlan::BroadcastExchange { .. } => Partitioning::SinglePartition,
        // Spark's CoalesceExec: one partition is SinglePartition, more are unknown.
        PhysicalPlan::Coalesce { partitions, child } => match (*partitions).min(output_partitioning(child).num_partitions()) {
            1 => Partitioning::SinglePartition,
            n => Partitioning::Unknown(n),
        },
        PhysicalPlan::QueryStage { kind, output, .. } => match kind {
            super::QueryStageKind::Broadcast => Partitioning::SinglePartition,
            _ => output.partitioning.clone(),
        },
        PhysicalPlan::ShuffleRead { spec, child } => super::adaptive::read_partitioning(spec, &output_partitioning(child)),
        PhysicalPlan::HashJoin { kind: HashJoinKind::Broadcast, build_side, left, right, .. }
        | PhysicalPlan::NestedLoopJoin { build_side, left, right, .. } => match build_side {
            BuildSide::BuildLeft => output_partitioning(right),
            BuildSide::BuildRight => output_partitioning(left),
        },
        // Spark's ShuffledJoin: inner rows are clustered on both sides' keys; an outer join's
        // null-extended rows only on the preserved side's.
        PhysicalPlan::HashJoin { join_type, left, right, .. } | PhysicalPlan::SortMergeJoin { join_type, left, right, .. } => match join_type {
            JoinType::Inner | JoinType::Cross => Partitioning::Collection(vec![output_partitioning(left), output_partitioning(right)]),
            JoinType::RightOuter => output_partitioning(right),
            JoinType::FullOuter => Partitioning::Unknown(output_partitioning(left).num_partitions()),
            JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti => output_partitioning(left),
        },
        PhysicalPlan::CartesianProduct { left, right, .. } => {
            Partitioning::Unknown(output_partitioning(left).num_partitions() * output_partitioning(right).num_partitions())
        }
        PhysicalPlan::Union { children } => Partitioning::Unknown(children.iter().map(|c| output_partitioning(c).num_partitions()).sum::<usize>().max(1)),
        PhysicalPlan::TakeOrderedAndProject { .. } | PhysicalPlan::CollectLimit { .. } | PhysicalPlan::GlobalLimit { .. } => {
            Partitioning::SinglePartition
        }
        other => match other.children().first() {
            Some(c) => output_partitioning(c),
            None => Partitioning::Unknown(1),
        },
    }
}

/// Scan tasks of a memory table: one per batch, at least one (Parquet scans: one per row group
/// of the files they read).
pub fn scan_partitions(source: &TableSource) -> usize {
    let parallelism = crate::common::available_cores();
    match source {
        TableSource::Memory(batches) => batches.len().clamp(1, parallelism.max(1) * 2),
        TableSource::Parquet(t) => source.scan_units(&(0..t.files.len()).collect::<Vec<_>>()).len().max(1),
        TableSource::Text(t) => t.files.len().max(1),
        TableSource::Provider(p) => p.partitions(),
    }
}

fn satisfies(p: &Partitioning, d: &Distribution) -> bool {
    if let Partitioning::Collection(members) = p {
        return members.iter().any(|m| satisfies(m, d));
    }
    match d {
        Distribution::Unspecified => true,
        // As Spark: a scan's partitioning is unknown at planning (UnknownPartitioning(0)), so a
        // global aggregate over one gets an `Exchange SinglePartition` even if it reads one file.
        Distribution::AllTuples => !matches!(p, Partitioning::Unknown(_)) && p.num_partitions() == 1,
        Distribution::Clustered(keys) => match p {
            Partitioning::SinglePartition => true,
            Partitioning::Hash(exprs, _) => {
                !exprs.is_empty() && exprs.iter().all(|e| keys.iter().any(|k| k.to_string() == e.to_string()))
            }
            _ => false,
        },
        Distribution::Ordered(order) => match p {
            Partitioning::SinglePartition => true,
            Partitioning::Range(o, _) => o == order,
            _ => false,
        },
        Distribution::Broadcast => false,
    }
}

/// Inserts the exchanges `plan` needs, bottom-up.
pub fn ensure_requirements(plan: &Arc<PhysicalPlan>, shuffle_partitions: usize) -> Arc<PhysicalPlan> {
    let children: Vec<Arc<PhysicalPlan>> = plan.children().into_iter().map(|c| ensure_requirements(c, shuffle_partitions)).collect();
    let required = required_child_distribution(plan);
    let mut new_children = vec![];
    for (child, dist) in children.into_iter().zip(required.iter()) {
        let part = output_partitioning(&child);
        if satisfies(&part, dist) {
            new_children.push(child);
            continue;
        }
        let node = match dist {
            Distribution::Broadcast => {
                if matches!(child.as_ref(), PhysicalPlan::BroadcastExchange { .. } | PhysicalPlan::QueryStage { kind: super::QueryStageKind::Broadcast, .. }) {
                    new_children.push(child);
                    continue;
                }
                let (keys, null_aware) = match plan.as_ref() {
                    PhysicalPlan::HashJoin { left_keys, right_keys, build_side, null_aware, .. } => match build_side {
                        BuildSide::BuildLeft => (left_keys.clone(), *null_aware),
                        BuildSide::BuildRight => (right_keys.clone(), *null_aware),
                    },
                    _ => (vec![], false),
                };
                PhysicalPlan::BroadcastExchange { keys, null_aware, plan_id: next_plan_id(), child }
            }
            Distribution::AllTuples => PhysicalPlan::Exchange { partitioning: Partitioning::SinglePartition, origin: ShuffleOrigin::EnsureRequirements, plan_id: next_plan_id(), child },
            Distribution::Clustered(keys) => {
                PhysicalPlan::Exchange { partitioning: Partitioning::Hash(keys.clone(), shuffle_partitions), origin: ShuffleOrigin::EnsureRequirements, plan_id: next_plan_id(), child }
            }
            Distribution::Ordered(order) => {
                PhysicalPlan::Exchange { partitioning: Partitioning::Range(order.clone(), shuffle_partitions), origin: ShuffleOrigin::EnsureRequirements, plan_id: next_plan_id(), child }
            }
            Distribution::Unspecified => {
                new_children.push(child);
                continue;
            }
        };
        new_children.push(Arc::new(node));
    }
    // Both sides of a shuffled join must use the same number of partitions.
    if let Some((left_keys, right_keys)) = co_partitioned_keys(plan) {
        if let [l, r] = new_children.as_slice() {
            let (ln, rn) = (output_partitioning(l).num_partitions(), output_partitioning(r).num_partitions());
            if ln != rn {
                // Re-shuffle the side that is not at the session width.
                let fix = |c: &Arc<PhysicalPlan>, keys: &[Expr]| -> Arc<PhysicalPlan> {
                    if output_partitioning(c).num_partitions() == shuffle_partitions {
                        c.clone()
                    } else {
                        Arc::new(PhysicalPlan::Exchange {
                            partitioning: Partitioning::Hash(keys.to_vec(), shuffle_partitions),
                            origin: ShuffleOrigin::EnsureRequirements,
                            plan_id: next_plan_id(),
                            child: c.clone(),
                        })
                    }
                };
                new_children = vec![fix(l, left_keys), fix(r, right_keys)];
            }
        }
    }
    // Both sides must be hashed on the same key positions: a side clustered on a subset of its
    // keys (an Aggregate's grouping below) does not line up with a side hashed on all of them.
    if let Some((left_keys, right_keys)) = co_partitioned_keys(plan) {
        if let [l, r] = new_children.as_slice() {
            let positions = |c: &Arc<PhysicalPlan>, keys: &[Expr]| hash_positions(&output_partitioning(c), keys);
            if positions(l, left_keys) != positions(r, right_keys) {
                let full = |c: &Arc<PhysicalPlan>, keys: &[Expr]| -> Arc<PhysicalPlan> {
                    if positions(c, keys) == Some(((0..keys.len()).collect(), shuffle_partitions)) {
                        return c.clone();
                    }
                    Arc::new(PhysicalPlan::Exchange {
                        partitioning: Partitioning::Hash(keys.to_vec(), shuffle_partitions),
                        origin: ShuffleOrigin::EnsureRequirements,
                        plan_id: next_plan_id(),
                        child: c.clone(),
                    })
                };
                new_children = vec![full(l, left_keys), full(r, right_keys)];
            }
        }
    }
    // Then the order within partitions, over the final exchanges.
    let new_children: Vec<Arc<PhysicalPlan>> = new_children
        .into_iter()
        .zip(required_child_ordering(plan))
        .map(|(child, order)| {
            if ordering_satisfies(&output_ordering(&child), &order) {
                child
            } else {
                Arc::new(PhysicalPlan::Sort { order, global: false, child })
            }
        })
        .collect();
    plan.with_children_if_changed(new_children)
}
