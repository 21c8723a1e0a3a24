//! Simulation time: integer nanoseconds, never floating point.

/// A point in (or span of) simulated time, in nanoseconds.
pub type SimTime = u64;

/// Nanoseconds per second.
pub const NS_PER_SEC: u64 = 1_000_000_000;

/// The longest span `from_secs` returns: 10^18 ns (about 31 years, the longest duration a
/// scenario may give), so `t + from_secs(x)` cannot overflow for any time `t` of a run.
pub const MAX_SPAN: SimTime = 1_000_000_000_000_000_000;

/// Converts seconds (f64) to the nearest nanosecond; negative inputs and NaN clamp to zero,
/// spans beyond [`MAX_SPAN`] (a 1e-300 frame rate's interval, say) to it.
pub fn from_secs(s: f64) -> SimTime {
    if s.is_nan() || s <= 0.0 {
        0
    } else {
        ((s * NS_PER_SEC as f64).round() as SimTime).min(MAX_SPAN)
    }
}

/// Converts nanoseconds to seconds.
pub fn to_secs(t: SimTime) -> f64 {
    t as f64 / NS_PER_SEC as f64
}

/// Time to serialize `bytes` onto a link of `rate_bps` bits per second, rounded up to a nanosecond.
pub fn tx_time(bytes: u32, rate_bps: u64) -> SimTime {
    let bits = bytes as u128 * 8 * NS_PER_SEC as u128;
    let r = rate_bps as u128;
    bits.div_ceil(r) as SimTime
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_of_a_1500_byte_packet_at_10mbps_is_1_2_ms() {
        assert_eq!(tx_time(1500, 10_000_000), 1_200_000);
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 bit/s = 8/3 s = 2.666..67 s
        assert_eq!(tx_time(1, 3), 2_666_666_667);
    }

    #[test]
    fn secs_round_trip() {
        assert_eq!(from_secs(0.02), 20_000_000);
        assert_eq!(to_secs(1_500_000_000), 1.5);
        assert_eq!(from_secs(-1.0), 0);
    }

    #[test]
    fn huge_spans_are_capped_so_sums_cannot_overflow() {
        // the fuzz finding of issue 17: a video source at fps = 1e-300
        assert_eq!(from_secs(1e300), MAX_SPAN);
        assert_eq!(from_secs(f64::INFINITY), MAX_SPAN);
        assert_eq!(from_secs(f64::NAN), 0);
        assert!(MAX_SPAN
            .checked_add(MAX_SPAN)
            .and_then(|x| x.checked_add(MAX_SPAN))
            .is_some());
    }
}
