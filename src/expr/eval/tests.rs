use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int32Array, StringArray};
use arrow::datatypes::{DataType, Field, Float64Type, Schema};
use arrow::record_batch::RecordBatch;

use super::{evaluate, evaluate_predicate, evaluate_scalar};
use crate::expr::{Attribute, BinaryOp, Expr, ScalarFunc};
use crate::types::{parse_date, ScalarValue};

fn lit(v: ScalarValue) -> Expr {
    Expr::Literal(v)
}
fn int(v: i32) -> Expr {
    lit(ScalarValue::Int32(v))
}
fn long(v: i64) -> Expr {
    lit(ScalarValue::Int64(v))
}
fn dbl(v: f64) -> Expr {
    lit(ScalarValue::Float64(v))
}
fn dec(v: i128, p: u8, s: i8) -> Expr {
    lit(ScalarValue::Decimal(v, p, s))
}
fn text(v: &str) -> Expr {
    lit(ScalarValue::Utf8(v.into()))
}
fn null(t: DataType) -> Expr {
    lit(ScalarValue::Null(t))
}
fn boolean(v: bool) -> Expr {
    lit(ScalarValue::Boolean(v))
}
fn bin(l: Expr, op: BinaryOp, r: Expr) -> Expr {
    l.binary(op, r)
}
fn cast(e: Expr, to: DataType) -> Expr {
    Expr::Cast { child: Box::new(e), to, zone: None }
}
fn func(func: ScalarFunc, args: Vec<Expr>) -> Expr {
    Expr::Function { func, args }
}
fn scalar(e: &Expr) -> ScalarValue {
    evaluate_scalar(e).unwrap_or_else(|err| panic!("{e}: {err}"))
}
fn error(e: &Expr) -> String {
    match evaluate_scalar(e) {
        Ok(v) => panic!("{e} gave {v:?}, expected an error"),
        Err(err) => err.to_string(),
    }
}

/// A batch with a single column `x`, and `x` as an expression.
fn column(array: ArrayRef) -> (RecordBatch, Vec<Attribute>, Expr) {
    let attr = Attribute::new("x", array.data_type().clone(), true);
    let schema = Schema::new(vec![Field::new("x", array.data_type().clone(), true)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![array]).expect("batch");
    let x = attr.expr();
    (batch, vec![attr], x)
}

fn bools(a: &ArrayRef) -> Vec<Option<bool>> {
    a.as_boolean().iter().collect()
}

#[test]
fn tpch_discounted_price_has_sparks_type_and_value() {
    // l_extendedprice * (1 - l_discount) * (1 + l_tax) with 1234.56, 0.06, 0.02
    let (price, disc, tax) = (dec(123456, 15, 2), dec(6, 15, 2), dec(2, 15, 2));
    let one = dec(1, 1, 0);
    let disc_price = bin(price, BinaryOp::Multiply, bin(one.clone(), BinaryOp::Minus, disc));
    assert_eq!(disc_price.data_type().unwrap(), DataType::Decimal128(32, 4));
    assert_eq!(scalar(&disc_price), ScalarValue::Decimal(11604864, 32, 4)); // 1160.4864
    let charge = bin(disc_price, BinaryOp::Multiply, bin(one, BinaryOp::Plus, tax));
    assert_eq!(scalar(&charge), ScalarValue::Decimal(1183696128, 38, 6)); // 1183.696128
}

#[test]
fn decimal_add_rescales_and_rounds_to_the_adjusted_scale() {
    assert_eq!(scalar(&bin(dec(15, 2, 1), BinaryOp::Plus, dec(25, 3, 2))), ScalarValue::Decimal(175, 4, 2));
    assert_eq!(scalar(&bin(dec(15, 2, 1), BinaryOp::Minus, dec(25, 3, 2))), ScalarValue::Decimal(125, 4, 2));
    // decimal(38,10) + decimal(38,10) is decimal(38,9): 5E-10 rounds HALF_UP to 1E-9
    assert_eq!(scalar(&bin(dec(5, 38, 10), BinaryOp::Plus, dec(0, 38, 10))), ScalarValue::Decimal(1, 38, 9));
    assert_eq!(scalar(&bin(dec(-5, 38, 10), BinaryOp::Plus, dec(0, 38, 10))), ScalarValue::Decimal(-1, 38, 9));
}

#[test]
fn decimal_divide_and_remainder() {
    // decimal(10,2) / decimal(10,0) is decimal(21,13): 8 integral digits + scale max(6, 2+10+1)
    let third = bin(dec(100, 10, 2), BinaryOp::Divide, dec(3, 10, 0));
    assert_eq!(scalar(&third), ScalarValue::Decimal(3333333333333, 21, 13));
    let two_thirds = bin(dec(-200, 10, 2), BinaryOp::Divide, dec(3, 10, 0));
    assert_eq!(scalar(&two_thirds), ScalarValue::Decimal(-6666666666667, 21, 13));
    assert!(error(&bin(dec(100, 10, 2), BinaryOp::Divide, dec(0, 10, 0))).starts_with(
        "[DIVIDE_BY_ZERO] Division by zero. Use try_divide to tolerate divisor being 0 and return NULL instead."
    ));
    // -7.5 % 2 = -1.5 (sign of the dividend)
    assert_eq!(scalar(&bin(dec(-75, 2, 1), BinaryOp::Modulo, dec(2, 1, 0))), ScalarValue::Decimal(-15, 2, 1));
    assert!(error(&bin(dec(75, 2, 1), BinaryOp::Modulo, dec(0, 1, 0))).starts_with("[REMAINDER_BY_ZERO]"));
    assert_eq!(scalar(&bin(null(DataType::Decimal128(2, 1)), BinaryOp::Divide, dec(0, 1, 0))), ScalarValue::Null(DataType::Decimal128(7, 6)));
}

#[test]
fn decimal_overflow_is_an_error() {
    let max = dec(10i128.pow(38) - 1, 38, 0);
    let e = error(&bin(max.clone(), BinaryOp::Plus, dec(1, 38, 0)));
    assert!(e.starts_with("[NUMERIC_VALUE_OUT_OF_RANGE"), "{e}");
    assert!(error(&bin(max, BinaryOp::Multiply, dec(2, 1, 0))).starts_with("[NUMERIC_VALUE_OUT_OF_RANGE"));
}

#[test]
fn integer_overflow_and_division_by_zero_are_errors() {
    let e = error(&bin(int(i32::MAX), BinaryOp::Plus, int(1)));
    assert!(e.starts_with("[ARITHMETIC_OVERFLOW] integer overflow. Use 'try_add'"), "{e}");
    assert!(error(&bin(long(i64::MIN), BinaryOp::Minus, long(1))).starts_with("[ARITHMETIC_OVERFLOW] long overflow."));
    assert!(error(&bin(int(1 << 20), BinaryOp::Multiply, int(1 << 12))).starts_with("[ARITHMETIC_OVERFLOW]"));
    assert!(error(&Expr::Negative(Box::new(int(i32::MIN)))).starts_with("[ARITHMETIC_OVERFLOW]"));
    assert!(error(&func(ScalarFunc::Abs, vec![long(i64::MIN)])).starts_with("[ARITHMETIC_OVERFLOW]"));
    assert!(error(&bin(int(7), BinaryOp::Modulo, int(0))).starts_with("[REMAINDER_BY_ZERO]"));
    assert!(error(&bin(dbl(1.0), BinaryOp::Divide, dbl(0.0))).starts_with("[DIVIDE_BY_ZERO]"));
    assert!(error(&bin(dbl(1.0), BinaryOp::Divide, dbl(-0.0))).starts_with("[DIVIDE_BY_ZERO]"));
    assert_eq!(scalar(&bin(int(-7), BinaryOp::Modulo, int(3))), ScalarValue::Int32(-1));
    assert_eq!(scalar(&bin(int(i32::MIN), BinaryOp::Modulo, int(-1))), ScalarValue::Int32(0));
    assert_eq!(scalar(&bin(null(DataType::Float64), BinaryOp::Divide, dbl(0.0))), ScalarValue::Null(DataType::Float64));
    assert_eq!(scalar(&bin(int(2), BinaryOp::Plus, null(DataType::Int32))), ScalarValue::Null(DataType::Int32));
}

#[test]
fn division_by_zero_in_a_column_is_found() {
    let (batch, input, x) = column(Arc::new(Float64Array::from(vec![Some(2.0), None, Some(0.0)])));
    let e = evaluate(&bin(dbl(1.0), BinaryOp::Divide, x), &batch, &input).unwrap_err().to_string();
    assert!(e.starts_with("[DIVIDE_BY_ZERO]"), "{e}");
}

#[test]
fn ansi_casts_from_strings() {
    assert_eq!(
        error(&cast(text("abc"), DataType::Int32)),
        "[CAST_INVALID_INPUT] The value 'abc' of the type \"STRING\" cannot be cast to \"INT\" because it is malformed. \
         Correct the value as per the syntax, or change its target type. Use `try_cast` to tolerate malformed input and \
         return NULL instead."
    );
    assert_eq!(scalar(&cast(text(" 42 "), DataType::Int32)), ScalarValue::Int32(42));
    assert_eq!(scalar(&cast(text("-12"), DataType::Int32)), ScalarValue::Int32(-12));
    // ANSI parsing rejects a fraction (non-ANSI Spark would truncate)
    assert!(error(&cast(text("1.9"), DataType::Int32)).starts_with("[CAST_INVALID_INPUT]"));
    assert!(error(&cast(text("-"), DataType::Int32)).starts_with("[CAST_INVALID_INPUT]"));
    assert_eq!(scalar(&cast(text("+7"), DataType::Int64)), ScalarValue::Int64(7));
    assert!(error(&cast(text("3000000000"), DataType::Int32)).starts_with("[CAST_INVALID_INPUT]"));
    assert!(error(&cast(text("1e3"), DataType::Int32)).starts_with("[CAST_INVALID_INPUT]"));
    assert!(error(&cast(text(""), DataType::Int64)).starts_with("[CAST_INVALID_INPUT]"));
    assert_eq!(scalar(&cast(text("1.5e3"), DataType::Float64)), ScalarValue::Float64(1500.0));
    assert!(matches!(scalar(&cast(text("-Infinity"), DataType::Float64)), ScalarValue::Float64(v) if v == f64::NEG_INFINITY));
    assert!(error(&cast(text("1.5x"), DataType::Float64)).contains("cannot be cast to \"DOUBLE\""));
    assert_eq!(scalar(&cast(text(" 12.345 "), DataType::Decimal128(5, 2))), ScalarValue::Decimal(1235, 5, 2));
    assert!(error(&cast(text("1234.5"), DataType::Decimal128(5, 2))).starts_with("[NUMERIC_VALUE_OUT_OF_RANGE"));
    assert!(error(&cast(text("12a"), DataType::Decimal128(5, 2))).contains("cannot be cast to \"DECIMAL(5,2)\""));
    assert_eq!(scalar(&cast(text("1998-09-02"), DataType::Date32)), ScalarValue::Date32(10471));
    assert!(error(&cast(text("1998-13-02"), DataType::Date32)).contains("cannot be cast to \"DATE\""));
    assert_eq!(scalar(&cast(text("Yes"), DataType::Boolean)), ScalarValue::Boolean(true));
    assert!(error(&cast(text("maybe"), DataType::Boolean)).starts_with("[CAST_INVALID_INPUT]"));
}

#[test]
fn ansi_numeric_casts() {
    let e = error(&cast(long(3_000_000_000), DataType::Int32));
    assert!(e.starts_with("[CAST_OVERFLOW] The value 3000000000L of the type \"BIGINT\" cannot be cast to \"INT\" due to an overflow."), "{e}");
    assert!(error(&cast(dbl(1e10), DataType::Int32)).starts_with("[CAST_OVERFLOW]"));
    assert!(error(&cast(dbl(f64::NAN), DataType::Int64)).starts_with("[CAST_OVERFLOW]"));
    assert_eq!(scalar(&cast(dbl(-2.9), DataType::Int32)), ScalarValue::Int32(-2));
    assert_eq!(scalar(&cast(dec(-299, 3, 2), DataType::Int32)), ScalarValue::Int32(-2));
    assert!(error(&cast(dec(3_000_000_000, 10, 0), DataType::Int32)).starts_with("[CAST_OVERFLOW] The value 3000000000BD"));
    // decimal -> decimal rounds HALF_UP
    assert_eq!(scalar(&cast(dec(1255, 4, 3), DataType::Decimal128(3, 2))), ScalarValue::Decimal(126, 3, 2));
    assert_eq!(scalar(&cast(dec(-1255, 4, 3), DataType::Decimal128(3, 2))), ScalarValue::Decimal(-126, 3, 2));
    assert!(error(&cast(dec(12345, 5, 2), DataType::Decimal128(4, 2))).starts_with("[NUMERIC_VALUE_OUT_OF_RANGE"));
    assert_eq!(scalar(&cast(int(42), DataType::Decimal128(5, 2))), ScalarValue::Decimal(4200, 5, 2));
    assert!(error(&cast(int(1000), DataType::Decimal128(5, 2))).starts_with("[NUMERIC_VALUE_OUT_OF_RANGE"));
    // a double goes through its shortest decimal form: 1.005 -> 1.01, not 1.00
    assert_eq!(scalar(&cast(dbl(1.005), DataType::Decimal128(5, 2))), ScalarValue::Decimal(101, 5, 2));
    assert_eq!(scalar(&cast(dbl(f64::NAN), DataType::Decimal128(5, 2))), ScalarValue::Null(DataType::Decimal128(5, 2)));
    assert_eq!(scalar(&cast(dec(1, 20, 1), DataType::Float64)), ScalarValue::Float64(0.1));
    assert_eq!(scalar(&cast(dec(i128::from(i64::MAX), 38, 30), DataType::Float64)), ScalarValue::Float64(9.223372036854777e-12));
    assert_eq!(scalar(&cast(int(0), DataType::Boolean)), ScalarValue::Boolean(false));
    assert_eq!(scalar(&cast(boolean(true), DataType::Decimal128(3, 1))), ScalarValue::Decimal(10, 3, 1));
}

#[test]
fn casts_to_string() {
    assert_eq!(scalar(&cast(dec(4000, 10, 2), DataType::Utf8)), ScalarValue::Utf8("40.00".into()));
    assert_eq!(scalar(&cast(dec(-5, 10, 2), DataType::Utf8)), ScalarValue::Utf8("-0.05".into()));
    assert_eq!(scalar(&cast(int(-12), DataType::Utf8)), ScalarValue::Utf8("-12".into()));
    assert_eq!(scalar(&cast(boolean(true), DataType::Utf8)), ScalarValue::Utf8("true".into()));
    assert_eq!(scalar(&cast(lit(ScalarValue::Date32(10471)), DataType::Utf8)), ScalarValue::Utf8("1998-09-02".into()));
    assert_eq!(scalar(&cast(null(DataType::Int32), DataType::Utf8)), ScalarValue::Null(DataType::Utf8));
}

#[test]
fn comparisons_follow_spark() {
    let b = |e: Expr| scalar(&e);
    assert_eq!(b(bin(dec(150, 3, 2), BinaryOp::Eq, dec(15, 2, 1))), ScalarValue::Boolean(true));
    assert_eq!(b(bin(dec(15, 2, 1), BinaryOp::Lt, dec(151, 3, 2))), ScalarValue::Boolean(true));
    // rescaling decimal(38,0) to scale 10 needs more than 38 digits
    assert_eq!(b(bin(dec(10i128.pow(37), 38, 0), BinaryOp::Gt, dec(1, 38, 10))), ScalarValue::Boolean(true));
    assert_eq!(b(bin(dbl(-0.0), BinaryOp::Eq, dbl(0.0))), ScalarValue::Boolean(true));
    assert_eq!(b(bin(dbl(f64::NAN), BinaryOp::Eq, dbl(-f64::NAN))), ScalarValue::Boolean(true));
    assert_eq!(b(bin(dbl(f64::NAN), BinaryOp::Gt, dbl(f64::INFINITY))), ScalarValue::Boolean(true));
    assert_eq!(b(bin(text("b"), BinaryOp::GtEq, text("abc"))), ScalarValue::Boolean(true));
    assert_eq!(b(bin(int(1), BinaryOp::NotEq, null(DataType::Int32))), ScalarValue::Null(DataType::Boolean));
    assert_eq!(b(bin(null(DataType::Int32), BinaryOp::EqNullSafe, null(DataType::Int32))), ScalarValue::Boolean(true));
    assert_eq!(b(bin(int(1), BinaryOp::EqNullSafe, null(DataType::Int32))), ScalarValue::Boolean(false));
}

#[test]
fn three_valued_and_or_not() {
    let n = || null(DataType::Boolean);
    let cases = [
        (boolean(true), BinaryOp::And, n(), None),
        (boolean(false), BinaryOp::And, n(), Some(false)),
        (n(), BinaryOp::And, boolean(false), Some(false)),
        (boolean(true), BinaryOp::Or, n(), Some(true)),
        (n(), BinaryOp::Or, boolean(true), Some(true)),
        (boolean(false), BinaryOp::Or, n(), None),
        (n(), BinaryOp::Or, n(), None),
    ];
    for (l, op, r, want) in cases {
        let e = bin(l, op, r);
        let got = match scalar(&e) {
            ScalarValue::Boolean(v) => Some(v),
            ScalarValue::Null(_) => None,
            other => panic!("{e} gave {other:?}"),
        };
        assert_eq!(got, want, "{e}");
    }
    assert_eq!(scalar(&Expr::Not(Box::new(n()))), ScalarValue::Null(DataType::Boolean));
    assert_eq!(scalar(&Expr::IsNull(Box::new(n()))), ScalarValue::Boolean(true));
}

#[test]
fn and_or_skip_rows_the_left_side_decides() {
    let (batch, input, x) = column(Arc::new(Float64Array::from(vec![Some(0.0), Some(2.0), None, Some(20.0)])));
    let nonzero = bin(x.clone(), BinaryOp::NotEq, dbl(0.0));
    let small = bin(bin(dbl(1.0), BinaryOp::Divide, x.clone()), BinaryOp::Gt, dbl(0.1));
    let and = evaluate_predicate(&bin(nonzero.clone(), BinaryOp::And, small.clone()), &batch, &input).unwrap();
    assert_eq!(and.iter().collect::<Vec<_>>(), vec![Some(false), Some(true), None, Some(false)]);
    let is_zero = bin(x, BinaryOp::Eq, dbl(0.0));
    let or = evaluate_predicate(&bin(is_zero, BinaryOp::Or, small), &batch, &input).unwrap();
    assert_eq!(or.iter().collect::<Vec<_>>(), vec![Some(true), Some(true), None, Some(false)]);
}

#[test]
fn case_when_evaluates_values_only_on_selected_rows() {
    let (batch, input, x) = column(Arc::new(Float64Array::from(vec![Some(0.0), Some(2.0), None, Some(4.0)])));
    let inverse = bin(dbl(1.0), BinaryOp::Divide, x.clone());
    let case = Expr::CaseWhen { branches: vec![(bin(x.clone(), BinaryOp::NotEq, dbl(0.0)), inverse.clone())], else_expr: None, if_form: false };
    let out = evaluate(&case, &batch, &input).unwrap();
    let got: Vec<Option<f64>> = out.as_primitive::<Float64Type>().iter().collect();
    assert_eq!(got, vec![None, Some(0.5), None, Some(0.25)]);

    // first true branch wins; ELSE takes the rest, including NULL conditions
    let case = Expr::CaseWhen {
        branches: vec![
            (bin(x.clone(), BinaryOp::Gt, dbl(1.0)), dbl(1.0)),
            (bin(x.clone(), BinaryOp::Gt, dbl(3.0)), dbl(2.0)),
            (bin(x.clone(), BinaryOp::Eq, dbl(0.0)), inverse.clone()),
        ],
        else_expr: Some(Box::new(dbl(-1.0))),
        if_form: false,
    };
    let err = evaluate(&case, &batch, &input).unwrap_err().to_string();
    assert!(err.starts_with("[DIVIDE_BY_ZERO]"), "{err}");
    let case = Expr::CaseWhen {
        branches: vec![(bin(x.clone(), BinaryOp::Gt, dbl(1.0)), dbl(1.0)), (bin(x.clone(), BinaryOp::Gt, dbl(3.0)), dbl(2.0))],
        else_expr: Some(Box::new(dbl(-1.0))),
        if_form: false,
    };
    let got: Vec<Option<f64>> = evaluate(&case, &batch, &input).unwrap().as_primitive::<Float64Type>().iter().collect();
    assert_eq!(got, vec![Some(-1.0), Some(1.0), Some(-1.0), Some(1.0)]);
}

#[test]
fn in_list_null_semantics() {
    let list = |v: Expr, items: Vec<Expr>, negated: bool| scalar(&Expr::InList { child: Box::new(v), list: items, negated });
    let with_null = || vec![int(1), null(DataType::Int32)];
    assert_eq!(list(int(1), with_null(), false), ScalarValue::Boolean(true));
    assert_eq!(list(int(2), with_null(), false), ScalarValue::Null(DataType::Boolean));
    assert_eq!(list(int(2), with_null(), true), ScalarValue::Null(DataType::Boolean));
    assert_eq!(list(int(1), with_null(), true), ScalarValue::Boolean(false));
    assert_eq!(list(int(2), vec![int(1), int(3)], false), ScalarValue::Boolean(false));
    assert_eq!(list(int(2), vec![int(1), int(3)], true), ScalarValue::Boolean(true));
    assert_eq!(list(null(DataType::Int32), vec![int(1)], false), ScalarValue::Null(DataType::Boolean));
    assert_eq!(list(dec(150, 3, 2), vec![dec(15, 2, 1)], false), ScalarValue::Boolean(true));
}

#[test]
fn like_patterns() {
    let (batch, input, x) = column(Arc::new(StringArray::from(vec![Some("abc"), Some("a%"), Some("ab"), None, Some("a\nc")])));
    let like = |p: &str, negated: bool| {
        let e = Expr::Like { child: Box::new(x.clone()), pattern: Box::new(text(p)), negated };
        bools(&evaluate(&e, &batch, &input).unwrap())
    };
    assert_eq!(like("a%", false), vec![Some(true), Some(true), Some(true), None, Some(true)]);
    assert_eq!(like("a_c", false), vec![Some(true), Some(false), Some(false), None, Some(true)]);
    assert_eq!(like("a\\%", false), vec![Some(false), Some(true), Some(false), None, Some(false)]);
    assert_eq!(like("%b%", true), vec![Some(false), Some(true), Some(false), None, Some(true)]);
    assert_eq!(like("a.c", false), vec![Some(false); 3].into_iter().chain([None, Some(false)]).collect::<Vec<_>>());
    let bad = Expr::Like { child: Box::new(x.clone()), pattern: Box::new(text("a\\b")), negated: false };
    assert!(evaluate(&bad, &batch, &input).unwrap_err().to_string().contains("ESC_IN_THE_MIDDLE"));
    let null_pattern = Expr::Like { child: Box::new(x), pattern: Box::new(null(DataType::Utf8)), negated: false };
    assert_eq!(bools(&evaluate(&null_pattern, &batch, &input).unwrap()), vec![None; 5]);
}

#[test]
fn string_functions() {
    let s = |e: Expr| scalar(&e);
    let substr = |args: Vec<Expr>| s(func(ScalarFunc::Substring, args));
    assert_eq!(substr(vec![text("Spark SQL"), int(5)]), ScalarValue::Utf8("k SQL".into()));
    assert_eq!(substr(vec![text("Spark SQL"), int(-3), int(2)]), ScalarValue::Utf8("SQ".into()));
    assert_eq!(substr(vec![text("Spark SQL"), int(0), int(1)]), ScalarValue::Utf8("S".into()));
    assert_eq!(substr(vec![text("Spark SQL"), null(DataType::Int32)]), ScalarValue::Null(DataType::Utf8));
    assert_eq!(s(func(ScalarFunc::Length, vec![text("héllo")])), ScalarValue::Int32(5));
    assert_eq!(s(func(ScalarFunc::Upper, vec![text("héllo")])), ScalarValue::Utf8("HÉLLO".into()));
    assert_eq!(s(func(ScalarFunc::Lower, vec![text("ABC")])), ScalarValue::Utf8("abc".into()));
    assert_eq!(s(func(ScalarFunc::Concat, vec![text("a"), int(1), text("b")])), ScalarValue::Utf8("a1b".into()));
    assert_eq!(s(func(ScalarFunc::Concat, vec![text("a"), null(DataType::Utf8)])), ScalarValue::Null(DataType::Utf8));
}

#[test]
fn coalesce_is_lazy_and_fills_nulls() {
    let (batch, input, x) = column(Arc::new(Int32Array::from(vec![Some(1), None, Some(3)])));
    let e = func(ScalarFunc::Coalesce, vec![x, null(DataType::Int32), int(9)]);
    let got: Vec<Option<i32>> = evaluate(&e, &batch, &input).unwrap().as_primitive::<arrow::datatypes::Int32Type>().iter().collect();
    assert_eq!(got, vec![Some(1), Some(9), Some(3)]);
    let lazy = func(ScalarFunc::Coalesce, vec![dbl(1.0), bin(dbl(1.0), BinaryOp::Divide, dbl(0.0))]);
    assert_eq!(scalar(&lazy), ScalarValue::Float64(1.0));
}

#[test]
fn round_and_abs() {
    let round = |x: Expr, d: i32| func(ScalarFunc::Round, vec![x, int(d)]);
    let r = round(dec(2345, 4, 3), 2);
    assert_eq!(r.data_type().unwrap(), DataType::Decimal128(4, 2));
    assert_eq!(scalar(&r), ScalarValue::Decimal(235, 4, 2));
    assert_eq!(scalar(&round(dec(-2345, 4, 3), 2)), ScalarValue::Decimal(-235, 4, 2));
    assert_eq!(scalar(&round(dec(125, 3, 0), -1)), ScalarValue::Decimal(130, 4, 0));
    assert_eq!(scalar(&round(dec(999, 3, 1), 0)), ScalarValue::Decimal(100, 3, 0));
    assert_eq!(scalar(&round(dbl(2.5), 0)), ScalarValue::Float64(3.0));
    assert_eq!(scalar(&round(dbl(1.005), 2)), ScalarValue::Float64(1.01));
    assert_eq!(scalar(&round(int(15), -1)), ScalarValue::Int32(20));
    assert_eq!(scalar(&func(ScalarFunc::Abs, vec![dec(-150, 3, 2)])), ScalarValue::Decimal(150, 3, 2));
    assert_eq!(scalar(&func(ScalarFunc::Abs, vec![int(-3)])), ScalarValue::Int32(3));
}

#[test]
fn date_functions() {
    let date = lit(ScalarValue::Date32(parse_date("1998-12-01").unwrap()));
    assert_eq!(scalar(&func(ScalarFunc::DateSub, vec![date.clone(), int(90)])), ScalarValue::Date32(10471));
    assert_eq!(scalar(&func(ScalarFunc::DateAdd, vec![lit(ScalarValue::Date32(10471)), int(90)])), scalar(&date));
    assert_eq!(scalar(&func(ScalarFunc::Year, vec![date.clone()])), ScalarValue::Int32(1998));
    let minus = bin(date, BinaryOp::Minus, lit(ScalarValue::IntervalMicros(90 * crate::types::timestamp::MICROS_PER_DAY, 0, 0)));
    assert_eq!(scalar(&minus), ScalarValue::Date32(10471));
}

#[test]
fn rand_is_deterministic_per_seed() {
    let (batch, input, _) = column(Arc::new(Int32Array::from(vec![1, 2, 3, 4])));
    let r = func(ScalarFunc::Rand, vec![int(42)]);
    let a = evaluate(&r, &batch, &input).unwrap();
    let b = evaluate(&r, &batch, &input).unwrap();
    assert_eq!(a.as_ref(), b.as_ref());
    let values: Vec<f64> = a.as_primitive::<Float64Type>().values().to_vec();
    assert!(values.iter().all(|v| (0.0..1.0).contains(v)));
    assert!(values.windows(2).any(|w| w[0] != w[1]));
}

#[test]
fn scalars_and_errors_for_non_scalar_nodes() {
    assert_eq!(scalar(&bin(int(2), BinaryOp::Multiply, int(3)).alias("six")), ScalarValue::Int32(6));
    assert_eq!(scalar(&null(DataType::Null)), ScalarValue::Null(DataType::Null));
    let agg = Expr::Aggregate { func: crate::expr::AggFunc::Sum, args: vec![int(1)], distinct: false };
    assert!(error(&agg).starts_with("internal error"));
}
