//! Exchange: splits one partition's rows into `n` output partitions, by Spark's Murmur3 hash
//! of the keys (`hashpartitioning`) or by sorted ranges (`rangepartitioning`).

use arrow::array::{Array, ArrayRef, ArrowPrimitiveType, AsArray, GenericByteArray, OffsetSizeTrait, PrimitiveArray, UInt32Array};
use arrow::array::NullBufferBuilder;
use arrow::buffer::OffsetBuffer;
use arrow::compute::take_record_batch;
use arrow::datatypes::ByteArrayType;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, SortField};
use strength_reduce::StrengthReducedU64;

use super::sort::sort_options;
use super::{concat, evaluate_all};
use crate::common::hash::spark_hash;
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr, SortOrder};

/// `pmod(hash, n)` by multiplication (a division per row would cost more than the hashing):
/// `lift`, a multiple of `n`, makes any hash positive first, so the remainder is unsigned.
#[inline]
fn pmod(hash: i32, n: StrengthReducedU64, lift: i64) -> u32 {
    ((hash as i64 + lift) as u64 % n) as u32
}

/// The most rows a partition's first chunk makes room for before its rows come (the batch
/// size can be set to anything).
const FIRST_CHUNK_ROWS_MAX: usize = 1 << 16;
/// The most rows a chunk makes room for at once when it grows (rows past it grow the buffers
/// as they come): room for a whole batch of a huge `kiln.batchSize` in each of 200 partitions
/// would ask for more memory than the rows need.
const CHUNK_ROOM_MAX: usize = 1 << 17;

/// A hash exchange's writer for one input partition, splitting rows into `n` partitions by
/// `pmod(murmur3(keys), n)`: equal keys, NULLs included, land in the same partition, exactly
/// as Spark's `hashpartitioning`. Each row is copied once, as it arrives, into its output
/// partition's chunk of column buffers (no batch concatenated, no gather of the whole). A
/// chunk is handed on as a batch when the next rows would take it past `batch_size` (it holds
/// more only when one input batch gives it more at once), so its buffers do not grow, and copy
/// themselves, past a batch.
pub struct HashPartitioner<'a> {
    keys: &'a [Expr],
    input: &'a [Attribute],
    n: usize,
    batch_size: usize,
    schema: Option<SchemaRef>,
    columns: Vec<Box<dyn ColumnParts>>,
    chunk_rows: Vec<usize>,
    /// Rows each partition's chunk has room for.
    chunk_room: Vec<usize>,
    out: Vec<Vec<RecordBatch>>,
    pids: Vec<u32>,
    /// `n` for a remainder by multiplication, and the multiple of `n` that lifts any hash
    /// above zero (the remainder is then unsigned: `pmod`).
    modulus: StrengthReducedU64,
    lift: i64,
    starts: Vec<usize>,
    next: Vec<usize>,
    order: Vec<u32>,
}

impl<'a> HashPartitioner<'a> {
    pub fn new(keys: &'a [Expr], input: &'a [Attribute], n: usize, batch_size: usize) -> Result<Self> {
        if n == 0 {
            return Err(KilnError::internal("hash partitioning into 0 partitions"));
        }
        Ok(HashPartitioner {
            keys,
            input,
            n,
            batch_size: batch_size.max(1),
            schema: None,
            columns: vec![],
            chunk_rows: vec![0; n],
            chunk_room: vec![0; n],
            out: vec![vec![]; n],
            pids: vec![],
            modulus: StrengthReducedU64::new(n as u64),
            lift: (n as u64 * (1u64 << 31).div_ceil(n as u64)) as i64,
            starts: vec![],
            next: vec![],
            order: vec![],
        })
    }

    /// Copies the batch's rows to their partitions.
    pub fn push(&mut self, batch: &RecordBatch) -> Result<()> {
        let rows = batch.num_rows();
        if rows == 0 {
            return Ok(());
        }
        if self.n == 1 {
            self.out[0].push(batch.clone());
            return Ok(());
        }
        self.begin(batch)?;
        let hashes = spark_hash(&evaluate_all(self.keys, batch, self.input)?, rows)?;
        // The batch's rows ordered by partition (a stable counting sort): each partition's
        // rows are then gathered in one run from a batch that stays in the caches, and its
        // chunk is written in order, not one row at a time across all partitions.
        // Partition ids and their counts in one pass, then each row's place.
        let (modulus, lift) = (self.modulus, self.lift);
        let (pids, starts) = (&mut self.pids, &mut self.starts);
        pids.clear();
        starts.clear();
        starts.resize(self.n + 1, 0);
        let counts = &mut starts[1..];
        pids.extend(hashes.iter().map(|h| {
            let p = pmod(*h, modulus, lift);
            counts[p as usize] += 1;
            p
        }));
        self.place(batch)
    }

    /// Copies the batch's rows to the partitions `pids` gives (one per row, each below `n`:
    /// a range partitioning's).
    pub fn push_to(&mut self, batch: &RecordBatch, pids: &[u32]) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if pids.len() != batch.num_rows() || pids.iter().any(|p| *p as usize >= self.n) {
            return Err(KilnError::internal("partition ids that do not fit the batch or the partitions"));
        }
        self.begin(batch)?;
        self.starts.clear();
        self.starts.resize(self.n + 1, 0);
        for p in pids {
            self.starts[*p as usize + 1] += 1;
        }
        self.pids.clear();
        self.pids.extend_from_slice(pids);
        self.place(batch)
    }

    /// The column chunks, made for the first batch.
    fn begin(&mut self, batch: &RecordBatch) -> Result<()> {
        match &self.schema {
            None => {
                self.columns = batch.columns().iter().map(|c| column_parts(c.data_type(), self.n)).collect();
                self.schema = Some(batch.schema());
            }
            Some(s) if s.fields().len() != batch.num_columns() => return Err(KilnError::internal("an exchange's input batches differ in columns")),
            Some(_) => {}
        }
        Ok(())
    }

    /// The batch's rows copied to the partitions in `pids`, whose counts `starts[1..]` holds.
    fn place(&mut self, batch: &RecordBatch) -> Result<()> {
        let rows = batch.num_rows();
        let (pids, starts, next, order) = (&mut self.pids, &mut self.starts, &mut self.next, &mut self.order);
        for p in 0..self.n {
            starts[p + 1] += starts[p];
        }
        next.clear();
        next.extend_from_slice(&starts[..self.n]);
        order.clear();
        order.resize(rows, 0);
        for (row, p) in pids.iter().enumerate() {
            let at = &mut next[*p as usize];
            order[*at] = row as u32;
            *at += 1;
        }
        // Room a chunk makes at once when it grows: a batch, up to CHUNK_ROOM_MAX rows.
        let batch_room = self.batch_size.min(CHUNK_ROOM_MAX);
        for p in 0..self.n {
            let more = self.starts[p + 1] - self.starts[p];
            if more == 0 {
                continue;
            }
            let rows = self.chunk_rows[p];
            if rows > 0 && rows + more > self.batch_size {
                let room = more.max(batch_room);
                self.flush(p)?;
                for (c, sample) in self.columns.iter_mut().zip(batch.columns()) {
                    c.reserve(p, room, Some(sample));
                }
                self.chunk_room[p] = room;
            } else if rows == 0 {
                // A first chunk starts at a quarter of a batch, not at its first rows: fewer
                // small buffers regrown and freed across 200 partitions, and the couple of
                // thousand rows a task gives each of them in a shuffle of a table of millions
                // fit without growing the chunk (a copy) and trimming it (another).
                let first = more.max((self.batch_size / 4).min(FIRST_CHUNK_ROWS_MAX));
                for c in &mut self.columns {
                    c.reserve(p, first, None);
                }
                self.chunk_room[p] = first;
            } else if rows + more > self.chunk_room[p] {
                // A chunk outgrowing its first room grows to a whole batch at once: one copy of
                // its rows, not one per doubling (a partition given most of a batch per input
                // task, as in a shuffle of lineitem, copied each row three times more). Past
                // CHUNK_ROOM_MAX it doubles.
                let room = (rows + more).max(batch_room).max(2 * rows);
                for (c, sample) in self.columns.iter_mut().zip(batch.columns()) {
                    c.reserve(p, room - rows, Some(sample));
                }
                self.chunk_room[p] = room;
            }
            self.chunk_rows[p] += more;
        }
        for (c, array) in self.columns.iter_mut().zip(batch.columns()) {
            c.scatter(array, &self.order, &self.starts)?;
        }
        Ok(())
    }

    /// `pmod(hash, n)`, the hash's partition.
    #[cfg(test)]
    fn pmod(&self, hash: i32) -> u32 {
        pmod(hash, self.modulus, self.lift)
    }

    /// Every output partition's batches.
    pub fn finish(mut self) -> Result<Vec<Vec<RecordBatch>>> {
        self.take()
    }

    /// Every output partition's batches so far, chunks begun included; the partitioner goes
    /// on empty (its rows spilled).
    pub fn take(&mut self) -> Result<Vec<Vec<RecordBatch>>> {
        for p in 0..self.n {
            if self.chunk_rows[p] > 0 {
                self.flush(p)?;
            }
        }
        Ok(std::mem::replace(&mut self.out, vec![vec![]; self.n]))
    }

    /// The number of output partitions.
    pub fn partitions(&self) -> usize {
        self.n
    }

    /// Hands on partition `p`'s chunk as a batch; the next starts empty.
    fn flush(&mut self, p: usize) -> Result<()> {
        let schema = self.schema.clone().ok_or_else(|| KilnError::internal("an exchange flushed before its first batch"))?;
        let columns = self.columns.iter_mut().map(|c| c.finish(p)).collect::<Result<Vec<_>>>()?;
        let options = arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(self.chunk_rows[p]));
        self.out[p].push(RecordBatch::try_new_with_options(schema, columns, &options)?);
        self.chunk_rows[p] = 0;
        Ok(())
    }
}

/// One column's chunk in every output partition of a [`HashPartitioner`].
trait ColumnParts: Send {
    /// Room for exactly `rows` more rows in partition `p`'s chunk; with a sample, also for
    /// their variable-length values, estimated from the sample's.
    fn reserve(&mut self, p: usize, rows: usize, sample: Option<&ArrayRef>);
    /// Appends rows `order[starts[p]..starts[p + 1]]` of `array` to partition `p`'s chunk.
    fn scatter(&mut self, array: &ArrayRef, order: &[u32], starts: &[usize]) -> Result<()>;
    /// Partition `p`'s chunk as an array; the chunk starts again empty.
    fn finish(&mut self, p: usize) -> Result<ArrayRef>;
}

/// A chunk's buffer as an array's: without the room it did not use when that is over a
/// quarter (a partition's last chunk, or one that doubled past its rows), which the array
/// would otherwise hold for as long as it lives.
fn trimmed<T>(mut v: Vec<T>) -> Vec<T> {
    if v.capacity() - v.len() > v.capacity() / 4 {
        v.shrink_to_fit();
    }
    v
}

/// Partition `p`'s run of `order`, for each partition given rows.
fn runs<'o>(order: &'o [u32], starts: &'o [usize]) -> impl Iterator<Item = (usize, &'o [u32])> + 'o {
    starts.windows(2).enumerate().filter(|(_, w)| w[1] > w[0]).map(|(p, w)| (p, &order[w[0]..w[1]]))
}

/// Appends the validity of `rows` to a partition's NULL bits. Inlined: it runs once per column
/// and partition of every batch (200 of them a batch in a shuffle), mostly for a column
/// without NULLs, where it only counts.
#[inline]
fn append_validity(bits: &mut NullBufferBuilder, nulls: Option<&arrow::buffer::NullBuffer>, rows: &[u32]) {
    match nulls.filter(|n| n.null_count() > 0) {
        Some(n) => append_valid_bits(bits, n, rows),
        None => bits.append_n_non_nulls(rows.len()),
    }
}

fn append_valid_bits(bits: &mut NullBufferBuilder, nulls: &arrow::buffer::NullBuffer, rows: &[u32]) {
    rows.iter().for_each(|r| bits.append(nulls.is_valid(*r as usize)));
}

fn column_parts(data_type: &DataType, n: usize) -> Box<dyn ColumnParts> {
    fn fixed<T: ArrowPrimitiveType>(data_type: &DataType, n: usize) -> Box<dyn ColumnParts> {
        Box::new(FixedParts::<T> { data_type: data_type.clone(), values: (0..n).map(|_| vec![]).collect(), nulls: (0..n).map(|_| NullBufferBuilder::new(0)).collect() })
    }
    fn bytes<T: ByteArrayType>(n: usize) -> Box<dyn ColumnParts> {
        Box::new(ByteParts::<T> {
            offsets: (0..n).map(|_| vec![T::Offset::default()]).collect(),
            values: (0..n).map(|_| vec![]).collect(),
            nulls: (0..n).map(|_| NullBufferBuilder::new(0)).collect(),
        })
    }
    match data_type {
        DataType::Int8 => fixed::<Int8Type>(data_type, n),
        DataType::Int16 => fixed::<Int16Type>(data_type, n),
        DataType::Int32 => fixed::<Int32Type>(data_type, n),
        DataType::Int64 => fixed::<Int64Type>(data_type, n),
        DataType::Float32 => fixed::<Float32Type>(data_type, n),
        DataType::Float64 => fixed::<Float64Type>(data_type, n),
        DataType::Date32 => fixed::<Date32Type>(data_type, n),
        DataType::Timestamp(TimeUnit::Microsecond, _) => fixed::<TimestampMicrosecondType>(data_type, n),
        DataType::Decimal128(..) => fixed::<Decimal128Type>(data_type, n),
        DataType::Boolean => Box::new(BoolParts { values: (0..n).map(|_| arrow::array::BooleanBufferBuilder::new(0)).collect(), nulls: (0..n).map(|_| NullBufferBuilder::new(0)).collect() }),
        DataType::Utf8 => bytes::<Utf8Type>(n),
        DataType::Binary => bytes::<BinaryType>(n),
        // Other types (nested, views): rows remembered, gathered by arrow at a flush.
        _ => Box::new(GatheredParts { arrays: vec![], rows: vec![vec![]; n] }),
    }
}

struct FixedParts<T: ArrowPrimitiveType> {
    data_type: DataType,
    values: Vec<Vec<T::Native>>,
    nulls: Vec<NullBufferBuilder>,
}

impl<T: ArrowPrimitiveType> ColumnParts for FixedParts<T> {
    fn reserve(&mut self, p: usize, rows: usize, _: Option<&ArrayRef>) {
        self.values[p].reserve_exact(rows);
    }

    fn scatter(&mut self, array: &ArrayRef, order: &[u32], starts: &[usize]) -> Result<()> {
        let a = array.as_primitive_opt::<T>().ok_or_else(|| KilnError::internal(format!("an exchange's {} column holds {}", self.data_type, array.data_type())))?;
        // A slice, not the buffer: its address and length stay in registers while the chunk is
        // written (the compiler cannot tell the two apart otherwise, and reloads them per row).
        let values: &[T::Native] = a.values();
        for (p, rows) in runs(order, starts) {
            self.values[p].extend(rows.iter().map(|r| values[*r as usize]));
            append_validity(&mut self.nulls[p], a.nulls(), rows);
        }
        Ok(())
    }

    fn finish(&mut self, p: usize) -> Result<ArrayRef> {
        let values = trimmed(std::mem::take(&mut self.values[p]));
        let array = PrimitiveArray::<T>::try_new(values.into(), self.nulls[p].finish())?.with_data_type(self.data_type.clone());
        Ok(std::sync::Arc::new(array))
    }
}

/// Booleans (a partial sum's `isEmpty`): bits appended per partition.
struct BoolParts {
    values: Vec<arrow::array::BooleanBufferBuilder>,
    nulls: Vec<NullBufferBuilder>,
}

impl ColumnParts for BoolParts {
    fn reserve(&mut self, p: usize, rows: usize, _: Option<&ArrayRef>) {
        self.values[p].reserve(rows);
    }

    fn scatter(&mut self, array: &ArrayRef, order: &[u32], starts: &[usize]) -> Result<()> {
        let a = array.as_boolean_opt().ok_or_else(|| KilnError::internal(format!("an exchange's boolean column holds {}", array.data_type())))?;
        let bits = a.values();
        for (p, rows) in runs(order, starts) {
            let out = &mut self.values[p];
            rows.iter().for_each(|r| out.append(bits.value(*r as usize)));
            append_validity(&mut self.nulls[p], a.nulls(), rows);
        }
        Ok(())
    }

    fn finish(&mut self, p: usize) -> Result<ArrayRef> {
        let values = std::mem::replace(&mut self.values[p], arrow::array::BooleanBufferBuilder::new(0)).finish();
        Ok(std::sync::Arc::new(arrow::array::BooleanArray::new(values, self.nulls[p].finish())))
    }
}

struct ByteParts<T: ByteArrayType> {
    offsets: Vec<Vec<T::Offset>>,
    values: Vec<Vec<u8>>,
    nulls: Vec<NullBufferBuilder>,
}

impl<T: ByteArrayType> ColumnParts for ByteParts<T> {
    fn reserve(&mut self, p: usize, rows: usize, sample: Option<&ArrayRef>) {
        self.offsets[p].reserve_exact(rows);
        // Bytes for the rows at the sample's mean length and an eighth more, so that a chunk
        // grown to a batch fills without its bytes regrowing (a copy each time).
        if let Some(a) = sample.and_then(|s| s.as_bytes_opt::<T>()).filter(|a| !a.is_empty()) {
            let offsets = a.value_offsets();
            let bytes = ((offsets[a.len()].as_usize() - offsets[0].as_usize()) / a.len()).saturating_mul(rows);
            // A hint: refused (a huge kiln.batchSize), the bytes grow as they come.
            let _ = self.values[p].try_reserve_exact(bytes.saturating_add(bytes / 8));
        }
    }

    fn scatter(&mut self, array: &ArrayRef, order: &[u32], starts: &[usize]) -> Result<()> {
        let a = array.as_bytes_opt::<T>().ok_or_else(|| KilnError::internal(format!("an exchange's {} column holds {}", T::DATA_TYPE, array.data_type())))?;
        let (offsets, bytes) = (a.value_offsets(), a.value_data());
        for (p, rows) in runs(order, starts) {
            let (data, ends) = (&mut self.values[p], &mut self.offsets[p]);
            ends.reserve(rows.len());
            for r in rows {
                let r = *r as usize;
                data.extend_from_slice(&bytes[offsets[r].as_usize()..offsets[r + 1].as_usize()]);
                let end = T::Offset::from_usize(data.len()).ok_or_else(|| KilnError::unsupported(format!("a shuffle partition of {} values past {} bytes", T::DATA_TYPE, T::Offset::MAX_OFFSET)))?;
                ends.push(end);
            }
            append_validity(&mut self.nulls[p], a.nulls(), rows);
        }
        Ok(())
    }

    fn finish(&mut self, p: usize) -> Result<ArrayRef> {
        let mut next = Vec::with_capacity(1);
        next.push(T::Offset::default());
        let offsets = OffsetBuffer::new(trimmed(std::mem::replace(&mut self.offsets[p], next)).into());
        let values = trimmed(std::mem::take(&mut self.values[p]));
        // Whole values copied from arrays of this type: the bytes are as valid as theirs.
        let array = unsafe { GenericByteArray::<T>::new_unchecked(offsets, values.into(), self.nulls[p].finish()) };
        Ok(std::sync::Arc::new(array))
    }
}

struct GatheredParts {
    arrays: Vec<ArrayRef>,
    rows: Vec<Vec<(usize, usize)>>,
}

impl ColumnParts for GatheredParts {
    fn reserve(&mut self, p: usize, rows: usize, _: Option<&ArrayRef>) {
        self.rows[p].reserve_exact(rows);
    }

    fn scatter(&mut self, array: &ArrayRef, order: &[u32], starts: &[usize]) -> Result<()> {
        let a = self.arrays.len();
        self.arrays.push(array.clone());
        for (p, rows) in runs(order, starts) {
            self.rows[p].extend(rows.iter().map(|r| (a, *r as usize)));
        }
        Ok(())
    }

    fn finish(&mut self, p: usize) -> Result<ArrayRef> {
        let rows = std::mem::take(&mut self.rows[p]);
        let arrays: Vec<&dyn Array> = self.arrays.iter().map(|a| a.as_ref()).collect();
        let array = arrow::compute::interleave(&arrays, &rows)?;
        // Arrays no partition still reads are let go once every partition has been flushed.
        if self.rows.iter().all(Vec::is_empty) {
            self.arrays.clear();
        }
        Ok(array)
    }
}

/// Splits rows into `n` sorted ranges of `order`: partition i holds rows after boundary i-1 and
/// up to boundary i, so sorting each and concatenating gives a total order.
///
/// Boundaries come from the rows given, so pass every input partition's batches in one call
/// (Spark samples all partitions before splitting any).
pub fn range_partition(order: &[SortOrder], input: &[Attribute], batches: Vec<RecordBatch>, n: usize) -> Result<Vec<Vec<RecordBatch>>> {
    if n == 0 {
        return Err(KilnError::internal("range partitioning into 0 partitions"));
    }
    let batch = concat(input, &batches)?;
    drop(batches);
    if n == 1 || order.is_empty() || batch.num_rows() == 0 {
        let mut out = vec![vec![]; n];
        out[0].push(batch);
        return Ok(out);
    }
    let columns = order.iter().map(|o| super::sort::sort_key(&o.expr, &batch, input)).collect::<Result<Vec<_>>>()?;
    let fields = order.iter().zip(&columns).map(|(o, c)| SortField::new_with_options(c.data_type().clone(), sort_options(o))).collect();
    let rows = RowConverter::new(fields)?.convert_columns(&columns)?;
    // A deterministic sample of up to 100 rows per partition, as Spark's sampleSizeHint.
    let stride = (rows.num_rows() / (100 * n)).max(1);
    let mut sample: Vec<_> = (0..rows.num_rows()).step_by(stride).map(|i| rows.row(i)).collect();
    sample.sort_unstable();
    let bounds: Vec<_> = (1..n).map(|i| sample[(i * sample.len() / n).min(sample.len() - 1)]).collect();
    let mut parts: Vec<Vec<u32>> = vec![vec![]; n];
    for i in 0..rows.num_rows() {
        let r = rows.row(i);
        parts[bounds.partition_point(|b| *b < r)].push(i as u32);
    }
    parts
        .into_iter()
        .map(|ix| if ix.is_empty() { Ok(vec![]) } else { Ok(vec![take_record_batch(&batch, &UInt32Array::from(ix))?]) })
        .collect()
}

/// The bounds of a range partitioning into `n`, taken from a sample of the rows as
/// [`range_partition`] takes them, for rows that do not fit in memory at once: the sample is
/// read in one pass over the rows, and each batch is then routed on its own.
pub struct RangeBounds<'a> {
    order: &'a [SortOrder],
    input: &'a [Attribute],
    converter: Option<RowConverter>,
    bounds: Vec<arrow::row::OwnedRow>,
}

impl<'a> RangeBounds<'a> {
    /// Bounds from every `stride`-th of `rows` rows (the stride [`range_partition`] uses).
    pub fn sample(order: &'a [SortOrder], input: &'a [Attribute], batches: impl Iterator<Item = Result<RecordBatch>>, rows: usize, n: usize) -> Result<RangeBounds<'a>> {
        let stride = (rows / (100 * n.max(1))).max(1);
        let (mut converter, mut sample, mut at) = (None, vec![], 0usize);
        for b in batches {
            let b = b?;
            let keys = sort_keys(order, input, &b)?;
            let converter = match &mut converter {
                Some(c) => c,
                None => converter.insert(RowConverter::new(order.iter().zip(&keys).map(|(o, c)| SortField::new_with_options(c.data_type().clone(), sort_options(o))).collect())?),
            };
            let encoded = converter.convert_columns(&keys)?;
            // Rows at global positions 0, stride, 2 * stride ...
            let first = (stride - at % stride) % stride;
            sample.extend((first..b.num_rows()).step_by(stride).map(|i| encoded.row(i).owned()));
            at += b.num_rows();
        }
        sample.sort_unstable();
        let bounds = if sample.is_empty() { vec![] } else { (1..n).map(|i| sample[(i * sample.len() / n).min(sample.len() - 1)].clone()).collect() };
        Ok(RangeBounds { order, input, converter, bounds })
    }

    /// Each row's partition.
    pub fn partition_ids(&self, batch: &RecordBatch) -> Result<Vec<u32>> {
        let Some(converter) = &self.converter else { return Ok(vec![0; batch.num_rows()]) };
        let rows = converter.convert_columns(&sort_keys(self.order, self.input, batch)?)?;
        Ok((0..rows.num_rows()).map(|i| {
            let r = rows.row(i);
            self.bounds.partition_point(|b| b.row() < r) as u32
        }).collect())
    }
}

fn sort_keys(order: &[SortOrder], input: &[Attribute], batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
    order.iter().map(|o| super::sort::sort_key(&o.expr, batch, input)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::hash::{fold_values, murmur3};
    use crate::exec::interpreted::test_util::*;
    use std::collections::HashMap;

    #[test]
    fn partition_ids_and_vectorized_hashes_are_sparks() {
        // spark.sql("SELECT hash(1L)") = -1712319331
        assert_eq!(murmur3::hash_long(1, 42), -1712319331);
        let keys: Vec<i64> = (0..1000).map(|i: i64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15u64 as i64) ^ (i << 7)).chain([i64::MIN, -1, 0, i64::MAX]).collect();
        let mut hashes = vec![42; keys.len()];
        fold_values(&keys, &mut hashes, murmur3::hash_long);
        assert!(keys.iter().zip(&hashes).all(|(k, h)| murmur3::hash_long(*k, 42) == *h));
        let k = attr("k", DataType::Int64);
        for n in [1, 2, 3, 200, 7919, 65539] {
            let p = HashPartitioner::new(&[], std::slice::from_ref(&k), n, 1).unwrap();
            for h in hashes.iter().copied().chain([i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX]) {
                assert_eq!(p.pmod(h) as i64, (h as i64).rem_euclid(n as i64), "pmod({h}, {n})");
            }
        }
    }

    #[test]
    fn hash_partitioner_keeps_equal_keys_together() {
        let (k, s) = (attr("k", DataType::Int64), attr("s", DataType::Utf8));
        let input = [k.clone(), s.clone()];
        let mk = |ks: &[Option<i64>], ss: &[Option<&str>]| batch(&input, vec![ints(ks), strs(ss)]);
        let b1 = mk(&[Some(1), None, Some(3), Some(1)], &[Some("a"), None, Some("c"), Some("a")]);
        let b2 = mk(&[Some(3), None, Some(1), Some(2)], &[Some("c"), None, Some("a"), Some("b")]);
        let keys = [k.expr(), s.expr()];
        // No batch size to speak of: one chunk per partition, its first room still bounded.
        let mut parts = HashPartitioner::new(&keys, &input, 4, usize::MAX).unwrap();
        for b in [b1, b2] {
            parts.push(&b).unwrap();
        }
        let parts = parts.finish().unwrap();
        assert_eq!(parts.len(), 4);
        let mut home: HashMap<Option<i64>, usize> = HashMap::new();
        let mut total = 0;
        for (p, bs) in parts.iter().enumerate() {
            for key in col_i64(bs, 0) {
                total += 1;
                assert_eq!(*home.entry(key).or_insert(p), p, "key {key:?} split across partitions");
            }
        }
        assert_eq!(total, 8);
    }

    #[test]
    fn hash_partitioner_copies_each_row_to_its_partition_in_chunks() {
        // Every type path: longs and decimals (fixed), strings (bytes), booleans (bits), string
        // views (gathered), NULLs in each; input batches of several sizes, chunks of at most 7 rows.
        let input = [
            attr("k", DataType::Int64),
            attr("s", DataType::Utf8),
            attr("d", DataType::Decimal128(20, 2)),
            attr("b", DataType::Boolean),
            attr("v", DataType::Utf8View),
        ];
        let make = |from: i64, n: i64| {
            let ks: Vec<Option<i64>> = (from..from + n).map(|i| (i % 5 != 0).then_some(i % 13)).collect();
            let ss: Vec<Option<String>> = (from..from + n).map(|i| (i % 7 != 0).then(|| "x".repeat((i % 4) as usize) + &i.to_string())).collect();
            let ds: Vec<Option<i128>> = (from..from + n).map(|i| (i % 3 != 0).then_some(i as i128 * 1_000_000_007)).collect();
            let bs: Vec<Option<bool>> = (from..from + n).map(|i| (i % 6 != 0).then_some(i % 2 == 0)).collect();
            let ss: Vec<Option<&str>> = ss.iter().map(|s| s.as_deref()).collect();
            let views = arrow::compute::cast(&strs(&ss), &DataType::Utf8View).unwrap();
            batch(&input, vec![ints(&ks), strs(&ss), decs(&ds, 20, 2), std::sync::Arc::new(arrow::array::BooleanArray::from(bs)), views])
        };
        let batches = vec![make(0, 40), make(40, 3), make(43, 0), make(43, 61)];
        let keys = [input[0].expr(), input[1].expr()];
        let n = 4;
        let mut parts = HashPartitioner::new(&keys, &input, n, 7).unwrap();
        for b in &batches {
            parts.push(b).unwrap();
        }
        let parts = parts.finish().unwrap();
        // Expected: each row in the partition of its own hash, in input order.
        let all = concat(&input, &batches).unwrap();
        let hashes = spark_hash(&evaluate_all(&keys, &all, &input).unwrap(), all.num_rows()).unwrap();
        let schema = all.schema();
        let pid = |r: usize| hashes[r].rem_euclid(n as i32) as usize;
        for (p, got) in parts.iter().enumerate() {
            // A chunk holds up to 7 rows, or more only when one input batch gave them at once.
            let mut at = 0;
            let most_at_once = batches
                .iter()
                .map(|b| {
                    at += b.num_rows();
                    (at - b.num_rows()..at).filter(|r| pid(*r) == p).count()
                })
                .max()
                .unwrap();
            assert!(got.iter().all(|b| b.num_rows() <= most_at_once.max(7) && b.num_rows() > 0), "partition {p}: a chunk past its size, or empty");
            let rows: Vec<u32> = (0..all.num_rows() as u32).filter(|r| pid(*r as usize) == p).collect();
            let expected = take_record_batch(&all, &UInt32Array::from(rows)).unwrap();
            assert_eq!(arrow::compute::concat_batches(&schema, got).unwrap(), expected, "partition {p}");
        }
        // One partition: the batches as they are.
        let mut one = HashPartitioner::new(&keys, &input, 1, 7).unwrap();
        one.push(&batches[0]).unwrap();
        assert_eq!(one.finish().unwrap(), vec![vec![batches[0].clone()]]);
    }

    #[test]
    fn small_batches_merged_before_the_writer_land_as_one_batch_would() {
        let k = attr("k", DataType::Int64);
        let keys = [k.expr()];
        let values: Vec<Option<i64>> = (0..5_000i64).map(|i| if i % 97 == 0 { None } else { Some((i * 7919) % 1_000) }).collect();
        let whole = batch(std::slice::from_ref(&k), vec![ints(&values)]);
        let mut at_once = HashPartitioner::new(&keys, std::slice::from_ref(&k), 7, 1024).unwrap();
        at_once.push(&whole).unwrap();
        // Slivers of 1 to 300 rows, as a selective filter leaves them, merged as the exchange
        // merges them on the way to its writer; the last run is merged when the input ends.
        let mut slivers = vec![];
        let (mut start, mut len) = (0, 1);
        while start < values.len() {
            let n = len.min(values.len() - start);
            slivers.push(Ok(whole.slice(start, n)));
            start += n;
            len = len * 3 % 301 + 1;
        }
        let mut in_slivers = HashPartitioner::new(&keys, std::slice::from_ref(&k), 7, 1024).unwrap();
        for b in crate::common::coalesce_small(slivers.into_iter(), 1024) {
            in_slivers.push(&b.unwrap()).unwrap();
        }
        let rows = |parts: Vec<Vec<RecordBatch>>| -> Vec<Vec<Option<i64>>> {
            parts.iter().map(|p| p.iter().flat_map(|b| b.column(0).as_primitive::<Int64Type>().iter().collect::<Vec<_>>()).collect()).collect()
        };
        let (a, b) = (rows(at_once.finish().unwrap()), rows(in_slivers.finish().unwrap()));
        assert_eq!(a.iter().map(|p| p.len()).sum::<usize>(), values.len());
        assert_eq!(a, b, "same rows, in the same order, in each partition");
    }

    #[test]
    fn a_chunk_under_the_largest_batch_size_grows_past_its_room_and_keeps_every_row() {
        // kiln.batchSize at its largest: chunks start at FIRST_CHUNK_ROWS_MAX rows, grow to
        // CHUNK_ROOM_MAX and then double, never flushed.
        let k = attr("k", DataType::Int64);
        let batches: Vec<RecordBatch> = (0..6i64)
            .map(|b| batch(std::slice::from_ref(&k), vec![ints(&(b * 60_000..(b + 1) * 60_000).map(Some).collect::<Vec<_>>())]))
            .collect();
        let keys = [k.expr()];
        let mut parts = HashPartitioner::new(&keys, std::slice::from_ref(&k), 2, crate::config::BATCH_SIZE_MAX).unwrap();
        for b in &batches {
            parts.push(b).unwrap();
        }
        assert!(parts.chunk_room.iter().all(|r| *r >= CHUNK_ROOM_MAX && *r < 4 * CHUNK_ROOM_MAX), "{:?}", parts.chunk_room);
        let got = parts.finish().unwrap();
        assert!(got.iter().all(|p| p.len() == 1), "a chunk flushed before the end");
        let mut keys_out: Vec<i64> = got.iter().flatten().flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec()).collect();
        keys_out.sort_unstable();
        assert_eq!(keys_out, (0..360_000).collect::<Vec<_>>());
    }

    #[test]
    fn range_partition_gives_a_total_order() {
        let k = attr("k", DataType::Int64);
        let vals: Vec<Option<i64>> = (0..50).map(|i| if i % 7 == 0 { None } else { Some((i * 37) % 23) }).collect();
        let b = batch(std::slice::from_ref(&k), vec![ints(&vals)]);
        let order = [SortOrder { expr: k.expr(), ascending: false, nulls_first: true }];
        let parts = range_partition(&order, std::slice::from_ref(&k), vec![b], 3).unwrap();
        let mut all = vec![];
        for p in parts {
            let sorted = crate::exec::interpreted::sort(&order, std::slice::from_ref(&k), p, None).unwrap();
            all.extend(col_i64(&sorted, 0));
        }
        let mut expected = vals.clone();
        expected.sort_by(|a, b| match (a, b) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, _) => std::cmp::Ordering::Less,
            (_, None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => y.cmp(x),
        });
        assert_eq!(all, expected);
    }
}
