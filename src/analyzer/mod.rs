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
    let mut warnings = resolver.warnings.into_inner();
    hints::unused_hints(&plan, false, &mut warnings);
    Ok((plan, warnings))
}
