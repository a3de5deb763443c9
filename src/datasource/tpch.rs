//! TPC-H data from tpchgen-arrow, typed the way Spark reads tpchgen-cli's Parquet files:
//! keys bigint, money decimal(15,2), dates date, strings `Utf8` (tpchgen-arrow emits
//! `Utf8View`), every column nullable.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use rayon::prelude::*;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSuppGenerator,
    RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow, SupplierArrow};

use super::parquet::write_parquet_stream;
use crate::error::{KilnError, Result};

/// The eight TPC-H tables, by the names tpchgen-cli gives their files.
pub const TPCH_TABLES: [&str; 8] = ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"];

/// Rows per generated batch.
const BATCH_ROWS: usize = 8192;

type BatchIter = Box<dyn Iterator<Item = std::result::Result<RecordBatch, ArrowError>> + Send>;

/// Part `part` of `part_count` of a table (tpchgen splits a table into independent parts).
fn table_part(table: &str, sf: f64, part: i32, part_count: i32) -> Result<BatchIter> {
    Ok(match table {
        "customer" => Box::new(CustomerArrow::new(CustomerGenerator::new(sf, part, part_count)).with_batch_size(BATCH_ROWS)),
        "lineitem" => Box::new(LineItemArrow::new(LineItemGenerator::new(sf, part, part_count)).with_batch_size(BATCH_ROWS)),
        "nation" => Box::new(NationArrow::new(NationGenerator::new(sf, part, part_count)).with_batch_size(BATCH_ROWS)),
        "orders" => Box::new(OrderArrow::new(OrderGenerator::new(sf, part, part_count)).with_batch_size(BATCH_ROWS)),
        "part" => Box::new(PartArrow::new(PartGenerator::new(sf, part, part_count)).with_batch_size(BATCH_ROWS)),
        "partsupp" => Box::new(PartSuppArrow::new(PartSuppGenerator::new(sf, part, part_count)).with_batch_size(BATCH_ROWS)),
        "region" => Box::new(RegionArrow::new(RegionGenerator::new(sf, part, part_count)).with_batch_size(BATCH_ROWS)),
        "supplier" => Box::new(SupplierArrow::new(SupplierGenerator::new(sf, part, part_count)).with_batch_size(BATCH_ROWS)),
        other => return Err(KilnError::Config(format!("no TPC-H table `{other}` (tables: {})", TPCH_TABLES.join(", ")))),
    })
}

/// Nation and region are fixed 25/5-row tables; their generators ignore parts.
fn splittable(table: &str) -> bool {
    !matches!(table, "nation" | "region")
}

/// The schema kiln gives a generated table: string views become `Utf8`, all fields nullable.
fn spark_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| {
            let dt = match f.data_type() {
                DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
                other => other.clone(),
            };
            Field::new(f.name(), dt, true)
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// The schema of a TPC-H table as kiln generates it.
pub fn tpch_schema(table: &str) -> Result<SchemaRef> {
    let schema = match table {
        "customer" => CustomerArrow::schema_ref(),
        "lineitem" => LineItemArrow::schema_ref(),
        "nation" => NationArrow::schema_ref(),
        "orders" => OrderArrow::schema_ref(),
        "part" => PartArrow::schema_ref(),
        "partsupp" => PartSuppArrow::schema_ref(),
        "region" => RegionArrow::schema_ref(),
        "supplier" => SupplierArrow::schema_ref(),
        other => return Err(KilnError::Config(format!("no TPC-H table `{other}` (tables: {})", TPCH_TABLES.join(", ")))),
    };
    Ok(spark_schema(&schema))
}

/// Casts a generated batch to `schema` (Utf8View -> Utf8).
fn normalize(batch: RecordBatch, schema: &SchemaRef) -> Result<RecordBatch> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                arrow::compute::cast(c, f.data_type())
            }
        })
        .collect::<std::result::Result<Vec<ArrayRef>, _>>()?;
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

fn check_scale(sf: f64) -> Result<()> {
    if sf.is_finite() && sf > 0.0 {
        Ok(())
    } else {
        Err(KilnError::Config(format!("TPC-H scale factor must be a positive number, got {sf}")))
    }
}

/// All of one table in memory, its parts generated in parallel and kept in order.
pub fn generate_table(table: &str, sf: f64) -> Result<Vec<RecordBatch>> {
    check_scale(sf)?;
    let schema = tpch_schema(table)?;
    let parts = if splittable(table) { rayon::current_num_threads().max(1) as i32 } else { 1 };
    let per_part: Vec<Vec<RecordBatch>> = (1..=parts)
        .into_par_iter()
        .map(|p| table_part(table, sf, p, parts)?.map(|b| normalize(b?, &schema)).collect::<Result<Vec<_>>>())
        .collect::<Result<_>>()?;
    Ok(per_part.into_iter().flatten().collect())
}

/// The eight tables in memory (for benchmarks), in [`TPCH_TABLES`] order.
pub fn generate_tpch_batches(sf: f64) -> Result<Vec<(&'static str, Vec<RecordBatch>)>> {
    check_scale(sf)?;
    TPCH_TABLES.iter().map(|t| Ok((*t, generate_table(t, sf)?))).collect()
}

/// Writes `<out_dir>/<table>.parquet` for the eight tables, streaming (tables in parallel);
/// returns the files in [`TPCH_TABLES`] order.
pub fn generate_tpch(sf: f64, out_dir: &Path) -> Result<Vec<PathBuf>> {
    check_scale(sf)?;
    std::fs::create_dir_all(out_dir)
        .map_err(|e| KilnError::io(out_dir.display().to_string(), format!("cannot create directory: {e}")))?;
    TPCH_TABLES
        .par_iter()
        .map(|t| {
            let schema = tpch_schema(t)?;
            let path = out_dir.join(format!("{t}.parquet"));
            let batches = table_part(t, sf, 1, 1)?.map(|b| normalize(b?, &schema));
            write_parquet_stream(&path, schema.clone(), batches)?;
            Ok(path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datasource::parquet::{read_parquet, read_schema};

    fn rows(batches: &[RecordBatch]) -> usize {
        batches.iter().map(|b| b.num_rows()).sum()
    }

    #[test]
    fn writes_eight_files_with_tpchgen_row_counts() {
        let dir = tempfile::tempdir().unwrap();
        let files = generate_tpch(0.001, dir.path()).unwrap();
        assert_eq!(files.len(), 8);
        let lineitems = LineItemGenerator::new(0.001, 1, 1).iter().count();
        let expected = [
            ("customer", 150),
            ("lineitem", lineitems),
            ("nation", 25),
            ("orders", 1500),
            ("part", 200),
            ("partsupp", 800),
            ("region", 5),
            ("supplier", 10),
        ];
        for (file, (table, n)) in files.iter().zip(expected) {
            assert_eq!(file, &dir.path().join(format!("{table}.parquet")));
            assert_eq!(rows(&read_parquet(file, &[], 100_000).unwrap()), n, "{table}");
        }
        // The in-memory tables, generated in parts, hold the same rows.
        let mem = generate_tpch_batches(0.001).unwrap();
        for ((table, batches), (_, n)) in mem.iter().zip(expected) {
            assert_eq!(rows(batches), n, "{table}");
        }
        let whole = read_parquet(&files[1], &["l_orderkey".to_string(), "l_comment".to_string()], 100_000).unwrap();
        let whole = arrow::compute::concat_batches(&whole[0].schema(), &whole).unwrap();
        let parts = arrow::compute::concat_batches(&mem[1].1[0].schema(), &mem[1].1).unwrap();
        assert_eq!(whole.column(0).as_ref(), parts.column(0).as_ref());
        assert_eq!(whole.column(1).as_ref(), parts.column(15).as_ref());
        assert!(generate_tpch(0.0, dir.path()).is_err());
    }

    #[test]
    fn schemas_match_the_reference_files() {
        let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/tpch");
        if !reference.exists() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let files = generate_tpch(0.01, dir.path()).unwrap();
        for (table, file) in TPCH_TABLES.iter().zip(&files) {
            let theirs_path = reference.join(format!("{table}.parquet"));
            let ours = read_schema(std::slice::from_ref(file)).unwrap();
            let theirs = read_schema(std::slice::from_ref(&theirs_path)).unwrap();
            assert_eq!(ours, theirs, "{table}");
            assert_eq!(ours, tpch_schema(table).unwrap(), "{table}");
        }
        let ours = read_parquet(&files[1], &[], 100_000).unwrap();
        assert_eq!(rows(&ours), 60_175);
        // Same generator, same rows: spot-check nation against the reference file.
        let names = ["n_nationkey", "n_name", "n_regionkey", "n_comment"].map(String::from);
        let ours = read_parquet(&files[2], &names, 100).unwrap();
        let theirs = read_parquet(&reference.join("nation.parquet"), &names, 100).unwrap();
        assert_eq!(ours, theirs);
    }
}
