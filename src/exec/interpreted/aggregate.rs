//! HashAggregate over one partition, as Spark's HashAggregateExec: Partial (rows -> buffers),
//! Final (buffers -> results) and Complete (rows -> results).

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, UInt32Array};
use arrow::compute::filter;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;

use super::accumulators::{new_accumulator, Accumulator};
use crate::hashtable::groups::{final_groups_expected, partial_flush_due, Grouper};
use super::{evaluate_all, make_batch, schema_of};
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr};
use crate::physical::{AggregateExpr, AggregateMode};
use crate::plan::named_outputs;

/// One aggregate being computed.
struct AggState<'a> {
    expr: &'a AggregateExpr,
    acc: Box<dyn Accumulator>,
    /// Final: positions of the buffer columns in the input.
    buffer_cols: Vec<usize>,
    /// Partial/Complete DISTINCT: the (group, args) tuples seen so far.
    seen: Option<Grouper>,
}

impl<'a> AggState<'a> {
    fn new(expr: &'a AggregateExpr, mode: AggregateMode, input: &[Attribute]) -> Result<AggState<'a>> {
        let arg_types = expr.args.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?;
        let acc = new_accumulator(expr.func, &arg_types)?;
        let mut buffer_cols = vec![];
        if mode == AggregateMode::Final {
            for b in &expr.buffer {
                let i = input
                    .iter()
                    .position(|a| a.id == b.id)
                    .ok_or_else(|| KilnError::internal(format!("aggregate buffer {b} not in the input of a final aggregate")))?;
                buffer_cols.push(i);
            }
        }
        let seen = if expr.distinct && mode != AggregateMode::Final && !expr.args.is_empty() {
            let mut types = vec![DataType::UInt32];
            for a in &expr.args {
                types.push(a.data_type()?);
            }
            Some(Grouper::new(&types)?)
        } else {
            None
        };
        Ok(AggState { expr, acc, buffer_cols, seen })
    }

    /// Feeds one input batch, whose rows belong to groups `gids`.
    fn consume(&mut self, mode: AggregateMode, batch: &RecordBatch, input: &[Attribute], gids: &[u32]) -> Result<()> {
        if mode == AggregateMode::Final {
            let state: Vec<ArrayRef> = self.buffer_cols.iter().map(|i| batch.column(*i).clone()).collect();
            return self.acc.merge(gids, &state);
        }
        let args = evaluate_all(&self.expr.args, batch, input)?;
        match &mut self.seen {
            Some(seen) => {
                let (gids, args) = first_occurrences(seen, gids, args)?;
                self.acc.update(&gids, &args)
            }
            None => self.acc.update(gids, &args),
        }
    }
}

/// The rows whose (group, args) tuple `seen` has not met before (DISTINCT).
fn first_occurrences(seen: &mut Grouper, gids: &[u32], args: Vec<ArrayRef>) -> Result<(Vec<u32>, Vec<ArrayRef>)> {
    let mut next = seen.num_groups() as u32;
    let mut keys: Vec<ArrayRef> = vec![Arc::new(UInt32Array::from(gids.to_vec()))];
    keys.extend(args.iter().cloned());
    let mut ids = vec![];
    seen.push(keys, &mut ids)?;
    // New ids are handed out in order of first appearance, so a row is new iff it gets `next`.
    let keep: Vec<bool> = ids
        .iter()
        .map(|id| {
            let new = *id == next;
            next += u32::from(new);
            new
        })
        .collect();
    let kept_gids = gids.iter().zip(&keep).filter(|(_, k)| **k).map(|(g, _)| *g).collect();
    let mask = BooleanArray::from(keep);
    let args = args.iter().map(|a| filter(a, &mask)).collect::<Result<Vec<_>, _>>()?;
    Ok((kept_gids, args))
}

/// Runs a hash aggregate over one partition.
///
/// `grouping` are named (Attribute or Alias); Partial outputs grouping columns + every
/// aggregate's `buffer`; Final/Complete output the `result` expressions, evaluated over the
/// grouping attributes and each aggregate's `result` attribute.
pub fn hash_aggregate(
    mode: AggregateMode,
    grouping: &[Expr],
    aggregates: &[AggregateExpr],
    result: &[Expr],
    input: &[Attribute],
    batches: Vec<RecordBatch>,
) -> Result<Vec<RecordBatch>> {
    let mut agg = HashAggregator::new(mode, grouping, aggregates, result, input)?;
    for batch in &batches {
        agg.push(batch)?;
    }
    agg.finish()
}

/// The columns of a partial aggregate's output (and of an aggregate's spilled groups): the
/// grouping attributes, then every aggregate's buffer.
pub fn state_attrs(grouping: &[Expr], aggregates: &[AggregateExpr]) -> Vec<Attribute> {
    let mut attrs = named_outputs(grouping);
    attrs.extend(aggregates.iter().flat_map(|a| a.buffer.iter().cloned()));
    attrs
}

/// A hash aggregate fed one batch at a time: only its groups' keys and buffers are held.
pub struct HashAggregator<'a> {
    mode: AggregateMode,
    result: &'a [Expr],
    input: Cow<'a, [Attribute]>,
    group_attrs: Vec<Attribute>,
    key_exprs: Vec<Expr>,
    grouper: Option<Grouper>,
    aggs: Vec<AggState<'a>>,
    gids: Vec<u32>,
    /// A partial aggregate: rows since it last emitted its groups, and what it emitted.
    rows_in: usize,
    emitted: Vec<RecordBatch>,
    flush_groups: usize,
}

impl<'a> HashAggregator<'a> {
    /// An aggregate with no groups yet (see [`hash_aggregate`] for the arguments).
    pub fn new(
        mode: AggregateMode,
        grouping: &'a [Expr],
        aggregates: &'a [AggregateExpr],
        result: &'a [Expr],
        input: impl Into<Cow<'a, [Attribute]>>,
    ) -> Result<HashAggregator<'a>> {
        let input = input.into();
        let group_attrs = named_outputs(grouping);
        if group_attrs.len() != grouping.len() {
            return Err(KilnError::internal("grouping expressions of a HashAggregate must be named"));
        }
        // Final reads the grouping columns the partial aggregate produced.
        let key_exprs: Vec<Expr> =
            if mode == AggregateMode::Final { group_attrs.iter().map(Attribute::expr).collect() } else { grouping.to_vec() };
        let grouper = if key_exprs.is_empty() {
            None
        } else {
            Some(Grouper::new(&key_exprs.iter().map(|e| e.data_type()).collect::<Result<Vec<_>>>()?)?)
        };
        let aggs = aggregates.iter().map(|a| AggState::new(a, mode, &input)).collect::<Result<Vec<_>>>()?;
        Ok(HashAggregator { mode, result, input, group_attrs, key_exprs, grouper, aggs, gids: Vec::new(), rows_in: 0, emitted: vec![], flush_groups: 0 })
    }

    /// A final aggregate told how many input rows are to come (see `final_groups_expected`).
    pub fn expecting_rows(mut self, rows: Option<usize>) -> Self {
        if let (AggregateMode::Final, Some(g), Some(rows)) = (self.mode, &mut self.grouper, rows) {
            g.reserve_groups(final_groups_expected(rows));
        }
        self
    }

    /// A partial aggregate that emits its groups past `groups` of them (`partial_flush_due`).
    pub fn flushing_at(mut self, groups: usize) -> Self {
        self.flush_groups = groups;
        self
    }

    /// Adds one batch of input rows.
    pub fn push(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let groups = match &mut self.grouper {
            Some(g) => {
                g.push(evaluate_all(&self.key_exprs, batch, &self.input)?, &mut self.gids)?;
                g.num_groups()
            }
            None => {
                self.gids.clear();
                self.gids.resize(batch.num_rows(), 0);
                1
            }
        };
        for agg in &mut self.aggs {
            agg.acc.resize(groups);
            agg.consume(self.mode, batch, &self.input, &self.gids)?;
        }
        self.rows_in += batch.num_rows();
        // A DISTINCT buffer counts each value once per group: emitted twice, it would count twice.
        let distinct = self.aggs.iter().any(|a| a.seen.is_some());
        if self.mode == AggregateMode::Partial && !distinct && self.grouper.is_some() && partial_flush_due(groups, self.rows_in, self.flush_groups) {
            self.emit_groups()?;
        }
        Ok(())
    }

    /// Emits the groups so far as one output batch and starts again with none.
    fn emit_groups(&mut self) -> Result<()> {
        let Some(grouper) = &mut self.grouper else { return Ok(()) };
        let groups = grouper.num_groups();
        let keys = grouper.keys()?;
        grouper.clear()?;
        let batch = self.partial_batch(keys, groups)?;
        self.emitted.push(batch);
        for agg in &mut self.aggs {
            *agg = AggState::new(agg.expr, self.mode, &self.input)?;
        }
        self.rows_in = 0;
        Ok(())
    }

    /// Whether its groups can be written out and merged later: it has keys, and no DISTINCT
    /// buffer (whose seen values a merge would count again).
    pub fn can_spill(&self) -> bool {
        self.grouper.is_some() && self.aggs.iter().all(|a| a.seen.is_none())
    }

    /// Its groups' keys and buffers (and a partial aggregate's emitted groups), the memory
    /// they held given back: it starts again with no group. A final aggregate over their
    /// columns ([`state_attrs`]) merges them.
    pub fn take_states(&mut self) -> Result<Vec<RecordBatch>> {
        let Some(grouper) = &mut self.grouper else { return Err(KilnError::internal("the groups of an aggregate without keys taken")) };
        let groups = grouper.num_groups();
        let keys = grouper.keys()?;
        grouper.release()?;
        let mut out = std::mem::take(&mut self.emitted);
        if groups > 0 {
            out.push(self.partial_batch(keys, groups)?);
        }
        for agg in &mut self.aggs {
            *agg = AggState::new(agg.expr, self.mode, &self.input)?;
        }
        self.rows_in = 0;
        Ok(out)
    }

    /// A partial aggregate's output for `groups` groups: their keys, then every aggregate's
    /// buffer columns.
    fn partial_batch(&mut self, mut columns: Vec<ArrayRef>, groups: usize) -> Result<RecordBatch> {
        let mut attrs = self.group_attrs.clone();
        for agg in &mut self.aggs {
            agg.acc.resize(groups);
            columns.extend(agg.acc.state()?);
            attrs.extend(agg.expr.buffer.iter().cloned());
        }
        make_batch(schema_of(&attrs), columns, groups)
    }

    /// Bytes its groups hold once a batch of `rows` rows has added as many groups at most:
    /// reserved before the batch runs.
    pub fn memory_size_after(&self, rows: usize) -> u64 {
        let grown = self.grouper.as_ref().map_or(0, |g| (g.memory_size_after(rows) - g.memory_size()) + rows as u64 * 16 * self.aggs.len() as u64);
        self.memory_size() + grown
    }

    /// Bytes its groups hold: the key table, and a buffer per group and aggregate (an
    /// estimate: 16 bytes each).
    pub fn memory_size(&self) -> u64 {
        let groups = self.grouper.as_ref().map_or(1, Grouper::num_groups) as u64;
        let emitted: u64 = self.emitted.iter().map(crate::physical::adaptive::batch_bytes).sum();
        self.grouper.as_ref().map_or(0, Grouper::memory_size) + groups * 16 * self.aggs.len() as u64 + emitted
    }

    /// The output of a new aggregate over `batch`, whose rows each hold one group's keys, no
    /// two the same (buffers generated code merged): each row is its own group, so the keys
    /// are not hashed again.
    pub fn finish_distinct(mut self, batch: &RecordBatch) -> Result<Vec<RecordBatch>> {
        let rows = batch.num_rows();
        let keys = match self.grouper {
            Some(_) => Some(evaluate_all(&self.key_exprs, batch, &self.input)?),
            None if rows == 1 => None,
            None => return Err(KilnError::internal(format!("{rows} merged rows of an aggregate without keys"))),
        };
        if self.mode == AggregateMode::Final {
            // Each row is one group's whole buffer: its final value read from it, not merged.
            let mut columns = keys.unwrap_or_default();
            let mut attrs = std::mem::take(&mut self.group_attrs);
            for agg in &mut self.aggs {
                let state: Vec<ArrayRef> = agg.buffer_cols.iter().map(|i| batch.column(*i).clone()).collect();
                columns.push(agg.acc.evaluate_state(&state)?);
                attrs.push(agg.expr.result.clone());
            }
            return self.results(columns, &attrs, rows);
        }
        self.gids = (0..rows as u32).collect();
        for agg in &mut self.aggs {
            agg.acc.resize(rows);
            agg.consume(self.mode, batch, &self.input, &self.gids)?;
        }
        self.finish_groups(keys, rows)
    }

    /// The aggregate's output: one batch of every group.
    pub fn finish(self) -> Result<Vec<RecordBatch>> {
        // Without grouping keys there is always exactly one group, even over no rows.
        let groups = self.grouper.as_ref().map_or(1, Grouper::num_groups);
        let keys = self.grouper.as_ref().map(Grouper::keys).transpose()?;
        self.finish_groups(keys, groups)
    }

    fn finish_groups(mut self, keys: Option<Vec<ArrayRef>>, groups: usize) -> Result<Vec<RecordBatch>> {
        let mut columns = keys.unwrap_or_default();
        if self.mode == AggregateMode::Partial {
            let last = self.partial_batch(columns, groups)?;
            let mut out = std::mem::take(&mut self.emitted);
            out.push(last);
            return Ok(out);
        }
        for agg in &mut self.aggs {
            agg.acc.resize(groups);
        }
        let mut attrs = std::mem::take(&mut self.group_attrs);
        for agg in &mut self.aggs {
            columns.push(agg.acc.evaluate()?);
            attrs.push(agg.expr.result.clone());
        }
        self.results(columns, &attrs, groups)
    }

    /// The result expressions over the groups' keys and final values (`attrs`).
    fn results(&self, columns: Vec<ArrayRef>, attrs: &[Attribute], groups: usize) -> Result<Vec<RecordBatch>> {
        // An internal batch: take types and nullability from the arrays themselves.
        let fields: Vec<Field> = attrs.iter().zip(&columns).map(|(a, c)| Field::new(&a.name, c.data_type().clone(), true)).collect();
        let grouped = make_batch(Arc::new(Schema::new(fields)), columns, groups)?;
        let out = evaluate_all(self.result, &grouped, attrs)?;
        Ok(vec![make_batch(schema_of(&named_outputs(self.result)), out, groups)?])
    }
}

#[cfg(test)]
#[path = "aggregate_tests.rs"]
mod tests;
