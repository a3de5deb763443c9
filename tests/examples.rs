//! Runs every example under examples/ (each `main` asserts what it shows), so they stay true.
//! One at a time: `host_app` measures the process's peak memory while it streams.

#[path = "../examples/check_rule.rs"]
mod check_rule;
#[path = "../examples/host_app.rs"]
mod host_app;
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

static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn example_check_rule() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    check_rule::main().expect("example check_rule");
}

#[test]
fn example_host_app() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    host_app::main().expect("example host_app");
}

#[test]
fn example_optimizer_rule() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    optimizer_rule::main().expect("example optimizer_rule");
}

#[test]
fn example_planner_strategy() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    planner_strategy::main().expect("example planner_strategy");
}

#[test]
fn example_stream() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    stream::main().expect("example stream");
}

#[test]
fn example_udaf() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    udaf::main().expect("example udaf");
}

#[test]
fn example_udf() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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
    assert_eq!(names, ["check_rule", "host_app", "optimizer_rule", "planner_strategy", "stream", "udaf", "udf"]);
}
