//! Typed settings under Spark's own key names.

/// Session settings.
#[derive(Debug, Clone, Default)]
pub struct Config {}
