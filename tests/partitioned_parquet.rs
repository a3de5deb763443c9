//! Hive-partitioned Parquet tables through SQL: partition columns from folder names, partition
//! pruning (PartitionFilters decide which files are read), and the scan line Spark prints.

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
