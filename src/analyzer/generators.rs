//! Spark's `ExtractGenerator` and `ResolveGenerate`: a generator call in a select list leaves
//! it for a Generate node under the Project, whose list has the generated columns in its
//! place; a LATERAL VIEW's (or FROM item's) Generate gets its generated columns; a generator
//! anywhere else is one of Spark's UNSUPPORTED_GENERATOR errors.
//!
//! ```text
//! 'Project ['k, 'explode('a) AS x]      Project [k#1, x#5]
//! +- 'UnresolvedRelation [t]       =>   +- Generate explode(a#2), false, [x#5]
//!                                          +- SubqueryAlias t ...
//! ```

use std::sync::Arc;

use super::coercion::coerce_expr;
use super::resolve::Resolver;
use crate::error::{KilnError, Result};
use crate::expr::{Attribute, Expr, Generator, GeneratorFunc};
use crate::plan::LogicalPlan;

/// A generator call: which generator, whether the `_outer` form, the arguments.
pub(super) fn generator_call(e: &Expr) -> Option<(GeneratorFunc, bool, &[Expr])> {
    match e {
        Expr::UnresolvedFunction { name, args, .. } => GeneratorFunc::from_name(name).map(|(f, outer)| (f, outer, args.as_slice())),
        _ => None,
    }
}

/// True when a generator is called anywhere in `e`.
pub(super) fn contains_generator(e: &Expr) -> bool {
    e.exists(&|x| generator_call(x).is_some())
}

/// An expression as Spark's errors quote it (`"(explode(a) + 1)"`).
fn quoted(e: &Expr) -> String {
    format!("\"{}\"", crate::expr::sql_name(e).replace('\'', ""))
}

fn unsupported_generator(sub: &'static str, detail: String) -> KilnError {
    KilnError::analysis(sub, format!("The generator is not supported: {detail}."))
}

/// A generator where only a select list may call one (a WHERE, GROUP BY, ORDER BY, ON, ...).
pub(super) fn outside_select(node: &str) -> KilnError {
    unsupported_generator("UNSUPPORTED_GENERATOR.OUTSIDE_SELECT", format!("outside the SELECT clause, found: {node}"))
}

/// The generator call of a select-list item and the names its alias gives the columns.
fn aliased_call(item: &Expr) -> (&Expr, Vec<String>) {
    match item {
        Expr::Alias { child, name, .. } => (child, vec![name.clone()]),
        Expr::MultiAlias { child, names } => (child, names.clone()),
        other => (other, vec![]),
    }
}

impl Resolver<'_> {
    /// The position of the select list's generator, if it has one. Errors: a generator inside
    /// an expression, more than one, names `AS (a, b)` for something that is not a generator.
    pub(super) fn generator_position(&self, list: &[Expr]) -> Result<Option<usize>> {
        let mut found = vec![];
        for (i, item) in list.iter().enumerate() {
            let (call, _) = aliased_call(item);
            match generator_call(call) {
                Some((_, _, args)) if !args.iter().any(contains_generator) => found.push(i),
                None if !contains_generator(call) => {
                    if let Expr::MultiAlias { names, .. } = item {
                        return Err(KilnError::analysis(
                            "MULTI_ALIAS_WITHOUT_GENERATOR",
                            format!("Multi part aliasing ({}) is not supported with {} as it is not a generator function.", names.join(", "), quoted(call)),
                        ));
                    }
                }
                _ => return Err(unsupported_generator("UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS", format!("nested in expressions {}", quoted(call)))),
            }
        }
        if found.len() > 1 {
            let calls: Vec<String> = found.iter().map(|i| quoted(aliased_call(&list[*i]).0)).collect();
            return Err(unsupported_generator(
                "UNSUPPORTED_GENERATOR.MULTI_GENERATOR",
                format!("only one generator allowed per SELECT clause but found {}: {}", found.len(), calls.join(", ")),
            ));
        }
        Ok(found.first().copied())
    }

    /// `SELECT a, explode(arr) AS x FROM t`: `Project [a, x]` over a Generate over `child`;
    /// None when the list calls no generator. The other items resolve against `child`, as
    /// Spark resolves the list before it extracts the generator.
    pub(super) fn extract_generator(&self, list: &[Expr], child: &Arc<LogicalPlan>) -> Result<Option<LogicalPlan>> {
        let Some(index) = self.generator_position(list)? else { return Ok(None) };
        let (call, names) = aliased_call(&list[index]);
        let (func, outer, args) = generator_call(call).ok_or_else(|| KilnError::internal("select-list generator"))?;
        let generate = self.resolve_generator(func, outer, args.to_vec(), None, names, child.clone())?;
        let input = child.output();
        let mut out = vec![];
        for (i, item) in list.iter().enumerate() {
            if i == index {
                out.extend(generate.qualified_generator_output().iter().map(Attribute::expr));
            } else {
                out.extend(self.resolve_select_list(vec![item.clone()], &input)?);
            }
        }
        if out.iter().any(|e| e.contains_window()) {
            return Err(KilnError::unsupported("a window function in a select list with a generator (compute it in a subquery)"));
        }
        Ok(Some(LogicalPlan::Project { list: out, child: Arc::new(generate) }))
    }

    /// `SELECT k, explode(collect_list(v)) FROM t GROUP BY k`: the Aggregate computes the
    /// generator's arguments (`_gen_input_0`), a Generate runs over its rows and a Project
    /// restores the select list (Spark's ExtractGenerator over an Aggregate). None when the
    /// list calls no generator.
    pub(super) fn extract_generator_over_aggregate(&self, grouping: &[Expr], aggregates: &[Expr], child: &Arc<LogicalPlan>) -> Result<Option<LogicalPlan>> {
        let Some(index) = self.generator_position(aggregates)? else { return Ok(None) };
        let (call, names) = aliased_call(&aggregates[index]);
        let (func, outer, args) = generator_call(call).ok_or_else(|| KilnError::internal("aggregate-list generator"))?;
        let mut list: Vec<Expr> = aggregates.iter().enumerate().filter(|(i, _)| *i != index).map(|(_, e)| e.clone()).collect();
        let others = list.len();
        let mut inputs = vec![];
        for (k, a) in args.iter().enumerate() {
            if a.foldable() {
                inputs.push(Err(a.clone()));
            } else {
                let alias = a.clone().alias(format!("_gen_input_{k}"));
                let Expr::Alias { id, .. } = &alias else { return Err(KilnError::internal("generator input alias")) };
                inputs.push(Ok(*id));
                list.push(alias);
            }
        }
        let agg = self.resolve_node(LogicalPlan::Aggregate { grouping: grouping.to_vec(), aggregates: list, child: child.clone() })?;
        if !matches!(agg, LogicalPlan::Aggregate { .. }) {
            return Err(KilnError::unsupported("a window function in a select list with a generator (compute it in a subquery)"));
        }
        let agg_out = agg.output();
        let gen_args = inputs
            .into_iter()
            .map(|i| match i {
                Err(literal) => Ok(literal),
                Ok(id) => agg_out.iter().find(|a| a.id == id).map(Attribute::expr).ok_or_else(|| KilnError::internal("generator input column")),
            })
            .collect::<Result<Vec<_>>>()?;
        let generate = self.resolve_generator(func, outer, gen_args, None, names, Arc::new(agg))?;
        let generated: Vec<Expr> = generate.qualified_generator_output().iter().map(Attribute::expr).collect();
        let mut kept = agg_out[..others].iter().map(Attribute::expr);
        let mut out = vec![];
        for i in 0..aggregates.len() {
            if i == index {
                out.extend(generated.iter().cloned());
            } else {
                out.extend(kept.next());
            }
        }
        Ok(Some(LogicalPlan::Project { list: out, child: Arc::new(generate) }))
    }

    /// A Generate of `func(args)` over `child` with its generated columns, named `names` (as
    /// many as it makes) or as Spark names them (`col`, `pos`, `col0`, ...).
    pub(super) fn resolve_generator(
        &self,
        func: GeneratorFunc,
        outer: bool,
        args: Vec<Expr>,
        qualifier: Option<String>,
        names: Vec<String>,
        child: Arc<LogicalPlan>,
    ) -> Result<LogicalPlan> {
        let input = child.output();
        let args = args.into_iter().map(|a| coerce_expr(self.resolve_expr(a, &input)?)).collect::<Result<Vec<_>>>()?;
        if let Some(a) = args.iter().find(|a| a.contains_aggregate() || a.contains_window()) {
            return Err(KilnError::unsupported(format!("an aggregate or window function as the argument {a} of a generator outside a select list")));
        }
        let generator = Generator { func, args }.checked()?;
        let schema = generator.element_schema()?;
        if !names.is_empty() && names.len() != schema.len() {
            return Err(KilnError::analysis(
                "UDTF_ALIAS_NUMBER_MISMATCH",
                format!(
                    "The number of aliases supplied in the AS clause does not match the number of columns output by the UDTF. Expected {} aliases, but got {}. Please ensure that the number of aliases provided matches the number of columns output by the UDTF.",
                    schema.len(),
                    names.len()
                ),
            ));
        }
        let generator_output =
            schema.into_iter().enumerate().map(|(i, (name, t, nullable))| Attribute::new(names.get(i).cloned().unwrap_or(name), t, nullable)).collect();
        Ok(LogicalPlan::Generate { generator, unrequired: vec![], outer, qualifier, names, generator_output, child })
    }
}
