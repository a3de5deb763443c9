//! Hostile input: what a query says may not lift the bounds its host set, nor destroy what
//! kiln did not write. Each case ends in a clear error, the session answers afterwards, and
//! nothing outside the allowed folders was opened (the error is the refusal made before any
//! file is touched) or changed (the folders are listed before and after). Queries run
//! compiled and interpreted.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kiln::{SaveMode, Session};

const MODES: [&str; 2] = ["true", "false"];

/// The files below `dir` with their contents, sorted: what must not change.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = vec![];
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("lists").map(|e| e.expect("an entry")) {
            let t = e.file_type().expect("a type");
            if t.is_dir() {
                todo.push(e.path());
            } else {
                out.push((e.path(), std::fs::read(e.path()).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// A folder kiln may use and one it may not, with files a reader would want.
struct Roots {
    allowed: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Roots {
    fn new() -> Roots {
        let (allowed, outside) = (tempfile::tempdir().expect("dir"), tempfile::tempdir().expect("dir"));
        std::fs::write(outside.path().join("secret.csv"), "a,b\n1,precious\n").expect("write");
        std::fs::write(outside.path().join("secret.json"), "{\"a\": 1}\n").expect("write");
        std::fs::create_dir_all(outside.path().join("docs")).expect("dir");
        std::fs::write(outside.path().join("docs/notes.txt"), "precious").expect("write");
        // A real Parquet table outside, so a refusal is not a read that failed.
        let s = Session::new();
        s.sql("SELECT 1 AS a").and_then(|df| df.write_parquet(outside.path().join("t"), &[])).expect("a table outside");
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), allowed.path().join("link")).expect("symlink");
        Roots { allowed, outside }
    }
    fn session(&self, codegen: &str) -> Session {
        Session::builder()
            .config("kiln.files.allowedRoots", self.allowed.path().display().to_string())
            .config("spark.sql.warehouse.dir", self.allowed.path().join("warehouse").display().to_string())
            .config("spark.sql.codegen.wholeStage", codegen)
            .build()
            .expect("a session")
    }
    /// Ways to name `name` outside the allowed folder: absolute, `..`, a link, a `file:` URL.
    fn disguises(&self, name: &str) -> Vec<String> {
        let outside = self.outside.path();
        let dir_name = outside.file_name().expect("a name").to_string_lossy().into_owned();
        let mut paths = vec![
            outside.join(name).display().to_string(),
            self.allowed.path().join("..").join(&dir_name).join(name).display().to_string(),
            format!("{}/../../../../../../../..{}", self.allowed.path().display(), outside.join(name).display()),
            format!("file://{}", outside.join(name).display()),
            format!("file:{}", outside.join(name).display()),
        ];
        if cfg!(unix) {
            paths.push(self.allowed.path().join("link").join(name).display().to_string());
        }
        paths
    }
}

/// `result` is an error saying the path is not allowed; the session still answers.
fn refused<T>(s: &Session, what: &str, result: kiln::Result<T>) {
    let err = match result {
        Ok(_) => panic!("{what}: expected a refusal"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("PATH_NOT_ALLOWED") && err.contains("kiln.files.allowedRoots"), "{what}: {err}");
    alive(s);
}

fn alive(s: &Session) {
    let rows = s.sql("SELECT 41 + 1 AS x").and_then(|df| df.collect()).expect("the session still answers");
    assert_eq!(rows[0].num_rows(), 1);
}

fn run(s: &Session, sql: &str) -> kiln::Result<Vec<arrow::record_batch::RecordBatch>> {
    s.sql_script(sql).and_then(|dfs| dfs.into_iter().map(|df| df.collect()).last().unwrap_or(Ok(vec![])))
}

#[test]
fn paths_outside_the_allowed_roots_are_refused_by_every_statement_and_call() {
    let roots = Roots::new();
    let before = snapshot(roots.outside.path());
    for codegen in MODES {
        let s = roots.session(codegen);
        for csv in roots.disguises("secret.csv") {
            refused(&s, &csv, run(&s, &format!("CREATE TEMPORARY VIEW v USING csv OPTIONS (path '{csv}')")));
            refused(&s, &csv, run(&s, &format!("CREATE TABLE c USING csv OPTIONS (path '{csv}', header 'true')")));
            refused(&s, &csv, s.register_csv("c", &csv, &[]));
        }
        for json in roots.disguises("secret.json") {
            refused(&s, &json, run(&s, &format!("CREATE TEMPORARY VIEW v USING json OPTIONS (path '{json}')")));
            refused(&s, &json, s.register_json("j", &json, &[]));
        }
        for t in roots.disguises("t") {
            refused(&s, &t, run(&s, &format!("CREATE TEMPORARY VIEW v USING parquet OPTIONS (path '{t}')")));
            refused(&s, &t, run(&s, &format!("CREATE TABLE e USING parquet LOCATION '{t}'")));
            refused(&s, &t, s.register_parquet("p", &t));
            // `parquet.`path``: refused whether or not the form is supported.
            let direct = run(&s, &format!("SELECT * FROM parquet.`{t}`"));
            assert!(direct.is_err(), "parquet.`{t}` must not read outside");
        }
        for w in roots.disguises("written") {
            refused(&s, &w, run(&s, &format!("CREATE TABLE e (x INT) USING parquet LOCATION '{w}'")));
            refused(&s, &w, run(&s, &format!("CREATE TABLE e USING parquet LOCATION '{w}' AS SELECT 1 AS x")));
            refused(&s, &w, run(&s, &format!("CREATE OR REPLACE TABLE e USING csv OPTIONS (path '{w}') AS SELECT 1 AS x")));
            let df = s.sql("SELECT 1 AS x").expect("plans");
            refused(&s, &w, df.write_parquet(&w, &[]));
            refused(&s, &w, df.write_parquet_with(&w, &[], SaveMode::Overwrite));
            refused(&s, &w, df.write_parquet_with(&w, &[], SaveMode::Append));
            refused(&s, &w, df.write_csv(&w, &[]));
            refused(&s, &w, df.write_json(&w));
        }
        // Overwriting a table that lives outside, by every route.
        for t in roots.disguises("t") {
            refused(&s, &t, s.sql("SELECT 2 AS a").and_then(|df| df.write_parquet_with(&t, &[], SaveMode::Overwrite)));
        }
    }
    assert_eq!(snapshot(roots.outside.path()), before, "nothing outside changed");
}

#[test]
fn a_query_cannot_change_a_static_setting_or_lift_its_confinement() {
    let roots = Roots::new();
    let s = roots.session("true");
    for key in kiln::config::STATIC_KEYS {
        for sql in [format!("SET {key}=/"), format!("SET {key} = x"), format!("RESET {key}")] {
            let err = s.sql(&sql).map(|_| ()).expect_err(&sql).to_string();
            assert_eq!(err, format!("[CANNOT_MODIFY_STATIC_CONFIG] Cannot modify the value of the static Spark config: \"{key}\". SQLSTATE: 46110"), "{sql}");
        }
        // Nor can the host once the session has run a statement.
        assert!(s.set_conf(key, "/").is_err(), "{key} after the first statement");
    }
    // A bare RESET leaves the host's settings: the roots still hold.
    s.sql("RESET").expect("resets");
    let csv = roots.outside.path().join("secret.csv").display().to_string();
    refused(&s, "after RESET", run(&s, &format!("CREATE TEMPORARY VIEW v USING csv OPTIONS (path '{csv}')")));
    // The transcript: the SET fails, and so the view is never made.
    let err = run(&s, &format!("SET kiln.files.allowedRoots=/; CREATE TEMPORARY VIEW v USING csv OPTIONS (path '{csv}'); SELECT * FROM v")).expect_err("refused");
    assert!(err.to_string().contains("CANNOT_MODIFY_STATIC_CONFIG"), "{err}");
    assert_eq!(s.config().expect("config").files_allowed_roots, [roots.allowed.path().display().to_string()]);
}

#[test]
fn the_hosts_limits_are_ceilings_a_query_may_only_lower() {
    let s = Session::builder().config("kiln.memory.limit", "1g").config("kiln.query.timeout", "5s").build().expect("a session");
    for sql in ["SET kiln.memory.limit=2g", "SET kiln.query.timeout=10s", "SET kiln.query.timeout=0"] {
        let err = s.sql(sql).map(|_| ()).expect_err(sql).to_string();
        assert!(err.contains("capped at") && err.contains("by the host"), "{sql}: {err}");
    }
    s.sql("SET kiln.memory.limit=512m").expect("lowered");
    s.sql("SET kiln.query.timeout=1s").expect("lowered");
    assert_eq!(s.config().expect("config").memory_limit, 512 << 20);
    s.sql("RESET kiln.memory.limit").expect("reset");
    let c = s.config().expect("config");
    assert_eq!((c.memory_limit, c.query_timeout), (1 << 30, Duration::from_secs(1)), "RESET goes back to the host's value");
    // The host itself may raise them.
    s.set_conf("kiln.memory.limit", "2g").expect("the host raises");
    s.sql("SET kiln.memory.limit=1500m").expect("under the new ceiling");
}

#[test]
fn the_warehouse_trick_finds_no_table_and_deletes_nothing() {
    let roots = Roots::new();
    let victim = roots.outside.path();
    let before = snapshot(victim);
    for codegen in MODES {
        // Through SQL: the SET fails, DROP finds nothing in the host's warehouse.
        let s = roots.session(codegen);
        let err = run(&s, &format!("SET spark.sql.warehouse.dir={}; DROP TABLE docs", victim.display())).expect_err("refused");
        assert!(err.to_string().contains("CANNOT_MODIFY_STATIC_CONFIG"), "{err}");
        // A host that points its warehouse at the folder: `docs` holds no marker, so it is no table.
        let s = Session::builder().config("spark.sql.warehouse.dir", victim.display().to_string()).config("spark.sql.codegen.wholeStage", codegen).build().expect("a session");
        for sql in ["DROP TABLE docs", "SELECT * FROM docs", "INSERT INTO docs VALUES (1)", "INSERT OVERWRITE docs VALUES (1)", "ANALYZE TABLE docs COMPUTE STATISTICS"] {
            let err = run(&s, sql).expect_err(sql).to_string();
            assert!(err.contains("TABLE_OR_VIEW_NOT_FOUND"), "{sql}: {err}");
        }
        assert!(run(&s, "DROP TABLE IF EXISTS docs").is_ok(), "nothing to drop");
        for sql in ["CREATE TABLE docs USING parquet AS SELECT 1 AS a", "CREATE OR REPLACE TABLE docs USING parquet AS SELECT 1 AS a", "CREATE TABLE docs (a INT) USING parquet"] {
            let err = run(&s, sql).expect_err(sql).to_string();
            assert!(err.contains("PATH_ALREADY_EXISTS") && err.contains("did not write"), "{sql}: {err}");
        }
        assert!(!s.table_names().expect("names").iter().any(|t| t == "docs"), "not listed");
        // The DataFrame writers leave it alone too, in every save mode.
        let df = s.sql("SELECT 1 AS a").expect("plans");
        for mode in [SaveMode::Overwrite, SaveMode::Append, SaveMode::ErrorIfExists] {
            let err = df.write_parquet_with(victim.join("docs"), &[], mode).expect_err("refused").to_string();
            assert!(err.contains("did not write"), "{mode:?}: {err}");
        }
        alive(&s);
    }
    assert_eq!(snapshot(victim), before, "the folder survives");
}

#[test]
fn deletes_take_only_what_kiln_wrote_and_never_follow_links_out() {
    let roots = Roots::new();
    let outside_before = snapshot(roots.outside.path());
    let s = roots.session("true");
    let warehouse = roots.allowed.path().join("warehouse");
    // A kiln table with a stranger's file: kept by DROP, and no rewrite replaces the folder.
    run(&s, "CREATE TABLE t USING parquet PARTITIONED BY (k) AS SELECT 1 AS id, 'a' AS k UNION ALL SELECT 2, 'b'").expect("a table");
    std::fs::write(warehouse.join("t/k=a/mine.txt"), "keep").expect("write");
    for sql in ["INSERT OVERWRITE t SELECT 3, 'c'", "INSERT INTO t SELECT 3, 'c'", "CREATE OR REPLACE TABLE t USING parquet AS SELECT 1 AS id"] {
        let err = run(&s, sql).expect_err(sql).to_string();
        assert!(err.contains("mine.txt"), "{sql}: {err}");
    }
    run(&s, "DROP TABLE t").expect("dropped");
    assert_eq!(snapshot(&warehouse.join("t")).len(), 1, "only the stranger's file is left");
    assert!(warehouse.join("t/k=a/mine.txt").exists());
    assert!(run(&s, "SELECT * FROM t").is_err(), "no longer a table");
    // A partition folder swapped for a link out: DROP refuses and deletes nothing.
    #[cfg(unix)]
    {
        run(&s, "CREATE TABLE u USING parquet PARTITIONED BY (k) AS SELECT 1 AS id, 'a' AS k").expect("a table");
        let part = warehouse.join("u/k=a");
        let file = std::fs::read_dir(&part).expect("lists").map(|e| e.expect("entry").file_name()).find(|n| n.to_string_lossy().ends_with(".parquet")).expect("a file");
        let lure = roots.outside.path().join("lure");
        std::fs::create_dir_all(&lure).expect("dir");
        std::fs::write(lure.join(&file), "precious").expect("write");
        std::fs::remove_dir_all(&part).expect("remove");
        std::os::unix::fs::symlink(&lure, &part).expect("symlink");
        let err = run(&s, "DROP TABLE u").expect_err("refused").to_string();
        assert!(err.contains("outside the table's folder"), "{err}");
        for sql in ["INSERT OVERWRITE u SELECT 2, 'b'", "INSERT INTO u SELECT 2, 'b'"] {
            assert!(run(&s, sql).is_err(), "{sql}");
        }
        assert_eq!(std::fs::read(lure.join(&file)).expect("still there"), b"precious");
        std::fs::remove_dir_all(&lure).expect("clean up");
        // The table folder itself a link out.
        let linked = warehouse.join("v");
        std::os::unix::fs::symlink(roots.outside.path().join("t"), &linked).expect("symlink");
        assert!(run(&s, "DROP TABLE v").is_err(), "a linked folder is not a table");
    }
    assert_eq!(snapshot(roots.outside.path()), outside_before);
    alive(&s);
}

#[test]
fn tables_kiln_writes_keep_working_end_to_end() {
    let dir = tempfile::tempdir().expect("dir");
    for codegen in MODES {
        let s = Session::builder().config("spark.sql.warehouse.dir", dir.path().display().to_string()).config("spark.sql.codegen.wholeStage", codegen).build().expect("a session");
        run(&s, "CREATE TABLE w USING parquet PARTITIONED BY (k) AS SELECT id, CASE WHEN id % 2 = 0 THEN 'a' ELSE 'b' END AS k FROM range(4)").expect("created");
        run(&s, "INSERT INTO w SELECT 9, 'z'").expect("appended");
        run(&s, "ANALYZE TABLE w COMPUTE STATISTICS").expect("analyzed");
        run(&s, "INSERT OVERWRITE w SELECT 7, 'y'").expect("overwritten");
        let rows = run(&s, "SELECT count(*) FROM w").expect("read");
        assert_eq!(kiln::format::result_csv(&rows[0].schema(), &rows), "count(1)\n1\n");
        run(&s, "CREATE OR REPLACE TABLE w USING parquet AS SELECT 1 AS a").expect("replaced");
        run(&s, "DROP TABLE w").expect("dropped");
        assert_eq!(std::fs::read_dir(dir.path()).expect("lists").count(), 0, "nothing left behind");
    }
}

#[test]
fn deep_nesting_and_long_expressions_are_errors_or_answers_never_crashes() {
    let s = Session::new();
    for codegen in MODES {
        s.set_conf("spark.sql.codegen.wholeStage", codegen).expect("a setting");
        let parens = format!("SELECT {}1{}", "(".repeat(100_000), ")".repeat(100_000));
        let sum = format!("SELECT {}", vec!["1"; 100_000].join(" + "));
        let nested = format!("SELECT * FROM {} (SELECT 1 AS a) {}", "(SELECT * FROM ".repeat(2000), ") AS q".repeat(2000));
        let case = format!("SELECT {} 0 {}", "CASE WHEN rand() < 0.5 THEN ".repeat(5000), " ELSE 1 END".repeat(5000));
        let func = format!("SELECT {}'x'{}", "upper(".repeat(50_000), ")".repeat(50_000));
        for sql in [parens, sum, nested, case, func] {
            let err = run(&s, &sql).expect_err("too deep").to_string();
            assert!(err.contains("Syntax error"), "{}...: {err}", &sql[..40]);
            alive(&s);
        }
        let wide = format!("SELECT {}", (0..5000).map(|i| format!("{i} AS c{i}")).collect::<Vec<_>>().join(", "));
        assert_eq!(run(&s, &wide).expect("5000 columns")[0].num_columns(), 5000);
    }
}

/// A generated UNION of thousands of queries answers on a thread of a server's stack size (each
/// UNION nested in the next, the plan was as deep as the run and its recursion overflowed).
#[test]
fn a_union_of_thousands_of_queries_answers() {
    let all = (0..8000).map(|i| format!("SELECT {i} AS x")).collect::<Vec<_>>().join(" UNION ALL ");
    let distinct = (0..8000).map(|i| format!("SELECT {} AS x", i % 100)).collect::<Vec<_>>().join(" UNION ");
    let answers = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let s = Session::new();
            MODES
                .iter()
                .map(|codegen| {
                    s.set_conf("spark.sql.codegen.wholeStage", codegen).expect("a setting");
                    let a = run(&s, &format!("SELECT count(*), sum(x) FROM ({all})")).expect("UNION ALL");
                    let d = run(&s, &format!("SELECT count(*) FROM ({distinct})")).expect("UNION");
                    (kiln::format::result_csv(&a[0].schema(), &a), kiln::format::result_csv(&d[0].schema(), &d))
                })
                .collect::<Vec<_>>()
        })
        .expect("a thread")
        .join()
        .expect("no overflow");
    for (a, d) in answers {
        assert_eq!(a, "count(1),sum(x)\n8000,31996000\n");
        assert_eq!(d, "count(1)\n100\n");
    }
}

/// EXPLAIN of `SELECT * FROM t WHERE x IN (0, 1, ..., n - 1)`: the seconds it takes.
fn explain_in_list(s: &Session, n: usize) -> f64 {
    let list = (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    let sql = format!("EXPLAIN SELECT * FROM t WHERE x IN ({list})");
    let start = Instant::now();
    let rows = run(s, &sql).expect("explained");
    assert_eq!(rows[0].num_rows(), 1);
    start.elapsed().as_secs_f64()
}

#[test]
fn a_100000_element_in_list_explains_in_linear_time() {
    let s = Session::new();
    run(&s, "CREATE TABLE t AS SELECT CAST(id AS INT) AS x FROM range(10)").expect("a table");
    for codegen in MODES {
        s.set_conf("spark.sql.codegen.wholeStage", codegen).expect("a setting");
        // The least of three runs each, alternating, so a busy machine does not decide. Four
        // times the items: linear work takes about 4x, quadratic 16x; 10x separates them with
        // room for allocator and cache effects.
        let (mut t50, mut t200) = (f64::MAX, f64::MAX);
        for _ in 0..3 {
            t50 = t50.min(explain_in_list(&s, 50_000));
            t200 = t200.min(explain_in_list(&s, 200_000));
        }
        eprintln!("EXPLAIN of an IN list (codegen {codegen}): 50,000 items {t50:.3} s, 200,000 items {t200:.3} s");
        assert!(t200 < 4.0, "200,000 items took {t200:.3} s");
        assert!(t200 < 10.0 * t50.max(0.05), "200,000 items took {t200:.3} s, 50,000 {t50:.3} s: not linear");
        // And it runs: the lookup keeps the ten rows.
        let list = (0..100_000).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        let rows = run(&s, &format!("SELECT count(*) FROM t WHERE x IN ({list})")).expect("runs");
        assert_eq!(kiln::format::result_csv(&rows[0].schema(), &rows), "count(1)\n10\n");
    }
}

#[test]
fn a_two_billion_character_repeat_is_refused_under_the_memory_limit() {
    let s = Session::builder().config("kiln.memory.limit", "1g").build().expect("a session");
    for codegen in MODES {
        s.set_conf("spark.sql.codegen.wholeStage", codegen).expect("a setting");
        for sql in ["SELECT length(repeat('a', 2000000000))", "SELECT length(repeat(CAST(id AS STRING), 2000000000)) FROM range(3)", "SELECT length(lpad('a', 2000000000, 'b'))"] {
            let err = run(&s, sql).expect_err(sql).to_string();
            assert!(err.contains("UNABLE_TO_ACQUIRE_MEMORY") && err.contains("kiln.memory.limit"), "{sql}: {err}");
            alive(&s);
        }
    }
}

#[test]
fn a_range_of_a_quintillion_rows_streams_until_the_timeout() {
    let s = Session::builder().config("kiln.query.timeout", "1s").build().expect("a session");
    for codegen in MODES {
        s.set_conf("spark.sql.codegen.wholeStage", codegen).expect("a setting");
        let start = Instant::now();
        let err = run(&s, "SELECT count(*), max(id) FROM range(1000000000000000000)").expect_err("times out").to_string();
        assert!(err.contains("kiln.query.timeout"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(10), "stopped near its timeout: {:?}", start.elapsed());
        let err = run(&s, "SELECT * FROM range(0, 1000000000000000000, 1, 4) WHERE id < 0").expect_err("times out").to_string();
        assert!(err.contains("kiln.query.timeout"), "{err}");
        alive(&s);
    }
}
