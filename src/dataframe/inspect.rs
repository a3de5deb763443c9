//! Looking at a DataFrame as pyspark does: `printSchema`, `show(n, truncate)`, `head` / `tail`,
//! `describe` / `summary`, and the missing-value functions `na.fill` / `na.drop`.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;

use super::DataFrame;
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr};
use crate::functions::{call_function, lit, when, Column};
use crate::plan::LogicalPlan;
use crate::types::ScalarValue;

fn column(a: &Attribute) -> Column {
    Column::from_expr(Expr::UnresolvedAttribute([a.qualifier.clone(), vec![a.name.clone()]].concat()))
}

/// The attributes named `names` (all of them for none), or Spark's error for a name that is
/// not a column.
fn named<'a>(output: &'a [Attribute], names: &[&str]) -> Result<Vec<&'a Attribute>> {
    if names.is_empty() {
        return Ok(output.iter().collect());
    }
    names
        .iter()
        .map(|n| {
            output.iter().find(|a| a.name.eq_ignore_ascii_case(n)).ok_or_else(|| {
                let all: Vec<&str> = output.iter().map(|a| a.name.as_str()).collect();
                KilnError::analysis_with(
                    "UNRESOLVED_COLUMN_AMONG_FIELD_NAMES",
                    format!("Cannot resolve column name \"{n}\" among ({}).", all.join(", ")),
                    &[("colName", n), ("fieldNames", &all.join(", "))],
                )
            })
        })
        .collect()
}

impl DataFrame {
    /// The schema as Spark's `printSchema()` prints it: `root`, then ` |-- name: type (nullable
    /// = true)` per column, nested fields indented below their column.
    ///
    /// ```
    /// let s = kiln::Session::new();
    /// let df = s.sql("SELECT 1 AS id, array('a') AS tags").unwrap();
    /// assert_eq!(df.schema_string(), "root\n |-- id: integer (nullable = false)\n |-- tags: array (nullable = false)\n |    |-- element: string (containsNull = true)\n");
    /// ```
    pub fn schema_string(&self) -> String {
        let mut out = String::from("root\n");
        for f in self.schema().fields() {
            tree_field(&mut out, 1, f.name(), f.data_type(), &format!("(nullable = {})", f.is_nullable()));
        }
        out
    }
    /// Prints [`DataFrame::schema_string`] (Spark's `printSchema()`).
    pub fn print_schema(&self) -> Result<()> {
        super::write_stdout(&self.schema_string())
    }
    /// The session time zone this query was planned in: its TIMESTAMP values print in it.
    pub fn time_zone(&self) -> crate::types::time_zone::Zone {
        self.config.time_zone()
    }
    /// The text `show(n, truncate)` prints: up to `n` rows, cells cut to `truncate` characters
    /// and right-aligned (0: whole and left-aligned), as Spark's `showString`.
    pub fn show_string(&self, n: usize, truncate: usize) -> Result<String> {
        let batches = self.limit(n.saturating_add(1))?.collect()?;
        Ok(crate::format::show_string(&self.schema(), &batches, n, truncate, self.config.time_zone()))
    }
    /// The first `n` rows (Spark's `head(n)`, the same as [`DataFrame::take`]).
    pub fn head(&self, n: usize) -> Result<Vec<RecordBatch>> {
        self.take(n)
    }
    /// The last `n` rows, in one batch (Spark's `tail(n)`: it runs the whole query).
    pub fn tail(&self, n: usize) -> Result<RecordBatch> {
        let all = arrow::compute::concat_batches(&self.schema(), &self.collect()?)?;
        let from = all.num_rows().saturating_sub(n);
        Ok(all.slice(from, all.num_rows() - from))
    }
    /// Count, mean, standard deviation, min and max of the numeric and string columns (or of
    /// `cols`), as strings, one row per statistic under a `summary` column (Spark's
    /// `describe`).
    ///
    /// ```
    /// let s = kiln::Session::new();
    /// let df = s.sql("SELECT * FROM VALUES (1), (3) AS t(i)").unwrap().describe(&[]).unwrap();
    /// assert_eq!(df.columns(), vec!["summary", "i"]);
    /// ```
    pub fn describe(&self, cols: &[&str]) -> Result<DataFrame> {
        self.summary_of(cols, &["count", "mean", "stddev", "min", "max"])
    }
    /// The statistics `stats` of the numeric and string columns (Spark's `summary`): any of
    /// `count`, `mean`, `stddev`, `min`, `max` and percentiles such as `25%` (approximate, as
    /// Spark's); none gives count, mean, stddev, min, 25%, 50%, 75%, max.
    pub fn summary(&self, stats: &[&str]) -> Result<DataFrame> {
        let default = ["count", "mean", "stddev", "min", "25%", "50%", "75%", "max"];
        self.summary_of(&[], if stats.is_empty() { &default } else { stats })
    }
    fn summary_of(&self, cols: &[&str], stats: &[&str]) -> Result<DataFrame> {
        let output = self.plans.analyzed.output();
        let picked: Vec<&Attribute> = match cols.is_empty() {
            true => output.iter().filter(|a| crate::types::is_numeric(&a.data_type) || crate::types::is_string(&a.data_type)).collect(),
            false => named(&output, cols)?,
        };
        let mut cells = vec![];
        for stat in stats {
            for a in &picked {
                cells.push(statistic(stat, a)?.cast_to(DataType::Utf8).alias(&format!("_{}", cells.len())));
            }
        }
        let values: Vec<Option<String>> = match cells.is_empty() {
            true => vec![],
            false => {
                let row = self.agg(cells)?.collect()?;
                let batch = row.into_iter().find(|b| b.num_rows() > 0).ok_or_else(|| KilnError::internal("a global aggregate returned no row"))?;
                batch.columns().iter().map(|c| c.as_string_opt::<i32>().filter(|s| s.is_valid(0)).map(|s| s.value(0).to_string())).collect()
            }
        };
        let mut fields = vec![Field::new("summary", DataType::Utf8, true)];
        fields.extend(picked.iter().map(|a| Field::new(a.name.clone(), DataType::Utf8, true)));
        let mut columns: Vec<ArrayRef> = vec![Arc::new(StringArray::from(stats.to_vec()))];
        for i in 0..picked.len() {
            columns.push(Arc::new(StringArray::from((0..stats.len()).map(|s| values[s * picked.len() + i].clone()).collect::<Vec<_>>())));
        }
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?;
        self.session.create_dataframe(vec![batch])
    }
    /// The missing-value functions (Spark's `df.na`): `fill` and `drop`.
    pub fn na(&self) -> NaFunctions<'_> {
        NaFunctions { df: self }
    }
}

/// One statistic of a column, as Spark's `describe` / `summary` computes it.
fn statistic(stat: &str, a: &Attribute) -> Result<Column> {
    let c = column(a);
    let numeric = crate::types::is_numeric(&a.data_type);
    let null = || lit(ScalarValue::Null(DataType::Utf8));
    Ok(match stat.to_ascii_lowercase().as_str() {
        "count" => crate::functions::count(c),
        "mean" if numeric => crate::functions::avg(c),
        "stddev" if numeric => call_function("stddev", [c]),
        "mean" | "stddev" => null(),
        "min" => crate::functions::min(c),
        "max" => crate::functions::max(c),
        p if p.ends_with('%') => {
            let fraction: f64 = p.trim_end_matches('%').parse().ok().filter(|f: &f64| (0.0..=100.0).contains(f)).ok_or_else(|| bad_statistic(stat))?;
            if !numeric {
                return Ok(null());
            }
            let value = call_function("percentile_approx", [c.cast_to(DataType::Float64), lit(fraction / 100.0)]);
            // Spark reads percentiles of integers back as integers, of anything else as doubles.
            if crate::types::is_integral(&a.data_type) { value.cast_to(a.data_type.clone()) } else { value }
        }
        _ => return Err(bad_statistic(stat)),
    })
}

fn bad_statistic(stat: &str) -> KilnError {
    KilnError::unsupported(format!("summary statistic `{stat}`: the statistics are count, mean, stddev, min, max and percentiles such as 25%"))
}

/// Spark's `treeString` line of a field and the lines of what it nests.
fn tree_field(out: &mut String, depth: usize, name: &str, dt: &DataType, suffix: &str) {
    out.push_str(&" |   ".repeat(depth - 1));
    out.push_str(&format!(" |-- {name}: {} {suffix}", tree_type_name(dt)).trim_end().to_string());
    out.push('\n');
    match dt {
        DataType::List(f) | DataType::LargeList(f) => tree_field(out, depth + 1, "element", f.data_type(), &format!("(containsNull = {})", f.is_nullable())),
        DataType::Struct(fields) => fields.iter().for_each(|f| tree_field(out, depth + 1, f.name(), f.data_type(), &format!("(nullable = {})", f.is_nullable()))),
        DataType::Map(..) => {
            if let Some((k, v)) = crate::types::map_key_value(dt) {
                tree_field(out, depth + 1, "key", k.data_type(), "");
                tree_field(out, depth + 1, "value", v.data_type(), &format!("(valueContainsNull = {})", v.is_nullable()));
            }
        }
        _ => {}
    }
}

/// Spark's `typeName`: `integer`, `long`, `array`, ... where it differs from the simple name.
fn tree_type_name(dt: &DataType) -> String {
    match dt {
        DataType::Int8 => "byte".into(),
        DataType::Int16 => "short".into(),
        DataType::Int32 => "integer".into(),
        DataType::Int64 => "long".into(),
        DataType::List(_) | DataType::LargeList(_) => "array".into(),
        DataType::Struct(_) => "struct".into(),
        DataType::Map(..) => "map".into(),
        other => crate::types::spark_type_name(other),
    }
}

/// The missing-value functions of a DataFrame ([`DataFrame::na`]), as Spark's
/// `DataFrameNaFunctions`.
///
/// ```
/// let s = kiln::Session::new();
/// let df = s.sql("SELECT * FROM VALUES (1, 'a'), (NULL, NULL) AS t(i, s)").unwrap();
/// assert_eq!(df.na().drop(&[]).unwrap().count().unwrap(), 1);
/// let filled = df.na().fill(0, &[]).unwrap().na().fill("none", &[]).unwrap();
/// assert_eq!(filled.na().drop(&[]).unwrap().count().unwrap(), 2);
/// ```
pub struct NaFunctions<'a> {
    df: &'a DataFrame,
}

impl NaFunctions<'_> {
    /// NULLs (and NaNs) of the columns `cols` (all for none) replaced by `value`, where the
    /// column's type takes it, as Spark's `na.fill(value, subset)`: a number fills the numeric
    /// columns (cast to each column's type), a string the string columns, a boolean the
    /// boolean columns; others are left as they are.
    pub fn fill(&self, value: impl Into<ScalarValue>, cols: &[&str]) -> Result<DataFrame> {
        let value = value.into();
        let output = self.df.plans.analyzed.output();
        let filled: Vec<&Attribute> = named(&output, cols)?;
        let applies = |a: &Attribute| match &value {
            v if crate::types::is_numeric(&v.data_type()) => crate::types::is_numeric(&a.data_type),
            ScalarValue::Utf8(_) => crate::types::is_string(&a.data_type),
            ScalarValue::Boolean(_) => a.data_type == DataType::Boolean,
            _ => false,
        };
        let pairs: Vec<(&Attribute, ScalarValue)> = filled.into_iter().filter(|a| applies(a)).map(|a| (a, value.clone())).collect();
        self.fill_columns(&output, pairs)
    }
    /// Each named column's NULLs (and NaNs) replaced by its own value (Spark's
    /// `na.fill(Map(col -> value))`), the value cast to the column's type.
    pub fn fill_map(&self, values: &[(&str, ScalarValue)]) -> Result<DataFrame> {
        let output = self.df.plans.analyzed.output();
        let names: Vec<&str> = values.iter().map(|(n, _)| *n).collect();
        let attrs = named(&output, &names)?;
        self.fill_columns(&output, attrs.into_iter().zip(values.iter().map(|(_, v)| v.clone())).collect())
    }
    fn fill_columns(&self, output: &[Attribute], pairs: Vec<(&Attribute, ScalarValue)>) -> Result<DataFrame> {
        let list = output
            .iter()
            .map(|a| {
                let c = column(a);
                match pairs.iter().find(|(p, _)| p.id == a.id) {
                    None => c.into_expr(),
                    Some((_, v)) => {
                        // Spark's fillCol: a NaN of a float column is missing too.
                        let c = match a.data_type {
                            DataType::Float32 | DataType::Float64 => call_function("nanvl", [c, lit(ScalarValue::Null(a.data_type.clone()))]),
                            _ => c,
                        };
                        crate::functions::coalesce([c, lit(v.clone()).cast_to(a.data_type.clone())]).alias(&a.name).into_expr()
                    }
                }
            })
            .collect::<Result<Vec<_>>>()?;
        self.df.session.plan(LogicalPlan::Project { list, child: self.df.plans.parsed.clone() })
    }
    /// The rows without a NULL (or NaN) in any of `cols` (all for none): Spark's `na.drop()`.
    pub fn drop(&self, cols: &[&str]) -> Result<DataFrame> {
        let n = if cols.is_empty() { self.df.columns().len() } else { cols.len() };
        self.drop_thresh(n, cols)
    }
    /// The rows with at least `min_non_nulls` values of `cols` (all for none) neither NULL
    /// nor NaN: Spark's `na.drop(thresh, subset)`; `na.drop(how = "all")` is a threshold of 1.
    pub fn drop_thresh(&self, min_non_nulls: usize, cols: &[&str]) -> Result<DataFrame> {
        let output = self.df.plans.analyzed.output();
        let attrs = named(&output, cols)?;
        let present = attrs.iter().map(|a| {
            let c = column(a);
            let mut test = c.clone().is_not_null();
            if matches!(a.data_type, DataType::Float32 | DataType::Float64) {
                test = test.and(call_function("isnan", [c]).not());
            }
            when(test, 1).otherwise(0)
        });
        let count = present.reduce(|a, b| a + b).unwrap_or_else(|| lit(0));
        self.df.filter(count.ge(i32::try_from(min_non_nulls).unwrap_or(i32::MAX)))
    }
}
