//! Streams of batches: one partition of an operator's output, pulled batch by batch, and the
//! helpers operators build theirs from.

use std::sync::Arc;

use arrow::record_batch::RecordBatch;

use crate::error::Result;
use crate::exec::control::QueryControl;
use crate::common::memory::Reservation;
use crate::exec::metrics::OperatorMetrics;
use crate::physical::adaptive::batch_bytes;

/// A partitioned result: one `Vec<RecordBatch>` per partition.
pub type Partitions = Vec<Vec<RecordBatch>>;

/// One partition of an operator's output, produced as it is pulled.
pub type BatchStream<'a> = Box<dyn Iterator<Item = Result<RecordBatch>> + 'a>;

/// A stream drained, its bytes taken from `held` batch by batch: a breaker's input fails as
/// soon as it would pass the memory limit.
pub(crate) fn collect_reserved(stream: BatchStream, held: &Reservation) -> Result<Vec<RecordBatch>> {
    stream
        .map(|b| {
            let b = b?;
            held.grow(batch_bytes(&b))?;
            Ok(b)
        })
        .collect()
}

/// A stream that `f` opens when first pulled, holding `held` (what it reserved for its inputs)
/// until it ends: a join drains its sides then and streams its output.
pub(crate) fn deferred_stream<'s>(held: Reservation, f: impl FnOnce(&Reservation) -> Result<BatchStream<'s>> + 's) -> BatchStream<'s> {
    let mut f = Some(f);
    let mut held = Some(held);
    let mut out: Option<BatchStream<'s>> = None;
    Box::new(std::iter::from_fn(move || {
        if let (Some(f), Some(h)) = (f.take(), held.as_ref()) {
            match f(h) {
                Ok(s) => out = Some(s),
                Err(e) => return Some(Err(e)),
            }
        }
        let next = out.as_mut()?.next();
        if next.is_none() {
            // Released when the output ends, not when the stream is dropped.
            out = None;
            held = None;
        }
        next
    }))
}

/// A stream whose batches and pulling time are counted on its operator, and which stops a
/// cancelled (or timed out) query before each batch: every operator checks once per batch.
pub(crate) struct Counted<'s> {
    pub(crate) inner: BatchStream<'s>,
    pub(crate) metrics: Arc<OperatorMetrics>,
    pub(crate) nanos: u64,
    pub(crate) control: &'s QueryControl,
}

impl Iterator for Counted<'_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Err(e) = self.control.check() {
            return Some(Err(e));
        }
        let start = std::time::Instant::now();
        let next = self.inner.next();
        self.nanos += start.elapsed().as_nanos() as u64;
        if let Some(Ok(b)) = &next {
            self.metrics.add_batch(b.num_rows());
        }
        next
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.metrics.add_partition(self.nanos);
    }
}

