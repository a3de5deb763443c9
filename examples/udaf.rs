//! An aggregate UDF: the geometric mean, through the `Accumulator` trait the built-in
//! aggregates implement. With GROUP BY it runs as Spark's aggregates do: a partial aggregate
//! per partition (state: the sum of logarithms and a count), a shuffle, then a final one.
//!
//! `cargo run --release --example udaf`

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, Float64Array, Int64Array};
use arrow::datatypes::{DataType, Field, Float64Type, Int64Type};
use kiln::functions::*;
use kiln::udf::{Accumulator, AggregateUdf, Signature};
use kiln::{ExplainMode, Session};

#[derive(Default)]
struct GeoMean {
    log_sums: Vec<f64>,
    counts: Vec<i64>,
}

impl Accumulator for GeoMean {
    fn resize(&mut self, groups: usize) {
        self.log_sums.resize(groups, 0.0);
        self.counts.resize(groups, 0);
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> kiln::Result<()> {
        for (g, v) in gids.iter().zip(args[0].as_primitive::<Float64Type>().iter()) {
            if let Some(v) = v {
                self.log_sums[*g as usize] += v.ln();
                self.counts[*g as usize] += 1;
            }
        }
        Ok(())
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> kiln::Result<()> {
        let (sums, counts) = (state[0].as_primitive::<Float64Type>(), state[1].as_primitive::<Int64Type>());
        for (i, g) in gids.iter().enumerate() {
            self.log_sums[*g as usize] += sums.value(i);
            self.counts[*g as usize] += counts.value(i);
        }
        Ok(())
    }
    fn state(&mut self) -> kiln::Result<Vec<ArrayRef>> {
        Ok(vec![Arc::new(Float64Array::from(self.log_sums.clone())), Arc::new(Int64Array::from(self.counts.clone()))])
    }
    fn evaluate(&mut self) -> kiln::Result<ArrayRef> {
        let means = self.log_sums.iter().zip(&self.counts).map(|(s, n)| (*n > 0).then(|| (s / *n as f64).exp()));
        Ok(Arc::new(means.collect::<Float64Array>()))
    }
}

pub fn main() -> kiln::Result<()> {
    let session = Session::builder().config("spark.sql.shuffle.partitions", "4").build()?;
    let state = vec![Field::new("log_sum", DataType::Float64, false), Field::new("n", DataType::Int64, false)];
    session.register_udaf(AggregateUdf::new("geo_mean", Signature::Exact(vec![DataType::Float64]), DataType::Float64, state, || {
        Box::new(GeoMean::default())
    }))?;
    session.sql("CREATE TABLE growth (fund STRING, factor DOUBLE)")?;
    session.sql("INSERT INTO growth VALUES ('a', 1.1), ('a', 1.2), ('a', 0.9), ('b', 2.0), ('b', 8.0), ('c', NULL)")?;

    let sql = session.sql("SELECT fund, geo_mean(factor) AS g FROM growth GROUP BY fund ORDER BY fund")?;
    sql.show()?;
    let plan = sql.explain_string(ExplainMode::Simple)?;
    assert!(plan.contains("partial_geo_mean(factor#"), "a partial aggregate before the shuffle:\n{plan}");

    let df = session.table("growth")?.group_by([col("fund")]).agg([call_udf("geo_mean", [col("factor")]).alias("g")])?.order_by([col("fund")])?;
    let rows = df.collect()?;
    let g: Vec<Option<f64>> = rows.iter().flat_map(|b| b.column(1).as_primitive::<Float64Type>().iter().collect::<Vec<_>>()).collect();
    assert!((g[1].unwrap_or_default() - 4.0).abs() < 1e-9, "geo_mean(2, 8) = 4, got {g:?}");
    assert_eq!(g[2], None, "no values: NULL");
    Ok(())
}
