//! A sqllogictest runner for kiln: each `.slt` file runs in a fresh session, once per execution
//! mode (compiled and/or interpreted), and every statement/query record is counted.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::DataType;
use arrow::record_batch::RecordBatch;
use sqllogictest::{DBOutput, DefaultColumnType, Record, RecordOutput, Runner, DB};

use crate::error::KilnError;
use crate::session::Session;
use crate::types::time_zone::Zone;

/// The engine name `skipif kiln` / `onlyif kiln` match.
pub const ENGINE_NAME: &str = "kiln";

/// A sqllogictest connection: one kiln session.
pub struct KilnDb {
    /// The session every record of the file runs in.
    pub session: Session,
}

impl KilnDb {
    /// A connection running its records in `session`.
    pub fn new(session: Session) -> Self {
        KilnDb { session }
    }
}

impl DB for KilnDb {
    type Error = KilnError;
    type ColumnType = DefaultColumnType;

    fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, KilnError> {
        let df = self.session.sql(sql)?;
        // Collect even for statements so runtime errors surface for `statement error`.
        let (batches, metrics) = df.collect_with_metrics()?;
        // A stage planned to compile that ran interpreted would let the compiled run pass on the
        // interpreter's answers: a failure, not a fallback (EXPLAIN CODEGEN's reasons are fine).
        if metrics.codegen.stages_fell_back > 0 {
            return Err(KilnError::internal(format!(
                "{} codegen stage(s) planned to compile fell back to the interpreter when the query ran",
                metrics.codegen.stages_fell_back
            )));
        }
        let schema = df.schema();
        if schema.fields().is_empty() {
            let n: usize = batches.iter().map(|b| b.num_rows()).sum();
            return Ok(DBOutput::StatementComplete(n as u64));
        }
        let types = schema.fields().iter().map(|f| column_type(f.data_type())).collect();
        let mut rows = Vec::new();
        for batch in &batches {
            rows.extend(render_batch(batch, df.time_zone()));
        }
        Ok(DBOutput::Rows { types, rows })
    }

    fn engine_name(&self) -> &str {
        ENGINE_NAME
    }
}

/// `I` for integers, `R` for doubles and decimals, `T` for everything else.
fn column_type(dt: &DataType) -> DefaultColumnType {
    match dt {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => DefaultColumnType::Integer,
        DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal128(_, _)
        | DataType::Decimal256(_, _) => DefaultColumnType::FloatingPoint,
        _ => DefaultColumnType::Text,
    }
}

fn render_batch(batch: &RecordBatch, zone: Zone) -> Vec<Vec<String>> {
    (0..batch.num_rows())
        .map(|row| batch.columns().iter().map(|col| render_value(col, row, zone)).collect())
        .collect()
}

/// One cell as sqllogictest text: `NULL`, `(empty)` for "", otherwise as Spark prints it.
fn render_value(col: &ArrayRef, row: usize, zone: Zone) -> String {
    // A NullArray (type of a bare NULL) has no validity buffer, so `is_null` says false.
    if col.logical_nulls().is_some_and(|n| n.is_null(row)) {
        return "NULL".to_string();
    }
    match crate::format::format_value_in(col.as_ref(), row, zone) {
        None => "NULL".to_string(),
        Some(s) if s.is_empty() => "(empty)".to_string(),
        Some(s) => s,
    }
}

/// Which execution paths to run each file through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SltMode {
    /// Whole-stage codegen on (`spark.sql.codegen.wholeStage=true`).
    Compiled,
    /// Whole-stage codegen off: every operator interpreted.
    Interpreted,
    /// Each file in both modes: compiled, then interpreted.
    Both,
}

/// Every file runs with adaptive execution on and off (`spark.sql.adaptive.enabled`):
/// re-planning between query stages must never change an answer.
const ADAPTIVE: [&str; 2] = ["true", "false"];

impl SltMode {
    /// `(label, spark.sql.codegen.wholeStage value)` per run.
    fn runs(self) -> &'static [(&'static str, &'static str)] {
        match self {
            SltMode::Compiled => &[("compiled", "true")],
            SltMode::Interpreted => &[("interpreted", "false")],
            SltMode::Both => &[("compiled", "true"), ("interpreted", "false")],
        }
    }
}

/// Counts over all records run; in `Both` mode each record counts once per mode.
#[derive(Debug, Default, Clone)]
pub struct SltSummary {
    /// Records that passed.
    pub passed: usize,
    /// Records that failed.
    pub failed: usize,
    /// One entry per failed record (or unreadable file): where, which mode, and why.
    pub failures: Vec<String>,
}

impl SltSummary {
    /// The report text, ending with `N passed, M failed`.
    pub fn report(&self) -> String {
        let mut out = String::new();
        for f in &self.failures {
            let _ = writeln!(out, "FAILED: {}", f.trim_end());
        }
        let _ = writeln!(out, "{} passed, {} failed", self.passed, self.failed);
        out
    }
}

/// Prints the failures, then the line `N passed, M failed`.
pub fn print_summary(summary: &SltSummary) {
    print!("{}", summary.report());
}

/// Runs every file in every requested mode, continuing past failing records.
pub fn run_files(paths: &[PathBuf], mode: SltMode) -> SltSummary {
    let mut summary = SltSummary::default();
    for path in paths.iter().flat_map(|p| slt_files(p)) {
        for (label, codegen) in mode.runs() {
            for adaptive in ADAPTIVE {
                run_file(&path, label, codegen, adaptive, &mut summary);
            }
        }
    }
    summary
}

/// A file as given; a folder's `*.slt` files, sorted (an unreadable folder is passed on, so
/// its error is reported as a failed file).
fn slt_files(path: &Path) -> Vec<PathBuf> {
    if !path.is_dir() {
        return vec![path.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(path) else { return vec![path.to_path_buf()] };
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "slt")).collect();
    files.sort();
    files
}

fn run_file(path: &Path, mode: &str, codegen: &str, adaptive: &str, summary: &mut SltSummary) {
    let label = mode;
    let shown = if adaptive == "true" { mode.to_string() } else { format!("{mode}, AQE off") };
    if path.is_dir() {
        summary.failed += 1;
        summary.failures.push(format!("{}: cannot list the folder", path.display()));
        return;
    }
    let name = path.display();
    // Strict mode: a rule that breaks a plan's invariants fails the record, not just its rows.
    // Files start in UTC, whatever the machine's zone (Spark's answers were taken in UTC).
    let session = match Session::builder()
        .config("spark.sql.codegen.wholeStage", codegen)
        .config("spark.sql.adaptive.enabled", adaptive)
        .config("kiln.optimizer.strict", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .build()
    {
        Ok(s) => s,
        Err(e) => {
            summary.failed += 1;
            summary.failures.push(format!("{name} [{shown}]: cannot create session: {e}"));
            return;
        }
    };
    let records = match sqllogictest::parse_file::<DefaultColumnType>(path) {
        Ok(r) => r,
        Err(e) => {
            summary.failed += 1;
            summary.failures.push(format!("{name} [{shown}]: cannot parse: {e}"));
            return;
        }
    };
    // Every connection in the file shares the file's session (clones share state).
    let mut runner = Runner::new(move || {
        let session = session.clone();
        async move { Ok::<_, KilnError>(KilnDb::new(session)) }
    });
    // Lets a file say `skipif interpreted` / `onlyif compiled`.
    runner.add_label(label);
    // Type letters are checked too: they pin Spark's result types (avg(int) is R, sum(int) is I).
    runner.with_column_validator(sqllogictest::strict_column_validator);
    for record in records {
        if let Record::Halt { .. } = record {
            break;
        }
        let counted = matches!(record, Record::Statement { .. } | Record::Query { .. });
        // An engine panic fails this record, not the whole run.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runner.run(record.clone())));
        match result {
            Ok(Ok(RecordOutput::Nothing)) => {} // skipped by skipif/onlyif, or not a test record
            Ok(Ok(_)) => {
                if counted {
                    summary.passed += 1;
                }
            }
            Ok(Err(e)) => {
                summary.failed += 1;
                summary.failures.push(format!("[{shown}] {}", e.display(false)));
            }
            Err(panic) => {
                summary.failed += 1;
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".to_string());
                let loc = record_location(&record);
                summary.failures.push(format!("[{shown}] {name}:{loc}: engine panicked: {msg}"));
            }
        }
    }
}

fn record_location(record: &Record<DefaultColumnType>) -> String {
    match record {
        Record::Statement { loc, .. } | Record::Query { loc, .. } => loc.line().to_string(),
        _ => "?".to_string(),
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_record_per_mode_and_keeps_going_after_failures() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.slt");
        let script = "query I\nSELECT 1\n----\n1\n\nquery I\nSELECT 1\n----\n2\n\n\
                      statement error DIVIDE_BY_ZERO\nSELECT 1 / 0\n\n\
                      skipif kiln\nquery I\nSELECT 1\n----\n3\n";
        std::fs::write(&path, script).expect("write slt");
        let summary = run_files(&[path], SltMode::Both);
        // Two modes, each with AQE on and off.
        assert_eq!((summary.passed, summary.failed), (8, 4), "{}", summary.report());
        assert!(summary.report().ends_with("8 passed, 4 failed\n"));
    }
}
