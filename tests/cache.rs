//! CACHE TABLE and `DataFrame::cache`: queries over cached tables give the answers they gave
//! over the tables, in both execution modes, and read the cache (Spark's InMemoryRelation);
//! the cache's bytes are held in the session's pool, refused past `kiln.memory.limit`, and
//! given back when it is dropped.

use std::path::Path;

use kiln::functions::*;
use kiln::internals::physical::PhysicalPlan;
use kiln::{ExplainMode, Session};

fn tpch(codegen: bool) -> Session {
    let session = Session::builder().config("spark.sql.codegen.wholeStage", codegen.to_string()).config("spark.sql.shuffle.partitions", "4").build().expect("valid settings");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/tpch");
    for entry in std::fs::read_dir(&dir).expect("reference data") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 name").to_string();
        session.register_parquet(&name, &path).expect("registers");
    }
    session
}

/// The lines of the leaves of a DataFrame's physical plan (its scans; a cache's plan is not
/// one of its children).
fn scans(df: &kiln::DataFrame) -> Vec<String> {
    fn walk(p: &PhysicalPlan, out: &mut Vec<String>) {
        let children = p.children();
        if children.is_empty() {
            out.push(p.node_string(&kiln::Config::default()));
        }
        for c in children {
            walk(c, out);
        }
    }
    let mut out = vec![];
    walk(df.physical_plan(), &mut out);
    out
}

fn rows(session: &Session, sql: &str) -> String {
    let df = session.sql(sql).expect("plans");
    kiln::format::result_csv(&df.schema(), &df.collect().expect("runs"))
}

#[test]
fn tpch_over_cached_tables_answers_as_over_the_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/queries");
    let queries: Vec<String> = ["tpch_q01", "tpch_q03", "tpch_q06"].iter().map(|q| std::fs::read_to_string(dir.join(format!("{q}.sql"))).expect("query")).collect();
    for codegen in [true, false] {
        let session = tpch(codegen);
        let before: Vec<String> = queries.iter().map(|q| rows(&session, q)).collect();
        for t in ["lineitem", "orders", "customer"] {
            session.sql(&format!("CACHE TABLE {t}")).expect("caches");
            assert!(session.is_cached(t).expect("known table"));
        }
        assert!(session.cached_bytes() > 0);
        for (q, want) in queries.iter().zip(&before) {
            let df = session.sql(q).expect("plans");
            let read = scans(&df);
            assert!(read.iter().any(|s| s.starts_with("Scan In-memory table lineitem")) && !read.iter().any(|s| s.starts_with("FileScan")), "{read:?}");
            assert_eq!(&rows(&session, q), want, "codegen {codegen}: {q}");
        }
        session.sql("CLEAR CACHE").expect("clears");
        assert_eq!(session.cached_bytes(), 0, "a cleared cache gives its bytes back");
        assert!(!session.is_cached("lineitem").expect("known table"));
    }
}

#[test]
fn a_cached_managed_table_is_found_by_its_files_and_cached_again_when_written() {
    let warehouse = tempfile::tempdir().expect("temp dir");
    let session = Session::builder().config("spark.sql.warehouse.dir", warehouse.path().display().to_string()).build().expect("valid settings");
    session.sql("CREATE TABLE m USING parquet AS SELECT id, id % 3 AS k FROM range(10)").expect("creates");
    session.sql("CACHE TABLE m").expect("caches");
    let plan = session.sql("SELECT k FROM m WHERE id > 4").expect("plans").explain_string(ExplainMode::Simple).expect("explains");
    assert!(plan.contains("Scan In-memory table m [id#") && plan.contains("InMemoryRelation [id#"), "{plan}");
    session.sql("INSERT INTO m VALUES (10, 1)").expect("inserts");
    assert!(session.is_cached("m").expect("known table"), "a written table is cached again");
    assert_eq!(rows(&session, "SELECT count(*) FROM m WHERE id > 4"), "count(1)\n6\n");
    let plan = session.sql("SELECT * FROM m").expect("plans").explain_string(ExplainMode::Simple).expect("explains");
    assert!(plan.contains("InMemoryRelation"), "{plan}");
    session.sql("DROP TABLE m").expect("drops");
    assert_eq!(session.cached_bytes(), 0, "a dropped table's cache is gone");
}

#[test]
fn a_cached_dataframe_is_read_by_those_derived_from_it() {
    let session = Session::new();
    let df = session.sql("SELECT id, id * id AS sq FROM range(100)").expect("plans");
    assert_eq!(df.storage_level().expect("reads"), None);
    let cached = df.cache().expect("caches");
    assert!(cached.storage_level().expect("reads").is_some_and(|l| l.use_memory));
    let derived = cached.filter(col("id").gt(lit(90))).expect("plans").select([col("sq")]).expect("plans");
    let plan = derived.explain_string(ExplainMode::Simple).expect("explains");
    assert!(plan.starts_with("== Physical Plan ==\n") && plan.contains("InMemoryTableScan [") && plan.contains("InMemoryRelation [id#"), "{plan}");
    assert!(scans(&derived).iter().all(|s| s.starts_with("InMemoryTableScan [")), "the range is not computed again:\n{plan}");
    assert_eq!(derived.count().expect("runs"), 9);
    let before = session.cached_bytes();
    assert!(before > 0);
    let uncached = cached.unpersist().expect("uncaches");
    // The rows stay while a DataFrame planned over them lives; then their bytes are given back.
    assert_eq!(session.cached_bytes(), before);
    drop((cached, derived));
    assert_eq!(session.cached_bytes(), 0);
    let plan = uncached.filter(col("id").gt(lit(90))).expect("plans").explain_string(ExplainMode::Simple).expect("explains");
    assert!(!plan.contains("InMemoryRelation"), "{plan}");
}

// persist(level): the plans over the DataFrame scan its rows in memory, printed as Spark 4.3
// prints a MEMORY_ONLY cache (`InMemoryRelation [..], StorageLevel(memory, deserialized, 1
// replicas)`, as CACHE TABLE OPTIONS ('storageLevel' 'MEMORY_ONLY') in slt/cache.slt); the
// query's UDF is not called again while the cache lives, and the rows are those of the query
// run without it.
#[test]
fn a_dataframe_persisted_at_a_level_is_read_from_memory_until_unpersisted() {
    use kiln::arrow::array::{ArrayRef, AsArray};
    use kiln::arrow::datatypes::{DataType, Int64Type};
    use kiln::StorageLevel;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    let session = Session::new();
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let square = kiln::udf::create_udf("counted_square", vec![DataType::Int64], DataType::Int64, kiln::Volatility::Immutable, move |args: &[ArrayRef]| {
        counted.fetch_add(args[0].len(), Ordering::SeqCst);
        Ok(Arc::new(args[0].as_primitive::<Int64Type>().unary::<_, Int64Type>(|v| v * v)) as ArrayRef)
    });
    session.register_udf(square).expect("registers");
    let df = session.sql("SELECT id, counted_square(id) AS sq FROM range(100)").expect("plans");
    let query = |df: &kiln::DataFrame| df.filter(col("id").gt(lit(90))).expect("plans").order_by([col("id")]).expect("plans");
    let csv = |df: &kiln::DataFrame| kiln::format::result_csv(&df.schema(), &df.collect().expect("runs"));
    let all = |df: &kiln::DataFrame| csv(&df.order_by([col("id")]).expect("plans"));
    let (unpersisted, every_row) = (csv(&query(&df)), all(&df));
    assert_eq!((unpersisted.lines().count(), every_row.lines().count()), (10, 101), "{unpersisted}");
    let ran = calls.load(Ordering::SeqCst);
    assert!(ran >= 100, "{ran}");

    // NONE caches nothing (Spark's cacheQuery); DISK_ONLY is refused, and caches nothing either.
    assert_eq!(df.persist(StorageLevel::NONE).expect("no-op").storage_level().expect("reads"), None);
    let err = df.persist(StorageLevel::from_name("DISK_ONLY").expect("a level")).expect_err("kiln caches in memory").to_string();
    assert!(err.contains("in memory only"), "{err}");
    assert_eq!((df.storage_level().expect("reads"), session.cached_bytes()), (None, 0));

    let memory_only = StorageLevel::from_name("MEMORY_ONLY").expect("a level");
    let persisted = df.persist(memory_only).expect("persists");
    let ran = calls.load(Ordering::SeqCst) - ran;
    assert_eq!(ran, 100, "persist runs the query once");
    let ran = calls.load(Ordering::SeqCst);
    assert_eq!(df.storage_level().expect("reads"), Some(memory_only));
    assert_eq!(persisted.storage_level().expect("reads"), Some(memory_only));
    // Cached already: Spark keeps the first level.
    df.persist(StorageLevel::MEMORY_AND_DISK).expect("a no-op");
    assert_eq!(df.storage_level().expect("reads"), Some(memory_only));
    let over = query(&persisted);
    let plan = over.explain_string(ExplainMode::Simple).expect("explains");
    assert!(plan.contains("InMemoryTableScan [id#") && plan.contains("InMemoryRelation [id#") && plan.contains("], StorageLevel(memory, deserialized, 1 replicas)\n"), "{plan}");
    assert!(scans(&over).iter().all(|s| s.starts_with("InMemoryTableScan [")), "{plan}");
    for codegen in ["true", "false"] {
        session.set_conf("spark.sql.codegen.wholeStage", codegen).expect("sets");
        assert_eq!(csv(&query(&persisted)), unpersisted, "codegen {codegen}");
        assert_eq!(all(&persisted), every_row, "codegen {codegen}");
        assert_eq!(csv(&query(&df.select([col("id"), col("sq")]).expect("plans"))), unpersisted, "derived from the persisted query, codegen {codegen}");
    }
    assert_eq!(calls.load(Ordering::SeqCst), ran, "the rows are read from memory, not computed again");
    assert!(session.cached_bytes() > 0);

    let uncached = persisted.unpersist().expect("unpersists");
    assert_eq!((df.storage_level().expect("reads"), uncached.storage_level().expect("reads")), (None, None));
    let again = query(&uncached);
    assert!(!again.explain_string(ExplainMode::Simple).expect("explains").contains("InMemory"));
    assert_eq!(csv(&again), unpersisted);
    assert!(calls.load(Ordering::SeqCst) > ran, "the query runs again once unpersisted");
    drop((persisted, over));
    assert_eq!(session.cached_bytes(), 0);
}

#[test]
fn a_cache_past_the_memory_limit_is_an_error_and_holds_nothing() {
    let session = Session::builder().config("kiln.memory.limit", "1m").build().expect("valid settings");
    session.sql("CREATE TEMP VIEW big AS SELECT id, repeat('x', 200) AS s FROM range(20000)").expect("creates");
    let err = session.sql("CACHE TABLE big").expect_err("4 MB do not fit in 1 MB").to_string();
    assert!(err.contains("UNABLE_TO_ACQUIRE_MEMORY") && err.contains("Cannot cache `big`") && err.contains("kiln.memory.limit"), "{err}");
    assert_eq!(session.cached_bytes(), 0);
    assert!(!session.is_cached("big").expect("known view"));
    let err = session.table("big").expect("plans").cache().expect_err("does not fit").to_string();
    assert!(err.contains("Cannot cache a DataFrame"), "{err}");
    assert_eq!(rows(&session, "SELECT count(*) FROM big"), "count(1)\n20000\n");
}

#[test]
fn a_cache_holds_its_rows_in_batches_of_the_batch_size() {
    // Seven partitions of 1,428 or 1,429 rows each would leave batches of 1,000 and a short
    // one per partition: the cache holds 1,000-row batches, the last one shorter.
    for codegen in [true, false] {
        let session = Session::builder().config("kiln.batchSize", "1000").config("spark.sql.codegen.wholeStage", codegen.to_string()).build().expect("valid settings");
        session.sql("CACHE TABLE t AS SELECT id, id * 2 AS twice FROM range(0, 10000, 1, 7)").expect("caches");
        let batches = session.sql("SELECT * FROM t").expect("plans").collect().expect("runs");
        let sizes: Vec<usize> = batches.iter().map(|b| b.num_rows()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 10000);
        assert!(sizes.iter().all(|n| *n == 1000), "codegen={codegen}: {sizes:?}");
        assert_eq!(rows(&session, "SELECT count(*) AS n, sum(id) AS s, sum(twice) AS d FROM t"), rows(&session, "SELECT count(*) AS n, sum(id) AS s, sum(id * 2) AS d FROM range(0, 10000, 1, 7)"));
    }
}
