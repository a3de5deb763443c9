//! Physical plans: the operators the executor runs, their partitioning and ordering, and the
//! requirements `EnsureRequirements` meets by inserting Exchange and Sort.

pub mod adaptive;
pub mod metrics;

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use crate::catalog::Table;
use crate::datasource::pushed_filter::PushedFilter;
use self::metrics::ScanMetrics;
use crate::expr::{AggFunc, Attribute, Expr, ExprId, Generator, ScalarSubqueryExec, SortOrder};
use crate::plan::JoinType;

/// Physical planning with a session's injected strategies (see `crate::extensions`).
pub use planner::{aggregate_expr, plan_physical_with_strategies, plan_standalone, FormStages, PlannerStrategy};

/// How rows are spread over partitions.
#[derive(Debug, Clone, PartialEq)]
pub enum Partitioning {
    /// Whatever the source gives, with this many partitions.
    Unknown(usize),
    /// Every row in one partition.
    SinglePartition,
    /// `hashpartitioning(keys, n)`: Spark's Murmur3 of the keys, mod n.
    Hash(Vec<Expr>, usize),
    /// `rangepartitioning(order, n)`: sorted ranges.
    Range(Vec<SortOrder>, usize),
    /// `RoundRobinPartitioning(n)`: each input task deals its rows out in turn (`repartition(n)`).
    RoundRobin(usize),
    /// Several descriptions of the same partitions (an inner shuffled join's output is hashed
    /// on the left keys and on the right keys alike): satisfies what any member satisfies.
    Collection(Vec<Partitioning>),
}

impl Partitioning {
    /// Number of partitions.
    pub fn num_partitions(&self) -> usize {
        match self {
            Partitioning::Unknown(n) | Partitioning::Hash(_, n) | Partitioning::Range(_, n) | Partitioning::RoundRobin(n) => *n,
            Partitioning::SinglePartition => 1,
            Partitioning::Collection(members) => members.first().map_or(1, |m| m.num_partitions()),
        }
    }
}

/// Who asked for an exchange (Spark's `ShuffleOrigin`): AQE may coalesce the partitions of
/// the first two, never those of a repartition to a number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShuffleOrigin {
    /// An operator's required distribution (`ENSURE_REQUIREMENTS`).
    EnsureRequirements,
    /// `repartition(cols)` without a number (`REPARTITION_BY_COL`).
    RepartitionByCol,
    /// `repartition(n, ...)`, `repartition_by_range(n, ...)` (`REPARTITION_BY_NUM`).
    RepartitionByNum,
}

impl ShuffleOrigin {
    /// Spark's name, as EXPLAIN prints it.
    pub fn name(&self) -> &'static str {
        match self {
            ShuffleOrigin::EnsureRequirements => "ENSURE_REQUIREMENTS",
            ShuffleOrigin::RepartitionByCol => "REPARTITION_BY_COL",
            ShuffleOrigin::RepartitionByNum => "REPARTITION_BY_NUM",
        }
    }
}

/// What an operator needs of its child's partitioning.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// No requirement: any partitioning will do.
    Unspecified,
    /// All rows in one partition.
    AllTuples,
    /// Rows with equal keys in the same partition.
    Clustered(Vec<Expr>),
    /// Partitions hold consecutive ranges of this order.
    Ordered(Vec<SortOrder>),
    /// The whole child, copied to every task.
    Broadcast,
}

/// Which stage of a two-phase aggregation an operator runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggregateMode {
    /// Input rows -> per-group buffers (`partial_sum`).
    Partial,
    /// Buffers from many partitions -> merged buffers -> results.
    Final,
    /// Input rows -> results in one step (single partition).
    Complete,
}

/// One aggregate function call inside a HashAggregate.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregateExpr {
    /// The aggregate function (`sum`, `count`, ...).
    pub func: AggFunc,
    /// The function's argument expressions.
    pub args: Vec<Expr>,
    /// Whether the call is `DISTINCT` (`count(DISTINCT x)`).
    pub distinct: bool,
    /// The attribute the final result is bound to (`sum(amount#3)#9`).
    pub result: Attribute,
    /// The buffer columns a partial aggregate emits (`sum#10, isEmpty#11`).
    pub buffer: Vec<Attribute>,
}

/// Which side of a hash join is loaded into the hash table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildSide {
    /// The left child is the build side; the right child is streamed.
    BuildLeft,
    /// The right child is the build side; the left child is streamed.
    BuildRight,
}

/// A physical operator.
#[derive(Debug, Clone)]
pub enum PhysicalPlan {
    /// Reads Parquet files; only the `output` columns are decoded (partition columns come
    /// from the folder names).
    FileScan {
        /// The Parquet table scanned.
        table: Arc<Table>,
        /// The columns read: needed data columns, then every partition column.
        output: Vec<Attribute>,
        /// Conjuncts over partition columns only: they chose `selected_files`.
        partition_filters: Vec<Expr>,
        /// Deterministic conjuncts over data columns, which the source may use to skip data.
        data_filters: Vec<Expr>,
        /// The data filters the Parquet reader checks against row-group statistics.
        pushed_filters: Vec<PushedFilter>,
        /// The table's files this scan reads (indices into its file list).
        selected_files: Vec<usize>,
        /// What the scan read in its last run: files, row groups read and skipped, rows.
        metrics: Arc<ScanMetrics>,
    },
    /// Reads a session table held in memory.
    InMemoryScan {
        /// The in-memory table scanned.
        table: Arc<Table>,
        /// The columns read from it.
        output: Vec<Attribute>,
        /// A cache's scan: the deterministic conjuncts of the Filter above it, printed as
        /// Spark's `InMemoryTableScan` prints the predicates it may skip batches by (the
        /// Filter still checks every row). Empty for other in-memory tables.
        predicates: Vec<Expr>,
        /// Every column of the relation scanned, with this query's ids (its `InMemoryRelation`
        /// line lists them).
        relation: Vec<Attribute>,
    },
    /// Rows known at planning time.
    LocalTableScan {
        /// The columns of the rows.
        output: Vec<Attribute>,
        /// The rows themselves.
        data: Vec<RecordBatch>,
    },
    /// Spark's `RangeExec`: the values of a `range(...)`, each partition generated a batch at a
    /// time as it is read.
    Range {
        /// The `id` column.
        output: Vec<Attribute>,
        /// The range's arguments.
        range: crate::datasource::range::RangeSpec,
    },
    /// Batches the caller of a plan fragment supplies ([`crate::exec::fragment`]): input
    /// `index` of the fragment's inputs, read once by the task running it. Printed
    /// `FragmentInput index, [cols]`.
    FragmentInput {
        /// Which of the caller's inputs.
        index: usize,
        /// The input's columns.
        output: Vec<Attribute>,
    },
    /// A recursive CTE's rows (Spark's `UnionLoopExec`), printed `UnionLoop id, [cols]`: before
    /// the stage reading it runs, the anchor runs as a query of its own, then the recursion,
    /// planned anew over the previous step's rows, step after step until one yields no row.
    UnionLoop {
        /// The logical loop's id, which its `UnionLoopRef`s carry.
        id: ExprId,
        /// The loop's columns.
        output: Vec<Attribute>,
        /// The optimized anchor.
        anchor: Arc<crate::plan::LogicalPlan>,
        /// The optimized recursion, reading the previous step through `UnionLoopRef`s.
        recursion: Arc<crate::plan::LogicalPlan>,
        /// Stop once this many rows are produced (a LIMIT pushed into the loop).
        limit: Option<usize>,
        /// The rows, once the loop ran.
        rows: Arc<std::sync::OnceLock<Vec<RecordBatch>>>,
    },
    /// Keeps the rows for which `condition` is true.
    Filter {
        /// The predicate; rows where it is false or NULL are dropped.
        condition: Expr,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// Computes a list of expressions for every row.
    Project {
        /// The output expressions, each named (Alias or Attribute).
        list: Vec<Expr>,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// Groups rows by `grouping` in a hash table and computes the aggregates per group.
    HashAggregate {
        /// Which stage of the aggregation this operator runs.
        mode: AggregateMode,
        /// Grouping expressions: named (Alias or Attribute) so the output has ids.
        grouping: Vec<Expr>,
        /// The aggregate function calls computed per group.
        aggregates: Vec<AggregateExpr>,
        /// Final output expressions over grouping attributes and aggregate results (Final/Complete).
        result: Vec<Expr>,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// A shuffle: redistributes the child's rows into `partitioning` (inserted by
    /// `EnsureRequirements`, or asked for by a repartition).
    Exchange {
        /// The partitioning the output rows get.
        partitioning: Partitioning,
        /// Who asked for it, printed after the partitioning (Spark's `ShuffleOrigin`).
        origin: ShuffleOrigin,
        /// Unique id of this exchange, shown as `[plan_id=N]` in plans.
        plan_id: u64,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// `coalesce(n)` (Spark's `CoalesceExec`, printed `Coalesce n`): the child's partitions
    /// merged, in order, into at most `partitions`, without a shuffle.
    Coalesce {
        /// The number of partitions asked for.
        partitions: usize,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// Collects the whole child into one partition for every task of a broadcast join
    /// (inserted by `EnsureRequirements`).
    BroadcastExchange {
        /// The build side's join keys (`HashedRelationBroadcastMode`); empty for a nested-loop
        /// join (`IdentityBroadcastMode`).
        keys: Vec<Expr>,
        /// For a null-aware anti join's build side (`HashedRelationBroadcastMode(.., true)`).
        null_aware: bool,
        /// Unique id of this exchange, shown as `[plan_id=N]` in plans.
        plan_id: u64,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// An equi-join on hash keys, with an optional extra condition.
    HashJoin {
        /// Broadcast or shuffled hash join.
        kind: HashJoinKind,
        /// Join keys over the left child's output, paired with `right_keys` by position.
        left_keys: Vec<Expr>,
        /// Join keys over the right child's output, paired with `left_keys` by position.
        right_keys: Vec<Expr>,
        /// Inner, outer, semi or anti join.
        join_type: JoinType,
        /// Which child is loaded into the hash table.
        build_side: BuildSide,
        /// An extra non-equi condition that key-matched row pairs must also pass.
        condition: Option<Expr>,
        /// Spark's `isNullAwareAntiJoin`: a single-key LeftAnti join for `x NOT IN (subquery)`
        /// (build side empty: every row stays; a NULL build key: no row does; else a row
        /// stays when its key is not NULL and matches nothing).
        null_aware: bool,
        /// The left input.
        left: Arc<PhysicalPlan>,
        /// The right input.
        right: Arc<PhysicalPlan>,
    },
    /// An equi-join of two inputs hash-partitioned and sorted on their keys: one merge pass
    /// over both (Spark's SortMergeJoin). `EnsureRequirements` adds the Exchanges and Sorts.
    SortMergeJoin {
        /// Join keys over the left child's output, paired with `right_keys` by position.
        left_keys: Vec<Expr>,
        /// Join keys over the right child's output, paired with `left_keys` by position.
        right_keys: Vec<Expr>,
        /// Inner, outer, semi or anti join.
        join_type: JoinType,
        /// An extra non-equi condition that key-matched row pairs must also pass.
        condition: Option<Expr>,
        /// The left input.
        left: Arc<PhysicalPlan>,
        /// The right input.
        right: Arc<PhysicalPlan>,
    },
    /// An inner join without equi-keys that pairs every partition of the left with every
    /// partition of the right (Spark's CartesianProduct).
    CartesianProduct {
        /// The condition each row pair is tested against; `None` keeps every pair.
        condition: Option<Expr>,
        /// The left input.
        left: Arc<PhysicalPlan>,
        /// The right input.
        right: Arc<PhysicalPlan>,
    },
    /// A join without equi-keys: every pair is tested (Spark's BroadcastNestedLoopJoin).
    NestedLoopJoin {
        /// Inner, outer, semi or anti join.
        join_type: JoinType,
        /// Which child is broadcast (for a full outer join both children are gathered into one
        /// partition instead).
        build_side: BuildSide,
        /// The join condition each row pair is tested against; `None` is a cross join.
        condition: Option<Expr>,
        /// The left input.
        left: Arc<PhysicalPlan>,
        /// The right input.
        right: Arc<PhysicalPlan>,
    },
    /// Sorts rows by `order`, within each partition or (when `global`) across all of them.
    Sort {
        /// The sort keys, with direction and null ordering.
        order: Vec<SortOrder>,
        /// Whether the output is totally ordered across partitions (requires range-partitioned
        /// input); otherwise each partition is sorted on its own.
        global: bool,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// `ORDER BY ... LIMIT n` without a global sort.
    TakeOrderedAndProject {
        /// How many rows to keep.
        limit: usize,
        /// The order that decides which rows come first.
        order: Vec<SortOrder>,
        /// The output expressions computed over the kept rows.
        list: Vec<Expr>,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// A top-level `LIMIT n [OFFSET o]` collected to the driver.
    CollectLimit {
        /// How many rows to keep (`usize::MAX`, printed -1, for OFFSET alone).
        limit: usize,
        /// How many rows to skip first.
        offset: usize,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// Keeps the first `limit` rows of each partition.
    LocalLimit {
        /// How many rows to keep per partition.
        limit: usize,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// Keeps the first `limit` rows overall after skipping `offset` (its child is a single partition).
    GlobalLimit {
        /// How many rows to keep (`usize::MAX`, printed -1, for OFFSET alone).
        limit: usize,
        /// How many rows to skip first.
        offset: usize,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// Each input row once per projection (grouping sets); interpreted, not fused.
    Expand {
        /// One list of expressions per output copy of a row, matching `output` by position.
        projections: Vec<Vec<Expr>>,
        /// The columns produced.
        output: Vec<Attribute>,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// A generator's rows joined to the row each came from (Spark's `GenerateExec`), streamed:
    /// each input batch becomes batches of at most the batch size. Interpreted, outside the
    /// codegen stages (Spark compiles it into its stage; see `codegen::outside_stage_reason`).
    Generate {
        /// The generator call.
        generator: Generator,
        /// The child's columns passed through, before the generated ones.
        required_child_output: Vec<Attribute>,
        /// A row the generator makes no rows of is kept once, with NULLs.
        outer: bool,
        /// The generated columns.
        generator_output: Vec<Attribute>,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// Window functions over each partition (Spark's `WindowExec`): the child arrives clustered
    /// on the partition keys and sorted by them and the order keys; a per-partition breaker.
    Window {
        /// The window expressions, each aliased.
        window_exprs: Vec<Expr>,
        /// The partition keys.
        partition_by: Vec<Expr>,
        /// The order within a partition.
        order_by: Vec<SortOrder>,
        /// The input operator.
        child: Arc<PhysicalPlan>,
    },
    /// `UNION ALL`: the partitions of every child, one after the other.
    Union {
        /// The inputs, in order; the columns are the first input's.
        children: Vec<Arc<PhysicalPlan>>,
    },
    /// A query stage adaptive execution has run (`ShuffleQueryStage 0`): a leaf whose rows are
    /// its finished output. `plan` is what ran (the exchange and the stage below it), printed
    /// under it.
    QueryStage {
        /// The stage id, in the order stages ran.
        id: usize,
        /// Shuffle, broadcast, or the result stage.
        kind: QueryStageKind,
        /// The plan that ran.
        plan: Arc<PhysicalPlan>,
        /// Its output partitions and their sizes.
        output: Arc<adaptive::StageOutput>,
    },
    /// How a stage reads a finished shuffle: partitions coalesced, split when skewed, or read
    /// without their hash layout (`AQEShuffleRead coalesced`).
    ShuffleRead {
        /// The partitions read, in output order.
        spec: adaptive::ShuffleReadSpec,
        /// The shuffle query stage read.
        child: Arc<PhysicalPlan>,
    },
    /// A pipeline compiled into one native function (`*(id)` in plans); `fallback` says why
    /// it runs interpreted instead, when it does.
    WholeStageCodegen {
        /// The stage's codegen id, shown as `*(id)`.
        id: usize,
        /// Why the stage runs interpreted, if it does.
        fallback: Option<String>,
        /// The root of the fused pipeline.
        child: Arc<PhysicalPlan>,
    },
}

/// What a query stage ends in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryStageKind {
    /// An Exchange (`ShuffleQueryStage`).
    Shuffle,
    /// A BroadcastExchange (`BroadcastQueryStage`).
    Broadcast,
    /// The query's root (`ResultQueryStage`).
    Result,
}

/// How a hash join gets both sides' matching keys together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashJoinKind {
    /// The build side is broadcast to every partition of the stream side.
    Broadcast,
    /// Both sides are hash-partitioned on the keys.
    Shuffled,
}

impl PhysicalPlan {
    /// The planned scalar subqueries this operator's own expressions read, in order (Spark
    /// prints them below the operator, before its children).
    pub fn subqueries(&self) -> Vec<Arc<ScalarSubqueryExec>> {
        let orders = |o: &[SortOrder]| o.iter().map(|s| s.expr.clone()).collect::<Vec<_>>();
        let exprs: Vec<Expr> = match self {
            PhysicalPlan::Filter { condition, .. } => vec![condition.clone()],
            PhysicalPlan::Project { list, .. } => list.clone(),
            PhysicalPlan::HashAggregate { grouping, aggregates, result, .. } => {
                grouping.iter().chain(aggregates.iter().flat_map(|a| a.args.iter())).chain(result).cloned().collect()
            }
            PhysicalPlan::HashJoin { condition, left_keys, right_keys, .. } | PhysicalPlan::SortMergeJoin { condition, left_keys, right_keys, .. } => {
                left_keys.iter().chain(right_keys).chain(condition).cloned().collect()
            }
            PhysicalPlan::CartesianProduct { condition, .. } | PhysicalPlan::NestedLoopJoin { condition, .. } => condition.iter().cloned().collect(),
            PhysicalPlan::Sort { order, .. } => orders(order),
            PhysicalPlan::TakeOrderedAndProject { order, list, .. } => orders(order).into_iter().chain(list.iter().cloned()).collect(),
            PhysicalPlan::Expand { projections, .. } => projections.iter().flatten().cloned().collect(),
            PhysicalPlan::Generate { generator, .. } => generator.args.clone(),
            PhysicalPlan::Window { window_exprs, partition_by, order_by, .. } => {
                window_exprs.iter().chain(partition_by).cloned().chain(orders(order_by)).collect()
            }
            _ => vec![],
        };
        let mut out: Vec<Arc<ScalarSubqueryExec>> = vec![];
        for e in &exprs {
            e.visit(&mut |x| {
                if let Expr::ScalarSubqueryExec(s) = x {
                    if !out.iter().any(|o| o.id == s.id) {
                        out.push(s.clone());
                    }
                }
            });
        }
        out
    }

    /// The direct children.
    pub fn children(&self) -> Vec<&Arc<PhysicalPlan>> {
        match self {
            PhysicalPlan::FileScan { .. }
            | PhysicalPlan::InMemoryScan { .. }
            | PhysicalPlan::LocalTableScan { .. }
            | PhysicalPlan::Range { .. }
            | PhysicalPlan::FragmentInput { .. }
            | PhysicalPlan::UnionLoop { .. }
            | PhysicalPlan::QueryStage { .. } => vec![],
            PhysicalPlan::HashJoin { left, right, .. }
            | PhysicalPlan::SortMergeJoin { left, right, .. }
            | PhysicalPlan::CartesianProduct { left, right, .. }
            | PhysicalPlan::NestedLoopJoin { left, right, .. } => vec![left, right],
            PhysicalPlan::Union { children } => children.iter().collect(),
            PhysicalPlan::Filter { child, .. }
            | PhysicalPlan::Project { child, .. }
            | PhysicalPlan::HashAggregate { child, .. }
            | PhysicalPlan::Exchange { child, .. }
            | PhysicalPlan::Coalesce { child, .. }
            | PhysicalPlan::BroadcastExchange { child, .. }
            | PhysicalPlan::Sort { child, .. }
            | PhysicalPlan::TakeOrderedAndProject { child, .. }
            | PhysicalPlan::CollectLimit { child, .. }
            | PhysicalPlan::LocalLimit { child, .. }
            | PhysicalPlan::GlobalLimit { child, .. }
            | PhysicalPlan::Expand { child, .. }
            | PhysicalPlan::Generate { child, .. }
            | PhysicalPlan::Window { child, .. }
            | PhysicalPlan::ShuffleRead { child, .. }
            | PhysicalPlan::WholeStageCodegen { child, .. } => vec![child],
        }
    }

    /// This node with new children (same count and order as `children()`).
    pub fn with_new_children(&self, mut children: Vec<Arc<PhysicalPlan>>) -> PhysicalPlan {
        if let PhysicalPlan::Union { .. } = self {
            return PhysicalPlan::Union { children };
        }
        let mut next = || children.remove(0);
        let mut node = self.clone();
        match &mut node {
            PhysicalPlan::FileScan { .. }
            | PhysicalPlan::InMemoryScan { .. }
            | PhysicalPlan::LocalTableScan { .. }
            | PhysicalPlan::Range { .. }
            | PhysicalPlan::FragmentInput { .. }
            | PhysicalPlan::UnionLoop { .. }
            | PhysicalPlan::QueryStage { .. }
            | PhysicalPlan::Union { .. } => {}
            PhysicalPlan::HashJoin { left, right, .. }
            | PhysicalPlan::SortMergeJoin { left, right, .. }
            | PhysicalPlan::CartesianProduct { left, right, .. }
            | PhysicalPlan::NestedLoopJoin { left, right, .. } => {
                *left = next();
                *right = next();
            }
            PhysicalPlan::Filter { child, .. }
            | PhysicalPlan::Project { child, .. }
            | PhysicalPlan::HashAggregate { child, .. }
            | PhysicalPlan::Exchange { child, .. }
            | PhysicalPlan::Coalesce { child, .. }
            | PhysicalPlan::BroadcastExchange { child, .. }
            | PhysicalPlan::Sort { child, .. }
            | PhysicalPlan::TakeOrderedAndProject { child, .. }
            | PhysicalPlan::CollectLimit { child, .. }
            | PhysicalPlan::LocalLimit { child, .. }
            | PhysicalPlan::GlobalLimit { child, .. }
            | PhysicalPlan::Expand { child, .. }
            | PhysicalPlan::Generate { child, .. }
            | PhysicalPlan::Window { child, .. }
            | PhysicalPlan::ShuffleRead { child, .. }
            | PhysicalPlan::WholeStageCodegen { child, .. } => *child = next(),
        }
        node
    }

    /// This node over `children`: itself when they are the children it has, else a copy over
    /// them (rules rewrite bottom-up and keep untouched subtrees shared).
    pub fn with_children_if_changed(self: &Arc<Self>, children: Vec<Arc<PhysicalPlan>>) -> Arc<PhysicalPlan> {
        if children.iter().zip(self.children()).all(|(n, o)| Arc::ptr_eq(n, o)) {
            self.clone()
        } else {
            Arc::new(self.with_new_children(children))
        }
    }

    /// The children a plan printer shows: a query stage shows the plan that ran under it.
    pub fn tree_children(&self) -> Vec<&Arc<PhysicalPlan>> {
        match self {
            PhysicalPlan::QueryStage { plan, .. } => vec![plan],
            other => other.children(),
        }
    }

    /// The columns this operator produces.
    pub fn output(&self) -> Vec<Attribute> {
        match self {
            PhysicalPlan::FileScan { output, .. }
            | PhysicalPlan::InMemoryScan { output, .. }
            | PhysicalPlan::LocalTableScan { output, .. }
            | PhysicalPlan::Range { output, .. }
            | PhysicalPlan::FragmentInput { output, .. }
            | PhysicalPlan::UnionLoop { output, .. }
            | PhysicalPlan::Expand { output, .. } => output.clone(),
            PhysicalPlan::Project { list, .. } | PhysicalPlan::TakeOrderedAndProject { list, .. } => crate::plan::named_outputs(list),
            PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, .. } => match mode {
                AggregateMode::Partial => {
                    let mut out = crate::plan::named_outputs(grouping);
                    out.extend(aggregates.iter().flat_map(|a| a.buffer.iter().cloned()));
                    out
                }
                _ => crate::plan::named_outputs(result),
            },
            PhysicalPlan::CartesianProduct { left, right, .. } => [left.output(), right.output()].concat(),
            PhysicalPlan::Window { window_exprs, child, .. } => [child.output(), crate::plan::named_outputs(window_exprs)].concat(),
            PhysicalPlan::Generate { required_child_output, generator_output, .. } => [required_child_output.clone(), generator_output.clone()].concat(),
            PhysicalPlan::HashJoin { left, right, join_type, .. }
            | PhysicalPlan::SortMergeJoin { left, right, join_type, .. }
            | PhysicalPlan::NestedLoopJoin { left, right, join_type, .. } => join_type.output(left.output(), right.output()),
            // Spark's FilterExec: a column the condition checks with `isnotnull` is not null above it.
            PhysicalPlan::Filter { condition, child } => {
                let not_null: Vec<ExprId> = condition
                    .split_conjunction()
                    .into_iter()
                    .filter_map(|c| match c {
                        Expr::IsNotNull(x) => match x.as_ref() {
                            Expr::Attribute(a) => Some(a.id),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect();
                child
                    .output()
                    .into_iter()
                    .map(|mut a| {
                        a.nullable &= !not_null.contains(&a.id);
                        a
                    })
                    .collect()
            }
            PhysicalPlan::Exchange { child, .. }
            | PhysicalPlan::Coalesce { child, .. }
            | PhysicalPlan::BroadcastExchange { child, .. }
            | PhysicalPlan::Sort { child, .. }
            | PhysicalPlan::CollectLimit { child, .. }
            | PhysicalPlan::LocalLimit { child, .. }
            | PhysicalPlan::GlobalLimit { child, .. }
            | PhysicalPlan::ShuffleRead { child, .. }
            | PhysicalPlan::WholeStageCodegen { child, .. } => child.output(),
            PhysicalPlan::QueryStage { plan, .. } => plan.output(),
            PhysicalPlan::Union { children } => {
                let mut out = children.first().map(|c| c.output()).unwrap_or_default();
                for c in children.iter().skip(1) {
                    for (a, b) in out.iter_mut().zip(c.output()) {
                        a.nullable |= b.nullable;
                    }
                }
                out
            }
        }
    }
}

/// Attribute ids of a list of attributes.
pub fn ids(attrs: &[Attribute]) -> Vec<ExprId> {
    attrs.iter().map(|a| a.id).collect()
}

mod ensure_requirements;
mod join_selection;
mod null_aware;
mod planner;

pub use ensure_requirements::{ensure_requirements, next_plan_id, output_ordering, output_partitioning, required_child_distribution, required_child_ordering};
pub use null_aware::eliminate_null_aware_anti_joins;
pub use planner::{estimate_size, plan_physical, plan_physical_with_warnings};

/// Whether every key is a deterministic expression of `columns` alone: a later join's stream
/// keys that the executor's `rows_matching` can read from an earlier join's build rows.
pub fn keys_read_only(keys: &[Expr], columns: &[Attribute]) -> bool {
    let own: std::collections::BTreeSet<_> = columns.iter().map(|a| a.id).collect();
    keys.iter().all(|e| {
        let refs = e.references();
        e.deterministic() && !refs.is_empty() && refs.is_subset(&own)
    })
}

/// A scalar subquery's plan: a physical plan, held by the expression as `expr::HeldPlan`.
impl crate::expr::HeldPlan for Arc<PhysicalPlan> {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn same_plan(&self, other: &dyn crate::expr::HeldPlan) -> bool {
        other.as_any().downcast_ref::<Arc<PhysicalPlan>>().is_some_and(|o| Arc::ptr_eq(o, self))
    }
    fn outer_references(&self) -> Vec<Attribute> {
        vec![]
    }
    fn output(&self) -> Vec<Attribute> {
        PhysicalPlan::output(self)
    }
    fn resolved(&self) -> bool {
        true
    }
}

impl ScalarSubqueryExec {
    /// Subquery `id` planned as `plan`, its value of type `data_type` not computed yet.
    pub fn new(id: ExprId, plan_id: u64, data_type: arrow::datatypes::DataType, plan: Arc<PhysicalPlan>) -> ScalarSubqueryExec {
        ScalarSubqueryExec { id, plan_id, data_type, plan: Arc::new(plan), value: Default::default(), final_plan: Default::default() }
    }
    /// The subquery's physical plan, prepared as a query of its own.
    pub fn physical_plan(&self) -> &Arc<PhysicalPlan> {
        // Only `new` builds one (the fields are the crate's), always of a physical plan.
        self.plan.as_any().downcast_ref::<Arc<PhysicalPlan>>().expect("a scalar subquery holds a physical plan")
    }
    /// The plan an adaptive run of the subquery executed, once it ran.
    pub fn final_physical_plan(&self) -> Option<&Arc<PhysicalPlan>> {
        self.final_plan.get().and_then(|p| p.as_any().downcast_ref::<Arc<PhysicalPlan>>())
    }
    /// Records the plan an adaptive run executed (the first one recorded stays).
    pub fn set_final_plan(&self, plan: Arc<PhysicalPlan>) {
        let _ = self.final_plan.set(Arc::new(plan));
    }
}
