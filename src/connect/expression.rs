//! Spark Connect expressions as kiln's unresolved expressions: the nodes SQL's parser builds for
//! the same expression written as SQL, so the analyzer's one function registry resolves them.

use spark_connect_proto::expression::{self as pe, literal::LiteralType, ExprType};
use spark_connect_proto::Expression;

use crate::error::{KilnError, Result};
use crate::expr::{BinaryOp, Expr, FrameBound, FrameType, SortOrder, WindowFrame, WindowSpec};
use crate::types::ScalarValue;

/// An error naming the part of the protocol kiln does not serve.
pub fn unsupported(what: impl std::fmt::Display) -> KilnError {
    KilnError::unsupported(format!("[UNSUPPORTED_FEATURE] Spark Connect {what} is not supported by kiln."))
}

fn missing(what: &str) -> KilnError {
    KilnError::unsupported(format!("[CONNECT_INVALID_PLAN] the plan has {what} without its value"))
}

thread_local! {
    /// The columns a reference carrying a DataFrame's plan id (`df1.id`) resolves to while a
    /// join condition is translated: by plan id, the output of the side that DataFrame is in.
    static PLAN_COLUMNS: std::cell::RefCell<Option<PlanColumns>> = const { std::cell::RefCell::new(None) };
}

/// For each side of a join: the plan ids of its relations, and its analyzed output.
pub struct PlanColumns {
    /// The sides.
    pub sides: Vec<(Vec<i64>, Vec<crate::expr::Attribute>)>,
    /// Whether some reference resolved by its plan id (then the join is built over the
    /// sides' analyzed plans, whose column ids these are).
    pub used: bool,
}

/// Translates with references by plan id resolved against `columns`.
pub fn with_plan_columns<T>(columns: PlanColumns, f: impl FnOnce() -> T) -> (T, PlanColumns) {
    PLAN_COLUMNS.with(|c| *c.borrow_mut() = Some(columns));
    let out = f();
    let columns = PLAN_COLUMNS.with(|c| c.borrow_mut().take());
    (out, columns.unwrap_or(PlanColumns { sides: vec![], used: false }))
}

/// `df.name` of a DataFrame that is one side of the join being translated: that side's column
/// (by name, once), so a name both sides have is not ambiguous.
fn by_plan_id(parts: &[String], plan_id: i64) -> Option<Expr> {
    PLAN_COLUMNS.with(|c| {
        let mut c = c.borrow_mut();
        let columns = c.as_mut()?;
        let name = parts.last()?;
        let (_, output) = columns.sides.iter().find(|(ids, _)| ids.contains(&plan_id))?;
        let mut found = output.iter().filter(|a| a.name.eq_ignore_ascii_case(name));
        let attribute = found.next()?;
        if found.next().is_some() || parts.len() > 1 {
            return None;
        }
        columns.used = true;
        Some(Expr::Attribute(attribute.clone()))
    })
}

/// The kiln expression of a protocol expression.
pub fn expression(e: &Expression) -> Result<Expr> {
    let kind = e.expr_type.as_ref().ok_or_else(|| missing("an expression"))?;
    Ok(match kind {
        ExprType::Literal(l) => literal(l)?,
        ExprType::UnresolvedAttribute(a) => {
            let parts = name_parts(&a.unparsed_identifier)?;
            match a.plan_id.and_then(|id| by_plan_id(&parts, id)) {
                Some(resolved) => resolved,
                None => Expr::UnresolvedAttribute(parts),
            }
        }
        ExprType::UnresolvedStar(s) => match s.unparsed_target.as_deref() {
            None => Expr::UnresolvedStar(None),
            Some(t) => {
                let target = t.strip_suffix(".*").unwrap_or(t);
                Expr::UnresolvedStar((target != "*" && !target.is_empty()).then(|| target.trim_matches('`').to_string()))
            }
        },
        ExprType::UnresolvedFunction(f) => {
            let args = f.arguments.iter().map(expression).collect::<Result<Vec<_>>>()?;
            function(&f.function_name, args, f.is_distinct)?
        }
        ExprType::ExpressionString(s) => crate::sql::parse_expr(&s.expression)?,
        ExprType::Alias(a) => {
            let child = expression(a.expr.as_deref().ok_or_else(|| missing("an alias"))?)?;
            match a.name.as_slice() {
                [name] => child.alias(name.clone()),
                names => Expr::MultiAlias { child: Box::new(child), names: names.to_vec() },
            }
        }
        ExprType::Cast(c) => {
            let child = expression(c.expr.as_deref().ok_or_else(|| missing("a cast"))?)?;
            let to = match c.cast_to_type.as_ref().ok_or_else(|| missing("a cast's type"))? {
                pe::cast::CastToType::Type(t) => super::types::from_proto(t)?,
                pe::cast::CastToType::TypeStr(s) => crate::sql::parse_data_type(s)?,
            };
            if c.eval_mode == pe::cast::EvalMode::Try as i32 {
                return Err(unsupported("try_cast (Cast with EVAL_MODE_TRY)"));
            }
            Expr::Cast { child: Box::new(child), to, zone: None }
        }
        ExprType::SortOrder(_) => return Err(unsupported("a sort order outside of a sort")),
        ExprType::Window(w) => window(w)?,
        ExprType::CallFunction(f) => {
            let args = f.arguments.iter().map(expression).collect::<Result<Vec<_>>>()?;
            function(&f.function_name, args, false)?
        }
        ExprType::UnresolvedRegex(_) => return Err(unsupported("expression UnresolvedRegex (colRegex)")),
        ExprType::LambdaFunction(_) | ExprType::UnresolvedNamedLambdaVariable(_) => return Err(unsupported("expression LambdaFunction")),
        ExprType::UnresolvedExtractValue(_) => return Err(unsupported("expression UnresolvedExtractValue (getItem / getField)")),
        ExprType::UpdateFields(_) => return Err(unsupported("expression UpdateFields (withField / dropFields)")),
        ExprType::CommonInlineUserDefinedFunction(_) => return Err(unsupported("expression CommonInlineUserDefinedFunction (a Python UDF)")),
        ExprType::NamedArgumentExpression(_) => return Err(unsupported("expression NamedArgumentExpression")),
        ExprType::SubqueryExpression(_) => return Err(unsupported("expression SubqueryExpression")),
        other => return Err(unsupported(format!("expression {}", variant_name(&format!("{other:?}"))))),
    })
}

/// `Foo(..)` of a Debug print: the name of an enum variant.
pub fn variant_name(debug: &str) -> &str {
    debug.split(['(', ' ', '{']).next().unwrap_or(debug)
}

/// `a.b`, `` `a.b`.c `` as name parts, as Spark's `UnresolvedAttribute.quotedString` parses them.
pub fn name_parts(identifier: &str) -> Result<Vec<String>> {
    let mut parts = vec![];
    let mut current = String::new();
    let mut chars = identifier.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '`' if quoted && chars.peek() == Some(&'`') => {
                chars.next();
                current.push('`');
            }
            '`' => quoted = !quoted,
            '.' if !quoted => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    if quoted {
        return Err(KilnError::Parse(format!("[PARSE_SYNTAX_ERROR] unclosed backquote in the column name {identifier}")));
    }
    parts.push(current);
    Ok(parts)
}

/// A call by name: pyspark's operators arrive as functions (`+`, `==`, `and`, `when`, `isNull`)
/// and become the nodes SQL's operators build; any other name goes to the registry.
fn function(name: &str, mut args: Vec<Expr>, distinct: bool) -> Result<Expr> {
    let binary = |op: BinaryOp, args: Vec<Expr>| -> Result<Expr> {
        let [left, right]: [Expr; 2] = args.try_into().map_err(|a: Vec<Expr>| wrong_args(name, a.len()))?;
        Ok(left.binary(op, right))
    };
    let unary = |args: Vec<Expr>| -> Result<Box<Expr>> {
        let [child]: [Expr; 1] = args.try_into().map_err(|a: Vec<Expr>| wrong_args(name, a.len()))?;
        Ok(Box::new(child))
    };
    Ok(match name {
        "+" => binary(BinaryOp::Plus, args)?,
        "-" if args.len() == 2 => binary(BinaryOp::Minus, args)?,
        "-" | "negative" => Expr::Negative(unary(args)?),
        "*" => binary(BinaryOp::Multiply, args)?,
        "/" => binary(BinaryOp::Divide, args)?,
        "%" => binary(BinaryOp::Modulo, args)?,
        "==" | "=" => binary(BinaryOp::Eq, args)?,
        "!=" | "<>" => binary(BinaryOp::NotEq, args)?,
        "<" => binary(BinaryOp::Lt, args)?,
        "<=" => binary(BinaryOp::LtEq, args)?,
        ">" => binary(BinaryOp::Gt, args)?,
        ">=" => binary(BinaryOp::GtEq, args)?,
        "<=>" | "equal_null" if args.len() == 2 => binary(BinaryOp::EqNullSafe, args)?,
        "and" => binary(BinaryOp::And, args)?,
        "or" => binary(BinaryOp::Or, args)?,
        "not" | "!" => Expr::Not(unary(args)?),
        "isNull" | "isnull" => Expr::IsNull(unary(args)?),
        "isNotNull" | "isnotnull" => Expr::IsNotNull(unary(args)?),
        "bitwiseAND" => Expr::UnresolvedFunction { name: "&".into(), args, distinct },
        "bitwiseOR" => Expr::UnresolvedFunction { name: "|".into(), args, distinct },
        "bitwiseXOR" => Expr::UnresolvedFunction { name: "^".into(), args, distinct },
        "isNaN" => Expr::UnresolvedFunction { name: "isnan".into(), args, distinct },
        "in" if !args.is_empty() => {
            let child = Box::new(args.remove(0));
            Expr::InList { child, list: args, negated: false }
        }
        "like" if args.len() == 2 => {
            let pattern = Box::new(args.remove(1));
            Expr::Like { child: Box::new(args.remove(0)), pattern, negated: false }
        }
        "when" if args.len() >= 2 => {
            let else_expr = (args.len() % 2 == 1).then(|| args.pop()).flatten().map(Box::new);
            let mut branches = vec![];
            let mut it = args.into_iter();
            while let (Some(condition), Some(value)) = (it.next(), it.next()) {
                branches.push((condition, value));
            }
            Expr::CaseWhen { branches, else_expr, if_form: false }
        }
        // count(*) is count(1), as Spark's parser makes it.
        "count" if matches!(args.as_slice(), [Expr::UnresolvedStar(None)]) => {
            Expr::UnresolvedFunction { name: name.to_string(), args: vec![Expr::Literal(ScalarValue::Int32(1))], distinct }
        }
        _ => Expr::UnresolvedFunction { name: name.to_string(), args, distinct },
    })
}

fn wrong_args(name: &str, n: usize) -> KilnError {
    KilnError::analysis_with(
        "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
        format!("[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `{name}` requires a different number of parameters but the actual number is {n}."),
        &[("functionName", &format!("`{name}`")), ("actualNum", &n.to_string())],
    )
}

/// A literal value.
pub fn literal(l: &pe::Literal) -> Result<Expr> {
    Ok(Expr::Literal(match l.literal_type.as_ref().ok_or_else(|| missing("a literal"))? {
        LiteralType::Null(t) => ScalarValue::Null(super::types::from_proto(t)?),
        LiteralType::Binary(b) => ScalarValue::Binary(b.to_vec()),
        LiteralType::Boolean(b) => ScalarValue::Boolean(*b),
        LiteralType::Byte(v) => ScalarValue::Int8(i8::try_from(*v).map_err(|_| out_of_range("byte", v))?),
        LiteralType::Short(v) => ScalarValue::Int16(i16::try_from(*v).map_err(|_| out_of_range("short", v))?),
        LiteralType::Integer(v) => ScalarValue::Int32(*v),
        LiteralType::Long(v) => ScalarValue::Int64(*v),
        LiteralType::Float(v) => ScalarValue::Float32(*v),
        LiteralType::Double(v) => ScalarValue::Float64(*v),
        LiteralType::Decimal(d) => {
            // The value as SQL's parser reads a decimal literal, then the declared type.
            let value = crate::sql::parse_expr(&format!("{}BD", d.value))?;
            return Ok(match (d.precision, d.scale) {
                (Some(p), Some(s)) => Expr::Cast {
                    child: Box::new(value),
                    to: arrow::datatypes::DataType::Decimal128(u8::try_from(p).map_err(|_| out_of_range("decimal precision", &p))?, i8::try_from(s).map_err(|_| out_of_range("decimal scale", &s))?),
                    zone: None,
                },
                _ => value,
            });
        }
        LiteralType::String(s) => ScalarValue::Utf8(s.clone()),
        LiteralType::Date(d) => ScalarValue::Date32(*d),
        LiteralType::Timestamp(t) => ScalarValue::Timestamp(*t, false),
        LiteralType::TimestampNtz(t) => ScalarValue::Timestamp(*t, true),
        LiteralType::YearMonthInterval(m) => ScalarValue::IntervalMonths(*m, crate::types::interval::YEAR, crate::types::interval::MONTH),
        LiteralType::DayTimeInterval(us) => ScalarValue::IntervalMicros(*us, crate::types::interval::DAY_FIELD, crate::types::interval::SECOND),
        LiteralType::Array(a) => {
            let elements = a.elements.iter().map(literal).collect::<Result<Vec<_>>>()?;
            return Ok(Expr::UnresolvedFunction { name: "array".into(), args: elements, distinct: false });
        }
        other => return Err(unsupported(format!("literal {}", variant_name(&format!("{other:?}"))))),
    }))
}

fn out_of_range(what: &str, v: &dyn std::fmt::Display) -> KilnError {
    KilnError::exec(format!("[NUMERIC_VALUE_OUT_OF_RANGE] the {what} literal {v} is out of its type's range"))
}

/// A sort key.
pub fn sort_order(s: &pe::SortOrder) -> Result<SortOrder> {
    let expr = expression(s.child.as_deref().ok_or_else(|| missing("a sort order"))?)?;
    let ascending = s.direction != pe::sort_order::SortDirection::Descending as i32;
    let nulls_first = match pe::sort_order::NullOrdering::try_from(s.null_ordering) {
        Ok(pe::sort_order::NullOrdering::SortNullsFirst) => true,
        Ok(pe::sort_order::NullOrdering::SortNullsLast) => false,
        _ => ascending,
    };
    Ok(SortOrder { expr, ascending, nulls_first })
}

fn window(w: &pe::Window) -> Result<Expr> {
    let function = expression(w.window_function.as_deref().ok_or_else(|| missing("a window"))?)?;
    let partition_by = w.partition_spec.iter().map(expression).collect::<Result<Vec<_>>>()?;
    let order_by = w.order_spec.iter().map(sort_order).collect::<Result<Vec<_>>>()?;
    let frame = match &w.frame_spec {
        None => None,
        Some(f) => {
            let frame_type = match pe::window::window_frame::FrameType::try_from(f.frame_type) {
                Ok(pe::window::window_frame::FrameType::Row) => FrameType::Rows,
                Ok(pe::window::window_frame::FrameType::Range) => FrameType::Range,
                _ => return Err(missing("a window frame")),
            };
            let lower = bound(f.lower.as_deref(), true)?;
            let upper = bound(f.upper.as_deref(), false)?;
            Some(WindowFrame { frame_type, lower, upper })
        }
    };
    Ok(Expr::WindowExpression { function: Box::new(function), spec: WindowSpec { partition_by, order_by, frame }, ignore_nulls: false })
}

fn bound(b: Option<&pe::window::window_frame::FrameBoundary>, lower: bool) -> Result<FrameBound> {
    use pe::window::window_frame::frame_boundary::Boundary;
    Ok(match b.and_then(|b| b.boundary.as_ref()).ok_or_else(|| missing("a window frame boundary"))? {
        Boundary::CurrentRow(_) => FrameBound::CurrentRow,
        Boundary::Unbounded(_) if lower => FrameBound::UnboundedPreceding,
        Boundary::Unbounded(_) => FrameBound::UnboundedFollowing,
        Boundary::Value(v) => match expression(v)? {
            Expr::Literal(value) => FrameBound::Offset(value),
            other => return Err(unsupported(format!("a window frame boundary that is not a literal ({other})"))),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_on_unquoted_dots() {
        assert_eq!(name_parts("a.b").unwrap(), vec!["a", "b"]);
        assert_eq!(name_parts("`a.b`.c").unwrap(), vec!["a.b", "c"]);
        assert_eq!(name_parts("`x``y`").unwrap(), vec!["x`y"]);
        assert!(name_parts("`a").is_err());
    }

    #[test]
    fn operators_become_sql_nodes() {
        let a = || Expr::UnresolvedAttribute(vec!["a".into()]);
        let one = || Expr::Literal(ScalarValue::Int32(1));
        assert_eq!(function("+", vec![a(), one()], false).unwrap(), crate::sql::parse_expr("a + 1").unwrap());
        assert_eq!(function("==", vec![a(), one()], false).unwrap(), crate::sql::parse_expr("a = 1").unwrap());
        assert_eq!(function("when", vec![a(), one(), one()], false).unwrap(), crate::sql::parse_expr("CASE WHEN a THEN 1 ELSE 1 END").unwrap());
        assert!(function("+", vec![a()], false).is_err());
        assert_eq!(function("count", vec![Expr::UnresolvedStar(None)], false).unwrap(), crate::sql::parse_expr("count(*)").unwrap());
    }
}
