//! Built-in scalar functions with Spark's semantics.

use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, Float64Array, Int32Array, PrimitiveArray, StringArray};
use arrow::compute::kernels::concat_elements::concat_elements_utf8;
use arrow::compute::{date_part, DatePart};
use arrow::datatypes::{i256, DataType, Date32Type, Decimal128Type, Float64Type, Int32Type, Int64Type};
use arrow::record_batch::RecordBatch;

use super::arithmetic::try_binary;
use super::cast::{cast, strings};
use super::decimal::{fit, rescale, round_integral, Digits};
use super::errors::{arithmetic_overflow, decimal_out_of_range};
use super::{evaluate, evaluate_rows, scatter};
use crate::error::{KilnError, Result};
use super::Primitive;
use crate::expr::{Attribute, Expr, ScalarFunc};
use crate::types::{format_decimal, ScalarValue};

/// Evaluates `func(args)`; `result` is the node's type from `Expr::data_type`.
pub(super) fn call(func: ScalarFunc, args: &[Expr], result: &DataType, batch: &RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    match func {
        ScalarFunc::Coalesce => return coalesce(args, result, batch, input),
        ScalarFunc::Rand => return rand(args, batch.num_rows()),
        ScalarFunc::MightContain => return crate::expr::bloom::might_contain(args, batch, input),
        ScalarFunc::Builtin(crate::expr::Builtin::More(m)) if m.is_try() => return try_eval(args, result, batch, input),
        ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::Legacy)) => return super::legacy::legacy(args, result, batch, input),
        // Spark's typeof reads its argument's type, never its value (`typeof(round(127Y, -1))`).
        ScalarFunc::Builtin(crate::expr::Builtin::TypeOf) => {
            let t = args.first().ok_or_else(|| KilnError::internal("typeof lacks its argument"))?.data_type()?;
            return Ok(Arc::new(StringArray::from(vec![crate::types::spark_type_name(&t); batch.num_rows()])));
        }
        _ => {}
    }
    let values = args.iter().map(|a| evaluate(a, batch, input)).collect::<Result<Vec<_>>>()?;
    let arg = |i: usize| values.get(i).ok_or_else(|| KilnError::internal(format!("{} lacks argument {i}", func.name())));
    match func {
        ScalarFunc::Lower => map_strings(arg(0)?, |s| s.to_lowercase()),
        ScalarFunc::Upper => map_strings(arg(0)?, |s| s.to_uppercase()),
        // Spark's length of bytes is their count.
        ScalarFunc::Length if arg(0)?.data_type() == &DataType::Binary => {
            Ok(Arc::new(arg(0)?.as_binary::<i32>().iter().map(|v| v.map(|v| v.len() as i32)).collect::<Int32Array>()))
        }
        ScalarFunc::Length => {
            let s = strings(arg(0)?)?;
            Ok(Arc::new(s.iter().map(|v| v.map(|v| v.chars().count() as i32)).collect::<Int32Array>()))
        }
        ScalarFunc::Substring => substring(arg(0)?, arg(1)?, values.get(2)),
        ScalarFunc::Abs => abs(arg(0)?),
        ScalarFunc::Round => round(arg(0)?, round_scale(args)?, result),
        ScalarFunc::Concat => concat(&values, batch.num_rows()),
        ScalarFunc::DateAdd => date_add(arg(0)?, arg(1)?, false),
        ScalarFunc::DateSub => date_add(arg(0)?, arg(1)?, true),
        ScalarFunc::Year => match arg(0)?.data_type() {
            DataType::Null => Ok(new_null_array(&DataType::Int32, batch.num_rows())),
            _ => Ok(date_part(arg(0)?, DatePart::Year)?),
        },
        // Spark's trim functions remove spaces only, not other whitespace.
        ScalarFunc::Trim | ScalarFunc::LTrim | ScalarFunc::RTrim if values.len() == 2 => trim_chars(func, arg(0)?, arg(1)?),
        ScalarFunc::Trim => map_strings(arg(0)?, |s| s.trim_matches(' ').to_string()),
        ScalarFunc::LTrim => map_strings(arg(0)?, |s| s.trim_start_matches(' ').to_string()),
        ScalarFunc::RTrim => map_strings(arg(0)?, |s| s.trim_end_matches(' ').to_string()),
        ScalarFunc::Replace => replace(arg(0)?, arg(1)?, values.get(2)),
        ScalarFunc::DateDiff => date_diff(arg(0)?, arg(1)?),
        ScalarFunc::Builtin(b) => b.eval(&values, batch.num_rows(), result),
        ScalarFunc::Coalesce | ScalarFunc::Rand | ScalarFunc::MightContain => Err(KilnError::internal("handled above")),
    }
}

/// try_add and the other try_ arithmetic: the operation, with NULL on the rows where it fails
/// (Spark's TryEval). A batch without failures is evaluated once; else row by row.
fn try_eval(args: &[Expr], result: &DataType, batch: &RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    let [e] = args else { return Err(KilnError::internal("try_ arithmetic takes its operation")) };
    match evaluate(e, batch, input) {
        Err(KilnError::Execution(_)) => {
            let rows = (0..batch.num_rows() as u32).filter_map(|i| evaluate_rows(e, batch, input, &[i]).ok().map(|a| (a, vec![i])));
            scatter(batch.num_rows(), result, rows.collect())
        }
        other => other,
    }
}

/// replace(str, search, replacement = ''): every occurrence; an empty search changes nothing.
fn replace(s: &ArrayRef, search: &ArrayRef, replacement: Option<&ArrayRef>) -> Result<ArrayRef> {
    let (s, search) = (strings(s)?, strings(search)?);
    let replacement = replacement.map(strings).transpose()?;
    let out: StringArray = (0..s.len())
        .map(|i| {
            if s.is_null(i) || search.is_null(i) || replacement.as_ref().is_some_and(|r| r.is_null(i)) {
                return None;
            }
            let (v, from) = (s.value(i), search.value(i));
            let to = replacement.as_ref().map_or("", |r| r.value(i));
            Some(if from.is_empty() { v.to_string() } else { v.replace(from, to) })
        })
        .collect();
    Ok(Arc::new(out))
}

/// datediff(end, start) in days.
fn date_diff(end: &ArrayRef, start: &ArrayRef) -> Result<ArrayRef> {
    let (end, start) = (cast(end, &DataType::Date32)?, cast(start, &DataType::Date32)?);
    let (end, start) = (end.primitive::<Date32Type>()?, start.primitive::<Date32Type>()?);
    let out: Int32Array = end.iter().zip(start.iter()).map(|(e, s)| e?.checked_sub(s?)).collect();
    Ok(Arc::new(out))
}

/// trim / ltrim / rtrim of the characters of `chars` (any order, any count) from `s`.
fn trim_chars(func: ScalarFunc, s: &ArrayRef, chars: &ArrayRef) -> Result<ArrayRef> {
    let (s, chars) = (strings(s)?, strings(chars)?);
    Ok(Arc::new(
        s.iter()
            .zip(chars.iter())
            .map(|(s, c)| {
                let (s, c) = (s?, c?);
                let set = |x: char| c.contains(x);
                Some(match func {
                    ScalarFunc::LTrim => s.trim_start_matches(set),
                    ScalarFunc::RTrim => s.trim_end_matches(set),
                    _ => s.trim_matches(set),
                })
            })
            .collect::<StringArray>(),
    ))
}

fn map_strings(a: &ArrayRef, f: impl Fn(&str) -> String) -> Result<ArrayRef> {
    let s = strings(a)?;
    Ok(Arc::new(s.iter().map(|v| v.map(&f)).collect::<StringArray>()))
}

/// An integer argument as Int32 (narrower/wider integers are cast, ANSI-checked).
fn ints(a: &ArrayRef) -> Result<Int32Array> {
    Ok(cast(a, &DataType::Int32)?.primitive::<Int32Type>()?.clone())
}

/// Spark's `UTF8String.substringSQL`: 1-based; 0 acts as 1; negative counts from the end.
pub(crate) fn substring_sql(s: &str, pos: i32, len: i32) -> &str {
    let ascii = s.is_ascii();
    let chars = if ascii { s.len() } else { s.chars().count() } as i64;
    let (pos, len) = (pos as i64, len as i64);
    let start = if pos > 0 {
        pos - 1
    } else if pos < 0 {
        chars + pos
    } else {
        0
    };
    let end = (start + len).min(chars);
    let start = start.max(0);
    if start >= end {
        return "";
    }
    let (start, end) = (start as usize, end as usize);
    if ascii {
        return &s[start..end];
    }
    let byte = |n: usize| s.char_indices().nth(n).map_or(s.len(), |(b, _)| b);
    &s[byte(start)..byte(end)]
}

fn substring(s: &ArrayRef, pos: &ArrayRef, len: Option<&ArrayRef>) -> Result<ArrayRef> {
    let s = strings(s)?;
    let pos = ints(pos)?;
    let len = len.map(ints).transpose()?;
    let out: StringArray = (0..s.len())
        .map(|i| {
            if s.is_null(i) || pos.is_null(i) || len.as_ref().is_some_and(|l| l.is_null(i)) {
                return None;
            }
            let l = len.as_ref().map_or(i32::MAX, |l| l.value(i));
            Some(substring_sql(s.value(i), pos.value(i), l))
        })
        .collect();
    Ok(Arc::new(out))
}

fn abs(a: &ArrayRef) -> Result<ArrayRef> {
    let dt = a.data_type().clone();
    Ok(match &dt {
        DataType::Int8 => checked_abs::<arrow::datatypes::Int8Type>(a, &dt)?,
        DataType::Int16 => checked_abs::<arrow::datatypes::Int16Type>(a, &dt)?,
        DataType::Int32 => checked_abs::<Int32Type>(a, &dt)?,
        DataType::Int64 => checked_abs::<Int64Type>(a, &dt)?,
        DataType::Float32 => Arc::new(a.primitive::<arrow::datatypes::Float32Type>()?.unary::<_, arrow::datatypes::Float32Type>(f32::abs)),
        DataType::Float64 => Arc::new(a.primitive::<Float64Type>()?.unary::<_, Float64Type>(f64::abs)),
        DataType::Decimal128(p, s) => Arc::new(
            a.primitive::<Decimal128Type>()?.unary::<_, Decimal128Type>(i128::abs).with_precision_and_scale(*p, *s)?,
        ),
        DataType::Null => a.clone(),
        t if crate::types::interval::is_interval(t) => super::interval::abs(a)?,
        other => return Err(KilnError::internal(format!("abs of {other}"))),
    })
}

/// abs() of an integral array: the smallest value has no absolute value in its type (ANSI: an error).
fn checked_abs<T: arrow::datatypes::ArrowPrimitiveType>(a: &ArrayRef, dt: &DataType) -> Result<ArrayRef> {
    use arrow::datatypes::ArrowNativeTypeOp;
    let out = a.primitive::<T>()?.try_unary::<_, T, _>(|v| {
        if v.is_lt(T::Native::ZERO) {
            v.neg_checked().map_err(|_| arithmetic_overflow(dt, None))
        } else {
            Ok(v)
        }
    })?;
    Ok(Arc::new(out))
}

/// The scale argument of round(), which Spark requires to be foldable.
fn round_scale(args: &[Expr]) -> Result<i32> {
    match args.get(1) {
        None => Ok(0),
        Some(Expr::Literal(ScalarValue::Int32(d))) => Ok(*d),
        Some(Expr::Literal(ScalarValue::Int64(d))) => {
            i32::try_from(*d).map_err(|_| KilnError::unsupported(format!("round() scale {d}")))
        }
        Some(other) => Err(KilnError::unsupported(format!("round() with a non-literal scale {other}"))),
    }
}

fn round(a: &ArrayRef, d: i32, result: &DataType) -> Result<ArrayRef> {
    Ok(match (a.data_type(), result) {
        (DataType::Decimal128(_, s), DataType::Decimal128(rp, rs)) => {
            let (s, rp, rs) = (*s as i32, *rp, *rs);
            let out = a.primitive::<Decimal128Type>()?.try_unary::<_, Decimal128Type, _>(|v| {
                let rounded = if d < s { rescale(i256::from_i128(v), s, d) } else { Some(i256::from_i128(v)) };
                rounded
                    .and_then(|r| rescale(r, d.min(s), rs as i32))
                    .and_then(|r| fit(r, rp))
                    .ok_or_else(|| decimal_out_of_range(&format_decimal(v, s as i8), rp, rs))
            })?;
            Arc::new(out.with_precision_and_scale(rp, rs)?)
        }
        (DataType::Float64, _) => Arc::new(a.primitive::<Float64Type>()?.unary::<_, Float64Type>(|x| round_double(x, d))),
        // Spark rounds a float through its double value (`BigDecimal(f.toDouble)`).
        (DataType::Float32, _) => {
            Arc::new(a.primitive::<arrow::datatypes::Float32Type>()?.unary::<_, arrow::datatypes::Float32Type>(|x| round_double(x as f64, d) as f32))
        }
        (DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64, _) => round_integers(a, |x| round_integral(x, d))?,
        (DataType::Null, _) => a.clone(),
        (other, _) => return Err(KilnError::internal(format!("round of {other}"))),
    })
}

/// Spark rounds a double as `BigDecimal(x).setScale(d, HALF_UP).toDouble`, where BigDecimal(x)
/// is the shortest decimal form of x: round(1.005, 2) = 1.01, round(2.5) = 3.0.
fn round_double(x: f64, d: i32) -> f64 {
    let Some(digits) = Digits::from_f64(x) else { return x };
    if digits.digits.is_empty() {
        return 0.0;
    }
    if digits.point + d as i64 >= digits.digits.len() as i64 {
        return x; // already has at most d fraction digits
    }
    match digits.to_unscaled(d) {
        Some(0) => 0.0,
        Some(v) => format!("{v}e{}", -(d as i64)).parse().unwrap_or(x),
        None => x,
    }
}

/// round/bround of an integer array, `rounded` giving each value's rounding: Spark's ANSI
/// round fails where the result leaves the type (`round(127Y, -1)`).
pub(crate) fn round_integers(a: &ArrayRef, rounded: impl Fn(i128) -> i128) -> Result<ArrayRef> {
    use arrow::datatypes::{Int16Type, Int8Type};
    Ok(match a.data_type() {
        DataType::Int8 => round_typed::<Int8Type>(a, rounded)?,
        DataType::Int16 => round_typed::<Int16Type>(a, rounded)?,
        DataType::Int32 => round_typed::<Int32Type>(a, rounded)?,
        DataType::Int64 => round_typed::<Int64Type>(a, rounded)?,
        other => return Err(KilnError::internal(format!("integer rounding of {other}"))),
    })
}

fn round_typed<T: arrow::datatypes::ArrowPrimitiveType>(a: &ArrayRef, rounded: impl Fn(i128) -> i128) -> Result<ArrayRef>
where
    T::Native: TryFrom<i128> + Into<i128>,
{
    let overflow = || KilnError::exec("[ARITHMETIC_OVERFLOW] Overflow. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22003");
    Ok(Arc::new(a.primitive::<T>()?.try_unary::<_, T, _>(|x| T::Native::try_from(rounded(x.into())).map_err(|_| overflow()))?))
}

/// concat(...): NULL if any argument is NULL.
fn concat(values: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let mut acc = StringArray::from_iter_values(std::iter::repeat_n("", rows));
    for v in values {
        let s = strings(&cast(v, &DataType::Utf8)?)?;
        acc = concat_elements_utf8(&acc, &s)?;
    }
    Ok(Arc::new(acc))
}

/// date_add / date_sub; Spark adds days as plain int arithmetic.
fn date_add(date: &ArrayRef, days: &ArrayRef, subtract: bool) -> Result<ArrayRef> {
    let date = cast(date, &DataType::Date32)?;
    let days = ints(days)?;
    let out: PrimitiveArray<Date32Type> = try_binary(date.primitive::<Date32Type>()?, &days, |d, n| {
        Ok(if subtract { d.wrapping_sub(n) } else { d.wrapping_add(n) })
    })?;
    Ok(Arc::new(out))
}

/// coalesce(...): each argument is evaluated only on the rows still NULL, so a later
/// argument cannot raise an error on rows an earlier one already decided (as Spark).
fn coalesce(args: &[Expr], result: &DataType, batch: &RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    let n = batch.num_rows();
    let mut parts = vec![];
    let mut remaining: Vec<u32> = (0..n as u32).collect();
    for arg in args {
        if remaining.is_empty() {
            break;
        }
        let v = evaluate_rows(arg, batch, input, &remaining)?;
        let nulls = v.logical_nulls();
        let next: Vec<u32> = match &nulls {
            Some(nulls) => remaining.iter().enumerate().filter(|(j, _)| nulls.is_null(*j)).map(|(_, r)| *r).collect(),
            None => vec![],
        };
        parts.push((v, remaining));
        remaining = next;
    }
    // Later parts cover only rows where earlier ones were NULL, so overwriting is right.
    scatter(n, result, parts)
}

/// rand(seed): uniform in [0, 1), SplitMix64 seeded by `seed`. The sequence restarts for each
/// batch (the evaluator has no per-partition state), which is deterministic per seed.
fn rand(args: &[Expr], rows: usize) -> Result<ArrayRef> {
    let seed = match args.first() {
        // The analyzer gives every rand() a seed; an unresolved plan still runs.
        None => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i64),
        Some(Expr::Literal(ScalarValue::Int32(s))) => i64::from(*s),
        Some(Expr::Literal(ScalarValue::Int64(s))) => *s,
        Some(Expr::Literal(ScalarValue::Null(_))) => 0,
        Some(other) => return Err(KilnError::unsupported(format!("rand() with a non-literal seed {other}"))),
    };
    // The expression's identity within the running plan: its arguments' address.
    let values = super::random::draws(args.as_ptr() as usize, seed, rows);
    Ok(Arc::new(Float64Array::from(values)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substring_matches_spark() {
        assert_eq!(substring_sql("hello", 2, 3), "ell");
        assert_eq!(substring_sql("hello", 0, 2), "he");
        assert_eq!(substring_sql("hello", 1, 2), "he");
        assert_eq!(substring_sql("hello", -3, 2), "ll");
        assert_eq!(substring_sql("hello", -10, 3), "");
        assert_eq!(substring_sql("hello", -7, 4), "he");
        assert_eq!(substring_sql("hello", 10, 2), "");
        assert_eq!(substring_sql("hello", 2, -1), "");
        assert_eq!(substring_sql("hello", 3, i32::MAX), "llo");
        assert_eq!(substring_sql("héllo", 2, 2), "él");
        assert_eq!(substring_sql("héllo", -2, i32::MAX), "lo");
    }

    #[test]
    fn double_round_is_half_up_on_the_decimal_form() {
        assert_eq!(round_double(2.5, 0), 3.0);
        assert_eq!(round_double(-2.5, 0), -3.0);
        assert_eq!(round_double(1.005, 2), 1.01);
        assert_eq!(round_double(1234.5, -2), 1200.0);
        assert_eq!(round_double(0.1, 3), 0.1);
        assert_eq!(round_double(-0.4, 0), 0.0);
        assert!(round_double(f64::NAN, 2).is_nan());
        assert_eq!(round_integral(125, -1), 130);
        assert_eq!(round_integral(-125, -1), -130);
        assert_eq!(round_integral(124, -1), 120);
    }
}
