//! kiln: a SQL query engine that plans queries the way Spark's Catalyst does and runs them over
//! Apache Arrow, operator by operator (interpreted) or as fused native stages (compiled).
//!
//! ```
//! use kiln::Session;
//!
//! let session = Session::new();
//! let df = session.sql("SELECT 1 + 2 AS three").unwrap();
//! let batches = df.collect().unwrap();
//! assert_eq!(batches[0].num_rows(), 1);
//! ```

#![warn(missing_docs)]

pub mod analyzer;
pub mod catalog;
pub mod codegen;
pub mod config;
pub mod dataframe;
pub mod datasource;
pub mod error;
pub mod exec;
pub mod explain;
pub mod extensions;
pub mod expr;
pub mod format;
pub mod functions;
pub mod optimizer;
pub mod physical;
pub mod plan;
pub mod session;
pub mod slt;
pub mod sql;
pub mod stats;
pub mod types;
pub mod udf;

pub use config::Config;
pub use dataframe::{DataFrame, GroupedData, RecordBatchStream};
pub use functions::Column;
pub use datasource::write::{SaveMode, WriteSummary};
pub use error::{KilnError, Result};
pub use explain::ExplainMode;
pub use plan::JoinType;
pub use session::{Session, SessionBuilder};
