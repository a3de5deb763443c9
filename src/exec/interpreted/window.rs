//! The Window operator (Spark's `WindowExec`) over one partition whose rows arrive sorted by
//! the partition keys and the window's order: window partitions and peer groups are found with
//! the row format, then each window expression is computed over its frame.
//!
//! Aggregates keep a running state per frame as Spark's frames do: a frame whose start stays
//! put grows by the rows its end passes (running sums are one pass); a frame whose start moves
//! is recomputed (Spark's `SlidingWindowFunctionFrame`). The per-row states go through the
//! GROUP BY accumulators' merge and evaluate, so result types, decimal rounding and ANSI
//! overflow checks are those of `GROUP BY`.

use std::ops::Range;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Decimal128Array, Float64Array, Int32Array, Int64Array, UInt32Array};
use arrow::compute::{cast, interleave, take};
use arrow::datatypes::{DataType, Decimal128Type, Float64Type, Int64Type};
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, Rows, SortField};

use super::accumulators::{long_overflow, new_accumulator};
use super::{concat, evaluate_all, make_batch, schema_of};
use crate::error::{KilnError, Result};
use crate::expr::eval::evaluate;
use crate::expr::{AggFunc, Attribute, Expr, FrameBound, FrameType, SortOrder, WindowFrame, WindowFunc};
use crate::types::ScalarValue;

/// Computes `window_exprs` over one sorted partition: the input columns, then one per expression.
pub fn window(
    window_exprs: &[Expr],
    partition_by: &[Expr],
    order_by: &[SortOrder],
    input: &[Attribute],
    output: &[Attribute],
    batches: Vec<RecordBatch>,
) -> Result<Vec<RecordBatch>> {
    let batch = concat(input, &batches)?;
    let n = batch.num_rows();
    if n == 0 {
        return Ok(vec![]);
    }
    let parts = runs(&evaluate_all(partition_by, &batch, input)?, n, None)?;
    let order_keys: Vec<ArrayRef> = order_by.iter().map(|o| evaluate(&o.expr, &batch, input)).collect::<Result<_>>()?;
    let peers = runs(&order_keys, n, Some(&parts))?;
    let ctx = Ctx { batch: &batch, input, parts: &parts, peers: &peers, order_by, order_keys: &order_keys, n };
    let mut columns = batch.columns().to_vec();
    for e in window_exprs {
        let Expr::WindowExpression { function, spec, ignore_nulls } = e.unalias() else {
            return Err(KilnError::internal(format!("{e} in a Window operator")));
        };
        let frame = spec.frame.clone().unwrap_or(WindowFrame::running_rows());
        columns.push(ctx.compute(function, &frame, *ignore_nulls)?);
    }
    Ok(vec![make_batch(schema_of(output), columns, n)?])
}

/// Maximal runs of equal key rows (all rows one run without keys), each split at `within`'s
/// boundaries too.
fn runs(keys: &[ArrayRef], n: usize, within: Option<&[Range<usize>]>) -> Result<Vec<Range<usize>>> {
    let mut starts = vec![false; n];
    starts[0] = true;
    if let Some(parts) = within {
        for p in parts {
            starts[p.start] = true;
        }
    }
    if !keys.is_empty() {
        // -0.0 and 0.0 are one key, as are all NaNs (Spark normalizes window keys).
        let rows = crate::common::spill::normalized_key_rows(&mut None, keys)?;
        for (i, s) in starts.iter_mut().enumerate().skip(1) {
            if rows.row(i) != rows.row(i - 1) {
                *s = true;
            }
        }
    }
    let mut out = vec![];
    let mut start = 0;
    for i in 1..n {
        if starts[i] {
            out.push(start..i);
            start = i;
        }
    }
    out.push(start..n);
    Ok(out)
}

struct Ctx<'a> {
    batch: &'a RecordBatch,
    input: &'a [Attribute],
    parts: &'a [Range<usize>],
    peers: &'a [Range<usize>],
    order_by: &'a [SortOrder],
    order_keys: &'a [ArrayRef],
    n: usize,
}

/// An order key as numbers RANGE offsets can be added to, in ascending order of the frame.
enum RangeKeys {
    Int(Vec<Option<i128>>),
    Float(Vec<Option<f64>>),
}

impl Ctx<'_> {
    fn eval(&self, e: &Expr) -> Result<ArrayRef> {
        evaluate(e, self.batch, self.input)
    }

    /// The peer group of each row, as an index into `peers`.
    fn peer_of(&self) -> Vec<usize> {
        let mut out = vec![0; self.n];
        for (g, r) in self.peers.iter().enumerate() {
            out[r.clone()].iter_mut().for_each(|x| *x = g);
        }
        out
    }

    fn compute(&self, function: &Expr, frame: &WindowFrame, ignore_nulls: bool) -> Result<ArrayRef> {
        match function {
            Expr::WindowFunction { func, args } => self.window_function(*func, args, frame, ignore_nulls),
            Expr::Aggregate { func, args, distinct: false } => self.aggregate(*func, args, frame),
            other => Err(KilnError::unsupported(format!("{other} over a window"))),
        }
    }

    fn window_function(&self, func: WindowFunc, args: &[Expr], frame: &WindowFrame, ignore_nulls: bool) -> Result<ArrayRef> {
        let peer_of = self.peer_of();
        let per_row = |f: &dyn Fn(&Range<usize>, usize) -> i64| -> Vec<i64> {
            let mut out = vec![0; self.n];
            for p in self.parts {
                for i in p.clone() {
                    out[i] = f(p, i);
                }
            }
            out
        };
        let int32 = |v: Vec<i64>| -> ArrayRef { Arc::new(Int32Array::from_iter_values(v.into_iter().map(|x| x as i32))) };
        Ok(match func {
            WindowFunc::RowNumber => int32(per_row(&|p, i| (i - p.start + 1) as i64)),
            WindowFunc::Rank => int32(per_row(&|p, i| (self.peers[peer_of[i]].start - p.start + 1) as i64)),
            WindowFunc::DenseRank => int32(per_row(&|p, i| (peer_of[i] - peer_of[p.start] + 1) as i64)),
            WindowFunc::PercentRank => {
                let mut out = vec![0.0; self.n];
                for p in self.parts {
                    for i in p.clone() {
                        let rank = self.peers[peer_of[i]].start - p.start;
                        out[i] = if p.len() > 1 { rank as f64 / (p.len() - 1) as f64 } else { 0.0 };
                    }
                }
                Arc::new(Float64Array::from(out)) as ArrayRef
            }
            WindowFunc::CumeDist => {
                let mut out = vec![0.0; self.n];
                for p in self.parts {
                    for i in p.clone() {
                        out[i] = (self.peers[peer_of[i]].end - p.start) as f64 / p.len() as f64;
                    }
                }
                Arc::new(Float64Array::from(out)) as ArrayRef
            }
            WindowFunc::Ntile => {
                let buckets = match args.first() {
                    Some(Expr::Literal(ScalarValue::Int32(k))) if *k > 0 => *k as usize,
                    Some(Expr::Literal(ScalarValue::Int64(k))) if *k > 0 => *k as usize,
                    _ => {
                        return Err(KilnError::analysis(
                            "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
                            "Buckets expression of ntile must be a positive integer literal.",
                        ))
                    }
                };
                int32(per_row(&|p, i| {
                    let (rows, r) = (p.len(), i - p.start);
                    let (q, rem) = (rows / buckets, rows % buckets);
                    let big = rem * (q + 1);
                    (if q == 0 || r < big { r / (q + 1) } else { rem + (r - big) / q }) as i64 + 1
                }))
            }
            WindowFunc::Lag | WindowFunc::Lead => self.offset_function(args, ignore_nulls)?,
            WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => self.frame_value(func, args, frame, ignore_nulls)?,
        })
    }

    /// lag/lead: args are the value, the signed row offset (a literal) and the default.
    fn offset_function(&self, args: &[Expr], ignore_nulls: bool) -> Result<ArrayRef> {
        let [value, offset, default] = args else { return Err(KilnError::internal("lag/lead without its three arguments")) };
        let offset = match offset {
            Expr::Literal(ScalarValue::Int32(k)) => *k as i64,
            Expr::Literal(ScalarValue::Int64(k)) => *k,
            other => return Err(KilnError::internal(format!("lag/lead offset {other} is not an integer literal"))),
        };
        let values = self.eval(value)?;
        let default = self.eval(default)?;
        let default = if default.data_type() == values.data_type() { default } else { cast(&default, values.data_type())? };
        let mut picks: Vec<(usize, usize)> = Vec::with_capacity(self.n);
        for p in self.parts {
            if ignore_nulls && offset != 0 {
                let valid: Vec<usize> = p.clone().filter(|&i| values.is_valid(i)).collect();
                for i in p.clone() {
                    // The |offset|-th non-NULL row before (lag) or after (lead) this one.
                    let k = offset.unsigned_abs() as usize;
                    let target = if offset > 0 {
                        let after = valid.partition_point(|&v| v <= i);
                        valid.get(after + k - 1).copied()
                    } else {
                        let before = valid.partition_point(|&v| v < i);
                        before.checked_sub(k).map(|j| valid[j])
                    };
                    picks.push(target.map_or((1, i), |t| (0, t)));
                }
            } else {
                for i in p.clone() {
                    let t = i as i64 + offset;
                    picks.push(if t >= p.start as i64 && t < p.end as i64 { (0, t as usize) } else { (1, i) });
                }
            }
        }
        Ok(interleave(&[values.as_ref(), default.as_ref()], &picks)?)
    }

    /// first_value / last_value / nth_value: one row of the frame.
    fn frame_value(&self, func: WindowFunc, args: &[Expr], frame: &WindowFrame, ignore_nulls: bool) -> Result<ArrayRef> {
        let values = self.eval(args.first().ok_or_else(|| KilnError::internal("frame function without a value"))?)?;
        let nth = match (func, args.get(1)) {
            (WindowFunc::NthValue, Some(Expr::Literal(ScalarValue::Int32(k)))) if *k > 0 => *k as usize,
            (WindowFunc::NthValue, Some(Expr::Literal(ScalarValue::Int64(k)))) if *k > 0 => *k as usize,
            (WindowFunc::NthValue, _) => {
                return Err(KilnError::analysis(
                    "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
                    "The offset of nth_value must be a positive integer literal.",
                ))
            }
            _ => 1,
        };
        let bounds = self.frames(frame)?;
        let valid: Vec<usize> = (0..self.n).filter(|&i| values.is_valid(i)).collect();
        let mut idx: Vec<Option<u32>> = Vec::with_capacity(self.n);
        for &(lo, hi) in &bounds {
            let pick = if lo >= hi {
                None
            } else if !ignore_nulls {
                match func {
                    WindowFunc::LastValue => Some(hi - 1),
                    _ => Some(lo + nth - 1).filter(|&r| r < hi),
                }
            } else {
                let first = valid.partition_point(|&v| v < lo);
                let end = valid.partition_point(|&v| v < hi);
                match func {
                    WindowFunc::LastValue => (end > first).then(|| valid[end - 1]),
                    _ => valid.get(first + nth - 1).copied().filter(|&r| r < hi),
                }
            };
            idx.push(pick.map(|r| r as u32));
        }
        Ok(take(values.as_ref(), &UInt32Array::from(idx), None)?)
    }

    /// Each row's frame as [lo, hi) row indices.
    fn frames(&self, frame: &WindowFrame) -> Result<Vec<(usize, usize)>> {
        let keys = match frame.frame_type {
            FrameType::Range if [&frame.lower, &frame.upper].iter().any(|b| matches!(b, FrameBound::Offset(_))) => Some(self.range_keys()?),
            _ => None,
        };
        let peer_of = self.peer_of();
        let mut out = Vec::with_capacity(self.n);
        for p in self.parts {
            for i in p.clone() {
                let lo = self.bound(&frame.lower, frame.frame_type, p, i, &peer_of, keys.as_ref(), true)?;
                let hi = self.bound(&frame.upper, frame.frame_type, p, i, &peer_of, keys.as_ref(), false)?;
                out.push((lo, hi.max(lo)));
            }
        }
        Ok(out)
    }

    /// One end of row i's frame: the first row in it (`lower`) or the first row after it.
    #[allow(clippy::too_many_arguments)]
    fn bound(&self, b: &FrameBound, t: FrameType, p: &Range<usize>, i: usize, peer_of: &[usize], keys: Option<&RangeKeys>, lower: bool) -> Result<usize> {
        let clamp = |x: i128| x.clamp(p.start as i128, p.end as i128) as usize;
        Ok(match (b, t) {
            (FrameBound::UnboundedPreceding, _) => p.start,
            (FrameBound::UnboundedFollowing, _) => p.end,
            (FrameBound::CurrentRow, FrameType::Rows) => if lower { i } else { i + 1 },
            (FrameBound::CurrentRow, FrameType::Range) => {
                let g = &self.peers[peer_of[i]];
                if lower { g.start } else { g.end }
            }
            (FrameBound::Offset(v), FrameType::Rows) => {
                let k = scalar_i128(v).ok_or_else(|| KilnError::internal(format!("ROWS offset {v:?}")))?;
                clamp(i as i128 + k + if lower { 0 } else { 1 })
            }
            (FrameBound::Offset(v), FrameType::Range) => {
                let keys = keys.ok_or_else(|| KilnError::internal("RANGE offset without order keys"))?;
                self.range_bound(keys, v, p, i, peer_of, lower)?
            }
        })
    }

    /// The single order key as numbers, negated for a descending order (so `n PRECEDING` is
    /// always `key - n`).
    fn range_keys(&self) -> Result<RangeKeys> {
        let ([key], [o]) = (self.order_keys, self.order_by) else {
            return Err(KilnError::internal("a RANGE frame with offsets over other than one order key"));
        };
        let sign = if o.ascending { 1 } else { -1 };
        Ok(match key.data_type() {
            DataType::Float32 | DataType::Float64 => {
                let a = cast(key, &DataType::Float64)?;
                let a = a.as_primitive::<Float64Type>();
                RangeKeys::Float(a.iter().map(|v| v.map(|v| v * sign as f64)).collect())
            }
            DataType::Decimal128(..) => {
                let a = key.as_primitive::<Decimal128Type>();
                RangeKeys::Int(a.iter().map(|v| v.map(|v| v * sign)).collect())
            }
            DataType::Date32 => {
                let a = cast(key, &DataType::Int32)?;
                RangeKeys::Int(a.as_primitive::<arrow::datatypes::Int32Type>().iter().map(|v| v.map(|v| v as i128 * sign)).collect())
            }
            _ => {
                let a = cast(key, &DataType::Int64)?;
                RangeKeys::Int(a.as_primitive::<Int64Type>().iter().map(|v| v.map(|v| v as i128 * sign)).collect())
            }
        })
    }

    fn range_bound(&self, keys: &RangeKeys, offset: &ScalarValue, p: &Range<usize>, i: usize, peer_of: &[usize], lower: bool) -> Result<usize> {
        // NULL order values are one peer group, outside every other row's value range.
        let is_null = |r: usize| match keys {
            RangeKeys::Int(k) => k[r].is_none(),
            RangeKeys::Float(k) => k[r].is_none(),
        };
        if is_null(i) {
            let g = &self.peers[peer_of[i]];
            return Ok(if lower { g.start } else { g.end });
        }
        let (nn_start, nn_end) = {
            let mut s = p.start;
            while s < p.end && is_null(s) {
                s += 1;
            }
            let mut e = p.end;
            while e > s && is_null(e - 1) {
                e -= 1;
            }
            (s, e)
        };
        let rows: Vec<usize> = (nn_start..nn_end).collect();
        let pos = match keys {
            RangeKeys::Int(k) => {
                let scale = match self.order_keys.first().map(|a| a.data_type().clone()) {
                    Some(DataType::Decimal128(_, s)) => s,
                    _ => 0,
                };
                let off = scaled_offset(offset, scale)?;
                match off {
                    Offset::Int(off) => {
                        let target = k[i].unwrap_or_default().saturating_add(off);
                        if lower {
                            rows.partition_point(|&r| k[r].unwrap_or_default() < target)
                        } else {
                            rows.partition_point(|&r| k[r].unwrap_or_default() <= target)
                        }
                    }
                    Offset::Float(off) => {
                        let div = 10f64.powi(scale as i32);
                        let target = k[i].unwrap_or_default() as f64 / div + off;
                        if lower {
                            rows.partition_point(|&r| (k[r].unwrap_or_default() as f64 / div) < target)
                        } else {
                            rows.partition_point(|&r| (k[r].unwrap_or_default() as f64 / div) <= target)
                        }
                    }
                }
            }
            RangeKeys::Float(k) => {
                let off = match scaled_offset(offset, 0)? {
                    Offset::Int(v) => v as f64,
                    Offset::Float(v) => v,
                };
                let target = k[i].unwrap_or_default() + off;
                let cmp = |r: usize| k[r].unwrap_or_default().total_cmp(&target);
                if lower {
                    rows.partition_point(|&r| cmp(r).is_lt())
                } else {
                    rows.partition_point(|&r| cmp(r).is_le())
                }
            }
        };
        Ok(nn_start + pos)
    }

    /// An aggregate over each row's frame.
    fn aggregate(&self, func: AggFunc, args: &[Expr], frame: &WindowFrame) -> Result<ArrayRef> {
        let bounds = self.frames(frame)?;
        let arg = match args.first() {
            Some(a) => self.eval(a)?,
            None => return Err(KilnError::internal(format!("{} over a window without an argument", func.name()))),
        };
        let arg_type = arg.data_type().clone();
        let state: Vec<ArrayRef> = match func {
            AggFunc::Count => {
                let counted: Vec<ArrayRef> = args.iter().map(|a| self.eval(a)).collect::<Result<_>>()?;
                let valid = |r: usize| counted.iter().all(|c| c.is_valid(r));
                let out = running(&bounds, 0i64, |acc, r| {
                    *acc += i64::from(valid(r));
                    Ok(())
                }, |acc| *acc)?;
                vec![Arc::new(Int64Array::from(out))]
            }
            AggFunc::Min | AggFunc::Max => return self.min_max(func == AggFunc::Min, &arg, &bounds),
            // Intervals: each frame through the GROUP BY accumulator (exact, overflow checked).
            AggFunc::Sum | AggFunc::Avg if crate::types::interval::is_interval(&arg_type) => return self.frame_by_frame(func, args, &bounds),
            AggFunc::Sum | AggFunc::Avg => match &arg_type {
                DataType::Decimal128(_, s) => {
                    let a = arg.as_primitive::<Decimal128Type>();
                    let out = running(&bounds, (0i128, 0i64), |(sum, count), r| {
                        if a.is_valid(r) {
                            *sum = sum.checked_add(a.value(r)).ok_or_else(|| {
                                KilnError::exec("[NUMERIC_VALUE_OUT_OF_RANGE] a window sum exceeded 38 digits. SQLSTATE: 22003")
                            })?;
                            *count += 1;
                        }
                        Ok(())
                    }, |s| *s)?;
                    let sum_type = crate::expr::aggregate_result_type(AggFunc::Sum, &arg_type);
                    let sums = Decimal128Array::from(out.iter().map(|(v, _)| *v).collect::<Vec<_>>()).with_data_type(match sum_type {
                        DataType::Decimal128(p, _) => DataType::Decimal128(p, *s),
                        t => t,
                    });
                    if func == AggFunc::Sum {
                        let empty: BooleanArray = out.iter().map(|(_, c)| Some(*c == 0)).collect();
                        vec![Arc::new(sums), Arc::new(empty)]
                    } else {
                        vec![Arc::new(sums), Arc::new(Int64Array::from(out.iter().map(|(_, c)| *c).collect::<Vec<_>>()))]
                    }
                }
                // Doubles, and (Spark's Average keeps a double sum) any non-decimal average.
                t if matches!(t, DataType::Float32 | DataType::Float64) || func == AggFunc::Avg => {
                    let a = cast(&arg, &DataType::Float64)?;
                    let a = a.as_primitive::<Float64Type>();
                    let out = running(&bounds, (0f64, 0i64), |(sum, count), r| {
                        if a.is_valid(r) {
                            *sum += a.value(r);
                            *count += 1;
                        }
                        Ok(())
                    }, |s| *s)?;
                    sum_count_state(func, out.iter().map(|(s, c)| (*s, *c)), |v| Arc::new(Float64Array::from(v)) as ArrayRef)
                }
                _ => {
                    let out = running_integral_sum(&bounds, &arg, |sum, v| sum.checked_add(v).ok_or_else(long_overflow))?;
                    sum_count_state(func, out.into_iter(), |v| Arc::new(Int64Array::from(v)) as ArrayRef)
                }
            },
            // Legacy mode's sum of integers: a running sum that wraps, in sum's one-column state.
            AggFunc::Builtin(b) if b.kind == crate::expr::AggKind::LegacySum && crate::types::is_integral(&arg_type) => {
                let out = running_integral_sum(&bounds, &arg, |sum, v| Ok(sum.wrapping_add(v)))?;
                sum_count_state(AggFunc::Sum, out.into_iter(), |v| Arc::new(Int64Array::from(v)) as ArrayRef)
            }
            // Each frame a group of its own, through the GROUP BY accumulator.
            AggFunc::Udaf(_) | AggFunc::Builtin(_) => return self.frame_by_frame(func, args, &bounds),
        };
        // The GROUP BY accumulator finishes each row's state: result type, rounding, overflow.
        let mut acc = new_accumulator(func, std::slice::from_ref(&arg_type))?;
        acc.resize(self.n);
        let gids: Vec<u32> = (0..self.n as u32).collect();
        acc.merge(&gids, &state)?;
        acc.evaluate()
    }

    /// Any other aggregate: each row's frame fed to its own group of the GROUP BY accumulator.
    fn frame_by_frame(&self, func: AggFunc, args: &[Expr], bounds: &[(usize, usize)]) -> Result<ArrayRef> {
        const MAX_FRAME_ROWS: usize = 50_000_000;
        let total: usize = bounds.iter().map(|(s, e)| e.saturating_sub(*s)).sum();
        if total > MAX_FRAME_ROWS {
            return Err(KilnError::unsupported(format!("{} over window frames of {total} rows in all (at most {MAX_FRAME_ROWS})", func.name())));
        }
        let mut gids = Vec::with_capacity(total);
        let mut rows = Vec::with_capacity(total);
        for (g, (s, e)) in bounds.iter().enumerate() {
            for r in *s..*e {
                gids.push(g as u32);
                rows.push(r as u32);
            }
        }
        let idx = UInt32Array::from(rows);
        let values: Vec<ArrayRef> = args.iter().map(|a| Ok(take(self.eval(a)?.as_ref(), &idx, None)?)).collect::<Result<_>>()?;
        let types: Vec<DataType> = values.iter().map(|v| v.data_type().clone()).collect();
        let mut acc = new_accumulator(func, &types)?;
        acc.resize(self.n);
        acc.update(&gids, &values)?;
        acc.evaluate()
    }

    /// min/max: the index of the smallest (largest) non-NULL value of each frame, compared in
    /// the row format (NaN largest, as Spark).
    fn min_max(&self, min: bool, arg: &ArrayRef, bounds: &[(usize, usize)]) -> Result<ArrayRef> {
        let rows: Rows = RowConverter::new(vec![SortField::new(arg.data_type().clone())])?.convert_columns(std::slice::from_ref(arg))?;
        let out = running(bounds, None::<usize>, |best, r| {
            if arg.is_valid(r) {
                let better = match *best {
                    None => true,
                    Some(b) => if min { rows.row(r) < rows.row(b) } else { rows.row(r) > rows.row(b) },
                };
                if better {
                    *best = Some(r);
                }
            }
            Ok(())
        }, |b| *b)?;
        let idx: UInt32Array = out.into_iter().map(|b| b.map(|b| b as u32)).collect();
        Ok(take(arg.as_ref(), &idx, None)?)
    }
}

/// Running (sum, count) of an integral column's non-NULL values over `bounds`, as bigints
/// added by `add` (ANSI's checked addition, or legacy mode's wrapping one).
fn running_integral_sum(bounds: &[(usize, usize)], arg: &ArrayRef, add: impl Fn(i64, i64) -> Result<i64>) -> Result<Vec<(i64, i64)>> {
    let a = cast(arg, &DataType::Int64)?;
    let a = a.as_primitive::<Int64Type>();
    running(bounds, (0i64, 0i64), |(sum, count), r| {
        if a.is_valid(r) {
            *sum = add(*sum, a.value(r))?;
            *count += 1;
        }
        Ok(())
    }, |s| *s)
}

/// Spark's buffers of sum (`[sum]`, NULL when no value) and avg (`[sum, count]`).
fn sum_count_state<T: Copy>(func: AggFunc, out: impl Iterator<Item = (T, i64)>, build: impl Fn(Vec<Option<T>>) -> ArrayRef) -> Vec<ArrayRef> {
    let (sums, counts): (Vec<Option<T>>, Vec<i64>) = out.map(|(s, c)| ((c > 0).then_some(s), c)).unzip();
    match func {
        AggFunc::Sum => vec![build(sums)],
        _ => vec![build(sums), Arc::new(Int64Array::from(counts))],
    }
}

/// Runs a frame state over every row's frame: a frame starting where the last one started
/// adds the rows its end passed; one starting elsewhere starts over.
fn running<S: Clone, T>(
    bounds: &[(usize, usize)],
    init: S,
    mut add: impl FnMut(&mut S, usize) -> Result<()>,
    value: impl Fn(&S) -> T,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(bounds.len());
    let mut state = init.clone();
    let (mut cur_lo, mut cur_hi) = (usize::MAX, 0);
    for &(lo, hi) in bounds {
        if lo != cur_lo || hi < cur_hi {
            state = init.clone();
            cur_lo = lo;
            cur_hi = lo;
        }
        for r in cur_hi..hi {
            add(&mut state, r)?;
        }
        cur_hi = cur_hi.max(hi);
        out.push(value(&state));
    }
    Ok(out)
}

enum Offset {
    Int(i128),
    Float(f64),
}

/// A RANGE offset in the units of an order key of scale `scale`.
fn scaled_offset(v: &ScalarValue, scale: i8) -> Result<Offset> {
    let mul = 10i128.pow(scale.max(0) as u32);
    Ok(match v {
        ScalarValue::Int32(k) => Offset::Int(*k as i128 * mul),
        ScalarValue::Int64(k) => Offset::Int(*k as i128 * mul),
        ScalarValue::IntervalMicros(us, 0, 0) => Offset::Int((*us / crate::types::timestamp::MICROS_PER_DAY) as i128),
        ScalarValue::Decimal(u, _, s) if *s <= scale => Offset::Int(u * 10i128.pow((scale - s) as u32)),
        ScalarValue::Decimal(u, _, s) => Offset::Float(*u as f64 / 10f64.powi(*s as i32)),
        ScalarValue::Float64(f) => Offset::Float(*f),
        other => return Err(KilnError::analysis("DATATYPE_MISMATCH.RANGE_FRAME_INVALID_TYPE", format!("invalid RANGE frame offset {other:?}"))),
    })
}

fn scalar_i128(v: &ScalarValue) -> Option<i128> {
    match v {
        ScalarValue::Int32(k) => Some(*k as i128),
        ScalarValue::Int64(k) => Some(*k as i128),
        _ => None,
    }
}
