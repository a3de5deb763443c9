//! Collected statistics and the cost-based optimizer: `ANALYZE TABLE`, `DESCRIBE EXTENDED`
//! as Spark prints it (the reference `.describe_extended.txt` captures), statistics kept with
//! a managed table across sessions and dropped by INSERT, and `EXPLAIN COST` with CBO on (the
//! `.cost_cbo.txt` captures).

use std::path::{Path, PathBuf};

use kiln::Session;

mod common;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference")
}

fn session(warehouse: &Path) -> Session {
    Session::builder()
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.warehouse.dir", warehouse.display().to_string())
        .config("kiln.optimizer.strict", "true")
        .build()
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The files below `dir`, relative to it.
fn files_below(dir: &Path, rel: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir.join(rel)).unwrap() {
        let e = e.unwrap();
        let sub = rel.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            out.extend(files_below(dir, &sub));
        } else {
            out.push(sub);
        }
    }
    out
}

/// A warehouse holding a reference data set's tables as managed tables (the files copied, so
/// their sizes are the data set's), as Spark's captures had them.
fn warehouse_of(dataset: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(root().join("data").join(dataset)).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap().to_string();
        if path.is_dir() {
            copy_dir(&path, &dir.path().join(&name));
        } else {
            std::fs::create_dir_all(dir.path().join(&name)).unwrap();
            std::fs::copy(&path, dir.path().join(&name).join("part-00000.parquet")).unwrap();
        }
        // Marked as kiln's, as a table kiln wrote would be.
        let table = dir.path().join(&name);
        kiln::datasource::owned::write_marker(&table, &files_below(&table, Path::new(""))).unwrap();
    }
    dir
}

fn header<'a>(sql: &'a str, key: &str) -> Vec<&'a str> {
    sql.lines().filter_map(|l| l.strip_prefix(&format!("-- {key}:"))).map(|v| v.trim()).collect()
}

/// The reference queries with a CBO capture of `kind` (`cost_cbo`, `describe_extended`).
fn cbo_captures(kind: &str) -> Vec<(String, String, String)> {
    let mut out = vec![];
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("queries")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in files.into_iter().filter(|f| f.extension().is_some_and(|e| e == "sql")) {
        let Ok(capture) = std::fs::read_to_string(file.with_extension(format!("{kind}.txt"))) else { continue };
        let name = file.file_stem().unwrap().to_str().unwrap().to_string();
        out.push((name, std::fs::read_to_string(&file).unwrap(), capture));
    }
    out
}

/// Runs the query's `-- cbo_analyze: table cols` lines as ANALYZE ... FOR COLUMNS.
fn analyze(session: &Session, sql: &str) {
    for line in header(sql, "cbo_analyze") {
        let (table, cols) = line.split_once(' ').unwrap();
        session.sql(&format!("ANALYZE TABLE {table} COMPUTE STATISTICS FOR COLUMNS {cols}")).unwrap();
    }
}

fn show(session: &Session, sql: &str) -> String {
    let df = session.sql(sql).unwrap();
    let batches = df.collect().unwrap();
    kiln::format::show_string(&df.schema(), &batches, 1000, 0, df.time_zone())
}

/// The cells of a `show` table, trimmed, one Vec per line.
fn cells(text: &str) -> Vec<Vec<String>> {
    text.lines().filter(|l| l.starts_with('|')).map(|l| l.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect()).collect()
}

#[test]
fn describe_extended_matches_spark() {
    let captures = cbo_captures("describe_extended");
    assert_eq!(captures.len(), 2, "two DESCRIBE captures");
    for (name, sql, capture) in captures {
        let dataset = header(&sql, "dataset")[0];
        let table = header(&sql, "cbo_describe")[0];
        let warehouse = warehouse_of(dataset);
        let session = session(warehouse.path());
        analyze(&session, &sql);
        let mut sections = capture.split("\n-- DESCRIBE EXTENDED ");
        // The table: cells compared, with what depends on the machine and the time masked
        // (Location and Created Time; Database, as kiln's tables are in `default`; Created By).
        let spark_table = sections.next().unwrap();
        let kiln_table = show(&session, &format!("DESCRIBE EXTENDED {table}"));
        let masked = |rows: Vec<Vec<String>>| -> Vec<Vec<String>> {
            rows.into_iter()
                .map(|mut r| {
                    let key = r[0].clone();
                    if ["Location", "Created Time", "Database", "Created By"].contains(&key.as_str()) {
                        r[1] = "?".into();
                    }
                    // The TPC-H files were written again: their bytes differ, the rows not.
                    if key == "Statistics" && dataset != "sales" {
                        r[1] = r[1].split_once(" bytes").map(|(_, rest)| format!("? bytes{rest}")).unwrap_or_default();
                    }
                    r
                })
                .collect()
        };
        assert_eq!(masked(cells(&kiln_table)), masked(cells(spark_table)), "{name}: DESCRIBE EXTENDED {table}\n{kiln_table}");
        // Each column: the text exactly.
        for section in sections {
            let (title, spark) = section.split_once('\n').unwrap();
            let column = title.rsplit(' ').next().unwrap();
            let kiln = show(&session, &format!("DESCRIBE EXTENDED {table} {column}"));
            assert_eq!(kiln.trim_end(), spark.trim_end(), "{name}: DESCRIBE EXTENDED {table} {column}");
        }
    }
}

/// `spark_catalog.<db>.` -> `spark_catalog.default.`, ids masked.
fn normalize_plan(text: &str) -> String {
    let out = common::mask_ids(text);
    ["shop", "sales", "tpch"].iter().fold(out, |s, db| s.replace(&format!("spark_catalog.{db}."), "spark_catalog.default."))
}

fn optimized_section(text: &str) -> String {
    let start = text.find("== Optimized Logical Plan ==\n").map_or(0, |s| s + "== Optimized Logical Plan ==\n".len());
    let end = text.find("\n== Physical Plan ==").unwrap_or(text.len());
    normalize_plan(text[start..end].trim_end())
}

fn mask_sizes(text: &str) -> String {
    text.split("sizeInBytes=")
        .enumerate()
        .map(|(i, part)| if i == 0 { part.to_string() } else { format!("?{}", &part[part.find([',', ')']).unwrap_or(part.len())..]) })
        .collect::<Vec<_>>()
        .join("sizeInBytes=")
}

/// With the captures' columns analyzed and `spark.sql.cbo.enabled`, every node of the
/// optimized plan has Spark's size and row count. The sales files are Spark's own, so sizes
/// must match to the byte; the TPC-H files differ in size, so there only row counts are compared.
#[test]
fn cost_with_cbo_matches_spark() {
    let captures = cbo_captures("cost_cbo");
    assert_eq!(captures.len(), 2, "two CBO captures");
    for (name, sql, capture) in captures {
        let dataset = header(&sql, "dataset")[0];
        let warehouse = warehouse_of(dataset);
        let session = session(warehouse.path());
        analyze(&session, &sql);
        session.sql("SET spark.sql.cbo.enabled=true").unwrap();
        let query: String = sql.lines().filter(|l| !l.starts_with("--")).collect::<Vec<_>>().join("\n");
        let text = session.sql(&query).and_then(|df| df.explain_string(kiln::ExplainMode::Cost)).unwrap();
        let (spark, kiln) = (optimized_section(&capture), optimized_section(&text));
        let (spark, kiln) = if dataset == "sales" { (spark, kiln) } else { (mask_sizes(&spark), mask_sizes(&kiln)) };
        assert_eq!(kiln, spark, "{name}: EXPLAIN COST with CBO");
    }
}

fn csv(session: &Session, sql: &str) -> String {
    let df = session.sql(sql).unwrap();
    let batches = df.collect().unwrap();
    kiln::format::result_csv(&df.schema(), &batches)
}

fn describe_value(session: &Session, sql: &str, key: &str) -> Option<String> {
    let text = csv(session, sql);
    text.lines().find_map(|l| l.strip_prefix(&format!("{key},")).map(|v| v.trim_end_matches(',').trim_matches('"').to_string()))
}

#[test]
fn managed_table_statistics_survive_a_new_session_and_insert_drops_them() {
    let dir = tempfile::tempdir().unwrap();
    let s1 = session(dir.path());
    s1.sql("CREATE TABLE t (a INT, s STRING) USING parquet").unwrap();
    s1.sql("INSERT INTO t VALUES (1, 'x'), (2, 'yy'), (2, NULL), (5, 'zzzz')").unwrap();
    assert_eq!(describe_value(&s1, "DESCRIBE EXTENDED t", "Statistics"), None, "no statistics before ANALYZE");
    s1.sql("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS").unwrap();
    let stats = describe_value(&s1, "DESCRIBE EXTENDED t", "Statistics").unwrap();
    assert!(stats.ends_with(" bytes, 4 rows"), "{stats}");

    // A new session over the same warehouse reads them from the table's folder.
    let s2 = session(dir.path());
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t", "Statistics").as_deref(), Some(stats.as_str()));
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t a", "distinct_count").as_deref(), Some("3"));
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t a", "min").as_deref(), Some("1"));
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t a", "max").as_deref(), Some("5"));
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t s", "num_nulls").as_deref(), Some("1"));
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t s", "max_col_len").as_deref(), Some("4"));
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t s", "avg_col_len").as_deref(), Some("3"));
    s2.sql("SET spark.sql.cbo.enabled=true").unwrap();
    let cost = s2.sql("SELECT * FROM t").unwrap().explain_string(kiln::ExplainMode::Cost).unwrap();
    assert!(cost.contains("rowCount=4)"), "{cost}");

    // INSERT drops them, in this session and the others.
    s2.sql("INSERT INTO t VALUES (9, 'w')").unwrap();
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t", "Statistics"), None);
    assert_eq!(describe_value(&s1, "DESCRIBE EXTENDED t", "Statistics"), None);
    assert_eq!(describe_value(&s1, "DESCRIBE EXTENDED t a", "distinct_count").as_deref(), Some("NULL"));
    let cost = s2.sql("SELECT * FROM t").unwrap().explain_string(kiln::ExplainMode::Cost).unwrap();
    assert!(!cost.contains("rowCount"), "{cost}");

    // Files changed behind the statistics' back do not use them either.
    s1.sql("ANALYZE TABLE t COMPUTE STATISTICS").unwrap();
    assert!(describe_value(&s1, "DESCRIBE EXTENDED t", "Statistics").unwrap().ends_with(", 5 rows"));
    s1.table("t").unwrap().write_parquet_with(dir.path().join("t"), &[], kiln::SaveMode::Append).unwrap();
    assert_eq!(describe_value(&s2, "DESCRIBE EXTENDED t", "Statistics"), None);
}

#[test]
fn session_tables_keep_statistics_until_written() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path());
    s.sql("CREATE TABLE m (a BIGINT, d DATE, x DECIMAL(10,2))").unwrap();
    s.sql("INSERT INTO m VALUES (1, DATE'2024-01-01', 1.50), (3, DATE'2024-03-01', NULL)").unwrap();
    s.sql("ANALYZE TABLE m COMPUTE STATISTICS NOSCAN").unwrap();
    let noscan = describe_value(&s, "DESCRIBE EXTENDED m", "Statistics").unwrap();
    assert!(noscan.ends_with(" bytes"), "NOSCAN counts no rows: {noscan}");
    s.sql("ANALYZE TABLE m COMPUTE STATISTICS FOR COLUMNS d, x").unwrap();
    assert_eq!(describe_value(&s, "DESCRIBE EXTENDED m d", "max").as_deref(), Some("2024-03-01"));
    assert_eq!(describe_value(&s, "DESCRIBE EXTENDED m x", "min").as_deref(), Some("1.50"));
    assert_eq!(describe_value(&s, "DESCRIBE EXTENDED m x", "num_nulls").as_deref(), Some("1"));
    assert_eq!(describe_value(&s, "DESCRIBE EXTENDED m a", "distinct_count").as_deref(), Some("NULL"));
    s.sql("SET spark.sql.statistics.histogram.enabled=true").unwrap();
    s.sql("SET spark.sql.statistics.histogram.numBins=2").unwrap();
    s.sql("ANALYZE TABLE m COMPUTE STATISTICS FOR COLUMNS a").unwrap();
    assert_eq!(describe_value(&s, "DESCRIBE EXTENDED m a", "histogram").as_deref(), Some("height: 1.0, num_of_bins: 2"));
    assert_eq!(describe_value(&s, "DESCRIBE EXTENDED m d", "max").as_deref(), Some("2024-03-01"), "earlier columns stay");
    s.sql("INSERT INTO m VALUES (7, NULL, NULL)").unwrap();
    assert_eq!(describe_value(&s, "DESCRIBE EXTENDED m", "Statistics"), None);
    let err = s.sql("ANALYZE TABLE m COMPUTE STATISTICS FOR COLUMNS nope").err().unwrap().to_string();
    assert!(err.contains("`nope`"), "{err}");
}

/// Every TPC-H reference query gives its expected rows with every table analyzed and the CBO
/// and the join reorder on (compiled and interpreted, optimizer in strict mode), and the
/// reorder changes some plans.
#[test]
fn tpch_answers_hold_with_cbo_and_join_reorder() {
    let mut failures = vec![];
    let mut reordered = 0;
    let mut ran = 0;
    for codegen in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let s = session(dir.path());
        s.set_conf("spark.sql.codegen.wholeStage", &codegen.to_string()).unwrap();
        for e in std::fs::read_dir(root().join("data/tpch")).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            s.register_parquet(&name, &path).unwrap();
            s.sql(&format!("ANALYZE TABLE {name} COMPUTE STATISTICS FOR ALL COLUMNS")).unwrap();
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("queries")).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files.iter().filter(|f| f.extension().is_some_and(|e| e == "sql")) {
            let name = file.file_stem().unwrap().to_str().unwrap();
            if !name.starts_with("tpch_") {
                continue;
            }
            let sql = std::fs::read_to_string(file).unwrap();
            let expected = std::fs::read_to_string(file.with_extension("result.csv")).unwrap();
            let ordered = header(&sql, "order").first().is_some_and(|o| *o == "defined");
            s.set_conf("spark.sql.cbo.enabled", "true").unwrap();
            s.set_conf("spark.sql.cbo.joinReorder.enabled", "false").unwrap();
            let before = s.sql(&sql).unwrap().optimized_plan().tree_string();
            s.set_conf("spark.sql.cbo.joinReorder.enabled", "true").unwrap();
            ran += 1;
            let result = s.sql(&sql).and_then(|df| {
                let text = df.optimized_plan().tree_string();
                let batches = df.collect()?;
                Ok((text, kiln::format::result_csv(&df.schema(), &batches)))
            });
            match result {
                Err(e) => failures.push(format!("{name} (codegen {codegen}): {e}")),
                Ok((after, actual)) => {
                    reordered += usize::from(after != before);
                    let same = if ordered { actual == expected } else { common::sorted_lines(&actual) == common::sorted_lines(&expected) };
                    if !same {
                        failures.push(format!("{name} (codegen {codegen}):\n--- expected\n{expected}--- actual\n{actual}"));
                    }
                }
            }
        }
    }
    assert!(ran >= 44, "only {ran} runs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(reordered >= 2, "the join reorder changed only {reordered} plans");
}

/// The DP joins the pair with the fewest estimated rows first, only with both CBO settings on.
#[test]
fn join_reorder_joins_the_smallest_pair_first() {
    let dir = tempfile::tempdir().unwrap();
    let s = session(dir.path());
    let values = |n: usize, f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join(", ");
    s.sql("CREATE TABLE big (k BIGINT)").unwrap();
    s.sql(&format!("INSERT INTO big VALUES {}", values(5000, &|i| format!("({})", i % 100)))).unwrap();
    s.sql("CREATE TABLE mid (k BIGINT, j BIGINT)").unwrap();
    s.sql(&format!("INSERT INTO mid VALUES {}", values(100, &|i| format!("({i}, {})", i % 10)))).unwrap();
    s.sql("CREATE TABLE small (j BIGINT, name STRING)").unwrap();
    s.sql(&format!("INSERT INTO small VALUES {}", values(10, &|i| format!("({i}, 'n{i}')")))).unwrap();
    for t in ["big", "mid", "small"] {
        s.sql(&format!("ANALYZE TABLE {t} COMPUTE STATISTICS FOR ALL COLUMNS")).unwrap();
    }
    let sql = "SELECT big.k, small.name FROM big JOIN mid ON big.k = mid.k JOIN small ON mid.j = small.j";
    let outer_condition = |s: &Session| {
        let plan = s.sql(sql).unwrap().optimized_plan().tree_string();
        plan.lines().find(|l| l.contains("Join Inner")).map(|l| common::mask_ids(l.trim_start_matches(|c: char| " :+-".contains(c)))).unwrap()
    };
    let expected = csv(&s, sql);
    assert_eq!(outer_condition(&s), "Join Inner, (j#nL = j#nL)", "written order without the reorder");
    s.sql("SET spark.sql.cbo.enabled=true").unwrap();
    assert_eq!(outer_condition(&s), "Join Inner, (j#nL = j#nL)", "CBO alone does not reorder");
    s.sql("SET spark.sql.cbo.joinReorder.enabled=true").unwrap();
    // mid ⋈ small: 100 rows; big ⋈ mid: 5000 rows. The smaller pair goes first.
    assert_eq!(outer_condition(&s), "Join Inner, (k#nL = k#nL)");
    assert_eq!(common::sorted_lines(&csv(&s, sql)), common::sorted_lines(&expected));
    s.sql("SET spark.sql.cbo.joinReorder.dp.threshold=2").unwrap();
    assert_eq!(outer_condition(&s), "Join Inner, (j#nL = j#nL)", "more items than the threshold");
}
