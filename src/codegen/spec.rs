//! A stage flattened for code generation: its input columns, the filter conditions in order,
//! and the sink (output columns or a partial aggregate), all as expressions over the input.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::AsArray;
use arrow::datatypes::DataType;

use crate::expr::{AggFunc, Attribute, BinaryOp, Expr, ExprId, ScalarFunc};
use crate::physical::PhysicalPlan;
use crate::types::{spark_type_name, ScalarValue};

/// One aggregate of a partial HashAggregate stage.
#[derive(Debug, Clone)]
pub struct AggSpec {
    /// The aggregate function.
    pub func: AggFunc,
    /// The argument over the stage input (None for count(*)).
    pub arg: Option<Expr>,
    /// The type of the argument.
    pub arg_type: DataType,
    /// The buffer columns the stage must produce (Spark's, as the interpreter produces them).
    pub buffer: Vec<Attribute>,
    /// A final aggregate: the input's buffer columns it merges (empty for a partial one).
    pub merge: Vec<Expr>,
}

/// What a stage does with the rows that pass its filters.
#[derive(Debug, Clone)]
pub enum StageSink {
    /// Output columns: each computed by generated code, or an input column copied as is
    /// (strings and other types generated code does not compute).
    Output {
        /// How each output column is produced, in output order.
        columns: Vec<OutputColumn>,
        /// The attributes of the stage's output (the top operator's output).
        output: Vec<Attribute>,
    },
    /// A partial aggregate: grouping keys (evaluated by the interpreter on the selected rows)
    /// and accumulators updated by generated code.
    Aggregate {
        /// The grouping keys, over the stage input.
        keys: Vec<Expr>,
        /// Whether generated code finds each row's group in the shared group table (else the
        /// interpreter's `Grouper` hashes the keys per batch and the code reads group ids).
        keys_in_code: bool,
        /// The aggregates whose buffers generated code updates.
        aggregates: Vec<AggSpec>,
        /// The partial aggregate's output: grouping attributes, then buffer columns.
        output: Vec<Attribute>,
        /// A final aggregate's operator: the merged buffers (one row per group, `output`'s
        /// columns) are finished by the interpreter's aggregator over groups, not rows.
        finish: Option<Arc<PhysicalPlan>>,
    },
}

/// One output column of an Output sink.
#[derive(Debug, Clone)]
pub enum OutputColumn {
    /// An expression over the stage input, computed by generated code.
    Computed(Expr),
    /// The input column at this index, copied as is.
    Copied(usize),
}

/// A stage ready for code generation.
#[derive(Debug, Clone)]
pub struct StageSpec {
    /// The operator the stage reads from (its input is that operator's output).
    pub input_plan: Arc<PhysicalPlan>,
    /// The stage's input columns: `input_plan`'s output.
    pub input: Vec<Attribute>,
    /// Conjuncts of every Filter, bottom-up, each over the input.
    pub conditions: Vec<Expr>,
    /// What the stage does with the rows that pass `conditions`.
    pub sink: StageSink,
    /// The broadcast hash joins the stage probes, bottom-up (the stream side's first): the
    /// sink then runs over joined rows, and expressions may read the build sides' columns.
    pub joins: Vec<JoinSpec>,
    /// A Sort topping the stage (Spark stars it): the sink's batches of a partition, sorted
    /// with Arrow's kernels.
    pub sort: Option<Vec<crate::expr::SortOrder>>,
    /// An Expand under the aggregate: the sink once per projection, each over the input.
    pub expand: Option<ExpandSpec>,
    /// `input` followed by each build side's columns: what expressions index.
    pub(super) all_columns: Vec<Attribute>,
    /// The operators below the stage's top, each with the row count that is its output.
    pub members: Vec<MemberRows>,
}

/// An operator inside a stage (below its top, whose rows are the stage's) and where its output
/// rows are counted: the stage's row count at `counter` (see [`counter`]), `times` over (an
/// Expand's projections).
#[derive(Debug, Clone)]
pub struct MemberRows {
    pub node: Arc<PhysicalPlan>,
    pub counter: usize,
    pub times: u64,
}

/// A stage's row counts, per batch: the input's rows, the rows passing the conditions below
/// every join, then per join its rows out and those passing the filters above it. Generated
/// code counts in locals and adds to the counts once per call; the runtime fills in the rest.
pub mod counter {
    /// The stage input's rows.
    pub const INPUT: usize = 0;
    /// Rows passing the conditions of the Filters below every join.
    pub const FILTERED: usize = 1;
    /// Rows out of join `k`.
    pub fn joined(k: usize) -> usize {
        2 + 2 * k
    }
    /// Rows out of join `k` passing the Filters above it.
    pub fn join_filtered(k: usize) -> usize {
        3 + 2 * k
    }
}

/// An Expand (ROLLUP, CUBE, GROUPING SETS) under a stage's partial aggregate: each row is
/// consumed once per projection, by the aggregate with the Expand's columns replaced by that
/// projection's expressions.
#[derive(Debug, Clone)]
pub struct ExpandSpec {
    /// Per projection, the sink over the stage input.
    pub sinks: Vec<StageSink>,
}

/// How a join inside a stage treats the stream rows (the stream side is always the preserved
/// one of an outer join).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StageJoinType {
    /// Every matching build row.
    Inner,
    /// Every matching build row, or the stream row with the build columns NULL.
    Outer,
    /// The stream row once if some build row matches.
    Semi,
    /// The stream row if no build row matches (a NULL key matches none).
    Anti,
    /// Spark's null-aware anti join (`NOT IN`): as `Anti`, except that a NULL build key drops
    /// every row and a NULL stream key drops its row unless the build side is empty (the
    /// table's last word says which, `BuildTable::new`).
    NullAwareAnti,
}

impl StageJoinType {
    /// Whether a stream row without a matching build row leaves (inner, semi).
    pub fn drops_unmatched(self) -> bool {
        matches!(self, StageJoinType::Inner | StageJoinType::Semi)
    }
}

/// A hash join inside a stage. The stage's input (or the join below) is its stream side; the
/// build side is run separately, hashed once into a `JoinTable`, and probed by generated code.
#[derive(Debug, Clone)]
pub struct JoinSpec {
    /// How stream rows are kept.
    pub join_type: StageJoinType,
    /// The join's extra condition (conjuncts) over the joined row: a match must pass it.
    pub condition: Vec<Expr>,
    /// Conjuncts of the Filters above this join (below the next one), over joined rows.
    pub filters: Vec<Expr>,
    /// Position of the build side's first column among `StageSpec::columns`.
    pub offset: usize,
    /// The operator producing the build side.
    pub build_plan: Arc<PhysicalPlan>,
    /// The build side's columns, indexed after the stream input's in expressions.
    pub build: Vec<Attribute>,
    /// Join keys over the stream input.
    pub stream_keys: Vec<Expr>,
    /// Join keys over the build side.
    pub build_keys: Vec<Expr>,
    /// True when the build side is broadcast to every stream partition (else partition i
    /// joins partition i).
    pub broadcast: bool,
    /// A sort-merge join: both sides sorted by the keys, each stream row's matches a range of
    /// build rows (merged per batch), not a hash chain.
    pub merge: bool,
}

impl JoinSpec {
    /// The slot words of this join's table: `JoinTable::pointers`, the NULL row's index, and
    /// for a null-aware anti join its state (`NULL_AWARE_*`).
    pub fn table_words(&self) -> usize {
        crate::hashtable::join_table::TABLE_WORDS
            + crate::hashtable::join_table::KEY_WORDS * self.stream_keys.len()
            + 1
            + usize::from(self.join_type == StageJoinType::NullAwareAnti)
    }
}

/// A null-aware anti join's state word: the build side is empty (every stream row stays).
pub const NULL_AWARE_EMPTY: u64 = 1;
/// A null-aware anti join's state word: a build key is NULL (no stream row stays).
pub const NULL_AWARE_NULL_KEY: u64 = 2;

/// How a string literal is matched against a column value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StringMatch {
    /// The value equals the literal (`= 'ab'`, `IN`, `LIKE 'ab'`).
    Exact,
    /// The value starts with the literal (`LIKE 'ab%'`).
    Prefix,
    /// The value ends with the literal (`LIKE '%ab'`).
    Suffix,
    /// `LIKE '%'`: any non-NULL value.
    Any,
    /// A LIKE pattern of literal pieces and `%` (`'%ab%'`, `'a%b%c'`); the bytes are the whole
    /// pattern. Pieces are matched leftmost-first, which is exact when `%` is the only wildcard.
    Pattern,
    /// The value sorts before the literal, byte by byte (`<`; `>=` when negated).
    Less,
    /// The value sorts after the literal (`>`; `<=` when negated).
    Greater,
}

/// A predicate on a string column that generated code evaluates inline: `col = 'x'`,
/// `col <> 'x'`, `col < 'x'` (and the other orderings), `col IN ('a', 'b')`, and `col LIKE` a
/// pattern made of literal pieces and `%`.
#[derive(Debug, Clone)]
pub struct StringPredicate {
    /// The string column tested.
    pub column: Attribute,
    /// The predicate tests the value's first this many characters, not the whole value
    /// (`substring(col, 1, n)`).
    pub prefix_chars: Option<u32>,
    /// Alternatives (OR-ed), each bytes and how they match.
    pub alternatives: Vec<(Vec<u8>, StringMatch)>,
    /// Whether the result is negated (`<>`, `NOT IN`, `NOT LIKE`).
    pub negated: bool,
}

/// Longest literal matched inline, byte by byte.
pub const MAX_INLINE_STRING: usize = 32;

fn string_literal(e: &Expr) -> Option<&str> {
    match e {
        Expr::Literal(ScalarValue::Utf8(s)) if s.len() <= MAX_INLINE_STRING => Some(s),
        _ => None,
    }
}

pub(super) fn string_column(e: &Expr) -> Option<&Attribute> {
    match e {
        Expr::Attribute(a) if a.data_type == DataType::Utf8 => Some(a),
        _ => None,
    }
}

/// Longest `substring(col, 1, n)` prefix generated code cuts (one unrolled step a character).
pub const MAX_PREFIX_CHARS: i32 = 16;

/// A string column, or the first characters of one (`substring(col, 1, n)`, also from
/// position 0, which Spark reads as 1): the column and the character count.
fn string_operand(e: &Expr) -> Option<(&Attribute, Option<u32>)> {
    if let Expr::Function { func: ScalarFunc::Substring, args } = e {
        return match args.as_slice() {
            [c, Expr::Literal(ScalarValue::Int32(0 | 1)), Expr::Literal(ScalarValue::Int32(n))] if (0..=MAX_PREFIX_CHARS).contains(n) => {
                Some((string_column(c)?, Some(*n as u32)))
            }
            _ => None,
        };
    }
    Some((string_column(e)?, None))
}

/// Recognizes the string predicates generated code handles.
pub fn string_predicate(e: &Expr) -> Option<StringPredicate> {
    match e {
        Expr::Binary { op: op @ (BinaryOp::Eq | BinaryOp::NotEq), left, right } => {
            let ((col, prefix_chars), lit) = match (string_operand(left), string_literal(right)) {
                (Some(c), Some(l)) => (c, l),
                _ => (string_operand(right)?, string_literal(left)?),
            };
            Some(StringPredicate { column: col.clone(), prefix_chars, alternatives: vec![(lit.as_bytes().to_vec(), StringMatch::Exact)], negated: *op == BinaryOp::NotEq })
        }
        // Spark's UTF8String order is the bytes' order.
        Expr::Binary { op: op @ (BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq), left, right } => {
            let ((col, prefix_chars), lit, op) = match (string_operand(left), string_literal(right)) {
                (Some(c), Some(l)) => (c, l, *op),
                _ => (string_operand(right)?, string_literal(left)?, op.flip()),
            };
            let (kind, negated) = match op {
                BinaryOp::Lt => (StringMatch::Less, false),
                BinaryOp::GtEq => (StringMatch::Less, true),
                BinaryOp::Gt => (StringMatch::Greater, false),
                _ => (StringMatch::Greater, true),
            };
            Some(StringPredicate { column: col.clone(), prefix_chars, alternatives: vec![(lit.as_bytes().to_vec(), kind)], negated })
        }
        Expr::InList { child, list, negated } => {
            let (col, prefix_chars) = string_operand(child)?;
            let alternatives = list.iter().map(|l| string_literal(l).map(|s| (s.as_bytes().to_vec(), StringMatch::Exact))).collect::<Option<Vec<_>>>()?;
            Some(StringPredicate { column: col.clone(), prefix_chars, alternatives, negated: *negated })
        }
        Expr::Like { child, pattern, negated } => {
            let (col, prefix_chars) = string_operand(child)?;
            let p = string_literal(pattern)?;
            if p.contains(['_', '\\']) {
                return None;
            }
            let inner = p.trim_start_matches('%').trim_end_matches('%');
            if inner.contains('%') {
                return Some(StringPredicate { column: col.clone(), prefix_chars, alternatives: vec![(p.as_bytes().to_vec(), StringMatch::Pattern)], negated: *negated });
            }
            let (starts, ends) = (p.starts_with('%'), p.ends_with('%') && p.len() > 1);
            let kind = match (starts, ends) {
                _ if inner.is_empty() && starts => StringMatch::Any,
                (false, false) => StringMatch::Exact,
                (false, true) => StringMatch::Prefix,
                (true, false) => StringMatch::Suffix,
                (true, true) => StringMatch::Pattern,
            };
            if kind == StringMatch::Pattern {
                return Some(StringPredicate { column: col.clone(), prefix_chars, alternatives: vec![(p.as_bytes().to_vec(), kind)], negated: *negated });
            }
            Some(StringPredicate { column: col.clone(), prefix_chars, alternatives: vec![(inner.as_bytes().to_vec(), kind)], negated: *negated })
        }
        _ => None,
    }
}

/// `isnotnull(column)`: true of every row of a batch whose columns have no NULLs.
pub fn is_column_null_test(e: &Expr) -> bool {
    matches!(e, Expr::IsNotNull(a) if matches!(a.as_ref(), Expr::Attribute(_)))
}

/// Types generated code holds in registers.
pub fn supported_type(t: &DataType) -> bool {
    matches!(t, DataType::Boolean | DataType::Int32 | DataType::Int64 | DataType::Date32 | DataType::Float64)
        || matches!(t, DataType::Decimal128(p, _) if *p <= 38)
}

/// The register type a column of `t` is loaded as, for the types generated code reads only
/// widened: tinyint and smallint as int, float as double. Only a cast of such a column to a
/// wider type or a comparison with another such column or literal compiles (`cast(a as int) > 0`,
/// `c > 1.0F`); arithmetic at the narrow width, whose overflow Spark checks at that width, runs
/// interpreted.
pub fn widened_on_load(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Int8 | DataType::Int16 => Some(DataType::Int32),
        DataType::Float32 => Some(DataType::Float64),
        _ => None,
    }
}

/// True for a cast of a widened-on-load column to a type its loaded value converts to exactly.
fn widening_cast(e: &Expr) -> bool {
    let Expr::Cast { child, to, .. } = e else { return false };
    let Expr::Attribute(a) = child.as_ref() else { return false };
    match widened_on_load(&a.data_type) {
        Some(DataType::Int32) => matches!(to, DataType::Int32 | DataType::Int64 | DataType::Float64),
        Some(DataType::Float64) => *to == DataType::Float64,
        _ => false,
    }
}

/// True for a comparison of widened-on-load columns and literals: comparing the widened values
/// gives the narrow comparison's answer (NaN included).
fn widened_comparison(e: &Expr) -> bool {
    let Expr::Binary { op, left, right } = e else { return false };
    let widened = |x: &Expr| match x {
        Expr::Attribute(a) => widened_on_load(&a.data_type).is_some(),
        Expr::Literal(v) => widened_on_load(&v.data_type()).is_some(),
        _ => false,
    };
    op.is_comparison() && widened(left) && widened(right)
}

/// Why generated code cannot evaluate `e`, or None when it can.
pub fn unsupported_reason(e: &Expr) -> Option<String> {
    if string_predicate(e).is_some() || widening_cast(e) || widened_comparison(e) {
        return None;
    }
    // A NULL test reads only the validity bitmap, whatever the column's type.
    if let Expr::IsNull(c) | Expr::IsNotNull(c) = e {
        if matches!(c.as_ref(), Expr::Attribute(_)) {
            return None;
        }
    }
    // length() counts a string column's characters inline.
    if let Expr::Function { func: ScalarFunc::Length, args } = e {
        if let [a] = args.as_slice() {
            if string_column(a).is_some() {
                return None;
            }
        }
    }
    // The runtime filter's probe: xxhash64 and the filter's word test are emitted inline.
    if let Expr::Function { func: ScalarFunc::MightContain, args } = e {
        return match bloom_probe(args) {
            Some(key) => unsupported_reason(key),
            None => Some("might_contain of a key that is not an integer, a bigint or a date, or of a filter that is not a planned subquery".into()),
        };
    }
    let t = match e.data_type() {
        Ok(t) => t,
        Err(err) => return Some(err.to_string()),
    };
    let type_ok = supported_type(&t) || t == DataType::Null;
    let own = match e {
        // Runs before the stage: generated code reads its value as a constant.
        Expr::Attribute(_) | Expr::Literal(_) | Expr::Alias { .. } | Expr::Replaceable { .. } | Expr::ScalarSubqueryExec(_) => None,
        Expr::Binary { op, left, right } => {
            let lt = left.data_type().ok();
            let dec = |t: &Option<DataType>| matches!(t, Some(DataType::Decimal128(..)));
            match op {
                // Spark scales the dividend past 18 digits (the result scale is at least 6), so
                // exact HALF_UP division needs an i128 (or wider) divide, which Cranelift lowers
                // to a library call per value: it stays in the interpreter.
                BinaryOp::Divide | BinaryOp::Modulo | BinaryOp::IntDivide if dec(&lt) => Some("decimal division".to_string()),
                BinaryOp::Modulo | BinaryOp::IntDivide => Some(format!("operator {}", op.symbol())),
                BinaryOp::Divide if lt != Some(DataType::Float64) => Some("division of non-doubles".to_string()),
                BinaryOp::Multiply if dec(&lt) => match (left.data_type(), right.data_type(), &t) {
                    (Ok(DataType::Decimal128(_, s1)), Ok(DataType::Decimal128(_, s2)), DataType::Decimal128(_, s)) if s1 + s2 == *s => None,
                    _ => Some("decimal multiplication that rounds".to_string()),
                },
                _ => None,
            }
        }
        Expr::Not(_) | Expr::Negative(_) | Expr::IsNull(_) | Expr::IsNotNull(_) => None,
        Expr::Cast { child, to, .. } => {
            let from = child.data_type().ok();
            match (from.as_ref(), to) {
                (Some(f), t) if f == t => None,
                (Some(DataType::Int32 | DataType::Int64), DataType::Int64 | DataType::Float64) => None,
                (Some(DataType::Int32 | DataType::Int64), DataType::Decimal128(..)) => None,
                (Some(DataType::Decimal128(_, s1)), DataType::Decimal128(_, s2)) if s2 >= s1 => None,
                // Narrowing and truncating casts check their range inline (ANSI: out of range
                // runs the interpreter, which reports the error); rounding is HALF_UP in i64.
                (Some(DataType::Int64), DataType::Int32) | (Some(DataType::Float64), DataType::Int32 | DataType::Int64) => None,
                (Some(DataType::Decimal128(p, _)), DataType::Int32 | DataType::Int64 | DataType::Decimal128(..)) if *p <= 18 => None,
                // Exact as the interpreter's when the scale divides exactly as a double.
                (Some(DataType::Decimal128(_, s)), DataType::Float64) if (0..=22).contains(s) => None,
                (Some(DataType::Null), _) => None,
                (f, t) => Some(format!("cast from {} to {}", f.map(|f| spark_type_name(f)).unwrap_or_default(), spark_type_name(t))),
            }
        }
        Expr::InList { list, .. } => list.iter().all(|l| matches!(l, Expr::Literal(_))).then_some(()).map_or(Some("IN with non-literal values".into()), |_| None),
        Expr::CaseWhen { .. } => None,
        Expr::Function { func: ScalarFunc::Abs, .. } => None,
        // Runs its operation: a row the operation fails on hands the batch to the interpreter,
        // which gives the legacy value.
        Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::Legacy)), .. } => None,
        Expr::Function { func, .. } => Some(format!("function {}", func.name())),
        Expr::Like { .. } => Some("LIKE with '_', an escape or a pattern that is not a short literal".into()),
        Expr::InSet { .. } => Some("INSET".into()),
        Expr::ScalarSubquery { .. } | Expr::Exists { .. } | Expr::InSubquery { .. } | Expr::OuterReference(_) => {
            Some("a subquery expression".into())
        }
        Expr::Aggregate { .. } => Some("an aggregate inside an expression".into()),
        Expr::WindowFunction { .. } | Expr::WindowExpression { .. } => Some("a window function inside an expression".into()),
        // A UDF is Rust called over arrays: its stage runs interpreted (and is counted so).
        Expr::ScalarUdf { udf, .. } => Some(format!("user-defined function {}", udf.name())),
        Expr::UnresolvedAttribute(_) | Expr::UnresolvedStar(_) | Expr::UnresolvedStarExcept { .. } | Expr::UnresolvedFunction { .. } | Expr::MultiAlias { .. } => Some("an unresolved expression".into()),
    };
    if let Some(r) = own {
        return Some(r);
    }
    if !type_ok {
        return Some(format!("values of type {}", crate::types::spark_type_name(&t)));
    }
    if let Expr::Literal(ScalarValue::IntervalMicros(..) | ScalarValue::IntervalMonths(..)) = e {
        return Some("interval values".into());
    }
    e.children().into_iter().find_map(unsupported_reason)
}

/// Replaces attributes by the expressions (over the stage input) they stand for.
pub(super) fn substitute(e: &Expr, env: &HashMap<ExprId, Expr>) -> Expr {
    let r: Result<Expr, std::convert::Infallible> = e.clone().transform_up(&mut |x| match &x {
        Expr::Attribute(a) => Ok(env.get(&a.id).cloned().unwrap_or(x)),
        Expr::Alias { child, .. } => Ok(child.as_ref().clone()),
        // An INSET evaluates as the IN list it came from: compared inline, value by value.
        Expr::InSet { child, values, negated } => {
            Ok(Expr::InList { child: child.clone(), list: values.iter().cloned().map(Expr::Literal).collect(), negated: *negated })
        }
        _ => Ok(x),
    });
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

impl StageSpec {
    /// What consumes each (joined) row, in order: the sink, or under an Expand the sink once per
    /// projection.
    pub fn sinks(&self) -> &[StageSink] {
        match &self.expand {
            Some(x) => &x.sinks,
            None => std::slice::from_ref(&self.sink),
        }
    }

    /// Rows the sink consumes per (joined) row: the Expand's projections, or 1.
    pub fn rows_per_row(&self) -> usize {
        self.sinks().len()
    }

    /// How many row counts the stage keeps (see [`counter`]).
    pub fn counters(&self) -> usize {
        counter::joined(self.joins.len())
    }

    /// The count of the rows that reach the sink (the last join's, or the filter's): the rows
    /// the functions emit, which the runtime counts.
    pub fn sink_counter(&self) -> usize {
        match self.joins.last() {
            None => counter::FILTERED,
            Some(j) if j.filters.is_empty() => counter::joined(self.joins.len() - 1),
            Some(_) => counter::join_filtered(self.joins.len() - 1),
        }
    }

    /// The counts generated code keeps in the row loop: each join's rows, and those passing
    /// the filters above it where it has some, short of the sink's (counted by the runtime).
    pub fn loop_counters(&self) -> Vec<usize> {
        let sink = self.sink_counter();
        let mut out = vec![];
        for (k, j) in self.joins.iter().enumerate() {
            out.push(counter::joined(k));
            if !j.filters.is_empty() {
                out.push(counter::join_filtered(k));
            }
        }
        out.retain(|c| *c != sink);
        out
    }

    /// The joins the stage probes, bottom-up.
    pub fn joins(&self) -> &[JoinSpec] {
        &self.joins
    }

    /// Every condition on joined rows: the joins' extra conditions and the Filters above them.
    pub fn join_conditions(&self) -> impl Iterator<Item = &Expr> {
        self.joins.iter().flat_map(|j| j.condition.iter().chain(&j.filters))
    }

    /// The joins every row the stage's filter keeps reaches: those up to and including the
    /// first that drops the stream rows without a match (inner, semi); an anti or outer join
    /// before it keeps its rows (most of them). Work done for all of a batch's selected rows
    /// before the probe pays for these joins only (TPC-H Q18's sort-merge semi join keeps 57
    /// of 1.5 million orders for the customer join after it).
    pub fn joins_reached_by_all(&self) -> impl Iterator<Item = (usize, &JoinSpec)> {
        let first_dropping = self.joins.iter().position(|j| j.join_type.drops_unmatched());
        self.joins.iter().enumerate().take(first_dropping.map_or(self.joins.len(), |k| k + 1))
    }

    /// The first join that drops the stream rows without a match, when it is a hash join whose
    /// stream keys read the stage's input only (not an earlier join's build columns): the
    /// filter then tests each input row against its table's Bloom bits. A row it drops no
    /// join can keep (joins before it pass their stream rows' columns on unchanged; an anti or
    /// outer join first, as TPC-H Q16's, does not stop the test).
    pub fn bloom_join(&self) -> Option<(usize, &JoinSpec)> {
        self.joins_reached_by_all()
            .last()
            .filter(|(k, j)| !j.merge && j.join_type.drops_unmatched() && (*k == 0 || self.keys_read_input(j)))
    }

    /// Whether join `j`'s stream keys read the stage's input columns only (not an earlier
    /// join's build columns): they can be computed for a batch's rows before any probe.
    pub fn keys_read_input(&self, j: &JoinSpec) -> bool {
        j.stream_keys.iter().flat_map(|e| e.attributes()).all(|a| self.input.iter().any(|i| i.id == a.id))
    }

    /// The later joins whose tables join `k`'s build rows must match (`interpreted::join::rows_matching`):
    /// broadcast inner or semi joins whose stream keys read only `k`'s build columns, when `k`
    /// is a broadcast inner join (its build columns are then a real row's, never NULL-extended).
    pub fn matching_joins(&self, k: usize) -> Vec<usize> {
        let Some(j) = self.joins.get(k).filter(|j| j.broadcast && j.join_type == StageJoinType::Inner) else { return vec![] };
        (k + 1..self.joins.len())
            .filter(|m| {
                let later = &self.joins[*m];
                later.broadcast
                    && later.join_type.drops_unmatched()
                    && crate::physical::keys_read_only(&later.stream_keys, &j.build)
            })
            .collect()
    }

    /// True when the stage compiles a filter: it has conditions, or a join its filter tests.
    pub fn has_filter(&self) -> bool {
        !self.conditions.is_empty() || self.bloom_join().is_some()
    }

    /// Whether the filter can drop a row of a batch without NULLs: not when its conditions
    /// only test columns for NULL (Spark's inferred `isnotnull(..)`), true of every such row.
    pub fn has_filter_without_nulls(&self) -> bool {
        self.bloom_join().is_some() || self.conditions.iter().any(|c| !is_column_null_test(c))
    }

    /// True when generated code groups the rows (a keyed aggregate whose keys it computes).
    pub fn groups_in_code(&self) -> bool {
        matches!(self.sink, StageSink::Aggregate { keys_in_code: true, .. })
    }

    /// The columns expressions read: the stream input, then each build side's.
    pub fn columns(&self) -> &[Attribute] {
        &self.all_columns
    }

    /// A key identifying the stage's generated code: the plan shape and types, with columns
    /// named by input position so the same query planned again (new ExprIds) hits the cache.
    pub fn cache_key(&self) -> String {
        self.cache_key_and_filters().0
    }

    /// [`StageSpec::cache_key`], and the Bloom filters the code reads in place: the key names
    /// each by its length and a hash of its bits, so the same query run again (its filter
    /// built again, at another address, with the same bits) finds its code; the cache then
    /// checks the bits are the same and keeps the filters the code reads alive with it.
    pub fn cache_key_and_filters(&self) -> (String, Vec<arrow::array::ArrayRef>) {
        let filters = std::cell::RefCell::new(vec![]);
        let columns = self.columns();
        let position: HashMap<ExprId, usize> = columns.iter().enumerate().map(|(i, a)| (a.id, i)).collect();
        let norm = |e: &Expr| -> Expr {
            let r: Result<Expr, std::convert::Infallible> = e.clone().transform_up(&mut |x| match &x {
                Expr::Attribute(a) => Ok(Expr::Attribute(Attribute {
                    name: String::new(),
                    id: ExprId(position.get(&a.id).map_or(u64::MAX, |p| *p as u64)),
                    data_type: a.data_type.clone(),
                    nullable: a.nullable,
                    qualifier: vec![],
                })),
                // A Bloom filter is read in place: its size and bits make the code.
                Expr::ScalarSubqueryExec(s) if s.data_type == DataType::Binary => {
                    let filter = crate::expr::bloom::filter_bytes(&x).ok().flatten();
                    let bits = filter.as_ref().map(|a| {
                        let v = a.as_binary::<i32>().value(0);
                        (v.len(), crate::common::hash::xxh64_bytes_seeded(v, 0))
                    });
                    filters.borrow_mut().extend(filter);
                    Ok(Expr::Literal(ScalarValue::Utf8(format!("filter {bits:?}"))))
                }
                // Code is generated for the subquery's value: the same value, the same code.
                Expr::ScalarSubqueryExec(s) => Ok(Expr::Literal(subquery_constant(s))),
                _ => Ok(x),
            });
            match r {
                Ok(v) => v,
                Err(never) => match never {},
            }
        };
        let mut key = format!("{:?}|", columns.iter().map(|a| (&a.data_type, a.nullable)).collect::<Vec<_>>());
        // A join stage and a join-free stage over the same columns (a Project over a
        // SortMergeJoin's output) generate different code.
        for j in &self.joins {
            let keys = |ks: &[Expr]| ks.iter().map(norm).collect::<Vec<_>>();
            key.push_str(&format!(
                "join {:?} at {} keys {:?} = {:?} broadcast {} merge {} on {:?} then {:?};",
                j.join_type,
                j.offset,
                keys(&j.stream_keys),
                keys(&j.build_keys),
                j.broadcast,
                j.merge,
                keys(&j.condition),
                keys(&j.filters),
            ));
        }
        // The sort runs outside the generated code; the code is the same with or without it.
        for c in &self.conditions {
            key.push_str(&format!("{:?};", norm(c)));
        }
        for sink in self.sinks() {
            sink_key(sink, &norm, &mut key);
        }
        (key, filters.into_inner())
    }
}

/// A sink's part of `StageSpec::cache_key` (columns normalized by `norm`).
fn sink_key(sink: &StageSink, norm: &dyn Fn(&Expr) -> Expr, key: &mut String) {
    match sink {
        StageSink::Output { columns, .. } => {
            for c in columns {
                match c {
                    OutputColumn::Computed(e) => key.push_str(&format!("out {:?};", norm(e))),
                    OutputColumn::Copied(i) => key.push_str(&format!("copy {i};")),
                }
            }
        }
        StageSink::Aggregate { keys, keys_in_code, aggregates, finish, .. } => {
            key.push_str(&format!("final {};", finish.is_some()));
            key.push_str(&format!("keys {} {keys_in_code};", keys.len()));
            if *keys_in_code {
                for k in keys {
                    key.push_str(&format!("key {:?};", norm(k)));
                }
            }
            for a in aggregates {
                key.push_str(&format!("{:?} {:?} {:?};", a.func, a.arg.as_ref().map(norm), a.merge.iter().map(norm).collect::<Vec<_>>()));
            }
        }
    }
}

/// How a stage runs a hash join of this type building this side; None when the build side is
/// the preserved one (or both are).
pub fn stage_join_type(t: crate::plan::JoinType, build: crate::physical::BuildSide) -> Option<StageJoinType> {
    use crate::physical::BuildSide::*;
    use crate::plan::JoinType::*;
    Some(match (t, build) {
        (Inner, _) => StageJoinType::Inner,
        (LeftOuter, BuildRight) | (RightOuter, BuildLeft) => StageJoinType::Outer,
        (LeftSemi, BuildRight) => StageJoinType::Semi,
        (LeftAnti, BuildRight) => StageJoinType::Anti,
        _ => return None,
    })
}

/// A join's build side columns, which expressions above the join may read (nullable when
/// null-extended rows read NULL from them).
pub(super) fn build_columns(build_plan: &Arc<PhysicalPlan>, join_type: StageJoinType, env: &mut HashMap<ExprId, Expr>) -> Vec<Attribute> {
    let mut build = build_plan.output();
    if join_type == StageJoinType::Outer {
        build.iter_mut().for_each(|a| a.nullable = true);
    }
    for a in &build {
        env.insert(a.id, a.expr());
    }
    build
}

/// A join's extra condition as conjuncts over the stage input and the build sides.
pub(super) fn join_condition(condition: Option<&Expr>, env: &HashMap<ExprId, Expr>) -> Result<Vec<Expr>, String> {
    let mut extra = vec![];
    for c in condition.map(|c| c.split_conjunction()).unwrap_or_default() {
        let c = substitute(c, env);
        if let Some(r) = unsupported_reason(&c) {
            return Err(format!("{r} in {c}"));
        }
        extra.push(c);
    }
    Ok(extra)
}

/// Position of a column among the stream input then the build sides' columns.
pub(super) fn column_index(columns: &[Attribute], id: ExprId) -> Option<usize> {
    columns.iter().position(|c| c.id == id)
}




/// might_contain(filter, xxhash64(key))'s key, when generated code can hash it (an integer,
/// a bigint or a date) and the filter is a planned subquery: the code reads its bits in place,
/// and the subquery's value outlives the stage (a constant's array would be made anew, and
/// freed, while compiling).
pub(crate) fn bloom_probe(args: &[Expr]) -> Option<&Expr> {
    let [filter, Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::XxHash64)), args: keys }] = args else { return None };
    let [key] = keys.as_slice() else { return None };
    let hashable = matches!(key.data_type().ok()?, DataType::Int32 | DataType::Int64 | DataType::Date32);
    (hashable && matches!(filter, Expr::ScalarSubqueryExec(_))).then_some(key)
}

/// The constant generated code reads for a planned scalar subquery: its value, or NULL when
/// it has not run yet (EXPLAIN CODEGEN before the query runs; execution runs it first).
pub(crate) fn subquery_constant(s: &crate::expr::ScalarSubqueryExec) -> ScalarValue {
    crate::expr::eval::subquery_value(s).unwrap_or_else(|_| ScalarValue::Null(s.data_type.clone()))
}
