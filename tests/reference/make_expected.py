"""Expected results for TPC-H queries that the Spark capture set lacks, computed with DuckDB.

    python3 tests/reference/make_expected.py      # needs the duckdb Python package

Writes queries/tpch_qNN.{sql,result.csv} for TPC-H Q5, Q7, Q8, Q9, Q10, Q12, Q13, Q14, Q15
and Q19 over data/tpch/*.parquet, in the exact .result.csv format of the Spark captures (see
README.md). A decimal division (Q8, Q14) is computed here from DuckDB's exact numerator and
denominator the way Spark divides: to scale 38, then to the result scale, both HALF_UP.
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

HEADER = """-- dataset: tpch
-- description: TPC-H {q} {title} (validation parameters); expected result computed with DuckDB
-- order: defined
"""
Q07 = HEADER.format(q="Q7", title="volume shipping") + """select supp_nation, cust_nation, l_year, sum(volume) as revenue
from (
	select n1.n_name as supp_nation, n2.n_name as cust_nation, extract(year from l_shipdate) as l_year,
		l_extendedprice * (1 - l_discount) as volume
	from supplier, lineitem, orders, customer, nation n1, nation n2
	where s_suppkey = l_suppkey and o_orderkey = l_orderkey and c_custkey = o_custkey
		and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
		and ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY') or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE'))
		and l_shipdate between date '1995-01-01' and date '1996-12-31'
) as shipping
group by supp_nation, cust_nation, l_year
order by supp_nation, cust_nation, l_year
"""
Q08_FROM = """from (
	select extract(year from o_orderdate) as o_year, l_extendedprice * (1 - l_discount) as volume, n2.n_name as nation
	from part, supplier, lineitem, orders, customer, nation n1, nation n2, region
	where p_partkey = l_partkey and s_suppkey = l_suppkey and l_orderkey = o_orderkey and o_custkey = c_custkey
		and c_nationkey = n1.n_nationkey and n1.n_regionkey = r_regionkey and r_name = 'AMERICA'
		and s_nationkey = n2.n_nationkey and o_orderdate between date '1995-01-01' and date '1996-12-31'
		and p_type = 'ECONOMY ANODIZED STEEL'
) as all_nations
group by o_year
order by o_year
"""
Q08 = HEADER.format(q="Q8", title="national market share") + """select o_year, sum(case when nation = 'BRAZIL' then volume else 0 end) / sum(volume) as mkt_share
""" + Q08_FROM
Q08_PARTS = """select o_year, sum(case when nation = 'BRAZIL' then volume else 0 end) as num, sum(volume) as den
""" + Q08_FROM
Q09 = HEADER.format(q="Q9", title="product type profit measure") + """select nation, o_year, sum(amount) as sum_profit
from (
	select n_name as nation, extract(year from o_orderdate) as o_year,
		l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
	from part, supplier, lineitem, partsupp, orders, nation
	where s_suppkey = l_suppkey and ps_suppkey = l_suppkey and ps_partkey = l_partkey and p_partkey = l_partkey
		and o_orderkey = l_orderkey and s_nationkey = n_nationkey and p_name like '%green%'
) as profit
group by nation, o_year
order by nation, o_year desc
"""
Q12 = HEADER.format(q="Q12", title="shipping modes and order priority") + """select l_shipmode,
	sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count,
	sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end) as low_line_count
from orders, lineitem
where o_orderkey = l_orderkey and l_shipmode in ('MAIL', 'SHIP') and l_commitdate < l_receiptdate
	and l_shipdate < l_commitdate and l_receiptdate >= date '1994-01-01'
	and l_receiptdate < date '1994-01-01' + interval '1' year
group by l_shipmode
order by l_shipmode
"""
Q13 = HEADER.format(q="Q13", title="customer distribution") + """select c_count, count(*) as custdist
from (
	select c_custkey, count(o_orderkey) as c_count
	from customer left outer join orders on c_custkey = o_custkey and o_comment not like '%special%requests%'
	group by c_custkey
) as c_orders
group by c_count
order by custdist desc, c_count desc
"""
Q14_WHERE = """from lineitem, part
where l_partkey = p_partkey and l_shipdate >= date '1995-09-01' and l_shipdate < date '1995-09-01' + interval '1' month
"""
Q14 = HEADER.format(q="Q14", title="promotion effect") + """select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end)
	/ sum(l_extendedprice * (1 - l_discount)) as promo_revenue
""" + Q14_WHERE
Q14_PARTS = """select 100.00 * sum(case when p_type like 'PROMO%' then l_extendedprice * (1 - l_discount) else 0 end) as num,
	sum(l_extendedprice * (1 - l_discount)) as den
""" + Q14_WHERE
Q15 = HEADER.format(q="Q15", title="top supplier (the view as a WITH clause)") + """with revenue0 as (
	select l_suppkey as supplier_no, sum(l_extendedprice * (1 - l_discount)) as total_revenue
	from lineitem
	where l_shipdate >= date '1996-01-01' and l_shipdate < date '1996-01-01' + interval '3' month
	group by l_suppkey
)
select s_suppkey, s_name, s_address, s_phone, total_revenue
from supplier, revenue0
where s_suppkey = supplier_no and total_revenue = (select max(total_revenue) from revenue0)
order by s_suppkey
"""
Q19 = HEADER.format(q="Q19", title="discounted revenue") + """select sum(l_extendedprice * (1 - l_discount)) as revenue
from lineitem, part
where (p_partkey = l_partkey and p_brand = 'Brand#12' and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
		and l_quantity >= 1 and l_quantity <= 1 + 10 and p_size between 1 and 5
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
	or (p_partkey = l_partkey and p_brand = 'Brand#23' and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
		and l_quantity >= 10 and l_quantity <= 10 + 10 and p_size between 1 and 10
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
	or (p_partkey = l_partkey and p_brand = 'Brand#34' and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
		and l_quantity >= 20 and l_quantity <= 20 + 10 and p_size between 1 and 15
		and l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON')
"""


def spark_divide(num, den, scale):
    """Spark's decimal division: the quotient at scale 38, then at the result's scale, HALF_UP."""
    ctx = decimal.Context(prec=200, rounding=decimal.ROUND_HALF_UP)
    q = ctx.divide(num, den).quantize(decimal.Decimal(1).scaleb(-38), context=ctx)
    return q.quantize(decimal.Decimal(1).scaleb(-scale), context=ctx)


# query -> (sql text, {column: Spark decimal scale}, optional (DuckDB sql, row -> row) for
# results DuckDB cannot give exactly); the .sql is written only for new queries.
NEW = {
    "tpch_q05": (Q05, {"revenue": 4}, None),
    "tpch_q07": (Q07, {"revenue": 4}, None),
    "tpch_q08": (Q08, {"mkt_share": 6}, (Q08_PARTS, lambda r: (r[0], spark_divide(r[1], r[2], 6)))),
    "tpch_q09": (Q09, {"sum_profit": 4}, None),
    "tpch_q10": (Q10, {"revenue": 4, "c_acctbal": 2}, None),
    "tpch_q12": (Q12, {}, None),
    "tpch_q13": (Q13, {}, None),
    "tpch_q14": (Q14, {"promo_revenue": 6}, (Q14_PARTS, lambda r: (spark_divide(r[0], r[1], 6),))),
    "tpch_q15": (Q15, {"total_revenue": 4}, None),
    "tpch_q19": (Q19, {"revenue": 4}, None),
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


def run(con, sql, scales, computed=None):
    body = "\n".join(l for l in sql.splitlines() if not l.startswith("--"))
    rel = con.sql(body)
    cols = rel.columns
    rows = rel.fetchall()
    if computed is not None:
        # The columns are the query's; the rows come from DuckDB's exact parts.
        parts_sql, combine = computed
        rows = [combine(r) for r in con.sql(parts_sql).fetchall()]
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
    for name, (sql, scales, computed) in NEW.items():
        text, cols, rows = run(con, sql, scales, computed)
        # "order: defined" needs distinct sort keys around the cut; check revenue has no ties.
        if "revenue" in cols and name != "tpch_q07":
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
