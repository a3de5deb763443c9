//! The session: settings, the catalog of tables, and the entry point for SQL.

use std::path::Path;
use std::sync::{Arc, RwLock};

use arrow::array::{ArrayRef, StringArray};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use crate::catalog::{Catalog, Table, TableKind, TableSource};
use crate::datasource::write::{write_table, SaveMode};
use crate::config::Config;
use crate::dataframe::{DataFrame, Plans};
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr};
use crate::physical::PhysicalPlan;
use crate::plan::LogicalPlan;
use crate::datasource::text::TextFormat;
use crate::sql::{Statement, TableStorage, ViewSource};
use crate::catalog::cached::StorageLevel;

mod cache;

/// A kiln session: its own settings and tables. Cheap to clone; clones share state.
///
/// ```
/// use kiln::Session;
/// let session = Session::builder().config("spark.sql.shuffle.partitions", "4").build().unwrap();
/// session.sql("CREATE TABLE t (a INT, b STRING)").unwrap();
/// session.sql("INSERT INTO t VALUES (1, 'x'), (2, NULL)").unwrap();
/// let rows = session.sql("SELECT count(*) AS n FROM t WHERE b IS NULL").unwrap().collect().unwrap();
/// assert_eq!(rows[0].num_rows(), 1);
/// ```
#[derive(Clone, Default)]
pub struct Session {
    state: Arc<SessionState>,
}

#[derive(Default)]
struct SessionState {
    config: RwLock<Config>,
    /// The settings as the host set them: static keys, and the ceilings SQL may not raise.
    host: RwLock<Config>,
    /// The session ran its first statement: static keys are fixed from here on.
    started: std::sync::atomic::AtomicBool,
    catalog: RwLock<Catalog>,
    /// The session's compiled stages, reused by every query it runs.
    stages: crate::codegen::StageCache,
    /// Rules injected by `SessionBuilder::with_extensions`.
    extensions: crate::extensions::Extensions,
    /// The controls of the queries running now, for [`Session::interrupt_all`].
    running: std::sync::Mutex<Vec<std::sync::Weak<crate::exec::control::QueryControl>>>,
    /// Counts setting changes, so a DataFrame planned before one is planned again to run.
    conf_version: std::sync::atomic::AtomicU64,
    /// `CACHE TABLE` and `DataFrame::cache`: rows in memory later queries read.
    cache: cache::CacheManager,
}

/// Builds a session with settings: `Session::builder().config("spark.sql.shuffle.partitions", "8").build()`.
#[derive(Default)]
pub struct SessionBuilder {
    settings: Vec<(String, String)>,
    extensions: crate::extensions::Extensions,
}

impl SessionBuilder {
    /// Sets one setting by its Spark key.
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((key.into(), value.into()));
        self
    }
    /// Injects rules and functions into every query the session plans, as Spark's
    /// `SparkSessionExtensions` (see [`crate::extensions`]).
    pub fn with_extensions(mut self, inject: impl FnOnce(&mut crate::extensions::Extensions)) -> Self {
        inject(&mut self.extensions);
        self
    }
    /// The session; fails on an unknown key or a bad value.
    pub fn build(self) -> Result<Session> {
        let session = Session { state: Arc::new(SessionState { extensions: self.extensions, ..Default::default() }) };
        for udf in &session.state.extensions.functions {
            session.state.catalog.write().map_err(|_| poisoned())?.register_udf(udf.clone());
        }
        for (k, v) in self.settings {
            session.set_conf(&k, &v)?;
        }
        Ok(session)
    }
}

fn poisoned() -> KilnError {
    KilnError::internal("session state lock poisoned by a panic in another thread")
}

impl Session {
    /// A session with Spark's default settings and no tables.
    pub fn new() -> Session {
        Session::default()
    }
    /// A builder for a session with settings.
    pub fn builder() -> SessionBuilder {
        SessionBuilder::default()
    }
    /// A copy of the current settings.
    pub fn config(&self) -> Result<Config> {
        Ok(self.state.config.read().map_err(|_| poisoned())?.clone())
    }
    /// The value `SET key` shows: the setting's, or `<undefined>` (as Spark prints it) for a key
    /// of the user's own never set; a key kiln does not know fails naming the closest one.
    pub fn conf_value(&self, key: &str) -> Result<String> {
        let mut config = self.config()?;
        match config.get(key) {
            Some(v) => Ok(v),
            None => {
                // Reuse set's error (on this copy): it names the key and suggests the closest one.
                config.set(key, "")?;
                Ok("<undefined>".to_string())
            }
        }
    }
    /// Sets one setting as the host: any key, static ones (see [`crate::config::STATIC_KEYS`])
    /// only before the session runs its first statement; a limit set here is a ceiling SQL `SET`
    /// cannot raise.
    pub fn set_conf(&self, key: &str, value: &str) -> Result<()> {
        let (key, value) = (key.trim(), value.trim());
        if crate::config::is_static(key) && self.state.started.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(crate::config::cannot_modify_static(key));
        }
        let mut host = self.state.host.write().map_err(|_| poisoned())?;
        host.set(key, value)?;
        let mut config = self.state.config.write().map_err(|_| poisoned())?;
        config.set(key, value)?;
        self.state.conf_version.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
    /// Sets one setting as a query does (SQL `SET key=value`, a Spark Connect client's
    /// `Config.set`): static keys fail, limits may only be lowered below the host's.
    pub fn set_conf_from_query(&self, key: &str, value: &str) -> Result<()> {
        let host = self.state.host.read().map_err(|_| poisoned())?;
        let mut config = self.state.config.write().map_err(|_| poisoned())?;
        config.set_from_sql(&host, key.trim(), value.trim())?;
        self.state.conf_version.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
    /// SQL `RESET [key]`: back to the host's values.
    pub(crate) fn reset_conf_from_query(&self, key: Option<&str>) -> Result<()> {
        let host = self.state.host.read().map_err(|_| poisoned())?;
        let mut config = self.state.config.write().map_err(|_| poisoned())?;
        config.reset_from_sql(&host, key)?;
        self.state.conf_version.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
    /// The settings now and their version (read together, under the settings' lock).
    fn versioned_config(&self) -> Result<(Config, u64)> {
        let config = self.state.config.read().map_err(|_| poisoned())?;
        Ok((config.clone(), self.state.conf_version.load(std::sync::atomic::Ordering::Relaxed)))
    }
    /// The version of the settings now: it changes with every [`Session::set_conf`].
    pub(crate) fn conf_version(&self) -> u64 {
        self.state.conf_version.load(std::sync::atomic::Ordering::Relaxed)
    }
    /// Registers a scalar UDF, callable from SQL by its name and from the DataFrame API with
    /// [`crate::functions::call_udf`]; one of the same name is replaced.
    pub fn register_udf(&self, udf: crate::udf::ScalarUdf) -> Result<()> {
        self.state.catalog.write().map_err(|_| poisoned())?.register_udf(Arc::new(udf));
        Ok(())
    }

    /// Registers an aggregate UDF, callable from SQL and with
    /// [`crate::functions::call_udf`] wherever `sum` could be; one of the same name is
    /// replaced. The aggregate lives as long as the process.
    pub fn register_udaf(&self, udaf: crate::udf::AggregateUdf) -> Result<()> {
        let udaf: &'static crate::udf::AggregateUdf = Box::leak(Box::new(udaf));
        self.state.catalog.write().map_err(|_| poisoned())?.register_udaf(udaf);
        Ok(())
    }

    fn catalog(&self) -> Result<Catalog> {
        let config = self.config()?;
        let file_reads = crate::catalog::FileReads { allowed_roots: config.files_allowed_roots, infer_partition_types: config.partition_column_type_inference };
        Ok(self.state.catalog.read().map_err(|_| poisoned())?.clone().with_warehouse(config.warehouse_dir).with_file_reads(file_reads))
    }
    fn register(&self, table: Table) -> Result<()> {
        let name = table.name.clone();
        self.state.catalog.write().map_err(|_| poisoned())?.register(table);
        // A replaced table's cache holds rows of the table that was.
        self.state.cache.uncache_table(&name)?;
        Ok(())
    }
    /// Registers a Parquet file, or a directory of Parquet files, as a table. Hive-style
    /// `column=value` folders become partition columns, after the file columns.
    pub fn register_parquet(&self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        let config = self.config()?;
        crate::datasource::check_allowed(&config.files_allowed_roots, path.as_ref())?;
        let table = crate::datasource::parquet::ParquetTable::open_with(path.as_ref(), config.partition_column_type_inference)?;
        self.register(Table {
            name: name.to_string(),
            database: "default".into(),
            schema: table.schema(),
            source: TableSource::Parquet(table),
            kind: TableKind::Session,
            stats: None,
            cached: None,
        })
    }
    /// Registers CSV files (a file, or every `*.csv` below a folder) as a table, with Spark's
    /// CSV options: `header`, `sep`, `quote`, `escape`, `comment`, `nullValue`, `inferSchema`,
    /// `mode` (PERMISSIVE, DROPMALFORMED, FAILFAST). The files are read at each scan.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # std::fs::write(dir.path().join("t.csv"), "a,b\n1,x\n2,y\n").unwrap();
    /// let session = kiln::Session::new();
    /// session.register_csv("t", dir.path().join("t.csv"), &[("header", "true"), ("inferSchema", "true")]).unwrap();
    /// let rows = session.sql("SELECT sum(a) FROM t").unwrap().collect().unwrap();
    /// assert_eq!(rows[0].num_rows(), 1);
    /// ```
    pub fn register_csv(&self, name: &str, path: impl AsRef<Path>, options: &[(&str, &str)]) -> Result<()> {
        self.register_text(name, TextFormat::Csv, path.as_ref(), &owned(options), None, TableKind::Session)
    }
    /// Registers JSON Lines files (one object per line; a file, or every `*.json` below a
    /// folder) as a table: fields inferred from every record and sorted by name as Spark
    /// does; the option `mode` as for CSV.
    pub fn register_json(&self, name: &str, path: impl AsRef<Path>, options: &[(&str, &str)]) -> Result<()> {
        self.register_text(name, TextFormat::Json, path.as_ref(), &owned(options), None, TableKind::Session)
    }
    fn register_text(&self, name: &str, format: TextFormat, path: &Path, options: &[(String, String)], schema: Option<SchemaRef>, kind: TableKind) -> Result<()> {
        crate::datasource::check_allowed(&self.config()?.files_allowed_roots, path)?;
        let parsed = crate::datasource::text::TextOptions::parse(format, options)?;
        let table = crate::datasource::text::TextTable::open(format, path, parsed, schema)?;
        self.register(Table { name: name.to_string(), database: "default".into(), schema: table.schema.clone(), source: TableSource::Text(table), kind, stats: None, cached: None })
    }
    /// Registers in-memory batches as a table; all batches must share one schema. Columns are
    /// converted now to the types kiln reads (dictionaries decoded, unsigned integers widened,
    /// `UInt64` as `decimal(20,0)`, large and view strings as strings, timestamps of any unit
    /// and zone as microseconds: see [`crate::types::host_arrow`]); a column Spark has no type
    /// for is refused here with `UNSUPPORTED_ARROWTYPE`, naming it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kiln::arrow::array::{RecordBatch, UInt64Array};
    /// let session = kiln::Session::new();
    /// let batch = RecordBatch::try_from_iter([("n", Arc::new(UInt64Array::from(vec![u64::MAX, 1])) as _)]).unwrap();
    /// session.register_batches("t", vec![batch]).unwrap();
    /// let sum = session.sql("SELECT sum(n) AS s FROM t").unwrap();
    /// assert_eq!(sum.schema().field(0).data_type(), &kiln::arrow::datatypes::DataType::Decimal128(30, 0));
    /// ```
    pub fn register_batches(&self, name: &str, batches: Vec<RecordBatch>) -> Result<()> {
        let (schema, batches) = host_batches(&format!("register_batches(`{name}`)"), batches)?;
        self.register_memory(name, schema, batches)
    }
    /// A DataFrame over in-memory batches, without naming a table (Spark's `createDataFrame`);
    /// columns are converted as [`Session::register_batches`] does.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kiln::arrow::array::{Int32Array, RecordBatch};
    /// let session = kiln::Session::new();
    /// let batch = RecordBatch::try_from_iter([("id", Arc::new(Int32Array::from(vec![1, 2, 3])) as _)]).unwrap();
    /// assert_eq!(session.create_dataframe(vec![batch]).unwrap().count().unwrap(), 3);
    /// ```
    pub fn create_dataframe(&self, batches: Vec<RecordBatch>) -> Result<DataFrame> {
        let (schema, batches) = host_batches("create_dataframe", batches)?;
        self.read_table(Table { name: "LocalRelation".into(), database: "default".into(), schema: null_nullable(schema), source: TableSource::Memory(batches), kind: TableKind::Session, stats: None, cached: None })
    }
    /// The bigint column `id` from `start` to `end` (excluded) by `step` (Spark's
    /// `spark.range(start, end, step)`; SQL's `range(...)`): generated a batch at a time as
    /// it is read, so a huge range costs only what its reader keeps.
    ///
    /// ```
    /// let s = kiln::Session::new();
    /// assert_eq!(s.range(0, 1_000_000_000_000, 1).unwrap().limit(5).unwrap().count().unwrap(), 5);
    /// ```
    pub fn range(&self, start: i64, end: i64, step: i64) -> Result<DataFrame> {
        if step == 0 {
            return Err(KilnError::analysis("FAILED_FUNCTION_CALL", "range(...): the step must not be 0"));
        }
        let output = vec![Attribute::new("id", arrow::datatypes::DataType::Int64, false)];
        self.plan(LogicalPlan::Range { output, range: crate::datasource::range::RangeSpec { start, end, step, splits: None } })
    }
    /// A DataFrame reading a Parquet file or folder (Spark's `spark.read.parquet(path)`),
    /// without registering a table.
    pub fn read_parquet(&self, path: impl AsRef<Path>) -> Result<DataFrame> {
        crate::datasource::check_allowed(&self.config()?.files_allowed_roots, path.as_ref())?;
        let table = crate::datasource::parquet::ParquetTable::open(path.as_ref())?;
        self.read_table(Table { name: path.as_ref().display().to_string(), database: "default".into(), schema: table.schema(), source: TableSource::Parquet(table), kind: TableKind::Session, stats: None, cached: None })
    }
    /// A DataFrame reading CSV files, with the options of [`Session::register_csv`] (Spark's
    /// `spark.read.options(..).csv(path)`).
    pub fn read_csv(&self, path: impl AsRef<Path>, options: &[(&str, &str)]) -> Result<DataFrame> {
        self.read_text(TextFormat::Csv, path.as_ref(), options)
    }
    /// A DataFrame reading JSON Lines files, as [`Session::register_json`] (Spark's
    /// `spark.read.json(path)`).
    pub fn read_json(&self, path: impl AsRef<Path>, options: &[(&str, &str)]) -> Result<DataFrame> {
        self.read_text(TextFormat::Json, path.as_ref(), options)
    }
    fn read_text(&self, format: TextFormat, path: &Path, options: &[(&str, &str)]) -> Result<DataFrame> {
        crate::datasource::check_allowed(&self.config()?.files_allowed_roots, path)?;
        let parsed = crate::datasource::text::TextOptions::parse(format, &owned(options))?;
        let table = crate::datasource::text::TextTable::open(format, path, parsed, None)?;
        self.read_table(Table { name: path.display().to_string(), database: "default".into(), schema: table.schema.clone(), source: TableSource::Text(table), kind: TableKind::Session, stats: None, cached: None })
    }
    /// A DataFrame scanning `table`, which no name in the catalog reaches.
    fn read_table(&self, table: Table) -> Result<DataFrame> {
        let output = table.schema.fields().iter().map(|f| Attribute::new(f.name().clone(), f.data_type().clone(), f.is_nullable())).collect();
        self.plan(LogicalPlan::Relation { table: Arc::new(table), output })
    }
    /// Removes a table or view registered in this session (`register_*`, a temporary view, an
    /// external table's registration); files stay. True when there was one (Spark's
    /// `spark.catalog.dropTempView`).
    ///
    /// ```
    /// let session = kiln::Session::new();
    /// session.sql("CREATE TEMP VIEW v AS SELECT 1 AS one").unwrap();
    /// assert!(session.drop_temp_view("v").unwrap());
    /// assert!(session.sql("SELECT * FROM v").is_err());
    /// assert!(!session.drop_temp_view("v").unwrap());
    /// ```
    pub fn drop_temp_view(&self, name: &str) -> Result<bool> {
        let dropped = self.state.catalog.write().map_err(|_| poisoned())?.drop_table(name).is_some();
        self.state.cache.uncache_table(name)?;
        Ok(dropped)
    }
    /// Registers a user-defined table function, called in FROM (`SELECT * FROM f(1, 'x')`);
    /// one of the same name is replaced. See [`TableFunction`](crate::datasource::provider::TableFunction).
    pub fn register_udtf(&self, function: crate::datasource::provider::TableFunction) -> Result<()> {
        self.state.catalog.write().map_err(|_| poisoned())?.register_table_function(Arc::new(function));
        Ok(())
    }
    /// Registers a host's own table: its rows come from `provider` at each scan, which is
    /// handed the columns the query reads and its simple filters (DataFusion's
    /// `register_table`). A column of a type Spark lacks is refused here,
    /// `UNSUPPORTED_ARROWTYPE` naming it. See [`TableProvider`](crate::datasource::provider::TableProvider).
    pub fn register_table(&self, name: &str, provider: Arc<dyn crate::datasource::provider::TableProvider>) -> Result<()> {
        let table = crate::datasource::provider::ProvidedTable::new(name, provider)?;
        let schema = table.schema().clone();
        self.register(Table { name: name.to_string(), database: "default".into(), schema, source: TableSource::Provider(table), kind: TableKind::Session, stats: None, cached: None })
    }
    /// The same as [`Session::drop_temp_view`] (DataFusion's name for it).
    pub fn deregister_table(&self, name: &str) -> Result<bool> {
        self.drop_temp_view(name)
    }
    pub(crate) fn register_memory(&self, name: &str, schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<()> {
        let schema = null_nullable(schema);
        self.register(Table { name: name.to_string(), database: "default".into(), schema, source: TableSource::Memory(batches), kind: TableKind::Session, stats: None, cached: None })
    }

    /// Names of the session's tables and views, then the warehouse's other tables.
    pub fn table_names(&self) -> Result<Vec<String>> {
        Ok(self.catalog()?.table_names())
    }

    /// The session's cache of compiled stages.
    pub fn stage_cache(&self) -> &crate::codegen::StageCache {
        &self.state.stages
    }

    /// Runs partition `partition` of a physical plan fragment over `inputs` (what its
    /// `FragmentInput` leaves read, by index) under the session's settings and limits, and
    /// returns its batches as they are produced: one task of a host engine's stage. The
    /// fragment holds no exchange; [`Session::interrupt_all`] and `kiln.query.timeout` stop it.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use arrow::array::{Int64Array, RecordBatch};
    /// use kiln::physical::PhysicalPlan;
    /// let session = kiln::Session::new();
    /// let input = kiln::expr::Attribute::new("x", arrow::datatypes::DataType::Int64, false);
    /// let scan = Arc::new(PhysicalPlan::FragmentInput { index: 0, output: vec![input.clone()] });
    /// let batch = RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![1, 2, 3])) as _)]).unwrap();
    /// let rows: usize = session
    ///     .execute_fragment(scan, 0, vec![Box::new(std::iter::once(Ok(batch)))])
    ///     .unwrap()
    ///     .map(|b| b.unwrap().num_rows())
    ///     .sum();
    /// assert_eq!(rows, 3);
    /// ```
    pub fn execute_fragment(&self, plan: Arc<PhysicalPlan>, partition: usize, inputs: Vec<crate::exec::fragment::InputBatches>) -> Result<crate::RecordBatchStream> {
        let config = self.config()?;
        let control = crate::exec::context::governed(&plan, &config);
        self.track(&control);
        let schema = crate::exec::interpreted::schema_of(&plan.output());
        let session = self.clone();
        crate::dataframe::stream::spawn_stream(schema, move |sink| {
            let (metrics, ops) = (crate::exec::metrics::CodegenMetrics::default(), crate::exec::metrics::PlanMetrics::default());
            let ctx = crate::exec::ExecContext::with_control(control, &config, session.stage_cache(), &metrics, &ops).with_inputs(crate::exec::fragment::FragmentInputs::new(inputs));
            crate::exec::fragment::run_fragment(&plan, partition, &ctx, |b| sink(Ok(b)))
        })
    }

    /// Cancels every query of this session running now, from any thread (Spark's
    /// `interruptAll`): each stops within a batch of its scans with `KilnError::Cancelled`, and
    /// the session stays usable. Returns how many were running.
    pub fn interrupt_all(&self) -> usize {
        let Ok(mut running) = self.state.running.lock() else { return 0 };
        running.retain(|c| c.strong_count() > 0);
        running.iter().filter_map(|c| c.upgrade()).map(|c| c.cancel()).count()
    }

    /// Registers a run's control for [`Session::interrupt_all`] (finished runs drop out).
    pub(crate) fn track(&self, control: &Arc<crate::exec::control::QueryControl>) {
        if let Ok(mut running) = self.state.running.lock() {
            running.retain(|c| c.strong_count() > 0);
            running.push(Arc::downgrade(control));
        }
    }

    /// Runs one SQL statement. A query is planned now and run by `collect()`; other statements
    /// (SET, CREATE, INSERT, DROP) take effect now and return their (possibly empty) result.
    pub fn sql(&self, text: &str) -> Result<DataFrame> {
        self.run_one(crate::sql::parse_sql_with(text, None, self.parse_options()?)?)
    }

    /// What the session's settings make of SQL text (`spark.sql.legacy.interval.enabled`).
    pub(crate) fn parse_options(&self) -> Result<crate::sql::ParseOptions> {
        Ok(crate::sql::ParseOptions::of(&*self.state.config.read().map_err(|_| poisoned())?))
    }

    fn run_one(&self, mut statements: Vec<Statement>) -> Result<DataFrame> {
        match statements.len() {
            1 => self.run_statement(statements.remove(0)),
            0 => Err(KilnError::Parse("empty statement".into())),
            n => Err(KilnError::Parse(format!("expected one statement, found {n}; use sql_script for a ';'-separated script"))),
        }
    }

    /// Runs one SQL statement with parameters (Spark 3.4+'s `spark.sql(query, args)`): each
    /// `:name` marker (named) or `?` marker (positional, in order) takes its value from `args`
    /// as a typed literal, never as SQL text, so a value cannot change the query's shape.
    /// A marker without a value is `UNBOUND_SQL_PARAMETER`; named and positional markers in
    /// one query are `INVALID_QUERY_MIXED_QUERY_PARAMETERS`.
    ///
    /// ```
    /// let session = kiln::Session::new();
    /// session.sql("CREATE TABLE users (id INT, name STRING)").unwrap();
    /// session.sql("INSERT INTO users VALUES (1, 'ann'), (2, 'bob')").unwrap();
    /// let q = "SELECT id FROM users WHERE name = :name AND id >= :min_id";
    /// let df = session.sql_with_args(q, [("name", kiln::types::ScalarValue::from("bob")), ("min_id", 1.into())]).unwrap();
    /// assert_eq!(df.count().unwrap(), 1);
    /// // A quoted input is one string value, not SQL:
    /// let df = session.sql_with_args("SELECT id FROM users WHERE name = ?", ["x' OR '1'='1"]).unwrap();
    /// assert_eq!(df.count().unwrap(), 0);
    /// ```
    pub fn sql_with_args(&self, text: &str, args: impl Into<crate::sql::SqlArgs>) -> Result<DataFrame> {
        self.run_one(crate::sql::parse_sql_with(text, Some(&args.into()), self.parse_options()?)?)
    }

    /// Runs a `;`-separated script, returning one DataFrame per statement. Statements run in
    /// order, so a later one sees the tables an earlier one created; each is parsed when it is
    /// reached, under the settings the ones before it left (`SET spark.sql.legacy.interval.enabled`),
    /// and a statement that does not parse stops the script there, as in spark-sql.
    pub fn sql_script(&self, text: &str) -> Result<Vec<DataFrame>> {
        let mut script = crate::sql::Script::new(text, None)?;
        let mut out = vec![];
        while let Some(statements) = script.next(self.parse_options()?) {
            for statement in statements? {
                out.push(self.run_statement(statement)?);
            }
        }
        Ok(out)
    }

    /// Plans a query: analyze, optimize, plan physically, ensure requirements.
    pub fn plan(&self, parsed: LogicalPlan) -> Result<DataFrame> {
        self.plan_shared(Arc::new(parsed))
    }

    /// [`Session::plan`] of a plan other DataFrames may share (a cached DataFrame is found by
    /// its plan).
    pub(crate) fn plan_shared(&self, parsed: Arc<LogicalPlan>) -> Result<DataFrame> {
        self.state.started.store(true, std::sync::atomic::Ordering::Relaxed);
        // Cached DataFrames' plans are read from their caches; `parsed` is kept as written.
        let reading_caches = self.state.cache.use_cached_plans(&parsed)?;
        let (analyzed, warnings) = crate::analyzer::analyze_with_warnings(&reading_caches, &self.catalog()?, (&self.config()?).into())?;
        let analyzed = self.state.extensions.analyze(analyzed)?;
        self.plan_analyzed(parsed, analyzed, warnings)
    }

    /// Plans an analyzed query with the settings now: optimize, plan physically, ensure
    /// requirements. `warnings` are the analyzer's.
    pub(crate) fn plan_analyzed(&self, parsed: Arc<LogicalPlan>, analyzed: Arc<LogicalPlan>, analyzer_warnings: Vec<String>) -> Result<DataFrame> {
        let (config, conf_version) = self.versioned_config()?;
        // Constant folding computes values now: they are capped as the query's would be.
        crate::expr::builtins::set_result_limit(config.memory_limit);
        let extensions = &self.state.extensions;
        let mut warnings = analyzer_warnings.clone();
        // Spark's `useCachedData`: cached tables are read from memory (the analyzed plan shows
        // the tables, the optimized plan their InMemoryRelations).
        let with_cached_data = self.state.cache.use_cached_tables(&analyzed)?;
        let optimized = crate::optimizer::optimize_with(&with_cached_data, &config, extensions.optimizer_batch().into_iter().collect())?;
        let (physical, planner_warnings) = crate::physical::plan_physical_with_strategies(&optimized.plan, &config, &extensions.planner_strategies, crate::codegen::collapse_codegen_stages)?;
        warnings.extend(planner_warnings);
        let physical = crate::physical::ensure_requirements(&physical, config.shuffle_partitions);
        let physical = if config.whole_stage_codegen { crate::codegen::collapse_codegen_stages(&physical) } else { physical };
        Ok(DataFrame {
            plans: Arc::new(Plans {
                parsed,
                analyzed,
                optimized: optimized.plan,
                physical,
                rule_changes: optimized.changes,
                optimizer_batches: optimized.batches,
                rule_metrics: optimized.metrics,
                optimizer_warnings: optimized.warnings,
                hint_warnings: warnings,
                final_plan: Default::default(),
                analyzer_warnings,
                replanned: Default::default(),
                ran: Default::default(),
            }),
            config,
            conf_version,
            session: Arc::new(self.clone()),
            control: None,
        })
    }

    /// A DataFrame reading a table or view of the session (`spark.table(name)`).
    ///
    /// ```
    /// let session = kiln::Session::new();
    /// session.sql("CREATE TABLE t (id INT)").unwrap();
    /// assert_eq!(session.table("t").unwrap().schema().field(0).name(), "id");
    /// ```
    pub fn table(&self, name: &str) -> Result<DataFrame> {
        let parts = name.split('.').map(|p| p.trim().to_string()).collect();
        self.plan(LogicalPlan::UnresolvedRelation { name: parts, args: None })
    }

    /// The empty result of a command.
    #[cfg(feature = "connect")]
    pub(crate) fn empty_result(&self) -> Result<DataFrame> {
        self.local_result(vec![])
    }

    /// A DataFrame over rows computed here (SET output, EXPLAIN text, empty statement results).
    fn local_result(&self, columns: Vec<(&str, Vec<Option<String>>)>) -> Result<DataFrame> {
        let fields: Vec<Field> = columns.iter().map(|(n, _)| Field::new(*n, arrow::datatypes::DataType::Utf8, true)).collect();
        let arrays: Vec<ArrayRef> = columns.into_iter().map(|(_, v)| Arc::new(StringArray::from(v)) as ArrayRef).collect();
        let schema = Arc::new(Schema::new(fields));
        let output: Vec<Attribute> = schema.fields().iter().map(|f| Attribute::new(f.name().clone(), f.data_type().clone(), true)).collect();
        let data = if arrays.is_empty() { vec![] } else { vec![RecordBatch::try_new(schema, arrays)?] };
        self.plan(LogicalPlan::LocalRelation { output, data })
    }

    fn run_statement(&self, statement: Statement) -> Result<DataFrame> {
        self.state.started.store(true, std::sync::atomic::Ordering::Relaxed);
        match statement {
            Statement::Query(plan) => self.plan(plan),
            Statement::Explain { mode, query } => {
                let text = self.plan(query)?.explain_string(mode)?;
                self.local_result(vec![("plan", vec![Some(text)])])
            }
            Statement::SetConfig { key, value: Some(value) } => {
                self.set_conf_from_query(&key, &value)?;
                self.local_result(vec![("key", vec![Some(key)]), ("value", vec![Some(value)])])
            }
            Statement::SetConfig { key, value: None } => {
                let value = self.conf_value(&key)?;
                self.local_result(vec![("key", vec![Some(key)]), ("value", vec![Some(value)])])
            }
            Statement::ListConfig { verbose: false } => {
                let mut set = self.config()?.explicit;
                set.sort();
                let (keys, values) = set.into_iter().map(|(k, v)| (Some(k), Some(v))).unzip();
                self.local_result(vec![("key", keys), ("value", values)])
            }
            Statement::ListConfig { verbose: true } => {
                let mut cols: [Vec<Option<String>>; 4] = Default::default();
                for row in self.config()?.describe_all() {
                    for (c, v) in cols.iter_mut().zip(row) {
                        c.push(Some(v));
                    }
                }
                let [k, v, m, since] = cols;
                self.local_result(vec![("key", k), ("value", v), ("meaning", m), ("Since version", since)])
            }
            Statement::ResetConfig { key } => {
                self.reset_conf_from_query(key.as_deref())?;
                self.local_result(vec![])
            }
            Statement::CreateTempView { name, source, replace, if_not_exists, columns } => {
                if if_not_exists && self.catalog()?.contains(&name) {
                    return self.local_result(vec![]);
                }
                if !replace && self.catalog()?.contains(&name) {
                    return Err(KilnError::analysis("TEMP_TABLE_OR_VIEW_ALREADY_EXISTS", format!("Cannot create the temporary view `{name}` because it already exists. Use CREATE OR REPLACE.")));
                }
                match source {
                    ViewSource::Parquet { path } => self.register_parquet(&name, &path)?,
                    ViewSource::Files { format, path, options } => self.register_text(&name, format, Path::new(&path), &options, None, TableKind::Session)?,
                    ViewSource::Query(plan) => {
                        // Materialized at creation: a view over session tables keeps its rows.
                        let df = self.plan(plan)?;
                        let (schema, batches) = view_columns(&name, &columns, df.schema(), df.collect()?)?;
                        self.register_memory(&name, schema, batches)?;
                    }
                }
                self.local_result(vec![])
            }
            Statement::CreateFileTable { name, columns, if_not_exists, replace, format, path, options, query } => {
                if self.catalog()?.contains(&name) {
                    if if_not_exists {
                        return self.local_result(vec![]);
                    }
                    if !replace {
                        return Err(KilnError::analysis("TABLE_OR_VIEW_ALREADY_EXISTS", format!("Cannot create table or view `{name}` because it already exists.")));
                    }
                }
                let mut schema = (!columns.is_empty()).then(|| Arc::new(arrow::datatypes::Schema::new(columns.iter().map(|(n, t, nullable)| arrow::datatypes::Field::new(n, t.clone(), *nullable)).collect::<Vec<_>>())));
                if let Some(query) = query {
                    let df = self.plan(query)?;
                    let mode = if replace { SaveMode::Overwrite } else { SaveMode::ErrorIfExists };
                    df.write_text(format, Path::new(&path), &options, mode)?;
                    schema = Some(df.schema());
                }
                self.register_text(&name, format, Path::new(&path), &options, schema, TableKind::External)?;
                self.local_result(vec![])
            }
            Statement::CreateTable { name, columns, if_not_exists, replace, storage, query } => {
                let existing = match self.catalog()? {
                    c if c.contains(&name) => Some(c.lookup(&name).ok()),
                    _ => None,
                };
                if existing.is_some() && !replace {
                    if if_not_exists {
                        return self.local_result(vec![]);
                    }
                    return Err(KilnError::analysis("TABLE_OR_VIEW_ALREADY_EXISTS", format!("Cannot create table or view `{name}` because it already exists.")));
                }
                if let (None, true, Some(TableStorage { location: Some(path), partition_by })) = (&query, columns.is_empty(), &storage) {
                    // Spark's CREATE TABLE over existing files: they are read as they are.
                    let config = self.config()?;
                    crate::datasource::check_allowed(&config.files_allowed_roots, Path::new(path))?;
                    let files = crate::datasource::parquet::ParquetTable::open_with(Path::new(path), config.partition_column_type_inference)?;
                    let found: Vec<String> = files.partition_values.schema().fields().iter().map(|f| f.name().clone()).collect();
                    if !partition_by.is_empty() && !partition_by.iter().map(|p| p.to_lowercase()).eq(found.iter().map(|f| f.to_lowercase())) {
                        return Err(KilnError::analysis(
                            "INCOMPATIBLE_DATA_FOR_TABLE",
                            format!("`{path}` is partitioned by {found:?}, not by the declared {partition_by:?}."),
                        ));
                    }
                    self.register_stored(&name, Path::new(path), TableKind::External)?;
                    return self.local_result(vec![]);
                }
                let (schema, batches) = match query {
                    Some(q) => {
                        let df = self.plan(q)?;
                        (df.schema(), df.collect()?)
                    }
                    None => {
                        let fields: Vec<Field> = columns.into_iter().map(|(n, t, nullable)| Field::new(n, t, nullable)).collect();
                        (Arc::new(Schema::new(fields)), vec![])
                    }
                };
                check_unique_columns(&name, &schema)?;
                let location = match storage {
                    Some(storage) => Some(self.create_stored(&name, schema, batches, storage, replace)?),
                    None => {
                        self.register_memory(&name, schema, batches)?;
                        None
                    }
                };
                // A replaced managed table whose folder is not the new table's is deleted.
                if let Some(Some(old)) = existing {
                    if let (TableKind::Managed, TableSource::Parquet(files)) = (old.kind, &old.source) {
                        if location.as_deref() != Some(files.location.as_path()) {
                            delete_managed(&name, &files.location)?;
                        }
                    }
                }
                self.local_result(vec![])
            }
            Statement::InsertValues { table, columns, rows, overwrite } => {
                let cached = self.state.cache.table_level(&table)?;
                self.insert(&table, &columns, rows, overwrite)?;
                if let Some(level) = cached {
                    // Spark caches a written table again. The rows are in the table: a cache
                    // that no longer fits is left out, and queries read the table.
                    let _ = self.cache_table_with(&table, level);
                }
                self.local_result(vec![])
            }
            Statement::CacheTable { name, level, query } => {
                level.check_supported()?;
                if let Some(query) = query {
                    if self.catalog()?.contains(&name) {
                        return Err(KilnError::analysis_with(
                            "TEMP_TABLE_OR_VIEW_ALREADY_EXISTS",
                            format!("[TEMP_TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create the temporary view `{name}` because it already exists."),
                            &[("relationName", &format!("`{name}`"))],
                        ));
                    }
                    self.plan(query)?.create_or_replace_temp_view(&name)?;
                }
                self.cache_table_with(&name, level)?;
                self.local_result(vec![])
            }
            Statement::UncacheTable { name, if_exists } => {
                self.uncache_table(&name, if_exists)?;
                self.local_result(vec![])
            }
            Statement::ClearCache => {
                self.clear_cache()?;
                self.local_result(vec![])
            }
            Statement::AnalyzeTable { table, columns } => {
                self.analyze_table(&table, &columns)?;
                self.local_result(vec![])
            }
            Statement::DescribeTable { table, column, extended } => {
                let t = self.catalog()?.lookup(&table)?;
                match column {
                    Some(c) => {
                        let rows = crate::stats::command::describe_column(&t, &c, extended)?;
                        let (names, values) = rows.into_iter().map(|[a, b]| (Some(a), Some(b))).unzip();
                        self.local_result(vec![("info_name", names), ("info_value", values)])
                    }
                    None => {
                        let rows = crate::stats::command::describe_table(&t, extended);
                        let mut cols: [Vec<Option<String>>; 3] = Default::default();
                        for r in rows {
                            for (c, v) in cols.iter_mut().zip(r) {
                                c.push(v);
                            }
                        }
                        let [a, b, c] = cols;
                        self.local_result(vec![("col_name", a), ("data_type", b), ("comment", c)])
                    }
                }
            }
            Statement::DropTable { name, if_exists } => {
                self.state.cache.uncache_table(&name)?;
                let dropped = self.state.catalog.write().map_err(|_| poisoned())?.drop_table(&name);
                match dropped {
                    Some(table) => {
                        if let (TableKind::Managed, TableSource::Parquet(files)) = (table.kind, &table.source) {
                            delete_managed(&name, &files.location)?;
                        }
                    }
                    None => {
                        let catalog = self.catalog()?;
                        if catalog.contains(&name) {
                            // A managed table of an earlier session: its warehouse folder.
                            delete_managed(&name, &catalog.managed_path(&name)?)?;
                        } else if !if_exists {
                            catalog.lookup(&name)?;
                        }
                    }
                }
                self.local_result(vec![])
            }
        }
    }

    /// `CACHE TABLE name`: reads the table or view into memory now (Arrow batches, their bytes
    /// reserved against `kiln.memory.limit`), and later queries read it from there until
    /// [`Session::uncache_table`] or the table is dropped, replaced or written (a write caches
    /// it again). A table already cached stays as it is.
    ///
    /// ```
    /// let session = kiln::Session::new();
    /// session.sql("CREATE TABLE t (a INT)").unwrap();
    /// session.sql("INSERT INTO t VALUES (1), (2)").unwrap();
    /// session.cache_table("t").unwrap();
    /// assert!(session.is_cached("t").unwrap());
    /// let plan = session.sql("SELECT a FROM t WHERE a > 1").unwrap().explain_string(kiln::ExplainMode::Simple).unwrap();
    /// assert!(plan.contains("Scan In-memory table t") && plan.contains("InMemoryRelation"), "{plan}");
    /// ```
    pub fn cache_table(&self, name: &str) -> Result<()> {
        self.cache_table_with(name, StorageLevel::MEMORY_AND_DISK)
    }
    /// [`Session::cache_table`] at a storage level (`CACHE TABLE t OPTIONS ('storageLevel' ..)`);
    /// kiln keeps every cache in memory, so a level without memory is refused.
    pub fn cache_table_with(&self, name: &str, level: StorageLevel) -> Result<()> {
        let table = self.catalog()?.lookup(name)?;
        if self.state.cache.table_level(name)?.is_some() {
            return Ok(());
        }
        let df = self.table(name)?;
        self.state.cache.cache_table(name, table, &df, level, self.config()?.memory_limit)
    }
    /// `UNCACHE TABLE [IF EXISTS] name`: drops the table's cache (a table not cached is fine;
    /// a name that is no table fails unless `if_exists`).
    pub fn uncache_table(&self, name: &str, if_exists: bool) -> Result<()> {
        let removed = self.state.cache.uncache_table(name)?;
        if !removed && !if_exists {
            self.catalog()?.lookup(name)?;
        }
        Ok(())
    }
    /// `CLEAR CACHE`: drops every cache of the session.
    pub fn clear_cache(&self) -> Result<()> {
        self.state.cache.clear()
    }
    /// True when the table or view `name` is cached (Spark's `spark.catalog.isCached`).
    pub fn is_cached(&self, name: &str) -> Result<bool> {
        if self.state.cache.table_level(name)?.is_some() {
            return Ok(true);
        }
        self.catalog()?.lookup(name)?;
        Ok(false)
    }
    /// Bytes all of the session's caches hold.
    pub fn cached_bytes(&self) -> u64 {
        self.state.cache.bytes()
    }
    /// Caches `df`'s rows, found again by its plan (see [`crate::DataFrame::persist`]);
    /// `host_key` also finds it (a Spark Connect client's relation).
    pub(crate) fn cache_dataframe(&self, df: &DataFrame, level: StorageLevel, host_key: Option<Vec<u8>>) -> Result<()> {
        self.state.cache.cache_plan(df, level, host_key, self.config()?.memory_limit)
    }
    /// Drops the cache of `df`'s plan; true when there was one.
    pub(crate) fn uncache_dataframe(&self, df: &DataFrame) -> Result<bool> {
        self.state.cache.uncache_plan(&df.plans.parsed)
    }
    /// The level `df`'s plan is cached with, if it is.
    pub(crate) fn dataframe_storage_level(&self, df: &DataFrame) -> Result<Option<StorageLevel>> {
        self.state.cache.plan_level(&df.plans.parsed)
    }
    /// The DataFrame a host cached under `key` ([`Session::cache_dataframe`]), planned now.
    #[cfg(feature = "connect")]
    pub(crate) fn cached_dataframe_by_key(&self, key: &[u8]) -> Result<Option<DataFrame>> {
        match self.state.cache.plan_by_host_key(key)? {
            Some(plan) => self.plan_shared(plan).map(Some),
            None => Ok(None),
        }
    }
    /// True when a host cached some DataFrame under a key of its own.
    #[cfg(feature = "connect")]
    pub(crate) fn has_keyed_caches(&self) -> bool {
        self.state.cache.has_host_keys()
    }

    /// `ANALYZE TABLE`: collects the statistics and keeps them with the table — in a managed
    /// table's folder (found again by later sessions), else in the session's catalog.
    pub fn analyze_table(&self, name: &str, what: &crate::sql::AnalyzeColumns) -> Result<()> {
        let table = self.catalog()?.lookup(name)?;
        let batches = match what {
            crate::sql::AnalyzeColumns::NoScan => None,
            _ => Some(self.table(name)?.collect()?),
        };
        let stats = crate::stats::command::analyze(&table, what, batches.as_deref(), &self.config()?)?;
        match (&table.kind, &table.source) {
            (TableKind::Managed, TableSource::Parquet(files)) => crate::catalog::statistics::save(&files.location, &stats),
            _ => self.register(crate::stats::command::with_stats(&table, stats)),
        }
    }

    /// Writes a `CREATE TABLE .. USING parquet` table (replacing the folder's contents when
    /// `replace`) and registers it; returns its folder.
    fn create_stored(&self, name: &str, schema: SchemaRef, batches: Vec<RecordBatch>, storage: TableStorage, replace: bool) -> Result<std::path::PathBuf> {
        let (path, kind) = match storage.location {
            Some(location) => (std::path::PathBuf::from(location), TableKind::External),
            None => (self.catalog()?.managed_path(name)?, TableKind::Managed),
        };
        crate::datasource::check_allowed(&self.config()?.files_allowed_roots, &path)?;
        let mode = if replace { SaveMode::Overwrite } else { SaveMode::ErrorIfExists };
        // A rewrite leaves the old statistics behind with the old files.
        write_table(&path, schema, batches.into_iter().map(Ok), &storage.partition_by, mode)?;
        self.register_stored(name, &path, kind)?;
        Ok(path)
    }

    /// Registers an external table; a managed one is not registered but found in the
    /// warehouse at each lookup, so a table another session changed or dropped is seen so.
    fn register_stored(&self, name: &str, path: &Path, kind: TableKind) -> Result<()> {
        if kind == TableKind::Managed {
            self.state.catalog.write().map_err(|_| poisoned())?.drop_table(name);
            self.state.cache.uncache_table(name)?;
            return Ok(());
        }
        let files = crate::datasource::parquet::ParquetTable::open_with(path, self.config()?.partition_column_type_inference)?;
        self.register(Table { name: name.to_string(), database: "default".into(), schema: files.schema(), source: TableSource::Parquet(files), kind, stats: None, cached: None })
    }

    /// `INSERT INTO | OVERWRITE t [(cols)] VALUES ... | SELECT ...`: rows are cast to the
    /// table's column types (ANSI store assignment) and appended, or replace the table's.
    fn insert(&self, name: &str, columns: &[String], rows: LogicalPlan, overwrite: bool) -> Result<()> {
        let table = self.catalog()?.lookup(name)?;
        if let (TableSource::Parquet(_), TableKind::Session) = (&table.source, table.kind) {
            return Err(KilnError::unsupported(format!(
                "INSERT INTO `{name}`: it reads Parquet files registered for this session only; create a table to write with CREATE TABLE .. USING parquet"
            )));
        }
        let target: Vec<usize> = if columns.is_empty() {
            (0..table.schema.fields().len()).collect()
        } else {
            columns
                .iter()
                .map(|c| {
                    table.schema.fields().iter().position(|f| f.name().eq_ignore_ascii_case(c)).ok_or_else(|| {
                        KilnError::analysis("UNRESOLVED_COLUMN.WITH_SUGGESTION", format!("Column `{c}` does not exist in table `{name}`."))
                    })
                })
                .collect::<Result<_>>()?
        };
        let source = self.plan(rows)?;
        let source_out = source.analyzed_plan().output();
        if source_out.len() != target.len() {
            return Err(KilnError::analysis(
                "INSERT_COLUMN_ARITY_MISMATCH",
                format!("Cannot write to `{name}`: the table has {} target columns but the data has {} columns.", target.len(), source_out.len()),
            ));
        }
        let list: Vec<Expr> = table
            .schema
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let value = match target.iter().position(|t| *t == i) {
                    Some(j) => source_out[j].expr(),
                    None => Expr::Literal(crate::types::ScalarValue::Null(f.data_type().clone())),
                };
                Expr::Cast { child: Box::new(value), to: f.data_type().clone(), zone: None }.alias(f.name().clone())
            })
            .collect();
        let project = |list: Vec<Expr>| self.plan(LogicalPlan::Project { list, child: source.analyzed_plan().clone() });
        let new_batches = match project(list.clone())?.collect() {
            Err(KilnError::Execution(m)) if m.starts_with("[CAST_OVERFLOW]") => return Err(self.insert_overflow(&list, &project).unwrap_or(KilnError::Execution(m))),
            other => other?,
        };
        let existing = match &table.source {
            TableSource::Memory(existing) if !overwrite => existing.clone(),
            TableSource::Memory(_) => vec![],
            TableSource::Text(t) => {
                return Err(KilnError::Unsupported(format!("INSERT INTO `{name}`: a {} table is read from its files; kiln writes Parquet tables", t.format.name())))
            }
            TableSource::Provider(_) => return Err(KilnError::Unsupported(format!("INSERT INTO `{name}`: its rows come from the host's table provider"))),
            TableSource::Parquet(files) => {
                let partition_by: Vec<String> = files.partition_values.schema().fields().iter().map(|f| f.name().clone()).collect();
                let mode = if overwrite { SaveMode::Overwrite } else { SaveMode::Append };
                // Spark drops a table's statistics when it is written (size auto-update off): the
                // rewritten folder keeps only the data files.
                write_table(&files.location, table.schema.clone(), new_batches.into_iter().map(Ok), &partition_by, mode)?;
                return self.register_stored(&table.name, &files.location, table.kind);
            }
        };
        let mut all = existing;
        for b in new_batches.into_iter().filter(|b| b.num_rows() > 0) {
            // A NULL into a NOT NULL column fails here with the column's name.
            all.push(RecordBatch::try_new(table.schema.clone(), b.columns().to_vec()).map_err(|e| {
                KilnError::exec(format!("[NOT_NULL_ASSERT_VIOLATION] cannot insert into `{name}`: {e}"))
            })?);
        }
        self.register_memory(&table.name, table.schema.clone(), all)
    }
}

impl Session {
    /// Spark's store assignment names the column a value overflows: CAST_OVERFLOW_IN_TABLE_INSERT
    /// for the first column of `list` (the insert's casts) whose cast alone fails so.
    fn insert_overflow(&self, list: &[Expr], project: &dyn Fn(Vec<Expr>) -> Result<DataFrame>) -> Option<KilnError> {
        list.iter().find_map(|e| {
            let Expr::Alias { child, name, .. } = e else { return None };
            let Expr::Cast { child: value, to, .. } = child.as_ref() else { return None };
            match project(vec![e.clone()]).and_then(|df| df.collect()) {
                Err(KilnError::Execution(m)) if m.starts_with("[CAST_OVERFLOW]") => Some(KilnError::exec(format!(
                    "[CAST_OVERFLOW_IN_TABLE_INSERT] Fail to assign a value of \"{}\" type to the \"{}\" type column or variable `{name}` due to an overflow. \
                     Use `try_cast` on the input value to tolerate overflow and return NULL instead.",
                    crate::types::sql_type_name(&value.data_type().ok()?),
                    crate::types::sql_type_name(to)
                ))),
                _ => None,
            }
        })
    }
}

/// A NULL-typed column is always nullable (Spark's NullType), whatever its field says: Arrow
/// counts no nulls in a NullArray, and generated code trusts the nullability.
fn null_nullable(schema: SchemaRef) -> SchemaRef {
    if !schema.fields().iter().any(|f| f.data_type() == &arrow::datatypes::DataType::Null && !f.is_nullable()) {
        return schema;
    }
    let fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone().with_nullable(f.is_nullable() || f.data_type() == &arrow::datatypes::DataType::Null)).collect();
    Arc::new(Schema::new(fields))
}

/// A host's batches checked to share one schema and converted to the types kiln reads.
fn host_batches(what: &str, batches: Vec<RecordBatch>) -> Result<(SchemaRef, Vec<RecordBatch>)> {
    let Some(first) = batches.first() else {
        return Err(KilnError::Config(format!("{what}: no batches given, so no schema")));
    };
    let given = first.schema();
    if let Some(b) = batches.iter().find(|b| b.schema().fields() != given.fields()) {
        return Err(KilnError::Config(format!("{what}: batches have different schemas: {:?} and {:?}", given.fields(), b.schema().fields())));
    }
    let schema = crate::types::host_arrow::spark_schema(&given, what)?;
    if schema.fields() == given.fields() {
        return Ok((given, batches));
    }
    let converted = batches.iter().map(|b| crate::types::host_arrow::to_spark_batch(b, &schema)).collect::<Result<Vec<_>>>()?;
    Ok((schema, converted))
}

/// Spark refuses a table with two columns of one name (case-insensitively).
fn check_unique_columns(table: &str, schema: &Schema) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    match schema.fields().iter().find(|f| !seen.insert(f.name().to_lowercase())) {
        Some(f) => Err(KilnError::analysis(
            "COLUMN_ALREADY_EXISTS",
            format!("The column `{}` already exists in table `{table}`. Give the columns distinct names (AS ...).", f.name()),
        )),
        None => Ok(()),
    }
}

/// Deletes a managed table's files (DROP TABLE, or a replace that moved it): only what kiln
/// wrote there.
fn delete_managed(name: &str, folder: &Path) -> Result<()> {
    crate::datasource::owned::delete_table(folder).map_err(|e| KilnError::io(folder.display().to_string(), format!("cannot delete the files of the dropped table `{name}`: {e}")))
}

/// Options as owned pairs.
fn owned(options: &[(&str, &str)]) -> Vec<(String, String)> {
    options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

/// `CREATE VIEW v(a, b) AS query`: the query's columns renamed by position (Spark's
/// CREATE_VIEW_COLUMN_ARITY_MISMATCH for another count); no names: as they are.
fn view_columns(name: &str, columns: &[String], schema: arrow::datatypes::SchemaRef, batches: Vec<RecordBatch>) -> Result<(arrow::datatypes::SchemaRef, Vec<RecordBatch>)> {
    if columns.is_empty() {
        return Ok((schema, batches));
    }
    let data: Vec<String> = schema.fields().iter().map(|f| format!("`{}`", f.name())).collect();
    if columns.len() != data.len() {
        let (class, reason) = if columns.len() < data.len() {
            ("CREATE_VIEW_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS", "too many")
        } else {
            ("CREATE_VIEW_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS", "not enough")
        };
        let view: Vec<String> = columns.iter().map(|c| format!("`{c}`")).collect();
        return Err(KilnError::analysis(
            class,
            format!("Cannot create view `{name}`, the reason is {reason} data columns: View columns: {}. Data columns: {}.", view.join(", "), data.join(", ")),
        ));
    }
    let fields: Vec<arrow::datatypes::Field> = schema.fields().iter().zip(columns).map(|(f, c)| f.as_ref().clone().with_name(c)).collect();
    let renamed = Arc::new(arrow::datatypes::Schema::new(fields));
    let batches = batches.into_iter().map(|b| Ok(RecordBatch::try_new(renamed.clone(), b.columns().to_vec())?)).collect::<Result<Vec<_>>>()?;
    Ok((renamed, batches))
}

impl crate::dataframe::Planner for Session {
    fn plan(&self, parsed: LogicalPlan) -> Result<DataFrame> {
        Session::plan(self, parsed)
    }
    fn insert_into(&self, table: &str, rows: LogicalPlan, overwrite: bool) -> Result<()> {
        self.run_statement(Statement::InsertValues { table: table.to_string(), columns: vec![], rows, overwrite }).map(drop)
    }
    fn plan_analyzed(&self, parsed: Arc<LogicalPlan>, analyzed: Arc<LogicalPlan>, analyzer_warnings: Vec<String>) -> Result<DataFrame> {
        Session::plan_analyzed(self, parsed, analyzed, analyzer_warnings)
    }
    fn conf_version(&self) -> u64 {
        Session::conf_version(self)
    }
    fn track(&self, control: &Arc<crate::exec::control::QueryControl>) {
        Session::track(self, control)
    }
    fn stage_cache(&self) -> &crate::codegen::StageCache {
        Session::stage_cache(self)
    }
    fn register_memory(&self, name: &str, schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<()> {
        Session::register_memory(self, name, schema, batches)
    }
    fn create_dataframe(&self, batches: Vec<RecordBatch>) -> Result<DataFrame> {
        Session::create_dataframe(self, batches)
    }
    fn plan_shared(&self, parsed: Arc<LogicalPlan>) -> Result<DataFrame> {
        Session::plan_shared(self, parsed)
    }
    fn cache_dataframe(&self, df: &DataFrame, level: StorageLevel) -> Result<()> {
        Session::cache_dataframe(self, df, level, None)
    }
    fn uncache_dataframe(&self, df: &DataFrame) -> Result<bool> {
        Session::uncache_dataframe(self, df)
    }
    fn dataframe_storage_level(&self, df: &DataFrame) -> Result<Option<StorageLevel>> {
        Session::dataframe_storage_level(self, df)
    }
}
