//! JoinSelection: the operator each hint and each size picks, asserted on the physical plan,
//! and the warnings for hints that cannot be honoured.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use kiln::physical::estimate_size;
use kiln::plan::LogicalPlan;
use kiln::Session;

fn session(confs: &[(&str, &str)]) -> Session {
    let mut b = Session::builder().config("spark.sql.shuffle.partitions", "4");
    for (k, v) in confs {
        b = b.config(*k, *v);
    }
    let s = b.build().expect("session");
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, true), Field::new("v", DataType::Utf8, true)]));
    for name in ["l", "r"] {
        let ids: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), Some(2), None]));
        let vs: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), Some("b"), None]));
        let batch = RecordBatch::try_new(schema.clone(), vec![ids, vs]).expect("batch");
        s.register_batches(name, vec![batch]).expect("register");
    }
    s
}

/// The physical plan's tree string.
fn physical(s: &Session, sql: &str) -> String {
    let df = s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    df.physical_plan().tree_string(&s.config().expect("config"))
}

/// The join operator's line of the plan (the first line naming a join).
fn join_line(plan: &str) -> String {
    let joins = ["BroadcastHashJoin", "ShuffledHashJoin", "SortMergeJoin", "BroadcastNestedLoopJoin", "CartesianProduct"];
    plan.lines()
        .map(|l| l.trim_start_matches([' ', ':', '+', '-']))
        .map(|l| if l.starts_with("*(") { l.split_once(") ").map_or(l, |(_, r)| r) } else { l })
        .find(|l| joins.iter().any(|j| l.starts_with(j)))
        .unwrap_or_else(|| panic!("no join in\n{plan}"))
        .to_string()
}

fn join_of(s: &Session, sql: &str) -> String {
    let line = join_line(&physical(s, sql));
    line.split([' ', ',']).next().expect("name").to_string()
}

const EQUI: &str = "SELECT l.id, r.v FROM l JOIN r ON l.id = r.id";

#[test]
fn each_hint_picks_its_strategy() {
    // Broadcast disabled, so nothing is chosen by size.
    let s = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]);
    let hinted = |h: &str| EQUI.replacen("SELECT ", &format!("SELECT /*+ {h} */ "), 1);
    assert_eq!(join_of(&s, EQUI), "SortMergeJoin");
    for (hint, op) in [
        ("BROADCAST(r)", "BroadcastHashJoin"),
        ("BROADCASTJOIN(r)", "BroadcastHashJoin"),
        ("MAPJOIN(r)", "BroadcastHashJoin"),
        ("SHUFFLE_HASH(r)", "ShuffledHashJoin"),
        ("MERGE(r)", "SortMergeJoin"),
        ("SHUFFLE_MERGE(r)", "SortMergeJoin"),
        ("MERGEJOIN(r)", "SortMergeJoin"),
        ("SHUFFLE_REPLICATE_NL(r)", "CartesianProduct"),
    ] {
        assert_eq!(join_of(&s, &hinted(hint)), op, "{hint}");
    }
    assert!(join_line(&physical(&s, &hinted("BROADCAST(r)"))).contains("BuildRight"));
    assert!(join_line(&physical(&s, &hinted("BROADCAST(l)"))).contains("BuildLeft"));
    assert!(join_line(&physical(&s, &hinted("SHUFFLE_HASH(l)"))).contains("BuildLeft"));
    // BROADCAST wins over MERGE when the two sides carry different hints (Spark's order).
    assert_eq!(join_of(&s, &hinted("MERGE(l), BROADCAST(r)")), "BroadcastHashJoin");
    // MERGE wins over SHUFFLE_HASH.
    assert_eq!(join_of(&s, &hinted("SHUFFLE_HASH(l), MERGE(r)")), "SortMergeJoin");
}

/// `estimate_size` of the two inputs of the first join in the optimized plan.
fn join_input_sizes(plan: &LogicalPlan) -> Option<(u64, u64)> {
    if let LogicalPlan::Join { left, right, .. } = plan {
        return Some((estimate_size(left), estimate_size(right)));
    }
    plan.children().into_iter().find_map(|c| join_input_sizes(c))
}

#[test]
fn sizes_pick_broadcast_then_sort_merge_then_shuffled_hash() {
    let small = session(&[]);
    assert_eq!(join_of(&small, EQUI), "BroadcastHashJoin");
    let none = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]);
    assert_eq!(join_of(&none, EQUI), "SortMergeJoin");

    // A big left side (many rows) against the three-row right side.
    let big = "SELECT l.id FROM (SELECT a.id FROM l a CROSS JOIN l b CROSS JOIN l c CROSS JOIN l d) l JOIN r ON l.id = r.id";
    let (left, right) = join_input_sizes(small.sql(big).expect("plans").optimized_plan()).expect("a join");
    assert!(right.saturating_mul(3) <= left, "right {right} is 3x smaller than left {left}");
    // Too big to broadcast, small enough for a per-partition hash map (4 partitions), 3x smaller.
    let threshold = (right - 1).to_string();
    let conf = |prefer: &'static str| session(&[("spark.sql.autoBroadcastJoinThreshold", &threshold), ("spark.sql.join.preferSortMergeJoin", prefer)]);
    let plan = physical(&conf("false"), big);
    let line = join_line(&plan);
    assert!(line.starts_with("ShuffledHashJoin [id#") && line.ends_with("Inner, BuildRight"), "{plan}");
    assert_eq!(join_of(&conf("true"), big), "SortMergeJoin");
    // Equal sizes: neither side is 3x smaller, so sort-merge even when not preferred.
    assert_eq!(join_of(&conf("false"), EQUI), "SortMergeJoin");
}

#[test]
fn joins_without_equi_keys_are_nested_loop_or_cartesian() {
    let s = session(&[]);
    assert_eq!(join_of(&s, "SELECT l.id, r.id FROM l JOIN r ON l.id < r.id"), "BroadcastNestedLoopJoin");
    let none = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]);
    assert_eq!(join_of(&none, "SELECT l.id, r.id FROM l JOIN r ON l.id < r.id"), "CartesianProduct");
    assert_eq!(join_of(&none, "SELECT l.id, r.id FROM l CROSS JOIN r"), "CartesianProduct");
    assert_eq!(join_of(&none, "SELECT l.id, r.id FROM l LEFT JOIN r ON l.id < r.id"), "BroadcastNestedLoopJoin");
    assert_eq!(join_of(&none, "SELECT /*+ BROADCAST(r) */ l.id, r.id FROM l JOIN r ON l.id < r.id"), "BroadcastNestedLoopJoin");
}

#[test]
fn sort_merge_join_sorts_only_unsorted_children() {
    let s = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]);
    let plan = physical(&s, EQUI);
    assert_eq!(plan.matches("Sort [id#").count(), 2, "{plan}");
    assert!(plan.contains("ASC NULLS FIRST], false, 0"), "{plan}");
    assert_eq!(plan.matches("Exchange hashpartitioning").count(), 2, "{plan}");
    // A second join on the same key reads the first join's sorted output: one more Sort and
    // Exchange (for the new side) only.
    let three = physical(&s, "SELECT l.id FROM l JOIN r ON l.id = r.id JOIN r r2 ON l.id = r2.id");
    assert_eq!(three.matches("SortMergeJoin").count(), 2, "{three}");
    assert_eq!(three.matches("Sort [id#").count(), 3, "{three}");
    assert_eq!(three.matches("Exchange hashpartitioning").count(), 3, "{three}");
    // A left outer join's output stays in left-key order (its null-extended rows in place):
    // the next join on the same key sorts only its new side. A full outer join's does not.
    let one = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1"), ("spark.sql.shuffle.partitions", "1")]);
    for (join, sorts, rows) in [("LEFT", 3, 3), ("RIGHT", 3, 3), ("FULL", 4, 5)] {
        let keep = if join == "RIGHT" { "r" } else { "l" };
        let sql = format!("SELECT l.id, r.id, r2.id FROM l {join} JOIN r ON l.id = r.id {join} JOIN r r2 ON {keep}.id = r2.id");
        let plan = physical(&one, &sql);
        assert_eq!(plan.matches("Sort [id#").count(), sorts, "{sql}\n{plan}");
        let out: usize = one.sql(&sql).expect("plans").collect().expect("runs").iter().map(|b| b.num_rows()).sum();
        assert_eq!(out, rows, "{sql}");
    }
}

#[test]
fn hints_that_cannot_be_honoured_warn() {
    let s = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]);
    let df = s.sql("SELECT /*+ BROADCAST(l) */ l.id FROM l LEFT JOIN r ON l.id = r.id").expect("plans");
    assert_eq!(join_line(&df.physical_plan().tree_string(&s.config().expect("config"))).split(' ').next(), Some("SortMergeJoin"));
    assert_eq!(df.warnings(), vec!["Hint (strategy=broadcast) is not supported in the query: build left for left outer join.".to_string()]);
    let df = s.sql("SELECT /*+ BROADCAST(nope) */ l.id FROM l JOIN r ON l.id = r.id").expect("plans");
    assert_eq!(df.warnings(), vec!["Could not find relation 'nope' specified in hint 'BROADCAST(nope)'.".to_string()]);
    let df = s.sql("SELECT /*+ FASTPLEASE(l) */ l.id FROM l JOIN r ON l.id = r.id").expect("plans");
    assert_eq!(df.warnings(), vec!["Unrecognized hint: FASTPLEASE(l)".to_string()]);
    let df = s.sql("SELECT /*+ MERGE(r) */ l.id FROM l JOIN r ON l.id < r.id").expect("plans");
    assert_eq!(df.warnings(), vec!["Hint (strategy=merge) is not supported in the query: no equi-join keys.".to_string()]);
    let df = s.sql("SELECT /*+ BROADCAST(l) */ id FROM l WHERE id > 1").expect("plans");
    assert_eq!(df.warnings(), vec!["A join hint (strategy=broadcast) is specified but it is not part of a join relation.".to_string()]);
    let df = s.sql("SELECT /*+ BROADCAST(r) */ l.id FROM l JOIN (SELECT id FROM r WHERE id > 1) r ON l.id = r.id").expect("plans");
    assert!(df.warnings().is_empty(), "{:?}", df.warnings());
}

#[test]
fn hints_print_as_spark_prints_them() {
    let s = session(&[]);
    let df = s.sql("SELECT /*+ BROADCAST(r), MERGE(l) */ l.id FROM l JOIN r ON l.id = r.id").expect("plans");
    let parsed = df.plans().parsed.tree_string();
    assert!(parsed.starts_with("'UnresolvedHint BROADCAST, ['r]\n+- 'UnresolvedHint MERGE, ['l]\n"), "{parsed}");
    let analyzed = df.analyzed_plan().tree_string();
    assert!(analyzed.contains("ResolvedHint (strategy=merge)\n") && analyzed.contains("ResolvedHint (strategy=broadcast)\n"), "{analyzed}");
    let optimized = df.optimized_plan().tree_string();
    assert!(optimized.contains(", leftHint=(strategy=merge), rightHint=(strategy=broadcast)\n"), "{optimized}");
    assert!(!optimized.contains("ResolvedHint"), "{optimized}");
}

#[test]
fn a_group_by_on_either_join_key_after_a_shuffled_join_adds_no_exchange() {
    let s = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]);
    for key in ["l.id", "r.id"] {
        for hint in ["MERGE(r)", "SHUFFLE_HASH(r)"] {
            let sql = format!("SELECT /*+ {hint} */ {key}, count(*) FROM l JOIN r ON l.id = r.id GROUP BY {key}");
            let plan = physical(&s, &sql);
            assert_eq!(plan.matches("Exchange hashpartitioning").count(), 2, "{sql}\n{plan}");
        }
    }
    // The null-extended rows of a right outer join are not clustered on the left key: the
    // group-by on it shuffles again (one NULL group, not one per partition).
    let sql = "SELECT /*+ SHUFFLE_HASH(l) */ l.id, count(*) FROM l RIGHT JOIN r ON l.id = r.id GROUP BY l.id";
    let plan = physical(&s, sql);
    assert_eq!(plan.matches("Exchange hashpartitioning").count(), 3, "{plan}");
    let rows: usize = s.sql(sql).expect("plans").collect().expect("runs").iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 3, "groups 1, 2 and NULL");
}

/// `df.hint(..)` in the DataFrame API picks the same operators as the SQL comments, and every
/// strategy gives the same rows.
#[test]
fn dataframe_hints_pick_strategies_and_agree() {
    let s = session(&[("spark.sql.autoBroadcastJoinThreshold", "-1")]);
    let (l, r) = (s.table("l").expect("l"), s.table("r").expect("r"));
    let mut answers = vec![];
    for (hint, op, build) in [
        (None, "SortMergeJoin", ""),
        (Some("broadcast"), "BroadcastHashJoin", "BuildRight"),
        (Some("shuffle_hash"), "ShuffledHashJoin", "BuildRight"),
        (Some("MERGE"), "SortMergeJoin", ""),
    ] {
        let right = match hint {
            Some(h) => r.hint(h).expect("hint"),
            None => s.table("r").expect("r"),
        };
        let df = l.join(&right, &["id"], kiln::JoinType::Inner).expect("join");
        let line = join_line(&df.physical_plan().tree_string(&s.config().expect("config")));
        assert!(line.starts_with(op) && line.contains(build), "{hint:?}: {line}");
        assert!(df.warnings().is_empty(), "{:?}", df.warnings());
        let batches = df.collect().expect("rows");
        let mut lines: Vec<String> = kiln::format::result_csv(&df.schema(), &batches).lines().map(String::from).collect();
        lines.sort();
        answers.push(lines.join("\n"));
    }
    assert_eq!(answers[0], "1,a,a\n2,b,b\nid,v,v");
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
    // A broadcast of the preserved side of an outer join cannot be honoured: a warning.
    let df = l.hint("broadcast").expect("hint").join(&r, &["id"], kiln::JoinType::LeftOuter).expect("join");
    assert!(df.warnings().iter().any(|w| w.to_lowercase().contains("broadcast")), "{:?}", df.warnings());
    assert!(l.hint("no_such_hint").expect("hint").warnings().iter().any(|w| w.contains("Unrecognized hint")));
}

/// A chain of broadcast inner joins whose later join's key is an earlier build side's column:
/// the earlier table keeps only the build rows the later one matches, in both modes, with the
/// same rows out.
#[test]
fn an_inner_join_chain_keeps_only_the_build_rows_a_later_join_matches() {
    // d's ck: dk % 10, NULL where dk % 7 = 3; c keeps ck 1 and 2; f's dk: id % 50.
    let kept_d: Vec<i64> = (0..50).filter(|dk| dk % 7 != 3 && [1, 2].contains(&(dk % 10))).collect();
    let expected_rows = (1..=1000i64).filter(|id| kept_d.contains(&(id % 50))).count() as i64;
    for aqe in ["true", "false"] {
        for codegen in ["true", "false"] {
            let s = session(&[("spark.sql.adaptive.enabled", aqe), ("spark.sql.codegen.wholeStage", codegen)]);
            for ddl in [
                "CREATE TABLE f AS SELECT id, CAST(id % 50 AS INT) AS dk FROM range(1, 1001)",
                "CREATE TABLE d AS SELECT CAST(id AS INT) AS dk, CASE WHEN id % 7 = 3 THEN NULL ELSE CAST(id % 10 AS INT) END AS ck FROM range(0, 50)",
                "CREATE TABLE c AS SELECT CAST(id AS INT) AS ck, CASE WHEN id IN (1, 2) THEN 'x' ELSE 'y' END AS label FROM range(0, 10)",
            ] {
                s.sql(ddl).and_then(|df| df.collect()).unwrap_or_else(|e| panic!("{ddl}: {e}"));
            }
            let sql = "SELECT count(*) FROM f JOIN d ON f.dk = d.dk JOIN c ON d.ck = c.ck WHERE c.label = 'x'";
            let df = s.sql(sql).expect("plans");
            let plan = df.physical_plan().tree_string(&s.config().expect("config"));
            assert_eq!(plan.matches("BroadcastHashJoin").count(), 2, "{plan}");
            let (batches, metrics) = df.collect_with_metrics().expect("runs");
            let n = batches[0].column(0).as_any().downcast_ref::<arrow::array::Int64Array>().expect("count").value(0);
            assert_eq!(n, expected_rows, "aqe {aqe}, codegen {codegen}");
            let build_rows: u64 = metrics.operators.iter().map(|(_, m)| m.build_rows).sum();
            assert_eq!(build_rows, kept_d.len() as u64 + 2, "aqe {aqe}, codegen {codegen}: d's table keeps the rows c matches\n{}", metrics.plan);
            assert_eq!(metrics.codegen.stages_fell_back, 0);
        }
    }
}
