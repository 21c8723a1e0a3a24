//! Random streams. Each component draws from its own stream, derived from the master seed and
//! the component's name, so adding a flow or a link never changes another component's draws.

use rand::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A component's random stream.
#[derive(Clone, Debug)]
pub struct Rng(Xoshiro256PlusPlus);

/// FNV-1a, 64-bit: a stable hash of a component name (std's hasher is not stable across releases).
fn fnv1a(name: &str) -> u64 {
    fnv1a_more(0xcbf2_9ce4_8422_2325, name)
}

/// FNV-1a continued over `more` from state `h` (so hashing "a" then "b" is hashing "ab").
fn fnv1a_more(mut h: u64, more: &str) -> u64 {
    for b in more.as_bytes() {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

impl Rng {
    /// The stream of component `name` under master seed `seed`.
    pub fn stream(seed: u64, name: &str) -> Rng {
        let mixed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ fnv1a(name);
        Rng(Xoshiro256PlusPlus::seed_from_u64(mixed))
    }

    /// The stream named `prefix` followed by `name` (`Rng::stream(seed, &format!("{prefix}{name}"))`
    /// without making the string: a build of thousands of ports or flows names thousands).
    pub fn stream2(seed: u64, prefix: &str, name: &str) -> Rng {
        let mixed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ fnv1a_more(fnv1a(prefix), name);
        Rng(Xoshiro256PlusPlus::seed_from_u64(mixed))
    }

    /// A uniform draw on [0, 1) with 53 bits of precision.
    pub fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform draw on (0, 1]: safe to take the logarithm of.
    pub fn uniform_open0(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// An exponential draw with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * self.uniform_open0().ln()
    }

    /// A raw 64-bit draw.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_named_in_two_parts_is_the_stream_of_the_joined_name() {
        // FNV-1a is a left fold over the bytes, so continuing it over the second part must
        // give the hash of the concatenation; a wrong split would draw different numbers.
        for (prefix, name) in [
            ("qdisc:", "s1->r1"),
            ("", "x"),
            ("flow:", ""),
            ("loss:", "a#2"),
        ] {
            let mut joined = Rng::stream(42, &format!("{prefix}{name}"));
            let mut split = Rng::stream2(42, prefix, name);
            for _ in 0..4 {
                assert_eq!(joined.next_u64(), split.next_u64());
            }
        }
        let mut other = Rng::stream2(42, "qdisc:", "s1->r2");
        assert_ne!(other.next_u64(), Rng::stream(42, "qdisc:s1->r1").next_u64());
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, "flow:a");
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, "flow:a");
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(7, "flow:b");
                move |_| r.next_u64()
            })
            .collect();
        let d: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::stream(8, "flow:a");
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }

    #[test]
    fn uniform_mean_and_exponential_mean_are_right() {
        // Law of large numbers with n = 200k: standard error of the mean ~ 0.29/sqrt(n) = 6.5e-4.
        let mut r = Rng::stream(1, "test");
        let n = 200_000;
        let u: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((u - 0.5).abs() < 0.004, "{u}");
        let e: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((e - 2.0).abs() < 0.03, "{e}");
    }
}
