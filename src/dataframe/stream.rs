//! `DataFrame::execute_stream`: a result consumed batch by batch, never held whole.

use std::sync::mpsc::{sync_channel, Receiver};

use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use arrow::record_batch::{RecordBatch, RecordBatchReader};

use super::DataFrame;
use crate::error::Result;

/// The batches of a running query, as Arrow's [`RecordBatchReader`]. The query runs on a
/// thread of its own, at most two batches ahead of the reader; dropping the stream stops it.
pub struct RecordBatchStream {
    schema: SchemaRef,
    batches: Receiver<std::result::Result<RecordBatch, ArrowError>>,
}

impl Iterator for RecordBatchStream {
    type Item = std::result::Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.batches.recv().ok()
    }
}

impl RecordBatchReader for RecordBatchStream {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl DataFrame {
    /// [`DataFrame::execute_stream`] under `control`: [`QueryControl::cancel`](crate::QueryControl::cancel)
    /// from any thread ends the stream with [`KilnError::Cancelled`](crate::KilnError::Cancelled)
    /// as its last item; the session's timeout and memory limit apply as well.
    pub fn execute_stream_with_control(&self, control: &std::sync::Arc<crate::QueryControl>) -> Result<RecordBatchStream> {
        DataFrame { control: Some(control.clone()), ..self.clone() }.execute_stream()
    }

    /// Runs the query and returns its rows as a stream of batches, so a host can consume a
    /// result larger than memory. Errors arrive as the stream's items (Arrow's
    /// `ExternalError` holding the [`crate::KilnError`]; [`KilnError::from_stream`](crate::KilnError::from_stream) unwraps it).
    ///
    /// ```
    /// let session = kiln::Session::new();
    /// let df = session.sql("SELECT 1 AS one UNION ALL SELECT 2").unwrap();
    /// let rows: usize = df.execute_stream().unwrap().map(|b| b.unwrap().num_rows()).sum();
    /// assert_eq!(rows, 2);
    /// ```
    pub fn execute_stream(&self) -> Result<RecordBatchStream> {
        if let std::borrow::Cow::Owned(df) = self.for_run()? {
            return df.execute_stream();
        }
        let schema = self.schema();
        let (plan, config, session, out_schema) = (self.plans.physical.clone(), self.config.clone(), self.session.clone(), schema.clone());
        // Governed as `collect` is; a reader that drops the stream stops the run.
        let control = self.run_control();
        spawn_stream(schema, move |sink| run_batches(&plan, &config, &session, control, out_schema, sink))
    }

    /// Runs the query under `control` on the caller's thread, each batch handed to `sink` as
    /// it is produced (false from it stops the query): a host that consumes batches as they
    /// come, without the thread and the hand-offs of [`DataFrame::execute_stream`].
    pub fn for_each_batch_with_control(&self, control: &std::sync::Arc<crate::QueryControl>, sink: &mut dyn FnMut(RecordBatch) -> bool) -> Result<()> {
        let df = DataFrame { control: Some(control.clone()), ..self.clone() };
        if let std::borrow::Cow::Owned(df) = df.for_run()? {
            return df.for_each_batch_with_control(control, sink);
        }
        let mut failed = None;
        run_batches(&df.plans.physical, &df.config, &df.session, df.run_control(), df.schema(), &mut |b| match b {
            Ok(b) => sink(b),
            Err(e) => {
                failed = Some(e);
                false
            }
        })?;
        failed.map_or(Ok(()), |e| Err(e.into()))
    }
}

/// Runs `plan` under `control`, each non-empty batch handed to `sink` with the result's
/// schema: its columns carry the analyzed plan's names and nullability.
fn run_batches(
    plan: &std::sync::Arc<crate::physical::PhysicalPlan>,
    config: &crate::config::Config,
    session: &std::sync::Arc<dyn super::Planner>,
    control: std::sync::Arc<crate::QueryControl>,
    out_schema: SchemaRef,
    sink: &mut dyn FnMut(std::result::Result<RecordBatch, ArrowError>) -> bool,
) -> Result<()> {
    let (metrics, ops) = (crate::exec::metrics::CodegenMetrics::default(), crate::exec::metrics::PlanMetrics::default());
    let ctx = crate::exec::ExecContext::with_control(control, config, session.stage_cache(), &metrics, &ops);
    crate::exec::executor::for_each_batch(plan, &ctx, |b| b.num_rows() == 0 || sink(RecordBatch::try_new(out_schema.clone(), b.columns().to_vec())))
}

/// Runs `job` on a thread of its own, each batch it hands its sink sent to the returned
/// stream (at most two ahead of the reader); the sink returns false once the reader is gone.
pub(crate) fn spawn_stream(
    schema: SchemaRef,
    job: impl FnOnce(&mut dyn FnMut(std::result::Result<RecordBatch, ArrowError>) -> bool) -> Result<()> + Send + 'static,
) -> Result<RecordBatchStream> {
    let (tx, rx) = sync_channel(2);
    std::thread::Builder::new()
        .name("kiln-stream".into())
        .spawn(move || {
            let run = job(&mut |b| tx.send(b).is_ok());
            if let Err(e) = run {
                let _ = tx.send(Err(ArrowError::ExternalError(Box::new(e))));
            }
        })
        .map_err(|e| crate::error::KilnError::exec(format!("cannot start the thread of a result stream: {e}")))?;
    Ok(RecordBatchStream { schema, batches: rx })
}

