//! Spark's number format strings (`999G999D00S`, `$99.99`, `000MI`, `9999PR`), as its
//! ToNumberParser reads and writes them: `to_number` / `try_to_number` parse a string into a
//! decimal whose precision and scale the format fixes, `to_char` / `to_varchar` format a decimal.
//!
//! A format is a sequence of items: digit groups (runs of `0`/`9` with `,`/`G` separators; a run
//! starting with `0` before the decimal point needs exactly as many digits, otherwise at most as
//! many), `.`/`D`, `$`, `S` (optional `+`/`-`), `MI` (optional `-`), `PR` (`<...>` for negatives).

use crate::error::{KilnError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// `n` digits; `exact` when the run starts with 0 before the decimal point.
    Digits { n: usize, exact: bool },
    Group,
    Point,
    Dollar,
    Sign,
    Minus,
    Open,
    Close,
    Bad(char),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// Digits and separators, in format order.
    Groups(Vec<Tok>),
    One(Tok),
}

/// A validated number format.
#[derive(Debug, Clone)]
pub(crate) struct NumberFormat {
    text: String,
    items: Vec<Item>,
    /// Digits before and after the decimal point.
    before: usize,
    after: usize,
}

fn tok_name(t: Tok) -> String {
    match t {
        Tok::Digits { .. } | Tok::Group => "digit sequence".into(),
        Tok::Point => ". or D".into(),
        Tok::Dollar => "$".into(),
        Tok::Sign => "S".into(),
        Tok::Minus => "MI".into(),
        Tok::Open | Tok::Close => "PR".into(),
        Tok::Bad(c) => format!("character '{c}''"),
    }
}

impl NumberFormat {
    /// Reads and checks `fmt` (Spark's INVALID_FORMAT errors).
    pub(crate) fn new(fmt: &str) -> Result<NumberFormat> {
        let chars: Vec<char> = fmt.chars().collect();
        let mut toks = vec![];
        let (mut i, mut point) = (0, false);
        while i < chars.len() {
            let c = chars[i];
            match c {
                '0' | '9' => {
                    let start = i;
                    while i < chars.len() && matches!(chars[i], '0' | '9') {
                        i += 1;
                    }
                    toks.push(Tok::Digits { n: i - start, exact: c == '0' && !point });
                    continue;
                }
                '.' | 'D' => {
                    toks.push(Tok::Point);
                    point = true;
                }
                ',' | 'G' => toks.push(Tok::Group),
                '$' => toks.push(Tok::Dollar),
                'S' => toks.push(Tok::Sign),
                'M' if chars.get(i + 1) == Some(&'I') => {
                    toks.push(Tok::Minus);
                    i += 1;
                }
                'P' if chars.get(i + 1) == Some(&'R') => {
                    toks.insert(0, Tok::Open);
                    toks.push(Tok::Close);
                    i += 1;
                }
                other => toks.push(Tok::Bad(other)),
            }
            i += 1;
        }
        let mut items = vec![];
        let mut group = vec![];
        for t in toks {
            match t {
                Tok::Digits { .. } | Tok::Group => group.push(t),
                other => {
                    if !group.is_empty() {
                        items.push(Item::Groups(std::mem::take(&mut group)));
                    }
                    items.push(Item::One(other));
                }
            }
        }
        if !group.is_empty() {
            items.push(Item::Groups(group));
        }
        let (mut before, mut after, mut seen_point) = (0, 0, false);
        for it in &items {
            match it {
                Item::Groups(g) => {
                    let n: usize = g.iter().map(|t| if let Tok::Digits { n, .. } = t { *n } else { 0 }).sum();
                    if seen_point { after += n } else { before += n }
                }
                Item::One(Tok::Point) => seen_point = true,
                Item::One(_) => {}
            }
        }
        let f = NumberFormat { text: fmt.to_string(), items, before, after };
        f.check()?;
        Ok(f)
    }

    fn invalid(&self, class: &'static str, msg: &str) -> KilnError {
        KilnError::analysis(class, format!("The format is invalid: '{}'. {msg}", self.text))
    }

    fn check(&self) -> Result<()> {
        if self.text.is_empty() {
            return Err(self.invalid("INVALID_FORMAT.EMPTY", "The number format string cannot be empty."));
        }
        let pos = |p: &dyn Fn(&Item) -> bool| self.items.iter().position(p).map_or(-1, |i| i as i64);
        let digits = pos(&|i| matches!(i, Item::Groups(_)));
        if digits < 0 {
            return Err(self.invalid("INVALID_FORMAT.WRONG_NUM_DIGIT", "The format string requires at least one number digit."));
        }
        let dollar = pos(&|i| *i == Item::One(Tok::Dollar));
        let point = pos(&|i| *i == Item::One(Tok::Point));
        if digits < dollar {
            return Err(self.invalid("INVALID_FORMAT.CUR_MUST_BEFORE_DIGIT", "Currency characters must appear before digits in the number format."));
        }
        if point != -1 && point < dollar {
            return Err(self.invalid("INVALID_FORMAT.CUR_MUST_BEFORE_DEC", "Currency characters must appear before any decimal point in the number format."));
        }
        for (k, it) in self.items.iter().enumerate() {
            let Item::Groups(g) = it else { continue };
            let after_point = point != -1 && (k as i64) > point;
            if after_point && g.contains(&Tok::Group) {
                return Err(self.invalid("INVALID_FORMAT.THOUSANDS_SEPS_MUST_BEFORE_DEC", "Thousands separators (, or G) may not appear after the decimal point in the number format."));
            }
            let bad = g.iter().enumerate().any(|(j, t)| *t == Tok::Group && (j == 0 || j == g.len() - 1 || g[j - 1] == Tok::Group || g[j + 1] == Tok::Group));
            if !after_point && bad {
                return Err(self.invalid("INVALID_FORMAT.CONT_THOUSANDS_SEPS", "Thousands separators (, or G) must have digits in between them in the number format."));
            }
        }
        for t in [Tok::Point, Tok::Sign, Tok::Minus, Tok::Dollar, Tok::Close] {
            if self.items.iter().filter(|i| **i == Item::One(t)).count() > 1 {
                return Err(self.invalid("INVALID_FORMAT.WRONG_NUM_TOKEN", &format!("At most one {} is allowed in the number format.", tok_name(t))));
            }
        }
        // The order Spark allows: [PR] [MI|S] [$] digits [.] digits [$] [PR|MI|S].
        let slots: [&[Tok]; 8] = [&[Tok::Open], &[Tok::Minus, Tok::Sign], &[Tok::Dollar], &[], &[Tok::Point], &[], &[Tok::Dollar], &[Tok::Minus, Tok::Sign, Tok::Close]];
        let mut k = 0;
        for slot in slots {
            let fits = match self.items.get(k) {
                Some(Item::Groups(_)) => slot.is_empty(),
                Some(Item::One(t)) => slot.contains(t),
                None => false,
            };
            if fits {
                k += 1;
            }
        }
        if let Some(it) = self.items.get(k) {
            let t = match it {
                Item::Groups(_) => Tok::Group,
                Item::One(t) => *t,
            };
            return Err(self.invalid("INVALID_FORMAT.UNEXPECTED_TOKEN",
                &format!("Found the unexpected {} in the format string; the structure of the format string must match: `[MI|S]` `[$]` `[0|9|G|,]*` `[.|D]` `[0|9]*` `[$]` `[PR|MI|S]`.", tok_name(t)),
            ));
        }
        Ok(())
    }

    /// The decimal type to_number returns: every digit of the format, those after the point as scale.
    pub(crate) fn precision_scale(&self) -> (usize, usize) {
        (self.before + self.after, self.after)
    }

    /// `s` read by the format as an unscaled decimal of the format's scale; None when it does not match.
    pub(crate) fn parse(&self, s: &str) -> Option<i128> {
        let chars: Vec<char> = s.chars().collect();
        let (mut before, mut after) = (String::new(), String::new());
        let (mut point, mut open, mut close, mut negate, mut i) = (false, false, false, false, 0);
        for it in &self.items {
            let c = chars.get(i).copied();
            match it {
                Item::Groups(g) => {
                    // Digits (spaces skipped) and separators; the group sizes, rightmost first.
                    let mut sizes = vec![];
                    let mut current = 0;
                    while let Some(&c) = chars.get(i) {
                        if c.is_whitespace() {
                        } else if c.is_ascii_digit() {
                            current += 1;
                            if point { after.push(c) } else { before.push(c) }
                        } else if c == ',' {
                            sizes.push(current);
                            current = 0;
                        } else {
                            break;
                        }
                        i += 1;
                    }
                    sizes.push(current);
                    sizes.reverse();
                    let expected: Vec<Tok> = g.iter().rev().copied().filter(|t| matches!(t, Tok::Digits { .. })).collect();
                    if sizes.len() > expected.len() {
                        return None;
                    }
                    for (k, t) in expected.iter().enumerate() {
                        let actual = sizes.get(k).copied().unwrap_or(0);
                        if let Tok::Digits { n, exact } = t {
                            if (*exact && actual != *n) || actual > *n {
                                return None;
                            }
                        }
                    }
                }
                Item::One(Tok::Point) => {
                    if c == Some('.') {
                        point = true;
                        i += 1;
                    }
                }
                Item::One(Tok::Dollar) => match c {
                    Some('$') => i += 1,
                    Some(_) => return None,
                    None => {}
                },
                Item::One(Tok::Sign) => match c {
                    Some('+') => i += 1,
                    Some('-') => {
                        negate = !negate;
                        i += 1;
                    }
                    _ => {}
                },
                Item::One(Tok::Minus) => {
                    if c == Some('-') {
                        negate = !negate;
                        i += 1;
                    }
                }
                Item::One(Tok::Open) => {
                    if c == Some('<') {
                        if open {
                            return None;
                        }
                        open = true;
                        i += 1;
                    }
                }
                Item::One(Tok::Close) => {
                    if c == Some('>') {
                        if !open {
                            return None;
                        }
                        close = true;
                        negate = !negate;
                        i += 1;
                    }
                }
                Item::One(_) => return None,
            }
        }
        if i < chars.len() || open != close || (before.is_empty() && after.is_empty()) {
            return None;
        }
        let digits = format!("{before}{after}{}", "0".repeat(self.after.saturating_sub(after.len())));
        let v: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
        Some(if negate { -v } else { v })
    }

    /// The decimal `unscaled / 10^scale` written by the format (`#` for each digit when it does not fit).
    pub(crate) fn format(&self, unscaled: i128, scale: i8) -> String {
        let neg = unscaled < 0;
        let plain = crate::types::format_decimal(unscaled, scale);
        let (int, frac) = plain.split_once('.').unwrap_or((plain.as_str(), ""));
        let mut int = int.trim_start_matches(['-', '0']).to_string();
        let mut frac = frac.trim_end_matches('0').to_string();
        if int.len() > self.before || frac.len() > self.after {
            int = "#".repeat(self.before);
            frac = "#".repeat(self.after);
        }
        let int: Vec<char> = format!("{}{int}", " ".repeat(self.before - int.len())).chars().collect();
        let frac: Vec<char> = format!("{frac}{}", "0".repeat(self.after - frac.len())).chars().collect();
        let (mut bi, mut ai, mut point) = (0, 0, false);
        let mut r: Vec<char> = vec![];
        for it in &self.items {
            match it {
                Item::Groups(g) => {
                    for t in g {
                        match *t {
                            Tok::Digits { n, exact } if !point => {
                                for _ in 0..n {
                                    match int.get(bi) {
                                        Some(' ') if exact => r.push('0'),
                                        Some(' ') => push_space(&mut r),
                                        Some(&c) => r.push(c),
                                        None => {}
                                    }
                                    bi += 1;
                                }
                            }
                            Tok::Digits { n, .. } => {
                                for _ in 0..n {
                                    if let Some(&c) = frac.get(ai) {
                                        r.push(c);
                                    }
                                    ai += 1;
                                }
                            }
                            _ => {
                                if r.last().is_some_and(|c| c.is_ascii_digit()) {
                                    r.push(',');
                                } else {
                                    push_space(&mut r);
                                }
                            }
                        }
                    }
                }
                Item::One(Tok::Point) => {
                    if let Some(last) = r.last_mut().filter(|c| **c == ' ') {
                        *last = '0';
                    }
                    r.push('.');
                    point = true;
                }
                Item::One(Tok::Dollar) => r.push('$'),
                Item::One(Tok::Sign) => {
                    strip_lone_point(&mut r);
                    push_before_spaces(&mut r, if neg { '-' } else { '+' });
                }
                Item::One(Tok::Minus) => {
                    if neg {
                        strip_lone_point(&mut r);
                        push_before_spaces(&mut r, '-');
                    } else {
                        r.push(' ');
                    }
                }
                Item::One(Tok::Open) => {
                    if neg {
                        r.push('<');
                    }
                }
                Item::One(Tok::Close) => {
                    strip_lone_point(&mut r);
                    if neg {
                        push_before_spaces(&mut r, '>');
                    } else {
                        r.extend([' ', ' ']);
                    }
                }
                Item::One(_) => {}
            }
        }
        strip_lone_point(&mut r);
        let s: String = r.into_iter().collect();
        if s.is_empty() || s == "+" || s == "-" {
            "0".into()
        } else {
            s
        }
    }
}

/// Appends `c`, moved left over the spaces before it (a sign goes next to the digits).
fn push_before_spaces(r: &mut Vec<char>, c: char) {
    r.push(c);
    let mut i = r.len() - 1;
    while i >= 1 && r[i - 1] == ' ' && r[i] == c {
        r.swap(i - 1, i);
        i -= 1;
    }
}

/// Appends a space, moved left of a sign or `<` before it.
fn push_space(r: &mut Vec<char>) {
    r.push(' ');
    let mut i = r.len() - 1;
    while i >= 1 && matches!(r[i - 1], '+' | '-' | '<') && r[i] == ' ' {
        r.swap(i - 1, i);
        i -= 1;
    }
}

/// A decimal point with no digit after it becomes a space.
fn strip_lone_point(r: &mut [char]) {
    if let Some(i) = r.iter().position(|c| *c == '.') {
        if i == r.len() - 1 || r[i + 1] == ' ' {
            r[i] = ' ';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spark_documented_examples() {
        let f = |fmt: &str| NumberFormat::new(fmt).expect("valid format");
        assert_eq!(f("999").parse("454"), Some(454));
        assert_eq!(f("000.00").parse("454.00"), Some(45400));
        assert_eq!(f("99,999").parse("12,454"), Some(12454));
        assert_eq!(f("$99.99").parse("$78.12"), Some(7812));
        assert_eq!(f("99,999.9S").parse("12,454.8-"), Some(-124548));
        assert_eq!(f("999").parse("12a"), None);
        assert_eq!(f("999").format(454, 0), "454");
        assert_eq!(f("000D00").format(45400, 2), "454.00");
        assert_eq!(f("99G999").format(12454, 0), "12,454");
        assert_eq!(f("$99.99").format(7812, 2), "$78.12");
        assert_eq!(f("99G999D9S").format(-124548, 1), "12,454.8-");
        assert!(NumberFormat::new("9,,9").is_err());
        assert!(NumberFormat::new("").is_err());
    }
}
