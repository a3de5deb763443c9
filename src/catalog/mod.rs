//! Tables known to a session: Parquet files and directories, and batches held in memory.

pub mod cached;
pub mod statistics;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::datasource::parquet::{is_hidden_name, ParquetTable};
use crate::error::{closest_match, KilnError, Result};

/// Where a table's rows live.
/// New kinds of source may come: match with a `_` arm.
#[non_exhaustive]
#[derive(Debug, Clone)]
pub enum TableSource {
    /// Batches held by the session (`register_batches`, `CREATE TABLE` + `INSERT`).
    Memory(Vec<RecordBatch>),
    /// Parquet files, possibly in Hive-style `column=value` folders.
    Parquet(ParquetTable),
    /// CSV or JSON Lines files, read at each scan.
    Text(crate::datasource::text::TextTable),
    /// A host's own table (`Session::register_table`), scanned through its provider.
    Provider(crate::datasource::provider::ProvidedTable),
}

/// Who owns a table's files (Spark's `CatalogTableType`, plus session-only tables).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// Known to this session only: registered batches or files, temporary views, and
    /// `CREATE TABLE` without `USING` (in memory). Dropping it leaves any files alone.
    Session,
    /// `CREATE TABLE .. USING parquet` without LOCATION: a folder of the warehouse
    /// (`spark.sql.warehouse.dir`) carrying kiln's marker, found again by later sessions; DROP
    /// deletes the files kiln wrote there.
    Managed,
    /// `CREATE TABLE .. USING parquet LOCATION '..'`: the files stay when it is dropped.
    External,
}

/// A table: its name, schema and source.
#[derive(Debug)]
pub struct Table {
    /// The table's name within its database (`orders`).
    pub name: String,
    /// The database it belongs to (`default` for tables a session registers).
    pub database: String,
    /// The table's columns; for Parquet tables the file columns, then the partition columns.
    pub schema: SchemaRef,
    /// Where the rows are read from.
    pub source: TableSource,
    /// Who owns its files.
    pub kind: TableKind,
    /// Statistics collected by `ANALYZE TABLE`, if any (and still matching the files).
    pub stats: Option<Arc<statistics::TableStats>>,
    /// Set when the table is a cache (`CACHE TABLE`, `DataFrame::cache`): its rows are in
    /// `source` (in memory) and it prints as Spark's `InMemoryRelation`.
    pub cached: Option<Arc<cached::CachedRelation>>,
}

impl TableSource {
    /// The units a scan reads in parallel: (file index, row group) of the given Parquet files.
    pub fn scan_units(&self, selected_files: &[usize]) -> Vec<(usize, usize)> {
        match self {
            TableSource::Memory(_) | TableSource::Provider(_) => vec![],
            TableSource::Text(_) => selected_files.iter().map(|&f| (f, 0)).collect(),
            TableSource::Parquet(t) => selected_files
                .iter()
                .filter_map(|&f| Some((f, t.files.get(f)?.num_row_groups())))
                .flat_map(|(f, n)| (0..n).map(move |g| (f, g)))
                .collect(),
        }
    }
}

/// A table is itself: plans compare the tables they read by identity (the same catalog entry),
/// never by their rows.
impl PartialEq for Table {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Table {
    /// The same table with other statistics.
    pub fn with_stats(&self, stats: Option<Arc<statistics::TableStats>>) -> Table {
        Table {
            name: self.name.clone(),
            database: self.database.clone(),
            schema: self.schema.clone(),
            source: self.source.clone(),
            kind: self.kind,
            stats,
            cached: self.cached.clone(),
        }
    }
    /// The bytes its batches hold in memory (0 for files). A cache's were counted as it was
    /// read in; other tables' are summed now (each planning asks for the size of every table
    /// it reads: a cache of thousands of batches would take milliseconds).
    pub fn memory_bytes(&self) -> u128 {
        match (&self.source, &self.cached) {
            (TableSource::Memory(_), Some(cache)) => u128::from(cache.bytes()),
            (TableSource::Memory(batches), None) => batches.iter().map(|b| b.get_array_memory_size() as u128).sum(),
            _ => 0,
        }
    }
    /// (files, bytes) of what the table reads: what its statistics must have been computed from.
    pub fn fingerprint(&self) -> (usize, u128) {
        match &self.source {
            TableSource::Memory(batches) => (batches.len(), self.memory_bytes()),
            TableSource::Parquet(t) => t.fingerprint(),
            TableSource::Text(t) => t.fingerprint(),
            TableSource::Provider(p) => (p.partitions(), 0),
        }
    }
    /// `spark_catalog.default.orders`, as Spark prints relations.
    pub fn qualified_name(&self) -> String {
        format!("spark_catalog.{}.{}", self.database, self.name)
    }
    /// The format word Spark prints after a Relation (`parquet`).
    pub fn format_name(&self) -> &'static str {
        match &self.source {
            TableSource::Memory(_) => "memory",
            TableSource::Parquet { .. } => "parquet",
            TableSource::Text(t) => t.format.name(),
            TableSource::Provider(_) => "provider",
        }
    }
}

/// The session's tables by lower-case name, and the warehouse folder whose sub-folders are the
/// managed tables (looked up there when not registered).
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    tables: BTreeMap<String, Arc<Table>>,
    warehouse: Option<PathBuf>,
    /// How queries read files by path (``parquet.`path` ``): the session's settings.
    file_reads: FileReads,
    /// The session's user-defined functions by lower-case name (Spark's `FunctionRegistry`,
    /// which its `SessionCatalog` also holds).
    udfs: BTreeMap<String, Arc<crate::udf::ScalarUdf>>,
    /// The session's user-defined aggregates by lower-case name.
    udafs: BTreeMap<String, &'static crate::udf::AggregateUdf>,
    /// The session's table functions by lower-case name.
    table_functions: BTreeMap<String, Arc<crate::datasource::provider::TableFunction>>,
}

/// The settings a query reading files by path obeys.
#[derive(Debug, Clone)]
pub struct FileReads {
    /// `kiln.files.allowedRoots`: no file outside these folders (empty: anywhere).
    pub allowed_roots: Vec<String>,
    /// `spark.sql.sources.partitionColumnTypeInference.enabled`.
    pub infer_partition_types: bool,
}

impl Default for FileReads {
    fn default() -> Self {
        FileReads { allowed_roots: vec![], infer_partition_types: true }
    }
}

impl Catalog {
    /// Sets how queries read files by path.
    pub fn with_file_reads(mut self, file_reads: FileReads) -> Catalog {
        self.file_reads = file_reads;
        self
    }
    /// Spark's SQL on files: ``parquet.`path` `` (also `csv`, `json`, with their default
    /// options) reads the files at the path as a table. None for any other name.
    pub fn file_table(&self, name: &[String]) -> Result<Option<Table>> {
        use crate::datasource::text::{TextFormat, TextOptions, TextTable};
        let [format, path] = name else { return Ok(None) };
        let text_format = match format.to_ascii_lowercase().as_str() {
            "parquet" => None,
            "csv" => Some(TextFormat::Csv),
            "json" => Some(TextFormat::Json),
            _ => return Ok(None),
        };
        let location = Path::new(path);
        crate::datasource::check_allowed(&self.file_reads.allowed_roots, location)?;
        let (schema, source) = match text_format {
            None => {
                let t = ParquetTable::open_with(location, self.file_reads.infer_partition_types)?;
                (t.schema(), TableSource::Parquet(t))
            }
            Some(f) => {
                let t = TextTable::open(f, location, TextOptions::parse(f, &[])?, None)?;
                (t.schema.clone(), TableSource::Text(t))
            }
        };
        Ok(Some(Table { name: path.clone(), database: "default".into(), schema, source, kind: TableKind::Session, stats: None, cached: None }))
    }
    /// Sets the warehouse folder (`spark.sql.warehouse.dir`).
    pub fn with_warehouse(mut self, dir: impl Into<PathBuf>) -> Catalog {
        self.warehouse = Some(dir.into());
        self
    }
    /// The folder a managed table of this name lives in. Names that would leave the warehouse
    /// or be hidden from readers (`..`, `a/b`, `.x`, `_x`) are refused.
    pub fn managed_path(&self, name: &str) -> Result<PathBuf> {
        let warehouse = self.warehouse.as_deref().unwrap_or(Path::new("spark-warehouse"));
        let bad = name.is_empty() || is_hidden_name(name) || name.contains(['/', '\\', '\0']);
        if bad {
            return Err(KilnError::analysis(
                "INVALID_TABLE_NAME",
                format!("`{name}` cannot name a managed table: its folder would be hidden or outside the warehouse."),
            ));
        }
        Ok(warehouse.join(name.to_lowercase()))
    }
    /// A managed table of the warehouse not registered in this session, opened from its folder.
    fn warehouse_table(&self, name: &str) -> Option<Result<Table>> {
        self.warehouse.as_ref()?;
        let path = self.managed_path(name).ok()?;
        // A folder kiln did not write is not a table.
        if !crate::datasource::owned::is_table(&path) {
            return None;
        }
        Some(ParquetTable::open(&path).map(|t| {
            // Saved statistics count only while the files are the ones they were computed from.
            let stats = statistics::load(&path).filter(|s| s.fingerprint == t.fingerprint()).map(Arc::new);
            Table {
                name: name.to_lowercase(),
                database: "default".into(),
                schema: t.schema(),
                source: TableSource::Parquet(t),
                kind: TableKind::Managed,
                stats,
                cached: None,
            }
        }))
    }
    /// The names of the warehouse's table folders.
    fn warehouse_names(&self) -> Vec<String> {
        let Some(dir) = &self.warehouse else { return vec![] };
        let Ok(entries) = std::fs::read_dir(dir) else { return vec![] };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter(|e| crate::datasource::owned::is_table(&e.path()))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !is_hidden_name(n) && !self.tables.contains_key(n))
            .collect();
        names.sort();
        names
    }
    /// Adds or replaces a user-defined function.
    pub fn register_udf(&mut self, udf: Arc<crate::udf::ScalarUdf>) {
        self.udfs.insert(udf.name().to_lowercase(), udf);
    }
    /// The user-defined function of this name, if one is registered.
    pub fn udf(&self, name: &str) -> Option<&Arc<crate::udf::ScalarUdf>> {
        self.udfs.get(&name.to_lowercase())
    }
    /// Adds or replaces a user-defined aggregate.
    pub fn register_udaf(&mut self, udaf: &'static crate::udf::AggregateUdf) {
        self.udafs.insert(udaf.name().to_lowercase(), udaf);
    }
    /// The user-defined aggregate of this name, if one is registered.
    pub fn udaf(&self, name: &str) -> Option<&'static crate::udf::AggregateUdf> {
        self.udafs.get(&name.to_lowercase()).copied()
    }
    /// Adds or replaces a table function.
    pub fn register_table_function(&mut self, f: Arc<crate::datasource::provider::TableFunction>) {
        self.table_functions.insert(f.name().to_lowercase(), f);
    }
    /// The table function of this name, if one is registered.
    pub fn table_function(&self, name: &str) -> Option<Arc<crate::datasource::provider::TableFunction>> {
        self.table_functions.get(&name.to_lowercase()).cloned()
    }
    /// The names of the registered user-defined functions and aggregates.
    pub fn udf_names(&self) -> impl Iterator<Item = &str> {
        self.udfs.values().map(|u| u.name()).chain(self.udafs.values().map(|u| u.name()))
    }
    /// Adds or replaces a table.
    pub fn register(&mut self, table: Table) {
        self.tables.insert(table.name.to_lowercase(), Arc::new(table));
    }
    /// Unregisters a table, returning it; None if it was not registered.
    pub fn drop_table(&mut self, name: &str) -> Option<Arc<Table>> {
        self.tables.remove(&name.to_lowercase())
    }
    /// Looks a table up, or fails with a suggestion.
    pub fn lookup(&self, name: &str) -> Result<Arc<Table>> {
        if let Some(t) = self.tables.get(&name.to_lowercase()) {
            return Ok(t.clone());
        }
        if let Some(table) = self.warehouse_table(name) {
            return table.map(Arc::new);
        }
        let known = self.table_names();
        let hint = match closest_match(name, known.iter().map(String::as_str)) {
            Some(s) => format!(" Did you mean `{s}`?"),
            None if known.is_empty() => " No tables are registered.".to_string(),
            None => format!(" Known tables: {}.", known.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")),
        };
        Err(KilnError::analysis_with(
            "TABLE_OR_VIEW_NOT_FOUND",
            format!("The table or view `{name}` cannot be found.{hint}"),
            &[("relationName", &format!("`{name}`"))],
        ))
    }
    /// True when a table of this name is registered or is a folder of the warehouse.
    pub fn contains(&self, name: &str) -> bool {
        self.tables.contains_key(&name.to_lowercase())
            || (self.warehouse.is_some() && self.managed_path(name).is_ok_and(|p| crate::datasource::owned::is_table(&p)))
    }
    /// Names of all tables: registered ones, then the warehouse's others.
    pub fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tables.values().map(|t| t.name.clone()).collect();
        names.extend(self.warehouse_names());
        names
    }
}
