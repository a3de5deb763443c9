//! Spill files: batches a breaker cannot hold in memory, written as an Arrow IPC stream to a
//! file in the spill folder (`spark.local.dir`, else the system's temporary folder) and read
//! back in order. A file is deleted when its handle drops — when the operator is done with it,
//! and when the query ends, fails, is cancelled or unwinds from a panic.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{ArrayRef, Float32Array, Float64Array, UInt32Array};
use arrow::compute::take_record_batch;
use arrow::datatypes::{Float32Type, Float64Type, SchemaRef};
use arrow::row::{RowConverter, Rows, SortField};
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::{IpcWriteOptions, StreamWriter};
use arrow::ipc::CompressionType;
use arrow::record_batch::RecordBatch;
use tempfile::NamedTempFile;

use super::hash::murmur3;
use super::memory::batch_bytes;
use crate::error::{KilnError, Result};

/// The folder spill files go to: `spark.local.dir` (its first entry, as Spark takes a
/// comma-separated list), else the system's temporary folder.
pub fn spill_folder(local_dir: &str) -> PathBuf {
    match local_dir.split(',').map(str::trim).find(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::temp_dir(),
    }
}

/// What a query's spill files may take on disk at once (`kiln.spill.limit`), and take now: a
/// query that spills without end fails before it fills the disk under the other programs.
#[derive(Debug, Default)]
pub struct SpillBudget {
    /// The limit in bytes; 0 until set or first worked out.
    limit: AtomicU64,
    used: AtomicU64,
    /// A `SpillCompression`, as its discriminant.
    compression: AtomicU8,
}

/// How spill files are compressed (`kiln.spill.compression`): Arrow IPC's LZ4 frames (the
/// default, as Spark compresses its spills with lz4), zstd, or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpillCompression {
    #[default]
    Lz4,
    Zstd,
    None,
}

impl SpillCompression {
    /// The setting's value: lz4, zstd or none.
    pub fn name(self) -> &'static str {
        match self {
            SpillCompression::Lz4 => "lz4",
            SpillCompression::Zstd => "zstd",
            SpillCompression::None => "none",
        }
    }

    /// The compression a setting's value names (any case), if it names one.
    pub fn parse(value: &str) -> Option<SpillCompression> {
        [SpillCompression::Lz4, SpillCompression::Zstd, SpillCompression::None].into_iter().find(|c| c.name().eq_ignore_ascii_case(value.trim()))
    }

    fn ipc(self) -> Option<CompressionType> {
        match self {
            SpillCompression::Lz4 => Some(CompressionType::LZ4_FRAME),
            SpillCompression::Zstd => Some(CompressionType::ZSTD),
            SpillCompression::None => None,
        }
    }
}

impl SpillBudget {
    /// How the query's spill files are compressed.
    pub fn set_compression(&self, compression: SpillCompression) {
        self.compression.store(compression as u8, Ordering::Relaxed);
    }

    fn compression(&self) -> SpillCompression {
        match self.compression.load(Ordering::Relaxed) {
            1 => SpillCompression::Zstd,
            2 => SpillCompression::None,
            _ => SpillCompression::Lz4,
        }
    }

    /// Sets the limit; 0: 90 % of the spill folder's free space when the query first spills.
    pub fn set_limit(&self, bytes: u64) {
        self.limit.store(bytes, Ordering::Relaxed);
    }

    /// Bytes spill files take now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Takes `n` bytes for a spill file in `folder`, or fails naming the limit.
    fn take(&self, folder: &Path, n: u64) -> Result<()> {
        let mut limit = self.limit.load(Ordering::Relaxed);
        if limit == 0 {
            let free = rustix::fs::statvfs(folder).map(|s| s.f_bavail.saturating_mul(s.f_frsize)).map_err(|e| spill_error(folder, &e))?;
            limit = (free / 10 * 9).max(1);
            // The first worked out holds for the rest of the query.
            limit = match self.limit.compare_exchange(0, limit, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => limit,
                Err(set) => set,
            };
        }
        let before = self.used.fetch_add(n, Ordering::Relaxed);
        if before.saturating_add(n) > limit {
            self.used.fetch_sub(n, Ordering::Relaxed);
            return Err(KilnError::exec(format!(
                "[KILN_SPILL_LIMIT] The query's spill files in {} would pass kiln.spill.limit ({}): they take {} already. \
                 Raise kiln.memory.limit so that less spills, point spark.local.dir at a larger disk and raise kiln.spill.limit, or give the query less to hold.",
                folder.display(),
                super::bytes_to_string(limit as u128),
                super::bytes_to_string(before as u128),
            )));
        }
        Ok(())
    }

    fn give(&self, n: u64) {
        self.used.fetch_sub(n, Ordering::Relaxed);
    }
}

/// Bytes taken from a query's [`SpillBudget`], given back when the file goes.
struct Taken {
    budget: Arc<SpillBudget>,
    bytes: u64,
}

impl Drop for Taken {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
    }
}

/// A spill file being written.
pub struct SpillWriter {
    file: NamedTempFile,
    writer: StreamWriter<BufWriter<File>>,
    taken: Taken,
    rows: usize,
    memory_bytes: u64,
    nanos: u64,
}

/// A finished spill file: its batches in the order written, read back by [`SpillFile::read`].
pub struct SpillFile {
    file: NamedTempFile,
    _taken: Taken,
    rows: usize,
    memory_bytes: u64,
    disk_bytes: u64,
    nanos: u64,
}

impl SpillWriter {
    /// A new spill file in `folder` for batches of `schema`, its bytes taken from `budget`.
    pub fn new(folder: &Path, schema: &SchemaRef, budget: &Arc<SpillBudget>) -> Result<SpillWriter> {
        let started = Instant::now();
        let file = tempfile::Builder::new().prefix("kiln-spill-").suffix(".arrow").tempfile_in(folder).map_err(|e| spill_error(folder, &e))?;
        let handle = file.reopen().map_err(|e| spill_error(folder, &e))?;
        let writer = {
            let options = IpcWriteOptions::default().try_with_compression(budget.compression().ipc()).map_err(|e| spill_error(folder, &e))?;
            StreamWriter::try_new_with_options(std::io::BufWriter::new(handle), schema, options).map_err(|e| spill_error(folder, &e))?
        };
        let taken = Taken { budget: budget.clone(), bytes: 0 };
        Ok(SpillWriter { file, writer, taken, rows: 0, memory_bytes: 0, nanos: started.elapsed().as_nanos() as u64 })
    }

    /// Appends a batch (its in-memory size taken from the budget: what Arrow IPC writes
    /// uncompressed).
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let start = Instant::now();
        let bytes = batch_bytes(batch);
        let folder = folder_of(&self.file);
        self.taken.budget.take(&folder, bytes)?;
        self.taken.bytes += bytes;
        self.writer.write(batch).map_err(|e| spill_error(&folder, &e))?;
        self.rows += batch.num_rows();
        self.memory_bytes += bytes;
        self.nanos += start.elapsed().as_nanos() as u64;
        Ok(())
    }

    /// Finishes the file: flushed, its size known.
    pub fn finish(mut self) -> Result<SpillFile> {
        let start = Instant::now();
        let folder = folder_of(&self.file);
        self.writer.finish().map_err(|e| spill_error(&folder, &e))?;
        drop(self.writer);
        let disk_bytes = self.file.as_file().metadata().map(|m| m.len()).unwrap_or(0);
        let nanos = self.nanos + start.elapsed().as_nanos() as u64;
        Ok(SpillFile { file: self.file, _taken: self.taken, rows: self.rows, memory_bytes: self.memory_bytes, disk_bytes, nanos })
    }
}

impl SpillFile {
    /// Rows written.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// What its batches took in memory.
    pub fn memory_bytes(&self) -> u64 {
        self.memory_bytes
    }

    /// Its size on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.disk_bytes
    }

    /// Time spent creating and writing it.
    pub fn nanos(&self) -> u64 {
        self.nanos
    }

    /// The batches, in the order written.
    pub fn read(&self) -> Result<impl Iterator<Item = Result<RecordBatch>> + Send + 'static> {
        let folder = folder_of(&self.file);
        let handle = self.file.reopen().map_err(|e| spill_error(&folder, &e))?;
        let reader = StreamReader::try_new(BufReader::with_capacity(64 << 10, handle), None).map_err(|e| spill_error(&folder, &e))?;
        Ok(reader.map(move |b| b.map_err(|e| spill_error(&folder, &e))))
    }
}

/// One output partition of a breaker that spills (an exchange's, a query stage's): the
/// batches written to spill files, then those still in memory. Cloned for many readers, its
/// files shared.
#[derive(Clone, Default)]
pub struct SpillablePartition {
    pub files: Vec<Arc<SpillFile>>,
    pub batches: Vec<RecordBatch>,
    /// When non-zero, batches in memory that are small (on average under an eighth of this)
    /// are read back merged into batches of up to this many rows.
    pub merge_rows: usize,
}

impl SpillablePartition {
    /// A partition held in memory.
    pub fn in_memory(batches: Vec<RecordBatch>) -> SpillablePartition {
        SpillablePartition { files: vec![], batches, merge_rows: 0 }
    }

    /// Rows, spilled and in memory.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.rows() as u64).sum::<u64>() + self.batches.iter().map(|b| b.num_rows() as u64).sum::<u64>()
    }

    /// Bytes the batches in memory take.
    pub fn memory_bytes(&self) -> u64 {
        self.batches.iter().map(batch_bytes).sum()
    }

    /// Bytes all the rows take in memory, spilled ones included (the partition's size, as
    /// adaptive execution weighs it).
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.memory_bytes()).sum::<u64>() + self.memory_bytes()
    }

    /// Every batch, spilled ones first, read as they are pulled.
    pub fn into_stream(self) -> Box<dyn Iterator<Item = Result<RecordBatch>> + Send> {
        let spilled = self.files.into_iter().flat_map(|f| match f.read() {
            // The file lives while its reader does.
            Ok(r) => Box::new(r.map(move |b| {
                let _ = &f;
                b
            })) as Box<dyn Iterator<Item = Result<RecordBatch>> + Send>,
            Err(e) => Box::new(std::iter::once(Err(e))),
        });
        Box::new(spilled.chain(merged_slivers(self.batches, self.merge_rows)))
    }

    /// Every batch, read into memory.
    pub fn read_all(self) -> Result<Vec<RecordBatch>> {
        self.into_stream().collect()
    }
}

/// `batches`, merged into batches of up to `merge_rows` rows when they are small (on average
/// under an eighth of it), one merged batch as it is pulled: the slivers of a run are freed as
/// it is read, so merging never holds a partition twice. Larger ones go as they are: their
/// per-batch work is small beside their rows', and a sort or an aggregate reading them would
/// copy them again.
fn merged_slivers(batches: Vec<RecordBatch>, merge_rows: usize) -> Box<dyn Iterator<Item = Result<RecordBatch>> + Send> {
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    if merge_rows == 0 || batches.len() <= 1 || rows / batches.len() >= merge_rows / 8 {
        return Box::new(batches.into_iter().map(Ok));
    }
    let mut rest = batches.into_iter().peekable();
    Box::new(std::iter::from_fn(move || {
        let first = rest.next()?;
        let schema = first.schema();
        let mut run_rows = first.num_rows();
        let mut run = vec![first];
        while let Some(b) = rest.next_if(|b| run_rows + b.num_rows() <= merge_rows) {
            run_rows += b.num_rows();
            run.push(b);
        }
        if run.len() == 1 {
            return run.pop().map(Ok);
        }
        // One pass, one allocation per column (arrow's `BatchCoalescer` copies string columns
        // batch by batch).
        Some(arrow::compute::concat_batches(&schema, &run).map_err(Into::into))
    }))
}

/// Hash partitions a spilling operator (a final aggregate's groups, a shuffled hash join's
/// sides) writes at each level.
pub const SPILL_PARTITIONS: usize = 16;
/// Levels of partitions: a partition that still does not fit is partitioned again, by another
/// hash, up to this depth.
pub const SPILL_LEVELS: u32 = 4;

/// The rows by the spill partition of their `keys` at `level`: their row encoding hashed with a
/// seed of the level's own (so a partition partitioned again spreads), -0.0 and NaN keys
/// normalized as groups and join keys equate them.
pub fn hash_partitions(keys: &[ArrayRef], level: u32) -> Result<Vec<Vec<u32>>> {
    let rows = normalized_key_rows(&mut None, keys)?;
    let seed = 0x6b69_6c6e_i32.wrapping_add(level as i32 * 0x3c6e_f372);
    let mut parts = vec![vec![]; SPILL_PARTITIONS];
    for (i, row) in rows.iter().enumerate() {
        let h = murmur3::hash_bytes(row.as_ref(), seed) as u32;
        parts[(h >> 28) as usize % SPILL_PARTITIONS].push(i as u32);
    }
    Ok(parts)
}

/// The spill files a spilling operator writes its rows to by partition (by a hash of their
/// keys, [`hash_partitions`], or all to one), each made when its first rows come.
pub struct PartitionFiles {
    folder: PathBuf,
    budget: Arc<SpillBudget>,
    writers: Vec<Option<SpillWriter>>,
}

impl PartitionFiles {
    /// No file yet, in `folder`, their bytes taken from `budget`.
    pub fn new(folder: PathBuf, budget: &Arc<SpillBudget>) -> PartitionFiles {
        PartitionFiles { folder, budget: budget.clone(), writers: vec![] }
    }

    /// The folder the files go to.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Whether any rows were written.
    pub fn written(&self) -> bool {
        self.writers.iter().any(Option::is_some)
    }

    /// Appends `batch` to partition `p`'s file.
    pub fn write_to(&mut self, p: usize, batch: &RecordBatch) -> Result<()> {
        if self.writers.len() <= p {
            self.writers.resize_with(p + 1, || None);
        }
        let writer = match &mut self.writers[p] {
            Some(w) => w,
            slot => slot.insert(SpillWriter::new(&self.folder, &batch.schema(), &self.budget)?),
        };
        writer.write(batch)
    }

    /// Appends each row of `batch` to the file of its `keys`' partition at `level`.
    pub fn write_hashed(&mut self, batch: &RecordBatch, keys: &[ArrayRef], level: u32) -> Result<()> {
        for (p, rows) in hash_partitions(keys, level)?.into_iter().enumerate().filter(|(_, r)| !r.is_empty()) {
            let part = if rows.len() == batch.num_rows() { batch.clone() } else { take_record_batch(batch, &UInt32Array::from(rows))? };
            self.write_to(p, &part)?;
        }
        Ok(())
    }

    /// The files, finished, by partition (`None` where nothing was written).
    pub fn finish(self) -> Result<Vec<Option<SpillFile>>> {
        self.writers.into_iter().map(|w| w.map(SpillWriter::finish).transpose()).collect()
    }
}

/// Key columns in the row format, floats normalized ([`normalized_floats`]): rows of equal
/// keys are equal bytes, ordered as Spark orders the keys. `converter` is made on first use
/// and kept for the next batches of the same keys.
pub fn normalized_key_rows(converter: &mut Option<RowConverter>, keys: &[ArrayRef]) -> Result<Rows> {
    let columns: Vec<ArrayRef> = keys.iter().map(normalized_floats).collect();
    let converter = match converter {
        Some(c) => c,
        None => converter.insert(RowConverter::new(columns.iter().map(|c| SortField::new(c.data_type().clone())).collect())?),
    };
    Ok(converter.convert_columns(&columns)?)
}

/// A float key column with -0.0 as 0.0 and every NaN one NaN (Spark's equality and order for
/// keys, which the row format then keeps); other columns as they are.
pub fn normalized_floats(c: &ArrayRef) -> ArrayRef {
    use arrow::compute::kernels::arity::unary;
    if let Some(a) = c.as_any().downcast_ref::<Float64Array>() {
        return Arc::new(unary::<_, _, Float64Type>(a, |v| if v.is_nan() { f64::NAN } else { v + 0.0 }));
    }
    if let Some(a) = c.as_any().downcast_ref::<Float32Array>() {
        return Arc::new(unary::<_, _, Float32Type>(a, |v| if v.is_nan() { f32::NAN } else { v + 0.0 }));
    }
    c.clone()
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

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    #[test]
    fn spill_files_read_back_in_each_compression_and_compressed_ones_are_smaller() {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false), Field::new("s", DataType::Utf8, false)]));
        let columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from_iter_values(0..50_000)), Arc::new(StringArray::from_iter_values((0..50_000).map(|i| format!("row {}", i % 100))))];
        let batch = RecordBatch::try_new(schema.clone(), columns).expect("a batch");
        let folder = tempfile::tempdir().expect("a folder");
        let mut sizes = vec![];
        for c in [SpillCompression::None, SpillCompression::Lz4, SpillCompression::Zstd] {
            let budget = Arc::new(SpillBudget::default());
            budget.set_compression(c);
            let mut w = SpillWriter::new(folder.path(), &schema, &budget).expect("a writer");
            w.write(&batch).expect("written");
            let f = w.finish().expect("finished");
            let back: Vec<RecordBatch> = f.read().expect("read").collect::<Result<_>>().expect("batches");
            assert_eq!(back, vec![batch.clone()], "{c:?}");
            sizes.push(f.disk_bytes());
        }
        assert!(sizes[1] * 2 < sizes[0] && sizes[2] * 2 < sizes[0], "{sizes:?}");
        assert_eq!(SpillCompression::parse(" ZSTD"), Some(SpillCompression::Zstd));
        assert_eq!(SpillCompression::parse("gzip"), None);
    }
}
