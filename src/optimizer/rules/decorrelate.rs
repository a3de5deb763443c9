//! The general case of Spark's `DecorrelateInnerQuery`: a subquery whose outer references sit
//! below an operator a correlated predicate cannot be pulled above (a LIMIT, a window, a set
//! operation, an outer / semi / anti join, an outer column in a select list or an aggregate)
//! is answered once per distinct outer value, the domain. The domain's columns `d` replace the
//! outer references and travel up through every operator; the outer query joins the result on
//! `o <=> d`.
//!
//! ```text
//! Project [(i#2 + outer(x#1)) AS y#5]          Project [(i#2 + x#7) AS y#5, x#7]
//! +- GlobalLimit 1                       =>    +- Filter (rn#8 <= 1)
//!    +- LocalLimit 1                              +- Window [row_number() ... AS rn#8], [x#7], [i#2 ASC NULLS FIRST]
//!       +- Sort [i#2 ASC NULLS FIRST]                +- Join Cross
//!          +- Relation u[i#2]                           :- Relation u[i#2]
//!                                                       +- Aggregate [x#6], [x#6 AS x#7]
//!                                                          +- <the outer plan, x#6>
//! ```
//! A LIMIT / OFFSET keeps the rows whose `row_number()` per domain value (in the order of a
//! Sort right below) falls in its range; a window partitions by the domain too; every branch of
//! a UNION gets the domain; the preserved side of an outer join (both of a full one, whose
//! domain is the side that has a row) gets it, the other side only when it reads outer
//! columns (then the sides also match on it); an aggregate groups by it, and one without
//! GROUP BY keeps its row for a domain value with no input rows (count 0) through a left outer
//! join of the domain. A subtree without outer references is crossed with the domain.

use std::sync::Arc;

use super::subquery::has_outer;
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, BinaryOp, Expr, ScalarFunc, SortOrder, WindowFrame, WindowFunc, WindowSpec};
use crate::plan::{named_output, named_outputs, JoinType, LogicalPlan};
use crate::types::ScalarValue;

/// The distinct values of the outer columns a subquery reads.
pub(super) struct Domain {
    /// The outer query's columns, as plain attributes.
    pub(super) outer: Vec<Attribute>,
    /// `Aggregate [o..], [o AS o..]` over a copy of the outer plan.
    plan: Arc<LogicalPlan>,
}

impl Domain {
    /// The domain of `outer_attrs`, columns of `outer`'s output.
    pub(super) fn new(outer_attrs: Vec<Attribute>, outer: &Arc<LogicalPlan>) -> Result<Domain> {
        // A second instance of the outer plan: its ids must not clash with the first's.
        let (copy, ids) = crate::sql::fresh_instance(outer)?;
        let copied = |a: &Attribute| Attribute { id: ids.get(&a.id).copied().unwrap_or(a.id), ..a.clone() };
        let plan = Arc::new(LogicalPlan::Aggregate {
            grouping: outer_attrs.iter().map(|a| copied(a).expr()).collect(),
            aggregates: outer_attrs.iter().map(|a| copied(a).expr().alias(a.name.clone())).collect(),
            child: copy,
        });
        Ok(Domain { outer: outer_attrs, plan })
    }

    /// The domain of the outer references in `plan`, which must all be `outer`'s columns.
    pub(super) fn of(plan: &LogicalPlan, outer: &Arc<LogicalPlan>) -> Result<Domain> {
        let available = outer.output();
        let mut attrs: Vec<Attribute> = vec![];
        let mut missing = None;
        visit_outer(plan, &mut |a| {
            if attrs.iter().any(|o| o.id == a.id) {
                return;
            }
            match available.iter().find(|o| o.id == a.id) {
                Some(o) => attrs.push(o.clone()),
                None => missing = Some(a.clone()),
            }
        });
        if let Some(a) = missing {
            return Err(KilnError::unsupported(format!("a subquery correlated to a query more than one level out ({a})")));
        }
        Domain::new(attrs, outer)
    }

    /// A fresh instance of the domain's plan and its columns: each use reads its own ids.
    pub(super) fn instance(&self) -> Result<(Arc<LogicalPlan>, Vec<Attribute>)> {
        let (plan, _) = crate::sql::fresh_instance(&self.plan)?;
        let attrs = plan.output();
        Ok((plan, attrs))
    }

    /// `o <=> d` for each outer column and its domain column: the condition that joins the
    /// outer rows to the subquery's rows for their value.
    pub(super) fn join_conditions(&self, d: &[Attribute]) -> Vec<Expr> {
        self.outer.iter().zip(d).map(|(o, d)| o.expr().binary(BinaryOp::EqNullSafe, d.expr())).collect()
    }
}

fn visit_outer(plan: &LogicalPlan, f: &mut impl FnMut(&Attribute)) {
    for e in plan.expressions() {
        e.visit(&mut |x| {
            if let Expr::OuterReference(a) = x {
                f(a)
            }
        });
    }
    for c in plan.children() {
        visit_outer(c, f);
    }
}

/// `e` reading the domain columns `d` for the outer references.
fn replace(e: &Expr, dom: &Domain, d: &[Attribute]) -> Result<Expr> {
    e.clone().transform_up(&mut |x| {
        Ok::<_, KilnError>(match x {
            Expr::OuterReference(a) => match dom.outer.iter().position(|o| o.id == a.id) {
                Some(i) => d[i].expr(),
                None => Expr::OuterReference(a),
            },
            other => other,
        })
    })
}

fn replace_all(es: &[Expr], dom: &Domain, d: &[Attribute]) -> Result<Vec<Expr>> {
    es.iter().map(|e| replace(e, dom, d)).collect()
}

fn replace_order(order: &[SortOrder], dom: &Domain, d: &[Attribute]) -> Result<Vec<SortOrder>> {
    order.iter().map(|o| Ok(SortOrder { expr: replace(&o.expr, dom, d)?, ..o.clone() })).collect()
}

fn exprs(attrs: &[Attribute]) -> Vec<Expr> {
    attrs.iter().map(|a| a.expr()).collect()
}

fn join(left: Arc<LogicalPlan>, right: Arc<LogicalPlan>, join_type: JoinType, condition: Option<Expr>) -> Arc<LogicalPlan> {
    Arc::new(LogicalPlan::Join { left, right, join_type, condition, using: vec![], hint: Default::default() })
}

/// `plan` with the columns `columns` then `d`, in that order (a Project when they differ).
fn ordered(plan: Arc<LogicalPlan>, columns: &[Attribute], d: &[Attribute]) -> Arc<LogicalPlan> {
    let want: Vec<&Attribute> = columns.iter().chain(d).collect();
    if plan.output_ids().into_iter().eq(want.iter().map(|a| a.id)) {
        return plan;
    }
    Arc::new(LogicalPlan::Project { list: want.into_iter().map(|a| a.expr()).collect(), child: plan })
}

/// `plan` answered per domain value: its columns, then the domain's (`d`, in the order of
/// `dom.outer`), and no outer references.
pub(super) fn push_domain(plan: &Arc<LogicalPlan>, dom: &Domain) -> Result<(Arc<LogicalPlan>, Vec<Attribute>)> {
    if !has_outer(plan) {
        let (d_plan, d) = dom.instance()?;
        return Ok((join(plan.clone(), d_plan, JoinType::Cross, None), d));
    }
    let columns = plan.output();
    match plan.as_ref() {
        LogicalPlan::Filter { condition, child } => {
            let (c, d) = push_domain(child, dom)?;
            Ok((Arc::new(LogicalPlan::Filter { condition: replace(condition, dom, &d)?, child: c }), d))
        }
        LogicalPlan::Project { list, child } => {
            let (c, d) = push_domain(child, dom)?;
            let list = replace_all(list, dom, &d)?.into_iter().chain(exprs(&d)).collect();
            Ok((Arc::new(LogicalPlan::Project { list, child: c }), d))
        }
        LogicalPlan::Sort { order, global, child } => {
            let (c, d) = push_domain(child, dom)?;
            Ok((Arc::new(LogicalPlan::Sort { order: replace_order(order, dom, &d)?, global: *global, child: c }), d))
        }
        LogicalPlan::Distinct { child } => {
            let (c, d) = push_domain(child, dom)?;
            Ok((Arc::new(LogicalPlan::Distinct { child: c }), d))
        }
        LogicalPlan::SubqueryAlias { child, .. } | LogicalPlan::ResolvedHint { child, .. } => {
            let (c, d) = push_domain(child, dom)?;
            Ok((Arc::new(plan.with_new_children(vec![c])), d))
        }
        LogicalPlan::Aggregate { grouping, aggregates, child } => {
            let (c, d) = push_domain(child, dom)?;
            let aggregates: Vec<Expr> = replace_all(aggregates, dom, &d)?.into_iter().chain(exprs(&d)).collect();
            let global = grouping.is_empty();
            let grouping = replace_all(grouping, dom, &d)?.into_iter().chain(exprs(&d)).collect();
            let agg = Arc::new(LogicalPlan::Aggregate { grouping, aggregates, child: c });
            if global {
                return keep_empty_groups(&agg, &columns, &d, dom);
            }
            Ok((agg, d))
        }
        LogicalPlan::Window { window_exprs, partition_by, order_by, child } => {
            let (c, d) = push_domain(child, dom)?;
            let window_exprs = replace_all(window_exprs, dom, &d)?
                .into_iter()
                .map(|e| {
                    e.transform_up(&mut |x| {
                        Ok::<_, KilnError>(match x {
                            Expr::WindowExpression { function, mut spec, ignore_nulls } => {
                                spec.partition_by.extend(exprs(&d));
                                Expr::WindowExpression { function, spec, ignore_nulls }
                            }
                            other => other,
                        })
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let partition_by = replace_all(partition_by, dom, &d)?.into_iter().chain(exprs(&d)).collect();
            let window = Arc::new(LogicalPlan::Window { window_exprs, partition_by, order_by: replace_order(order_by, dom, &d)?, child: c });
            Ok((ordered(window, &columns, &d), d))
        }
        LogicalPlan::GlobalLimit { .. } | LogicalPlan::LocalLimit { .. } | LogicalPlan::Offset { .. } => limit(plan, dom),
        LogicalPlan::Join { left, right, join_type, condition, hint, .. } => {
            let (lo, ro) = (has_outer(left), has_outer(right));
            // The preserved sides need every domain value; a correlated condition alone reads the left's.
            let (pl, pr) = match join_type {
                JoinType::Inner | JoinType::Cross => (lo || !ro, ro),
                JoinType::LeftOuter | JoinType::LeftSemi | JoinType::LeftAnti => (true, ro),
                JoinType::RightOuter => (lo, true),
                JoinType::FullOuter => (true, true),
            };
            let (l, dl) = if pl { push_domain(left, dom)? } else { (left.clone(), vec![]) };
            let (r, dr) = if pr { push_domain(right, dom)? } else { (right.clone(), vec![]) };
            // The domain of a row: a right join's every row has the right side's.
            let side = if pl && *join_type != JoinType::RightOuter { &dl } else { &dr };
            let mut conds: Vec<Expr> = condition.as_ref().map(|c| replace(c, dom, side)).transpose()?.into_iter().collect();
            if pl && pr {
                conds.extend(dl.iter().zip(&dr).map(|(a, b)| a.expr().binary(BinaryOp::EqNullSafe, b.expr())));
            }
            let join_type = match join_type {
                JoinType::Cross if !conds.is_empty() => JoinType::Inner,
                other => *other,
            };
            let joined = Arc::new(LogicalPlan::Join { left: l, right: r, join_type, condition: Expr::conjunction(conds), using: vec![], hint: *hint });
            match join_type {
                JoinType::LeftSemi | JoinType::LeftAnti => Ok((joined, dl)),
                // A row of one side only has NULLs for the other's domain columns; a matched
                // pair has equal ones (`<=>`): the first non-NULL is the row's value.
                JoinType::FullOuter => {
                    let mut list = exprs(&columns);
                    let mut d = vec![];
                    for (a, b) in dl.iter().zip(&dr) {
                        let e = Expr::Function { func: ScalarFunc::Coalesce, args: vec![a.expr(), b.expr()] }.alias(a.name.clone());
                        d.push(named_output(&e).ok_or_else(|| KilnError::internal("alias without an output"))?);
                        list.push(e);
                    }
                    Ok((Arc::new(LogicalPlan::Project { list, child: joined }), d))
                }
                _ => {
                    let d = side.clone();
                    Ok((ordered(joined, &columns, &d), d))
                }
            }
        }
        LogicalPlan::Union { children } => {
            let mut out = vec![];
            let mut first = None;
            for c in children {
                let (p, d) = push_domain(c, dom)?;
                out.push(p);
                first.get_or_insert(d);
            }
            // The union's columns are its first input's.
            Ok((Arc::new(LogicalPlan::Union { children: out }), first.unwrap_or_default()))
        }
        other => Err(KilnError::unsupported(format!("a correlated subquery with outer references below `{}`", other.node_string()))),
    }
}

/// A LIMIT / OFFSET (and a Sort right below it) per domain value: `row_number()` over each
/// value's rows, in the Sort's order, and a Filter keeping the numbers in range.
fn limit(plan: &Arc<LogicalPlan>, dom: &Domain) -> Result<(Arc<LogicalPlan>, Vec<Attribute>)> {
    let mut chain = vec![];
    let mut cur = plan;
    loop {
        match cur.as_ref() {
            LogicalPlan::GlobalLimit { limit, child } | LogicalPlan::LocalLimit { limit, child } => {
                chain.push((0, Some(*limit)));
                cur = child;
            }
            LogicalPlan::Offset { offset, child } => {
                chain.push((*offset, None));
                cur = child;
            }
            _ => break,
        }
    }
    // The rows kept, innermost operator first: skip `skip`, then at most `take`.
    let (mut skip, mut take): (usize, Option<usize>) = (0, None);
    for (offset, limit) in chain.into_iter().rev() {
        skip = skip.saturating_add(offset);
        take = take.map(|t| t.saturating_sub(offset));
        if let Some(l) = limit {
            take = Some(take.map_or(l, |t| t.min(l)));
        }
    }
    let (input, order) = match cur.as_ref() {
        LogicalPlan::Sort { order, child, .. } => (child, order.clone()),
        _ => (cur, vec![]),
    };
    let (c, d) = push_domain(input, dom)?;
    let order = replace_order(&order, dom, &d)?;
    let spec = WindowSpec { partition_by: exprs(&d), order_by: order.clone(), frame: Some(WindowFrame::running_rows()) };
    let rn = Expr::WindowExpression { function: Box::new(Expr::WindowFunction { func: WindowFunc::RowNumber, args: vec![] }), spec, ignore_nulls: false }.alias("rn");
    let rn_attr = named_output(&rn).ok_or_else(|| KilnError::internal("alias without an output"))?;
    let window = Arc::new(LogicalPlan::Window { window_exprs: vec![rn], partition_by: exprs(&d), order_by: order, child: c.clone() });
    // row_number() is an int; a bound beyond it keeps every row.
    let bound = |n: usize| i32::try_from(n).ok().map(|n| Expr::lit(ScalarValue::Int32(n)));
    let mut conds = vec![];
    if skip > 0 {
        match bound(skip) {
            Some(b) => conds.push(rn_attr.expr().binary(BinaryOp::Gt, b)),
            None => conds.push(Expr::lit(ScalarValue::Boolean(false))),
        }
    }
    if let Some(b) = take.and_then(|t| bound(skip.saturating_add(t))) {
        conds.push(rn_attr.expr().binary(BinaryOp::LtEq, b));
    }
    let filtered = match Expr::conjunction(conds) {
        Some(condition) => Arc::new(LogicalPlan::Filter { condition, child: window }),
        None => window,
    };
    Ok((Arc::new(LogicalPlan::Project { list: exprs(&c.output()), child: filtered }), d))
}

/// An aggregate without GROUP BY returns one row also for a domain value with no input rows:
/// the domain left-joins the groups, and each column takes its value over no rows there
/// (`count` 0), as Spark's count-bug handling in DecorrelateInnerQuery.
fn keep_empty_groups(agg: &Arc<LogicalPlan>, columns: &[Attribute], d: &[Attribute], dom: &Domain) -> Result<(Arc<LogicalPlan>, Vec<Attribute>)> {
    let LogicalPlan::Aggregate { grouping, aggregates, child } = agg.as_ref() else { return Err(KilnError::internal("keep_empty_groups needs an aggregate")) };
    // The columns above get the original ids; the aggregate's get new ones.
    let mut inner = vec![];
    let mut values = vec![];
    for e in aggregates {
        match e {
            Expr::Alias { child, name, id } if columns.iter().any(|c| c.id == *id) => {
                let renamed = Expr::Alias { child: child.clone(), name: name.clone(), id: crate::expr::ExprId::next() };
                let mut a = named_output(&renamed).ok_or_else(|| KilnError::internal("alias without an output"))?;
                // Read above the outer join, which NULL-extends it.
                a.nullable = true;
                values.push(a);
                inner.push(renamed);
            }
            other => inner.push(other.clone()),
        }
    }
    let inner_agg = Arc::new(LogicalPlan::Aggregate { grouping: grouping.clone(), aggregates: inner, child: child.clone() });
    let (right, value_exprs) = match super::subquery::count_bug_columns(&inner_agg, &values)? {
        Some((fixed, v)) => (fixed, v),
        None => (inner_agg, exprs(&values)),
    };
    let (d_plan, d2) = dom.instance()?;
    let on = d2.iter().zip(d).map(|(a, b)| a.expr().binary(BinaryOp::EqNullSafe, b.expr()));
    let joined = join(d_plan, right, JoinType::LeftOuter, Expr::conjunction(on));
    let mut list = vec![];
    let mut vi = value_exprs.into_iter();
    for c in columns {
        let v = vi.next().ok_or_else(|| KilnError::internal("aggregate column without a value"))?;
        list.push(Expr::Alias { child: Box::new(v), name: c.name.clone(), id: c.id });
    }
    list.extend(exprs(&d2));
    debug_assert_eq!(named_outputs(&list).len(), columns.len() + d2.len());
    Ok((Arc::new(LogicalPlan::Project { list, child: joined }), d2))
}
