#![no_main]
//! The `codegen_differential` target: see `fuzz/src/harness.rs`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = kiln_fuzz::harness::codegen_differential(data) {
        panic!("{e}");
    }
});
