//! Java's text of a floating-point number (`Double.toString`), which Spark prints.

/// Java's `Double.toString` of a double (shortest round-trip digits).
pub fn java_double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // `{:e}` gives the shortest round-trip digits as `d.ddde<exp>`.
    java_from_exp(&format!("{v:e}"), (1e-3..1e7).contains(&v.abs()))
}

/// Java's `Float.toString` of a float.
pub fn java_float(v: f32) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    java_from_exp(&format!("{v:e}"), (1e-3..1e7).contains(&v.abs()))
}

/// Rewrites Rust's `-1.25e-5` into Java's plain (`0.0125`) or scientific (`1.25E-5`) form.
fn java_from_exp(rust: &str, plain: bool) -> String {
    let (mantissa, exp) = rust.split_once('e').unwrap_or((rust, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if neg { "-" } else { "" };
    if !plain {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        return format!("{sign}{first}.{rest}E{exp}");
    }
    if exp >= 0 {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{sign}{digits}{}.0", "0".repeat(int_len - digits.len()))
        } else {
            let (int, frac) = digits.split_at(int_len);
            format!("{sign}{int}.{frac}")
        }
    } else {
        format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_java() {
        let cases = [
            (40.0, "40.0"),
            (9999999.0, "9999999.0"),
            (1e7, "1.0E7"),
            (1.0e-4, "1.0E-4"),
            (0.001, "0.001"),
            (13.333333333333334, "13.333333333333334"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1.5, "-1.5"),
            (123456.789, "123456.789"),
            (1.25e-5, "1.25E-5"),
            (-2.5e10, "-2.5E10"),
            (1e100, "1.0E100"),
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (f64::MAX, "1.7976931348623157E308"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (0.0012, "0.0012"),
            (100.0, "100.0"),
        ];
        for (v, want) in cases {
            assert_eq!(java_double(v), want, "{v:e}");
        }
        assert_eq!(java_float(0.1f32), "0.1");
        assert_eq!(java_float(1e10f32), "1.0E10");
    }
}
