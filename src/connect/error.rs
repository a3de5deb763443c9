//! kiln's errors as Spark Connect reports them: a gRPC status whose `ErrorInfo` carries the
//! Java exception classes pyspark maps to its own (`AnalysisException`, `ParseException`, ...),
//! Spark's error class, SQLSTATE and message parameters.

use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::error::KilnError;

/// An error as a client sees it, kept for `FetchErrorDetails`.
#[derive(Clone, Debug)]
pub struct ReportedError {
    /// The Java exception classes, most specific first (pyspark picks the first it knows).
    pub classes: Vec<&'static str>,
    /// Spark's error class, when the error has one.
    pub error_class: Option<String>,
    /// The SQLSTATE of the error class.
    pub sql_state: Option<String>,
    /// The message's parameters by Spark's names.
    pub parameters: Vec<(String, String)>,
    /// The message, `[CLASS] text` as Spark prints it.
    pub message: String,
}

impl ReportedError {
    /// The report of a kiln error.
    pub fn of(err: &KilnError) -> ReportedError {
        let error_class = err.error_class().map(str::to_string);
        let sql_state = err.sql_state().map(str::to_string);
        let mut message = err.to_string();
        // Spark's messages start with the class; kiln's Display adds its own words for some kinds.
        if let Some(class) = &error_class {
            let bracket = format!("[{class}]");
            if let Some(at) = message.find(&bracket) {
                message = message[at..].to_string();
            } else {
                message = format!("{bracket} {message}");
            }
        }
        // ... and end their first line with the SQLSTATE (Spark's getMessage; a query context
        // follows on the next lines).
        if let Some(state) = &sql_state {
            if !message.contains("SQLSTATE: ") {
                let end = message.find('\n').unwrap_or(message.len());
                message.insert_str(end, &format!(" SQLSTATE: {state}"));
            }
        }
        ReportedError { classes: java_classes(err), error_class, sql_state, parameters: err.message_parameters(), message }
    }
    /// A plan the server cannot run, as Spark's `InvalidPlanInput` (pyspark's `SparkConnectException`).
    pub fn invalid_plan(message: impl Into<String>) -> ReportedError {
        ReportedError {
            classes: vec!["org.apache.spark.sql.connect.common.InvalidPlanInput", "org.apache.spark.SparkException"],
            error_class: None,
            sql_state: None,
            parameters: vec![],
            message: message.into(),
        }
    }

    /// The gRPC status: the message, and an `ErrorInfo` whose metadata pyspark reads
    /// (`classes`, `errorClass`, `sqlState`, `messageParameters`, `errorId` for
    /// `FetchErrorDetails`).
    pub fn status(&self, error_id: Option<&str>) -> Status {
        let mut metadata = HashMap::new();
        metadata.insert("classes".to_string(), json_strings(self.classes.iter().copied()));
        if let Some(class) = &self.error_class {
            metadata.insert("errorClass".to_string(), class.clone());
        }
        if let Some(state) = &self.sql_state {
            metadata.insert("sqlState".to_string(), state.clone());
        }
        if !self.parameters.is_empty() {
            let map: serde_json::Map<String, serde_json::Value> = self.parameters.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
            metadata.insert("messageParameters".to_string(), serde_json::Value::Object(map).to_string());
        }
        if let Some(id) = error_id {
            metadata.insert("errorId".to_string(), id.to_string());
        }
        let reason = self.classes.first().copied().unwrap_or("org.apache.spark.SparkException");
        let code = if self.error_class.as_deref() == Some("OPERATION_CANCELED") { Code::Cancelled } else { Code::Internal };
        Status::with_error_details(code, self.message.clone(), ErrorDetails::with_error_info(reason, "org.apache.spark", metadata))
    }
}

fn json_strings<'a>(items: impl Iterator<Item = &'a str>) -> String {
    serde_json::Value::Array(items.map(|s| serde_json::Value::String(s.to_string())).collect()).to_string()
}

/// The exception classes Spark throws for an error like this one, most specific first.
fn java_classes(err: &KilnError) -> Vec<&'static str> {
    const ANALYSIS: &str = "org.apache.spark.sql.AnalysisException";
    const SPARK: &str = "org.apache.spark.SparkException";
    let class = err.error_class().unwrap_or("");
    let main = class.split('.').next().unwrap_or("");
    match err {
        KilnError::Parse(_) => vec!["org.apache.spark.sql.catalyst.parser.ParseException", ANALYSIS],
        KilnError::Analysis(_) if main == "SQL_CONF_NOT_FOUND" => vec!["org.apache.spark.SparkNoSuchElementException", "java.util.NoSuchElementException"],
        KilnError::Analysis(_) | KilnError::Unsupported(_) => vec![ANALYSIS],
        KilnError::Config(_) if main.starts_with("CANNOT_MODIFY") => vec![ANALYSIS],
        KilnError::Config(_) => vec!["java.lang.IllegalArgumentException"],
        KilnError::Cancelled | KilnError::Internal(_) => vec![SPARK],
        KilnError::Execution(_) => match main {
            "DIVIDE_BY_ZERO" | "REMAINDER_BY_ZERO" | "INTERVAL_DIVIDED_BY_ZERO" | "ARITHMETIC_OVERFLOW" | "BINARY_ARITHMETIC_OVERFLOW" | "CAST_OVERFLOW"
            | "NUMERIC_VALUE_OUT_OF_RANGE" | "INTERVAL_ARITHMETIC_OVERFLOW" | "DATETIME_OVERFLOW" => {
                vec!["org.apache.spark.SparkArithmeticException", "java.lang.ArithmeticException"]
            }
            "CAST_INVALID_INPUT" => vec!["org.apache.spark.SparkNumberFormatException", "java.lang.NumberFormatException"],
            "INVALID_ARRAY_INDEX" | "INVALID_ARRAY_INDEX_IN_ELEMENT_AT" => {
                vec!["org.apache.spark.SparkArrayIndexOutOfBoundsException", "java.lang.ArrayIndexOutOfBoundsException"]
            }
            "CANNOT_PARSE_TIMESTAMP" | "DATETIME_FIELD_OUT_OF_BOUNDS" => vec!["org.apache.spark.SparkDateTimeException", "java.time.DateTimeException"],
            "INVALID_PARAMETER_VALUE" => vec!["org.apache.spark.SparkIllegalArgumentException", "java.lang.IllegalArgumentException"],
            _ => vec!["org.apache.spark.SparkRuntimeException"],
        },
        KilnError::Io { .. } | KilnError::Arrow(_) | KilnError::Parquet(_) => vec![SPARK],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_kind_of_error() {
        let parse = ReportedError::of(&KilnError::Parse("at or near 'x'".into()));
        assert_eq!(parse.classes[0], "org.apache.spark.sql.catalyst.parser.ParseException");
        assert_eq!(parse.error_class.as_deref(), Some("PARSE_SYNTAX_ERROR"));
        assert!(parse.message.starts_with("[PARSE_SYNTAX_ERROR]"), "{}", parse.message);
        let div = ReportedError::of(&KilnError::exec("[DIVIDE_BY_ZERO] Division by zero."));
        assert_eq!(div.classes[1], "java.lang.ArithmeticException");
        assert_eq!(div.sql_state.as_deref(), Some("22012"));
        let status = div.status(Some("e1"));
        assert_eq!(status.code(), Code::Internal);
        let info = status.get_details_error_info().expect("an ErrorInfo");
        assert_eq!(info.metadata.get("errorClass").map(String::as_str), Some("DIVIDE_BY_ZERO"));
        assert_eq!(info.metadata.get("errorId").map(String::as_str), Some("e1"));
        // Spark's parameters, read back from the message where kiln made none.
        assert_eq!(info.metadata.get("messageParameters").map(String::as_str), Some(r#"{"config":"\"spark.sql.ansi.enabled\""}"#));
        assert_eq!(div.message, "[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012");
    }
}
