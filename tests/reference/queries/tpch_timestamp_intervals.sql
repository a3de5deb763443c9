-- dataset: tpch
-- description: timestamps and intervals over order dates: a date cast to TIMESTAMP plus day-time and year-month intervals, date_trunc, hour, date_format, a timestamp literal compared; expected result computed with DuckDB
-- order: defined
select o_orderkey,
	cast(o_orderdate as timestamp) + interval '36' hour as due,
	o_orderdate + interval '1' month as next_month,
	date_trunc('MONTH', cast(o_orderdate as timestamp)) as month_start,
	hour(cast(o_orderdate as timestamp) + interval '90' minute) as h,
	date_format(cast(o_orderdate as timestamp) - interval '1' day, 'yyyy/MM/dd') as day_before
from orders
where o_custkey in (1, 2, 4)
	and cast(o_orderdate as timestamp) >= timestamp '1995-01-01 00:00:00'
order by o_orderkey
