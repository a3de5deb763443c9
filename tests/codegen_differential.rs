//! Differential test of generated code: random expressions over random batches with NULLs,
//! run compiled and interpreted; the results (or the error messages) must be identical.

use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use kiln::physical::PhysicalPlan;
use kiln::Session;

mod common;
use common::Rng;

/// A batch of every type; `null_pct` percent of the values are NULL (0: none, which runs the
/// generated variant that reads no validity bitmaps).
fn table(rng: &mut Rng, rows: usize, null_pct: u64) -> RecordBatch {
    let null = |rng: &mut Rng| rng.chance(null_pct);
    let i: Int32Array = (0..rows).map(|_| (!null(rng)).then(|| rng.below(200) as i32 - 100)).collect();
    let l: Int64Array = (0..rows).map(|_| (!null(rng)).then(|| rng.below(1 << 40) as i64 - (1 << 39))).collect();
    let big: Int32Array = (0..rows).map(|_| (!null(rng)).then(|| rng.below(u32::MAX as u64) as i64 as i32)).collect();
    // Now and then a value min/max must order exactly as the interpreter: NaN, -0.0, infinities.
    let special = [f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, -f64::NAN];
    let f: Float64Array = (0..rows)
        .map(|_| (!null(rng)).then(|| if rng.chance(3) { *rng.pick(&special) } else { (rng.below(20_000) as f64 - 10_000.0) / 64.0 }))
        .collect();
    let d: Decimal128Array = (0..rows).map(|_| (!null(rng)).then(|| rng.below(2_000_000) as i128 - 1_000_000)).collect();
    let e: Decimal128Array = (0..rows).map(|_| (!null(rng)).then(|| rng.below(1 << 50) as i128 - (1 << 49))).collect();
    let dt: Date32Array = (0..rows).map(|_| (!null(rng)).then(|| 10_000 + rng.below(1000) as i32)).collect();
    let b: BooleanArray = (0..rows).map(|_| (!null(rng)).then(|| rng.chance(50))).collect();
    // Prefixes of each other, an empty string and multi-byte characters, for ordering,
    // LIKE patterns and length().
    let words = ["a", "b", "c", "d", "ab", "ba", "abc", "bcab", "", "é", "añb", "b\u{7f}", "cé"];
    let k: StringArray = (0..rows).map(|_| (!null(rng)).then(|| *rng.pick(&words))).collect();
    let schema = Schema::new(vec![
        Field::new("i", DataType::Int32, true),
        Field::new("l", DataType::Int64, true),
        Field::new("big", DataType::Int32, true),
        Field::new("f", DataType::Float64, true),
        Field::new("d", DataType::Decimal128(9, 2), true),
        Field::new("e", DataType::Decimal128(20, 4), true),
        Field::new("dt", DataType::Date32, true),
        Field::new("b", DataType::Boolean, true),
        Field::new("k", DataType::Utf8, true),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(i),
        Arc::new(l),
        Arc::new(big),
        Arc::new(f),
        Arc::new(d.with_precision_and_scale(9, 2).expect("valid decimal")),
        Arc::new(e.with_precision_and_scale(20, 4).expect("valid decimal")),
        Arc::new(dt),
        Arc::new(b),
        Arc::new(k),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).expect("consistent batch")
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Int,
    Long,
    Double,
    Decimal,
    Date,
    Bool,
}

/// A random SQL expression of `kind`, `depth` levels deep at most.
fn expr(rng: &mut Rng, kind: Kind, depth: u32) -> String {
    let leaf = depth == 0 || rng.chance(30);
    match kind {
        Kind::Int if leaf => rng
            .pick(&[
                "i",
                "big",
                "7",
                "-3",
                "0",
                "CAST(NULL AS INT)",
                "length(k)",
                "abs(i)",
                "abs(big)",
                "CAST(f AS INT)",
                "CAST(d AS INT)",
                "CAST(CAST(i AS BIGINT) AS INT)",
                "CAST(CAST(i AS BIGINT) * 30000000 AS INT)",
            ])
            .to_string(),
        Kind::Long if leaf => rng.pick(&["l", "CAST(i AS BIGINT)", "100000000000", "2", "abs(l)", "CAST(f * 1000000 AS BIGINT)", "CAST(d AS BIGINT)"]).to_string(),
        Kind::Double if leaf => rng
            .pick(&["f", "CAST(0.5 AS DOUBLE)", "CAST(i AS DOUBLE)", "CAST(0 AS DOUBLE)", "abs(f)", "CAST(d AS DOUBLE)", "CAST(e AS DOUBLE)"])
            .to_string(),
        Kind::Decimal if leaf => rng.pick(&["d", "e", "1.25", "CAST(i AS DECIMAL(12,3))", "0.00", "abs(d)", "CAST(d AS DECIMAL(6,1))", "CAST(d AS DECIMAL(9,0))"]).to_string(),
        Kind::Date if leaf => rng.pick(&["dt", "DATE '1997-06-01'"]).to_string(),
        Kind::Bool if leaf => rng
            .pick(&[
                "b",
                "TRUE",
                "i IS NULL",
                "d IS NOT NULL",
                "k = 'a'",
                "k <> 'b'",
                "k IN ('a', 'c')",
                "k LIKE 'b%'",
                "k LIKE '%c'",
                "k NOT LIKE 'd'",
                "k IS NULL",
                "k < 'b'",
                "k >= 'ab'",
                "'b' > k",
                "k <= 'añ'",
                "k > ''",
                "k LIKE '%b%'",
                "k LIKE 'a%b'",
                "k NOT LIKE '%a%b%'",
                "k LIKE '%é'",
                "length(k) > 1",
            ])
            .to_string(),
        Kind::Int | Kind::Long | Kind::Double | Kind::Decimal => {
            let op = *rng.pick(&["+", "-", "*", "CASE", "NEG"]);
            let (a, b) = (expr(rng, kind, depth - 1), expr(rng, kind, depth - 1));
            match op {
                "CASE" => format!("CASE WHEN {} THEN {a} ELSE {b} END", expr(rng, Kind::Bool, depth - 1)),
                "NEG" => format!("(-{a})"),
                _ if kind == Kind::Double && rng.chance(25) => format!("({a} / {b})"),
                op => format!("({a} {op} {b})"),
            }
        }
        Kind::Date => "dt".to_string(),
        Kind::Bool => {
            let operand = *rng.pick(&[Kind::Int, Kind::Long, Kind::Double, Kind::Decimal, Kind::Date]);
            match rng.below(7) {
                0 => format!("({} AND {})", expr(rng, Kind::Bool, depth - 1), expr(rng, Kind::Bool, depth - 1)),
                1 => format!("({} OR {})", expr(rng, Kind::Bool, depth - 1), expr(rng, Kind::Bool, depth - 1)),
                2 => format!("(NOT {})", expr(rng, Kind::Bool, depth - 1)),
                3 if rng.chance(50) => format!("({} IN (1, 2, -3, NULL))", expr(rng, Kind::Int, depth - 1)),
                // Longer than 10 values: an INSET after OptimizeIn.
                3 => format!("({} NOT IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -7))", expr(rng, Kind::Int, depth - 1)),
                4 => format!("({} BETWEEN {} AND {})", expr(rng, Kind::Int, depth - 1), expr(rng, Kind::Int, 0), expr(rng, Kind::Int, 0)),
                _ => {
                    let cmp = *rng.pick(&["=", "<>", "<", "<=", ">", ">=", "<=>"]);
                    format!("({} {cmp} {})", expr(rng, operand, depth - 1), expr(rng, operand, depth - 1))
                }
            }
        }
    }
}

fn run(session: &Session, sql: &str, codegen: bool) -> (String, bool) {
    session.set_conf("spark.sql.codegen.wholeStage", &codegen.to_string()).expect("setting");
    match session.sql(sql) {
        Err(e) => (format!("error: {e}"), false),
        Ok(df) => {
            let compiled = has_compiled_stage(df.physical_plan());
            if std::env::var("KILN_SHOW_FALLBACKS").is_ok() {
                let mut r = vec![];
                fallbacks(df.physical_plan(), &mut r);
                r.iter().for_each(|r| eprintln!("fallback: {r}"));
            }
            match df.collect() {
                Err(e) => (format!("error: {e}"), compiled),
                Ok(batches) => {
                    let csv = kiln::format::result_csv(&df.schema(), &batches);
                    let mut lines: Vec<&str> = csv.lines().collect();
                    lines.sort_unstable();
                    (lines.join("\n"), compiled)
                }
            }
        }
    }
}

fn fallbacks(plan: &PhysicalPlan, out: &mut Vec<String>) {
    if let PhysicalPlan::WholeStageCodegen { fallback: Some(r), .. } = plan {
        out.push(r.clone());
    }
    plan.children().iter().for_each(|c| fallbacks(c, out));
}

/// Hash joins in the plan, and those probed by a compiled stage.
fn hash_joins(plan: &PhysicalPlan) -> (usize, usize) {
    let own = usize::from(matches!(plan, PhysicalPlan::HashJoin { .. }));
    let fused = match plan {
        PhysicalPlan::WholeStageCodegen { fallback: None, child, .. } => kiln::codegen::StageSpec::from_plan(child).map_or(0, |s| s.joins().len()),
        _ => 0,
    };
    plan.children().iter().map(|c| hash_joins(c)).fold((own, fused), |(a, b), (c, d)| (a + c, b + d))
}

fn has_compiled_stage(plan: &PhysicalPlan) -> bool {
    matches!(plan, PhysicalPlan::WholeStageCodegen { fallback: None, .. }) || plan.children().iter().any(|c| has_compiled_stage(c))
}

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

/// A random join of the stream table `t` (or a build side joined before) with `table` as
/// `alias`: the join clause and whether the build side's columns stay visible.
fn join_clause(rng: &mut Rng, visible: &[String], table: &str, alias: &str) -> (String, bool) {
    let (kind, keeps) = *rng.pick(&[("JOIN", true), ("LEFT JOIN", true), ("LEFT SEMI JOIN", false), ("LEFT ANTI JOIN", false)]);
    // Keys with few distinct values (matches, duplicate keys); doubles with NaN and -0.0;
    // strings (the general path); an int against a bigint (a cast on the stream key).
    let key = *rng.pick(&["i", "k", "f", "dt", "b", "i|l", "k,i", "dt,b"]);
    let from = rng.pick(visible).clone();
    let on: Vec<String> = key
        .split(',')
        .map(|k| match k.split_once('|') {
            Some((a, b)) => format!("CAST({from}.{a} AS BIGINT) = CAST({alias}.{a} AS BIGINT) + 0 * {alias}.{b}"),
            None => format!("{from}.{k} = {alias}.{k}"),
        })
        .collect();
    let residual = match rng.below(4) {
        0 => format!(" AND ({alias}.d > {from}.d OR {alias}.b)"),
        1 => format!(" AND {alias}.k <> 'a'"),
        _ => String::new(),
    };
    (format!(" {kind} {table} {alias} ON {}{residual}", on.join(" AND ")), keeps)
}

#[test]
fn compiled_and_interpreted_agree_on_join_pipelines() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let mut rng = Rng(0x10_1a55);
    let session = Session::builder().config("spark.sql.shuffle.partitions", "3").build().expect("session");
    // The stream side, with an empty batch among the others; two small build sides, one of
    // them without NULLs; and an empty one.
    let mut batches: Vec<RecordBatch> = (0..3).map(|_| table(&mut rng, 500, 15)).collect();
    batches.insert(1, table(&mut rng, 0, 0));
    session.register_batches("t", batches).expect("stream table");
    session.register_batches("u", vec![table(&mut rng, 60, 20)]).expect("build table");
    session.register_batches("w", vec![table(&mut rng, 40, 0)]).expect("build table without NULLs");
    session.register_batches("e", vec![table(&mut rng, 0, 0)]).expect("empty build table");
    let (mut total, mut compiled, mut multi) = (0, 0, 0);
    for case in 0..160 {
        let joins = 1 + rng.below(3) as usize;
        let mut visible = vec!["t".to_string()];
        let mut sql_joins = String::new();
        for n in 0..joins {
            let table = *rng.pick(&["u", "u", "w", "w", "e"]);
            let alias = format!("j{n}");
            let (clause, keeps) = join_clause(&mut rng, &visible, table, &alias);
            sql_joins.push_str(&clause);
            if keeps {
                visible.push(alias);
            }
        }
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
        let (interpreted, _) = run(&session, &sql, false);
        let (generated, _) = run(&session, &sql, true);
        assert_eq!(generated, interpreted, "case {case} differs:\n{sql}");
        assert!(!interpreted.starts_with("error"), "case {case} failed: {sql}\n{interpreted}");
        // Every join runs in a compiled stage (no silent fallback).
        session.set_conf("spark.sql.codegen.wholeStage", "true").expect("setting");
        let plan = session.sql(&sql).expect("plans");
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

/// `table` with a column `s` of strings past the group table's 4-byte prefix (sharing long
/// prefixes, differing in their last byte or length).
fn with_long_strings(rng: &mut Rng, batch: RecordBatch, null_pct: u64) -> RecordBatch {
    let words = ["Customer#000000001", "Customer#000000002", "Customer#00000000", "Customer#0000000012", "abcde", "abcdf", "abcd", "abcdefgh", "abcdefghi"];
    let s: StringArray = (0..batch.num_rows()).map(|_| (!rng.chance(null_pct)).then(|| *rng.pick(&words))).collect();
    let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    fields.push(Field::new("s", DataType::Utf8, true));
    let mut columns = batch.columns().to_vec();
    columns.push(Arc::new(s));
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("consistent batch")
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
