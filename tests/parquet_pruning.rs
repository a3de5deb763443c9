//! Parquet scans through SQL: partition columns from Hive-style folder names, partition pruning
//! (PartitionFilters decide which files are read), row groups skipped by pushed filters, the
//! scan line Spark prints, and the scan metrics of a run.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use kiln::datasource::parquet::write_parquet;
use kiln::{ExplainMode, Session};

fn rows(start: i64, n: i64) -> RecordBatch {
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true), Field::new("status", DataType::Utf8, true)]));
    let ids: Vec<i64> = (start..start + n).collect();
    let status = StringArray::from_iter_values(ids.iter().map(|i| if i % 2 == 0 { "paid" } else { "open" }));
    RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(ids)) as ArrayRef, Arc::new(status)]).unwrap()
}

/// `t/day=2026-10-0N/region=R/part-0.parquet`: 4 days x 2 regions, 10 rows per file.
fn partitioned_table(root: &Path) -> Session {
    let mut start = 0;
    for day in 1..=4 {
        for region in ["eu", "us"] {
            write_parquet(&root.join(format!("day=2026-10-0{day}/region={region}/part-0.parquet")), &[rows(start, 10)]).unwrap();
            start += 10;
        }
    }
    let session = Session::builder().config("spark.sql.shuffle.partitions", "4").build().unwrap();
    session.register_parquet("t", root).unwrap();
    session
}

fn csv(session: &Session, sql: &str) -> String {
    let df = session.sql(sql).unwrap();
    let batches = df.collect().unwrap();
    kiln::format::result_csv(&df.schema(), &batches)
}

fn scan_line(session: &Session, sql: &str) -> (String, String) {
    let plan = session.sql(sql).unwrap().explain_string(ExplainMode::Simple).unwrap();
    let scan = plan.lines().find(|l| l.contains("FileScan")).expect("a FileScan line").to_string();
    (plan, scan)
}

#[test]
fn partition_columns_come_last_and_are_filled_from_folders() {
    let dir = tempfile::tempdir().unwrap();
    let s = partitioned_table(dir.path());
    let df = s.sql("SELECT * FROM t").unwrap();
    let names: Vec<String> = df.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["id", "status", "day", "region"]);
    assert_eq!(df.schema().field(2).data_type(), &DataType::Date32);
    assert_eq!(
        csv(&s, "SELECT day, region, count(*) AS n, min(id) AS lo FROM t GROUP BY day, region ORDER BY day, region LIMIT 3"),
        "day,region,n,lo\n2026-10-01,eu,10,0\n2026-10-01,us,10,10\n2026-10-02,eu,10,20\n"
    );
}

#[test]
fn partition_filters_prune_files_and_leave_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let s = partitioned_table(dir.path());
    let q = "SELECT day, region, count(*) AS n FROM t WHERE day >= '2026-10-03' AND region = 'us' GROUP BY day, region ORDER BY day";
    let (plan, scan) = scan_line(&s, q);
    assert!(scan.contains("PartitionFilters: [isnotnull(day#"), "{scan}");
    assert!(scan.contains("InMemoryFileIndex(2 paths)[file:"), "{scan}");
    assert!(scan.contains("DataFilters: [], "), "{scan}");
    assert!(scan.contains("PushedFilters: [], "), "{scan}");
    assert!(scan.contains("ReadSchema: struct<>"), "{scan}");
    // Only partition filters: no Filter (and no Project) above the scan, as in Spark.
    assert!(!plan.contains("Filter ("), "{plan}");
    assert_eq!(csv(&s, q), "day,region,n\n2026-10-03,us,10\n2026-10-04,us,10\n");
}

#[test]
fn mixed_conjuncts_split_between_partition_and_data_filters() {
    let dir = tempfile::tempdir().unwrap();
    let s = partitioned_table(dir.path());
    let q = "SELECT id FROM t WHERE day = '2026-10-02' AND status = 'paid' AND (region = 'eu' OR id > 70) ORDER BY id";
    let (plan, scan) = scan_line(&s, q);
    assert!(scan.contains("PartitionFilters: [isnotnull(day#"), "{scan}");
    assert!(scan.contains("(day#") && scan.contains(" = 2026-10-02)]"), "{scan}");
    assert!(scan.contains("InMemoryFileIndex(2 paths)"), "{scan}");
    // The OR reads a partition and a data column: neither kind, so only the Filter checks it.
    assert!(scan.contains("DataFilters: [isnotnull(status#") && !scan.contains("DataFilters: [((region"), "{scan}");
    let filter = plan.lines().find(|l| l.contains("Filter (")).expect("a Filter");
    assert!(filter.contains("region#") && !filter.contains("day#"), "{filter}");
    assert_eq!(csv(&s, q), "id\n20\n22\n24\n26\n28\n");
}

#[test]
fn unpruned_partitioned_table_reads_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let s = partitioned_table(dir.path());
    let (_, scan) = scan_line(&s, "SELECT id FROM t WHERE status = 'open'");
    assert!(scan.contains("Location: CatalogFileIndex(1 paths)[file:"), "{scan}");
    assert!(scan.contains("PartitionFilters: []"), "{scan}");
    assert_eq!(csv(&s, "SELECT count(*) AS n FROM t WHERE status = 'open'"), "n\n40\n");
    // A filter no file passes reads nothing.
    let (_, scan) = scan_line(&s, "SELECT id FROM t WHERE day > '2030-01-01'");
    assert!(scan.contains("InMemoryFileIndex(0 paths)[]"), "{scan}");
    assert_eq!(csv(&s, "SELECT count(*) AS n FROM t WHERE day > '2030-01-01'"), "n\n0\n");
}

#[test]
fn null_partitions_and_non_deterministic_filters() {
    let dir = tempfile::tempdir().unwrap();
    write_parquet(&dir.path().join("k=1/a.parquet"), &[rows(0, 3)]).unwrap();
    write_parquet(&dir.path().join("k=__HIVE_DEFAULT_PARTITION__/a.parquet"), &[rows(3, 2)]).unwrap();
    let s = Session::new();
    s.register_parquet("t", dir.path()).unwrap();
    assert_eq!(csv(&s, "SELECT count(*) AS n FROM t WHERE k IS NULL"), "n\n2\n");
    let (plan, scan) = scan_line(&s, "SELECT id FROM t WHERE k = 1 AND rand(1) < 2.0");
    assert!(scan.contains("InMemoryFileIndex(1 paths)"), "{scan}");
    assert!(plan.contains("Filter (rand(1) < 2.0)"), "{plan}");
}

#[test]
fn bad_partition_folder_fails_registration() {
    let dir = tempfile::tempdir().unwrap();
    write_parquet(&dir.path().join("k=1/a.parquet"), &[rows(0, 1)]).unwrap();
    write_parquet(&dir.path().join("j=1/b.parquet"), &[rows(0, 1)]).unwrap();
    let err = Session::new().register_parquet("t", dir.path()).unwrap_err().to_string();
    assert!(err.contains("conflicting partition folders") && err.contains("a.parquet") && err.contains("b.parquet"), "{err}");
}

/// `dir/t.parquet`: ids 0..1000 in order, status `paid`/`open`, written in row groups of 100.
/// 1000 rows (ids 0..1000) in 100-row row groups of one page each.
fn row_group_table(dir: &Path, conf: &[(&str, &str)]) -> Session {
    let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(100)).build();
    table_written_with(dir, props, conf)
}

/// 1000 rows (ids 0..1000) in one row group of ten 100-row pages, with a page index.
fn paged_table(dir: &Path, conf: &[(&str, &str)]) -> Session {
    let props = parquet::file::properties::WriterProperties::builder()
        .set_data_page_row_count_limit(100)
        .set_write_batch_size(100)
        .build();
    table_written_with(dir, props, conf)
}

fn table_written_with(dir: &Path, props: parquet::file::properties::WriterProperties, conf: &[(&str, &str)]) -> Session {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("t.parquet");
    let b = rows(0, 1000);
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), b.schema(), Some(props)).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    let mut builder = Session::builder();
    for (k, v) in conf {
        builder = builder.config(*k, *v);
    }
    let session = builder.build().unwrap();
    session.register_parquet("t", &path).unwrap();
    session
}

fn run_with_metrics(s: &Session, sql: &str) -> (String, kiln::exec::metrics::ScanStats) {
    let df = s.sql(sql).unwrap();
    let (batches, metrics) = df.collect_with_metrics().unwrap();
    assert_eq!(metrics.scans.len(), 1, "{metrics:?}");
    assert_eq!(metrics.scans[0].0, "spark_catalog.default.t");
    (kiln::format::result_csv(&df.schema(), &batches), metrics.scans[0].1)
}

#[test]
fn selective_pushed_filter_skips_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let s = row_group_table(dir.path(), &[]);
    let q = "SELECT count(*) AS n, min(id) AS lo FROM t WHERE id >= 950";
    let (out, m) = run_with_metrics(&s, q);
    assert_eq!(out, "n,lo\n50,950\n");
    assert_eq!((m.files_read, m.row_groups_read, m.row_groups_skipped, m.rows_out), (1, 1, 9, 100));
    // IN and equality skip too; the Filter above the scan still drops the other rows.
    let (out, m) = run_with_metrics(&s, "SELECT id FROM t WHERE id IN (5, 507) ORDER BY id");
    assert_eq!(out, "id\n5\n507\n");
    assert_eq!((m.row_groups_read, m.row_groups_skipped), (2, 8));
    // Nothing can match: every row group is skipped, the file is not read.
    let (out, m) = run_with_metrics(&s, "SELECT count(*) AS n FROM t WHERE id < 0");
    assert_eq!(out, "n\n0\n");
    assert_eq!((m.files_read, m.row_groups_read, m.row_groups_skipped, m.rows_out), (0, 0, 10, 0));
    // Metrics are per run, not accumulated.
    let df = s.sql(q).unwrap();
    df.collect_with_metrics().unwrap();
    assert_eq!(df.collect_with_metrics().unwrap().1.scans[0].1.row_groups_read, 1);
}

#[test]
fn filters_the_source_cannot_evaluate_skip_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = row_group_table(dir.path(), &[]);
    let q = "SELECT count(*) AS n FROM t WHERE lower(status) = 'paid'";
    let (_, scan) = scan_line(&s, q);
    assert!(scan.contains("DataFilters: [isnotnull(status#") && scan.contains("(lower(status#"), "{scan}");
    assert!(scan.contains("PushedFilters: [IsNotNull(status)]"), "{scan}");
    let (out, m) = run_with_metrics(&s, q);
    assert_eq!(out, "n\n500\n");
    assert_eq!((m.row_groups_read, m.row_groups_skipped, m.rows_out), (10, 0, 1000));
}

#[test]
fn filter_pushdown_off_reads_every_row_group_with_the_same_answer() {
    let dir = tempfile::tempdir().unwrap();
    let s = row_group_table(dir.path(), &[("spark.sql.parquet.filterPushdown", "false")]);
    let (out, m) = run_with_metrics(&s, "SELECT count(*) AS n, min(id) AS lo FROM t WHERE id >= 950");
    assert_eq!(out, "n,lo\n50,950\n");
    assert_eq!((m.row_groups_read, m.row_groups_skipped, m.rows_out), (10, 0, 1000));
}

#[test]
fn page_index_skips_pages_inside_a_row_group() {
    let dir = tempfile::tempdir().unwrap();
    let s = paged_table(dir.path(), &[]);
    let (out, m) = run_with_metrics(&s, "SELECT count(*) AS n, min(id) AS lo FROM t WHERE id >= 950");
    assert_eq!(out, "n,lo\n50,950\n");
    assert_eq!((m.row_groups_read, m.row_groups_skipped, m.rows_skipped_by_page_index, m.rows_out), (1, 0, 900, 100));
    // Two filters on one column: their pages intersect (ids 300..420 are on pages 3 and 4).
    let (out, m) = run_with_metrics(&s, "SELECT count(*) AS n FROM t WHERE id >= 300 AND id < 420");
    assert_eq!(out, "n\n120\n");
    assert_eq!((m.rows_skipped_by_page_index, m.rows_out), (800, 200));
    // A filter the pages cannot decide (status is on every page) skips nothing more.
    let (out, m) = run_with_metrics(&s, "SELECT count(*) AS n FROM t WHERE status = 'paid' AND id < 100");
    assert_eq!(out, "n\n50\n");
    assert_eq!((m.rows_skipped_by_page_index, m.rows_out), (900, 100));
    let off = paged_table(&dir.path().join("off"), &[("spark.sql.parquet.filterPushdown", "false")]);
    let (out, m) = run_with_metrics(&off, "SELECT count(*) AS n, min(id) AS lo FROM t WHERE id >= 950");
    assert_eq!(out, "n,lo\n50,950\n");
    assert_eq!((m.rows_skipped_by_page_index, m.rows_out), (0, 1000));
}

#[test]
fn partition_pruning_shows_in_files_read() {
    let dir = tempfile::tempdir().unwrap();
    let s = partitioned_table(dir.path());
    let (out, m) = run_with_metrics(&s, "SELECT count(*) AS n FROM t WHERE day = '2026-10-02'");
    assert_eq!(out, "n\n20\n");
    assert_eq!((m.files_read, m.row_groups_read, m.rows_out), (2, 2, 20));
}
