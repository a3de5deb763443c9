//! DataFrame.

/// A lazy query.
pub struct DataFrame {}
