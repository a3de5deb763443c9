//! Timestamp built-ins (hour, minute, second, to_timestamp, to_date, date_format,
//! current_timestamp, unix_timestamp, from_unixtime, date_trunc) and `timestamp ± interval`,
//! over microseconds since the epoch (`types/timestamp.rs`). Each reads a TIMESTAMP's fields as
//! the wall-clock time in the zone the analyzer gave the function (the session's), and makes a
//! TIMESTAMP of a wall-clock time in it; a TIMESTAMP_NTZ is a wall-clock time already.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Date32Array, Int32Array, Int64Array, PrimitiveArray, StringArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Int32Type, Int64Type, TimestampMicrosecondType};

use super::Builtin;
use crate::error::{KilnError, Result};
use crate::types::timestamp::{civil, format_with_pattern_in, from_civil, parse_with_pattern, MICROS_PER_DAY, MICROS_PER_SECOND};
use crate::types::parse_date;
use crate::types::time_zone::Zone;
use crate::types::timestamp::{add_months, parse_timestamp_in};

/// True for the seconds field of Spark's EXTRACT / date_part, with its abbreviations: a
/// decimal(8,6) with the fraction (`SecondWithFraction`), not the `second` function's int.
pub fn is_seconds_field(field: &str) -> bool {
    matches!(field.to_ascii_uppercase().as_str(), "SECOND" | "S" | "SEC" | "SECONDS" | "SECS")
}

/// `extract(SECOND FROM e)` and `date_part('SECOND', e)`.
pub fn second_with_fraction(e: crate::expr::Expr) -> crate::expr::Expr {
    crate::expr::Expr::Function { func: crate::expr::ScalarFunc::Builtin(Builtin::SecondWithFraction(Zone::UTC)), args: vec![e] }
}

/// The function a field of Spark's EXTRACT / date_part names, with Spark's abbreviations
/// (`y`, `mon`, `h`, any case); None for another field (seconds: `is_seconds_field`).
pub fn extract_field_function(field: &str) -> Option<&'static str> {
    Some(match field.to_ascii_uppercase().as_str() {
        "YEAR" | "Y" | "YEARS" | "YR" | "YRS" => "year",
        "QUARTER" | "QTR" => "quarter",
        "MONTH" | "MON" | "MONS" | "MONTHS" => "month",
        "WEEK" | "W" | "WEEKS" => "weekofyear",
        "DAY" | "D" | "DAYS" => "day",
        "DAYOFWEEK" | "DOW" => "dayofweek",
        "DAYOFWEEK_ISO" | "DOW_ISO" => "weekday",
        "DOY" => "dayofyear",
        "HOUR" | "H" | "HOURS" | "HR" | "HRS" => "hour",
        "MINUTE" | "M" | "MIN" | "MINS" | "MINUTES" => "minute",
        _ => return None,
    })
}

/// Spark's default pattern of from_unixtime / unix_timestamp.
const DEFAULT_PATTERN: &str = "yyyy-MM-dd HH:mm:ss";

fn micros(a: &ArrayRef) -> Result<PrimitiveArray<TimestampMicrosecondType>> {
    match a.data_type() {
        DataType::Timestamp(..) => Ok(a.as_primitive::<TimestampMicrosecondType>().clone()),
        other => Err(KilnError::internal(format!("a timestamp function over {other}"))),
    }
}

fn strings(a: &ArrayRef) -> Result<StringArray> {
    Ok(cast(a, &DataType::Utf8)?.as_string::<i32>().clone())
}

fn bad_pattern(name: &str, p: &str, e: String) -> KilnError {
    // An error that names its own class (a pattern Spark refuses for another reason).
    if e.starts_with('[') {
        return KilnError::exec(e);
    }
    KilnError::exec(format!("[INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER] Unrecognized datetime pattern '{p}' in {name}: {e}. SQLSTATE: 22007"))
}

fn cannot_parse(text: &str, p: &str) -> KilnError {
    KilnError::exec(format!(
        "[CANNOT_PARSE_TIMESTAMP] Text '{text}' could not be parsed with the pattern '{p}'. Use `try_to_timestamp` to tolerate invalid input string and return NULL instead. SQLSTATE: 22007"
    ))
}

/// The current time in microseconds since the epoch.
fn now() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_micros() as i64)
}

/// Reads `text` as a wall-clock time with `pattern`, or Spark's default forms without one (a
/// zone in the text is applied), as a TIMESTAMP in `zone`.
fn parse(text: &str, pattern: Option<&str>, b: Builtin, zone: Zone) -> Result<i64> {
    let overflow = || KilnError::exec(format!("[DATETIME_OVERFLOW] Datetime operation overflow: '{text}' in {}. SQLSTATE: 22008", b.name()));
    match pattern {
        // Without a pattern, to_timestamp is Spark's cast of the string.
        None if matches!(b, Builtin::ToTimestamp(_)) => {
            parse_timestamp_in(text, zone).ok_or_else(|| super::eval::errors::cast_invalid_input(text, &crate::types::timestamp_type(false)))
        }
        None => parse_timestamp_in(text, zone).ok_or_else(|| cannot_parse(text, "yyyy-MM-dd HH:mm:ss")),
        Some(p) => match parse_with_pattern(text, p).map_err(|e| bad_pattern(b.name(), p, e))?.ok_or_else(|| cannot_parse(text, p))? {
            // A zone in the text fixes the instant; otherwise it is a wall-clock time in `zone`.
            (wall, own) => own.unwrap_or(zone).to_utc(wall).ok_or_else(overflow),
        },
    }
}

/// The zone a zone-aware built-in reads and writes TIMESTAMP wall-clock times in.
fn zone_of(b: Builtin) -> Zone {
    match b {
        Builtin::Hour(z) | Builtin::Minute(z) | Builtin::Second(z) | Builtin::ToTimestamp(z) | Builtin::ToDate(z) | Builtin::UnixTimestamp(z) | Builtin::DateFormat(z)
        | Builtin::FromUnixtime(z) | Builtin::DateTrunc(z) | Builtin::TimeAdd(z) | Builtin::LocalTimestamp(z) | Builtin::SecondWithFraction(z) => z,
        _ => Zone::UTC,
    }
}

/// Evaluates a timestamp built-in over argument arrays of `rows` rows.
pub(super) fn eval(b: Builtin, args: &[ArrayRef], rows: usize, result: &DataType) -> Result<ArrayRef> {
    let zone = zone_of(b);
    let arg = |i: usize| args.get(i).ok_or_else(|| KilnError::internal(format!("{} lacks argument {i}", b.name())));
    let with_type = |a: PrimitiveArray<TimestampMicrosecondType>| -> ArrayRef { Arc::new(a.with_data_type(result.clone())) };
    // A timestamp argument's wall-clock times.
    let local = |a: &ArrayRef| -> Result<PrimitiveArray<TimestampMicrosecondType>> {
        let m = micros(a)?;
        Ok(if matches!(a.data_type(), DataType::Timestamp(_, Some(_))) { m.unary(|v| zone.from_utc(v).unwrap_or(v)) } else { m })
    };
    // The result's TIMESTAMP of a wall-clock time (a TIMESTAMP_NTZ result keeps it).
    let instant = |v: i64| -> Result<i64> {
        if matches!(result, DataType::Timestamp(_, None)) {
            return Ok(v);
        }
        zone.to_utc(v).ok_or_else(|| KilnError::exec(format!("[DATETIME_OVERFLOW] Datetime operation overflow: {} out of range. SQLSTATE: 22008", b.name())))
    };
    let field = |f: fn(i64) -> i32| -> Result<ArrayRef> {
        let out: Int32Array = local(arg(0)?)?.unary(f);
        Ok(Arc::new(out))
    };
    Ok(match b {
        Builtin::Hour(_) => field(|v| civil(v).hour as i32)?,
        Builtin::Minute(_) => field(|v| civil(v).minute as i32)?,
        Builtin::Second(_) => field(|v| civil(v).second as i32)?,
        Builtin::SecondWithFraction(_) => {
            let out: PrimitiveArray<arrow::datatypes::Decimal128Type> = local(arg(0)?)?.unary(|v| v.rem_euclid(60 * MICROS_PER_SECOND) as i128);
            Arc::new(out.with_precision_and_scale(8, 6)?)
        }
        Builtin::CurrentTimestamp => with_type(PrimitiveArray::from_value(now(), rows)),
        Builtin::LocalTimestamp(_) => with_type(PrimitiveArray::from_value(zone.from_utc(now()).unwrap_or_else(now), rows)),
        Builtin::ToTimestamp(_) | Builtin::UnixTimestamp(_) if args.is_empty() || matches!(arg(0)?.data_type(), DataType::Timestamp(..)) => {
            let ts = if args.is_empty() { PrimitiveArray::from_value(now(), rows) } else { micros(arg(0)?)? };
            if matches!(b, Builtin::ToTimestamp(_)) {
                // to_timestamp of a TIMESTAMP_NTZ is its cast to TIMESTAMP.
                let ntz = args.first().is_some_and(|a| matches!(a.data_type(), DataType::Timestamp(_, None)));
                with_type(if ntz { ts.try_unary(instant)? } else { ts })
            } else {
                Arc::new(ts.unary::<_, Int64Type>(|v| v.div_euclid(MICROS_PER_SECOND)))
            }
        }
        Builtin::ToTimestamp(_) | Builtin::UnixTimestamp(_) | Builtin::ToDate(_) => {
            let s = strings(arg(0)?)?;
            let pattern = match args.get(1) {
                Some(p) => Some(strings(p)?),
                None if matches!(b, Builtin::UnixTimestamp(_)) => Some(StringArray::from(vec![DEFAULT_PATTERN; rows])),
                None => None,
            };
            let mut out = Vec::with_capacity(rows);
            for i in 0..rows {
                if s.is_null(i) || pattern.as_ref().is_some_and(|p| p.is_null(i)) {
                    out.push(None);
                    continue;
                }
                let text = s.value(i);
                let p = pattern.as_ref().map(|p| p.value(i));
                out.push(Some(match (b, p) {
                    // to_date without a pattern is cast(s AS DATE).
                    (Builtin::ToDate(_), None) => parse_date(text).ok_or_else(|| cannot_parse(text, "yyyy-MM-dd"))? as i64,
                    _ => parse(text, p, b, zone)?,
                }));
            }
            match b {
                // A parsed instant's date is its date in the session zone, as Spark's.
                Builtin::ToDate(_) => Arc::new(
                    out.into_iter()
                        .map(|v| v.map(|v| if pattern.is_some() { zone.from_utc(v).unwrap_or(v).div_euclid(MICROS_PER_DAY) as i32 } else { v as i32 }))
                        .collect::<Date32Array>(),
                ),
                Builtin::UnixTimestamp(_) => Arc::new(out.into_iter().map(|v| v.map(|v| v.div_euclid(MICROS_PER_SECOND))).collect::<Int64Array>()),
                _ => with_type(out.into_iter().collect()),
            }
        }
        Builtin::DateFormat(_) | Builtin::FromUnixtime(_) => {
            // The instants shown (a TIMESTAMP_NTZ's wall-clock time taken in `zone`).
            let ts: Vec<Option<i64>> = if matches!(b, Builtin::FromUnixtime(_)) {
                let secs = cast(arg(0)?, &DataType::Int64)?;
                secs.as_primitive::<Int64Type>().iter().map(|s| s.and_then(|s| s.checked_mul(MICROS_PER_SECOND))).collect()
            } else if matches!(arg(0)?.data_type(), DataType::Timestamp(_, None)) {
                micros(arg(0)?)?.iter().map(|v| v.map(|v| zone.to_utc(v).unwrap_or(v))).collect()
            } else {
                micros(arg(0)?)?.iter().collect()
            };
            let pattern = match args.get(1) {
                Some(p) => strings(p)?,
                None => StringArray::from(vec![DEFAULT_PATTERN; rows]),
            };
            let mut out = Vec::with_capacity(rows);
            for (i, v) in ts.into_iter().enumerate() {
                out.push(match v {
                    Some(v) if pattern.is_valid(i) => {
                        Some(format_with_pattern_in(v, pattern.value(i), zone).map_err(|e| bad_pattern(b.name(), pattern.value(i), e))?)
                    }
                    _ => None,
                });
            }
            Arc::new(StringArray::from(out))
        }
        Builtin::DateTrunc(_) => {
            let unit = strings(arg(0)?)?;
            let ts = local(arg(1)?)?;
            let mut out = Vec::with_capacity(rows);
            for i in 0..rows {
                if unit.is_null(i) || ts.is_null(i) {
                    out.push(None);
                    continue;
                }
                out.push(truncate(ts.value(i), unit.value(i)).map(instant).transpose()?);
            }
            with_type(out.into_iter().collect())
        }
        Builtin::TimeAdd(_) => {
            let ltz = matches!(arg(0)?.data_type(), DataType::Timestamp(_, Some(_)));
            let ts = micros(arg(0)?)?;
            // The interval parts are literals, or interval columns (`t + i`).
            // A calendar interval gives its days and time as microseconds, and its months.
            let calendar = |a: &ArrayRef| -> Result<Vec<Option<(i32, i32, i64)>>> { crate::expr::eval::interval::calendar_parts(a) };
            let us = match arg(1)? {
                a if *a.data_type() == crate::types::interval::CALENDAR => {
                    let parts = calendar(a)?;
                    let mut out = Vec::with_capacity(parts.len());
                    for p in parts {
                        out.push(match p {
                            Some((_, d, us)) => Some((d as i64).checked_mul(MICROS_PER_DAY).and_then(|d| d.checked_add(us)).ok_or_else(|| {
                                KilnError::exec("[DATETIME_OVERFLOW] Datetime operation overflow: a timestamp plus an interval. SQLSTATE: 22008")
                            })?),
                            None => None,
                        });
                    }
                    out.into_iter().collect::<Int64Array>()
                }
                a if crate::types::interval::is_day_time(a.data_type()) => crate::expr::eval::interval::micros(a)?,
                a => cast(a, &DataType::Int64)?.as_primitive::<Int64Type>().clone(),
            };
            let months = match arg(2)? {
                a if *a.data_type() == crate::types::interval::CALENDAR => calendar(a)?.into_iter().map(|p| p.map(|(m, _, _)| m)).collect::<Int32Array>(),
                a if crate::types::interval::is_year_month(a.data_type()) => crate::expr::eval::interval::months(a)?,
                a => cast(a, &DataType::Int32)?.as_primitive::<Int32Type>().clone(),
            };
            let (us, months) = (&us, &months);
            let mut out = Vec::with_capacity(rows);
            for i in 0..rows {
                if ts.is_null(i) || us.is_null(i) || months.is_null(i) {
                    out.push(None);
                    continue;
                }
                // Months and whole days move the wall-clock time, the rest the instant (Spark's
                // timestampAddMonths then timestampAddDayTime).
                let (days, rest) = (us.value(i) / MICROS_PER_DAY, us.value(i) % MICROS_PER_DAY);
                let v = ts.value(i);
                let moved = if months.value(i) == 0 && days == 0 {
                    Some(v)
                } else if ltz {
                    zone.from_utc(v).and_then(|w| add_months(w, months.value(i))).and_then(|w| w.checked_add(days.checked_mul(MICROS_PER_DAY)?)).and_then(|w| zone.to_utc(w))
                } else {
                    add_months(v, months.value(i)).and_then(|w| w.checked_add(days.checked_mul(MICROS_PER_DAY)?))
                }
                .and_then(|v| v.checked_add(rest));
                out.push(Some(moved.ok_or_else(|| {
                    KilnError::exec("[DATETIME_OVERFLOW] Datetime operation overflow: a timestamp plus an interval. SQLSTATE: 22008")
                })?));
            }
            with_type(out.into_iter().collect())
        }
        other => return Err(KilnError::internal(format!("{} is not a timestamp function", other.name()))),
    })
}

/// date_trunc: the timestamp cut to the start of its unit; NULL for an unknown unit, as Spark.
fn truncate(ts: i64, unit: &str) -> Option<i64> {
    let c = civil(ts);
    let at = |y: i64, m: u32, d: u32, hh: u32, mm: u32, ss: u32, us: u32| from_civil(y, m, d, hh, mm, ss, us);
    match unit.to_ascii_uppercase().as_str() {
        "YEAR" | "YYYY" | "YY" => at(c.year, 1, 1, 0, 0, 0, 0),
        "QUARTER" => at(c.year, (c.month - 1) / 3 * 3 + 1, 1, 0, 0, 0, 0),
        "MONTH" | "MM" | "MON" => at(c.year, c.month, 1, 0, 0, 0, 0),
        "WEEK" => {
            let monday = c.days - (c.days + 3).rem_euclid(7);
            Some(monday * MICROS_PER_DAY)
        }
        "DAY" | "DD" => at(c.year, c.month, c.day, 0, 0, 0, 0),
        "HOUR" => at(c.year, c.month, c.day, c.hour, 0, 0, 0),
        "MINUTE" => at(c.year, c.month, c.day, c.hour, c.minute, 0, 0),
        "SECOND" => at(c.year, c.month, c.day, c.hour, c.minute, c.second, 0),
        "MILLISECOND" => at(c.year, c.month, c.day, c.hour, c.minute, c.second, c.micros / 1000 * 1000),
        "MICROSECOND" => Some(ts),
        _ => None,
    }
}
