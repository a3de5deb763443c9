//! Session extensions, as Spark's `SparkSessionExtensions`: rules and functions a host injects
//! into every query a session plans.
//!
//! ```
//! use std::sync::Arc;
//! use kiln::optimizer::Rule;
//! use kiln::plan::LogicalPlan;
//!
//! /// Refuses queries over a table named `secret`.
//! fn no_secret(plan: &LogicalPlan) -> kiln::Result<()> {
//!     match plan.tree_string().contains("default.secret[") {
//!         true => Err(kiln::KilnError::analysis("SECRET_TABLE", "`secret` may not be read")),
//!         false => Ok(()),
//!     }
//! }
//! let session = kiln::Session::builder().with_extensions(|ext| ext.inject_check_rule(no_secret)).build().unwrap();
//! session.sql("CREATE TABLE secret (x INT)").unwrap();
//! assert!(session.sql("SELECT * FROM secret").is_err());
//! ```

use std::sync::Arc;

/// The physical plan a [`PlannerStrategy`] returns: its operators, as EXPLAIN prints them.
pub use crate::physical::PhysicalPlan;

use crate::error::Result;
use crate::optimizer::Rule;
use crate::plan::LogicalPlan;
use crate::udf::ScalarUdf;

pub use crate::physical::PlannerStrategy;

/// A check on an analyzed plan: an error rejects the query (Spark's `injectCheckRule`).
pub type CheckRule = Arc<dyn Fn(&LogicalPlan) -> Result<()> + Send + Sync>;

/// The batch injected optimizer rules run in, after the built-in ones; the plan change log
/// names it.
pub const USER_OPTIMIZER_BATCH: &str = "User Provided Optimizers";

/// The rules and functions injected into a session ([`crate::SessionBuilder::with_extensions`]).
#[derive(Default, Clone)]
pub struct Extensions {
    pub(crate) resolution_rules: Vec<Arc<dyn Rule>>,
    pub(crate) check_rules: Vec<CheckRule>,
    pub(crate) optimizer_rules: Vec<Arc<dyn Rule>>,
    pub(crate) planner_strategies: Vec<Arc<dyn PlannerStrategy>>,
    pub(crate) functions: Vec<Arc<ScalarUdf>>,
}

impl Extensions {
    /// A rule run over every plan after the built-in analysis (names resolved, types
    /// coerced), before the check rules: it may rewrite the resolved plan.
    pub fn inject_resolution_rule(&mut self, rule: impl Rule + 'static) {
        self.resolution_rules.push(Arc::new(rule));
    }
    /// A check of every analyzed plan; an error it returns is the query's error.
    pub fn inject_check_rule(&mut self, check: impl Fn(&LogicalPlan) -> Result<()> + Send + Sync + 'static) {
        self.check_rules.push(Arc::new(check));
    }
    /// An optimizer rule, run to a fixed point in its own batch ([`USER_OPTIMIZER_BATCH`])
    /// after the built-in batches. It implements the same [`Rule`] trait the built-in rules do.
    pub fn inject_optimizer_rule(&mut self, rule: impl Rule + 'static) {
        self.optimizer_rules.push(Arc::new(rule));
    }
    /// A physical planning strategy, tried on every logical node before the built-in ones.
    pub fn inject_planner_strategy(&mut self, strategy: impl PlannerStrategy + 'static) {
        self.planner_strategies.push(Arc::new(strategy));
    }
    /// A function every query of the session can call, as [`crate::Session::register_udf`].
    pub fn inject_function(&mut self, udf: ScalarUdf) {
        self.functions.push(Arc::new(udf));
    }

    /// The analyzed plan after the resolution rules, checked by the check rules.
    pub(crate) fn analyze(&self, mut plan: Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        for rule in &self.resolution_rules {
            plan = rule.apply(&plan)?;
        }
        for check in &self.check_rules {
            check(&plan)?;
        }
        Ok(plan)
    }
    /// The injected optimizer rules as the batch that runs them (None when there are none).
    pub(crate) fn optimizer_batch(&self) -> Option<crate::optimizer::Batch> {
        if self.optimizer_rules.is_empty() {
            return None;
        }
        let rules = self.optimizer_rules.iter().map(|r| Box::new(Shared(r.clone())) as Box<dyn Rule>).collect();
        Some(crate::optimizer::Batch { name: USER_OPTIMIZER_BATCH, strategy: crate::optimizer::Strategy::FixedPoint(100), rules })
    }
}

/// A rule shared by every query of the session.
struct Shared(Arc<dyn Rule>);

impl Rule for Shared {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn apply(&self, plan: &Arc<LogicalPlan>) -> Result<Arc<LogicalPlan>> {
        self.0.apply(plan)
    }
}
