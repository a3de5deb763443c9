//! Typed settings under Spark's own key names (`spark.sql.shuffle.partitions`), `kiln.*` for ours.

use crate::error::{closest_match, KilnError, Result};

/// Session settings. Unknown keys are rejected with a suggestion, as a typo would otherwise
/// be silently ignored.
#[derive(Debug, Clone)]
pub struct Config {
    /// `spark.sql.shuffle.partitions`: width of every hash/range Exchange.
    pub shuffle_partitions: usize,
    /// `spark.sql.autoBroadcastJoinThreshold`: largest table (bytes) to broadcast; -1 disables.
    pub auto_broadcast_join_threshold: i64,
    /// `spark.sql.join.preferSortMergeJoin`: plan shuffled equi-joins as SortMergeJoin; when
    /// false, a side small enough per partition (and 3x smaller than the other) is hashed instead.
    pub prefer_sort_merge_join: bool,
    /// `spark.sql.optimizeNullAwareAntiJoin`: plan single-column `NOT IN (subquery)` as a
    /// null-aware BroadcastHashJoin instead of a BroadcastNestedLoopJoin.
    pub optimize_null_aware_anti_join: bool,
    /// `spark.sql.codegen.wholeStage`: compile fused stages (true) or interpret every operator.
    pub whole_stage_codegen: bool,
    /// `spark.sql.ansi.enabled`: only `true` is supported.
    pub ansi_enabled: bool,
    /// `spark.sql.optimizer.maxIterations`: cap of a fixed-point batch.
    pub optimizer_max_iterations: usize,
    /// `spark.sql.optimizer.excludedRules`: rule names to skip (rules needed for correctness
    /// are never skipped; the optimizer warns instead).
    pub optimizer_excluded_rules: Vec<String>,
    /// `spark.sql.optimizer.inSetConversionThreshold`: an IN list of literals longer than this
    /// becomes an `INSET` lookup (`OptimizeIn`).
    pub optimizer_in_set_conversion_threshold: usize,
    /// `spark.sql.optimizer.runtime.bloomFilter.*` and `spark.sql.optimizer.runtimeFilter.number.threshold`:
    /// when and how `InjectRuntimeFilter` plants Bloom filters.
    pub runtime_filter: RuntimeFilterConfig,
    /// `spark.sql.constraintPropagation.enabled`: `InferFiltersFromConstraints` runs.
    pub constraint_propagation_enabled: bool,
    /// `spark.sql.planChangeLog.level`: `OFF` (kiln's default), or `INFO` / `WARN` (print every
    /// effective rule's before/after plan to stderr). `TRACE`/`DEBUG` print nothing, as in Spark.
    pub plan_change_log_level: String,
    /// `spark.sql.planChangeLog.rules`: only log these rules (empty: all).
    pub plan_change_log_rules: Vec<String>,
    /// `spark.sql.planChangeLog.batches`: only log these batches (empty: all).
    pub plan_change_log_batches: Vec<String>,
    /// `kiln.optimizer.strict`: Catalyst's test mode. After every effective rule the plan must be
    /// resolved, define each ExprId once and read only columns its children produce; `Once`
    /// batches are re-run to prove idempotence; hitting `maxIterations` or a recurring plan is
    /// an error instead of a warning. On in debug builds and unit tests.
    pub optimizer_strict: bool,
    /// `spark.sql.adaptive.enabled`: run a plan with exchanges stage by stage, re-planning the
    /// rest from each stage's real output (`AdaptiveSparkPlan` in plans).
    pub adaptive_enabled: bool,
    /// `spark.sql.adaptive.autoBroadcastJoinThreshold`: largest stage output (bytes) a join
    /// broadcasts at run time; unset: `spark.sql.autoBroadcastJoinThreshold`; -1 disables.
    pub adaptive_broadcast_threshold: Option<i64>,
    /// `spark.sql.adaptive.coalescePartitions.enabled`: merge small contiguous shuffle partitions.
    pub adaptive_coalesce_enabled: bool,
    /// `spark.sql.adaptive.advisoryPartitionSizeInBytes`: the size coalesced and split partitions aim at.
    pub adaptive_advisory_partition_bytes: i64,
    /// `spark.sql.adaptive.coalescePartitions.minPartitionSize`: the least a coalesced partition
    /// aims at. kiln's default is 256 KB, not Spark's 1 MB: a sort-merge join over 1 MB
    /// partitions sorts out of cache (TPC-H Q4 at SF1 ran 1.14x faster at 256 KB, one sitting).
    pub adaptive_min_partition_bytes: i64,
    /// `spark.sql.adaptive.coalescePartitions.parallelismFirst`: aim at one partition per core
    /// before the advisory size.
    pub adaptive_parallelism_first: bool,
    /// `spark.sql.adaptive.coalescePartitions.minPartitionNum`: with parallelism first, the
    /// partitions coalescing aims at no fewer than; unset: `spark.sql.shuffle.partitions`, so
    /// only partitions under `minPartitionSize` are merged. A kiln task costs microseconds, not
    /// a JVM task's milliseconds, and its sorts and hash tables run fastest on partitions that
    /// stay in cache: coalescing TPC-H Q18's SF10 shuffles to 64 partitions made it ~20 %
    /// slower than leaving 200.
    pub adaptive_min_partition_num: Option<usize>,
    /// `spark.sql.adaptive.localShuffleReader.enabled`: a join turned into a broadcast reads the
    /// other side's finished shuffle without its hash layout.
    pub adaptive_local_shuffle_reader: bool,
    /// `spark.sql.adaptive.skewJoin.enabled`: split skewed partitions of a sort-merge join.
    pub adaptive_skew_join_enabled: bool,
    /// `spark.sql.adaptive.skewJoin.skewedPartitionFactor`: skewed = this many times the median ...
    pub adaptive_skew_factor: f64,
    /// `spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes`: ... and larger than this.
    pub adaptive_skew_threshold_bytes: i64,
    /// `spark.sql.maxMetadataStringLength`: scan descriptions are cut at this many characters.
    pub max_metadata_string_length: usize,
    /// `kiln.batchSize`: rows per batch read from Parquet.
    pub batch_size: usize,
    /// `kiln.aggregate.partialRunRows`: input rows a partial aggregate under an exchange groups
    /// in one table across its input partitions (one task per thread pair, not per partition)
    /// before it emits the table and starts another; 0: one table per input partition, as
    /// Spark's tasks. Default 1048576.
    pub partial_run_rows: usize,
    /// `kiln.aggregate.partialFlushGroups`: groups past which a partial aggregate whose rows
    /// fold at least two to a group emits its groups and starts again in the same table, kept
    /// the size of the caches; 0: never. Default 16384.
    pub partial_flush_groups: usize,
    /// `kiln.codegen.dump`: what EXPLAIN CODEGEN prints per stage: the annotated IR (`ir`, the
    /// default), the native code (`asm`) or both. `kiln.codegen.disassembly=true` is `both`.
    pub codegen_dump: CodegenDump,
    /// `spark.sql.parquet.filterPushdown`: skip row groups by their statistics.
    pub parquet_filter_pushdown: bool,
    /// `spark.sql.parquet.datetimeRebaseModeInRead`: dates and timestamps before the Gregorian
    /// calendar in Parquet files no Spark wrote (Spark's files say themselves); CORRECTED.
    pub parquet_datetime_rebase: crate::datasource::spark_parquet::RebaseMode,
    /// `spark.sql.parquet.int96RebaseModeInRead`: the same for INT96 timestamps; CORRECTED.
    pub parquet_int96_rebase: crate::datasource::spark_parquet::RebaseMode,
    /// `spark.sql.sources.partitionColumnTypeInference.enabled`: type partition folders' values
    /// (int, bigint, decimal, double, date, timestamp) or read them all as strings.
    pub partition_column_type_inference: bool,
    /// `spark.sql.warehouse.dir`: the folder holding managed tables (`CREATE TABLE .. USING
    /// parquet` without LOCATION), one sub-folder per table; relative to the working directory.
    pub warehouse_dir: String,
    /// `kiln.query.timeout`: a query running longer is cancelled with an error naming the
    /// setting (`30s`, `500ms`, `2m`, or seconds); 0: no limit, the default.
    pub query_timeout: std::time::Duration,
    /// `kiln.files.allowedRoots`: folders (comma-separated) tables may be read from and written
    /// to; empty, the default: anywhere.
    pub files_allowed_roots: Vec<String>,
    /// `kiln.memory.limit`: the bytes a query's breakers may hold at once (`4g`, `512m`); more
    /// fails the query with an error naming the operator. Default: 60 % of the machine's memory.
    pub memory_limit: u64,
    /// `spark.sql.cteRecursionLevelLimit`: the most steps a recursive CTE runs; -1: no limit.
    pub cte_recursion_level_limit: i64,
    /// `spark.sql.cteRecursionRowLimit`: the most rows a recursive CTE makes; -1: no limit.
    pub cte_recursion_row_limit: i64,
    /// `spark.sql.cbo.enabled`: estimate row counts from collected statistics (off, as in Spark).
    pub cbo_enabled: bool,
    /// `spark.sql.cbo.joinReorder.enabled`: the DP join reorder (needs `cbo_enabled` too).
    pub cbo_join_reorder_enabled: bool,
    /// `spark.sql.cbo.joinReorder.dp.threshold`: most items the DP reorders.
    pub cbo_join_reorder_dp_threshold: usize,
    /// `spark.sql.cbo.joinReorder.card.weight`: the weight of rows (vs. bytes) in a plan's cost.
    pub cbo_join_reorder_card_weight: f64,
    /// `spark.sql.statistics.histogram.enabled`: ANALYZE ... FOR COLUMNS builds histograms.
    pub histogram_enabled: bool,
    /// `spark.sql.statistics.histogram.numBins`.
    pub histogram_num_bins: usize,
    /// `spark.sql.statistics.ndv.maxError`: HyperLogLog++'s relative standard deviation.
    pub ndv_max_error: f64,
    /// Keys outside `spark.` and `kiln.` set by `SET key=value`: kept and read back as Spark keeps
    /// user settings, never read by kiln.
    pub user_settings: std::collections::BTreeMap<String, String>,
    /// Not a setting: the control (cancel flag, progress) of the run this copy of the config
    /// belongs to, set by `DataFrame::collect_with_control`.
    pub control: Option<std::sync::Arc<crate::exec::control::QueryControl>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            user_settings: Default::default(),
            shuffle_partitions: 200,
            query_timeout: std::time::Duration::ZERO,
            files_allowed_roots: vec![],
            memory_limit: crate::exec::memory::default_limit(),
            auto_broadcast_join_threshold: 10 * 1024 * 1024,
            prefer_sort_merge_join: true,
            optimize_null_aware_anti_join: true,
            whole_stage_codegen: true,
            ansi_enabled: true,
            optimizer_max_iterations: 100,
            optimizer_excluded_rules: vec![],
            optimizer_in_set_conversion_threshold: 10,
            constraint_propagation_enabled: true,
            runtime_filter: RuntimeFilterConfig::default(),
            plan_change_log_level: "OFF".into(),
            plan_change_log_rules: vec![],
            plan_change_log_batches: vec![],
            optimizer_strict: cfg!(debug_assertions) || cfg!(test),
            adaptive_enabled: true,
            adaptive_broadcast_threshold: None,
            adaptive_coalesce_enabled: true,
            adaptive_advisory_partition_bytes: 64 << 20,
            adaptive_min_partition_bytes: 256 << 10,
            adaptive_parallelism_first: true,
            adaptive_min_partition_num: None,
            adaptive_local_shuffle_reader: true,
            adaptive_skew_join_enabled: true,
            adaptive_skew_factor: 5.0,
            adaptive_skew_threshold_bytes: 256 << 20,
            max_metadata_string_length: 100,
            batch_size: 8192,
            partial_run_rows: 1 << 20,
            partial_flush_groups: 1 << 14,
            codegen_dump: CodegenDump::Ir,
            parquet_filter_pushdown: true,
            parquet_datetime_rebase: crate::datasource::spark_parquet::RebaseMode::Corrected,
            parquet_int96_rebase: crate::datasource::spark_parquet::RebaseMode::Corrected,
            partition_column_type_inference: true,
            warehouse_dir: "spark-warehouse".into(),
            cte_recursion_level_limit: 100,
            cte_recursion_row_limit: 1_000_000,
            cbo_enabled: false,
            cbo_join_reorder_enabled: false,
            cbo_join_reorder_dp_threshold: 12,
            cbo_join_reorder_card_weight: 0.7,
            histogram_enabled: false,
            histogram_num_bins: 254,
            ndv_max_error: 0.05,
            control: None,
        }
    }
}

/// `InjectRuntimeFilter`'s settings, Spark's defaults except where noted.
#[derive(Debug, Clone)]
pub struct RuntimeFilterConfig {
    /// `...bloomFilter.enabled`.
    pub enabled: bool,
    /// `...bloomFilter.applicationSideScanSizeThreshold`: the largest scan of the filtered side
    /// must be at least this big. Spark's 10GB weighs a filter against a cluster job that
    /// builds it; kiln builds it in-process from a small filtered scan, so 64MB (TPC-H SF1's
    /// lineitem and orders get filters, its dimension tables do not).
    pub application_side_threshold: i64,
    /// `...bloomFilter.creationSideThreshold`: the side the filter is built from is at most this big.
    pub creation_side_threshold: i64,
    /// `...bloomFilter.expectedNumItems`: the filter's items when the creation side's rows are unknown.
    pub expected_items: u64,
    /// `...bloomFilter.numBits`: its bits then.
    pub num_bits: u64,
    /// `...bloomFilter.maxNumItems`.
    pub max_items: u64,
    /// `...bloomFilter.maxNumBits`.
    pub max_bits: u64,
    /// `spark.sql.optimizer.runtimeFilter.number.threshold`: filters planted per query at most.
    pub max_filters: usize,
}

impl Default for RuntimeFilterConfig {
    fn default() -> Self {
        RuntimeFilterConfig {
            enabled: true,
            application_side_threshold: 64 << 20,
            creation_side_threshold: 10 << 20,
            expected_items: 1_000_000,
            num_bits: 8_388_608,
            max_items: 4_000_000,
            max_bits: 67_108_864,
            max_filters: 10,
        }
    }
}

/// Every key `Config` understands.
pub const KEYS: &[&str] = &[
    "spark.sql.shuffle.partitions",
    "spark.sql.autoBroadcastJoinThreshold",
    "spark.sql.join.preferSortMergeJoin",
    "spark.sql.optimizeNullAwareAntiJoin",
    "spark.sql.codegen.wholeStage",
    "spark.sql.ansi.enabled",
    "spark.sql.optimizer.maxIterations",
    "spark.sql.optimizer.excludedRules",
    "spark.sql.optimizer.inSetConversionThreshold",
    "spark.sql.constraintPropagation.enabled",
    "spark.sql.optimizer.runtime.bloomFilter.enabled",
    "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold",
    "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold",
    "spark.sql.optimizer.runtime.bloomFilter.expectedNumItems",
    "spark.sql.optimizer.runtime.bloomFilter.numBits",
    "spark.sql.optimizer.runtime.bloomFilter.maxNumItems",
    "spark.sql.optimizer.runtime.bloomFilter.maxNumBits",
    "spark.sql.optimizer.runtimeFilter.number.threshold",
    "spark.sql.planChangeLog.level",
    "spark.sql.planChangeLog.rules",
    "spark.sql.planChangeLog.batches",
    "spark.sql.adaptive.enabled",
    "spark.sql.adaptive.autoBroadcastJoinThreshold",
    "spark.sql.adaptive.coalescePartitions.enabled",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes",
    "spark.sql.adaptive.coalescePartitions.minPartitionSize",
    "spark.sql.adaptive.coalescePartitions.parallelismFirst",
    "spark.sql.adaptive.coalescePartitions.minPartitionNum",
    "spark.sql.adaptive.localShuffleReader.enabled",
    "spark.sql.adaptive.skewJoin.enabled",
    "spark.sql.adaptive.skewJoin.skewedPartitionFactor",
    "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes",
    "spark.sql.maxMetadataStringLength",
    "spark.sql.session.timeZone",
    "spark.sql.parquet.filterPushdown",
    "spark.sql.parquet.datetimeRebaseModeInRead",
    "spark.sql.parquet.int96RebaseModeInRead",
    "spark.sql.sources.partitionColumnTypeInference.enabled",
    "spark.sql.warehouse.dir",
    "spark.sql.cteRecursionLevelLimit",
    "spark.sql.cteRecursionRowLimit",
    "spark.sql.cbo.enabled",
    "spark.sql.cbo.joinReorder.enabled",
    "spark.sql.cbo.joinReorder.dp.threshold",
    "spark.sql.cbo.joinReorder.card.weight",
    "spark.sql.statistics.histogram.enabled",
    "spark.sql.statistics.histogram.numBins",
    "spark.sql.statistics.ndv.maxError",
    "kiln.batchSize",
    "kiln.aggregate.partialRunRows",
    "kiln.aggregate.partialFlushGroups",
    "kiln.optimizer.strict",
    "kiln.codegen.disassembly",
    "kiln.codegen.dump",
    "kiln.query.timeout",
    "kiln.files.allowedRoots",
    "kiln.memory.limit",
];

/// What `EXPLAIN CODEGEN` prints of each compiled stage (`kiln.codegen.dump`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodegenDump {
    /// The Cranelift IR, annotated with the operator and expression each part implements.
    Ir,
    /// The machine code after register allocation.
    Asm,
    /// Both.
    Both,
}

impl CodegenDump {
    /// Whether the IR is printed.
    pub fn ir(self) -> bool {
        self != CodegenDump::Asm
    }
    /// Whether the machine code is printed.
    pub fn asm(self) -> bool {
        self != CodegenDump::Ir
    }
}

/// A comma-separated list, trimmed, without empty items.
fn name_list(value: &str) -> Vec<String> {
    value.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

fn parse<T: std::str::FromStr>(key: &str, value: &str, what: &str) -> Result<T> {
    value.trim().parse::<T>().map_err(|_| KilnError::Config(format!("`{key}` must be {what}, got `{value}`")))
}

/// A duration: `500ms`, `30s`, `2m`, or a number of seconds.
fn parse_duration(key: &str, value: &str) -> Result<std::time::Duration> {
    let v = value.trim().to_ascii_lowercase();
    let (number, unit) = match v.find(|c: char| c.is_ascii_alphabetic()) {
        Some(at) => v.split_at(at),
        None => (v.as_str(), "s"),
    };
    let scale = match unit.trim() {
        "ms" => 0.001,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    match number.trim().parse::<f64>() {
        Ok(n) if n >= 0.0 && (n * scale).is_finite() => Ok(std::time::Duration::from_secs_f64(n * scale)),
        _ => Err(KilnError::Config(format!("`{key}` must be a duration such as 30s, 500ms or 2m, got `{value}`"))),
    }
}

fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(KilnError::Config(format!("`{key}` must be true or false, got `{value}`"))),
    }
}

/// Parses a byte size as Spark does: `10485760`, `10MB`, `-1`.
fn parse_bytes(key: &str, value: &str) -> Result<i64> {
    let v = value.trim().to_ascii_lowercase();
    let (num, mult) = [("kb", 1i64 << 10), ("mb", 1 << 20), ("gb", 1 << 30), ("k", 1 << 10), ("m", 1 << 20), ("g", 1 << 30), ("b", 1)]
        .iter()
        .find_map(|(suffix, m)| v.strip_suffix(suffix).map(|n| (n.to_string(), *m)))
        .unwrap_or((v.clone(), 1));
    let n: i64 = parse(key, &num, "a size in bytes (e.g. 10485760, 10MB or -1)")?;
    Ok(if n < 0 { -1 } else { n.saturating_mul(mult) })
}

/// A byte size that must be positive (`64MB`).
fn positive_bytes(key: &str, value: &str) -> Result<i64> {
    match parse_bytes(key, value)? {
        n if n > 0 => Ok(n),
        _ => Err(KilnError::Config(format!("`{key}` must be a positive size in bytes (e.g. 64MB), got `{value}`"))),
    }
}

impl Config {
    /// The largest stage output a join broadcasts at run time (-1: never).
    pub fn adaptive_broadcast_threshold(&self) -> i64 {
        self.adaptive_broadcast_threshold.unwrap_or(self.auto_broadcast_join_threshold)
    }

    /// The partitions coalescing aims at no fewer than (parallelism first).
    pub fn adaptive_min_partition_num(&self) -> usize {
        self.adaptive_min_partition_num.unwrap_or(self.shuffle_partitions)
    }

    /// True when the plan change log prints (level INFO, WARN or ERROR).
    pub fn plan_change_log_enabled(&self) -> bool {
        matches!(self.plan_change_log_level.as_str(), "INFO" | "WARN" | "ERROR")
    }

    /// Sets one key; errors name the key and suggest the closest known one.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "spark.sql.shuffle.partitions" => {
                let n: usize = parse(key, value, "a positive integer")?;
                if n == 0 {
                    return Err(KilnError::Config(format!("`{key}` must be positive")));
                }
                self.shuffle_partitions = n;
            }
            "spark.sql.autoBroadcastJoinThreshold" => self.auto_broadcast_join_threshold = parse_bytes(key, value)?,
            "spark.sql.join.preferSortMergeJoin" => self.prefer_sort_merge_join = parse_bool(key, value)?,
            "spark.sql.optimizeNullAwareAntiJoin" => self.optimize_null_aware_anti_join = parse_bool(key, value)?,
            "spark.sql.codegen.wholeStage" => self.whole_stage_codegen = parse_bool(key, value)?,
            "spark.sql.ansi.enabled" => {
                if !parse_bool(key, value)? {
                    return Err(KilnError::Config("kiln runs with ANSI semantics only: `spark.sql.ansi.enabled` must stay true".into()));
                }
            }
            "spark.sql.optimizer.maxIterations" => self.optimizer_max_iterations = parse(key, value, "a positive integer")?,
            "spark.sql.optimizer.excludedRules" => self.optimizer_excluded_rules = name_list(value),
            "spark.sql.optimizer.inSetConversionThreshold" => {
                self.optimizer_in_set_conversion_threshold = parse(key, value, "a non-negative integer")?
            }
            "spark.sql.constraintPropagation.enabled" => self.constraint_propagation_enabled = parse_bool(key, value)?,
            "spark.sql.optimizer.runtime.bloomFilter.enabled" => self.runtime_filter.enabled = parse_bool(key, value)?,
            "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold" => {
                self.runtime_filter.application_side_threshold = positive_bytes(key, value)?
            }
            "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold" => self.runtime_filter.creation_side_threshold = positive_bytes(key, value)?,
            "spark.sql.optimizer.runtime.bloomFilter.expectedNumItems" => self.runtime_filter.expected_items = parse(key, value, "a positive integer")?,
            "spark.sql.optimizer.runtime.bloomFilter.numBits" => self.runtime_filter.num_bits = parse(key, value, "a positive integer")?,
            "spark.sql.optimizer.runtime.bloomFilter.maxNumItems" => self.runtime_filter.max_items = parse(key, value, "a positive integer")?,
            "spark.sql.optimizer.runtime.bloomFilter.maxNumBits" => self.runtime_filter.max_bits = parse(key, value, "a positive integer")?,
            "spark.sql.optimizer.runtimeFilter.number.threshold" => self.runtime_filter.max_filters = parse(key, value, "a non-negative integer")?,
            "spark.sql.planChangeLog.level" => {
                let level = value.trim().to_ascii_uppercase();
                if !["OFF", "TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&level.as_str()) {
                    return Err(KilnError::Config(format!("`{key}` must be one of OFF, TRACE, DEBUG, INFO, WARN, ERROR, got `{value}`")));
                }
                self.plan_change_log_level = level;
            }
            "spark.sql.planChangeLog.rules" => self.plan_change_log_rules = name_list(value),
            "spark.sql.planChangeLog.batches" => self.plan_change_log_batches = name_list(value),
            "kiln.optimizer.strict" => self.optimizer_strict = parse_bool(key, value)?,
            "spark.sql.adaptive.enabled" => self.adaptive_enabled = parse_bool(key, value)?,
            "spark.sql.adaptive.autoBroadcastJoinThreshold" => self.adaptive_broadcast_threshold = Some(parse_bytes(key, value)?),
            "spark.sql.adaptive.coalescePartitions.enabled" => self.adaptive_coalesce_enabled = parse_bool(key, value)?,
            "spark.sql.adaptive.advisoryPartitionSizeInBytes" => self.adaptive_advisory_partition_bytes = positive_bytes(key, value)?,
            "spark.sql.adaptive.coalescePartitions.minPartitionSize" => self.adaptive_min_partition_bytes = positive_bytes(key, value)?,
            "spark.sql.adaptive.coalescePartitions.parallelismFirst" => self.adaptive_parallelism_first = parse_bool(key, value)?,
            "spark.sql.adaptive.localShuffleReader.enabled" => self.adaptive_local_shuffle_reader = parse_bool(key, value)?,
            "spark.sql.adaptive.coalescePartitions.minPartitionNum" => {
                let n: usize = parse(key, value, "a positive integer")?;
                if n == 0 {
                    return Err(KilnError::Config(format!("`{key}` must be positive")));
                }
                self.adaptive_min_partition_num = Some(n);
            }
            "spark.sql.adaptive.skewJoin.enabled" => self.adaptive_skew_join_enabled = parse_bool(key, value)?,
            "spark.sql.adaptive.skewJoin.skewedPartitionFactor" => {
                let f: f64 = parse(key, value, "a number of at least 1")?;
                if !(f >= 1.0) {
                    return Err(KilnError::Config(format!("`{key}` must be a number of at least 1, got `{value}`")));
                }
                self.adaptive_skew_factor = f;
            }
            "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes" => self.adaptive_skew_threshold_bytes = positive_bytes(key, value)?,
            "spark.sql.maxMetadataStringLength" => self.max_metadata_string_length = parse(key, value, "a positive integer")?,
            "spark.sql.session.timeZone" => {}
            "spark.sql.parquet.filterPushdown" => self.parquet_filter_pushdown = parse_bool(key, value)?,
            "spark.sql.parquet.datetimeRebaseModeInRead" => self.parquet_datetime_rebase = crate::datasource::spark_parquet::RebaseMode::parse(key, value)?,
            "spark.sql.parquet.int96RebaseModeInRead" => self.parquet_int96_rebase = crate::datasource::spark_parquet::RebaseMode::parse(key, value)?,
            "spark.sql.sources.partitionColumnTypeInference.enabled" => self.partition_column_type_inference = parse_bool(key, value)?,
            "spark.sql.warehouse.dir" => {
                if value.trim().is_empty() {
                    return Err(KilnError::Config(format!("`{key}` must be a folder path")));
                }
                self.warehouse_dir = value.trim().to_string();
            }
            "kiln.query.timeout" => self.query_timeout = parse_duration(key, value)?,
            "kiln.memory.limit" => self.memory_limit = positive_bytes(key, value)? as u64,
            "kiln.files.allowedRoots" => self.files_allowed_roots = value.split(',').map(str::trim).filter(|r| !r.is_empty()).map(String::from).collect(),
            "spark.sql.cteRecursionLevelLimit" => self.cte_recursion_level_limit = parse(key, value, "an integer (-1: no limit)")?,
            "spark.sql.cteRecursionRowLimit" => self.cte_recursion_row_limit = parse(key, value, "an integer (-1: no limit)")?,
            "spark.sql.cbo.enabled" => self.cbo_enabled = parse_bool(key, value)?,
            "spark.sql.cbo.joinReorder.enabled" => self.cbo_join_reorder_enabled = parse_bool(key, value)?,
            "spark.sql.cbo.joinReorder.dp.threshold" => {
                let n: usize = parse(key, value, "a positive integer")?;
                if n == 0 {
                    return Err(KilnError::Config(format!("`{key}` must be positive")));
                }
                self.cbo_join_reorder_dp_threshold = n;
            }
            "spark.sql.cbo.joinReorder.card.weight" => {
                let w: f64 = parse(key, value, "a number between 0 and 1")?;
                if !(0.0..=1.0).contains(&w) {
                    return Err(KilnError::Config(format!("`{key}` must be between 0 and 1, got `{value}`")));
                }
                self.cbo_join_reorder_card_weight = w;
            }
            "spark.sql.statistics.histogram.enabled" => self.histogram_enabled = parse_bool(key, value)?,
            "spark.sql.statistics.histogram.numBins" => {
                let n: usize = parse(key, value, "an integer of at least 2")?;
                if n < 2 {
                    return Err(KilnError::Config(format!("`{key}` must be at least 2")));
                }
                self.histogram_num_bins = n;
            }
            "spark.sql.statistics.ndv.maxError" => {
                let e: f64 = parse(key, value, "a positive number")?;
                // HLL++ needs at least 4 index bits: a relative error of at most 39%.
                if !(e > 0.0 && e <= 0.39) {
                    return Err(KilnError::Config(format!("`{key}` must be in (0, 0.39], got `{value}`")));
                }
                self.ndv_max_error = e;
            }
            "kiln.batchSize" => {
                let n: usize = parse(key, value, "a positive integer")?;
                self.batch_size = n.max(1);
            }
            "kiln.aggregate.partialRunRows" => self.partial_run_rows = parse(key, value, "a number of rows (0: one table per partition)")?,
            "kiln.aggregate.partialFlushGroups" => self.partial_flush_groups = parse(key, value, "a number of groups (0: never)")?,
            "kiln.codegen.disassembly" => self.codegen_dump = if parse_bool(key, value)? { CodegenDump::Both } else { CodegenDump::Ir },
            "kiln.codegen.dump" => {
                self.codegen_dump = match value.trim().to_ascii_lowercase().as_str() {
                    "ir" => CodegenDump::Ir,
                    "asm" => CodegenDump::Asm,
                    "both" => CodegenDump::Both,
                    _ => return Err(KilnError::Config(format!("`{key}` must be ir, asm or both, got `{value}`"))),
                }
            }
            // Spark keeps any other key for the session; a `spark.` or `kiln.` key kiln does not know
            // is a typo (or a setting kiln does not apply), so it stays an error.
            _ if !key.starts_with("spark.") && !key.starts_with("kiln.") => {
                self.user_settings.insert(key.to_string(), value.to_string());
            }
            _ => {
                let hint = closest_match(key, KEYS.iter().copied()).map(|k| format!(" Did you mean `{k}`?")).unwrap_or_default();
                return Err(KilnError::Config(format!("unknown setting `{key}`.{hint}")));
            }
        }
        Ok(())
    }

    /// The current value of a key, as `SET key` prints it.
    pub fn get(&self, key: &str) -> Option<String> {
        Some(match key {
            "spark.sql.shuffle.partitions" => self.shuffle_partitions.to_string(),
            "spark.sql.autoBroadcastJoinThreshold" => self.auto_broadcast_join_threshold.to_string(),
            "spark.sql.join.preferSortMergeJoin" => self.prefer_sort_merge_join.to_string(),
            "spark.sql.optimizeNullAwareAntiJoin" => self.optimize_null_aware_anti_join.to_string(),
            "spark.sql.codegen.wholeStage" => self.whole_stage_codegen.to_string(),
            "spark.sql.ansi.enabled" => self.ansi_enabled.to_string(),
            "spark.sql.optimizer.maxIterations" => self.optimizer_max_iterations.to_string(),
            "spark.sql.optimizer.excludedRules" => self.optimizer_excluded_rules.join(","),
            "spark.sql.optimizer.inSetConversionThreshold" => self.optimizer_in_set_conversion_threshold.to_string(),
            "spark.sql.constraintPropagation.enabled" => self.constraint_propagation_enabled.to_string(),
            "spark.sql.optimizer.runtime.bloomFilter.enabled" => self.runtime_filter.enabled.to_string(),
            "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold" => self.runtime_filter.application_side_threshold.to_string(),
            "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold" => self.runtime_filter.creation_side_threshold.to_string(),
            "spark.sql.optimizer.runtime.bloomFilter.expectedNumItems" => self.runtime_filter.expected_items.to_string(),
            "spark.sql.optimizer.runtime.bloomFilter.numBits" => self.runtime_filter.num_bits.to_string(),
            "spark.sql.optimizer.runtime.bloomFilter.maxNumItems" => self.runtime_filter.max_items.to_string(),
            "spark.sql.optimizer.runtime.bloomFilter.maxNumBits" => self.runtime_filter.max_bits.to_string(),
            "spark.sql.optimizer.runtimeFilter.number.threshold" => self.runtime_filter.max_filters.to_string(),
            "spark.sql.planChangeLog.level" => self.plan_change_log_level.clone(),
            "spark.sql.planChangeLog.rules" => self.plan_change_log_rules.join(","),
            "spark.sql.planChangeLog.batches" => self.plan_change_log_batches.join(","),
            "kiln.optimizer.strict" => self.optimizer_strict.to_string(),
            "spark.sql.adaptive.enabled" => self.adaptive_enabled.to_string(),
            "spark.sql.adaptive.autoBroadcastJoinThreshold" => self.adaptive_broadcast_threshold().to_string(),
            "spark.sql.adaptive.coalescePartitions.enabled" => self.adaptive_coalesce_enabled.to_string(),
            "spark.sql.adaptive.advisoryPartitionSizeInBytes" => self.adaptive_advisory_partition_bytes.to_string(),
            "spark.sql.adaptive.coalescePartitions.minPartitionSize" => self.adaptive_min_partition_bytes.to_string(),
            "spark.sql.adaptive.coalescePartitions.parallelismFirst" => self.adaptive_parallelism_first.to_string(),
            "spark.sql.adaptive.localShuffleReader.enabled" => self.adaptive_local_shuffle_reader.to_string(),
            "spark.sql.adaptive.coalescePartitions.minPartitionNum" => self.adaptive_min_partition_num().to_string(),
            "spark.sql.adaptive.skewJoin.enabled" => self.adaptive_skew_join_enabled.to_string(),
            "spark.sql.adaptive.skewJoin.skewedPartitionFactor" => self.adaptive_skew_factor.to_string(),
            "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes" => self.adaptive_skew_threshold_bytes.to_string(),
            "spark.sql.maxMetadataStringLength" => self.max_metadata_string_length.to_string(),
            "spark.sql.session.timeZone" => "Etc/UTC".to_string(),
            "spark.sql.parquet.filterPushdown" => self.parquet_filter_pushdown.to_string(),
            "spark.sql.parquet.datetimeRebaseModeInRead" => self.parquet_datetime_rebase.name().to_string(),
            "spark.sql.parquet.int96RebaseModeInRead" => self.parquet_int96_rebase.name().to_string(),
            "spark.sql.sources.partitionColumnTypeInference.enabled" => self.partition_column_type_inference.to_string(),
            "spark.sql.warehouse.dir" => self.warehouse_dir.clone(),
            "spark.sql.cteRecursionLevelLimit" => self.cte_recursion_level_limit.to_string(),
            "spark.sql.cteRecursionRowLimit" => self.cte_recursion_row_limit.to_string(),
            "spark.sql.cbo.enabled" => self.cbo_enabled.to_string(),
            "spark.sql.cbo.joinReorder.enabled" => self.cbo_join_reorder_enabled.to_string(),
            "spark.sql.cbo.joinReorder.dp.threshold" => self.cbo_join_reorder_dp_threshold.to_string(),
            "spark.sql.cbo.joinReorder.card.weight" => self.cbo_join_reorder_card_weight.to_string(),
            "spark.sql.statistics.histogram.enabled" => self.histogram_enabled.to_string(),
            "spark.sql.statistics.histogram.numBins" => self.histogram_num_bins.to_string(),
            "spark.sql.statistics.ndv.maxError" => self.ndv_max_error.to_string(),
            "kiln.batchSize" => self.batch_size.to_string(),
            "kiln.aggregate.partialRunRows" => self.partial_run_rows.to_string(),
            "kiln.aggregate.partialFlushGroups" => self.partial_flush_groups.to_string(),
            "kiln.query.timeout" => format!("{}ms", self.query_timeout.as_millis()),
            "kiln.files.allowedRoots" => self.files_allowed_roots.join(","),
            "kiln.memory.limit" => self.memory_limit.to_string(),
            "kiln.codegen.disassembly" => self.codegen_dump.asm().to_string(),
            "kiln.codegen.dump" => format!("{:?}", self.codegen_dump).to_lowercase(),
            _ => return self.user_settings.get(key).cloned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spark_keys_parse_and_typos_get_suggestions() {
        let mut c = Config::default();
        c.set("spark.sql.shuffle.partitions", "8").unwrap();
        assert_eq!(c.shuffle_partitions, 8);
        c.set("spark.sql.autoBroadcastJoinThreshold", "-1").unwrap();
        assert_eq!(c.auto_broadcast_join_threshold, -1);
        c.set("spark.sql.autoBroadcastJoinThreshold", "10MB").unwrap();
        assert_eq!(c.auto_broadcast_join_threshold, 10 << 20);
        let err = c.set("spark.sql.shuffle.partition", "8").unwrap_err().to_string();
        assert!(err.contains("spark.sql.shuffle.partitions"), "{err}");
        assert!(c.set("spark.sql.shuffle.partitions", "x").is_err());
        assert!(c.set("spark.sql.ansi.enabled", "false").is_err());
    }
}
