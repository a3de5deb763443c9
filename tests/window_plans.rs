//! Window functions and set operations planned as Spark plans them, asserted on the plans:
//! `Window` over `Sort` over `Exchange hashpartitioning` (SinglePartition without PARTITION BY),
//! one Window per partitioning and order, and EXCEPT / INTERSECT as anti / semi joins on
//! null-safe keys.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use kiln::Session;

fn session() -> Session {
    let s = Session::builder().config("spark.sql.shuffle.partitions", "4").build().expect("session");
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, true), Field::new("v", DataType::Int32, true)]));
    for name in ["t", "u"] {
        let ks: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("a"), Some("b"), None]));
        let vs: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(2), Some(3), None]));
        s.register_batches(name, vec![RecordBatch::try_new(schema.clone(), vec![ks, vs]).expect("batch")]).expect("register");
    }
    s
}

/// The plan with `#ids` replaced by `#n`.
fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '#' {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('n');
        }
    }
    out
}

fn physical(s: &Session, sql: &str) -> String {
    let df = s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    normalized(&df.physical_plan().tree_string(&s.config().expect("config")))
}

fn optimized(s: &Session, sql: &str) -> String {
    let df = s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    normalized(&df.optimized_plan().tree_string())
}

/// The lines of `plan` in order, each stripped of its tree prefix and stage marker.
fn operators(plan: &str) -> Vec<String> {
    plan.lines()
        .map(|l| l.trim_start_matches([' ', ':', '+', '-']))
        .map(|l| if l.starts_with("*(") { l.split_once(") ").map_or(l, |(_, r)| r) } else { l })
        .map(str::to_string)
        .collect()
}

#[test]
fn a_window_runs_over_a_sort_over_a_hash_exchange_of_its_partition_keys() {
    let s = session();
    let plan = physical(&s, "SELECT k, v, row_number() OVER (PARTITION BY k ORDER BY v) AS rn FROM t");
    let ops = operators(&plan);
    let w = ops.iter().position(|l| l.starts_with("Window [row_number() windowspecdefinition(k#n, v#n ASC NULLS FIRST, specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$())) AS rn#n], [k#n], [v#n ASC NULLS FIRST]"));
    let w = w.unwrap_or_else(|| panic!("no Window line in\n{plan}"));
    assert!(ops[w + 1].starts_with("Sort [k#n ASC NULLS FIRST, v#n ASC NULLS FIRST], false, 0"), "{plan}");
    assert!(ops[w + 2].starts_with("Exchange hashpartitioning(k#n, 4), ENSURE_REQUIREMENTS"), "{plan}");
    // The Sort below the Window is a compiled stage.
    assert!(plan.contains("*(1) Sort"), "{plan}");
}

#[test]
fn a_window_without_partition_keys_gathers_one_partition_and_aggregates_take_the_default_frame() {
    let s = session();
    let plan = physical(&s, "SELECT v, sum(v) OVER (ORDER BY v) AS s, count(*) OVER () AS n FROM t");
    assert!(plan.contains("Exchange SinglePartition"), "{plan}");
    assert!(plan.contains("sum(v#n) windowspecdefinition(v#n ASC NULLS FIRST, specifiedwindowframe(RangeFrame, unboundedpreceding$(), currentrow$())) AS s#nL"), "{plan}");
    assert!(plan.contains("count(1) windowspecdefinition(specifiedwindowframe(RowFrame, unboundedpreceding$(), unboundedfollowing$())) AS n#nL"), "{plan}");
    // Two orders: two Window nodes.
    assert_eq!(plan.matches("Window [").count(), 2, "{plan}");
}

#[test]
fn windows_of_one_partitioning_and_order_share_a_window_node_and_one_sort() {
    let s = session();
    let plan = physical(&s, "SELECT k, lag(v) OVER (PARTITION BY k ORDER BY v), sum(v) OVER (PARTITION BY k ORDER BY v ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t");
    assert_eq!(plan.matches("Window [").count(), 1, "{plan}");
    assert_eq!(plan.matches("Sort [").count(), 1, "{plan}");
    assert!(plan.contains("lag(v#n, -1, null) windowspecdefinition(k#n, v#n ASC NULLS FIRST, specifiedwindowframe(RowFrame, -1, -1))"), "{plan}");
    assert!(plan.contains("specifiedwindowframe(RowFrame, -1, currentrow$())"), "{plan}");
}

#[test]
fn except_and_intersect_are_anti_and_semi_joins_on_null_safe_keys_under_an_aggregate() {
    let s = session();
    let except = optimized(&s, "SELECT k, v FROM t EXCEPT SELECT k, v FROM u");
    assert!(except.starts_with("Aggregate [k#n, v#n], [k#n, v#n]\n+- Join LeftAnti, ((k#n <=> k#n) AND (v#n <=> v#n))"), "{except}");
    let intersect = optimized(&s, "SELECT k FROM t INTERSECT SELECT k FROM u");
    assert!(intersect.contains("Join LeftSemi, (k#n <=> k#n)"), "{intersect}");
    let plan = physical(&s, "SELECT k, v FROM t EXCEPT SELECT k, v FROM u");
    assert!(plan.contains("BroadcastHashJoin [coalesce(k#n, ), isnull(k#n), coalesce(v#n, 0), isnull(v#n)], [coalesce(k#n, ), isnull(k#n), coalesce(v#n, 0), isnull(v#n)], LeftAnti, BuildRight"), "{plan}");
}

#[test]
fn except_all_and_intersect_all_keep_the_right_number_of_copies() {
    let s = session();
    let rows = |sql: &str| -> usize { s.sql(sql).and_then(|df| df.collect()).unwrap_or_else(|e| panic!("{sql}: {e}")).iter().map(|b| b.num_rows()).sum() };
    assert_eq!(rows("SELECT k FROM t EXCEPT ALL SELECT k FROM u WHERE v = 1"), 3);
    assert_eq!(rows("SELECT k FROM t INTERSECT ALL SELECT k FROM u WHERE v <= 2"), 2);
    assert_eq!(rows("SELECT k FROM t INTERSECT SELECT k FROM u WHERE v <= 2"), 1);
    assert_eq!(rows("SELECT k FROM t EXCEPT SELECT k FROM u WHERE v = 1"), 2);
}
