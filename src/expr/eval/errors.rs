//! Spark's ANSI runtime errors, with Spark's error classes and wording.

use arrow::datatypes::DataType;
use arrow::error::ArrowError;

use crate::error::KilnError;
use crate::types::{format_date, format_decimal, ScalarValue};

/// `[ARITHMETIC_OVERFLOW]` for an integral result of type `dt`; `try_fn` names the tolerant variant.
pub(super) fn arithmetic_overflow(dt: &DataType, try_fn: Option<&str>) -> KilnError {
    let what = match dt {
        DataType::Int64 => "long overflow",
        _ => "integer overflow",
    };
    let alternative = try_fn.map(|f| format!(" Use '{f}' to tolerate overflow and return NULL instead.")).unwrap_or_default();
    KilnError::exec(format!("[ARITHMETIC_OVERFLOW] {what}.{alternative}"))
}

/// `[REMAINDER_BY_ZERO]`: `%`, mod and pmod.
pub(super) fn remainder_by_zero() -> KilnError {
    KilnError::exec(
        "[REMAINDER_BY_ZERO] Remainder by zero. Use `try_mod` to tolerate divisor being 0 and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22012",
    )
}

/// `[DIVIDE_BY_ZERO]`.
pub(super) fn divide_by_zero() -> KilnError {
    KilnError::exec(format!(
        "[DIVIDE_BY_ZERO] Division by zero. Use try_divide to tolerate divisor being 0 and return NULL instead."
    ))
}

/// `[NUMERIC_VALUE_OUT_OF_RANGE]`: `value` does not fit `decimal(p,s)`.
pub(super) fn decimal_out_of_range(value: &str, precision: u8, scale: i8) -> KilnError {
    KilnError::exec(format!(
        "[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION] {value} cannot be represented as Decimal({precision}, {scale})."
    ))
}

/// `[CAST_INVALID_INPUT]`: a string that does not parse as `to`.
pub(crate) fn cast_invalid_input(text: &str, to: &DataType) -> KilnError {
    KilnError::exec(format!(
        "[CAST_INVALID_INPUT] The value {} of the type \"STRING\" cannot be cast to {} because it is malformed. \
         Correct the value as per the syntax, or change its target type. \
         Use `try_cast` to tolerate malformed input and return NULL instead.",
        quote(text),
        sql_type(to)
    ))
}

/// `[CAST_OVERFLOW]`: `value` (as SQL text, see `sql_value`) of type `from` does not fit `to`.
pub(super) fn cast_overflow(value: &str, from: &DataType, to: &DataType) -> KilnError {
    KilnError::exec(format!(
        "[CAST_OVERFLOW] The value {value} of the type {} cannot be cast to {} due to an overflow. \
         Use `try_cast` to tolerate overflow and return NULL instead.",
        sql_type(from),
        sql_type(to)
    ))
}

/// Spark's `toSQLType`: `"INT"`, `"DECIMAL(10,2)"`.
pub(super) fn sql_type(dt: &DataType) -> String {
    format!("\"{}\"", crate::types::sql_type_name(dt))
}

/// Spark's `toSQLValue`: a value as SQL literal text (`5L`, `1.5D`, `12.30BD`, `'abc'`).
pub(super) fn sql_value(v: &ScalarValue) -> String {
    match v {
        ScalarValue::Null(_) => "NULL".into(),
        ScalarValue::Int8(x) => format!("{x}Y"),
        ScalarValue::Int16(x) => format!("{x}S"),
        ScalarValue::Int64(x) => format!("{x}L"),
        // A float has no suffix; NaN and the infinities are quoted for doubles too.
        ScalarValue::Float32(x) => format!("CAST('{}' AS FLOAT)", crate::types::java_float(*x)),
        ScalarValue::Float64(x) if !x.is_finite() => format!("CAST('{}' AS DOUBLE)", crate::types::java_double(*x)),
        ScalarValue::Float64(x) => format!("{}D", crate::types::java_double(*x)),
        ScalarValue::Decimal(x, _, s) => format!("{}BD", format_decimal(*x, *s)),
        ScalarValue::Utf8(x) => quote(x),
        ScalarValue::Date32(d) => format!("DATE '{}'", format_date(*d)),
        other => other.to_string(),
    }
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
}

/// An Arrow kernel error on user data, as the Spark error it stands for.
pub(super) fn from_arrow(e: ArrowError, dt: &DataType, try_fn: Option<&str>) -> KilnError {
    match e {
        ArrowError::ArithmeticOverflow(_) => arithmetic_overflow(dt, try_fn),
        ArrowError::DivideByZero => divide_by_zero(),
        other => KilnError::Arrow(other),
    }
}
