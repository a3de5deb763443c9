//! Scan time of selective queries over Parquet with pruning on and off, in one run:
//! - row groups skipped by pushed filters (`spark.sql.parquet.filterPushdown`): TPC-H lineitem
//!   (SF 0.1 by default, `KILN_BENCH_SF` changes it; 100k-row row groups, sorted by orderkey
//!   as generated) with `l_orderkey < 60000`;
//! - the demo's sales orders queried for the last 7 of 61 days: the same rows written in one
//!   file (sorted by day) read whole with pushdown off, or with pages skipped by the page index;
//!   and written in 61 daily folders, of which 7 are read.

use criterion::{criterion_group, criterion_main, Criterion};
use kiln::{SaveMode, Session};

fn write_lineitem(dir: &std::path::Path, sf: f64) -> std::path::PathBuf {
    let path = dir.join("lineitem.parquet");
    let batches = kiln::datasource::tpch::generate_table("lineitem", sf).expect("lineitem");
    let props = parquet::file::properties::WriterProperties::builder().set_max_row_group_row_count(Some(100_000)).build();
    let file = std::fs::File::create(&path).expect("file");
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batches[0].schema(), Some(props)).expect("writer");
    for b in &batches {
        writer.write(b).expect("write");
    }
    writer.close().expect("close");
    path
}

fn pruning(c: &mut Criterion) {
    let sf: f64 = std::env::var("KILN_BENCH_SF").ok().and_then(|s| s.parse().ok()).unwrap_or(0.1);
    let dir = tempfile::tempdir().expect("temp dir");
    let session = Session::new();
    session.register_parquet("lineitem", write_lineitem(dir.path(), sf)).expect("lineitem");
    let mut group = c.benchmark_group(format!("row_group_skipping_sf{sf}"));
    group.sample_size(10);
    for (mode, on) in [("pushdown_off", "false"), ("pushdown_on", "true")] {
        session.set_conf("spark.sql.parquet.filterPushdown", on).expect("setting");
        let df = session.sql("SELECT sum(l_extendedprice) AS s FROM lineitem WHERE l_orderkey < 60000").expect("plans");
        group.bench_function(mode, |b| b.iter(|| df.collect().expect("runs")));
    }
    group.finish();

    let paths = kiln::datasource::demo::write_demo_data(&dir.path().join("demo"), 1.0).expect("demo data");
    session.register_parquet("orders_by_day", &paths.sales_orders).expect("orders");
    let flat = dir.path().join("orders_flat");
    session.sql("SELECT * FROM orders_by_day").expect("plans").write_parquet_with(&flat, &[], SaveMode::Overwrite).expect("write");
    session.register_parquet("orders_flat", &flat).expect("orders");
    let mut group = c.benchmark_group("partition_pruning_demo_sales");
    group.sample_size(10);
    for (mode, table, pushdown) in [
        ("one_file_pushdown_off", "orders_flat", "false"),
        ("one_file_page_index", "orders_flat", "true"),
        ("folders_pruned_7_of_61", "orders_by_day", "true"),
    ] {
        session.set_conf("spark.sql.parquet.filterPushdown", pushdown).expect("setting");
        let sql = format!("SELECT count(*) AS n, sum(amount) AS s FROM {table} WHERE order_date >= '2026-10-25' AND status = 'shipped'");
        let df = session.sql(&sql).expect("plans");
        group.bench_function(mode, |b| b.iter(|| df.collect().expect("runs")));
    }
    group.finish();
}

criterion_group!(benches, pruning);
criterion_main!(benches);
