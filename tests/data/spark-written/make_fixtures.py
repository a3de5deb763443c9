"""Writes the Spark-written fixture folders and Spark's answers over them.

    /work/venv/bin/python tests/data/spark-written/make_fixtures.py   # pyspark 4.3.0, pyarrow

Each folder beside this script is one table written by pyspark 4.3.0 (local[2], session and JVM
time zone UTC) with one writer setting, or by pyarrow for the layouts Spark does not write
(unsigned integers, every timestamp unit, files without Spark's metadata). `answers.slt` holds
Spark's answers over them (schema by typeof, every row, aggregates, filters and casts over every
column; the rebase settings), every value as Spark's CAST(.. AS STRING); tests/spark_written.rs
runs it in both execution modes. `schemas.txt` is Spark's printSchema of each table.
"""
import glob
import os
import shutil
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

HERE = os.path.dirname(os.path.abspath(__file__))
REL = "tests/data/spark-written"

ROWS = """
(1, '0001-01-01 00:00:00', '0001-01-01', 'a', -128, 1.5, '2', true),
(2, '1500-03-01 12:34:56.5', '1500-03-01', '', 127, -0.25, '123.45', false),
(3, '1899-12-31 23:59:59', '1582-10-15', 'héllo', 0, 1e10, '-999.99', true),
(4, '1970-01-01 00:00:00', '1970-01-01', 'x,y', 1, 0.0, '0', NULL),
(5, '2024-02-29 13:45:30.123456', '2024-02-29', 'z', -1, -3.75, '0.01', false),
(6, '9999-12-31 23:59:59.999999', '9999-12-31', 'last', 42, 100.0, '999.99', true),
(7, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
"""

FLAT = """
SELECT CAST(id AS INT) AS id,
       CAST(n AS TINYINT) AS ti,
       CAST(n * 100 AS SMALLINT) AS si,
       CAST(n AS BIGINT) * 10000000000 AS l,
       CAST(x AS FLOAT) AS f,
       CAST(x AS DOUBLE) AS d,
       CAST(dec AS DECIMAL(5,2)) AS dec5,
       CAST(dec AS DECIMAL(10,2)) AS dec10,
       CAST(dec AS DECIMAL(18,4)) AS dec18,
       CAST(dec AS DECIMAL(38,10)) AS dec38,
       CAST(dt AS DATE) AS dt,
       CAST(ts AS TIMESTAMP) AS ts,
       CAST(ts AS TIMESTAMP_NTZ) AS ntz,
       s,
       bo
FROM VALUES {rows} AS v(id, ts, dt, s, n, x, dec, bo)
"""

NESTED = """
SELECT *,
       CAST(s AS BINARY) AS b,
       IF(id = 7, NULL, array(id, NULL, id * 2)) AS arr,
       IF(id = 7, NULL, array(ts, NULL)) AS arr_ts,
       IF(id = 7, NULL, map('k', id, 'n', CAST(NULL AS INT))) AS m,
       IF(id = 7, NULL, named_struct('a', id, 't', ts, 'd', dt)) AS st
FROM flat
"""


def spark_session():
    return (
        SparkSession.builder.master("local[2]")
        .appName("kiln-spark-written")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )


def write(spark, df, name, conf=None, partition_by=None, fmt="parquet"):
    out = os.path.join(HERE, name)
    shutil.rmtree(out, ignore_errors=True)
    conf = conf or {}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        w = df.coalesce(1).write.mode("overwrite")
        if partition_by:
            w = w.partitionBy(*partition_by)
        getattr(w, fmt)(out)
    finally:
        for k in conf:
            spark.conf.unset(k)
    for crc in glob.glob(os.path.join(out, "**", ".*.crc"), recursive=True):
        os.remove(crc)
    success = os.path.join(out, "_SUCCESS")
    if os.path.exists(success):
        os.remove(success)


def write_arrow():
    """Files no Spark wrote: unsigned integers, timestamps in s/ms/us/ns, INT32/INT64
    decimals, field ids, and an INT96 file without Spark's metadata."""
    out = os.path.join(HERE, "arrow_units")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    us = [-62135596800000000, -14826626703500000, 0, 1709214330123456, None]
    def f(name, t, fid):
        return pa.field(name, t, metadata={b"PARQUET:field_id": str(fid).encode()})
    schema = pa.schema([
        f("id", pa.int32(), 1),
        f("u8", pa.uint8(), 2),
        f("u16", pa.uint16(), 3),
        f("u32", pa.uint32(), 4),
        f("u64", pa.uint64(), 5),
        f("ts_s", pa.timestamp("s", tz="UTC"), 6),
        f("ts_ms", pa.timestamp("ms", tz="UTC"), 7),
        f("ts_us", pa.timestamp("us", tz="UTC"), 8),
        f("ts_ns", pa.timestamp("ns", tz="UTC"), 9),
        f("ntz_ms", pa.timestamp("ms"), 10),
        f("ntz_us", pa.timestamp("us"), 11),
        f("dec_i32", pa.decimal128(7, 2), 12),
        f("dec_i64", pa.decimal128(15, 3), 13),
        f("dt", pa.date32(), 14),
    ])
    ns_ok = [v if v is None or -9223372036854 <= v // 1000 <= 9223372036854 else None for v in us]
    table = pa.table({
        "id": [1, 2, 3, 4, 5],
        "u8": [0, 1, 200, 255, None],
        "u16": [0, 1, 40000, 65535, None],
        "u32": [0, 1, 3000000000, 4294967295, None],
        "u64": [0, 1, 10000000000000000000, 18446744073709551615, None],
        "ts_s": [None if v is None else v // 1000000 for v in us],
        "ts_ms": [None if v is None else v // 1000 for v in us],
        "ts_us": us,
        # Nanoseconds only reach 1677-09-21 .. 2262-04-11: the ancient rows are NULL here.
        "ts_ns": [None if v is None or v < -9223372036854775 else v * 1000 for v in us],
        "ntz_ms": [None if v is None else v // 1000 for v in us],
        "ntz_us": us,
        "dec_i32": [pa.scalar(v, pa.decimal128(7, 2)).as_py() if v is not None else None for v in [None, None, None, None, None]],
        "dec_i64": [None] * 5,
        "dt": [-719162, -171605, 0, 19782, None],
    }, schema=schema)
    import decimal
    table = table.set_column(11, schema.field(11), pa.array([decimal.Decimal("12345.67"), decimal.Decimal("-0.01"), decimal.Decimal("0"), decimal.Decimal("99999.99"), None], pa.decimal128(7, 2)))
    table = table.set_column(12, schema.field(12), pa.array([decimal.Decimal("123456789012.345"), decimal.Decimal("-1.5"), decimal.Decimal("0"), decimal.Decimal("7"), None], pa.decimal128(15, 3)))
    pq.write_table(table, os.path.join(out, "part-0.parquet"), version="2.6", store_decimal_as_integer=True,
                   coerce_timestamps=None, allow_truncated_timestamps=False)

    # INT96 and dates before 1582 with no Spark version: the read settings decide.
    out = os.path.join(HERE, "arrow_int96")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    t = pa.table({
        "id": pa.array([1, 2, 3], pa.int32()),
        "ts": pa.array([-14826626703500000, 0, 1709214330123456], pa.timestamp("us", tz="UTC")),
        "dt": pa.array([-171605, 0, 19782], pa.date32()),
    })
    pq.write_table(t, os.path.join(out, "part-0.parquet"), use_deprecated_int96_timestamps=True)


def spark_type_letter(t):
    name = t.typeName()
    if name in ("byte", "short", "integer", "long"):
        return "I"
    if name in ("float", "double", "decimal"):
        return "R"
    return "T"


class Answers:
    def __init__(self, spark):
        self.spark = spark
        self.out = []

    def comment(self, text):
        self.out.append("")
        self.out.extend("# " + line for line in text.strip().splitlines())

    def statement(self, sql):
        self.spark.sql(sql)
        self.out += ["", "statement ok", sql]

    def query(self, sql, spark_sql=None):
        df = self.spark.sql(spark_sql or sql)
        cols = [f"c{i}" for i in range(len(df.columns))]
        types = "".join(spark_type_letter(f.dataType) for f in df.schema.fields)
        casted = df.toDF(*cols).selectExpr(*[f"CAST({c} AS STRING)" for c in cols])
        rows = casted.collect()
        order = "rowsort" if "ORDER BY" not in sql.upper() else ""
        self.out += ["", f"query {types} {order}".rstrip(), sql, "----"]
        lines = [["NULL" if v is None else ("(empty)" if v == "" else v) for v in r] for r in rows]
        if order:
            # sqllogictest sorts the engine's rows, not the file's: store them sorted.
            lines.sort(key=lambda vals: [v.encode() for v in vals])
        self.out.extend(" ".join(vals) for vals in lines)

    def error(self, sql, pattern):
        try:
            self.spark.sql(sql).collect()
        except Exception as e:  # noqa: BLE001
            text = str(e)
            assert pattern.replace("\\", "") .split(".*")[0] in text, text
            self.out += ["", f"statement error {pattern}", sql]
            return text
        raise AssertionError(f"Spark did not fail: {sql}")


def table_checks(a, name, columns, skip=()):
    """Schema, all rows, and per-column aggregates, a filter and casts."""
    spark = a.spark
    df = spark.table(name)
    a.comment(f"{name}: the schema Spark reads")
    a.query(f"SELECT {', '.join(f'typeof({c})' for c in df.columns)} FROM {name} LIMIT 1")
    cols = [c for c in df.columns if c not in skip]
    shown = [f"hex({c})" if dict(df.dtypes)[c] == "binary" else c for c in cols]
    a.query(f"SELECT {', '.join(shown)} FROM {name} ORDER BY id")
    types = dict(df.dtypes)
    for c in cols:
        t = types[c]
        if c == "id":
            continue
        if not (t.startswith("array") or t.startswith("map") or t.startswith("struct")):
            if t == "binary":
                a.query(f"SELECT count({c}), count(DISTINCT {c}), sum(length({c})) FROM {name}")
            else:
                a.query(f"SELECT min({c}), max({c}), count({c}) FROM {name}")
        if t.startswith("timestamp"):
            lit = "TIMESTAMP_NTZ" if t == "timestamp_ntz" else "TIMESTAMP"
            a.query(f"SELECT id FROM {name} WHERE {c} > {lit} '1900-01-01 00:00:00' ORDER BY id")
            a.query(f"SELECT id FROM {name} WHERE {c} <= {lit} '1582-10-15 00:00:00' ORDER BY id")
            a.query(f"SELECT id, CAST({c} AS DATE), CAST({c} AS STRING), unix_micros(CAST({c} AS TIMESTAMP)), year({c}), hour({c}) FROM {name} ORDER BY id")
            a.query(f"SELECT id, CAST({c} AS {'TIMESTAMP' if t == 'timestamp_ntz' else 'TIMESTAMP_NTZ'}) FROM {name} ORDER BY id")
        elif t == "date":
            a.query(f"SELECT id FROM {name} WHERE {c} < DATE '1582-10-15' ORDER BY id")
            a.query(f"SELECT id, CAST({c} AS TIMESTAMP), CAST({c} AS STRING), unix_date({c}), {c} + 1 FROM {name} ORDER BY id")
        elif t.startswith("decimal"):
            a.query(f"SELECT id, CAST({c} AS DOUBLE), CAST({c} AS STRING), {c} * 2 FROM {name} ORDER BY id")
            a.query(f"SELECT sum({c}), avg({c}) FROM {name}")
        elif t in ("tinyint", "smallint", "int", "bigint"):
            a.query(f"SELECT sum({c}), id FROM {name} WHERE {c} > 0 GROUP BY id ORDER BY id")
            a.query(f"SELECT id, CAST({c} AS STRING), CAST({c} AS DOUBLE) FROM {name} ORDER BY id")
        elif t in ("float", "double"):
            a.query(f"SELECT id FROM {name} WHERE {c} > 0 ORDER BY id")
            a.query(f"SELECT id, CAST({c} AS STRING), CAST({c} AS DECIMAL(20,4)) FROM {name} ORDER BY id")
        elif t == "string":
            a.query(f"SELECT id, length({c}), upper({c}) FROM {name} WHERE {c} IS NOT NULL ORDER BY id")
        elif t.startswith("array"):
            a.query(f"SELECT id, size({c}), {c}[0] FROM {name} ORDER BY id")
            a.query(f"SELECT id, e FROM {name} LATERAL VIEW explode({c}) x AS e ORDER BY id, e")
        elif t.startswith("map"):
            a.query(f"SELECT id, {c}['k'], map_keys({c}) FROM {name} ORDER BY id")
        elif t.startswith("struct"):
            a.query(f"SELECT id, {c}.a, {c}.t, {c}.d FROM {name} ORDER BY id")
            a.query(f"SELECT min({c}.t), max({c}.d) FROM {name}")


def main():
    spark = spark_session()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql(FLAT.format(rows=ROWS)).createOrReplaceTempView("flat")
    nested = spark.sql(NESTED)
    no_binary = nested.drop("b")

    write(spark, nested, "int96")
    write(spark, nested, "millis", {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MILLIS"})
    write(spark, nested, "micros", {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"})
    write(spark, no_binary, "legacy_rebase_int96", {
        "spark.sql.parquet.datetimeRebaseModeInWrite": "LEGACY", "spark.sql.parquet.int96RebaseModeInWrite": "LEGACY"})
    write(spark, no_binary, "legacy_rebase_micros", {
        "spark.sql.parquet.datetimeRebaseModeInWrite": "LEGACY", "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"})
    write(spark, nested, "legacy_format", {"spark.sql.parquet.writeLegacyFormat": "true"})
    part = spark.sql("""
        SELECT id, s, CAST(id % 2 AS INT) AS part, CAST(dt AS DATE) AS day, id / 2 AS half,
               CAST(12345678901234567890 + id % 2 AS DECIMAL(20,0)) AS big, IF(id % 2 = 0, 'even', 'odd') AS word
        FROM flat WHERE id BETWEEN 3 AND 6""")
    write(spark, part, "partitioned", partition_by=["part", "day", "half", "big", "word"])
    spark.sql("DROP TABLE IF EXISTS cv")
    cv = os.path.join(HERE, "char_varchar")
    shutil.rmtree(cv, ignore_errors=True)
    spark.sql(f"CREATE TABLE cv (id INT, c CHAR(5), v VARCHAR(8)) USING parquet LOCATION '{cv}'")
    spark.sql("INSERT INTO cv VALUES (1, 'ab', 'abc'), (2, NULL, ''), (3, 'abcde', 'abcdefgh')")
    spark.sql("DROP TABLE cv")
    for crc in glob.glob(os.path.join(cv, "**", ".*.crc"), recursive=True):
        os.remove(crc)
    for s in glob.glob(os.path.join(cv, "_SUCCESS")):
        os.remove(s)
    flat_text = spark.sql("SELECT id, ti, l, d, dec10, dt, ts, ntz, s, bo FROM flat WHERE id <> 3")
    write(spark, flat_text, "csv", fmt="csv")
    write(spark, flat_text, "json", fmt="json")
    write_arrow()

    a = Answers(spark)
    a.out += [
        "# Generated by make_fixtures.py from pyspark 4.3.0's answers over the tables beside it:",
        "# do not edit by hand. Every value is Spark's CAST(.. AS STRING).",
    ]
    schemas = []
    for name in ["int96", "millis", "micros", "legacy_rebase_int96", "legacy_rebase_micros", "legacy_format", "partitioned", "char_varchar", "arrow_int96"]:
        path = f"{REL}/{name}"
        spark.read.parquet(os.path.join(HERE, name)).createOrReplaceTempView(name)
        schemas.append(f"{name}:\n" + spark.table(name)._jdf.schema().treeString())
        a.out += ["", "statement ok", f"CREATE TEMPORARY VIEW {name} USING parquet OPTIONS (path '{path}')"]
        table_checks(a, name, spark.table(name).columns)

    a.comment("Partition values typed as Spark infers them; all strings when inference is off.")
    a.query("SELECT part, day, half, big, word, count(*) FROM partitioned GROUP BY ALL ORDER BY ALL")
    a.query("SELECT id FROM partitioned WHERE part = 0 AND day > DATE '2000-01-01' ORDER BY id")
    a.statement("SET spark.sql.sources.partitionColumnTypeInference.enabled=false")
    a.out += ["", "statement ok", f"CREATE TEMPORARY VIEW partitioned_text USING parquet OPTIONS (path '{REL}/partitioned')"]
    spark.read.parquet(os.path.join(HERE, "partitioned")).createOrReplaceTempView("partitioned_text")
    a.query("SELECT typeof(part), typeof(day), typeof(half), typeof(big), typeof(word) FROM partitioned_text LIMIT 1")
    a.query("SELECT part, day, half, big, word FROM partitioned_text ORDER BY id")
    a.statement("SET spark.sql.sources.partitionColumnTypeInference.enabled=true")

    a.comment("No Spark version in the file: spark.sql.parquet.*RebaseModeInRead decide (Spark's default CORRECTED).")
    for mode in ["LEGACY", "CORRECTED"]:
        a.statement(f"SET spark.sql.parquet.int96RebaseModeInRead={mode}")
        a.statement(f"SET spark.sql.parquet.datetimeRebaseModeInRead={mode}")
        a.query("SELECT id, ts, dt FROM arrow_int96 ORDER BY id")
    a.statement("SET spark.sql.parquet.int96RebaseModeInRead=EXCEPTION")
    err = a.error("SELECT ts FROM arrow_int96", r"\[INCONSISTENT_BEHAVIOR_CROSS_VERSION\.READ_ANCIENT_DATETIME\].*INT96")
    schemas.append("EXCEPTION error (int96):\n" + err.splitlines()[0])
    a.query("SELECT id, dt FROM arrow_int96 WHERE id > 1 ORDER BY id")
    a.statement("SET spark.sql.parquet.int96RebaseModeInRead=CORRECTED")
    a.statement("SET spark.sql.parquet.datetimeRebaseModeInRead=EXCEPTION")
    a.error("SELECT dt FROM arrow_int96", r"\[INCONSISTENT_BEHAVIOR_CROSS_VERSION\.READ_ANCIENT_DATETIME\]")
    a.comment("A Spark-written file's metadata wins over the setting: LEGACY files are rebased even in EXCEPTION mode.")
    a.query("SELECT id, dt, ts FROM legacy_rebase_micros ORDER BY id")
    a.statement("SET spark.sql.parquet.int96RebaseModeInRead=EXCEPTION")
    a.query("SELECT id, dt, ts FROM legacy_rebase_int96 ORDER BY id")
    a.statement("SET spark.sql.parquet.datetimeRebaseModeInRead=CORRECTED")
    a.statement("SET spark.sql.parquet.int96RebaseModeInRead=CORRECTED")

    # Files pyarrow wrote: Spark cannot read nanoseconds (TIMESTAMP(NANOS)); kiln's answers for
    # ts_ns are Spark's for ts_us, which holds the same instants where ns can.
    spark.read.schema("id INT, u8 SMALLINT, u16 INT, u32 BIGINT, u64 DECIMAL(20,0), ts_s TIMESTAMP, ts_ms TIMESTAMP, ts_us TIMESTAMP, ntz_ms TIMESTAMP_NTZ, ntz_us TIMESTAMP_NTZ, dec_i32 DECIMAL(7,2), dec_i64 DECIMAL(15,3), dt DATE") \
        .parquet(os.path.join(HERE, "arrow_units")).createOrReplaceTempView("arrow_units")
    a.out += ["", "statement ok", f"CREATE TEMPORARY VIEW arrow_units USING parquet OPTIONS (path '{REL}/arrow_units')"]
    table_checks(a, "arrow_units", None, skip=())
    a.comment("ts_ns: the instants of ts_us (NULL before 1677), read at microseconds.")
    a.query("SELECT id, ts_ns, typeof(ts_ns) FROM arrow_units ORDER BY id",
            "SELECT id, IF(ts_us < TIMESTAMP '1677-09-22 00:00:00', NULL, ts_us), typeof(ts_us) FROM arrow_units ORDER BY id")

    a.comment("Spark's CSV and JSON output, read with Spark's default options, then with the writer's schema.")
    for fmt in ["csv", "json"]:
        a.out += ["", "statement ok", f"CREATE TEMPORARY VIEW {fmt}_default USING {fmt} OPTIONS (path '{REL}/{fmt}')"]
        getattr(spark.read, fmt)(os.path.join(HERE, fmt)).createOrReplaceTempView(f"{fmt}_default")
        cols = spark.table(f"{fmt}_default").columns
        a.query(f"SELECT {', '.join(f'typeof({c})' for c in cols)} FROM {fmt}_default LIMIT 1")
        a.query(f"SELECT * FROM {fmt}_default")
        ddl = "id INT, ti TINYINT, l BIGINT, d DOUBLE, dec10 DECIMAL(10,2), dt DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ, s STRING, bo BOOLEAN"
        a.out += ["", "statement ok", f"CREATE TABLE {fmt}_typed ({ddl}) USING {fmt} LOCATION '{REL}/{fmt}'"]
        spark.read.schema(ddl).format(fmt).load(os.path.join(HERE, fmt)).createOrReplaceTempView(f"{fmt}_typed")
        a.query(f"SELECT * FROM {fmt}_typed ORDER BY id")
        a.query(f"SELECT min(ts), max(ntz), min(dt), sum(dec10) FROM {fmt}_typed")
    a.out += ["", "statement ok", f"CREATE TEMPORARY VIEW csv_inferred USING csv OPTIONS (path '{REL}/csv', inferSchema 'true')"]
    spark.read.option("inferSchema", "true").csv(os.path.join(HERE, "csv")).createOrReplaceTempView("csv_inferred")
    cols = spark.table("csv_inferred").columns
    a.query(f"SELECT {', '.join(f'typeof({c})' for c in cols)} FROM csv_inferred LIMIT 1")
    a.query("SELECT * FROM csv_inferred ORDER BY _c0")

    with open(os.path.join(HERE, "answers.slt"), "w") as fh:
        fh.write("\n".join(a.out).lstrip("\n") + "\n")
    with open(os.path.join(HERE, "schemas.txt"), "w") as fh:
        fh.write("\n".join(schemas))
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
