//! Spark's ANSI interval types as Arrow types, and their text forms.
//!
//! Spark has `YearMonthIntervalType(start, end)` (months in an int) and
//! `DayTimeIntervalType(start, end)` (microseconds in a long); the fields decide how a value
//! prints, what `extract` may take from it and what a number cast to or from it means. Arrow
//! types carry no fields, so kiln keeps the two widest types as Arrow's own and gives the other
//! eleven a decimal type no other kiln value has (sources and hosts hand kiln Decimal128 only),
//! its scale holding the fields:
//! - `interval year to month`: `Interval(YearMonth)`; `interval year` / `interval month`:
//!   `Decimal32(9, start * 4 + end)`; the value is months;
//! - `interval day to second`: `Duration(Microsecond)`; the other nine: `Decimal64(18, start * 4 + end)`;
//!   the value is microseconds.
//!
//! Field codes are Spark's: YEAR 0, MONTH 1; DAY 0, HOUR 1, MINUTE 2, SECOND 3.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, DurationMicrosecondArray, Int32Array, Int64Array, PrimitiveArray};
use arrow::datatypes::{DataType, Int64Type, IntervalUnit, TimeUnit};

use crate::error::{KilnError, Result};

use super::timestamp::MICROS_PER_DAY;

/// The YEAR field of a year-month interval type.
pub const YEAR: u8 = 0;
/// The MONTH field of a year-month interval type.
pub const MONTH: u8 = 1;
/// The DAY field of a day-time interval type.
pub const DAY_FIELD: u8 = 0;
/// The HOUR field of a day-time interval type.
pub const HOUR: u8 = 1;
/// The MINUTE field of a day-time interval type.
pub const MINUTE: u8 = 2;
/// The SECOND field of a day-time interval type.
pub const SECOND: u8 = 3;

const MICROS_PER_HOUR: i64 = 3_600_000_000;
const MICROS_PER_MINUTE: i64 = 60_000_000;
const MICROS_PER_SECOND: i64 = 1_000_000;

/// `interval year to month`.
pub const YEAR_MONTH: DataType = DataType::Interval(IntervalUnit::YearMonth);
/// `interval day` (the type of `date - date`).
pub const DAY: DataType = DataType::Decimal64(18, 0);
/// `interval day to second`.
pub const DAY_TIME: DataType = DataType::Duration(TimeUnit::Microsecond);

/// Spark's CalendarIntervalType (`interval`: months, days and microseconds; what make_interval
/// gives): Arrow's `Interval(MonthDayNano)` whose third part holds microseconds (Spark's long
/// of microseconds would overflow as nanoseconds).
pub const CALENDAR: DataType = DataType::Interval(IntervalUnit::MonthDayNano);

/// A calendar interval as Spark's CalendarInterval.toString: `1 years 2 months 25 days 5 hours
/// 6 minutes 7.5 seconds`, `0 seconds` when empty.
pub fn format_calendar(months: i32, days: i32, micros: i64) -> String {
    fn unit(parts: &mut Vec<String>, v: i64, name: &str) {
        if v != 0 {
            parts.push(format!("{v} {name}"));
        }
    }
    if months == 0 && days == 0 && micros == 0 {
        return "0 seconds".into();
    }
    let mut parts = vec![];
    unit(&mut parts, (months / 12) as i64, "years");
    unit(&mut parts, (months % 12) as i64, "months");
    unit(&mut parts, days as i64, "days");
    unit(&mut parts, micros / MICROS_PER_HOUR, "hours");
    unit(&mut parts, micros % MICROS_PER_HOUR / MICROS_PER_MINUTE, "minutes");
    let rest = micros % MICROS_PER_MINUTE;
    if rest != 0 {
        let sign = if rest < 0 { "-" } else { "" };
        let (w, f) = (rest.unsigned_abs() / 1_000_000, rest.unsigned_abs() % 1_000_000);
        let frac = if f == 0 { String::new() } else { format!(".{f:06}").trim_end_matches('0').to_string() };
        parts.push(format!("{sign}{w}{frac} seconds"));
    }
    parts.join(" ")
}

/// Text as Spark's stringToInterval reads it into a calendar interval (months, days,
/// microseconds): an optional `interval`, then signed numbers each followed by a unit (year,
/// month, week, day, hour, minute, second, millisecond, microsecond, each also plural); only
/// seconds take a fraction (nanoseconds cut to microseconds). None for anything else.
pub fn parse_calendar(text: &str) -> Option<(i32, i32, i64)> {
    let lower = text.trim().to_ascii_lowercase();
    let mut words = lower.split_whitespace().peekable();
    if words.peek() == Some(&"interval") {
        words.next();
    }
    let (mut months, mut days, mut micros) = (0i32, 0i32, 0i64);
    let mut any = false;
    while let Some(number) = words.next() {
        let unit = words.next()?;
        let unit = unit.strip_suffix('s').unwrap_or(unit);
        let (neg, digits_text) = match number.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, number.strip_prefix('+').unwrap_or(number)),
        };
        let (whole, frac) = digits_text.split_once('.').map_or((digits_text, None), |(w, f)| (w, Some(f)));
        if whole.is_empty() || !whole.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let v: i64 = whole.parse().ok()?;
        let v = if neg { -v } else { v };
        let fraction = match frac {
            None => 0,
            Some(f) if unit == "second" && f.len() <= 9 && f.bytes().all(|c| c.is_ascii_digit()) => {
                let nine: String = f.chars().chain(std::iter::repeat('0')).take(9).collect();
                let us = nine.parse::<i64>().ok()? / 1000;
                if neg { -us } else { us }
            }
            Some(_) => return None,
        };
        let int = |x: i64| i32::try_from(x).ok();
        match unit {
            "year" => months = months.checked_add(int(v.checked_mul(12)?)?)?,
            "month" => months = months.checked_add(int(v)?)?,
            "week" => days = days.checked_add(int(v.checked_mul(7)?)?)?,
            "day" => days = days.checked_add(int(v)?)?,
            "hour" => micros = micros.checked_add(v.checked_mul(MICROS_PER_HOUR)?)?,
            "minute" => micros = micros.checked_add(v.checked_mul(MICROS_PER_MINUTE)?)?,
            "second" => micros = micros.checked_add(v.checked_mul(MICROS_PER_SECOND)?)?.checked_add(fraction)?,
            "millisecond" => micros = micros.checked_add(v.checked_mul(1_000)?)?,
            "microsecond" => micros = micros.checked_add(v)?,
            _ => return None,
        }
        any = true;
    }
    any.then_some((months, days, micros))
}

/// The year-month interval type of fields `start..=end`.
pub fn year_month(start: u8, end: u8) -> DataType {
    if (start, end) == (YEAR, MONTH) {
        YEAR_MONTH
    } else {
        DataType::Decimal32(9, (start * 4 + end) as i8)
    }
}

/// The day-time interval type of fields `start..=end`.
pub fn day_time(start: u8, end: u8) -> DataType {
    if (start, end) == (DAY_FIELD, SECOND) {
        DAY_TIME
    } else {
        DataType::Decimal64(18, (start * 4 + end) as i8)
    }
}

/// The (start, end) fields of a year-month interval type.
pub fn ym_fields(dt: &DataType) -> Option<(u8, u8)> {
    match dt {
        DataType::Interval(IntervalUnit::YearMonth) => Some((YEAR, MONTH)),
        DataType::Decimal32(9, c @ (0 | 5)) => Some(((*c / 4) as u8, (*c % 4) as u8)),
        _ => None,
    }
}

/// The (start, end) fields of a day-time interval type.
pub fn dt_fields(dt: &DataType) -> Option<(u8, u8)> {
    match dt {
        DataType::Duration(TimeUnit::Microsecond) => Some((DAY_FIELD, SECOND)),
        DataType::Decimal64(18, c @ 0..=15) if c / 4 <= c % 4 => Some(((*c / 4) as u8, (*c % 4) as u8)),
        _ => None,
    }
}

/// True for the interval types.
pub fn is_interval(dt: &DataType) -> bool {
    is_year_month(dt) || is_day_time(dt)
}

/// True for the year-month interval types.
pub fn is_year_month(dt: &DataType) -> bool {
    ym_fields(dt).is_some()
}

/// True for the day-time interval types.
pub fn is_day_time(dt: &DataType) -> bool {
    dt_fields(dt).is_some()
}

/// The interval type of one family spanning both types' fields (Spark's wider type).
pub fn wider_interval(a: &DataType, b: &DataType) -> Option<DataType> {
    let span = |(s1, e1): (u8, u8), (s2, e2): (u8, u8)| (s1.min(s2), e1.max(e2));
    if let (Some(x), Some(y)) = (ym_fields(a), ym_fields(b)) {
        let (s, e) = span(x, y);
        return Some(year_month(s, e));
    }
    let (s, e) = span(dt_fields(a)?, dt_fields(b)?);
    Some(day_time(s, e))
}

/// The widest type of the interval's family (`interval year to month` or `day to second`): the
/// type of Spark's Average and of an interval multiplied or divided.
pub fn widest(dt: &DataType) -> DataType {
    if is_year_month(dt) { YEAR_MONTH } else { DAY_TIME }
}

fn ym_name(f: u8) -> &'static str {
    if f == YEAR { "YEAR" } else { "MONTH" }
}

fn dt_name(f: u8) -> &'static str {
    ["DAY", "HOUR", "MINUTE", "SECOND"][f.min(3) as usize]
}

/// Spark's unit names of an interval type, as a cast to it is written (`YEAR TO MONTH`, `HOUR`).
pub fn interval_fields(dt: &DataType) -> String {
    let (s, e, name): (u8, u8, fn(u8) -> &'static str) = match (ym_fields(dt), dt_fields(dt)) {
        (Some((s, e)), _) => (s, e, ym_name),
        (_, Some((s, e))) => (s, e, dt_name),
        _ => return String::new(),
    };
    if s == e { name(s).to_string() } else { format!("{} TO {}", name(s), name(e)) }
}

/// The field of `unit` (`YEAR`, `HOUR`, ...) and the microseconds (or months) it counts.
fn unit_size(dt: &DataType, field: u8) -> i64 {
    if is_year_month(dt) {
        if field == YEAR { 12 } else { 1 }
    } else {
        [MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND][field.min(3) as usize]
    }
}

/// Months or microseconds in one unit of the type's last field (what a number cast to or from
/// the type counts: `CAST(INTERVAL '1-2' YEAR TO MONTH AS INT)` is 14, `CAST(10 AS INTERVAL HOUR)`
/// ten hours).
pub fn end_unit(dt: &DataType) -> i64 {
    let end = ym_fields(dt).or_else(|| dt_fields(dt)).map_or(0, |(_, e)| e);
    unit_size(dt, end)
}

/// `v` (months or microseconds) keeping only the type's fields: what a cast to it keeps
/// (`CAST(INTERVAL '1 02:03' DAY TO MINUTE AS INTERVAL DAY)` is one day; a SECOND keeps its
/// fraction).
pub fn truncate(v: i64, dt: &DataType) -> i64 {
    let u = if dt_fields(dt).is_some_and(|(_, e)| e == SECOND) { 1 } else { end_unit(dt) };
    v / u * u
}

/// An interval value as Spark's ANSI style prints it: `INTERVAL '-1-2' YEAR TO MONTH`,
/// `INTERVAL '100' HOUR`, `INTERVAL '3 04:05:06.5' DAY TO SECOND`, `INTERVAL '05.5' SECOND`.
pub fn format_interval(v: i64, dt: &DataType) -> String {
    if let Some((s, e)) = ym_fields(dt) {
        let sign = if v < 0 { "-" } else { "" };
        let a = v.unsigned_abs();
        let body = match (s, e) {
            (YEAR, YEAR) => format!("{sign}{}", a / 12),
            (MONTH, _) => format!("{v}"),
            _ => format!("{sign}{}-{}", a / 12, a % 12),
        };
        return format!("INTERVAL '{body}' {}", interval_fields(dt));
    }
    let (s, e) = dt_fields(dt).unwrap_or((DAY_FIELD, SECOND));
    let sign = if v < 0 { "-" } else { "" };
    let mut rest = v.unsigned_abs();
    let seconds = |r: u64| {
        let (whole, frac) = (r / 1_000_000, r % 1_000_000);
        let frac = if frac == 0 { String::new() } else { format!(".{frac:06}").trim_end_matches('0').to_string() };
        format!("{whole:02}{frac}")
    };
    let mut body = sign.to_string();
    for f in s..=e {
        let unit = [MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND][f as usize] as u64;
        let sep = match f {
            _ if f == s => "",
            HOUR => " ",
            _ => ":",
        };
        body.push_str(sep);
        if f == SECOND {
            body.push_str(&seconds(rest));
        } else if f == DAY_FIELD {
            body.push_str(&(rest / unit).to_string());
        } else {
            body.push_str(&format!("{:02}", rest / unit));
        }
        rest %= unit;
    }
    format!("INTERVAL '{body}' {}", interval_fields(dt))
}

/// Spark's `simpleString` of an interval type (`interval hour to minute`).
pub fn type_name(dt: &DataType) -> String {
    format!("interval {}", interval_fields(dt).to_lowercase())
}

/// A string cast to an interval type, as Spark's `CAST('1-2' AS INTERVAL YEAR TO MONTH)`: the
/// bare value in the type's form (`1-2`, `-3 04:05:06.5`, `10` for HOUR, `02:03` for HOUR TO
/// MINUTE) or the whole literal (`INTERVAL '1-2' YEAR TO MONTH`, whose units must be the
/// type's). The leading field takes any number, the ones after it their clock ranges. Months
/// or microseconds.
pub fn parse_interval(text: &str, to: &DataType) -> Option<i64> {
    let t = text.trim();
    let upper = t.to_ascii_uppercase();
    let (outer_neg, body) = match upper.strip_prefix("INTERVAL") {
        Some(rest) => {
            let rest = rest.trim_start();
            let (neg, rest) = match rest.strip_prefix('-') {
                Some(r) => (true, r.trim_start()),
                None => (false, rest.strip_prefix('+').unwrap_or(rest).trim_start()),
            };
            let rest = rest.strip_prefix('\'')?;
            let (value, units) = rest.split_once('\'')?;
            if units.split_whitespace().collect::<Vec<_>>().join(" ") != interval_fields(to) {
                return None;
            }
            (neg, value.trim().to_string())
        }
        None => (false, t.to_string()),
    };
    let (neg, b) = match body.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, body.strip_prefix('+').unwrap_or(&body)),
    };
    let v: i128 = if let Some((s, e)) = ym_fields(to) {
        i128::from(match (s, e) {
            (YEAR, MONTH) => {
                let (y, m) = b.split_once('-')?;
                let (y, m) = (digits(y)?, digits(m)?);
                if m > 11 {
                    return None;
                }
                y.checked_mul(12)?.checked_add(m)?
            }
            (YEAR, _) => digits(b)?.checked_mul(12)?,
            _ => digits(b)?,
        })
    } else {
        let (s, e) = dt_fields(to)?;
        day_time_value(b, s, e)?
    };
    // Signed in i128: the most negative value has no positive counterpart.
    let v = i64::try_from(if neg != outer_neg { -v } else { v }).ok()?;
    if is_year_month(to) {
        i32::try_from(v).ok()?;
    }
    Some(v)
}

/// The body of a day-time interval of fields `s..=e` (no sign) as microseconds: days
/// separated by a space, then `:`-separated clock fields, seconds with up to 9 fraction digits.
fn day_time_value(b: &str, s: u8, e: u8) -> Option<i128> {
    let mut parts: Vec<&str> = Vec::new();
    let rest = if s == DAY_FIELD && e > DAY_FIELD {
        let (d, r) = b.split_once(' ')?;
        parts.push(d);
        r
    } else {
        b
    };
    if s == DAY_FIELD && e == DAY_FIELD {
        parts.push(rest);
    } else {
        parts.extend(rest.split(':'));
    }
    if parts.len() != (e - s + 1) as usize {
        return None;
    }
    let mut us: i128 = 0;
    for (k, p) in parts.iter().enumerate() {
        let f = s + k as u8;
        let unit = [MICROS_PER_DAY, MICROS_PER_HOUR, MICROS_PER_MINUTE, MICROS_PER_SECOND][f as usize];
        let (whole, frac) = if f == SECOND { p.split_once('.').unwrap_or((p, "")) } else { (*p, "") };
        let n = digits(whole)?;
        let limit = match f {
            HOUR => 23,
            MINUTE | SECOND => 59,
            _ => i64::MAX,
        };
        if k > 0 && n > limit {
            return None;
        }
        us = us.checked_add(i128::from(n).checked_mul(i128::from(unit))?)?;
        if f == SECOND && !frac.is_empty() {
            if frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let six: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
            us = us.checked_add(six.parse::<i128>().ok()?)?;
        }
    }
    Some(us)
}

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `a` as a primitive array of `T`, or an internal error naming both types.
fn prim<T: arrow::datatypes::ArrowPrimitiveType>(a: &ArrayRef) -> Result<&PrimitiveArray<T>> {
    a.as_primitive_opt::<T>().ok_or_else(|| KilnError::internal(format!("expected {} values, got {}", T::DATA_TYPE, a.data_type())))
}

/// The months of a year-month interval array.
pub fn months(a: &ArrayRef) -> Result<Int32Array> {
    match a.data_type() {
        DataType::Interval(arrow::datatypes::IntervalUnit::YearMonth) => {
            Ok(prim::<arrow::datatypes::IntervalYearMonthType>(a)?.reinterpret_cast::<arrow::datatypes::Int32Type>())
        }
        t if is_year_month(t) => Ok(prim::<arrow::datatypes::Decimal32Type>(a)?.reinterpret_cast::<arrow::datatypes::Int32Type>()),
        DataType::Null => Ok(Int32Array::new_null(a.len())),
        other => Err(KilnError::internal(format!("expected a year-month interval, got {other}"))),
    }
}

/// The microseconds of a day-time interval array.
pub fn micros(a: &ArrayRef) -> Result<Int64Array> {
    match a.data_type() {
        DataType::Duration(arrow::datatypes::TimeUnit::Microsecond) => {
            Ok(prim::<arrow::datatypes::DurationMicrosecondType>(a)?.reinterpret_cast::<Int64Type>())
        }
        t if is_day_time(t) => Ok(prim::<arrow::datatypes::Decimal64Type>(a)?.reinterpret_cast::<Int64Type>()),
        DataType::Null => Ok(Int64Array::new_null(a.len())),
        other => Err(KilnError::internal(format!("expected a day-time interval, got {other}"))),
    }
}

/// The months at `row` of a year-month interval array (not NULL there).
pub fn month_value(a: &dyn Array, row: usize) -> i32 {
    match a.data_type() {
        DataType::Interval(_) => a.as_primitive::<arrow::datatypes::IntervalYearMonthType>().value(row),
        _ => a.as_primitive::<arrow::datatypes::Decimal32Type>().value(row),
    }
}

/// The microseconds at `row` of a day-time interval array (not NULL there).
pub fn micro_value(a: &dyn Array, row: usize) -> i64 {
    match a.data_type() {
        DataType::Duration(_) => a.as_primitive::<arrow::datatypes::DurationMicrosecondType>().value(row),
        _ => a.as_primitive::<arrow::datatypes::Decimal64Type>().value(row),
    }
}

/// Months as an array of the year-month interval type `to`.
pub fn year_month_array(values: Int32Array, to: &DataType) -> ArrayRef {
    if *to == YEAR_MONTH {
        Arc::new(values.reinterpret_cast::<arrow::datatypes::IntervalYearMonthType>())
    } else {
        Arc::new(values.reinterpret_cast::<arrow::datatypes::Decimal32Type>().with_data_type(to.clone()))
    }
}

/// Microseconds as an array of the day-time interval type `to`.
pub fn day_time_array(values: Int64Array, to: &DataType) -> Result<ArrayRef> {
    if *to == DAY_TIME {
        let out: DurationMicrosecondArray = values.reinterpret_cast();
        return Ok(Arc::new(out));
    }
    if !is_day_time(to) {
        return Err(KilnError::internal(format!("expected a day-time interval type, got {to}")));
    }
    Ok(Arc::new(values.reinterpret_cast::<arrow::datatypes::Decimal64Type>().with_data_type(to.clone())))
}

/// (months, days, microseconds) of each row of a calendar interval array.
pub fn calendar_parts(a: &ArrayRef) -> Result<Vec<Option<(i32, i32, i64)>>> {
    Ok(prim::<arrow::datatypes::IntervalMonthDayNanoType>(a)?.iter().map(|v| v.map(|v| (v.months, v.days, v.nanoseconds))).collect())
}

/// Spark's pattern of a value of the type, as its cast errors quote it (`[+|-]d h:m:s.n`).
pub fn value_pattern(dt: &DataType) -> String {
    if let Some((s, e)) = ym_fields(dt) {
        return match (s, e) {
            (YEAR, MONTH) => "[+|-]y-m",
            (YEAR, _) => "[+|-]y",
            _ => "[+|-]m",
        }
        .to_string();
    }
    let (s, e) = dt_fields(dt).unwrap_or((DAY_FIELD, SECOND));
    let mut p = String::from("[+|-]");
    for f in s..=e {
        if f > s {
            p.push_str(if f == HOUR { " " } else { ":" });
        }
        p.push_str(["d", "h", "m", "s.n"][f as usize]);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_interval_type_has_its_own_arrow_type_and_keeps_its_fields() {
        let mut seen = Vec::new();
        for (s, e) in [(YEAR, YEAR), (YEAR, MONTH), (MONTH, MONTH)] {
            let t = year_month(s, e);
            assert_eq!(ym_fields(&t), Some((s, e)));
            assert!(!is_day_time(&t));
            seen.push(t);
        }
        for s in DAY_FIELD..=SECOND {
            for e in s..=SECOND {
                let t = day_time(s, e);
                assert_eq!(dt_fields(&t), Some((s, e)));
                assert!(!is_year_month(&t));
                seen.push(t);
            }
        }
        assert_eq!(seen.len(), 13);
        for (i, t) in seen.iter().enumerate() {
            assert!(!seen[..i].contains(t));
        }
        assert_eq!(type_name(&day_time(HOUR, MINUTE)), "interval hour to minute");
        assert_eq!(wider_interval(&day_time(HOUR, HOUR), &DAY), Some(day_time(DAY_FIELD, HOUR)));
        assert_eq!(wider_interval(&year_month(YEAR, YEAR), &day_time(HOUR, HOUR)), None);
    }

    #[test]
    fn intervals_print_as_spark_ansi_style() {
        assert_eq!(format_interval(14, &YEAR_MONTH), "INTERVAL '1-2' YEAR TO MONTH");
        assert_eq!(format_interval(-2, &YEAR_MONTH), "INTERVAL '-0-2' YEAR TO MONTH");
        assert_eq!(format_interval(-14, &year_month(MONTH, MONTH)), "INTERVAL '-14' MONTH");
        assert_eq!(format_interval(3 * MICROS_PER_DAY + 4 * 3_600_000_000 + 5 * 60_000_000 + 6_500_000, &DAY_TIME), "INTERVAL '3 04:05:06.5' DAY TO SECOND");
        assert_eq!(format_interval(-30 * MICROS_PER_DAY, &DAY), "INTERVAL '-30' DAY");
        assert_eq!(format_interval(100 * 3_600_000_000, &day_time(HOUR, HOUR)), "INTERVAL '100' HOUR");
        assert_eq!(format_interval(-500_000, &day_time(SECOND, SECOND)), "INTERVAL '-00.5' SECOND");
        assert_eq!(format_interval(i64::MIN, &day_time(HOUR, HOUR)), "INTERVAL '-2562047788' HOUR");
        assert_eq!(value_pattern(&day_time(DAY_FIELD, MINUTE)), "[+|-]d h:m");
        assert_eq!(format_calendar(14, 25, 5 * 3_600_000_000 + 6 * 60_000_000 + 7_500_000), "1 years 2 months 25 days 5 hours 6 minutes 7.5 seconds");
        assert_eq!(format_calendar(0, -5, -(2 * 3_600_000_000 + 56 * 60_000_000 + 5_500_000)), "-5 days -2 hours -56 minutes -5.5 seconds");
        assert_eq!(format_calendar(0, 0, 0), "0 seconds");
        assert_eq!(parse_calendar("interval 3 hours -10 minutes 1.5 seconds"), Some((0, 0, 10_201_500_000)));
        assert_eq!(parse_calendar("2 weeks 3 milliseconds 7 microseconds"), Some((0, 14, 3_007)));
        assert_eq!(parse_calendar("1 yearss"), None);
        assert_eq!(parse_calendar("1.5 hours"), None);
        assert_eq!(parse_calendar(""), None);
    }

    #[test]
    fn strings_parse_as_interval_values() {
        assert_eq!(parse_interval("1-2", &YEAR_MONTH), Some(14));
        assert_eq!(parse_interval("INTERVAL '-1-2' YEAR TO MONTH", &YEAR_MONTH), Some(-14));
        assert_eq!(parse_interval("1-12", &YEAR_MONTH), None);
        assert_eq!(parse_interval("3 04:05:06.5", &DAY_TIME), Some(3 * MICROS_PER_DAY + 14_706_500_000));
        assert_eq!(parse_interval("interval '3' day", &DAY), Some(3 * MICROS_PER_DAY));
        assert_eq!(parse_interval("INTERVAL '3' DAY", &YEAR_MONTH), None);
        assert_eq!(parse_interval("-10", &day_time(HOUR, HOUR)), Some(-36_000_000_000));
        assert_eq!(parse_interval("100:30", &day_time(MINUTE, SECOND)), Some(6_030_000_000));
        assert_eq!(parse_interval("10:60", &day_time(HOUR, MINUTE)), None);
        assert_eq!(parse_interval("1 2", &day_time(HOUR, HOUR)), None);
        assert_eq!(parse_interval("-106751991 04:00:54.775808", &DAY_TIME), Some(i64::MIN));
        assert_eq!(parse_interval("106751991 04:00:54.775808", &DAY_TIME), None);
    }
}
