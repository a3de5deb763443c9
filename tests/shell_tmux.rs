//! `kiln shell` in a real terminal: tmux types into it as a person would (a multi-line statement
//! and its continuation prompt, tab completion and its list, lines typed ahead, dot commands,
//! Ctrl-C during a long query, Ctrl-D) and reads the screen back. CI installs tmux (`.ci/run`)
//! and sets KILN_REQUIRE_TMUX; without tmux and that variable each test says it is skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// A tmux server of its own (private socket, no user config), killed when dropped.
struct Tmux {
    socket: String,
    session: String,
}

impl Tmux {
    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux").args(["-L", &self.socket, "-f", "/dev/null"]).args(args).output().expect("tmux runs")
    }
    /// Sends keys (names as `Enter`, or text).
    fn keys(&self, keys: &[&str]) {
        let keys: Vec<String> = keys.iter().map(|k| escape_semicolon(k)).collect();
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend(keys.iter().map(String::as_str));
        assert!(self.run(&args).status.success(), "send-keys {keys:?}");
    }
    /// Types `text` literally.
    fn type_text(&self, text: &str) {
        assert!(self.run(&["send-keys", "-t", &self.session, "-l", &escape_semicolon(text)]).status.success(), "send-keys -l {text}");
    }
    /// Types `text` and presses Enter.
    fn enter(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Enter"]);
    }
    /// Types `text` and presses Tab.
    fn tab(&self, text: &str) {
        self.type_text(text);
        self.keys(&["Tab"]);
    }
    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-J", "-S", "-200", "-t", &self.session]).stdout).into_owned()
    }
    /// Waits until the screen shows `needle` `times` times; panics with the screen otherwise.
    fn wait_for(&self, needle: &str, times: usize) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.matches(needle).count() >= times {
                return screen;
            }
            if start.elapsed() > Duration::from_secs(30) {
                panic!("`{needle}` (x{times}) never showed; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    fn alive(&self) -> bool {
        self.run(&["has-session", "-t", &self.session]).status.success()
    }
}

/// tmux takes an argument's final `;` for its command separator unless escaped.
fn escape_semicolon(arg: &str) -> String {
    match arg.strip_suffix(';') {
        Some(head) => format!("{head}\\;"),
        None => arg.to_string(),
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// `kiln shell` with TPC-H's lineitem and orders (SF 0.01) in a fresh tmux of its own; None
/// (the test skipped) without tmux.
fn shell(test: &str, history: &Path) -> Option<Tmux> {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(std::env::var_os("KILN_REQUIRE_TMUX").is_none(), "KILN_REQUIRE_TMUX is set but tmux is not on PATH");
        eprintln!("SKIPPED {test}: tmux is not installed (apt-get install tmux)");
        return None;
    }
    let data = |t: &str| -> PathBuf { Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/reference/data/tpch/{t}.parquet")) };
    let command = format!(
        "{} shell --history {} --table lineitem={} --table orders={}",
        env!("CARGO_BIN_EXE_kiln"),
        history.display(),
        data("lineitem").display(),
        data("orders").display()
    );
    let t = Tmux { socket: format!("kiln-test-{}-{test}", std::process::id()), session: "shell".into() };
    let started = t.run(&["new-session", "-d", "-s", &t.session, "-x", "150", "-y", "50", &command]);
    assert!(started.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&started.stderr));
    t.wait_for("kiln> ", 1);
    Some(t)
}

#[test]
fn the_shell_in_a_terminal_runs_multi_line_statements_and_survives_ctrl_c() {
    let dir = tempfile::tempdir().expect("dir");
    let history = dir.path().join("history");
    let Some(t) = shell("multi_line", &history) else { return };

    // A statement over two lines: the second line gets the continuation prompt; it runs once
    // the `;` is typed, right-aligned as Spark's show() prints, the row count under it.
    t.enter("SELECT 40 +");
    t.wait_for("    \u{2023} ", 1);
    t.enter("  2 AS answer;");
    let screen = t.wait_for("|    42|", 1);
    assert!(screen.contains("kiln> SELECT 40 +\n    \u{2023}   2 AS answer;\n"), "{screen}");
    assert!(screen.contains("|answer|\n+------+\n|    42|\n+------+\n(1 row)\n"), "{screen}");

    t.enter(".timer on");
    // Tab completes a column name from the registered tables.
    t.tab("SELECT max(l_linen");
    t.enter(") AS m FROM lineitem;");
    let screen = t.wait_for("Run Time: ", 1);
    assert!(screen.contains("|  7|"), "the completed column's max: {screen}");

    // A long query (interpreted, small batches: a 645-million-row join) shows its progress
    // after a second; Ctrl-C cancels it and the shell goes on.
    t.enter("SET spark.sql.codegen.wholeStage=false; SET kiln.batchSize=64;");
    t.wait_for("Run Time: ", 2);
    t.enter("SELECT count(*) FROM lineitem a JOIN lineitem b ON a.l_linenumber = b.l_linenumber;");
    t.wait_for(" scanned | ", 1);
    t.keys(&["C-c"]);
    let screen = t.wait_for("Query cancelled", 1);
    assert!(!screen.contains("645512779"), "the query finished instead: {screen}");
    t.enter("SELECT 'still here' AS s;");
    t.wait_for("|still here|", 1);

    // Ctrl-C at the continuation prompt drops the statement typed so far.
    t.enter("SELECT 'dropped'");
    t.wait_for("    \u{2023} ", 2);
    t.keys(&["C-c"]);
    t.enter("SELECT 'fresh' AS f;");
    let screen = t.wait_for("|fresh|", 1);
    assert!(!screen.contains("|dropped"), "{screen}");

    // Ctrl-D leaves; the history file has the statements.
    t.keys(&["C-d"]);
    let start = Instant::now();
    while t.alive() {
        assert!(start.elapsed() < Duration::from_secs(10), "Ctrl-D did not end the shell: {}", t.screen());
        std::thread::sleep(Duration::from_millis(50));
    }
    let history = std::fs::read_to_string(&history).expect("history written");
    assert!(history.contains("SELECT 40 +") && history.contains("still here"), "{history}");
}

#[test]
fn tab_completes_tables_after_from_and_lists_ambiguous_candidates() {
    let dir = tempfile::tempdir().expect("dir");
    let Some(t) = shell("tab", &dir.path().join("history")) else { return };
    // After FROM a table, not the keyword `order`.
    t.tab("SELECT count(*) AS n FROM ord");
    t.enter(";");
    let screen = t.wait_for("(1 row)", 1);
    assert!(screen.contains("kiln> SELECT count(*) AS n FROM orders;"), "{screen}");
    // Several candidates: one Tab lists them all (the columns of the table the statement names).
    t.tab("SELECT o_order");
    let screen = t.wait_for("o_orderstatus", 1);
    let listed = screen.lines().find(|l| l.contains("o_orderstatus")).expect("the list");
    for c in ["o_orderdate", "o_orderkey", "o_orderpriority", "o_orderstatus"] {
        assert!(listed.contains(c), "{c} not listed: {screen}");
    }
    // The line typed is still there; a column then completes in the statement's scope.
    t.tab("key FROM orders WHERE o_custk");
    t.enter(" = 1 AND o_orderkey < 0;");
    let screen = t.wait_for("(0 rows)", 1);
    assert!(screen.contains("SELECT o_orderkey FROM orders WHERE o_custkey = 1 AND o_orderkey < 0;"), "{screen}");
}

/// The orders whose lines the typed-ahead test's join pairs with every line of the same number:
/// 65 million pairs, about two seconds interpreted (more than the 0.3 s before the next line).
const SLOW_JOIN_ORDERS: usize = 6000;

#[test]
fn lines_typed_ahead_all_run() {
    let dir = tempfile::tempdir().expect("dir");
    let Some(t) = shell("typed_ahead", &dir.path().join("history")) else { return };
    // Three lines reach the shell at once (as typed before the first finishes): each runs.
    t.keys(&["SELECT 1 AS a;", "Enter", "SELECT 2 AS b;", "Enter", "SELECT 3", "Enter", "  AS c;", "Enter"]);
    let screen = t.wait_for("|  3|", 1);
    assert!(screen.contains("|  1|") && screen.contains("|  2|"), "{screen}");
    // And so for a line typed while a query runs (the terminal echoes it under the query, and
    // keeps it): an interpreted join in small batches, a couple of seconds long.
    t.enter("SET spark.sql.codegen.wholeStage=false; SET kiln.batchSize=64;");
    t.enter(&format!("SELECT count(*) AS pairs FROM lineitem a JOIN lineitem b ON a.l_linenumber = b.l_linenumber WHERE a.l_orderkey < {SLOW_JOIN_ORDERS};"));
    std::thread::sleep(Duration::from_millis(300));
    t.enter("SELECT 'next' AS n;");
    let screen = t.wait_for("|next|", 1);
    let (typed, pairs, next) = (screen.find("SELECT 'next' AS n;"), screen.find("|   pairs|"), screen.find("|next|"));
    let before = |a: Option<usize>, b: Option<usize>| a.is_some_and(|a| b.is_some_and(|b| a < b));
    assert!(before(typed, pairs) && before(pairs, next), "typed while the join ran, run after it: {screen}");
}

#[test]
fn dot_commands_describe_tables_by_line_and_name_their_mistakes() {
    let dir = tempfile::tempdir().expect("dir");
    let Some(t) = shell("dot_commands", &dir.path().join("history")) else { return };
    t.enter(".schema orders");
    let screen = t.wait_for(");", 1);
    assert!(screen.contains("CREATE TABLE orders (\n  o_orderkey BIGINT,\n  o_custkey BIGINT,\n"), "{screen}");
    t.enter(".conf nosuch.key");
    t.wait_for("nosuch.key=<undefined>", 1);
    t.enter(".conf spark.sql.shuffle.partition");
    t.wait_for("Did you mean `spark.sql.shuffle.partitions`?", 1);
    t.enter(".tabels");
    let screen = t.wait_for("error: unknown command `.tabels`. Did you mean `.tables`?", 1);
    assert!(!screen.contains("invalid configuration: unknown command"), "{screen}");
}
