//! Column expressions for the DataFrame API, as `pyspark.sql.functions`: `use kiln::functions::*`.
//!
//! A [`Column`] is an unresolved expression, the very node SQL text parses into: `col("a") + 1`
//! is `('a + 1)`, `sum(col("x"))` is `'sum('x)`. Functions are called by their SQL name
//! ([`call_function`]), so the analyzer's one registry resolves both SQL and Rust calls — the
//! built-ins, and UDFs registered with [`crate::Session::register_udf`].
//!
//! ```
//! use kiln::functions::*;
//! let session = kiln::Session::new();
//! let df = session.sql("SELECT 1 AS a, 'x' AS b UNION ALL SELECT 2, 'y'").unwrap();
//! let out = df.filter(col("a").gt(1)).unwrap().select([(col("a") * 10).alias("a10"), upper(col("b"))]).unwrap();
//! assert_eq!(out.columns(), vec!["a10", "upper(b)"]);
//! ```

use std::ops;
use std::sync::Arc;

use arrow::datatypes::DataType;

use crate::error::{KilnError, Result};
use crate::expr::{BinaryOp, Expr, SortOrder};
use crate::types::ScalarValue;

mod generated;
mod window;
pub use generated::*;
pub use window::{Window, WindowSpec};

/// An expression over the columns of a DataFrame, not yet resolved.
///
/// Building one never fails: a problem (an `expr("...")` that does not parse, a bad type name
/// in `cast`) is kept and returned by the DataFrame method the column is given to.
#[derive(Debug, Clone)]
pub struct Column {
    expr: Expr,
    /// `asc` / `desc` and NULL placement, for `order_by`: (ascending, nulls_first).
    sort: Option<(bool, bool)>,
    error: Option<Arc<KilnError>>,
}

impl Column {
    /// A column of this expression.
    pub fn from_expr(expr: Expr) -> Column {
        Column { expr, sort: None, error: None }
    }
    fn failed(error: KilnError) -> Column {
        Column { expr: Expr::Literal(ScalarValue::Null(DataType::Null)), sort: None, error: Some(Arc::new(error)) }
    }
    /// The unresolved expression.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }
    /// The expression, or the error building it hit.
    pub fn into_expr(self) -> Result<Expr> {
        match self.error {
            Some(e) => Err(replay(&e)),
            None => Ok(self.expr),
        }
    }
    /// The sort key this column stands for in `order_by` (ascending with NULLs first unless
    /// made with `desc`, `asc_nulls_last`, ...).
    pub(crate) fn into_sort_order(self) -> Result<SortOrder> {
        let (ascending, nulls_first) = self.sort.unwrap_or((true, true));
        Ok(SortOrder { expr: self.into_expr()?, ascending, nulls_first })
    }
    fn map(self, f: impl FnOnce(Expr) -> Expr) -> Column {
        Column { expr: f(self.expr), sort: None, error: self.error }
    }
    fn zip(self, other: impl Into<Column>, f: impl FnOnce(Expr, Expr) -> Expr) -> Column {
        let other = other.into();
        Column { expr: f(self.expr, other.expr), sort: None, error: self.error.or(other.error) }
    }
    fn binary(self, op: BinaryOp, other: impl Into<Column>) -> Column {
        self.zip(other, |a, b| a.binary(op, b))
    }

    /// `self = other`.
    pub fn eq(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::Eq, other)
    }
    /// `self != other`.
    pub fn not_eq(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::NotEq, other)
    }
    /// `self <=> other`: equality where NULL equals NULL.
    pub fn eq_null_safe(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::EqNullSafe, other)
    }
    /// `self > other`.
    pub fn gt(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::Gt, other)
    }
    /// `self >= other`.
    pub fn ge(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::GtEq, other)
    }
    /// `self < other`.
    pub fn lt(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::Lt, other)
    }
    /// `self <= other`.
    pub fn le(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::LtEq, other)
    }
    /// `self AND other`.
    pub fn and(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::And, other)
    }
    /// `self OR other`.
    pub fn or(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::Or, other)
    }
    /// `NOT self`.
    #[allow(clippy::should_implement_trait)] // `!col` works too
    pub fn not(self) -> Column {
        self.map(|e| Expr::Not(Box::new(e)))
    }
    /// `self div other`: integral division.
    pub fn div_int(self, other: impl Into<Column>) -> Column {
        self.binary(BinaryOp::IntDivide, other)
    }
    /// `self IS NULL`.
    pub fn is_null(self) -> Column {
        self.map(|e| Expr::IsNull(Box::new(e)))
    }
    /// `self IS NOT NULL`.
    pub fn is_not_null(self) -> Column {
        self.map(|e| Expr::IsNotNull(Box::new(e)))
    }
    /// `self IN (values)`.
    pub fn is_in<C: Into<Column>>(self, values: impl IntoIterator<Item = C>) -> Column {
        let values: Vec<Column> = values.into_iter().map(Into::into).collect();
        let error = self.error.or_else(|| values.iter().find_map(|v| v.error.clone()));
        let list = values.into_iter().map(|v| v.expr).collect();
        Column { expr: Expr::InList { child: Box::new(self.expr), list, negated: false }, sort: None, error }
    }
    /// `self BETWEEN low AND high`, built as SQL's parser builds it: `(self >= low) AND (self <= high)`.
    pub fn between(self, low: impl Into<Column>, high: impl Into<Column>) -> Column {
        self.clone().ge(low).and(self.le(high))
    }
    /// `self LIKE pattern` (`%` any run of characters, `_` any one).
    pub fn like(self, pattern: &str) -> Column {
        self.map(|e| Expr::Like { child: Box::new(e), pattern: Box::new(Expr::Literal(ScalarValue::Utf8(pattern.into()))), negated: false })
    }
    /// `self RLIKE pattern`: whether a Java-style regular expression matches part of the string.
    pub fn rlike(self, pattern: &str) -> Column {
        call("rlike", vec![self, lit(pattern)], false)
    }
    /// `contains(self, other)`: whether the string holds `other`.
    pub fn contains(self, other: impl Into<Column>) -> Column {
        call("contains", vec![self, other.into()], false)
    }
    /// `startswith(self, prefix)`.
    pub fn startswith(self, prefix: impl Into<Column>) -> Column {
        call("startswith", vec![self, prefix.into()], false)
    }
    /// `endswith(self, suffix)`.
    pub fn endswith(self, suffix: impl Into<Column>) -> Column {
        call("endswith", vec![self, suffix.into()], false)
    }
    /// `substring(self, pos, len)`: `len` characters from `pos`, 1-based (pyspark's `substr`).
    pub fn substr(self, pos: impl Into<Column>, len: impl Into<Column>) -> Column {
        call("substring", vec![self, pos.into(), len.into()], false)
    }
    /// `self[key]`: an array's element (0-based) or a map's value (pyspark's `getItem`).
    pub fn get_item(self, key: impl Into<Column>) -> Column {
        self.zip(key, |c, k| Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::GetItem), args: vec![c, k] })
    }
    /// `self.name`: a struct's field (pyspark's `getField`).
    pub fn get_field(self, name: &str) -> Column {
        self.get_item(name)
    }
    /// `cast(self AS type)`, the type written as in SQL (`"decimal(10,2)"`, `"bigint"`, `"date"`).
    pub fn cast(self, type_name: &str) -> Column {
        match crate::sql::parse_data_type(type_name) {
            Ok(to) => self.cast_to(to),
            Err(e) => Column::failed(e),
        }
    }
    /// `cast(self AS type)` to an Arrow type.
    pub fn cast_to(self, to: DataType) -> Column {
        self.map(|e| Expr::Cast { child: Box::new(e), to, zone: None })
    }
    /// `self AS name`.
    pub fn alias(self, name: &str) -> Column {
        self.map(|e| e.alias(name))
    }
    /// Sorts ascending, NULLs first (Spark's default for ASC).
    pub fn asc(self) -> Column {
        self.sorted(true, true)
    }
    /// Sorts ascending, NULLs last.
    pub fn asc_nulls_last(self) -> Column {
        self.sorted(true, false)
    }
    /// Sorts descending, NULLs last (Spark's default for DESC).
    pub fn desc(self) -> Column {
        self.sorted(false, false)
    }
    /// Sorts descending, NULLs first.
    pub fn desc_nulls_first(self) -> Column {
        self.sorted(false, true)
    }
    fn sorted(mut self, ascending: bool, nulls_first: bool) -> Column {
        self.sort = Some((ascending, nulls_first));
        self
    }
    /// Adds a branch to a `when(..)` chain: `when(a, x).when(b, y).otherwise(z)`.
    pub fn when(self, condition: Column, value: impl Into<Column>) -> Column {
        let value = value.into();
        let error = self.error.or(condition.error).or(value.error);
        let expr = match self.expr {
            Expr::CaseWhen { mut branches, else_expr: None, .. } => {
                branches.push((condition.expr, value.expr));
                Expr::CaseWhen { branches, else_expr: None, if_form: false }
            }
            _ => return Column::failed(KilnError::analysis("INVALID_WHEN_USAGE", "when() can only be applied on a Column previously generated by when(), before otherwise().")),
        };
        Column { expr, sort: None, error }
    }
    /// The `ELSE` value of a `when(..)` chain.
    pub fn otherwise(self, value: impl Into<Column>) -> Column {
        let value = value.into();
        let error = self.error.or(value.error);
        let expr = match self.expr {
            Expr::CaseWhen { branches, else_expr: None, .. } => Expr::CaseWhen { branches, else_expr: Some(Box::new(value.expr)), if_form: false },
            _ => return Column::failed(KilnError::analysis("INVALID_WHEN_USAGE", "otherwise() can only be applied once on a Column previously generated by when().")),
        };
        Column { expr, sort: None, error }
    }
}

/// An error kept in a Column, returned again (errors are not `Clone`).
fn replay(e: &KilnError) -> KilnError {
    match e {
        KilnError::Parse(m) => KilnError::Parse(m.clone()),
        KilnError::Unsupported(m) => KilnError::Unsupported(m.clone()),
        KilnError::Analysis(a) => KilnError::analysis(a.class, a.message.clone()),
        KilnError::Config(m) => KilnError::Config(m.clone()),
        other => KilnError::exec(other.to_string()),
    }
}

macro_rules! binary_op {
    ($trait:ident, $method:ident, $op:expr) => {
        impl<T: Into<Column>> ops::$trait<T> for Column {
            type Output = Column;
            fn $method(self, rhs: T) -> Column {
                self.binary($op, rhs)
            }
        }
    };
}
binary_op!(Add, add, BinaryOp::Plus);
binary_op!(Sub, sub, BinaryOp::Minus);
binary_op!(Mul, mul, BinaryOp::Multiply);
binary_op!(Div, div, BinaryOp::Divide);
binary_op!(Rem, rem, BinaryOp::Modulo);
binary_op!(BitAnd, bitand, BinaryOp::And);
binary_op!(BitOr, bitor, BinaryOp::Or);

impl ops::Neg for Column {
    type Output = Column;
    fn neg(self) -> Column {
        self.map(|e| Expr::Negative(Box::new(e)))
    }
}

impl ops::Not for Column {
    type Output = Column;
    fn not(self) -> Column {
        Column::not(self)
    }
}

macro_rules! literal_from {
    ($t:ty, $v:ident => $e:expr) => {
        impl From<$t> for Column {
            fn from($v: $t) -> Column {
                Column::from_expr(Expr::Literal($e))
            }
        }
    };
}
literal_from!(bool, v => ScalarValue::Boolean(v));
literal_from!(i8, v => ScalarValue::Int8(v));
literal_from!(i16, v => ScalarValue::Int16(v));
literal_from!(i32, v => ScalarValue::Int32(v));
literal_from!(i64, v => ScalarValue::Int64(v));
literal_from!(f32, v => ScalarValue::Float32(v));
literal_from!(f64, v => ScalarValue::Float64(v));
literal_from!(&str, v => ScalarValue::Utf8(v.to_string()));
literal_from!(String, v => ScalarValue::Utf8(v));
literal_from!(ScalarValue, v => v);

/// A column by name: `col("amount")`, `col("o.amount")` (qualified), `col("*")`, `col("o.*")`.
pub fn col(name: &str) -> Column {
    let mut parts: Vec<String> = name.split('.').map(str::to_string).collect();
    if parts.last().is_some_and(|p| p == "*") {
        parts.pop();
        let qualifier = if parts.is_empty() { None } else { Some(parts.join(".")) };
        return Column::from_expr(Expr::UnresolvedStar(qualifier));
    }
    Column::from_expr(Expr::UnresolvedAttribute(parts))
}

/// A literal: `lit(5)` (int), `lit(5i64)` (bigint), `lit(0.5)` (double), `lit("x")`, `lit(true)`.
/// For a decimal or a date write it as SQL does: `expr("0.05")`, `expr("DATE '1994-01-01'")`.
pub fn lit(value: impl Into<Column>) -> Column {
    value.into()
}

/// A SQL expression, parsed as SQL's parser reads it: `expr("amount * (1 - discount)")`.
pub fn expr(sql: &str) -> Column {
    match crate::sql::parse_expr(sql) {
        Ok(e) => Column::from_expr(e),
        Err(e) => Column::failed(e),
    }
}

/// A call of any function by its SQL name: a built-in or a registered UDF / UDAF. Resolved by
/// the analyzer, as the same call written in SQL is.
pub fn call_function(name: &str, args: impl IntoIterator<Item = Column>) -> Column {
    call(name, args.into_iter().collect(), false)
}

/// A call of a registered UDF or UDAF by name, as [`call_function`].
pub fn call_udf(name: &str, args: impl IntoIterator<Item = Column>) -> Column {
    call_function(name, args)
}

fn call(name: &str, args: Vec<Column>, distinct: bool) -> Column {
    let error = args.iter().find_map(|a| a.error.clone());
    let args = args.into_iter().map(|a| a.expr).collect();
    Column { expr: Expr::UnresolvedFunction { name: name.to_string(), args, distinct }, sort: None, error }
}

/// `CASE WHEN condition THEN value`; chain `.when(..)` and `.otherwise(..)`.
pub fn when(condition: Column, value: impl Into<Column>) -> Column {
    let value = value.into();
    let error = condition.error.or(value.error);
    Column { expr: Expr::CaseWhen { branches: vec![(condition.expr, value.expr)], else_expr: None, if_form: false }, sort: None, error }
}

/// `count(c)`: rows where `c` is not NULL; `count(col("*"))` counts rows (SQL's `count(*)`,
/// which the parser reads as `count(1)`).
pub fn count(c: Column) -> Column {
    let c = match c.expr {
        Expr::UnresolvedStar(None) => lit(1),
        _ => c,
    };
    call("count", vec![c], false)
}

/// `count(DISTINCT c)`.
pub fn count_distinct(c: Column) -> Column {
    call("count", vec![c], true)
}

/// `sum(DISTINCT c)`.
pub fn sum_distinct(c: Column) -> Column {
    call("sum", vec![c], true)
}

/// Sort key ascending (NULLs first).
pub fn asc(c: Column) -> Column {
    c.asc()
}

/// Sort key descending (NULLs last).
pub fn desc(c: Column) -> Column {
    c.desc()
}

/// Functions of one argument, each the SQL function of the same name.
macro_rules! unary_functions {
    ($($name:ident: $doc:literal),* $(,)?) => {$(
        #[doc = $doc]
        pub fn $name(c: Column) -> Column {
            call(stringify!($name), vec![c], false)
        }
    )*};
}
unary_functions!(
    sum: "`sum(c)`: bigint for integers, double for floats, decimal(p+10,s) for decimals.",
    avg: "`avg(c)`: double, or decimal(p+4,s+4) for decimals.",
    mean: "`mean(c)`, the same as `avg`.",
    min: "`min(c)`: the smallest non-NULL value.",
    max: "`max(c)`: the largest non-NULL value.",
    lower: "`lower(c)`: the string in lower case.",
    upper: "`upper(c)`: the string in upper case.",
    length: "`length(c)`: the number of characters.",
    abs: "`abs(c)`: the absolute value.",
    year: "`year(c)`: the year of a date.",
    trim: "`trim(c)`: spaces removed from both ends.",
    ltrim: "`ltrim(c)`: spaces removed from the start.",
    rtrim: "`rtrim(c)`: spaces removed from the end.",
    isnull: "`isnull(c)`, as `c IS NULL`.",
    isnotnull: "`isnotnull(c)`, as `c IS NOT NULL`.",
    explode: "`explode(c)`, a generator: a row per element of the array, column `col` (one generator per `select`).",
    explode_outer: "`explode_outer(c)`: `explode`, keeping a row whose array is NULL or empty once, with a NULL.",
    posexplode: "`posexplode(c)`, a generator: a row per element and its position from 0, columns `pos, col`.",
    posexplode_outer: "`posexplode_outer(c)`: `posexplode`, keeping a row whose array is NULL or empty once, with NULLs.",
);

/// `coalesce(a, b, ...)`: the first non-NULL argument.
pub fn coalesce(cols: impl IntoIterator<Item = Column>) -> Column {
    call_function("coalesce", cols)
}

/// `concat(a, b, ...)`: the arguments joined as strings.
pub fn concat(cols: impl IntoIterator<Item = Column>) -> Column {
    call_function("concat", cols)
}

/// `substring(c, pos, len)`, 1-based as Spark.
pub fn substring(c: Column, pos: i32, len: i32) -> Column {
    call("substring", vec![c, lit(pos), lit(len)], false)
}

/// `round(c, scale)`, HALF_UP.
pub fn round(c: Column, scale: i32) -> Column {
    call("round", vec![c, lit(scale)], false)
}

/// `date_add(c, days)`.
pub fn date_add(c: Column, days: impl Into<Column>) -> Column {
    call("date_add", vec![c, days.into()], false)
}

/// `date_sub(c, days)`.
pub fn date_sub(c: Column, days: impl Into<Column>) -> Column {
    call("date_sub", vec![c, days.into()], false)
}

/// `datediff(end, start)`: days from start to end.
pub fn datediff(end: Column, start: Column) -> Column {
    call("datediff", vec![end, start], false)
}

/// `replace(c, search, replacement)`.
pub fn replace(c: Column, search: &str, replacement: &str) -> Column {
    call("replace", vec![c, lit(search), lit(replacement)], false)
}

/// `rand(seed)`: uniform in [0, 1), non-deterministic.
pub fn rand(seed: i64) -> Column {
    call("rand", vec![lit(seed)], false)
}

/// `nullif(a, b)`: NULL when `a = b`, else `a`.
pub fn nullif(a: Column, b: Column) -> Column {
    call("nullif", vec![a, b], false)
}

/// Functions of no argument, each the SQL function of the same name.
macro_rules! nullary_functions {
    ($($name:ident: $doc:literal),* $(,)?) => {$(
        #[doc = $doc]
        pub fn $name() -> Column {
            call(stringify!($name), vec![], false)
        }
    )*};
}
nullary_functions!(
    row_number: "`row_number()`, over a window: 1, 2, 3, ... within the partition.",
    rank: "`rank()`, over a window: 1 + the rows before the row's peers (gaps after ties).",
    dense_rank: "`dense_rank()`, over a window: ranks without gaps.",
    percent_rank: "`percent_rank()`, over a window: (rank - 1) / (rows - 1).",
    cume_dist: "`cume_dist()`, over a window: the fraction of rows up to the row's last peer.",
    current_date: "`current_date()`: the date at the start of the query, in the session zone.",
    current_timestamp: "`current_timestamp()`: the instant the query started.",
);

unary_functions!(
    collect_list: "`collect_list(c)`: the non-NULL values as an array, in input order.",
    collect_set: "`collect_set(c)`: the distinct non-NULL values as an array.",
    stddev: "`stddev(c)`: the sample standard deviation (`stddev_samp`).",
    stddev_samp: "`stddev_samp(c)`: the sample standard deviation.",
    stddev_pop: "`stddev_pop(c)`: the population standard deviation.",
    variance: "`variance(c)`: the sample variance (`var_samp`).",
    var_samp: "`var_samp(c)`: the sample variance.",
    var_pop: "`var_pop(c)`: the population variance.",
    count_if: "`count_if(c)`: the rows where the condition `c` is true.",
    any_value: "`any_value(c)`: some value of the group.",
    median: "`median(c)`: the exact median.",
    to_date: "`to_date(c)`: a string or timestamp as a date (`to_date(c, fmt)` through [`call_function`]).",
    to_timestamp: "`to_timestamp(c)`: a string or date as a timestamp.",
    month: "`month(c)`: the month (1-12) of a date or timestamp.",
    dayofmonth: "`dayofmonth(c)`: the day of the month.",
    dayofweek: "`dayofweek(c)`: the day of the week, 1 = Sunday.",
    dayofyear: "`dayofyear(c)`: the day of the year.",
    quarter: "`quarter(c)`: the quarter (1-4).",
    weekofyear: "`weekofyear(c)`: the ISO week of the year.",
    hour: "`hour(c)`: the hour of a timestamp, in the session zone.",
    minute: "`minute(c)`: the minute of a timestamp.",
    second: "`second(c)`: the second of a timestamp.",
    last_day: "`last_day(c)`: the last day of the date's month.",
    sqrt: "`sqrt(c)`: the square root, as double.",
    exp: "`exp(c)`: e to the power `c`.",
    ln: "`ln(c)`: the natural logarithm (NULL for `c <= 0`).",
    floor: "`floor(c)`: rounded down.",
    ceil: "`ceil(c)`: rounded up.",
    signum: "`signum(c)`: -1.0, 0.0 or 1.0.",
    initcap: "`initcap(c)`: each word capitalised.",
    reverse: "`reverse(c)`: a string's characters or an array's elements in reverse order.",
    size: "`size(c)`: the number of elements of an array or map.",
    array_distinct: "`array_distinct(c)`: the array without repeated elements.",
    md5: "`md5(c)`: the MD5 digest as hex.",
    sha1: "`sha1(c)`: the SHA-1 digest as hex.",
    hex: "`hex(c)`: the value in hexadecimal.",
    base64: "`base64(c)`: binary as base64 text.",
    ascii: "`ascii(c)`: the code of the first character.",
);

/// `lag(c, offset)`, over a window: `c` of the row `offset` rows before, NULL before the
/// partition's first row (`lag(c, offset, default)` through [`call_function`]).
pub fn lag(c: Column, offset: i32) -> Column {
    call("lag", vec![c, lit(offset)], false)
}

/// `lead(c, offset)`, over a window: `c` of the row `offset` rows after.
pub fn lead(c: Column, offset: i32) -> Column {
    call("lead", vec![c, lit(offset)], false)
}

/// `ntile(n)`, over a window: the bucket 1..n of the row.
pub fn ntile(n: i32) -> Column {
    call("ntile", vec![lit(n)], false)
}

/// `first(c)` (`first(c, true)` skips NULLs): an aggregate, or over a window the frame's first value.
pub fn first(c: Column, ignore_nulls: bool) -> Column {
    call("first", if ignore_nulls { vec![c, lit(true)] } else { vec![c] }, false)
}

/// `last(c)` (`last(c, true)` skips NULLs): an aggregate, or over a window the frame's last value.
pub fn last(c: Column, ignore_nulls: bool) -> Column {
    call("last", if ignore_nulls { vec![c, lit(true)] } else { vec![c] }, false)
}

/// `date_trunc(unit, c)`: the timestamp truncated to `"year"`, `"month"`, `"day"`, `"hour"`, ...
pub fn date_trunc(unit: &str, c: Column) -> Column {
    call("date_trunc", vec![lit(unit), c], false)
}

/// `date_format(c, pattern)`: a date or timestamp as text in a datetime pattern (`"yyyy-MM"`).
pub fn date_format(c: Column, pattern: &str) -> Column {
    call("date_format", vec![c, lit(pattern)], false)
}

/// `add_months(c, n)`.
pub fn add_months(c: Column, months: impl Into<Column>) -> Column {
    call("add_months", vec![c, months.into()], false)
}

/// `regexp_replace(c, pattern, replacement)`: every match of a Java-style regular expression
/// replaced (`$1` refers to a group).
pub fn regexp_replace(c: Column, pattern: &str, replacement: &str) -> Column {
    call("regexp_replace", vec![c, lit(pattern), lit(replacement)], false)
}

/// `regexp_extract(c, pattern, group)`: the group of the first match, or `""`.
pub fn regexp_extract(c: Column, pattern: &str, group: i32) -> Column {
    call("regexp_extract", vec![c, lit(pattern), lit(group)], false)
}

/// `split(c, pattern)`: the string split around matches of a regular expression, as an array.
pub fn split(c: Column, pattern: &str) -> Column {
    call("split", vec![c, lit(pattern)], false)
}

/// `concat_ws(sep, a, b, ...)`: the non-NULL arguments joined by `sep`.
pub fn concat_ws(sep: &str, cols: impl IntoIterator<Item = Column>) -> Column {
    call("concat_ws", std::iter::once(lit(sep)).chain(cols).collect(), false)
}

/// `lpad(c, len, pad)`.
pub fn lpad(c: Column, len: i32, pad: &str) -> Column {
    call("lpad", vec![c, lit(len), lit(pad)], false)
}

/// `rpad(c, len, pad)`.
pub fn rpad(c: Column, len: i32, pad: &str) -> Column {
    call("rpad", vec![c, lit(len), lit(pad)], false)
}

/// `greatest(a, b, ...)`: the largest non-NULL argument.
pub fn greatest(cols: impl IntoIterator<Item = Column>) -> Column {
    call_function("greatest", cols)
}

/// `least(a, b, ...)`: the smallest non-NULL argument.
pub fn least(cols: impl IntoIterator<Item = Column>) -> Column {
    call_function("least", cols)
}

/// `array(a, b, ...)`.
pub fn array(cols: impl IntoIterator<Item = Column>) -> Column {
    call_function("array", cols)
}

/// `array_contains(c, value)`.
pub fn array_contains(c: Column, value: impl Into<Column>) -> Column {
    call("array_contains", vec![c, value.into()], false)
}

/// `percentile_approx(c, percentage, accuracy)`.
pub fn percentile_approx(c: Column, percentage: f64, accuracy: i32) -> Column {
    call("percentile_approx", vec![c, lit(percentage), lit(accuracy)], false)
}

/// `corr(a, b)`: the Pearson correlation.
pub fn corr(a: Column, b: Column) -> Column {
    call("corr", vec![a, b], false)
}

#[cfg(test)]
mod tests {
    /// Rust's keywords, which a helper's name takes as a raw identifier (`r#if`).
    const KEYWORDS: &[&str] = &[
        "as", "async", "await", "box", "break", "const", "continue", "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if",
        "impl", "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref", "return", "static", "struct", "trait",
        "true", "try", "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield", "abstract", "become",
    ];

    /// The helpers written by hand (better typed): `pub fn name` at the top level of this
    /// module's files, and the names the `*_functions!` macros define.
    fn hand_written() -> std::collections::BTreeSet<String> {
        let mut names = std::collections::BTreeSet::new();
        for text in [include_str!("functions.rs"), include_str!("functions/window.rs")] {
            let mut in_macro = false;
            for line in text.lines() {
                if let Some(rest) = line.strip_prefix("pub fn ") {
                    names.insert(rest.split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap_or_default().to_string());
                }
                if line.ends_with("_functions!(") {
                    in_macro = true;
                } else if line.starts_with(')') {
                    in_macro = false;
                } else if in_macro {
                    if let Some((name, _)) = line.trim().split_once(": \"") {
                        names.insert(name.to_string());
                    }
                }
            }
        }
        names
    }

    /// The text of `generated.rs`: a helper per function of the registry without a hand-written
    /// one. Fixed arity: one `Column` per argument; a range: the arguments as a list.
    fn render() -> String {
        let skip = hand_written();
        let mut out = String::from(include_str!("functions/generated.rs").lines().take(2).collect::<Vec<_>>().join("\n"));
        out.push_str("\n\nuse super::{call, Column};\n");
        for (name, (min, max)) in crate::expr::registry() {
            // Operators (`&`), internal names (`get_item`) and the try_ arithmetic, which SQL
            // rewrites before resolution, are reached through call_function or not at all.
            let internal = ["get_item", "secondwithfraction", "timeadd", "might_contain"].contains(&name) || name.starts_with("try_");
            if skip.contains(name) || internal || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.starts_with(|c: char| c.is_ascii_digit()) {
                continue;
            }
            let ident = if KEYWORDS.contains(&name) { format!("r#{name}") } else { name.to_string() };
            let letters = ["a", "b", "c", "d", "e", "f", "g", "h"];
            let (params, args, shape) = if min == max && min == 1 {
                ("c: Column".to_string(), "vec![c]".to_string(), "c".to_string())
            } else if min == max && min <= letters.len() {
                let ls = &letters[..min];
                (ls.iter().map(|l| format!("{l}: Column")).collect::<Vec<_>>().join(", "), format!("vec![{}]", ls.join(", ")), ls.join(", "))
            } else {
                let many = if max == usize::MAX { format!("{min} or more") } else { format!("{min} to {max}") };
                ("args: impl IntoIterator<Item = Column>".to_string(), "args.into_iter().collect()".to_string(), format!("{many} arguments"))
            };
            out.push_str(&format!("\n/// `{name}({shape})`, the registry's function of that name (as [`super::call_function`] calls it).\npub fn {ident}({params}) -> Column {{\n    call(\"{name}\", {args}, false)\n}}\n"));
        }
        out
    }

    #[test]
    fn generated_helpers_match_the_registry() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/functions/generated.rs");
        let want = render();
        if std::env::var_os("KILN_BLESS").is_some() {
            std::fs::write(path, &want).expect("generated.rs written");
        }
        let have = std::fs::read_to_string(path).expect("generated.rs");
        assert!(have == want, "src/functions/generated.rs is not what the registry gives: run this test with KILN_BLESS=1");
    }
}
