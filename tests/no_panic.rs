//! No input makes kiln panic: random token soups and mutations of valid queries go through
//! parsing, analysis, optimization, planning and execution (both modes), and each ends in rows
//! or an error.

use std::panic::{catch_unwind, AssertUnwindSafe};

use kiln::Session;

mod common;
use common::Rng;

const TOKENS: &[&str] = &[
    "SELECT", "FROM", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "JOIN", "LEFT JOIN", "FULL OUTER JOIN", "ON", "USING",
    "AND", "OR", "NOT", "IS NULL", "IS NOT NULL", "IN", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "AS",
    "INT", "DECIMAL(10,2)", "DATE", "STRING", "(", ")", ",", "*", "+", "-", "/", "%", "=", "<>", "<", ">=", "1", "0", "-1",
    "2147483647", "9223372036854775807", "1.5", "'x'", "'2026-10-01'", "NULL", "TRUE", "orders", "customers", "o", "c",
    "order_id", "customer_id", "status", "amount", "order_date", "name", "country", "sum(amount)", "count(*)", "avg(amount)",
    "lower(status)", "substring(name, 0, -1)", "round(amount, -2)", "DATE '2026-02-30'", "INTERVAL '1' DAY", "DISTINCT", ";",
];

const VALID: &[&str] = &[
    "SELECT customer_id, SUM(amount) AS revenue FROM orders WHERE status = 'paid' GROUP BY customer_id",
    "SELECT c.name, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id ORDER BY c.name",
    "SELECT order_id, amount * 2 - 1 FROM orders WHERE order_date >= DATE '2026-10-01' - INTERVAL '3' DAY",
];

fn session() -> Session {
    let s = Session::new();
    s.register_batches("orders", vec![kiln::datasource::demo::shop_orders()]).expect("orders");
    s.register_batches("customers", vec![kiln::datasource::demo::shop_customers()]).expect("customers");
    s
}

/// Runs `sql` to the end in both modes; a panic is the only failure. Ok(true) when it
/// produced rows.
fn run(s: &Session, sql: &str) -> Result<bool, String> {
    let mut rows = false;
    for codegen in ["true", "false"] {
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            s.set_conf("spark.sql.codegen.wholeStage", codegen).ok();
            match s.sql(sql) {
                Ok(df) => {
                    let _ = df.explain_string(kiln::ExplainMode::Extended);
                    df.collect().is_ok()
                }
                Err(_) => false,
            }
        }));
        match outcome {
            Ok(ran) => rows |= ran,
            Err(_) => return Err(format!("panicked (codegen {codegen}) on: {sql}")),
        }
    }
    Ok(rows)
}

#[test]
fn random_token_soup_never_panics() {
    let s = session();
    let mut rng = Rng(7);
    let mut panics = vec![];
    for _ in 0..400 {
        let n = 3 + (rng.next() % 14) as usize;
        let sql: Vec<&str> = (0..n).map(|_| *rng.pick(TOKENS)).collect();
        if let Err(e) = run(&s, &sql.join(" ")) {
            panics.push(e);
        }
    }
    assert!(panics.is_empty(), "{}", panics.join("\n"));
}

#[test]
fn mutated_valid_queries_never_panic() {
    let s = session();
    let mut rng = Rng(11);
    let mut panics = vec![];
    let mut ran = 0;
    for _ in 0..300 {
        let base = *rng.pick(VALID);
        let mut words: Vec<&str> = base.split(' ').collect();
        // Replace, drop or duplicate a word.
        let i = (rng.next() % words.len() as u64) as usize;
        match rng.next() % 3 {
            0 => words[i] = *rng.pick(TOKENS),
            1 => {
                words.remove(i);
            }
            _ => words.insert(i, *rng.pick(TOKENS)),
        }
        match run(&s, &words.join(" ")) {
            Ok(true) => ran += 1,
            Ok(false) => {}
            Err(e) => panics.push(e),
        }
    }
    assert!(panics.is_empty(), "{}", panics.join("\n"));
    // Mutations must reach execution often enough for the test to mean something.
    assert!(ran >= 20, "only {ran} mutated queries ran");
}
