//! Writing Parquet tables: `CREATE TABLE .. USING parquet [PARTITIONED BY] [LOCATION] AS`,
//! `INSERT INTO | OVERWRITE`, managed tables in `spark.sql.warehouse.dir` seen by later
//! sessions and processes, `DataFrame::write_parquet`, and writes that fail or are killed
//! halfway leaving the previous table intact.

use std::path::Path;
use std::process::Command;

use kiln::{ExplainMode, SaveMode, Session};

fn session(warehouse: &Path) -> Session {
    Session::builder()
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.warehouse.dir", warehouse.display().to_string())
        .build()
        .unwrap()
}

fn csv(session: &Session, sql: &str) -> String {
    let df = session.sql(sql).unwrap();
    let batches = df.collect().unwrap();
    kiln::format::result_csv(&df.schema(), &batches)
}

fn err(session: &Session, sql: &str) -> String {
    match session.sql(sql).and_then(|df| df.collect()) {
        Ok(_) => panic!("{sql} should fail"),
        Err(e) => e.to_string(),
    }
}

/// Visible entries of a folder, sorted (hidden staging folders start with `.`).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

const ORDERS: &str = "SELECT id, CAST(id * 10 AS DECIMAL(10,2)) AS amount, \
    CASE WHEN id % 3 = 0 THEN 'open' ELSE 'shipped' END AS status, \
    date_add(DATE '2026-10-01', CAST(id % 4 AS INT)) AS order_date \
    FROM (SELECT 1 AS id UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS s";

#[test]
fn ctas_partitioned_managed_table_prunes_and_outlives_the_session() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path());
    s.sql(&format!("CREATE TABLE orders USING parquet PARTITIONED BY (order_date) AS {ORDERS}")).unwrap();
    // One folder per date, partition column last.
    let table = dir.path().join("orders");
    assert_eq!(entries(&table), ["_kiln_table", "order_date=2026-10-01", "order_date=2026-10-02", "order_date=2026-10-03", "order_date=2026-10-04"]);
    assert_eq!(entries(dir.path()), ["orders"]);
    let names: Vec<String> = s.sql("SELECT * FROM orders").unwrap().schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["id", "amount", "status", "order_date"]);
    let query = "SELECT order_date, sum(amount) AS total FROM orders WHERE order_date >= '2026-10-03' AND status = 'shipped' GROUP BY order_date ORDER BY order_date";
    let plan = s.sql(query).unwrap().explain_string(ExplainMode::Simple).unwrap();
    assert!(plan.contains("InMemoryFileIndex(2 paths)"), "{plan}");
    assert!(plan.contains("PartitionFilters: [isnotnull(order_date#") && plan.contains("PushedFilters: [IsNotNull(status), EqualTo(status,shipped)]"), "{plan}");
    assert_eq!(csv(&s, query), "order_date,total\n2026-10-03,20.00\n");

    // A new session (as a later `kiln sql` run) finds the table in the warehouse.
    let later = session(dir.path());
    assert_eq!(csv(&later, "SELECT count(*) AS n, sum(id) AS ids FROM orders"), "n,ids\n6,21\n");
    assert!(err(&later, "SELECT * FROM ordes").contains("Did you mean `orders`?"));
    assert!(err(&later, &format!("CREATE TABLE orders USING parquet AS {ORDERS}")).contains("TABLE_OR_VIEW_ALREADY_EXISTS"));
    later.sql("CREATE TABLE IF NOT EXISTS orders USING parquet AS SELECT 1 AS x").unwrap();
    assert_eq!(csv(&later, "SELECT count(*) AS n FROM orders"), "n\n6\n");

    // DROP deletes a managed table's folder.
    later.sql("DROP TABLE orders").unwrap();
    assert!(!table.exists());
    assert!(err(&s, "SELECT * FROM orders").contains("TABLE_OR_VIEW_NOT_FOUND"));
}

#[test]
fn insert_into_and_overwrite_stored_tables() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path());
    let e = err(&s, "CREATE TABLE t (id BIGINT, tag STRING) USING parquet PARTITIONED BY (tag)");
    assert!(e.contains("no file to hold its schema"), "{e}");
    s.sql("CREATE TABLE t (id BIGINT, tag STRING) USING parquet").unwrap();
    assert_eq!(csv(&s, "SELECT count(*) AS n FROM t"), "n\n0\n");
    // Store assignment casts INT to BIGINT; listed columns may come in any order.
    s.sql("INSERT INTO t VALUES (1, 'a'), (2, NULL)").unwrap();
    s.sql("INSERT INTO t (tag, id) SELECT 'c', 3").unwrap();
    assert_eq!(csv(&s, "SELECT id, tag FROM t ORDER BY id"), "id,tag\n1,a\n2,NULL\n3,c\n");
    s.sql("INSERT OVERWRITE TABLE t SELECT 9, 'z'").unwrap();
    assert_eq!(csv(&s, "SELECT id, tag FROM t"), "id,tag\n9,z\n");
    assert!(err(&s, "INSERT INTO t VALUES (1, 'a', 'b')").contains("INSERT_COLUMN_ARITY_MISMATCH"));
    assert_eq!(csv(&session(dir.path()), "SELECT id, tag FROM t"), "id,tag\n9,z\n");

    // A partitioned table takes rows into new and existing folders.
    s.sql("CREATE TABLE p USING parquet PARTITIONED BY (tag) AS SELECT 1 AS id, 'a' AS tag").unwrap();
    s.sql("INSERT INTO p VALUES (2, 'a'), (3, 'b'), (4, NULL)").unwrap();
    assert_eq!(entries(&dir.path().join("p")), ["_kiln_table", "tag=__HIVE_DEFAULT_PARTITION__", "tag=a", "tag=b"]);
    assert_eq!(csv(&s, "SELECT tag, count(*) AS n FROM p GROUP BY tag ORDER BY tag"), "tag,n\nNULL,1\na,2\nb,1\n");

    // Files registered for the session only are read-only.
    let files = dir.path().join("loose");
    s.sql("SELECT 1 AS x").unwrap().write_parquet(&files, &[]).unwrap();
    s.register_parquet("loose", &files).unwrap();
    assert!(err(&s, "INSERT INTO loose VALUES (2)").contains("CREATE TABLE .. USING parquet"));
}

#[test]
fn external_tables_keep_their_files_when_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(&dir.path().join("warehouse"));
    let location = dir.path().join("ext");
    s.sql(&format!("CREATE TABLE e USING parquet LOCATION '{}' AS SELECT 1 AS a", location.display())).unwrap();
    assert!(!dir.path().join("warehouse").exists());
    s.sql("DROP TABLE e").unwrap();
    assert!(location.exists());
    // CREATE TABLE over existing files reads them as they are.
    s.sql(&format!("CREATE TABLE again USING parquet LOCATION '{}'", location.display())).unwrap();
    assert_eq!(csv(&s, "SELECT a FROM again"), "a\n1\n");
    let e = err(&s, &format!("CREATE TABLE clash USING parquet LOCATION '{}' AS SELECT 2 AS a", location.display()));
    assert!(e.contains("PATH_ALREADY_EXISTS") && e.contains("ext"), "{e}");
    s.sql(&format!("CREATE OR REPLACE TABLE again USING parquet LOCATION '{}' AS SELECT 2 AS a", location.display())).unwrap();
    assert_eq!(csv(&s, "SELECT a FROM again"), "a\n2\n");
}

#[test]
fn bad_writes_are_clear_errors_that_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path());
    let e = err(&s, "CREATE TABLE t USING parquet PARTITIONED BY (stauts) AS SELECT 1 AS id, 'x' AS status");
    assert!(e.contains("`stauts`") && e.contains("Did you mean `status`?"), "{e}");
    let e = err(&s, "CREATE TABLE t USING parquet AS SELECT 1 AS a, 2 AS A");
    assert!(e.contains("COLUMN_ALREADY_EXISTS"), "{e}");
    let e = err(&s, "CREATE TABLE `../escape` USING parquet AS SELECT 1 AS a");
    assert!(e.contains("INVALID_TABLE_NAME"), "{e}");
    // A query that fails at run time (ANSI division by zero) leaves no table and no staging.
    let e = err(&s, "CREATE TABLE t USING parquet AS SELECT 1 / (id - id) AS x FROM (SELECT 1 AS id) AS s");
    assert!(e.contains("DIVIDE_BY_ZERO"), "{e}");
    assert!(!dir.path().exists() || entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
    s.sql("CREATE TABLE t USING parquet AS SELECT 1 AS a").unwrap();
    let e = err(&s, "INSERT OVERWRITE TABLE t SELECT 1 / (a - a) FROM t");
    assert!(e.contains("DIVIDE_BY_ZERO"), "{e}");
    assert_eq!(csv(&s, "SELECT a FROM t"), "a\n1\n");
    assert_eq!(entries(dir.path()), ["t"]);
}

#[test]
fn dataframe_write_parquet_modes() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path());
    let path = dir.path().join("out");
    let df = s.sql(ORDERS).unwrap();
    let written = df.write_parquet(&path, &["order_date", "status"]).unwrap();
    assert_eq!((written.files.len(), written.rows), (5, 6));
    assert!(written.files.iter().all(|f| f.starts_with(&path)), "{:?}", written.files);
    let e = df.write_parquet(&path, &["order_date"]).unwrap_err().to_string();
    assert!(e.contains("PATH_ALREADY_EXISTS"), "{e}");
    assert_eq!(df.write_parquet_with(&path, &["order_date", "status"], SaveMode::Ignore).unwrap().rows, 0);
    df.write_parquet_with(&path, &["order_date", "status"], SaveMode::Append).unwrap();
    s.register_parquet("out", &path).unwrap();
    assert_eq!(csv(&s, "SELECT count(*) AS n, count(DISTINCT status) AS k FROM out"), "n,k\n12,2\n");
    df.write_parquet_with(&path, &[], SaveMode::Overwrite).unwrap();
    s.register_parquet("out", &path).unwrap();
    assert_eq!(csv(&s, "SELECT count(*) AS n FROM out"), "n\n6\n");
}

fn kiln_sql(warehouse: &Path, query: &str, abort: bool) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kiln"));
    cmd.args(["sql", "--format", "csv", "--conf", &format!("spark.sql.warehouse.dir={}", warehouse.display()), query]);
    if abort {
        cmd.env(kiln::datasource::write::ABORT_BEFORE_COMMIT_ENV, "1");
    }
    cmd.output().expect("kiln runs")
}

/// The process is killed (aborts) with every new file written but before the commit: the
/// next run reads the old table, both for an overwrite and for an append.
#[test]
fn a_killed_write_leaves_the_previous_table_intact() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    let created = kiln_sql(w, "CREATE TABLE t USING parquet PARTITIONED BY (k) AS SELECT 1 AS id, 'a' AS k UNION ALL SELECT 2, 'b'", false);
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    for write in ["INSERT OVERWRITE TABLE t SELECT 7, 'z'", "INSERT INTO t SELECT 8, 'a'"] {
        let killed = kiln_sql(w, write, true);
        assert!(!killed.status.success(), "{write} should have been killed");
        // The staged files were written: the write really was cut off before its commit.
        let staged: Vec<String> = entries(w).into_iter().filter(|n| n.starts_with(".kiln-staging-t-")).collect();
        assert!(!staged.is_empty(), "{:?}", entries(w));
        for s in staged {
            std::fs::remove_dir_all(w.join(s)).unwrap();
        }
        let read = kiln_sql(w, "SELECT id, k FROM t ORDER BY id", false);
        assert_eq!(String::from_utf8_lossy(&read.stdout), "id,k\n1,a\n2,b\n", "after {write}: {}", String::from_utf8_lossy(&read.stderr));
    }
    let done = kiln_sql(w, "INSERT INTO t SELECT 8, 'a'", false);
    assert!(done.status.success());
    let read = kiln_sql(w, "SELECT id, k FROM t ORDER BY id", false);
    assert_eq!(String::from_utf8_lossy(&read.stdout), "id,k\n1,a\n2,b\n8,a\n");
}

/// Struct, map and array columns (issue 12): written by kiln, read back by name; a file
/// written by arrow itself (Parquet's own map layout, `key_value` entries) reads as Spark
/// reads it; batches with nested columns register as tables.
#[test]
fn nested_columns_round_trip_through_parquet() {
    use std::sync::Arc;

    use arrow::array::{Array, ArrayRef, Int32Array, Int32Builder, MapBuilder, StringArray, StringBuilder, StructArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::record_batch::RecordBatch;

    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path());
    s.sql(
        "CREATE TABLE nested USING parquet AS SELECT id, named_struct('a', id, 'b', named_struct('c', CAST(id AS STRING))) AS s, \
         map('k', id * 10) AS m, array(named_struct('x', id), named_struct('x', id + 1)) AS xs \
         FROM (SELECT 1 AS id UNION ALL SELECT 2) AS t",
    )
    .unwrap();
    let schema = s.sql("DESCRIBE nested").map(|df| kiln::format::result_csv(&df.schema(), &df.collect().unwrap())).unwrap();
    assert!(schema.contains("struct<a:int,b:struct<c:string>>") && schema.contains("map<string,int>") && schema.contains("array<struct<x:int>>"), "{schema}");
    assert_eq!(
        csv(&s, "SELECT id, s.b.c, m['k'], xs[1].x, s FROM nested ORDER BY id"),
        "id,c,m[k],xs[1].x,s\n1,1,10,2,\"{1, {1}}\"\n2,2,20,3,\"{2, {2}}\"\n"
    );
    assert_eq!(csv(&s, "SELECT id, k, v FROM nested LATERAL VIEW explode(m) e AS k, v ORDER BY id"), "id,k,v\n1,k,10\n2,k,20\n");
    assert_eq!(csv(&s, "SELECT x FROM nested LATERAL VIEW inline(xs) e AS x WHERE id = 2 ORDER BY x"), "x\n2\n3\n");

    // A file arrow writes, with a map of Parquet's `key_value` layout and a NULL struct.
    let fields = vec![Field::new("a", DataType::Int32, true), Field::new("b", DataType::Utf8, true)];
    let st = StructArray::new(
        fields.clone().into(),
        vec![Arc::new(Int32Array::from(vec![Some(1), Some(2)])) as ArrayRef, Arc::new(StringArray::from(vec![Some("x"), None]))],
        Some(vec![true, false].into()),
    );
    let mut mb = MapBuilder::new(None, StringBuilder::new(), Int32Builder::new());
    mb.keys().append_value("p");
    mb.values().append_value(7);
    mb.append(true).unwrap();
    mb.append(false).unwrap();
    let map = mb.finish();
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", st.data_type().clone(), true),
        Field::new("m", map.data_type().clone(), true),
    ]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(st), Arc::new(map)]).unwrap();
    let file = dir.path().join("arrow_nested.parquet");
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&file).unwrap(), schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    s.register_parquet("arrow_nested", &file).unwrap();
    assert_eq!(
        csv(&s, "SELECT s.a, s.b, m['p'], map_keys(m), s, m FROM arrow_nested"),
        "a,b,m[p],map_keys(m),s,m\n1,x,7,[p],\"{1, x}\",{p -> 7}\nNULL,NULL,NULL,NULL,NULL,NULL\n"
    );

    // The same batch registered in memory.
    s.register_batches("mem_nested", vec![batch]).unwrap();
    assert_eq!(csv(&s, "SELECT count(*) FROM mem_nested WHERE s.a = 1 AND map_contains_key(m, 'p')"), "count(1)\n1\n");
}
