//! Spark's ANSI interval types as Arrow types, and their text forms.
//!
//! Spark has `YearMonthIntervalType(start, end)` (months in an int) and
//! `DayTimeIntervalType(start, end)` (microseconds in a long). Arrow types carry no start and
//! end fields, so kiln keeps three of Spark's types:
//! - `interval year to month`: `Interval(YearMonth)`, months;
//! - `interval day`: `Interval(DayTime)`, whole days (the type of `date - date` and `INTERVAL 'n' DAY`);
//! - `interval day to second`: `Duration(Microsecond)`, microseconds (`ts - ts`, `INTERVAL 'n' HOUR`, ...).
//!
//! A year-only or month-only interval (`INTERVAL '1' YEAR`) is `interval year to month` here and
//! prints as `INTERVAL '1-0' YEAR TO MONTH` where Spark prints `INTERVAL '1' YEAR`; an hour, minute
//! or second interval prints as DAY TO SECOND.

use arrow::datatypes::{DataType, IntervalUnit, TimeUnit};

use super::timestamp::MICROS_PER_DAY;

/// `interval year to month`.
pub const YEAR_MONTH: DataType = DataType::Interval(IntervalUnit::YearMonth);
/// `interval day`.
pub const DAY: DataType = DataType::Interval(IntervalUnit::DayTime);
/// `interval day to second`.
pub const DAY_TIME: DataType = DataType::Duration(TimeUnit::Microsecond);

/// True for the interval types kiln has.
pub fn is_interval(dt: &DataType) -> bool {
    is_year_month(dt) || is_day_time(dt)
}

/// True for `interval year to month`.
pub fn is_year_month(dt: &DataType) -> bool {
    *dt == YEAR_MONTH
}

/// True for `interval day` and `interval day to second`.
pub fn is_day_time(dt: &DataType) -> bool {
    *dt == DAY || *dt == DAY_TIME
}

/// The wider of two interval types of one family (`interval day` widens to DAY TO SECOND).
pub fn wider_interval(a: &DataType, b: &DataType) -> Option<DataType> {
    match (a, b) {
        _ if a == b && is_interval(a) => Some(a.clone()),
        _ if is_day_time(a) && is_day_time(b) => Some(DAY_TIME),
        _ => None,
    }
}

/// A year-month interval as Spark's ANSI style prints it: `INTERVAL '-1-2' YEAR TO MONTH`.
pub fn format_year_month(months: i32) -> String {
    let sign = if months < 0 { "-" } else { "" };
    let a = (months as i64).unsigned_abs();
    format!("INTERVAL '{sign}{}-{}' YEAR TO MONTH", a / 12, a % 12)
}

/// A day-time interval as Spark's ANSI style prints it: `INTERVAL '3 04:05:06.5' DAY TO SECOND`,
/// or `INTERVAL '3' DAY` for the `interval day` type.
pub fn format_day_time(us: i64, day_only: bool) -> String {
    let sign = if us < 0 { "-" } else { "" };
    let a = us.unsigned_abs();
    let day = MICROS_PER_DAY as u64;
    if day_only {
        return format!("INTERVAL '{sign}{}' DAY", a / day);
    }
    let (d, rest) = (a / day, a % day);
    let (h, m, s, f) = (rest / 3_600_000_000, rest / 60_000_000 % 60, rest / 1_000_000 % 60, rest % 1_000_000);
    let frac = if f == 0 { String::new() } else { format!(".{f:06}").trim_end_matches('0').to_string() };
    format!("INTERVAL '{sign}{d} {h:02}:{m:02}:{s:02}{frac}' DAY TO SECOND")
}

/// Spark's unit names of an interval type, as a cast to it is written (`YEAR TO MONTH`).
pub fn interval_fields(dt: &DataType) -> &'static str {
    if is_year_month(dt) {
        "YEAR TO MONTH"
    } else if *dt == DAY {
        "DAY"
    } else {
        "DAY TO SECOND"
    }
}

/// A string cast to an interval type, as Spark's `CAST('1-2' AS INTERVAL YEAR TO MONTH)`: the
/// bare value (`1-2`, `-3 04:05:06.5`, `3` for DAY) or the whole literal
/// (`INTERVAL '1-2' YEAR TO MONTH`, whose units must be the type's). Months or microseconds.
pub fn parse_interval(text: &str, to: &DataType) -> Option<i64> {
    let t = text.trim();
    let upper = t.to_ascii_uppercase();
    let body = match upper.strip_prefix("INTERVAL") {
        Some(rest) => {
            let rest = rest.trim_start();
            let rest = rest.strip_prefix('\'')?;
            let (value, units) = rest.split_once('\'')?;
            if units.split_whitespace().collect::<Vec<_>>().join(" ") != interval_fields(to) {
                return None;
            }
            value.trim().to_string()
        }
        None => t.to_string(),
    };
    let (neg, b) = match body.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, body.strip_prefix('+').unwrap_or(&body)),
    };
    let v: i64 = if is_year_month(to) {
        let (y, m) = b.split_once('-')?;
        let (y, m): (i64, i64) = (digits(y)?, digits(m)?);
        if m > 11 {
            return None;
        }
        let months = y.checked_mul(12)?.checked_add(m)?;
        i32::try_from(months).ok()?;
        months
    } else if *to == DAY {
        digits(b)?.checked_mul(MICROS_PER_DAY)?
    } else {
        let (d, time) = b.split_once(' ')?;
        let mut us = digits(d)?.checked_mul(MICROS_PER_DAY)?;
        let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
        let parts: Vec<&str> = hms.split(':').collect();
        let [h, m, s] = parts.as_slice() else { return None };
        let (h, m, s) = (digits(h)?, digits(m)?, digits(s)?);
        if h > 23 || m > 59 || s > 59 || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        us = us.checked_add(h * 3_600_000_000 + m * 60_000_000 + s * 1_000_000)?;
        let six: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
        us.checked_add(six.parse::<i64>().ok()?)?
    };
    Some(if neg { -v } else { v })
}

fn digits(s: &str) -> Option<i64> {
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_print_as_spark_ansi_style() {
        assert_eq!(format_year_month(14), "INTERVAL '1-2' YEAR TO MONTH");
        assert_eq!(format_year_month(-2), "INTERVAL '-0-2' YEAR TO MONTH");
        assert_eq!(format_day_time(3 * MICROS_PER_DAY + 4 * 3_600_000_000 + 5 * 60_000_000 + 6_500_000, false), "INTERVAL '3 04:05:06.5' DAY TO SECOND");
        assert_eq!(format_day_time(-30 * MICROS_PER_DAY, true), "INTERVAL '-30' DAY");
    }

    #[test]
    fn strings_parse_as_interval_values() {
        assert_eq!(parse_interval("1-2", &YEAR_MONTH), Some(14));
        assert_eq!(parse_interval("INTERVAL '-1-2' YEAR TO MONTH", &YEAR_MONTH), Some(-14));
        assert_eq!(parse_interval("1-12", &YEAR_MONTH), None);
        assert_eq!(parse_interval("3 04:05:06.5", &DAY_TIME), Some(3 * MICROS_PER_DAY + 14_706_500_000));
        assert_eq!(parse_interval("interval '3' day", &DAY), Some(3 * MICROS_PER_DAY));
        assert_eq!(parse_interval("INTERVAL '3' DAY", &YEAR_MONTH), None);
    }
}
