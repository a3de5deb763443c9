//! Runs every example under examples/ (each `main` asserts what it shows), so they stay true.

#[path = "../examples/check_rule.rs"]
mod check_rule;
#[path = "../examples/optimizer_rule.rs"]
mod optimizer_rule;
#[path = "../examples/planner_strategy.rs"]
mod planner_strategy;
#[path = "../examples/stream.rs"]
mod stream;
#[path = "../examples/udaf.rs"]
mod udaf;
#[path = "../examples/udf.rs"]
mod udf;

#[test]
fn example_check_rule() {
    check_rule::main().expect("example check_rule");
}

#[test]
fn example_optimizer_rule() {
    optimizer_rule::main().expect("example optimizer_rule");
}

#[test]
fn example_planner_strategy() {
    planner_strategy::main().expect("example planner_strategy");
}

#[test]
fn example_stream() {
    stream::main().expect("example stream");
}

#[test]
fn example_udaf() {
    udaf::main().expect("example udaf");
}

#[test]
fn example_udf() {
    udf::main().expect("example udf");
}

/// A new example must be added here too.
#[test]
fn every_example_runs() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("examples/")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".rs").map(str::to_string))
        .collect();
    names.sort();
    assert_eq!(names, ["check_rule", "optimizer_rule", "planner_strategy", "stream", "udaf", "udf"]);
}
