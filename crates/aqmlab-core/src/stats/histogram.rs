//! A log-linear histogram of non-negative integers (nanoseconds): constant memory whatever
//! the run length, quantiles within 1/64 (1.6%) relative error, exact count, sum and max.

/// Sub-buckets per power of two.
const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// Histogram of u64 values with bounded relative error. Only the range of buckets between the
/// smallest and largest value seen is stored (`counts[i]` is bucket `base + i`), so a flow whose
/// delays span a few octaves costs a few hundred counters, not one per bucket from zero.
///
/// The header is 64 bytes (one cache line when the owner aligns it, as `Flow` does for its
/// statistics): the number of zeros is not stored but derived (the count minus the buckets'
/// sum) by `quantile`, which scans the buckets from the top, so a `record` touches the
/// header's one line and one bucket's line and the results cost no more scans than before.
#[derive(Clone, Debug, Default)]
pub struct LogHistogram {
    counts: Vec<u64>,
    base: usize,
    /// Values recorded, zeros (a packet that found its queue empty) included: a zero touches
    /// no bucket.
    n: u64,
    sum: u128,
    max: u64,
}

fn bucket_of(v: u64) -> usize {
    if v < SUB {
        v as usize
    } else {
        let exp = 63 - v.leading_zeros(); // floor(log2 v) >= SUB_BITS
        let shift = exp - SUB_BITS;
        let sub = (v >> shift) - SUB; // in [0, SUB)
        ((shift as u64 + 1) * SUB + sub) as usize
    }
}

/// Lower and upper bound of bucket `b`.
fn bucket_bounds(b: usize) -> (u64, u64) {
    let b = b as u64;
    if b < SUB {
        (b, b)
    } else {
        let shift = b / SUB - 1;
        let sub = b % SUB;
        let lo = (SUB + sub) << shift;
        (lo, lo + (1u64 << shift) - 1)
    }
}

impl LogHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self::default()
    }
    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: u64) {
        if v == 0 {
            self.n += 1;
            return;
        }
        let b = bucket_of(v);
        if self.counts.is_empty() {
            self.base = b;
        } else if b < self.base {
            let grow = self.base - b;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.base = b;
        }
        let i = b - self.base;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }
    /// Records the value zero `n` times (the same as `n` calls of `record(0)`).
    #[inline]
    pub fn record_zeros(&mut self, n: u64) {
        self.n += n;
    }
    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// Exact mean (NaN if empty).
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum as f64 / self.n as f64
        }
    }
    /// Exact maximum (0 if empty).
    pub fn max(&self) -> u64 {
        self.max
    }
    /// The q-quantile (0 <= q <= 1), taken as the midpoint of the bucket holding the rank
    /// ceil(q·n) (the zeros rank first); NaN if empty. The buckets are scanned from the top:
    /// bucket `i` holds the rank if fewer than `n - rank + 1` values lie above it, and the
    /// lowest such bucket is the one the ranks reach first counting from zero.
    pub fn quantile(&self, q: f64) -> f64 {
        let n = self.n;
        if n == 0 {
            return f64::NAN;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        let room = n - rank; // values that may lie above the rank's bucket
        let mut above = 0u64;
        let mut at = None;
        for (i, &c) in self.counts.iter().enumerate().rev() {
            if above > room {
                break;
            }
            at = Some(i);
            above += c;
        }
        match at {
            // every bucket qualifies and the zeros alone reach the rank
            Some(0) | None if above <= room => 0.0,
            Some(i) => {
                let (lo, hi) = bucket_bounds(self.base + i);
                ((lo + hi.min(self.max)) as f64) / 2.0
            }
            None => 0.0,
        }
    }
    /// Forgets everything (used at the end of the warm-up).
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_integers() {
        let mut expected_lo = 0;
        for b in 0..2000 {
            let (lo, hi) = bucket_bounds(b);
            assert_eq!(lo, expected_lo, "bucket {b}");
            assert!(hi >= lo);
            assert_eq!(bucket_of(lo), b);
            assert_eq!(bucket_of(hi), b);
            expected_lo = hi + 1;
        }
    }

    #[test]
    fn stores_only_the_occupied_range_and_keeps_quantiles_when_growing_downward() {
        let mut h = LogHistogram::new();
        for v in [50_000_000u64, 20_000_000, 200_000_000, 30_000_000] {
            h.record(v);
        }
        // 20 ms .. 200 ms is ~3.3 octaves: a few hundred counters, not the ~1800 from zero
        assert!(h.counts.len() < 64 * 5, "{}", h.counts.len());
        let med = h.quantile(0.5); // rank 2 of 4: 30 ms
        assert!((med - 30e6).abs() / 30e6 < 1.0 / 64.0, "{med}");
        assert!((h.quantile(0.0) - 20e6).abs() / 20e6 < 1.0 / 64.0);
        assert!((h.quantile(1.0) - 200e6).abs() / 200e6 < 1.0 / 64.0);
    }

    #[test]
    fn zeros_are_counted_apart_and_rank_first() {
        // 3 zeros and 1 value of 1 ms: ranks 1..3 are 0, rank 4 is ~1 ms; mean 0.25 ms.
        let mut h = LogHistogram::new();
        for v in [0u64, 1_000_000, 0, 0] {
            h.record(v);
        }
        assert_eq!(h.count(), 4);
        assert_eq!(h.quantile(0.5), 0.0);
        assert_eq!(h.quantile(0.75), 0.0);
        assert!((h.quantile(1.0) - 1e6).abs() / 1e6 < 1.0 / 64.0);
        assert_eq!(h.mean(), 250_000.0);
        assert!(
            h.counts.len() == 1,
            "zeros take no bucket: {}",
            h.counts.len()
        );
    }

    #[test]
    fn quantiles_of_a_uniform_sequence_are_within_relative_error() {
        let mut h = LogHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for q in [0.5, 0.95, 0.99] {
            let exact = q * 100_000.0 * 1000.0;
            let got = h.quantile(q);
            assert!(
                (got - exact).abs() / exact < 1.0 / 64.0,
                "q={q} got {got} exact {exact}"
            );
        }
        assert_eq!(h.mean(), 50_000.5 * 1000.0);
        assert_eq!(h.max(), 100_000_000);
    }

    /// The header fits one 64-byte line (docs/performance.md, issue 27 session 7), and the
    /// count includes the zeros of `record` and `record_zeros`.
    #[test]
    fn header_is_one_line_and_count_includes_zeros() {
        assert_eq!(std::mem::size_of::<LogHistogram>(), 64);
        let mut h = LogHistogram::new();
        for v in [5u64, 0, 70, 70, 1 << 40] {
            h.record(v);
        }
        h.record_zeros(3);
        assert_eq!(h.count(), 8);
        assert_eq!(h.quantile(0.5), 0.0); // ranks 1..4 are the four zeros
        h.clear();
        assert_eq!(h.count(), 0);
        assert!(h.mean().is_nan());
        assert!(h.quantile(0.5).is_nan());
    }

    /// The top-down scan gives the definition's answer: the rank-th smallest value (the
    /// values sorted, zeros first), reported as its bucket's midpoint (the upper bound capped
    /// at the maximum). Values from a fixed LCG with runs of zeros, every rank of several
    /// sizes.
    #[test]
    fn quantile_is_the_ranked_values_bucket_midpoint() {
        let mut x: u64 = 12345;
        for size in [1usize, 2, 7, 100, 1000] {
            let mut h = LogHistogram::new();
            let mut vals = Vec::new();
            for _ in 0..size {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let v = if x >> 61 == 0 {
                    0
                } else {
                    (x >> 33) % 5_000_000
                };
                h.record(v);
                vals.push(v);
            }
            vals.sort_unstable();
            let max = *vals.last().unwrap();
            for rank in 1..=size {
                let q = rank as f64 / size as f64;
                let r = ((q * size as f64).ceil() as usize).clamp(1, size);
                let v = vals[r - 1];
                let want = if v == 0 {
                    0.0
                } else {
                    let (lo, hi) = bucket_bounds(bucket_of(v));
                    ((lo + hi.min(max)) as f64) / 2.0
                };
                assert_eq!(h.quantile(q), want, "size {size} rank {rank}");
            }
        }
    }
}
