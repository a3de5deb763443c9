//! Interval values over arrays (see `types::interval` for the types): `date - date`,
//! `ts - ts`, interval `+ -` interval, interval `* /` number, unary minus, casts. ANSI: overflow
//! and division by zero are errors.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, DurationMicrosecondArray, Int32Array, Int64Array, IntervalDayTimeArray};
use arrow::datatypes::{DataType, Date32Type, Decimal128Type, Float64Type, Int64Type, IntervalDayTime, TimestampMicrosecondType};

use crate::error::{KilnError, Result};
use super::Primitive;
use crate::expr::BinaryOp;
use crate::types::interval::{format_day_time, format_year_month, is_day_time, is_interval, is_year_month, parse_interval, DAY};
use crate::types::timestamp::MICROS_PER_DAY;

/// `[INTERVAL_ARITHMETIC_OVERFLOW]`; `try_fn` names the tolerant function where Spark suggests one.
pub(crate) fn interval_overflow(try_fn: Option<&str>) -> KilnError {
    match try_fn {
        Some(f) => KilnError::exec(format!(
            "[INTERVAL_ARITHMETIC_OVERFLOW.WITH_SUGGESTION] Integer overflow while operating with intervals. Use '{f}' to tolerate overflow and return NULL instead. SQLSTATE: 22015"
        )),
        None => KilnError::exec("[INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION] Integer overflow while operating with intervals. SQLSTATE: 22015"),
    }
}

/// Spark's error for a string that is no interval of type `to`.
fn unmatched_format(text: &str, to: &DataType) -> KilnError {
    let (kind, formats) = match crate::types::interval::interval_fields(to) {
        "YEAR TO MONTH" => ("year-month", "`[+|-]y-m`, `INTERVAL [+|-]'[+|-]y-m' YEAR TO MONTH`"),
        "DAY" => ("day-time", "`[+|-]d`, `INTERVAL [+|-]'[+|-]d' DAY`"),
        _ => ("day-time", "`[+|-]d h:m:s.n`, `INTERVAL [+|-]'[+|-]d h:m:s.n' DAY TO SECOND`"),
    };
    KilnError::exec(format!(
        "[INVALID_INTERVAL_FORMAT.UNMATCHED_FORMAT_STRING] Interval string does not match {kind} format of {formats} when cast to {}: {text}. SQLSTATE: 22006",
        crate::types::spark_type_name(to)
    ))
}

fn date_overflow() -> KilnError {
    KilnError::exec("[DATETIME_OVERFLOW] Datetime operation overflow: a date plus an interval. SQLSTATE: 22008")
}

fn divided_by_zero() -> KilnError {
    KilnError::exec("[INTERVAL_DIVIDED_BY_ZERO] Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL instead. SQLSTATE: 22012")
}

/// The months of a year-month interval array.
pub(crate) fn months(a: &ArrayRef) -> Result<Int32Array> {
    match a.data_type() {
        DataType::Interval(arrow::datatypes::IntervalUnit::YearMonth) => {
            Ok(a.primitive::<arrow::datatypes::IntervalYearMonthType>()?.reinterpret_cast::<arrow::datatypes::Int32Type>())
        }
        DataType::Null => Ok(Int32Array::new_null(a.len())),
        other => Err(KilnError::internal(format!("expected a year-month interval, got {other}"))),
    }
}

/// The microseconds of a day-time interval array (`interval day` or DAY TO SECOND).
pub(crate) fn micros(a: &ArrayRef) -> Result<Int64Array> {
    match a.data_type() {
        DataType::Duration(arrow::datatypes::TimeUnit::Microsecond) => {
            Ok(a.primitive::<arrow::datatypes::DurationMicrosecondType>()?.reinterpret_cast::<Int64Type>())
        }
        DataType::Interval(arrow::datatypes::IntervalUnit::DayTime) => {
            Ok(a.primitive::<arrow::datatypes::IntervalDayTimeType>()?.unary(|v| v.days as i64 * MICROS_PER_DAY + v.milliseconds as i64 * 1000))
        }
        DataType::Null => Ok(Int64Array::new_null(a.len())),
        other => Err(KilnError::internal(format!("expected a day-time interval, got {other}"))),
    }
}

/// Months as a year-month interval array.
pub(crate) fn year_month_array(values: Int32Array) -> ArrayRef {
    Arc::new(values.reinterpret_cast::<arrow::datatypes::IntervalYearMonthType>())
}

/// Microseconds as an array of the day-time interval type `to` (`interval day` keeps whole days).
pub(crate) fn day_time_array(values: Int64Array, to: &DataType) -> Result<ArrayRef> {
    if *to == DAY {
        let days: IntervalDayTimeArray = values.try_unary(|us| {
            i32::try_from(us / MICROS_PER_DAY).map(|d| IntervalDayTime::new(d, 0)).map_err(|_| arrow::error::ArrowError::ComputeError("interval day".into()))
        }).map_err(|_| interval_overflow(None))?;
        return Ok(Arc::new(days));
    }
    let out: DurationMicrosecondArray = values.reinterpret_cast();
    Ok(Arc::new(out))
}

/// `l op r` where an operand is an interval, or `date - date` / `ts - ts`; `result` is the
/// node's type. None when these operands are not interval arithmetic.
pub(super) fn binary(op: BinaryOp, l: &ArrayRef, r: &ArrayRef, result: &DataType) -> Option<Result<ArrayRef>> {
    let (lt, rt) = (l.data_type(), r.data_type());
    if !is_interval(result) && !is_interval(lt) && !is_interval(rt) {
        return None;
    }
    Some(match (op, lt, rt) {
        // Spark's IntegralDivide of two intervals: the quotient of months or microseconds.
        (BinaryOp::IntDivide, a, b) if is_interval(a) && is_interval(b) => {
            let raw = |x: &ArrayRef| -> Result<Int64Array> {
                if is_year_month(x.data_type()) {
                    Ok(months(x)?.iter().map(|v| v.map(i64::from)).collect())
                } else {
                    micros(x)
                }
            };
            raw(l).and_then(|x| raw(r).map(|y| (x, y))).and_then(|(x, y)| {
                arrow::compute::kernels::numeric::div(&x, &y).map_err(|e| super::errors::from_arrow(e, &DataType::Int64, Some("try_divide")))
            })
        }
        // date + year-month interval (Spark's DateAddYMInterval, the day clamped) or + days.
        (BinaryOp::Plus, DataType::Date32, b) if is_year_month(b) => months(r).and_then(|m| {
            let d = l.primitive::<Date32Type>()?;
            let mut out = Vec::with_capacity(d.len());
            for (d, m) in d.iter().zip(m.iter()) {
                out.push(match (d, m) {
                    (Some(d), Some(m)) => Some(crate::expr::builtins::add_months(d, m as i64).ok_or_else(date_overflow)?),
                    _ => None,
                });
            }
            Ok(Arc::new(out.into_iter().collect::<arrow::array::Date32Array>()) as ArrayRef)
        }),
        (BinaryOp::Plus, DataType::Date32, b) if is_day_time(b) => micros(r).and_then(|us| {
            let d = l.primitive::<Date32Type>()?;
            let out: arrow::array::Date32Array = arrow::compute::try_binary(d, &us, |d, us| {
                i32::try_from(d as i64 + us / MICROS_PER_DAY).map_err(|_| arrow::error::ArrowError::ComputeError(String::new()))
            })
            .map_err(|_| date_overflow())?;
            Ok(Arc::new(out) as ArrayRef)
        }),
        (BinaryOp::Minus, DataType::Date32, DataType::Date32) => {
            let (a, b) = match (l.primitive::<Date32Type>(), r.primitive::<Date32Type>()) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
            };
            arrow::compute::binary::<_, _, _, Int64Type>(a, b, |x, y| (x as i64 - y as i64) * MICROS_PER_DAY)
                .map_err(KilnError::from)
                .and_then(|d| day_time_array(d, result))
        }
        (BinaryOp::Minus, DataType::Timestamp(..), DataType::Timestamp(..)) => {
            let (a, b) = match (l.primitive::<TimestampMicrosecondType>(), r.primitive::<TimestampMicrosecondType>()) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
            };
            arrow::compute::try_binary::<_, _, _, Int64Type>(a, b, |x, y| x.checked_sub(y).ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new())))
                .map_err(|_| interval_overflow(None))
                .and_then(|d| day_time_array(d, result))
        }
        (BinaryOp::Plus | BinaryOp::Minus, a, b) if is_year_month(a) && is_year_month(b) => months(l).and_then(|x| {
            let y = months(r)?;
            let (f, name): (fn(i32, i32) -> Option<i32>, _) = if op == BinaryOp::Plus { (i32::checked_add, "try_add") } else { (i32::checked_sub, "try_subtract") };
            let out = arrow::compute::try_binary(&x, &y, |p, q| f(p, q).ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new())))
                .map_err(|_| interval_overflow(Some(name)))?;
            Ok(year_month_array(out))
        }),
        (BinaryOp::Plus | BinaryOp::Minus, a, b) if is_day_time(a) && is_day_time(b) => micros(l).and_then(|x| {
            let y = micros(r)?;
            let (f, name): (fn(i64, i64) -> Option<i64>, _) = if op == BinaryOp::Plus { (i64::checked_add, "try_add") } else { (i64::checked_sub, "try_subtract") };
            let out = arrow::compute::try_binary(&x, &y, |p, q| f(p, q).ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new())))
                .map_err(|_| interval_overflow(Some(name)))?;
            day_time_array(out, result)
        }),
        (BinaryOp::Multiply | BinaryOp::Divide, a, _) if is_interval(a) => scale(op, l, r, result),
        _ => Err(KilnError::internal(format!("interval arithmetic {} on {lt} and {rt}", op.symbol()))),
    })
}

/// A number as the exact value `unscaled / 10^scale` per row, or a double.
enum Factor {
    Exact(Vec<Option<(i128, u32)>>),
    Double(Vec<Option<f64>>),
}

fn factor(a: &ArrayRef) -> Result<Factor> {
    Ok(match a.data_type() {
        DataType::Float32 | DataType::Float64 => {
            let d = arrow::compute::cast(a, &DataType::Float64)?;
            Factor::Double(d.primitive::<Float64Type>()?.iter().collect())
        }
        DataType::Decimal128(_, s) => {
            let s = u32::try_from(*s).map_err(|_| KilnError::unsupported("an interval scaled by a decimal of negative scale"))?;
            Factor::Exact(a.primitive::<Decimal128Type>()?.iter().map(|v| v.map(|v| (v, s))).collect())
        }
        t if t.is_integer() => {
            let d = arrow::compute::cast(a, &DataType::Int64)?;
            Factor::Exact(d.primitive::<Int64Type>()?.iter().map(|v| v.map(|v| (v as i128, 0))).collect())
        }
        DataType::Null => Factor::Exact(vec![None; a.len()]),
        other => return Err(KilnError::internal(format!("an interval scaled by {other}"))),
    })
}

/// `n / d` rounded HALF_UP (Spark's `LongMath.divide(.., HALF_UP)` and BigDecimal's setScale).
fn div_half_up(n: i128, d: i128) -> Option<i128> {
    let (q, r) = (n.checked_div(d)?, n.checked_rem(d)?);
    if r.checked_mul(2)?.unsigned_abs() >= d.unsigned_abs() {
        Some(if (n < 0) != (d < 0) { q - 1 } else { q + 1 })
    } else {
        Some(q)
    }
}

/// interval `*` or `/` a number: exact with HALF_UP rounding for integers and decimals,
/// `Math.round` for doubles (as Spark's MultiplyYMInterval / DivideDTInterval ...).
fn scale(op: BinaryOp, l: &ArrayRef, r: &ArrayRef, result: &DataType) -> Result<ArrayRef> {
    let ym = is_year_month(l.data_type());
    let values: Vec<Option<i64>> = if ym { months(l)?.iter().map(|v| v.map(i64::from)).collect() } else { micros(l)?.iter().collect() };
    let f = factor(r)?;
    let mut out = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        let exact = match &f {
            Factor::Exact(x) => x[i].map(|(u, s)| (u, 10i128.pow(s))),
            Factor::Double(_) => None,
        };
        let res: Option<i64> = match (v, &f) {
            (None, _) => None,
            (Some(v), Factor::Exact(_)) => match exact {
                None => None,
                Some((u, p)) => {
                    let v = *v as i128;
                    let q = if op == BinaryOp::Multiply {
                        v.checked_mul(u).and_then(|x| div_half_up(x, p))
                    } else {
                        if u == 0 {
                            return Err(divided_by_zero());
                        }
                        v.checked_mul(p).and_then(|x| div_half_up(x, u))
                    };
                    Some(q.and_then(|q| i64::try_from(q).ok()).ok_or_else(|| interval_overflow(None))?)
                }
            },
            (Some(v), Factor::Double(x)) => match x[i] {
                None => None,
                Some(d) => {
                    if op == BinaryOp::Divide && d == 0.0 {
                        return Err(divided_by_zero());
                    }
                    let q = if op == BinaryOp::Multiply { *v as f64 * d } else { *v as f64 / d };
                    let q = (q + 0.5).floor();
                    if !q.is_finite() || q >= 9.223372036854776e18 || q < -9.223372036854776e18 {
                        return Err(interval_overflow(None));
                    }
                    Some(q as i64)
                }
            },
        };
        if ym {
            if let Some(m) = res {
                i32::try_from(m).map_err(|_| interval_overflow(None))?;
            }
        }
        out.push(res);
    }
    if ym {
        Ok(year_month_array(out.into_iter().map(|v| v.map(|m| m as i32)).collect()))
    } else {
        day_time_array(out.into_iter().collect(), result)
    }
}

/// `-interval`; the most negative value overflows.
pub(super) fn negate(a: &ArrayRef) -> Option<Result<ArrayRef>> {
    let dt = a.data_type().clone();
    if is_year_month(&dt) {
        return Some(months(a).and_then(|m| {
            m.try_unary(|v| v.checked_neg().ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new()))).map_err(|_| interval_overflow(Some("try_subtract"))).map(year_month_array)
        }));
    }
    if is_day_time(&dt) {
        return Some(micros(a).and_then(|m| {
            let n = m.try_unary(|v| v.checked_neg().ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new()))).map_err(|_| interval_overflow(Some("try_subtract")))?;
            day_time_array(n, &dt)
        }));
    }
    None
}

/// Casts from or to an interval type: between day-time types, to and from strings.
/// None when neither side is an interval.
pub(super) fn cast(a: &ArrayRef, to: &DataType) -> Option<Result<ArrayRef>> {
    let from = a.data_type();
    if !is_interval(from) && !is_interval(to) {
        return None;
    }
    Some((|| -> Result<ArrayRef> {
        match (from, to) {
            (f, t) if is_day_time(f) && is_day_time(t) => day_time_array(micros(a)?, to),
            (f, DataType::Utf8) if is_year_month(f) => Ok(Arc::new(months(a)?.iter().map(|v| v.map(format_year_month)).collect::<arrow::array::StringArray>())),
            (f, DataType::Utf8) => {
                let day = *f == DAY;
                Ok(Arc::new(micros(a)?.iter().map(|v| v.map(|us| format_day_time(us, day))).collect::<arrow::array::StringArray>()))
            }
            (DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View, t) => {
                let s = super::cast::strings(a)?;
                let mut out = Vec::with_capacity(s.len());
                for v in s.iter() {
                    out.push(match v {
                        None => None,
                        Some(text) => Some(parse_interval(text, t).ok_or_else(|| unmatched_format(text, t))?),
                    });
                }
                if is_year_month(t) {
                    Ok(year_month_array(out.into_iter().map(|v| v.map(|m| m as i32)).collect()))
                } else {
                    day_time_array(out.into_iter().collect(), t)
                }
            }
            (f, t) => Err(KilnError::unsupported(format!(
                "casting {} to {}",
                crate::types::spark_type_name(f),
                crate::types::spark_type_name(t)
            ))),
        }
    })())
}

/// `extract(field FROM interval)`: Spark's ExtractIntervalYears / Months / Days / Hours /
/// Minutes / Seconds (the remainder keeps the interval's sign; seconds as decimal(8,6)).
pub(crate) fn extract(field: &ArrayRef, iv: &ArrayRef, result: &DataType) -> Result<ArrayRef> {
    let f = super::cast::strings(field)?;
    let f = if f.is_valid(0) { f.value(0).to_string() } else { String::new() };
    if is_year_month(iv.data_type()) {
        let m = months(iv)?;
        return Ok(match f.as_str() {
            "YEAR" => Arc::new(m.unary::<_, arrow::datatypes::Int32Type>(|v| v / 12)) as ArrayRef,
            _ => Arc::new(m.unary::<_, arrow::datatypes::Int8Type>(|v| (v % 12) as i8)),
        });
    }
    let us = micros(iv)?;
    const HOUR: i64 = 3_600_000_000;
    Ok(match f.as_str() {
        "DAY" => Arc::new(us.unary::<_, arrow::datatypes::Int32Type>(|v| (v / MICROS_PER_DAY) as i32)) as ArrayRef,
        "HOUR" => Arc::new(us.unary::<_, arrow::datatypes::Int8Type>(|v| (v % MICROS_PER_DAY / HOUR) as i8)),
        "MINUTE" => Arc::new(us.unary::<_, arrow::datatypes::Int8Type>(|v| (v % HOUR / 60_000_000) as i8)),
        _ => {
            let out: arrow::array::Decimal128Array = us.unary(|v| (v % 60_000_000) as i128);
            Arc::new(out.with_data_type(result.clone()))
        }
    })
}
