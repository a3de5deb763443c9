//! Spark's `BasicStatsPlanVisitor` (`spark.sql.cbo.enabled`): row counts and column statistics
//! propagated from ANALYZEd relations through `FilterEstimation`, `ProjectEstimation`,
//! `AggregateEstimation` and `JoinEstimation`; every other node, and any node whose inputs lack
//! row counts, falls back to the size-only visitor over its children's estimates.
//!
//! Deviations: joins estimate from distinct counts only (Spark also joins histograms when both
//! keys have one); a filter's histogram use covers range and equality predicates on one column.

use std::collections::HashMap;

use super::column::{ColumnStat, Histogram};
use super::{default_size, from_children, pruned_size, Statistics};
use crate::catalog::Table;
use crate::expr::{Attribute, BinaryOp, Expr, ExprId};
use crate::plan::{JoinType, LogicalPlan};
use crate::types::ScalarValue;

/// A node's estimate: its statistics and what is known of its columns.
#[derive(Debug, Clone, Default)]
pub struct Estimate {
    /// Bytes.
    pub size_in_bytes: u128,
    /// Rows, when known.
    pub row_count: Option<u128>,
    /// Column statistics by attribute id.
    pub columns: HashMap<ExprId, ColumnStat>,
}

impl Estimate {
    fn stats(&self) -> Statistics {
        Statistics { size_in_bytes: self.size_in_bytes, row_count: self.row_count }
    }
    fn size_only(s: Statistics) -> Estimate {
        Estimate { size_in_bytes: s.size_in_bytes, row_count: s.row_count, columns: HashMap::new() }
    }
}

/// Where estimates go, and how a LIKE is estimated.
#[derive(Default)]
pub(crate) struct Map<'a> {
    /// Every node's statistics, by address (EXPLAIN COST).
    pub nodes: Option<&'a mut HashMap<*const LogicalPlan, Statistics>>,
    /// The selectivity of a LIKE, which Spark does not estimate (None: keeps every row, as in
    /// Spark). The join reorder sets one: a pattern filter that keeps all rows would make a
    /// filtered dimension look as large as its table and leave it last.
    pub like_selectivity: Option<f64>,
}

/// The selectivity the join reorder gives a LIKE (DuckDB's default filter selectivity).
pub const REORDER_LIKE_SELECTIVITY: f64 = 0.2;

/// The CBO estimate of `plan`, recording every node's statistics in `map`.
pub(crate) fn visit(plan: &LogicalPlan, map: &mut Map<'_>) -> Estimate {
    let est = compute(plan, map);
    if let Some(m) = &mut map.nodes {
        m.insert(plan as *const LogicalPlan, est.stats());
    }
    est
}

/// Spark's `getSizePerRow` with column statistics: a string's average length plus 12 bytes of
/// UTF8String header, other columns their average length, else their default size.
fn size_per_row(attrs: &[Attribute], cols: &HashMap<ExprId, ColumnStat>) -> u128 {
    8 + attrs
        .iter()
        .map(|a| match cols.get(&a.id).and_then(|c| c.avg_len) {
            Some(len) if matches!(a.data_type, arrow::datatypes::DataType::Utf8 | arrow::datatypes::DataType::LargeUtf8 | arrow::datatypes::DataType::Utf8View) => {
                len as u128 + 12
            }
            Some(len) => len as u128,
            None => default_size(&a.data_type),
        })
        .sum::<u128>()
}

/// Spark's `getOutputSize`: rows times row size, at least 1.
fn output_size(attrs: &[Attribute], rows: u128, cols: &HashMap<ExprId, ColumnStat>) -> u128 {
    if rows == 0 {
        1
    } else {
        rows.saturating_mul(size_per_row(attrs, cols))
    }
}

/// The statistics of the output columns only.
fn output_map(attrs: &[Attribute], cols: &HashMap<ExprId, ColumnStat>) -> HashMap<ExprId, ColumnStat> {
    attrs.iter().filter_map(|a| Some((a.id, cols.get(&a.id)?.clone()))).collect()
}

/// A relation's estimate from its collected statistics (`CatalogStatistics.toPlanStats`).
fn relation(table: &Table, output: &[Attribute]) -> Option<Estimate> {
    let stats = table.stats.as_deref().filter(|s| s.fingerprint == table.fingerprint())?;
    let Some(rows) = stats.row_count else {
        return Some(Estimate { size_in_bytes: stats.size_in_bytes, row_count: None, columns: HashMap::new() });
    };
    let columns: HashMap<ExprId, ColumnStat> =
        output.iter().filter_map(|a| Some((a.id, stats.columns.get(&a.name.to_lowercase())?.clone()))).collect();
    Some(Estimate { size_in_bytes: output_size(output, rows, &columns), row_count: Some(rows), columns })
}

fn compute(plan: &LogicalPlan, map: &mut Map<'_>) -> Estimate {
    match plan {
        LogicalPlan::Relation { table, output } => {
            relation(table, output).unwrap_or_else(|| Estimate::size_only(super::compute(plan, &mut None)))
        }
        // The relation under a partition filter: Spark's PruneFileSourcePartitions gives it the
        // rows FilterEstimation expects of the partition filters, and the kept files' bytes.
        LogicalPlan::Filter { condition, child } if pruned_size(condition, child).is_some() => {
            let LogicalPlan::Relation { table, output } = child.as_ref() else { return Estimate::default() };
            let pruned_bytes = pruned_size(condition, child).unwrap_or(super::DEFAULT_SIZE_IN_BYTES);
            let full = relation(table, output);
            let relation_est = match &full {
                Some(full) if full.row_count.is_some() => {
                    let filters = match &table.source {
                        crate::catalog::TableSource::Parquet(parquet) => Expr::conjunction(parquet.partition_filters(output, condition)),
                        crate::catalog::TableSource::Memory(_) | crate::catalog::TableSource::Text(_) | crate::catalog::TableSource::Provider(_) => None,
                    };
                    match filters {
                        Some(f) => filter(&f, full, output, true, map.like_selectivity).unwrap_or_else(|| full.clone()),
                        None => full.clone(),
                    }
                }
                _ => Estimate { size_in_bytes: pruned_bytes, row_count: None, columns: HashMap::new() },
            };
            if let Some(m) = &mut map.nodes {
                m.insert(child.as_ref() as *const LogicalPlan, relation_est.stats());
            }
            filter(condition, &relation_est, &plan.output(), true, map.like_selectivity)
                .unwrap_or_else(|| Estimate::size_only(from_children(plan, &[relation_est.stats()])))
        }
        LogicalPlan::Filter { condition, child } => {
            let c = visit(child, map);
            let leaf = matches!(child.as_ref(), LogicalPlan::Relation { .. } | LogicalPlan::LocalRelation { .. });
            filter(condition, &c, &plan.output(), leaf, map.like_selectivity).unwrap_or_else(|| Estimate::size_only(from_children(plan, &[c.stats()])))
        }
        LogicalPlan::Project { child, .. } => {
            let c = visit(child, map);
            project_estimate(plan, &c)
        }
        LogicalPlan::Aggregate { grouping, aggregates, child } => {
            let c = visit(child, map);
            aggregate(grouping, aggregates, &plan.output(), &c).unwrap_or_else(|| Estimate::size_only(from_children(plan, &[c.stats()])))
        }
        LogicalPlan::Join { left, right, .. } => {
            let (l, r) = (visit(left, map), visit(right, map));
            join_estimate(plan, &l, &r)
        }
        LogicalPlan::LocalRelation { .. } | LogicalPlan::Range { .. } | LogicalPlan::OneRowRelation | LogicalPlan::UnresolvedRelation { .. } => {
            Estimate::size_only(super::compute(plan, &mut None))
        }
        other => {
            let children: Vec<Statistics> = other.children().into_iter().map(|c| visit(c, map).stats()).collect();
            Estimate::size_only(from_children(other, &children))
        }
    }
}

/// The estimate of `plan` (`spark.sql.cbo.enabled`'s `plan.stats`).
pub fn estimate(plan: &LogicalPlan) -> Estimate {
    visit(plan, &mut Map::default())
}

/// `estimate` as the join reorder sees it: a LIKE keeps `REORDER_LIKE_SELECTIVITY` of the rows.
pub fn estimate_for_reorder(plan: &LogicalPlan) -> Estimate {
    visit(plan, &mut Map { nodes: None, like_selectivity: Some(REORDER_LIKE_SELECTIVITY) })
}

/// A Project's estimate from its child's (Spark's `ProjectEstimation`, else the size-only
/// fallback).
pub(crate) fn project_estimate(plan: &LogicalPlan, c: &Estimate) -> Estimate {
    let (LogicalPlan::Project { list, .. }, Some(rows)) = (plan, c.row_count) else {
        return Estimate::size_only(from_children(plan, &[c.stats()]));
    };
    let out = plan.output();
    let mut cols = c.columns.clone();
    cols.extend(alias_stats(list, &c.columns));
    let columns = output_map(&out, &cols);
    Estimate { size_in_bytes: output_size(&out, rows, &columns), row_count: Some(rows), columns }
}

/// A Join's estimate from its children's (Spark's `JoinEstimation`, else the size-only fallback).
pub(crate) fn join_estimate(plan: &LogicalPlan, l: &Estimate, r: &Estimate) -> Estimate {
    let LogicalPlan::Join { left, right, join_type, condition, .. } = plan else {
        return Estimate::size_only(from_children(plan, &[l.stats(), r.stats()]));
    };
    join(plan, left, right, *join_type, condition.as_ref(), l, r).unwrap_or_else(|| Estimate::size_only(from_children(plan, &[l.stats(), r.stats()])))
}

/// `a AS b` keeps `a`'s statistics under `b` (Spark's `getAliasStats`).
fn alias_stats(list: &[Expr], cols: &HashMap<ExprId, ColumnStat>) -> Vec<(ExprId, ColumnStat)> {
    list.iter()
        .filter_map(|e| match e {
            Expr::Alias { child, id, .. } => match child.as_ref() {
                Expr::Attribute(a) => Some((*id, cols.get(&a.id)?.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn has_count_stats(c: &ColumnStat) -> bool {
    c.distinct_count.is_some() && c.null_count.is_some()
}

/// Spark's `AggregateEstimation`: the product of the grouping columns' distinct counts (one
/// more for a column with NULLs), at most the input's rows.
fn aggregate(grouping: &[Expr], aggregates: &[Expr], out: &[Attribute], c: &Estimate) -> Option<Estimate> {
    let child_rows = c.row_count?;
    let mut rows: u128 = 1;
    for g in grouping {
        let Expr::Attribute(a) = g else { return None };
        let stat = c.columns.get(&a.id).filter(|s| has_count_stats(s))?;
        let ndv = stat.distinct_count? + u128::from(stat.null_count? > 0);
        rows = rows.saturating_mul(ndv);
    }
    let rows = if grouping.is_empty() { 1 } else { rows.min(child_rows) };
    let mut cols = c.columns.clone();
    cols.extend(alias_stats(aggregates, &c.columns));
    let columns = output_map(out, &cols);
    Some(Estimate { size_in_bytes: output_size(out, rows, &columns), row_count: Some(rows), columns })
}

/// Spark's `EstimationUtils.updateStat`: a count scaled down with the rows.
fn update_stat(old_rows: u128, new_rows: u128, old: Option<u128>, updated: Option<u128>) -> Option<u128> {
    match (old, updated) {
        (Some(o), Some(u)) if u > 1 && new_rows < old_rows && old_rows > 0 => Some(ceil_div(o * new_rows, old_rows)),
        _ => updated,
    }
}

fn ceil_div(a: u128, b: u128) -> u128 {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
}

/// `ColumnStat.updateCountStats`.
fn update_count_stats(orig: &ColumnStat, old_rows: u128, new_rows: u128, updated: Option<&ColumnStat>) -> ColumnStat {
    let u = updated.unwrap_or(orig);
    let mut out = u.clone();
    out.distinct_count = update_stat(old_rows, new_rows, orig.distinct_count, u.distinct_count);
    out.null_count = update_stat(old_rows, new_rows, orig.null_count, u.null_count);
    out
}

/// A literal as Spark's estimators compare it (`EstimationUtils.toDouble`); None for strings.
fn literal_double(v: &ScalarValue) -> Option<f64> {
    match v {
        ScalarValue::Boolean(b) => Some(*b as u8 as f64),
        ScalarValue::Int8(x) => Some(*x as f64),
        ScalarValue::Int16(x) => Some(*x as f64),
        ScalarValue::Int32(x) => Some(*x as f64),
        ScalarValue::Int64(x) => Some(*x as f64),
        ScalarValue::Float32(x) => Some(*x as f64),
        ScalarValue::Float64(x) => Some(*x),
        ScalarValue::Decimal(u, _, s) => Some(*u as f64 / 10f64.powi(*s as i32)),
        ScalarValue::Date32(d) => Some(*d as f64),
        _ => None,
    }
}

fn is_numeric_like(dt: &arrow::datatypes::DataType) -> bool {
    use arrow::datatypes::DataType::*;
    matches!(dt, Boolean | Int8 | Int16 | Int32 | Int64 | Float32 | Float64 | Decimal128(..) | Date32 | Timestamp(..))
}

/// Spark's `FilterEstimation` over a child estimate.
struct FilterEst<'a> {
    child_rows: u128,
    original: &'a HashMap<ExprId, ColumnStat>,
    updated: HashMap<ExprId, ColumnStat>,
    child_is_leaf: bool,
    like: Option<f64>,
}

fn filter(condition: &Expr, c: &Estimate, out: &[Attribute], child_is_leaf: bool, like: Option<f64>) -> Option<Estimate> {
    let rows = c.row_count?;
    let mut f = FilterEst { child_rows: rows, original: &c.columns, updated: HashMap::new(), child_is_leaf, like };
    let selectivity = f.selectivity(condition, true).unwrap_or(1.0);
    let new_rows = (rows as f64 * selectivity).ceil().max(0.0) as u128;
    let columns: HashMap<ExprId, ColumnStat> = if new_rows == 0 {
        HashMap::new()
    } else {
        c.columns.iter().map(|(id, orig)| (*id, update_count_stats(orig, rows, new_rows, f.updated.get(id)))).collect()
    };
    let columns = output_map(out, &columns);
    Some(Estimate { size_in_bytes: output_size(out, new_rows, &columns), row_count: Some(new_rows), columns })
}

impl FilterEst<'_> {
    fn stat(&self, id: ExprId) -> Option<&ColumnStat> {
        self.updated.get(&id).or_else(|| self.original.get(&id))
    }

    fn selectivity(&mut self, e: &Expr, update: bool) -> Option<f64> {
        match e {
            Expr::Binary { op: BinaryOp::And, left, right } => {
                let p1 = self.selectivity(left, update).unwrap_or(1.0);
                let p2 = self.selectivity(right, update).unwrap_or(1.0);
                Some(p1 * p2)
            }
            Expr::Binary { op: BinaryOp::Or, left, right } => {
                let p1 = self.selectivity(left, false).unwrap_or(1.0);
                let p2 = self.selectivity(right, false).unwrap_or(1.0);
                Some(p1 + p2 - p1 * p2)
            }
            Expr::Not(inner) => self.selectivity(inner, false).map(|p| 1.0 - p),
            other => self.single(other, update),
        }
    }

    fn single(&mut self, e: &Expr, update: bool) -> Option<f64> {
        match e {
            Expr::Literal(ScalarValue::Boolean(true)) => Some(1.0),
            Expr::Literal(ScalarValue::Boolean(false) | ScalarValue::Null(_)) => Some(0.0),
            Expr::Binary { op, left, right } => match (left.as_ref(), right.as_ref()) {
                (Expr::Attribute(a), Expr::Literal(l)) => self.binary(*op, a, l, update),
                (Expr::Literal(l), Expr::Attribute(a)) => {
                    let flipped = match op {
                        BinaryOp::Lt => BinaryOp::Gt,
                        BinaryOp::LtEq => BinaryOp::GtEq,
                        BinaryOp::Gt => BinaryOp::Lt,
                        BinaryOp::GtEq => BinaryOp::LtEq,
                        other => *other,
                    };
                    self.binary(flipped, a, l, update)
                }
                _ => None,
            },
            Expr::InList { child, list, negated: false } => {
                let Expr::Attribute(a) = child.as_ref() else { return None };
                let values: Option<Vec<&ScalarValue>> = list.iter().map(|e| if let Expr::Literal(v) = e { Some(v) } else { None }).collect();
                self.in_set(a, &values?, update)
            }
            Expr::Like { negated, .. } => self.like.map(|p| if *negated { 1.0 - p } else { p }),
            // Only over a leaf are null counts exact enough (Spark's restriction).
            Expr::IsNull(inner) | Expr::IsNotNull(inner) if self.child_is_leaf => {
                let Expr::Attribute(a) = inner.as_ref() else { return None };
                self.null_check(a, matches!(e, Expr::IsNull(_)), update)
            }
            _ => None,
        }
    }

    fn null_check(&mut self, a: &Attribute, is_null: bool, update: bool) -> Option<f64> {
        let stat = self.stat(a.id)?.clone();
        let null_percent = match stat.null_count {
            Some(n) if self.child_rows > 0 => n as f64 / self.child_rows as f64,
            _ => 0.0,
        };
        if update {
            let mut s = stat;
            if is_null {
                s.distinct_count = Some(0);
                s.min = None;
                s.max = None;
            } else {
                s.null_count = Some(0);
            }
            self.updated.insert(a.id, s);
        }
        Some(if is_null { null_percent } else { 1.0 - null_percent })
    }

    fn binary(&mut self, op: BinaryOp, a: &Attribute, l: &ScalarValue, update: bool) -> Option<f64> {
        if matches!(l, ScalarValue::Null(_)) {
            return Some(0.0);
        }
        match op {
            BinaryOp::Eq | BinaryOp::EqNullSafe => self.equality(a, l, update),
            BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq if is_numeric_like(&a.data_type) => self.range(op, a, l, update),
            _ => None,
        }
    }

    fn equality(&mut self, a: &Attribute, l: &ScalarValue, update: bool) -> Option<f64> {
        let stat = self.stat(a.id)?.clone();
        let ndv = stat.distinct_count?;
        let lit = literal_double(l);
        // Strings have no bounds: the value is assumed to be among them.
        let inside = match (is_numeric_like(&a.data_type), lit, stat.min, stat.max) {
            (false, _, _, _) => true,
            (true, Some(v), Some(min), Some(max)) => min <= v && v <= max,
            (true, _, _, _) => false,
        };
        if !inside {
            return Some(0.0);
        }
        if update {
            let mut s = stat.clone();
            s.distinct_count = Some(1);
            if lit.is_some() && is_numeric_like(&a.data_type) {
                s.min = lit;
                s.max = lit;
            }
            s.null_count = Some(0);
            self.updated.insert(a.id, s);
        }
        match (&stat.histogram, lit, stat.min, stat.max) {
            (Some(h), Some(v), Some(min), Some(max)) => Some(equality_by_histogram(h, v, min, max)),
            _ if ndv == 0 => Some(0.0),
            _ => Some(1.0 / ndv as f64),
        }
    }

    fn in_set(&mut self, a: &Attribute, values: &[&ScalarValue], update: bool) -> Option<f64> {
        let stat = self.stat(a.id)?.clone();
        let ndv = stat.distinct_count?;
        if ndv == 0 {
            return Some(0.0);
        }
        let mut s = stat.clone();
        let new_ndv = if is_numeric_like(&a.data_type) {
            let (Some(min), Some(max)) = (stat.min, stat.max) else { return Some(0.0) };
            let mut valid: Vec<f64> = values.iter().filter_map(|v| literal_double(v)).filter(|v| min <= *v && *v <= max).collect();
            valid.sort_by(f64::total_cmp);
            valid.dedup();
            if valid.is_empty() {
                return Some(0.0);
            }
            s.min = valid.first().copied();
            s.max = valid.last().copied();
            ndv.min(valid.len() as u128)
        } else {
            let mut distinct: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
            distinct.sort();
            distinct.dedup();
            ndv.min(distinct.len() as u128)
        };
        if update {
            s.distinct_count = Some(new_ndv);
            s.null_count = Some(0);
            self.updated.insert(a.id, s);
        }
        Some(new_ndv as f64 / ndv as f64)
    }

    fn range(&mut self, op: BinaryOp, a: &Attribute, l: &ScalarValue, update: bool) -> Option<f64> {
        let stat = self.stat(a.id)?.clone();
        let (Some(min), Some(max), Some(ndv)) = (stat.min, stat.max, stat.distinct_count) else { return None };
        let v = literal_double(l)?;
        let ndv = ndv as f64;
        let (no_overlap, complete) = match op {
            BinaryOp::Lt => (v <= min, v > max),
            BinaryOp::LtEq => (v < min, v >= max),
            BinaryOp::Gt => (v >= max, v < min),
            _ => (v > max, v <= min),
        };
        if no_overlap {
            return Some(0.0);
        }
        if complete {
            return Some(1.0);
        }
        let percent = match &stat.histogram {
            Some(h) => {
                let (lo, hi) = if matches!(op, BinaryOp::Gt | BinaryOp::GtEq) { (v, max) } else { (min, v) };
                let total = occupation_bins(max, min, h);
                if total > 0.0 {
                    occupation_bins(hi, lo, h) / total
                } else {
                    1.0
                }
            }
            None if max <= min => 1.0,
            None => match op {
                BinaryOp::Lt if v == max => 1.0 - 1.0 / ndv,
                BinaryOp::LtEq if v == min => 1.0 / ndv,
                BinaryOp::Gt if v == min => 1.0 - 1.0 / ndv,
                BinaryOp::GtEq if v == max => 1.0 / ndv,
                BinaryOp::Lt | BinaryOp::LtEq => (v - min) / (max - min),
                _ => (max - v) / (max - min),
            },
        };
        if update {
            let mut s = stat;
            if matches!(op, BinaryOp::Gt | BinaryOp::GtEq) {
                s.min = Some(v);
            } else {
                s.max = Some(v);
            }
            s.distinct_count = Some((ndv * percent).ceil() as u128);
            s.null_count = Some(0);
            self.updated.insert(a.id, s);
        }
        Some(percent)
    }
}

/// Spark's `EstimationUtils.getOccupation`: the part of `bin` between the values.
fn occupation(hi: f64, lo: f64, bin: &super::column::HistogramBin) -> f64 {
    if bin.hi == bin.lo {
        1.0
    } else if hi == lo {
        1.0 / (bin.ndv.max(1)) as f64
    } else {
        ((hi - lo) / (bin.hi - bin.lo)).min(1.0)
    }
}

/// Spark's `getOccupationBins`: how many bins the range `[lo, hi]` covers.
fn occupation_bins(hi: f64, lo: f64, h: &Histogram) -> f64 {
    let bins = &h.bins;
    if bins.is_empty() || lo > hi {
        return 0.0;
    }
    let first = bins.iter().position(|b| lo <= b.hi).unwrap_or(bins.len() - 1);
    let last = bins.iter().rposition(|b| hi >= b.lo).unwrap_or(0);
    if last < first {
        return 0.0;
    }
    if first == last {
        return occupation(hi.min(bins[first].hi), lo.max(bins[first].lo), &bins[first]);
    }
    occupation(bins[first].hi, lo.max(bins[first].lo), &bins[first])
        + occupation(hi.min(bins[last].hi), bins[last].lo, &bins[last])
        + (last - first - 1) as f64
}

/// Spark's `computeEqualityPossibilityByHistogram`: the bins holding the value over the bins
/// holding the column's range.
fn equality_by_histogram(h: &Histogram, v: f64, min: f64, max: f64) -> f64 {
    let total = occupation_bins(max, min, h);
    if total > 0.0 {
        (occupation_bins(v, v, h) / total).min(1.0)
    } else {
        0.0
    }
}

/// Pairs of equi-join keys that are columns of the two sides (Spark's `ExtractEquiJoinKeys`,
/// keeping only attribute keys as `extractJoinKeysWithColStats` does).
fn equi_keys(condition: Option<&Expr>, left: &LogicalPlan, right: &LogicalPlan) -> (bool, Vec<(Attribute, Attribute)>) {
    let l_ids: Vec<ExprId> = left.output().iter().map(|a| a.id).collect();
    let r_ids: Vec<ExprId> = right.output().iter().map(|a| a.id).collect();
    let mut any = false;
    let mut keys = vec![];
    for c in condition.map(|c| c.split_conjunction()).unwrap_or_default() {
        let Expr::Binary { op: BinaryOp::Eq | BinaryOp::EqNullSafe, left: a, right: b } = c else { continue };
        let side = |e: &Expr, ids: &[ExprId]| !e.references().is_empty() && e.references().iter().all(|i| ids.contains(i));
        let pair = if side(a, &l_ids) && side(b, &r_ids) {
            Some((a, b))
        } else if side(b, &l_ids) && side(a, &r_ids) {
            Some((b, a))
        } else {
            None
        };
        if let Some((lk, rk)) = pair {
            any = true;
            if let (Expr::Attribute(lk), Expr::Attribute(rk)) = (lk.as_ref(), rk.as_ref()) {
                keys.push((lk.clone(), rk.clone()));
            }
        }
    }
    (any, keys)
}

/// Spark's `JoinEstimation`.
fn join(
    plan: &LogicalPlan,
    left: &LogicalPlan,
    right: &LogicalPlan,
    join_type: JoinType,
    condition: Option<&Expr>,
    l: &Estimate,
    r: &Estimate,
) -> Option<Estimate> {
    let out = plan.output();
    if matches!(join_type, JoinType::LeftSemi | JoinType::LeftAnti) {
        let rows = l.row_count?;
        return Some(Estimate { size_in_bytes: output_size(&out, rows, &l.columns), row_count: Some(rows), columns: l.columns.clone() });
    }
    let (l_rows, r_rows) = (l.row_count?, r.row_count?);
    let mut input = l.columns.clone();
    input.extend(r.columns.iter().map(|(k, v)| (*k, v.clone())));
    let (equi, pairs) = equi_keys(condition, left, right);
    if !equi {
        let rows = l_rows.saturating_mul(r_rows);
        return Some(Estimate { size_in_bytes: output_size(&out, rows, &input), row_count: Some(rows), columns: input });
    }
    // Cardinality from the most selective key pair with statistics.
    let mut card = l_rows.saturating_mul(r_rows);
    let mut key_stats: HashMap<ExprId, ColumnStat> = HashMap::new();
    for (lk, rk) in &pairs {
        if card == 0 {
            break;
        }
        let (Some(ls), Some(rs)) = (l.columns.get(&lk.id), r.columns.get(&rk.id)) else { continue };
        if !has_count_stats(ls) || !has_count_stats(rs) {
            continue;
        }
        let numeric = is_numeric_like(&lk.data_type);
        let (min, max, intersects) = if numeric {
            match (ls.min, ls.max, rs.min, rs.max) {
                (Some(a), Some(b), Some(c), Some(d)) => (Some(a.max(c)), Some(b.min(d)), a.max(c) <= b.min(d)),
                _ => (None, None, false),
            }
        } else {
            (None, None, true)
        };
        if !intersects {
            card = 0;
            continue;
        }
        let (lndv, rndv) = (ls.distinct_count.unwrap_or(0), rs.distinct_count.unwrap_or(0));
        let max_ndv = lndv.max(rndv);
        let c = if max_ndv == 0 { 0 } else { ceil_div(l_rows.saturating_mul(r_rows), max_ndv) };
        let joined = ColumnStat {
            distinct_count: Some(lndv.min(rndv)),
            min,
            max,
            null_count: Some(0),
            avg_len: match (ls.avg_len, rs.avg_len) {
                (Some(a), Some(b)) => Some((a + b) / 2),
                _ => None,
            },
            max_len: match (ls.max_len, rs.max_len) {
                (Some(a), Some(b)) => Some(a.min(b)),
                _ => None,
            },
            histogram: None,
        };
        key_stats.insert(lk.id, ColumnStat { histogram: ls.histogram.clone(), ..joined.clone() });
        key_stats.insert(rk.id, ColumnStat { histogram: rs.histogram.clone(), ..joined });
        card = card.min(c);
    }
    let inner = card;
    let rows = match join_type {
        JoinType::LeftOuter => l_rows.max(inner),
        JoinType::RightOuter => r_rows.max(inner),
        JoinType::FullOuter => l_rows.max(inner) + r_rows.max(inner) - inner,
        _ => inner,
    };
    let left_ids: Vec<ExprId> = left.output().iter().map(|a| a.id).collect();
    let with_stats: Vec<&Attribute> = out.iter().filter(|a| input.get(&a.id).is_some_and(has_count_stats)).collect();
    let (from_left, from_right): (Vec<&Attribute>, Vec<&Attribute>) = with_stats.iter().partition(|a| left_ids.contains(&a.id));
    let keep = |attrs: &[&Attribute]| -> Vec<(ExprId, ColumnStat)> { attrs.iter().map(|a| (a.id, input[&a.id].clone())).collect() };
    let update = |attrs: &[&Attribute]| -> Vec<(ExprId, ColumnStat)> {
        attrs
            .iter()
            .map(|a| match key_stats.get(&a.id) {
                Some(k) => (a.id, k.clone()),
                None => {
                    let old_rows = if left_ids.contains(&a.id) { l_rows } else { r_rows };
                    (a.id, update_count_stats(&input[&a.id], old_rows, rows, None))
                }
            })
            .collect()
    };
    let null_stat = |rows: u128| ColumnStat { distinct_count: Some(0), null_count: Some(rows), ..Default::default() };
    let columns: Vec<(ExprId, ColumnStat)> = if rows == 0 {
        vec![]
    } else if inner == 0 {
        match join_type {
            JoinType::LeftOuter => [keep(&from_left), from_right.iter().map(|a| (a.id, null_stat(l_rows))).collect()].concat(),
            JoinType::RightOuter => [keep(&from_right), from_left.iter().map(|a| (a.id, null_stat(r_rows))).collect()].concat(),
            JoinType::FullOuter => from_left
                .iter()
                .map(|a| (a.id, ColumnStat { null_count: input[&a.id].null_count.map(|n| n + r_rows), ..input[&a.id].clone() }))
                .chain(from_right.iter().map(|a| (a.id, ColumnStat { null_count: input[&a.id].null_count.map(|n| n + l_rows), ..input[&a.id].clone() })))
                .collect(),
            _ => vec![],
        }
    } else if inner == l_rows.saturating_mul(r_rows) {
        input.iter().map(|(k, v)| (*k, v.clone())).collect()
    } else {
        match join_type {
            JoinType::LeftOuter => [keep(&from_left), update(&from_right)].concat(),
            JoinType::RightOuter => [update(&from_left), keep(&from_right)].concat(),
            JoinType::FullOuter => input.iter().map(|(k, v)| (*k, v.clone())).collect(),
            _ => update(&with_stats),
        }
    };
    let columns: HashMap<ExprId, ColumnStat> = columns.into_iter().collect();
    Some(Estimate { size_in_bytes: output_size(&out, rows, &columns), row_count: Some(rows), columns })
}
