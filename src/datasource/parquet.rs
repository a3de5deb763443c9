//! Parquet files and directories: listing, schema, projected reads, writes.
//!
//! Columns are read the way Spark reads them: the Parquet schema and Spark's metadata decide
//! the types (the embedded Arrow schema is ignored, so `Utf8View` files still give `Utf8`),
//! every column is nullable, and values are converted at the scan (see [`super::spark_parquet`]).

use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use ::parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelector};
use ::parquet::file::metadata::PageIndexPolicy;
use ::parquet::arrow::{ArrowWriter, ProjectionMask};
use ::parquet::basic::Compression;
use ::parquet::file::properties::WriterProperties;
use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::partitions::discover_partitions;
use super::pushed_filter::{ColumnStatistics, PushedFilter};
use super::spark_parquet::{ReadSettings, SparkColumns};
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr, ExprId};
use crate::types::ScalarValue;

/// A table stored as Parquet: one file, or a directory of files, possibly Hive-partitioned.
#[derive(Debug, Clone)]
pub struct ParquetTable {
    /// What the user named: a file or a directory.
    pub location: PathBuf,
    /// The data files, sorted by path.
    pub files: Vec<ParquetFile>,
    /// The columns stored in the files (every file has these), without partition columns.
    pub data_schema: SchemaRef,
    /// The partition columns' values from the `k=v` folders: one row per file, in `files`
    /// order; no columns when the table is not partitioned.
    pub partition_values: RecordBatch,
}

/// One data file of a [`ParquetTable`].
#[derive(Debug, Clone)]
pub struct ParquetFile {
    /// Where the file is.
    pub path: PathBuf,
    /// The footer, read once when the table is registered: row groups and their statistics.
    pub metadata: ArrowReaderMetadata,
    /// The columns as Spark reads them and how to convert them.
    pub columns: Arc<SparkColumns>,
    /// The file's length in bytes when it was registered (size estimates add these up).
    pub size: u64,
}

impl ParquetFile {
    /// The number of row groups.
    pub fn num_row_groups(&self) -> usize {
        self.metadata.metadata().num_row_groups()
    }

    /// The statistics of column `name` (matched case-insensitively): one entry per row group,
    /// or with `pages_of: Some(g)` one per data page of row group `g` (from the page index,
    /// when the file has one). None if the file lacks the column or the statistics.
    fn column_statistics(&self, name: &str, pages_of: Option<usize>, settings: &ReadSettings) -> Option<ColumnStatistics> {
        let schema = self.metadata.schema();
        let root = schema.fields().iter().position(|f| f.name().eq_ignore_ascii_case(name))?;
        let field = &schema.fields()[root];
        // Statistics in another unit or calendar than the values the scan returns prove nothing.
        if field.data_type() != self.columns.schema.field(root).data_type() || !self.columns.statistics_usable(root, settings) {
            return None;
        }
        // A missing null count is unknown, not zero: IsNull must not skip on a guess.
        let converter = StatisticsConverter::try_new(field.name(), schema, self.metadata.parquet_schema())
            .ok()?
            .with_missing_null_counts_as_zero(false);
        let groups = self.metadata.metadata().row_groups();
        let Some(group) = pages_of else {
            return Some(ColumnStatistics {
                mins: converter.row_group_mins(groups).ok()?,
                maxes: converter.row_group_maxes(groups).ok()?,
                null_counts: converter.row_group_null_counts(groups).ok()?,
                row_counts: converter.row_group_row_counts(groups).ok()??,
            });
        };
        let index = self.metadata.metadata().page_index()?.as_ref();
        if !(index.has_column_indexes() && index.has_offset_indexes()) {
            return None;
        }
        Some(ColumnStatistics {
            mins: converter.data_page_mins(index, &[group]).ok()?,
            maxes: converter.data_page_maxes(index, &[group]).ok()?,
            null_counts: converter.data_page_null_counts(index, &[group]).ok()?,
            row_counts: converter.data_page_row_counts(index, groups, &[group]).ok()??,
        })
    }
}

impl ParquetTable {
    /// Lists the files at `location`, reads their footers, checks they share one schema and
    /// discovers Hive-style partition columns from the folder names.
    pub fn open(location: &Path) -> Result<ParquetTable> {
        Self::open_with(location, true)
    }

    /// As [`ParquetTable::open`]; `infer_partition_types` false reads partition values as
    /// strings (`spark.sql.sources.partitionColumnTypeInference.enabled`).
    pub fn open_with(location: &Path, infer_partition_types: bool) -> Result<ParquetTable> {
        let paths = list_parquet_files(location)?;
        let mut files = Vec::with_capacity(paths.len());
        let mut first: Option<(SchemaRef, &Path)> = None;
        for path in &paths {
            let f = File::open(path).map_err(|e| KilnError::io(path_str(path), format!("cannot open: {e}")))?;
            let columns = super::spark_parquet::load(&f, reader_options()).map_err(|e| unreadable_footer(path, e))?;
            let size = f.metadata().map_err(|e| KilnError::io(path_str(path), format!("cannot read its size: {e}")))?.len();
            let schema = columns.schema.clone();
            match &first {
                None => first = Some((schema, path)),
                Some((expected, first_path)) if expected.fields() != schema.fields() => {
                    return Err(KilnError::io(
                        path_str(location),
                        format!(
                            "the files of one table must share one schema, but `{}` has {} and `{}` has {}",
                            path_str(first_path),
                            schema_string(expected),
                            path_str(path),
                            schema_string(&schema)
                        ),
                    ));
                }
                Some(_) => {}
            }
            files.push(ParquetFile { path: path.clone(), metadata: columns.metadata.clone(), columns: Arc::new(columns), size });
        }
        let file_schema = first.map(|(s, _)| s).ok_or_else(|| KilnError::io(path_str(location), "no Parquet files"))?;
        let partition_values = discover_partitions(location, &paths, infer_partition_types)?;
        // Spark: a column named like a partition column takes its value from the folder.
        let partition_schema = partition_values.schema();
        let is_partition = |f: &Field| partition_schema.fields().iter().any(|p| p.name().eq_ignore_ascii_case(f.name()));
        let data_fields: Vec<Field> = file_schema.fields().iter().filter(|f| !is_partition(f)).map(|f| f.as_ref().clone()).collect();
        Ok(ParquetTable { location: location.to_path_buf(), files, data_schema: Arc::new(Schema::new(data_fields)), partition_values })
    }

    /// The table's schema as Spark shows it: the file columns, then the partition columns.
    pub fn schema(&self) -> SchemaRef {
        let fields: Vec<Field> = self
            .data_schema
            .fields()
            .iter()
            .chain(self.partition_values.schema().fields().iter())
            .map(|f| f.as_ref().clone())
            .collect();
        Arc::new(Schema::new(fields))
    }

    /// True when the table has Hive-style partition columns.
    pub fn is_partitioned(&self) -> bool {
        self.partition_values.num_columns() > 0
    }

    /// True when `name` is a partition column.
    pub fn is_partition_column(&self, name: &str) -> bool {
        self.partition_column(name).is_some()
    }

    /// The bytes of the given files (indices into `files`).
    pub fn files_size(&self, files: impl IntoIterator<Item = usize>) -> u128 {
        files.into_iter().filter_map(|i| self.files.get(i)).map(|f| f.size as u128).sum()
    }

    /// (files, bytes): what collected statistics are checked against.
    pub fn fingerprint(&self) -> (usize, u128) {
        (self.files.len(), self.files_size(0..self.files.len()))
    }

    /// The conjuncts of `condition` that choose partitions: deterministic, and reading
    /// partition columns only (`output` is the relation's columns).
    pub fn partition_filters(&self, output: &[Attribute], condition: &Expr) -> Vec<Expr> {
        let partition_ids: BTreeSet<ExprId> = output.iter().filter(|a| self.is_partition_column(&a.name)).map(|a| a.id).collect();
        condition
            .split_conjunction()
            .into_iter()
            .filter(|c| {
                let refs = c.references();
                c.deterministic() && !c.contains_subquery() && !refs.is_empty() && refs.is_subset(&partition_ids)
            })
            .cloned()
            .collect()
    }

    /// Partition pruning: the files whose partition values pass every partition filter, found
    /// by evaluating the filters over the partition values (one row per file).
    pub fn select_files(&self, output: &[Attribute], partition_filters: &[Expr]) -> Result<Vec<usize>> {
        let Some(condition) = Expr::conjunction(partition_filters.iter().cloned()) else {
            return Ok((0..self.files.len()).collect());
        };
        let values = &self.partition_values;
        let input: Vec<Attribute> = values
            .schema()
            .fields()
            .iter()
            .map(|f| {
                output.iter().find(|a| a.name.eq_ignore_ascii_case(f.name())).cloned().ok_or_else(|| {
                    KilnError::internal(format!("partition column `{}` is not in the relation's output", f.name()))
                })
            })
            .collect::<Result<_>>()?;
        let keep = crate::expr::eval::evaluate_predicate(&condition, values, &input)?;
        Ok((0..keep.len()).filter(|&i| keep.is_valid(i) && keep.value(i)).collect())
    }

    /// Per row group of file `file`: false when the statistics prove that some pushed filter
    /// rejects every row of it. Missing or unreadable statistics never skip anything.
    pub fn row_groups_to_read(&self, file: usize, filters: &[PushedFilter], settings: &ReadSettings) -> Result<Vec<bool>> {
        let f = self.file(file)?;
        let mut keep = vec![true; f.num_row_groups()];
        for filter in filters {
            let Some(stats) = f.column_statistics(filter.column(), None, settings) else { continue };
            for (k, may) in keep.iter_mut().zip(filter.may_match(&stats)?.iter()) {
                *k &= may.unwrap_or(true);
            }
        }
        Ok(keep)
    }

    /// The rows of row group `row_group` of file `file` worth decoding: pages whose page-index
    /// statistics prove that a pushed filter rejects all their rows are skipped. None when
    /// nothing can be skipped (no filters, no page index, or every page may match).
    pub fn page_selection(&self, file: usize, row_group: usize, filters: &[PushedFilter], settings: &ReadSettings) -> Result<Option<RowSelection>> {
        let f = self.file(file)?;
        let rows = f.metadata.metadata().row_groups().get(row_group).map(|g| g.num_rows()).unwrap_or(0) as usize;
        let mut selection: Option<RowSelection> = None;
        for filter in filters {
            let Some(stats) = f.column_statistics(filter.column(), Some(row_group), settings) else { continue };
            let may = filter.may_match(&stats)?;
            if stats.row_counts.null_count() > 0 || stats.row_counts.values().iter().sum::<u64>() != rows as u64 {
                continue;
            }
            let pages: Vec<RowSelector> = (0..may.len())
                .map(|p| {
                    let n = stats.row_counts.value(p) as usize;
                    if may.value(p) { RowSelector::select(n) } else { RowSelector::skip(n) }
                })
                .collect();
            let pages = RowSelection::from(pages);
            selection = Some(match selection {
                Some(s) => s.intersection(&pages),
                None => pages,
            });
        }
        Ok(selection.filter(|s| s.skipped_row_count() > 0))
    }

    fn file(&self, file: usize) -> Result<&ParquetFile> {
        self.files.get(file).ok_or_else(|| KilnError::internal(format!("file {file} of a table with {} files", self.files.len())))
    }

    /// The values of partition column `name` (one per file), if it is one.
    fn partition_column(&self, name: &str) -> Option<&ArrayRef> {
        let idx = self.partition_values.schema().fields().iter().position(|f| f.name().eq_ignore_ascii_case(name))?;
        Some(self.partition_values.column(idx))
    }

    /// Reads one row group of file `file` (only the rows of `selection`, when given): the
    /// columns `names` (data or partition columns, in that order), as a stream: batches are
    /// decoded as they are pulled, so a scan holds one batch, not the row group. Partition
    /// columns are constants: the file's row of `partition_values`.
    pub fn row_group_batches(
        &self,
        file: usize,
        row_group: usize,
        selection: Option<RowSelection>,
        names: &[String],
        settings: &ReadSettings,
    ) -> Result<Box<dyn Iterator<Item = Result<RecordBatch>> + Send + 'static>> {
        let f = self.file(file)?;
        let data_names: Vec<String> = names.iter().filter(|n| self.partition_column(n).is_none()).cloned().collect();
        let mut builder = open_with(&f.path, &f.metadata)?.with_row_groups(vec![row_group]);
        if let Some(selection) = selection {
            builder = builder.with_row_selection(selection);
        }
        let batches = batch_reader(&f.path, builder, f.columns.clone(), &data_names, settings)?;
        if data_names.len() == names.len() {
            return Ok(Box::new(batches));
        }
        let table_schema = self.schema();
        let fields: Vec<Field> = names
            .iter()
            .map(|n| {
                let field = table_schema.fields().iter().find(|f| f.name().eq_ignore_ascii_case(n));
                field.map(|f| f.as_ref().clone()).ok_or_else(|| KilnError::internal(format!("no column `{n}` in the table")))
            })
            .collect::<Result<_>>()?;
        let schema = Arc::new(Schema::new(fields));
        // Each partition column is one value for the whole file.
        let columns: Vec<Option<ScalarValue>> = names
            .iter()
            .map(|n| self.partition_column(n).map(|values| ScalarValue::try_from_array(values, file)).transpose())
            .collect::<Result<_>>()?;
        Ok(Box::new(batches.map(move |b| {
            let b = b?;
            let rows = b.num_rows();
            let mut data = b.columns().iter();
            let arrays: Vec<ArrayRef> = columns
                .iter()
                .map(|c| match c {
                    Some(value) => value.to_array(rows),
                    None => data.next().cloned().ok_or_else(|| KilnError::internal("fewer data columns than asked")),
                })
                .collect::<Result<_>>()?;
            let options = RecordBatchOptions::new().with_row_count(Some(rows));
            Ok(RecordBatch::try_new_with_options(schema.clone(), arrays, &options)?)
        })))
    }
}

fn schema_string(schema: &Schema) -> String {
    let cols: Vec<String> = schema.fields().iter().map(|f| format!("{}: {}", f.name(), crate::types::spark_type_name(f.data_type()))).collect();
    format!("({})", cols.join(", "))
}

fn path_str(path: &Path) -> String {
    path.display().to_string()
}

/// Spark skips these: `_SUCCESS`, `_temporary`, `.crc` files and other hidden entries (and so
/// do kiln's readers skip a write's staging folders).
pub(crate) fn is_hidden_name(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_')
}

fn is_hidden(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(is_hidden_name)
}

/// The Parquet files a path names: the path itself if it is a file, or every `*.parquet` file
/// below a directory (recursively, so Hive-style `key=value/` partitions are included), sorted.
pub fn list_parquet_files(path: &Path) -> Result<Vec<PathBuf>> {
    list_files(path, "parquet")
}

/// The files of a table in one format: the path itself if it is a file, or every
/// `*.<extension>` file below a directory (recursively, hidden ones skipped), sorted.
pub fn list_files(path: &Path, extension: &str) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            // Spark's words, with the path qualified as Spark prints it.
            let qualified = format!("file:{}", std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()).display());
            KilnError::analysis_with("PATH_NOT_FOUND", format!("Path does not exist: {qualified}."), &[("path", &qualified)])
        } else {
            KilnError::io(path_str(path), format!("cannot open the {extension} path: {e}"))
        }
    })?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut dirs = vec![path.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries =
            std::fs::read_dir(&dir).map_err(|e| KilnError::io(path_str(&dir), format!("cannot list directory: {e}")))?;
        for entry in entries {
            let entry = entry.map_err(|e| KilnError::io(path_str(&dir), format!("cannot list directory: {e}")))?;
            let p = entry.path();
            if is_hidden(&p) {
                continue;
            }
            // Follows symlinks, so a linked partition directory is listed too.
            let is_dir = std::fs::metadata(&p).map(|m| m.is_dir()).unwrap_or(false);
            if is_dir {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == extension) {
                files.push(p);
            }
        }
    }
    if files.is_empty() {
        return Err(KilnError::io(path_str(path), format!("the directory holds no .{extension} files")));
    }
    files.sort();
    Ok(files)
}

/// The page index (per-page min/max and locations) is loaded where the file has one, so
/// pushed filters can skip pages within a row group.
fn reader_options() -> ArrowReaderOptions {
    ArrowReaderOptions::new().with_skip_arrow_metadata(true).with_page_index_policy(PageIndexPolicy::Optional)
}

/// One file's footer, read as Spark reads it.
fn open_columns(file: &Path) -> Result<SparkColumns> {
    let f = File::open(file).map_err(|e| KilnError::io(path_str(file), format!("cannot open: {e}")))?;
    super::spark_parquet::load(&f, reader_options()).map_err(|e| unreadable_footer(file, e))
}

/// Spark's error for a file whose Parquet footer cannot be read: another format named
/// `.parquet`, or a cut-off file. The reader's own words (`Size is 22 but need ...`) come last.
fn unreadable_footer(file: &Path, e: impl std::fmt::Display) -> KilnError {
    let e = e.to_string();
    let detail = e.strip_prefix("parquet error: ").unwrap_or(&e);
    KilnError::io(path_str(file), format!("[FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] not a Parquet file, or a damaged one: its footer cannot be read ({detail})"))
}

/// The schema of a table stored in `files`, from the first file's footer.
pub fn read_schema(files: &[PathBuf]) -> Result<SchemaRef> {
    let first = files.first().ok_or_else(|| KilnError::io("<no files>", "no Parquet files to read a schema from"))?;
    Ok(open_columns(first)?.schema)
}

/// Reads `projection` (column names, in that order; case-insensitive when no exact match) from
/// one file, in batches of at most `batch_size` rows.
pub fn read_parquet(file: &Path, projection: &[String], batch_size: usize) -> Result<Vec<RecordBatch>> {
    read(file, projection, batch_size, None)
}

/// Reads one row group of a file: the unit of parallel scanning.
pub fn read_row_group(file: &Path, row_group: usize, projection: &[String], batch_size: usize) -> Result<Vec<RecordBatch>> {
    read(file, projection, batch_size, Some(vec![row_group]))
}

fn open_with(file: &Path, metadata: &ArrowReaderMetadata) -> Result<ParquetRecordBatchReaderBuilder<File>> {
    let f = File::open(file).map_err(|e| KilnError::io(path_str(file), format!("cannot open: {e}")))?;
    Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(f, metadata.clone()))
}

fn read(file: &Path, projection: &[String], batch_size: usize, row_groups: Option<Vec<usize>>) -> Result<Vec<RecordBatch>> {
    let columns = Arc::new(open_columns(file)?);
    let mut builder = open_with(file, &columns.metadata)?;
    if let Some(groups) = row_groups {
        builder = builder.with_row_groups(groups);
    }
    let settings = ReadSettings { batch_size, ..ReadSettings::default() };
    batch_reader(file, builder, columns, projection, &settings)?.collect()
}

/// The batches of `projection` (in that order) that `builder` reads, decoded as they are pulled.
fn batch_reader(
    file: &Path,
    builder: ParquetRecordBatchReaderBuilder<File>,
    columns: Arc<SparkColumns>,
    projection: &[String],
    settings: &ReadSettings,
) -> Result<impl Iterator<Item = Result<RecordBatch>> + Send + 'static> {
    let file_schema = builder.schema().clone();
    let mut roots = Vec::with_capacity(projection.len());
    for name in projection {
        let idx = file_schema
            .index_of(name)
            .ok()
            .or_else(|| file_schema.fields().iter().position(|f| f.name().eq_ignore_ascii_case(name)))
            .ok_or_else(|| {
                let names: Vec<&str> = file_schema.fields().iter().map(|f| f.name().as_str()).collect();
                KilnError::io(path_str(file), format!("no column `{name}` in the file (it has {})", names.join(", ")))
            })?;
        roots.push(idx);
    }
    // The reader returns the chosen columns in file order; map each asked name to its position.
    let mut chosen = roots.clone();
    chosen.sort_unstable();
    chosen.dedup();
    let order: Vec<usize> = roots.iter().filter_map(|r| chosen.binary_search(r).ok()).collect();
    let out_schema = Arc::new(columns.schema.project(&roots)?);

    let mask = ProjectionMask::roots(builder.parquet_schema(), chosen.iter().copied());
    let reader = builder
        .with_projection(mask)
        .with_batch_size(settings.batch_size.max(1))
        .build()
        .map_err(|e| KilnError::io(path_str(file), format!("cannot read Parquet: {e}")))?;
    let path = path_str(file);
    let settings = *settings;
    Ok(reader.map(move |batch| {
        let batch = batch.map_err(|e| KilnError::io(path.clone(), format!("cannot read Parquet: {e}")))?;
        let arrays = order
            .iter()
            .zip(&roots)
            .map(|(&i, &root)| columns.convert(root, batch.column(i), &settings, &path))
            .collect::<Result<Vec<_>>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(out_schema.clone(), arrays, &options)?)
    }))
}

/// Writes `batches` to one snappy-compressed Parquet file (creating parent directories).
pub fn write_parquet(path: &Path, batches: &[RecordBatch]) -> Result<()> {
    let first = batches
        .first()
        .ok_or_else(|| KilnError::io(path_str(path), "no batches to write, so no schema: use write_parquet_with_schema"))?;
    write_parquet_with_schema(path, first.schema(), batches)
}

/// Writes `batches` (possibly none) with the given schema to one snappy-compressed Parquet file.
pub fn write_parquet_with_schema(path: &Path, schema: SchemaRef, batches: &[RecordBatch]) -> Result<()> {
    write_parquet_stream(path, schema, batches.iter().map(|b| Ok(b.clone())))
}

/// Writes batches as they come (so a large table need not be held in memory) to one
/// snappy-compressed Parquet file; the first error stops the write.
pub fn write_parquet_stream(
    path: &Path,
    schema: SchemaRef,
    batches: impl IntoIterator<Item = Result<RecordBatch>>,
) -> Result<()> {
    let err = |e: &dyn std::fmt::Display| KilnError::io(path_str(path), format!("cannot write Parquet: {e}"));
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|e| err(&e))?;
    }
    let file = File::create(path).map_err(|e| err(&e))?;
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut writer = ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| err(&e))?;
    for batch in batches {
        writer.write(&batch?).map_err(|e| err(&e))?;
    }
    writer.close().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::expr::Expr;
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::datatypes::DataType;

    /// `id` from `start`, `name` NULL every third row, `score` = id * 10.
    pub(crate) fn batch(start: i64, n: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("score", DataType::Int64, true),
        ]));
        let ids: Vec<i64> = (start..start + n as i64).collect();
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(ids.clone())),
            Arc::new(StringArray::from_iter(ids.iter().map(|i| (i % 3 != 0).then(|| format!("n{i}"))))),
            Arc::new(Int64Array::from_iter_values(ids.iter().map(|i| i * 10))),
        ];
        RecordBatch::try_new(schema, cols).unwrap()
    }

    #[test]
    fn round_trip_and_projection_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/t.parquet");
        write_parquet(&path, &[batch(0, 100), batch(100, 50)]).unwrap();

        let files = list_parquet_files(&path).unwrap();
        let schema = read_schema(&files).unwrap();
        assert_eq!(schema.fields().iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["id", "name", "score"]);
        assert!(schema.fields().iter().all(|f| f.is_nullable()));

        let all: Vec<String> = ["id", "name", "score"].map(String::from).to_vec();
        let got = read_parquet(&path, &all, 64).unwrap();
        assert_eq!(got.iter().map(|b| b.num_rows()).sum::<usize>(), 150);
        assert!(got.iter().all(|b| b.num_rows() <= 64));
        let back = arrow::compute::concat_batches(&got[0].schema(), &got).unwrap();
        let orig = arrow::compute::concat_batches(&batch(0, 1).schema(), &[batch(0, 100), batch(100, 50)]).unwrap();
        assert_eq!(back.columns(), orig.columns());

        let proj = read_parquet(&path, &["score".to_string(), "ID".to_string()], 1000).unwrap();
        assert_eq!(proj[0].schema().field(0).name(), "score");
        assert_eq!(proj[0].schema().field(1).name(), "id");
        assert_eq!(proj[0].column(0).as_ref(), orig.column(2).as_ref());

        let none = read_parquet(&path, &[], 1000).unwrap();
        assert_eq!(none.iter().map(|b| b.num_rows()).sum::<usize>(), 150);

        let err = read_parquet(&path, &["nope".to_string()], 10).unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("t.parquet"), "{err}");
    }

    #[test]
    fn lists_directories_recursively_skipping_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_parquet(&root.join("d=2/part-0.parquet"), &[batch(0, 1)]).unwrap();
        write_parquet(&root.join("d=1/part-0.parquet"), &[batch(0, 1)]).unwrap();
        write_parquet(&root.join("_temporary/x.parquet"), &[batch(0, 1)]).unwrap();
        write_parquet(&root.join("d=1/.hidden.parquet"), &[batch(0, 1)]).unwrap();
        std::fs::write(root.join("_SUCCESS"), b"").unwrap();
        std::fs::write(root.join("notes.txt"), b"x").unwrap();
        let files = list_parquet_files(root).unwrap();
        assert_eq!(files, vec![root.join("d=1/part-0.parquet"), root.join("d=2/part-0.parquet")]);
    }

    #[test]
    fn lists_the_hive_partitioned_reference_table() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/sales/orders");
        if !dir.exists() {
            return;
        }
        let files = list_parquet_files(&dir).unwrap();
        assert_eq!(files.len(), 61);
        assert!(files[0].ends_with("order_date=2026-09-01/part-00000.parquet"), "{:?}", files[0]);
        let schema = read_schema(&files).unwrap();
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["order_id", "customer_id", "status", "amount"]);
        let table = ParquetTable::open(&dir).unwrap();
        let names: Vec<String> = table.schema().fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["order_id", "customer_id", "status", "amount", "order_date"]);
        assert_eq!(table.schema().field(4).data_type(), &DataType::Date32);
        let rows: usize = files
            .iter()
            .map(|f| read_parquet(f, &["amount".to_string()], 8192).unwrap().iter().map(|b| b.num_rows()).sum::<usize>())
            .sum();
        assert_eq!(rows, 200_000);
    }

    #[test]
    fn partitioned_directory_appends_partition_columns_filled_per_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_parquet(&root.join("d=2026-10-02/n=7/part-0.parquet"), &[batch(0, 3)]).unwrap();
        write_parquet(&root.join("d=2026-10-01/n=__HIVE_DEFAULT_PARTITION__/part-0.parquet"), &[batch(10, 2)]).unwrap();
        let table = ParquetTable::open(root).unwrap();
        assert!(table.is_partitioned());
        let schema = table.schema();
        let fields: Vec<(&str, &DataType)> = schema.fields().iter().map(|f| (f.name().as_str(), f.data_type())).collect();
        assert_eq!(
            fields,
            [("id", &DataType::Int64), ("name", &DataType::Utf8), ("score", &DataType::Int64), ("d", &DataType::Date32), ("n", &DataType::Int32)]
        );
        // Files are sorted, so file 0 is d=2026-10-01 (n NULL), file 1 is d=2026-10-02 (n 7).
        let names: Vec<String> = ["n", "id", "d"].map(String::from).to_vec();
        let got = table.row_group_batches(1, 0, None, &names, &ReadSettings { batch_size: 100, ..Default::default() }).unwrap().collect::<Result<Vec<_>>>().unwrap();
        assert_eq!(crate::format::result_csv(&got[0].schema(), &got), "n,id,d\n7,0,2026-10-02\n7,1,2026-10-02\n7,2,2026-10-02\n");
        let got = table.row_group_batches(0, 0, None, &names[..1], &ReadSettings { batch_size: 100, ..Default::default() }).unwrap().collect::<Result<Vec<_>>>().unwrap();
        assert_eq!(crate::format::result_csv(&got[0].schema(), &got), "n\nNULL\nNULL\n");
    }

    /// `batch(0, n)` written in row groups of `rows_per_group` rows.
    fn write_row_groups(path: &Path, n: usize, rows_per_group: usize) {
        let props = WriterProperties::builder().set_max_row_group_row_count(Some(rows_per_group)).build();
        let b = batch(0, n);
        let mut w = ArrowWriter::try_new(File::create(path).unwrap(), b.schema(), Some(props)).unwrap();
        w.write(&b).unwrap();
        w.close().unwrap();
    }

    #[test]
    fn row_group_statistics_skip_what_no_row_can_pass() {
        let dir = tempfile::tempdir().unwrap();
        write_row_groups(&dir.path().join("t.parquet"), 100, 10);
        let table = ParquetTable::open(dir.path()).unwrap();
        assert_eq!(table.files[0].num_row_groups(), 10);
        let id = || Expr::Attribute(crate::expr::Attribute::new("ID", DataType::Int64, true));
        let read = |e: Expr| -> Vec<usize> {
            let f = PushedFilter::translate(&e).unwrap();
            let keep = table.row_groups_to_read(0, &[f], &ReadSettings::default()).unwrap();
            keep.iter().enumerate().filter(|(_, k)| **k).map(|(i, _)| i).collect()
        };
        let lit = |v: i64| Expr::Literal(ScalarValue::Int64(v));
        assert_eq!(read(id().binary(crate::expr::BinaryOp::GtEq, lit(95))), [9]);
        assert_eq!(read(id().binary(crate::expr::BinaryOp::Eq, lit(42))), [4]);
        assert_eq!(read(id().binary(crate::expr::BinaryOp::Lt, lit(0))), Vec::<usize>::new());
        assert_eq!(read(Expr::IsNotNull(Box::new(id()))).len(), 10);
        // A column the file lacks has no statistics: nothing is skipped.
        let missing = PushedFilter::IsNull("nope".into());
        assert_eq!(table.row_groups_to_read(0, &[missing], &ReadSettings::default()).unwrap(), vec![true; 10]);
    }

    #[test]
    fn files_with_different_schemas_are_an_error_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_parquet(&root.join("k=1/a.parquet"), &[batch(0, 1)]).unwrap();
        let other = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Utf8, true)])),
            vec![Arc::new(StringArray::from(vec!["x"]))],
        )
        .unwrap();
        write_parquet(&root.join("k=2/b.parquet"), &[other]).unwrap();
        let err = ParquetTable::open(root).unwrap_err().to_string();
        assert!(err.contains("k=1/a.parquet") && err.contains("k=2/b.parquet") && err.contains("id: string"), "{err}");
    }

    #[test]
    fn bad_partition_folder_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        write_parquet(&dir.path().join("k=/a.parquet"), &[batch(0, 1)]).unwrap();
        let err = ParquetTable::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("`k=`") && err.contains("empty value"), "{err}");
    }

    #[test]
    fn missing_path_and_empty_directory_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nothing_here");
        let err = list_parquet_files(&missing).unwrap_err();
        assert_eq!(err.error_class(), Some("PATH_NOT_FOUND"));
        assert!(err.to_string().contains("Path does not exist: file:/") && err.to_string().contains("nothing_here"), "{err}");
        let err = list_parquet_files(dir.path()).unwrap_err().to_string();
        assert!(err.contains("no .parquet files"), "{err}");
        assert!(read_schema(&[]).is_err());
    }

    #[test]
    fn corrupt_file_error_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.parquet");
        std::fs::write(&path, b"this is not parquet at all, just some garbage bytes").unwrap();
        let err = read_schema(std::slice::from_ref(&path)).unwrap_err().to_string();
        assert!(err.contains("broken.parquet"), "{err}");
        let err = read_parquet(&path, &[], 10).unwrap_err().to_string();
        assert!(err.contains("broken.parquet"), "{err}");
    }

    #[test]
    fn truncated_file_error_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("part-0.parquet");
        write_parquet(&path, &[batch(0, 1000)]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        // Cut off the footer, as a copy that stopped halfway would.
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let err = ParquetTable::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("part-0.parquet"), "{err}");
        let err = crate::Session::new().register_parquet("t", dir.path()).unwrap_err().to_string();
        assert!(err.contains("part-0.parquet"), "{err}");
    }

    #[test]
    fn reads_utf8_view_files_as_utf8() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/tpch/nation.parquet");
        if !path.exists() {
            return;
        }
        let schema = read_schema(std::slice::from_ref(&path)).unwrap();
        assert_eq!(schema.field_with_name("n_name").unwrap().data_type(), &DataType::Utf8);
        let b = read_parquet(&path, &["n_name".to_string()], 100).unwrap();
        assert_eq!(b[0].column(0).data_type(), &DataType::Utf8);
        assert_eq!(b.iter().map(|b| b.num_rows()).sum::<usize>(), 25);
    }
}
