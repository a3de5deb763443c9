//! Logical plans: the nodes, their output attributes, tree transforms, and Spark's tree string.

mod display;

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use crate::catalog::Table;
use crate::expr::{Attribute, Expr, Generator, SortOrder, SubqueryPlan};

pub use display::tree_string;

/// Join types, named as Spark prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinType {
    /// `[INNER] JOIN`: pairs of rows that satisfy the condition.
    Inner,
    /// `LEFT [OUTER] JOIN`: inner rows, plus each unmatched left row with NULLs on the right.
    LeftOuter,
    /// `RIGHT [OUTER] JOIN`: inner rows, plus each unmatched right row with NULLs on the left.
    RightOuter,
    /// `FULL [OUTER] JOIN`: inner rows, plus the unmatched rows of both sides padded with NULLs.
    FullOuter,
    /// `LEFT SEMI JOIN`: the left rows that have a match; only the left columns.
    LeftSemi,
    /// `LEFT ANTI JOIN`: the left rows that have no match; only the left columns.
    LeftAnti,
    /// `CROSS JOIN`: every pair of rows (the Cartesian product).
    Cross,
}

impl JoinType {
    /// Spark's name: `Inner`, `LeftOuter`, ...
    pub fn name(&self) -> &'static str {
        match self {
            JoinType::Inner => "Inner",
            JoinType::LeftOuter => "LeftOuter",
            JoinType::RightOuter => "RightOuter",
            JoinType::FullOuter => "FullOuter",
            JoinType::LeftSemi => "LeftSemi",
            JoinType::LeftAnti => "LeftAnti",
            JoinType::Cross => "Cross",
        }
    }
    /// Which sides keep all their rows: (left, right).
    pub fn preserved_sides(&self) -> (bool, bool) {
        match self {
            JoinType::LeftOuter => (true, false),
            JoinType::RightOuter => (false, true),
            JoinType::FullOuter => (true, true),
            _ => (false, false),
        }
    }
    /// The columns a join of this type outputs: left then right (semi and anti joins: left
    /// only); a side opposite a preserved one becomes nullable (its unmatched rows are NULLs).
    pub fn output(&self, left: Vec<Attribute>, right: Vec<Attribute>) -> Vec<Attribute> {
        let nullable = |v: Vec<Attribute>, yes: bool| -> Vec<Attribute> {
            v.into_iter()
                .map(|mut a| {
                    a.nullable |= yes;
                    a
                })
                .collect()
        };
        let (l, r) = self.preserved_sides();
        match self {
            JoinType::LeftSemi | JoinType::LeftAnti => left,
            _ => [nullable(left, r), nullable(right, l)].concat(),
        }
    }
}

/// A join strategy a hint asks for (Spark's `JoinStrategyHint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinStrategyHint {
    /// `BROADCAST` / `BROADCASTJOIN` / `MAPJOIN`: broadcast this side.
    Broadcast,
    /// `MERGE` / `SHUFFLE_MERGE` / `MERGEJOIN`: a sort-merge join.
    ShuffleMerge,
    /// `SHUFFLE_HASH`: a shuffled hash join building this side.
    ShuffleHash,
    /// `SHUFFLE_REPLICATE_NL`: a cartesian product (inner joins only).
    ShuffleReplicateNl,
}

impl JoinStrategyHint {
    /// The strategy a hint name asks for (any case), or None for a name that is not a join
    /// strategy hint.
    pub fn from_name(name: &str) -> Option<JoinStrategyHint> {
        match name.to_ascii_uppercase().as_str() {
            "BROADCAST" | "BROADCASTJOIN" | "MAPJOIN" => Some(JoinStrategyHint::Broadcast),
            "SHUFFLE_MERGE" | "MERGE" | "MERGEJOIN" => Some(JoinStrategyHint::ShuffleMerge),
            "SHUFFLE_HASH" => Some(JoinStrategyHint::ShuffleHash),
            "SHUFFLE_REPLICATE_NL" => Some(JoinStrategyHint::ShuffleReplicateNl),
            _ => None,
        }
    }
    /// Spark's display name: `broadcast`, `merge`, `shuffle_hash`, `shuffle_replicate_nl`.
    pub fn display_name(&self) -> &'static str {
        match self {
            JoinStrategyHint::Broadcast => "broadcast",
            JoinStrategyHint::ShuffleMerge => "merge",
            JoinStrategyHint::ShuffleHash => "shuffle_hash",
            JoinStrategyHint::ShuffleReplicateNl => "shuffle_replicate_nl",
        }
    }
}

/// The strategy hints that reached each side of a join (Spark's `JoinHint`), printed
/// `leftHint=(strategy=merge), rightHint=(strategy=broadcast)`; empty when neither side has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct JoinHint {
    /// The hint on the left input.
    pub left: Option<JoinStrategyHint>,
    /// The hint on the right input.
    pub right: Option<JoinStrategyHint>,
}

impl JoinHint {
    /// True when either side asks for `strategy`.
    pub fn either(&self, strategy: JoinStrategyHint) -> bool {
        self.left == Some(strategy) || self.right == Some(strategy)
    }
}

impl std::fmt::Display for JoinHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sides = [("leftHint", self.left), ("rightHint", self.right)];
        let parts: Vec<String> =
            sides.iter().filter_map(|(name, h)| h.map(|h| format!("{name}=(strategy={})", h.display_name()))).collect();
        write!(f, "{}", parts.join(", "))
    }
}

/// The grouping-analytics construct of a GROUP BY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupingSetsKind {
    /// `ROLLUP(a, b)`: the sets (a, b), (a), ().
    Rollup,
    /// `CUBE(a, b)`: every subset, (a, b), (a), (b), ().
    Cube,
    /// `GROUPING SETS((a, b), (a), ())`: the sets as written.
    GroupingSets,
}

/// The grouping sets of a ROLLUP, CUBE or GROUPING SETS, each a list of indices into the
/// grouping expressions, in Spark's order.
pub fn grouping_sets(kind: GroupingSetsKind, elements: &[Vec<usize>]) -> Vec<Vec<usize>> {
    match kind {
        // Prefixes, longest first.
        GroupingSetsKind::Rollup => (0..=elements.len()).rev().map(|k| elements[..k].concat()).collect(),
        // Spark's cubeExprs: subsets with the first element, then those without it, recursively.
        GroupingSetsKind::Cube => match elements.split_first() {
            None => vec![vec![]],
            Some((first, rest)) => {
                let tail = grouping_sets(GroupingSetsKind::Cube, rest);
                tail.iter().map(|t| [first.clone(), t.clone()].concat()).chain(tail.iter().cloned()).collect()
            }
        },
        GroupingSetsKind::GroupingSets => elements.to_vec(),
    }
}

/// `EXCEPT` (also `MINUS`) or `INTERSECT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOperationKind {
    /// Rows of the left input not in the right.
    Except,
    /// Rows in both inputs.
    Intersect,
}

impl SetOperationKind {
    /// Spark's node name.
    pub fn name(&self) -> &'static str {
        match self {
            SetOperationKind::Except => "Except",
            SetOperationKind::Intersect => "Intersect",
        }
    }
}

/// How a `Repartition` spreads its rows.
#[derive(Debug, Clone, PartialEq)]
pub enum RepartitionScheme {
    /// Spark's `Repartition n, shuffle`: round robin over `partitions` (a shuffle), or, without
    /// one, the child's partitions merged into `partitions` (`coalesce`).
    Count {
        /// The number of partitions.
        partitions: usize,
        /// True for `repartition(n)`, false for `coalesce(n)`.
        shuffle: bool,
    },
    /// `RepartitionByExpression [keys], n`: hashed on the keys.
    Hash {
        /// The keys.
        keys: Vec<Expr>,
        /// The number of partitions; None: `spark.sql.shuffle.partitions`.
        partitions: Option<usize>,
    },
    /// `RepartitionByExpression [order], n`: consecutive ranges of the order.
    Range {
        /// The order whose ranges the partitions hold.
        order: Vec<SortOrder>,
        /// The number of partitions; None: `spark.sql.shuffle.partitions`.
        partitions: Option<usize>,
    },
}

/// Sort keys with each key's expression mapped by `f`.
fn map_order<E>(order: &[SortOrder], f: &mut impl FnMut(Expr) -> Result<Expr, E>) -> Result<Vec<SortOrder>, E> {
    order.iter().map(|o| Ok(SortOrder { expr: f(o.expr.clone())?, ascending: o.ascending, nulls_first: o.nulls_first })).collect()
}

/// The `using` list of a NATURAL JOIN before analysis: the columns both sides have.
pub const NATURAL_JOIN: &str = "\u{0}natural";

/// A logical plan node. Children are `Arc`s so an unchanged subtree is shared, not copied.
#[derive(Debug, Clone, PartialEq)]
pub enum LogicalPlan {
    /// A table name not yet looked up, printed `'UnresolvedRelation [db, t], [], false`; with
    /// arguments, a call of a host's table function (`FROM f(1, 'x')`), printed
    /// `'UnresolvedTableValuedFunction [f], [1, x], false`.
    UnresolvedRelation {
        /// The name's parts, as written (`db.t` is `["db", "t"]`).
        name: Vec<String>,
        /// A table function's arguments; None for a table.
        args: Option<Vec<Expr>>,
    },
    /// `t AS x(a, b)`, `(query) x(a, b)`, `WITH x(a, b) AS (...)` before analysis: the child's
    /// columns renamed by position, printed `'UnresolvedSubqueryColumnAliases [a, b]`; the analyzer
    /// makes it a Project of `col AS a, ...` (Spark's ResolveSubqueryColumnAliases).
    UnresolvedSubqueryColumnAliases {
        /// The new names, one per column of the child.
        names: Vec<String>,
        /// The renamed plan.
        child: Arc<LogicalPlan>,
    },
    /// `child AS alias`: gives the child's columns a qualifier.
    SubqueryAlias {
        /// The alias (or a table's qualified name); its last part qualifies the columns.
        alias: String,
        /// The aliased plan.
        child: Arc<LogicalPlan>,
    },
    /// A catalog table (Parquet files or session memory), printed `Relation name[cols] format`.
    Relation {
        /// The catalog table read.
        table: Arc<Table>,
        /// The table's columns, with the ids this scan gives them.
        output: Vec<Attribute>,
    },
    /// Rows known at planning time (`VALUES`, an empty result, a folded query).
    LocalRelation {
        /// The columns of the rows.
        output: Vec<Attribute>,
        /// The rows; no batches (or only empty ones) is an empty relation.
        data: Vec<RecordBatch>,
    },
    /// Spark's table-valued `range(...)`: one bigint column `id`, generated as it is read.
    Range {
        /// The `id` column.
        output: Vec<Attribute>,
        /// The range's arguments.
        range: crate::datasource::range::RangeSpec,
    },
    /// The single empty row of a `SELECT` without `FROM`.
    OneRowRelation,
    /// The select list: computes `list` for each row of `child`, printed `Project [list]`.
    Project {
        /// The output expressions: attributes, or aliased expressions.
        list: Vec<Expr>,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `WHERE` / `HAVING`: keeps the rows of `child` for which `condition` is true (not false or NULL).
    Filter {
        /// The predicate.
        condition: Expr,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `GROUP BY`: one row per group, printed `Aggregate [grouping], [aggregates]`; with no
    /// grouping it is a global aggregate of exactly one row, printed `Aggregate [aggregates]`.
    Aggregate {
        /// The grouping expressions.
        grouping: Vec<Expr>,
        /// The output list: grouping expressions and aggregate functions, aliased as in a Project.
        aggregates: Vec<Expr>,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// A join of two inputs, printed `Join Inner, condition`.
    Join {
        /// The left input.
        left: Arc<LogicalPlan>,
        /// The right input.
        right: Arc<LogicalPlan>,
        /// Which rows the join keeps.
        join_type: JoinType,
        /// The `ON` condition; None for a join without one (a comma join, CROSS JOIN, or USING before analysis).
        condition: Option<Expr>,
        /// Column names of `USING (...)`, replaced by a condition during analysis.
        using: Vec<String>,
        /// Strategy hints folded in from `ResolvedHint`s over the inputs (`EliminateResolvedHint`).
        hint: JoinHint,
    },
    /// `left [INNER | LEFT OUTER] JOIN LATERAL (subquery) [ON condition]` (Spark's `LateralJoin`),
    /// printed `LateralJoin lateral-subquery#id [outer references], Inner`: the subquery runs per
    /// row of `left` and may read its columns (`OuterReference`s). It is not a child: it resolves
    /// with `left`'s columns as its outer scope, and `RewriteLateralSubquery` makes it a Join.
    LateralJoin {
        /// The input whose rows the subquery reads.
        left: Arc<LogicalPlan>,
        /// The lateral subquery.
        right: crate::expr::SubqueryPlan,
        /// The id Spark prints after `lateral-subquery#`.
        id: crate::expr::ExprId,
        /// Inner (also for a comma or CROSS JOIN) or LeftOuter.
        join_type: JoinType,
        /// The `ON` condition, over both sides' columns.
        condition: Option<Expr>,
    },
    /// `child PIVOT (agg FOR col IN (v1, v2 AS b))` before analysis, printed `'Pivot [aggregates]`:
    /// `aggregates` are the output columns, one per value and aggregate, each already reading only
    /// its value's rows (`sum(CASE WHEN (k <=> 'a') THEN v END) AS a`). The analyzer makes it an
    /// Aggregate grouped by the child's columns none of them reads (Spark's ResolvePivot).
    Pivot {
        /// The FOR columns; the analyzer casts the values compared with them to their types.
        columns: Vec<Expr>,
        /// The pivoted aggregates, aliased with Spark's output names.
        aggregates: Vec<Expr>,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `child UNPIVOT [INCLUDE | EXCLUDE NULLS] (v FOR name IN (c1, c2 AS x))` before analysis,
    /// printed `'Unpivot ...`; the analyzer makes it an Expand of the other columns, the name
    /// and the values (under a Filter of the rows with a value unless INCLUDE NULLS).
    Unpivot {
        /// Per IN item, its columns (one per value column).
        columns: Vec<Vec<Expr>>,
        /// Per IN item, the value of the name column (its alias, or its columns' names).
        names: Vec<String>,
        /// The value columns' names.
        value_names: Vec<String>,
        /// The name column's name.
        name_column: String,
        /// INCLUDE NULLS: rows whose values are all NULL stay.
        include_nulls: bool,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// A hint comment (`/*+ BROADCAST(c) */`) or `DataFrame::hint` as written, printed
    /// `'UnresolvedHint BROADCAST, ['c]`; the analyzer resolves it.
    UnresolvedHint {
        /// The hint's name as written (`BROADCAST`, `merge`, ...).
        name: String,
        /// The relation names it applies to; empty: the whole child.
        params: Vec<String>,
        /// The hinted plan.
        child: Arc<LogicalPlan>,
    },
    /// A join strategy hint attached to the plan below it, printed
    /// `ResolvedHint (strategy=broadcast)`; the optimizer moves it into the Join above.
    ResolvedHint {
        /// The strategy asked for.
        strategy: JoinStrategyHint,
        /// The hinted plan.
        child: Arc<LogicalPlan>,
    },
    /// `ORDER BY`, printed `Sort [keys], global`.
    Sort {
        /// The sort keys, most significant first.
        order: Vec<SortOrder>,
        /// True for a total order over all rows (`ORDER BY`); false for a sort within each
        /// partition (Spark's `SORT BY`).
        global: bool,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `LIMIT n` over all rows; the parser puts it over a LocalLimit, as Spark does.
    GlobalLimit {
        /// The maximum number of rows.
        limit: usize,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `OFFSET n`: the rows after the first n (Spark's `Offset`; `LIMIT l OFFSET o` is
    /// `GlobalLimit l` over `Offset o` over `LocalLimit l + o`).
    Offset {
        /// The rows skipped.
        offset: usize,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `DataFrame::repartition` / `repartition_by_range` / `coalesce` and the `REPARTITION`,
    /// `REPARTITION_BY_RANGE` and `COALESCE` hints: the child's rows spread over partitions as
    /// `scheme` says (Spark's `Repartition` and `RepartitionByExpression`).
    Repartition {
        /// How the rows are spread.
        scheme: RepartitionScheme,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `LIMIT n` applied to each partition separately, under a GlobalLimit.
    LocalLimit {
        /// The maximum number of rows per partition.
        limit: usize,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `SELECT DISTINCT` (and the dedup of `UNION`), replaced by an Aggregate in the optimizer.
    Distinct {
        /// The input whose duplicate rows are removed.
        child: Arc<LogicalPlan>,
    },
    /// `GROUP BY ROLLUP / CUBE / GROUPING SETS` before analysis, printed as Spark prints the
    /// unresolved Aggregate (`'Aggregate [rollup(Vector(0), Vector(1), 'a, 'b)], [...]`). The
    /// analyzer replaces it with `Aggregate(Expand(Project(child)))`.
    GroupingSets {
        /// Which construct was written (it decides the sets and how the node prints).
        kind: GroupingSetsKind,
        /// The construct's elements as written, each a list of indices into `exprs`.
        elements: Vec<Vec<usize>>,
        /// The distinct grouping expressions, in order of appearance.
        exprs: Vec<Expr>,
        /// The select list, as in an Aggregate.
        aggregates: Vec<Expr>,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// Each input row once per projection (Spark's `Expand`, under the Aggregate of grouping
    /// sets): a projection nulls the columns its grouping set rolls up and sets the grouping id.
    Expand {
        /// One list of expressions per output copy of a row, matching `output` by position.
        projections: Vec<Vec<Expr>>,
        /// The columns produced.
        output: Vec<Attribute>,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// A generator's rows joined to the row each came from (Spark's `Generate`), printed
    /// `Generate explode(a#1), [0], false, [col#5]`: every input row once per row the generator
    /// makes of it (a row that makes none is dropped, or kept once with NULLs when `outer`),
    /// with the child's columns it keeps, then the generated ones.
    Generate {
        /// The generator call.
        generator: Generator,
        /// Positions in the child's output of the columns only the generator reads, left out
        /// of the output (Spark's `unrequiredChildIndex`, set by column pruning). Positions, as
        /// Spark's, stay right when a rule renames the child's columns (RemoveRedundantAliases).
        unrequired: Vec<usize>,
        /// `LATERAL VIEW OUTER` / `explode_outer`: a row that makes no rows is kept once.
        outer: bool,
        /// The name of a LATERAL VIEW, which qualifies the generated columns.
        qualifier: Option<String>,
        /// The names written for the generated columns (`AS x`, `AS (p, x)`); empty: Spark's.
        names: Vec<String>,
        /// The generated columns; empty until the analyzer resolves the generator.
        generator_output: Vec<Attribute>,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// Window functions over the child's rows, printed `Window [exprs], [partition keys], [order]`
    /// (Spark's `Window`): every input column, then one per window expression. All the
    /// expressions share the partitioning and order; their frames may differ.
    Window {
        /// The window expressions, each aliased (`row_number() windowspecdefinition(..) AS rn#5`).
        window_exprs: Vec<Expr>,
        /// The partition keys.
        partition_by: Vec<Expr>,
        /// The order within a partition.
        order_by: Vec<SortOrder>,
        /// The input.
        child: Arc<LogicalPlan>,
    },
    /// `EXCEPT` / `INTERSECT` \[ALL\] of two inputs with the same column types, printed
    /// `Except false` / `IntersectAll true`; the optimizer replaces it with joins.
    SetOperation {
        /// Except or Intersect.
        kind: SetOperationKind,
        /// `ALL`: duplicates count (bag semantics).
        all: bool,
        /// The left input (its columns are the output's).
        left: Arc<LogicalPlan>,
        /// The right input.
        right: Arc<LogicalPlan>,
    },
    /// `UNION ALL` of two or more inputs with the same column types (the analyzer casts). Its
    /// columns are the first child's, nullable when any child's is. `UNION` is `Distinct(Union)`.
    Union {
        /// The inputs, matched by column position.
        children: Vec<Arc<LogicalPlan>>,
    },
    /// A recursive CTE, `anchor UNION ALL recursion` (Spark's `UnionLoop`), printed
    /// `UnionLoop id`: the anchor's rows, then the recursion's over the rows of the step before
    /// (read through `UnionLoopRef id`), step after step until a step yields no row.
    UnionLoop {
        /// Ties the loop to its references.
        id: crate::expr::ExprId,
        /// The non-recursive part; its columns give the loop's names and types.
        anchor: Arc<LogicalPlan>,
        /// The recursive part, reading the previous step through `UnionLoopRef`s.
        recursion: Arc<LogicalPlan>,
        /// The loop's columns (new ids, as Spark's); empty until analysis.
        output: Vec<Attribute>,
        /// Stop once this many rows are produced (a LIMIT pushed into the loop, as Spark's).
        limit: Option<usize>,
    },
    /// The recursion's read of the previous step's rows (Spark's `UnionLoopRef`), printed
    /// `UnionLoopRef id, [cols], false`.
    UnionLoopRef {
        /// The loop it reads.
        id: crate::expr::ExprId,
        /// The anchor's columns under new ids; empty until analysis.
        output: Vec<Attribute>,
    },
}

impl LogicalPlan {
    /// The cache this node reads, when it is one (Spark's `InMemoryRelation`).
    pub fn cached_relation(&self) -> Option<&crate::catalog::cached::CachedRelation> {
        match self {
            LogicalPlan::Relation { table, .. } => table.cached.as_deref(),
            _ => None,
        }
    }
    /// The ids of [`LogicalPlan::output`]'s columns, without building the columns (rules ask
    /// for them at every node of a plan, and a join's output is its whole subtree's).
    pub fn output_ids(&self) -> Vec<crate::expr::ExprId> {
        match self {
            LogicalPlan::SubqueryAlias { child, .. }
            | LogicalPlan::Filter { child, .. }
            | LogicalPlan::UnresolvedHint { child, .. }
            | LogicalPlan::ResolvedHint { child, .. }
            | LogicalPlan::Sort { child, .. }
            | LogicalPlan::GlobalLimit { child, .. }
            | LogicalPlan::LocalLimit { child, .. }
            | LogicalPlan::Offset { child, .. }
            | LogicalPlan::Repartition { child, .. }
            | LogicalPlan::Distinct { child } => child.output_ids(),
            LogicalPlan::Project { list, .. } | LogicalPlan::Aggregate { aggregates: list, .. } | LogicalPlan::GroupingSets { aggregates: list, .. } => {
                list.iter().filter_map(named_output_id).collect()
            }
            LogicalPlan::Join { left, right, join_type, .. } => match join_type {
                JoinType::LeftSemi | JoinType::LeftAnti => left.output_ids(),
                _ => [left.output_ids(), right.output_ids()].concat(),
            },
            LogicalPlan::SetOperation { left, .. } => left.output_ids(),
            LogicalPlan::Union { children } => children.first().map(|c| c.output_ids()).unwrap_or_default(),
            LogicalPlan::Window { window_exprs, child, .. } => {
                let mut ids = child.output_ids();
                ids.extend(window_exprs.iter().filter_map(named_output_id));
                ids
            }
            other => other.output().iter().map(|a| a.id).collect(),
        }
    }

    /// The columns this node produces.
    pub fn output(&self) -> Vec<Attribute> {
        match self {
            LogicalPlan::UnionLoop { output, .. } | LogicalPlan::UnionLoopRef { output, .. } => output.clone(),
            LogicalPlan::UnresolvedRelation { .. }
            | LogicalPlan::OneRowRelation
            | LogicalPlan::Pivot { .. }
            | LogicalPlan::Unpivot { .. }
            | LogicalPlan::UnresolvedSubqueryColumnAliases { .. } => vec![],
            LogicalPlan::SubqueryAlias { alias, child } => child
                .output()
                .into_iter()
                .map(|mut a| {
                    // `spark_catalog.default.orders` qualifies columns as `orders.x`.
                    a.qualifier = vec![alias.rsplit('.').next().unwrap_or(alias).to_string()];
                    a
                })
                .collect(),
            LogicalPlan::Relation { output, .. } | LogicalPlan::LocalRelation { output, .. } | LogicalPlan::Range { output, .. } => output.clone(),
            LogicalPlan::Project { list, .. } => named_outputs(list),
            LogicalPlan::Aggregate { aggregates, .. } | LogicalPlan::GroupingSets { aggregates, .. } => named_outputs(aggregates),
            LogicalPlan::Expand { output, .. } => output.clone(),
            LogicalPlan::Window { window_exprs, child, .. } => [child.output(), named_outputs(window_exprs)].concat(),
            LogicalPlan::Generate { unrequired, child, .. } => {
                let kept = child.output().into_iter().enumerate().filter(|(i, _)| !unrequired.contains(i)).map(|(_, a)| a);
                kept.chain(self.qualified_generator_output()).collect()
            }
            LogicalPlan::Join { left, right, join_type, .. } => join_type.output(left.output(), right.output()),
            LogicalPlan::LateralJoin { left, right, join_type, .. } => join_type.output(left.output(), right.plan().output()),
            // Spark: an Intersect's column is nullable only when both inputs' are.
            LogicalPlan::SetOperation { kind, left, right, .. } => {
                let mut out = left.output();
                if *kind == SetOperationKind::Intersect {
                    for (a, b) in out.iter_mut().zip(right.output()) {
                        a.nullable &= b.nullable;
                    }
                }
                out
            }
            LogicalPlan::Filter { child, .. }
            | LogicalPlan::UnresolvedHint { child, .. }
            | LogicalPlan::ResolvedHint { child, .. }
            | LogicalPlan::Sort { child, .. }
            | LogicalPlan::GlobalLimit { child, .. }
            | LogicalPlan::LocalLimit { child, .. }
            | LogicalPlan::Offset { child, .. }
            | LogicalPlan::Repartition { child, .. }
            | LogicalPlan::Distinct { child } => child.output(),
            LogicalPlan::Union { children } => {
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

    /// The direct children.
    pub fn children(&self) -> Vec<&Arc<LogicalPlan>> {
        match self {
            LogicalPlan::UnresolvedRelation { .. }
            | LogicalPlan::Relation { .. }
            | LogicalPlan::LocalRelation { .. }
            | LogicalPlan::Range { .. }
            | LogicalPlan::UnionLoopRef { .. }
            | LogicalPlan::OneRowRelation => vec![],
            LogicalPlan::Join { left, right, .. } | LogicalPlan::SetOperation { left, right, .. } => vec![left, right],
            LogicalPlan::UnionLoop { anchor, recursion, .. } => vec![anchor, recursion],
            LogicalPlan::Union { children } => children.iter().collect(),
            LogicalPlan::SubqueryAlias { child, .. }
            | LogicalPlan::LateralJoin { left: child, .. }
            | LogicalPlan::Pivot { child, .. }
            | LogicalPlan::Unpivot { child, .. }
            | LogicalPlan::UnresolvedSubqueryColumnAliases { child, .. }
            | LogicalPlan::UnresolvedHint { child, .. }
            | LogicalPlan::ResolvedHint { child, .. }
            | LogicalPlan::Project { child, .. }
            | LogicalPlan::Filter { child, .. }
            | LogicalPlan::Aggregate { child, .. }
            | LogicalPlan::GroupingSets { child, .. }
            | LogicalPlan::Expand { child, .. }
            | LogicalPlan::Generate { child, .. }
            | LogicalPlan::Window { child, .. }
            | LogicalPlan::Sort { child, .. }
            | LogicalPlan::GlobalLimit { child, .. }
            | LogicalPlan::LocalLimit { child, .. }
            | LogicalPlan::Offset { child, .. }
            | LogicalPlan::Repartition { child, .. }
            | LogicalPlan::Distinct { child } => vec![child],
        }
    }

    /// This node with its children replaced (same count and order as `children()`).
    pub fn with_new_children(&self, mut children: Vec<Arc<LogicalPlan>>) -> LogicalPlan {
        let mut next = || children.remove(0);
        match self {
            LogicalPlan::UnresolvedRelation { .. }
            | LogicalPlan::Relation { .. }
            | LogicalPlan::LocalRelation { .. }
            | LogicalPlan::Range { .. }
            | LogicalPlan::UnionLoopRef { .. }
            | LogicalPlan::OneRowRelation => self.clone(),
            LogicalPlan::UnionLoop { id, output, limit, .. } => {
                let anchor = next();
                LogicalPlan::UnionLoop { id: *id, anchor, recursion: next(), output: output.clone(), limit: *limit }
            }
            LogicalPlan::Join { join_type, condition, using, hint, .. } => {
                let left = next();
                let right = next();
                LogicalPlan::Join { left, right, join_type: *join_type, condition: condition.clone(), using: using.clone(), hint: *hint }
            }
            LogicalPlan::SetOperation { kind, all, .. } => {
                let left = next();
                let right = next();
                LogicalPlan::SetOperation { kind: *kind, all: *all, left, right }
            }
            LogicalPlan::LateralJoin { right, id, join_type, condition, .. } => {
                LogicalPlan::LateralJoin { left: next(), right: right.clone(), id: *id, join_type: *join_type, condition: condition.clone() }
            }
            LogicalPlan::Pivot { columns, aggregates, .. } => LogicalPlan::Pivot { columns: columns.clone(), aggregates: aggregates.clone(), child: next() },
            LogicalPlan::Unpivot { columns, names, value_names, name_column, include_nulls, .. } => LogicalPlan::Unpivot {
                columns: columns.clone(),
                names: names.clone(),
                value_names: value_names.clone(),
                name_column: name_column.clone(),
                include_nulls: *include_nulls,
                child: next(),
            },
            LogicalPlan::UnresolvedSubqueryColumnAliases { names, .. } => {
                LogicalPlan::UnresolvedSubqueryColumnAliases { names: names.clone(), child: next() }
            }
            LogicalPlan::UnresolvedHint { name, params, .. } => {
                LogicalPlan::UnresolvedHint { name: name.clone(), params: params.clone(), child: next() }
            }
            LogicalPlan::ResolvedHint { strategy, .. } => LogicalPlan::ResolvedHint { strategy: *strategy, child: next() },
            LogicalPlan::SubqueryAlias { alias, .. } => LogicalPlan::SubqueryAlias { alias: alias.clone(), child: next() },
            LogicalPlan::Project { list, .. } => LogicalPlan::Project { list: list.clone(), child: next() },
            LogicalPlan::Filter { condition, .. } => LogicalPlan::Filter { condition: condition.clone(), child: next() },
            LogicalPlan::Aggregate { grouping, aggregates, .. } => {
                LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: aggregates.clone(), child: next() }
            }
            LogicalPlan::GroupingSets { kind, elements, exprs, aggregates, .. } => LogicalPlan::GroupingSets {
                kind: *kind,
                elements: elements.clone(),
                exprs: exprs.clone(),
                aggregates: aggregates.clone(),
                child: next(),
            },
            LogicalPlan::Expand { projections, output, .. } => {
                LogicalPlan::Expand { projections: projections.clone(), output: output.clone(), child: next() }
            }
            LogicalPlan::Sort { order, global, .. } => LogicalPlan::Sort { order: order.clone(), global: *global, child: next() },
            LogicalPlan::Generate { generator, unrequired, outer, qualifier, names, generator_output, .. } => LogicalPlan::Generate {
                generator: generator.clone(),
                unrequired: unrequired.clone(),
                outer: *outer,
                qualifier: qualifier.clone(),
                names: names.clone(),
                generator_output: generator_output.clone(),
                child: next(),
            },
            LogicalPlan::Window { window_exprs, partition_by, order_by, .. } => LogicalPlan::Window {
                window_exprs: window_exprs.clone(),
                partition_by: partition_by.clone(),
                order_by: order_by.clone(),
                child: next(),
            },
            LogicalPlan::GlobalLimit { limit, .. } => LogicalPlan::GlobalLimit { limit: *limit, child: next() },
            LogicalPlan::LocalLimit { limit, .. } => LogicalPlan::LocalLimit { limit: *limit, child: next() },
            LogicalPlan::Offset { offset, .. } => LogicalPlan::Offset { offset: *offset, child: next() },
            LogicalPlan::Repartition { scheme, .. } => LogicalPlan::Repartition { scheme: scheme.clone(), child: next() },
            LogicalPlan::Distinct { .. } => LogicalPlan::Distinct { child: next() },
            LogicalPlan::Union { .. } => LogicalPlan::Union { children },
        }
    }

    /// The expressions held by this node itself (not its children).
    pub fn expressions(&self) -> Vec<&Expr> {
        match self {
            LogicalPlan::Project { list, .. } => list.iter().collect(),
            LogicalPlan::Filter { condition, .. } => vec![condition],
            LogicalPlan::Aggregate { grouping, aggregates, .. } => grouping.iter().chain(aggregates.iter()).collect(),
            LogicalPlan::Join { condition, .. } | LogicalPlan::LateralJoin { condition, .. } => condition.iter().collect(),
            LogicalPlan::GroupingSets { exprs, aggregates, .. } => exprs.iter().chain(aggregates.iter()).collect(),
            LogicalPlan::Expand { projections, .. } => projections.iter().flatten().collect(),
            LogicalPlan::Generate { generator, .. } => generator.args.iter().collect(),
            LogicalPlan::Sort { order, .. } => order.iter().map(|o| &o.expr).collect(),
            LogicalPlan::Repartition { scheme: RepartitionScheme::Hash { keys, .. }, .. } => keys.iter().collect(),
            LogicalPlan::Repartition { scheme: RepartitionScheme::Range { order, .. }, .. } => order.iter().map(|o| &o.expr).collect(),
            LogicalPlan::Window { window_exprs, partition_by, order_by, .. } => {
                window_exprs.iter().chain(partition_by.iter()).chain(order_by.iter().map(|o| &o.expr)).collect()
            }
            _ => vec![],
        }
    }

    /// This node with every expression it holds mapped by `f`.
    pub fn map_expressions<E>(&self, mut f: impl FnMut(Expr) -> Result<Expr, E>) -> Result<LogicalPlan, E> {
        Ok(match self {
            LogicalPlan::Project { list, child } => {
                LogicalPlan::Project { list: list.iter().cloned().map(&mut f).collect::<Result<_, E>>()?, child: child.clone() }
            }
            LogicalPlan::Filter { condition, child } => LogicalPlan::Filter { condition: f(condition.clone())?, child: child.clone() },
            LogicalPlan::Aggregate { grouping, aggregates, child } => LogicalPlan::Aggregate {
                grouping: grouping.iter().cloned().map(&mut f).collect::<Result<_, E>>()?,
                aggregates: aggregates.iter().cloned().map(&mut f).collect::<Result<_, E>>()?,
                child: child.clone(),
            },
            LogicalPlan::Join { left, right, join_type, condition, using, hint } => LogicalPlan::Join {
                left: left.clone(),
                right: right.clone(),
                join_type: *join_type,
                condition: condition.clone().map(&mut f).transpose()?,
                using: using.clone(),
                hint: *hint,
            },
            LogicalPlan::LateralJoin { left, right, id, join_type, condition } => LogicalPlan::LateralJoin {
                left: left.clone(),
                right: right.clone(),
                id: *id,
                join_type: *join_type,
                condition: condition.clone().map(&mut f).transpose()?,
            },
            LogicalPlan::Expand { projections, output, child } => LogicalPlan::Expand {
                projections: projections
                    .iter()
                    .map(|p| p.iter().cloned().map(&mut f).collect::<Result<Vec<_>, E>>())
                    .collect::<Result<_, E>>()?,
                output: output.clone(),
                child: child.clone(),
            },
            LogicalPlan::Generate { generator, unrequired, outer, qualifier, names, generator_output, child } => LogicalPlan::Generate {
                generator: Generator { func: generator.func, args: generator.args.iter().cloned().map(&mut f).collect::<Result<_, E>>()? },
                unrequired: unrequired.clone(),
                outer: *outer,
                qualifier: qualifier.clone(),
                names: names.clone(),
                generator_output: generator_output.clone(),
                child: child.clone(),
            },
            LogicalPlan::Sort { order, global, child } => LogicalPlan::Sort {
                order: map_order(order, &mut f)?,
                global: *global,
                child: child.clone(),
            },
            LogicalPlan::Repartition { scheme: RepartitionScheme::Hash { keys, partitions }, child } => LogicalPlan::Repartition {
                scheme: RepartitionScheme::Hash { keys: keys.iter().cloned().map(&mut f).collect::<Result<_, E>>()?, partitions: *partitions },
                child: child.clone(),
            },
            LogicalPlan::Repartition { scheme: RepartitionScheme::Range { order, partitions }, child } => LogicalPlan::Repartition {
                scheme: RepartitionScheme::Range {
                    order: map_order(order, &mut f)?,
                    partitions: *partitions,
                },
                child: child.clone(),
            },
            LogicalPlan::Window { window_exprs, partition_by, order_by, child } => LogicalPlan::Window {
                window_exprs: window_exprs.iter().cloned().map(&mut f).collect::<Result<_, E>>()?,
                partition_by: partition_by.iter().cloned().map(&mut f).collect::<Result<_, E>>()?,
                order_by: map_order(order_by, &mut f)?,
                child: child.clone(),
            },
            other => other.clone(),
        })
    }

    /// Replaces, bottom-up, every scalar subquery expression (its plan and id) by what `f` makes of it.
    pub fn transform_scalar_subqueries<E>(
        self: &Arc<Self>,
        f: &mut impl FnMut(crate::expr::SubqueryPlan, crate::expr::ExprId) -> Result<Expr, E>,
    ) -> Result<Arc<LogicalPlan>, E> {
        let is_subquery = |e: &Expr| e.exists(&|x| matches!(x, Expr::ScalarSubquery { .. }));
        self.transform_up(&mut |p| {
            if !p.expressions().into_iter().any(is_subquery) {
                return Ok(p);
            }
            let node = p.map_expressions(|e| {
                e.transform_up(&mut |x| match x {
                    Expr::ScalarSubquery { plan, id } => f(plan, id),
                    other => Ok(other),
                })
            })?;
            Ok(Arc::new(node))
        })
    }

    /// Rewrites bottom-up, as `transform_up`, also inside the plans of subquery expressions and
    /// lateral subqueries (each rewritten before the node holding it).
    pub fn transform_up_with_subqueries<E>(self: &Arc<Self>, f: &mut dyn FnMut(Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>, E>) -> Result<Arc<LogicalPlan>, E> {
        use crate::expr::SubqueryPlan;
        self.transform_up(&mut |node| {
            let mut node = if node.expressions().iter().any(|e| e.contains_subquery()) {
                Arc::new(node.map_expressions(|e| {
                    e.transform_up(&mut |x| {
                        Ok(match x {
                            Expr::ScalarSubquery { plan, id } => Expr::ScalarSubquery { plan: SubqueryPlan::new(plan.plan().transform_up_with_subqueries(f)?), id },
                            Expr::Exists { plan, id } => Expr::Exists { plan: SubqueryPlan::new(plan.plan().transform_up_with_subqueries(f)?), id },
                            Expr::InSubquery { values, plan, id } => {
                                Expr::InSubquery { values, plan: SubqueryPlan::new(plan.plan().transform_up_with_subqueries(f)?), id }
                            }
                            other => other,
                        })
                    })
                })?)
            } else {
                node
            };
            if let LogicalPlan::LateralJoin { left, right, id, join_type, condition } = node.as_ref() {
                let right = SubqueryPlan::new(right.plan().transform_up_with_subqueries(f)?);
                node = Arc::new(LogicalPlan::LateralJoin { left: left.clone(), right, id: *id, join_type: *join_type, condition: condition.clone() });
            }
            f(node)
        })
    }

    /// True when `pred` holds for a node of this plan or of a subquery plan within it.
    pub fn exists_with_subqueries(self: &Arc<Self>, pred: &dyn Fn(&LogicalPlan) -> bool) -> bool {
        let mut found = false;
        let _ = self.transform_up_with_subqueries::<()>(&mut |n| {
            found |= pred(&n);
            Ok(n)
        });
        found
    }

    /// Rewrites bottom-up: children first, then `f` on the rebuilt node.
    pub fn transform_up<E>(self: &Arc<Self>, f: &mut impl FnMut(Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>, E>) -> Result<Arc<LogicalPlan>, E> {
        let children = self.children();
        let node = if children.is_empty() {
            self.clone()
        } else {
            let new_children = children.into_iter().map(|c| c.transform_up(f)).collect::<Result<Vec<_>, E>>()?;
            if new_children.iter().zip(self.children()).all(|(n, o)| Arc::ptr_eq(n, o)) {
                self.clone()
            } else {
                Arc::new(self.with_new_children(new_children))
            }
        };
        f(node)
    }

    /// Rewrites top-down: `f` on this node, then on the children of the result.
    pub fn transform_down<E>(self: &Arc<Self>, f: &mut impl FnMut(Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>, E>) -> Result<Arc<LogicalPlan>, E> {
        let node = f(self.clone())?;
        let children = node.children();
        if children.is_empty() {
            return Ok(node);
        }
        let new_children = children.into_iter().map(|c| c.transform_down(f)).collect::<Result<Vec<_>, E>>()?;
        if new_children.iter().zip(node.children()).all(|(n, o)| Arc::ptr_eq(n, o)) {
            Ok(node)
        } else {
            Ok(Arc::new(node.with_new_children(new_children)))
        }
    }

    /// True once this node and all below it are resolved.
    pub fn resolved(&self) -> bool {
        !matches!(self, LogicalPlan::UnresolvedRelation { .. } | LogicalPlan::UnresolvedHint { .. } | LogicalPlan::GroupingSets { .. } | LogicalPlan::Pivot { .. } | LogicalPlan::Unpivot { .. } | LogicalPlan::UnresolvedSubqueryColumnAliases { .. })
            && !matches!(self, LogicalPlan::Join { using, .. } if !using.is_empty())
            && !matches!(self, LogicalPlan::UnionLoop { output, .. } | LogicalPlan::UnionLoopRef { output, .. } if output.is_empty())
            && !matches!(self, LogicalPlan::Generate { generator_output, .. } if generator_output.is_empty())
            && !matches!(self, LogicalPlan::LateralJoin { right, .. } if !right.plan().resolved())
            && self.expressions().iter().all(|e| e.resolved())
            && self.children().iter().all(|c| c.resolved())
    }

    /// A Generate's generated columns as its output has them: qualified by the LATERAL VIEW's
    /// name, nullable when it is outer (Spark's `qualifiedGeneratorOutput`); empty for other nodes.
    pub fn qualified_generator_output(&self) -> Vec<Attribute> {
        let LogicalPlan::Generate { outer, qualifier, generator_output, .. } = self else { return vec![] };
        generator_output
            .iter()
            .map(|a| Attribute { nullable: a.nullable || *outer, qualifier: qualifier.iter().cloned().collect(), ..a.clone() })
            .collect()
    }

    /// Spark's tree string of this plan.
    pub fn tree_string(&self) -> String {
        tree_string(self)
    }
}

/// The attributes a select list produces: an Alias becomes a new attribute with the alias's id.
pub fn named_outputs(list: &[Expr]) -> Vec<Attribute> {
    list.iter().filter_map(named_output).collect()
}

/// The id of [`named_output`]'s attribute.
fn named_output_id(e: &Expr) -> Option<crate::expr::ExprId> {
    match e {
        Expr::Attribute(a) => Some(a.id),
        Expr::Alias { child, id, .. } => child.data_type().ok().map(|_| *id),
        _ => None,
    }
}

/// The attribute one select-list item produces, if it is resolved.
pub fn named_output(e: &Expr) -> Option<Attribute> {
    match e {
        Expr::Attribute(a) => Some(a.clone()),
        Expr::Alias { child, name, id } => Some(Attribute {
            name: name.clone(),
            id: *id,
            data_type: child.data_type().ok()?,
            nullable: child.nullable(),
            qualifier: vec![],
        }),
        _ => None,
    }
}

/// A subquery expression's plan: a logical plan, held by the expression as `expr::HeldPlan`.
impl crate::expr::HeldPlan for Arc<LogicalPlan> {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn same_plan(&self, other: &dyn crate::expr::HeldPlan) -> bool {
        other.as_any().downcast_ref::<Arc<LogicalPlan>>().is_some_and(|o| o == self)
    }
    fn outer_references(&self) -> Vec<Attribute> {
        let mut out: Vec<Attribute> = vec![];
        collect_outer_references(self, &mut out);
        // A nested subquery's outer references to this subquery's own columns stay inside.
        let mut defined = std::collections::BTreeSet::new();
        collect_defined(self, &mut defined);
        out.retain(|a| !defined.contains(&a.id));
        out
    }
    fn output(&self) -> Vec<Attribute> {
        LogicalPlan::output(self)
    }
    fn resolved(&self) -> bool {
        LogicalPlan::resolved(self)
    }
}

impl SubqueryPlan {
    /// A subquery expression's plan.
    pub fn new(plan: Arc<LogicalPlan>) -> SubqueryPlan {
        SubqueryPlan::from_held(Arc::new(plan))
    }
    /// The logical plan.
    pub fn plan(&self) -> &Arc<LogicalPlan> {
        // Only `new` builds a SubqueryPlan (`from_held` is the crate's), always of a logical plan.
        self.held().as_any().downcast_ref::<Arc<LogicalPlan>>().expect("a subquery expression holds a logical plan")
    }
}

fn collect_defined(plan: &LogicalPlan, out: &mut std::collections::BTreeSet<crate::expr::ExprId>) {
    out.extend(plan.output_ids());
    if let LogicalPlan::LateralJoin { right, .. } = plan {
        collect_defined(right.plan(), out);
    }
    for e in plan.expressions() {
        e.visit(&mut |x| {
            if let Expr::ScalarSubquery { plan, .. } | Expr::Exists { plan, .. } | Expr::InSubquery { plan, .. } = x {
                collect_defined(plan.plan(), out);
            }
        });
    }
    for c in plan.children() {
        collect_defined(c, out);
    }
}

fn collect_outer_references(plan: &LogicalPlan, out: &mut Vec<Attribute>) {
    // (Its references to the lateral join's left side are defined here: `outer_references` drops them.)
    if let LogicalPlan::LateralJoin { right, .. } = plan {
        collect_outer_references(right.plan(), out);
    }
    for e in plan.expressions() {
        e.visit(&mut |x| match x {
            Expr::OuterReference(a) if !out.iter().any(|o| o.id == a.id) => out.push(a.clone()),
            Expr::ScalarSubquery { plan, .. } | Expr::Exists { plan, .. } | Expr::InSubquery { plan, .. } => {
                collect_outer_references(plan.plan(), out)
            }
            _ => {}
        });
    }
    for c in plan.children() {
        collect_outer_references(c, out);
    }
}
