//! `kiln bench tpch`: TPC-H queries over tables generated in memory, each run interpreted and
//! compiled in the same process, reporting the median of several runs and the ratio.

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

/// Times `sql` `runs` times after one cold run.
fn time_query(session: &Session, sql: &str, runs: usize) -> Result<Timing, KilnError> {
    let df = session.sql(sql)?;
    let start = Instant::now();
    let (_, metrics) = df.collect_with_metrics()?;
    let cold = start.elapsed().as_secs_f64() * 1000.0;
    let mut times = Vec::with_capacity(runs);
    let mut rows = 0;
    for _ in 0..runs {
        let start = Instant::now();
        let batches = df.collect()?;
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        rows = batches.iter().map(|b| b.num_rows()).sum();
    }
    times.sort_by(|a, b| a.total_cmp(b));
    Ok(Timing { median: times[times.len() / 2], min: times[0], max: times[times.len() - 1], rows, cold, codegen: metrics.codegen })
}

/// Times the queries in `session` (its settings apply; the TPC-H tables are added to it).
pub fn run(session: &Session, sf: f64, queries: &str, runs: usize, mode: BenchMode, format: BenchFormat, explain: bool) -> Result<(), KilnError> {
    if !(sf > 0.0) || runs == 0 {
        return Err(KilnError::Config("--sf must be positive and --runs at least 1".into()));
    }
    let mut wanted = vec![];
    // `1,6,9` or ranges such as `1-22` (the peers' scripts take the same).
    let mut names: Vec<String> = vec![];
    for q in queries.split(',').map(|q| q.trim().trim_start_matches(['q', 'Q'])).filter(|q| !q.is_empty()) {
        match q.split_once('-').map(|(a, b)| (a.trim().parse::<usize>(), b.trim().trim_start_matches(['q', 'Q']).parse::<usize>())) {
            Some((Ok(a), Ok(b))) if a <= b => names.extend((a..=b).map(|n| n.to_string())),
            Some(_) => return Err(KilnError::Config(format!("`{q}` is not a range of TPC-H queries such as 1-22"))),
            None => names.push(q.to_string()),
        }
    }
    for q in names.iter().map(String::as_str) {
        match QUERIES.iter().find(|(name, _)| *name == q) {
            Some(entry) => wanted.push(*entry),
            None => {
                let known: Vec<&str> = QUERIES.iter().map(|(n, _)| *n).collect();
                return Err(KilnError::Config(format!("unknown TPC-H query `{q}`; kiln benchmarks {}", known.join(", "))));
            }
        }
    }
    let start = Instant::now();
    let tables = kiln::datasource::tpch::generate_tpch_batches(sf)?;
    eprintln!("generated TPC-H SF {sf} in memory in {:.1} s", start.elapsed().as_secs_f64());
    for (name, batches) in tables {
        session.register_batches(name, batches)?;
    }
    let modes: Vec<(&str, &str)> = match mode {
        BenchMode::Interpreted => vec![("interpreted", "false")],
        BenchMode::Compiled => vec![("compiled", "true")],
        BenchMode::Both => vec![("interpreted", "false"), ("compiled", "true")],
    };
    match format {
        BenchFormat::Csv => outln!("engine,query,median_ms,rows,cold_ms,compile_ms,stages_compiled,stages_interpreted,stages_fell_back"),
        BenchFormat::Table => {
            outln!("query  {}", modes.iter().map(|(m, _)| format!("{:<36}", format!("{m}: median [min-max], cold"))).collect::<String>());
        }
    }
    let mut speedups = vec![];
    for (name, sql) in wanted {
        let mut timings = vec![];
        for (label, codegen) in &modes {
            session.set_conf("spark.sql.codegen.wholeStage", codegen)?;
            if explain {
                let plan = session.sql(sql)?.explain_string(kiln::ExplainMode::Simple)?;
                eprintln!("-- q{name} {label}\n{plan}");
            }
            let t = time_query(session, sql, runs)?;
            if format == BenchFormat::Csv {
                let c = &t.codegen;
                outln!(
                    "kiln-{label},q{name},{:.1},{},{:.1},{:.3},{},{},{}",
                    t.median,
                    t.rows,
                    t.cold,
                    c.compile_micros as f64 / 1000.0,
                    c.stages_compiled,
                    c.stages_interpreted,
                    c.stages_fell_back
                );
            }
            timings.push(t);
        }
        if let [i, c] = timings.as_slice() {
            speedups.push(i.median / c.median);
        }
        if format == BenchFormat::Table {
            let cells: String =
                timings.iter().map(|t| format!("{:<36}", format!("{:.1} ms [{:.1}-{:.1}], {:.1} ms", t.median, t.min, t.max, t.cold))).collect();
            let ratio = match timings.as_slice() {
                [i, c] => format!("speedup {:.2}x  ", i.median / c.median),
                _ => String::new(),
            };
            // What the compiled run's code generation did (the last mode is the compiled one).
            let stages = match timings.last() {
                Some(t) if modes.last().is_some_and(|(m, _)| *m == "compiled") => {
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
            outln!("q{name:<5} {cells}{ratio}{stages}");
        }
    }
    if format == BenchFormat::Table && speedups.len() > 1 {
        let geomean = (speedups.iter().map(|s| s.ln()).sum::<f64>() / speedups.len() as f64).exp();
        let slowest = speedups.iter().cloned().fold(f64::INFINITY, f64::min);
        outln!("compiled over interpreted: geometric mean speedup {geomean:.2}x over {} queries, lowest {slowest:.2}x", speedups.len());
    }
    Ok(())
}
