//! Spark's other built-in aggregates (statistical, first/last, boolean, max_by/min_by, exact
//! percentiles), each described once here: names, argument count and casts, result type and
//! buffer. Their accumulators are `exec/interpreted/stat_accumulators.rs`; generated code does
//! not have them, so a stage holding one runs interpreted (EXPLAIN CODEGEN says so).

use arrow::datatypes::DataType;

use super::Expr;
use crate::error::{KilnError, Result};
use crate::types::{is_numeric, is_string, ScalarValue};

/// Which aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AggKind {
    VarSamp,
    VarPop,
    StddevSamp,
    StddevPop,
    Corr,
    CovarPop,
    CovarSamp,
    /// regr_sxx(y, x) / regr_syy / regr_sxy / regr_slope / regr_intercept / regr_r2: Spark's
    /// linear regression aggregates over the pairs where neither is NULL (corr's buffer).
    RegrSxx,
    RegrSyy,
    RegrSxy,
    RegrSlope,
    RegrIntercept,
    RegrR2,
    /// mode(x[, deterministic]) / mode() WITHIN GROUP (ORDER BY x \[DESC\]): the most frequent
    /// non-NULL value; ties (`param`): 0 any, 1 the lowest, 2 the highest.
    Mode,
    /// bit_and / bit_or / bit_xor(x) over an integral x, in x's type.
    BitAnd,
    BitOr,
    BitXor,
    /// first(x[, ignoreNulls]) / first_value / any_value.
    First { ignore_nulls: bool },
    /// last(x[, ignoreNulls]) / last_value.
    Last { ignore_nulls: bool },
    BoolAnd,
    BoolOr,
    CountIf,
    MaxBy,
    MinBy,
    /// percentile(x, p) / median(x) / percentile_cont: linear interpolation between ranks.
    Percentile,
    /// percentile_disc: the first value whose cumulative distribution reaches p.
    PercentileDisc,
    /// percentile_approx / approx_percentile(x, p[, accuracy]): a value of the input at rank
    /// ceil(p * n), in the input's type. Spark's GK summary is exact while the rows fit its
    /// accuracy (10,000 by default); kiln's is always exact.
    PercentileApprox,
    /// The value of the one row of a scalar subquery that has no aggregate; more than one row
    /// is SCALAR_SUBQUERY_TOO_MANY_ROWS (planned by the subquery rewrite, not callable by name).
    SingleValue,
    /// skewness(x) / kurtosis(x): Spark's CentralMomentAgg of order 3 and 4 (population moments).
    Skewness,
    Kurtosis,
    /// collect_list(x) / array_agg(x): the non-NULL values as an array, in input order.
    CollectList,
    /// collect_set(x): the distinct non-NULL values as an array (order unspecified, as Spark's).
    CollectSet,
    /// listagg / string_agg(x[, delimiter]) [WITHIN GROUP (ORDER BY ...)]: the non-NULL values
    /// concatenated; the order keys follow the delimiter among the arguments, their directions
    /// are `param` (bit 2k: descending, bit 2k+1: NULLS FIRST).
    ListAgg,
    /// approx_count_distinct(x[, relativeSD]): Spark's HyperLogLog++ (`param`: relativeSD bits).
    ApproxCountDistinct,
    /// histogram_numeric(x, nb): Spark's (Hive's) NumericHistogram of at most nb bins (`param`),
    /// an array of struct<x: x's type, y: double> (bin centres and heights).
    HistogramNumeric,
    /// try_sum(x): sum's result type, NULL instead of an overflow error.
    TrySum,
    /// try_avg(x): avg's result type, NULL where the sum overflows (Spark's TryAverage).
    TryAvg,
    /// sum(x) under `spark.sql.ansi.enabled=false` (Spark's Sum in legacy mode): a bigint sum
    /// wraps as Java's long, a decimal one out of its precision is NULL. Made by the analyzer's
    /// legacy rewrite, printed `sum`, not callable by name.
    LegacySum,
    /// bloom_filter_agg(xxhash64(key), estimatedNumItems, numBits): the runtime filter's
    /// Bloom filter (`expr/bloom.rs`) over the hashes; planted by `InjectRuntimeFilter`, not
    /// callable by name. `param`: the items (high half) and bits (low half).
    BloomFilter,
}

impl AggKind {
    /// regr_sxx ... regr_r2 (regr_count/avgx/avgy are rewritten to count and avg).
    pub fn is_regression(self) -> bool {
        matches!(self, AggKind::RegrSxx | AggKind::RegrSyy | AggKind::RegrSxy | AggKind::RegrSlope | AggKind::RegrIntercept | AggKind::RegrR2)
    }
}

/// A built-in aggregate and the name it was called by (Spark prints the alias: `stddev(x)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AggBuiltin {
    /// The function.
    pub kind: AggKind,
    /// The name as Spark prints it.
    pub name: &'static str,
    /// A percentile's fraction, as f64 bits (the final aggregate has no arguments to read).
    pub param: u64,
}

const NAMES: &[(&str, AggKind)] = &[
    ("var_samp", AggKind::VarSamp),
    ("variance", AggKind::VarSamp),
    ("var_pop", AggKind::VarPop),
    ("stddev_samp", AggKind::StddevSamp),
    ("stddev", AggKind::StddevSamp),
    ("std", AggKind::StddevSamp),
    ("stddev_pop", AggKind::StddevPop),
    ("corr", AggKind::Corr),
    ("covar_pop", AggKind::CovarPop),
    ("covar_samp", AggKind::CovarSamp),
    ("regr_sxx", AggKind::RegrSxx),
    ("regr_syy", AggKind::RegrSyy),
    ("regr_sxy", AggKind::RegrSxy),
    ("regr_slope", AggKind::RegrSlope),
    ("regr_intercept", AggKind::RegrIntercept),
    ("regr_r2", AggKind::RegrR2),
    ("mode", AggKind::Mode),
    ("bit_and", AggKind::BitAnd),
    ("bit_or", AggKind::BitOr),
    ("bit_xor", AggKind::BitXor),
    ("first", AggKind::First { ignore_nulls: false }),
    ("first_value", AggKind::First { ignore_nulls: false }),
    ("any_value", AggKind::First { ignore_nulls: false }),
    ("last", AggKind::Last { ignore_nulls: false }),
    ("last_value", AggKind::Last { ignore_nulls: false }),
    ("bool_and", AggKind::BoolAnd),
    ("every", AggKind::BoolAnd),
    ("bool_or", AggKind::BoolOr),
    ("any", AggKind::BoolOr),
    ("some", AggKind::BoolOr),
    ("count_if", AggKind::CountIf),
    ("max_by", AggKind::MaxBy),
    ("min_by", AggKind::MinBy),
    ("percentile", AggKind::Percentile),
    ("median", AggKind::Percentile),
    ("percentile_cont", AggKind::Percentile),
    ("percentile_disc", AggKind::PercentileDisc),
    ("percentile_approx", AggKind::PercentileApprox),
    ("approx_percentile", AggKind::PercentileApprox),
    ("skewness", AggKind::Skewness),
    ("kurtosis", AggKind::Kurtosis),
    ("collect_list", AggKind::CollectList),
    ("array_agg", AggKind::CollectList),
    ("collect_set", AggKind::CollectSet),
    ("listagg", AggKind::ListAgg),
    ("string_agg", AggKind::ListAgg),
    ("approx_count_distinct", AggKind::ApproxCountDistinct),
    ("histogram_numeric", AggKind::HistogramNumeric),
    ("try_sum", AggKind::TrySum),
    ("try_avg", AggKind::TryAvg),
];

/// How the parser marks `listagg(...) WITHIN GROUP (ORDER BY ...)` in the function name: the
/// name, this marker, then `A`/`D` and `F`/`L` per key (the keys follow the other arguments).
pub const WITHIN_GROUP_MARKER: &str = "#within_group:";

/// Spark's default relative standard deviation of approx_count_distinct.
pub const DEFAULT_RELATIVE_SD: f64 = 0.05;

/// The sum try_avg keeps (Spark's Average's sumDataType).
pub(crate) fn try_avg_sum_type(input: &DataType) -> DataType {
    match input {
        DataType::Decimal128(..) => super::aggregate_result_type(super::AggFunc::Sum, input),
        _ => DataType::Float64,
    }
}

fn mismatch(name: &str, e: &Expr, ordinal: usize, wanted: &str, t: &DataType) -> KilnError {
    KilnError::analysis(
        "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
        format!(
            "Cannot resolve \"{name}({e})\" due to data type mismatch: the {} parameter requires the {wanted} type, however \"{e}\" has the type \"{}\".",
            ["first", "second", "third"].get(ordinal).unwrap_or(&"next"),
            crate::types::sql_type_name(t),
            e = super::sql_name(e),
        ),
    )
}

impl AggBuiltin {
    /// `single_value(x)`, which the scalar subquery rewrite plans.
    pub fn single_value() -> AggBuiltin {
        AggBuiltin { kind: AggKind::SingleValue, name: "single_value", param: 0 }
    }

    /// `bloom_filter_agg` sized for `items` items in `bits` bits (both capped as Spark's).
    pub fn bloom_filter(items: u64, bits: u64) -> AggBuiltin {
        let bits = bits.clamp(1, super::bloom::MAX_NUM_BITS);
        AggBuiltin { kind: AggKind::BloomFilter, name: "bloom_filter_agg", param: items.min(u32::MAX as u64) << 32 | bits }
    }

    /// A Bloom filter's (estimated items, bits).
    pub fn bloom_size(&self) -> (u64, u64) {
        (self.param >> 32, self.param & u32::MAX as u64)
    }

    /// Looks an aggregate up by name (any case).
    pub fn from_name(name: &str) -> Option<AggBuiltin> {
        let n = name.to_ascii_lowercase();
        NAMES.iter().find(|(k, _)| *k == n).map(|(k, kind)| AggBuiltin { kind: *kind, name: k, param: 0 })
    }

    /// Every name, for suggestions.
    pub fn names() -> impl Iterator<Item = &'static str> {
        NAMES.iter().map(|(n, _)| *n)
    }

    /// Allowed argument counts (before `first(x, true)`'s flag is taken out).
    pub fn arity(&self) -> (usize, usize) {
        match self.kind {
            AggKind::Corr | AggKind::CovarPop | AggKind::CovarSamp | AggKind::MaxBy | AggKind::MinBy | AggKind::PercentileDisc | AggKind::HistogramNumeric => (2, 2),
            k if k.is_regression() => (2, 2),
            AggKind::First { .. } | AggKind::Last { .. } => (1, 2),
            AggKind::Percentile if self.name == "median" => (1, 1),
            AggKind::Percentile => (2, 2),
            AggKind::ApproxCountDistinct | AggKind::ListAgg | AggKind::Mode => (1, 2),
            AggKind::PercentileApprox => (2, 3),
            _ => (1, 1),
        }
    }

    /// The fractional result (and the inputs cast to double) of the moment aggregates.
    fn numeric_double(&self) -> bool {
        matches!(
            self.kind,
            AggKind::VarSamp
                | AggKind::VarPop
                | AggKind::StddevSamp
                | AggKind::StddevPop
                | AggKind::Corr
                | AggKind::CovarPop
                | AggKind::CovarSamp
                | AggKind::Skewness
                | AggKind::Kurtosis
        ) || self.kind.is_regression()
    }

    /// Checks and casts the arguments (Spark's input types: doubles for the moments, a boolean
    /// for bool_and/count_if, a constant fraction in [0, 1] for percentiles). `first(x, true)`
    /// becomes `first(x)` with the flag in the kind.
    pub fn resolve(mut self, args: Vec<Expr>) -> Result<(AggBuiltin, Vec<Expr>)> {
        let name = self.name;
        let types = args.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?;
        let to_double = |e: Expr, i: usize, t: &DataType| -> Result<Expr> {
            if *t == DataType::Float64 {
                Ok(e)
            } else if is_numeric(t) || is_string(t) || *t == DataType::Null {
                Ok(Expr::Cast { child: Box::new(e), to: DataType::Float64, zone: None })
            } else {
                Err(mismatch(name, &e, i, "\"DOUBLE\"", t))
            }
        };
        let mut out = Vec::with_capacity(args.len());
        match self.kind {
            _ if self.numeric_double() => {
                for (i, (a, t)) in args.into_iter().zip(&types).enumerate() {
                    out.push(to_double(a, i, t)?);
                }
            }
            AggKind::First { .. } | AggKind::Last { .. } => {
                let mut it = args.into_iter();
                out.push(it.next().ok_or_else(|| KilnError::internal("first without an argument"))?);
                if let Some(flag) = it.next() {
                    let ignore = match &flag {
                        Expr::Literal(ScalarValue::Boolean(b)) => *b,
                        other => {
                            return Err(KilnError::analysis(
                                "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                                format!("Cannot resolve \"{name}\" due to data type mismatch: the ignoreNulls argument {other} must be a boolean literal."),
                            ))
                        }
                    };
                    self.kind = match self.kind {
                        AggKind::First { ignore_nulls } => AggKind::First { ignore_nulls: ignore_nulls || ignore },
                        AggKind::Last { ignore_nulls } => AggKind::Last { ignore_nulls: ignore_nulls || ignore },
                        k => k,
                    };
                }
            }
            AggKind::BoolAnd | AggKind::BoolOr | AggKind::CountIf => {
                for (i, (a, t)) in args.into_iter().zip(&types).enumerate() {
                    match t {
                        DataType::Boolean => out.push(a),
                        // Spark's implicit cast: NULL and strings ('true') read as booleans.
                        t if *t == DataType::Null || crate::types::is_string(t) => out.push(Expr::Cast { child: Box::new(a), to: DataType::Boolean, zone: None }),
                        _ => return Err(mismatch(name, &a, i, "\"BOOLEAN\"", t)),
                    }
                }
            }
            AggKind::MaxBy | AggKind::MinBy => {
                if let Some(t) = types.get(1) {
                    if matches!(t, DataType::List(_) | DataType::Struct(_) | DataType::Map(..)) {
                        return Err(mismatch(name, &args[1], 1, "orderable", t));
                    }
                }
                out = args;
            }
            AggKind::Percentile | AggKind::PercentileDisc => {
                let mut it = args.into_iter().zip(types.iter());
                let (x, t) = it.next().ok_or_else(|| KilnError::internal("percentile without an argument"))?;
                out.push(to_double(x, 0, t)?);
                let p = match it.next() {
                    None => 0.5,
                    Some((p, _)) => fraction(name, &p)?,
                };
                self.param = p.to_bits();
                out.push(Expr::Literal(ScalarValue::Float64(p)));
            }
            AggKind::PercentileApprox => {
                let mut it = args.into_iter().zip(types.iter());
                let (x, t) = it.next().ok_or_else(|| KilnError::internal("percentile_approx without an argument"))?;
                if !is_numeric(t) && *t != DataType::Null {
                    return Err(mismatch(name, &x, 0, "\"NUMERIC\"", t));
                }
                out.push(x);
                let p = match it.next() {
                    Some((p, _)) => fraction(name, &p)?,
                    None => 0.5,
                };
                if let Some((a, _)) = it.next() {
                    match a {
                        Expr::Literal(ScalarValue::Int32(n)) if n > 0 => {}
                        Expr::Literal(ScalarValue::Int64(n)) if n > 0 => {}
                        other => {
                            return Err(KilnError::analysis(
                                "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
                                format!("Cannot resolve \"{name}\" due to data type mismatch: the accuracy {other} must be a positive integer literal."),
                            ))
                        }
                    }
                }
                self.param = p.to_bits();
                out.push(Expr::Literal(ScalarValue::Float64(p)));
            }
            AggKind::HistogramNumeric => {
                let mut it = args.into_iter().zip(types.iter());
                let (x, t) = it.next().ok_or_else(|| KilnError::internal("histogram_numeric without an argument"))?;
                match t {
                    t if is_numeric(t) || crate::types::interval::is_interval(t) || matches!(t, DataType::Date32 | DataType::Timestamp(..) | DataType::Null) => out.push(x),
                    // Spark's string promotion: a string reads as a double.
                    t if is_string(t) => out.push(to_double(x, 0, t)?),
                    t => return Err(mismatch(name, &x, 0, "(\"NUMERIC\" or \"DATE\" or \"TIMESTAMP\")", t)),
                }
                let (nb, _) = it.next().ok_or_else(|| KilnError::internal("histogram_numeric without nb"))?;
                let bins = match &nb {
                    Expr::Literal(ScalarValue::Int32(n)) => *n as i64,
                    Expr::Literal(ScalarValue::Int64(n)) => *n,
                    Expr::Literal(ScalarValue::Int8(n)) => *n as i64,
                    Expr::Literal(ScalarValue::Int16(n)) => *n as i64,
                    other => {
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                            format!("Cannot resolve \"{name}\" due to data type mismatch: the input `nb` should be a foldable \"INT\" expression; however, got {other}."),
                        ))
                    }
                };
                if !(2..=i32::MAX as i64).contains(&bins) {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
                        format!("Cannot resolve \"{name}({}, {bins})\" due to data type mismatch: The nb must be between [2, 2147483647] (current value = {bins}).", super::sql_name(&out[0])),
                    ));
                }
                self.param = bins as u64;
                out.push(nb);
            }
            AggKind::ApproxCountDistinct => {
                let mut it = args.into_iter();
                out.push(it.next().ok_or_else(|| KilnError::internal("approx_count_distinct without an argument"))?);
                let rsd = match it.next() {
                    None => DEFAULT_RELATIVE_SD,
                    Some(e) => relative_sd(name, &e)?,
                };
                self.param = rsd.to_bits();
            }
            AggKind::ListAgg => {
                let mut it = args.into_iter().zip(types);
                let (x, t) = it.next().ok_or_else(|| KilnError::internal("listagg without an argument"))?;
                out.push(to_string_arg(name, x, 0, &t)?);
                let delimiter = match it.next() {
                    None => Expr::Literal(ScalarValue::Utf8(String::new())),
                    Some((Expr::Literal(v), _)) if v.is_null() => Expr::Literal(ScalarValue::Utf8(String::new())),
                    Some((d @ Expr::Literal(_), t)) => to_string_arg(name, d, 1, &t)?,
                    Some((Expr::Cast { child, .. }, t)) if matches!(*child, Expr::Literal(_)) => to_string_arg(name, *child, 1, &t)?,
                    Some((d, _)) => {
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                            format!("Cannot resolve \"{name}\" due to data type mismatch: the input `delimiter` should be a foldable \"STRING\" expression; however, got {d}."),
                        ))
                    }
                };
                out.push(delimiter);
                // The order keys were appended by the parser with their directions in `param`.
                out.extend(it.map(|(k, _)| k));
            }
            AggKind::Mode => {
                let mut it = args.into_iter();
                out.push(it.next().ok_or_else(|| KilnError::internal("mode without an argument"))?);
                if let Some(flag) = it.next() {
                    self.param = match mode_flag(&flag)? {
                        true => 1,
                        false => 0,
                    };
                }
            }
            AggKind::BitAnd | AggKind::BitOr | AggKind::BitXor => {
                for (i, (a, t)) in args.into_iter().zip(&types).enumerate() {
                    match t {
                        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => out.push(a),
                        DataType::Null => out.push(Expr::Cast { child: Box::new(a), to: DataType::Int32, zone: None }),
                        _ => return Err(mismatch(name, &a, i, "\"INTEGRAL\"", t)),
                    }
                }
            }
            AggKind::TrySum | AggKind::TryAvg => {
                for (i, (a, t)) in args.into_iter().zip(&types).enumerate() {
                    match t {
                        t if is_numeric(t) => out.push(a),
                        t if is_string(t) || *t == DataType::Null => out.push(to_double(a, i, t)?),
                        _ => return Err(mismatch(name, &a, i, "\"NUMERIC\" or \"INTERVAL\"", t)),
                    }
                }
            }
            _ => out = args,
        }
        Ok((self, out))
    }

    /// The result type over arguments of types `args`.
    pub fn return_type(&self, args: &[DataType]) -> DataType {
        match self.kind {
            AggKind::BoolAnd | AggKind::BoolOr => DataType::Boolean,
            AggKind::CountIf | AggKind::ApproxCountDistinct => DataType::Int64,
            AggKind::CollectList | AggKind::CollectSet => crate::types::list_type(args.first().cloned().unwrap_or(DataType::Null)),
            AggKind::ListAgg => DataType::Utf8,
            AggKind::HistogramNumeric => {
                let x = match args.first() {
                    Some(DataType::Null) | None => DataType::Float64,
                    Some(t) => t.clone(),
                };
                crate::types::list_type(crate::types::struct_type([("x".to_string(), x), ("y".to_string(), DataType::Float64)]))
            }
            AggKind::BloomFilter => DataType::Binary,
            AggKind::TrySum | AggKind::LegacySum => super::aggregate_result_type(super::AggFunc::Sum, args.first().unwrap_or(&DataType::Int64)),
            AggKind::TryAvg => super::aggregate_result_type(super::AggFunc::Avg, args.first().unwrap_or(&DataType::Int64)),
            AggKind::First { .. }
            | AggKind::Last { .. }
            | AggKind::MaxBy
            | AggKind::MinBy
            | AggKind::SingleValue
            | AggKind::PercentileApprox
            | AggKind::Mode
            | AggKind::BitAnd
            | AggKind::BitOr
            | AggKind::BitXor => args.first().cloned().unwrap_or(DataType::Null),
            _ => DataType::Float64,
        }
    }

    /// count_if and approx_count_distinct (0) and collect_list/set (an empty array) are never
    /// NULL; the others are NULL over no rows.
    pub fn nullable(&self) -> bool {
        !matches!(self.kind, AggKind::CountIf | AggKind::ApproxCountDistinct | AggKind::CollectList | AggKind::CollectSet)
    }

    /// Spark's aggregation buffer: (name, type, nullable) per column.
    pub fn buffer(&self, args: &[DataType]) -> Vec<(&'static str, DataType, bool)> {
        let d = |n: &'static str| (n, DataType::Float64, false);
        let arg = |i: usize| args.get(i).cloned().unwrap_or(DataType::Null);
        match self.kind {
            AggKind::VarSamp | AggKind::VarPop | AggKind::StddevSamp | AggKind::StddevPop => vec![d("n"), d("avg"), d("m2")],
            AggKind::Skewness => vec![d("n"), d("avg"), d("m2"), d("m3")],
            AggKind::Kurtosis => vec![d("n"), d("avg"), d("m2"), d("m3"), d("m4")],
            AggKind::CollectList | AggKind::CollectSet => vec![("buf", crate::types::list_type(arg(0)), false)],
            // The values, their order keys in arrow's row format (sorting the bytes sorts by
            // the keys), and the delimiter (the final aggregate has no arguments to read it from).
            AggKind::ListAgg => vec![
                ("buf", crate::types::list_type(DataType::Utf8), false),
                ("keys", crate::types::list_type(DataType::Binary), false),
                ("delimiter", DataType::Utf8, true),
            ],
            // HyperLogLog++ registers, one byte each (Spark packs them into longs `MS[i]`).
            AggKind::ApproxCountDistinct => vec![("MS", DataType::Binary, false)],
            AggKind::BloomFilter => vec![("bloomFilter", DataType::Binary, true)],
            // The bins' centres and heights, in order of their centres.
            AggKind::HistogramNumeric => vec![
                ("x", crate::types::list_type(DataType::Float64), false),
                ("y", crate::types::list_type(DataType::Float64), false),
            ],
            AggKind::CovarPop | AggKind::CovarSamp => vec![d("n"), d("xAvg"), d("yAvg"), d("ck")],
            AggKind::Corr
            | AggKind::RegrSxx
            | AggKind::RegrSyy
            | AggKind::RegrSxy
            | AggKind::RegrSlope
            | AggKind::RegrIntercept
            | AggKind::RegrR2 => vec![d("n"), d("xAvg"), d("yAvg"), d("ck"), d("xMk"), d("yMk")],
            AggKind::First { .. } => vec![("first", arg(0), true), ("valueSet", DataType::Boolean, false)],
            AggKind::Last { .. } => vec![("last", arg(0), true), ("valueSet", DataType::Boolean, false)],
            AggKind::BoolAnd | AggKind::BoolOr => vec![("agg", DataType::Boolean, true)],
            AggKind::CountIf => vec![("count", DataType::Int64, false)],
            // Legacy sum's bigint buffer is sum's, which generated code keeps.
            AggKind::LegacySum if self.return_type(args) == DataType::Int64 => vec![("sum", DataType::Int64, true)],
            AggKind::TrySum | AggKind::LegacySum => vec![("sum", self.return_type(args), true), ("isEmpty", DataType::Boolean, false)],
            // Spark's Average buffer: a double sum, or decimal(p+10,s) for decimals.
            AggKind::TryAvg => vec![("sum", try_avg_sum_type(&arg(0)), true), ("count", DataType::Int64, false)],
            AggKind::SingleValue => vec![("value", arg(0), true), ("count", DataType::Int64, false)],
            // The distinct values and their counts.
            AggKind::Mode => vec![("buf", crate::types::list_type(arg(0)), false), ("counts", crate::types::list_type(DataType::Int64), false)],
            AggKind::BitAnd | AggKind::BitOr | AggKind::BitXor => vec![("value", arg(0), true)],
            AggKind::MaxBy | AggKind::MinBy => vec![("valueWithExtremumOrdering", arg(0), true), ("extremumOrdering", arg(1), true)],
            AggKind::Percentile | AggKind::PercentileDisc | AggKind::PercentileApprox => {
                vec![("buf", DataType::List(std::sync::Arc::new(arrow::datatypes::Field::new("item", DataType::Float64, false))), false)]
            }
        }
    }

    /// listagg's order keys: (descending, nulls first) of key `k`.
    pub fn order_direction(&self, k: usize) -> (bool, bool) {
        let bits = self.param >> (2 * k.min(31));
        (bits & 1 != 0, bits & 2 != 0)
    }

    /// The directions of listagg's WITHIN GROUP keys, as `param`.
    pub fn with_order_directions(mut self, keys: &[(bool, bool)]) -> Result<AggBuiltin> {
        if keys.len() > 32 {
            return Err(KilnError::analysis("UNSUPPORTED_FEATURE", format!("{} with more than 32 order keys", self.name)));
        }
        self.param = keys.iter().enumerate().fold(0, |p, (k, (desc, nulls_first))| p | (*desc as u64) << (2 * k) | (*nulls_first as u64) << (2 * k + 1));
        Ok(self)
    }

    /// A percentile's fraction (approx_count_distinct: the relative standard deviation).
    pub fn fraction(&self) -> f64 {
        f64::from_bits(self.param)
    }

    /// Text Spark prints after the call: `first(x) ignore nulls`.
    pub fn suffix(&self) -> &'static str {
        match self.kind {
            AggKind::First { ignore_nulls: true } | AggKind::Last { ignore_nulls: true } => " ignore nulls",
            _ => "",
        }
    }
}

/// listagg's value and delimiter: strings (anything else is cast, binary is kept).
fn to_string_arg(name: &str, e: Expr, ordinal: usize, t: &DataType) -> Result<Expr> {
    match t {
        t if is_string(t) => Ok(e),
        DataType::Binary => Err(KilnError::analysis("UNSUPPORTED_FEATURE", format!("{name} over binary values"))),
        DataType::List(_) | DataType::Struct(_) | DataType::Map(..) => Err(mismatch(name, &e, ordinal, "\"STRING\"", t)),
        _ => Ok(Expr::Cast { child: Box::new(e), to: DataType::Utf8, zone: None }),
    }
}

/// A numeric literal as a double: an aggregate's constant setting.
fn constant_number(e: &Expr) -> Option<f64> {
    match e {
        Expr::Literal(ScalarValue::Float64(v)) => Some(*v),
        Expr::Literal(ScalarValue::Decimal(v, _, s)) => Some(*v as f64 / 10f64.powi(*s as i32)),
        Expr::Literal(ScalarValue::Int32(v)) => Some(*v as f64),
        Expr::Literal(ScalarValue::Int64(v)) => Some(*v as f64),
        _ => None,
    }
}

/// approx_count_distinct's relative standard deviation: a constant; Spark's HLL++ needs at
/// least 4 index bits (rsd at most 0.39).
fn relative_sd(name: &str, e: &Expr) -> Result<f64> {
    let v = match e {
        Expr::Cast { child, .. } => return relative_sd(name, child),
        _ => constant_number(e),
    };
    match v {
        Some(v) if v > 0.0 && (2.0 * (1.106 / v).log2()).ceil() >= 4.0 => Ok(v),
        Some(v) => Err(KilnError::analysis(
            "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
            format!("Cannot resolve \"{name}\" due to data type mismatch: HLL++ requires at least 4 bits for addressing; the relative standard deviation {v} is too large (use at most 0.39)."),
        )),
        None => Err(KilnError::analysis(
            "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
            format!("Cannot resolve \"{name}\" due to data type mismatch: the input `relativeSD` should be a foldable \"DOUBLE\" expression; however, got {e}."),
        )),
    }
}

/// mode's `deterministic`: a constant, non-NULL boolean.
fn mode_flag(e: &Expr) -> Result<bool> {
    if !e.foldable() {
        return Err(KilnError::analysis(
            "NON_FOLDABLE_ARGUMENT",
            "The function `mode` requires the parameter `deterministic` to be a foldable expression of the type \"BOOLEAN\", but the actual argument is a non-foldable.",
        ));
    }
    let t = e.data_type()?;
    if t != DataType::Boolean && t != DataType::Null {
        return Err(KilnError::analysis(
            "UNEXPECTED_INPUT_TYPE",
            format!("Parameter second of function `mode` requires the \"BOOLEAN\" type, however \"{e}\" has the type \"{}\".", crate::types::sql_type_name(&t)),
        ));
    }
    match super::eval::evaluate_scalar(e)? {
        ScalarValue::Boolean(b) => Ok(b),
        _ => Err(KilnError::analysis("DATATYPE_MISMATCH.UNEXPECTED_NULL", format!("Cannot resolve \"{e}\" due to data type mismatch: The `deterministic` must not be null."))),
    }
}

/// A percentile's fraction: a constant number in [0, 1].
fn fraction(name: &str, p: &Expr) -> Result<f64> {
    let v = match p {
        Expr::Cast { child, .. } => return fraction(name, child),
        Expr::Negative(c) => return fraction(name, c).map(|v| -v),
        // percentile_cont ... WITHIN GROUP (ORDER BY x DESC): 1 - p.
        Expr::Binary { op: super::BinaryOp::Minus, left, right } => return Ok(fraction(name, left)? - fraction(name, right)?),
        _ => constant_number(p),
    };
    match v {
        Some(v) if (0.0..=1.0).contains(&v) => Ok(v),
        Some(_) => Err(KilnError::analysis(
            "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
            format!("Cannot resolve \"{name}({p})\" due to data type mismatch: the percentage {p} must be between 0.0 and 1.0."),
        )),
        None => Err(KilnError::analysis(
            "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
            format!("Cannot resolve \"{name}\" due to data type mismatch: the percentage must be a constant number, but got {p}."),
        )),
    }
}
