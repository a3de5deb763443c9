//! EXPLAIN printers, one per mode.

mod tree;
pub use tree::draw_tree;

/// Which EXPLAIN output to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplainMode {
    /// The physical plan only.
    Simple,
    /// Parsed, analyzed, optimized and physical plans.
    Extended,
    /// The physical plan, then the generated code of each codegen stage.
    Codegen,
    /// The optimized logical plan with statistics.
    Cost,
    /// The physical plan as an outline, then one detail block per operator.
    Formatted,
}
