//! The executor: runs a physical plan over partitions on a thread pool.

pub mod adaptive;
pub mod context;
pub mod control;
pub mod executor;
pub mod fragment;
pub mod interpreted;
/// The memory pool moved to `common`; the old path stays for code not yet moved.
pub use crate::common::memory;
mod operators;

mod state;
pub mod stream;
/// Run-time metrics live on the physical operators they count.
pub use crate::physical::metrics;

pub use context::ExecContext;
pub use executor::{collect, collect_in, collect_plan, execute};
