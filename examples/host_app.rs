//! A host program embedding kiln, end to end: an in-memory table and a Parquet table,
//! parameterized SQL, the same query as SQL and as DataFrames with a window, a UDF and a UDAF,
//! a 100-million-row `range` streamed in bounded memory, a timeout that stops a join, and
//! errors told apart by their Spark error class.
//!
//! `cargo run --release --example host_app`

use std::sync::Arc;
use std::time::{Duration, Instant};

use kiln::arrow::array::{ArrayRef, AsArray, Float64Array, Int64Array, RecordBatch, StringArray};
use kiln::arrow::datatypes::{DataType, Field, Float64Type, Int64Type};
use kiln::functions::*;
use kiln::types::ScalarValue;
use kiln::udf::{Accumulator, AggregateUdf, ScalarUdf, Signature, Volatility};
use kiln::{KilnError, Session};

/// The largest amount the rows of a group hold (a UDAF: per group, the maximum of a column).
#[derive(Default)]
struct Largest(Vec<Option<f64>>);

impl Accumulator for Largest {
    fn resize(&mut self, groups: usize) {
        self.0.resize(groups, None);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> kiln::Result<()> {
        for (g, v) in gids.iter().zip(args[0].as_primitive::<Float64Type>().iter()) {
            let slot = &mut self.0[*g as usize];
            *slot = match (*slot, v) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> kiln::Result<()> {
        self.update(gids, state)
    }
    fn state(&mut self) -> kiln::Result<Vec<ArrayRef>> {
        Ok(vec![Arc::new(self.0.iter().copied().collect::<Float64Array>())])
    }
    fn evaluate(&mut self) -> kiln::Result<ArrayRef> {
        Ok(Arc::new(self.0.iter().copied().collect::<Float64Array>()))
    }
}

/// This process's peak resident memory (VmHWM), in bytes.
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The rows as CSV text (header first).
fn csv(df: &kiln::DataFrame) -> kiln::Result<String> {
    let mut out = df.columns().join(",");
    for batch in df.collect()? {
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = (0..batch.num_columns())
                .map(|c| kiln::arrow::util::display::array_value_to_string(batch.column(c), row).unwrap_or_default())
                .collect();
            out += &format!("\n{}", cells.join(","));
        }
    }
    Ok(out)
}

pub fn main() -> kiln::Result<()> {
    let session = Session::builder().config("spark.sql.shuffle.partitions", "4").build()?;

    // An in-memory table from Arrow batches, and a Parquet table written and read back.
    let customers = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
        ("name", Arc::new(StringArray::from(vec!["ann", "bob", "cy' OR '1'='1"]))),
    ])?;
    session.register_batches("customers", vec![customers])?;
    let dir = std::env::temp_dir().join(format!("kiln-host-app-{}", std::process::id()));
    session
        .sql("SELECT id AS order_id, id % 3 + 1 AS customer, CAST(id * 10 + 5 AS DOUBLE) AS amount FROM range(1, 10)")?
        .write_parquet(dir.join("orders"), &[])?;
    session.register_parquet("orders", dir.join("orders"))?;

    // Parameterized SQL: a value is a typed literal, never SQL text.
    let q = "SELECT o.order_id FROM orders o JOIN customers c ON o.customer = c.id WHERE c.name = :name AND o.amount > :min";
    let bob = session.sql_with_args(q, [("name", ScalarValue::from("bob")), ("min", 20.0.into())])?;
    println!("bob's orders over 20:\n{}", csv(&bob.order_by([col("order_id")])?)?);
    assert_eq!(bob.count()?, 2, "orders 4 and 7");
    let injected = session.sql_with_args(q, [("name", ScalarValue::from("x' OR '1'='1")), ("min", 0.0.into())])?;
    assert_eq!(injected.count()?, 0, "a quoted input is one string");

    // The same query as SQL and as DataFrames: each order's running total per customer.
    let sql = session.sql(
        "SELECT c.name, o.order_id, sum(o.amount) OVER (PARTITION BY c.name ORDER BY o.order_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running \
         FROM orders o JOIN customers c ON o.customer = c.id ORDER BY c.name, o.order_id",
    )?;
    let orders = session.table("orders")?;
    let by_name = Window::partition_by([col("name")]).order_by([col("order_id")]).rows_between(Window::UNBOUNDED_PRECEDING, Window::CURRENT_ROW);
    let api = orders
        .join_on(&session.table("customers")?, col("customer").eq(col("id")), kiln::JoinType::Inner)?
        .select([col("name"), col("order_id"), sum(col("amount")).over(by_name).alias("running")])?
        .order_by([col("name"), col("order_id")])?;
    let (sql_rows, api_rows) = (csv(&sql)?, csv(&api)?);
    println!("running totals:\n{api_rows}");
    assert_eq!(sql_rows, api_rows, "SQL and DataFrames give the same rows");

    // A UDF and a UDAF, called from SQL and from the DataFrame API.
    session.register_udf(ScalarUdf::new("with_tax", Signature::Exact(vec![DataType::Float64]), DataType::Float64, Volatility::Immutable, |args: &[ArrayRef]| {
        let a = args[0].as_primitive::<Float64Type>();
        Ok(Arc::new(a.iter().map(|v| v.map(|v| v * 1.25)).collect::<Float64Array>()) as ArrayRef)
    }))?;
    session.register_udaf(AggregateUdf::new("largest", Signature::Exact(vec![DataType::Float64]), DataType::Float64, vec![Field::new("max", DataType::Float64, true)], || {
        Box::new(Largest::default())
    }))?;
    let sql = session.sql("SELECT customer, largest(with_tax(amount)) AS top FROM orders GROUP BY customer ORDER BY customer")?;
    let api = orders.group_by([col("customer")]).agg([call_udf("largest", [call_udf("with_tax", [col("amount")])]).alias("top")])?.order_by([col("customer")])?;
    println!("largest order with tax per customer:\n{}", csv(&api)?);
    assert_eq!(csv(&sql)?, csv(&api)?);
    assert_eq!(csv(&api)?, "customer,top\n1,118.75\n2,93.75\n3,106.25");

    // A 100-million-row range streamed batch by batch: memory stays bounded by a few batches.
    // The peak is measured from here (Linux: writing 5 to clear_refs resets VmHWM).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let start = Instant::now();
    let (mut rows, mut total) = (0usize, 0i64);
    for batch in session.sql("SELECT id * 2 AS x FROM range(100000000)")?.execute_stream()? {
        let batch = batch.map_err(KilnError::from_stream)?;
        rows += batch.num_rows();
        total = total.wrapping_add(batch.column(0).as_primitive::<Int64Type>().values().iter().sum::<i64>());
    }
    let peak = peak_rss().unwrap_or(0);
    println!("streamed {rows} rows in {:.2?}, peak resident memory while streaming {} MiB", start.elapsed(), peak >> 20);
    assert_eq!((rows, total), (100_000_000, 99_999_999 * 100_000_000), "sum of 2 * (0..100M)");
    assert!(peak < 100 << 20, "peak resident memory {} MiB", peak >> 20);

    // A timeout stops a join that would run for minutes, long after its scans are done.
    session.set_conf("kiln.query.timeout", "500ms")?;
    let start = Instant::now();
    let join = session.sql("WITH a AS (SELECT id % 7 AS k FROM range(600000)) SELECT count(*) FROM a x JOIN a y ON x.k = y.k")?.collect();
    let took = start.elapsed();
    session.set_conf("kiln.query.timeout", "0")?;
    match join {
        Err(e) => println!("the join stopped after {took:.2?}: {e}"),
        Ok(_) => return Err(KilnError::exec("the join should have stopped at the timeout")),
    }
    assert!(took < Duration::from_secs(10), "stopped after {took:?}");

    // Errors carry Spark's error class and SQLSTATE: a host branches on them, not on the text.
    for bad in ["SELECT * FROM nosuch", "SELECT nme FROM customers", "SELECT 1 / 0", "SELEC 1", "SELECT CAST(name AS INT) FROM customers"] {
        let err = match session.sql(bad).and_then(|df| df.collect()) {
            Err(e) => e,
            Ok(_) => return Err(KilnError::exec(format!("`{bad}` should fail"))),
        };
        let advice = match err.error_class() {
            Some("TABLE_OR_VIEW_NOT_FOUND") => "register the table first".to_string(),
            Some(c) if c.starts_with("UNRESOLVED_COLUMN") => format!("no such column: {}", err.message_parameters().first().map_or("", |(_, v)| v.as_str())),
            Some("DIVIDE_BY_ZERO") => "use try_divide for NULL on a zero divisor".to_string(),
            Some("PARSE_SYNTAX_ERROR") => "fix the SQL text".to_string(),
            Some("CAST_INVALID_INPUT") => "use try_cast for NULL on bad input".to_string(),
            other => return Err(KilnError::exec(format!("`{bad}`: unexpected class {other:?}: {err}"))),
        };
        println!("{bad:45} -> {} ({}): {advice}", err.error_class().unwrap_or("?"), err.sql_state().unwrap_or("?"));
    }

    std::fs::remove_dir_all(&dir).map_err(|e| KilnError::exec(format!("cannot remove {}: {e}", dir.display())))?;
    Ok(())
}
