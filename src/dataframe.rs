//! DataFrame: a planned query whose rows are computed by `collect()`.

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::error::{KilnError, Result};
use crate::explain::ExplainMode;

/// A query planned by a session. `collect()` runs it.
pub struct DataFrame {}

impl DataFrame {
    /// The result schema.
    pub fn schema(&self) -> SchemaRef {
        std::sync::Arc::new(arrow::datatypes::Schema::empty())
    }
    /// Runs the query and returns its rows.
    pub fn collect(&self) -> Result<Vec<RecordBatch>> {
        Err(KilnError::unsupported("collect"))
    }
    /// The EXPLAIN text of this query in the given mode.
    pub fn explain_string(&self, mode: ExplainMode) -> Result<String> {
        let _ = mode;
        Err(KilnError::unsupported("explain"))
    }
}
