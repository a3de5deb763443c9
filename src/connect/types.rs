//! Spark Connect's `DataType` messages and kiln's Arrow types, both ways.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, IntervalUnit, Schema, TimeUnit};
use spark_connect_proto::data_type::{self as dt, Kind};

use crate::error::{KilnError, Result};

/// The Spark type of a kiln column type, as the protocol carries it.
pub fn to_proto(data_type: &DataType) -> Result<spark_connect_proto::DataType> {
    let kind = match data_type {
        DataType::Null => Kind::Null(dt::Null::default()),
        DataType::Boolean => Kind::Boolean(dt::Boolean::default()),
        DataType::Int8 => Kind::Byte(dt::Byte::default()),
        DataType::Int16 => Kind::Short(dt::Short::default()),
        DataType::Int32 => Kind::Integer(dt::Integer::default()),
        DataType::Int64 => Kind::Long(dt::Long::default()),
        DataType::Float32 => Kind::Float(dt::Float::default()),
        DataType::Float64 => Kind::Double(dt::Double::default()),
        DataType::Decimal128(p, s) => Kind::Decimal(dt::Decimal { precision: Some(i32::from(*p)), scale: Some(i32::from(*s)), ..Default::default() }),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Kind::String(dt::String::default()),
        DataType::Binary | DataType::LargeBinary => Kind::Binary(dt::Binary::default()),
        DataType::Date32 => Kind::Date(dt::Date::default()),
        DataType::Timestamp(_, Some(_)) => Kind::Timestamp(dt::Timestamp::default()),
        DataType::Timestamp(_, None) => Kind::TimestampNtz(dt::TimestampNtz::default()),
        // Spark's DayTimeIntervalType(start, end) and YearMonthIntervalType(start, end).
        t if crate::types::interval::is_day_time(t) => {
            let (s, e) = crate::types::interval::dt_fields(t).unwrap_or_default();
            Kind::DayTimeInterval(dt::DayTimeInterval { start_field: Some(i32::from(s)), end_field: Some(i32::from(e)), ..Default::default() })
        }
        t if crate::types::interval::is_year_month(t) => {
            let (s, e) = crate::types::interval::ym_fields(t).unwrap_or_default();
            Kind::YearMonthInterval(dt::YearMonthInterval { start_field: Some(i32::from(s)), end_field: Some(i32::from(e)), ..Default::default() })
        }
        DataType::Interval(IntervalUnit::MonthDayNano) => Kind::CalendarInterval(dt::CalendarInterval::default()),
        DataType::Duration(_) | DataType::Interval(IntervalUnit::DayTime) => {
            Kind::DayTimeInterval(dt::DayTimeInterval { start_field: Some(0), end_field: Some(3), ..Default::default() })
        }
        DataType::List(f) | DataType::LargeList(f) => {
            Kind::Array(Box::new(dt::Array { element_type: Some(Box::new(to_proto(f.data_type())?)), contains_null: f.is_nullable(), ..Default::default() }))
        }
        DataType::Struct(fields) => Kind::Struct(struct_of(fields)?),
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(KilnError::internal(format!("map entries of type {}", entries.data_type())));
            };
            let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
                return Err(KilnError::internal("map entries without a key and a value"));
            };
            Kind::Map(Box::new(dt::Map {
                key_type: Some(Box::new(to_proto(k.data_type())?)),
                value_type: Some(Box::new(to_proto(v.data_type())?)),
                value_contains_null: v.is_nullable(),
                ..Default::default()
            }))
        }
        other => return Err(KilnError::analysis_with("UNSUPPORTED_DATATYPE", format!("[UNSUPPORTED_DATATYPE] Unsupported data type {other}."), &[("typeName", &other.to_string())])),
    };
    Ok(spark_connect_proto::DataType { kind: Some(kind) })
}

fn struct_of(fields: &Fields) -> Result<dt::Struct> {
    let fields = fields
        .iter()
        .map(|f| Ok(dt::StructField { name: f.name().clone(), data_type: Some(to_proto(f.data_type())?), nullable: f.is_nullable(), metadata: None }))
        .collect::<Result<Vec<_>>>()?;
    Ok(dt::Struct { fields, ..Default::default() })
}

/// A result schema as the protocol's struct type.
pub fn schema_to_proto(schema: &Schema) -> Result<spark_connect_proto::DataType> {
    Ok(spark_connect_proto::DataType { kind: Some(Kind::Struct(struct_of(schema.fields())?)) })
}

/// The kiln column type of a Spark type sent by a client (a cast's target).
pub fn from_proto(data_type: &spark_connect_proto::DataType) -> Result<DataType> {
    let unsupported = |what: &str| KilnError::unsupported(format!("[UNSUPPORTED_DATATYPE] the Spark Connect data type {what}"));
    Ok(match data_type.kind.as_ref().ok_or_else(|| unsupported("without a kind"))? {
        Kind::Null(_) => DataType::Null,
        Kind::Boolean(_) => DataType::Boolean,
        Kind::Byte(_) => DataType::Int8,
        Kind::Short(_) => DataType::Int16,
        Kind::Integer(_) => DataType::Int32,
        Kind::Long(_) => DataType::Int64,
        Kind::Float(_) => DataType::Float32,
        Kind::Double(_) => DataType::Float64,
        Kind::Decimal(d) => {
            let precision = u8::try_from(d.precision.unwrap_or(10)).map_err(|_| unsupported("decimal of a negative precision"))?;
            let scale = i8::try_from(d.scale.unwrap_or(0)).map_err(|_| unsupported("decimal of a scale out of range"))?;
            DataType::Decimal128(precision, scale)
        }
        Kind::String(_) | Kind::Char(_) | Kind::VarChar(_) => DataType::Utf8,
        Kind::Binary(_) => DataType::Binary,
        Kind::Date(_) => DataType::Date32,
        Kind::Timestamp(_) => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        Kind::TimestampNtz(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
        Kind::Array(a) => {
            let element = a.element_type.as_deref().ok_or_else(|| unsupported("array without an element type"))?;
            DataType::List(Arc::new(Field::new("element", from_proto(element)?, a.contains_null)))
        }
        Kind::Struct(s) => DataType::Struct(
            s.fields
                .iter()
                .map(|f| {
                    let t = f.data_type.as_ref().ok_or_else(|| unsupported("struct field without a type"))?;
                    Ok(Field::new(f.name.clone(), from_proto(t)?, f.nullable))
                })
                .collect::<Result<Fields>>()?,
        ),
        Kind::Unparsed(u) => crate::sql::parse_data_type(&u.data_type_string)?,
        other => return Err(unsupported(&format!("{other:?}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_round_trip() {
        let types = [
            DataType::Int32,
            DataType::Decimal128(12, 2),
            DataType::Utf8,
            DataType::Date32,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            DataType::Timestamp(TimeUnit::Microsecond, None),
            DataType::List(Arc::new(Field::new("element", DataType::Int64, true))),
            DataType::Struct(vec![Field::new("a", DataType::Boolean, false)].into()),
        ];
        for t in types {
            assert_eq!(from_proto(&to_proto(&t).unwrap()).unwrap(), t);
        }
    }
}

/// A client's storage level as kiln's.
pub fn storage_level(level: &spark_connect_proto::StorageLevel) -> crate::catalog::cached::StorageLevel {
    crate::catalog::cached::StorageLevel {
        use_disk: level.use_disk,
        use_memory: level.use_memory,
        use_off_heap: level.use_off_heap,
        deserialized: level.deserialized,
        replication: u32::try_from(level.replication).unwrap_or(1),
    }
}

/// kiln's storage level as the client reads it.
pub fn storage_level_to_proto(level: &crate::catalog::cached::StorageLevel) -> spark_connect_proto::StorageLevel {
    spark_connect_proto::StorageLevel {
        use_disk: level.use_disk,
        use_memory: level.use_memory,
        use_off_heap: level.use_off_heap,
        deserialized: level.deserialized,
        replication: i32::try_from(level.replication).unwrap_or(i32::MAX),
    }
}
