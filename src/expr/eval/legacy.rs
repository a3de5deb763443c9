//! `spark.sql.ansi.enabled=false`: an operation (`MoreFn::Legacy`'s argument) evaluated as
//! Spark's legacy mode. Where the ANSI evaluation succeeds the answers are the same; on a batch
//! where it fails, each row is evaluated again over the operation's operands, and a row that
//! fails with an error legacy mode does not raise gets the legacy value: integral arithmetic
//! and casts wrap as the JVM's, anything else is NULL.

use arrow::array::ArrayRef;
use arrow::datatypes::DataType;

use super::{evaluate, evaluate_rows, make_batch, scatter, schema_of};
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, BinaryOp, Builtin, Expr, MoreFn, ScalarFunc};
use crate::types::ScalarValue;

/// The error classes legacy mode answers with a value instead.
const LEGACY_VALUE_CLASSES: &[&str] = &[
    "ARITHMETIC_OVERFLOW",
    "BINARY_ARITHMETIC_OVERFLOW",
    "DIVIDE_BY_ZERO",
    "REMAINDER_BY_ZERO",
    "CAST_INVALID_INPUT",
    "CAST_OVERFLOW",
    "NUMERIC_VALUE_OUT_OF_RANGE",
    "INVALID_ARRAY_INDEX",
    "INVALID_ARRAY_INDEX_IN_ELEMENT_AT",
    "MAP_KEY_DOES_NOT_EXIST",
    "DATETIME_FIELD_OUT_OF_BOUNDS",
    "CANNOT_PARSE_TIMESTAMP",
    "INVALID_DATETIME_PATTERN",
];

fn legacy_class(e: &KilnError) -> bool {
    matches!(e, KilnError::Execution(_)) && e.error_class().and_then(|c| c.split('.').next()).is_some_and(|c| LEGACY_VALUE_CLASSES.contains(&c))
}

/// Evaluates `args[0]` in legacy mode.
pub(super) fn legacy(args: &[Expr], result: &DataType, batch: &arrow::record_batch::RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    let [e] = args else { return Err(KilnError::internal("legacy evaluation takes its operation")) };
    match evaluate(e, batch, input) {
        Err(err) if legacy_class(&err) => by_row(e, result, batch, input),
        other => other,
    }
}

/// The operation row by row over its operands (evaluated once; their own errors stand).
fn by_row(e: &Expr, result: &DataType, batch: &arrow::record_batch::RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    let mut operands: Vec<ArrayRef> = vec![];
    let mut attrs: Vec<Attribute> = vec![];
    // Literal operands stay (a function may want a literal there).
    let op = e.clone().map_children(|c| {
        if matches!(c, Expr::Literal(_)) {
            return Ok(c);
        }
        let a = evaluate(&c, batch, input)?;
        let attr = Attribute::new(format!("_{}", attrs.len()), c.data_type()?, true);
        operands.push(a);
        attrs.push(attr.clone());
        Ok::<_, KilnError>(attr.expr())
    })?;
    let rows = batch.num_rows();
    let over = make_batch(schema_of(&attrs), operands, rows)?;
    let mut parts = Vec::with_capacity(rows);
    for i in 0..rows as u32 {
        let v = match evaluate_rows(&op, &over, &attrs, &[i]) {
            Ok(v) => v,
            Err(err) if legacy_class(&err) => legacy_value(&op, &over, &attrs, i as usize, result)?,
            Err(err) => return Err(err),
        };
        parts.push((v, vec![i]));
    }
    scatter(rows, result, parts)
}

/// The legacy value of the operation `op` (over attributes bound in `over`) at `row`.
fn legacy_value(op: &Expr, over: &arrow::record_batch::RecordBatch, attrs: &[Attribute], row: usize, result: &DataType) -> Result<ArrayRef> {
    let value = |x: &Expr| -> Result<ScalarValue> {
        match x {
            Expr::Literal(v) => Ok(v.clone()),
            Expr::Attribute(a) => {
                let i = attrs.iter().position(|b| b.id == a.id).ok_or_else(|| KilnError::internal("legacy operand"))?;
                ScalarValue::try_from_array(over.column(i).as_ref(), row)
            }
            _ => Err(KilnError::internal("legacy operand")),
        }
    };
    let wrapped = match op {
        Expr::Binary { op: bin, left, right } if crate::types::is_integral(result) => {
            match (integral(&value(left)?), integral(&value(right)?)) {
                (Some(l), Some(r)) => match bin {
                    BinaryOp::Plus => Some(l.wrapping_add(r)),
                    BinaryOp::Minus => Some(l.wrapping_sub(r)),
                    BinaryOp::Multiply => Some(l.wrapping_mul(r)),
                    // A zero divisor is NULL; Long.MinValue div -1 wraps.
                    BinaryOp::IntDivide if r != 0 => Some(l.wrapping_div(r)),
                    _ => None,
                },
                _ => None,
            }
        }
        Expr::Negative(x) => integral(&value(x)?).map(i64::wrapping_neg),
        Expr::Function { func: ScalarFunc::Abs, args } => match args.as_slice() {
            [x] => integral(&value(x)?).map(i64::wrapping_abs),
            _ => None,
        },
        Expr::Cast { child, to, .. } if crate::types::is_integral(to) => cast_integral(&value(child)?, to),
        // round(127Y, -1) is 130 narrowed: -126.
        Expr::Function { func: ScalarFunc::Round, args } if crate::types::is_integral(result) => match args.as_slice() {
            [x, Expr::Literal(ScalarValue::Int32(d))] => integral(&value(x)?).map(|x| super::decimal::round_integral(x as i128, *d) as i64),
            _ => None,
        },
        // bround(127Y, -1) likewise: 130 narrowed.
        Expr::Function { func: ScalarFunc::Builtin(Builtin::More(MoreFn::Bround)), args } if crate::types::is_integral(result) => match args.as_slice() {
            [x, Expr::Literal(ScalarValue::Int32(d))] => integral(&value(x)?).map(|x| super::decimal::bround_integral(x as i128, *d) as i64),
            _ => None,
        },
        _ => None,
    };
    let v = match wrapped {
        Some(v) => truncated(v, result),
        None => ScalarValue::Null(result.clone()),
    };
    v.to_array(1)
}

fn integral(v: &ScalarValue) -> Option<i64> {
    match v {
        ScalarValue::Int8(x) => Some(*x as i64),
        ScalarValue::Int16(x) => Some(*x as i64),
        ScalarValue::Int32(x) => Some(*x as i64),
        ScalarValue::Int64(x) => Some(*x),
        _ => None,
    }
}

/// `v` narrowed to `t` as the JVM's `(byte)` / `(short)` / `(int)` conversions do.
fn truncated(v: i64, t: &DataType) -> ScalarValue {
    match t {
        DataType::Int8 => ScalarValue::Int8(v as i8),
        DataType::Int16 => ScalarValue::Int16(v as i16),
        DataType::Int32 => ScalarValue::Int32(v as i32),
        _ => ScalarValue::Int64(v),
    }
}

/// Spark's legacy cast to an integral type of a value the ANSI cast refused: a string is read
/// as a number with its fraction dropped (out of range: NULL); a float or double goes through
/// the JVM's saturating `(int)` (`(long)` for bigint) then narrows; an integer or a decimal's
/// integral part narrows.
fn cast_integral(v: &ScalarValue, to: &DataType) -> Option<i64> {
    let long = *to == DataType::Int64;
    match v {
        ScalarValue::Utf8(s) => {
            let s = s.trim_matches(|c: char| c <= ' ');
            let whole = s.split_once('.').map_or(s, |(w, f)| if f.bytes().all(|b| b.is_ascii_digit()) { w } else { "" });
            let n: i64 = match whole {
                "" | "+" | "-" => return None,
                w => w.parse().ok()?,
            };
            let fits = match to {
                DataType::Int8 => i8::try_from(n).is_ok(),
                DataType::Int16 => i16::try_from(n).is_ok(),
                DataType::Int32 => i32::try_from(n).is_ok(),
                _ => true,
            };
            fits.then_some(n)
        }
        ScalarValue::Float32(f) => Some(if long { *f as i64 } else { *f as i32 as i64 }),
        ScalarValue::Float64(f) => Some(if long { *f as i64 } else { *f as i32 as i64 }),
        ScalarValue::Decimal(unscaled, _, scale) => {
            let whole = unscaled / 10i128.pow((*scale).max(0) as u32);
            Some(whole as i64)
        }
        other => integral(other),
    }
}
