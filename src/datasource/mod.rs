//! Data sources: Parquet files and directories, in-memory batches, generated data sets.
