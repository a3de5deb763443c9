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
mod session;
mod window;

use std::sync::Arc;

use crate::catalog::Catalog;
use crate::error::Result;
use crate::plan::LogicalPlan;
use crate::types::time_zone::Zone;

pub use coercion::coerce_expr;

/// The name EXTRACT(field FROM d) and date_part resolve through (Spark's parser's
/// `'extract(field, d)`): arguments the field as written (`YEAR`, `mon`) and the value.
pub(crate) const EXTRACT: &str = "extract";
pub(crate) use hints::partition_count;

/// Functions a bare name calls when no column has that name (Spark's
/// LiteralFunctionResolution): `SELECT current_date FROM t` reads t's column `current_date` if
/// there is one.
pub(crate) fn is_literal_function(name: &str) -> bool {
    name.eq_ignore_ascii_case("current_date") || name.eq_ignore_ascii_case("current_timestamp")
}

/// The settings that change how names and positions resolve (Spark's defaults: all on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnalyzerOptions {
    /// `spark.sql.groupByOrdinal`: `GROUP BY 1` is the first select-list item.
    pub group_by_ordinal: bool,
    /// `spark.sql.groupByAliases`: `GROUP BY name` may name a select-list alias.
    pub group_by_aliases: bool,
    /// `spark.sql.orderByOrdinal`: `ORDER BY 1` is the first select-list item.
    pub order_by_ordinal: bool,
    /// `spark.sql.session.timeZone`: the zone TIMESTAMP casts and functions read and write
    /// wall-clock times in.
    pub time_zone: Zone,
    /// `spark.sql.ansi.enabled`: false evaluates as Spark's legacy mode (`legacy_eval_mode`).
    pub ansi: bool,
    /// `spark.sql.caseSensitive`: column names match in their exact case (`resolve::name_eq`).
    pub case_sensitive: bool,
    /// `spark.sql.legacy.parser.havingWithoutGroupByAsWhere`: HAVING without GROUP BY over a
    /// select list without aggregates filters the list's rows, as a WHERE above it.
    pub having_as_where: bool,
    /// `spark.sql.legacy.interval.enabled`: `date - date` and `timestamp - timestamp` are
    /// calendar intervals.
    pub legacy_interval: bool,
}

impl Default for AnalyzerOptions {
    fn default() -> Self {
        AnalyzerOptions { group_by_ordinal: true, group_by_aliases: true, order_by_ordinal: true, time_zone: Zone::UTC, ansi: true, case_sensitive: false, having_as_where: false, legacy_interval: false }
    }
}

impl From<&crate::config::Config> for AnalyzerOptions {
    fn from(c: &crate::config::Config) -> Self {
        AnalyzerOptions {
            group_by_ordinal: c.group_by_ordinal,
            group_by_aliases: c.group_by_aliases,
            order_by_ordinal: c.order_by_ordinal,
            time_zone: c.time_zone(),
            ansi: c.ansi_enabled,
            case_sensitive: c.case_sensitive,
            having_as_where: c.having_without_group_by_as_where,
            legacy_interval: c.legacy_interval,
        }
    }
}

/// Resolves `plan` against `catalog`.
pub fn analyze(plan: &Arc<LogicalPlan>, catalog: &Catalog) -> Result<Arc<LogicalPlan>> {
    analyze_with_warnings(plan, catalog, AnalyzerOptions::default()).map(|(p, _)| p)
}

/// Resolves `plan` against `catalog` under `options`; also returns what the analyzer warned
/// about (hints it could not apply: an unknown hint name, a relation named in a hint that is not there).
pub fn analyze_with_warnings(plan: &Arc<LogicalPlan>, catalog: &Catalog, options: AnalyzerOptions) -> Result<(Arc<LogicalPlan>, Vec<String>)> {
    let resolver = resolve::Resolver { catalog, options, outer: vec![], warnings: Default::default(), using_hidden: Default::default(), outer_aggregates: false };
    let flags = session::Flags { case_sensitive: options.case_sensitive, ansi: options.ansi, legacy_interval: options.legacy_interval };
    let plan = session::with_flags(flags, || crate::types::with_legacy_coercion(!flags.ansi, || resolver.resolve(plan)))?;
    let plan = sort_map_grouping_keys(&plan)?;
    let plan = resolve_time_zones(&plan, options.time_zone)?;
    let plan = if options.ansi { plan } else { legacy_eval_mode(&plan)? };
    check_map_keys(&plan)?;
    let mut warnings = resolver.warnings.into_inner();
    hints::unused_hints(&plan, false, &mut warnings);
    Ok((plan, warnings))
}

/// Spark's `ResolveTimeZone`: every cast that reads or writes a TIMESTAMP and every zone-aware
/// built-in (hour, date_format, date_trunc, ...) takes the session time zone, so the plan
/// carries it to wherever the expression runs.
fn resolve_time_zones(plan: &Arc<LogicalPlan>, zone: Zone) -> Result<Arc<LogicalPlan>> {
    plan.transform_up_with_subqueries(&mut |node| Ok(Arc::new(node.map_expressions(|e| in_zone(e, zone))?)))
}

/// `spark.sql.ansi.enabled=false`: each operation whose ANSI error Spark's legacy mode turns
/// into a value (integral overflow wraps; a failing cast, a zero divisor, an index or key not
/// there, a datetime that does not parse give NULL) is wrapped in
/// `MoreFn::Legacy`, which evaluates it as usual and gives the legacy value on the rows where it
/// fails. Generated code runs the operation itself; a row that fails there hands its batch to
/// the interpreter, as every ANSI error does. `size(x)` is `coalesce(size(x), -1)`.
fn legacy_eval_mode(plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
    use crate::expr::{Builtin, Expr, MoreFn, NestedFn, ScalarFunc};
    use arrow::datatypes::DataType;
    let numeric = |e: &Expr| e.data_type().is_ok_and(|t| crate::types::is_numeric(&t));
    let wrap = |e: Expr| Expr::Function { func: ScalarFunc::Builtin(Builtin::More(MoreFn::Legacy)), args: vec![e] };
    plan.transform_up_with_subqueries(&mut |node| {
        Ok(Arc::new(node.map_expressions(|e| {
            e.transform_up(&mut |x| {
                let legacy = match &x {
                    Expr::Binary { op, .. } => op.is_arithmetic() && numeric(&x),
                    Expr::Negative(_) => numeric(&x),
                    Expr::Cast { child, to, .. } => {
                        let from = child.data_type()?;
                        let widening = crate::types::is_numeric(&from) && crate::types::wider_type(&from, to).as_ref() == Some(to);
                        from != *to && from != DataType::Null && !crate::types::is_string(to) && !widening
                    }
                    Expr::Function { func, .. } => matches!(
                        func,
                        ScalarFunc::Abs
                            | ScalarFunc::Round
                            | ScalarFunc::Builtin(
                                Builtin::ElementAt | Builtin::GetItem | Builtin::ToDate(_) | Builtin::ToTimestamp(_) | Builtin::UnixTimestamp(_)
                                    | Builtin::More(MoreFn::MakeDate | MoreFn::MakeTimestamp(_) | MoreFn::Bround)
                                    | Builtin::Nested(NestedFn::GetMapValue | NestedFn::MapElementAt)
                            )
                    ),
                    _ => false,
                };
                // Spark's Sum in legacy mode: a bigint sum wraps, a decimal one out of range is NULL.
                if let Expr::Aggregate { func: crate::expr::AggFunc::Sum, args, distinct } = &x {
                    let arg_type = args.first().map(Expr::data_type).transpose()?;
                    if arg_type.is_some_and(|t| crate::types::is_integral(&t) || matches!(t, DataType::Decimal128(..))) {
                        let func = crate::expr::AggFunc::Builtin(crate::expr::AggBuiltin { kind: crate::expr::AggKind::LegacySum, name: "sum", param: 0 });
                        return Ok(Expr::Aggregate { func, args: args.clone(), distinct: *distinct });
                    }
                }
                // Spark's legacy sizeOfNull: size(NULL) is -1 (and never NULL otherwise).
                if let Expr::Function { func: ScalarFunc::Builtin(Builtin::Size | Builtin::Nested(NestedFn::MapSize)), .. } = &x {
                    return Ok(Expr::Function { func: ScalarFunc::Coalesce, args: vec![x, Expr::Literal(crate::types::ScalarValue::Int32(-1))] });
                }
                Ok::<_, crate::error::KilnError>(if legacy { wrap(x) } else { x })
            })
        })?))
    })
}

/// `e` with every timestamp cast and zone-aware built-in in it taking `zone`.
pub(crate) fn in_zone(e: crate::expr::Expr, zone: Zone) -> Result<crate::expr::Expr> {
    use crate::expr::{Expr, ScalarFunc};
    e.transform_up(&mut |x| {
        Ok(match x {
            Expr::Cast { child, to, zone: None } if mentions_timestamp(&child.data_type()?) || mentions_timestamp(&to) => {
                Expr::Cast { child, to, zone: Some(zone) }
            }
            Expr::Function { func: ScalarFunc::Builtin(b), args } => Expr::Function { func: ScalarFunc::Builtin(b.with_zone(zone)), args },
            other => other,
        })
    })
}

/// True for a timestamp type or a nested type holding one.
fn mentions_timestamp(t: &arrow::datatypes::DataType) -> bool {
    use arrow::datatypes::DataType;
    match t {
        DataType::Timestamp(..) => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => mentions_timestamp(f.data_type()),
        DataType::Struct(fields) => fields.iter().any(|f| mentions_timestamp(f.data_type())),
        _ => false,
    }
}

/// Spark 4's `InsertMapSortInGroupingExpressions`: a map grouping key is grouped by its entries
/// sorted by key (`map_sort(m)`), in the grouping list and wherever the output list reads it,
/// so maps with the same entries in another order make one group.
fn sort_map_grouping_keys(plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
    use crate::expr::{Attribute, Builtin, Expr, ExprId, NestedFn, ScalarFunc};
    // A bare map column in the output list becomes `map_sort(m) AS m` with a new id; the plan
    // above reads that id instead.
    let mut renamed: std::collections::HashMap<ExprId, Attribute> = std::collections::HashMap::new();
    plan.transform_up(&mut |node| {
        let node = if renamed.is_empty() {
            node
        } else {
            Arc::new(node.map_expressions(|e| {
                e.transform_up(&mut |x| {
                    Ok::<_, crate::error::KilnError>(match x {
                        Expr::Attribute(a) if renamed.contains_key(&a.id) => Expr::Attribute(renamed[&a.id].clone()),
                        other => other,
                    })
                })
            })?)
        };
        let LogicalPlan::Aggregate { grouping, aggregates, child } = node.as_ref() else { return Ok(node) };
        let mut maps = vec![];
        for g in grouping {
            if matches!(g.data_type()?, arrow::datatypes::DataType::Map(..)) {
                maps.push(g.clone());
            }
        }
        if maps.is_empty() {
            return Ok(node);
        }
        let sorted = |e: Expr| Expr::Function { func: ScalarFunc::Builtin(Builtin::Nested(NestedFn::MapSort)), args: vec![e] };
        let grouping = grouping.iter().map(|g| if maps.contains(g) { sorted(g.clone()) } else { g.clone() }).collect();
        let mut aggregates_out = Vec::with_capacity(aggregates.len());
        for a in aggregates {
            aggregates_out.push(match a {
                Expr::Attribute(attr) if maps.contains(a) => {
                    let id = ExprId::next();
                    renamed.insert(attr.id, Attribute { id, ..attr.clone() });
                    Expr::Alias { child: Box::new(sorted(a.clone())), name: attr.name.clone(), id }
                }
                // Bottom-up, so a wrapped key is not visited again.
                _ => a.clone().transform_up(&mut |e| Ok::<_, crate::error::KilnError>(if maps.contains(&e) { sorted(e) } else { e }))?,
            });
        }
        Ok(Arc::new(LogicalPlan::Aggregate { grouping, aggregates: aggregates_out, child: child.clone() }))
    })
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
                if !is_orderable(&t) && !matches!(t, arrow::datatypes::DataType::Map(..)) {
                    return Err(KilnError::unsupported(format!(
                        "GROUP BY {} of type \"{}\": grouping by a struct or array holding a map is not supported yet",
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
