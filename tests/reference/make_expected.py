"""Expected results for TPC-H queries that the Spark capture set lacks, computed with DuckDB.

    python3 tests/reference/make_expected.py      # needs the duckdb Python package

Writes queries/tpch_q05.{sql,result.csv} and queries/tpch_q10.{sql,result.csv} over
data/tpch/*.parquet, in the exact .result.csv format of the Spark captures (see README.md).
Decimals are printed with the scale Spark gives the column (sum of decimal(32,4) ->
decimal(38,4)), so DuckDB's values are re-scaled, never rounded. Before writing anything it
checks that the same code reproduces the Spark captures tpch_q03 and tpch_q06 byte for byte.
"""
import csv
import datetime
import decimal
import io
import os
import sys

import duckdb

HERE = os.path.dirname(os.path.abspath(__file__))
QDIR = os.path.join(HERE, "queries")
TPCH = os.path.join(HERE, "data", "tpch")
TABLES = ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"]

Q05 = """-- dataset: tpch
-- description: TPC-H Q5 local supplier volume (validation parameters); expected result computed with DuckDB
-- order: defined
select
	n_name,
	sum(l_extendedprice * (1 - l_discount)) as revenue
from
	customer,
	orders,
	lineitem,
	supplier,
	nation,
	region
where
	c_custkey = o_custkey
	and l_orderkey = o_orderkey
	and l_suppkey = s_suppkey
	and c_nationkey = s_nationkey
	and s_nationkey = n_nationkey
	and n_regionkey = r_regionkey
	and r_name = 'ASIA'
	and o_orderdate >= date '1994-01-01'
	and o_orderdate < date '1994-01-01' + interval '1' year
group by
	n_name
order by
	revenue desc
"""

Q10 = """-- dataset: tpch
-- description: TPC-H Q10 returned item reporting (validation parameters); expected result computed with DuckDB
-- order: defined
select
	c_custkey,
	c_name,
	sum(l_extendedprice * (1 - l_discount)) as revenue,
	c_acctbal,
	n_name,
	c_address,
	c_phone,
	c_comment
from
	customer,
	orders,
	lineitem,
	nation
where
	c_custkey = o_custkey
	and l_orderkey = o_orderkey
	and o_orderdate >= date '1993-10-01'
	and o_orderdate < date '1993-10-01' + interval '3' month
	and l_returnflag = 'R'
	and c_nationkey = n_nationkey
group by
	c_custkey,
	c_name,
	c_acctbal,
	c_phone,
	n_name,
	c_address,
	c_comment
order by
	revenue desc
limit 20
"""

# query -> (sql text, {column: Spark decimal scale}); the .sql is written only for new queries.
NEW = {
    "tpch_q05": (Q05, {"revenue": 4}),
    "tpch_q10": (Q10, {"revenue": 4, "c_acctbal": 2}),
}
CHECK = {"tpch_q03": {"revenue": 4}, "tpch_q06": {"revenue": 4}}


def fmt(v, scale):
    """A DuckDB value as Spark's CAST(x AS STRING) prints it (the captures' rules)."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, decimal.Decimal):
        if scale is None:
            raise TypeError("decimal column without a Spark scale")
        q = v.quantize(decimal.Decimal(1).scaleb(-scale))
        if q != v:
            raise ValueError(f"{v} does not fit scale {scale}")
        return format(q, "f")
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, str):
        return v
    raise TypeError(f"unsupported result type {type(v)}: {v!r}")


def run(con, sql, scales):
    body = "\n".join(l for l in sql.splitlines() if not l.startswith("--"))
    rel = con.sql(body)
    cols = rel.columns
    rows = rel.fetchall()
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    w.writerows([fmt(v, scales.get(c)) for c, v in zip(cols, r)] for r in rows)
    return out.getvalue(), cols, rows


def main():
    con = duckdb.connect()
    for t in TABLES:
        con.sql(f"create view {t} as select * from read_parquet('{os.path.join(TPCH, t + '.parquet')}')")
    for name, scales in CHECK.items():
        with open(os.path.join(QDIR, name + ".sql")) as f:
            sql = f.read()
        with open(os.path.join(QDIR, name + ".result.csv")) as f:
            want = f.read()
        got, _, _ = run(con, sql, scales)
        if got != want:
            sys.exit(f"{name}: DuckDB result differs from the Spark capture; not writing anything")
    for name, (sql, scales) in NEW.items():
        text, cols, rows = run(con, sql, scales)
        # "order: defined" needs distinct sort keys around the cut; check revenue has no ties.
        revenues = [r[cols.index("revenue")] for r in rows]
        if len(set(revenues)) != len(revenues):
            sys.exit(f"{name}: tied revenues, row order would be undefined")
        with open(os.path.join(QDIR, name + ".sql"), "w") as f:
            f.write(sql)
        with open(os.path.join(QDIR, name + ".result.csv"), "w", newline="") as f:
            f.write(text)
        print(f"{name}: {len(rows)} rows")


if __name__ == "__main__":
    main()
