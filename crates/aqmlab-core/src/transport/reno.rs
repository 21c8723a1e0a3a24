//! Reno (RFC 5681): slow start, congestion avoidance (+1 segment per RTT), halving on a loss
//! detected by three duplicate ACKs, fast recovery that ends at the first new ACK.
//! The AIMD arithmetic here is shared by Tahoe and NewReno.

use super::cc::{
    AckInfo, CcEnv, Configure, CongestionControl, LossInfo, NoOptions, Recovery, Window,
};

/// Slow start below ssthresh (+1 per ACK unit), congestion avoidance above (+1/cwnd per unit).
/// With byte counting (`a.abc_bytes`, RFC 3465): slow start grows by min(bytes acked, L = 2·SMSS)
/// (section 2.2) and congestion avoidance by one SMSS each time the bytes acknowledged since the
/// last increase, kept in `bytes_acked`, reach cwnd (section 2.1).
#[inline]
pub fn aimd_increase(w: &mut Window, a: &AckInfo, bytes_acked: &mut f64) {
    if let Some((bytes, mss)) = a.abc_bytes {
        let mss = mss as f64;
        if w.cwnd < w.ssthresh {
            a.slow_start(w, a.units());
        } else {
            *bytes_acked += bytes as f64;
            let cwnd_bytes = w.cwnd * mss;
            if *bytes_acked >= cwnd_bytes {
                *bytes_acked -= cwnd_bytes;
                w.cwnd += 1.0;
            }
        }
        return;
    }
    let mut n = a.units();
    if w.cwnd < w.ssthresh {
        // Capped (RFC 3465): all of n in slow start; uncapped (Linux): up to ssthresh, the
        // rest in congestion avoidance below.
        n = a.slow_start(w, n);
        if n <= 0.0 {
            return;
        }
    }
    if let Some(mss) = a.whole_bytes_mss {
        let mss = mss as f64;
        let bytes = super::fastmath::floor(n * mss / w.cwnd).max(1.0); // n·MSS²/(cwnd·MSS) bytes, truncated
        w.cwnd += bytes / mss;
    } else {
        w.cwnd += n / w.cwnd;
    }
}

/// ssthresh = max(FlightSize/2, 2) (RFC 5681 eq. 4), or with `l.ssthresh_from_cwnd`
/// max(floor(cwnd)/2, 2) (Linux 6.1 `tcp_reno_ssthresh`: `max(tcp_snd_cwnd(tp) >> 1, 2)`, the
/// integer window halved with truncation); held on a repeated timeout.
#[inline]
pub fn reduce_ssthresh(w: &mut Window, l: &LossInfo) {
    if !l.repeated_timeout {
        w.ssthresh = if l.ssthresh_from_cwnd {
            (w.cwnd.floor() / 2.0).floor().max(2.0)
        } else {
            (l.flight as f64 / 2.0).max(2.0)
        };
    }
}

/// Multiplicative decrease: cwnd = ssthresh = max(FlightSize/2, 2).
#[inline]
pub fn halve(w: &mut Window, l: &LossInfo) {
    reduce_ssthresh(w, l);
    w.cwnd = w.ssthresh;
}

/// Timeout: ssthresh as for a loss, cwnd = 1 segment, slow start.
#[inline]
pub fn restart(w: &mut Window, l: &LossInfo) {
    reduce_ssthresh(w, l);
    w.cwnd = 1.0;
}

/// Reno congestion control.
#[derive(Clone, Debug, Default)]
pub struct Reno {
    /// RFC 3465 bytes_acked (byte counting only).
    pub bytes_acked: f64,
}

impl Configure for Reno {
    type Params = NoOptions;
    fn configure(_: &NoOptions, _: &CcEnv) -> Result<Self, String> {
        Ok(Self::default())
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn recovery(&self) -> Recovery {
        Recovery::Reno
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        aimd_increase(w, a, &mut self.bytes_acked);
    }
    fn on_loss(&mut self, w: &mut Window, l: &LossInfo) {
        self.bytes_acked = 0.0;
        halve(w, l);
    }
    fn on_timeout(&mut self, w: &mut Window, l: &LossInfo) {
        self.bytes_acked = 0.0;
        restart(w, l);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(per_segment: bool, acked: u64) -> AckInfo {
        AckInfo {
            now: 0,
            acked,
            srtt: None,
            per_segment,
            linux_delivered: None,
            whole_bytes_mss: None,
            abc_bytes: None,
            rtt: None,
            ack: 0,
            snd_max: 0,
        }
    }

    #[test]
    fn without_the_abc_cap_every_segment_counts_and_slow_start_stops_at_ssthresh() {
        // Linux 6.1 tcp_slow_start(tp, acked): cwnd = min(cwnd + acked, ssthresh), the rest
        // of acked goes to tcp_cong_avoid_ai(tp, cwnd, acked) (Reno: +acked/cwnd). Worked by
        // hand: cwnd 10, ssthresh 12, an ACK of 5 segments (a stretch ACK after ACK
        // filtering): slow start to 12 (2 segments), 3 left: 12 + 3/12 = 12.25. With RFC
        // 3465's L = 2 the same ACK counts 2: slow start to 12 and nothing more.
        let linux = |acked| AckInfo {
            linux_delivered: Some(acked),
            ..ack(true, acked)
        };
        // The window after one ACK from (cwnd, ssthresh).
        let after = |cwnd: f64, ssthresh: f64, a: &AckInfo| {
            let mut w = Window { cwnd, ssthresh };
            Reno::default().on_ack(&mut w, a);
            w.cwnd
        };
        assert_eq!(after(10.0, 12.0, &linux(5)), 12.25);
        assert_eq!(after(10.0, 12.0, &ack(true, 5)), 12.0);
        // Congestion avoidance at cwnd 20: +5/20 = 0.25 uncapped, +2/20 = 0.1 capped.
        assert_eq!(after(20.0, 10.0, &linux(5)), 20.25);
        assert_eq!(after(20.0, 10.0, &ack(true, 5)), 20.1);
        // Per-ACK growth ignores the option: one unit per ACK.
        let per_ack = AckInfo {
            linux_delivered: Some(5),
            ..ack(false, 5)
        };
        assert_eq!(after(4.0, 1000.0, &per_ack), 5.0);
    }

    #[test]
    fn per_segment_growth_is_capped_at_two_segments_per_ack() {
        // RFC 3465: a cumulative ACK for 300 segments (a hole filled after a timeout) may add at
        // most L = 2 segments in slow start, not 300.
        let mut w = Window {
            cwnd: 4.0,
            ssthresh: 1000.0,
        };
        Reno::default().on_ack(&mut w, &ack(true, 300));
        assert_eq!(w.cwnd, 6.0);
        let mut w = Window {
            cwnd: 4.0,
            ssthresh: 1000.0,
        };
        Reno::default().on_ack(&mut w, &ack(true, 2));
        assert_eq!(w.cwnd, 6.0);
        Reno::default().on_ack(&mut w, &ack(true, 1));
        assert_eq!(w.cwnd, 7.0);
    }

    #[test]
    fn byte_counting_follows_rfc3465() {
        // RFC 3465 worked by hand with SMSS = 1000 B.
        let abc = |bytes: u64| AckInfo {
            abc_bytes: Some((bytes, 1000)),
            ..ack(true, bytes.div_ceil(1000))
        };
        let mut r = Reno::default();
        // Slow start (section 2.2): +min(bytes acked, L = 2·SMSS) per ACK: a 5000-B ACK adds
        // 2000 B, a 500-B ACK (a short last segment) adds 500 B.
        let mut w = Window {
            cwnd: 4.0,
            ssthresh: 1000.0,
        };
        r.on_ack(&mut w, &abc(5000));
        assert_eq!(w.cwnd, 6.0);
        r.on_ack(&mut w, &abc(500));
        assert_eq!(w.cwnd, 6.5);
        // Congestion avoidance (section 2.1): cwnd 10 SMSS grows by one SMSS once 10 000 B
        // have been acknowledged, however they were grouped into ACKs (here 2000-B delayed
        // ACKs: five of them), then needs 11 000 B for the next.
        let mut w = Window {
            cwnd: 10.0,
            ssthresh: 10.0,
        };
        for k in 1..=5 {
            r.on_ack(&mut w, &abc(2000));
            assert_eq!(w.cwnd, if k < 5 { 10.0 } else { 11.0 }, "ACK {k}");
        }
        assert_eq!(r.bytes_acked, 0.0);
        for _ in 0..5 {
            r.on_ack(&mut w, &abc(2000));
        }
        assert_eq!((w.cwnd, r.bytes_acked), (11.0, 10_000.0));
        r.on_ack(&mut w, &abc(1000));
        assert_eq!((w.cwnd, r.bytes_acked), (12.0, 0.0));
        // A loss resets the counter (the window it counted against is gone).
        r.on_ack(&mut w, &abc(1000));
        r.on_loss(
            &mut w,
            &LossInfo {
                now: 0,
                flight: 12,
                repeated_timeout: false,
                ssthresh_from_cwnd: false,
            },
        );
        assert_eq!(r.bytes_acked, 0.0);
    }

    #[test]
    fn whole_byte_avoidance_matches_an_integer_byte_window() {
        // An integer TCP (ns-3's TcpNewReno) adds (uint32)(MSS*MSS/cwnd_bytes) bytes per ACK,
        // at least 1. Run both from 181.557 segments (ns-3 trace value) for one RTT's worth of
        // delayed ACKs and compare byte for byte.
        let mss = 1000u32;
        let mut w = Window {
            cwnd: 181.557,
            ssthresh: 100.0,
        };
        let mut bytes: u64 = 181_557;
        let a = AckInfo {
            whole_bytes_mss: Some(mss),
            abc_bytes: None,
            rtt: None,
            ack: 0,
            snd_max: 0,
            ..ack(false, 2)
        };
        for _ in 0..200 {
            Reno::default().on_ack(&mut w, &a);
            bytes += ((mss as u64 * mss as u64) / bytes).max(1);
        }
        assert!(
            (w.cwnd * mss as f64 - bytes as f64).abs() < 1e-6,
            "{} vs {bytes}",
            w.cwnd
        );
        // 5 bytes per ACK here (5.508 exact): 200 ACKs add 1000 bytes, not ~1100.
        assert_eq!(bytes, 182_557);
        // A window above MSS² bytes still grows by one byte per ACK.
        let mut w = Window {
            cwnd: 2000.0,
            ssthresh: 10.0,
        };
        Reno::default().on_ack(&mut w, &a);
        assert!((w.cwnd - 2000.001).abs() < 1e-9);
        // Without the option the growth stays exact.
        let mut w = Window {
            cwnd: 181.557,
            ssthresh: 100.0,
        };
        Reno::default().on_ack(&mut w, &ack(false, 2));
        assert!((w.cwnd - (181.557 + 1.0 / 181.557)).abs() < 1e-12);
    }

    #[test]
    fn slow_start_doubles_and_avoidance_adds_one_per_window() {
        let mut w = Window {
            cwnd: 2.0,
            ssthresh: 8.0,
        };
        let mut r = Reno::default();
        // One window of ACKs (one per segment) doubles cwnd in slow start.
        for _ in 0..2 {
            r.on_ack(&mut w, &ack(false, 1));
        }
        assert_eq!(w.cwnd, 4.0);
        w.cwnd = 10.0;
        w.ssthresh = 5.0;
        // Ten ACKs at cwnd ~10: +1/cwnd each: about +1 in total (slightly less as cwnd grows).
        for _ in 0..10 {
            r.on_ack(&mut w, &ack(false, 1));
        }
        assert!((w.cwnd - 10.95).abs() < 0.01, "{}", w.cwnd);
        // Per-segment growth with delayed ACKs (2 segments per ACK) matches per-ACK growth
        // with an ACK per segment.
        let mut a = Window {
            cwnd: 10.0,
            ssthresh: 5.0,
        };
        r.on_ack(&mut a, &ack(true, 2));
        assert!((a.cwnd - 10.2).abs() < 1e-12);
    }

    #[test]
    fn loss_halves_flight_with_floor_two() {
        let mut r = Reno::default();
        let mut w = Window {
            cwnd: 20.0,
            ssthresh: 100.0,
        };
        let l = LossInfo {
            now: 0,
            flight: 17,
            repeated_timeout: false,
            ssthresh_from_cwnd: false,
        };
        r.on_loss(&mut w, &l);
        assert_eq!((w.cwnd, w.ssthresh), (8.5, 8.5));
        let l = LossInfo { flight: 3, ..l };
        r.on_timeout(&mut w, &l);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 2.0));
        // A repeated timeout holds ssthresh.
        let l = LossInfo {
            flight: 40,
            repeated_timeout: true,
            ssthresh_from_cwnd: false,
            ..l
        };
        r.on_timeout(&mut w, &l);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 2.0));
    }

    #[test]
    fn linux_reduction_halves_the_integer_cwnd_not_the_flight() {
        // Linux 6.1 tcp_reno_ssthresh: max(tcp_snd_cwnd(tp) >> 1, 2). After a SACK recovery
        // the flight (snd_max - snd_una, SACKed segments included) can be far above cwnd:
        // cwnd 21.7 (integer 21), flight 60: Linux 21 >> 1 = 10; RFC 5681 60 / 2 = 30.
        let mut r = Reno::default();
        let mut w = Window {
            cwnd: 21.7,
            ssthresh: 100.0,
        };
        let l = LossInfo {
            now: 0,
            flight: 60,
            repeated_timeout: false,
            ssthresh_from_cwnd: true,
        };
        r.on_loss(&mut w, &l);
        assert_eq!((w.cwnd, w.ssthresh), (10.0, 10.0));
        let mut rfc = Window {
            cwnd: 21.7,
            ssthresh: 100.0,
        };
        r.on_loss(
            &mut rfc,
            &LossInfo {
                ssthresh_from_cwnd: false,
                ..l
            },
        );
        assert_eq!(rfc.ssthresh, 30.0);
        // A timeout at cwnd 3 (integer 3 >> 1 = 1): the floor of 2 segments.
        w.cwnd = 3.0;
        r.on_timeout(&mut w, &l);
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 2.0));
    }
}
