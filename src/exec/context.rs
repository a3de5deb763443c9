//! What a query runs under: its settings, its control (cancellation, deadline, memory budget,
//! progress), the compiled-stage cache and what the run counts. One value, passed from the
//! host's entry (`DataFrame::collect`, `execute_stream`, a plan fragment) down to every
//! operator.

use std::sync::{Arc, Mutex};

use arrow::record_batch::RecordBatch;

use crate::codegen::StageCache;
use crate::config::Config;
use crate::error::{KilnError, Result};
use crate::exec::control::QueryControl;
use crate::common::memory::MemoryPool;
use crate::exec::metrics::{CodegenMetrics, PlanMetrics};
use crate::physical::PhysicalPlan;

/// A query run's context.
pub struct ExecContext<'a> {
    /// The session's settings as the query was planned.
    pub config: &'a Config,
    /// Cancellation, the deadline and the memory budget every operator checks.
    pub control: Arc<QueryControl>,
    /// Compiled stages, shared across the session's queries.
    pub cache: &'a StageCache,
    /// What code generation did (stages compiled, cache hits, fallbacks).
    pub metrics: &'a CodegenMetrics,
    /// What each operator did (rows, time, memory).
    pub ops: &'a PlanMetrics,
    /// What a plan fragment's `FragmentInput` leaves read (none for a whole query).
    pub inputs: FragmentInputs,
}

impl<'a> ExecContext<'a> {
    /// A context for a run of `plan` under `config`'s limits (`kiln.query.timeout`,
    /// `kiln.memory.limit`), with a control of its own.
    pub fn new(plan: &PhysicalPlan, config: &'a Config, cache: &'a StageCache, metrics: &'a CodegenMetrics, ops: &'a PlanMetrics) -> ExecContext<'a> {
        ExecContext::with_control(governed(plan, config), config, cache, metrics, ops)
    }

    /// A context whose control the host holds (to cancel the run or watch its progress).
    pub fn with_control(control: Arc<QueryControl>, config: &'a Config, cache: &'a StageCache, metrics: &'a CodegenMetrics, ops: &'a PlanMetrics) -> ExecContext<'a> {
        ExecContext { config, control, cache, metrics, ops, inputs: FragmentInputs::default() }
    }

    /// The same context with `inputs` for a plan fragment's leaves.
    pub fn with_inputs(self, inputs: FragmentInputs) -> ExecContext<'a> {
        ExecContext { inputs, ..self }
    }

    /// `Err` once the query was cancelled or ran past its deadline.
    pub fn check(&self) -> Result<()> {
        self.control.check()
    }

    /// The query's memory budget.
    pub fn memory(&self) -> &Arc<MemoryPool> {
        self.control.memory()
    }
}

/// A control for a run of `plan` with `config`'s timeout and memory limit.
pub fn governed(plan: &PhysicalPlan, config: &Config) -> Arc<QueryControl> {
    let control = QueryControl::for_plan(plan);
    limit(&control, config);
    control
}

/// Applies `config`'s timeout and memory limit to `control` (a host's control keeps the first
/// deadline set).
pub fn limit(control: &QueryControl, config: &Config) {
    if !config.query_timeout.is_zero() {
        control.set_timeout(config.query_timeout);
    }
    control.memory().set_limit(config.memory_limit);
    control.spill().set_limit(config.spill_limit);
    control.spill().set_compression(config.spill_compression);
}

/// One input of a fragment: its batches, pulled as the fragment runs.
pub type InputBatches = Box<dyn Iterator<Item = Result<RecordBatch>> + Send>;

/// The inputs a fragment's `FragmentInput` leaves read, by index; each is read once.
#[derive(Default)]
pub struct FragmentInputs(Vec<Mutex<Option<InputBatches>>>);

impl FragmentInputs {
    /// Inputs 0, 1, ... in order.
    pub fn new(inputs: Vec<InputBatches>) -> FragmentInputs {
        FragmentInputs(inputs.into_iter().map(|i| Mutex::new(Some(i))).collect())
    }

    /// Input `index`, taken by the leaf that reads it.
    pub(crate) fn take(&self, index: usize) -> Result<InputBatches> {
        let slot = self.0.get(index).ok_or_else(|| KilnError::exec(format!("[KILN_FRAGMENT_INPUT_MISSING] the fragment reads input {index}, but {} were given", self.0.len())))?;
        let mut slot = slot.lock().map_err(|_| KilnError::internal("a fragment input's lock poisoned by a panic"))?;
        slot.take().ok_or_else(|| KilnError::exec(format!("[KILN_FRAGMENT_INPUT_READ_TWICE] fragment input {index} is read by more than one leaf or task")))
    }
}
