//! DataFrame transformations and actions of the host API. Each transformation builds the
//! unresolved plan node SQL's parser builds for the same query, over this DataFrame's parsed
//! plan, and plans it at once: a name or type error is returned by the call that made it.

use std::sync::Arc;

use arrow::array::{Array, Int64Array};
use arrow::record_batch::RecordBatch;

use super::DataFrame;
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, BinaryOp, Expr};
use crate::catalog::cached::StorageLevel;
use crate::functions::{col, Column};
use crate::plan::{GroupingSetsKind, JoinType, LogicalPlan, RepartitionScheme};
use crate::types::ScalarValue;

fn exprs(cols: impl IntoIterator<Item = Column>) -> Result<Vec<Expr>> {
    cols.into_iter().map(Column::into_expr).collect()
}

/// A reference to an output column by name, qualified when it has a qualifier, so that
/// columns of one name from two sides of a join stay apart.
fn reference(a: &Attribute) -> Expr {
    Expr::UnresolvedAttribute([a.qualifier.clone(), vec![a.name.clone()]].concat())
}

/// A grouped DataFrame: `df.group_by(..)`, `df.rollup(..)` or `df.cube(..)`, aggregated by
/// [`GroupedData::agg`].
pub struct GroupedData {
    df: DataFrame,
    grouping: Vec<Column>,
    kind: Option<GroupingSetsKind>,
    /// `pivot(column, values)`: one output column per value (and aggregate).
    pivot: Option<(Column, Vec<ScalarValue>)>,
}

impl GroupedData {
    /// One row per group: the grouping columns, then `aggregates` (Spark's `groupBy(..).agg(..)`).
    pub fn agg(self, aggregates: impl IntoIterator<Item = Column>) -> Result<DataFrame> {
        let this = self.pivot_values()?;
        let grouping = exprs(this.grouping)?;
        let mut aggregates = exprs(aggregates)?;
        let child = this.df.plans.parsed.clone();
        if let Some((column, values)) = this.pivot {
            // Spark's ResolvePivot takes PivotFirst when every aggregate is of an atomic type:
            // a group without a value's rows is NULL there (even for count), 0 otherwise.
            let probe = this.df.session.plan(LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: [grouping.clone(), aggregates.clone()].concat(), child: child.clone() })?;
            let schema = probe.schema();
            let outputs = &schema.fields()[grouping.len()..];
            let atomic = outputs.iter().all(|f| !f.data_type().is_nested());
            let names: Vec<&str> = outputs.iter().map(|f| f.name().as_str()).collect();
            aggregates = pivoted(column.into_expr()?, &values, aggregates, &names, atomic)?;
        }
        let aggregates = [grouping.clone(), aggregates].concat();
        let plan = match this.kind {
            None => LogicalPlan::Aggregate { grouping, aggregates, child },
            Some(kind) => {
                let elements = (0..grouping.len()).map(|i| vec![i]).collect();
                LogicalPlan::GroupingSets { kind, elements, exprs: grouping, aggregates, child }
            }
        };
        this.df.session.plan(plan)
    }
    /// The number of rows of each group, as a column `count`.
    pub fn count(self) -> Result<DataFrame> {
        self.agg([crate::functions::count(col("*")).alias("count")])
    }
    /// Pivots on `column` (pyspark's `groupBy(..).pivot(column, values)`): [`GroupedData::agg`]
    /// then gives, per group, one column per value of `values` (and per aggregate, named
    /// `value_aggregate`, when there are several), each aggregating only the rows of that value.
    /// With no values, the column's distinct values, sorted, as Spark computes them.
    ///
    /// ```
    /// use kiln::functions::*;
    /// let s = kiln::Session::new();
    /// let t = s.sql("SELECT * FROM VALUES (2024, 'q1', 10), (2024, 'q2', 20), (2025, 'q1', 5) AS t(y, q, v)").unwrap();
    /// let p = t.group_by([col("y")]).pivot("q", ["q1".into(), "q2".into()]).agg([sum(col("v"))]).unwrap();
    /// assert_eq!(p.columns(), vec!["y", "q1", "q2"]);
    /// ```
    pub fn pivot(mut self, column: &str, values: impl IntoIterator<Item = ScalarValue>) -> GroupedData {
        self.pivot = Some((col(column), values.into_iter().collect()));
        self
    }
    /// The distinct values of a pivot column, sorted (NULL first), when none were given.
    fn pivot_values(mut self) -> Result<GroupedData> {
        let Some((column, values)) = self.pivot.take() else { return Ok(self) };
        let values = if values.is_empty() {
            let distinct = self.df.select([column.clone()])?.distinct()?.order_by([column.clone()])?;
            let mut found = vec![];
            for batch in distinct.collect()? {
                for row in 0..batch.num_rows() {
                    found.push(ScalarValue::try_from_array(batch.column(0), row)?);
                }
            }
            found
        } else {
            values
        };
        self.pivot = Some((column, values));
        Ok(self)
    }
}

/// Spark's pivot of a DataFrame: per value, per aggregate, the aggregate over the rows where
/// `column <=> value`, named by the value (with `_` and the aggregate's `names` when there are several); NULL for
/// a group without such rows when `null_when_absent` (Spark's PivotFirst).
fn pivoted(column: Expr, values: &[ScalarValue], aggregates: Vec<Expr>, names: &[&str], null_when_absent: bool) -> Result<Vec<Expr>> {
    let mut out = vec![];
    for value in values {
        let condition = column.clone().binary(BinaryOp::EqNullSafe, Expr::Literal(value.clone()));
        for (agg, agg_name) in aggregates.iter().zip(names) {
            let call = match agg {
                Expr::Alias { child, .. } => (**child).clone(),
                other => other.clone(),
            };
            let restricted = crate::sql::restrict_aggregate(call.clone(), condition.clone(), false).map_err(|_| {
                KilnError::analysis("_LEGACY_ERROR_TEMP_1006", format!("Aggregate expression required for pivot, but '{}' did not appear in any aggregate function.", crate::expr::sql_name(&call)))
            })?;
            let value_name = value.to_string();
            let name = match aggregates.len() {
                1 => value_name,
                _ => format!("{value_name}_{agg_name}"),
            };
            let value = match null_when_absent {
                true => {
                    let present = Expr::UnresolvedFunction { name: "bool_or".into(), args: vec![condition.clone()], distinct: false };
                    Expr::CaseWhen { branches: vec![(present, restricted)], else_expr: None, if_form: false }
                }
                false => restricted,
            };
            out.push(value.alias(&name));
        }
    }
    Ok(out)
}

impl DataFrame {
    fn derive(&self, plan: LogicalPlan) -> Result<DataFrame> {
        self.session.plan(plan)
    }
    fn parsed(&self) -> Arc<LogicalPlan> {
        self.plans.parsed.clone()
    }

    /// The columns `cols` computed for each row (SQL's select list; `col("*")` is every column).
    ///
    /// ```
    /// use kiln::functions::*;
    /// let s = kiln::Session::new();
    /// let df = s.sql("SELECT 2 AS a").unwrap().select([col("a"), (col("a") + 1).alias("b")]).unwrap();
    /// assert_eq!(df.columns(), vec!["a", "b"]);
    /// ```
    pub fn select(&self, cols: impl IntoIterator<Item = Column>) -> Result<DataFrame> {
        self.derive(LogicalPlan::Project { list: exprs(cols)?, child: self.parsed() })
    }
    /// [`DataFrame::select`] with each column written as SQL: `select_expr(["a + 1 AS b"])`.
    pub fn select_expr<'a>(&self, sql: impl IntoIterator<Item = &'a str>) -> Result<DataFrame> {
        self.select(sql.into_iter().map(crate::functions::expr))
    }
    /// About `fraction` of the rows, each kept with that probability (pyspark's
    /// `sample(fraction, seed)` without replacement); the same seed keeps the same rows of the
    /// same input.
    ///
    /// ```
    /// let s = kiln::Session::new();
    /// let df = s.sql("SELECT id FROM range(1000)").unwrap();
    /// let n = df.sample(0.1, 42).unwrap().count().unwrap();
    /// assert!(n > 50 && n < 150, "{n}");
    /// ```
    pub fn sample(&self, fraction: f64, seed: i64) -> Result<DataFrame> {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(KilnError::exec(format!("requirement failed: Sampling fraction ({fraction}) must be on interval [0, 1] without replacement")));
        }
        self.filter(crate::functions::rand(seed).lt(fraction))
    }
    /// Appends the rows to the table `table` (pyspark's `df.write.insertInto(table)`): by
    /// position, each cast to the table column's type as `INSERT INTO table SELECT ...` does;
    /// `overwrite` replaces the table's rows instead.
    ///
    /// ```
    /// let s = kiln::Session::new();
    /// s.sql("CREATE TABLE t (id BIGINT, tag STRING)").unwrap();
    /// s.sql("SELECT 1 AS a, 'x' AS b").unwrap().insert_into("t", false).unwrap();
    /// assert_eq!(s.table("t").unwrap().count().unwrap(), 1);
    /// ```
    pub fn insert_into(&self, table: &str, overwrite: bool) -> Result<()> {
        self.session.insert_into(table, (*self.parsed()).clone(), overwrite)
    }
    /// The rows for which `condition` is true (SQL's WHERE).
    pub fn filter(&self, condition: Column) -> Result<DataFrame> {
        self.derive(LogicalPlan::Filter { condition: condition.into_expr()?, child: self.parsed() })
    }
    /// The same as [`DataFrame::filter`].
    pub fn where_(&self, condition: Column) -> Result<DataFrame> {
        self.filter(condition)
    }
    /// This DataFrame with a column `name` set to `value`: replaced in place when it exists,
    /// else added last.
    pub fn with_column(&self, name: &str, value: Column) -> Result<DataFrame> {
        let value = value.into_expr()?.alias(name);
        let output = self.plans.analyzed.output();
        let list = if output.iter().any(|a| a.name.eq_ignore_ascii_case(name)) {
            let mut value = Some(value);
            output.iter().filter_map(|a| if a.name.eq_ignore_ascii_case(name) { value.take() } else { Some(reference(a)) }).collect()
        } else {
            vec![Expr::UnresolvedStar(None), value]
        };
        self.derive(LogicalPlan::Project { list, child: self.parsed() })
    }
    /// This DataFrame with each column of `columns` set as [`DataFrame::with_column`] sets
    /// one, in order (Spark's `withColumns`).
    ///
    /// ```
    /// use kiln::functions::*;
    /// let s = kiln::Session::new();
    /// let df = s.sql("SELECT 1 AS a").unwrap().with_columns([("b", col("a") + 1), ("a", lit(0))]).unwrap();
    /// assert_eq!(df.columns(), vec!["a", "b"]);
    /// ```
    pub fn with_columns<'a>(&self, columns: impl IntoIterator<Item = (&'a str, Column)>) -> Result<DataFrame> {
        columns.into_iter().try_fold(self.clone(), |df, (name, value)| df.with_column(name, value))
    }
    /// This DataFrame with column `existing` renamed to `new`; a name that is not a column
    /// leaves it unchanged, as in Spark.
    pub fn with_column_renamed(&self, existing: &str, new: &str) -> Result<DataFrame> {
        let output = self.plans.analyzed.output();
        if !output.iter().any(|a| a.name.eq_ignore_ascii_case(existing)) {
            return Ok(self.clone());
        }
        let list = output
            .iter()
            .map(|a| if a.name.eq_ignore_ascii_case(existing) { reference(a).alias(new) } else { reference(a) })
            .collect();
        self.derive(LogicalPlan::Project { list, child: self.parsed() })
    }
    /// This DataFrame without the named columns (names that are not columns are ignored).
    pub fn drop(&self, names: &[&str]) -> Result<DataFrame> {
        let list = self
            .plans
            .analyzed
            .output()
            .iter()
            .filter(|a| !names.iter().any(|n| n.eq_ignore_ascii_case(&a.name)))
            .map(reference)
            .collect();
        self.derive(LogicalPlan::Project { list, child: self.parsed() })
    }
    /// Groups by `cols` for [`GroupedData::agg`] (SQL's GROUP BY).
    ///
    /// ```
    /// use kiln::functions::*;
    /// let s = kiln::Session::new();
    /// let df = s.sql("SELECT 'a' AS k, 1 AS v UNION ALL SELECT 'a', 2").unwrap();
    /// let out = df.group_by([col("k")]).agg([sum(col("v")).alias("total")]).unwrap();
    /// assert_eq!(out.columns(), vec!["k", "total"]);
    /// ```
    pub fn group_by(&self, cols: impl IntoIterator<Item = Column>) -> GroupedData {
        GroupedData { df: self.clone(), grouping: cols.into_iter().collect(), kind: None, pivot: None }
    }
    /// Groups by `ROLLUP(cols)`: every prefix of the columns, then the grand total.
    pub fn rollup(&self, cols: impl IntoIterator<Item = Column>) -> GroupedData {
        GroupedData { df: self.clone(), grouping: cols.into_iter().collect(), kind: Some(GroupingSetsKind::Rollup), pivot: None }
    }
    /// Groups by `CUBE(cols)`: every subset of the columns.
    pub fn cube(&self, cols: impl IntoIterator<Item = Column>) -> GroupedData {
        GroupedData { df: self.clone(), grouping: cols.into_iter().collect(), kind: Some(GroupingSetsKind::Cube), pivot: None }
    }
    /// Aggregates all rows into one (an aggregate without GROUP BY).
    pub fn agg(&self, aggregates: impl IntoIterator<Item = Column>) -> Result<DataFrame> {
        self.group_by([]).agg(aggregates)
    }
    /// The rows sorted by `cols` (ascending unless made with `desc(..)` / `.desc()`), as ORDER BY.
    pub fn order_by(&self, cols: impl IntoIterator<Item = Column>) -> Result<DataFrame> {
        let order = cols.into_iter().map(Column::into_sort_order).collect::<Result<Vec<_>>>()?;
        self.derive(LogicalPlan::Sort { order, global: true, child: self.parsed() })
    }
    /// The same as [`DataFrame::order_by`].
    pub fn sort(&self, cols: impl IntoIterator<Item = Column>) -> Result<DataFrame> {
        self.order_by(cols)
    }
    /// The first `n` rows (LIMIT n).
    pub fn limit(&self, n: usize) -> Result<DataFrame> {
        let local = LogicalPlan::LocalLimit { limit: n, child: self.parsed() };
        self.derive(LogicalPlan::GlobalLimit { limit: n, child: Arc::new(local) })
    }
    /// Every row but the first `n` (SQL's OFFSET n, Spark's `df.offset(n)`); with no order
    /// below it, which rows come first is the plan's.
    ///
    /// ```
    /// let s = kiln::Session::new();
    /// let df = s.sql("SELECT * FROM VALUES (1), (2), (3) AS t(id) ORDER BY id").unwrap();
    /// assert_eq!(df.offset(2).unwrap().count().unwrap(), 1);
    /// ```
    pub fn offset(&self, n: usize) -> Result<DataFrame> {
        self.derive(LogicalPlan::Offset { offset: n, child: self.parsed() })
    }
    /// The rows dealt round robin into `n` partitions (pyspark's `repartition(n)`; the
    /// `REPARTITION(n)` hint), printed `Exchange RoundRobinPartitioning(n), REPARTITION_BY_NUM`.
    /// `n` must be positive.
    ///
    /// ```
    /// let s = kiln::Session::new();
    /// let parts = s.range(0, 10, 1).unwrap().repartition(3).unwrap().collect_partitioned().unwrap();
    /// assert_eq!(parts.len(), 3);
    /// ```
    pub fn repartition(&self, n: usize) -> Result<DataFrame> {
        let partitions = crate::analyzer::partition_count(n as i64)?;
        self.derive(LogicalPlan::Repartition { scheme: RepartitionScheme::Count { partitions, shuffle: true }, child: self.parsed() })
    }
    /// The rows hashed on `cols` into `n` partitions, or `spark.sql.shuffle.partitions` when
    /// `n` is None, which AQE may then coalesce (pyspark's `repartition(n, *cols)` /
    /// `repartition(*cols)`; the `REPARTITION(n, c)` hint): rows with equal keys share a partition.
    ///
    /// ```
    /// use kiln::functions::col;
    /// let s = kiln::Session::new();
    /// let df = s.range(0, 10, 1).unwrap().repartition_by(Some(3), [col("id")]).unwrap();
    /// let plan = df.explain_string(kiln::ExplainMode::Simple).unwrap();
    /// assert!(plan.contains("Exchange hashpartitioning(id#"), "{plan}");
    /// ```
    pub fn repartition_by(&self, n: Option<usize>, cols: impl IntoIterator<Item = Column>) -> Result<DataFrame> {
        let partitions = n.map(|n| crate::analyzer::partition_count(n as i64)).transpose()?;
        let keys = cols.into_iter().map(Column::into_expr).collect::<Result<_>>()?;
        self.derive(LogicalPlan::Repartition { scheme: RepartitionScheme::Hash { keys, partitions }, child: self.parsed() })
    }
    /// The rows in `n` partitions (or `spark.sql.shuffle.partitions`) of consecutive ranges of
    /// `cols` (ascending unless made with `.desc()`), as pyspark's `repartitionByRange`.
    pub fn repartition_by_range(&self, n: Option<usize>, cols: impl IntoIterator<Item = Column>) -> Result<DataFrame> {
        let partitions = n.map(|n| crate::analyzer::partition_count(n as i64)).transpose()?;
        let order = cols.into_iter().map(Column::into_sort_order).collect::<Result<Vec<_>>>()?;
        if order.is_empty() {
            return Err(KilnError::Config("requirement failed: At least one partition-by expression must be specified.".into()));
        }
        self.derive(LogicalPlan::Repartition { scheme: RepartitionScheme::Range { order, partitions }, child: self.parsed() })
    }
    /// The partitions merged, in order and without a shuffle, into at most `n` (pyspark's
    /// `coalesce(n)`; the `COALESCE(n)` hint), printed `Coalesce n`.
    pub fn coalesce(&self, n: usize) -> Result<DataFrame> {
        let partitions = crate::analyzer::partition_count(n as i64)?;
        self.derive(LogicalPlan::Repartition { scheme: RepartitionScheme::Count { partitions, shuffle: false }, child: self.parsed() })
    }
    /// The distinct rows (SELECT DISTINCT).
    pub fn distinct(&self) -> Result<DataFrame> {
        self.derive(LogicalPlan::Distinct { child: self.parsed() })
    }
    /// One row per distinct value of the columns `cols`, all columns kept (Spark's
    /// `dropDuplicates(subset)`): as Spark's `ReplaceDeduplicateWithAggregate`, grouped by
    /// `cols`, every other column `first(c)`, so each comes from the first row of its key
    /// (in one partition, the first in input order). With no columns, [`DataFrame::distinct`].
    ///
    /// ```
    /// let s = kiln::Session::new();
    /// let df = s.sql("SELECT * FROM VALUES (1, 'a'), (1, 'b'), (2, 'c') AS t(k, v)").unwrap();
    /// let one_per_key = df.drop_duplicates(&["k"]).unwrap();
    /// assert_eq!((one_per_key.count().unwrap(), one_per_key.columns()), (2, vec!["k".to_string(), "v".to_string()]));
    /// ```
    pub fn drop_duplicates(&self, cols: &[&str]) -> Result<DataFrame> {
        let output = self.plans.analyzed.output();
        if cols.is_empty() {
            return self.distinct();
        }
        if let Some(c) = cols.iter().find(|c| !output.iter().any(|a| a.name.eq_ignore_ascii_case(c))) {
            let names: Vec<&str> = output.iter().map(|a| a.name.as_str()).collect();
            return Err(KilnError::analysis_with(
                "UNRESOLVED_COLUMN_AMONG_FIELD_NAMES",
                format!("Cannot resolve column name \"{c}\" among ({}).", names.join(", ")),
                &[("colName", c), ("fieldNames", &names.join(", "))],
            ));
        }
        let is_key = |a: &Attribute| cols.iter().any(|c| c.eq_ignore_ascii_case(&a.name));
        let grouping: Vec<Expr> = output.iter().filter(|a| is_key(a)).map(reference).collect();
        let aggregates = output
            .iter()
            .map(|a| match is_key(a) {
                true => reference(a),
                false => Expr::UnresolvedFunction { name: "first".into(), args: vec![reference(a)], distinct: false }.alias(a.name.clone()),
            })
            .collect();
        self.derive(LogicalPlan::Aggregate { grouping, aggregates, child: self.parsed() })
    }
    /// The rows of both, by column position, duplicates kept (Spark's `union`, SQL's UNION ALL).
    pub fn union(&self, other: &DataFrame) -> Result<DataFrame> {
        self.derive(LogicalPlan::Union { children: vec![self.parsed(), other.parsed()] })
    }
    /// The same as [`DataFrame::union`].
    pub fn union_all(&self, other: &DataFrame) -> Result<DataFrame> {
        self.union(other)
    }
    /// The rows of both, matching `other`'s columns to this one's by name.
    pub fn union_by_name(&self, other: &DataFrame) -> Result<DataFrame> {
        let theirs = other.plans.analyzed.output();
        let list = self
            .plans
            .analyzed
            .output()
            .iter()
            .map(|a| match theirs.iter().find(|b| b.name.eq_ignore_ascii_case(&a.name)) {
                Some(b) => Ok(reference(b)),
                None => Err(KilnError::analysis(
                    "UNRESOLVED_COLUMN.WITH_SUGGESTION",
                    format!("union_by_name: the column `{}` is not among the other DataFrame's columns {:?}.", a.name, theirs.iter().map(|b| &b.name).collect::<Vec<_>>()),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let right = Arc::new(LogicalPlan::Project { list, child: other.parsed() });
        self.derive(LogicalPlan::Union { children: vec![self.parsed(), right] })
    }
    /// The distinct rows also in `other` (INTERSECT), planned as Spark's
    /// `ReplaceIntersectWithSemiJoin` does: a left semi join on `<=>` of every column.
    pub fn intersect(&self, other: &DataFrame) -> Result<DataFrame> {
        self.set_join(other, JoinType::LeftSemi, "intersect")
    }
    /// The distinct rows not in `other` (EXCEPT), as Spark's `ReplaceExceptWithAntiJoin`.
    pub fn except(&self, other: &DataFrame) -> Result<DataFrame> {
        self.set_join(other, JoinType::LeftAnti, "except")
    }
    fn set_join(&self, other: &DataFrame, join_type: JoinType, what: &str) -> Result<DataFrame> {
        let left = self.plans.analyzed.clone();
        // Fresh ids for the right side, so a DataFrame meets itself without ambiguity.
        let right_out = other.plans.analyzed.output();
        let list: Vec<Expr> = right_out.iter().map(|a| a.expr().alias(a.name.clone())).collect();
        let right = Arc::new(LogicalPlan::Project { list, child: other.plans.analyzed.clone() });
        let (lo, ro) = (left.output(), right.output());
        if lo.len() != ro.len() {
            return Err(KilnError::analysis(
                "NUM_COLUMNS_MISMATCH",
                format!("{what} can only be performed on inputs with the same number of columns, but the first input has {} columns and the second input has {} columns.", lo.len(), ro.len()),
            ));
        }
        let condition = Expr::conjunction(lo.iter().zip(&ro).map(|(l, r)| l.expr().binary(BinaryOp::EqNullSafe, r.expr())));
        let join = LogicalPlan::Join { left, right, join_type, condition, using: vec![], hint: Default::default() };
        self.derive(LogicalPlan::Distinct { child: Arc::new(join) })
    }
    /// Joins with `right` where `condition` holds (SQL's `JOIN .. ON`); columns are named as
    /// in SQL, qualified by [`DataFrame::alias`] where both sides have one.
    pub fn join_on(&self, right: &DataFrame, condition: Column, join_type: JoinType) -> Result<DataFrame> {
        self.derive(LogicalPlan::Join {
            left: self.parsed(),
            right: right.parsed(),
            join_type,
            condition: Some(condition.into_expr()?),
            using: vec![],
            hint: Default::default(),
        })
    }
    /// Every pair of rows (CROSS JOIN).
    pub fn cross_join(&self, right: &DataFrame) -> Result<DataFrame> {
        self.derive(LogicalPlan::Join { left: self.parsed(), right: right.parsed(), join_type: JoinType::Cross, condition: None, using: vec![], hint: Default::default() })
    }
    /// Joins without a condition, as SQL's comma join (`FROM a, b`): a filter above decides
    /// which pairs stay, and the optimizer turns its equalities into join keys.
    pub fn join_all(&self, right: &DataFrame) -> Result<DataFrame> {
        self.derive(LogicalPlan::Join { left: self.parsed(), right: right.parsed(), join_type: JoinType::Inner, condition: None, using: vec![], hint: Default::default() })
    }
    /// This DataFrame under a name its columns can be qualified by (`FROM t AS o`).
    pub fn alias(&self, name: &str) -> Result<DataFrame> {
        self.derive(LogicalPlan::SubqueryAlias { alias: name.to_string(), child: self.parsed() })
    }

    /// The number of rows.
    pub fn count(&self) -> Result<i64> {
        let counted = self.agg([crate::functions::count(col("*"))])?.collect()?;
        let value = counted
            .iter()
            .find(|b| b.num_rows() > 0)
            .and_then(|b| b.column(0).as_any().downcast_ref::<Int64Array>().map(|a| a.value(0)));
        value.ok_or_else(|| KilnError::internal("count(1) returned no bigint row"))
    }
    /// Runs the query and prints up to `n` rows as Spark's `show(n)` does.
    pub fn show_rows(&self, n: usize) -> Result<()> {
        let batches = self.limit(n + 1)?.collect()?;
        super::write_stdout(&crate::format::show_string(&self.schema(), &batches, n, 20, self.config.time_zone()))
    }
    /// The first `n` rows, in at most one batch per partition that had some.
    pub fn take(&self, n: usize) -> Result<Vec<RecordBatch>> {
        self.limit(n)?.collect()
    }
    /// The first row as a one-row batch, or None for an empty result.
    pub fn first(&self) -> Result<Option<RecordBatch>> {
        Ok(self.take(1)?.into_iter().find(|b| b.num_rows() > 0).map(|b| b.slice(0, 1)))
    }
    /// The names of the result's columns.
    pub fn columns(&self) -> Vec<String> {
        self.plans.analyzed.output().into_iter().map(|a| a.name).collect()
    }
    /// Registers the result as a temporary view of the session, replacing one of that name.
    /// As SQL's CREATE TEMP VIEW in kiln, the rows are computed now.
    pub fn create_or_replace_temp_view(&self, name: &str) -> Result<()> {
        let batches = self.collect()?;
        self.session.register_memory(name, self.schema(), batches)
    }

    /// Spark's `cache()`: [`DataFrame::persist`] at `MEMORY_AND_DISK`.
    pub fn cache(&self) -> Result<DataFrame> {
        self.persist(StorageLevel::MEMORY_AND_DISK)
    }
    /// Spark's `persist(level)`: runs the query now and keeps its rows in memory (their bytes
    /// reserved against `kiln.memory.limit`; a result that does not fit fails with
    /// `UNABLE_TO_ACQUIRE_MEMORY`). Returns the DataFrame reading them: it, and every
    /// DataFrame derived from this one afterwards, read the cache (`InMemoryTableScan`) until
    /// [`DataFrame::unpersist`]. Spark fills the cache at the first action; kiln at once.
    /// As in Spark, `StorageLevel::NONE` caches nothing and a query cached already keeps its
    /// level; a level without memory (`DISK_ONLY`) is refused, since kiln caches in memory only.
    ///
    /// ```
    /// use kiln::functions::*;
    /// let session = kiln::Session::new();
    /// let df = session.sql("SELECT id, id * 2 AS twice FROM range(10)").unwrap().cache().unwrap();
    /// let plan = df.filter(col("id").gt(lit(5))).unwrap().explain_string(kiln::ExplainMode::Simple).unwrap();
    /// assert!(plan.contains("InMemoryTableScan") && plan.contains("InMemoryRelation"), "{plan}");
    /// assert_eq!(df.count().unwrap(), 10);
    /// ```
    pub fn persist(&self, level: StorageLevel) -> Result<DataFrame> {
        self.session.cache_dataframe(self, level)?;
        self.session.plan_shared(self.parsed())
    }
    /// Spark's `unpersist()`: drops the cache [`DataFrame::persist`] made of this DataFrame's
    /// query; returns the DataFrame reading its sources again. The rows' bytes are given back
    /// once no DataFrame planned over them is left.
    pub fn unpersist(&self) -> Result<DataFrame> {
        self.session.uncache_dataframe(self)?;
        self.session.plan_shared(self.parsed())
    }
    /// Spark's `storageLevel`: the level this DataFrame's query is cached at, if it is.
    pub fn storage_level(&self) -> Result<Option<StorageLevel>> {
        self.session.dataframe_storage_level(self)
    }
}
