//! The fuzz targets on stable Rust, bounded: every file of `fuzz/corpus/<target>/` (the seed
//! corpora, and crashes found by `cargo fuzz` once fixed) replays through the target's function,
//! then a fixed number of freshly generated seeded inputs. The targets' logic is
//! `fuzz/src/harness.rs`, the same code the cargo-fuzz binaries run.
//!
//! `cargo test --release --test fuzz_replay -- --ignored write_seed_corpora` rewrites the
//! generated part of the seed corpora (files named `seed-*`).

use std::path::{Path, PathBuf};

#[path = "../fuzz/src/harness.rs"]
mod harness;
use harness::{Checked, Outcome, Rng};

/// The corpus folder of `target`.
fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join("corpus").join(target)
}

/// Replays `target`'s corpus, then `fresh` inputs of random bytes from `seed`: every failure
/// (named by its file, or its seed and bytes) and the sum of what was checked.
fn replay(target: &str, f: fn(&[u8]) -> Outcome, fresh: usize, seed: u64) -> (Checked, usize) {
    harness::init();
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir(target))
        .unwrap_or_else(|e| panic!("no corpus for {target}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus of {target} is empty");
    let mut failures = vec![];
    let mut total = Checked::default();
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        match f(&bytes) {
            Ok(c) => total += c,
            Err(e) => failures.push(format!("{}: {e}", file.display())),
        }
    }
    let mut rng = Rng(seed);
    for n in 0..fresh {
        let len = 8 + rng.next() as usize % 300;
        let bytes = rng.bytes(len);
        match f(&bytes) {
            Ok(c) => total += c,
            Err(e) => failures.push(format!("fresh input {n} of seed {seed:#x} ({} bytes: {bytes:02x?}): {e}", bytes.len())),
        }
    }
    assert!(failures.is_empty(), "{target}: {} of {} inputs failed:\n{}", failures.len(), files.len() + fresh, failures.join("\n\n"));
    println!("{target}: {} inputs ({} corpus files), {} compared, {} compiled", files.len() + fresh, files.len(), total.compared, total.compiled);
    (total, files.len() + fresh)
}

#[test]
fn sql_pipeline_replays() {
    let (checked, inputs) = replay("sql_pipeline", harness::sql_pipeline, 200, 0x5a1);
    // Enough inputs reach execution for the target to mean something.
    assert!(checked.compared as usize * 5 >= inputs, "only {} of {inputs} inputs ran", checked.compared);
}

#[test]
fn codegen_differential_replays() {
    let (checked, inputs) = replay("codegen_differential", harness::codegen_differential, 150, 0xc0de);
    assert!(checked.compared as usize * 2 >= inputs, "only {} of {inputs} inputs gave rows in both modes", checked.compared);
    assert!(checked.compiled as usize * 10 >= inputs * 7, "only {} of {inputs} inputs ran generated code", checked.compiled);
}

#[test]
fn parquet_read_replays() {
    let (checked, inputs) = replay("parquet_read", harness::parquet_read, 300, 0x9a59);
    // Some mutated files still read (a mutation in the data pages, or a harmless one).
    assert!(checked.compared > 0, "no file of {inputs} read");
}

#[test]
fn query_oracles_replays() {
    let (checked, inputs) = replay("query_oracles", harness::query_oracles, 150, 0x0dac);
    assert!(checked.compared as usize >= inputs, "only {} oracle checks over {inputs} inputs", checked.compared);
}

/// Writes the generated seed corpora: for each target a few inputs of random bytes (the
/// grammar-driven targets read them as decisions), and for `sql_pipeline` SQL texts, for
/// `parquet_read` the files kiln writes.
#[test]
#[ignore]
fn write_seed_corpora() {
    let mut rng = Rng(0x5eed);
    for target in ["sql_pipeline", "codegen_differential", "parquet_read", "query_oracles"] {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).expect("corpus folder");
        for n in 0..16 {
            let len = 16 + rng.next() as usize % 240;
            let mut bytes = rng.bytes(len);
            if target == "sql_pipeline" {
                // The generator, not SQL text.
                bytes[0] |= 0x80;
            }
            std::fs::write(dir.join(format!("seed-{n:02}")), bytes).expect("written");
        }
    }
    let dir = corpus_dir("sql_pipeline");
    for (n, sql) in harness::VALID.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-sql-{n}")), sql).expect("written");
    }
    let dir = corpus_dir("parquet_read");
    for (n, file) in harness::parquet_bases().iter().enumerate().filter(|(_, f)| f.len() < 16_384) {
        std::fs::write(dir.join(format!("seed-file-{n}")), file).expect("written");
    }
}
