//! Spark's `InjectRuntimeFilter`: a selective filter on one side of a join becomes a Bloom
//! filter (`might_contain(scalar-subquery, xxhash64(key))`) on the other side's scan when that
//! side is big and shuffled. Asserted on the optimized plan, where it must and must not fire,
//! and on the rows: the same with and without the filter, compiled (the probe in generated
//! code, no stage falling back) and interpreted, AQE on and off.

use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use arrow::util::display::array_value_to_string;
use kiln::{ExplainMode, Session};

/// `big(k bigint, ki int, d date, v int)`: 40,000 rows over 2,000 keys, some keys NULL;
/// `dim(k bigint, ki int, d date, tag string)`: one row per key, 1 in 50 tagged 'x'.
fn session(confs: &[(&str, &str)]) -> Session {
    let mut b = Session::builder().config("spark.sql.shuffle.partitions", "4").config("spark.sql.autoBroadcastJoinThreshold", "-1");
    for (k, v) in confs {
        b = b.config(*k, *v);
    }
    let s = b.build().expect("session");
    let n = 40_000i64;
    let key = |i: i64| (i % 13 != 5).then_some((i * 7919) % 2000);
    let big = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, true),
            Field::new("ki", DataType::Int32, true),
            Field::new("d", DataType::Date32, true),
            Field::new("v", DataType::Int32, false),
        ])),
        vec![
            Arc::new((0..n).map(key).collect::<Int64Array>()) as ArrayRef,
            Arc::new((0..n).map(|i| key(i).map(|k| k as i32 - 1000)).collect::<Int32Array>()),
            Arc::new((0..n).map(|i| key(i).map(|k| k as i32 + 18_000)).collect::<Date32Array>()),
            Arc::new((0..n).map(|i| (i % 100) as i32).collect::<Int32Array>()),
        ],
    )
    .expect("big");
    let dim = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int64, false),
            Field::new("ki", DataType::Int32, false),
            Field::new("d", DataType::Date32, false),
            Field::new("tag", DataType::Utf8, false),
        ])),
        vec![
            Arc::new((0..2000i64).collect::<Int64Array>()) as ArrayRef,
            Arc::new((0..2000).map(|k| k - 1000).collect::<Int32Array>()),
            Arc::new(Date32Array::from((0..2000).map(|k| k + 18_000).collect::<Vec<i32>>())),
            Arc::new(StringArray::from((0..2000).map(|k| if k % 50 == 7 { "x" } else { "y" }).collect::<Vec<_>>())),
        ],
    )
    .expect("dim");
    // Several batches, so partitions and morsels vary.
    let bigs: Vec<RecordBatch> = (0..8).map(|i| big.slice(i * 5000, 5000)).collect();
    s.register_batches("big", bigs).expect("register big");
    s.register_batches("dim", vec![dim]).expect("register dim");
    s
}

/// Settings under which the rule fires on these small tables.
const ON: [(&str, &str); 1] = [("spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold", "1")];

fn join_on(col: &str) -> String {
    format!("SELECT dim.{col}, a.total FROM dim JOIN (SELECT {col}, sum(v) AS total, count(*) AS n FROM big GROUP BY {col}) a ON dim.{col} = a.{col} WHERE dim.tag = 'x'")
}

fn optimized(s: &Session, sql: &str) -> String {
    s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).optimized_plan().tree_string()
}

/// Sorted rows as text, and the plan printed after the run.
fn run(s: &Session, sql: &str) -> (Vec<String>, String) {
    let df = s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let (batches, metrics) = df.collect_with_metrics().unwrap_or_else(|e| panic!("{sql}: {e}"));
    assert_eq!(metrics.codegen.stages_fell_back, 0, "{sql}");
    let mut rows: Vec<String> = batches
        .iter()
        .flat_map(|b| {
            (0..b.num_rows())
                .map(|i| b.columns().iter().map(|c| array_value_to_string(c, i).unwrap_or_default()).collect::<Vec<_>>().join(","))
                .collect::<Vec<_>>()
        })
        .collect();
    rows.sort();
    (rows, df.explain_string(ExplainMode::Simple).expect("explains"))
}

#[test]
fn a_selective_join_side_becomes_a_bloom_filter_on_the_aggregated_scan() {
    let plan = optimized(&session(&ON), &join_on("k"));
    let filter = plan.lines().position(|l| l.contains("might_contain(scalar-subquery#") && l.contains("xxhash64(k#")).unwrap_or_else(|| panic!("no runtime filter:\n{plan}"));
    // The filter reached big's scan, below the aggregate: the next line under it (past the
    // subquery's lines) is the relation.
    let aggregate = plan.lines().position(|l| l.contains("Aggregate [k#")).unwrap_or_else(|| panic!("{plan}"));
    assert!(aggregate < filter, "{plan}");
    assert!(plan.contains("Aggregate [bloom_filter_agg(xxhash64(k#"), "{plan}");
    assert!(plan.contains(", 0, 0) AS bloomFilter#"), "{plan}");
    // The Bloom filter is built from dim's selective filter only.
    let subquery: Vec<&str> = plan.lines().filter(|l| l.trim_start().starts_with(':')).collect();
    assert!(subquery.iter().any(|l| l.contains("(tag#") && l.contains("= x)")), "{plan}");
    assert!(!subquery.iter().any(|l| l.contains("Relation") && l.contains("big")), "{plan}");
    let relation = plan.lines().skip(filter + 1).find(|l| !l.trim_start().starts_with(':')).unwrap_or_default();
    assert!(relation.contains("Relation") && relation.contains("big["), "{plan}");
}

#[test]
fn no_bloom_filter_where_spark_plants_none() {
    let cases = [
        // Small application side (the default 64MB threshold).
        (session(&[]), join_on("k")),
        // No selective filter on the other side.
        (session(&ON), "SELECT dim.k, a.total FROM dim JOIN (SELECT k, sum(v) AS total FROM big GROUP BY k) a ON dim.k = a.k".to_string()),
        // The filtered side is the preserved side of an outer join.
        (session(&ON), "SELECT dim.k, a.total FROM dim RIGHT JOIN (SELECT k, sum(v) AS total FROM big GROUP BY k) a ON dim.k = a.k AND dim.tag = 'x'".to_string()),
        // Switched off.
        (session(&[ON[0], ("spark.sql.optimizer.runtime.bloomFilter.enabled", "false")]), join_on("k")),
    ];
    for (s, sql) in cases {
        let plan = optimized(&s, &sql);
        assert!(!plan.contains("might_contain"), "{sql}\n{plan}");
    }
}

#[test]
fn no_bloom_filter_on_a_scan_under_a_64th_of_the_threshold() {
    // The aggregated side reads big, but its key comes from `tiny` (20 rows): a filter there
    // would prune nothing the join does not. Under a threshold that big passes and tiny is under
    // a 64th of, no filter; under a threshold of 1 byte (a 64th of it 0), the filter is planted.
    let sql = "SELECT dim.k, a.total FROM dim JOIN (SELECT t.k, sum(b.v) AS total FROM big b JOIN tiny t ON b.k = t.k GROUP BY t.k) a ON dim.k = a.k WHERE dim.tag = 'x'";
    let with_tiny = |threshold: &str| {
        let s = session(&[("spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold", threshold)]);
        let tiny = RecordBatch::try_new(Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)])), vec![Arc::new((0..20i64).collect::<Int64Array>()) as ArrayRef]).expect("tiny");
        s.register_batches("tiny", vec![tiny]).expect("register tiny");
        optimized(&s, sql)
    };
    let planted = with_tiny("1");
    assert!(planted.contains("might_contain"), "{planted}");
    let plan = with_tiny("64k");
    assert!(!plan.contains("might_contain"), "{plan}");
}

#[test]
fn rows_are_the_same_with_the_filter_in_every_mode_and_key_type() {
    for col in ["k", "ki", "d"] {
        let sql = join_on(&col);
        let (expected, _) = run(&session(&[("spark.sql.codegen.wholeStage", "false")]), &sql);
        assert_eq!(expected.len(), 40, "{sql}: {expected:?}");
        for aqe in ["true", "false"] {
            for codegen in ["true", "false"] {
                let s = session(&[ON[0], ("spark.sql.adaptive.enabled", aqe), ("spark.sql.codegen.wholeStage", codegen)]);
                let (rows, plan) = run(&s, &sql);
                assert!(plan.contains("might_contain(Subquery scalar-subquery#"), "{sql}\n{plan}");
                assert_eq!(rows, expected, "{sql} aqe={aqe} codegen={codegen}\n{plan}");
                // Generated code probes the filter: the Filter holding it is in a stage.
                if codegen == "true" {
                    assert!(plan.lines().any(|l| l.contains(") Filter (") && l.contains("might_contain(")), "{sql}\n{plan}");
                }
            }
        }
    }
}

#[test]
fn an_empty_creation_side_keeps_no_row() {
    let sql = "SELECT dim.k, a.total FROM dim JOIN (SELECT k, sum(v) AS total FROM big GROUP BY k) a ON dim.k = a.k WHERE dim.tag = 'none'";
    for codegen in ["true", "false"] {
        let (rows, plan) = run(&session(&[ON[0], ("spark.sql.codegen.wholeStage", codegen)]), sql);
        assert!(plan.contains("might_contain("), "{plan}");
        assert!(rows.is_empty(), "{rows:?}");
    }
}

#[test]
fn explain_codegen_before_the_run_says_the_filtered_stage_compiles_when_it_runs() {
    let s = session(&[ON[0], ("spark.sql.adaptive.enabled", "false")]);
    let df = s.sql(&join_on("k")).expect("plans");
    let text = df.explain_string(ExplainMode::Codegen).expect("explains");
    let header = text.lines().find(|l| l.contains("Bloom filter scalar-subquery#")).unwrap_or_else(|| panic!("no stage reading the filter:\n{text}"));
    assert!(header.starts_with("== Subtree ") && header.contains("(compiled when the query runs: "), "{header}");
    assert!(!text.contains("bug in kiln"), "{text}");
    // Run, the same stage compiles.
    let (_, metrics) = df.collect_with_metrics().expect("runs");
    assert_eq!((metrics.codegen.stages_fell_back, metrics.codegen.stages_compiled > 0), (0, true));
}

#[test]
fn a_query_planned_again_reuses_the_code_reading_its_rebuilt_filter() {
    let s = session(&[ON[0], ("spark.sql.adaptive.enabled", "false")]);
    let sql = join_on("k");
    let (expected, _) = run(&s, &sql);
    let misses = || s.stage_cache().hits_and_misses().1;
    // Planned again: its filter is built again, at another address, with the same bits.
    let before = misses();
    assert_eq!(run(&s, &sql).0, expected);
    assert_eq!(misses(), before, "a stage compiled again");
    // Other bits: the stage reading the filter compiles again and keeps the rows right.
    let other = sql.replace("tag = 'x'", "tag = 'y'");
    let (rows, _) = run(&s, &other);
    assert!(misses() > before, "the filter's stage must compile for its new bits");
    let (expected_other, _) = run(&session(&[("spark.sql.codegen.wholeStage", "false")]), &other);
    assert_eq!(rows, expected_other);
}
