-- dataset: tpch
-- description: running and moving sums of one customer's orders by date: the default RANGE frame and a ROWS frame, row_number and lag; expected result computed with DuckDB
-- order: defined
select o_orderkey, o_orderdate, o_totalprice,
	sum(o_totalprice) over (partition by o_custkey order by o_orderdate, o_orderkey) as running,
	sum(o_totalprice) over (partition by o_custkey order by o_orderdate, o_orderkey rows between 1 preceding and 1 following) as moving,
	row_number() over (partition by o_custkey order by o_orderdate, o_orderkey) as n,
	lag(o_orderdate) over (partition by o_custkey order by o_orderdate, o_orderkey) as previous
from orders
where o_custkey in (1, 2, 4)
order by o_custkey, o_orderdate, o_orderkey
