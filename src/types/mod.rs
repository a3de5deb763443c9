//! Data types (Arrow's), scalar values, and Spark's type rules: simple names, decimal
//! precision/scale of arithmetic and aggregates, implicit widening.

pub mod host_arrow;
pub mod interval;
mod java_text;
mod scalar;
pub mod time_zone;
pub mod timestamp;
pub use java_text::{java_double, java_float};
pub use scalar::{format_date, format_decimal, parse_date, ScalarValue};
pub use timestamp::{format_timestamp, is_timestamp, parse_timestamp, timestamp_type};
pub(crate) use scalar::chrono_like::{civil_from_days, days_from_civil, days_in_month};

use arrow::datatypes::DataType;

/// The largest precision of a Spark decimal.
pub const MAX_DECIMAL_PRECISION: u8 = 38;
/// The scale Spark keeps at least when a decimal result would exceed 38 digits.
pub const MINIMUM_ADJUSTED_SCALE: i8 = 6;

/// Spark's `simpleString` of a type: `int`, `bigint`, `decimal(10,2)`, `string`, ...
pub fn spark_type_name(dt: &DataType) -> String {
    match dt {
        DataType::Null => "void".into(),
        DataType::Boolean => "boolean".into(),
        DataType::Int8 => "tinyint".into(),
        DataType::Int16 => "smallint".into(),
        DataType::Int32 => "int".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Decimal128(p, s) => format!("decimal({p},{s})"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Date32 => "date".into(),
        t if interval::is_interval(t) => interval::type_name(t),
        DataType::Interval(arrow::datatypes::IntervalUnit::MonthDayNano) => "interval".into(),
        DataType::Timestamp(_, None) => "timestamp_ntz".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Binary => "binary".into(),
        DataType::List(f) | DataType::LargeList(f) => format!("array<{}>", spark_type_name(f.data_type())),
        DataType::Struct(fields) => {
            let fields: Vec<String> = fields.iter().map(|f| format!("{}:{}", f.name(), spark_type_name(f.data_type()))).collect();
            format!("struct<{}>", fields.join(","))
        }
        DataType::Map(..) => match map_key_value(dt) {
            Some((k, v)) => format!("map<{},{}>", spark_type_name(k.data_type()), spark_type_name(v.data_type())),
            None => "map".into(),
        },
        other => format!("{other}").to_lowercase(),
    }
}

/// Spark's `DataType.sql` (what its error messages quote): `INT`, `DECIMAL(10,2)`,
/// `ARRAY<INT>`, `STRUCT<a: INT, b: STRING>`, `MAP<STRING, INT>`.
pub fn sql_type_name(dt: &DataType) -> String {
    match dt {
        DataType::List(f) | DataType::LargeList(f) => format!("ARRAY<{}>", sql_type_name(f.data_type())),
        DataType::Struct(fields) => {
            let fields: Vec<String> = fields.iter().map(|f| format!("{}: {}", f.name(), sql_type_name(f.data_type()))).collect();
            format!("STRUCT<{}>", fields.join(", "))
        }
        DataType::Map(..) => match map_key_value(dt) {
            Some((k, v)) => format!("MAP<{}, {}>", sql_type_name(k.data_type()), sql_type_name(v.data_type())),
            None => "MAP".into(),
        },
        other => spark_type_name(other).to_uppercase(),
    }
}

/// The array type kiln makes for elements of type `element` (always the same field, so arrays
/// of one element type made anywhere have one arrow type).
pub fn list_type(element: DataType) -> DataType {
    DataType::List(std::sync::Arc::new(arrow::datatypes::Field::new("item", element, true)))
}

/// The struct type kiln makes for fields `(name, type)`: every field nullable, so structs of
/// one shape made anywhere have one arrow type (Spark's field nullability is not part of what
/// it prints or compares).
pub fn struct_type(fields: impl IntoIterator<Item = (String, DataType)>) -> DataType {
    DataType::Struct(fields.into_iter().map(|(n, t)| arrow::datatypes::Field::new(n, t, true)).collect())
}

/// The map type kiln makes (arrow's layout: entries of a non-NULL `key` and a `value`).
pub fn map_type(key: DataType, value: DataType) -> DataType {
    let entries = DataType::Struct(arrow::datatypes::Fields::from(vec![
        arrow::datatypes::Field::new("key", key, false),
        arrow::datatypes::Field::new("value", value, true),
    ]));
    DataType::Map(std::sync::Arc::new(arrow::datatypes::Field::new("entries", entries, false)), false)
}

/// The key and value fields of a map type (whatever its entries are named, as a Parquet
/// file's `key_value` entries are).
pub fn map_key_value(dt: &DataType) -> Option<(&arrow::datatypes::FieldRef, &arrow::datatypes::FieldRef)> {
    match dt {
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(f) if f.len() == 2 => Some((&f[0], &f[1])),
            _ => None,
        },
        _ => None,
    }
}

/// True for types Spark can order and group by: not maps, nor structs or arrays holding one.
pub fn is_orderable(dt: &DataType) -> bool {
    match dt {
        // Maps, and Spark's calendar interval (make_interval's).
        DataType::Map(..) | DataType::Interval(arrow::datatypes::IntervalUnit::MonthDayNano) => false,
        DataType::Struct(f) => f.iter().all(|f| is_orderable(f.data_type())),
        DataType::List(f) | DataType::LargeList(f) => is_orderable(f.data_type()),
        _ => true,
    }
}

/// True for the numeric types: integral, floating point and decimal.
pub fn is_numeric(dt: &DataType) -> bool {
    matches!(
        dt,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 | DataType::Float32 | DataType::Float64 | DataType::Decimal128(_, _)
    )
}

/// True for the integral types.
pub fn is_integral(dt: &DataType) -> bool {
    matches!(dt, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64)
}

/// True for string types.
pub fn is_string(dt: &DataType) -> bool {
    matches!(dt, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// The decimal type an integral type converts to without loss (Spark's `DecimalType.forType`).
pub fn decimal_for_integral(dt: &DataType) -> Option<(u8, i8)> {
    match dt {
        DataType::Int8 => Some((3, 0)),
        DataType::Int16 => Some((5, 0)),
        DataType::Int32 => Some((10, 0)),
        DataType::Int64 => Some((20, 0)),
        DataType::Decimal128(p, s) => Some((*p, *s)),
        _ => None,
    }
}

/// Spark's `DecimalType.adjustPrecisionScale` (with `allowPrecisionLoss=true`).
pub fn adjust_precision_scale(precision: i32, scale: i32) -> (u8, i8) {
    let max = MAX_DECIMAL_PRECISION as i32;
    if precision <= max {
        (precision as u8, scale as i8)
    } else if scale < 0 {
        (max as u8, scale as i8)
    } else {
        let int_digits = precision - scale;
        let min_scale = scale.min(MINIMUM_ADJUSTED_SCALE as i32);
        let adjusted_scale = (max - int_digits).max(min_scale);
        (max as u8, adjusted_scale as i8)
    }
}

/// Bounded decimal type (precision capped at 38, no scale adjustment): `DecimalType.bounded`.
pub fn bounded_decimal(precision: i32, scale: i32) -> (u8, i8) {
    let max = MAX_DECIMAL_PRECISION as i32;
    (precision.min(max) as u8, scale.min(max) as i8)
}

/// The arithmetic operators whose decimal result type Spark defines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecimalOp {
    /// `+`.
    Add,
    /// `-`.
    Subtract,
    /// `*`.
    Multiply,
    /// `/`.
    Divide,
    /// `%`.
    Remainder,
}

/// Spark's result type of `decimal(p1,s1) op decimal(p2,s2)`.
pub fn decimal_result(op: DecimalOp, (p1, s1): (u8, i8), (p2, s2): (u8, i8)) -> (u8, i8) {
    let (p1, s1, p2, s2) = (p1 as i32, s1 as i32, p2 as i32, s2 as i32);
    match op {
        DecimalOp::Add | DecimalOp::Subtract => {
            let scale = s1.max(s2);
            let range = (p1 - s1).max(p2 - s2);
            adjust_precision_scale(range + scale + 1, scale)
        }
        DecimalOp::Multiply => adjust_precision_scale(p1 + p2 + 1, s1 + s2),
        DecimalOp::Divide => {
            let scale = (MINIMUM_ADJUSTED_SCALE as i32).max(s1 + p2 + 1);
            let precision = p1 - s1 + s2 + scale;
            adjust_precision_scale(precision, scale)
        }
        DecimalOp::Remainder => {
            let scale = s1.max(s2);
            adjust_precision_scale((p1 - s1).min(p2 - s2) + scale, scale)
        }
    }
}

thread_local! {
    static LEGACY_COERCION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with Spark's legacy (`spark.sql.ansi.enabled=false`) type coercion deciding
/// [`wider_type`] and [`common_type`] on this thread when `legacy` (the analyzer's setting).
pub fn with_legacy_coercion<T>(legacy: bool, f: impl FnOnce() -> T) -> T {
    let before = LEGACY_COERCION.with(|c| c.replace(legacy));
    let out = f();
    LEGACY_COERCION.with(|c| c.set(before));
    out
}

/// True inside [`with_legacy_coercion`]`(true, ..)`.
pub fn legacy_coercion() -> bool {
    LEGACY_COERCION.with(std::cell::Cell::get)
}

/// The wider of two types for comparison and arithmetic (Spark's ANSI `findTightestCommonType` and
/// `findWiderTypeForDecimal`), if any: tinyint < smallint < int < bigint < float < double, except
/// that an integral type and a float meet in double (ANSI keeps the integer's precision); an
/// integral type and a decimal meet in a decimal, a decimal and a float or double in double. The
/// one place numeric widening is decided.
pub fn wider_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(a.clone());
    }
    match (a, b) {
        (Null, t) | (t, Null) => Some(t.clone()),
        (Float64, t) | (t, Float64) if is_numeric(t) => Some(Float64),
        (Float32, Decimal128(..)) | (Decimal128(..), Float32) => Some(Float64),
        // Legacy TypeCoercion's numericPrecedence: float is wider than any integer.
        (Float32, t) | (t, Float32) if is_integral(t) && legacy_coercion() => Some(Float32),
        (Float32, t) | (t, Float32) if is_integral(t) => Some(Float64),
        (Decimal128(_, _), _) | (_, Decimal128(_, _)) if is_numeric(a) && is_numeric(b) => {
            let (p1, s1) = decimal_for_integral(a)?;
            let (p2, s2) = decimal_for_integral(b)?;
            let scale = s1.max(s2) as i32;
            let range = (p1 as i32 - s1 as i32).max(p2 as i32 - s2 as i32);
            let (p, s) = bounded_decimal(range + scale, scale);
            Some(Decimal128(p, s))
        }
        _ if is_integral(a) && is_integral(b) => Some(if int_rank(a) >= int_rank(b) { a.clone() } else { b.clone() }),
        // Legacy coercion promotes a string meeting a date or timestamp to a string instead.
        (t, s) | (s, t) if is_string(s) && (t == &Date32) && !legacy_coercion() => Some(Date32),
        // A date widens to a timestamp; TIMESTAMP wins over TIMESTAMP_NTZ (Spark's order).
        (t @ Timestamp(..), s) | (s, t @ Timestamp(..)) if (is_string(s) && !legacy_coercion()) || s == &Date32 => Some(t.clone()),
        (Timestamp(..), Timestamp(..)) => Some(timestamp_type(false)),
        _ if interval::is_interval(a) && interval::is_interval(b) => interval::wider_interval(a, b),
        _ => widen_parts(a, b, wider_type),
    }
}

/// Two arrays, structs or maps widened part by part by `part` (Spark's findWiderTypeForTwo on
/// them): arrays by their elements, structs of as many fields field by field (names must agree,
/// in any case, as Spark's default case-insensitive resolution compares them), maps by key and
/// value. None for any other pair.
fn widen_parts(a: &DataType, b: &DataType, part: fn(&DataType, &DataType) -> Option<DataType>) -> Option<DataType> {
    use DataType::*;
    match (a, b) {
        (List(x), List(y)) => {
            let t = part(x.data_type(), y.data_type())?;
            Some(List(std::sync::Arc::new(x.as_ref().clone().with_data_type(t).with_nullable(x.is_nullable() || y.is_nullable()))))
        }
        (Struct(x), Struct(y)) if x.len() == y.len() => {
            let mut fields = Vec::with_capacity(x.len());
            for (fx, fy) in x.iter().zip(y.iter()) {
                if !fx.name().eq_ignore_ascii_case(fy.name()) {
                    return None;
                }
                fields.push((fx.name().clone(), part(fx.data_type(), fy.data_type())?));
            }
            Some(struct_type(fields))
        }
        (Map(..), Map(..)) => {
            let ((kx, vx), (ky, vy)) = (map_key_value(a)?, map_key_value(b)?);
            Some(map_type(part(kx.data_type(), ky.data_type())?, part(vx.data_type(), vy.data_type())?))
        }
        _ => None,
    }
}

/// Spark's ANSI string promotion (`AnsiStringPromotionTypeCoercion.findWiderTypeForString`): the
/// type a string and another operand both take in a binary operator, IN, CASE, COALESCE and set
/// operations when [`wider_type`] has none: with an integral type BIGINT, with a float, double or
/// decimal DOUBLE, with NULL or another string a string, with a boolean, date, timestamp or binary
/// that type; with an interval none (which interval the string would be is unknown).
pub fn string_promotion(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    let (s, other) = if is_string(a) { (a, b) } else if is_string(b) { (b, a) } else { return None };
    match other {
        t if is_integral(t) => Some(Int64),
        Float32 | Float64 | Decimal128(..) => Some(Float64),
        Null => Some(s.clone()),
        t if is_string(t) => Some(s.clone()),
        Boolean | Date32 | Timestamp(..) | Binary => Some(other.clone()),
        _ => None,
    }
}

/// The common type of values that meet in comparisons, IN, CASE, COALESCE, arrays and set
/// operations (Spark's ANSI `findWiderTypeForTwo`): [`wider_type`], else [`string_promotion`].
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    if legacy_coercion() {
        return legacy_common_type(a, b);
    }
    wider_type(a, b).or_else(|| string_promotion(a, b))
}

/// Legacy TypeCoercion's `findWiderTypeForTwo`: [`wider_type`], else a string meeting any
/// other atomic type but binary and boolean is a string (`coalesce(1, 'a')` is '1'); arrays,
/// maps and structs by their parts, string promotion included.
fn legacy_common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    if matches!((a, b), (List(_), List(_)) | (Map(..), Map(..)) | (Struct(_), Struct(_))) {
        return widen_parts(a, b, legacy_common_type);
    }
    wider_type(a, b).or_else(|| {
        let (s, other) = if is_string(a) { (a, b) } else if is_string(b) { (b, a) } else { return None };
        let atomic = is_numeric(other) || is_string(other) || matches!(other, Date32 | Timestamp(..)) || interval::is_interval(other);
        atomic.then(|| s.clone())
    })
}

fn int_rank(dt: &DataType) -> u8 {
    match dt {
        DataType::Int8 => 1,
        DataType::Int16 => 2,
        DataType::Int32 => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tpch_q1_decimal_types_match_spark() {
        // l_extendedprice * (1 - l_discount): decimal(15,2) * decimal(16,2) -> decimal(32,4)
        let one_minus = decimal_result(DecimalOp::Subtract, (1, 0), (15, 2));
        assert_eq!(one_minus, (16, 2));
        let disc_price = decimal_result(DecimalOp::Multiply, (15, 2), one_minus);
        assert_eq!(disc_price, (32, 4));
        let charge = decimal_result(DecimalOp::Multiply, disc_price, (16, 2));
        assert_eq!(charge, (38, 6)); // 49 digits wanted, adjusted to 38 keeping scale 6
    }

    #[test]
    fn division_keeps_minimum_scale() {
        assert_eq!(decimal_result(DecimalOp::Divide, (10, 2), (10, 0)), (21, 13));
    }
}
