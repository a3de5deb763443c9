//! The same physical plans run compiled and interpreted: TPC-H Q1 and Q6 over tables generated
//! in memory (SF 0.1 by default; `KILN_BENCH_SF` changes it), and one query per feature generated
//! code evaluates inline (string LIKE pieces, string ordering, length, min/max of doubles,
//! casts). Each query's group holds both modes, so criterion reports them side by side;
//! `cargo bench --bench compiled_vs_interpreted -- feature_` runs only the feature queries.

use criterion::{criterion_group, criterion_main, Criterion};
use kiln::Session;

const Q1: &str = include_str!("../tests/reference/queries/tpch_q01.sql");
const Q6: &str = include_str!("../tests/reference/queries/tpch_q06.sql");
/// Join-heavy: a chain of broadcast joins (customer, orders, lineitem, supplier, nation, region).
const Q5: &str = include_str!("../tests/reference/queries/tpch_q05.sql");
/// Join and group-by heavy: six tables, string and integer grouping keys.
const Q9: &str = include_str!("../tests/reference/queries/tpch_q09.sql");

fn tpch_session(sf: f64) -> Session {
    let session = Session::new();
    for (name, batches) in kiln::datasource::tpch::generate_tpch_batches(sf).expect("TPC-H data") {
        session.register_batches(name, batches).expect("table");
    }
    session
}

/// Queries whose stage compiles only with the newer inline expressions.
const FEATURES: &[(&str, &str)] = &[
    ("feature_like_pieces", "SELECT count(*) FROM orders WHERE o_comment NOT LIKE '%special%requests%'"),
    ("feature_string_order", "SELECT count(*) FROM lineitem WHERE l_comment >= 'fur' AND l_comment < 'quick'"),
    ("feature_length", "SELECT l_returnflag, sum(length(l_comment)) FROM lineitem GROUP BY l_returnflag"),
    ("feature_min_max_double", "SELECT l_returnflag, min(CAST(l_extendedprice AS DOUBLE)), max(CAST(l_discount AS DOUBLE) * 2.0) FROM lineitem GROUP BY l_returnflag"),
    ("feature_casts", "SELECT sum(CAST(l_extendedprice AS BIGINT)), sum(abs(CAST(l_tax AS DECIMAL(12,1)))) FROM lineitem"),
];

fn compiled_vs_interpreted(c: &mut Criterion) {
    let sf: f64 = std::env::var("KILN_BENCH_SF").ok().and_then(|s| s.parse().ok()).unwrap_or(0.1);
    let session = tpch_session(sf);
    for (name, sql) in [("q1", Q1), ("q6", Q6), ("q5", Q5), ("q9", Q9)].into_iter().chain(FEATURES.iter().copied()) {
        let name = if name.starts_with("feature_") { name.to_string() } else { format!("tpch_{name}") };
        let mut group = c.benchmark_group(format!("{name}_sf{sf}"));
        group.sample_size(10);
        for (mode, codegen) in [("interpreted", "false"), ("compiled", "true")] {
            session.set_conf("spark.sql.codegen.wholeStage", codegen).expect("setting");
            let df = session.sql(sql).expect("plans");
            group.bench_function(mode, |b| b.iter(|| df.collect().expect("runs")));
        }
        group.finish();
    }
}

criterion_group!(benches, compiled_vs_interpreted);
criterion_main!(benches);
