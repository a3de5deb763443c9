//! `kiln shell` in a real terminal: tmux types a multi-line statement, `.timer on`, a tab
//! completion, Ctrl-C during a long query (the progress line shows first) and Ctrl-D, and
//! reads the screen back. CI installs tmux (`.ci/run`) and sets KILN_REQUIRE_TMUX; without tmux
//! and that variable the test says it is skipped.

use std::path::Path;
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
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        assert!(self.run(&args).status.success(), "send-keys {keys:?}");
    }
    /// Types `text` literally.
    fn type_text(&self, text: &str) {
        // tmux takes an argument's final `;` for its command separator unless escaped.
        let arg = match text.strip_suffix(';') {
            Some(head) => format!("{head}\\;"),
            None => text.to_string(),
        };
        assert!(self.run(&["send-keys", "-t", &self.session, "-l", &arg]).status.success(), "send-keys -l {text}");
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

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

#[test]
fn the_shell_in_a_terminal_runs_multi_line_statements_and_survives_ctrl_c() {
    if Command::new("tmux").arg("-V").output().is_err() {
        assert!(std::env::var_os("KILN_REQUIRE_TMUX").is_none(), "KILN_REQUIRE_TMUX is set but tmux is not on PATH");
        eprintln!("SKIPPED the_shell_in_a_terminal: tmux is not installed (apt-get install tmux)");
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let history = dir.path().join("history");
    let lineitem = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/tpch/lineitem.parquet");
    let command = format!("{} shell --history {} --table lineitem={}", env!("CARGO_BIN_EXE_kiln"), history.display(), lineitem.display());
    let t = Tmux { socket: format!("kiln-test-{}", std::process::id()), session: "shell".into() };
    let started = t.run(&["new-session", "-d", "-s", &t.session, "-x", "150", "-y", "50", &command]);
    assert!(started.status.success(), "tmux new-session: {}", String::from_utf8_lossy(&started.stderr));
    t.wait_for("kiln> ", 1);

    // A statement over two lines runs once the `;` is typed.
    t.type_text("SELECT 40 +");
    t.keys(&["Enter"]);
    t.type_text("  2 AS answer;");
    t.keys(&["Enter"]);
    let screen = t.wait_for("|42    |", 1);
    assert!(screen.contains("|answer|"), "{screen}");

    t.type_text(".timer on");
    t.keys(&["Enter"]);
    // Tab completes a column name from the registered table.
    t.type_text("SELECT max(l_linen");
    t.keys(&["Tab"]);
    t.type_text(") AS m FROM lineitem;");
    t.keys(&["Enter"]);
    let screen = t.wait_for("Run Time: ", 1);
    assert!(screen.contains("|7  |"), "the completed column's max: {screen}");

    // A long query (interpreted, small batches: a 645-million-row join) shows its progress
    // after a second; Ctrl-C cancels it and the shell goes on.
    t.type_text("SET spark.sql.codegen.wholeStage=false; SET kiln.batchSize=64;");
    t.keys(&["Enter"]);
    t.wait_for("Run Time: ", 2);
    t.type_text("SELECT count(*) FROM lineitem a JOIN lineitem b ON a.l_linenumber = b.l_linenumber;");
    t.keys(&["Enter"]);
    t.wait_for(" scanned | ", 1);
    t.keys(&["C-c"]);
    let screen = t.wait_for("Query cancelled", 1);
    assert!(!screen.contains("645512779"), "the query finished instead: {screen}");
    t.type_text("SELECT 'still here' AS s;");
    t.keys(&["Enter"]);
    t.wait_for("|still here|", 1);

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
