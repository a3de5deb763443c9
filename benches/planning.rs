//! Planning time (analysis + optimization + physical planning) of wide and deep plans: a
//! 20-way join and a 500-column projection. Seed 003: on wide plans the optimizer itself can be
//! the bottleneck, so both must stay far below a second.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use criterion::{criterion_group, criterion_main, Criterion};
use kiln::Session;

fn table(columns: usize) -> RecordBatch {
    let schema = Schema::new((0..columns).map(|i| Field::new(format!("c{i}"), DataType::Int64, true)).collect::<Vec<_>>());
    let arrays: Vec<ArrayRef> = (0..columns).map(|i| Arc::new(Int64Array::from(vec![i as i64; 4])) as ArrayRef).collect();
    RecordBatch::try_new(Arc::new(schema), arrays).expect("batch")
}

/// `t0 JOIN t1 ON t0.k = t1.k JOIN t2 ... WHERE t0.v > 1 AND t19.v < 5`, 20 tables.
fn twenty_way_join() -> (Session, String) {
    let s = Session::new();
    for i in 0..20 {
        let schema = Schema::new(vec![Field::new("k", DataType::Int64, true), Field::new("v", DataType::Int64, true)]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef, Arc::new(Int64Array::from(vec![4, 5, 6])) as ArrayRef],
        )
        .expect("batch");
        s.register_batches(&format!("t{i}"), vec![batch]).expect("register");
    }
    let joins: String = (1..20).map(|i| format!(" JOIN t{i} ON t{}.k = t{i}.k", i - 1)).collect();
    let select: Vec<String> = (0..20).map(|i| format!("t{i}.v AS v{i}")).collect();
    (s, format!("SELECT {} FROM t0{joins} WHERE t0.v > 1 AND t19.v < 5", select.join(", ")))
}

/// `SELECT c0 + 1 AS x0, ..., c499 + 1 AS x499 FROM (SELECT * FROM wide WHERE c0 > 0) WHERE c1 < 10`.
fn five_hundred_columns() -> (Session, String) {
    let s = Session::new();
    s.register_batches("wide", vec![table(500)]).expect("register");
    let list: Vec<String> = (0..500).map(|i| format!("c{i} + 1 AS x{i}")).collect();
    (s, format!("SELECT {} FROM (SELECT * FROM wide WHERE c0 > 0) t WHERE c1 < 10", list.join(", ")))
}

fn planning(c: &mut Criterion) {
    let (s, q) = twenty_way_join();
    c.bench_function("plan 20-way join", |b| b.iter(|| s.sql(&q).expect("plans")));
    let (s, q) = five_hundred_columns();
    c.bench_function("plan 500-column projection", |b| b.iter(|| s.sql(&q).expect("plans")));
}

criterion_group!(benches, planning);
criterion_main!(benches);
