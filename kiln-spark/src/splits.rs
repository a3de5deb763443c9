//! The Parquet splits Spark assigned to a task, read as the batches a fragment's scan gives:
//! a split (file, start, length) holds the row groups whose midpoint lies in its byte range,
//! as Parquet's own readers split files, so every row group is read by exactly one task.

use std::fs::File;
use std::sync::Arc;

use kiln::arrow::array::ArrayRef;
use kiln::arrow::datatypes::{Field, Schema, SchemaRef};
use kiln::arrow::record_batch::RecordBatch;
use kiln::expr::Attribute;
use kiln::parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use kiln::parquet::arrow::ProjectionMask;
use kiln::parquet::file::metadata::RowGroupMetaData;
use kiln::{KilnError, Result};

/// One file range of a task's input.
#[derive(Debug, Clone)]
pub struct Split {
    /// The local file's path.
    pub path: String,
    /// The first byte of the range.
    pub start: i64,
    /// The range's length in bytes.
    pub length: i64,
}

/// Rows per batch read.
const BATCH_ROWS: usize = 8192;

/// The batches of `splits`' row groups, columns `columns` (matched by name, case-insensitively,
/// as Spark matches them) in that order and of their declared types.
pub fn read(splits: Vec<Split>, columns: Vec<Attribute>) -> Box<dyn Iterator<Item = Result<RecordBatch>> + Send> {
    let schema: SchemaRef = Arc::new(Schema::new(columns.iter().map(|a| Field::new(&a.name, a.data_type.clone(), true)).collect::<Vec<_>>()));
    let mut pending = splits.into_iter();
    let mut current: Option<(ParquetRecordBatchReader, Vec<usize>)> = None;
    Box::new(std::iter::from_fn(move || loop {
        if let Some((reader, order)) = current.as_mut() {
            match reader.next() {
                Some(Ok(batch)) => return Some(reorder(&batch, order, &schema)),
                Some(Err(e)) => return Some(Err(KilnError::from(e))),
                None => current = None,
            }
        }
        let split = pending.next()?;
        match open(&split, &columns) {
            Ok(r) => current = Some(r),
            Err(e) => return Some(Err(e)),
        }
    }))
}

/// A reader of the split's row groups and, for each wanted column, its position in what it reads.
fn open(split: &Split, columns: &[Attribute]) -> Result<(ParquetRecordBatchReader, Vec<usize>)> {
    let file = File::open(&split.path).map_err(|e| KilnError::Io { path: split.path.clone(), message: e.to_string() })?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
    let (end, start) = (split.start.saturating_add(split.length), split.start);
    let groups: Vec<usize> = builder
        .metadata()
        .row_groups()
        .iter()
        .enumerate()
        .filter(|(_, g)| (start..end).contains(&midpoint(g)))
        .map(|(i, _)| i)
        .collect();
    let file_schema = builder.schema().clone();
    let mut roots = Vec::new();
    for a in columns {
        let at = file_schema
            .fields()
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(&a.name))
            .ok_or_else(|| KilnError::exec(format!("[KILN_SPARK_MISSING_COLUMN] {}: no column `{}`", split.path, a.name)))?;
        roots.push(at);
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
    // The reader gives the projected columns in file order: each wanted column's rank there.
    let mut sorted = roots.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let order = roots.iter().map(|r| sorted.binary_search(r).unwrap_or(0)).collect();
    let reader = builder.with_projection(mask).with_row_groups(groups).with_batch_size(BATCH_ROWS).build()?;
    Ok((reader, order))
}

/// Where a row group's bytes are centred: its first page plus half its compressed size.
fn midpoint(g: &RowGroupMetaData) -> i64 {
    let first = g.columns().iter().map(|c| c.dictionary_page_offset().unwrap_or(c.data_page_offset())).min().unwrap_or(0);
    first + g.compressed_size() / 2
}

fn reorder(batch: &RecordBatch, order: &[usize], schema: &SchemaRef) -> Result<RecordBatch> {
    let columns = order
        .iter()
        .zip(schema.fields())
        .map(|(&i, f)| -> Result<ArrayRef> {
            let c = batch.column(i);
            if c.data_type() == f.data_type() {
                return Ok(c.clone());
            }
            kiln::arrow::compute::cast(c, f.data_type()).map_err(|e| KilnError::exec(format!("column `{}`: cannot read {} as {}: {e}", f.name(), c.data_type(), f.data_type())))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(schema.clone(), columns, &kiln::arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(batch.num_rows())))?)
}
