//! `kiln shell`: an interactive SQL shell over one session. Statements may span lines and end
//! with `;`; lines starting with `.` are shell commands (`.help`). Ctrl-C cancels the running
//! query (the shell goes on), Ctrl-D exits. With standard input not a terminal, the input is
//! read as a script of the same statements and commands.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arrow::record_batch::RecordBatch;
use kiln::exec::control::QueryControl;
use kiln::{DataFrame, ExplainMode, KilnError, Session};
use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Editor, Helper};

use super::progress::ProgressLine;
use super::{write_result, Format};

/// The query Ctrl-C cancels: the one running now, if any.
static RUNNING: Mutex<Option<Arc<QueryControl>>> = Mutex::new(None);

/// Runs `df` with a progress line on stderr (when it runs over a second); while it runs,
/// Ctrl-C in the shell cancels it (`control` given: the shell's).
pub fn run_with_progress(df: &DataFrame, on_cancel: Option<&Mutex<Option<Arc<QueryControl>>>>) -> Result<Vec<RecordBatch>, KilnError> {
    let control = QueryControl::for_plan(df.physical_plan());
    if let Some(slot) = on_cancel {
        *slot.lock().map_err(|_| KilnError::internal("the shell's query slot is poisoned"))? = Some(control.clone());
    }
    let result = {
        let _line = ProgressLine::start(&control);
        df.collect_with_control(&control)
    };
    if let Some(slot) = on_cancel {
        if let Ok(mut s) = slot.lock() {
            *s = None;
        }
    }
    result
}

/// `kiln sql`'s Ctrl-C: cancels the running query, which then ends with "query cancelled";
/// with no query running (planning, printing), or pressed a second time, it ends the process
/// as a shell's default handler would.
pub fn cancel_on_ctrl_c() -> Result<(), KilnError> {
    static PRESSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    ctrlc::set_handler(|| {
        let running = RUNNING.lock().ok().and_then(|r| r.clone());
        match running {
            Some(c) if !PRESSED.swap(true, std::sync::atomic::Ordering::SeqCst) => c.cancel(),
            _ => std::process::exit(130),
        }
    })
    .map_err(|e| KilnError::internal(format!("cannot catch Ctrl-C: {e}")))
}

/// Runs `df` as [`run_with_progress`], the query Ctrl-C cancels while it runs.
pub fn run_cancellable(df: &DataFrame) -> Result<Vec<RecordBatch>, KilnError> {
    run_with_progress(df, Some(&RUNNING))
}

/// `.timer on`'s line, as DuckDB prints it.
pub fn run_time(elapsed: Duration) -> String {
    format!("Run Time: {:.3} s", elapsed.as_secs_f64())
}

const HELP: &str = "\
.help                 this text
.tables               the session's tables
.schema [TABLE]       columns and types of a table (or of every table)
.mode table|csv|jsonl how results print
.timer on|off         print each statement's run time
.explain [MODE|off]   print the plan of every query first (simple, extended, codegen, cost, formatted)
.conf KEY [VALUE]     show or change a setting (as SET KEY=VALUE)
.read FILE            run the statements of a file
.quit                 leave (or Ctrl-D)
Statements end with `;` and may span lines. Ctrl-C cancels a running query.";

/// SQL keywords offered by tab completion.
const KEYWORDS: &[&str] = &[
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "SEMI", "ANTI",
    "CROSS", "ON", "USING", "AS", "AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST",
    "DISTINCT", "UNION", "ALL", "WITH", "EXISTS", "ASC", "DESC", "NULLS", "FIRST", "LAST", "DATE", "INTERVAL", "COUNT", "SUM", "AVG", "MIN",
    "MAX", "EXPLAIN", "EXTENDED", "CODEGEN", "COST", "FORMATTED", "SET", "CREATE", "TABLE", "TEMPORARY", "VIEW", "INSERT", "INTO",
    "OVERWRITE", "VALUES", "DROP", "PARQUET", "PARTITIONED", "LOCATION", "ROLLUP", "CUBE", "GROUPING", "SETS",
];

const COMMANDS: &[&str] = &[".help", ".tables", ".schema", ".mode", ".timer", ".explain", ".conf", ".read", ".quit", ".exit"];

/// The shell's state: the session and how results print.
pub struct Shell {
    session: Session,
    format: Format,
    timer: bool,
    explain: Option<ExplainMode>,
}

/// What the caller does after an input.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

impl Shell {
    pub fn new(session: Session, format: Format) -> Shell {
        Shell { session, format, timer: false, explain: None }
    }

    /// Runs one complete input (a `.command` or `;`-terminated SQL), writing results to `out`.
    pub fn execute(&mut self, input: &str, out: &mut dyn Write) -> Result<Flow, KilnError> {
        let input = input.trim();
        if input.is_empty() {
            return Ok(Flow::Continue);
        }
        if input.starts_with('.') {
            return self.command(input, out);
        }
        let start = Instant::now();
        for df in self.session.sql_script(input)? {
            for w in df.warnings() {
                eprintln!("warning: {w}");
            }
            if let Some(mode) = self.explain {
                writeln!(out, "{}", df.explain_string(mode)?).map_err(stdout_error)?;
            }
            let batches = run_with_progress(&df, Some(&RUNNING))?;
            write_result(out, self.format, &df, &batches)?;
        }
        if self.timer {
            writeln!(out, "{}", run_time(start.elapsed())).map_err(stdout_error)?;
        }
        Ok(Flow::Continue)
    }

    fn command(&mut self, line: &str, out: &mut dyn Write) -> Result<Flow, KilnError> {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default();
        let args: Vec<&str> = words.collect();
        let usage = |u: &str| Err(KilnError::Config(format!("usage: {u}")));
        match (name, args.as_slice()) {
            (".quit" | ".exit", _) => return Ok(Flow::Quit),
            (".help", _) => writeln!(out, "{HELP}").map_err(stdout_error)?,
            (".tables", _) => {
                let mut names = self.session.table_names()?;
                names.sort();
                for n in names {
                    writeln!(out, "{n}").map_err(stdout_error)?;
                }
            }
            (".schema", rest) => {
                let names = match rest {
                    [] => {
                        let mut n = self.session.table_names()?;
                        n.sort();
                        n
                    }
                    [t] => vec![t.to_string()],
                    _ => return usage(".schema [TABLE]"),
                };
                for n in names {
                    let schema = self.session.table(&n)?.schema();
                    let cols: Vec<String> = schema.fields().iter().map(|f| format!("{} {}", f.name(), kiln::types::spark_type_name(f.data_type()))).collect();
                    writeln!(out, "{n} ({})", cols.join(", ")).map_err(stdout_error)?;
                }
            }
            (".mode", [m]) => {
                self.format = match m.to_ascii_lowercase().as_str() {
                    "table" => Format::Table,
                    "csv" => Format::Csv,
                    "jsonl" | "json" => Format::Jsonl,
                    _ => return usage(".mode table|csv|jsonl"),
                }
            }
            (".mode", []) => writeln!(out, "{}", format!("{:?}", self.format).to_lowercase()).map_err(stdout_error)?,
            (".timer", [v]) => {
                self.timer = match v.to_ascii_lowercase().as_str() {
                    "on" => true,
                    "off" => false,
                    _ => return usage(".timer on|off"),
                }
            }
            (".explain", []) => self.explain = if self.explain.is_some() { None } else { Some(ExplainMode::Simple) },
            (".explain", [m]) => {
                self.explain = match m.to_ascii_lowercase().as_str() {
                    "off" => None,
                    "on" | "simple" => Some(ExplainMode::Simple),
                    "extended" => Some(ExplainMode::Extended),
                    "codegen" => Some(ExplainMode::Codegen),
                    "cost" => Some(ExplainMode::Cost),
                    "formatted" => Some(ExplainMode::Formatted),
                    _ => return usage(".explain [simple|extended|codegen|cost|formatted|off]"),
                }
            }
            (".conf", [k]) => {
                let value = self.session.config()?.get(k);
                match value {
                    Some(v) => writeln!(out, "{k}={v}").map_err(stdout_error)?,
                    // set's error names the key and suggests the closest one.
                    None => self.session.config()?.set(k, "")?,
                }
            }
            (".conf", [k, v @ ..]) if !v.is_empty() => {
                self.session.set_conf(k.trim_end_matches('='), &v.join(" "))?;
            }
            (".conf", _) => return usage(".conf KEY [VALUE]"),
            (".read", [file]) => {
                let text = std::fs::read_to_string(file).map_err(|e| KilnError::io(file.to_string(), e))?;
                for input in split_inputs(&text) {
                    if self.execute(&input, out)? == Flow::Quit {
                        return Ok(Flow::Quit);
                    }
                }
            }
            (".read", _) => return usage(".read FILE"),
            _ => {
                let hint = kiln::error::closest_match(name, COMMANDS.iter().copied()).map(|c| format!(" Did you mean `{c}`?")).unwrap_or_default();
                return Err(KilnError::Config(format!("unknown command `{name}`.{hint} (.help lists them)")));
            }
        }
        Ok(Flow::Continue)
    }

    /// Words tab completion offers for `prefix`: dot commands at the start of a line, else
    /// keywords, table names and column names.
    pub fn completions(&self, line_start: bool, prefix: &str) -> Vec<String> {
        if line_start && prefix.starts_with('.') {
            return COMMANDS.iter().filter(|c| c.starts_with(prefix)).map(|c| c.to_string()).collect();
        }
        if prefix.is_empty() {
            return vec![];
        }
        let lower = prefix.to_lowercase();
        let upper_case = prefix.chars().all(|c| !c.is_lowercase());
        let mut names: Vec<String> = vec![];
        let tables = self.session.table_names().unwrap_or_default();
        for t in &tables {
            names.push(t.clone());
            if let Ok(df) = self.session.table(t) {
                names.extend(df.schema().fields().iter().map(|f| f.name().clone()));
            }
        }
        let mut out: Vec<String> = KEYWORDS
            .iter()
            .filter(|k| k.to_lowercase().starts_with(&lower))
            .map(|k| if upper_case { k.to_string() } else { k.to_lowercase() })
            .chain(names.into_iter().filter(|n| n.to_lowercase().starts_with(&lower)))
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

fn stdout_error(e: std::io::Error) -> KilnError {
    KilnError::io("stdout", e)
}

/// Whether `buffer` is a whole input: a `.command` line, or SQL whose last token outside
/// strings and comments is `;`.
pub fn input_complete(buffer: &str) -> bool {
    let t = buffer.trim();
    if t.is_empty() || t.starts_with('.') {
        return true;
    }
    ends_statement(t)
}

/// True when the SQL text ends with a `;` outside quotes and comments.
fn ends_statement(sql: &str) -> bool {
    let b = sql.as_bytes();
    let (mut i, mut last_is_semicolon) = (0, false);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                last_is_semicolon = false;
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b';' => last_is_semicolon = true,
            c if c.is_ascii_whitespace() => {}
            _ => last_is_semicolon = false,
        }
        i += 1;
    }
    last_is_semicolon
}

/// A script cut into inputs: each `.command` line alone, SQL up to each statement's final `;`
/// (a trailing statement without `;` is an input too).
pub fn split_inputs(text: &str) -> Vec<String> {
    let mut inputs = vec![];
    let mut buffer = String::new();
    for line in text.lines() {
        if buffer.trim().is_empty() && line.trim_start().starts_with('.') {
            inputs.push(line.trim().to_string());
            buffer.clear();
            continue;
        }
        buffer.push_str(line);
        buffer.push('\n');
        if ends_statement(&buffer) {
            inputs.push(std::mem::take(&mut buffer));
        }
    }
    if !buffer.trim().is_empty() && !only_comments(&buffer) {
        inputs.push(buffer);
    }
    inputs
}

/// True when `sql` holds nothing but comments and whitespace.
fn only_comments(sql: &str) -> bool {
    sql.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with("--")
    })
}

/// Runs `input`, printing its error (or "Query cancelled") to stderr; false to quit.
fn run_input(shell: &mut Shell, input: &str) -> bool {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let flow = shell.execute(input, &mut out);
    let _ = out.flush();
    match flow {
        Ok(Flow::Quit) => false,
        Ok(Flow::Continue) => true,
        Err(KilnError::Cancelled) => {
            eprintln!("Query cancelled");
            true
        }
        Err(e) => {
            eprintln!("error: {e}");
            true
        }
    }
}

/// The line editor's helper: multi-line input until `;`, completion from the session.
struct ShellHelper {
    shell: Arc<Mutex<Shell>>,
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &rustyline::Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).map_or(0, |i| i + 1);
        let prefix = &before[start..];
        let line_start = before[..start].trim().is_empty();
        let words = match self.shell.lock() {
            Ok(shell) => shell.completions(line_start, prefix),
            Err(_) => vec![],
        };
        Ok((start, words.into_iter().map(|w| Pair { display: w.clone(), replacement: w }).collect()))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if input_complete(ctx.input()) { ValidationResult::Valid(None) } else { ValidationResult::Incomplete })
    }
}

impl Helper for ShellHelper {}

fn default_history() -> Option<PathBuf> {
    std::env::var_os("HOME").map(|h| Path::new(&h).join(".kiln_history"))
}

/// The shell: interactive on a terminal, else a script read from standard input.
pub fn run(session: Session, format: Format, history: Option<PathBuf>) -> Result<(), KilnError> {
    let shell = Arc::new(Mutex::new(Shell::new(session, format)));
    if !std::io::stdin().is_terminal() {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map_err(|e| KilnError::io("stdin", e))?;
        for input in split_inputs(&text) {
            let keep_going = match shell.lock() {
                Ok(mut s) => run_input(&mut s, &input),
                Err(_) => false,
            };
            if !keep_going {
                break;
            }
        }
        return Ok(());
    }
    // Ctrl-C while a query runs cancels it; at the prompt the editor reads it as a key.
    ctrlc::set_handler(|| {
        if let Ok(Some(c)) = RUNNING.lock().as_deref() {
            c.cancel();
        }
    })
    .map_err(|e| KilnError::internal(format!("cannot catch Ctrl-C: {e}")))?;
    let config = rustyline::Config::builder().auto_add_history(false).max_history_size(10_000).map_err(|e| KilnError::internal(e.to_string()))?.build();
    let mut editor: Editor<ShellHelper, rustyline::history::FileHistory> = Editor::with_config(config).map_err(|e| KilnError::internal(format!("line editor: {e}")))?;
    editor.set_helper(Some(ShellHelper { shell: shell.clone() }));
    let history = history.or_else(default_history);
    if let Some(h) = &history {
        // A first run has no history file yet.
        let _ = editor.load_history(h);
    }
    eprintln!("kiln shell: statements end with `;`, .help for commands, Ctrl-D to leave");
    loop {
        match editor.readline("kiln> ") {
            Ok(input) => {
                if input.trim().is_empty() {
                    continue;
                }
                let _ = editor.add_history_entry(input.trim());
                if let Some(h) = &history {
                    let _ = editor.save_history(h);
                }
                let keep_going = match shell.lock() {
                    Ok(mut s) => run_input(&mut s, &input),
                    Err(_) => false,
                };
                if !keep_going {
                    break;
                }
            }
            // Ctrl-C at the prompt drops the line being typed.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(KilnError::internal(format!("line editor: {e}"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_end_at_a_semicolon_outside_strings_and_comments() {
        assert!(input_complete("SELECT 1;"));
        assert!(input_complete("SELECT 1;  \n"));
        assert!(!input_complete("SELECT 1"));
        assert!(!input_complete("SELECT ';'"));
        assert!(!input_complete("SELECT 1 -- done;"));
        assert!(input_complete("SELECT 1; -- done"));
        assert!(!input_complete("SELECT 1 /* ; */"));
        assert!(input_complete(".timer on"));
        assert!(input_complete(""));
    }

    #[test]
    fn scripts_split_into_commands_and_statements() {
        let inputs = split_inputs("-- a comment\nSELECT 1\n  + 1;\n.timer on\nSELECT ';' AS s; SELECT 2;\nSELECT 3");
        assert_eq!(inputs, vec!["-- a comment\nSELECT 1\n  + 1;\n", ".timer on", "SELECT ';' AS s; SELECT 2;\n", "SELECT 3\n"]);
        assert_eq!(split_inputs("SELECT 1;\n-- trailing comment\n"), vec!["SELECT 1;\n"]);
    }

    fn run(shell: &mut Shell, input: &str) -> Result<String, KilnError> {
        let mut out = vec![];
        shell.execute(input, &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn dot_commands_change_the_output_and_describe_tables() {
        let mut shell = Shell::new(Session::new(), Format::Table);
        run(&mut shell, "CREATE TABLE t AS SELECT * FROM VALUES (1, 'x'), (2, 'y') AS v(id, name);").expect("creates");
        assert_eq!(run(&mut shell, ".tables").expect("lists"), "t\n");
        assert_eq!(run(&mut shell, ".schema t").expect("schema"), "t (id int, name string)\n");
        run(&mut shell, ".mode csv").expect("mode");
        assert_eq!(run(&mut shell, "SELECT id FROM t\nORDER BY id;").expect("runs"), "id\n1\n2\n");
        run(&mut shell, ".timer on").expect("timer");
        let timed = run(&mut shell, "SELECT 1 AS one;").expect("runs");
        assert!(timed.starts_with("one\n1\nRun Time: ") && timed.ends_with(" s\n"), "{timed}");
        run(&mut shell, ".timer off").expect("timer");
        run(&mut shell, ".explain").expect("explain");
        assert!(run(&mut shell, "SELECT id FROM t;").expect("runs").starts_with("== Physical Plan =="));
        run(&mut shell, ".explain off").expect("explain");
        run(&mut shell, ".conf spark.sql.shuffle.partitions 3").expect("sets");
        assert_eq!(run(&mut shell, ".conf spark.sql.shuffle.partitions").expect("gets"), "spark.sql.shuffle.partitions=3\n");
        let dir = tempfile::tempdir().expect("dir");
        let script = dir.path().join("s.sql");
        std::fs::write(&script, ".mode jsonl\nSELECT name FROM t\n WHERE id = 2;\n").expect("writes");
        assert_eq!(run(&mut shell, &format!(".read {}", script.display())).expect("reads"), "{\"name\":\"y\"}\n");
        let err = run(&mut shell, ".tabels").expect_err("unknown").to_string();
        assert!(err.contains("Did you mean `.tables`?"), "{err}");
        assert_eq!(shell.execute(".quit", &mut vec![]).expect("quits"), Flow::Quit);
    }

    #[test]
    fn completion_offers_keywords_tables_and_columns() {
        let mut shell = Shell::new(Session::new(), Format::Table);
        run(&mut shell, "CREATE TABLE orders AS SELECT * FROM VALUES (1, 2.5) AS v(order_id, amount);").expect("creates");
        assert_eq!(shell.completions(false, "SEL"), vec!["SELECT"]);
        assert_eq!(shell.completions(false, "sel"), vec!["select"]);
        assert_eq!(shell.completions(false, "ord"), vec!["order", "order_id", "orders"]);
        assert_eq!(shell.completions(false, "am"), vec!["amount"]);
        assert_eq!(shell.completions(true, ".ti"), vec![".timer"]);
    }
}
