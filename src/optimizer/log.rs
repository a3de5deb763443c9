//! The plan change log (Catalyst's `PlanChangeLogger`): for every rule that changed the plan,
//! `=== Applying Rule <name> ===` and the plans before and after side by side, lines that differ
//! marked `!`; at the end of each batch `=== Result of Batch <name> ===` (or `Batch <name> has
//! no effect.`); then the metrics of the executed rules.
//!
//! ```text
//! === Applying Rule PushDownPredicates ===
//!  Project [a#0]                  Project [a#0]
//! !+- Filter (a#0 > 1)            +- Project [a#0, b#1]
//! !   +- Project [a#0, b#1]          +- Filter (a#0 > 1)
//!        +- Relation t[a#0,b#1]         +- Relation t[a#0,b#1]
//! ```
//! `spark.sql.planChangeLog.rules` / `.batches` keep only the named rules / batches.

use std::fmt::Write;

use super::{names_rule, Optimized};
use crate::config::Config;

/// Spark's `sideBySide`: the two texts in columns, `!` before lines that differ.
pub fn side_by_side(left: &str, right: &str) -> String {
    let l: Vec<&str> = left.lines().collect();
    let r: Vec<&str> = right.lines().collect();
    let width = l.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for i in 0..l.len().max(r.len()) {
        let (a, b) = (l.get(i).copied().unwrap_or(""), r.get(i).copied().unwrap_or(""));
        let mark = if a == b { ' ' } else { '!' };
        let pad = width - a.chars().count() + 3;
        let _ = writeln!(out, "{mark}{a}{}{b}", " ".repeat(pad));
    }
    out
}

/// The whole log of one optimizer run, as `spark.sql.planChangeLog.*` select it.
pub fn plan_change_log(optimized: &Optimized, config: &Config) -> String {
    let level = &config.plan_change_log_level;
    let rule_wanted = |rule: &str| config.plan_change_log_rules.is_empty() || config.plan_change_log_rules.iter().any(|r| names_rule(r, rule));
    let batch_wanted = |batch: &str| config.plan_change_log_batches.is_empty() || config.plan_change_log_batches.iter().any(|b| b == batch);
    let mut out = String::new();
    let mut changes = optimized.changes.iter().peekable();
    for batch in &optimized.batches {
        while let Some(change) = changes.next_if(|c| c.batch == batch.batch) {
            if rule_wanted(change.rule) {
                let _ = write!(
                    out,
                    "{level} PlanChangeLogger: \n=== Applying Rule {} ===\n{}\n",
                    change.rule,
                    side_by_side(&change.before.tree_string(), &change.after.tree_string())
                );
            }
        }
        // Batches are logged only when no rule filter is set, as in Spark's logBatch.
        if config.plan_change_log_rules.is_empty() && batch_wanted(batch.batch) {
            if std::sync::Arc::ptr_eq(&batch.before, &batch.after) {
                let _ = writeln!(out, "{level} PlanChangeLogger: Batch {} has no effect.", batch.batch);
            } else {
                let _ = write!(
                    out,
                    "{level} PlanChangeLogger: \n=== Result of Batch {} ===\n{}\n",
                    batch.batch,
                    side_by_side(&batch.before.tree_string(), &batch.after.tree_string())
                );
            }
        }
    }
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
    let total: std::time::Duration = optimized.metrics.iter().map(|m| m.time).sum();
    let effective: std::time::Duration = optimized.metrics.iter().map(|m| m.effective_time).sum();
    let effective_rules: Vec<String> = optimized
        .metrics
        .iter()
        .filter(|m| m.effective_runs > 0)
        .map(|m| format!("{} ({}/{} runs effective, {:.3} ms)", m.rule, m.effective_runs, m.runs, ms(m.time)))
        .collect();
    let _ = write!(
        out,
        "{level} PlanChangeLogger: \n=== Metrics of Executed Rules ===\nTotal number of runs: {}\nTotal time: {:.6} ms\nNumber of effective runs: {}\nTotal time of effective runs: {:.6} ms\nEffective rules: {}\n\n",
        optimized.metrics.iter().map(|m| m.runs).sum::<usize>(),
        ms(total),
        optimized.metrics.iter().map(|m| m.effective_runs).sum::<usize>(),
        ms(effective),
        if effective_rules.is_empty() { "none".to_string() } else { effective_rules.join(", ") }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::side_by_side;

    #[test]
    fn side_by_side_marks_changed_lines_like_spark() {
        let s = side_by_side("Project [a]\n+- Filter x\n", "Project [a]\n");
        assert_eq!(s, " Project [a]   Project [a]\n!+- Filter x   \n");
    }
}
