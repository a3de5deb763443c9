//! HashAggregate (partial and final): each row's accumulator updates, or a final aggregate's
//! merge of partial buffers, in the group's accumulator memory.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::datatypes::DataType;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

use crate::codegen::expr::{list, repr, when_valid, Tx};
use crate::codegen::rows::flags;
use crate::codegen::rows::{load_index, note};
use super::Flattening;
use crate::codegen::spec::{substitute, unsupported_reason, AggSpec, StageSink};
use crate::expr::{AggFunc, Expr, ExprId};
use crate::physical::{AggregateExpr, PhysicalPlan};

/// Bytes of accumulator memory per aggregate: a 16-byte value, then an 8-byte count or flag.
pub const ACC_BYTES: usize = 32;

/// Adds a partial aggregate as the stage's sink: keys and arguments over the input.
pub fn flatten_partial(node: &Arc<PhysicalPlan>, f: &mut Flattening) -> Result<(), String> {
    let PhysicalPlan::HashAggregate { grouping, aggregates, .. } = node.as_ref() else { return Err("not a HashAggregate".into()) };
    let keys: Vec<Expr> = grouping.iter().map(|g| substitute(g.unalias(), &f.env)).collect();
    let aggs = aggregates.iter().map(|a| agg_spec(a, &f.env)).collect::<Result<Vec<_>, String>>()?;
    let keys_in_code = !keys.is_empty() && super::group_lookup::unsupported_keys(&keys).is_none() && few_string_keys(&keys);
    f.sink = Some(StageSink::Aggregate { keys, keys_in_code, aggregates: aggs, output: node.output(), finish: None });
    Ok(())
}

/// Adds a final aggregate as the stage's sink: it merges the partial buffers by group.
pub fn flatten_final(node: &Arc<PhysicalPlan>, f: &mut Flattening) -> Result<(), String> {
    let PhysicalPlan::HashAggregate { grouping, aggregates, .. } = node.as_ref() else { return Err("not a HashAggregate".into()) };
    // The partial aggregate's grouping columns are the keys; its buffers are merged.
    let keys: Vec<Expr> = crate::plan::named_outputs(grouping).iter().map(|a| substitute(&a.expr(), &f.env)).collect();
    let aggs = aggregates.iter().map(|a| merge_spec(a, &f.env)).collect::<Result<Vec<_>, String>>()?;
    let mut output = crate::plan::named_outputs(grouping);
    output.extend(aggregates.iter().flat_map(|a| a.buffer.iter().cloned()));
    if let Some(r) = super::group_lookup::unsupported_keys(&keys) {
        return Err(r);
    }
    let keys_in_code = !keys.is_empty() && few_string_keys(&keys);
    f.sink = Some(StageSink::Aggregate { keys, keys_in_code, aggregates: aggs, output, finish: Some(node.clone()) });
    Ok(())
}

/// Why generated code cannot run aggregate `a`, if it cannot.
pub(super) fn compiles(a: &AggregateExpr) -> Result<(), String> {
    if a.distinct {
        return Err("a DISTINCT aggregate".into());
    }
    // A UDAF's accumulator is Rust over arrays: its aggregate runs interpreted.
    if let AggFunc::Udaf(u) = a.func {
        return Err(format!("user-defined aggregate function {}", u.name()));
    }
    if let AggFunc::Builtin(b) = a.func {
        let integral = a.args.first().and_then(|x| x.data_type().ok()).is_some_and(|t| matches!(t, DataType::Int32 | DataType::Int64));
        if !(wrapping_sum(a.func) && integral) {
            return Err(format!("the aggregate {}, which generated code lacks", b.name));
        }
    }
    Ok(())
}

/// Legacy mode's sum (`spark.sql.ansi.enabled=false`): integers add without an overflow check.
pub(crate) fn wrapping_sum(f: AggFunc) -> bool {
    matches!(f, AggFunc::Builtin(b) if b.kind == crate::expr::AggKind::LegacySum)
}

/// A sum whose integer arguments keep one bigint buffer: ANSI's sum, or legacy mode's.
pub(crate) fn integral_sum(f: AggFunc) -> bool {
    f == AggFunc::Sum || wrapping_sum(f)
}

fn agg_spec(a: &AggregateExpr, env: &HashMap<ExprId, Expr>) -> Result<AggSpec, String> {
    compiles(a)?;
    let arg = match (a.func, a.args.first()) {
        (AggFunc::Count, Some(Expr::Literal(v))) if !v.is_null() => None,
        (_, Some(x)) => Some(substitute(x, env)),
        (_, None) => None,
    };
    let arg_type = match &arg {
        Some(x) => x.data_type().map_err(|e| e.to_string())?,
        None => DataType::Int64,
    };
    if let Some(x) = &arg {
        if let Some(r) = unsupported_reason(x) {
            return Err(format!("{r} in {}({x})", a.func.name()));
        }
        if !matches!(arg_type, DataType::Int32 | DataType::Int64 | DataType::Float64 | DataType::Decimal128(..) | DataType::Date32) {
            return Err(format!("{} over {}", a.func.name(), crate::types::spark_type_name(&arg_type)));
        }
        if matches!(a.func, AggFunc::Sum | AggFunc::Avg) && arg_type == DataType::Date32 {
            return Err(format!("{} over a date", a.func.name()));
        }
    }
    Ok(AggSpec { func: a.func, arg, arg_type, buffer: a.buffer.clone(), merge: vec![] })
}

/// At most two string keys: past that, generated code calls the byte compare once per long
/// string per row, and hashing the keys per batch in Rust is faster.
fn few_string_keys(keys: &[Expr]) -> bool {
    keys.iter().filter(|k| k.data_type().ok() == Some(DataType::Utf8)).count() <= 2
}

/// A final aggregate's merge of the buffer columns `a`'s partial aggregate produced.
fn merge_spec(a: &AggregateExpr, env: &HashMap<ExprId, Expr>) -> Result<AggSpec, String> {
    compiles(a)?;
    let arg_type = match (a.func, a.args.first()) {
        (AggFunc::Count, _) | (_, None) => DataType::Int64,
        (_, Some(x)) => x.data_type().map_err(|e| e.to_string())?,
    };
    if !matches!(arg_type, DataType::Int32 | DataType::Int64 | DataType::Float64 | DataType::Decimal128(..) | DataType::Date32) {
        return Err(format!("{} over {}", a.func.name(), crate::types::spark_type_name(&arg_type)));
    }
    if matches!(a.func, AggFunc::Sum | AggFunc::Avg) && arg_type == DataType::Date32 {
        return Err(format!("{} over a date", a.func.name()));
    }
    let merge: Vec<Expr> = a.buffer.iter().map(|b| substitute(&b.expr(), env)).collect();
    for m in &merge {
        if let Some(r) = unsupported_reason(m) {
            return Err(format!("{r} in the buffer {m} of {}", a.func.name()));
        }
    }
    Ok(AggSpec { func: a.func, arg: None, arg_type, buffer: a.buffer.clone(), merge })
}

/// Consumes one row: finds its group's accumulators (in the shared group table, by the group
/// id the interpreter hashed for row `j`, or the one group without keys) and updates each, or
/// merges a final aggregate's partial buffers into them.
pub fn consume(tx: &mut Tx, keys: &[Expr], aggregates: &[AggSpec], (table, gids, acc): (Option<Value>, Option<Value>, Option<Value>), j: Value) -> Result<(), String> {
    let stride = (ACC_BYTES * aggregates.len()) as i64;
    let group_base = match (table, gids, acc) {
        (Some(header), _, _) => {
            note(tx.b, tx.helpers, || format!("HashAggregate: find the row's group of [{}] in the shared group table", list(keys)));
            let gid = super::group_lookup::group_id(tx, keys, header)?;
            // Read after the lookup: adding a group may have moved the payload.
            let payload = tx.b.ins().load(types::I64, flags(), header, crate::hashtable::group_table::offsets::PAYLOAD);
            let off = tx.b.ins().imul_imm_s(gid, stride);
            tx.b.ins().iadd(payload, off)
        }
        (None, Some(g), Some(base)) => {
            note(tx.b, tx.helpers, || format!("HashAggregate: the row's group of [{}], hashed per batch", list(keys)));
            let gid = load_index(tx.b, g, j);
            let off = tx.b.ins().imul_imm_s(gid, stride);
            tx.b.ins().iadd(base, off)
        }
        (None, None, Some(base)) => base,
        _ => return Err("aggregate without accumulators".into()),
    };
    for (i, a) in aggregates.iter().enumerate() {
        note(tx.b, tx.helpers, || aggregate_note(a));
        let at = tx.b.ins().iadd_imm_s(group_base, (i * ACC_BYTES) as i64);
        if a.merge.is_empty() {
            update_accumulator(tx, a, at)?;
        } else {
            merge_accumulator(tx, a, at)?;
        }
    }
    Ok(())
}

/// An accumulator's comment: the function and its argument, partial or merging.
fn aggregate_note(a: &AggSpec) -> String {
    let func = a.func.name();
    match (&a.arg, a.merge.is_empty()) {
        (_, false) => format!("HashAggregate merge_{func}({}): merge the partial buffer into the group's", list(&a.merge)),
        (Some(arg), true) => format!("HashAggregate partial_{func}({arg}): update the group's accumulator"),
        (None, true) => format!("HashAggregate partial_{func}(*): update the group's accumulator"),
    }
}

/// The bits of a double as an i64 whose signed order is `f64::total_cmp`'s (-inf < -0.0 < 0.0 <
/// inf < NaN for the positive NaN every NaN is made), the order the interpreter's min/max use.
fn total_order_key(b: &mut FunctionBuilder, bits: Value) -> Value {
    let sign = b.ins().sshr_imm_u(bits, 63);
    let mask = b.ins().ushr_imm_u(sign, 1);
    b.ins().bxor(bits, mask)
}

pub fn update_accumulator(tx: &mut Tx, a: &AggSpec, at: Value) -> Result<(), String> {
    let (value_off, aux_off) = (0, 16);
    let Some(arg) = &a.arg else {
        // count(*): every selected row.
        let c = tx.b.ins().load(types::I64, flags(), at, aux_off);
        let c1 = tx.b.ins().iadd_imm_s(c, 1);
        tx.b.ins().store(flags(), c1, at, aux_off);
        return Ok(());
    };
    let (v, null) = tx.emit(arg)?;
    let t = a.arg_type.clone();
    let set_flag = |tx: &mut Tx| {
        let one = tx.b.ins().iconst(types::I64, 1);
        tx.b.ins().store(flags(), one, at, aux_off);
    };
    let count_row = |tx: &mut Tx| {
        let c = tx.b.ins().load(types::I64, flags(), at, aux_off);
        let c1 = tx.b.ins().iadd_imm_s(c, 1);
        tx.b.ins().store(flags(), c1, at, aux_off);
    };
    // An average counts its rows; a sum flags that it saw one.
    let count_or_flag = |tx: &mut Tx| if a.func == AggFunc::Avg { count_row(tx) } else { set_flag(tx) };
    when_valid(tx, null, &mut |tx| {
        match (a.func, &t) {
            (AggFunc::Count, _) => count_row(tx),
            (f, DataType::Int32 | DataType::Int64) if integral_sum(f) => {
                let x = tx.resize(v, types::I64);
                let s = tx.b.ins().load(types::I64, flags(), at, value_off);
                let s1 = if wrapping_sum(f) {
                    tx.b.ins().iadd(s, x)
                } else {
                    let (s1, of) = tx.b.ins().sadd_overflow(s, x);
                    tx.fail_if(of, None);
                    s1
                };
                tx.b.ins().store(flags(), s1, at, value_off);
                set_flag(tx);
            }
            (AggFunc::Sum | AggFunc::Avg, DataType::Float64) | (AggFunc::Avg, DataType::Int32 | DataType::Int64) => {
                let x = if t == DataType::Float64 { v } else { tx.b.ins().fcvt_from_sint(types::F64, v) };
                let s = tx.b.ins().load(types::F64, flags(), at, value_off);
                let s1 = tx.b.ins().fadd(s, x);
                tx.b.ins().store(flags(), s1, at, value_off);
                count_or_flag(tx);
            }
            (AggFunc::Sum | AggFunc::Avg, DataType::Decimal128(..)) => {
                let x = tx.resize(v, types::I128);
                // A sum past the buffer's precision is caught when the buffer is produced (as
                // the interpreter does).
                add_i128_checked(tx, at, value_off, x);
                count_or_flag(tx);
            }
            (AggFunc::Min | AggFunc::Max, _) => {
                let cc = if a.func == AggFunc::Min { IntCC::SignedLessThan } else { IntCC::SignedGreaterThan };
                // Doubles are kept as their bits and ordered as the interpreter's total order,
                // every NaN as Spark's one NaN, the largest value.
                let (v, ty) = match repr(&t) {
                    types::F64 => {
                        let is_nan = tx.b.ins().fcmp(FloatCC::Unordered, v, v);
                        let bits = tx.b.ins().bitcast(types::I64, MemFlagsData::new(), v);
                        let nan = tx.b.ins().iconst(types::I64, f64::NAN.to_bits() as i64);
                        (tx.b.ins().select(is_nan, nan, bits), types::I64)
                    }
                    ty => (v, ty),
                };
                let cur = tx.b.ins().load(ty, flags(), at, value_off);
                let seen = tx.b.ins().load(types::I64, flags(), at, aux_off);
                let better = if t == DataType::Float64 {
                    let (kv, kc) = (total_order_key(tx.b, v), total_order_key(tx.b, cur));
                    tx.b.ins().icmp(cc, kv, kc)
                } else {
                    tx.b.ins().icmp(cc, v, cur)
                };
                let unseen = tx.b.ins().icmp_imm_s(IntCC::Equal, seen, 0);
                let take = tx.b.ins().bor(better, unseen);
                let new = tx.b.ins().select(take, v, cur);
                tx.b.ins().store(flags(), new, at, value_off);
                set_flag(tx);
            }
            (f, t) => return Err(format!("{} over {t}", f.name())),
        }
        Ok(())
    })
}

/// A final aggregate's merge of one input row's buffer columns into the group's accumulator at
/// `at` (the layout `update_accumulator` writes, so both produce the same buffers).
pub fn merge_accumulator(tx: &mut Tx, a: &AggSpec, at: Value) -> Result<(), String> {
    let (value_off, aux_off) = (0, 16);
    let add_count = |tx: &mut Tx, c: Value, null: Option<Value>| {
        when_valid(tx, null, &mut |tx| {
            let old = tx.b.ins().load(types::I64, flags(), at, aux_off);
            let new = tx.b.ins().iadd(old, c);
            tx.b.ins().store(flags(), new, at, aux_off);
            Ok(())
        })
    };
    match (a.func, &a.arg_type) {
        (AggFunc::Count, _) => {
            let (c, null) = tx.emit(a.merge.first().ok_or("count without its buffer")?)?;
            add_count(tx, c, null)
        }
        // The sum of sums, the min of mins: the update over the buffer column.
        (AggFunc::Sum, DataType::Float64) | (AggFunc::Min | AggFunc::Max, _) => {
            let buffer = a.merge.first().ok_or("an aggregate without its buffer")?.clone();
            update_accumulator(tx, &AggSpec { arg: Some(buffer), merge: vec![], ..a.clone() }, at)
        }
        (f, DataType::Int32 | DataType::Int64) if integral_sum(f) => {
            let buffer = a.merge.first().ok_or("an aggregate without its buffer")?.clone();
            update_accumulator(tx, &AggSpec { arg: Some(buffer), merge: vec![], ..a.clone() }, at)
        }
        (AggFunc::Avg, DataType::Int32 | DataType::Int64 | DataType::Float64) => {
            let [sum, count] = a.merge.as_slice() else { return Err("avg without its two buffers".into()) };
            let (s, sn) = tx.emit(sum)?;
            when_valid(tx, sn, &mut |tx| {
                let old = tx.b.ins().load(types::F64, flags(), at, value_off);
                let new = tx.b.ins().fadd(old, s);
                tx.b.ins().store(flags(), new, at, value_off);
                Ok(())
            })?;
            let (c, cn) = tx.emit(count)?;
            add_count(tx, c, cn)
        }
        (AggFunc::Sum | AggFunc::Avg, DataType::Decimal128(..)) => {
            let [sum, second] = a.merge.as_slice() else { return Err("a decimal sum without its two buffers".into()) };
            let (s, sn) = tx.emit(sum)?;
            let (x, xn) = tx.emit(second)?;
            // Non-empty (sum: isEmpty false; avg: a count above 0).
            let nonempty = if a.func == AggFunc::Sum { tx.b.ins().icmp_imm_s(IntCC::Equal, x, 0) } else { tx.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, x, 0) };
            let nonempty = match xn {
                Some(n) => {
                    let valid = tx.b.ins().bxor_imm_u(n, 1);
                    tx.b.ins().band(nonempty, valid)
                }
                None => nonempty,
            };
            // A NULL sum in a non-empty buffer: the partial sum overflowed (the interpreter
            // reports it).
            if let Some(n) = sn {
                let overflowed = tx.b.ins().band(n, nonempty);
                tx.fail_if(overflowed, None);
            }
            when_valid(tx, sn, &mut |tx| {
                let v = if tx.b.func.dfg.value_type(s) == types::I128 { s } else { tx.b.ins().sextend(types::I128, s) };
                add_i128_checked(tx, at, value_off, v);
                Ok(())
            })?;
            if a.func == AggFunc::Avg {
                add_count(tx, x, xn)
            } else {
                let old = tx.b.ins().load(types::I64, flags(), at, aux_off);
                let one = tx.b.ins().iconst(types::I64, 1);
                let flag = tx.b.ins().select(nonempty, one, old);
                tx.b.ins().store(flags(), flag, at, aux_off);
                Ok(())
            }
        }
        (f, t) => Err(format!("merging {} over {t}", f.name())),
    }
}

/// Adds `x` to the i128 at `at + off`; a wrapped sum goes to the interpreter, as it would
/// overflow there.
fn add_i128_checked(tx: &mut Tx, at: Value, off: i32, x: Value) {
    let old = tx.b.ins().load(types::I128, flags(), at, off);
    let new = tx.b.ins().iadd(old, x);
    let (_, old_hi) = tx.b.ins().isplit(old);
    let (_, x_hi) = tx.b.ins().isplit(x);
    let (_, new_hi) = tx.b.ins().isplit(new);
    let from_old = tx.b.ins().bxor(old_hi, new_hi);
    let from_x = tx.b.ins().bxor(x_hi, new_hi);
    let both = tx.b.ins().band(from_old, from_x);
    let wrapped = tx.b.ins().icmp_imm_s(IntCC::SignedLessThan, both, 0);
    tx.fail_if(wrapped, None);
    tx.b.ins().store(flags(), new, at, off);
}
