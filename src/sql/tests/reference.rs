//! The reference queries (`tests/reference/queries/*.sql`, Spark's own captures): the parsed plan must read
//! like Spark's "== Parsed Logical Plan ==" without `#ids`, except where noted.

use super::{normalize, plan};

const SALES_ENTERPRISE_REVENUE: &str = include_str!("../../../tests/reference/queries/sales_enterprise_revenue.sql");

#[test]
fn sales_enterprise_revenue_matches_spark() {
    let expected = "\
'Sort ['revenue DESC NULLS LAST], true
+- 'Aggregate ['c.country], ['c.country, 'COUNT(1) AS orders#, 'SUM('o.amount) AS revenue#]
   +- 'Filter ((('o.order_date >= 2026-10-01) AND ('o.status = shipped)) AND ('c.segment = enterprise))
      +- 'Join Inner, ('o.customer_id = 'c.customer_id)
         :- 'SubqueryAlias o
         :  +- 'UnresolvedRelation [orders], [], false
         +- 'SubqueryAlias c
            +- 'UnresolvedRelation [customers], [], false";
    assert_eq!(plan(SALES_ENTERPRISE_REVENUE), normalize(expected));
}

const SALES_ENTERPRISE_REVENUE_HINT: &str = include_str!("../../../tests/reference/queries/sales_enterprise_revenue_hint.sql");

#[test]
fn sales_enterprise_revenue_hint_matches_spark() {
    let expected = "\
'Sort ['revenue DESC NULLS LAST], true
+- 'UnresolvedHint BROADCAST, ['c]
   +- 'Aggregate ['c.country], ['c.country, 'COUNT(1) AS orders#, 'SUM('o.amount) AS revenue#]
      +- 'Filter ((('o.order_date >= 2026-10-01) AND ('o.status = shipped)) AND ('c.segment = enterprise))
         +- 'Join Inner, ('o.customer_id = 'c.customer_id)
            :- 'SubqueryAlias o
            :  +- 'UnresolvedRelation [orders], [], false
            +- 'SubqueryAlias c
               +- 'UnresolvedRelation [customers], [], false";
    assert_eq!(plan(SALES_ENTERPRISE_REVENUE_HINT), normalize(expected));
}

const SALES_PARTITION_PRUNING: &str = include_str!("../../../tests/reference/queries/sales_partition_pruning.sql");

#[test]
fn sales_partition_pruning_parses() {
    // Spark: `'Filter 'between('order_date, 2026-10-01, 2026-10-03)`; kiln expands BETWEEN.
    let expected = "\
'Sort ['order_date ASC NULLS FIRST, 'status ASC NULLS FIRST], true
+- 'Aggregate ['order_date, 'status], ['order_date, 'status, 'COUNT(1) AS orders#, 'SUM('amount) AS revenue#]
   +- 'Filter (('order_date >= 2026-10-01) AND ('order_date <= 2026-10-03))
      +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(plan(SALES_PARTITION_PRUNING), normalize(expected));
}

const SALES_ROLLUP: &str = include_str!("../../../tests/reference/queries/sales_rollup.sql");

#[test]
fn sales_rollup_matches_spark() {
    let expected = "\
'Sort ['c.country ASC NULLS LAST, 'c.segment ASC NULLS LAST], true
+- 'Aggregate [rollup(Vector(0), Vector(1), 'c.country, 'c.segment)], ['c.country, 'c.segment, 'COUNT(1) AS orders#, 'SUM('o.amount) AS revenue#]
   +- 'Filter (('o.status = shipped) AND ('o.order_date >= 2026-10-01))
      +- 'Join Inner, ('o.customer_id = 'c.customer_id)
         :- 'SubqueryAlias o
         :  +- 'UnresolvedRelation [orders], [], false
         +- 'SubqueryAlias c
            +- 'UnresolvedRelation [customers], [], false";
    assert_eq!(plan(SALES_ROLLUP), normalize(expected));
}

#[test]
fn rollup_mixed_with_plain_grouping_is_the_cross_product() {
    // GROUP BY a, ROLLUP(b) groups by (a, b) and (a), as Spark's GroupingAnalytics expands it.
    let p = plan("SELECT a FROM t GROUP BY a, ROLLUP(b)");
    assert!(!p.contains("unsupported"), "{p}");
}

const SALES_TOP10_ORDERS: &str = include_str!("../../../tests/reference/queries/sales_top10_orders.sql");

#[test]
fn sales_top10_orders_matches_spark() {
    let expected = "\
'GlobalLimit 10
+- 'LocalLimit 10
   +- 'Sort ['amount DESC NULLS LAST, 'order_id ASC NULLS FIRST], true
      +- 'Project ['order_id, 'customer_id, 'amount, 'order_date]
         +- 'Filter ('status = shipped)
            +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(plan(SALES_TOP10_ORDERS), normalize(expected));
}

const SHOP_JOIN_PAID_BROADCAST: &str = include_str!("../../../tests/reference/queries/shop_join_paid_broadcast.sql");

#[test]
fn shop_join_paid_broadcast_matches_spark() {
    let expected = "\
'Sort ['o.order_id ASC NULLS FIRST], true
+- 'Project ['o.order_id, 'c.name, 'c.country, 'o.amount]
   +- 'Filter ('o.status = paid)
      +- 'Join Inner, ('o.customer_id = 'c.customer_id)
         :- 'SubqueryAlias o
         :  +- 'UnresolvedRelation [orders], [], false
         +- 'SubqueryAlias c
            +- 'UnresolvedRelation [customers], [], false";
    assert_eq!(plan(SHOP_JOIN_PAID_BROADCAST), normalize(expected));
}

const SHOP_JOIN_PAID_SORTMERGE: &str = include_str!("../../../tests/reference/queries/shop_join_paid_sortmerge.sql");

#[test]
fn shop_join_paid_sortmerge_matches_spark() {
    let expected = "\
'Sort ['o.order_id ASC NULLS FIRST], true
+- 'Project ['o.order_id, 'c.name, 'c.country, 'o.amount]
   +- 'Filter ('o.status = paid)
      +- 'Join Inner, ('o.customer_id = 'c.customer_id)
         :- 'SubqueryAlias o
         :  +- 'UnresolvedRelation [orders], [], false
         +- 'SubqueryAlias c
            +- 'UnresolvedRelation [customers], [], false";
    assert_eq!(plan(SHOP_JOIN_PAID_SORTMERGE), normalize(expected));
}

const SHOP_LEFT_JOIN_ON: &str = include_str!("../../../tests/reference/queries/shop_left_join_on.sql");

#[test]
fn shop_left_join_on_matches_spark() {
    let expected = "\
'Sort ['c.customer_id ASC NULLS FIRST, 'o.order_id ASC NULLS FIRST], true
+- 'Project ['c.customer_id, 'c.name, 'o.order_id, 'o.status]
   +- 'Join LeftOuter, (('o.customer_id = 'c.customer_id) AND ('o.status = paid))
      :- 'SubqueryAlias c
      :  +- 'UnresolvedRelation [customers], [], false
      +- 'SubqueryAlias o
         +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(plan(SHOP_LEFT_JOIN_ON), normalize(expected));
}

const SHOP_LEFT_JOIN_WHERE: &str = include_str!("../../../tests/reference/queries/shop_left_join_where.sql");

#[test]
fn shop_left_join_where_matches_spark() {
    let expected = "\
'Sort ['c.customer_id ASC NULLS FIRST, 'o.order_id ASC NULLS FIRST], true
+- 'Project ['c.customer_id, 'c.name, 'o.order_id, 'o.status]
   +- 'Filter ('o.status = paid)
      +- 'Join LeftOuter, ('o.customer_id = 'c.customer_id)
         :- 'SubqueryAlias c
         :  +- 'UnresolvedRelation [customers], [], false
         +- 'SubqueryAlias o
            +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(plan(SHOP_LEFT_JOIN_WHERE), normalize(expected));
}

const SHOP_LOWER_STATUS: &str = include_str!("../../../tests/reference/queries/shop_lower_status.sql");

#[test]
fn shop_lower_status_matches_spark() {
    let expected = "\
'Sort ['order_id ASC NULLS FIRST], true
+- 'Project ['order_id, 'status, 'amount]
   +- 'Filter ('lower('status) = paid)
      +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(plan(SHOP_LOWER_STATUS), normalize(expected));
}

const SHOP_PAID_REVENUE: &str = include_str!("../../../tests/reference/queries/shop_paid_revenue.sql");

#[test]
fn shop_paid_revenue_matches_spark() {
    let expected = "\
'Aggregate ['customer_id], ['customer_id, 'SUM('amount) AS revenue#]
+- 'Filter ('status = paid)
   +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(plan(SHOP_PAID_REVENUE), normalize(expected));
}

const SHOP_RAND_FILTER: &str = include_str!("../../../tests/reference/queries/shop_rand_filter.sql");

#[test]
fn shop_rand_filter_matches_spark() {
    let expected = "\
'Project ['order_id, 'status]
+- 'Filter (('status = paid) AND ('rand(42) < 0.5))
   +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(plan(SHOP_RAND_FILTER), normalize(expected));
}

const SHOP_TWO_FILTERS_CONSTANT: &str = include_str!("../../../tests/reference/queries/shop_two_filters_constant.sql");

#[test]
fn shop_two_filters_constant_matches_spark() {
    let expected = "\
'Sort ['order_id ASC NULLS FIRST], true
+- 'Project ['order_id, 'amount]
   +- 'Filter ('order_id > (100 + 3))
      +- 'SubqueryAlias paid
         +- 'Project [*]
            +- 'Filter ('status = paid)
               +- 'UnresolvedRelation [orders], [], false";
    assert_eq!(plan(SHOP_TWO_FILTERS_CONSTANT), normalize(expected));
}

const TPCH_Q01: &str = include_str!("../../../tests/reference/queries/tpch_q01.sql");

#[test]
fn tpch_q01_matches_spark() {
    let expected = "\
'Sort ['l_returnflag ASC NULLS FIRST, 'l_linestatus ASC NULLS FIRST], true
+- 'Aggregate ['l_returnflag, 'l_linestatus], ['l_returnflag, 'l_linestatus, 'sum('l_quantity) AS sum_qty#, 'sum('l_extendedprice) AS sum_base_price#, 'sum(('l_extendedprice * (1 - 'l_discount))) AS sum_disc_price#, 'sum((('l_extendedprice * (1 - 'l_discount)) * (1 + 'l_tax))) AS sum_charge#, 'avg('l_quantity) AS avg_qty#, 'avg('l_extendedprice) AS avg_price#, 'avg('l_discount) AS avg_disc#, 'count(1) AS count_order#]
   +- 'Filter ('l_shipdate <= (1998-12-01 - INTERVAL '90' DAY))
      +- 'UnresolvedRelation [lineitem], [], false";
    assert_eq!(plan(TPCH_Q01), normalize(expected));
}

const TPCH_Q03: &str = include_str!("../../../tests/reference/queries/tpch_q03.sql");

#[test]
fn tpch_q03_matches_spark() {
    let expected = "\
'GlobalLimit 10
+- 'LocalLimit 10
   +- 'Sort ['revenue DESC NULLS LAST, 'o_orderdate ASC NULLS FIRST], true
      +- 'Aggregate ['l_orderkey, 'o_orderdate, 'o_shippriority], ['l_orderkey, 'sum(('l_extendedprice * (1 - 'l_discount))) AS revenue#, 'o_orderdate, 'o_shippriority]
         +- 'Filter (((('c_mktsegment = BUILDING) AND ('c_custkey = 'o_custkey)) AND ('l_orderkey = 'o_orderkey)) AND (('o_orderdate < 1995-03-15) AND ('l_shipdate > 1995-03-15)))
            +- 'Join Inner
               :- 'Join Inner
               :  :- 'UnresolvedRelation [customer], [], false
               :  +- 'UnresolvedRelation [orders], [], false
               +- 'UnresolvedRelation [lineitem], [], false";
    assert_eq!(plan(TPCH_Q03), normalize(expected));
}

const TPCH_Q06: &str = include_str!("../../../tests/reference/queries/tpch_q06.sql");

#[test]
fn tpch_q06_parses() {
    // Spark keeps `'Project` until analysis, prints `'between(...)` and `(1994-01-01 + INTERVAL '1' YEAR)`;
    // kiln builds the global Aggregate, expands BETWEEN and folds the year interval into the date.
    let expected = "\
'Aggregate ['sum(('l_extendedprice * 'l_discount)) AS revenue#]
+- 'Filter ((('l_shipdate >= 1994-01-01) AND ('l_shipdate < 1995-01-01)) AND ((('l_discount >= (0.06 - 0.01)) AND ('l_discount <= (0.06 + 0.01))) AND ('l_quantity < 24)))
   +- 'UnresolvedRelation [lineitem], [], false";
    assert_eq!(plan(TPCH_Q06), normalize(expected));
}

/// TPC-H queries without subqueries: the reference files, and Q13 with its `AS c_orders (c_custkey, c_count)` column aliases.
const TPCH_PARSEABLE: &[(&str, &str)] = &[
    ("q5", include_str!("../../../tests/reference/queries/tpch_q05.sql")),
    ("q7", include_str!("../../../tests/reference/queries/tpch_q07.sql")),
    ("q8", include_str!("../../../tests/reference/queries/tpch_q08.sql")),
    ("q9", include_str!("../../../tests/reference/queries/tpch_q09.sql")),
    ("q10", include_str!("../../../tests/reference/queries/tpch_q10.sql")),
    ("q12", include_str!("../../../tests/reference/queries/tpch_q12.sql")),
    ("q13", "select c_count, count(*) as custdist
        from (select c_custkey, count(o_orderkey)
              from customer left outer join orders on c_custkey = o_custkey and o_comment not like '%special%requests%'
              group by c_custkey) as c_orders (c_custkey, c_count)
        group by c_count order by custdist desc, c_count desc"),
    ("q14", include_str!("../../../tests/reference/queries/tpch_q14.sql")),
    ("q19", include_str!("../../../tests/reference/queries/tpch_q19.sql")),
];

#[test]
fn tpch_queries_without_subqueries_parse() {
    for (name, sql) in TPCH_PARSEABLE {
        if let Err(e) = super::parse_query(sql) {
            panic!("TPC-H {name}: {e}");
        }
    }
}

#[test]
fn tpch_q13_column_aliases_rename_the_subquery_outputs() {
    let p = plan(TPCH_PARSEABLE[6].1);
    assert!(p.contains("'SubqueryAlias c_orders"), "{p}");
    assert!(p.contains("['c_custkey AS c_custkey#, 'count('o_orderkey) AS c_count#]"), "{p}");
    assert!(p.contains("NOT 'o_comment LIKE %special%requests%"), "{p}");
}

#[test]
fn tpch_intervals_of_months_fold_into_the_date() {
    let p = plan(TPCH_PARSEABLE[4].1);
    assert!(p.contains("('o_orderdate < 1994-01-01)"), "{p}");
    assert!(p.contains("GlobalLimit 20"), "{p}");
}

#[test]
fn tpch_subqueries_parse_into_subquery_expressions() {
    let q4 = "select o_orderpriority, count(*) as order_count from orders
        where o_orderdate >= date '1993-07-01' and o_orderdate < date '1993-07-01' + interval '3' month
          and exists (select * from lineitem where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
        group by o_orderpriority order by o_orderpriority";
    assert!(plan(q4).contains("exists#"), "{}", plan(q4));
    let q18 = "select c_name, sum(l_quantity) from customer, orders, lineitem
        where o_orderkey in (select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300)
          and c_custkey = o_custkey group by c_name limit 100";
    assert!(plan(q18).contains("'o_orderkey IN (list#"), "{}", plan(q18));
}
