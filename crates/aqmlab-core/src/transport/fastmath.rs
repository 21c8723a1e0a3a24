//! Rounding of non-negative `f64`s on the per-ACK path without libm calls: x86-64 without
//! SSE4.1 (the default target) has no rounding instruction, so `f64::round` and `f64::floor`
//! are function calls; a truncating integer conversion is one instruction. Each function gives
//! exactly the standard library's result for every input (the tests use it as the oracle).

/// `x.round() as u64` (half away from zero; negative and NaN give 0, too large gives
/// `u64::MAX`): below 2^63 the truncation is one native (signed) conversion and the fraction
/// `x - trunc(x)` is exact in `f64`; other values take the standard library's path.
#[inline]
pub fn round_to_u64(x: f64) -> u64 {
    const TWO_POW_63: f64 = (1u64 << 63) as f64;
    if (0.0..TWO_POW_63).contains(&x) {
        let t = x as i64;
        (t + (x - t as f64 >= 0.5) as i64) as u64
    } else {
        x.round() as u64
    }
}

/// `x.floor()`: for 0 < x < 2^52 the truncation through `i64` (exact there, and the floor of
/// a positive number); zeros, negatives, large values and NaN take the standard library's path.
#[inline]
pub fn floor(x: f64) -> f64 {
    if x > 0.0 && x < 4_503_599_627_370_496.0 {
        (x as i64) as f64
    } else {
        x.floor()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Edge cases plus a spread of magnitudes (2^-63 .. 2^71) and fractions from a fixed-seed
    /// LCG, each with its negation, its integer part + 0.5 and + 0.25.
    fn values() -> Vec<f64> {
        let mut v = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -0.5,
            -1.5,
            0.49999999999999994,
            0.9999999999999999,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            9.223372036854775e18,
            1e19,
            1.8446744073709552e19,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            1e-310,
        ];
        let mut x: u64 = 12345;
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bits = (x >> 12) | (((x % 134) + 960) << 52);
            let y = f64::from_bits(bits);
            v.extend([y, -y, y.trunc() + 0.5, y.trunc() + 0.25]);
        }
        v
    }

    #[test]
    fn round_to_u64_agrees_with_std() {
        for x in values() {
            assert_eq!(round_to_u64(x), x.round() as u64, "x = {x:e}");
        }
    }

    #[test]
    fn floor_agrees_with_std_bit_for_bit() {
        for x in values() {
            let (a, b) = (floor(x), x.floor());
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "x = {x:e}: {a} vs {b}"
            );
        }
    }
}
