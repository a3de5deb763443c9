//! An extension optimizer rule: `x * 1` becomes `x`. It implements the `Rule` trait the
//! built-in rules implement, runs in its own batch, and shows up in the plan change log.
//!
//! `cargo run --release --example optimizer_rule`

use std::sync::Arc;

use kiln::expr::{BinaryOp, Expr};
use kiln::optimizer::Rule;
use kiln::plan::LogicalPlan;
use kiln::types::ScalarValue;
use kiln::Session;

struct RemoveMultiplyByOne;

fn is_one(e: &Expr) -> bool {
    matches!(e, Expr::Literal(ScalarValue::Int32(1) | ScalarValue::Int64(1)))
}

impl Rule for RemoveMultiplyByOne {
    fn name(&self) -> &'static str {
        "RemoveMultiplyByOne"
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> kiln::Result<Arc<LogicalPlan>> {
        plan.transform_up(&mut |node| {
            let mut changed = false;
            let rewritten = node.map_expressions(|e| {
                e.transform_up(&mut |e| match &e {
                    // Only where the type stays the same (decimal * 1 widens the scale).
                    Expr::Binary { op: BinaryOp::Multiply, left, right } if is_one(right) && left.data_type().ok() == e.data_type().ok() => {
                        changed = true;
                        Ok::<Expr, kiln::KilnError>(left.as_ref().clone())
                    }
                    _ => Ok(e),
                })
            })?;
            // A rule returns the same Arc when it changes nothing.
            Ok(if changed { Arc::new(rewritten) } else { node })
        })
    }
}

pub fn main() -> kiln::Result<()> {
    let session = Session::builder().with_extensions(|ext| ext.inject_optimizer_rule(RemoveMultiplyByOne)).build()?;
    session.sql("CREATE TABLE t (a INT, b BIGINT)")?;
    session.sql("INSERT INTO t VALUES (1, 10), (2, 20)")?;
    let df = session.sql("SELECT a * 1 AS a, b FROM t WHERE b * 1 > 10")?;
    let log = df.plan_change_log();
    println!("{log}");
    assert!(log.contains("=== Applying Rule RemoveMultiplyByOne ==="), "the rule is in the plan change log");
    assert!(log.contains(kiln::extensions::USER_OPTIMIZER_BATCH), "in its own batch");
    assert!(!df.optimized_plan().tree_string().contains("* 1"));
    assert_eq!(df.count()?, 1);
    Ok(())
}
