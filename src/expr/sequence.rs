//! `sequence(start, stop[, step])` as Spark's Sequence: integers by an integral step (1, or -1
//! when start > stop), dates and timestamps by an interval step (a day, or minus one).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, ListArray};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Int64Type};

use super::Expr;
use crate::error::{KilnError, Result};
use crate::types::interval::{is_day_time, is_year_month};
use crate::types::time_zone::Zone;
use crate::types::timestamp::MICROS_PER_DAY;

/// Spark's cap on an array's length (`ByteArrayMethods.MAX_ROUNDED_ARRAY_LENGTH`).
const MAX_LENGTH: usize = i32::MAX as usize - 15;

/// The arguments with Spark's casts: start and stop (and an integral step) to their wider type;
/// a date or timestamp sequence takes an interval step. `DATATYPE_MISMATCH.SEQUENCE_WRONG_INPUT_TYPES`
/// otherwise.
pub(crate) fn coerce(args: Vec<Expr>) -> Result<Vec<Expr>> {
    let types = args.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?;
    let shown = args.iter().map(crate::expr::sql_name).collect::<Vec<_>>().join(", ");
    let wrong = || {
        KilnError::analysis(
            "DATATYPE_MISMATCH.SEQUENCE_WRONG_INPUT_TYPES",
            format!(
                "Cannot resolve \"sequence({shown})\" due to data type mismatch: `sequence` uses the wrong parameter type. The parameter type must conform to:\n1. The start and stop expressions must resolve to the same type.\n2. If start and stop expressions resolve to the (\"TIMESTAMP\" or \"TIMESTAMP_NTZ\" or \"DATE\") type, then the step expression must resolve to the (\"INTERVAL\" or \"INTERVAL YEAR TO MONTH\" or \"INTERVAL DAY TO SECOND\") type.\n3. Otherwise, if start and stop expressions resolve to the \"INTEGRAL\" type, then the step expression must resolve to the same type."
            ),
        )
    };
    let null = |t: &DataType| *t == DataType::Null;
    let temporal = |t: &DataType| matches!(t, DataType::Date32 | DataType::Timestamp(..));
    let bounds = types.get(..2).ok_or_else(wrong)?;
    // The wider type of the non-NULL types: Some(None) when all are NULL, None when two do not meet.
    let wider = |ts: &[DataType]| -> Option<Option<DataType>> {
        ts.iter().filter(|t| !null(t)).try_fold(None::<DataType>, |acc, t| match acc {
            None => Some(Some(t.clone())),
            Some(a) => crate::types::wider_type(&a, t).map(Some),
        })
    };
    let cast = |e: Expr, t: &DataType| -> Result<Expr> {
        Ok(if &e.data_type()? == t { e } else { Expr::Cast { child: Box::new(e), to: t.clone(), zone: None } })
    };
    if bounds.iter().any(temporal) {
        let t = wider(bounds).flatten().filter(temporal).ok_or_else(wrong)?;
        let step_ok = types.get(2).is_none_or(|s| null(s) || is_year_month(s) || is_day_time(s) || *s == crate::types::interval::CALENDAR);
        if !step_ok || bounds.iter().any(|b| !null(b) && !temporal(b)) {
            return Err(wrong());
        }
        let mut it = args.into_iter();
        let (start, stop) = (it.next().ok_or_else(wrong)?, it.next().ok_or_else(wrong)?);
        let mut out = vec![cast(start, &t)?, cast(stop, &t)?];
        out.extend(it);
        return Ok(out);
    }
    if !types.iter().all(|t| null(t) || crate::types::is_integral(t)) {
        return Err(wrong());
    }
    let t = wider(&types).flatten().unwrap_or(DataType::Int32);
    args.into_iter().map(|a| cast(a, &t)).collect()
}

/// Spark's error for a step that leads away from stop.
fn illegal(start: &str, stop: &str, step: &str) -> KilnError {
    KilnError::exec(format!("requirement failed: Illegal sequence boundaries: {start} to {stop} by {step}"))
}

fn too_long(n: u128) -> KilnError {
    KilnError::exec(format!(
        "[COLLECTION_SIZE_LIMIT_EXCEEDED.PARAMETER] Can't create array with {n} elements which exceeding the array size limit {MAX_LENGTH}, the value of parameter(s) `count` is invalid: must be at most {MAX_LENGTH}. SQLSTATE: 54000"
    ))
}

/// The sequences of each row; `result` is `array<element>`, `zone` the session's (months and days
/// move a TIMESTAMP's wall-clock time there).
pub(crate) fn eval(args: &[ArrayRef], result: &DataType, zone: Zone) -> Result<ArrayRef> {
    let DataType::List(field) = result else { return Err(KilnError::internal(format!("sequence of type {result}"))) };
    let (Some(start), Some(stop)) = (args.first(), args.get(1)) else { return Err(KilnError::internal("sequence arity")) };
    let step = args.get(2);
    let element = field.data_type();
    let rows = start.len();
    let mut lengths = Vec::with_capacity(rows);
    let mut valid = Vec::with_capacity(rows);
    let mut values: Vec<i64> = vec![];
    let mut push = |row: Option<Vec<i64>>, values: &mut Vec<i64>| -> Result<()> {
        valid.push(row.is_some());
        let row = row.unwrap_or_default();
        if values.len() + row.len() > i32::MAX as usize {
            return Err(too_long((values.len() + row.len()) as u128));
        }
        lengths.push(row.len());
        values.extend(row);
        Ok(())
    };
    if element.is_integer() {
        let as_i64 = |a: &ArrayRef| -> Result<Int64Array> { Ok(arrow::compute::cast(a, &DataType::Int64)?.as_primitive::<Int64Type>().clone()) };
        let (s, e) = (as_i64(start)?, as_i64(stop)?);
        let st = step.map(as_i64).transpose()?;
        for i in 0..rows {
            let by = match &st {
                Some(a) => a.is_valid(i).then(|| a.value(i)),
                None => Some(if s.is_valid(i) && e.is_valid(i) && s.value(i) > e.value(i) { -1 } else { 1 }),
            };
            let row = match (s.is_valid(i), e.is_valid(i), by) {
                (true, true, Some(by)) => Some(integers(s.value(i), e.value(i), by)?),
                _ => None,
            };
            push(row, &mut values)?;
        }
        let out = arrow::compute::cast(&(Arc::new(Int64Array::from(values)) as ArrayRef), element)?;
        return finish(field, lengths, valid, out);
    }
    let micros = |a: &ArrayRef| -> Result<Vec<Option<i64>>> {
        Ok(match a.data_type() {
            DataType::Date32 => a.as_primitive::<arrow::datatypes::Date32Type>().iter().map(|d| d.map(|d| d as i64 * MICROS_PER_DAY)).collect(),
            DataType::Timestamp(..) => a.as_primitive::<arrow::datatypes::TimestampMicrosecondType>().iter().collect(),
            DataType::Null => vec![None; a.len()],
            other => return Err(KilnError::internal(format!("sequence over {other}"))),
        })
    };
    let (s, e) = (micros(start)?, micros(stop)?);
    // Each row's step as (months, days, microseconds).
    let steps: Vec<Option<(i64, i64, i64)>> = match step {
        None => s.iter().zip(&e).map(|(a, b)| Some((0, if a > b { -1 } else { 1 }, 0))).collect(),
        Some(a) if is_year_month(a.data_type()) => crate::types::interval::months(a)?.iter().map(|m| m.map(|m| (m as i64, 0, 0))).collect(),
        Some(a) if is_day_time(a.data_type()) => crate::types::interval::micros(a)?.iter().map(|us| us.map(|us| (0, 0, us))).collect(),
        Some(a) if *a.data_type() == crate::types::interval::CALENDAR => {
            crate::types::interval::calendar_parts(a)?.into_iter().map(|p| p.map(|(m, d, us)| (m as i64, d as i64, us))).collect()
        }
        Some(a) => vec![None; a.len()],
    };
    let date = *element == DataType::Date32;
    let ltz = matches!(element, DataType::Timestamp(_, Some(_)));
    for i in 0..rows {
        let row = match (s[i], e[i], steps[i]) {
            (Some(a), Some(b), Some(by)) => Some(temporal(a, b, by, date, if ltz { Some(zone) } else { None })?),
            _ => None,
        };
        push(row, &mut values)?;
    }
    let out: ArrayRef = if date {
        Arc::new(arrow::array::Date32Array::from(values.into_iter().map(|t| t.div_euclid(MICROS_PER_DAY) as i32).collect::<Vec<i32>>()))
    } else {
        Arc::new(arrow::array::TimestampMicrosecondArray::from(values).with_data_type(element.clone()))
    };
    finish(field, lengths, valid, out)
}

fn finish(field: &arrow::datatypes::FieldRef, lengths: Vec<usize>, valid: Vec<bool>, values: ArrayRef) -> Result<ArrayRef> {
    let nulls = NullBuffer::from(valid);
    let nulls = if nulls.null_count() > 0 { Some(nulls) } else { None };
    Ok(Arc::new(ListArray::try_new(field.clone(), OffsetBuffer::from_lengths(lengths), values, nulls)?))
}

/// `start` to `stop` by `step` (Spark's IntegralSequenceImpl).
fn integers(start: i64, stop: i64, step: i64) -> Result<Vec<i64>> {
    let legal = (step > 0 && start <= stop) || (step < 0 && start >= stop) || (step == 0 && start == stop);
    if !legal {
        return Err(illegal(&start.to_string(), &stop.to_string(), &step.to_string()));
    }
    let n = if step == 0 { 1 } else { ((stop as i128 - start as i128) / step as i128 + 1) as u128 };
    if n > MAX_LENGTH as u128 {
        return Err(too_long(n));
    }
    Ok((0..n as i128).map(|k| (start as i128 + k * step as i128) as i64).collect())
}

/// `start` to `stop` (microseconds; a date's midnight) by (months, days, microseconds), as
/// Spark's TemporalSequenceImpl: the k-th value is start plus k steps, months and days moving
/// the wall-clock time in `zone` (None: as it is), microseconds the instant.
fn temporal(start: i64, stop: i64, (months, days, micros): (i64, i64, i64), date: bool, zone: Option<Zone>) -> Result<Vec<i64>> {
    if date && months == 0 && days == 0 && micros.abs() < MICROS_PER_DAY {
        return Err(KilnError::exec("sequence step must be an interval day to second of day granularity if start and end values are dates"));
    }
    // Spark's estimate of the step's length, for its sign: a month as 28 days.
    let estimate = micros as i128 + (months as i128 * 28 + days as i128) * MICROS_PER_DAY as i128;
    let legal = (estimate > 0 && start <= stop) || (estimate < 0 && start >= stop) || (estimate == 0 && start == stop);
    let overflow = || KilnError::exec("[DATETIME_OVERFLOW] Datetime operation overflow: a sequence step. SQLSTATE: 22008");
    if !legal {
        return Err(illegal(&start.to_string(), &stop.to_string(), &format!("{months} months {days} days {micros} microseconds")));
    }
    if estimate == 0 {
        return Ok(vec![start]);
    }
    let at = |k: i64| -> Option<i64> {
        let (m, d, us) = (months.checked_mul(k)?, days.checked_mul(k)?, micros.checked_mul(k)?);
        let moved = if m == 0 && d == 0 {
            start
        } else {
            let local = match zone { Some(z) => z.from_utc(start)?, None => start };
            let w = crate::types::timestamp::add_months(local, i32::try_from(m).ok()?)?.checked_add(d.checked_mul(MICROS_PER_DAY)?)?;
            match zone { Some(z) => z.to_utc(w)?, None => w }
        };
        moved.checked_add(us)
    };
    let mut out = vec![];
    let mut t = start;
    while if estimate > 0 { t <= stop } else { t >= stop } {
        if out.len() >= MAX_LENGTH {
            return Err(too_long(out.len() as u128 + 1));
        }
        out.push(t);
        t = at(out.len() as i64).ok_or_else(overflow)?;
    }
    Ok(out)
}
