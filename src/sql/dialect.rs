//! sqlparser's `SparkSqlDialect` with Spark's string literals: the tokenizer keeps a literal's
//! text as written and `unescape_spark` reads it as Spark's `unescapeSQLString` does (`'it\'s'`,
//! `'\n'`, `'\\d'` is `\d`, octal `\101`, `\u0042`, `\U0001F600`; `\%` / `\_` keep their
//! backslash for LIKE). Everything else is the Spark dialect's.

use std::any::TypeId;

use sqlparser::ast::{BinaryOperator, DataType, Expr, Interval, TimezoneInfo, TypedString, Value};
use sqlparser::tokenizer::Token;
use sqlparser::dialect::{Dialect, SparkSqlDialect};
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};

/// A string literal's text between its quotes as Spark reads it: `''` (the literal's quote
/// doubled) is one quote; after a backslash, `u` and 4 hex digits or `U` and 8 are that code
/// point, three octal digits whose first is 0 or 1 that byte's character, `0` NUL, `b` `n` `r`
/// `t` `Z` their control characters, `%` and `_` themselves with the backslash, anything else
/// itself. Spark builds a Java (UTF-16) string: `\uD83D\uDE00` is one character, and a lone
/// surrogate (`\uD800`, `\U0011FFFF`) becomes `?` as Java's UTF-8 encoder writes it.
pub(crate) fn unescape_spark(raw: &str, quote: char) -> String {
    let chars: Vec<char> = raw.chars().collect();
    let mut out: Vec<u16> = Vec::with_capacity(raw.len());
    let push = |out: &mut Vec<u16>, c: char| out.extend(c.encode_utf16(&mut [0; 2]).iter());
    let mut i = 0;
    let hex = |from: usize, n: usize| -> Option<u64> {
        let digits: String = chars.get(from..from + n)?.iter().collect();
        if !digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        u64::from_str_radix(&digits, 16).ok()
    };
    while i < chars.len() {
        let c = chars[i];
        if c == quote && chars.get(i + 1) == Some(&quote) {
            push(&mut out, quote);
            i += 2;
            continue;
        }
        let Some(&next) = chars.get(i + 1).filter(|_| c == '\\') else {
            push(&mut out, c);
            i += 1;
            continue;
        };
        let octal = |k: usize, max: char| chars.get(i + k).is_some_and(|d| ('0'..=max).contains(d));
        if let Some(unit) = hex(i + 2, 4).filter(|_| next == 'u') {
            out.push(unit as u16);
            i += 6;
        } else if let Some(point) = hex(i + 2, 8).filter(|_| next == 'U') {
            // Spark's arithmetic, Java's truncation to a 16-bit char included.
            if point < 0x10000 {
                out.push(point as u16);
            } else {
                out.push(((point - 0x10000) / 0x400 + 0xd800) as u16);
                out.push(((point - 0x10000) % 0x400 + 0xdc00) as u16);
            }
            i += 10;
        } else if octal(1, '1') && octal(2, '7') && octal(3, '7') {
            let v = chars[i + 1..i + 4].iter().fold(0u16, |v, d| v * 8 + (*d as u16 - '0' as u16));
            out.push(v);
            i += 4;
        } else {
            match next {
                '0' => push(&mut out, '\0'),
                'b' => push(&mut out, '\u{8}'),
                'n' => push(&mut out, '\n'),
                'r' => push(&mut out, '\r'),
                't' => push(&mut out, '\t'),
                'Z' => push(&mut out, '\u{1a}'),
                '%' | '_' => {
                    push(&mut out, '\\');
                    push(&mut out, next);
                }
                other => push(&mut out, other),
            }
            i += 2;
        }
    }
    char::decode_utf16(out).map(|c| c.unwrap_or('?')).collect()
}

/// The dialect kiln parses with.
#[derive(Debug, Default)]
pub(crate) struct KilnDialect;

const SPARK: SparkSqlDialect = SparkSqlDialect;
/// Between sqlparser's `+`/`-` (30) and `&` (23), as in Spark's grammar.
const SHIFT_PRECEDENCE: u8 = 25;

impl Dialect for KilnDialect {
    // Checks of the form `dialect_of!(self is SparkSqlDialect)` hold.
    fn dialect(&self) -> TypeId {
        TypeId::of::<SparkSqlDialect>()
    }
    fn supports_string_literal_backslash_escape(&self) -> bool {
        true
    }
    // Spark's `stringLit+`: `'a' 'b'` is `'ab'`.
    fn supports_string_literal_concatenation(&self) -> bool {
        true
    }
    // Spark's trim(trimStr, str) function form.
    fn supports_comma_separated_trim(&self) -> bool {
        true
    }
    fn ignores_wildcard_escapes(&self) -> bool {
        true
    }
    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        SPARK.is_delimited_identifier_start(ch)
    }
    // Spark has no TOP clause: `(subquery) top` names a column.
    fn is_column_alias(&self, kw: &Keyword, parser: &mut Parser) -> bool {
        *kw == Keyword::TOP || SPARK.is_column_alias(kw, parser)
    }
    fn supports_string_literal_column_alias(&self, explicit: bool) -> bool {
        SPARK.supports_string_literal_column_alias(explicit)
    }
    fn supports_string_literal_table_alias(&self, explicit: bool) -> bool {
        SPARK.supports_string_literal_table_alias(explicit)
    }
    fn supports_comparison_in_between_low_bound(&self) -> bool {
        SPARK.supports_comparison_in_between_low_bound()
    }
    fn identifier_quote_style(&self, identifier: &str) -> Option<char> {
        SPARK.identifier_quote_style(identifier)
    }
    fn is_identifier_start(&self, ch: char) -> bool {
        SPARK.is_identifier_start(ch)
    }
    fn is_identifier_part(&self, ch: char) -> bool {
        SPARK.is_identifier_part(ch)
    }
    fn supports_filter_during_aggregation(&self) -> bool {
        SPARK.supports_filter_during_aggregation()
    }
    fn supports_group_by_expr(&self) -> bool {
        SPARK.supports_group_by_expr()
    }
    fn supports_group_by_with_modifier(&self) -> bool {
        SPARK.supports_group_by_with_modifier()
    }
    fn supports_lambda_functions(&self) -> bool {
        SPARK.supports_lambda_functions()
    }
    fn supports_select_wildcard_except(&self) -> bool {
        SPARK.supports_select_wildcard_except()
    }
    fn supports_struct_literal(&self) -> bool {
        SPARK.supports_struct_literal()
    }
    fn supports_nested_comments(&self) -> bool {
        SPARK.supports_nested_comments()
    }
    fn supports_create_table_using(&self) -> bool {
        SPARK.supports_create_table_using()
    }
    fn supports_long_type_as_bigint(&self) -> bool {
        SPARK.supports_long_type_as_bigint()
    }
    fn supports_values_as_table_factor(&self) -> bool {
        SPARK.supports_values_as_table_factor()
    }
    // `INTERVAL '1 day'` (units inside the string) is Spark's too; the value is a literal, so
    // parsing it as a prefix expression loses nothing.
    fn require_interval_qualifier(&self) -> bool {
        false
    }
    // `CAST(s AS INTERVAL YEAR TO MONTH)`: Spark's ANSI interval types name their fields.
    fn supports_interval_options(&self) -> bool {
        true
    }
    fn supports_bang_not_operator(&self) -> bool {
        SPARK.supports_bang_not_operator()
    }
    fn supports_select_item_multi_column_alias(&self) -> bool {
        SPARK.supports_select_item_multi_column_alias()
    }
    fn supports_cte_without_as(&self) -> bool {
        SPARK.supports_cte_without_as()
    }
    fn supports_map_literal_with_angle_brackets(&self) -> bool {
        SPARK.supports_map_literal_with_angle_brackets()
    }
    fn supports_pipe_operator(&self) -> bool {
        SPARK.supports_pipe_operator()
    }
    fn supports_bitwise_shift_operators(&self) -> bool {
        true
    }
    // EXTRACT's field abbreviations (`y`, `mon`, `h`): read as names, resolved by kiln.
    fn allow_extract_custom(&self) -> bool {
        true
    }
    // Spark's `FROM t SELECT ...` and `FROM t` alone (all columns).
    fn supports_from_first_select(&self) -> bool {
        true
    }
    // `a CROSS JOIN b ON cond` / `USING (k)`: Spark's inner join.
    fn supports_cross_join_constraint(&self) -> bool {
        true
    }
    // Spark's shifts bind between `+`/`-` (30) and `&` (23); sqlparser puts them with `^` (22).
    fn get_next_precedence(&self, parser: &Parser) -> Option<Result<u8, ParserError>> {
        match parser.peek_token_ref().token {
            Token::ShiftLeft | Token::ShiftRight => Some(Ok(SHIFT_PRECEDENCE)),
            _ => SPARK.get_next_precedence(parser),
        }
    }
    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        typed_literal(parser).or_else(|| multi_unit_interval(parser))
    }
    fn parse_infix(&self, parser: &mut Parser, expr: &Expr, precedence: u8) -> Option<Result<Expr, ParserError>> {
        // `a >>> b` arrives as `>>` then `>`: Spark's shiftrightunsigned.
        if parser.peek_token_ref().token == Token::ShiftRight && parser.peek_nth_token_ref(1).token == Token::Gt {
            parser.advance_token();
            parser.advance_token();
            return Some(parser.parse_subexpr(SHIFT_PRECEDENCE).map(|right| Expr::BinaryOp {
                left: Box::new(expr.clone()),
                op: BinaryOperator::Custom(">>>".into()),
                right: Box::new(right),
            }));
        }
        // `a ! IN (..)`, `a ! LIKE b`, `a ! BETWEEN ..`: Spark 4 reads `!` as NOT only as a prefix.
        if parser.peek_token_ref().token == Token::ExclamationMark
            && matches!(&parser.peek_nth_token_ref(1).token, Token::Word(w) if matches!(w.keyword, Keyword::IN | Keyword::LIKE | Keyword::ILIKE | Keyword::BETWEEN | Keyword::RLIKE | Keyword::REGEXP | Keyword::SIMILAR))
        {
            return Some(Err(ParserError::ParserError(
                "[SYNTAX_DISCONTINUED.BANG_EQUALS_NOT] Support of the clause or keyword: ! has been discontinued in this context. The '!' keyword is only supported as an alias for the prefix operator 'NOT'. Use the 'NOT' keyword instead for infix clauses such as `NOT LIKE`, `NOT IN`, `NOT BETWEEN`, etc.".into(),
            )));
        }
        if let Some(quantified) = quantified_like(parser, expr) {
            return Some(quantified);
        }
        SPARK.parse_infix(parser, expr, precedence)
    }
}

/// Spark's `x [NOT] LIKE|ILIKE ALL|ANY|SOME (p1, p2, ...)`: each pattern's LIKE (or NOT LIKE),
/// joined by AND for ALL and by OR for ANY / SOME, which is Spark's LikeAll / LikeAny /
/// NotLikeAll / NotLikeAny with their NULL handling. None when the tokens are another form.
fn quantified_like(parser: &mut Parser, expr: &Expr) -> Option<Result<Expr, ParserError>> {
    let word = |parser: &Parser, n: usize| match &parser.peek_nth_token_ref(n).token {
        Token::Word(w) if w.quote_style.is_none() => Some(w.keyword),
        _ => None,
    };
    let negated = word(parser, 0) == Some(Keyword::NOT);
    let at = usize::from(negated);
    let ilike = match word(parser, at) {
        Some(Keyword::LIKE) => false,
        Some(Keyword::ILIKE) => true,
        _ => return None,
    };
    let all = match word(parser, at + 1) {
        Some(Keyword::ALL) => true,
        Some(Keyword::ANY | Keyword::SOME) => false,
        _ => return None,
    };
    if parser.peek_nth_token_ref(at + 2).token != Token::LParen {
        return None;
    }
    for _ in 0..at + 2 {
        parser.advance_token();
    }
    Some((|| {
        parser.expect_token(&Token::LParen)?;
        if parser.peek_token_ref().token == Token::RParen {
            return Err(ParserError::ParserError(
                "[INVALID_SQL_SYNTAX.EMPTY_QUANTIFIED_PATTERN] Invalid SQL syntax: expected at least one pattern for LIKE ALL / ANY / SOME.".into(),
            ));
        }
        let patterns = parser.parse_comma_separated(Parser::parse_expr)?;
        parser.expect_token(&Token::RParen)?;
        let like = |pattern: Expr| {
            let (negated, any, expr, pattern, escape_char) = (negated, false, Box::new(expr.clone()), Box::new(pattern), None);
            if ilike { Expr::ILike { negated, any, expr, pattern, escape_char } } else { Expr::Like { negated, any, expr, pattern, escape_char } }
        };
        let op = if all { BinaryOperator::And } else { BinaryOperator::Or };
        let mut likes = patterns.into_iter().map(like);
        let first = likes.next().ok_or_else(|| ParserError::ParserError("LIKE ALL / ANY needs a pattern".into()))?;
        Ok(likes.fold(first, |acc, next| Expr::Nested(Box::new(Expr::BinaryOp { left: Box::new(acc), op: op.clone(), right: Box::new(next) }))))
    })())
}

/// Spark's multi-unit interval literal, `INTERVAL 1 YEAR 2 MONTHS`, `INTERVAL '30' YEAR '25'
/// MONTH`, `INTERVAL -1 DAY 3 HOURS`, and the units sqlparser does not take alone
/// (`INTERVAL 2 MILLISECONDS`): read as the one string `INTERVAL '1 year 2 months'` is, whose
/// units give the type. None for a single value with a unit sqlparser reads (`INTERVAL 1 DAY`,
/// `INTERVAL '1-2' YEAR TO MONTH`).
fn multi_unit_interval(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    if !matches!(&parser.peek_token_ref().token, Token::Word(w) if w.keyword == Keyword::INTERVAL) {
        return None;
    }
    // A value (`1`, `-1.5`, `'30'`, `-'30'`) and its unit from token `at`: (tokens, text, unit).
    let pair = |at: usize| -> Option<(usize, String, String)> {
        let (sign, at_value) = match &parser.peek_nth_token_ref(at).token {
            Token::Minus => ("-", at + 1),
            Token::Plus => ("", at + 1),
            _ => ("", at),
        };
        let value = match &parser.peek_nth_token_ref(at_value).token {
            Token::Number(n, _) => n.clone(),
            Token::SingleQuotedString(s) => s.trim().to_string(),
            _ => return None,
        };
        let Token::Word(w) = &parser.peek_nth_token_ref(at_value + 1).token else { return None };
        let unit = w.value.to_ascii_lowercase();
        let known = ["year", "month", "week", "day", "hour", "minute", "second", "millisecond", "microsecond", "nanosecond"];
        if w.quote_style.is_some() || !known.contains(&unit.strip_suffix('s').unwrap_or(&unit)) {
            return None;
        }
        let value = match (sign, value.strip_prefix('-')) {
            ("-", Some(positive)) => positive.to_string(),
            _ => format!("{sign}{value}"),
        };
        Some((at_value + 2 - at, value, unit))
    };
    let mut pairs = vec![];
    let mut at = 1;
    while let Some((n, value, unit)) = pair(at) {
        pairs.push((value, unit));
        at += n;
    }
    let sub_second = |u: &str| ["millisecond", "microsecond", "nanosecond"].contains(&u.strip_suffix('s').unwrap_or(u));
    match pairs.as_slice() {
        [] => return None,
        [(_, unit)] if !sub_second(unit) => return None,
        _ => {}
    }
    let span = parser.peek_nth_token_ref(1).span;
    let text = pairs.iter().map(|(v, u)| format!("{v} {u}")).collect::<Vec<_>>().join(" ");
    if let Some((_, unit)) = pairs.iter().find(|(_, u)| u.starts_with("nanosecond")) {
        return Some(Err(ParserError::ParserError(format!(
            "[INVALID_INTERVAL_FORMAT.INVALID_UNIT] Error parsing ' {text}' to interval. Please ensure that the value provided is in a valid format for defining an interval. You can reference the documentation for the correct format. Invalid unit {unit}."
        ))));
    }
    for _ in 0..at {
        parser.advance_token();
    }
    Some(Ok(Expr::Interval(Interval {
        value: Box::new(Expr::Value(Value::SingleQuotedString(text).with_span(span))),
        leading_field: None,
        leading_precision: None,
        last_field: None,
        fractional_seconds_precision: None,
    })))
}

/// Spark's `TIMESTAMP_LTZ '...'` and typed literals with a double-quoted value
/// (`DATE "2015-07-23"`, `TIMESTAMP_NTZ "..."`), which sqlparser does not read as literals.
fn typed_literal(parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
    let Token::Word(w) = &parser.peek_token_ref().token else { return None };
    if w.quote_style.is_some() {
        return None;
    }
    let data_type = match w.value.to_ascii_uppercase().as_str() {
        "TIMESTAMP_LTZ" => DataType::Timestamp(None, TimezoneInfo::None),
        "TIMESTAMP" => DataType::Timestamp(None, TimezoneInfo::None),
        "TIMESTAMP_NTZ" => DataType::TimestampNtz(None),
        "DATE" => DataType::Date,
        _ => return None,
    };
    let next = parser.peek_nth_token_ref(1);
    let (value, span) = match &next.token {
        Token::DoubleQuotedString(s) => (Value::DoubleQuotedString(s.clone()), next.span),
        Token::SingleQuotedString(s) if w.value.eq_ignore_ascii_case("TIMESTAMP_LTZ") => (Value::SingleQuotedString(s.clone()), next.span),
        _ => return None,
    };
    parser.advance_token();
    parser.advance_token();
    Some(Ok(Expr::TypedString(TypedString { data_type, value: value.with_span(span), uses_odbc_syntax: false })))
}
