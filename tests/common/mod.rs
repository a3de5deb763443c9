//! Helpers shared by the integration tests.

/// splitmix64: a small deterministic generator, so a failure reproduces from its seed.
pub struct Rng(pub u64);

#[allow(dead_code)] // each test binary uses its own part
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

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
