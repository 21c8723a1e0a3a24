//! Linux 6.1's GSO send units and their deferral (`window.tso_defer`; off in every profile).
//!
//! Source: Linux 6.1 `net/ipv4/tcp_output.c` — `tcp_tso_autosize` / `tcp_tso_segs` (the size
//! of one send unit), `tcp_write_xmit` with `tcp_mss_split_point` (a unit is at most that many
//! segments and at most the cwnd quota) and `tcp_tso_should_defer` (John Heffner's "TSO Nagle
//! test"); `net/core/sock.c` `sk_setup_caps` (TCP always builds GSO packets, whatever the
//! device's offloads: a device without TSO/GSO gets them segmented in software just before it,
//! so the segments of one unit still leave back to back).
//!
//! Model: a sender's send opportunity hands out units of `goal` segments,
//! goal = max(⌊pacing rate × 2^-10 s / MSS⌋, 2) capped at 45 (a 64-KB GSO packet), where the
//! pacing rate is Linux's `tcp_update_pacing_rate` (MSS × max(cwnd, packets out) / SRTT × 2 in
//! slow start below ssthresh/2, × 1.2 after). Before each unit, with q segments of cwnd quota
//! left, the unit waits for a later ACK (`tcp_tso_should_defer` returns true) when all hold:
//! not in recovery (`icsk_ca_state < TCP_CA_Recovery`), the last transmission was at most 1 ms
//! ago (`tcp_wstamp_ns`), q < goal (no full unit fits), q × MSS < ⌊cwnd × MSS / 3⌋
//! (`tcp_tso_win_divisor` 3), and the window is what limits (more data is queued than q).
//! Interpretation: the head's age test ("next ACK likely to come too late": the oldest
//! unacknowledged segment sent less than SRTT/2 ago) is taken as passed — in congestion
//! avoidance the head was sent about one RTT before; only new data of an open connection
//! defers (aqmlab's recovery, limited transmit and go-back-N after a timeout send at once).
//! The effect in congestion avoidance with goal 2: the segment a window increase adds waits
//! for the next ACK, so a Reno flow sends pairs and, every second increase, four segments —
//! never the three-segment burst of an ACK of two plus the increase.
//! Not in the `linux` profile: the held segment this predicts (packets out = cwnd − 1 for
//! about half of each round trip) is not in the Linux peer's records, whose senders show
//! packets out = cwnd at 85% of their 1-s `ss` samples and cwnd − 1 at 3%, and the option
//! leaves the CAKE Reno control's miss as it was (docs/aqm/cake.md, session 7).

/// Linux `sysctl_tcp_min_tso_segs` (2) — the smallest send unit.
pub const MIN_TSO_SEGS: u64 = 2;
/// Segments of a 64-KB GSO packet at MSS 1448 (`sk_gso_max_size` 65,536): the largest unit.
pub const MAX_TSO_SEGS: u64 = 45;
/// Linux `tcp_tso_should_defer`: deferral only if the last write was within 1 ms.
pub const RECENT_WRITE_NS: u64 = 1_000_000;

/// Linux 6.1 `tcp_tso_autosize` with `tcp_update_pacing_rate`'s rate: the segments of one send
/// unit for `cwnd`, `ssthresh`, `packets_out` (segments), `srtt_ns` and `mss` (bytes);
/// [`MIN_TSO_SEGS`] before an RTT sample.
pub fn goal(cwnd: f64, ssthresh: f64, packets_out: u64, srtt_ns: Option<u64>, mss: u32) -> u64 {
    let Some(srtt) = srtt_ns.filter(|&s| s > 0) else {
        return MIN_TSO_SEGS;
    };
    let ratio = if cwnd < ssthresh / 2.0 { 2.0 } else { 1.2 };
    let segs = (cwnd.floor()).max(packets_out as f64);
    let rate = mss as f64 * ratio * segs / (srtt as f64 * 1e-9); // bytes/s
    let bytes = rate / 1024.0; // >> sk_pacing_shift (10)
    ((bytes / mss as f64) as u64).clamp(MIN_TSO_SEGS, MAX_TSO_SEGS)
}

/// Linux 6.1 `tcp_tso_should_defer` for an open connection: true if `quota` segments of cwnd
/// (already the smaller of cwnd and receive-window room) should wait for a later ACK, given the
/// unit `goal`, `cwnd` (segments), `mss`, the time since the last transmission, and whether
/// more than `quota` segments of data are queued.
pub fn should_defer(
    quota: u64,
    goal: u64,
    cwnd: u64,
    mss: u32,
    since_last_send_ns: u64,
    more_queued: bool,
) -> bool {
    if quota == 0 || since_last_send_ns > RECENT_WRITE_NS || quota >= goal || !more_queued {
        return false;
    }
    let chunk = cwnd * mss as u64 / 3;
    quota * (mss as u64) < chunk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goal_is_two_segments_below_two_mss_per_millisecond() {
        // Hand-worked (tcp_tso_autosize): cwnd 14, CA ratio 1.2, MSS 1448, SRTT 45 ms:
        // 1448 × 1.2 × 14 / 0.045 = 540,586 B/s; >> 10 = 527.9 B < 1 MSS → min_tso_segs 2.
        assert_eq!(goal(14.0, 9.0, 14, Some(45_000_000), 1448), 2);
        // No RTT sample yet: the minimum.
        assert_eq!(goal(10.0, 1e9, 0, None, 1448), 2);
    }

    #[test]
    fn goal_grows_with_the_pacing_rate_and_is_capped_at_64_kb() {
        // cwnd 100, slow start (100 < 1000/2: ratio 2), SRTT 10 ms, MSS 1448:
        // 1448 × 2 × 100 / 0.01 = 28,960,000 B/s; / 1024 = 28,281 B; / 1448 = 19.5 → 19.
        assert_eq!(goal(100.0, 1000.0, 100, Some(10_000_000), 1448), 19);
        // CA (ratio 1.2), packets out 120 above cwnd 100: 1448 × 1.2 × 120 / 0.01 / 1024 / 1448
        // = 14.06 → 14.
        assert_eq!(goal(100.0, 100.0, 120, Some(10_000_000), 1448), 14);
        // cwnd 2000 at 1 ms: far above 64 KB → 45.
        assert_eq!(goal(2000.0, 10.0, 2000, Some(1_000_000), 1448), 45);
    }

    #[test]
    fn the_odd_segment_of_a_window_increase_waits_after_a_recent_write() {
        // Reno in CA, cwnd 15, goal 2: an ACK of two plus an increase gives a quota of 3; the
        // first unit (2) leaves (the last write was 6 ms ago); then quota 1 < goal, just
        // written (0 ns), 1 × 1448 < ⌊15 × 1448 / 3⌋ = 7240: deferred (tcp_tso_should_defer).
        assert!(!should_defer(3, 2, 15, 1448, 6_000_000, true));
        assert!(should_defer(1, 2, 15, 1448, 0, true));
        // The same single segment when the last write was over 1 ms ago: sent.
        assert!(!should_defer(1, 2, 15, 1448, 1_000_001, true));
        // ... exactly 1 ms ago: delta = 0 is not > 0, still deferred.
        assert!(should_defer(1, 2, 15, 1448, 1_000_000, true));
        // A full unit never waits; nor the last data (nothing more queued).
        assert!(!should_defer(2, 2, 15, 1448, 0, true));
        assert!(!should_defer(1, 2, 15, 1448, 0, false));
        // Small window: cwnd 3 → chunk ⌊3 × 1448 / 3⌋ = 1448; quota 1 × 1448 is not below it.
        assert!(!should_defer(1, 2, 3, 1448, 0, true));
        // cwnd 4 → chunk 1930: 1448 < 1930, deferred.
        assert!(should_defer(1, 2, 4, 1448, 0, true));
    }
}
