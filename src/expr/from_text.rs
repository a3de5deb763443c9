//! from_json and from_csv (Spark's JsonToStructs / CsvToStructs): a JSON document or a CSV line
//! read as a value of the schema given as a DDL string. PERMISSIVE by default: a value that does
//! not fit its type makes the struct field holding it NULL (a bad element or map value makes its
//! whole array or map fail), a document that is not a JSON object gives a struct of NULLs;
//! FAILFAST raises MALFORMED_RECORD_IN_PARSING on any of these. Timestamps are read in the session time zone.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array,
    ListArray, MapArray, StringArray, StructArray, TimestampMicrosecondArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Field, Fields};

use super::json::{field_text, first_value, Json};
use crate::error::{KilnError, Result};
use crate::types::time_zone::Zone;
use crate::types::timestamp::{parse_timestamp_in, parse_wall_clock, parse_with_pattern, MICROS_PER_DAY, MICROS_PER_SECOND};
use crate::types::ScalarValue;

/// The options of the third argument Spark's two functions read (others are ignored, as Spark's
/// unknown options are).
#[derive(Debug, Clone)]
pub struct ReadOptions {
    failfast: bool,
    timestamp_format: Option<String>,
    date_format: Option<String>,
    separator: char,
    zone: Zone,
}

impl ReadOptions {
    /// The options of a `map(k, v, ...)` argument (its first row), in `zone`.
    pub fn new(map: Option<&ArrayRef>, zone: Zone) -> Result<ReadOptions> {
        let mut o = ReadOptions { failfast: false, timestamp_format: None, date_format: None, separator: ',', zone };
        let Some(map) = map.filter(|m| !m.is_empty() && m.is_valid(0)) else { return Ok(o) };
        let Some(map) = map.as_map_opt() else { return Err(KilnError::internal("the options of from_json are not a map")) };
        let entries = map.value(0);
        let (keys, values) = (entries.column(0).as_string_opt::<i32>(), entries.column(1).as_string_opt::<i32>());
        let (Some(keys), Some(values)) = (keys, values) else { return Err(non_string_options()) };
        for (k, v) in keys.iter().zip(values.iter()) {
            let (Some(k), Some(v)) = (k, v) else { continue };
            match k.to_ascii_lowercase().as_str() {
                "mode" => match v.to_ascii_uppercase().as_str() {
                    "PERMISSIVE" => o.failfast = false,
                    "FAILFAST" => o.failfast = true,
                    other => {
                        return Err(KilnError::analysis(
                            "PARSE_MODE_UNSUPPORTED",
                            format!("The function does not support the {other} mode. Acceptable modes are PERMISSIVE and FAILFAST."),
                        ))
                    }
                },
                "timestampformat" => o.timestamp_format = Some(v.to_string()),
                "dateformat" => o.date_format = Some(v.to_string()),
                "sep" | "delimiter" => o.separator = if v == "\\t" { '\t' } else { v.chars().next().unwrap_or(',') },
                _ => {}
            }
        }
        Ok(o)
    }
}

fn non_string_options() -> KilnError {
    KilnError::analysis("INVALID_OPTIONS.NON_STRING_TYPE", "A type of keys and values in `map()` must be string.")
}

fn malformed(text: &str) -> KilnError {
    KilnError::exec(format!(
        "[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in record parsing: `{text}`. Parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'. SQLSTATE: 22023"
    ))
}

/// Whether kiln reads `t` from JSON (`nested`) or from a CSV field (leaves only).
pub fn readable(t: &DataType, nested: bool) -> bool {
    use DataType::*;
    match t {
        Boolean | Int8 | Int16 | Int32 | Int64 | Float32 | Float64 | Decimal128(..) | Utf8 | Date32 | Timestamp(..) => true,
        Struct(fields) if nested => fields.iter().all(|f| readable(f.data_type(), true)),
        List(f) if nested => readable(f.data_type(), true),
        Map(entries, _) if nested => match entries.data_type() {
            Struct(kv) if kv.len() == 2 => kv[0].data_type() == &Utf8 && readable(kv[1].data_type(), true),
            _ => false,
        },
        _ => false,
    }
}

/// from_json over a column of documents.
pub fn from_json(texts: &StringArray, t: &DataType, o: &ReadOptions) -> Result<ArrayRef> {
    // A NULL or blank text is NULL; a document that is not JSON is malformed.
    let docs: Vec<Option<Option<Json>>> = texts.iter().map(|s| s.filter(|s| !s.trim().is_empty()).map(first_value)).collect();
    let fail = |row: usize| -> Result<()> { if o.failfast { Err(malformed(texts.value(row))) } else { Ok(()) } };
    if o.failfast {
        for (row, doc) in docs.iter().enumerate() {
            if let Some(doc) = doc {
                if !doc.as_ref().is_some_and(|d| fits(d, t, o, true)) {
                    fail(row)?;
                }
            }
        }
    }
    match t {
        DataType::Struct(fields) => {
            // Per field, each row's value (NULL where it does not fit).
            let mut cells: Vec<Vec<Option<&Json>>> = vec![Vec::with_capacity(docs.len()); fields.len()];
            for (row, doc) in docs.iter().enumerate() {
                let object = match doc {
                    Some(Some(d @ Json::Object(_))) => Some(d),
                    Some(_) => {
                        fail(row)?;
                        None
                    }
                    None => None,
                };
                for (f, column) in fields.iter().zip(cells.iter_mut()) {
                    let v = object.and_then(|d| d.last_field(f.name()));
                    column.push(v.filter(|v| fits(v, f.data_type(), o, false)));
                }
            }
            let children = fields.iter().zip(&cells).map(|(f, c)| build(c, f.data_type(), o)).collect::<Result<Vec<_>>>()?;
            let valid = NullBuffer::from(docs.iter().map(Option::is_some).collect::<Vec<_>>());
            Ok(Arc::new(StructArray::try_new(nullable(fields), children, Some(valid))?))
        }
        _ => {
            let mut cells = Vec::with_capacity(docs.len());
            for (row, doc) in docs.iter().enumerate() {
                cells.push(match doc {
                    Some(Some(v)) if fits(v, t, o, false) => Some(v),
                    Some(_) => {
                        fail(row)?;
                        None
                    }
                    None => None,
                });
            }
            build(&cells, t, o)
        }
    }
}

/// from_csv over a column of lines (the schema a struct of leaf types).
pub fn from_csv(texts: &StringArray, fields: &Fields, o: &ReadOptions) -> Result<ArrayRef> {
    let mut cells: Vec<Vec<ScalarValue>> = vec![Vec::with_capacity(texts.len()); fields.len()];
    for line in texts.iter() {
        let values = line.map(|l| split_csv(l, o.separator)).unwrap_or_default();
        for (i, (f, column)) in fields.iter().zip(cells.iter_mut()).enumerate() {
            let v = match values.get(i).and_then(|v| v.as_deref()) {
                None => ScalarValue::Null(f.data_type().clone()),
                Some(text) => match csv_leaf(text, f.data_type(), o) {
                    Some(v) => v,
                    None if o.failfast => return Err(malformed(line.unwrap_or_default())),
                    None => ScalarValue::Null(f.data_type().clone()),
                },
            };
            column.push(v);
        }
    }
    let children = fields.iter().zip(cells).map(|(f, c)| scalars_array(c, f.data_type())).collect::<Result<Vec<_>>>()?;
    let valid = NullBuffer::from(texts.iter().map(|t| t.is_some()).collect::<Vec<_>>());
    Ok(Arc::new(StructArray::try_new(nullable(fields), children, Some(valid))?))
}

/// The fields, each nullable (a value that does not fit is NULL whatever the DDL says).
fn nullable(fields: &Fields) -> Fields {
    fields.iter().map(|f| f.as_ref().clone().with_nullable(true)).collect()
}

/// Whether `v` reads as a `t` (JSON null always does). A struct's fields absorb their own
/// failures (they are NULL) unless `strict` (FAILFAST).
fn fits(v: &Json, t: &DataType, o: &ReadOptions, strict: bool) -> bool {
    match (t, v) {
        (_, Json::Null) => true,
        (DataType::Struct(fields), Json::Object(_)) => !strict || fields.iter().all(|f| v.last_field(f.name()).is_none_or(|x| fits(x, f.data_type(), o, true))),
        (DataType::List(f), Json::Array(items)) => items.iter().all(|x| fits(x, f.data_type(), o, strict)),
        (DataType::Map(entries, _), Json::Object(kv)) => match entries.data_type() {
            DataType::Struct(pair) if pair.len() == 2 => kv.iter().all(|(_, x)| fits(x, pair[1].data_type(), o, strict)),
            _ => false,
        },
        (DataType::Struct(_) | DataType::List(_) | DataType::Map(..), _) => false,
        (t, v) => json_leaf(v, t, o).is_some(),
    }
}

/// The column of `t` from values that fit it (None: NULL).
fn build(cells: &[Option<&Json>], t: &DataType, o: &ReadOptions) -> Result<ArrayRef> {
    let present = |c: &Option<&Json>| c.is_some_and(|v| *v != Json::Null);
    match t {
        DataType::Struct(fields) => {
            let children = fields
                .iter()
                .map(|f| {
                    let values: Vec<Option<&Json>> = cells.iter().map(|c| c.and_then(|v| v.last_field(f.name())).filter(|x| fits(x, f.data_type(), o, false))).collect();
                    build(&values, f.data_type(), o)
                })
                .collect::<Result<Vec<_>>>()?;
            let valid = NullBuffer::from(cells.iter().map(present).collect::<Vec<_>>());
            Ok(Arc::new(StructArray::try_new(nullable(fields), children, Some(valid))?))
        }
        DataType::List(f) => {
            let items: Vec<&[Json]> = cells.iter().map(|c| if let Some(Json::Array(a)) = c { a.as_slice() } else { &[] }).collect();
            let values = build(&items.iter().flat_map(|a| a.iter().map(Some)).collect::<Vec<_>>(), f.data_type(), o)?;
            let offsets = OffsetBuffer::from_lengths(items.iter().map(|a| a.len()));
            let valid = NullBuffer::from(cells.iter().map(present).collect::<Vec<_>>());
            Ok(Arc::new(ListArray::try_new(Arc::new(f.as_ref().clone().with_nullable(true)), offsets, values, Some(valid))?))
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(pair) = entries.data_type() else { return Err(KilnError::internal("a map's entries are not a struct")) };
            let kvs: Vec<&[(String, Json)]> = cells.iter().map(|c| if let Some(Json::Object(kv)) = c { kv.as_slice() } else { &[] }).collect();
            let keys: StringArray = kvs.iter().flat_map(|kv| kv.iter().map(|(k, _)| Some(k.as_str()))).collect();
            let values = build(&kvs.iter().flat_map(|kv| kv.iter().map(|(_, v)| Some(v))).collect::<Vec<_>>(), pair[1].data_type(), o)?;
            let pair: Fields = vec![pair[0].as_ref().clone(), pair[1].as_ref().clone().with_nullable(true)].into();
            let entries_array = StructArray::try_new(pair.clone(), vec![Arc::new(keys), values], None)?;
            let offsets = OffsetBuffer::from_lengths(kvs.iter().map(|kv| kv.len()));
            let valid = NullBuffer::from(cells.iter().map(present).collect::<Vec<_>>());
            let field = Arc::new(Field::new(entries.name(), DataType::Struct(pair), false));
            Ok(Arc::new(MapArray::try_new(field, offsets, entries_array, Some(valid), *sorted)?))
        }
        leaf => {
            let values = cells.iter().map(|c| c.and_then(|v| json_leaf(v, leaf, o)).unwrap_or_else(|| ScalarValue::Null(leaf.clone()))).collect();
            scalars_array(values, leaf)
        }
    }
}

/// A JSON value as a leaf type, None where it does not fit (Spark's JacksonParser).
fn json_leaf(v: &Json, t: &DataType, o: &ReadOptions) -> Option<ScalarValue> {
    use DataType::*;
    Some(match (t, v) {
        (_, Json::Null) => ScalarValue::Null(t.clone()),
        (Int8 | Int16 | Int32 | Int64, Json::Number(n)) => integral(n.as_i64()?, t)?,
        (Float32, Json::Number(n)) => ScalarValue::Float32(n.as_f64()? as f32),
        (Float64, Json::Number(n)) => ScalarValue::Float64(n.as_f64()?),
        (Float32, Json::String(s)) => ScalarValue::Float32(special_float(s)? as f32),
        (Float64, Json::String(s)) => ScalarValue::Float64(special_float(s)?),
        (Decimal128(p, s), Json::Number(n)) => decimal(&n.to_string(), *p, *s)?,
        (Utf8, Json::String(s)) => ScalarValue::Utf8(s.clone()),
        (Utf8, other) => ScalarValue::Utf8(field_text(other)),
        (Boolean, Json::Bool(b)) => ScalarValue::Boolean(*b),
        (Date32, Json::String(s)) => date(s, o)?,
        (Timestamp(_, zone), Json::String(s)) => timestamp(s, zone.is_none(), o)?,
        // A number is seconds since the epoch.
        (Timestamp(_, zone), Json::Number(n)) => ScalarValue::Timestamp(n.as_i64()?.checked_mul(MICROS_PER_SECOND)?, zone.is_none()),
        _ => return None,
    })
}

/// A CSV field (not empty: an empty field is NULL) as a leaf type, None where it does not fit
/// (Spark's UnivocityParser: integers exactly, floating point as Java's parseDouble).
fn csv_leaf(text: &str, t: &DataType, o: &ReadOptions) -> Option<ScalarValue> {
    use DataType::*;
    if text.is_empty() {
        return Some(ScalarValue::Null(t.clone()));
    }
    Some(match t {
        Int8 | Int16 | Int32 | Int64 => integral(text.parse().ok()?, t)?,
        Float32 => ScalarValue::Float32(java_double(text)? as f32),
        Float64 => ScalarValue::Float64(java_double(text)?),
        Decimal128(p, s) => decimal(text, *p, *s)?,
        Utf8 => ScalarValue::Utf8(text.to_string()),
        Boolean if text.eq_ignore_ascii_case("true") => ScalarValue::Boolean(true),
        Boolean if text.eq_ignore_ascii_case("false") => ScalarValue::Boolean(false),
        Date32 => date(text, o)?,
        Timestamp(_, zone) => timestamp(text, zone.is_none(), o)?,
        _ => return None,
    })
}

fn integral(v: i64, t: &DataType) -> Option<ScalarValue> {
    Some(match t {
        DataType::Int8 => ScalarValue::Int8(i8::try_from(v).ok()?),
        DataType::Int16 => ScalarValue::Int16(i16::try_from(v).ok()?),
        DataType::Int32 => ScalarValue::Int32(i32::try_from(v).ok()?),
        _ => ScalarValue::Int64(v),
    })
}

/// The quoted non-numbers Spark's JSON reader takes for a float or double.
fn special_float(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "Infinity" | "+Infinity" | "INF" | "+INF" => Some(f64::INFINITY),
        "-Infinity" | "-INF" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Java's `Double.parseDouble`: surrounding blanks allowed, `NaN` and `Infinity` spelled so.
fn java_double(text: &str) -> Option<f64> {
    let t = text.trim();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    match digits {
        "NaN" => Some(f64::NAN),
        "Infinity" => t.parse().ok(),
        _ if digits.bytes().all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')) => t.parse().ok(),
        _ => None,
    }
}

/// A decimal number's text as decimal(p, s), rounded half up as Spark's; None when it does not
/// fit the precision or is not a number.
fn decimal(text: &str, p: u8, s: i8) -> Option<ScalarValue> {
    let t = text.trim();
    let (negative, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
        None => (t, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() || !whole.bytes().chain(fraction.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    // digits * 10^(exponent - fraction digits), brought to scale s.
    let digits: String = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    let shift = exponent - fraction.len() as i32 + s as i32;
    let mut value: i128 = if digits.is_empty() { 0 } else if digits.len() > 38 { return None } else { digits.parse().ok()? };
    if shift >= 0 {
        value = value.checked_mul(10i128.checked_pow(shift as u32)?)?;
    } else {
        let divisor = 10i128.checked_pow((-shift) as u32).unwrap_or(0);
        value = if divisor == 0 { 0 } else { (value + divisor / 2) / divisor };
    }
    if value >= 10i128.pow(p as u32) {
        return None;
    }
    Some(ScalarValue::Decimal(if negative { -value } else { value }, p, s))
}

fn date(text: &str, o: &ReadOptions) -> Option<ScalarValue> {
    let days = match &o.date_format {
        Some(f) => parse_with_pattern(text, f).ok()??.0.div_euclid(MICROS_PER_DAY) as i32,
        None => crate::types::parse_date(text)?,
    };
    Some(ScalarValue::Date32(days))
}

/// A TIMESTAMP in the session zone unless the text names its own; a TIMESTAMP_NTZ (`ntz`) as
/// the wall clock it spells.
fn timestamp(text: &str, ntz: bool, o: &ReadOptions) -> Option<ScalarValue> {
    let micros = match (&o.timestamp_format, ntz) {
        (Some(f), true) => parse_with_pattern(text, f).ok()??.0,
        (Some(f), false) => {
            let (wall, own) = parse_with_pattern(text, f).ok()??;
            own.unwrap_or(o.zone).to_utc(wall)?
        }
        (None, true) => parse_wall_clock(text).filter(|(_, own)| own.is_none())?.0,
        (None, false) => parse_timestamp_in(text, o.zone)?,
    };
    Some(ScalarValue::Timestamp(micros, ntz))
}

/// A column of one leaf type from its values (NULL for any other value).
fn scalars_array(values: Vec<ScalarValue>, t: &DataType) -> Result<ArrayRef> {
    use ScalarValue as S;
    let it = values.into_iter();
    Ok(match t {
        DataType::Boolean => Arc::new(it.map(|v| if let S::Boolean(b) = v { Some(b) } else { None }).collect::<BooleanArray>()),
        DataType::Int8 => Arc::new(it.map(|v| if let S::Int8(x) = v { Some(x) } else { None }).collect::<Int8Array>()),
        DataType::Int16 => Arc::new(it.map(|v| if let S::Int16(x) = v { Some(x) } else { None }).collect::<Int16Array>()),
        DataType::Int32 => Arc::new(it.map(|v| if let S::Int32(x) = v { Some(x) } else { None }).collect::<Int32Array>()),
        DataType::Int64 => Arc::new(it.map(|v| if let S::Int64(x) = v { Some(x) } else { None }).collect::<Int64Array>()),
        DataType::Float32 => Arc::new(it.map(|v| if let S::Float32(x) = v { Some(x) } else { None }).collect::<Float32Array>()),
        DataType::Float64 => Arc::new(it.map(|v| if let S::Float64(x) = v { Some(x) } else { None }).collect::<Float64Array>()),
        DataType::Utf8 => Arc::new(it.map(|v| if let S::Utf8(x) = v { Some(x) } else { None }).collect::<StringArray>()),
        DataType::Date32 => Arc::new(it.map(|v| if let S::Date32(x) = v { Some(x) } else { None }).collect::<Date32Array>()),
        DataType::Decimal128(p, s) => {
            Arc::new(it.map(|v| if let S::Decimal(x, ..) = v { Some(x) } else { None }).collect::<Decimal128Array>().with_precision_and_scale(*p, *s)?)
        }
        DataType::Timestamp(..) => Arc::new(it.map(|v| if let S::Timestamp(x, _) = v { Some(x) } else { None }).collect::<TimestampMicrosecondArray>().with_data_type(t.clone())),
        other => return Err(KilnError::internal(format!("from_json/from_csv reading {other}"))),
    })
}

/// A CSV line's fields as Spark's default CSV parser reads them: `sep`-separated, `"`-quoted
/// (a quote inside written `\"` or `""`); an empty unquoted field is None (NULL).
fn split_csv(line: &str, sep: char) -> Vec<Option<String>> {
    let mut out = vec![];
    let mut field = String::new();
    let (mut quoted, mut in_quotes, mut chars) = (false, false, line.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_quotes && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' if in_quotes && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' if in_quotes => in_quotes = false,
            '"' if field.is_empty() && !quoted => {
                in_quotes = true;
                quoted = true;
            }
            c if c == sep && !in_quotes => {
                out.push((quoted || !field.is_empty()).then(|| std::mem::take(&mut field)));
                quoted = false;
            }
            c => field.push(c),
        }
    }
    out.push((quoted || !field.is_empty()).then_some(field));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_lines_split_as_spark_splits_them() {
        let f = |l: &str| split_csv(l, ',').into_iter().map(|v| v.unwrap_or_else(|| "NULL".into())).collect::<Vec<_>>();
        assert_eq!(f("1,abc"), ["1", "abc"]);
        assert_eq!(f("\"a,b\",2"), ["a,b", "2"]);
        assert_eq!(f("a,,c"), ["a", "NULL", "c"]);
        assert_eq!(f(""), ["NULL"]);
        assert_eq!(f(" 1 , x "), [" 1 ", " x "]);
    }

    #[test]
    fn decimals_round_half_up_and_overflow_to_none() {
        assert_eq!(decimal("1.255", 5, 2), Some(ScalarValue::Decimal(126, 5, 2)));
        assert_eq!(decimal("-1.255", 5, 2), Some(ScalarValue::Decimal(-126, 5, 2)));
        assert_eq!(decimal("12345.5", 5, 2), None);
        assert_eq!(decimal("1e2", 5, 2), Some(ScalarValue::Decimal(10000, 5, 2)));
        assert_eq!(decimal("x", 5, 2), None);
    }
}
