//! The host API, round 2 (issue 40): what a host program embedding kiln reaches for. Expected
//! values are Spark 4.3's (pyspark, ANSI on) for the same calls, noted at each test.

use std::sync::Arc;

use kiln::arrow::array::{
    ArrayRef, AsArray, DictionaryArray, Float32Array, Int32Array, LargeBinaryArray, LargeStringArray, RecordBatch, StringArray,
    StringViewArray, Time32SecondArray, TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use kiln::arrow::datatypes::{DataType, Int32Type};
use kiln::functions::*;
use kiln::types::ScalarValue;
use kiln::udf::{ScalarUdf, Signature, Volatility};
use kiln::{DataFrame, Session};

/// The rows as CSV lines (header first), in the order the query gives them.
fn rows(df: &DataFrame) -> Vec<String> {
    let batches = df.collect().expect("runs");
    kiln::format::result_csv(&df.schema(), &batches).lines().map(str::to_string).collect()
}

fn ids() -> Session {
    let s = Session::builder().config("spark.sql.shuffle.partitions", "4").build().expect("settings");
    s.sql("CREATE TEMP VIEW r AS SELECT id FROM range(10)").expect("view");
    s
}

// Spark: df.groupBy((col("id") % 3).alias("p")).agg(count("*").alias("n")) over range(10)
// gives p=0 n=4, p=1 n=3, p=2 n=3; groupBy(expr("id % 3 AS p")).count() is [p, count];
// unaliased, groupBy(col("id") % 3) names the column `(id % 3)`.
#[test]
fn group_by_aliased_expressions() {
    let s = ids();
    let r = s.table("r").unwrap();
    let by_alias = r.group_by([(col("id") % 3).alias("p")]).agg([count(col("*")).alias("n")]).unwrap().order_by([col("p")]).unwrap();
    assert_eq!(rows(&by_alias), ["p,n", "0,4", "1,3", "2,3"]);
    let by_expr = r.group_by([expr("id % 3 AS p")]).count().unwrap();
    assert_eq!(by_expr.columns(), ["p", "count"]);
    assert_eq!(rows(&by_expr.order_by([col("p")]).unwrap())[1..], ["0,4", "1,3", "2,3"]);
    s.register_udf(ScalarUdf::new("bucket", Signature::Exact(vec![DataType::Int64]), DataType::Int64, Volatility::Immutable, |args: &[ArrayRef]| {
        let a = args[0].as_primitive::<kiln::arrow::datatypes::Int64Type>();
        Ok(Arc::new(a.iter().map(|v| v.map(|v| v / 5)).collect::<kiln::arrow::array::Int64Array>()) as ArrayRef)
    }))
    .unwrap();
    let by_udf = r.group_by([call_udf("bucket", [col("id")]).alias("b")]).agg([sum(col("id")).alias("s")]).unwrap().order_by([col("b")]).unwrap();
    assert_eq!(rows(&by_udf), ["b,s", "0,10", "1,35"]);
    // Spark: rollup((col("id") % 3).alias("p")).count() gives (NULL, 10), (0, 4), (1, 3), (2, 3).
    let rolled = r.rollup([(col("id") % 3).alias("p")]).count().unwrap().order_by([col("p")]).unwrap();
    assert_eq!(rows(&rolled), ["p,count", "NULL,10", "0,4", "1,3", "2,3"]);
    // Spark's names for unaliased expressions: no implicit casts in them.
    assert_eq!(r.group_by([col("id") % 3]).count().unwrap().columns(), ["(id % 3)", "count"]);
    assert_eq!(r.group_by([col("id") % 3]).agg([sum(col("id"))]).unwrap().columns(), ["(id % 3)", "sum(id)"]);
    assert_eq!(r.select([col("id") % 3, col("id") + lit(1), col("id") * 2.5]).unwrap().columns(), ["(id % 3)", "(id + 1)", "(id * 2.5)"]);
    assert_eq!(s.sql("SELECT id % 3 FROM r").unwrap().columns(), ["(id % 3)"]);
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).expect("batch")
}

#[test]
fn register_batches_converts_to_spark_types() {
    let s = Session::new();
    let dict: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
    let b = batch(vec![
        ("u8", Arc::new(UInt8Array::from(vec![255, 1, 2])) as ArrayRef),
        ("u16", Arc::new(UInt16Array::from(vec![65535, 1, 2]))),
        ("u32", Arc::new(UInt32Array::from(vec![u32::MAX, 1, 2]))),
        ("u64", Arc::new(UInt64Array::from(vec![u64::MAX, 1, 2]))),
        ("f16", kiln::arrow::compute::cast(&Float32Array::from(vec![1.5, -2.0, 0.25]), &DataType::Float16).unwrap()),
        ("d", Arc::new(dict)),
        ("ls", Arc::new(LargeStringArray::from(vec!["x", "y", "z"]))),
        ("sv", Arc::new(StringViewArray::from(vec!["p", "q", "r"]))),
        ("lb", Arc::new(LargeBinaryArray::from(vec![b"\x01".as_ref(), b"\x02", b"\x03"]))),
        ("ts_ns", Arc::new(TimestampNanosecondArray::from(vec![1_700_000_000_123_456_789, 0, -1_000]).with_timezone("America/New_York"))),
        ("ts_ms", Arc::new(TimestampMillisecondArray::from(vec![1_700_000_000_123, 0, 1]).with_timezone("+05:00"))),
        ("ntz_s", Arc::new(TimestampSecondArray::from(vec![1_700_000_000, 0, 1]))),
    ]);
    s.register_batches("t", vec![b]).unwrap();
    let types: Vec<String> = s.table("t").unwrap().schema().fields().iter().map(|f| kiln::types::spark_type_name(f.data_type())).collect();
    assert_eq!(types, ["smallint", "int", "bigint", "decimal(20,0)", "float", "string", "string", "string", "binary", "timestamp", "timestamp", "timestamp_ntz"]);
    let sums = s.sql("SELECT sum(u8), sum(u16), sum(u32), sum(u64), sum(f16) FROM t").unwrap();
    assert_eq!(rows(&sums)[1], "258,65538,4294967298,18446744073709551618,-0.25");
    // A dictionary column compares and groups as the strings it holds.
    assert_eq!(rows(&s.sql("SELECT count(*) FROM t WHERE d = 'a'").unwrap())[1], "2");
    assert_eq!(rows(&s.sql("SELECT d, count(*) FROM t GROUP BY d ORDER BY d").unwrap())[1..], ["a,2", "b,1"]);
    // Every unit and zone is the same instant in microseconds (the session zone is UTC).
    let ts = s.sql("SELECT CAST(ts_ns AS STRING), CAST(ts_ms AS STRING), CAST(ntz_s AS STRING), concat(ls, sv), hex(lb) FROM t").unwrap();
    assert_eq!(rows(&ts)[1], "2023-11-14 22:13:20.123456,2023-11-14 22:13:20.123,2023-11-14 22:13:20,xp,01");
    // create_dataframe converts the same way.
    let df = s.create_dataframe(vec![batch(vec![("n", Arc::new(UInt64Array::from(vec![u64::MAX])) as ArrayRef)])]).unwrap();
    assert_eq!(rows(&df.select([col("n") + 1]).unwrap())[1], "18446744073709551616");
}

#[test]
fn register_batches_refuses_types_spark_lacks() {
    let s = Session::new();
    let b = batch(vec![("id", Arc::new(Int32Array::from(vec![1])) as ArrayRef), ("at", Arc::new(Time32SecondArray::from(vec![5])))]);
    let err = s.register_batches("t", vec![b]).unwrap_err();
    assert_eq!(err.error_class(), Some("UNSUPPORTED_ARROWTYPE"));
    assert!(err.to_string().contains("`at`") && err.to_string().contains("Time32"), "{err}");
    assert!(s.sql("SELECT * FROM t").is_err(), "nothing registered");
    let wide = kiln::arrow::array::Decimal256Array::from(vec![kiln::arrow::datatypes::i256::from(1)]).with_precision_and_scale(76, 0).unwrap();
    let err = s.register_batches("w", vec![batch(vec![("big", Arc::new(wide) as ArrayRef)])]).unwrap_err();
    assert!(err.to_string().contains("`big`") && err.to_string().contains("Decimal256(76, 0)"), "{err}");
}

fn letters(s: &Session) -> DataFrame {
    s.sql("SELECT * FROM VALUES (1, 'a', 10), (1, 'b', 20), (2, 'c', 30), (2, 'd', 40), (3, 'e', 50) AS t(k, v, w)").unwrap()
}

// Spark: t.dropDuplicates(["k"]) keeps (1,a,10), (2,c,30), (3,e,50); t.offset(2) is the last three.
#[test]
fn offset_and_drop_duplicates() {
    let s = Session::builder().config("spark.sql.shuffle.partitions", "3").build().unwrap();
    let t = letters(&s);
    assert_eq!(rows(&t.drop_duplicates(&["k"]).unwrap().order_by([col("k")]).unwrap()), ["k,v,w", "1,a,10", "2,c,30", "3,e,50"]);
    assert_eq!(rows(&t.drop_duplicates(&["K", "v"]).unwrap()).len(), 6);
    let err = t.drop_duplicates(&["nope"]).unwrap_err();
    assert_eq!(err.error_class(), Some("UNRESOLVED_COLUMN_AMONG_FIELD_NAMES"));
    assert_eq!(rows(&t.order_by([col("w")]).unwrap().offset(2).unwrap()), ["k,v,w", "2,c,30", "2,d,40", "3,e,50"]);
    assert_eq!(t.order_by([col("w")]).unwrap().offset(2).unwrap().limit(1).unwrap().count().unwrap(), 1);
}

/// As Spark (pyspark 4.3: a Dataset's executedPlan is made at its first action and kept): the
/// settings at a DataFrame's first run plan it, later changes do not.
#[test]
fn settings_are_read_when_the_plan_first_runs() {
    let s = Session::new();
    let df = s.sql("SELECT k, count(*) AS n FROM (SELECT id % 3 AS k FROM range(100)) GROUP BY k").unwrap();
    assert!(df.explain_string(kiln::ExplainMode::Simple).unwrap().contains("*(1)"));
    s.set_conf("spark.sql.codegen.wholeStage", "false").unwrap();
    let plan = df.explain_string(kiln::ExplainMode::Simple).unwrap();
    assert!(!plan.contains("*(1)"), "planned again without codegen:\n{plan}");
    let (batches, metrics) = df.collect_with_metrics().unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 3);
    assert_eq!(metrics.codegen.stages_compiled + metrics.codegen.cache_hits, 0, "{:?}", metrics.codegen);
    s.set_conf("spark.sql.codegen.wholeStage", "true").unwrap();
    let (_, metrics) = df.collect_with_metrics().unwrap();
    assert_eq!(metrics.codegen.stages_compiled + metrics.codegen.cache_hits, 0, "kept the plan it first ran with: {:?}", metrics.codegen);
    assert!(!df.explain_string(kiln::ExplainMode::Simple).unwrap().contains("*(1)"));
    // A DataFrame made under one setting and first run under another runs with the other.
    let later = s.sql("SELECT k, count(*) AS n FROM (SELECT id % 3 AS k FROM range(100)) GROUP BY k").unwrap();
    s.set_conf("spark.sql.codegen.wholeStage", "false").unwrap();
    s.set_conf("spark.sql.shuffle.partitions", "3").unwrap();
    let (_, metrics) = later.collect_with_metrics().unwrap();
    assert_eq!(metrics.codegen.stages_compiled + metrics.codegen.cache_hits, 0, "{:?}", metrics.codegen);
    // The shape of the result never changes with a setting.
    assert_eq!(later.columns(), ["k", "n"]);
    assert!(later.explain_string(kiln::ExplainMode::Simple).unwrap().contains(", 3), ENSURE_REQUIREMENTS"));
    assert_eq!(later.execute_stream().unwrap().map(|b| b.unwrap().num_rows()).sum::<usize>(), 3);
    let mut rows = vec![];
    later
        .for_each_batch_with_control(&Arc::new(kiln::QueryControl::default()), &mut |b| {
            rows.push(b);
            true
        })
        .unwrap();
    assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 3);
    assert!(rows.iter().all(|b| b.schema().field(0).name() == "k" && b.schema().field(1).name() == "n"));
}

fn users(s: &Session) {
    s.register_batches(
        "u",
        vec![batch(vec![("id", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef), ("name", Arc::new(StringArray::from(vec!["p", "p' OR '1'='1"])))])],
    )
    .unwrap();
}

// Spark: spark.sql("SELECT * FROM u WHERE name = :n", args={"n": "x' OR '1'='1"}) has no rows;
// with "p' OR '1'='1" it is the row of that name; `?` markers bind in order.
#[test]
fn parameterized_sql() {
    let s = Session::new();
    users(&s);
    let q = "SELECT * FROM u WHERE name = :n";
    assert_eq!(rows(&s.sql_with_args(q, [("n", "x' OR '1'='1")]).unwrap()), ["id,name"]);
    assert_eq!(rows(&s.sql_with_args(q, [("n", "p' OR '1'='1")]).unwrap())[1..], ["2,p' OR '1'='1"]);
    assert_eq!(rows(&s.sql_with_args("SELECT * FROM u WHERE id > ? AND name = ?", vec![ScalarValue::from(0), "p".into()]).unwrap())[1..], ["1,p"]);
    // Typed literals: Spark's struct<x:int,y:double,z:boolean,w:void>, then date and decimal(3,2).
    let typed = s
        .sql_with_args("SELECT :a + 1 AS x, :b AS y, :c AS z, :d AS w", [("a", ScalarValue::from(5)), ("b", 2.5.into()), ("c", true.into()), ("d", ScalarValue::Null(DataType::Null))])
        .unwrap();
    let names: Vec<String> = typed.schema().fields().iter().map(|f| kiln::types::spark_type_name(f.data_type())).collect();
    assert_eq!(names, ["int", "double", "boolean", "void"]);
    assert_eq!(rows(&typed)[1], "6,2.5,true,NULL");
    let dated = s.sql_with_args("SELECT :a AS a, :b AS b, :c AS c", [("a", ScalarValue::Date32(18263)), ("b", ScalarValue::Decimal(150, 3, 2)), ("c", ScalarValue::Int64(-7))]).unwrap();
    let names: Vec<String> = dated.schema().fields().iter().map(|f| kiln::types::spark_type_name(f.data_type())).collect();
    assert_eq!(names, ["date", "decimal(3,2)", "bigint"]);
    assert_eq!(rows(&dated)[1], "2020-01-02,1.50,-7");
    assert_eq!(rows(&s.sql_with_args("SELECT 10 * ? AS x", [-3]).unwrap())[1], "-30");
    // A marker inside a string is text; an unused argument is fine (as in Spark).
    assert_eq!(rows(&s.sql_with_args("SELECT ':x' AS s, :x AS y", [("x", 1), ("unused", 2)]).unwrap())[1], ":x,1");
    // Spark: UNBOUND_SQL_PARAMETER (42P02) naming the marker; INVALID_QUERY_MIXED_QUERY_PARAMETERS (42613).
    let err = s.sql_with_args("SELECT :x", Vec::<(&str, i32)>::new()).unwrap_err();
    assert_eq!((err.error_class(), err.sql_state()), (Some("UNBOUND_SQL_PARAMETER"), Some("42P02")));
    assert_eq!(err.message_parameters(), [("name".to_string(), "x".to_string())]);
    let err = s.sql_with_args("SELECT ?", Vec::<i32>::new()).unwrap_err();
    assert_eq!(err.message_parameters(), [("name".to_string(), "_7".to_string())]);
    let err = s.sql_with_args("SELECT :x, ?", [("x", 1)]).unwrap_err();
    assert_eq!((err.error_class(), err.sql_state()), (Some("INVALID_QUERY_MIXED_QUERY_PARAMETERS"), Some("42613")));
}

// Spark's getCondition() / getSqlState() / getMessageParameters() for the same statements.
#[test]
fn errors_carry_class_state_and_parameters() {
    let s = Session::new();
    users(&s);
    let err = |q: &str| match s.sql(q).and_then(|df| df.collect()) {
        Err(e) => e,
        Ok(_) => panic!("{q} should fail"),
    };
    let e = err("SELECT nosuch FROM u");
    assert_eq!((e.error_class(), e.sql_state()), (Some("UNRESOLVED_COLUMN.WITH_SUGGESTION"), Some("42703")));
    assert_eq!(e.message_parameters()[0], ("objectName".to_string(), "`nosuch`".to_string()));
    let e = err("SELECT 1/0");
    assert_eq!((e.error_class(), e.sql_state()), (Some("DIVIDE_BY_ZERO"), Some("22012")));
    let e = err("SELECT * FROM nosuch");
    assert_eq!((e.error_class(), e.sql_state()), (Some("TABLE_OR_VIEW_NOT_FOUND"), Some("42P01")));
    assert_eq!(e.message_parameters()[0], ("relationName".to_string(), "`nosuch`".to_string()));
    let e = err("SELEC 1");
    assert_eq!((e.error_class(), e.sql_state()), (Some("PARSE_SYNTAX_ERROR"), Some("42601")));
    let e = err("SELECT CAST('x' AS INT)");
    assert_eq!((e.error_class(), e.sql_state()), (Some("CAST_INVALID_INPUT"), Some("22018")));
}

#[test]
fn session_reads_files_into_dataframes() {
    let dir = tempfile::tempdir().unwrap();
    let s = Session::new();
    let df = letters(&s);
    df.write_parquet(dir.path().join("p"), &[]).unwrap();
    df.write_csv(dir.path().join("c"), &[("header", "true")]).unwrap();
    df.write_json(dir.path().join("j")).unwrap();
    let sorted = |d: DataFrame| rows(&d.order_by([col("w")]).unwrap());
    let want = sorted(df.clone());
    assert_eq!(sorted(s.read_parquet(dir.path().join("p")).unwrap()), want);
    assert_eq!(sorted(s.read_csv(dir.path().join("c"), &[("header", "true"), ("inferSchema", "true")]).unwrap()), want);
    assert_eq!(sorted(s.read_json(dir.path().join("j"), &[]).unwrap()), want);
    assert!(s.table_names().unwrap().is_empty(), "nothing registered");
    users(&s);
    assert!(s.drop_temp_view("u").unwrap());
    assert_eq!(s.sql("SELECT * FROM u").unwrap_err().error_class(), Some("TABLE_OR_VIEW_NOT_FOUND"));
    assert!(!s.deregister_table("u").unwrap());
}

// Spark's printSchema, showString(2, 3) and tail(2) of the same rows. (kiln's array elements,
// map values and struct fields are always nullable, where Spark's literals know they are not.)
#[test]
fn schema_show_head_tail() {
    let s = Session::new();
    let t = letters(&s);
    let typed = s.sql("SELECT 1 AS i, 2L AS l, 1.5 AS d, 'x' AS s, DATE'2020-01-01' AS dt, array(1, 2) AS a, map('k', 1) AS m, named_struct('x', 1, 'y', array('a')) AS st, CAST(1 AS TINYINT) AS ti, NULL AS n").unwrap();
    assert_eq!(
        typed.schema_string(),
        "root\n |-- i: integer (nullable = false)\n |-- l: long (nullable = false)\n |-- d: decimal(2,1) (nullable = false)\n |-- s: string (nullable = false)\n |-- dt: date (nullable = false)\n |-- a: array (nullable = false)\n |    |-- element: integer (containsNull = true)\n |-- m: map (nullable = false)\n |    |-- key: string\n |    |-- value: integer (valueContainsNull = true)\n |-- st: struct (nullable = false)\n |    |-- x: integer (nullable = true)\n |    |-- y: array (nullable = true)\n |    |    |-- element: string (containsNull = true)\n |-- ti: byte (nullable = false)\n |-- n: void (nullable = true)\n"
    );
    assert_eq!(t.show_string(2, 3).unwrap(), "+---+---+---+\n|  k|  v|  w|\n+---+---+---+\n|  1|  a| 10|\n|  1|  b| 20|\n+---+---+---+\nonly showing top 2 rows\n");
    let tail = t.order_by([col("w")]).unwrap().tail(2).unwrap();
    assert_eq!(tail.column(2).as_primitive::<Int32Type>().values(), &[40, 50]);
    assert_eq!(t.head(2).unwrap().iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    assert_eq!(t.with_columns([("a", col("k") + 1), ("w", lit(0))]).unwrap().columns(), ["k", "v", "w", "a"]);
    // Spark: t.join(t2, t.k == t2.key) has the columns of both, [k, v, w, key, z].
    let t2 = s.sql("SELECT 1 AS key, 'x' AS z").unwrap();
    let joined = t.join_on(&t2, col("k").eq(col("key")), kiln::JoinType::Inner).unwrap();
    assert_eq!(joined.columns(), ["k", "v", "w", "key", "z"]);
    assert_eq!(joined.count().unwrap(), 2);
}

// Spark's na.fill / na.drop over (1, 1.5, 'a', NULL), (NULL, NULL, NULL, true), (3, NULL, 'c', false).
#[test]
fn missing_values() {
    let s = Session::new();
    let t = s.sql("SELECT * FROM VALUES (1, 1.5D, 'a', CAST(NULL AS BOOLEAN)), (NULL, NULL, NULL, true), (3, NULL, 'c', false) AS t(i, d, s, b)").unwrap();
    let sorted = |d: DataFrame| rows(&d.order_by([col("i").asc_nulls_last(), col("s")]).unwrap())[1..].to_vec();
    assert_eq!(sorted(t.na().fill(0, &[]).unwrap()), ["0,0.0,NULL,true", "1,1.5,a,NULL", "3,0.0,c,false"]);
    assert_eq!(sorted(t.na().fill(2.5, &[]).unwrap()), ["1,1.5,a,NULL", "2,2.5,NULL,true", "3,2.5,c,false"]);
    assert_eq!(sorted(t.na().fill("z", &[]).unwrap()), ["1,1.5,a,NULL", "3,NULL,c,false", "NULL,NULL,z,true"]);
    assert_eq!(sorted(t.na().fill(0, &["d"]).unwrap()), ["1,1.5,a,NULL", "3,0.0,c,false", "NULL,0.0,NULL,true"]);
    assert_eq!(sorted(t.na().fill(true, &[]).unwrap()), ["1,1.5,a,true", "3,NULL,c,false", "NULL,NULL,NULL,true"]);
    assert_eq!(sorted(t.na().fill_map(&[("i", 7.into()), ("s", "q".into())]).unwrap()), ["1,1.5,a,NULL", "3,NULL,c,false", "7,NULL,q,true"]);
    assert!(rows(&t.na().drop(&[]).unwrap())[1..].is_empty());
    assert_eq!(sorted(t.na().drop_thresh(1, &[]).unwrap()).len(), 3);
    assert_eq!(sorted(t.na().drop(&["d"]).unwrap()), ["1,1.5,a,NULL"]);
    assert_eq!(sorted(t.na().drop_thresh(3, &[]).unwrap()), ["1,1.5,a,NULL", "3,NULL,c,false"]);
}

// Spark's describe() and summary() of (1, 1.5, 'a', 2.50, date, true), (NULL ...), (3, 4.0, 'c', 1.25, date, true).
#[test]
fn describe_and_summary() {
    let s = Session::new();
    let x = s
        .sql("SELECT * FROM VALUES (1, 1.5D, 'a', 2.50BD, DATE'2020-01-01', true), (NULL, NULL, NULL, NULL, NULL, false), (3, 4.0D, 'c', 1.25BD, DATE'2021-01-01', true) AS t(i, d, s, dec, dt, b)")
        .unwrap();
    assert_eq!(
        rows(&x.describe(&[]).unwrap()),
        [
            "summary,i,d,s,dec",
            "count,2,2,2,2",
            "mean,2.0,2.75,NULL,1.875000",
            "stddev,1.4142135623730951,1.7677669529663689,NULL,0.8838834764831844",
            "min,1,1.5,a,1.25",
            "max,3,4.0,c,2.50"
        ]
    );
    assert_eq!(rows(&x.describe(&["i"]).unwrap())[1..3], ["count,2", "mean,2.0"]);
    let summary = rows(&x.summary(&[]).unwrap());
    assert_eq!(summary[5..8], ["25%,1,1.5,NULL,1.25", "50%,1,1.5,NULL,1.25", "75%,3,4.0,NULL,2.5"]);
    assert_eq!(rows(&x.summary(&["count", "min"]).unwrap())[1..], ["count,2,2,2,2", "min,1,1.5,a,1.25"]);
}

/// A join whose output (600,000² / 7 rows) would take minutes to count: it must stop at the
/// signal, long after its scans have finished.
const LONG_JOIN: &str = "WITH a AS (SELECT id, id % 7 AS k FROM range(0, 600000)) SELECT /*+ MERGE(x, y) */ count(*) FROM a x JOIN a y ON x.k = y.k";

#[derive(Clone, Copy, Debug)]
enum Run {
    Collect,
    CollectWithControl,
    Stream,
    StreamWithControl,
    ForEachWithControl,
}

#[derive(Clone, Copy, Debug)]
enum Stop {
    Timeout,
    InterruptAll,
    Cancel,
}

/// The batches of a stream, or the error that ended it.
fn count_batches(stream: kiln::RecordBatchStream) -> kiln::Result<usize> {
    let mut n = 0;
    for b in stream {
        b.map_err(kiln::KilnError::from_stream)?;
        n += 1;
    }
    Ok(n)
}

/// Runs LONG_JOIN as `run`, stopped by `stop` 300 ms in; the error and how long the run took.
fn stopped_join(mode: &str, run: Run, stop: Stop) -> (kiln::KilnError, std::time::Duration) {
    let s = Session::builder().config("spark.sql.codegen.wholeStage", mode).config("spark.sql.shuffle.partitions", "2").build().unwrap();
    if let Stop::Timeout = stop {
        s.set_conf("kiln.query.timeout", "300ms").unwrap();
    }
    let df = s.sql(LONG_JOIN).unwrap();
    let control = Arc::new(kiln::QueryControl::default());
    let start = std::time::Instant::now();
    let signal = {
        let (s, control) = (s.clone(), control.clone());
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            match stop {
                Stop::Timeout => 1,
                Stop::InterruptAll => s.interrupt_all(),
                Stop::Cancel => {
                    control.cancel();
                    1
                }
            }
        })
    };
    let result: kiln::Result<usize> = match run {
        Run::Collect => df.collect().map(|b| b.len()),
        Run::CollectWithControl => df.collect_with_control(&control).map(|b| b.len()),
        Run::Stream => df.execute_stream().and_then(count_batches),
        Run::StreamWithControl => df.execute_stream_with_control(&control).and_then(count_batches),
        Run::ForEachWithControl => {
            let mut n = 0;
            df.for_each_batch_with_control(&control, &mut |_| {
                n += 1;
                true
            })
            .map(|()| n)
        }
    };
    let elapsed = start.elapsed();
    assert_eq!(signal.join().unwrap(), 1, "{mode} {run:?} {stop:?}: one query running at the signal");
    match result {
        Err(e) => (e, elapsed),
        Ok(n) => panic!("{mode} {run:?} {stop:?}: finished with {n} batches instead of stopping"),
    }
}

// Issue 40 item 2: the timeout, Session::interrupt_all and QueryControl::cancel stop a join
// once its scans are done, through collect, collect_with_control, execute_stream (the timeout
// and interrupt_all need no control of the host's), execute_stream_with_control and
// for_each_batch_with_control, compiled
// and interpreted. (A stop takes a batch of the join's output: milliseconds; the bound only
// separates stopping from running the minutes the join takes.)
#[test]
fn timeout_interrupt_and_cancel_stop_a_join() {
    for mode in ["true", "false"] {
        for run in [Run::Collect, Run::CollectWithControl, Run::Stream, Run::StreamWithControl, Run::ForEachWithControl] {
            for stop in [Stop::Timeout, Stop::InterruptAll, Stop::Cancel] {
                if matches!((run, stop), (Run::Collect | Run::Stream, Stop::Cancel)) {
                    continue; // a plain collect or stream has no control of the host's to cancel
                }
                let (err, took) = stopped_join(mode, run, stop);
                let text = err.to_string();
                match stop {
                    Stop::Timeout => assert!(text.contains("kiln.query.timeout"), "{mode} {run:?}: {text}"),
                    _ => assert_eq!(err.error_class(), Some("OPERATION_CANCELED"), "{mode} {run:?} {stop:?}: {text}"),
                }
                println!("{mode} {run:?} {stop:?}: stopped after {took:?}");
                assert!(took < std::time::Duration::from_secs(10), "{mode} {run:?} {stop:?}: stopped after {took:?}");
            }
        }
    }
}

// pyspark 4.3 for the same calls (Window.partitionBy("k").orderBy("i"), rowsBetween,
// rangeBetween, F.row_number / rank / lag / lead / first / last / collect_list).
#[test]
fn window_api() {
    let s = Session::new();
    let t = s.sql("SELECT * FROM VALUES ('a', 1, 10), ('a', 2, 20), ('a', 3, 20), ('b', 1, 5), ('b', 4, NULL) AS t(k, i, v)").unwrap();
    let w = Window::partition_by([col("k")]).order_by([col("i")]);
    let out = t
        .select([
            col("k"),
            col("i"),
            row_number().over(w.clone()).alias("rn"),
            rank().over(Window::partition_by([col("k")]).order_by([col("v")])).alias("rk"),
            lag(col("v"), 1).over(w.clone()).alias("lag"),
            lead(col("v"), 1).over(w.clone()).alias("lead"),
            sum(col("v")).over(w.clone().rows_between(Window::UNBOUNDED_PRECEDING, Window::CURRENT_ROW)).alias("run"),
            sum(col("v")).over(w.clone().rows_between(-1, 1)).alias("mov"),
            count(col("*")).over(Window::partition_by([col("k")]).order_by([col("i")]).range_between(-1, 0)).alias("rng"),
            first(col("v"), false).over(w.clone()).alias("f"),
            last(col("v"), true).over(w.clone().rows_between(Window::UNBOUNDED_PRECEDING, Window::UNBOUNDED_FOLLOWING)).alias("l"),
            collect_list(col("v")).over(Window::partition_by([col("k")])).cast("string").alias("cl"),
        ])
        .unwrap()
        .order_by([col("k"), col("i")])
        .unwrap();
    assert_eq!(
        rows(&out),
        [
            "k,i,rn,rk,lag,lead,run,mov,rng,f,l,cl",
            "a,1,1,1,NULL,20,10,30,1,10,20,\"[10, 20, 20]\"",
            "a,2,2,2,10,20,30,50,2,10,20,\"[10, 20, 20]\"",
            "a,3,3,2,20,NULL,50,40,2,10,20,\"[10, 20, 20]\"",
            "b,1,1,2,NULL,NULL,5,5,1,5,5,[5]",
            "b,4,2,1,5,NULL,5,5,1,5,5,[5]",
        ]
    );
    // The same plan as SQL's OVER clause, and SQL's column name.
    let sql = s.sql("SELECT row_number() OVER (PARTITION BY k ORDER BY i) FROM VALUES ('a', 1) AS t(k, i)").unwrap();
    let api = s.sql("SELECT * FROM VALUES ('a', 1) AS t(k, i)").unwrap().select([row_number().over(w.clone())]).unwrap();
    assert_eq!(api.columns(), sql.columns());
    assert_eq!(api.columns(), ["row_number() OVER (PARTITION BY k ORDER BY i ASC NULLS FIRST ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"]);
    // Spark: rank() needs an ORDER BY; a ROWS offset beyond an int is refused.
    assert!(t.select([rank().over(Window::partition_by([col("k")]))]).is_err());
    assert!(t.select([sum(col("v")).over(w.rows_between(-(1i64 << 40), 0))]).is_err());
}

// pyspark 4.3: F.to_date, date_trunc, regexp_replace, split, concat_ws, month, hour, stddev,
// collect_list and Column.substr / contains / startswith / endswith / rlike / getItem /
// getField / isin / between / cast over the same row.
#[test]
fn function_helpers_and_column_methods() {
    let s = Session::new();
    let r = s
        .sql("SELECT 'hello world' AS s, TIMESTAMP'2024-03-15 13:45:30' AS ts, '2024-02-29' AS d, array(1,2,3) AS a, map('x', 7) AS m, named_struct('f', 5) AS st, 2.5D AS x")
        .unwrap();
    let out = r
        .select([
            to_date(col("d")).alias("td"),
            date_trunc("month", col("ts")).alias("dt"),
            regexp_replace(col("s"), "o", "0").alias("rr"),
            split(col("s"), " ").cast("string").alias("sp"),
            concat_ws("-", [col("s"), col("d")]).alias("cw"),
            month(col("ts")).alias("mo"),
            hour(col("ts")).alias("hr"),
            col("s").substr(1, 5).alias("sub"),
            col("s").contains("lo w").alias("c"),
            col("s").startswith("he").alias("sw"),
            col("s").endswith("x").alias("ew"),
            col("s").rlike("w.r").alias("rl"),
            col("a").get_item(1).alias("gi"),
            col("m").get_item("x").alias("mi"),
            col("st").get_field("f").alias("gf"),
            col("x").is_in([lit(1), lit(2.5)]).alias("isin"),
            col("x").between(2, 3).alias("btw"),
            col("x").cast("int").alias("ci"),
        ])
        .unwrap();
    assert_eq!(rows(&out)[1], "2024-02-29,2024-03-01 00:00:00,hell0 w0rld,\"[hello, world]\",hello world-2024-02-29,3,13,hello,true,true,false,true,2,7,5,true,true,2");
    // Each helper is the registry's function of that name: the same column as in SQL.
    let by_sql = s.sql("SELECT month(ts), concat_ws('-', s, d), date_trunc('month', ts) FROM (SELECT 'a' AS s, 'b' AS d, TIMESTAMP'2024-03-15 13:45:30' AS ts)").unwrap();
    let by_api = s.sql("SELECT 'a' AS s, 'b' AS d, TIMESTAMP'2024-03-15 13:45:30' AS ts").unwrap().select([month(col("ts")), concat_ws("-", [col("s"), col("d")]), date_trunc("month", col("ts"))]).unwrap();
    assert_eq!(by_api.columns(), by_sql.columns());
    assert_eq!(by_api.columns()[0], "month(ts)");
    let g = s.sql("SELECT * FROM VALUES (1, 2.0D), (2, 4.0D), (3, 9.0D) AS g(i, v)").unwrap();
    let agg = g.agg([stddev(col("v")), collect_list(col("i")).cast("string")]).unwrap();
    assert_eq!(rows(&agg)[1], "3.605551275463989,\"[1, 2, 3]\"");
    // Every typed helper resolves to a function of the registry (none is a name SQL lacks).
    let n = s.sql("SELECT 2.0D AS x, 'ab' AS t, DATE'2024-02-10' AS d, array(1, 1) AS a").unwrap();
    let all = n.select([
        collect_set(col("x")), stddev_samp(col("x")), stddev_pop(col("x")), variance(col("x")), var_samp(col("x")), var_pop(col("x")),
        count_if(col("x").gt(1)), any_value(col("x")), median(col("x")), percentile_approx(col("x"), 0.5, 100), corr(col("x"), col("x")),
    ]);
    assert_eq!(all.unwrap().collect().unwrap()[0].num_columns(), 11);
    let all = n.select([
        to_timestamp(col("d")), dayofmonth(col("d")), dayofweek(col("d")), dayofyear(col("d")), quarter(col("d")), weekofyear(col("d")),
        minute(col("d")), second(col("d")), last_day(col("d")), sqrt(col("x")), exp(col("x")), ln(col("x")), floor(col("x")), ceil(col("x")),
        signum(col("x")), initcap(col("t")), reverse(col("t")), size(col("a")), array_distinct(col("a")), md5(col("t")), sha1(col("t")),
        hex(col("t")), base64(col("t").cast("binary")), ascii(col("t")), current_date(), current_timestamp(), date_format(col("d"), "yyyy-MM"),
        add_months(col("d"), 1), regexp_extract(col("t"), "(a)", 1), lpad(col("t"), 4, "x"), rpad(col("t"), 4, "x"), greatest([col("x"), lit(3.0)]),
        least([col("x"), lit(3.0)]), array([col("x")]), array_contains(col("a"), 1),
    ]);
    assert_eq!(all.unwrap().collect().unwrap()[0].num_columns(), 35);
    let ranks = n.select([dense_rank().over(Window::order_by([col("x")])), percent_rank().over(Window::order_by([col("x")])), cume_dist().over(Window::order_by([col("x")])), ntile(2).over(Window::order_by([col("x")]))]);
    assert_eq!(ranks.unwrap().collect().unwrap()[0].num_columns(), 4);
}

// pyspark 4.3: t.groupBy("y").pivot("q", ["q1", "q2"]).agg(F.sum("v")); .pivot("q") (values
// found, NULL first) with two aggregates; count is NULL for a group without the value
// (PivotFirst), 0 next to an array-typed aggregate; pivot().count().
#[test]
fn pivot_on_grouped_data() {
    let s = Session::new();
    let t = s.sql("SELECT * FROM VALUES (2024, 'q1', 10), (2024, 'q2', 20), (2025, 'q1', 5), (2025, NULL, 7), (2024, 'q1', 1) AS t(y, q, v)").unwrap();
    let by_y = |p: kiln::Result<DataFrame>| rows(&p.unwrap().order_by([col("y")]).unwrap());
    assert_eq!(by_y(t.group_by([col("y")]).pivot("q", ["q1".into(), "q2".into()]).agg([sum(col("v"))])), ["y,q1,q2", "2024,11,20", "2025,5,NULL"]);
    assert_eq!(
        by_y(t.group_by([col("y")]).pivot("q", []).agg([sum(col("v")).alias("s"), count(col("v"))])),
        ["y,null_s,null_count(v),q1_s,q1_count(v),q2_s,q2_count(v)", "2024,NULL,NULL,11,2,20,1", "2025,7,1,5,1,NULL,NULL"]
    );
    assert_eq!(by_y(t.group_by([col("y")]).pivot("q", ["q1".into()]).agg([max(col("v")), min(col("v"))])), ["y,q1_max(v),q1_min(v)", "2024,10,1", "2025,5,5"]);
    let mixed = t.group_by([col("y")]).pivot("q", ["q2".into()]).agg([count(col("v")), collect_list(col("v"))]).unwrap();
    assert_eq!(mixed.columns(), ["y", "q2_count(v)", "q2_collect_list(v)"]);
    assert_eq!(by_y(mixed.select([col("y"), col("q2_count(v)"), col("q2_collect_list(v)").cast("string").alias("l")])), ["y,q2_count(v),l", "2024,1,[20]", "2025,0,[]"]);
    assert_eq!(by_y(t.group_by([col("y")]).pivot("q", []).count()), ["y,null,q1,q2", "2024,NULL,2,1", "2025,1,1,NULL"]);
}

// pyspark 4.3: sample(1.5) is "requirement failed: Sampling fraction (1.5) must be on interval
// [0, 1] without replacement"; write.insertInto casts by position and overwrite replaces;
// one data column for a two-column table is INSERT_COLUMN_ARITY_MISMATCH.
#[test]
fn sample_insert_into_and_partitions() {
    let s = Session::builder().config("spark.sql.shuffle.partitions", "3").config("spark.sql.adaptive.enabled", "false").build().unwrap();
    let r = s.sql("SELECT id FROM range(10000)").unwrap();
    let tenth = r.sample(0.1, 7).unwrap().count().unwrap();
    assert!((800..1200).contains(&tenth), "{tenth}");
    assert_eq!(r.sample(0.1, 7).unwrap().count().unwrap(), tenth, "the same seed keeps the same rows");
    assert_eq!((r.sample(0.0, 1).unwrap().count().unwrap(), r.sample(1.0, 1).unwrap().count().unwrap()), (0, 10000));
    assert!(r.sample(1.5, 1).unwrap_err().to_string().contains("Sampling fraction (1.5) must be on interval [0, 1]"));

    s.sql("CREATE TABLE tt (id BIGINT, tag STRING)").unwrap();
    s.sql("SELECT 1 AS a, 'x' AS b").unwrap().insert_into("tt", false).unwrap();
    s.sql("SELECT 2.7D AS a, 'y' AS b").unwrap().insert_into("tt", false).unwrap();
    assert_eq!(rows(&s.table("tt").unwrap().order_by([col("id")]).unwrap()), ["id,tag", "1,x", "2,y"]);
    let err = s.sql("SELECT 1 AS a").unwrap().insert_into("tt", false).unwrap_err();
    assert!(err.error_class().is_some_and(|c| c.starts_with("INSERT_COLUMN_ARITY_MISMATCH")), "{err}");
    s.sql("SELECT 3 AS a, 'z' AS b").unwrap().insert_into("tt", true).unwrap();
    assert_eq!(rows(&s.table("tt").unwrap()), ["id,tag", "3,z"]);

    let grouped = s.sql("SELECT k, count(*) AS n FROM (SELECT id % 5 AS k FROM range(100)) GROUP BY k").unwrap();
    let parts = grouped.collect_partitioned().unwrap();
    assert_eq!(parts.len(), 3, "spark.sql.shuffle.partitions");
    assert_eq!(parts.iter().flatten().map(|b| b.num_rows()).sum::<usize>(), 5);
    assert!(parts.iter().filter(|p| !p.is_empty()).count() >= 2, "the groups spread over the partitions");
}

fn int64s(a: &ArrayRef) -> Vec<Option<i64>> {
    a.as_primitive::<kiln::arrow::datatypes::Int64Type>().iter().collect()
}

// UDF signatures a host declares: variadic, one-of, a return type from the argument types, and
// DataFusion's create_udf; each call checked against what the signature says.
#[test]
fn udf_signatures() {
    use kiln::arrow::array::Int64Array;
    let s = Session::new();
    // add_all(x, ...): the sum of its bigint arguments (ints widened, as Spark casts UDF inputs).
    s.register_udf(ScalarUdf::new("add_all", Signature::Variadic(DataType::Int64), DataType::Int64, Volatility::Immutable, |args: &[ArrayRef]| {
        let rows = args[0].len();
        Ok(Arc::new((0..rows).map(|r| args.iter().map(|a| int64s(a)[r]).sum::<Option<i64>>()).collect::<Int64Array>()) as ArrayRef)
    }))
    .unwrap();
    assert_eq!(rows(&s.sql("SELECT add_all(1) AS a, add_all(1, 2, 3L) AS b, add_all(1, NULL) AS c").unwrap())[1], "1,6,NULL");
    assert_eq!(s.sql("SELECT add_all()").unwrap_err().error_class(), Some("WRONG_NUM_ARGS.WITHOUT_SUGGESTION"));
    assert_eq!(s.sql("SELECT add_all('x')").unwrap_err().error_class(), Some("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"));
    // arg_type(x): the type name of its one argument, whatever it is; first_of(x, ...): its first
    // argument, typed as that argument.
    s.register_udf(ScalarUdf::new("nargs", Signature::VariadicAny, DataType::Int64, Volatility::Immutable, |args: &[ArrayRef]| {
        Ok(Arc::new(Int64Array::from(vec![args.len() as i64; args[0].len()])) as ArrayRef)
    }))
    .unwrap();
    assert_eq!(rows(&s.sql("SELECT nargs('a', 1, DATE'2020-01-01', array(1)) AS n").unwrap())[1], "4");
    s.register_udf(ScalarUdf::with_return_type("first_of", Signature::VariadicAny, |t: &[DataType]| Ok(t[0].clone()), Volatility::Immutable, |args: &[ArrayRef]| Ok(args[0].clone())))
        .unwrap();
    let typed = s.sql("SELECT first_of('a', 1) AS s, first_of(2.5D) AS d, first_of(DATE'2020-01-02', 'x') AS dt").unwrap();
    let names: Vec<String> = typed.schema().fields().iter().map(|f| kiln::types::spark_type_name(f.data_type())).collect();
    assert_eq!(names, ["string", "double", "date"]);
    assert_eq!(rows(&typed)[1], "a,2.5,2020-01-02");
    // A return-type function's error is the call's analysis error.
    s.register_udf(ScalarUdf::with_return_type(
        "only_ints",
        Signature::Any(1),
        |t: &[DataType]| if t[0].is_integer() { Ok(DataType::Int64) } else { Err(kiln::KilnError::analysis("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE", format!("only_ints takes an integer, not {}", t[0]))) },
        Volatility::Immutable,
        |args: &[ArrayRef]| Ok(kiln::arrow::compute::cast(&args[0], &DataType::Int64)?),
    ))
    .unwrap();
    assert_eq!(rows(&s.sql("SELECT only_ints(7)").unwrap())[1], "7");
    assert_eq!(s.sql("SELECT only_ints('x')").unwrap_err().error_class(), Some("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"));
    // pick(x) or pick(x, n): one-of, the first signature that fits.
    s.register_udf(ScalarUdf::new(
        "pick",
        Signature::OneOf(vec![Signature::Exact(vec![DataType::Int64]), Signature::Exact(vec![DataType::Int64, DataType::Int64])]),
        DataType::Int64,
        Volatility::Immutable,
        |args: &[ArrayRef]| Ok(args[args.len() - 1].clone()),
    ))
    .unwrap();
    assert_eq!(rows(&s.sql("SELECT pick(1) AS a, pick(1, 2) AS b").unwrap())[1], "1,2");
    assert_eq!(s.sql("SELECT pick(1, 2, 3)").unwrap_err().error_class(), Some("WRONG_NUM_ARGS.WITHOUT_SUGGESTION"));
    // create_udf: fixed input types.
    s.register_udf(kiln::udf::create_udf("twice", vec![DataType::Int64], DataType::Int64, Volatility::Immutable, |args: &[ArrayRef]| {
        Ok(Arc::new(int64s(&args[0]).into_iter().map(|v| v.map(|v| v * 2)).collect::<Int64Array>()) as ArrayRef)
    }))
    .unwrap();
    assert_eq!(rows(&s.sql("SELECT twice(21)").unwrap())[1], "42");
}

/// A UDAF: the largest bigint of its input (state: the largest so far).
fn register_largest(s: &Session) {
    use kiln::arrow::array::Int64Array;
    #[derive(Default)]
    struct Largest(Vec<Option<i64>>);
    impl kiln::Accumulator for Largest {
        fn resize(&mut self, groups: usize) {
            self.0.resize(groups, None);
        }
        fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> kiln::Result<()> {
            for (g, v) in gids.iter().zip(int64s(&args[0])) {
                let slot = &mut self.0[*g as usize];
                *slot = (*slot).max(v).or(*slot);
            }
            Ok(())
        }
        fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> kiln::Result<()> {
            self.update(gids, state)
        }
        fn state(&mut self) -> kiln::Result<Vec<ArrayRef>> {
            Ok(vec![Arc::new(self.0.iter().copied().collect::<Int64Array>())])
        }
        fn evaluate(&mut self) -> kiln::Result<ArrayRef> {
            Ok(Arc::new(self.0.iter().copied().collect::<Int64Array>()))
        }
    }
    let state = vec![kiln::arrow::datatypes::Field::new("m", DataType::Int64, true)];
    s.register_udaf(kiln::AggregateUdf::new("largest", Signature::Exact(vec![DataType::Int64]), DataType::Int64, state, || Box::new(Largest::default()))).unwrap();
}

// pyspark 4.3: F.max("v").over(Window.partitionBy("k").orderBy("i").rowsBetween(unboundedPreceding,
// currentRow)) and .rowsBetween(-1, 1) over the window_api rows; a UDAF over the same windows
// gives the same, in SQL and through the window API, in both execution modes.
#[test]
fn udaf_over_windows() {
    for codegen in ["true", "false"] {
        let s = Session::builder().config("spark.sql.codegen.wholeStage", codegen).build().unwrap();
        register_largest(&s);
        let t = s.sql("SELECT * FROM VALUES ('a', 1, 10), ('a', 2, 20), ('a', 3, 15), ('b', 1, 5), ('b', 4, NULL) AS t(k, i, v)").unwrap();
        let w = Window::partition_by([col("k")]).order_by([col("i")]);
        let api = t
            .select([
                col("k"),
                col("i"),
                call_udf("largest", [col("v")]).over(w.clone().rows_between(Window::UNBOUNDED_PRECEDING, Window::CURRENT_ROW)).alias("run"),
                call_udf("largest", [col("v")]).over(w.rows_between(-1, 1)).alias("mov"),
            ])
            .unwrap()
            .order_by([col("k"), col("i")])
            .unwrap();
        assert_eq!(rows(&api), ["k,i,run,mov", "a,1,10,20", "a,2,20,20", "a,3,20,20", "b,1,5,5", "b,4,5,5"], "codegen {codegen}");
        t.create_or_replace_temp_view("t").unwrap();
        let sql = s.sql("SELECT k, i, largest(v) OVER (PARTITION BY k ORDER BY i) AS run FROM t ORDER BY k, i").unwrap();
        assert_eq!(rows(&sql)[1..], ["a,1,10", "a,2,20", "a,3,20", "b,1,5", "b,4,5"]);
    }
}

// A UDF that panics fails its query with FAILED_EXECUTE_UDF, and the panic is not printed by
// the default hook (run in a child process, whose stderr is read); other panics still are.
#[test]
fn a_caught_udf_panic_is_not_printed() {
    if std::env::var_os("KILN_UDF_PANIC_CHILD").is_some() {
        let s = Session::new();
        s.register_udf(ScalarUdf::new("boom", Signature::Any(1), DataType::Int64, Volatility::Immutable, |_: &[ArrayRef]| panic!("udf went boom")))
            .unwrap();
        let err = s.sql("SELECT boom(1)").and_then(|d| d.collect()).unwrap_err();
        assert!(err.to_string().contains("[FAILED_EXECUTE_UDF]") && err.to_string().contains("udf went boom"), "{err}");
        eprintln!("child done");
        let _ = std::panic::catch_unwind(|| panic!("a host panic"));
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_caught_udf_panic_is_not_printed", "--nocapture", "--test-threads=1"])
        .env("KILN_UDF_PANIC_CHILD", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("child done"), "{stderr}");
    assert!(!stderr.contains("udf went boom"), "the UDF's panic was printed:\n{stderr}");
    assert!(stderr.contains("a host panic"), "the host's own panics still print:\n{stderr}");
}

/// A host's table of (id, name) rows, 0..n, in `parts` partitions, recording what each scan
/// was asked for.
struct People {
    n: i32,
    parts: usize,
    bytes: Option<u64>,
    scans: std::sync::Mutex<Vec<(Vec<usize>, Vec<String>, usize)>>,
}

impl kiln::TableProvider for People {
    fn schema(&self) -> kiln::arrow::datatypes::SchemaRef {
        use kiln::arrow::datatypes::{Field, Schema};
        Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, false), Field::new("name", DataType::LargeUtf8, true)]))
    }
    fn partitions(&self) -> usize {
        self.parts
    }
    fn scan(&self, projection: &[usize], filters: &[kiln::datasource::pushed_filter::PushedFilter], partition: usize) -> kiln::Result<kiln::datasource::provider::ProvidedBatches> {
        self.scans.lock().unwrap().push((projection.to_vec(), filters.iter().map(|f| f.to_string()).collect(), partition));
        let (from, to) = (self.n * partition as i32 / self.parts as i32, self.n * (partition as i32 + 1) / self.parts as i32);
        let ids = Int32Array::from_iter_values(from..to);
        let names = LargeStringArray::from_iter((from..to).map(|i| (i % 4 != 0).then(|| format!("p{i}"))));
        let batch = RecordBatch::try_new(self.schema(), vec![Arc::new(ids), Arc::new(names)])?;
        Ok(Box::new(std::iter::once(batch.project(projection).map_err(Into::into))))
    }
    fn statistics(&self) -> kiln::datasource::provider::ProviderStatistics {
        kiln::datasource::provider::ProviderStatistics { rows: Some(self.n as u64), bytes: self.bytes }
    }
}

fn people(n: i32, parts: usize, bytes: Option<u64>) -> Arc<People> {
    Arc::new(People { n, parts, bytes, scans: Default::default() })
}

// A TableProvider: each partition scanned once with the columns the query reads and its simple
// filters (kiln re-checks them), its types converted (LargeUtf8 read as string), its statistics
// choosing the join strategy as a table's size does in Spark (broadcast under
// spark.sql.autoBroadcastJoinThreshold). Expected rows are computed here from the same rule
// the provider follows.
#[test]
fn table_provider() {
    let s = Session::builder().config("spark.sql.autoBroadcastJoinThreshold", "10MB").config("spark.sql.adaptive.enabled", "false").build().unwrap();
    let host = people(100, 3, None);
    s.register_table("people", host.clone()).unwrap();
    assert_eq!(s.table("people").unwrap().schema_string(), "root\n |-- id: integer (nullable = false)\n |-- name: string (nullable = true)\n");
    let q = s.sql("SELECT name FROM people WHERE id > 90 AND name IS NOT NULL").unwrap();
    let want: Vec<String> = (91..100).filter(|i| i % 4 != 0).map(|i| format!("p{i}")).collect();
    let mut got = rows(&q)[1..].to_vec();
    got.sort();
    assert_eq!(got, want);
    let scans = host.scans.lock().unwrap().clone();
    assert_eq!(scans.iter().map(|s| s.2).collect::<std::collections::BTreeSet<_>>(), [0, 1, 2].into(), "each partition once: {scans:?}");
    for (projection, filters, _) in &scans {
        assert_eq!(projection, &[0, 1]);
        assert!(filters.contains(&"GreaterThan(id,90)".to_string()) && filters.contains(&"IsNotNull(name)".to_string()), "{filters:?}");
    }
    let plan = q.explain_string(kiln::ExplainMode::Simple).unwrap();
    assert!(plan.contains("PushedFilters: [") && plan.contains("GreaterThan(id,90)"), "{plan}");
    // count(*) reads one column; the DataFrame API reads the table too.
    host.scans.lock().unwrap().clear();
    assert_eq!(s.table("people").unwrap().count().unwrap(), 100);
    assert!(host.scans.lock().unwrap().iter().all(|(p, _, _)| p.len() == 1));
    // Statistics: a small table is broadcast, a large one is not.
    s.set_conf("spark.sql.autoBroadcastJoinThreshold", "100KB").unwrap();
    s.register_batches("r", vec![batch(vec![("id", Arc::new(Int32Array::from_iter_values(0..200_000)) as ArrayRef)])]).unwrap();
    let join = "SELECT count(*) FROM r JOIN people p ON r.id = p.id";
    s.register_table("people", people(100, 3, Some(2_000))).unwrap();
    let small = s.sql(join).unwrap();
    let plan = small.explain_string(kiln::ExplainMode::Simple).unwrap();
    assert!(plan.contains("BroadcastHashJoin") && plan.contains("BroadcastExchange") && plan.contains("BuildRight"), "{plan}");
    assert_eq!(rows(&small)[1], "100");
    s.register_table("people", people(100, 3, Some(1 << 40))).unwrap();
    let large = s.sql(join).unwrap();
    assert!(large.explain_string(kiln::ExplainMode::Simple).unwrap().contains("SortMergeJoin"), "{}", large.explain_string(kiln::ExplainMode::Simple).unwrap());
    assert_eq!(rows(&large)[1], "100");
    // A type Spark lacks is refused at registration; a provider that breaks its contract or
    // panics fails the query, naming it.
    struct Bad(bool);
    impl kiln::TableProvider for Bad {
        fn schema(&self) -> kiln::arrow::datatypes::SchemaRef {
            let t = if self.0 { DataType::Int32 } else { DataType::Time32(kiln::arrow::datatypes::TimeUnit::Second) };
            Arc::new(kiln::arrow::datatypes::Schema::new(vec![kiln::arrow::datatypes::Field::new("x", t, true)]))
        }
        fn scan(&self, _: &[usize], _: &[kiln::datasource::pushed_filter::PushedFilter], _: usize) -> kiln::Result<kiln::datasource::provider::ProvidedBatches> {
            panic!("provider went boom")
        }
    }
    assert_eq!(s.register_table("bad", Arc::new(Bad(false))).unwrap_err().error_class(), Some("UNSUPPORTED_ARROWTYPE"));
    s.register_table("bad", Arc::new(Bad(true))).unwrap();
    let err = s.sql("SELECT * FROM bad").unwrap().collect().unwrap_err();
    assert!(err.to_string().contains("provider went boom"), "{err}");
}

// A table function (UDTF) in FROM, with its arguments' values; Spark's
// UNRESOLVABLE_TABLE_VALUED_FUNCTION for an unknown name.
#[test]
fn table_functions() {
    use kiln::arrow::array::Int64Array;
    let s = Session::new();
    s.register_udtf(kiln::TableFunction::new("repeat_word", |args: &[ScalarValue]| {
        let (ScalarValue::Utf8(word), ScalarValue::Int32(n)) = (&args[0], &args[1]) else {
            return Err(kiln::KilnError::analysis("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE", format!("repeat_word(string, int), got {args:?}")));
        };
        let batch = RecordBatch::try_from_iter([
            ("i", Arc::new(Int64Array::from_iter_values(0..*n as i64)) as ArrayRef),
            ("word", Arc::new(StringArray::from(vec![word.as_str(); *n as usize]))),
        ])?;
        Ok(Arc::new(kiln::MemoryProvider::new(vec![batch])?) as Arc<dyn kiln::TableProvider>)
    }))
    .unwrap();
    assert_eq!(rows(&s.sql("SELECT * FROM repeat_word('hi', 1 + 2) WHERE i > 0 ORDER BY i").unwrap()), ["i,word", "1,hi", "2,hi"]);
    assert_eq!(rows(&s.sql("SELECT t.w, count(*) FROM REPEAT_WORD('x', 4) AS t(n, w) GROUP BY t.w").unwrap()), ["w,count(1)", "x,4"]);
    let joined = s.sql("SELECT a.word, b.word FROM repeat_word('a', 2) a JOIN repeat_word('b', 3) b ON a.i = b.i").unwrap();
    assert_eq!(joined.count().unwrap(), 2);
    let err = s.sql("SELECT * FROM nosuch_fn(1)").unwrap_err();
    assert_eq!(err.error_class(), Some("UNRESOLVABLE_TABLE_VALUED_FUNCTION"));
    assert_eq!(s.sql("SELECT * FROM repeat_word(1, 'x')").unwrap_err().error_class(), Some("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"));
    assert!(s.sql("SELECT * FROM repeat_word('a', rand())").is_err(), "arguments are constants");
}

// The helpers generated from the function registry (src/functions/generated.rs): pyspark 4.3's
// F.left("s", 2), F.levenshtein, F.array_max, F.element_at, F.approx_count_distinct,
// F.named_struct over the same row give 'ki', 3, 3, 2, 1, {1}.
#[test]
fn generated_function_helpers() {
    let s = Session::new();
    let r = s.sql("SELECT 'kitten' AS s, 'sitting' AS t, array(1, 3, 2) AS a").unwrap();
    let out = r
        .select([
            left(col("s"), lit(2)),
            levenshtein(col("s"), col("t")),
            array_max(col("a")),
            element_at(col("a"), lit(3)),
            named_struct([lit("x"), lit(1)]).get_field("x"),
        ])
        .unwrap();
    assert_eq!(rows(&out)[1], "ki,3,3,2,1");
    assert_eq!(rows(&r.agg([approx_count_distinct([col("s")])]).unwrap())[1], "1");
    // The same names as the calls written in SQL.
    let sql = s.sql("SELECT left(s, 2), levenshtein(s, t), array_max(a), element_at(a, 3) FROM (SELECT 'kitten' AS s, 'sitting' AS t, array(1, 3, 2) AS a)").unwrap();
    assert_eq!(out.columns()[..4], sql.columns()[..]);
}

/// Each output partition's `id`s, in the order the partition holds them.
fn partition_ids(df: &DataFrame) -> Vec<Vec<i64>> {
    let parts = df.collect_partitioned().expect("runs");
    parts.iter().map(|p| p.iter().flat_map(|b| int64s(b.column(0))).map(|v| v.expect("id")).collect()).collect()
}

// Spark 4.3 (pyspark, local[1]) over spark.range(10) (one split) and spark.range(0, 12, 1, 4):
//   repartition(3, "id").rdd.glom()       [[3, 6, 7], [0], [1, 2, 4, 5, 8, 9]]
//   repartitionByRange(3, "id")           [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
//   repartition(3)                        3 partitions of 4, 3, 3 rows (which rows: Spark's random start)
//   range(0,12,1,4).coalesce(2)           [[0..5], [6..11]];  coalesce(3): [[0,1,2], [3,4,5], [6..11]];  coalesce(8): 4 partitions
//   repartition("id")                     200 partitions without AQE, 1 with it; repartition(5, "id") 5 with AQE
//   EXPLAIN: Exchange RoundRobinPartitioning(3), REPARTITION_BY_NUM / hashpartitioning(id#0L, 3), REPARTITION_BY_NUM /
//   hashpartitioning(id#0L, 200), REPARTITION_BY_COL / rangepartitioning(id#0L ASC NULLS FIRST, 3), REPARTITION_BY_NUM /
//   Coalesce 2 over *(1) Range (kiln makes no codegen stage of a lone Range); logical: Repartition 3, true / RepartitionByExpression [id#0L], 3 / Repartition 2, false.
//   The hints REPARTITION(3), COALESCE(1), REPARTITION(3, id), REPARTITION(id), REPARTITION_BY_RANGE(3, id) give 3, 1, 3, 1, 3
//   partitions (AQE on); repartition(0) is "requirement failed: Number of partitions (0) must be positive."
#[test]
fn repartition_and_coalesce() {
    for (aqe, codegen) in [("true", "true"), ("false", "false"), ("true", "false"), ("false", "true")] {
        let s = Session::builder().config("spark.sql.adaptive.enabled", aqe).config("spark.sql.codegen.wholeStage", codegen).build().unwrap();
        let one = s.sql("SELECT id FROM range(0, 10, 1, 1)").unwrap();
        let four = s.sql("SELECT id FROM range(0, 12, 1, 4)").unwrap();
        let mode = format!("aqe {aqe}, codegen {codegen}");

        let hashed = one.repartition_by(Some(3), [col("id")]).unwrap();
        assert_eq!(partition_ids(&hashed), [vec![3, 6, 7], vec![0], vec![1, 2, 4, 5, 8, 9]], "{mode}");
        let ranged = one.repartition_by_range(Some(3), [col("id")]).unwrap();
        assert_eq!(partition_ids(&ranged), [vec![0, 1, 2, 3], vec![4, 5, 6], vec![7, 8, 9]], "{mode}");
        let dealt = partition_ids(&one.repartition(3).unwrap());
        let mut sizes: Vec<usize> = dealt.iter().map(Vec::len).collect();
        sizes.sort();
        assert_eq!(sizes, [3, 3, 4], "{mode}");
        let mut all: Vec<i64> = dealt.concat();
        all.sort();
        assert_eq!(all, (0..10).collect::<Vec<_>>(), "{mode}");
        assert_eq!(partition_ids(&four.repartition(3).unwrap()).iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 4], "{mode}");

        assert_eq!(partition_ids(&four.coalesce(2).unwrap()), [(0..6).collect::<Vec<_>>(), (6..12).collect()], "{mode}");
        assert_eq!(partition_ids(&four.coalesce(3).unwrap()), [vec![0, 1, 2], vec![3, 4, 5], (6..12).collect()], "{mode}");
        assert_eq!(partition_ids(&four.coalesce(8).unwrap()).len(), 4, "{mode}");

        let by_col = one.repartition_by(None, [col("id")]).unwrap();
        assert_eq!(partition_ids(&by_col).len(), if aqe == "true" { 1 } else { 200 }, "{mode}: AQE coalesces REPARTITION_BY_COL only");
        assert_eq!(partition_ids(&one.repartition_by(Some(5), [col("id")]).unwrap()).len(), 5, "{mode}: never REPARTITION_BY_NUM");

        s.sql("CREATE OR REPLACE TEMP VIEW t AS SELECT id FROM range(0, 10, 1, 1)").unwrap();
        for (hint, n) in [("REPARTITION(3)", 3), ("COALESCE(1)", 1), ("REPARTITION(3, id)", 3), ("REPARTITION_BY_RANGE(3, id)", 3)] {
            let df = s.sql(&format!("SELECT /*+ {hint} */ * FROM t")).unwrap();
            assert_eq!(partition_ids(&df).len(), n, "{mode}: {hint}");
        }
        let by_hint = s.sql("SELECT /*+ REPARTITION(id) */ * FROM t").unwrap();
        assert_eq!(partition_ids(&by_hint).len(), if aqe == "true" { 1 } else { 200 }, "{mode}");
    }

    let s = Session::builder().config("spark.sql.adaptive.enabled", "false").build().unwrap();
    let one = s.sql("SELECT id FROM range(0, 10, 1, 1)").unwrap();
    let plan = |df: DataFrame| df.explain_string(kiln::ExplainMode::Extended).unwrap();
    let dealt = plan(one.repartition(3).unwrap());
    assert!(dealt.contains("\nRepartition 3, true\n") && dealt.contains("\nExchange RoundRobinPartitioning(3), REPARTITION_BY_NUM, [plan_id="), "{dealt}");
    let hashed = plan(one.repartition_by(Some(3), [col("id")]).unwrap());
    assert!(hashed.contains("\nRepartitionByExpression [id#") && hashed.contains("L], 3\n"), "{hashed}");
    assert!(hashed.contains("\nExchange hashpartitioning(id#") && hashed.contains("L, 3), REPARTITION_BY_NUM, [plan_id="), "{hashed}");
    let by_col = plan(one.repartition_by(None, [col("id")]).unwrap());
    assert!(by_col.contains("L, 200), REPARTITION_BY_COL, [plan_id="), "{by_col}");
    let ranged = plan(one.repartition_by_range(Some(3), [col("id")]).unwrap());
    assert!(ranged.contains("L ASC NULLS FIRST], 3\n") && ranged.contains("L ASC NULLS FIRST, 3), REPARTITION_BY_NUM, [plan_id="), "{ranged}");
    let merged = plan(one.coalesce(2).unwrap());
    assert!(merged.contains("\nRepartition 2, false\n") && merged.contains("== Physical Plan ==\nCoalesce 2\n+- ") && merged.contains("Range (0, 10, step=1, splits=1)"), "{merged}");
    let hinted = plan(s.sql("SELECT /*+ REPARTITION(3, id) */ * FROM range(10)").unwrap());
    assert!(hinted.contains("'UnresolvedHint REPARTITION, [3, 'id]") && hinted.contains("L, 3), REPARTITION_BY_NUM"), "{hinted}");

    // Spark's optimizer: a filter goes below a repartition, and a projection's unread columns
    // are pruned under it: `Repartition 3, true +- Filter (id#0L > 3) +- Range` and
    // `RepartitionByExpression [id#7L], 3 +- Range` for range.select(id, id * 2 AS y).repartition(3, id).select(id).
    let pushed = plan(one.repartition(3).unwrap().filter(col("id").gt(3)).unwrap());
    assert!(pushed.contains("== Optimized Logical Plan ==\nRepartition 3, true\n+- Filter (id#"), "{pushed}");
    let narrowed = one.select([col("id"), (col("id") * 2).alias("y")]).unwrap().repartition_by(Some(3), [col("id")]).unwrap().select([col("id")]).unwrap();
    let pruned = plan(narrowed);
    let optimized = pruned.split("== Optimized Logical Plan ==\n").nth(1).unwrap_or_default();
    assert!(optimized.starts_with("RepartitionByExpression [id#") && optimized.contains("], 3\n+- Range (0, 10"), "{pruned}");

    for err in [one.repartition(0).unwrap_err(), one.coalesce(0).unwrap_err(), one.repartition_by(Some(0), [col("id")]).unwrap_err()] {
        assert!(err.to_string().contains("requirement failed: Number of partitions (0) must be positive."), "{err}");
    }
    assert_eq!(s.range(0, 10, 3).unwrap().count().unwrap(), 4);
}

// Issue 40: a host that depends on kiln with `default-features = false` gets none of the
// command-line tool's crates (README, library section).
#[test]
fn a_library_build_leaves_out_the_command_line_crates() {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["tree", "--offline", "--locked", "-p", "kiln", "-e", "normal", "--no-default-features", "--prefix", "none", "--format", "{p}"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let crates: std::collections::BTreeSet<&str> = tree.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(crates.contains("kiln") && crates.contains("arrow") && crates.contains("cranelift-codegen"), "{tree}");
    for tool in ["clap", "sqllogictest", "rustyline", "ctrlc", "indicatif", "plotters", "mimalloc", "tonic"] {
        assert!(!crates.contains(tool), "{tool} in a default-features = false build:\n{tree}");
    }
}
