//! Expand (ROLLUP, CUBE, GROUPING SETS) under a partial aggregate, as Spark's `ExpandExec`
//! consumes: each row goes to the aggregate once per projection, the aggregate's keys and
//! arguments read that projection's expressions (a column, or the NULL a rolled-up level puts
//! in its place, and the grouping id). The projections are unrolled: per row, one group lookup
//! and accumulator update per projection, all in the stage's sink.

use std::collections::HashMap;
use std::sync::Arc;

use super::Flattening;
use crate::codegen::spec::{substitute, unsupported_reason, AggSpec, ExpandSpec, StageSink};
use crate::expr::{Attribute, Expr, ExprId};
use crate::physical::{AggregateMode, PhysicalPlan};

/// Whether `child` is an Expand a stage topped by `top` runs: right under a partial aggregate.
pub fn fuses_under(top: &Arc<PhysicalPlan>, child: &Arc<PhysicalPlan>) -> bool {
    matches!(top.as_ref(), PhysicalPlan::HashAggregate { mode: AggregateMode::Partial, .. }) && matches!(child.as_ref(), PhysicalPlan::Expand { .. })
}

/// Adds the Expand to the stage: its projections over the input; the aggregate above reads its
/// output columns, replaced per projection once the aggregate is flattened (`instantiate`).
pub fn flatten(projections: &[Vec<Expr>], output: &[Attribute], f: &mut Flattening) -> Result<(), String> {
    if f.expand.is_some() {
        return Err("two Expands in one stage".into());
    }
    let mut over_input = vec![];
    for p in projections {
        if p.len() != output.len() {
            return Err("an Expand projection of another width than its output".into());
        }
        let row: Vec<Expr> = p.iter().map(|e| substitute(e, &f.env)).collect();
        // A column or a NULL is checked where the aggregate reads it (`instantiate`).
        let computed = row.iter().filter(|e| !matches!(e, Expr::Attribute(_)) && !matches!(e, Expr::Literal(v) if v.is_null()));
        if let Some((e, r)) = computed.clone().find_map(|e| unsupported_reason(e).map(|r| (e, r))) {
            return Err(format!("{r} in Expand's {e}"));
        }
        if row.iter().any(|e| !e.deterministic()) {
            return Err("a non-deterministic Expand".into());
        }
        over_input.push(row);
    }
    // Above the Expand its columns stand for themselves.
    f.env = output.iter().map(|a| (a.id, a.expr())).collect();
    f.expand = Some((output.to_vec(), over_input));
    Ok(())
}

/// The aggregate `sink` once per projection, the Expand's columns replaced by the
/// projection's expressions. Only an aggregate whose groups generated code finds takes an
/// Expand (the interpreter's per-batch grouping would see each row once).
pub fn instantiate((output, projections): &(Vec<Attribute>, Vec<Vec<Expr>>), sink: &StageSink) -> Result<ExpandSpec, String> {
    let StageSink::Aggregate { keys, keys_in_code, aggregates, output: out, finish } = sink else {
        return Err("an Expand without an aggregate above it".into());
    };
    if !*keys_in_code || finish.is_some() {
        return Err("an Expand under an aggregate whose groups generated code does not find".into());
    }
    let mut sinks = vec![];
    for p in projections {
        let env: HashMap<ExprId, Expr> = output.iter().zip(p).map(|(a, e)| (a.id, e.clone())).collect();
        let keys: Vec<Expr> = keys.iter().map(|k| substitute(k, &env)).collect();
        if let Some(r) = super::group_lookup::unsupported_keys(&keys) {
            return Err(format!("{r} (an Expand projection)"));
        }
        let aggregates: Vec<AggSpec> = aggregates
            .iter()
            .map(|a| AggSpec { arg: a.arg.as_ref().map(|x| substitute(x, &env)), ..a.clone() })
            .collect();
        if let Some((x, r)) = aggregates.iter().filter_map(|a| a.arg.as_ref()).find_map(|x| unsupported_reason(x).map(|r| (x, r))) {
            return Err(format!("{r} in {x} (an Expand projection)"));
        }
        sinks.push(StageSink::Aggregate { keys, keys_in_code: true, aggregates, output: out.clone(), finish: None });
    }
    Ok(ExpandSpec { sinks })
}
