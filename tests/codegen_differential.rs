//! Differential test of generated code: random expressions over random batches with NULLs,
//! run compiled and interpreted; the results (or the error messages) must be identical.

use arrow::record_batch::RecordBatch;
use kiln::Session;

#[path = "../fuzz/src/harness.rs"]
mod harness;
use harness::{expr, fallbacks, hash_joins, join_chain, run, table, with_long_strings, Choices, Kind, Rng, FUSED_JOINS};

#[test]
fn compiled_and_interpreted_agree_on_random_expressions() {
    // When rows in several partitions fail (a cast overflow here, a division by zero there),
    // which error a query reports depends on which partition fails first, in either mode. One
    // worker runs partitions in order, so both modes report the first partition's error.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0x5eed_cafe);
    let session = Session::builder().config("spark.sql.shuffle.partitions", "3").build().expect("session");
    let batches: Vec<RecordBatch> = (0..3).map(|_| table(&mut rng, 700, 15)).collect();
    session.register_batches("t", batches).expect("table");
    let batches: Vec<RecordBatch> = (0..3).map(|_| table(&mut rng, 700, 0)).collect();
    session.register_batches("u", batches).expect("table without NULLs");
    let (mut total, mut compiled, mut errors) = (0, 0, 0);
    for case in 0..250 {
        let kind = *rng.pick(&[Kind::Int, Kind::Long, Kind::Double, Kind::Decimal]);
        let pred = expr(&mut rng, Kind::Bool, 3);
        let table = if case % 4 < 2 { "t" } else { "u" };
        let sql = if case % 5 == 4 {
            // A join: its probe is fused into the stage, with a residual condition and a filter
            // over joined rows.
            let residual = rng.pick(&["t.l > u.l", "t.d <> u.d", "t.f < u.f OR t.b"]);
            let filter = rng.pick(&["t.k = 'a'", "u.d * 2 > t.d", "(t.f > u.f) OR u.b", "t.dt >= u.dt", "t.l + u.l > 0", "t.k IS NULL"]);
            let other = rng.pick(&["u.dt > DATE '1997-06-01'", "t.e IS NOT NULL", "TRUE"]);
            if case % 10 < 5 {
                format!("SELECT t.k, u.i, t.d + u.d AS s, u.k AS uk FROM t JOIN u ON t.i = u.i AND {residual} WHERE {filter} AND {other}")
            } else {
                // Grouped over joined rows: groups only from pairs that pass the residual, and
                // string tests on either side's columns inside the aggregates.
                format!(
                    "SELECT t.k, u.k, count(*), sum(t.d), sum(CASE WHEN u.k IN ('a', 'c') THEN 1 ELSE 0 END), \
                     sum(CASE WHEN t.k LIKE 'b%' OR u.k = 'd' THEN u.l ELSE 0 END) \
                     FROM t JOIN u ON t.i = u.i AND {residual} WHERE {other} GROUP BY t.k, u.k"
                )
            }
        } else if case % 2 == 0 {
            format!("SELECT {} AS x, {} AS y, k FROM {table} WHERE {pred}", expr(&mut rng, kind, 3), expr(&mut rng, Kind::Bool, 2))
        } else {
            let value = expr(&mut rng, kind, 3);
            format!("SELECT k, count(*), count(x), sum(x), avg(x), min(x), max(x) FROM (SELECT k, {value} AS x FROM {table} WHERE {pred}) s GROUP BY k")
        };
        // Every other join case is shuffled instead of broadcast: alternately a shuffled hash
        // join (its probe fused) and a sort-merge join (the stage above it compiled).
        let threshold = if case % 10 == 9 { "-1" } else { "10MB" };
        let sql = if case % 20 == 9 { sql.replacen("SELECT ", "SELECT /*+ SHUFFLE_HASH(u) */ ", 1) } else { sql };
        session.set_conf("spark.sql.autoBroadcastJoinThreshold", threshold).expect("setting");
        let (interpreted, _) = run(&session, &sql, false);
        let (generated, was_compiled) = run(&session, &sql, true);
        assert_eq!(generated, interpreted, "case {case} differs:\n{sql}");
        if !was_compiled && std::env::var("KILN_SHOW_FALLBACKS").is_ok() {
            eprintln!("not compiled: {sql} => {}", &generated[..generated.len().min(200)]);
        }
        total += 1;
        compiled += usize::from(was_compiled);
        errors += usize::from(interpreted.starts_with("error"));
    }
    // The comparison means something only if most cases really ran generated code.
    assert!(compiled * 10 >= total * 8, "only {compiled} of {total} cases compiled");
    assert!(errors * 2 < total, "{errors} of {total} cases failed in both modes");
}

/// Runs `sql` interpreted and compiled, asserts the two agree and did not fail, and returns
/// its compiled plan.
fn agree_and_plan(session: &Session, case: usize, sql: &str) -> kiln::DataFrame {
    let (interpreted, _) = run(session, sql, false);
    let (generated, _) = run(session, sql, true);
    assert_eq!(generated, interpreted, "case {case} differs:\n{sql}");
    assert!(!interpreted.starts_with("error"), "case {case} failed: {sql}\n{interpreted}");
    session.set_conf("spark.sql.codegen.wholeStage", "true").expect("setting");
    session.sql(sql).expect("plans")
}

/// A session with the stream table `t` (three batches of `stream_rows`, an empty batch among
/// them), two small build tables (`u` with `build_nulls` % NULLs, `w` without) and an empty one.
fn join_tables(rng: &mut Rng, stream_rows: usize, build_nulls: u64) -> Session {
    let session = Session::builder().config("spark.sql.shuffle.partitions", "3").build().expect("session");
    let mut batches: Vec<RecordBatch> = (0..3).map(|_| table(rng, stream_rows, 15)).collect();
    batches.insert(1, table(rng, 0, 0));
    session.register_batches("t", batches).expect("stream table");
    session.register_batches("u", vec![table(rng, 60, build_nulls)]).expect("build table");
    session.register_batches("w", vec![table(rng, 40, 0)]).expect("build table without NULLs");
    session.register_batches("e", vec![table(rng, 0, 0)]).expect("empty build table");
    session
}

#[test]
fn compiled_and_interpreted_agree_on_join_pipelines() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0x10_1a55);
    let session = join_tables(&mut rng, 500, 20);
    let (mut total, mut compiled, mut multi) = (0, 0, 0);
    for case in 0..160 {
        let joins = 1 + rng.below(3) as usize;
        let (sql_joins, visible) = join_chain(&mut rng, FUSED_JOINS, &["u", "u", "w", "w", "e"], joins);
        let last = visible.last().cloned().unwrap_or_else(|| "t".into());
        let filter = rng.pick(&["", " WHERE t.i > -50", " WHERE t.k <> 'b' OR t.k IS NULL"]).to_string();
        let sql = match case % 3 {
            0 => format!("SELECT t.k, t.i, t.f, {last}.i AS li, {last}.k AS lk, {last}.d + t.d AS s FROM t{sql_joins}{filter}"),
            1 => format!("SELECT count(*), count({last}.i), sum({last}.d), min({last}.f), max(t.l) FROM t{sql_joins}{filter}"),
            _ => format!("SELECT t.k, {last}.b, count(*), sum({last}.l), max({last}.dt) FROM t{sql_joins}{filter} GROUP BY t.k, {last}.b"),
        };
        if std::env::var("KILN_SHOW_SQL").is_ok() {
            eprintln!("case {case}: {sql}");
        }
        // Every join runs in a compiled stage (no silent fallback).
        let plan = agree_and_plan(&session, case, &sql);
        let (planned, fused) = hash_joins(plan.physical_plan());
        if fused < planned {
            let mut r = vec![];
            fallbacks(plan.physical_plan(), &mut r);
            eprintln!("case {case}: {fused} of {planned} joins compiled ({r:?}): {sql}");
        }
        total += planned;
        compiled += fused;
        multi += usize::from(joins > 1);
    }
    assert!(compiled * 10 >= total * 9, "only {compiled} of {total} joins compiled");
    assert!(multi * 2 >= 160, "only {multi} of 160 cases joined more than once");
}

/// `x NOT IN (subquery)` on every key type generated code probes (NaN and -0.0 among the
/// doubles), against build sides with NULL keys, without, and empty, after other joins and
/// under aggregates: the null-aware anti join compiled equals the interpreter's.
#[test]
fn compiled_and_interpreted_agree_on_null_aware_anti_joins() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0x0a_a1);
    let session = join_tables(&mut rng, 400, 10);
    let (mut null_aware, mut compiled) = (0, 0);
    for case in 0..120 {
        let key = *rng.pick(&["i", "k", "f", "dt", "b", "l", "d"]);
        let build = *rng.pick(&["u", "w", "e"]);
        let cut = rng.below(200) as i64 - 100;
        let sub_filter = match rng.below(4) {
            0 => String::new(),
            1 => format!(" WHERE x.{key} IS NOT NULL"),
            2 => format!(" WHERE x.i > {cut}"),
            _ => format!(" WHERE x.{key} IS NOT NULL AND x.i > {cut}"),
        };
        let joins = rng.below(2) as usize;
        let (sql_joins, visible) = join_chain(&mut rng, FUSED_JOINS, &["u", "w"], joins);
        let last = visible.last().cloned().unwrap_or_else(|| "t".into());
        let not_in = format!("t.{key} NOT IN (SELECT x.{key} FROM {build} x{sub_filter})");
        let sql = match case % 3 {
            0 => format!("SELECT t.k, t.i, t.f, {last}.l AS ll FROM t{sql_joins} WHERE {not_in}"),
            1 => format!("SELECT count(*), sum(t.d), max({last}.i) FROM t{sql_joins} WHERE {not_in} AND t.i > -90"),
            _ => format!("SELECT t.b, count(*), min(t.dt) FROM t{sql_joins} WHERE {not_in} GROUP BY t.b"),
        };
        let plan = agree_and_plan(&session, case, &sql);
        let config = session.config().expect("config");
        if plan.physical_plan().tree_string(&config).contains("LeftAnti, BuildRight, true, false") {
            null_aware += 1;
            let mut r = vec![];
            fallbacks(plan.physical_plan(), &mut r);
            compiled += usize::from(r.is_empty());
        }
    }
    assert!(null_aware >= 110, "only {null_aware} of 120 cases planned a null-aware anti join");
    assert!(compiled * 10 >= null_aware * 9, "only {compiled} of {null_aware} null-aware cases compiled");
}

/// Grouped aggregates over every key kind the group table holds — one int key (its own
/// layout), strings short and long, several columns, NULL keys, NaN and -0.0 — partial and
/// final aggregates both compiled, equal to the interpreter's.
#[test]
fn compiled_and_interpreted_agree_on_group_keys() {
    // The same one-worker pool as the other test (whichever builds it first): errors then come
    // from the first failing partition in both modes.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0x6a0f_7ab1);
    let session = Session::builder().config("spark.sql.shuffle.partitions", "3").build().expect("session");
    let batches: Vec<RecordBatch> = (0..4).map(|_| {
        let b = table(&mut rng, 900, 10);
        with_long_strings(&mut rng, b, 10)
    }).collect();
    session.register_batches("g", batches).expect("table");
    let keys = [
        "i", "l", "dt", "d", "e", "f", "b", "k", "s", "k, i", "s, k", "f, b", "i, l, dt", "e, s, f", "big", "d, k, b, s",
    ];
    let (mut compiled, mut errors) = (0, 0);
    for (n, key) in keys.iter().enumerate() {
        let pred = expr(&mut rng, Kind::Bool, 2);
        for sql in [
            format!("SELECT {key}, count(*), sum(d), avg(f), min(l), max(dt), sum(i) FROM g WHERE {pred} GROUP BY {key}"),
            format!("SELECT {key}, count(s), avg(e), max(f) FROM g GROUP BY {key}"),
        ] {
            let (interpreted, _) = run(&session, &sql, false);
            let (generated, was_compiled) = run(&session, &sql, true);
            assert_eq!(generated, interpreted, "case {n} differs:\n{sql}");
            errors += usize::from(interpreted.starts_with("error"));
            compiled += usize::from(was_compiled);
        }
    }
    assert_eq!(compiled, keys.len() * 2, "every grouped aggregate compiles");
    assert!(errors * 4 < keys.len() * 2, "{errors} cases failed in both modes");
}

/// Sort-merge joins (broadcasts off) of every type a stage runs, on int, date and two-column
/// keys, with NULL keys on both sides, an empty right side and conditions over both sides:
/// compiled (the merge join inside its stage) equals the interpreter's merge.
#[test]
fn compiled_and_interpreted_agree_on_sort_merge_joins() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0x5e_4e_7e);
    let session = join_tables(&mut rng, 300, 20);
    session.set_conf("spark.sql.autoBroadcastJoinThreshold", "-1").expect("setting");
    session.set_conf("spark.sql.adaptive.enabled", "false").expect("setting");
    let (mut merges, mut compiled) = (0, 0);
    for case in 0..80 {
        let kind = *rng.pick(&["JOIN", "LEFT JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"]);
        let build = *rng.pick(&["u", "w", "e"]);
        let on = *rng.pick(&["t.i = x.i", "t.dt = x.dt", "t.i = x.i AND t.dt = x.dt", "t.l = x.l"]);
        let cond = *rng.pick(&["", " AND t.l <> x.l", " AND t.d < x.d", " AND (x.f > t.f OR t.b)"]);
        let keeps = matches!(kind, "JOIN" | "LEFT JOIN");
        let cols = if keeps { "t.k, t.i, x.i AS xi, x.d AS xd, t.d + x.d AS s" } else { "t.k, t.i, t.d" };
        let sql = if case % 3 == 2 {
            format!("SELECT t.b, count(*), sum(t.l) FROM t {kind} {build} x ON {on}{cond} GROUP BY t.b")
        } else {
            format!("SELECT {cols} FROM t {kind} {build} x ON {on}{cond} WHERE t.i > -80 OR t.i IS NULL")
        };
        let plan = agree_and_plan(&session, case, &sql);
        let (planned, fused) = merge_joins(plan.physical_plan());
        if fused < planned {
            let mut r = vec![];
            fallbacks(plan.physical_plan(), &mut r);
            eprintln!("case {case}: {fused} of {planned} merge joins compiled ({r:?}): {sql}");
        }
        merges += planned;
        compiled += fused;
    }
    assert!(merges >= 80, "only {merges} sort-merge joins planned");
    assert!(compiled * 10 >= merges * 9, "only {compiled} of {merges} sort-merge joins ran in a compiled stage");
}

/// Sort-merge joins in the plan, and those run by a compiled stage.
fn merge_joins(plan: &kiln::physical::PhysicalPlan) -> (usize, usize) {
    use kiln::physical::PhysicalPlan;
    let own = usize::from(matches!(plan, PhysicalPlan::SortMergeJoin { .. }));
    let fused = match plan {
        PhysicalPlan::WholeStageCodegen { fallback: None, child, .. } => kiln::codegen::StageSpec::from_plan(child).map_or(0, |s| s.joins().iter().filter(|j| j.merge).count()),
        _ => 0,
    };
    plan.children().iter().map(|c| merge_joins(c)).fold((own, fused), |(a, b), (c, d)| (a + c, b + d))
}

/// Partial aggregates that emit their groups every few groups (`kiln.aggregate.partialFlushGroups`
/// 2: every batch whose keys fold): compiled equals interpreted equals one table per partition,
/// on int, string, boolean and several keys with NULLs (exact aggregates only: a flush moves
/// where a float sum is split).
#[test]
fn compiled_and_interpreted_agree_on_flushing_partial_aggregates() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0x51f0_c0de);
    let session = Session::builder().config("spark.sql.shuffle.partitions", "3").build().expect("session");
    let batches: Vec<RecordBatch> = (0..4).map(|_| table(&mut rng, 900, 10)).collect();
    session.register_batches("g", batches).expect("table");
    for key in ["i", "k", "b", "dt", "k, b", "i, k, dt", "d"] {
        let sql = format!("SELECT {key}, count(*), sum(i), sum(d), min(l), max(dt), count(f) FROM g GROUP BY {key}");
        session.set_conf("kiln.aggregate.partialFlushGroups", "0").expect("setting");
        let (whole, _) = run(&session, &sql, false);
        session.set_conf("kiln.aggregate.partialFlushGroups", "2").expect("setting");
        let (interpreted, _) = run(&session, &sql, false);
        let (generated, was_compiled) = run(&session, &sql, true);
        assert!(!whole.starts_with("error"), "{sql}: {whole}");
        assert!(was_compiled, "{sql} compiles");
        assert_eq!(interpreted, whole, "flushing changed the interpreted result of {sql}");
        assert_eq!(generated, interpreted, "compiled differs:\n{sql}");
    }
}

/// Filters of int, long and date columns against constants over batches without NULLs (the
/// vector loop: four rows at a time), batches whose rows are not a multiple of four and arrays
/// sliced at odd offsets (unaligned vector loads), alone and beside string or decimal
/// conditions: compiled equals interpreted.
#[test]
fn compiled_and_interpreted_agree_on_vector_filters() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0x7ec7_0f11);
    let session = Session::builder().config("spark.sql.shuffle.partitions", "3").build().expect("session");
    let full = table(&mut rng, 1027, 0);
    let batches = vec![full.slice(3, 1001), table(&mut rng, 3, 0), full.slice(1, 514), table(&mut rng, 1, 0)];
    session.register_batches("v", batches).expect("table");
    let ops = ["=", "<>", "<", "<=", ">", ">="];
    let mut vectored = 0;
    for case in 0..40 {
        let mut conds = vec![];
        for _ in 0..1 + rng.below(3) {
            let op = *rng.pick(&ops);
            conds.push(match rng.below(3) {
                0 => format!("i {op} {}", rng.below(200) as i64 - 100),
                1 => format!("l {op} {}", rng.below(1 << 40) as i64 - (1 << 39)),
                _ => format!("dt {op} DATE '1997-05-19' + {}", rng.below(1000) as i64 - 500),
            });
        }
        if rng.chance(40) {
            conds.push(["k LIKE '%b%'", "d > 12.5", "k IN ('a', 'ab')"][rng.below(3) as usize].to_string());
        }
        let sql = format!("SELECT count(*), sum(i), min(l) FROM v WHERE {}", conds.join(" AND "));
        let (interpreted, _) = run(&session, &sql, false);
        let (generated, was_compiled) = run(&session, &sql, true);
        assert!(was_compiled, "case {case} compiles: {sql}");
        assert!(!interpreted.starts_with("error"), "case {case}: {sql}\n{interpreted}");
        assert_eq!(generated, interpreted, "case {case} differs:\n{sql}");
        session.set_conf("spark.sql.codegen.wholeStage", "true").expect("setting");
        let code = session.sql(&sql).expect("plans").explain_string(kiln::ExplainMode::Codegen).expect("explains");
        vectored += usize::from(code.contains("Filter, four rows at a time"));
    }
    assert!(vectored >= 20, "only {vectored} of 40 filters ran the vector loop");
}

/// Each operator's rows as `collect_with_metrics` reports them, by plan line (expression ids
/// left out), in tree order; and the lines of the operators inside compiled stages whose rows
/// the interpreter's should equal (see `StageSpec::members`).
fn operator_rows(session: &Session, sql: &str, codegen: bool) -> (Vec<(String, u64)>, Vec<String>) {
    session.set_conf("spark.sql.codegen.wholeStage", if codegen { "true" } else { "false" }).expect("setting");
    let df = session.sql(sql).expect("plans");
    let (_, metrics) = df.collect_with_metrics().expect("runs");
    let config = session.config().expect("config");
    let mut members = vec![];
    fn walk(p: &kiln::physical::PhysicalPlan, config: &kiln::config::Config, out: &mut Vec<String>) {
        if let kiln::physical::PhysicalPlan::WholeStageCodegen { fallback: None, child, .. } = p {
            let spec = kiln::codegen::StageSpec::from_plan(child).expect("a compiled stage's spec");
            // A join whose build rows the stage keeps to those a later join matches, or joins
            // before the one whose Bloom bits the filter tests, see fewer rows than the
            // interpreter's joins: the rows the generated code ran.
            let pruned = (0..spec.joins().len()).any(|k| !spec.matching_joins(k).is_empty()) || spec.bloom_join().is_some_and(|(k, _)| k > 0);
            if !pruned {
                out.extend(spec.members.iter().map(|m| without_ids(&m.node.node_string(config))));
            }
        }
        p.children().iter().for_each(|c| walk(c, config, out));
    }
    walk(df.physical_plan(), &config, &mut members);
    (metrics.operators.into_iter().map(|(line, s)| (without_ids(&line), s.rows)).collect(), members)
}

/// `line` without expression ids (`#12`) and plan ids (`plan_id=3`), which differ run to run.
fn without_ids(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if (c == '#' || c == '=' && out.ends_with("plan_id")) && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Operators fused into a compiled stage count their rows (Spark UI's rows inside whole-stage
/// codegen): a Filter's, a join's, a Project's, an Expand's rows equal the interpreter's. Returns
/// how many operators inside compiled stages were compared.
fn members_count_as_interpreted(session: &Session, case: usize, sql: &str) -> usize {
    let (interpreted, _) = operator_rows(session, sql, false);
    let (compiled, members) = operator_rows(session, sql, true);
    let mut from = 0;
    let mut compared = 0;
    // Code generation off, the plan has no stage wrappers.
    for (line, rows) in compiled.iter().filter(|(l, _)| !l.starts_with("WholeStageCodegen")) {
        // Each operator the compiled run reports, the interpreted run reports too, in order.
        let at = interpreted[from..].iter().position(|(l, _)| l == line).unwrap_or_else(|| panic!("case {case}: `{line}` not run interpreted:\n{sql}\n{interpreted:#?}"));
        let expected = interpreted[from + at].1;
        from += at + 1;
        if members.contains(line) {
            assert_eq!(*rows, expected, "case {case}: `{line}` counted {rows} rows compiled, {expected} interpreted:\n{sql}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn operators_inside_compiled_stages_count_the_interpreters_rows() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0xc0_47ed);
    let session = join_tables(&mut rng, 1500, 20);
    session.set_conf("spark.sql.adaptive.enabled", "false").expect("setting");
    let mut compared = 0;
    for (case, sql) in [
        // A Filter and a Project under an aggregate; under an Expand.
        "SELECT k, count(*), sum(x) FROM (SELECT k, l * 2 AS x FROM t WHERE i > 0) s GROUP BY k",
        "SELECT k, count(*) FROM (SELECT k, i FROM t WHERE f > 0) s GROUP BY ROLLUP(k, i)",
        // A Filter over joined rows; an outer join under an aggregate (its probe's rows).
        "SELECT t.k, u.k, t.l + u.l AS s FROM t JOIN u ON t.i = u.i WHERE t.l + u.l > 0",
        "SELECT t.k, count(*), count(u.k) FROM t LEFT JOIN u ON t.i = u.i AND t.l > u.l WHERE t.f > 0 GROUP BY t.k",
        "SELECT t.k, w.k FROM t LEFT SEMI JOIN u ON t.i = u.i JOIN w ON t.l = w.l WHERE t.k <> 'a'",
    ]
    .into_iter()
    .enumerate()
    {
        compared += members_count_as_interpreted(&session, case, sql);
    }
    assert!(compared >= 10, "only {compared} operators inside compiled stages compared");
    // Random join pipelines (an empty build side drops every row before the stage runs: left out).
    for case in 0..40 {
        let joins = 1 + rng.below(3) as usize;
        let (sql_joins, visible) = join_chain(&mut rng, FUSED_JOINS, &["u", "u", "w", "w"], joins);
        let last = visible.last().cloned().unwrap_or_else(|| "t".into());
        let filter = rng.pick(&["", " WHERE t.i > -50", " WHERE t.k <> 'b' OR t.k IS NULL"]).to_string();
        let sql = match case % 2 {
            0 => format!("SELECT t.k, t.i, {last}.i AS li, {last}.d + t.d AS s FROM t{sql_joins}{filter}"),
            _ => format!("SELECT t.k, count(*), sum({last}.l) FROM t{sql_joins}{filter} GROUP BY t.k"),
        };
        compared += members_count_as_interpreted(&session, 100 + case, &sql);
    }
    assert!(compared >= 60, "only {compared} operators inside compiled stages compared");
}
