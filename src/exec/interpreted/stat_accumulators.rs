//! Accumulators of the built-in aggregates of `expr/aggregates.rs`, with Spark's buffers and
//! its update/merge formulas (so partial + final gives Spark's doubles): central moments,
//! covariance and correlation, first/last, bool_and/bool_or, count_if, max_by/min_by and exact
//! percentiles. Values of any type (first, max_by) are kept in the arrow row format.

use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, BooleanArray, Float64Array, Int64Array, ListArray};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type};
use arrow::row::{OwnedRow, RowConverter, SortField};

use super::accumulators::{min_max, Accumulator};
use crate::error::{KilnError, Result};
use crate::expr::{AggBuiltin, AggKind};
use crate::common::hash::spark_xxhash64;
use crate::stats::column::HyperLogLogPlusPlus;

/// The accumulator of `b` over arguments of types `args`.
pub(super) fn builtin_accumulator(b: AggBuiltin, args: &[DataType]) -> Result<Box<dyn Accumulator>> {
    let arg = |i: usize| args.get(i).cloned().ok_or_else(|| KilnError::internal(format!("{} lacks argument {i}", b.name)));
    Ok(match b.kind {
        AggKind::VarSamp | AggKind::VarPop | AggKind::StddevSamp | AggKind::StddevPop | AggKind::Skewness | AggKind::Kurtosis => {
            Box::new(Moments { kind: b.kind, s: vec![] })
        }
        AggKind::CollectList | AggKind::CollectSet => Box::new(Collect::new(b.kind == AggKind::CollectSet, arg(0)?)?),
        AggKind::ListAgg => Box::new(ListAgg::new(b, args.get(2..).unwrap_or(&[]))?),
        AggKind::ApproxCountDistinct => Box::new(ApproxCountDistinct { rsd: b.fraction(), sketches: vec![] }),
        AggKind::HistogramNumeric => {
            let element = match arg(0)? {
                DataType::Null => DataType::Float64,
                t => t,
            };
            Box::new(HistogramNumeric { nb: b.param as usize, element, groups: vec![] })
        }
        AggKind::BloomFilter => Box::new(BloomFilterAgg { words: crate::expr::bloom::words_for(b.bloom_size().1), filters: vec![] }),
        AggKind::CovarPop
        | AggKind::CovarSamp
        | AggKind::Corr
        | AggKind::RegrSxx
        | AggKind::RegrSyy
        | AggKind::RegrSxy
        | AggKind::RegrSlope
        | AggKind::RegrIntercept
        | AggKind::RegrR2 => Box::new(Covariance { kind: b.kind, s: vec![] }),
        AggKind::First { ignore_nulls } => Box::new(FirstLast::new(false, ignore_nulls, arg(0)?)?),
        AggKind::Last { ignore_nulls } => Box::new(FirstLast::new(true, ignore_nulls, arg(0)?)?),
        AggKind::BoolAnd => min_max::<true>(&DataType::Boolean)?,
        AggKind::BoolOr => min_max::<false>(&DataType::Boolean)?,
        AggKind::CountIf => Box::new(CountIf { counts: vec![] }),
        AggKind::Mode => Box::new(Mode { ties: b.param, element: arg(0)?, codec: RowCodec::new(arg(0)?)?, counts: vec![] }),
        AggKind::BitAnd | AggKind::BitOr | AggKind::BitXor => Box::new(BitAgg { kind: b.kind, result: arg(0)?, values: vec![] }),
        AggKind::TrySum => Box::new(TrySum::new(b.return_type(args))),
        // A bigint sum wraps; a decimal one out of range is NULL, as try_sum's.
        AggKind::LegacySum if b.return_type(args) == DataType::Int64 => super::accumulators::wrapping_sum(),
        AggKind::LegacySum => Box::new(TrySum::new(b.return_type(args))),
        AggKind::TryAvg => {
            let sum = crate::expr::try_avg_sum_type(&arg(0)?);
            Box::new(TryAvg { sum: TrySum::new(sum), counts: vec![], result: b.return_type(args) })
        }
        AggKind::SingleValue => Box::new(SingleValue { codec: RowCodec::new(arg(0)?)?, vals: vec![], counts: vec![] }),
        AggKind::MaxBy | AggKind::MinBy => Box::new(ExtremumBy::new(b.kind == AggKind::MaxBy, arg(0)?, arg(1)?)?),
        AggKind::Percentile | AggKind::PercentileDisc => {
            Box::new(Percentile { discrete: b.kind == AggKind::PercentileDisc, p: b.fraction(), values: vec![], result: None })
        }
        // An input value: the discrete percentile, back in the input's type.
        AggKind::PercentileApprox => Box::new(Percentile { discrete: true, p: b.fraction(), values: vec![], result: Some(arg(0)?) }),
    })
}

fn input(args: &[ArrayRef], i: usize) -> Result<&ArrayRef> {
    args.get(i).ok_or_else(|| KilnError::internal(format!("aggregate lacks input column {i}")))
}

fn doubles(a: &ArrayRef) -> Result<ArrayRef> {
    Ok(if a.data_type() == &DataType::Float64 { a.clone() } else { cast(a, &DataType::Float64)? })
}

fn f64_array(values: Vec<f64>) -> ArrayRef {
    Arc::new(Float64Array::from(values))
}

fn f64_results(values: impl Iterator<Item = Option<f64>>) -> ArrayRef {
    Arc::new(values.collect::<Float64Array>())
}

/// var/stddev (buffer [n, avg, m2]), skewness (+ m3) and kurtosis (+ m4): Spark's
/// CentralMomentAgg update and merge formulas.
struct Moments {
    kind: AggKind,
    /// Per group: n, avg, m2, m3, m4.
    s: Vec<[f64; 5]>,
}

impl Moments {
    /// The buffer columns: the moments up to the aggregate's order.
    fn width(&self) -> usize {
        match self.kind {
            AggKind::Skewness => 4,
            AggKind::Kurtosis => 5,
            _ => 3,
        }
    }
}

impl Accumulator for Moments {
    fn resize(&mut self, groups: usize) {
        self.s.resize(groups, [0.0; 5]);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = doubles(input(args, 0)?)?;
        let a = a.as_primitive::<Float64Type>();
        let order = self.width() - 1;
        for (i, g) in gids.iter().enumerate() {
            if a.is_null(i) {
                continue;
            }
            let [n, avg, m2, m3, m4] = &mut self.s[*g as usize];
            let x = a.value(i);
            *n += 1.0;
            let delta = x - *avg;
            let delta_n = delta / *n;
            *avg += delta_n;
            *m2 += delta * (delta - delta_n);
            if order >= 3 {
                let (delta2, delta_n2) = (delta * delta, delta_n * delta_n);
                *m3 += -3.0 * delta_n * *m2 + delta * (delta2 - delta_n2);
                if order >= 4 {
                    *m4 += -4.0 * delta_n * *m3 - 6.0 * delta_n2 * *m2 + delta * (delta * delta2 - delta_n * delta_n2);
                }
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let cols = (0..self.width()).map(|i| doubles(input(state, i)?)).collect::<Result<Vec<_>>>()?;
        let cols: Vec<&Float64Array> = cols.iter().map(|c| c.as_primitive::<Float64Type>()).collect();
        let col = |k: usize, i: usize| cols.get(k).map_or(0.0, |c| c.value(i));
        for (i, g) in gids.iter().enumerate() {
            let [n, avg, m2, m3, m4] = &mut self.s[*g as usize];
            let (n1, n2) = (*n, col(0, i));
            let (m2a, m2b, m3a, m3b) = (*m2, col(2, i), *m3, col(3, i));
            let nn = n1 + n2;
            let delta = col(1, i) - *avg;
            let delta_n = if nn == 0.0 { 0.0 } else { delta / nn };
            *avg += delta_n * n2;
            *m2 = m2a + m2b + delta * delta_n * n1 * n2;
            *m3 = m3a + m3b + delta_n * delta_n * delta * n1 * n2 * (n1 - n2) + 3.0 * delta_n * (n1 * m2b - n2 * m2a);
            *m4 = *m4
                + col(4, i)
                + delta_n * delta_n * delta_n * delta * n1 * n2 * (n1 * n1 - n1 * n2 + n2 * n2)
                + 6.0 * delta_n * delta_n * (n1 * n1 * m2b + n2 * n2 * m2a)
                + 4.0 * delta_n * (n1 * m3b - n2 * m3a);
            *n = nn;
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let s = std::mem::take(&mut self.s);
        Ok((0..self.width()).map(|k| f64_array(s.iter().map(|v| v[k]).collect())).collect())
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let kind = self.kind;
        Ok(f64_results(self.s.iter().map(|&[n, _, m2, m3, m4]| {
            // Spark 3.1+: a division by zero (one row for the samples, no spread) is NULL.
            let var = match kind {
                AggKind::Skewness if n > 0.0 && m2 != 0.0 => return Some(n.sqrt() * m3 / (m2 * m2 * m2).sqrt()),
                AggKind::Kurtosis if n > 0.0 && m2 != 0.0 => return Some(n * m4 / (m2 * m2) - 3.0),
                AggKind::VarPop | AggKind::StddevPop if n > 0.0 => Some(m2 / n),
                AggKind::VarSamp | AggKind::StddevSamp if n > 1.0 => Some(m2 / (n - 1.0)),
                _ => None,
            };
            if matches!(kind, AggKind::StddevPop | AggKind::StddevSamp) {
                var.map(f64::sqrt)
            } else {
                var
            }
        })))
    }
}

/// covar_pop/covar_samp (buffer [n, xAvg, yAvg, ck]), corr and the regr_ aggregates (plus
/// [xMk, yMk]). For regr(y, x) "x" here is y, the first argument, but for regr_slope and
/// regr_intercept.
struct Covariance {
    kind: AggKind,
    /// Per group: n, xAvg, yAvg, ck, xMk, yMk.
    s: Vec<[f64; 6]>,
}

impl Covariance {
    fn width(&self) -> usize {
        if self.kind == AggKind::Corr || self.kind.is_regression() {
            6
        } else {
            4
        }
    }
}

impl Accumulator for Covariance {
    fn resize(&mut self, groups: usize) {
        self.s.resize(groups, [0.0; 6]);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        // Spark's regr_slope/intercept(y, x) accumulate covar_pop(x, y) (x first: the same
        // sums in another rounding) and var_pop(x).
        let swap = matches!(self.kind, AggKind::RegrSlope | AggKind::RegrIntercept) as usize;
        let (x, y) = (doubles(input(args, swap)?)?, doubles(input(args, 1 - swap)?)?);
        let (x, y) = (x.as_primitive::<Float64Type>(), y.as_primitive::<Float64Type>());
        // Spark's regr_sxx/syy/slope/intercept take the second moments from CentralMomentAgg
        // (delta * (delta - delta / n)), corr and regr_r2 from PearsonCorrelation.
        let central = self.kind.is_regression() && self.kind != AggKind::RegrR2;
        for (i, g) in gids.iter().enumerate() {
            if x.is_null(i) || y.is_null(i) {
                continue;
            }
            let (xv, yv) = (x.value(i), y.value(i));
            let [n, xa, ya, ck, xm, ym] = &mut self.s[*g as usize];
            *n += 1.0;
            let dx = xv - *xa;
            let dy = yv - *ya;
            *xa += dx / *n;
            *ya += dy / *n;
            *ck += dx * (yv - *ya);
            if central {
                *xm += dx * (dx - dx / *n);
                *ym += dy * (dy - dy / *n);
            } else {
                *xm += dx * (xv - *xa);
                *ym += dy * (yv - *ya);
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let cols = (0..self.width()).map(|i| doubles(input(state, i)?)).collect::<Result<Vec<_>>>()?;
        let cols: Vec<&Float64Array> = cols.iter().map(|c| c.as_primitive::<Float64Type>()).collect();
        let corr = self.kind == AggKind::Corr || self.kind.is_regression();
        for (i, g) in gids.iter().enumerate() {
            let [n, xa, ya, ck, xm, ym] = &mut self.s[*g as usize];
            let (n1, n2) = (*n, cols[0].value(i));
            let nn = n1 + n2;
            let dx = cols[1].value(i) - *xa;
            let dy = cols[2].value(i) - *ya;
            let (dxn, dyn_) = if nn == 0.0 { (0.0, 0.0) } else { (dx / nn, dy / nn) };
            *xa += dxn * n2;
            *ya += dyn_ * n2;
            // Spark's order of the sums: (left + right) + cross term; rounding differs otherwise.
            *ck = *ck + cols[3].value(i) + dx * dyn_ * n1 * n2;
            if corr {
                *xm = *xm + cols[4].value(i) + dx * dxn * n1 * n2;
                *ym = *ym + cols[5].value(i) + dy * dyn_ * n1 * n2;
            }
            *n = nn;
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let s = std::mem::take(&mut self.s);
        Ok((0..self.width()).map(|k| f64_array(s.iter().map(|v| v[k]).collect())).collect())
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let kind = self.kind;
        Ok(f64_results(self.s.iter().map(|&[n, xa, ya, ck, xm, ym]| match kind {
            AggKind::CovarPop if n > 0.0 => Some(ck / n),
            AggKind::RegrSxx if n > 0.0 => Some(ym),
            AggKind::RegrSyy if n > 0.0 => Some(xm),
            AggKind::RegrSxy if n > 0.0 => Some(ck),
            // Swapped: x is the second argument here.
            AggKind::RegrSlope if xm != 0.0 => Some(ck / xm),
            AggKind::RegrIntercept if xm != 0.0 => Some(ya - ck / xm * xa),
            // Spark: no spread in x is NULL, none in y (all on the line) is 1.
            AggKind::RegrR2 if ym != 0.0 && xm == 0.0 => Some(1.0),
            AggKind::RegrR2 if ym != 0.0 => {
                let r = ck / (xm * ym).sqrt();
                Some(r * r)
            }
            AggKind::CovarSamp if n > 1.0 => Some(ck / (n - 1.0)),
            // A zero variance divides by zero: NULL, as Spark's divide-by-zero result.
            AggKind::Corr if n > 1.0 && xm * ym != 0.0 => Some(ck / (xm * ym).sqrt()),
            _ => None,
        })))
    }
}

/// A row-format codec for one column of type `dt`.
struct RowCodec {
    conv: RowConverter,
    null: OwnedRow,
}

impl RowCodec {
    fn new(dt: DataType) -> Result<RowCodec> {
        let conv = RowConverter::new(vec![SortField::new(dt.clone())])?;
        let null = conv.convert_columns(&[new_null_array(&dt, 1)])?.row(0).owned();
        Ok(RowCodec { conv, null })
    }
    fn rows(&self, a: &ArrayRef) -> Result<arrow::row::Rows> {
        Ok(self.conv.convert_columns(std::slice::from_ref(a))?)
    }
    fn array(&self, rows: &[Option<OwnedRow>]) -> Result<ArrayRef> {
        let mut out = self.conv.convert_rows(rows.iter().map(|r| r.as_ref().unwrap_or(&self.null).row()))?;
        out.pop().ok_or_else(|| KilnError::internal("row conversion without a column"))
    }
}

/// first/last: Spark's buffer [value, valueSet].
struct FirstLast {
    last: bool,
    ignore_nulls: bool,
    codec: RowCodec,
    vals: Vec<Option<OwnedRow>>,
    set: Vec<bool>,
}

impl FirstLast {
    fn new(last: bool, ignore_nulls: bool, dt: DataType) -> Result<FirstLast> {
        Ok(FirstLast { last, ignore_nulls, codec: RowCodec::new(dt)?, vals: vec![], set: vec![] })
    }
    /// Takes row i of `a` for group g where it wins; `valid(i)` says whether row i holds a value.
    fn take(&mut self, gids: &[u32], a: &ArrayRef, valid: impl Fn(usize) -> bool) -> Result<()> {
        let rows = self.codec.rows(a)?;
        // last: only the batch's final row of a group matters, so walk backwards.
        let mut seen = vec![false; if self.last { self.set.len() } else { 0 }];
        let order: Box<dyn Iterator<Item = usize>> = if self.last { Box::new((0..gids.len()).rev()) } else { Box::new(0..gids.len()) };
        for i in order {
            let g = gids[i] as usize;
            if !valid(i) {
                continue;
            }
            if self.last {
                if seen[g] {
                    continue;
                }
                seen[g] = true;
            } else if self.set[g] {
                continue;
            }
            self.vals[g] = Some(rows.row(i).owned());
            self.set[g] = true;
        }
        Ok(())
    }
}

impl Accumulator for FirstLast {
    fn resize(&mut self, groups: usize) {
        self.vals.resize(groups, None);
        self.set.resize(groups, false);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = input(args, 0)?.clone();
        let ignore = self.ignore_nulls;
        let nulls = a.logical_nulls();
        self.take(gids, &a, |i| !ignore || nulls.as_ref().is_none_or(|n| n.is_valid(i)))
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let a = input(state, 0)?.clone();
        let set = cast(input(state, 1)?, &DataType::Boolean)?;
        let set = set.as_boolean().clone();
        self.take(gids, &a, |i| set.is_valid(i) && set.value(i))
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let set: BooleanArray = self.set.iter().map(|s| Some(*s)).collect();
        Ok(vec![self.evaluate()?, Arc::new(set)])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        self.codec.array(&self.vals)
    }
}

/// count_if(b): the rows where b is true. Buffer [count].
struct CountIf {
    counts: Vec<i64>,
}

impl Accumulator for CountIf {
    fn resize(&mut self, groups: usize) {
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = cast(input(args, 0)?, &DataType::Boolean)?;
        let a = a.as_boolean();
        for (i, g) in gids.iter().enumerate() {
            if a.is_valid(i) && a.value(i) {
                self.counts[*g as usize] += 1;
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let a = cast(input(state, 0)?, &DataType::Int64)?;
        let a = a.as_primitive::<Int64Type>();
        for (i, g) in gids.iter().enumerate() {
            if a.is_valid(i) {
                self.counts[*g as usize] += a.value(i);
            }
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        Ok(Arc::new(Int64Array::from(std::mem::take(&mut self.counts))))
    }
}

/// try_sum(x): exact i128 sums for bigint and decimal results (checked against the result's
/// range), double sums otherwise; an overflowed group is NULL. Buffer [sum, isEmpty]: a NULL
/// sum in a non-empty buffer is a partial sum that overflowed.
struct TrySum {
    result: DataType,
    sums: Vec<i128>,
    doubles: Vec<f64>,
    seen: Vec<bool>,
    overflow: Vec<bool>,
}

impl TrySum {
    fn new(result: DataType) -> TrySum {
        TrySum { result, sums: vec![], doubles: vec![], seen: vec![], overflow: vec![] }
    }
    /// Adds `a` (of the result type) into the groups; `valid(i)` says which rows count.
    fn add(&mut self, gids: &[u32], a: &ArrayRef, valid: impl Fn(usize) -> bool) -> Result<()> {
        let a = cast(a, &self.result)?;
        let bound = match self.result {
            DataType::Decimal128(p, _) => 10i128.pow(p as u32) - 1,
            _ => i64::MAX as i128,
        };
        let low = if self.result == DataType::Int64 { i64::MIN as i128 } else { -bound };
        for (i, g) in gids.iter().enumerate() {
            let g = *g as usize;
            if !valid(i) || a.is_null(i) || self.overflow[g] {
                continue;
            }
            self.seen[g] = true;
            match &self.result {
                DataType::Float64 => self.doubles[g] += a.as_primitive::<Float64Type>().value(i),
                DataType::Decimal128(..) | DataType::Int64 => {
                    let v = match &self.result {
                        DataType::Int64 => a.as_primitive::<Int64Type>().value(i) as i128,
                        _ => a.as_primitive::<arrow::datatypes::Decimal128Type>().value(i),
                    };
                    match self.sums[g].checked_add(v).filter(|s| (low..=bound).contains(s)) {
                        Some(s) => self.sums[g] = s,
                        None => self.overflow[g] = true,
                    }
                }
                other => return Err(KilnError::internal(format!("try_sum into {other}"))),
            }
        }
        Ok(())
    }
    fn sums(&mut self) -> Result<ArrayRef> {
        let valid: Vec<bool> = self.seen.iter().zip(&self.overflow).map(|(s, o)| *s && !*o).collect();
        let nulls = Some(NullBuffer::from(valid));
        Ok(match &self.result {
            DataType::Float64 => Arc::new(Float64Array::new(std::mem::take(&mut self.doubles).into(), nulls)),
            DataType::Int64 => Arc::new(Int64Array::new(std::mem::take(&mut self.sums).into_iter().map(|v| v as i64).collect(), nulls)),
            dt => Arc::new(arrow::array::Decimal128Array::new(std::mem::take(&mut self.sums).into(), nulls).with_data_type(dt.clone())),
        })
    }
}

impl Accumulator for TrySum {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0);
        self.doubles.resize(groups, 0.0);
        self.seen.resize(groups, false);
        self.overflow.resize(groups, false);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = input(args, 0)?.clone();
        self.add(gids, &a, |_| true)
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let (sums, empty) = (input(state, 0)?.clone(), cast(input(state, 1)?, &DataType::Boolean)?);
        let empty = empty.as_boolean();
        for (i, g) in gids.iter().enumerate() {
            if empty.is_valid(i) && !empty.value(i) && sums.is_null(i) {
                self.overflow[*g as usize] = true;
            }
        }
        self.add(gids, &sums, |i| empty.is_valid(i) && !empty.value(i))
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let empty: BooleanArray = self.seen.iter().map(|s| Some(!s)).collect();
        Ok(vec![self.sums()?, Arc::new(empty)])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        self.sums()
    }
}

/// try_avg(x): a try_sum and a count; NULL for a group whose sum overflowed, else the sum over
/// the count as avg computes it (double, or decimal(p+4,s+4) rounded HALF_UP). Buffer [sum,
/// count]: a NULL sum with a count above 0 is a partial sum that overflowed.
struct TryAvg {
    sum: TrySum,
    counts: Vec<i64>,
    result: DataType,
}

impl Accumulator for TryAvg {
    fn resize(&mut self, groups: usize) {
        self.sum.resize(groups);
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = input(args, 0)?.clone();
        for (i, g) in gids.iter().enumerate() {
            if a.is_valid(i) {
                self.counts[*g as usize] += 1;
            }
        }
        self.sum.add(gids, &a, |_| true)
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let (sums, counts) = (input(state, 0)?.clone(), cast(input(state, 1)?, &DataType::Int64)?);
        let counts = counts.as_primitive::<Int64Type>();
        for (i, g) in gids.iter().enumerate() {
            let c = if counts.is_valid(i) { counts.value(i) } else { 0 };
            if c > 0 && sums.is_null(i) {
                self.sum.overflow[*g as usize] = true;
            }
            self.counts[*g as usize] += c;
        }
        self.sum.add(gids, &sums, |i| counts.is_valid(i) && counts.value(i) > 0)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.sum.sums()?, Arc::new(Int64Array::from(std::mem::take(&mut self.counts)))])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let sums = self.sum.sums()?;
        let counts = std::mem::take(&mut self.counts);
        Ok(match (&self.result, sums.data_type()) {
            (DataType::Decimal128(p, rs), DataType::Decimal128(_, s)) => {
                let bound = 10i128.pow(*p as u32);
                let k = (*rs - *s) as u32;
                let d = sums.as_primitive::<arrow::datatypes::Decimal128Type>();
                let out: arrow::array::Decimal128Array = (0..d.len())
                    .map(|i| {
                        if d.is_null(i) || counts[i] == 0 {
                            return None;
                        }
                        super::accumulators::div_half_up(d.value(i), counts[i], k).filter(|v| v.unsigned_abs() < bound.unsigned_abs())
                    })
                    .collect();
                Arc::new(out.with_data_type(self.result.clone()))
            }
            _ => {
                let d = sums.as_primitive::<Float64Type>();
                Arc::new((0..d.len()).map(|i| (d.is_valid(i) && counts[i] > 0).then(|| d.value(i) / counts[i] as f64)).collect::<Float64Array>())
            }
        })
    }
}

/// A scalar subquery's one value: more than one row for a group is an error (Spark's
/// SCALAR_SUBQUERY_TOO_MANY_ROWS, checked at run time). Buffer [value, count].
struct SingleValue {
    codec: RowCodec,
    vals: Vec<Option<OwnedRow>>,
    counts: Vec<i64>,
}

impl SingleValue {
    fn add(&mut self, g: usize, n: i64) -> Result<()> {
        self.counts[g] += n;
        if self.counts[g] > 1 {
            return Err(KilnError::exec("[SCALAR_SUBQUERY_TOO_MANY_ROWS] More than one row returned by a subquery used as an expression."));
        }
        Ok(())
    }
}

impl Accumulator for SingleValue {
    fn resize(&mut self, groups: usize) {
        self.vals.resize(groups, None);
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let rows = self.codec.rows(input(args, 0)?)?;
        for (i, g) in gids.iter().enumerate() {
            self.add(*g as usize, 1)?;
            self.vals[*g as usize] = Some(rows.row(i).owned());
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let rows = self.codec.rows(input(state, 0)?)?;
        let counts = cast(input(state, 1)?, &DataType::Int64)?;
        let counts = counts.as_primitive::<Int64Type>();
        for (i, g) in gids.iter().enumerate() {
            let n = if counts.is_valid(i) { counts.value(i) } else { 0 };
            if n > 0 {
                self.add(*g as usize, n)?;
                self.vals[*g as usize] = Some(rows.row(i).owned());
            }
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let counts = Arc::new(Int64Array::from(self.counts.clone()));
        Ok(vec![self.evaluate()?, counts])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        self.codec.array(&self.vals)
    }
}

/// max_by(v, o)/min_by(v, o): v of the row with the largest (smallest) non-NULL o, the first
/// such row on ties. Buffer [value, ordering].
struct ExtremumBy {
    max: bool,
    values: RowCodec,
    orders: RowCodec,
    best: Vec<Option<(OwnedRow, OwnedRow)>>,
}

impl ExtremumBy {
    fn new(max: bool, value: DataType, order: DataType) -> Result<ExtremumBy> {
        Ok(ExtremumBy { max, values: RowCodec::new(value)?, orders: RowCodec::new(order)?, best: vec![] })
    }
}

impl Accumulator for ExtremumBy {
    fn resize(&mut self, groups: usize) {
        self.best.resize(groups, None);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let (v, o) = (input(args, 0)?, input(args, 1)?);
        let (vrows, orows) = (self.values.rows(v)?, self.orders.rows(o)?);
        for (i, g) in gids.iter().enumerate() {
            if o.is_null(i) {
                continue;
            }
            let slot = &mut self.best[*g as usize];
            let better = match slot {
                None => true,
                Some((_, cur)) => if self.max { orows.row(i) > cur.row() } else { orows.row(i) < cur.row() },
            };
            if better {
                *slot = Some((vrows.row(i).owned(), orows.row(i).owned()));
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        self.update(gids, state)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let best = std::mem::take(&mut self.best);
        let (v, o): (Vec<Option<OwnedRow>>, Vec<Option<OwnedRow>>) = best.into_iter().map(|b| b.map(|(v, o)| (v, o)).unzip()).unzip();
        Ok(vec![self.values.array(&v)?, self.orders.array(&o)?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let v: Vec<Option<OwnedRow>> = std::mem::take(&mut self.best).into_iter().map(|b| b.map(|(v, _)| v)).collect();
        self.values.array(&v)
    }
}

/// Exact percentiles: every non-NULL value kept (buffer: a list of doubles per group).
struct Percentile {
    discrete: bool,
    p: f64,
    values: Vec<Vec<f64>>,
    /// The type to give the result (percentile_approx: the input's).
    result: Option<DataType>,
}

impl Percentile {
    fn add(&mut self, gids: &[u32], a: &Float64Array) {
        for (i, g) in gids.iter().enumerate() {
            if a.is_valid(i) {
                self.values[*g as usize].push(a.value(i));
            }
        }
    }
}

impl Accumulator for Percentile {
    fn resize(&mut self, groups: usize) {
        self.values.resize_with(groups, Vec::new);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = doubles(input(args, 0)?)?;
        self.add(gids, a.as_primitive::<Float64Type>());
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let lists = input(state, 0)?.as_list_opt::<i32>().ok_or_else(|| KilnError::internal("percentile buffer is not a list"))?;
        let offsets = lists.value_offsets();
        let items = doubles(lists.values())?;
        let items = items.as_primitive::<Float64Type>();
        for (i, g) in gids.iter().enumerate() {
            if lists.is_valid(i) {
                let (s, e) = (offsets[i] as usize, offsets[i + 1] as usize);
                self.values[*g as usize].extend((s..e).filter(|k| items.is_valid(*k)).map(|k| items.value(k)));
            }
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let values = std::mem::take(&mut self.values);
        let offsets = OffsetBuffer::from_lengths(values.iter().map(Vec::len));
        let items = Float64Array::from(values.into_iter().flatten().collect::<Vec<_>>());
        let field = Arc::new(Field::new("item", DataType::Float64, false));
        Ok(vec![Arc::new(ListArray::try_new(field, offsets, Arc::new(items), None::<NullBuffer>)?)])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let (p, discrete) = (self.p, self.discrete);
        let out = self.percentiles(p, discrete);
        match &self.result {
            Some(t) if t != &DataType::Float64 => Ok(cast(&out, t)?),
            _ => Ok(out),
        }
    }
}

impl Percentile {
    fn percentiles(&mut self, p: f64, discrete: bool) -> ArrayRef {
        f64_results(self.values.iter_mut().map(|v| {
            if v.is_empty() {
                return None;
            }
            v.sort_by(|a, b| a.total_cmp(b));
            let n = v.len();
            if discrete {
                // The first value whose cumulative distribution reaches p.
                let k = ((n as f64 * p).ceil() as usize).clamp(1, n) - 1;
                return Some(v[k]);
            }
            let pos = (n - 1) as f64 * p;
            let (lo, hi) = (pos.floor(), pos.ceil());
            let (a, b) = (v[lo as usize], v[hi as usize]);
            Some(if lo == hi || a == b { a } else { (hi - pos) * a + (pos - lo) * b })
        }))
    }
}

/// A list column of `items` split by per-row lengths (every list valid).
fn list_array(element: &DataType, lengths: impl Iterator<Item = usize>, items: ArrayRef) -> Result<ArrayRef> {
    let DataType::List(field) = crate::types::list_type(element.clone()) else {
        return Err(KilnError::internal("list_type is not a list"));
    };
    Ok(Arc::new(ListArray::try_new(field, OffsetBuffer::from_lengths(lengths), items, None::<NullBuffer>)?))
}

/// Calls `f(row, item index)` for each item of each valid list of `lists`.
fn each_item(lists: &ArrayRef, mut f: impl FnMut(usize, usize) -> Result<()>) -> Result<()> {
    let lists = lists.as_list_opt::<i32>().ok_or_else(|| KilnError::internal("an aggregation buffer is not a list"))?;
    let offsets = lists.value_offsets();
    for i in 0..lists.len() {
        if lists.is_valid(i) {
            for k in offsets[i] as usize..offsets[i + 1] as usize {
                f(i, k)?;
            }
        }
    }
    Ok(())
}

/// collect_list / collect_set: the non-NULL values per group in the arrow row format, in input
/// order (a set keeps the first of equal values). Buffer [buf: array].
struct Collect {
    set: bool,
    element: DataType,
    codec: RowCodec,
    values: Vec<Vec<OwnedRow>>,
    seen: Vec<std::collections::HashSet<OwnedRow>>,
}

impl Collect {
    fn new(set: bool, element: DataType) -> Result<Collect> {
        Ok(Collect { set, codec: RowCodec::new(element.clone())?, element, values: vec![], seen: vec![] })
    }
    fn push(&mut self, g: usize, row: arrow::row::Row<'_>) {
        if self.set && !self.seen[g].insert(row.owned()) {
            return;
        }
        self.values[g].push(row.owned());
    }
}

impl Accumulator for Collect {
    fn resize(&mut self, groups: usize) {
        self.values.resize_with(groups, Vec::new);
        if self.set {
            self.seen.resize_with(groups, Default::default);
        }
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = input(args, 0)?;
        let rows = self.codec.rows(a)?;
        let nulls = a.logical_nulls();
        for (i, g) in gids.iter().enumerate() {
            if nulls.as_ref().is_none_or(|n| n.is_valid(i)) {
                self.push(*g as usize, rows.row(i));
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let lists = input(state, 0)?;
        let items = lists.as_list_opt::<i32>().ok_or_else(|| KilnError::internal("collect buffer is not a list"))?.values().clone();
        let rows = self.codec.rows(&items)?;
        each_item(lists, |i, k| {
            self.push(gids[i] as usize, rows.row(k));
            Ok(())
        })
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let values = std::mem::take(&mut self.values);
        self.seen.clear();
        let mut items = self.codec.conv.convert_rows(values.iter().flatten().map(|r| r.row()))?;
        let items = items.pop().ok_or_else(|| KilnError::internal("row conversion without a column"))?;
        list_array(&self.element, values.iter().map(Vec::len), items)
    }
}

/// listagg / string_agg: per group the non-NULL values and their order keys (arrow row format,
/// so comparing bytes compares keys in their directions), joined at the end. Buffer [buf:
/// `array<string>`, keys: `array<binary>`, delimiter].
struct ListAgg {
    keys: Option<RowConverter>,
    delimiter: Option<String>,
    values: Vec<Vec<(Vec<u8>, String)>>,
}

impl ListAgg {
    fn new(b: AggBuiltin, key_types: &[DataType]) -> Result<ListAgg> {
        let keys = if key_types.is_empty() {
            None
        } else {
            let fields = key_types
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    let (descending, nulls_first) = b.order_direction(k);
                    SortField::new_with_options(t.clone(), arrow::compute::SortOptions { descending, nulls_first })
                })
                .collect();
            Some(RowConverter::new(fields)?)
        };
        Ok(ListAgg { keys, delimiter: None, values: vec![] })
    }
}

impl Accumulator for ListAgg {
    fn resize(&mut self, groups: usize) {
        self.values.resize_with(groups, Vec::new);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let v = cast(input(args, 0)?, &DataType::Utf8)?;
        let v = v.as_string::<i32>();
        if self.delimiter.is_none() && !gids.is_empty() {
            let d = cast(input(args, 1)?, &DataType::Utf8)?;
            let d = d.as_string::<i32>();
            self.delimiter = Some(if d.is_valid(0) { d.value(0).to_string() } else { String::new() });
        }
        let keys = match &self.keys {
            Some(conv) => Some(conv.convert_columns(args.get(2..).unwrap_or(&[]))?),
            None => None,
        };
        for (i, g) in gids.iter().enumerate() {
            if v.is_valid(i) {
                let key = keys.as_ref().map_or_else(Vec::new, |k| k.row(i).as_ref().to_vec());
                self.values[*g as usize].push((key, v.value(i).to_string()));
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let (lists, key_lists) = (input(state, 0)?, input(state, 1)?);
        let items = lists.as_list_opt::<i32>().ok_or_else(|| KilnError::internal("listagg buffer is not a list"))?.values().clone();
        let keys = key_lists.as_list_opt::<i32>().ok_or_else(|| KilnError::internal("listagg keys are not a list"))?.values().clone();
        let (items, keys) = (items.as_string::<i32>(), keys.as_binary::<i32>());
        let d = input(state, 2)?.as_string::<i32>();
        if self.delimiter.is_none() {
            self.delimiter = (0..d.len()).find(|i| d.is_valid(*i)).map(|i| d.value(i).to_string());
        }
        each_item(lists, |i, k| {
            self.values[gids[i] as usize].push((keys.value(k).to_vec(), items.value(k).to_string()));
            Ok(())
        })
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let values = std::mem::take(&mut self.values);
        let lengths: Vec<usize> = values.iter().map(Vec::len).collect();
        let items: ArrayRef = Arc::new(values.iter().flatten().map(|(_, v)| Some(v.as_str())).collect::<arrow::array::StringArray>());
        let keys: ArrayRef = Arc::new(values.iter().flatten().map(|(k, _)| Some(k.as_slice())).collect::<arrow::array::BinaryArray>());
        let delimiter: ArrayRef = Arc::new(arrow::array::StringArray::from(vec![self.delimiter.clone(); lengths.len()]));
        Ok(vec![list_array(&DataType::Utf8, lengths.iter().copied(), items)?, list_array(&DataType::Binary, lengths.into_iter(), keys)?, delimiter])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let delimiter = self.delimiter.clone().unwrap_or_default();
        let ordered = self.keys.is_some();
        Ok(Arc::new(
            std::mem::take(&mut self.values)
                .into_iter()
                .map(|mut v| {
                    if v.is_empty() {
                        return None;
                    }
                    if ordered {
                        // Stable: equal keys keep their input order.
                        v.sort_by(|a, b| a.0.cmp(&b.0));
                    }
                    Some(v.into_iter().map(|(_, s)| s).collect::<Vec<_>>().join(&delimiter))
                })
                .collect::<arrow::array::StringArray>(),
        ))
    }
}

/// approx_count_distinct: a HyperLogLog++ sketch per group over Spark's xxhash64 of each value.
/// Buffer [MS: the registers].
struct ApproxCountDistinct {
    rsd: f64,
    sketches: Vec<HyperLogLogPlusPlus>,
}

impl Accumulator for ApproxCountDistinct {
    fn resize(&mut self, groups: usize) {
        let rsd = self.rsd;
        self.sketches.resize_with(groups, || HyperLogLogPlusPlus::new(rsd));
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = input(args, 0)?;
        let hashes = spark_xxhash64(a).ok_or_else(|| {
            KilnError::analysis("UNSUPPORTED_FEATURE", format!("approx_count_distinct over {}", crate::types::spark_type_name(a.data_type())))
        })?;
        // NULLs are skipped, also a NULL-typed argument's (Arrow counts no nulls in it).
        let nulls = a.logical_nulls();
        for (i, (g, h)) in gids.iter().zip(hashes).enumerate() {
            if let (Some(h), true) = (h, nulls.as_ref().is_none_or(|n| n.is_valid(i))) {
                self.sketches[*g as usize].add_hash(h);
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let regs = input(state, 0)?.as_binary_opt::<i32>().ok_or_else(|| KilnError::internal("HLL++ buffer is not binary"))?;
        for (i, g) in gids.iter().enumerate() {
            if regs.is_valid(i) {
                self.sketches[*g as usize].merge_registers(regs.value(i));
            }
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let sketches = std::mem::take(&mut self.sketches);
        Ok(vec![Arc::new(sketches.iter().map(|s| Some(s.registers())).collect::<arrow::array::BinaryArray>())])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        Ok(Arc::new(Int64Array::from(std::mem::take(&mut self.sketches).iter().map(|s| s.query() as i64).collect::<Vec<_>>())))
    }
}

/// bloom_filter_agg: per group a Bloom filter (`expr/bloom.rs`) over the non-NULL bigint
/// hashes, NULL over no rows (as Spark's). Buffer [bloomFilter: its bytes].
struct BloomFilterAgg {
    words: usize,
    /// Per group: the words, empty until a value arrives.
    filters: Vec<Vec<u64>>,
}

impl Accumulator for BloomFilterAgg {
    fn resize(&mut self, groups: usize) {
        self.filters.resize_with(groups, Vec::new);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let hashes = input(args, 0)?.as_primitive_opt::<Int64Type>().ok_or_else(|| KilnError::internal("bloom_filter_agg of a value that is not a bigint hash"))?;
        for (g, h) in gids.iter().zip(hashes.iter()) {
            if let Some(h) = h {
                let f = &mut self.filters[*g as usize];
                if f.is_empty() {
                    f.resize(self.words, 0);
                }
                crate::expr::bloom::insert(f, h as u64);
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let bytes = input(state, 0)?.as_binary_opt::<i32>().ok_or_else(|| KilnError::internal("Bloom filter buffer is not binary"))?;
        for (i, g) in gids.iter().enumerate() {
            if bytes.is_valid(i) {
                crate::expr::bloom::merge(&mut self.filters[*g as usize], bytes.value(i))?;
            }
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        self.evaluate().map(|a| vec![a])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let filters = std::mem::take(&mut self.filters);
        Ok(Arc::new(filters.iter().map(|f| (!f.is_empty()).then(|| crate::expr::bloom::serialize(f))).collect::<arrow::array::BinaryArray>()))
    }
}

/// mode: per group each distinct non-NULL value (arrow row format, floats with -0.0 as 0.0 and
/// one NaN, as Spark normalizes them) and its count. Buffer [buf: array, counts: `array<bigint>`].
struct Mode {
    ties: u64,
    element: DataType,
    codec: RowCodec,
    counts: Vec<std::collections::HashMap<OwnedRow, i64>>,
}

impl Mode {
    fn add(&mut self, gids: &[u32], values: &ArrayRef, count: impl Fn(usize) -> i64) -> Result<()> {
        let values = crate::expr::eval::normalize_floats(values, true)?;
        let rows = self.codec.rows(&values)?;
        let nulls = values.logical_nulls();
        for (i, g) in gids.iter().enumerate() {
            if nulls.as_ref().is_none_or(|n| n.is_valid(i)) {
                *self.counts[*g as usize].entry(rows.row(i).owned()).or_insert(0) += count(i);
            }
        }
        Ok(())
    }
}

impl Accumulator for Mode {
    fn resize(&mut self, groups: usize) {
        self.counts.resize_with(groups, Default::default);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = input(args, 0)?.clone();
        self.add(gids, &a, |_| 1)
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let (lists, counts) = (input(state, 0)?, input(state, 1)?);
        let list = |a: &ArrayRef| a.as_list_opt::<i32>().cloned().ok_or_else(|| KilnError::internal("mode buffer is not a list"));
        let (lists, counts) = (list(lists)?, list(counts)?);
        // One row per item: its group and count.
        let mut item_gids = Vec::with_capacity(lists.values().len());
        let offsets = lists.value_offsets();
        for i in 0..lists.len() {
            let n = if lists.is_valid(i) { (offsets[i + 1] - offsets[i]) as usize } else { 0 };
            item_gids.extend(std::iter::repeat_n(gids[i], n));
        }
        let start = offsets.first().copied().unwrap_or(0) as usize;
        let items = lists.values().slice(start, item_gids.len());
        let c = counts.values().as_primitive_opt::<Int64Type>().ok_or_else(|| KilnError::internal("mode counts are not bigints"))?.clone();
        let c_start = counts.value_offsets().first().copied().unwrap_or(0) as usize;
        self.add(&item_gids, &items, |k| c.value(c_start + k))
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let groups = std::mem::take(&mut self.counts);
        let lengths: Vec<usize> = groups.iter().map(|m| m.len()).collect();
        let mut items = self.codec.conv.convert_rows(groups.iter().flat_map(|m| m.keys().map(|r| r.row())))?;
        let items = items.pop().ok_or_else(|| KilnError::internal("row conversion without a column"))?;
        let counts: ArrayRef = Arc::new(Int64Array::from_iter_values(groups.iter().flat_map(|m| m.values().copied())));
        Ok(vec![list_array(&self.element, lengths.iter().copied(), items)?, list_array(&DataType::Int64, lengths.into_iter(), counts)?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let ties = self.ties;
        let best: Vec<Option<OwnedRow>> = std::mem::take(&mut self.counts)
            .into_iter()
            .map(|m| {
                // Row bytes sort as the values (ascending); ties: the lowest unless asked for the highest.
                m.into_iter()
                    .max_by(|(ra, ca), (rb, cb)| ca.cmp(cb).then_with(|| if ties == 2 { ra.cmp(rb) } else { rb.cmp(ra) }))
                    .map(|(r, _)| r)
            })
            .collect();
        self.codec.array(&best)
    }
}

/// bit_and / bit_or / bit_xor: per group the value so far (as a bigint), NULL before the first
/// non-NULL input. Buffer [value] in the input's type.
struct BitAgg {
    kind: AggKind,
    result: DataType,
    values: Vec<Option<i64>>,
}

impl BitAgg {
    fn add(&mut self, gids: &[u32], a: &ArrayRef) -> Result<()> {
        let a = cast(a, &DataType::Int64)?;
        let a = a.as_primitive::<Int64Type>();
        for (i, g) in gids.iter().enumerate() {
            if a.is_null(i) {
                continue;
            }
            let v = a.value(i);
            let slot = &mut self.values[*g as usize];
            *slot = Some(match (*slot, self.kind) {
                (None, _) => v,
                (Some(s), AggKind::BitAnd) => s & v,
                (Some(s), AggKind::BitOr) => s | v,
                (Some(s), _) => s ^ v,
            });
        }
        Ok(())
    }
}

impl Accumulator for BitAgg {
    fn resize(&mut self, groups: usize) {
        self.values.resize(groups, None);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        self.add(gids, input(args, 0)?)
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        self.add(gids, input(state, 0)?)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let values: ArrayRef = Arc::new(std::mem::take(&mut self.values).into_iter().collect::<Int64Array>());
        // Narrowing back is exact: every value came from the input's type.
        Ok(cast(&values, &self.result)?)
    }
}

/// java.util.Random, which Spark's NumericHistogram seeds with 31183 to break ties between
/// equally close bins: the same seed gives Spark's bins.
struct JavaRandom(u64);

impl JavaRandom {
    const MASK: u64 = (1 << 48) - 1;
    fn new(seed: u64) -> JavaRandom {
        JavaRandom((seed ^ 0x5DEECE66D) & Self::MASK)
    }
    fn next(&mut self, bits: u32) -> u64 {
        self.0 = self.0.wrapping_mul(0x5DEECE66D).wrapping_add(0xB) & Self::MASK;
        self.0 >> (48 - bits)
    }
    fn next_double(&mut self) -> f64 {
        ((self.next(26) << 27) + self.next(27)) as f64 / (1u64 << 53) as f64
    }
}

/// One group's histogram: bins (centre, height) in order of their centres.
struct Bins {
    bins: Vec<(f64, f64)>,
    prng: JavaRandom,
}

impl Default for Bins {
    fn default() -> Bins {
        Bins { bins: vec![], prng: JavaRandom::new(31183) }
    }
}

impl Bins {
    /// NumericHistogram.add: one more at `v`'s bin, or a new bin (then the closest two merge).
    fn add(&mut self, v: f64, nb: usize) {
        let (mut l, mut r, mut bin) = (0, self.bins.len(), 0);
        while l < r {
            bin = (l + r) / 2;
            if self.bins[bin].0 > v {
                r = bin;
            } else if self.bins[bin].0 < v {
                bin += 1;
                l = bin;
            } else {
                break;
            }
        }
        match self.bins.get_mut(bin) {
            Some(b) if b.0 == v => b.1 += 1.0,
            _ => {
                self.bins.insert(bin, (v, 1.0));
                self.trim(nb);
            }
        }
    }

    /// NumericHistogram.trim: merges the two closest bins (ties broken by the seeded random
    /// draw, as Spark) into their height-weighted centre until `nb` remain.
    fn trim(&mut self, nb: usize) {
        while self.bins.len() > nb {
            let (mut smallest, mut at, mut ties) = (self.bins[1].0 - self.bins[0].0, 0, 1u32);
            for i in 1..self.bins.len() - 1 {
                let diff = self.bins[i + 1].0 - self.bins[i].0;
                if diff < smallest {
                    (smallest, at, ties) = (diff, i, 1);
                } else if diff == smallest {
                    ties += 1;
                    if self.prng.next_double() <= 1.0 / ties as f64 {
                        at = i;
                    }
                }
            }
            let ((x0, y0), (x1, y1)) = (self.bins[at], self.bins[at + 1]);
            let d = y0 + y1;
            self.bins[at] = (x0 * (y0 / d) + x1 / d * y1, d);
            self.bins.remove(at + 1);
        }
    }

    /// NumericHistogram.merge: copied into an empty histogram, else both sorted together and trimmed.
    fn merge(&mut self, other: Vec<(f64, f64)>, nb: usize) {
        if self.bins.is_empty() {
            self.bins = other;
            return;
        }
        self.bins.extend(other);
        self.bins.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.trim(nb);
    }
}

/// histogram_numeric(x, nb): Spark's NumericHistogram per group. Buffer
/// `[x: array<double>, y: array<double>]`; the result's centres go back to x's type (truncated, as Spark's toInt).
struct HistogramNumeric {
    nb: usize,
    element: DataType,
    groups: Vec<Bins>,
}

impl HistogramNumeric {
    /// The input as doubles: numbers, days of a date, microseconds of a timestamp, months or
    /// microseconds of an interval.
    fn doubles(a: &ArrayRef) -> Result<ArrayRef> {
        use crate::types::interval::{is_day_time, is_year_month, micros, months};
        Ok(match a.data_type() {
            DataType::Date32 => cast(&cast(a, &DataType::Int32)?, &DataType::Float64)?,
            DataType::Timestamp(..) => cast(&cast(a, &DataType::Int64)?, &DataType::Float64)?,
            t if is_year_month(t) => cast(&(Arc::new(months(a)?) as ArrayRef), &DataType::Float64)?,
            t if is_day_time(t) => cast(&(Arc::new(micros(a)?) as ArrayRef), &DataType::Float64)?,
            _ => doubles(a)?,
        })
    }

    /// The bins' centres in the input's type.
    fn centres(&self, xs: Vec<f64>) -> Result<ArrayRef> {
        Ok(match &self.element {
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
                cast(&(Arc::new(Int64Array::from_iter_values(xs.into_iter().map(|x| x as i64))) as ArrayRef), &self.element)?
            }
            DataType::Date32 => Arc::new(arrow::array::Date32Array::from_iter_values(xs.into_iter().map(|x| x as i32))),
            DataType::Timestamp(_, tz) => {
                Arc::new(arrow::array::TimestampMicrosecondArray::from_iter_values(xs.into_iter().map(|x| x as i64)).with_timezone_opt(tz.clone()))
            }
            DataType::Float32 => Arc::new(arrow::array::Float32Array::from_iter_values(xs.into_iter().map(|x| x as f32))),
            DataType::Decimal128(..) => cast(&f64_array(xs), &self.element)?,
            t if crate::types::interval::is_year_month(t) => {
                crate::types::interval::year_month_array(arrow::array::Int32Array::from_iter_values(xs.into_iter().map(|x| x as i32)), t)
            }
            t if crate::types::interval::is_day_time(t) => crate::types::interval::day_time_array(Int64Array::from_iter_values(xs.into_iter().map(|x| x as i64)), t)?,
            _ => f64_array(xs),
        })
    }
}

impl Accumulator for HistogramNumeric {
    fn resize(&mut self, groups: usize) {
        self.groups.resize_with(groups, Bins::default);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = Self::doubles(input(args, 0)?)?;
        let a = a.as_primitive::<Float64Type>();
        for (i, g) in gids.iter().enumerate() {
            if a.is_valid(i) {
                self.groups[*g as usize].add(a.value(i), self.nb);
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let (xs, ys) = (input(state, 0)?, input(state, 1)?);
        let mut other: Vec<Vec<(f64, f64)>> = vec![vec![]; gids.len()];
        let (xv, yv) = (doubles(xs.as_list::<i32>().values())?, doubles(ys.as_list::<i32>().values())?);
        let (xv, yv) = (xv.as_primitive::<Float64Type>(), yv.as_primitive::<Float64Type>());
        each_item(xs, |row, k| {
            other[row].push((xv.value(k), yv.value(k)));
            Ok(())
        })?;
        for (g, bins) in gids.iter().zip(other) {
            self.groups[*g as usize].merge(bins, self.nb);
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let groups = std::mem::take(&mut self.groups);
        let lengths = || groups.iter().map(|g| g.bins.len());
        let xs = f64_array(groups.iter().flat_map(|g| g.bins.iter().map(|b| b.0)).collect());
        let ys = f64_array(groups.iter().flat_map(|g| g.bins.iter().map(|b| b.1)).collect());
        Ok(vec![list_array(&DataType::Float64, lengths(), xs)?, list_array(&DataType::Float64, lengths(), ys)?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let groups = std::mem::take(&mut self.groups);
        let x = self.centres(groups.iter().flat_map(|g| g.bins.iter().map(|b| b.0)).collect())?;
        let y = f64_array(groups.iter().flat_map(|g| g.bins.iter().map(|b| b.1)).collect());
        let fields = arrow::datatypes::Fields::from(vec![Field::new("x", x.data_type().clone(), true), Field::new("y", DataType::Float64, true)]);
        let items: ArrayRef = Arc::new(arrow::array::StructArray::try_new(fields.clone(), vec![x, y], None)?);
        // A group without a value is NULL, not an empty array.
        let nulls = NullBuffer::from(groups.iter().map(|g| !g.bins.is_empty()).collect::<Vec<_>>());
        let field = Arc::new(Field::new("item", DataType::Struct(fields), true));
        Ok(Arc::new(ListArray::try_new(field, OffsetBuffer::from_lengths(groups.iter().map(|g| g.bins.len())), items, Some(nulls))?))
    }
}
