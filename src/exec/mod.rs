//! The executor: runs a physical plan over partitions on a thread pool.

pub mod eval;
pub mod executor;
pub mod interpreted;
pub mod metrics;

pub use executor::{collect, collect_in, execute};
