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
    /// `spark.sql.ansi.enabled`: false runs Spark's legacy semantics (the analyzer's
    /// `legacy_eval_mode`).
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
    pub parquet_datetime_rebase: RebaseMode,
    /// `spark.sql.parquet.int96RebaseModeInRead`: the same for INT96 timestamps; CORRECTED.
    pub parquet_int96_rebase: RebaseMode,
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
    /// `spark.local.dir`: the folder spill files go to (the first of a comma-separated list);
    /// empty, the default: the system's temporary folder. Set by the host only.
    pub local_dir: String,
    /// `kiln.spill.limit`: the bytes a query's spill files may take on disk at once; 0, the
    /// default: 90 % of the spill folder's free space when the query first spills. Set by the
    /// host only.
    pub spill_limit: u64,
    /// `kiln.spill.compression`: how spill files are compressed: lz4 (the default), zstd or none.
    pub spill_compression: crate::common::spill::SpillCompression,
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
    /// `spark.sql.groupByOrdinal`, `spark.sql.groupByAliases`, `spark.sql.orderByOrdinal`: how
    /// the analyzer reads `GROUP BY 1`, `GROUP BY alias` and `ORDER BY 1`.
    pub group_by_ordinal: bool,
    /// See `group_by_ordinal`.
    pub group_by_aliases: bool,
    /// See `group_by_ordinal`.
    pub order_by_ordinal: bool,
    /// `spark.sql.caseSensitive`: column names and qualifiers resolve by exact case.
    pub case_sensitive: bool,
    /// `spark.sql.crossJoin.enabled`: off, an inner or outer join without a condition reading
    /// both sides is refused (`CheckCartesianProducts`); CROSS JOIN always runs.
    pub cross_join_enabled: bool,
    /// `spark.sql.legacy.parser.havingWithoutGroupByAsWhere`: HAVING without GROUP BY (and no
    /// aggregate in the select list) filters rows as a WHERE over the select list would.
    pub having_without_group_by_as_where: bool,
    /// `spark.sql.legacy.interval.enabled`: interval literals, `date - date` and `timestamp -
    /// timestamp` are of the calendar `interval` type (months, days, microseconds) rather than
    /// the ANSI year-month and day-time types.
    pub legacy_interval: bool,
    /// `spark.sql.session.timeZone`: the zone TIMESTAMP values are read and shown in, as set
    /// (`SET` prints it back as written).
    pub session_time_zone: String,
    /// `spark.sql.statistics.histogram.numBins`.
    pub histogram_num_bins: usize,
    /// `spark.sql.statistics.ndv.maxError`: HyperLogLog++'s relative standard deviation.
    pub ndv_max_error: f64,
    /// Keys outside `spark.` and `kiln.` set by `SET key=value`: kept and read back as Spark keeps
    /// user settings, never read by kiln.
    pub user_settings: std::collections::BTreeMap<String, String>,
    /// Every key set (by the host or by SQL) with its value as given, in the order set: what a
    /// bare `SET` lists, and what `RESET key` replays without that key.
    pub explicit: Vec<(String, String)>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            user_settings: Default::default(),
            explicit: vec![],
            shuffle_partitions: 200,
            query_timeout: std::time::Duration::ZERO,
            files_allowed_roots: vec![],
            local_dir: String::new(),
            spill_limit: 0,
            spill_compression: Default::default(),
            memory_limit: crate::common::memory::default_limit(),
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
            parquet_datetime_rebase: RebaseMode::Corrected,
            parquet_int96_rebase: RebaseMode::Corrected,
            partition_column_type_inference: true,
            warehouse_dir: "spark-warehouse".into(),
            cte_recursion_level_limit: 100,
            cte_recursion_row_limit: 1_000_000,
            cbo_enabled: false,
            cbo_join_reorder_enabled: false,
            cbo_join_reorder_dp_threshold: 12,
            cbo_join_reorder_card_weight: 0.7,
            histogram_enabled: false,
            group_by_ordinal: true,
            group_by_aliases: true,
            order_by_ordinal: true,
            case_sensitive: false,
            cross_join_enabled: true,
            having_without_group_by_as_where: false,
            legacy_interval: false,
            session_time_zone: crate::types::time_zone::local_zone_id(),
            histogram_num_bins: 254,
            ndv_max_error: 0.05,
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
    /// lineitem and orders get filters, its dimension tables do not). The scan a filter would
    /// prune must also be at least 1/64 of it (`InjectRuntimeFilter`).
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

/// One setting kiln applies: its key, the version that introduced it (Spark's for `spark.*`,
/// kiln's for `kiln.*`) and what it does, as `SET -v` lists them.
pub struct Setting {
    /// The key, as `SET` takes it.
    pub key: &'static str,
    /// The version that introduced it.
    pub since: &'static str,
    /// What it does.
    pub meaning: &'static str,
}

/// The largest `kiln.batchSize`: operators make room for a batch's rows at once.
pub const BATCH_SIZE_MAX: usize = 1 << 24;

/// Every key `Config` applies.
pub const SETTINGS: &[Setting] = &[
    Setting { key: "spark.sql.shuffle.partitions", since: "1.1.0", meaning: "The number of partitions of every hash or range shuffle (joins, aggregates, sorts)." },
    Setting { key: "spark.sql.autoBroadcastJoinThreshold", since: "1.1.0", meaning: "The largest table, in bytes, a join broadcasts to every partition of the other side; -1 disables broadcasting." },
    Setting { key: "spark.sql.join.preferSortMergeJoin", since: "2.0.0", meaning: "Plan shuffled equi-joins as sort-merge joins; when false, a side small enough per partition (and 3x smaller than the other) is hashed instead." },
    Setting { key: "spark.sql.optimizeNullAwareAntiJoin", since: "3.1.0", meaning: "Plan a single-column NOT IN (subquery) as a null-aware broadcast hash join instead of a nested-loop join." },
    Setting { key: "spark.sql.codegen.wholeStage", since: "2.0.0", meaning: "Compile fused stages of operators to native code (true) or interpret every operator (false)." },
    Setting { key: "spark.sql.ansi.enabled", since: "3.0.0", meaning: "ANSI SQL semantics: invalid input fails instead of giving NULL. false: Spark's legacy semantics (a failing cast, a division by zero, an index out of range give NULL; integral overflow wraps)." },
    Setting { key: "spark.sql.optimizer.maxIterations", since: "2.0.0", meaning: "The most iterations a fixed-point optimizer batch runs." },
    Setting { key: "spark.sql.optimizer.excludedRules", since: "2.4.0", meaning: "Comma-separated optimizer rules to skip; rules needed for correctness still run (with a warning)." },
    Setting { key: "spark.sql.optimizer.inSetConversionThreshold", since: "2.0.0", meaning: "An IN list of literals longer than this becomes an INSET lookup." },
    Setting { key: "spark.sql.constraintPropagation.enabled", since: "2.2.0", meaning: "Infer filters from the constraints of a plan's inputs (InferFiltersFromConstraints)." },
    Setting { key: "spark.sql.optimizer.runtime.bloomFilter.enabled", since: "3.3.0", meaning: "Plant Bloom filters built from one side of a join to filter the other side's scan." },
    Setting { key: "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold", since: "3.3.0", meaning: "The least size, in bytes, of the scan a runtime Bloom filter filters." },
    Setting { key: "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold", since: "3.3.0", meaning: "The largest size, in bytes, of the side a runtime Bloom filter is built from." },
    Setting { key: "spark.sql.optimizer.runtime.bloomFilter.expectedNumItems", since: "3.3.0", meaning: "The items a runtime Bloom filter expects when the building side's rows are unknown." },
    Setting { key: "spark.sql.optimizer.runtime.bloomFilter.numBits", since: "3.3.0", meaning: "The bits of a runtime Bloom filter when the building side's rows are unknown." },
    Setting { key: "spark.sql.optimizer.runtime.bloomFilter.maxNumItems", since: "3.3.0", meaning: "The most items a runtime Bloom filter is sized for." },
    Setting { key: "spark.sql.optimizer.runtime.bloomFilter.maxNumBits", since: "3.3.0", meaning: "The most bits of a runtime Bloom filter." },
    Setting { key: "spark.sql.optimizer.runtimeFilter.number.threshold", since: "3.3.0", meaning: "The most runtime filters planted in one query." },
    Setting { key: "spark.sql.planChangeLog.level", since: "3.1.0", meaning: "OFF, or INFO / WARN / ERROR to print each effective optimizer rule's plan before and after to stderr." },
    Setting { key: "spark.sql.planChangeLog.rules", since: "3.1.0", meaning: "Comma-separated rules the plan change log is limited to (empty: all)." },
    Setting { key: "spark.sql.planChangeLog.batches", since: "3.1.0", meaning: "Comma-separated batches the plan change log is limited to (empty: all)." },
    Setting { key: "spark.sql.adaptive.enabled", since: "1.6.0", meaning: "Run plans with shuffles stage by stage, re-planning the rest from each stage's real output." },
    Setting { key: "spark.sql.adaptive.autoBroadcastJoinThreshold", since: "3.2.0", meaning: "The largest stage output, in bytes, a join broadcasts at run time; unset: spark.sql.autoBroadcastJoinThreshold; -1 disables." },
    Setting { key: "spark.sql.adaptive.coalescePartitions.enabled", since: "3.0.0", meaning: "Merge small contiguous shuffle partitions at run time." },
    Setting { key: "spark.sql.adaptive.advisoryPartitionSizeInBytes", since: "3.0.0", meaning: "The size, in bytes, coalesced and split shuffle partitions aim at." },
    Setting { key: "spark.sql.adaptive.coalescePartitions.minPartitionSize", since: "3.2.0", meaning: "The least size, in bytes, a coalesced partition aims at." },
    Setting { key: "spark.sql.adaptive.coalescePartitions.parallelismFirst", since: "3.2.0", meaning: "Aim at one partition per core before the advisory size when coalescing." },
    Setting { key: "spark.sql.adaptive.coalescePartitions.minPartitionNum", since: "3.0.0", meaning: "With parallelism first, the fewest partitions coalescing aims at; unset: spark.sql.shuffle.partitions." },
    Setting { key: "spark.sql.adaptive.localShuffleReader.enabled", since: "3.0.0", meaning: "A join turned into a broadcast at run time reads the other side's finished shuffle without its hash layout." },
    Setting { key: "spark.sql.adaptive.skewJoin.enabled", since: "3.0.0", meaning: "Split skewed partitions of a sort-merge join at run time." },
    Setting { key: "spark.sql.adaptive.skewJoin.skewedPartitionFactor", since: "3.0.0", meaning: "A partition is skewed when it is this many times the median partition's size ..." },
    Setting { key: "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", since: "3.0.0", meaning: "... and larger than this many bytes." },
    Setting { key: "spark.sql.maxMetadataStringLength", since: "3.1.0", meaning: "Scan descriptions in plans are cut at this many characters." },
    Setting { key: "spark.sql.session.timeZone", since: "2.2.0", meaning: "The zone TIMESTAMP values are read and shown in: a region id (America/Los_Angeles) or an offset (+05:30)." },
    Setting { key: "spark.sql.parquet.filterPushdown", since: "1.2.0", meaning: "Skip Parquet row groups and pages by their statistics." },
    Setting { key: "spark.sql.warehouse.dir", since: "2.0.0", meaning: "The folder holding managed tables (CREATE TABLE .. USING parquet without LOCATION), one sub-folder per table; relative to the working directory." },
    Setting { key: "spark.sql.cteRecursionLevelLimit", since: "4.1.0", meaning: "The most steps a recursive CTE runs; -1: no limit." },
    Setting { key: "spark.sql.cteRecursionRowLimit", since: "4.1.0", meaning: "The most rows a recursive CTE makes; -1: no limit." },
    Setting { key: "spark.sql.cbo.enabled", since: "2.2.0", meaning: "Estimate row counts from statistics collected by ANALYZE TABLE." },
    Setting { key: "spark.sql.cbo.joinReorder.enabled", since: "2.2.0", meaning: "Reorder joins by dynamic programming over estimated costs (needs spark.sql.cbo.enabled)." },
    Setting { key: "spark.sql.cbo.joinReorder.dp.threshold", since: "2.2.0", meaning: "The most joined items the dynamic-programming reorder considers." },
    Setting { key: "spark.sql.cbo.joinReorder.card.weight", since: "2.2.0", meaning: "The weight of rows (against bytes) in a plan's estimated cost." },
    Setting { key: "spark.sql.groupByOrdinal", since: "2.0.0", meaning: "An integer literal in GROUP BY names a select-list item by position (false: it is a constant)." },
    Setting { key: "spark.sql.groupByAliases", since: "2.2.0", meaning: "A GROUP BY name no input column has may name a select-list alias." },
    Setting { key: "spark.sql.orderByOrdinal", since: "2.0.0", meaning: "An integer literal in ORDER BY names a select-list item by position (false: it is a constant)." },
    Setting { key: "spark.sql.caseSensitive", since: "1.4.0", meaning: "Column names and table qualifiers match only in their exact case." },
    Setting { key: "spark.sql.legacy.parser.havingWithoutGroupByAsWhere", since: "2.4.1", meaning: "HAVING without GROUP BY filters rows as WHERE does (false: it makes a global aggregate)." },
    Setting { key: "spark.sql.legacy.interval.enabled", since: "3.0.0", meaning: "Interval literals, date - date and timestamp - timestamp are of the calendar INTERVAL type (months, days, microseconds) instead of the ANSI year-month and day-time interval types." },
    Setting { key: "spark.sql.crossJoin.enabled", since: "2.0.0", meaning: "An inner or outer join without a condition over both sides runs (false: refused unless written CROSS JOIN)." },
    Setting { key: "spark.sql.statistics.histogram.enabled", since: "2.3.0", meaning: "ANALYZE TABLE .. FOR COLUMNS builds equi-height histograms." },
    Setting { key: "spark.sql.statistics.histogram.numBins", since: "2.3.0", meaning: "The bins of a column histogram." },
    Setting { key: "spark.sql.statistics.ndv.maxError", since: "2.1.1", meaning: "The relative standard deviation of distinct-count estimates (HyperLogLog++)." },
    Setting { key: "kiln.batchSize", since: "0.1.0", meaning: "Rows per batch read from files (at most 16777216)." },
    Setting { key: "kiln.aggregate.partialRunRows", since: "0.1.0", meaning: "Input rows a partial aggregate under a shuffle groups in one table across its input partitions; 0: one table per partition." },
    Setting { key: "kiln.aggregate.partialFlushGroups", since: "0.1.0", meaning: "Groups past which a partial aggregate that folds rows emits its groups and starts again; 0: never." },
    Setting { key: "kiln.optimizer.strict", since: "0.1.0", meaning: "Check every optimizer rule's plan (resolved, unique expression ids, idempotent Once batches); violations are errors." },
    Setting { key: "kiln.codegen.disassembly", since: "0.1.0", meaning: "EXPLAIN CODEGEN prints the native code as well as the IR (kiln.codegen.dump=both)." },
    Setting { key: "kiln.codegen.dump", since: "0.1.0", meaning: "What EXPLAIN CODEGEN prints of each stage: ir, asm or both." },
    Setting { key: "kiln.query.timeout", since: "0.1.0", meaning: "A query running longer is cancelled with an error naming this setting (30s, 500ms, 2m); 0: no limit." },
    Setting { key: "kiln.files.allowedRoots", since: "0.1.0", meaning: "Comma-separated folders tables may be read from and written to; empty: anywhere." },
    Setting { key: "spark.local.dir", since: "0.1.0", meaning: "The folder a query's spill files go to (what sorts and exchanges write when the memory limit is reached); empty: the system's temporary folder." },
    Setting { key: "kiln.spill.compression", since: "0.1.0", meaning: "How spill files are compressed: lz4 (the default), zstd or none." },
    Setting { key: "kiln.spill.limit", since: "0.1.0", meaning: "The bytes a query's spill files may take on disk at once (100g); 0: 90 % of the spill folder's free space when the query first spills." },
    Setting { key: "kiln.memory.limit", since: "0.1.0", meaning: "The bytes a query's operators may hold at once (4g, 512m); more fails the query naming the operator." },
    Setting { key: "spark.sql.parquet.datetimeRebaseModeInRead", since: "3.0.0", meaning: "How dates and timestamps written in the hybrid Julian calendar are read: EXCEPTION, CORRECTED or LEGACY." },
    Setting { key: "spark.sql.parquet.int96RebaseModeInRead", since: "3.1.0", meaning: "How INT96 timestamps written in the hybrid Julian calendar are read: EXCEPTION, CORRECTED or LEGACY." },
    Setting { key: "spark.sql.sources.partitionColumnTypeInference.enabled", since: "1.5.0", meaning: "Infer the types of partition columns from their folder names (off: strings)." },
];

/// Keys fixed for a session's life, set only by its host (`SessionBuilder::config`, or
/// `Session::set_conf` before the first statement): Spark's static SQL settings (its
/// `StaticSQLConf`), whether kiln applies them or not, and kiln's confinement of files.
/// SQL `SET` and `RESET` of one fail with CANNOT_MODIFY_STATIC_CONFIG.
pub const STATIC_KEYS: &[&str] = &[
    "spark.python.sql.dataFrameDebugging.enabled",
    "spark.sql.artifact.copyFromLocalToFs.allowDestLocal",
    "spark.sql.avro.schemaUrlAllowedSchemes",
    "spark.sql.broadcastExchange.maxThreadThreshold",
    "spark.sql.cache.serializer",
    "spark.sql.catalog.spark_catalog.defaultDatabase",
    "spark.sql.catalogImplementation",
    "spark.sql.codegen.cache.maxEntries",
    "spark.sql.codegen.comments",
    "spark.sql.debug",
    "spark.sql.defaultUrlStreamHandlerFactory.enabled",
    "spark.sql.event.truncate.length",
    "spark.sql.extensions",
    "spark.sql.extensions.test.loadFromCp",
    "spark.sql.filesourceTableRelationCacheSize",
    "spark.sql.globalTempDatabase",
    "spark.sql.hive.metastore.barrierPrefixes",
    "spark.sql.hive.metastore.jars",
    "spark.sql.hive.metastore.jars.path",
    "spark.sql.hive.metastore.sharedPrefixes",
    "spark.sql.hive.metastore.version",
    "spark.sql.hive.thriftServer.http.sniHostCheckEnabled",
    "spark.sql.hive.thriftServer.singleSession",
    "spark.sql.hive.version",
    "spark.sql.kafka.disallowedOptions",
    "spark.sql.legacy.hive.thriftServer.allowSettingSystemProperties",
    "spark.sql.legacy.sessionInitWithConfigDefaults",
    "spark.sql.metadataCacheTTLSeconds",
    "spark.sql.queryExecutionListeners",
    "spark.sql.reflect.allowList",
    "spark.sql.restrictedMode.enabled",
    "spark.sql.resultQueryStage.maxThreadThreshold",
    "spark.sql.shuffleExchange.maxThreadThreshold",
    "spark.sql.sources.disabledJdbcConnProviderList",
    "spark.sql.sources.schemaStringLengthThreshold",
    "spark.sql.streaming.streamingQueryListeners",
    "spark.sql.streaming.ui.enabled",
    "spark.sql.streaming.ui.enabledCustomMetricList",
    "spark.sql.streaming.ui.retainedProgressUpdates",
    "spark.sql.streaming.ui.retainedQueries",
    "spark.sql.subquery.maxThreadThreshold",
    "spark.sql.warehouse.dir",
    "kiln.files.allowedRoots",
    "spark.local.dir",
    "kiln.spill.limit",
];

/// Limits whose host value is a ceiling: SQL `SET` may lower them for its own queries, never
/// raise them past what the host set.
pub const CEILING_KEYS: &[&str] = &["kiln.memory.limit", "kiln.query.timeout"];

/// True for a key only the host sets ([`STATIC_KEYS`]).
pub fn is_static(key: &str) -> bool {
    STATIC_KEYS.contains(&key)
}

/// Spark's error for changing a static setting after the session started.
pub fn cannot_modify_static(key: &str) -> KilnError {
    KilnError::analysis("CANNOT_MODIFY_STATIC_CONFIG", format!("Cannot modify the value of the static Spark config: \"{key}\". SQLSTATE: 46110"))
}

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
pub(crate) fn parse_duration(key: &str, value: &str) -> Result<std::time::Duration> {
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
pub(crate) fn parse_bytes(key: &str, value: &str) -> Result<i64> {
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

    /// Sets one key; errors name the key and suggest the closest known one. This is the host's
    /// setter (no static or ceiling checks); SQL goes through [`Config::set_from_sql`].
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        self.apply(key, value)?;
        self.explicit.retain(|(k, _)| k != key);
        self.explicit.push((key.to_string(), value.to_string()));
        Ok(())
    }

    /// SQL `SET key=value` in a session whose host set `host`: a static key fails with Spark's
    /// CANNOT_MODIFY_STATIC_CONFIG, a limit may be lowered but not raised past the host's value.
    pub fn set_from_sql(&mut self, host: &Config, key: &str, value: &str) -> Result<()> {
        if is_static(key) {
            return Err(cannot_modify_static(key));
        }
        let mut next = self.clone();
        match next.set(key, value) {
            // Spark's SET keeps a `spark.` key it does not know: kept, with a warning naming the
            // closest key kiln knows.
            Err(KilnError::Config(why)) if key.starts_with("spark.") && !SETTINGS.iter().any(|s| s.key == key) => {
                eprintln!("WARN SQLConf: {why} It is kept for the session and has no effect.");
                next.user_settings.insert(key.to_string(), value.to_string());
            }
            other => other?,
        }
        let raised = match key {
            "kiln.memory.limit" => (next.memory_limit > host.memory_limit).then(|| host.memory_limit.to_string()),
            "kiln.query.timeout" => {
                let limit = host.query_timeout;
                (!limit.is_zero() && (next.query_timeout.is_zero() || next.query_timeout > limit)).then(|| format!("{}ms", limit.as_millis()))
            }
            _ => None,
        };
        if let Some(ceiling) = raised {
            return Err(KilnError::Config(format!(
                "`{key}` is capped at {ceiling} by the host running this session: SET may lower it, not raise it (asked for `{value}`)"
            )));
        }
        *self = next;
        Ok(())
    }

    /// SQL `RESET key` (`None`: `RESET`): back to the host's value, or the default when the host
    /// set none; a static key fails as for SET.
    pub fn reset_from_sql(&mut self, host: &Config, key: Option<&str>) -> Result<()> {
        if let Some(key) = key.filter(|k| is_static(k)) {
            return Err(cannot_modify_static(key));
        }
        let mut next = host.clone();
        if let Some(key) = key {
            for (k, v) in &self.explicit {
                if k != key && !host.explicit.iter().any(|(hk, hv)| hk == k && hv == v) {
                    next.set(k, v)?;
                }
            }
        }
        *self = next;
        Ok(())
    }

    /// `SET -v`: every key with its value, meaning and the Spark version that introduced it.
    pub fn describe_all(&self) -> Vec<[String; 4]> {
        let mut rows: Vec<[String; 4]> = SETTINGS
            .iter()
            .map(|s| {
                let scope = if is_static(s.key) {
                    " Static: set by the host when the session starts; SQL SET and RESET cannot change it."
                } else if CEILING_KEYS.contains(&s.key) {
                    " The host's value is a ceiling: SQL SET may lower it, not raise it."
                } else {
                    ""
                };
                let value = self.get(s.key).unwrap_or_else(|| "<undefined>".into());
                [s.key.to_string(), value, format!("{}{scope}", s.meaning), s.since.to_string()]
            })
            .collect();
        rows.sort();
        rows
    }

    fn apply(&mut self, key: &str, value: &str) -> Result<()> {
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
            "spark.sql.ansi.enabled" => self.ansi_enabled = parse_bool(key, value)?,
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
            "spark.sql.session.timeZone" => {
                let id = value.trim();
                if crate::types::time_zone::Zone::parse(id).is_none() {
                    return Err(KilnError::Config(format!(
                        "[INVALID_CONF_VALUE.TIME_ZONE] The value '{id}' in the config \"{key}\" is invalid. Cannot resolve the given timezone. SQLSTATE: 22022"
                    )));
                }
                self.session_time_zone = id.to_string();
            }
            "spark.sql.parquet.filterPushdown" => self.parquet_filter_pushdown = parse_bool(key, value)?,
            "spark.sql.parquet.datetimeRebaseModeInRead" => self.parquet_datetime_rebase = RebaseMode::parse(key, value)?,
            "spark.sql.parquet.int96RebaseModeInRead" => self.parquet_int96_rebase = RebaseMode::parse(key, value)?,
            "spark.sql.sources.partitionColumnTypeInference.enabled" => self.partition_column_type_inference = parse_bool(key, value)?,
            "spark.sql.warehouse.dir" => {
                if value.trim().is_empty() {
                    return Err(KilnError::Config(format!("`{key}` must be a folder path")));
                }
                self.warehouse_dir = value.trim().to_string();
            }
            "kiln.query.timeout" => self.query_timeout = parse_duration(key, value)?,
            "kiln.memory.limit" => self.memory_limit = positive_bytes(key, value)? as u64,
            "spark.local.dir" => self.local_dir = value.trim().to_string(),
            "kiln.spill.limit" => self.spill_limit = parse_bytes(key, value)?.max(0) as u64,
            "kiln.spill.compression" => {
                self.spill_compression = crate::common::spill::SpillCompression::parse(value).ok_or_else(|| KilnError::Config(format!("`{key}` must be lz4, zstd or none, got `{value}`")))?
            }
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
            "spark.sql.groupByOrdinal" => self.group_by_ordinal = parse_bool(key, value)?,
            "spark.sql.groupByAliases" => self.group_by_aliases = parse_bool(key, value)?,
            "spark.sql.caseSensitive" => self.case_sensitive = parse_bool(key, value)?,
            "spark.sql.crossJoin.enabled" => self.cross_join_enabled = parse_bool(key, value)?,
            "spark.sql.legacy.parser.havingWithoutGroupByAsWhere" => self.having_without_group_by_as_where = parse_bool(key, value)?,
            "spark.sql.legacy.interval.enabled" => self.legacy_interval = parse_bool(key, value)?,
            "spark.sql.orderByOrdinal" => self.order_by_ordinal = parse_bool(key, value)?,
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
                if n > BATCH_SIZE_MAX {
                    return Err(KilnError::Config(format!("`{key}` must be at most {BATCH_SIZE_MAX} rows, got `{value}`")));
                }
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
            // Spark keeps any other key for the session; a `spark.` or `kiln.` key kiln does not
            // know is a typo (or a setting kiln does not apply): an error here, for the host's
            // settings; SQL's SET keeps a `spark.` one as Spark does (`set_from_sql`).
            _ if !key.starts_with("spark.") && !key.starts_with("kiln.") => {
                self.user_settings.insert(key.to_string(), value.to_string());
            }
            _ => {
                let hint = closest_match(key, SETTINGS.iter().map(|s| s.key)).map(|k| format!(" Did you mean `{k}`?")).unwrap_or_default();
                return Err(KilnError::Config(format!("unknown setting `{key}`.{hint}")));
            }
        }
        Ok(())
    }

    /// The session time zone (validated when set).
    pub fn time_zone(&self) -> crate::types::time_zone::Zone {
        crate::types::time_zone::Zone::parse(&self.session_time_zone).unwrap_or(crate::types::time_zone::Zone::UTC)
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
            "spark.sql.session.timeZone" => self.session_time_zone.clone(),
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
            "spark.sql.groupByOrdinal" => self.group_by_ordinal.to_string(),
            "spark.sql.groupByAliases" => self.group_by_aliases.to_string(),
            "spark.sql.orderByOrdinal" => self.order_by_ordinal.to_string(),
            "spark.sql.caseSensitive" => self.case_sensitive.to_string(),
            "spark.sql.crossJoin.enabled" => self.cross_join_enabled.to_string(),
            "spark.sql.legacy.parser.havingWithoutGroupByAsWhere" => self.having_without_group_by_as_where.to_string(),
            "spark.sql.legacy.interval.enabled" => self.legacy_interval.to_string(),
            "spark.sql.statistics.histogram.numBins" => self.histogram_num_bins.to_string(),
            "spark.sql.statistics.ndv.maxError" => self.ndv_max_error.to_string(),
            "kiln.batchSize" => self.batch_size.to_string(),
            "kiln.aggregate.partialRunRows" => self.partial_run_rows.to_string(),
            "kiln.aggregate.partialFlushGroups" => self.partial_flush_groups.to_string(),
            "kiln.query.timeout" => format!("{}ms", self.query_timeout.as_millis()),
            "kiln.files.allowedRoots" => self.files_allowed_roots.join(","),
            "spark.local.dir" => self.local_dir.clone(),
            "kiln.spill.limit" => self.spill_limit.to_string(),
            "kiln.spill.compression" => self.spill_compression.name().to_string(),
            "kiln.memory.limit" => self.memory_limit.to_string(),
            "kiln.codegen.disassembly" => self.codegen_dump.asm().to_string(),
            "kiln.codegen.dump" => format!("{:?}", self.codegen_dump).to_lowercase(),
            _ => return self.user_settings.get(key).cloned(),
        })
    }
}

/// `spark.sql.parquet.datetimeRebaseModeInRead` / `int96RebaseModeInRead`: what to do with
/// dates and timestamps from before the Gregorian calendar (1582-10-15) in files whose writer
/// is unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebaseMode {
    /// Fail on such values: they are ambiguous.
    Exception,
    /// Read the values as they are (Proleptic Gregorian): Spark 4's default.
    Corrected,
    /// Rebase them from the hybrid Julian calendar of Spark 2 and Hive.
    Legacy,
}

impl RebaseMode {
    /// Parses a setting's value (case-insensitive).
    pub fn parse(key: &str, value: &str) -> Result<RebaseMode> {
        match value.trim().to_ascii_uppercase().as_str() {
            "EXCEPTION" => Ok(RebaseMode::Exception),
            "CORRECTED" => Ok(RebaseMode::Corrected),
            "LEGACY" => Ok(RebaseMode::Legacy),
            _ => Err(KilnError::Config(format!("`{key}` must be one of EXCEPTION, CORRECTED, LEGACY, got `{value}`"))),
        }
    }

    /// The name Spark prints.
    pub fn name(self) -> &'static str {
        match self {
            RebaseMode::Exception => "EXCEPTION",
            RebaseMode::Corrected => "CORRECTED",
            RebaseMode::Legacy => "LEGACY",
        }
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
        // SQL's SET keeps a spark. key it does not know, as Spark; a kiln. one is a typo.
        let host = c.clone();
        c.set_from_sql(&host, "spark.sql.shuffle.partition", "9").unwrap();
        assert_eq!((c.shuffle_partitions, c.get("spark.sql.shuffle.partition").as_deref()), (8, Some("9")));
        let err = c.set_from_sql(&host, "kiln.batchSiz", "8").unwrap_err().to_string();
        assert!(err.contains("kiln.batchSize"), "{err}");
        let err = c.set("kiln.batchSize", "1000000000000").unwrap_err().to_string();
        assert!(err.contains("at most 16777216"), "{err}");
        c.set("kiln.batchSize", "16777216").unwrap();
        assert!(c.set("spark.sql.shuffle.partitions", "x").is_err());
        c.set("spark.sql.ansi.enabled", "false").unwrap();
        assert!(!c.ansi_enabled);
    }

    #[test]
    fn sql_cannot_change_static_keys_nor_raise_the_hosts_limits() {
        let mut host = Config::default();
        host.set("spark.sql.warehouse.dir", "/wh").unwrap();
        host.set("kiln.memory.limit", "1g").unwrap();
        let mut c = host.clone();
        let err = c.set_from_sql(&host, "spark.sql.warehouse.dir", "/tmp").unwrap_err().to_string();
        assert_eq!(err, "[CANNOT_MODIFY_STATIC_CONFIG] Cannot modify the value of the static Spark config: \"spark.sql.warehouse.dir\". SQLSTATE: 46110");
        assert!(c.set_from_sql(&host, "spark.sql.catalogImplementation", "hive").is_err(), "static though kiln does not apply it");
        assert!(c.reset_from_sql(&host, Some("kiln.files.allowedRoots")).is_err());
        assert!(c.set_from_sql(&host, "kiln.memory.limit", "2g").is_err());
        assert_eq!(c.memory_limit, 1 << 30, "a refused SET changes nothing");
        c.set_from_sql(&host, "kiln.memory.limit", "10m").unwrap();
        c.set_from_sql(&host, "spark.sql.shuffle.partitions", "3").unwrap();
        // Without a host timeout any timeout lowers "no limit".
        c.set_from_sql(&host, "kiln.query.timeout", "2s").unwrap();
        c.reset_from_sql(&host, Some("kiln.memory.limit")).unwrap();
        assert_eq!((c.memory_limit, c.shuffle_partitions, c.query_timeout.as_secs()), (1 << 30, 3, 2));
        c.reset_from_sql(&host, None).unwrap();
        assert_eq!((c.shuffle_partitions, c.query_timeout.as_secs(), c.warehouse_dir.as_str()), (200, 0, "/wh"));
        assert_eq!(c.explicit.len(), 2, "{:?}", c.explicit);
        assert!(c.describe_all().iter().any(|[k, _, m, v]| k == "kiln.files.allowedRoots" && m.contains("Static") && v == "0.1.0"));
    }
}
