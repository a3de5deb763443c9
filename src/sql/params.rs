//! Parameter markers, as Spark 3.4+'s `spark.sql(query, args)`: `:name` (named) or `?`
//! (positional) stand for a value anywhere a literal may. Markers are replaced by literal
//! tokens after the text is tokenized, so a value is never read as SQL: the string
//! `p' OR '1'='1` stays one string literal.

use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Tokenizer};

use super::dialect::KilnDialect;
use crate::error::{KilnError, Result};
use crate::types::ScalarValue;

/// The values of a parameterized query: by name for `:name` markers, by position for `?`.
///
/// Made from an array or a `Vec` of values (positional) or of `(name, value)` pairs (named);
/// a value is anything that converts into a [`ScalarValue`] (`i32`, `i64`, `f64`, `bool`,
/// `&str`, `String`, or a `ScalarValue` for a date, decimal, timestamp or typed NULL).
///
/// ```
/// use kiln::{Session, SqlArgs};
/// let named: SqlArgs = [("lo", 1)].into();
/// let positional: SqlArgs = ["a", "b"].into();
/// # let _ = (named, positional);
/// ```
#[derive(Debug, Clone)]
pub enum SqlArgs {
    /// Values of `:name` markers.
    Named(Vec<(String, ScalarValue)>),
    /// Values of `?` markers, in the order the markers appear.
    Positional(Vec<ScalarValue>),
}

impl<V: Into<ScalarValue>, const N: usize> From<[V; N]> for SqlArgs {
    fn from(values: [V; N]) -> SqlArgs {
        SqlArgs::Positional(values.into_iter().map(Into::into).collect())
    }
}

impl<V: Into<ScalarValue>> From<Vec<V>> for SqlArgs {
    fn from(values: Vec<V>) -> SqlArgs {
        SqlArgs::Positional(values.into_iter().map(Into::into).collect())
    }
}

impl<K: Into<String>, V: Into<ScalarValue>, const N: usize> From<[(K, V); N]> for SqlArgs {
    fn from(values: [(K, V); N]) -> SqlArgs {
        SqlArgs::Named(values.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

impl<K: Into<String>, V: Into<ScalarValue>> From<Vec<(K, V)>> for SqlArgs {
    fn from(values: Vec<(K, V)>) -> SqlArgs {
        SqlArgs::Named(values.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
}

macro_rules! scalar_from {
    ($($t:ty => $v:ident => $e:expr),* $(,)?) => {$(
        impl From<$t> for ScalarValue {
            fn from($v: $t) -> ScalarValue {
                $e
            }
        }
    )*};
}
scalar_from!(
    bool => v => ScalarValue::Boolean(v),
    i8 => v => ScalarValue::Int8(v),
    i16 => v => ScalarValue::Int16(v),
    i32 => v => ScalarValue::Int32(v),
    i64 => v => ScalarValue::Int64(v),
    f32 => v => ScalarValue::Float32(v),
    f64 => v => ScalarValue::Float64(v),
    &str => v => ScalarValue::Utf8(v.to_string()),
    String => v => ScalarValue::Utf8(v),
);

/// A marker found in the tokens: its position in `tokens`, how many tokens it spans, and its name
/// (`None` for `?`).
struct Marker {
    at: usize,
    len: usize,
    name: Option<String>,
}

fn markers(tokens: &[TokenWithSpan]) -> Vec<Marker> {
    let mut out = vec![];
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::Placeholder(p) if p == "?" => out.push(Marker { at: i, len: 1, name: None }),
            // `:name`, the colon right before the name (`a ? b : c` has no such colon in Spark SQL).
            Token::Colon => {
                if let Some(TokenWithSpan { token: Token::Word(w), span }) = tokens.get(i + 1) {
                    if w.quote_style.is_none() && span.start == t.span.end {
                        out.push(Marker { at: i, len: 2, name: Some(w.value.clone()) });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// `tokens` with every parameter marker replaced by its value's literal tokens.
pub(super) fn bind(text: &str, tokens: Vec<TokenWithSpan>, args: &SqlArgs) -> Result<Vec<TokenWithSpan>> {
    let found = markers(&tokens);
    if found.iter().any(|m| m.name.is_some()) && found.iter().any(|m| m.name.is_none()) {
        return Err(KilnError::analysis(
            "INVALID_QUERY_MIXED_QUERY_PARAMETERS",
            "Parameterized query must either use positional, or named parameters, but not both.",
        ));
    }
    let mut out = Vec::with_capacity(tokens.len());
    let mut next = 0;
    let mut positional = 0;
    for m in &found {
        out.extend_from_slice(&tokens[next..m.at]);
        next = m.at + m.len;
        let span = tokens[m.at].span;
        let value = match (&m.name, args) {
            (Some(name), SqlArgs::Named(values)) => values.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            (None, SqlArgs::Positional(values)) => {
                positional += 1;
                values.get(positional - 1)
            }
            _ => None,
        };
        let Some(value) = value else {
            let name = m.name.clone().unwrap_or_else(|| format!("_{}", char_offset(text, span)));
            return Err(KilnError::analysis_with(
                "UNBOUND_SQL_PARAMETER",
                format!(
                    "Found the unbound parameter: {name}. Please, fix `args` and provide a mapping of the parameter to either a SQL literal or collection constructor functions such as `map()`, `array()`, `struct()`."
                ),
                &[("name", &name)],
            ));
        };
        out.extend(literal_tokens(value, span)?);
    }
    out.extend_from_slice(&tokens[next..]);
    Ok(out)
}

/// The marker's offset in characters from the start of the text (Spark names an unbound `?`
/// by it: `_7`).
fn char_offset(text: &str, span: Span) -> usize {
    let line = usize::try_from(span.start.line).unwrap_or(1).max(1);
    let column = usize::try_from(span.start.column).unwrap_or(1).max(1);
    text.split_inclusive('\n').take(line - 1).map(|l| l.chars().count()).sum::<usize>() + column - 1
}

/// A value as the tokens of a literal of its type. A string is one string token; other values
/// are written as Spark literal text (`5L`, `2.5E0`, `DATE '2024-01-31'`) and tokenized alone.
fn literal_tokens(value: &ScalarValue, span: Span) -> Result<Vec<TokenWithSpan>> {
    if let ScalarValue::Utf8(s) = value {
        return Ok(vec![TokenWithSpan::new(Token::SingleQuotedString(s.clone()), span)]);
    }
    let text = literal_text(value)?;
    let tokens = Tokenizer::new(&KilnDialect, &text).tokenize_with_location().map_err(|e| KilnError::internal(format!("parameter literal {text}: {e}")))?;
    let mut tokens: Vec<TokenWithSpan> = super::literal_suffixes(tokens)?
        .into_iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF))
        .map(|t| TokenWithSpan::new(t.token, span))
        .collect();
    // A negative number stays one operand wherever the marker stands (`x * ?`).
    if tokens.first().is_some_and(|t| t.token == Token::Minus) {
        tokens.insert(0, TokenWithSpan::new(Token::LParen, span));
        tokens.push(TokenWithSpan::new(Token::RParen, span));
    }
    Ok(tokens)
}

fn literal_text(value: &ScalarValue) -> Result<String> {
    let non_finite = |v: f64, ty: &str| {
        let word = if v.is_nan() { "NaN" } else if v > 0.0 { "Infinity" } else { "-Infinity" };
        format!("CAST('{word}' AS {ty})")
    };
    Ok(match value {
        ScalarValue::Null(t) if *t == arrow::datatypes::DataType::Null => "NULL".into(),
        ScalarValue::Null(t) => format!("CAST(NULL AS {})", crate::types::sql_type_name(t)),
        ScalarValue::Boolean(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        ScalarValue::Int8(v) => format!("{v}Y"),
        ScalarValue::Int16(v) => format!("{v}S"),
        ScalarValue::Int32(v) => format!("{v}"),
        ScalarValue::Int64(v) => format!("{v}L"),
        ScalarValue::Float32(v) if v.is_finite() => format!("{v:e}F"),
        ScalarValue::Float32(v) => non_finite(f64::from(*v), "FLOAT"),
        ScalarValue::Float64(v) if v.is_finite() => format!("{v:e}"),
        ScalarValue::Float64(v) => non_finite(*v, "DOUBLE"),
        ScalarValue::Decimal(v, _, s) if *s > 0 => crate::types::format_decimal(*v, *s),
        ScalarValue::Decimal(v, _, s) => format!("{}BD", crate::types::format_decimal(*v, *s)),
        ScalarValue::Date32(d) => format!("DATE '{}'", crate::types::format_date(*d)),
        ScalarValue::Binary(b) => format!("X'{}'", b.iter().map(|x| format!("{x:02X}")).collect::<String>()),
        ScalarValue::Utf8(_) => return Err(KilnError::internal("a string parameter is one token")),
        ScalarValue::Timestamp(..) | ScalarValue::IntervalMicros(..) | ScalarValue::IntervalMonths(..) => value.to_string(),
        // A calendar interval whatever the session's interval literals are.
        ScalarValue::Calendar(..) => format!("CAST('{value}' AS INTERVAL)"),
    })
}
