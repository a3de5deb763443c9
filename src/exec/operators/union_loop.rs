//! A recursive CTE's loop (Spark's `UnionLoopExec`): the anchor runs as a query of its own,
//! then the recursion, planned anew over the previous step's rows (a LocalRelation in place of
//! each `UnionLoopRef`), until a step yields no row.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use super::not_this;
use crate::exec::interpreted::schema_of;
use crate::exec::stream::BatchStream;
use crate::error::{KilnError, Result};
use crate::exec::context::ExecContext;
use crate::expr::Attribute;
use crate::physical::PhysicalPlan;
use crate::plan::LogicalPlan;

/// Partition `i`: the loop's rows, all in partition 0 (the loop ran before the query).
pub(in crate::exec) fn stream(plan: &Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'_>> {
    let PhysicalPlan::UnionLoop { rows, .. } = plan.as_ref() else { return Err(not_this(plan)) };
    let rows = rows.get().ok_or_else(|| KilnError::internal("UnionLoop read before its loop ran"))?;
    Ok(Box::new(rows.clone().into_iter().filter(move |_| i == 0).map(Ok)))
}

/// Runs `plan`'s loop once, if it is a UnionLoop that has not run, and keeps its rows; each
/// step runs as a query of its own through `run_query`.
pub(in crate::exec) fn run(plan: &PhysicalPlan, ctx: &ExecContext, run_query: &dyn Fn(&Arc<PhysicalPlan>, &ExecContext) -> Result<Vec<RecordBatch>>) -> Result<()> {
    let config = ctx.config;
    let PhysicalPlan::UnionLoop { id, output, anchor, recursion, limit, rows } = plan else { return Ok(()) };
    if rows.get().is_some() {
        return Ok(());
    }
    let query = |p: &Arc<LogicalPlan>| -> Result<Vec<RecordBatch>> {
        let physical = crate::physical::plan_standalone(p, config, crate::codegen::collapse_codegen_stages)?;
        run_query(&physical, ctx)
    };
    let mut all: Vec<RecordBatch> = vec![];
    let mut total = 0usize;
    let mut step = conform(query(anchor)?, output)?;
    // Spark counts the anchor as level 1 and checks before each further step.
    let mut level: i64 = 1;
    loop {
        let n: usize = step.iter().map(|b| b.num_rows()).sum();
        if n == 0 {
            break;
        }
        total += n;
        all.extend(step.iter().cloned());
        if let Some(l) = *limit {
            if total >= l {
                all = truncate(all, l);
                break;
            }
        }
        if config.cte_recursion_row_limit >= 0 && total as i64 >= config.cte_recursion_row_limit {
            return Err(KilnError::exec(format!(
                "[RECURSION_ROW_LIMIT_EXCEEDED] Recursion row limit {} reached but query has not exhausted, try setting a larger LIMIT value when querying the CTE relation (UnionLoop {}; `spark.sql.cteRecursionRowLimit`). SQLSTATE: 42836",
                config.cte_recursion_row_limit, id.0
            )));
        }
        if config.cte_recursion_level_limit >= 0 && level > config.cte_recursion_level_limit {
            return Err(KilnError::exec(format!(
                "[RECURSION_LEVEL_LIMIT_EXCEEDED] Recursion level limit {} reached but query has not exhausted, try increasing it like 'WITH RECURSIVE t(col) MAX RECURSION LEVEL 200' (UnionLoop {}; `spark.sql.cteRecursionLevelLimit`). SQLSTATE: 42836",
                config.cte_recursion_level_limit, id.0
            )));
        }
        let previous = &step;
        let next = recursion.transform_up_with_subqueries::<KilnError>(&mut |n| match n.as_ref() {
            LogicalPlan::UnionLoopRef { id: r, output } if r == id => {
                Ok(Arc::new(LogicalPlan::LocalRelation { output: output.clone(), data: conform(previous.clone(), output)? }))
            }
            _ => Ok(n),
        })?;
        step = conform(query(&next)?, output)?;
        level += 1;
    }
    let _ = rows.set(all);
    Ok(())
}

/// The batches under the schema of `output` (the loop's, or a reference's, names and nullability).
fn conform(batches: Vec<RecordBatch>, output: &[Attribute]) -> Result<Vec<RecordBatch>> {
    let schema = schema_of(output);
    batches
        .into_iter()
        .filter(|b| b.num_rows() > 0)
        .map(|b| Ok(RecordBatch::try_new(schema.clone(), b.columns().to_vec())?))
        .collect()
}

/// The first `n` rows.
fn truncate(batches: Vec<RecordBatch>, n: usize) -> Vec<RecordBatch> {
    let mut left = n;
    let mut out = vec![];
    for b in batches {
        if left == 0 {
            break;
        }
        let take = b.num_rows().min(left);
        left -= take;
        out.push(b.slice(0, take));
    }
    out
}
