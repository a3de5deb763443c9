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
use rustyline::validate::Validator;
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
.schema [TABLE]       a table's CREATE TABLE, one column per line (or every table's)
.mode table|csv|jsonl how results print
.timer on|off         print each statement's run time
.explain [MODE|off]   print the plan of every query first (simple, extended, codegen, cost, formatted)
.conf KEY [VALUE]     show or change a setting (as SET KEY / SET KEY=VALUE)
.read FILE            run the statements of a file
.quit                 leave (or Ctrl-D)
Statements end with `;` and may span lines. Tab completes tables, columns and keywords.
Ctrl-C cancels a running query.";

/// SQL keywords offered by tab completion.
const KEYWORDS: &[&str] = &[
    "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "SEMI", "ANTI",
    "CROSS", "ON", "USING", "AS", "AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST",
    "DISTINCT", "UNION", "ALL", "WITH", "EXISTS", "ASC", "DESC", "NULLS", "FIRST", "LAST", "DATE", "INTERVAL", "COUNT", "SUM", "AVG", "MIN",
    "MAX", "EXPLAIN", "EXTENDED", "CODEGEN", "COST", "FORMATTED", "SET", "CREATE", "TABLE", "TEMPORARY", "VIEW", "INSERT", "INTO",
    "OVERWRITE", "VALUES", "DROP", "PARQUET", "PARTITIONED", "LOCATION", "ROLLUP", "CUBE", "GROUPING", "SETS", "NATURAL", "LATERAL", "WINDOW",
];

const COMMANDS: &[&str] = &[".help", ".tables", ".schema", ".mode", ".timer", ".explain", ".conf", ".read", ".quit", ".exit"];

/// The shell's state: the session and how results print.
pub struct Shell {
    session: Session,
    format: Format,
    timer: bool,
    explain: Option<ExplainMode>,
}

/// What went wrong with an input: a shell command misused (said as it is, not as a setting's
/// error), or the engine's error.
#[derive(Debug)]
pub enum ShellError {
    Command(String),
    Kiln(KilnError),
}

impl From<KilnError> for ShellError {
    fn from(e: KilnError) -> Self {
        ShellError::Kiln(e)
    }
}

impl std::fmt::Display for ShellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShellError::Command(m) => f.write_str(m),
            ShellError::Kiln(e) => e.fmt(f),
        }
    }
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
    pub fn execute(&mut self, input: &str, out: &mut dyn Write) -> Result<Flow, ShellError> {
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
            if self.format == Format::Table && !df.schema().fields().is_empty() {
                writeln!(out, "{}", row_count(batches.iter().map(|b| b.num_rows()).sum())).map_err(stdout_error)?;
            }
        }
        if self.timer {
            writeln!(out, "{}", run_time(start.elapsed())).map_err(stdout_error)?;
        }
        Ok(Flow::Continue)
    }

    fn command(&mut self, line: &str, out: &mut dyn Write) -> Result<Flow, ShellError> {
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default();
        let args: Vec<&str> = words.collect();
        let usage = |u: &str| Err(ShellError::Command(format!("usage: {u}")));
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
                    write!(out, "{}", create_table(&n, &schema)).map_err(stdout_error)?;
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
            (".conf", [kv]) if kv.contains('=') => {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                self.session.set_conf(k, v)?;
            }
            (".conf", [k]) => writeln!(out, "{k}={}", self.session.conf_value(k)?).map_err(stdout_error)?,
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
                return Err(ShellError::Command(format!("unknown command `{name}`.{hint} (.help lists them)")));
            }
        }
        Ok(Flow::Continue)
    }

    /// Tab completion at byte `pos` of `text` (the statement typed so far, earlier lines
    /// included): where the word being completed starts, and its candidates. Dot commands at the
    /// start of an input; table names after FROM, JOIN, INTO, TABLE (and `,` in a FROM list);
    /// `t.` and an alias's `a.` the columns of that table; elsewhere keywords and the columns of
    /// the tables the statement names (of every table while it names none).
    pub fn complete(&self, text: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &text[..pos];
        let start = before.char_indices().rev().find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '.')).map_or(0, |(i, c)| i + c.len_utf8());
        let prefix = &before[start..];
        if before[..start].trim().is_empty() && prefix.starts_with('.') {
            return (start, COMMANDS.iter().filter(|c| c.starts_with(prefix)).map(|c| c.to_string()).collect());
        }
        let known = self.session.table_names().unwrap_or_default();
        let columns = |table: &str| -> Vec<String> {
            self.session.table(table).map(|df| df.schema().fields().iter().map(|f| f.name().clone()).collect()).unwrap_or_default()
        };
        let lower = prefix.to_lowercase();
        let matching = |names: Vec<String>| -> Vec<String> {
            let mut out: Vec<String> = names.into_iter().filter(|n| n.to_lowercase().starts_with(&lower)).collect();
            out.sort();
            out.dedup();
            out
        };
        let scope = tables_named(&words(text), &known);
        if let Some((qualifier, _)) = prefix.rsplit_once('.') {
            let q = qualifier.to_lowercase();
            let table = scope.iter().find(|(t, alias)| alias.as_deref().map(str::to_lowercase) == Some(q.clone()) || t.to_lowercase() == q).map(|(t, _)| t.clone());
            let table = table.or_else(|| known.iter().find(|t| t.to_lowercase() == q).cloned());
            return (start, table.map(|t| matching(columns(&t).into_iter().map(|c| format!("{qualifier}.{c}")).collect())).unwrap_or_default());
        }
        if expects_table(&words(&before[..start])) {
            return (start, matching(known));
        }
        if prefix.is_empty() {
            return (start, vec![]);
        }
        let in_scope: Vec<String> = if scope.is_empty() { known.clone() } else { scope.into_iter().map(|(t, _)| t).collect() };
        let upper_case = prefix.chars().all(|c| !c.is_lowercase());
        let keywords = KEYWORDS.iter().map(|k| if upper_case { k.to_string() } else { k.to_lowercase() });
        (start, matching(keywords.chain(in_scope.iter().flat_map(|t| columns(t))).collect()))
    }
}

/// The words of SQL text as completion reads them: names and keywords (backquotes dropped), and
/// `,` `(` `)` `;` each a word of its own; string literals and comments left out.
fn words(sql: &str) -> Vec<String> {
    let mut out = vec![];
    let mut chars = sql.chars().peekable();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(std::mem::take(word));
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                flush(&mut word, &mut out);
                while let Some(d) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == c {
                        break;
                    }
                }
            }
            '`' => {
                for d in chars.by_ref() {
                    if d == '`' {
                        break;
                    }
                    word.push(d);
                }
            }
            '-' if chars.peek() == Some(&'-') => {
                flush(&mut word, &mut out);
                for d in chars.by_ref() {
                    if d == '\n' {
                        break;
                    }
                }
            }
            ',' | '(' | ')' | ';' => {
                flush(&mut word, &mut out);
                out.push(c.to_string());
            }
            c if c.is_alphanumeric() || c == '_' || c == '.' => word.push(c),
            _ => flush(&mut word, &mut out),
        }
    }
    flush(&mut word, &mut out);
    out
}

/// Keywords after which a table name comes.
const BEFORE_TABLE: &[&str] = &["from", "join", "into", "table", "update"];
/// Keywords that start a clause: the last one before a `,` says whether a table list goes on.
const CLAUSES: &[&str] = &["select", "from", "where", "group", "having", "order", "limit", "on", "using", "join", "values", "by", "window"];

/// True when the next word is a table name: right after FROM, JOIN, .. or after `,` in a FROM list.
fn expects_table(before: &[String]) -> bool {
    let lower = |w: &String| w.to_lowercase();
    match before.last().map(lower) {
        Some(w) if BEFORE_TABLE.contains(&w.as_str()) => true,
        Some(w) if w == "," => before.iter().rev().map(lower).find(|w| CLAUSES.contains(&w.as_str())).is_some_and(|w| w == "from"),
        _ => false,
    }
}

/// The known tables a statement's words name after FROM / JOIN (and `,` in a FROM list), each
/// with its alias if it has one.
fn tables_named(words: &[String], known: &[String]) -> Vec<(String, Option<String>)> {
    let mut out = vec![];
    for (i, w) in words.iter().enumerate() {
        if !expects_table(&words[..i]) {
            continue;
        }
        let Some(table) = known.iter().find(|t| t.eq_ignore_ascii_case(w)) else { continue };
        let at = if words.get(i + 1).is_some_and(|n| n.eq_ignore_ascii_case("as")) { i + 2 } else { i + 1 };
        let alias = words.get(at).filter(|a| a.starts_with(|c: char| c.is_alphabetic() || c == '_') && !is_keyword(a)).cloned();
        out.push((table.clone(), alias));
    }
    out
}

fn is_keyword(word: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(word))
}

fn stdout_error(e: std::io::Error) -> KilnError {
    KilnError::io("stdout", e)
}

/// The line under a table result: how many rows it has.
fn row_count(rows: usize) -> String {
    format!("({rows} {})", if rows == 1 { "row" } else { "rows" })
}

/// `.schema`'s text of a table: a CREATE TABLE statement, one column per line, types as Spark's
/// DDL writes them.
fn create_table(name: &str, schema: &arrow::datatypes::Schema) -> String {
    let quote = |n: &str| {
        let plain = n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if plain { n.to_string() } else { format!("`{}`", n.replace('`', "``")) }
    };
    let columns: Vec<String> = schema.fields().iter().map(|f| format!("  {} {}", quote(f.name()), kiln::types::sql_type_name(f.data_type()))).collect();
    format!("CREATE TABLE {} (\n{}\n);\n", quote(name), columns.join(",\n"))
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
        Err(ShellError::Kiln(KilnError::Cancelled)) => {
            eprintln!("Query cancelled");
            true
        }
        Err(e) => {
            eprintln!("error: {e}");
            true
        }
    }
}

/// The prompt of a new input.
const PROMPT: &str = "kiln> ";
/// The prompt of a statement's next line, as wide as [`PROMPT`] (DuckDB's `‣`).
const CONTINUATION: &str = "    \u{2023} ";

/// The line editor's helper: completion from the session, in the statement typed so far.
struct ShellHelper {
    shell: Arc<Mutex<Shell>>,
    /// The statement's earlier lines (empty at a new input).
    pending: String,
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &rustyline::Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        let text = format!("{}{line}", self.pending);
        let (start, words) = match self.shell.lock() {
            Ok(shell) => shell.complete(&text, self.pending.len() + pos),
            Err(_) => (0, vec![]),
        };
        let start = start.saturating_sub(self.pending.len());
        Ok((start, words.into_iter().map(|w| Pair { display: w.clone(), replacement: w }).collect()))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

impl Validator for ShellHelper {}

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
    let config = rustyline::Config::builder()
        .auto_add_history(false)
        .max_history_size(10_000)
        .map_err(|e| KilnError::internal(e.to_string()))?
        // Tab completes what all candidates share and lists them (as bash does), rather than
        // cycling through them.
        .completion_type(rustyline::CompletionType::List)
        .completion_show_all_if_ambiguous(true)
        .build();
    let mut editor: Editor<ShellHelper, rustyline::history::FileHistory> = Editor::with_config(config).map_err(|e| KilnError::internal(format!("line editor: {e}")))?;
    editor.set_helper(Some(ShellHelper { shell: shell.clone(), pending: String::new() }));
    let history = history.or_else(default_history);
    if let Some(h) = &history {
        // A first run has no history file yet.
        let _ = editor.load_history(h);
    }
    eprintln!("kiln shell: statements end with `;`, .help for commands, Ctrl-D to leave");
    // One line at a time, so a statement's later lines get the continuation prompt. Lines typed
    // while a query runs wait in the terminal (and in the editor's buffer, kept across lines).
    let mut pending = String::new();
    loop {
        if let Some(h) = editor.helper_mut() {
            h.pending.clone_from(&pending);
        }
        match editor.readline(if pending.is_empty() { PROMPT } else { CONTINUATION }) {
            Ok(line) => {
                if pending.is_empty() && line.trim().is_empty() {
                    continue;
                }
                pending.push_str(&line);
                pending.push('\n');
                if !input_complete(&pending) {
                    continue;
                }
                let input = std::mem::take(&mut pending);
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
            // Ctrl-C at a prompt drops the statement being typed.
            Err(ReadlineError::Interrupted) => pending.clear(),
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

    fn run(shell: &mut Shell, input: &str) -> Result<String, ShellError> {
        let mut out = vec![];
        shell.execute(input, &mut out)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    #[test]
    fn dot_commands_change_the_output_and_describe_tables() {
        let mut shell = Shell::new(Session::new(), Format::Table);
        run(&mut shell, "CREATE TABLE t AS SELECT * FROM VALUES (1, 'x'), (2, 'y') AS v(id, name);").expect("creates");
        assert_eq!(run(&mut shell, ".tables").expect("lists"), "t\n");
        assert_eq!(run(&mut shell, ".schema t").expect("schema"), "CREATE TABLE t (\n  id INT,\n  name STRING\n);\n");
        let table = run(&mut shell, "SELECT * FROM t ORDER BY id;").expect("runs");
        assert_eq!(table, "+---+----+\n| id|name|\n+---+----+\n|  1|   x|\n|  2|   y|\n+---+----+\n(2 rows)\n");
        run(&mut shell, ".mode csv").expect("mode");
        assert_eq!(run(&mut shell, "SELECT id FROM t\nORDER BY id;").expect("runs"), "id\n1\n2\n");
        run(&mut shell, ".timer on").expect("timer");
        let timed = run(&mut shell, "SELECT 1 AS one;").expect("runs");
        assert!(timed.starts_with("one\n1\nRun Time: ") && timed.ends_with(" s\n"), "{timed}");
        run(&mut shell, ".timer off").expect("timer");
        run(&mut shell, ".explain").expect("explain");
        assert!(run(&mut shell, "SELECT id FROM t;").expect("runs").starts_with("== Physical Plan =="));
        run(&mut shell, ".explain off").expect("explain");
        run(&mut shell, ".conf spark.sql.shuffle.partitions=4").expect("sets");
        assert_eq!(run(&mut shell, ".conf spark.sql.shuffle.partitions").expect("gets"), "spark.sql.shuffle.partitions=4\n");
        run(&mut shell, ".conf spark.sql.shuffle.partitions 3").expect("sets");
        assert_eq!(run(&mut shell, ".conf spark.sql.shuffle.partitions").expect("gets"), "spark.sql.shuffle.partitions=3\n");
        let dir = tempfile::tempdir().expect("dir");
        let script = dir.path().join("s.sql");
        std::fs::write(&script, ".mode jsonl\nSELECT name FROM t\n WHERE id = 2;\n").expect("writes");
        assert_eq!(run(&mut shell, &format!(".read {}", script.display())).expect("reads"), "{\"name\":\"y\"}\n");
        let err = run(&mut shell, ".tabels").expect_err("unknown").to_string();
        assert!(err.contains("Did you mean `.tables`?") && !err.contains("configuration"), "{err}");
        let err = run(&mut shell, ".mode wide").expect_err("bad mode").to_string();
        assert_eq!(err, "usage: .mode table|csv|jsonl");
        // A key of the user's own never set reads as Spark's `SET key` prints it; a misspelt
        // Spark key names the closest one.
        assert_eq!(run(&mut shell, ".conf nosuch.key").expect("gets"), "nosuch.key=<undefined>\n");
        let err = run(&mut shell, ".conf spark.sql.shuffle.partition").expect_err("unknown").to_string();
        assert!(err.contains("Did you mean `spark.sql.shuffle.partitions`?"), "{err}");
        assert_eq!(shell.execute(".quit", &mut vec![]).expect("quits"), Flow::Quit);
    }

    #[test]
    fn completion_offers_tables_after_from_and_the_columns_in_scope() {
        let mut shell = Shell::new(Session::new(), Format::Table);
        run(&mut shell, "CREATE TABLE orders AS SELECT * FROM VALUES (1, 2.5) AS v(order_id, amount);").expect("creates");
        run(&mut shell, "CREATE TABLE parts AS SELECT * FROM VALUES (1, 'bolt') AS v(part_id, part_name);").expect("creates");
        let at_end = |text: &str| shell.complete(text, text.len()).1;
        assert_eq!(at_end("SEL"), vec!["SELECT"]);
        assert_eq!(at_end("sel"), vec!["select"]);
        // After FROM and JOIN (and `,` in a FROM list) only tables.
        assert_eq!(at_end("SELECT * FROM ord"), vec!["orders"]);
        assert_eq!(at_end("SELECT * FROM orders o JOIN p"), vec!["parts"]);
        assert_eq!(at_end("SELECT * FROM orders, p"), vec!["parts"]);
        // Elsewhere keywords and the columns of the tables the statement names.
        assert_eq!(at_end("SELECT * FROM orders WHERE ord"), vec!["order", "order_id"]);
        assert_eq!(at_end("SELECT * FROM orders WHERE p"), vec!["parquet", "partitioned"]);
        assert_eq!(shell.complete("SELECT p FROM parts", 8), (7, ["parquet", "part_id", "part_name", "partitioned"].map(String::from).to_vec()));
        // Naming no table yet: the columns of every table.
        assert_eq!(at_end("SELECT am"), vec!["amount"]);
        // A table's or an alias's columns after `name.`.
        assert_eq!(at_end("SELECT o."), vec![] as Vec<String>);
        assert_eq!(shell.complete("SELECT o. FROM orders AS o", 9).1, vec!["o.amount", "o.order_id"]);
        assert_eq!(at_end("SELECT * FROM orders o JOIN parts ON o.ord"), vec!["o.order_id"]);
        assert_eq!(at_end("SELECT parts.part_n"), vec!["parts.part_name"]);
        // Earlier lines of the statement count; strings and comments do not.
        assert_eq!(at_end("SELECT *\nFROM orders -- JOIN parts\nWHERE 'FROM parts' = p"), vec!["parquet", "partitioned"]);
        assert_eq!(at_end(".ti"), vec![".timer"]);
        // A word after a character of several bytes.
        assert_eq!(at_end("SELECT '‣'‣am"), vec!["amount"]);
    }
}
