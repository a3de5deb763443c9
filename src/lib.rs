//! kiln: a SQL query engine that plans queries the way Spark's Catalyst does and runs them over
//! Apache Arrow, operator by operator (interpreted) or as fused native stages (compiled).
//!
//! A host runs SQL text, or builds the same plans with the DataFrame API ([`functions`]):
//!
//! ```
//! use kiln::functions::*;
//! use kiln::Session;
//!
//! let session = Session::new();
//! let df = session.sql("SELECT 1 + 2 AS three").unwrap();
//! let batches = df.collect().unwrap();
//! assert_eq!(batches[0].num_rows(), 1);
//!
//! let doubled = df.select([(col("three") * 2).alias("six")]).unwrap();
//! assert_eq!(doubled.count().unwrap(), 1);
//! ```
//!
//! The public surface: [`Session`] (settings, tables, SQL, [`udf`]s, [`extensions`]),
//! [`DataFrame`] (transformations, actions, plans), [`functions`] (columns and the function
//! set), and the plan types a rule or check reads and writes ([`plan`], [`expr`], [`types`],
//! [`optimizer::Rule`], [`catalog`]). The modules under [`internals`] are the engine's own
//! (analyzer, physical planning, code generation, execution, output formats), public for the
//! command-line tool, the tests and the benches, without a stability promise.

#![warn(missing_docs)]

/// The `arrow` crate kiln is built with (the version is in the README): batches a host hands to
/// or gets from kiln are of these types, so a host needs no second `arrow` dependency.
pub use arrow;
/// The `parquet` crate kiln reads and writes Parquet files with.
pub use parquet;

pub mod catalog;
pub mod config;
#[cfg(feature = "connect")]
pub mod connect;
pub mod dataframe;
pub mod datasource;
pub mod error;
pub mod extensions;
pub mod expr;
pub mod functions;
pub mod optimizer;
pub mod plan;
pub mod session;
pub mod types;
pub mod udf;

// Internal modules, reachable at the crate root for the CLI, tests and benches (see `internals`).
#[doc(hidden)]
pub mod analyzer;
#[doc(hidden)]
pub mod codegen;
#[doc(hidden)]
pub mod common;
#[doc(hidden)]
pub mod exec;
#[doc(hidden)]
pub mod explain;
#[doc(hidden)]
pub mod format;
#[doc(hidden)]
pub mod hashtable;
#[doc(hidden)]
pub mod physical;
#[doc(hidden)]
#[cfg(feature = "cli")]
pub mod slt;
#[doc(hidden)]
pub mod sql;
#[doc(hidden)]
pub mod stats;

/// The engine's internals, public for the command-line tool, the tests and the benches; they
/// may change at any release and are not documented here (their source is). A host needs none
/// of them: what an extension reads or returns is re-exported where it is used
/// ([`extensions::PhysicalPlan`], [`QueryControl`]). The modules: `analyzer` (name
/// resolution, type coercion), `physical` (physical planning, `EnsureRequirements`), `codegen`
/// (whole-stage code generation with Cranelift), `exec` (running plans, compiled and
/// interpreted), `explain` (EXPLAIN in every mode), `format` (result text), `sql` (the
/// parser), `stats` (statistics, ANALYZE TABLE) and, with the `cli` feature, `slt`.
pub mod internals {
    pub use crate::analyzer;
    pub use crate::codegen;
    pub use crate::exec;
    pub use crate::explain;
    pub use crate::format;
    pub use crate::physical;
    #[cfg(feature = "cli")]
    pub use crate::slt;
    pub use crate::sql;
    pub use crate::stats;
}

pub use catalog::cached::StorageLevel;
pub use config::Config;
pub use common::control::QueryControl;
pub use dataframe::{DataFrame, GroupedData, RecordBatchStream};
pub use datasource::provider::{MemoryProvider, TableFunction, TableProvider};
pub use datasource::write::{SaveMode, WriteSummary};
pub use error::{KilnError, Result};
pub use explain::ExplainMode;
pub use extensions::Extensions;
pub use functions::Column;
pub use plan::JoinType;
pub use session::{Session, SessionBuilder};
pub use sql::SqlArgs;
pub use udf::{Accumulator, AggregateUdf, ScalarUdf, Signature, Volatility};
