//! The fuzz targets' logic: one function per target, taking the fuzzer's bytes and returning
//! Ok (with what was checked) or the failure found (a panic, a wrong answer, a silent fallback).
//! The cargo-fuzz binaries in `fuzz/fuzz_targets/` call these functions; `tests/fuzz_replay.rs`
//! includes this file by path and replays the committed corpora and seeded cases through them on
//! stable Rust. The generators are shared with `tests/codegen_differential.rs` and
//! `tests/no_panic.rs`.
#![allow(dead_code)] // each including test uses its own part

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use arbitrary::Unstructured;
use arrow::array::{ArrayRef, BooleanArray, Date32Array, Decimal128Array, Float64Array, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use kiln::physical::PhysicalPlan;
use kiln::{KilnError, Session};

#[path = "choices.rs"]
pub mod choices;
pub use choices::{Choices, Rng};

/// What one input checked: comparisons made (0 when every query failed or was skipped) and
/// how many of them ran generated code.
#[derive(Debug, Default, Clone, Copy)]
pub struct Checked {
    pub compared: u32,
    pub compiled: u32,
}

impl std::ops::AddAssign for Checked {
    fn add_assign(&mut self, o: Checked) {
        self.compared += o.compared;
        self.compiled += o.compiled;
    }
}

/// A target's verdict on one input.
pub type Outcome = Result<Checked, String>;

/// One worker thread: when rows in several partitions fail (a cast overflow here, a division by
/// zero there), which error a query reports depends on which partition fails first; one worker
/// runs partitions in order, so both modes report the same one. (Also keeps a fuzzer on one
/// core.)
pub fn init() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
}

/// `f`, with a panic turned into the failure (under libFuzzer a panic aborts first, which is
/// the crash it records).
fn guarded<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
        format!("panicked ({msg}) on: {what}")
    })
}

// ---------------------------------------------------------------------------------------------
// Running queries
// ---------------------------------------------------------------------------------------------

/// A query's answer in one mode.
pub struct Answer {
    /// The result as CSV lines sorted, the header among them (order is undefined without ORDER
    /// BY), or `error: ...`.
    pub text: String,
    /// The data lines sorted, without the header (names differ between equivalent queries).
    pub rows: Vec<String>,
    /// The error's class (`error_class`) when the query failed.
    pub error: Option<String>,
    /// Some stage of the plan runs as generated code.
    pub compiled: bool,
    /// Stages planned to compile that ran interpreted anyway (a silent fallback).
    pub fell_back: u64,
}

impl Answer {
    fn failed(e: &KilnError, compiled: bool) -> Answer {
        Answer { text: format!("error: {e}"), rows: vec![], error: Some(error_class(e)), compiled, fell_back: 0 }
    }
}

/// A KilnError's class for comparing failures across modes: Spark's error class where the
/// message has one (`[DIVIDE_BY_ZERO] ...`), else the kind of error.
pub fn error_class(e: &KilnError) -> String {
    let bracketed = |m: &str| m.strip_prefix('[').and_then(|r| r.split_once(']')).map(|(c, _)| c.to_string());
    match e {
        KilnError::Analysis(a) => a.class.to_string(),
        KilnError::Execution(m) => bracketed(m).unwrap_or_else(|| "EXECUTION".into()),
        KilnError::Parse(_) => "PARSE".into(),
        KilnError::Unsupported(_) => "UNSUPPORTED".into(),
        KilnError::Io { .. } => "IO".into(),
        KilnError::Config(_) => "CONFIG".into(),
        KilnError::Arrow(_) => "ARROW".into(),
        KilnError::Parquet(_) => "PARQUET".into(),
        KilnError::Cancelled => "CANCELLED".into(),
        KilnError::Internal(_) => "INTERNAL".into(),
        #[allow(unreachable_patterns)]
        _ => "OTHER".into(),
    }
}

/// Runs `sql` with whole-stage codegen on or off.
pub fn answer(session: &Session, sql: &str, codegen: bool) -> Answer {
    let _ = session.set_conf("spark.sql.codegen.wholeStage", if codegen { "true" } else { "false" });
    let df = match session.sql(sql) {
        Err(e) => return Answer::failed(&e, false),
        Ok(df) => df,
    };
    let compiled = has_compiled_stage(df.physical_plan());
    if std::env::var("KILN_SHOW_FALLBACKS").is_ok() {
        let mut r = vec![];
        fallbacks(df.physical_plan(), &mut r);
        r.iter().for_each(|r| eprintln!("fallback: {r}"));
    }
    match df.collect_with_metrics() {
        Err(e) => Answer::failed(&e, compiled),
        Ok((batches, metrics)) => {
            let csv = kiln::format::result_csv(&df.schema(), &batches);
            let mut rows: Vec<String> = csv.lines().skip(1).map(String::from).collect();
            rows.sort_unstable();
            let mut lines: Vec<&str> = csv.lines().collect();
            lines.sort_unstable();
            Answer { text: lines.join("\n"), rows, error: None, compiled, fell_back: metrics.codegen.stages_fell_back }
        }
    }
}

/// `answer` as the text compared by the differential tests: sorted CSV lines (header among
/// them) or `error: <message>`, and whether a stage compiled.
pub fn run(session: &Session, sql: &str, codegen: bool) -> (String, bool) {
    let a = answer(session, sql, codegen);
    (a.text, a.compiled)
}

/// The reasons of the plan's stages that run interpreted.
pub fn fallbacks(plan: &PhysicalPlan, out: &mut Vec<String>) {
    if let PhysicalPlan::WholeStageCodegen { fallback: Some(r), .. } = plan {
        out.push(r.clone());
    }
    plan.children().iter().for_each(|c| fallbacks(c, out));
}

/// Hash joins in the plan, and those probed by a compiled stage.
pub fn hash_joins(plan: &PhysicalPlan) -> (usize, usize) {
    let own = usize::from(matches!(plan, PhysicalPlan::HashJoin { .. }));
    let fused = match plan {
        PhysicalPlan::WholeStageCodegen { fallback: None, child, .. } => kiln::codegen::StageSpec::from_plan(child).map_or(0, |s| s.joins().len()),
        _ => 0,
    };
    plan.children().iter().map(|c| hash_joins(c)).fold((own, fused), |(a, b), (c, d)| (a + c, b + d))
}

pub fn has_compiled_stage(plan: &PhysicalPlan) -> bool {
    matches!(plan, PhysicalPlan::WholeStageCodegen { fallback: None, .. }) || plan.children().iter().any(|c| has_compiled_stage(c))
}

/// Compiled against interpreted: equal rows, or errors of the same class; a compiled run whose
/// stages silently fell back to the interpreter is a failure too.
fn compare_modes(session: &Session, sql: &str) -> Outcome {
    let (interpreted, compiled) = guarded(sql, || (answer(session, sql, false), answer(session, sql, true)))?;
    if compiled.fell_back > 0 {
        return Err(format!("{} stage(s) silently fell back to the interpreter: {sql}", compiled.fell_back));
    }
    let same = match (&interpreted.error, &compiled.error) {
        (Some(a), Some(b)) => a == b,
        (None, None) => interpreted.text == compiled.text,
        _ => false,
    };
    if !same {
        let cut = |s: &str| s.chars().take(2000).collect::<String>();
        return Err(format!("compiled and interpreted differ on: {sql}\ninterpreted: {}\ncompiled: {}", cut(&interpreted.text), cut(&compiled.text)));
    }
    Ok(Checked { compared: u32::from(interpreted.error.is_none()), compiled: u32::from(compiled.compiled) })
}

// ---------------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------------

/// A batch of every type; `null_pct` percent of the values are NULL (0: none, which runs the
/// generated variant that reads no validity bitmaps).
pub fn table<C: Choices>(rng: &mut C, rows: usize, null_pct: u64) -> RecordBatch {
    let null = |rng: &mut C| rng.chance(null_pct);
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

/// `batch` with more columns appended.
fn with_columns(batch: RecordBatch, extra: Vec<(Field, ArrayRef)>) -> RecordBatch {
    let mut fields: Vec<Field> = batch.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut columns = batch.columns().to_vec();
    for (f, c) in extra {
        fields.push(f);
        columns.push(c);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("consistent batch")
}

/// `table` with a column `s` of strings past the group table's 4-byte prefix (sharing long
/// prefixes, differing in their last byte or length).
pub fn with_long_strings(rng: &mut impl Choices, batch: RecordBatch, null_pct: u64) -> RecordBatch {
    let words = ["Customer#000000001", "Customer#000000002", "Customer#00000000", "Customer#0000000012", "abcde", "abcdf", "abcd", "abcdefgh", "abcdefghi"];
    let s: StringArray = (0..batch.num_rows()).map(|_| (!rng.chance(null_pct)).then(|| *rng.pick(&words))).collect();
    with_columns(batch, vec![(Field::new("s", DataType::Utf8, true), Arc::new(s))])
}

/// `batch` with columns at the types' edges: `n` INT and `x` BIGINT at their extremes, `m`
/// DECIMAL(38,6) near its 38 digits.
pub fn with_edges(rng: &mut impl Choices, batch: RecordBatch, null_pct: u64) -> RecordBatch {
    let rows = batch.num_rows();
    let ints = [i32::MIN, i32::MAX, 0, -1, 1, i32::MIN + 1, i32::MAX - 1];
    let longs = [i64::MIN, i64::MAX, 0, -1, 1, i64::MIN + 1, i32::MAX as i64 + 1];
    let max38 = 10i128.pow(38) - 1;
    let decimals = [max38, -max38, 0, 1, -1, 10i128.pow(32), max38 / 2 + 1, 999_999];
    let n: Int32Array = (0..rows).map(|_| (!rng.chance(null_pct)).then(|| *rng.pick(&ints))).collect();
    let x: Int64Array = (0..rows).map(|_| (!rng.chance(null_pct)).then(|| *rng.pick(&longs))).collect();
    let m: Decimal128Array = (0..rows).map(|_| (!rng.chance(null_pct)).then(|| *rng.pick(&decimals))).collect();
    let m = m.with_precision_and_scale(38, 6).expect("valid decimal");
    with_columns(
        batch,
        vec![
            (Field::new("n", DataType::Int32, true), Arc::new(n)),
            (Field::new("x", DataType::Int64, true), Arc::new(x)),
            (Field::new("m", DataType::Decimal128(38, 6), true), Arc::new(m)),
        ],
    )
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Kind {
    Int,
    Long,
    Double,
    Decimal,
    Date,
    Bool,
}

/// A random SQL expression of `kind` over `table`'s columns, `depth` levels deep at most.
pub fn expr(rng: &mut impl Choices, kind: Kind, depth: u32) -> String {
    expr_with(rng, kind, depth, false)
}

/// `expr`, with `edges` also over `with_edges`'s and `with_long_strings`'s columns and literals at
/// the types' limits.
pub fn expr_with<C: Choices>(rng: &mut C, kind: Kind, depth: u32, edges: bool) -> String {
    let leaf = depth == 0 || rng.chance(30);
    if leaf && edges && rng.chance(30) {
        return edge_leaf(rng, kind);
    }
    let sub = |rng: &mut C, kind: Kind| expr_with(rng, kind, depth - 1, edges);
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
            let (a, b) = (sub(rng, kind), sub(rng, kind));
            match op {
                "CASE" => format!("CASE WHEN {} THEN {a} ELSE {b} END", sub(rng, Kind::Bool)),
                "NEG" => format!("(-{a})"),
                _ if kind == Kind::Double && rng.chance(25) => format!("({a} / {b})"),
                op => format!("({a} {op} {b})"),
            }
        }
        Kind::Date => "dt".to_string(),
        Kind::Bool => {
            let operand = *rng.pick(&[Kind::Int, Kind::Long, Kind::Double, Kind::Decimal, Kind::Date]);
            match rng.below(7) {
                0 => format!("({} AND {})", sub(rng, Kind::Bool), sub(rng, Kind::Bool)),
                1 => format!("({} OR {})", sub(rng, Kind::Bool), sub(rng, Kind::Bool)),
                2 => format!("(NOT {})", sub(rng, Kind::Bool)),
                3 if rng.chance(50) => format!("({} IN (1, 2, -3, NULL))", sub(rng, Kind::Int)),
                // Longer than 10 values: an INSET after OptimizeIn.
                3 => format!("({} NOT IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, -7))", sub(rng, Kind::Int)),
                4 => format!("({} BETWEEN {} AND {})", sub(rng, Kind::Int), expr_with(rng, Kind::Int, 0, edges), expr_with(rng, Kind::Int, 0, edges)),
                _ => {
                    let cmp = *rng.pick(&["=", "<>", "<", "<=", ">", ">=", "<=>"]);
                    format!("({} {cmp} {})", sub(rng, operand), sub(rng, operand))
                }
            }
        }
    }
}

/// A leaf at a type's edge: extreme values, NaN and -0.0, empty and long strings.
fn edge_leaf(rng: &mut impl Choices, kind: Kind) -> String {
    match kind {
        Kind::Int => rng.pick(&["n", "2147483647", "CAST(-2147483648 AS INT)", "abs(n)", "CAST(x AS INT)", "length(s)", "CAST(m AS INT)"]),
        Kind::Long => rng.pick(&["x", "9223372036854775807", "CAST(-9223372036854775808 AS BIGINT)", "CAST(n AS BIGINT)", "abs(x)", "CAST(m AS BIGINT)"]),
        Kind::Double => rng.pick(&[
            "CAST('NaN' AS DOUBLE)",
            "CAST('-0.0' AS DOUBLE)",
            "CAST('Infinity' AS DOUBLE)",
            "CAST(x AS DOUBLE)",
            "CAST(m AS DOUBLE)",
            "(f * 0.0)",
            "CAST(1.0E308 AS DOUBLE)",
        ]),
        Kind::Decimal => rng.pick(&["m", "CAST(99999999.99 AS DECIMAL(10,2))", "CAST(0.000001 AS DECIMAL(38,6))", "CAST(n AS DECIMAL(10,0))", "CAST(x AS DECIMAL(20,0))", "(-m)"]),
        Kind::Date => rng.pick(&["DATE '0001-01-01'", "DATE '9999-12-31'", "DATE '1970-01-01'"]),
        Kind::Bool => rng.pick(&[
            "s = ''",
            "s LIKE 'Customer#%'",
            "s > 'abcd'",
            "length(s) > 17",
            "n = -2147483648",
            "x < 0",
            "m > 0",
            "f = CAST('-0.0' AS DOUBLE)",
            "f IN (CAST('NaN' AS DOUBLE), 0.0)",
            "s IN ('abcde', 'abcd', '')",
            "k = s",
        ]),
    }
    .to_string()
}

/// Join kinds a stage fuses (inner, stream-preserving outer, semi, anti) and whether the build
/// side's columns stay visible.
pub const FUSED_JOINS: &[(&str, bool)] = &[("JOIN", true), ("LEFT JOIN", true), ("LEFT SEMI JOIN", false), ("LEFT ANTI JOIN", false)];
/// Every join kind with an ON clause.
pub const ALL_JOINS: &[(&str, bool)] = &[
    ("JOIN", true),
    ("LEFT JOIN", true),
    ("LEFT SEMI JOIN", false),
    ("LEFT ANTI JOIN", false),
    ("RIGHT JOIN", true),
    ("FULL OUTER JOIN", true),
];

/// A random join of the stream table `t` (or a build side joined before) with `table` as
/// `alias`: the join clause and whether the build side's columns stay visible.
pub fn join_clause(rng: &mut impl Choices, kinds: &[(&str, bool)], visible: &[String], table: &str, alias: &str) -> (String, bool) {
    let (kind, keeps) = *rng.pick(kinds);
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

/// `n` joins onto `t`, each with a table picked from `builds` (aliased `j0`, `j1`, ...) by
/// `join_clause`: the clauses, and the aliases whose columns stay visible (`t` first).
pub fn join_chain(rng: &mut impl Choices, kinds: &[(&str, bool)], builds: &[&str], n: usize) -> (String, Vec<String>) {
    let mut visible = vec!["t".to_string()];
    let mut sql_joins = String::new();
    for k in 0..n {
        let table = *rng.pick(builds);
        let alias = format!("j{k}");
        let (clause, keeps) = join_clause(rng, kinds, &visible, table, &alias);
        sql_joins.push_str(&clause);
        if keeps {
            visible.push(alias);
        }
    }
    (sql_joins, visible)
}

// ---------------------------------------------------------------------------------------------
// sql_pipeline: SQL text, and SQL from a grammar, end to end: never a panic
// ---------------------------------------------------------------------------------------------

pub const TOKENS: &[&str] = &[
    "SELECT", "FROM", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "JOIN", "LEFT JOIN", "FULL OUTER JOIN", "ON", "USING",
    "AND", "OR", "NOT", "IS NULL", "IS NOT NULL", "IN", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "AS",
    "INT", "DECIMAL(10,2)", "DATE", "STRING", "(", ")", ",", "*", "+", "-", "/", "%", "=", "<>", "<", ">=", "1", "0", "-1",
    "2147483647", "9223372036854775807", "1.5", "'x'", "'2026-10-01'", "NULL", "TRUE", "orders", "customers", "o", "c",
    "order_id", "customer_id", "status", "amount", "order_date", "name", "country", "sum(amount)", "count(*)", "avg(amount)",
    "lower(status)", "substring(name, 0, -1)", "round(amount, -2)", "DATE '2026-02-30'", "INTERVAL '1' DAY", "DISTINCT", ";",
];

pub const VALID: &[&str] = &[
    "SELECT customer_id, SUM(amount) AS revenue FROM orders WHERE status = 'paid' GROUP BY customer_id",
    "SELECT c.name, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id ORDER BY c.name",
    "SELECT order_id, amount * 2 - 1 FROM orders WHERE order_date >= DATE '2026-10-01' - INTERVAL '3' DAY",
];

/// The tables `t`, `u` (no NULLs) and `e` (empty) of `table`'s columns, made once.
fn small_tables() -> &'static [(&'static str, Vec<RecordBatch>)] {
    static TABLES: OnceLock<Vec<(&'static str, Vec<RecordBatch>)>> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut rng = Rng(0x7ab1e5);
        vec![
            ("t", vec![table(&mut rng, 40, 20), table(&mut rng, 0, 0), table(&mut rng, 25, 20)]),
            ("u", vec![table(&mut rng, 30, 0)]),
            ("e", vec![table(&mut rng, 0, 0)]),
        ]
    })
}

/// A scratch folder for this process (the warehouse of the sessions the targets make).
fn scratch() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary folder")).path()
}

/// A fresh session over the demo shop tables and `small_tables`, writing (CREATE TABLE, INSERT)
/// only inside `warehouse`, with a time limit per query.
pub fn sql_session(warehouse: &Path) -> Session {
    let dir = warehouse.to_string_lossy().to_string();
    let s = Session::builder()
        .config("spark.sql.shuffle.partitions", "3")
        .config("spark.sql.warehouse.dir", dir.clone())
        .config("kiln.files.allowedRoots", dir)
        .config("kiln.query.timeout", "2s")
        .build()
        .expect("session");
    s.register_batches("orders", vec![kiln::datasource::demo::shop_orders()]).expect("orders");
    s.register_batches("customers", vec![kiln::datasource::demo::shop_customers()]).expect("customers");
    for (name, batches) in small_tables() {
        s.register_batches(name, batches.clone()).expect("table");
    }
    s
}

/// Runs `sql` to the end in both modes; a panic is the only failure. Ok(true) when it
/// produced rows.
pub fn runs_without_panic(s: &Session, sql: &str) -> Result<bool, String> {
    let mut rows = false;
    for codegen in ["true", "false"] {
        let ran = guarded(&format!("{sql} (codegen {codegen})"), || {
            s.set_conf("spark.sql.codegen.wholeStage", codegen).ok();
            match s.sql(sql) {
                Ok(df) => {
                    let _ = df.explain_string(kiln::ExplainMode::Extended);
                    df.collect().is_ok()
                }
                Err(_) => false,
            }
        })?;
        rows |= ran;
    }
    Ok(rows)
}

/// A script's statements run in order, each collected; a panic is the only failure.
fn script_without_panic(s: &Session, sql: &str) -> Result<bool, String> {
    guarded(sql, || match s.sql_script(sql) {
        Ok(frames) => frames.iter().all(|df| df.collect().is_ok()),
        Err(_) => false,
    })
}

/// A scalar expression for the grammar: `expr`'s, or a function call kiln's interpreter has.
fn scalar(c: &mut impl Choices, depth: u32) -> String {
    match c.below(6) {
        0 => format!("{}({})", c.pick(&["upper", "lower", "length", "trim", "reverse"]), c.pick(&["k", "CAST(i AS STRING)", "concat(k, '-', CAST(d AS STRING))"])),
        1 => format!("coalesce({}, {})", expr(c, Kind::Int, depth), expr(c, Kind::Int, 0)),
        2 => c.pick(&["year(dt)", "month(dt)", "dayofmonth(dt)", "date_add(dt, 3)", "last_day(dt)", "datediff(dt, DATE '1997-01-01')"]).to_string(),
        3 => format!("round({}, {})", expr(c, Kind::Decimal, depth), c.below(4) as i64 - 1),
        4 => format!("nullif({}, {})", expr(c, Kind::Long, depth), expr(c, Kind::Long, 0)),
        _ => {
            let kind = *c.pick(&[Kind::Int, Kind::Long, Kind::Double, Kind::Decimal, Kind::Date, Kind::Bool]);
            expr(c, kind, depth)
        }
    }
}

/// A FROM item over `table`'s columns (unqualified names resolve in it).
fn source(c: &mut impl Choices, depth: u32) -> String {
    match c.below(if depth == 0 { 3 } else { 7 }) {
        0 | 1 => c.pick(&["t", "u", "e"]).to_string(),
        2 => "(SELECT * FROM t UNION ALL SELECT * FROM u) s".into(),
        3 => format!("({}) q", query(c, depth - 1, true)),
        4 => {
            let kind = c.pick(&["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"]);
            let key = c.pick(&["i", "k", "b", "dt", "f"]);
            format!("(SELECT x.* FROM t x {kind} u y ON x.{key} = y.{key}) j")
        }
        5 => format!("(SELECT * FROM t WHERE {} LIMIT {}) w", expr(c, Kind::Bool, depth), c.below(30)),
        _ => format!("(SELECT * FROM t WHERE i IN (SELECT i FROM u WHERE {})) v", expr(c, Kind::Bool, depth - 1)),
    }
}

/// A query over `table`'s columns; `star` makes it keep every column (a FROM item).
fn query(c: &mut impl Choices, depth: u32, star: bool) -> String {
    let from = source(c, depth);
    let filter = if c.chance(60) { format!(" WHERE {}", expr(c, Kind::Bool, 2 + depth.min(1))) } else { String::new() };
    if star {
        return format!("SELECT * FROM {from}{filter}");
    }
    match c.below(6) {
        // Grouped, with string and multi-column keys, HAVING and ORDER BY.
        0 | 1 => {
            let keys = *c.pick(&["k", "i", "k, b", "dt, k", "d", "f", "b, i, k", "i - 1", "CAST(f AS INT)"]);
            let aggs = ["count(*)", "sum(i)", "avg(f)", "min(k)", "max(d)", "count(DISTINCT k)", "sum(d)", "max(dt)", "min(e)", "avg(d)", "count(l)"];
            let a1 = *c.pick(&aggs);
            let a2 = *c.pick(&aggs);
            let having = if c.chance(30) { format!(" HAVING {} > {}", a1, c.below(5)) } else { String::new() };
            let order = if c.chance(40) { format!(" ORDER BY {keys}") } else { String::new() };
            format!("SELECT {keys}, {a1}, {a2} FROM {from}{filter} GROUP BY {keys}{having}{order}")
        }
        // A global aggregate.
        2 => format!("SELECT count(*), sum({}), max({}) FROM {from}{filter}", expr(c, Kind::Long, 2), scalar(c, 1)),
        // Window functions.
        3 => {
            let w = *c.pick(&["row_number()", "rank()", "dense_rank()", "sum(i)", "count(*)", "max(d)", "lag(i)", "lead(k)"]);
            let order = if w.ends_with("()") || w.starts_with("la") || w.starts_with("le") { " ORDER BY i, l" } else { "" };
            format!("SELECT k, i, {w} OVER (PARTITION BY {}{order}) FROM {from}{filter}", c.pick(&["k", "b", "dt"]))
        }
        // A set operation of two projections of the same shape.
        4 => {
            let op = *c.pick(&["UNION", "UNION ALL", "EXCEPT", "INTERSECT", "EXCEPT ALL", "INTERSECT ALL"]);
            let (a, b) = (expr(c, Kind::Int, 2), expr(c, Kind::Int, 2));
            let other = source(c, 0);
            format!("SELECT {a}, k FROM {from}{filter} {op} SELECT {b}, k FROM {other}")
        }
        // A projection, perhaps DISTINCT, ordered and limited.
        _ => {
            let distinct = if c.chance(25) { "DISTINCT " } else { "" };
            let cols: Vec<String> = (0..1 + c.below(4)).map(|_| scalar(c, 2)).collect();
            let tail = match c.below(3) {
                0 => format!(" ORDER BY 1 LIMIT {}", c.below(20)),
                1 => " ORDER BY 1 DESC NULLS FIRST".into(),
                _ => String::new(),
            };
            format!("SELECT {distinct}{} FROM {from}{filter}{tail}", cols.join(", "))
        }
    }
}

/// Replaces, drops or duplicates a few words of `sql`.
fn mutate_words(c: &mut impl Choices, sql: &str) -> String {
    let mut words: Vec<String> = sql.split(' ').map(String::from).collect();
    for _ in 0..1 + c.below(3) {
        if words.is_empty() {
            break;
        }
        let i = c.below(words.len() as u64) as usize;
        match c.below(3) {
            0 => words[i] = c.pick(TOKENS).to_string(),
            1 => {
                words.remove(i);
            }
            _ => {
                let w = c.pick(TOKENS).to_string();
                words.insert(i, w)
            }
        }
    }
    words.join(" ")
}

/// `sql_pipeline`: an input starting with an ASCII byte is SQL text (a script: DDL and DML run
/// in a scratch warehouse); any other is decisions for the grammar-based generator (a query,
/// perhaps with a few words mutated). Parse, analyze, optimize, plan and run in both modes:
/// rows or a KilnError, never a panic.
pub fn sql_pipeline(data: &[u8]) -> Outcome {
    init();
    let warehouse = tempfile::tempdir_in(scratch()).map_err(|e| format!("no scratch folder: {e}"))?;
    let s = sql_session(warehouse.path());
    let ran = if data.first().is_some_and(|b| *b < 0x80) {
        let text = String::from_utf8_lossy(data);
        // Settings could lift the confinement to the scratch folder.
        if text.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w.eq_ignore_ascii_case("set") || w.eq_ignore_ascii_case("reset")) {
            return Ok(Checked::default());
        }
        script_without_panic(&s, &text)?
    } else {
        let mut u = Unstructured::new(data.get(1..).unwrap_or_default());
        let mut sql = query(&mut u, 2, false);
        if u.chance(20) {
            sql = mutate_words(&mut u, &sql);
        }
        runs_without_panic(&s, &sql)?
    };
    Ok(Checked { compared: u32::from(ran), compiled: 0 })
}

// ---------------------------------------------------------------------------------------------
// codegen_differential: generated pipelines, compiled against interpreted
// ---------------------------------------------------------------------------------------------

/// The differential tables over every column kind: `t` (NULLs, an empty batch among three),
/// `u` and `w` (no NULLs) and `e` (empty), each with `with_long_strings` and `with_edges`.
fn differential_session() -> &'static Session {
    static SESSION: OnceLock<Session> = OnceLock::new();
    SESSION.get_or_init(|| {
        let mut rng = Rng(0xd1ff);
        let mut make = |rows: usize, nulls: u64| {
            let b = table(&mut rng, rows, nulls);
            let b = with_long_strings(&mut rng, b, nulls);
            with_edges(&mut rng, b, nulls)
        };
        let session = Session::builder().config("spark.sql.shuffle.partitions", "3").config("kiln.query.timeout", "5s").build().expect("session");
        session.register_batches("t", vec![make(120, 15), make(0, 0), make(150, 15), make(90, 30)]).expect("t");
        session.register_batches("u", vec![make(80, 0), make(70, 0)]).expect("u");
        session.register_batches("w", vec![make(30, 0)]).expect("w");
        session.register_batches("e", vec![make(0, 0)]).expect("e");
        session
    })
}

/// One generated query for `codegen_differential`.
pub fn differential_query(c: &mut impl Choices) -> String {
    let table = *c.pick(&["t", "u"]);
    let kind = *c.pick(&[Kind::Int, Kind::Long, Kind::Double, Kind::Decimal]);
    let pred = expr_with(c, Kind::Bool, 3, true);
    match c.below(6) {
        0 => format!("SELECT {} AS x, {} AS y, k, s FROM {table} WHERE {pred}", expr_with(c, kind, 3, true), expr_with(c, Kind::Bool, 2, true)),
        1 => {
            let value = expr_with(c, kind, 3, true);
            let keys = *c.pick(&["k", "s", "k, i", "s, k", "f, b", "d, k, b, s", "i, l, dt", "e, s, f", "n", "x, m", "big", "dt"]);
            format!("SELECT {keys}, count(*), count(x), sum(x), avg(x), min(x), max(x) FROM (SELECT {keys}, {value} AS x FROM {table} WHERE {pred}) q GROUP BY {keys}")
        }
        2 => {
            let value = expr_with(c, kind, 2, true);
            format!("SELECT count(*), sum(v), min(v), max(v), avg(v) FROM (SELECT {value} AS v FROM {table} WHERE {pred}) q")
        }
        3 => {
            // Probes of up to three joins of every kind, then a filter, a projection or an
            // aggregate over the joined rows.
            let joins = 1 + c.below(3) as usize;
            let (sql_joins, visible) = join_chain(c, ALL_JOINS, &["u", "w", "w", "e", "t"], joins);
            let last = visible.last().cloned().unwrap_or_else(|| "t".into());
            let filter = c.pick(&["", " WHERE t.i > -50", " WHERE t.k <> 'b' OR t.k IS NULL", " WHERE t.x > 0 OR t.m < 0"]).to_string();
            match c.below(3) {
                0 => format!("SELECT t.k, t.i, t.f, {last}.i AS li, {last}.s AS ls, {last}.d + t.d AS v, {last}.m FROM t{sql_joins}{filter}"),
                1 => format!("SELECT count(*), count({last}.i), sum({last}.d), min({last}.f), max(t.l), sum({last}.x) FROM t{sql_joins}{filter}"),
                _ => format!("SELECT t.k, {last}.b, {last}.s, count(*), sum({last}.l), max({last}.dt), min({last}.m) FROM t{sql_joins}{filter} GROUP BY t.k, {last}.b, {last}.s"),
            }
        }
        4 => {
            let residual = c.pick(&["t.l > u.l", "t.d <> u.d", "t.f < u.f OR t.b", "t.s < u.s", "t.x <> u.x"]);
            let other = c.pick(&["u.dt > DATE '1997-06-01'", "t.e IS NOT NULL", "TRUE", "t.s IS NULL OR u.n > 0", "t.m > u.m"]);
            format!(
                "SELECT t.k, u.k, count(*), sum(t.d), sum(CASE WHEN u.k IN ('a', 'c') THEN 1 ELSE 0 END), max(u.s) \
                 FROM t JOIN u ON t.i = u.i AND {residual} WHERE {other} GROUP BY t.k, u.k"
            )
        }
        _ => {
            let cols = *c.pick(&["k", "s", "f", "d, b", "k, s", "dt, i", "m", "f, k"]);
            format!("SELECT DISTINCT {cols} FROM {table} WHERE {pred}")
        }
    }
}

/// `codegen_differential`: a generated query (expressions over every type and its edges,
/// filters, projections, joins of every kind, aggregates with string and multi-column keys)
/// run compiled and interpreted: the same rows or the same error class, and no silent fallback.
pub fn codegen_differential(data: &[u8]) -> Outcome {
    init();
    let session = differential_session();
    let mut u = Unstructured::new(data);
    let sql = differential_query(&mut u);
    // Broadcast or shuffled joins, and now and then a shuffled hash join.
    let threshold = if u.chance(30) { "-1" } else { "10MB" };
    let _ = session.set_conf("spark.sql.autoBroadcastJoinThreshold", threshold);
    let sql = if u.chance(15) { sql.replacen("SELECT ", "SELECT /*+ SHUFFLE_HASH(u) */ ", 1) } else { sql };
    let _ = session.set_conf("spark.sql.adaptive.enabled", if u.chance(50) { "true" } else { "false" });
    compare_modes(session, &sql)
}

// ---------------------------------------------------------------------------------------------
// query_oracles: SQLancer's TLP and NoREC over generated small databases
// ---------------------------------------------------------------------------------------------

/// A FROM item over `t0` (and `t1`) exposing `table`'s column names.
fn oracle_source(c: &mut impl Choices) -> String {
    match c.below(5) {
        0 | 1 => "t0".into(),
        2 => {
            let kind = *c.pick(&["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN"]);
            let key = *c.pick(&["i", "k", "b", "dt", "f", "d"]);
            let on = if kind == "CROSS JOIN" { String::new() } else { format!(" ON t0.{key} = t1.{key}") };
            format!("(SELECT t0.* FROM t0 {kind} t1{on}) q")
        }
        3 => "(SELECT k, b, min(i) AS i, max(l) AS l, min(big) AS big, max(f) AS f, sum(d) AS d, min(e) AS e, max(dt) AS dt FROM t0 GROUP BY k, b) q".into(),
        _ => "(SELECT * FROM t0 UNION ALL SELECT * FROM t1) q".into(),
    }
}

/// `query_oracles`: a small database (`t0`, `t1` of `table`'s columns) and a predicate `p`
/// from the input. TLP: the rows of a query equal the rows where p, where NOT p and where p IS
/// NULL (UNION ALL), and its DISTINCT rows those of the three (UNION). NoREC: `count(*) WHERE p`
/// equals the count of rows for which p is true in a projection. In one mode per input; a query
/// that fails (p can divide by zero) gives no verdict.
pub fn query_oracles(data: &[u8]) -> Outcome {
    init();
    let mut u = Unstructured::new(data);
    // Values from a seed (the fuzzer steers the query, not every value).
    let seed = u.below(u64::MAX);
    let rows = [u.below(14) as usize, u.below(14) as usize];
    let nulls = *u.pick(&[0, 20, 50]);
    let codegen = u.chance(50);
    let source = oracle_source(&mut u);
    let depth = 1 + u.below(3) as u32;
    let p = expr(&mut u, Kind::Bool, depth);
    let cols = *u.pick(&["*", "i, k", "k, f, b", "d, dt", "l"]);
    let mut rng = Rng(seed);
    // One session, its tables replaced per input: the same query shapes hit its stage cache.
    static SESSION: OnceLock<Session> = OnceLock::new();
    let session = SESSION.get_or_init(|| Session::builder().config("spark.sql.shuffle.partitions", "2").config("kiln.query.timeout", "5s").build().expect("session"));
    for (name, n) in ["t0", "t1"].iter().zip(rows) {
        let split = n / 2;
        let batches = vec![table(&mut rng, split, nulls), table(&mut rng, n - split, nulls)];
        session.register_batches(name, batches).map_err(|e| e.to_string())?;
    }
    let q = |sql: &str| guarded(sql, || answer(session, sql, codegen));
    let mut checked = Checked::default();
    let mut check = |what: &str, whole: &str, parts: &str, distinct: bool| -> Result<(), String> {
        let (a, b) = (q(whole)?, q(parts)?);
        if codegen && (a.fell_back > 0 || b.fell_back > 0) {
            return Err(format!("a stage silently fell back to the interpreter: {whole} / {parts}"));
        }
        if a.error.is_some() || b.error.is_some() {
            return Ok(());
        }
        let (mut x, mut y) = (a.rows, b.rows);
        if distinct {
            x.dedup();
            y.dedup();
        }
        if x != y {
            return Err(format!("{what} fails (codegen {codegen}):\n{whole}\n  => {x:?}\n{parts}\n  => {y:?}"));
        }
        checked.compared += 1;
        checked.compiled += u32::from(codegen && a.compiled);
        Ok(())
    };
    let base = format!("SELECT {cols} FROM {source}");
    let parts = |union: &str| format!("{base} WHERE {p} {union} {base} WHERE NOT ({p}) {union} {base} WHERE ({p}) IS NULL");
    check("TLP", &base, &parts("UNION ALL"), false)?;
    let distinct = base.replacen("SELECT ", "SELECT DISTINCT ", 1);
    check("TLP (DISTINCT)", &distinct, &parts("UNION"), true)?;
    check(
        "NoREC",
        &format!("SELECT count(*) FROM {source} WHERE {p}"),
        &format!("SELECT coalesce(sum(CASE WHEN {p} THEN 1 ELSE 0 END), 0) FROM {source}"),
        false,
    )?;
    Ok(checked)
}

// ---------------------------------------------------------------------------------------------
// parquet_read: mutated Parquet files through the scan
// ---------------------------------------------------------------------------------------------

/// Parquet files kiln wrote, made once per process: `table`'s columns with NULLs, without, and
/// a bigger one of several pages.
pub fn parquet_bases() -> &'static [Vec<u8>] {
    static BASES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    BASES.get_or_init(|| {
        let mut rng = Rng(0xba5e);
        let s = Session::new();
        let dir = tempfile::tempdir_in(scratch()).expect("a temporary folder");
        [(30, 20), (12, 0), (3000, 10)]
            .iter()
            .enumerate()
            .map(|(n, (rows, nulls))| {
                let batch = table(&mut rng, *rows, *nulls);
                let batch = with_long_strings(&mut rng, batch, *nulls);
                let name = format!("b{n}");
                s.register_batches(&name, vec![batch]).expect("table");
                let out = dir.path().join(&name);
                s.sql(&format!("SELECT * FROM {name}")).and_then(|df| df.write_parquet(&out, &[])).expect("kiln writes Parquet");
                let file = parquet_files(&out).into_iter().next().expect("a written file");
                std::fs::read(file).expect("readable")
            })
            .collect()
    })
}

/// The `.parquet` files under `dir`.
pub fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(parquet_files(&p));
            } else if p.extension().is_some_and(|x| x == "parquet") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A position in a file of `len` bytes, more often in the footer (the metadata).
fn position(c: &mut impl Choices, len: usize) -> usize {
    if len == 0 {
        0
    } else if c.chance(60) {
        len - 1 - c.below(len.min(600) as u64) as usize
    } else {
        c.below(len as u64) as usize
    }
}

fn insert_at(file: &mut Vec<u8>, at: usize, piece: &[u8]) {
    let tail = file.split_off(at.min(file.len()));
    file.extend_from_slice(piece);
    file.extend_from_slice(&tail);
}

/// `file` with a few edits: bytes set, bits flipped, 32-bit words set to edge values (lengths,
/// offsets, counts), ranges dropped or repeated, the end cut.
pub fn mutate_file(c: &mut impl Choices, mut file: Vec<u8>) -> Vec<u8> {
    for _ in 0..1 + c.below(6) {
        let len = file.len();
        let at = position(c, len);
        match c.below(7) {
            0 if len > 0 => file[at] = c.below(256) as u8,
            1 if len > 0 => file[at] ^= 1 << c.below(8),
            2 if len > 0 => {
                let word = *c.pick(&[0u32, 1, 0x7f, 0xff, 0x7fff_ffff, 0xffff_ffff, 0x8000_0000, len as u32, (len as u32).wrapping_sub(8)]);
                for (k, b) in word.to_le_bytes().iter().enumerate() {
                    if let Some(x) = file.get_mut(at + k) {
                        *x = *b;
                    }
                }
            }
            3 => file.truncate(at),
            4 => {
                let end = (at + 1 + c.below(64) as usize).min(len);
                file.drain(at..end);
            }
            5 => {
                let end = (at + 1 + c.below(64) as usize).min(len);
                let piece = file[at..end].to_vec();
                insert_at(&mut file, at, &piece);
            }
            _ => {
                let piece: Vec<u8> = (0..1 + c.below(16)).map(|_| c.below(256) as u8).collect();
                insert_at(&mut file, at, &piece);
            }
        }
    }
    file
}

/// `parquet_read`: a Parquet file kiln wrote, mutated as the input says (or the input itself
/// when it is a Parquet file), registered and read through the scan in both modes (every
/// column; a filter the scan prunes row groups by; an aggregate): rows or a clear error, never a
/// panic (and under the fuzzer's sanitizer, no out-of-bounds access).
pub fn parquet_read(data: &[u8]) -> Outcome {
    init();
    let file = if data.starts_with(b"PAR1") {
        data.to_vec()
    } else {
        let mut u = Unstructured::new(data);
        let base = u.pick(parquet_bases()).clone();
        mutate_file(&mut u, base)
    };
    let dir = tempfile::tempdir_in(scratch()).map_err(|e| format!("no scratch folder: {e}"))?;
    let path = dir.path().join("p.parquet");
    std::fs::write(&path, &file).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let what = format!("a Parquet file of {} bytes", file.len());
    let session = Session::builder().config("kiln.query.timeout", "5s").build().map_err(|e| e.to_string())?;
    let registered = guarded(&what, || session.register_parquet("p", &path))?;
    if registered.is_err() {
        return Ok(Checked::default());
    }
    let mut checked = Checked::default();
    for sql in [
        "SELECT * FROM p",
        "SELECT count(*), min(k), max(d), sum(l) FROM p WHERE i > 10 AND k >= 'b'",
        "SELECT k, count(*), avg(f) FROM p WHERE dt < DATE '1997-06-01' GROUP BY k",
    ] {
        let ran = runs_without_panic(&session, sql).map_err(|e| format!("{e} ({what})"))?;
        checked.compared += u32::from(ran);
    }
    Ok(checked)
}
