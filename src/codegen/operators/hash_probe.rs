//! Generated hash join probes (produce/consume): for the current stream row, each join of the
//! stage hashes its stream keys, probes the build side's `JoinTable` (open addressing, tags,
//! keys compared inline), and loops over the matching build rows, handing each joined row to
//! the next join or the sink with its values in registers. Outer joins emit a stream row
//! without a match against the build side's NULL row; semi / anti joins emit the stream row
//! by a `found` flag.

use std::sync::Arc;

use arrow::datatypes::DataType;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::Variable;

use crate::codegen::expr::Tx;
use crate::codegen::rows::flags;
use crate::codegen::rows::{load_index, note};
use super::Flattening;
use crate::codegen::spec::{build_columns, counter, stage_join_type, string_column, substitute, unsupported_reason, JoinSpec, StageJoinType, StageSpec, NULL_AWARE_EMPTY, NULL_AWARE_NULL_KEY};
use crate::physical::PhysicalPlan;
use crate::common::hash::HASH_K;
use crate::hashtable::join_table::{inline_key, END, KEY_WORDS, MULTI, ROW_BITS, TABLE_WORDS};

/// Adds the join to the stage: the build side is hashed into a `JoinTable` the code probes.
pub fn flatten(node: &Arc<PhysicalPlan>, f: &mut Flattening) -> Result<(), String> {
    let PhysicalPlan::HashJoin { kind, left_keys, right_keys, build_side, condition, null_aware, left, right, join_type } = node.as_ref() else { return Err("not a hash join".into()) };
    let (stream_keys, build_keys, build_plan) = match build_side {
        crate::physical::BuildSide::BuildRight => (left_keys, right_keys, right),
        crate::physical::BuildSide::BuildLeft => (right_keys, left_keys, left),
    };
    let join_type = match stage_join_type(*join_type, *build_side).ok_or("a join type generated code does not run")? {
        StageJoinType::Anti if *null_aware => StageJoinType::NullAwareAnti,
        t => t,
    };
    let build = build_columns(build_plan, join_type, &mut f.env);
    let stream_keys: Vec<Expr> = stream_keys.iter().map(|k| substitute(k, &f.env)).collect();
    for (s, b) in stream_keys.iter().zip(build_keys) {
        let (st, bt) = (s.data_type().map_err(|e| e.to_string())?, b.data_type().map_err(|e| e.to_string())?);
        if st != bt || !(crate::hashtable::join_table::int_key(&st) || st == DataType::Utf8) {
            return Err(format!("a join key of type {}", crate::types::spark_type_name(&bt)));
        }
        if st == DataType::Utf8 && string_column(s).is_none() {
            return Err(format!("a computed string join key {s}"));
        }
        if st != DataType::Utf8 {
            if let Some(r) = unsupported_reason(s) {
                return Err(format!("{r} in {s}"));
            }
        }
    }
    let broadcast = *kind == crate::physical::HashJoinKind::Broadcast;
    f.push_join(join_type, condition.as_ref(), build_plan, build, stream_keys, build_keys, broadcast, false)
}

/// Emits joins `k..` for the current row, calling `consume` per joined row; control continues
/// after the last match. `tables[k]` holds join k's table words then its NULL row.
pub fn probe_joins(
    tx: &mut Tx,
    spec: &StageSpec,
    tables: &[Vec<Value>],
    used: &[bool],
    counts: &[Option<Variable>],
    k: usize,
    consume: &mut dyn FnMut(&mut Tx) -> Result<(), String>,
) -> Result<(), String> {
    let Some(j) = spec.joins.get(k) else { return consume(tx) };
    let words = &tables[k];
    let done = tx.b.create_block();
    let keys = j.stream_keys.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", ");
    let op = if j.merge { "SortMergeJoin" } else { "BroadcastHashJoin" };
    if !j.merge {
        note(tx.b, tx.helpers, || format!("{op} {:?} #{k}: hash [{keys}], probe the build side's table", j.join_type));
    }
    // A null-aware anti join's state word (after the NULL row's index): a NULL build key
    // drops every row.
    let null_aware = (j.join_type == StageJoinType::NullAwareAnti).then(|| words[words.len() - 1]);
    if let Some(state) = null_aware {
        note(tx.b, tx.helpers, || format!("BroadcastHashJoin NullAwareAnti #{k}: a NULL build key keeps no row"));
        let none = tx.b.ins().icmp_imm_s(IntCC::Equal, state, NULL_AWARE_NULL_KEY as i64);
        let go = tx.b.create_block();
        tx.b.ins().brif(none, done, &[], go, &[]);
        tx.b.switch_to_block(go);
    }
    // A merge join's matches are the rows `from[row]..to[row]`; a hash join's, a chain.
    let (head, multi, stream_null, range_end) = if j.merge {
        note(tx.b, tx.helpers, || format!("{op} {:?} #{k}: the stream row's range of equal-keyed right rows", j.join_type));
        let (from, to) = super::merge_join::range(tx, words);
        let none = tx.b.ins().iconst(types::I64, 0);
        (from, none, None, Some(to))
    } else {
        let (head, multi, stream_null) = probe(tx, j, words)?;
        (head, multi, stream_null, None)
    };
    let b_var = tx.b.declare_var(types::I64);
    tx.b.def_var(b_var, head);
    let found = tx.b.declare_var(types::I8);
    let no = tx.b.ins().iconst(types::I8, 0);
    tx.b.def_var(found, no);
    let header = tx.b.create_block();
    let body = tx.b.create_block();
    let advance = tx.b.create_block();
    let after = tx.b.create_block();
    tx.b.ins().jump(header, &[]);
    tx.b.switch_to_block(header);
    let b = tx.b.use_var(b_var);
    let end = match range_end {
        Some(to) => tx.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, b, to),
        None => tx.b.ins().icmp_imm_s(IntCC::Equal, b, END as i64),
    };
    tx.b.ins().brif(end, after, &[], body, &[]);
    // One matching build row.
    tx.b.switch_to_block(body);
    note(tx.b, tx.helpers, || format!("{op} #{k}: one matching build row"));
    tx.enter_side(k, Some(b), used)?;
    tx.require(&j.condition, advance, &format!("{op} condition"))?;
    let yes = tx.b.ins().iconst(types::I8, 1);
    tx.b.def_var(found, yes);
    match j.join_type {
        // The first passing match decides.
        StageJoinType::Semi | StageJoinType::Anti | StageJoinType::NullAwareAnti => {
            tx.b.ins().jump(after, &[]);
        }
        StageJoinType::Inner | StageJoinType::Outer => {
            count_row(tx, counts, counter::joined(k));
            tx.require(&j.filters, advance, "Filter (over joined rows)")?;
            count_row(tx, counts, counter::join_filtered(k));
            probe_joins(tx, spec, tables, used, counts, k + 1, consume)?;
            tx.b.ins().jump(advance, &[]);
        }
    }
    // A unique key's chain ends at its first row: no `next` to read.
    tx.b.switch_to_block(advance);
    if range_end.is_some() {
        note(tx.b, tx.helpers, || format!("{op} #{k}: next right row of the range"));
        let b = tx.b.use_var(b_var);
        let next = tx.b.ins().iadd_imm_s(b, 1);
        tx.b.def_var(b_var, next);
        tx.b.ins().jump(header, &[]);
    } else {
        note(tx.b, tx.helpers, || format!("BroadcastHashJoin #{k}: next build row of the chain"));
        let chained = tx.b.create_block();
        tx.b.ins().brif(multi, chained, &[], after, &[]);
        tx.b.switch_to_block(chained);
        let b = tx.b.use_var(b_var);
        let next = load_index(tx.b, words[2], b);
        tx.b.def_var(b_var, next);
        tx.b.ins().jump(header, &[]);
    }
    // After the chain: the stream row alone, by the join type.
    tx.b.switch_to_block(after);
    note(tx.b, tx.helpers, || format!("{op} #{k}: after the matches (outer, semi, anti rows)"));
    let f = tx.b.use_var(found);
    let alone = tx.b.create_block();
    match j.join_type {
        StageJoinType::Inner => {
            tx.b.ins().jump(done, &[]);
        }
        StageJoinType::Outer | StageJoinType::Anti => {
            tx.b.ins().brif(f, done, &[], alone, &[]);
        }
        StageJoinType::Semi => {
            tx.b.ins().brif(f, alone, &[], done, &[]);
        }
        // No match: a NULL stream key stays only when the build side is empty.
        StageJoinType::NullAwareAnti => match (stream_null, null_aware) {
            (Some(n), Some(state)) => {
                let unmatched = tx.b.create_block();
                let null_key = tx.b.create_block();
                tx.b.ins().brif(f, done, &[], unmatched, &[]);
                tx.b.switch_to_block(unmatched);
                tx.b.ins().brif(n, null_key, &[], alone, &[]);
                tx.b.switch_to_block(null_key);
                note(tx.b, tx.helpers, || format!("BroadcastHashJoin NullAwareAnti #{k}: a NULL stream key stays only over an empty build side"));
                let empty = tx.b.ins().icmp_imm_s(IntCC::Equal, state, NULL_AWARE_EMPTY as i64);
                tx.b.ins().brif(empty, alone, &[], done, &[]);
            }
            _ => {
                tx.b.ins().brif(f, done, &[], alone, &[]);
            }
        },
    }
    tx.b.switch_to_block(alone);
    if j.join_type != StageJoinType::Inner {
        // An outer join reads its build side's NULL row; semi / anti joins show no build columns.
        let null_row = (j.join_type == StageJoinType::Outer).then(|| words[TABLE_WORDS + KEY_WORDS * j.stream_keys.len()]);
        tx.enter_side(k, null_row, used)?;
        count_row(tx, counts, counter::joined(k));
        tx.require(&j.filters, done, "Filter (over joined rows)")?;
        count_row(tx, counts, counter::join_filtered(k));
        probe_joins(tx, spec, tables, used, counts, k + 1, consume)?;
    }
    tx.b.ins().jump(done, &[]);
    tx.b.switch_to_block(done);
    // Join k's columns leave scope (later code must not read values loaded inside the loop).
    tx.enter_side(k, None, used)?;
    Ok(())
}

/// One more row at row count `k`, if the loop keeps it (`StageSpec::loop_counters`).
fn count_row(tx: &mut Tx, counts: &[Option<Variable>], k: usize) {
    if let Some(v) = counts.get(k).copied().flatten() {
        let n = tx.b.use_var(v);
        let n1 = tx.b.ins().iadd_imm_s(n, 1);
        tx.b.def_var(v, n1);
    }
}

/// The key word of a stream key's value, as `JoinTable` stores it (an i64).
fn word(tx: &mut Tx, v: Value, t: &DataType) -> Value {
    let ty = tx.b.func.dfg.value_type(v);
    match t {
        DataType::Float64 => {
            // -0.0 + 0.0 is 0.0; every NaN is one NaN.
            let z = tx.b.ins().f64const(0.0);
            let sum = tx.b.ins().fadd(v, z);
            let bits = tx.b.ins().bitcast(types::I64, MemFlagsData::new(), sum);
            let nan = tx.b.ins().fcmp(FloatCC::Unordered, v, v);
            let canonical = tx.b.ins().iconst(types::I64, f64::NAN.to_bits() as i64);
            tx.b.ins().select(nan, canonical, bits)
        }
        DataType::Boolean => tx.b.ins().uextend(types::I64, v),
        _ if ty == types::I64 => v,
        _ => tx.b.ins().sextend(types::I64, v),
    }
}

/// A stream key's word, and a string's start and length.
type KeyWord = (Value, Option<(Value, Value)>);

/// The row hash of join `j`'s stream keys, as `JoinTable` hashes them, whether a key is NULL
/// (None: none can be), and each key's word.
fn hash_keys(tx: &mut Tx, j: &JoinSpec) -> Result<(Value, Option<Value>, Vec<KeyWord>), String> {
    let mut h: Option<Value> = None;
    let mut null: Option<Value> = None;
    let mut keys: Vec<KeyWord> = vec![];
    for key in &j.stream_keys {
        let t = key.data_type().map_err(|e| e.to_string())?;
        let (w, string) = if t == DataType::Utf8 {
            let Expr::Attribute(a) = key else { return Err("a computed string join key".into()) };
            let (begin, len, n) = tx.string_key(a)?;
            null = tx.or_nulls(null, n);
            let hash = tx.helpers().hash_bytes.ok_or("the string hash helper is not declared")?;
            let call = tx.b.ins().call(hash, &[begin, len]);
            (tx.b.inst_results(call)[0], Some((begin, len)))
        } else {
            let (v, n) = tx.emit(key)?;
            null = tx.or_nulls(null, n);
            (word(tx, v, &t), None)
        };
        // The first word as `mix(0, w)`: a multiply alone.
        h = Some(match h {
            None => tx.b.ins().imul_imm_s(w, HASH_K as i64),
            Some(h) => crate::hashtable::ir::mix(tx.b, h, w),
        });
        keys.push((w, string));
    }
    Ok((crate::hashtable::ir::finish(tx.b, h.ok_or("a join without keys")?), null, keys))
}

/// The pass bit of the stage filter's test for join `j` (an inner or semi join over the
/// stage's input, `StageSpec::bloom_join`): 0 when no build row can have the row's keys —
/// its Bloom bit is clear — or a key is NULL. No branches. The home slot is not read here:
/// on a large build side that load misses the cache for every row, most of which the Bloom
/// bit already drops (TPC-H Q3 ran 1.5x faster without it).
pub fn prefilter_pass(tx: &mut Tx, j: &JoinSpec, words: &[Value]) -> Result<Value, String> {
    let (h, null, _) = hash_keys(tx, j)?;
    let (bits, bit_mask) = (words[3], words[4]);
    let tag = tx.b.ins().ushr_imm_u(h, 32);
    let bit = tx.b.ins().band(tag, bit_mask);
    let word = tx.b.ins().ushr_imm_u(bit, 6);
    let off = tx.b.ins().ishl_imm_u(word, 3);
    let addr = tx.b.ins().iadd(bits, off);
    let w = tx.b.ins().load(types::I64, flags(), addr, 0);
    // Cranelift's shift amounts are taken modulo 64: `bit & 63`.
    let shifted = tx.b.ins().ushr(w, bit);
    let one = tx.b.ins().band_imm_u(shifted, 1);
    let in_bloom = tx.b.ins().ireduce(types::I8, one);
    Ok(match null {
        Some(n) => tx.b.ins().band_not(in_bloom, n),
        None => in_bloom,
    })
}

fn key_types(j: &JoinSpec) -> Result<Vec<DataType>, String> {
    j.stream_keys.iter().map(|k| k.data_type().map_err(|e| e.to_string())).collect()
}

/// The address of slot `i` of a join table: one integer-like key sits beside its slot
/// (16-byte slots, `inline`), else slots are 8 bytes.
fn slot_address(tx: &mut Tx, slots: Value, i: Value, inline: bool) -> Value {
    let off = tx.b.ins().ishl_imm_u(i, if inline { 4 } else { 3 });
    tx.b.ins().iadd(slots, off)
}

/// Hashes the stream keys of join `j` and probes its table: the first build row with equal
/// keys, or `END` (also for a NULL key), whether more rows have that key (non-zero), and
/// whether a stream key is NULL (None: none can be).
fn probe(tx: &mut Tx, j: &JoinSpec, words: &[Value]) -> Result<(Value, Value, Option<Value>), String> {
    let (slots, mask) = (words[0], words[1]);
    let (h, null, keys) = hash_keys(tx, j)?;
    let result = tx.b.create_block();
    let head = tx.b.append_block_param(result, types::I64);
    let multi = tx.b.append_block_param(result, types::I64);
    let end = tx.b.ins().iconst(types::I64, END as i64);
    let probe_loop = tx.b.create_block();
    let i_param = tx.b.append_block_param(probe_loop, types::I64);
    let start = tx.b.ins().band(h, mask);
    match null {
        Some(n) => {
            let zero = tx.b.ins().iconst(types::I64, 0);
            tx.b.ins().brif(n, result, &[BlockArg::Value(end), BlockArg::Value(zero)], probe_loop, &[BlockArg::Value(start)]);
        }
        None => {
            tx.b.ins().jump(probe_loop, &[BlockArg::Value(start)]);
        }
    }
    // Linear probing: an empty slot ends the search; a tag match compares the keys.
    tx.b.switch_to_block(probe_loop);
    let inline = inline_key(&key_types(j)?);
    let addr = slot_address(tx, slots, i_param, inline);
    let s = tx.b.ins().load(types::I64, flags(), addr, 0);
    let tagged = tx.b.create_block();
    let next_slot = tx.b.create_block();
    let empty = tx.b.ins().icmp_imm_s(IntCC::Equal, s, 0);
    let end2 = tx.b.ins().iconst(types::I64, END as i64);
    tx.b.ins().brif(empty, result, &[BlockArg::Value(end2), BlockArg::Value(s)], tagged, &[]);
    tx.b.switch_to_block(tagged);
    let x = tx.b.ins().bxor(s, h);
    let tag = tx.b.ins().ushr_imm_u(x, 32);
    let compare = tx.b.create_block();
    tx.b.ins().brif(tag, next_slot, &[], compare, &[]);
    tx.b.switch_to_block(compare);
    let low = tx.b.ins().band_imm_u(s, ROW_BITS as i64);
    let row = tx.b.ins().iadd_imm_s(low, -1);
    for (i, (w, string)) in keys.iter().enumerate() {
        let base = TABLE_WORDS + KEY_WORDS * i;
        let ok = tx.b.create_block();
        match string {
            None if inline => {
                let bk = tx.b.ins().load(types::I64, flags(), addr, 8);
                let eq = tx.b.ins().icmp(IntCC::Equal, bk, *w);
                tx.b.ins().brif(eq, ok, &[], next_slot, &[]);
            }
            None => {
                let off = tx.b.ins().ishl_imm_u(row, 3);
                let addr = tx.b.ins().iadd(words[base], off);
                let bk = tx.b.ins().load(types::I64, flags(), addr, 0);
                let eq = tx.b.ins().icmp(IntCC::Equal, bk, *w);
                tx.b.ins().brif(eq, ok, &[], next_slot, &[]);
            }
            Some((begin, len)) => string_equal(tx, &words[base..base + 3], row, *begin, *len, ok, next_slot)?,
        }
        tx.b.switch_to_block(ok);
    }
    let multi_bit = tx.b.ins().band_imm_u(s, MULTI as i64);
    tx.b.ins().jump(result, &[BlockArg::Value(row), BlockArg::Value(multi_bit)]);
    tx.b.switch_to_block(next_slot);
    let i1 = tx.b.ins().iadd_imm_s(i_param, 1);
    let i2 = tx.b.ins().band(i1, mask);
    tx.b.ins().jump(probe_loop, &[BlockArg::Value(i2)]);
    tx.b.switch_to_block(result);
    Ok((head, multi, null))
}

/// Compares a stream string (`begin`, `len`) with build row `row`'s key (offsets, bytes,
/// prefixes): lengths, then the 4-byte prefixes, inline; the other bytes by the helper only
/// on a prefix match. Jumps to `ok` or `mismatch`.
fn string_equal(
    tx: &mut Tx,
    w: &[Value],
    row: Value,
    begin: Value,
    len: Value,
    ok: cranelift_codegen::ir::Block,
    mismatch: cranelift_codegen::ir::Block,
) -> Result<(), String> {
    let (offsets, data, prefixes) = (w[0], w[1], w[2]);
    let off = tx.b.ins().ishl_imm_u(row, 2);
    let at = tx.b.ins().iadd(offsets, off);
    let start = tx.b.ins().sload32(flags(), at, 0);
    let stop = tx.b.ins().sload32(flags(), at, 4);
    let blen = tx.b.ins().isub(stop, start);
    let same_len = tx.b.ins().icmp(IntCC::Equal, blen, len);
    let len_ok = tx.b.create_block();
    tx.b.ins().brif(same_len, len_ok, &[], mismatch, &[]);
    tx.b.switch_to_block(len_ok);
    let long = tx.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, len, 4);
    let with_prefix = tx.b.create_block();
    let bytes = tx.b.create_block();
    tx.b.ins().brif(long, with_prefix, &[], bytes, &[]);
    tx.b.switch_to_block(with_prefix);
    let paddr = tx.b.ins().iadd(prefixes, off);
    let bp = tx.b.ins().load(types::I32, flags(), paddr, 0);
    // The stream value's bytes need not be aligned.
    let sp = tx.b.ins().load(types::I32, MemFlagsData::new().with_notrap(), begin, 0);
    let same_prefix = tx.b.ins().icmp(IntCC::Equal, bp, sp);
    let prefix_ok = tx.b.create_block();
    tx.b.ins().brif(same_prefix, prefix_ok, &[], mismatch, &[]);
    tx.b.switch_to_block(prefix_ok);
    let more = tx.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, len, 4);
    tx.b.ins().brif(more, bytes, &[], ok, &[]);
    tx.b.switch_to_block(bytes);
    let eq = tx.helpers().bytes_eq.ok_or("the string compare helper is not declared")?;
    let bstart = tx.b.ins().iadd(data, start);
    let call = tx.b.ins().call(eq, &[begin, bstart, len]);
    let same = tx.b.inst_results(call)[0];
    tx.b.ins().brif(same, ok, &[], mismatch, &[]);
    Ok(())
}


use crate::expr::Expr;
