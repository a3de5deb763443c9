//! An extension planner strategy: `SELECT count(*) FROM parquet_table` answered from the
//! Parquet footers (each file records its row count), planned as a LocalTableScan of the
//! answer instead of a scan and an aggregate.
//!
//! `cargo run --release --example planner_strategy`

use std::sync::Arc;

use arrow::array::{AsArray, Int64Array};
use arrow::datatypes::Int64Type;
use arrow::record_batch::RecordBatch;
use kiln::catalog::TableSource;
use kiln::expr::{AggFunc, Expr};
use kiln::extensions::{PhysicalPlan, PlannerStrategy};
use kiln::plan::LogicalPlan;
use kiln::{ExplainMode, KilnError, Session};

struct MetadataCount;

/// The Parquet table `plan` reads whole (through column-pruning Projects), if it is one.
fn whole_parquet_scan(plan: &LogicalPlan) -> Option<&kiln::datasource::parquet::ParquetTable> {
    match plan {
        LogicalPlan::Project { child, .. } => whole_parquet_scan(child),
        LogicalPlan::Relation { table, .. } => match &table.source {
            TableSource::Parquet(files) => Some(files),
            _ => None,
        },
        _ => None,
    }
}

impl PlannerStrategy for MetadataCount {
    fn name(&self) -> &'static str {
        "MetadataCount"
    }
    fn plan(
        &self,
        plan: &Arc<LogicalPlan>,
        _plan_child: &dyn Fn(&Arc<LogicalPlan>) -> kiln::Result<Arc<PhysicalPlan>>,
    ) -> kiln::Result<Option<Arc<PhysicalPlan>>> {
        let LogicalPlan::Aggregate { grouping, aggregates, child } = plan.as_ref() else { return Ok(None) };
        let [Expr::Alias { child: call, .. }] = aggregates.as_slice() else { return Ok(None) };
        let counts_rows = matches!(call.as_ref(), Expr::Aggregate { func: AggFunc::Count, args, distinct: false } if matches!(args.as_slice(), [Expr::Literal(v)] if !v.is_null()));
        let Some(files) = whole_parquet_scan(child).filter(|_| grouping.is_empty() && counts_rows) else { return Ok(None) };
        let rows: i64 = files.files.iter().map(|f| f.metadata.metadata().file_metadata().num_rows()).sum();
        let output = plan.output();
        let schema = kiln::expr::eval::schema_of(&output);
        let batch = RecordBatch::try_new(schema, vec![Arc::new(Int64Array::from(vec![rows]))]).map_err(KilnError::from)?;
        Ok(Some(Arc::new(PhysicalPlan::LocalTableScan { output, data: vec![batch] })))
    }
}

pub fn main() -> kiln::Result<()> {
    let session = Session::builder().with_extensions(|ext| ext.inject_planner_strategy(MetadataCount)).build()?;
    let dir = tempfile::tempdir().map_err(|e| KilnError::io("tempdir", e))?;
    session.sql("SELECT 1 AS id, 'x' AS tag UNION ALL SELECT 2, 'y' UNION ALL SELECT 3, 'x'")?.write_parquet(dir.path().join("t"), &["tag"])?;
    session.register_parquet("t", dir.path().join("t"))?;

    let count = session.sql("SELECT count(*) AS n FROM t")?;
    let plan = count.explain_string(ExplainMode::Simple)?;
    println!("{plan}");
    assert!(plan.contains("LocalTableScan") && !plan.contains("FileScan"), "answered from the footers");
    assert_eq!(count.collect()?[0].column(0).as_primitive::<Int64Type>().value(0), 3);
    // Anything else is planned by the built-in strategies.
    let filtered = session.sql("SELECT count(*) AS n FROM t WHERE id > 1")?;
    assert!(filtered.explain_string(ExplainMode::Simple)?.contains("FileScan"));
    assert_eq!(filtered.collect()?[0].column(0).as_primitive::<Int64Type>().value(0), 2);
    Ok(())
}
