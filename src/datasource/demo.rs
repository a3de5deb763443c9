//! The seeds' demo data sets as Arrow batches: `shop` (the exact rows of the reference files)
//! and `sales` (the seed article's generator shape, with a small deterministic PRNG instead of
//! Spark's `hash`/`rand`, so the rows differ from Spark's but the distributions match).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Decimal128Array, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;

use super::parquet::write_parquet;
use super::write::{write_table, SaveMode};
use crate::error::{KilnError, Result};

/// Rows per batch of the generated `sales.orders`.
pub const SALES_BATCH_ROWS: usize = 8192;
/// The ten countries of the seed article, in its order.
pub const COUNTRIES: [&str; 10] = ["US", "DE", "GB", "IN", "FR", "BR", "JP", "CA", "AU", "NL"];
/// 2026-09-01 as days since the epoch: the first `sales.orders` date.
const SEPT_1_2026: i32 = 20697;
/// 2026-01-01 as days since the epoch.
const JAN_1_2026: i32 = 20454;

/// Builds a batch from columns that match `schema` by construction.
fn batch(schema: SchemaRef, columns: Vec<ArrayRef>) -> RecordBatch {
    // Only fails when the columns do not fit the schema, which the callers here rule out.
    RecordBatch::try_new(schema, columns).expect("demo columns match their schema")
}

fn decimal(values: Vec<Option<i128>>, precision: u8, scale: i8) -> ArrayRef {
    Arc::new(Decimal128Array::from(values).with_precision_and_scale(precision, scale).expect("valid decimal type"))
}

/// Schema of `shop.orders`.
pub fn shop_orders_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("order_id", DataType::Int32, true),
        Field::new("customer_id", DataType::Int32, true),
        Field::new("status", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(10, 2), true),
        Field::new("order_date", DataType::Date32, true),
    ]))
}

/// `shop.orders`: 6 rows; order 105 has no amount.
pub fn shop_orders() -> RecordBatch {
    batch(
        shop_orders_schema(),
        vec![
            Arc::new(Int32Array::from(vec![101, 102, 103, 104, 105, 106])),
            Arc::new(Int32Array::from(vec![1, 1, 2, 3, 3, 4])),
            Arc::new(StringArray::from(vec!["paid", "paid", "refunded", "paid", "pending", "paid"])),
            decimal(vec![Some(4000), Some(2500), Some(6000), Some(1550), None, Some(8000)], 10, 2),
            // 2026-01-03, -10, -11, -15, -20, -21
            Arc::new(Date32Array::from(vec![2, 9, 10, 14, 19, 20].into_iter().map(|d| JAN_1_2026 + d).collect::<Vec<_>>())),
        ],
    )
}

/// Schema of `shop.customers`.
pub fn shop_customers_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("customer_id", DataType::Int32, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("country", DataType::Utf8, true),
    ]))
}

/// `shop.customers`: 5 rows; Dev has no country, Omar has no orders.
pub fn shop_customers() -> RecordBatch {
    batch(
        shop_customers_schema(),
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3, 4, 5])),
            Arc::new(StringArray::from(vec!["Asha", "Ben", "Carla", "Dev", "Omar"])),
            Arc::new(StringArray::from(vec![Some("IN"), Some("GB"), Some("US"), None, Some("IN")])),
        ],
    )
}

/// splitmix64: a stateless mix, so row `i` gets the same value however the rows are batched.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform double in [0, 1) for row `i` of stream `seed`.
fn uniform(seed: u64, i: u64) -> f64 {
    (splitmix64(splitmix64(seed) ^ i) >> 11) as f64 / (1u64 << 53) as f64
}

/// Schema of `sales.customers`.
pub fn sales_customers_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("customer_id", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("email", DataType::Utf8, true),
        Field::new("segment", DataType::Utf8, true),
        Field::new("country", DataType::Utf8, true),
    ]))
}

/// `sales.customers` with ids 1..=n: every 20th is `enterprise`, countries spread over ten.
pub fn sales_customers(n: usize) -> RecordBatch {
    let ids: Vec<i64> = (1..=n as i64).collect();
    let name = StringArray::from_iter_values(ids.iter().map(|i| format!("Customer {i:07}")));
    let email = StringArray::from_iter_values(ids.iter().map(|i| format!("user{i}@example.com")));
    let segment =
        StringArray::from_iter_values(ids.iter().map(|i| if i % 20 == 0 { "enterprise" } else { "consumer" }));
    let country = StringArray::from_iter_values(ids.iter().map(|&i| COUNTRIES[(splitmix64(i as u64) % 10) as usize]));
    batch(
        sales_customers_schema(),
        vec![Arc::new(Int64Array::from(ids)), Arc::new(name), Arc::new(email), Arc::new(segment), Arc::new(country)],
    )
}

/// Schema of `sales.orders`.
pub fn sales_orders_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("order_id", DataType::Int64, true),
        Field::new("customer_id", DataType::Int64, true),
        Field::new("status", DataType::Utf8, true),
        Field::new("amount", DataType::Decimal128(10, 2), true),
        Field::new("order_date", DataType::Date32, true),
    ]))
}

/// `sales.orders` with ids 1..=n_orders, as the seed article makes them: a pseudo-random
/// customer in 1..=n_customers, 60% `shipped` and 40% `pending`, amount uniform in
/// [5.00, 505.00], order date 2026-09-01 + order_id % 61 (61 days, up to 2026-10-31).
pub fn sales_orders(n_orders: usize, n_customers: usize) -> Vec<RecordBatch> {
    let n_customers = n_customers.max(1) as u64;
    let schema = sales_orders_schema();
    let mut out = Vec::with_capacity(n_orders.div_ceil(SALES_BATCH_ROWS));
    let mut start = 1u64;
    while start <= n_orders as u64 {
        let end = (start + SALES_BATCH_ROWS as u64).min(n_orders as u64 + 1);
        let ids: Vec<u64> = (start..end).collect();
        let customer = Int64Array::from_iter_values(ids.iter().map(|&i| (splitmix64(i) % n_customers + 1) as i64));
        let status =
            StringArray::from_iter_values(ids.iter().map(|&i| if uniform(1, i) < 0.6 { "shipped" } else { "pending" }));
        // Cents, rounded half up as Spark's cast to decimal(10,2) does.
        let amount = ids.iter().map(|&i| Some((uniform(2, i) * 50_000.0 + 500.0).round() as i128)).collect();
        let date = Date32Array::from_iter_values(ids.iter().map(|&i| SEPT_1_2026 + (i % 61) as i32));
        out.push(batch(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from_iter_values(ids.iter().map(|&i| i as i64))),
                Arc::new(customer),
                Arc::new(status),
                decimal(amount, 10, 2),
                Arc::new(date),
            ],
        ));
        start = end;
    }
    out
}

/// Where [`write_demo_data`] put each table.
#[derive(Debug, Clone)]
pub struct DemoPaths {
    /// The `shop.orders` file: `shop/orders.parquet`.
    pub shop_orders: PathBuf,
    /// The `shop.customers` file: `shop/customers.parquet`.
    pub shop_customers: PathBuf,
    /// The `sales.customers` file: `sales/customers.parquet`.
    pub sales_customers: PathBuf,
    /// The `sales.orders` folder, Hive-partitioned by `order_date`: `sales/orders`.
    pub sales_orders: PathBuf,
}

/// Writes `shop/{orders,customers}.parquet`, `sales/customers.parquet` and the Hive-partitioned
/// `sales/orders/order_date=YYYY-MM-DD/part-00000.parquet` (61 days, as the seed article's
/// `partitionBy("order_date")`) under `dir`. `scale` 1.0 gives the reference sizes: 20,000
/// customers and 200,000 orders.
pub fn write_demo_data(dir: &Path, scale: f64) -> Result<DemoPaths> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(KilnError::Config(format!("demo data scale must be a positive number, got {scale}")));
    }
    let n_customers = ((20_000.0 * scale).round() as usize).max(1);
    let n_orders = ((200_000.0 * scale).round() as usize).max(1);
    let paths = DemoPaths {
        shop_orders: dir.join("shop/orders.parquet"),
        shop_customers: dir.join("shop/customers.parquet"),
        sales_customers: dir.join("sales/customers.parquet"),
        sales_orders: dir.join("sales/orders"),
    };
    write_parquet(&paths.shop_orders, &[shop_orders()])?;
    write_parquet(&paths.shop_customers, &[shop_customers()])?;
    write_parquet(&paths.sales_customers, &[sales_customers(n_customers)])?;
    let orders = sales_orders(n_orders, n_customers).into_iter().map(Ok);
    write_table(&paths.sales_orders, sales_orders_schema(), orders, &["order_date".to_string()], SaveMode::Overwrite)?;
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::result_csv;
    use crate::types::parse_date;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{Date32Type, Decimal128Type, Int64Type};

    #[test]
    fn date_constants_are_right() {
        assert_eq!(parse_date("2026-09-01"), Some(SEPT_1_2026));
        assert_eq!(parse_date("2026-01-01"), Some(JAN_1_2026));
    }

    #[test]
    fn shop_rows_match_the_reference() {
        let orders = shop_orders();
        assert_eq!(
            result_csv(&orders.schema(), &[orders]),
            "order_id,customer_id,status,amount,order_date\n\
             101,1,paid,40.00,2026-01-03\n102,1,paid,25.00,2026-01-10\n103,2,refunded,60.00,2026-01-11\n\
             104,3,paid,15.50,2026-01-15\n105,3,pending,NULL,2026-01-20\n106,4,paid,80.00,2026-01-21\n"
        );
        let customers = shop_customers();
        assert_eq!(
            result_csv(&customers.schema(), &[customers]),
            "customer_id,name,country\n1,Asha,IN\n2,Ben,GB\n3,Carla,US\n4,Dev,NULL\n5,Omar,IN\n"
        );
    }

    #[test]
    fn shop_rows_equal_the_reference_files() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/data/shop");
        for (file, mine) in [("orders.parquet", shop_orders()), ("customers.parquet", shop_customers())] {
            let path = dir.join(file);
            if !path.exists() {
                return;
            }
            let names: Vec<String> = mine.schema().fields().iter().map(|f| f.name().clone()).collect();
            let theirs = crate::datasource::parquet::read_parquet(&path, &names, 1024).unwrap();
            assert_eq!(theirs.len(), 1);
            assert_eq!(theirs[0].schema(), mine.schema());
            assert_eq!(theirs[0].columns(), mine.columns());
        }
    }

    #[test]
    fn sales_have_the_article_shape() {
        let c = sales_customers(2000);
        assert_eq!(c.num_rows(), 2000);
        let seg = c.column(3).as_string::<i32>();
        assert_eq!((0..2000).filter(|&i| seg.value(i) == "enterprise").count(), 100);
        let country = c.column(4).as_string::<i32>();
        let distinct: std::collections::BTreeSet<&str> = (0..2000).map(|i| country.value(i)).collect();
        assert_eq!(distinct.len(), 10);

        let orders = sales_orders(20_000, 2000);
        assert_eq!(orders.iter().map(|b| b.num_rows()).sum::<usize>(), 20_000);
        let mut shipped = 0;
        for b in &orders {
            let cust = b.column(1).as_primitive::<Int64Type>();
            let status = b.column(2).as_string::<i32>();
            let amount = b.column(3).as_primitive::<Decimal128Type>();
            let date = b.column(4).as_primitive::<Date32Type>();
            for i in 0..b.num_rows() {
                assert!((1..=2000).contains(&cust.value(i)));
                assert!((500..=50_500).contains(&amount.value(i)));
                assert!((SEPT_1_2026..SEPT_1_2026 + 61).contains(&date.value(i)));
                shipped += usize::from(status.value(i) == "shipped");
            }
            assert_eq!(amount.null_count(), 0);
        }
        assert!((11_000..13_000).contains(&shipped), "{shipped}");
        // Deterministic.
        assert_eq!(sales_orders(100, 10), sales_orders(100, 10));
    }

    #[test]
    fn writes_all_four_tables() {
        let dir = tempfile::tempdir().unwrap();
        let paths = write_demo_data(dir.path(), 0.01).unwrap();
        let count = |p: &Path| -> usize {
            crate::datasource::parquet::read_parquet(p, &[], 8192).unwrap().iter().map(|b| b.num_rows()).sum()
        };
        assert_eq!(count(&paths.shop_orders), 6);
        assert_eq!(count(&paths.shop_customers), 5);
        assert_eq!(count(&paths.sales_customers), 200);
        let orders = crate::datasource::parquet::ParquetTable::open(&paths.sales_orders).unwrap();
        assert_eq!(orders.files.len(), 61);
        assert_eq!(orders.schema(), sales_orders_schema());
        let first = &orders.files[0].path;
        assert!(first.parent().unwrap().ends_with("order_date=2026-09-01"), "{first:?}");
        assert!(first.file_name().unwrap().to_string_lossy().starts_with("part-00000-"), "{first:?}");
        assert_eq!(orders.files.iter().map(|f| count(&f.path)).sum::<usize>(), 2000);
        assert!(write_demo_data(dir.path(), 0.0).is_err());
    }
}
