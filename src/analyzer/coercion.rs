//! Spark 4's implicit casts (ANSI mode): numeric widening, decimal precision/scale, strings
//! compared with dates, date +/- interval, and the type checks that fail the query.

use arrow::datatypes::DataType;

use crate::error::{KilnError, Result};
use crate::expr::{sql_name, AggFunc, BinaryOp, Expr, ScalarFunc};
use crate::types::interval::{is_interval, is_year_month};
use crate::types::{common_type, decimal_for_integral, is_integral, is_numeric, is_string, spark_type_name, string_promotion, wider_type, ScalarValue};

/// Applies the coercion rules bottom-up to a resolved expression.
pub fn coerce_expr(e: Expr) -> Result<Expr> {
    e.transform_up(&mut coerce_node)
}

/// Fails unless `e` is boolean; `clause` names where it appeared.
pub(super) fn require_boolean(e: Expr, clause: &str) -> Result<Expr> {
    let t = e.data_type()?;
    if t == DataType::Boolean {
        return Ok(e);
    }
    if t == DataType::Null {
        return Ok(Expr::Cast { child: Box::new(e), to: DataType::Boolean, zone: None });
    }
    Err(KilnError::analysis(
        "DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN",
        format!("Cannot resolve \"{}\" due to data type mismatch: the {clause} condition must be boolean, but has type \"{}\".", sql_name(&e), spark_type_name(&t)),
    ))
}

fn cast(e: Expr, to: &DataType) -> Result<Expr> {
    let from = e.data_type()?;
    if &from == to {
        return Ok(e);
    }
    // Integer literals widen to the narrowest decimal that holds them (Spark prints
    // `cast(1 as decimal(1,0))` in TPC-H Q1).
    Ok(Expr::Cast { child: Box::new(e), to: to.clone(), zone: None })
}

/// The decimal type a value of `e`'s type takes in decimal arithmetic; integer literals use
/// their own digit count, as Spark's `DecimalPrecision` does for literals.
fn decimal_view(e: &Expr) -> Result<Option<(u8, i8)>> {
    let literal = match e {
        Expr::Literal(ScalarValue::Int8(v)) => Some(*v as i64),
        Expr::Literal(ScalarValue::Int16(v)) => Some(*v as i64),
        Expr::Literal(ScalarValue::Int32(v)) => Some(*v as i64),
        Expr::Literal(ScalarValue::Int64(v)) => Some(*v),
        _ => None,
    };
    if let Some(v) = literal {
        let digits = v.unsigned_abs().to_string().len() as u8;
        return Ok(Some((digits.max(1), 0)));
    }
    Ok(decimal_for_integral(&e.data_type()?))
}

/// What date_add / date_sub (and date ± n) take as a number of days.
const DAY_COUNT_TYPES: &str = "(\"INT\" or \"SMALLINT\" or \"TINYINT\")";
/// What Spark's TimeAdd takes as its first parameter (`1 - INTERVAL '2' SECOND` is refused).
const TIMESTAMP_TYPES: &str = "(\"(TIMESTAMP OR TIMESTAMP WITHOUT TIME ZONE)\" or \"(TIMESTAMP_LTZ(P) OR TIMESTAMP_NTZ(P) WITH P IN [7, 9])\")";

/// Spark's UNEXPECTED_INPUT_TYPE: the `ordinal` ("first", "second") parameter of `original`
/// takes one of `required` (as Spark lists them), not `value`'s type.
fn unexpected_input(original: &Expr, ordinal: &str, required: &str, value: &Expr) -> KilnError {
    let t = value.data_type().map(|t| crate::types::sql_type_name(&t)).unwrap_or_default();
    KilnError::analysis(
        "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
        format!(
            "Cannot resolve \"{}\" due to data type mismatch: The {ordinal} parameter requires the {required} type, however \"{}\" has the type \"{t}\".",
            sql_name(original),
            sql_name(value)
        ),
    )
}

/// Spark's DATA_DIFF_TYPES: the values of `function` (CASE's results, IN's list, coalesce's
/// arguments) have no common type.
fn data_diff<'a>(function: &str, values: impl Iterator<Item = &'a Expr>) -> KilnError {
    let mut types: Vec<String> = vec![];
    for v in values {
        let t = v.data_type().map(|t| format!("\"{}\"", crate::types::sql_type_name(&t))).unwrap_or_default();
        if !types.contains(&t) {
            types.push(t);
        }
    }
    KilnError::analysis(
        "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
        format!("Cannot resolve \"{function}\" due to data type mismatch: Input to `{function}` should all be the same type, but it's ({}).", types.join(" or ")),
    )
}

fn mismatch(e: &Expr, l: &DataType, r: &DataType) -> KilnError {
    KilnError::analysis(
        "DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES",
        format!(
            "Cannot resolve \"{}\" due to data type mismatch: the left and right operands of the binary operator have incompatible types (\"{}\" and \"{}\").",
            sql_name(e),
            crate::types::sql_type_name(l),
            crate::types::sql_type_name(r)
        ),
    )
}

fn coerce_node(e: Expr) -> Result<Expr> {
    if !e.resolved() {
        return Ok(e);
    }
    match e {
        Expr::Binary { op, left, right } => coerce_binary(op, *left, *right),
        Expr::Negative(c) if c.data_type()? == DataType::Null || is_string(&c.data_type()?) => Ok(Expr::Negative(Box::new(cast(*c, &DataType::Float64)?))),
        Expr::InList { child, list, negated } => {
            let mut t = child.data_type()?;
            for item in &list {
                let it = item.data_type()?;
                t = match common_type(&t, &it) {
                    Some(t) => t,
                    None => return Err(data_diff("in", std::iter::once(child.as_ref()).chain(&list))),
                };
            }
            Ok(Expr::InList {
                child: Box::new(cast(*child, &t)?),
                list: list.into_iter().map(|i| cast(i, &t)).collect::<Result<_>>()?,
                negated,
            })
        }
        Expr::CaseWhen { branches, else_expr, if_form } => {
            let mut t = DataType::Null;
            for v in branches.iter().map(|(_, v)| v).chain(else_expr.as_deref()) {
                let vt = v.data_type()?;
                t = match common_type(&t, &vt) {
                    Some(t) => t,
                    None => return Err(data_diff("casewhen", branches.iter().map(|(_, v)| v).chain(else_expr.as_deref()))),
                };
            }
            let branches = branches
                .into_iter()
                .map(|(c, v)| Ok((require_boolean(c, "CASE WHEN")?, cast(v, &t)?)))
                .collect::<Result<_>>()?;
            let else_expr = match else_expr {
                Some(e) => Some(Box::new(cast(*e, &t)?)),
                None => None,
            };
            Ok(Expr::CaseWhen { branches, else_expr, if_form })
        }
        Expr::Not(c) => Ok(Expr::Not(Box::new(require_boolean(*c, "NOT")?))),
        Expr::Like { child, pattern, negated } => {
            let child = string_arg(*child)?;
            Ok(Expr::Like { child: Box::new(child), pattern: Box::new(string_arg(*pattern)?), negated })
        }
        Expr::Function { func, args } => coerce_function(func, args),
        Expr::Aggregate { func, args, distinct } => {
            let args = match func {
                AggFunc::Sum | AggFunc::Avg => args
                    .into_iter()
                    .map(|a| {
                        let t = a.data_type()?;
                        if is_string(&t) {
                            cast(a, &DataType::Float64)
                        } else if func == AggFunc::Avg && is_interval(&t) && crate::types::interval::widest(&t) != t {
                            // Spark's Average of intervals is of the widest type of the family.
                            cast(a, &crate::types::interval::widest(&t))
                        } else if is_numeric(&t) || t == DataType::Null || is_interval(&t) {
                            Ok(a)
                        } else {
                            Err(KilnError::analysis(
                                "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                                format!("Cannot resolve \"{}({})\": the input must be numeric, but has type \"{}\".", func.name(), sql_name(&a), spark_type_name(&t)),
                            ))
                        }
                    })
                    .collect::<Result<_>>()?,
                _ => args,
            };
            Ok(Expr::Aggregate { func, args, distinct })
        }
        Expr::Cast { child, to, zone } => {
            let from = child.data_type()?;
            if from == to {
                Ok(*child)
            } else if can_cast(&from, &to) {
                Ok(Expr::Cast { child, to, zone })
            } else {
                Err(cast_error("cast", &child, &from, &to))
            }
        }
        other => Ok(other),
    }
}

/// Legacy TypeCoercion's type for a comparison (`findCommonTypeForBinaryComparison`, and
/// BooleanEquality for `=` and `<=>`): a string meets a date or timestamp in that type, a decimal
/// in double, any other atomic type in that type (`10 = '10.5'` compares ints); a boolean meets
/// a number in the number's type. None: the common type decides, as under ANSI.
fn legacy_comparison_type(op: BinaryOp, lt: &DataType, rt: &DataType) -> Option<DataType> {
    use DataType::*;
    let atomic = |t: &DataType| is_numeric(t) || matches!(t, Boolean | Binary | Date32 | Timestamp(..) | Null) || is_interval(t);
    match (lt, rt) {
        (s, t) | (t, s) if is_string(s) && !is_string(t) && atomic(t) => Some(match t {
            Decimal128(..) => Float64,
            Null => s.clone(),
            t => t.clone(),
        }),
        (Boolean, n) | (n, Boolean) if is_numeric(n) && matches!(op, BinaryOp::Eq | BinaryOp::EqNullSafe) => Some(n.clone()),
        _ => None,
    }
}

/// An arithmetic operand meeting a decimal, as a decimal: its own, the narrowest that holds an
/// integral value, or decimal(1,0) for a NULL.
fn decimal_operand(e: Expr) -> Result<Expr> {
    match (e.data_type()?, decimal_view(&e)?) {
        (DataType::Decimal128(..), _) => Ok(e),
        (DataType::Null, _) => cast(e, &DataType::Decimal128(1, 0)),
        (_, Some((p, s))) => cast(e, &DataType::Decimal128(p, s)),
        (t, None) => Err(KilnError::internal(format!("no decimal view of {}", spark_type_name(&t)))),
    }
}

/// Spark's error for a cast between types it cannot convert (`cast` or `try_cast`).
pub(super) fn cast_error(name: &str, child: &Expr, from: &DataType, to: &DataType) -> KilnError {
    // Spark's Cast.typeCheckFailureMessage names the function that converts dates and numbers
    // (TRY_CAST's message names none).
    let function = match (from, to) {
        _ if name != "cast" || !super::session::flags().ansi => None,
        (DataType::Date32, t) if is_numeric(t) => Some("UNIX_DATE"),
        (f, DataType::Date32) if is_numeric(f) => Some("DATE_FROM_UNIX_DATE"),
        _ => None,
    };
    if let Some(function) = function {
        let (f, t) = (spark_type_name(from), spark_type_name(to));
        return KilnError::analysis(
            "DATATYPE_MISMATCH.CAST_WITH_FUNC_SUGGESTION",
            format!("Cannot resolve \"{name}({} as {t})\": cannot cast \"{f}\" to \"{t}\". To convert values from \"{f}\" to \"{t}\", you can use the function `{function}` instead.", sql_name(child)),
        );
    }
    if name == "cast" && legacy_only_cast(from, to) {
        let (f, t) = (crate::types::sql_type_name(from), crate::types::sql_type_name(to));
        return KilnError::analysis(
            "DATATYPE_MISMATCH.CAST_WITH_CONF_SUGGESTION",
            format!("Cannot resolve \"{name}({} as {})\": cannot cast \"{f}\" to \"{t}\" with ANSI mode on. If you have to cast \"{f}\" to \"{t}\", you can set \"spark.sql.ansi.enabled\" as 'false'.", sql_name(child), spark_type_name(to)),
        );
    }
    KilnError::analysis(
        "DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION",
        format!("Cannot resolve \"{name}({} as {})\": cannot cast \"{}\" to \"{}\".", sql_name(child), spark_type_name(to), spark_type_name(from), spark_type_name(to)),
    )
}

/// Legacy Cast.canCast beyond ANSI's: a boolean and a timestamp both ways, a date to a number or
/// boolean (NULL), an integer to its bytes.
fn legacy_only_cast(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    match (from, to) {
        (Boolean, Timestamp(..)) | (Timestamp(..), Boolean) => true,
        (Date32, t) => is_numeric(t) || *t == Boolean,
        (f, Binary) => is_integral(f),
        _ => false,
    }
}

pub(super) fn can_cast(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    let ok = |t: &DataType| is_numeric(t) || is_string(t) || *t == Boolean || *t == Date32 || *t == Null;
    match (from, to) {
        (Null, _) => true,
        (f, t) if legacy_only_cast(f, t) => !super::session::flags().ansi,
        // An array prints as `[a, b]`.
        (List(_), t) if is_string(t) => true,
        (List(f), List(t)) => can_cast(f.data_type(), t.data_type()),
        // Structs cast field by field (by position, as Spark), maps by key and value; both
        // print as strings (`{1, a}`, `{a -> 1}`).
        (Struct(_) | Map(..), t) if is_string(t) => true,
        (Struct(f), Struct(t)) => f.len() == t.len() && f.iter().zip(t.iter()).all(|(f, t)| can_cast(f.data_type(), t.data_type())),
        (Map(..), Map(..)) => match (crate::types::map_key_value(from), crate::types::map_key_value(to)) {
            (Some((fk, fv)), Some((tk, tv))) => can_cast(fk.data_type(), tk.data_type()) && can_cast(fv.data_type(), tv.data_type()),
            _ => false,
        },
        (List(_) | Struct(_) | Map(..), _) | (_, List(_) | Struct(_) | Map(..)) => false,
        // Spark: timestamps cast to and from strings, dates, each other and numbers.
        (Timestamp(..), t) | (t, Timestamp(..)) => is_string(t) || matches!(t, Date32 | Timestamp(..)) || is_numeric(t),
        (Date32, t) | (t, Date32) => is_string(t) || *t == Date32,
        // Intervals cast to and from strings, within their family, and to and from integral and
        // decimal numbers (not floating point).
        // A calendar interval (make_interval's) casts to and from strings only.
        (f, t) if *f == crate::types::interval::CALENDAR || *t == crate::types::interval::CALENDAR => is_string(t) || is_string(f),
        (f, t) if is_interval(f) || is_interval(t) => {
            let exact = |x: &DataType| x.is_integer() || matches!(x, Decimal128(..));
            is_string(f) || is_string(t) || crate::types::interval::wider_interval(f, t).is_some() || exact(f) || exact(t)
        }
        // Binary casts to and from strings only (numbers to binary are not kiln's).
        (Binary, t) | (t, Binary) => is_string(t),
        (f, t) => ok(f) && ok(t),
    }
}

fn string_arg(e: Expr) -> Result<Expr> {
    let t = e.data_type()?;
    if is_string(&t) {
        Ok(e)
    } else {
        cast(e, &DataType::Utf8)
    }
}

/// Two structs of as many fields, widened position by position under the left's names.
fn positional_struct_type(a: &DataType, b: &DataType) -> Option<DataType> {
    let (DataType::Struct(x), DataType::Struct(y)) = (a, b) else { return None };
    if x.len() != y.len() {
        return None;
    }
    let fields = x.iter().zip(y.iter()).map(|(f, g)| Some((f.name().clone(), common_type(f.data_type(), g.data_type()).or_else(|| positional_struct_type(f.data_type(), g.data_type()))?))).collect::<Option<Vec<_>>>()?;
    Some(crate::types::struct_type(fields))
}

/// Arithmetic over two operands of one type it does not take (strings, booleans, binary): Spark's
/// BINARY_OP_WRONG_TYPE with the operator's input types; a date plus a date is DateAdd's.
fn wrong_operand_type(op: BinaryOp, original: &Expr, t: &DataType) -> KilnError {
    let name = crate::types::sql_type_name(t);
    if op == BinaryOp::Plus && *t == DataType::Date32 {
        // Spark names the date_add its analyzer made of the `+`.
        let (call, second) = match original {
            Expr::Binary { left, right, .. } => {
                // The operand as written, without the cast string promotion put on it.
                let right = match right.as_ref() {
                    Expr::Cast { child, .. } => child.as_ref(),
                    other => other,
                };
                (format!("date_add({}, {})", sql_name(left), sql_name(right)), sql_name(right))
            }
            other => (sql_name(other), sql_name(other)),
        };
        return KilnError::analysis(
            "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
            format!("Cannot resolve \"{call}\" due to data type mismatch: The second parameter requires the (\"INT\" or \"SMALLINT\" or \"TINYINT\") type, however \"{second}\" has the type \"{name}\"."),
        );
    }
    let accepted = match op {
        BinaryOp::Plus | BinaryOp::Minus => "(\"NUMERIC\" or \"INTERVAL DAY TO SECOND\" or \"INTERVAL YEAR TO MONTH\" or \"INTERVAL\")",
        BinaryOp::Divide => "(\"DOUBLE\" or \"DECIMAL\")",
        BinaryOp::IntDivide => "(\"BIGINT\" or \"DECIMAL\")",
        _ => "\"NUMERIC\"",
    };
    KilnError::analysis(
        "DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE",
        format!("Cannot resolve \"{}\" due to data type mismatch: the binary operator requires the input type {accepted}, not \"{name}\".", sql_name(original)),
    )
}

fn coerce_binary(op: BinaryOp, left: Expr, right: Expr) -> Result<Expr> {
    let (lt, rt) = (left.data_type()?, right.data_type()?);
    let rebuild = |l: Expr, r: Expr| Expr::Binary { op, left: Box::new(l), right: Box::new(r) };
    let original = rebuild(left.clone(), right.clone());
    match op {
        BinaryOp::And | BinaryOp::Or => {
            // A string meeting a boolean is read as one (Spark's PromoteStrings).
            let (left, right) = if string_promotion(&lt, &rt) == Some(DataType::Boolean) {
                (cast(left, &DataType::Boolean)?, cast(right, &DataType::Boolean)?)
            } else {
                (left, right)
            };
            let l = require_boolean(left, op.symbol())?;
            let r = require_boolean(right, op.symbol())?;
            Ok(rebuild(l, r))
        }
        _ if op.is_comparison() => {
            // Maps have no order and no equality in Spark.
            for t in [&lt, &rt] {
                if !crate::types::is_orderable(t) {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.INVALID_ORDERING_TYPE",
                        format!(
                            "Cannot resolve \"{}\" due to data type mismatch: The `{}` does not support ordering on type \"{}\".",
                            crate::expr::sql_name(&original),
                            op.symbol(),
                            crate::types::sql_type_name(t)
                        ),
                    ));
                }
            }
            let legacy = if super::session::flags().ansi { None } else { legacy_comparison_type(op, &lt, &rt) };
            // Structs compare field by field whatever their names (the left's names kept).
            let t = legacy.or_else(|| common_type(&lt, &rt)).or_else(|| positional_struct_type(&lt, &rt)).ok_or_else(|| mismatch(&original, &lt, &rt))?;
            Ok(rebuild(cast(left, &t)?, cast(right, &t)?))
        }
        // Spark's PromoteStrings: a string meeting another type in arithmetic takes the type both
        // take (`'1' + 1` is BIGINT 2, `date - '2020-01-01'` subtracts dates).
        _ if string_promotion(&lt, &rt).is_some() => {
            let t = string_promotion(&lt, &rt).ok_or_else(|| KilnError::internal("string promotion"))?;
            // Spark's legacy PromoteStrings: a string in arithmetic is a double.
            let arithmetic = matches!(op, BinaryOp::Plus | BinaryOp::Minus | BinaryOp::Multiply | BinaryOp::Divide | BinaryOp::IntDivide | BinaryOp::Modulo);
            let t = if arithmetic && !super::session::flags().ansi && (is_numeric(&t) || (is_string(&lt) && is_string(&rt))) { DataType::Float64 } else { t };
            if t == lt && t == rt {
                return Err(wrong_operand_type(op, &original, &t));
            }
            coerce_binary(op, cast(left, &t)?, cast(right, &t)?)
        }
        _ if interval_operand(&left, &right, op).is_some() => {
            let (value, iv, negate) = interval_operand(&left, &right, op).ok_or_else(|| KilnError::internal("interval operand"))?;
            interval_arithmetic(value.clone(), iv.clone(), negate, &original)
        }
        // A date or timestamp meeting NULL in + or -: NULL, typed as Spark types it (date + NULL
        // a timestamp, a timestamp_ntz its own type; `-` the interval two values differ by).
        _ if matches!((&lt, &rt), (DataType::Date32 | DataType::Timestamp(..), DataType::Null) | (DataType::Null, DataType::Date32 | DataType::Timestamp(..)))
            && matches!(op, BinaryOp::Plus | BinaryOp::Minus) =>
        {
            let value = if lt == DataType::Null { &rt } else { &lt };
            let t = match (op, value) {
                (BinaryOp::Minus, DataType::Date32) => crate::types::interval::DAY,
                (BinaryOp::Minus, _) => crate::types::interval::DAY_TIME,
                (_, DataType::Timestamp(..)) => value.clone(),
                _ => crate::types::timestamp_type(false),
            };
            Ok(Expr::lit(ScalarValue::Null(t)))
        }
        // `7 + DATE '2001-09-28'`: date_add, as the date first.
        _ if is_integral(&lt) && rt == DataType::Date32 && op == BinaryOp::Plus => coerce_binary(op, right, left),
        _ => {
            // Date +/- INTERVAL n DAY becomes date_add, as Spark's analyzer does.
            if let (DataType::Date32, Expr::Literal(ScalarValue::IntervalMicros(us, 0, 0))) = (&lt, &right) {
                let d = us / crate::types::timestamp::MICROS_PER_DAY;
                let days = match op {
                    BinaryOp::Plus => d,
                    BinaryOp::Minus => -d,
                    _ => return Err(mismatch(&original, &lt, &rt)),
                };
                let days = i32::try_from(days).map_err(|_| KilnError::exec("[ARITHMETIC_OVERFLOW] interval overflow"))?;
                return Ok(Expr::Function { func: ScalarFunc::DateAdd, args: vec![left, Expr::Literal(ScalarValue::Int32(days))] });
            }
            if let Some(e) = interval_binary(op, left.clone(), right.clone(), &lt, &rt, &original)? {
                return Ok(e);
            }
            if lt == DataType::Date32 && is_integral(&rt) && matches!(op, BinaryOp::Plus | BinaryOp::Minus) {
                let func = if op == BinaryOp::Plus { ScalarFunc::DateAdd } else { ScalarFunc::DateSub };
                return Ok(Expr::Function { func, args: vec![left, cast(right, &DataType::Int32)?] });
            }
            if lt == DataType::Date32 && is_numeric(&rt) && matches!(op, BinaryOp::Plus | BinaryOp::Minus) {
                return Err(unexpected_input(&original, "second", DAY_COUNT_TYPES, &right));
            }
            if op == BinaryOp::IntDivide {
                let integral = |t: &DataType| is_integral(t) || *t == DataType::Null;
                let decimal = |t: &DataType| matches!(t, DataType::Decimal128(..));
                // Spark's IntegralDivide takes bigints or decimals (an integral side meeting a decimal is one).
                if (decimal(&lt) || decimal(&rt)) && (integral(&lt) || decimal(&lt)) && (integral(&rt) || decimal(&rt)) {
                    return Ok(rebuild(decimal_operand(left)?, decimal_operand(right)?));
                }
                if !integral(&lt) || !integral(&rt) {
                    let wrong = [&lt, &rt].into_iter().find(|t| !integral(t) && !decimal(t) && !is_interval(t) && !is_numeric(t));
                    if let Some(t) = wrong {
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE",
                            format!("Cannot resolve \"{}\" due to data type mismatch: the binary operator requires the input type (\"BIGINT\" or \"DECIMAL\" or \"INTERVAL YEAR TO MONTH\" or \"INTERVAL DAY TO SECOND\"), not \"{}\".", sql_name(&original), crate::types::sql_type_name(t)),
                        ));
                    }
                    return Err(mismatch(&original, &lt, &rt));
                }
                return Ok(rebuild(cast(left, &DataType::Int64)?, cast(right, &DataType::Int64)?));
            }
            let numeric = |t: &DataType| is_numeric(t) || *t == DataType::Null;
            if !numeric(&lt) || !numeric(&rt) {
                if lt == rt {
                    return Err(wrong_operand_type(op, &original, &lt));
                }
                return Err(mismatch(&original, &lt, &rt));
            }
            let t = wider_type(&lt, &rt).ok_or_else(|| mismatch(&original, &lt, &rt))?;
            // Spark's Divide is over doubles unless the operands meet in a decimal (float / float is double too).
            let t = if op == BinaryOp::Divide && !matches!(t, DataType::Decimal128(..)) { DataType::Float64 } else { t };
            if matches!(t, DataType::Float32 | DataType::Float64) {
                return Ok(rebuild(cast(left, &t)?, cast(right, &t)?));
            }
            if matches!(t, DataType::Decimal128(..)) {
                return Ok(rebuild(decimal_operand(left)?, decimal_operand(right)?));
            }
            // NULL op NULL: Spark's implicit cast of NULL to a NumericType input is DOUBLE.
            let t = if t == DataType::Null { DataType::Float64 } else { t };
            Ok(rebuild(cast(left, &t)?, cast(right, &t)?))
        }
    }
}

/// EXTRACT / date_part of an interval (`field` as EXTRACT's function names it: `day`,
/// `hour`, ...): Spark's ExtractInterval* of a field the interval's type has, else
/// INVALID_EXTRACT_FIELD. The functions themselves (`day(i)`) take no interval, as in Spark.
pub(crate) fn interval_extract(field: &str, arg: Expr) -> Result<Expr> {
    use crate::expr::{Builtin, MoreFn};
    let t = arg.data_type()?;
    let calendar = t == crate::types::interval::CALENDAR;
    let field = field.to_ascii_uppercase();
    // Spark's ExtractIntervalPart: only a field within the type's start..end.
    use crate::types::interval::{dt_fields, ym_fields};
    let code = |names: &[&str]| names.iter().position(|n| *n == field).map(|i| i as u8);
    let within = match (ym_fields(&t), dt_fields(&t)) {
        (Some((s, e)), _) => code(&["YEAR", "MONTH"]).is_some_and(|f| s <= f && f <= e),
        (_, Some((s, e))) => code(&["DAY", "HOUR", "MINUTE", "SECOND"]).is_some_and(|f| s <= f && f <= e),
        // A calendar interval has every field (Spark's ExtractIntervalYears ... Seconds).
        _ => calendar && ["YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"].contains(&field.as_str()),
    };
    if !within {
        return Err(KilnError::analysis("INVALID_EXTRACT_FIELD", format!("Cannot extract `{field}` from \"{}\".", sql_name(&arg))));
    }
    Ok(Expr::Function {
        func: ScalarFunc::Builtin(Builtin::More(MoreFn::ExtractInterval)),
        args: vec![Expr::Literal(ScalarValue::Utf8(field)), arg],
    })
}

fn coerce_function(func: ScalarFunc, args: Vec<Expr>) -> Result<Expr> {
    // size / element_at / `x[i]` of a map, `s['a']` of a struct: the map and struct functions.
    if let (ScalarFunc::Builtin(b), Some(first)) = (func, args.first()) {
        let by_name = matches!(args.get(1), Some(Expr::Literal(ScalarValue::Utf8(_))));
        if let Some(n) = crate::expr::NestedFn::for_nested_argument(b, &first.data_type()?, by_name) {
            let args = if matches!(n, crate::expr::NestedFn::GetField | crate::expr::NestedFn::ArrayStructField) { struct_field_by_subscript(args)? } else { args };
            return coerce_function(ScalarFunc::Builtin(crate::expr::Builtin::Nested(n)), args);
        }
    }
    let args = match func {
        ScalarFunc::Length if args.len() == 1 && args[0].data_type()? == DataType::Binary => args,
        ScalarFunc::Lower
        | ScalarFunc::Upper
        | ScalarFunc::Length
        | ScalarFunc::Concat
        | ScalarFunc::Trim
        | ScalarFunc::LTrim
        | ScalarFunc::RTrim
        | ScalarFunc::Replace => {
            args.into_iter().map(string_arg).collect::<Result<Vec<_>>>()?
        }
        ScalarFunc::Substring => {
            let mut it = args.into_iter();
            let mut out = vec![];
            if let Some(s) = it.next() {
                out.push(string_arg(s)?);
            }
            for a in it {
                out.push(cast(a, &DataType::Int32)?);
            }
            out
        }
        ScalarFunc::Coalesce => {
            let mut t = DataType::Null;
            for a in &args {
                let at = a.data_type()?;
                t = match common_type(&t, &at) {
                    Some(t) => t,
                    None => return Err(data_diff("coalesce", args.iter())),
                };
            }
            args.into_iter().map(|a| cast(a, &t)).collect::<Result<_>>()?
        }
        ScalarFunc::DateDiff => args.into_iter().map(|a| cast(a, &DataType::Date32)).collect::<Result<Vec<_>>>()?,
        ScalarFunc::DateAdd | ScalarFunc::DateSub | ScalarFunc::Year => {
            let mut it = args.into_iter();
            let mut out = vec![];
            if let Some(d) = it.next() {
                let t = d.data_type()?;
                if func == ScalarFunc::Year && (is_interval(&t) || t == crate::types::interval::CALENDAR) {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                        format!("Cannot resolve \"year({d})\" due to data type mismatch: the parameter requires the \"DATE\" type, however \"{d}\" has the type \"{}\".", crate::types::sql_type_name(&t), d = sql_name(&d)),
                    ));
                }
                out.push(cast(d, &DataType::Date32)?);
            }
            for a in it {
                let t = a.data_type()?;
                if func != ScalarFunc::Year && !matches!(t, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Null) && !is_string(&t) {
                    return Err(unexpected_input(&Expr::Function { func, args: out.iter().cloned().chain([a.clone()]).collect() }, "second", DAY_COUNT_TYPES, &a));
                }
                out.push(cast(a, &DataType::Int32)?);
            }
            out
        }
        ScalarFunc::Abs | ScalarFunc::Round => {
            let mut it = args.into_iter();
            let mut out = vec![];
            if let Some(x) = it.next() {
                let t = x.data_type()?;
                out.push(if is_string(&t) { cast(x, &DataType::Float64)? } else { x });
            }
            for a in it {
                out.push(cast(a, &DataType::Int32)?);
            }
            out
        }
        ScalarFunc::Rand | ScalarFunc::MightContain => args,
        // TRY_CAST tolerates values that fail at run time, not a cast Spark does not have.
        ScalarFunc::Builtin(crate::expr::Builtin::TryCast(_)) => {
            if let [child, target] = args.as_slice() {
                let (from, to) = (child.data_type()?, target.data_type()?);
                if from != to && !can_cast(&from, &to) {
                    return Err(cast_error("try_cast", child, &from, &to));
                }
            }
            args
        }
        ScalarFunc::Builtin(b) => b.coerce(args)?,
    };
    // abs(NULL), round(NULL): Spark casts a NULL to a numeric input's default, DOUBLE.
    let mut args = args;
    if let (ScalarFunc::Abs | ScalarFunc::Round, Some(first)) = (func, args.first_mut()) {
        if first.data_type()? == DataType::Null {
            *first = cast(std::mem::replace(first, Expr::Literal(ScalarValue::Null(DataType::Null))), &DataType::Float64)?;
        }
    }
    for a in &args {
        let t = a.data_type()?;
        let ok = match func {
            ScalarFunc::Abs | ScalarFunc::Round => is_numeric(&t) || t == DataType::Null || (func == ScalarFunc::Abs && is_interval(&t)),
            _ => true,
        };
        if !ok {
            return Err(KilnError::analysis(
                "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                format!("Cannot resolve \"{}({})\": the input must be numeric, but has type \"{}\".", func.name(), sql_name(&a), spark_type_name(&t)),
            ));
        }
    }
    Ok(Expr::Function { func, args })
}

/// `s['a']`: the subscript must be a string literal naming a field (case-insensitively).
fn struct_field_by_subscript(args: Vec<Expr>) -> Result<Vec<Expr>> {
    let mut it = args.into_iter();
    let (Some(s), Some(key)) = (it.next(), it.next()) else { return Err(KilnError::internal("struct subscript arity")) };
    let Expr::Literal(ScalarValue::Utf8(name)) = &key else {
        return Err(KilnError::analysis(
            "INVALID_EXTRACT_FIELD_TYPE",
            format!("Field name should be a non-null string literal, but it's {key}."),
        ));
    };
    let t = match s.data_type()? {
        DataType::List(f) => f.data_type().clone(),
        t => t,
    };
    let field = super::resolve::struct_field(&t, name)?;
    Ok(vec![s, Expr::Literal(ScalarValue::Utf8(field))])
}

/// Arithmetic where an operand is an interval value (a column, or a literal not folded by
/// [`interval_operand`]), and `date - date` / `ts - ts`, as Spark's ResolveBinaryArithmetic:
/// interval ± interval of one family (widened), date ± year-month or day interval, timestamp ±
/// interval (TimeAdd), interval * / number (the interval first). None for other operands.
fn interval_binary(op: BinaryOp, left: Expr, right: Expr, lt: &DataType, rt: &DataType, original: &Expr) -> Result<Option<Expr>> {
    use crate::types::interval::{widest, DAY};
    let rebuild = |l: Expr, r: Expr| Expr::Binary { op, left: Box::new(l), right: Box::new(r) };
    let (ivl, ivr) = (is_interval(lt), is_interval(rt));
    let temporal = |t: &DataType| matches!(t, DataType::Date32 | DataType::Timestamp(..));
    let numeric = |t: &DataType| is_numeric(t) || *t == DataType::Null;
    let plus_minus = matches!(op, BinaryOp::Plus | BinaryOp::Minus);
    let calendar = crate::types::interval::CALENDAR;
    Ok(Some(match (lt, rt) {
        // A date plus or minus a calendar interval: a date (Spark's DateAddInterval).
        (DataType::Date32, c) if plus_minus && *c == calendar => {
            let iv = if op == BinaryOp::Minus { Expr::Negative(Box::new(right)) } else { right };
            Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::DateAddInterval)), args: vec![left, iv] }
        }
        (c, DataType::Date32) if op == BinaryOp::Plus && *c == calendar => return interval_binary(op, right, left, rt, lt, original),
        // A timestamp plus or minus a calendar interval: TimeAdd of its months, days and time.
        (v, c) if plus_minus && *c == calendar && (matches!(v, DataType::Timestamp(..)) || is_string(v) || *v == DataType::Null) => {
            let iv = if op == BinaryOp::Minus { Expr::Negative(Box::new(right)) } else { right };
            let ts = if matches!(v, DataType::Timestamp(..)) { left } else { cast(left, &crate::types::timestamp_type(false))? };
            Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::TimeAdd(crate::types::time_zone::Zone::UTC)), args: vec![ts, iv.clone(), iv] }
        }
        (c, v) if op == BinaryOp::Plus && *c == calendar && matches!(v, DataType::Timestamp(..)) => return interval_binary(op, right, left, rt, lt, original),
        // Calendar intervals add to each other and scale by a number (as a double).
        (a, b) if plus_minus && *a == calendar && *b == calendar => rebuild(left, right),
        (c, n) if matches!(op, BinaryOp::Multiply | BinaryOp::Divide) && *c == calendar && numeric(n) => rebuild(left, cast(right, &DataType::Float64)?),
        (n, c) if op == BinaryOp::Multiply && *c == calendar && numeric(n) => return interval_binary(op, right, left, rt, lt, original),
        // Spark's IntegralDivide of two intervals of one family: a bigint.
        _ if op == BinaryOp::IntDivide && ivl && ivr => {
            let t = crate::types::interval::wider_interval(lt, rt).ok_or_else(|| mismatch(original, lt, rt))?;
            rebuild(cast(left, &t)?, cast(right, &t)?)
        }
        // NULL meeting an interval in + or - is of its type (Spark: `interval '2' year + null` is an interval year).
        (_, DataType::Null) if plus_minus && ivl => rebuild(left, cast(right, lt)?),
        (DataType::Null, _) if plus_minus && ivr => rebuild(cast(left, rt)?, right),
        _ if plus_minus && ivl && ivr => {
            // Year-month and day-time: Spark adds a day-time interval as to a timestamp
            // (TimeAdd's input error) except in `day-time - year-month`.
            let t = crate::types::interval::wider_interval(lt, rt).ok_or_else(|| {
                if op == BinaryOp::Minus && is_year_month(rt) { mismatch(original, lt, rt) } else { unexpected_input(original, "first", TIMESTAMP_TYPES, if is_year_month(lt) { &left } else { &right }) }
            })?;
            rebuild(cast(left, &t)?, cast(right, &t)?)
        }
        (v, _) if plus_minus && ivr && (temporal(v) || is_string(v) || *v == DataType::Null) => {
            let iv = if op == BinaryOp::Minus { Expr::Negative(Box::new(right)) } else { right };
            match v {
                // Spark's DateAddYMInterval and DateAdd of the interval's days keep a date.
                DataType::Date32 if is_year_month(rt) || *rt == DAY => Expr::Binary { op: BinaryOp::Plus, left: Box::new(left), right: Box::new(iv) },
                _ => {
                    let ts = if matches!(v, DataType::Timestamp(..)) { left } else { cast(left, &crate::types::timestamp_type(false))? };
                    let (us, months) = if is_year_month(rt) {
                        (Expr::Literal(ScalarValue::Int64(0)), iv)
                    } else {
                        (iv, Expr::Literal(ScalarValue::Int32(0)))
                    };
                    Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::TimeAdd(crate::types::time_zone::Zone::UTC)), args: vec![ts, us, months] }
                }
            }
        }
        (_, v) if op == BinaryOp::Plus && ivl && (temporal(v) || is_string(v)) => return interval_binary(op, right, left, rt, lt, original),
        (DataType::Date32, DataType::Date32) if op == BinaryOp::Minus && super::session::flags().legacy_interval => calendar_difference(left, right),
        (DataType::Date32, DataType::Date32) if op == BinaryOp::Minus => rebuild(left, right),
        (a, b) if op == BinaryOp::Minus && temporal(a) && temporal(b) => {
            let t = crate::types::timestamp_type(false);
            let (left, right) = (cast(left, &t)?, cast(right, &t)?);
            if super::session::flags().legacy_interval { calendar_difference(left, right) } else { rebuild(left, right) }
        }
        (_, n) if matches!(op, BinaryOp::Multiply | BinaryOp::Divide) && ivl && numeric(n) && !ivr => {
            // Spark's MultiplyDTInterval / DivideYMInterval are of the widest type of the family.
            let l = if widest(lt) != *lt { cast(left, &widest(lt))? } else { left };
            rebuild(l, right)
        }
        (n, _) if op == BinaryOp::Multiply && ivr && numeric(n) && !ivl => return interval_binary(op, right, left, rt, lt, original),
        _ if ivl || ivr => return Err(mismatch(original, lt, rt)),
        _ => return Ok(None),
    }))
}

/// `end - start` of two dates or two timestamps as a calendar interval (Spark's SubtractDates and
/// SubtractTimestamps under `spark.sql.legacy.interval.enabled`).
fn calendar_difference(end: Expr, start: Expr) -> Expr {
    Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::CalendarDifference)), args: vec![end, start] }
}

/// `v ± INTERVAL ...` or `INTERVAL ... + v`: the value, the interval and whether it is subtracted.
fn interval_operand<'a>(left: &'a Expr, right: &'a Expr, op: BinaryOp) -> Option<(&'a Expr, &'a ScalarValue, bool)> {
    let is_iv = |e: &Expr| matches!(e, Expr::Literal(ScalarValue::IntervalMicros(..) | ScalarValue::IntervalMonths(..)))
        || e.data_type().is_ok_and(|t| is_interval(&t));
    if [left, right].iter().any(|e| e.data_type().ok() == Some(DataType::Null)) {
        return None;
    }
    match (op, left, right) {
        (BinaryOp::Plus | BinaryOp::Minus, v, Expr::Literal(iv)) if is_iv(right) && !is_iv(v) => {
            // A date plus whole days stays date_add.
            if matches!(iv, ScalarValue::IntervalMicros(_, 0, 0)) && v.data_type().ok() == Some(DataType::Date32) {
                return None;
            }
            Some((v, iv, op == BinaryOp::Minus))
        }
        (BinaryOp::Plus, Expr::Literal(iv), v) if is_iv(left) && !is_iv(v) => {
            if matches!(iv, ScalarValue::IntervalMicros(_, 0, 0)) && v.data_type().ok() == Some(DataType::Date32) {
                return None;
            }
            Some((v, iv, false))
        }
        _ => None,
    }
}

/// Spark's date/timestamp ± interval: a date plus months is add_months; otherwise the value
/// is a timestamp (a date becomes one) moved by months, then microseconds (TimeAdd).
fn interval_arithmetic(value: Expr, iv: ScalarValue, negate: bool, original: &Expr) -> Result<Expr> {
    let t = value.data_type()?;
    let sign = if negate { -1 } else { 1 };
    let iv_type = iv.data_type();
    let (micros, months) = match iv {
        ScalarValue::IntervalMicros(us, ..) => (us * sign, 0),
        ScalarValue::IntervalMonths(m, ..) => (0, m * sign as i32),
        _ => return Err(KilnError::internal("not an interval")),
    };
    let value = match &t {
        DataType::Date32 if micros == 0 => {
            let n = Expr::Literal(ScalarValue::Int32(months));
            return Ok(Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::AddMonths), args: vec![value, n] });
        }
        DataType::Timestamp(..) => value,
        DataType::Date32 | DataType::Null => cast(value, &crate::types::timestamp_type(false))?,
        s if is_string(s) => cast(value, &crate::types::timestamp_type(false))?,
        other if is_year_month(&iv_type) => return Err(mismatch(original, other, &iv_type)),
        other => {
            return Err(KilnError::analysis(
                "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                format!("Cannot resolve \"{}\" due to data type mismatch: an interval is added to a date or a timestamp, not to \"{}\".", sql_name(original), crate::types::sql_type_name(other)),
            ))
        }
    };
    Ok(Expr::Function {
        func: ScalarFunc::Builtin(crate::expr::Builtin::TimeAdd(crate::types::time_zone::Zone::UTC)),
        args: vec![value, Expr::Literal(ScalarValue::Int64(micros)), Expr::Literal(ScalarValue::Int32(months))],
    })
}
