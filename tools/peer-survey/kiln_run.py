#!/usr/bin/env python3
"""Run the records Spark passes (spark.jsonl from spark_run.py) through kiln and classify failures.

For every corpus file, writes /work/survey/kiln/NNN.slt: the statements Spark ran (`statement ok`)
and the queries whose Spark answer equals the corpus' expected answer, with Spark's type letters
and Spark's rows (cast to strings) as the expected result; so kiln passes a record only when it
answers exactly as Spark. Runs `kiln slt --mode compiled` (AQE on and off) on each file.
Output: /work/survey/kiln_results.json and the table of causes on stdout.
Usage: kiln_run.py [path/to/kiln]
"""
import json, os, re, subprocess, sys, collections

KILN = sys.argv[1] if len(sys.argv) > 1 else "/work/target-corpus/release/kiln"
OUT = "/work/survey/kiln"
os.makedirs(OUT, exist_ok=True)


def slt_rows(rows, sort):
    if sort == "rowsort":
        rows = sorted(rows)
        return [" ".join(r) for r in rows]
    if sort == "valuesort":
        return sorted(v for r in rows for v in r)
    return [" ".join(r) for r in rows]


def write_file(idx, f):
    """The .slt text and {line: record} for the Spark-passed queries."""
    lines = []
    qmap = {}
    for r in f["records"]:
        sp = r.get("spark")
        if not sp:
            continue
        if r["kind"] == "statement":
            if r["expect_error"] or not sp["ok"]:
                continue
            lines.append("statement ok")
            lines.extend(r["sql"].split("\n"))
            lines.append("")
            continue
        if not r["expect_error"] and sp.get("ok") and sp.get("types") == "":
            # a query record that changes data (DataFusion's `query I` INSERT): run as a statement
            lines.append("statement ok")
            lines.extend(r["sql"].split("\n"))
            lines.append("")
            continue
        if r["expect_error"] or not sp.get("match"):
            continue
        rows = sp["rows"]
        if any("\n" in v or v != v.strip() or "  " in v for row in rows for v in row):
            continue  # values the runner's whitespace normalization cannot express
        if not sp["types"]:
            continue
        sort = r["sort"] if r["sort"] in ("rowsort", "valuesort") else ""
        qline = len(lines) + 1
        lines.append(f"query {sp['types']} {sort}".rstrip())
        lines.extend(r["sql"].split("\n"))
        lines.append("----")
        lines.extend(slt_rows(rows, r["sort"]))
        lines.append("")
        qmap[qline] = r
    return "\n".join(lines) + "\n", qmap


def classify(msg):
    m = re.search(r"\[([A-Z][A-Z_0-9]+(?:\.[A-Z_0-9]+)?)\]", msg)
    if "query result mismatch" in msg or "[Diff]" in msg:
        return "wrong result (rows differ from Spark)"
    if "column type mismatch" in msg or "expected column type" in msg.lower():
        return "wrong result type letter"
    if "fell back to the interpreter" in msg:
        return "compiled stage fell back"
    if "panicked" in msg:
        return "panic"
    if "timeout" in msg:
        return "timeout"
    for pre in ("unsupported SQL: ", "[PARSE_SYNTAX_ERROR] ", "syntax error: ", "internal error: ", "arrow error: ", "invalid configuration: "):
        k = msg.find(pre)
        if k >= 0:
            t = msg[k + len(pre):]
            t = re.split(r" at Line: | \[SQL\]|\n", t)[0]
            t = re.sub(r"\b[\w.]+\(\.\.\.\)", "X(...)", t)
            t = re.sub(r"`[^`]*`", "`x`", t)
            return pre + re.sub(r"\s+", " ", t)[:80]
    if m:
        cls = m.group(1)
        tail = msg[m.end():].strip()
        # Not-yet errors name the construct: keep the first words
        if cls == "UNRESOLVED_ROUTINE":
            fn = re.search(r"routine `([^`]*)`", msg)
            return "UNRESOLVED_ROUTINE (function missing): " + (fn.group(1).lower() if fn else "?")
        if cls in ("UNSUPPORTED_FEATURE", "NOT_SUPPORTED", "PARSE_SYNTAX_ERROR", "INTERNAL_ERROR"):
            return cls + ": " + re.sub(r"\s+", " ", tail)[:70]
        return cls
    return re.sub(r"\s+", " ", msg)[:90]


def main():
    files = [json.loads(l) for l in open(os.environ.get("SURVEY_SPARK", "/work/survey/spark.jsonl"))]
    results = []
    totals = collections.Counter()
    causes = collections.Counter()
    examples = {}
    for idx, f in enumerate(files):
        text, qmap = write_file(idx, f)
        if not qmap:
            continue
        path = f"{OUT}/{idx:03d}.slt"
        open(path, "w").write(text)
        try:
            p = subprocess.run([KILN, "slt", "--mode", "compiled", path], capture_output=True, text=True, timeout=300)
            out = p.stdout + p.stderr
        except subprocess.TimeoutExpired:
            out = "TIMEOUT"
        failed = {}
        stmt_fail = []
        # failure blocks start with "FAILED: "
        for block in out.split("FAILED: ")[1:]:
            m = re.search(re.escape(path) + r":(\d+)", block)
            if not m:
                continue
            ln = int(m.group(1))
            # the runner reports the line of the query's first SQL line or the record line
            rec_line = ln if ln in qmap else (ln - 1 if ln - 1 in qmap else None)
            if rec_line is None:
                stmt_fail.append(classify(block))
                continue
            failed.setdefault(rec_line, block.strip())
        for ln, r in qmap.items():
            totals[f["src"]] += 1
            totals["all"] += 1
            if out == "TIMEOUT":
                failed[ln] = "timeout"
            if ln in failed:
                c = classify(failed[ln])
                if c in ("TABLE_OR_VIEW_NOT_FOUND", "UNRESOLVED_COLUMN") and stmt_fail:
                    c = "setup statement failed: " + stmt_fail[0]
                causes[c] += 1
                examples.setdefault(c, (f["file"], r["sql"][:160], failed[ln][:300]))
                results.append({"src": f["src"], "file": f["file"], "line": r["line"], "sql": r["sql"], "pass": False, "cause": c, "msg": failed[ln][:2000]})
            else:
                totals[f["src"] + "_pass"] += 1
                totals["all_pass"] += 1
                results.append({"src": f["src"], "file": f["file"], "line": r["line"], "sql": r["sql"], "pass": True})
        print(f"{idx+1}/{len(files)} {f['file']}: {len(qmap)} records, {len(failed)} failed", file=sys.stderr, flush=True)
    json.dump(results, open("/work/survey/kiln_results.json", "w"), indent=0)
    for s in ("sqlite", "duckdb", "datafusion", "all"):
        n = totals[s]
        if n:
            print(f"{s}: {totals[s + '_pass']}/{n} kiln-pass ({100.0 * totals[s + '_pass'] / n:.1f} %)")
    print()
    print("| cause | records | example |")
    print("|---|---|---|")
    for c, n in causes.most_common():
        ex = examples[c]
        print(f"| {c} | {n} | `{ex[1].replace(chr(10), ' ')[:120]}` ({ex[0]}) |")


if __name__ == "__main__":
    main()
