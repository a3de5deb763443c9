//! DataFrame: a planned query. Planning (analysis, optimization, physical planning) happens
//! when the DataFrame is made, so name and type errors surface at once; `collect()` runs it.

use std::borrow::Cow;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::config::Config;
use crate::datasource::write::{write_table, SaveMode, WriteSummary};
use crate::error::Result;
use crate::exec::interpreted::schema_of;
use crate::exec::metrics::{QueryMetrics, ScanMetrics};
use crate::explain::{explain_string, ExplainMode, QueryPlans};
use crate::physical::PhysicalPlan;
use crate::plan::LogicalPlan;

mod inspect;
pub(crate) mod stream;
mod transform;

pub use inspect::NaFunctions;
pub use stream::RecordBatchStream;
pub use transform::GroupedData;

/// What a DataFrame asks of the session that planned it: to plan what is derived from it, to
/// hold a view, and to run under the session's limits. The session implements it (it sits
/// above the DataFrame API, which reads downward).
pub(crate) trait Planner: Send + Sync {
    /// Analyzes, optimizes and plans a query over the session's tables.
    fn plan(&self, parsed: LogicalPlan) -> Result<DataFrame>;
    /// `INSERT [OVERWRITE] INTO table` the rows of a query, by position.
    fn insert_into(&self, table: &str, rows: LogicalPlan, overwrite: bool) -> Result<()>;
    /// Plans an analyzed query again with the settings now.
    fn plan_analyzed(&self, parsed: Arc<LogicalPlan>, analyzed: Arc<LogicalPlan>, analyzer_warnings: Vec<String>) -> Result<DataFrame>;
    /// The settings' version: a DataFrame planned under an older one is planned again.
    fn conf_version(&self) -> u64;
    /// Registers a run, so the session can interrupt it.
    fn track(&self, control: &Arc<crate::exec::control::QueryControl>);
    /// The compiled stages the session's queries share.
    fn stage_cache(&self) -> &crate::codegen::StageCache;
    /// Registers batches as a temporary view.
    fn register_memory(&self, name: &str, schema: SchemaRef, batches: Vec<RecordBatch>) -> Result<()>;
    /// A DataFrame over batches.
    fn create_dataframe(&self, batches: Vec<RecordBatch>) -> Result<DataFrame>;
    /// [`Planner::plan`] of a plan other DataFrames share (a cached DataFrame is found by it).
    fn plan_shared(&self, parsed: Arc<LogicalPlan>) -> Result<DataFrame>;
    /// Caches a DataFrame's rows, found again by its plan.
    fn cache_dataframe(&self, df: &DataFrame, level: crate::catalog::cached::StorageLevel) -> Result<()>;
    /// Drops the cache of a DataFrame's plan; true when there was one.
    fn uncache_dataframe(&self, df: &DataFrame) -> Result<bool>;
    /// The level a DataFrame's plan is cached at, if it is.
    fn dataframe_storage_level(&self, df: &DataFrame) -> Result<Option<crate::catalog::cached::StorageLevel>>;
}

/// The plans of one query, kept so hosts and tests can assert on them.
pub struct Plans {
    /// The logical plan as parsed, before analysis (unresolved names).
    pub parsed: Arc<LogicalPlan>,
    /// The analyzed logical plan: names resolved, types checked.
    pub analyzed: Arc<LogicalPlan>,
    /// The logical plan after the optimizer's rules.
    pub optimized: Arc<LogicalPlan>,
    /// The executed physical plan: after `EnsureRequirements` and, when whole-stage codegen is
    /// on, with its WholeStageCodegen stages.
    pub physical: Arc<PhysicalPlan>,
    /// The rules that changed the plan, in order, with the plan before and after each.
    pub rule_changes: Vec<crate::optimizer::RuleChange>,
    /// The optimizer's batches, in order, with the plan before and after each.
    pub optimizer_batches: Vec<crate::optimizer::BatchRun>,
    /// Runs, effective runs and time of every optimizer rule.
    pub rule_metrics: Vec<crate::optimizer::RuleMetrics>,
    /// What the optimizer warned about (ignored exclusions, iteration cap, recurring plans).
    pub optimizer_warnings: Vec<String>,
    /// Hints the analyzer or `JoinSelection` could not honour (an unknown hint or relation
    /// name, BROADCAST on the preserved side of an outer join, ...), in Spark's words.
    pub hint_warnings: Vec<String>,
    /// The plan adaptive execution ran last time this query ran (`isFinalPlan=true`); None
    /// before a run or when the plan did not run adaptively.
    pub final_plan: std::sync::Mutex<Option<Arc<PhysicalPlan>>>,
    /// The analyzer's warnings alone, for planning the analyzed plan again.
    pub(crate) analyzer_warnings: Vec<String>,
    /// The query planned again with the settings of a later version ([`DataFrame::current`]).
    pub(crate) replanned: std::sync::Mutex<Option<DataFrame>>,
    /// The query ran: its plan (this one, or `replanned`) no longer follows the settings.
    pub(crate) ran: std::sync::atomic::AtomicBool,
}

/// A query planned by a session; `collect()` runs it.
///
/// Names and types are resolved when the DataFrame is made. Settings are read when it first
/// runs, as Spark plans a query at its first action: a DataFrame planned before
/// [`crate::Session::set_conf`] changed a setting is optimized and planned again with the new
/// settings when it is first collected, streamed or explained, and keeps the plan it first ran
/// with ([`DataFrame::physical_plan`] is the plan made first).
///
/// ```
/// let session = kiln::Session::new();
/// let df = session.sql("SELECT 40 + 2 AS answer").unwrap();
/// assert_eq!(df.schema().field(0).name(), "answer");
/// ```
#[derive(Clone)]
pub struct DataFrame {
    pub(crate) plans: Arc<Plans>,
    pub(crate) config: Config,
    /// The session's settings version the plans were made with.
    pub(crate) conf_version: u64,
    /// The session that planned it, whose tables a derived DataFrame reads.
    pub(crate) session: Arc<dyn Planner>,
    /// The control a host gave this run (`collect_with_control`); else each run makes its own.
    pub(crate) control: Option<Arc<crate::exec::control::QueryControl>>,
}

/// `DataFrame[id: bigint, name: string]`, as pyspark prints a DataFrame.
impl std::fmt::Debug for DataFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let columns: Vec<String> = self.schema().fields().iter().map(|c| format!("{}: {}", c.name(), crate::types::spark_type_name(c.data_type()))).collect();
        write!(f, "DataFrame[{}]", columns.join(", "))
    }
}

impl DataFrame {
    /// This DataFrame with a join strategy hint, as Spark's `df.hint("broadcast")`:
    /// `broadcast` (or `broadcastjoin`, `mapjoin`), `merge` (`shuffle_merge`, `mergejoin`),
    /// `shuffle_hash`, `shuffle_replicate_nl`. A join that reads it takes the hint for its side;
    /// a hint no join can honour is a warning ([`DataFrame::warnings`] of the join).
    ///
    /// ```
    /// use kiln::{JoinType, Session};
    /// let s = Session::builder().config("spark.sql.autoBroadcastJoinThreshold", "-1").build().unwrap();
    /// s.sql("CREATE TABLE o (id INT, c INT)").unwrap();
    /// s.sql("CREATE TABLE c (c INT, name STRING)").unwrap();
    /// let df = s.table("o").unwrap().join(&s.table("c").unwrap().hint("broadcast").unwrap(), &["c"], JoinType::Inner).unwrap();
    /// assert!(df.explain_string(kiln::ExplainMode::Simple).unwrap().contains("BroadcastHashJoin"));
    /// ```
    pub fn hint(&self, name: &str) -> Result<DataFrame> {
        let child = self.plans.parsed.clone();
        self.session.plan(LogicalPlan::UnresolvedHint { name: name.to_string(), params: vec![], child })
    }
    /// Joins with `right` on equality of the `using` columns (each in both inputs; the result has
    /// them once), as Spark's `df.join(right, Seq("id"), "inner")`. Both DataFrames are read with
    /// this one's session.
    pub fn join(&self, right: &DataFrame, using: &[&str], join_type: crate::plan::JoinType) -> Result<DataFrame> {
        self.session.plan(LogicalPlan::Join {
            left: self.plans.parsed.clone(),
            right: right.plans.parsed.clone(),
            join_type,
            condition: None,
            using: using.iter().map(|c| c.to_string()).collect(),
            hint: Default::default(),
        })
    }
    /// The result schema (column names and types as Spark reports them).
    pub fn schema(&self) -> SchemaRef {
        schema_of(&self.plans.analyzed.output())
    }
    /// Runs the query and writes its rows as a Parquet table at `path`, with one folder level
    /// per column of `partition_by` (`order_date=2026-10-01/`). Fails if `path` already holds
    /// data, as Spark's default save mode does; [`DataFrame::write_parquet_with`] takes another.
    /// The write is all or nothing: files are staged in a hidden folder, then renamed in.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let session = kiln::Session::new();
    /// let df = session.sql("SELECT 1 AS id, 'a' AS tag UNION ALL SELECT 2, 'b'").unwrap();
    /// let written = df.write_parquet(dir.path().join("t"), &["tag"]).unwrap();
    /// assert_eq!((written.files.len(), written.rows), (2, 2));
    /// ```
    pub fn write_parquet(&self, path: impl AsRef<std::path::Path>, partition_by: &[&str]) -> Result<WriteSummary> {
        self.write_parquet_with(path, partition_by, SaveMode::ErrorIfExists)
    }
    /// [`DataFrame::write_parquet`] with a save mode: replace, append to or leave alone an
    /// existing table.
    pub fn write_parquet_with(&self, path: impl AsRef<std::path::Path>, partition_by: &[&str], mode: SaveMode) -> Result<WriteSummary> {
        crate::datasource::check_allowed(&self.config.files_allowed_roots, path.as_ref())?;
        let batches = self.collect()?;
        let partition_by: Vec<String> = partition_by.iter().map(|c| c.to_string()).collect();
        write_table(path.as_ref(), self.schema(), batches.into_iter().map(Ok), &partition_by, mode)
    }
    /// Runs the query and writes its rows as CSV files in the folder `path` (Spark's
    /// `df.write.csv`): options `header` (default false) and `sep`; the folder must not hold
    /// data yet.
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let session = kiln::Session::new();
    /// let df = session.sql("SELECT 1 AS id, 'a' AS tag").unwrap();
    /// assert_eq!(df.write_csv(dir.path().join("t"), &[("header", "true")]).unwrap().rows, 1);
    /// ```
    pub fn write_csv(&self, path: impl AsRef<std::path::Path>, options: &[(&str, &str)]) -> Result<WriteSummary> {
        let options: Vec<(String, String)> = options.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        self.write_text(crate::datasource::text::TextFormat::Csv, path.as_ref(), &options, SaveMode::ErrorIfExists)
    }
    /// Runs the query and writes its rows as JSON Lines files in the folder `path` (Spark's
    /// `df.write.json`: one object per row, NULL fields left out).
    pub fn write_json(&self, path: impl AsRef<std::path::Path>) -> Result<WriteSummary> {
        self.write_text(crate::datasource::text::TextFormat::Json, path.as_ref(), &[], SaveMode::ErrorIfExists)
    }
    pub(crate) fn write_text(&self, format: crate::datasource::text::TextFormat, path: &std::path::Path, options: &[(String, String)], mode: SaveMode) -> Result<WriteSummary> {
        use crate::datasource::{text::TextFormat, write::WriteFormat};
        crate::datasource::check_allowed(&self.config.files_allowed_roots, path)?;
        let o = crate::datasource::text::TextOptions::parse(format, options)?;
        let files = match format {
            TextFormat::Csv => WriteFormat::Csv { header: o.header, delimiter: o.delimiter },
            TextFormat::Json => WriteFormat::Json,
        };
        let batches = self.collect()?;
        crate::datasource::write::write_table_as(files, path, self.schema(), batches.into_iter().map(Ok), &[], mode)
    }
    /// Runs the query and returns its rows (at least one batch, possibly empty, so the schema
    /// is always there).
    pub fn collect(&self) -> Result<Vec<RecordBatch>> {
        self.collect_counting(&crate::exec::metrics::CodegenMetrics::default())
    }

    /// Runs the query under `control`: [`QueryControl::cancel`](crate::QueryControl::cancel)
    /// from another thread stops it with [`KilnError::Cancelled`](crate::KilnError::Cancelled),
    /// and its progress counts stages, rows and bytes as the query runs.
    ///
    /// ```
    /// let session = kiln::Session::new();
    /// let df = session.sql("SELECT 1 AS one").unwrap();
    /// let control = kiln::QueryControl::for_plan(df.physical_plan());
    /// assert_eq!(df.collect_with_control(&control).unwrap()[0].num_rows(), 1);
    /// ```
    pub fn collect_with_control(&self, control: &std::sync::Arc<crate::exec::control::QueryControl>) -> Result<Vec<RecordBatch>> {
        let df = DataFrame { control: Some(control.clone()), ..self.clone() };
        let out = df.collect()?;
        control.stage_done();
        Ok(out)
    }

    fn collect_counting(&self, codegen: &crate::exec::metrics::CodegenMetrics) -> Result<Vec<RecordBatch>> {
        self.collect_measured(codegen, &crate::exec::metrics::PlanMetrics::default())
    }

    /// This DataFrame as it runs now: planned again when the session's settings changed since
    /// it was planned, until it first runs; from then on, the plan it ran with (Spark plans a
    /// query at its first action and keeps that plan). The run's control is kept.
    pub(crate) fn current(&self) -> Result<Cow<'_, DataFrame>> {
        let p = &self.plans;
        let poisoned = || crate::KilnError::internal("a DataFrame's plan lock poisoned by a panic in another thread");
        let mut replanned = p.replanned.lock().map_err(|_| poisoned())?;
        let ran = p.ran.load(std::sync::atomic::Ordering::Relaxed);
        let mut df = match replanned.as_ref() {
            // Run once: the plan it ran with.
            Some(df) if ran => df.clone(),
            _ if ran || self.session.conf_version() == self.conf_version => return Ok(Cow::Borrowed(self)),
            Some(df) if df.conf_version == self.session.conf_version() => df.clone(),
            _ => {
                let df = self.session.plan_analyzed(p.parsed.clone(), p.analyzed.clone(), p.analyzer_warnings.clone())?;
                *replanned = Some(df.clone());
                df
            }
        };
        df.control = self.control.clone();
        Ok(Cow::Owned(df))
    }

    /// [`DataFrame::current`] for a run: the plan it returns is the one every later run uses.
    pub(crate) fn for_run(&self) -> Result<Cow<'_, DataFrame>> {
        let df = self.current()?;
        if let (Cow::Borrowed(_), Ok(mut replanned)) = (&df, self.plans.replanned.lock()) {
            // Planned for an explain under other settings: not what runs.
            *replanned = None;
        }
        self.plans.ran.store(true, std::sync::atomic::Ordering::Relaxed);
        Ok(df)
    }

    /// This run's control under the session's limits, registered for
    /// [`Session::interrupt_all`](crate::Session::interrupt_all).
    pub(crate) fn run_control(&self) -> Arc<crate::exec::control::QueryControl> {
        let control = match &self.control {
            Some(c) => {
                crate::exec::context::limit(c, &self.config);
                c.clone()
            }
            None => crate::exec::context::governed(&self.plans.physical, &self.config),
        };
        self.session.track(&control);
        control
    }

    fn collect_measured(&self, codegen: &crate::exec::metrics::CodegenMetrics, ops: &crate::exec::metrics::PlanMetrics) -> Result<Vec<RecordBatch>> {
        let mut out: Vec<RecordBatch> = self.collect_partitions_measured(codegen, ops)?.into_iter().flatten().collect();
        if out.is_empty() {
            out.push(RecordBatch::new_empty(self.schema()));
        }
        Ok(out)
    }
    /// Runs the query and returns its rows by output partition, as the plan's last operator
    /// left them (pyspark's `rdd.glom().collect()`; DataFusion's `collect_partitioned`): a
    /// partition without rows is an empty list.
    ///
    /// ```
    /// let s = kiln::Session::builder().config("spark.sql.shuffle.partitions", "3").config("spark.sql.adaptive.enabled", "false").build().unwrap();
    /// let df = s.sql("SELECT k, count(*) FROM (SELECT id % 5 AS k FROM range(100)) GROUP BY k").unwrap();
    /// let parts = df.collect_partitioned().unwrap();
    /// assert_eq!(parts.len(), 3);
    /// assert_eq!(parts.iter().flatten().map(|b| b.num_rows()).sum::<usize>(), 5);
    /// ```
    pub fn collect_partitioned(&self) -> Result<Vec<Vec<RecordBatch>>> {
        self.collect_partitions_measured(&crate::exec::metrics::CodegenMetrics::default(), &crate::exec::metrics::PlanMetrics::default())
    }
    fn collect_partitions_measured(&self, codegen: &crate::exec::metrics::CodegenMetrics, ops: &crate::exec::metrics::PlanMetrics) -> Result<Vec<Vec<RecordBatch>>> {
        if let Cow::Owned(df) = self.for_run()? {
            return df.collect_partitions_measured(codegen, ops);
        }
        let schema = self.schema();
        // Every run has a control: `Session::interrupt_all` and `kiln.query.timeout` reach it.
        let control = self.run_control();
        let ctx = crate::exec::ExecContext::with_control(control, &self.config, self.session.stage_cache(), codegen, ops);
        let (parts, final_plan) = crate::exec::executor::collect_partitions(&self.plans.physical, &ctx)?;
        if let (Some(plan), Ok(mut last)) = (final_plan, self.plans.final_plan.lock()) {
            *last = Some(plan);
        }
        // Result columns carry the analyzed plan's names and nullability.
        parts
            .into_iter()
            .map(|p| p.into_iter().map(|b| RecordBatch::try_new(schema.clone(), b.columns().to_vec()).map_err(Into::into)).collect::<Result<Vec<_>>>())
            .collect()
    }
    /// Runs the query and returns its rows with what each Parquet scan read (files, row
    /// groups read and skipped, rows), what code generation did (stages compiled, taken
    /// from the session's cache, run interpreted, compile time) and what every operator of
    /// the plan that ran did (rows, time per partition, memory held, build rows). Runs of one DataFrame on several threads at once share
    /// the counters, so only a single run's metrics are exact.
    pub fn collect_with_metrics(&self) -> Result<(Vec<RecordBatch>, QueryMetrics)> {
        if let Cow::Owned(df) = self.for_run()? {
            return df.collect_with_metrics();
        }
        let mut scans = vec![];
        collect_scan_metrics(&self.plans.physical, &mut scans);
        scans.iter().for_each(|(_, m)| m.reset());
        let codegen = crate::exec::metrics::CodegenMetrics::default();
        let ops = crate::exec::metrics::PlanMetrics::default();
        let batches = self.collect_measured(&codegen, &ops)?;
        let ran = self.final_plan().filter(|_| crate::exec::adaptive::is_adaptive(&self.plans.physical, &self.config)).unwrap_or_else(|| self.plans.physical.clone());
        Ok((
            batches,
            QueryMetrics {
                scans: scans.iter().map(|(name, m)| (name.clone(), m.get())).collect(),
                codegen: codegen.get(),
                operators: ran.operator_metrics(&self.config, &ops),
                plan: ran.tree_string_with_metrics(&self.config, &ops),
            },
        ))
    }
    /// Runs the query and prints up to 20 rows as Spark's `show()` does.
    pub fn show(&self) -> Result<()> {
        let batches = self.collect()?;
        write_stdout(&crate::format::show_string(&self.schema(), &batches, 20, 20, self.config.time_zone()))
    }
    /// The EXPLAIN text of this query. After a run that executed adaptively, the physical plan
    /// is printed as Spark prints it then: `AdaptiveSparkPlan isFinalPlan=true` with the
    /// `== Final Plan ==` (query stages, shuffle reads, the join strategies that ran) above
    /// the `== Initial Plan ==`; EXPLAIN CODEGEN then lists the stages that ran.
    pub fn explain_string(&self, mode: ExplainMode) -> Result<String> {
        if let Cow::Owned(df) = self.current()? {
            return df.explain_string(mode);
        }
        let p = &self.plans;
        let final_plan = self.final_plan();
        explain_string(
            &QueryPlans { parsed: &p.parsed, analyzed: &p.analyzed, optimized: &p.optimized, physical: &p.physical, final_plan: final_plan.as_deref() },
            mode,
            &self.config,
        )
    }

    /// Runs the query and draws the plan that ran (`kiln explain --analyze --graph`): a
    /// self-contained SVG, or an HTML page holding it, with rows per edge, time and memory
    /// per operator, codegen stages coloured compiled or interpreted, and the initial plan
    /// beside the final one when adaptive execution changed it (a join strategy, or how a
    /// shuffle is read).
    pub fn plan_graph(&self, html: bool) -> Result<String> {
        if let Cow::Owned(df) = self.current()? {
            return df.plan_graph(html);
        }
        let ops = crate::exec::metrics::PlanMetrics::default();
        self.collect_measured(&crate::exec::metrics::CodegenMetrics::default(), &ops)?;
        let adaptive = crate::exec::adaptive::is_adaptive(&self.plans.physical, &self.config);
        let ran = self.final_plan().filter(|_| adaptive).unwrap_or_else(|| self.plans.physical.clone());
        let initial = Some(self.plans.physical.as_ref()).filter(|p| adaptive && adaptive_shape(p) != adaptive_shape(&ran));
        Ok(if html {
            crate::explain::graph::plan_html(&ran, initial, &ops, &self.config, "kiln: the plan that ran")
        } else {
            crate::explain::graph::plan_svg(&ran, initial, &ops, &self.config)
        })
    }

    /// The plan the last adaptive run of this query executed (`ResultQueryStage` at its root).
    pub fn final_plan(&self) -> Option<Arc<PhysicalPlan>> {
        if let Ok(Cow::Owned(df)) = self.current() {
            return df.final_plan();
        }
        self.plans.final_plan.lock().ok().and_then(|p| p.clone())
    }
    /// Prints the EXPLAIN text of this query.
    pub fn explain(&self, mode: ExplainMode) -> Result<()> {
        write_stdout(&format!("{}\n", self.explain_string(mode)?))
    }
    /// Everything planning warned about: hints it could not honour, then optimizer warnings.
    pub fn warnings(&self) -> Vec<String> {
        [self.plans.hint_warnings.clone(), self.plans.optimizer_warnings.clone()].concat()
    }
    /// All plans of this query.
    pub fn plans(&self) -> &Plans {
        &self.plans
    }
    /// The plan change log of this query's optimization (as `spark.sql.planChangeLog.level`
    /// prints it, filtered by `spark.sql.planChangeLog.rules` / `.batches`).
    pub fn plan_change_log(&self) -> String {
        let p = &self.plans;
        let optimized = crate::optimizer::Optimized {
            plan: p.optimized.clone(),
            changes: p.rule_changes.clone(),
            batches: p.optimizer_batches.clone(),
            metrics: p.rule_metrics.clone(),
            warnings: p.optimizer_warnings.clone(),
        };
        let mut config = self.config.clone();
        if !config.plan_change_log_enabled() {
            config.plan_change_log_level = "INFO".into();
        }
        crate::optimizer::log::plan_change_log(&optimized, &config)
    }
    /// The analyzed logical plan.
    pub fn analyzed_plan(&self) -> &Arc<LogicalPlan> {
        &self.plans.analyzed
    }
    /// The optimized logical plan.
    pub fn optimized_plan(&self) -> &Arc<LogicalPlan> {
        &self.plans.optimized
    }
    /// The physical plan, with exchanges.
    pub fn physical_plan(&self) -> &Arc<PhysicalPlan> {
        &self.plans.physical
    }
}

/// Writes to standard output; a closed pipe (`kiln ... | head`) is an error, not a panic.
pub fn write_stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(|e| crate::error::KilnError::io("stdout", e))
}

/// The metrics of every FileScan below `plan`, root first, left before right.
fn collect_scan_metrics(plan: &PhysicalPlan, out: &mut Vec<(String, Arc<ScanMetrics>)>) {
    if let PhysicalPlan::FileScan { table, metrics, .. } = plan {
        out.push((table.qualified_name(), metrics.clone()));
    }
    plan.children().into_iter().for_each(|c| collect_scan_metrics(c, out));
}

/// The operators of a plan that say how it runs (joins, exchanges), in tree order, and how it
/// reads its shuffles (coalesced, local, split), without adaptive execution's stage nodes:
/// equal when re-planning changed nothing a reader of the plan would see.
fn adaptive_shape(plan: &PhysicalPlan) -> Vec<String> {
    let mut out = vec![];
    fn walk(p: &PhysicalPlan, out: &mut Vec<String>) {
        match p {
            PhysicalPlan::QueryStage { .. } | PhysicalPlan::WholeStageCodegen { .. } => {}
            PhysicalPlan::ShuffleRead { .. } => out.push("AQEShuffleRead".into()),
            PhysicalPlan::HashJoin { kind, .. } => out.push(format!("{kind:?}HashJoin")),
            PhysicalPlan::SortMergeJoin { .. } => out.push("SortMergeJoin".into()),
            PhysicalPlan::Exchange { .. } => out.push("Exchange".into()),
            PhysicalPlan::BroadcastExchange { .. } => out.push("BroadcastExchange".into()),
            _ => {}
        }
        for c in p.tree_children() {
            walk(c, out);
        }
    }
    walk(plan, &mut out);
    out
}
