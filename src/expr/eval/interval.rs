//! Interval values over arrays (see `types::interval` for the types): `date - date`,
//! `ts - ts`, interval `+ -` interval, interval `* /` number, unary minus, casts. ANSI: overflow
//! and division by zero are errors.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Int32Array, Int64Array};
use arrow::datatypes::{DataType, Date32Type, Decimal128Type, Float64Type, Int64Type, TimestampMicrosecondType};

use crate::error::{KilnError, Result};
use super::Primitive;
use crate::expr::BinaryOp;
use crate::types::interval::{is_day_time, is_interval, is_year_month, parse_interval};
use crate::types::timestamp::MICROS_PER_DAY;

/// `[INTERVAL_ARITHMETIC_OVERFLOW]`; `try_fn` names the tolerant function where Spark suggests one.
pub(crate) fn interval_overflow(try_fn: Option<&str>) -> KilnError {
    match try_fn {
        Some(f) => KilnError::exec(format!(
            "[INTERVAL_ARITHMETIC_OVERFLOW.WITH_SUGGESTION] Integer overflow while operating with intervals. Use '{f}' to tolerate overflow and return NULL instead. SQLSTATE: 22015"
        )),
        None => KilnError::exec("[INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION] Integer overflow while operating with intervals. Try devising appropriate values for the interval parameters. SQLSTATE: 22015"),
    }
}

/// Spark's error for a string that is no interval of type `to`.
fn unmatched_format(text: &str, to: &DataType) -> KilnError {
    use crate::types::interval::{interval_fields, type_name, value_pattern};
    let (pattern, fields) = (value_pattern(to), interval_fields(to));
    let (class, kind, notice) = if is_year_month(to) {
        ("UNMATCHED_FORMAT_STRING", "year-month", "")
    } else {
        ("UNMATCHED_FORMAT_STRING_WITH_NOTICE", "day-time", " Set \"spark.sql.legacy.fromDayTimeString.enabled\" to \"true\" to restore the behavior before Spark 3.0.")
    };
    KilnError::exec(format!(
        "[INVALID_INTERVAL_FORMAT.{class}] Error parsing '{text}' to interval. Please ensure that the value provided is in a valid format for defining an interval. You can reference the documentation for the correct format. Interval string does not match {kind} format of `{pattern}`, `INTERVAL [+|-]'{pattern}' {fields}` when cast to {}: {text}.{notice} SQLSTATE: 22006",
        type_name(to)
    ))
}

fn date_overflow() -> KilnError {
    KilnError::exec("[DATETIME_OVERFLOW] Datetime operation overflow: a date plus an interval. SQLSTATE: 22008")
}

fn divided_by_zero() -> KilnError {
    KilnError::exec("[INTERVAL_DIVIDED_BY_ZERO] Division by zero. Use `try_divide` to tolerate divisor being 0 and return NULL instead. SQLSTATE: 22012")
}

pub(crate) use crate::types::interval::{calendar_parts, day_time_array, micros, months, year_month_array};

/// `l op r` where an operand is an interval, or `date - date` / `ts - ts`; `result` is the
/// node's type. None when these operands are not interval arithmetic.
pub(super) fn binary(op: BinaryOp, l: &ArrayRef, r: &ArrayRef, result: &DataType) -> Option<Result<ArrayRef>> {
    let (lt, rt) = (l.data_type(), r.data_type());
    let calendar = crate::types::interval::CALENDAR;
    if !is_interval(result) && !is_interval(lt) && !is_interval(rt) && *result != calendar {
        return None;
    }
    Some(match (op, lt, rt) {
        (BinaryOp::Plus | BinaryOp::Minus, a, b) if *a == calendar && *b == calendar => calendar_sum(op, l, r),
        (BinaryOp::Multiply | BinaryOp::Divide, a, DataType::Float64) if *a == calendar => calendar_scale(op, l, r),
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
        (BinaryOp::Minus, DataType::Timestamp(..), DataType::Timestamp(..)) => timestamp_difference(l, r).and_then(|d| day_time_array(d, result)),
        (BinaryOp::Plus | BinaryOp::Minus, a, b) if is_year_month(a) && is_year_month(b) => months(l).and_then(|x| {
            let y = months(r)?;
            let (f, name): (fn(i32, i32) -> Option<i32>, _) = if op == BinaryOp::Plus { (i32::checked_add, "try_add") } else { (i32::checked_sub, "try_subtract") };
            let out = arrow::compute::try_binary(&x, &y, |p, q| f(p, q).ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new())))
                .map_err(|_| interval_overflow(Some(name)))?;
            Ok(year_month_array(out, result))
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
    // Spark suggests try_divide where an integral divisor overflows (`i / -1`), nothing else.
    let overflow = || interval_overflow((op == BinaryOp::Divide && r.data_type().is_integer()).then_some("try_divide"));
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
                    Some(q.and_then(|q| i64::try_from(q).ok()).ok_or_else(overflow)?)
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
                i32::try_from(m).map_err(|_| overflow())?;
            }
        }
        out.push(res);
    }
    if ym {
        Ok(year_month_array(out.into_iter().map(|v| v.map(|m| m as i32)).collect(), result))
    } else {
        day_time_array(out.into_iter().collect(), result)
    }
}

/// Two calendar intervals added or subtracted field by field (Spark's Add/Subtract of
/// CalendarIntervalType, months, days and microseconds each exact).
fn calendar_sum(op: BinaryOp, l: &ArrayRef, r: &ArrayRef) -> Result<ArrayRef> {
    let sign = if op == BinaryOp::Minus { -1 } else { 1 };
    let parts = calendar_parts(l)?
        .into_iter()
        .zip(calendar_parts(r)?)
        .map(|(a, b)| match (a, b) {
            (Some((m, d, us)), Some((m2, d2, us2))) => {
                let sum = (|| Some((m.checked_add(m2.checked_mul(sign)?)?, d.checked_add(d2.checked_mul(sign)?)?, us.checked_add(us2.checked_mul(sign as i64)?)?)))();
                sum.map(Some).ok_or_else(|| interval_overflow(None))
            }
            _ => Ok(None),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(calendar_array(parts))
}

/// A calendar interval times or divided by a number (Spark's MultiplyInterval / DivideInterval):
/// each field scaled as a double, months and days truncated, the days' fraction carried into
/// the microseconds (IntervalUtils.fromDoubles).
fn calendar_scale(op: BinaryOp, l: &ArrayRef, r: &ArrayRef) -> Result<ArrayRef> {
    let nums = r.primitive::<arrow::datatypes::Float64Type>()?;
    let mut out = Vec::with_capacity(nums.len());
    for (p, n) in calendar_parts(l)?.into_iter().zip(nums.iter()) {
        let (Some((m, d, us)), Some(n)) = (p, n) else {
            out.push(None);
            continue;
        };
        if op == BinaryOp::Divide && n == 0.0 {
            return Err(divided_by_zero());
        }
        let scale = |v: f64| if op == BinaryOp::Multiply { v * n } else { v / n };
        let (months, days, micros) = (scale(f64::from(m)), scale(f64::from(d)), scale(us as f64));
        let whole = |v: f64| if v.is_finite() && v.trunc().abs() <= f64::from(i32::MAX) { Ok(v.trunc() as i32) } else { Err(interval_overflow(None)) };
        let (tm, td) = (whole(months)?, whole(days)?);
        let micros = (micros + MICROS_PER_DAY as f64 * (days - f64::from(td))).round();
        if !micros.is_finite() || micros.abs() >= 9.223372036854776e18 {
            return Err(interval_overflow(None));
        }
        out.push(Some((tm, td, micros as i64)));
    }
    Ok(calendar_array(out))
}

fn calendar_array(parts: Vec<Option<(i32, i32, i64)>>) -> ArrayRef {
    Arc::new(parts.into_iter().map(|p| p.map(|(m, d, us)| arrow::datatypes::IntervalMonthDayNano::new(m, d, us))).collect::<arrow::array::IntervalMonthDayNanoArray>())
}

/// A date plus a calendar interval (Spark's DateAddInterval, ANSI): its months (the day clamped to
/// the month's end), then its days; an interval with a time part is
/// INVALID_INTERVAL_WITH_MICROSECONDS_ADDITION.
pub(crate) fn date_add_calendar(date: &ArrayRef, iv: &ArrayRef) -> Result<ArrayRef> {
    let d = date.primitive::<Date32Type>()?;
    let parts = calendar_parts(iv)?;
    let mut out = Vec::with_capacity(d.len());
    for (d, p) in d.iter().zip(parts) {
        out.push(match (d, p) {
            (Some(_), Some((_, _, us))) if us != 0 => {
                return Err(KilnError::exec(
                    "[INVALID_INTERVAL_WITH_MICROSECONDS_ADDITION] Cannot add an interval to a date because its microseconds part is not 0. To resolve this, cast the input date to a timestamp, which supports the addition of intervals with non-zero microseconds. SQLSTATE: 22006",
                ))
            }
            (Some(d), Some((m, days, _))) => {
                let moved = crate::expr::builtins::add_months(d, i64::from(m)).and_then(|d| d.checked_add(days));
                Some(moved.ok_or_else(date_overflow)?)
            }
            _ => None,
        });
    }
    Ok(Arc::new(out.into_iter().collect::<arrow::array::Date32Array>()))
}

/// `end - start` of two timestamps in microseconds; overflow is INTERVAL_ARITHMETIC_OVERFLOW.
fn timestamp_difference(end: &ArrayRef, start: &ArrayRef) -> Result<Int64Array> {
    let (e, s) = (end.primitive::<TimestampMicrosecondType>()?, start.primitive::<TimestampMicrosecondType>()?);
    arrow::compute::try_binary::<_, _, _, Int64Type>(e, s, |x, y| x.checked_sub(y).ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new())))
        .map_err(|_| interval_overflow(None))
}

/// `end - start` as a calendar interval (`spark.sql.legacy.interval.enabled`): of dates, the
/// months and days of Java's `Period.between(start, end)`; of timestamps, their microseconds.
pub(crate) fn calendar_difference(end: &ArrayRef, start: &ArrayRef) -> Result<ArrayRef> {
    if end.data_type() == &DataType::Date32 && start.data_type() == &DataType::Date32 {
        let (e, s) = (end.primitive::<Date32Type>()?, start.primitive::<Date32Type>()?);
        let parts = e.iter().zip(s.iter()).map(|(e, s)| Some(period_between(s?, e?)).map(|(m, d)| (m, d, 0i64))).collect();
        return Ok(calendar_array(parts));
    }
    Ok(calendar_array(timestamp_difference(end, start)?.iter().map(|us| us.map(|us| (0, 0, us))).collect()))
}

/// Java's `Period.between(start, end)` as (total months, days), days since epoch.
fn period_between(start: i32, end: i32) -> (i32, i32) {
    use crate::types::{civil_from_days, days_in_month};
    let ((sy, sm, sd), (ey, em, ed)) = (civil_from_days(start as i64), civil_from_days(end as i64));
    let mut months = (ey * 12 + em as i64) - (sy * 12 + sm as i64);
    let mut days = ed as i64 - sd as i64;
    if months > 0 && days < 0 {
        months -= 1;
        let moved = crate::expr::builtins::add_months(start, months).unwrap_or(start);
        days = end as i64 - moved as i64;
    } else if months < 0 && days > 0 {
        months += 1;
        days -= days_in_month(ey, em) as i64;
    }
    // Both fit: at most the months and days between two dates of Spark's range.
    (months as i32, days as i32)
}

/// make_interval(years, months, weeks, days, hours, mins, secs) over coerced arguments (six ints
/// and a decimal(18,6)), as Spark's MakeInterval: ARITHMETIC_OVERFLOW when a part overflows.
pub(crate) fn make_interval(args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let ints: Vec<Int32Array> = (0..6)
        .map(|i| -> Result<Int32Array> {
            match args.get(i) {
                Some(a) => Ok(a.primitive::<arrow::datatypes::Int32Type>()?.clone()),
                None => Ok(Int32Array::from(vec![0; rows])),
            }
        })
        .collect::<Result<_>>()?;
    let secs: Vec<Option<i128>> = match args.get(6) {
        Some(a) => a.primitive::<Decimal128Type>()?.iter().collect(),
        None => vec![Some(0); rows],
    };
    let overflow = || KilnError::exec("[ARITHMETIC_OVERFLOW] overflow. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22003");
    let mut out = Vec::with_capacity(rows);
    for (i, secs) in secs.iter().enumerate() {
        let Some(secs) = secs.filter(|_| ints.iter().all(|a| a.is_valid(i))) else {
            out.push(None);
            continue;
        };
        let v = |k: usize| ints[k].value(i);
        let months = v(0).checked_mul(12).and_then(|y| y.checked_add(v(1))).ok_or_else(overflow)?;
        let days = v(2).checked_mul(7).and_then(|w| w.checked_add(v(3))).ok_or_else(overflow)?;
        // secs is decimal(18,6): its unscaled value is microseconds.
        let micros = i64::try_from(secs)
            .ok()
            .and_then(|us| us.checked_add(v(4) as i64 * 3_600_000_000))
            .and_then(|us| us.checked_add(v(5) as i64 * 60_000_000))
            .ok_or_else(overflow)?;
        out.push(Some((months, days, micros)));
    }
    Ok(calendar_array(out))
}

/// abs(interval), of the interval's type (Spark's Abs); the most negative value overflows.
pub(super) fn abs(a: &ArrayRef) -> Result<ArrayRef> {
    let dt = a.data_type();
    let fail = || arrow::error::ArrowError::ComputeError(String::new());
    if is_year_month(dt) {
        let m = months(a)?.try_unary(|v| v.checked_abs().ok_or_else(fail)).map_err(|_| interval_overflow(None))?;
        return Ok(year_month_array(m, dt));
    }
    let us = micros(a)?.try_unary(|v| v.checked_abs().ok_or_else(fail)).map_err(|_| interval_overflow(None))?;
    day_time_array(us, dt)
}

/// `-interval`; the most negative value overflows.
pub(super) fn negate(a: &ArrayRef) -> Option<Result<ArrayRef>> {
    let dt = a.data_type().clone();
    if dt == crate::types::interval::CALENDAR {
        return Some(calendar_parts(a).and_then(|p| {
            let neg = p
                .into_iter()
                .map(|v| v.map(|(m, d, us)| Some((m.checked_neg()?, d.checked_neg()?, us.checked_neg()?))).map(|x| x.ok_or_else(|| interval_overflow(Some("try_subtract")))).transpose())
                .collect::<Result<Vec<_>>>()?;
            Ok(calendar_array(neg))
        }));
    }
    if is_year_month(&dt) {
        return Some(months(a).and_then(|m| {
            m.try_unary(|v| v.checked_neg().ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new()))).map_err(|_| interval_overflow(None)).map(|m| year_month_array(m, &dt))
        }));
    }
    if is_day_time(&dt) {
        return Some(micros(a).and_then(|m| {
            let n = m.try_unary(|v| v.checked_neg().ok_or_else(|| arrow::error::ArrowError::ComputeError(String::new()))).map_err(|_| interval_overflow(None))?;
            day_time_array(n, &dt)
        }));
    }
    None
}

/// Casts from or to an interval type: within a family (keeping the target's fields), to and
/// from strings, and to and from integral and decimal numbers counting the type's last field.
/// None when neither side is an interval.
pub(super) fn cast(a: &ArrayRef, to: &DataType) -> Option<Result<ArrayRef>> {
    use crate::types::interval::{end_unit, format_interval, truncate};
    let from = a.data_type();
    if *to == crate::types::interval::CALENDAR && matches!(from, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View) {
        // Spark's cast is its safe stringToInterval: NULL for text that is no interval.
        return Some(super::cast::strings(a).map(|s| {
            calendar_array(s.iter().map(|v| v.and_then(crate::types::interval::parse_calendar)).collect())
        }));
    }
    if *from == crate::types::interval::CALENDAR && *to == DataType::Utf8 {
        return Some(calendar_parts(a).map(|p| {
            Arc::new(p.into_iter().map(|v| v.map(|(m, d, us)| crate::types::interval::format_calendar(m, d, us))).collect::<arrow::array::StringArray>()) as ArrayRef
        }));
    }
    if !is_interval(from) && !is_interval(to) {
        return None;
    }
    Some((|| -> Result<ArrayRef> {
        let values = |x: &ArrayRef| -> Result<Int64Array> {
            if is_year_month(x.data_type()) {
                Ok(months(x)?.iter().map(|v| v.map(i64::from)).collect())
            } else {
                micros(x)
            }
        };
        match (from, to) {
            (f, t) if crate::types::interval::wider_interval(f, t).is_some() => {
                interval_array(values(a)?.unary(|v| truncate(v, t)), t)
            }
            (f, DataType::Utf8) => Ok(Arc::new(values(a)?.iter().map(|v| v.map(|v| format_interval(v, f))).collect::<arrow::array::StringArray>())),
            (DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View, t) => {
                let s = super::cast::strings(a)?;
                let mut out = Vec::with_capacity(s.len());
                for v in s.iter() {
                    out.push(match v {
                        None => None,
                        Some(text) => Some(parse_interval(text, t).ok_or_else(|| unmatched_format(text, t))?),
                    });
                }
                interval_array(out.into_iter().collect(), t)
            }
            (f, t) if is_interval(f) => {
                // Spark's interval to integral / decimal: whole units of the last field, a decimal exact.
                let unit = end_unit(f);
                let v = values(a)?;
                match t {
                    DataType::Decimal128(p, s) => {
                        let scale = 10i128.pow(u32::try_from(*s).unwrap_or(0));
                        let mut out = Vec::with_capacity(v.len());
                        for (i, x) in v.iter().enumerate() {
                            out.push(match x {
                                None => None,
                                Some(x) => {
                                    let d = (x as i128).checked_mul(scale).and_then(|n| div_half_up(n, unit as i128));
                                    let fits = d.filter(|d| d.unsigned_abs() < 10u128.pow(u32::from(*p)));
                                    Some(fits.ok_or_else(|| cast_overflow(&format_interval(v.value(i), f), f, t))?)
                                }
                            });
                        }
                        Ok(Arc::new(out.into_iter().collect::<arrow::array::Decimal128Array>().with_precision_and_scale(*p, *s)?))
                    }
                    t if t.is_integer() => {
                        let whole = v.unary::<_, Int64Type>(|x| x / unit);
                        let (lo, hi) = match t {
                            DataType::Int8 => (i8::MIN as i64, i8::MAX as i64),
                            DataType::Int16 => (i16::MIN as i64, i16::MAX as i64),
                            DataType::Int32 => (i32::MIN as i64, i32::MAX as i64),
                            _ => (i64::MIN, i64::MAX),
                        };
                        for (i, w) in whole.iter().enumerate() {
                            if w.is_some_and(|w| w < lo || w > hi) {
                                return Err(cast_overflow(&format_interval(v.value(i), f), f, t));
                            }
                        }
                        Ok(arrow::compute::cast(&(Arc::new(whole) as ArrayRef), t)?)
                    }
                    _ => Err(KilnError::unsupported(format!("casting {} to {}", crate::types::spark_type_name(f), crate::types::spark_type_name(t)))),
                }
            }
            (f, t) if f.is_integer() || matches!(f, DataType::Decimal128(..)) => {
                // Spark's integral / decimal to interval: units of the type's last field.
                let unit = end_unit(t) as i128;
                let (unscaled, scale): (Vec<Option<i128>>, i128) = match f {
                    DataType::Decimal128(_, s) => (a.primitive::<Decimal128Type>()?.iter().collect(), 10i128.pow(u32::try_from(*s).unwrap_or(0))),
                    _ => (arrow::compute::cast(a, &DataType::Int64)?.primitive::<Int64Type>()?.iter().map(|v| v.map(i128::from)).collect(), 1),
                };
                let limit = if is_year_month(t) { i32::MAX as i128 } else { i64::MAX as i128 };
                let mut out = Vec::with_capacity(unscaled.len());
                for u in unscaled {
                    out.push(match u {
                        None => None,
                        Some(u) => {
                            let v = u.checked_mul(unit).and_then(|n| div_half_up(n, scale)).filter(|v| v.unsigned_abs() <= limit as u128);
                            let shown = if scale == 1 { format!("{u}{}", if *f == DataType::Int64 { "L" } else { "" }) } else { crate::types::format_decimal(u, (scale.ilog10()) as i8) };
                            Some(truncate(v.ok_or_else(|| cast_overflow(&shown, f, t))? as i64, t))
                        }
                    });
                }
                interval_array(out.into_iter().collect(), t)
            }
            (f, t) => Err(KilnError::unsupported(format!(
                "casting {} to {}",
                crate::types::spark_type_name(f),
                crate::types::spark_type_name(t)
            ))),
        }
    })())
}

/// Months or microseconds as an array of the interval type `to`.
fn interval_array(values: Int64Array, to: &DataType) -> Result<ArrayRef> {
    if is_year_month(to) {
        let m = values.try_unary(|v| i32::try_from(v).map_err(|_| arrow::error::ArrowError::ComputeError(String::new()))).map_err(|_| interval_overflow(None))?;
        Ok(year_month_array(m, to))
    } else {
        day_time_array(values, to)
    }
}

/// `[CAST_OVERFLOW]` of the value shown as `shown`.
fn cast_overflow(shown: &str, from: &DataType, to: &DataType) -> KilnError {
    KilnError::exec(format!(
        "[CAST_OVERFLOW] The value {shown} of the type \"{}\" cannot be cast to \"{}\" due to an overflow. Use `try_cast` to tolerate overflow and return NULL instead. SQLSTATE: 22003",
        crate::types::sql_type_name(from),
        crate::types::sql_type_name(to)
    ))
}

/// `extract(field FROM interval)`: Spark's ExtractIntervalYears / Months / Days / Hours /
/// Minutes / Seconds (the remainder keeps the interval's sign; seconds as decimal(8,6)).
pub(crate) fn extract(field: &ArrayRef, iv: &ArrayRef, result: &DataType) -> Result<ArrayRef> {
    let f = super::cast::strings(field)?;
    let f = if f.is_valid(0) { f.value(0).to_string() } else { String::new() };
    const HOUR: i64 = 3_600_000_000;
    if *iv.data_type() == crate::types::interval::CALENDAR {
        let p = calendar_parts(iv)?;
        return Ok(match f.as_str() {
            "YEAR" => Arc::new(p.iter().map(|v| v.map(|(m, _, _)| m / 12)).collect::<Int32Array>()) as ArrayRef,
            "MONTH" => Arc::new(p.iter().map(|v| v.map(|(m, _, _)| (m % 12) as i8)).collect::<arrow::array::Int8Array>()),
            "DAY" => Arc::new(p.iter().map(|v| v.map(|(_, d, _)| d)).collect::<Int32Array>()),
            "HOUR" => Arc::new(p.iter().map(|v| v.map(|(_, _, us)| (us / HOUR % 24) as i8)).collect::<arrow::array::Int8Array>()),
            "MINUTE" => Arc::new(p.iter().map(|v| v.map(|(_, _, us)| (us % HOUR / 60_000_000) as i8)).collect::<arrow::array::Int8Array>()),
            _ => Arc::new(p.iter().map(|v| v.map(|(_, _, us)| (us % 60_000_000) as i128)).collect::<arrow::array::Decimal128Array>().with_data_type(result.clone())),
        });
    }
    if is_year_month(iv.data_type()) {
        let m = months(iv)?;
        return Ok(match f.as_str() {
            "YEAR" => Arc::new(m.unary::<_, arrow::datatypes::Int32Type>(|v| v / 12)) as ArrayRef,
            _ => Arc::new(m.unary::<_, arrow::datatypes::Int8Type>(|v| (v % 12) as i8)),
        });
    }
    let us = micros(iv)?;
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
