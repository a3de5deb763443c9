//! The logical optimizer: named rules grouped into batches, each run `Once` or to a fixed point.
//!
//! A rule returns the very same `Arc` when it changes nothing, so "did it fire" is a pointer
//! comparison (Catalyst's `fastEquals`). The executor logs every effective rule when
//! `spark.sql.planChangeLog.level` asks for it, and checks that every rule keeps the schema.

mod batches;
pub mod rules;

use std::sync::Arc;

use crate::config::Config;
use crate::error::{KilnError, Result};
use crate::plan::LogicalPlan;

pub use batches::default_batches;

/// One rewrite, named as Catalyst names it.
pub trait Rule: Send + Sync {
    /// Catalyst's name (`"CombineFilters"`), used by logs and `excludedRules`.
    fn name(&self) -> &'static str;
    /// The rewritten plan, or the same `Arc` when nothing applies.
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>>;
}

/// How often a batch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Once,
    /// Until the plan stops changing, at most this many iterations.
    FixedPoint(usize),
}

/// A named list of rules.
pub struct Batch {
    pub name: &'static str,
    pub strategy: Strategy,
    pub rules: Vec<Box<dyn Rule>>,
}

/// One effective rule application, for the plan change log.
#[derive(Debug, Clone)]
pub struct RuleChange {
    pub batch: &'static str,
    pub rule: &'static str,
    pub before: String,
    pub after: String,
}

/// The optimizer's result: the plan and what changed it.
pub struct Optimized {
    pub plan: Arc<LogicalPlan>,
    pub changes: Vec<RuleChange>,
}

/// Runs the default batches over an analyzed plan.
pub fn optimize(plan: &Arc<LogicalPlan>, config: &Config) -> Result<Optimized> {
    run_batches(plan, &default_batches(config), config)
}

/// Runs `batches` in order.
pub fn run_batches(plan: &Arc<LogicalPlan>, batches: &[Batch], config: &Config) -> Result<Optimized> {
    let mut plan = plan.clone();
    let mut changes = vec![];
    for batch in batches {
        let max = match batch.strategy {
            Strategy::Once => 1,
            Strategy::FixedPoint(n) => n.max(1),
        };
        let mut iteration = 0;
        loop {
            iteration += 1;
            let start = plan.clone();
            for rule in &batch.rules {
                if config.optimizer_excluded_rules.iter().any(|r| r == rule.name()) {
                    continue;
                }
                let next = rule.apply(&plan)?;
                if !Arc::ptr_eq(&next, &plan) {
                    check_schema(rule.name(), &plan, &next)?;
                    let (before, after) = (plan.tree_string(), next.tree_string());
                    if before != after {
                        changes.push(RuleChange { batch: batch.name, rule: rule.name(), before, after });
                    }
                    plan = next;
                }
            }
            if batch.strategy == Strategy::Once || start.tree_string() == plan.tree_string() {
                break;
            }
            if iteration >= max {
                eprintln!(
                    "WARN: max iterations ({max}) reached for batch {}, please set 'spark.sql.optimizer.maxIterations' to a larger value.",
                    batch.name
                );
                break;
            }
        }
    }
    Ok(Optimized { plan, changes })
}

/// A rule must keep the output columns (ids and types) of the plan it rewrites.
fn check_schema(rule: &str, before: &LogicalPlan, after: &LogicalPlan) -> Result<()> {
    let key = |p: &LogicalPlan| p.output().into_iter().map(|a| (a.id, a.data_type)).collect::<Vec<_>>();
    if key(before) != key(after) {
        return Err(KilnError::internal(format!(
            "optimizer rule {rule} changed the output of the plan from {:?} to {:?}",
            before.output().iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            after.output().iter().map(|a| a.to_string()).collect::<Vec<_>>()
        )));
    }
    Ok(())
}
