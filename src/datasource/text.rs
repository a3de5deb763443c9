//! CSV and JSON (one object per line) files as tables, read as Spark's `csv` and `json` data
//! sources read them: Spark's option names, its schema inference (CSV: all strings unless
//! `inferSchema`; JSON: every record, fields sorted by name) and its parse modes (PERMISSIVE:
//! a value that does not parse is NULL; DROPMALFORMED: its row is dropped; FAILFAST: the query
//! fails naming the file). Each file is read as it is scanned, batch by batch, with arrow's
//! readers: every column as text first, then cast to its type, which is what makes the modes
//! per value.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray};
use arrow::compute::{cast_with_options, filter_record_batch, CastOptions};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use crate::error::{KilnError, Result};
use crate::types::time_zone::Zone;

/// Which text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// Comma-separated values.
    Csv,
    /// JSON Lines: one object per line.
    Json,
}

impl TextFormat {
    /// The format by its `USING` name.
    pub fn from_name(name: &str) -> Option<TextFormat> {
        match name.to_ascii_lowercase().as_str() {
            "csv" => Some(TextFormat::Csv),
            "json" => Some(TextFormat::Json),
            _ => None,
        }
    }
    /// The name Spark prints (`FileScan csv`).
    pub fn name(self) -> &'static str {
        match self {
            TextFormat::Csv => "csv",
            TextFormat::Json => "json",
        }
    }
}

/// Spark's `mode` option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseMode {
    /// A value that does not parse is NULL (the default).
    Permissive,
    /// A row with a value that does not parse is left out.
    DropMalformed,
    /// A value that does not parse fails the query.
    FailFast,
}

/// The options kiln reads, by Spark's names.
#[derive(Debug, Clone, PartialEq)]
pub struct TextOptions {
    /// CSV `header`: the first line of each file names the columns (default false).
    pub header: bool,
    /// CSV `sep` / `delimiter` (default `,`).
    pub delimiter: u8,
    /// CSV `quote` (default `"`).
    pub quote: u8,
    /// CSV `escape` (default `\`).
    pub escape: u8,
    /// CSV `comment`: lines starting with it are skipped (default: none).
    pub comment: Option<u8>,
    /// CSV `nullValue`: the text that reads as NULL (default: the empty string).
    pub null_value: String,
    /// CSV `inferSchema`: types from the data (default false: every column a string).
    pub infer_schema: bool,
    /// `mode`.
    pub mode: ParseMode,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions { header: false, delimiter: b',', quote: b'"', escape: b'\\', comment: None, null_value: String::new(), infer_schema: false, mode: ParseMode::Permissive }
    }
}

/// The option keys kiln knows (besides `path`), for suggestions.
const KNOWN: &[&str] = &["header", "sep", "delimiter", "quote", "escape", "comment", "nullValue", "inferSchema", "mode", "encoding", "charset", "multiLine"];

impl TextOptions {
    /// Options from `(key, value)` pairs, keys case-insensitive as in Spark; `path` is skipped.
    pub fn parse(format: TextFormat, options: &[(String, String)]) -> Result<TextOptions> {
        let mut o = TextOptions::default();
        for (key, value) in options {
            let bad = |what: &str| KilnError::Config(format!("{} option `{key}` must be {what}, got `{value}`", format.name()));
            let flag = || match value.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => Err(bad("true or false")),
            };
            let byte = || match value.as_bytes() {
                [b] if b.is_ascii() => Ok(*b),
                b"\\t" => Ok(b'\t'),
                _ => Err(bad("one ASCII character")),
            };
            match key.to_ascii_lowercase().as_str() {
                "path" => {}
                "header" => o.header = flag()?,
                "sep" | "delimiter" => o.delimiter = byte()?,
                "quote" => o.quote = byte()?,
                "escape" => o.escape = byte()?,
                "comment" => o.comment = Some(byte()?),
                "nullvalue" => o.null_value = value.clone(),
                "inferschema" => o.infer_schema = flag()?,
                "mode" => {
                    o.mode = match value.trim().to_ascii_uppercase().as_str() {
                        "PERMISSIVE" => ParseMode::Permissive,
                        "DROPMALFORMED" => ParseMode::DropMalformed,
                        "FAILFAST" => ParseMode::FailFast,
                        _ => return Err(bad("PERMISSIVE, DROPMALFORMED or FAILFAST")),
                    }
                }
                "encoding" | "charset" if value.eq_ignore_ascii_case("utf-8") || value.eq_ignore_ascii_case("utf8") => {}
                "encoding" | "charset" => return Err(KilnError::Unsupported(format!("{} files in encoding {value} (kiln reads UTF-8)", format.name()))),
                "multiline" if !flag()? => {}
                "multiline" => return Err(KilnError::Unsupported(format!("{} option multiLine (kiln reads one record per line)", format.name()))),
                _ => {
                    let hint = crate::error::closest_match(key, KNOWN.iter().copied()).map(|s| format!(" Did you mean `{s}`?")).unwrap_or_default();
                    return Err(KilnError::Config(format!("unknown {} option `{key}`.{hint}", format.name())));
                }
            }
        }
        Ok(o)
    }
}

/// CSV or JSON files read as one table.
#[derive(Debug, Clone)]
pub struct TextTable {
    /// The format.
    pub format: TextFormat,
    /// The path given (a file or a folder).
    pub location: PathBuf,
    /// The files read, sorted.
    pub files: Vec<PathBuf>,
    /// Their bytes, read when the table was opened (as a Parquet table's are).
    bytes: u128,
    /// The table's columns.
    pub schema: SchemaRef,
    /// How the files are parsed.
    pub options: TextOptions,
}

impl TextTable {
    /// The files at `location` (a file, or every `*.csv` / `*.json` below a folder), with
    /// `schema` when given, else inferred as Spark infers it.
    pub fn open(format: TextFormat, location: &Path, options: TextOptions, schema: Option<SchemaRef>) -> Result<TextTable> {
        let files = super::parquet::list_files(location, format.name())?;
        let schema = match schema {
            Some(s) => s,
            None => match format {
                TextFormat::Csv => infer_csv(&files, &options)?,
                TextFormat::Json => infer_json(&files)?,
            },
        };
        let bytes = files
            .iter()
            .map(|f| std::fs::metadata(f).map(|m| m.len() as u128).map_err(|e| KilnError::io(f.display().to_string(), format!("cannot read the file's size: {e}"))))
            .sum::<Result<u128>>()?;
        Ok(TextTable { format, location: location.to_path_buf(), files, bytes, schema, options })
    }

    /// Bytes of all files.
    pub fn files_size(&self) -> u128 {
        self.bytes
    }

    /// (files, bytes): what statistics must have been computed from.
    pub fn fingerprint(&self) -> (usize, u128) {
        (self.files.len(), self.files_size())
    }

    /// File `file`'s rows, the columns `names` (table columns, in that order), in batches of
    /// about `batch_size` rows; a TIMESTAMP text without a zone of its own is a wall-clock time
    /// in `zone` (Spark reads it in the session time zone).
    pub fn batches(&self, file: usize, names: &[String], batch_size: usize, zone: Zone) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>> + Send>> {
        let path = self.files.get(file).ok_or_else(|| KilnError::internal(format!("file {file} of a {} table", self.format.name())))?.clone();
        let indices: Vec<usize> = names.iter().map(|n| self.schema.index_of(n)).collect::<std::result::Result<_, _>>()?;
        let target: Vec<Field> = indices.iter().map(|&i| self.schema.field(i).clone()).collect();
        let text_schema = Arc::new(Schema::new(self.schema.fields().iter().map(|f| Field::new(f.name(), DataType::Utf8, true)).collect::<Vec<_>>()));
        let reader = open_file(&path)?;
        let name = path.display().to_string();
        let raw: Box<dyn Iterator<Item = std::result::Result<RecordBatch, arrow::error::ArrowError>> + Send> = match self.format {
            TextFormat::Csv => Box::new(csv_builder(text_schema, &self.options).with_batch_size(batch_size.max(1)).with_projection(indices).build(reader)?),
            TextFormat::Json => {
                let projected = Arc::new(Schema::new(target.iter().map(|f| Field::new(f.name(), DataType::Utf8, true)).collect::<Vec<_>>()));
                Box::new(arrow::json::ReaderBuilder::new(projected).with_batch_size(batch_size.max(1)).with_coerce_primitive(true).build(reader)?)
            }
        };
        let (options, format) = (self.options.clone(), self.format);
        let out = Arc::new(Schema::new(target));
        Ok(Box::new(raw.map(move |b| {
            let b = b.map_err(|e| KilnError::io(&name, format!("malformed {} record: {e}", format.name())))?;
            typed(&b, &out, &options, &name, zone)
        })))
    }
}

fn open_file(path: &Path) -> Result<BufReader<File>> {
    let f = File::open(path).map_err(|e| KilnError::io(path.display().to_string(), format!("cannot open: {e}")))?;
    Ok(BufReader::new(f))
}

fn csv_builder(schema: SchemaRef, o: &TextOptions) -> arrow::csv::ReaderBuilder {
    let mut b = arrow::csv::ReaderBuilder::new(schema)
        .with_header(o.header)
        .with_delimiter(o.delimiter)
        .with_quote(o.quote)
        .with_escape(o.escape)
        .with_truncated_rows(true);
    if let Some(c) = o.comment {
        b = b.with_comment(c);
    }
    b
}

/// A batch of text columns as the table's types, by the parse mode.
fn typed(batch: &RecordBatch, schema: &SchemaRef, o: &TextOptions, file: &str, zone: Zone) -> Result<RecordBatch> {
    let rows = batch.num_rows();
    let mut bad: Option<Vec<bool>> = None;
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (text, field) in batch.columns().iter().zip(schema.fields()) {
        let text = null_values(text, &o.null_value)?;
        let safe = match field.data_type() {
            DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, tz) => timestamps(&text, tz.clone().map(|tz| (tz, zone))),
            t => cast_with_options(&text, t, &CastOptions { safe: true, ..Default::default() })?,
        };
        // A value that was text but is NULL now did not parse.
        if safe.null_count() > text.null_count() {
            let failed = |r: usize| safe.is_null(r) && !text.is_null(r);
            match o.mode {
                ParseMode::FailFast => {
                    let r = (0..rows).find(|&r| failed(r)).unwrap_or(0);
                    let value = text.as_string::<i32>().value(r);
                    return Err(KilnError::Execution(format!(
                        "[MALFORMED_RECORD_IN_PARSING] Malformed records are detected in record parsing: `{value}` is not a {} value for column `{}` in {file}. Parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'.",
                        crate::types::spark_type_name(field.data_type()),
                        field.name()
                    )));
                }
                ParseMode::DropMalformed => {
                    let marks = bad.get_or_insert_with(|| vec![false; rows]);
                    (0..rows).filter(|&r| failed(r)).for_each(|r| marks[r] = true);
                }
                ParseMode::Permissive => {}
            }
        }
        columns.push(safe);
    }
    let out = RecordBatch::try_new_with_options(schema.clone(), columns, &RecordBatchOptions::new().with_row_count(Some(rows)))?;
    match bad {
        Some(marks) => Ok(filter_record_batch(&out, &BooleanArray::from(marks.into_iter().map(|b| !b).collect::<Vec<_>>()))?),
        None => Ok(out),
    }
}

/// Timestamp texts as Spark's `stringToTimestamp` reads them: a TIMESTAMP (its Arrow zone and the
/// session's) in `zone` unless the text names its own, a TIMESTAMP_NTZ (`zone` None) as the wall-clock time it spells; NULL
/// where a text does not parse.
fn timestamps(text: &ArrayRef, zone: Option<(Arc<str>, Zone)>) -> ArrayRef {
    use crate::types::timestamp::{parse_timestamp_in, parse_wall_clock};
    let values = text.as_string::<i32>().iter().map(|v| {
        let v = v?;
        match &zone {
            Some((_, zone)) => parse_timestamp_in(v, *zone),
            None => parse_wall_clock(v).filter(|(_, own)| own.is_none()).map(|(local, _)| local),
        }
    });
    let array = arrow::array::TimestampMicrosecondArray::from_iter(values);
    Arc::new(match zone {
        Some((tz, _)) => array.with_timezone(tz),
        None => array,
    })
}

/// `nullValue` (other than the empty string, which arrow's reader already reads as NULL) as NULL.
fn null_values(text: &ArrayRef, null_value: &str) -> Result<ArrayRef> {
    if null_value.is_empty() {
        return Ok(text.clone());
    }
    let s = text.as_string::<i32>();
    Ok(Arc::new(s.iter().map(|v| v.filter(|v| *v != null_value)).collect::<arrow::array::StringArray>()))
}

/// The narrowest type of Spark's CSV inference every value of a column fits: int, bigint,
/// double, boolean, date, timestamp (Spark's own output: `2024-01-02T03:04:05.000Z`), else
/// string; a column of only NULLs is a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Inferred {
    Null,
    Int,
    BigInt,
    Double,
    Boolean,
    Date,
    Timestamp,
    Text,
}

fn infer_value(v: &str) -> Inferred {
    if v.parse::<i32>().is_ok() {
        Inferred::Int
    } else if v.parse::<i64>().is_ok() {
        Inferred::BigInt
    } else if v.parse::<f64>().is_ok() && !v.eq_ignore_ascii_case("inf") && !v.eq_ignore_ascii_case("infinity") || matches!(v, "NaN" | "Infinity" | "-Infinity") {
        Inferred::Double
    } else if v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false") {
        Inferred::Boolean
    } else if is_date(v) {
        Inferred::Date
    } else if v.len() > 10 && v.get(..10).is_some_and(is_date) && crate::types::parse_timestamp(v).is_some() {
        Inferred::Timestamp
    } else {
        Inferred::Text
    }
}

fn merge(a: Inferred, b: Inferred) -> Inferred {
    use Inferred::*;
    match (a.min(b), a.max(b)) {
        (Null, x) => x,
        (x, y) if x == y => x,
        (Int | BigInt | Double, y @ (BigInt | Double)) => y,
        (Date, Timestamp) => Timestamp,
        _ => Text,
    }
}

impl Inferred {
    fn data_type(self) -> DataType {
        match self {
            Inferred::Int => DataType::Int32,
            Inferred::BigInt => DataType::Int64,
            Inferred::Double => DataType::Float64,
            Inferred::Boolean => DataType::Boolean,
            Inferred::Date => DataType::Date32,
            Inferred::Timestamp => crate::types::timestamp_type(false),
            Inferred::Null | Inferred::Text => DataType::Utf8,
        }
    }
}

/// The columns of CSV files: named by the first file's header (or `_c0`, `_c1`, ...), all
/// strings, or with `inferSchema` typed from every value of every file.
fn infer_csv(files: &[PathBuf], o: &TextOptions) -> Result<SchemaRef> {
    let first = files.first().ok_or_else(|| KilnError::io("<no files>", "no CSV files to read a schema from"))?;
    let mut reader = open_file(first)?;
    let format = arrow::csv::reader::Format::default().with_header(o.header).with_delimiter(o.delimiter).with_quote(o.quote).with_escape(o.escape);
    let format = match o.comment {
        Some(c) => format.with_comment(c),
        None => format,
    };
    let (found, _) = format.infer_schema(&mut reader, Some(100)).map_err(|e| KilnError::io(first.display().to_string(), format!("not a readable CSV file: {e}")))?;
    let names: Vec<String> = if o.header { found.fields().iter().map(|f| f.name().clone()).collect() } else { (0..found.fields().len()).map(|i| format!("_c{i}")).collect() };
    if names.is_empty() {
        return Err(KilnError::io(first.display().to_string(), "the CSV file has no columns"));
    }
    let text = Arc::new(Schema::new(names.iter().map(|n| Field::new(n, DataType::Utf8, true)).collect::<Vec<_>>()));
    let mut kinds = vec![Inferred::Null; names.len()];
    if o.infer_schema {
        for file in files {
            for b in csv_builder(text.clone(), o).build(open_file(file)?)? {
                let b = b.map_err(|e| KilnError::io(file.display().to_string(), format!("malformed CSV record: {e}")))?;
                for (kind, col) in kinds.iter_mut().zip(b.columns()) {
                    for v in col.as_string::<i32>().iter().flatten().filter(|v| *v != o.null_value) {
                        *kind = merge(*kind, infer_value(v));
                    }
                }
            }
        }
    }
    Ok(Arc::new(Schema::new(names.iter().zip(kinds).map(|(n, k)| Field::new(n, k.data_type(), true)).collect::<Vec<_>>())))
}

/// The fields of JSON Lines files, from every record of every file, sorted by name as Spark
/// sorts them: integers bigint, other numbers double, all-NULL fields strings.
fn infer_json(files: &[PathBuf]) -> Result<SchemaRef> {
    let mut schemas = vec![];
    for file in files {
        let reader = open_file(file)?;
        let (schema, _) = arrow::json::reader::infer_json_schema(reader, None).map_err(|e| KilnError::io(file.display().to_string(), format!("not a readable JSON Lines file: {e}")))?;
        schemas.push(schema);
    }
    let merged = Schema::try_merge(schemas).map_err(|e| KilnError::io(files[0].display().to_string(), format!("JSON files with conflicting fields: {e}")))?;
    let mut fields: Vec<Field> = vec![];
    for f in merged.fields() {
        let t = match f.data_type() {
            DataType::Null => DataType::Utf8,
            t @ (DataType::Int64 | DataType::Float64 | DataType::Boolean | DataType::Utf8) => t.clone(),
            other => {
                return Err(KilnError::Unsupported(format!(
                    "JSON field `{}` of type {other} (kiln reads flat JSON: numbers, strings, booleans); give the table a schema with it as a string",
                    f.name()
                )))
            }
        };
        fields.push(Field::new(f.name(), t, true));
    }
    fields.sort_by(|a, b| a.name().cmp(b.name()));
    Ok(Arc::new(Schema::new(fields)))
}

/// `yyyy-MM-dd`, Spark's default `dateFormat`, with a month and day in range.
fn is_date(v: &str) -> bool {
    let b = v.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r.clone()).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || !digits(0..4) || !digits(5..7) || !digits(8..10) {
        return false;
    }
    let (m, d) = ((b[5] - b'0') * 10 + b[6] - b'0', (b[8] - b'0') * 10 + b[9] - b'0');
    (1..=12).contains(&m) && (1..=31).contains(&d)
}
