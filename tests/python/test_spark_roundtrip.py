"""kiln and Spark reading each other's files: Spark writes, kiln reads; kiln writes, Spark
reads; the same rows either way. One local Spark session serves every test in this file (the
Spark Connect and plugin tests are to share it).

    KILN=target/release/kiln python tests/python/test_spark_roundtrip.py   # or pytest

Needs pyspark 4.3.0 and Java 17. Prints `N passed, M failed` and exits non-zero when a test
fails or none ran.
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KILN = os.environ.get("KILN", os.path.join(ROOT, "target", "release", "kiln"))

_spark = None


def spark():
    """The one Spark session (local[2], session and JVM time zone UTC)."""
    global _spark
    if _spark is None:
        from pyspark.sql import SparkSession

        _spark = (
            SparkSession.builder.master("local[2]")
            .appName("kiln-roundtrip")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        _spark.sparkContext.setLogLevel("ERROR")
    return _spark


# Every type both sides have, NULLs, and the instants that break naive readers (year 1, year
# 9999, before the Gregorian calendar, microseconds).
ROWS_SQL = """
SELECT CAST(id AS INT) AS id, CAST(id AS BIGINT) * 10000000000 AS l, CAST(id AS SMALLINT) AS si,
       CAST(id / 4 AS DOUBLE) AS d, CAST(id * 1.25 AS DECIMAL(10,2)) AS dec10,
       CAST(id * 1.25 AS DECIMAL(38,10)) AS dec38, CAST(dt AS DATE) AS dt,
       CAST(ts AS TIMESTAMP) AS ts, CAST(ts AS TIMESTAMP_NTZ) AS ntz, s, id % 2 = 0 AS bo,
       array(id, NULL) AS arr, map('k', id) AS m, named_struct('a', id, 't', CAST(ts AS TIMESTAMP)) AS st
FROM VALUES (1, '0001-01-01', '0001-01-01 00:00:00', 'a'), (2, '1500-03-01', '1500-03-01 12:34:56.5', ''),
            (3, '2024-02-29', '2024-02-29 13:45:30.123456', 'héllo'), (4, '9999-12-31', '9999-12-31 23:59:59.999999', NULL),
            (5, NULL, NULL, 'x,y') AS v(id, dt, ts, s)
"""
COLUMNS = "id, l, si, d, dec10, dec38, dt, ts, ntz, s, bo, arr, m, st"


def strings(columns):
    """kiln's select list printing each column as CAST(.. AS STRING), NULL as `NULL`."""
    return ", ".join(f"coalesce(CAST({c} AS STRING), 'NULL')" for c in columns.split(", "))


def kiln_csv(sql, tables=(), confs=()):
    """kiln's answer: `kiln sql --format csv` with tables NAME=PATH and settings, rows without the header."""
    args = [KILN, "sql", "--format", "csv"]
    for name, path in tables:
        args += ["--table", f"{name}={path}"]
    for key, value in confs:
        args += ["--conf", f"{key}={value}"]
    out = subprocess.run(args + [sql], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise AssertionError(f"kiln failed ({out.returncode}): {out.stderr.strip()}")
    return list(csv.reader(io.StringIO(out.stdout)))[1:]


def spark_rows(df):
    """Rows as Spark's CAST(.. AS STRING), NULL as `NULL`."""
    cols = [f"c{i}" for i in range(len(df.columns))]
    rows = df.toDF(*cols).selectExpr(*[f"CAST({c} AS STRING)" for c in cols]).collect()
    return [["NULL" if v is None else v for v in r] for r in rows]


def same(kiln, spark_side, what):
    assert kiln == spark_side, f"{what}:\nkiln:  {kiln}\nspark: {spark_side}"


def test_spark_writes_kiln_reads():
    s = spark()
    df = s.sql(ROWS_SQL)
    expected = spark_rows(df.orderBy("id"))
    with tempfile.TemporaryDirectory() as tmp:
        for setting in ["INT96", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS"]:
            path = os.path.join(tmp, setting)
            s.conf.set("spark.sql.parquet.outputTimestampType", setting)
            df.coalesce(1).write.parquet(path)
            s.conf.unset("spark.sql.parquet.outputTimestampType")
            got = kiln_csv(f"SELECT {strings(COLUMNS)} FROM t ORDER BY id", [("t", path)])
            want = expected
            if setting == "TIMESTAMP_MILLIS":
                want = spark_rows(s.read.parquet(path).orderBy("id").select(*COLUMNS.split(", ")))
            same(got, want, f"Spark's {setting} files read by kiln")
            types = kiln_csv("SELECT typeof(ts), typeof(ntz), typeof(st) FROM t LIMIT 1", [("t", path)])
            same(types, [["timestamp", "timestamp_ntz", "struct<a:int,t:timestamp>"]], f"{setting} types")


def test_kiln_writes_spark_reads():
    s = spark()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kiln_table")
        query = ROWS_SQL.replace("\n", " ")
        kiln_csv(f"CREATE TABLE w USING parquet LOCATION '{path}' AS {query}")
        back = s.read.parquet(path)
        got = spark_rows(back.orderBy("id").select(*COLUMNS.split(", ")))
        same(got, spark_rows(s.sql(ROWS_SQL).orderBy("id")), "kiln's files read by Spark")
        kiln_back = kiln_csv(f"SELECT {strings(COLUMNS)} FROM t ORDER BY id", [("t", path)])
        same(kiln_back, got, "kiln's files read back by kiln")


def test_partitioned_both_ways():
    s = spark()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "parts")
        s.sql("SELECT id, id % 3 AS part, CAST('2024-01-0' || (id % 2 + 1) AS DATE) AS day FROM range(12)").write.partitionBy("part", "day").parquet(path)
        got = kiln_csv(f"SELECT {strings('part, day')}, count(*), sum(id), typeof(part), typeof(day) FROM t GROUP BY part, day ORDER BY part, day", [("t", path)])
        s.read.parquet(path).createOrReplaceTempView("t")
        want = spark_rows(s.sql("SELECT part, day, count(*), sum(id), typeof(part), typeof(day) FROM t GROUP BY ALL ORDER BY ALL"))
        same(got, want, "Spark's partition folders read by kiln")


def run_tests(namespace, cleanup):
    """Runs every `test_*` function of `namespace`, then `cleanup()`; prints each outcome and
    `N passed, M failed`; the exit status: 0 when some ran and none failed."""
    import time

    tests = [(n, f) for n, f in sorted(namespace.items()) if n.startswith("test_") and callable(f)]
    passed = failed = 0
    for name, test in tests:
        started = time.time()
        try:
            test()
            passed += 1
            print(f"PASSED {name} ({time.time() - started:.1f} s)", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAILED {name}: {type(e).__name__}: {e}", flush=True)
    cleanup()
    print(f"{passed} passed, {failed} failed")
    return 0 if passed > 0 and failed == 0 else 1


def main():
    return run_tests(globals(), lambda: _spark.stop() if _spark is not None else None)


if __name__ == "__main__":
    sys.exit(main())
