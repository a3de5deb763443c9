//! Data sources: Parquet files and directories, in-memory batches, generated data sets.

pub mod demo;
pub mod partitions;
pub mod parquet;
pub mod pushed_filter;
pub mod tpch;
pub mod write;
