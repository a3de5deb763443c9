//! One `;`-separated statement: Spark's own command forms (SET, EXPLAIN [mode], CREATE
//! TEMPORARY VIEW .. USING) are read from the tokens; the rest goes through sqlparser.

use sqlparser::ast::{self, ColumnOption, ObjectType, TableObject};
use super::dialect::KilnDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan};

use super::expr::{object_name, object_name_parts, sql_data_type};
use super::hints::SelectHints;
use super::query::QueryPlanner;
use super::{parse_error, parser_error, tokens_span, unsupported, AnalyzeColumns, Statement, TableStorage, ViewSource};
use crate::datasource::text::TextFormat;
use crate::error::{KilnError, Result};
use super::ExplainMode;
use sqlparser::keywords::Keyword;

/// Parses the tokens of one statement (no `;` inside). `text` is the whole input, for slicing.
pub(crate) fn parse_segment(text: &str, tokens: &[TokenWithSpan]) -> Result<Vec<Statement>> {
    let mut c = Cursor { tokens, pos: 0 };
    if c.eat_keyword("SET") {
        return set_command(text, c.rest()).map(|s| vec![s]);
    }
    if c.eat_keyword("RESET") {
        let key = raw_text(text, c.rest());
        return Ok(vec![Statement::ResetConfig { key: (!key.is_empty()).then_some(key) }]);
    }
    if c.eat_keyword("EXPLAIN") {
        return explain(text, c).map(|s| vec![s]);
    }
    if let Some(view) = create_view_using(tokens) {
        return view.map(|s| vec![s]);
    }
    if let Some(table) = create_table(text, tokens) {
        return table.map(|s| vec![s]);
    }
    if c.peek_keyword("CACHE") {
        c.next();
        return cache_table(text, c).map(|s| vec![s]);
    }
    if c.eat_keyword("UNCACHE") {
        return uncache_table(c).map(|s| vec![s]);
    }
    if c.peek_keyword("CLEAR") {
        let mut d = Cursor { tokens, pos: c.pos + 1 };
        if d.eat_keyword("CACHE") {
            if let Some(t) = d.peek() {
                return Err(parse_error(format!("unexpected {} after CLEAR CACHE", t.token), t.span));
            }
            return Ok(vec![Statement::ClearCache]);
        }
    }
    if c.peek_keyword("ANALYZE") {
        c.next();
        return analyze_table(c).map(|s| vec![s]);
    }
    if c.peek_keyword("DESCRIBE") || c.peek_keyword("DESC") {
        let mut d = Cursor { tokens, pos: c.pos + 1 };
        // DESCRIBE QUERY / FUNCTION / DATABASE are other statements.
        if !["QUERY", "FUNCTION", "DATABASE", "SCHEMA", "CATALOG", "SELECT", "WITH"].iter().any(|k| d.peek_keyword(k)) {
            return describe_table(d).map(|s| vec![s]);
        }
    }
    let lead = c.peek().map(|t| t.token.to_string().to_uppercase()).unwrap_or_default();
    let dialect = KilnDialect;
    let parsed = Parser::new(&dialect)
        .with_tokens_with_locations(tokens.to_vec())
        .parse_statements()
        .map_err(|e| trailing_comma(tokens).unwrap_or_else(|| parser_error(e)))?;
    let hints = super::hints::select_hints(tokens)?;
    let mut out = vec![];
    for s in &parsed {
        out.extend(convert_statement(s, &lead, tokens_span(tokens), &hints)?);
    }
    Ok(out)
}

/// Spark's error for `SELECT a, FROM t`, at the FROM (sqlparser reads FROM as a column there
/// and fails a token later); None if no comma comes right before a FROM.
fn trailing_comma(tokens: &[TokenWithSpan]) -> Option<KilnError> {
    let mut significant = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_)));
    let mut previous = significant.next()?;
    for t in significant {
        if previous.token == Token::Comma && matches!(&t.token, Token::Word(w) if w.keyword == Keyword::FROM && w.quote_style.is_none()) {
            return Some(parse_error("[TRAILING_COMMA_IN_SELECT] Trailing comma detected in SELECT clause. Remove the trailing comma before the FROM clause.", t.span));
        }
        previous = t;
    }
    None
}

/// Walks the non-whitespace tokens of a statement.
struct Cursor<'a> {
    tokens: &'a [TokenWithSpan],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&mut self) -> Option<&'a TokenWithSpan> {
        while matches!(self.tokens.get(self.pos).map(|t| &t.token), Some(Token::Whitespace(_))) {
            self.pos += 1;
        }
        self.tokens.get(self.pos).filter(|t| t.token != Token::EOF)
    }
    fn next(&mut self) -> Option<&'a TokenWithSpan> {
        let t = self.peek()?;
        self.pos += 1;
        Some(t)
    }
    fn peek_keyword(&mut self, kw: &str) -> bool {
        matches!(self.peek(), Some(TokenWithSpan { token: Token::Word(w), .. }) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
    }
    fn eat_keyword(&mut self, kw: &str) -> bool {
        let found = self.peek_keyword(kw);
        if found {
            self.pos += 1;
        }
        found
    }
    fn eat(&mut self, token: &Token) -> bool {
        let found = self.peek().is_some_and(|t| &t.token == token);
        if found {
            self.pos += 1;
        }
        found
    }
    fn rest(&self) -> &'a [TokenWithSpan] {
        self.tokens.get(self.pos..).unwrap_or(&[])
    }
    /// Where the next token is, for error messages.
    fn span(&mut self) -> Span {
        self.peek().map(|t| t.span).unwrap_or(Span::empty())
    }
    /// A possibly dotted name: `orders`, `db.orders`, `` `my view` ``.
    fn name(&mut self) -> Option<String> {
        let mut parts = vec![word(self.next()?)?];
        while self.eat(&Token::Period) {
            parts.push(word(self.next()?)?);
        }
        Some(parts.join("."))
    }
}

fn word(t: &TokenWithSpan) -> Option<String> {
    match &t.token {
        Token::Word(w) => Some(w.value.clone()),
        _ => None,
    }
}

/// `SET key = value` / `SET key` / `SET` / `SET -v`. Spark reads both sides as raw text (`spark.sql.x=10MB`),
/// so they are sliced from the source; a quoted value or backquoted key loses its quotes.
fn set_command(text: &str, rest: &[TokenWithSpan]) -> Result<Statement> {
    let mut c = Cursor { tokens: rest, pos: 0 };
    if c.eat_keyword("TIME") && c.eat_keyword("ZONE") {
        return set_time_zone(text, c);
    }
    let eq = rest.iter().position(|t| t.token == Token::Eq);
    let (key_tokens, value_tokens) = match eq {
        Some(i) => (rest.get(..i).unwrap_or(&[]), rest.get(i + 1..)),
        None => (rest, None),
    };
    let key = raw_text(text, key_tokens);
    if eq.is_none() && (key.is_empty() || key == "-v") {
        return Ok(Statement::ListConfig { verbose: !key.is_empty() });
    }
    let value = value_tokens.map(|v| raw_text(text, v));
    Ok(Statement::SetConfig { key, value })
}

/// `SET TIME ZONE 'id' | LOCAL | INTERVAL ...`: Spark's shorthand for setting
/// `spark.sql.session.timeZone` (an interval is a fixed offset within 18 hours, whole seconds).
fn set_time_zone(text: &str, mut c: Cursor) -> Result<Statement> {
    let key = "spark.sql.session.timeZone".to_string();
    let span = c.span();
    let value = if c.peek_keyword("LOCAL") {
        c.next();
        crate::types::time_zone::local_zone_id()
    } else if c.peek_keyword("INTERVAL") {
        let interval = raw_text(text, c.rest());
        c.pos = c.tokens.len();
        let micros = match super::parse_expr(&interval)? {
            crate::expr::Expr::Literal(crate::types::ScalarValue::IntervalMicros(us, ..)) => Some(us),
            _ => None,
        };
        let seconds = micros.filter(|us| us % crate::types::timestamp::MICROS_PER_SECOND == 0).map(|us| us / crate::types::timestamp::MICROS_PER_SECOND);
        match seconds.filter(|s| s.abs() <= 18 * 3600) {
            Some(s) => crate::types::time_zone::offset_text(s, ":", false),
            None => return Err(parse_error("[INVALID_INTERVAL_FORMAT.TIMEZONE_INTERVAL_OUT_OF_RANGE] The interval value must be in the range of [-18, +18] hours with second precision.", span)),
        }
    } else {
        match c.next().map(|t| &t.token) {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) if c.peek().is_none() => s.clone(),
            _ => return Err(parse_error("[PARSE_SYNTAX_ERROR] Syntax error at or near 'ZONE': SET TIME ZONE takes a quoted zone id, LOCAL or an INTERVAL.", span)),
        }
    };
    if c.peek().is_some() {
        return Err(parse_error("[PARSE_SYNTAX_ERROR] Syntax error after SET TIME ZONE's value.", c.span()));
    }
    Ok(Statement::SetConfig { key, value: Some(value) })
}

/// The source text a token run covers, trimmed; one quoted token gives its unquoted value.
fn raw_text(text: &str, tokens: &[TokenWithSpan]) -> String {
    let mut sig = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_) | Token::EOF));
    if let (Some(only), None) = (sig.next(), sig.next()) {
        match &only.token {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => return s.clone(),
            Token::Word(w) if w.quote_style.is_some() => return w.value.clone(),
            _ => {}
        }
    }
    let span = tokens_span(tokens);
    match (byte_offset(text, span.start), byte_offset(text, span.end)) {
        (Some(a), Some(b)) if a <= b => text.get(a..b).unwrap_or("").trim().to_string(),
        _ => String::new(),
    }
}

/// The byte offset of a 1-based line/column (columns count characters).
fn byte_offset(text: &str, loc: Location) -> Option<usize> {
    let line = usize::try_from(loc.line).ok()?.checked_sub(1)?;
    let line_start = if line == 0 { 0 } else { text.match_indices('\n').nth(line - 1)?.0 + 1 };
    let rest = text.get(line_start..)?;
    let col = usize::try_from(loc.column).ok()?.checked_sub(1)?;
    rest.char_indices().map(|(i, _)| i).chain(std::iter::once(rest.len())).nth(col).map(|i| line_start + i)
}

/// `EXPLAIN [EXTENDED | CODEGEN | COST | FORMATTED] query`.
fn explain(text: &str, mut c: Cursor) -> Result<Statement> {
    let modes = [
        ("EXTENDED", ExplainMode::Extended),
        ("CODEGEN", ExplainMode::Codegen),
        ("COST", ExplainMode::Cost),
        ("FORMATTED", ExplainMode::Formatted),
    ];
    let mode = modes.iter().find(|(kw, _)| c.eat_keyword(kw)).map(|(_, m)| *m).unwrap_or(ExplainMode::Simple);
    let span = c.span();
    if c.peek().is_none() {
        return Err(parse_error("EXPLAIN needs a query", span));
    }
    if c.peek_keyword("EXPLAIN") {
        return Err(unsupported("EXPLAIN of a statement other than a query", span));
    }
    let mut inner = parse_segment(text, c.rest())?;
    match (inner.pop(), inner.is_empty()) {
        (Some(Statement::Query(query)), true) => Ok(Statement::Explain { mode, query }),
        _ => Err(unsupported("EXPLAIN of a statement other than a query", span)),
    }
}

/// `CREATE [OR REPLACE] TEMP[ORARY] VIEW name USING format [OPTIONS (k 'v', ...)]`, or None
/// when the tokens are some other CREATE (sqlparser parses those).
fn create_view_using(tokens: &[TokenWithSpan]) -> Option<Result<Statement>> {
    let mut c = Cursor { tokens, pos: 0 };
    if !c.eat_keyword("CREATE") {
        return None;
    }
    let replace = c.eat_keyword("OR") && c.eat_keyword("REPLACE");
    let global = c.eat_keyword("GLOBAL");
    if !(c.eat_keyword("TEMPORARY") || c.eat_keyword("TEMP")) || !c.eat_keyword("VIEW") {
        return None;
    }
    let name = c.name()?;
    let span = c.span();
    if !c.eat_keyword("USING") {
        return None;
    }
    if global {
        return Some(Err(unsupported("GLOBAL TEMPORARY VIEW", span)));
    }
    Some(view_using_rest(c, name, replace))
}

fn view_using_rest(mut c: Cursor, name: String, replace: bool) -> Result<Statement> {
    let span = c.span();
    let format = c.next().and_then(word).ok_or_else(|| parse_error("expected a data source format after USING", span))?;
    let text = TextFormat::from_name(&format);
    if text.is_none() && !format.eq_ignore_ascii_case("parquet") {
        return Err(unsupported(format!("data source format {format} (kiln reads parquet, csv and json)"), span));
    }
    let options = if c.eat_keyword("OPTIONS") { options_list(&mut c)? } else { vec![] };
    if let Some(t) = c.peek() {
        return Err(parse_error(format!("unexpected {} after the view definition", t.token), t.span));
    }
    if let (None, Some((key, _))) = (text, options.iter().find(|(k, _)| !k.eq_ignore_ascii_case("path"))) {
        return Err(unsupported(format!("parquet option {key} (kiln reads only path)"), span));
    }
    let path = option_path(&options).ok_or_else(|| parse_error(format!("CREATE TEMPORARY VIEW {name} USING {format} needs OPTIONS (path '...')"), span))?;
    let source = match text {
        Some(format) => ViewSource::Files { format, path, options },
        None => ViewSource::Parquet { path },
    };
    Ok(Statement::CreateTempView { name, source, replace, if_not_exists: false, columns: vec![] })
}

/// `(key 'value', 'key' = 'value', ...)` after OPTIONS, keys as written.
fn options_list(c: &mut Cursor) -> Result<Vec<(String, String)>> {
    let span = c.span();
    if !c.eat(&Token::LParen) {
        return Err(parse_error("expected ( after OPTIONS", span));
    }
    let mut options = vec![];
    while !c.eat(&Token::RParen) {
        let span = c.span();
        let key = match c.peek().map(|t| &t.token) {
            Some(Token::SingleQuotedString(s)) => {
                let s = s.clone();
                c.next();
                s
            }
            _ => c.name().ok_or_else(|| parse_error("expected an option name", span))?,
        };
        c.eat(&Token::Eq);
        let span = c.span();
        let value = match c.next().map(|t| &t.token) {
            Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => s.clone(),
            Some(Token::Number(n, _)) => n.clone(),
            Some(Token::Word(w)) if w.quote_style.is_none() && (w.value.eq_ignore_ascii_case("true") || w.value.eq_ignore_ascii_case("false")) => w.value.clone(),
            _ => return Err(parse_error(format!("expected a quoted value for option {key}"), span)),
        };
        options.push((key, value));
        let span = c.span();
        if !c.eat(&Token::Comma) && c.peek().is_none_or(|t| t.token != Token::RParen) {
            return Err(parse_error("expected , or ) in OPTIONS", span));
        }
    }
    Ok(options)
}

/// The `path` option, if given.
fn option_path(options: &[(String, String)]) -> Option<String> {
    options.iter().find(|(k, _)| k.eq_ignore_ascii_case("path")).map(|(_, v)| v.clone())
}

/// A statement sqlparser parsed. `lead` is its first keyword, to name unsupported statements.
fn convert_statement(s: &ast::Statement, lead: &str, span: Span, hints: &SelectHints) -> Result<Vec<Statement>> {
    Ok(vec![match s {
        ast::Statement::Query(q) => Statement::Query(QueryPlanner::with_hints(hints).plan_query(q)?),
        ast::Statement::CreateView(v) => create_view(v, span, hints)?,
        ast::Statement::Insert(i) => insert(i, span, hints)?,
        ast::Statement::Drop { object_type: ObjectType::Table | ObjectType::View, if_exists, names, .. } => {
            return names
                .iter()
                .map(|n| Ok(Statement::DropTable { name: object_name(n)?, if_exists: *if_exists }))
                .collect();
        }
        ast::Statement::Drop { object_type, .. } => return Err(unsupported(format!("DROP {object_type}"), span)),
        _ => return Err(unsupported(format!("{lead} statement"), span)),
    }])
}

fn create_view(v: &ast::CreateView, span: Span, hints: &SelectHints) -> Result<Statement> {
    // kiln has no metastore: a `CREATE VIEW` lives in the session, as a temporary view does.
    if v.materialized || v.or_alter || v.to.is_some() {
        return Err(unsupported("CREATE MATERIALIZED VIEW / OR ALTER / TO", span));
    }
    let name = object_name(&v.name)?;
    if v.if_not_exists && v.or_replace {
        return Err(crate::error::KilnError::analysis(
            "CREATE_VIEW_WITH_IF_NOT_EXISTS_AND_REPLACE",
            format!("CREATE VIEW {name} with both IF NOT EXISTS and REPLACE is not allowed."),
        ));
    }
    if v.if_not_exists && v.temporary {
        return Err(parse_error(format!("It is not allowed to define a TEMPORARY view with IF NOT EXISTS (view {name})."), span));
    }
    let plan = QueryPlanner::with_hints(hints).plan_query(&v.query)?;
    let columns = v.columns.iter().map(|c| c.name.value.clone()).collect();
    Ok(Statement::CreateTempView { name, source: ViewSource::Query(plan), replace: v.or_replace, if_not_exists: v.if_not_exists, columns })
}

/// `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name [(col type [NOT NULL], ...)]` then, in any
/// order as Spark allows, `USING parquet`, `PARTITIONED BY (col, ...)`, `LOCATION 'path'`,
/// `COMMENT '...'`, and last `[AS] query`. None when the tokens are not a CREATE TABLE.
fn create_table(text: &str, tokens: &[TokenWithSpan]) -> Option<Result<Statement>> {
    let mut c = Cursor { tokens, pos: 0 };
    if !c.eat_keyword("CREATE") {
        return None;
    }
    let replace = c.eat_keyword("OR") && c.eat_keyword("REPLACE");
    if !c.eat_keyword("TABLE") {
        return None;
    }
    Some(create_table_rest(text, c, replace))
}

fn create_table_rest(text: &str, mut c: Cursor, replace: bool) -> Result<Statement> {
    let span = c.span();
    let if_not_exists = c.eat_keyword("IF");
    if if_not_exists && !(c.eat_keyword("NOT") && c.eat_keyword("EXISTS")) {
        return Err(parse_error("expected IF NOT EXISTS", span));
    }
    if replace && if_not_exists {
        return Err(parse_error("CREATE OR REPLACE TABLE cannot have IF NOT EXISTS", span));
    }
    let span = c.span();
    let name = c.name().ok_or_else(|| parse_error("expected a table name after CREATE TABLE", span))?;
    let mut columns = vec![];
    if c.peek().is_some_and(|t| t.token == Token::LParen) {
        columns = column_list(&mut c)?;
    }
    let (mut format, mut partition_by, mut location, mut query, mut options) = (None, None, None, None, None);
    while let Some(t) = c.peek() {
        let span = t.span;
        let keyword = word(t).filter(|_| matches!(&t.token, Token::Word(w) if w.quote_style.is_none())).unwrap_or_default().to_uppercase();
        let clause_seen = |seen: bool, clause: &str| if seen { Err(parse_error(format!("{clause} is given twice"), span)) } else { Ok(()) };
        match keyword.as_str() {
            "USING" => {
                clause_seen(format.is_some(), "USING")?;
                c.next();
                let span = c.span();
                format = Some(c.next().and_then(word).ok_or_else(|| parse_error("expected a data source format after USING", span))?);
            }
            "PARTITIONED" => {
                clause_seen(partition_by.is_some(), "PARTITIONED BY")?;
                c.next();
                if !c.eat_keyword("BY") {
                    return Err(parse_error("expected BY after PARTITIONED", c.span()));
                }
                partition_by = Some(name_list(&mut c)?);
            }
            "LOCATION" => {
                clause_seen(location.is_some(), "LOCATION")?;
                c.next();
                location = Some(string_literal(&mut c, "LOCATION")?);
            }
            "COMMENT" => {
                c.next();
                string_literal(&mut c, "COMMENT")?;
            }
            "AS" | "SELECT" | "WITH" | "VALUES" | "FROM" | "TABLE" => {
                c.eat_keyword("AS");
                let span = c.span();
                let mut inner = parse_segment(text, c.rest())?;
                query = match (inner.pop(), inner.is_empty()) {
                    (Some(Statement::Query(q)), true) => Some(q),
                    _ => return Err(parse_error("expected a query after AS", span)),
                };
                break;
            }
            "" if t.token == Token::LParen => {
                let mut inner = parse_segment(text, c.rest())?;
                query = match (inner.pop(), inner.is_empty()) {
                    (Some(Statement::Query(q)), true) => Some(q),
                    _ => return Err(parse_error("expected a query", span)),
                };
                break;
            }
            "OPTIONS" => {
                clause_seen(options.is_some(), "OPTIONS")?;
                c.next();
                options = Some(options_list(&mut c)?);
            }
            "STORED" | "ROW" | "CLUSTERED" | "SORTED" | "TBLPROPERTIES" | "SKEWED" => {
                return Err(unsupported(format!("CREATE TABLE with {keyword} (kiln writes Parquet with USING, PARTITIONED BY and LOCATION)"), span));
            }
            _ => return Err(parse_error(format!("unexpected {} in CREATE TABLE", t.token), span)),
        }
    }
    if let Some(text) = format.as_deref().and_then(TextFormat::from_name) {
        let options = options.unwrap_or_default();
        let path = location.or_else(|| option_path(&options)).ok_or_else(|| {
            parse_error(format!("CREATE TABLE {name} USING {} needs LOCATION or OPTIONS (path '...'): kiln keeps managed tables as Parquet", text.name()), span)
        })?;
        if partition_by.is_some() {
            return Err(unsupported(format!("CREATE TABLE .. USING {} PARTITIONED BY (kiln partitions Parquet tables)", text.name()), span));
        }
        if query.is_some() && !columns.is_empty() {
            return Err(parse_error("CREATE TABLE ... AS SELECT cannot also declare columns: the query gives them", span));
        }
        return Ok(Statement::CreateFileTable { name, columns, if_not_exists, replace, format: text, path, options, query });
    }
    if options.is_some() {
        return Err(unsupported("CREATE TABLE .. USING parquet with OPTIONS (kiln reads the files' own settings)", span));
    }
    if query.is_some() && !columns.is_empty() {
        return Err(parse_error("CREATE TABLE ... AS SELECT cannot also declare columns: the query gives them", span));
    }
    if query.is_none() && columns.is_empty() && location.is_none() {
        return Err(parse_error("CREATE TABLE needs a column list, LOCATION of existing files, or AS query", span));
    }
    let storage = match format {
        Some(f) if f.eq_ignore_ascii_case("parquet") => Some(TableStorage { partition_by: partition_by.unwrap_or_default(), location }),
        Some(f) => return Err(unsupported(format!("data source format {f} (kiln writes parquet, csv and json)"), span)),
        None if partition_by.is_some() || location.is_some() => {
            return Err(parse_error("PARTITIONED BY and LOCATION need USING parquet", span));
        }
        None => None,
    };
    Ok(Statement::CreateTable { name, columns, if_not_exists, replace, storage, query })
}

/// `(col type [NOT NULL] [COMMENT '..'], ...)`, column definitions parsed by sqlparser.
fn column_list(c: &mut Cursor) -> Result<Vec<(String, arrow::datatypes::DataType, bool)>> {
    let start = c.pos;
    let mut depth = 0usize;
    while let Some(t) = c.next() {
        match t.token {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            break;
        }
    }
    let tokens = c.tokens.get(start..c.pos).unwrap_or(&[]).to_vec();
    let dialect = KilnDialect;
    let mut parser = Parser::new(&dialect).with_tokens_with_locations(tokens);
    parser.expect_token(&Token::LParen).map_err(parser_error)?;
    let defs = parser.parse_comma_separated(Parser::parse_column_def).map_err(parser_error)?;
    parser.expect_token(&Token::RParen).map_err(parser_error)?;
    let mut columns = Vec::with_capacity(defs.len());
    for col in &defs {
        let mut nullable = true;
        for opt in &col.options {
            match &opt.option {
                ColumnOption::NotNull => nullable = false,
                ColumnOption::Null => nullable = true,
                ColumnOption::Comment(_) => {}
                other => return Err(unsupported(format!("column option {other} on {}", col.name.value), col.name.span)),
            }
        }
        columns.push((col.name.value.clone(), sql_data_type(&col.data_type, col.name.span)?, nullable));
    }
    Ok(columns)
}

/// `(a, b, ...)`: plain column names.
fn name_list(c: &mut Cursor) -> Result<Vec<String>> {
    let span = c.span();
    if !c.eat(&Token::LParen) {
        return Err(parse_error("expected ( and column names", span));
    }
    let mut names = vec![];
    loop {
        let span = c.span();
        names.push(c.next().and_then(word).ok_or_else(|| parse_error("expected a column name", span))?);
        let span = c.span();
        if c.eat(&Token::RParen) {
            return Ok(names);
        }
        if !c.eat(&Token::Comma) {
            return Err(parse_error("expected , or ) after a column name (PARTITIONED BY takes names only; their types come from the data)", span));
        }
    }
}

fn string_literal(c: &mut Cursor, after: &str) -> Result<String> {
    let span = c.span();
    match c.next().map(|t| &t.token) {
        Some(Token::SingleQuotedString(s) | Token::DoubleQuotedString(s)) => Ok(s.clone()),
        _ => Err(parse_error(format!("expected a quoted string after {after}"), span)),
    }
}

fn insert(i: &ast::Insert, span: Span, hints: &SelectHints) -> Result<Statement> {
    if i.partitioned.is_some() || i.or.is_some() || i.ignore || i.on.is_some() || i.returning.is_some() || i.table_alias.is_some() {
        return Err(unsupported("INSERT with PARTITION / OR / IGNORE / ON / RETURNING / an alias", span));
    }
    if !i.assignments.is_empty() || !i.after_columns.is_empty() || i.by_name {
        return Err(unsupported("INSERT with SET / BY NAME", span));
    }
    let TableObject::TableName(table) = &i.table else {
        return Err(unsupported("INSERT INTO a table function", span));
    };
    let Some(source) = &i.source else {
        return Err(parse_error("INSERT needs VALUES or a query", span));
    };
    let columns = i.columns.iter().map(|c| object_name_parts(c).map(|p| p.join("."))).collect::<Result<Vec<_>>>()?;
    let rows = QueryPlanner::with_hints(hints).plan_query(source)?;
    Ok(Statement::InsertValues { table: object_name(table)?, columns, rows, overwrite: i.overwrite })
}

/// `CACHE [LAZY] TABLE name [OPTIONS (...)] [[AS] query]`, after CACHE.
fn cache_table(text: &str, mut c: Cursor) -> Result<Statement> {
    c.eat_keyword("LAZY");
    let span = c.span();
    if !c.eat_keyword("TABLE") {
        return Err(parse_error("expected TABLE after CACHE [LAZY]", span));
    }
    let span = c.span();
    let name = c.name().ok_or_else(|| parse_error("expected a table name after CACHE TABLE", span))?;
    let mut level = crate::catalog::cached::StorageLevel::MEMORY_AND_DISK;
    if c.eat_keyword("OPTIONS") {
        // Spark reads `storageLevel` and ignores other keys.
        for (key, value) in options_list(&mut c)? {
            if key.eq_ignore_ascii_case("storageLevel") {
                level = crate::catalog::cached::StorageLevel::from_name(&value)?;
            }
        }
    }
    c.eat_keyword("AS");
    let query = match c.peek() {
        None => None,
        Some(t) => {
            let span = t.span;
            let mut inner = parse_segment(text, c.rest())?;
            match (inner.pop(), inner.is_empty()) {
                (Some(Statement::Query(q)), true) => Some(q),
                _ => return Err(parse_error("expected a query after CACHE TABLE name AS", span)),
            }
        }
    };
    Ok(Statement::CacheTable { name, level, query })
}

/// `UNCACHE TABLE [IF EXISTS] name`, after UNCACHE.
fn uncache_table(mut c: Cursor) -> Result<Statement> {
    let span = c.span();
    if !c.eat_keyword("TABLE") {
        return Err(parse_error("expected TABLE after UNCACHE", span));
    }
    let span = c.span();
    let if_exists = c.eat_keyword("IF");
    if if_exists && !c.eat_keyword("EXISTS") {
        return Err(parse_error("expected IF EXISTS", span));
    }
    let span = c.span();
    let name = c.name().ok_or_else(|| parse_error("expected a table name after UNCACHE TABLE", span))?;
    if let Some(t) = c.peek() {
        return Err(parse_error(format!("unexpected {} after UNCACHE TABLE {name}", t.token), t.span));
    }
    Ok(Statement::UncacheTable { name, if_exists })
}

/// `ANALYZE TABLE t COMPUTE STATISTICS [NOSCAN | FOR COLUMNS a, b | FOR ALL COLUMNS]`, after ANALYZE.
fn analyze_table(mut c: Cursor) -> Result<Statement> {
    let span = c.span();
    if !c.eat_keyword("TABLE") {
        return Err(unsupported("ANALYZE of something other than a TABLE", span));
    }
    let span = c.span();
    let table = c.name().ok_or_else(|| parse_error("expected a table name after ANALYZE TABLE", span))?;
    let span = c.span();
    if c.peek_keyword("PARTITION") {
        return Err(unsupported("ANALYZE TABLE .. PARTITION", span));
    }
    if !(c.eat_keyword("COMPUTE") && c.eat_keyword("STATISTICS")) {
        return Err(parse_error("expected COMPUTE STATISTICS", span));
    }
    let span = c.span();
    let columns = if c.eat_keyword("NOSCAN") {
        AnalyzeColumns::NoScan
    } else if c.eat_keyword("FOR") {
        if c.eat_keyword("ALL") {
            if !c.eat_keyword("COLUMNS") {
                return Err(parse_error("expected COLUMNS after FOR ALL", c.span()));
            }
            AnalyzeColumns::All
        } else if c.eat_keyword("COLUMNS") {
            let mut names = vec![];
            loop {
                let span = c.span();
                names.push(c.name().ok_or_else(|| parse_error("expected a column name", span))?);
                if !c.eat(&Token::Comma) {
                    break;
                }
            }
            AnalyzeColumns::Columns(names)
        } else {
            return Err(parse_error("expected COLUMNS or ALL COLUMNS after FOR", span));
        }
    } else {
        AnalyzeColumns::Table
    };
    if let Some(t) = c.peek() {
        return Err(parse_error(format!("unexpected {} after ANALYZE TABLE", t.token), t.span));
    }
    Ok(Statement::AnalyzeTable { table, columns })
}

/// `DESC[RIBE] [TABLE] [EXTENDED | FORMATTED] t [col]`, after DESCRIBE.
fn describe_table(mut c: Cursor) -> Result<Statement> {
    c.eat_keyword("TABLE");
    let extended = c.eat_keyword("EXTENDED") || c.eat_keyword("FORMATTED");
    let span = c.span();
    let table = c.name().ok_or_else(|| parse_error("expected a table name after DESCRIBE", span))?;
    let column = match c.peek() {
        None => None,
        Some(_) => {
            let span = c.span();
            Some(c.name().ok_or_else(|| parse_error("expected a column name after the table", span))?)
        }
    };
    if let Some(t) = c.peek() {
        return Err(parse_error(format!("unexpected {} after DESCRIBE", t.token), t.span));
    }
    Ok(Statement::DescribeTable { table, column, extended })
}
