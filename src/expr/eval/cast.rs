//! `CAST` with Spark's ANSI rules. Arrow's cast kernel is used only where it agrees with Spark
//! (widening, bool <-> numbers, integers -> string); decimals, doubles and strings are converted
//! here because Spark rounds HALF_UP, parses its own way and names its errors.

use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, BooleanArray, PrimitiveArray, StringArray};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{
    i256, ArrowPrimitiveType, DataType, Date32Type, Decimal128Type, Float32Type, Float64Type, Int64Type, TimestampMicrosecondType,
};

use super::decimal::{fit, rescale, Digits};
use super::errors::{cast_invalid_input, cast_overflow, decimal_out_of_range, sql_value};
use crate::error::{KilnError, Result};
use super::Primitive;
use crate::types::java_double;
use crate::types::timestamp::{MICROS_PER_DAY, MICROS_PER_SECOND};
use crate::types::time_zone::Zone;
use crate::types::timestamp::{format_timestamp_in, parse_timestamp_in, parse_wall_clock};
use crate::types::{format_date, format_decimal, format_timestamp, parse_date, ScalarValue};

/// `TRY_CAST`: `a` cast to `to`, NULL in each row whose cast fails (the rows cast one by one
/// only when the whole array fails).
pub(crate) fn try_cast(a: &ArrayRef, to: &DataType, zone: Zone) -> Result<ArrayRef> {
    if let Ok(done) = cast_in(a, to, zone) {
        return Ok(done);
    }
    let rows: Vec<ArrayRef> = (0..a.len()).map(|i| cast_in(&a.slice(i, 1), to, zone).unwrap_or_else(|_| new_null_array(to, 1))).collect();
    let refs: Vec<&dyn Array> = rows.iter().map(|r| r.as_ref()).collect();
    Ok(arrow::compute::concat(&refs)?)
}

/// Casts `a` to `to`, TIMESTAMP values read and written in UTC.
pub(super) fn cast(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    cast_in(a, to, Zone::UTC)
}

/// Casts `a` to `to`, TIMESTAMP values read and written as wall-clock times in `zone`.
pub(super) fn cast_in(a: &ArrayRef, to: &DataType, zone: Zone) -> Result<ArrayRef> {
    use DataType::*;
    let from = a.data_type();
    if from == to {
        return Ok(a.clone());
    }
    if from != &Null {
        if let Some(done) = super::interval::cast(a, to) {
            return done;
        }
    }
    match (from, to) {
        (Null, _) => Ok(new_null_array(to, a.len())),
        (List(_) | Struct(_) | Map(..), List(_) | Struct(_) | Map(..)) => nested_cast(a, to, zone),
        // Spark: a string's UTF-8 bytes; bytes read back as UTF-8 (invalid sequences replaced).
        (Binary, Utf8) => Ok(Arc::new(a.as_binary::<i32>().iter().map(|b| b.map(|b| String::from_utf8_lossy(b).into_owned())).collect::<StringArray>())),
        // Casts only legacy mode's analysis lets through: a boolean is 1 or 0 microseconds, a
        // timestamp true unless it is the epoch, a date NULL as a number or boolean, an integer
        // its big-endian bytes (as Spark's Cast).
        (Boolean, Timestamp(..)) => Ok(Arc::new(arrow_cast(a, &Int64)?.primitive::<Int64Type>()?.reinterpret_cast::<TimestampMicrosecondType>().with_data_type(to.clone()))),
        (Timestamp(..), Boolean) => Ok(Arc::new(BooleanArray::from_unary(a.primitive::<TimestampMicrosecondType>()?, |v| v != 0))),
        (Date32, t) if crate::types::is_numeric(t) || *t == Boolean => Ok(new_null_array(to, a.len())),
        (Int8 | Int16 | Int32 | Int64, Binary) => {
            let width = match from {
                Int8 => 1,
                Int16 => 2,
                Int32 => 4,
                _ => 8,
            };
            let wide = arrow_cast(a, &Int64)?;
            Ok(Arc::new(wide.primitive::<Int64Type>()?.iter().map(|v| v.map(|v| v.to_be_bytes()[8 - width..].to_vec())).collect::<arrow::array::BinaryArray>()))
        }
        (Utf8 | LargeUtf8 | Utf8View, Binary) => Ok(Arc::new(strings(a)?.iter().map(|s| s.map(str::as_bytes)).collect::<arrow::array::BinaryArray>())),
        (Timestamp(..), _) | (_, Timestamp(..)) if !matches!(from, Utf8 | LargeUtf8 | Utf8View) && to != &Utf8 => timestamp_cast(a, to, zone),
        (_, Utf8) => to_string(a, zone),
        (Utf8 | LargeUtf8 | Utf8View, _) => from_string(&strings(a)?, to, zone),
        (Decimal128(_, _), Boolean) => Ok(Arc::new(BooleanArray::from_unary(a.primitive::<Decimal128Type>()?, |v| v != 0))),
        (Boolean, Decimal128(p, s)) => integral_to_decimal(&arrow_cast(a, &Int64)?, *p, *s),
        (Int8 | Int16 | Int32 | Int64, Decimal128(p, s)) => integral_to_decimal(&arrow_cast(a, &Int64)?, *p, *s),
        // Narrowing between integral types: the value must fit (the error names it in its own type).
        (Int8 | Int16 | Int32 | Int64, Int8 | Int16 | Int32) => {
            let (lo, hi) = integral_range(to);
            let wide = arrow_cast(a, &Int64)?;
            let checked: PrimitiveArray<Int64Type> = wide.primitive::<Int64Type>()?.try_unary(|v| {
                if (lo..=hi).contains(&v) {
                    Ok(v)
                } else {
                    Err(cast_overflow(&sql_value(&integral_scalar(from, v)), from, to))
                }
            })?;
            arrow_cast(&(Arc::new(checked) as ArrayRef), to)
        }
        (Float32 | Float64, Int8 | Int16 | Int32 | Int64) => {
            let (lo, hi) = integral_range(to);
            let wide = arrow_cast(a, &Float64)?;
            let checked: PrimitiveArray<Int64Type> = wide.primitive::<Float64Type>()?.try_unary(|x| {
                // Spark's check: floor/ceil within range, then truncate toward zero. NaN fails.
                // i64::MAX as f64 is 2^63, which Spark lets through and saturates, as `as` does.
                if x.floor() <= hi as f64 && x.ceil() >= lo as f64 {
                    Ok(x as i64)
                } else {
                    let value = if from == &Float32 { ScalarValue::Float32(x as f32) } else { ScalarValue::Float64(x) };
                    Err(cast_overflow(&sql_value(&value), from, to))
                }
            })?;
            arrow_cast(&(Arc::new(checked) as ArrayRef), to)
        }
        // A float goes through its exact double value, as Spark's `Decimal(f.toDouble)`.
        (Float32 | Float64, Decimal128(p, s)) => float_to_decimal(arrow_cast(a, &Float64)?.primitive::<Float64Type>()?, *p, *s),
        (Decimal128(_, s), Int8 | Int16 | Int32 | Int64) => decimal_to_integral(a.primitive::<Decimal128Type>()?, *s, to),
        (Decimal128(_, s), Float64) => {
            let s = *s;
            let out: PrimitiveArray<Float64Type> = a.primitive::<Decimal128Type>()?.unary(|v| decimal_to_f64(v, s));
            Ok(Arc::new(out))
        }
        // Java's BigDecimal.floatValue: the float nearest the exact value (not through a double).
        (Decimal128(_, s), Float32) => {
            let s = *s;
            let out: PrimitiveArray<Float32Type> =
                a.primitive::<Decimal128Type>()?.unary(|v| format!("{v}e{}", -(s as i32)).parse().unwrap_or(f32::NAN));
            Ok(Arc::new(out))
        }
        (Decimal128(_, s1), Decimal128(p, s)) => {
            let (s1, p, s) = (*s1, *p, *s);
            let out: PrimitiveArray<Decimal128Type> = a.primitive::<Decimal128Type>()?.try_unary(|v| {
                rescale(i256::from_i128(v), s1 as i32, s as i32)
                    .and_then(|x| fit(x, p))
                    .ok_or_else(|| decimal_out_of_range(&format_decimal(v, s1), p, s))
            })?;
            Ok(Arc::new(out.with_precision_and_scale(p, s)?))
        }
        // Widening, bool <-> numbers, numbers -> bool (x != 0, NaN is true as in Spark).
        _ => arrow_cast(a, to),
    }
}

/// The values an integral type holds.
fn integral_range(t: &DataType) -> (i64, i64) {
    match t {
        DataType::Int8 => (i8::MIN as i64, i8::MAX as i64),
        DataType::Int16 => (i16::MIN as i64, i16::MAX as i64),
        DataType::Int32 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

/// `v` (known to fit) as a value of integral type `t`, for error messages.
fn integral_scalar(t: &DataType, v: i64) -> ScalarValue {
    match t {
        DataType::Int8 => ScalarValue::Int8(v as i8),
        DataType::Int16 => ScalarValue::Int16(v as i16),
        DataType::Int32 => ScalarValue::Int32(v as i32),
        _ => ScalarValue::Int64(v),
    }
}

/// Casts from or to a timestamp (not strings): a date is midnight, a timestamp's date its day,
/// both in `zone` for a TIMESTAMP (TIMESTAMP <-> TIMESTAMP_NTZ keeps the wall-clock time in
/// `zone`); bigint <-> timestamp count seconds.
fn timestamp_cast(a: &ArrayRef, to: &DataType, zone: Zone) -> Result<ArrayRef> {
    use DataType::*;
    let from = a.data_type();
    let micros = |a: &ArrayRef| -> Result<PrimitiveArray<TimestampMicrosecondType>> { Ok(a.primitive::<TimestampMicrosecondType>()?.clone()) };
    let overflow = |v: i64| cast_overflow(&v.to_string(), from, to);
    // A TIMESTAMP's wall-clock time in `zone`, and the TIMESTAMP of a wall-clock time.
    let (local, instant) = (|v: i64| zone.from_utc(v).ok_or_else(|| overflow(v)), |v: i64| zone.to_utc(v).ok_or_else(|| overflow(v)));
    Ok(match (from, to) {
        (Timestamp(_, Some(_)), Timestamp(_, None)) => Arc::new(micros(a)?.try_unary::<_, TimestampMicrosecondType, _>(local)?.with_data_type(to.clone())),
        (Timestamp(_, None), Timestamp(_, Some(_))) => Arc::new(micros(a)?.try_unary::<_, TimestampMicrosecondType, _>(instant)?.with_data_type(to.clone())),
        (Timestamp(..), Timestamp(..)) => Arc::new(micros(a)?.with_data_type(to.clone())),
        (Date32, Timestamp(_, ltz)) => {
            let out: PrimitiveArray<TimestampMicrosecondType> =
                a.primitive::<Date32Type>()?.try_unary(|d| if ltz.is_some() { instant(d as i64 * MICROS_PER_DAY) } else { Ok(d as i64 * MICROS_PER_DAY) })?;
            Arc::new(out.with_data_type(to.clone()))
        }
        (Timestamp(_, ltz), Date32) => {
            let out: PrimitiveArray<Date32Type> =
                micros(a)?.try_unary(|v| Ok::<_, KilnError>((if ltz.is_some() { local(v)? } else { v }).div_euclid(MICROS_PER_DAY) as i32))?;
            Arc::new(out)
        }
        (Timestamp(..), Int64) => {
            let out: PrimitiveArray<Int64Type> = micros(a)?.unary(|v| v.div_euclid(MICROS_PER_SECOND));
            Arc::new(out)
        }
        (Timestamp(..), Float64) => {
            let out: PrimitiveArray<Float64Type> = micros(a)?.unary(|v| v as f64 / MICROS_PER_SECOND as f64);
            Arc::new(out)
        }
        (Int8 | Int16 | Int32 | Int64, Timestamp(..)) => {
            let wide = arrow_cast(a, &Int64)?;
            let out: PrimitiveArray<TimestampMicrosecondType> = wide.primitive::<Int64Type>()?.try_unary(|v| {
                v.checked_mul(MICROS_PER_SECOND).ok_or_else(|| cast_overflow(&sql_value(&ScalarValue::Int64(v)), from, to))
            })?;
            Arc::new(out.with_data_type(to.clone()))
        }
        _ => {
            return Err(KilnError::analysis(
                "DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION",
                format!("cannot cast \"{}\" to \"{}\".", crate::types::sql_type_name(from), crate::types::sql_type_name(to)),
            ))
        }
    })
}

fn arrow_cast(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    let options = CastOptions { safe: false, ..Default::default() };
    Ok(cast_with_options(a, to, &options)?)
}

/// `a` as a Utf8 array (Large/View strings are converted).
pub(super) fn strings(a: &ArrayRef) -> Result<StringArray> {
    match a.data_type() {
        DataType::Utf8 => Ok(a.as_string::<i32>().clone()),
        DataType::Null => Ok(StringArray::new_null(a.len())),
        DataType::LargeUtf8 | DataType::Utf8View => Ok(arrow_cast(a, &DataType::Utf8)?.as_string::<i32>().clone()),
        other => Err(KilnError::internal(format!("expected a string, got {other}"))),
    }
}

fn map_to_string<T: ArrowPrimitiveType>(a: &ArrayRef, f: impl Fn(T::Native) -> String) -> Result<ArrayRef> {
    Ok(Arc::new(a.primitive::<T>()?.iter().map(|v| v.map(&f)).collect::<StringArray>()))
}

/// Arrays element by element, structs field by field (by position) and maps key and value
/// by value, each with this module's (ANSI) casts; the shape and NULLs are kept.
fn nested_cast(a: &ArrayRef, to: &DataType, zone: Zone) -> Result<ArrayRef> {
    use DataType::*;
    let mismatch = || KilnError::internal(format!("cast from {} to {to}", a.data_type()));
    Ok(match (a.data_type(), to) {
        (List(_), List(f)) => {
            let l = a.as_list::<i32>();
            let values = cast_in(l.values(), f.data_type(), zone)?;
            Arc::new(arrow::array::ListArray::try_new(f.clone(), l.offsets().clone(), values, l.nulls().cloned())?)
        }
        (Struct(from), Struct(fields)) if from.len() == fields.len() => {
            let s = a.as_struct();
            let columns = s.columns().iter().zip(fields.iter()).map(|(c, f)| cast_in(c, f.data_type(), zone)).collect::<Result<Vec<_>>>()?;
            Arc::new(arrow::array::StructArray::try_new(fields.clone(), columns, s.nulls().cloned())?)
        }
        (Map(..), Map(entries, sorted)) => {
            let m = a.as_map();
            let Struct(fields) = entries.data_type() else { return Err(mismatch()) };
            let (Some(kf), Some(vf)) = (fields.first(), fields.get(1)) else { return Err(mismatch()) };
            let (keys, values) = (cast_in(m.keys(), kf.data_type(), zone)?, cast_in(m.values(), vf.data_type(), zone)?);
            let entries_array = arrow::array::StructArray::try_new(fields.clone(), vec![keys, values], None)?;
            Arc::new(arrow::array::MapArray::try_new(entries.clone(), m.offsets().clone(), entries_array, m.nulls().cloned(), *sorted)?)
        }
        _ => return Err(mismatch()),
    })
}

fn to_string(a: &ArrayRef, zone: Zone) -> Result<ArrayRef> {
    Ok(match a.data_type() {
        DataType::Float64 => map_to_string::<Float64Type>(a, java_double)?,
        DataType::Float32 => map_to_string::<Float32Type>(a, crate::types::java_float)?,
        DataType::Decimal128(_, s) => {
            let s = *s;
            map_to_string::<Decimal128Type>(a, |v| format_decimal(v, s))?
        }
        DataType::Date32 => map_to_string::<Date32Type>(a, format_date)?,
        DataType::Timestamp(_, Some(_)) => map_to_string::<TimestampMicrosecondType>(a, |v| format_timestamp_in(v, zone))?,
        DataType::Timestamp(_, None) => map_to_string::<TimestampMicrosecondType>(a, format_timestamp)?,
        DataType::List(_) | DataType::Struct(_) | DataType::Map(..) => {
            Arc::new((0..a.len()).map(|i| crate::format::format_value_in(a.as_ref(), i, zone)).collect::<StringArray>())
        }
        // booleans ("true"/"false") and integers print as Spark does.
        _ => arrow_cast(a, &DataType::Utf8)?,
    })
}

/// Spark trims ASCII whitespace and control characters before parsing a string.
fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ' || c == '\u{7f}')
}

fn parse_each<O: ArrowPrimitiveType>(s: &StringArray, f: impl Fn(&str) -> Result<O::Native>) -> Result<PrimitiveArray<O>> {
    let mut out = Vec::with_capacity(s.len());
    for i in 0..s.len() {
        out.push(if s.is_valid(i) { f(s.value(i))? } else { O::Native::default() });
    }
    Ok(PrimitiveArray::new(out.into(), s.nulls().cloned()))
}

fn from_string(s: &StringArray, to: &DataType, zone: Zone) -> Result<ArrayRef> {
    Ok(match to {
        DataType::Boolean => {
            let mut out = Vec::with_capacity(s.len());
            for v in s.iter() {
                out.push(match v {
                    None => None,
                    Some(text) => Some(parse_bool(text).ok_or_else(|| cast_invalid_input(text, to))?),
                });
            }
            Arc::new(BooleanArray::from(out))
        }
        // Out of the type's range is malformed too (Spark's `toByteExact` and kin).
        DataType::Int8 | DataType::Int16 | DataType::Int32 => {
            let (lo, hi) = integral_range(to);
            let wide = parse_each::<Int64Type>(s, |t| parse_integral(t).filter(|v| (lo..=hi).contains(v)).ok_or_else(|| cast_invalid_input(t, to)))?;
            arrow_cast(&(Arc::new(wide) as ArrayRef), to)?
        }
        DataType::Int64 => Arc::new(parse_each::<Int64Type>(s, |t| parse_integral(t).ok_or_else(|| cast_invalid_input(t, to)))?),
        DataType::Float64 => Arc::new(parse_each::<Float64Type>(s, |t| parse_float(t).ok_or_else(|| cast_invalid_input(t, to)))?),
        DataType::Float32 => Arc::new(parse_each::<Float32Type>(s, |t| parse_float(t).ok_or_else(|| cast_invalid_input(t, to)))?),
        DataType::Decimal128(p, sc) => {
            let (p, sc) = (*p, *sc);
            let out = parse_each::<Decimal128Type>(s, |t| {
                let digits = Digits::parse(trim(t)).ok_or_else(|| cast_invalid_input(t, to))?;
                digits
                    .to_unscaled(sc as i32)
                    .and_then(|v| fit(i256::from_i128(v), p))
                    .ok_or_else(|| decimal_out_of_range(trim(t), p, sc))
            })?;
            Arc::new(out.with_precision_and_scale(p, sc)?)
        }
        DataType::Date32 => Arc::new(parse_each::<Date32Type>(s, |t| parse_date(t).ok_or_else(|| cast_invalid_input(t, to)))?),
        DataType::Timestamp(_, Some(_)) => Arc::new(
            parse_each::<TimestampMicrosecondType>(s, |t| parse_timestamp_in(t, zone).ok_or_else(|| cast_invalid_input(t, to)))?.with_data_type(to.clone()),
        ),
        // A TIMESTAMP_NTZ keeps the wall-clock time; a zone in the text is ignored, as Spark does.
        DataType::Timestamp(_, None) => Arc::new(
            parse_each::<TimestampMicrosecondType>(s, |t| parse_wall_clock(t).map(|(v, _)| v).ok_or_else(|| cast_invalid_input(t, to)))?
                .with_data_type(to.clone()),
        ),
        other => return Err(KilnError::unsupported(format!("casting a string to {other}"))),
    })
}

/// Spark's `StringUtils.isTrueString` / `isFalseString`.
fn parse_bool(text: &str) -> Option<bool> {
    match trim(text).to_ascii_lowercase().as_str() {
        "t" | "true" | "y" | "yes" | "1" => Some(true),
        "f" | "false" | "n" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Spark's ANSI `UTF8String.toLongExact`: optional sign and digits only (no fraction, unlike
/// the non-ANSI parser); out of range counts as malformed.
fn parse_integral(text: &str) -> Option<i64> {
    let t = trim(text).as_bytes();
    let (negative, digits) = match t.first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: i128 = 0;
    for c in digits {
        v = v * 10 + (c - b'0') as i128;
        if v > i64::MAX as i128 + 1 {
            return None;
        }
    }
    i64::try_from(if negative { -v } else { v }).ok()
}

/// Java's `Double.parseDouble` / `Float.parseFloat` plus Spark's special literals (`inf`,
/// `-infinity`, `nan`, any case); a float is parsed as one (no double rounding on the way).
fn parse_float<F: std::str::FromStr>(text: &str) -> Option<F> {
    let t = trim(text);
    // Java accepts a trailing type suffix: 1.5d, 2f.
    let t = match t.strip_suffix(['d', 'D', 'f', 'F']) {
        Some(body) if body.ends_with(|c: char| c.is_ascii_digit() || c == '.') => body,
        _ => t,
    };
    // Rust's parser also accepts inf/infinity/nan case-insensitively, with a sign.
    t.parse::<F>().ok()
}

fn integral_to_decimal(wide: &ArrayRef, p: u8, s: i8) -> Result<ArrayRef> {
    let out: PrimitiveArray<Decimal128Type> = wide.primitive::<Int64Type>()?.try_unary(|v| {
        rescale(i256::from_i128(v as i128), 0, s as i32)
            .and_then(|x| fit(x, p))
            .ok_or_else(|| decimal_out_of_range(&v.to_string(), p, s))
    })?;
    Ok(Arc::new(out.with_precision_and_scale(p, s)?))
}

/// Spark converts a double through its shortest decimal form (Scala's `BigDecimal(d)`), then
/// rounds HALF_UP; NaN and infinities become NULL (Spark catches the NumberFormatException).
fn float_to_decimal(a: &PrimitiveArray<Float64Type>, p: u8, s: i8) -> Result<ArrayRef> {
    let mut values = Vec::with_capacity(a.len());
    let mut valid = Vec::with_capacity(a.len());
    for x in a.iter() {
        let digits = x.and_then(Digits::from_f64);
        match (x, digits) {
            (Some(x), Some(d)) => {
                let v = d
                    .to_unscaled(s as i32)
                    .and_then(|v| fit(i256::from_i128(v), p))
                    .ok_or_else(|| decimal_out_of_range(&java_double(x), p, s))?;
                values.push(v);
                valid.push(true);
            }
            _ => {
                values.push(0);
                valid.push(false);
            }
        }
    }
    let out = PrimitiveArray::<Decimal128Type>::new(values.into(), Some(valid.into())).with_precision_and_scale(p, s)?;
    Ok(Arc::new(out))
}

/// Truncates toward zero; out of range is [CAST_OVERFLOW].
fn decimal_to_integral(a: &PrimitiveArray<Decimal128Type>, s: i8, to: &DataType) -> Result<ArrayRef> {
    let from = a.data_type();
    let truncate = |v: i128| -> Option<i128> {
        if s >= 0 {
            Some(v / super::decimal::pow10_i128(s as u32)?)
        } else {
            v.checked_mul(super::decimal::pow10_i128(s.unsigned_abs() as u32)?)
        }
    };
    let (p, sc) = match from {
        DataType::Decimal128(p, sc) => (*p, *sc),
        _ => (38, s),
    };
    let overflow = |v: i128| cast_overflow(&sql_value(&ScalarValue::Decimal(v, p, sc)), from, to);
    let (lo, hi) = integral_range(to);
    let wide = a.try_unary::<_, Int64Type, _>(|v| {
        truncate(v).and_then(|t| i64::try_from(t).ok()).filter(|t| (lo..=hi).contains(t)).ok_or_else(|| overflow(v))
    })?;
    arrow_cast(&(Arc::new(wide) as ArrayRef), to)
}

/// The double nearest to `v / 10^s` (Java's BigDecimal.doubleValue).
pub(super) fn decimal_to_f64(v: i128, s: i8) -> f64 {
    // Both operands exact as doubles: IEEE division rounds once, correctly.
    const EXACT: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
        1e21, 1e22,
    ];
    if v.unsigned_abs() <= 1 << 53 {
        if let Some(d) = usize::try_from(s).ok().and_then(|s| EXACT.get(s)) {
            return v as f64 / d;
        }
    }
    format!("{v}e{}", -(s as i32)).parse().unwrap_or(f64::NAN)
}
