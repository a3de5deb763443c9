//! Windows for the DataFrame API, as pyspark's `Window` and `WindowSpec`:
//! `row_number().over(Window::partition_by([col("k")]).order_by([col("v")]))` is SQL's
//! `row_number() OVER (PARTITION BY k ORDER BY v)`, the same plan.

use std::sync::Arc;

use super::Column;
use crate::error::KilnError;
use crate::expr::{Expr, FrameBound, FrameType, SortOrder, WindowFrame};
use crate::types::ScalarValue;

/// Starts a window specification (pyspark's `Window`); each constructor returns a
/// [`WindowSpec`] the others chain on.
///
/// ```
/// use kiln::functions::*;
/// let s = kiln::Session::new();
/// let t = s.sql("SELECT * FROM VALUES (1, 10), (1, 20), (2, 5) AS t(k, v)").unwrap();
/// let w = Window::partition_by([col("k")]).order_by([col("v")]);
/// let ranked = t.with_column("running", sum(col("v")).over(w.clone().rows_between(Window::UNBOUNDED_PRECEDING, Window::CURRENT_ROW))).unwrap();
/// let ranked = ranked.with_column("n", row_number().over(w)).unwrap();
/// assert_eq!(ranked.columns(), vec!["k", "v", "running", "n"]);
/// ```
pub struct Window;

impl Window {
    /// The frame bound `UNBOUNDED PRECEDING` (pyspark's `Window.unboundedPreceding`).
    pub const UNBOUNDED_PRECEDING: i64 = i64::MIN;
    /// The frame bound `UNBOUNDED FOLLOWING` (pyspark's `Window.unboundedFollowing`).
    pub const UNBOUNDED_FOLLOWING: i64 = i64::MAX;
    /// The frame bound `CURRENT ROW` (pyspark's `Window.currentRow`).
    pub const CURRENT_ROW: i64 = 0;

    /// A window partitioned by `cols`.
    pub fn partition_by(cols: impl IntoIterator<Item = Column>) -> WindowSpec {
        WindowSpec::default().partition_by(cols)
    }
    /// A window over all rows, ordered by `cols` (`desc(..)` and the like set the direction).
    pub fn order_by(cols: impl IntoIterator<Item = Column>) -> WindowSpec {
        WindowSpec::default().order_by(cols)
    }
    /// A window over all rows with a `ROWS` frame (see [`WindowSpec::rows_between`]).
    pub fn rows_between(start: i64, end: i64) -> WindowSpec {
        WindowSpec::default().rows_between(start, end)
    }
    /// A window over all rows with a `RANGE` frame (see [`WindowSpec::range_between`]).
    pub fn range_between(start: i64, end: i64) -> WindowSpec {
        WindowSpec::default().range_between(start, end)
    }
}

/// A window's partitioning, order and frame, given to [`Column::over`]. Building one never
/// fails: a problem is returned by the DataFrame method the column goes to.
#[derive(Debug, Clone, Default)]
pub struct WindowSpec {
    partition_by: Vec<Expr>,
    order_by: Vec<SortOrder>,
    frame: Option<WindowFrame>,
    error: Option<Arc<KilnError>>,
}

impl WindowSpec {
    /// Partitions by `cols` (replacing earlier partition keys, as pyspark).
    pub fn partition_by(mut self, cols: impl IntoIterator<Item = Column>) -> WindowSpec {
        self.partition_by = cols.into_iter().filter_map(|c| self.keep(c.into_expr())).collect();
        self
    }
    /// Orders each partition by `cols` (replacing an earlier order).
    pub fn order_by(mut self, cols: impl IntoIterator<Item = Column>) -> WindowSpec {
        self.order_by = cols.into_iter().filter_map(|c| self.keep(c.into_sort_order())).collect();
        self
    }
    /// A `ROWS BETWEEN` frame: `start` and `end` count rows from the current one (negative
    /// before it), or are [`Window::UNBOUNDED_PRECEDING`], [`Window::CURRENT_ROW`],
    /// [`Window::UNBOUNDED_FOLLOWING`]. Offsets beyond an `int` are refused, as Spark does.
    pub fn rows_between(mut self, start: i64, end: i64) -> WindowSpec {
        let bound = |v: i64, this: &mut WindowSpec| match v {
            Window::UNBOUNDED_PRECEDING => FrameBound::UnboundedPreceding,
            Window::UNBOUNDED_FOLLOWING => FrameBound::UnboundedFollowing,
            0 => FrameBound::CurrentRow,
            v => match i32::try_from(v) {
                Ok(v) => FrameBound::Offset(ScalarValue::Int32(v)),
                Err(_) => {
                    this.fail(KilnError::analysis("INVALID_BOUNDARY", format!("The boundary {v} is invalid: a ROWS frame offset must be an int.")));
                    FrameBound::CurrentRow
                }
            },
        };
        let (lower, upper) = (bound(start, &mut self), bound(end, &mut self));
        self.frame = Some(WindowFrame { frame_type: FrameType::Rows, lower, upper });
        self
    }
    /// A `RANGE BETWEEN` frame: `start` and `end` are distances in the (single) order key's
    /// value from the current row's, or the constants of [`Window`].
    pub fn range_between(mut self, start: i64, end: i64) -> WindowSpec {
        let bound = |v: i64| match v {
            Window::UNBOUNDED_PRECEDING => FrameBound::UnboundedPreceding,
            Window::UNBOUNDED_FOLLOWING => FrameBound::UnboundedFollowing,
            0 => FrameBound::CurrentRow,
            v => FrameBound::Offset(ScalarValue::Int64(v)),
        };
        self.frame = Some(WindowFrame { frame_type: FrameType::Range, lower: bound(start), upper: bound(end) });
        self
    }
    fn keep<T>(&mut self, r: crate::error::Result<T>) -> Option<T> {
        r.map_err(|e| self.fail(e)).ok()
    }
    fn fail(&mut self, e: KilnError) {
        self.error.get_or_insert(Arc::new(e));
    }
}

impl Column {
    /// This function over a window: `rank().over(w)`, `sum(col("x")).over(w)` (SQL's
    /// `... OVER (PARTITION BY .. ORDER BY .. frame)`).
    pub fn over(self, window: WindowSpec) -> Column {
        let error = self.error.or(window.error);
        let spec = crate::expr::WindowSpec { partition_by: window.partition_by, order_by: window.order_by, frame: window.frame };
        Column { expr: Expr::WindowExpression { function: Box::new(self.expr), spec, ignore_nulls: false }, sort: None, error }
    }
}
