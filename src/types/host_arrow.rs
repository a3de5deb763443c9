//! Arrow data from a host (or a file) in the types kiln's operators read: each Arrow type maps
//! to the Arrow type kiln uses for the Spark type it stands for, or is refused by name.
//!
//! | Arrow | kiln (Spark type) |
//! | --- | --- |
//! | `UInt8` / `UInt16` / `UInt32` | `Int16` / `Int32` / `Int64` (`smallint`, `int`, `bigint`) |
//! | `UInt64` | `Decimal128(20, 0)` (`decimal(20,0)`: every value fits) |
//! | `Float16` | `Float32` (`float`) |
//! | `LargeUtf8`, `Utf8View`, `Dictionary(_, Utf8)` | `Utf8` (`string`), dictionaries decoded |
//! | `LargeBinary`, `BinaryView`, `FixedSizeBinary` | `Binary` |
//! | `Timestamp(unit, Some(zone))` | `Timestamp(µs, "+00:00")` (`timestamp`, the same instant) |
//! | `Timestamp(unit, None)` | `Timestamp(µs, None)` (`timestamp_ntz`) |
//! | `Date64` | `Date32` (`date`) |
//! | `Decimal32` / `Decimal64` / `Decimal256` of precision ≤ 38 | `Decimal128` |
//! | `Duration(unit)` | `Duration(µs)` (`interval day to second`) |
//! | `List`, `LargeList`, `FixedSizeList`, `Struct`, `Map` | the same shape, elements converted |
//!
//! Nanosecond timestamps and durations keep whole microseconds, as Spark's microsecond types do.
//! Other types (times of day, unions, day-time intervals in milliseconds, decimals wider than
//! 38 digits) are refused with `UNSUPPORTED_ARROWTYPE`, naming the column.

use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Field, IntervalUnit, Schema, SchemaRef, TimeUnit};
use arrow::record_batch::RecordBatch;

use crate::error::{KilnError, Result};

/// The type kiln reads a column of Arrow type `dt` as, or None when Spark has no type for it.
pub fn spark_arrow_type(dt: &DataType) -> Option<DataType> {
    use DataType::*;
    Some(match dt {
        Null | Boolean | Int8 | Int16 | Int32 | Int64 | Float32 | Float64 | Utf8 | Binary | Date32 => dt.clone(),
        Interval(IntervalUnit::YearMonth) => dt.clone(),
        UInt8 => Int16,
        UInt16 => Int32,
        UInt32 => Int64,
        UInt64 => Decimal128(20, 0),
        Float16 => Float32,
        LargeUtf8 | Utf8View => Utf8,
        LargeBinary | BinaryView | FixedSizeBinary(_) => Binary,
        Date64 => Date32,
        Decimal128(p, s) | Decimal256(p, s) if *p <= 38 => Decimal128(*p, *s),
        Decimal32(p, s) | Decimal64(p, s) => Decimal128(*p, *s),
        Timestamp(_, zone) => super::timestamp_type(zone.is_none()),
        Duration(_) => Duration(TimeUnit::Microsecond),
        Dictionary(_, values) => spark_arrow_type(values)?,
        List(f) | LargeList(f) | FixedSizeList(f, _) => super::list_type(spark_arrow_type(f.data_type())?),
        Struct(fields) => Struct(fields.iter().map(|f| spark_field(f)).collect::<Option<Vec<_>>>()?.into()),
        Map(..) => {
            let (k, v) = super::map_key_value(dt)?;
            super::map_type(spark_arrow_type(k.data_type())?, spark_arrow_type(v.data_type())?)
        }
        _ => return None,
    })
}

fn spark_field(f: &Field) -> Option<Field> {
    Some(f.clone().with_data_type(spark_arrow_type(f.data_type())?))
}

/// The schema kiln reads `schema`'s columns as; `UNSUPPORTED_ARROWTYPE` naming the first
/// column Spark has no type for. `what` says where the data came from (`register_batches(`t`)`).
pub fn spark_schema(schema: &Schema, what: &str) -> Result<SchemaRef> {
    let fields = schema
        .fields()
        .iter()
        .map(|f| {
            spark_field(f).ok_or_else(|| {
                KilnError::analysis_with(
                    "UNSUPPORTED_ARROWTYPE",
                    format!("Unsupported arrow type {} of the column `{}` ({what}): Spark has no type for it; cast it before handing it to kiln.", f.data_type(), f.name()),
                    &[("typeName", &f.data_type().to_string())],
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())))
}

/// `batch` with its columns converted to `schema` (from [`spark_schema`] of its own schema);
/// columns already of their type are kept as they are.
pub fn to_spark_batch(batch: &RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| -> Result<ArrayRef> {
            if c.data_type() == f.data_type() {
                return Ok(c.clone());
            }
            arrow::compute::cast(c, f.data_type())
                .map_err(|e| KilnError::exec(format!("column `{}`: cannot convert {} to {}: {e}", f.name(), c.data_type(), f.data_type())))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(schema.clone(), columns, &arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())))?)
}

/// `batch` as a host reads it: an interval column of a type other than YEAR TO MONTH or DAY TO
/// SECOND (kept in a decimal type, see `types::interval`) becomes Arrow's
/// `Interval(YearMonth)` or `Duration(µs)` (the fields are lost; the values stay months or
/// microseconds), a calendar interval's time part nanoseconds as Arrow's `MonthDayNano` means.
pub fn host_batch(batch: &RecordBatch) -> Result<RecordBatch> {
    use super::interval::{is_day_time, is_year_month, DAY_TIME, YEAR_MONTH};
    let host_type = |t: &DataType| if is_year_month(t) { YEAR_MONTH } else if is_day_time(t) { DAY_TIME } else { t.clone() };
    let calendar = |t: &DataType| *t == super::interval::CALENDAR;
    if batch.schema().fields().iter().all(|f| host_type(f.data_type()) == *f.data_type() && !calendar(f.data_type())) {
        return Ok(batch.clone());
    }
    let fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone().with_data_type(host_type(f.data_type()))).collect();
    let columns = batch
        .columns()
        .iter()
        .map(|c| -> Result<ArrayRef> {
            let t = c.data_type();
            Ok(if is_year_month(t) && *t != YEAR_MONTH {
                super::interval::year_month_array(super::interval::months(c)?, &YEAR_MONTH)
            } else if is_day_time(t) && *t != DAY_TIME {
                super::interval::day_time_array(super::interval::micros(c)?, &DAY_TIME)?
            } else if calendar(t) {
                let parts = super::interval::calendar_parts(c)?;
                let mut out = Vec::with_capacity(parts.len());
                for p in parts {
                    out.push(match p {
                        Some((m, d, us)) => Some(arrow::datatypes::IntervalMonthDayNano::new(
                            m,
                            d,
                            us.checked_mul(1000).ok_or_else(|| KilnError::exec("a calendar interval's time part past Arrow's nanoseconds"))?,
                        )),
                        None => None,
                    });
                }
                Arc::new(out.into_iter().collect::<arrow::array::IntervalMonthDayNanoArray>()) as ArrayRef
            } else {
                c.clone()
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new_with_metadata(fields, batch.schema().metadata().clone())), columns, &arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())))?)
}
