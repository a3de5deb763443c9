//! Adaptive query execution: joins converted at run time, skewed partitions split, and the
//! same rows with AQE on and off, compiled and interpreted.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use kiln::{ExplainMode, Session};

fn tpch_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/tpch")
}

fn session(confs: &[(&str, &str)]) -> Session {
    let mut b = Session::builder().config("spark.sql.shuffle.partitions", "8");
    for (k, v) in confs {
        b = b.config(*k, *v);
    }
    b.build().expect("valid settings")
}

/// The rows of a query as sorted lines, with its final plan text (None: not adaptive).
fn run(s: &Session, sql: &str) -> (Vec<String>, Option<String>) {
    let df = s.sql(sql).expect("plans");
    let batches = df.collect().expect("runs");
    let mut rows: Vec<String> = kiln::format::result_csv(&df.schema(), &batches).lines().skip(1).map(str::to_string).collect();
    rows.sort();
    let plan = df.final_plan().map(|_| df.explain_string(ExplainMode::Simple).expect("explains"));
    (rows, plan)
}

fn final_part(text: &str) -> &str {
    let end = text.find("== Initial Plan ==").unwrap_or(text.len());
    &text[..end]
}

const Q3_LIKE: &str = "SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate
    FROM orders JOIN lineitem ON l_orderkey = o_orderkey
    WHERE o_orderdate < DATE '1992-03-01' AND l_shipdate > DATE '1992-01-15'
    GROUP BY l_orderkey, o_orderdate ORDER BY revenue DESC, l_orderkey";

#[test]
fn a_sort_merge_join_whose_side_turns_out_small_runs_as_a_broadcast_join() {
    // Planned with the file sizes (orders is ~600 KB, its two columns ~60 KB): a sort-merge join. At run time the
    // filtered orders are a few KB, under the threshold: a broadcast hash join.
    let threshold = ("spark.sql.autoBroadcastJoinThreshold", "20KB");
    for codegen in ["true", "false"] {
        let aqe = session(&[threshold, ("spark.sql.codegen.wholeStage", codegen)]);
        for t in ["orders", "lineitem"] {
            aqe.register_parquet(t, tpch_dir().join(format!("{t}.parquet"))).expect("registers");
        }
        let df = aqe.sql(Q3_LIKE).expect("plans");
        let initial = df.explain_string(ExplainMode::Simple).expect("explains");
        assert!(initial.contains("SortMergeJoin"), "planned as a sort-merge join:\n{initial}");
        let (rows, plan) = run(&aqe, Q3_LIKE);
        let plan = plan.expect("ran adaptively");
        let fin = final_part(&plan);
        assert!(plan.starts_with("== Physical Plan ==\nAdaptiveSparkPlan isFinalPlan=true\n+- == Final Plan ==\n   ResultQueryStage"), "{plan}");
        assert!(!fin.contains("SortMergeJoin") && fin.contains("BroadcastHashJoin [o_orderkey"), "converted:\n{plan}");
        assert!(fin.contains("BroadcastQueryStage") && fin.contains("AQEShuffleRead local"), "{plan}");
        assert!(plan[plan.find("== Initial Plan ==").expect("initial")..].contains("SortMergeJoin"), "{plan}");
        assert!(!rows.is_empty());

        let off = session(&[threshold, ("spark.sql.codegen.wholeStage", codegen), ("spark.sql.adaptive.enabled", "false")]);
        for t in ["orders", "lineitem"] {
            off.register_parquet(t, tpch_dir().join(format!("{t}.parquet"))).expect("registers");
        }
        let (expected, none) = run(&off, Q3_LIKE);
        assert!(none.is_none(), "AQE off runs the plan as planned");
        assert_eq!(rows, expected, "codegen {codegen}");
    }
}

/// 200,000 rows, 80 % of them with key 0; and a dimension with one row per key.
fn skewed_tables(s: &Session) {
    let n = 200_000i64;
    let keys: Vec<i64> = (0..n).map(|i| if i % 10 < 8 { 0 } else { i % 5000 }).collect();
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false), Field::new("v", DataType::Int64, false)]));
    let fact: Vec<RecordBatch> = keys
        .chunks(8192)
        .enumerate()
        .map(|(c, ks)| {
            let v: Vec<i64> = (0..ks.len() as i64).map(|i| c as i64 * 8192 + i).collect();
            let cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ks.to_vec())), Arc::new(Int64Array::from(v))];
            RecordBatch::try_new(schema.clone(), cols).expect("batch")
        })
        .collect();
    s.register_batches("fact", fact).expect("registers");
    let dim_schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false), Field::new("w", DataType::Int64, false)]));
    let ks: Vec<i64> = (0..5000).collect();
    let ws: Vec<i64> = ks.iter().map(|k| k * 3).collect();
    let cols: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(ks)), Arc::new(Int64Array::from(ws))];
    s.register_batches("dim", vec![RecordBatch::try_new(dim_schema, cols).expect("batch")]).expect("registers");
}

const SKEW: &str = "SELECT f.k = 0 AS hot, count(*) AS n, sum(v + w) AS total FROM fact f JOIN dim d ON f.k = d.k GROUP BY f.k = 0";

#[test]
fn a_hot_key_partition_is_split_and_the_rows_stay_the_same() {
    let skew = [
        ("spark.sql.autoBroadcastJoinThreshold", "-1"),
        ("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "64KB"),
        ("spark.sql.adaptive.advisoryPartitionSizeInBytes", "64KB"),
    ];
    for codegen in ["true", "false"] {
        let mut confs = skew.to_vec();
        confs.push(("spark.sql.codegen.wholeStage", codegen));
        let aqe = session(&confs);
        skewed_tables(&aqe);
        let (rows, plan) = run(&aqe, SKEW);
        let plan = plan.expect("ran adaptively");
        let fin = final_part(&plan);
        assert!(fin.contains("SortMergeJoin"), "{plan}");
        assert!(fin.contains("AQEShuffleRead coalesced and skewed") || fin.contains("AQEShuffleRead skewed"), "split:\n{plan}");
        confs.push(("spark.sql.adaptive.enabled", "false"));
        let off = session(&confs);
        skewed_tables(&off);
        let (expected, _) = run(&off, SKEW);
        assert_eq!(rows, expected, "codegen {codegen}");
        // 160,000 hot rows, each joining key 0 (w = 0).
        assert!(rows.iter().any(|r| r.starts_with("true,160000,")), "{rows:?}");
    }
}

#[test]
fn small_shuffles_are_coalesced_and_a_failing_stage_stops_the_query() {
    let s = session(&[]);
    s.register_parquet("orders", tpch_dir().join("orders.parquet")).expect("registers");
    let (_, plan) = run(&s, "SELECT o_orderpriority, count(*) FROM orders GROUP BY o_orderpriority");
    let plan = plan.expect("adaptive");
    assert!(final_part(&plan).contains("AQEShuffleRead coalesced\n"), "{plan}");
    // An error in the first stage (ANSI division by zero) is the query's error.
    let err = s.sql("SELECT o_orderpriority, sum(1 / (o_orderkey - o_orderkey)) FROM orders GROUP BY o_orderpriority").and_then(|df| df.collect());
    assert!(err.is_err_and(|e| e.to_string().to_lowercase().contains("divi")), "division by zero is reported");
    // The session stays usable.
    assert!(s.sql("SELECT count(*) FROM orders").and_then(|df| df.collect()).is_ok());
}
