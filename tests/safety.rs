//! The generated code's memory: never writable and executable at once (W^X). After stages are
//! compiled and run, no page of the process is mapped `rwx`.

#[cfg(target_os = "linux")]
#[test]
fn no_page_is_writable_and_executable_after_compiling_stages() {
    let session = kiln::Session::new();
    session.set_conf("spark.sql.codegen.wholeStage", "true").expect("setting");
    let df = session
        .sql("SELECT k, sum(v) FROM VALUES (1, 2.5), (2, 3.5), (1, 4.0) AS t(k, v) WHERE v > 1 GROUP BY k ORDER BY k")
        .expect("plans");
    let (rows, metrics) = df.collect_with_metrics().expect("runs");
    assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    assert!(metrics.codegen.stages_compiled > 0, "stages were compiled: {:?}", metrics.codegen);
    let maps = std::fs::read_to_string("/proc/self/maps").expect("the process's memory maps");
    let wx: Vec<&str> = maps.lines().filter(|l| l.split_whitespace().nth(1).is_some_and(|p| p.contains('w') && p.contains('x'))).collect();
    assert!(wx.is_empty(), "pages mapped writable and executable:\n{}", wx.join("\n"));
}
