"""kiln as Spark's native engine: the plugin (spark/, kiln-spark/) inside a local Spark.

One Spark session with kiln's extensions; `spark.kiln.enabled=false` makes it vanilla Spark,
so every query runs both ways over the same TPC-H Parquet files (kiln's generator, SF 0.01)
and must give the same rows. Builds what it needs: the jar (spark/build.sh) and, unless
KILN_SPARK_LIB names it, the native library (`cargo build --release -p kiln-spark`).

    KILN=target/release/kiln python tests/python/test_spark_plugin.py

Needs pyspark 4.3.0 and a JDK 17 (javac). Prints `N passed, M failed` and exits non-zero when a
test fails or none ran.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_spark_roundtrip import run_tests  # noqa: E402 - the runner the Python tests share

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KILN = os.environ.get("KILN", os.path.join(ROOT, "target", "release", "kiln"))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LIB = os.environ.get("KILN_SPARK_LIB", os.path.join(TARGET, "release", "libkiln_spark.so"))
TABLES = ["lineitem", "orders", "customer", "part", "supplier", "partsupp", "nation", "region"]

_spark = None
_data = tempfile.TemporaryDirectory(prefix="kiln-spark-plugin-")


def build():
    """The jar and the native library, built when missing; returns the jar's path."""
    if not os.path.exists(LIB):
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "kiln-spark"], cwd=ROOT, check=True)
    subprocess.run([os.path.join(ROOT, "spark", "build.sh"), sys.executable], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(ROOT, "spark", "target", "kiln-spark.jar")


def spark():
    """The one Spark session: local[2], kiln's extensions, plugin and EXPLAIN provider."""
    global _spark
    if _spark is None:
        jar = build()
        subprocess.run([KILN, "gen", "tpch", "--sf", "0.01", "--out", _data.name], check=True, stdout=subprocess.DEVNULL)
        from pyspark.sql import SparkSession

        _spark = (
            # local[2, 2]: two attempts per task, so a failed task is rerun as on a cluster.
            SparkSession.builder.master("local[2,2]")
            .appName("kiln-spark-plugin")
            .config("spark.driver.extraClassPath", jar)
            .config("spark.executor.extraClassPath", jar)
            .config("spark.driver.extraJavaOptions", f"-Duser.timezone=UTC -Dkiln.native.lib={LIB}")
            .config("spark.sql.extensions", "io.kiln.spark.KilnExtensions")
            .config("spark.plugins", "io.kiln.spark.KilnPlugin")
            .config("spark.sql.extendedExplainProviders", "io.kiln.spark.KilnExplain")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "2")
            # Several splits per file, so a task reads row groups of a file another task reads too.
            .config("spark.sql.files.maxPartitionBytes", "262144")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        _spark.sparkContext.setLogLevel("ERROR")
        for t in TABLES:
            _spark.read.parquet(os.path.join(_data.name, f"{t}.parquet")).createOrReplaceTempView(t)
    return _spark


def run(sql, kiln, adaptive=True):
    """(sorted rows, executed plan text, DataFrame) of `sql` with kiln on or off."""
    s = spark()
    s.conf.set("spark.kiln.enabled", "true" if kiln else "false")
    s.conf.set("spark.sql.adaptive.enabled", "true" if adaptive else "false")
    df = s.sql(sql)
    rows = sorted((tuple(r) for r in df.collect()), key=repr)
    return rows, df._jdf.queryExecution().executedPlan().toString(), df


def same_both_ways(sql, kiln_expected=True):
    """Asserts kiln and vanilla Spark give the same rows, with AQE on and off; returns kiln's plan."""
    plan = ""
    for adaptive in (True, False):
        want, vanilla_plan, _ = run(sql, kiln=False, adaptive=adaptive)
        got, plan, _ = run(sql, kiln=True, adaptive=adaptive)
        assert "KilnExec" not in vanilla_plan, vanilla_plan
        assert len(want) > 0, f"no rows: {sql}"
        assert got == want, f"AQE {adaptive}: kiln gave {got[:3]}... ({len(got)} rows), Spark {want[:3]}... ({len(want)} rows)"
        assert ("KilnExec" in plan) == kiln_expected, plan
    return plan


Q1 = """
select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge, avg(l_quantity) as avg_qty,
       avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order
from lineitem where l_shipdate <= date '1998-12-01' - interval '90' day
group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus"""

Q6 = """
select sum(l_extendedprice * l_discount) as revenue from lineitem
where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval '1' year
  and l_discount between .06 - 0.01 and .06 + 0.01 and l_quantity < 24"""


def test_tpch_q1_same_rows_and_the_partial_aggregate_runs_in_kiln():
    plan = same_both_ways(Q1)
    assert "(HashAggregate <- Project <- Filter <- Scan parquet)" in plan, plan


def test_tpch_q6_same_rows():
    same_both_ways(Q6)


def test_filter_and_project_over_strings_dates_and_integers():
    same_both_ways(
        """select o_orderkey, o_custkey + 1 as c, o_orderstatus, o_orderdate, o_comment is null as no_comment
           from orders where o_orderdate >= date '1996-01-01' and o_orderpriority = '1-URGENT' and o_totalprice > 1000"""
    )


def test_grouped_min_max_count_over_strings_and_dates():
    same_both_ways(
        """select o_orderpriority, count(o_clerk), min(o_orderdate), max(o_orderdate), min(o_clerk), max(o_custkey)
           from orders group by o_orderpriority"""
    )


def test_decimals_kiln_hands_to_spark_keep_their_values():
    """Decimals of up to 18 digits cross as Spark's long-backed decimals, wider ones as Arrow's;
    negative values and nulls too."""
    plan = same_both_ways(
        """select l_orderkey, l_linenumber, l_quantity - 25 as dq, case when l_linenumber = 1 then null else l_extendedprice end as ep,
                  cast(l_extendedprice as decimal(30, 2)) * -3 as wide
           from lineitem where l_linenumber < 3"""
    )
    assert "(Project <- Filter <- Scan parquet)" in plan, plan


def test_case_in_like_and_functions_same_rows_in_kiln():
    plan = same_both_ways(
        """select l_orderkey, case when l_shipmode in ('MAIL', 'SHIP') then 1 when l_quantity > 3 then 2 else 0 end as c,
                  l_comment like '%ca_e%' as lk, l_shipmode like 'MA%' as sw, l_comment like '%ly' as ew,
                  l_comment like '%furious%' as ct, year(l_shipdate) as y, month(l_shipdate) as m,
                  dayofmonth(l_shipdate) as d, substring(l_comment, 2, 5) as ss, length(l_comment) as len,
                  coalesce(l_comment, 'x') as co, lower(l_shipinstruct) as lo, abs(l_quantity - 25) as ab
           from lineitem where l_linenumber in (1, 3, 5) and l_shipmode not in ('AIR')"""
    )
    assert "(Project <- Filter <- Scan parquet)" in plan, plan
    plan = same_both_ways(
        """select l_shipmode, sum(case when l_linenumber < 3 then 1 else 0 end) as low,
                  sum(case when l_linenumber >= 3 then l_extendedprice * (1 - l_discount) else 0 end) as high
           from lineitem where l_shipmode in ('MAIL', 'SHIP') group by l_shipmode"""
    )
    assert "(HashAggregate <- Project <- Filter <- Scan parquet)" in plan or "(HashAggregate <- Filter <- Scan parquet)" in plan, plan


def test_a_try_cast_stays_sparks_with_the_reason():
    sql = "select try_cast(l_comment as int) as n, l_orderkey from lineitem where l_linenumber = 1"
    plan = same_both_ways(sql)
    assert "Project [try_cast" in plan and "(Filter <- Scan parquet)" in plan, plan
    s = spark()
    text = "\n".join(r[0] for r in s.sql("EXPLAIN EXTENDED " + sql).collect())
    assert "Project: [KILN_SPARK_UNSUPPORTED] try_cast in TRY mode" in text, text


def test_tpch_22_queries_same_rows_and_the_share_run_in_kiln():
    """Each TPC-H query (tests/reference/queries) both ways, AQE on; prints the share of each
    query's operators kiln ran."""
    queries = os.path.join(ROOT, "tests", "reference", "queries")
    wrong, shares, plans = [], [], []
    for n in range(1, 23):
        with open(os.path.join(queries, f"tpch_q{n:02}.sql")) as f:
            sql = f.read()
        want, _, _ = run(sql, kiln=False)
        got, _, df = run(sql, kiln=True)
        if got != want:
            wrong.append(f"Q{n}: kiln gave {got[:2]}... ({len(got)} rows), Spark {want[:2]}... ({len(want)} rows)")
        k, total = spark()._jvm.io.kiln.spark.KilnExplain.operatorsInKiln(df._jdf.queryExecution().executedPlan())
        shares.append((n, k, total))
        plans.append(df._jdf.queryExecution().executedPlan().toString())
    print("operators run in kiln: " + ", ".join(f"Q{n} {k}/{t}" for n, k, t in shares), flush=True)
    assert not wrong, "\n".join(wrong)
    assert sum(k for _, k, _ in shares) > 0 and all(k < t for _, k, t in shares), shares
    # Joins and the stages over Spark's shuffles run in kiln too (Q5's probe of its broadcasts).
    text = "\n".join(plans)
    assert "(HashAggregate <- Project <- BroadcastHashJoin" in text, text
    assert "KilnExec" in plans[4] and "(HashAggregate)" in text, plans[4]


def test_a_kiln_task_failed_once_is_rerun_by_spark_with_the_same_rows():
    marker = os.path.join(_data.name, "failed-once")
    s = spark()
    s.conf.set("spark.kiln.test.failTaskOnce", marker)
    try:
        same_both_ways(Q1)
    finally:
        s.conf.unset("spark.kiln.test.failTaskOnce")
    # The hook claims the file as it fails the task: a query that passed went through a retry.
    assert os.path.exists(marker), "the hook did not fail a task"


def test_explain_shows_kilnexec_stages():
    s = spark()
    s.conf.set("spark.kiln.enabled", "true")
    s.conf.set("spark.sql.adaptive.enabled", "false")
    text = "\n".join(r[0] for r in s.sql("EXPLAIN " + Q6).collect())
    assert "KilnExec" in text, text
    assert "ColumnarToRow" in text, text


def test_an_unsupported_expression_falls_back_with_its_reason():
    sql = "select l_orderkey, initcap(l_comment) as c from lineitem where initcap(l_shipmode) = 'Mail' and l_quantity < 5"
    plan = same_both_ways(sql)
    # The scan still runs in kiln; the Filter and Project above it stay Spark's, with the reason.
    assert "KilnExec" in plan and "(Scan parquet)" in plan, plan
    s = spark()
    s.conf.set("spark.kiln.enabled", "true")
    s.conf.set("spark.sql.adaptive.enabled", "false")
    text = "\n".join(r[0] for r in s.sql("EXPLAIN EXTENDED " + sql).collect())
    assert "Filter: [KILN_SPARK_UNSUPPORTED] the expression InitCap" in text, text


def test_without_ansi_mode_the_plan_stays_sparks_with_the_reason():
    s = spark()
    s.conf.set("spark.sql.ansi.enabled", "false")
    try:
        same_both_ways(Q6, kiln_expected=False)
        text = "\n".join(r[0] for r in s.sql("EXPLAIN EXTENDED " + Q6).collect())
        assert "spark.sql.ansi.enabled=false" in text, text
    finally:
        s.conf.set("spark.sql.ansi.enabled", "true")


def test_a_kiln_error_fails_the_task_with_sparks_error_class():
    sql = "select l_orderkey * 9223372036854775807 as x from lineitem where l_orderkey > 3"
    errors = {}
    for kiln in (False, True):
        try:
            run(sql, kiln=kiln)
            errors[kiln] = "no error"
        except Exception as e:  # noqa: BLE001 - the message is what is compared
            errors[kiln] = str(e)
    assert "[ARITHMETIC_OVERFLOW]" in errors[False], errors[False][:2000]
    assert "[ARITHMETIC_OVERFLOW]" in errors[True] and "KilnException" in errors[True], errors[True][:2000]


def main():
    def cleanup():
        if _spark is not None:
            _spark.stop()
        _data.cleanup()

    return run_tests(globals(), cleanup)


if __name__ == "__main__":
    sys.exit(main())
