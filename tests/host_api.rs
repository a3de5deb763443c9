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
