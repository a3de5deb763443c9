//! Rendering values the way Spark prints them.

/// Java's `Double.toString` of a double.
pub fn java_double(v: f64) -> String {
    format!("{v:?}")
}
