//! EXPLAIN printers: the tree drawing, physical operator lines, and the modes.

mod physical;
mod tree;
pub use tree::draw_tree;

use crate::config::Config;
use crate::error::{KilnError, Result};
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
    /// The physical plan with each stage's generated code (stages print as interpreted until
    /// code generation lands).
    Codegen,
    /// The optimized logical plan with size statistics.
    Cost,
    /// The physical plan outline followed by one detail block per operator.
    Formatted,
}

/// The plans of one query, as EXPLAIN prints them.
pub struct QueryPlans<'a> {
    pub parsed: &'a LogicalPlan,
    pub analyzed: &'a LogicalPlan,
    pub optimized: &'a LogicalPlan,
    pub physical: &'a PhysicalPlan,
}

/// The text of `EXPLAIN [mode]`.
pub fn explain_string(plans: &QueryPlans<'_>, mode: ExplainMode, config: &Config) -> Result<String> {
    let physical = format!("== Physical Plan ==\n{}", plans.physical.tree_string(config));
    match mode {
        ExplainMode::Simple => Ok(physical),
        ExplainMode::Codegen | ExplainMode::Cost | ExplainMode::Formatted => {
            Err(KilnError::unsupported(format!("EXPLAIN {mode:?} (kiln prints simple and extended plans so far)").to_uppercase()))
        }
        ExplainMode::Extended => {
            let schema = plans
                .analyzed
                .output()
                .iter()
                .map(|a| format!("{}: {}", a.name, spark_type_name(&a.data_type)))
                .collect::<Vec<_>>()
                .join(", ");
            Ok(format!(
                "== Parsed Logical Plan ==\n{}\n== Analyzed Logical Plan ==\n{schema}\n{}\n== Optimized Logical Plan ==\n{}\n{physical}",
                plans.parsed.tree_string(),
                plans.analyzed.tree_string(),
                plans.optimized.tree_string()
            ))
        }
    }
}
