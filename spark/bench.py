"""TPC-H in Spark, vanilla against Spark with kiln's plugin, over the same Parquet files.

    python spark/bench.py DIR [--runs 3] [--queries 1,3,6] [--master local[2]]

DIR holds TPC-H's tables as `<table>.parquet` (a file or a directory of files, as tpchgen-cli
or `kiln gen tpch` write them). One Spark session; `spark.kiln.enabled` switches the plugin per
query. Per query: a warm-up of each, then RUNS runs alternating vanilla and kiln; the medians,
their ratio (vanilla / kiln: above 1 is kiln faster), the geometric mean of the ratios, and the
share of the query's operators that ran in kiln. The rows must be the same both ways (doubles
compared to 1e-9 relative), else the query is reported wrong and the script exits non-zero.

Needs the jar (spark/build.sh) and the library (`cargo build --release -p kiln-spark`); the
library is found as KILN_SPARK_LIB, else $CARGO_TARGET_DIR/release/libkiln_spark.so.
"""
import argparse
import math
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
LIB = os.environ.get("KILN_SPARK_LIB", os.path.join(TARGET, "release", "libkiln_spark.so"))
JAR = os.path.join(ROOT, "spark", "target", "kiln-spark.jar")
TABLES = ["lineitem", "orders", "customer", "part", "supplier", "partsupp", "nation", "region"]


def session(master, memory):
    from pyspark.sql import SparkSession

    s = (
        SparkSession.builder.master(master)
        .appName("kiln-spark-bench")
        .config("spark.driver.memory", memory)
        .config("spark.driver.extraClassPath", JAR)
        .config("spark.executor.extraClassPath", JAR)
        .config("spark.driver.extraJavaOptions", f"-Duser.timezone=UTC -Dkiln.native.lib={LIB}")
        .config("spark.sql.extensions", "io.kiln.spark.KilnExtensions")
        .config("spark.plugins", "io.kiln.spark.KilnPlugin")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    return s


def normalized(rows):
    def cell(v):
        # Sums of doubles add in a different order in kiln: compared to 1e-9 relative.
        if isinstance(v, float):
            return float(f"{v:.9g}")
        return v

    return sorted((tuple(cell(v) for v in r) for r in rows), key=repr)


def timed(spark, sql, kiln):
    spark.conf.set("spark.kiln.enabled", "true" if kiln else "false")
    start = time.perf_counter()
    df = spark.sql(sql)
    rows = df.collect()
    return time.perf_counter() - start, rows, df


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--queries", default=",".join(str(n) for n in range(1, 23)))
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--memory", default="6g", help="spark.driver.memory (local mode's executor)")
    args = ap.parse_args()

    spark = session(args.master, args.memory)
    for t in TABLES:
        spark.read.parquet(os.path.join(args.data, f"{t}.parquet")).createOrReplaceTempView(t)
    queries = os.path.join(ROOT, "tests", "reference", "queries")
    ratios, wrong = [], []
    print(f"{'query':>5} {'vanilla s':>10} {'kiln s':>8} {'ratio':>6}  in kiln", flush=True)
    for n in (int(q) for q in args.queries.split(",")):
        with open(os.path.join(queries, f"tpch_q{n:02}.sql")) as f:
            sql = f.read()
        _, want, _ = timed(spark, sql, kiln=False)
        _, got, df = timed(spark, sql, kiln=True)
        if normalized(got) != normalized(want):
            wrong.append(n)
        k, total = spark._jvm.io.kiln.spark.KilnExplain.operatorsInKiln(df._jdf.queryExecution().executedPlan())
        times = {False: [], True: []}
        for _ in range(args.runs):
            for kiln in (False, True):
                times[kiln].append(timed(spark, sql, kiln)[0])
        v, kt = statistics.median(times[False]), statistics.median(times[True])
        ratios.append(v / kt)
        flag = "  WRONG ROWS" if n in wrong else ""
        print(f"Q{n:>4} {v:>10.3f} {kt:>8.3f} {v / kt:>6.2f}  {k}/{total}{flag}", flush=True)
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geomean ratio {geomean:.3f} over {len(ratios)} queries; slowest ratio {min(ratios):.3f}", flush=True)
    spark.stop()
    if wrong:
        print("wrong rows: " + ", ".join(f"Q{n}" for n in wrong))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
