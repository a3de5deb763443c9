//! Name resolution: relations, columns, stars, functions, USING joins, HAVING, ORDER BY.

use std::collections::HashMap;
use std::sync::Arc;

use crate::catalog::Catalog;
use crate::error::{closest_match, KilnError, Result};
use crate::expr::{AggFunc, AggKind, Attribute, BinaryOp, Expr, ExprId, ScalarFunc, SortOrder};
use crate::plan::{grouping_sets, named_output, GroupingSetsKind, JoinType, LogicalPlan};
use crate::types::ScalarValue;
use arrow::datatypes::DataType;

use super::coercion::{coerce_expr, require_boolean};

/// The most elements a CUBE may have: 2^12 grouping sets, each a copy of every input row.
const MAX_CUBE_ELEMENTS: usize = 12;

pub(super) struct Resolver<'a> {
    pub catalog: &'a Catalog,
    /// groupByOrdinal, groupByAliases, orderByOrdinal.
    pub options: super::AnalyzerOptions,
    /// Columns of the enclosing queries, innermost first, when resolving a subquery: a name
    /// not found locally resolves to an `OuterReference` to one of them.
    pub outer: Vec<Attribute>,
    /// Hints that could not be applied (Spark logs these as warnings).
    pub warnings: std::cell::RefCell<Vec<String>>,
    /// Per USING / NATURAL join's Project (by `using_key`): the key columns its output
    /// leaves out, which a qualified name may still read (Spark's `qualifiedAccessOnly`).
    pub using_hidden: std::cell::RefCell<Vec<(Vec<ExprId>, Vec<Attribute>)>>,
    /// Resolving a subquery of a HAVING condition: an aggregate of outer columns only is the
    /// enclosing query's (Spark's outer aggregate).
    pub outer_aggregates: bool,
}

impl Resolver<'_> {
    pub fn resolve(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        if let LogicalPlan::UnionLoop { id, anchor, recursion, limit, output } = plan.as_ref() {
            if !output.is_empty() {
                return Ok(plan.clone());
            }
            return self.resolve_union_loop(*id, anchor, recursion, *limit).map(Arc::new);
        }
        // Spark's AstBuilder under spark.sql.legacy.parser.havingWithoutGroupByAsWhere: HAVING
        // without GROUP BY over a list without aggregates is Filter(condition, Project(list)).
        if let LogicalPlan::Filter { condition, child } = plan.as_ref() {
            if let LogicalPlan::Aggregate { grouping, aggregates, child: input } = child.as_ref() {
                if self.options.having_as_where && grouping.is_empty() && !aggregates.iter().any(Expr::contains_aggregate) {
                    return self.having_as_where(condition, aggregates, input);
                }
            }
        }
        // HAVING and ORDER BY may look below their child, so they resolve before recursing fully.
        let children = plan.children().into_iter().map(|c| self.resolve(c)).collect::<Result<Vec<_>>>()?;
        let node = plan.with_new_children(children);
        self.resolve_node(node).map(Arc::new)
    }

    /// `SELECT list FROM input HAVING condition` as Filter(condition, Project(list)); columns of
    /// the input the list leaves out are carried through it and dropped above (Spark's
    /// ResolveMissingReferences: `SELECT a + b FROM t HAVING a + b > 3`).
    fn having_as_where(&self, condition: &Expr, list: &[Expr], input: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        let project = self.resolve(&Arc::new(LogicalPlan::Project { list: list.to_vec(), child: input.clone() }))?;
        let filter = |child: Arc<LogicalPlan>| self.resolve(&Arc::new(LogicalPlan::Filter { condition: condition.clone(), child }));
        let LogicalPlan::Project { list, child } = project.as_ref() else { return filter(project) };
        let first = match self.resolve_expr(condition.clone(), &project.output()) {
            Ok(_) => return filter(project),
            Err(e) => e,
        };
        let below = self.resolve_expr(condition.clone(), &child.output()).map_err(|_| first)?;
        let shown = named_outputs_ids(list);
        let missing: Vec<Expr> = child.output().into_iter().filter(|a| below.references().contains(&a.id) && !shown.contains(&a.id)).map(|a| a.expr()).collect();
        let widened = Arc::new(LogicalPlan::Project { list: list.iter().cloned().chain(missing).collect(), child: child.clone() });
        let output: Vec<Expr> = project.output().iter().map(|a| a.expr()).collect();
        Ok(Arc::new(LogicalPlan::Project { list: output, child: filter(widened)? }))
    }

    pub(super) fn resolve_node(&self, node: LogicalPlan) -> Result<LogicalPlan> {
        // Only a select list may call a generator.
        let generator_host = matches!(node, LogicalPlan::Project { .. } | LogicalPlan::Generate { .. })
            || matches!(&node, LogicalPlan::Aggregate { grouping, .. } if !grouping.iter().any(super::generators::contains_generator));
        if !generator_host && node.expressions().into_iter().any(super::generators::contains_generator) {
            return Err(super::generators::outside_select(&node.node_string()));
        }
        match node {
            LogicalPlan::UnresolvedRelation { name, args: Some(args) } => self.resolve_table_function(&name, args),
            LogicalPlan::UnresolvedRelation { name, args: None } => {
                let output = |table: &crate::catalog::Table| {
                    table.schema.fields().iter().map(|f| Attribute::new(f.name().clone(), f.data_type().clone(), f.is_nullable())).collect()
                };
                // Files by path are a Relation without a name to qualify columns with, as in Spark.
                if let Some(table) = self.catalog.file_table(&name)? {
                    let output = output(&table);
                    return Ok(LogicalPlan::Relation { table: Arc::new(table), output });
                }
                let table_name = name.last().cloned().unwrap_or_default();
                let table = self.catalog.lookup(&table_name)?;
                let output = output(&table);
                let alias = table.qualified_name();
                Ok(LogicalPlan::SubqueryAlias { alias, child: Arc::new(LogicalPlan::Relation { table, output }) })
            }
            LogicalPlan::Project { list, child } => {
                if let Some(plan) = self.extract_generator(&list, &child)? {
                    return Ok(plan);
                }
                let input = child.output();
                let (list, child) = match self.resolve_select_list(list.clone(), &input) {
                    Ok(l) => (l, child),
                    Err(e) => match self.resolve_select_list_with_hidden(list.clone(), &child, e) {
                        Ok(x) => x,
                        Err(e) => return self.resolve_lateral_aliases(list, child, e),
                    },
                };
                if list.iter().any(|e| e.contains_window()) {
                    if list.iter().any(|e| e.contains_aggregate()) {
                        return self.window_over_aggregate(vec![], list, child);
                    }
                    return super::window::extract_windows(list, child);
                }
                list.iter().try_for_each(super::window::check_no_bare_window_function)?;
                if list.iter().any(|e| e.contains_aggregate()) {
                    let aggregates = check_aggregate_output(list, &[])?;
                    return Ok(LogicalPlan::Aggregate { grouping: vec![], aggregates, child });
                }
                Ok(LogicalPlan::Project { list, child })
            }
            LogicalPlan::Filter { condition, child } => {
                if let LogicalPlan::Aggregate { .. } = child.as_ref() {
                    return self.resolve_having(condition, child);
                }
                let (condition, child, exposed) = match self.resolve_expr(condition.clone(), &child.output()) {
                    Ok(c) => (c, child, None),
                    // WHERE t2.a over `t1 JOIN t2 USING (a)`: the hidden key, projected away above.
                    Err(e) => {
                        let hidden = self.hidden_columns(&child);
                        let c = self.resolve_expr(condition, &[child.output(), hidden.clone()].concat()).map_err(|_| e)?;
                        let used: Vec<ExprId> = c.references().into_iter().filter(|id| hidden.iter().any(|h| h.id == *id)).collect();
                        let output = child.output();
                        (c, self.expose(&child, &used), Some(output))
                    }
                };
                if let Some(output) = exposed {
                    let hidden = self.hidden_columns(&child);
                    let filter = Arc::new(self.resolve_node(LogicalPlan::Filter { condition, child })?);
                    let list: Vec<Expr> = output.iter().map(|a| a.expr()).collect();
                    // The keys stay readable above, as over the join's own Project.
                    self.using_hidden.borrow_mut().push((using_key(&list, &filter), hidden));
                    return Ok(LogicalPlan::Project { list, child: filter });
                }
                if condition.contains_window() {
                    return Err(KilnError::analysis(
                        "_LEGACY_ERROR_TEMP_1034",
                        format!("It is not allowed to use window functions inside WHERE clause: {condition}."),
                    ));
                }
                // (An aggregate of outer columns only belongs to the enclosing query's HAVING.)
                if condition.exists(&|e| matches!(e, Expr::Aggregate { .. }) && !outer_aggregate(e)) || (condition.exists(&outer_aggregate) && !self.outer_aggregates) {
                    return Err(KilnError::analysis(
                        "INVALID_WHERE_CONDITION",
                        format!("The WHERE condition {condition} contains aggregate functions; use HAVING instead."),
                    ));
                }
                let condition = require_boolean(coerce_expr(condition)?, "WHERE")?;
                Ok(LogicalPlan::Filter { condition, child })
            }
            LogicalPlan::Aggregate { grouping, aggregates, child } => {
                if let Some(plan) = self.extract_generator_over_aggregate(&grouping, &aggregates, &child)? {
                    return Ok(plan);
                }
                let input = child.output();
                // grouping() / grouping_id() outside grouping analytics: Spark's error.
                let aggregates = aggregates.into_iter().map(|e| grouping_calls_over_id(e, &[], &input)).collect::<Result<Vec<_>>>()?;
                let aggregates = self.resolve_select_list(aggregates, &input)?;
                let grouping = grouping
                    .into_iter()
                    .map(|g| self.resolve_grouping(g, &input, &aggregates))
                    .collect::<Result<Vec<_>>>()?;
                if aggregates.iter().any(|e| e.contains_window()) {
                    return self.window_over_aggregate(grouping, aggregates, child);
                }
                aggregates.iter().try_for_each(super::window::check_no_bare_window_function)?;
                let aggregates = check_aggregate_output(aggregates, &grouping)?;
                Ok(LogicalPlan::Aggregate { grouping, aggregates, child })
            }
            LogicalPlan::GroupingSets { kind, elements, exprs, aggregates, child } => {
                // The grouping id is a bigint with a bit per column; a CUBE copies each row 2^n times.
                if exprs.len() > 63 {
                    return Err(KilnError::analysis(
                        "GROUPING_SIZE_LIMIT_EXCEEDED",
                        format!("Grouping sets size cannot be greater than 63, got {} grouping columns.", exprs.len()),
                    ));
                }
                if kind == GroupingSetsKind::Cube && elements.len() > MAX_CUBE_ELEMENTS {
                    return Err(KilnError::unsupported(format!(
                        "CUBE of {} elements ({} grouping sets): at most {MAX_CUBE_ELEMENTS}; list the sets you need with GROUPING SETS",
                        elements.len(),
                        1u128 << elements.len().min(127)
                    )));
                }
                self.resolve_grouping_sets(&grouping_sets(kind, &elements), exprs, aggregates, child)
            }
            LogicalPlan::Join { left, right, join_type, condition, using, .. } if !using.is_empty() => {
                self.resolve_using_join(left, right, join_type, condition, using)
            }
            LogicalPlan::Join { left, right, join_type, condition, using, hint } => {
                let input = [left.output(), right.output()].concat();
                let condition = match condition {
                    Some(c) => Some(require_boolean(coerce_expr(self.resolve_expr(c, &input)?)?, "JOIN ... ON")?),
                    None => None,
                };
                Ok(LogicalPlan::Join { left, right, join_type, condition, using, hint })
            }
            // The subquery sees the left side's columns as outer.
            LogicalPlan::LateralJoin { left, right, id, join_type, condition } => {
                let right = self.resolve_subquery(&right, &left.output())?;
                let input = [left.output(), right.plan().output()].concat();
                let condition = match condition {
                    Some(c) => Some(require_boolean(coerce_expr(self.resolve_expr(c, &input)?)?, "JOIN ... ON")?),
                    None => None,
                };
                Ok(LogicalPlan::LateralJoin { left, right, id, join_type, condition })
            }
            // Spark's ResolvePivot: grouped by the columns neither the aggregates nor the FOR columns read.
            LogicalPlan::Pivot { columns, aggregates, child } => {
                let input = child.output();
                let (aggregates, legacy) = pivot_values_as(&columns, aggregates, &self.resolve_select_list(columns.clone(), &input)?, self.options.time_zone)?;
                let resolved = aggregates.iter().map(|e| self.resolve_expr(e.clone(), &input)).collect::<Result<Vec<_>>>()?;
                let read: std::collections::BTreeSet<ExprId> = resolved.iter().flat_map(|e| e.references()).collect();
                let aggregates = pivot_first(aggregates, &resolved, legacy)?;
                let grouping: Vec<Expr> = input.iter().filter(|a| !read.contains(&a.id)).map(|a| a.expr()).collect();
                let list = grouping.iter().cloned().chain(aggregates).collect();
                self.resolve_node(LogicalPlan::Aggregate { grouping, aggregates: list, child })
            }
            // Spark's ResolveSubqueryColumnAliases: the child's columns renamed by position.
            LogicalPlan::UnresolvedSubqueryColumnAliases { names, child } => {
                let output = child.output();
                if output.len() != names.len() {
                    return Err(KilnError::analysis(
                        "ASSIGNMENT_ARITY_MISMATCH",
                        format!(
                            "The number of columns or variables assigned or aliased: {} does not match the number of source expressions: {} (column aliases ({}) for a relation of columns ({})).",
                            output.len(),
                            names.len(),
                            names.join(", "),
                            output.iter().map(|a| a.name.clone()).collect::<Vec<_>>().join(", ")
                        ),
                    ));
                }
                let list = output.iter().zip(names).map(|(a, n)| a.expr().alias(n)).collect();
                Ok(LogicalPlan::Project { list, child })
            }
            LogicalPlan::Unpivot { columns, names, value_names, name_column, child, .. } => resolve_unpivot(self, columns, names, value_names, name_column, child),
            LogicalPlan::Sort { order, global, child } => self.resolve_sort(order, global, child),
            LogicalPlan::Repartition { scheme, child } => {
                let input = child.output();
                LogicalPlan::Repartition { scheme, child }.map_expressions(|e| coerce_expr(self.resolve_expr(e, &input)?))
            }
            LogicalPlan::Generate { generator, outer, qualifier, names, generator_output, child, .. } if generator_output.is_empty() => {
                self.resolve_generator(generator.func, outer, generator.args, qualifier, names, child)
            }
            LogicalPlan::Union { children } => resolve_union(children),
            LogicalPlan::SetOperation { kind, all, left, right } => {
                let op = match kind {
                    crate::plan::SetOperationKind::Except => "EXCEPT",
                    crate::plan::SetOperationKind::Intersect => "INTERSECT",
                };
                let LogicalPlan::Union { children } = resolve_set_inputs(vec![left, right], op)? else {
                    return Err(KilnError::internal("set operation inputs"));
                };
                let [left, right]: [Arc<LogicalPlan>; 2] = children.try_into().map_err(|_| KilnError::internal("set operation inputs"))?;
                Ok(LogicalPlan::SetOperation { kind, all, left, right })
            }
            LogicalPlan::UnresolvedHint { name, params, child } => {
                if let Some(repartition) = super::hints::partitioning_hint(&name, &params, child.clone()) {
                    return self.resolve_node(repartition?);
                }
                Ok(super::hints::resolve_hint(&name, &params, child, &mut self.warnings.borrow_mut()))
            }
            other => Ok(other),
        }
    }

    /// Spark's UnionLoop resolution: the anchor first; its columns (under new ids, nullable: a
    /// later step may hold NULLs) are what the recursion's `UnionLoopRef`s read; the recursion
    /// must give the anchor's column types exactly.
    fn resolve_union_loop(&self, id: ExprId, anchor: &Arc<LogicalPlan>, recursion: &Arc<LogicalPlan>, limit: Option<usize>) -> Result<LogicalPlan> {
        let anchor = self.resolve(anchor)?;
        let fresh = |a: &Attribute| Attribute { id: ExprId::next(), nullable: true, qualifier: vec![], ..a.clone() };
        // Each reference its own ids: `FROM t a JOIN t b` reads two instances.
        let recursion = recursion.transform_up_with_subqueries::<KilnError>(&mut |n| {
            Ok(match n.as_ref() {
                LogicalPlan::UnionLoopRef { id: r, output } if *r == id && output.is_empty() => {
                    Arc::new(LogicalPlan::UnionLoopRef { id, output: anchor.output().iter().map(fresh).collect() })
                }
                _ => n,
            })
        })?;
        let recursion = self.resolve(&recursion)?;
        let (a, r) = (anchor.output(), recursion.output());
        if a.len() != r.len() {
            return Err(KilnError::analysis(
                "NUM_COLUMNS_MISMATCH",
                format!("UNION can only be performed on inputs with the same number of columns, but the first input has {} columns and the second input has {} columns (recursive CTE).", a.len(), r.len()),
            ));
        }
        if let Some((x, y)) = a.iter().zip(&r).find(|(x, y)| x.data_type != y.data_type) {
            return Err(KilnError::analysis(
                "CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE",
                format!(
                    "Failed to merge incompatible data types \"{}\" and \"{}\" (column `{}` of a recursive CTE: its recursive part must give the anchor's type; cast it). Please check the data types of the columns being merged and ensure that they are compatible. If necessary, consider casting the columns to compatible data types before attempting the merge.",
                    crate::types::sql_type_name(&x.data_type),
                    crate::types::sql_type_name(&y.data_type),
                    x.name
                ),
            ));
        }
        check_recursive_references(id, &recursion)?;
        let output = a.iter().zip(&r).map(|(x, y)| Attribute { nullable: x.nullable || y.nullable, ..fresh(x) }).collect();
        Ok(LogicalPlan::UnionLoop { id, anchor, recursion, output, limit })
    }

    /// The hidden USING / NATURAL join keys `plan` can still give (through Filter, Sort and
    /// joins above the join's Project).
    fn hidden_columns(&self, plan: &LogicalPlan) -> Vec<Attribute> {
        match plan {
            // A USING join's Project: its own hidden keys, and those of USING joins below it.
            LogicalPlan::Project { list, child } => {
                let key = using_key(list, child);
                let Some(mut out) = self.using_hidden.borrow().iter().find(|(k, _)| *k == key).map(|(_, h)| h.clone()) else { return vec![] };
                for a in self.hidden_columns(child) {
                    if !out.iter().any(|o| o.id == a.id) {
                        out.push(a);
                    }
                }
                out
            }
            LogicalPlan::Filter { child, .. } | LogicalPlan::Sort { child, .. } => self.hidden_columns(child),
            LogicalPlan::Join { left, right, join_type, .. } => {
                let (l, r) = join_type.preserved_sides();
                let nullable = |v: Vec<Attribute>, yes: bool| v.into_iter().map(|a| Attribute { nullable: a.nullable || yes, ..a }).collect::<Vec<_>>();
                let mut out = nullable(self.hidden_columns(left), r);
                if !matches!(join_type, JoinType::LeftSemi | JoinType::LeftAnti) {
                    out.extend(nullable(self.hidden_columns(right), l));
                }
                out
            }
            _ => vec![],
        }
    }

    /// `plan` with the hidden join keys `ids` added to the output of the join Projects that hide them.
    fn expose(&self, plan: &Arc<LogicalPlan>, ids: &[ExprId]) -> Arc<LogicalPlan> {
        match plan.as_ref() {
            LogicalPlan::Project { list, child } => {
                let key = using_key(list, child);
                let Some(own) = self.using_hidden.borrow().iter().find(|(k, _)| *k == key).map(|(_, h)| h.clone()) else { return plan.clone() };
                let hidden = self.hidden_columns(plan);
                let shown = named_outputs_ids(list);
                let wanted: Vec<&Attribute> = hidden.iter().filter(|a| ids.contains(&a.id) && !shown.contains(&a.id)).collect();
                if wanted.is_empty() {
                    return plan.clone();
                }
                let child = self.expose(child, ids);
                let list: Vec<Expr> = list.iter().cloned().chain(wanted.into_iter().map(|a| a.expr())).collect();
                self.using_hidden.borrow_mut().push((using_key(&list, &child), own));
                Arc::new(LogicalPlan::Project { list, child })
            }
            LogicalPlan::Filter { .. } | LogicalPlan::Sort { .. } | LogicalPlan::Join { .. } => {
                let children = plan.children().into_iter().map(|c| self.expose(c, ids)).collect();
                Arc::new(plan.with_new_children(children))
            }
            _ => plan.clone(),
        }
    }

    /// A select list resolved with the hidden join keys below `child` readable by qualified
    /// names (`SELECT t2.a FROM t1 JOIN t2 USING (a)`), after it failed without them; the
    /// child exposing the keys it reads.
    fn resolve_select_list_with_hidden(&self, list: Vec<Expr>, child: &Arc<LogicalPlan>, err: KilnError) -> Result<(Vec<Expr>, Arc<LogicalPlan>)> {
        let hidden = self.hidden_columns(child);
        if hidden.is_empty() {
            return Err(err);
        }
        let visible = child.output();
        // A bare `*` stays the visible columns.
        let list: Vec<Expr> = list
            .into_iter()
            .flat_map(|e| match e {
                Expr::UnresolvedStar(None) => visible.iter().map(|a| a.expr()).collect(),
                other => vec![other],
            })
            .collect();
        // Item by item: a name the visible columns give (the USING key `a`) stays theirs.
        let wide = [visible.clone(), hidden.clone()].concat();
        let mut resolved = vec![];
        for e in list {
            match self.resolve_select_list(vec![e.clone()], &visible) {
                Ok(r) => resolved.extend(r),
                Err(_) => match self.resolve_select_list(vec![e], &wide) {
                    Ok(r) => resolved.extend(r),
                    Err(_) => return Err(err),
                },
            }
        }
        let list = resolved;
        let used: Vec<ExprId> = list.iter().flat_map(|e| e.references()).filter(|id| hidden.iter().any(|h| h.id == *id)).collect();
        Ok((list, self.expose(child, &used)))
    }

    /// Spark's lateral column aliases (`SELECT 1 AS a, a * 2`): a name no input column has may be
    /// an alias given earlier in the select list. As Spark's ResolveLateralColumnAliasReference:
    /// the aliases read compute in a Project below, the list reads them above. `err` (the failure
    /// without them) when that does not resolve the list either; not over aggregates or windows.
    fn resolve_lateral_aliases(&self, list: Vec<Expr>, child: Arc<LogicalPlan>, err: KilnError) -> Result<LogicalPlan> {
        let input = child.output();
        let mut resolved: Vec<Expr> = vec![];
        let mut earlier: Vec<Attribute> = vec![];
        let mut read: Vec<ExprId> = vec![];
        for e in list {
            let items = match self.resolve_select_list(vec![e.clone()], &input) {
                Ok(r) => r,
                Err(_) => match self.resolve_select_list(vec![e], &[input.clone(), earlier.clone()].concat()) {
                    Ok(r) => r,
                    Err(_) => return Err(err),
                },
            };
            for x in &items {
                read.extend(x.references().into_iter().filter(|id| earlier.iter().any(|a| a.id == *id)));
                if let (Expr::Alias { .. }, Some(a)) = (x, named_output(x)) {
                    earlier.push(a);
                }
            }
            resolved.extend(items);
        }
        if read.is_empty() || resolved.iter().any(|e| e.contains_aggregate() || e.contains_window()) {
            return Err(err);
        }
        let is_read = |e: &Expr| matches!(e, Expr::Alias { id, .. } if read.contains(id));
        // An alias that reads another is computed a level above it (`1 AS a, a + 1 AS b, b * 2`).
        let mut levels: Vec<(ExprId, usize)> = vec![];
        for e in resolved.iter().filter(|e| is_read(e)) {
            let below = e.references().iter().filter_map(|r| levels.iter().find(|(id, _)| id == r).map(|(_, l)| *l)).max().unwrap_or(0);
            if let Some(a) = named_output(e) {
                levels.push((a.id, below + 1));
            }
        }
        let mut plan = child;
        for level in 1..=levels.iter().map(|(_, l)| *l).max().unwrap_or(0) {
            let here = resolved.iter().filter(|e| named_output(e).is_some_and(|a| levels.contains(&(a.id, level)))).cloned();
            let list = plan.output().iter().map(|a| a.expr()).chain(here).collect();
            plan = Arc::new(LogicalPlan::Project { list, child: plan });
        }
        let upper: Vec<Expr> = resolved
            .into_iter()
            .map(|e| match named_output(&e) {
                Some(a) if is_read(&e) => a.expr(),
                _ => e,
            })
            .collect();
        Ok(LogicalPlan::Project { list: upper, child: plan })
    }

    /// Window expressions over a GROUP BY (or a global aggregate): the Aggregate computes what
    /// the windows read, Window nodes run over its rows, a Project restores the select list.
    fn window_over_aggregate(&self, grouping: Vec<Expr>, list: Vec<Expr>, child: Arc<LogicalPlan>) -> Result<LogicalPlan> {
        let (agg_list, above) = super::window::split_aggregate_list(list)?;
        let aggregates = check_aggregate_output(agg_list, &grouping)?;
        let agg = Arc::new(LogicalPlan::Aggregate { grouping, aggregates, child });
        super::window::extract_windows(above, agg)
    }

    /// Spark's `ResolveGroupingAnalytics`: ROLLUP / CUBE / GROUPING SETS become an Aggregate
    /// over an Expand that copies each row once per grouping set.
    ///
    /// ```text
    /// 'Aggregate [rollup(Vector(0), Vector(1), 'a, 'b)], ['a, 'b, count(1)]
    /// =>
    /// Aggregate [a#5, b#6, spark_grouping_id#4L], [a#5, b#6, count(1) AS count(1)#7L]
    /// +- Expand [[x.., a#2, b#3, 0], [x.., a#2, null, 1], [x.., null, null, 3]], [x.., a#5, b#6, spark_grouping_id#4L]
    ///    +- Project [x.., a#0 AS a#2, b#1 AS b#3]
    /// ```
    /// Bit `n-1-i` of the grouping id is set when grouping expression `i` is rolled up, so a NULL
    /// it puts there differs from a NULL in the data. `grouping_id()` reads the id; grouping
    /// expressions outside aggregate functions read the Expand's copies.
    fn resolve_grouping_sets(&self, sets: &[Vec<usize>], exprs: Vec<Expr>, aggregates: Vec<Expr>, child: Arc<LogicalPlan>) -> Result<LogicalPlan> {
        let input = child.output();
        // A select-list alias names its expression (`SELECT a + b AS k ... GROUP BY CUBE(k)`).
        let alias_of = |e: &Expr| match e {
            Expr::UnresolvedAttribute(parts) if parts.len() == 1 && self.options.group_by_aliases => aggregates.iter().find_map(|s| match s {
                Expr::Alias { name, child, .. } if name.eq_ignore_ascii_case(&parts[0]) => Some(child.as_ref().clone()),
                _ => None,
            }),
            _ => None,
        };
        let grouping: Vec<Expr> = exprs
            .into_iter()
            .map(|e| {
                let resolved = match self.resolve_expr(e.clone(), &input) {
                    Ok(r) => r,
                    Err(err) => self.resolve_expr(alias_of(&e).ok_or(err)?, &input)?,
                };
                Ok(coerce_expr(resolved)?.unalias().clone())
            })
            .collect::<Result<_>>()?;
        let aliases: Vec<Expr> = grouping.iter().map(|g| g.clone().alias(crate::expr::sql_name(g))).collect();
        let aliased: Vec<Attribute> = aliases.iter().filter_map(named_output).collect();
        let copies: Vec<Attribute> = aliased
            .iter()
            .zip(&grouping)
            .map(|(a, g)| {
                let mut copy = Attribute::new(a.name.clone(), a.data_type.clone(), true);
                // `ORDER BY c.country` still finds the rolled-up column.
                if let Expr::Attribute(orig) = g {
                    copy.qualifier = orig.qualifier.clone();
                }
                copy
            })
            .collect();
        let gid = Attribute::new("spark_grouping_id", DataType::Int64, false);
        // Duplicate grouping sets each give their rows, told apart by their position, as
        // Spark's `_gen_grouping_pos`.
        // A set names each expression once however written (`ROLLUP(a, b, (a, b))`'s first set is (a, b)).
        let normal: Vec<Vec<usize>> = sets.iter().map(|s| s.iter().copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect()).collect();
        let pos = normal.iter().enumerate().any(|(i, s)| normal[..i].contains(s)).then(|| Attribute::new("_gen_grouping_pos", DataType::Int32, false));
        let n = grouping.len();
        let projections: Vec<Vec<Expr>> = sets
            .iter()
            .enumerate()
            .map(|(at, set)| {
                let mut row: Vec<Expr> = input.iter().map(|a| a.expr()).collect();
                let mut id = 0i64;
                for (i, a) in aliased.iter().enumerate() {
                    if set.contains(&i) {
                        row.push(a.expr());
                    } else {
                        row.push(Expr::lit(ScalarValue::Null(a.data_type.clone())));
                        id |= 1 << (n - 1 - i);
                    }
                }
                row.push(Expr::lit(ScalarValue::Int64(id)));
                if pos.is_some() {
                    row.push(Expr::lit(ScalarValue::Int32(at as i32)));
                }
                row
            })
            .collect();
        let project = LogicalPlan::Project { list: input.iter().map(|a| a.expr()).chain(aliases).collect(), child };
        let output = input.iter().cloned().chain(copies.iter().cloned()).chain([gid.clone()]).chain(pos.clone()).collect();
        let expand = LogicalPlan::Expand { projections, output, child: Arc::new(project) };
        // grouping_id() and grouping(k) stand in as attributes named like the calls while the
        // select list resolves, so the items they are part of get Spark's names.
        let mut calls = HashMap::new();
        let aggregates: Vec<Expr> = aggregates
            .into_iter()
            .map(|e| self.replace_grouping_functions(e, &gid, &grouping, &input, &mut calls))
            .collect::<Result<_>>()?;
        let aggregates = self
            .resolve_select_list(aggregates, &input)?
            .into_iter()
            .map(|e| match read_copies(e, &grouping, &copies) {
                Expr::Attribute(a) if calls.contains_key(&a.id) => calls[&a.id].clone().alias(a.name),
                other => {
                    let replaced: std::result::Result<Expr, std::convert::Infallible> = other.transform_up(&mut |x| match &x {
                        Expr::Attribute(a) => Ok(calls.get(&a.id).cloned().unwrap_or(x)),
                        _ => Ok(x),
                    });
                    replaced.unwrap_or_else(|never| match never {})
                }
            })
            .collect();
        let new_grouping: Vec<Expr> = copies.iter().chain([&gid]).chain(pos.as_ref()).map(|a| a.expr()).collect();
        let aggregates = check_aggregate_output(aggregates, &new_grouping)?;
        Ok(LogicalPlan::Aggregate { grouping: new_grouping, aggregates, child: Arc::new(expand) })
    }

    /// `grouping_id()` is the grouping id of the enclosing grouping sets; `grouping(col)` is
    /// 1 when `col` is rolled up: bit `n-1-i` of the id, as `((id div 2^(n-1-i)) % 2)` (Spark:
    /// `cast((shiftright(id, n-1-i) & 1) as tinyint)`; kiln's is cast to a tinyint too).
    /// Each call found is replaced by a stand-in attribute, recorded in `calls` with its value.
    fn replace_grouping_functions(
        &self,
        e: Expr,
        gid: &Attribute,
        grouping: &[Expr],
        input: &[Attribute],
        calls: &mut HashMap<ExprId, Expr>,
    ) -> Result<Expr> {
        let mut stand_in = |name: String, value: Expr| {
            // grouping_id() is a bigint, grouping(col) a tinyint.
            let a = Attribute::new(name, value.data_type().unwrap_or(DataType::Int64), false);
            calls.insert(a.id, value);
            a.expr()
        };
        let n = grouping.len();
        e.transform_up(&mut |x| match &x {
            Expr::UnresolvedAttribute(parts) if parts.len() == 1 && parts[0].eq_ignore_ascii_case("grouping__id") => Ok(stand_in("grouping__id".to_string(), gid.expr())),
            Expr::UnresolvedFunction { name, args, .. } if name.eq_ignore_ascii_case("grouping_id") => {
                if args.is_empty() {
                    return Ok(stand_in("grouping_id()".to_string(), gid.expr()));
                }
                let mut names = vec![];
                let mut indices = vec![];
                for arg in args {
                    let resolved = coerce_expr(self.resolve_expr(arg.clone(), input)?)?;
                    let Some(i) = grouping.iter().position(|g| g == &resolved) else {
                        return Err(KilnError::analysis(
                            "GROUPING_ID_COLUMN_MISMATCH",
                            format!("Columns of grouping_id ({resolved}) does not match grouping columns ({}).", grouping.iter().map(|g| g.to_string()).collect::<Vec<_>>().join(",")),
                        ));
                    };
                    names.push(crate::expr::sql_name(&resolved));
                    indices.push(i);
                }
                check_grouping_id_columns(&indices, n)?;
                Ok(stand_in(format!("grouping_id({})", names.join(", ")), gid.expr()))
            }
            Expr::UnresolvedFunction { name, args, .. } if name.eq_ignore_ascii_case("grouping") => {
                let [arg] = args.as_slice() else {
                    return Err(KilnError::analysis("WRONG_NUM_ARGS", format!("grouping takes one grouping column, got {} arguments.", args.len())));
                };
                let resolved = coerce_expr(self.resolve_expr(arg.clone(), input)?)?;
                let Some(i) = grouping.iter().position(|g| g == &resolved) else {
                    return Err(KilnError::analysis(
                        "GROUPING_COLUMN_MISMATCH",
                        format!("Column of grouping ({resolved}) can't be found in grouping columns {}.", grouping.iter().map(|g| g.to_string()).collect::<Vec<_>>().join(",")),
                    ));
                };
                let bit = Expr::Cast { child: Box::new(grouping_bit(gid.expr(), n, i)), to: DataType::Int8, zone: None };
                Ok(stand_in(format!("grouping({})", crate::expr::sql_name(&resolved)), bit))
            }
            _ => Ok(x),
        })
    }

    /// Resolves a select list: expands `*`, resolves names and functions, names every item.
    pub(super) fn resolve_select_list(&self, list: Vec<Expr>, input: &[Attribute]) -> Result<Vec<Expr>> {
        let mut out = vec![];
        for e in list {
            match e {
                Expr::UnresolvedStar(qualifier) => {
                    let cols: Vec<Expr> = input
                        .iter()
                        .filter(|a| qualifier.as_ref().is_none_or(|q| qualifier_matches(a, q)))
                        .map(|a| a.expr())
                        .collect();
                    // `s.*`: the fields of a struct column, each named by its field.
                    if let (true, Some(q)) = (cols.is_empty(), &qualifier) {
                        let parts: Vec<String> = q.split('.').map(str::to_string).collect();
                        if let Ok(s) = resolve_column(&parts, input) {
                            if let DataType::Struct(fields) = s.data_type()? {
                                for f in fields.iter() {
                                    out.push(get_field(s.clone(), f.name())?.alias(f.name().clone()));
                                }
                                continue;
                            }
                        }
                    }
                    if cols.is_empty() {
                        if let Some(q) = qualifier {
                            return Err(KilnError::analysis(
                                "CANNOT_RESOLVE_STAR_EXPAND",
                                format!("Cannot resolve `{q}`.* given input columns {}.", column_list(input)),
                            ));
                        }
                    }
                    out.extend(cols);
                }
                // Spark's `* EXCEPT (a, b)`: the names resolve against what the star gives.
                Expr::UnresolvedStarExcept { qualifier, except } => {
                    let expanded = self.resolve_select_list(vec![Expr::UnresolvedStar(qualifier)], input)?;
                    let given = crate::plan::named_outputs(&expanded);
                    let mut dropped: Vec<ExprId> = vec![];
                    for parts in &except {
                        let id = resolve_attribute(parts, &given)?.id;
                        if dropped.contains(&id) {
                            let names: Vec<String> = except.iter().map(|p| p.join(".")).collect();
                            return Err(KilnError::analysis(
                                "EXCEPT_OVERLAPPING_COLUMNS",
                                format!("Columns in an EXCEPT list must be distinct and non-overlapping, but got ({}).", names.join(", ")),
                            ));
                        }
                        dropped.push(id);
                    }
                    out.extend(expanded.into_iter().filter(|e| crate::plan::named_output(e).is_none_or(|a| !dropped.contains(&a.id))));
                }
                other => {
                    // `s.a` is named `a` (Spark's alias of a resolved nested field).
                    let field_name = match &other {
                        Expr::UnresolvedAttribute(parts) if parts.len() > 1 => parts.last().cloned(),
                        _ => None,
                    };
                    let resolved = self.resolve_expr(other, input)?;
                    let coerced = coerce_expr(resolved.clone())?;
                    match field_name {
                        Some(name) if !matches!(coerced, Expr::Attribute(_) | Expr::OuterReference(_)) => out.push(coerced.alias(name)),
                        _ => out.push(name_coerced(&resolved, coerced)),
                    }
                }
            }
        }
        Ok(out)
    }

    /// Resolves names and functions in `e` against `input`.
    /// `FROM f(args)`: the host's table function `f` (`Session::register_udtf`) called with the
    /// arguments' values, its table read as a relation named `f`.
    fn resolve_table_function(&self, name: &[String], args: Vec<Expr>) -> Result<LogicalPlan> {
        let fname = name.join(".");
        let Some(function) = self.catalog.table_function(&fname) else {
            return Err(KilnError::analysis_with(
                "UNRESOLVABLE_TABLE_VALUED_FUNCTION",
                format!("Could not resolve `{fname}` to a table-valued function. Please make sure that `{fname}` is defined as a table-valued function and that all required parameters are provided correctly."),
                &[("name", &format!("`{fname}`"))],
            ));
        };
        let values = args
            .into_iter()
            .map(|a| {
                let e = coerce_expr(self.resolve_expr(a, &[])?)?;
                if !e.foldable() {
                    return Err(KilnError::analysis("NON_FOLDABLE_ARGUMENT", format!("The function `{fname}` requires constant arguments, got {}.", crate::expr::sql_name(&e))));
                }
                crate::expr::eval::evaluate_scalar(&e)
            })
            .collect::<Result<Vec<ScalarValue>>>()?;
        let provided = function.call(&values)?;
        let table = crate::catalog::Table {
            name: function.name().to_string(),
            database: "default".into(),
            schema: provided.schema().clone(),
            source: crate::catalog::TableSource::Provider(provided),
            kind: crate::catalog::TableKind::Session,
            stats: None,
            cached: None,
        };
        let output = table.schema.fields().iter().map(|f| Attribute::new(f.name().clone(), f.data_type().clone(), f.is_nullable())).collect();
        Ok(LogicalPlan::SubqueryAlias { alias: function.name().to_string(), child: Arc::new(LogicalPlan::Relation { table: Arc::new(table), output }) })
    }

    pub fn resolve_expr(&self, e: Expr, input: &[Attribute]) -> Result<Expr> {
        e.transform_up(&mut |e| match e {
            Expr::UnresolvedAttribute(parts) => match resolve_column(&parts, input) {
                Ok(e) => Ok(e),
                // A bare current_date: the function before an outer column, as Spark resolves it.
                Err(err) if err.to_string().contains("UNRESOLVED_COLUMN") && matches!(parts.as_slice(), [name] if super::is_literal_function(name)) => {
                    resolve_function(&parts[0], vec![], false, self.catalog.udf_names())
                }
                Err(err) if self.outer.is_empty() || !err.to_string().contains("UNRESOLVED_COLUMN") => Err(err),
                Err(err) => match resolve_attribute(&parts, &self.outer) {
                    Ok(a) => Ok(Expr::OuterReference(a)),
                    Err(_) => Err(err),
                },
            },
            Expr::ScalarSubquery { plan, id } => {
                let plan = self.resolve_subquery(&plan, input)?;
                if plan.plan().output().len() != 1 {
                    return Err(KilnError::analysis(
                        "INVALID_SUBQUERY_EXPRESSION.SCALAR_SUBQUERY_RETURN_MORE_THAN_ONE_OUTPUT_COLUMN",
                        format!("Scalar subquery must return only one column, but got {}.", plan.plan().output().len()),
                    ));
                }
                Ok(Expr::ScalarSubquery { plan, id })
            }
            Expr::Exists { plan, id } => Ok(Expr::Exists { plan: self.resolve_subquery(&plan, input)?, id }),
            Expr::InSubquery { values, plan, id } => {
                let plan = self.resolve_subquery(&plan, input)?;
                let out = plan.plan().output();
                if out.len() != values.len() {
                    let names = |v: Vec<String>| v.iter().map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ");
                    let left = names(values.iter().map(crate::expr::sql_name).collect());
                    let right = names(out.iter().map(|a| a.name.clone()).collect());
                    return Err(KilnError::analysis(
                        "DATATYPE_MISMATCH.IN_SUBQUERY_LENGTH_MISMATCH",
                        format!("The number of columns in the left hand side of an IN subquery does not match the number of columns in the output of subquery. Left hand side columns(length: {}): [{left}], right hand side columns(length: {}): [{right}].", values.len(), out.len()),
                    ));
                }
                // Each pair takes its common type, as `x = col` would.
                let mut lefts = vec![];
                let mut rights = vec![];
                for (v, col) in values.into_iter().zip(&out) {
                    match coerce_expr(v.binary(BinaryOp::Eq, col.expr()))? {
                        Expr::Binary { left, right, .. } => {
                            lefts.push(*left);
                            rights.push(match *right {
                                r @ Expr::Attribute(_) => r,
                                r => r.alias(col.name.clone()),
                            });
                        }
                        _ => return Err(KilnError::internal("coercion of IN subquery")),
                    }
                }
                let plan = if rights.iter().all(|r| matches!(r, Expr::Attribute(_))) {
                    plan
                } else {
                    crate::expr::SubqueryPlan::new(Arc::new(LogicalPlan::Project { list: rights, child: plan.plan().clone() }))
                };
                Ok(Expr::InSubquery { values: lefts, plan, id })
            }
            Expr::UnresolvedFunction { name, args, distinct } if self.catalog.udaf(&name).is_some() => match self.catalog.udaf(&name) {
                Some(udaf) => resolve_udaf(udaf, args, distinct),
                None => Err(KilnError::internal(format!("UDAF `{name}` vanished"))),
            },
            Expr::UnresolvedFunction { name, args, .. } if self.catalog.udf(&name).is_some() => match self.catalog.udf(&name) {
                Some(udf) => resolve_udf(udf, args),
                None => Err(KilnError::internal(format!("UDF `{name}` vanished"))),
            },
            ref e @ Expr::UnresolvedFunction { .. } if super::generators::generator_call(e).is_some() => Err(super::generators::outside_select(&e.to_string())),
            // Spark's CurrentTimeZone: the session's zone, a constant of the query.
            Expr::UnresolvedFunction { name, args, .. } if name.eq_ignore_ascii_case("current_timezone") && args.is_empty() => {
                Ok(Expr::Literal(crate::types::ScalarValue::Utf8(self.options.time_zone.id())))
            }
            Expr::UnresolvedFunction { name, args, distinct } => resolve_function(&name, args, distinct, self.catalog.udf_names()),
            Expr::UnresolvedStar(_) => Err(KilnError::analysis("INVALID_USAGE_OF_STAR", "`*` is only allowed in a select list or count(*).")),
            e @ Expr::WindowExpression { .. } => super::window::resolve_window_expression(e),
            other => Ok(other),
        })
    }

    /// A subquery's plan, resolved with `input` as its outer scope: as Spark's (nested correlation
    /// off by default), a column of a query two levels out is UNRESOLVED_COLUMN.
    fn resolve_subquery(&self, plan: &crate::expr::SubqueryPlan, input: &[Attribute]) -> Result<crate::expr::SubqueryPlan> {
        let inner = Resolver { catalog: self.catalog, options: self.options, outer: input.to_vec(), warnings: Default::default(), using_hidden: Default::default(), outer_aggregates: false };
        let resolved = inner.resolve(plan.plan())?;
        self.warnings.borrow_mut().extend(inner.warnings.into_inner());
        Ok(crate::expr::SubqueryPlan::new(resolved))
    }

    /// A GROUP BY item: a column of the input, or (Spark's groupByAliases) a select-list alias.
    fn resolve_grouping(&self, g: Expr, input: &[Attribute], select: &[Expr]) -> Result<Expr> {
        // GROUP BY 1: the first select-list item (Spark's groupByOrdinal; off, a constant).
        if let (Expr::Literal(crate::types::ScalarValue::Int32(i)), true) = (&g, self.options.group_by_ordinal) {
            let item = usize::try_from(*i).ok().and_then(|i| i.checked_sub(1)).and_then(|i| select.get(i));
            return match item {
                Some(e) => Ok(e.unalias().clone()),
                None => Err(KilnError::analysis(
                    "GROUP_BY_POS_OUT_OF_RANGE",
                    format!("GROUP BY position {i} is not in select list (valid range is [1, {}]).", select.len()),
                )),
            };
        }
        match self.resolve_expr(g.clone(), input) {
            // Spark's CleanupAliases: a grouping expression is grouped by without its alias
            // (`df.group_by([(col("id") % 3).alias("p")])`), the select list keeps the name.
            Ok(e) => coerce_expr(e).map(|e| e.unalias().clone()),
            Err(err) => {
                if let (Expr::UnresolvedAttribute(parts), true) = (&g, self.options.group_by_aliases) {
                    if parts.len() == 1 {
                        let alias = select.iter().find(|s| matches!(s, Expr::Alias { name, .. } if name.eq_ignore_ascii_case(&parts[0])));
                        if let Some(Expr::Alias { child, .. }) = alias {
                            return Ok(child.as_ref().clone());
                        }
                    }
                }
                Err(err)
            }
        }
    }

    /// `HAVING cond` over an Aggregate: names resolve against the aggregate's output first,
    /// then against its input; aggregates not already computed are added as hidden outputs.
    fn resolve_having(&self, condition: Expr, agg: Arc<LogicalPlan>) -> Result<LogicalPlan> {
        let LogicalPlan::Aggregate { grouping, aggregates, child } = agg.as_ref() else {
            return Err(KilnError::internal("HAVING without an Aggregate"));
        };
        let (condition, extra) = self.resolve_against_aggregate(true, condition, &agg.output(), grouping, aggregates, child)?;
        let condition = require_boolean(coerce_expr(condition)?, "HAVING")?;
        if extra.is_empty() {
            return Ok(LogicalPlan::Filter { condition, child: agg });
        }
        let original = agg.output();
        let new_agg = LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: [aggregates.clone(), extra].concat(), child: child.clone() };
        let filter = LogicalPlan::Filter { condition, child: Arc::new(new_agg) };
        Ok(LogicalPlan::Project { list: original.iter().map(|a| a.expr()).collect(), child: Arc::new(filter) })
    }

    /// Resolves `e` where an Aggregate's output is visible: names of the output, then grouping
    /// expressions and aggregate functions over the Aggregate's input (Spark's
    /// ResolveAggregateFunctions). Returns the expression and any hidden outputs added. In
    /// `having`, a grouping column's name wins over a select-list alias of the same name.
    fn resolve_against_aggregate(
        &self,
        having: bool,
        e: Expr,
        agg_output: &[Attribute],
        grouping: &[Expr],
        aggregates: &[Expr],
        agg_child: &Arc<LogicalPlan>,
    ) -> Result<(Expr, Vec<Expr>)> {
        let input = agg_child.output();
        let e = grouping_calls_over_id(e, grouping, &input)?;
        let mut extra: Vec<Expr> = vec![];
        let resolved = e.transform_down(&mut |e| {
            // `GROUP BY i - 1 HAVING i - 1 < 7`: a grouping expression is read from the
            // aggregate's output, not recomputed from a column the aggregate does not keep.
            if !matches!(e, Expr::UnresolvedAttribute(_) | Expr::Attribute(_) | Expr::Literal(_)) {
                if let Some(g) = self.resolve_expr(e.clone(), &input).ok().and_then(|r| grouping.iter().find(|g| **g == r || coerce_expr(r.clone()).is_ok_and(|c| **g == c))) {
                    let existing = aggregates.iter().chain(extra.iter()).find(|x| x.unalias() == g);
                    if let Some(out) = existing.and_then(named_output) {
                        return Ok(Expr::Attribute(out));
                    }
                    let alias = g.clone().alias(crate::expr::sql_name(g));
                    let out = named_output(&alias).ok_or_else(|| KilnError::internal("unnamed hidden grouping expression"))?;
                    extra.push(alias);
                    return Ok(Expr::Attribute(out));
                }
            }
            match e {
            Expr::UnresolvedAttribute(parts) => {
                // HAVING: a grouping column's name is that column even where a select-list
                // alias has the name too (`SELECT a + 1 AS a ... GROUP BY a HAVING a = 42`), as
                // Spark resolves HAVING against the aggregate's input first (resolveColWithAgg).
                let grouped = resolve_attribute(&parts, &input)
                    .ok()
                    .filter(|a| having && grouping.iter().any(|g| matches!(g, Expr::Attribute(b) if b.id == a.id)));
                let a = match (grouped, resolve_attribute(&parts, agg_output)) {
                    (None, Ok(a)) => return Ok::<Expr, KilnError>(Expr::Attribute(a)),
                    (Some(a), _) => a,
                    // A grouping column the select list did not name.
                    (None, Err(err)) => resolve_attribute(&parts, &input).map_err(|_| err)?,
                };
                let existing = aggregates.iter().chain(extra.iter()).find(|x| matches!(x.unalias(), Expr::Attribute(b) if b.id == a.id));
                match existing.and_then(named_output) {
                    Some(out) => Ok(Expr::Attribute(out)),
                    None => {
                        extra.push(Expr::Attribute(a.clone()));
                        Ok(Expr::Attribute(a))
                    }
                }
            }
            Expr::UnresolvedFunction { ref name, .. } if AggFunc::from_name(name).is_some() => {
                let agg = coerce_expr(self.resolve_expr(e, &input)?)?;
                let existing = aggregates.iter().chain(extra.iter()).find(|x| x.unalias() == &agg);
                match existing.and_then(named_output) {
                    Some(out) => Ok(Expr::Attribute(out)),
                    None => {
                        let alias = agg.clone().alias(crate::expr::sql_name(&agg));
                        let out = named_output(&alias).ok_or_else(|| KilnError::internal("unnamed hidden aggregate"))?;
                        extra.push(alias);
                        Ok(Expr::Attribute(out))
                    }
                }
            }
            other => Ok(other),
            }
        })?;
        // HAVING: an EXISTS or scalar subquery sees the aggregate's input too; its aggregates
        // of outer columns only are this aggregate's (Spark's outer aggregates), read as outer
        // references to hidden outputs.
        let mut held: Vec<(ExprId, Expr)> = vec![];
        let resolved = if having {
            let scope = [agg_output, &input].concat();
            resolved.transform_down(&mut |x| match x {
                Expr::Exists { plan, id } => {
                    let plan = self.resolve_having_subquery(&plan, &scope, &input, aggregates, &mut extra)?;
                    Ok(self.hold(Expr::Exists { plan, id }, DataType::Boolean, &mut held))
                }
                Expr::ScalarSubquery { plan, id } => {
                    let plan = self.resolve_having_subquery(&plan, &scope, &input, aggregates, &mut extra)?;
                    let out = plan.plan().output();
                    let [col] = out.as_slice() else {
                        return Err(KilnError::analysis(
                            "INVALID_SUBQUERY_EXPRESSION.SCALAR_SUBQUERY_RETURN_MORE_THAN_ONE_OUTPUT_COLUMN",
                            format!("Scalar subquery must return only one column, but got {}.", out.len()),
                        ));
                    };
                    let dt = col.data_type.clone();
                    Ok(self.hold(Expr::ScalarSubquery { plan, id }, dt, &mut held))
                }
                other => Ok::<_, KilnError>(other),
            })?
        } else {
            resolved
        };
        let resolved = self.resolve_expr(resolved, agg_output)?;
        let resolved = resolved.transform_up(&mut |x| {
            Ok::<_, KilnError>(match &x {
                Expr::Attribute(a) => held.iter().find(|(id, _)| *id == a.id).map(|(_, e)| e.clone()).unwrap_or(x),
                _ => x,
            })
        })?;
        Ok((resolved, check_aggregate_output(extra, grouping)?))
    }

    /// A placeholder column for a resolved subquery expression, put back after the rest resolves.
    fn hold(&self, e: Expr, data_type: DataType, held: &mut Vec<(ExprId, Expr)>) -> Expr {
        let a = Attribute::new("_subquery", data_type, true);
        held.push((a.id, e));
        Expr::Attribute(a)
    }

    /// A HAVING subquery resolved over `scope`; each aggregate of outer columns of `input` only
    /// becomes an outer reference to an output of the aggregate (an existing one or one added
    /// to `extra`).
    fn resolve_having_subquery(&self, plan: &crate::expr::SubqueryPlan, scope: &[Attribute], input: &[Attribute], aggregates: &[Expr], extra: &mut Vec<Expr>) -> Result<crate::expr::SubqueryPlan> {
        let inner = Resolver { catalog: self.catalog, options: self.options, outer: scope.to_vec(), warnings: Default::default(), using_hidden: Default::default(), outer_aggregates: true };
        let resolved = inner.resolve(plan.plan())?;
        self.warnings.borrow_mut().extend(inner.warnings.into_inner());
        let ids: std::collections::BTreeSet<ExprId> = input.iter().map(|a| a.id).collect();
        let hoisted = resolved.transform_up(&mut |node| {
            let node = node.map_expressions(|e| {
                e.transform_up(&mut |x| {
                    if !outer_aggregate(&x) || !x.exists(&|y| matches!(y, Expr::OuterReference(a) if ids.contains(&a.id))) {
                        return Ok::<_, KilnError>(x);
                    }
                    let agg = x.transform_up(&mut |y| {
                        Ok::<_, KilnError>(match y {
                            Expr::OuterReference(a) => Expr::Attribute(a),
                            other => other,
                        })
                    })?;
                    let existing = aggregates.iter().chain(extra.iter()).find(|e| e.unalias() == &agg).and_then(named_output);
                    let out = match existing {
                        Some(out) => out,
                        None => {
                            let alias = agg.clone().alias(crate::expr::sql_name(&agg));
                            let out = named_output(&alias).ok_or_else(|| KilnError::internal("unnamed outer aggregate"))?;
                            extra.push(alias);
                            out
                        }
                    };
                    Ok(Expr::OuterReference(out))
                })
            })?;
            Ok::<_, KilnError>(Arc::new(node))
        })?;
        Ok(crate::expr::SubqueryPlan::new(hoisted))
    }

    /// ORDER BY: over the child's output, or over columns a Project/Aggregate below hides
    /// (they are added to it and projected away above the Sort).
    fn resolve_sort(&self, order: Vec<SortOrder>, global: bool, child: Arc<LogicalPlan>) -> Result<LogicalPlan> {
        let output = child.output();
        // Spark's ResolveOrderByAll: `ORDER BY ALL` (one key named ALL that no column is) sorts by
        // every column of the select list, left to right, in that key's direction.
        let order = match order.as_slice() {
            [o] if matches!(&o.expr, Expr::UnresolvedAttribute(n) if n.len() == 1 && n[0].eq_ignore_ascii_case("all"))
                && !output.iter().any(|a| a.name.eq_ignore_ascii_case("all")) =>
            {
                output.iter().map(|a| SortOrder { expr: a.expr(), ..o.clone() }).collect()
            }
            _ => order,
        };
        // ORDER BY 2: the second select-list column (Spark's orderByOrdinal).
        let order = order
            .into_iter()
            .map(|o| match &o.expr {
                Expr::Literal(crate::types::ScalarValue::Int32(i)) if self.options.order_by_ordinal => {
                    let col = usize::try_from(*i).ok().and_then(|i| i.checked_sub(1)).and_then(|i| output.get(i));
                    match col {
                        Some(a) => Ok(SortOrder { expr: a.expr(), ..o }),
                        None => Err(KilnError::analysis(
                            "ORDER_BY_POS_OUT_OF_RANGE",
                            format!("ORDER BY position {i} is not in select list (valid range is [1, {}]).", output.len()),
                        )),
                    }
                }
                _ => Ok(o),
            })
            .collect::<Result<Vec<_>>>()?;
        let direct: Result<Vec<SortOrder>> = order
            .iter()
            .map(|o| Ok(SortOrder { expr: coerce_expr(self.resolve_expr(o.expr.clone(), &output)?)?, ..o.clone() }))
            .collect();
        let err = match direct {
            // ORDER BY a window expression: it is computed by a Window under the Sort and
            // projected away above it, as Spark's ExtractWindowExpressions does for Sort.
            Ok(order) if order.iter().any(|o| o.expr.contains_window()) && !order.iter().any(|o| o.expr.contains_aggregate()) => {
                return sort_with_windows(order, global, child, &output);
            }
            // (A subquery's outer columns may be ones the child hides: added below.)
            Ok(order)
                if !order.iter().any(|o| o.expr.contains_aggregate())
                    && order.iter().all(|o| o.expr.references().iter().all(|id| output.iter().any(|a| a.id == *id))) =>
            {
                return Ok(LogicalPlan::Sort { order, global, child })
            }
            Ok(_) => None,
            Err(e) => Some(e),
        };
        let restore = |child: LogicalPlan, order: Vec<SortOrder>| LogicalPlan::Project {
            list: output.iter().map(|a| a.expr()).collect(),
            child: Arc::new(LogicalPlan::Sort { order, global, child: Arc::new(child) }),
        };
        match child.as_ref() {
            // Over HAVING that added hidden outputs (a Project hiding them over Filter over
            // Aggregate): sorted below the Project, as over the HAVING itself.
            LogicalPlan::Project { list, child: below }
                if err.is_some()
                    && list.iter().all(|e| matches!(e, Expr::Attribute(_)))
                    && matches!(below.as_ref(), LogicalPlan::Filter { child: agg, .. } if matches!(agg.as_ref(), LogicalPlan::Aggregate { .. })) =>
            {
                let sorted = self.resolve_sort(order, global, below.clone())?;
                Ok(LogicalPlan::Project { list: list.clone(), child: Arc::new(sorted) })
            }
            LogicalPlan::Project { list, child: below } => {
                let mut below_out = below.output();
                let hidden = self.hidden_columns(below);
                let mut list = list.clone();
                let mut new_order = vec![];
                for o in order {
                    let expr = match self.resolve_expr(o.expr.clone(), &output) {
                        Ok(e) => e,
                        Err(_) => match self.resolve_expr(o.expr.clone(), &below_out) {
                            Ok(e) => e,
                            // ORDER BY t2.a over `t1 JOIN t2 USING (a)`: a hidden key.
                            Err(e) if !hidden.is_empty() => {
                                let x = self.resolve_expr(o.expr.clone(), &[below_out.clone(), hidden.clone()].concat()).map_err(|_| e)?;
                                below_out.extend(hidden.iter().filter(|h| x.references().contains(&h.id)).cloned());
                                x
                            }
                            Err(e) => return Err(e),
                        },
                    };
                    let outer = expr.references().into_iter().filter_map(|id| below_out.iter().find(|a| a.id == id).cloned());
                    for a in expr.attributes().into_iter().chain(outer) {
                        if !list.iter().any(|e| named_output(e).is_some_and(|n| n.id == a.id)) {
                            list.push(a.expr());
                        }
                    }
                    new_order.push(SortOrder { expr: coerce_expr(expr)?, ..o });
                }
                let exposed: Vec<ExprId> = hidden.iter().filter(|h| below_out.iter().any(|a| a.id == h.id)).map(|h| h.id).collect();
                let project = LogicalPlan::Project { list, child: self.expose(below, &exposed) };
                if new_order.iter().any(|o| o.expr.contains_window()) {
                    return sort_with_windows(new_order, global, Arc::new(project), &output);
                }
                Ok(restore(project, new_order))
            }
            LogicalPlan::Aggregate { grouping, aggregates, child: below } => {
                let (new_order, extra) = self.sort_over_aggregate(order, &output, grouping, aggregates, below)?;
                if extra.is_empty() {
                    return Ok(LogicalPlan::Sort { order: new_order, global, child });
                }
                let agg = LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: [aggregates.clone(), extra].concat(), child: below.clone() };
                Ok(restore(agg, new_order))
            }
            // ORDER BY over HAVING: resolved as over the aggregate, the filter kept between.
            LogicalPlan::Filter { condition, child: agg } if matches!(agg.as_ref(), LogicalPlan::Aggregate { .. }) => {
                let LogicalPlan::Aggregate { grouping, aggregates, child: below } = agg.as_ref() else {
                    return Err(KilnError::internal("ORDER BY over HAVING"));
                };
                let (new_order, extra) = self.sort_over_aggregate(order, &output, grouping, aggregates, below)?;
                if extra.is_empty() {
                    return Ok(LogicalPlan::Sort { order: new_order, global, child });
                }
                let agg = LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: [aggregates.clone(), extra].concat(), child: below.clone() };
                Ok(restore(LogicalPlan::Filter { condition: condition.clone(), child: Arc::new(agg) }, new_order))
            }
            _ => Err(err.unwrap_or_else(|| KilnError::internal("ORDER BY resolution"))),
        }
    }

    /// ORDER BY keys resolved where an Aggregate's output is visible, and the hidden outputs
    /// they need added to it.
    fn sort_over_aggregate(
        &self,
        order: Vec<SortOrder>,
        output: &[Attribute],
        grouping: &[Expr],
        aggregates: &[Expr],
        below: &Arc<LogicalPlan>,
    ) -> Result<(Vec<SortOrder>, Vec<Expr>)> {
        let mut all_extra = vec![];
        let mut new_order = vec![];
        for o in order {
            let known: Vec<Expr> = aggregates.iter().chain(all_extra.iter()).cloned().collect();
            let (expr, extra) = self.resolve_against_aggregate(false, o.expr.clone(), output, grouping, &known, below)?;
            all_extra.extend(extra);
            new_order.push(SortOrder { expr: coerce_expr(expr)?, ..o });
        }
        Ok((new_order, all_extra))
    }

    /// `JOIN ... USING (k)`: an equi-join on `k`, projected as Spark does: the key once, then the
    /// other columns of the left and the right side.
    fn resolve_using_join(
        &self,
        left: Arc<LogicalPlan>,
        right: Arc<LogicalPlan>,
        join_type: JoinType,
        condition: Option<Expr>,
        using: Vec<String>,
    ) -> Result<LogicalPlan> {
        let (lo, ro) = (left.output(), right.output());
        // NATURAL JOIN: the columns of both sides, in the left side's order.
        let using = if using.len() == 1 && using[0] == crate::plan::NATURAL_JOIN {
            let mut common: Vec<String> = vec![];
            for a in &lo {
                if ro.iter().any(|b| b.name.eq_ignore_ascii_case(&a.name)) && !common.iter().any(|c| c.eq_ignore_ascii_case(&a.name)) {
                    common.push(a.name.clone());
                }
            }
            common
        } else {
            using
        };
        let mut conds = vec![];
        let mut keys = vec![];
        for name in &using {
            let parts = vec![name.clone()];
            let side = |output: &[Attribute], which: &str| {
                resolve_attribute(&parts, output).map_err(|e| match e {
                    KilnError::Analysis(a) if a.class.starts_with("UNRESOLVED_COLUMN.") => KilnError::analysis(
                        "UNRESOLVED_USING_COLUMN_FOR_JOIN",
                        format!("USING column `{name}` cannot be resolved on the {which} side of the join. The {which}-side columns: {}.", column_list(output)),
                    ),
                    other => other,
                })
            };
            let l = side(&lo, "left")?;
            let r = side(&ro, "right")?;
            conds.push(coerce_expr(l.expr().binary(BinaryOp::Eq, r.expr()))?);
            keys.push((l, r));
        }
        let mut cond = Expr::conjunction(conds);
        if let Some(c) = condition {
            let extra = self.resolve_expr(c, &[lo.clone(), ro.clone()].concat())?;
            cond = Some(match cond {
                Some(k) => k.and(extra),
                None => extra,
            });
        }
        let join = LogicalPlan::Join { left, right, join_type, condition: cond, using: vec![], hint: Default::default() };
        let joined = join.output();
        // As the join outputs them: an outer join's null-supplying side is nullable.
        let out = |a: &Attribute| joined.iter().find(|j| j.id == a.id).unwrap_or(a).expr();
        let mut list: Vec<Expr> = keys
            .iter()
            .map(|(l, r)| match join_type {
                JoinType::RightOuter => out(r),
                JoinType::FullOuter => Expr::Function { func: ScalarFunc::Coalesce, args: vec![out(l), out(r)] }.alias(l.name.clone()),
                _ => out(l),
            })
            .collect();
        let is_key = |a: &Attribute| keys.iter().any(|(l, r)| l.id == a.id || r.id == a.id);
        list.extend(lo.iter().filter(|a| !is_key(a)).map(out));
        if !matches!(join_type, JoinType::LeftSemi | JoinType::LeftAnti) {
            list.extend(ro.iter().filter(|a| !is_key(a)).map(out));
        }
        let shown: Vec<ExprId> = named_outputs_ids(&list);
        let hidden: Vec<Attribute> = joined.into_iter().filter(|a| is_key(a) && !shown.contains(&a.id)).collect();
        if !hidden.is_empty() {
            self.using_hidden.borrow_mut().push((using_key(&list, &join), hidden));
        }
        Ok(LogicalPlan::Project { list, child: Arc::new(join) })
    }
}

/// ORDER BY a window expression: it is computed by a Window under the Sort and projected
/// away above it (`output`: the columns the query returns), as Spark's
/// ExtractWindowExpressions does for a Sort.
fn sort_with_windows(order: Vec<SortOrder>, global: bool, child: Arc<LogicalPlan>, output: &[Attribute]) -> Result<LogicalPlan> {
    let mut list: Vec<Expr> = child.output().iter().map(|a| a.expr()).collect();
    let mut new_order = vec![];
    for o in order {
        let expr = match o.expr.unalias() {
            w @ Expr::WindowExpression { .. } => {
                let alias = w.clone().alias(crate::expr::sql_name(w));
                let attr = named_output(&alias).ok_or_else(|| KilnError::internal("unnamed window in ORDER BY"))?;
                list.push(alias);
                attr.expr()
            }
            other if other.contains_window() => {
                return Err(KilnError::unsupported("a window function inside an ORDER BY expression (ORDER BY the window itself, or select it)"))
            }
            other => other.clone(),
        };
        new_order.push(SortOrder { expr, ..o });
    }
    let windows = Arc::new(super::window::extract_windows(list, child)?);
    let sort = LogicalPlan::Sort { order: new_order, global, child: windows };
    Ok(LogicalPlan::Project { list: output.iter().map(|a| a.expr()).collect(), child: Arc::new(sort) })
}

/// `UNION`: every input has as many columns as the first; each column takes the wider type of
/// its inputs (Spark's `WidenSetOperationTypes`), cast in a Project over the inputs that differ.
/// Spark's ResolveUnpivot: an Expand with one projection per IN item: the other columns (the
/// ids), the item's name, its columns cast to each value column's common type.
/// Spark casts each pivot value to its FOR column's type (PIVOT_VALUE_DATA_TYPE_MISMATCH when
/// its legacy `Cast.canCast` refuses), in the session time zone: the `column <=> value`
/// conditions the parser wrote compare with the cast value. With it, the error for the first
/// value only the legacy cast converts: Spark's one-step pivot keeps the cast in the plan,
/// where the ANSI check refuses it.
fn pivot_values_as(columns: &[Expr], aggregates: Vec<Expr>, resolved: &[Expr], zone: crate::types::time_zone::Zone) -> Result<(Vec<Expr>, Option<KilnError>)> {
    let types = resolved.iter().map(|c| c.data_type()).collect::<Result<Vec<_>>>()?;
    let mut legacy = None;
    let aggregates = aggregates
        .into_iter()
        .map(|a| {
            a.transform_up(&mut |x| match x {
                Expr::Binary { op: BinaryOp::EqNullSafe, left, right } if right.foldable() => {
                    let Some(i) = columns.iter().position(|c| c == left.as_ref()) else { return Ok(Expr::Binary { op: BinaryOp::EqNullSafe, left, right }) };
                    let (from, to) = (right.data_type()?, &types[i]);
                    let mismatch = || {
                        KilnError::analysis(
                            "PIVOT_VALUE_DATA_TYPE_MISMATCH",
                            format!("Invalid pivot value '{right}': value data type {} does not match pivot column data type {}.", crate::types::spark_type_name(&from), crate::types::spark_type_name(to)),
                        )
                    };
                    let value = if from == DataType::Null || super::coercion::can_cast(&from, to) {
                        // A value the cast rejects (ANSI) fails as the cast does, as in Spark.
                        let cast = super::in_zone(Expr::Cast { child: right.clone(), to: to.clone(), zone: None }, zone)?;
                        crate::expr::eval::evaluate_scalar(&cast).map_err(|e| if e.to_string().contains("CAST_INVALID_INPUT") { e } else { mismatch() })?
                    } else {
                        let value = legacy_cast(&crate::expr::eval::evaluate_scalar(&right)?, to).ok_or_else(mismatch)?;
                        legacy.get_or_insert_with(|| super::coercion::cast_error("cast", &right, &from, to));
                        value
                    };
                    Ok(Expr::Binary { op: BinaryOp::EqNullSafe, left, right: Box::new(Expr::lit(value)) })
                }
                other => Ok(other),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((aggregates, legacy))
}

/// The casts Spark's legacy `Cast.canCast` allows and its ANSI one does not: a date to a number
/// or boolean is NULL, a boolean to a timestamp 0 or 1 microsecond, an integer to binary its
/// big-endian bytes.
fn legacy_cast(v: &ScalarValue, to: &DataType) -> Option<ScalarValue> {
    Some(match (v, to) {
        (ScalarValue::Date32(_), t) if crate::types::is_numeric(t) || *t == DataType::Boolean => ScalarValue::Null(t.clone()),
        (ScalarValue::Boolean(b), DataType::Timestamp(_, Some(_))) => ScalarValue::Timestamp(*b as i64, false),
        (ScalarValue::Int8(x), DataType::Binary) => ScalarValue::Binary(x.to_be_bytes().to_vec()),
        (ScalarValue::Int16(x), DataType::Binary) => ScalarValue::Binary(x.to_be_bytes().to_vec()),
        (ScalarValue::Int32(x), DataType::Binary) => ScalarValue::Binary(x.to_be_bytes().to_vec()),
        (ScalarValue::Int64(x), DataType::Binary) => ScalarValue::Binary(x.to_be_bytes().to_vec()),
        _ => return None,
    })
}

/// Spark pivots aggregates of numeric or boolean types in two steps (PivotFirst): aggregated per
/// group and FOR value, then spread into columns, so a group without a row of a value has NULL
/// there even where the aggregate has a value over no rows (`count(*)` is NULL, not 0). Such an
/// aggregate (one that is never NULL) reads `CASE WHEN bool_or(<the value's condition>) THEN
/// agg END`; the others are the same either way. The one-step pivot fails with `legacy`.
fn pivot_first(aggregates: Vec<Expr>, resolved: &[Expr], legacy: Option<KilnError>) -> Result<Vec<Expr>> {
    let two_step = |t: DataType| t == DataType::Boolean || crate::types::is_numeric(&t);
    if !resolved.iter().map(|e| e.data_type()).collect::<Result<Vec<_>>>()?.into_iter().all(two_step) {
        return match legacy {
            Some(e) => Err(e),
            None => Ok(aggregates),
        };
    }
    let condition = |e: &Expr| {
        let mut found = None;
        e.visit(&mut |x| {
            if let (None, Expr::CaseWhen { branches, .. }) = (&found, x) {
                found = branches.first().map(|(c, _)| c.clone());
            }
        });
        found
    };
    Ok(aggregates
        .into_iter()
        .zip(resolved)
        .map(|(e, r)| match (condition(&e), e) {
            (Some(c), Expr::Alias { child, name, id }) if !r.nullable() => {
                let matched = Expr::UnresolvedFunction { name: "bool_or".into(), args: vec![c], distinct: false };
                Expr::Alias { child: Box::new(Expr::CaseWhen { branches: vec![(matched, *child)], else_expr: None, if_form: false }), name, id }
            }
            (_, e) => e,
        })
        .collect())
}

fn resolve_unpivot(r: &Resolver, columns: Vec<Vec<Expr>>, names: Vec<String>, value_names: Vec<String>, name_column: String, child: Arc<LogicalPlan>) -> Result<LogicalPlan> {
    let input = child.output();
    let cols = columns.into_iter().map(|c| c.into_iter().map(|e| r.resolve_expr(e, &input)).collect::<Result<Vec<_>>>()).collect::<Result<Vec<_>>>()?;
    let used: std::collections::BTreeSet<ExprId> = cols.iter().flatten().flat_map(|e| e.references()).collect();
    let ids: Vec<Attribute> = input.iter().filter(|a| !used.contains(&a.id)).cloned().collect();
    let mut values = vec![];
    for (j, n) in value_names.iter().enumerate() {
        let mut ty: Option<DataType> = None;
        for c in &cols {
            let t = c[j].data_type()?;
            ty = Some(match ty {
                None => t,
                Some(prev) => crate::types::wider_type(&prev, &t).ok_or_else(|| {
                    let list = cols.iter().map(|c| format!("{} {}", crate::expr::sql_name(&c[j]), crate::types::spark_type_name(&c[j].data_type().unwrap_or(DataType::Null)))).collect::<Vec<_>>().join(", ");
                    KilnError::analysis("UNPIVOT_VALUE_DATA_TYPE_MISMATCH", format!("Unpivot value columns must share a least common type, some types do not: [{list}]."))
                })?,
            });
        }
        let ty = ty.ok_or_else(|| KilnError::analysis("UNPIVOT_REQUIRES_VALUE_COLUMNS", "At least one value column needs to be specified for UNPIVOT, all columns specified as ids."))?;
        values.push(Attribute::new(n.clone(), ty, cols.iter().any(|c| c[j].nullable())));
    }
    let name = Attribute::new(name_column, DataType::Utf8, false);
    let mut projections = vec![];
    for (c, item) in cols.into_iter().zip(names) {
        let mut p: Vec<Expr> = ids.iter().map(|a| a.expr()).collect();
        p.push(Expr::lit(ScalarValue::Utf8(item)));
        for (e, v) in c.into_iter().zip(&values) {
            p.push(if e.data_type()? == v.data_type { e } else { Expr::Cast { child: Box::new(e), to: v.data_type.clone(), zone: None } });
        }
        projections.push(p);
    }
    let output = ids.into_iter().chain([name]).chain(values).collect();
    Ok(LogicalPlan::Expand { projections, output, child })
}

/// Spark's INVALID_RECURSIVE_REFERENCE.PLACE: a step's rows may not feed an aggregate, a window,
/// a sort, or the side of an outer, semi or anti join whose rows a join keeps or tests whole.
fn check_recursive_references(id: ExprId, recursion: &Arc<LogicalPlan>) -> Result<()> {
    let reads = |p: &Arc<LogicalPlan>| p.exists_with_subqueries(&|n| matches!(n, LogicalPlan::UnionLoopRef { id: r, .. } if *r == id));
    let misplaced = recursion.exists_with_subqueries(&|n| match n {
        LogicalPlan::Aggregate { child, .. } | LogicalPlan::Window { child, .. } | LogicalPlan::Sort { child, .. } => reads(child),
        LogicalPlan::Join { left, right, join_type, .. } => match join_type {
            JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti => reads(right),
            JoinType::RightOuter => reads(left),
            JoinType::FullOuter => reads(left) || reads(right),
            _ => false,
        },
        _ => false,
    });
    if misplaced {
        return Err(KilnError::analysis(
            "INVALID_RECURSIVE_REFERENCE.PLACE",
            "Invalid recursive reference found inside WITH RECURSIVE clause. Recursive references cannot be used on the right side of left outer/semi/anti joins, on the left side of right outer joins, in full outer joins, in aggregates, window functions or sorts.",
        ));
    }
    Ok(())
}

fn resolve_union(children: Vec<Arc<LogicalPlan>>) -> Result<LogicalPlan> {
    resolve_set_inputs(children, "UNION")
}

/// The inputs of `op` (UNION, EXCEPT, INTERSECT) checked and cast to common column types, as a Union.
fn resolve_set_inputs(children: Vec<Arc<LogicalPlan>>, op: &str) -> Result<LogicalPlan> {
    let outputs: Vec<Vec<Attribute>> = children.iter().map(|c| c.output()).collect();
    let width = outputs.first().map(Vec::len).unwrap_or(0);
    if let Some((i, o)) = outputs.iter().enumerate().find(|(_, o)| o.len() != width) {
        return Err(KilnError::analysis(
            "NUM_COLUMNS_MISMATCH",
            format!("{op} can only be performed on inputs with the same number of columns, but the first input has {width} columns and the {} input has {} columns.", ordinal(i + 1), o.len()),
        ));
    }
    let mut types = vec![];
    for c in 0..width {
        let mut t = outputs[0][c].data_type.clone();
        for (i, o) in outputs.iter().enumerate().skip(1) {
            let next = &o[c].data_type;
            t = crate::types::common_type(&t, next).ok_or_else(|| {
                KilnError::analysis(
                    "INCOMPATIBLE_COLUMN_TYPE",
                    format!(
                        "{} can only be performed on inputs with compatible column types. The {} column of the {} input is \"{}\" type which is not compatible with \"{}\" at the same column of the first input.",
                        op,
                        ordinal(c + 1),
                        ordinal(i + 1),
                        crate::types::sql_type_name(next),
                        crate::types::sql_type_name(&t)
                    ),
                )
            })?;
        }
        types.push(t);
    }
    let children = children
        .into_iter()
        .zip(outputs)
        .map(|(child, out)| {
            if out.iter().zip(&types).all(|(a, t)| &a.data_type == t) {
                return child;
            }
            let list = out
                .iter()
                .zip(&types)
                .map(|(a, t)| if &a.data_type == t { a.expr() } else { Expr::Cast { child: Box::new(a.expr()), to: t.clone(), zone: None }.alias(a.name.clone()) })
                .collect();
            Arc::new(LogicalPlan::Project { list, child })
        })
        .collect();
    Ok(LogicalPlan::Union { children })
}

fn ordinal(n: usize) -> String {
    match n {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        n => format!("{n}th"),
    }
}

fn qualifier_matches(a: &Attribute, q: &str) -> bool {
    a.qualifier.last().is_some_and(|aq| name_eq(aq, q))
}

fn column_list(input: &[Attribute]) -> String {
    let names: Vec<String> = input
        .iter()
        .map(|a| match a.qualifier.last() {
            Some(q) => format!("`{q}`.`{}`", a.name),
            None => format!("`{}`", a.name),
        })
        .collect();
    format!("[{}]", names.join(", "))
}

/// Finds the attribute `parts` names (`col` or `qualifier.col`), case-insensitively.
/// A column reference `a.b.c` by Spark's rules: the longest prefix that names a column
/// (qualified by its table: `t.s`, else bare: `s`) is the column, and the rest are fields of
/// its struct value, matched case-insensitively (`s.a`, `t.s.a.b`).
pub(super) fn resolve_column(parts: &[String], input: &[Attribute]) -> Result<Expr> {
    let first_error = match resolve_attribute(parts, input) {
        Ok(a) => return Ok(Expr::Attribute(a)),
        Err(e) => e,
    };
    if parts.len() < 2 || first_error.to_string().contains("AMBIGUOUS_REFERENCE") {
        return Err(first_error);
    }
    // Qualified (`t.s.a`), then bare (`s.a`): the first that names exactly one column.
    for column_len in (1..parts.len()).rev() {
        let head = &parts[..column_len];
        if head.len() > 2 {
            continue;
        }
        let Ok(a) = resolve_attribute(head, input) else { continue };
        let mut e = Expr::Attribute(a);
        for name in &parts[column_len..] {
            e = get_field(e, name)?;
        }
        return Ok(e);
    }
    Err(first_error)
}

/// `e.name`: the field of a struct value (Spark's ExtractValue over a struct).
fn get_field(e: Expr, name: &str) -> Result<Expr> {
    let t = e.data_type()?;
    // `m.k`: the map's value for the key `k` (Spark's ExtractValue over a map).
    if matches!(t, DataType::Map(..)) {
        let func = crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::GetItem);
        return Ok(Expr::Function { func, args: vec![e, Expr::Literal(ScalarValue::Utf8(name.to_string()))] });
    }
    // `xs.a` over an array of structs: the array of each element's field (GetArrayStructFields).
    if matches!(&t, DataType::List(f) if matches!(f.data_type(), DataType::Struct(_))) {
        let func = crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::GetItem);
        return Ok(Expr::Function { func, args: vec![e, Expr::Literal(ScalarValue::Utf8(name.to_string()))] });
    }
    if !matches!(t, DataType::Struct(_)) {
        return Err(KilnError::analysis(
            "INVALID_EXTRACT_BASE_FIELD_TYPE",
            format!("Can't extract a value from \"{}\". Need a complex type [STRUCT, ARRAY, MAP] but got \"{}\".", crate::expr::sql_name(&e), crate::types::sql_type_name(&t)),
        ));
    }
    let field = struct_field(&e.data_type()?, name)?;
    let func = crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::Nested(crate::expr::NestedFn::GetField));
    Ok(Expr::Function { func, args: vec![e, Expr::Literal(ScalarValue::Utf8(field))] })
}

/// The name of `s`'s field `name` (matched case-insensitively, as Spark's default resolver),
/// or FIELD_NOT_FOUND listing the fields.
pub(super) fn struct_field(t: &DataType, name: &str) -> Result<String> {
    let DataType::Struct(fields) = t else { return Err(KilnError::internal(format!("a field of {t}"))) };
    let matches: Vec<&String> = fields.iter().map(|f| f.name()).filter(|n| n.eq_ignore_ascii_case(name)).collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(KilnError::analysis(
            "FIELD_NOT_FOUND",
            format!("No such struct field `{name}` in {}.", fields.iter().map(|f| format!("`{}`", f.name())).collect::<Vec<_>>().join(", ")),
        )),
        many => Err(KilnError::analysis(
            "AMBIGUOUS_REFERENCE_TO_FIELDS",
            format!("Ambiguous reference to the field `{name}`. It appears {} times in the schema.", many.len()),
        )),
    }
}

/// Whether a column name or qualifier as written names `have`.
fn name_eq(have: &str, written: &str) -> bool {
    if super::session::flags().case_sensitive { have == written } else { have.eq_ignore_ascii_case(written) }
}

pub(super) fn resolve_attribute(parts: &[String], input: &[Attribute]) -> Result<Attribute> {
    let (qualifier, name) = match parts {
        [name] => (None, name),
        [.., q, name] => (Some(q), name),
        [] => return Err(KilnError::internal("empty column name")),
    };
    let mut matches: Vec<&Attribute> = input
        .iter()
        .filter(|a| name_eq(&a.name, name) && qualifier.is_none_or(|q| qualifier_matches(a, q)))
        .collect();
    matches.dedup_by_key(|a| a.id);
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => {
            let wanted = parts.join(".");
            let candidates: Vec<String> = input.iter().map(|a| a.name.clone()).collect();
            let hint = match closest_match(name, candidates.iter().map(|s| s.as_str())) {
                Some(s) => format!(" Did you mean `{s}`?"),
                None => String::new(),
            };
            // Spark suggests nothing when there is no input column (`SELECT 1a`).
            if input.is_empty() {
                return Err(KilnError::analysis_with(
                    "UNRESOLVED_COLUMN.WITHOUT_SUGGESTION",
                    format!("A column, variable, or function parameter with name `{wanted}` cannot be resolved."),
                    &[("objectName", &format!("`{wanted}`"))],
                ));
            }
            Err(KilnError::analysis_with(
                "UNRESOLVED_COLUMN.WITH_SUGGESTION",
                format!(
                    "A column, variable, or function parameter with name `{wanted}` cannot be resolved.{hint} Input columns: {}.",
                    column_list(input)
                ),
                &[("objectName", &format!("`{wanted}`"))],
            ))
        }
        many => Err(KilnError::analysis(
            "AMBIGUOUS_REFERENCE",
            format!(
                "Reference `{}` is ambiguous, could be: {}. Qualify it with a table name or alias.",
                parts.join("."),
                column_list(&many.iter().map(|a| (*a).clone()).collect::<Vec<_>>())
            ),
        )),
    }
}

/// A UDF call: its arguments cast to its signature.
fn resolve_udf(udf: &Arc<crate::udf::ScalarUdf>, args: Vec<Expr>) -> Result<Expr> {
    let args = cast_to_signature(args, |given| udf.coerce(given))?;
    let types = args.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?;
    Ok(Expr::ScalarUdf { udf: udf.for_call(&types)?, args })
}

/// `args`, each cast to the type `coerce` (a user function's signature) wants for it.
fn cast_to_signature(args: Vec<Expr>, coerce: impl FnOnce(&[DataType]) -> Result<Vec<DataType>>) -> Result<Vec<Expr>> {
    let given = args.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?;
    let wanted = coerce(&given)?;
    Ok(args
        .into_iter()
        .zip(given.iter().zip(wanted))
        .map(|(a, (g, w))| if *g == w { a } else { Expr::Cast { child: Box::new(a), to: w, zone: None } })
        .collect())
}

/// A UDAF call: its arguments cast to its signature, no aggregate inside.
fn resolve_udaf(udaf: &'static crate::udf::AggregateUdf, args: Vec<Expr>, distinct: bool) -> Result<Expr> {
    if args.iter().any(|a| a.contains_aggregate()) {
        return Err(KilnError::analysis(
            "NESTED_AGGREGATE_FUNCTION",
            format!("It is not allowed to use an aggregate function in the argument of another aggregate function: {}(...).", udaf.name()),
        ));
    }
    Ok(Expr::Aggregate { func: AggFunc::Udaf(udaf), args: cast_to_signature(args, |given| udaf.coerce(given))?, distinct })
}

/// `listagg(x[, delimiter]) WITHIN GROUP (ORDER BY keys)`: the keys are the last arguments,
/// `code` their directions (`AF`: ascending, NULLS FIRST).
fn resolve_within_group(name: &str, code: &str, mut args: Vec<Expr>, distinct: bool) -> Result<Expr> {
    let directions: Vec<(bool, bool)> = code.as_bytes().chunks(2).map(|c| (c.first() == Some(&b'D'), c.get(1) == Some(&b'F'))).collect();
    let keys = args.split_off(args.len().saturating_sub(directions.len()));
    let Some(AggFunc::Builtin(b)) = AggFunc::from_name(name) else {
        return Err(KilnError::internal(format!("WITHIN GROUP on {name}")));
    };
    if b.kind == AggKind::Mode {
        // mode() WITHIN GROUP (ORDER BY x [DESC]): ties go to the lowest (highest) value.
        let orderings = |wanted: usize, got: usize| {
            KilnError::analysis(
                "INVALID_WITHIN_GROUP_EXPRESSION.WRONG_NUM_ORDERINGS",
                format!("Invalid function `mode` with WITHIN GROUP. The function requires {wanted} orderings in WITHIN GROUP but got {got}."),
            )
        };
        if !args.is_empty() {
            return Err(orderings(0, keys.len()));
        }
        let (Some(key), [(desc, _)]) = (keys.into_iter().next(), directions.as_slice()) else {
            return Err(orderings(1, directions.len()));
        };
        if distinct {
            return Err(mode_distinct());
        }
        let (mut b, args) = b.resolve(vec![key])?;
        b.param = if *desc { 2 } else { 1 };
        return Ok(Expr::Aggregate { func: AggFunc::Builtin(b), args, distinct });
    }
    if args.is_empty() || args.len() > 2 {
        return Err(KilnError::analysis(
            "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
            format!("The `{}` requires [1, 2] parameters but the actual number is {}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.", name.to_lowercase(), args.len()),
        ));
    }
    // Spark: with DISTINCT, the order must be the aggregated value itself.
    if distinct && keys.iter().any(|k| Some(k) != args.first()) {
        return Err(KilnError::analysis(
            "INVALID_WITHIN_GROUP_EXPRESSION.MISMATCH_WITH_DISTINCT_INPUT",
            format!("Invalid function `{}` with WITHIN GROUP. The function is invoked with DISTINCT and WITHIN GROUP but expressions {} and {} do not match.", name.to_lowercase(), args[0], keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ")),
        ));
    }
    if args.len() == 1 {
        args.push(Expr::Literal(ScalarValue::Null(DataType::Utf8)));
    }
    let (b, mut args) = b.with_order_directions(&directions)?.resolve(args)?;
    args.extend(keys);
    Ok(Expr::Aggregate { func: AggFunc::Builtin(b), args, distinct })
}

fn mode_distinct() -> KilnError {
    KilnError::analysis(
        "INVALID_WITHIN_GROUP_EXPRESSION.DISTINCT_UNSUPPORTED",
        "Invalid function `mode` with WITHIN GROUP. The function does not support DISTINCT with WITHIN GROUP.",
    )
}

/// Spark's WRONG_NUM_ARGS for `name` called with `actual` arguments.
fn arity_error_of(name: &str, expected: &str, actual: usize) -> KilnError {
    KilnError::analysis(
        "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
        format!("The `{}` requires {expected} parameters but the actual number is {actual}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.", name.to_lowercase()),
    )
}

fn resolve_function<'a>(name: &str, args: Vec<Expr>, distinct: bool, udf_names: impl Iterator<Item = &'a str>) -> Result<Expr> {
    // try_add and the other shorthands of builtins_more.rs.
    let args = match crate::expr::rewrite_more(name, args)? {
        Ok(e) => return Ok(e),
        Err(args) => args,
    };
    let arity_error = |expected: &str| arity_error_of(name, expected, args.len());
    if let Some((base, code)) = name.split_once(crate::expr::WITHIN_GROUP_MARKER) {
        return resolve_within_group(base, code, args, distinct);
    }
    // Spark's RegrCount, RegrAvgX, RegrAvgY (replaced aggregates): count(*), avg(x) or avg(y) over
    // the rows where neither y nor x is NULL.
    if let Some(i) = ["regr_count", "regr_avgx", "regr_avgy"].iter().position(|n| name.eq_ignore_ascii_case(n)) {
        if args.len() != 2 {
            return Err(arity_error("2"));
        }
        let both = Expr::IsNotNull(Box::new(args[0].clone())).and(Expr::IsNotNull(Box::new(args[1].clone())));
        let value = match i {
            0 => Expr::Literal(ScalarValue::Int32(1)),
            1 => args[1].clone(),
            _ => args[0].clone(),
        };
        let only_both = Expr::CaseWhen { branches: vec![(both, value)], else_expr: None, if_form: false };
        return resolve_function(if i == 0 { "count" } else { "avg" }, vec![coerce_expr(only_both)?], distinct, std::iter::empty());
    }
    // count(a, b, ...): the rows where no value is NULL; with DISTINCT, their distinct tuples.
    if name.eq_ignore_ascii_case("count") && args.len() > 1 {
        let all_present = args.iter().map(|a| Expr::IsNotNull(Box::new(a.clone()))).reduce(Expr::and).ok_or_else(|| arity_error("1"))?;
        let fields = args.into_iter().enumerate().flat_map(|(i, a)| [Expr::Literal(ScalarValue::Utf8(format!("col{}", i + 1))), a]).collect();
        let tuple = || Expr::Function { func: ScalarFunc::Builtin(crate::expr::Builtin::Nested(crate::expr::NestedFn::NamedStruct)), args: fields };
        let value = if distinct { tuple() } else { Expr::Literal(ScalarValue::Int32(1)) };
        let only_present = Expr::CaseWhen { branches: vec![(all_present, value)], else_expr: None, if_form: false };
        return resolve_function("count", vec![coerce_expr(only_present)?], distinct, std::iter::empty());
    }
    if let Some(AggFunc::Builtin(b)) = AggFunc::from_name(name) {
        let (min, max) = b.arity();
        if args.len() < min || args.len() > max {
            return Err(arity_error(&if min == max { min.to_string() } else { format!("[{}]", (min..=max).map(|n| n.to_string()).collect::<Vec<_>>().join(", ")) }));
        }
        if distinct && b.kind == AggKind::Mode {
            return Err(mode_distinct());
        }
        let (b, args) = b.resolve(args)?;
        return Ok(Expr::Aggregate { func: AggFunc::Builtin(b), args, distinct });
    }
    if let Some(func) = AggFunc::from_name(name) {
        if args.len() != 1 {
            return Err(arity_error("1"));
        }
        // A nested aggregate is checked with the Aggregate's list (`check_aggregate_output`):
        // `sum(count(*)) OVER ()` is a window's sum of a group's count.
        return Ok(Expr::Aggregate { func, args, distinct });
    }
    if let Some(func) = crate::expr::WindowFunc::from_name(name) {
        return Ok(Expr::WindowFunction { func, args });
    }
    // EXTRACT(field FROM d) (and date_part): the field's function (`day(d)`), or of an interval
    // the interval's field; SECOND with its fraction.
    if name == super::EXTRACT {
        if let [Expr::Literal(crate::types::ScalarValue::Utf8(field)), d] = args.as_slice() {
            let seconds = crate::expr::is_seconds_field(field);
            let function = if seconds { Some("second") } else { crate::expr::extract_field_function(field) };
            let function = function.ok_or_else(|| KilnError::analysis("INVALID_EXTRACT_FIELD", format!("Cannot extract {field} from \"{}\".", crate::expr::sql_name(d))))?;
            let t = d.data_type()?;
            if crate::types::interval::is_interval(&t) || t == crate::types::interval::CALENDAR {
                return super::coercion::interval_extract(function, d.clone());
            }
            if seconds {
                return coerce_expr(crate::expr::second_with_fraction(d.clone()));
            }
            // DAYOFWEEK_ISO: Monday 1 .. Sunday 7.
            if matches!(field.to_ascii_uppercase().as_str(), "DAYOFWEEK_ISO" | "DOW_ISO") {
                return coerce_expr(resolve_function(function, vec![d.clone()], false, std::iter::empty())?.binary(BinaryOp::Plus, Expr::Literal(crate::types::ScalarValue::Int32(1))));
            }
            return resolve_function(function, vec![d.clone()], false, std::iter::empty());
        }
    }
    // Spark's WeekDay: Monday 0 .. Sunday 6, from dayofweek's Sunday 1 .. Saturday 7.
    if name.eq_ignore_ascii_case("weekday") {
        let [d] = args.as_slice() else { return Err(arity_error("1")) };
        let dow = resolve_function("dayofweek", vec![d.clone()], false, std::iter::empty())?;
        let int = |n| Expr::Literal(crate::types::ScalarValue::Int32(n));
        return coerce_expr(dow.binary(BinaryOp::Plus, int(5)).binary(BinaryOp::Modulo, int(7)));
    }
    // Spark's shorthands that are other expressions.
    let replaceable = |name: &'static str, params: Vec<Expr>, replacement: Expr| Expr::Replaceable { name, params, replacement: Box::new(replacement) };
    let lower = name.to_ascii_lowercase();
    let rewrite = |args: Vec<Expr>| -> Option<Expr> {
        let mut a = args.into_iter();
        match lower.as_str() {
            "isnull" => Some(Expr::IsNull(Box::new(a.next()?))),
            "isnotnull" => Some(Expr::IsNotNull(Box::new(a.next()?))),
            "nvl" | "ifnull" => {
                let params: Vec<Expr> = a.collect();
                Some(replaceable(if lower == "nvl" { "nvl" } else { "ifnull" }, params.clone(), Expr::Function { func: ScalarFunc::Coalesce, args: params }))
            }
            "nvl2" => {
                let (x, y, z) = (a.next()?, a.next()?, a.next()?);
                let replacement = Expr::CaseWhen { branches: vec![(Expr::IsNotNull(Box::new(x.clone())), y.clone())], else_expr: Some(Box::new(z.clone())), if_form: true };
                Some(replaceable("nvl2", vec![x, y, z], replacement))
            }
            // Java's pmod: r = a % n; if r < 0 then (r + n) % n else r.
            "pmod" => {
                let (x, n) = (a.next()?, a.next()?);
                let r = x.clone().binary(BinaryOp::Modulo, n.clone());
                let negative = r.clone().binary(BinaryOp::Lt, Expr::Literal(crate::types::ScalarValue::Int32(0)));
                let fixed = r.clone().binary(BinaryOp::Plus, n.clone()).binary(BinaryOp::Modulo, n.clone());
                Some(replaceable("pmod", vec![x, n], Expr::CaseWhen { branches: vec![(negative, fixed)], else_expr: Some(Box::new(r)), if_form: false }))
            }
            // date_part('field', d) / datepart: the function EXTRACT(field FROM d) means.
            "date_part" | "datepart" => {
                let (field, d) = (a.next()?, a.next()?);
                let Expr::Literal(crate::types::ScalarValue::Utf8(f)) = field else { return None };
                if !crate::expr::is_seconds_field(&f) {
                    crate::expr::extract_field_function(&f)?;
                }
                Some(Expr::UnresolvedFunction { name: super::EXTRACT.into(), args: vec![Expr::Literal(crate::types::ScalarValue::Utf8(f)), d], distinct: false })
            }
            "nullif" => {
                let (x, y) = (a.next()?, a.next()?);
                let null = Expr::Literal(crate::types::ScalarValue::Null(arrow::datatypes::DataType::Null));
                let replacement = Expr::CaseWhen { branches: vec![(x.clone().binary(BinaryOp::Eq, y.clone()), null)], else_expr: Some(Box::new(x.clone())), if_form: true };
                Some(replaceable("nullif", vec![x, y], replacement))
            }
            "if" => {
                let (c, t, e) = (a.next()?, a.next()?, a.next()?);
                Some(Expr::CaseWhen { branches: vec![(c, t)], else_expr: Some(Box::new(e)), if_form: true })
            }
            _ => None,
        }
    };
    let wanted = match name.to_ascii_lowercase().as_str() {
        "isnull" | "isnotnull" => Some(1),
        "nvl" | "ifnull" | "nullif" | "pmod" | "date_part" | "datepart" => Some(2),
        "nvl2" => Some(3),
        "if" => Some(3),
        _ => None,
    };
    if let Some(n) = wanted {
        if args.len() != n {
            return Err(arity_error(&n.to_string()));
        }
        return match rewrite(args) {
            // An UnresolvedFunction (date_part's EXTRACT) resolves in its turn.
            Some(Expr::UnresolvedFunction { name, args, distinct }) => resolve_function(&name, args, distinct, std::iter::empty()),
            Some(e) => Ok(e),
            None => Err(KilnError::analysis(
                "INVALID_PARAMETER_VALUE",
                format!("The arguments of `{}` are invalid (date_part takes a literal field: YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFWEEK, DOY).", name.to_lowercase()),
            )),
        };
    }
    if let Some(to) = crate::expr::cast_function_type(name) {
        let [child] = <[Expr; 1]>::try_from(args).map_err(|args| arity_error_of(name, "1", args.len()))?;
        return Ok(Expr::Cast { child: Box::new(child), to, zone: None });
    }
    let Some(func) = ScalarFunc::from_name(name) else {
        let mut known: Vec<&'a str> = ScalarFunc::NAMES.iter().copied().chain(crate::expr::CAST_FUNCTIONS.iter().copied()).chain(["count", "sum", "avg", "min", "max"]).collect();
        for n in crate::expr::WindowFunc::NAMES.iter().copied().chain(crate::expr::Builtin::names()).chain(crate::expr::AggBuiltin::names()) {
            known.push(n);
        }
        known.extend(udf_names);
        let known = known.into_iter().filter(|k| !k.eq_ignore_ascii_case(name));
        let hint = closest_match(name, known).map(|s| format!(" Did you mean `{s}`?")).unwrap_or_default();
        return Err(KilnError::analysis(
            "UNRESOLVED_ROUTINE",
            format!("Cannot resolve routine `{name}` on search path [`system`.`builtin`].{hint}"),
        ));
    };
    let (min, max) = func.arity();
    if args.len() < min || args.len() > max {
        let expected = if min == max { min.to_string() } else if max == usize::MAX { format!("at least {min}") } else { format!("{min} to {max}") };
        return Err(arity_error(&expected));
    }
    let mut args = args;
    // Spark's trim(trimStr, str) (and TRIM(BOTH trimStr FROM str)) but btrim(str, trimStr):
    // kiln's Trim takes the string first.
    if matches!(func, ScalarFunc::Trim | ScalarFunc::LTrim | ScalarFunc::RTrim) && args.len() == 2 && !name.eq_ignore_ascii_case("btrim") {
        args.swap(0, 1);
    }
    if func == ScalarFunc::Rand && args.is_empty() {
        // Spark's ResolveRandomSeed: each rand() its own seed, so two are never one expression.
        return Ok(Expr::Function { func, args: vec![Expr::Literal(crate::types::ScalarValue::Int64(random_seed()))] });
    }
    Ok(Expr::Function { func, args })
}


/// A fresh seed for `rand()` (std's per-process random hash keys, advanced per call).
fn random_seed() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64));
    h.finish() as i64
}

/// `e` with each grouping expression outside aggregate functions replaced by its Expand copy.
fn read_copies(e: Expr, grouping: &[Expr], copies: &[Attribute]) -> Expr {
    if let Some(i) = grouping.iter().position(|g| g == &e) {
        return match e {
            // An attribute keeps the name it was selected by.
            Expr::Attribute(a) => Expr::Attribute(Attribute { name: a.name, ..copies[i].clone() }),
            _ => copies[i].expr(),
        };
    }
    if matches!(e, Expr::Aggregate { .. }) {
        return e;
    }
    let mapped: std::result::Result<Expr, std::convert::Infallible> = e.map_children(|c| Ok(read_copies(c, grouping, copies)));
    mapped.unwrap_or_else(|never| match never {})
}

/// Gives a select-list item a name: attributes and aliases keep theirs, others get Spark's
/// auto-generated one (`sum(amount)`).
fn name_expr(e: Expr) -> Expr {
    match e {
        Expr::Attribute(_) | Expr::Alias { .. } => e,
        // Spark's OuterReference is a NamedExpression: the item is named as the column.
        Expr::OuterReference(ref a) => {
            let name = a.name.clone();
            e.alias(name)
        }
        other => {
            let name = crate::expr::sql_name(&other);
            other.alias(name)
        }
    }
}

/// [`name_expr`] of a coerced select-list item, named without the casts coercion added
/// (Spark names an item before its type coercion runs): `(id % 3)`, not
/// `(id % cast(3 as bigint))`; a cast written in the query stays (`CAST(id AS STRING)`).
fn name_coerced(resolved: &Expr, coerced: Expr) -> Expr {
    if matches!(coerced, Expr::Attribute(_) | Expr::Alias { .. } | Expr::OuterReference(_)) {
        return name_expr(coerced);
    }
    let name = crate::expr::sql_name(&without_added_casts(resolved, coerced.clone()));
    coerced.alias(name)
}

/// `coerced` without the casts that are not in `resolved` at the same place; where the two
/// trees part (coercion rewrote a call), the rest is kept as it is.
fn without_added_casts(resolved: &Expr, coerced: Expr) -> Expr {
    match coerced {
        Expr::Cast { child, .. } if !matches!(resolved, Expr::Cast { .. }) => without_added_casts(resolved, *child),
        coerced => {
            let before = resolved.children();
            if before.len() != coerced.children().len() {
                return coerced;
            }
            let mut at = 0;
            let mapped: std::result::Result<Expr, std::convert::Infallible> = coerced.map_children(|c| {
                at += 1;
                Ok(without_added_casts(before[at - 1], c))
            });
            mapped.unwrap_or_else(|never| match never {})
        }
    }
}

/// Every non-aggregate part of an Aggregate's output must be a grouping expression.
/// An aggregate function reading outer columns only (`min(outer(i))`).
fn outer_aggregate(e: &Expr) -> bool {
    matches!(e, Expr::Aggregate { args, .. }
        if args.iter().any(|a| a.exists(&|y| matches!(y, Expr::OuterReference(_)))) && !args.iter().any(|a| a.exists(&|y| matches!(y, Expr::Attribute(_)))))
}

fn check_aggregate_output(aggregates: Vec<Expr>, grouping: &[Expr]) -> Result<Vec<Expr>> {
    fn check(e: &Expr, grouping: &[Expr]) -> Result<()> {
        if let Expr::Aggregate { func, args, .. } = e {
            if args.iter().any(|a| a.contains_aggregate()) {
                return Err(KilnError::analysis(
                    "NESTED_AGGREGATE_FUNCTION",
                    format!("It is not allowed to use an aggregate function in the argument of another aggregate function: {}(...).", func.name()),
                ));
            }
        }
        if grouping.iter().any(|g| g == e) || matches!(e, Expr::Aggregate { .. } | Expr::Literal(_)) {
            return Ok(());
        }
        // Spark's CheckAnalysis: a correlated scalar subquery outside the aggregates and the
        // grouping is refused, even when it reads grouping columns only.
        if let Expr::ScalarSubquery { plan, .. } = e {
            if plan.outer_references().is_empty() {
                return Ok(());
            }
            return Err(KilnError::analysis(
                "SCALAR_SUBQUERY_IS_IN_GROUP_BY_OR_AGGREGATE_FUNCTION",
                format!("The correlated scalar subquery '\"{}\"' is neither present in GROUP BY, nor in an aggregate function.", crate::expr::sql_name(e)),
            ));
        }
        if let (Expr::Attribute(_), true) = (e, grouping.is_empty()) {
            return Err(KilnError::analysis(
                "MISSING_GROUP_BY",
                "The query does not include a GROUP BY clause. Add GROUP BY or turn it into the window functions using OVER clauses.",
            ));
        }
        if let Expr::Attribute(a) = e {
            return Err(KilnError::analysis(
                "MISSING_AGGREGATION",
                format!(
                    "The non-aggregating expression `{}` is based on columns which are not participating in the GROUP BY clause. Add the columns or the expression to the GROUP BY, aggregate the expression, or use `any_value({})`.",
                    a.name, a.name
                ),
            ));
        }
        e.children().into_iter().try_for_each(|c| check(c, grouping))
    }
    for e in &aggregates {
        check(e.unalias(), grouping)?;
    }
    Ok(aggregates)
}

/// What identifies a USING join's Project in `Resolver::using_hidden`: its columns' ids, then its input's.
fn using_key(list: &[Expr], child: &LogicalPlan) -> Vec<ExprId> {
    named_outputs_ids(list).into_iter().chain(child.output().iter().map(|a| a.id)).collect()
}

/// The ids of the columns a select list gives.
fn named_outputs_ids(list: &[Expr]) -> Vec<ExprId> {
    crate::plan::named_outputs(list).iter().map(|a| a.id).collect()
}

/// Bit `n-1-i` of the grouping id `gid` (of `n` grouping expressions): 1 when expression `i`
/// is rolled up.
fn grouping_bit(gid: Expr, n: usize, i: usize) -> Expr {
    let shift = 1i64 << (n - 1 - i);
    gid.binary(BinaryOp::IntDivide, Expr::lit(ScalarValue::Int64(shift))).binary(BinaryOp::Modulo, Expr::lit(ScalarValue::Int64(2)))
}

/// Spark's grouping_id(c1, ..., ck) names the grouping columns, all of them in order (and is
/// then the grouping id).
fn check_grouping_id_columns(indices: &[usize], n: usize) -> Result<()> {
    if indices.iter().copied().eq(0..n) {
        return Ok(());
    }
    Err(KilnError::analysis("GROUPING_ID_COLUMN_MISMATCH", "Columns of grouping_id do not match the grouping columns (all of them, in their order)."))
}

/// `grouping(c)`, `grouping_id(...)` and `grouping__id` in a HAVING or ORDER BY over an
/// aggregate: read from its grouping id (the `spark_grouping_id` grouping column the
/// grouping analytics' Aggregate keeps, its other grouping columns the expressions in order);
/// outside grouping analytics Spark's UNSUPPORTED_GROUPING_EXPRESSION.
fn grouping_calls_over_id(e: Expr, grouping: &[Expr], input: &[Attribute]) -> Result<Expr> {
    let gid_at = grouping.iter().position(|g| matches!(g, Expr::Attribute(a) if a.name == "spark_grouping_id"));
    let gid = || Expr::UnresolvedAttribute(vec!["spark_grouping_id".to_string()]);
    let column_name = |arg: &Expr| match arg {
        Expr::UnresolvedAttribute(parts) => parts.last().cloned().unwrap_or_default(),
        other => crate::expr::sql_name(other),
    };
    let index = |arg: &Expr, n: usize| -> Result<usize> {
        let name = column_name(arg);
        grouping[..n].iter().position(|g| matches!(g, Expr::Attribute(a) if a.name.eq_ignore_ascii_case(&name))).ok_or_else(|| {
            KilnError::analysis("GROUPING_COLUMN_MISMATCH", format!("Column of grouping ({name}) can't be found in grouping columns {}.", input.iter().map(|a| a.name.clone()).collect::<Vec<_>>().join(",")))
        })
    };
    e.transform_up(&mut |x| {
        let call = match &x {
            Expr::UnresolvedFunction { name, args, .. } if name.eq_ignore_ascii_case("grouping") || name.eq_ignore_ascii_case("grouping_id") => Some((name.to_ascii_lowercase(), args.clone())),
            Expr::UnresolvedAttribute(parts) if parts.len() == 1 && parts[0].eq_ignore_ascii_case("grouping__id") => Some(("grouping_id".to_string(), vec![])),
            _ => None,
        };
        let Some((name, args)) = call else { return Ok(x) };
        let Some(n) = gid_at else {
            return Err(KilnError::analysis("UNSUPPORTED_GROUPING_EXPRESSION", "grouping()/grouping_id() can only be used with GroupingSets/Cube/Rollup."));
        };
        Ok(match (name.as_str(), args.as_slice()) {
            ("grouping", [arg]) => Expr::Cast { child: Box::new(grouping_bit(gid(), n, index(arg, n)?)), to: DataType::Int8, zone: None },
            ("grouping", _) => return Err(KilnError::analysis("WRONG_NUM_ARGS", format!("grouping takes one grouping column, got {} arguments.", args.len()))),
            (_, []) => gid(),
            _ => {
                let indices = args.iter().map(|a| index(a, n)).collect::<Result<Vec<_>>>()?;
                check_grouping_id_columns(&indices, n)?;
                gid()
            }
        })
    })
}
