//! One value of a SQL type: literals in plans, and single cells pulled out of arrays.

use std::fmt;
use std::sync::Arc;

use arrow::array::{
    new_null_array, Array, ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int16Array, Int32Array,
    Int64Array, Int8Array, StringArray,
};
use arrow::datatypes::DataType;

use crate::error::{KilnError, Result};

/// A typed SQL value; `Null` carries its type so a NULL literal still has one.
#[derive(Debug, Clone)]
pub enum ScalarValue {
    /// A NULL of the given type.
    Null(DataType),
    /// A `boolean`.
    Boolean(bool),
    /// A `tinyint` (`1Y`).
    Int8(i8),
    /// A `smallint` (`1S`).
    Int16(i16),
    /// An `int`.
    Int32(i32),
    /// A `bigint`.
    Int64(i64),
    /// A `float` (`1.5F`).
    Float32(f32),
    /// A `double`.
    Float64(f64),
    /// Unscaled value, precision, scale.
    Decimal(i128, u8, i8),
    /// A `string`.
    Utf8(String),
    /// Days since 1970-01-01.
    Date32(i32),
    /// A day-time interval in microseconds, and its type's start and end fields
    /// (`INTERVAL '2' HOUR`: `types::interval::HOUR` twice).
    IntervalMicros(i64, u8, u8),
    /// A year-month interval in months, and its type's start and end fields (`INTERVAL '1' YEAR`).
    IntervalMonths(i32, u8, u8),
    /// Spark's CalendarIntervalType (`interval`): months, days and microseconds (a literal
    /// `INTERVAL '1' DAY` under `spark.sql.legacy.interval.enabled`).
    Calendar(i32, i32, i64),
    /// Microseconds since 1970-01-01 UTC; true for `TIMESTAMP_NTZ`.
    Timestamp(i64, bool),
    /// A `binary` (`X'0A1B'`).
    Binary(Vec<u8>),
}

/// Equality of literals as trees: doubles by their bits, so a `NaN` literal equals itself (a
/// grouping key `d IN (NaN)` must match the same expression in the select list) and `-0.0`
/// stays apart from `0.0`.
impl PartialEq for ScalarValue {
    fn eq(&self, other: &Self) -> bool {
        use ScalarValue::*;
        match (self, other) {
            (Float64(a), Float64(b)) => a.to_bits() == b.to_bits(),
            (Float32(a), Float32(b)) => a.to_bits() == b.to_bits(),
            (Int8(a), Int8(b)) => a == b,
            (Int16(a), Int16(b)) => a == b,
            (Null(a), Null(b)) => a == b,
            (Boolean(a), Boolean(b)) => a == b,
            (Int32(a), Int32(b)) => a == b,
            (Int64(a), Int64(b)) => a == b,
            (Decimal(a, p, s), Decimal(b, q, t)) => (a, p, s) == (b, q, t),
            (Utf8(a), Utf8(b)) => a == b,
            (Date32(a), Date32(b)) => a == b,
            (IntervalMicros(a, s, e), IntervalMicros(b, t, f)) => (a, s, e) == (b, t, f),
            (IntervalMonths(a, s, e), IntervalMonths(b, t, f)) => (a, s, e) == (b, t, f),
            (Calendar(a, b, c), Calendar(x, y, z)) => (a, b, c) == (x, y, z),
            (Timestamp(a, x), Timestamp(b, y)) => (a, x) == (b, y),
            (Binary(a), Binary(b)) => a == b,
            // Every variant named: a new one must say how it compares.
            (
                Null(_) | Boolean(_) | Int8(_) | Int16(_) | Int32(_) | Int64(_) | Float32(_) | Float64(_) | Decimal(..) | Utf8(_) | Date32(_) | IntervalMicros(..)
                | IntervalMonths(..) | Calendar(..) | Timestamp(..) | Binary(_),
                _,
            ) => false,
        }
    }
}

impl ScalarValue {
    /// The value's type.
    pub fn data_type(&self) -> DataType {
        match self {
            ScalarValue::Null(t) => t.clone(),
            ScalarValue::Boolean(_) => DataType::Boolean,
            ScalarValue::Int8(_) => DataType::Int8,
            ScalarValue::Int16(_) => DataType::Int16,
            ScalarValue::Int32(_) => DataType::Int32,
            ScalarValue::Int64(_) => DataType::Int64,
            ScalarValue::Float32(_) => DataType::Float32,
            ScalarValue::Float64(_) => DataType::Float64,
            ScalarValue::Decimal(_, p, s) => DataType::Decimal128(*p, *s),
            ScalarValue::Utf8(_) => DataType::Utf8,
            ScalarValue::Date32(_) => DataType::Date32,
            ScalarValue::IntervalMicros(_, s, e) => super::interval::day_time(*s, *e),
            ScalarValue::IntervalMonths(_, s, e) => super::interval::year_month(*s, *e),
            ScalarValue::Calendar(..) => super::interval::CALENDAR,
            ScalarValue::Timestamp(_, ntz) => super::timestamp_type(*ntz),
            ScalarValue::Binary(_) => DataType::Binary,
        }
    }

    /// True for a NULL of any type.
    pub fn is_null(&self) -> bool {
        matches!(self, ScalarValue::Null(_))
    }

    /// An array of `len` copies of this value.
    pub fn to_array(&self, len: usize) -> Result<ArrayRef> {
        Ok(match self {
            ScalarValue::Null(t) => new_null_array(t, len),
            ScalarValue::Boolean(v) => Arc::new(BooleanArray::from(vec![*v; len])),
            ScalarValue::Int8(v) => Arc::new(Int8Array::from_value(*v, len)),
            ScalarValue::Int16(v) => Arc::new(Int16Array::from_value(*v, len)),
            ScalarValue::Int32(v) => Arc::new(Int32Array::from_value(*v, len)),
            ScalarValue::Int64(v) => Arc::new(Int64Array::from_value(*v, len)),
            ScalarValue::Float32(v) => Arc::new(Float32Array::from_value(*v, len)),
            ScalarValue::Float64(v) => Arc::new(Float64Array::from_value(*v, len)),
            ScalarValue::Decimal(v, p, s) => {
                Arc::new(Decimal128Array::from_value(*v, len).with_precision_and_scale(*p, *s)?)
            }
            ScalarValue::Utf8(v) => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(v.as_str(), len))),
            ScalarValue::Date32(v) => Arc::new(Date32Array::from_value(*v, len)),
            ScalarValue::Timestamp(v, ntz) => Arc::new(arrow::array::TimestampMicrosecondArray::from_value(*v, len).with_data_type(super::timestamp_type(*ntz))),
            ScalarValue::IntervalMicros(v, ..) => super::interval::day_time_array(Int64Array::from_value(*v, len), &self.data_type())?,
            ScalarValue::IntervalMonths(v, ..) => super::interval::year_month_array(Int32Array::from_value(*v, len), &self.data_type()),
            ScalarValue::Calendar(m, d, us) => Arc::new(arrow::array::IntervalMonthDayNanoArray::from_value(arrow::datatypes::IntervalMonthDayNano::new(*m, *d, *us), len)),
            ScalarValue::Binary(v) => Arc::new(arrow::array::BinaryArray::from_iter_values(std::iter::repeat_n(v.as_slice(), len))),
        })
    }

    /// The value at `row` of `array`.
    pub fn try_from_array(array: &dyn Array, row: usize) -> Result<ScalarValue> {
        if array.is_null(row) {
            return Ok(ScalarValue::Null(array.data_type().clone()));
        }
        use arrow::array::AsArray;
        use arrow::datatypes::*;
        Ok(match array.data_type() {
            DataType::Boolean => ScalarValue::Boolean(array.as_boolean().value(row)),
            DataType::Int8 => ScalarValue::Int8(array.as_primitive::<Int8Type>().value(row)),
            DataType::Int16 => ScalarValue::Int16(array.as_primitive::<Int16Type>().value(row)),
            DataType::Int32 => ScalarValue::Int32(array.as_primitive::<Int32Type>().value(row)),
            DataType::Int64 => ScalarValue::Int64(array.as_primitive::<Int64Type>().value(row)),
            DataType::Float32 => ScalarValue::Float32(array.as_primitive::<Float32Type>().value(row)),
            DataType::Float64 => ScalarValue::Float64(array.as_primitive::<Float64Type>().value(row)),
            DataType::Decimal128(p, s) => ScalarValue::Decimal(array.as_primitive::<Decimal128Type>().value(row), *p, *s),
            DataType::Utf8 => ScalarValue::Utf8(array.as_string::<i32>().value(row).to_string()),
            DataType::Date32 => ScalarValue::Date32(array.as_primitive::<Date32Type>().value(row)),
            DataType::Timestamp(TimeUnit::Microsecond, tz) => ScalarValue::Timestamp(array.as_primitive::<TimestampMicrosecondType>().value(row), tz.is_none()),
            t if super::interval::is_year_month(t) => {
                let (s, e) = super::interval::ym_fields(t).unwrap_or_default();
                ScalarValue::IntervalMonths(super::interval::month_value(array, row), s, e)
            }
            t if super::interval::is_day_time(t) => {
                let (s, e) = super::interval::dt_fields(t).unwrap_or_default();
                ScalarValue::IntervalMicros(super::interval::micro_value(array, row), s, e)
            }
            DataType::Binary => ScalarValue::Binary(array.as_binary::<i32>().value(row).to_vec()),
            t if *t == super::interval::CALENDAR => {
                let v = array.as_primitive::<IntervalMonthDayNanoType>().value(row);
                ScalarValue::Calendar(v.months, v.days, v.nanoseconds)
            }
            other => return Err(KilnError::unsupported(format!("values of type {other}"))),
        })
    }
}

/// Formats days since the epoch as `YYYY-MM-DD`.
pub fn format_date(days: i32) -> String {
    match chrono_like::civil_from_days(days as i64) {
        (y, m, d) => format!("{}-{m:02}-{d:02}", format_year(y)),
    }
}

/// A year as Spark's `yyyy` prints it: four digits at least, `+` before a fifth.
pub(crate) fn format_year(y: i64) -> String {
    if y > 9999 { format!("+{y}") } else { format!("{y:04}") }
}

/// Parses Spark's `yyyy[-[m]m[-[d]d]]` (a missing month or day is 1; the year has four to seven
/// digits) into days since the epoch.
pub fn parse_date(text: &str) -> Option<i32> {
    let t = text.trim();
    // Spark accepts a trailing time part after a space or 'T' when casting to date.
    let t = t.split([' ', 'T']).next()?;
    let mut parts = t.splitn(3, '-');
    let y_text = parts.next()?;
    if !(4..=7).contains(&y_text.len()) || !y_text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let y: i64 = y_text.parse().ok()?;
    let field = |p: Option<&str>| -> Option<u32> {
        match p {
            None => Some(1),
            Some(p) if (1..=2).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok(),
            Some(_) => None,
        }
    };
    let (m, d) = (field(parts.next())?, field(parts.next())?);
    if !(1..=12).contains(&m) || d == 0 || d > chrono_like::days_in_month(y, m) {
        return None;
    }
    i32::try_from(chrono_like::days_from_civil(y, m, d)).ok()
}

/// Formats an unscaled decimal with its full scale (`40.00`, `-0.05`).
pub fn format_decimal(value: i128, scale: i8) -> String {
    if scale <= 0 {
        return (value * 10i128.pow((-scale) as u32)).to_string();
    }
    let neg = value < 0;
    let digits = value.unsigned_abs().to_string();
    let scale = scale as usize;
    let padded = if digits.len() <= scale { format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits) } else { digits };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{}{}.{}", if neg { "-" } else { "" }, int, frac)
}

/// Calendar arithmetic on the proleptic Gregorian calendar (Howard Hinnant's algorithms).
pub(crate) mod chrono_like {
    pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
        let y = if m <= 2 { y - 1 } else { y };
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let mp = (m as i64 + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d as i64 - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146097 + doe - 719468
    }

    pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
        let z = z + 719468;
        let era = if z >= 0 { z } else { z - 146096 } / 146097;
        let doe = z - era * 146097;
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        let y = yoe + era * 400;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        (if m <= 2 { y + 1 } else { y }, m, d)
    }

    pub fn days_in_month(y: i64, m: u32) -> u32 {
        match m {
            2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }
}

impl fmt::Display for ScalarValue {
    /// Spark's literal rendering in plans: strings unquoted, decimals with their scale.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarValue::Null(_) => write!(f, "null"),
            ScalarValue::Boolean(b) => write!(f, "{b}"),
            ScalarValue::Int8(v) => write!(f, "{v}"),
            ScalarValue::Int16(v) => write!(f, "{v}"),
            ScalarValue::Int32(v) => write!(f, "{v}"),
            ScalarValue::Int64(v) => write!(f, "{v}"),
            ScalarValue::Float32(v) => write!(f, "{}", crate::types::java_float(*v)),
            ScalarValue::Float64(v) => write!(f, "{}", crate::types::java_double(*v)),
            ScalarValue::Decimal(v, _, s) => write!(f, "{}", format_decimal(*v, *s)),
            ScalarValue::Utf8(s) => write!(f, "{s}"),
            ScalarValue::Date32(d) => write!(f, "{}", format_date(*d)),
            ScalarValue::IntervalMicros(v, ..) => write!(f, "{}", super::interval::format_interval(*v, &self.data_type())),
            ScalarValue::IntervalMonths(v, ..) => write!(f, "{}", super::interval::format_interval(*v as i64, &self.data_type())),
            ScalarValue::Calendar(m, d, us) => write!(f, "{}", super::interval::format_calendar(*m, *d, *us)),
            // Spark's Literal.toString of bytes.
            ScalarValue::Binary(b) => write!(f, "0x{}", b.iter().map(|x| format!("{x:02X}")).collect::<String>()),
            ScalarValue::Timestamp(v, ntz) => write!(f, "{}{}", if *ntz { "TIMESTAMP_NTZ " } else { "TIMESTAMP " }, format!("'{}'", super::format_timestamp(*v))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip() {
        for s in ["1970-01-01", "1998-12-01", "2000-02-29", "1969-12-31", "2026-10-31"] {
            let d = parse_date(s).expect("valid date");
            assert_eq!(format_date(d), s);
        }
        assert_eq!(parse_date("1998-09-02"), Some(10471));
        assert_eq!(parse_date("2001-02-29"), None);
        assert_eq!(parse_date("nope"), None);
    }

    #[test]
    fn decimals_keep_their_scale() {
        assert_eq!(format_decimal(4000, 2), "40.00");
        assert_eq!(format_decimal(-5, 2), "-0.05");
        assert_eq!(format_decimal(0, 6), "0.000000");
        assert_eq!(format_decimal(12, 0), "12");
    }
}
