//! EXPLAIN printers: the tree drawing, physical operator lines, and the modes.

mod physical;
mod tree;
pub use tree::draw_tree;

use crate::config::Config;
use crate::physical::PhysicalPlan;
use crate::plan::LogicalPlan;
use crate::types::spark_type_name;

/// Which EXPLAIN output to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplainMode {
    /// The physical plan only.
    Simple,
    /// Parsed, analyzed, optimized and physical plans.
    Extended,
}

/// The plans of one query, as EXPLAIN prints them.
pub struct QueryPlans<'a> {
    pub parsed: &'a LogicalPlan,
    pub analyzed: &'a LogicalPlan,
    pub optimized: &'a LogicalPlan,
    pub physical: &'a PhysicalPlan,
}

/// The text of `EXPLAIN [mode]`.
pub fn explain_string(plans: &QueryPlans<'_>, mode: ExplainMode, config: &Config) -> String {
    let physical = format!("== Physical Plan ==\n{}", plans.physical.tree_string(config));
    match mode {
        ExplainMode::Simple => physical,
        ExplainMode::Extended => {
            let schema = plans
                .analyzed
                .output()
                .iter()
                .map(|a| format!("{}: {}", a.name, spark_type_name(&a.data_type)))
                .collect::<Vec<_>>()
                .join(", ");
            format!(
                "== Parsed Logical Plan ==\n{}\n== Analyzed Logical Plan ==\n{schema}\n{}\n== Optimized Logical Plan ==\n{}\n{physical}",
                plans.parsed.tree_string(),
                plans.analyzed.tree_string(),
                plans.optimized.tree_string()
            )
        }
    }
}
