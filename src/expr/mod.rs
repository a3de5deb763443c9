//! Expressions: the tree, ExprIds, and the properties the optimizer asks about
//! (deterministic, foldable, nullable, references). `Display` prints them the way Spark does.

mod display;
pub mod eval;
pub mod bloom;
mod typing;
mod window;
pub(crate) mod builtins;
mod builtins_more;
mod codecs;
mod number_format;
mod aggregates;
mod arrays;
mod generators;
mod json;
mod from_text;
mod nested;
mod regexp;
mod strict_math;
mod datetime;
mod sequence;
pub use aggregates::{AggBuiltin, AggKind, WITHIN_GROUP_MARKER};
pub(crate) use aggregates::try_avg_sum_type;
pub use builtins::Builtin;
pub use generators::{Generator, GeneratorFunc};
pub use builtins_more::MoreFn;
pub use nested::NestedFn;
pub(crate) use builtins_more::unhex_bytes;
pub(crate) use datetime::{extract_field_function, is_seconds_field, second_with_fraction};
pub(crate) use builtins_more::rewrite as rewrite_more;
pub use typing::aggregate_result_type;
pub use window::{FrameBound, FrameType, WindowFrame, WindowFunc, WindowSpec};

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow::datatypes::DataType;

use crate::types::ScalarValue;

/// The name the parser gives `struct(...)` calls (Spark's CreateStruct): name and value
/// arguments alternate, as named_struct's.
pub const STRUCT_FUNCTION: &str = "struct";

/// A unique id for an attribute or alias, printed `name#id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExprId(pub u64);

static NEXT_EXPR_ID: AtomicU64 = AtomicU64::new(0);

impl ExprId {
    /// A fresh id, unique within the process (as Spark's JVM-wide counter).
    pub fn next() -> ExprId {
        ExprId(NEXT_EXPR_ID.fetch_add(1, Ordering::Relaxed))
    }
}

/// A resolved reference to a column produced by a child plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// The column name, as written or as its alias gave it.
    pub name: String,
    /// The id that identifies this column across the plan (`name#id`).
    pub id: ExprId,
    /// The column's Arrow type.
    pub data_type: DataType,
    /// Whether the column may hold NULL.
    pub nullable: bool,
    /// Table alias or table name the column may be qualified by (`o` in `o.amount`).
    pub qualifier: Vec<String>,
}

impl Attribute {
    /// A new attribute with a fresh id.
    pub fn new(name: impl Into<String>, data_type: DataType, nullable: bool) -> Attribute {
        Attribute { name: name.into(), id: ExprId::next(), data_type, nullable, qualifier: vec![] }
    }
    /// This attribute as an expression.
    pub fn expr(&self) -> Expr {
        Expr::Attribute(self.clone())
    }
}

/// Binary operators: arithmetic, comparison, logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b`.
    Plus,
    /// `a - b`.
    Minus,
    /// `a * b`.
    Multiply,
    /// `a / b`: fractional division; the analyzer casts non-decimal operands to double.
    Divide,
    /// `a div b`: integral division truncating toward zero, bigint result.
    IntDivide,
    /// `a % b`: remainder, with the sign of the dividend.
    Modulo,
    /// `a = b`.
    Eq,
    /// `a != b` (also written `<>`).
    NotEq,
    /// `a < b`.
    Lt,
    /// `a <= b`.
    LtEq,
    /// `a > b`.
    Gt,
    /// `a >= b`.
    GtEq,
    /// `<=>`, equality where NULL equals NULL.
    EqNullSafe,
    /// `a AND b`, three-valued: `false AND NULL` is false.
    And,
    /// `a OR b`, three-valued: `true OR NULL` is true.
    Or,
}

impl BinaryOp {
    /// The operator's SQL symbol, as Spark prints it.
    pub fn symbol(&self) -> &'static str {
        match self {
            BinaryOp::Plus => "+",
            BinaryOp::Minus => "-",
            BinaryOp::Multiply => "*",
            BinaryOp::Divide => "/",
            BinaryOp::IntDivide => "div",
            BinaryOp::Modulo => "%",
            BinaryOp::Eq => "=",
            BinaryOp::NotEq => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::LtEq => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::GtEq => ">=",
            BinaryOp::EqNullSafe => "<=>",
            BinaryOp::And => "AND",
            BinaryOp::Or => "OR",
        }
    }
    /// True for `= != < <= > >= <=>`.
    pub fn is_comparison(&self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::NotEq | BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq | BinaryOp::EqNullSafe)
    }
    /// True for `+ - * / div %`.
    pub fn is_arithmetic(&self) -> bool {
        matches!(self, BinaryOp::Plus | BinaryOp::Minus | BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::IntDivide | BinaryOp::Modulo)
    }
    /// `a op b` == `b flip(op) a`.
    pub fn flip(&self) -> BinaryOp {
        match self {
            BinaryOp::Lt => BinaryOp::Gt,
            BinaryOp::LtEq => BinaryOp::GtEq,
            BinaryOp::Gt => BinaryOp::Lt,
            BinaryOp::GtEq => BinaryOp::LtEq,
            other => *other,
        }
    }
}

/// Built-in scalar functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarFunc {
    /// lower(str) (alias lcase): the string in lower case.
    Lower,
    /// upper(str) (alias ucase): the string in upper case.
    Upper,
    /// substring(str, pos[, len]), 1-based as Spark.
    Substring,
    /// length(str) (aliases char_length, character_length): the number of characters.
    Length,
    /// abs(x): the absolute value, of the argument's type.
    Abs,
    /// round(x[, scale]), HALF_UP as Spark.
    Round,
    /// concat(a, b, ...): the arguments joined as strings; NULL if any argument is NULL.
    Concat,
    /// coalesce(a, b, ...): the first non-NULL argument.
    Coalesce,
    /// date_add(date, days)
    DateAdd,
    /// date_sub(date, days)
    DateSub,
    /// extract(YEAR FROM date) / year(date)
    Year,
    /// rand(seed): non-deterministic.
    Rand,
    /// trim(str): spaces removed from both ends.
    Trim,
    /// ltrim(str): spaces removed from the start.
    LTrim,
    /// rtrim(str): spaces removed from the end.
    RTrim,
    /// replace(str, search[, replacement])
    Replace,
    /// datediff(end, start): days from start to end.
    DateDiff,
    /// might_contain(bloom filter, xxhash64(key)): the runtime filter `InjectRuntimeFilter`
    /// plants (`expr/bloom.rs`); not callable by name, as in Spark.
    MightContain,
    /// One of the other built-ins (math, string, date, bitwise; `expr/builtins.rs`).
    Builtin(Builtin),
}

impl ScalarFunc {
    /// Spark's lower-case function name.
    pub fn name(&self) -> &'static str {
        match self {
            ScalarFunc::Lower => "lower",
            ScalarFunc::Upper => "upper",
            ScalarFunc::Substring => "substring",
            ScalarFunc::Length => "length",
            ScalarFunc::Abs => "abs",
            ScalarFunc::Round => "round",
            ScalarFunc::Concat => "concat",
            ScalarFunc::Coalesce => "coalesce",
            ScalarFunc::DateAdd => "date_add",
            ScalarFunc::DateSub => "date_sub",
            ScalarFunc::Year => "year",
            ScalarFunc::Rand => "rand",
            ScalarFunc::Trim => "trim",
            ScalarFunc::LTrim => "ltrim",
            ScalarFunc::RTrim => "rtrim",
            ScalarFunc::Replace => "replace",
            ScalarFunc::DateDiff => "datediff",
            ScalarFunc::MightContain => "might_contain",
            ScalarFunc::Builtin(b) => b.name(),
        }
    }
    /// The fewest and most arguments a call may have.
    pub fn arity(&self) -> (usize, usize) {
        match self {
            ScalarFunc::Lower | ScalarFunc::Upper | ScalarFunc::Length | ScalarFunc::Abs | ScalarFunc::Year => (1, 1),
            ScalarFunc::Trim | ScalarFunc::LTrim | ScalarFunc::RTrim => (1, 2),
            ScalarFunc::Replace => (2, 3),
            ScalarFunc::DateDiff | ScalarFunc::MightContain => (2, 2),
            ScalarFunc::Substring => (2, 3),
            ScalarFunc::Round => (1, 2),
            ScalarFunc::Concat | ScalarFunc::Coalesce => (1, usize::MAX),
            ScalarFunc::DateAdd | ScalarFunc::DateSub => (2, 2),
            ScalarFunc::Rand => (0, 1),
            ScalarFunc::Builtin(b) => b.arity(),
        }
    }
    /// Looks a function up by its SQL name.
    pub fn from_name(name: &str) -> Option<ScalarFunc> {
        Some(match name.to_ascii_lowercase().as_str() {
            "lower" | "lcase" => ScalarFunc::Lower,
            "upper" | "ucase" => ScalarFunc::Upper,
            "substring" | "substr" => ScalarFunc::Substring,
            "length" | "char_length" | "character_length" => ScalarFunc::Length,
            "abs" => ScalarFunc::Abs,
            "round" => ScalarFunc::Round,
            "concat" => ScalarFunc::Concat,
            "coalesce" => ScalarFunc::Coalesce,
            "date_add" => ScalarFunc::DateAdd,
            "date_sub" => ScalarFunc::DateSub,
            "year" => ScalarFunc::Year,
            "rand" | "random" => ScalarFunc::Rand,
            "trim" | "btrim" => ScalarFunc::Trim,
            "ltrim" => ScalarFunc::LTrim,
            "rtrim" => ScalarFunc::RTrim,
            "replace" => ScalarFunc::Replace,
            "datediff" | "date_diff" => ScalarFunc::DateDiff,
            other => return Builtin::from_name(other).map(ScalarFunc::Builtin),
        })
    }
    /// Names of every scalar function, for "did you mean" suggestions.
    pub const NAMES: &'static [&'static str] =
        &[
        "lower", "upper", "substring", "length", "abs", "round", "concat", "coalesce", "date_add", "date_sub", "year", "rand", "trim", "btrim",
        "ltrim", "rtrim", "replace", "datediff", "isnull", "isnotnull", "nvl", "ifnull", "nullif", "if",
    ];
}

/// Every function a call by name resolves to (the registry SQL and `functions::call_function`
/// share), with its fewest and most arguments, sorted by name: scalar functions, aggregates,
/// window functions, generators and the casts named after a type. The typed helpers of
/// `functions` are generated from it.
pub fn registry() -> Vec<(&'static str, (usize, usize))> {
    let mut out: Vec<(&'static str, (usize, usize))> = vec![];
    out.extend(ScalarFunc::NAMES.iter().filter_map(|n| Some((*n, ScalarFunc::from_name(n)?.arity()))));
    out.extend(Builtin::names().filter_map(|n| Some((n, Builtin::from_name(n)?.arity()))));
    out.extend([("count", (1, usize::MAX)), ("sum", (1, 1)), ("avg", (1, 1)), ("mean", (1, 1)), ("min", (1, 1)), ("max", (1, 1))]);
    out.extend(AggBuiltin::names().filter_map(|n| Some((n, AggBuiltin::from_name(n)?.arity()))));
    out.extend(WindowFunc::NAMES.iter().filter_map(|n| Some((*n, WindowFunc::from_name(n)?.arity()))));
    out.extend(generators::GeneratorFunc::NAMES.iter().map(|(n, arity)| (*n, *arity)));
    out.extend(CAST_FUNCTIONS.iter().map(|n| (*n, (1, 1))));
    out.sort_by_key(|(n, _)| *n);
    out.dedup_by_key(|(n, _)| *n);
    out
}

/// Spark's functions named after a type, `int(x)` `date(x)` `decimal(x)`: each is
/// `CAST(x AS type)` (FunctionRegistry's castAlias), with one argument.
pub const CAST_FUNCTIONS: &[&str] =
    &["boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal", "date", "timestamp", "binary", "string"];

/// The type a cast function (`CAST_FUNCTIONS`) casts to.
pub fn cast_function_type(name: &str) -> Option<DataType> {
    Some(match name.to_ascii_lowercase().as_str() {
        "boolean" => DataType::Boolean,
        "tinyint" => DataType::Int8,
        "smallint" => DataType::Int16,
        "int" => DataType::Int32,
        "bigint" => DataType::Int64,
        "float" => DataType::Float32,
        "double" => DataType::Float64,
        "decimal" => DataType::Decimal128(10, 0),
        "date" => DataType::Date32,
        "timestamp" => crate::types::timestamp_type(false),
        "binary" => DataType::Binary,
        "string" => DataType::Utf8,
        _ => return None,
    })
}

/// Aggregate functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AggFunc {
    /// count(x): the number of rows where x is not NULL (`count(*)` is parsed as `count(1)`); never NULL.
    Count,
    /// sum(x): bigint for integers, double for floats, decimal(p+10,s) for decimals; NULL over no non-NULL rows.
    Sum,
    /// avg(x) (alias mean): double, or decimal(p+4,s+4) for decimals; NULL over no non-NULL rows.
    Avg,
    /// min(x): the smallest non-NULL value.
    Min,
    /// max(x): the largest non-NULL value.
    Max,
    /// A user-defined aggregate (`Session::register_udaf`).
    Udaf(&'static crate::udf::AggregateUdf),
    /// One of the other built-in aggregates (stddev, corr, first, bool_and, ...; `expr/aggregates.rs`).
    Builtin(AggBuiltin),
}

impl PartialEq for crate::udf::AggregateUdf {
    /// A registered aggregate is one object for the life of the process.
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for crate::udf::AggregateUdf {}

impl std::hash::Hash for crate::udf::AggregateUdf {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(self, state)
    }
}

impl AggFunc {
    /// What Spark prints after the arguments: BloomFilterAggregate's size and buffer offsets.
    pub fn extra_arguments(&self) -> String {
        match self {
            AggFunc::Builtin(b) if b.kind == AggKind::BloomFilter => {
                let (items, bits) = b.bloom_size();
                format!(", {items}, {bits}, 0, 0")
            }
            _ => String::new(),
        }
    }

    /// Spark's lower-case name.
    pub fn name(&self) -> &'static str {
        match self {
            AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Avg => "avg",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Udaf(u) => (*u).name(),
            AggFunc::Builtin(b) => b.name,
        }
    }
    /// Looks an aggregate up by its SQL name.
    pub fn from_name(name: &str) -> Option<AggFunc> {
        Some(match name.to_ascii_lowercase().as_str() {
            "count" => AggFunc::Count,
            "sum" => AggFunc::Sum,
            "avg" | "mean" => AggFunc::Avg,
            "min" => AggFunc::Min,
            "max" => AggFunc::Max,
            other => return AggBuiltin::from_name(other).map(AggFunc::Builtin),
        })
    }
}

/// Sort direction and NULL placement of one sort key.
#[derive(Debug, Clone, PartialEq)]
pub struct SortOrder {
    /// The sort key.
    pub expr: Expr,
    /// `ASC` (true) or `DESC` (false).
    pub ascending: bool,
    /// `NULLS FIRST` (true) or `NULLS LAST` (false); Spark's default is first for ASC, last for DESC.
    pub nulls_first: bool,
}

/// A plan an expression holds (a subquery's), opaque here: plans are built of expressions, so
/// `expr` does not name them. `plan` implements it for a logical plan, `physical` for a
/// physical one, and each gives back its own type (`SubqueryPlan::plan`,
/// `ScalarSubqueryExec::physical_plan`).
pub trait HeldPlan: std::fmt::Debug + Send + Sync {
    /// The plan, for the layer that knows its type.
    fn as_any(&self) -> &dyn std::any::Any;
    /// Whether `other` is an equal plan.
    fn same_plan(&self, other: &dyn HeldPlan) -> bool;
    /// The columns of enclosing queries the plan reads (`OuterReference`s), in order.
    fn outer_references(&self) -> Vec<Attribute>;
    /// The plan's output columns.
    fn output(&self) -> Vec<Attribute>;
    /// True once no unresolved node remains.
    fn resolved(&self) -> bool;
}

/// The plan of a subquery expression (a logical plan: `SubqueryPlan::new`, `plan()`). Two are
/// equal when their plans are equal trees.
#[derive(Debug, Clone)]
pub struct SubqueryPlan(std::sync::Arc<dyn HeldPlan>);

impl PartialEq for SubqueryPlan {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_plan(other.0.as_ref())
    }
}

impl SubqueryPlan {
    /// Holds `plan`; only `plan`'s `SubqueryPlan::new` calls this, so the plan is always a
    /// logical one.
    pub(crate) fn from_held(plan: std::sync::Arc<dyn HeldPlan>) -> SubqueryPlan {
        SubqueryPlan(plan)
    }
    /// The plan, opaque.
    pub fn held(&self) -> &dyn HeldPlan {
        self.0.as_ref()
    }
    /// The columns of enclosing queries this subquery reads (`OuterReference`s), in order.
    pub fn outer_references(&self) -> Vec<Attribute> {
        self.0.outer_references()
    }
}

/// An uncorrelated scalar subquery planned for execution (Spark's `ScalarSubquery` exec
/// expression over a `SubqueryExec`), printed `Subquery scalar-subquery#id, [id=#plan_id]`.
/// It runs once, before the first stage that hosts it; the executor then stores its value,
/// which evaluation and generated code read as a literal.
#[derive(Debug)]
pub struct ScalarSubqueryExec {
    /// The id of the logical subquery (`scalar-subquery#id`).
    pub id: ExprId,
    /// Spark's plan id (`[id=#plan_id]`).
    pub plan_id: u64,
    /// The value's type (the subquery's one column).
    pub data_type: arrow::datatypes::DataType,
    /// The subquery's physical plan, prepared as a query of its own (`physical_plan()`).
    pub(crate) plan: std::sync::Arc<dyn HeldPlan>,
    /// The value once the subquery ran (one row; NULL when it returned none).
    pub value: std::sync::OnceLock<arrow::array::ArrayRef>,
    /// The plan an adaptive run of the subquery executed (`final_physical_plan()`).
    pub(crate) final_plan: std::sync::OnceLock<std::sync::Arc<dyn HeldPlan>>,
}

impl PartialEq for ScalarSubqueryExec {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.plan_id == other.plan_id
    }
}

/// An expression tree node.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `'name` or `'t.name` before analysis.
    UnresolvedAttribute(Vec<String>),
    /// `*` or `t.*` before analysis.
    UnresolvedStar(Option<String>),
    /// `* EXCEPT (a, b)` or `t.* EXCEPT (a)` before analysis: the star's columns but those named.
    UnresolvedStarExcept {
        /// `t` of `t.*`.
        qualifier: Option<String>,
        /// The names left out, each as its parts (`t.a` is `["t", "a"]`).
        except: Vec<Vec<String>>,
    },
    /// A function call before analysis, printed `'sum('amount)`.
    UnresolvedFunction {
        /// The function name as written.
        name: String,
        /// The arguments.
        args: Vec<Expr>,
        /// `f(DISTINCT ...)`.
        distinct: bool,
    },
    /// A resolved column.
    Attribute(Attribute),
    /// A literal value.
    Literal(ScalarValue),
    /// `child AS name#id`.
    Alias {
        /// The aliased expression.
        child: Box<Expr>,
        /// The output name.
        name: String,
        /// The id of the attribute this alias produces.
        id: ExprId,
    },
    /// `left op right`, printed parenthesized: `(a#1 + 1)`.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// The left operand.
        left: Box<Expr>,
        /// The right operand.
        right: Box<Expr>,
    },
    /// Logical negation, printed `NOT child`.
    Not(Box<Expr>),
    /// Arithmetic negation (Spark's `UnaryMinus`), printed `-child`.
    Negative(Box<Expr>),
    /// `child IS NULL`, printed `isnull(child)`; never NULL itself.
    IsNull(Box<Expr>),
    /// `child IS NOT NULL`, printed `isnotnull(child)`; never NULL itself.
    IsNotNull(Box<Expr>),
    /// `cast(child as type)`; ANSI: a value that does not fit is an error.
    Cast {
        /// The value to convert.
        child: Box<Expr>,
        /// The target type.
        to: DataType,
        /// The zone a cast between TIMESTAMP and STRING, DATE or TIMESTAMP_NTZ reads and writes
        /// wall-clock times in; None until the analyzer gives it the session's (None runs as UTC).
        zone: Option<crate::types::time_zone::Zone>,
    },
    /// `child [NOT] IN (list)`.
    InList {
        /// The value looked up.
        child: Box<Expr>,
        /// The candidate values.
        list: Vec<Expr>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `child [NOT] LIKE pattern` (pattern is a string literal after analysis).
    Like {
        /// The string matched.
        child: Box<Expr>,
        /// The pattern: `%` matches any run of characters, `_` any one character.
        pattern: Box<Expr>,
        /// `NOT LIKE`.
        negated: bool,
    },
    /// `CASE WHEN c THEN v ... ELSE e END`.
    CaseWhen {
        /// The `(WHEN condition, THEN value)` pairs, tried in order.
        branches: Vec<(Expr, Expr)>,
        /// The `ELSE` value; without one, no matching branch gives NULL.
        else_expr: Option<Box<Expr>>,
        /// Written `if(p, a, b)` (or a function Spark defines by its If: nullif, nvl2): printed
        /// `if (p) a else b` and named `(IF(p, a, b))`, as Spark's If.
        if_form: bool,
    },
    /// A function Spark defines as another expression (its `RuntimeReplaceable`: `nullif`,
    /// `nvl`, `nvl2`, `ifnull`; and `pmod`'s name): printed and named as called,
    /// `nullif(a#1, 2)`, and computed as `replacement`, its one child, which the optimizer puts
    /// in its place before any other rule (Spark's `ReplaceExpressions`).
    Replaceable {
        /// The function, as Spark prints it.
        name: &'static str,
        /// The arguments as given, for printing.
        params: Vec<Expr>,
        /// What it computes.
        replacement: Box<Expr>,
    },
    /// A built-in scalar function, printed `name(args)`.
    Function {
        /// Which function.
        func: ScalarFunc,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// An aggregate function; only valid in an Aggregate's output list.
    Aggregate {
        /// Which aggregate.
        func: AggFunc,
        /// The arguments.
        args: Vec<Expr>,
        /// `f(DISTINCT x)`: duplicates of the input are aggregated once.
        distinct: bool,
    },
    /// `child [NOT] INSET v1, v2, ...`: `OptimizeIn`'s form of a long IN list of literals;
    /// evaluates exactly as the `InList` it replaces.
    InSet {
        /// The value looked up.
        child: Box<Expr>,
        /// The distinct literal values of the list.
        values: Vec<ScalarValue>,
        /// `NOT IN`.
        negated: bool,
    },
    /// `(SELECT ...)` used as a value; one column, at most one row. Printed
    /// `scalar-subquery#id [outer references]`.
    ScalarSubquery {
        /// The subquery's plan.
        plan: SubqueryPlan,
        /// The id Spark prints after `scalar-subquery#`.
        id: ExprId,
    },
    /// A planned uncorrelated scalar subquery (physical plans only).
    ScalarSubqueryExec(std::sync::Arc<ScalarSubqueryExec>),
    /// `EXISTS (SELECT ...)` (`NOT EXISTS` is `Not(Exists)`), printed `exists#id [outer references]`.
    Exists {
        /// The subquery's plan.
        plan: SubqueryPlan,
        /// The id Spark prints after `exists#`.
        id: ExprId,
    },
    /// `child IN (SELECT ...)` or `(a, b) IN (SELECT x, y ...)` (`NOT IN` is `Not(InSubquery)`),
    /// printed `child IN (list#id [outer references])`, a row value as `named_struct(a, a#1, b, b#2)`.
    InSubquery {
        /// The values looked up: one, or a row value's (Spark's `values`).
        values: Vec<Expr>,
        /// The subquery's plan; it has one column per value.
        plan: SubqueryPlan,
        /// The id Spark prints after `list#`.
        id: ExprId,
    },
    /// A column of an enclosing query read inside a correlated subquery: `outer(o_orderkey#1)`.
    OuterReference(Attribute),
    /// A window-only function (`row_number()`, `lag(x, 1, null)`); only valid as the function
    /// of a WindowExpression.
    WindowFunction {
        /// Which function.
        func: WindowFunc,
        /// The arguments (rank functions: the window's order keys, as Spark's `rank(v#2)`).
        args: Vec<Expr>,
    },
    /// `function OVER (spec)`: a window function or an aggregate over a window of rows.
    WindowExpression {
        /// A WindowFunction or an Aggregate (an UnresolvedFunction before analysis).
        function: Box<Expr>,
        /// Partitioning, order and frame.
        spec: WindowSpec,
        /// `IGNORE NULLS` (lag, lead, first_value, last_value, nth_value).
        ignore_nulls: bool,
    },
    /// `generator AS (a, b)` before analysis (Spark's `MultiAlias`): names for the columns of
    /// a generator in a select list, printed `'posexplode('a) AS List(p, x)`.
    MultiAlias {
        /// The aliased generator call.
        child: Box<Expr>,
        /// The names, one per generated column.
        names: Vec<String>,
    },
    /// A call of a user-defined scalar function, printed `name(args)` as Spark prints a
    /// Scala UDF. Opaque to the optimizer: never folded, never pushed into a scan.
    ScalarUdf {
        /// The function.
        udf: std::sync::Arc<crate::udf::ScalarUdf>,
        /// The arguments, cast to its signature by the analyzer.
        args: Vec<Expr>,
    },
}

impl Expr {
    /// `self op other`.
    pub fn binary(self, op: BinaryOp, other: Expr) -> Expr {
        Expr::Binary { op, left: Box::new(self), right: Box::new(other) }
    }
    /// `self AND other`.
    pub fn and(self, other: Expr) -> Expr {
        self.binary(BinaryOp::And, other)
    }
    /// `self AS name` with a fresh id.
    pub fn alias(self, name: impl Into<String>) -> Expr {
        Expr::Alias { child: Box::new(self), name: name.into(), id: ExprId::next() }
    }
    /// A literal.
    pub fn lit(v: ScalarValue) -> Expr {
        Expr::Literal(v)
    }

    /// The direct children, in order.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::UnresolvedAttribute(_)
            | Expr::UnresolvedStar(_)
            | Expr::UnresolvedStarExcept { .. }
            | Expr::Attribute(_)
            | Expr::Literal(_)
            | Expr::OuterReference(_)
            | Expr::ScalarSubquery { .. }
            | Expr::ScalarSubqueryExec(_)
            | Expr::Exists { .. } => vec![],
            Expr::InSet { child, .. } => vec![child],
            Expr::InSubquery { values, .. } => values.iter().collect(),
            Expr::UnresolvedFunction { args, .. }
            | Expr::Function { args, .. }
            | Expr::Aggregate { args, .. }
            | Expr::ScalarUdf { args, .. }
            | Expr::WindowFunction { args, .. } => args.iter().collect(),
            Expr::WindowExpression { function, spec, .. } => std::iter::once(function.as_ref())
                .chain(spec.partition_by.iter())
                .chain(spec.order_by.iter().map(|o| &o.expr))
                .collect(),
            Expr::Alias { child, .. }
            | Expr::MultiAlias { child, .. }
            | Expr::Replaceable { replacement: child, .. }
            | Expr::Not(child)
            | Expr::Negative(child)
            | Expr::IsNull(child)
            | Expr::IsNotNull(child)
            | Expr::Cast { child, .. } => vec![child],
            Expr::Binary { left, right, .. } => vec![left, right],
            Expr::InList { child, list, .. } => std::iter::once(child.as_ref()).chain(list.iter()).collect(),
            Expr::Like { child, pattern, .. } => vec![child, pattern],
            Expr::CaseWhen { branches, else_expr, .. } => {
                let mut v: Vec<&Expr> = branches.iter().flat_map(|(c, r)| [c, r]).collect();
                if let Some(e) = else_expr {
                    v.push(e);
                }
                v
            }
        }
    }

    /// Rebuilds this node with each child mapped by `f` (children in the order of `children()`).
    pub fn map_children<E>(self, mut f: impl FnMut(Expr) -> Result<Expr, E>) -> Result<Expr, E> {
        let b = |e: Box<Expr>, f: &mut dyn FnMut(Expr) -> Result<Expr, E>| f(*e).map(Box::new);
        Ok(match self {
            e @ (Expr::UnresolvedAttribute(_)
            | Expr::UnresolvedStar(_)
            | Expr::UnresolvedStarExcept { .. }
            | Expr::Attribute(_)
            | Expr::Literal(_)
            | Expr::OuterReference(_)
            | Expr::ScalarSubquery { .. }
            | Expr::ScalarSubqueryExec(_)
            | Expr::Exists { .. }) => e,
            Expr::InSet { child, values, negated } => Expr::InSet { child: b(child, &mut f)?, values, negated },
            Expr::InSubquery { values, plan, id } => Expr::InSubquery { values: values.into_iter().map(&mut f).collect::<Result<_, E>>()?, plan, id },
            Expr::UnresolvedFunction { name, args, distinct } => {
                Expr::UnresolvedFunction { name, args: args.into_iter().map(&mut f).collect::<Result<_, E>>()?, distinct }
            }
            Expr::Function { func, args } => Expr::Function { func, args: args.into_iter().map(&mut f).collect::<Result<_, E>>()? },
            Expr::WindowFunction { func, args } => Expr::WindowFunction { func, args: args.into_iter().map(&mut f).collect::<Result<_, E>>()? },
            Expr::WindowExpression { function, spec, ignore_nulls } => {
                let function = b(function, &mut f)?;
                let partition_by = spec.partition_by.into_iter().map(&mut f).collect::<Result<_, E>>()?;
                let order_by = spec
                    .order_by
                    .into_iter()
                    .map(|o| Ok(SortOrder { expr: f(o.expr)?, ascending: o.ascending, nulls_first: o.nulls_first }))
                    .collect::<Result<_, E>>()?;
                Expr::WindowExpression { function, spec: WindowSpec { partition_by, order_by, frame: spec.frame }, ignore_nulls }
            }
            Expr::ScalarUdf { udf, args } => Expr::ScalarUdf { udf, args: args.into_iter().map(&mut f).collect::<Result<_, E>>()? },
            Expr::Aggregate { func, args, distinct } => {
                Expr::Aggregate { func, args: args.into_iter().map(&mut f).collect::<Result<_, E>>()?, distinct }
            }
            Expr::Alias { child, name, id } => Expr::Alias { child: b(child, &mut f)?, name, id },
            Expr::MultiAlias { child, names } => Expr::MultiAlias { child: b(child, &mut f)?, names },
            Expr::Replaceable { name, params, replacement } => Expr::Replaceable { name, params, replacement: b(replacement, &mut f)? },
            Expr::Not(c) => Expr::Not(b(c, &mut f)?),
            Expr::Negative(c) => Expr::Negative(b(c, &mut f)?),
            Expr::IsNull(c) => Expr::IsNull(b(c, &mut f)?),
            Expr::IsNotNull(c) => Expr::IsNotNull(b(c, &mut f)?),
            Expr::Cast { child, to, zone } => Expr::Cast { child: b(child, &mut f)?, to, zone },
            Expr::Binary { op, left, right } => Expr::Binary { op, left: b(left, &mut f)?, right: b(right, &mut f)? },
            Expr::InList { child, list, negated } => Expr::InList {
                child: b(child, &mut f)?,
                list: list.into_iter().map(&mut f).collect::<Result<_, E>>()?,
                negated,
            },
            Expr::Like { child, pattern, negated } => Expr::Like { child: b(child, &mut f)?, pattern: b(pattern, &mut f)?, negated },
            Expr::CaseWhen { branches, else_expr, if_form } => {
                let mut nb = Vec::with_capacity(branches.len());
                for (c, r) in branches {
                    nb.push((f(c)?, f(r)?));
                }
                let else_expr = match else_expr {
                    Some(e) => Some(b(e, &mut f)?),
                    None => None,
                };
                Expr::CaseWhen { branches: nb, else_expr, if_form }
            }
        })
    }

    /// Rewrites bottom-up: children first, then `f` on the rebuilt node.
    pub fn transform_up<E>(self, f: &mut impl FnMut(Expr) -> Result<Expr, E>) -> Result<Expr, E> {
        let node = self.map_children(|c| c.transform_up(f))?;
        f(node)
    }

    /// Rewrites top-down: `f` on this node, then on the children of the result.
    pub fn transform_down<E>(self, f: &mut impl FnMut(Expr) -> Result<Expr, E>) -> Result<Expr, E> {
        let node = f(self)?;
        node.map_children(|c| c.transform_down(f))
    }

    /// Visits every node, pre-order.
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        for c in self.children() {
            c.visit(f);
        }
    }

    /// True when any node satisfies `pred`.
    pub fn exists(&self, pred: &impl Fn(&Expr) -> bool) -> bool {
        pred(self) || self.children().into_iter().any(|c| c.exists(pred))
    }

    /// The ids of the attributes this expression reads, including the outer columns its
    /// subqueries read (Catalyst's `outerAttrs`).
    pub fn references(&self) -> BTreeSet<ExprId> {
        let mut out = BTreeSet::new();
        self.visit(&mut |e| match e {
            Expr::Attribute(a) => {
                out.insert(a.id);
            }
            Expr::ScalarSubquery { plan, .. } | Expr::Exists { plan, .. } | Expr::InSubquery { plan, .. } => {
                out.extend(plan.outer_references().iter().map(|a| a.id));
            }
            _ => {}
        });
        out
    }

    /// True when the tree holds a subquery expression.
    pub fn contains_subquery(&self) -> bool {
        self.exists(&|e| matches!(e, Expr::ScalarSubquery { .. } | Expr::ScalarSubqueryExec(_) | Expr::Exists { .. } | Expr::InSubquery { .. }))
    }

    /// The attributes this expression reads, in first-seen order, without duplicates.
    pub fn attributes(&self) -> Vec<Attribute> {
        let mut out: Vec<Attribute> = vec![];
        self.visit(&mut |e| {
            if let Expr::Attribute(a) = e {
                if !out.iter().any(|o| o.id == a.id) {
                    out.push(a.clone());
                }
            }
        });
        out
    }

    /// False when evaluating twice may give different results (rand()).
    pub fn deterministic(&self) -> bool {
        !self.exists(&|e| {
            matches!(e, Expr::Function { func: ScalarFunc::Rand, .. })
                || matches!(e, Expr::Function { func: ScalarFunc::Builtin(Builtin::More(m)), .. } if !m.deterministic())
                || matches!(e, Expr::ScalarUdf { udf, .. } if udf.volatility() == crate::udf::Volatility::Volatile)
        })
    }

    /// True when the expression has no column references and no aggregate: it can be evaluated once.
    pub fn foldable(&self) -> bool {
        match self {
            Expr::Literal(_) => true,
            Expr::Attribute(_)
            | Expr::UnresolvedAttribute(_)
            | Expr::UnresolvedStar(_)
            | Expr::UnresolvedStarExcept { .. }
            | Expr::UnresolvedFunction { .. }
            | Expr::Aggregate { .. }
            | Expr::OuterReference(_)
            | Expr::ScalarSubquery { .. }
            | Expr::ScalarSubqueryExec(_)
            | Expr::Exists { .. }
            | Expr::InSubquery { .. }
            | Expr::ScalarUdf { .. }
            | Expr::WindowFunction { .. }
            | Expr::WindowExpression { .. } => false,
            Expr::Function { func: ScalarFunc::Rand, .. } => false,
            Expr::Function { func: ScalarFunc::Builtin(Builtin::More(m)), .. } if !m.deterministic() => false,
            other => other.children().iter().all(|c| c.foldable()),
        }
    }

    /// True when the tree contains an aggregate function (an aggregate computed over a window,
    /// `sum(x) OVER (...)`, is the window's, not a group's; its arguments may hold one).
    pub fn contains_aggregate(&self) -> bool {
        match self {
            Expr::Aggregate { .. } => true,
            Expr::UnresolvedFunction { name, .. } if AggFunc::from_name(name).is_some() => true,
            Expr::WindowExpression { function, spec, .. } => {
                function.children().iter().any(|c| c.contains_aggregate())
                    || spec.partition_by.iter().any(|e| e.contains_aggregate())
                    || spec.order_by.iter().any(|o| o.expr.contains_aggregate())
            }
            other => other.children().iter().any(|c| c.contains_aggregate()),
        }
    }

    /// True when the tree contains a window expression (`f(...) OVER (...)`).
    pub fn contains_window(&self) -> bool {
        self.exists(&|e| matches!(e, Expr::WindowExpression { .. }))
    }

    /// True once no unresolved node remains.
    pub fn resolved(&self) -> bool {
        !self.exists(&|e| match e {
            Expr::UnresolvedAttribute(_) | Expr::UnresolvedStar(_) | Expr::UnresolvedStarExcept { .. } | Expr::UnresolvedFunction { .. } | Expr::MultiAlias { .. } => true,
            Expr::ScalarSubquery { plan, .. } | Expr::Exists { plan, .. } | Expr::InSubquery { plan, .. } => !plan.held().resolved(),
            _ => false,
        })
    }

    /// The output name Spark gives this expression in a select list.
    pub fn output_name(&self) -> String {
        match self {
            Expr::Alias { name, .. } => name.clone(),
            Expr::Attribute(a) => a.name.clone(),
            Expr::UnresolvedAttribute(parts) => parts.last().cloned().unwrap_or_default(),
            other => display::sql_name(other),
        }
    }

    /// Strips a top-level alias.
    pub fn unalias(&self) -> &Expr {
        match self {
            Expr::Alias { child, .. } | Expr::MultiAlias { child, .. } => child,
            e => e,
        }
    }

    /// Splits `a AND b AND c` into its conjuncts.
    pub fn split_conjunction(&self) -> Vec<&Expr> {
        match self {
            Expr::Binary { op: BinaryOp::And, left, right } => {
                let mut v = left.split_conjunction();
                v.extend(right.split_conjunction());
                v
            }
            e => vec![e],
        }
    }

    /// The conjunction of `exprs` (left-deep, as Spark's `reduceLeft(And)`), or None if empty.
    pub fn conjunction(exprs: impl IntoIterator<Item = Expr>) -> Option<Expr> {
        exprs.into_iter().reduce(|a, b| a.and(b))
    }
}

pub use display::sql_name;
