#![no_main]
//! The `query_oracles` target: see `fuzz/src/harness.rs`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = kiln_fuzz::harness::query_oracles(data) {
        panic!("{e}");
    }
});
