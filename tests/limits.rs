//! A session's limits on running queries: `Session::interrupt_all` from another thread and the
//! `kiln.query.timeout` setting stop a query within a batch, and the session stays usable.

use std::sync::Arc;

use arrow::array::{Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use kiln::{KilnError, Session};

/// A session with `t(a)`: 2,000,000 rows in 20,000 batches, so a scan of it takes a while and
/// passes many batch boundaries.
fn session() -> Session {
    let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int64, false)]));
    let batches = (0..20_000i64)
        .map(|b| RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from_iter_values(b * 100..b * 100 + 100))]).expect("batch"))
        .collect();
    let s = Session::new();
    s.register_batches("t", batches).expect("registers");
    s
}

const SLOW: &str = "SELECT sum(a % 7) FROM t WHERE a % 3 = 1";

#[test]
fn interrupt_all_cancels_a_running_query_and_the_session_goes_on() {
    let s = session();
    let runner = {
        let s = s.clone();
        std::thread::spawn(move || s.sql(SLOW).and_then(|df| df.collect()))
    };
    // Cancel as soon as the query has started (its control is registered).
    let mut cancelled = 0;
    while cancelled == 0 && !runner.is_finished() {
        cancelled = s.interrupt_all();
    }
    let result = runner.join().expect("the query thread does not panic");
    assert_eq!(cancelled, 1, "one query was running");
    assert!(matches!(result, Err(KilnError::Cancelled)), "{:?}", result.map(|b| b.len()));
    assert_eq!(s.interrupt_all(), 0, "nothing runs now");
    let rows = s.sql("SELECT count(*) FROM t").and_then(|df| df.collect()).expect("the session still answers");
    assert_eq!(rows[0].column(0).as_any().downcast_ref::<Int64Array>().map(|c| c.value(0)), Some(2_000_000));
}

#[test]
fn a_query_past_its_timeout_fails_naming_the_setting() {
    let s = session();
    s.set_conf("kiln.query.timeout", "1ms").expect("a duration");
    let err = s.sql(SLOW).and_then(|df| df.collect()).expect_err("2,000,000 rows take longer than 1 ms");
    assert!(err.to_string().contains("kiln.query.timeout"), "{err}");
    s.set_conf("kiln.query.timeout", "0").expect("no limit");
    assert!(s.sql(SLOW).and_then(|df| df.collect()).is_ok());
    assert!(s.set_conf("kiln.query.timeout", "soon").is_err(), "not a duration");
}

#[test]
fn files_outside_the_allowed_roots_are_refused_before_they_are_touched() {
    let allowed = tempfile::tempdir().expect("dir");
    let other = tempfile::tempdir().expect("dir");
    let s = Session::new();
    s.set_conf("kiln.files.allowedRoots", &allowed.path().display().to_string()).expect("a list");
    let inside = allowed.path().join("t");
    s.sql("SELECT 1 AS x").and_then(|df| df.write_parquet(&inside, &[])).expect("a write inside is allowed");
    s.register_parquet("t", &inside).expect("a table inside is allowed");

    let outside = other.path().join("u");
    let err = s.sql("SELECT 1 AS x").and_then(|df| df.write_parquet(&outside, &[])).expect_err("a write outside is refused");
    assert!(err.to_string().contains("PATH_NOT_ALLOWED") && err.to_string().contains("kiln.files.allowedRoots"), "{err}");
    assert!(!outside.exists(), "nothing was written");
    // `..` and links do not lead out.
    let sneaky = allowed.path().join("..").join(other.path().file_name().expect("name")).join("v");
    assert!(s.sql("SELECT 1 AS x").and_then(|df| df.write_parquet(&sneaky, &[])).is_err());
    #[cfg(unix)]
    {
        let link = allowed.path().join("link");
        std::os::unix::fs::symlink(other.path(), &link).expect("symlink");
        assert!(s.sql("SELECT 1 AS x").and_then(|df| df.write_parquet(link.join("w"), &[])).is_err(), "a link out is outside");
    }
    let loc = format!("CREATE TABLE e (x INT) USING parquet LOCATION '{}'", other.path().join("e").display());
    assert!(s.sql(&loc).and_then(|df| df.collect()).is_err(), "a LOCATION outside is refused");
    assert!(!other.path().join("e").exists());
    assert!(s.register_parquet("o", other.path()).is_err(), "a table outside is refused");
    assert_eq!(std::fs::read_dir(other.path()).expect("lists").count(), 0, "nothing was touched outside");
}

/// The breakers of `sql` over `t`, under `kiln.memory.limit`, in every execution mode.
fn under_limit(s: &Session, sql: &str, limit: &str) -> Vec<kiln::Result<Vec<RecordBatch>>> {
    let mut out = vec![];
    for (codegen, adaptive) in [("true", "false"), ("false", "false"), ("true", "true"), ("false", "true")] {
        s.set_conf("spark.sql.codegen.wholeStage", codegen).expect("a setting");
        s.set_conf("spark.sql.adaptive.enabled", adaptive).expect("a setting");
        s.set_conf("kiln.memory.limit", limit).expect("a size");
        out.push(s.sql(sql).and_then(|df| df.collect()));
    }
    out
}

#[test]
fn breakers_past_the_memory_limit_fail_naming_the_operator_and_the_session_goes_on() {
    let s = session();
    // 16 MB of input: a sort spills what it cannot hold and gives every row.
    for result in under_limit(&s, "SELECT a FROM t ORDER BY a DESC", "4m") {
        let rows: usize = result.expect("a sort spills").iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 2_000_000);
    }
    // A grouping by a unique key holds 2M groups: it spills them and gives every group once.
    for result in under_limit(&s, "SELECT a, count(*) AS n FROM t GROUP BY a", "4m") {
        let batches = result.expect("an aggregate spills");
        let mut keys: Vec<i64> = batches.iter().flat_map(|b| b.column(0).as_any().downcast_ref::<Int64Array>().map(|a| a.values().to_vec()).unwrap_or_default()).collect();
        let counts: i64 = batches.iter().flat_map(|b| b.column(1).as_any().downcast_ref::<Int64Array>().map(|a| a.values().to_vec()).unwrap_or_default()).sum();
        keys.sort_unstable();
        assert!(keys.len() == 2_000_000 && keys.iter().enumerate().all(|(i, k)| *k == i as i64) && counts == 2_000_000, "{} groups", keys.len());
    }
    // A shuffled hash join whose sides do not fit writes them out by their keys: every match.
    s.set_conf("spark.sql.shuffle.partitions", "1").expect("a setting");
    for result in under_limit(&s, "SELECT /*+ SHUFFLE_HASH(y) */ count(*), sum(y.a) FROM t x JOIN t y ON x.a = y.a", "4m") {
        let batches = result.expect("a shuffled hash join spills");
        let count = batches[0].column(0).as_any().downcast_ref::<Int64Array>().map(|a| a.value(0));
        assert_eq!(count, Some(2_000_000));
    }
    // One key throughout the build side: partitioning again cannot split it, and past the
    // limit it fails (the one-row side kept from being broadcast).
    s.set_conf("spark.sql.autoBroadcastJoinThreshold", "-1").expect("a setting");
    for (sql, operator) in [("SELECT /*+ SHUFFLE_HASH(y) */ count(*) FROM (SELECT a FROM t WHERE a = 0) x JOIN t y ON x.a % 1 = y.a % 1", "Join")] {
        for result in under_limit(&s, sql, "4m") {
            let err = result.map(|b| b.len()).expect_err("past 4 MB");
            let msg = err.to_string();
            assert!(msg.contains("UNABLE_TO_ACQUIRE_MEMORY") && msg.contains("kiln.memory.limit (4.0 MiB)"), "{msg}");
            assert!(msg.contains(operator) || msg.contains("Exchange") || msg.contains("HashAggregate"), "names the operator refused: {msg}");
        }
        // The failed runs gave their memory back: the same query fits a larger limit.
        for result in under_limit(&s, sql, "1g") {
            let rows: usize = result.expect("fits in 1 GB").iter().map(|b| b.num_rows()).sum();
            assert_eq!(rows, 1, "{sql}");
        }
    }
    s.set_conf("spark.sql.shuffle.partitions", "200").expect("a setting");
    s.set_conf("spark.sql.autoBroadcastJoinThreshold", "10MB").expect("a setting");
    // A scan that holds nothing streams under any limit.
    for result in under_limit(&s, SLOW, "1m") {
        result.expect("a streaming aggregate holds one group");
    }
    assert!(s.set_conf("kiln.memory.limit", "0").is_err(), "a limit must be positive");
    s.set_conf("kiln.memory.limit", "64MB").expect("a size");
    assert_eq!(s.config().expect("settings").get("kiln.memory.limit").as_deref(), Some("67108864"));
}

#[test]
fn a_run_gives_back_every_byte_it_reserved() {
    let s = session();
    s.set_conf("kiln.memory.limit", "8m").expect("a size");
    s.set_conf("spark.sql.shuffle.partitions", "1").expect("a setting");
    s.set_conf("spark.sql.autoBroadcastJoinThreshold", "-1").expect("a setting");
    let df = s.sql("SELECT /*+ SHUFFLE_HASH(y) */ count(*) FROM (SELECT a FROM t WHERE a = 0) x JOIN t y ON x.a % 1 = y.a % 1").expect("plans");
    let control = kiln::exec::control::QueryControl::for_plan(df.physical_plan());
    df.collect_with_control(&control).map(|b| b.len()).expect_err("past 8 MB");
    assert_eq!(control.memory().used(), 0, "a failed run holds nothing");
    s.set_conf("spark.sql.shuffle.partitions", "200").expect("a setting");
    s.set_conf("spark.sql.autoBroadcastJoinThreshold", "10MB").expect("a setting");
    assert!(control.memory().peak() > 0 && control.memory().peak() <= 8 << 20, "{}", control.memory().peak());
    // A run that spilled holds nothing afterwards either, and its files are gone with it.
    for sql in ["SELECT a FROM t ORDER BY a DESC", "SELECT a, count(*) FROM t GROUP BY a"] {
        let df = s.sql(sql).expect("plans");
        let control = kiln::exec::control::QueryControl::for_plan(df.physical_plan());
        df.collect_with_control(&control).expect("a sort and an aggregate spill");
        assert_eq!((control.memory().used(), control.spill().used()), (0, 0), "{sql}: a spilled run holds nothing");
        assert!(control.memory().peak() > 0 && control.memory().peak() <= 8 << 20, "{sql}: {}", control.memory().peak());
    }
    s.set_conf("kiln.memory.limit", "1g").expect("a size");
    let df = s.sql("SELECT a % 10 AS k, count(*) FROM t GROUP BY 1 ORDER BY 1").expect("plans");
    let control = kiln::exec::control::QueryControl::for_plan(df.physical_plan());
    df.collect_with_control(&control).expect("runs");
    assert_eq!(control.memory().used(), 0, "a finished run holds nothing");
    assert!(control.memory().peak() > 0, "its exchange and sort held something");
}
