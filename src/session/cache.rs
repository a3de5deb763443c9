//! The session's cached relations (Spark's `CacheManager`): `CACHE TABLE t` and
//! `DataFrame::cache` read rows once into memory (Arrow batches, their bytes reserved against
//! `kiln.memory.limit`), and every later query planned by the session reads them in place of
//! the plan they came from, printed as Spark's `InMemoryRelation` / `InMemoryTableScan`.
//!
//! A cache is found by what it was made from: a cached table by the catalog table it read (a
//! table replaced, dropped or written is no longer that table, and the session drops or
//! refreshes its cache then), a cached DataFrame by its unresolved plan (the DataFrame itself,
//! those derived from it, or a Spark Connect client's same relation).

use std::sync::{Arc, Mutex};

use arrow::record_batch::RecordBatch;

use crate::catalog::cached::{CachedRelation, StorageLevel};
use crate::catalog::{Table, TableKind, TableSource};
use crate::common::memory::MemoryPool;
use crate::dataframe::DataFrame;
use crate::error::{KilnError, Result};
use crate::expr::Attribute;
use crate::plan::LogicalPlan;

/// What a cache was made from.
#[derive(Clone)]
enum Source {
    /// `CACHE TABLE name`: the catalog table it read.
    Table { name: String, table: Arc<Table> },
    /// `DataFrame::cache`: the DataFrame's unresolved plan, and the key a host found it by
    /// (a Spark Connect relation, encoded), if any.
    Plan {
        plan: Arc<LogicalPlan>,
        // Read by Spark Connect only.
        #[cfg_attr(not(feature = "connect"), allow(dead_code))]
        host_key: Option<Vec<u8>>,
    },
}

#[derive(Clone)]
struct Entry {
    source: Source,
    /// The rows: an in-memory table whose `cached` says how it prints.
    data: Arc<Table>,
}

/// The caches of one session and the pool their bytes are reserved in.
#[derive(Default)]
pub(crate) struct CacheManager {
    entries: Mutex<Vec<Entry>>,
    pool: Arc<MemoryPool>,
}

fn poisoned() -> KilnError {
    KilnError::internal("the session's cache lock poisoned by a panic in another thread")
}

/// The same catalog table: the same entry, or a managed table looked up again (each lookup
/// opens its folder afresh) whose files are unchanged.
fn same_table(a: &Arc<Table>, b: &Arc<Table>) -> bool {
    if Arc::ptr_eq(a, b) {
        return true;
    }
    match (&a.source, &b.source) {
        (TableSource::Parquet(x), TableSource::Parquet(y)) => {
            a.kind == TableKind::Managed && b.kind == TableKind::Managed && a.name.eq_ignore_ascii_case(&b.name) && x.location == y.location && a.fingerprint() == b.fingerprint()
        }
        _ => false,
    }
}

impl CacheManager {
    fn entries(&self) -> Result<std::sync::MutexGuard<'_, Vec<Entry>>> {
        self.entries.lock().map_err(|_| poisoned())
    }

    /// (what `pick` takes of its source, its rows) of each cache `pick` takes something of.
    fn picked<T>(&self, pick: impl Fn(&Source) -> Option<T>) -> Result<Vec<(T, Arc<Table>)>> {
        Ok(self.entries()?.iter().filter_map(|e| Some((pick(&e.source)?, e.data.clone()))).collect())
    }

    /// Bytes all caches hold.
    pub(crate) fn bytes(&self) -> u64 {
        self.pool.used()
    }

    /// The level `name`'s cache was made with, if the table is cached.
    pub(crate) fn table_level(&self, name: &str) -> Result<Option<StorageLevel>> {
        Ok(self.entries()?.iter().find_map(|e| match &e.source {
            Source::Table { name: n, .. } if n.eq_ignore_ascii_case(name) => e.data.cached.as_ref().map(|c| c.level),
            _ => None,
        }))
    }

    /// The level a DataFrame's plan is cached with, if it is.
    pub(crate) fn plan_level(&self, plan: &Arc<LogicalPlan>) -> Result<Option<StorageLevel>> {
        Ok(self.entries()?.iter().find_map(|e| match &e.source {
            Source::Plan { plan: p, .. } if Arc::ptr_eq(p, plan) || p == plan => e.data.cached.as_ref().map(|c| c.level),
            _ => None,
        }))
    }

    /// The cached plan a host registered under `key` (see [`CacheManager::cache_plan`]).
    #[cfg(feature = "connect")]
    pub(crate) fn plan_by_host_key(&self, key: &[u8]) -> Result<Option<Arc<LogicalPlan>>> {
        Ok(self.entries()?.iter().find_map(|e| match &e.source {
            Source::Plan { plan, host_key: Some(k) } if k.as_slice() == key => Some(plan.clone()),
            _ => None,
        }))
    }

    /// True when some cache was registered with a host key.
    #[cfg(feature = "connect")]
    pub(crate) fn has_host_keys(&self) -> bool {
        self.entries.lock().is_ok_and(|e| e.iter().any(|e| matches!(e.source, Source::Plan { host_key: Some(_), .. })))
    }

    /// Caches the rows of `df`, which reads the catalog table `table` named `name`.
    pub(crate) fn cache_table(&self, name: &str, table: Arc<Table>, df: &DataFrame, level: StorageLevel, limit: u64) -> Result<()> {
        if level == StorageLevel::NONE {
            return Ok(()); // Spark's cacheQuery: NONE caches nothing, and is no error
        }
        let data = self.materialize(df, Some(name), level, limit)?;
        let mut entries = self.entries()?;
        entries.retain(|e| !matches!(&e.source, Source::Table { name: n, .. } if n.eq_ignore_ascii_case(name)));
        entries.push(Entry { source: Source::Table { name: name.to_string(), table }, data });
        Ok(())
    }

    /// Caches the rows of `df`, found again by its unresolved plan (or by `host_key`). As
    /// Spark's cacheQuery, NONE caches nothing and a plan cached already keeps its cache.
    pub(crate) fn cache_plan(&self, df: &DataFrame, level: StorageLevel, host_key: Option<Vec<u8>>, limit: u64) -> Result<()> {
        let plan = df.plans.parsed.clone();
        if level == StorageLevel::NONE || self.plan_level(&plan)?.is_some() {
            return Ok(());
        }
        let mut seen = std::collections::HashSet::new();
        if let Some(f) = df.schema().fields().iter().find(|f| !seen.insert(f.name().to_lowercase())) {
            return Err(KilnError::unsupported(format!(
                "caching a DataFrame with two columns named `{}`: kiln reads a cache's columns by name (rename one with alias first)",
                f.name()
            )));
        }
        let data = self.materialize(df, None, level, limit)?;
        self.entries()?.push(Entry { source: Source::Plan { plan, host_key }, data });
        Ok(())
    }

    /// Runs `df` and keeps its rows, reserving their bytes as they arrive: a cache that does
    /// not fit fails here with UNABLE_TO_ACQUIRE_MEMORY and holds nothing.
    fn materialize(&self, df: &DataFrame, table_name: Option<&str>, level: StorageLevel, limit: u64) -> Result<Arc<Table>> {
        level.check_supported()?;
        self.pool.set_limit(limit);
        let what = match table_name {
            Some(n) => format!("`{n}`"),
            None => "a DataFrame".to_string(),
        };
        let reservation = CachedRelation::reserve(&self.pool, &format!("the cache of {what}"));
        let mut batches: Vec<RecordBatch> = vec![];
        // Rows kept in batches of the session's batch size, as Spark's InMemoryRelation builds
        // batches of a fixed row count: a Parquet file's short batch at each row group's end
        // would otherwise be merged with the next by every query's stages, on every run.
        let input = df.execute_stream()?.map(|b| b.map_err(KilnError::from_stream));
        for batch in rebatched(input, df.config.batch_size.max(1)) {
            let batch = batch?;
            let bytes = batch.get_array_memory_size() as u64;
            if reservation.grow(bytes).is_err() {
                let held = self.pool.used().saturating_sub(reservation.bytes());
                return Err(KilnError::Execution(format!(
                    "[UNABLE_TO_ACQUIRE_MEMORY] Cannot cache {what}: its rows need more than {} and the session's caches hold {} of kiln.memory.limit ({}). \
                     Uncache another (UNCACHE TABLE, unpersist(), CLEAR CACHE) or raise kiln.memory.limit.",
                    crate::common::bytes_to_string((reservation.bytes() + bytes) as u128),
                    crate::common::bytes_to_string(held as u128),
                    crate::common::bytes_to_string(limit as u128),
                )));
            }
            if batch.num_rows() > 0 {
                batches.push(batch);
            }
        }
        let plan = df.explain_string(crate::ExplainMode::Simple)?;
        let plan = plan.strip_prefix("== Physical Plan ==\n").unwrap_or(&plan).trim_end().to_string();
        let cached = CachedRelation { table_name: table_name.map(str::to_string), level, plan, reservation };
        Ok(Arc::new(Table {
            name: table_name.unwrap_or("InMemoryRelation").to_string(),
            database: "default".into(),
            schema: df.schema(),
            source: TableSource::Memory(batches),
            kind: TableKind::Session,
            stats: None,
            cached: Some(Arc::new(cached)),
        }))
    }

    /// Drops the caches of the table `name`; true when there was one.
    pub(crate) fn uncache_table(&self, name: &str) -> Result<bool> {
        let mut entries = self.entries()?;
        let before = entries.len();
        entries.retain(|e| !matches!(&e.source, Source::Table { name: n, .. } if n.eq_ignore_ascii_case(name)));
        Ok(entries.len() != before)
    }

    /// Drops the cache of a DataFrame's plan; true when there was one.
    pub(crate) fn uncache_plan(&self, plan: &Arc<LogicalPlan>) -> Result<bool> {
        let mut entries = self.entries()?;
        let before = entries.len();
        entries.retain(|e| !matches!(&e.source, Source::Plan { plan: p, .. } if Arc::ptr_eq(p, plan) || p == plan));
        Ok(entries.len() != before)
    }

    /// Drops every cache (`CLEAR CACHE`).
    pub(crate) fn clear(&self) -> Result<()> {
        self.entries()?.clear();
        Ok(())
    }

    /// An unresolved plan with each cached DataFrame's plan in it replaced by a scan of its
    /// rows (new column ids, its names and types).
    pub(crate) fn use_cached_plans(&self, parsed: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        let plans = self.picked(|s| match s {
            Source::Plan { plan, .. } => Some(plan.clone()),
            Source::Table { .. } => None,
        })?;
        if plans.is_empty() {
            return Ok(parsed.clone());
        }
        parsed.transform_down(&mut |node| {
            Ok(match plans.iter().find(|(p, _)| Arc::ptr_eq(p, &node) || **p == *node) {
                Some((_, data)) => {
                    let output = data.schema.fields().iter().map(|f| Attribute::new(f.name().clone(), f.data_type().clone(), f.is_nullable())).collect();
                    Arc::new(LogicalPlan::Relation { table: data.clone(), output })
                }
                None => node,
            })
        })
    }

    /// An analyzed plan with each read of a cached table (also inside subqueries) reading its
    /// cache instead, with the same column ids.
    pub(crate) fn use_cached_tables(&self, analyzed: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        let tables = self.picked(|s| match s {
            Source::Table { table, .. } => Some(table.clone()),
            Source::Plan { .. } => None,
        })?;
        if tables.is_empty() {
            return Ok(analyzed.clone());
        }
        analyzed.transform_up_with_subqueries(&mut |node| {
            Ok(match node.as_ref() {
                LogicalPlan::Relation { table, output } => match tables.iter().find(|(t, _)| same_table(t, table)) {
                    Some((_, data)) => Arc::new(LogicalPlan::Relation { table: data.clone(), output: output.clone() }),
                    None => node,
                },
                _ => node,
            })
        })
    }
}

/// `input`'s rows in batches of exactly `rows` rows, the last one shorter, copied as they stream
/// by (arrow's `BatchCoalescer`, made for the schema of the first batch).
fn rebatched(input: impl Iterator<Item = Result<RecordBatch>>, rows: usize) -> impl Iterator<Item = Result<RecordBatch>> {
    let mut input = input.fuse();
    let mut coalescer: Option<arrow::compute::BatchCoalescer> = None;
    std::iter::from_fn(move || loop {
        if let Some(b) = coalescer.as_mut().and_then(|c| c.next_completed_batch()) {
            return Some(Ok(b));
        }
        let pushed = match input.next() {
            Some(Ok(b)) => coalescer.get_or_insert_with(|| arrow::compute::BatchCoalescer::new(b.schema(), rows)).push_batch(b),
            Some(Err(e)) => return Some(Err(e)),
            None => {
                let c = coalescer.as_mut()?;
                if c.get_buffered_rows() == 0 {
                    return None;
                }
                c.finish_buffered_batch()
            }
        };
        if let Err(e) = pushed {
            return Some(Err(e.into()));
        }
    })
}
