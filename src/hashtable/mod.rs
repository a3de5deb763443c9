//! The hash tables both execution modes share: the group-by table (`group_table`, which
//! generated code probes and inserts into), the grouper that runs it over whole columns
//! (`groups`), and the hash join's build table (`join_table`). Each file holds its table's ABI
//! next to it: the `#[repr(C)]` headers, slot layouts and offsets generated code reads
//! (`codegen/aggregate.rs`, `codegen/join.rs`), and the row hash (`common::hash::{mix,
//! finish}`) generated code emits the same.

pub mod group_table;
pub mod groups;
pub mod ir;
pub mod join_table;

/// What the string helpers' callers promise, checked in debug builds (the fuzz targets): a
/// length an Arrow string can have (i32 offsets), and bytes behind it.
pub fn value_bytes_ok(bytes: *const u8, len: i64) -> bool {
    (0..=i32::MAX as i64).contains(&len) && (len == 0 || !bytes.is_null())
}
