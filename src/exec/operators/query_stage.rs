//! `QueryStage` (adaptive execution's finished stage) and `ShuffleRead` (Spark's
//! `AQEShuffleReadExec`: a finished shuffle's partitions read coalesced, or a skewed one
//! split). A shuffle stage's partition has one reader; a broadcast's is read by every task.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use super::not_this;
use crate::error::{KilnError, Result};
use crate::exec::stream::BatchStream;
use crate::physical::adaptive::ReadPart;
use crate::physical::{PhysicalPlan, QueryStageKind};

/// Partition `i` of a finished stage, or of a read of one.
pub(in crate::exec) fn stream(plan: &Arc<PhysicalPlan>, i: usize) -> Result<BatchStream<'_>> {
    match plan.as_ref() {
        PhysicalPlan::QueryStage { output, kind, .. } => {
            if *kind == QueryStageKind::Shuffle {
                return Ok(output.take(i)?.into_stream());
            }
            Ok(Box::new(output.partition(i)?.into_iter().map(Ok)))
        }
        PhysicalPlan::ShuffleRead { spec, child } => {
            let PhysicalPlan::QueryStage { output, .. } = child.as_ref() else {
                return Err(KilnError::internal("a shuffle read over something other than a query stage"));
            };
            let batches = match spec.parts.get(i) {
                Some(ReadPart::Partitions(start, end)) if spec.reads_once() => {
                    let parts = (*start..*end).map(|p| output.take(p)).collect::<Result<Vec<_>>>()?;
                    return Ok(Box::new(parts.into_iter().flat_map(|p| p.into_stream())));
                }
                Some(ReadPart::Partitions(start, end)) => (*start..*end).map(|p| output.partition(p)).collect::<Result<Vec<_>>>()?.concat(),
                Some(ReadPart::Slice { partition, index, of }) => slice_rows(output.partition(*partition)?, *index, *of),
                None => vec![],
            };
            Ok(Box::new(batches.into_iter().map(Ok)))
        }
        _ => Err(not_this(plan)),
    }
}

/// Part `index` of `of` equal parts of some batches' rows.
fn slice_rows(batches: Vec<RecordBatch>, index: usize, of: usize) -> Vec<RecordBatch> {
    let total: usize = batches.iter().map(|b| b.num_rows()).sum();
    let of = of.max(1);
    let (from, to) = (total * index / of, total * (index + 1) / of);
    let mut out = vec![];
    let mut at = 0;
    for b in batches {
        let (start, end) = (at, at + b.num_rows());
        at = end;
        let (lo, hi) = (start.max(from), end.min(to));
        if lo < hi {
            out.push(b.slice(lo - start, hi - lo));
        }
    }
    out
}

