//! Writing a table as Parquet (or CSV, JSON Lines), all or nothing.
//!
//! Every write goes to a hidden staging folder beside the table first (readers skip names
//! starting with `.` or `_`). Only when every file is closed does the staging folder take the
//! table's place, by rename. A failed or killed write therefore leaves the previous table as it
//! was; what it leaves behind is a hidden `.kiln-staging-*` folder. An append stages hard links
//! to the existing files plus the new ones, so it commits the same way.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ::parquet::arrow::ArrowWriter;
use ::parquet::basic::Compression;
use ::parquet::file::properties::WriterProperties;
use arrow::array::{Array, ArrayRef, AsArray, UInt32Array};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::parquet::is_hidden_name;
use super::partitions::DEFAULT_PARTITION_NAME;
use crate::error::{closest_match, KilnError, Result};

/// What a write does when the table's folder already holds data (Spark's `SaveMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SaveMode {
    /// Fail with `PATH_ALREADY_EXISTS` (Spark's default).
    #[default]
    ErrorIfExists,
    /// Replace the whole table.
    Overwrite,
    /// Add files next to the existing ones; the schema and partition columns must match.
    Append,
    /// Leave the existing table alone and write nothing.
    Ignore,
}

/// The files a write makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WriteFormat {
    /// Snappy-compressed Parquet.
    #[default]
    Parquet,
    /// CSV: a header line when `header`, fields split by `delimiter`, NULL as an empty field.
    Csv {
        /// Write the column names first.
        header: bool,
        /// The field separator.
        delimiter: u8,
    },
    /// JSON Lines: one object per row, NULL fields left out (as Spark writes them).
    Json,
}

impl WriteFormat {
    fn suffix(self) -> &'static str {
        match self {
            WriteFormat::Parquet => "snappy.parquet",
            WriteFormat::Csv { .. } => "csv",
            WriteFormat::Json => "json",
        }
    }
    fn name(self) -> &'static str {
        match self {
            WriteFormat::Parquet => "Parquet",
            WriteFormat::Csv { .. } => "CSV",
            WriteFormat::Json => "JSON",
        }
    }
}

/// One open data file.
enum FileWriter {
    Parquet(ArrowWriter<File>),
    Csv(arrow::csv::Writer<File>),
    Json(arrow::json::LineDelimitedWriter<File>),
}

impl FileWriter {
    fn create(format: WriteFormat, file: File, schema: SchemaRef) -> std::result::Result<FileWriter, String> {
        Ok(match format {
            WriteFormat::Parquet => {
                let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
                FileWriter::Parquet(ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| e.to_string())?)
            }
            WriteFormat::Csv { header, delimiter } => FileWriter::Csv(arrow::csv::WriterBuilder::new().with_header(header).with_delimiter(delimiter).build(file)),
            WriteFormat::Json => FileWriter::Json(arrow::json::LineDelimitedWriter::new(file)),
        })
    }
    fn write(&mut self, batch: &RecordBatch) -> std::result::Result<(), String> {
        match self {
            FileWriter::Parquet(w) => w.write(batch).map_err(|e| e.to_string()),
            FileWriter::Csv(w) => w.write(batch).map_err(|e| e.to_string()),
            FileWriter::Json(w) => w.write(batch).map_err(|e| e.to_string()),
        }
    }
    fn close(self) -> std::result::Result<(), String> {
        match self {
            FileWriter::Parquet(w) => w.close().map(|_| ()).map_err(|e| e.to_string()),
            FileWriter::Csv(w) => w.into_inner().sync_all().map_err(|e| e.to_string()),
            FileWriter::Json(mut w) => w.finish().map_err(|e| e.to_string()).and_then(|_| w.into_inner().sync_all().map_err(|e| e.to_string())),
        }
    }
}

/// What a write did.
#[derive(Debug, Clone, Default)]
pub struct WriteSummary {
    /// The data files this write added, under their final paths, sorted.
    pub files: Vec<PathBuf>,
    /// Rows written.
    pub rows: usize,
}

/// Test hook: when this variable is set, the process aborts after staging every file and
/// before the commit, as a kill at the worst moment would (the interrupted-write test uses it).
pub const ABORT_BEFORE_COMMIT_ENV: &str = "KILN_TEST_ABORT_BEFORE_COMMIT";

/// Writes `batches` (all of `schema`) as the table at `path`: one snappy Parquet file per
/// folder, Hive-style `column=value` folders for `partition_by` (whose columns leave the files,
/// as Spark writes them; NULL goes to `__HIVE_DEFAULT_PARTITION__`), rows in input order.
/// A write with no partition columns always leaves a file, so an empty table keeps its schema;
/// a partitioned write of no rows is an error, as it would leave no file to hold the schema.
pub fn write_table(
    path: &Path,
    schema: SchemaRef,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    partition_by: &[String],
    mode: SaveMode,
) -> Result<WriteSummary> {
    write_table_as(WriteFormat::Parquet, path, schema, batches, partition_by, mode)
}

/// [`write_table`] in another file format (the same folders, staging and save modes).
pub fn write_table_as(
    format: WriteFormat,
    path: &Path,
    schema: SchemaRef,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
    partition_by: &[String],
    mode: SaveMode,
) -> Result<WriteSummary> {
    if format != WriteFormat::Parquet && mode == SaveMode::Append {
        return Err(KilnError::unsupported(format!("appending to a {} table (kiln appends to Parquet tables)", format.name())));
    }
    // Spark stores no interval values in files.
    if let Some(f) = schema.fields().iter().find(|f| crate::types::interval::is_interval(f.data_type())) {
        let source = format.name();
        return Err(KilnError::analysis(
            "UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE",
            format!("The {source} datasource doesn't support the column `{}` of the type \"{}\".", f.name(), crate::types::sql_type_name(f.data_type())),
        ));
    }
    let keys = partition_columns(&schema, partition_by, path)?;
    let exists = holds_data(path)?;
    match (mode, exists) {
        (SaveMode::ErrorIfExists, true) => {
            return Err(KilnError::io(
                path_str(path),
                "[PATH_ALREADY_EXISTS] the path already exists. Use SaveMode::Overwrite (INSERT OVERWRITE, CREATE OR REPLACE) to replace it, or Append to add to it",
            ))
        }
        (SaveMode::Ignore, true) => return Ok(WriteSummary::default()),
        (SaveMode::Append, true) => check_appendable(path, &schema, &keys)?,
        _ => {}
    }
    let staging = Staging::new(path)?;
    let mut files = FolderWriters::new(&staging.dir, schema.clone(), keys, &staging.job, format);
    for batch in batches {
        files.write(&batch?)?;
    }
    let (written, rows) = files.finish()?;
    if mode == SaveMode::Append && exists {
        link_existing_files(path, &staging.dir)?;
    }
    if std::env::var_os(ABORT_BEFORE_COMMIT_ENV).is_some() {
        std::process::abort();
    }
    staging.commit()?;
    let mut files: Vec<PathBuf> = written.iter().map(|rel| path.join(rel)).collect();
    files.sort();
    Ok(WriteSummary { files, rows })
}

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

fn io_err(path: &Path, what: &str, e: impl std::fmt::Display) -> KilnError {
    KilnError::io(path_str(path), format!("{what}: {e}"))
}

/// The positions of the partition columns, checked: they exist, are not repeated, and leave
/// at least one column for the files.
fn partition_columns(schema: &SchemaRef, partition_by: &[String], path: &Path) -> Result<Vec<usize>> {
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let mut keys = Vec::with_capacity(partition_by.len());
    for name in partition_by {
        let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(name)) else {
            let hint = match closest_match(name, names.iter().copied()) {
                Some(s) => format!(" Did you mean `{s}`?"),
                None => format!(" The columns are: {}.", names.join(", ")),
            };
            return Err(KilnError::analysis(
                "COLUMN_NOT_DEFINED_IN_TABLE",
                format!("Cannot partition `{}` by `{name}`: no such column.{hint}", path_str(path)),
            ));
        };
        if keys.contains(&i) {
            return Err(KilnError::analysis("COLUMN_ALREADY_EXISTS", format!("The partition column `{name}` is listed twice.")));
        }
        if matches!(schema.field(i).data_type(), DataType::Struct(_) | DataType::List(_) | DataType::Map(..)) {
            return Err(KilnError::analysis("INVALID_PARTITION_COLUMN_DATA_TYPE", format!("Cannot use `{name}` of a nested type for a partition column.")));
        }
        keys.push(i);
    }
    if !keys.is_empty() && keys.len() == names.len() {
        return Err(KilnError::analysis("ALL_PARTITION_COLUMNS_NOT_ALLOWED", "Cannot use all columns for partition columns."));
    }
    Ok(keys)
}

/// True when `path` is a file, or a folder with something other than hidden entries in it.
fn holds_data(path: &Path) -> Result<bool> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(io_err(path, "cannot read the table's path", e)),
        Ok(m) if m.is_file() => Ok(true),
        Ok(_) => {
            let entries = std::fs::read_dir(path).map_err(|e| io_err(path, "cannot list the table's folder", e))?;
            Ok(entries.filter_map(|e| e.ok()).any(|e| !is_hidden_name(&e.file_name().to_string_lossy())))
        }
    }
}

/// An append must keep the table's columns, in order, and its partition columns.
fn check_appendable(path: &Path, schema: &SchemaRef, keys: &[usize]) -> Result<()> {
    if std::fs::metadata(path).map(|m| m.is_file()).unwrap_or(false) {
        return Err(KilnError::io(path_str(path), "cannot append to a single Parquet file; write to a folder"));
    }
    let existing = super::parquet::ParquetTable::open(path)?;
    let existing_keys: Vec<String> = existing.partition_values.schema().fields().iter().map(|f| f.name().to_lowercase()).collect();
    let new_keys: Vec<String> = keys.iter().map(|&k| schema.field(k).name().to_lowercase()).collect();
    if existing_keys != new_keys {
        return Err(KilnError::analysis(
            "INCOMPATIBLE_DATA_FOR_TABLE",
            format!(
                "Cannot append to `{}`: it is partitioned by [{}], the new data by [{}].",
                path_str(path),
                existing_keys.join(", "),
                new_keys.join(", ")
            ),
        ));
    }
    let describe = |s: &arrow::datatypes::Schema| s.fields().iter().map(|f| format!("{}: {}", f.name(), f.data_type())).collect::<Vec<_>>().join(", ");
    let data: Vec<usize> = (0..schema.fields().len()).filter(|i| !keys.contains(i)).collect();
    let new_data = schema.project(&data)?;
    let same = new_data.fields().len() == existing.data_schema.fields().len()
        && new_data.fields().iter().zip(existing.data_schema.fields()).all(|(a, b)| a.name().eq_ignore_ascii_case(b.name()) && a.data_type() == b.data_type());
    if !same {
        return Err(KilnError::analysis(
            "INCOMPATIBLE_DATA_FOR_TABLE",
            format!(
                "Cannot append to `{}`: its files hold ({}), the new data ({}).",
                path_str(path),
                describe(&existing.data_schema),
                describe(&new_data)
            ),
        ));
    }
    Ok(())
}

/// A hidden folder beside the table that becomes the table on commit, and is removed if the
/// write fails before that.
struct Staging {
    target: PathBuf,
    dir: PathBuf,
    job: String,
    committed: bool,
}

impl Staging {
    fn new(target: &Path) -> Result<Staging> {
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let job = format!("{:x}-{:x}-{}", nanos, std::process::id(), WRITES.fetch_add(1, Ordering::Relaxed));
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.is_empty() || name == ".." {
            return Err(KilnError::io(path_str(target), "a table path must end in a folder name"));
        }
        let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| io_err(parent, "cannot create the folder", e))?;
        let dir = parent.join(format!(".kiln-staging-{name}-{job}"));
        std::fs::create_dir(&dir).map_err(|e| io_err(&dir, "cannot create the staging folder", e))?;
        Ok(Staging { target: target.to_path_buf(), dir, job, committed: false })
    }

    /// Puts the staging folder in the table's place: the old table (if any) is moved aside,
    /// the staging folder renamed in, then the old one deleted.
    fn commit(mut self) -> Result<()> {
        let old = self.dir.with_file_name(format!(".kiln-old-{}", self.dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()));
        let had_old = std::fs::symlink_metadata(&self.target).is_ok();
        if had_old {
            std::fs::rename(&self.target, &old).map_err(|e| io_err(&self.target, "cannot move the old table aside", e))?;
        }
        if let Err(e) = std::fs::rename(&self.dir, &self.target) {
            if had_old {
                // Put the old table back; the staging folder is removed on drop.
                let _ = std::fs::rename(&old, &self.target);
            }
            return Err(io_err(&self.target, "cannot move the new table into place", e));
        }
        self.committed = true;
        if had_old {
            let removed = if old.is_dir() { std::fs::remove_dir_all(&old) } else { std::fs::remove_file(&old) };
            removed.map_err(|e| io_err(&old, "the new table is in place, but the old one could not be deleted", e))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Hard-links every file of the existing table into the staging folder at the same relative
/// path (copying where links are not possible), so the commit keeps them.
fn link_existing_files(table: &Path, staging: &Path) -> Result<()> {
    let mut dirs = vec![PathBuf::new()];
    while let Some(rel) = dirs.pop() {
        let dir = table.join(&rel);
        for entry in std::fs::read_dir(&dir).map_err(|e| io_err(&dir, "cannot list the table's folder", e))? {
            let entry = entry.map_err(|e| io_err(&dir, "cannot list the table's folder", e))?;
            let rel = rel.join(entry.file_name());
            let (from, to) = (table.join(&rel), staging.join(&rel));
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                std::fs::create_dir_all(&to).map_err(|e| io_err(&to, "cannot create the folder", e))?;
                dirs.push(rel);
            } else if std::fs::hard_link(&from, &to).is_err() {
                std::fs::copy(&from, &to).map_err(|e| io_err(&from, "cannot copy the existing file", e))?;
            }
        }
    }
    Ok(())
}

/// One open Parquet writer per folder of the staging tree.
struct FolderWriters<'a> {
    root: &'a Path,
    schema: SchemaRef,
    keys: Vec<usize>,
    data_columns: Vec<usize>,
    data_schema: SchemaRef,
    file_name: String,
    format: WriteFormat,
    open: BTreeMap<PathBuf, FileWriter>,
    rows: usize,
}

impl<'a> FolderWriters<'a> {
    fn new(root: &'a Path, schema: SchemaRef, keys: Vec<usize>, job: &str, format: WriteFormat) -> FolderWriters<'a> {
        let data_columns: Vec<usize> = (0..schema.fields().len()).filter(|i| !keys.contains(i)).collect();
        // Spark writes every column nullable, and reads them back so.
        let fields: Vec<arrow::datatypes::Field> = data_columns.iter().map(|&c| schema.field(c).clone().with_nullable(true)).collect();
        let data_schema = Arc::new(arrow::datatypes::Schema::new(fields));
        FolderWriters {
            root,
            schema,
            keys,
            data_columns,
            data_schema,
            file_name: format!("part-00000-{job}.{}", format.suffix()),
            format,
            open: BTreeMap::new(),
            rows: 0,
        }
    }

    fn writer(&mut self, folder: PathBuf) -> Result<&mut FileWriter> {
        if !self.open.contains_key(&folder) {
            let dir = self.root.join(&folder);
            std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, "cannot create the folder", e))?;
            let path = dir.join(&self.file_name);
            let file = File::create(&path).map_err(|e| io_err(&path, "cannot create the file", e))?;
            let writer = FileWriter::create(self.format, file, self.data_schema.clone()).map_err(|e| io_err(&path, &format!("cannot write {}", self.format.name()), e))?;
            self.open.insert(folder.clone(), writer);
        }
        self.open.get_mut(&folder).ok_or_else(|| KilnError::internal("a writer vanished"))
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.schema().fields().len() != self.schema.fields().len() {
            return Err(KilnError::internal(format!("a batch of {} columns written to a table of {}", batch.num_columns(), self.schema.fields().len())));
        }
        self.rows += batch.num_rows();
        let data = RecordBatch::try_new_with_options(
            self.data_schema.clone(),
            self.data_columns.iter().map(|&c| batch.column(c).clone()).collect(),
            &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
        )?;
        let what = format!("cannot write {}", self.format.name());
        if self.keys.is_empty() {
            return self.writer(PathBuf::new())?.write(&data).map_err(|e| io_err(self.root, &what, e));
        }
        for (folder, rows) in self.folders_of(batch)? {
            let indices = UInt32Array::from(rows);
            let columns = data.columns().iter().map(|c| arrow::compute::take(c, &indices, None)).collect::<std::result::Result<_, _>>()?;
            let part = RecordBatch::try_new_with_options(self.data_schema.clone(), columns, &RecordBatchOptions::new().with_row_count(Some(indices.len())))?;
            let root = self.root;
            self.writer(folder)?.write(&part).map_err(|e| io_err(root, &what, e))?;
        }
        Ok(())
    }

    /// The rows of `batch` by partition folder (`k1=v1/k2=v2`), each in input order.
    fn folders_of(&self, batch: &RecordBatch) -> Result<BTreeMap<PathBuf, Vec<u32>>> {
        // Folder names come from Arrow's cast to string (dates as yyyy-MM-dd, as Spark writes them).
        let values: Vec<ArrayRef> =
            self.keys.iter().map(|&c| arrow::compute::cast(batch.column(c), &DataType::Utf8)).collect::<std::result::Result<_, _>>()?;
        let values: Vec<&arrow::array::StringArray> = values
            .iter()
            .map(|v| v.as_string_opt::<i32>().ok_or_else(|| KilnError::internal("a cast to Utf8 gave another type")))
            .collect::<Result<_>>()?;
        let mut rows: BTreeMap<PathBuf, Vec<u32>> = BTreeMap::new();
        for row in 0..batch.num_rows() {
            let mut folder = PathBuf::new();
            for (&c, v) in self.keys.iter().zip(&values) {
                let value = match v.is_valid(row) {
                    true => escape_path_name(v.value(row)),
                    false => DEFAULT_PARTITION_NAME.to_string(),
                };
                folder.push(format!("{}={value}", escape_path_name(self.schema.field(c).name())));
            }
            rows.entry(folder).or_default().push(row as u32);
        }
        Ok(rows)
    }

    /// Closes every file; an unpartitioned write with no rows still leaves one (empty) file.
    /// Returns the files written, relative to the root, and the row count.
    fn finish(mut self) -> Result<(Vec<PathBuf>, usize)> {
        if self.keys.is_empty() && self.open.is_empty() {
            self.writer(PathBuf::new())?;
        }
        if self.open.is_empty() {
            // The schema lives in the files (there is no metastore), and there are none.
            return Err(KilnError::unsupported(
                "writing no rows to a partitioned table: it would have no file to hold its schema (kiln keeps no metastore)",
            ));
        }
        let mut written = vec![];
        for (folder, writer) in std::mem::take(&mut self.open) {
            let rel = folder.join(&self.file_name);
            writer.close().map_err(|e| io_err(&self.root.join(&rel), &format!("cannot finish the {} file", self.format.name()), e))?;
            written.push(rel);
        }
        Ok((written, self.rows))
    }
}

/// Hive's `escapePathName`: characters that would break a folder name become `%XX`.
fn escape_path_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() || "\"#%'*/:=?\\{[]^".contains(c) {
            out.push_str(&format!("%{:02X}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datasource::parquet::tests::batch;
    use crate::datasource::parquet::ParquetTable;
    use arrow::array::StringArray;
    use arrow::datatypes::{Field, Schema};

    fn write(path: &Path, batches: &[RecordBatch], partition_by: &[&str], mode: SaveMode) -> Result<WriteSummary> {
        let keys: Vec<String> = partition_by.iter().map(|s| s.to_string()).collect();
        write_table(path, batches[0].schema(), batches.iter().cloned().map(Ok), &keys, mode)
    }

    /// The table's `columns` as sorted `a,b` lines.
    fn rows(path: &Path, columns: &[&str]) -> Vec<String> {
        let table = ParquetTable::open(path).unwrap();
        let names: Vec<String> = columns.iter().map(|s| s.to_string()).collect();
        let mut got: Vec<String> = (0..table.files.len())
            .flat_map(|f| (0..table.files[f].num_row_groups()).map(move |g| (f, g)))
            .flat_map(|(f, g)| table.row_group_batches(f, g, None, &names, &crate::datasource::spark_parquet::ReadSettings { batch_size: 100, ..Default::default() }).unwrap().map(|b| b.unwrap()))
            .map(|b| crate::format::result_csv(&b.schema(), &[b]))
            .flat_map(|t| t.lines().skip(1).map(String::from).collect::<Vec<_>>())
            .collect();
        got.sort();
        got
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn partitioned_writes_read_back_with_the_same_values() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t");
        let b = batch(0, 7);
        // `name` is NULL every third row: those rows go to the default partition.
        let summary = write(&table, &[b.clone()], &["name"], SaveMode::ErrorIfExists).unwrap();
        assert_eq!((summary.files.len(), summary.rows), (5, 7));
        assert!(summary.files.iter().any(|f| f.parent().unwrap().ends_with("name=__HIVE_DEFAULT_PARTITION__")), "{:?}", summary.files);
        let opened = ParquetTable::open(&table).unwrap();
        assert_eq!(opened.schema().fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["id", "score", "name"]);
        assert_eq!(rows(&table, &["id", "name"]), ["0,NULL", "1,n1", "2,n2", "3,NULL", "4,n4", "5,n5", "6,NULL"]);
        // Nothing but the table is left beside it.
        assert_eq!(entries(dir.path()), ["t"]);
        let err = write(&dir.path().join("u"), &[b.clone()], &["nme"], SaveMode::ErrorIfExists).unwrap_err().to_string();
        assert!(err.contains("`nme`") && err.contains("Did you mean `name`?"), "{err}");
        let err = write(&dir.path().join("u"), &[b], &["id", "name", "score"], SaveMode::ErrorIfExists).unwrap_err().to_string();
        assert!(err.contains("ALL_PARTITION_COLUMNS_NOT_ALLOWED"), "{err}");
        assert!(!dir.path().join("u").exists());
        assert_eq!(escape_path_name("a/b=c%"), "a%2Fb%3Dc%25");
    }

    #[test]
    fn save_modes_error_ignore_overwrite_append() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t");
        write(&t, &[batch(0, 3)], &[], SaveMode::ErrorIfExists).unwrap();
        let err = write(&t, &[batch(10, 1)], &[], SaveMode::ErrorIfExists).unwrap_err().to_string();
        assert!(err.contains("PATH_ALREADY_EXISTS") && err.contains("/t"), "{err}");
        assert_eq!(write(&t, &[batch(10, 1)], &[], SaveMode::Ignore).unwrap().rows, 0);
        assert_eq!(rows(&t, &["id"]), ["0", "1", "2"]);
        write(&t, &[batch(10, 2)], &[], SaveMode::Append).unwrap();
        assert_eq!(rows(&t, &["id"]), ["0", "1", "10", "11", "2"]);
        write(&t, &[batch(20, 1)], &[], SaveMode::Overwrite).unwrap();
        assert_eq!(rows(&t, &["id"]), ["20"]);
        assert_eq!(entries(dir.path()), ["t"]);
    }

    #[test]
    fn appends_must_match_the_tables_columns_and_partitioning() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t");
        write(&t, &[batch(0, 3)], &["name"], SaveMode::ErrorIfExists).unwrap();
        let err = write(&t, &[batch(5, 1)], &[], SaveMode::Append).unwrap_err().to_string();
        assert!(err.contains("partitioned by [name]") && err.contains("by []"), "{err}");
        let other = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, true), Field::new("name", DataType::Utf8, true)])),
            vec![Arc::new(StringArray::from(vec!["x"])), Arc::new(StringArray::from(vec!["y"]))],
        )
        .unwrap();
        let err = write(&t, &[other], &["name"], SaveMode::Append).unwrap_err().to_string();
        assert!(err.contains("id: Int64, score: Int64") && err.contains("(id: Utf8)"), "{err}");
        write(&t, &[batch(3, 2)], &["name"], SaveMode::Append).unwrap();
        assert_eq!(rows(&t, &["id", "name"]), ["0,NULL", "1,n1", "2,n2", "3,NULL", "4,n4"]);
    }

    #[test]
    fn a_failed_write_leaves_the_old_table_and_no_staging_folder() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t");
        write(&t, &[batch(0, 2)], &["name"], SaveMode::ErrorIfExists).unwrap();
        let before = rows(&t, &["id", "name"]);
        // The second batch fails after the first has been written to the staging folder.
        let failing = vec![Ok(batch(100, 50)), Err(KilnError::exec("[DIVIDE_BY_ZERO] Division by zero."))];
        for mode in [SaveMode::Overwrite, SaveMode::Append] {
            let err = write_table(&t, batch(0, 1).schema(), failing.iter().map(|r| r.as_ref().cloned().map_err(|e| KilnError::exec(e.to_string()))), &["name".into()], mode)
                .unwrap_err()
                .to_string();
            assert!(err.contains("DIVIDE_BY_ZERO"), "{err}");
            assert_eq!(rows(&t, &["id", "name"]), before);
            assert_eq!(entries(dir.path()), ["t"]);
        }
    }

    #[test]
    fn an_empty_unpartitioned_write_keeps_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t");
        let summary = write_table(&t, batch(0, 1).schema(), std::iter::empty(), &[], SaveMode::ErrorIfExists).unwrap();
        assert_eq!((summary.files.len(), summary.rows), (1, 0));
        let opened = ParquetTable::open(&t).unwrap();
        assert_eq!(opened.schema().fields().len(), 3);
        assert!(rows(&t, &["id"]).is_empty());
    }
}
