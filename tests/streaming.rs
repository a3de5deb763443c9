//! The executor streams: a query over a table far larger than a batch holds only its breakers'
//! state and the batches in flight (measured by a counting allocator), and a LIMIT stops
//! reading once it has its rows (measured by the scan's metrics). Both execution modes.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use kiln::Session;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

/// Counts the bytes allocated now and the most allocated at once since the last reset.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Memory is measured one query at a time: the tests of this file take turns.
static SERIAL: Mutex<()> = Mutex::new(());

const ROW_GROUPS: i64 = 40;
const ROWS_PER_GROUP: i64 = 50_000;

/// `big`: 2M rows in 40 row groups of one file; about 80 MB once decoded.
fn write_big(path: &Path) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, true),
        Field::new("v", DataType::Float64, true),
        Field::new("note", DataType::Utf8, true),
    ]));
    let props = WriterProperties::builder().set_max_row_group_row_count(Some(ROWS_PER_GROUP as usize)).build();
    let file = std::fs::File::create(path).expect("create the test table");
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props)).expect("a writer");
    for g in 0..ROW_GROUPS {
        let ids: Vec<i64> = (g * ROWS_PER_GROUP..(g + 1) * ROWS_PER_GROUP).collect();
        let v = Float64Array::from_iter_values(ids.iter().map(|i| (*i % 1000) as f64 * 0.5));
        let note = StringArray::from_iter_values(ids.iter().map(|i| format!("row number {i:>12}")));
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(ids)) as ArrayRef, Arc::new(v), Arc::new(note)])
            .expect("a batch");
        writer.write(&batch).expect("write");
    }
    let meta = writer.close().expect("close");
    assert_eq!(meta.num_row_groups(), ROW_GROUPS as usize, "row groups written");
}

fn session(dir: &Path, codegen: bool) -> Session {
    let path = dir.join("big.parquet");
    if !path.exists() {
        write_big(&path);
    }
    let s = Session::builder()
        .config("spark.sql.codegen.wholeStage", codegen.to_string())
        .config("spark.sql.shuffle.partitions", "8")
        .build()
        .expect("a session");
    s.register_parquet("big", &path).expect("register");
    s
}

/// The most bytes the query held at once beyond what was allocated before it ran, and its rows.
fn peak_of(s: &Session, sql: &str) -> (usize, Vec<RecordBatch>) {
    let df = s.sql(sql).expect("plans");
    let base = CURRENT.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let rows = df.collect().expect("runs");
    (PEAK.load(Ordering::Relaxed).saturating_sub(base), rows)
}

/// What the table takes decoded, as the old executor held it (every scanned batch at once).
const DECODED_BYTES: usize = (ROW_GROUPS * ROWS_PER_GROUP) as usize * (8 + 8 + 4 + 24);

#[test]
fn scans_filters_and_aggregates_hold_a_bounded_amount() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("a temp dir");
    for codegen in [true, false] {
        let s = session(dir.path(), codegen);
        for sql in [
            "SELECT count(*) AS n, sum(v) AS total FROM big WHERE id % 3 = 0",
            "SELECT id % 10 AS k, count(*) AS n, sum(v) AS total FROM big GROUP BY id % 10",
            "SELECT max(length(note)) AS longest FROM big",
        ] {
            let (peak, rows) = peak_of(&s, sql);
            eprintln!("codegen={codegen} peak {peak} bytes: {sql}");
            assert!(!rows.is_empty() && rows.iter().map(|b| b.num_rows()).sum::<usize>() > 0, "{sql}: no rows");
            // Two workers, each a row group's pages and a batch or two in flight.
            assert!(peak < DECODED_BYTES / 5, "codegen={codegen}: {sql} held {peak} bytes at its peak; the table is {DECODED_BYTES} decoded");
        }
    }
}

#[test]
fn a_limit_stops_reading_once_it_has_its_rows() {
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().expect("a temp dir");
    for codegen in [true, false] {
        let s = session(dir.path(), codegen);
        for sql in ["SELECT * FROM big LIMIT 10", "SELECT id, v * 2 AS w FROM big WHERE v > 1 LIMIT 10"] {
            let (batches, metrics) = s.sql(sql).expect("plans").collect_with_metrics().expect("runs");
            assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 10, "{sql}");
            let (_, scan) = metrics.scans.first().expect("one scan").clone();
            eprintln!("codegen={codegen} {scan:?}: {sql}");
            assert!(scan.row_groups_read <= 2, "codegen={codegen}: {sql} read {} of {ROW_GROUPS} row groups", scan.row_groups_read);
            assert!(scan.rows_out <= 2 * ROWS_PER_GROUP as u64, "{sql} decoded {} rows", scan.rows_out);
        }
    }
}


/// A partial aggregate under an exchange over many input partitions keeps one table per task,
/// not one per partition: each group leaves a task once. The decimal sum overflows the
/// generated code's 64-bit accumulator, so compiled tasks also rerun interpreted, their whole
/// input again.
#[test]
fn a_partial_aggregate_over_many_partitions_keeps_one_table_per_task() {
    let sql = "SELECT id % 7 AS g, sum(CAST(900000000000000000 AS DECIMAL(18,0)) + CAST(c AS DECIMAL(18,0))) AS s, count(*) AS n \
               FROM (SELECT id, count(*) AS c FROM range(0, 1000) GROUP BY id) GROUP BY id % 7 ORDER BY g";
    for codegen in ["true", "false"] {
        let s = Session::builder()
            .config("spark.sql.codegen.wholeStage", codegen)
            .config("spark.sql.adaptive.enabled", "false")
            .config("spark.sql.shuffle.partitions", "200")
            .build()
            .expect("a session");
        let df = s.sql(sql).expect("plans");
        let (batches, metrics) = df.collect_with_metrics().expect("runs");
        let out = kiln::format::result_csv(&batches[0].schema(), &batches);
        let mut expected = String::from("g,s,n\n");
        for g in 0..7i64 {
            let n = (0..1000).filter(|id| id % 7 == g).count() as i128;
            expected += &format!("{g},{},{n}\n", n * 900_000_000_000_000_000 + n);
        }
        assert_eq!(out, expected, "codegen {codegen}");
        // The operator under the exchange by g: the partial aggregate (or its stage).
        let below = metrics.operators.iter().position(|(line, _)| line.starts_with("Exchange hashpartitioning((id % 7)")).map(|e| e + 1);
        let Some((_, partial)) = below.and_then(|b| metrics.operators.get(b)) else { panic!("no exchange by g in\n{}", metrics.plan) };
        let tasks = partial.partition_nanos.len() as u64;
        assert!(tasks < 200, "codegen {codegen}: the partial aggregate ran as {tasks} tasks\n{}", metrics.plan);
        assert_eq!(partial.rows, 7 * tasks, "codegen {codegen}: one row per group and task\n{}", metrics.plan);
    }
}
