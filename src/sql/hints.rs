//! Hint comments: `SELECT /*+ BROADCAST(c), MERGE(a, b) */ ...`. sqlparser's Spark dialect
//! skips comments, so the hints are read from the token stream: a `/*+ ... */` comment right
//! after a `SELECT` keyword belongs to that SELECT, keyed by the keyword's position.

use std::collections::HashMap;

use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Whitespace};

use super::parse_error;
use crate::error::Result;

/// One hint statement: its name as written and its parameters (relation names).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HintStatement {
    /// `BROADCAST`, `merge`, ...
    pub name: String,
    /// The names inside the parentheses, unquoted (`db.t` stays one dotted name).
    pub params: Vec<String>,
}

/// The hints of every SELECT in a statement, by the position of its `SELECT` keyword.
pub(crate) type SelectHints = HashMap<(u64, u64), Vec<HintStatement>>;

/// Finds the hint comment after each `SELECT` keyword of `tokens`.
pub(crate) fn select_hints(tokens: &[TokenWithSpan]) -> Result<SelectHints> {
    let mut out = SelectHints::new();
    for (i, t) in tokens.iter().enumerate() {
        let Token::Word(w) = &t.token else { continue };
        if !w.value.eq_ignore_ascii_case("SELECT") || w.quote_style.is_some() {
            continue;
        }
        let comment = tokens[i + 1..]
            .iter()
            .take_while(|n| matches!(n.token, Token::Whitespace(_)))
            .find_map(|n| match &n.token {
                Token::Whitespace(Whitespace::MultiLineComment(c)) => c.strip_prefix('+').map(|body| (body, n.span)),
                _ => None,
            });
        if let Some((body, span)) = comment {
            out.insert(key(t.span.start), parse_hint_body(body, span)?);
        }
    }
    Ok(out)
}

/// The map key of a `SELECT` keyword's position.
pub(crate) fn key(loc: Location) -> (u64, u64) {
    (loc.line, loc.column)
}

/// `BROADCAST(c), MERGE(a, b) SHUFFLE_HASH` -> hint statements (separated by commas or spaces).
fn parse_hint_body(body: &str, span: Span) -> Result<Vec<HintStatement>> {
    let mut out = vec![];
    let mut rest = body.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    while !rest.is_empty() {
        let name_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
        if name_len == 0 {
            return Err(parse_error(format!("malformed hint `/*+{body}*/`: expected a hint name at `{rest}`"), span));
        }
        let name = rest[..name_len].to_string();
        rest = rest[name_len..].trim_start();
        let mut params = vec![];
        if let Some(after) = rest.strip_prefix('(') {
            let close = after
                .find(')')
                .ok_or_else(|| parse_error(format!("malformed hint `/*+{body}*/`: `{name}(` is not closed"), span))?;
            params = after[..close]
                .split(',')
                .map(|p| p.trim().split('.').map(|part| part.trim().trim_matches('`')).collect::<Vec<_>>().join("."))
                .filter(|p| !p.is_empty())
                .collect();
            rest = &after[close + 1..];
        }
        out.push(HintStatement { name, params });
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hs(name: &str, params: &[&str]) -> HintStatement {
        HintStatement { name: name.into(), params: params.iter().map(|p| p.to_string()).collect() }
    }

    #[test]
    fn hint_bodies_split_into_statements() {
        let body = |b: &str| parse_hint_body(b, Span::empty());
        assert_eq!(body(" BROADCAST(c) ").unwrap(), vec![hs("BROADCAST", &["c"])]);
        assert_eq!(body("merge(a, `b`), SHUFFLE_HASH(db.t) MAPJOIN").unwrap(), vec![
            hs("merge", &["a", "b"]),
            hs("SHUFFLE_HASH", &["db.t"]),
            hs("MAPJOIN", &[])
        ]);
        assert!(body("BROADCAST(c").unwrap_err().to_string().contains("not closed"));
        assert!(body("(c)").is_err());
    }
}
