//! The slot layout of a stage's functions: which `u64` slot holds each pointer the generated
//! code reads (columns, outputs, join tables, group table, resume state), and the columns the
//! stage's expressions read.

use super::spec::{OutputColumn, StageSink, StageSpec};
use crate::expr::Expr;

/// Where the generated functions find their pointers: slot `k` of the `u64` slot array.
#[derive(Debug, Clone, Default)]
pub struct SlotLayout {
    /// Per input column that the code reads: values, validity bitmap, validity bit offset,
    /// values bit offset (booleans).
    pub columns: Vec<Option<[usize; 4]>>,
    /// Group id per selected row (aggregates with keys).
    pub gids: Option<usize>,
    /// The group table's header (aggregates whose keys generated code hashes); the
    /// accumulators are the table's per-group payload.
    pub table: Option<usize>,
    /// Base of the accumulator memory (aggregates).
    pub acc: Option<usize>,
    /// Per output column computed by code: values buffer and validity bytes.
    pub outputs: Vec<Option<[usize; 2]>>,
    /// Per join: the first of its table's words (`JoinTable::pointers`), then its NULL row.
    pub tables: Vec<usize>,
    /// Stages with joins: per emitted row, the stream row then each join's build row (u32
    /// arrays), for the columns copied as they are and for the probe's materialized rows.
    pub rows_out: Vec<usize>,
    /// The indexed sink of an aggregate over joins: per join, each row's build row.
    pub build_sel: Vec<usize>,
    /// Fused joins that emit rows: the stream position to start at, the output capacity, and
    /// where a full output leaves [resume position, rows written].
    pub resume: Option<[usize; 3]>,
    /// The stage's row counters (`StageSpec::counters`, u64s the functions add to once per
    /// call): rows per operator inside the stage.
    pub counters: usize,
    /// Number of slots.
    pub len: usize,
}

/// Every expression the stage evaluates: its filter and post-join conditions, then the sink's
/// computed columns or aggregate arguments.
pub(super) fn stage_expressions(spec: &StageSpec) -> Vec<&Expr> {
    let mut exprs: Vec<&Expr> = spec.conditions.iter().chain(spec.join_conditions()).collect();
    exprs.extend(spec.joins.iter().flat_map(|j| &j.stream_keys));
    for sink in spec.sinks() {
        match sink {
            StageSink::Output { columns, .. } => exprs.extend(columns.iter().filter_map(|c| match c {
                OutputColumn::Computed(e) => Some(e),
                OutputColumn::Copied(_) => None,
            })),
            StageSink::Aggregate { keys, keys_in_code, aggregates, .. } => {
                exprs.extend(aggregates.iter().filter_map(|a| a.arg.as_ref()));
                exprs.extend(aggregates.iter().flat_map(|a| &a.merge));
                if *keys_in_code {
                    exprs.extend(keys);
                }
            }
        }
    }
    exprs
}

/// Columns the stage's expressions read (by position among `StageSpec::columns`).
pub(super) fn used_columns(spec: &StageSpec) -> Vec<bool> {
    let exprs = stage_expressions(spec);
    columns_of(spec, exprs.into_iter())
}

/// Input columns read by `exprs`.
pub(super) fn columns_of<'e>(spec: &StageSpec, exprs: impl Iterator<Item = &'e Expr>) -> Vec<bool> {
    let columns = spec.columns();
    let mut used = vec![false; columns.len()];
    for e in exprs {
        e.visit(&mut |x| {
            if let Expr::Attribute(a) = x {
                if let Some(i) = columns.iter().position(|c| c.id == a.id) {
                    used[i] = true;
                }
            }
        });
    }
    used
}

/// True for an aggregate over joins: a probe function materializes the joined rows, the
/// interpreter's `Grouper` gives their group ids (when grouped), and the sink reads the rows by
/// index.
pub fn indexed_sink(spec: &StageSpec) -> bool {
    !spec.joins.is_empty() && matches!(&spec.sink, StageSink::Aggregate { .. })
}

/// Assigns slots to the pointers the stage's functions read.
pub fn layout(spec: &StageSpec) -> SlotLayout {
    let mut next = 0;
    let mut take = |n: usize| {
        let start = next;
        next += n;
        start
    };
    let columns = used_columns(spec)
        .into_iter()
        .map(|u| u.then(|| {
            let s = take(4);
            [s, s + 1, s + 2, s + 3]
        }))
        .collect();
    let (gids, acc, outputs) = match &spec.sink {
        StageSink::Aggregate { keys, keys_in_code: true, .. } if !keys.is_empty() => (None, None, vec![]),
        StageSink::Aggregate { keys, .. } => (if keys.is_empty() { None } else { Some(take(1)) }, Some(take(1)), vec![]),
        StageSink::Output { columns, .. } => (
            None,
            None,
            columns
                .iter()
                .map(|c| match c {
                    OutputColumn::Computed(_) => {
                        let s = take(2);
                        Some([s, s + 1])
                    }
                    OutputColumn::Copied(_) => None,
                })
                .collect(),
        ),
    };
    let tables = spec.joins.iter().map(|j| take(j.table_words())).collect();
    let emits_rows = !spec.joins.is_empty() && (matches!(spec.sink, StageSink::Output { .. }) || indexed_sink(spec));
    let rows_out = if emits_rows { (0..=spec.joins.len()).map(|_| take(1)).collect() } else { vec![] };
    let build_sel = if indexed_sink(spec) { spec.joins.iter().map(|_| take(1)).collect() } else { vec![] };
    let resume = emits_rows.then(|| [take(1), take(1), take(1)]);
    let table = spec.groups_in_code().then(|| take(1));
    let counters = take(1);
    SlotLayout { columns, gids, table, acc, outputs, tables, rows_out, build_sel, resume, counters, len: next }
}
