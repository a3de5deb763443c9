//! One error type for the whole engine. Every user-facing error says what went wrong, where
//! (table, column, file, position) and, where one exists, what to do instead.

use std::fmt;

/// The result type used throughout kiln.
pub type Result<T, E = KilnError> = std::result::Result<T, E>;

/// Everything that can go wrong between SQL text and Arrow batches.
#[derive(Debug, thiserror::Error)]
pub enum KilnError {
    /// The SQL text does not parse. Printed as Spark's message starts,
    /// `[PARSE_SYNTAX_ERROR] Syntax error at or near 'x': ...` (one with its own class as it is).
    #[error("{}", parse_message(.0))]
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
    /// `[("objectName", "`nosuch`")]`: those the error was made with, else read back from its
    /// message by Spark's template for the class (empty where the message does not follow it).
    ///
    /// ```
    /// let session = kiln::Session::new();
    /// let err = session.sql("SELECT CAST('abc' AS INT)").unwrap().collect().unwrap_err();
    /// assert!(err.message_parameters().contains(&("targetType".to_string(), "\"INT\"".to_string())));
    /// ```
    pub fn message_parameters(&self) -> Vec<(String, String)> {
        let mut parameters = match self {
            KilnError::Analysis(a) => a.parameters.clone(),
            _ => vec![],
        };
        if let Some(class) = self.error_class() {
            for (name, value) in parameters_from_message(class, &self.to_string()) {
                if !parameters.iter().any(|(n, _)| *n == name) {
                    parameters.push((name, value));
                }
            }
        }
        parameters
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

/// A syntax error's message with Spark's class and opening words in front: the token it is at
/// is sqlparser's `found: x` (`end of input` unquoted, as Spark writes it).
fn parse_message(message: &str) -> String {
    if bracketed_class(message).is_some() {
        return message.to_string();
    }
    let first_line = message.lines().next().unwrap_or_default();
    let near = first_line.split_once("found: ").map(|(_, rest)| rest.split(" at Line: ").next().unwrap_or(rest));
    match near {
        Some("end of input" | "EOF") => format!("[PARSE_SYNTAX_ERROR] Syntax error at or near end of input: {message}"),
        Some(token) => format!("[PARSE_SYNTAX_ERROR] Syntax error at or near '{token}': {message}"),
        None => format!("[PARSE_SYNTAX_ERROR] Syntax error: {message}"),
    }
}

/// The error class a message starts with, as Spark writes it: `[DIVIDE_BY_ZERO] Division ...`.
fn bracketed_class(message: &str) -> Option<&str> {
    let rest = message.strip_prefix('[')?;
    let class = &rest[..rest.find(']')?];
    let valid = !class.is_empty() && class.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' || c == '.');
    valid.then_some(class)
}

/// Spark's message templates (`error-conditions.json`) of the classes whose parameters kiln
/// writes into the message only: each `<name>` is read back from the text around it.
const TEMPLATES: &[(&str, &str)] = &[
    ("ARITHMETIC_OVERFLOW", "<message>.<alternative>"),
    ("BINARY_ARITHMETIC_OVERFLOW", "<value1> <symbol> <value2> caused overflow. Use <functionName> to ignore"),
    ("CANNOT_MODIFY_CONFIG", "Cannot modify the value of the Spark config: <key>."),
    ("CANNOT_MODIFY_STATIC_CONFIG", "Cannot modify the value of the static Spark config: <key>."),
    ("CANNOT_PARSE_TIMESTAMP", "<message>. Use <func> to tolerate invalid input string"),
    ("CAST_INVALID_INPUT", "The value <expression> of the type <sourceType> cannot be cast to <targetType> because it is malformed."),
    ("CAST_OVERFLOW", "The value <value> of the type <sourceType> cannot be cast to <targetType> due to an overflow."),
    ("DATETIME_FIELD_OUT_OF_BOUNDS", "<rangeMessage>."),
    ("DATETIME_OVERFLOW", "Datetime operation overflow: <operation>."),
    ("DUPLICATED_MAP_KEY", "Duplicate map key <key> was found"),
    ("GROUP_BY_POS_OUT_OF_RANGE", "GROUP BY position <index> is not in select list (valid range is [1, <size>])."),
    ("INVALID_ARRAY_INDEX", "The index <indexValue> is out of bounds. The array has <arraySize> elements."),
    ("INVALID_ARRAY_INDEX_IN_ELEMENT_AT", "The index <indexValue> is out of bounds. The array has <arraySize> elements."),
    ("ORDER_BY_POS_OUT_OF_RANGE", "ORDER BY position <index> is not in select list (valid range is [1, <size>])."),
    ("PATH_NOT_FOUND", "Path does not exist: <path>."),
    ("SQL_CONF_NOT_FOUND", "The SQL config <sqlConf> cannot be found."),
    ("UNRESOLVED_COLUMN.WITH_SUGGESTION", "A column, variable, or function parameter with name <objectName> cannot be resolved. Did you mean one of the following? [<proposal>]."),
    ("UNRESOLVED_COLUMN.WITHOUT_SUGGESTION", "A column, variable, or function parameter with name <objectName> cannot be resolved."),
    ("UNRESOLVED_ROUTINE", "Cannot resolve routine <routineName> on search path <searchPath>."),
    ("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", "The <functionName> requires <expectedNum> parameters but the actual number is <actualNum>. Please, refer to '<docroot>/sql-ref-functions.html' for a fix."),
    ("WRONG_NUM_ARGS.WITH_SUGGESTION", "The <functionName> requires <expectedNum> parameters but the actual number is <actualNum>. If you have to call this function with <legacyNum> parameters, set the legacy configuration <legacyConfKey> to <legacyConfValue>."),
];

/// The ANSI setting Spark names in these classes' messages (kiln's messages may leave it out).
const ANSI_CONFIG: &[(&str, &str)] = &[
    ("ARITHMETIC_OVERFLOW", "config"), ("CAST_INVALID_INPUT", "ansiConfig"), ("CAST_OVERFLOW", "ansiConfig"),
    ("DIVIDE_BY_ZERO", "config"), ("REMAINDER_BY_ZERO", "config"),
];

/// The parameters of a `[CLASS] text` message of `class`, by Spark's template for the class.
fn parameters_from_message(class: &str, message: &str) -> Vec<(String, String)> {
    let main = class.split('.').next().unwrap_or(class);
    let mut out: Vec<(String, String)> = vec![];
    if let Some((_, name)) = ANSI_CONFIG.iter().find(|(c, _)| *c == main) {
        out.push((name.to_string(), "\"spark.sql.ansi.enabled\"".to_string()));
    }
    // The text alone: no `[CLASS]` in front, no SQLSTATE or ANSI hint (Spark's own suffixes) behind.
    let text = message.find(&format!("[{class}]")).map_or(message, |at| &message[at + class.len() + 2..]).trim_start();
    let text = text.find(" SQLSTATE: ").map_or(text, |at| &text[..at]);
    let text = text.split(" If necessary set ").next().unwrap_or(text).trim_end();
    if main == "PARSE_SYNTAX_ERROR" {
        out.extend(syntax_error_parameters(text));
        return out;
    }
    let Some((_, template)) = TEMPLATES.iter().find(|(c, _)| *c == class).or_else(|| TEMPLATES.iter().find(|(c, _)| *c == main)) else {
        return out;
    };
    // Literal text, then `<name>` and the literal after it, in turn; a parameter the message
    // does not frame as the template does ends the reading (those before it hold).
    let Some(lead) = template.find('<') else { return out };
    let (Some(mut rest), mut tpl) = (text.strip_prefix(&template[..lead]), &template[lead..]) else { return out };
    while let Some(close) = tpl.strip_prefix('<').and_then(|t| t.find('>')) {
        let name = &tpl[1..close + 1];
        tpl = &tpl[close + 2..];
        let literal = &tpl[..tpl.find('<').unwrap_or(tpl.len())];
        let last = literal.len() == tpl.len();
        let at = match (literal.is_empty(), last) {
            (true, true) => Some(rest.len()),
            // Two parameters side by side cannot be told apart.
            (true, false) => None,
            (false, true) => rest.strip_suffix(literal).map(str::len).or_else(|| rest.find(literal)),
            (false, false) => rest.find(literal),
        };
        let Some(at) = at else { break };
        out.push((name.to_string(), rest[..at].to_string()));
        rest = &rest[at + literal.len()..];
        tpl = &tpl[literal.len()..];
    }
    out
}

/// PARSE_SYNTAX_ERROR's `error` (the token, quoted, or `end of input`) and `hint`.
fn syntax_error_parameters(text: &str) -> Vec<(String, String)> {
    let token = if let Some(at) = text.find("at or near ") {
        let rest = &text[at + "at or near ".len()..];
        match rest.strip_prefix('\'') {
            _ if rest.starts_with("end of input") => Some("end of input".to_string()),
            Some(quoted) => quoted.find('\'').map(|end| format!("'{}'", &quoted[..end])),
            None => rest.split(|c: char| c.is_whitespace() || c == ':' || c == '.').next().filter(|t| !t.is_empty()).map(str::to_string),
        }
    } else if let Some(at) = text.find("found: ") {
        // sqlparser's `Expected: ..., found: TOKEN at Line: l, Column: c`.
        let rest = &text[at + "found: ".len()..];
        let token = rest.find(" at Line:").map_or(rest, |end| &rest[..end]);
        Some(if token == "EOF" || token == "end of input" { "end of input".to_string() } else { format!("'{token}'") })
    } else {
        None
    };
    token.map(|t| vec![("error".to_string(), t), ("hint".to_string(), String::new())]).unwrap_or_default()
}

/// The SQLSTATE of each error class kiln raises, from Spark's `error-conditions.json`, sorted
/// by class for binary search.
const SQL_STATES: &[(&str, &str)] = &[
    ("ALL_PARTITION_COLUMNS_NOT_ALLOWED", "KD005"), ("AMBIGUOUS_REFERENCE", "42704"),
    ("AMBIGUOUS_REFERENCE_TO_FIELDS", "42000"), ("ARITHMETIC_OVERFLOW", "22003"),
    ("ASSIGNMENT_ARITY_MISMATCH", "42802"), ("BINARY_ARITHMETIC_OVERFLOW", "22003"), ("CANNOT_DECODE_URL", "22546"),
    ("CANNOT_MERGE_INCOMPATIBLE_DATA_TYPE", "42825"), ("CANNOT_MODIFY_CONFIG", "46110"),
    ("CANNOT_MODIFY_STATIC_CONFIG", "46110"), ("CANNOT_PARSE_TIMESTAMP", "22007"),
    ("CANNOT_RESOLVE_STAR_EXPAND", "42704"), ("CAST_INVALID_INPUT", "22018"), ("CAST_OVERFLOW", "22003"),
    ("CAST_OVERFLOW_IN_TABLE_INSERT", "22003"), ("COLUMN_ALREADY_EXISTS", "42711"),
    ("COLUMN_NOT_DEFINED_IN_TABLE", "42703"), ("COLUMN_NOT_FOUND", "42703"),
    ("CREATE_VIEW_COLUMN_ARITY_MISMATCH", "21S01"), ("CREATE_VIEW_WITH_IF_NOT_EXISTS_AND_REPLACE", "42601"),
    ("DATATYPE_MISMATCH", "42K09"), ("DATETIME_FIELD_OUT_OF_BOUNDS", "22023"), ("DATETIME_OVERFLOW", "22008"),
    ("DISTINCT_WINDOW_FUNCTION_UNSUPPORTED", "0A000"), ("DIVIDE_BY_ZERO", "22012"), ("DUPLICATED_MAP_KEY", "23505"),
    ("EXCEPT_OVERLAPPING_COLUMNS", "42702"), ("FAILED_EXECUTE_UDF", "39000"), ("FAILED_FUNCTION_CALL", "38000"), ("FAILED_READ_FILE", "KD001"),
    ("FIELD_NOT_FOUND", "42704"), ("GROUPING_COLUMN_MISMATCH", "42803"), ("GROUPING_ID_COLUMN_MISMATCH", "42803"), ("GROUPING_SIZE_LIMIT_EXCEEDED", "54000"),
    ("GROUP_BY_POS_OUT_OF_RANGE", "42805"), ("INCOMPATIBLE_COLUMN_TYPE", "42825"),
    ("INCOMPATIBLE_DATA_FOR_TABLE", "KD000"), ("INCONSISTENT_BEHAVIOR_CROSS_VERSION", "42K0B"), ("INSERT_COLUMN_ARITY_MISMATCH", "21S01"), ("INTERNAL_ERROR", "XX000"),
    ("INTERVAL_ARITHMETIC_OVERFLOW", "22015"), ("INTERVAL_DIVIDED_BY_ZERO", "22012"),
    ("INVALID_ARRAY_INDEX", "22003"), ("INVALID_ARRAY_INDEX_IN_ELEMENT_AT", "22003"),
    ("INVALID_DATETIME_PATTERN", "22007"), ("INVALID_ESC", "42604"), ("INVALID_EXTRACT_BASE_FIELD_TYPE", "42000"),
    ("INVALID_EXTRACT_FIELD", "42601"), ("INVALID_EXTRACT_FIELD_TYPE", "42000"), ("INVALID_FORMAT", "42601"), ("INVALID_FRACTION_OF_SECOND", "22023"),
    ("INVALID_INDEX_OF_ZERO", "22003"), ("INVALID_INTERVAL_FORMAT", "22006"), ("INVALID_LATERAL_JOIN_TYPE", "42613"),
    ("INVALID_LIMIT_LIKE_EXPRESSION", "42K0E"), ("INVALID_NUMERIC_LITERAL_RANGE", "22003"),
    ("INVALID_PARAMETER_VALUE", "22023"), ("INVALID_PARTITION_COLUMN_DATA_TYPE", "0A000"),
    ("INVALID_QUERY_MIXED_QUERY_PARAMETERS", "42613"), ("INVALID_RECURSIVE_CTE", "42836"),
    ("INVALID_RECURSIVE_REFERENCE", "42836"), ("INVALID_SQL_SYNTAX", "42000"), ("INVALID_SUBQUERY_EXPRESSION", "42823"),
    ("INVALID_TYPED_LITERAL", "42604"), ("INVALID_WHERE_CONDITION", "42903"),
    ("INVALID_WITHIN_GROUP_EXPRESSION", "42K0K"), ("MALFORMED_RECORD_IN_PARSING", "22023"),
    ("MISSING_AGGREGATION", "42803"), ("MISSING_GROUP_BY", "42803"), ("MISSING_WINDOW_SPECIFICATION", "42P20"),
    ("MULTI_ALIAS_WITHOUT_GENERATOR", "42K0E"), ("NESTED_AGGREGATE_FUNCTION", "42607"),
    ("NON_FOLDABLE_ARGUMENT", "42K08"), ("NON_LITERAL_PIVOT_VALUES", "42K08"), ("NOT_NULL_ASSERT_VIOLATION", "42000"),
    ("NULL_MAP_KEY", "2200E"), ("NUMERIC_VALUE_OUT_OF_RANGE", "22003"), ("NUM_COLUMNS_MISMATCH", "42826"),
    ("OPERATION_CANCELED", "HY008"), ("ORDER_BY_POS_OUT_OF_RANGE", "42805"), ("PARSE_SYNTAX_ERROR", "42601"),
    ("PATH_ALREADY_EXISTS", "42K04"), ("PATH_NOT_FOUND", "42K03"), ("PIVOT_VALUE_DATA_TYPE_MISMATCH", "42K09"),
    ("QUALIFY_REQUIRES_WINDOW_FUNCTION", "42903"), ("RECURSION_LEVEL_LIMIT_EXCEEDED", "42836"),
    ("RECURSION_ROW_LIMIT_EXCEEDED", "42836"), ("REMAINDER_BY_ZERO", "22012"),
    ("SCALAR_SUBQUERY_TOO_MANY_ROWS", "21000"), ("SQL_CONF_NOT_FOUND", "42K0I"), ("TABLE_OR_VIEW_ALREADY_EXISTS", "42P07"),
    ("TABLE_OR_VIEW_NOT_FOUND", "42P01"), ("TEMP_TABLE_OR_VIEW_ALREADY_EXISTS", "42P07"), ("TRAILING_COMMA_IN_SELECT", "42601"),
    ("UDTF_ALIAS_NUMBER_MISMATCH", "42802"), ("UNABLE_TO_ACQUIRE_MEMORY", "53200"),
    ("UNBOUND_SQL_PARAMETER", "42P02"), ("UNEXPECTED_INPUT_TYPE", "42K09"),
    ("UNION_NOT_SUPPORTED_IN_RECURSIVE_CTE", "42836"), ("UNPIVOT_REQUIRES_VALUE_COLUMNS", "42K0A"),
    ("UNPIVOT_VALUE_DATA_TYPE_MISMATCH", "42K09"), ("UNPIVOT_VALUE_SIZE_MISMATCH", "428C4"),
    ("UNRESOLVED_COLUMN", "42703"), ("UNRESOLVED_COLUMN_AMONG_FIELD_NAMES", "42703"), ("UNRESOLVED_ROUTINE", "42883"),
    ("UNRESOLVED_USING_COLUMN_FOR_JOIN", "42703"), ("UNSUPPORTED_ARROWTYPE", "0A000"),
    ("UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE", "0A000"), ("UNSUPPORTED_EXPR_FOR_WINDOW", "42P20"),
    ("UNSUPPORTED_FEATURE", "0A000"), ("UNSUPPORTED_GENERATOR", "42K0E"), ("UNSUPPORTED_GROUPING_EXPRESSION", "42K0E"),
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
    fn parameters_are_read_back_by_spark_templates() {
        let p = |e: KilnError| e.message_parameters();
        let cast = KilnError::exec("[CAST_INVALID_INPUT] The value 'abc' of the type \"STRING\" cannot be cast to \"INT\" because it is malformed. Correct the value.");
        assert_eq!(
            p(cast),
            [("ansiConfig", "\"spark.sql.ansi.enabled\""), ("expression", "'abc'"), ("sourceType", "\"STRING\""), ("targetType", "\"INT\"")].map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let overflow = KilnError::exec("[ARITHMETIC_OVERFLOW] integer overflow. Use 'try_add' to tolerate overflow and return NULL instead. If necessary set \"spark.sql.ansi.enabled\" to \"false\" to bypass this error. SQLSTATE: 22003");
        assert_eq!(p(overflow)[1..], [("message", "integer overflow"), ("alternative", " Use 'try_add' to tolerate overflow and return NULL instead.")].map(|(a, b)| (a.to_string(), b.to_string())));
        let range = KilnError::exec("[DATETIME_FIELD_OUT_OF_BOUNDS] Invalid value for MonthOfYear (valid values 1 - 12): 13. SQLSTATE: 22023");
        assert_eq!(p(range), [("rangeMessage".to_string(), "Invalid value for MonthOfYear (valid values 1 - 12): 13".to_string())]);
        let index = KilnError::exec("[INVALID_ARRAY_INDEX] The index 5 is out of bounds. The array has 2 elements. Use `get()`.");
        assert_eq!(p(index), [("indexValue", "5"), ("arraySize", "2")].map(|(a, b)| (a.to_string(), b.to_string())));
        let parse = KilnError::Parse("Expected: an SQL statement, found: SELEC at Line: 1, Column: 1".into());
        assert_eq!(p(parse), [("error", "'SELEC'"), ("hint", "")].map(|(a, b)| (a.to_string(), b.to_string())));
        let end = KilnError::Parse("[PARSE_SYNTAX_ERROR] Syntax error at or near end of input.".into());
        assert_eq!(p(end)[0].1, "end of input");
        // A message in other words than Spark's gives what it frames, no more.
        let suggestion = KilnError::analysis_with("UNRESOLVED_COLUMN.WITH_SUGGESTION", "A column, variable, or function parameter with name `b` cannot be resolved. Did you mean `a`?", &[("objectName", "`b`")]);
        assert_eq!(p(suggestion), [("objectName".to_string(), "`b`".to_string())]);
        assert!(p(KilnError::exec("[NO_SUCH_CLASS] text")).is_empty());
        let args = KilnError::analysis("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", "The `abs` requires 1 parameters but the actual number is 2. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.");
        assert_eq!(p(args)[2..], [("actualNum", "2"), ("docroot", "https://spark.apache.org/docs/latest")].map(|(a, b)| (a.to_string(), b.to_string())));
        let path = KilnError::analysis("PATH_NOT_FOUND", "Path does not exist: file:/a/b.parquet.");
        assert_eq!(p(path), [("path".to_string(), "file:/a/b.parquet".to_string())]);
    }

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(closest_match("stauts", ["status", "amount"]), Some("status"));
        assert_eq!(closest_match("zzzzzz", ["status", "amount"]), None);
    }
}
