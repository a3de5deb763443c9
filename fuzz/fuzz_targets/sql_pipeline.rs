#![no_main]
//! The `sql_pipeline` target: see `fuzz/src/harness.rs`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = kiln_fuzz::harness::sql_pipeline(data) {
        panic!("{e}");
    }
});
