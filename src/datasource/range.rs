//! Spark's table-valued `range(start, end, step, splits)`: one bigint column `id`, generated as
//! it is read, each partition a batch at a time, so a range of any length costs one batch of
//! memory and stops when its query is cancelled or times out.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Array};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::error::Result;

/// The arguments of a `range(...)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeSpec {
    /// The first value.
    pub start: i64,
    /// The end, excluded.
    pub end: i64,
    /// The difference between values; never 0.
    pub step: i64,
    /// The partitions asked for; None: the machine's parallelism.
    pub splits: Option<usize>,
}

impl RangeSpec {
    /// How many values the range holds (more than an i64 can count for the widest ranges).
    pub fn count(&self) -> u128 {
        let (start, end, step) = (self.start as i128, self.end as i128, self.step as i128);
        if (step > 0 && start < end) || (step < 0 && start > end) {
            let span = (end - start).unsigned_abs();
            let step = step.unsigned_abs();
            span.div_ceil(step)
        } else {
            0
        }
    }

    /// The partitions it is read in.
    pub fn partitions(&self) -> usize {
        self.splits.unwrap_or_else(|| crate::common::available_cores()).max(1)
    }

    /// The logical node's line, as Spark prints it: `Range (0, 10, step=1)`, with `splits=Some(3)`
    /// when given.
    pub fn logical_string(&self) -> String {
        match self.splits {
            Some(n) => format!("Range ({}, {}, step={}, splits=Some({n}))", self.start, self.end, self.step),
            None => format!("Range ({}, {}, step={})", self.start, self.end, self.step),
        }
    }

    /// The physical node's line: `Range (0, 10, step=1, splits=2)`.
    pub fn physical_string(&self) -> String {
        format!("Range ({}, {}, step={}, splits={})", self.start, self.end, self.step, self.partitions())
    }

    /// The values of partition `i`, `batch_size` at a time: the elements from `i * n / splits`
    /// up to `(i + 1) * n / splits`, as Spark splits them.
    pub fn batches(&self, i: usize, schema: SchemaRef, batch_size: usize) -> impl Iterator<Item = Result<RecordBatch>> {
        let (n, splits) = (self.count(), self.partitions() as u128);
        let (mut next, end) = (i as u128 * n / splits, (i as u128 + 1).min(splits) * n / splits);
        let (start, step, batch_size) = (self.start, self.step, batch_size.max(1) as u128);
        std::iter::from_fn(move || {
            if next >= end {
                return None;
            }
            let len = (end - next).min(batch_size);
            // Every value lies between start and end, so the wrapping arithmetic is exact.
            let first = start.wrapping_add((next as i64).wrapping_mul(step));
            let values = Int64Array::from_iter_values((0..len as i64).map(|k| first.wrapping_add(k.wrapping_mul(step))));
            next += len;
            Some(RecordBatch::try_new(schema.clone(), vec![Arc::new(values) as ArrayRef]).map_err(Into::into))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Field, Schema};

    fn values(r: RangeSpec, batch: usize) -> Vec<i64> {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, false)]));
        (0..r.partitions())
            .flat_map(|i| r.batches(i, schema.clone(), batch).collect::<Vec<_>>())
            .flat_map(|b| b.unwrap().column(0).as_any().downcast_ref::<Int64Array>().unwrap().values().to_vec())
            .collect()
    }

    #[test]
    fn partitions_split_the_values_in_order_a_batch_at_a_time() {
        let r = RangeSpec { start: 0, end: 10, step: 2, splits: Some(3) };
        assert_eq!(r.count(), 5);
        assert_eq!(values(r, 1), [0, 2, 4, 6, 8]);
        let down = RangeSpec { start: 5, end: -6, step: -3, splits: Some(2) };
        assert_eq!(values(down, 2), [5, 2, -1, -4]);
        assert_eq!(RangeSpec { start: 3, end: 3, step: 1, splits: None }.count(), 0);
        let wide = RangeSpec { start: i64::MIN, end: i64::MAX, step: 1, splits: Some(4) };
        assert_eq!(wide.count(), u64::MAX as u128);
        let top = RangeSpec { start: i64::MAX - 3, end: i64::MAX, step: 2, splits: Some(1) };
        assert_eq!(values(top, 8), [i64::MAX - 3, i64::MAX - 1]);
        assert_eq!(r.logical_string(), "Range (0, 10, step=2, splits=Some(3))");
        assert_eq!(r.physical_string(), "Range (0, 10, step=2, splits=3)");
    }
}
