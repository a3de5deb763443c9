//! The rows Spark hands a task — a broadcast's or its shuffle partition's — as one Arrow IPC
//! stream per input, written on the JVM by Spark's own `ArrowWriter`, read here as the batches
//! of a fragment's `FragmentInput`.

use std::io::Cursor;
use std::sync::Arc;

use kiln::arrow::array::ArrayRef;
use kiln::arrow::datatypes::{Field, Schema, SchemaRef};
use kiln::arrow::ipc::reader::StreamReader;
use kiln::arrow::record_batch::{RecordBatch, RecordBatchOptions};
use kiln::exec::fragment::InputBatches;
use kiln::expr::Attribute;
use kiln::{KilnError, Result};

/// The batches of the IPC stream `bytes`, as columns `columns` (by position: Spark's names
/// may repeat, as two aggregates' `sum` buffers do) of their declared types.
pub fn read(bytes: Vec<u8>, columns: Vec<Attribute>) -> Result<InputBatches> {
    let schema: SchemaRef = Arc::new(Schema::new(columns.iter().map(|a| Field::new(&a.name, a.data_type.clone(), true)).collect::<Vec<_>>()));
    let reader = StreamReader::try_new(Cursor::new(bytes), None)?;
    if reader.schema().fields().len() != columns.len() {
        return Err(KilnError::exec(format!("[KILN_SPARK_INPUT] an input of {} columns where the subtree reads {}", reader.schema().fields().len(), columns.len())));
    }
    Ok(Box::new(reader.map(move |b| {
        let b = b?;
        conform(b.columns().to_vec(), b.num_rows(), &schema)
    })))
}

/// A batch of `rows` rows of `columns` with `schema`'s names and types, cast where the reader
/// gave another (Spark writes timestamps in its own zone's name; Parquet may hold narrower types).
pub(crate) fn conform(columns: Vec<ArrayRef>, rows: usize, schema: &SchemaRef) -> Result<RecordBatch> {
    let columns = columns
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| -> Result<ArrayRef> {
            if c.data_type() == f.data_type() {
                return Ok(c.clone());
            }
            kiln::arrow::compute::cast(c, f.data_type()).map_err(|e| KilnError::exec(format!("column `{}`: cannot read {} as {}: {e}", f.name(), c.data_type(), f.data_type())))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new_with_options(schema.clone(), columns, &RecordBatchOptions::new().with_row_count(Some(rows)))?)
}
