//! The row loop and the fail block every generated function shares: its entry (the slots read
//! once), counted loops over the batch's rows, and the block a failure returns -1 from.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, MemFlagsData, Value};
use cranelift_frontend::FunctionBuilder;

use super::helpers::Helpers;
use super::layout::SlotLayout;

/// Generated loads and stores: trusted (aligned, never trapping) memory the runtime sized.
pub(super) fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// Loads a slot (a pointer or offset) in the entry block.
pub(super) fn slot(b: &mut FunctionBuilder, slots: Value, k: usize) -> Value {
    b.ins().load(types::I64, flags(), slots, (k * 8) as i32)
}

pub(super) fn load_columns(b: &mut FunctionBuilder, slots: Value, layout: &SlotLayout) -> Vec<Option<[Value; 4]>> {
    layout.columns.iter().map(|c| c.map(|[a, v, o, bo]| [slot(b, slots, a), slot(b, slots, v), slot(b, slots, o), slot(b, slots, bo)])).collect()
}

/// A counted loop `for i in 0..n`: calls `body` with `i` inside the loop, then returns to the
/// exit block (left current).
pub(super) fn row_loop(b: &mut FunctionBuilder, h: &Helpers, n: Value, body: &mut dyn FnMut(&mut FunctionBuilder, Value, Block) -> Result<(), String>) -> Result<(), String> {
    let zero = b.ins().iconst(types::I64, 0);
    row_loop_from(b, h, zero, n, body)
}

/// `for i in start..n` (see `row_loop`).
pub(super) fn row_loop_from(b: &mut FunctionBuilder, h: &Helpers, start: Value, n: Value, body: &mut dyn FnMut(&mut FunctionBuilder, Value, Block) -> Result<(), String>) -> Result<(), String> {
    note(b, h, || "row loop: for each (selected) row of the batch".into());
    let i = b.declare_var(types::I64);
    b.def_var(i, start);
    let header = b.create_block();
    let body_block = b.create_block();
    let next = b.create_block();
    let exit = b.create_block();
    b.ins().jump(header, &[]);
    b.switch_to_block(header);
    let iv = b.use_var(i);
    let more = b.ins().icmp(IntCC::SignedLessThan, iv, n);
    b.ins().brif(more, body_block, &[], exit, &[]);
    b.switch_to_block(body_block);
    let iv = b.use_var(i);
    body(b, iv, next)?;
    b.ins().jump(next, &[]);
    b.switch_to_block(next);
    note(b, h, || "row loop: next row".into());
    let iv = b.use_var(i);
    let inc = b.ins().iadd_imm_s(iv, 1);
    b.def_var(i, inc);
    b.ins().jump(header, &[]);
    b.switch_to_block(exit);
    note(b, h, || "row loop done: return the count".into());
    Ok(())
}

/// Marks the instructions emitted from now on as implementing `what`: EXPLAIN CODEGEN prints it
/// as a comment where it starts (a source location per note; nothing without text).
pub(super) fn note(b: &mut FunctionBuilder, helpers: &Helpers, what: impl FnOnce() -> String) {
    if let Some(notes) = &helpers.notes {
        let mut notes = notes.borrow_mut();
        notes.push(what());
        b.set_srcloc(cranelift_codegen::ir::SourceLoc::new(notes.len() as u32));
    }
}

/// The block every failure branches to. Filled through a cursor: the builder stays in the
/// current block, which Cranelift wants filled before the builder switches away from it (a
/// debug assertion).
pub(super) fn fail_block(b: &mut FunctionBuilder, helpers: &Helpers) -> Block {
    let fail = b.create_block();
    let at = b.srcloc();
    note(b, helpers, || "fail: return -1, the batch runs on the interpreter (its errors and results)".into());
    let loc = b.srcloc();
    b.func.layout.append_block(fail);
    let mut pos = FuncCursor::new(b.func).with_srcloc(loc).at_bottom(fail);
    let m1 = pos.ins().iconst(types::I64, -1);
    pos.ins().return_(&[m1]);
    b.set_srcloc(at);
    fail
}

/// Adds each (count, value) to the stage's row counts (`StageSpec::counters`): once per call,
/// from the locals the loop counted in.
pub(super) fn add_counts(b: &mut FunctionBuilder, helpers: &Helpers, slots: Value, layout: &SlotLayout, counts: &[(usize, Value)]) {
    if counts.is_empty() {
        return;
    }
    note(b, helpers, || "rows per operator: add the counts of these rows to the stage's".into());
    let base = slot(b, slots, layout.counters);
    for &(k, v) in counts {
        let offset = (k * 8) as i32;
        let old = b.ins().load(types::I64, flags(), base, offset);
        let new = b.ins().iadd(old, v);
        b.ins().store(flags(), new, base, offset);
    }
}

/// `base[j]` of a `u32` array, widened to i64 (selection vectors, pair indices, group ids).
pub(super) fn load_index(b: &mut FunctionBuilder, base: Value, j: Value) -> Value {
    let off = b.ins().ishl_imm_u(j, 2);
    let addr = b.ins().iadd(base, off);
    let v = b.ins().load(types::I32, flags(), addr, 0);
    b.ins().uextend(types::I64, v)
}

/// The entry block both functions share: their three parameters, the input column pointers
/// and the fail block.
pub(super) fn enter(b: &mut FunctionBuilder, layout: &SlotLayout, helpers: &Helpers) -> ([Value; 3], Vec<Option<[Value; 4]>>, Block) {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    // Lay the entry block out first, even before it holds an instruction.
    b.ensure_inserted_block();
    let p = b.block_params(entry).to_vec();
    let params = [p[0], p[1], p[2]];
    note(b, helpers, || "entry: the batch's column pointers and buffers, read from the slots".into());
    let cols = load_columns(b, params[0], layout);
    let fail = fail_block(b, helpers);
    (params, cols, fail)
}
