//! The Parquet splits Spark assigned to a task, read as the batches a fragment's scan gives:
//! a split (file, start, length) holds the row groups whose midpoint lies in its byte range,
//! as Parquet's own readers split files, so every row group is read by exactly one task.

use std::fs::File;
use std::sync::Arc;

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
    crate::inputs::conform(order.iter().map(|&i| batch.column(i).clone()).collect(), batch.num_rows(), schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kiln::arrow::array::{ArrayRef, AsArray, Int64Array};
    use kiln::arrow::datatypes::{DataType, Int64Type};
    use kiln::parquet::arrow::ArrowWriter;
    use kiln::parquet::file::properties::WriterProperties;

    #[test]
    fn splits_of_a_file_read_each_row_group_once_and_columns_by_name_in_any_order() {
        let path = std::env::temp_dir().join(format!("kiln-spark-splits-{}.parquet", std::process::id()));
        let ids: Vec<i64> = (0..10_000).collect();
        let batch = RecordBatch::try_from_iter([
            ("ID", Arc::new(Int64Array::from(ids.clone())) as ArrayRef),
            ("twice", Arc::new(Int64Array::from(ids.iter().map(|i| i * 2).collect::<Vec<_>>())) as ArrayRef),
        ])
        .expect("batch");
        let props = WriterProperties::builder().set_max_row_group_row_count(Some(1000)).build();
        let mut writer = ArrowWriter::try_new(File::create(&path).expect("create"), batch.schema(), Some(props)).expect("writer");
        writer.write(&batch).expect("write");
        writer.close().expect("close");
        let size = std::fs::metadata(&path).expect("size").len() as i64;
        let columns = vec![Attribute::new("twice", DataType::Int64, true), Attribute::new("id", DataType::Int64, true)];
        let mut seen = Vec::new();
        let mut per_split = Vec::new();
        // Three uneven ranges covering the file, as Spark cuts it by maxPartitionBytes.
        for (start, end) in [(0, size / 3), (size / 3, size / 2), (size / 2, size)] {
            let split = Split { path: path.to_string_lossy().into_owned(), start, length: end - start };
            let mut rows = 0;
            for b in read(vec![split], columns.clone()) {
                let b = b.expect("reads");
                let (twice, id) = (b.column(0).as_primitive::<Int64Type>(), b.column(1).as_primitive::<Int64Type>());
                for r in 0..b.num_rows() {
                    assert_eq!(twice.value(r), id.value(r) * 2);
                    seen.push(id.value(r));
                }
                rows += b.num_rows();
            }
            per_split.push(rows);
        }
        std::fs::remove_file(&path).ok();
        seen.sort_unstable();
        assert_eq!(seen, ids, "every row once");
        assert!(per_split.iter().filter(|&&n| n > 0).count() >= 2, "the rows are spread over the splits: {per_split:?}");
        let missing = read(vec![Split { path: "/nonexistent/kiln.parquet".into(), start: 0, length: 1 }], columns).next().expect("an item");
        assert!(missing.expect_err("no file").to_string().contains("/nonexistent/kiln.parquet"));
    }
}
