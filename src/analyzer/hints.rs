//! `ResolveHints.ResolveJoinStrategyHints`: an `UnresolvedHint` naming a join strategy marks
//! the relations it names with `ResolvedHint`; an unknown hint name, or a relation name found
//! nowhere below the hint, is dropped with a warning, as in Spark.
//!
//! ```text
//! 'UnresolvedHint BROADCAST, ['c]          Join Inner, (...)
//! +- Join Inner, (...)               =>    :- SubqueryAlias o
//!    :- SubqueryAlias o                    +- ResolvedHint (strategy=broadcast)
//!    +- SubqueryAlias c                       +- SubqueryAlias c
//! ```
//! The search does not enter a `SubqueryAlias` that does not match (another scope) nor a plan
//! that already carries a hint.

use std::sync::Arc;

use crate::error::{KilnError, Result};
use crate::expr::{Expr, SortOrder};
use crate::plan::{JoinStrategyHint, LogicalPlan, RepartitionScheme};

/// Spark's `ResolveCoalesceHints`: `COALESCE(n)`, `REPARTITION(n)`, `REPARTITION([n,] c, ...)`
/// and `REPARTITION_BY_RANGE([n,] c, ...)` make a Repartition of `child` (its keys still to be
/// resolved); None for any other hint.
pub(super) fn partitioning_hint(name: &str, params: &[String], child: Arc<LogicalPlan>) -> Option<Result<LogicalPlan>> {
    let name = name.to_ascii_uppercase();
    if !matches!(name.as_str(), "COALESCE" | "REPARTITION" | "REPARTITION_BY_RANGE") {
        return None;
    }
    let number = params.first().and_then(|p| p.parse::<i64>().ok());
    let names = &params[usize::from(number.is_some())..];
    if name == "COALESCE" && (number.is_none() || !names.is_empty()) {
        return Some(Err(KilnError::analysis("_LEGACY_ERROR_TEMP_1048", "COALESCE Hint expects a partition number as a parameter.")));
    }
    if let Some(n) = names.iter().find(|p| p.parse::<f64>().is_ok()) {
        return Some(Err(KilnError::analysis(
            "_LEGACY_ERROR_TEMP_1047",
            format!("{name} Hint parameters should include an optional integral partitionNum and/or columns, but \"{n}\" can not be recognized as either partitionNum or columns."),
        )));
    }
    let partitions = match number.map(partition_count).transpose() {
        Ok(n) => n,
        Err(e) => return Some(Err(e)),
    };
    let keys: Vec<Expr> = names.iter().map(|p| Expr::UnresolvedAttribute(p.split('.').map(str::to_string).collect())).collect();
    let scheme = match (name.as_str(), partitions) {
        ("COALESCE", Some(partitions)) => RepartitionScheme::Count { partitions, shuffle: false },
        ("REPARTITION", Some(partitions)) if keys.is_empty() => RepartitionScheme::Count { partitions, shuffle: true },
        // No columns: Spark's RepartitionByExpression of none, dealt round robin.
        (_, partitions) if keys.is_empty() => RepartitionScheme::Hash { keys, partitions },
        ("REPARTITION", partitions) => RepartitionScheme::Hash { keys, partitions },
        (_, partitions) => RepartitionScheme::Range { order: keys.into_iter().map(|k| SortOrder { expr: k, ascending: true, nulls_first: true }).collect(), partitions },
    };
    Some(Ok(LogicalPlan::Repartition { scheme, child }))
}

/// A number of partitions as Spark checks it (`require(numPartitions > 0)`).
pub(crate) fn partition_count(n: i64) -> Result<usize> {
    usize::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| KilnError::Config(format!("requirement failed: Number of partitions ({n}) must be positive.")))
}


/// The plan an `UnresolvedHint` over `child` becomes; warnings go to `warnings`.
pub(super) fn resolve_hint(name: &str, params: &[String], child: Arc<LogicalPlan>, warnings: &mut Vec<String>) -> LogicalPlan {
    let Some(strategy) = JoinStrategyHint::from_name(name) else {
        warnings.push(format!("Unrecognized hint: {}", pretty(name, params)));
        return unwrap(child);
    };
    if params.is_empty() {
        return LogicalPlan::ResolvedHint { strategy, child };
    }
    let mut found = vec![false; params.len()];
    let plan = mark(&child, strategy, params, &mut found, warnings);
    for (p, hit) in params.iter().zip(found) {
        if !hit {
            warnings.push(format!("Could not find relation '{p}' specified in hint '{}'.", pretty(name, params)));
        }
    }
    unwrap(plan)
}

/// Warnings for the hints of a resolved plan that no join will take: a `ResolvedHint` reaches
/// a Join only through unary operators (`EliminateResolvedHint` drops the others).
pub(super) fn unused_hints(plan: &LogicalPlan, below_join: bool, warnings: &mut Vec<String>) {
    if let LogicalPlan::ResolvedHint { strategy, .. } = plan {
        if !below_join {
            warnings.push(format!("A join hint (strategy={}) is specified but it is not part of a join relation.", strategy.display_name()));
        }
    }
    let children = plan.children();
    let join = matches!(plan, LogicalPlan::Join { .. });
    let keep = below_join && children.len() == 1;
    for c in children {
        unused_hints(c, join || keep, warnings);
    }
}

/// `BROADCAST(a, b)`, as Spark names a hint in its warnings.
fn pretty(name: &str, params: &[String]) -> String {
    if params.is_empty() {
        name.to_string()
    } else {
        format!("{name}({})", params.join(", "))
    }
}

fn unwrap(plan: Arc<LogicalPlan>) -> LogicalPlan {
    Arc::try_unwrap(plan).unwrap_or_else(|shared| shared.as_ref().clone())
}

/// True when the hint's name is a suffix of the alias's parts (`c` matches `c`,
/// `customers` and `default.customers` match `spark_catalog.default.customers`), ignoring case.
fn matches(param: &str, alias: &str) -> bool {
    let (want, have): (Vec<&str>, Vec<&str>) = (param.split('.').collect(), alias.split('.').collect());
    want.len() <= have.len() && want.iter().rev().zip(have.iter().rev()).all(|(w, h)| w.eq_ignore_ascii_case(h))
}

fn mark(
    plan: &Arc<LogicalPlan>,
    strategy: JoinStrategyHint,
    params: &[String],
    found: &mut [bool],
    warnings: &mut Vec<String>,
) -> Arc<LogicalPlan> {
    match plan.as_ref() {
        LogicalPlan::SubqueryAlias { alias, .. } => {
            let Some(i) = params.iter().position(|p| matches(p, alias)) else { return plan.clone() };
            found[i] = true;
            Arc::new(LogicalPlan::ResolvedHint { strategy, child: plan.clone() })
        }
        LogicalPlan::ResolvedHint { strategy: existing, child } => {
            let LogicalPlan::SubqueryAlias { alias, .. } = child.as_ref() else { return plan.clone() };
            let Some(i) = params.iter().position(|p| matches(p, alias)) else { return plan.clone() };
            found[i] = true;
            // Hints resolve inside out, so this one was written first: it wins (HintInfo.merge).
            if *existing != strategy {
                warnings.push(format!(
                    "Hint (strategy={}) is overridden by another hint and will not take effect.",
                    existing.display_name()
                ));
            }
            Arc::new(LogicalPlan::ResolvedHint { strategy, child: child.clone() })
        }
        _ => {
            let children = plan.children();
            let new: Vec<Arc<LogicalPlan>> = children.iter().map(|c| mark(c, strategy, params, found, warnings)).collect();
            if new.iter().zip(&children).all(|(n, o)| Arc::ptr_eq(n, o)) {
                plan.clone()
            } else {
                Arc::new(plan.with_new_children(new))
            }
        }
    }
}
