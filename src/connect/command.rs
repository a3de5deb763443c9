//! Spark Connect's `WriteOperation` (`df.write.parquet(path)`, `.saveAsTable(name)`, ...).

use spark_connect_proto::write_operation::{save_table::TableSaveMethod, SaveMode as ProtoMode, SaveType};
use spark_connect_proto::WriteOperation;

use super::expression::unsupported;
use crate::datasource::text::TextFormat;
use crate::datasource::write::SaveMode;
use crate::error::{KilnError, Result};
use crate::session::Session;

/// Runs a write: the input relation's rows to files or a table.
pub fn write(session: &Session, w: &WriteOperation) -> Result<()> {
    let input = w.input.as_ref().ok_or_else(|| KilnError::unsupported("[CONNECT_INVALID_PLAN] a write without its input"))?;
    if w.bucket_by.is_some() || !w.sort_column_names.is_empty() || !w.clustering_columns.is_empty() {
        return Err(unsupported("a write with bucketBy, sortBy or clusterBy"));
    }
    let df = super::relation::dataframe(session, input)?;
    let mode = match ProtoMode::try_from(w.mode) {
        Ok(ProtoMode::Append) => SaveMode::Append,
        Ok(ProtoMode::Overwrite) => SaveMode::Overwrite,
        Ok(ProtoMode::Ignore) => SaveMode::Ignore,
        _ => SaveMode::ErrorIfExists,
    };
    let source = w.source.as_deref().unwrap_or("parquet").to_ascii_lowercase();
    match w.save_type.as_ref().ok_or_else(|| unsupported("a write without a path or a table (save())"))? {
        SaveType::Path(path) => {
            let partition_by: Vec<&str> = w.partitioning_columns.iter().map(String::as_str).collect();
            let mut options: Vec<(String, String)> = w.options.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            options.sort();
            match source.as_str() {
                "parquet" => df.write_parquet_with(path, &partition_by, mode).map(drop),
                "csv" | "json" if partition_by.is_empty() => {
                    let format = if source == "csv" { TextFormat::Csv } else { TextFormat::Json };
                    df.write_text(format, std::path::Path::new(path), &options, mode).map(drop)
                }
                "csv" | "json" => Err(unsupported(format!("partitionBy in a {source} write"))),
                other => Err(unsupported(format!("writing the format `{other}`"))),
            }
        }
        SaveType::Table(t) => {
            if !w.partitioning_columns.is_empty() {
                return Err(unsupported("partitionBy in saveAsTable"));
            }
            if source != "parquet" {
                return Err(unsupported(format!("saveAsTable in the format `{source}`")));
            }
            // The table statements of SQL, reading the rows through a view of this session.
            static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let view = format!("__kiln_connect_write_{}", WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            df.create_or_replace_temp_view(&view)?;
            let name = t.table_name.split('.').map(|p| format!("`{}`", p.replace('`', "``"))).collect::<Vec<_>>().join(".");
            let exists = || -> Result<bool> { Ok(session.table(&t.table_name).is_ok()) };
            let statement = match (TableSaveMethod::try_from(t.save_method), mode) {
                (Ok(TableSaveMethod::InsertInto), SaveMode::Overwrite) => Some(format!("INSERT OVERWRITE {name} SELECT * FROM {view}")),
                (Ok(TableSaveMethod::InsertInto), _) => Some(format!("INSERT INTO {name} SELECT * FROM {view}")),
                (_, SaveMode::Overwrite) => Some(format!("CREATE OR REPLACE TABLE {name} USING parquet AS SELECT * FROM {view}")),
                (_, SaveMode::Append) if exists()? => Some(format!("INSERT INTO {name} SELECT * FROM {view}")),
                (_, SaveMode::Ignore) if exists()? => None,
                _ => Some(format!("CREATE TABLE {name} USING parquet AS SELECT * FROM {view}")),
            };
            let run = statement.map(|s| session.sql(&s)).transpose();
            session.drop_temp_view(&view)?;
            run.map(drop)
        }
    }
}
