//! The fuzz targets' logic, shared with the stable replay test (`tests/fuzz_replay.rs`
//! includes `harness.rs` by path).

pub mod harness;
