//! Filters handed to the Parquet reader, Spark's `org.apache.spark.sql.sources.Filter`: the
//! data filters of the form `col op literal`, `isnull(col)`, `isnotnull(col)` and
//! `col IN (literals)`. EXPLAIN prints them as `PushedFilters`; the reader uses them to skip
//! row groups whose min/max/null-count statistics prove that no row can pass.
//!
//! Skipping is only ever an optimization: the Filter above the scan still checks every row,
//! so a filter answers "may a row of this row group pass?" and unknown statistics say yes.

use std::fmt;

use arrow::array::{Array, ArrayRef, BooleanArray, Scalar, UInt64Array};
use arrow::compute::kernels::boolean::{and_kleene, or_kleene};
use arrow::compute::kernels::cmp;
use arrow::compute::{cast, is_null};
use arrow::datatypes::DataType;

use crate::error::Result;
use crate::expr::{BinaryOp, Expr};
use crate::types::ScalarValue;

/// A comparison between a column and a literal, named as Spark's source filters are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// `col = value`.
    EqualTo,
    /// `col <=> value`: null-safe equality (NULL equals NULL).
    EqualNullSafe,
    /// `col > value`.
    GreaterThan,
    /// `col >= value`.
    GreaterThanOrEqual,
    /// `col < value`.
    LessThan,
    /// `col <= value`.
    LessThanOrEqual,
}

/// A filter the Parquet source understands.
#[derive(Debug, Clone, PartialEq)]
pub enum PushedFilter {
    /// `isnull(col)`: the named column is NULL.
    IsNull(String),
    /// `isnotnull(col)`: the named column is not NULL.
    IsNotNull(String),
    /// `col op literal` (a `literal op col` comparison is flipped into this form).
    Compare {
        /// The column's name.
        column: String,
        /// The comparison operator.
        op: Comparison,
        /// The literal compared against.
        value: ScalarValue,
    },
    /// `col IN (literals)`.
    In {
        /// The column's name.
        column: String,
        /// The literal values of the list.
        values: Vec<ScalarValue>,
    },
}

/// The statistics of one column over a file's row groups, one entry per row group; a NULL
/// min, max or null count means "unknown".
pub struct ColumnStatistics {
    /// The minimum value of each row group, in the column's type.
    pub mins: ArrayRef,
    /// The maximum value of each row group, in the column's type.
    pub maxes: ArrayRef,
    /// The number of NULLs in each row group.
    pub null_counts: UInt64Array,
    /// The number of rows in each row group.
    pub row_counts: UInt64Array,
}

impl PushedFilter {
    /// Spark's `DataSourceStrategy.translateFilter` for a deterministic data filter; `None`
    /// when the source cannot evaluate it (`lower(status) = 'x'`, `a = b`).
    pub fn translate(e: &Expr) -> Option<PushedFilter> {
        let column = |c: &Expr| match c {
            Expr::Attribute(a) => Some(a.name.clone()),
            _ => None,
        };
        match e {
            Expr::IsNull(c) => Some(PushedFilter::IsNull(column(c)?)),
            Expr::IsNotNull(c) => Some(PushedFilter::IsNotNull(column(c)?)),
            Expr::Binary { op, left, right } => {
                let (col, value, op) = match (left.as_ref(), right.as_ref()) {
                    (c, Expr::Literal(v)) => (column(c)?, v, *op),
                    (Expr::Literal(v), c) => (column(c)?, v, op.flip()),
                    _ => return None,
                };
                let op = match op {
                    BinaryOp::Eq => Comparison::EqualTo,
                    BinaryOp::EqNullSafe => Comparison::EqualNullSafe,
                    BinaryOp::Gt => Comparison::GreaterThan,
                    BinaryOp::GtEq => Comparison::GreaterThanOrEqual,
                    BinaryOp::Lt => Comparison::LessThan,
                    BinaryOp::LtEq => Comparison::LessThanOrEqual,
                    _ => return None,
                };
                Some(PushedFilter::Compare { column: col, op, value: value.clone() })
            }
            Expr::InList { child, list, negated: false } => {
                let values = list.iter().map(|l| if let Expr::Literal(v) = l { Some(v.clone()) } else { None }).collect::<Option<_>>()?;
                Some(PushedFilter::In { column: column(child)?, values })
            }
            _ => None,
        }
    }

    /// The column the filter reads.
    pub fn column(&self) -> &str {
        match self {
            PushedFilter::IsNull(c) | PushedFilter::IsNotNull(c) => c,
            PushedFilter::Compare { column, .. } | PushedFilter::In { column, .. } => column,
        }
    }

    /// Per row group: false when the statistics prove that no row passes the filter.
    pub fn may_match(&self, stats: &ColumnStatistics) -> Result<BooleanArray> {
        let all_null = cmp::eq(&stats.null_counts, &stats.row_counts)?;
        let some_value = unknown_as_true(&arrow::compute::not(&all_null)?)?;
        let result = match self {
            PushedFilter::IsNull(_) => cmp::gt(&stats.null_counts, &UInt64Array::new_scalar(0))?,
            PushedFilter::IsNotNull(_) => some_value,
            PushedFilter::Compare { op: Comparison::EqualNullSafe, value, .. } if value.is_null() => {
                cmp::gt(&stats.null_counts, &UInt64Array::new_scalar(0))?
            }
            PushedFilter::Compare { op, value, .. } => and_kleene(&some_value, &compare(*op, value, stats)?)?,
            PushedFilter::In { values, .. } => {
                let mut any = BooleanArray::from(vec![false; stats.row_counts.len()]);
                for v in values.iter().filter(|v| !v.is_null()) {
                    any = or_kleene(&any, &compare(Comparison::EqualTo, v, stats)?)?;
                }
                and_kleene(&some_value, &any)?
            }
        };
        unknown_as_true(&result)
    }
}

/// Whether `column op value` may hold for some value in [min, max]: NULL when unknown.
fn compare(op: Comparison, value: &ScalarValue, stats: &ColumnStatistics) -> Result<BooleanArray> {
    let unknown = || BooleanArray::new_null(stats.row_counts.len());
    let ty = stats.mins.data_type();
    // Spark orders NaN above every double, but Parquet statistics leave NaN out: never prune
    // floating-point columns by value.
    if matches!(ty, DataType::Float16 | DataType::Float32 | DataType::Float64) || value.is_null() {
        return Ok(unknown());
    }
    // The analyzer gives the literal the column's type; anything else (other than a decimal of
    // the same scale) could compare differently, so it prunes nothing.
    let literal = value.to_array(1)?;
    let literal = match (literal.data_type(), ty) {
        (a, b) if a == b => literal,
        (DataType::Decimal128(_, s1), DataType::Decimal128(_, s2)) if s1 == s2 => match cast(&literal, ty) {
            Ok(l) if l.null_count() == 0 => l,
            _ => return Ok(unknown()),
        },
        _ => return Ok(unknown()),
    };
    let v = Scalar::new(literal);
    let (mins, maxes) = (&stats.mins, &stats.maxes);
    Ok(match op {
        Comparison::EqualTo | Comparison::EqualNullSafe => and_kleene(&cmp::lt_eq(mins, &v)?, &cmp::gt_eq(maxes, &v)?)?,
        Comparison::GreaterThan => cmp::gt(maxes, &v)?,
        Comparison::GreaterThanOrEqual => cmp::gt_eq(maxes, &v)?,
        Comparison::LessThan => cmp::lt(mins, &v)?,
        Comparison::LessThanOrEqual => cmp::lt_eq(mins, &v)?,
    })
}

/// Unknown (NULL) becomes true: a row group is skipped only when the statistics prove it.
fn unknown_as_true(a: &BooleanArray) -> Result<BooleanArray> {
    Ok(or_kleene(&is_null(a)?, a)?)
}

impl fmt::Display for PushedFilter {
    /// Spark's rendering: `IsNotNull(status)`, `EqualTo(status,paid)`, `In(id, [1,2])`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushedFilter::IsNull(c) => write!(f, "IsNull({c})"),
            PushedFilter::IsNotNull(c) => write!(f, "IsNotNull({c})"),
            PushedFilter::Compare { column, op, value } => write!(f, "{op:?}({column},{value})"),
            PushedFilter::In { column, values } => {
                write!(f, "In({column}, [{}])", values.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Attribute;
    use arrow::array::{Int64Array, StringArray};
    use std::sync::Arc;

    fn col(name: &str, ty: DataType) -> Expr {
        Expr::Attribute(Attribute::new(name, ty, true))
    }

    fn lit_i(v: i64) -> Expr {
        Expr::Literal(ScalarValue::Int64(v))
    }

    /// Three row groups of an int64 column: [0, 9] no nulls, [10, 19] two nulls, all NULL (5 rows).
    fn stats() -> ColumnStatistics {
        ColumnStatistics {
            mins: Arc::new(Int64Array::from(vec![Some(0), Some(10), None])),
            maxes: Arc::new(Int64Array::from(vec![Some(9), Some(19), None])),
            null_counts: UInt64Array::from(vec![Some(0), Some(2), Some(5)]),
            row_counts: UInt64Array::from(vec![Some(10), Some(10), Some(5)]),
        }
    }

    fn keeps(e: Expr) -> Vec<bool> {
        let f = PushedFilter::translate(&e).expect("translatable");
        f.may_match(&stats()).unwrap().iter().map(|v| v.expect("no unknowns left")).collect()
    }

    #[test]
    fn translates_spark_source_filters_and_prints_them_as_spark() {
        let status = col("status", DataType::Utf8);
        let paid = Expr::Literal(ScalarValue::Utf8("paid".into()));
        let cases = [
            (Expr::IsNotNull(Box::new(status.clone())), "IsNotNull(status)"),
            (status.clone().binary(BinaryOp::Eq, paid.clone()), "EqualTo(status,paid)"),
            (lit_i(5).binary(BinaryOp::Lt, col("id", DataType::Int64)), "GreaterThan(id,5)"),
            (
                Expr::InList { child: Box::new(col("id", DataType::Int64)), list: vec![lit_i(1), lit_i(2)], negated: false },
                "In(id, [1,2])",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(PushedFilter::translate(&e).map(|f| f.to_string()).as_deref(), Some(want));
        }
        let lower = Expr::Function { func: crate::expr::ScalarFunc::Lower, args: vec![status.clone()] };
        assert_eq!(PushedFilter::translate(&lower.binary(BinaryOp::Eq, paid)), None);
        assert_eq!(PushedFilter::translate(&status.clone().binary(BinaryOp::Eq, status)), None);
    }

    #[test]
    fn row_groups_are_skipped_only_when_statistics_prove_it() {
        let id = || col("id", DataType::Int64);
        assert_eq!(keeps(id().binary(BinaryOp::Eq, lit_i(12))), [false, true, false]);
        assert_eq!(keeps(id().binary(BinaryOp::Gt, lit_i(9))), [false, true, false]);
        assert_eq!(keeps(id().binary(BinaryOp::GtEq, lit_i(9))), [true, true, false]);
        assert_eq!(keeps(id().binary(BinaryOp::Lt, lit_i(10))), [true, false, false]);
        assert_eq!(keeps(id().binary(BinaryOp::LtEq, lit_i(10))), [true, true, false]);
        assert_eq!(keeps(Expr::IsNull(Box::new(id()))), [false, true, true]);
        assert_eq!(keeps(Expr::IsNotNull(Box::new(id()))), [true, true, false]);
        let in_list = Expr::InList { child: Box::new(id()), list: vec![lit_i(30), lit_i(3)], negated: false };
        assert_eq!(keeps(in_list), [true, false, false]);
        let null_safe = id().binary(BinaryOp::EqNullSafe, Expr::Literal(ScalarValue::Null(DataType::Int64)));
        assert_eq!(keeps(null_safe), [false, true, true]);
    }

    #[test]
    fn unknown_statistics_and_odd_types_keep_row_groups() {
        let unknown = ColumnStatistics {
            mins: Arc::new(StringArray::from(vec![None::<&str>, Some("b")])),
            maxes: Arc::new(StringArray::from(vec![None::<&str>, Some("d")])),
            null_counts: UInt64Array::from(vec![None, Some(0)]),
            row_counts: UInt64Array::from(vec![Some(3), Some(3)]),
        };
        let eq = |v: &str| PushedFilter::Compare { column: "s".into(), op: Comparison::EqualTo, value: ScalarValue::Utf8(v.into()) };
        let got: Vec<Option<bool>> = eq("a").may_match(&unknown).unwrap().iter().collect();
        assert_eq!(got, [Some(true), Some(false)]);
        let got: Vec<Option<bool>> = eq("c").may_match(&unknown).unwrap().iter().collect();
        assert_eq!(got, [Some(true), Some(true)]);
        // A literal of another type prunes by null counts only (an all-NULL row group never passes).
        let odd = PushedFilter::Compare { column: "id".into(), op: Comparison::LessThan, value: ScalarValue::Date32(1) };
        assert_eq!(odd.may_match(&stats()).unwrap().iter().collect::<Vec<_>>(), [Some(true), Some(true), Some(false)]);
        // Doubles are never pruned by value: Parquet statistics leave NaN out.
        let doubles = ColumnStatistics {
            mins: Arc::new(arrow::array::Float64Array::from(vec![1.0])),
            maxes: Arc::new(arrow::array::Float64Array::from(vec![2.0])),
            null_counts: UInt64Array::from(vec![0]),
            row_counts: UInt64Array::from(vec![4]),
        };
        let gt = PushedFilter::Compare { column: "x".into(), op: Comparison::GreaterThan, value: ScalarValue::Float64(5.0) };
        assert_eq!(gt.may_match(&doubles).unwrap().iter().collect::<Vec<_>>(), [Some(true)]);
    }
}
