//! Each rule family asserted on the optimized plan of a query over the seeds' shop tables
//! (ids normalized to `#n`), including the cases where a rewrite must not fire.

use crate::datasource::demo::{shop_customers, shop_orders};
use crate::Session;

fn shop() -> Session {
    let s = Session::new();
    s.register_batches("orders", vec![shop_orders()]).expect("orders");
    s.register_batches("customers", vec![shop_customers()]).expect("customers");
    s
}

/// The optimized plan with every `#123` replaced by `#n`.
fn optimized(sql: &str) -> String {
    let df = shop().sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    normalize(&df.optimized_plan().tree_string())
}

/// The index of the first line of `plan` that contains `needle` (the test fails naming the plan).
fn line_of(plan: &str, needle: &str) -> usize {
    plan.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("no line with {needle:?}:\n{plan}"))
}

fn normalize(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == '#' {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('n');
        }
    }
    out
}

#[test]
fn filters_combine_fold_and_move_below_project() {
    let plan = optimized("SELECT order_id, amount FROM (SELECT * FROM orders WHERE status = 'paid') t WHERE order_id > 100 + 3 ORDER BY order_id");
    assert_eq!(
        plan,
        "Sort [order_id#n ASC NULLS FIRST], true\n\
         +- Project [order_id#n, amount#n]\n\
         \x20  +- Filter ((isnotnull(status#n) AND isnotnull(order_id#n)) AND ((status#n = paid) AND (order_id#n > 103)))\n\
         \x20     +- Relation spark_catalog.default.orders[order_id#n,customer_id#n,status#n,amount#n,order_date#n] memory\n"
    );
}

#[test]
fn non_deterministic_predicate_stays_with_its_filter() {
    let plan = optimized("SELECT order_id FROM (SELECT order_id, status FROM orders WHERE rand(42) < 0.5) t WHERE status = 'paid'");
    // The rand() filter must not be combined below or reordered past: it stays the lower Filter.
    assert!(plan.contains("Filter (rand(42) < 0.5)"), "{plan}");
    let rand_line = plan.lines().position(|l| l.contains("rand(42)")).expect("rand filter kept");
    let paid_line = plan.lines().position(|l| l.contains("(status#n = paid)")).expect("paid filter kept");
    assert!(paid_line < rand_line, "deterministic filter must stay above the rand() filter:\n{plan}");
}

#[test]
fn left_join_where_on_right_side_becomes_inner() {
    let plan = optimized(
        "SELECT c.customer_id, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id WHERE o.status = 'paid'",
    );
    assert!(plan.contains("Join Inner, (customer_id#n = customer_id#n)"), "{plan}");
    assert!(plan.contains("Filter ((isnotnull(status#n) AND (status#n = paid)) AND isnotnull(customer_id#n))"), "{plan}");
}

#[test]
fn left_join_on_predicate_goes_to_the_right_side_only() {
    let plan = optimized(
        "SELECT c.customer_id, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id AND o.status = 'paid' AND c.country = 'IN'",
    );
    assert!(plan.contains("Join LeftOuter, ((customer_id#n = customer_id#n) AND (country#n = IN))"), "{plan}");
    let left = plan.lines().find(|l| l.contains("customers[")).expect("customers scan");
    assert!(!left.contains("Filter"), "the preserved side is not filtered:\n{plan}");
    assert!(plan.contains("(status#n = paid)"), "{plan}");
    assert!(!plan.contains("isnotnull(customer_id#n) AND (country"), "{plan}");
}

#[test]
fn nothing_crosses_a_full_outer_join() {
    let plan = optimized(
        "SELECT * FROM orders o FULL OUTER JOIN customers c ON o.customer_id = c.customer_id WHERE o.status = 'paid' OR c.country = 'IN'",
    );
    assert!(plan.starts_with("Filter ((status#n = paid) OR (country#n = IN))\n+- Join FullOuter"), "{plan}");
}

#[test]
fn aggregate_result_predicate_stays_above_grouping_predicate_moves_below() {
    let plan = optimized("SELECT * FROM (SELECT customer_id, sum(amount) AS s FROM orders GROUP BY customer_id) t WHERE s > 10 AND customer_id > 1");
    assert_eq!(
        plan,
        "Filter (isnotnull(s#n) AND (s#n > 10.00))\n\
         +- Aggregate [customer_id#n], [customer_id#n, sum(amount#n) AS s#n]\n\
         \x20  +- Project [customer_id#n, amount#n]\n\
         \x20     +- Filter (isnotnull(customer_id#n) AND (customer_id#n > 1))\n\
         \x20        +- Relation spark_catalog.default.orders[order_id#n,customer_id#n,status#n,amount#n,order_date#n] memory\n"
    );
}

#[test]
fn join_children_are_pruned_to_the_columns_used() {
    let plan = optimized("SELECT c.name, sum(o.amount) AS total FROM orders o JOIN customers c ON o.customer_id = c.customer_id GROUP BY c.name");
    assert!(plan.contains("+- Project [amount#n, name#n]"), "{plan}");
    assert!(plan.contains("Project [customer_id#n, amount#n]"), "{plan}");
    assert!(plan.contains("Project [customer_id#n, name#n]") || plan.contains("Filter isnotnull(customer_id#n)"), "{plan}");
}

#[test]
fn distinct_becomes_an_aggregate_and_aliases_disappear() {
    let plan = optimized("SELECT DISTINCT o.status FROM orders o");
    assert!(plan.starts_with("Aggregate [status#n], [status#n]"), "{plan}");
    assert!(!plan.contains("SubqueryAlias"), "{plan}");
}

#[test]
fn resolved_hints_fold_into_the_join_through_unary_operators() {
    // The hint on `c` sits over a Filter and a Project after pushdown: it still reaches the join.
    let plan = optimized(
        "SELECT /*+ BROADCAST(c), MERGE(o) */ o.order_id, c.name FROM orders o JOIN (SELECT customer_id, name FROM customers WHERE country = 'IN') c ON o.customer_id = c.customer_id",
    );
    assert!(plan.contains("+- Join Inner, (customer_id#n = customer_id#n), leftHint=(strategy=merge), rightHint=(strategy=broadcast)\n"), "{plan}");
    assert!(!plan.contains("ResolvedHint"), "{plan}");
}

#[test]
fn a_hint_without_a_join_is_dropped() {
    let plan = optimized("SELECT /*+ BROADCAST(orders) */ order_id FROM orders WHERE status = 'paid'");
    assert!(!plan.contains("Hint") && plan.starts_with("Project [order_id#n]"), "{plan}");
    // The analyzed plan keeps it, over the aliased relation.
    let df = shop().sql("SELECT /*+ BROADCAST(orders) */ order_id FROM orders").expect("plans");
    let analyzed = normalize(&df.analyzed_plan().tree_string());
    assert!(analyzed.contains("+- ResolvedHint (strategy=broadcast)\n   +- SubqueryAlias spark_catalog.default.orders\n"), "{analyzed}");
}

#[test]
fn every_rule_is_idempotent_on_its_own_output() {
    use crate::optimizer::default_batches;
    let session = shop();
    let config = session.config().expect("config");
    let queries = [
        "SELECT order_id, amount FROM orders WHERE status = 'paid' AND order_id > 100 + 3",
        "SELECT c.country, count(*) AS n, sum(o.amount) AS s FROM orders o JOIN customers c ON o.customer_id = c.customer_id WHERE o.status = 'paid' GROUP BY c.country ORDER BY s DESC",
        "SELECT c.name, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id AND o.status = 'paid'",
        "SELECT DISTINCT status FROM orders WHERE amount IS NOT NULL",
        "SELECT /*+ SHUFFLE_HASH(o) */ o.order_id FROM orders o JOIN customers c ON o.customer_id = c.customer_id",
    ];
    for q in queries {
        let df = session.sql(q).expect("plans");
        let plan = df.optimized_plan().clone();
        for batch in default_batches(&config) {
            for rule in &batch.rules {
                let once = rule.apply(&plan).expect("rule runs");
                let twice = rule.apply(&once).expect("rule runs");
                assert_eq!(once.tree_string(), twice.tree_string(), "{} is not idempotent on\n{}", rule.name(), plan.tree_string());
            }
        }
    }
}

#[test]
fn excluded_rules_do_not_run() {
    let s = shop();
    s.set_conf("spark.sql.optimizer.excludedRules", "InferFiltersFromConstraints").expect("set");
    let df = s.sql("SELECT order_id FROM orders WHERE status = 'paid'").expect("plans");
    assert!(!df.optimized_plan().tree_string().contains("isnotnull"), "{}", df.optimized_plan().tree_string());
}

/// The shop tables plus `t (a INT NOT NULL, b INT)`.
fn with_t() -> Session {
    let s = shop();
    s.sql("CREATE TABLE t (a INT NOT NULL, b INT)").expect("create");
    s.sql("INSERT INTO t VALUES (1, 2), (3, NULL)").expect("insert");
    s
}

fn optimized_in(s: &Session, sql: &str) -> String {
    normalize(&s.sql(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).optimized_plan().tree_string())
}

fn rows(s: &Session, sql: &str) -> usize {
    s.sql(sql).and_then(|df| df.collect()).unwrap_or_else(|e| panic!("{sql}: {e}")).iter().map(|b| b.num_rows()).sum()
}

const ORDERS: &str = "Relation spark_catalog.default.orders[order_id#n,customer_id#n,status#n,amount#n,order_date#n] memory";
const CUSTOMERS: &str = "Relation spark_catalog.default.customers[customer_id#n,name#n,country#n] memory";

// --- NullPropagation and PruneFilters ---

#[test]
fn null_operand_makes_the_filter_null_and_the_relation_empty() {
    assert_eq!(optimized("SELECT order_id FROM orders WHERE amount + NULL > 1"), "LocalRelation <empty>, [order_id#n]\n");
}

#[test]
fn is_not_null_of_a_non_nullable_column_folds_away() {
    let s = with_t();
    assert_eq!(
        optimized_in(&s, "SELECT a FROM t WHERE a IS NOT NULL AND b > 1"),
        "Project [a#n]\n+- Filter (isnotnull(b#n) AND (b#n > 1))\n   +- Relation spark_catalog.default.t[a#n,b#n] memory\n"
    );
}

#[test]
fn coalesce_drops_null_literals_and_stops_at_the_first_non_nullable_argument() {
    let s = with_t();
    assert!(optimized_in(&s, "SELECT coalesce(NULL, b, a, 5) AS c FROM t").starts_with("Project [coalesce(b#n, a#n) AS c#n]"));
}

#[test]
fn where_null_returns_no_rows() {
    assert_eq!(optimized("SELECT order_id FROM orders WHERE NULL"), "LocalRelation <empty>, [order_id#n]\n");
    assert_eq!(rows(&shop(), "SELECT order_id FROM orders WHERE NULL"), 0);
}

// --- BooleanSimplification ---

#[test]
fn common_conjunct_is_factored_out_of_a_disjunction() {
    let plan = optimized("SELECT order_id FROM orders WHERE (status = 'paid' AND amount > 10) OR (status = 'paid' AND order_id > 103)");
    assert!(
        plan.contains("Filter (isnotnull(status#n) AND ((status#n = paid) AND ((cast(amount#n as decimal(12,2)) > 10.00) OR (order_id#n > 103))))"),
        "{plan}"
    );
}

#[test]
fn factoring_turns_an_or_of_joins_into_an_equi_join() {
    let plan = optimized(
        "SELECT o.order_id FROM orders o, customers c WHERE (o.customer_id = c.customer_id AND c.country = 'IN') OR (o.customer_id = c.customer_id AND o.amount > 50)",
    );
    assert!(plan.contains("Join Inner, ((customer_id#n = customer_id#n) AND ((country#n = IN) OR"), "{plan}");
}

#[test]
fn a_disjunction_with_rand_is_not_factored() {
    let plan = optimized("SELECT order_id FROM orders WHERE (status = 'paid' AND rand(1) < 0.5) OR (status = 'paid' AND order_id > 103)");
    assert!(plan.contains("((status#n = paid) AND (rand(1) < 0.5)) OR ((status#n = paid) AND (order_id#n > 103))"), "{plan}");
}

// --- OptimizeIn ---

#[test]
fn long_in_list_becomes_inset_with_values_sorted_as_strings() {
    let sql = "SELECT order_id FROM orders WHERE order_id IN (1,2,3,4,5,6,7,8,9,10,101)";
    let plan = optimized(sql);
    assert!(plan.contains("Filter (isnotnull(order_id#n) AND order_id#n INSET 1, 10, 101, 2, 3, 4, 5, 6, 7, 8, 9)"), "{plan}");
    assert_eq!(rows(&shop(), sql), 1);
    assert_eq!(rows(&shop(), "SELECT order_id FROM orders WHERE order_id NOT IN (1,2,3,4,5,6,7,8,9,10,101)"), 5);
}

#[test]
fn in_list_at_the_threshold_stays_and_duplicates_go() {
    assert!(optimized("SELECT order_id FROM orders WHERE order_id IN (1,2,3,4,5,6,7,8,9,10)").contains("IN (1,2,3,4,5,6,7,8,9,10)"));
    assert!(optimized("SELECT order_id FROM orders WHERE order_id IN (101, 101)").contains("(order_id#n = 101)"));
    let s = shop();
    s.set_conf("spark.sql.optimizer.inSetConversionThreshold", "2").expect("set");
    assert!(optimized_in(&s, "SELECT order_id FROM orders WHERE order_id IN (101, 102, 103)").contains("INSET 101, 102, 103"));
}

// --- InferFiltersFromConstraints ---

#[test]
fn a_filter_on_one_join_key_is_inferred_for_the_other_side() {
    let plan = optimized("SELECT o.order_id, c.name FROM orders o JOIN customers c ON o.customer_id = c.customer_id WHERE o.customer_id > 2");
    assert_eq!(
        plan,
        format!(
            "Project [order_id#n, name#n]\n\
             +- Join Inner, (customer_id#n = customer_id#n)\n\
             \x20  :- Project [order_id#n, customer_id#n]\n\
             \x20  :  +- Filter (isnotnull(customer_id#n) AND (customer_id#n > 2))\n\
             \x20  :     +- {ORDERS}\n\
             \x20  +- Project [customer_id#n, name#n]\n\
             \x20     +- Filter (isnotnull(customer_id#n) AND (customer_id#n > 2))\n\
             \x20        +- {CUSTOMERS}\n"
        )
    );
}

#[test]
fn nothing_is_inferred_into_the_preserved_side_of_an_outer_join() {
    let plan = optimized("SELECT c.name FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id AND o.customer_id > 2");
    let customers = plan.lines().position(|l| l.contains("customers[")).expect("scan");
    assert!(!plan.lines().nth(customers - 1).is_some_and(|l| l.contains("Filter")), "{plan}");
    assert!(plan.contains("Filter (isnotnull(customer_id#n) AND (customer_id#n > 2))"), "{plan}");
}

// --- PropagateEmptyRelation and ConvertToLocalRelation ---

#[test]
fn an_empty_input_empties_the_join_and_the_grouped_aggregate() {
    let sql = "SELECT c.name, count(*) AS n FROM customers c JOIN (SELECT * FROM orders WHERE 1 = 0) o ON o.customer_id = c.customer_id GROUP BY c.name";
    assert_eq!(optimized(sql), "LocalRelation <empty>, [name#n, n#nL]\n");
}

#[test]
fn a_global_aggregate_over_nothing_still_returns_its_row() {
    let sql = "SELECT count(*) AS n FROM (SELECT * FROM orders WHERE 1 = 0) o";
    assert_eq!(optimized(sql), "Aggregate [count(1) AS n#nL]\n+- LocalRelation <empty>, []\n");
    assert_eq!(rows(&shop(), sql), 1);
}

#[test]
fn the_preserved_side_of_an_outer_join_with_an_empty_side_is_null_extended() {
    let sql = "SELECT c.name, o.order_id FROM customers c LEFT JOIN (SELECT * FROM orders WHERE 1 = 0) o ON o.customer_id = c.customer_id";
    let plan = optimized(sql);
    assert!(plan.contains("null AS order_id#n") && !plan.contains("Join"), "{plan}");
    assert_eq!(rows(&shop(), sql), 5);
}

#[test]
fn a_projection_of_values_is_evaluated_while_planning() {
    assert_eq!(optimized("SELECT col1 + 1 AS x FROM VALUES (1), (2)"), "LocalRelation [x#n]\n");
    let err = shop().sql("SELECT col1 / 0 AS x FROM VALUES (1)").expect("plans: the error belongs to execution");
    assert!(err.optimized_plan().tree_string().starts_with("Project"), "a failing projection is left for the executor");
    assert!(err.collect().is_err());
}

// --- LimitPushDown ---

#[test]
fn limit_goes_into_the_preserved_side_of_a_left_join_through_a_project() {
    let plan = optimized("SELECT c.name, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id LIMIT 2");
    assert!(plan.contains(":  +- LocalLimit 2\n         :     +- Relation spark_catalog.default.customers"), "{plan}");
    assert_eq!(plan.matches("LocalLimit 2").count(), 2, "not into the null-supplying side:\n{plan}");
}

#[test]
fn limit_goes_into_every_input_of_a_union() {
    let sql = "SELECT order_id FROM orders UNION ALL SELECT customer_id FROM customers LIMIT 3";
    let plan = optimized(sql);
    assert_eq!(plan.matches("LocalLimit 3").count(), 3, "{plan}");
    assert_eq!(rows(&shop(), sql), 3);
}

#[test]
fn limit_goes_into_a_recursive_cte_loop_through_its_project() {
    // Without it the loop never ends (RECURSION_LEVEL_LIMIT_EXCEEDED); Spark stops at 5 rows.
    let sql = "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT n FROM t LIMIT 5";
    let plan = optimized(sql);
    let lines: Vec<&str> = plan.lines().collect();
    let at = line_of(&plan, "UnionLoop ");
    assert!(lines[at].ends_with(", 5") && lines[at - 2].ends_with("LocalLimit 5"), "{plan}");
    assert_eq!(rows(&shop(), sql), 5);
    // A sort between them keeps the loop unlimited (the first rows are not the smallest).
    let sorted = optimized("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 9) SELECT n FROM t ORDER BY n LIMIT 5");
    assert!(!sorted.lines().nth(line_of(&sorted, "UnionLoop ")).unwrap_or_default().contains(','), "{sorted}");
}

#[test]
fn limit_stays_above_an_inner_join_with_a_condition() {
    let plan = optimized("SELECT c.name, o.order_id FROM customers c JOIN orders o ON o.customer_id = c.customer_id LIMIT 2");
    assert_eq!(plan.matches("LocalLimit").count(), 1, "{plan}");
}

// --- RemoveRedundantAliases ---

#[test]
fn an_alias_to_the_same_name_below_a_join_is_dropped() {
    let plan = optimized(
        "SELECT c.name FROM (SELECT customer_id AS customer_id, amount FROM orders) x JOIN customers c ON x.customer_id = c.customer_id",
    );
    assert!(!plan.contains(" AS customer_id"), "{plan}");
}

#[test]
fn an_alias_that_names_the_query_output_stays() {
    let plan = optimized("SELECT x.status FROM (SELECT status AS status FROM orders) x JOIN customers c ON 1 = 1");
    assert!(plan.contains("status#n AS status#n") || plan.starts_with("Project [status#n]"), "{plan}");
}

// --- EliminateSorts ---

#[test]
fn a_sort_under_an_aggregate_is_removed() {
    let plan = optimized("SELECT status, count(*) AS n FROM (SELECT * FROM orders ORDER BY amount) t GROUP BY status");
    assert!(!plan.contains("Sort"), "{plan}");
}

#[test]
fn a_sort_under_a_sort_is_removed_and_constant_keys_go() {
    let plan = optimized("SELECT order_id FROM (SELECT * FROM orders ORDER BY amount) t ORDER BY upper('a'), order_id");
    assert_eq!(plan.matches("Sort").count(), 1, "{plan}");
    assert!(plan.starts_with("Sort [order_id#n ASC NULLS FIRST], true"), "{plan}");
}

#[test]
fn a_sort_under_a_limit_stays() {
    let plan = optimized("SELECT status, count(*) AS n FROM (SELECT * FROM orders ORDER BY amount LIMIT 3) t GROUP BY status");
    assert!(plan.contains("Sort [amount#n ASC NULLS FIRST], true"), "{plan}");
}

// --- Union ---

#[test]
fn filter_and_projection_go_into_every_input_of_a_union() {
    let sql = "SELECT * FROM (SELECT order_id AS id, status FROM orders UNION ALL SELECT customer_id, name FROM customers) u WHERE id > 2";
    assert_eq!(
        optimized(sql),
        format!(
            "Union false, false\n\
             :- Project [order_id#n AS id#n, status#n]\n\
             :  +- Filter (isnotnull(order_id#n) AND (order_id#n > 2))\n\
             :     +- {ORDERS}\n\
             +- Project [customer_id#n, name#n]\n\
             \x20  +- Filter (isnotnull(customer_id#n) AND (customer_id#n > 2))\n\
             \x20     +- {CUSTOMERS}\n"
        )
    );
    assert_eq!(rows(&shop(), sql), 9);
}

#[test]
fn union_distinct_is_an_aggregate_over_the_union_and_types_widen() {
    let s = shop();
    assert!(optimized_in(&s, "SELECT status FROM orders UNION SELECT country FROM customers").starts_with("Aggregate [status#n], [status#n]\n+- Union false, false"));
    assert_eq!(rows(&s, "SELECT status FROM orders UNION SELECT country FROM customers"), 7);
    let df = s.sql("SELECT order_id FROM orders UNION ALL SELECT CAST(customer_id AS BIGINT) FROM customers").expect("plans");
    assert_eq!(df.schema().field(0).data_type(), &arrow::datatypes::DataType::Int64);
    assert!(df.analyzed_plan().tree_string().contains("cast(order_id#"), "{}", df.analyzed_plan().tree_string());
    assert_eq!(df.collect().expect("runs").iter().map(|b| b.num_rows()).sum::<usize>(), 11);
}

#[test]
fn union_of_different_widths_or_incompatible_types_is_an_analysis_error() {
    let e = shop().sql("SELECT order_id, status FROM orders UNION ALL SELECT customer_id FROM customers").err().expect("error");
    assert!(e.to_string().contains("NUM_COLUMNS_MISMATCH"), "{e}");
    let e = shop().sql("SELECT order_date FROM orders UNION ALL SELECT customer_id FROM customers").err().expect("error");
    assert!(e.to_string().contains("INCOMPATIBLE_COLUMN_TYPE"), "{e}");
}

#[test]
fn nested_unions_are_flattened() {
    let plan = optimized("SELECT order_id FROM orders UNION ALL SELECT customer_id FROM customers UNION ALL SELECT customer_id FROM orders");
    assert_eq!(plan.matches("Union").count(), 1, "{plan}");
    assert_eq!(plan.matches("Relation").count(), 3, "{plan}");
}

// --- Refusals ---

#[test]
fn filter_not_pushed_below_limit() {
    let plan = optimized("SELECT * FROM (SELECT * FROM orders LIMIT 3) t WHERE status = 'paid'");
    assert!(plan.starts_with("Filter (isnotnull(status#n) AND (status#n = paid))\n+- GlobalLimit 3\n   +- LocalLimit 3\n"), "{plan}");
}

// --- RewritePredicateSubquery and RewriteCorrelatedScalarSubquery ---

#[test]
fn in_subquery_becomes_a_left_semi_join() {
    let sql = "SELECT name FROM customers c WHERE customer_id IN (SELECT customer_id FROM orders WHERE status = 'paid')";
    let plan = optimized(sql);
    assert!(plan.starts_with("Project [name#n]\n+- Join LeftSemi, (customer_id#n = customer_id#n)\n"), "{plan}");
    assert_eq!(rows(&shop(), sql), 3);
}

#[test]
fn correlated_exists_and_not_exists_become_semi_and_anti_joins() {
    let exists = "SELECT name FROM customers c WHERE EXISTS (SELECT * FROM orders o WHERE o.customer_id = c.customer_id AND o.amount > 50)";
    let plan = optimized(exists);
    assert!(plan.contains("Join LeftSemi, (customer_id#n = customer_id#n)"), "{plan}");
    assert!(!plan.contains("outer("), "{plan}");
    assert_eq!(rows(&shop(), exists), 2);
    let not_exists = "SELECT name FROM customers c WHERE NOT EXISTS (SELECT * FROM orders o WHERE o.customer_id = c.customer_id)";
    assert!(optimized(not_exists).contains("Join LeftAnti, (customer_id#n = customer_id#n)"));
    assert_eq!(rows(&shop(), not_exists), 1);
}

#[test]
fn not_in_is_a_null_aware_anti_join_unless_both_sides_are_non_nullable() {
    let sql = "SELECT name FROM customers c WHERE customer_id NOT IN (SELECT customer_id FROM orders WHERE status = 'paid')";
    assert!(optimized(sql).contains("Join LeftAnti, ((customer_id#n = customer_id#n) OR isnull((customer_id#n = customer_id#n)))"));
    assert_eq!(rows(&shop(), sql), 2);
    // A NULL in the subquery makes NOT IN unknown for every row.
    assert_eq!(rows(&shop(), "SELECT name FROM customers WHERE customer_id NOT IN (SELECT CAST(NULL AS INT))"), 0);
    let s = with_t();
    assert!(optimized_in(&s, "SELECT a FROM t WHERE a NOT IN (SELECT a FROM t WHERE b IS NULL)").starts_with("Join LeftAnti, (a#n = a#n)\n"));
    assert_eq!(rows(&s, "SELECT a FROM t WHERE a NOT IN (SELECT a FROM t WHERE b IS NULL)"), 1);
}

#[test]
fn uncorrelated_scalar_subquery_stays_an_expression_over_its_optimized_plan() {
    let sql = "SELECT order_id FROM orders WHERE amount > (SELECT avg(amount) FROM orders WHERE status = 'paid')";
    let plan = optimized(sql);
    // Spark's optimized plan: no join; the subquery's plan (optimized too) hangs below the Filter.
    assert!(!plan.contains("Join"), "{plan}");
    assert!(plan.contains("+- Filter (isnotnull(amount#n) AND (cast(amount#n as decimal(14,6)) > scalar-subquery#n []))
"), "{plan}");
    assert!(plan.contains(":  +- Aggregate [avg(amount#n) AS avg(amount)#n]
"), "{plan}");
    assert!(plan.contains(":        +- Filter (isnotnull(status#n) AND (status#n = paid))
"), "{plan}");
    assert_eq!(rows(&shop(), sql), 2);
    // Nested and several: each stays an expression; a correlated one next to them is a join.
    let nested = "SELECT order_id, (SELECT max(amount) FROM orders WHERE amount < (SELECT max(amount) FROM orders)) AS m, \
                  (SELECT count(*) FROM orders i WHERE i.customer_id = o.customer_id) AS c FROM orders o";
    let plan = optimized(nested);
    assert_eq!(plan.matches("scalar-subquery#").count(), 2, "{plan}");
    assert_eq!(plan.matches("Join LeftOuter").count(), 1, "{plan}");
    assert_eq!(rows(&shop(), nested), 6);
}

#[test]
fn correlated_scalar_subquery_is_aggregated_by_its_key_and_joined() {
    let sql = "SELECT order_id FROM orders o WHERE amount >= (SELECT max(amount) FROM orders i WHERE i.customer_id = o.customer_id)";
    let plan = optimized(sql);
    assert!(plan.contains("Join Inner, ((customer_id#n = customer_id#n) AND (amount#n >= max(amount)#n))"), "{plan}");
    assert!(plan.contains("Aggregate [customer_id#n], [max(amount#n) AS max(amount)#n, customer_id#n]"), "{plan}");
    assert_eq!(rows(&shop(), sql), 4);
    let select = "SELECT order_id, (SELECT max(name) FROM customers c WHERE c.customer_id = o.customer_id) AS n FROM orders o";
    assert!(optimized(select).contains("Join LeftOuter, (customer_id#n = customer_id#n)"));
    assert_eq!(rows(&shop(), select), 6);
    let having = "SELECT customer_id, sum(amount) AS s FROM orders GROUP BY customer_id HAVING sum(amount) > (SELECT avg(amount) FROM orders)";
    assert_eq!(rows(&shop(), having), 3);
}

#[test]
fn non_equality_correlation_is_a_domain_join_grouped_by_the_outer_values() {
    let sql = "SELECT order_id, (SELECT count(*) FROM orders i WHERE i.amount < o.amount) AS n FROM orders o";
    let plan = optimized(sql);
    // The distinct outer values join the subquery's input on the predicate; the aggregate
    // groups by them; the outer rows join the result null-safely.
    assert!(plan.contains("Join LeftOuter, (amount#n <=> amount#n)"), "{plan}");
    assert!(plan.contains("Join Inner, (amount#n < amount#n)"), "{plan}");
    assert!(plan.contains("Aggregate [amount#n], [count(1) AS count(1)#nL, amount#n, true AS alwaysTrue#n]"), "{plan}");
    assert!(plan.contains("Aggregate [amount#n], [amount#n]"), "{plan}");
    assert!(!plan.contains("outer("), "{plan}");
    assert_eq!(rows(&shop(), sql), 6);
    let exists = "SELECT name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id > c.customer_id)";
    assert!(optimized(exists).contains("Join LeftSemi, (customer_id#n > customer_id#n)"), "{}", optimized(exists));
}

#[test]
fn correlated_count_is_zero_not_null_without_a_match() {
    let sql = "SELECT (SELECT count(*) + 1 FROM orders o WHERE o.customer_id = c.customer_id) AS n FROM customers c";
    let plan = optimized(sql);
    assert!(plan.contains("CASE WHEN isnull(alwaysTrue#n) THEN 1 ELSE (count(1) + 1)#nL END"), "{plan}");
    // The one customer without orders counts 0 + 1.
    assert_eq!(rows(&shop(), &format!("SELECT n FROM ({sql}) WHERE n = 1")), 1);
    // A subquery whose value over no rows is NULL needs no CASE.
    assert!(!optimized("SELECT (SELECT max(amount) FROM orders o WHERE o.customer_id = c.customer_id) FROM customers c").contains("alwaysTrue"));
}

#[test]
fn a_subquery_under_or_is_a_marker_column_of_an_outer_join() {
    let sql = "SELECT name FROM customers c WHERE country = 'IN' OR EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id AND o.amount > 50)";
    let plan = optimized(sql);
    // One marker per distinct outer value with a match: the domain semi-joined with the
    // subquery; the Filter reads whether the marker is there.
    assert!(plan.contains("Filter ((country#n = IN) OR isnotnull(exists#n))"), "{plan}");
    assert!(plan.contains("Join LeftOuter, (customer_id#n <=> customer_id#n)"), "{plan}");
    assert!(plan.contains("Project [customer_id#n, true AS exists#n]\n"), "{plan}");
    assert!(plan.contains("Join LeftSemi, (customer_id#n = customer_id#n)"), "{plan}");
    assert_eq!(rows(&shop(), sql), rows(&shop(), "SELECT name FROM customers c WHERE country = 'IN' UNION ALL SELECT name FROM customers c WHERE coalesce(country, '') <> 'IN' AND EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.customer_id AND o.amount > 50)"));
    // IN under NOT is three-valued: a second lookup finds the NULL comparisons.
    let not_in = "SELECT name FROM customers c WHERE NOT (customer_id IN (SELECT customer_id FROM orders)) OR country = 'IN'";
    let plan = optimized(not_in);
    assert!(plan.contains("CASE WHEN isnotnull(exists#n) THEN true WHEN isnotnull(exists#n) THEN null ELSE false END"), "{plan}");
}

#[test]
fn a_scalar_subquery_without_an_aggregate_checks_its_row_count_at_run_time() {
    let run = |sql: &str| shop().sql(sql).and_then(|df| df.collect()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(run("SELECT order_id FROM orders WHERE amount > (SELECT amount FROM orders)").contains("SCALAR_SUBQUERY_TOO_MANY_ROWS"));
    let unique = "SELECT order_id, (SELECT name FROM customers c WHERE c.customer_id = o.customer_id) FROM orders o";
    assert_eq!(rows(&shop(), unique), 6);
    // Correlated: single_value per distinct outer value (the domain), so inner groups no outer
    // row reads may hold several rows.
    assert!(optimized(unique).contains("single_value(name#n)"), "{}", optimized(unique));
    assert!(run("SELECT name, (SELECT amount FROM orders o WHERE o.customer_id = c.customer_id) FROM customers c").contains("SCALAR_SUBQUERY_TOO_MANY_ROWS"));
}

#[test]
fn subqueries_kiln_cannot_plan_are_clear_errors() {
    let err = |sql: &str| shop().sql(sql).err().map(|e| e.to_string()).unwrap_or_else(|| panic!("{sql} should fail"));
    assert!(err("SELECT count(*) FROM orders o GROUP BY (SELECT max(name) FROM customers c WHERE c.customer_id = o.customer_id)").contains("GROUP BY"));
    assert!(err("SELECT * FROM orders o JOIN customers c ON EXISTS (SELECT 1 FROM orders i WHERE i.customer_id = c.customer_id + o.customer_id)")
        .contains("UNSUPPORTED_CORRELATED_EXPRESSION_IN_JOIN_CONDITION"));
}

#[test]
fn explain_extended_of_two_filters_shows_them_folded_and_combined() {
    let df = shop()
        .sql("SELECT order_id, amount FROM (SELECT * FROM orders WHERE status = 'paid') AS paid WHERE order_id > 100 + 3 ORDER BY order_id")
        .expect("plans");
    let text = normalize(&df.explain_string(crate::explain::ExplainMode::Extended).expect("explain"));
    let optimized = &text[text.find("== Optimized Logical Plan ==").expect("section")..text.find("== Physical Plan ==").expect("section")];
    assert!(text.contains("Filter (order_id#n > (100 + 3))"), "the analyzed plan still has the constant:\n{text}");
    assert!(
        optimized.contains("+- Filter ((isnotnull(status#n) AND isnotnull(order_id#n)) AND ((status#n = paid) AND (order_id#n > 103)))\n"),
        "{optimized}"
    );
    assert_eq!(optimized.matches("Filter").count(), 1, "{optimized}");
}

#[test]
fn a_filter_above_a_window_stays_above_it() {
    // Seed 003: below a Window only partition-column predicates may move (kiln moves none):
    // a filter on a window's result or on another column changes which rows it numbers.
    let s = shop();
    let sql = "SELECT * FROM (SELECT order_id, status, rank() OVER (PARTITION BY status ORDER BY amount) AS r FROM orders) t WHERE r = 1 AND order_id > 3";
    let optimized = optimized_in(&s, sql);
    let (filter, window) = (optimized.find("Filter"), optimized.find("Window ["));
    assert!(filter.is_some() && window.is_some() && filter < window, "{optimized}");
    assert_eq!(optimized.matches("Filter").count(), 1, "{optimized}");
}

#[test]
fn a_null_comparison_in_a_filter_selects_no_rows_without_evaluating_the_rest() {
    let s = with_t();
    let sql = "SELECT a FROM t WHERE (a + a) >= CAST(NULL AS INT) AND (a + a) <= 0";
    assert_eq!(optimized_in(&s, sql), "LocalRelation <empty>, [a#n]\n");
    // Under NOT, NULL is not false: NOT (NULL AND a > 1) keeps the rows where a > 1 is false.
    assert!(optimized_in(&s, "SELECT a FROM t WHERE NOT (b > CAST(NULL AS INT) AND a > 1)").contains("Filter"));
    assert_eq!(rows(&s, "SELECT a FROM t WHERE NOT (b > CAST(NULL AS INT) AND a > 1)"), 1);
}

#[test]
fn disjunctions_across_a_join_push_their_one_side_parts() {
    // Q7's shape: each side is filtered by what the OR implies about it; the join keeps it all.
    let plan = optimized(
        "SELECT o.order_id, c.name FROM orders o JOIN customers c ON o.customer_id = c.customer_id \
         WHERE (o.status = 'paid' AND c.country = 'DE') OR (o.status = 'open' AND c.name = 'Ann')",
    );
    assert!(plan.contains("Join Inner, ((customer_id#n = customer_id#n) AND (((status#n = paid) AND (country#n = DE)) OR ((status#n = open) AND (name#n = Ann))))"), "{plan}");
    assert!(plan.contains("((status#n = paid) OR (status#n = open))"), "{plan}");
    assert!(plan.contains("((country#n = DE) OR (name#n = Ann))"), "{plan}");
    // A disjunct that says nothing about a side leaves that side alone.
    let plan = optimized("SELECT o.order_id FROM orders o JOIN customers c ON o.customer_id = c.customer_id WHERE o.status = 'paid' OR c.country = 'DE'");
    assert!(!plan.contains("Filter ((status#n = paid)") && !plan.contains("(country#n = DE))\n"), "{plan}");
    // Never into the null-supplying side's opposite: a LEFT JOIN's condition filters only the right.
    let plan = optimized(
        "SELECT o.order_id FROM orders o LEFT JOIN customers c ON o.customer_id = c.customer_id \
         AND ((o.status = 'paid' AND c.country = 'DE') OR (o.status = 'open' AND c.country = 'FR'))",
    );
    assert!(!plan.contains("((status#n = paid) OR (status#n = open))"), "{plan}");
    assert!(plan.contains("((country#n = DE) OR (country#n = FR))") || plan.contains("country#n IN (DE,FR)"), "{plan}");
}

#[test]
fn comma_joins_are_reordered_so_every_join_has_a_condition() {
    // Written o, c, o2: nothing connects o and c, so o2 is joined second.
    let plan = optimized(
        "SELECT o.order_id, c.name FROM orders o, customers c, orders o2 \
         WHERE o.order_id = o2.order_id AND c.customer_id = o2.customer_id",
    );
    let joins: Vec<&str> = plan.lines().filter(|l| l.contains("Join ")).collect();
    assert_eq!(joins.len(), 2, "{plan}");
    assert!(joins.iter().all(|j| j.contains("Join Inner, (")), "a join without a condition:\n{plan}");
    assert!(joins[0].contains("(customer_id#n = customer_id#n)") && joins[1].contains("(order_id#n = order_id#n)"), "{plan}");
    // Already connected in the written order: left as written.
    let plan = optimized(
        "SELECT o.order_id FROM orders o, customers c, orders o2 WHERE o.customer_id = c.customer_id AND o.order_id = o2.order_id",
    );
    let joins: Vec<&str> = plan.lines().filter(|l| l.contains("Join ")).collect();
    assert!(joins[0].contains("(order_id#n = order_id#n)") && joins[1].contains("(customer_id#n = customer_id#n)"), "{plan}");
}

#[test]
fn a_filter_over_a_global_aggregate_stays_above_it() {
    // The false filter stays over the one-row aggregate, so the whole query is empty (pushed
    // below it, the aggregate would count an empty input: one row, 0).
    let plan = optimized("SELECT count(*) FROM orders HAVING 1 = 0");
    assert_eq!(plan.trim_end(), "LocalRelation <empty>, [count(1)#nL]", "{plan}");
    // Over a grouped aggregate a condition on a grouping column still moves below it.
    let grouped = optimized("SELECT status, count(*) FROM orders GROUP BY status HAVING status = 'paid'");
    assert!(grouped.find("Aggregate") < grouped.find("Filter"), "{grouped}");
}

#[test]
fn not_of_an_and_infers_no_not_null_constraint() {
    let plan = optimized("SELECT order_id FROM orders WHERE NOT (amount > 10 AND customer_id < 3)");
    assert!(!plan.contains("isnotnull(amount") && !plan.contains("isnotnull(customer_id"), "{plan}");
}

#[test]
fn an_in_subquery_over_a_join_filters_the_side_it_reads_before_the_join() {
    // The semi join starts above the join (the subquery rewrite runs first) and ends over
    // orders, the side its condition reads.
    let plan = optimized(
        "SELECT c.name, o.amount FROM customers c JOIN orders o ON o.customer_id = c.customer_id WHERE o.order_id IN (SELECT order_id FROM orders WHERE status = 'paid')",
    );
    let inner = line_of(&plan, "Join Inner, (customer_id#n = customer_id#n)");
    let semi = line_of(&plan, "Join LeftSemi, (order_id#n = order_id#n)");
    assert!(semi > inner, "the semi join is below the inner join:\n{plan}");
    let orders = line_of(&plan, "orders[");
    let customers = line_of(&plan, "customers[");
    assert!(customers < semi && semi < orders, "customers beside the semi join, orders under it:\n{plan}");
}

#[test]
fn a_semi_join_reading_both_sides_of_a_join_or_the_null_side_of_an_outer_join_stays_above_it() {
    let both = optimized(
        "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.customer_id LEFT SEMI JOIN customers c2 ON c2.name = c.name AND c2.customer_id = o.order_id",
    );
    assert!(both.lines().next().is_some_and(|l| l.starts_with("Project")), "{both}");
    assert!(both.lines().nth(1).is_some_and(|l| l.contains("Join LeftSemi")), "{both}");
    // Into a left outer join's null-supplying side it must not go: that would drop the
    // outer rows the filter keeps. NOT EXISTS over the left side does go left.
    let outer = optimized(
        "SELECT c.name FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id WHERE NOT EXISTS (SELECT 1 FROM orders x WHERE x.order_id = o.order_id)",
    );
    let outer_join = line_of(&outer, "Join LeftOuter");
    let anti = line_of(&outer, "Join LeftAnti");
    assert!(anti < outer_join, "the anti join on the outer join's right side stays above it:\n{outer}");
    let left = optimized(
        "SELECT c.name FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id WHERE NOT EXISTS (SELECT 1 FROM orders x WHERE x.customer_id = c.customer_id)",
    );
    let outer_join = line_of(&left, "Join LeftOuter");
    let anti = line_of(&left, "Join LeftAnti");
    assert!(anti > outer_join, "the anti join reading the preserved side goes below:\n{left}");
}

#[test]
fn semi_joins_pushed_down_give_the_rows_they_gave_above() {
    let s = shop();
    let queries = [
        "SELECT c.name, o.amount FROM customers c JOIN orders o ON o.customer_id = c.customer_id WHERE o.order_id IN (SELECT order_id FROM orders WHERE status = 'paid') ORDER BY 1, 2",
        "SELECT c.name, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id WHERE c.customer_id NOT IN (SELECT customer_id FROM orders WHERE status = 'paid' AND customer_id IS NOT NULL) ORDER BY 1, 2",
        "SELECT c.name, o.order_id FROM customers c RIGHT JOIN orders o ON o.customer_id = c.customer_id WHERE EXISTS (SELECT 1 FROM orders x WHERE x.order_id = o.order_id AND x.status = 'paid') ORDER BY 1, 2",
    ];
    for q in queries {
        let on = s.sql(q).expect("plans").collect().expect("runs");
        s.set_conf("spark.sql.optimizer.excludedRules", "PushDownLeftSemiAntiJoin,PushLeftSemiLeftAntiThroughJoin").expect("conf");
        let df = s.sql(q).expect("plans");
        let off = df.collect().expect("runs");
        s.set_conf("spark.sql.optimizer.excludedRules", "").expect("conf");
        assert!(on.iter().map(|b| b.num_rows()).sum::<usize>() > 0, "{q}");
        let text = |b: &[arrow::record_batch::RecordBatch]| arrow::util::pretty::pretty_format_batches(b).map(|t| t.to_string()).expect("prints");
        assert_eq!(text(&on), text(&off), "{q}");
    }
}

#[test]
fn subquery_columns_are_named_as_spark_names_them() {
    let df = shop().sql("SELECT (SELECT max(amount) FROM orders), EXISTS (SELECT 1), 1 IN (SELECT 1), (SELECT 1) + 1").unwrap();
    let names: Vec<String> = df.schema().fields().iter().map(|f| f.name().clone()).collect();
    assert_eq!(names, ["scalarsubquery()", "exists()", "(1 IN (listquery()))", "(scalarsubquery() + 1)"]);
}

#[test]
fn lateral_select_list_without_from_becomes_a_project_of_the_left_side() {
    let plan = optimized("SELECT c.name, l.n FROM customers c, LATERAL (SELECT c.customer_id + 1 AS n) l");
    assert!(!plan.contains("Join"), "{plan}");
    assert!(plan.contains("(customer_id#n + 1) AS n#n"), "{plan}");
}

#[test]
fn lateral_global_aggregate_keeps_every_outer_row_with_its_count() {
    let plan = optimized("SELECT c.name, l.n FROM customers c JOIN LATERAL (SELECT count(*) AS n FROM orders o WHERE o.customer_id = c.customer_id) l ON true");
    assert!(plan.contains("Join LeftOuter, (customer_id#n = customer_id#n)"), "{plan}");
    assert!(plan.contains("CASE WHEN isnull(alwaysTrue#n) THEN 0 ELSE n#nL END AS n#nL"), "{plan}");
}

#[test]
fn row_value_not_in_is_null_aware_per_column() {
    let plan = optimized("SELECT name FROM customers WHERE (customer_id, country) NOT IN (SELECT customer_id, status FROM orders)");
    assert!(
        plan.contains("Join LeftAnti, (((customer_id#n = customer_id#n) OR isnull((customer_id#n = customer_id#n))) AND ((country#n = status#n) OR isnull((country#n = status#n))))"),
        "{plan}"
    );
}

#[test]
fn a_correlated_limit_is_a_row_number_per_outer_value() {
    let sql = "SELECT name, (SELECT amount FROM orders o WHERE o.customer_id >= c.customer_id ORDER BY amount DESC LIMIT 1 OFFSET 1) AS a FROM customers c";
    let plan = optimized(sql);
    // DecorrelateInnerQuery: the domain joins the input, row_number() numbers each value's rows
    // in the Sort's order, a Filter keeps the LIMIT / OFFSET range, the outer rows join back.
    assert!(plan.contains("Join LeftOuter, (customer_id#n <=> customer_id#n)"), "{plan}");
    assert!(plan.contains("Filter ((rn#n > 1) AND (rn#n <= 2))"), "{plan}");
    assert!(plan.contains("Window [row_number() windowspecdefinition(customer_id#n, amount#n DESC NULLS LAST, specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$())) AS rn#n], [customer_id#n], [amount#n DESC NULLS LAST]"), "{plan}");
    assert!(plan.contains("Join Inner, (customer_id#n >= customer_id#n)"), "{plan}");
    assert!(!plan.contains("outer("), "{plan}");
    assert_eq!(rows(&shop(), sql), rows(&shop(), "SELECT name FROM customers"));
}

#[test]
fn a_correlated_union_gets_the_outer_values_in_every_branch() {
    let sql = "SELECT name, (SELECT sum(x) FROM (SELECT 1 AS x UNION ALL SELECT c.customer_id)) AS s FROM customers c";
    let plan = optimized(sql);
    assert!(plan.contains("Aggregate [customer_id#n], [sum(x#n) AS sum(x)#nL, customer_id#n]"), "{plan}");
    // Each branch is crossed with (or reads) its own instance of the domain.
    assert_eq!(plan.matches("Join Cross").count(), 2, "{plan}");
    assert!(!plan.contains("outer("), "{plan}");
}

#[test]
fn a_subquery_in_an_outer_join_condition_is_a_marker_column_of_its_side() {
    let sql = "SELECT o.order_id, c.name FROM orders o LEFT JOIN customers c ON c.customer_id = o.customer_id AND EXISTS (SELECT 1 FROM orders i WHERE i.customer_id = c.customer_id AND i.amount > 50)";
    let plan = optimized(sql);
    // The right side computes the EXISTS as a marker column the condition reads; that part of
    // a left join's condition then filters the right side alone, so every order stays.
    assert!(line_of(&plan, "Join LeftSemi, (customer_id#n = customer_id#n)") > line_of(&plan, "Join LeftOuter, (customer_id#n = customer_id#n)"), "{plan}");
    assert!(!plan.contains("exists#"), "{plan}");
    assert_eq!(rows(&shop(), sql), rows(&shop(), "SELECT order_id FROM orders"));
}
