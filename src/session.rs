//! The session: settings, the catalog of tables, and the entry point for SQL.

use std::path::Path;
use std::sync::{Arc, RwLock};

use arrow::record_batch::RecordBatch;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::dataframe::DataFrame;
use crate::error::{KilnError, Result};

/// A kiln session: its own settings and tables. Cheap to clone; clones share state.
#[derive(Clone, Default)]
pub struct Session {
    pub(crate) state: Arc<SessionState>,
}

/// The shared, mutable part of a session.
#[derive(Default)]
pub struct SessionState {
    pub(crate) config: RwLock<Config>,
    pub(crate) catalog: RwLock<Catalog>,
}

/// Builds a session with settings: `Session::builder().config("spark.sql.shuffle.partitions", "8").build()`.
#[derive(Default)]
pub struct SessionBuilder {
    settings: Vec<(String, String)>,
}

impl SessionBuilder {
    /// Sets one setting by its Spark key.
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.push((key.into(), value.into()));
        self
    }
    /// The session; fails on an unknown key or a bad value.
    pub fn build(self) -> Result<Session> {
        let session = Session::new();
        for (k, v) in self.settings {
            session.set_conf(&k, &v)?;
        }
        Ok(session)
    }
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
    /// Sets one setting (as SQL `SET key=value`).
    pub fn set_conf(&self, key: &str, value: &str) -> Result<()> {
        let _ = (key, value);
        Err(KilnError::unsupported("settings"))
    }
    /// Registers a Parquet file, or a directory of Parquet files, as a table.
    pub fn register_parquet(&self, name: &str, path: impl AsRef<Path>) -> Result<()> {
        let _ = (name, path.as_ref());
        Err(KilnError::unsupported("parquet tables"))
    }
    /// Registers in-memory batches as a table.
    pub fn register_batches(&self, name: &str, batches: Vec<RecordBatch>) -> Result<()> {
        let _ = (name, batches);
        Err(KilnError::unsupported("memory tables"))
    }
    /// Runs one SQL statement. A query is planned now and run by `collect()`; other statements
    /// (SET, CREATE, INSERT, DROP) take effect now and return their (possibly empty) result.
    pub fn sql(&self, text: &str) -> Result<DataFrame> {
        let _ = text;
        Err(KilnError::unsupported("sql"))
    }
    /// Runs a `;`-separated script, returning one DataFrame per statement.
    pub fn sql_script(&self, text: &str) -> Result<Vec<DataFrame>> {
        let _ = text;
        Err(KilnError::unsupported("sql"))
    }
}
