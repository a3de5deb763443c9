//! A stage's produce side: the sink and probe functions, which run the row loop over the
//! selected rows, walk the stage's joins (`operators::hash_probe`) and hand each (joined) row to
//! the stage's top operator (`operators::project`, `operators::hash_aggregate`).

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, Block, InstBuilder, Value};
use cranelift_frontend::{FunctionBuilder, Variable};

use super::expr::Tx;
use super::rows::flags;
use super::helpers::Helpers;
use super::layout::{columns_of, indexed_sink, used_columns, SlotLayout};
use super::rows::{add_counts, enter, load_index, note, row_loop, row_loop_from, slot};
use super::spec::{StageJoinType, StageSink, StageSpec};

/// Where a sink's rows come from.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    /// The selected stream rows (`sel`, or row j when the stage has no filter), each probing
    /// the stage's joins in generated code.
    Stream,
    /// Joined rows materialized by the probe: stream rows in `sel`, build rows in `build_sel`.
    Indexed,
}

/// What a function does with each (joined) row.
#[derive(Clone, Copy, PartialEq)]
enum Consumer {
    /// The stage's sink: output columns or accumulators.
    Sink,
    /// Only the rows' indices, into `rows_out` (the probe of an indexed sink).
    Indices,
}

/// The sink function: `fn(slots, sel, count) -> status` over the selected rows (`sel` is
/// ignored when the stage has no filter: row j is then row j). Output sinks return the rows
/// written, -2 when the output is full (see `SlotLayout::resume`), -1 on failure.
pub fn build_sink(b: &mut FunctionBuilder, spec: &StageSpec, layout: &SlotLayout, no_nulls: bool, helpers: &Helpers) -> Result<(), String> {
    let source = if indexed_sink(spec) { Source::Indexed } else { Source::Stream };
    build_rows_fn(b, spec, layout, no_nulls, helpers, source, Consumer::Sink)
}

/// The probe function of an indexed sink: the joined rows' indices, in `rows_out`.
pub fn build_probe(b: &mut FunctionBuilder, spec: &StageSpec, layout: &SlotLayout, no_nulls: bool, helpers: &Helpers) -> Result<(), String> {
    build_rows_fn(b, spec, layout, no_nulls, helpers, Source::Stream, Consumer::Indices)
}

fn build_rows_fn(
    b: &mut FunctionBuilder,
    spec: &StageSpec,
    layout: &SlotLayout,
    no_nulls: bool,
    helpers: &Helpers,
    source: Source,
    consumer: Consumer,
) -> Result<(), String> {
    let ([slots, sel, count], cols, fail) = enter(b, layout, helpers);
    let gids = layout.gids.map(|k| slot(b, slots, k));
    let acc = layout.acc.map(|k| slot(b, slots, k));
    let group_table = layout.table.map(|k| slot(b, slots, k));
    let outs: Vec<Option<[Value; 2]>> = layout.outputs.iter().map(|o| o.map(|[v, n]| [slot(b, slots, v), slot(b, slots, n)])).collect();
    let tables: Vec<Vec<Value>> =
        spec.joins.iter().zip(&layout.tables).map(|(j, t)| (0..j.table_words()).map(|w| slot(b, slots, t + w)).collect()).collect();
    let rows_out: Vec<Value> = layout.rows_out.iter().map(|k| slot(b, slots, *k)).collect();
    let build_sel: Vec<Value> = layout.build_sel.iter().map(|k| slot(b, slots, *k)).collect();
    let resume = layout.resume.map(|[s, c, st]| [slot(b, slots, s), slot(b, slots, c), slot(b, slots, st)]);
    // The no-NULLs variant has no selection when its filter cannot drop a row (see `select`).
    let filtered = if no_nulls { spec.has_filter_without_nulls() } else { spec.has_filter() };
    // A probe emits row indices only: it reads the columns its joins test, not the sink's.
    let used = match consumer {
        Consumer::Indices => columns_of(spec, spec.joins.iter().flat_map(|j| &j.stream_keys).chain(spec.join_conditions())),
        Consumer::Sink => used_columns(spec),
    };
    let columns = spec.columns();
    let sides: Vec<usize> = spec.joins.iter().map(|j| j.offset).collect();
    let counts = matches!(spec.sink, StageSink::Output { .. }) || consumer == Consumer::Indices;
    let emitted_count = b.declare_var(types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.def_var(emitted_count, zero);
    // Rows per join (and per Filter over its rows), counted in locals over the whole call.
    let loop_counts: Vec<(usize, Variable)> = match source {
        Source::Stream => spec
            .loop_counters()
            .into_iter()
            .map(|k| {
                let v = b.declare_var(types::I64);
                b.def_var(v, zero);
                (k, v)
            })
            .collect(),
        Source::Indexed => vec![],
    };
    let mut row_counts: Vec<Option<Variable>> = vec![None; spec.counters()];
    for (k, v) in &loop_counts {
        row_counts[*k] = Some(*v);
    }
    let start = match (source, resume) {
        (Source::Stream, Some([s, ..])) => Some(s),
        _ => None,
    };
    let mut body = |b: &mut FunctionBuilder, j: Value, next: Block| -> Result<(), String> {
        note(b, helpers, || if consumer == Consumer::Indices { "probe: the next selected row".into() } else { "sink: the next selected row, its columns".into() });
        let row = if filtered || source == Source::Indexed { load_index(b, sel, j) } else { j };
        let build_rows = match source {
            // Semi and anti joins' build columns are out of scope after the join.
            Source::Indexed => build_sel
                .iter()
                .zip(&spec.joins)
                .map(|(bs, jn)| matches!(jn.join_type, StageJoinType::Inner | StageJoinType::Outer).then(|| load_index(b, *bs, j)))
                .collect(),
            Source::Stream => vec![None; sides.len()],
        };
        let row_start_at = if resume.is_some() { b.use_var(emitted_count) } else { zero };
        // A full output resumes at this row: its rows are counted again then, not now.
        let row_start_counts: Vec<(usize, Value)> = if resume.is_some() { loop_counts.iter().map(|(k, v)| (*k, b.use_var(*v))).collect() } else { vec![] };
        let mut tx = Tx { b: &mut *b, input: columns, sides: sides.clone(), cols: cols.clone(), row, build_rows, fail, loaded: vec![], no_nulls, helpers };
        tx.preload(&used)?;
        let mut consume = |tx: &mut Tx| -> Result<(), String> {
            // Rows are written densely at `at` (aggregates count nothing).
            let at = if counts { tx.b.use_var(emitted_count) } else { j };
            if let (Source::Stream, Some([_, cap, state])) = (source, resume) {
                // A full output hands back where to resume: this stream row, from its first row.
                note(tx.b, tx.helpers, || "sink: output full? return -2 with where to resume".into());
                let full = tx.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, at, cap);
                let stop = tx.b.create_block();
                let cont = tx.b.create_block();
                tx.b.ins().brif(full, stop, &[], cont, &[]);
                tx.b.switch_to_block(stop);
                tx.b.ins().store(flags(), j, state, 0);
                tx.b.ins().store(flags(), row_start_at, state, 8);
                add_counts(tx.b, tx.helpers, slots, layout, &row_start_counts);
                let m2 = tx.b.ins().iconst(types::I64, -2);
                tx.b.ins().return_(&[m2]);
                tx.b.switch_to_block(cont);
            }
            // The indexed sink reads its rows from `rows_out`'s copies: it writes none.
            if source == Source::Stream && !rows_out.is_empty() {
                note(tx.b, tx.helpers, || "probe: write the joined row's stream and build row indices".into());
                let rows: Vec<Value> = std::iter::once(row).chain(tx.build_rows.clone().into_iter().map(|r| r.unwrap_or(zero))).collect();
                for (ptr, r) in rows_out.iter().zip(rows) {
                    let off = tx.b.ins().ishl_imm_u(at, 2);
                    let addr = tx.b.ins().iadd(*ptr, off);
                    let r32 = tx.b.ins().ireduce(types::I32, r);
                    tx.b.ins().store(flags(), r32, addr, 0);
                }
            }
            if consumer == Consumer::Sink {
                consume_row(tx, spec, &outs, (group_table, gids, acc), j, at)?;
            }
            if counts {
                note(tx.b, tx.helpers, || "sink: one more row written".into());
                let next_at = tx.b.ins().iadd_imm_s(at, 1);
                tx.b.def_var(emitted_count, next_at);
            }
            Ok(())
        };
        match source {
            Source::Stream => super::operators::hash_probe::probe_joins(&mut tx, spec, &tables, &used, &row_counts, 0, &mut consume)?,
            Source::Indexed => consume(&mut tx)?,
        }
        let _ = next;
        Ok(())
    };
    match start {
        Some(s) => row_loop_from(b, helpers, s, count, &mut body)?,
        None => row_loop(b, helpers, count, &mut body)?,
    }
    // Output sinks return how many rows they wrote; aggregate sinks 0 (or their row count).
    let written = b.use_var(emitted_count);
    let counted: Vec<(usize, Value)> = loop_counts.iter().map(|(k, v)| (*k, b.use_var(*v))).collect();
    add_counts(b, helpers, slots, layout, &counted);
    b.ins().return_(&[written]);
    b.seal_all_blocks();
    Ok(())
}

/// The sink's work for one row: the stage's top operator consumes it (its output columns at
/// `at`, or its accumulators' updates), under an Expand once per projection.
fn consume_row(
    tx: &mut Tx,
    spec: &StageSpec,
    outs: &[Option<[Value; 2]>],
    (table, gids, acc): (Option<Value>, Option<Value>, Option<Value>),
    j: Value,
    at: Value,
) -> Result<(), String> {
    let sinks = spec.sinks();
    for (p, sink) in sinks.iter().enumerate() {
        if sinks.len() > 1 {
            note(tx.b, tx.helpers, || format!("Expand: projection {} of {}", p + 1, sinks.len()));
        }
        match sink {
            StageSink::Output { columns, output } => super::operators::project::consume(tx, columns, output, outs, at)?,
            StageSink::Aggregate { keys, aggregates, .. } => super::operators::hash_aggregate::consume(tx, keys, aggregates, (table, gids, acc), j)?,
        }
    }
    Ok(())
}
