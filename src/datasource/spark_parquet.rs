//! Parquet files as Spark reads them, whoever wrote them: Spark (any writer setting), Hive,
//! Impala, arrow. Decided per file from its footer, applied to every batch at the scan, so no
//! operator above ever meets a type Spark does not have:
//!
//! - Timestamps of every unit (s, ms, µs, ns, INT96) become microseconds. TIMESTAMP or
//!   TIMESTAMP_NTZ as Spark decides: Spark's own schema in the key-value metadata
//!   (`org.apache.spark.sql.parquet.row.metadata`) first, then the logical type's
//!   `isAdjustedToUTC`; INT96 is TIMESTAMP.
//! - Unsigned integers widen as Spark's `ParquetToSparkSchemaConverter` widens them (UINT_8
//!   smallint, UINT_16 int, UINT_32 bigint, UINT_64 decimal(20,0)); decimals of any physical
//!   layout are decimal(p,s); lists and maps of any layout (2-level lists, `bag`/`array`,
//!   `MAP_KEY_VALUE`) are kiln's one array and map type.
//! - Dates and timestamps before 1582-10-15 (timestamps: 1900-01-01) are rebased from the
//!   Julian calendar as Spark's `datetimeRebaseModeInRead` / `int96RebaseModeInRead` say:
//!   the file's metadata (Spark's version, `org.apache.spark.legacyDateTime`,
//!   `org.apache.spark.legacyINT96`) decides for a Spark-written file, the setting for others.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListArray, MapArray, PrimitiveArray, StructArray};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Date32Type, Field, Fields, Schema, SchemaRef, TimeUnit, TimestampMicrosecondType};
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::basic::Type as PhysicalType;

use crate::error::{KilnError, Result};
use crate::types::timestamp::MICROS_PER_DAY;
use crate::types::{days_from_civil, list_type, map_type, struct_type, timestamp_type};

pub use crate::config::RebaseMode;

/// The read settings a scan applies to each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadSettings {
    /// Rows per batch.
    pub batch_size: usize,
    /// `spark.sql.parquet.datetimeRebaseModeInRead`: dates and INT64 timestamps.
    pub datetime_rebase: RebaseMode,
    /// `spark.sql.parquet.int96RebaseModeInRead`: INT96 timestamps.
    pub int96_rebase: RebaseMode,
}

impl Default for ReadSettings {
    fn default() -> Self {
        ReadSettings { batch_size: 8192, datetime_rebase: RebaseMode::Corrected, int96_rebase: RebaseMode::Corrected }
    }
}

impl ReadSettings {
    /// The session's settings.
    pub fn of(config: &crate::config::Config) -> ReadSettings {
        ReadSettings { batch_size: config.batch_size, datetime_rebase: config.parquet_datetime_rebase, int96_rebase: config.parquet_int96_rebase }
    }
}

/// What a file's footer says about its writer.
#[derive(Debug, Clone, Default, PartialEq)]
struct Writer {
    /// `org.apache.spark.version`.
    spark_version: Option<String>,
    /// `org.apache.spark.legacyDateTime` is present: dates and timestamps written Julian.
    legacy_datetime: bool,
    /// `org.apache.spark.legacyINT96` is present: INT96 written Julian.
    legacy_int96: bool,
    /// `org.apache.spark.timeZone`: the zone a LEGACY writer rebased in.
    time_zone: Option<String>,
}

impl Writer {
    /// Spark's `DataSourceUtils.datetimeRebaseSpec`: files of Spark before 3.0, or written in
    /// LEGACY mode, are Julian; other Spark files are not; the setting decides the rest.
    fn datetime_mode(&self, setting: RebaseMode) -> RebaseMode {
        match &self.spark_version {
            Some(v) if v.as_str() < "3.0.0" || self.legacy_datetime => RebaseMode::Legacy,
            Some(_) => RebaseMode::Corrected,
            None => setting,
        }
    }

    /// Spark's `int96RebaseSpec`: as for dates, from Spark 3.1 on.
    fn int96_mode(&self, setting: RebaseMode) -> RebaseMode {
        match &self.spark_version {
            Some(v) if v.as_str() < "3.1.0" || self.legacy_int96 => RebaseMode::Legacy,
            Some(_) => RebaseMode::Corrected,
            None => setting,
        }
    }

    /// True when a LEGACY writer's zone is UTC (or unnamed: kiln's session zone), the zone
    /// kiln rebases timestamps in.
    fn rebases_in_utc(&self) -> bool {
        self.time_zone.as_deref().is_none_or(|z| matches!(z, "UTC" | "Etc/UTC" | "GMT" | "Etc/GMT" | "Z" | "+00:00" | "UCT" | "Zulu"))
    }
}

/// One file's columns as Spark reads them.
#[derive(Debug, Clone)]
pub struct SparkColumns {
    /// The footer, with INT96 columns read at microseconds (nanoseconds overflow outside
    /// 1677..2262).
    pub metadata: ArrowReaderMetadata,
    /// The columns' Spark types (every column nullable), in file order.
    pub schema: SchemaRef,
    /// Per column: for each of its Parquet leaves, in order, whether it is INT96.
    int96_leaves: Vec<Vec<bool>>,
    writer: Writer,
}

/// Spark's schema in the key-value metadata, when the file has it.
const SPARK_SCHEMA_KEY: &str = "org.apache.spark.sql.parquet.row.metadata";

impl SparkColumns {
    /// Reads the footer's schema and metadata (`metadata` was loaded with `options`).
    pub fn new(metadata: ArrowReaderMetadata, options: ArrowReaderOptions) -> Result<SparkColumns> {
        let parquet = metadata.metadata().clone();
        let descr = parquet.file_metadata().schema_descr();
        let roots = metadata.schema().fields().len();
        let mut int96_leaves = vec![vec![]; roots];
        for (leaf, column) in descr.columns().iter().enumerate() {
            if let Some(list) = int96_leaves.get_mut(descr.get_column_root_idx(leaf)) {
                list.push(column.physical_type() == PhysicalType::INT96);
            }
        }
        let mut writer = Writer::default();
        let mut spark_json = None;
        for kv in parquet.file_metadata().key_value_metadata().into_iter().flatten() {
            match kv.key.as_str() {
                "org.apache.spark.version" => writer.spark_version = kv.value.clone(),
                "org.apache.spark.legacyDateTime" => writer.legacy_datetime = true,
                "org.apache.spark.legacyINT96" => writer.legacy_int96 = true,
                "org.apache.spark.timeZone" => writer.time_zone = kv.value.clone(),
                SPARK_SCHEMA_KEY => spark_json = kv.value.as_deref().and_then(|v| serde_json::from_str::<serde_json::Value>(v).ok()),
                _ => {}
            }
        }
        let metadata = if int96_leaves.iter().flatten().any(|b| *b) {
            // Read INT96 at microseconds: the reader converts the Julian day and nanoseconds.
            let fields: Vec<Field> = metadata
                .schema()
                .fields()
                .iter()
                .zip(&int96_leaves)
                .map(|(f, leaves)| {
                    let mut at = 0;
                    let t = map_leaves(f.data_type(), &mut |t| {
                        let int96 = leaves.get(at).copied().unwrap_or(false);
                        at += 1;
                        if int96 { DataType::Timestamp(TimeUnit::Microsecond, Some("+00:00".into())) } else { t.clone() }
                    });
                    f.as_ref().clone().with_data_type(t)
                })
                .collect();
            let hint = Arc::new(Schema::new(fields));
            ArrowReaderMetadata::try_new(parquet.clone(), options.with_schema(hint))?
        } else {
            metadata
        };
        let spark_fields = spark_json.as_ref().and_then(|j| j.get("fields")).and_then(|f| f.as_array());
        let fields: Vec<Field> = metadata
            .schema()
            .fields()
            .iter()
            .map(|f| {
                let spark = spark_fields.and_then(|fs| fs.iter().find(|s| s.get("name").and_then(|n| n.as_str()) == Some(f.name().as_str())));
                Field::new(f.name(), spark_type(f.data_type(), spark.and_then(|s| s.get("type"))), true)
            })
            .collect();
        Ok(SparkColumns { metadata, schema: Arc::new(Schema::new(fields)), int96_leaves, writer })
    }

    /// Column `root`'s values (as the reader decoded them) in its Spark type, rebased as
    /// `settings` and the writer say. `path` names the file in errors.
    pub fn convert(&self, root: usize, array: &ArrayRef, settings: &ReadSettings, path: &str) -> Result<ArrayRef> {
        let Some(field) = self.schema.fields().get(root) else {
            return Err(KilnError::internal(format!("column {root} of a file with {}", self.schema.fields().len())));
        };
        let modes = Modes {
            datetime: self.writer.datetime_mode(settings.datetime_rebase),
            int96: self.writer.int96_mode(settings.int96_rebase),
            utc: self.writer.rebases_in_utc(),
            path,
        };
        if array.data_type() == field.data_type() && !has_dates(field.data_type()) {
            return Ok(array.clone());
        }
        let leaves = self.int96_leaves.get(root).map(Vec::as_slice).unwrap_or_default();
        let mut at = 0;
        convert(array, field.data_type(), &mut |_| {
            let int96 = leaves.get(at).copied().unwrap_or(false);
            at += 1;
            int96
        }, &modes)
    }

    /// True when statistics of column `root` compare with values as the scan returns them:
    /// no rebase can move them.
    pub fn statistics_usable(&self, root: usize, settings: &ReadSettings) -> bool {
        let Some(field) = self.schema.fields().get(root) else { return false };
        !has_dates(field.data_type())
            || (self.writer.datetime_mode(settings.datetime_rebase) != RebaseMode::Legacy
                && self.writer.int96_mode(settings.int96_rebase) != RebaseMode::Legacy)
    }
}

/// `t` with each leaf type replaced by `f(leaf)`, leaves in Parquet's column order.
fn map_leaves(t: &DataType, f: &mut dyn FnMut(&DataType) -> DataType) -> DataType {
    match t {
        DataType::List(item) => DataType::List(Arc::new(item.as_ref().clone().with_data_type(map_leaves(item.data_type(), f)))),
        DataType::LargeList(item) => DataType::LargeList(Arc::new(item.as_ref().clone().with_data_type(map_leaves(item.data_type(), f)))),
        DataType::Struct(fields) => {
            DataType::Struct(fields.iter().map(|c| c.as_ref().clone().with_data_type(map_leaves(c.data_type(), f))).collect::<Fields>())
        }
        DataType::Map(entries, sorted) => {
            DataType::Map(Arc::new(entries.as_ref().clone().with_data_type(map_leaves(entries.data_type(), f))), *sorted)
        }
        leaf => f(leaf),
    }
}

/// Spark's type for a column the reader decodes as `file`; `spark` is the column's type in
/// Spark's schema JSON, when the file has one.
fn spark_type(file: &DataType, spark: Option<&serde_json::Value>) -> DataType {
    let sub = |key: &str| spark.and_then(|s| s.get(key));
    match file {
        DataType::Timestamp(_, tz) => {
            let ntz = match spark.and_then(|s| s.as_str()) {
                Some("timestamp_ntz") => true,
                Some("timestamp") => false,
                _ => tz.is_none(),
            };
            timestamp_type(ntz)
        }
        DataType::UInt8 => DataType::Int16,
        DataType::UInt16 => DataType::Int32,
        DataType::UInt32 => DataType::Int64,
        DataType::UInt64 => DataType::Decimal128(20, 0),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) => DataType::Decimal128(*p, *s),
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        DataType::BinaryView | DataType::LargeBinary | DataType::FixedSizeBinary(_) => DataType::Binary,
        DataType::Float16 => DataType::Float32,
        DataType::Date64 => DataType::Date32,
        DataType::List(item) | DataType::LargeList(item) => list_type(spark_type(item.data_type(), sub("elementType"))),
        DataType::Map(..) => match crate::types::map_key_value(file) {
            Some((k, v)) => map_type(spark_type(k.data_type(), sub("keyType")), spark_type(v.data_type(), sub("valueType"))),
            None => file.clone(),
        },
        DataType::Struct(fields) => {
            let spark_fields = sub("fields").and_then(|f| f.as_array());
            struct_type(fields.iter().map(|f| {
                let s = spark_fields.and_then(|fs| fs.iter().find(|s| s.get("name").and_then(|n| n.as_str()) == Some(f.name().as_str())));
                (f.name().clone(), spark_type(f.data_type(), s.and_then(|s| s.get("type"))))
            }))
        }
        other => other.clone(),
    }
}

/// True when `t` holds dates or timestamps (values a rebase may change).
fn has_dates(t: &DataType) -> bool {
    match t {
        DataType::Date32 | DataType::Timestamp(..) => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => has_dates(f.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| has_dates(f.data_type())),
        _ => false,
    }
}

/// One file's rebase modes.
struct Modes<'a> {
    datetime: RebaseMode,
    int96: RebaseMode,
    utc: bool,
    path: &'a str,
}

/// `array` as type `to`; `next_int96` says, leaf by leaf in Parquet's order, whether the leaf
/// was INT96.
fn convert(array: &ArrayRef, to: &DataType, next_int96: &mut dyn FnMut(()) -> bool, modes: &Modes) -> Result<ArrayRef> {
    match (array.data_type(), to) {
        (DataType::List(_) | DataType::LargeList(_), DataType::List(item)) => {
            let list = match array.as_list_opt::<i32>() {
                Some(l) => l.clone(),
                None => cast_with_options(array, &DataType::List(Arc::new(Field::new("item", list_item(array)?, true))), &CastOptions::default())?
                    .as_list::<i32>()
                    .clone(),
            };
            let values = convert(list.values(), item.data_type(), next_int96, modes)?;
            Ok(Arc::new(ListArray::try_new(item.clone(), list.offsets().clone(), values, list.nulls().cloned())?))
        }
        (DataType::Map(..), DataType::Map(entries, sorted)) => {
            let map = array.as_map();
            let DataType::Struct(fields) = entries.data_type() else {
                return Err(KilnError::internal("a map type whose entries are not a struct"));
            };
            let columns = map
                .entries()
                .columns()
                .iter()
                .zip(fields.iter())
                .map(|(c, f)| convert(c, f.data_type(), next_int96, modes))
                .collect::<Result<Vec<_>>>()?;
            let kv = StructArray::try_new(fields.clone(), columns, map.entries().nulls().cloned())?;
            Ok(Arc::new(MapArray::try_new(entries.clone(), map.offsets().clone(), kv, map.nulls().cloned(), *sorted)?))
        }
        (DataType::Struct(_), DataType::Struct(fields)) => {
            let s = array.as_struct();
            let columns =
                s.columns().iter().zip(fields.iter()).map(|(c, f)| convert(c, f.data_type(), next_int96, modes)).collect::<Result<Vec<_>>>()?;
            Ok(Arc::new(StructArray::try_new(fields.clone(), columns, s.nulls().cloned())?))
        }
        (DataType::Timestamp(unit, _), DataType::Timestamp(TimeUnit::Microsecond, tz)) => {
            let int96 = next_int96(());
            let micros = to_micros(array, *unit, modes.path)?;
            // TIMESTAMP_NTZ is new in Spark 3.4: no file holds it in the Julian calendar.
            let micros = match tz {
                None => micros,
                Some(_) => rebase_micros(micros, if int96 { modes.int96 } else { modes.datetime }, int96, modes)?,
            };
            Ok(Arc::new(micros.with_data_type(to.clone())))
        }
        (DataType::Date32, DataType::Date32) => {
            next_int96(());
            rebase_days(array, modes)
        }
        (from, _) => {
            if !matches!(from, DataType::List(_) | DataType::LargeList(_) | DataType::Map(..) | DataType::Struct(_)) {
                next_int96(());
            }
            if from == to {
                return Ok(array.clone());
            }
            cast_with_options(array, to, &CastOptions { safe: false, ..Default::default() }).map_err(|e| {
                KilnError::io(modes.path, format!("cannot read a {from} column as {}: {e}", crate::types::spark_type_name(to)))
            })
        }
    }
}

fn list_item(array: &ArrayRef) -> Result<DataType> {
    match array.data_type() {
        DataType::List(f) | DataType::LargeList(f) => Ok(f.data_type().clone()),
        other => Err(KilnError::internal(format!("{other} is not a list"))),
    }
}

/// Timestamps of `unit` as microseconds (nanoseconds rounded down, as Spark's `floorDiv`).
fn to_micros(array: &ArrayRef, unit: TimeUnit, path: &str) -> Result<PrimitiveArray<TimestampMicrosecondType>> {
    use arrow::datatypes::{TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType};
    let overflow = |v: i64, unit: &str| KilnError::io(path, format!("the timestamp {v} ({unit} since 1970) is out of the range of microseconds"));
    let wrong = || KilnError::internal(format!("a {} column read as a timestamp", array.data_type()));
    Ok(match unit {
        TimeUnit::Microsecond => array.as_primitive_opt::<TimestampMicrosecondType>().ok_or_else(wrong)?.clone().with_timezone_opt(None::<String>),
        TimeUnit::Nanosecond => array.as_primitive_opt::<TimestampNanosecondType>().ok_or_else(wrong)?.unary(|v| v.div_euclid(1000)),
        TimeUnit::Millisecond => array
            .as_primitive_opt::<TimestampMillisecondType>()
            .ok_or_else(wrong)?
            .try_unary(|v| v.checked_mul(1000).ok_or_else(|| overflow(v, "milliseconds")))?,
        TimeUnit::Second => array
            .as_primitive_opt::<TimestampSecondType>()
            .ok_or_else(wrong)?
            .try_unary(|v| v.checked_mul(1_000_000).ok_or_else(|| overflow(v, "seconds")))?,
    })
}

/// Spark's `RebaseDateTime.lastSwitchJulianDay`: 1582-10-15, the first Gregorian day.
const FIRST_GREGORIAN_DAY: i32 = -141427;
/// Spark's `lastSwitchJulianTs`: 1900-01-01T00:00:00Z. Timestamps from here on read the same
/// in either calendar in every time zone.
const FIRST_UNAMBIGUOUS_MICROS: i64 = -2_208_988_800_000_000;
/// 0001-01-01 in the Julian calendar: before it Spark keeps the difference of that day.
const JULIAN_YEAR_ONE: i32 = -719164;

/// Spark's error when EXCEPTION mode meets an ambiguous value.
fn ancient_datetime(int96: bool, path: &str) -> KilnError {
    let (format, key, option) = if int96 {
        ("Parquet INT96", "spark.sql.parquet.int96RebaseModeInRead", "int96RebaseMode")
    } else {
        ("Parquet", "spark.sql.parquet.datetimeRebaseModeInRead", "datetimeRebaseMode")
    };
    KilnError::Execution(format!(
        "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME] You may get a different result due to the upgrading to Spark >= 3.0: \
         reading dates before 1582-10-15 or timestamps before 1900-01-01T00:00:00Z from {format} files can be ambiguous, as the files may be \
         written by Spark 2.x or legacy versions of Hive, which uses a legacy hybrid calendar that is different from Spark 3.0+'s Proleptic \
         Gregorian calendar. See more details in SPARK-31404. You can set the SQL config \"{key}\" or the datasource option \"{option}\" to \
         \"LEGACY\" to rebase the datetime values w.r.t. the calendar difference during reading. To read the datetime values as it is, set \
         the SQL config \"{key}\" or the datasource option \"{option}\" to \"CORRECTED\". (file {path})"
    ))
}

fn rebase_days(array: &ArrayRef, modes: &Modes) -> Result<ArrayRef> {
    let days = array.as_primitive_opt::<Date32Type>().ok_or_else(|| KilnError::internal("a date column that is not date32"))?;
    let ancient = || days.iter().flatten().any(|d| d < FIRST_GREGORIAN_DAY);
    Ok(match modes.datetime {
        RebaseMode::Corrected => array.clone(),
        RebaseMode::Exception if ancient() => return Err(ancient_datetime(false, modes.path)),
        RebaseMode::Exception => array.clone(),
        RebaseMode::Legacy if ancient() => Arc::new(days.unary::<_, Date32Type>(julian_to_gregorian_days)),
        RebaseMode::Legacy => array.clone(),
    })
}

fn rebase_micros(
    micros: PrimitiveArray<TimestampMicrosecondType>,
    mode: RebaseMode,
    int96: bool,
    modes: &Modes,
) -> Result<PrimitiveArray<TimestampMicrosecondType>> {
    let ancient = micros.iter().flatten().any(|v| v < FIRST_UNAMBIGUOUS_MICROS);
    Ok(match mode {
        RebaseMode::Exception if ancient => return Err(ancient_datetime(int96, modes.path)),
        RebaseMode::Legacy if ancient && !modes.utc => {
            return Err(KilnError::Unsupported(format!(
                "rebasing timestamps before 1900 written in LEGACY mode in a time zone other than UTC ({})",
                modes.path
            )))
        }
        RebaseMode::Legacy if ancient => micros.unary(|v| {
            let (day, time) = (v.div_euclid(MICROS_PER_DAY), v.rem_euclid(MICROS_PER_DAY));
            julian_to_gregorian_days(day.clamp(i32::MIN as i64, i32::MAX as i64) as i32) as i64 * MICROS_PER_DAY + time
        }),
        _ => micros,
    })
}

/// Spark's `rebaseJulianToGregorianDays`: the day `days` names in the hybrid calendar (Julian
/// before 1582-10-15), read as the same year, month and day in the Proleptic Gregorian one.
/// A Julian leap day the Gregorian year lacks (1500-02-29) becomes the day after.
pub fn julian_to_gregorian_days(days: i32) -> i32 {
    if days >= FIRST_GREGORIAN_DAY {
        return days;
    }
    if days < JULIAN_YEAR_ONE {
        return days + 2;
    }
    let (y, m, d) = julian_civil_from_days(days as i64);
    let first = days_from_civil(y, m, 1);
    (first + d as i64 - 1) as i32
}

/// Year, month, day in the Julian calendar of `days` since 1970-01-01.
fn julian_civil_from_days(days: i64) -> (i64, u32, u32) {
    // Julian day number of 1970-01-01 is 2440588; the Julian calendar's 4-year cycle.
    let jdn = days + 2_440_588;
    let c = jdn + 32_082;
    let d = (4 * c + 3).div_euclid(1461);
    let e = c - (1461 * d).div_euclid(4);
    let m = (5 * e + 2).div_euclid(153);
    let day = e - (153 * m + 2).div_euclid(5) + 1;
    let month = m + 3 - 12 * m.div_euclid(10);
    let year = d - 4800 + m.div_euclid(10);
    (year, month as u32, day as u32)
}

/// Opens a file's footer as Spark reads it.
pub fn load(file: &std::fs::File, options: ArrowReaderOptions) -> Result<SparkColumns> {
    let metadata = ArrowReaderMetadata::load(file, options.clone())?;
    SparkColumns::new(metadata, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn julian_days_rebase_as_spark_does() {
        // Julian 1582-10-04, the day before the switch, is Gregorian 1582-10-04: ten days earlier.
        assert_eq!(julian_to_gregorian_days(FIRST_GREGORIAN_DAY - 1), FIRST_GREGORIAN_DAY - 1 - 10);
        assert_eq!(julian_to_gregorian_days(0), 0);
        // Spark's switch days: from -141427 backwards the diff steps at each Julian-only leap day.
        for (switch, diff) in [(-171595, -10), (-208120, -9), (-682945, 1), (-719164, 2)] {
            assert_eq!(julian_to_gregorian_days(switch) - switch, diff, "{switch}");
        }
        // Julian 1500-02-29 folds onto 1500-03-01.
        assert_eq!(julian_to_gregorian_days(-171596), julian_to_gregorian_days(-171595));
        assert_eq!(julian_to_gregorian_days(-800_000), -800_000 + 2);
    }

    /// A file as Hive and parquet-mr's old writers lay it out: a 2-level list (`repeated int32
    /// array` directly in the LIST group) and a `MAP_KEY_VALUE` map.
    fn write_hive_layout(path: &std::path::Path) {
        use parquet::data_type::{ByteArray, ByteArrayType, Int32Type};
        use parquet::file::writer::SerializedFileWriter;
        let message = "message hive_schema {
            optional group arr (LIST) { repeated int32 array; }
            optional group m (MAP_KEY_VALUE) { repeated group map { required binary key (UTF8); optional int32 value; } }
        }";
        let schema = Arc::new(parquet::schema::parser::parse_message_type(message).unwrap());
        let props = Arc::new(parquet::file::properties::WriterProperties::builder().build());
        let mut writer = SerializedFileWriter::new(std::fs::File::create(path).unwrap(), schema, props).unwrap();
        let mut group = writer.next_row_group().unwrap();
        // Rows: ([1, 2], {a -> 1}), (NULL, NULL), ([], {}).
        let mut col = group.next_column().unwrap().unwrap();
        col.typed::<Int32Type>().write_batch(&[1, 2], Some(&[2, 2, 0, 1]), Some(&[0, 1, 0, 0])).unwrap();
        col.close().unwrap();
        let mut col = group.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>().write_batch(&[ByteArray::from("a")], Some(&[2, 0, 1]), Some(&[0, 0, 0])).unwrap();
        col.close().unwrap();
        let mut col = group.next_column().unwrap().unwrap();
        col.typed::<Int32Type>().write_batch(&[1], Some(&[3, 0, 1]), Some(&[0, 0, 0])).unwrap();
        col.close().unwrap();
        group.close().unwrap();
        writer.close().unwrap();
    }

    #[test]
    fn hive_two_level_lists_and_legacy_maps_read_as_arrays_and_maps() {
        let dir = tempfile::tempdir().unwrap();
        write_hive_layout(&dir.path().join("part-0.parquet"));
        let table = crate::datasource::parquet::ParquetTable::open(dir.path()).unwrap();
        let schema = table.schema();
        assert_eq!(schema.field(0).data_type(), &list_type(DataType::Int32));
        assert_eq!(schema.field(1).data_type(), &map_type(DataType::Utf8, DataType::Int32));
        let names = ["arr".to_string(), "m".to_string()];
        let batches: Vec<_> = table.row_group_batches(0, 0, None, &names, &ReadSettings::default()).unwrap().map(|b| b.unwrap()).collect();
        assert_eq!(crate::format::result_csv(&batches[0].schema(), &batches), "arr,m\n\"[1, 2]\",{a -> 1}\nNULL,NULL\n[],{}\n");
    }

    #[test]
    fn rebase_modes_follow_the_writer() {
        let spark = |v: &str, legacy| Writer { spark_version: Some(v.into()), legacy_datetime: legacy, legacy_int96: legacy, time_zone: None };
        assert_eq!(spark("2.4.5", false).datetime_mode(RebaseMode::Exception), RebaseMode::Legacy);
        assert_eq!(spark("3.0.1", false).int96_mode(RebaseMode::Exception), RebaseMode::Legacy);
        assert_eq!(spark("4.3.0", false).datetime_mode(RebaseMode::Legacy), RebaseMode::Corrected);
        assert_eq!(spark("4.3.0", true).int96_mode(RebaseMode::Corrected), RebaseMode::Legacy);
        assert_eq!(Writer::default().datetime_mode(RebaseMode::Exception), RebaseMode::Exception);
        assert!(RebaseMode::parse("k", "bogus").unwrap_err().to_string().contains("EXCEPTION, CORRECTED, LEGACY"));
    }
}
