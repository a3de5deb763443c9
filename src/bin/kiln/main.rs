//! `kiln`: run SQL over Parquet files, print plans, generate data, run sqllogictest files.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use kiln::{ExplainMode, KilnError, Session};

/// `println!` that exits quietly when standard output is a closed pipe.
macro_rules! outln {
    ($($arg:tt)*) => {
        if kiln::dataframe::write_stdout(&format!("{}\n", format!($($arg)*))).is_err() {
            std::process::exit(0);
        }
    };
}

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its `mi_option_e` index, the same in v2 and v3).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed memory stays mapped for the next batches: a query's breakers free and allocate
/// blocks of the same sizes over and over, and each purge makes the kernel fault and clear
/// those pages again (TPC-H SF1 ran 8-10 % faster in one sitting).
///
/// And no transparent huge pages: the kernel clears a whole 2 MiB page on the first touch of
/// any of its bytes, so the many partly used pages of per-thread heaps cost three times the
/// memory in clearing (TPC-H Q9 from Parquet at SF10: 14 % less wall time, 19 % less CPU,
/// median of five alternating runs). mimalloc's own `allow_thp` is read when it maps its arena,
/// before `main`; the kernel's per-process switch holds for every later fault.
fn keep_freed_memory() {
    // mimalloc's own MIMALLOC_PURGE_DELAY (milliseconds), when set, is left to decide.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one of mimalloc's options to a value it documents (-1: never purge).
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
    }
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and changes only this process's flag; a
    // kernel without it returns an error, which leaves things as they were.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

mod bench;
mod demo;
mod progress;
mod shell;

#[derive(Parser)]
#[command(name = "kiln", version, about = "A SQL engine that plans like Spark's Catalyst and runs on Apache Arrow")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Tables and settings shared by `sql` and `explain`.
#[derive(clap::Args)]
struct SessionArgs {
    /// Register a table: NAME=PATH, PATH a Parquet file or a directory of Parquet files.
    #[arg(long = "table", value_name = "NAME=PATH")]
    tables: Vec<String>,
    /// Register every table in a folder: each `NAME.parquet` file and each sub-folder (a table
    /// of Parquet files) by its name, as `kiln gen tpch` writes them.
    #[arg(long = "tables", value_name = "DIR")]
    table_dirs: Vec<PathBuf>,
    /// A session setting: KEY=VALUE (e.g. spark.sql.shuffle.partitions=8).
    #[arg(long = "conf", value_name = "KEY=VALUE")]
    confs: Vec<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, ValueEnum)]
enum Format {
    /// A table as Spark's `show()` prints it.
    Table,
    /// A header line, then one line per row; NULL is an empty field.
    Csv,
    /// One JSON object per row: arrays, maps and structs as JSON values, binary as base64.
    Jsonl,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mode {
    Simple,
    Extended,
    Codegen,
    Cost,
    Formatted,
}

#[derive(Clone, Copy, ValueEnum)]
enum SltMode {
    Compiled,
    Interpreted,
    Both,
}

#[derive(Subcommand)]
enum Command {
    /// Run one SQL statement, or a ';'-separated script, and print the results.
    Sql {
        #[command(flatten)]
        session: SessionArgs,
        /// Output format of query results.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// Print each statement's elapsed time to stderr.
        #[arg(long)]
        timer: bool,
        /// Read the SQL from this file instead of the argument.
        #[arg(short = 'f', long = "file", conflicts_with = "query")]
        file: Option<PathBuf>,
        /// Print, on stderr, the plan that ran with every operator's rows, time and memory.
        #[arg(long)]
        metrics: bool,
        /// The SQL text (it may start with a `--` comment); `-` or none reads standard input.
        #[arg(allow_hyphen_values = true)]
        query: Option<String>,
    },
    /// A Spark Connect server: pyspark programs connect with
    /// `SparkSession.builder.remote("sc://HOST:PORT").getOrCreate()`. Each client session gets a
    /// session of its own with these tables and settings (a client cannot lift static keys or
    /// ceilings set here). Spark's `spark.connect.*` keys (session and detached timeouts,
    /// reattachable stream limits) set the server itself.
    #[cfg(feature = "connect")]
    Connect {
        #[command(flatten)]
        session: SessionArgs,
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1")]
        host: String,
        /// The port to listen on (0: any free port, printed at start).
        #[arg(long, default_value_t = 15002)]
        port: u16,
    },
    /// An interactive SQL shell: history, multi-line statements ending in `;`, dot commands
    /// (`.help`), tab completion; Ctrl-C cancels the running query, Ctrl-D exits.
    Shell {
        #[command(flatten)]
        session: SessionArgs,
        /// Output format of query results (`.mode` changes it).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// The history file (default `~/.kiln_history`).
        #[arg(long)]
        history: Option<PathBuf>,
    },
    /// Print the plan of a query as Spark's EXPLAIN does.
    Explain {
        #[command(flatten)]
        session: SessionArgs,
        /// Which plans, as Spark's `EXPLAIN <mode>`: simple (the physical plan), extended (parsed,
        /// analyzed, optimized and physical), codegen (each compiled stage's code), cost (the
        /// optimized plan with row and size estimates), formatted (an outline, then each operator's details).
        #[arg(long, value_enum, default_value = "simple")]
        mode: Mode,
        /// Run the query first (rows discarded) and print the plan that ran: with adaptive
        /// execution, `AdaptiveSparkPlan isFinalPlan=true`.
        #[arg(long)]
        analyze: bool,
        /// With --analyze: also write the plan that ran as a picture to this file, `.html`
        /// (a page) or `.svg` (other kinds, `.png`, are refused: a browser saves the page as an
        /// image): rows per edge and per operator, time and memory, stages framed and coloured,
        /// a legend, and the initial plan beside the final one when adaptive execution changed it.
        #[arg(long, value_name = "FILE", requires = "analyze")]
        graph: Option<PathBuf>,
        /// With `--mode codegen`: print only the stage with this id (`*(N)` in plans).
        #[arg(long)]
        stage: Option<usize>,
        /// Read the SQL from this file instead of the argument.
        #[arg(short = 'f', long = "file", conflicts_with = "query")]
        file: Option<PathBuf>,
        /// The SQL text; `-` or none reads standard input.
        #[arg(allow_hyphen_values = true)]
        query: Option<String>,
    },
    /// Generate data sets.
    Gen {
        #[command(subcommand)]
        what: GenCommand,
    },
    /// Run sqllogictest files; ends with the line `N passed, M failed`.
    Slt {
        /// Run each file compiled (whole-stage codegen), interpreted, or both.
        #[arg(long, value_enum, default_value = "both")]
        mode: SltMode,
        /// The `.slt` files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Time queries in memory, interpreted and compiled (medians of several runs).
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// Build the seeds' shop and sales data sets and run the revenue-by-country query.
    Demo {
        /// Size of the sales data set: 1.0 is 20,000 customers and 200,000 orders.
        #[arg(long, default_value_t = 0.1)]
        scale: f64,
        /// Write the data sets into this folder and keep them (by default they go to a
        /// temporary folder, deleted at the end).
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
    },
}

/// How `bench` times and reports (both subcommands).
#[derive(clap::Args)]
struct BenchArgs {
    /// Timed runs per query and mode (after one cold run).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Time compiled (whole-stage codegen), interpreted, or both.
    #[arg(long, value_enum, default_value = "both")]
    mode: bench::BenchMode,
    /// How to print the timings.
    #[arg(long, value_enum, default_value = "table")]
    format: bench::BenchFormat,
    /// Print each query's physical plan (per mode) to stderr before timing it: the plan that ran, after one run (with adaptive execution, the final plan).
    #[arg(long)]
    explain: bool,
    /// Print each query's plan (per mode) to stderr with every operator's rows, time and memory,
    /// from a warm run (its second) before the timed ones.
    #[arg(long)]
    metrics: bool,
    /// Write a bar chart as SVG: per query the median of each mode (and peer), whiskers from the
    /// fastest to the slowest run, the ratio labelled; the title names the data and threads.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// With --plot: a logarithmic time axis (for queries whose times differ a hundredfold).
    #[arg(long, requires = "plot")]
    log_scale: bool,
    /// Peers' medians to draw beside kiln's: the CSV `shared/bench/peers.sh` prints.
    #[arg(long, value_name = "FILE.csv", requires = "plot")]
    peers: Option<PathBuf>,
    /// Also time each query with this setting changed (KEY=VALUE, repeatable), run for run in
    /// turn with the session's settings, and report the ratio (e.g. spark.sql.adaptive.enabled=false
    /// against true).
    #[arg(long = "against", value_name = "KEY=VALUE")]
    against: Vec<String>,
}

impl BenchArgs {
    /// The options, `data` naming what runs (for the chart's title).
    fn options(self, data: String) -> Result<bench::BenchOptions, KilnError> {
        let against = self.against.iter().map(|c| key_value(c, "--against")).collect::<Result<_, _>>()?;
        Ok(bench::BenchOptions {
            runs: self.runs,
            mode: self.mode,
            format: self.format,
            explain: self.explain,
            metrics: self.metrics,
            plot: self.plot,
            log_scale: self.log_scale,
            data,
            peers: self.peers,
            against,
        })
    }
}

#[derive(Subcommand)]
enum BenchCommand {
    /// TPC-H queries over tables generated in memory.
    Tpch {
        /// TPC-H scale factor.
        #[arg(long, default_value_t = 1.0)]
        sf: f64,
        /// Comma-separated TPC-H query numbers, 1 to 22.
        #[arg(long, default_value = "1,6")]
        queries: String,
        #[command(flatten)]
        bench: BenchArgs,
        /// A session setting: KEY=VALUE (e.g. spark.sql.shuffle.partitions=8).
        #[arg(long = "conf", value_name = "KEY=VALUE")]
        confs: Vec<String>,
        /// Run ANALYZE TABLE .. COMPUTE STATISTICS FOR ALL COLUMNS on every table first (implied
        /// by spark.sql.cbo.enabled=true and by --cardinalities).
        #[arg(long)]
        analyze: bool,
        /// Instead of timing: print each join's estimated and actual rows and the q-error.
        #[arg(long)]
        cardinalities: bool,
    },
    /// Your own query over your own tables, compiled against interpreted.
    Sql {
        #[command(flatten)]
        session: SessionArgs,
        #[command(flatten)]
        bench: BenchArgs,
        /// Read the query from this file instead of the argument (one statement).
        #[arg(short = 'f', long = "file", conflicts_with = "query")]
        file: Option<PathBuf>,
        /// The query; `-` or none reads standard input.
        #[arg(allow_hyphen_values = true)]
        query: Option<String>,
    },
}

#[derive(Subcommand)]
enum GenCommand {
    /// TPC-H tables as Parquet files (`<table>.parquet`).
    Tpch {
        /// Scale factor (1 = about 6 million lineitem rows).
        #[arg(long, default_value_t = 1.0)]
        sf: f64,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
    },
}

/// `KEY=VALUE` of a command-line option, trimmed.
fn key_value(arg: &str, option: &str) -> Result<(String, String), KilnError> {
    let (k, v) = arg.split_once('=').ok_or_else(|| KilnError::Config(format!("{option} expects KEY=VALUE, got `{arg}`")))?;
    Ok((k.trim().to_string(), v.trim().to_string()))
}

fn build_session(args: &SessionArgs) -> Result<Session, KilnError> {
    let session = Session::new();
    for c in &args.confs {
        let (k, v) = key_value(c, "--conf")?;
        session.set_conf(&k, &v)?;
    }
    for dir in &args.table_dirs {
        for (name, path) in tables_in(dir)? {
            session.register_parquet(&name, &path)?;
        }
    }
    for t in &args.tables {
        let (name, path) = t.split_once('=').ok_or_else(|| KilnError::Config(format!("--table expects NAME=PATH, got `{t}`")))?;
        session.register_parquet(name.trim(), path.trim()).map_err(|e| match e {
            // A folder of several tables read as one.
            KilnError::Io { path, message } if message.contains("must share one schema") => {
                KilnError::Io { path, message: format!("{message}. A folder holding several tables (one per file or sub-folder) is registered with --tables DIR") }
            }
            e => e,
        })?;
    }
    Ok(session)
}

/// The tables `--tables DIR` registers: each `NAME.parquet` file and each sub-folder not hidden
/// (`.x`, `_x`), by name, sorted.
fn tables_in(dir: &std::path::Path) -> Result<Vec<(String, PathBuf)>, KilnError> {
    let io = |e: std::io::Error| KilnError::io(dir.display().to_string(), e);
    let mut tables = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if file_name.starts_with(['.', '_']) {
            continue;
        }
        let name = if path.is_dir() {
            file_name
        } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("parquet")) {
            path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
        } else {
            continue;
        };
        if let Some(other) = tables.insert(name.to_lowercase(), path.clone()) {
            return Err(KilnError::Config(format!("--tables {}: `{}` and `{}` both name the table `{name}`", dir.display(), other.display(), path.display())));
        }
    }
    if tables.is_empty() {
        return Err(KilnError::Config(format!("--tables {}: no `*.parquet` files or sub-folders there", dir.display())));
    }
    Ok(tables.into_iter().collect())
}

/// The SQL text: from `-f FILE`, the argument, or standard input (`-`, or no argument with
/// stdin not a terminal).
fn read_query(file: &Option<PathBuf>, query: &Option<String>) -> Result<String, KilnError> {
    use std::io::{IsTerminal, Read};
    match (file, query.as_deref()) {
        (Some(f), _) => std::fs::read_to_string(f).map_err(|e| KilnError::io(f.display().to_string(), e)),
        (None, Some(q)) if q != "-" => Ok(q.to_string()),
        (None, q) => {
            if q.is_none() && std::io::stdin().is_terminal() {
                return Err(KilnError::Config("give a query, -f FILE, or SQL on standard input (`kiln sql < q.sql`)".into()));
            }
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| KilnError::io("stdin", e))?;
            if text.trim().is_empty() {
                return Err(KilnError::Config("standard input holds no SQL".into()));
            }
            Ok(text)
        }
    }
}

/// Prints a statement's rows in `format` (nothing for a statement without columns).
fn write_result(out: &mut dyn Write, format: Format, df: &kiln::DataFrame, batches: &[arrow::record_batch::RecordBatch]) -> Result<(), KilnError> {
    let (schema, zone) = (df.schema(), df.time_zone());
    if schema.fields().is_empty() {
        return Ok(());
    }
    match format {
        // Right-aligned as `show()` prints, no cell cut short.
        Format::Table => write!(out, "{}", kiln::format::show_string(&schema, batches, usize::MAX, usize::MAX, zone)).map_err(|e| KilnError::io("stdout", e)),
        Format::Csv => kiln::format::write_csv(&mut { out }, &schema, batches, zone),
        Format::Jsonl => kiln::format::write_jsonl(&mut { out }, &schema, batches, zone),
    }
}

/// Planning's warnings (hints it could not honour, ...) go to stderr, as Spark logs them.
fn print_warnings(df: &kiln::DataFrame) {
    for w in df.warnings() {
        eprintln!("warning: {w}");
    }
}

fn run(cli: Cli) -> Result<(), KilnError> {
    match cli.command {
        Command::Sql { session, format, timer, file, metrics, query } => {
            let s = build_session(&session)?;
            let text = read_query(&file, &query)?;
            shell::cancel_on_ctrl_c()?;
            let stdout = std::io::stdout();
            let mut out = stdout.lock();
            let start = std::time::Instant::now();
            for df in s.sql_script(&text)? {
                print_warnings(&df);
                let batches = if metrics {
                    let (batches, m) = df.collect_with_metrics()?;
                    eprintln!("{}", m.plan);
                    batches
                } else {
                    shell::run_cancellable(&df)?
                };
                write_result(&mut out, format, &df, &batches)?;
            }
            out.flush().map_err(|e| KilnError::io("stdout", e))?;
            if timer {
                eprintln!("{}", shell::run_time(start.elapsed()));
            }
            Ok(())
        }
        Command::Shell { session, format, history } => {
            let s = build_session(&session)?;
            shell::run(s, format, history)
        }
        Command::Explain { session, mode, analyze, graph, stage, file, query } => {
            let s = build_session(&session)?;
            let text = read_query(&file, &query)?;
            let mode = match mode {
                Mode::Simple => ExplainMode::Simple,
                Mode::Extended => ExplainMode::Extended,
                Mode::Codegen => ExplainMode::Codegen,
                Mode::Cost => ExplainMode::Cost,
                Mode::Formatted => ExplainMode::Formatted,
            };
            // A page or an SVG; any other kind (`.png`) is refused rather than written mislabelled.
            let html = match graph.as_deref() {
                None => true,
                Some(path) => match path.extension().map(|e| e.to_string_lossy().to_lowercase()).as_deref() {
                    Some("html" | "htm") => true,
                    Some("svg") => false,
                    _ => return Err(KilnError::Config(format!("--graph {}: kiln draws the plan as .html or .svg (a browser saves the page as an image)", path.display()))),
                },
            };
            let df = s.sql(&text)?;
            print_warnings(&df);
            if let Some(path) = &graph {
                let picture = df.plan_graph(html)?;
                std::fs::write(path, picture).map_err(|e| KilnError::io(path.display().to_string(), e))?;
                eprintln!("wrote {}", path.display());
            } else if analyze {
                df.collect()?;
            }
            match stage {
                Some(id) if mode == ExplainMode::Codegen => {
                    let ran = df.final_plan().unwrap_or_else(|| df.physical_plan().clone());
                    outln!("{}", kiln::explain::codegen_stage_string(&ran, &s.config()?, id)?)
                }
                Some(_) => return Err(KilnError::Config("--stage needs --mode codegen".into())),
                None => outln!("{}", df.explain_string(mode)?),
            }
            Ok(())
        }
        Command::Gen { what: GenCommand::Tpch { sf, out } } => {
            if !(sf > 0.0) {
                return Err(KilnError::Config(format!("--sf must be positive, got {sf}")));
            }
            let files = kiln::datasource::tpch::generate_tpch(sf, &out)?;
            for f in files {
                outln!("{}", f.display());
            }
            Ok(())
        }
        Command::Slt { mode, files } => {
            let mode = match mode {
                SltMode::Compiled => kiln::slt::SltMode::Compiled,
                SltMode::Interpreted => kiln::slt::SltMode::Interpreted,
                SltMode::Both => kiln::slt::SltMode::Both,
            };
            let summary = kiln::slt::run_files(&files, mode);
            kiln::slt::print_summary(&summary);
            if summary.failed > 0 {
                return Err(KilnError::exec(format!("{} sqllogictest records failed", summary.failed)));
            }
            Ok(())
        }
        Command::Demo { scale, keep } => demo::run(scale, keep),
        #[cfg(feature = "connect")]
        Command::Connect { mut session, host, port } => {
            use std::net::ToSocketAddrs;
            // Spark's `spark.connect.*` keys are the server's own; the rest each session's.
            let mut options = kiln::connect::ServerOptions::default();
            let mut confs = vec![];
            for c in std::mem::take(&mut session.confs) {
                let (k, v) = key_value(&c, "--conf")?;
                if k.starts_with("spark.connect.") {
                    options.set(&k, &v)?;
                } else {
                    confs.push(c);
                }
            }
            session.confs = confs;
            // The tables and settings are checked once now, not at the first client.
            build_session(&session)?;
            let addr = (host.as_str(), port)
                .to_socket_addrs()
                .map_err(|e| KilnError::Config(format!("--host {host}: {e}")))?
                .next()
                .ok_or_else(|| KilnError::Config(format!("--host {host}: no address")))?;
            kiln::connect::serve(addr, kiln::connect::ConnectServer::new(move || build_session(&session), options))
        }
        Command::Bench { what: BenchCommand::Tpch { sf, queries, bench: args, confs, analyze, cardinalities } } => {
            let session = build_session(&SessionArgs { tables: vec![], table_dirs: vec![], confs })?;
            let queries = bench::tpch_queries(&queries)?;
            bench::register_tpch(&session, sf)?;
            if analyze || cardinalities || session.config()?.cbo_enabled {
                bench::analyze_all(&session)?;
            }
            if cardinalities {
                return bench::cardinalities(&session, &queries);
            }
            bench::run(&session, &queries, &args.options(format!("TPC-H SF {sf}"))?)
        }
        Command::Bench { what: BenchCommand::Sql { session, bench: args, file, query } } => {
            let s = build_session(&session)?;
            let text = read_query(&file, &query)?;
            let name = file.as_ref().and_then(|f| f.file_stem()).map_or("query".to_string(), |n| n.to_string_lossy().into_owned());
            let data = format!("query {name}");
            bench::run(&s, &[(name, text)], &args.options(data)?)
        }
    }
}

fn main() -> ExitCode {
    keep_freed_memory();
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        // Output cut short by the reader (`| head`): not an error of the query.
        Err(KilnError::Io { path, .. }) if path == "stdout" => ExitCode::SUCCESS,
        // Ctrl-C: the exit status of a process a shell's SIGINT ended.
        Err(e @ KilnError::Cancelled) => {
            eprintln!("{e}");
            ExitCode::from(130)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
