//! `x NOT IN (subquery)` on one column is Spark's null-aware anti join
//! (`ExtractSingleColumnNullAwareAntiJoin`): the physical plan, with adaptive execution on and
//! off, compiled and interpreted, and the shapes that stay nested-loop joins.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use kiln::{ExplainMode, Session};

/// `o(id, k, s)`; `v(k, s)` without NULLs; `vn(k, s)` with one; `e(k, s)` empty.
fn session(confs: &[(&str, &str)]) -> Session {
    let mut b = Session::builder().config("spark.sql.shuffle.partitions", "4");
    for (k, v) in confs {
        b = b.config(*k, *v);
    }
    let s = b.build().expect("session");
    let table = |name: &str, ids: Option<Vec<Option<i32>>>, ks: Vec<Option<i32>>, ss: Vec<Option<&str>>| {
        let mut fields = vec![];
        let mut cols: Vec<ArrayRef> = vec![];
        if let Some(ids) = ids {
            fields.push(Field::new("id", DataType::Int32, false));
            cols.push(Arc::new(Int32Array::from(ids)));
        }
        fields.push(Field::new("k", DataType::Int32, true));
        cols.push(Arc::new(Int32Array::from(ks)));
        fields.push(Field::new("s", DataType::Utf8, true));
        cols.push(Arc::new(StringArray::from(ss)));
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).expect("batch");
        s.register_batches(name, vec![batch]).expect("register");
    };
    table("o", Some(vec![Some(1), Some(2), Some(3), Some(4)]), vec![Some(1), Some(2), None, Some(3)], vec![Some("a"), Some("b"), None, Some("c")]);
    table("v", None, vec![Some(2), Some(2), Some(9)], vec![Some("b"), Some("b"), Some("z")]);
    table("vn", None, vec![Some(2), None], vec![Some("b"), None]);
    table("e", None, vec![], vec![]);
    s
}

fn explain(s: &Session, sql: &str) -> String {
    s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).explain_string(ExplainMode::Simple).expect("explains")
}

/// The sorted ids a query returns, and the plan printed after the run.
fn run(s: &Session, sql: &str) -> (Vec<i32>, String) {
    let df = s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let (batches, metrics) = df.collect_with_metrics().expect("runs");
    assert_eq!(metrics.codegen.stages_fell_back, 0, "{sql}");
    let mut ids: Vec<i32> = batches
        .iter()
        .flat_map(|b| b.column(0).as_any().downcast_ref::<Int32Array>().expect("int ids").iter().flatten().collect::<Vec<_>>())
        .collect();
    ids.sort();
    (ids, df.explain_string(ExplainMode::Simple).expect("explains"))
}

const NOT_IN: &str = "SELECT id FROM o WHERE k NOT IN (SELECT k FROM v)";

fn modes() -> Vec<Vec<(&'static str, &'static str)>> {
    let mut out = vec![];
    for aqe in ["true", "false"] {
        for codegen in ["true", "false"] {
            out.push(vec![("spark.sql.adaptive.enabled", aqe), ("spark.sql.codegen.wholeStage", codegen)]);
        }
    }
    out
}

#[test]
fn not_in_is_a_null_aware_broadcast_hash_join_in_every_mode() {
    for confs in modes() {
        let s = session(&confs);
        let plan = explain(&s, NOT_IN);
        assert!(plan.contains("BroadcastHashJoin [k#"), "{confs:?}\n{plan}");
        assert!(plan.contains("], LeftAnti, BuildRight, true, false\n"), "{confs:?}\n{plan}");
        assert!(plan.contains("BroadcastExchange HashedRelationBroadcastMode(List(cast(input[0, int, true] as bigint)),true), [plan_id="), "{confs:?}\n{plan}");
        assert!(!plan.contains("NestedLoopJoin"), "{confs:?}\n{plan}");
        // The join is fused into a compiled stage when code generation is on.
        if confs.contains(&("spark.sql.codegen.wholeStage", "true")) {
            assert!(plan.contains(") BroadcastHashJoin [k#"), "{confs:?}\n{plan}");
        }
        let (ids, ran) = run(&s, NOT_IN);
        assert_eq!(ids, vec![1, 4], "{confs:?}");
        assert!(ran.contains("LeftAnti, BuildRight, true, false"), "{confs:?}\n{ran}");
        // Strings too.
        let (ids, _) = run(&s, "SELECT id FROM o WHERE s NOT IN (SELECT s FROM v)");
        assert_eq!(ids, vec![1, 4], "{confs:?}");
        // An empty subquery keeps every row, the NULL key's too.
        assert_eq!(run(&s, "SELECT id FROM o WHERE k NOT IN (SELECT k FROM e)").0, vec![1, 2, 3, 4], "{confs:?}");
    }
}

#[test]
fn a_null_in_the_subquery_keeps_no_row_and_adaptive_execution_empties_the_join() {
    let sql = "SELECT id FROM o WHERE k NOT IN (SELECT k FROM vn)";
    for confs in modes() {
        let s = session(&confs);
        let (ids, ran) = run(&s, sql);
        assert!(ids.is_empty(), "{confs:?}");
        if confs.contains(&("spark.sql.adaptive.enabled", "true")) {
            // Spark's AQEPropagateEmptyRelation: the broadcast side has a NULL key.
            let final_plan = &ran[..ran.find("== Initial Plan ==").expect("an initial plan")];
            assert!(final_plan.contains("LocalTableScan <empty>, [id#"), "{ran}");
            assert!(!final_plan.contains("BroadcastHashJoin"), "{ran}");
            assert!(ran[final_plan.len()..].contains("LeftAnti, BuildRight, true, false"), "{ran}");
        }
        let (count, _) = count_of(&s, "SELECT count(*) FROM o WHERE k NOT IN (SELECT k FROM vn)");
        assert_eq!(count, 0, "{confs:?}");
    }
}

fn count_of(s: &Session, sql: &str) -> (i64, String) {
    let df = s.sql(sql).expect("plans");
    let batches = df.collect().expect("runs");
    let c = batches[0].column(0).as_any().downcast_ref::<arrow::array::Int64Array>().expect("a count").value(0);
    (c, df.explain_string(ExplainMode::Simple).expect("explains"))
}

#[test]
fn shapes_that_stay_nested_loop_joins() {
    let s = session(&[]);
    // Two columns (what `(k, s) NOT IN (SELECT k, s ...)` becomes): Spark's JoinSuite too.
    let two = "SELECT id FROM o LEFT ANTI JOIN vn ON (o.k = vn.k OR isnull(o.k = vn.k)) AND (o.s = vn.s OR isnull(o.s = vn.s))";
    let plan = explain(&s, two);
    assert!(plan.contains("BroadcastNestedLoopJoin BuildRight, LeftAnti"), "{plan}");
    // The OR over two different equalities is not the pattern.
    let other = "SELECT id FROM o LEFT ANTI JOIN vn ON o.k = vn.k OR isnull(o.s = vn.s)";
    assert!(explain(&s, other).contains("BroadcastNestedLoopJoin"));
    // Correlated: the correlation is a second conjunct, so not the pattern. An equality
    // correlation is an ordinary hash join key with the NOT IN test as its condition (as in
    // Spark, ExtractEquiJoinKeys); any other is a nested-loop join.
    let correlated = "SELECT id FROM o WHERE k NOT IN (SELECT k FROM v WHERE v.s = o.s)";
    let plan = explain(&s, correlated);
    assert!(plan.contains("BroadcastHashJoin [s#"), "{plan}");
    assert!(plan.contains("LeftAnti, BuildRight, ((k#"), "{plan}");
    assert!(!plan.contains(", true, false"), "{plan}");
    assert_eq!(run(&s, correlated).0, vec![1, 3, 4]);
    let correlated = "SELECT id FROM o WHERE k NOT IN (SELECT k FROM v WHERE v.s > o.s)";
    let plan = explain(&s, correlated);
    assert!(plan.contains("BroadcastNestedLoopJoin BuildRight, LeftAnti"), "{plan}");
    assert_eq!(run(&s, correlated).0, vec![1, 2, 3, 4]);
    // A build side over the broadcast threshold.
    let big = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]);
    let plan = explain(&big, NOT_IN);
    assert!(plan.contains("BroadcastNestedLoopJoin BuildRight, LeftAnti, ((k#"), "{plan}");
    assert_eq!(run(&big, NOT_IN).0, vec![1, 4]);
    // The optimization switched off.
    let off = session(&[("spark.sql.optimizeNullAwareAntiJoin", "false")]);
    assert!(explain(&off, NOT_IN).contains("BroadcastNestedLoopJoin BuildRight, LeftAnti"));
    assert_eq!(run(&off, NOT_IN).0, vec![1, 4]);
}

#[test]
fn the_hand_written_single_column_shape_is_null_aware_unless_nothing_can_be_null() {
    let s = session(&[]);
    let plan = explain(&s, "SELECT id FROM o LEFT ANTI JOIN vn ON o.k = vn.k OR isnull(o.k = vn.k)");
    assert!(plan.contains("LeftAnti, BuildRight, true, false"), "{plan}");
    // The sides swapped in the equality: the keys still go stream side first.
    let plan = explain(&s, "SELECT id FROM o LEFT ANTI JOIN vn ON vn.k = o.k OR isnull(vn.k = o.k)");
    assert!(plan.contains("BroadcastHashJoin [k#"), "{plan}");
    assert!(plan.contains("LeftAnti, BuildRight, true, false"), "{plan}");
    // `id` is never NULL and neither is `id` again: isnull(..) folds away, an ordinary anti join.
    let plan = explain(&s, "SELECT id FROM o WHERE id NOT IN (SELECT id FROM o)");
    assert!(plan.contains("LeftAnti, BuildRight, false, false"), "{plan}");
}
