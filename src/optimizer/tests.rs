//! The rule executor: metering, the plan change log, exclusions, and the strict-mode checks
//! (integrity, idempotence of `Once` batches, fixed-point overrun, recurring plans).

use std::sync::Arc;

use super::{run_batches, Batch, Rule, Strategy};
use crate::config::Config;
use crate::datasource::demo::{shop_customers, shop_orders};
use crate::error::Result;
use crate::expr::{Attribute, Expr};
use crate::plan::LogicalPlan;
use crate::types::ScalarValue;
use crate::Session;

fn shop() -> Session {
    let s = Session::new();
    s.register_batches("orders", vec![shop_orders()]).expect("orders");
    s.register_batches("customers", vec![shop_customers()]).expect("customers");
    s
}

fn analyzed(sql: &str) -> Arc<LogicalPlan> {
    shop().sql(sql).expect("plans").analyzed_plan().clone()
}

fn strict() -> Config {
    Config { optimizer_strict: true, optimizer_max_iterations: 5, ..Config::default() }
}

/// `Filter (x > n)` becomes `Filter (x > n + 1)`: never converges.
struct BumpLiteral;
impl Rule for BumpLiteral {
    fn name(&self) -> &'static str {
        "BumpLiteral"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Filter { condition: Expr::Binary { op, left, right }, child } => match right.as_ref() {
                Expr::Literal(ScalarValue::Int32(n)) => Ok(Arc::new(LogicalPlan::Filter {
                    condition: Expr::Binary { op: *op, left: left.clone(), right: Box::new(Expr::Literal(ScalarValue::Int32(n + 1))) },
                    child: child.clone(),
                })),
                _ => Ok(p),
            },
            _ => Ok(p),
        })
    }
}

/// `x > n` <-> `n < x`: every run undoes the previous one.
struct FlipComparison;
impl Rule for FlipComparison {
    fn name(&self) -> &'static str {
        "FlipComparison"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Filter { condition: Expr::Binary { op, left, right }, child } if op.is_comparison() => {
                Ok(Arc::new(LogicalPlan::Filter { condition: Expr::Binary { op: op.flip(), left: right.clone(), right: left.clone() }, child: child.clone() }))
            }
            _ => Ok(p),
        })
    }
}

/// Puts `Project [*]` on top every time: not idempotent.
struct StackProjects;
impl Rule for StackProjects {
    fn name(&self) -> &'static str {
        "StackProjects"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        Ok(Arc::new(LogicalPlan::Project { list: plan.output().iter().map(|a| a.expr()).collect(), child: plan.clone() }))
    }
}

/// Aliases the first column under its own id again: two definitions of one ExprId.
struct DuplicateAlias;
impl Rule for DuplicateAlias {
    fn name(&self) -> &'static str {
        "DuplicateAlias"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        let LogicalPlan::Project { list, child } = plan.as_ref() else { return Ok(plan.clone()) };
        let Some(Expr::Alias { id, name, .. }) = list.first() else { return Ok(plan.clone()) };
        let inner = LogicalPlan::Project {
            list: vec![Expr::Alias { child: Box::new(Expr::Literal(ScalarValue::Int32(1))), name: name.clone(), id: *id }],
            child: child.clone(),
        };
        Ok(Arc::new(LogicalPlan::Project { list: list.clone(), child: Arc::new(LogicalPlan::Join {
            left: child.clone(),
            right: Arc::new(inner),
            join_type: crate::plan::JoinType::Cross,
            condition: None,
            using: vec![],
            hint: Default::default(),
        }) }))
    }
}

/// Marks a Relation's columns non-nullable: a change no printed tree shows.
struct NotNullRelation;
impl Rule for NotNullRelation {
    fn name(&self) -> &'static str {
        "NotNullRelation"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |p| match p.as_ref() {
            LogicalPlan::Relation { table, output } if output.iter().any(|a| a.nullable) => Ok(Arc::new(LogicalPlan::Relation {
                table: table.clone(),
                output: output.iter().map(|a| Attribute { nullable: false, ..a.clone() }).collect(),
            })),
            _ => Ok(p),
        })
    }
}

fn batch(strategy: Strategy, rules: Vec<Box<dyn Rule>>) -> Vec<Batch> {
    vec![Batch { name: "Test", strategy, rules }]
}

#[test]
fn fixed_point_overrun_is_an_error_in_strict_mode_and_a_warning_otherwise() {
    let plan = analyzed("SELECT order_id FROM orders WHERE order_id > 1");
    let err = run_batches(&plan, &batch(Strategy::FixedPoint(5), vec![Box::new(BumpLiteral)]), &strict()).unwrap_err().to_string();
    assert!(err.contains("Max iterations (5) reached for batch Test") && err.contains("spark.sql.optimizer.maxIterations"), "{err}");
    let lenient = Config { optimizer_strict: false, ..strict() };
    let done = run_batches(&plan, &batch(Strategy::FixedPoint(5), vec![Box::new(BumpLiteral)]), &lenient).expect("warns only");
    assert!(done.warnings.iter().any(|w| w.contains("spark.sql.optimizer.maxIterations")), "{:?}", done.warnings);
    assert!(done.plan.tree_string().contains("(order_id#") && done.plan.tree_string().contains("> 6)"), "{}", done.plan.tree_string());
}

#[test]
fn a_change_that_prints_the_same_is_kept() {
    let plan = analyzed("SELECT order_id FROM orders");
    let relation = |p: &Arc<LogicalPlan>| {
        let mut found = vec![];
        p.transform_up(&mut |n| {
            if let LogicalPlan::Relation { output, .. } = n.as_ref() {
                found.extend(output.iter().map(|a| a.nullable));
            }
            Ok::<_, crate::error::KilnError>(n)
        })
        .expect("walks");
        found
    };
    assert!(relation(&plan).iter().any(|n| *n), "the shop's orders have nullable columns");
    let done = run_batches(&plan, &batch(Strategy::FixedPoint(5), vec![Box::new(NotNullRelation)]), &strict()).expect("converges");
    assert_eq!(done.plan.tree_string(), plan.tree_string(), "the change does not print");
    assert!(relation(&done.plan).iter().all(|n| !*n), "but it is kept: {:?}", relation(&done.plan));
    assert_eq!(done.changes.len(), 1, "and recorded once");
}

#[test]
fn a_recurring_plan_stops_the_batch() {
    let plan = analyzed("SELECT order_id FROM orders WHERE order_id > 1");
    let lenient = Config { optimizer_strict: false, optimizer_max_iterations: 100, ..Config::default() };
    let done = run_batches(&plan, &batch(Strategy::FixedPoint(100), vec![Box::new(FlipComparison)]), &lenient).expect("stops");
    assert_eq!(done.batches[0].iterations, 2, "stops as soon as the first plan comes back");
    assert!(done.warnings.iter().any(|w| w.contains("recurred") && w.contains("FlipComparison")), "{:?}", done.warnings);
    let err = run_batches(&plan, &batch(Strategy::FixedPoint(100), vec![Box::new(FlipComparison)]), &strict()).unwrap_err();
    assert!(err.to_string().contains("recurred"), "{err}");
}

#[test]
fn once_batches_must_be_idempotent_in_strict_mode() {
    let plan = analyzed("SELECT order_id FROM orders");
    let err = run_batches(&plan, &batch(Strategy::Once, vec![Box::new(StackProjects)]), &strict()).unwrap_err().to_string();
    assert!(err.contains("idempotence is broken for batch Test: rule StackProjects"), "{err}");
}

#[test]
fn a_rule_that_defines_an_expr_id_twice_is_caught() {
    let plan = analyzed("SELECT order_id + 1 AS x FROM orders");
    let err = run_batches(&plan, &batch(Strategy::Once, vec![Box::new(DuplicateAlias)]), &strict()).unwrap_err().to_string();
    assert!(err.contains("DuplicateAlias") && err.contains("defined twice"), "{err}");
}

#[test]
fn every_rule_is_metered() {
    let df = shop().sql("SELECT order_id FROM orders WHERE status = 'paid' AND order_id > 100 + 3").expect("plans");
    let metrics = &df.plans().rule_metrics;
    let folding = metrics.iter().find(|m| m.rule == "ConstantFolding").expect("ConstantFolding ran");
    assert!(folding.runs >= 2 && folding.effective_runs == 1, "{folding:?}");
    let pruning = metrics.iter().find(|m| m.rule == "ColumnPruning").expect("ColumnPruning ran");
    assert!(pruning.runs >= pruning.effective_runs);
    assert!(metrics.iter().all(|m| m.effective_time <= m.time));
}

#[test]
fn plan_change_log_names_each_effective_rule_with_both_plans() {
    let s = Session::builder().config("spark.sql.planChangeLog.level", "warn").build().expect("session");
    s.register_batches("orders", vec![shop_orders()]).expect("orders");
    let df = s.sql("SELECT order_id FROM orders WHERE order_id > 100 + 3").expect("plans");
    let log = df.plan_change_log();
    assert!(log.contains("WARN PlanChangeLogger: \n=== Applying Rule ConstantFolding ===\n"), "{log}");
    assert!(log.contains("!+- Filter (order_id#0 > (100 + 3))") || log.contains("!+- Filter (order_id#"), "{log}");
    assert!(log.contains("=== Result of Batch Finish Analysis ==="), "{log}");
    assert!(log.contains("Batch Infer Filters has no effect.") || log.contains("=== Result of Batch Infer Filters ==="), "{log}");
    assert!(log.contains("=== Metrics of Executed Rules ===\nTotal number of runs: "), "{log}");
    assert!(!df.plans().rule_changes.is_empty());
    let change = &df.plans().rule_changes[0];
    assert_ne!(change.before.tree_string(), change.after.tree_string());
}

#[test]
fn plan_change_log_rules_keeps_only_the_named_rules() {
    let s = Session::builder()
        .config("spark.sql.planChangeLog.level", "INFO")
        .config("spark.sql.planChangeLog.rules", "org.apache.spark.sql.catalyst.optimizer.ConstantFolding")
        .build()
        .expect("session");
    s.register_batches("orders", vec![shop_orders()]).expect("orders");
    let log = s.sql("SELECT order_id FROM orders WHERE order_id > 100 + 3").expect("plans").plan_change_log();
    assert!(log.contains("=== Applying Rule ConstantFolding ==="), "{log}");
    assert!(!log.contains("Applying Rule PushDownPredicates") && !log.contains("Result of Batch"), "{log}");
}

#[test]
fn rules_needed_for_correctness_cannot_be_excluded() {
    let s = shop();
    s.set_conf("spark.sql.optimizer.excludedRules", "ReplaceDistinctWithAggregate,ColumnPruning").expect("set");
    let df = s.sql("SELECT DISTINCT status FROM orders").expect("still plans");
    assert!(df.optimized_plan().tree_string().starts_with("Aggregate"), "{}", df.optimized_plan().tree_string());
    let warnings = &df.plans().optimizer_warnings;
    assert!(warnings.iter().any(|w| w.contains("'ReplaceDistinctWithAggregate' was not excluded") && w.contains("non-excludable")), "{warnings:?}");
    assert!(df.plans().rule_metrics.iter().all(|m| m.rule != "ColumnPruning"), "excluded rules never run");
    assert_eq!(df.collect().expect("runs").iter().map(|b| b.num_rows()).sum::<usize>(), 3);
}
