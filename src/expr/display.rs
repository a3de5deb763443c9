//! Spark's rendering of expressions: `name#id` (with `L` for bigint), `'name` before analysis,
//! every binary operator parenthesized, literals unquoted.

use std::fmt;

use arrow::datatypes::DataType;

use super::{Attribute, Expr, FrameType, SortOrder, WindowFunc};
use crate::types::spark_type_name;
use crate::types::ScalarValue;

/// How much to print: plan text carries `#ids`, column names do not.
#[derive(Clone, Copy, PartialEq)]
enum Style {
    Plan,
    Name,
}

/// The name Spark gives an un-aliased select-list expression: `sum(amount)`, `(a + 1)`.
pub fn sql_name(e: &Expr) -> String {
    let mut s = String::new();
    let _ = write_expr(&mut s, e, Style::Name);
    s
}

impl fmt::Display for Attribute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suffix = if self.data_type == DataType::Int64 { "L" } else { "" };
        write!(f, "{}#{}{}", self.name, self.id.0, suffix)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_expr(f, self, Style::Plan)
    }
}

impl fmt::Display for SortOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}",
            self.expr,
            if self.ascending { "ASC" } else { "DESC" },
            if self.nulls_first { "NULLS FIRST" } else { "NULLS LAST" }
        )
    }
}

fn outer_list(plan: &super::SubqueryPlan) -> String {
    plan.outer_references().iter().map(|a| a.to_string()).collect::<Vec<_>>().join(" && ")
}

/// An IN subquery's left side: its value, or Spark's `named_struct(name, value, ...)` of a row
/// value (`_0`, `_1`, ... for a value without a name); `sql` quotes the names.
fn write_in_values(f: &mut dyn fmt::Write, values: &[Expr], style: Style) -> fmt::Result {
    if let [v] = values {
        return write_expr(f, v, style);
    }
    write!(f, "named_struct(")?;
    for (i, v) in values.iter().enumerate() {
        let name = match v {
            Expr::Attribute(a) | Expr::OuterReference(a) => a.name.clone(),
            Expr::UnresolvedAttribute(parts) => parts.last().cloned().unwrap_or_default(),
            Expr::Alias { name, .. } => name.clone(),
            _ => format!("_{i}"),
        };
        if i > 0 {
            write!(f, ", ")?;
        }
        match style {
            Style::Name => write!(f, "'{name}', ")?,
            _ => write!(f, "{name}, ")?,
        }
        write_expr(f, v, style)?;
    }
    write!(f, ")")
}

fn outer_names(plan: &super::SubqueryPlan) -> String {
    plan.outer_references().iter().map(|a| a.name.clone()).collect::<Vec<_>>().join(", ")
}

fn write_list(f: &mut dyn fmt::Write, items: &[Expr], style: Style, sep: &str) -> fmt::Result {
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        write_expr(f, a, style)?;
    }
    Ok(())
}

fn write_expr(f: &mut dyn fmt::Write, e: &Expr, style: Style) -> fmt::Result {
    match e {
        Expr::UnresolvedAttribute(parts) => write!(f, "'{}", parts.join(".")),
        Expr::UnresolvedStar(None) => write!(f, "*"),
        Expr::UnresolvedStar(Some(q)) => write!(f, "{q}.*"),
        Expr::UnresolvedStarExcept { qualifier, except } => {
            let names: Vec<String> = except.iter().map(|p| p.join(".")).collect();
            write!(f, "{}* EXCEPT ({})", qualifier.as_ref().map(|q| format!("{q}.")).unwrap_or_default(), names.join(", "))
        }
        Expr::UnresolvedFunction { name, args, distinct } => {
            write!(f, "'{name}(")?;
            if *distinct {
                write!(f, "distinct ")?;
            }
            write_list(f, args, style, ", ")?;
            write!(f, ")")
        }
        Expr::Attribute(a) => match style {
            Style::Plan => write!(f, "{a}"),
            Style::Name => write!(f, "{}", a.name),
        },
        // Spark's Literal.sql: a NULL in a column's name is upper case, `coalesce(NULL, 1)`.
        Expr::Literal(v) if style == Style::Name && v.is_null() => write!(f, "NULL"),
        // Spark's Literal.sql of a calendar interval and of a date: `INTERVAL '1 days'`, `DATE '2020-01-31'`.
        Expr::Literal(v @ ScalarValue::Calendar(..)) if style == Style::Name => write!(f, "INTERVAL '{v}'"),
        Expr::Literal(v @ ScalarValue::Date32(_)) if style == Style::Name => write!(f, "DATE '{v}'"),
        Expr::Literal(v) => write!(f, "{v}"),
        Expr::Replaceable { name, params, .. } => {
            write!(f, "{name}(")?;
            write_list(f, params, style, ", ")?;
            write!(f, ")")
        }
        // Spark's If: `if (p) a else b` in plans, `(IF(p, a, b))` as a name.
        Expr::CaseWhen { branches, else_expr: Some(otherwise), if_form: true } if branches.len() == 1 => {
            let (when, then) = &branches[0];
            match style {
                Style::Plan => {
                    write!(f, "if (")?;
                    write_expr(f, when, style)?;
                    write!(f, ") ")?;
                    write_expr(f, then, style)?;
                    write!(f, " else ")?;
                    write_expr(f, otherwise, style)
                }
                Style::Name => {
                    write!(f, "(IF(")?;
                    write_list(f, &[when.clone(), then.clone(), otherwise.as_ref().clone()], style, ", ")?;
                    write!(f, "))")
                }
            }
        }
        Expr::Alias { child, name, id } => {
            write_expr(f, child, style)?;
            match style {
                // Spark's Alias prints the type suffix too (`count(1) AS n#5L`).
                Style::Plan => {
                    let suffix = if child.resolved() && child.data_type().ok() == Some(DataType::Int64) { "L" } else { "" };
                    write!(f, " AS {name}#{}{suffix}", id.0)
                }
                Style::Name => write!(f, " AS {name}"),
            }
        }
        // Spark prints the Scala list of names.
        Expr::MultiAlias { child, names } => {
            write_expr(f, child, style)?;
            write!(f, " AS List({})", names.join(", "))
        }
        Expr::Binary { op, left, right } => {
            write!(f, "(")?;
            write_expr(f, left, style)?;
            write!(f, " {} ", op.symbol())?;
            write_expr(f, right, style)?;
            write!(f, ")")
        }
        Expr::Not(c) => {
            write!(f, "NOT ")?;
            write_expr(f, c, style)
        }
        Expr::Negative(c) => {
            write!(f, "-")?;
            write_expr(f, c, style)
        }
        // Spark's IsNull.sql and IsNotNull.sql: a column's name reads `(a IS NULL)`.
        Expr::IsNull(c) | Expr::IsNotNull(c) if style == Style::Name => {
            write!(f, "(")?;
            write_expr(f, c, style)?;
            write!(f, "{})", if matches!(e, Expr::IsNull(_)) { " IS NULL" } else { " IS NOT NULL" })
        }
        Expr::IsNull(c) => {
            write!(f, "isnull(")?;
            write_expr(f, c, style)?;
            write!(f, ")")
        }
        Expr::IsNotNull(c) => {
            write!(f, "isnotnull(")?;
            write_expr(f, c, style)?;
            write!(f, ")")
        }
        // `TIMESTAMP '2020-01-01 10:00:00'` in the session zone, as written (sql/expr.rs).
        Expr::Cast { child, to: DataType::Timestamp(_, Some(_)), .. } if matches!(child.as_ref(), Expr::Literal(ScalarValue::Timestamp(_, true))) => match child.as_ref() {
            Expr::Literal(ScalarValue::Timestamp(wall, _)) => write!(f, "TIMESTAMP '{}'", crate::types::format_timestamp(*wall)),
            _ => Ok(()),
        },
        // Spark names an explicit cast by its SQL (`CAST(id AS STRING)`).
        Expr::Cast { child, to, .. } if style == Style::Name => {
            write!(f, "CAST(")?;
            write_expr(f, child, style)?;
            write!(f, " AS {})", crate::types::sql_type_name(to))
        }
        Expr::Cast { child, to, .. } => {
            write!(f, "cast(")?;
            write_expr(f, child, style)?;
            write!(f, " as {})", spark_type_name(to))
        }
        Expr::InList { child, list, negated } => {
            if *negated {
                write!(f, "NOT ")?;
            }
            write_expr(f, child, style)?;
            write!(f, " IN (")?;
            write_list(f, list, style, ",")?;
            write!(f, ")")
        }
        Expr::InSet { child, values, negated } => {
            if *negated {
                write!(f, "NOT ")?;
            }
            write_expr(f, child, style)?;
            // Spark sorts the printed values as strings, for a deterministic plan.
            let mut shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            shown.sort();
            write!(f, " INSET {}", shown.join(", "))
        }
        Expr::OuterReference(a) => match style {
            Style::Plan => write!(f, "outer({a})"),
            Style::Name => write!(f, "outer({})", a.name),
        },
        // Column names are Spark's `sql`: `scalarsubquery(outer columns)`, `exists()`, `(x IN (listquery()))`.
        Expr::ScalarSubquery { plan, .. } if style == Style::Name => write!(f, "scalarsubquery({})", outer_names(plan)),
        Expr::Exists { plan, .. } if style == Style::Name => write!(f, "exists({})", outer_names(plan)),
        Expr::InSubquery { values, plan, .. } if style == Style::Name => {
            write!(f, "(")?;
            write_in_values(f, values, style)?;
            write!(f, " IN (listquery({})))", outer_names(plan))
        }
        Expr::ScalarSubquery { plan, id } => write!(f, "scalar-subquery#{} [{}]", id.0, outer_list(plan)),
        Expr::ScalarSubqueryExec(s) => write!(f, "Subquery scalar-subquery#{}, [id=#{}]", s.id.0, s.plan_id),
        Expr::Exists { plan, id } => write!(f, "exists#{} [{}]", id.0, outer_list(plan)),
        Expr::InSubquery { values, plan, id } => {
            write_in_values(f, values, style)?;
            write!(f, " IN (list#{} [{}])", id.0, outer_list(plan))
        }
        Expr::Like { child, pattern, negated } => {
            if *negated {
                write!(f, "NOT ")?;
            }
            write_expr(f, child, style)?;
            write!(f, " LIKE ")?;
            write_expr(f, pattern, style)
        }
        Expr::CaseWhen { branches, else_expr, .. } => {
            write!(f, "CASE")?;
            for (c, r) in branches {
                write!(f, " WHEN ")?;
                write_expr(f, c, style)?;
                write!(f, " THEN ")?;
                write_expr(f, r, style)?;
            }
            if let Some(e) = else_expr {
                write!(f, " ELSE ")?;
                write_expr(f, e, style)?;
            }
            write!(f, " END")
        }
        Expr::ScalarUdf { udf, args } => {
            write!(f, "{}(", udf.name())?;
            write_list(f, args, style, ", ")?;
            write!(f, ")")
        }
        // Spark prints the bitwise operators infix: `(a & b)`, `~a`.
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(b @ (crate::expr::Builtin::BitAnd | crate::expr::Builtin::BitOr | crate::expr::Builtin::BitXor)), args }
            if args.len() == 2 =>
        {
            write!(f, "(")?;
            write_expr(f, &args[0], style)?;
            write!(f, " {} ", b.name())?;
            write_expr(f, &args[1], style)?;
            write!(f, ")")
        }
        // The legacy-mode wrapper prints as its operation, as Spark's expressions print whatever their evalMode.
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::Legacy)), args } if args.len() == 1 => write_expr(f, &args[0], style),
        // try_add(a, b) holds `a + b`.
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(b @ crate::expr::Builtin::More(m)), args } if m.is_try() && args.len() == 1 => {
            write!(f, "{}(", b.name())?;
            match &args[0] {
                Expr::Binary { left, right, .. } => {
                    write_expr(f, left, style)?;
                    write!(f, ", ")?;
                    write_expr(f, right, style)?;
                }
                // try_to_timestamp(s, fmt) holds `to_timestamp(s, fmt)`.
                Expr::Function { args, .. } => {
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write_expr(f, a, style)?;
                    }
                }
                other => write_expr(f, other, style)?,
            }
            write!(f, ")")
        }
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::TryCast(_)), args } if args.len() == 2 => {
            write!(f, "try_cast(")?;
            write_expr(f, &args[0], style)?;
            write!(f, " as {})", args[1].data_type().map(|t| spark_type_name(&t)).unwrap_or_default())
        }
        // A date or timestamp ± a calendar interval, as Spark's DateAddInterval, TimeAdd and
        // DatetimeSub print it: `d + i`, `d - i` (no parentheses).
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::DateAddInterval) | crate::expr::Builtin::TimeAdd(_)), args }
            if args.len() == 2 || (args.len() == 3 && args[1] == args[2] && !matches!(args[1], Expr::Literal(_))) =>
        {
            write_expr(f, &args[0], style)?;
            let (sign, iv) = match &args[1] {
                Expr::Negative(iv) => (" - ", iv.as_ref()),
                iv => (" + ", iv),
            };
            write!(f, "{sign}")?;
            write_expr(f, iv, style)
        }
        // `end - start` as a calendar interval (`spark.sql.legacy.interval.enabled`).
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::CalendarDifference)), args } if args.len() == 2 => {
            write!(f, "(")?;
            write_expr(f, &args[0], style)?;
            write!(f, " - ")?;
            write_expr(f, &args[1], style)?;
            write!(f, ")")
        }
        // timestamp ± interval, as Spark's TimeAdd prints: `(t + INTERVAL '0 02:00:00' DAY TO SECOND)`.
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::TimeAdd(_)), args } if args.len() == 3 => {
            use crate::types::ScalarValue;
            write!(f, "(")?;
            write_expr(f, &args[0], style)?;
            match (&args[1], &args[2]) {
                (Expr::Literal(ScalarValue::Int64(0)), Expr::Literal(ScalarValue::Int32(m))) => write!(f, " + {}", ScalarValue::IntervalMonths(*m, crate::types::interval::YEAR, crate::types::interval::MONTH))?,
                (Expr::Literal(ScalarValue::Int64(us)), Expr::Literal(ScalarValue::Int32(0))) => write!(f, " + {}", ScalarValue::IntervalMicros(*us, crate::types::interval::DAY_FIELD, crate::types::interval::SECOND))?,
                // An interval value (`t + i`): the one part that is not a zero literal.
                (Expr::Literal(ScalarValue::Int64(0)), iv) | (iv, Expr::Literal(ScalarValue::Int32(0))) if !matches!(iv, Expr::Literal(_)) => {
                    write!(f, " + ")?;
                    write_expr(f, iv, style)?;
                }
                (a, b) => {
                    write!(f, ", ")?;
                    write_expr(f, a, style)?;
                    write!(f, ", ")?;
                    write_expr(f, b, style)?;
                }
            }
            write!(f, ")")
        }
        // `s#1.a` (GetStructField), `m#2[k]` (GetMapValue), and `struct(a, 1)` as a column name.
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::Nested(n)), args } if args.len() == 2 && matches!(n, crate::expr::NestedFn::GetField | crate::expr::NestedFn::ArrayStructField | crate::expr::NestedFn::GetMapValue) => {
            write_expr(f, &args[0], style)?;
            if *n != crate::expr::NestedFn::GetMapValue {
                write!(f, ".")?;
                write_expr(f, &args[1], style)
            } else {
                write!(f, "[")?;
                write_expr(f, &args[1], style)?;
                write!(f, "]")
            }
        }
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::Nested(crate::expr::NestedFn::Struct)), args } if style == Style::Name => {
            write!(f, "struct(")?;
            let values: Vec<Expr> = args.iter().skip(1).step_by(2).cloned().collect();
            write_list(f, &values, style, ", ")?;
            write!(f, ")")
        }
        // `a[i]`, as Spark prints GetArrayItem.
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::GetItem), args } if args.len() == 2 => {
            write_expr(f, &args[0], style)?;
            write!(f, "[")?;
            write_expr(f, &args[1], style)?;
            write!(f, "]")
        }
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::BitNot), args } if args.len() == 1 => {
            write!(f, "~")?;
            write_expr(f, &args[0], style)
        }
        // Spark prints the hash functions' seed: `xxhash64(a#1, 42)`.
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(b @ crate::expr::Builtin::More(crate::expr::MoreFn::Hash | crate::expr::MoreFn::XxHash64)), args }
            if style == Style::Plan =>
        {
            write!(f, "{}(", b.name())?;
            write_list(f, args, style, ", ")?;
            write!(f, ", 42)")
        }
        // Spark names from_json / from_csv by their text alone (the schema is in the type).
        Expr::Function { func: crate::expr::ScalarFunc::Builtin(b @ crate::expr::Builtin::More(crate::expr::MoreFn::FromJson(_) | crate::expr::MoreFn::FromCsv(_))), args }
            if !args.is_empty() =>
        {
            write!(f, "{}(", b.name())?;
            write_expr(f, &args[0], style)?;
            write!(f, ")")
        }
        Expr::Function { func, args } => {
            write!(f, "{}(", func.name())?;
            write_list(f, args, style, ", ")?;
            write!(f, ")")
        }
        Expr::Aggregate { func, args, distinct } => {
            write!(f, "{}(", func.name())?;
            if *distinct {
                write!(f, "distinct ")?;
            }
            // median(x) is percentile(x, 0.5) inside; Spark prints what was written.
            let listagg = matches!(func, crate::expr::AggFunc::Builtin(b) if b.kind == crate::expr::AggKind::ListAgg);
            let shown = if func.name() == "median" {
                &args[..args.len().min(1)]
            } else if listagg {
                &args[..args.len().min(2)]
            } else {
                &args[..]
            };
            write_list(f, shown, style, ", ")?;
            write!(f, "{})", func.extra_arguments())?;
            if let crate::expr::AggFunc::Builtin(b) = func {
                write!(f, "{}", b.suffix())?;
                // listagg's order keys: `WITHIN GROUP (ORDER BY k DESC NULLS LAST)`.
                if listagg && args.len() > 2 {
                    write!(f, " WITHIN GROUP (ORDER BY ")?;
                    for (k, key) in args[2..].iter().enumerate() {
                        let (desc, nulls_first) = b.order_direction(k);
                        write!(f, "{}", if k > 0 { ", " } else { "" })?;
                        write_list(f, std::slice::from_ref(key), style, "")?;
                        write!(f, " {} NULLS {}", if desc { "DESC" } else { "ASC" }, if nulls_first { "FIRST" } else { "LAST" })?;
                    }
                    write!(f, ")")?;
                }
            }
            Ok(())
        }
        Expr::WindowFunction { func, args } => {
            write!(f, "{}(", func.name())?;
            write_list(f, args, style, ", ")?;
            write!(f, ")")
        }
        Expr::WindowExpression { function, spec, ignore_nulls } => {
            // first/last/nth_value print their ignoreNulls flag as an argument, as Spark's do.
            match function.as_ref() {
                Expr::WindowFunction { func: func @ (WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue), args } => {
                    write!(f, "{}(", func.name())?;
                    write_list(f, args, style, ", ")?;
                    write!(f, ", {ignore_nulls})")?;
                }
                other => write_expr(f, other, style)?,
            }
            match style {
                Style::Plan => {
                    write!(f, " windowspecdefinition(")?;
                    let mut parts: Vec<String> = spec.partition_by.iter().map(|e| e.to_string()).collect();
                    parts.extend(spec.order_by.iter().map(|o| o.to_string()));
                    match &spec.frame {
                        Some(frame) => parts.push(frame.to_string()),
                        None => parts.push("unspecifiedframe$()".to_string()),
                    }
                    write!(f, "{})", parts.join(", "))
                }
                Style::Name => {
                    write!(f, " OVER (")?;
                    let mut parts = vec![];
                    if !spec.partition_by.is_empty() {
                        parts.push(format!("PARTITION BY {}", spec.partition_by.iter().map(sql_name).collect::<Vec<_>>().join(", ")));
                    }
                    if !spec.order_by.is_empty() {
                        let keys: Vec<String> = spec
                            .order_by
                            .iter()
                            .map(|o| {
                                let dir = if o.ascending { "ASC" } else { "DESC" };
                                let nulls = if o.nulls_first { "NULLS FIRST" } else { "NULLS LAST" };
                                format!("{} {dir} {nulls}", sql_name(&o.expr))
                            })
                            .collect();
                        parts.push(format!("ORDER BY {}", keys.join(", ")));
                    }
                    if let Some(frame) = &spec.frame {
                        let t = if frame.frame_type == FrameType::Rows { "ROWS" } else { "RANGE" };
                        parts.push(format!("{t} BETWEEN {} AND {}", frame.lower.sql(), frame.upper.sql()));
                    }
                    write!(f, "{})", parts.join(" "))
                }
            }
        }
    }
}
