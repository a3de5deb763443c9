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
    /// The message's parameters by Spark's names (`objectName`, `relationName`), where the
    /// error was made with them ([`KilnError::analysis_with`]).
    pub parameters: Vec<(String, String)>,
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.class, self.message)
    }
}

impl KilnError {
    /// The error a [`RecordBatchStream`](crate::RecordBatchStream) item carries, as the
    /// `KilnError` it was (the stream is Arrow's reader, so its items hold it as an
    /// `ArrowError::ExternalError`): `batch.map_err(KilnError::from_stream)?`.
    pub fn from_stream(e: arrow::error::ArrowError) -> KilnError {
        match e {
            arrow::error::ArrowError::ExternalError(inner) => match inner.downcast::<KilnError>() {
                Ok(k) => *k,
                Err(other) => KilnError::exec(other.to_string()),
            },
            other => other.into(),
        }
    }
    /// An analysis error of the given Spark error class.
    pub fn analysis(class: &'static str, message: impl Into<String>) -> Self {
        KilnError::Analysis(AnalysisError { class, message: message.into(), parameters: vec![] })
    }
    /// An analysis error with its message parameters as data, by Spark's names for them.
    pub fn analysis_with(class: &'static str, message: impl Into<String>, parameters: &[(&str, &str)]) -> Self {
        let parameters = parameters.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        KilnError::Analysis(AnalysisError { class, message: message.into(), parameters })
    }
    /// Spark's error class (pyspark's `getCondition()`): `UNRESOLVED_COLUMN.WITH_SUGGESTION`,
    /// `DIVIDE_BY_ZERO`, ..., so a host branches on the class rather than the text. A syntax
    /// error is `PARSE_SYNTAX_ERROR`, a bug in kiln `INTERNAL_ERROR`, a cancelled query
    /// `OPERATION_CANCELED`; None for an error Spark has no class for (an unsupported
    /// construct, a file or Arrow error without one).
    ///
    /// ```
    /// let session = kiln::Session::new();
    /// let err = session.sql("SELECT nosuch").unwrap_err();
    /// assert_eq!(err.error_class(), Some("UNRESOLVED_COLUMN.WITHOUT_SUGGESTION"));
    /// assert_eq!(err.sql_state(), Some("42703"));
    /// ```
    pub fn error_class(&self) -> Option<&str> {
        match self {
            KilnError::Analysis(a) => Some(a.class),
            KilnError::Parse(m) => Some(bracketed_class(m).unwrap_or("PARSE_SYNTAX_ERROR")),
            KilnError::Cancelled => Some("OPERATION_CANCELED"),
            KilnError::Internal(_) => Some("INTERNAL_ERROR"),
            KilnError::Execution(m) | KilnError::Unsupported(m) | KilnError::Config(m) | KilnError::Io { message: m, .. } => bracketed_class(m),
            KilnError::Arrow(_) | KilnError::Parquet(_) => None,
        }
    }
    /// The SQLSTATE Spark gives this error's class (pyspark's `getSqlState()`), e.g. `42703`
    /// for an unresolved column, `22012` for a division by zero.
    pub fn sql_state(&self) -> Option<&'static str> {
        let class = self.error_class()?;
        let main = class.split('.').next().unwrap_or(class);
        SQL_STATES.binary_search_by(|(c, _)| c.cmp(&main)).ok().map(|i| SQL_STATES[i].1)
    }
    /// The message's parameters by Spark's names (pyspark's `getMessageParameters()`), as
    /// `[("objectName", "`nosuch`")]`; empty where the error was not made with them.
    pub fn message_parameters(&self) -> &[(String, String)] {
        match self {
            KilnError::Analysis(a) => &a.parameters,
            _ => &[],
        }
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

/// The error class a message starts with, as Spark writes it: `[DIVIDE_BY_ZERO] Division ...`.
fn bracketed_class(message: &str) -> Option<&str> {
    let rest = message.strip_prefix('[')?;
    let class = &rest[..rest.find(']')?];
    let valid = !class.is_empty() && class.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '.');
    valid.then_some(class)
}

/// The SQLSTATE of each error class kiln raises, from Spark's `error-conditions.json`, sorted
/// by class for binary search.
const SQL_STATES: &[(&str, &str)] = &[
    ("ALL_PARTITION_COLUMNS_NOT_ALLOWED", "KD005"), ("AMBIGUOUS_REFERENCE", "42704"),
    ("AMBIGUOUS_REFERENCE_TO_FIELDS", "42000"), ("ARITHMETIC_OVERFLOW", "22003"),
    ("ASSIGNMENT_ARITY_MISMATCH", "42802"), ("BINARY_ARITHMETIC_OVERFLOW", "22003"), ("CANNOT_DECODE_URL", "22546"),
    ("CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE", "42825"), ("CANNOT_PARSE_TIMESTAMP", "22007"),
    ("CANNOT_RESOLVE_STAR_EXPAND", "42704"), ("CAST_INVALID_INPUT", "22018"), ("CAST_OVERFLOW", "22003"),
    ("CAST_OVERFLOW_IN_TABLE_INSERT", "22003"), ("COLUMN_ALREADY_EXISTS", "42711"),
    ("COLUMN_NOT_DEFINED_IN_TABLE", "42703"), ("COLUMN_NOT_FOUND", "42703"),
    ("CREATE_VIEW_COLUMN_ARITY_MISMATCH", "21S01"), ("CREATE_VIEW_WITH_IF_NOT_EXISTS_AND_REPLACE", "42601"),
    ("DATATYPE_MISMATCH", "42K09"), ("DATETIME_FIELD_OUT_OF_BOUNDS", "22023"), ("DATETIME_OVERFLOW", "22008"),
    ("DISTINCT_WINDOW_FUNCTION_UNSUPPORTED", "0A000"), ("DIVIDE_BY_ZERO", "22012"), ("DUPLICATED_MAP_KEY", "23505"),
    ("EXCEPT_OVERLAPPING_COLUMNS", "42702"), ("FAILED_EXECUTE_UDF", "39000"), ("FAILED_FUNCTION_CALL", "38000"), ("FAILED_READ_FILE", "KD001"),
    ("FIELD_NOT_FOUND", "42704"), ("GROUPING_COLUMN_MISMATCH", "42803"), ("GROUPING_SIZE_LIMIT_EXCEEDED", "54000"),
    ("GROUP_BY_POS_OUT_OF_RANGE", "42805"), ("INCOMPATIBLE_COLUMN_TYPE", "42825"),
    ("INCOMPATIBLE_DATA_FOR_TABLE", "KD000"), ("INSERT_COLUMN_ARITY_MISMATCH", "21S01"), ("INTERNAL_ERROR", "XX000"),
    ("INTERVAL_ARITHMETIC_OVERFLOW", "22015"), ("INTERVAL_DIVIDED_BY_ZERO", "22012"),
    ("INVALID_ARRAY_INDEX", "22003"), ("INVALID_ARRAY_INDEX_IN_ELEMENT_AT", "22003"),
    ("INVALID_DATETIME_PATTERN", "22007"), ("INVALID_ESC", "42604"), ("INVALID_EXTRACT_BASE_FIELD_TYPE", "42000"),
    ("INVALID_EXTRACT_FIELD", "42601"), ("INVALID_EXTRACT_FIELD_TYPE", "42000"), ("INVALID_FORMAT", "42601"),
    ("INVALID_INDEX_OF_ZERO", "22003"), ("INVALID_INTERVAL_FORMAT", "22006"), ("INVALID_LATERAL_JOIN_TYPE", "42613"),
    ("INVALID_LIMIT_LIKE_EXPRESSION", "42K0E"), ("INVALID_NUMERIC_LITERAL_RANGE", "22003"),
    ("INVALID_PARAMETER_VALUE", "22023"), ("INVALID_PARTITION_COLUMN_DATA_TYPE", "0A000"),
    ("INVALID_QUERY_MIXED_QUERY_PARAMETERS", "42613"), ("INVALID_RECURSIVE_CTE", "42836"),
    ("INVALID_RECURSIVE_REFERENCE", "42836"), ("INVALID_SUBQUERY_EXPRESSION", "42823"),
    ("INVALID_TYPED_LITERAL", "42604"), ("INVALID_WHERE_CONDITION", "42903"),
    ("INVALID_WITHIN_GROUP_EXPRESSION", "42K0K"), ("MALFORMED_RECORD_IN_PARSING", "22023"),
    ("MISSING_AGGREGATION", "42803"), ("MISSING_WINDOW_SPECIFICATION", "42P20"),
    ("MULTI_ALIAS_WITHOUT_GENERATOR", "42K0E"), ("NESTED_AGGREGATE_FUNCTION", "42607"),
    ("NON_FOLDABLE_ARGUMENT", "42K08"), ("NON_LITERAL_PIVOT_VALUES", "42K08"), ("NOT_NULL_ASSERT_VIOLATION", "42000"),
    ("NULL_MAP_KEY", "2200E"), ("NUMERIC_VALUE_OUT_OF_RANGE", "22003"), ("NUM_COLUMNS_MISMATCH", "42826"),
    ("OPERATION_CANCELED", "HY008"), ("ORDER_BY_POS_OUT_OF_RANGE", "42805"), ("PARSE_SYNTAX_ERROR", "42601"),
    ("PATH_ALREADY_EXISTS", "42K04"), ("PIVOT_VALUE_DATA_TYPE_MISMATCH", "42K09"),
    ("QUALIFY_REQUIRES_WINDOW_FUNCTION", "42903"), ("RECURSION_LEVEL_LIMIT_EXCEEDED", "42836"),
    ("RECURSION_ROW_LIMIT_EXCEEDED", "42836"), ("REMAINDER_BY_ZERO", "22012"),
    ("SCALAR_SUBQUERY_TOO_MANY_ROWS", "21000"), ("TABLE_OR_VIEW_ALREADY_EXISTS", "42P07"),
    ("TABLE_OR_VIEW_NOT_FOUND", "42P01"), ("TEMP_TABLE_OR_VIEW_ALREADY_EXISTS", "42P07"), ("TRAILING_COMMA_IN_SELECT", "42601"),
    ("UDTF_ALIAS_NUMBER_MISMATCH", "42802"), ("UNABLE_TO_ACQUIRE_MEMORY", "53200"),
    ("UNBOUND_SQL_PARAMETER", "42P02"), ("UNEXPECTED_INPUT_TYPE", "42K09"),
    ("UNION_NOT_SUPPORTED_IN_RECURSIVE_CTE", "42836"), ("UNPIVOT_REQUIRES_VALUE_COLUMNS", "42K0A"),
    ("UNPIVOT_VALUE_DATA_TYPE_MISMATCH", "42K09"), ("UNPIVOT_VALUE_SIZE_MISMATCH", "428C4"),
    ("UNRESOLVED_COLUMN", "42703"), ("UNRESOLVED_COLUMN_AMONG_FIELD_NAMES", "42703"), ("UNRESOLVED_ROUTINE", "42883"),
    ("UNRESOLVED_USING_COLUMN_FOR_JOIN", "42703"), ("UNSUPPORTED_ARROWTYPE", "0A000"),
    ("UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE", "0A000"), ("UNSUPPORTED_EXPR_FOR_WINDOW", "42P20"),
    ("UNSUPPORTED_FEATURE", "0A000"), ("UNSUPPORTED_GENERATOR", "42K0E"),
    ("UNSUPPORTED_SUBQUERY_EXPRESSION_CATEGORY", "0A000"), ("WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE", "42601"),
    ("WRONG_NUM_ARGS", "42605"),
];

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
    fn sql_states_are_sorted_and_found() {
        assert!(SQL_STATES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(KilnError::exec("[DIVIDE_BY_ZERO] Division by zero.").sql_state(), Some("22012"));
        assert_eq!(KilnError::exec("[ARITHMETIC_OVERFLOW.X] overflow").error_class(), Some("ARITHMETIC_OVERFLOW.X"));
        assert_eq!(KilnError::exec("no class here").error_class(), None);
        assert_eq!(KilnError::Parse("Syntax error at or near".into()).sql_state(), Some("42601"));
    }

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(closest_match("stauts", ["status", "amount"]), Some("status"));
        assert_eq!(closest_match("zzzzzz", ["status", "amount"]), None);
    }
}
