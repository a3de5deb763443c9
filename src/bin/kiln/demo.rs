//! `kiln demo`: the seeds' data sets, the article's revenue-by-country query, its plans and result.

use kiln::{ExplainMode, KilnError, Session};

/// The query of the seed article (orders x customers, shipped October orders of enterprise
/// customers, revenue by country).
pub const REVENUE_BY_COUNTRY: &str = "SELECT c.country,
       COUNT(*)      AS orders,
       SUM(o.amount) AS revenue
FROM orders o
JOIN customers c ON o.customer_id = c.customer_id
WHERE o.order_date >= '2026-10-01'
  AND o.status = 'shipped'
  AND c.segment = 'enterprise'
GROUP BY c.country
ORDER BY revenue DESC";

pub fn run(scale: f64) -> Result<(), KilnError> {
    if !(scale > 0.0) {
        return Err(KilnError::Config(format!("--scale must be positive, got {scale}")));
    }
    let dir = tempfile::tempdir().map_err(|e| KilnError::io("temporary directory", e))?;
    let paths = kiln::datasource::demo::write_demo_data(dir.path(), scale)?;
    outln!("Data sets written under {}", dir.path().display());

    let shop = Session::new();
    shop.register_parquet("orders", &paths.shop_orders)?;
    shop.register_parquet("customers", &paths.shop_customers)?;
    let q = "SELECT customer_id, SUM(amount) AS revenue FROM orders WHERE status = 'paid' GROUP BY customer_id ORDER BY customer_id";
    outln!("\n-- shop: paid revenue per customer\n{q}");
    shop.sql(q)?.show()?;

    let sales = Session::new();
    sales.register_parquet("orders", &paths.sales_orders)?;
    sales.register_parquet("customers", &paths.sales_customers)?;
    outln!("\n-- sales: revenue by country (scale {scale})\n{REVENUE_BY_COUNTRY}\n");
    let df = sales.sql(REVENUE_BY_COUNTRY)?;
    df.explain(ExplainMode::Extended)?;
    let start = std::time::Instant::now();
    let (batches, metrics) = df.collect_with_metrics()?;
    let elapsed = start.elapsed();
    outln!("{}", kiln::format::show_string(&df.schema(), &batches, 20, 20).trim_end());
    outln!("({} ms)", elapsed.as_millis());
    for (table, scan) in &metrics.scans {
        outln!(
            "scan {table}: {} files read, {} row groups read, {} skipped by pushed filters, {} rows skipped by the page index, {} rows out",
            scan.files_read,
            scan.row_groups_read,
            scan.row_groups_skipped,
            scan.rows_skipped_by_page_index,
            scan.rows_out
        );
    }
    Ok(())
}
