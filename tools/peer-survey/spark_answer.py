#!/usr/bin/env python3
"""Fill a draft .slt with Spark 4.3's answers: reads records separated by blank lines from the file
given (each `statement ok` / `query [rowsort]` header then SQL, `----` and anything after ignored),
prints them with Spark's type letters and rows, or `statement error <ERROR_CLASS>` where Spark fails.
Usage: spark_answer.py draft.slt > out.slt
"""
import sys, re, os
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType, DecimalType

spark = (SparkSession.builder.master("local[1]").config("spark.sql.session.timeZone", "UTC")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.warehouse.dir", f"/tmp/spark-answer-{os.getpid()}").getOrCreate())
spark.sparkContext.setLogLevel("OFF")
import logging
logging.getLogger("SQLQueryContextLogger").disabled = True


def letter(dt):
    if isinstance(dt, (ByteType, ShortType, IntegerType, LongType)):
        return "I"
    if isinstance(dt, (FloatType, DoubleType, DecimalType)):
        return "R"
    return "T"


text = open(sys.argv[1]).read()
out = []
for block in re.split(r"\n\s*\n", text.strip()):
    lines = block.split("\n")
    comments = [l for l in lines if l.startswith("#")]
    lines = [l for l in lines if not l.startswith("#")]
    if not lines:
        out.append("\n".join(comments))
        continue
    head = lines[0]
    body = []
    for l in lines[1:]:
        if l.strip() == "----":
            break
        body.append(l)
    sql = "\n".join(body)
    prefix = "\n".join(comments + [""]) if comments else ""
    try:
        df = spark.sql(sql)
        if head.startswith("statement"):
            df.collect()
            out.append(prefix + "statement ok\n" + sql)
            continue
        fields = df.schema.fields
        types = "".join(letter(f.dataType) for f in fields)
        df2 = df.toDF(*[f"c{i}" for i in range(len(fields))]).select([F.col(f"c{i}").cast("string") for i in range(len(fields))])
        rows = [["NULL" if v is None else ("(empty)" if v == "" else v) for v in r] for r in df2.collect()]
        sort = " rowsort" if "rowsort" in head else ""
        if sort:
            rows.sort()
        res = "\n".join(" ".join(r) for r in rows)
        out.append(prefix + f"query {types}{sort}\n{sql}\n----\n{res}".rstrip())
    except Exception as e:
        m = re.search(r"\[([A-Z_0-9.]+)\]", str(e))
        out.append(prefix + f"statement error {m.group(1) if m else str(e).splitlines()[0]}\n{sql}")
print("\n\n".join(out) + "\n")
