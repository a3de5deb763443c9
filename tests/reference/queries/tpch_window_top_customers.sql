-- dataset: tpch
-- description: the two customers with the largest order totals per nation: rank() over an aggregate, a filter on the rank (Window over Sort over Exchange hashpartitioning); expected result computed with DuckDB
-- order: defined
select n_name, c_custkey, total, rnk
from (
	select n_name, c_custkey, sum(o_totalprice) as total,
		rank() over (partition by n_name order by sum(o_totalprice) desc) as rnk
	from customer, orders, nation
	where c_custkey = o_custkey and c_nationkey = n_nationkey
	group by n_name, c_custkey
) ranked
where rnk <= 2
order by n_name, rnk, c_custkey
