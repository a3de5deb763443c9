//! Hive-style partition discovery: `root/k1=v1/k2=v2/part-0.parquet` gives the file the
//! partition values `k1 = v1, k2 = v2`, typed the way Spark's `PartitioningUtils` infers them.
//!
//! - Partition folders are the trailing `name=value` folders above a file (Spark walks up from
//!   the file and stops at the first folder without `=`).
//! - Every file must have the same partition columns in the same order.
//! - Each value's type is the first of `int`, `bigint`, `decimal(p,0)` (integers past
//!   bigint), `double`, `date` (`YYYY-MM-DD`), `timestamp` (`YYYY-MM-DD HH:mm:ss[.S]`) it
//!   parses as, else `string`; a column's type is the widest of its values' (Spark's
//!   `findWiderTypeForPartitionColumn`: a double and a bigint or decimal give `string`).
//!   With `spark.sql.sources.partitionColumnTypeInference.enabled=false` every column is a
//!   string. `__HIVE_DEFAULT_PARTITION__` is NULL.
//! - Values are unescaped (`%3D` is `=`), as Hive escaped them when writing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchOptions, StringArray};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Field, Schema};

use crate::error::{KilnError, Result};

/// Hive's folder name for a NULL partition value.
pub const DEFAULT_PARTITION_NAME: &str = "__HIVE_DEFAULT_PARTITION__";

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

/// The partition values of `files` below `root`: one row per file (in `files` order), one
/// column per partition column. Zero columns when the files sit in no `k=v` folder.
pub fn discover_partitions(root: &Path, files: &[PathBuf], infer_types: bool) -> Result<RecordBatch> {
    let mut names: Option<(Vec<String>, &Path)> = None;
    let mut raw: Vec<Vec<Option<String>>> = vec![];
    for file in files {
        let spec = partition_spec(root, file)?;
        let file_names: Vec<String> = spec.iter().map(|(k, _)| k.clone()).collect();
        match &names {
            None => {
                raw = vec![vec![]; file_names.len()];
                names = Some((file_names, file));
            }
            Some((first, first_file)) => {
                if !first.iter().map(|n| n.to_lowercase()).eq(file_names.iter().map(|n| n.to_lowercase())) {
                    return Err(KilnError::io(
                        path_str(root),
                        format!(
                            "conflicting partition folders: `{}` is partitioned by [{}] but `{}` by [{}]; \
                             every file of a table must sit in the same `column=value` folder levels",
                            path_str(first_file),
                            first.join(", "),
                            path_str(file),
                            file_names.join(", ")
                        ),
                    ));
                }
            }
        }
        for (column, (_, value)) in raw.iter_mut().zip(spec) {
            column.push(value);
        }
    }
    let names = names.map(|(n, _)| n).unwrap_or_default();
    let mut fields = Vec::with_capacity(names.len());
    let mut columns = Vec::with_capacity(names.len());
    for (name, values) in names.into_iter().zip(raw) {
        let column = if infer_types { infer_column(values)? } else { Arc::new(StringArray::from(values)) as ArrayRef };
        fields.push(Field::new(name, column.data_type().clone(), true));
        columns.push(column);
    }
    let options = RecordBatchOptions::new().with_row_count(Some(files.len()));
    Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)?)
}

/// The `(column, raw value)` pairs of the `k=v` folders directly above `file`, outermost first.
fn partition_spec(root: &Path, file: &Path) -> Result<Vec<(String, Option<String>)>> {
    let Some(dir) = file.parent().and_then(|p| p.strip_prefix(root).ok()) else {
        return Ok(vec![]);
    };
    let mut spec = vec![];
    for component in dir.components().rev() {
        let folder = component.as_os_str();
        let Some(folder) = folder.to_str() else {
            return Err(KilnError::io(path_str(file), "a folder name above this file is not valid UTF-8"));
        };
        let Some((name, value)) = folder.split_once('=') else {
            break;
        };
        if name.is_empty() || value.is_empty() {
            let what = if name.is_empty() { "an empty column name" } else { "an empty value" };
            return Err(KilnError::io(
                path_str(file),
                format!("the partition folder `{folder}` has {what}; expected `column=value`"),
            ));
        }
        let name = unescape(name);
        if spec.iter().any(|(n, _): &(String, Option<String>)| n.eq_ignore_ascii_case(&name)) {
            return Err(KilnError::io(path_str(file), format!("the partition column `{name}` appears in two folders")));
        }
        let value = (value != DEFAULT_PARTITION_NAME).then(|| unescape(value));
        spec.push((name, value));
    }
    spec.reverse();
    Ok(spec)
}

/// Hive's `unescapePathName`: `%XX` is the byte XX; anything else is kept.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `YYYY-MM-DD` exactly: Spark infers `date` only for that shape.
fn is_date_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| if i == 4 || i == 7 { *c == b'-' } else { c.is_ascii_digit() })
}

/// `YYYY-MM-DD HH:mm:ss[.S..]`: Spark's partition timestamp pattern.
fn is_timestamp_shaped(s: &str) -> bool {
    let b = s.as_bytes();
    let (head, frac) = b.split_at(b.len().min(19));
    head.len() == 19
        && is_date_shaped(&s[..10])
        && head[10] == b' '
        && head[11..].iter().enumerate().all(|(i, c)| if i == 2 || i == 5 { *c == b':' } else { c.is_ascii_digit() })
        && (frac.is_empty() || (frac[0] == b'.' && frac.len() > 1 && frac[1..].iter().all(u8::is_ascii_digit)))
}

/// The type Spark's `inferPartitionColumnValue` gives one value.
fn value_type(v: &str) -> DataType {
    if v.parse::<i32>().is_ok() {
        DataType::Int32
    } else if v.parse::<i64>().is_ok() {
        DataType::Int64
    } else if let Some(digits) = integer_digits(v).filter(|d| *d <= 38) {
        DataType::Decimal128(digits as u8, 0)
    } else if is_java_double(v) {
        DataType::Float64
    } else if is_date_shaped(v) && crate::types::parse_date(v).is_some() {
        DataType::Date32
    } else if is_timestamp_shaped(v) && crate::types::parse_timestamp(v).is_some() {
        crate::types::timestamp_type(false)
    } else {
        DataType::Utf8
    }
}

/// The digits of an integer (optional sign, no leading zeros counted), if `v` is one.
fn integer_digits(v: &str) -> Option<usize> {
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then(|| digits.trim_start_matches('0').len().max(1))
}

/// What Java's `Double.parseDouble` accepts (its `NaN` and `Infinity`, not Rust's `inf`).
fn is_java_double(v: &str) -> bool {
    let unsigned = v.strip_prefix(['-', '+']).unwrap_or(v);
    unsigned == "NaN" || unsigned == "Infinity" || (v.parse::<f64>().is_ok() && unsigned.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'-' || b == b'+'))
}

/// Spark's `findWiderTypeForPartitionColumn`.
fn wider(a: DataType, b: DataType) -> DataType {
    use DataType::*;
    match (a, b) {
        (a, b) if a == b => a,
        (Null, t) | (t, Null) => t,
        (Float64, Decimal128(..) | Int64) | (Decimal128(..) | Int64, Float64) => Utf8,
        (Int32, Int64) | (Int64, Int32) => Int64,
        (Int32, Float64) | (Float64, Int32) => Float64,
        (Int32 | Int64, Decimal128(p, _)) | (Decimal128(p, _), Int32 | Int64) => Decimal128(p.max(20), 0),
        (Decimal128(p, _), Decimal128(q, _)) => Decimal128(p.max(q), 0),
        (Date32, t @ Timestamp(..)) | (t @ Timestamp(..), Date32) => t,
        _ => Utf8,
    }
}

/// Types one partition column by Spark's inference, using Arrow's casts to parse.
fn infer_column(values: Vec<Option<String>>) -> Result<ArrayRef> {
    let to = values.iter().flatten().fold(DataType::Null, |t, v| wider(t, value_type(v)));
    let strings: ArrayRef = Arc::new(StringArray::from(values));
    if to == DataType::Null || to == DataType::Utf8 {
        return Ok(strings);
    }
    let strict = CastOptions { safe: false, ..Default::default() };
    Ok(cast_with_options(&strings, &to, &strict).unwrap_or(strings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ScalarValue;

    fn files(root: &Path, rel: &[&str]) -> Vec<PathBuf> {
        rel.iter().map(|r| root.join(r)).collect()
    }

    fn values(batch: &RecordBatch, column: usize) -> Vec<String> {
        (0..batch.num_rows()).map(|r| ScalarValue::try_from_array(batch.column(column), r).unwrap().to_string()).collect()
    }

    #[test]
    fn infers_int_date_and_string_columns() {
        let root = Path::new("/t");
        let fs = files(
            root,
            &[
                "d=2026-10-01/n=1/s=a/p.parquet",
                "d=2026-10-02/n=20/s=b%3Dc/p.parquet",
                "d=__HIVE_DEFAULT_PARTITION__/n=3/s=7/p.parquet",
            ],
        );
        let b = discover_partitions(root, &fs, true).unwrap();
        let types: Vec<DataType> = b.schema().fields().iter().map(|f| f.data_type().clone()).collect();
        assert_eq!(types, [DataType::Date32, DataType::Int32, DataType::Utf8]);
        assert_eq!(values(&b, 0), ["2026-10-01", "2026-10-02", "null"]);
        assert_eq!(values(&b, 1), ["1", "20", "3"]);
        assert_eq!(values(&b, 2), ["a", "b=c", "7"]);
    }

    #[test]
    fn wide_ints_are_bigint_and_loose_dates_are_strings() {
        let root = Path::new("/t");
        let b = discover_partitions(root, &files(root, &["a=1/b=2026-1-5/p.parquet", "a=9999999999/b=2026-01-05/p.parquet"]), true).unwrap();
        assert_eq!(b.schema().field(0).data_type(), &DataType::Int64);
        assert_eq!(b.schema().field(1).data_type(), &DataType::Utf8);
        // A date-shaped value that is no date (month 13) is a string.
        let b = discover_partitions(root, &files(root, &["d=2026-13-01/p.parquet"]), true).unwrap();
        assert_eq!(b.schema().field(0).data_type(), &DataType::Utf8);
    }

    #[test]
    fn unpartitioned_files_have_no_columns() {
        let root = Path::new("/t");
        let b = discover_partitions(root, &files(root, &["a.parquet", "sub/b.parquet"]), true).unwrap();
        assert_eq!((b.num_columns(), b.num_rows()), (0, 2));
        // A plain folder above the k=v folders stops the walk, as in Spark.
        let b = discover_partitions(root, &files(root, &["x/k=1/a.parquet", "y/k=2/b.parquet"]), true).unwrap();
        assert_eq!(b.schema().field(0).name(), "k");
    }

    #[test]
    fn bad_folders_are_errors_naming_them() {
        let root = Path::new("/t");
        for (bad, needle) in [("k=/p.parquet", "empty value"), ("=v/p.parquet", "empty column name"), ("k=1/k=2/p.parquet", "two folders")] {
            let err = discover_partitions(root, &files(root, &[bad]), true).unwrap_err().to_string();
            assert!(err.contains(needle) && err.contains("p.parquet"), "{err}");
        }
        let err = discover_partitions(root, &files(root, &["k=1/a.parquet", "j=1/b.parquet"]), true).unwrap_err().to_string();
        assert!(err.contains("conflicting") && err.contains("a.parquet") && err.contains("b.parquet"), "{err}");
        let err = discover_partitions(root, &files(root, &["k=1/a.parquet", "b.parquet"]), true).unwrap_err().to_string();
        assert!(err.contains("conflicting"), "{err}");
    }
}
