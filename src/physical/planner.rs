//! The physical planner: strategies turn each optimized logical node into an operator;
//! `JoinSelection` (join_selection.rs) picks the join algorithm from size estimates, hints and join type.

use std::collections::BTreeSet;
use std::sync::Arc;

use arrow::datatypes::DataType;
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::join_selection::JoinSelection;
use super::{AggregateExpr, AggregateMode, Partitioning, PhysicalPlan, ShuffleOrigin};
use crate::expr::ScalarSubqueryExec;
use crate::catalog::TableSource;
use crate::datasource::pushed_filter::PushedFilter;
use crate::config::Config;
use crate::error::{KilnError, Result};
use crate::expr::{aggregate_result_type, AggFunc, Attribute, BinaryOp, Expr, ExprId};
use crate::plan::{named_output, JoinHint, JoinType, LogicalPlan, RepartitionScheme};

/// Plans logical nodes as physical operators (Spark's `SparkStrategy`). The operators are the
/// engine's own ([`PhysicalPlan`]); `EnsureRequirements` and
/// whole-stage code generation run over what a strategy returns, as over the built-ins'.
pub trait PlannerStrategy: Send + Sync {
    /// The strategy's name.
    fn name(&self) -> &'static str;
    /// The operator for `plan`, or None to leave the node to the next strategy. `plan_child`
    /// plans a child with every strategy.
    fn plan(
        &self,
        plan: &Arc<LogicalPlan>,
        plan_child: &dyn Fn(&Arc<LogicalPlan>) -> Result<Arc<PhysicalPlan>>,
    ) -> Result<Option<Arc<PhysicalPlan>>>;
}

/// Forms a physical plan's whole-stage codegen stages (`codegen::collapse_codegen_stages`,
/// which sits above this layer and is handed in by the caller).
pub type FormStages = fn(&Arc<PhysicalPlan>) -> Arc<PhysicalPlan>;

/// Forms no stages.
fn no_stages(plan: &Arc<PhysicalPlan>) -> Arc<PhysicalPlan> {
    plan.clone()
}

/// Plans an optimized logical plan (before `EnsureRequirements`; subqueries without codegen
/// stages).
pub fn plan_physical(plan: &Arc<LogicalPlan>, config: &Config) -> Result<Arc<PhysicalPlan>> {
    plan_physical_with_warnings(plan, config).map(|(p, _)| p)
}

/// Plans an optimized logical plan; also returns the hints `JoinSelection` could not honour.
pub fn plan_physical_with_warnings(plan: &Arc<LogicalPlan>, config: &Config) -> Result<(Arc<PhysicalPlan>, Vec<String>)> {
    plan_physical_with_strategies(plan, config, &[], no_stages)
}

/// [`plan_physical_with_warnings`] with a session's injected strategies, tried on every node
/// before the built-in ones (Spark's `extraStrategies`); `form_stages` forms the codegen stages
/// of each scalar subquery's plan.
pub fn plan_physical_with_strategies(
    plan: &Arc<LogicalPlan>,
    config: &Config,
    strategies: &[Arc<dyn PlannerStrategy>],
    form_stages: FormStages,
) -> Result<(Arc<PhysicalPlan>, Vec<String>)> {
    let planner = Planner { config, warnings: Default::default(), strategies };
    let plan = &plan_subqueries(plan, config, strategies, form_stages, &planner.warnings)?;
    let physical = planner.plan(plan, true)?;
    Ok((physical, planner.warnings.into_inner()))
}

/// Spark's `PlanSubqueries`: each uncorrelated scalar subquery left in the optimized plan is
/// planned as a query of its own (requirements met, codegen stages formed) and becomes a
/// `ScalarSubqueryExec`, which the executor runs once before the stage that hosts it.
fn plan_subqueries(
    plan: &Arc<LogicalPlan>,
    config: &Config,
    strategies: &[Arc<dyn PlannerStrategy>],
    form_stages: FormStages,
    warnings: &std::cell::RefCell<Vec<String>>,
) -> Result<Arc<LogicalPlan>> {
    plan.transform_scalar_subqueries(&mut |plan, id| {
        if !plan.outer_references().is_empty() {
            return Err(KilnError::internal(format!("correlated scalar-subquery#{} reached the physical planner", id.0)));
        }
        let data_type = plan.plan().output().first().map(|a| a.data_type.clone()).ok_or_else(|| KilnError::internal("scalar subquery without a column"))?;
        let (physical, more) = plan_physical_with_strategies(plan.plan(), config, strategies, form_stages)?;
        warnings.borrow_mut().extend(more);
        let physical = prepare_standalone(&physical, config, form_stages);
        Ok(Expr::ScalarSubqueryExec(Arc::new(ScalarSubqueryExec::new(id, super::next_plan_id(), data_type, physical))))
    })
}

/// A physical plan run as a query of its own (a subquery, a step of a recursive CTE):
/// requirements met, codegen stages formed.
fn prepare_standalone(physical: &Arc<PhysicalPlan>, config: &Config, form_stages: FormStages) -> Arc<PhysicalPlan> {
    let physical = super::ensure_requirements(physical, config.shuffle_partitions);
    if config.whole_stage_codegen {
        form_stages(&physical)
    } else {
        physical
    }
}

/// An optimized logical plan planned to run as a query of its own.
pub fn plan_standalone(plan: &Arc<LogicalPlan>, config: &Config, form_stages: FormStages) -> Result<Arc<PhysicalPlan>> {
    let (physical, _) = plan_physical_with_strategies(plan, config, &[], form_stages)?;
    Ok(prepare_standalone(&physical, config, form_stages))
}

struct Planner<'a> {
    config: &'a Config,
    /// Hints that could not be honoured, in Spark's words.
    warnings: std::cell::RefCell<Vec<String>>,
    /// Injected strategies, tried first.
    strategies: &'a [Arc<dyn PlannerStrategy>],
}

impl Planner<'_> {
    fn plan(&self, plan: &Arc<LogicalPlan>, root: bool) -> Result<Arc<PhysicalPlan>> {
        for strategy in self.strategies {
            if let Some(p) = strategy.plan(plan, &|child| self.plan(child, false))? {
                return Ok(p);
            }
        }
        let node = match plan.as_ref() {
            LogicalPlan::Relation { .. } => return self.plan_scan(plan, None, None),
            LogicalPlan::Project { list, child } => match self.scan_below(child, list)? {
                Some(scan) => return Ok(scan),
                None => PhysicalPlan::Project { list: list.clone(), child: self.plan(child, false)? },
            },
            LogicalPlan::Filter { condition, child } if matches!(child.as_ref(), LogicalPlan::Relation { .. }) => {
                return self.plan_scan(child, Some(condition), None)
            }
            LogicalPlan::Filter { condition, child } => PhysicalPlan::Filter { condition: condition.clone(), child: self.plan(child, false)? },
            LogicalPlan::Aggregate { grouping, aggregates, child } => return self.plan_aggregate(grouping, aggregates, child),
            LogicalPlan::Join { left, right, join_type, condition, hint, .. } => {
                return self.plan_join(left, right, *join_type, condition.as_ref(), *hint)
            }
            // EliminateResolvedHint folds hints into joins; one left over changes nothing.
            LogicalPlan::ResolvedHint { child, .. } => return self.plan(child, root),
            LogicalPlan::Sort { order, global, child } => {
                PhysicalPlan::Sort { order: order.clone(), global: *global, child: self.plan(child, false)? }
            }
            LogicalPlan::GlobalLimit { limit, child } => {
                // LIMIT l OFFSET o: GlobalLimit l over Offset o over LocalLimit l + o.
                let (offset, child) = match child.as_ref() {
                    LogicalPlan::Offset { offset, child } => (*offset, child),
                    _ => (0, child),
                };
                let inner = match child.as_ref() {
                    LogicalPlan::LocalLimit { child, .. } => child,
                    _ => child,
                };
                if offset > 0 {
                    let local = Arc::new(PhysicalPlan::LocalLimit { limit: limit.saturating_add(offset), child: self.plan(inner, false)? });
                    return Ok(Arc::new(if root {
                        PhysicalPlan::CollectLimit { limit: *limit, offset, child: local.children()[0].clone() }
                    } else {
                        PhysicalPlan::GlobalLimit { limit: *limit, offset, child: local }
                    }));
                }
                // ORDER BY + LIMIT: TakeOrderedAndProject, no global sort.
                let (sort, list) = match inner.as_ref() {
                    LogicalPlan::Sort { global: true, .. } => (Some(inner), None),
                    LogicalPlan::Project { list, child } if matches!(child.as_ref(), LogicalPlan::Sort { global: true, .. }) => {
                        (Some(child), Some(list.clone()))
                    }
                    _ => (None, None),
                };
                if let Some(sort) = sort {
                    if let LogicalPlan::Sort { order, child, .. } = sort.as_ref() {
                        let list = list.unwrap_or_else(|| child.output().iter().map(|a| a.expr()).collect());
                        return Ok(Arc::new(PhysicalPlan::TakeOrderedAndProject {
                            limit: *limit,
                            order: order.clone(),
                            list,
                            child: self.plan(child, false)?,
                        }));
                    }
                }
                let local = Arc::new(PhysicalPlan::LocalLimit { limit: *limit, child: self.plan(inner, false)? });
                if root {
                    PhysicalPlan::CollectLimit { limit: *limit, offset: 0, child: local.children()[0].clone() }
                } else {
                    PhysicalPlan::GlobalLimit { limit: *limit, offset: 0, child: local }
                }
            }
            // OFFSET alone: a limit of -1, as Spark plans it.
            LogicalPlan::Offset { offset, child } => {
                let child = self.plan(child, false)?;
                if root {
                    PhysicalPlan::CollectLimit { limit: usize::MAX, offset: *offset, child }
                } else {
                    PhysicalPlan::GlobalLimit { limit: usize::MAX, offset: *offset, child }
                }
            }
            LogicalPlan::LocalLimit { limit, child } => PhysicalPlan::LocalLimit { limit: *limit, child: self.plan(child, false)? },
            LogicalPlan::Repartition { scheme, child } => self.plan_repartition(scheme, self.plan(child, false)?),
            LogicalPlan::LocalRelation { output, data } => PhysicalPlan::LocalTableScan { output: output.clone(), data: data.clone() },
            LogicalPlan::Range { output, range } => PhysicalPlan::Range { output: output.clone(), range: *range },
            LogicalPlan::UnionLoop { id, anchor, recursion, output, limit } => PhysicalPlan::UnionLoop {
                id: *id,
                output: output.clone(),
                anchor: anchor.clone(),
                recursion: recursion.clone(),
                limit: *limit,
                rows: Default::default(),
            },
            LogicalPlan::OneRowRelation => {
                let batch = RecordBatch::try_new_with_options(
                    Arc::new(arrow::datatypes::Schema::empty()),
                    vec![],
                    &RecordBatchOptions::new().with_row_count(Some(1)),
                )?;
                PhysicalPlan::LocalTableScan { output: vec![], data: vec![batch] }
            }
            LogicalPlan::SubqueryAlias { child, .. } => return self.plan(child, root),
            LogicalPlan::Union { children } => {
                PhysicalPlan::Union { children: children.iter().map(|c| self.plan(c, false)).collect::<Result<_>>()? }
            }
            LogicalPlan::Expand { projections, output, child } => {
                PhysicalPlan::Expand { projections: projections.clone(), output: output.clone(), child: self.plan(child, false)? }
            }
            LogicalPlan::Generate { generator, outer, child, .. } => {
                let generated = plan.qualified_generator_output();
                let required_child_output = plan.output()[..plan.output().len() - generated.len()].to_vec();
                PhysicalPlan::Generate { generator: generator.clone(), required_child_output, outer: *outer, generator_output: generated, child: self.plan(child, false)? }
            }
            LogicalPlan::Window { window_exprs, partition_by, order_by, child } => PhysicalPlan::Window {
                window_exprs: window_exprs.clone(),
                partition_by: partition_by.clone(),
                order_by: order_by.clone(),
                child: self.plan(child, false)?,
            },
            LogicalPlan::SetOperation { .. } | LogicalPlan::Distinct { .. } | LogicalPlan::UnresolvedRelation { .. } | LogicalPlan::UnionLoopRef { .. } | LogicalPlan::UnresolvedHint { .. } | LogicalPlan::GroupingSets { .. } | LogicalPlan::LateralJoin { .. } | LogicalPlan::Pivot { .. } | LogicalPlan::Unpivot { .. } | LogicalPlan::UnresolvedSubqueryColumnAliases { .. } => {
                return Err(KilnError::internal(format!("{} reached the physical planner", plan.node_string())))
            }
        };
        Ok(Arc::new(node))
    }

    /// Spark's `BasicOperators` for `Repartition` / `RepartitionByExpression`: a shuffle to the
    /// scheme's partitioning, or, for `coalesce`, a `Coalesce`. Without a number, the session's
    /// `spark.sql.shuffle.partitions`, and AQE may coalesce them.
    fn plan_repartition(&self, scheme: &RepartitionScheme, child: Arc<PhysicalPlan>) -> PhysicalPlan {
        let by = |n: Option<usize>| match n {
            Some(n) => (n, ShuffleOrigin::RepartitionByNum),
            None => (self.config.shuffle_partitions, ShuffleOrigin::RepartitionByCol),
        };
        let (partitioning, origin) = match scheme {
            RepartitionScheme::Count { partitions, shuffle: false } => return PhysicalPlan::Coalesce { partitions: *partitions, child },
            RepartitionScheme::Count { partitions, shuffle: true } => (Partitioning::RoundRobin(*partitions), ShuffleOrigin::RepartitionByNum),
            RepartitionScheme::Hash { keys, partitions } => {
                let (n, origin) = by(*partitions);
                (if keys.is_empty() { Partitioning::RoundRobin(n) } else { Partitioning::Hash(keys.clone(), n) }, origin)
            }
            RepartitionScheme::Range { order, partitions } => {
                let (n, origin) = by(*partitions);
                (Partitioning::Range(order.clone(), n), origin)
            }
        };
        PhysicalPlan::Exchange { partitioning, origin, plan_id: super::next_plan_id(), child }
    }

    /// `Project [cols] <- Filter? <- Relation`: the scan reads only the columns used above it.
    fn scan_below(&self, child: &Arc<LogicalPlan>, list: &[Expr]) -> Result<Option<Arc<PhysicalPlan>>> {
        match child.as_ref() {
            LogicalPlan::Relation { .. } => Ok(Some(self.plan_scan(child, None, Some(list))?)),
            LogicalPlan::Filter { condition, child: rel } if matches!(rel.as_ref(), LogicalPlan::Relation { .. }) => {
                Ok(Some(self.plan_scan(rel, Some(condition), Some(list))?))
            }
            _ => Ok(None),
        }
    }

    /// Spark's `FileSourceStrategy` for `Project? <- Filter? <- Relation`:
    /// - deterministic conjuncts over partition columns only are PartitionFilters: they choose
    ///   the files now, and the Filter above the scan drops them;
    /// - deterministic conjuncts over data columns only are DataFilters, which the source may use
    ///   to skip data; the Filter above the scan still checks them on every row;
    /// - the Project is left out when it lists exactly the columns below it.
    ///
    /// In-memory tables have no partition columns; those that are not caches keep their Project.
    fn plan_scan(&self, rel: &Arc<LogicalPlan>, condition: Option<&Expr>, list: Option<&[Expr]>) -> Result<Arc<PhysicalPlan>> {
        let LogicalPlan::Relation { table, output } = rel.as_ref() else {
            return Err(KilnError::internal("scan of a non-relation"));
        };
        let needed: BTreeSet<ExprId> = match list {
            Some(list) => list.iter().flat_map(|e| e.references()).chain(condition.iter().flat_map(|c| c.references())).collect(),
            None => output.iter().map(|a| a.id).collect(),
        };
        let partition_ids: BTreeSet<ExprId> = match &table.source {
            TableSource::Parquet(t) => output.iter().filter(|a| t.is_partition_column(&a.name)).map(|a| a.id).collect(),
            TableSource::Memory(_) | TableSource::Text(_) | TableSource::Provider(_) => BTreeSet::new(),
        };
        let conjuncts: Vec<&Expr> = condition.map(|c| c.split_conjunction()).unwrap_or_default();
        let partition_filters: Vec<Expr> = match (&table.source, condition) {
            (TableSource::Parquet(t), Some(c)) => t.partition_filters(output, c),
            _ => vec![],
        };
        // Non-deterministic conjuncts (rand()) and subqueries are never handed to the source.
        let data_filters: Vec<Expr> = conjuncts
            .iter()
            .filter(|c| c.deterministic() && !c.contains_subquery() && c.references().is_disjoint(&partition_ids))
            .map(|c| (*c).clone())
            .collect();
        let scan = Arc::new(self.plan_scan_columns(rel, &needed, partition_filters.clone(), data_filters)?);
        // Spark's FileSourceStrategy rebuilds the filter left-deep from the conjuncts it keeps.
        let after_scan = Expr::conjunction(conjuncts.into_iter().filter(|c| !partition_filters.contains(c)).cloned());
        let below = match after_scan {
            Some(condition) => Arc::new(PhysicalPlan::Filter { condition, child: scan }),
            None => scan,
        };
        let Some(list) = list else { return Ok(below) };
        let below_ids: Vec<ExprId> = below.output().iter().map(|a| a.id).collect();
        let list_ids: Vec<Option<ExprId>> = list.iter().map(|e| if let Expr::Attribute(a) = e { Some(a.id) } else { None }).collect();
        // A cache's scan, as a file scan, needs no Project that only lists its columns.
        let is_file_scan = matches!(table.source, TableSource::Parquet(_) | TableSource::Text(_)) || table.cached.is_some();
        if is_file_scan && list_ids.iter().copied().eq(below_ids.into_iter().map(Some)) {
            return Ok(below);
        }
        Ok(Arc::new(PhysicalPlan::Project { list: list.to_vec(), child: below }))
    }

    fn plan_scan_columns(
        &self,
        rel: &Arc<LogicalPlan>,
        needed: &BTreeSet<ExprId>,
        partition_filters: Vec<Expr>,
        data_filters: Vec<Expr>,
    ) -> Result<PhysicalPlan> {
        let LogicalPlan::Relation { table, output } = rel.as_ref() else {
            return Err(KilnError::internal("scan of a non-relation"));
        };
        // Spark's FileSourceStrategy: the needed data columns, then every partition column.
        let is_partition = |a: &Attribute| matches!(&table.source, TableSource::Parquet(t) if t.is_partition_column(&a.name));
        let mut cols: Vec<Attribute> = output.iter().filter(|a| needed.contains(&a.id) || is_partition(a)).cloned().collect();
        if cols.is_empty() {
            // count(*) still needs row counts: read the narrowest column.
            cols.extend(output.first().cloned());
        }
        Ok(match &table.source {
            TableSource::Parquet(t) => {
                let selected_files = t.select_files(output, &partition_filters)?;
                let pushed_filters = data_filters.iter().filter_map(PushedFilter::translate).collect();
                PhysicalPlan::FileScan {
                    table: table.clone(),
                    output: cols,
                    partition_filters,
                    data_filters,
                    pushed_filters,
                    selected_files,
                    metrics: Default::default(),
                }
            }
            TableSource::Text(t) => PhysicalPlan::FileScan {
                table: table.clone(),
                output: cols,
                partition_filters,
                pushed_filters: data_filters.iter().filter_map(PushedFilter::translate).collect(),
                data_filters,
                selected_files: (0..t.files.len()).collect(),
                metrics: Default::default(),
            },
            // A provider is handed the filters it can read (PushedFilters), as a file source is.
            TableSource::Provider(_) => PhysicalPlan::InMemoryScan { table: table.clone(), output: cols, predicates: data_filters, relation: output.clone() },
            TableSource::Memory(_) => {
                let predicates = if table.cached.is_some() { data_filters } else { vec![] };
                PhysicalPlan::InMemoryScan { table: table.clone(), output: cols, predicates, relation: output.clone() }
            }
        })
    }

    /// Spark's `AggUtils.planAggregateWithoutDistinct`: a partial aggregate, an exchange added by
    /// EnsureRequirements, and a final aggregate. DISTINCT aggregates run in one Complete step
    /// over clustered input.
    fn plan_aggregate(&self, grouping: &[Expr], aggregates: &[Expr], child: &Arc<LogicalPlan>) -> Result<Arc<PhysicalPlan>> {
        let child = match child.as_ref() {
            // An aggregate straight over a table (count(*)) reads only the columns it uses.
            LogicalPlan::Relation { .. } => {
                let needed: BTreeSet<ExprId> = grouping.iter().chain(aggregates).flat_map(|e| e.references()).collect();
                Arc::new(self.plan_scan_columns(child, &needed, vec![], vec![])?)
            }
            _ => self.plan(child, false)?,
        };
        let named_grouping: Vec<Expr> = grouping
            .iter()
            .map(|g| match g {
                Expr::Attribute(_) => g.clone(),
                other => other.clone().alias(crate::expr::sql_name(other)),
            })
            .collect();
        let grouping_attrs: Vec<(Expr, Attribute)> = grouping
            .iter()
            .zip(&named_grouping)
            .filter_map(|(g, n)| named_output(n).map(|a| (g.clone(), a)))
            .collect();
        let mut aggs: Vec<AggregateExpr> = vec![];
        let mut result = vec![];
        for e in aggregates {
            let r = e.clone().transform_down(&mut |x: Expr| -> Result<Expr> {
                if let Some((_, a)) = grouping_attrs.iter().find(|(g, _)| g == &x) {
                    return Ok(a.expr());
                }
                if let Expr::Aggregate { func, args, distinct } = &x {
                    if let Some(existing) = aggs.iter().find(|a| a.func == *func && &a.args == args && a.distinct == *distinct) {
                        return Ok(existing.result.expr());
                    }
                    let agg = aggregate_expr(*func, args.clone(), *distinct, &x)?;
                    let out = agg.result.expr();
                    aggs.push(agg);
                    return Ok(out);
                }
                Ok(x)
            })?;
            result.push(r);
        }
        if aggs.iter().any(|a| a.distinct) {
            return Ok(Arc::new(PhysicalPlan::HashAggregate {
                mode: AggregateMode::Complete,
                grouping: named_grouping,
                aggregates: aggs,
                result,
                child,
            }));
        }
        let partial = Arc::new(PhysicalPlan::HashAggregate {
            mode: AggregateMode::Partial,
            grouping: named_grouping.clone(),
            aggregates: aggs.clone(),
            result: vec![],
            child,
        });
        let final_grouping = grouping_attrs.iter().map(|(_, a)| a.expr()).collect();
        Ok(Arc::new(PhysicalPlan::HashAggregate { mode: AggregateMode::Final, grouping: final_grouping, aggregates: aggs, result, child: partial }))
    }

    /// Splits the condition into equi-join keys and the rest, plans both children, and lets
    /// `JoinSelection` pick the operator.
    fn plan_join(
        &self,
        left: &Arc<LogicalPlan>,
        right: &Arc<LogicalPlan>,
        join_type: JoinType,
        condition: Option<&Expr>,
        hint: JoinHint,
    ) -> Result<Arc<PhysicalPlan>> {
        let (left_ids, right_ids) = (ids(left), ids(right));
        let mut left_keys = vec![];
        let mut right_keys = vec![];
        let mut rest = vec![];
        for c in condition.map(|c| c.split_conjunction()).unwrap_or_default() {
            let within = |e: &Expr, s: &BTreeSet<ExprId>| !e.references().is_empty() && e.references().iter().all(|id| s.contains(id));
            // Spark's ExtractEquiJoinKeys: `l <=> r` joins on (coalesce(l, default), isnull(l)).
            if let Expr::Binary { op: BinaryOp::EqNullSafe, left: l, right: r } = c {
                let sides = if within(l, &left_ids) && within(r, &right_ids) {
                    Some((l, r))
                } else if within(r, &left_ids) && within(l, &right_ids) {
                    Some((r, l))
                } else {
                    None
                };
                if let Some((l, r)) = sides {
                    if let (Some(dl), Some(dr)) = (null_safe_default(l), null_safe_default(r)) {
                        let coalesce = |e: &Expr, d: Expr| Expr::Function { func: crate::expr::ScalarFunc::Coalesce, args: vec![e.clone(), d] };
                        left_keys.extend([coalesce(l, dl), Expr::IsNull(Box::new(l.as_ref().clone()))]);
                        right_keys.extend([coalesce(r, dr), Expr::IsNull(Box::new(r.as_ref().clone()))]);
                        continue;
                    }
                }
            }
            if let Expr::Binary { op: BinaryOp::Eq, left: l, right: r } = c {
                if within(l, &left_ids) && within(r, &right_ids) {
                    left_keys.push(l.as_ref().clone());
                    right_keys.push(r.as_ref().clone());
                    continue;
                }
                if within(r, &left_ids) && within(l, &right_ids) {
                    left_keys.push(r.as_ref().clone());
                    right_keys.push(l.as_ref().clone());
                    continue;
                }
            }
            rest.push(c.clone());
        }
        let selection = JoinSelection {
            config: self.config,
            join_type,
            hint,
            left_keys,
            right_keys,
            extra: Expr::conjunction(rest),
            condition: condition.cloned(),
            left_size: crate::stats::size_in_bytes_u64_with(left, self.config.cbo_enabled),
            right_size: crate::stats::size_in_bytes_u64_with(right, self.config.cbo_enabled),
            left: self.plan(left, false)?,
            right: self.plan(right, false)?,
        };
        Ok(Arc::new(selection.select(&mut self.warnings.borrow_mut())))
    }
}

/// Spark's `Literal.default` of a join key's type, for a null-safe key (None: not a key type).
fn null_safe_default(e: &Expr) -> Option<Expr> {
    use crate::types::ScalarValue as V;
    Some(Expr::Literal(match e.data_type().ok()? {
        DataType::Int32 => V::Int32(0),
        DataType::Int64 => V::Int64(0),
        DataType::Float64 => V::Float64(0.0),
        DataType::Decimal128(p, s) => V::Decimal(0, p, s),
        DataType::Utf8 => V::Utf8(String::new()),
        DataType::Boolean => V::Boolean(false),
        DataType::Date32 => V::Date32(0),
        _ => return None,
    }))
}

fn ids(p: &LogicalPlan) -> BTreeSet<ExprId> {
    p.output().iter().map(|a| a.id).collect()
}

/// The estimated bytes of `plan`'s output (`crate::stats`), as JoinSelection compares them
/// with `spark.sql.autoBroadcastJoinThreshold`.
pub fn estimate_size(plan: &LogicalPlan) -> u64 {
    crate::stats::size_in_bytes_u64(plan)
}

/// The AggregateExpr for one aggregate call: its result attribute and Spark's buffer columns.
pub fn aggregate_expr(func: AggFunc, args: Vec<Expr>, distinct: bool, call: &Expr) -> Result<AggregateExpr> {
    let input = match args.first() {
        Some(a) => a.data_type()?,
        None => DataType::Int64,
    };
    let result_type = aggregate_result_type(func, &input);
    let result = Attribute::new(crate::expr::sql_name(call), result_type.clone(), call.nullable());
    // Spark's Average keeps a double sum for non-decimal input, a decimal(p+10,s) sum otherwise.
    let sum_type = match (func, &input) {
        (AggFunc::Avg, DataType::Decimal128(..)) => aggregate_result_type(AggFunc::Sum, &input),
        (AggFunc::Avg, t) if crate::types::interval::is_interval(t) => t.clone(),
        (AggFunc::Avg, _) => DataType::Float64,
        _ => result_type.clone(),
    };
    let buffer = match func {
        AggFunc::Builtin(b) => {
            let types = args.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?;
            b.buffer(&types).into_iter().map(|(n, t, nullable)| Attribute::new(n, t, nullable)).collect()
        }
        AggFunc::Udaf(u) => u.state_fields().iter().map(|f| Attribute::new(f.name().clone(), f.data_type().clone(), f.is_nullable())).collect(),
        AggFunc::Count => vec![Attribute::new("count", DataType::Int64, false)],
        AggFunc::Sum if matches!(input, DataType::Decimal128(..)) => {
            vec![Attribute::new("sum", sum_type, true), Attribute::new("isEmpty", DataType::Boolean, false)]
        }
        AggFunc::Sum => vec![Attribute::new("sum", sum_type, true)],
        AggFunc::Avg => vec![Attribute::new("sum", sum_type, true), Attribute::new("count", DataType::Int64, false)],
        AggFunc::Min => vec![Attribute::new("min", input, true)],
        AggFunc::Max => vec![Attribute::new("max", input, true)],
    };
    Ok(AggregateExpr { func, args, distinct, result, buffer })
}
