//! Window functions in the analyzer: Spark's `ResolveWindowFrame` / `ResolveWindowOrder`
//! (each window expression gets its frame, checked) and `ExtractWindowExpressions` (window
//! expressions leave the select list for `Window` nodes, one per partitioning and order).
//!
//! ```text
//! SELECT k, row_number() OVER (PARTITION BY k ORDER BY v) AS rn FROM t
//! =>
//! Project [k#1, rn#5]
//! +- Window [row_number() windowspecdefinition(k#1, v#2 ASC NULLS FIRST, specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$())) AS rn#5], [k#1], [v#2 ASC NULLS FIRST]
//!    +- ... t
//! ```

use std::sync::Arc;

use arrow::datatypes::DataType;

use crate::error::{KilnError, Result};
use crate::expr::{AggBuiltin, AggFunc, AggKind, Expr, FrameBound, FrameType, WindowFrame, WindowFunc, WindowSpec};
use crate::plan::{named_output, LogicalPlan};
use crate::types::{is_numeric, ScalarValue};

fn window_error(class: &'static str, msg: impl Into<String>) -> KilnError {
    KilnError::analysis(class, msg)
}

/// A resolved `function OVER (spec)` with its frame filled in and its arguments in the form
/// the Window operator reads (lag/lead: value, signed offset, default).
pub(super) fn resolve_window_expression(e: Expr) -> Result<Expr> {
    let Expr::WindowExpression { function, spec, mut ignore_nulls } = e else { return Ok(e) };
    // first/last over a window are first_value/last_value (their flag kept).
    let function = match *function {
        Expr::Aggregate { func: AggFunc::Builtin(AggBuiltin { kind, .. }), args, distinct: false }
            if matches!(kind, AggKind::First { .. } | AggKind::Last { .. }) =>
        {
            let (func, ignore) = match kind {
                AggKind::First { ignore_nulls } => (WindowFunc::FirstValue, ignore_nulls),
                AggKind::Last { ignore_nulls } => (WindowFunc::LastValue, ignore_nulls),
                _ => return Err(KilnError::internal("first/last")),
            };
            ignore_nulls |= ignore;
            Box::new(Expr::WindowFunction { func, args })
        }
        other => Box::new(other),
    };
    let WindowSpec { partition_by, order_by, frame } = spec;
    let ordered = !order_by.is_empty();
    let default_frame = if ordered {
        WindowFrame { frame_type: FrameType::Range, lower: FrameBound::UnboundedPreceding, upper: FrameBound::CurrentRow }
    } else {
        WindowFrame { frame_type: FrameType::Rows, lower: FrameBound::UnboundedPreceding, upper: FrameBound::UnboundedFollowing }
    };
    let (function, frame) = match *function {
        Expr::WindowFunction { func, args } => {
            let name = func.name();
            if func.needs_order() && !ordered {
                return Err(window_error(
                    "WINDOW_FUNCTION_WITHOUT_ORDER",
                    format!("Window function {name}() requires window to be ordered, please add ORDER BY clause. For example SELECT {name}() OVER (PARTITION BY window_partition ORDER BY window_ordering) from table."),
                ));
            }
            let wrong_args = |expected: &str| {
                window_error("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", format!("The `{name}` requires {expected} parameters but the actual number is {}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.", args.len()))
            };
            let (args, fixed) = match func {
                WindowFunc::RowNumber | WindowFunc::CumeDist => {
                    if !args.is_empty() {
                        return Err(wrong_args("0"));
                    }
                    let frame_type = if func == WindowFunc::CumeDist { FrameType::Range } else { FrameType::Rows };
                    (vec![], Some(WindowFrame { frame_type, lower: FrameBound::UnboundedPreceding, upper: FrameBound::CurrentRow }))
                }
                // Spark's rank functions take the window's order keys as their children.
                WindowFunc::Rank | WindowFunc::DenseRank | WindowFunc::PercentRank => {
                    if !args.is_empty() {
                        return Err(wrong_args("0"));
                    }
                    (order_by.iter().map(|o| o.expr.clone()).collect(), Some(WindowFrame::running_rows()))
                }
                WindowFunc::Ntile => {
                    let [k] = args.as_slice() else { return Err(wrong_args("1")) };
                    if !matches!(k, Expr::Literal(ScalarValue::Int32(v)) if *v > 0) {
                        return Err(window_error(
                            "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
                            format!("Cannot resolve \"ntile({k})\" due to data type mismatch: the buckets of ntile must be a positive integer literal."),
                        ));
                    }
                    (args, Some(WindowFrame::running_rows()))
                }
                WindowFunc::Lag | WindowFunc::Lead => {
                    if args.is_empty() || args.len() > 3 {
                        return Err(wrong_args("[1, 2, 3]"));
                    }
                    let mut it = args.into_iter();
                    let value = it.next().ok_or_else(|| KilnError::internal("lag without a value"))?;
                    let offset = match it.next() {
                        None => 1i64,
                        Some(Expr::Literal(ScalarValue::Int32(k))) => k as i64,
                        Some(Expr::Literal(ScalarValue::Int64(k))) => k,
                        Some(other) => {
                            return Err(window_error(
                                "DATATYPE_MISMATCH.NON_FOLDABLE_INPUT",
                                format!("Cannot resolve \"{name}\" due to data type mismatch: the offset {other} must be an integer literal."),
                            ))
                        }
                    };
                    let value_type = value.data_type()?;
                    let default = match it.next() {
                        None => Expr::Literal(ScalarValue::Null(value_type.clone())),
                        Some(Expr::Literal(v)) if v.is_null() => Expr::Literal(ScalarValue::Null(value_type.clone())),
                        Some(d) if d.data_type()? == value_type => d,
                        Some(d) => Expr::Cast { child: Box::new(d), to: value_type.clone(), zone: None },
                    };
                    let signed = if func == WindowFunc::Lag { -offset } else { offset };
                    let off = i32::try_from(signed).map(ScalarValue::Int32).unwrap_or(ScalarValue::Int64(signed));
                    let frame = WindowFrame { frame_type: FrameType::Rows, lower: FrameBound::Offset(off.clone()), upper: FrameBound::Offset(off.clone()) };
                    (vec![value, Expr::Literal(off), default], Some(frame))
                }
                WindowFunc::FirstValue | WindowFunc::LastValue => match args.as_slice() {
                    [_] => (args, None),
                    // first(x, true): Spark's ignoreNulls argument.
                    [x, Expr::Literal(ScalarValue::Boolean(b))] => {
                        let x = x.clone();
                        return finish(Expr::WindowFunction { func, args: vec![x] }, partition_by, order_by, frame.unwrap_or(default_frame), ignore_nulls || *b);
                    }
                    _ => return Err(wrong_args("[1, 2]")),
                },
                WindowFunc::NthValue => {
                    let [_, n] = args.as_slice() else { return Err(wrong_args("2")) };
                    if !matches!(n, Expr::Literal(ScalarValue::Int32(v)) if *v > 0) && !matches!(n, Expr::Literal(ScalarValue::Int64(v)) if *v > 0) {
                        return Err(window_error(
                            "DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE",
                            format!("Cannot resolve \"nth_value\" due to data type mismatch: the offset {n} must be a positive integer literal."),
                        ));
                    }
                    (args, None)
                }
            };
            let frame = match (fixed, frame) {
                (Some(fixed), Some(given)) if given != fixed && func.fixed_frame() => {
                    return Err(window_error(
                        "_LEGACY_ERROR_TEMP_1036",
                        format!("Cannot specify window frame for {name} function (it is {fixed})."),
                    ))
                }
                (Some(fixed), _) => fixed,
                (None, given) => given.unwrap_or(default_frame),
            };
            (Expr::WindowFunction { func, args }, frame)
        }
        agg @ Expr::Aggregate { distinct: true, .. } => {
            return Err(window_error("DISTINCT_WINDOW_FUNCTION_UNSUPPORTED", format!("Distinct window functions are not supported: {agg}.")))
        }
        agg @ Expr::Aggregate { .. } => (agg, frame.unwrap_or(default_frame)),
        other => {
            return Err(window_error("UNSUPPORTED_EXPR_FOR_WINDOW", format!("Expression \"{other}\" not supported within a window function.")))
        }
    };
    finish(function, partition_by, order_by, frame, ignore_nulls)
}

/// Checks the frame against the order and builds the expression.
fn finish(function: Expr, partition_by: Vec<Expr>, order_by: Vec<crate::expr::SortOrder>, frame: WindowFrame, ignore_nulls: bool) -> Result<Expr> {
    let offsets = [&frame.lower, &frame.upper].into_iter().any(|b| matches!(b, FrameBound::Offset(_)));
    if frame.frame_type == FrameType::Range && offsets && !matches!(function, Expr::WindowFunction { func: WindowFunc::Lag | WindowFunc::Lead, .. }) {
        if order_by.is_empty() {
            return Err(window_error("DATATYPE_MISMATCH.RANGE_FRAME_WITHOUT_ORDER", "A range window frame cannot be used in an unordered window specification."));
        }
        let [o] = order_by.as_slice() else {
            return Err(window_error(
                "DATATYPE_MISMATCH.RANGE_FRAME_MULTI_ORDER",
                format!("A range window frame with value boundaries cannot be used in a window specification with multiple order by expressions: {}.", order_by.len()),
            ));
        };
        let t = o.expr.data_type()?;
        if !(is_numeric(&t) || t == DataType::Date32) {
            return Err(window_error(
                "DATATYPE_MISMATCH.RANGE_FRAME_INVALID_TYPE",
                format!("The data type \"{}\" used in the order specification does not support the data type used in the range frame.", crate::types::spark_type_name(&t)),
            ));
        }
    }
    if matches!(frame.lower, FrameBound::UnboundedFollowing) || matches!(frame.upper, FrameBound::UnboundedPreceding) {
        return Err(window_error("DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_INVALID_BOUND", format!("Window frame upper bound does not follow the lower bound: {frame}.")));
    }
    // A ROWS frame counts rows in an int (`2147483648 FOLLOWING` is not one).
    if frame.frame_type == FrameType::Rows && [&frame.lower, &frame.upper].iter().any(|b| matches!(b, FrameBound::Offset(ScalarValue::Int64(_)))) {
        return Err(window_error("DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_UNACCEPTED_TYPE", format!("The data type of the bounds of {frame} does not match the expected data type \"INT\".")));
    }
    if let (FrameBound::Offset(l), FrameBound::Offset(u)) = (&frame.lower, &frame.upper) {
        if let (Some(l), Some(u)) = (as_f64(l), as_f64(u)) {
            if l > u {
                return Err(window_error(
                    "DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_WRONG_COMPARISON",
                    format!("The lower bound of a window frame must be less than or equal to the upper bound: {frame}."),
                ));
            }
        }
    }
    Ok(Expr::WindowExpression { function: Box::new(function), spec: WindowSpec { partition_by, order_by, frame: Some(frame) }, ignore_nulls })
}

fn as_f64(v: &ScalarValue) -> Option<f64> {
    match v {
        ScalarValue::Int32(k) => Some(*k as f64),
        ScalarValue::Int64(k) => Some(*k as f64),
        ScalarValue::Float64(f) => Some(*f),
        ScalarValue::Decimal(u, _, s) => Some(*u as f64 / 10f64.powi(*s as i32)),
        ScalarValue::IntervalMicros(us, 0, 0) => Some((*us / crate::types::timestamp::MICROS_PER_DAY) as f64),
        _ => None,
    }
}

/// Errors if a window-only function is used without OVER.
pub(super) fn check_no_bare_window_function(e: &Expr) -> Result<()> {
    fn walk(e: &Expr) -> Result<()> {
        match e {
            Expr::WindowExpression { function, spec, .. } => {
                function.children().into_iter().try_for_each(walk)?;
                spec.partition_by.iter().try_for_each(walk)?;
                spec.order_by.iter().try_for_each(|o| walk(&o.expr))
            }
            Expr::WindowFunction { func, .. } => Err(window_error(
                "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE",
                format!("Window function \"{}\" requires an OVER clause.", func.name()),
            )),
            other => other.children().into_iter().try_for_each(walk),
        }
    }
    walk(e)
}

/// Spark's `ExtractWindowExpressions` for a select list: each window expression becomes an
/// attribute of a Window node (one per distinct partitioning and order, stacked in order of
/// first appearance) under a Project of the list.
pub(super) fn extract_windows(list: Vec<Expr>, child: Arc<LogicalPlan>) -> Result<LogicalPlan> {
    let mut windows: Vec<Expr> = vec![];
    let mut new_list = Vec::with_capacity(list.len());
    for item in list {
        check_no_bare_window_function(&item)?;
        let item = match item {
            Expr::Alias { child, name, id } if matches!(child.as_ref(), Expr::WindowExpression { .. }) => {
                let alias = Expr::Alias { child, name, id };
                let attr = named_output(&alias).ok_or_else(|| KilnError::internal("unnamed window expression"))?;
                windows.push(alias);
                Expr::Attribute(attr)
            }
            other => replace_windows(other, &mut windows)?,
        };
        new_list.push(item);
    }
    let mut groups: Vec<(Vec<Expr>, Vec<crate::expr::SortOrder>, Vec<Expr>)> = vec![];
    for w in windows {
        let Expr::WindowExpression { spec, .. } = w.unalias() else { continue };
        match groups.iter_mut().find(|(p, o, _)| *p == spec.partition_by && *o == spec.order_by) {
            Some((_, _, exprs)) => exprs.push(w),
            None => groups.push((spec.partition_by.clone(), spec.order_by.clone(), vec![w])),
        }
    }
    let mut plan = child;
    for (partition_by, order_by, window_exprs) in groups {
        plan = Arc::new(LogicalPlan::Window { window_exprs, partition_by, order_by, child: plan });
    }
    Ok(LogicalPlan::Project { list: new_list, child: plan })
}

/// `e` with each window expression in it replaced by the attribute of an alias for it (an
/// equal window expression seen before reuses its alias).
fn replace_windows(e: Expr, windows: &mut Vec<Expr>) -> Result<Expr> {
    if let Expr::WindowExpression { .. } = &e {
        if let Some(a) = windows.iter().find(|w| w.unalias() == &e).and_then(named_output) {
            return Ok(Expr::Attribute(a));
        }
        let alias = e.clone().alias(crate::expr::sql_name(&e));
        let attr = named_output(&alias).ok_or_else(|| KilnError::internal("unnamed window expression"))?;
        windows.push(alias);
        return Ok(Expr::Attribute(attr));
    }
    e.map_children(|c| replace_windows(c, windows))
}

/// For a select list over a GROUP BY with window expressions: the aggregates and grouping
/// columns the windows read move into the Aggregate's list (each once), so the windows run
/// over the aggregated rows. Returns the Aggregate's list and the list above it.
pub(super) fn split_aggregate_list(list: Vec<Expr>) -> Result<(Vec<Expr>, Vec<Expr>)> {
    let mut agg_list: Vec<Expr> = vec![];
    let mut above: Vec<Expr> = vec![];
    for item in list {
        if !item.contains_window() {
            let out = named_output(&item).ok_or_else(|| KilnError::internal("unnamed select-list item"))?;
            agg_list.push(item);
            above.push(Expr::Attribute(out));
        } else {
            above.push(extract_aggregates(item, false, &mut agg_list)?);
        }
    }
    // Columns the windows read that the Aggregate does not output yet (grouping columns;
    // anything else fails the aggregate check, as in Spark).
    let produced: Vec<crate::expr::ExprId> = agg_list.iter().filter_map(named_output).map(|a| a.id).collect();
    for item in &above {
        for a in item.attributes() {
            if !produced.contains(&a.id) && !agg_list.iter().any(|e| matches!(e, Expr::Attribute(b) if b.id == a.id)) {
                agg_list.push(Expr::Attribute(a));
            }
        }
    }
    Ok((agg_list, above))
}

/// `e` with each group aggregate (not a window's own function) replaced by the attribute of
/// an alias for it in `agg_list`.
fn extract_aggregates(e: Expr, _in_window: bool, agg_list: &mut Vec<Expr>) -> Result<Expr> {
    match e {
        Expr::WindowExpression { function, spec, ignore_nulls } => {
            let function = function.map_children(|c| extract_aggregates(c, true, agg_list))?;
            let partition_by = spec.partition_by.into_iter().map(|c| extract_aggregates(c, true, agg_list)).collect::<Result<_>>()?;
            let order_by = spec
                .order_by
                .into_iter()
                .map(|o| Ok(crate::expr::SortOrder { expr: extract_aggregates(o.expr, true, agg_list)?, ..o }))
                .collect::<Result<_>>()?;
            Ok(Expr::WindowExpression { function: Box::new(function), spec: WindowSpec { partition_by, order_by, frame: spec.frame }, ignore_nulls })
        }
        Expr::Aggregate { .. } => {
            if let Some(a) = agg_list.iter().find(|x| x.unalias() == &e).and_then(named_output) {
                return Ok(Expr::Attribute(a));
            }
            let alias = e.clone().alias(crate::expr::sql_name(&e));
            let attr = named_output(&alias).ok_or_else(|| KilnError::internal("unnamed aggregate"))?;
            agg_list.push(alias);
            Ok(Expr::Attribute(attr))
        }
        other => other.map_children(|c| extract_aggregates(c, _in_window, agg_list)),
    }
}
