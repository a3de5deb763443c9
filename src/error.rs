//! One error type for the whole engine. Every user-facing error says what went wrong, where
//! (table, column, file, position) and, where one exists, what to do instead.

use std::fmt;

/// The result type used throughout kiln.
pub type Result<T, E = KilnError> = std::result::Result<T, E>;

/// Everything that can go wrong between SQL text and Arrow batches.
#[derive(Debug, thiserror::Error)]
pub enum KilnError {
    /// The SQL text does not parse.
    #[error("syntax error: {0}")]
    Parse(String),
    /// The SQL parses but uses a construct kiln does not support (yet).
    #[error("unsupported SQL: {0}")]
    Unsupported(String),
    /// A name, type or shape problem found while resolving the plan against the catalog.
    #[error("{0}")]
    Analysis(AnalysisError),
    /// A runtime error with Spark's ANSI semantics: overflow, division by zero, bad cast.
    #[error("{0}")]
    Execution(String),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file, folder or output stream involved.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// An invalid setting or argument.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// An Arrow kernel failed.
    #[error("arrow error: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
    /// A Parquet file is corrupt or unreadable.
    #[error("parquet error: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// The query was cancelled by its host (Ctrl-C in `kiln shell`) before it finished.
    #[error("query cancelled")]
    Cancelled,
    /// An invariant of the engine itself broke: a bug in kiln, not in the query.
    #[error("internal error: {0} (this is a bug in kiln)")]
    Internal(String),
}

/// A resolution error in Spark's words, with the error class Spark uses.
#[derive(Debug)]
pub struct AnalysisError {
    /// Spark's error class, e.g. `UNRESOLVED_COLUMN.WITH_SUGGESTION`.
    pub class: &'static str,
    /// The human-readable message.
    pub message: String,
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.class, self.message)
    }
}

impl KilnError {
    /// An analysis error of the given Spark error class.
    pub fn analysis(class: &'static str, message: impl Into<String>) -> Self {
        KilnError::Analysis(AnalysisError { class, message: message.into() })
    }
    /// A runtime error.
    pub fn exec(message: impl Into<String>) -> Self {
        KilnError::Execution(message.into())
    }
    /// An engine bug.
    pub fn internal(message: impl Into<String>) -> Self {
        KilnError::Internal(message.into())
    }
    /// An unsupported construct, named.
    pub fn unsupported(message: impl Into<String>) -> Self {
        KilnError::Unsupported(message.into())
    }
    /// An I/O problem on a path.
    pub fn io(path: impl Into<String>, message: impl fmt::Display) -> Self {
        KilnError::Io { path: path.into(), message: message.to_string() }
    }
}

/// The candidate closest to `name` by edit distance, if it is close enough to be a likely typo.
pub fn closest_match<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.len().max(name.len()) / 2).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(closest_match("stauts", ["status", "amount"]), Some("status"));
        assert_eq!(closest_match("zzzzzz", ["status", "amount"]), None);
    }
}
