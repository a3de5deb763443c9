//! CSV and JSON files as tables: Spark's options, schema inference and parse modes, through
//! `Session::register_csv` / `register_json` and SQL (`CREATE TEMPORARY VIEW .. USING csv`,
//! `CREATE TABLE .. USING json LOCATION`), the same rows compiled and interpreted.

use std::path::Path;

use kiln::{ExplainMode, Session};

/// The rows of `sql` as CSV lines (header first), checked equal compiled and interpreted.
fn rows(s: &Session, sql: &str) -> Vec<String> {
    let mut out = vec![];
    for codegen in ["true", "false"] {
        s.set_conf("spark.sql.codegen.wholeStage", codegen).expect("a setting");
        let df = s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let batches = df.collect().unwrap_or_else(|e| panic!("{sql}: {e}"));
        out.push(kiln::format::result_csv(&df.schema(), &batches).lines().map(str::to_string).collect::<Vec<_>>());
    }
    assert_eq!(out[0], out[1], "compiled and interpreted differ on {sql}");
    out.swap_remove(0)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("writes");
    path.display().to_string()
}

const PRODUCTS: &str = "id,name,price,day,ok\n1,apple,1.5,2024-01-01,true\n2,pear,,2024-02-03,false\n3,\"fig, dried\",2,2024-03-04,TRUE\n";

#[test]
fn csv_with_a_header_infers_spark_types_and_reads_quoted_fields() {
    let dir = tempfile::tempdir().expect("a folder");
    let path = write(dir.path(), "p.csv", PRODUCTS);
    let s = Session::new();
    s.register_csv("p", &path, &[("header", "true"), ("inferSchema", "true")]).expect("registers");
    assert_eq!(rows(&s, "DESCRIBE p")[1..], ["id,int,NULL", "name,string,NULL", "price,double,NULL", "day,date,NULL", "ok,boolean,NULL"]);
    assert_eq!(rows(&s, "SELECT name, price, day FROM p WHERE ok ORDER BY id")[1..], ["apple,1.5,2024-01-01", "\"fig, dried\",2.0,2024-03-04"]);
    assert_eq!(rows(&s, "SELECT count(*), count(price), sum(id) FROM p")[1..], ["3,2,6"]);
    // Without inferSchema every column is a string, as in Spark; without a header, _c0, _c1, ...
    s.register_csv("raw", &path, &[]).expect("registers");
    assert_eq!(rows(&s, "SELECT _c0, _c2 FROM raw WHERE _c1 = 'pear'")[1..], ["2,NULL"]);
    assert_eq!(rows(&s, "DESCRIBE raw")[1], "_c0,string,NULL");
}

#[test]
fn csv_options_separator_null_value_and_a_folder_of_files() {
    let dir = tempfile::tempdir().expect("a folder");
    write(dir.path(), "a.csv", "k;v\n1;-\n2;b\n");
    write(dir.path(), "b.csv", "k;v\n3;c\n");
    write(dir.path(), ".hidden.csv", "k;v\n9;z\n");
    let s = Session::new();
    let folder = dir.path().display().to_string();
    s.sql(&format!("CREATE TEMPORARY VIEW kv USING csv OPTIONS (path '{folder}', header 'true', sep ';', nullValue '-', inferSchema 'true')"))
        .expect("a view");
    assert_eq!(rows(&s, "SELECT k, v FROM kv ORDER BY k")[1..], ["1,NULL", "2,b", "3,c"]);
    let err = s.sql(&format!("CREATE TEMPORARY VIEW bad USING csv OPTIONS (path '{folder}', headr 'true')")).map(|_| ()).expect_err("a typo");
    assert!(err.to_string().contains("unknown csv option `headr`") && err.to_string().contains("Did you mean `header`?"), "{err}");
    let err = s.register_csv("none", dir.path().join("missing.csv"), &[]).expect_err("no such file");
    assert!(err.to_string().contains("missing.csv"), "{err}");
}

#[test]
fn parse_modes_null_drop_or_fail_on_a_value_that_does_not_parse() {
    let dir = tempfile::tempdir().expect("a folder");
    let path = write(dir.path(), "n.csv", "1,a\nx,b\n3,c\n");
    let s = Session::new();
    for (mode, expected) in [("PERMISSIVE", vec!["1,a", "NULL,b", "3,c"]), ("DROPMALFORMED", vec!["1,a", "3,c"])] {
        s.sql(&format!("CREATE OR REPLACE TABLE n (i INT, s STRING) USING csv OPTIONS (mode '{mode}') LOCATION '{path}'")).expect("a table");
        assert_eq!(rows(&s, "SELECT i, s FROM n")[1..], expected, "{mode}");
    }
    s.sql(&format!("CREATE OR REPLACE TABLE n (i INT, s STRING) USING csv OPTIONS (path '{path}', mode 'FAILFAST')")).expect("a table");
    let err = s.sql("SELECT * FROM n").and_then(|df| df.collect()).expect_err("fails fast");
    let msg = err.to_string();
    assert!(msg.contains("MALFORMED_RECORD_IN_PARSING") && msg.contains("`x`") && msg.contains("n.csv"), "{msg}");
    assert!(s.sql("CREATE TABLE n (i INT) USING csv LOCATION '/nowhere'").is_err(), "exists already");
    s.sql(&format!("CREATE TABLE IF NOT EXISTS n USING csv LOCATION '{path}'")).expect("kept");
    // The table kept is the declared one (a new one would have columns _c0, _c1).
    assert_eq!(rows(&s, "SELECT s FROM n")[1..], ["a", "b", "c"]);
}

#[test]
fn json_lines_fields_are_inferred_from_every_record_and_sorted_by_name() {
    let dir = tempfile::tempdir().expect("a folder");
    let path = write(dir.path(), "e.json", "{\"name\":\"a\",\"n\":1}\n{\"n\":2,\"score\":1.5,\"ok\":true}\n{\"name\":null,\"n\":30}\n");
    let s = Session::new();
    s.sql(&format!("CREATE TABLE e USING json LOCATION '{path}'")).expect("a table");
    assert_eq!(rows(&s, "DESCRIBE e")[1..], ["n,bigint,NULL", "name,string,NULL", "ok,boolean,NULL", "score,double,NULL"]);
    assert_eq!(rows(&s, "SELECT n, name, score FROM e WHERE n > 1 ORDER BY n")[1..], ["2,NULL,1.5", "30,NULL,NULL"]);
    let plan = s.sql("SELECT n FROM e WHERE n > 1").expect("plans").explain_string(ExplainMode::Simple).expect("explains");
    assert!(plan.contains("FileScan json spark_catalog.default.e[n#") && plan.contains("Format: JSON") && plan.contains("Batched: false"), "{plan}");
    // A record whose value does not fit the declared type: NULL, or the query fails.
    let bad = write(dir.path(), "bad.json", "{\"n\":1}\n{\"n\":\"many\"}\n");
    s.register_json("lenient", &bad, &[]).expect("registers");
    assert_eq!(rows(&s, "SELECT * FROM lenient")[1..], ["1", "many"], "n is a string: it is one in a record");
    s.sql(&format!("CREATE TABLE strict (n BIGINT) USING json OPTIONS (path '{bad}', mode 'FAILFAST')")).expect("a table");
    assert!(s.sql("SELECT * FROM strict").and_then(|df| df.collect()).is_err());
    s.sql(&format!("CREATE TABLE loose (n BIGINT) USING json OPTIONS (path '{bad}')")).expect("a table");
    assert_eq!(rows(&s, "SELECT * FROM loose")[1..], ["1", "NULL"]);
}

/// Timestamp texts: the zoneless ones read in the session time zone (Los Angeles here: a DST gap
/// and an overlap), the ones naming a zone at that zone, as Spark 4.3 reads them; TIMESTAMP_NTZ
/// columns keep the wall clock and read a zoned text as NULL.
#[test]
fn csv_and_json_timestamps_are_read_in_the_session_time_zone() {
    let dir = tempfile::tempdir().expect("a folder");
    let lines = ["2024-01-01 10:00:00", "2024-03-10 02:30:00", "2024-06-01T12:00:00Z", "2024-06-01 12:00:00+02:00", "2024-11-03 01:30:00"];
    let csv = write(dir.path(), "ts.csv", &format!("id,ts\n{}\n6,2024-06-01\n", lines.iter().enumerate().map(|(i, t)| format!("{},{t}", i + 1)).collect::<Vec<_>>().join("\n")));
    let json = write(dir.path(), "ts.json", &lines.iter().enumerate().map(|(i, t)| format!("{{\"id\":{},\"ts\":\"{t}\"}}\n", i + 1)).collect::<String>());
    let s = Session::new();
    s.sql("SET spark.sql.session.timeZone=America/Los_Angeles").expect("a zone");
    s.sql(&format!("CREATE TEMPORARY VIEW inferred USING csv OPTIONS (path '{csv}', header 'true', inferSchema 'true')")).expect("a view");
    s.sql(&format!("CREATE TABLE declared (id INT, ts TIMESTAMP) USING csv OPTIONS (path '{csv}', header 'true')")).expect("a view");
    s.sql(&format!("CREATE TABLE ntz (id INT, ts TIMESTAMP_NTZ) USING csv OPTIONS (path '{csv}', header 'true')")).expect("a view");
    s.sql(&format!("CREATE TABLE j (id BIGINT, ts TIMESTAMP) USING json OPTIONS (path '{json}')")).expect("a view");
    s.sql(&format!("CREATE TABLE jntz (id BIGINT, ts TIMESTAMP_NTZ) USING json OPTIONS (path '{json}')")).expect("a view");
    assert_eq!(rows(&s, "DESCRIBE inferred")[2], "ts,timestamp,NULL");
    let spark = [
        "1,2024-01-01 10:00:00,1704132000",
        "2,2024-03-10 03:30:00,1710066600",
        "3,2024-06-01 05:00:00,1717243200",
        "4,2024-06-01 03:00:00,1717236000",
        "5,2024-11-03 01:30:00,1730622600",
        "6,2024-06-01 00:00:00,1717225200",
    ];
    for view in ["inferred", "declared"] {
        assert_eq!(rows(&s, &format!("SELECT id, cast(ts AS STRING), unix_seconds(ts) FROM {view} ORDER BY id"))[1..], spark, "{view}");
    }
    assert_eq!(rows(&s, "SELECT id, cast(ts AS STRING), unix_seconds(ts) FROM j ORDER BY id")[1..], spark[..5]);
    let wall = ["1,2024-01-01 10:00:00", "2,2024-03-10 02:30:00", "3,NULL", "4,NULL", "5,2024-11-03 01:30:00", "6,2024-06-01 00:00:00"];
    assert_eq!(rows(&s, "SELECT id, cast(ts AS STRING) FROM ntz ORDER BY id")[1..], wall);
    assert_eq!(rows(&s, "SELECT id, cast(ts AS STRING) FROM jntz ORDER BY id")[1..], wall[..5]);
}

#[test]
fn text_tables_obey_the_allowed_roots() {
    let dir = tempfile::tempdir().expect("a folder");
    let path = write(dir.path(), "p.csv", PRODUCTS);
    let other = tempfile::tempdir().expect("a folder");
    let s = Session::new();
    s.set_conf("kiln.files.allowedRoots", &other.path().display().to_string()).expect("a list");
    let err = s.register_csv("p", &path, &[]).expect_err("outside the roots");
    assert!(err.to_string().contains("PATH_NOT_ALLOWED"), "{err}");
}

#[test]
fn tables_written_as_csv_and_json_read_back_the_same_rows() {
    let dir = tempfile::tempdir().expect("a folder");
    let s = Session::new();
    let query = "SELECT id, concat('v,', id) AS s, CAST(id * 1.5 AS DECIMAL(6,2)) AS d, DATE '2024-01-02' + id AS day, CAST(NULLIF(id % 2, 0) AS INT) AS n FROM range(1, 4)";
    let expected = rows(&s, &format!("{query} ORDER BY id"));
    for (format, options) in [("csv", "OPTIONS (header 'true')"), ("csv", ""), ("json", "")] {
        let path = dir.path().join(format!("{format}{}", options.len()));
        s.sql(&format!("CREATE OR REPLACE TABLE w USING {format} {options} LOCATION '{}' AS {query}", path.display())).expect("written");
        assert_eq!(rows(&s, "SELECT * FROM w ORDER BY id"), expected, "{format} {options}");
        let written = std::fs::read_dir(&path).expect("a folder").filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().ends_with(format)).count();
        assert_eq!(written, 1, "one data file");
    }
    // The DataFrame writers make the same folders, and refuse one that holds data.
    let df = s.sql(query).expect("plans");
    let csv = dir.path().join("df_csv");
    assert_eq!(df.write_csv(&csv, &[("header", "true"), ("sep", "|")]).expect("writes").rows, 3);
    s.register_csv("back", &csv, &[("header", "true"), ("sep", "|"), ("inferSchema", "true")]).expect("registers");
    assert_eq!(rows(&s, "SELECT id, s, n FROM back ORDER BY id")[1..], ["1,\"v,1\",1", "2,\"v,2\",NULL", "3,\"v,3\",1"]);
    let err = df.write_csv(&csv, &[]).map(|_| ()).expect_err("exists");
    assert!(err.to_string().contains("PATH_ALREADY_EXISTS"), "{err}");
    let json = dir.path().join("df_json");
    df.write_json(&json).expect("writes");
    s.register_json("jback", &json, &[]).expect("registers");
    assert_eq!(rows(&s, "SELECT id, n FROM jback ORDER BY id")[1..], ["1,1", "2,NULL", "3,1"]);
}
