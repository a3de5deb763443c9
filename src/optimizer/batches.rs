//! The default batches, in Spark's order and under Spark's names.

use super::rules::*;
use super::{Batch, Strategy};
use crate::config::Config;

/// Rules the plan cannot do without: the physical planner has no operator for what they remove
/// (`SubqueryAlias`, `Distinct`, subquery expressions). `spark.sql.optimizer.excludedRules`
/// ignores them with a warning, as Spark's `nonExcludableRules`.
pub const NON_EXCLUDABLE_RULES: &[&str] = &["EliminateSubqueryAliases", "ReplaceDistinctWithAggregate"];

/// Catalyst's batches, trimmed to the rules kiln has.
pub fn default_batches(config: &Config) -> Vec<Batch> {
    let fixed = Strategy::FixedPoint(config.optimizer_max_iterations);
    let operator_optimization = || -> Vec<Box<dyn super::Rule>> {
        vec![
            Box::new(PushDownPredicates),
            Box::new(ColumnPruning),
            Box::new(CollapseProject),
            Box::new(EliminateOuterJoin),
            Box::new(ConstantFolding),
            Box::new(BooleanSimplification),
            Box::new(SimplifyCasts),
            Box::new(PruneFilters),
            Box::new(RemoveNoopOperators),
        ]
    };
    vec![
        // Aliases only scope names for the analyzer; DISTINCT is an Aggregate to the planner.
        Batch {
            name: "Finish Analysis",
            strategy: Strategy::Once,
            rules: vec![Box::new(EliminateSubqueryAliases), Box::new(ReplaceDistinctWithAggregate)],
        },
        Batch { name: "Operator Optimization before Inferring Filters", strategy: fixed, rules: operator_optimization() },
        // Inferred IsNotNull filters must see predicates already pushed to their final place.
        Batch { name: "Infer Filters", strategy: Strategy::Once, rules: vec![Box::new(InferFiltersFromConstraints)] },
        Batch { name: "Operator Optimization after Inferring Filters", strategy: fixed, rules: operator_optimization() },
    ]
}
