//! DataFrame: a planned query. Planning (analysis, optimization, physical planning) happens
//! when the DataFrame is made, so name and type errors surface at once; `collect()` runs it.

use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::config::Config;
use crate::error::Result;
use crate::exec::interpreted::schema_of;
use crate::explain::{explain_string, ExplainMode, QueryPlans};
use crate::physical::PhysicalPlan;
use crate::plan::LogicalPlan;

/// The plans of one query, kept so hosts and tests can assert on them.
pub struct Plans {
    pub parsed: Arc<LogicalPlan>,
    pub analyzed: Arc<LogicalPlan>,
    pub optimized: Arc<LogicalPlan>,
    pub physical: Arc<PhysicalPlan>,
    /// The rules that changed the plan, in order, with the plan before and after each.
    pub rule_changes: Vec<crate::optimizer::RuleChange>,
    /// The optimizer's batches, in order, with the plan before and after each.
    pub optimizer_batches: Vec<crate::optimizer::BatchRun>,
    /// Runs, effective runs and time of every optimizer rule.
    pub rule_metrics: Vec<crate::optimizer::RuleMetrics>,
    /// What the optimizer warned about (ignored exclusions, iteration cap, recurring plans).
    pub optimizer_warnings: Vec<String>,
}

/// A query planned by a session; `collect()` runs it.
///
/// ```
/// let session = kiln::Session::new();
/// let df = session.sql("SELECT 40 + 2 AS answer").unwrap();
/// assert_eq!(df.schema().field(0).name(), "answer");
/// ```
pub struct DataFrame {
    pub(crate) plans: Arc<Plans>,
    pub(crate) config: Config,
}

impl DataFrame {
    /// The result schema (column names and types as Spark reports them).
    pub fn schema(&self) -> SchemaRef {
        schema_of(&self.plans.analyzed.output())
    }
    /// Runs the query and returns its rows (at least one batch, possibly empty, so the schema
    /// is always there).
    pub fn collect(&self) -> Result<Vec<RecordBatch>> {
        let schema = self.schema();
        let batches = crate::exec::collect(&self.plans.physical, &self.config)?;
        // Result columns carry the analyzed plan's names and nullability.
        let mut out = batches
            .into_iter()
            .map(|b| RecordBatch::try_new(schema.clone(), b.columns().to_vec()).map_err(Into::into))
            .collect::<Result<Vec<_>>>()?;
        if out.is_empty() {
            out.push(RecordBatch::new_empty(schema));
        }
        Ok(out)
    }
    /// Runs the query and prints up to 20 rows as Spark's `show()` does.
    pub fn show(&self) -> Result<()> {
        let batches = self.collect()?;
        print!("{}", crate::format::show_string(&self.schema(), &batches, 20, 20));
        Ok(())
    }
    /// The EXPLAIN text of this query.
    pub fn explain_string(&self, mode: ExplainMode) -> Result<String> {
        let p = &self.plans;
        explain_string(
            &QueryPlans { parsed: &p.parsed, analyzed: &p.analyzed, optimized: &p.optimized, physical: &p.physical },
            mode,
            &self.config,
        )
    }
    /// Prints the EXPLAIN text of this query.
    pub fn explain(&self, mode: ExplainMode) -> Result<()> {
        println!("{}", self.explain_string(mode)?);
        Ok(())
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
