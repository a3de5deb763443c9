//! `kiln bench`: TPC-H queries over tables generated in memory, each run interpreted and
//! compiled in the same process, reporting the median of several runs and the ratio.

use std::time::Instant;

use kiln::{KilnError, Session};

/// The TPC-H queries kiln answers, with Spark's validation parameters (one text per query,
/// shared with the reference tests).
pub const QUERIES: &[(&str, &str)] = &[
    ("q1", include_str!("../../../tests/reference/queries/tpch_q01.sql")),
    ("q3", include_str!("../../../tests/reference/queries/tpch_q03.sql")),
    ("q5", include_str!("../../../tests/reference/queries/tpch_q05.sql")),
    ("q6", include_str!("../../../tests/reference/queries/tpch_q06.sql")),
    ("q10", include_str!("../../../tests/reference/queries/tpch_q10.sql")),
];

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Times `sql` `runs` times (after one warm-up run); returns (median, min, max) in milliseconds.
fn time_query(session: &Session, sql: &str, runs: usize) -> Result<(f64, f64, f64), KilnError> {
    let df = session.sql(sql)?;
    df.collect()?;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        df.collect()?;
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    let (min, max) = times.iter().fold((f64::MAX, 0.0f64), |(lo, hi), t| (lo.min(*t), hi.max(*t)));
    Ok((median(times), min, max))
}

pub fn run(sf: f64, queries: &str, runs: usize) -> Result<(), KilnError> {
    if !(sf > 0.0) || runs == 0 {
        return Err(KilnError::Config("--sf must be positive and --runs at least 1".into()));
    }
    let wanted: Vec<&str> = queries.split(',').map(|q| q.trim()).filter(|q| !q.is_empty()).collect();
    for q in &wanted {
        if !QUERIES.iter().any(|(name, _)| name == q) {
            let known: Vec<&str> = QUERIES.iter().map(|(n, _)| *n).collect();
            return Err(KilnError::Config(format!("unknown query `{q}`; known: {}", known.join(", "))));
        }
    }
    let start = Instant::now();
    let tables = kiln::datasource::tpch::generate_tpch_batches(sf)?;
    eprintln!("generated TPC-H SF {sf} in memory in {:.1} s", start.elapsed().as_secs_f64());
    let session = Session::new();
    for (name, batches) in tables {
        session.register_batches(name, batches)?;
    }
    // Until whole-stage code generation lands both columns run the same interpreted operators.
    println!("note: code generation is not built yet; the compiled column runs the interpreted operators");
    println!("query  interpreted ms (median [min-max])  compiled ms (median [min-max])  compiled/interpreted");
    for (name, sql) in QUERIES.iter().filter(|(n, _)| wanted.contains(n)) {
        let mut medians = vec![];
        let mut cells = vec![];
        for codegen in ["false", "true"] {
            session.set_conf("spark.sql.codegen.wholeStage", codegen)?;
            let (med, min, max) = time_query(&session, sql, runs)?;
            medians.push(med);
            cells.push(format!("{med:9.1} [{min:.1}-{max:.1}]"));
        }
        println!("{name:<6} {:<36} {:<31} {:.2}", cells[0], cells[1], medians[1] / medians[0]);
    }
    Ok(())
}
