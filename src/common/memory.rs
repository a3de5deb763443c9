//! The query's memory budget (`kiln.memory.limit`). Breakers — exchange buffers, broadcast
//! sides and join tables, aggregation tables, sort and window inputs, the drained sides of
//! shuffled joins, finished query stages — reserve what they hold before they hold it; a
//! reservation that would take the query past its limit fails with an error naming the
//! operator and the limit, unless the breaker spills what it holds to disk (a sort does). A
//! reservation gives its bytes back when dropped, so a failed query leaves the pool, and the
//! session, as they were.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::bytes_to_string;
use crate::error::{KilnError, Result};

/// What holds a reservation (an operator of a physical plan), named in the error when the
/// pool is out of memory.
pub trait MemoryConsumer: std::fmt::Debug + Send + Sync {
    /// The consumer as an error message names it.
    fn consumer_name(&self) -> String;
}

/// Bytes held by one query's breakers, against its limit.
#[derive(Debug)]
pub struct MemoryPool {
    limit: AtomicU64,
    used: AtomicU64,
    peak: AtomicU64,
}

impl Default for MemoryPool {
    fn default() -> Self {
        MemoryPool::new(u64::MAX)
    }
}

impl MemoryPool {
    /// A pool of `limit` bytes.
    pub fn new(limit: u64) -> MemoryPool {
        MemoryPool { limit: AtomicU64::new(limit), used: AtomicU64::new(0), peak: AtomicU64::new(0) }
    }
    /// Sets the limit (for reservations made from now on).
    pub fn set_limit(&self, limit: u64) {
        self.limit.store(limit, Ordering::Relaxed);
    }
    /// The limit in bytes.
    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }
    /// Bytes reserved now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
    /// The most bytes reserved at once so far.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

/// What one operator holds of a pool. Safe to grow from several partitions' threads at once.
#[derive(Debug)]
pub struct Reservation {
    pool: Arc<MemoryPool>,
    operator: Arc<dyn MemoryConsumer>,
    bytes: AtomicU64,
}

impl Reservation {
    /// An empty reservation for `operator`.
    pub fn new<C: MemoryConsumer + 'static>(pool: &Arc<MemoryPool>, operator: &Arc<C>) -> Reservation {
        Reservation { pool: pool.clone(), operator: operator.clone(), bytes: AtomicU64::new(0) }
    }

    /// The limit of the pool it takes from.
    pub fn pool_limit(&self) -> u64 {
        self.pool.limit()
    }

    /// The most an operator that can spill (a sort, an aggregate) holds in one task before it
    /// does: a quarter of the limit over the threads, so that another such operator over it in
    /// the same thread, which cannot free memory while it waits for this one's rows, leaves it
    /// room (and it leaves them room).
    pub fn task_share(&self) -> u64 {
        (self.pool_limit() / 4 / rayon::current_num_threads().max(1) as u64).max(1 << 20)
    }

    /// Bytes held now.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Takes `n` more bytes, or fails (holding what it held) when the pool would pass its limit.
    pub fn grow(&self, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let pool = &self.pool;
        let before = pool.used.fetch_add(n, Ordering::Relaxed);
        let after = before.saturating_add(n);
        let limit = pool.limit();
        if after > limit {
            pool.used.fetch_sub(n, Ordering::Relaxed);
            return Err(self.exceeded(n, before, limit));
        }
        self.bytes.fetch_add(n, Ordering::Relaxed);
        pool.peak.fetch_max(after, Ordering::Relaxed);
        Ok(())
    }

    /// Takes `n` more bytes, waiting a while when refused for other partitions' operators to
    /// spill what they hold (each does when it is next refused); refused as [`Reservation::grow`]
    /// when nothing was freed. `check` stops the wait of a cancelled query.
    pub fn grow_when_freed(&self, n: u64, check: impl Fn() -> Result<()>) -> Result<()> {
        let mut refused = match self.grow(n) {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        for _ in 0..2_000 {
            check()?;
            std::thread::sleep(std::time::Duration::from_millis(1));
            match self.grow(n) {
                Ok(()) => return Ok(()),
                Err(e) => refused = e,
            }
        }
        Err(refused)
    }

    /// Gives back up to `n` bytes.
    pub fn shrink(&self, n: u64) {
        let mut held = self.bytes.load(Ordering::Relaxed);
        loop {
            let give = n.min(held);
            match self.bytes.compare_exchange_weak(held, held - give, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => {
                    self.pool.used.fetch_sub(give, Ordering::Relaxed);
                    return;
                }
                Err(now) => held = now,
            }
        }
    }

    /// Holds exactly `total` bytes (a table that grew or shrank).
    pub fn resize(&self, total: u64) -> Result<()> {
        let held = self.bytes();
        if total > held {
            self.grow(total - held)
        } else {
            self.shrink(held - total);
            Ok(())
        }
    }

    /// As [`Reservation::resize`], waiting a while for others to free memory when refused
    /// (see [`Reservation::grow_when_freed`]).
    pub fn resize_when_freed(&self, total: u64, check: impl Fn() -> Result<()>) -> Result<()> {
        let held = self.bytes();
        if total > held {
            self.grow_when_freed(total - held, check)
        } else {
            self.shrink(held - total);
            Ok(())
        }
    }

    fn exceeded(&self, wanted: u64, used: u64, limit: u64) -> KilnError {
        let mut operator = self.operator.consumer_name();
        if operator.chars().count() > 120 {
            operator = operator.chars().take(117).collect::<String>() + "...";
        }
        KilnError::Execution(format!(
            "[UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire {} of memory for {operator}: the query's breakers already hold {} of kiln.memory.limit ({}). \
             Raise kiln.memory.limit, or give the operator less to hold (a filter before it, more shuffle partitions).",
            bytes_to_string(wanted as u128),
            bytes_to_string(used as u128),
            bytes_to_string(limit as u128),
        ))
    }
}

/// The bytes of a batch's rows: of its slice only (an exchange's partitions are often slices
/// of one larger batch, whose whole buffers `get_array_memory_size` would count each time).
pub fn batch_bytes(b: &arrow::record_batch::RecordBatch) -> u64 {
    b.columns().iter().map(|c| array_bytes(c.as_ref())).sum()
}

/// The bytes of an array's slice, without copying its `ArrayData` for the common types.
fn array_bytes(a: &dyn arrow::array::Array) -> u64 {
    use arrow::array::AsArray;
    let n = a.len() as u64;
    let validity = if a.null_count() > 0 { n.div_ceil(8) } else { 0 };
    let t = a.data_type();
    if let Some(width) = t.primitive_width() {
        return n * width as u64 + validity;
    }
    match t {
        arrow::datatypes::DataType::Boolean => n.div_ceil(8) + validity,
        arrow::datatypes::DataType::Utf8 => {
            let o = a.as_string::<i32>().value_offsets();
            (n + 1) * 4 + (o[o.len() - 1] - o[0]) as u64 + validity
        }
        arrow::datatypes::DataType::LargeUtf8 => {
            let o = a.as_string::<i64>().value_offsets();
            (n + 1) * 8 + (o[o.len() - 1] - o[0]) as u64 + validity
        }
        _ => a.to_data().get_slice_memory_size().unwrap_or_else(|_| a.get_array_memory_size()) as u64,
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.pool.used.fetch_sub(*self.bytes.get_mut(), Ordering::Relaxed);
    }
}

/// The default `kiln.memory.limit`: 60 % of the machine's memory (Spark gives execution and
/// storage `spark.memory.fraction` = 0.6 of the heap), or 4 GiB where that cannot be read.
pub fn default_limit() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        });
        total.map_or(4 << 30, |t| t / 10 * 6)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Scan;

    impl MemoryConsumer for Scan {
        fn consumer_name(&self) -> String {
            "LocalTableScan".into()
        }
    }

    fn plan() -> Arc<Scan> {
        Arc::new(Scan)
    }

    #[test]
    fn reservations_count_against_the_limit_and_give_back_when_dropped() {
        let pool = Arc::new(MemoryPool::new(100));
        let op = plan();
        let a = Reservation::new(&pool, &op);
        a.grow(60).expect("fits");
        let b = Reservation::new(&pool, &op);
        let err = b.grow(50).expect_err("over the limit");
        assert!(err.to_string().contains("UNABLE_TO_ACQUIRE_MEMORY") && err.to_string().contains("kiln.memory.limit"), "{err}");
        assert!(err.to_string().contains("for LocalTableScan"), "{err}");
        assert_eq!((pool.used(), b.bytes()), (60, 0), "a failed grow holds nothing");
        b.grow(40).expect("fits exactly");
        a.shrink(1000);
        assert_eq!((pool.used(), a.bytes()), (40, 0));
        b.resize(10).expect("shrinks");
        assert_eq!(pool.used(), 10);
        drop(b);
        assert_eq!((pool.used(), pool.peak()), (0, 100));
    }

    #[test]
    fn the_default_limit_is_a_share_of_the_machine() {
        let limit = default_limit();
        assert!(limit >= 256 << 20, "{limit}");
    }
}
