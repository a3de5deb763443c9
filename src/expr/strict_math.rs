//! The java.lang.StrictMath functions Spark calls (fdlibm 5.3), so results match Spark's to
//! the last digit: exp, expm1, log and log1p from the `libm` crate (FreeBSD msun, fdlibm's
//! algorithms); log10, sinh, cosh and tanh written here as fdlibm writes them (FreeBSD's log10
//! and musl's hyperbolics are other algorithms).

pub(crate) fn exp(x: f64) -> f64 {
    libm::exp(x)
}

pub(crate) fn expm1(x: f64) -> f64 {
    libm::expm1(x)
}

pub(crate) fn log(x: f64) -> f64 {
    libm::log(x)
}

pub(crate) fn log1p(x: f64) -> f64 {
    libm::log1p(x)
}

fn high_word(x: f64) -> i32 {
    (x.to_bits() >> 32) as i32
}

fn with_high_word(x: f64, hi: i32) -> f64 {
    f64::from_bits(((hi as u32 as u64) << 32) | (x.to_bits() & 0xffff_ffff))
}

/// fdlibm's e_log10.c: n·log10(2) + log(m)/ln(10) for x = 2^n·m.
pub(crate) fn log10(x: f64) -> f64 {
    const TWO54: f64 = 1.801_439_850_948_198_4e16;
    const IVLN10: f64 = 4.342_944_819_032_518_166_68e-1;
    const LOG10_2HI: f64 = 3.010_299_956_636_117_713_06e-1;
    const LOG10_2LO: f64 = 3.694_239_077_158_930_786_16e-13;
    let mut x = x;
    let mut hx = high_word(x);
    let lx = x.to_bits() as u32;
    let mut k: i32 = 0;
    if hx < 0x0010_0000 {
        if ((hx & 0x7fff_ffff) as u32 | lx) == 0 {
            return f64::NEG_INFINITY;
        }
        if hx < 0 {
            return f64::NAN;
        }
        k -= 54;
        x *= TWO54;
        hx = high_word(x);
    }
    if hx >= 0x7ff0_0000 {
        return x + x;
    }
    k += (hx >> 20) - 1023;
    let i = ((k as u32) & 0x8000_0000) >> 31;
    hx = (hx & 0x000f_ffff) | ((0x3ff - i as i32) << 20);
    let y = (k + i as i32) as f64;
    let x = with_high_word(x, hx);
    let z = y * LOG10_2LO + IVLN10 * log(x);
    z + y * LOG10_2HI
}

/// fdlibm's e_sinh.c.
pub(crate) fn sinh(x: f64) -> f64 {
    let jx = high_word(x);
    let ix = jx & 0x7fff_ffff;
    if ix >= 0x7ff0_0000 {
        return x + x;
    }
    let h = if jx < 0 { -0.5 } else { 0.5 };
    if ix < 0x4036_0000 {
        if ix < 0x3e30_0000 {
            return x;
        }
        let t = expm1(x.abs());
        if ix < 0x3ff0_0000 {
            return h * (2.0 * t - t * t / (t + 1.0));
        }
        return h * (t + t / (t + 1.0));
    }
    if ix < 0x4086_2E42 {
        return h * exp(x.abs());
    }
    if x.abs() <= 7.104_758_600_739_439e2 {
        let w = exp(0.5 * x.abs());
        let t = h * w;
        return t * w;
    }
    x * 1.0e307
}

/// fdlibm's e_cosh.c.
pub(crate) fn cosh(x: f64) -> f64 {
    let ix = high_word(x) & 0x7fff_ffff;
    if ix >= 0x7ff0_0000 {
        return x * x;
    }
    if ix < 0x3fd6_2e43 {
        let t = expm1(x.abs());
        let w = 1.0 + t;
        if ix < 0x3c80_0000 {
            return w;
        }
        return 1.0 + (t * t) / (w + w);
    }
    if ix < 0x4036_0000 {
        let t = exp(x.abs());
        return 0.5 * t + 0.5 / t;
    }
    if ix < 0x4086_2E42 {
        return 0.5 * exp(x.abs());
    }
    if x.abs() <= 7.104_758_600_739_439e2 {
        let w = exp(0.5 * x.abs());
        let t = 0.5 * w;
        return t * w;
    }
    f64::INFINITY
}

/// fdlibm's s_tanh.c.
pub(crate) fn tanh(x: f64) -> f64 {
    let jx = high_word(x);
    let ix = jx & 0x7fff_ffff;
    if ix >= 0x7ff0_0000 {
        return if x.is_nan() { x } else if jx >= 0 { 1.0 } else { -1.0 };
    }
    let z = if ix < 0x4036_0000 {
        if ix < 0x3c80_0000 {
            return x * (1.0 + x);
        }
        if ix >= 0x3ff0_0000 {
            let t = expm1(2.0 * x.abs());
            1.0 - 2.0 / (t + 2.0)
        } else {
            let t = expm1(-2.0 * x.abs());
            -t / (t + 2.0)
        }
    } else {
        1.0
    };
    if jx >= 0 {
        z
    } else {
        -z
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spark_values() {
        // Spark 4.3's answers (StrictMath).
        assert_eq!(exp(1.0), 2.7182818284590455);
        assert_eq!(exp(2.0), 7.38905609893065);
        assert_eq!(log(3.0), 1.0986122886681096);
        assert_eq!(cosh(1.0), 1.543080634815244);
        assert_eq!(cosh(2.0), 3.7621956910836314);
        assert_eq!(cosh(3.0), 10.067661995777765);
        assert_eq!(sinh(1.0), 1.1752011936438014);
        assert_eq!(tanh(0.5), 0.46211715726000974);
        assert_eq!(log10(3.0), 0.47712125471966244);
        assert_eq!(log10(1000.0), 3.0);
        assert_eq!(expm1(1.0), 1.718281828459045);
        assert_eq!(log1p(1.0), 0.6931471805599453);
    }
}
