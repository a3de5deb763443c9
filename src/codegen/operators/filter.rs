//! Filter: the stage's filter function, which writes the indices of the rows passing every
//! condition (a selection vector), four rows at a time where the conditions allow.

use arrow::datatypes::DataType;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

use crate::codegen::expr::{int_cc, Tx};
use crate::codegen::rows::flags;
use crate::codegen::helpers::Helpers;
use crate::codegen::layout::{columns_of, SlotLayout};
use crate::codegen::rows::{add_counts, enter, note, row_loop, row_loop_from, slot};
use super::Flattening;
use crate::codegen::spec::{counter, is_column_null_test, substitute, unsupported_reason, StageSpec};
use crate::expr::{BinaryOp, Expr};
use crate::types::ScalarValue;

/// Adds the Filter's conjuncts to the stage: tested by the filter function below any join,
/// over joined rows above one.
pub fn flatten(condition: &Expr, f: &mut Flattening) -> Result<(), String> {
    if !condition.deterministic() {
        return Err("a non-deterministic filter".into());
    }
    for c in condition.split_conjunction() {
        let c = substitute(c, &f.env);
        if let Some(r) = unsupported_reason(&c) {
            return Err(format!("{r} in {c}"));
        }
        // Above a join a filter sees joined rows.
        match f.joins.last_mut() {
            Some(j) => j.filters.push(c),
            None => f.conditions.push(c),
        }
    }
    Ok(())
}

/// The filter function: `fn(slots, n, sel_out) -> count` (-1: run interpreted).
pub fn build_filter(b: &mut FunctionBuilder, spec: &StageSpec, layout: &SlotLayout, no_nulls: bool, helpers: &Helpers) -> Result<(), String> {
    let ([slots, n, sel_out], cols, fail) = enter(b, layout, helpers);
    let bloom = spec
        .bloom_join()
        .and_then(|(k, j)| Some((k, j, layout.tables.get(k)?)))
        .map(|(k, j, t)| (k, j, (0..j.table_words()).map(|w| slot(b, slots, t + w)).collect::<Vec<_>>()));
    let count = b.declare_var(types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.def_var(count, zero);
    let columns = spec.columns();
    // Branch-free append: write the row, advance the count by its pass bit.
    let append = |b: &mut FunctionBuilder, row: Value, pass: Option<Value>| {
        note(b, helpers, || "Filter: append the row to the selection vector, advance by its pass bit".into());
        let c = b.use_var(count);
        let off = b.ins().ishl_imm_u(c, 2);
        let addr = b.ins().iadd(sel_out, off);
        let r32 = b.ins().ireduce(types::I32, row);
        b.ins().store(flags(), r32, addr, 0);
        let step = match pass {
            Some(p) => b.ins().uextend(types::I64, p),
            None => b.ins().iconst(types::I64, 1),
        };
        let c1 = b.ins().iadd(c, step);
        b.def_var(count, c1);
    };
    // The join's test runs in a pass of its own over the rows the conditions kept (compacting
    // the selection in place), so a selective condition spares it the other rows.
    let join_test = |b: &mut FunctionBuilder, row: Value| -> Result<Option<Value>, String> {
        let Some((k, j, words)) = &bloom else { return Ok(None) };
        let mut tx = Tx { b: &mut *b, input: columns, sides: vec![], cols: cols.clone(), row, build_rows: vec![], fail, loaded: vec![], no_nulls, helpers };
        note(tx.b, helpers, || format!("BroadcastHashJoin {:?} #{k}: the row's Bloom bit in the build side's table (no bit: no match)", j.join_type));
        super::hash_probe::prefilter_pass(&mut tx, j, words).map(Some)
    };
    // Without NULLs, `isnotnull(column)` conditions hold for every row: no pass for them.
    let trivial = spec.conditions.is_empty() || no_nulls && spec.conditions.iter().all(is_column_null_test);
    // The rows passing the conditions (before any Bloom test): the Filters' rows out.
    let mut passed = None;
    if trivial {
        passed = Some(n);
        row_loop(b, helpers, n, &mut |b, row, _| {
            let pass = join_test(b, row)?;
            append(b, row, pass);
            Ok(())
        })?;
    } else {
        // One row: `conditions` (and the row's bit from the vector tests, if any) give its pass bit.
        let each_row = |b: &mut FunctionBuilder, row: Value, bit: Option<Value>, next: Block, conditions: &[Expr]| -> Result<(), String> {
            let mut tx = Tx { b: &mut *b, input: columns, sides: vec![], cols: cols.clone(), row, build_rows: vec![], fail, loaded: vec![], no_nulls, helpers };
            note(tx.b, helpers, || "Filter: load the columns the conditions read".into());
            tx.preload(&columns_of(spec, conditions.iter()))?;
            let pass = tx.conjunction(conditions, next, "Filter")?;
            let pass = match (pass, bit) {
                (Some(p), Some(bit)) => Some(b.ins().band(p, bit)),
                (p, bit) => p.or(bit),
            };
            append(b, row, pass);
            Ok(())
        };
        let (tests, rest) = if no_nulls && bloom.is_none() { lane_tests(spec) } else { (vec![], vec![]) };
        // Skipping four failed rows with one branch pays when the other conditions cost more
        // than that branch's mispredictions (TPC-H Q6's decimal compares do not: its vector
        // loop ran 1.5x slower there; Q12's string tests do, 1.25x faster).
        let start = if tests.is_empty() || (!rest.is_empty() && rest.iter().all(numeric_comparison)) {
            b.ins().iconst(types::I64, 0)
        } else {
            lane_loop(b, helpers, n, &tests, &cols, &mut |b, row, bit, next| each_row(b, row, Some(bit), next, &rest))?
        };
        row_loop_from(b, helpers, start, n, &mut |b, row, next| each_row(b, row, None, next, &spec.conditions))?;
        if bloom.is_some() {
            let kept = b.use_var(count);
            passed = Some(kept);
            b.def_var(count, zero);
            row_loop(b, helpers, kept, &mut |b, i, _| {
                let off = b.ins().ishl_imm_u(i, 2);
                let addr = b.ins().iadd(sel_out, off);
                let r32 = b.ins().load(types::I32, flags(), addr, 0);
                let row = b.ins().uextend(types::I64, r32);
                let pass = join_test(b, row)?;
                append(b, row, pass);
                Ok(())
            })?;
        }
    }
    let c = b.use_var(count);
    add_counts(b, helpers, slots, layout, &[(counter::FILTERED, passed.unwrap_or(c))]);
    b.ins().return_(&[c]);
    b.seal_all_blocks();
    Ok(())
}

/// A filter condition tested on four rows at once: an integer column of the stream input
/// compared with a constant (`column cc value`).
struct LaneTest {
    column: usize,
    wide: bool,
    cc: IntCC,
    value: i64,
}

/// The conditions of a filter without NULLs that vector code tests four rows at a time, and
/// the others (tested row by row on the rows those pass). `isnotnull(column)` is true of every
/// row without NULLs and falls away.
fn lane_tests(spec: &StageSpec) -> (Vec<LaneTest>, Vec<Expr>) {
    let columns = spec.columns();
    let (mut tests, mut rest) = (vec![], vec![]);
    for c in &spec.conditions {
        if is_column_null_test(c) {
            continue;
        }
        // `column op constant`, or `constant op column` as `column flip(op) constant`.
        let operands = match c {
            Expr::Binary { op, left, right } => match (left.as_ref(), right.as_ref()) {
                (Expr::Attribute(a), Expr::Literal(v)) => Some((*op, a, v)),
                (Expr::Literal(v), Expr::Attribute(a)) => Some((op.flip(), a, v)),
                _ => None,
            },
            _ => None,
        };
        let test = match operands {
            Some((op, a, v)) => {
                let cc = if op == BinaryOp::EqNullSafe { None } else { int_cc(op, true) };
                let column = columns.iter().position(|x| x.id == a.id).filter(|i| *i < spec.input.len());
                let value = match (&a.data_type, v) {
                    (DataType::Int32, ScalarValue::Int32(x)) | (DataType::Date32, ScalarValue::Date32(x)) => Some((false, i64::from(*x))),
                    (DataType::Int64, ScalarValue::Int64(x)) => Some((true, *x)),
                    _ => None,
                };
                match (cc, column, value) {
                    (Some(cc), Some(column), Some((wide, value))) => Some(LaneTest { column, wide, cc, value }),
                    _ => None,
                }
            }
            None => None,
        };
        match test {
            Some(t) => tests.push(t),
            None => rest.push(c.clone()),
        }
    }
    (tests, rest)
}

/// A comparison of two numeric columns or constants: a few instructions per row.
fn numeric_comparison(e: &Expr) -> bool {
    let numeric = |x: &Expr| {
        matches!(x, Expr::Attribute(_) | Expr::Literal(_))
            && x.data_type().is_ok_and(|t| matches!(t, DataType::Int32 | DataType::Int64 | DataType::Date32 | DataType::Float64 | DataType::Decimal128(..)))
    };
    match e {
        Expr::Binary { op, left, right } if op.is_comparison() && *op != BinaryOp::EqNullSafe => numeric(left) && numeric(right),
        _ => false,
    }
}

/// The filter's first rows, four at a time: each test compares four values in one vector
/// instruction and gives a bit per row; rows whose bits all hold go on to `each_row` (the
/// other conditions and the append). Returns where the rows left over start (n rounded down to
/// four), for the row loop.
fn lane_loop(
    b: &mut FunctionBuilder,
    h: &Helpers,
    n: Value,
    tests: &[LaneTest],
    cols: &[Option<[Value; 4]>],
    each_row: &mut dyn FnMut(&mut FunctionBuilder, Value, Value, Block) -> Result<(), String>,
) -> Result<Value, String> {
    // Arrow's values may start anywhere (a sliced array): loads that need no alignment.
    let unaligned = MemFlagsData::new().with_notrap();
    let end = b.ins().band_imm_s(n, !3);
    let i = b.declare_var(types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.def_var(i, zero);
    let (header, body, lanes, next, exit) = (b.create_block(), b.create_block(), b.create_block(), b.create_block(), b.create_block());
    b.ins().jump(header, &[]);
    b.switch_to_block(header);
    note(b, h, || "Filter, four rows at a time: vector compares of the columns with constants".into());
    let iv = b.use_var(i);
    let more = b.ins().icmp(IntCC::SignedLessThan, iv, end);
    b.ins().brif(more, body, &[], exit, &[]);
    b.switch_to_block(body);
    let iv = b.use_var(i);
    let mut mask = b.ins().iconst(types::I32, 0xF);
    for t in tests {
        let values = cols.get(t.column).copied().flatten().ok_or("a filter column without a slot")?[0];
        let bits = if t.wide {
            // Two vectors of two longs: their bits, the second pair's above the first's.
            let off = b.ins().ishl_imm_u(iv, 3);
            let at = b.ins().iadd(values, off);
            let k = b.ins().iconst(types::I64, t.value);
            let k = b.ins().splat(types::I64X2, k);
            let mut halves = vec![];
            for half in 0..2 {
                let v = b.ins().load(types::I64X2, unaligned, at, half * 16);
                let m = b.ins().icmp(t.cc, v, k);
                halves.push(b.ins().vhigh_bits(types::I32, m));
            }
            let hi = b.ins().ishl_imm_u(halves[1], 2);
            b.ins().bor(halves[0], hi)
        } else {
            let off = b.ins().ishl_imm_u(iv, 2);
            let at = b.ins().iadd(values, off);
            let k = b.ins().iconst(types::I32, t.value);
            let k = b.ins().splat(types::I32X4, k);
            let v = b.ins().load(types::I32X4, unaligned, at, 0);
            let m = b.ins().icmp(t.cc, v, k);
            b.ins().vhigh_bits(types::I32, m)
        };
        mask = b.ins().band(mask, bits);
    }
    // Four rows that all fail (most, under a selective filter) cost one branch.
    b.ins().brif(mask, lanes, &[], next, &[]);
    b.switch_to_block(lanes);
    note(b, h, || "Filter: each of the four rows whose bit is set".into());
    // Branch-free per row, as the row loop: its bit goes into its pass bit.
    for lane in 0..4 {
        let after = b.create_block();
        let bit = b.ins().ushr_imm_u(mask, lane);
        let bit = b.ins().band_imm_s(bit, 1);
        let bit = b.ins().ireduce(types::I8, bit);
        let iv = b.use_var(i);
        let row = b.ins().iadd_imm_s(iv, lane);
        each_row(b, row, bit, after)?;
        b.ins().jump(after, &[]);
        b.switch_to_block(after);
    }
    b.ins().jump(next, &[]);
    b.switch_to_block(next);
    let iv = b.use_var(i);
    let inc = b.ins().iadd_imm_s(iv, 4);
    b.def_var(i, inc);
    b.ins().jump(header, &[]);
    b.switch_to_block(exit);
    Ok(end)
}
