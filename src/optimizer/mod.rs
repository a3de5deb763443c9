//! The logical optimizer: named rules grouped into batches, each run `Once` or to a fixed point
//! (Catalyst's `RuleExecutor`).
//!
//! A rule returns the very same `Arc` when it changes nothing, so "did it fire" is a pointer
//! comparison (Catalyst's `fastEquals`); a rebuilt plan that prints the same is not a change
//! either. The executor
//! - meters every rule (runs, effective runs, time) into [`Optimized::metrics`];
//! - records every effective rule with the plan before and after ([`Optimized::changes`]) and
//!   prints them when `spark.sql.planChangeLog.level` asks for it (see [`log`]);
//! - checks that every rule keeps the schema, and in strict mode (`kiln.optimizer.strict`, on
//!   in debug builds and unit tests) that the plan stays integral after every effective rule,
//!   that `Once` batches are idempotent, and that fixed-point batches converge;
//! - stops a fixed-point batch whose plan recurs (two rules undoing each other);
//! - skips the rules in `spark.sql.optimizer.excludedRules`, except those needed for correctness.

mod batches;
pub mod integrity;
pub mod log;
pub mod rules;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::error::{KilnError, Result};
use crate::plan::LogicalPlan;
use crate::expr::{Expr, SubqueryPlan};

pub use batches::{default_batches, NON_EXCLUDABLE_RULES};

/// One rewrite, named as Catalyst names it.
pub trait Rule: Send + Sync {
    /// Catalyst's name (`"CombineFilters"`), used by logs, metrics and `excludedRules`.
    fn name(&self) -> &'static str;
    /// The rewritten plan, or the same `Arc` when nothing applies.
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>>;
}

/// How often a batch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// A single pass over the rules (in strict mode, checked to be idempotent).
    Once,
    /// Until the plan stops changing, at most this many iterations.
    FixedPoint(usize),
}

/// A named list of rules.
pub struct Batch {
    /// Catalyst's batch name (`"Operator Optimization before Inferring Filters"`), used by logs.
    pub name: &'static str,
    /// Whether the batch runs once or to a fixed point.
    pub strategy: Strategy,
    /// The rules, applied in this order in each iteration.
    pub rules: Vec<Box<dyn Rule>>,
}

/// One effective rule application: the plan change log's entry.
#[derive(Debug, Clone)]
pub struct RuleChange {
    /// The batch the rule ran in.
    pub batch: &'static str,
    /// The rule's name.
    pub rule: &'static str,
    /// The plan the rule was given.
    pub before: Arc<LogicalPlan>,
    /// The plan it returned.
    pub after: Arc<LogicalPlan>,
}

/// One batch's run: the plan before and after it, and how many iterations it took.
#[derive(Debug, Clone)]
pub struct BatchRun {
    /// The batch's name.
    pub batch: &'static str,
    /// How many passes over its rules ran (1 for `Once`).
    pub iterations: usize,
    /// The plan before the batch.
    pub before: Arc<LogicalPlan>,
    /// The plan after the batch.
    pub after: Arc<LogicalPlan>,
}

/// Per-rule metering, summed over every batch the rule is in (Catalyst's `QueryExecutionMetering`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleMetrics {
    /// The rule's name.
    pub rule: &'static str,
    /// How often the rule ran.
    pub runs: usize,
    /// How often it changed the plan.
    pub effective_runs: usize,
    /// Time spent in all runs.
    pub time: Duration,
    /// Time spent in the effective runs.
    pub effective_time: Duration,
}

/// The optimizer's result: the plan and how it got there.
#[derive(Debug, Clone)]
pub struct Optimized {
    /// The optimized plan.
    pub plan: Arc<LogicalPlan>,
    /// Every effective rule, in order.
    pub changes: Vec<RuleChange>,
    /// Every batch, in order.
    pub batches: Vec<BatchRun>,
    /// One entry per rule, in the order rules first ran.
    pub metrics: Vec<RuleMetrics>,
    /// Warnings (ignored exclusions, iteration cap reached, recurring plan), also on stderr.
    pub warnings: Vec<String>,
}

impl Optimized {
    /// The metrics of one rule, if it ran.
    pub fn rule_metrics(&self, rule: &str) -> Option<&RuleMetrics> {
        self.metrics.iter().find(|m| m.rule == rule)
    }
}

/// Runs the default batches over an analyzed plan; prints the plan change log when asked.
pub fn optimize(plan: &Arc<LogicalPlan>, config: &Config) -> Result<Optimized> {
    let mut optimized = run_batches(plan, &default_batches(config), config)?;
    optimized.plan = optimize_subqueries(&optimized.plan, config)?;
    if config.plan_change_log_enabled() {
        eprint!("{}", log::plan_change_log(&optimized, config));
    }
    Ok(optimized)
}

/// [`optimize`] with more batches run after the default ones (a session's injected rules).
pub fn optimize_with(plan: &Arc<LogicalPlan>, config: &Config, extra: Vec<Batch>) -> Result<Optimized> {
    let mut batches = default_batches(config);
    batches.extend(extra);
    let mut optimized = run_batches(plan, &batches, config)?;
    optimized.plan = optimize_subqueries(&optimized.plan, config)?;
    if config.plan_change_log_enabled() {
        eprint!("{}", log::plan_change_log(&optimized, config));
    }
    Ok(optimized)
}

/// Spark's `OptimizeSubqueries`: the plan of each scalar subquery left in the plan (the
/// uncorrelated ones; the correlated became joins) is optimized as a query of its own.
fn optimize_subqueries(plan: &Arc<LogicalPlan>, config: &Config) -> Result<Arc<LogicalPlan>> {
    plan.transform_scalar_subqueries(&mut |plan, id| {
        let inner = run_batches(plan.plan(), &default_batches(config), config)?;
        Ok::<_, KilnError>(Expr::ScalarSubquery { plan: SubqueryPlan::new(optimize_subqueries(&inner.plan, config)?), id })
    })
}

/// `spark.sql.optimizer.excludedRules` and `spark.sql.planChangeLog.rules` name rules by class;
/// kiln matches the last segment, so `org.apache.spark.sql.catalyst.optimizer.ColumnPruning` works.
pub(crate) fn names_rule(listed: &str, rule: &str) -> bool {
    listed.rsplit('.').next().unwrap_or(listed) == rule
}

struct Executor<'a> {
    config: &'a Config,
    changes: Vec<RuleChange>,
    batches: Vec<BatchRun>,
    metrics: Vec<RuleMetrics>,
    index: HashMap<&'static str, usize>,
    warnings: Vec<String>,
}

impl Executor<'_> {
    fn warn(&mut self, message: String) {
        eprintln!("WARN Optimizer: {message}");
        self.warnings.push(message);
    }

    fn excluded(&self, rule: &str) -> bool {
        !NON_EXCLUDABLE_RULES.contains(&rule) && self.config.optimizer_excluded_rules.iter().any(|r| names_rule(r, rule))
    }

    fn meter(&mut self, rule: &'static str, time: Duration, effective: bool) {
        let i = *self.index.entry(rule).or_insert_with(|| {
            self.metrics.push(RuleMetrics { rule, ..RuleMetrics::default() });
            self.metrics.len() - 1
        });
        let m = &mut self.metrics[i];
        m.runs += 1;
        m.time += time;
        if effective {
            m.effective_runs += 1;
            m.effective_time += time;
        }
    }

    /// One rule over `plan`: the new plan when it changed anything.
    fn apply_rule(&mut self, batch: &'static str, rule: &dyn Rule, plan: &Arc<LogicalPlan>) -> Result<Option<Arc<LogicalPlan>>> {
        let start = Instant::now();
        let next = rule.apply(plan)?;
        let elapsed = start.elapsed();
        // A rebuilt but equal plan is not a change (and keeps the old Arc). Equal as trees, not
        // as printed: a change EXPLAIN does not show (nullability, a type) is still a change.
        let effective = !Arc::ptr_eq(&next, plan) && next != *plan;
        self.meter(rule.name(), elapsed, effective);
        if !effective {
            return Ok(None);
        }
        integrity::check_schema(rule.name(), plan, &next)?;
        if self.config.optimizer_strict {
            integrity::check_plan(&next).map_err(|problem| {
                KilnError::internal(format!(
                    "optimizer rule {} in batch {batch} produced a broken plan: {problem}\n{}",
                    rule.name(),
                    next.tree_string()
                ))
            })?;
        }
        self.changes.push(RuleChange { batch, rule: rule.name(), before: plan.clone(), after: next.clone() });
        Ok(Some(next))
    }

    fn run_batch(&mut self, batch: &Batch, plan: Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        let before = plan.clone();
        let mut plan = plan;
        let max = match batch.strategy {
            Strategy::Once => 1,
            Strategy::FixedPoint(n) => n.max(1),
        };
        let mut seen = vec![plan.clone()];
        let mut iteration = 0;
        loop {
            iteration += 1;
            let start = plan.clone();
            let active: Vec<&dyn Rule> = batch.rules.iter().map(|r| r.as_ref()).filter(|r| !self.excluded(r.name())).collect();
            for rule in active {
                if let Some(next) = self.apply_rule(batch.name, rule, &plan)? {
                    plan = next;
                }
            }
            if Arc::ptr_eq(&start, &plan) || batch.strategy == Strategy::Once {
                break;
            }
            if seen.last() == Some(&plan) {
                break;
            }
            if seen.contains(&plan) {
                let message = format!(
                    "the plan of batch {} recurred in iteration {iteration}: its rules undo each other ({}); the batch stops here",
                    batch.name,
                    self.changes.iter().rev().take_while(|c| c.batch == batch.name).map(|c| c.rule).take(6).collect::<Vec<_>>().join(", ")
                );
                if self.config.optimizer_strict {
                    return Err(KilnError::internal(message));
                }
                self.warn(message);
                break;
            }
            if iteration >= max {
                let message = format!(
                    "Max iterations ({max}) reached for batch {}, please set 'spark.sql.optimizer.maxIterations' to a larger value.",
                    batch.name
                );
                if self.config.optimizer_strict {
                    return Err(KilnError::internal(message));
                }
                self.warn(message);
                break;
            }
            seen.push(plan.clone());
        }
        if batch.strategy == Strategy::Once && self.config.optimizer_strict && !EXCLUDED_ONCE_BATCHES.contains(&batch.name) {
            check_idempotent(batch, &plan, self.config)?;
        }
        self.batches.push(BatchRun { batch: batch.name, iterations: iteration, before, after: plan.clone() });
        Ok(plan)
    }
}

/// `Once` batches whose second run may change the plan (Spark's `excludedOnceBatches`): the
/// join reorder's costs change with the order it starts from.
const EXCLUDED_ONCE_BATCHES: &[&str] = &["Join Reorder"];

/// A `Once` batch run again over its own output must change nothing.
fn check_idempotent(batch: &Batch, plan: &Arc<LogicalPlan>, config: &Config) -> Result<()> {
    let mut again = plan.clone();
    for rule in &batch.rules {
        if !NON_EXCLUDABLE_RULES.contains(&rule.name()) && config.optimizer_excluded_rules.iter().any(|r| names_rule(r, rule.name())) {
            continue;
        }
        let next = rule.apply(&again)?;
        if !Arc::ptr_eq(&next, &again) && next != again {
            return Err(KilnError::internal(format!(
                "Once strategy's idempotence is broken for batch {}: rule {} changed\n{}into\n{}",
                batch.name,
                rule.name(),
                again.tree_string(),
                next.tree_string()
            )));
        }
        again = next;
    }
    Ok(())
}

/// Runs `batches` in order.
pub fn run_batches(plan: &Arc<LogicalPlan>, batches: &[Batch], config: &Config) -> Result<Optimized> {
    let mut ex = Executor { config, changes: vec![], batches: vec![], metrics: vec![], index: HashMap::new(), warnings: vec![] };
    for name in &config.optimizer_excluded_rules {
        let short = name.rsplit('.').next().unwrap_or(name);
        if NON_EXCLUDABLE_RULES.contains(&short) {
            ex.warn(format!(
                "Optimization rule '{name}' was not excluded from the optimizer because this rule is a non-excludable rule."
            ));
        } else if !batches.iter().any(|b| b.rules.iter().any(|r| r.name() == short)) {
            ex.warn(format!("Optimization rule '{name}' in spark.sql.optimizer.excludedRules is not a rule of this optimizer."));
        }
    }
    let mut plan = plan.clone();
    for batch in batches {
        plan = ex.run_batch(batch, plan)?;
    }
    Ok(Optimized { plan, changes: ex.changes, batches: ex.batches, metrics: ex.metrics, warnings: ex.warnings })
}

#[cfg(test)]
mod tests;
