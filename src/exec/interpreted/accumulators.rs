//! Typed per-group accumulators for count/sum/avg/min/max with Spark's buffers and ANSI
//! overflow rules. Each keeps one slot per group and updates it in a tight loop over
//! (group id, value) slices.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowNativeTypeOp, ArrowPrimitiveType, AsArray, BooleanArray, Int32Array, Int64Array, PrimitiveArray, StringArray,
};
use arrow::buffer::NullBuffer;
use arrow::compute::cast;
use arrow::datatypes::*;

use crate::error::{KilnError, Result};
use crate::expr::{aggregate_result_type, AggFunc};
use crate::types::format_decimal;

/// One aggregate's per-group state: the trait user-defined aggregates implement too.
pub(super) use crate::udf::Accumulator;

/// The accumulator for `func` over arguments of types `args`.
pub(super) fn new_accumulator(func: AggFunc, args: &[DataType]) -> Result<Box<dyn Accumulator>> {
    let arg = args.first().unwrap_or(&DataType::Int64);
    let result = aggregate_result_type(func, arg);
    Ok(match (func, &result) {
        (AggFunc::Udaf(udaf), _) => udaf.accumulator(),
        (AggFunc::Builtin(b), _) => super::stat_accumulators::builtin_accumulator(b, args)?,
        (AggFunc::Count, _) => Box::new(Count::default()),
        (f @ (AggFunc::Sum | AggFunc::Avg), t) if crate::types::interval::is_interval(t) => {
            Box::new(IntervalSumAvg { dt: t.clone(), avg: matches!(f, AggFunc::Avg), sums: vec![], counts: vec![] })
        }
        (AggFunc::Sum, DataType::Decimal128(p, s)) => Box::new(SumDecimal { p: *p, s: *s, ..Default::default() }),
        (AggFunc::Sum, DataType::Float64) => Box::new(SumF64::default()),
        (AggFunc::Sum, _) => Box::new(SumI64::default()),
        (AggFunc::Avg, DataType::Decimal128(rp, rs)) => {
            let DataType::Decimal128(p, s) = aggregate_result_type(AggFunc::Sum, arg) else {
                return Err(KilnError::internal("avg of a decimal without a decimal sum"));
            };
            Box::new(AvgDecimal { sum_p: p, s, res_p: *rp, res_s: *rs, sums: vec![], counts: vec![] })
        }
        (AggFunc::Avg, _) => Box::new(AvgF64::default()),
        (AggFunc::Min, _) => min_max::<true>(arg)?,
        (AggFunc::Max, _) => min_max::<false>(arg)?,
    })
}

pub(super) fn long_overflow() -> KilnError {
    KilnError::exec(
        "[ARITHMETIC_OVERFLOW] long overflow. Use 'try_add' to tolerate overflow and return NULL instead. \
         If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22003",
    )
}

fn decimal_overflow(value: Option<i128>, p: u8, s: i8) -> KilnError {
    let shown = value.map_or_else(|| "A sum beyond 38 digits".to_string(), |v| format_decimal(v, s));
    KilnError::exec(format!(
        "[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION] {shown} cannot be represented as Decimal({p}, {s}). \
         If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error, and return NULL instead. SQLSTATE: 22003"
    ))
}

/// Errors if a (non-null) value needs more than `p` digits.
fn check_precision(values: &[i128], valid: Option<&[bool]>, p: u8, s: i8) -> Result<()> {
    let bound = 10i128.checked_pow(p as u32).unwrap_or(i128::MAX);
    for (i, v) in values.iter().enumerate() {
        if v.unsigned_abs() >= bound.unsigned_abs() && valid.is_none_or(|ok| ok[i]) {
            return Err(decimal_overflow(Some(*v), p, s));
        }
    }
    Ok(())
}

/// Calls `f(group, value)` for each non-null row, in one loop without per-row null checks
/// when the array has no nulls.
#[inline]
fn each_valid<T: Copy>(gids: &[u32], values: &[T], nulls: Option<&NullBuffer>, mut f: impl FnMut(usize, T)) {
    match nulls {
        Some(n) if n.null_count() > 0 => {
            for (i, (g, v)) in gids.iter().zip(values).enumerate() {
                if n.is_valid(i) {
                    f(*g as usize, *v);
                }
            }
        }
        _ => {
            for (g, v) in gids.iter().zip(values) {
                f(*g as usize, *v);
            }
        }
    }
}

/// `arr` as type `to` (a no-op when it already is).
fn cast_to(arr: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    if arr.data_type() == to {
        Ok(arr.clone())
    } else {
        Ok(cast(arr, to)?)
    }
}

/// `arr` as a decimal array of scale `s` (any precision: only unscaled values are read).
fn decimal_of_scale(arr: &ArrayRef, s: i8) -> Result<ArrayRef> {
    match arr.data_type() {
        DataType::Decimal128(_, scale) if *scale == s => Ok(arr.clone()),
        _ => Ok(cast(arr, &DataType::Decimal128(38, s))?),
    }
}

fn arg(args: &[ArrayRef], i: usize) -> Result<&ArrayRef> {
    args.get(i).ok_or_else(|| KilnError::internal(format!("aggregate lacks input column {i}")))
}

fn nulls_from(seen: &[bool]) -> Option<NullBuffer> {
    if seen.iter().all(|s| *s) {
        None
    } else {
        Some(NullBuffer::from(seen.to_vec()))
    }
}

fn primitive<T: ArrowPrimitiveType>(values: Vec<T::Native>, seen: Option<&[bool]>, dt: &DataType) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::new(values.into(), seen.and_then(nulls_from)).with_data_type(dt.clone()))
}

/// count(args): rows where every argument is non-NULL. Buffer: [count bigint].
#[derive(Default)]
struct Count {
    counts: Vec<i64>,
}

impl Accumulator for Count {
    fn resize(&mut self, groups: usize) {
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let mut nulls: Option<NullBuffer> = None;
        for a in args {
            nulls = NullBuffer::union(nulls.as_ref(), a.logical_nulls().as_ref());
        }
        let counts = &mut self.counts;
        each_valid(gids, gids, nulls.as_ref(), |g, _| counts[g] += 1);
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let a = cast_to(arg(state, 0)?, &DataType::Int64)?;
        let a = a.as_primitive::<Int64Type>();
        let counts = &mut self.counts;
        each_valid(gids, a.values(), a.nulls(), |g, v| counts[g] += v);
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        Ok(primitive::<Int64Type>(std::mem::take(&mut self.counts), None, &DataType::Int64))
    }
    fn evaluate_state(&mut self, state: &[ArrayRef]) -> Result<ArrayRef> {
        // A NULL count (none in a buffer this writes) merges as 0.
        let a = cast_to(arg(state, 0)?, &DataType::Int64)?;
        Ok(match a.null_count() {
            0 => a,
            _ => Arc::new(a.as_primitive::<Int64Type>().iter().map(|v| Some(v.unwrap_or(0))).collect::<Int64Array>()),
        })
    }
}

/// sum of integers as bigint, ANSI overflow error (`wrap`: legacy mode's sum, which wraps as
/// Java's long). Buffer: [sum bigint], NULL until a value.
#[derive(Default)]
struct SumI64 {
    sums: Vec<i64>,
    seen: Vec<bool>,
    wrap: bool,
}

/// Legacy mode's sum of integers (`AggKind::LegacySum` of a bigint result): wraps on overflow.
pub(super) fn wrapping_sum() -> Box<dyn Accumulator> {
    Box::new(SumI64 { wrap: true, ..Default::default() })
}

impl Accumulator for SumI64 {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0);
        self.seen.resize(groups, false);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = cast_to(arg(args, 0)?, &DataType::Int64)?;
        let a = a.as_primitive::<Int64Type>();
        let (sums, seen) = (&mut self.sums, &mut self.seen);
        let mut overflow = false;
        each_valid(gids, a.values(), a.logical_nulls().as_ref(), |g, v| {
            let (s, o) = sums[g].overflowing_add(v);
            sums[g] = s;
            overflow |= o;
            seen[g] = true;
        });
        if overflow && !self.wrap {
            return Err(long_overflow());
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        self.update(gids, state)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        Ok(primitive::<Int64Type>(std::mem::take(&mut self.sums), Some(&self.seen), &DataType::Int64))
    }
    fn evaluate_state(&mut self, state: &[ArrayRef]) -> Result<ArrayRef> {
        // The buffer is the sum, NULL until a value: the result as it is.
        Ok(cast_to(arg(state, 0)?, &DataType::Int64)?)
    }
}

/// sum of floating point as double. Buffer: [sum double], NULL until a value.
#[derive(Default)]
struct SumF64 {
    sums: Vec<f64>,
    seen: Vec<bool>,
}

impl Accumulator for SumF64 {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0.0);
        self.seen.resize(groups, false);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = cast_to(arg(args, 0)?, &DataType::Float64)?;
        let a = a.as_primitive::<Float64Type>();
        let (sums, seen) = (&mut self.sums, &mut self.seen);
        each_valid(gids, a.values(), a.logical_nulls().as_ref(), |g, v| {
            sums[g] += v;
            seen[g] = true;
        });
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        self.update(gids, state)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        Ok(primitive::<Float64Type>(std::mem::take(&mut self.sums), Some(&self.seen), &DataType::Float64))
    }
    fn evaluate_state(&mut self, state: &[ArrayRef]) -> Result<ArrayRef> {
        // The buffer is the sum, NULL until a value; merged into an empty sum (0.0 + v), -0.0
        // comes out 0.0.
        let a = cast_to(arg(state, 0)?, &DataType::Float64)?;
        Ok(Arc::new(a.as_primitive::<Float64Type>().unary::<_, Float64Type>(|v| 0.0 + v)))
    }
}

/// Adds the decimal values of `a` into `sums` per group; false on i128 overflow.
fn add_decimals(gids: &[u32], a: &ArrayRef, sums: &mut [i128], nonempty: &mut [bool]) -> bool {
    let a = a.as_primitive::<Decimal128Type>();
    let mut overflow = false;
    each_valid(gids, a.values(), a.nulls(), |g, v| {
        let (s, o) = sums[g].overflowing_add(v);
        sums[g] = s;
        overflow |= o;
        nonempty[g] = true;
    });
    !overflow
}

/// sum of decimal(p,s) as decimal(p+10,s). Buffer: [sum (0 when empty), isEmpty boolean];
/// precision is checked when a buffer or result is produced (Spark's CheckOverflowInSum).
#[derive(Default)]
struct SumDecimal {
    p: u8,
    s: i8,
    sums: Vec<i128>,
    nonempty: Vec<bool>,
}

impl Accumulator for SumDecimal {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0);
        self.nonempty.resize(groups, false);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = decimal_of_scale(arg(args, 0)?, self.s)?;
        if !add_decimals(gids, &a, &mut self.sums, &mut self.nonempty) {
            return Err(decimal_overflow(None, self.p, self.s));
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let sums = decimal_of_scale(arg(state, 0)?, self.s)?;
        let empty = cast_to(arg(state, 1)?, &DataType::Boolean)?;
        let empty = empty.as_boolean();
        // A NULL sum in a non-empty buffer means the partial sum overflowed.
        for i in 0..sums.len() {
            if sums.is_null(i) && empty.is_valid(i) && !empty.value(i) {
                return Err(decimal_overflow(None, self.p, self.s));
            }
        }
        let mut nonempty = vec![false; self.nonempty.len()];
        if !add_decimals(gids, &sums, &mut self.sums, &mut nonempty) {
            return Err(decimal_overflow(None, self.p, self.s));
        }
        for (i, g) in gids.iter().enumerate() {
            if empty.is_valid(i) && !empty.value(i) {
                self.nonempty[*g as usize] = true;
            }
        }
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        check_precision(&self.sums, None, self.p, self.s)?;
        let dt = DataType::Decimal128(self.p, self.s);
        let empty: BooleanArray = self.nonempty.iter().map(|n| Some(!n)).collect();
        Ok(vec![primitive::<Decimal128Type>(std::mem::take(&mut self.sums), None, &dt), Arc::new(empty)])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        check_precision(&self.sums, Some(&self.nonempty), self.p, self.s)?;
        let dt = DataType::Decimal128(self.p, self.s);
        Ok(primitive::<Decimal128Type>(std::mem::take(&mut self.sums), Some(&self.nonempty), &dt))
    }
    fn evaluate_state(&mut self, state: &[ArrayRef]) -> Result<ArrayRef> {
        let sums = decimal_of_scale(arg(state, 0)?, self.s)?;
        let sums = sums.as_primitive::<Decimal128Type>();
        let empty = cast_to(arg(state, 1)?, &DataType::Boolean)?;
        let empty = empty.as_boolean();
        // Non-empty: isEmpty false (a NULL isEmpty merges as empty, as `merge` reads it).
        let not_empty = !empty.values();
        let nonempty = match empty.nulls() {
            Some(valid) => &not_empty & valid.inner(),
            None => not_empty,
        };
        // A NULL sum in a non-empty buffer means the partial sum overflowed.
        if sums.nulls().is_some_and(|n| n.inner().iter().zip(nonempty.iter()).any(|(valid, ne)| !valid && ne)) {
            return Err(decimal_overflow(None, self.p, self.s));
        }
        let flags: Vec<bool> = nonempty.iter().collect();
        let values = match sums.nulls() {
            Some(n) => sums.values().iter().zip(n.iter()).map(|(v, valid)| if valid { *v } else { 0 }).collect(),
            None => sums.values().to_vec(),
        };
        check_precision(&values, Some(&flags), self.p, self.s)?;
        Ok(primitive::<Decimal128Type>(values, Some(&flags), &DataType::Decimal128(self.p, self.s)))
    }
}

/// sum / avg of intervals (months or microseconds) in the interval's type; avg is the sum over
/// the count rounded HALF_UP (Spark's DivideYMInterval / DivideDTInterval); overflow is an
/// error. Buffer: [sum interval] (sum) or [sum interval, count bigint] (avg).
struct IntervalSumAvg {
    dt: DataType,
    avg: bool,
    sums: Vec<i64>,
    counts: Vec<i64>,
}

impl IntervalSumAvg {
    fn values(&self, a: &ArrayRef) -> Result<Int64Array> {
        use crate::expr::eval::interval::{micros, months};
        if crate::types::interval::is_year_month(a.data_type()) {
            Ok(months(a)?.unary(|m| m as i64))
        } else {
            micros(a)
        }
    }
    fn add(&mut self, gids: &[u32], a: &ArrayRef, counts: Option<&Int64Array>) -> Result<()> {
        let v = self.values(a)?;
        for (i, g) in gids.iter().enumerate() {
            if v.is_null(i) {
                continue;
            }
            let g = *g as usize;
            self.sums[g] = self.sums[g].checked_add(v.value(i)).ok_or_else(|| crate::expr::eval::interval::interval_overflow(Some("try_add")))?;
            self.counts[g] += counts.map_or(1, |c| c.value(i));
        }
        Ok(())
    }
    fn array(&self, values: Vec<Option<i64>>) -> Result<ArrayRef> {
        use crate::expr::eval::interval::{day_time_array, interval_overflow, year_month_array};
        if crate::types::interval::is_year_month(&self.dt) {
            let m = values.into_iter().map(|v| v.map(|v| i32::try_from(v).map_err(|_| interval_overflow(Some("try_add")))).transpose()).collect::<Result<Int32Array>>()?;
            Ok(year_month_array(m, &self.dt))
        } else {
            day_time_array(values.into_iter().collect(), &self.dt)
        }
    }
}

impl Accumulator for IntervalSumAvg {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0);
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        self.add(gids, arg(args, 0)?, None)
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let counts = if self.avg { Some(cast_to(arg(state, 1)?, &DataType::Int64)?) } else { None };
        self.add(gids, arg(state, 0)?, counts.as_ref().map(|c| c.as_primitive::<Int64Type>()))
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let sums = self.sums.iter().zip(&self.counts).map(|(s, c)| (*c > 0).then_some(*s)).collect();
        let mut out = vec![self.array(sums)?];
        if self.avg {
            out.push(primitive::<Int64Type>(self.counts.clone(), None, &DataType::Int64));
        }
        self.sums.clear();
        self.counts.clear();
        Ok(out)
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let values = self
            .sums
            .iter()
            .zip(&self.counts)
            .map(|(s, c)| match (*c > 0, self.avg) {
                (false, _) => None,
                (true, false) => Some(*s),
                (true, true) => div_half_up(*s as i128, *c, 0).and_then(|v| i64::try_from(v).ok()),
            })
            .collect();
        let out = self.array(values)?;
        self.sums.clear();
        self.counts.clear();
        Ok(out)
    }
}

/// avg of non-decimals as double. Buffer: [sum double, count bigint].
#[derive(Default)]
struct AvgF64 {
    sums: Vec<f64>,
    counts: Vec<i64>,
}

impl Accumulator for AvgF64 {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0.0);
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = cast_to(arg(args, 0)?, &DataType::Float64)?;
        let a = a.as_primitive::<Float64Type>();
        let (sums, counts) = (&mut self.sums, &mut self.counts);
        each_valid(gids, a.values(), a.logical_nulls().as_ref(), |g, v| {
            sums[g] += v;
            counts[g] += 1;
        });
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let s = cast_to(arg(state, 0)?, &DataType::Float64)?;
        let c = cast_to(arg(state, 1)?, &DataType::Int64)?;
        let (sums, counts) = (&mut self.sums, &mut self.counts);
        each_valid(gids, s.as_primitive::<Float64Type>().values(), s.nulls(), |g, v| sums[g] += v);
        each_valid(gids, c.as_primitive::<Int64Type>().values(), c.nulls(), |g, v| counts[g] += v);
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![
            primitive::<Float64Type>(std::mem::take(&mut self.sums), None, &DataType::Float64),
            primitive::<Int64Type>(std::mem::take(&mut self.counts), None, &DataType::Int64),
        ])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let seen: Vec<bool> = self.counts.iter().map(|c| *c > 0).collect();
        let avg = self.sums.iter().zip(&self.counts).map(|(s, c)| if *c > 0 { s / *c as f64 } else { 0.0 }).collect();
        Ok(primitive::<Float64Type>(avg, Some(&seen), &DataType::Float64))
    }
}

/// avg of decimal(p,s): sum as decimal(p+10,s), result decimal(p+4,s+4) = sum/count rounded
/// HALF_UP (Spark's DecimalDivideWithOverflowCheck). Buffer: [sum, count bigint].
struct AvgDecimal {
    sum_p: u8,
    s: i8,
    res_p: u8,
    res_s: i8,
    sums: Vec<i128>,
    counts: Vec<i64>,
}

/// round_half_up(sum / count * 10^k) without overflowing on the intermediate product.
pub(super) fn div_half_up(sum: i128, count: i64, k: u32) -> Option<i128> {
    let c = count as i128;
    let m = 10i128.checked_pow(k)?;
    let (q, r) = (sum / c, sum % c);
    let frac = r.checked_mul(m)?;
    let (fq, fr) = (frac / c, frac % c);
    let mut res = q.checked_mul(m)?.checked_add(fq)?;
    if 2 * fr.abs() >= c.abs() {
        res = res.checked_add(sum.signum())?;
    }
    Some(res)
}

impl Accumulator for AvgDecimal {
    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, 0);
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = decimal_of_scale(arg(args, 0)?, self.s)?;
        let a = a.as_primitive::<Decimal128Type>();
        let (sums, counts) = (&mut self.sums, &mut self.counts);
        let mut overflow = false;
        each_valid(gids, a.values(), a.nulls(), |g, v| {
            let (s, o) = sums[g].overflowing_add(v);
            sums[g] = s;
            overflow |= o;
            counts[g] += 1;
        });
        if overflow {
            return Err(decimal_overflow(None, self.sum_p, self.s));
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let s = decimal_of_scale(arg(state, 0)?, self.s)?;
        let c = cast_to(arg(state, 1)?, &DataType::Int64)?;
        let counts_in = c.as_primitive::<Int64Type>();
        // A NULL sum with a non-zero count means the partial sum overflowed.
        for i in 0..s.len() {
            if s.is_null(i) && counts_in.is_valid(i) && counts_in.value(i) > 0 {
                return Err(decimal_overflow(None, self.sum_p, self.s));
            }
        }
        let mut scratch = vec![false; self.sums.len()];
        if !add_decimals(gids, &s, &mut self.sums, &mut scratch) {
            return Err(decimal_overflow(None, self.sum_p, self.s));
        }
        let counts = &mut self.counts;
        each_valid(gids, counts_in.values(), counts_in.nulls(), |g, v| counts[g] += v);
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        check_precision(&self.sums, None, self.sum_p, self.s)?;
        let dt = DataType::Decimal128(self.sum_p, self.s);
        Ok(vec![
            primitive::<Decimal128Type>(std::mem::take(&mut self.sums), None, &dt),
            primitive::<Int64Type>(std::mem::take(&mut self.counts), None, &DataType::Int64),
        ])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        check_precision(&self.sums, Some(&self.counts.iter().map(|c| *c > 0).collect::<Vec<_>>()), self.sum_p, self.s)?;
        let k = (self.res_s - self.s).max(0) as u32;
        let mut out = Vec::with_capacity(self.sums.len());
        for (s, c) in self.sums.iter().zip(&self.counts) {
            out.push(if *c > 0 { div_half_up(*s, *c, k).ok_or_else(|| decimal_overflow(None, self.res_p, self.res_s))? } else { 0 });
        }
        let seen: Vec<bool> = self.counts.iter().map(|c| *c > 0).collect();
        check_precision(&out, Some(&seen), self.res_p, self.res_s)?;
        Ok(primitive::<Decimal128Type>(out, Some(&seen), &DataType::Decimal128(self.res_p, self.res_s)))
    }
}

/// min/max over a primitive type (floats: NaN largest, as Spark). Buffer: [value].
struct MinMax<T: ArrowPrimitiveType, const MIN: bool> {
    dt: DataType,
    vals: Vec<T::Native>,
    seen: Vec<bool>,
}

impl<T: ArrowPrimitiveType, const MIN: bool> Accumulator for MinMax<T, MIN> {
    fn resize(&mut self, groups: usize) {
        self.vals.resize(groups, T::Native::default());
        self.seen.resize(groups, false);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        // Spark's one NaN is the largest value (a negated NaN would be the smallest).
        let a = crate::expr::eval::normalize_floats(arg(args, 0)?, false)?;
        let a = a
            .as_primitive_opt::<T>()
            .ok_or_else(|| KilnError::internal(format!("min/max over {} where {} was planned", a.data_type(), self.dt)))?;
        let (vals, seen) = (&mut self.vals, &mut self.seen);
        each_valid(gids, a.values(), a.nulls(), |g, v| {
            let better = if MIN { v.is_lt(vals[g]) } else { v.is_gt(vals[g]) };
            if better || !seen[g] {
                vals[g] = v;
                seen[g] = true;
            }
        });
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        self.update(gids, state)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        Ok(primitive::<T>(std::mem::take(&mut self.vals), Some(&self.seen), &self.dt))
    }
    fn evaluate_state(&mut self, state: &[ArrayRef]) -> Result<ArrayRef> {
        // The buffer is the value, NULL until one.
        match arg(state, 0)? {
            a if a.data_type() == &self.dt => Ok(a.clone()),
            _ => crate::udf::evaluate_by_merging(self, state),
        }
    }
}

/// min/max over strings (byte order, as Spark's UTF8String).
#[derive(Default)]
struct MinMaxStr<const MIN: bool> {
    vals: Vec<Option<String>>,
}

impl<const MIN: bool> Accumulator for MinMaxStr<MIN> {
    fn resize(&mut self, groups: usize) {
        self.vals.resize(groups, None);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = arg(args, 0)?;
        let a = a.as_string_opt::<i32>().ok_or_else(|| KilnError::internal(format!("min/max over {} as a string", a.data_type())))?;
        for (i, g) in gids.iter().enumerate() {
            if a.is_null(i) {
                continue;
            }
            let v = a.value(i);
            match &mut self.vals[*g as usize] {
                Some(cur) => {
                    if (MIN && v < cur.as_str()) || (!MIN && v > cur.as_str()) {
                        cur.clear();
                        cur.push_str(v);
                    }
                }
                slot => *slot = Some(v.to_string()),
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        self.update(gids, state)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        Ok(Arc::new(StringArray::from(std::mem::take(&mut self.vals))))
    }
}

/// min/max over structs and arrays, in Spark's order of them (field by field, element by
/// element, a NULL inside first): each group keeps its best value and that value's row bytes.
struct MinMaxNested<const MIN: bool> {
    dt: DataType,
    best: Vec<Option<(Vec<u8>, ArrayRef)>>,
}

impl<const MIN: bool> Accumulator for MinMaxNested<MIN> {
    fn resize(&mut self, groups: usize) {
        self.best.resize(groups, None);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let a = arg(args, 0)?;
        let conv = arrow::row::RowConverter::new(vec![arrow::row::SortField::new(a.data_type().clone())])?;
        let rows = conv.convert_columns(std::slice::from_ref(a))?;
        for (i, g) in gids.iter().enumerate() {
            if a.is_null(i) {
                continue;
            }
            let v = rows.row(i);
            let slot = &mut self.best[*g as usize];
            let better = match slot {
                Some((cur, _)) => (MIN && v.as_ref() < cur.as_slice()) || (!MIN && v.as_ref() > cur.as_slice()),
                None => true,
            };
            if better {
                *slot = Some((v.as_ref().to_vec(), a.slice(i, 1)));
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        self.update(gids, state)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let best = std::mem::take(&mut self.best);
        let null = arrow::array::new_null_array(&self.dt, 1);
        let mut sources: Vec<&dyn Array> = vec![null.as_ref()];
        let mut order = Vec::with_capacity(best.len());
        for b in &best {
            match b {
                Some((_, v)) => {
                    sources.push(v.as_ref());
                    order.push((sources.len() - 1, 0));
                }
                None => order.push((0, 0)),
            }
        }
        Ok(arrow::compute::interleave(&sources, &order)?)
    }
}

/// Runs an accumulator over inputs cast to `via`, casting its outputs back to `out`.
struct Casting {
    inner: Box<dyn Accumulator>,
    via: DataType,
    out: DataType,
}

impl Casting {
    fn cast_all(&self, arrays: &[ArrayRef]) -> Result<Vec<ArrayRef>> {
        arrays.iter().map(|a| cast_to(a, &self.via)).collect()
    }
}

impl Accumulator for Casting {
    fn resize(&mut self, groups: usize) {
        self.inner.resize(groups);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        let args = self.cast_all(args)?;
        self.inner.update(gids, &args)
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        let state = self.cast_all(state)?;
        self.inner.merge(gids, &state)
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        cast_to(&self.inner.evaluate()?, &self.out)
    }
}

/// min(NULL) / max(NULL): NULL for every group, of type void.
struct AllNull {
    groups: usize,
}

impl Accumulator for AllNull {
    fn resize(&mut self, groups: usize) {
        self.groups = groups;
    }
    fn update(&mut self, _: &[u32], _: &[ArrayRef]) -> Result<()> {
        Ok(())
    }
    fn merge(&mut self, _: &[u32], _: &[ArrayRef]) -> Result<()> {
        Ok(())
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        Ok(vec![self.evaluate()?])
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        Ok(arrow::array::new_null_array(&DataType::Null, std::mem::take(&mut self.groups)))
    }
}

pub(super) fn min_max<const MIN: bool>(dt: &DataType) -> Result<Box<dyn Accumulator>> {
    fn p<T: ArrowPrimitiveType + 'static, const MIN: bool>(dt: &DataType) -> Box<dyn Accumulator> {
        Box::new(MinMax::<T, MIN> { dt: dt.clone(), vals: vec![], seen: vec![] })
    }
    Ok(match dt {
        DataType::Int8 => p::<Int8Type, MIN>(dt),
        DataType::Int16 => p::<Int16Type, MIN>(dt),
        DataType::Int32 => p::<Int32Type, MIN>(dt),
        DataType::Int64 => p::<Int64Type, MIN>(dt),
        DataType::Float32 => p::<Float32Type, MIN>(dt),
        DataType::Float64 => p::<Float64Type, MIN>(dt),
        DataType::Decimal128(_, _) => p::<Decimal128Type, MIN>(dt),
        DataType::Date32 => p::<Date32Type, MIN>(dt),
        DataType::Date64 => p::<Date64Type, MIN>(dt),
        DataType::Timestamp(TimeUnit::Microsecond, _) => p::<TimestampMicrosecondType, MIN>(dt),
        // Intervals (`types::interval`): months or microseconds.
        DataType::Interval(IntervalUnit::YearMonth) => p::<IntervalYearMonthType, MIN>(dt),
        DataType::Duration(TimeUnit::Microsecond) => p::<DurationMicrosecondType, MIN>(dt),
        t if crate::types::interval::is_year_month(t) => p::<Decimal32Type, MIN>(dt),
        t if crate::types::interval::is_day_time(t) => p::<Decimal64Type, MIN>(dt),
        DataType::Utf8 => Box::new(MinMaxStr::<MIN>::default()),
        DataType::LargeUtf8 | DataType::Utf8View => {
            Box::new(Casting { inner: Box::new(MinMaxStr::<MIN>::default()), via: DataType::Utf8, out: dt.clone() })
        }
        DataType::Boolean => Box::new(Casting { inner: p::<Int8Type, MIN>(&DataType::Int8), via: DataType::Int8, out: dt.clone() }),
        DataType::Null => Box::new(AllNull { groups: 0 }),
        DataType::Struct(_) | DataType::List(_) => Box::new(MinMaxNested::<MIN> { dt: dt.clone(), best: vec![] }),
        other => return Err(KilnError::unsupported(format!("{} over {other}", if MIN { "min" } else { "max" }))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Float64Array;

    #[test]
    fn half_up_division() {
        assert_eq!(div_half_up(500, 3, 4), Some(1_666_667)); // 5.00/3 -> 1.666667 at scale 6
        assert_eq!(div_half_up(-500, 3, 4), Some(-1_666_667));
        assert_eq!(div_half_up(1, 2, 0), Some(1)); // 0.5 rounds away from zero
        assert_eq!(div_half_up(-1, 2, 0), Some(-1));
        assert_eq!(div_half_up(i128::MAX / 2, 1, 4), None);
    }

    /// A partial aggregate's buffers: `values` folded into groups `gids` (None: a NULL input).
    fn partial_state(func: AggFunc, arg: ArrayRef, gids: &[u32], groups: usize) -> Vec<ArrayRef> {
        let mut p = new_accumulator(func, &[arg.data_type().clone()]).unwrap();
        p.resize(groups);
        p.update(gids, &[arg]).unwrap();
        p.state().unwrap()
    }

    #[test]
    fn evaluate_state_equals_merging_each_buffer() {
        use arrow::array::{Decimal128Array, Int64Array};
        let dec: ArrayRef = Arc::new(Decimal128Array::from(vec![Some(150), None, Some(-25), Some(0)]).with_precision_and_scale(15, 2).unwrap());
        let ints: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None, Some(-7), Some(1)]));
        let floats: ArrayRef = Arc::new(Float64Array::from(vec![Some(-0.0), None, Some(f64::NAN), Some(2.5)]));
        // Group 1 sees only a NULL, group 3 nothing: empty buffers beside full ones.
        let gids = [0, 1, 2, 0];
        for func in [AggFunc::Sum, AggFunc::Count, AggFunc::Min, AggFunc::Max, AggFunc::Avg] {
            for arg in [&dec, &ints, &floats] {
                let state = partial_state(func, arg.clone(), &gids, 4);
                let t = arg.data_type().clone();
                let read = new_accumulator(func, std::slice::from_ref(&t)).unwrap().evaluate_state(&state).unwrap();
                let merged = crate::udf::evaluate_by_merging(new_accumulator(func, &[t]).unwrap().as_mut(), &state).unwrap();
                assert_eq!(read.to_data(), merged.to_data(), "{func:?} over {}", arg.data_type());
            }
        }
        // -0.0 alone sums to 0.0 once merged, as the interpreter's final sum gives it.
        let state = partial_state(AggFunc::Sum, floats.clone(), &[0, 1, 2, 3], 4);
        let read = new_accumulator(AggFunc::Sum, &[DataType::Float64]).unwrap().evaluate_state(&state).unwrap();
        assert!(read.as_primitive::<Float64Type>().value(0).is_sign_positive());
        // A NULL sum in a non-empty decimal buffer is an overflow, read or merged.
        let overflowed: Vec<ArrayRef> = vec![
            Arc::new(Decimal128Array::from(vec![None::<i128>]).with_precision_and_scale(25, 2).unwrap()),
            Arc::new(BooleanArray::from(vec![false])),
        ];
        let err = new_accumulator(AggFunc::Sum, &[DataType::Decimal128(15, 2)]).unwrap().evaluate_state(&overflowed).unwrap_err();
        assert!(err.to_string().contains("NUMERIC_VALUE_OUT_OF_RANGE"), "{err}");
    }

    #[test]
    fn min_max_strings_and_floats() {
        let mut m = min_max::<true>(&DataType::Utf8).unwrap();
        m.resize(2);
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("b"), None, Some("a"), Some("z")]));
        m.update(&[0, 0, 0, 1], &[a]).unwrap();
        let out = m.evaluate().unwrap();
        assert_eq!(out.as_string::<i32>().iter().collect::<Vec<_>>(), vec![Some("a"), Some("z")]);
        let mut x = min_max::<false>(&DataType::Float64).unwrap();
        x.resize(1);
        let f: ArrayRef = Arc::new(Float64Array::from(vec![1.0, f64::NAN, 3.0]));
        x.update(&[0, 0, 0], &[f]).unwrap();
        assert!(x.evaluate().unwrap().as_primitive::<Float64Type>().value(0).is_nan());
    }
}
