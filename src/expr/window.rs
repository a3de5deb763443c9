//! Window functions and window specifications (Spark's `WindowExpression`,
//! `WindowSpecDefinition`, `SpecifiedWindowFrame`), printed as Spark prints them:
//! `row_number() windowspecdefinition(k#1, v#2 ASC NULLS FIRST, specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$()))`.

use std::fmt;

use super::{Expr, SortOrder};
use crate::types::ScalarValue;

/// Functions that only exist over a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WindowFunc {
    /// row_number(): 1, 2, 3, ... within the partition.
    RowNumber,
    /// rank(): 1 + the rows before the current row's peers (gaps after ties).
    Rank,
    /// dense_rank(): 1 + the distinct order values before the current row (no gaps).
    DenseRank,
    /// percent_rank(): (rank - 1) / (rows - 1), 0 for a single row.
    PercentRank,
    /// cume_dist(): rows up to the current row's last peer / rows.
    CumeDist,
    /// ntile(n): the bucket 1..n of the row, the first buckets one row larger.
    Ntile,
    /// lag(x[, offset[, default]]): x of the row `offset` rows before.
    Lag,
    /// lead(x[, offset[, default]]): x of the row `offset` rows after.
    Lead,
    /// first_value(x) / first(x): x of the frame's first row.
    FirstValue,
    /// last_value(x) / last(x): x of the frame's last row.
    LastValue,
    /// nth_value(x, n): x of the frame's n-th row.
    NthValue,
}

impl WindowFunc {
    /// Spark's name.
    pub fn name(&self) -> &'static str {
        match self {
            WindowFunc::RowNumber => "row_number",
            WindowFunc::Rank => "rank",
            WindowFunc::DenseRank => "dense_rank",
            WindowFunc::PercentRank => "percent_rank",
            WindowFunc::CumeDist => "cume_dist",
            WindowFunc::Ntile => "ntile",
            WindowFunc::Lag => "lag",
            WindowFunc::Lead => "lead",
            WindowFunc::FirstValue => "first_value",
            WindowFunc::LastValue => "last_value",
            WindowFunc::NthValue => "nth_value",
        }
    }
    /// Looks a window function up by its SQL name.
    pub fn from_name(name: &str) -> Option<WindowFunc> {
        Some(match name.to_ascii_lowercase().as_str() {
            "row_number" => WindowFunc::RowNumber,
            "rank" => WindowFunc::Rank,
            "dense_rank" => WindowFunc::DenseRank,
            "percent_rank" => WindowFunc::PercentRank,
            "cume_dist" => WindowFunc::CumeDist,
            "ntile" => WindowFunc::Ntile,
            "lag" => WindowFunc::Lag,
            "lead" => WindowFunc::Lead,
            "first_value" | "first" => WindowFunc::FirstValue,
            "last_value" | "last" => WindowFunc::LastValue,
            "nth_value" => WindowFunc::NthValue,
            _ => return None,
        })
    }
    /// The fewest and most arguments a call may have.
    pub fn arity(&self) -> (usize, usize) {
        match self {
            WindowFunc::RowNumber | WindowFunc::Rank | WindowFunc::DenseRank | WindowFunc::PercentRank | WindowFunc::CumeDist => (0, 0),
            WindowFunc::Ntile => (1, 1),
            WindowFunc::Lag | WindowFunc::Lead => (1, 3),
            WindowFunc::FirstValue | WindowFunc::LastValue => (1, 2),
            WindowFunc::NthValue => (2, 2),
        }
    }
    /// Names for "did you mean" suggestions.
    pub const NAMES: &'static [&'static str] = &[
        "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
        "first", "last",
    ];
    /// Functions whose frame is fixed (`ROWS UNBOUNDED PRECEDING AND CURRENT ROW`, or the
    /// offset row of lag/lead): a frame written for them is an error.
    pub fn fixed_frame(&self) -> bool {
        !matches!(self, WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue)
    }
    /// Functions that need an ORDER BY in their window.
    pub fn needs_order(&self) -> bool {
        !matches!(self, WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue)
    }
}

/// `ROWS` or `RANGE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameType {
    /// `ROWS`: bounds count rows.
    Rows,
    /// `RANGE`: bounds are distances in the order value (peers are one unit).
    Range,
}

/// One end of a frame.
#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    /// `UNBOUNDED PRECEDING`.
    UnboundedPreceding,
    /// `UNBOUNDED FOLLOWING`.
    UnboundedFollowing,
    /// `CURRENT ROW` (RANGE: the row's last or first peer).
    CurrentRow,
    /// `n PRECEDING` (negative) or `n FOLLOWING`; a literal.
    Offset(ScalarValue),
}

/// A window frame, `specifiedwindowframe(RowFrame, lower, upper)`.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    /// ROWS or RANGE.
    pub frame_type: FrameType,
    /// The lower bound.
    pub lower: FrameBound,
    /// The upper bound.
    pub upper: FrameBound,
}

impl WindowFrame {
    /// `ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`.
    pub fn running_rows() -> WindowFrame {
        WindowFrame { frame_type: FrameType::Rows, lower: FrameBound::UnboundedPreceding, upper: FrameBound::CurrentRow }
    }
}

/// `OVER (PARTITION BY ... ORDER BY ... frame)`.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowSpec {
    /// The partition keys.
    pub partition_by: Vec<Expr>,
    /// The order within a partition.
    pub order_by: Vec<SortOrder>,
    /// The frame; None before analysis when none was written.
    pub frame: Option<WindowFrame>,
}

impl fmt::Display for FrameBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameBound::UnboundedPreceding => write!(f, "unboundedpreceding$()"),
            FrameBound::UnboundedFollowing => write!(f, "unboundedfollowing$()"),
            FrameBound::CurrentRow => write!(f, "currentrow$()"),
            FrameBound::Offset(v) => write!(f, "{}", Expr::Literal(v.clone())),
        }
    }
}

impl fmt::Display for WindowFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = match self.frame_type {
            FrameType::Rows => "RowFrame",
            FrameType::Range => "RangeFrame",
        };
        write!(f, "specifiedwindowframe({t}, {}, {})", self.lower, self.upper)
    }
}

impl FrameBound {
    /// SQL text, for column names: `UNBOUNDED PRECEDING`, `1 FOLLOWING`, ...
    pub fn sql(&self) -> String {
        match self {
            FrameBound::UnboundedPreceding => "UNBOUNDED PRECEDING".into(),
            FrameBound::UnboundedFollowing => "UNBOUNDED FOLLOWING".into(),
            FrameBound::CurrentRow => "CURRENT ROW".into(),
            FrameBound::Offset(v) => {
                let text = Expr::Literal(v.clone()).to_string();
                match text.strip_prefix('-') {
                    Some(n) => format!("{n} PRECEDING"),
                    None => format!("{text} FOLLOWING"),
                }
            }
        }
    }
}
