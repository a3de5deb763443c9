//! A scalar UDF: registered once, called from SQL and from the DataFrame API. The optimizer
//! cannot see inside it, so a filter on it stays in the Filter and is not pushed to the scan.
//!
//! `cargo run --release --example udf`

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, StringArray};
use arrow::datatypes::DataType;
use kiln::functions::*;
use kiln::udf::{ScalarUdf, Signature, Volatility};
use kiln::{ExplainMode, Session};

/// `mask_email('ada@example.com')` = `a***@example.com`, over a whole column at once.
fn mask_email(args: &[ArrayRef]) -> kiln::Result<ArrayRef> {
    let emails = args[0].as_string::<i32>();
    let masked: StringArray = emails
        .iter()
        .map(|e| {
            e.map(|e| match e.split_once('@') {
                Some((user, domain)) => format!("{}***@{domain}", user.chars().next().unwrap_or('*')),
                None => "***".to_string(),
            })
        })
        .collect();
    Ok(Arc::new(masked))
}

pub fn main() -> kiln::Result<()> {
    let session = Session::new();
    session.register_udf(ScalarUdf::new("mask_email", Signature::Exact(vec![DataType::Utf8]), DataType::Utf8, Volatility::Immutable, mask_email))?;
    let dir = tempfile::tempdir().map_err(|e| kiln::KilnError::io("tempdir", e))?;
    session
        .sql("SELECT 1 AS id, 'ada@example.com' AS email UNION ALL SELECT 2, 'bob@example.org'")?
        .write_parquet(dir.path().join("people"), &[])?;
    session.register_parquet("people", dir.path().join("people"))?;

    // From SQL.
    session.sql("SELECT id, mask_email(email) AS masked FROM people ORDER BY id")?.show()?;
    // From Rust: the same function, found by name in the same registry.
    let df = session.table("people")?.filter(call_udf("mask_email", [col("email")]).eq("a***@example.com"))?;
    assert_eq!(df.count()?, 1);
    let plan = df.explain_string(ExplainMode::Simple)?;
    println!("{plan}");
    // A black box: the predicate is evaluated by the Filter, never handed to the Parquet reader.
    assert!(plan.contains("mask_email(email#"), "the plan prints the UDF as Spark prints a Scala UDF");
    let pushed = plan.split("PushedFilters: ").nth(1).and_then(|p| p.split(']').next()).unwrap_or_default();
    assert!(plan.contains("DataFilters: [(mask_email(email#") && !pushed.contains("mask_email"), "kept in DataFilters, out of PushedFilters");
    Ok(())
}
