//! Statement kinds, the query shapes around them, and errors for bad input.

use arrow::datatypes::DataType;

use super::{err, plan, statement};
use crate::explain::ExplainMode;
use crate::plan::LogicalPlan;
use crate::sql::{parse_sql, Statement, TableStorage, ViewSource};

#[test]
fn set_reads_key_and_value_as_raw_text() {
    match statement("SET spark.sql.shuffle.partitions=8") {
        Statement::SetConfig { key, value } => {
            assert_eq!(key, "spark.sql.shuffle.partitions");
            assert_eq!(value.as_deref(), Some("8"));
        }
        other => panic!("{other:?}"),
    }
    match statement("set spark.sql.autoBroadcastJoinThreshold = -1") {
        Statement::SetConfig { value, .. } => assert_eq!(value.as_deref(), Some("-1")),
        other => panic!("{other:?}"),
    }
    match statement("SET spark.sql.autoBroadcastJoinThreshold=10MB") {
        Statement::SetConfig { value, .. } => assert_eq!(value.as_deref(), Some("10MB")),
        other => panic!("{other:?}"),
    }
    match statement("SET kiln.name = 'a b'") {
        Statement::SetConfig { value, .. } => assert_eq!(value.as_deref(), Some("a b")),
        other => panic!("{other:?}"),
    }
    match statement("SET spark.sql.shuffle.partitions") {
        Statement::SetConfig { key, value } => {
            assert_eq!(key, "spark.sql.shuffle.partitions");
            assert_eq!(value, None);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(statement("SET"), Statement::ListConfig { verbose: false }));
    assert!(matches!(statement("set -v"), Statement::ListConfig { verbose: true }));
    assert!(matches!(statement("RESET"), Statement::ResetConfig { key: None }));
    match statement("RESET spark.sql.shuffle.partitions") {
        Statement::ResetConfig { key } => assert_eq!(key.as_deref(), Some("spark.sql.shuffle.partitions")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn explain_modes() {
    for (sql, want) in [
        ("EXPLAIN SELECT 1", ExplainMode::Simple),
        ("EXPLAIN EXTENDED SELECT 1", ExplainMode::Extended),
        ("explain codegen SELECT 1", ExplainMode::Codegen),
        ("EXPLAIN COST SELECT 1", ExplainMode::Cost),
        ("EXPLAIN FORMATTED SELECT 1", ExplainMode::Formatted),
    ] {
        match statement(sql) {
            Statement::Explain { mode, query } => {
                assert_eq!(mode, want, "{sql}");
                assert_eq!(query.tree_string(), "Project [1]\n+- OneRowRelation\n");
            }
            other => panic!("{sql}: {other:?}"),
        }
    }
    assert!(err("EXPLAIN SET a=1").contains("unsupported SQL: EXPLAIN of a statement other than a query"));
    assert!(err("EXPLAIN EXTENDED").contains("EXPLAIN needs a query"));
}

#[test]
fn temp_views() {
    match statement("CREATE OR REPLACE TEMPORARY VIEW orders USING parquet OPTIONS (path '/data/orders')") {
        Statement::CreateTempView { name, source: ViewSource::Parquet { path }, replace, .. } => {
            assert_eq!((name.as_str(), path.as_str(), replace), ("orders", "/data/orders", true));
        }
        other => panic!("{other:?}"),
    }
    match statement("CREATE TEMP VIEW c USING PARQUET OPTIONS (path = '/d/c.parquet')") {
        Statement::CreateTempView { source: ViewSource::Parquet { path }, replace: false, .. } => assert_eq!(path, "/d/c.parquet"),
        other => panic!("{other:?}"),
    }
    match statement("CREATE TEMPORARY VIEW paid AS SELECT * FROM orders WHERE status = 'paid'") {
        Statement::CreateTempView { name, source: ViewSource::Query(q), replace: false, .. } => {
            assert_eq!(name, "paid");
            assert!(q.tree_string().starts_with("'Project [*]"));
        }
        other => panic!("{other:?}"),
    }
    match statement("CREATE TEMP VIEW v USING CSV OPTIONS (path 'x', header true, 'sep' = ';')") {
        Statement::CreateTempView { source: ViewSource::Files { format: crate::datasource::text::TextFormat::Csv, path, options }, .. } => {
            assert_eq!(path, "x");
            assert_eq!(options, [("path", "x"), ("header", "true"), ("sep", ";")].map(|(k, v)| (k.to_string(), v.to_string())));
        }
        other => panic!("{other:?}"),
    }
    assert!(err("CREATE TEMP VIEW v USING avro OPTIONS (path 'x')").contains("unsupported SQL: data source format avro"));
    assert!(err("CREATE TEMP VIEW v USING json OPTIONS (mode 'FAILFAST')").contains("needs OPTIONS (path '...')"));
    assert!(err("CREATE TEMP VIEW v USING parquet").contains("needs OPTIONS (path '...')"));
    assert!(err("CREATE TEMP VIEW v USING parquet OPTIONS (mergeSchema 'true')").contains("parquet option mergeSchema"));
    assert!(matches!(statement("CREATE VIEW v AS SELECT 1"), Statement::CreateTempView { .. }));
    assert!(matches!(statement("CREATE VIEW IF NOT EXISTS v(a) AS SELECT 1"), Statement::CreateTempView { if_not_exists: true, .. }));
    assert!(err("CREATE OR REPLACE VIEW IF NOT EXISTS v AS SELECT 1").contains("CREATE_VIEW_WITH_IF_NOT_EXISTS_AND_REPLACE"));
    assert!(err("CREATE TEMP VIEW IF NOT EXISTS v AS SELECT 1").contains("TEMPORARY view with IF NOT EXISTS"));
}

#[test]
fn create_table_and_drop() {
    match statement("CREATE TABLE IF NOT EXISTS t (id BIGINT NOT NULL, name STRING, price DECIMAL(10,2))") {
        Statement::CreateTable { name, columns, if_not_exists, replace, storage, query } => {
            assert_eq!(name, "t");
            assert!(if_not_exists && !replace && storage.is_none() && query.is_none());
            assert_eq!(
                columns,
                vec![
                    ("id".to_string(), DataType::Int64, false),
                    ("name".to_string(), DataType::Utf8, true),
                    ("price".to_string(), DataType::Decimal128(10, 2), true),
                ]
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(err("CREATE TABLE t (a GEOMETRY)").contains("unsupported SQL: data type GEOMETRY"));
    assert!(err("CREATE TABLE t USING csv AS SELECT 1").contains("needs LOCATION or OPTIONS (path '...')"));
    assert!(err("CREATE TABLE t USING orc AS SELECT 1").contains("data source format orc"));
    assert!(err("CREATE TABLE t USING json LOCATION 'x' PARTITIONED BY (a) AS SELECT 1 a").contains("PARTITIONED BY"));
    assert!(matches!(statement("CREATE TABLE t (a INT) USING csv OPTIONS (header 'true') LOCATION '/x'"), Statement::CreateFileTable { query: None, .. }));
    assert!(err("CREATE TABLE t (a INT) PARTITIONED BY (a)").contains("need USING parquet"));
    assert!(err("CREATE TABLE t (a INT) USING parquet AS SELECT 1").contains("cannot also declare columns"));
    assert!(err("CREATE TABLE t USING parquet PARTITIONED BY (a INT) AS SELECT 1 a").contains("names only"));
    assert!(err("CREATE TABLE t USING parquet LOCATION 'a' LOCATION 'b'").contains("LOCATION is given twice"));
    assert!(err("CREATE TABLE t USING parquet STORED AS orc").contains("STORED"));
    assert!(err("CREATE TABLE t USING parquet").contains("needs a column list"));
    assert!(err("CREATE OR REPLACE TABLE IF NOT EXISTS t (a INT)").contains("cannot have IF NOT EXISTS"));
    assert!(err("CREATE TABLE t (a GEOMETRY)").contains("unsupported SQL: data type GEOMETRY"));
    assert!(matches!(statement("DROP TABLE t"), Statement::DropTable { if_exists: false, .. }));
    match statement("DROP VIEW IF EXISTS v") {
        Statement::DropTable { name, if_exists } => assert_eq!((name.as_str(), if_exists), ("v", true)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn create_table_using_parquet_takes_its_clauses_in_any_order() {
    for sql in [
        "CREATE OR REPLACE TABLE sales.t USING parquet PARTITIONED BY (d, s) LOCATION '/tmp/x' AS SELECT 1 AS a, 2 AS d, 3 AS s",
        "CREATE OR REPLACE TABLE sales.t LOCATION \"/tmp/x\" PARTITIONED BY (d, s) USING PARQUET COMMENT 'c' SELECT 1 AS a, 2 AS d, 3 AS s",
    ] {
        match statement(sql) {
            Statement::CreateTable { name, columns, if_not_exists, replace, storage, query } => {
                assert_eq!((name.as_str(), columns.len(), if_not_exists, replace), ("sales.t", 0, false, true));
                assert_eq!(storage, Some(TableStorage { partition_by: vec!["d".into(), "s".into()], location: Some("/tmp/x".into()) }));
                let tree = query.unwrap().tree_string();
                assert!(tree.starts_with("Project [1 AS a#"), "{tree}");
            }
            other => panic!("{other:?}"),
        }
    }
    match statement("CREATE TABLE t (a INT NOT NULL) USING parquet") {
        Statement::CreateTable { columns, storage, query: None, .. } => {
            assert_eq!(columns, vec![("a".to_string(), DataType::Int32, false)]);
            assert_eq!(storage, Some(TableStorage::default()));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn insert_values_and_insert_select() {
    match statement("INSERT INTO t VALUES (1, 'a', NULL), (2, 'b', 2.5)") {
        Statement::InsertValues { table, columns, rows: LogicalPlan::LocalRelation { output, data }, overwrite: false } => {
            assert_eq!(table, "t");
            assert!(columns.is_empty());
            let names: Vec<_> = output.iter().map(|a| (a.name.as_str(), a.data_type.clone(), a.nullable)).collect();
            assert_eq!(
                names,
                vec![("col1", DataType::Int32, false), ("col2", DataType::Utf8, false), ("col3", DataType::Decimal128(2, 1), true)]
            );
            assert_eq!(data[0].num_rows(), 2);
        }
        other => panic!("{other:?}"),
    }
    match statement("INSERT INTO t (a, b) SELECT x, y FROM s") {
        Statement::InsertValues { columns, rows, .. } => {
            assert_eq!(columns, vec!["a", "b"]);
            assert!(rows.tree_string().starts_with("'Project ['x, 'y]"));
        }
        other => panic!("{other:?}"),
    }
    assert!(err("INSERT INTO t VALUES (1), (1, 2)").contains("different numbers of columns"));
    assert!(err("INSERT INTO t VALUES (1), ('a')").contains("VALUES column 1 mixes int and string"));
    // A row of expressions is a projection of the empty row (a column name fails in analysis).
    assert!(matches!(statement("INSERT INTO t VALUES (1 + 1)"), Statement::InsertValues { .. }));
    assert!(matches!(statement("INSERT OVERWRITE TABLE t SELECT 1"), Statement::InsertValues { overwrite: true, .. }));
}

#[test]
fn set_slices_the_source_on_any_line() {
    let stmts = parse_sql("-- the article's setup\nSELECT 1;\n  SET   spark.sql.ansi.enabled =  true  ;\nSET x=ü→y").unwrap();
    match &stmts[1..] {
        [Statement::SetConfig { key, value }, Statement::SetConfig { key: k2, value: v2 }] => {
            assert_eq!((key.as_str(), value.as_deref()), ("spark.sql.ansi.enabled", Some("true")));
            assert_eq!((k2.as_str(), v2.as_deref()), ("x", Some("ü→y")));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn several_statements_and_empty_ones() {
    let stmts = parse_sql("SET a=1; ; SELECT 1;\n-- done\n").unwrap();
    assert_eq!(stmts.len(), 2);
    assert!(parse_sql("").unwrap().is_empty());
    assert!(parse_sql(" ;; -- nothing").unwrap().is_empty());
}

#[test]
fn parse_errors_keep_sqlparsers_position() {
    let e = err("SELECT a FROM t WHERE )");
    assert_eq!(e, "[PARSE_SYNTAX_ERROR] Syntax error at or near ')': Expected: an expression, found: ) at Line: 1, Column: 23\nLINE 1: SELECT a FROM t WHERE )\n                              ^");
    let e = err("SELECT a\nFROM t\nWHERE x = = 1");
    assert!(e.contains("at Line: 3, Column: 11"), "{e}");
    assert!(err("SELECT 'unterminated").starts_with("[PARSE_SYNTAX_ERROR] Syntax error: Unterminated string literal"));
}

#[test]
fn unsupported_statements_and_clauses_are_named() {
    assert!(err("DESCRIBE FUNCTION f").contains("[PARSE_SYNTAX_ERROR] Syntax error"));
    assert!(err("SELECT 1 UNION BY NAME SELECT 2").contains("unsupported SQL: set operation UNION BY NAME"), "{}", err("SELECT 1 UNION BY NAME SELECT 2"));
    assert!(err("SELECT * FROM t FETCH FIRST 1 ROWS ONLY").contains("unsupported SQL: FETCH"));
    assert!(err("SELECT * FROM a JOIN b USING (k) AS j").contains("USING (...) AS alias"));
    assert!(err("SELECT * FROM t CLUSTER BY a").contains("CLUSTER BY"));
}

#[test]
fn lateral_views_are_generates_over_the_from_clause() {
    let Statement::Query(plan) = statement("SELECT * FROM t LATERAL VIEW OUTER explode(a) X AS y LATERAL VIEW posexplode(b) z AS p, v WHERE y > 0") else {
        panic!("not a query")
    };
    let text = plan.tree_string();
    // Spark's withGenerate: each view over the one before it, its name lower-cased.
    assert!(text.contains("+- 'Generate 'posexplode('b), false, z, ['p, 'v]\n      +- 'Generate 'explode('a), true, x, ['y]"), "{text}");
    assert!(err("SELECT * FROM t LATERAL VIEW upper(a) x AS y").contains("UNSUPPORTED_GENERATOR.NOT_GENERATOR"));
}

#[test]
fn select_without_from_and_shapes() {
    assert_eq!(plan("SELECT 1"), "'Project [1]\n+- OneRowRelation".replace('\'', ""));
    assert_eq!(plan("SELECT DISTINCT a FROM t"), "'Distinct\n+- 'Project ['a]\n   +- 'UnresolvedRelation [t], [], false");
    assert_eq!(
        plan("SELECT a, count(*) c FROM t GROUP BY a HAVING count(*) > 1"),
        "'Filter ('count(1) > 1)\n+- 'Aggregate ['a], ['a, 'count(1) AS c#]\n   +- 'UnresolvedRelation [t], [], false"
    );
    assert_eq!(plan("SELECT max(a) FROM t"), "'Aggregate ['max('a)]\n+- 'UnresolvedRelation [t], [], false");
    assert_eq!(
        plan("SELECT a FROM t ORDER BY b DESC NULLS FIRST LIMIT 5"),
        "'GlobalLimit 5\n+- 'LocalLimit 5\n   +- 'Sort ['b DESC NULLS FIRST], true\n      +- 'Project ['a]\n         +- 'UnresolvedRelation [t], [], false"
    );
    assert_eq!(plan("SELECT * FROM db.t"), "'Project [*]\n+- 'UnresolvedRelation [db, t], [], false");
    assert_eq!(
        plan("SELECT * FROM (SELECT 1)"),
        "'Project [*]\n+- SubqueryAlias __auto_generated_subquery_name\n   +- Project [1]\n      +- OneRowRelation"
    );
}

#[test]
fn join_kinds() {
    let p = plan("SELECT * FROM a LEFT SEMI JOIN b ON a.x = b.x LEFT ANTI JOIN c USING (x) CROSS JOIN d FULL OUTER JOIN e ON true RIGHT JOIN f ON 1 = 1 JOIN g");
    let joins: Vec<&str> = p.lines().filter_map(|l| l.split("'Join ").nth(1)).collect();
    assert_eq!(
        joins,
        vec!["Inner", "RightOuter, (1 = 1)", "FullOuter, true", "Cross", "UsingJoin(LeftAnti,List(x)), None", "LeftSemi, ('a.x = 'b.x)"]
    );
}

#[test]
fn ctes_are_inlined_as_subquery_aliases() {
    let p = plan("WITH paid AS (SELECT * FROM orders WHERE status = 'paid'), big AS (SELECT * FROM paid WHERE amount > 10) SELECT b.id FROM big b");
    let expected = "\
'Project ['b.id]
+- 'SubqueryAlias b
   +- 'SubqueryAlias big
      +- 'Project [*]
         +- 'Filter ('amount > 10)
            +- 'SubqueryAlias paid
               +- 'Project [*]
                  +- 'Filter ('status = paid)
                     +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(p, expected);
    // Out of scope after its query: a plain table again.
    assert!(plan("SELECT * FROM (WITH x AS (SELECT 1) SELECT * FROM x) s, x").contains("'UnresolvedRelation [x]"));
}

#[test]
fn values_as_a_table() {
    let p = plan("SELECT * FROM VALUES (1, 'a'), (2, 'b') AS t(id, name)");
    assert!(p.starts_with("'Project [*]\n+- SubqueryAlias t\n   +- LocalRelation [id#, name#]"), "{p}");
    assert!(plan("VALUES (1), (NULL)").starts_with("LocalRelation [col1#]"));
}

#[test]
fn no_input_panics() {
    let junk = [
        "", ";", "SELECT", "SELECT (", "SELECT 'x", "SET", "SET =", "SET = 1", "EXPLAIN", "EXPLAIN EXPLAIN SELECT 1",
        "CREATE", "CREATE TEMP VIEW", "CREATE TEMP VIEW v USING", "CREATE TEMP VIEW v USING parquet OPTIONS (",
        "CREATE TEMP VIEW v USING parquet OPTIONS (path", "CREATE TEMP VIEW v USING parquet OPTIONS (path 'x' 'y')",
        "INSERT INTO t", "INSERT INTO t VALUES ()", "DROP", "SELECT * FROM", "SELECT 1 LIMIT -1", "SELECT 1 LIMIT a",
        "SELECT ü FROM ö", "SELECT '\u{1F600}'; SET x = \u{1F600}", "SELECT DATE 'x'", "SELECT INTERVAL 'x' DAY",
        "SELECT 9223372036854775808L", "SELECT 1e999", "SELECT CAST(1 AS DECIMAL(0))", "WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r",
    ];
    for sql in junk {
        let _ = parse_sql(sql);
    }
    assert!(parse_sql(&"EXPLAIN ".repeat(100_000)).is_err());
    // Every prefix of a realistic script.
    let script = "SET spark.sql.shuffle.partitions=8; CREATE TEMP VIEW o USING parquet OPTIONS (path '/x');
        EXPLAIN EXTENDED SELECT c.country, COUNT(*) AS n, SUM(o.amount) FROM o JOIN c ON o.id = c.id
        WHERE o.d >= DATE '2026-10-01' - INTERVAL '3' DAY AND o.s IN ('a', 'b') AND o.x BETWEEN 1 AND 2
        GROUP BY c.country HAVING n > 1 ORDER BY 2 DESC LIMIT 10; INSERT INTO t VALUES (1, 'a'), (-2.5, NULL)";
    for (i, _) in script.char_indices() {
        let _ = parse_sql(&script[..i]);
    }
}

#[test]
fn analyze_and_describe_parse() {
    use crate::sql::AnalyzeColumns;
    let analyze = |sql: &str| match statement(sql) {
        Statement::AnalyzeTable { table, columns } => (table, columns),
        other => panic!("{sql}: {other:?}"),
    };
    assert_eq!(analyze("ANALYZE TABLE t COMPUTE STATISTICS"), ("t".into(), AnalyzeColumns::Table));
    assert_eq!(analyze("analyze table db.t compute statistics noscan"), ("db.t".into(), AnalyzeColumns::NoScan));
    assert_eq!(analyze("ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS"), ("t".into(), AnalyzeColumns::All));
    assert_eq!(
        analyze("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS a, `b c`"),
        ("t".into(), AnalyzeColumns::Columns(vec!["a".into(), "b c".into()]))
    );
    assert!(err("ANALYZE TABLE t COMPUTE STATISTICS FOR COLUMNS").contains("expected a column name"));
    assert!(err("ANALYZE TABLE t COMPUTE STATISTICS NOSCAN x").contains("unexpected"));
    match statement("DESCRIBE EXTENDED t c") {
        Statement::DescribeTable { table, column, extended } => assert_eq!((table.as_str(), column.as_deref(), extended), ("t", Some("c"), true)),
        other => panic!("{other:?}"),
    }
    match statement("DESC TABLE t") {
        Statement::DescribeTable { table, column, extended } => assert_eq!((table.as_str(), column, extended), ("t", None, false)),
        other => panic!("{other:?}"),
    }
}
