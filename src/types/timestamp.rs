//! Timestamps as Spark keeps them: microseconds since 1970-01-01 00:00:00 UTC. `TIMESTAMP`
//! (Spark's local-time-zone timestamp) is `Timestamp(Microsecond, "+00:00")`, `TIMESTAMP_NTZ` is
//! `Timestamp(Microsecond, None)`, a wall-clock time kept as if in UTC. A TIMESTAMP is read and
//! printed in the session time zone (`*_in(.., zone)`), a TIMESTAMP_NTZ as it is. Parsing and
//! formatting follow Spark's `stringToTimestamp` and its datetime patterns
//! (`yyyy-MM-dd HH:mm:ss.SSS`, `MMM`, `EEE`, `a`, quoted text).

use std::sync::Arc;

use arrow::datatypes::{DataType, TimeUnit};

use super::scalar::chrono_like::{civil_from_days, days_from_civil, days_in_month};
use super::time_zone::Zone;

/// Microseconds per second, minute, hour and day.
pub const MICROS_PER_SECOND: i64 = 1_000_000;
const MICROS_PER_MINUTE: i64 = 60 * MICROS_PER_SECOND;
const MICROS_PER_HOUR: i64 = 60 * MICROS_PER_MINUTE;
/// Microseconds in a day.
pub const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;

/// The Arrow type of `TIMESTAMP` (false) or `TIMESTAMP_NTZ` (true).
pub fn timestamp_type(ntz: bool) -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, if ntz { None } else { Some(Arc::from("+00:00")) })
}

/// True for either timestamp type.
pub fn is_timestamp(dt: &DataType) -> bool {
    matches!(dt, DataType::Timestamp(..))
}

/// The fields of a timestamp: year, month, day, hour, minute, second, microsecond.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Civil {
    #[allow(missing_docs)]
    pub year: i64,
    #[allow(missing_docs)]
    pub month: u32,
    #[allow(missing_docs)]
    pub day: u32,
    #[allow(missing_docs)]
    pub hour: u32,
    #[allow(missing_docs)]
    pub minute: u32,
    #[allow(missing_docs)]
    pub second: u32,
    #[allow(missing_docs)]
    pub micros: u32,
    /// Days since the epoch.
    pub days: i64,
}

/// Splits microseconds since the epoch into calendar fields.
pub fn civil(micros: i64) -> Civil {
    let days = micros.div_euclid(MICROS_PER_DAY);
    let tod = micros.rem_euclid(MICROS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    Civil {
        year,
        month,
        day,
        hour: (tod / MICROS_PER_HOUR) as u32,
        minute: (tod % MICROS_PER_HOUR / MICROS_PER_MINUTE) as u32,
        second: (tod % MICROS_PER_MINUTE / MICROS_PER_SECOND) as u32,
        micros: (tod % MICROS_PER_SECOND) as u32,
        days,
    }
}

/// Microseconds since the epoch of a wall-clock time, if the fields are valid.
pub fn from_civil(y: i64, m: u32, d: u32, hh: u32, mm: u32, ss: u32, us: u32) -> Option<i64> {
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) || hh > 23 || mm > 59 || ss > 59 || us > 999_999 {
        return None;
    }
    let days = days_from_civil(y, m, d);
    days.checked_mul(MICROS_PER_DAY)?
        .checked_add(hh as i64 * MICROS_PER_HOUR + mm as i64 * MICROS_PER_MINUTE + ss as i64 * MICROS_PER_SECOND + us as i64)
}

/// Spark's rendering of a TIMESTAMP in the session zone `zone`.
pub fn format_timestamp_in(micros: i64, zone: Zone) -> String {
    format_timestamp(zone.from_utc(micros).unwrap_or(micros))
}

/// Spark's rendering of a timestamp value: `yyyy-MM-dd HH:mm:ss`, then the fraction of a
/// second without trailing zeros.
pub fn format_timestamp(micros: i64) -> String {
    let c = civil(micros);
    let mut s = format!("{}-{:02}-{:02} {:02}:{:02}:{:02}", super::scalar::format_year(c.year), c.month, c.day, c.hour, c.minute, c.second);
    if c.micros != 0 {
        let frac = format!("{:06}", c.micros);
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    s
}

/// Spark's `stringToTimestamp` as UTC: `yyyy[-[m]m[-[d]d]]`, then
/// `[T| ][h]h:[m]m[:[s]s[.fraction]]`, then an optional zone (`Z`, `UTC`, `±hh[:mm]`, a region
/// id), which is applied.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    parse_timestamp_in(text, Zone::UTC)
}

/// `text` as a TIMESTAMP in the session zone `zone`: a wall-clock time in `zone` unless the text
/// names its own zone.
pub fn parse_timestamp_in(text: &str, zone: Zone) -> Option<i64> {
    let (local, own) = parse_wall_clock(text)?;
    own.unwrap_or(zone).to_utc(local)
}

/// The wall-clock time a timestamp text spells, and the zone it names if it names one.
pub fn parse_wall_clock(text: &str) -> Option<(i64, Option<Zone>)> {
    let t = text.trim();
    let (date, rest) = match t.find([' ', 'T']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let mut dp = date.splitn(3, '-');
    let y_text = dp.next()?;
    // Spark's year segment has four digits at least (`'1'` is no timestamp, `'1234'` is).
    if y_text.len() < 4 || y_text.len() > 6 || !y_text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let y: i64 = y_text.parse().ok()?;
    let num = |s: Option<&str>, max_len: usize| -> Option<u32> {
        match s {
            None => Some(1),
            Some(s) if !s.is_empty() && s.len() <= max_len && s.bytes().all(|b| b.is_ascii_digit()) => s.parse().ok(),
            _ => None,
        }
    };
    let m = num(dp.next(), 2)?;
    let d = num(dp.next(), 2)?;
    let (mut hh, mut mm, mut ss, mut us, mut own) = (0u32, 0u32, 0u32, 0u32, None);
    if let Some(rest) = rest.filter(|r| !r.is_empty()) {
        // The zone: Z, UTC/GMT, a signed offset or a region id after the time.
        let (time, zone) = match rest.find(|c: char| c.is_ascii_alphabetic() || matches!(c, '+' | '-' | ' ')) {
            Some(i) => (&rest[..i], Some(rest[i..].trim())),
            None => (rest, None),
        };
        if let Some(z) = zone {
            own = Some(match zone_offset(z) {
                Some(offset) => Zone::Fixed(offset / MICROS_PER_SECOND),
                None => Zone::parse(z)?,
            });
        }
        let (hms, frac) = match time.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (time, None),
        };
        let mut tp = hms.split(':');
        let part = |s: Option<&str>| -> Option<u32> {
            let s = s?;
            if s.is_empty() || s.len() > 2 || !s.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        };
        hh = part(tp.next())?;
        mm = part(tp.next())?;
        ss = match tp.next() {
            Some(s) => part(Some(s))?,
            None => 0,
        };
        if tp.next().is_some() {
            return None;
        }
        if let Some(f) = frac {
            if f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            // Digits past microseconds are dropped, as Spark does.
            let six: String = f.chars().chain(std::iter::repeat('0')).take(6).collect();
            us = six.parse().ok()?;
        }
    }
    Some((from_civil(y, m, d, hh, mm, ss, us)?, own))
}

/// The offset in microseconds of a zone text: `Z`, `UTC`, `GMT`, `UTC+hh:mm`, `±hh`, `±hh:mm`, `±hhmm`.
fn zone_offset(z: &str) -> Option<i64> {
    let z = z.trim();
    let z = z.strip_prefix("UTC").or_else(|| z.strip_prefix("GMT")).unwrap_or(z);
    if z.is_empty() || z == "Z" {
        return Some(0);
    }
    let (sign, body) = match z.as_bytes().first()? {
        b'+' => (1, &z[1..]),
        b'-' => (-1, &z[1..]),
        _ => return None,
    };
    let (h, m) = match body.split_once(':') {
        Some((h, m)) => (h, m),
        None if body.len() == 4 => body.split_at(2),
        None => (body, "0"),
    };
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    if h > 18 || m > 59 {
        return None;
    }
    Some(sign * (h * MICROS_PER_HOUR + m * MICROS_PER_MINUTE))
}

const MONTHS: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const WEEKDAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

/// One element of a datetime pattern.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A pattern letter repeated `n` times.
    Field(char, usize),
    Text(String),
    /// `[...]`: read when the text has it, written always.
    Optional(Vec<Token>),
}

/// Splits a Spark datetime pattern; letters Spark rejects or kiln lacks are an error.
fn tokens(pattern: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    tokens_from(pattern, &chars, &mut i, false)
}

/// The tokens from `chars[*i]` to the end, or (`nested`) to the `]` closing an optional section.
fn tokens_from(pattern: &str, chars: &[char], i: &mut usize, nested: bool) -> Result<Vec<Token>, String> {
    let mut out = vec![];
    while *i < chars.len() {
        let c = chars[*i];
        if c == '[' {
            *i += 1;
            out.push(Token::Optional(tokens_from(pattern, chars, i, true)?));
            continue;
        }
        if c == ']' && nested {
            *i += 1;
            return Ok(out);
        }
        if c == '\'' {
            let mut text = String::new();
            *i += 1;
            if *i < chars.len() && chars[*i] == '\'' {
                out.push(Token::Text("'".into()));
                *i += 1;
                continue;
            }
            while *i < chars.len() {
                if chars[*i] == '\'' {
                    if *i + 1 < chars.len() && chars[*i + 1] == '\'' {
                        text.push('\'');
                        *i += 2;
                        continue;
                    }
                    break;
                }
                text.push(chars[*i]);
                *i += 1;
            }
            *i += 1;
            out.push(Token::Text(text));
        } else if c.is_ascii_alphabetic() {
            let mut n = 1;
            while *i + n < chars.len() && chars[*i + n] == c {
                n += 1;
            }
            // Spark refuses the narrow text forms (`MMMMM`, `EEEEE`, ...) Java 8 reads otherwise.
            if n >= 5 && matches!(c, 'G' | 'M' | 'L' | 'E' | 'Q' | 'q') {
                return Err(format!(
                    "[INCONSISTENT_BEHAVIOR_CROSS_VERSION.DATETIME_PATTERN_RECOGNITION] You may get a different result due to the upgrading to Spark >= 3.0: Fail to recognize '{pattern}' pattern in the DateTimeFormatter. You can form a valid datetime pattern with the guide from 'https://spark.apache.org/docs/latest/sql-ref-datetime-pattern.html'."
                ));
            }
            if !matches!(c, 'y' | 'M' | 'L' | 'd' | 'D' | 'H' | 'h' | 'k' | 'K' | 'm' | 's' | 'S' | 'a' | 'E' | 'u' | 'Q' | 'q' | 'z' | 'Z' | 'X' | 'x' | 'O' | 'V') {
                return Err(format!("Illegal pattern character '{c}'"));
            }
            out.push(Token::Field(c, n));
            *i += n;
        } else {
            out.push(Token::Text(c.to_string()));
            *i += 1;
        }
    }
    if nested {
        return Err(format!("Illegal pattern: '{pattern}' has an unclosed optional section"));
    }
    Ok(out)
}

/// The tokens with optional sections opened: what formatting writes.
fn flat(tokens: Vec<Token>) -> Vec<Token> {
    tokens.into_iter().flat_map(|t| match t {
        Token::Optional(inner) => flat(inner),
        other => vec![other],
    }).collect()
}

/// `date_format`: the TIMESTAMP `instant` rendered with a Spark datetime pattern as a wall-clock
/// time in `zone` (whose name and offset the zone letters print).
pub fn format_with_pattern_in(instant: i64, pattern: &str, zone: Zone) -> Result<String, String> {
    let c = civil(zone.from_utc(instant).ok_or_else(|| "a timestamp out of range".to_string())?);
    let offset = zone.offset_at(instant);
    let weekday = (c.days + 3).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
    let mut s = String::new();
    for t in flat(tokens(pattern)?) {
        match t {
            Token::Text(x) => s.push_str(&x),
            Token::Optional(_) => {}
            Token::Field(f, n) => {
                let num = |v: i64, n: usize| format!("{v:0n$}");
                let text = match f {
                    'y' if n == 2 => num(c.year.rem_euclid(100), 2),
                    'y' => num(c.year, n),
                    'M' | 'L' if n >= 4 => MONTHS[c.month as usize - 1].to_string(),
                    'M' | 'L' if n == 3 => MONTHS[c.month as usize - 1][..3].to_string(),
                    'M' | 'L' => num(c.month as i64, n),
                    'd' => num(c.day as i64, n),
                    'D' => num(c.days - days_from_civil(c.year, 1, 1) + 1, n),
                    'H' => num(c.hour as i64, n),
                    'k' => num(if c.hour == 0 { 24 } else { c.hour as i64 }, n),
                    'h' => num(((c.hour + 11) % 12 + 1) as i64, n),
                    'K' => num((c.hour % 12) as i64, n),
                    'm' => num(c.minute as i64, n),
                    's' => num(c.second as i64, n),
                    'S' => format!("{:06}", c.micros).chars().chain(std::iter::repeat('0')).take(n).collect(),
                    'a' => (if c.hour < 12 { "AM" } else { "PM" }).to_string(),
                    'E' if n >= 4 => WEEKDAYS[weekday].to_string(),
                    'E' => WEEKDAYS[weekday][..3].to_string(),
                    'u' => num(weekday as i64 + 1, n),
                    'Q' | 'q' => num(((c.month - 1) / 3 + 1) as i64, n),
                    'z' if n <= 3 => zone.short_name(instant).ok_or_else(|| "the zone's name is not known to kiln".to_string())?,
                    'X' | 'x' | 'Z' | 'O' => zone_offset_field(f, n, offset)?,
                    'V' => return Err("the pattern letter 'V' is read, not written, by kiln".into()),
                    other => return Err(format!("Illegal pattern character '{other}'")),
                };
                s.push_str(&text);
            }
        }
    }
    Ok(s)
}

/// An offset field as java.time prints it: `X` (`Z` for zero) and `x` as `+05`, `+0530`,
/// `+05:30` by count; `Z` as `+0530`, `GMT+05:30` (4) or `+05:30`/`Z` (5); `O` as `GMT+5:30` or
/// `GMT+05:30` (4), `GMT` for zero.
fn zone_offset_field(letter: char, n: usize, seconds: i64) -> Result<String, String> {
    let a = seconds.abs();
    let (sign, h, m) = (if seconds < 0 { '-' } else { '+' }, a / 3600, a % 3600 / 60);
    Ok(match (letter, n) {
        ('X', _) if seconds == 0 => "Z".into(),
        ('X' | 'x', 1) => if m == 0 { format!("{sign}{h:02}") } else { format!("{sign}{h:02}{m:02}") },
        ('X' | 'x', 2 | 4) | ('Z', 1..=3) => format!("{sign}{h:02}{m:02}"),
        ('X' | 'x', 3 | 5) => format!("{sign}{h:02}:{m:02}"),
        ('Z', 5) => if seconds == 0 { "Z".into() } else { format!("{sign}{h:02}:{m:02}") },
        ('Z' | 'O', 4) if seconds == 0 => "GMT".into(),
        ('Z' | 'O', 4) => format!("GMT{sign}{h:02}:{m:02}"),
        ('O', 1) if seconds == 0 => "GMT".into(),
        ('O', 1) => if m == 0 { format!("GMT{sign}{h}") } else { format!("GMT{sign}{h}:{m:02}") },
        _ => return Err(format!("Too many pattern letters: {letter}")),
    })
}

/// Reads an offset (`Z`, `+05`, `+0530`, `+05:30`) at `text[*i..]`: seconds east of UTC.
fn read_offset(text: &str, i: &mut usize) -> Option<i64> {
    let rest = &text[*i..];
    if rest.starts_with('Z') {
        *i += 1;
        return Some(0);
    }
    let sign = match rest.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let b = rest.as_bytes();
    let two = |k: usize| -> Option<i64> { (b.get(k)?.is_ascii_digit() && b.get(k + 1)?.is_ascii_digit()).then(|| ((b[k] - b'0') * 10 + (b[k + 1] - b'0')) as i64) };
    let h = two(1)?;
    let (m, used) = match (b.get(3), two(3), two(4)) {
        (Some(b':'), _, Some(m)) => (m, 6),
        (_, Some(m), _) => (m, 5),
        _ => (0, 3),
    };
    if h > 18 || m > 59 {
        return None;
    }
    *i += used;
    Some(sign * (h * 3600 + m * 60))
}

/// Reads a zone at `text[*i..]` as java.time's zone letters do: `z` a name (`PST`, `UTC`, a
/// region id), `VV` a region id, `O` `GMT` with an optional offset (`GMT+2`, `GMT+02:00`).
fn read_zone(letter: char, text: &str, i: &mut usize) -> Option<Zone> {
    let rest = &text[*i..];
    if letter == 'O' {
        let after = rest.strip_prefix("GMT")?;
        let mut j = 0;
        let zone = match after.as_bytes().first() {
            Some(b'+' | b'-') => {
                let b = after.as_bytes();
                // `+h`, `+hh`, `+h:mm`, `+hh:mm` (java.time's localized offset).
                let hours_len = b[1..].iter().take(2).take_while(|c| c.is_ascii_digit()).count();
                let h: i64 = after.get(1..1 + hours_len)?.parse().ok()?;
                j = 1 + hours_len;
                let mut m = 0;
                if b.get(j) == Some(&b':') && b.get(j + 1).is_some_and(u8::is_ascii_digit) && b.get(j + 2).is_some_and(u8::is_ascii_digit) {
                    m = after[j + 1..j + 3].parse::<i64>().ok()?;
                    j += 3;
                }
                if h > 18 || m > 59 {
                    return None;
                }
                Zone::Fixed(if b[0] == b'-' { -1 } else { 1 } * (h * 3600 + m * 60))
            }
            _ => Zone::UTC,
        };
        *i += 3 + j;
        return Some(zone);
    }
    let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '+' | '-' | ':'))).unwrap_or(rest.len());
    let name = &rest[..len];
    // java.time reads a daylight-saving name as its region.
    let region = match name {
        "PDT" => "America/Los_Angeles",
        "MDT" => "America/Denver",
        "CDT" => "America/Chicago",
        "EDT" => "America/New_York",
        other => other,
    };
    let zone = Zone::parse(region)?;
    *i += len;
    Some(zone)
}

/// `to_timestamp(text, pattern)`: the text read with a Spark datetime pattern, as its
/// wall-clock time and the zone or offset it names, if any; None when it does not match
/// (Spark's ANSI mode then raises CANNOT_PARSE_TIMESTAMP).
pub fn parse_with_pattern(text: &str, pattern: &str) -> Result<Option<(i64, Option<Zone>)>, String> {
    let toks = tokens(pattern)?;
    let mut f = Parsed { y: 1970, mo: 1, d: 1, h: 0, mi: 0, s: 0, us: 0, pm: None, hour12: false, offset: None };
    let mut i = 0;
    if !read_tokens(&toks, text, &mut i, &mut f)? || i != text.len() {
        return Ok(None);
    }
    if f.hour12 || f.pm.is_some() {
        if f.h > 12 {
            return Ok(None);
        }
        f.h = (f.h % 12) + if f.pm == Some(true) { 12 } else { 0 };
    }
    Ok(from_civil(f.y, f.mo, f.d, f.h, f.mi, f.s, f.us).map(|wall| (wall, f.offset)))
}

/// The fields a pattern has read so far.
#[derive(Clone)]
struct Parsed {
    y: i64,
    mo: u32,
    d: u32,
    h: u32,
    mi: u32,
    s: u32,
    us: u32,
    pm: Option<bool>,
    hour12: bool,
    offset: Option<Zone>,
}

/// Reads `toks` from `text[*i..]` into `f`; false when the text does not match. An optional
/// section that does not match reads nothing.
fn read_tokens(toks: &[Token], text: &str, i: &mut usize, f: &mut Parsed) -> Result<bool, String> {
    let b = text.as_bytes();
    for (k, t) in toks.iter().enumerate() {
        let (letter, n) = match t {
            Token::Text(x) => {
                if !text[*i..].starts_with(x.as_str()) {
                    return Ok(false);
                }
                *i += x.len();
                continue;
            }
            Token::Optional(inner) => {
                let (at, before) = (*i, f.clone());
                if !read_tokens(inner, text, i, f)? {
                    *i = at;
                    *f = before;
                }
                continue;
            }
            Token::Field(letter, n) => (*letter, *n),
        };
        // A field followed by another field reads exactly n digits; otherwise as many as there are.
        let fixed = matches!(toks.get(k + 1), Some(Token::Field(..)));
        let digits = |i: &mut usize, max: usize| -> Option<i64> {
            let start = *i;
            while *i < b.len() && b[*i].is_ascii_digit() && *i - start < max {
                *i += 1;
            }
            if *i == start {
                return None;
            }
            text[start..*i].parse().ok()
        };
        // Spark's (java.time's) widths: one letter reads one digit or more, two or more letters
        // exactly that many (`MM` refuses `1`, `yyyy` refuses `19` and `20191`), `yyy` three or more.
        let (least, width) = match (letter, n) {
            (_, 1) => (1, if fixed { 1 } else { usize::MAX }),
            ('y', 3) => (3, usize::MAX),
            _ => (n, n),
        };
        let v = match letter {
            'M' | 'L' if n >= 3 => {
                let found = MONTHS.iter().position(|m| {
                    let name = if n == 3 { &m[..3] } else { m };
                    text[*i..].len() >= name.len() && text[*i..*i + name.len()].eq_ignore_ascii_case(name)
                });
                let Some(m) = found else { return Ok(false) };
                *i += if n == 3 { 3 } else { MONTHS[m].len() };
                f.mo = m as u32 + 1;
                continue;
            }
            'a' => {
                match text[*i..].get(..2).map(|x| x.to_ascii_uppercase()).as_deref() {
                    Some("AM") => f.pm = Some(false),
                    Some("PM") => f.pm = Some(true),
                    _ => return Ok(false),
                }
                *i += 2;
                continue;
            }
            'E' => {
                let found = WEEKDAYS.iter().find(|w| {
                    let name = if n >= 4 { w } else { &w[..3] };
                    text[*i..].len() >= name.len() && text[*i..*i + name.len()].eq_ignore_ascii_case(name)
                });
                let Some(w) = found else { return Ok(false) };
                *i += if n >= 4 { w.len() } else { 3 };
                continue;
            }
            'X' | 'x' | 'Z' => {
                let Some(o) = read_offset(text, i) else { return Ok(false) };
                f.offset = Some(Zone::Fixed(o));
                continue;
            }
            'z' | 'O' | 'V' => {
                let Some(z) = read_zone(letter, text, i) else { return Ok(false) };
                f.offset = Some(z);
                continue;
            }
            'S' => {
                let start = *i;
                // A fraction of n letters reads 1 to n digits (exactly n before another field).
                let Some(v) = digits(&mut *i, n) else { return Ok(false) };
                if fixed && *i - start != n {
                    return Ok(false);
                }
                let len = *i - start;
                f.us = if len <= 6 { (v * 10i64.pow(6 - len as u32)) as u32 } else { (v / 10i64.pow(len as u32 - 6)) as u32 };
                continue;
            }
            _ => {
                let start = *i;
                match digits(&mut *i, width) {
                    Some(v) if *i - start >= least => v,
                    _ => return Ok(false),
                }
            }
        };
        match letter {
            'y' if n == 2 => f.y = 2000 + v,
            'y' => f.y = v,
            'M' | 'L' => f.mo = v as u32,
            'd' => f.d = v as u32,
            'H' | 'k' => f.h = v as u32,
            'h' | 'K' => {
                f.h = v as u32;
                f.hour12 = true;
            }
            'm' => f.mi = v as u32,
            's' => f.s = v as u32,
            _ => return Err(format!("the pattern letter '{letter}' cannot be parsed")),
        }
    }
    Ok(true)
}

/// The timestamp `months` later, the day clamped to the month's last (Spark's timestampAddMonths).
pub fn add_months(ts: i64, months: i32) -> Option<i64> {
    if months == 0 {
        return Some(ts);
    }
    let c = civil(ts);
    let total = c.year.checked_mul(12)? + c.month as i64 - 1 + months as i64;
    let (y, m) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32);
    let d = (0..4).map(|k| c.day.saturating_sub(k)).find(|d| from_civil(y, m, *d, 0, 0, 0, 0).is_some())?;
    from_civil(y, m, d, c.hour, c.minute, c.second, c.micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_format() {
        let t = parse_timestamp("2024-02-29 13:05:09.12").unwrap();
        assert_eq!(format_timestamp(t), "2024-02-29 13:05:09.12");
        assert_eq!(parse_timestamp("2024-02-29T13:05:09Z"), parse_timestamp("2024-02-29 15:05:09+02:00"));
        assert_eq!(format_timestamp(parse_timestamp("2024-3-1").unwrap()), "2024-03-01 00:00:00");
        assert_eq!(format_timestamp(-1), "1969-12-31 23:59:59.999999");
        assert!(parse_timestamp("2024-02-30").is_none());
        assert!(parse_timestamp("x").is_none());
        assert_eq!(format_with_pattern_in(t, "yyyy/MM/dd HH:mm:ss.SSS a EEE MMM", Zone::UTC).unwrap(), "2024/02/29 13:05:09.120 PM Thu Feb");
        assert_eq!(format_with_pattern_in(t, "'at' h 'o''clock'", Zone::UTC).unwrap(), "at 1 o'clock");
        assert_eq!(parse_with_pattern("29/02/2024 01:05 PM", "dd/MM/yyyy hh:mm a").unwrap(), Some((parse_timestamp("2024-02-29 13:05").unwrap(), None)));
        assert_eq!(parse_with_pattern("20240229", "yyyyMMdd").unwrap(), parse_timestamp("2024-02-29").map(|t| (t, None)));
        assert_eq!(parse_with_pattern("2024-02-29 10:00 +05:30", "yyyy-MM-dd HH:mm XXX").unwrap(), parse_timestamp("2024-02-29 10:00").map(|t| (t, Some(Zone::Fixed(19_800)))));
        assert_eq!(parse_with_pattern("2024-02-29 10:00 Z", "yyyy-MM-dd HH:mm X").unwrap(), parse_timestamp("2024-02-29 10:00").map(|t| (t, Some(Zone::UTC))));
        let la = Zone::parse("America/Los_Angeles").unwrap();
        let t = parse_timestamp("2020-07-01 00:00").unwrap();
        assert_eq!(format_with_pattern_in(t, "yyyy-MM-dd HH:mm z XXX Z O", la).unwrap(), "2020-06-30 17:00 PDT -07:00 -0700 GMT-7");
        assert_eq!(format_with_pattern_in(t, "z X ZZZZ", Zone::UTC).unwrap(), "UTC Z GMT");
        assert_eq!(parse_with_pattern("2024-02-29", "yyyy/MM/dd").unwrap(), None);
        assert!(tokens("yyyy-bb").is_err());
    }
}
