//! The plan picture (`kiln explain --analyze --graph`) as a reader sees it: for TPC-H Q5, Q9,
//! Q18 and a plan with a stage that fell back to interpreted, read back from the SVG, no two
//! frames intersect (a codegen stage's frame lies inside its query stage's or apart from it),
//! every box lies inside exactly its own frames and meets no other, no two boxes overlap, no
//! two edges cross and no edge runs through a box it does not join.

use std::path::Path;

use kiln::Session;

/// (x0, y0, x1, y1).
type Rect = (f64, f64, f64, f64);

struct Panel {
    frames: Vec<(String, Rect, String)>,
    boxes: Vec<(Vec<String>, Rect)>,
    /// Each box's text lines (name, detail, numbers), as `boxes`.
    texts: Vec<Vec<String>>,
    edges: Vec<(f64, f64, f64, f64)>,
}

fn number(n: &roxmltree::Node, name: &str) -> f64 {
    n.attribute(name).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no number {name} on {n:?}"))
}

/// The rectangle of a group's `<rect>`, and its fill.
fn rect_of(g: &roxmltree::Node) -> (Rect, String) {
    let r = g.children().find(|c| c.has_tag_name("rect")).expect("a rect");
    let (x, y) = (number(&r, "x"), number(&r, "y"));
    ((x, y, x + number(&r, "width"), y + number(&r, "height")), r.attribute("fill").unwrap_or_default().to_string())
}

/// The panels of a picture (final plan, and the initial one when drawn), each in its own
/// coordinates.
fn panels(svg: &str) -> Vec<Panel> {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let class = |n: &roxmltree::Node, c: &str| n.attribute("class") == Some(c);
    doc.descendants()
        .filter(|n| class(n, "panel"))
        .map(|panel| {
            let mut p = Panel { frames: vec![], boxes: vec![], texts: vec![], edges: vec![] };
            for g in panel.descendants().filter(|n| n.has_tag_name("g")) {
                if class(&g, "frame") {
                    let (r, fill) = rect_of(&g);
                    p.frames.push((g.attribute("data-cluster").unwrap_or_default().to_string(), r, fill));
                } else if class(&g, "node") {
                    let clusters = g.attribute("data-clusters").unwrap_or_default().split_whitespace().map(String::from).collect();
                    p.boxes.push((clusters, rect_of(&g).0));
                    p.texts.push(g.children().filter(|c| c.has_tag_name("text")).map(|t| t.text().unwrap_or_default().to_string()).collect());
                } else if class(&g, "edge") {
                    let l = g.children().find(|c| c.has_tag_name("line")).expect("a line");
                    p.edges.push((number(&l, "x1"), number(&l, "y1"), number(&l, "x2"), number(&l, "y2")));
                }
            }
            p
        })
        .collect()
}

fn intersects(a: Rect, b: Rect) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

fn contains(outer: Rect, inner: Rect) -> bool {
    outer.0 < inner.0 && outer.1 < inner.1 && inner.2 < outer.2 && inner.3 < outer.3
}

/// Whether segments a and b cross at a point inside both (a shared end does not count).
fn segments_cross(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    let orient = |(px, py): (f64, f64), (qx, qy): (f64, f64), (rx, ry): (f64, f64)| (qx - px) * (ry - py) - (qy - py) * (rx - px);
    let (p1, p2, q1, q2) = ((a.0, a.1), (a.2, a.3), (b.0, b.1), (b.2, b.3));
    let (d1, d2, d3, d4) = (orient(q1, q2, p1), orient(q1, q2, p2), orient(p1, p2, q1), orient(p1, p2, q2));
    d1 * d2 < 0.0 && d3 * d4 < 0.0
}

/// Whether the segment runs through the inside of `r` (sampled finely: boxes are far larger
/// than a step).
fn segment_enters(s: (f64, f64, f64, f64), r: Rect) -> bool {
    (1..200).any(|i| {
        let t = i as f64 / 200.0;
        let (x, y) = (s.0 + (s.2 - s.0) * t, s.1 + (s.3 - s.1) * t);
        r.0 + 1.0 < x && x < r.2 - 1.0 && r.1 + 1.0 < y && y < r.3 - 1.0
    })
}

fn check_geometry(name: &str, p: &Panel) {
    for (i, (ka, a, _)) in p.frames.iter().enumerate() {
        for (kb, b, _) in &p.frames[i + 1..] {
            assert!(!intersects(*a, *b) || contains(*a, *b) || contains(*b, *a), "{name}: frames {ka} {a:?} and {kb} {b:?} overlap");
        }
    }
    for (i, (clusters, b)) in p.boxes.iter().enumerate() {
        for (key, f, _) in &p.frames {
            if clusters.contains(key) {
                assert!(contains(*f, *b), "{name}: a box of {key} {b:?} outside its frame {f:?}");
            } else {
                assert!(!intersects(*f, *b), "{name}: the box {b:?} ({clusters:?}) meets the frame of {key} {f:?}");
            }
        }
        for (_, other) in &p.boxes[i + 1..] {
            assert!(!intersects(*b, *other), "{name}: boxes {b:?} and {other:?} overlap");
        }
    }
    for (i, e) in p.edges.iter().enumerate() {
        for other in &p.edges[i + 1..] {
            assert!(!segments_cross(*e, *other), "{name}: edges {e:?} and {other:?} cross");
        }
        for (_, b) in &p.boxes {
            assert!(!segment_enters(*e, *b), "{name}: edge {e:?} runs through the box {b:?}");
        }
    }
}

fn session() -> Session {
    let s = Session::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/tpch");
    for t in ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"] {
        s.register_parquet(t, dir.join(format!("{t}.parquet")).to_str().expect("utf-8 path")).expect("registers");
    }
    s
}

fn picture(s: &Session, sql: &str) -> String {
    s.sql(sql).expect("plans").plan_graph(false).expect("runs and draws")
}

#[test]
fn frames_hold_exactly_their_members_and_nothing_overlaps() {
    let s = session();
    for q in ["05", "09", "18"] {
        let sql = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/reference/queries/tpch_q{q}.sql"))).expect("query");
        let svg = picture(&s, &sql);
        let panels = panels(&svg);
        // Adaptive execution read the shuffles coalesced: the initial plan is drawn beside.
        assert_eq!(panels.len(), 2, "Q{q}: the final and the initial plan");
        assert!(svg.contains("Initial plan") && svg.contains("class=\"legend\""), "Q{q}");
        let final_plan = &panels[0];
        assert!(final_plan.frames.iter().any(|f| f.0.starts_with("query-stage-")), "Q{q}: query stages framed");
        assert!(final_plan.frames.iter().any(|f| f.0.starts_with("codegen-stage-") && f.2 == "#e3f4e1"), "Q{q}: a compiled stage framed");
        // A compiled stage's frame holds more than one operator (joins and projects fuse).
        assert!(final_plan.boxes.iter().filter(|b| b.0.iter().any(|c| c.starts_with("codegen-stage-"))).count() > final_plan.frames.len() / 2, "Q{q}");
        for (i, p) in panels.iter().enumerate() {
            check_geometry(&format!("Q{q} panel {i}"), p);
        }
        // Every operator of a compiled stage shows its rows (counted by the generated code).
        let compiled: Vec<&String> = final_plan.frames.iter().filter(|f| f.2 == "#e3f4e1").map(|f| &f.0).collect();
        for ((clusters, _), text) in final_plan.boxes.iter().zip(&final_plan.texts) {
            if clusters.iter().any(|c| compiled.contains(&c)) {
                assert!(text.last().is_some_and(|t| t.ends_with(" rows") || t.contains(" rows ·")), "Q{q}: no rows in {text:?}");
            }
        }
        // The plan's spine (the root over its first child, and so on down) is the left column:
        // the page left of a left-deep plan's joins is not empty.
        for (i, p) in panels.iter().enumerate() {
            let left = p.boxes.iter().map(|b| b.1 .0).fold(f64::MAX, f64::min);
            let root = p.boxes.iter().min_by(|a, b| a.1 .1.total_cmp(&b.1 .1)).expect("a box");
            assert!((root.1 .0 - left).abs() < 0.5, "Q{q} panel {i}: the root at x {} right of the left column at {left}", root.1 .0);
        }
    }
    // A stage that fell back (regexp_replace is not compiled) is framed amber.
    let svg = picture(&s, "SELECT o_orderpriority, count(*) FROM orders WHERE regexp_replace(o_comment, 'a', 'b') LIKE '%special%' GROUP BY o_orderpriority");
    let panels = panels(&svg);
    assert!(panels[0].frames.iter().any(|f| f.0.starts_with("codegen-stage-") && f.2 == "#fdf0d5"), "an interpreted stage: {svg}");
    for (i, p) in panels.iter().enumerate() {
        check_geometry(&format!("fallback panel {i}"), p);
    }
}

#[test]
fn a_plan_adaptive_execution_left_alone_is_drawn_once() {
    let s = session();
    s.set_conf("spark.sql.adaptive.enabled", "false").expect("sets");
    let svg = picture(&s, "SELECT n_name FROM nation WHERE n_nationkey < 3");
    assert_eq!(panels(&svg).len(), 1, "{svg}");
    assert!(svg.contains(">Plan<"), "{svg}");
}

#[test]
fn a_spilling_operator_shows_what_it_wrote() {
    let s = Session::new();
    let folder = tempfile::tempdir().expect("a temporary folder");
    s.set_conf("spark.local.dir", &folder.path().display().to_string()).expect("sets");
    s.set_conf("spark.sql.shuffle.partitions", "3").expect("sets");
    s.set_conf("kiln.memory.limit", "4m").expect("sets");
    let svg = picture(&s, "SELECT id, concat('row', id) AS s FROM range(300000) ORDER BY s DESC");
    assert!(svg.contains("spilled "), "the exchange's box says what it spilled: {svg}");
    for (i, p) in panels(&svg).iter().enumerate() {
        check_geometry(&format!("spill panel {i}"), p);
    }
}
