//! Grouping in generated code: the row's group id from the shared group table
//! (`hashtable/group_table.rs`), hashed, probed, compared and — on the int layout —
//! inserted in IR. Rust is called only to grow the table (per new group, when it fills) and,
//! on the general layout, to add a new group (its string bytes are copied) and to compare the
//! bytes of strings whose length and prefix matched.

use arrow::datatypes::DataType;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, Block, BlockArg, InstBuilder, MemFlagsData, Value};

use crate::codegen::expr::Tx;
use crate::codegen::rows::flags;
use crate::hashtable::group_table::{int_layout, key_kind, offsets as off, KeyKind};
use crate::expr::Expr;

/// Why generated code cannot compute the group of `keys`, or None.
pub fn unsupported_keys(keys: &[Expr]) -> Option<String> {
    if keys.len() > 64 {
        return Some("more than 64 grouping keys".into());
    }
    for k in keys {
        let t = match k.data_type() {
            Ok(t) => t,
            Err(e) => return Some(e.to_string()),
        };
        if key_kind(&t).is_none() {
            return Some(format!("a grouping key of type {}", crate::types::spark_type_name(&t)));
        }
        if t == DataType::Utf8 {
            // A column, or the NULL an Expand puts in a rolled-up column's place.
            if !matches!(k, Expr::Attribute(_)) && !matches!(k, Expr::Literal(v) if v.is_null()) {
                return Some(format!("a string grouping key that is not a column: {k}"));
            }
        } else if let Some(r) = crate::codegen::spec::unsupported_reason(k) {
            return Some(format!("{r} in grouping key {k}"));
        }
    }
    None
}

fn hash_add(tx: &mut Tx, h: Value, w: Value) -> Value {
    crate::hashtable::ir::mix(tx.b, h, w)
}

fn hash_finish(tx: &mut Tx, h: Value) -> Value {
    crate::hashtable::ir::finish(tx.b, h)
}

/// `v` widened to an i64 word (booleans zero-extended).
fn word(tx: &mut Tx, v: Value) -> Value {
    let ty = tx.b.func.dfg.value_type(v);
    if ty == types::I64 {
        v
    } else if ty == types::I8 {
        tx.b.ins().uextend(types::I64, v)
    } else {
        tx.b.ins().sextend(types::I64, v)
    }
}

/// 0 where `null` is set, else `v`.
fn zero_if_null(tx: &mut Tx, v: Value, null: Option<Value>) -> Value {
    let Some(n) = null else { return v };
    let z = tx.b.ins().iconst(types::I64, 0);
    tx.b.ins().select(n, z, v)
}

/// `group_table::short_word` of the `n` bytes at `addr` (0 <= n <= 7; with `four_only`, n >= 4
/// reads just the first four bytes, as `len_prefix` does). At most two loads, none past the bytes.
fn short_word(tx: &mut Tx, addr: Value, n: Value, four_only: bool) -> Value {
    let done = tx.b.create_block();
    let out = tx.b.append_block_param(done, types::I64);
    let wide = tx.b.create_block();
    let narrow = tx.b.create_block();
    let bytes = tx.b.create_block();
    let ge4 = tx.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, 4);
    tx.b.ins().brif(ge4, wide, &[], narrow, &[]);
    tx.b.switch_to_block(wide);
    let lo = tx.b.ins().uload32(flags(), addr, 0);
    let w = if four_only {
        lo
    } else {
        let end = tx.b.ins().iadd(addr, n);
        let hi = tx.b.ins().uload32(flags(), end, -4);
        let hi = tx.b.ins().ishl_imm_u(hi, 32);
        tx.b.ins().bor(lo, hi)
    };
    tx.b.ins().jump(done, &[BlockArg::Value(w)]);
    tx.b.switch_to_block(narrow);
    let zero = tx.b.ins().iconst(types::I64, 0);
    let some = tx.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, n, 0);
    tx.b.ins().brif(some, bytes, &[], done, &[BlockArg::Value(zero)]);
    tx.b.switch_to_block(bytes);
    let b0 = tx.b.ins().uload8(types::I64, flags(), addr, 0);
    let half = tx.b.ins().ushr_imm_u(n, 1);
    let mid = tx.b.ins().iadd(addr, half);
    let b1 = tx.b.ins().uload8(types::I64, flags(), mid, 0);
    let end = tx.b.ins().iadd(addr, n);
    let b2 = tx.b.ins().uload8(types::I64, flags(), end, -1);
    let b1 = tx.b.ins().ishl_imm_u(b1, 8);
    let b2 = tx.b.ins().ishl_imm_u(b2, 16);
    let w = tx.b.ins().bor(b0, b1);
    let w = tx.b.ins().bor(w, b2);
    tx.b.ins().jump(done, &[BlockArg::Value(w)]);
    tx.b.switch_to_block(done);
    out
}

/// `group_table::hash_string`: the `len_prefix` word `first`, then the bytes past the first four
/// in 8-byte words and a `short_word` tail.
fn hash_string(tx: &mut Tx, h: Value, first: Value, begin: Value, len: Value) -> Value {
    let h = hash_add(tx, h, first);
    let header = tx.b.create_block();
    let (offset, hv) = (tx.b.append_block_param(header, types::I64), tx.b.append_block_param(header, types::I64));
    let body = tx.b.create_block();
    let tail = tx.b.create_block();
    let done = tx.b.create_block();
    let out = tx.b.append_block_param(done, types::I64);
    let long = tx.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, len, 4);
    let four = tx.b.ins().iconst(types::I64, 4);
    tx.b.ins().brif(long, header, &[BlockArg::Value(four), BlockArg::Value(h)], done, &[BlockArg::Value(h)]);
    tx.b.switch_to_block(header);
    let end = tx.b.ins().iadd_imm_s(offset, 8);
    let whole = tx.b.ins().icmp(IntCC::SignedLessThanOrEqual, end, len);
    tx.b.ins().brif(whole, body, &[], tail, &[]);
    tx.b.switch_to_block(body);
    let at = tx.b.ins().iadd(begin, offset);
    let w = tx.b.ins().load(types::I64, flags(), at, 0);
    let h1 = hash_add(tx, hv, w);
    tx.b.ins().jump(header, &[BlockArg::Value(end), BlockArg::Value(h1)]);
    tx.b.switch_to_block(tail);
    let rest = tx.b.ins().isub(len, offset);
    let has_rest = tx.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, rest, 0);
    let with_tail = tx.b.create_block();
    tx.b.ins().brif(has_rest, with_tail, &[], done, &[BlockArg::Value(hv)]);
    tx.b.switch_to_block(with_tail);
    let at = tx.b.ins().iadd(begin, offset);
    let w = short_word(tx, at, rest, false);
    let h2 = hash_add(tx, hv, w);
    tx.b.ins().jump(done, &[BlockArg::Value(h2)]);
    tx.b.switch_to_block(done);
    out
}

/// One key's words in a general row (and, for a string, its start and length).
struct KeyWords {
    kind: KeyKind,
    words: Vec<Value>,
    string: Option<(Value, Value)>,
}

/// Emits the group id (an i64) of the current row: `header` addresses the table's header.
pub fn group_id(tx: &mut Tx, keys: &[Expr], header: Value) -> Result<Value, String> {
    let types_: Vec<DataType> = keys.iter().map(|k| k.data_type().map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
    let found = tx.b.create_block();
    let gid = tx.b.append_block_param(found, types::I64);
    if int_layout(&types_) {
        int_group_id(tx, &keys[0], header, found)?;
    } else {
        let (h, null_mask, parts) = general_key_words(tx, keys, &types_)?;
        general_group_id(tx, header, h, null_mask, &parts, found)?;
    }
    tx.b.switch_to_block(found);
    Ok(gid)
}

/// Counts a group just added, growing the table when it is full; jumps to `found` with it.
fn group_added(tx: &mut Tx, header: Value, g: Value, found: Block) -> Result<(), String> {
    let [grow, _, _] = tx.helpers.group.ok_or("grouping without the group table's helpers")?;
    let g1 = tx.b.ins().iadd_imm_s(g, 1);
    tx.b.ins().store(flags(), g1, header, off::GROUPS);
    let at = tx.b.ins().load(types::I64, flags(), header, off::GROW_AT);
    let full = tx.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, g1, at);
    let grow_block = tx.b.create_block();
    tx.b.ins().brif(full, grow_block, &[], found, &[BlockArg::Value(g)]);
    tx.b.switch_to_block(grow_block);
    let call = tx.b.ins().call(grow, &[header]);
    let r = tx.b.inst_results(call)[0];
    let bad = tx.b.ins().icmp_imm_s(IntCC::SignedLessThan, r, 0);
    let fail = tx.fail;
    tx.b.ins().brif(bad, fail, &[], found, &[BlockArg::Value(g)]);
    Ok(())
}

/// The int layout (one integer key, its word the slot's): probes the slots in IR and inserts a
/// new key in IR; jumps to `found` with the group id.
fn int_group_id(tx: &mut Tx, key: &Expr, header: Value, found: Block) -> Result<(), String> {
    let (v, null) = tx.emit(key)?;
    let k = word(tx, v);
    if let Some(n) = null {
        let null_block = tx.b.create_block();
        let new_null = tx.b.create_block();
        let valid = tx.b.create_block();
        tx.b.ins().brif(n, null_block, &[], valid, &[]);
        tx.b.switch_to_block(null_block);
        let g = tx.b.ins().load(types::I64, flags(), header, off::NULL_GID);
        let none = tx.b.ins().icmp_imm_s(IntCC::Equal, g, -1);
        tx.b.ins().brif(none, new_null, &[], found, &[BlockArg::Value(g)]);
        tx.b.switch_to_block(new_null);
        let g = tx.b.ins().load(types::I64, flags(), header, off::GROUPS);
        tx.b.ins().store(flags(), g, header, off::NULL_GID);
        let rows = tx.b.ins().load(types::I64, flags(), header, off::ROWS);
        let at = tx.b.ins().ishl_imm_u(g, 3);
        let at = tx.b.ins().iadd(rows, at);
        let z = tx.b.ins().iconst(types::I64, 0);
        tx.b.ins().store(flags(), z, at, 0);
        group_added(tx, header, g, found)?;
        tx.b.switch_to_block(valid);
    }
    // A row with the key of the row before (clustered data) takes its group without a
    // probe. Cranelift starts the variables at 0 (no key seen yet) on entry.
    let (last_key, last_gid, seen) = (tx.b.declare_var(types::I64), tx.b.declare_var(types::I64), tx.b.declare_var(types::I8));
    let (lk, lg, sn) = (tx.b.use_var(last_key), tx.b.use_var(last_gid), tx.b.use_var(seen));
    let same_key = tx.b.ins().icmp(IntCC::Equal, lk, k);
    let reuse = tx.b.ins().band(same_key, sn);
    let lookup = tx.b.create_block();
    let remember = tx.b.create_block();
    let new_gid = tx.b.append_block_param(remember, types::I64);
    tx.b.ins().brif(reuse, found, &[BlockArg::Value(lg)], lookup, &[]);
    tx.b.switch_to_block(lookup);
    let h = crate::hashtable::ir::hash_int(tx.b, k);
    let mask = tx.b.ins().load(types::I64, flags(), header, off::MASK);
    let gids = tx.b.ins().load(types::I64, flags(), header, off::SLOT_GIDS);
    let words = tx.b.ins().load(types::I64, flags(), header, off::SLOT_WORDS);
    let ProbeStart { probe, i, compare, next, insert_block, at, g32 } = start_probe(tx, h, mask, gids);
    // The slot's word address, computed here to dominate the insert block too.
    let wat = tx.b.ins().ishl_imm_u(i, 3);
    let wat = tx.b.ins().iadd(words, wat);
    let empty = tx.b.ins().icmp_imm_s(IntCC::Equal, g32, -1);
    tx.b.ins().brif(empty, insert_block, &[], compare, &[]);
    tx.b.switch_to_block(compare);
    let w = tx.b.ins().load(types::I64, flags(), wat, 0);
    let same = tx.b.ins().icmp(IntCC::Equal, w, k);
    let g = tx.b.ins().uextend(types::I64, g32);
    tx.b.ins().brif(same, remember, &[BlockArg::Value(g)], next, &[]);
    tx.b.switch_to_block(next);
    let i1 = tx.b.ins().iadd_imm_s(i, 1);
    let i1 = tx.b.ins().band(i1, mask);
    tx.b.ins().jump(probe, &[BlockArg::Value(i1)]);
    tx.b.switch_to_block(insert_block);
    let g = tx.b.ins().load(types::I64, flags(), header, off::GROUPS);
    let g32 = tx.b.ins().ireduce(types::I32, g);
    tx.b.ins().store(flags(), g32, at, 0);
    tx.b.ins().store(flags(), k, wat, 0);
    let rows = tx.b.ins().load(types::I64, flags(), header, off::ROWS);
    let rat = tx.b.ins().ishl_imm_u(g, 3);
    let rat = tx.b.ins().iadd(rows, rat);
    tx.b.ins().store(flags(), k, rat, 0);
    group_added(tx, header, g, remember)?;
    tx.b.switch_to_block(remember);
    tx.b.def_var(last_key, k);
    tx.b.def_var(last_gid, new_gid);
    let one = tx.b.ins().iconst(types::I8, 1);
    tx.b.def_var(seen, one);
    tx.b.ins().jump(found, &[BlockArg::Value(new_gid)]);
    Ok(())
}

/// The general layout's words of the row's keys: the hash, the NULL mask and each key's words.
fn general_key_words(tx: &mut Tx, keys: &[Expr], types_: &[DataType]) -> Result<(Value, Value, Vec<KeyWords>), String> {
    // General layout: the row's words and hash.
    let mut h = tx.b.ins().iconst(types::I64, 0);
    let mut null_mask = tx.b.ins().iconst(types::I64, 0);
    let mut parts = vec![];
    for (k, (e, t)) in keys.iter().zip(types_).enumerate() {
        let kind = key_kind(t).ok_or("a grouping key the table does not hold")?;
        let null = match kind {
            KeyKind::Str => {
                let (begin, len, null) = match e {
                    Expr::Attribute(a) => {
                        let (begin, _, len, null) = tx.string_value(a)?;
                        (begin, len, null)
                    }
                    // A NULL (under an Expand): no bytes, the key's NULL bit set.
                    Expr::Literal(v) if v.is_null() => {
                        let zero = tx.b.ins().iconst(types::I64, 0);
                        (zero, zero, Some(tx.b.ins().iconst(types::I8, 1)))
                    }
                    _ => return Err("a string grouping key that is not a column".into()),
                };
                let len = zero_if_null(tx, len, null);
                let prefix = short_word(tx, begin, len, true);
                let prefix = tx.b.ins().ishl_imm_u(prefix, 32);
                let lenw = tx.b.ins().band_imm_u(len, 0xFFFF_FFFF);
                let wa = tx.b.ins().bor(lenw, prefix);
                h = hash_string(tx, h, wa, begin, len);
                parts.push(KeyWords { kind, words: vec![wa, begin], string: Some((begin, len)) });
                null
            }
            _ => {
                let (v, null) = tx.emit(e)?;
                let words = match kind {
                    KeyKind::Float => {
                        let bits = tx.b.ins().bitcast(types::I64, MemFlagsData::new(), v);
                        let z = tx.b.ins().f64const(0.0);
                        let is_zero = tx.b.ins().fcmp(FloatCC::Equal, v, z);
                        let is_nan = tx.b.ins().fcmp(FloatCC::Unordered, v, v);
                        let zero = tx.b.ins().iconst(types::I64, 0);
                        let nan = tx.b.ins().iconst(types::I64, f64::NAN.to_bits() as i64);
                        let bits = tx.b.ins().select(is_zero, zero, bits);
                        let bits = tx.b.ins().select(is_nan, nan, bits);
                        vec![zero_if_null(tx, bits, null)]
                    }
                    KeyKind::Wide => {
                        let wide = if tx.b.func.dfg.value_type(v) == types::I128 { v } else { tx.b.ins().sextend(types::I128, v) };
                        let (lo, hi) = tx.b.ins().isplit(wide);
                        vec![zero_if_null(tx, lo, null), zero_if_null(tx, hi, null)]
                    }
                    _ => {
                        let w = word(tx, v);
                        vec![zero_if_null(tx, w, null)]
                    }
                };
                for w in &words {
                    h = hash_add(tx, h, *w);
                }
                parts.push(KeyWords { kind, words, string: None });
                null
            }
        };
        if let Some(n) = null {
            let n = tx.b.ins().uextend(types::I64, n);
            let bit = tx.b.ins().ishl_imm_u(n, k as i64);
            null_mask = tx.b.ins().bor(null_mask, bit);
        }
    }
    Ok((h, null_mask, parts))
}

/// The general layout: probes the slots by hash, compares the group's row word by word (and
/// long strings' bytes in Rust); a new group is added by Rust. Jumps to `found` with the id.
fn general_group_id(tx: &mut Tx, header: Value, h: Value, null_mask: Value, parts: &[KeyWords], found: Block) -> Result<(), String> {
    let [_, insert, bytes_equal] = tx.helpers.group.ok_or("grouping without the group table's helpers")?;
    let h = hash_add(tx, h, null_mask);
    let h = hash_finish(tx, h);
    let row_words = 1 + parts.iter().map(|p| p.words.len()).sum::<usize>();
    let mask = tx.b.ins().load(types::I64, flags(), header, off::MASK);
    let gids = tx.b.ins().load(types::I64, flags(), header, off::SLOT_GIDS);
    let words = tx.b.ins().load(types::I64, flags(), header, off::SLOT_WORDS);
    let rows = tx.b.ins().load(types::I64, flags(), header, off::ROWS);
    let ProbeStart { probe, i, compare, next, insert_block, g32, .. } = start_probe(tx, h, mask, gids);
    let empty = tx.b.ins().icmp_imm_s(IntCC::Equal, g32, -1);
    tx.b.ins().brif(empty, insert_block, &[], compare, &[]);
    tx.b.switch_to_block(compare);
    let wat = tx.b.ins().ishl_imm_u(i, 3);
    let wat = tx.b.ins().iadd(words, wat);
    let w = tx.b.ins().load(types::I64, flags(), wat, 0);
    let same_hash = tx.b.ins().icmp(IntCC::Equal, w, h);
    let g = tx.b.ins().uextend(types::I64, g32);
    let rows_ok = tx.b.create_block();
    tx.b.ins().brif(same_hash, rows_ok, &[], next, &[]);
    tx.b.switch_to_block(rows_ok);
    // The group's row against this row's words, word by word.
    let row = tx.b.ins().imul_imm_s(g, (row_words * 8) as i64);
    let row = tx.b.ins().iadd(rows, row);
    let mut expected: Vec<(usize, Value)> = vec![(0, null_mask)];
    let mut at_word = 1;
    let mut strings = vec![];
    for p in parts {
        match p.kind {
            KeyKind::Str => {
                expected.push((at_word, p.words[0]));
                strings.push((at_word, p.string));
            }
            _ => expected.extend(p.words.iter().enumerate().map(|(j, w)| (at_word + j, *w))),
        }
        at_word += p.words.len();
    }
    for (wi, v) in expected {
        let stored = tx.b.ins().load(types::I64, flags(), row, (wi * 8) as i32);
        let same = tx.b.ins().icmp(IntCC::Equal, stored, v);
        let cont = tx.b.create_block();
        tx.b.ins().brif(same, cont, &[], next, &[]);
        tx.b.switch_to_block(cont);
    }
    for (wi, s) in strings {
        let Some((begin, len)) = s else { continue };
        // Length and prefix matched: the bytes past the prefix, only for longer strings.
        let long = tx.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, len, 4);
        let compare_bytes = tx.b.create_block();
        let cont = tx.b.create_block();
        tx.b.ins().brif(long, compare_bytes, &[], cont, &[]);
        tx.b.switch_to_block(compare_bytes);
        let stored = tx.b.ins().load(types::I64, flags(), row, ((wi + 1) * 8) as i32);
        let a = tx.b.ins().iadd_imm_s(stored, 4);
        let b = tx.b.ins().iadd_imm_s(begin, 4);
        let n = tx.b.ins().iadd_imm_s(len, -4);
        let call = tx.b.ins().call(bytes_equal, &[a, b, n]);
        let eq = tx.b.inst_results(call)[0];
        tx.b.ins().brif(eq, cont, &[], next, &[]);
        tx.b.switch_to_block(cont);
    }
    tx.b.ins().jump(found, &[BlockArg::Value(g)]);
    tx.b.switch_to_block(next);
    let i1 = tx.b.ins().iadd_imm_s(i, 1);
    let i1 = tx.b.ins().band(i1, mask);
    tx.b.ins().jump(probe, &[BlockArg::Value(i1)]);
    // A new group: the row goes to the scratch row and Rust copies it (and its strings) in.
    tx.b.switch_to_block(insert_block);
    let scratch = tx.b.ins().load(types::I64, flags(), header, off::SCRATCH);
    tx.b.ins().store(flags(), null_mask, scratch, 0);
    let mut wi = 1;
    for p in parts {
        for w in &p.words {
            tx.b.ins().store(flags(), *w, scratch, (wi * 8) as i32);
            wi += 1;
        }
    }
    let call = tx.b.ins().call(insert, &[header, h, i]);
    let g = tx.b.inst_results(call)[0];
    let bad = tx.b.ins().icmp_imm_s(IntCC::SignedLessThan, g, 0);
    let fail = tx.fail;
    tx.b.ins().brif(bad, fail, &[], found, &[BlockArg::Value(g)]);
    Ok(())
}

/// The blocks of a linear probe of the group table's slots and what its first block read.
struct ProbeStart {
    probe: Block,
    /// The slot being probed.
    i: Value,
    compare: Block,
    next: Block,
    insert_block: Block,
    /// The slot's group id's address.
    at: Value,
    /// The slot's group id (-1: empty).
    g32: Value,
}

/// Starts probing at slot `h & mask`: jumps to the probe block and, in it, loads the slot's
/// group id from `gids`; the caller branches on it to its compare and insert blocks.
fn start_probe(tx: &mut Tx, h: Value, mask: Value, gids: Value) -> ProbeStart {
    let i0 = tx.b.ins().band(h, mask);
    let probe = tx.b.create_block();
    let i = tx.b.append_block_param(probe, types::I64);
    let compare = tx.b.create_block();
    let next = tx.b.create_block();
    let insert_block = tx.b.create_block();
    tx.b.ins().jump(probe, &[BlockArg::Value(i0)]);
    tx.b.switch_to_block(probe);
    let at = tx.b.ins().ishl_imm_u(i, 2);
    let at = tx.b.ins().iadd(gids, at);
    let g32 = tx.b.ins().load(types::I32, flags(), at, 0);
    ProbeStart { probe, i, compare, next, insert_block, at, g32 }
}
