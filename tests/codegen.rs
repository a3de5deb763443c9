//! Golden files of generated code, in the style of Cranelift's filetests.
//!
//! Each `codegen-tests/<topic>/<case>.test` holds `;;` notes, a `test precise` or `test check`
//! line, optional `set key=value` lines, `query <sql>`, then `----` and the expectation:
//! - `precise`: the whole `EXPLAIN CODEGEN` text (ids and timings normalized). A mismatch prints
//!   a diff; `KILN_BLESS=1 cargo test --release --test codegen` rewrites the expectation.
//! - `check`: `; check: text` (a later line contains text), `; nextln: text` (the very next
//!   line does), `; not: text` (no line between the matches around it does, or after the last
//!   match when no check follows).
//!
//! Queries run over `t` (every type generated code handles, with NULLs) and the shop tables.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, StringArray,
};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use kiln::{ExplainMode, Session};

mod common;

fn types_table() -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("l", DataType::Int64, true),
        Field::new("f", DataType::Float64, true),
        Field::new("d", DataType::Decimal128(9, 2), true),
        Field::new("e", DataType::Decimal128(20, 4), true),
        Field::new("dt", DataType::Date32, true),
        Field::new("b", DataType::Boolean, true),
        Field::new("k", DataType::Utf8, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])),
        Arc::new(Int64Array::from(vec![Some(10), Some(20), None])),
        Arc::new(Float64Array::from(vec![Some(0.5), None, Some(2.0)])),
        Arc::new(Decimal128Array::from(vec![Some(125), Some(-50), None]).with_precision_and_scale(9, 2).expect("decimal")),
        Arc::new(Decimal128Array::from(vec![None, Some(10_000), Some(5)]).with_precision_and_scale(20, 4).expect("decimal")),
        Arc::new(Date32Array::from(vec![Some(10_000), Some(10_500), None])),
        Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
        Arc::new(StringArray::from(vec![Some("x"), Some("y"), None])),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).expect("batch")
}

/// tinyint, smallint and float columns: generated code loads them widened.
fn narrow_table() -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("y", DataType::Int8, true),
        Field::new("s", DataType::Int16, true),
        Field::new("r", DataType::Float32, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int8Array::from(vec![Some(1), None, Some(-128)])),
        Arc::new(Int16Array::from(vec![Some(300), Some(-2), None])),
        Arc::new(Float32Array::from(vec![Some(0.1), Some(f32::NAN), None])),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).expect("batch")
}

fn session(settings: &[(String, String)]) -> Session {
    let mut b = Session::builder().config("spark.sql.shuffle.partitions", "4");
    for (k, v) in settings {
        b = b.config(k.clone(), v.clone());
    }
    let s = b.build().expect("settings");
    s.register_batches("t", vec![types_table()]).expect("t");
    s.register_batches("n", vec![narrow_table()]).expect("n");
    s.register_batches("orders", vec![kiln::datasource::demo::shop_orders()]).expect("orders");
    s.register_batches("customers", vec![kiln::datasource::demo::shop_customers()]).expect("customers");
    s
}

/// `#123` -> `#n`, `[plan_id=4]` -> `[plan_id=n]`, timings and sizes -> `n`.
fn normalize(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = if let Some(start) = line.find("(codeSize: ") {
            let end = line[start..].find(')').map_or(line.len(), |e| start + e + 1);
            format!("{}(codeSize: n; compileTime: n){}", &line[..start], &line[end..])
        } else {
            line.to_string()
        };
        out.push_str(&common::mask_ids(&line));
        out.push('\n');
    }
    out
}

struct Case {
    precise: bool,
    settings: Vec<(String, String)>,
    query: String,
    header: String,
    expected: String,
}

fn parse(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (head, expected) = text.split_once("\n----\n").unwrap_or_else(|| panic!("{}: no ---- line", path.display()));
    let mut case = Case { precise: false, settings: vec![], query: String::new(), header: format!("{head}\n----\n"), expected: expected.to_string() };
    for line in head.lines() {
        if let Some(mode) = line.strip_prefix("test ") {
            case.precise = mode.trim() == "precise";
        } else if let Some(kv) = line.strip_prefix("set ") {
            let (k, v) = kv.split_once('=').unwrap_or_else(|| panic!("{}: bad set line", path.display()));
            case.settings.push((k.trim().to_string(), v.trim().to_string()));
        } else if let Some(q) = line.strip_prefix("query ") {
            case.query = q.to_string();
        }
    }
    case
}

/// Runs the `; check:` / `; nextln:` / `; not:` directives; the error names the first miss.
fn check(actual: &str, directives: &str) -> Result<(), String> {
    let lines: Vec<&str> = actual.lines().collect();
    let mut pos = 0usize;
    // `not:` texts waiting for the next match, which bounds their range (FileCheck's CHECK-NOT).
    let mut nots: Vec<&str> = vec![];
    let not_in = |nots: &mut Vec<&str>, range: &[&str], from: usize| -> Result<(), String> {
        for want in nots.drain(..) {
            if let Some(i) = range.iter().position(|l| l.contains(want)) {
                return Err(format!("not: `{want}` found at line {}", from + i));
            }
        }
        Ok(())
    };
    for d in directives.lines().map(str::trim).filter(|l| l.starts_with("; ")) {
        if let Some(want) = d.strip_prefix("; check:").map(str::trim) {
            match lines[pos..].iter().position(|l| l.contains(want)) {
                Some(i) => {
                    not_in(&mut nots, &lines[pos..pos + i], pos)?;
                    pos += i + 1;
                }
                None => return Err(format!("check: `{want}` not found after line {pos}")),
            }
        } else if let Some(want) = d.strip_prefix("; nextln:").map(str::trim) {
            match lines.get(pos) {
                Some(l) if l.contains(want) => pos += 1,
                other => return Err(format!("nextln: `{want}` expected at line {pos}, found {other:?}")),
            }
        } else if let Some(want) = d.strip_prefix("; not:").map(str::trim) {
            nots.push(want);
        }
    }
    not_in(&mut nots, &lines[pos..], pos)
}

fn cases(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            cases(&path, out);
        } else if path.extension().is_some_and(|e| e == "test") {
            out.push(path);
        }
    }
}

#[test]
fn generated_code_matches_golden_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("codegen-tests");
    let mut files = vec![];
    cases(&root, &mut files);
    files.sort();
    assert!(files.len() >= 15, "expected at least 15 golden files, found {}", files.len());
    let bless = std::env::var("KILN_BLESS").is_ok_and(|v| v == "1");
    let mut failures = vec![];
    for file in &files {
        let case = parse(file);
        let s = session(&case.settings);
        let actual = match s.sql(&case.query).and_then(|df| df.explain_string(ExplainMode::Codegen)) {
            Ok(text) => normalize(&text),
            Err(e) => format!("error: {e}\n"),
        };
        let name = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        if case.precise {
            if actual != case.expected {
                if bless {
                    std::fs::write(file, format!("{}{actual}", case.header)).expect("bless");
                } else {
                    let diff: Vec<String> = case
                        .expected
                        .lines()
                        .zip(actual.lines())
                        .enumerate()
                        .filter(|(_, (e, a))| e != a)
                        .take(5)
                        .map(|(i, (e, a))| format!("  line {}:\n  - {e}\n  + {a}", i + 1))
                        .collect();
                    failures.push(format!(
                        "{name}: generated code differs ({} expected lines, {} actual)\n{}\n  (run with KILN_BLESS=1 to update it if the change is intended)",
                        case.expected.lines().count(),
                        actual.lines().count(),
                        diff.join("\n")
                    ));
                }
            }
        } else if let Err(e) = check(&actual, &case.expected) {
            failures.push(format!("{name}: {e}\n--- output\n{actual}"));
        }
    }
    assert!(failures.is_empty(), "{} golden file(s) failed:\n{}", failures.len(), failures.join("\n\n"));
}
