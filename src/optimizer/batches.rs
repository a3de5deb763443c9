//! The default batches, in Spark's order and under Spark's names.

use super::rules::*;
use super::{Batch, Strategy};
use crate::config::Config;

/// Rules the plan cannot do without: the physical planner has no operator for what they remove
/// (`ResolvedHint`, `SubqueryAlias`, `Distinct`, subquery expressions). `spark.sql.optimizer.excludedRules`
/// ignores them with a warning, as Spark's `nonExcludableRules`.
pub const NON_EXCLUDABLE_RULES: &[&str] =
    &["EliminateResolvedHint", "EliminateSubqueryAliases", "ReplaceExpressions", "ComputeCurrentTime", "ReplaceIntersectWithSemiJoin", "ReplaceExceptWithAntiJoin", "RewriteExceptAll", "RewriteIntersectAll", "ReplaceDistinctWithAggregate", "RewritePredicateSubquery", "RewriteCorrelatedScalarSubquery", "RewriteLateralSubquery"];

/// Catalyst's batches, trimmed to the rules kiln has.
pub fn default_batches(config: &Config) -> Vec<Batch> {
    let fixed = Strategy::FixedPoint(config.optimizer_max_iterations);
    let threshold = config.optimizer_in_set_conversion_threshold;
    // Spark's operatorOptimizationRuleSet order: moves first, then pruning, then expressions.
    let operator_optimization = || -> Vec<Box<dyn super::Rule>> {
        vec![
            Box::new(PushProjectionThroughUnion),
            Box::new(ReorderJoin),
            Box::new(EliminateOuterJoin),
            Box::new(PushDownPredicates),
            Box::new(PushDownLeftSemiAntiJoin),
            Box::new(PushLeftSemiLeftAntiThroughJoin),
            Box::new(LimitPushDown),
            Box::new(ColumnPruning),
            Box::new(CollapseProject),
            Box::new(CombineUnions),
            Box::new(NullPropagation),
            Box::new(OptimizeIn { threshold }),
            Box::new(ConstantFolding),
            Box::new(BooleanSimplification),
            Box::new(ReplaceNullWithFalseInPredicate),
            Box::new(PruneFilters),
            Box::new(SimplifyCasts),
            Box::new(EliminateSorts),
            Box::new(RemoveRedundantAliases),
            Box::new(RemoveNoopOperators),
        ]
    };
    let local_relation = || -> Vec<Box<dyn super::Rule>> { vec![Box::new(ConvertToLocalRelation), Box::new(PropagateEmptyRelation)] };
    let infer: Vec<Box<dyn super::Rule>> =
        if config.constraint_propagation_enabled { vec![Box::new(InferFiltersFromConstraints)] } else { vec![] };
    vec![
        // Aliases only scope names for the analyzer; DISTINCT is an Aggregate to the planner.
        Batch {
            name: "Finish Analysis",
            strategy: Strategy::Once,
            rules: vec![
                Box::new(EliminateResolvedHint),
                Box::new(EliminateSubqueryAliases),
                Box::new(ReplaceExpressions),
                Box::new(ComputeCurrentTime),
                // Spark's "Replace Operators": set operations become joins (their Distinct too).
                Box::new(ReplaceIntersectWithSemiJoin),
                Box::new(ReplaceExceptWithAntiJoin),
                Box::new(RewriteExceptAll),
                Box::new(RewriteIntersectAll),
                Box::new(ReplaceDistinctWithAggregate),
            ],
        },
        // Spark rewrites subqueries late ("RewriteSubquery"); kiln does it first, because the
        // rules below neither look into subquery plans nor keep their outer references intact.
        Batch {
            name: "RewriteSubquery",
            strategy: Strategy::Once,
            // Lateral joins first: the other two copy outer plans (domain joins), which must hold none.
            rules: vec![Box::new(RewriteLateralSubquery), Box::new(RewritePredicateSubquery), Box::new(RewriteCorrelatedScalarSubquery)],
        },
        // The parser builds binary unions; one flat Union is what the rules below look through.
        Batch { name: "Union", strategy: Strategy::Once, rules: vec![Box::new(CombineUnions)] },
        // Spark runs it before the LocalRelation batches it feeds: `LIMIT 0` is empty.
        Batch { name: "OptimizeLimitZero", strategy: Strategy::Once, rules: vec![Box::new(OptimizeLimitZero)] },
        // Queries over VALUES and provably empty inputs fold before anything else looks at them.
        Batch { name: "LocalRelation early", strategy: fixed, rules: local_relation() },
        Batch { name: "Operator Optimization before Inferring Filters", strategy: fixed, rules: operator_optimization() },
        // Inferred filters must see predicates already pushed to their final place.
        Batch { name: "Infer Filters", strategy: Strategy::Once, rules: infer },
        // Spark runs this rule among the operator rules and tags each join it has processed;
        // run once here, where every filter has reached its join condition.
        Batch { name: "Push Extra Predicate Through Join", strategy: Strategy::Once, rules: vec![Box::new(PushExtraPredicateThroughJoin)] },
        Batch { name: "Operator Optimization after Inferring Filters", strategy: fixed, rules: operator_optimization() },
        // Spark's scan push-down batch; kiln's scans take the Filter as it stands afterwards.
        Batch { name: "Early Filter and Projection Push-Down", strategy: Strategy::Once, rules: vec![Box::new(PruneFileSourcePartitions)] },
        // Spark's CBO reorder (off unless both settings are on); it sees the pruned scans' rows.
        Batch {
            name: "Join Reorder",
            strategy: Strategy::Once,
            rules: vec![Box::new(CostBasedJoinReorder {
                enabled: config.cbo_enabled && config.cbo_join_reorder_enabled,
                dp_threshold: config.cbo_join_reorder_dp_threshold,
                card_weight: config.cbo_join_reorder_card_weight,
            })],
        },
        // Filters folded to false above are empty relations now; collapse what sits on them.
        Batch { name: "LocalRelation", strategy: fixed, rules: local_relation() },
        // Every filter has reached its join and every provably empty join is gone.
        Batch {
            name: "Check Cartesian Products",
            strategy: Strategy::Once,
            rules: vec![Box::new(CheckCartesianProducts { cross_join_enabled: config.cross_join_enabled })],
        },
        // Runtime Bloom filters go on top of a join's side; the next batch moves them to its scan.
        Batch { name: "InjectRuntimeFilter", strategy: Strategy::Once, rules: vec![Box::new(InjectRuntimeFilter::new(config))] },
        Batch { name: "Pushdown Filters from PartitionPruning", strategy: fixed, rules: vec![Box::new(PushDownPredicates)] },
    ]
}
