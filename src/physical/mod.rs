//! Physical plans: the operators the executor runs, their partitioning and ordering, and the
//! requirements `EnsureRequirements` meets by inserting Exchange and Sort.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use crate::catalog::Table;
use crate::expr::{AggFunc, Attribute, Expr, ExprId, SortOrder};
use crate::plan::JoinType;

/// How rows are spread over partitions.
#[derive(Debug, Clone, PartialEq)]
pub enum Partitioning {
    /// Whatever the source gives, with this many partitions.
    Unknown(usize),
    SinglePartition,
    /// `hashpartitioning(keys, n)`: Spark's Murmur3 of the keys, mod n.
    Hash(Vec<Expr>, usize),
    /// `rangepartitioning(order, n)`: sorted ranges.
    Range(Vec<SortOrder>, usize),
}

impl Partitioning {
    /// Number of partitions.
    pub fn num_partitions(&self) -> usize {
        match self {
            Partitioning::Unknown(n) | Partitioning::Hash(_, n) | Partitioning::Range(_, n) => *n,
            Partitioning::SinglePartition => 1,
        }
    }
}

/// What an operator needs of its child's partitioning.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
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
    pub func: AggFunc,
    pub args: Vec<Expr>,
    pub distinct: bool,
    /// The attribute the final result is bound to (`sum(amount#3)#9`).
    pub result: Attribute,
    /// The buffer columns a partial aggregate emits (`sum#10, isEmpty#11`).
    pub buffer: Vec<Attribute>,
}

/// Which side of a hash join is loaded into the hash table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildSide {
    BuildLeft,
    BuildRight,
}

/// A physical operator.
#[derive(Debug, Clone)]
pub enum PhysicalPlan {
    /// Reads Parquet files; only the `output` columns are decoded.
    FileScan { table: Arc<Table>, output: Vec<Attribute>, data_filters: Vec<Expr> },
    /// Reads a session table held in memory.
    InMemoryScan { table: Arc<Table>, output: Vec<Attribute> },
    /// Rows known at planning time.
    LocalTableScan { output: Vec<Attribute>, data: Vec<RecordBatch> },
    Filter { condition: Expr, child: Arc<PhysicalPlan> },
    Project { list: Vec<Expr>, child: Arc<PhysicalPlan> },
    HashAggregate {
        mode: AggregateMode,
        /// Grouping expressions: named (Alias or Attribute) so the output has ids.
        grouping: Vec<Expr>,
        aggregates: Vec<AggregateExpr>,
        /// Final output expressions over grouping attributes and aggregate results (Final/Complete).
        result: Vec<Expr>,
        child: Arc<PhysicalPlan>,
    },
    Exchange { partitioning: Partitioning, plan_id: u64, child: Arc<PhysicalPlan> },
    BroadcastExchange { keys: Vec<Expr>, plan_id: u64, child: Arc<PhysicalPlan> },
    /// An equi-join on hash keys, with an optional extra condition.
    HashJoin {
        kind: HashJoinKind,
        left_keys: Vec<Expr>,
        right_keys: Vec<Expr>,
        join_type: JoinType,
        build_side: BuildSide,
        condition: Option<Expr>,
        left: Arc<PhysicalPlan>,
        right: Arc<PhysicalPlan>,
    },
    /// A join without equi-keys: every pair is tested (Spark's BroadcastNestedLoopJoin).
    NestedLoopJoin {
        join_type: JoinType,
        build_side: BuildSide,
        condition: Option<Expr>,
        left: Arc<PhysicalPlan>,
        right: Arc<PhysicalPlan>,
    },
    Sort { order: Vec<SortOrder>, global: bool, child: Arc<PhysicalPlan> },
    /// `ORDER BY ... LIMIT n` without a global sort.
    TakeOrderedAndProject { limit: usize, order: Vec<SortOrder>, list: Vec<Expr>, child: Arc<PhysicalPlan> },
    /// A top-level `LIMIT n` collected to the driver.
    CollectLimit { limit: usize, child: Arc<PhysicalPlan> },
    LocalLimit { limit: usize, child: Arc<PhysicalPlan> },
    GlobalLimit { limit: usize, child: Arc<PhysicalPlan> },
    /// `UNION ALL`: the partitions of every child, one after the other.
    Union { children: Vec<Arc<PhysicalPlan>> },
    /// A pipeline compiled into one native function (`*(id)` in plans); `fallback` says why
    /// it runs interpreted instead, when it does.
    WholeStageCodegen { id: usize, fallback: Option<String>, child: Arc<PhysicalPlan> },
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
    /// The direct children.
    pub fn children(&self) -> Vec<&Arc<PhysicalPlan>> {
        match self {
            PhysicalPlan::FileScan { .. } | PhysicalPlan::InMemoryScan { .. } | PhysicalPlan::LocalTableScan { .. } => vec![],
            PhysicalPlan::HashJoin { left, right, .. } | PhysicalPlan::NestedLoopJoin { left, right, .. } => vec![left, right],
            PhysicalPlan::Union { children } => children.iter().collect(),
            PhysicalPlan::Filter { child, .. }
            | PhysicalPlan::Project { child, .. }
            | PhysicalPlan::HashAggregate { child, .. }
            | PhysicalPlan::Exchange { child, .. }
            | PhysicalPlan::BroadcastExchange { child, .. }
            | PhysicalPlan::Sort { child, .. }
            | PhysicalPlan::TakeOrderedAndProject { child, .. }
            | PhysicalPlan::CollectLimit { child, .. }
            | PhysicalPlan::LocalLimit { child, .. }
            | PhysicalPlan::GlobalLimit { child, .. }
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
            | PhysicalPlan::Union { .. } => {}
            PhysicalPlan::HashJoin { left, right, .. } | PhysicalPlan::NestedLoopJoin { left, right, .. } => {
                *left = next();
                *right = next();
            }
            PhysicalPlan::Filter { child, .. }
            | PhysicalPlan::Project { child, .. }
            | PhysicalPlan::HashAggregate { child, .. }
            | PhysicalPlan::Exchange { child, .. }
            | PhysicalPlan::BroadcastExchange { child, .. }
            | PhysicalPlan::Sort { child, .. }
            | PhysicalPlan::TakeOrderedAndProject { child, .. }
            | PhysicalPlan::CollectLimit { child, .. }
            | PhysicalPlan::LocalLimit { child, .. }
            | PhysicalPlan::GlobalLimit { child, .. }
            | PhysicalPlan::WholeStageCodegen { child, .. } => *child = next(),
        }
        node
    }

    /// The columns this operator produces.
    pub fn output(&self) -> Vec<Attribute> {
        match self {
            PhysicalPlan::FileScan { output, .. }
            | PhysicalPlan::InMemoryScan { output, .. }
            | PhysicalPlan::LocalTableScan { output, .. } => output.clone(),
            PhysicalPlan::Project { list, .. } | PhysicalPlan::TakeOrderedAndProject { list, .. } => crate::plan::named_outputs(list),
            PhysicalPlan::HashAggregate { mode, grouping, aggregates, result, .. } => match mode {
                AggregateMode::Partial => {
                    let mut out = crate::plan::named_outputs(grouping);
                    out.extend(aggregates.iter().flat_map(|a| a.buffer.iter().cloned()));
                    out
                }
                _ => crate::plan::named_outputs(result),
            },
            PhysicalPlan::HashJoin { left, right, join_type, .. } | PhysicalPlan::NestedLoopJoin { left, right, join_type, .. } => {
                let nullable = |v: Vec<Attribute>, yes: bool| -> Vec<Attribute> {
                    v.into_iter().map(|mut a| {
                        a.nullable |= yes;
                        a
                    }).collect()
                };
                let (l, r) = (left.output(), right.output());
                match join_type {
                    JoinType::LeftSemi | JoinType::LeftAnti => l,
                    JoinType::LeftOuter => [l, nullable(r, true)].concat(),
                    JoinType::RightOuter => [nullable(l, true), r].concat(),
                    JoinType::FullOuter => [nullable(l, true), nullable(r, true)].concat(),
                    _ => [l, r].concat(),
                }
            }
            PhysicalPlan::Filter { child, .. }
            | PhysicalPlan::Exchange { child, .. }
            | PhysicalPlan::BroadcastExchange { child, .. }
            | PhysicalPlan::Sort { child, .. }
            | PhysicalPlan::CollectLimit { child, .. }
            | PhysicalPlan::LocalLimit { child, .. }
            | PhysicalPlan::GlobalLimit { child, .. }
            | PhysicalPlan::WholeStageCodegen { child, .. } => child.output(),
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
mod planner;

pub use ensure_requirements::{ensure_requirements, output_partitioning, required_child_distribution};
pub use planner::{estimate_size, plan_physical};
