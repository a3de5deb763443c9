//! An extension check rule: a scan of a partitioned table must filter on a partition column,
//! so nobody reads every partition by accident (a common guard in shared warehouses).
//!
//! `cargo run --release --example check_rule`

use kiln::catalog::TableSource;
use kiln::expr::ExprId;
use kiln::plan::LogicalPlan;
use kiln::{KilnError, Session};

/// Fails on a Relation of a partitioned Parquet table with no Filter above it that reads one
/// of its partition columns.
fn require_partition_filter(plan: &LogicalPlan) -> kiln::Result<()> {
    fn walk(plan: &LogicalPlan, filtered: &mut Vec<ExprId>) -> kiln::Result<()> {
        match plan {
            LogicalPlan::Filter { condition, child } => {
                let before = filtered.len();
                filtered.extend(condition.references());
                walk(child, filtered)?;
                filtered.truncate(before);
                Ok(())
            }
            LogicalPlan::Relation { table, output } => {
                let TableSource::Parquet(files) = &table.source else { return Ok(()) };
                let partition_schema = files.partition_values.schema();
                let partitions: Vec<&String> = partition_schema.fields().iter().map(|f| f.name()).collect();
                let ok = partitions.is_empty() || output.iter().any(|a| partitions.contains(&&a.name) && filtered.contains(&a.id));
                match ok {
                    true => Ok(()),
                    false => Err(KilnError::analysis(
                        "MISSING_PARTITION_FILTER",
                        format!("A scan of `{}` must filter on a partition column ({partitions:?}).", table.name),
                    )),
                }
            }
            other => other.children().into_iter().try_for_each(|c| walk(c, filtered)),
        }
    }
    walk(plan, &mut vec![])
}

pub fn main() -> kiln::Result<()> {
    let session = Session::builder().with_extensions(|ext| ext.inject_check_rule(require_partition_filter)).build()?;
    let dir = tempfile::tempdir().map_err(|e| KilnError::io("tempdir", e))?;
    session
        .sql("SELECT 1 AS id, 10 AS amount, DATE '2026-10-01' AS day UNION ALL SELECT 2, 20, DATE '2026-10-02'")?
        .write_parquet(dir.path().join("events"), &["day"])?;
    session.register_parquet("events", dir.path().join("events"))?;

    let ok = session.sql("SELECT sum(amount) FROM events WHERE day = DATE '2026-10-02'")?;
    ok.show()?;
    match session.sql("SELECT sum(amount) FROM events") {
        Err(e) => {
            println!("rejected: {e}");
            assert!(e.to_string().contains("MISSING_PARTITION_FILTER"));
        }
        Ok(_) => return Err(KilnError::internal("the check rule let a full scan through")),
    }
    Ok(())
}
