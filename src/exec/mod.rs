//! The executor: runs a physical plan over partitions on a thread pool.

pub mod eval;
pub mod interpreted;
