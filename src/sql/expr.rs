//! sqlparser expressions to kiln's unresolved `Expr`, with literals and type names read the way
//! Spark's parser reads them.

use arrow::datatypes::DataType;
use sqlparser::ast::{
    self, BinaryOperator as AstOp, CastKind, DateTimeField, DuplicateTreatment, ExactNumberInfo, FunctionArg,
    FunctionArgExpr, FunctionArguments, InTarget, Spanned, UnaryOperator, Value,
};
use sqlparser::tokenizer::Span;

use super::{parse_error, unsupported};
use crate::error::{KilnError, Result};
use crate::expr::{BinaryOp, Expr, ExprId, FrameBound, FrameType, SortOrder, SubqueryPlan, WindowFrame, WindowSpec};
use crate::types::{format_date, parse_date, ScalarValue, MAX_DECIMAL_PRECISION};

/// Nesting deeper than this is refused: sqlparser bounds right-nested input but not left-deep
/// chains (`1+1+1+...`), and lowering recurses.
const MAX_DEPTH: usize = 200;

/// Converts one sqlparser expression.
pub(crate) fn convert_expr(e: &ast::Expr) -> Result<Expr> {
    lower(e, 0)
}

/// The unresolved plan of a subquery expression; the enclosing query's CTEs are in scope.
fn subquery(q: &ast::Query) -> Result<SubqueryPlan> {
    Ok(SubqueryPlan::new(std::sync::Arc::new(super::query::QueryPlanner::for_subquery().plan_query(q)?)))
}

fn lit(v: ScalarValue) -> Expr {
    Expr::Literal(v)
}

fn boxed(e: Expr) -> Box<Expr> {
    Box::new(e)
}

fn lower(e: &ast::Expr, depth: usize) -> Result<Expr> {
    if depth > MAX_DEPTH {
        return Err(parse_error(format!("expression nested more than {MAX_DEPTH} levels deep"), start_span(e)));
    }
    let d = depth + 1;
    let sub = |x: &ast::Expr| lower(x, d);
    Ok(match e {
        ast::Expr::Identifier(id) => Expr::UnresolvedAttribute(vec![id.value.clone()]),
        ast::Expr::CompoundIdentifier(ids) => Expr::UnresolvedAttribute(ids.iter().map(|i| i.value.clone()).collect()),
        ast::Expr::Wildcard(_) => Expr::UnresolvedStar(None),
        ast::Expr::QualifiedWildcard(name, _) => Expr::UnresolvedStar(Some(object_name(name)?)),
        ast::Expr::Value(v) => lit(value_literal(&v.value, v.span)?),
        ast::Expr::TypedString(ts) => typed_string(ts)?,
        ast::Expr::Interval(iv) => lit(interval(iv)?.value(start_span(e))?),
        ast::Expr::Nested(inner) => sub(inner)?,
        ast::Expr::UnaryOp { op, expr } => unary(e, op, expr, d)?,
        ast::Expr::BinaryOp { left, op, right } => binary(e, left, op, right, d)?,
        ast::Expr::IsNull(x) => Expr::IsNull(boxed(sub(x)?)),
        ast::Expr::IsNotNull(x) => Expr::IsNotNull(boxed(sub(x)?)),
        // Spark rewrites IS [NOT] TRUE/FALSE and IS [NOT] DISTINCT FROM with <=>.
        ast::Expr::IsTrue(x) => null_safe_eq(sub(x)?, lit(ScalarValue::Boolean(true))),
        ast::Expr::IsNotTrue(x) => Expr::Not(boxed(null_safe_eq(sub(x)?, lit(ScalarValue::Boolean(true))))),
        ast::Expr::IsFalse(x) => null_safe_eq(sub(x)?, lit(ScalarValue::Boolean(false))),
        ast::Expr::IsNotFalse(x) => Expr::Not(boxed(null_safe_eq(sub(x)?, lit(ScalarValue::Boolean(false))))),
        ast::Expr::IsNotDistinctFrom(a, b) => null_safe_eq(sub(a)?, sub(b)?),
        ast::Expr::IsDistinctFrom(a, b) => Expr::Not(boxed(null_safe_eq(sub(a)?, sub(b)?))),
        ast::Expr::Between { expr, negated, low, high } => {
            let x = sub(expr)?;
            let range = x.clone().binary(BinaryOp::GtEq, sub(low)?).and(x.binary(BinaryOp::LtEq, sub(high)?));
            if *negated {
                Expr::Not(boxed(range))
            } else {
                range
            }
        }
        ast::Expr::In { expr, target, negated, .. } => match target {
            InTarget::List(list) if matches!(expr.as_ref(), ast::Expr::Tuple(_)) => row_in_list(expr, list, *negated, &sub)?,
            InTarget::List(list) => Expr::InList {
                child: boxed(sub(expr)?),
                list: list.iter().map(sub).collect::<Result<_>>()?,
                negated: *negated,
            },
            InTarget::Subquery(q) => {
                // `(a, b) IN (SELECT x, y ...)`: a row value's items are the values (Spark's AstBuilder).
                let values = match expr.as_ref() {
                    ast::Expr::Tuple(items) => items.iter().map(sub).collect::<Result<Vec<_>>>()?,
                    other => vec![sub(other)?],
                };
                let e = Expr::InSubquery { values, plan: subquery(q)?, id: ExprId::next() };
                if *negated {
                    Expr::Not(boxed(e))
                } else {
                    e
                }
            }
            _ => return Err(unsupported("IN with a target other than a list", start_span(e))),
        },
        ast::Expr::Like { negated, any, expr, pattern, escape_char } => {
            if *any {
                return Err(unsupported("LIKE ANY", start_span(e)));
            }
            let pattern = like_escape(sub(pattern)?, escape_char.as_deref())?;
            Expr::Like { child: boxed(sub(expr)?), pattern: boxed(pattern), negated: *negated }
        }
        // `s RLIKE p` / `s REGEXP p`: the function rlike(s, p).
        ast::Expr::RLike { negated, expr, pattern, .. } => {
            let f = Expr::UnresolvedFunction { name: "rlike".into(), args: vec![sub(expr)?, sub(pattern)?], distinct: false };
            if *negated {
                Expr::Not(boxed(f))
            } else {
                f
            }
        }
        ast::Expr::Case { operand, conditions, else_result, .. } => {
            let operand = operand.as_deref().map(sub).transpose()?;
            let mut branches = Vec::with_capacity(conditions.len());
            for w in conditions {
                let cond = sub(&w.condition)?;
                // `CASE x WHEN v` means `CASE WHEN x = v`, as Spark's parser builds it.
                let cond = match &operand {
                    Some(o) => o.clone().binary(BinaryOp::Eq, cond),
                    None => cond,
                };
                branches.push((cond, sub(&w.result)?));
            }
            let else_expr = else_result.as_deref().map(sub).transpose()?.map(Box::new);
            Expr::CaseWhen { branches, else_expr, if_form: false }
        }
        ast::Expr::Cast { kind, expr, data_type, format } => {
            match kind {
                CastKind::Cast | CastKind::DoubleColon => {}
                CastKind::TryCast => {
                    if format.is_some() {
                        return Err(unsupported("TRY_CAST ... FORMAT", start_span(e)));
                    }
                    let to = sql_data_type(data_type, start_span(e))?;
                    let func = crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::TryCast(crate::types::time_zone::Zone::UTC));
                    return Ok(Expr::Function { func, args: vec![sub(expr)?, Expr::Literal(ScalarValue::Null(to))] });
                }
                CastKind::SafeCast => return Err(unsupported("SAFE_CAST", start_span(e))),
            }
            if format.is_some() {
                return Err(unsupported("CAST ... FORMAT", start_span(e)));
            }
            // Spark has no unsigned types: `10::tinyint unsigned` is `10::tinyint AS unsigned`.
            use ast::DataType as T;
            let signed = match data_type {
                T::TinyIntUnsigned(w) if *kind == CastKind::DoubleColon => Some(T::TinyInt(*w)),
                T::SmallIntUnsigned(w) if *kind == CastKind::DoubleColon => Some(T::SmallInt(*w)),
                T::IntUnsigned(w) if *kind == CastKind::DoubleColon => Some(T::Int(*w)),
                T::IntegerUnsigned(w) if *kind == CastKind::DoubleColon => Some(T::Integer(*w)),
                T::BigIntUnsigned(w) if *kind == CastKind::DoubleColon => Some(T::BigInt(*w)),
                _ => None,
            };
            if let Some(t) = signed {
                return Ok(Expr::Cast { child: boxed(sub(expr)?), to: sql_data_type(&t, start_span(e))?, zone: None }.alias("unsigned"));
            }
            Expr::Cast { child: boxed(sub(expr)?), to: sql_data_type(data_type, start_span(e))?, zone: None }
        }
        ast::Expr::Extract { field, expr, .. } => {
            let seconds = match field {
                DateTimeField::Second | DateTimeField::Seconds => true,
                DateTimeField::Custom(f) => crate::expr::is_seconds_field(&f.value),
                _ => false,
            };
            if seconds {
                return Ok(Expr::UnresolvedFunction { name: crate::analyzer::EXTRACT.into(), args: vec![lit(ScalarValue::Utf8(field_text(field))), sub(expr)?], distinct: false });
            }
            // Spark's abbreviations (`y`, `mon`, `h`) parse as custom fields.
            let known = match field {
                DateTimeField::Custom(f) => crate::expr::extract_field_function(&f.value).is_some(),
                _ => extract_function(field, start_span(e)).is_ok(),
            };
            if !known {
                return Err(KilnError::analysis("INVALID_EXTRACT_FIELD", format!("Cannot extract {} from \"{expr}\".", field_text(field))));
            }
            // Spark's parser: `'extract(field, source)`, resolved by the field.
            Expr::UnresolvedFunction { name: crate::analyzer::EXTRACT.into(), args: vec![lit(ScalarValue::Utf8(field_text(field))), sub(expr)?], distinct: false }
        }
        ast::Expr::Substring { expr, substring_from, substring_for, shorthand, .. } => {
            let mut args = vec![sub(expr)?];
            match (substring_from, substring_for) {
                (Some(from), Some(len)) => args.extend([sub(from)?, sub(len)?]),
                (Some(from), None) => args.push(sub(from)?),
                (None, Some(len)) => args.extend([lit(ScalarValue::Int32(1)), sub(len)?]),
                (None, None) => {}
            }
            let name = if *shorthand { "substr" } else { "substring" };
            Expr::UnresolvedFunction { name: name.into(), args, distinct: false }
        }
        // TRIM([BOTH | LEADING | TRAILING] [chars] FROM s) and trim(chars, s): Spark's
        // trim/ltrim/rtrim, the characters first.
        ast::Expr::Trim { expr, trim_where, trim_what, trim_characters } => {
            let name = match trim_where {
                Some(ast::TrimWhereField::Leading) => "ltrim",
                Some(ast::TrimWhereField::Trailing) => "rtrim",
                _ => "trim",
            };
            let args = match (trim_what, trim_characters.as_deref()) {
                (None, None) => vec![sub(expr)?],
                (Some(what), None) => vec![sub(what)?, sub(expr)?],
                (None, Some([s])) => vec![sub(expr)?, sub(s)?],
                _ => return Err(unsupported("TRIM with several character arguments", start_span(e))),
            };
            Expr::UnresolvedFunction { name: name.into(), args, distinct: false }
        }
        ast::Expr::Function(f) => function(f, d)?,
        ast::Expr::Ceil { expr, field } | ast::Expr::Floor { expr, field } => {
            let name = if matches!(e, ast::Expr::Ceil { .. }) { "ceil" } else { "floor" };
            let mut args = vec![sub(expr)?];
            match field {
                ast::CeilFloorKind::DateTimeField(DateTimeField::NoDateTime) => {}
                ast::CeilFloorKind::Scale(v) => args.push(lit(value_literal(&v.value, v.span)?)),
                ast::CeilFloorKind::DateTimeField(_) => return Err(unsupported("CEIL/FLOOR(... TO ...)", start_span(e))),
            }
            Expr::UnresolvedFunction { name: name.into(), args, distinct: false }
        }
        // `OVERLAY(s PLACING r FROM p [FOR n])` is overlay(s, r, p[, n]).
        ast::Expr::Overlay { expr, overlay_what, overlay_from, overlay_for } => {
            let mut args = vec![sub(expr)?, sub(overlay_what)?, sub(overlay_from)?];
            if let Some(n) = overlay_for {
                args.push(sub(n)?);
            }
            Expr::UnresolvedFunction { name: "overlay".into(), args, distinct: false }
        }
        ast::Expr::Position { expr, r#in } => Expr::UnresolvedFunction { name: "locate".into(), args: vec![sub(expr)?, sub(r#in)?], distinct: false },
        // Spark's ILIKE is LIKE of the lower-cased value and pattern.
        ast::Expr::ILike { negated, any: false, expr, pattern, escape_char } => {
            let lower = |x: Expr| match x {
                Expr::Literal(ScalarValue::Utf8(s)) => lit(ScalarValue::Utf8(s.to_lowercase())),
                other => Expr::UnresolvedFunction { name: "lower".into(), args: vec![other], distinct: false },
            };
            let pattern = like_escape(lower(sub(pattern)?), escape_char.as_deref())?;
            Expr::Like { child: boxed(lower(sub(expr)?)), pattern: boxed(pattern), negated: *negated }
        }
        ast::Expr::IsUnknown(x) => Expr::IsNull(boxed(sub(x)?)),
        ast::Expr::IsNotUnknown(x) => Expr::IsNotNull(boxed(sub(x)?)),
        ast::Expr::Subquery(q) => Expr::ScalarSubquery { plan: subquery(q)?, id: ExprId::next() },
        // `a[i]`, `a[i][j]` (Spark's GetArrayItem, 0-based), `m[k]`, `s['f']`, and `.f` after
        // either (`a[0].f`, `named_struct(...).f`): the analyzer reads each by its base's type.
        ast::Expr::CompoundFieldAccess { root, access_chain }
            if access_chain.iter().all(|a| matches!(a, ast::AccessExpr::Subscript(ast::Subscript::Index { .. }) | ast::AccessExpr::Dot(ast::Expr::Identifier(_)))) =>
        {
            let mut out = sub(root)?;
            let func = crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::GetItem);
            for a in access_chain {
                let key = match a {
                    ast::AccessExpr::Subscript(ast::Subscript::Index { index }) => sub(index)?,
                    ast::AccessExpr::Dot(ast::Expr::Identifier(i)) => lit(ScalarValue::Utf8(i.value.clone())),
                    _ => return Err(unsupported(construct_name(e), start_span(e))),
                };
                out = Expr::Function { func, args: vec![out, key] };
            }
            out
        }
        // `struct(a, b AS x, 1)`: Spark's CreateStruct, fields named by the column (or alias),
        // else `col1`, `col2`, ... by position.
        ast::Expr::Struct { values, fields } if fields.is_empty() => {
            let mut args = Vec::with_capacity(values.len() * 2);
            for (i, v) in values.iter().enumerate() {
                let (name, value) = match v {
                    ast::Expr::Named { expr, name } => (name.value.clone(), sub(expr)?),
                    ast::Expr::Identifier(id) => (id.value.clone(), sub(v)?),
                    ast::Expr::CompoundIdentifier(ids) => (ids.last().map(|i| i.value.clone()).unwrap_or_default(), sub(v)?),
                    other => (format!("col{}", i + 1), sub(other)?),
                };
                args.push(lit(ScalarValue::Utf8(name)));
                args.push(value);
            }
            Expr::UnresolvedFunction { name: crate::expr::STRUCT_FUNCTION.into(), args, distinct: false }
        }
        ast::Expr::Exists { subquery: q, negated } => {
            let e = Expr::Exists { plan: subquery(q)?, id: ExprId::next() };
            if *negated {
                Expr::Not(boxed(e))
            } else {
                e
            }
        }
        ast::Expr::Rollup(_) => return Err(unsupported("GROUP BY ROLLUP(...)", start_span(e))),
        ast::Expr::Cube(_) => return Err(unsupported("GROUP BY CUBE(...)", start_span(e))),
        ast::Expr::GroupingSets(_) => return Err(unsupported("GROUP BY GROUPING SETS(...)", start_span(e))),
        other => return Err(unsupported(construct_name(other), start_span(e))),
    })
}

fn null_safe_eq(a: Expr, b: Expr) -> Expr {
    a.binary(BinaryOp::EqNullSafe, b)
}

/// Where an expression starts. sqlparser's `span()` and `Display` walk the whole subtree and
/// overflow the stack on deep input (a 2000-term `a + b + ...`), so errors use this instead.
pub(crate) fn start_span(e: &ast::Expr) -> Span {
    let mut cur = e;
    for _ in 0..MAX_DEPTH {
        cur = match cur {
            ast::Expr::BinaryOp { left, .. } => left,
            ast::Expr::IsNull(x) | ast::Expr::IsNotNull(x) | ast::Expr::IsTrue(x) | ast::Expr::IsFalse(x) => x,
            ast::Expr::Between { expr, .. } | ast::Expr::In { expr, .. } | ast::Expr::Like { expr, .. } => expr,
            ast::Expr::ILike { expr, .. } | ast::Expr::RLike { expr, .. } | ast::Expr::SimilarTo { expr, .. } => expr,
            ast::Expr::Rollup(sets) | ast::Expr::Cube(sets) | ast::Expr::GroupingSets(sets) => {
                match sets.first().and_then(|set| set.first()) {
                    Some(first) => first,
                    None => return Span::empty(),
                }
            }
            ast::Expr::Identifier(id) => return id.span,
            ast::Expr::CompoundIdentifier(ids) => return ids.first().map(|i| i.span).unwrap_or(Span::empty()),
            ast::Expr::Value(v) => return v.span,
            ast::Expr::TypedString(ts) => return ts.value.span,
            ast::Expr::Function(f) => return f.name.span(),
            ast::Expr::Case { case_token, .. } => return case_token.0.span,
            ast::Expr::Wildcard(t) | ast::Expr::QualifiedWildcard(_, t) => return t.0.span,
            _ => return Span::empty(),
        };
    }
    Span::empty()
}

/// `(a, b) IN ((1, 2), (3, 4))`: Spark compares the row values as structs, whose fields are
/// equal when both are NULL, so it is `(a <=> 1 AND b <=> 2) OR (a <=> 3 AND b <=> 4)` (never
/// NULL). Every row in the list must have as many items as the left side.
fn row_in_list(expr: &ast::Expr, list: &[ast::Expr], negated: bool, sub: &dyn Fn(&ast::Expr) -> Result<Expr>) -> Result<Expr> {
    fn items(e: &ast::Expr) -> Option<Vec<&ast::Expr>> {
        match e {
            ast::Expr::Tuple(items) => Some(items.iter().collect()),
            _ => None,
        }
    }
    let left = items(expr).unwrap_or_default();
    let left_values = left.iter().map(|e| sub(e)).collect::<Result<Vec<_>>>()?;
    let mut any: Option<Expr> = None;
    for row in list {
        let Some(right) = items(row).filter(|r| r.len() == left.len()) else {
            return Err(crate::error::KilnError::analysis(
                "DATATYPE_MISMATCH.DATA_DIFF_TYPES",
                format!("Cannot resolve \"({expr} IN ({}))\" due to data type mismatch: Input to `in` should all be the same type, but the row value has {} items and `{row}` does not.", list.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", "), left.len()),
            ));
        };
        let mut all: Option<Expr> = None;
        for (l, r) in left_values.iter().zip(right) {
            let eq = null_safe_eq(l.clone(), sub(r)?);
            all = Some(match all {
                None => eq,
                Some(a) => a.and(eq),
            });
        }
        let Some(all) = all else { continue };
        any = Some(match any {
            None => all,
            Some(a) => a.binary(BinaryOp::Or, all),
        });
    }
    let any = any.unwrap_or(lit(ScalarValue::Boolean(false)));
    Ok(if negated { Expr::Not(Box::new(any)) } else { any })
}

/// A name for an expression kiln does not support (without printing it: see `start_span`).
fn construct_name(e: &ast::Expr) -> &'static str {
    match e {
        ast::Expr::Trim { .. } => "TRIM(...)",
        ast::Expr::Position { .. } => "POSITION(... IN ...)",
        ast::Expr::Ceil { .. } | ast::Expr::Floor { .. } => "CEIL/FLOOR(... TO ...)",
        ast::Expr::Collate { .. } => "COLLATE",
        ast::Expr::AtTimeZone { .. } => "AT TIME ZONE",
        ast::Expr::Convert { .. } => "CONVERT(...)",
        ast::Expr::ILike { .. } => "ILIKE",
        ast::Expr::RLike { .. } => "RLIKE / REGEXP",
        ast::Expr::SimilarTo { .. } => "SIMILAR TO",
        ast::Expr::AnyOp { .. } | ast::Expr::AllOp { .. } => "ANY / ALL comparison",
        ast::Expr::IsUnknown(_) | ast::Expr::IsNotUnknown(_) => "IS [NOT] UNKNOWN",
        ast::Expr::Tuple(_) => "row value (a, b, ...)",
        ast::Expr::Array(_) => "array literal",
        ast::Expr::Map(_) => "map literal",
        ast::Expr::Struct { .. } => "struct literal",
        ast::Expr::CompoundFieldAccess { .. } | ast::Expr::JsonAccess { .. } => "field access or subscript",
        ast::Expr::Lambda(_) => "lambda function",
        _ => "this expression",
    }
}

/// `a.b.c` as one dotted string.
pub(crate) fn object_name(name: &ast::ObjectName) -> Result<String> {
    Ok(object_name_parts(name)?.join("."))
}

/// The identifiers of a (possibly qualified) name.
pub(crate) fn object_name_parts(name: &ast::ObjectName) -> Result<Vec<String>> {
    name.0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(id) => Ok(id.value.clone()),
            other => Err(unsupported(format!("name part `{other}`"), name.span())),
        })
        .collect()
}

fn unary(e: &ast::Expr, op: &UnaryOperator, x: &ast::Expr, d: usize) -> Result<Expr> {
    match op {
        UnaryOperator::Minus => match x {
            // Spark's grammar reads `-5` as one literal, so fold the sign in.
            ast::Expr::Value(v) => match &v.value {
                Value::Number(n, long) => Ok(lit(number(n, *long, true, v.span)?)),
                _ => Ok(Expr::Negative(boxed(lower(x, d)?))),
            },
            _ => Ok(Expr::Negative(boxed(lower(x, d)?))),
        },
        // Spark's UnaryPositive (`+'1'` is a double); a number keeps its literal.
        UnaryOperator::Plus => match x {
            ast::Expr::Value(v) if matches!(v.value, Value::Number(..)) => lower(x, d),
            _ => Ok(Expr::UnresolvedFunction { name: "positive".into(), args: vec![lower(x, d)?], distinct: false }),
        },
        UnaryOperator::Not | UnaryOperator::BangNot => Ok(Expr::Not(boxed(lower(x, d)?))),
        UnaryOperator::BitwiseNot => Ok(Expr::UnresolvedFunction { name: "~".into(), args: vec![lower(x, d)?], distinct: false }),
        other => Err(unsupported(format!("unary operator {other}"), start_span(e))),
    }
}

/// A binary operation. `a + b - c ...` nests to the left without bound in sqlparser's AST,
/// so the left spine is walked in a loop (no recursion per term) and the depth of the
/// result is checked here.
fn binary(e: &ast::Expr, left: &ast::Expr, op: &AstOp, right: &ast::Expr, d: usize) -> Result<Expr> {
    match op {
        AstOp::And => return logical(BinaryOp::And, op, left, right, d),
        AstOp::Or => return logical(BinaryOp::Or, op, left, right, d),
        _ => {}
    }
    let mut spine = vec![(op, right)];
    let mut cur = left;
    while let ast::Expr::BinaryOp { left: l, op: o, right: r } = cur {
        if matches!(o, AstOp::And | AstOp::Or) {
            break;
        }
        spine.push((o, r.as_ref()));
        cur = l.as_ref();
    }
    if d + spine.len() > MAX_DEPTH {
        return Err(parse_error(format!("expression nested more than {MAX_DEPTH} levels deep"), start_span(e)));
    }
    let mut acc = lower(cur, d)?;
    for (op, right) in spine.into_iter().rev() {
        acc = apply_binary(e, acc, op, right, d)?;
    }
    Ok(acc)
}

fn apply_binary(e: &ast::Expr, left: Expr, op: &AstOp, right: &ast::Expr, d: usize) -> Result<Expr> {
    let kop = match op {
        AstOp::Plus => BinaryOp::Plus,
        AstOp::Minus => BinaryOp::Minus,
        AstOp::Multiply => BinaryOp::Multiply,
        AstOp::Divide => BinaryOp::Divide,
        AstOp::Modulo => BinaryOp::Modulo,
        AstOp::Eq => BinaryOp::Eq,
        AstOp::NotEq => BinaryOp::NotEq,
        AstOp::Lt => BinaryOp::Lt,
        AstOp::LtEq => BinaryOp::LtEq,
        AstOp::Gt => BinaryOp::Gt,
        AstOp::GtEq => BinaryOp::GtEq,
        AstOp::Spaceship => BinaryOp::EqNullSafe,
        AstOp::StringConcat => {
            return Ok(Expr::UnresolvedFunction { name: "concat".into(), args: vec![left, lower(right, d)?], distinct: false })
        }
        AstOp::MyIntegerDivide => BinaryOp::IntDivide,
        AstOp::BitwiseAnd | AstOp::BitwiseOr | AstOp::BitwiseXor => {
            let name = match op {
                AstOp::BitwiseAnd => "&",
                AstOp::BitwiseOr => "|",
                _ => "^",
            };
            return Ok(Expr::UnresolvedFunction { name: name.into(), args: vec![left, lower(right, d)?], distinct: false });
        }
        // `<<`, `>>`, `>>>` (the dialect reads the last as a custom operator).
        AstOp::PGBitwiseShiftLeft | AstOp::PGBitwiseShiftRight | AstOp::Custom(_) => {
            let name = match op {
                AstOp::PGBitwiseShiftLeft => "shiftleft",
                AstOp::PGBitwiseShiftRight => "shiftright",
                AstOp::Custom(c) if c == ">>>" => "shiftrightunsigned",
                other => return Err(unsupported(format!("operator {other}"), start_span(e))),
            };
            return Ok(Expr::UnresolvedFunction { name: name.into(), args: vec![left, lower(right, d)?], distinct: false });
        }
        other => return Err(unsupported(format!("operator {other}"), start_span(e))),
    };
    if let (BinaryOp::Plus | BinaryOp::Minus, ast::Expr::Interval(iv)) = (kop, right) {
        if let Interval::Months(months, start, end) = interval(iv)? {
            return fold_month_interval(e, left, kop, months, (start, end));
        }
    }
    Ok(left.binary(kop, lower(right, d)?))
}

/// `a AND b AND c ...` as Spark's parser builds it: the left-nested run of one operator is
/// collected and rebuilt as a balanced tree (`((a AND b) AND c) AND (d AND e)` for five).
fn logical(kop: BinaryOp, aop: &AstOp, left: &ast::Expr, right: &ast::Expr, d: usize) -> Result<Expr> {
    let mut operands = vec![right];
    let mut cur = left;
    while let ast::Expr::BinaryOp { left: l, op, right: r } = cur {
        if op != aop {
            break;
        }
        operands.push(r.as_ref());
        cur = l.as_ref();
    }
    operands.push(cur);
    operands.reverse();
    let exprs = operands.into_iter().map(|o| lower(o, d)).collect::<Result<Vec<_>>>()?;
    balanced(kop, exprs).ok_or_else(|| KilnError::internal("empty AND/OR chain"))
}

fn balanced(op: BinaryOp, mut v: Vec<Expr>) -> Option<Expr> {
    if v.len() <= 2 {
        let r = v.pop()?;
        return Some(match v.pop() {
            Some(l) => l.binary(op, r),
            None => r,
        });
    }
    let right = v.split_off(v.len().div_ceil(2));
    Some(balanced(op, v)?.binary(op, balanced(op, right)?))
}

/// `DATE 'd' ± INTERVAL 'n' YEAR|MONTH`, folded to a date literal (the TPC-H plans print the
/// folded date).
fn fold_month_interval(e: &ast::Expr, left: Expr, op: BinaryOp, months: i64, (start, end): (u8, u8)) -> Result<Expr> {
    match left {
        Expr::Literal(ScalarValue::Date32(days)) => {
            let months = if op == BinaryOp::Minus { -months } else { months };
            let date = add_months(days, months).ok_or_else(|| parse_error("date out of range after adding the INTERVAL", start_span(e)))?;
            Ok(lit(ScalarValue::Date32(date)))
        }
        other => {
            let months = i32::try_from(months).map_err(|_| parse_error("INTERVAL out of range", start_span(e)))?;
            Ok(other.binary(op, lit(ScalarValue::IntervalMonths(months, start, end))))
        }
    }
}

/// Spark's `add_months`: same day of month, clamped to the month's last day.
fn add_months(days: i32, months: i64) -> Option<i32> {
    let text = format_date(days);
    let mut parts = text.splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    let total = y.checked_mul(12)?.checked_add(m - 1)?.checked_add(months)?;
    let (ny, nm) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    if !(0..=9999).contains(&ny) {
        return None;
    }
    (0..4).find_map(|k| day.checked_sub(k).and_then(|dd| parse_date(&format!("{ny:04}-{nm:02}-{dd:02}"))))
}

/// An interval literal: months or microseconds, and its type's start and end fields.
enum Interval {
    Months(i64, u8, u8),
    Micros(i64, u8, u8),
    /// A calendar interval (`spark.sql.legacy.interval.enabled`): months, days, microseconds.
    Calendar(i64, i64, i64),
}

impl Interval {
    fn value(self, span: Span) -> Result<ScalarValue> {
        let int = |n: i64| i32::try_from(n).map_err(|_| parse_error("INTERVAL out of range", span));
        Ok(match self {
            Interval::Micros(n, s, e) => ScalarValue::IntervalMicros(n, s, e),
            Interval::Months(n, s, e) => ScalarValue::IntervalMonths(int(n)?, s, e),
            Interval::Calendar(m, d, us) => ScalarValue::Calendar(int(m)?, int(d)?, us),
        })
    }

    /// As Spark's legacy parser keeps it: a day-time value from a DAY field as days and the
    /// rest (`'1 02:03' DAY TO MINUTE` is 1 days 2 hours 3 minutes, `90 MINUTES` 1 hours 30 minutes).
    fn calendar(self) -> Interval {
        match self {
            Interval::Months(m, ..) => Interval::Calendar(m, 0, 0),
            Interval::Micros(us, start, _) if start == crate::types::interval::DAY_FIELD => {
                let day = crate::types::timestamp::MICROS_PER_DAY;
                Interval::Calendar(0, us / day, us % day)
            }
            Interval::Micros(us, ..) => Interval::Calendar(0, 0, us),
            c @ Interval::Calendar(..) => c,
        }
    }
}

thread_local! {
    /// `spark.sql.legacy.interval.enabled` while a text is parsed (`ParseOptions`): interval
    /// literals are calendar intervals, as Spark's AstBuilder builds them under it.
    pub(crate) static LEGACY_INTERVAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Spark's field code of a unit: (true, code) for YEAR / MONTH, (false, code) for DAY .. SECOND.
fn field_code(f: &DateTimeField) -> Option<(bool, u8)> {
    use crate::types::interval as iv;
    Some(match f {
        DateTimeField::Year | DateTimeField::Years => (true, iv::YEAR),
        DateTimeField::Month | DateTimeField::Months => (true, iv::MONTH),
        DateTimeField::Week(None) | DateTimeField::Weeks | DateTimeField::Day | DateTimeField::Days => (false, iv::DAY_FIELD),
        DateTimeField::Hour | DateTimeField::Hours => (false, iv::HOUR),
        DateTimeField::Minute | DateTimeField::Minutes => (false, iv::MINUTE),
        DateTimeField::Second | DateTimeField::Seconds => (false, iv::SECOND),
        _ => return None,
    })
}

/// Whether a day-time string has the shape of its type from `start` to `end` (Spark's
/// `[+|-]d h`, `d h:m`, `d h:m:s[.n]`, `h:m`, `h:m:s[.n]`, `m:s[.n]`): a day only before a
/// space, one colon-separated part per field after the first, a fraction only on seconds.
fn day_time_shape(text: &str, start: u8, end: u8) -> bool {
    use crate::types::interval::{DAY_FIELD, SECOND};
    let t = text.strip_prefix(['-', '+']).unwrap_or(text);
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    let time = match (start == DAY_FIELD, t.split_once(' ')) {
        (true, Some((day, rest))) if digits(day) => rest,
        (true, Some(_)) => return false,
        (true, None) | (false, Some(_)) => return false,
        (false, None) => t,
    };
    let (hms, frac) = time.split_once('.').map_or((time, None), |(a, b)| (a, Some(b)));
    let parts = hms.split(':').count();
    let Some(later) = end.checked_sub(start).filter(|n| *n > 0) else { return false };
    let fields = usize::from(later) + usize::from(start != DAY_FIELD);
    parts == fields && hms.split(':').all(digits) && frac.is_none_or(|f| end == SECOND && digits(f))
}

/// `'d hh:mm:ss[.f]'` (DAY TO SECOND) and its shorter forms as microseconds.
fn day_time_text(text: &str, from: &DateTimeField) -> Option<i64> {
    let (neg, t) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (days, time) = match (from, t.split_once(' ')) {
        (DateTimeField::Day | DateTimeField::Days, Some((d, rest))) => (d.parse::<i64>().ok()?, rest),
        (DateTimeField::Day | DateTimeField::Days, None) => (t.parse::<i64>().ok()?, ""),
        _ => (0, t),
    };
    // In i128 until signed: the most negative value has no positive counterpart.
    let mut us = i128::from(days).checked_mul(86_400_000_000)?;
    if !time.is_empty() {
        let (hms, frac) = time.split_once('.').unwrap_or((time, ""));
        let parts: Vec<i128> = hms.split(':').map(|p| p.parse().ok()).collect::<Option<_>>()?;
        let unit = match from {
            DateTimeField::Minute | DateTimeField::Minutes => [60_000_000, 1_000_000, 0],
            DateTimeField::Second | DateTimeField::Seconds => [1_000_000, 0, 0],
            _ => [3_600_000_000, 60_000_000, 1_000_000],
        };
        for (p, u) in parts.iter().zip(unit) {
            us = us.checked_add(p.checked_mul(u)?)?;
        }
        if !frac.is_empty() {
            let six: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
            us = us.checked_add(six.parse::<i128>().ok()?)?;
        }
    }
    i64::try_from(if neg { -us } else { us }).ok()
}

/// `INTERVAL '90' DAY`, `INTERVAL 90 DAYS`, `INTERVAL '1' YEAR`, ... as days or months, or
/// under `spark.sql.legacy.interval.enabled` as a calendar interval.
fn interval(iv: &ast::Interval) -> Result<Interval> {
    let legacy = LEGACY_INTERVAL.with(std::cell::Cell::get);
    let value = typed_interval(iv, legacy)?;
    Ok(if legacy { value.calendar() } else { value })
}

fn typed_interval(iv: &ast::Interval, legacy: bool) -> Result<Interval> {
    let span = start_span(&iv.value);
    if iv.leading_precision.is_some() || iv.fractional_seconds_precision.is_some() {
        return Err(unsupported("INTERVAL with a precision", span));
    }
    let literal = |e: &ast::Expr| -> Result<String> {
        match e {
            ast::Expr::Value(v) => match &v.value {
                Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Ok(s.trim().to_string()),
                Value::Number(n, false) => Ok(n.clone()),
                other => Err(parse_error(format!("invalid INTERVAL value {other}"), span)),
            },
            _ => Err(unsupported("INTERVAL of a non-literal value", span)),
        }
    };
    let text = match iv.value.as_ref() {
        // `INTERVAL -'10.5' SECOND`: the value negated (a single unit or a range of them).
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Minus, expr } if iv.leading_field.is_some() => {
            let t = literal(expr)?;
            match t.strip_prefix('-') {
                Some(rest) => rest.to_string(),
                None => format!("-{}", t.strip_prefix('+').unwrap_or(&t)),
            }
        }
        ast::Expr::UnaryOp { op: ast::UnaryOperator::Plus, expr } if iv.leading_field.is_some() => literal(expr)?,
        e => literal(e)?,
    };
    let Some(field) = &iv.leading_field else {
        return units_in_text(&text, legacy).map_err(|why| match why.as_str() {
            MIXED_UNITS => parse_error(format!("{why}: INTERVAL '{text}'."), span),
            _ => parse_error(format!("[INVALID_TYPED_LITERAL] The value of the typed literal \"INTERVAL\" is invalid: '{text}' ({why})"), span),
        });
    };
    // `INTERVAL '1-2' YEAR TO MONTH`, `INTERVAL '1 02:03:04.5' DAY TO SECOND`, ...
    if let Some(last) = &iv.last_field {
        let bad = || {
            let (class, shape) = match (field, last) {
                (DateTimeField::Year, _) => ("UNMATCHED_FORMAT_STRING", "year-month format of `[+|-]y-m`"),
                _ => ("UNMATCHED_FORMAT_STRING_WITH_NOTICE", "day-time format"),
            };
            parse_error(format!("[INVALID_INTERVAL_FORMAT.{class}] Error parsing '{text}' to interval. Interval string does not match {shape} when cast to INTERVAL {field} TO {last}."), span)
        };
        let (start, end) = match (field_code(field), field_code(last)) {
            (Some((_, s)), Some((_, e))) => (s, e),
            _ => (0, 0),
        };
        return Ok(match (field, last) {
            (DateTimeField::Year, DateTimeField::Month) => {
                let (neg, t) = text.strip_prefix('-').map_or((false, text.as_str()), |r| (true, r));
                let (y, m) = t.split_once('-').ok_or_else(bad)?;
                let (y, m): (i64, i64) = (y.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
                if m > 11 {
                    return Err(bad());
                }
                Interval::Months(if neg { -(y * 12 + m) } else { y * 12 + m }, start, end)
            }
            (DateTimeField::Day | DateTimeField::Hour | DateTimeField::Minute, DateTimeField::Hour | DateTimeField::Minute | DateTimeField::Second) => {
                if !day_time_shape(&text, start, end) {
                    return Err(bad());
                }
                Interval::Micros(day_time_text(&text, field).ok_or_else(bad)?, start, end)
            }
            _ => {
                return Err(parse_error(
                    format!("[INVALID_INTERVAL_FORMAT.UNSUPPORTED_FROM_TO_EXPRESSION] Error parsing '{text}' to interval. Cannot support (interval '{text}' {field} to {last}) expression."),
                    span,
                ))
            }
        });
    }
    if matches!(field, DateTimeField::Second | DateTimeField::Seconds) {
        let us = day_time_text(&text, field).ok_or_else(|| parse_error(format!("invalid INTERVAL value '{text}'"), span))?;
        return Ok(Interval::Micros(us, crate::types::interval::SECOND, crate::types::interval::SECOND));
    }
    let n: i64 = text.parse().map_err(|_| parse_error(format!("invalid INTERVAL value '{text}'"), span))?;
    let overflow = || match field {
        DateTimeField::Year | DateTimeField::Years | DateTimeField::Month | DateTimeField::Months => parse_error(
            format!("[INVALID_INTERVAL_FORMAT.ARITHMETIC_EXCEPTION] Error parsing ' {text} {field}' to interval. Uncaught arithmetic exception while parsing ' {text} {field}'."),
            span,
        ),
        _ => KilnError::exec("[INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION] Integer overflow while operating with intervals. Try devising appropriate values for the interval parameters."),
    };
    // Spark's day-time intervals are microseconds in a long: 106751991 days at most.
    use crate::types::interval::{DAY_FIELD, HOUR, MINUTE, MONTH, YEAR};
    let days = |d: Option<i64>| d.and_then(|d| d.checked_mul(crate::types::timestamp::MICROS_PER_DAY)).map(|us| Interval::Micros(us, DAY_FIELD, DAY_FIELD)).ok_or_else(overflow);
    Ok(match field {
        DateTimeField::Year | DateTimeField::Years => Interval::Months(n.checked_mul(12).ok_or_else(overflow)?, YEAR, YEAR),
        DateTimeField::Month | DateTimeField::Months => Interval::Months(n, MONTH, MONTH),
        DateTimeField::Week(None) | DateTimeField::Weeks => days(n.checked_mul(7))?,
        DateTimeField::Day | DateTimeField::Days => days(Some(n))?,
        DateTimeField::Hour | DateTimeField::Hours => Interval::Micros(n.checked_mul(3_600_000_000).ok_or_else(overflow)?, HOUR, HOUR),
        DateTimeField::Minute | DateTimeField::Minutes => Interval::Micros(n.checked_mul(60_000_000).ok_or_else(overflow)?, MINUTE, MINUTE),
        other => return Err(unsupported(format!("INTERVAL unit {other} (kiln supports YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND)"), span)),
    })
}

/// `INTERVAL '1 year 2 months'`, `INTERVAL '3 days 4 hours'`: Spark's stringToInterval, then as
/// its constructMultiUnitsIntervalLiteral the type spanning the units named (weeks count as
/// days, milli- and microseconds as seconds: `'3 days 4 hours'` is DAY TO HOUR); naming units of
/// both kinds is an error (no calendar intervals with ANSI on).
fn units_in_text(text: &str, legacy: bool) -> std::result::Result<Interval, String> {
    use crate::types::interval::{DAY_FIELD, HOUR, MINUTE, MONTH, SECOND, YEAR};
    use crate::types::timestamp::MICROS_PER_DAY;
    let lower = text.to_ascii_lowercase();
    let mut words = lower.split_whitespace().peekable();
    if words.peek() == Some(&"interval") {
        words.next();
    }
    let (mut months, mut days, mut micros) = (0i64, 0i64, 0i64);
    let (mut ym, mut dt): (Vec<u8>, Vec<u8>) = (vec![], vec![]);
    while let Some(number) = words.next() {
        let unit = words.next().ok_or_else(|| format!("no unit after {number}"))?;
        let unit = unit.strip_suffix('s').unwrap_or(unit);
        let overflow = || format!("{number} {unit} is out of range");
        let (field, us_per) = match unit {
            "year" | "month" => {
                let n: i64 = number.parse().map_err(|_| format!("{number} is not an integer"))?;
                let n = if unit == "year" { n.checked_mul(12).ok_or_else(overflow)? } else { n };
                months = months.checked_add(n).ok_or_else(overflow)?;
                ym.push(if unit == "year" { YEAR } else { MONTH });
                continue;
            }
            "week" => (DAY_FIELD, 7 * 86_400_000_000),
            "day" => (DAY_FIELD, 86_400_000_000),
            "hour" => (HOUR, 3_600_000_000),
            "minute" => (MINUTE, 60_000_000),
            "second" => {
                let us = day_time_text(number, &DateTimeField::Second).ok_or_else(|| format!("{number} is not a number of seconds"))?;
                micros = micros.checked_add(us).ok_or_else(overflow)?;
                dt.push(SECOND);
                continue;
            }
            "millisecond" => (SECOND, 1_000),
            "microsecond" => (SECOND, 1),
            other => return Err(format!("unknown unit {other}")),
        };
        dt.push(field);
        let n: i64 = number.parse().map_err(|_| format!("{number} is not an integer"))?;
        // Days apart from the time (a calendar interval keeps them apart).
        if field == DAY_FIELD {
            days = n.checked_mul(us_per / MICROS_PER_DAY).and_then(|d| days.checked_add(d)).ok_or_else(overflow)?;
        } else {
            micros = n.checked_mul(us_per).and_then(|us| micros.checked_add(us)).ok_or_else(overflow)?;
        }
    }
    if legacy && (!ym.is_empty() || !dt.is_empty()) {
        return Ok(Interval::Calendar(months, days, micros));
    }
    let micros = days.checked_mul(MICROS_PER_DAY).and_then(|us| us.checked_add(micros)).ok_or_else(|| format!("{text} is out of range"))?;
    let span = |f: &[u8]| (f.iter().copied().min().unwrap_or(0), f.iter().copied().max().unwrap_or(0));
    match (ym.is_empty(), dt.is_empty()) {
        (true, true) => Err("no value".into()),
        (false, false) => Err(MIXED_UNITS.into()),
        (false, true) => Ok(Interval::Months(months, span(&ym).0, span(&ym).1)),
        (true, false) => Ok(Interval::Micros(micros, span(&dt).0, span(&dt).1)),
    }
}

/// Why `INTERVAL '1 year 2 days'` is refused (Spark's words).
const MIXED_UNITS: &str = "Cannot mix year-month and day-time fields";

/// The function Spark's `EXTRACT(field FROM x)` means.
/// EXTRACT's field as `extract_field_function` reads it: as written for Spark's abbreviations.
fn field_text(field: &DateTimeField) -> String {
    match field {
        DateTimeField::Custom(f) => f.value.clone(),
        DateTimeField::DayOfYear => "DOY".into(),
        other => other.to_string(),
    }
}

fn extract_function(field: &DateTimeField, span: Span) -> Result<&'static str> {
    Ok(match field {
        DateTimeField::Year | DateTimeField::Years => "year",
        DateTimeField::Quarter => "quarter",
        DateTimeField::Month | DateTimeField::Months => "month",
        DateTimeField::Week(None) | DateTimeField::Weeks => "weekofyear",
        DateTimeField::Day | DateTimeField::Days => "day",
        DateTimeField::DayOfWeek | DateTimeField::Dow => "dayofweek",
        DateTimeField::DayOfYear | DateTimeField::Doy => "dayofyear",
        DateTimeField::Hour | DateTimeField::Hours => "hour",
        DateTimeField::Minute | DateTimeField::Minutes => "minute",
        DateTimeField::Second | DateTimeField::Seconds => "second",
        other => return Err(unsupported(format!("EXTRACT({other} FROM ...)"), span)),
    })
}

fn function(f: &ast::Function, d: usize) -> Result<Expr> {
    let span = f.name.span();
    let name = object_name(&f.name)?;
    // `current_date` without parentheses: a column of that name first, then the function.
    if matches!(f.args, FunctionArguments::None) && f.over.is_none() && crate::analyzer::is_literal_function(&name) {
        return Ok(Expr::UnresolvedAttribute(vec![name]));
    }
    if let Some(over) = &f.over {
        let spec = match over {
            ast::WindowType::WindowSpec(spec) => with_base_window(spec, span, 0)?,
            ast::WindowType::NamedWindow(w) => named_window(w, span, 0)?,
        };
        let spec = &spec;
        let mut ignore_nulls = matches!(f.null_treatment, Some(ast::NullTreatment::IgnoreNulls));
        let mut plain = f.clone();
        plain.over = None;
        plain.null_treatment = None;
        if let FunctionArguments::List(list) = &mut plain.args {
            list.clauses.retain(|c| match c {
                ast::FunctionArgumentClause::IgnoreOrRespectNulls(t) => {
                    ignore_nulls = matches!(t, ast::NullTreatment::IgnoreNulls);
                    false
                }
                _ => true,
            });
        }
        let function = function(&plain, d)?;
        let partition_by = spec.partition_by.iter().map(|e| lower(e, d)).collect::<Result<Vec<_>>>()?;
        let order_by = spec.order_by.iter().map(sort_order).collect::<Result<Vec<_>>>()?;
        let frame = spec.window_frame.as_ref().map(|w| window_frame(w, span)).transpose()?;
        return Ok(Expr::WindowExpression { function: Box::new(function), spec: WindowSpec { partition_by, order_by, frame }, ignore_nulls });
    }
    if let Some(filter) = &f.filter {
        return filtered_aggregate(f, filter, d, span);
    }
    let lname = name.to_ascii_lowercase();
    let takes_null_treatment = matches!(lname.as_str(), "first" | "last" | "first_value" | "last_value" | "any_value");
    if f.null_treatment.is_some() && !takes_null_treatment {
        return Err(unsupported(format!("{name}(...) IGNORE/RESPECT NULLS"), span));
    }
    let mut ignore_nulls = matches!(f.null_treatment, Some(ast::NullTreatment::IgnoreNulls));
    if !matches!(f.parameters, FunctionArguments::None) {
        return Err(unsupported(format!("parameterized function call {name}(...)(...)"), span));
    }
    let (args, distinct) = match &f.args {
        FunctionArguments::None => (vec![], false),
        FunctionArguments::Subquery(_) => return Err(unsupported("subquery as a function argument", span)),
        FunctionArguments::List(list) => {
            for c in &list.clauses {
                match c {
                    ast::FunctionArgumentClause::IgnoreOrRespectNulls(t) if takes_null_treatment => {
                        ignore_nulls = matches!(t, ast::NullTreatment::IgnoreNulls)
                    }
                    _ => return Err(unsupported(format!("clause inside {name}(...)"), span)),
                }
            }
            let distinct = matches!(list.duplicate_treatment, Some(DuplicateTreatment::Distinct));
            let args = list.args.iter().map(|a| function_arg(a, &name, d, span)).collect::<Result<Vec<_>>>()?;
            (args, distinct)
        }
    };
    let mut args = args;
    // timestampadd(unit, n, ts) / timestampdiff(unit, start, end) and their 3-argument aliases:
    // the unit is a bare word (Spark's grammar), read here as its name.
    let unit_function = match lname.as_str() {
        "timestampadd" | "dateadd" | "date_add" => Some("timestampadd"),
        "timestampdiff" | "datediff" | "date_diff" | "timediff" => Some("timestampdiff"),
        _ => None,
    };
    if let (Some(canonical), 3, Some(Expr::UnresolvedAttribute(unit))) = (unit_function, args.len(), args.first()) {
        if let [unit] = unit.as_slice() {
            args[0] = Expr::Literal(ScalarValue::Utf8(unit.to_ascii_uppercase()));
            return Ok(Expr::UnresolvedFunction { name: canonical.into(), args, distinct });
        }
    }
    // Spark's grammar takes the unit unquoted only.
    if let (Some(canonical), 3, Some(Expr::Literal(ScalarValue::Utf8(unit)))) = (unit_function, args.len(), args.first()) {
        return Err(KilnError::analysis(
            "INVALID_PARAMETER_VALUE.DATETIME_UNIT",
            format!("The value of parameter(s) `unit` in `{canonical}` is invalid: expects one of the units without quotes YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFYEAR, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, but got the string literal '{unit}'."),
        ));
    }
    // from_json / from_csv: the schema string becomes a NULL of its type, which the function's
    // result type reads (the expression layer has no SQL parser).
    if matches!(lname.as_str(), "from_json" | "from_csv") {
        if let Some(Expr::Literal(ScalarValue::Utf8(ddl))) = args.get(1) {
            args[1] = Expr::Literal(ScalarValue::Null(super::schema_from_ddl(ddl)?));
        }
    }
    if lname == "decode" && args.len() >= 3 {
        // decode(x, search, result, ..., default): CASE with null-safe matches (Spark's Decode).
        let x = args.remove(0);
        let default = (args.len() % 2 == 1).then(|| args.pop()).flatten().map(Box::new);
        let mut branches = vec![];
        let mut it = args.into_iter();
        while let (Some(search), Some(result)) = (it.next(), it.next()) {
            branches.push((null_safe_eq(x.clone(), search), result));
        }
        return Ok(Expr::CaseWhen { branches, else_expr: default, if_form: false });
    }
    if ignore_nulls {
        // first(x) IGNORE NULLS is Spark's first(x, true).
        args.push(Expr::Literal(crate::types::ScalarValue::Boolean(true)));
    }
    if !f.within_group.is_empty() && matches!(lname.as_str(), "listagg" | "string_agg" | "mode") {
        // The keys follow the arguments; their directions ride on the name (the analyzer reads them).
        let orders = f.within_group.iter().map(sort_order).collect::<Result<Vec<_>>>()?;
        let code: String = orders.iter().map(|o| format!("{}{}", if o.ascending { 'A' } else { 'D' }, if o.nulls_first { 'F' } else { 'L' })).collect();
        args.extend(orders.into_iter().map(|o| o.expr));
        return Ok(Expr::UnresolvedFunction { name: format!("{name}{}{code}", crate::expr::WITHIN_GROUP_MARKER), args, distinct });
    }
    if !f.within_group.is_empty() {
        // percentile_cont(p) WITHIN GROUP (ORDER BY x): percentile over x; DESC reads 1 - p.
        let [order] = f.within_group.as_slice() else {
            return Err(unsupported(format!("{name}(...) WITHIN GROUP with several keys"), span));
        };
        let order = sort_order(order)?;
        let [p] = args.as_slice() else {
            return Err(unsupported(format!("{name}(...) WITHIN GROUP (...) with {} arguments", args.len()), span));
        };
        let p = match (lname.as_str(), order.ascending) {
            ("percentile_cont" | "percentile_disc", true) => p.clone(),
            ("percentile_cont", false) => Expr::Literal(crate::types::ScalarValue::Float64(1.0)).binary(crate::expr::BinaryOp::Minus, p.clone()),
            _ => return Err(unsupported(format!("{name}(...) WITHIN GROUP (ORDER BY ... {})", if order.ascending { "ASC" } else { "DESC" }), span)),
        };
        args = vec![order.expr, p];
    }
    Ok(Expr::UnresolvedFunction { name, args, distinct })
}

/// The pattern of `LIKE pattern ESCAPE 'c'`: rewritten to kiln's `\\` escape by like_escape
/// (folded when the pattern is a literal). Spark takes a one-character string literal.
fn like_escape(pattern: Expr, escape: Option<&ast::Expr>) -> Result<Expr> {
    let Some(escape) = escape else { return Ok(pattern) };
    let c = match escape {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(c) | ast::Value::DoubleQuotedString(c) => c.clone(),
            _ => return Err(crate::error::KilnError::analysis("PARSE_SYNTAX_ERROR", format!("Syntax error at or near '{escape}': ESCAPE takes a one-character string."))),
        },
        _ => return Err(crate::error::KilnError::analysis("PARSE_SYNTAX_ERROR", format!("Syntax error at or near '{escape}': ESCAPE takes a one-character string."))),
    };
    if c.chars().count() != 1 {
        return Err(crate::error::KilnError::analysis("INVALID_ESC", format!("Found an invalid escape string: {c}. The escape string must contain only one character.")));
    }
    if c == "\\" {
        return Ok(pattern);
    }
    let func = crate::expr::ScalarFunc::Builtin(crate::expr::Builtin::More(crate::expr::MoreFn::LikeEscape));
    Ok(Expr::Function { func, args: vec![pattern, lit(ScalarValue::Utf8(c))] })
}

/// `agg(x) FILTER (WHERE c)` as `agg(CASE WHEN c THEN x END)`: the same rows for aggregates
/// that skip NULL inputs (those listed), whose value arguments (all, or only the first; the
/// others are settings such as a percentage or a delimiter) become NULL outside the filter.
fn filtered_aggregate(f: &ast::Function, filter: &ast::Expr, d: usize, span: Span) -> Result<Expr> {
    let condition = lower(filter, d)?;
    aggregate_where(f, condition, d, span)
}

/// The aggregate call `f` over only the rows where `condition` holds (FILTER, PIVOT).
pub(crate) fn aggregate_where(f: &ast::Function, condition: Expr, d: usize, span: Span) -> Result<Expr> {
    let name = f.name.to_string();
    let mut plain = f.clone();
    plain.filter = None;
    let within_group = !f.within_group.is_empty();
    restrict_aggregate(function(&plain, d)?, condition, within_group).map_err(|why| unsupported(format!("{name}(...) FILTER (WHERE ...){why}"), span))
}

/// An aggregate call reading only the rows where `condition` holds (`agg(x) FILTER (WHERE c)`,
/// a PIVOT value's column): each argument the aggregate skips NULLs of becomes
/// `CASE WHEN c THEN x END`. Err: why it cannot be (to append to the caller's message).
pub(crate) fn restrict_aggregate(call: Expr, condition: Expr, within_group: bool) -> std::result::Result<Expr, &'static str> {
    const EVERY_ARGUMENT: &[&str] = &[
        "count", "sum", "avg", "mean", "min", "max", "corr", "covar_samp", "covar_pop", "max_by", "min_by", "regr_count", "regr_avgx",
        "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy", "regr_slope", "regr_intercept", "regr_r2",
    ];
    const FIRST_ARGUMENT: &[&str] = &[
        "count_if", "bool_and", "bool_or", "every", "any", "some", "stddev", "stddev_samp", "stddev_pop", "std", "variance", "var_samp",
        "var_pop", "skewness", "kurtosis", "collect_list", "collect_set", "array_agg", "approx_count_distinct", "percentile",
        "percentile_approx", "approx_percentile", "median", "listagg", "string_agg", "mode", "bit_and", "bit_or", "bit_xor",
    ];
    let Expr::UnresolvedFunction { name, args, distinct } = call else {
        return Err("");
    };
    let lname = name.to_ascii_lowercase();
    let wrapped = if EVERY_ARGUMENT.contains(&lname.as_str()) {
        usize::MAX
    } else if FIRST_ARGUMENT.contains(&lname.as_str()) && !within_group || matches!(lname.as_str(), "listagg" | "string_agg" | "mode") {
        1
    } else {
        return Err(" (FILTER is planned for aggregates that skip NULLs)");
    };
    let only = |(i, a): (usize, Expr)| {
        if i < wrapped {
            Expr::CaseWhen { branches: vec![(condition.clone(), a)], else_expr: None, if_form: false }
        } else {
            a
        }
    };
    Ok(Expr::UnresolvedFunction { name, args: args.into_iter().enumerate().map(only).collect(), distinct })
}

thread_local! {
    /// The `WINDOW name AS (...)` definitions of the SELECT being lowered.
    pub(crate) static NAMED_WINDOWS: std::cell::RefCell<Vec<(String, ast::NamedWindowExpr)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Named windows a definition may go through (`w2 AS (w1)`), so a cycle ends in an error.
const NAMED_WINDOW_DEPTH: usize = 32;

/// `spec` with the clauses of the window it names (`(w ORDER BY ...)`, also in a `WINDOW`
/// definition): the clauses written in it, then the named window's.
fn with_base_window(spec: &ast::WindowSpec, span: Span, depth: usize) -> Result<ast::WindowSpec> {
    let Some(w) = &spec.window_name else { return Ok(spec.clone()) };
    let base = named_window(w, span, depth + 1)?;
    Ok(ast::WindowSpec {
        window_name: None,
        partition_by: if spec.partition_by.is_empty() { base.partition_by } else { spec.partition_by.clone() },
        order_by: if spec.order_by.is_empty() { base.order_by } else { spec.order_by.clone() },
        window_frame: spec.window_frame.clone().or(base.window_frame),
    })
}

/// The window a name in `OVER w` stands for (a definition may name another).
fn named_window(name: &ast::Ident, span: Span, depth: usize) -> Result<ast::WindowSpec> {
    let mut current = name.value.clone();
    for _ in depth..NAMED_WINDOW_DEPTH {
        let found = NAMED_WINDOWS.with(|w| w.borrow().iter().find(|(n, _)| n.eq_ignore_ascii_case(&current)).map(|(_, e)| e.clone()));
        match found {
            Some(ast::NamedWindowExpr::WindowSpec(spec)) => return with_base_window(&spec, span, depth + 1),
            Some(ast::NamedWindowExpr::NamedWindow(next)) => current = next.value.clone(),
            None => break,
        }
    }
    Err(parse_error(format!("[MISSING_WINDOW_SPECIFICATION] Window specification {} is not defined in the WINDOW clause.", name.value), span))
}

/// One ORDER BY item with Spark's defaults: ascending; NULLS FIRST when ascending, NULLS LAST
/// when descending.
pub(crate) fn sort_order(item: &ast::OrderByExpr) -> Result<SortOrder> {
    if item.with_fill.is_some() {
        return Err(unsupported("ORDER BY ... WITH FILL", start_span(&item.expr)));
    }
    let ascending = match &item.options.sort {
        None | Some(ast::OrderBySort::Asc) => true,
        Some(ast::OrderBySort::Desc) => false,
        Some(ast::OrderBySort::Using(_)) => return Err(unsupported("ORDER BY ... USING operator", start_span(&item.expr))),
    };
    let nulls_first = item.options.nulls_first.unwrap_or(ascending);
    Ok(SortOrder { expr: convert_expr(&item.expr)?, ascending, nulls_first })
}

/// `ROWS | RANGE BETWEEN lower AND upper` (`ROWS n PRECEDING` ends at the current row).
fn window_frame(w: &ast::WindowFrame, span: Span) -> Result<WindowFrame> {
    let frame_type = match w.units {
        ast::WindowFrameUnits::Rows => FrameType::Rows,
        ast::WindowFrameUnits::Range => FrameType::Range,
        ast::WindowFrameUnits::Groups => return Err(unsupported("GROUPS window frames", span)),
    };
    let bound = |b: &ast::WindowFrameBound| -> Result<FrameBound> {
        let offset = |e: &ast::Expr, negate: bool| -> Result<FrameBound> {
            let v = match convert_expr(e)? {
                Expr::Literal(v) => v,
                other => return Err(parse_error(format!("[INVALID_SQL_SYNTAX.INVALID_WINDOW_FRAME_BOUND] Invalid SQL syntax: Frame bound value must be a literal, got {other}."), start_span(e))),
            };
            let v = if !negate {
                v
            } else {
                match v {
                    ScalarValue::Int32(k) => ScalarValue::Int32(-k),
                    ScalarValue::Int64(k) => ScalarValue::Int64(-k),
                    ScalarValue::Decimal(u, p, s) => ScalarValue::Decimal(-u, p, s),
                    ScalarValue::Float64(f) => ScalarValue::Float64(-f),
                    ScalarValue::IntervalMicros(k, s, e) => ScalarValue::IntervalMicros(-k, s, e),
                    ScalarValue::IntervalMonths(k, s, e) => ScalarValue::IntervalMonths(-k, s, e),
                    other => return Err(parse_error(format!("invalid window frame bound {other}"), start_span(e))),
                }
            };
            Ok(FrameBound::Offset(v))
        };
        match b {
            ast::WindowFrameBound::CurrentRow => Ok(FrameBound::CurrentRow),
            ast::WindowFrameBound::Preceding(None) => Ok(FrameBound::UnboundedPreceding),
            ast::WindowFrameBound::Following(None) => Ok(FrameBound::UnboundedFollowing),
            ast::WindowFrameBound::Preceding(Some(e)) => offset(e, true),
            ast::WindowFrameBound::Following(Some(e)) => offset(e, false),
        }
    };
    let lower = bound(&w.start_bound)?;
    let upper = match &w.end_bound {
        Some(b) => bound(b)?,
        None => FrameBound::CurrentRow,
    };
    Ok(WindowFrame { frame_type, lower, upper })
}

fn function_arg(a: &FunctionArg, name: &str, d: usize, span: Span) -> Result<Expr> {
    match a {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => lower(e, d),
        // Spark's parser turns count(*) into count(1).
        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) if name.eq_ignore_ascii_case("count") => Ok(lit(ScalarValue::Int32(1))),
        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => Ok(Expr::UnresolvedStar(None)),
        FunctionArg::Unnamed(FunctionArgExpr::QualifiedWildcard(q)) => Ok(Expr::UnresolvedStar(Some(object_name(q)?))),
        _ => Err(unsupported(format!("named or wildcard-with-options argument in {name}(...)"), span)),
    }
}

fn value_literal(v: &Value, span: Span) -> Result<ScalarValue> {
    Ok(match v {
        Value::Number(n, long) => number(n, *long, false, span)?,
        // Spark reads "double quotes" as a string literal too.
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => ScalarValue::Utf8(s.clone()),
        Value::Boolean(b) => ScalarValue::Boolean(*b),
        Value::Null => ScalarValue::Null(DataType::Null),
        // `X'0A1B'`: bytes; an odd count of digits has a leading 0 (Spark's Hex.unhex).
        Value::HexStringLiteral(h) => ScalarValue::Binary(crate::expr::unhex_bytes(h).ok_or_else(|| {
            parse_error(format!("[INVALID_TYPED_LITERAL] The value of the typed literal \"X\" is invalid: '{h}'."), span)
        })?),
        other => return Err(unsupported(format!("literal {other}"), span)),
    })
}

/// A numeric literal with Spark's types: int if it fits, else bigint, else decimal(p,0);
/// `1.50` is decimal(3,2); `1e3` is double; `10L` is bigint; `1Y` tinyint, `1S` smallint, `1.5F` float.
fn number(text: &str, long: bool, negative: bool, span: Span) -> Result<ScalarValue> {
    let signed = if negative { format!("-{text}") } else { text.to_string() };
    let bad = || parse_error(format!("invalid numeric literal {signed}"), span);
    // Spark's parser checks a suffixed literal against its type's range (INVALID_NUMERIC_LITERAL_RANGE).
    let out_of_range = |body: &str, ty: &str, min: &dyn std::fmt::Display, max: &dyn std::fmt::Display| {
        parse_error(
            format!(
                "[INVALID_NUMERIC_LITERAL_RANGE] Numeric literal {body} is outside the valid range for {ty} with minimum value of {min} and maximum value of {max}. Please adjust the value accordingly."
            ),
            span,
        )
    };
    if let Some(body) = signed.strip_suffix('Y') {
        let v: i128 = body.parse().map_err(|_| bad())?;
        return i8::try_from(v).map(ScalarValue::Int8).map_err(|_| out_of_range(body, "tinyint", &i8::MIN, &i8::MAX));
    }
    if let Some(body) = signed.strip_suffix('S') {
        let v: i128 = body.parse().map_err(|_| bad())?;
        return i16::try_from(v).map(ScalarValue::Int16).map_err(|_| out_of_range(body, "smallint", &i16::MIN, &i16::MAX));
    }
    if let Some(body) = signed.strip_suffix('F') {
        let v: f32 = body.parse().map_err(|_| bad())?;
        let max = "3.4028234663852886E+38";
        return if v.is_finite() { Ok(ScalarValue::Float32(v)) } else { Err(out_of_range(body, "float", &format!("-{max}"), &max)) };
    }
    if long {
        return signed.parse().map(ScalarValue::Int64).map_err(|_| out_of_range(&signed, "bigint", &i64::MIN, &i64::MAX));
    }
    if text.contains(['e', 'E']) {
        let v: f64 = signed.parse().map_err(|_| bad())?;
        let max = "1.7976931348623157E+308";
        return if v.is_finite() { Ok(ScalarValue::Float64(v)) } else { Err(out_of_range(&signed, "double", &format!("-{max}"), &max)) };
    }
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    if !text.contains('.') {
        if let Ok(v) = signed.parse::<i64>() {
            return Ok(match i32::try_from(v) {
                Ok(i) => ScalarValue::Int32(i),
                Err(_) => ScalarValue::Int64(v),
            });
        }
    }
    let digits = format!("{int}{frac}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let significant = digits.trim_start_matches('0');
    let precision = significant.len().max(1).max(frac.len());
    if precision > MAX_DECIMAL_PRECISION as usize {
        return Err(parse_error(format!("[DECIMAL_PRECISION_EXCEEDS_MAX_PRECISION] Decimal precision {precision} exceeds max precision 38 (numeric literal {signed})."), span));
    }
    let unscaled: i128 = if significant.is_empty() { 0 } else { significant.parse().map_err(|_| bad())? };
    Ok(ScalarValue::Decimal(if negative { -unscaled } else { unscaled }, precision as u8, frac.len() as i8))
}

/// `DATE '1998-12-01'`, `TIMESTAMP '...'`, `TIMESTAMP_NTZ '...'`; other typed literals are not
/// supported. A type name before anything but a string (`date 1994-01-01`) is Spark's syntax
/// error at that value. A TIMESTAMP whose text names no zone is a wall-clock time in the session
/// zone: the cast of that TIMESTAMP_NTZ, which the analyzer gives the zone.
fn typed_string(ts: &ast::TypedString) -> Result<Expr> {
    let span = ts.value.span;
    let text = match &ts.value.value {
        Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => s,
        other => return Err(parse_error(format!("[PARSE_SYNTAX_ERROR] Syntax error at or near '{other}': a typed literal is a quoted string, as {} '...'", ts.data_type), span)),
    };
    match &ts.data_type {
        ast::DataType::Date => {
            parse_date(text).map(|d| lit(ScalarValue::Date32(d))).ok_or_else(|| parse_error(format!("[INVALID_TYPED_LITERAL] The value of the typed literal \"DATE\" is invalid: '{text}'."), span))
        }
        t @ (ast::DataType::Timestamp(..) | ast::DataType::TimestampNtz(..) | ast::DataType::Custom(..)) => {
            let ntz = match sql_data_type(t, span)? {
                DataType::Timestamp(_, tz) => tz.is_none(),
                _ => return Err(unsupported(format!("{t} literal"), span)),
            };
            let invalid = || parse_error(format!("[INVALID_TYPED_LITERAL] The value of the typed literal \"{t}\" is invalid: '{text}'."), span);
            let (wall, own_zone) = crate::types::timestamp::parse_wall_clock(text).ok_or_else(invalid)?;
            Ok(match own_zone {
                _ if ntz => lit(ScalarValue::Timestamp(wall, true)),
                Some(z) => lit(ScalarValue::Timestamp(z.to_utc(wall).ok_or_else(invalid)?, false)),
                None => Expr::Cast { child: Box::new(lit(ScalarValue::Timestamp(wall, true))), to: crate::types::timestamp_type(false), zone: None },
            })
        }
        other => Err(unsupported(format!("{other} literal"), span)),
    }
}

/// A SQL type name as Spark reads it, as an Arrow type.
pub(crate) fn sql_data_type(dt: &ast::DataType, span: Span) -> Result<DataType> {
    use ast::DataType as T;
    Ok(match dt {
        T::Boolean | T::Bool => DataType::Boolean,
        T::TinyInt(_) => DataType::Int8,
        T::SmallInt(_) | T::Int2(_) => DataType::Int16,
        T::Int(_) | T::Integer(_) | T::Int4(_) => DataType::Int32,
        T::BigInt(_) | T::Int8(_) => DataType::Int64,
        T::Float(ExactNumberInfo::None) | T::Real | T::Float4 => DataType::Float32,
        T::Double(_) | T::DoublePrecision | T::Float8 | T::Float64 => DataType::Float64,
        T::Decimal(info) | T::Numeric(info) | T::Dec(info) => {
            let (p, s) = match *info {
                ExactNumberInfo::None => (10, 0),
                ExactNumberInfo::Precision(p) => (p, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => (p, s),
            };
            if !(1..=MAX_DECIMAL_PRECISION as u64).contains(&p) || s < 0 || s as u64 > p {
                return Err(parse_error(format!("invalid type {dt}: precision must be 1..38 and scale 0..precision"), span));
            }
            DataType::Decimal128(p as u8, s as i8)
        }
        T::String(_) | T::Text | T::Varchar(_) | T::Char(_) | T::Character(_) | T::CharacterVarying(_) | T::CharVarying(_) => {
            DataType::Utf8
        }
        T::Date => DataType::Date32,
        T::Interval { fields, .. } => {
            use ast::IntervalFields as F;
            match fields {
                Some(f) => {
                    use crate::types::interval::{day_time, year_month, DAY_FIELD as D, HOUR as H, MINUTE as MI, MONTH as MO, SECOND as S, YEAR as Y};
                    match f {
                        F::Year => year_month(Y, Y),
                        F::Month => year_month(MO, MO),
                        F::YearToMonth => year_month(Y, MO),
                        F::Day => day_time(D, D),
                        F::DayToHour => day_time(D, H),
                        F::DayToMinute => day_time(D, MI),
                        F::DayToSecond => day_time(D, S),
                        F::Hour => day_time(H, H),
                        F::HourToMinute => day_time(H, MI),
                        F::HourToSecond => day_time(H, S),
                        F::Minute => day_time(MI, MI),
                        F::MinuteToSecond => day_time(MI, S),
                        F::Second => day_time(S, S),
                    }
                }
                // Spark's CalendarIntervalType (what make_interval gives).
                None => crate::types::interval::CALENDAR,
            }
        }
        T::Binary(_) | T::Varbinary(_) | T::Bytea | T::Blob(_) => DataType::Binary,
        T::Timestamp(_, ast::TimezoneInfo::None | ast::TimezoneInfo::WithTimeZone) => crate::types::timestamp_type(false),
        T::Timestamp(_, ast::TimezoneInfo::WithoutTimeZone) | T::TimestampNtz(_) => crate::types::timestamp_type(true),
        T::Custom(name, args) if args.is_empty() => match object_name(name)?.to_ascii_lowercase().as_str() {
            "timestamp_ltz" => crate::types::timestamp_type(false),
            "timestamp_ntz" => crate::types::timestamp_type(true),
            "byte" => DataType::Int8,
            "short" => DataType::Int16,
            "long" => DataType::Int64,
            _ => return Err(unsupported(format!("data type {dt}"), span)),
        },
        // Nested types: `ARRAY<T>`, `STRUCT<a: T, b T>`, `MAP<K, V>`.
        T::Array(ast::ArrayElemTypeDef::AngleBracket(t) | ast::ArrayElemTypeDef::Parenthesis(t) | ast::ArrayElemTypeDef::SquareBracket(t, _)) => {
            crate::types::list_type(sql_data_type(t, span)?)
        }
        T::Struct(fields, _) => {
            let mut out = Vec::with_capacity(fields.len());
            for (i, f) in fields.iter().enumerate() {
                let name = f.field_name.as_ref().map(|n| n.value.clone()).unwrap_or_else(|| format!("col{}", i + 1));
                out.push((name, sql_data_type(&f.field_type, span)?));
            }
            crate::types::struct_type(out)
        }
        T::Map(k, v, _) => crate::types::map_type(sql_data_type(k, span)?, sql_data_type(v, span)?),
        other => return Err(unsupported(format!("data type {other}"), span)),
    })
}
