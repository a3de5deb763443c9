//! Tables pyspark 4.3 wrote with each of its writer settings (INT96, TIMESTAMP_MILLIS/MICROS,
//! LEGACY rebase, writeLegacyFormat, partition folders, CHAR/VARCHAR, CSV, JSON) and files
//! pyarrow wrote (unsigned integers, every timestamp unit, INT96 without Spark's metadata),
//! read by kiln in both execution modes, AQE on and off: every answer must equal Spark's,
//! recorded beside the files by tests/data/spark-written/make_fixtures.py.

use std::path::PathBuf;

use kiln::slt::{run_files, SltMode};

#[test]
fn spark_written_files_read_as_spark_reads_them() {
    let answers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/spark-written/answers.slt");
    assert!(answers.exists(), "missing {}", answers.display());
    // The answers name the folders relative to the crate, as `cargo test` runs from there.
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).expect("the crate folder");
    let summary = run_files(&[answers], SltMode::Both);
    let report = summary.report();
    assert!(summary.failed == 0 && summary.passed > 400, "Spark-written files:\n{report}");
    print!("{report}");
}
