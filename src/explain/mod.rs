//! EXPLAIN printers: the tree drawing, physical operator lines, and the modes.

mod cost;
mod formatted;
pub mod graph;
mod physical;
pub use crate::common::tree::{draw_tree, with_inner_children};

use crate::config::Config;
use crate::error::Result;
use crate::physical::PhysicalPlan;
use crate::plan::LogicalPlan;
use crate::types::spark_type_name;

pub use crate::sql::ExplainMode;

/// The plans of one query, as EXPLAIN prints them.
pub struct QueryPlans<'a> {
    /// The parsed (unresolved) logical plan.
    pub parsed: &'a LogicalPlan,
    /// The analyzed logical plan.
    pub analyzed: &'a LogicalPlan,
    /// The optimized logical plan.
    pub optimized: &'a LogicalPlan,
    /// The physical plan.
    pub physical: &'a PhysicalPlan,
    /// The plan an adaptive run executed, once the query has run (`isFinalPlan=true`).
    pub final_plan: Option<&'a PhysicalPlan>,
}

/// The text of `EXPLAIN [mode]`.
pub fn explain_string(plans: &QueryPlans<'_>, mode: ExplainMode, config: &Config) -> Result<String> {
    let physical = match plans.final_plan {
        Some(final_plan) => format!("== Physical Plan ==\n{}", adaptive_string(final_plan, plans.physical, config)),
        None => format!("== Physical Plan ==\n{}", plans.physical.tree_string(config)),
    };
    match mode {
        ExplainMode::Simple => Ok(physical),
        ExplainMode::Codegen => Ok(codegen_string(plans.final_plan.unwrap_or(plans.physical), config)),
        ExplainMode::Cost => Ok(cost::cost_string(plans.optimized, plans.physical, config)),
        ExplainMode::Formatted => Ok(formatted::formatted_string(plans.physical, config)),
        ExplainMode::Extended => {
            let schema = plans
                .analyzed
                .output()
                .iter()
                .map(|a| format!("{}: {}", a.name, spark_type_name(&a.data_type)))
                .collect::<Vec<_>>()
                .join(", ");
            Ok(format!(
                "== Parsed Logical Plan ==\n{}\n== Analyzed Logical Plan ==\n{schema}\n{}\n== Optimized Logical Plan ==\n{}\n{physical}",
                plans.parsed.tree_string(),
                plans.analyzed.tree_string(),
                plans.optimized.tree_string()
            ))
        }
    }
}

/// Spark's `AdaptiveSparkPlan isFinalPlan=true`: the plan that ran (query stages, shuffle
/// reads, run-time join strategies) above the initial plan, which prints without codegen stages.
pub fn adaptive_string(final_plan: &PhysicalPlan, initial: &PhysicalPlan, config: &Config) -> String {
    let indent = |text: String| text.lines().map(|l| format!("   {l}\n")).collect::<String>();
    format!(
        "AdaptiveSparkPlan isFinalPlan=true\n+- == Final Plan ==\n{}+- == Initial Plan ==\n{}",
        indent(final_plan.tree_string(config)),
        indent(without_stages(initial).tree_string(config))
    )
}

/// A plan's operators without their WholeStageCodegen wrappers.
pub(crate) fn without_stages(plan: &PhysicalPlan) -> PhysicalPlan {
    match plan {
        PhysicalPlan::WholeStageCodegen { child, .. } => without_stages(child),
        other => other.with_new_children(other.children().into_iter().map(|c| std::sync::Arc::new(without_stages(c))).collect()),
    }
}

/// `EXPLAIN CODEGEN`: each stage's operators and the Cranelift IR of its functions, with
/// numbered lines; stages that run interpreted say why.
fn codegen_string(plan: &PhysicalPlan, config: &Config) -> String {
    codegen_stages(plan, config, None)
}

/// `EXPLAIN CODEGEN` of the one stage numbered `id` (`*(id)` in plans).
pub fn codegen_stage_string(plan: &PhysicalPlan, config: &Config, id: usize) -> Result<String> {
    let mut stages = vec![];
    collect_stages(plan, &mut stages);
    let ids: Vec<String> = stages.iter().filter_map(|s| stage_id(s)).map(|i| i.to_string()).collect();
    if !ids.contains(&id.to_string()) {
        let known = if ids.is_empty() { "it has none".to_string() } else { format!("its stages are {}", ids.join(", ")) };
        return Err(crate::error::KilnError::Config(format!("the plan has no WholeStageCodegen stage {id}: {known}")));
    }
    Ok(codegen_stages(plan, config, Some(id)))
}

fn stage_id(p: &PhysicalPlan) -> Option<usize> {
    match p {
        PhysicalPlan::WholeStageCodegen { id, .. } => Some(*id),
        _ => None,
    }
}

fn codegen_stages(plan: &PhysicalPlan, config: &Config, only: Option<usize>) -> String {
    let mut stages = vec![];
    collect_stages(plan, &mut stages);
    // In stage id order, as Spark lists them.
    stages.sort_by_key(|s| stage_id(s).unwrap_or(0));
    let mut out = if only.is_none() { format!("Found {} WholeStageCodegen subtrees.\n", stages.len()) } else { String::new() };
    if only.is_none() {
        let mut outside = vec![];
        collect_outside_stages(plan, &mut outside);
        for (node, reason) in outside {
            out.push_str(&format!("Outside the stages: {} ({reason})\n", node.node_string(config)));
        }
    }
    for (i, stage) in stages.iter().enumerate() {
        let PhysicalPlan::WholeStageCodegen { fallback, child, id } = stage else { continue };
        if only.is_some_and(|o| o != *id) {
            continue;
        }
        let compiled = match fallback {
            Some(reason) => Err(reason.clone()),
            None => crate::codegen::StageSpec::from_plan(child).and_then(|spec| crate::codegen::compile_stage(&spec)),
        };
        let header = match &compiled {
            Ok(c) => format!("codeSize: {}; compileTime: {:.3} ms", c.code_size, c.compile_time.as_secs_f64() * 1000.0),
            Err(reason) if reason.starts_with(crate::codegen::COMPILED_WHEN_RUN) => reason.clone(),
            Err(reason) => format!("interpreted: {reason}"),
        };
        out.push_str(&format!("== Subtree {} / {} ({header}) ==\n", i + 1, stages.len()));
        out.push_str(&stage.tree_string(config));
        out.push('\n');
        if let Ok(c) = compiled {
            if config.codegen_dump.ir() {
                out.push_str("Generated code:\n");
                for (n, line) in c.clif.lines().enumerate() {
                    out.push_str(&format!("/* {:03} */ {line}\n", n + 1));
                }
                out.push('\n');
            }
            if config.codegen_dump.asm() {
                out.push_str("Native code:\n");
                out.push_str(&c.disassembly);
                out.push('\n');
            }
        }
    }
    out
}

/// The operators between stages that Spark would compile, with why kiln does not.
fn collect_outside_stages(p: &PhysicalPlan, out: &mut Vec<(PhysicalPlan, String)>) {
    for c in p.tree_children() {
        collect_outside_stages(c, out);
    }
    if let Some(reason) = crate::codegen::outside_stage_reason(p) {
        out.push((p.clone(), reason));
    }
}

fn collect_stages(p: &PhysicalPlan, out: &mut Vec<PhysicalPlan>) {
    // A subquery's stages too (those of its final plan once it ran adaptively).
    for s in p.subqueries() {
        collect_stages(s.final_physical_plan().unwrap_or(s.physical_plan()), out);
    }
    for c in p.tree_children() {
        collect_stages(c, out);
    }
    if matches!(p, PhysicalPlan::WholeStageCodegen { .. }) {
        out.push(p.clone());
    }
}
