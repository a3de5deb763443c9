#![no_main]
//! The `parquet_read` target: see `fuzz/src/harness.rs`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = kiln_fuzz::harness::parquet_read(data) {
        panic!("{e}");
    }
});
