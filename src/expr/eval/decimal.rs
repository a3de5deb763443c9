//! Exact decimal math on unscaled integers: rescaling with HALF_UP rounding, precision checks,
//! division, and parsing decimal digit strings (from SQL text or a double's shortest form).
//! Intermediates use i256 so that exact products and upscaled operands of 38-digit values fit.

use arrow::datatypes::i256;

const TEN: i256 = i256::from_i128(10);

/// 10^0 ..= 10^76 (10^76 is the largest power of ten below i256::MAX).
const POW10: [i256; 77] = {
    let mut t = [i256::ONE; 77];
    let mut i = 1;
    while i < 77 {
        t[i] = t[i - 1].wrapping_mul(TEN);
        i += 1;
    }
    t
};

/// 10^n for n <= 76.
pub(super) fn pow10(n: u32) -> Option<i256> {
    POW10.get(n as usize).copied()
}

/// 10^n as i128, for n <= 38.
pub(super) fn pow10_i128(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

/// Converts `v` from scale `from` to scale `to`: exact when scaling up (None on i256 overflow),
/// HALF_UP (away from zero on ties) when scaling down, as Java's BigDecimal.setScale.
pub(super) fn rescale(v: i256, from: i32, to: i32) -> Option<i256> {
    if to == from {
        return Some(v);
    }
    if to > from {
        let k = (to - from) as u32;
        if v == i256::ZERO {
            return Some(v);
        }
        return v.checked_mul(pow10(k)?);
    }
    let k = (from - to) as u32;
    match pow10(k) {
        Some(d) => Some(div_half_up(v, d)),
        // |v| < 10^77 <= d: the result rounds to zero.
        None => Some(i256::ZERO),
    }
}

/// `v / d` rounded HALF_UP, for d > 0.
fn div_half_up(v: i256, d: i256) -> i256 {
    let (q, r) = v.wrapping_div_rem(d);
    // |r| < d <= 10^76, so doubling cannot overflow i256.
    if r.wrapping_abs().wrapping_mul(i256::from_i128(2)) >= d {
        if v.is_negative() {
            q.wrapping_sub(i256::ONE)
        } else {
            q.wrapping_add(i256::ONE)
        }
    } else {
        q
    }
}

/// The i128 value of `v` if it has at most `precision` digits.
pub(super) fn fit(v: i256, precision: u8) -> Option<i128> {
    let limit = pow10(precision as u32)?;
    let abs = v.checked_abs()?;
    if abs < limit {
        v.to_i128()
    } else {
        None
    }
}

/// Rounds HALF_UP `(a / 10^sa) / (b / 10^sb)` to scale `scale`; None when the quotient
/// has more than 38 integral+scale digits. `b` must not be zero.
pub(super) fn divide(a: i128, sa: i8, b: i128, sb: i8, scale: i8) -> Option<i256> {
    let neg = (a < 0) != (b < 0);
    let num = i256::from_i128(a).checked_abs()?;
    let mut den = i256::from_i128(b).checked_abs()?;
    // quotient = num * 10^e / den
    let e = sb as i32 + scale as i32 - sa as i32;
    let mut left = if e >= 0 {
        e as u32
    } else {
        match pow10(e.unsigned_abs()).and_then(|p| den.checked_mul(p)) {
            Some(d) => den = d,
            None => return Some(i256::ZERO),
        }
        0
    };
    let limit = pow10(38)?;
    let (mut q, mut r) = num.checked_div_rem(den)?;
    // Long division in chunks of 38 digits: r < den < 10^38 here, so r * 10^38 fits.
    while left > 0 {
        let k = left.min(38);
        let p = pow10(k)?;
        let rr = r.checked_mul(p)?;
        q = q.checked_mul(p)?.checked_add(rr.checked_div(den)?)?;
        r = rr.checked_rem(den)?;
        if q >= limit {
            return None;
        }
        left -= k;
    }
    if r.checked_mul(i256::from_i128(2))? >= den {
        q = q.checked_add(i256::ONE)?;
    }
    Some(if neg { q.wrapping_neg() } else { q })
}

/// Renders an unscaled i256 with `scale` fraction digits (`-12.50`).
pub(super) fn format_i256(v: i256, scale: i8) -> String {
    let neg = v.is_negative();
    let digits = v.wrapping_abs().to_string();
    if scale <= 0 {
        let zeros = if v == i256::ZERO { String::new() } else { "0".repeat(scale.unsigned_abs() as usize) };
        return format!("{}{digits}{zeros}", if neg { "-" } else { "" });
    }
    let scale = scale as usize;
    let padded = if digits.len() <= scale { format!("{}{}", "0".repeat(scale + 1 - digits.len()), digits) } else { digits };
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{}{int}.{frac}", if neg { "-" } else { "" })
}

/// A decimal number as significant digits: value = ±0.d1d2d3... × 10^point.
#[derive(Debug, PartialEq)]
pub(super) struct Digits {
    pub negative: bool,
    /// ASCII digits without leading zeros; empty for zero.
    pub digits: Vec<u8>,
    pub point: i64,
}

impl Digits {
    /// Parses Java BigDecimal syntax: `[+-]digits[.digits][e[+-]digits]`, at least one digit.
    pub fn parse(text: &str) -> Option<Digits> {
        let b = text.as_bytes();
        let mut i = 0;
        let negative = match b.first() {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut digits = Vec::new();
        let mut int_digits: i64 = 0;
        let mut seen_digit = false;
        let mut seen_point = false;
        while i < b.len() {
            match b[i] {
                c @ b'0'..=b'9' => {
                    seen_digit = true;
                    if !(digits.is_empty() && c == b'0') {
                        digits.push(c);
                        if !seen_point {
                            int_digits += 1;
                        }
                    } else if seen_point {
                        // a leading zero after the point shifts the significant digits right
                        int_digits -= 1;
                    }
                }
                b'.' if !seen_point => seen_point = true,
                _ => break,
            }
            i += 1;
        }
        if !seen_digit {
            return None;
        }
        let mut exp: i64 = 0;
        if i < b.len() {
            if b[i] != b'e' && b[i] != b'E' {
                return None;
            }
            let e = &text[i + 1..];
            let digits_only = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits_only.is_empty() || !digits_only.bytes().all(|c| c.is_ascii_digit()) || digits_only.len() > 10 {
                return None;
            }
            exp = e.parse().ok()?;
        }
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        let point = if digits.is_empty() { 0 } else { int_digits + exp };
        Some(Digits { negative, digits, point })
    }

    /// The shortest digits that round-trip `v` (as Java's Double.toString / Scala's BigDecimal(d)).
    /// None for NaN and infinities.
    pub fn from_f64(v: f64) -> Option<Digits> {
        if !v.is_finite() {
            return None;
        }
        Digits::parse(&format!("{v:e}"))
    }

    /// The unscaled value at `scale`, rounded HALF_UP; None if it needs more than 38 digits.
    pub fn to_unscaled(&self, scale: i32) -> Option<i128> {
        if self.digits.is_empty() {
            return Some(0);
        }
        // number of digits that land left of the rounding position
        let n = self.point + scale as i64;
        if n < 0 {
            return Some(0);
        }
        if n > 39 {
            return None;
        }
        let n = n as usize;
        let mut v: i128 = 0;
        for k in 0..n {
            let d = self.digits.get(k).map_or(0, |c| (c - b'0') as i128);
            v = v.checked_mul(10)?.checked_add(d)?;
        }
        if self.digits.get(n).is_some_and(|c| *c >= b'5') {
            v = v.checked_add(1)?;
        }
        Some(if self.negative { -v } else { v })
    }
}

/// round(int, d): unchanged for d >= 0, else HALF_UP to a multiple of 10^-d.
pub(super) fn round_integral(x: i128, d: i32) -> i128 {
    if d >= 0 {
        return x;
    }
    let Some(m) = pow10_i128(d.unsigned_abs()) else { return 0 };
    let (q, r) = (x / m, x % m);
    let q = if r.abs() * 2 >= m { q + x.signum() } else { q };
    q.saturating_mul(m)
}

/// `v / 10^k` rounded HALF_EVEN (bround's rounding).
pub(crate) fn half_even(v: i128, k: u32) -> i128 {
    let Some(m) = 10i128.checked_pow(k) else { return 0 };
    let (q, r) = (v / m, v % m);
    let twice = r.abs() * 2;
    if twice > m || (twice == m && q % 2 != 0) { q + v.signum() } else { q }
}

/// bround(x, d) of an integer: for d < 0, x rounded HALF_EVEN to a multiple of 10^-d.
pub(crate) fn bround_integral(x: i128, d: i32) -> i128 {
    if d >= 0 { x } else { half_even(x, d.unsigned_abs()).saturating_mul(10i128.checked_pow(d.unsigned_abs()).unwrap_or(0)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i128) -> i256 {
        i256::from_i128(v)
    }

    #[test]
    fn rescale_rounds_half_up_away_from_zero() {
        assert_eq!(rescale(i(125), 2, 1), Some(i(13)));
        assert_eq!(rescale(i(-125), 2, 1), Some(i(-13)));
        assert_eq!(rescale(i(124), 2, 1), Some(i(12)));
        assert_eq!(rescale(i(-124), 2, 0), Some(i(-1)));
        assert_eq!(rescale(i(5), 0, 2), Some(i(500)));
        assert_eq!(rescale(i(5), 0, 100), None);
        assert_eq!(rescale(i(5), 100, 0), Some(i(0)));
    }

    #[test]
    fn divide_long_division_rounds() {
        // 1 / 3 at scale 6
        assert_eq!(divide(1, 0, 3, 0, 6), Some(i(333333)));
        // 2 / 3 at scale 6 -> 0.666667
        assert_eq!(divide(2, 0, 3, 0, 6), Some(i(666667)));
        // -1.00 / 8 at scale 2 -> -0.125 -> -0.13
        assert_eq!(divide(-100, 2, 8, 0, 2), Some(i(-13)));
        // needs more than 38 digits
        assert_eq!(divide(i128::from(u64::MAX), 0, 1, 10, 20), None);
    }

    #[test]
    fn digits_parse_and_round() {
        let d = Digits::parse("123.456").unwrap();
        assert_eq!(d.to_unscaled(2), Some(12346));
        assert_eq!(Digits::parse("-0.005").unwrap().to_unscaled(2), Some(-1));
        assert_eq!(Digits::parse("1.5e3").unwrap().to_unscaled(0), Some(1500));
        assert_eq!(Digits::parse(".5").unwrap().to_unscaled(0), Some(1));
        assert_eq!(Digits::parse("0.0004").unwrap().to_unscaled(3), Some(0));
        assert_eq!(Digits::parse("000").unwrap().to_unscaled(5), Some(0));
        assert_eq!(Digits::parse("1e40").unwrap().to_unscaled(0), None);
        assert!(Digits::parse("abc").is_none());
        assert!(Digits::parse("1.2.3").is_none());
        assert!(Digits::parse("1e").is_none());
        assert!(Digits::parse("-").is_none());
        assert_eq!(Digits::from_f64(1.005).unwrap().to_unscaled(2), Some(101));
    }

    #[test]
    fn formats_i256_with_scale() {
        assert_eq!(format_i256(i(-5), 2), "-0.05");
        assert_eq!(format_i256(i(1234), 2), "12.34");
        assert_eq!(format_i256(i(12), 0), "12");
    }
}
