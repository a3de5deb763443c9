//! The `kiln` binary end to end: answers, output formats, and a clear error with a non-zero
//! exit (never a panic) for each kind of bad input.

use std::path::{Path, PathBuf};
use std::process::Command;

fn shop(table: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/shop").join(format!("{table}.parquet"));
    format!("{table}={}", path.display())
}

/// Runs `kiln sql` over the shop tables; returns (success, stdout, stderr).
fn kiln(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kiln")).args(args).output().expect("kiln runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn sql(query: &str, format: &str) -> (bool, String, String) {
    let (o, c) = (shop("orders"), shop("customers"));
    kiln(&["sql", "--table", &o, "--table", &c, "--format", format, query])
}

fn fails_with(query: &str, needles: &[&str]) {
    let (ok, _, err) = sql(query, "csv");
    assert!(!ok, "{query} should fail");
    assert!(!err.contains("panicked"), "{query} panicked: {err}");
    for n in needles {
        assert!(err.contains(n), "{query}: expected `{n}` in the error, got: {err}");
    }
}

#[test]
fn csv_output_has_header_and_empty_nulls() {
    let (ok, out, err) = sql("SELECT order_id, amount FROM orders WHERE order_id IN (101, 105) ORDER BY order_id", "csv");
    assert!(ok, "{err}");
    assert_eq!(out, "order_id,amount\n101,40.00\n105,\n");
}

#[test]
fn jsonl_output_keeps_decimal_scale_and_dates() {
    let (ok, out, err) = sql("SELECT order_id, amount, order_date FROM orders WHERE order_id IN (101, 105) ORDER BY order_id", "jsonl");
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("{\"order_id\":101,\"amount\":40.00,\"order_date\":\"20"), "{out}");
    assert!(lines[1].contains("\"amount\":null"), "{out}");
}

#[test]
fn scripts_run_statements_in_order() {
    let (ok, out, err) = kiln(&["sql", "--format", "csv", "CREATE TABLE t (a INT, b STRING); INSERT INTO t VALUES (1, 'x'), (2, NULL); SELECT a, b FROM t ORDER BY a"]);
    assert!(ok, "{err}");
    assert_eq!(out, "a,b\n1,x\n2,\n");
}

#[test]
fn unknown_table_suggests_a_name() {
    fails_with("SELECT * FROM order", &["TABLE_OR_VIEW_NOT_FOUND", "`order`", "Did you mean `orders`?"]);
}

#[test]
fn unknown_column_suggests_a_name() {
    fails_with("SELECT stauts FROM orders", &["UNRESOLVED_COLUMN", "`stauts`", "Did you mean `status`?"]);
}

#[test]
fn ambiguous_column_names_both_candidates() {
    fails_with("SELECT customer_id FROM orders o JOIN customers c ON o.customer_id = c.customer_id", &["AMBIGUOUS_REFERENCE", "`o`.`customer_id`", "`c`.`customer_id`"]);
}

#[test]
fn type_mismatch_is_an_analysis_error() {
    fails_with("SELECT order_date + status FROM orders", &["DATATYPE_MISMATCH"]);
}

#[test]
fn division_by_zero_is_an_error() {
    fails_with("SELECT order_id / 0 FROM orders", &["DIVIDE_BY_ZERO"]);
}

#[test]
fn unsupported_sql_names_the_construct() {
    let (ok, _, err) = sql("SELECT order_id FROM orders UNION BY NAME SELECT customer_id FROM customers", "csv");
    assert!(!ok);
    assert!(err.contains("UNION BY NAME"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn syntax_error_reports_position() {
    fails_with("SELEC order_id FROM orders", &["[PARSE_SYNTAX_ERROR] Syntax error at or near 'SELEC'"]);
}

/// The error's line and a caret under the position, as DuckDB shows them.
fn caret_under(query: &str, line: usize, token: &str) {
    let (ok, _, err) = sql(query, "csv");
    assert!(!ok && !err.contains("panicked"), "{query}: {err}");
    let label = format!("LINE {line}: ");
    let lines: Vec<&str> = err.lines().collect();
    let at = lines.iter().position(|l| l.starts_with(&label)).unwrap_or_else(|| panic!("{query}: no `{label}` line in {err}"));
    let shown = &lines[at][label.len()..];
    assert_eq!(shown, query.lines().nth(line - 1).unwrap_or_default(), "{err}");
    let caret = lines.get(at + 1).and_then(|l| l.find('^')).unwrap_or_else(|| panic!("{query}: no caret in {err}"));
    let column = caret - label.len();
    let expected = if token.is_empty() { shown.len() } else { shown.find(token).expect("token in the line") };
    assert_eq!(column, expected, "{query}: caret at {column}, `{token}` at {expected}: {err}");
}

#[test]
fn syntax_errors_show_the_line_with_a_caret() {
    caret_under("SELECT order_id FROM orders WHERE amount = = 1", 1, "= 1");
    caret_under("SELECT order_id\nFROM orders\nWHERE amount > > 1", 3, "> 1");
    // The end of input has a position too (sqlparser gives `found: EOF` none): just past the text.
    caret_under("SELECT (1 + 2", 1, "");
    fails_with("SELECT (1 + 2", &["found: end of input at Line: 1, Column: 14"]);
    // Spark's analyzer reads `FROM` as a column there and names the trailing comma, at FROM.
    caret_under("SELECT order_id, FROM orders", 1, "FROM");
    fails_with("SELECT order_id, FROM orders", &["[TRAILING_COMMA_IN_SELECT]", "Column: 18"]);
    // An unquoted value after a type name is Spark's syntax error at the value.
    caret_under("SELECT count(*) FROM orders WHERE order_date > date 1994-01-01", 1, "1994");
    fails_with("SELECT count(*) FROM orders WHERE order_date > date 1994-01-01", &["[PARSE_SYNTAX_ERROR] Syntax error at or near '1994'"]);
    // Statements after the first keep the whole script's positions.
    caret_under("SELECT 1; SELECT (2 + ; SELECT 3", 1, " ; SELECT 3");
}

#[test]
fn a_long_line_is_cut_around_the_caret() {
    let query = format!("SELECT {} order_id FROM orders WHERE amount = = 1", "amount, ".repeat(40));
    let (ok, _, err) = sql(&query, "csv");
    assert!(!ok, "{err}");
    let shown = err.lines().find(|l| l.starts_with("LINE 1: ...")).unwrap_or_else(|| panic!("no cut line in {err}"));
    assert!(shown.len() < 120 && shown.contains("= = 1"), "{err}");
    let caret = err.lines().skip_while(|l| !l.starts_with("LINE 1: ")).nth(1).and_then(|l| l.find('^')).expect("caret");
    assert_eq!(&shown[caret..caret + 3], "= 1", "{err}");
}

#[test]
fn messages_name_columns_without_expression_ids_and_types_as_written() {
    // Spark's words: the string is read as a DATE, the + is date_add; columns without `#id`.
    fails_with("SELECT order_date + status FROM orders", &["[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve \"date_add(order_date, status)\"", "however \"status\" has the type \"DATE\""]);
    fails_with("SELECT order_date * status FROM orders", &["[DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE] Cannot resolve \"(order_date * ", "not \"DATE\""]);
    for query in [
        "SELECT order_date + status FROM orders",
        "SELECT order_date * status FROM orders",
        "SELECT sum(status) FROM orders",
        "SELECT abs(status) FROM orders",
        "SELECT CAST(order_date AS BOOLEAN) FROM orders",
        "SELECT order_id FROM orders WHERE amount",
        "SELECT order_id FROM orders WHERE order_id IN (order_date, 1)",
        "SELECT CASE WHEN order_id > 1 THEN order_date ELSE amount END FROM orders",
    ] {
        let (ok, _, err) = sql(query, "csv");
        assert!(!ok, "{query} should fail");
        let id = err.char_indices().any(|(i, c)| c == '#' && err[i + 1..].starts_with(|d: char| d.is_ascii_digit()));
        assert!(!id, "{query}: an expression id in the message: {err}");
    }
}

#[test]
fn missing_parquet_file_names_the_path() {
    let (ok, _, err) = kiln(&["sql", "--table", "t=/nonexistent/kiln/t.parquet", "SELECT 1"]);
    assert!(!ok);
    assert!(err.contains("/nonexistent/kiln/t.parquet"), "{err}");
}

#[test]
fn corrupt_parquet_file_names_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path: PathBuf = dir.path().join("bad.parquet");
    std::fs::write(&path, b"this is not parquet at all").expect("write");
    let (ok, _, err) = kiln(&["sql", "--table", &format!("t={}", path.display()), "SELECT * FROM t"]);
    assert!(!ok);
    assert!(err.contains("bad.parquet"), "{err}");
    assert!(err.contains("[FAILED_READ_FILE.CANNOT_READ_FILE_FOOTER] not a Parquet file"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // A fake footer (the magic at the end, a nonsense length before it) reads the same way.
    std::fs::write(&path, b"hello, not parquet\x01\x02\x03\x04PAR1").expect("write");
    let (ok, _, err) = kiln(&["sql", "--table", &format!("t={}", path.display()), "SELECT * FROM t"]);
    assert!(!ok && err.contains("bad.parquet") && err.contains("not a Parquet file"), "{err}");
}

#[test]
fn bad_setting_suggests_the_key() {
    let (ok, _, err) = kiln(&["sql", "--conf", "spark.sql.shuffle.partition=4", "SELECT 1"]);
    assert!(!ok);
    assert!(err.contains("spark.sql.shuffle.partitions"), "{err}");
}

#[test]
fn explain_extended_prints_every_stage() {
    let (o, c) = (shop("orders"), shop("customers"));
    let (ok, out, err) = kiln(&[
        "explain", "--mode", "extended", "--table", &o, "--table", &c,
        "SELECT customer_id, SUM(amount) AS revenue FROM orders WHERE status = 'paid' GROUP BY customer_id",
    ]);
    assert!(ok, "{err}");
    for section in ["== Parsed Logical Plan ==", "== Analyzed Logical Plan ==", "== Optimized Logical Plan ==", "== Physical Plan =="] {
        assert!(out.contains(section), "{out}");
    }
    assert!(out.contains("'UnresolvedRelation [orders], [], false"), "{out}");
    assert!(out.contains("customer_id: int, revenue: decimal(20,2)"), "{out}");
    assert!(out.contains("Exchange hashpartitioning(customer_id#"), "{out}");
    assert!(out.contains("functions=[partial_sum(amount#"), "{out}");
    assert!(out.contains("PushedFilters: [IsNotNull(status), EqualTo(status,paid)]"), "{out}");
}

#[test]
fn explain_cost_and_formatted_modes() {
    let (o, c) = (shop("orders"), shop("customers"));
    let query = "SELECT customer_id, SUM(amount) AS revenue FROM orders WHERE status = 'paid' GROUP BY customer_id";
    let (ok, out, err) = kiln(&["explain", "--mode", "cost", "--table", &o, "--table", &c, query]);
    assert!(ok, "{err}");
    // The shop orders file is 1658 bytes; the Project keeps 2 of 5 columns (4+8+8 of 4+4+20+8+4+8 bytes a row).
    assert!(out.contains("Relation spark_catalog.default.orders[order_id#"), "{out}");
    assert!(out.contains("parquet, Statistics(sizeInBytes=1658.0 B)"), "{out}");
    assert!(out.contains("+- Project [customer_id#"), "{out}");
    assert!(out.contains("], Statistics(sizeInBytes=690.0 B)\n"), "{out}");
    assert!(out.contains("\n== Physical Plan ==\n"), "{out}");
    let (ok, out, err) = kiln(&["explain", "--mode", "formatted", "--table", &o, "--table", &c, query]);
    assert!(ok, "{err}");
    assert!(out.contains("+- Scan parquet spark_catalog.default.orders (1)\n"), "{out}");
    assert!(out.contains("\n(1) Scan parquet spark_catalog.default.orders\nOutput [3]: [customer_id#"), "{out}");
    assert!(out.contains("\nPushedFilters: [IsNotNull(status), EqualTo(status,paid)]\n"), "{out}");
    assert!(out.contains("\nKeys [1]: [customer_id#"), "{out}");
}

#[test]
fn plan_change_log_goes_to_stderr_with_conf() {
    let (o, c) = (shop("orders"), shop("customers"));
    let (ok, out, err) = kiln(&[
        "sql",
        "--table",
        &o,
        "--table",
        &c,
        "--conf",
        "spark.sql.planChangeLog.level=WARN",
        "--format",
        "csv",
        "SELECT order_id FROM orders WHERE order_id > 100 + 3 ORDER BY order_id",
    ]);
    assert!(ok, "{err}");
    assert!(out.starts_with("order_id\n104\n"), "{out}");
    assert!(err.contains("=== Applying Rule ConstantFolding ==="), "{err}");
    assert!(err.contains("=== Result of Batch Operator Optimization before Inferring Filters ==="), "{err}");
    assert!(err.contains("=== Metrics of Executed Rules ==="), "{err}");
}

#[test]
fn demo_reads_the_partitioned_orders_with_partition_filters() {
    let dir = tempfile::tempdir().expect("temp dir");
    let kept = dir.path().join("demo");
    let (ok, out, err) = kiln(&["demo", "--scale", "0.01", "--keep", &kept.display().to_string()]);
    assert!(ok, "{err}");
    // --keep keeps the data, and the last line says how to query it: --tables reads the sales
    // folder's customers.parquet file and partitioned orders/ folder as two tables.
    let sales = kept.join("sales");
    assert!(out.lines().next().is_some_and(|l| l.contains("(kept)")), "{out}");
    assert!(out.contains(&format!("Next: `kiln shell --tables {}`", sales.display())), "{out}");
    let (ok, counts, err) = kiln(&["sql", "--format", "csv", "--tables", &sales.display().to_string(), "SELECT (SELECT count(*) FROM customers) AS c, (SELECT count(DISTINCT order_date) FROM orders) AS d"]);
    assert!(ok, "{err}");
    // 20,000 customers at scale 1; 61 days of orders (demo.rs).
    assert_eq!(counts, "c,d\n200,61\n");
    let scan = out.lines().find(|l| l.contains("FileScan parquet spark_catalog.default.orders")).expect("the orders scan");
    assert!(scan.contains("Location: InMemoryFileIndex(31 paths)[file:"), "{scan}");
    assert!(scan.contains("PartitionFilters: [isnotnull(order_date#"), "{scan}");
    assert!(scan.contains("ReadSchema: struct<customer_id:bigint,status:string,amount:decimal(10,2)>"), "{scan}");
    // It ends with the main job: annotated generated code, compiled against interpreted.
    assert!(out.contains("Generated code (a digest):") && out.contains("; BroadcastHashJoin Inner #0: hash [customer_id#"), "{out}");
    for q in ["q1 ", "q3 ", "q6 "] {
        assert!(out.lines().any(|l| l.starts_with(q) && l.contains("speedup")), "{q}: {out}");
    }
    assert!(out.trim_end().lines().last().is_some_and(|l| l.starts_with("Next: `kiln shell")), "{out}");
}

fn shop_dir() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/shop").display().to_string()
}

#[test]
fn tables_registers_each_file_of_a_folder_by_its_name() {
    let (ok, out, err) = kiln(&["sql", "--format", "csv", "--tables", &shop_dir(), "SELECT (SELECT count(*) FROM orders) AS o, (SELECT count(*) FROM customers) AS c"]);
    assert!(ok, "{err}");
    let (ok, expected, err) = sql("SELECT (SELECT count(*) FROM orders) AS o, (SELECT count(*) FROM customers) AS c", "csv");
    assert!(ok, "{err}");
    assert_eq!(out, expected);
    // The folder as one table: the schema error says what --tables does.
    let (ok, _, err) = kiln(&["sql", "--table", &format!("t={}", shop_dir()), "SELECT 1"]);
    assert!(!ok && err.contains("must share one schema") && err.contains("--tables DIR"), "{err}");
    let empty = tempfile::tempdir().expect("temp dir");
    let (ok, _, err) = kiln(&["sql", "--tables", &empty.path().display().to_string(), "SELECT 1"]);
    assert!(!ok && err.contains("no `*.parquet` files"), "{err}");
}

#[test]
fn a_query_reads_files_by_path_as_spark_does() {
    let orders = format!("{}/orders.parquet", shop_dir());
    let (ok, out, err) = kiln(&["sql", "--format", "csv", &format!("SELECT count(*) AS n, sum(o.amount) AS s FROM parquet.`{orders}` AS o")]);
    assert!(ok, "{err}");
    let (ok, expected, err) = sql("SELECT count(*) AS n, sum(o.amount) AS s FROM orders AS o", "csv");
    assert!(ok, "{err}");
    assert_eq!(out, expected);
    // CSV with Spark's defaults (no header: every line a row of strings _c0, _c1, ...), JSON Lines.
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("x.csv"), "a,b\n1,2\n").expect("write");
    std::fs::write(dir.path().join("x.json"), "{\"k\":1,\"v\":\"one\"}\n{\"k\":2,\"v\":\"two\"}\n").expect("write");
    let q = format!("SELECT * FROM csv.`{0}/x.csv`; SELECT v FROM JSON.`{0}/x.json` WHERE k = 2", dir.path().display());
    let (ok, out, err) = kiln(&["sql", "--format", "csv", &q]);
    assert!(ok, "{err}");
    assert_eq!(out, "_c0,_c1\na,b\n1,2\nv\ntwo\n");
    // kiln.files.allowedRoots holds for paths in queries too.
    let (ok, _, err) = kiln(&["sql", "--conf", &format!("kiln.files.allowedRoots={}", dir.path().display()), &format!("SELECT * FROM parquet.`{orders}`")]);
    assert!(!ok && err.contains("PATH_NOT_ALLOWED"), "{err}");
}

#[test]
fn jsonl_writes_nested_values_as_json() {
    let (ok, out, err) = kiln(&["sql", "--format", "jsonl", "SELECT array(1, NULL) AS a, named_struct('x', 1, 'y', array('z')) AS st, map('k', 1.5D) AS m, CAST('hi' AS BINARY) AS b, CAST(NULL AS ARRAY<INT>) AS n"]);
    assert!(ok, "{err}");
    assert_eq!(out, "{\"a\":[1,null],\"st\":{\"x\":1,\"y\":[\"z\"]},\"m\":{\"k\":1.5},\"b\":\"aGk=\",\"n\":null}\n");
    let (_, help, _) = kiln(&["sql", "--help"]);
    assert!(help.contains("binary as base64"), "{help}");
}

#[test]
fn every_option_has_a_description_in_help() {
    for command in ["sql", "explain", "shell", "gen tpch", "slt", "bench tpch", "bench sql", "demo"] {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("-h");
        let (ok, help, err) = kiln(&args);
        assert!(ok, "{command}: {err}");
        for line in help.lines().filter(|l| l.trim_start().starts_with('-')) {
            let described = line.trim().split("  ").filter(|p| !p.trim().is_empty()).count() > 1;
            assert!(described, "kiln {command} -h: `{line}` has no description");
        }
    }
}

#[test]
fn a_hint_that_cannot_be_honoured_is_a_warning_on_stderr() {
    let (ok, out, err) = sql("SELECT /*+ BROADCAST(x) */ o.order_id FROM orders o JOIN customers c ON o.customer_id = c.customer_id WHERE o.order_id = 101", "csv");
    assert!(ok, "{err}");
    assert_eq!(out, "order_id\n101\n");
    assert_eq!(err, "warning: Could not find relation 'x' specified in hint 'BROADCAST(x)'.\n");
}

/// Runs kiln with `stdin` piped in.
fn kiln_stdin(args: &[&str], stdin: &str) -> (bool, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kiln runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("writes");
    let out = child.wait_with_output().expect("kiln ends");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn sql_reads_stdin_and_texts_starting_with_a_comment() {
    let script = "-- revenue check\nSELECT 40 + 2 AS answer;\n";
    for args in [&["sql", "--format", "csv"][..], &["sql", "--format", "csv", "-"][..]] {
        let (ok, out, err) = kiln_stdin(args, script);
        assert!(ok, "{args:?}: {err}");
        assert_eq!(out, "answer\n42\n", "{args:?}");
    }
    let (ok, out, err) = kiln(&["sql", "--format", "csv", "-- c\nSELECT 1 AS one"]);
    assert!(ok, "{err}");
    assert_eq!(out, "one\n1\n");
    let (ok, out, err) = kiln(&["sql", "--timer", "--format", "csv", "SELECT 1 AS one"]);
    assert!(ok, "{err}");
    assert_eq!(out, "one\n1\n", "the time goes to stderr, not into the rows");
    assert!(err.starts_with("Run Time: ") && err.trim_end().ends_with(" s"), "{err}");
    let (ok, _, err) = kiln_stdin(&["sql"], "  \n");
    assert!(!ok && err.contains("standard input holds no SQL"), "{err}");
}

#[test]
fn the_shell_runs_a_piped_script_with_dot_commands() {
    let (ok, out, err) = kiln_stdin(&["shell", "--history", "/dev/null"], ".mode csv\nSELECT 1\n  + 1 AS two;\n.timer on\nSELECT 3 AS three;\n.nope\nSELECT 'after' AS a;\n");
    assert!(ok, "{err}");
    assert!(out.starts_with("two\n2\nthree\n3\nRun Time: "), "{out}");
    assert!(out.ends_with("a\nafter\n") || out.contains("a\nafter\nRun Time: "), "an error does not end the script: {out}");
    assert!(err.contains("unknown command `.nope`"), "{err}");
}

#[test]
fn explain_codegen_prints_one_stage_with_annotated_ir() {
    let (o, c) = (shop("orders"), shop("customers"));
    let q = "SELECT customer_id, sum(amount) AS s FROM orders WHERE amount > 10 GROUP BY customer_id";
    let (ok, out, err) = kiln(&["explain", "--mode", "codegen", "--stage", "1", "--table", &o, "--table", &c, q]);
    assert!(ok, "{err}");
    assert!(!out.contains("Found ") && out.contains("*(1) HashAggregate") && !out.contains("*(2)"), "{out}");
    assert!(out.contains("; Filter (isnotnull(amount#") && out.contains("HashAggregate partial_sum(amount#"), "{out}");
    let (ok, _, err) = kiln(&["explain", "--mode", "codegen", "--stage", "9", "--table", &o, q]);
    assert!(!ok && err.contains("no WholeStageCodegen stage 9: its stages are 1, 2"), "{err}");
}

#[test]
fn bench_sql_times_a_users_query_in_both_modes() {
    let o = shop("orders");
    let (ok, out, err) = kiln(&["bench", "sql", "--table", &o, "--runs", "2", "--format", "json", "SELECT status, count(*) FROM orders GROUP BY status"]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("{\"engine\":\"kiln-interpreted\",\"query\":\"query\",\"median_ms\":"), "{out}");
    assert!(lines[1].starts_with("{\"engine\":\"kiln-compiled\"") && lines[1].contains("\"stages_compiled\":"), "{out}");
    let (ok, out, err) = kiln(&["bench", "sql", "--table", &o, "--runs", "1", "SELECT count(*) FROM orders"]);
    assert!(ok, "{err}");
    assert!(out.lines().nth(1).is_some_and(|l| l.starts_with("query ") && l.contains("speedup")), "{out}");
    // --metrics: each mode's plan of a warm run, every operator with its rows.
    let (ok, _, err) = kiln(&["bench", "sql", "--table", &o, "--runs", "1", "--metrics", "SELECT status, count(*) FROM orders GROUP BY status"]);
    assert!(ok, "{err}");
    assert!(err.contains("-- query interpreted, a warm run") && err.contains("-- query compiled, a warm run"), "{err}");
    assert!(err.contains("*(") && err.lines().filter(|l| l.contains("HashAggregate") && l.contains("[rows: ")).count() >= 4, "{err}");
}

/// The two transcripts: a query can neither move the warehouse to delete a folder kiln
/// did not write, nor lift the host's file confinement. Both end in errors; the folder and the
/// file outside survive, and the file is never read.
#[test]
fn a_query_cannot_lift_the_hosts_bounds() {
    let dir = tempfile::tempdir().expect("dir");
    let victim = dir.path().join("victim");
    std::fs::create_dir_all(victim.join("docs")).expect("dir");
    std::fs::write(victim.join("docs/notes.txt"), "precious\n").expect("write");
    let (ok, _, err) = kiln(&["sql", &format!("SET spark.sql.warehouse.dir={}; DROP TABLE docs", victim.display())]);
    assert!(!ok && err.contains("[CANNOT_MODIFY_STATIC_CONFIG]") && err.contains("spark.sql.warehouse.dir"), "{err}");
    // Even a host that points its warehouse there finds no table to drop.
    let (ok, _, err) = kiln(&["sql", "--conf", &format!("spark.sql.warehouse.dir={}", victim.display()), "DROP TABLE docs"]);
    assert!(!ok && err.contains("TABLE_OR_VIEW_NOT_FOUND"), "{err}");
    assert_eq!(std::fs::read_to_string(victim.join("docs/notes.txt")).expect("the folder survives"), "precious\n");

    let allowed = dir.path().join("ok");
    std::fs::create_dir_all(&allowed).expect("dir");
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "user\nroot-secret\n").expect("write");
    let roots = format!("kiln.files.allowedRoots={}", allowed.display());
    let view = format!("CREATE TEMPORARY VIEW v USING csv OPTIONS (path '{}')", secret.display());
    let (ok, _, err) = kiln(&["sql", "--conf", &roots, &view]);
    assert!(!ok && err.contains("[PATH_NOT_ALLOWED]"), "{err}");
    let (ok, out, err) = kiln(&["sql", "--conf", &roots, &format!("SET kiln.files.allowedRoots=/; {view}; SELECT * FROM v")]);
    assert!(!ok && err.contains("[CANNOT_MODIFY_STATIC_CONFIG]") && err.contains("kiln.files.allowedRoots"), "{err}");
    assert!(!out.contains("root-secret") && !err.contains("root-secret"), "the file was read: {out}{err}");
}

/// `SET` lists what was set, `SET -v` every key with its meaning, static keys marked.
#[test]
fn set_lists_the_settings() {
    let (ok, out, err) = kiln(&["sql", "--format", "csv", "--conf", "spark.sql.shuffle.partitions=7", "SET spark.sql.cbo.enabled=true; SET"]);
    assert!(ok, "{err}");
    // The SET's own row, then the listing.
    assert_eq!(out, "key,value\nspark.sql.cbo.enabled,true\nkey,value\nspark.sql.cbo.enabled,true\nspark.sql.shuffle.partitions,7\n");
    let (ok, out, err) = kiln(&["sql", "--format", "jsonl", "SET -v"]);
    assert!(ok, "{err}");
    let warehouse = out.lines().find(|l| l.contains("\"key\":\"spark.sql.warehouse.dir\"")).expect("listed");
    assert!(warehouse.contains("Static") && warehouse.contains("\"Since version\":\"2.0.0\""), "{warehouse}");
    assert!(out.lines().any(|l| l.contains("\"key\":\"spark.sql.shuffle.partitions\"") && l.contains("\"value\":\"200\"")), "{out}");
}
