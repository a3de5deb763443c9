//! The analyzer: turns the parser's unresolved plan into a resolved, typed plan.
//!
//! It runs as a list of named steps over the tree, bottom-up (children resolve before parents):
//! `ResolveRelations` (catalog look-up, fresh ExprIds per scan), `ResolveReferences` (columns,
//! `*`, functions, USING joins, HAVING and ORDER BY on columns the child hides), `TypeCoercion`
//! (Spark 4's implicit casts and decimal rules) and `CheckAnalysis` (errors Spark raises:
//! unknown names with suggestions, ambiguous names, non-boolean filters, missing aggregation).

mod coercion;
mod generators;
mod hints;
mod resolve;
mod window;

use std::sync::Arc;

use crate::catalog::Catalog;
use crate::error::Result;
use crate::plan::LogicalPlan;

pub use coercion::coerce_expr;

/// Resolves `plan` against `catalog`.
pub fn analyze(plan: &Arc<LogicalPlan>, catalog: &Catalog) -> Result<Arc<LogicalPlan>> {
    analyze_with_warnings(plan, catalog).map(|(p, _)| p)
}

/// Resolves `plan` against `catalog`; also returns what the analyzer warned about (hints it
/// could not apply: an unknown hint name, a relation named in a hint that is not there).
pub fn analyze_with_warnings(plan: &Arc<LogicalPlan>, catalog: &Catalog) -> Result<(Arc<LogicalPlan>, Vec<String>)> {
    let resolver = resolve::Resolver { catalog, outer: vec![], warnings: Default::default() };
    let plan = resolver.resolve(plan)?;
    check_map_keys(&plan)?;
    let mut warnings = resolver.warnings.into_inner();
    hints::unused_hints(&plan, false, &mut warnings);
    Ok((plan, warnings))
}

/// Spark's checks on map values as keys: a map cannot be sorted (INVALID_ORDERING_TYPE) nor
/// made distinct (SET_OPERATION_ON_MAP_TYPE); kiln does not group by one yet (Spark 4 groups by
/// the map's sorted entries).
fn check_map_keys(plan: &LogicalPlan) -> Result<()> {
    use crate::error::KilnError;
    use crate::types::is_orderable;
    let upper = |t: &arrow::datatypes::DataType| crate::types::sql_type_name(t);
    match plan {
        LogicalPlan::Sort { order, .. } => {
            for o in order {
                let t = o.expr.data_type()?;
                if !is_orderable(&t) {
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.INVALID_ORDERING_TYPE",
                        format!(
                            "Cannot resolve \"{} {} {}\" due to data type mismatch: The `sortorder` does not support ordering on type \"{}\".",
                            crate::expr::sql_name(&o.expr),
                            if o.ascending { "ASC" } else { "DESC" },
                            if o.nulls_first { "NULLS FIRST" } else { "NULLS LAST" },
                            upper(&t)
                        ),
                    ));
                }
            }
        }
        LogicalPlan::Distinct { child } => {
            for a in child.output() {
                if !is_orderable(&a.data_type) {
                    return Err(KilnError::analysis(
                        "UNSUPPORTED_FEATURE.SET_OPERATION_ON_MAP_TYPE",
                        format!(
                            "The feature is not supported: Cannot have MAP type columns in a set operation (INTERSECT, EXCEPT, etc.), but the type of column `{}` is \"{}\".",
                            a.name,
                            upper(&a.data_type)
                        ),
                    ));
                }
            }
        }
        LogicalPlan::Aggregate { grouping, .. } => {
            for g in grouping {
                let t = g.data_type()?;
                if !is_orderable(&t) {
                    return Err(KilnError::unsupported(format!(
                        "GROUP BY {} of type \"{}\": grouping by map values is not supported yet",
                        crate::expr::sql_name(g),
                        upper(&t)
                    )));
                }
            }
        }
        _ => {}
    }
    for c in plan.children() {
        check_map_keys(c)?;
    }
    Ok(())
}
