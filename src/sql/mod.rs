//! SQL text to statements: queries become unresolved `LogicalPlan`s shaped like Spark's parsed
//! plan (`EXPLAIN EXTENDED`'s "== Parsed Logical Plan =="); commands become [`Statement`]s.
//!
//! Parsing uses sqlparser's `SparkSqlDialect` (with Spark's backslash escapes, `dialect.rs`). The text is tokenized once and split at `;`;
//! `SET`, `EXPLAIN [mode]`, `CREATE TEMPORARY VIEW .. USING` and `CREATE TABLE` (whose Spark
//! clauses come in any order) are read from the tokens here
//! (sqlparser has no Spark form of them), everything else goes through sqlparser's parser.
//!
//! Where kiln's parsed plan differs from Spark's, on purpose:
//! - a select list with an aggregate and no GROUP BY is an `Aggregate` with no grouping
//!   (Spark keeps a `Project` until analysis);
//! - `x BETWEEN lo AND hi` is `(x >= lo) AND (x <= hi)` (Spark prints `'between(x, lo, hi)`);
//! - `date_literal ± INTERVAL 'n' YEAR|MONTH` is folded into a date literal (as the TPC-H
//!   reference plans print it);
//! - `WITH` queries are inlined: each reference becomes `SubqueryAlias name` over the CTE's plan;
//! - `(subquery) AS t(a, b)` renames the subquery's select list in place;
//! - hints (`/*+ BROADCAST(c) */`) are read from the comment after `SELECT` (see `hints`);
//!   in a subquery expression (`IN (SELECT /*+ ... */ ...)`) they are dropped;
//! - `HAVING` is a `Filter` (Spark: `'UnresolvedHaving`).
//!
//! Constructs kiln does not plan (INTERSECT / EXCEPT, window functions, ROLLUP/CUBE mixed with plain grouping columns, OFFSET, ...) are `KilnError::Unsupported` naming the construct and its position;
//! text that does not parse is `KilnError::Parse` with sqlparser's message and position.

mod dialect;
mod expr;
mod hints;
mod params;
pub use params::SqlArgs;
mod query;
pub(crate) use query::fresh_instance;
pub(crate) use expr::restrict_aggregate;
mod statement;
#[cfg(test)]
pub(crate) mod tests;

use dialect::KilnDialect;
use sqlparser::parser::Parser;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Tokenizer};

use crate::error::{KilnError, Result};
use crate::plan::LogicalPlan;

/// Which EXPLAIN output to produce (the mode `EXPLAIN` is written with; `explain` renders it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplainMode {
    /// The physical plan only.
    Simple,
    /// Parsed, analyzed, optimized and physical plans.
    Extended,
    /// Each WholeStageCodegen subtree of the physical plan with its generated Cranelift IR,
    /// or the reason it runs interpreted.
    Codegen,
    /// The optimized logical plan with each node's size estimate, then the physical plan.
    Cost,
    /// A numbered outline of the physical plan followed by one detail block per operator.
    Formatted,
}

/// One parsed SQL statement.
#[derive(Debug, Clone)]
pub enum Statement {
    /// A query, as an unresolved plan.
    Query(LogicalPlan),
    /// `EXPLAIN [EXTENDED | CODEGEN | COST | FORMATTED] query`.
    Explain {
        /// Which plans to show (`Simple` when no mode is written).
        mode: ExplainMode,
        /// The query explained, as an unresolved plan.
        query: LogicalPlan,
    },
    /// `SET key = value`, or `SET key` (show the value: `value` is None).
    SetConfig {
        /// The setting's name, as raw text (`spark.sql.shuffle.partitions`).
        key: String,
        /// The new value, as raw text; None for `SET key`.
        value: Option<String>,
    },
    /// `SET` (the keys set) or `SET -v` (every key with its meaning).
    ListConfig {
        /// `-v`: every key kiln applies, with its meaning and version.
        verbose: bool,
    },
    /// `RESET key` (back to the host's value), or `RESET` (every key).
    ResetConfig {
        /// The key; None for all.
        key: Option<String>,
    },
    /// `CREATE [OR REPLACE] TEMP[ORARY] VIEW name USING parquet OPTIONS (path '...')`
    /// or `CREATE [OR REPLACE] [TEMP[ORARY]] VIEW [IF NOT EXISTS] name [(a, b)] AS query`.
    CreateTempView {
        /// The view's name.
        name: String,
        /// What the view reads.
        source: ViewSource,
        /// `OR REPLACE`: an existing view of that name is replaced rather than an error.
        replace: bool,
        /// `IF NOT EXISTS` (not with TEMPORARY or OR REPLACE): an existing view stays.
        if_not_exists: bool,
        /// `VIEW v(a, b)`: the query's columns renamed by position; empty: as the query names them.
        columns: Vec<String>,
    },
    /// `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name [(col type [NOT NULL], ...)]
    /// [USING parquet [PARTITIONED BY (col, ...)] [LOCATION 'path']] [AS query]`.
    CreateTable {
        /// The table's name.
        name: String,
        /// The declared columns, in order: (name, type, nullable); empty with `AS query`.
        columns: Vec<(String, arrow::datatypes::DataType, bool)>,
        /// `IF NOT EXISTS`: an existing table of that name is kept rather than an error.
        if_not_exists: bool,
        /// `OR REPLACE`: an existing table of that name is replaced.
        replace: bool,
        /// `USING parquet ...`: stored as Parquet files; None: held in memory by the session.
        storage: Option<TableStorage>,
        /// `AS query`: the rows the table starts with, as an unresolved plan.
        query: Option<LogicalPlan>,
    },
    /// `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name [(cols)] USING csv|json [OPTIONS (...)]
    /// [LOCATION 'path']`: a table over existing text files, read at each scan.
    CreateFileTable {
        /// The table's name.
        name: String,
        /// The declared columns, or empty: inferred from the files.
        columns: Vec<(String, arrow::datatypes::DataType, bool)>,
        /// `IF NOT EXISTS`.
        if_not_exists: bool,
        /// `OR REPLACE`.
        replace: bool,
        /// `csv` or `json`.
        format: crate::datasource::text::TextFormat,
        /// LOCATION, or the `path` option.
        path: String,
        /// Every option as written.
        options: Vec<(String, String)>,
        /// `AS query`: written to the path first, in the format.
        query: Option<LogicalPlan>,
    },
    /// `INSERT INTO table [(cols)] VALUES ... | query`. `rows` is a `LocalRelation` for
    /// `VALUES`, else the query's unresolved plan. `columns` is empty when not listed.
    InsertValues {
        /// The target table's name.
        table: String,
        /// The listed target columns; empty when not listed.
        columns: Vec<String>,
        /// The rows inserted: a `LocalRelation` for `VALUES`, else the query's unresolved plan.
        rows: LogicalPlan,
        /// `INSERT OVERWRITE`: the rows replace the table's.
        overwrite: bool,
    },
    /// `DROP TABLE [IF EXISTS] name` and `DROP VIEW [IF EXISTS] name`.
    DropTable {
        /// The table's or view's name.
        name: String,
        /// `IF EXISTS`: a missing name is not an error.
        if_exists: bool,
    },
    /// `ANALYZE TABLE t COMPUTE STATISTICS [NOSCAN | FOR COLUMNS ... | FOR ALL COLUMNS]`.
    AnalyzeTable {
        /// The table's name.
        table: String,
        /// What is collected.
        columns: AnalyzeColumns,
    },
    /// `DESCRIBE [EXTENDED] t [col]`.
    DescribeTable {
        /// The table's name.
        table: String,
        /// A column to describe instead of the table.
        column: Option<String>,
        /// `EXTENDED` / `FORMATTED`: table details, or a column's statistics.
        extended: bool,
    },
    /// `CACHE [LAZY] TABLE name [OPTIONS ('storageLevel' 'LEVEL')] [[AS] query]` (kiln reads
    /// the rows at once, LAZY or not).
    CacheTable {
        /// The table or view cached; with a query, the temporary view it creates.
        name: String,
        /// The storage level asked for (`MEMORY_AND_DISK` unless OPTIONS says otherwise).
        level: crate::catalog::cached::StorageLevel,
        /// `AS query`: a temporary view of it is created and cached.
        query: Option<LogicalPlan>,
    },
    /// `UNCACHE TABLE [IF EXISTS] name`.
    UncacheTable {
        /// The table or view.
        name: String,
        /// `IF EXISTS`: a missing name is not an error.
        if_exists: bool,
    },
    /// `CLEAR CACHE`.
    ClearCache,
}

pub use crate::stats::command::AnalyzeColumns;

/// How a `CREATE TABLE .. USING parquet` table is stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableStorage {
    /// `PARTITIONED BY (col, ...)`: one folder level per column.
    pub partition_by: Vec<String>,
    /// `LOCATION 'path'`: an external table there; None: a managed table in the warehouse.
    pub location: Option<String>,
}

/// What a temporary view reads.
#[derive(Debug, Clone)]
pub enum ViewSource {
    /// Parquet files at a path (a file or a directory).
    Parquet {
        /// The `path` option: a Parquet file, or a directory of them.
        path: String,
    },
    /// CSV or JSON files at a path, with Spark's options (`header`, `sep`, `mode`, ...).
    Files {
        /// `USING csv` or `json`.
        format: crate::datasource::text::TextFormat,
        /// The `path` option: a file, or a directory of them.
        path: String,
        /// Every option, `path` included, as written.
        options: Vec<(String, String)>,
    },
    /// A query, as an unresolved plan.
    Query(LogicalPlan),
}

/// Session settings that change what SQL text means when it is parsed (Spark's AstBuilder
/// reads them from the session's conf).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// `spark.sql.legacy.interval.enabled`: interval literals are calendar intervals.
    pub legacy_interval: bool,
}

impl ParseOptions {
    /// The options `config` sets.
    pub fn of(config: &crate::config::Config) -> ParseOptions {
        ParseOptions { legacy_interval: config.legacy_interval }
    }
}

/// Parses one or more `;`-separated statements. Empty statements are skipped.
pub fn parse_sql(text: &str) -> Result<Vec<Statement>> {
    parse_sql_with(text, None, ParseOptions::default())
}

/// [`parse_sql`] with the values of the text's parameter markers (`:name` or `?`), bound as
/// literals (see [`SqlArgs`]).
pub fn parse_sql_with_args(text: &str, args: &SqlArgs) -> Result<Vec<Statement>> {
    parse_sql_with(text, Some(args), ParseOptions::default())
}

/// [`parse_sql`] with parameter values, if any, under a session's [`ParseOptions`].
pub fn parse_sql_with(text: &str, args: Option<&SqlArgs>, options: ParseOptions) -> Result<Vec<Statement>> {
    let mut script = Script::new(text, args)?;
    let mut out = vec![];
    while let Some(statements) = script.next(options) {
        out.extend(statements?);
    }
    Ok(out)
}

/// A `;`-separated script read into tokens once and parsed a statement at a time, each under
/// the options in force when it is reached (a SET in the script changes how the statements
/// after it parse, as in Spark, which parses each statement when it runs).
pub(crate) struct Script<'a> {
    text: &'a str,
    tokens: Vec<TokenWithSpan>,
    statements: std::vec::IntoIter<std::ops::Range<usize>>,
}

impl<'a> Script<'a> {
    /// The script's tokens, parameter markers bound to `args`.
    pub(crate) fn new(text: &'a str, args: Option<&SqlArgs>) -> Result<Script<'a>> {
        let tokens = script_tokens(text, args).map_err(|e| with_caret(e, text))?;
        let mut ranges = vec![];
        let mut start = 0;
        for (i, t) in tokens.iter().enumerate() {
            if t.token == Token::SemiColon {
                ranges.push(start..i);
                start = i + 1;
            }
        }
        ranges.push(start..tokens.len());
        ranges.retain(|r| !tokens[r.clone()].iter().all(|t| matches!(t.token, Token::Whitespace(_) | Token::EOF)));
        Ok(Script { text, tokens, statements: ranges.into_iter() })
    }

    /// The next statement parsed under `options` (None after the last).
    pub(crate) fn next(&mut self, options: ParseOptions) -> Option<Result<Vec<Statement>>> {
        let segment = &self.tokens[self.statements.next()?];
        let before = expr::LEGACY_INTERVAL.with(|l| l.replace(options.legacy_interval));
        // A stack of its own costs a mapping and an unmapping per statement (which stops every
        // core to flush its address translations): only when the thread's may not hold it.
        let tokens = segment.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).count();
        let fits = stacker::remaining_stack().is_some_and(|left| left >= PARSE_STACK_BASE + tokens * PARSE_STACK_PER_TOKEN);
        let parsed = if fits { statement::parse_segment(self.text, segment) } else { stacker::grow(PARSE_STACK_BYTES, || statement::parse_segment(self.text, segment)) };
        expr::LEGACY_INTERVAL.with(|l| l.set(before));
        Some(parsed.map_err(|e| with_caret(placed_at_end(e, segment), self.text)))
    }
}

fn script_tokens(text: &str, args: Option<&SqlArgs>) -> Result<Vec<TokenWithSpan>> {
    let tokens = Tokenizer::new(&KilnDialect, text)
        .with_unescape(false)
        .tokenize_with_location()
        .map_err(|e| KilnError::Parse(e.to_string()))?;
    let tokens = unescaped(tokens);
    let tokens = literal_suffixes(tokens)?;
    let tokens = match args {
        Some(args) => params::bind(text, tokens, args)?,
        None => tokens,
    };
    Ok(inline_tables(tokens))
}

/// String literals and quoted names read as Spark reads them (the tokenizer keeps them as
/// written): Spark's escapes in strings, a doubled quote in a quoted name; `r'...'` / `R"..."`
/// (a raw string: `r` glued to the quote) keep their text as written.
fn unescaped(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    for mut t in tokens {
        let raw_prefix = matches!(out.last().map(|p| &p.token), Some(Token::Word(w)) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("r"));
        t.token = match t.token {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) if raw_prefix => {
                if let Some(prefix) = out.pop() {
                    t.span.start = prefix.span.start;
                }
                Token::SingleQuotedString(s)
            }
            Token::SingleQuotedString(s) => Token::SingleQuotedString(dialect::unescape_spark(&s, '\'')),
            Token::DoubleQuotedString(s) => Token::DoubleQuotedString(dialect::unescape_spark(&s, '"')),
            Token::Word(mut w) => {
                if let Some(q) = w.quote_style {
                    w.value = w.value.replace(&format!("{q}{q}"), &q.to_string());
                }
                Token::Word(w)
            }
            other => other,
        };
        out.push(t);
    }
    out
}

/// The stack one statement is parsed on: reserved, and used only as deep as the input goes.
const PARSE_STACK_BYTES: usize = 256 << 20;
/// The stack a parse may take per token: sqlparser drops a left-deep `a + b + ...` or UNION
/// chain by recursion, at most about 50 bytes a token as measured; with room to spare.
const PARSE_STACK_PER_TOKEN: usize = 128;
/// The stack a parse takes besides: its nesting is bounded (sqlparser's recursion limit, kiln's
/// MAX_DEPTH), and the deepest such statement parsed within 64 KiB.
const PARSE_STACK_BASE: usize = 256 << 10;

/// Spark's typed numeric literals, `1.5D` `2F` `10L` `1Y` `3S` `1.5BD` `20E2BD`: the tokenizer
/// reads a number and a word; they become one number token of that type (`Y`, `S` and `F` stay
/// on the number's text, which `expr::number` reads; `BD` becomes a plain decimal's text).
/// A number glued to any other word is Spark's identifier (`1a`, `1E2L`), or for a decimal
/// point (`1.5a`, `1.5L`) a syntax error, as Spark's lexer has them.
fn literal_suffixes(tokens: Vec<TokenWithSpan>) -> Result<Vec<TokenWithSpan>> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut it = tokens.into_iter().peekable();
    while let Some(mut t) = it.next() {
        if let Token::Number(n, long) = &t.token {
            let (n, long) = (n.clone(), *long);
            let word = match it.peek().map(|next| &next.token) {
                Some(Token::Word(w)) if w.quote_style.is_none() => Some(w.value.clone()),
                _ => None,
            };
            let exponent = n.contains(['e', 'E']);
            let point = n.contains('.');
            let suffix = word.as_deref().map(str::to_ascii_uppercase);
            let replaced = match (suffix.as_deref(), long) {
                (None, true) if point || exponent => Some(glued_number(&n, "L", t.span)?),
                (None, _) => None,
                (Some("D"), false) if exponent => Some(Token::Number(n.clone(), false)),
                (Some("D"), false) => Some(Token::Number(format!("{n}E0"), false)),
                (Some("F"), false) => Some(Token::Number(format!("{n}F"), false)),
                (Some("L"), false) if !point && !exponent => Some(Token::Number(n.clone(), true)),
                (Some(s @ ("Y" | "S")), false) if !point && !exponent => Some(Token::Number(format!("{n}{s}"), false)),
                (Some("BD"), false) => Some(Token::Number(plain_decimal(&n).ok_or_else(|| parse_error(format!("invalid numeric literal {n}BD"), t.span))?, false)),
                (Some(_), _) => {
                    let w = word.as_deref().unwrap_or_default();
                    Some(glued_number(&n, &format!("{}{w}", if long { "L" } else { "" }), t.span)?)
                }
            };
            if let Some(token) = replaced {
                if suffix.is_some() {
                    if let Some(word) = it.next() {
                        t.span.end = word.span.end;
                    }
                }
                t.token = token;
            }
        }
        out.push(t);
    }
    Ok(out)
}

/// Spark's inline tables where sqlparser wants parenthesized rows in a FROM clause: rows
/// without parentheses (`VALUES 1, 2`) get them, and a VALUES that is a whole query (at a
/// statement's start, in parentheses, after a set operator, or after a CREATE's `AS`) is read as
/// `SELECT * FROM VALUES ...`, so that its alias (`VALUES 1 T(col)`, `AS VALUES (..) AS T(a, b)`)
/// names the columns as in Spark. sqlparser itself finds where each row ends.
fn inline_tables(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let is_word = |t: &TokenWithSpan, kw: Keyword| matches!(&t.token, Token::Word(w) if w.keyword == kw && w.quote_style.is_none());
    let significant = |t: &&TokenWithSpan| !matches!(t.token, Token::Whitespace(_));
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if !is_word(&tokens[i], Keyword::VALUES) {
            out.push(tokens[i].clone());
            i += 1;
            continue;
        }
        let span = tokens[i].span;
        let before = out.iter().rev().find(significant);
        let statement_start = out.iter().rposition(|t| t.token == Token::SemiColon).map_or(0, |p| p + 1);
        let creates = out[statement_start..].iter().find(significant).is_some_and(|t| is_word(t, Keyword::CREATE));
        let whole_query = match before {
            None => true,
            Some(t) if t.token == Token::SemiColon || t.token == Token::LParen => true,
            Some(t) => {
                [Keyword::UNION, Keyword::EXCEPT, Keyword::INTERSECT, Keyword::MINUS, Keyword::ALL, Keyword::DISTINCT].iter().any(|k| is_word(t, *k))
                    || (creates && is_word(t, Keyword::AS))
            }
        };
        // The rows: each an expression; a bare one gets parentheses.
        let rest = &tokens[i + 1..];
        let dialect = KilnDialect;
        let mut parser = Parser::new(&dialect).with_tokens_with_locations(rest.to_vec());
        let mut rows = vec![];
        loop {
            let start = parser.index();
            if parser.parse_expr().is_err() {
                rows.clear();
                break;
            }
            rows.push((start, parser.index()));
            if !parser.consume_token(&Token::Comma) {
                break;
            }
        }
        // A table alias after the rows (`AS T(a, b)`, `T(col)`); without one the VALUES stays
        // sqlparser's (Spark's LocalRelation, no Project).
        let aliased = !rows.is_empty() && matches!(&parser.peek_token_ref().token, Token::Word(w) if w.keyword == Keyword::AS || w.keyword == Keyword::NoKeyword);
        if whole_query && aliased {
            for token in [Token::make_keyword("SELECT"), Token::Mul, Token::make_keyword("FROM")] {
                out.push(TokenWithSpan { token, span });
                out.push(TokenWithSpan { token: Token::Whitespace(sqlparser::tokenizer::Whitespace::Space), span });
            }
        }
        out.push(tokens[i].clone());
        i += 1;
        let bare = |(start, end): &(usize, usize)| {
            let first = rest[*start..*end].iter().find(significant);
            !matches!(first.map(|t| &t.token), Some(Token::LParen))
        };
        if rows.is_empty() || !rows.iter().any(bare) {
            continue;
        }
        let mut at = 0;
        for row in &rows {
            out.extend(rest[at..row.0].iter().cloned());
            if bare(row) {
                out.push(TokenWithSpan { token: Token::LParen, span });
                out.extend(rest[row.0..row.1].iter().cloned());
                out.push(TokenWithSpan { token: Token::RParen, span });
            } else {
                out.extend(rest[row.0..row.1].iter().cloned());
            }
            at = row.1;
        }
        i += at;
    }
    out
}

/// A number with letters glued on (`1a`, `1E2L`): Spark's identifier, or with a decimal point
/// (`1.5a`) a syntax error.
fn glued_number(n: &str, word: &str, span: Span) -> Result<Token> {
    if n.contains('.') {
        return Err(parse_error(format!("[PARSE_SYNTAX_ERROR] Syntax error at or near '{n}{word}'"), span));
    }
    Ok(Token::make_word(&format!("{n}{word}"), None))
}

/// `20E2`, `1.5E-3`, `1.0` as a plain decimal's text (`2000.`, `0.0015`, `1.0`), keeping the
/// scale `BigDecimal` gives it (never below 0).
fn plain_decimal(n: &str) -> Option<String> {
    let (mantissa, exponent) = match n.find(['e', 'E']) {
        Some(i) => (&n[..i], n[i + 1..].parse::<i64>().ok()?),
        None => (n, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{int}{frac}");
    // Past 38 digits either way the literal is out of range; keep the text short.
    let scale = (frac.len() as i64 - exponent).clamp(-100, 100);
    Some(if scale <= 0 {
        format!("{digits}{}.", "0".repeat((-scale) as usize))
    } else {
        let scale = scale as usize;
        let padded = format!("{}{digits}", "0".repeat((scale + 1).saturating_sub(digits.len())));
        let (i, f) = padded.split_at(padded.len() - scale);
        format!("{i}.{f}")
    })
}

/// Parses text holding exactly one query into its unresolved plan.
pub fn parse_query(text: &str) -> Result<LogicalPlan> {
    let mut stmts = parse_sql(text)?;
    match (stmts.pop(), stmts.is_empty()) {
        (Some(Statement::Query(plan)), true) => Ok(plan),
        (None, _) => Err(KilnError::Parse("expected a query, found no statement".into())),
        _ => Err(KilnError::Parse("expected exactly one query".into())),
    }
}

/// Parses one SQL expression (`a + 1`, `sum(x) > 3`, `a + 1 AS b`) into its unresolved form, as it would
/// appear in a query.
pub fn parse_expr(text: &str) -> Result<crate::expr::Expr> {
    let dialect = KilnDialect;
    let mut parser = Parser::new(&dialect).try_with_sql(text).map_err(parser_error)?;
    let e = expr::convert_expr(&parser.parse_expr().map_err(parser_error)?)?;
    // `expr("sum(x) AS total")` names the column, as in Spark.
    let alias = match parser.parse_keyword(sqlparser::keywords::Keyword::AS) {
        true => Some(parser.parse_identifier().map_err(parser_error)?.value),
        false => None,
    };
    let next = parser.peek_token();
    if next.token != Token::EOF {
        return Err(parse_error(format!("unexpected {} after the expression", next.token), next.span));
    }
    Ok(match alias {
        Some(name) => e.alias(name),
        None => e,
    })
}

/// Parses a SQL type name (`INT`, `decimal(10,2)`, `string`, ...) into its Arrow type.
pub fn parse_data_type(text: &str) -> Result<arrow::datatypes::DataType> {
    let dialect = KilnDialect;
    let mut parser = Parser::new(&dialect).try_with_sql(text).map_err(parser_error)?;
    let dt = parser.parse_data_type().map_err(parser_error)?;
    let next = parser.peek_token();
    if next.token != Token::EOF {
        return Err(parse_error(format!("unexpected {} after the type", next.token), next.span));
    }
    expr::sql_data_type(&dt, Span::empty())
}

/// A schema as Spark's `DataType.fromDDL` reads it for from_json / from_csv: a type
/// (`struct<a:int>`, `array<int>`, `map<string,int>`), or a column list (`a INT, b STRING`) as a
/// struct; PARSE_SYNTAX_ERROR when it is neither.
pub fn schema_from_ddl(text: &str) -> Result<arrow::datatypes::DataType> {
    parse_data_type(text).or_else(|_| parse_data_type(&format!("STRUCT<{text}>"))).map_err(|e| {
        let near = text.split_whitespace().nth(1).unwrap_or(text);
        KilnError::Parse(format!("[PARSE_SYNTAX_ERROR] Syntax error at or near '{near}' in the schema '{text}' ({e}). SQLSTATE: 42601"))
    })
}

/// An `Unsupported` error naming the construct and, when known, where it is.
pub(crate) fn unsupported(what: impl std::fmt::Display, span: Span) -> KilnError {
    KilnError::Unsupported(format!("{what}{}", at(span.start)))
}

/// A `Parse` error naming the problem and, when known, where it is.
pub(crate) fn parse_error(what: impl std::fmt::Display, span: Span) -> KilnError {
    KilnError::Parse(format!("{what}{}", at(span.start)))
}

/// ` at Line: l, Column: c` as sqlparser writes positions, or nothing for an unknown one.
fn at(loc: Location) -> String {
    if loc.line == 0 {
        String::new()
    } else {
        format!(" at Line: {}, Column: {}", loc.line, loc.column)
    }
}

/// A syntax error that ran into the end of its statement (sqlparser's `found: EOF` has no
/// position) placed just after the statement's last token, as Spark's `end of input`.
fn placed_at_end(e: KilnError, segment: &[TokenWithSpan]) -> KilnError {
    match e {
        KilnError::Parse(m) if position_in(&m).is_none() && m.contains("found: EOF") => {
            let end = tokens_span(segment).end;
            KilnError::Parse(format!("{}{}", m.replace("found: EOF", "found: end of input"), at(end)))
        }
        e => e,
    }
}

/// The `(line, column)` a message ends with (` at Line: l, Column: c`), 1-based.
fn position_in(message: &str) -> Option<(u64, u64)> {
    let rest = &message[message.rfind(" at Line: ")? + " at Line: ".len()..];
    let (line, column) = rest.split_once(", Column: ")?;
    let digits = |s: &str| s.chars().take_while(char::is_ascii_digit).collect::<String>().parse::<u64>().ok();
    Some((digits(line)?, digits(column)?)).filter(|(l, c)| *l > 0 && *c > 0)
}

/// Widest stretch of a long line shown around the position.
const CARET_WINDOW: usize = 100;

/// A syntax error or an unsupported construct with a position, followed by the line it is on
/// and a caret under the position, as DuckDB shows them:
///
/// ```text
/// LINE 1: SELECT (1 + 2
///                      ^
/// ```
fn with_caret(e: KilnError, text: &str) -> KilnError {
    let context = |m: &str| {
        let (line, column) = position_in(m)?;
        let line_text: Vec<char> = text.lines().nth(usize::try_from(line).ok()? - 1)?.chars().map(|c| if c == '\t' { ' ' } else { c }).collect();
        let column = usize::try_from(column).ok()? - 1;
        if column > line_text.len() {
            return None;
        }
        // A long line is cut to a window around the position, `...` marking what is left out.
        let start = if line_text.len() > CARET_WINDOW { column.saturating_sub(CARET_WINDOW / 2).min(line_text.len() - CARET_WINDOW) } else { 0 };
        let end = (start + CARET_WINDOW).min(line_text.len());
        let (before, after) = (if start > 0 { "..." } else { "" }, if end < line_text.len() { "..." } else { "" });
        let label = format!("LINE {line}: {before}");
        let shown: String = line_text[start..end].iter().collect();
        Some(format!("\n{label}{shown}{after}\n{}^", " ".repeat(label.chars().count() + column - start)))
    };
    match e {
        KilnError::Parse(m) => match context(&m) {
            Some(c) => KilnError::Parse(m + &c),
            None => KilnError::Parse(m),
        },
        KilnError::Unsupported(m) => match context(&m) {
            Some(c) => KilnError::Unsupported(m + &c),
            None => KilnError::Unsupported(m),
        },
        e => e,
    }
}

/// sqlparser's message without its `sql parser error: ` prefix (ours says `syntax error: `).
fn parser_error(e: sqlparser::parser::ParserError) -> KilnError {
    let msg = e.to_string();
    KilnError::Parse(msg.strip_prefix("sql parser error: ").unwrap_or(&msg).to_string())
}

/// The span of a token run, first to last non-whitespace token.
fn tokens_span(tokens: &[TokenWithSpan]) -> Span {
    let mut sig = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF));
    match (sig.next(), sig.next_back()) {
        (Some(first), Some(last)) => Span::new(first.span.start, last.span.end),
        (Some(only), None) => only.span,
        _ => Span::empty(),
    }
}
