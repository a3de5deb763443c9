//! Each expression form: its tree and its Spark-style text.

use arrow::datatypes::DataType;

use super::{err, expr};
use crate::expr::{BinaryOp, Expr};
use crate::types::{parse_date, ScalarValue};

fn literal(text: &str) -> ScalarValue {
    match expr(text) {
        Expr::Literal(v) => v,
        other => panic!("{text}: not a literal: {other:?}"),
    }
}

fn shown(text: &str) -> String {
    expr(text).to_string()
}

#[test]
fn identifiers_keep_their_case_and_qualifiers() {
    assert_eq!(expr("Amount"), Expr::UnresolvedAttribute(vec!["Amount".into()]));
    assert_eq!(expr("o.amount"), Expr::UnresolvedAttribute(vec!["o".into(), "amount".into()]));
    assert_eq!(expr("`weird col`"), Expr::UnresolvedAttribute(vec!["weird col".into()]));
    assert_eq!(expr("*"), Expr::UnresolvedStar(None));
    assert_eq!(expr("o.*"), Expr::UnresolvedStar(Some("o".into())));
}

#[test]
fn integer_literals_take_the_narrowest_spark_type() {
    assert_eq!(literal("42"), ScalarValue::Int32(42));
    assert_eq!(literal("-5"), ScalarValue::Int32(-5));
    assert_eq!(literal("-2147483648"), ScalarValue::Int32(i32::MIN));
    assert_eq!(literal("2147483648"), ScalarValue::Int64(2147483648));
    assert_eq!(literal("10L"), ScalarValue::Int64(10));
    assert_eq!(literal("99999999999999999999"), ScalarValue::Decimal(99999999999999999999, 20, 0));
}

#[test]
fn decimal_literals_keep_precision_and_scale() {
    assert_eq!(literal("1.5"), ScalarValue::Decimal(15, 2, 1));
    assert_eq!(literal("1.50"), ScalarValue::Decimal(150, 3, 2));
    assert_eq!(literal(".06"), ScalarValue::Decimal(6, 2, 2));
    assert_eq!(literal("-0.5"), ScalarValue::Decimal(-5, 1, 1));
    assert_eq!(literal("100.00"), ScalarValue::Decimal(10000, 5, 2));
    assert_eq!(shown("100.00"), "100.00");
    assert_eq!(literal("1e3"), ScalarValue::Float64(1000.0));
    assert!(err("SELECT 1234567890123456789012345678901234567890.5").contains("DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION"));
}

#[test]
fn other_literals() {
    assert_eq!(literal("'it''s'"), ScalarValue::Utf8("it's".into()));
    assert_eq!(literal("\"dq\""), ScalarValue::Utf8("dq".into()));
    assert_eq!(literal("TRUE"), ScalarValue::Boolean(true));
    assert_eq!(literal("false"), ScalarValue::Boolean(false));
    assert_eq!(literal("NULL"), ScalarValue::Null(DataType::Null));
    assert_eq!(literal("DATE '1998-12-01'"), ScalarValue::Date32(parse_date("1998-12-01").unwrap()));
    let days = |d: i64| ScalarValue::IntervalMicros(d * crate::types::timestamp::MICROS_PER_DAY, 0, 0);
    assert_eq!(literal("INTERVAL '90' DAY"), days(90));
    assert_eq!(literal("INTERVAL 90 DAYS"), days(90));
    assert_eq!(literal("INTERVAL '2' WEEK"), days(14));
    assert_eq!(literal("INTERVAL '3 days 4 hours'"), ScalarValue::IntervalMicros(3 * crate::types::timestamp::MICROS_PER_DAY + 14_400_000_000, 0, 1));
}

#[test]
fn year_and_month_intervals_fold_into_date_literals() {
    assert_eq!(shown("DATE '1994-01-31' + INTERVAL '1' MONTH"), "1994-02-28");
    assert_eq!(shown("DATE '1996-02-29' + INTERVAL '1' YEAR"), "1997-02-28");
    assert_eq!(shown("DATE '1994-03-15' - INTERVAL '3' MONTH"), "1993-12-15");
    assert_eq!(shown("DATE '1998-12-01' - INTERVAL '90' DAY"), "(1998-12-01 - INTERVAL '90' DAY)");
    // Over a column the interval stays, for the analyzer's add_months.
    assert_eq!(shown("d + INTERVAL '1' YEAR"), "('d + INTERVAL '1' YEAR)");
    // Spark's sub-second units are seconds (`INTERVAL '1' MILLISECOND` is an interval second); a
    // nanosecond is Spark's INVALID_UNIT.
    assert!(err("SELECT INTERVAL 10 NANOSECONDS").contains("INVALID_INTERVAL_FORMAT.INVALID_UNIT"));
}

#[test]
fn bad_literals_are_named() {
    assert!(err("SELECT DATE '1998-13-01'").contains("The value of the typed literal \"DATE\" is invalid: '1998-13-01'"));
    assert!(err("SELECT TIMESTAMP '2020-01-01 25:00:00'").contains("INVALID_TYPED_LITERAL"));
}

#[test]
fn arithmetic_and_comparisons_print_like_spark() {
    assert_eq!(shown("a + b * c"), "('a + ('b * 'c))");
    assert_eq!(shown("(a + b) * c"), "(('a + 'b) * 'c)");
    assert_eq!(shown("a - b / c % d"), "('a - (('b / 'c) % 'd))");
    assert_eq!(shown("-a"), "-'a");
    assert_eq!(shown("a = 1"), "('a = 1)");
    assert_eq!(shown("a == 1"), "('a = 1)");
    assert_eq!(shown("a <> 1"), "('a != 1)");
    assert_eq!(shown("a != 1"), "('a != 1)");
    assert_eq!(shown("a <=> b"), "('a <=> 'b)");
    assert_eq!(shown("a < 1 OR a >= 2 OR a <= 3 OR a > 4"), "((('a < 1) OR ('a >= 2)) OR (('a <= 3) OR ('a > 4)))");
    assert_eq!(shown("a DIV b"), "('a div 'b)");
}

#[test]
fn and_chains_are_balanced_as_sparks_parser_builds_them() {
    assert_eq!(shown("a AND b AND c"), "(('a AND 'b) AND 'c)");
    assert_eq!(shown("a AND b AND c AND d AND e"), "((('a AND 'b) AND 'c) AND ('d AND 'e))");
    // Parentheses stop the chain.
    assert_eq!(shown("a AND (b AND c)"), "('a AND ('b AND 'c))");
    assert_eq!(shown("a OR b AND c"), "('a OR ('b AND 'c))");
    assert_eq!(shown("NOT a AND b"), "(NOT 'a AND 'b)");
}

#[test]
fn predicates() {
    assert_eq!(shown("a IS NULL"), "isnull('a)");
    assert_eq!(shown("a IS NOT NULL"), "isnotnull('a)");
    assert_eq!(shown("a BETWEEN 1 AND 2"), "(('a >= 1) AND ('a <= 2))");
    assert_eq!(shown("a NOT BETWEEN 1 AND 2"), "NOT (('a >= 1) AND ('a <= 2))");
    assert_eq!(shown("a IN (1, 2)"), "'a IN (1,2)");
    assert_eq!(shown("a NOT IN ('x')"), "NOT 'a IN (x)");
    assert_eq!(shown("a LIKE 'x%'"), "'a LIKE x%");
    assert_eq!(shown("a NOT LIKE 'x%'"), "NOT 'a LIKE x%");
    assert_eq!(shown("a IS TRUE"), "('a <=> true)");
    assert_eq!(shown("a IS DISTINCT FROM b"), "NOT ('a <=> 'b)");
}

#[test]
fn case_forms() {
    assert_eq!(shown("CASE WHEN a > 1 THEN 'x' ELSE 'y' END"), "CASE WHEN ('a > 1) THEN x ELSE y END");
    assert_eq!(shown("CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' END"), "CASE WHEN ('a = 1) THEN x WHEN ('a = 2) THEN y END");
}

#[test]
fn casts_map_spark_type_names_to_arrow() {
    let to = |t: &str| match expr(&format!("CAST(a AS {t})")) {
        Expr::Cast { to, .. } => to,
        other => panic!("{other:?}"),
    };
    assert_eq!(to("boolean"), DataType::Boolean);
    assert_eq!(to("tinyint"), DataType::Int8);
    assert_eq!(to("smallint"), DataType::Int16);
    assert_eq!(to("int"), DataType::Int32);
    assert_eq!(to("integer"), DataType::Int32);
    assert_eq!(to("bigint"), DataType::Int64);
    assert_eq!(to("long"), DataType::Int64);
    assert_eq!(to("float"), DataType::Float32);
    assert_eq!(to("double"), DataType::Float64);
    assert_eq!(to("decimal"), DataType::Decimal128(10, 0));
    assert_eq!(to("decimal(12, 2)"), DataType::Decimal128(12, 2));
    assert_eq!(to("string"), DataType::Utf8);
    assert_eq!(to("varchar(10)"), DataType::Utf8);
    assert_eq!(to("char(3)"), DataType::Utf8);
    assert_eq!(to("text"), DataType::Utf8);
    assert_eq!(to("date"), DataType::Date32);
    assert_eq!(shown("CAST(a AS decimal(12,2))"), "cast('a as decimal(12,2))");
    assert_eq!(shown("a::int"), "cast('a as int)");
    assert_eq!(to("timestamp"), crate::types::timestamp_type(false));
    assert_eq!(to("timestamp_ntz"), crate::types::timestamp_type(true));
    assert_eq!(to("binary"), DataType::Binary);
    assert_eq!(to("interval year to month"), crate::types::interval::YEAR_MONTH);
    assert_eq!(to("interval day"), crate::types::interval::DAY);
    assert_eq!(to("interval hour to second"), crate::types::interval::day_time(crate::types::interval::HOUR, crate::types::interval::SECOND));
    assert_eq!(to("interval day to second"), crate::types::interval::DAY_TIME);
    assert_eq!(to("interval"), crate::types::interval::CALENDAR);
    assert!(err("SELECT CAST(a AS GEOMETRY) FROM t").contains("unsupported SQL: data type GEOMETRY"));
    assert!(err("SELECT CAST(a AS DECIMAL(50, 2)) FROM t").contains("invalid type DECIMAL(50,2)"));
    assert_eq!(crate::sql::parse_data_type("decimal(5,1)").unwrap(), DataType::Decimal128(5, 1));
    assert!(crate::sql::parse_data_type("int x").is_err());
}

#[test]
fn functions_keep_their_name_as_written() {
    assert_eq!(shown("COUNT(*)"), "'COUNT(1)");
    assert_eq!(shown("count(*)"), "'count(1)");
    assert_eq!(shown("count(DISTINCT a)"), "'count(distinct 'a)");
    assert_eq!(shown("SUM(o.amount)"), "'SUM('o.amount)");
    assert_eq!(shown("coalesce(a, 0)"), "'coalesce('a, 0)");
    assert_eq!(shown("lower(status)"), "'lower('status)");
    assert_eq!(shown("a || b"), "'concat('a, 'b)");
    assert_eq!(shown("SUBSTRING(s FROM 2 FOR 3)"), "'substring('s, 2, 3)");
    assert_eq!(shown("substring(s, 2, 3)"), "'substring('s, 2, 3)");
    assert_eq!(shown("substr(s, 2)"), "'substr('s, 2)");
    assert_eq!(shown("EXTRACT(YEAR FROM d)"), "'extract(YEAR, 'd)");
    assert_eq!(shown("extract(mon from d)"), "'extract(mon, 'd)");
    assert_eq!(shown("((a))"), "'a");
}

#[test]
fn unary_minus_folds_only_into_a_number() {
    assert_eq!(literal("-1.5"), ScalarValue::Decimal(-15, 2, 1));
    assert_eq!(expr("-(1)"), Expr::Negative(Box::new(Expr::Literal(ScalarValue::Int32(1)))));
    assert_eq!(shown("1 - -2"), "(1 - -2)");
    assert!(matches!(expr("a - 1"), Expr::Binary { op: BinaryOp::Minus, .. }));
}

#[test]
fn unsupported_expressions_name_the_construct() {
    let e = err("SELECT sum(x) OVER (ORDER BY y GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t");
    assert!(e.contains("unsupported SQL: GROUPS window frames at Line: 1, Column: 8"), "{e}");
    assert!(err("SELECT 1 IN UNNEST(x)").contains("unsupported SQL"));
    assert!(err("SELECT TRIM(a, 'x', 'y') FROM t").contains("unsupported SQL: TRIM with several character arguments"));
    assert!(err("SELECT a SIMILAR TO 'x' FROM t").contains("SIMILAR TO"));
    assert!(err("SELECT abs(x) FILTER (WHERE x > 1) FROM t").contains("FILTER (WHERE ...)"));
    assert!(err("SELECT a LIKE 'x' ESCAPE '!!' FROM t").contains("INVALID_ESC"));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let sum = format!("SELECT {}1", "1 + ".repeat(2000));
    assert!(err(&sum).contains("nested more than"));
    let sum = format!("SELECT {}1", "a + ".repeat(150));
    assert!(super::super::parse_query(&sum).is_ok());
    let nested = format!("SELECT {}1{}", "abs(".repeat(40), ")".repeat(40));
    assert!(super::super::parse_query(&nested).is_ok());
    let deep_unsupported = format!("SELECT TRIM(a, 'x', {}1) FROM t", "1 + ".repeat(2000));
    assert!(err(&deep_unsupported).contains("TRIM with several character arguments"));
}

#[test]
fn long_or_chains_are_not_deep() {
    let terms: Vec<String> = (0..5000).map(|i| format!("x = {i}")).collect();
    let sql = format!("SELECT * FROM t WHERE {}", terms.join(" OR "));
    assert!(super::super::parse_query(&sql).is_ok());
    let sql = format!("SELECT * FROM (SELECT * FROM t WHERE {}) s FETCH FIRST 1 ROWS ONLY", terms.join(" OR "));
    assert!(err(&sql).contains("FETCH"));
}
