//! Runs every tests/slt/*.slt file in both execution modes; fails listing every failed record.

use std::path::PathBuf;

use kiln::slt::{run_files, SltMode};

#[test]
fn sqllogictest_files() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("slt");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|ext| ext == "slt"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no .slt files in {}", dir.display());
    let summary = run_files(&paths, SltMode::Both);
    let report = summary.report();
    assert!(summary.failed == 0, "sqllogictest failures:\n{report}");
    print!("{report}");
}
