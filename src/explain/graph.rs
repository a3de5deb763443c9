//! The plan as a picture: one self-contained SVG (or an HTML page holding it) of the plan that
//! ran — each box an operator with its rows, time and memory, each edge labelled with the rows
//! that flowed up it, codegen stages framed and numbered as in the text plan (green when
//! compiled, amber when interpreted), query stages in dashed frames, a legend — with the
//! initial plan beside it when adaptive execution changed the plan. No scripts, no network.
//!
//! The layout is a tree's: leaves in columns left to right, a parent over its first child (a
//! left-deep plan's spine runs down the left column), each child a layer below its parent, and
//! no two edges cross. A frame holds exactly its members: a stage's members form a connected top
//! part of a subtree, the columns of disjoint subtrees never overlap, and an input of a stage (a
//! child outside it) whose subtree's columns meet the frame's is placed below the stage's lowest
//! member (others hang beside the frame), so the frame around the members' boxes meets no other
//! box, and two frames are either nested (a codegen stage in its query stage) or apart.

use std::collections::HashMap;
use std::fmt::Write;

use super::physical::skip_stage;
use crate::config::Config;
use crate::physical::metrics::{group_digits, OperatorStats, PlanMetrics};
use crate::physical::{PhysicalPlan, QueryStageKind};

const BOX_W: f64 = 264.0;
const BOX_H: f64 = 70.0;
/// Between columns: room for two frames' padding side by side.
const GAP_X: f64 = 60.0;
/// Between a parent and its child: room for the edge and its rows label.
const GAP_Y: f64 = 34.0;
const MARGIN: f64 = 24.0;
/// Box text is monospace, so a line's width is its characters times [`CHAR_W`].
const FONT: f64 = 10.5;
const CHAR_W: f64 = FONT * 0.6;
const LINE_H: f64 = 13.5;
/// Characters of one line inside a box.
const LINE_CHARS: usize = ((BOX_W - 14.0) / CHAR_W) as usize;
/// A frame's label strip, above its members.
const LABEL_H: f64 = 15.0;
/// A frame's padding around its members: a query stage's is wider than the codegen stages'
/// inside it, so the frames nest.
const PAD_CODEGEN: f64 = 9.0;
const PAD_QUERY: f64 = 24.0;
const TITLE_H: f64 = 26.0;
const LEGEND_H: f64 = 40.0;

const COMPILED_FILL: &str = "#e3f4e1";
const INTERPRETED_FILL: &str = "#fdf0d5";

/// A framed group of operators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Cluster {
    /// A shuffle or broadcast query stage of adaptive execution, by id.
    Query(usize),
    /// A codegen stage `*(id)`, compiled or interpreted.
    Codegen(usize, bool),
}

impl Cluster {
    fn pad(self) -> f64 {
        match self {
            Cluster::Query(_) => PAD_QUERY,
            Cluster::Codegen(..) => PAD_CODEGEN,
        }
    }
    /// The name tests and readers of the SVG match frames and boxes by.
    fn key(self) -> String {
        match self {
            Cluster::Query(id) => format!("query-stage-{id}"),
            Cluster::Codegen(id, _) => format!("codegen-stage-{id}"),
        }
    }
    fn label(self) -> String {
        match self {
            Cluster::Query(id) => format!("query stage {id}"),
            Cluster::Codegen(id, _) => format!("WholeStageCodegen ({id})"),
        }
    }
}

/// One drawn operator.
struct Node<'a> {
    plan: &'a PhysicalPlan,
    /// The frames it sits in, outermost first.
    clusters: Vec<Cluster>,
    /// Its column (a parent's is the middle of its children's).
    col: f64,
    /// Its top, from the panel's first layer.
    y: f64,
    children: Vec<usize>,
}

/// A codegen stage's wrapper: why it runs interpreted, and its numbers (for the frame's hover).
struct StageInfo {
    fallback: Option<String>,
    stats: Option<OperatorStats>,
}

/// A plan laid out: its boxes and frames, in panel coordinates.
struct Layout<'a> {
    nodes: Vec<Node<'a>>,
    stages: HashMap<usize, StageInfo>,
    /// Each codegen stage's top operator, and the stage: a compiled stage's rows are its top's.
    tops: HashMap<*const PhysicalPlan, usize>,
    width: f64,
    height: f64,
}

impl Layout<'_> {
    /// The numbers of `plan`: its own, or for the top of a compiled stage the stage's.
    fn stats(&self, plan: &PhysicalPlan, ops: &PlanMetrics) -> Option<OperatorStats> {
        ops.get(plan).or_else(|| self.tops.get(&(plan as *const PhysicalPlan)).and_then(|id| self.stages.get(id)).and_then(|s| s.stats.clone()))
    }

    /// A box's top-left corner.
    fn at(&self, n: &Node) -> (f64, f64) {
        (MARGIN + PAD_QUERY + n.col * (BOX_W + GAP_X), MARGIN + TITLE_H + n.y)
    }
    /// Every cluster's frame (x0, y0, x1, y1): its members' boxes, padded, with the label strip.
    fn frames(&self) -> Vec<(Cluster, (f64, f64, f64, f64))> {
        let mut frames: Vec<(Cluster, (f64, f64, f64, f64))> = vec![];
        for n in &self.nodes {
            let (x, y) = self.at(n);
            for &c in &n.clusters {
                let (p, r) = (c.pad(), (x, y, x + BOX_W, y + BOX_H));
                let r = (r.0 - p, r.1 - p - LABEL_H, r.2 + p, r.3 + p);
                match frames.iter_mut().find(|f| f.0 == c) {
                    Some((_, f)) => *f = (f.0.min(r.0), f.1.min(r.1), f.2.max(r.2), f.3.max(r.3)),
                    None => frames.push((c, r)),
                }
            }
        }
        // Outer frames first, so inner ones draw over them.
        frames.sort_by_key(|(c, _)| matches!(c, Cluster::Codegen(..)));
        frames
    }
}

/// The picture of `final_plan` (with `initial` beside it when given), as an SVG document.
pub fn plan_svg(final_plan: &PhysicalPlan, initial: Option<&PhysicalPlan>, ops: &PlanMetrics, config: &Config) -> String {
    let mut panels = vec![(lay_out(final_plan, Some(ops)), Some(ops), if initial.is_some() { "Final plan" } else { "Plan" })];
    if let Some(initial) = initial {
        panels.push((lay_out(initial, None), None, "Initial plan (before adaptive execution)"));
    }
    let mut svg = legend();
    let (mut width, mut height) = (legend_width(), 0.0f64);
    let mut left = 0.0;
    for (layout, ops, title) in &panels {
        let _ = write!(svg, "<g class=\"panel\" transform=\"translate({left:.1},{LEGEND_H:.1})\">{}</g>", draw(layout, *ops, config, title));
        left += layout.width;
        height = height.max(layout.height);
    }
    width = width.max(left);
    height += LEGEND_H;
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"sans-serif\" font-size=\"11\">\
         <defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>{svg}</svg>\n"
    )
}

/// The picture as a self-contained HTML page.
pub fn plan_html(final_plan: &PhysicalPlan, initial: Option<&PhysicalPlan>, ops: &PlanMetrics, config: &Config, title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/><title>{t}</title><style>body{{font-family:sans-serif;margin:16px}}</style></head>\
         <body><h1>{t}</h1>\n{svg}</body></html>\n",
        t = escape(title),
        svg = plan_svg(final_plan, initial, ops, config)
    )
}

/// The legend's items: a swatch (drawn at x, y) and what it means.
const LEGEND: [(&str, &str); 5] = [
    ("compiled", "codegen stage, compiled"),
    ("interpreted", "codegen stage, interpreted"),
    ("query", "query stage (adaptive)"),
    ("edge", "rows that flowed up an edge"),
    ("", "hover a box or frame for its full text"),
];

/// The width of one legend item: swatch, text (about 6.2 px a character at 11 px), gap.
fn legend_item_width(text: &str) -> f64 {
    30.0 + text.chars().count() as f64 * 6.2 + 24.0
}

/// What the colours, frames and edge labels mean, across the top.
fn legend() -> String {
    let y = MARGIN - 6.0;
    let mut out = String::from("<g class=\"legend\" font-size=\"11\">");
    let mut x = MARGIN;
    for (swatch, text) in LEGEND {
        let rect = |fill: &str, dash: &str| format!("<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"22\" height=\"14\" rx=\"3\" fill=\"{fill}\" stroke=\"#888\"{dash}/>");
        out.push_str(&match swatch {
            "compiled" => rect(COMPILED_FILL, ""),
            "interpreted" => rect(INTERPRETED_FILL, ""),
            "query" => rect("none", " stroke-dasharray=\"6,4\""),
            "edge" => format!("<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>", x + 11.0, y + 16.0, x + 11.0, y - 2.0),
            _ => String::new(),
        });
        let _ = write!(out, "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>", x + 30.0, y + 11.0, escape(text));
        x += legend_item_width(text);
    }
    out.push_str("</g>");
    out
}

fn legend_width() -> f64 {
    MARGIN * 2.0 + LEGEND.iter().map(|(_, t)| legend_item_width(t)).sum::<f64>()
}

/// Places the operators of `plan`: columns, then layers, then the panel's size.
fn lay_out<'a>(plan: &'a PhysicalPlan, ops: Option<&PlanMetrics>) -> Layout<'a> {
    let mut stages = HashMap::new();
    let mut members = HashMap::new();
    let mut tops = HashMap::new();
    stage_members(plan, ops, &mut stages, &mut members, &mut tops);
    let mut nodes = vec![];
    let mut next_col = 0.0;
    collect(plan, &members, None, &mut next_col, &mut nodes);
    place_layers(&mut nodes);
    let mut layout = Layout { nodes, stages, tops, width: 0.0, height: 0.0 };
    let (mut right, mut bottom) = (0.0f64, 0.0f64);
    for n in &layout.nodes {
        let (x, y) = layout.at(n);
        right = right.max(x + BOX_W + PAD_QUERY);
        bottom = bottom.max(y + BOX_H + PAD_QUERY);
    }
    for (_, (_, _, x1, y1)) in layout.frames() {
        right = right.max(x1);
        bottom = bottom.max(y1);
    }
    layout.width = right + MARGIN;
    layout.height = bottom + MARGIN;
    layout
}

/// Records every codegen stage (its wrapper's fallback and numbers) and, for each operator
/// fused into one, the stage: the operators the stage's code runs, as the text plan's `*(N)`.
fn stage_members(
    p: &PhysicalPlan,
    ops: Option<&PlanMetrics>,
    stages: &mut HashMap<usize, StageInfo>,
    members: &mut HashMap<*const PhysicalPlan, Cluster>,
    tops: &mut HashMap<*const PhysicalPlan, usize>,
) {
    if let PhysicalPlan::WholeStageCodegen { id, fallback, child } = p {
        let cluster = Cluster::Codegen(*id, fallback.is_none());
        tops.insert(skip_stage(child) as *const PhysicalPlan, *id);
        stages.insert(*id, StageInfo { fallback: fallback.clone(), stats: ops.and_then(|m| m.get(p)) });
        match crate::codegen::StageSpec::chain(child) {
            Some((chain, _)) => {
                for op in chain {
                    members.insert(std::sync::Arc::as_ptr(&op), cluster);
                }
            }
            None => {
                members.insert(skip_stage(child) as *const PhysicalPlan, cluster);
            }
        }
    }
    for c in p.tree_children() {
        stage_members(c, ops, stages, members, tops);
    }
}

/// Adds `plan`'s subtree to `nodes` (codegen wrappers left out: their operators are framed
/// instead), leaves in columns left to right, a parent over the middle of its children.
fn collect<'a>(plan: &'a PhysicalPlan, members: &HashMap<*const PhysicalPlan, Cluster>, query_stage: Option<usize>, next_col: &mut f64, nodes: &mut Vec<Node<'a>>) -> usize {
    let plan = skip_stage(plan);
    let query_stage = match plan {
        PhysicalPlan::QueryStage { id, kind: QueryStageKind::Shuffle | QueryStageKind::Broadcast, .. } => Some(*id),
        _ => query_stage,
    };
    let clusters = query_stage.map(Cluster::Query).into_iter().chain(members.get(&(plan as *const PhysicalPlan)).copied()).collect();
    let index = nodes.len();
    nodes.push(Node { plan, clusters, col: 0.0, y: 0.0, children: vec![] });
    let kids: Vec<usize> = plan.tree_children().into_iter().map(|c| collect(c, members, query_stage, next_col, nodes)).collect();
    // Over its first child: a left-deep plan's spine runs down the left column, the other
    // children's subtrees to its right.
    nodes[index].col = match kids.first() {
        Some(&first) => nodes[first].col,
        None => {
            *next_col += 1.0;
            *next_col - 1.0
        }
    };
    nodes[index].children = kids;
    index
}

/// Sets each node's top: a layer below its parent, with room for the frames it leaves and
/// enters; a child outside a frame its parent is in goes below the frame's lowest member when
/// its subtree's columns meet the frame's (else beside the frame, a layer below its parent).
fn place_layers(nodes: &mut [Node]) {
    let entering = |cs: &[Cluster]| cs.iter().map(|c| c.pad() + LABEL_H).sum::<f64>();
    // Each subtree's columns (children follow their parent in `nodes`), each frame's.
    let mut span: Vec<(f64, f64)> = nodes.iter().map(|n| (n.col, n.col)).collect();
    for i in (0..nodes.len()).rev() {
        for &c in &nodes[i].children {
            span[i] = (span[i].0.min(span[c].0), span[i].1.max(span[c].1));
        }
    }
    let mut columns: HashMap<Cluster, (f64, f64)> = HashMap::new();
    for n in nodes.iter() {
        for &c in &n.clusters {
            let r = columns.entry(c).or_insert((n.col, n.col));
            *r = (r.0.min(n.col), r.1.max(n.col));
        }
    }
    let meets = |k: &Cluster, (lo, hi): (f64, f64)| columns.get(k).is_some_and(|&(a, b)| lo <= b && a <= hi);
    if let Some(root) = nodes.first_mut() {
        root.y = entering(&root.clusters);
    }
    // Each pass settles at least one more layer; the frames' bottoms move with their members.
    for _ in 0..=nodes.len() {
        let mut bottoms: HashMap<Cluster, f64> = HashMap::new();
        for n in nodes.iter() {
            for &c in &n.clusters {
                let b = bottoms.entry(c).or_insert(0.0);
                *b = b.max(n.y + BOX_H);
            }
        }
        let mut changed = false;
        for p in 0..nodes.len() {
            for ci in 0..nodes[p].children.len() {
                let c = nodes[p].children[ci];
                let left: Vec<Cluster> = nodes[p].clusters.iter().filter(|k| !nodes[c].clusters.contains(k)).copied().collect();
                let entered: Vec<Cluster> = nodes[c].clusters.iter().filter(|k| !nodes[p].clusters.contains(k)).copied().collect();
                let above = left.iter().filter(|k| meets(k, span[c])).map(|k| bottoms.get(k).copied().unwrap_or(0.0)).fold(nodes[p].y + BOX_H, f64::max);
                let top = above + GAP_Y + left.iter().map(|k| k.pad()).sum::<f64>() + entering(&entered);
                if nodes[c].y < top {
                    nodes[c].y = top;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
}

/// One laid-out plan as an SVG group: title, frames, edges, boxes.
fn draw(layout: &Layout, ops: Option<&PlanMetrics>, config: &Config, title: &str) -> String {
    let mut out = format!("<text x=\"{MARGIN}\" y=\"{:.1}\" font-size=\"15\" font-weight=\"bold\">{}</text>", MARGIN + 8.0, escape(title));
    for (cluster, (x0, y0, x1, y1)) in layout.frames() {
        let (fill, dash) = match cluster {
            Cluster::Codegen(_, true) => (COMPILED_FILL, ""),
            Cluster::Codegen(_, false) => (INTERPRETED_FILL, ""),
            Cluster::Query(_) => ("none", " stroke-dasharray=\"6,4\""),
        };
        let hover = match cluster {
            Cluster::Codegen(id, _) => stage_hover(cluster, layout.stages.get(&id)),
            Cluster::Query(_) => cluster.label(),
        };
        let _ = write!(
            out,
            "<g class=\"frame\" data-cluster=\"{}\"><title>{}</title><rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"6\" fill=\"{fill}\" stroke=\"#888\"{dash}/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-family=\"monospace\" font-size=\"10\" fill=\"#444\">{}</text></g>",
            cluster.key(),
            escape(&hover),
            x1 - x0,
            y1 - y0,
            x0 + 5.0,
            y0 + 12.0,
            escape(&cluster.label())
        );
    }
    // Edges: from a child's top up to its parent's bottom, labelled with the rows that flowed.
    for n in &layout.nodes {
        let (px, py) = layout.at(n);
        for &c in &n.children {
            let child = &layout.nodes[c];
            let (cx, cy) = layout.at(child);
            // A child right of its parent's column is reached from the parent's right side: the
            // edge then passes no box of the parent's first child, which sits below the parent.
            let (x2, y2) = if child.col > n.col { (px + BOX_W, py + BOX_H / 2.0) } else { (px + BOX_W / 2.0, py + BOX_H) };
            let (x1, y1) = (cx + BOX_W / 2.0, cy);
            let _ = write!(out, "<g class=\"edge\"><line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" stroke=\"#555\" marker-end=\"url(#arrow)\"/>");
            if let Some(rows) = ops.and_then(|m| edge_rows(layout, child.plan, m)) {
                // Beside the edge just above the child, where no other edge runs.
                let _ = write!(out, "<text class=\"rows\" x=\"{:.1}\" y=\"{:.1}\" fill=\"#1a4f8a\">{} rows</text>", x1 + 6.0, y1 - 5.0, group_digits(rows));
            }
            out.push_str("</g>");
        }
    }
    for n in &layout.nodes {
        let (x, y) = layout.at(n);
        let line = n.plan.node_string(config);
        let name = short_name(&line);
        let mut lines = wrap(&subtitle(&line, &name), LINE_CHARS, 2);
        lines.resize(2, String::new());
        lines.push(ops.and_then(|m| layout.stats(n.plan, m)).map(|s| numbers(&s)).unwrap_or_default());
        let clusters: Vec<String> = n.clusters.iter().map(|c| c.key()).collect();
        let _ = write!(
            out,
            "<g class=\"node\" data-clusters=\"{}\"><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{BOX_W}\" height=\"{BOX_H}\" rx=\"4\" fill=\"#fff\" stroke=\"#333\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-weight=\"bold\" font-size=\"12\">{}</text>",
            clusters.join(" "),
            escape(&line),
            x + 7.0,
            y + 16.0,
            escape(&cut(&name, (BOX_W / 7.5) as usize))
        );
        for (i, text) in lines.iter().enumerate() {
            let fill = if i == 2 { "#1a4f8a" } else { "#444" };
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-family=\"monospace\" font-size=\"{FONT}\" fill=\"{fill}\">{}</text>",
                x + 7.0,
                y + 16.0 + LINE_H * (i as f64 + 1.0),
                escape(&cut(text, LINE_CHARS))
            );
        }
        out.push_str("</g>");
    }
    out
}

/// A box's last line: the operator's rows, time, memory and what it spilled (Spark UI's
/// "spill size").
fn numbers(s: &OperatorStats) -> String {
    let mut parts = vec![format!("{} rows", group_digits(s.rows))];
    if s.total_nanos() > 0 {
        parts.push(format!("{:.1} ms", s.total_nanos() as f64 / 1e6));
    }
    if s.held_bytes > 0 {
        parts.push(crate::common::bytes_to_string(s.held_bytes as u128));
    }
    if s.spill_files > 0 {
        parts.push(format!("spilled {}", crate::common::bytes_to_string(s.spill_bytes as u128)));
    }
    parts.join(" · ")
}

/// A codegen stage frame's hover text: compiled or why not, its time and rows out.
fn stage_hover(cluster: Cluster, info: Option<&StageInfo>) -> String {
    let mut text = cluster.label();
    match info.and_then(|i| i.fallback.as_deref()) {
        Some(why) => {
            let _ = write!(text, ": interpreted ({why})");
        }
        None => text.push_str(": compiled"),
    }
    if let Some(s) = info.and_then(|i| i.stats.as_ref()) {
        let _ = write!(text, "; {}", numbers(s));
    }
    text
}

/// `text` in lines of at most `width` characters, broken at spaces where it can; at most
/// `max_lines`, the last ending in `…` when text was left out.
fn wrap(text: &str, width: usize, max_lines: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    let mut rest: Vec<char> = text.chars().collect();
    while !rest.is_empty() && lines.len() < max_lines {
        if rest.len() <= width {
            lines.push(rest.iter().collect());
            rest.clear();
            break;
        }
        // The last space within the line, if it is not too early.
        let cut_at = rest[..=width].iter().rposition(|c| *c == ' ').filter(|&i| i > width / 2).unwrap_or(width);
        lines.push(rest[..cut_at].iter().collect::<String>().trim_end().to_string());
        rest.drain(..cut_at);
        while rest.first() == Some(&' ') {
            rest.remove(0);
        }
    }
    if !rest.is_empty() {
        if let Some(last) = lines.last_mut() {
            let mut kept: String = last.chars().take(width.saturating_sub(1)).collect();
            kept.push('…');
            *last = kept;
        }
    }
    lines
}

/// The rows that flowed out of `child`: counted on it, or a finished stage's output.
fn edge_rows(layout: &Layout, child: &PhysicalPlan, ops: &PlanMetrics) -> Option<u64> {
    match child {
        PhysicalPlan::QueryStage { output, kind: QueryStageKind::Shuffle | QueryStageKind::Broadcast, .. } => Some(output.total_rows()),
        _ => layout.stats(child, ops).map(|s| s.rows),
    }
}

/// The operator's name: the text before its first space or bracket.
fn short_name(line: &str) -> String {
    let end = line.find([' ', '(', '[']).unwrap_or(line.len());
    let name = &line[..end];
    // Keep the distinguishing word of stage and read lines (`ShuffleQueryStage 2`, `AQEShuffleRead
    // coalesced`, `Exchange SinglePartition`), not an expression (`hashpartitioning(..`).
    match (name, line.split([',', ' ']).nth(1)) {
        ("ShuffleQueryStage" | "BroadcastQueryStage" | "ResultQueryStage" | "AQEShuffleRead" | "Exchange", Some(word)) if !word.is_empty() && !word.contains('(') => {
            format!("{name} {word}")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_sit_over_their_children_and_text_is_escaped() {
        let s = crate::Session::new();
        s.sql("CREATE TABLE t AS SELECT * FROM VALUES (1, 'a<b'), (2, 'c') AS v(a, b)").expect("table");
        let df = s.sql("SELECT b, count(*) FROM t WHERE b <> 'x&y' GROUP BY b").expect("plans");
        let config = s.config().expect("config");
        let layout = lay_out(df.physical_plan(), None);
        assert!(layout.nodes.len() >= 3);
        for n in &layout.nodes {
            for &c in &n.children {
                assert!(layout.nodes[c].y > n.y, "a child below its parent");
            }
            if let (Some(&first), Some(&last)) = (n.children.first(), n.children.last()) {
                assert_eq!(n.col, (layout.nodes[first].col + layout.nodes[last].col) / 2.0);
            }
        }
        let svg = plan_svg(df.physical_plan(), None, &PlanMetrics::default(), &config);
        assert!(svg.contains("x&amp;y") && !svg.contains("x&y"), "{svg}");
    }

    #[test]
    fn long_text_wraps_at_spaces_and_is_cut_with_an_ellipsis() {
        assert_eq!(wrap("short", 10, 2), vec!["short"]);
        assert_eq!(wrap("aaaa bbbb cccc", 10, 2), vec!["aaaa bbbb", "cccc"]);
        assert_eq!(wrap("aaaa bbbb cccc dddd eeee", 10, 2), vec!["aaaa bbbb", "cccc dddd…"]);
        assert_eq!(wrap("abcdefghijklmnop", 10, 2), vec!["abcdefghij", "klmnop"]);
    }
}
