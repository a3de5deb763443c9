//! `kiln bench tpch`: TPC-H queries over tables generated in memory, each run interpreted and
//! compiled in the same process, reporting the median of several runs and the ratio.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kiln::{KilnError, Session};

/// The TPC-H queries kiln answers, with Spark's validation parameters (one text per query,
/// shared with the reference tests).
pub const QUERIES: &[(&str, &str)] = &[
    ("1", include_str!("../../../tests/reference/queries/tpch_q01.sql")),
    ("2", include_str!("../../../tests/reference/queries/tpch_q02.sql")),
    ("3", include_str!("../../../tests/reference/queries/tpch_q03.sql")),
    ("4", include_str!("../../../tests/reference/queries/tpch_q04.sql")),
    ("5", include_str!("../../../tests/reference/queries/tpch_q05.sql")),
    ("6", include_str!("../../../tests/reference/queries/tpch_q06.sql")),
    ("7", include_str!("../../../tests/reference/queries/tpch_q07.sql")),
    ("8", include_str!("../../../tests/reference/queries/tpch_q08.sql")),
    ("9", include_str!("../../../tests/reference/queries/tpch_q09.sql")),
    ("10", include_str!("../../../tests/reference/queries/tpch_q10.sql")),
    ("11", include_str!("../../../tests/reference/queries/tpch_q11.sql")),
    ("12", include_str!("../../../tests/reference/queries/tpch_q12.sql")),
    ("13", include_str!("../../../tests/reference/queries/tpch_q13.sql")),
    ("14", include_str!("../../../tests/reference/queries/tpch_q14.sql")),
    ("15", include_str!("../../../tests/reference/queries/tpch_q15.sql")),
    ("16", include_str!("../../../tests/reference/queries/tpch_q16.sql")),
    ("17", include_str!("../../../tests/reference/queries/tpch_q17.sql")),
    ("18", include_str!("../../../tests/reference/queries/tpch_q18.sql")),
    ("19", include_str!("../../../tests/reference/queries/tpch_q19.sql")),
    ("20", include_str!("../../../tests/reference/queries/tpch_q20.sql")),
    ("21", include_str!("../../../tests/reference/queries/tpch_q21.sql")),
    ("22", include_str!("../../../tests/reference/queries/tpch_q22.sql")),
];

/// Which execution modes to time.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchMode {
    Compiled,
    Interpreted,
    Both,
}

/// How to print the timings.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchFormat {
    /// A readable table with min and max and the compiled/interpreted ratio.
    Table,
    /// `engine,query,median_ms,rows`, the columns of the peers' benchmark script.
    Csv,
    /// One JSON object per line: engine, query, median/min/max/cold ms, rows, code generation.
    Json,
}

/// What to time and how to report it (shared by `bench tpch` and `bench sql`).
pub struct BenchOptions {
    pub runs: usize,
    pub mode: BenchMode,
    pub format: BenchFormat,
    /// Print each query's physical plan (per mode) to stderr before timing it: the plan that ran, after one run (with adaptive execution, the final plan).
    pub explain: bool,
    /// Print each query's plan (per mode) to stderr with every operator's rows, time and memory, from a warm run.
    pub metrics: bool,
    /// Write a bar chart of the medians here (SVG).
    pub plot: Option<PathBuf>,
    /// The chart's time axis logarithmic.
    pub log_scale: bool,
    /// What ran, for the chart's title (`TPC-H SF 1`, a query file's name).
    pub data: String,
    /// Peers' medians (`engine,query,median_ms,rows`) drawn beside kiln's.
    pub peers: Option<PathBuf>,
    /// Settings (KEY, VALUE) of a second configuration timed against the session's, run for
    /// run in turn, so the two see the same machine.
    pub against: Vec<(String, String)>,
}

struct Timing {
    median: f64,
    min: f64,
    max: f64,
    rows: usize,
    /// The first run, compiling its stages (those not in the session's cache yet).
    cold: f64,
    /// What code generation did in the first run.
    codegen: kiln::exec::metrics::CodegenStats,
}

/// Times each prepared query `runs` times after one cold run each, in turn (A B A B ...), so
/// that drift in the machine's speed falls on all of them alike.
fn time_in_turn(session: &Session, runs_of: &[(kiln::DataFrame, Settings)], runs: usize) -> Result<Vec<Timing>, KilnError> {
    let mut colds = vec![];
    // A DataFrame is planned at its first run, under the settings then (as Spark's first
    // action), and keeps that plan: each cold run under its own settings.
    for (df, settings) in runs_of {
        let saved = session.config()?;
        settings.iter().try_for_each(|(k, v)| session.set_conf(k, v))?;
        let start = Instant::now();
        let cold = df.collect_with_metrics();
        let elapsed = start.elapsed().as_secs_f64() * 1000.0;
        for (k, _) in settings {
            if let Some(v) = saved.get(k) {
                session.set_conf(k, &v)?;
            }
        }
        colds.push((elapsed, cold?.1.codegen));
    }
    let dfs: Vec<&kiln::DataFrame> = runs_of.iter().map(|(df, _)| df).collect();
    let mut times = vec![Vec::with_capacity(runs); dfs.len()];
    let mut rows = vec![0; dfs.len()];
    for _ in 0..runs {
        for (i, df) in dfs.iter().enumerate() {
            let start = Instant::now();
            let batches = df.collect()?;
            times[i].push(start.elapsed().as_secs_f64() * 1000.0);
            rows[i] = batches.iter().map(|b| b.num_rows()).sum();
        }
    }
    Ok(times
        .into_iter()
        .zip(rows)
        .zip(colds)
        .map(|((mut times, rows), (cold, codegen))| {
            times.sort_by(|a, b| a.total_cmp(b));
            Timing { median: times[times.len() / 2], min: times[0], max: times[times.len() - 1], rows, cold, codegen }
        })
        .collect())
}

/// Settings a DataFrame is first run under.
type Settings = Vec<(String, String)>;

/// `sql` to run under `mode` (the session's settings with it), and under them changed by
/// `against`.
fn prepare_against(session: &Session, sql: &str, mode: &Settings, against: &[(String, String)]) -> Result<[(kiln::DataFrame, Settings); 2], KilnError> {
    let changed: Settings = mode.iter().chain(against).cloned().collect();
    Ok([(session.sql(sql)?, mode.clone()), (session.sql(sql)?, changed)])
}

/// The TPC-H queries named by `queries`: `1,6,9` or ranges such as `1-22` (the peers' scripts
/// take the same).
pub fn tpch_queries(queries: &str) -> Result<Vec<(String, String)>, KilnError> {
    let mut names: Vec<String> = vec![];
    for q in queries.split(',').map(|q| q.trim().trim_start_matches(['q', 'Q'])).filter(|q| !q.is_empty()) {
        match q.split_once('-').map(|(a, b)| (a.trim().parse::<usize>(), b.trim().trim_start_matches(['q', 'Q']).parse::<usize>())) {
            Some((Ok(a), Ok(b))) if a <= b => names.extend((a..=b).map(|n| n.to_string())),
            Some(_) => return Err(KilnError::Config(format!("`{q}` is not a range of TPC-H queries such as 1-22"))),
            None => names.push(q.to_string()),
        }
    }
    names
        .iter()
        .map(|q| match QUERIES.iter().find(|(name, _)| name == q) {
            Some((name, sql)) => Ok((format!("q{name}"), sql.to_string())),
            None => {
                let known: Vec<&str> = QUERIES.iter().map(|(n, _)| *n).collect();
                Err(KilnError::Config(format!("unknown TPC-H query `{q}`; kiln benchmarks {}", known.join(", "))))
            }
        })
        .collect()
}

/// Registers the TPC-H tables at `sf`, generated in memory, in `session`.
pub fn register_tpch(session: &Session, sf: f64) -> Result<(), KilnError> {
    if !(sf > 0.0) {
        return Err(KilnError::Config(format!("--sf must be positive, got {sf}")));
    }
    let start = Instant::now();
    let tables = kiln::datasource::tpch::generate_tpch_batches(sf)?;
    eprintln!("generated TPC-H SF {sf} in memory in {:.1} s", start.elapsed().as_secs_f64());
    for (name, batches) in tables {
        session.register_batches(name, batches)?;
    }
    Ok(())
}

/// `ANALYZE TABLE t COMPUTE STATISTICS FOR ALL COLUMNS` on every table of the session, so the
/// cost-based optimizer has row counts and column statistics (`--analyze`, implied by
/// `spark.sql.cbo.enabled=true` and `--cardinalities`).
pub fn analyze_all(session: &Session) -> Result<(), KilnError> {
    let start = Instant::now();
    for t in session.table_names()? {
        session.sql(&format!("ANALYZE TABLE `{t}` COMPUTE STATISTICS FOR ALL COLUMNS"))?;
    }
    eprintln!("analyzed every table (FOR ALL COLUMNS) in {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

/// The geometric mean of positive ratios.
fn geometric_mean(values: &[f64]) -> f64 {
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// Spark's q-error of an estimate: the factor it is off by, at least 1 (a zero counts as 1).
pub fn q_error(estimated: u128, actual: u128) -> f64 {
    let (e, a) = (estimated.max(1) as f64, actual.max(1) as f64);
    (e / a).max(a / e)
}

/// `--cardinalities`: per query, every join of the optimized plan (outermost first) with the
/// CBO's estimated rows, the rows it produces when run on its own, and the q-error; then the
/// geometric mean and the largest q-error over all joins.
pub fn cardinalities(session: &Session, queries: &[(String, String)]) -> Result<(), KilnError> {
    outln!("query  join                                               estimated        actual   q-error");
    let mut errors = vec![];
    for (name, sql) in queries {
        let df = session.sql(sql)?;
        let mut joins = vec![];
        collect_joins(df.optimized_plan(), &mut joins);
        for (i, join) in joins.iter().enumerate() {
            let estimated = kiln::stats::estimation::estimate(join).row_count;
            let actual = session.plan(join.as_ref().clone()).and_then(|d| d.count());
            let label = join_label(join);
            match (estimated, actual) {
                (Some(e), Ok(a)) => {
                    let q = q_error(e, a.max(0) as u128);
                    errors.push(q);
                    outln!("{name:<6} {:<50} {e:>11} {a:>13} {q:>9.2}", format!("{}: {label}", i + 1));
                }
                (None, Ok(a)) => outln!("{name:<6} {:<50} {:>11} {a:>13} {:>9}", format!("{}: {label}", i + 1), "-", "-"),
                (_, Err(e)) => outln!("{name:<6} {:<50} could not run the join alone: {e}", format!("{}: {label}", i + 1)),
            }
        }
    }
    if !errors.is_empty() {
        let geomean = geometric_mean(&errors);
        let max = errors.iter().cloned().fold(1.0, f64::max);
        let median = {
            let mut e = errors.clone();
            e.sort_by(f64::total_cmp);
            e[e.len() / 2]
        };
        outln!("q-error over {} joins: geometric mean {geomean:.2}, median {median:.2}, max {max:.2}", errors.len());
    }
    Ok(())
}

fn collect_joins(plan: &std::sync::Arc<kiln::plan::LogicalPlan>, out: &mut Vec<std::sync::Arc<kiln::plan::LogicalPlan>>) {
    if matches!(plan.as_ref(), kiln::plan::LogicalPlan::Join { .. }) {
        out.push(plan.clone());
    }
    for c in plan.children() {
        collect_joins(c, out);
    }
}

/// `Inner (l_orderkey = o_orderkey)`, cut to fit a column.
fn join_label(join: &kiln::plan::LogicalPlan) -> String {
    let line = join.node_string();
    let line = line.strip_prefix("Join ").unwrap_or(&line);
    let masked = line.split('#').enumerate().map(|(i, p)| if i == 0 { p.to_string() } else { p.trim_start_matches(|c: char| c.is_ascii_digit() || c == 'L').to_string() }).collect::<String>();
    if masked.chars().count() > 48 {
        format!("{}..", masked.chars().take(46).collect::<String>())
    } else {
        masked
    }
}

/// One query's timings per mode (interpreted first).
struct Row {
    name: String,
    timings: Vec<(String, Timing)>,
}

/// Times each (name, sql) in `session` (its settings and tables apply) in the chosen modes.
pub fn run(session: &Session, queries: &[(String, String)], o: &BenchOptions) -> Result<(), KilnError> {
    if o.runs == 0 {
        return Err(KilnError::Config("--runs must be at least 1".into()));
    }
    let peers = match &o.peers {
        Some(p) => read_peers(p)?,
        None => vec![],
    };
    let modes: Vec<(&'static str, &str)> = match o.mode {
        BenchMode::Interpreted => vec![("interpreted", "false")],
        BenchMode::Compiled => vec![("compiled", "true")],
        BenchMode::Both => vec![("interpreted", "false"), ("compiled", "true")],
    };
    match o.format {
        BenchFormat::Csv => outln!("engine,query,median_ms,rows,cold_ms,compile_ms,stages_compiled,stages_interpreted,stages_fell_back"),
        BenchFormat::Table => {
            let labels = modes.iter().flat_map(|(m, _)| if o.against.is_empty() { vec![m.to_string()] } else { vec![m.to_string(), format!("{m}{AGAINST}")] });
            outln!("query  {}", labels.map(|m| format!("{:<36}", format!("{m}: median [min-max], cold"))).collect::<String>());
        }
        BenchFormat::Json => {}
    }
    let mut rows = vec![];
    for (name, sql) in queries {
        let mut timings = vec![];
        if o.explain {
            for (label, codegen) in &modes {
                session.set_conf("spark.sql.codegen.wholeStage", codegen)?;
                // Run once first: with adaptive execution, the plan that ran is the final one.
                let df = session.sql(sql)?;
                df.collect()?;
                let plan = df.explain_string(kiln::ExplainMode::Simple)?;
                eprintln!("-- {name} {label}\n{plan}");
            }
        }
        if o.metrics {
            for (label, codegen) in &modes {
                session.set_conf("spark.sql.codegen.wholeStage", codegen)?;
                // The second run: stages compiled and tables warm, as in the timed runs.
                let df = session.sql(sql)?;
                df.collect()?;
                let (_, metrics) = df.collect_with_metrics()?;
                eprintln!("-- {name} {label}, a warm run\n{}", metrics.plan);
            }
        }
        let timed: Vec<(String, Timing)> = if o.against.is_empty() {
            // The modes timed in turn, run for run, as `--against` times its settings: a
            // drift in the machine's speed falls on both alike, not on the ratio.
            let dfs = modes
                .iter()
                .map(|(_, codegen)| Ok((session.sql(sql)?, vec![("spark.sql.codegen.wholeStage".to_string(), codegen.to_string())])))
                .collect::<Result<Vec<_>, KilnError>>()?;
            modes.iter().map(|(label, _)| label.to_string()).zip(time_in_turn(session, &dfs, o.runs)?).collect()
        } else {
            let mut timed = vec![];
            for (label, codegen) in &modes {
                let mode = vec![("spark.sql.codegen.wholeStage".to_string(), codegen.to_string())];
                let [a, b] = time_in_turn(session, &prepare_against(session, sql, &mode, &o.against)?, o.runs)?.try_into().map_err(|_| KilnError::internal("two timings expected"))?;
                timed.extend([(label.to_string(), a), (format!("{label}{AGAINST}"), b)]);
            }
            timed
        };
        for (label, t) in timed {
            let c = &t.codegen;
            match o.format {
                BenchFormat::Csv => outln!(
                    "kiln-{label},{name},{:.1},{},{:.1},{:.3},{},{},{}",
                    t.median,
                    t.rows,
                    t.cold,
                    c.compile_micros as f64 / 1000.0,
                    c.stages_compiled,
                    c.stages_interpreted,
                    c.stages_fell_back
                ),
                BenchFormat::Json => outln!(
                    "{{\"engine\":\"kiln-{label}\",\"query\":{},\"median_ms\":{:.3},\"min_ms\":{:.3},\"max_ms\":{:.3},\"cold_ms\":{:.3},\"rows\":{},\"compile_ms\":{:.3},\"stages_compiled\":{},\"stages_interpreted\":{},\"stages_fell_back\":{}}}",
                    json_string(name),
                    t.median,
                    t.min,
                    t.max,
                    t.cold,
                    t.rows,
                    c.compile_micros as f64 / 1000.0,
                    c.stages_compiled,
                    c.stages_interpreted,
                    c.stages_fell_back
                ),
                BenchFormat::Table => {}
            }
            timings.push((label, t));
        }
        if o.format == BenchFormat::Table {
            outln!("{}", table_line(name, &timings));
        }
        rows.push(Row { name: name.clone(), timings });
    }
    session.set_conf("spark.sql.codegen.wholeStage", "true")?;
    let speedups: Vec<(f64, &str)> = rows.iter().filter_map(|r| Some((speedup(&r.timings)?, r.name.as_str()))).collect();
    if o.format == BenchFormat::Table && speedups.len() > 1 {
        let geomean = geometric_mean(&speedups.iter().map(|s| s.0).collect::<Vec<_>>());
        let (lowest, which) = speedups.iter().cloned().fold((f64::INFINITY, ""), |a, b| if b.0 < a.0 { b } else { a });
        let what = if o.against.is_empty() {
            "compiled over interpreted".to_string()
        } else {
            format!("{} over the session's settings", o.against.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "))
        };
        outln!("{what}: geometric mean speedup {geomean:.2}x over {} queries, lowest {lowest:.2}x ({which})", speedups.len());
    }
    if let Some(path) = &o.plot {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let ratio = if o.against.is_empty() {
            "interpreted median / compiled median".to_string()
        } else {
            format!("median / median with {}", o.against.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" "))
        };
        plot(path, &rows, &peers, &PlotSpec { context: format!("{}, {threads} threads", o.data), log_scale: o.log_scale, ratio })?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}

/// The label suffix of a timing under `--against`'s settings.
const AGAINST: &str = "+against";

/// The ratio a query's line reports: with `--against`, the session's settings' median over the
/// changed settings' (of the last mode timed); else interpreted over compiled, when both ran.
fn speedup(timings: &[(String, Timing)]) -> Option<f64> {
    match timings {
        [.., (_, a), (label, b)] if label.ends_with(AGAINST) => Some(a.median / b.median),
        [(_, i), (_, c)] => Some(i.median / c.median),
        _ => None,
    }
}

/// A query's line of the table: per mode median [min-max] and cold run, the ratio, and what
/// the compiled run's code generation did.
fn table_line(name: &str, timings: &[(String, Timing)]) -> String {
    let cells: String = timings.iter().map(|(_, t)| format!("{:<36}", format!("{:.1} ms [{:.1}-{:.1}], {:.1} ms", t.median, t.min, t.max, t.cold))).collect();
    let ratio = speedup(timings).map(|s| format!("speedup {s:.2}x  ")).unwrap_or_default();
    let stages = match timings.last() {
        Some((label, t)) if label.starts_with("compiled") => {
            let c = &t.codegen;
            format!(
                "stages: {} compiled ({:.1} ms to compile, {} from cache), {} interpreted, {} fell back",
                c.stages_compiled,
                c.compile_micros as f64 / 1000.0,
                c.cache_hits,
                c.stages_interpreted,
                c.stages_fell_back
            )
        }
        _ => String::new(),
    };
    format!("{name:<6} {cells}{ratio}{stages}")
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// (engine, query, median ms) of a peers CSV (`engine,query,median_ms,rows`, as
/// `shared/bench/peers.sh` prints it; `nan` medians are skipped).
fn read_peers(path: &Path) -> Result<Vec<(String, String, f64)>, KilnError> {
    let text = std::fs::read_to_string(path).map_err(|e| KilnError::io(path.display().to_string(), e))?;
    let mut out = vec![];
    for (n, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 3 || fields[0] == "engine" || fields[0].starts_with("kiln") {
            continue;
        }
        match fields[2].parse::<f64>() {
            Ok(ms) if ms.is_finite() => out.push((fields[0].to_string(), fields[1].to_string(), ms)),
            Ok(_) => {}
            Err(_) => return Err(KilnError::Config(format!("{}:{}: `{}` is not a median in milliseconds", path.display(), n + 1, fields[2]))),
        }
    }
    Ok(out)
}

/// What a chart says beyond its bars: what ran (the data set, the threads) and its time axis.
pub struct PlotSpec {
    /// What ran, for the title: `TPC-H SF 1, 8 threads`.
    pub context: String,
    /// A logarithmic time axis (queries whose times differ a hundredfold stay readable).
    pub log_scale: bool,
    /// What the ratio over a query's bars is (interpreted over compiled, or the session's
    /// settings over `--against`'s).
    pub ratio: String,
}

/// Series colours (Okabe and Ito's, told apart by colour-blind readers and legible on white):
/// kiln interpreted, kiln compiled, then the other series (`--against`, peers) in turn.
const COLOURS: [(u8, u8, u8); 7] = [(0xE6, 0x9F, 0x00), (0x00, 0x72, 0xB2), (0x00, 0x9E, 0x73), (0xCC, 0x79, 0xA7), (0xD5, 0x5E, 0x00), (0x56, 0xB4, 0xE9), (0x59, 0x59, 0x59)];

/// A grouped bar chart: per query one bar per kiln mode (and peer) at its median, a whisker
/// from its fastest to its slowest run, the ratio over the last kiln bar.
fn plot(path: &Path, rows: &[Row], peers: &[(String, String, f64)], spec: &PlotSpec) -> Result<(), KilnError> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| KilnError::io(path.display().to_string(), e);
    let mut series: Vec<String> = rows.iter().flat_map(|r| r.timings.iter().map(|(m, _)| format!("kiln {m}"))).collect();
    series.extend(peers.iter().map(|(e, _, _)| e.clone()));
    let mut seen = std::collections::HashSet::new();
    series.retain(|s| seen.insert(s.clone()));
    // (query index, series index, median ms, fastest and slowest run)
    let mut bars = vec![];
    for (q, r) in rows.iter().enumerate() {
        for (m, t) in &r.timings {
            bars.push((q, series.iter().position(|s| *s == format!("kiln {m}")).unwrap_or(0), t.median, Some((t.min, t.max))));
        }
        for (e, _, ms) in peers.iter().filter(|(_, query, _)| *query == r.name) {
            bars.push((q, series.iter().position(|s| s == e).unwrap_or(0), *ms, None));
        }
    }
    let colour = |s: usize| {
        let named = match series[s].as_str() {
            "kiln interpreted" => Some(0),
            "kiln compiled" => Some(1),
            _ => None,
        };
        let (r, g, b) = COLOURS[named.unwrap_or(2 + s.saturating_sub(2) % (COLOURS.len() - 2))];
        RGBColor(r, g, b)
    };
    let top = bars.iter().map(|b| b.3.map_or(b.2, |(_, max)| max)).fold(1.0f64, f64::max) * 1.15;
    // A log axis starts below the fastest bar's low end.
    let floor = if spec.log_scale { bars.iter().map(|b| b.3.map_or(b.2, |(min, _)| min)).filter(|v| *v > 0.0).fold(top, f64::min) / 2.0 } else { 0.0 };
    let width = (160 + rows.len() * (40 + 30 * series.len())).max(760) as u32;
    let height = 500u32;
    let root = SVGBackend::new(path, (width, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let names: Vec<String> = rows.iter().map(|r| r.name.clone()).collect();
    let slot = 0.8 / series.len().max(1) as f64;
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(format!("kiln, {}: median time per query (lower is better)", spec.context), ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(60);
    // The same drawing on either axis (their coordinate types differ).
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart.map_err(|e| err(&e))?;
            chart
                .configure_mesh()
                .disable_x_mesh()
                .x_labels(rows.len().max(1) * 2 + 1)
                .x_label_formatter(&|x| {
                    let i = x.floor() as usize;
                    if (x - i as f64 - 0.5).abs() < 0.01 {
                        names.get(i).cloned().unwrap_or_default()
                    } else {
                        String::new()
                    }
                })
                .y_desc(if spec.log_scale { "median ms (log scale)" } else { "median ms" })
                .draw()
                .map_err(|e| err(&e))?;
            for (s, label) in series.iter().enumerate() {
                let c = colour(s);
                let rects: Vec<Rectangle<(f64, f64)>> = bars
                    .iter()
                    .filter(|b| b.1 == s)
                    .map(|&(q, _, ms, _)| {
                        let x0 = q as f64 + 0.1 + slot * s as f64;
                        Rectangle::new([(x0, floor), (x0 + slot * 0.9, ms.max(floor))], c.filled())
                    })
                    .collect();
                chart
                    .draw_series(rects)
                    .map_err(|e| err(&e))?
                    .label(label.clone())
                    .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], c.filled()));
            }
            // Whiskers: fastest to slowest run, with caps.
            for &(q, s, _, spread) in &bars {
                let Some((min, max)) = spread else { continue };
                let x = q as f64 + 0.1 + slot * s as f64 + slot * 0.45;
                let cap = slot * 0.2;
                for points in [vec![(x, min.max(floor)), (x, max)], vec![(x - cap, min.max(floor)), (x + cap, min.max(floor))], vec![(x - cap, max), (x + cap, max)]] {
                    chart.draw_series(std::iter::once(PathElement::new(points, BLACK.stroke_width(1)))).map_err(|e| err(&e))?;
                }
            }
            // The ratio above each query's last kiln bar.
            let last = series.iter().rposition(|s| s.starts_with("kiln "));
            let labels: Vec<(f64, f64, String)> = rows
                .iter()
                .enumerate()
                .filter_map(|(q, r)| {
                    let (ratio, s) = (speedup(&r.timings)?, last?);
                    let t = &r.timings.last()?.1;
                    let above = if spec.log_scale { t.max * 1.25 } else { t.max + top * 0.05 };
                    Some((q as f64 + 0.1 + slot * s as f64, above, format!("{ratio:.2}x")))
                })
                .collect();
            chart.draw_series(labels.into_iter().map(|(x, y, t)| Text::new(t, (x, y), ("sans-serif", 13)))).map_err(|e| err(&e))?;
            chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(|e| err(&e))?;
        }};
    }
    let queries = 0f64..rows.len().max(1) as f64;
    if spec.log_scale {
        draw!(builder.build_cartesian_2d(queries, (floor..top).log_scale()));
    } else {
        draw!(builder.build_cartesian_2d(queries, 0f64..top));
    }
    let note = format!("bars: median of the timed runs; whiskers: fastest to slowest run; above the bars: {}", spec.ratio);
    root.draw(&Text::new(note, (15, height as i32 - 14), ("sans-serif", 12))).map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_lists_and_ranges_parse() {
        let q: Vec<String> = tpch_queries("1, q3,5-6").expect("parses").into_iter().map(|(n, _)| n).collect();
        assert_eq!(q, ["q1", "q3", "q5", "q6"]);
        assert!(tpch_queries("23").is_err());
        assert!(tpch_queries("6-1").is_err());
        assert_eq!(json_string("a\"b\n"), "\"a\\\"b\\u000a\"");
    }

    #[test]
    fn the_ratio_is_interpreted_over_compiled_or_the_session_over_against() {
        let t = |ms: f64| Timing { median: ms, min: ms, max: ms, rows: 1, cold: ms, codegen: Default::default() };
        assert_eq!(speedup(&[("interpreted".into(), t(30.0)), ("compiled".into(), t(10.0))]), Some(3.0));
        let both = [("interpreted".into(), t(30.0)), (format!("interpreted{AGAINST}"), t(15.0)), ("compiled".into(), t(10.0)), (format!("compiled{AGAINST}"), t(20.0))];
        assert_eq!(speedup(&both), Some(0.5));
        assert_eq!(speedup(&[("compiled".into(), t(10.0))]), None);
    }

    #[test]
    fn a_plot_is_an_svg_with_one_bar_per_mode_and_peer_and_the_ratio() {
        let dir = tempfile::tempdir().expect("dir");
        let t = |ms: f64| Timing { median: ms, min: ms, max: ms, rows: 1, cold: ms, codegen: Default::default() };
        let spread = Timing { median: 10.0, min: 8.0, max: 14.0, rows: 1, cold: 10.0, codegen: Default::default() };
        let rows = vec![Row { name: "q1".into(), timings: vec![("interpreted".into(), t(30.0)), ("compiled".into(), spread)] }];
        let peers_csv = dir.path().join("peers.csv");
        std::fs::write(&peers_csv, "engine,query,median_ms,rows\nduckdb,q1,12.5,4\ndatafusion,q1,nan,0\n").expect("writes");
        let peers = read_peers(&peers_csv).expect("reads");
        assert_eq!(peers, vec![("duckdb".to_string(), "q1".to_string(), 12.5)]);
        for log_scale in [false, true] {
            let svg = dir.path().join("bench.svg");
            let spec = PlotSpec { context: "TPC-H SF 0.1, 2 threads".into(), log_scale, ratio: "interpreted median / compiled median".into() };
            plot(&svg, &rows, &peers, &spec).expect("plots");
            let text = std::fs::read_to_string(&svg).expect("svg");
            assert!(text.starts_with("<svg"), "{}", &text[..100.min(text.len())]);
            let axis = if log_scale { "median ms (log scale)" } else { "median ms" };
            for needle in ["3.00x", "kiln compiled", "kiln interpreted", "duckdb", "q1", "TPC-H SF 0.1, 2 threads", "interpreted median / compiled median", axis] {
                assert!(text.contains(needle), "{needle} missing from the plot");
            }
            // DuckDB in Okabe and Ito's green, and a whisker from 8 to 14 ms on the compiled bar.
            assert!(text.to_uppercase().contains("#009E73"), "duckdb's colour");
            assert!(text.matches("<polyline").count() >= 6, "whiskers with caps");
        }
    }
}
