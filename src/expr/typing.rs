//! The type and nullability of a resolved expression. The analyzer has already inserted the
//! casts Spark's coercion rules require, so this only reads the tree.

use arrow::datatypes::DataType;

use super::{AggFunc, BinaryOp, Expr, ScalarFunc, WindowFunc};
use crate::error::{KilnError, Result};
use crate::types::{bounded_decimal, decimal_result, DecimalOp};

impl Expr {
    /// The result type; an error for unresolved expressions.
    pub fn data_type(&self) -> Result<DataType> {
        Ok(match self {
            Expr::Attribute(a) => a.data_type.clone(),
            Expr::Literal(v) => v.data_type(),
            Expr::Alias { child, .. } | Expr::Negative(child) | Expr::Replaceable { replacement: child, .. } => child.data_type()?,
            Expr::Binary { op, left, right } => {
                if !op.is_arithmetic() {
                    return Ok(DataType::Boolean);
                }
                if *op == BinaryOp::IntDivide {
                    return Ok(DataType::Int64);
                }
                let (l, r) = (left.data_type()?, right.data_type()?);
                match (&l, &r) {
                    (DataType::Decimal128(p1, s1), DataType::Decimal128(p2, s2)) => {
                        let dop = match op {
                            BinaryOp::Plus => DecimalOp::Add,
                            BinaryOp::Minus => DecimalOp::Subtract,
                            BinaryOp::Multiply => DecimalOp::Multiply,
                            BinaryOp::Divide => DecimalOp::Divide,
                            _ => DecimalOp::Remainder,
                        };
                        let (p, s) = decimal_result(dop, (*p1, *s1), (*p2, *s2));
                        DataType::Decimal128(p, s)
                    }
                    // Spark's SubtractDates (ANSI: an `interval day`) and SubtractTimestamps.
                    (DataType::Date32, DataType::Date32) if *op == BinaryOp::Minus => crate::types::interval::DAY,
                    (DataType::Timestamp(..), DataType::Timestamp(..)) if *op == BinaryOp::Minus => crate::types::interval::DAY_TIME,
                    _ => l,
                }
            }
            Expr::Not(_)
            | Expr::IsNull(_)
            | Expr::IsNotNull(_)
            | Expr::InList { .. }
            | Expr::InSet { .. }
            | Expr::Exists { .. }
            | Expr::InSubquery { .. }
            | Expr::Like { .. } => DataType::Boolean,
            Expr::OuterReference(a) => a.data_type.clone(),
            Expr::ScalarSubquery { plan, .. } => match plan.held().output().first() {
                Some(a) => a.data_type.clone(),
                None => return Err(KilnError::internal("scalar subquery without a column")),
            },
            Expr::ScalarSubqueryExec(s) => s.data_type.clone(),
            Expr::Cast { to, .. } => to.clone(),
            Expr::ScalarUdf { udf, .. } => udf.return_type().clone(),
            Expr::CaseWhen { branches, else_expr, .. } => {
                let mut types = branches.iter().map(|(_, r)| r).chain(else_expr.as_deref());
                let first = types.next().ok_or_else(|| KilnError::internal("CASE without branches"))?;
                let mut t = first.data_type()?;
                for e in types {
                    if t == DataType::Null {
                        t = e.data_type()?;
                    }
                }
                t
            }
            Expr::Function { func, args } => {
                let arg = |i: usize| -> Result<DataType> {
                    args.get(i).ok_or_else(|| KilnError::internal(format!("{} lacks argument {i}", func.name())))?.data_type()
                };
                match func {
                    ScalarFunc::Lower
                    | ScalarFunc::Upper
                    | ScalarFunc::Substring
                    | ScalarFunc::Concat
                    | ScalarFunc::Trim
                    | ScalarFunc::LTrim
                    | ScalarFunc::RTrim
                    | ScalarFunc::Replace => DataType::Utf8,
                    ScalarFunc::Length | ScalarFunc::Year | ScalarFunc::DateDiff => DataType::Int32,
                    ScalarFunc::Abs => arg(0)?,
                    ScalarFunc::Round => match arg(0)? {
                        DataType::Decimal128(p, s) => {
                            let scale = match args.get(1) {
                                Some(Expr::Literal(crate::types::ScalarValue::Int32(d))) => *d,
                                _ => 0,
                            };
                            let integral = p as i32 - s as i32 + 1;
                            if scale < 0 {
                                let (p, _) = bounded_decimal(integral, 0);
                                DataType::Decimal128(p, 0)
                            } else {
                                let new_scale = (s as i32).min(scale);
                                let (p, s) = bounded_decimal(integral + new_scale, new_scale);
                                DataType::Decimal128(p, s)
                            }
                        }
                        t => t,
                    },
                    ScalarFunc::Coalesce => {
                        let mut t = DataType::Null;
                        for a in args {
                            if t == DataType::Null {
                                t = a.data_type()?;
                            }
                        }
                        t
                    }
                    ScalarFunc::DateAdd | ScalarFunc::DateSub => DataType::Date32,
                    ScalarFunc::Builtin(b) => b.return_type(args)?,
                    ScalarFunc::Rand => DataType::Float64,
                    ScalarFunc::MightContain => DataType::Boolean,
                }
            }
            Expr::WindowExpression { function, .. } => function.data_type()?,
            Expr::WindowFunction { func, args } => match func {
                WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank | WindowFunc::Ntile => DataType::Int32,
                WindowFunc::PercentRank | WindowFunc::CumeDist => DataType::Float64,
                _ => args.first().ok_or_else(|| KilnError::internal(format!("{} without an argument", func.name())))?.data_type()?,
            },
            Expr::Aggregate { func: AggFunc::Builtin(b), args, .. } => {
                b.return_type(&args.iter().map(|a| a.data_type()).collect::<Result<Vec<_>>>()?)
            }
            Expr::Aggregate { func, args, .. } => {
                let input = match args.first() {
                    Some(a) => a.data_type()?,
                    None => DataType::Int64,
                };
                aggregate_result_type(*func, &input)
            }
            Expr::UnresolvedAttribute(_) | Expr::UnresolvedStar(_) | Expr::UnresolvedStarExcept { .. } | Expr::UnresolvedFunction { .. } | Expr::MultiAlias { .. } => {
                return Err(KilnError::internal(format!("type of unresolved expression {self}")))
            }
        })
    }

    /// Whether the expression may produce NULL.
    pub fn nullable(&self) -> bool {
        match self {
            Expr::Attribute(a) | Expr::OuterReference(a) => a.nullable,
            Expr::Literal(v) => v.is_null(),
            Expr::InSet { child, values, .. } => child.nullable() || values.iter().any(|v| v.is_null()),
            Expr::ScalarSubquery { .. } | Expr::ScalarSubqueryExec(_) | Expr::InSubquery { .. } | Expr::ScalarUdf { .. } => true,
            Expr::Exists { .. } => false,
            Expr::IsNull(_) | Expr::IsNotNull(_) => false,
            Expr::Aggregate { func: AggFunc::Count, .. } => false,
            Expr::Aggregate { func: AggFunc::Builtin(b), .. } => b.nullable(),
            Expr::WindowExpression { function, .. } => function.nullable(),
            Expr::WindowFunction { func, .. } => !matches!(
                func,
                WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank | WindowFunc::Ntile | WindowFunc::PercentRank | WindowFunc::CumeDist
            ),
            Expr::Aggregate { .. } => true,
            Expr::Binary { op: BinaryOp::Divide | BinaryOp::IntDivide | BinaryOp::Modulo, .. } => true,
            Expr::Binary { op: BinaryOp::EqNullSafe, .. } => false,
            // Spark's cast to the calendar interval is NULL for text that is no interval.
            Expr::Cast { to, .. } if *to == crate::types::interval::CALENDAR => true,
            Expr::CaseWhen { branches, else_expr, .. } => {
                else_expr.as_ref().is_none_or(|e| e.nullable()) || branches.iter().any(|(_, r)| r.nullable())
            }
            Expr::Function { func: ScalarFunc::Coalesce, args } => args.iter().all(|a| a.nullable()),
            Expr::Function { func: ScalarFunc::Rand, .. } => false,
            Expr::Function { func: ScalarFunc::Builtin(b), args } => b.nullable(&args.iter().map(|a| a.nullable()).collect::<Vec<_>>()),
            other => other.children().iter().any(|c| c.nullable()),
        }
    }
}

/// The result type of an aggregate over `input` (Spark: sum(decimal(p,s)) = decimal(p+10,s),
/// avg(decimal(p,s)) = decimal(p+4,s+4), sum of integers = bigint, avg of non-decimals = double).
pub fn aggregate_result_type(func: AggFunc, input: &DataType) -> DataType {
    match func {
        AggFunc::Udaf(u) => u.return_type().clone(),
        AggFunc::Builtin(b) => b.return_type(std::slice::from_ref(input)),
        AggFunc::Count => DataType::Int64,
        AggFunc::Min | AggFunc::Max => input.clone(),
        AggFunc::Sum => match input {
            DataType::Decimal128(p, s) => {
                let (p, s) = bounded_decimal(*p as i32 + 10, *s as i32);
                DataType::Decimal128(p, s)
            }
            DataType::Float32 | DataType::Float64 => DataType::Float64,
            t if crate::types::interval::is_interval(t) => t.clone(),
            _ => DataType::Int64,
        },
        AggFunc::Avg => match input {
            t if crate::types::interval::is_interval(t) => t.clone(),
            DataType::Decimal128(p, s) => {
                let (p, s) = bounded_decimal(*p as i32 + 4, *s as i32 + 4);
                DataType::Decimal128(p, s)
            }
            _ => DataType::Float64,
        },
    }
}
