//! Vectorized interpreted operators over Arrow batches (Arrow compute kernels).
//!
//! Each operator works on one partition: batches whose columns are the child's output
//! attributes in, batches whose columns are the operator's output attributes out.

pub mod aggregate;
pub mod exchange;
pub mod generate;
pub mod join;
pub mod sort;
pub mod window;

mod accumulators;
mod stat_accumulators;

pub use aggregate::{hash_aggregate, state_attrs, HashAggregator};
pub use exchange::{range_partition, HashPartitioner, RangeBounds};
pub use generate::generate;
pub use join::{hash_join, nested_loop_join, sort_merge_join};
pub use sort::{limit, sort};
pub use window::window;

use arrow::record_batch::RecordBatch;

// The batch-level evaluation (filter, project, schemas) lives with the expressions.
pub(crate) use crate::expr::eval::{evaluate_all, make_batch};
pub use crate::expr::eval::{filter, project, schema_of};
use crate::error::Result;
use crate::expr::Attribute;

/// All batches of a partition as one (an empty batch of `attrs` when there are none).
pub(crate) fn concat(attrs: &[Attribute], batches: &[RecordBatch]) -> Result<RecordBatch> {
    match batches {
        [] => Ok(RecordBatch::new_empty(schema_of(attrs))),
        [one] => Ok(one.clone()),
        many => crate::common::concat_on_threads(&many[0].schema(), many),
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Small builders shared by the operator tests.
    use super::*;
    use arrow::array::{Array, ArrayRef, AsArray, Decimal128Array, Int64Array, StringArray};
    use std::sync::Arc;
    use arrow::datatypes::{DataType, Int64Type};

    pub fn attr(name: &str, dt: DataType) -> Attribute {
        Attribute::new(name, dt, true)
    }

    pub fn batch(attrs: &[Attribute], cols: Vec<ArrayRef>) -> RecordBatch {
        let rows = cols.first().map_or(0, |c| c.len());
        make_batch(schema_of(attrs), cols, rows).expect("test batch")
    }

    pub fn ints(v: &[Option<i64>]) -> ArrayRef {
        Arc::new(Int64Array::from(v.to_vec()))
    }

    pub fn strs(v: &[Option<&str>]) -> ArrayRef {
        Arc::new(StringArray::from(v.to_vec()))
    }

    pub fn decs(v: &[Option<i128>], p: u8, s: i8) -> ArrayRef {
        Arc::new(Decimal128Array::from(v.to_vec()).with_precision_and_scale(p, s).expect("decimal"))
    }

    /// Column `i` of all batches as Option<i64>s.
    pub fn col_i64(batches: &[RecordBatch], i: usize) -> Vec<Option<i64>> {
        batches
            .iter()
            .flat_map(|b| {
                let a = b.column(i).as_primitive::<Int64Type>().clone();
                (0..a.len()).map(move |r| a.is_valid(r).then(|| a.value(r))).collect::<Vec<_>>()
            })
            .collect()
    }

    /// Column `i` of all batches as strings (`NULL` for nulls), via Arrow's display.
    pub fn col_str(batches: &[RecordBatch], i: usize) -> Vec<String> {
        use arrow::util::display::{ArrayFormatter, FormatOptions};
        let opts = FormatOptions::default().with_null("NULL");
        batches
            .iter()
            .flat_map(|b| {
                let f = ArrayFormatter::try_new(b.column(i).as_ref(), &opts).expect("formatter");
                (0..b.num_rows()).map(|r| f.value(r).to_string()).collect::<Vec<_>>()
            })
            .collect()
    }

    pub fn rows(batches: &[RecordBatch]) -> usize {
        batches.iter().map(|b| b.num_rows()).sum()
    }
}
