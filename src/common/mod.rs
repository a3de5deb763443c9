//! Pieces every layer shares, below everything but `error`: the memory pool, a query's control
//! (cancellation, deadline, progress), hashing, drawing a tree of nodes as text, byte sizes as
//! Spark prints them.

pub mod control;
pub mod hash;
pub mod memory;
pub mod spill;
pub mod tree;

/// The machine's cores (as `std::thread::available_parallelism`, 1 if unknown), read once: the
/// standard library reads the cgroup files on every call, and planning asks per scan.
pub fn available_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Runs of batches under `rows` rows merged, as they stream by, into batches of `rows` to
/// `2 * rows` rows (a batch of `rows` or more passes as it is): a consumer with work per batch
/// (a stage's slots and key hashing, an exchange's run per partition) gets batches worth it.
pub fn coalesce_small<'a>(
    batches: impl Iterator<Item = crate::error::Result<arrow::record_batch::RecordBatch>> + 'a,
    rows: usize,
) -> impl Iterator<Item = crate::error::Result<arrow::record_batch::RecordBatch>> + 'a {
    let mut batches = batches.peekable();
    std::iter::from_fn(move || {
        let first = batches.next()?;
        let Ok(first) = first else { return Some(first) };
        if first.num_rows() >= rows {
            return Some(Ok(first));
        }
        let mut total = first.num_rows();
        let mut run = vec![first];
        while total < rows {
            match batches.peek() {
                Some(Ok(b)) if total + b.num_rows() <= 2 * rows => {
                    total += b.num_rows();
                    if let Some(Ok(b)) = batches.next() {
                        run.push(b);
                    }
                }
                _ => break,
            }
        }
        Some(if run.len() == 1 { Ok(run.remove(0)) } else { arrow::compute::concat_batches(&run[0].schema(), &run).map_err(Into::into) })
    })
}

/// `batches` as one batch of `schema`, each column concatenated on a thread of its own (an
/// empty batch when there are none): what a partition's build side or a whole side becomes
/// before the partitions that wait for it run.
pub fn concat_on_threads(schema: &arrow::datatypes::SchemaRef, batches: &[arrow::record_batch::RecordBatch]) -> crate::error::Result<arrow::record_batch::RecordBatch> {
    use rayon::prelude::*;
    let columns = match batches {
        [] => return Ok(arrow::record_batch::RecordBatch::new_empty(schema.clone())),
        [one] => one.columns().to_vec(),
        _ => (0..schema.fields().len())
            .into_par_iter()
            .map(|c| Ok(arrow::compute::concat(&batches.iter().map(|b| b.column(c).as_ref()).collect::<Vec<_>>())?))
            .collect::<crate::error::Result<Vec<_>>>()?,
    };
    let rows = batches.iter().map(|b| b.num_rows()).sum();
    let options = arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(arrow::record_batch::RecordBatch::try_new_with_options(schema.clone(), columns, &options)?)
}

/// Spark's `Utils.bytesToString`: one decimal in the largest unit of which there are at least
/// two (`1294.9 KiB`, `2.0 MiB`), rounding half up; `1.23E+22 B` from 2048 EiB on.
pub fn bytes_to_string(size: u128) -> String {
    const UNITS: [(&str, u32); 6] = [("EiB", 60), ("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    if size >= (1u128 << 11) << 60 {
        return format!("{} B", three_digits(size));
    }
    let (unit, shift) = UNITS.iter().find(|(_, shift)| size >= 2u128 << shift).copied().unwrap_or(("B", 0));
    let divisor = 1u128 << shift;
    // Tenths, rounded half up: size < 2^71, so size * 20 fits.
    let tenths = (size * 20 + divisor) / (2 * divisor);
    format!("{}.{} {unit}", tenths / 10, tenths % 10)
}

/// Java's `BigDecimal(n, new MathContext(3, HALF_UP)).toString()`: up to three digits exact,
/// otherwise three significant digits in scientific notation (`1.23E+4`, `2.00E+5`).
pub fn three_digits(n: u128) -> String {
    let digits = n.to_string();
    if digits.len() <= 3 {
        return digits;
    }
    let exponent = digits.len() - 1;
    let mut kept: u128 = digits[..3].parse().unwrap_or(0);
    if digits.as_bytes()[3] >= b'5' {
        kept += 1;
    }
    // 999.5 rounds up to 1000: one more digit of exponent.
    let (kept, exponent) = if kept == 1000 { (100, exponent + 1) } else { (kept, exponent) };
    let kept = kept.to_string();
    format!("{}.{}E+{exponent}", &kept[..1], &kept[1..])
}
