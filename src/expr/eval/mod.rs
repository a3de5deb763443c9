//! Vectorized expression evaluation over Arrow arrays with Spark's (ANSI) semantics.
//!
//! Every node evaluates to an array of the batch's length and of `Expr::data_type()`. Where
//! Spark evaluates a child only on some rows (CASE branches, the right side of AND/OR,
//! COALESCE), so do we, so that rows Spark never looks at cannot raise errors.

mod arithmetic;
mod cast;
mod decimal;
pub(crate) mod errors;
mod filter;
mod functions;
pub(crate) mod interval;
mod legacy;
mod project;
pub mod random;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, BooleanArray, StringArray, UInt32Array};
use arrow::compute::kernels::cmp;
use arrow::compute::kernels::comparison::{like as arrow_like, nlike as arrow_nlike};
use arrow::compute::{and_kleene, interleave, is_not_null, is_null, not, or_kleene, take};
use arrow::datatypes::{DataType, Field, Float64Type, Schema, SchemaRef};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use crate::error::{KilnError, Result};
use crate::expr::{Attribute, BinaryOp, Expr, ScalarFunc};
use crate::types::{is_string, ScalarValue};

pub(crate) use cast::try_cast;
pub(crate) use decimal::{bround_integral, half_even};
pub(crate) use functions::{round_integers, substring_sql};
pub use filter::filter;
pub use project::project;

/// Downcasts to a primitive array that fail with an error, never a panic: a value of a type
/// the planner did not promise is a bug to report, not a crash.
pub(crate) trait Primitive {
    /// The values as `PrimitiveArray<T>`, or an internal error naming both types.
    fn primitive<T: arrow::datatypes::ArrowPrimitiveType>(&self) -> Result<&arrow::array::PrimitiveArray<T>>;
}

impl<A: AsArray + Array + ?Sized> Primitive for A {
    fn primitive<T: arrow::datatypes::ArrowPrimitiveType>(&self) -> Result<&arrow::array::PrimitiveArray<T>> {
        self.as_primitive_opt::<T>().ok_or_else(|| KilnError::internal(format!("expected {} values, got {}", T::DATA_TYPE, self.data_type())))
    }
}

/// The Arrow schema of a list of attributes: field name = attribute name, with its type and
/// nullability.
pub fn schema_of(attrs: &[Attribute]) -> SchemaRef {
    Arc::new(Schema::new(attrs.iter().map(|a| Field::new(&a.name, a.data_type.clone(), a.nullable)).collect::<Vec<_>>()))
}

/// A batch with an explicit row count, so batches without columns keep theirs.
pub(crate) fn make_batch(schema: SchemaRef, columns: Vec<ArrayRef>, rows: usize) -> Result<RecordBatch> {
    Ok(RecordBatch::try_new_with_options(schema, columns, &RecordBatchOptions::new().with_row_count(Some(rows)))?)
}

/// Floats as Spark compares, orders and groups them (NormalizeFloatingNumbers, SQLOrderingUtil):
/// every NaN as the one positive NaN, the largest value in `total_cmp`'s order, and, with
/// `zeros`, -0.0 as 0.0. Other types are returned as they are.
pub(crate) fn normalize_floats(a: &ArrayRef, zeros: bool) -> Result<ArrayRef> {
    let norm = |v: f64| if v.is_nan() { f64::NAN } else if zeros { v + 0.0 } else { v };
    Ok(match a.data_type() {
        DataType::Float64 => Arc::new(a.primitive::<Float64Type>()?.unary::<_, Float64Type>(norm)),
        DataType::Float32 => Arc::new(a.primitive::<arrow::datatypes::Float32Type>()?.unary::<_, arrow::datatypes::Float32Type>(|v| norm(v as f64) as f32)),
        _ => a.clone(),
    })
}

/// `a` cast to `to` with Spark's (ANSI) casts.
pub(crate) fn cast_array(a: &ArrayRef, to: &DataType) -> Result<ArrayRef> {
    cast::cast(a, to)
}

/// Evaluates each expression over `batch`.
pub(crate) fn evaluate_all(exprs: &[Expr], batch: &RecordBatch, input: &[Attribute]) -> Result<Vec<ArrayRef>> {
    exprs.iter().map(|e| evaluate(e, batch, input)).collect()
}


/// Evaluates a resolved expression over `batch`, whose columns are the attributes `input`.
pub fn evaluate(expr: &Expr, batch: &RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    let rows = batch.num_rows();
    match expr {
        Expr::Attribute(a) => {
            let i = input
                .iter()
                .position(|c| c.id == a.id)
                .ok_or_else(|| KilnError::internal(format!("attribute {a} not in input")))?;
            batch.columns().get(i).cloned().ok_or_else(|| KilnError::internal(format!("batch lacks column {i} for {a}")))
        }
        Expr::Literal(v) => v.to_array(rows),
        Expr::ScalarSubqueryExec(s) => Ok(take(subquery_array(s)?.as_ref(), &UInt32Array::from(vec![0u32; rows]), None)?),
        Expr::Alias { child, .. } | Expr::Replaceable { replacement: child, .. } => evaluate(child, batch, input),
        Expr::Binary { op: op @ (BinaryOp::And | BinaryOp::Or), left, right } => {
            Ok(Arc::new(logic(*op, left, right, batch, input)?))
        }
        Expr::Binary { op, left, right } if op.is_comparison() => {
            let (l, r) = (evaluate(left, batch, input)?, evaluate(right, batch, input)?);
            Ok(Arc::new(compare(*op, &l, &r)?))
        }
        Expr::Binary { op, left, right } => {
            if let Some((date, days)) = interval_days(*op, left, right) {
                return date_plus_days(date, days, batch, input);
            }
            let (l, r) = (evaluate(left, batch, input)?, evaluate(right, batch, input)?);
            arithmetic::binary(*op, &l, &r, &expr.data_type()?)
        }
        Expr::Not(c) => Ok(Arc::new(not(&evaluate_predicate(c, batch, input)?)?)),
        Expr::Negative(c) => arithmetic::negate(&evaluate(c, batch, input)?),
        Expr::IsNull(c) => Ok(Arc::new(is_null(&evaluate(c, batch, input)?)?)),
        Expr::IsNotNull(c) => Ok(Arc::new(is_not_null(&evaluate(c, batch, input)?)?)),
        Expr::Cast { child, to, zone } => cast::cast_in(&evaluate(child, batch, input)?, to, zone.unwrap_or(crate::types::time_zone::Zone::UTC)),
        Expr::InList { child, list, negated } => Ok(Arc::new(in_list(child, list, *negated, batch, input)?)),
        Expr::InSet { child, values, negated } => {
            let list: Vec<Expr> = values.iter().cloned().map(Expr::Literal).collect();
            Ok(Arc::new(in_list(child, &list, *negated, batch, input)?))
        }
        Expr::ScalarSubquery { .. } | Expr::Exists { .. } | Expr::InSubquery { .. } | Expr::OuterReference(_) => {
            Err(KilnError::internal(format!("subquery expression {expr} reached the executor; the optimizer rewrites it into a join")))
        }
        Expr::Like { child, pattern, negated } => Ok(Arc::new(like(child, pattern, *negated, batch, input)?)),
        Expr::CaseWhen { branches, else_expr, .. } => case_when(branches, else_expr.as_deref(), &expr.data_type()?, batch, input),
        Expr::Function { func, args } => functions::call(*func, args, &expr.data_type()?, batch, input),
        Expr::ScalarUdf { udf, args } => udf.invoke(&evaluate_all(args, batch, input)?, rows),
        Expr::Aggregate { .. } => Err(KilnError::internal(format!("aggregate {expr} evaluated as a scalar expression"))),
        Expr::WindowFunction { .. } | Expr::WindowExpression { .. } => {
            Err(KilnError::internal(format!("window function {expr} evaluated as a scalar expression")))
        }
        Expr::UnresolvedAttribute(_) | Expr::UnresolvedStar(_) | Expr::UnresolvedStarExcept { .. } | Expr::UnresolvedFunction { .. } | Expr::MultiAlias { .. } => {
            Err(KilnError::internal(format!("evaluating unresolved {expr}")))
        }
    }
}

/// Evaluates a boolean expression; NULL rows stay NULL (filters treat them as false).
pub fn evaluate_predicate(expr: &Expr, batch: &RecordBatch, input: &[Attribute]) -> Result<BooleanArray> {
    to_boolean(&evaluate(expr, batch, input)?)
}

/// The value of a planned scalar subquery, which the executor ran before the hosting stage.
pub(crate) fn subquery_array(s: &crate::expr::ScalarSubqueryExec) -> Result<&ArrayRef> {
    s.value.get().ok_or_else(|| KilnError::internal(format!("scalar-subquery#{} evaluated before it ran", s.id.0)))
}

/// `subquery_array` as a scalar (generated code reads it as a constant).
pub fn subquery_value(s: &crate::expr::ScalarSubqueryExec) -> Result<ScalarValue> {
    let a = subquery_array(s)?;
    if a.data_type() == &DataType::Null {
        return Ok(ScalarValue::Null(s.data_type.clone()));
    }
    ScalarValue::try_from_array(a.as_ref(), 0)
}

/// Evaluates a foldable expression (no column references) to a single value.
pub fn evaluate_scalar(expr: &Expr) -> Result<ScalarValue> {
    let options = RecordBatchOptions::new().with_row_count(Some(1));
    let batch = RecordBatch::try_new_with_options(Arc::new(Schema::empty()), vec![], &options)?;
    let a = evaluate(expr, &batch, &[])?;
    if a.len() != 1 {
        return Err(KilnError::internal(format!("scalar {expr} evaluated to {} rows", a.len())));
    }
    if a.data_type() == &DataType::Null {
        return Ok(ScalarValue::Null(DataType::Null));
    }
    ScalarValue::try_from_array(a.as_ref(), 0)
}

fn to_boolean(a: &ArrayRef) -> Result<BooleanArray> {
    match a.data_type() {
        DataType::Boolean => Ok(a.as_boolean().clone()),
        DataType::Null => Ok(BooleanArray::new_null(a.len())),
        other => Err(KilnError::internal(format!("expected a boolean, got {other}"))),
    }
}

/// Evaluates `expr` on the rows `rows` (ascending) of `batch` only.
fn evaluate_rows(expr: &Expr, batch: &RecordBatch, input: &[Attribute], rows: &[u32]) -> Result<ArrayRef> {
    if rows.len() == batch.num_rows() {
        return evaluate(expr, batch, input);
    }
    // Take only the columns the expression reads.
    let refs = expr.references();
    let indices = UInt32Array::from(rows.to_vec());
    let (mut fields, mut columns, mut attrs) = (vec![], vec![], vec![]);
    for (i, a) in input.iter().enumerate() {
        if refs.contains(&a.id) {
            let col = batch.columns().get(i).ok_or_else(|| KilnError::internal(format!("batch lacks column {i} for {a}")))?;
            columns.push(take(col.as_ref(), &indices, None)?);
            fields.push(batch.schema_ref().field(i).clone());
            attrs.push(a.clone());
        }
    }
    let options = RecordBatchOptions::new().with_row_count(Some(rows.len()));
    let sub = RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options)?;
    evaluate(expr, &sub, &attrs)
}

/// Builds a `len`-row array of type `dt` from arrays computed on row subsets: part k's j-th
/// value lands on row `rows[j]`; later parts overwrite earlier ones; uncovered rows are NULL.
fn scatter(len: usize, dt: &DataType, parts: Vec<(ArrayRef, Vec<u32>)>) -> Result<ArrayRef> {
    if let [(a, rows)] = parts.as_slice() {
        if rows.len() == len && a.len() == len {
            return cast::cast(a, dt);
        }
    }
    let mut arrays = Vec::with_capacity(parts.len() + 1);
    let mut indices = vec![(parts.len(), 0usize); len];
    for (k, (a, rows)) in parts.iter().enumerate() {
        if a.len() != rows.len() {
            return Err(KilnError::internal(format!("scatter part of {} values for {} rows", a.len(), rows.len())));
        }
        arrays.push(cast::cast(a, dt)?);
        for (j, &r) in rows.iter().enumerate() {
            *indices.get_mut(r as usize).ok_or_else(|| KilnError::internal("scatter row out of range"))? = (k, j);
        }
    }
    arrays.push(new_null_array(dt, 1));
    let refs: Vec<&dyn Array> = arrays.iter().map(|a| a.as_ref()).collect();
    Ok(interleave(&refs, &indices)?)
}

/// True when evaluating `expr` may raise an error on some values.
fn can_fail(expr: &Expr) -> bool {
    expr.exists(&|e| match e {
        Expr::Binary { op, .. } => op.is_arithmetic(),
        Expr::Negative(_) | Expr::Cast { .. } => true,
        Expr::Function { func, .. } => matches!(func, ScalarFunc::Abs | ScalarFunc::Round),
        _ => false,
    })
}

/// AND / OR with three-valued logic. As Spark, the right side is not evaluated on rows the left
/// side decides (false for AND, true for OR), so it cannot fail there.
fn logic(op: BinaryOp, left: &Expr, right: &Expr, batch: &RecordBatch, input: &[Attribute]) -> Result<BooleanArray> {
    let l = evaluate_predicate(left, batch, input)?;
    let decisive = op == BinaryOp::Or;
    let r = if can_fail(right) {
        let rows: Vec<u32> = (0..l.len()).filter(|&i| !(l.is_valid(i) && l.value(i) == decisive)).map(|i| i as u32).collect();
        if rows.is_empty() {
            return Ok(l);
        }
        let part = evaluate_rows(right, batch, input, &rows)?;
        to_boolean(&scatter(l.len(), &DataType::Boolean, vec![(part, rows)])?)?
    } else {
        evaluate_predicate(right, batch, input)?
    };
    Ok(if op == BinaryOp::And { and_kleene(&l, &r)? } else { or_kleene(&l, &r)? })
}

/// Makes two operands comparable by arrow's kernels with Spark's results: decimals rescaled
/// to a common scale, doubles normalized (-0.0 = 0.0; every NaN equal and above all numbers).
fn comparable(l: &ArrayRef, r: &ArrayRef) -> Result<(ArrayRef, ArrayRef)> {
    use DataType::*;
    Ok(match (l.data_type(), r.data_type()) {
        (Null, Null) => (new_null_array(&Boolean, l.len()), new_null_array(&Boolean, r.len())),
        (Null, t) => (new_null_array(t, l.len()), r.clone()),
        (t, Null) => (l.clone(), new_null_array(t, r.len())),
        (Decimal128(p1, s1), Decimal128(p2, s2)) if (p1, s1) != (p2, s2) => {
            let scale = *s1.max(s2);
            let int = (*p1 as i32 - *s1 as i32).max(*p2 as i32 - *s2 as i32);
            let common = if int + scale as i32 <= 38 {
                Decimal128((int + scale as i32) as u8, scale)
            } else {
                Decimal256(76, scale)
            };
            let options = arrow::compute::CastOptions { safe: false, ..Default::default() };
            (arrow::compute::cast_with_options(l, &common, &options)?, arrow::compute::cast_with_options(r, &common, &options)?)
        }
        (Float64, Float64) => (normalize_floats(l, true)?, normalize_floats(r, true)?),
        // Utf8View / LargeUtf8 columns against Utf8 values
        (a, b) if a != b && is_string(a) && is_string(b) => (cast::cast(l, &Utf8)?, cast::cast(r, &Utf8)?),
        _ => (l.clone(), r.clone()),
    })
}

/// `l op r` for a comparison operator (`<=>` treats NULLs as equal values).
fn compare(op: BinaryOp, l: &ArrayRef, r: &ArrayRef) -> Result<BooleanArray> {
    if matches!(l.data_type(), DataType::Struct(_) | DataType::List(_)) || matches!(r.data_type(), DataType::Struct(_) | DataType::List(_)) {
        return compare_nested(op, l, r);
    }
    let (l, r) = comparable(l, r)?;
    Ok(match op {
        BinaryOp::Eq => cmp::eq(&l, &r)?,
        BinaryOp::NotEq => cmp::neq(&l, &r)?,
        BinaryOp::Lt => cmp::lt(&l, &r)?,
        BinaryOp::LtEq => cmp::lt_eq(&l, &r)?,
        BinaryOp::Gt => cmp::gt(&l, &r)?,
        BinaryOp::GtEq => cmp::gt_eq(&l, &r)?,
        BinaryOp::EqNullSafe => cmp::not_distinct(&l, &r)?,
        other => return Err(KilnError::internal(format!("{} is not a comparison", other.symbol()))),
    })
}

/// Structs and arrays compare as Spark orders them: field by field (element by element), a
/// NULL inside before any value and equal to another NULL; a NULL value itself gives NULL
/// (`<=>`: equal only to NULL).
fn compare_nested(op: BinaryOp, l: &ArrayRef, r: &ArrayRef) -> Result<BooleanArray> {
    use arrow::row::{RowConverter, SortField};
    let t = if l.data_type() == &DataType::Null { r.data_type().clone() } else { l.data_type().clone() };
    let l = if l.data_type() == &DataType::Null { new_null_array(&t, l.len()) } else { l.clone() };
    let r = if r.data_type() == &DataType::Null { new_null_array(&t, r.len()) } else if r.data_type() != &t { cast::cast(r, &t)? } else { r.clone() };
    let conv = RowConverter::new(vec![SortField::new(t)])?;
    let (lr, rr) = (conv.convert_columns(std::slice::from_ref(&l))?, conv.convert_columns(std::slice::from_ref(&r))?);
    Ok((0..l.len())
        .map(|i| {
            let (ln, rn) = (l.is_null(i), r.is_null(i));
            if op == BinaryOp::EqNullSafe {
                return Some(if ln || rn { ln && rn } else { lr.row(i) == rr.row(i) });
            }
            if ln || rn {
                return None;
            }
            let ord = lr.row(i).cmp(&rr.row(i));
            Some(match op {
                BinaryOp::Eq => ord.is_eq(),
                BinaryOp::NotEq => ord.is_ne(),
                BinaryOp::Lt => ord.is_lt(),
                BinaryOp::LtEq => ord.is_le(),
                BinaryOp::Gt => ord.is_gt(),
                _ => ord.is_ge(),
            })
        })
        .collect())
}

/// `x IN (a, b, ...)` = `x = a OR x = b OR ...` in three-valued logic: NULL when nothing
/// matches and x or some item is NULL.
fn in_list(child: &Expr, list: &[Expr], negated: bool, batch: &RecordBatch, input: &[Attribute]) -> Result<BooleanArray> {
    let v = evaluate(child, batch, input)?;
    let mut acc: Option<BooleanArray> = None;
    for item in list {
        let eq = compare(BinaryOp::Eq, &v, &evaluate(item, batch, input)?)?;
        acc = Some(match acc {
            None => eq,
            Some(a) => or_kleene(&a, &eq)?,
        });
    }
    let result = acc.unwrap_or_else(|| BooleanArray::from(vec![false; batch.num_rows()]));
    Ok(if negated { not(&result)? } else { result })
}

/// `LIKE` with `%`, `_` and `\` escapes (arrow's kernel has Spark's semantics for valid patterns).
fn like(child: &Expr, pattern: &Expr, negated: bool, batch: &RecordBatch, input: &[Attribute]) -> Result<BooleanArray> {
    let v = cast::strings(&evaluate(child, batch, input)?)?;
    let result = match pattern {
        Expr::Literal(ScalarValue::Utf8(p)) => {
            check_like_pattern(p)?;
            let p = StringArray::new_scalar(p.as_str());
            if negated {
                arrow_nlike(&v, &p)?
            } else {
                arrow_like(&v, &p)?
            }
        }
        other => {
            let p = cast::strings(&evaluate(other, batch, input)?)?;
            for pat in p.iter().flatten() {
                check_like_pattern(pat)?;
            }
            if negated {
                arrow_nlike(&v, &p)?
            } else {
                arrow_like(&v, &p)?
            }
        }
    };
    Ok(result)
}

/// Spark rejects an escape that precedes anything but `_`, `%` or `\`, or ends the pattern.
fn check_like_pattern(pattern: &str) -> Result<()> {
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('_' | '%' | '\\') => {}
                Some(other) => {
                    return Err(KilnError::exec(format!(
                        "[INVALID_FORMAT.ESC_IN_THE_MIDDLE] The format is invalid: '{pattern}'. \
                         The escape character is not allowed to precede '{other}'."
                    )))
                }
                None => {
                    return Err(KilnError::exec(format!(
                        "[INVALID_FORMAT.ESC_AT_THE_END] The format is invalid: '{pattern}'. \
                         The escape character is not allowed to end with."
                    )))
                }
            }
        }
    }
    Ok(())
}

/// CASE WHEN: each condition is evaluated on the rows no earlier branch took, each value only
/// on the rows that select it (so `CASE WHEN x <> 0 THEN 1/x END` never divides by zero).
fn case_when(
    branches: &[(Expr, Expr)],
    else_expr: Option<&Expr>,
    dt: &DataType,
    batch: &RecordBatch,
    input: &[Attribute],
) -> Result<ArrayRef> {
    let n = batch.num_rows();
    let mut remaining: Vec<u32> = (0..n as u32).collect();
    let mut parts = vec![];
    for (cond, value) in branches {
        if remaining.is_empty() {
            break;
        }
        let c = to_boolean(&evaluate_rows(cond, batch, input, &remaining)?)?;
        let (mut hit, mut miss) = (vec![], vec![]);
        for (j, &row) in remaining.iter().enumerate() {
            if c.is_valid(j) && c.value(j) {
                hit.push(row);
            } else {
                miss.push(row);
            }
        }
        if !hit.is_empty() {
            parts.push((evaluate_rows(value, batch, input, &hit)?, hit));
        }
        remaining = miss;
    }
    if let Some(e) = else_expr {
        if !remaining.is_empty() {
            parts.push((evaluate_rows(e, batch, input, &remaining)?, remaining));
        }
    }
    scatter(n, dt, parts)
}

/// `date ± INTERVAL 'n' DAY`, if this is one: the date operand and the signed day count
/// (`INTERVAL '1' DAY - INTERVAL '3' DAY` is interval arithmetic).
fn interval_days<'a>(op: BinaryOp, left: &'a Expr, right: &'a Expr) -> Option<(&'a Expr, i64)> {
    let interval = |e: &Expr| e.data_type().is_ok_and(|t| crate::types::interval::is_interval(&t));
    if interval(left) && interval(right) {
        return None;
    }
    match (op, left, right) {
        (BinaryOp::Plus, date, Expr::Literal(ScalarValue::IntervalMicros(us, 0, 0)))
        | (BinaryOp::Plus, Expr::Literal(ScalarValue::IntervalMicros(us, 0, 0)), date) => Some((date, us / crate::types::timestamp::MICROS_PER_DAY)),
        (BinaryOp::Minus, date, Expr::Literal(ScalarValue::IntervalMicros(us, 0, 0))) => Some((date, -(us / crate::types::timestamp::MICROS_PER_DAY))),
        _ => None,
    }
}

fn date_plus_days(date: &Expr, days: i64, batch: &RecordBatch, input: &[Attribute]) -> Result<ArrayRef> {
    let d = cast::cast(&evaluate(date, batch, input)?, &DataType::Date32)?;
    let days = i32::try_from(days).map_err(|_| errors::arithmetic_overflow(&DataType::Int32, None))?;
    let out = d
        .primitive::<arrow::datatypes::Date32Type>()?
        .try_unary::<_, arrow::datatypes::Date32Type, _>(|v| v.checked_add(days).ok_or_else(|| errors::arithmetic_overflow(&DataType::Int32, None)))?;
    Ok(Arc::new(out))
}
