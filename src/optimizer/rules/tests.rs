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
fn every_rule_is_idempotent_on_its_own_output() {
    use crate::optimizer::default_batches;
    let session = shop();
    let config = session.config().expect("config");
    let queries = [
        "SELECT order_id, amount FROM orders WHERE status = 'paid' AND order_id > 100 + 3",
        "SELECT c.country, count(*) AS n, sum(o.amount) AS s FROM orders o JOIN customers c ON o.customer_id = c.customer_id WHERE o.status = 'paid' GROUP BY c.country ORDER BY s DESC",
        "SELECT c.name, o.order_id FROM customers c LEFT JOIN orders o ON o.customer_id = c.customer_id AND o.status = 'paid'",
        "SELECT DISTINCT status FROM orders WHERE amount IS NOT NULL",
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
