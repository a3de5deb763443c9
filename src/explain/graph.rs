//! The plan as a picture: one self-contained SVG (or an HTML page holding it) of the plan that
//! ran, drawn as a tree of operators — each box an operator with its time and memory, each
//! edge labelled with the rows that flowed up it, codegen stages boxed and numbered as in the
//! text plan (green when compiled, amber when interpreted), query stages in dashed frames —
//! with the initial plan beside it when adaptive execution changed it. No scripts, no network.

use std::fmt::Write;

use super::physical::skip_stage;
use crate::config::Config;
use crate::physical::metrics::{group_digits, PlanMetrics};
use crate::physical::{PhysicalPlan, QueryStageKind};

const BOX_W: f64 = 230.0;
const BOX_H: f64 = 58.0;
const GAP_X: f64 = 30.0;
const GAP_Y: f64 = 46.0;
const MARGIN: f64 = 40.0;

/// One drawn operator.
struct Node<'a> {
    plan: &'a PhysicalPlan,
    /// The codegen stage it runs in (id, compiled).
    stage: Option<(usize, bool)>,
    /// The query stage (frame) it belongs to.
    query_stage: Option<usize>,
    x: f64,
    y: f64,
    children: Vec<usize>,
}

/// The picture of `final_plan` (with `initial` beside it when given), as an SVG document.
pub fn plan_svg(final_plan: &PhysicalPlan, initial: Option<&PhysicalPlan>, ops: &PlanMetrics, config: &Config) -> String {
    let (body, w, h) = panel(final_plan, Some(ops), config, if initial.is_some() { "Final plan" } else { "Plan" });
    let (mut width, mut height, mut svg) = (w, h, body);
    if let Some(initial) = initial {
        let (body2, w2, h2) = panel(initial, None, config, "Initial plan");
        let _ = write!(svg, "<g transform=\"translate({width:.0},0)\">{body2}</g>");
        width += w2;
        height = height.max(h2);
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>{svg}</svg>\n"
    )
}

/// The picture as a self-contained HTML page.
pub fn plan_html(final_plan: &PhysicalPlan, initial: Option<&PhysicalPlan>, ops: &PlanMetrics, config: &Config, title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/><title>{t}</title>\
         <style>body{{font-family:sans-serif;margin:16px}} .legend span{{display:inline-block;padding:2px 8px;margin-right:8px;border:1px solid #999}}</style></head>\
         <body><h1>{t}</h1><p class=\"legend\"><span style=\"background:#e3f4e1\">compiled stage</span><span style=\"background:#fdf0d5\">interpreted stage</span>\
         <span style=\"border-style:dashed\">query stage</span> edge labels: rows that flowed</p>\n{svg}</body></html>\n",
        t = escape(title),
        svg = plan_svg(final_plan, initial, ops, config)
    )
}

/// One plan drawn from (0, 0): the SVG body, its width and height.
fn panel(plan: &PhysicalPlan, ops: Option<&PlanMetrics>, config: &Config, title: &str) -> (String, f64, f64) {
    let mut nodes: Vec<Node> = vec![];
    let mut next_x = 0.0;
    let root = lay_out(plan, None, None, 0, &mut next_x, &mut nodes);
    let depth = nodes.iter().map(|n| n.y).fold(0.0, f64::max);
    let width = next_x.max(1.0) * (BOX_W + GAP_X) + 2.0 * MARGIN;
    let height = (depth + 1.0) * (BOX_H + GAP_Y) + 2.0 * MARGIN + 20.0;
    let pos = |n: &Node| (MARGIN + n.x * (BOX_W + GAP_X), MARGIN + 20.0 + n.y * (BOX_H + GAP_Y));
    let mut out = format!("<text x=\"{MARGIN}\" y=\"{:.0}\" font-size=\"15\" font-weight=\"bold\">{}</text>", MARGIN - 8.0, escape(title));
    // Frames first, so boxes and edges draw over them: query stages, then codegen stages.
    let mut frames: Vec<(String, bool, Option<bool>, (f64, f64, f64, f64))> = vec![];
    let mut group = |key: String, dashed: bool, compiled: Option<bool>, n: &Node| {
        let (x, y) = pos(n);
        let r = (x, y, x + BOX_W, y + BOX_H);
        match frames.iter_mut().find(|f| f.0 == key) {
            Some(f) => f.3 = (f.3 .0.min(r.0), f.3 .1.min(r.1), f.3 .2.max(r.2), f.3 .3.max(r.3)),
            None => frames.push((key, dashed, compiled, r)),
        }
    };
    for n in &nodes {
        if let Some(q) = n.query_stage {
            group(format!("query stage {q}"), true, None, n);
        }
    }
    for n in &nodes {
        if let Some((id, compiled)) = n.stage {
            group(format!("WholeStageCodegen ({id})"), false, Some(compiled), n);
        }
    }
    for (label, dashed, compiled, (x0, y0, x1, y1)) in &frames {
        let pad = if *dashed { 14.0 } else { 7.0 };
        let fill = match compiled {
            Some(true) => "#e3f4e1",
            Some(false) => "#fdf0d5",
            None => "none",
        };
        let dash = if *dashed { " stroke-dasharray=\"6,4\"" } else { "" };
        let _ = write!(
            out,
            "<g class=\"frame\"><rect x=\"{:.0}\" y=\"{:.0}\" width=\"{:.0}\" height=\"{:.0}\" rx=\"6\" fill=\"{fill}\" stroke=\"#888\"{dash}/>\
             <text x=\"{:.0}\" y=\"{:.0}\" fill=\"#555\">{}</text></g>",
            x0 - pad,
            y0 - pad,
            x1 - x0 + 2.0 * pad,
            y1 - y0 + 2.0 * pad,
            x0 - pad + 4.0,
            y1 + pad - 3.0,
            escape(label)
        );
    }
    // Edges: child top-centre up to parent bottom-centre, labelled with the child's rows.
    for n in &nodes {
        let (px, py) = pos(n);
        for &c in &n.children {
            let child = &nodes[c];
            let (cx, cy) = pos(child);
            let (x1, y1, x2, y2) = (cx + BOX_W / 2.0, cy, px + BOX_W / 2.0, py + BOX_H);
            let rows = ops.and_then(|m| edge_rows(child.plan, m));
            let _ = write!(out, "<g class=\"edge\"><line x1=\"{x1:.0}\" y1=\"{y1:.0}\" x2=\"{x2:.0}\" y2=\"{y2:.0}\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>");
            if let Some(rows) = rows {
                let _ = write!(out, "<text class=\"rows\" x=\"{:.0}\" y=\"{:.0}\" fill=\"#1a4f8a\">{} rows</text>", (x1 + x2) / 2.0 + 4.0, (y1 + y2) / 2.0 + 4.0, group_digits(rows));
            }
            out.push_str("</g>");
        }
    }
    for n in &nodes {
        let (x, y) = pos(n);
        let line = n.plan.node_string(config);
        let title = short_name(&line);
        let stats = ops.and_then(|m| m.get(n.plan));
        let detail = stats.as_ref().map(|s| {
            let mut parts = vec![];
            if s.total_nanos() > 0 {
                parts.push(format!("{:.1} ms", s.total_nanos() as f64 / 1e6));
            }
            if s.held_bytes > 0 {
                parts.push(crate::common::bytes_to_string(s.held_bytes as u128));
            }
            parts.join(", ")
        });
        let _ = write!(
            out,
            "<g class=\"node\"><title>{}</title><rect x=\"{x:.0}\" y=\"{y:.0}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"4\" fill=\"#fff\" stroke=\"#333\"/>\
             <text x=\"{:.0}\" y=\"{:.0}\" font-weight=\"bold\">{}</text><text x=\"{:.0}\" y=\"{:.0}\" fill=\"#444\">{}</text>\
             <text x=\"{:.0}\" y=\"{:.0}\" fill=\"#444\">{}</text></g>",
            escape(&line),
            x + 8.0,
            y + 17.0,
            escape(&cut(&title, 34)),
            x + 8.0,
            y + 33.0,
            escape(&cut(&subtitle(&line, &title), 38)),
            x + 8.0,
            y + 49.0,
            escape(&detail.unwrap_or_default())
        );
    }
    let _ = root;
    (out, width, height)
}

/// Places `plan` and its subtree: leaves left to right, parents centred over their children.
fn lay_out<'a>(plan: &'a PhysicalPlan, stage: Option<(usize, bool)>, query_stage: Option<usize>, depth: usize, next_x: &mut f64, nodes: &mut Vec<Node<'a>>) -> usize {
    // A codegen wrapper is not drawn: its operators are boxed instead.
    let (plan, stage) = match plan {
        PhysicalPlan::WholeStageCodegen { id, fallback, child, .. } => (skip_stage(child), Some((*id, fallback.is_none()))),
        other => (other, stage),
    };
    let own_stage = stage.filter(|_| in_stage(plan));
    let query_stage = match plan {
        PhysicalPlan::QueryStage { id, kind: QueryStageKind::Shuffle | QueryStageKind::Broadcast, .. } => Some(*id),
        _ => query_stage,
    };
    let index = nodes.len();
    nodes.push(Node { plan, stage: own_stage, query_stage, x: 0.0, y: depth as f64, children: vec![] });
    let kids: Vec<usize> = plan
        .tree_children()
        .into_iter()
        .map(|c| {
            // A child is in this stage only when it is fused with it (not a new wrapper).
            let child_stage = if matches!(c.as_ref(), PhysicalPlan::WholeStageCodegen { .. }) { None } else { own_stage };
            lay_out(c, child_stage, query_stage, depth + 1, next_x, nodes)
        })
        .collect();
    let x = if kids.is_empty() {
        let x = *next_x;
        *next_x += 1.0;
        x
    } else {
        (nodes[kids[0]].x + nodes[kids[kids.len() - 1]].x) / 2.0
    };
    nodes[index].x = x;
    nodes[index].children = kids;
    index
}

/// Operators that fuse into a codegen stage (others under a wrapper are its inputs).
fn in_stage(p: &PhysicalPlan) -> bool {
    matches!(
        p,
        PhysicalPlan::Filter { .. } | PhysicalPlan::Project { .. } | PhysicalPlan::HashAggregate { .. } | PhysicalPlan::HashJoin { .. } | PhysicalPlan::Sort { .. }
    )
}

/// The rows that flowed out of `child`: counted on it, or a finished stage's output.
fn edge_rows(child: &PhysicalPlan, ops: &PlanMetrics) -> Option<u64> {
    match child {
        PhysicalPlan::QueryStage { output, kind: QueryStageKind::Shuffle | QueryStageKind::Broadcast, .. } => Some(output.total_rows()),
        _ => ops.get(child).map(|s| s.rows),
    }
}

/// The operator's name: the text before its first space or bracket.
fn short_name(line: &str) -> String {
    let end = line.find([' ', '(', '[']).unwrap_or(line.len());
    let name = &line[..end];
    // Keep the distinguishing word of stage and read lines (`ShuffleQueryStage 2`, `AQEShuffleRead coalesced`).
    match name {
        "ShuffleQueryStage" | "BroadcastQueryStage" | "ResultQueryStage" | "AQEShuffleRead" | "Exchange" => {
            line.split(',').next().unwrap_or(line).split_whitespace().take(2).collect::<Vec<_>>().join(" ")
        }
        _ => name.to_string(),
    }
}

fn subtitle(line: &str, title: &str) -> String {
    line.strip_prefix(title).unwrap_or(line).trim_start_matches([' ', ',']).to_string()
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

/// XML text escaping.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Every node's position, for tests: operator line -> (x, y) in panel units.
#[cfg(test)]
fn positions(plan: &PhysicalPlan, config: &Config) -> std::collections::HashMap<String, (f64, f64)> {
    let mut nodes = vec![];
    let mut next_x = 0.0;
    lay_out(plan, None, None, 0, &mut next_x, &mut nodes);
    nodes.iter().map(|n| (n.plan.node_string(config), (n.x, n.y))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_sit_over_their_children_and_text_is_escaped() {
        let s = crate::Session::new();
        s.sql("CREATE TABLE t AS SELECT * FROM VALUES (1, 'a<b'), (2, 'c') AS v(a, b)").expect("table");
        let df = s.sql("SELECT b, count(*) FROM t WHERE b <> 'x&y' GROUP BY b").expect("plans");
        let config = s.config().expect("config");
        let pos = positions(df.physical_plan(), &config);
        let root = pos.iter().find(|(_, (_, y))| *y == 0.0).expect("a root");
        assert!(pos.values().all(|(_, y)| *y >= 0.0) && pos.len() >= 3, "{pos:?} {root:?}");
        let svg = plan_svg(df.physical_plan(), None, &PlanMetrics::default(), &config);
        assert!(svg.contains("x&amp;y") && !svg.contains("x&y"), "{svg}");
    }
}
