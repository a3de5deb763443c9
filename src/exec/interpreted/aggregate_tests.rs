use super::*;
use crate::exec::interpreted::test_util::*;
use crate::expr::{aggregate_result_type, AggFunc};
use crate::types::ScalarValue;

/// An AggregateExpr with Spark's buffer attributes.
fn agg(func: AggFunc, arg: Expr, distinct: bool) -> AggregateExpr {
    let t = arg.data_type().unwrap();
    let rt = aggregate_result_type(func, &t);
    let buffer = match (func, &rt) {
        (AggFunc::Count, _) => vec![Attribute::new("count", DataType::Int64, false)],
        (AggFunc::Sum, DataType::Decimal128(..)) => {
            vec![Attribute::new("sum", rt.clone(), true), Attribute::new("isEmpty", DataType::Boolean, false)]
        }
        (AggFunc::Avg, _) => {
            let st = match aggregate_result_type(AggFunc::Sum, &t) {
                d @ DataType::Decimal128(..) => d,
                _ => DataType::Float64,
            };
            vec![Attribute::new("sum", st, true), Attribute::new("count", DataType::Int64, false)]
        }
        _ => vec![Attribute::new("value", rt.clone(), true)],
    };
    let result = Attribute::new(format!("{}({arg})", func.name()), rt, func != AggFunc::Count);
    AggregateExpr { func, args: vec![arg], distinct, result, buffer }
}

fn one() -> Expr {
    Expr::lit(ScalarValue::Int32(1))
}

/// result list: grouping attributes then every aggregate's result.
fn result_list(grouping: &[Expr], aggs: &[AggregateExpr]) -> Vec<Expr> {
    let mut r: Vec<Expr> = named_outputs(grouping).iter().map(Attribute::expr).collect();
    r.extend(aggs.iter().map(|a| a.result.expr()));
    r
}

fn run(mode: AggregateMode, grouping: &[Expr], aggs: &[AggregateExpr], input: &[Attribute], b: Vec<RecordBatch>) -> Vec<RecordBatch> {
    hash_aggregate(mode, grouping, aggs, &result_list(grouping, aggs), input, b).unwrap()
}

/// Partial over each partition, then Final over all partial outputs.
fn two_phase(grouping: &[Expr], aggs: &[AggregateExpr], input: &[Attribute], parts: Vec<Vec<RecordBatch>>) -> Vec<RecordBatch> {
    let mut partial_out = vec![];
    for p in parts {
        partial_out.extend(hash_aggregate(AggregateMode::Partial, grouping, aggs, &[], input, p).unwrap());
    }
    let mut mid = named_outputs(grouping);
    mid.extend(aggs.iter().flat_map(|a| a.buffer.clone()));
    run(AggregateMode::Final, grouping, aggs, &mid, partial_out)
}

#[test]
fn grouped_sum_and_count_skip_nulls() {
    let (k, v) = (attr("k", DataType::Utf8), attr("v", DataType::Int64));
    let input = [k.clone(), v.clone()];
    let b = batch(
        &input,
        vec![strs(&[Some("a"), Some("b"), Some("a"), None, Some("b"), Some("c")]), ints(&[Some(1), None, Some(3), Some(4), None, None])],
    );
    let aggs = [agg(AggFunc::Sum, v.expr(), false), agg(AggFunc::Count, v.expr(), false), agg(AggFunc::Count, one(), false)];
    let out = run(AggregateMode::Complete, &[k.expr()], &aggs, &input, vec![b]);
    assert_eq!(col_str(&out, 0), vec!["a", "b", "NULL", "c"]);
    assert_eq!(col_i64(&out, 1), vec![Some(4), None, Some(4), None]);
    assert_eq!(col_i64(&out, 2), vec![Some(2), Some(0), Some(1), Some(0)]);
    assert_eq!(col_i64(&out, 3), vec![Some(2), Some(2), Some(1), Some(1)]);
}

#[test]
fn single_integer_key_and_aliased_grouping() {
    let (k, v) = (attr("k", DataType::Int64), attr("v", DataType::Int64));
    let input = [k.clone(), v.clone()];
    let b = batch(&input, vec![ints(&[Some(7), None, Some(7), Some(1 << 40)]), ints(&[Some(1), Some(2), Some(3), Some(4)])]);
    let grouping = [k.expr().alias("kk")];
    let aggs = [agg(AggFunc::Sum, v.expr(), false)];
    let out = run(AggregateMode::Complete, &grouping, &aggs, &input, vec![b]);
    assert_eq!(out[0].schema().field(0).name(), "kk");
    assert_eq!(col_i64(&out, 0), vec![Some(7), None, Some(1 << 40)]);
    assert_eq!(col_i64(&out, 1), vec![Some(4), Some(2), Some(4)]);
}

#[test]
fn decimal_sum_buffer_type_and_is_empty() {
    let (k, d) = (attr("k", DataType::Int64), attr("d", DataType::Decimal128(15, 2)));
    let input = [k.clone(), d.clone()];
    let b = batch(&input, vec![ints(&[Some(1), Some(2), Some(1)]), decs(&[Some(150), None, Some(25)], 15, 2)]);
    let aggs = [agg(AggFunc::Sum, d.expr(), false)];
    let partial = hash_aggregate(AggregateMode::Partial, &[k.expr()], &aggs, &[], &input, vec![b.clone()]).unwrap();
    assert_eq!(partial[0].schema().field(1).data_type(), &DataType::Decimal128(25, 2));
    assert_eq!(col_str(&partial, 1), vec!["1.75", "0.00"]);
    assert_eq!(col_str(&partial, 2), vec!["false", "true"]);
    let out = two_phase(&[k.expr()], &aggs, &input, vec![vec![b]]);
    assert_eq!(out[0].schema().field(1).data_type(), &DataType::Decimal128(25, 2));
    assert_eq!(col_str(&out, 1), vec!["1.75", "NULL"]);
}

#[test]
fn avg_decimal_rounds_half_up_to_scale_plus_4() {
    let d = attr("d", DataType::Decimal128(15, 2));
    let b = batch(std::slice::from_ref(&d), vec![decs(&[Some(100), Some(200), Some(200), None], 15, 2)]);
    let aggs = [agg(AggFunc::Avg, d.expr(), false)];
    for out in [run(AggregateMode::Complete, &[], &aggs, std::slice::from_ref(&d), vec![b.clone()]), two_phase(&[], &aggs, std::slice::from_ref(&d), vec![vec![b.clone()]])] {
        assert_eq!(out[0].schema().field(0).data_type(), &DataType::Decimal128(19, 6));
        assert_eq!(col_str(&out, 0), vec!["1.666667"]);
    }
}

#[test]
fn partial_then_final_equals_complete() {
    let (k, v, d, s) =
        (attr("k", DataType::Utf8), attr("v", DataType::Int64), attr("d", DataType::Decimal128(12, 2)), attr("s", DataType::Utf8));
    let input = [k.clone(), v.clone(), d.clone(), s.clone()];
    let mk = |ks: &[Option<&str>], vs: &[Option<i64>], ds: &[Option<i128>], ss: &[Option<&str>]| {
        batch(&input, vec![strs(ks), ints(vs), decs(ds, 12, 2), strs(ss)])
    };
    let b1 = mk(&[Some("x"), Some("y"), None], &[Some(1), Some(2), None], &[Some(101), None, Some(7)], &[Some("q"), None, Some("a")]);
    let b2 = mk(&[Some("y"), Some("x"), Some("z")], &[Some(5), None, None], &[Some(3), Some(-4), None], &[Some("b"), Some("c"), None]);
    let b3 = mk(&[Some("x")], &[Some(10)], &[Some(1)], &[Some("z")]);
    let aggs = [
        agg(AggFunc::Sum, v.expr(), false),
        agg(AggFunc::Sum, d.expr(), false),
        agg(AggFunc::Avg, d.expr(), false),
        agg(AggFunc::Avg, v.expr(), false),
        agg(AggFunc::Count, v.expr(), false),
        agg(AggFunc::Min, s.expr(), false),
        agg(AggFunc::Max, d.expr(), false),
    ];
    let grouping = [k.expr()];
    let complete = run(AggregateMode::Complete, &grouping, &aggs, &input, vec![b1.clone(), b2.clone(), b3.clone()]);
    let split = two_phase(&grouping, &aggs, &input, vec![vec![b2, b3], vec![], vec![b1]]);
    let sorted = |bs: &[RecordBatch]| {
        let cols: Vec<Vec<String>> = (0..bs[0].num_columns()).map(|i| col_str(bs, i)).collect();
        let mut rows: Vec<Vec<String>> = (0..cols[0].len()).map(|r| cols.iter().map(|c| c[r].clone()).collect()).collect();
        rows.sort();
        rows
    };
    assert_eq!(sorted(&complete), sorted(&split));
    assert_eq!(sorted(&complete)[0], vec!["NULL", "NULL", "0.07", "0.070000", "NULL", "0", "a", "0.07"]);
    assert_eq!(complete[0].schema(), split[0].schema());
}

#[test]
fn global_aggregate_over_empty_input_yields_one_row() {
    let (v, d) = (attr("v", DataType::Int64), attr("d", DataType::Decimal128(10, 0)));
    let input = [v.clone(), d.clone()];
    let aggs = [
        agg(AggFunc::Count, one(), false),
        agg(AggFunc::Sum, v.expr(), false),
        agg(AggFunc::Sum, d.expr(), false),
        agg(AggFunc::Avg, d.expr(), false),
        agg(AggFunc::Max, v.expr(), false),
    ];
    let empty = batch(&input, vec![ints(&[]), decs(&[], 10, 0)]);
    for out in [run(AggregateMode::Complete, &[], &aggs, &input, vec![]), two_phase(&[], &aggs, &input, vec![vec![empty], vec![]])] {
        assert_eq!(rows(&out), 1);
        assert_eq!(col_i64(&out, 0), vec![Some(0)]);
        assert_eq!((1..5).map(|i| col_str(&out, i)[0].clone()).collect::<Vec<_>>(), vec!["NULL"; 4]);
    }
    let k = attr("k", DataType::Int64);
    let grouped = run(AggregateMode::Complete, &[k.expr()], &aggs[..1], &[k], vec![]);
    assert_eq!(rows(&grouped), 0);
}

#[test]
fn integer_sum_overflow_is_an_ansi_error() {
    let v = attr("v", DataType::Int64);
    let b = batch(std::slice::from_ref(&v), vec![ints(&[Some(i64::MAX), Some(1)])]);
    let err = hash_aggregate(AggregateMode::Complete, &[], &[agg(AggFunc::Sum, v.expr(), false)], &[], &[v], vec![b]).unwrap_err();
    assert!(err.to_string().contains("[ARITHMETIC_OVERFLOW]"), "{err}");
}

#[test]
fn decimal_sum_overflow_is_an_error() {
    let d = attr("d", DataType::Decimal128(38, 0));
    let big = 6 * 10i128.pow(37);
    let aggs = [agg(AggFunc::Sum, d.expr(), false)];
    for vals in [vec![Some(big), Some(big)], vec![Some(big), Some(big), Some(big)]] {
        let b = batch(std::slice::from_ref(&d), vec![decs(&vals, 38, 0)]);
        let err = hash_aggregate(AggregateMode::Complete, &[], &aggs, &result_list(&[], &aggs), std::slice::from_ref(&d), vec![b]).unwrap_err();
        assert!(err.to_string().contains("NUMERIC_VALUE_OUT_OF_RANGE"), "{err}");
    }
}

#[test]
fn distinct_aggregates_deduplicate_per_group() {
    let (k, v) = (attr("k", DataType::Int64), attr("v", DataType::Int64));
    let input = [k.clone(), v.clone()];
    let b1 = batch(&input, vec![ints(&[Some(1), Some(1), Some(2), Some(1)]), ints(&[Some(1), Some(1), Some(1), None])]);
    let b2 = batch(&input, vec![ints(&[Some(1), Some(2), Some(1)]), ints(&[Some(2), Some(1), Some(2)])]);
    let aggs = [
        agg(AggFunc::Count, v.expr(), true),
        agg(AggFunc::Sum, v.expr(), true),
        agg(AggFunc::Avg, v.expr(), true),
        agg(AggFunc::Count, v.expr(), false),
    ];
    let out = run(AggregateMode::Complete, &[k.expr()], &aggs, &input, vec![b1, b2]);
    assert_eq!(col_i64(&out, 0), vec![Some(1), Some(2)]);
    assert_eq!(col_i64(&out, 1), vec![Some(2), Some(1)]);
    assert_eq!(col_i64(&out, 2), vec![Some(3), Some(1)]);
    assert_eq!(col_str(&out, 3), vec!["1.5", "1.0"]);
    assert_eq!(col_i64(&out, 4), vec![Some(4), Some(2)]);
}

#[test]
fn min_max_on_dates_and_decimals() {
    let (t, d) = (attr("t", DataType::Date32), attr("d", DataType::Decimal128(5, 1)));
    let dates: ArrayRef = Arc::new(arrow::array::Date32Array::from(vec![Some(10), None, Some(3)]));
    let b = batch(&[t.clone(), d.clone()], vec![dates, decs(&[Some(-5), Some(20), None], 5, 1)]);
    let aggs = [agg(AggFunc::Min, t.expr(), false), agg(AggFunc::Max, t.expr(), false), agg(AggFunc::Min, d.expr(), false)];
    let out = run(AggregateMode::Complete, &[], &aggs, &[t, d], vec![b]);
    assert_eq!(col_str(&out, 0), vec!["1970-01-04"]);
    assert_eq!(col_str(&out, 1), vec!["1970-01-11"]);
    assert_eq!(col_str(&out, 2), vec!["-0.5"]);
}

/// Rough timing of a TPC-H Q1-shaped aggregate (6M rows, 2 string keys, 4 groups):
/// `cargo test --release --lib q1_shape -- --ignored --nocapture`.

#[test]
fn aggregates_over_computed_arguments() {
    let (k, v) = (attr("k", DataType::Utf8), attr("v", DataType::Int64));
    let input = [k.clone(), v.clone()];
    let b = batch(&input, vec![strs(&[Some("a"), Some("b"), Some("a")]), ints(&[Some(1), Some(2), Some(3)])]);
    let doubled = v.expr().binary(crate::expr::BinaryOp::Multiply, Expr::lit(ScalarValue::Int64(2)));
    let out = run(AggregateMode::Complete, &[k.expr()], &[agg(AggFunc::Sum, doubled, false)], &input, vec![b]);
    assert_eq!(col_i64(&out, 1), vec![Some(8), Some(4)]);
}

#[test]
fn a_partial_aggregate_past_its_flush_groups_emits_them_and_the_final_one_merges_them() {
    assert!(partial_flush_due(4, 8, 4) && !partial_flush_due(4, 7, 4) && !partial_flush_due(3, 8, 4) && !partial_flush_due(4, 8, 0));
    let (k, s, v) = (attr("k", DataType::Int64), attr("s", DataType::Utf8), attr("v", DataType::Int64));
    let input = [k.clone(), s.clone(), v.clone()];
    // Clustered keys, NULL keys among them: each batch's keys fold two to a group.
    let keys: Vec<Option<i64>> = (0..48).map(|i| if i % 16 < 2 { None } else { Some(i / 2) }).collect();
    let names: Vec<Option<String>> = keys.iter().map(|k| k.map(|k| format!("name {}", k % 5))).collect();
    let values: Vec<Option<i64>> = (0..48).map(Some).collect();
    let batches: Vec<RecordBatch> = (0..6)
        .map(|b| {
            let r = b * 8..b * 8 + 8;
            let names: Vec<Option<&str>> = names[r.clone()].iter().map(|n| n.as_deref()).collect();
            batch(&input, vec![ints(&keys[r.clone()]), strs(&names), ints(&values[r])])
        })
        .collect();
    for grouping in [vec![k.expr()], vec![k.expr(), s.expr()]] {
        let aggs = [agg(AggFunc::Sum, v.expr(), false), agg(AggFunc::Count, one(), false)];
        let partial = |flush: usize| {
            let mut a = HashAggregator::new(AggregateMode::Partial, &grouping, &aggs, &[], &input).unwrap().flushing_at(flush);
            for b in &batches {
                a.push(b).unwrap();
            }
            a.finish().unwrap()
        };
        let (flushed, whole) = (partial(4), partial(0));
        assert!(flushed.len() > 2, "a partial aggregate past 4 groups emits them");
        assert_eq!(whole.len(), 1);
        let rows = |bs: &[RecordBatch]| bs.iter().map(RecordBatch::num_rows).sum::<usize>();
        assert!(rows(&flushed) >= rows(&whole));
        let mut mid = named_outputs(&grouping);
        mid.extend(aggs.iter().flat_map(|a| a.buffer.clone()));
        let sorted = |out: Vec<RecordBatch>| {
            let mut rows: Vec<(Option<i64>, Option<i64>, Option<i64>)> = {
                let n = grouping.len();
                col_i64(&out, 0).into_iter().zip(col_i64(&out, n)).zip(col_i64(&out, n + 1)).map(|((a, b), c)| (a, b, c)).collect()
            };
            rows.sort();
            rows
        };
        let merged = sorted(run(AggregateMode::Final, &grouping, &aggs, &mid, flushed));
        assert_eq!(merged, sorted(run(AggregateMode::Final, &grouping, &aggs, &mid, whole)));
        assert_eq!(merged.iter().map(|r| r.2.unwrap()).sum::<i64>(), 48);
    }
}
