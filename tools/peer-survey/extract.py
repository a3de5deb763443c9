#!/usr/bin/env python3
"""Extract statement/query records from peer sqllogictest corpora (SQLite, DuckDB, DataFusion).

Writes /work/survey/records.jsonl: one JSON object per corpus file:
  {"src": engine, "file": path, "records": [ {kind, sql, types, sort, expected, hash, line, expect_error} ]}
Corpora are bare git mirrors fetched with the `fetch` tool; nothing is copied into the kiln repo.
"""
import json, re, subprocess, sys, random

MIRRORS = {
    "sqlite": "/work/.mirror/gregrahn+sqllogictest/repo",
    "duckdb": "/work/.mirror/duckdb+duckdb/repo",
    "datafusion": "/work/.mirror/apache+arrow-datafusion/repo",
}

def ls(src):
    out = subprocess.run(["git", "--git-dir", MIRRORS[src], "ls-tree", "-r", "--name-only", "HEAD"],
                         capture_output=True, text=True).stdout.split("\n")
    return [p for p in out if p]

def show(src, path):
    r = subprocess.run(["git", "--git-dir", MIRRORS[src], "show", f"HEAD:{path}"], capture_output=True)
    return r.stdout.decode("utf-8", "replace")

SKIP_ENGINES = {"sqlite": "sqlite", "duckdb": "duckdb", "datafusion": "datafusion"}

def parse(src, text):
    """Records of a file; None when the file uses harness features we do not emulate."""
    lines = text.split("\n")
    recs = []
    i = 0
    n = len(lines)
    conds = []
    while i < n:
        line = lines[i].rstrip("\r")
        s = line.strip()
        if not s or s.startswith("#"):
            i += 1
            continue
        toks = s.split()
        head = toks[0]
        if head in ("skipif", "onlyif"):
            conds.append((head, toks[1] if len(toks) > 1 else ""))
            i += 1
            continue
        if head in ("require", "load", "loop", "foreach", "concurrentloop", "concurrentforeach", "restart", "reconnect"):
            if src == "duckdb":
                return None
        if head == "halt":
            break
        if head in ("statement", "query"):
            start = i + 1
            # SQL until blank line or ----
            j = i + 1
            sql = []
            while j < n and lines[j].strip() != "" and lines[j].strip() != "----":
                sql.append(lines[j].rstrip("\r"))
                j += 1
            expected = []
            if j < n and lines[j].strip() == "----":
                j += 1
                while j < n and lines[j].rstrip("\r") != "":
                    expected.append(lines[j].rstrip("\r"))
                    j += 1
            keep = True
            for kind, eng in conds:
                # Spark is neither of the source engines: skipif X keeps the record; onlyif X drops it
                # unless X names no real engine restriction
                if kind == "onlyif":
                    keep = False
            conds = []
            i = j
            if not keep:
                continue
            sqltext = "\n".join(sql).strip()
            if not sqltext:
                continue
            if head == "statement":
                err = len(toks) > 1 and toks[1] == "error"
                recs.append({"kind": "statement", "sql": sqltext, "expect_error": err, "line": start})
            else:
                if len(toks) > 1 and toks[1] == "error":
                    recs.append({"kind": "query", "sql": sqltext, "expect_error": True, "line": start})
                    continue
                types = toks[1] if len(toks) > 1 else ""
                sort = "nosort"
                for t in toks[2:]:
                    if t in ("rowsort", "valuesort", "nosort"):
                        sort = t
                h = None
                if len(expected) == 1:
                    m = re.match(r"^(\d+) values hashing to ([0-9a-f]+)$", expected[0].strip())
                    if m:
                        h = (int(m.group(1)), m.group(2))
                if src == "duckdb" and any(t.startswith("label") or t.startswith("<") for t in toks[2:]):
                    pass
                recs.append({"kind": "query", "sql": sqltext, "types": types, "sort": sort,
                             "expected": expected, "hash": h, "expect_error": False, "line": start})
            continue
        # mode, hash-threshold, control lines...
        i += 1
    return recs

def pick(src, paths):
    if src == "sqlite":
        want = ["test/select1.test", "test/select2.test", "test/select3.test", "test/select4.test",
                "test/select5.test", "test/evidence/in1.test", "test/evidence/in2.test",
                "test/evidence/slt_lang_aggfunc.test", "test/evidence/slt_lang_createview.test"]
        for d in ["random/aggregates", "random/expr", "random/groupby", "random/select"]:
            fs = sorted(p for p in paths if p.startswith(f"test/{d}/") and p.endswith(".test"))
            want += fs[:2]
        return want
    if src == "duckdb":
        dirs = ["test/sql/aggregate/", "test/sql/window/", "test/sql/subquery/", "test/sql/join/",
                "test/sql/setops/", "test/sql/cte/", "test/sql/function/string/", "test/sql/function/numeric/",
                "test/sql/function/date/", "test/sql/order/", "test/sql/filter/", "test/sql/projection/",
                "test/sql/types/decimal/", "test/sql/types/interval/", "test/sql/cast/", "test/sql/select/",
                "test/sql/conjunction/", "test/sql/types/null/", "test/sql/limit/", "test/sql/topn/",
                "test/sql/function/operator/", "test/sql/function/timestamp/", "test/sql/pivot/"]
        fs = sorted(p for p in paths if p.endswith(".test") and any(p.startswith(d) for d in dirs))
        return fs
    if src == "datafusion":
        names = ["aggregate", "window", "subquery", "joins", "select", "expr", "math", "strings", "union",
                 "intersection", "group_by", "group", "cte", "predicates", "scalar", "limit", "order", "nullif",
                 "nvl", "nvl2", "coalesce", "decimal", "functions", "pg_compat_null", "pg_compat_simple",
                 "pg_compat_type_coercion", "pg_compat_types", "pg_compat_union", "pg_compat_window", "dates",
                 "timestamps", "interval", "regexp", "type_coercion", "distinct_on", "nvl", "misc", "cast",
                 "topk", "identifiers", "references", "same_column_name_cross_join", "wildcard", "projection", "join"]
        return [p for p in paths if p.startswith("datafusion/sqllogictest/test_files/") and
                p.rsplit("/", 1)[-1][:-4] in names]

def main():
    out = open("/work/survey/records.jsonl", "w")
    total = 0
    for src in ["sqlite", "duckdb", "datafusion"]:
        paths = ls(src)
        nfiles = 0
        nrec = 0
        for p in pick(src, paths):
            recs = parse(src, show(src, p))
            if not recs:
                continue
            q = sum(1 for r in recs if r["kind"] == "query")
            if q == 0:
                continue
            nfiles += 1
            nrec += q
            out.write(json.dumps({"src": src, "file": p, "records": recs}) + "\n")
        print(f"{src}: {nfiles} files, {nrec} query records", file=sys.stderr)
        total += nrec
    print(f"total {total}", file=sys.stderr)

if __name__ == "__main__":
    main()
