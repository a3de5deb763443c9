//! `+ - * / %` and unary minus with Spark's ANSI semantics: integer overflow and division by
//! zero are errors, decimals are computed exactly and rounded HALF_UP to the result type.

use arrow::array::{new_null_array, Array, ArrayRef, Decimal128Array, PrimitiveArray};
use arrow::buffer::NullBuffer;
use arrow::compute::kernels::numeric;
use arrow::datatypes::{i256, ArrowPrimitiveType, DataType, Float32Type, Float64Type, Int32Type};
use std::sync::Arc;

use super::decimal::{divide, fit, format_i256, pow10_i128, rescale};
use super::errors::{arithmetic_overflow, decimal_out_of_range, divide_by_zero, from_arrow, remainder_by_zero};
use crate::error::{KilnError, Result};
use super::Primitive;
use crate::expr::BinaryOp;
use crate::types::format_decimal;

/// `l op r` for arithmetic `op`; `result` is the node's type from `Expr::data_type`.
pub(super) fn binary(op: BinaryOp, l: &ArrayRef, r: &ArrayRef, result: &DataType) -> Result<ArrayRef> {
    if l.len() != r.len() {
        return Err(KilnError::internal(format!("operand lengths differ: {} and {}", l.len(), r.len())));
    }
    if l.data_type() == &DataType::Null || r.data_type() == &DataType::Null {
        return Ok(new_null_array(result, l.len()));
    }
    if let Some(done) = super::interval::binary(op, l, r, result) {
        return done;
    }
    match (l.data_type(), r.data_type()) {
        (DataType::Decimal128(_, s1), DataType::Decimal128(_, s2)) if op == BinaryOp::IntDivide => {
            decimal_quotient(l.primitive()?, r.primitive()?, *s1, *s2).map(|a| Arc::new(a) as ArrayRef)
        }
        (DataType::Decimal128(_, _), DataType::Decimal128(_, _)) => {
            decimal(op, l.primitive()?, r.primitive()?, result).map(|a| Arc::new(a) as ArrayRef)
        }
        (DataType::Float64, DataType::Float64) | (DataType::Float32, DataType::Float32) => float(op, l, r),
        (a, b) if a == b && a.is_integer() => integer(op, l, r),
        (a, b) => Err(KilnError::internal(format!("arithmetic {} on {a} and {b}", op.symbol()))),
    }
}

/// Spark's IntegralDivide of decimals: the exact quotient truncated toward zero, a bigint
/// (a zero divisor is DIVIDE_BY_ZERO, a quotient past a bigint ARITHMETIC_OVERFLOW).
fn decimal_quotient(l: &Decimal128Array, r: &Decimal128Array, s1: i8, s2: i8) -> Result<arrow::array::Int64Array> {
    let mut out = Vec::with_capacity(l.len());
    for i in 0..l.len() {
        if l.is_null(i) || r.is_null(i) {
            out.push(None);
            continue;
        }
        // a / 10^s1 over b / 10^s2 is (a * 10^s2) / (b * 10^s1).
        let (a, b) = (i256::from_i128(l.value(i)), i256::from_i128(r.value(i)));
        if b == i256::ZERO {
            return Err(divide_by_zero());
        }
        let ten = |s: i8| i256::from_i128(10).wrapping_pow(s.max(0) as u32);
        let q = (a.wrapping_mul(ten(s2))).wrapping_div(b.wrapping_mul(ten(s1)));
        out.push(Some(q.to_i128().and_then(|q| i64::try_from(q).ok()).ok_or_else(|| arithmetic_overflow(&DataType::Int64, Some("try_divide")))?));
    }
    Ok(arrow::array::Int64Array::from(out))
}

/// `-x`; integer overflow (`-MIN`) is an error.
pub(super) fn negate(a: &ArrayRef) -> Result<ArrayRef> {
    if let Some(done) = super::interval::negate(a) {
        return done;
    }
    match a.data_type() {
        DataType::Null => Ok(a.clone()),
        dt => numeric::neg(a).map_err(|e| from_arrow(e, dt, None)),
    }
}

fn integer(op: BinaryOp, l: &ArrayRef, r: &ArrayRef) -> Result<ArrayRef> {
    // arrow's checked kernels error on overflow and on a valid zero divisor, as Spark's ANSI mode.
    let (res, try_fn) = match op {
        BinaryOp::Plus => (numeric::add(l, r), "try_add"),
        BinaryOp::Minus => (numeric::sub(l, r), "try_subtract"),
        BinaryOp::Multiply => (numeric::mul(l, r), "try_multiply"),
        // Truncates toward zero as Java's `/`; a zero divisor is an error.
        BinaryOp::IntDivide => (numeric::div(l, r), "try_divide"),
        // MIN % -1 is 0 in arrow as in Java.
        BinaryOp::Modulo => (numeric::rem(l, r), "try_mod"),
        _ => return Err(KilnError::internal(format!("integer operands for {}", op.symbol()))),
    };
    res.map_err(|e| match (e, l.data_type()) {
        (arrow::error::ArrowError::ArithmeticOverflow(_), DataType::Int8 | DataType::Int16) => narrow_overflow(op, l, r, try_fn),
        (arrow::error::ArrowError::DivideByZero, _) if op == BinaryOp::Modulo => remainder_by_zero(),
        (e, dt) => from_arrow(e, dt, Some(try_fn)),
    })
}

/// Spark's error for tinyint and smallint `+ - *`, naming the first row whose exact result
/// leaves the type: BINARY_ARITHMETIC_OVERFLOW (its values print as smallints, as Spark's do).
fn narrow_overflow(op: BinaryOp, l: &ArrayRef, r: &ArrayRef, try_fn: &str) -> KilnError {
    let wide = |a: &ArrayRef| -> Result<PrimitiveArray<Int32Type>> { Ok(arrow::compute::cast(a, &DataType::Int32)?.primitive::<Int32Type>()?.clone()) };
    let (Ok(lw), Ok(rw)) = (wide(l), wide(r)) else {
        return arithmetic_overflow(l.data_type(), Some(try_fn));
    };
    let (min, max) = if l.data_type() == &DataType::Int8 { (i8::MIN as i32, i8::MAX as i32) } else { (i16::MIN as i32, i16::MAX as i32) };
    let exact = |a: i32, b: i32| match op {
        BinaryOp::Plus => a + b,
        BinaryOp::Minus => a - b,
        _ => a * b,
    };
    let row = (0..lw.len()).find(|&i| lw.is_valid(i) && rw.is_valid(i) && !(min..=max).contains(&exact(lw.value(i), rw.value(i))));
    match row {
        Some(i) => KilnError::exec(format!(
            "[BINARY_ARITHMETIC_OVERFLOW] {}S {} {}S caused overflow. Use `{try_fn}` to ignore overflow problem and return NULL.",
            lw.value(i),
            op.symbol(),
            rw.value(i)
        )),
        None => arithmetic_overflow(l.data_type(), Some(try_fn)),
    }
}

fn float(op: BinaryOp, l: &ArrayRef, r: &ArrayRef) -> Result<ArrayRef> {
    let res = match op {
        BinaryOp::Plus => numeric::add(l, r),
        BinaryOp::Minus => numeric::sub(l, r),
        BinaryOp::Multiply => numeric::mul(l, r),
        // Spark's ANSI mode rejects a zero divisor even for doubles (arrow would give Inf/NaN).
        BinaryOp::Divide | BinaryOp::Modulo => {
            let zero = match r.data_type() {
                DataType::Float32 => {
                    let rp = r.primitive::<Float32Type>()?;
                    (0..rp.len()).any(|i| rp.value(i) == 0.0 && rp.is_valid(i) && l.is_valid(i))
                }
                _ => {
                    let rp = r.primitive::<Float64Type>()?;
                    (0..rp.len()).any(|i| rp.value(i) == 0.0 && rp.is_valid(i) && l.is_valid(i))
                }
            };
            if zero {
                return Err(if op == BinaryOp::Modulo { remainder_by_zero() } else { divide_by_zero() });
            }
            if op == BinaryOp::Divide {
                numeric::div(l, r)
            } else {
                numeric::rem(l, r)
            }
        }
        _ => return Err(KilnError::internal(format!("double operands for {}", op.symbol()))),
    };
    Ok(res?)
}

/// Applies a fallible `f` to the rows where both inputs are valid; NULL elsewhere.
pub(super) fn try_binary<A, B, O>(
    l: &PrimitiveArray<A>,
    r: &PrimitiveArray<B>,
    f: impl Fn(A::Native, B::Native) -> Result<O::Native>,
) -> Result<PrimitiveArray<O>>
where
    A: ArrowPrimitiveType,
    B: ArrowPrimitiveType,
    O: ArrowPrimitiveType,
{
    if l.len() != r.len() {
        return Err(KilnError::internal(format!("operand lengths differ: {} and {}", l.len(), r.len())));
    }
    let nulls = NullBuffer::union(l.nulls(), r.nulls());
    let mut out = Vec::with_capacity(l.len());
    for i in 0..l.len() {
        let valid = nulls.as_ref().is_none_or(|n| n.is_valid(i));
        out.push(if valid { f(l.value(i), r.value(i))? } else { O::Native::default() });
    }
    Ok(PrimitiveArray::new(out.into(), nulls))
}

/// Decimal arithmetic: the exact result, rounded HALF_UP to the result scale, must fit the
/// result precision ([NUMERIC_VALUE_OUT_OF_RANGE] otherwise).
fn decimal(op: BinaryOp, l: &Decimal128Array, r: &Decimal128Array, result: &DataType) -> Result<Decimal128Array> {
    let (DataType::Decimal128(_, s1), DataType::Decimal128(_, s2), DataType::Decimal128(rp, rs)) =
        (l.data_type(), r.data_type(), result)
    else {
        return Err(KilnError::internal(format!("decimal {} with result type {result}", op.symbol())));
    };
    let (s1, s2, rp, rs) = (*s1 as i32, *s2 as i32, *rp, *rs);
    // Rounds an exact value at scale `scale` to the result type.
    let finish = |v: i256, scale: i32| -> Result<i128> {
        let rounded = rescale(v, scale, rs as i32);
        match rounded.and_then(|x| fit(x, rp)) {
            Some(x) => Ok(x),
            None => Err(decimal_out_of_range(&format_i256(rounded.unwrap_or(v), if rounded.is_some() { rs } else { scale as i8 }), rp, rs)),
        }
    };
    let wide = i256::from_i128;
    let common = s1.max(s2);
    // Upscaling a <=38-digit value by <=38 digits fits in i256, as do sums and products of such values.
    let up = |v: i128, from: i32| rescale(wide(v), from, common).ok_or_else(|| KilnError::internal("decimal rescale overflow"));
    // Fast path in i128 when no rounding is needed; anything else takes the exact i256 route.
    let limit = pow10_i128(rp as u32).unwrap_or(i128::MAX);
    let fits = |v: i128| (v.unsigned_abs() < limit.unsigned_abs()).then_some(v);
    let (m1, m2) = (pow10_i128((common - s1) as u32), pow10_i128((common - s2) as u32));
    let up128 = |a: i128, b: i128| Some((a.checked_mul(m1?)?, b.checked_mul(m2?)?));
    let out: Decimal128Array = match op {
        BinaryOp::Plus => try_binary(l, r, |a, b| {
            match up128(a, b).filter(|_| common == rs as i32).and_then(|(x, y)| x.checked_add(y)).and_then(fits) {
                Some(v) => Ok(v),
                None => finish(up(a, s1)?.wrapping_add(up(b, s2)?), common),
            }
        })?,
        BinaryOp::Minus => try_binary(l, r, |a, b| {
            match up128(a, b).filter(|_| common == rs as i32).and_then(|(x, y)| x.checked_sub(y)).and_then(fits) {
                Some(v) => Ok(v),
                None => finish(up(a, s1)?.wrapping_sub(up(b, s2)?), common),
            }
        })?,
        BinaryOp::Multiply => try_binary(l, r, |a, b| {
            match a.checked_mul(b).filter(|_| s1 + s2 == rs as i32).and_then(fits) {
                Some(v) => Ok(v),
                None => finish(wide(a).wrapping_mul(wide(b)), s1 + s2),
            }
        })?,
        BinaryOp::Divide => try_binary(l, r, |a, b| {
            if b == 0 {
                return Err(divide_by_zero());
            }
            match divide(a, s1 as i8, b, s2 as i8, rs).and_then(|q| fit(q, rp)) {
                Some(q) => Ok(q),
                None => Err(decimal_out_of_range(
                    &format!("{} / {}", format_decimal(a, s1 as i8), format_decimal(b, s2 as i8)),
                    rp,
                    rs,
                )),
            }
        })?,
        BinaryOp::Modulo => try_binary(l, r, |a, b| {
            if b == 0 {
                return Err(remainder_by_zero());
            }
            // Java's BigDecimal.remainder: the sign follows the dividend, as i256's.
            finish(up(a, s1)?.wrapping_rem(up(b, s2)?), common)
        })?,
        _ => return Err(KilnError::internal(format!("decimal operands for {}", op.symbol()))),
    };
    Ok(out.with_precision_and_scale(rp, rs)?)
}

