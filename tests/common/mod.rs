//! Helpers shared by the integration tests.

/// Plan text with run-dependent numbers masked: `#123` -> `#n`, `plan_id=4` -> `plan_id=n`.
#[allow(dead_code)]
pub fn mask_ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if (c == '#' || (c == '=' && out.ends_with("plan_id="))) && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                chars.next();
            }
            out.push('n');
        }
    }
    out
}

/// The lines of a CSV result with the header first and the rows sorted: results whose order is
/// undefined compare as multisets.
#[allow(dead_code)]
pub fn sorted_lines(s: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = s.lines().collect();
    if lines.len() > 1 {
        lines[1..].sort_unstable();
    }
    lines
}
