-- dataset: tpch
-- description: EXCEPT and INTERSECT ALL over order attributes (anti and semi joins on null-safe keys); expected result computed with DuckDB
-- order: defined
select o_orderpriority, o_orderstatus, 'except' as op from orders where o_orderdate >= date '1995-06-01'
except
select o_orderpriority, o_orderstatus, 'except' from orders where o_totalprice > 350000
union all
select l_returnflag, l_linestatus, 'intersect all' from (
	select l_returnflag, l_linestatus from lineitem where l_quantity = 1 and l_shipmode = 'AIR'
	intersect all
	select l_returnflag, l_linestatus from lineitem where l_discount = 0.10 and l_tax = 0.0
) t
order by 3, 1, 2
