#!/usr/bin/env python3
"""Run the extracted records through pyspark 4.3 (ANSI on, session time zone UTC) and keep the
query records whose Spark answer equals the corpus file's expected result.

Input /work/survey/records.jsonl (extract.py); output /work/survey/spark.jsonl, one line per
corpus file: {"src","file","records":[... + spark: {"ok", "types", "rows", "match", "error"}]}
Usage: spark_run.py [max_queries_per_file]
"""
import json, sys, re, hashlib, math, threading, time, os

CAPS = {"sqlite": int(os.environ.get("CAP_SQLITE", 50)), "duckdb": int(os.environ.get("CAP_DUCKDB", 12)), "datafusion": int(os.environ.get("CAP_DF", 40))}
MAXQ = int(sys.argv[1]) if len(sys.argv) > 1 else None
TIMEOUT = 20

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType,
                               DecimalType)

spark = (SparkSession.builder.master("local[2]")
         .config("spark.sql.session.timeZone", "UTC")
         .config("spark.sql.shuffle.partitions", "2")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.sql.warehouse.dir", f"/tmp/survey-wh-{os.getpid()}")
         .config("spark.driver.memory", "2g")
         .getOrCreate())
spark.sparkContext.setLogLevel("OFF")
import logging
logging.getLogger("SQLQueryContextLogger").disabled = True
for _n in ("py4j", "pyspark"):
    logging.getLogger(_n).setLevel(logging.CRITICAL)
sc = spark.sparkContext


def letter(dt):
    if isinstance(dt, (ByteType, ShortType, IntegerType, LongType)):
        return "I"
    if isinstance(dt, (FloatType, DoubleType, DecimalType)):
        return "R"
    return "T"


def run_sql(sql, is_query):
    """(types, rows) or raises. Rows are Spark's string casts, NULL/(empty) as kiln's runner prints."""
    group = f"g{time.time_ns()}"
    sc.setJobGroup(group, "survey", True)
    timer = threading.Timer(TIMEOUT, lambda: sc.cancelJobGroup(group))
    timer.start()
    try:
        df = spark.sql(sql)
        if not is_query:
            df.collect()
            return None, None
        fields = df.schema.fields
        types = "".join(letter(f.dataType) for f in fields)
        df2 = df.toDF(*[f"c{i}" for i in range(len(fields))])
        df2 = df2.select([F.col(f"c{i}").cast("string") for i in range(len(fields))])
        rows = []
        for r in df2.collect():
            rows.append(["NULL" if v is None else ("(empty)" if v == "" else v) for v in r])
        return types, rows
    finally:
        timer.cancel()


def err_class(e):
    s = str(e)
    m = re.search(r"\[([A-Z_0-9.]+)\]", s)
    return m.group(1) if m else s.split("\n")[0][:120]


# ---------- comparison with the corpus' expected text ----------
def canon(tok, src, letter_):
    if tok in ("NULL", "null"):
        return "NULL"
    if tok == "(empty)":
        return ""
    if src == "sqlite":
        if tok == "true":
            tok = "1"
        elif tok == "false":
            tok = "0"
    try:
        x = float(tok)
        if math.isnan(x) or math.isinf(x):
            return tok.lower().replace("infinity", "inf")
        if src == "sqlite" and letter_ == "R":
            return "%.3f" % x
        if x == int(x) and abs(x) < 1e15:
            return str(int(x))
        return "%.6g" % x
    except ValueError:
        return tok


def sqlite_fmt(v, letter_):
    """A value as SQLite's harness prints it (for hashes)."""
    if v == "NULL":
        return "NULL"
    if v == "(empty)":
        return "(empty)"
    if letter_ == "I":
        try:
            x = float(v)
            return str(int(x))
        except ValueError:
            if v == "true":
                return "1"
            if v == "false":
                return "0"
            return v
    if letter_ == "R":
        try:
            return "%.3f" % float(v)
        except ValueError:
            return v
    return v


def matches(rec, src, types, rows):
    ftypes = rec.get("types") or ""
    ncol = len(types)
    if ftypes and len(ftypes) != ncol and src != "duckdb":
        return False
    if not ftypes or len(ftypes) != ncol:
        ftypes = types
    sort = rec["sort"]
    if rec.get("hash"):
        n, h = rec["hash"]
        vals = [[sqlite_fmt(v, ftypes[i]) for i, v in enumerate(r)] for r in rows]
        if sort == "rowsort":
            vals.sort()
        flat = [v for r in vals for v in r]
        if sort == "valuesort":
            flat.sort()
        m = hashlib.md5()
        for v in flat:
            m.update(v.encode())
            m.update(b"\n")
        return len(flat) == n and m.hexdigest() == h
    exp = rec["expected"]
    # Expected rows as token lists
    if src == "sqlite":
        if ncol and len(exp) == len(rows) * ncol:
            erows = [exp[k:k + ncol] for k in range(0, len(exp), ncol)]
        else:
            erows = [[t] for t in exp]
            rows = [[v] for r in rows for v in r]
            ftypes = ftypes[:1] * 1 if ftypes else "T"
    elif src == "duckdb":
        erows = [l.split("\t") for l in exp]
    else:
        erows = [l.split() for l in exp]
        rows = [" ".join(r).split() for r in rows]
    def canrow(r):
        return [canon(t, src, ftypes[i] if i < len(ftypes) else "T") for i, t in enumerate(r)]
    a = [canrow(r) for r in rows]
    e = [canrow(r) for r in erows]
    if sort == "rowsort":
        a.sort(); e.sort()
    elif sort == "valuesort":
        a = sorted(v for r in a for v in r); e = sorted(v for r in e for v in r)
    return a == e


def combine_inserts(recs):
    """Consecutive single-row `INSERT INTO t VALUES (...)` statements to one multi-row insert (speed)."""
    out = []
    pat = re.compile(r"^INSERT\s+INTO\s+(\w+)\s*VALUES\s*(\(.*\))\s*;?\s*$", re.I | re.S)
    for r in recs:
        m = pat.match(r["sql"]) if r["kind"] == "statement" and not r["expect_error"] else None
        if m and out and out[-1].get("_ins") == m.group(1).lower():
            out[-1]["sql"] += ", " + m.group(2)
            out[-1]["_members"].append(r)
            continue
        if m:
            out.append({"kind": "statement", "sql": f"INSERT INTO {m.group(1)} VALUES {m.group(2)}",
                        "expect_error": False, "_ins": m.group(1).lower(), "_members": [r], "line": r["line"]})
        else:
            out.append(r)
    return out


def reset():
    for t in spark.catalog.listTables():
        try:
            if t.isTemporary:
                spark.catalog.dropTempView(t.name)
            else:
                spark.sql(f"DROP TABLE IF EXISTS `{t.name}`")
        except Exception:
            pass
    for v in ("VIEW",):
        pass


def main():
    out = open(os.environ.get("SURVEY_OUT", "/work/survey/spark.jsonl"), "w")
    files = [json.loads(l) for l in open(os.environ.get("SURVEY_IN", "/work/survey/records.jsonl"))]
    # a fixed sample of DuckDB's files (seeded), every picked SQLite and DataFusion file
    import random
    rnd = random.Random(42)
    duck = [f for f in files if f["src"] == "duckdb"]
    keep = set(id(f) for f in rnd.sample(duck, min(len(duck), int(os.environ.get("SURVEY_DUCK_FILES", "120")))))
    files = [f for f in files if f["src"] != "duckdb" or id(f) in keep]
    only = os.environ.get("SURVEY_ONLY")
    if only:
        files = [f for f in files if f["src"] in only.split(",")]
    t0 = time.time()
    tot = ok = 0
    for fi, f in enumerate(files):
        src = f["src"]
        recs = f["records"]
        # cap the queries per file (the statements before the cap are kept)
        capped, q = [], 0
        for r in recs:
            if r["kind"] == "query":
                q += 1
                if q > (MAXQ or CAPS[src]):
                    break
            capped.append(r)
        reset()
        spark.sql("USE default")
        for r in combine_inserts(capped):
            if r["kind"] == "statement":
                try:
                    run_sql(r["sql"], False)
                    st = True
                except Exception as e:
                    st = False
                for m in r.get("_members", [r]):
                    m["spark"] = {"ok": st}
                continue
            if r["expect_error"]:
                try:
                    run_sql(r["sql"], False)
                    r["spark"] = {"ok": True}
                except Exception as e:
                    r["spark"] = {"ok": False, "error": err_class(e)}
                continue
            try:
                types, rows = run_sql(r["sql"], True)
                r["spark"] = {"ok": True, "types": types, "rows": rows, "match": matches(r, src, types, rows)}
            except Exception as e:
                r["spark"] = {"ok": False, "error": err_class(e)}
            tot += 1
            ok += bool(r["spark"].get("match"))
        f["records"] = capped
        out.write(json.dumps(f) + "\n")
        out.flush()
        if fi % 20 == 0:
            print(f"[{time.time()-t0:.0f}s] {fi+1}/{len(files)} files, {tot} queries, {ok} spark-pass", file=sys.stderr, flush=True)
    print(f"done: {tot} queries, {ok} spark-pass", file=sys.stderr)


if __name__ == "__main__":
    main()
