//! Spark's regular-expression functions (rlike, regexp_replace, regexp_extract, regexp_count,
//! regexp_substr, regexp_instr) over the `regex` crate. Patterns are compiled once per distinct
//! pattern per batch. Java's replacement syntax (`$1`, `${name}`, `\$`) is read as Java reads it.
//! The `regex` crate has no look-around or back-references: such a pattern is Spark's
//! INVALID_PARAMETER_VALUE.PATTERN error, as a pattern Java rejects.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Int32Array, StringArray};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Int32Type};
use regex::Regex;

use crate::error::{KilnError, Result};

/// Which function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RegexpFn {
    Like,
    Replace,
    Extract,
    ExtractAll,
    Count,
    Substr,
    Instr,
    /// split(str, regex, limit) as Java's `String.split`, an empty pattern splitting characters.
    Split,
}

impl RegexpFn {
    fn name(self) -> &'static str {
        match self {
            RegexpFn::Like => "rlike",
            RegexpFn::Replace => "regexp_replace",
            RegexpFn::Extract => "regexp_extract",
            RegexpFn::ExtractAll => "regexp_extract_all",
            RegexpFn::Count => "regexp_count",
            RegexpFn::Substr => "regexp_substr",
            RegexpFn::Instr => "regexp_instr",
            RegexpFn::Split => "split",
        }
    }
}

fn invalid(f: RegexpFn, param: &str, msg: impl std::fmt::Display) -> KilnError {
    KilnError::exec(format!("[INVALID_PARAMETER_VALUE.{param}] The value of parameter(s) `{}` in `{}` is invalid: {msg}. SQLSTATE: 22023",
        if param == "PATTERN" { "regexp" } else { "idx" }, f.name()))
}

/// Compiled patterns of one batch, by text.
struct Patterns {
    f: RegexpFn,
    cache: HashMap<String, Regex>,
}

impl Patterns {
    fn get(&mut self, p: &str) -> Result<&Regex> {
        if !self.cache.contains_key(p) {
            let re = Regex::new(p).map_err(|e| invalid(self.f, "PATTERN", format!("'{p}' ({})", e.to_string().lines().last().unwrap_or("bad pattern").trim())))?;
            self.cache.insert(p.to_string(), re);
        }
        self.cache.get(p).ok_or_else(|| KilnError::internal("pattern cache"))
    }
}

/// A Java replacement string, parsed: literal text and group references.
enum Part {
    Text(String),
    Group(usize),
    Named(String),
}

/// Java's `Matcher.appendReplacement` syntax: `\x` is x, `$n` a group (digits taken while the
/// number stays a group), `${name}` a named group.
fn parse_replacement(rep: &str, groups: usize) -> std::result::Result<Vec<Part>, String> {
    let mut parts = vec![];
    let mut text = String::new();
    let mut chars = rep.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(n) => text.push(n),
                None => return Err("character to be escaped is missing".into()),
            },
            '$' => {
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                match chars.peek() {
                    Some('{') => {
                        chars.next();
                        let mut name = String::new();
                        loop {
                            match chars.next() {
                                Some('}') if name.starts_with(|c: char| c.is_ascii_alphabetic()) => break,
                                Some(ch) if ch.is_ascii_alphanumeric() => name.push(ch),
                                _ => return Err("named capturing group is missing trailing '}'".into()),
                            }
                        }
                        parts.push(Part::Named(name));
                    }
                    Some(d) if d.is_ascii_digit() => {
                        let mut n = d.to_digit(10).unwrap_or(0) as usize;
                        chars.next();
                        while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                            let next = n * 10 + d as usize;
                            if next > groups {
                                break;
                            }
                            n = next;
                            chars.next();
                        }
                        if n > groups {
                            return Err(format!("No group {n}"));
                        }
                        parts.push(Part::Group(n));
                    }
                    _ => return Err("Illegal group reference".into()),
                }
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        parts.push(Part::Text(text));
    }
    Ok(parts)
}

/// kiln's one list type for strings (its element field is nullable "item").
fn string_list(list: arrow::array::ListArray) -> ArrayRef {
    Arc::new(arrow::array::ListArray::new(
        Arc::new(arrow::datatypes::Field::new("item", DataType::Utf8, true)),
        list.offsets().clone(),
        list.values().clone(),
        list.nulls().cloned(),
    ))
}

/// Spark's StringSplit (UTF8String.split): a limit of 0 or less keeps every piece, trailing
/// empty ones too; a positive limit makes at most that many, the last holding the rest. An
/// empty pattern splits between characters (of a non-empty string); otherwise as Java's
/// `String.split`, whose zero-width match at the start makes no leading empty piece.
fn split<'a>(s: &'a str, pattern: &str, limit: i32, pats: &mut Patterns) -> Result<Vec<&'a str>> {
    let most = if limit > 0 { limit as usize } else { usize::MAX };
    if pattern.is_empty() && !s.is_empty() {
        let chars: Vec<usize> = s.char_indices().map(|(b, _)| b).collect();
        let n = chars.len().min(most);
        let mut out: Vec<&str> = (0..n - 1).map(|k| &s[chars[k]..chars[k + 1]]).collect();
        out.push(&s[chars[n - 1]..]);
        return Ok(out);
    }
    let re = pats.get(pattern)?;
    let mut out = vec![];
    let mut last = 0;
    for m in re.find_iter(s) {
        if out.len() + 1 >= most {
            break;
        }
        if m.end() == 0 {
            continue;
        }
        out.push(&s[last..m.start()]);
        last = m.end();
    }
    out.push(&s[last..]);
    Ok(out)
}

/// The byte offset of the `chars`-th character (the end when there are fewer).
fn byte_at(s: &str, chars: usize) -> usize {
    s.char_indices().nth(chars).map_or(s.len(), |(b, _)| b)
}

/// Evaluates `f` over string arrays (and an int array for the index/position argument).
pub(super) fn eval(f: RegexpFn, args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
    let arg = |i: usize| args.get(i).ok_or_else(|| KilnError::internal(format!("{} lacks argument {i}", f.name())));
    let strs = |i: usize| -> Result<StringArray> { Ok(cast(arg(i)?, &DataType::Utf8)?.as_string::<i32>().clone()) };
    let ints = |i: usize| -> Result<Option<Int32Array>> {
        match args.get(i) {
            Some(a) => Ok(Some(cast(a, &DataType::Int32)?.as_primitive::<Int32Type>().clone())),
            None => Ok(None),
        }
    };
    let (s, p) = (strs(0)?, strs(1)?);
    let mut pats = Patterns { f, cache: HashMap::new() };
    // Row i's (string, compiled pattern), None when either is NULL.
    macro_rules! each {
        ($i:ident, $body:expr) => {{
            let mut out = Vec::with_capacity(rows);
            for $i in 0..rows {
                out.push(if s.is_null($i) || p.is_null($i) { None } else { $body });
            }
            out
        }};
    }
    Ok(match f {
        RegexpFn::Like => {
            let v = each!(i, Some(pats.get(p.value(i))?.is_match(s.value(i))));
            Arc::new(BooleanArray::from(v))
        }
        RegexpFn::Count => {
            let v = each!(i, Some(pats.get(p.value(i))?.find_iter(s.value(i)).count() as i32));
            Arc::new(Int32Array::from(v))
        }
        RegexpFn::Substr => {
            let v = each!(i, pats.get(p.value(i))?.find(s.value(i)).map(|m| m.as_str().to_string()));
            Arc::new(StringArray::from(v))
        }
        RegexpFn::Split => {
            let limit = ints(2)?;
            let mut b = arrow::array::ListBuilder::new(arrow::array::StringBuilder::new());
            for i in 0..rows {
                if s.is_null(i) || p.is_null(i) || limit.as_ref().is_some_and(|a| a.is_null(i)) {
                    b.append(false);
                    continue;
                }
                let limit = limit.as_ref().map_or(-1, |a| a.value(i));
                for piece in split(s.value(i), p.value(i), limit, &mut pats)? {
                    b.values().append_value(piece);
                }
                b.append(true);
            }
            string_list(b.finish())
        }
        // Every match's group as an array (a group that took no part is the empty string).
        RegexpFn::ExtractAll => {
            let idx = ints(2)?;
            let mut b = arrow::array::ListBuilder::new(arrow::array::StringBuilder::new());
            for i in 0..rows {
                if s.is_null(i) || p.is_null(i) || idx.as_ref().is_some_and(|a| a.is_null(i)) {
                    b.append(false);
                    continue;
                }
                let k = idx.as_ref().map_or(1, |a| a.value(i));
                let re = pats.get(p.value(i))?;
                let groups = re.captures_len() - 1;
                // Spark checks the index on a match only: no match is an empty array.
                if (k < 0 || k as usize > groups) && re.is_match(s.value(i)) {
                    return Err(invalid(f, "REGEX_GROUP_INDEX", format!("Expects group index between 0 and {groups}, but got {k}")));
                }
                for c in re.captures_iter(s.value(i)) {
                    b.values().append_value(c.get(k as usize).map_or("", |m| m.as_str()));
                }
                b.append(true);
            }
            string_list(b.finish())
        }
        RegexpFn::Extract | RegexpFn::Instr => {
            let idx = ints(2)?;
            // Per row: NULL, or the group's match (None when there is none).
            let mut found: Vec<Option<Option<(usize, String)>>> = Vec::with_capacity(rows);
            for i in 0..rows {
                if s.is_null(i) || p.is_null(i) || idx.as_ref().is_some_and(|a| a.is_null(i)) {
                    found.push(None);
                    continue;
                }
                let k = idx.as_ref().map_or(if f == RegexpFn::Extract { 1 } else { 0 }, |a| a.value(i));
                let re = pats.get(p.value(i))?;
                let groups = re.captures_len() - 1;
                let text = s.value(i);
                let captures = re.captures(text);
                // Spark checks the index on a match only: no match is '' (or 0).
                if (k < 0 || k as usize > groups) && captures.is_some() {
                    return Err(invalid(f, "REGEX_GROUP_INDEX", format!("Expects group index between 0 and {groups}, but got {k}")));
                }
                let m = captures.and_then(|c| c.get(k as usize));
                found.push(Some(m.map(|m| (text[..m.start()].chars().count(), m.as_str().to_string()))));
            }
            if f == RegexpFn::Extract {
                // No match, or the group took no part: the empty string.
                Arc::new(found.into_iter().map(|x| x.map(|m| m.map_or(String::new(), |(_, t)| t))).collect::<StringArray>())
            } else {
                // 1-based character position, 0 without a match.
                Arc::new(found.into_iter().map(|x| x.map(|m| m.map_or(0, |(at, _)| at as i32 + 1))).collect::<Int32Array>())
            }
        }
        RegexpFn::Replace => {
            let rep = strs(2)?;
            let pos = ints(3)?;
            let mut parsed: HashMap<(String, String), Vec<Part>> = HashMap::new();
            let mut out = Vec::with_capacity(rows);
            for i in 0..rows {
                if s.is_null(i) || p.is_null(i) || rep.is_null(i) || pos.as_ref().is_some_and(|a| a.is_null(i)) {
                    out.push(None);
                    continue;
                }
                let start = pos.as_ref().map_or(1, |a| a.value(i));
                if start <= 0 {
                    return Err(KilnError::exec(format!(
                        "[INVALID_PARAMETER_VALUE.REGEX_POSITION] The value of parameter(s) `position` in `regexp_replace` is invalid: Expects a positive position, but got {start}. SQLSTATE: 22023"
                    )));
                }
                let re = pats.get(p.value(i))?.clone();
                let key = (p.value(i).to_string(), rep.value(i).to_string());
                if !parsed.contains_key(&key) {
                    let parts = parse_replacement(rep.value(i), re.captures_len() - 1)
                        .map_err(|e| KilnError::exec(format!("[INVALID_PARAMETER_VALUE] The replacement '{}' of `regexp_replace` is invalid: {e}. SQLSTATE: 22023", rep.value(i))))?;
                    parsed.insert(key.clone(), parts);
                }
                let parts = &parsed[&key];
                let text = s.value(i);
                let from = byte_at(text, start as usize - 1);
                let (head, tail) = text.split_at(from);
                let mut r = String::with_capacity(text.len());
                r.push_str(head);
                let mut last = 0;
                for c in re.captures_iter(tail) {
                    let Some(m) = c.get(0) else { continue };
                    r.push_str(&tail[last..m.start()]);
                    for part in parts {
                        match part {
                            Part::Text(t) => r.push_str(t),
                            Part::Group(g) => r.push_str(c.get(*g).map_or("", |m| m.as_str())),
                            Part::Named(n) => r.push_str(c.name(n).map_or("", |m| m.as_str())),
                        }
                    }
                    last = m.end();
                }
                r.push_str(&tail[last..]);
                out.push(Some(r));
            }
            Arc::new(StringArray::from(out))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: RegexpFn, args: Vec<Option<&str>>) -> Result<ArrayRef> {
        let arrays: Vec<ArrayRef> = args.iter().map(|a| Arc::new(StringArray::from(vec![*a])) as ArrayRef).collect();
        eval(f, &arrays, 1)
    }

    #[test]
    fn java_replacements() {
        let out = run(RegexpFn::Replace, vec![Some("100-200"), Some("(\\d+)-(\\d+)"), Some("$2:$1\\$$10")]).unwrap();
        assert_eq!(out.as_string::<i32>().value(0), "200:100$1000");
        assert!(run(RegexpFn::Replace, vec![Some("a"), Some("a"), Some("$2")]).is_err());
        assert!(run(RegexpFn::Replace, vec![Some("a"), Some("(?<=a)b"), Some("x")]).unwrap_err().to_string().contains("INVALID_PARAMETER_VALUE.PATTERN"));
    }
}
