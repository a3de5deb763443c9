//! Tests of the SQL front end: parsed-plan text of the reference queries, each expression
//! form, each statement kind, and errors.

mod exprs;
mod reference;
mod statements;

use super::{parse_query, parse_sql, Statement};
use crate::expr::Expr;
use crate::plan::LogicalPlan;

/// Drops the digits after each `#`, so plans compare without their ExprIds.
pub(crate) fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut after_hash = false;
    for ch in text.chars() {
        if after_hash && ch.is_ascii_digit() {
            continue;
        }
        after_hash = ch == '#';
        out.push(ch);
    }
    out.trim_end().to_string()
}

/// The parsed plan of one query, ids normalized.
pub(super) fn plan(sql: &str) -> String {
    match parse_query(sql) {
        Ok(p) => normalize(&p.tree_string()),
        Err(e) => panic!("{sql}\nfailed: {e}"),
    }
}

/// The one expression of `SELECT <text>`.
pub(super) fn expr(text: &str) -> Expr {
    match parse_query(&format!("SELECT {text}")) {
        Ok(LogicalPlan::Project { mut list, .. }) if list.len() == 1 => list.remove(0),
        Ok(LogicalPlan::Aggregate { mut aggregates, .. }) if aggregates.len() == 1 => aggregates.remove(0),
        other => panic!("SELECT {text}: {other:?}"),
    }
}

/// The error of parsing `sql`, as the user sees it.
pub(super) fn err(sql: &str) -> String {
    match parse_sql(sql) {
        Ok(s) => panic!("{sql}\nparsed, expected an error: {s:?}"),
        Err(e) => e.to_string(),
    }
}

/// The only statement of `sql`.
pub(super) fn statement(sql: &str) -> Statement {
    match parse_sql(sql) {
        Ok(mut v) if v.len() == 1 => v.remove(0),
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn normalizer_drops_ids_only() {
    assert_eq!(normalize("'COUNT(1) AS orders#173, x#12L, #\n"), "'COUNT(1) AS orders#, x#L, #");
}

/// A short statement parses on the thread's own stack and a long left-deep chain on a stack of
/// its own: on a small thread stack neither overflows (an overflow aborts the test binary).
#[test]
fn statements_parse_within_a_small_thread_stack() {
    let chain = |op: &str, n: usize| format!("SELECT {}", vec!["1"; n].join(op));
    let union = (0..2_000).map(|i| format!("SELECT {i}")).collect::<Vec<_>>().join(" UNION ALL ");
    let nested = format!("SELECT * FROM {} (SELECT 1 AS a) {}", "(SELECT * FROM ".repeat(20), ") AS q".repeat(20));
    for sql in [chain(" + ", 3), chain(" + ", 150), chain(" + ", 40_000), chain(" AND ", 40_000), union, nested] {
        let head = sql[..sql.len().min(40)].to_string();
        let parsed = std::thread::Builder::new()
            .stack_size(384 << 10)
            .spawn(move || parse_sql(&sql).map(|s| s.len()).map_err(|e| e.to_string()))
            .expect("a thread")
            .join()
            .expect("parsed without a panic");
        match parsed {
            Ok(n) => assert_eq!(n, 1, "{head}"),
            Err(e) => assert!(e.contains("nested more than"), "{head}...: {e}"),
        }
    }
}
