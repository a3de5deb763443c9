//! Tables known to a session: Parquet files and directories, and batches held in memory.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::datasource::parquet::ParquetTable;
use crate::error::{closest_match, KilnError, Result};

/// Where a table's rows live.
#[derive(Debug, Clone)]
pub enum TableSource {
    /// Batches held by the session (`register_batches`, `CREATE TABLE` + `INSERT`).
    Memory(Vec<RecordBatch>),
    /// Parquet files, possibly in Hive-style `column=value` folders.
    Parquet(ParquetTable),
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
}

impl TableSource {
    /// The units a scan reads in parallel: (file index, row group) of the given Parquet files.
    pub fn scan_units(&self, selected_files: &[usize]) -> Vec<(usize, usize)> {
        match self {
            TableSource::Memory(_) => vec![],
            TableSource::Parquet(t) => selected_files
                .iter()
                .filter_map(|&f| Some((f, t.files.get(f)?.num_row_groups())))
                .flat_map(|(f, n)| (0..n).map(move |g| (f, g)))
                .collect(),
        }
    }
}

impl Table {
    /// `spark_catalog.default.orders`, as Spark prints relations.
    pub fn qualified_name(&self) -> String {
        format!("spark_catalog.{}.{}", self.database, self.name)
    }
    /// The format word Spark prints after a Relation (`parquet`).
    pub fn format_name(&self) -> &'static str {
        match self.source {
            TableSource::Memory(_) => "memory",
            TableSource::Parquet { .. } => "parquet",
        }
    }
}

/// The session's tables by lower-case name.
#[derive(Debug, Default, Clone)]
pub struct Catalog {
    tables: BTreeMap<String, Arc<Table>>,
}

impl Catalog {
    /// Adds or replaces a table.
    pub fn register(&mut self, table: Table) {
        self.tables.insert(table.name.to_lowercase(), Arc::new(table));
    }
    /// Removes a table; false if it did not exist.
    pub fn drop_table(&mut self, name: &str) -> bool {
        self.tables.remove(&name.to_lowercase()).is_some()
    }
    /// Looks a table up, or fails with a suggestion.
    pub fn lookup(&self, name: &str) -> Result<Arc<Table>> {
        if let Some(t) = self.tables.get(&name.to_lowercase()) {
            return Ok(t.clone());
        }
        let hint = match closest_match(name, self.tables.values().map(|t| t.name.as_str())) {
            Some(s) => format!(" Did you mean `{s}`?"),
            None if self.tables.is_empty() => " No tables are registered.".to_string(),
            None => format!(
                " Known tables: {}.",
                self.tables.values().map(|t| format!("`{}`", t.name)).collect::<Vec<_>>().join(", ")
            ),
        };
        Err(KilnError::analysis(
            "TABLE_OR_VIEW_NOT_FOUND",
            format!("The table or view `{name}` cannot be found.{hint}"),
        ))
    }
    /// True when a table of this name exists.
    pub fn contains(&self, name: &str) -> bool {
        self.tables.contains_key(&name.to_lowercase())
    }
    /// Names of all tables.
    pub fn table_names(&self) -> Vec<String> {
        self.tables.values().map(|t| t.name.clone()).collect()
    }
}
