//! A cached relation (Spark's `InMemoryRelation`): rows a `CACHE TABLE` or `DataFrame::cache`
//! read once into memory, which later queries scan instead of the plan they came from.

use std::sync::Arc;

use crate::common::memory::{MemoryConsumer, MemoryPool, Reservation};
use crate::error::{KilnError, Result};

/// Spark's `StorageLevel`: where a cached relation's rows may be kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageLevel {
    /// Blocks may go to disk.
    pub use_disk: bool,
    /// Blocks may stay in memory.
    pub use_memory: bool,
    /// Blocks may go off the heap.
    pub use_off_heap: bool,
    /// Kept as values rather than serialized bytes.
    pub deserialized: bool,
    /// Copies kept.
    pub replication: u32,
}

impl StorageLevel {
    /// `MEMORY_AND_DISK`: the level of `CACHE TABLE` and `cache()`.
    pub const MEMORY_AND_DISK: StorageLevel = StorageLevel { use_disk: true, use_memory: true, use_off_heap: false, deserialized: true, replication: 1 };
    /// `NONE`: what an uncached DataFrame reports.
    pub const NONE: StorageLevel = StorageLevel { use_disk: false, use_memory: false, use_off_heap: false, deserialized: false, replication: 1 };

    /// The level of one of Spark's names (`MEMORY_ONLY`, `DISK_ONLY_2`, ...), case-insensitive.
    pub fn from_name(name: &str) -> Result<StorageLevel> {
        let upper = name.trim().to_ascii_uppercase();
        let (base, replication) = match upper.strip_suffix("_2") {
            Some(base) => (base, 2),
            None => match upper.strip_suffix("_3") {
                Some(base) if base == "DISK_ONLY" => (base, 3),
                _ => (upper.as_str(), 1),
            },
        };
        let (use_disk, use_memory, use_off_heap, deserialized) = match base {
            "NONE" if replication == 1 => (false, false, false, false),
            "DISK_ONLY" => (true, false, false, false),
            "MEMORY_ONLY" => (false, true, false, true),
            "MEMORY_ONLY_SER" => (false, true, false, false),
            "MEMORY_AND_DISK" => (true, true, false, true),
            "MEMORY_AND_DISK_SER" => (true, true, false, false),
            "MEMORY_AND_DISK_DESER" if replication == 1 => (true, true, false, true),
            "OFF_HEAP" if replication == 1 => (true, true, true, false),
            _ => return Err(KilnError::analysis("INVALID_STORAGE_LEVEL", format!("Invalid StorageLevel: {name}"))),
        };
        Ok(StorageLevel { use_disk, use_memory, use_off_heap, deserialized, replication })
    }

    /// kiln keeps every cache in memory: a level that keeps nothing there is refused.
    pub fn check_supported(&self) -> Result<()> {
        if self.use_memory {
            return Ok(());
        }
        Err(KilnError::unsupported(format!("caching with {self}: kiln keeps cached rows in memory only (use MEMORY_ONLY or MEMORY_AND_DISK)")))
    }
}

/// `StorageLevel(disk, memory, deserialized, 1 replicas)`, as Spark prints it.
impl std::fmt::Display for StorageLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let flags = [(self.use_disk, "disk"), (self.use_memory, "memory"), (self.use_off_heap, "offheap"), (self.deserialized, "deserialized")];
        let mut parts: Vec<String> = flags.iter().filter(|(on, _)| *on).map(|(_, n)| n.to_string()).collect();
        parts.push(format!("{} replicas", self.replication));
        write!(f, "StorageLevel({})", parts.join(", "))
    }
}

/// What a cached table is beyond its batches: how it prints, and the memory it holds.
#[derive(Debug)]
pub struct CachedRelation {
    /// The table or view cached by name (`Scan In-memory table t`); None for a DataFrame's
    /// rows (`InMemoryTableScan`).
    pub table_name: Option<String>,
    /// The level asked for.
    pub level: StorageLevel,
    /// The tree string of the plan that computed the rows, printed under `InMemoryRelation`.
    pub plan: String,
    /// The rows' bytes in the session's cache pool, given back when the cache is dropped.
    pub(crate) reservation: Reservation,
}

/// Names a cache in an out-of-memory error.
#[derive(Debug)]
struct CacheConsumer(String);

impl MemoryConsumer for CacheConsumer {
    fn consumer_name(&self) -> String {
        self.0.clone()
    }
}

impl CachedRelation {
    /// An empty reservation in `pool` for the cache of `what`; grow it as rows arrive.
    pub fn reserve(pool: &Arc<MemoryPool>, what: &str) -> Reservation {
        Reservation::new(pool, &Arc::new(CacheConsumer(what.to_string())))
    }
    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.reservation.bytes()
    }
    /// Spark's `InMemoryRelation [cols], StorageLevel(..)` over the plan that computed the
    /// rows, as the optimized plan and a cache's scan print it; `relation` are the columns
    /// with the reading query's ids.
    pub fn tree_string(&self, relation: &[crate::expr::Attribute]) -> String {
        crate::common::tree::with_inner_children(self.line(relation), false, &[self.plan.clone()])
    }
    /// The `InMemoryRelation [cols], StorageLevel(..)` line alone.
    pub fn line(&self, relation: &[crate::expr::Attribute]) -> String {
        let cols: Vec<String> = relation.iter().map(|a| a.to_string()).collect();
        format!("InMemoryRelation [{}], {}", cols.join(", "), self.level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_print_as_spark_prints_them() {
        assert_eq!(StorageLevel::MEMORY_AND_DISK.to_string(), "StorageLevel(disk, memory, deserialized, 1 replicas)");
        assert_eq!(StorageLevel::from_name("disk_only").unwrap().to_string(), "StorageLevel(disk, 1 replicas)");
        assert_eq!(StorageLevel::from_name("MEMORY_ONLY_2").unwrap().to_string(), "StorageLevel(memory, deserialized, 2 replicas)");
        assert!(StorageLevel::from_name("DISK_ONLY").unwrap().check_supported().is_err());
        assert!(StorageLevel::from_name("MEMORY_SOMETIMES").is_err());
    }
}
