//! A host's own tables: a [`TableProvider`] a session scans as it scans its files (DataFusion's
//! `TableProvider`, Spark's `PrunedFilteredScan` with statistics). kiln asks each scan for the
//! columns it reads and hands it the query's simple filters; the provider may use them to skip
//! rows, and kiln checks every row again above the scan, so a provider that ignores them is
//! still right.

use std::fmt;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::pushed_filter::PushedFilter;
use crate::error::{KilnError, Result};

/// The batches of one partition of a scan.
pub type ProvidedBatches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

/// A table whose rows a host produces on demand, registered with
/// [`Session::register_table`](crate::Session::register_table).
///
/// ```
/// use std::sync::Arc;
/// use kiln::arrow::array::{Int64Array, RecordBatch};
/// use kiln::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
/// use kiln::datasource::provider::{ProvidedBatches, TableProvider};
/// use kiln::datasource::pushed_filter::PushedFilter;
///
/// /// The numbers 0..n, in `partitions` slices.
/// struct Numbers { n: i64, partitions: usize }
///
/// impl TableProvider for Numbers {
///     fn schema(&self) -> SchemaRef {
///         Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]))
///     }
///     fn partitions(&self) -> usize {
///         self.partitions
///     }
///     fn scan(&self, projection: &[usize], _filters: &[PushedFilter], partition: usize) -> kiln::Result<ProvidedBatches> {
///         let p = self.partitions as i64;
///         let (from, to) = (self.n * partition as i64 / p, self.n * (partition as i64 + 1) / p);
///         let batch = RecordBatch::try_new(self.schema(), vec![Arc::new(Int64Array::from_iter_values(from..to))])?;
///         Ok(Box::new(std::iter::once(Ok(batch.project(projection)?))))
///     }
/// }
///
/// let session = kiln::Session::new();
/// session.register_table("numbers", Arc::new(Numbers { n: 100, partitions: 3 })).unwrap();
/// let df = session.sql("SELECT count(*), sum(n) FROM numbers WHERE n >= 50").unwrap();
/// assert_eq!(kiln::format::result_csv(&df.schema(), &df.collect().unwrap()).lines().nth(1), Some("50,3725"));
/// ```
pub trait TableProvider: Send + Sync {
    /// The table's columns, as the batches of [`TableProvider::scan`] have them (converted to
    /// Spark's types as `register_batches` converts; a type Spark lacks is refused when the
    /// table is registered).
    fn schema(&self) -> SchemaRef;
    /// How many partitions a scan reads, each by a call of [`TableProvider::scan`] (in
    /// parallel). One unless the provider says otherwise.
    fn partitions(&self) -> usize {
        1
    }
    /// The rows of partition `partition` (0-based, below [`TableProvider::partitions`]), each
    /// batch holding only the columns at `projection` (indices into the schema, in that order;
    /// empty when the query reads no column, as `count(*)`: the batches then carry only their
    /// row counts). `filters` are conditions every row of the result passes: the provider may
    /// drop the rows that fail one, or ignore them.
    fn scan(&self, projection: &[usize], filters: &[PushedFilter], partition: usize) -> Result<ProvidedBatches>;
    /// What the provider knows of its size without scanning, for the optimizer (join
    /// strategies, broadcast). Unknown by default.
    fn statistics(&self) -> ProviderStatistics {
        ProviderStatistics::default()
    }
}

/// A provided table's size, as far as it is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProviderStatistics {
    /// The number of rows.
    pub rows: Option<u64>,
    /// The bytes of its rows in memory (Arrow buffers).
    pub bytes: Option<u64>,
}

/// A registered provider and the schema kiln reads it with.
#[derive(Clone)]
pub struct ProvidedTable {
    provider: Arc<dyn TableProvider>,
    /// The provider's schema in Spark's types.
    schema: SchemaRef,
}

impl fmt::Debug for ProvidedTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProvidedTable({:?})", self.schema.fields().iter().map(|c| c.name()).collect::<Vec<_>>())
    }
}

impl ProvidedTable {
    /// A provider's table, its schema converted to Spark's types; `UNSUPPORTED_ARROWTYPE`
    /// naming a column Spark has no type for.
    pub fn new(name: &str, provider: Arc<dyn TableProvider>) -> Result<ProvidedTable> {
        let schema = crate::types::host_arrow::spark_schema(&provider.schema(), &format!("register_table(`{name}`)"))?;
        Ok(ProvidedTable { provider, schema })
    }
    /// The schema kiln reads the table with.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
    /// Partitions a scan reads.
    pub fn partitions(&self) -> usize {
        self.provider.partitions().max(1)
    }
    /// The provider's statistics.
    pub fn statistics(&self) -> ProviderStatistics {
        self.provider.statistics()
    }
    /// Partition `partition` of a scan of the columns `projection`, each batch checked
    /// against them and converted to Spark's types.
    pub fn scan(&self, projection: &[usize], filters: &[PushedFilter], partition: usize) -> Result<impl Iterator<Item = Result<RecordBatch>>> {
        let projected = Arc::new(self.schema.project(projection)?);
        let mut batches = user_code(|| self.provider.scan(projection, filters, partition))?;
        Ok(std::iter::from_fn(move || user_code(|| Ok(batches.next())).transpose().map(|b| b.and_then(|b| b))).map(move |b| {
            let b = b?;
            if b.num_columns() != projected.fields().len() {
                return Err(KilnError::exec(format!(
                    "a table provider's scan returned {} columns where {} were asked for ({:?})",
                    b.num_columns(),
                    projected.fields().len(),
                    projected.fields().iter().map(|f| f.name()).collect::<Vec<_>>()
                )));
            }
            crate::types::host_arrow::to_spark_batch(&b, &projected)
        }))
    }
}

/// A call of the provider's code: a panic in it is this scan's error, not printed.
fn user_code<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    crate::udf::catch_user_panic(f).map_err(|p| KilnError::exec(format!("a table provider panicked: {}", crate::udf::panic_message(&p))))?
}

/// The body of a table function: its arguments' values in, a table out.
pub type TableFunctionBody = Arc<dyn Fn(&[crate::types::ScalarValue]) -> Result<Arc<dyn TableProvider>> + Send + Sync>;

/// A user-defined table function (UDTF), called in FROM as `SELECT * FROM name(1, 'x')` and
/// registered with [`Session::register_udtf`](crate::Session::register_udtf): given the
/// values of its (constant) arguments when the query is analyzed, it returns the table the
/// query reads (DataFusion's `TableFunctionImpl`), scanned as any [`TableProvider`].
///
/// ```
/// use std::sync::Arc;
/// use kiln::arrow::array::{Int64Array, RecordBatch, StringArray};
/// use kiln::datasource::provider::{MemoryProvider, TableFunction};
/// use kiln::types::ScalarValue;
///
/// // repeat_word(word, n): n rows of (i, word).
/// let udtf = TableFunction::new("repeat_word", |args: &[ScalarValue]| {
///     let (ScalarValue::Utf8(word), ScalarValue::Int32(n)) = (&args[0], &args[1]) else {
///         return Err(kiln::KilnError::analysis("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE", "repeat_word(string, int)"));
///     };
///     let batch = RecordBatch::try_from_iter([
///         ("i", Arc::new(Int64Array::from_iter_values(0..*n as i64)) as _),
///         ("word", Arc::new(StringArray::from(vec![word.as_str(); *n as usize])) as _),
///     ])?;
///     Ok(Arc::new(MemoryProvider::new(vec![batch])?) as _)
/// });
/// let session = kiln::Session::new();
/// session.register_udtf(udtf).unwrap();
/// assert_eq!(session.sql("SELECT * FROM repeat_word('hi', 3) WHERE i > 0").unwrap().count().unwrap(), 2);
/// ```
pub struct TableFunction {
    name: String,
    body: TableFunctionBody,
}

impl TableFunction {
    /// A table function called `name` (case-insensitive).
    pub fn new(name: impl Into<String>, body: impl Fn(&[crate::types::ScalarValue]) -> Result<Arc<dyn TableProvider>> + Send + Sync + 'static) -> TableFunction {
        TableFunction { name: name.into(), body: Arc::new(body) }
    }
    /// The function's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The table of a call with these argument values.
    pub fn call(&self, args: &[crate::types::ScalarValue]) -> Result<ProvidedTable> {
        let provider = user_code(|| (self.body)(args))?;
        ProvidedTable::new(&self.name, provider)
    }
}

impl fmt::Debug for TableFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TableFunction({})", self.name)
    }
}

/// A [`TableProvider`] over batches a host holds: one partition per batch.
#[derive(Debug, Clone)]
pub struct MemoryProvider {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
}

impl MemoryProvider {
    /// A provider of these batches (at least one, all of one schema).
    pub fn new(batches: Vec<RecordBatch>) -> Result<MemoryProvider> {
        let Some(first) = batches.first() else { return Err(KilnError::Config("MemoryProvider: no batches given, so no schema".into())) };
        let schema = first.schema();
        if let Some(b) = batches.iter().find(|b| b.schema().fields() != schema.fields()) {
            return Err(KilnError::Config(format!("MemoryProvider: batches have different schemas: {:?} and {:?}", schema.fields(), b.schema().fields())));
        }
        Ok(MemoryProvider { schema, batches })
    }
}

impl TableProvider for MemoryProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
    fn partitions(&self) -> usize {
        self.batches.len()
    }
    fn scan(&self, projection: &[usize], _filters: &[PushedFilter], partition: usize) -> Result<ProvidedBatches> {
        let batch = self.batches.get(partition).map(|b| b.project(projection)).transpose()?;
        Ok(Box::new(batch.into_iter().map(Ok)))
    }
    fn statistics(&self) -> ProviderStatistics {
        ProviderStatistics {
            rows: Some(self.batches.iter().map(|b| b.num_rows() as u64).sum()),
            bytes: Some(self.batches.iter().map(|b| b.get_array_memory_size() as u64).sum()),
        }
    }
}
