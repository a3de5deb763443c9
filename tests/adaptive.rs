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

/// Registers the committed TPC-H sample tables `tables` in `s`.
fn register_tpch(s: &Session, tables: &[&str]) {
    for t in tables {
        s.register_parquet(t, tpch_dir().join(format!("{t}.parquet"))).expect("registers");
    }
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
        register_tpch(&aqe, &["orders", "lineitem"]);
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
        register_tpch(&off, &["orders", "lineitem"]);
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
    register_tpch(&s, &["orders"]);
    let (_, plan) = run(&s, "SELECT o_orderpriority, count(*) FROM orders GROUP BY o_orderpriority");
    let plan = plan.expect("adaptive");
    assert!(final_part(&plan).contains("AQEShuffleRead coalesced\n"), "{plan}");
    // An error in the first stage (ANSI division by zero) is the query's error.
    let err = s.sql("SELECT o_orderpriority, sum(1 / (o_orderkey - o_orderkey)) FROM orders GROUP BY o_orderpriority").and_then(|df| df.collect());
    assert!(err.is_err_and(|e| e.to_string().to_lowercase().contains("divi")), "division by zero is reported");
    // The session stays usable.
    assert!(s.sql("SELECT count(*) FROM orders").and_then(|df| df.collect()).is_ok());
}

/// `kiln explain --analyze --graph`: one offline file, well-formed SVG, a box per operator,
/// edges labelled with the rows that flowed, the initial plan beside a converted join.
#[test]
fn the_plan_picture_is_self_contained_svg_with_rows_per_edge() {
    let threshold = ("spark.sql.autoBroadcastJoinThreshold", "20KB");
    let s = session(&[threshold]);
    register_tpch(&s, &["orders", "lineitem"]);
    let df = s.sql(Q3_LIKE).expect("plans");
    let html = df.plan_graph(true).expect("draws");
    assert!(html.starts_with("<!DOCTYPE html>") && !html.contains("<script") && !html.contains("src=") && !html.contains("href="), "offline");
    let svg = df.plan_graph(false).expect("draws");
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let class = |n: &roxmltree::Node, c: &str| n.attribute("class") == Some(c);
    let nodes: Vec<_> = doc.descendants().filter(|n| class(n, "node")).collect();
    let titles: Vec<&str> = nodes.iter().filter_map(|n| n.children().find(|c| c.has_tag_name("title")).and_then(|t| t.text())).collect();
    // Final plan and initial plan, side by side: the converted join and the planned one.
    assert!(titles.iter().any(|t| t.starts_with("BroadcastHashJoin")), "{titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("SortMergeJoin")), "{titles:?}");
    assert!(titles.iter().any(|t| t.starts_with("ShuffleQueryStage")), "{titles:?}");
    // Every edge is a line; those out of scans and stages carry the rows that flowed.
    let labels: Vec<String> = doc.descendants().filter(|n| class(n, "rows")).filter_map(|n| n.text()).map(str::to_string).collect();
    assert!(labels.len() >= 4, "{labels:?}");
    let (rows, _) = run(&s, Q3_LIKE);
    let result_rows = format!("{} rows", rows.len());
    assert!(labels.iter().all(|l| l.ends_with(" rows")), "{labels:?}");
    assert!(labels.contains(&"60,175 rows".to_string()) || labels.iter().any(|l| l == &result_rows), "the scan's or the result's rows: {labels:?}");
    let frames = doc.descendants().filter(|n| class(n, "frame")).count();
    assert!(frames >= 3, "codegen and query stages are boxed");
}

/// Re-planning between stages must not defeat the session's stage cache: the second run of a
/// query whose join was converted at run time compiles nothing.
#[test]
fn a_second_adaptive_run_takes_every_stage_from_the_cache() {
    let s = session(&[("spark.sql.autoBroadcastJoinThreshold", "20KB")]);
    register_tpch(&s, &["orders", "lineitem"]);
    let df = s.sql(Q3_LIKE).expect("plans");
    let (_, first) = df.collect_with_metrics().expect("runs");
    let (_, second) = df.collect_with_metrics().expect("runs");
    assert!(first.codegen.cache_misses > 0, "{:?}", first.codegen);
    assert_eq!((second.codegen.cache_misses, second.codegen.compile_micros), (0, 0), "{:?}", second.codegen);
    assert_eq!(second.codegen.cache_hits, first.codegen.cache_hits + first.codegen.cache_misses, "{:?}", second.codegen);
}

/// `t(k)`: `rows` int64 keys `i % modulo`, in batches of 8192.
fn key_table(s: &Session, name: &str, rows: i64, modulo: i64) {
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, false)]));
    let batches = (0..rows)
        .step_by(8192)
        .map(|start| {
            let keys: ArrayRef = Arc::new(Int64Array::from_iter_values((start..(start + 8192).min(rows)).map(|i| i % modulo)));
            RecordBatch::try_new(schema.clone(), vec![keys]).expect("batch")
        })
        .collect();
    s.register_batches(name, batches).expect("registers");
}

#[test]
fn a_join_both_of_whose_sides_ran_converts_only_with_a_cache_sized_build_side() {
    // The smaller side ends over half the threshold, so the join waits for the other side; once
    // both are shuffled, a conversion saves only the sorts: 100k build rows convert, 200k do not.
    for (small, converts) in [(100_000i64, true), (200_000, false)] {
        let threshold = (small * 8 * 3 / 2).to_string();
        let confs = [("spark.sql.autoBroadcastJoinThreshold", "1KB"), ("spark.sql.adaptive.autoBroadcastJoinThreshold", threshold.as_str())];
        let aqe = session(&confs);
        let off = session(&[confs[0], ("spark.sql.adaptive.enabled", "false")]);
        for s in [&aqe, &off] {
            key_table(s, "small", small, small);
            key_table(s, "big", 600_000, small);
        }
        let sql = "SELECT count(*) FROM small JOIN big ON small.k = big.k";
        let (rows, plan) = run(&aqe, sql);
        let plan = plan.expect("ran adaptively");
        let fin = final_part(&plan);
        assert_eq!(fin.contains("BroadcastHashJoin"), converts, "{small} build rows:\n{plan}");
        assert_eq!(fin.contains("SortMergeJoin"), !converts, "{small} build rows:\n{plan}");
        assert_eq!(rows, run(&off, sql).0);
        assert_eq!(rows, vec!["600000".to_string()]);
    }
}

/// Whether some `Exchange` in `plan` reads `table`'s scan directly (through Filters and
/// Projects only): a shuffle of the whole table.
fn shuffles_scan_of(plan: &str, table: &str) -> bool {
    let lines: Vec<&str> = plan.lines().collect();
    lines.iter().enumerate().any(|(i, l)| {
        l.contains("Exchange hashpartitioning")
            && lines[i + 1..].iter().find(|n| !n.contains(" Filter ") && !n.contains(" Project ") && !n.contains("ShuffleQueryStage")).is_some_and(|n| n.contains(&format!(".{table}[")))
    })
}

#[test]
fn the_smaller_side_runs_first_so_a_join_converted_to_broadcast_never_shuffles_the_large_table() {
    // TPC-H Q18's shape: the IN-subquery's semi join leaves a few orders, so the join with
    // lineitem becomes a broadcast join. Run first (its inputs are smaller in memory than
    // lineitem's decoded columns, though lineitem's compressed file share is not), the semi
    // join's side decides that before lineitem's shuffle would start, and lineitem streams
    // unshuffled into the broadcast join.
    let sql = "SELECT c_name, o_orderkey, sum(l_quantity) FROM customer, orders, lineitem
        WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING sum(l_quantity) > 300)
        AND c_custkey = o_custkey AND o_orderkey = l_orderkey GROUP BY c_name, o_orderkey";
    for codegen in ["true", "false"] {
        let s = session(&[("spark.sql.autoBroadcastJoinThreshold", "1KB"), ("spark.sql.codegen.wholeStage", codegen)]);
        register_tpch(&s, &["customer", "orders", "lineitem"]);
        let initial = s.sql(sql).and_then(|df| df.explain_string(ExplainMode::Simple)).expect("explains");
        assert!(shuffles_scan_of(&initial, "lineitem"), "planned with lineitem shuffled for a sort-merge join:\n{initial}");
        let (rows, plan) = run(&s, sql);
        let plan = plan.expect("ran adaptively");
        let fin = final_part(&plan);
        assert!(fin.contains("BroadcastHashJoin [o_orderkey"), "converted:\n{plan}");
        assert!(!shuffles_scan_of(fin, "lineitem"), "lineitem was shuffled:\n{plan}");
        assert!(!rows.is_empty());
        let off = session(&[("spark.sql.codegen.wholeStage", codegen), ("spark.sql.adaptive.enabled", "false")]);
        register_tpch(&off, &["customer", "orders", "lineitem"]);
        assert_eq!(rows, run(&off, sql).0, "codegen {codegen}");
    }
}

#[test]
fn a_filtered_side_runs_first_so_its_join_becomes_a_broadcast_before_the_other_side_shuffles() {
    // TPC-H Q10's shape: customers against three months of orders. Unfiltered, the orders
    // columns read are more bytes than customer's, but the date range's two comparisons count
    // the orders side at a quarter: it runs first, turns out small, and the join is broadcast
    // before customer is shuffled.
    let sql = "SELECT c_custkey, c_name, c_comment, count(*) AS n, sum(o_totalprice) AS total FROM customer JOIN orders ON c_custkey = o_custkey
        WHERE o_orderdate >= DATE '1993-10-01' AND o_orderdate < DATE '1994-01-01'
        GROUP BY c_custkey, c_name, c_comment";
    // Sort-merge join at planning; broadcast at run time under 64 KB (the orders side's ~600 rows).
    let s = session(&[("spark.sql.autoBroadcastJoinThreshold", "1KB"), ("spark.sql.adaptive.autoBroadcastJoinThreshold", "64KB")]);
    register_tpch(&s, &["customer", "orders"]);
    let initial = s.sql(sql).and_then(|df| df.explain_string(ExplainMode::Simple)).expect("explains");
    assert!(shuffles_scan_of(&initial, "customer"), "planned with customer shuffled for a sort-merge join:\n{initial}");
    let (rows, plan) = run(&s, sql);
    let plan = plan.expect("ran adaptively");
    let fin = final_part(&plan);
    assert!(fin.contains("BroadcastHashJoin [c_custkey"), "converted:\n{plan}");
    assert!(!shuffles_scan_of(fin, "customer"), "customer was shuffled:\n{plan}");
    assert!(!rows.is_empty());
    let off = session(&[("spark.sql.adaptive.enabled", "false")]);
    register_tpch(&off, &["customer", "orders"]);
    assert_eq!(rows, run(&off, sql).0);
}
