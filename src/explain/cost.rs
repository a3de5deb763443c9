//! `EXPLAIN COST`: the optimized logical plan with each node's size estimate appended
//! (`, Statistics(sizeInBytes=27.9 MiB)`, Spark's `verboseStringWithSuffix`), then the
//! physical plan.

use crate::config::Config;
use crate::physical::PhysicalPlan;
use crate::plan::LogicalPlan;

/// The optimized plan's tree with statistics on every line, followed by the physical plan.
pub fn cost_string(optimized: &LogicalPlan, physical: &PhysicalPlan, config: &Config) -> String {
    let stats = crate::stats::all_stats_with(optimized, config.cbo_enabled);
    let logical = super::draw_tree(
        optimized,
        &|p: &LogicalPlan| match stats.get(&(p as *const LogicalPlan)) {
            Some(s) => format!("{}, {s}", p.node_string()),
            None => p.node_string(),
        },
        &|p: &LogicalPlan| p.children().into_iter().map(|c| c.as_ref()).collect(),
    );
    format!("== Optimized Logical Plan ==\n{logical}\n== Physical Plan ==\n{}", physical.tree_string(config))
}
