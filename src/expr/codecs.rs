//! Byte and text codecs behind Spark's encode / decode (Java charsets with Spark 4's strict
//! coding errors), to_binary's base64 check, parse_url's reading of a URL as
//! `java.net.URI` reads it, and the UTF-8 validation functions.

/// The charsets encode / decode take (Spark 4 with legacy javaCharsets off), as named in errors.
pub(crate) const CHARSETS: &[&str] = &["iso-8859-1", "us-ascii", "utf-16", "utf-16be", "utf-16le", "utf-32", "utf-8"];

/// One of `CHARSETS`, by any case.
pub(crate) fn charset(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    CHARSETS.iter().copied().find(|c| *c == lower)
}

/// `s` in `charset`; None where a character has no encoding there (MALFORMED_CHARACTER_CODING).
/// UTF-16 is big-endian with a byte-order mark, as Java writes it; UTF-32 big-endian.
pub(crate) fn encode(s: &str, charset: &str) -> Option<Vec<u8>> {
    Some(match charset {
        "utf-8" => s.as_bytes().to_vec(),
        "us-ascii" => s.chars().map(|c| u8::try_from(c as u32).ok().filter(|b| *b < 0x80)).collect::<Option<_>>()?,
        "iso-8859-1" => s.chars().map(|c| u8::try_from(c as u32).ok()).collect::<Option<_>>()?,
        "utf-16" | "utf-16be" => {
            let bom: &[u16] = if charset == "utf-16" && !s.is_empty() { &[0xFEFF] } else { &[] };
            bom.iter().copied().chain(s.encode_utf16()).flat_map(u16::to_be_bytes).collect()
        }
        "utf-16le" => s.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        "utf-32" => s.chars().flat_map(|c| (c as u32).to_be_bytes()).collect(),
        _ => return None,
    })
}

/// `b` read in `charset`; None for bytes that are not text there (MALFORMED_CHARACTER_CODING).
/// UTF-16 reads a byte-order mark, big-endian without one.
pub(crate) fn decode(b: &[u8], charset: &str) -> Option<String> {
    match charset {
        "utf-8" => String::from_utf8(b.to_vec()).ok(),
        "us-ascii" => b.iter().map(|&x| (x < 0x80).then_some(x as char)).collect(),
        "iso-8859-1" => Some(b.iter().map(|&x| x as char).collect()),
        "utf-16" | "utf-16be" | "utf-16le" => {
            if b.len() % 2 != 0 {
                return None;
            }
            let (mut bytes, mut little) = (b, charset == "utf-16le");
            if charset == "utf-16" {
                match b {
                    [0xFE, 0xFF, rest @ ..] => bytes = rest,
                    [0xFF, 0xFE, rest @ ..] => (bytes, little) = (rest, true),
                    _ => {}
                }
            }
            let units = bytes.chunks(2).map(|p| if little { u16::from_le_bytes([p[0], p[1]]) } else { u16::from_be_bytes([p[0], p[1]]) });
            char::decode_utf16(units).collect::<Result<String, _>>().ok()
        }
        "utf-32" => {
            if b.len() % 4 != 0 {
                return None;
            }
            b.chunks(4).map(|p| char::from_u32(u32::from_be_bytes([p[0], p[1], p[2], p[3]]))).collect()
        }
        _ => None,
    }
}

/// Whether `s` is base64 as Spark 4's to_binary accepts it: the alphabet, whitespace skipped,
/// at most two `=` and only at the end, and not one character past a group of four.
pub(crate) fn strict_base64(s: &str) -> bool {
    let (mut chars, mut pad) = (0usize, 0usize);
    for c in s.chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '+' | '/' if pad == 0 => chars += 1,
            '=' => pad += 1,
            c if c.is_whitespace() => {}
            _ => return false,
        }
    }
    if pad > 2 || chars % 4 == 1 {
        return false;
    }
    pad == 0 || (chars + pad) % 4 == 0
}

/// A URL's parts as `java.net.URI` gives them raw (still %-escaped); None for each part absent.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Url<'a> {
    pub scheme: Option<&'a str>,
    pub authority: Option<&'a str>,
    pub user_info: Option<&'a str>,
    pub host: Option<&'a str>,
    pub path: Option<&'a str>,
    pub query: Option<&'a str>,
    pub fragment: Option<&'a str>,
}

impl<'a> Url<'a> {
    /// `s` parsed as RFC 2396 with Java's deviations (an empty authority before a path, and
    /// non-ASCII characters allowed); None where `new URI(s)` throws.
    pub(crate) fn parse(s: &'a str) -> Option<Url<'a>> {
        let mut url = Url::default();
        let mut rest = s;
        if let Some(p) = s.find([':', '/', '?', '#']).filter(|&p| s.as_bytes()[p] == b':') {
            let scheme = &s[..p];
            let mut cs = scheme.chars();
            if !cs.next().is_some_and(|c| c.is_ascii_alphabetic()) || !cs.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) {
                return None;
            }
            url.scheme = Some(scheme);
            rest = &s[p + 1..];
            if rest.is_empty() {
                return None;
            }
            if !rest.starts_with('/') {
                // Opaque (`mailto:a@b`): no path, query or authority.
                let (part, fragment) = split_at_char(rest, '#');
                if !legal(part, URIC) {
                    return None;
                }
                if fragment.is_some_and(|f| !legal(f, URIC)) {
                    return None;
                }
                url.fragment = fragment;
                return Some(url);
            }
        }
        if let Some(after) = rest.strip_prefix("//") {
            let end = after.find(['/', '?', '#']).unwrap_or(after.len());
            let authority = &after[..end];
            rest = &after[end..];
            if authority.is_empty() {
                if rest.is_empty() {
                    return None;
                }
            } else {
                url.authority = Some(authority);
                match server(authority) {
                    Some((user_info, host)) => (url.user_info, url.host) = (user_info, Some(host)),
                    None if legal(authority, REG_NAME) => {}
                    None => return None,
                }
            }
        }
        let (before_fragment, fragment) = split_at_char(rest, '#');
        let (path, query) = split_at_char(before_fragment, '?');
        if !legal(path, PATH) || query.is_some_and(|q| !legal(q, URIC)) || fragment.is_some_and(|f| !legal(f, URIC)) {
            return None;
        }
        (url.path, url.query, url.fragment) = (Some(path), query, fragment);
        Some(url)
    }

    /// Spark's parse_url part (`HOST`, `PATH`, `QUERY`, `REF`, `PROTOCOL`, `FILE`, `AUTHORITY`,
    /// `USERINFO`; case-sensitive); None for an absent part or another name.
    pub(crate) fn part(&self, name: &str) -> Option<String> {
        let s = |p: Option<&str>| p.map(str::to_string);
        match name {
            "HOST" => s(self.host),
            "PATH" => s(self.path),
            "QUERY" => s(self.query),
            "REF" => s(self.fragment),
            "PROTOCOL" => s(self.scheme),
            "FILE" => match self.query {
                Some(q) => Some(format!("{}?{q}", self.path.unwrap_or("null"))),
                None => s(self.path),
            },
            "AUTHORITY" => s(self.authority),
            "USERINFO" => s(self.user_info),
            _ => None,
        }
    }
}

fn split_at_char(s: &str, c: char) -> (&str, Option<&str>) {
    match s.split_once(c) {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    }
}

/// Punctuation each component allows besides letters, digits, `-_.!~*'()`, `%HH` escapes and
/// non-ASCII characters (Java's "other" category).
const URIC: &str = ";/?:@&=+$,[]";
const PATH: &str = ";/:@&=+$,";
const REG_NAME: &str = "$,;:@&=+";
const USER_INFO: &str = ";:&=+$,";

fn legal(s: &str, punctuation: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit) && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)) {
                return false;
            }
            i += 3;
            continue;
        }
        let ok = c.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&c) || punctuation.as_bytes().contains(&c) || c >= 0x80;
        if !ok {
            return false;
        }
        i += 1;
    }
    // Non-ASCII is allowed unless it is a space or control character.
    s.chars().all(|c| c.is_ascii() || !(c.is_whitespace() || c.is_control()))
}

/// A server-based authority `[userinfo@]host[:port]`: (userinfo, host), or None when it is not
/// one (Java then keeps it as a registry name, with no host).
fn server(authority: &str) -> Option<(Option<&str>, &str)> {
    let (user_info, host_port) = match authority.rfind('@') {
        Some(p) => (Some(&authority[..p]), &authority[p + 1..]),
        None => (None, authority),
    };
    if user_info.is_some_and(|u| !legal(u, USER_INFO)) {
        return None;
    }
    let (host, port) = if host_port.starts_with('[') {
        let close = host_port.find(']')?;
        let inside = &host_port[1..close];
        if inside.is_empty() || !inside.chars().all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.') || !inside.contains(':') {
            return None;
        }
        (&host_port[..=close], &host_port[close + 1..])
    } else {
        let end = host_port.find(':').unwrap_or(host_port.len());
        (&host_port[..end], &host_port[end..])
    };
    if !port.is_empty() && !(port.starts_with(':') && port[1..].bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    if host.starts_with('[') {
        return Some((user_info, host));
    }
    // A hostname: dot-separated labels of letters, digits and inner hyphens (an IPv4 address
    // is one of these too).
    let labels = host.strip_suffix('.').unwrap_or(host);
    let ok = !labels.is_empty()
        && labels.split('.').all(|l| {
            let b = l.as_bytes();
            !b.is_empty() && b[0].is_ascii_alphanumeric() && b[b.len() - 1].is_ascii_alphanumeric() && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        });
    ok.then_some((user_info, host))
}

/// `b` with each ill-formed UTF-8 sequence replaced by U+FFFD, as Spark's makeValid.
pub(crate) fn make_valid_utf8(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Spark's INVALID_UTF8_STRING message text for bytes: each byte `\xHH`, valid ASCII as is.
pub(crate) fn show_bytes(b: &[u8]) -> String {
    b.iter().map(|&x| if x.is_ascii_graphic() || x == b' ' { (x as char).to_string() } else { format!("\\x{x:02X}") }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_as_java_reads_them() {
        let u = Url::parse("http://user:pw@host:8080/p/a?x=1&y=2#frag").unwrap();
        assert_eq!((u.scheme, u.user_info, u.host, u.path, u.query, u.fragment), (Some("http"), Some("user:pw"), Some("host"), Some("/p/a"), Some("x=1&y=2"), Some("frag")));
        assert_eq!(Url::parse("http://a_b.com/p").unwrap().host, None);
        assert_eq!(Url::parse("http://a_b.com/p").unwrap().authority, Some("a_b.com"));
        assert_eq!(Url::parse("http://[::1]:80/p").unwrap().host, Some("[::1]"));
        assert_eq!(Url::parse("mailto:a@b.c").unwrap().path, None);
        for bad in ["http://a b/c", "http://a/b c", "http://a/%zz", "http:", "1abc:x", "http://[::1/p", "http://a/b|c", "inva lid://x"] {
            assert!(Url::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn charsets_round_trip() {
        assert_eq!(encode("é", "utf-16"), Some(vec![0xFE, 0xFF, 0x00, 0xE9]));
        assert_eq!(decode(&[0xFF, 0xFE, 0xE9, 0x00], "utf-16").as_deref(), Some("é"));
        assert_eq!(encode("é", "us-ascii"), None);
        assert_eq!(decode(&[0xD8, 0x00], "utf-16be"), None);
    }

    #[test]
    fn base64_as_spark_checks_it() {
        for (s, ok) in [("YWJj", true), ("YW Jj", true), ("YQ==", true), ("YQ", true), ("YQ=", false), ("Y", false), ("YQ===", false), ("YQ==YQ", false), ("@@", false)] {
            assert_eq!(strict_base64(s), ok, "{s}");
        }
    }
}
