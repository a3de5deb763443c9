//! The session settings the analyzer's free functions read (name matching, coercion) without
//! a Resolver at hand: set for the analysis running on this thread.

use std::cell::Cell;

/// Settings of the analysis running on this thread.
#[derive(Debug, Clone, Copy)]
pub(super) struct Flags {
    /// `spark.sql.caseSensitive`: column names and qualifiers match in their exact case.
    pub case_sensitive: bool,
    /// `spark.sql.ansi.enabled`: false coerces as Spark's legacy TypeCoercion (a string in
    /// arithmetic is a double).
    pub ansi: bool,
    /// `spark.sql.legacy.interval.enabled`: the difference of two dates or timestamps is a
    /// calendar interval.
    pub legacy_interval: bool,
}

const DEFAULT: Flags = Flags { case_sensitive: false, ansi: true, legacy_interval: false };

thread_local! {
    static FLAGS: Cell<Flags> = const { Cell::new(DEFAULT) };
}

/// Runs `f` (an analysis) under `flags`, restoring the ones before after it.
pub(super) fn with_flags<T>(flags: Flags, f: impl FnOnce() -> T) -> T {
    let before = FLAGS.with(|c| c.replace(flags));
    let out = f();
    FLAGS.with(|c| c.set(before));
    out
}

/// The flags of the analysis running on this thread (Spark's defaults outside one).
pub(super) fn flags() -> Flags {
    FLAGS.with(Cell::get)
}
