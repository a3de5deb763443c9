//! Embedding kiln: a host streams a large result batch by batch instead of collecting it.
//!
//! `cargo run --release --example stream`

use arrow::record_batch::RecordBatchReader;
use kiln::functions::*;
use kiln::Session;

pub fn main() -> kiln::Result<()> {
    let session = Session::new();
    // TPC-H lineitem at scale factor 0.01: 60 thousand rows, generated in memory.
    session.register_batches("lineitem", kiln::datasource::tpch::generate_table("lineitem", 0.01)?)?;
    let df = session.table("lineitem")?.select([col("l_orderkey"), (col("l_extendedprice") * (lit(1) - col("l_discount"))).alias("net")])?;

    let stream = df.execute_stream()?;
    println!("schema: {:?}", stream.schema().fields().iter().map(|f| f.name()).collect::<Vec<_>>());
    let (mut batches, mut rows, mut largest) = (0, 0, 0);
    for batch in stream {
        let batch = batch?;
        batches += 1;
        rows += batch.num_rows();
        largest = largest.max(batch.num_rows());
    }
    println!("{rows} rows in {batches} batches, at most {largest} rows held at once");
    assert_eq!(rows as i64, session.table("lineitem")?.count()?);
    assert!(batches > 1, "the result arrives in pieces");
    Ok(())
}
