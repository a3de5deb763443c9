//! Spill files: batches a breaker cannot hold in memory, written as an Arrow IPC stream to a
//! file in the spill folder (`spark.local.dir`, else the system's temporary folder) and read
//! back in order. A file is deleted when its handle drops — when the operator is done with it,
//! and when the query ends, fails, is cancelled or unwinds from a panic.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::SchemaRef;
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::StreamWriter;
use arrow::record_batch::RecordBatch;
use tempfile::NamedTempFile;

use crate::error::{KilnError, Result};
use crate::physical::metrics::OperatorMetrics;

/// The folder spill files go to: `spark.local.dir` (its first entry, as Spark takes a
/// comma-separated list), else the system's temporary folder.
pub fn spill_folder(local_dir: &str) -> PathBuf {
    match local_dir.split(',').map(str::trim).find(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::temp_dir(),
    }
}

/// A spill file being written.
pub struct SpillWriter {
    file: NamedTempFile,
    writer: StreamWriter<BufWriter<File>>,
    rows: usize,
    metrics: Arc<OperatorMetrics>,
}

/// A finished spill file: its batches in the order written, read back by [`SpillFile::read`].
pub struct SpillFile {
    file: NamedTempFile,
    rows: usize,
}

impl SpillWriter {
    /// A new spill file in `folder` for batches of `schema`, counted on `metrics`.
    pub fn new(folder: &Path, schema: &SchemaRef, metrics: Arc<OperatorMetrics>) -> Result<SpillWriter> {
        let started = Instant::now();
        let file = tempfile::Builder::new().prefix("kiln-spill-").suffix(".arrow").tempfile_in(folder).map_err(|e| spill_error(folder, &e))?;
        let handle = file.reopen().map_err(|e| spill_error(folder, &e))?;
        let writer = StreamWriter::try_new_buffered(handle, schema).map_err(|e| spill_error(folder, &e))?;
        metrics.add_spill_time(started.elapsed().as_nanos() as u64);
        Ok(SpillWriter { file, writer, rows: 0, metrics })
    }

    /// Appends a batch.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let start = Instant::now();
        let folder = folder_of(&self.file);
        self.writer.write(batch).map_err(|e| spill_error(&folder, &e))?;
        self.rows += batch.num_rows();
        self.metrics.add_spill_time(start.elapsed().as_nanos() as u64);
        Ok(())
    }

    /// Finishes the file: flushed, its size counted.
    pub fn finish(mut self) -> Result<SpillFile> {
        let start = Instant::now();
        let folder = folder_of(&self.file);
        self.writer.finish().map_err(|e| spill_error(&folder, &e))?;
        self.writer.get_mut().get_ref().sync_data().ok();
        drop(self.writer);
        let bytes = self.file.as_file().metadata().map(|m| m.len()).unwrap_or(0);
        self.metrics.add_spill(bytes, start.elapsed().as_nanos() as u64);
        Ok(SpillFile { file: self.file, rows: self.rows })
    }
}

impl SpillFile {
    /// Rows written.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The batches, in the order written.
    pub fn read(&self) -> Result<impl Iterator<Item = Result<RecordBatch>>> {
        let folder = folder_of(&self.file);
        let handle = self.file.reopen().map_err(|e| spill_error(&folder, &e))?;
        let reader = StreamReader::try_new(BufReader::with_capacity(64 << 10, handle), None).map_err(|e| spill_error(&folder, &e))?;
        Ok(reader.map(move |b| b.map_err(|e| spill_error(&folder, &e))))
    }
}

fn folder_of(file: &NamedTempFile) -> PathBuf {
    file.path().parent().map(Path::to_path_buf).unwrap_or_default()
}

/// A spill file that could not be made, written or read: the folder named, and what to do.
fn spill_error(folder: &Path, e: &dyn std::fmt::Display) -> KilnError {
    KilnError::exec(format!(
        "[KILN_SPILL_FAILED] Could not spill to a file in {}: {e}. Free space there, or point spark.local.dir at a folder with room (or raise kiln.memory.limit).",
        folder.display()
    ))
}
