//! Linux 6.1's receive-buffer autotuning, as far as it decides when the receiver ACKs
//! (`ack.autotune`, the `linux` profile's default; docs/tcp.md).
//!
//! Source: Linux 6.1 `net/ipv4/tcp_input.c`. `tcp_rcv_space_adjust` (called on each read):
//! once per receiver RTT, if the application read more than `rcvq_space.space` bytes in it
//! (`copied`), `rcvwin = 2·copied + 16·advmss`, plus twice `rcvwin·(copied − space)/space`
//! for a sender still speeding up; `sk_rcvbuf` rises to `rcvwin/advmss · rcvmem` (capped by
//! `tcp_rmem[2]`) and `window_clamp` to `tcp_win_from_space(sk_rcvbuf)`; `space = copied`.
//! `tcp_grow_window` (on each data segment of ≥ 128 B, in order, or out of order with SACK,
//! `tcp_data_queue_ofo`): while `rcv_ssthresh` is below `min(window_clamp, tcp_space)`, it
//! grows by `max(2·advmss, 2·len)` (a full segment's `truesize` passes "check #2") and
//! `icsk_ack.quick |= 1` — so `__tcp_ack_snd_check` finds the socket in quick-ACK mode and
//! ACKs that segment at once. While the window grows every segment is ACKed: a window that
//! grows by W segments costs about W/4 ACKs more than one ACK per two segments.
//!
//! Interpretations (the simulator's receiver application reads every in-order segment at
//! once, as `iperf3` does): `copied_seq = rcv_nxt`; `tcp_space` is taken as `window_clamp`
//! (no memory held by unread or out-of-order data, no memory pressure); every segment is
//! a full `advmss`. The receiver's RTT estimate (`rcv_rtt_est`, from the timestamps its
//! ACKs have echoed back) is taken as the sender's SRTT, which measures the same loop. The
//! initial values are Linux's for `tcp_rmem[1]` = 131,072 B (`tcp_init_buffer_space`,
//! `tcp_app_win` = 31, `tcp_adv_win_scale` = 1); `tcp_rmem[2]` is the Linux peer guest's
//! 64 MiB. The window itself is not advertised: aqmlab's receiver window stays
//! `window_bytes` (only the ACK decision follows the autotuning).

use crate::time::SimTime;

/// `tcp_rmem[1]`: the initial receive buffer, bytes.
const RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]` as the Linux peer guest sets it (bench/peer/linux/guest/init), bytes.
const RMEM_MAX: u64 = 64 << 20;
/// `SKB_TRUESIZE(0)` + `MAX_TCP_HEADER` on x86-64 (256-B `sk_buff`, 320-B
/// `skb_shared_info`, 320-B header room), bytes.
const SKB_OVERHEAD: u64 = 896;

/// `tcp_win_from_space` with `tcp_adv_win_scale` = 1: half the buffer holds data.
fn win_from_space(space: u64) -> u64 {
    space - (space >> 1)
}

/// One receiver's autotuning state (bytes unless named otherwise).
#[derive(Clone, Debug)]
pub struct RcvBuf {
    advmss: u64,
    /// Memory charged per full segment (`rcvmem` of `tcp_rcv_space_adjust`).
    rcvmem: u64,
    /// `sk_rcvbuf`.
    rcvbuf: u64,
    /// `tp->window_clamp`.
    pub window_clamp: u64,
    /// `tp->rcv_ssthresh`: the window the receiver is willing to offer.
    pub rcv_ssthresh: u64,
    /// `rcvq_space.space`: bytes read in the last measured RTT.
    space: u64,
    /// `rcvq_space.seq` (a segment number) and `rcvq_space.time`.
    space_seq: u64,
    space_time: SimTime,
    /// The first data segment has arrived (`rcvq_space.time` set, as at establishment).
    started: bool,
}

impl RcvBuf {
    /// Linux's state at connection establishment for segments of `advmss` bytes.
    pub fn new(advmss: u64) -> Self {
        let advmss = advmss.max(1);
        let mut rcvmem = advmss + SKB_OVERHEAD;
        while win_from_space(rcvmem) < advmss {
            rcvmem += 128;
        }
        // tcp_init_buffer_space: window_clamp = tcp_full_space, less one reserved segment.
        let full = win_from_space(RMEM_DEFAULT);
        let window_clamp = if full > 2 * advmss {
            (2 * advmss).max(full - advmss)
        } else {
            full
        };
        // tcp_select_initial_window: rcv_wnd = the full space rounded down to whole segments;
        // rcv_ssthresh = min(rcv_wnd, window_clamp); space = min(.., TCP_INIT_CWND segments).
        let rcv_wnd = if full > advmss {
            full / advmss * advmss
        } else {
            full
        };
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        RcvBuf {
            advmss,
            rcvmem,
            rcvbuf: RMEM_DEFAULT,
            window_clamp,
            rcv_ssthresh,
            space: rcv_ssthresh.min(10 * advmss),
            space_seq: 0,
            space_time: 0,
            started: false,
        }
    }

    /// `tcp_grow_window` for one full data segment: true if the window grew (Linux then sets
    /// `icsk_ack.quick |= 1`, so the segment is ACKed at once).
    pub fn grow(&mut self) -> bool {
        let room = self.window_clamp.saturating_sub(self.rcv_ssthresh);
        if room == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min(2 * self.advmss);
        true
    }

    /// `tcp_rcv_space_adjust` after the application read up to segment `rcv_nxt` at `now`,
    /// with the receiver's RTT estimate `rtt` (None: not measured yet).
    pub fn adjust(&mut self, rcv_nxt: u64, now: SimTime, rtt: Option<SimTime>) {
        if !self.started {
            self.started = true;
            self.space_time = now;
        }
        let Some(rtt) = rtt.filter(|&r| r > 0) else {
            return;
        };
        if now.saturating_sub(self.space_time) < rtt {
            return;
        }
        let copied = rcv_nxt.saturating_sub(self.space_seq) * self.advmss;
        if copied > self.space {
            let mut rcvwin = 2 * copied + 16 * self.advmss;
            let grow = rcvwin as u128 * (copied - self.space) as u128 / self.space.max(1) as u128;
            rcvwin = (rcvwin as u128 + 2 * grow).min(u64::MAX as u128) as u64;
            let rcvbuf = (rcvwin / self.advmss)
                .saturating_mul(self.rcvmem)
                .min(RMEM_MAX);
            if rcvbuf > self.rcvbuf {
                self.rcvbuf = rcvbuf;
                self.window_clamp = win_from_space(rcvbuf);
            }
            self.space = copied;
        }
        self.space_seq = rcv_nxt;
        self.space_time = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: SimTime = 1_000_000;

    /// Hand-worked from Linux 6.1 `tcp_init_buffer_space` / `tcp_select_initial_window` with
    /// advmss 1448: full space 131,072 / 2 = 65,536; window_clamp = 65,536 − 1,448 = 64,088;
    /// rcv_wnd = 45 · 1,448 = 65,160; rcv_ssthresh = min = 64,088 (no room: no growth);
    /// space = 10 · 1,448 = 14,480; rcvmem = 1,448 + 896 = 2,344 → +5 · 128 = 2,984 (the first
    /// with half ≥ 1,448).
    #[test]
    fn initial_state_is_linux_6_1s() {
        let mut b = RcvBuf::new(1448);
        assert_eq!(
            (b.window_clamp, b.rcv_ssthresh, b.space),
            (64_088, 64_088, 14_480)
        );
        assert_eq!(b.rcvmem, 2_984);
        assert!(!b.grow());
    }

    /// `tcp_rcv_space_adjust` by hand: 20 segments (28,960 B) read in the first 100-ms RTT.
    /// rcvwin = 2 · 28,960 + 16 · 1,448 = 81,088; grow = 81,088 · (28,960 − 14,480) / 14,480 =
    /// 81,088; rcvwin = 81,088 + 162,176 = 243,264 = 168 segments; rcvbuf = 168 · 2,984 =
    /// 501,312; window_clamp = 250,656. Room 250,656 − 64,088 = 186,568 = 64.4 increments of
    /// 2,896: 64 segments grow the window (each ACKed at once), the 65th takes the last
    /// 1,224 B, the 66th finds no room.
    #[test]
    fn space_adjust_and_grow_by_hand() {
        let mut b = RcvBuf::new(1448);
        b.adjust(1, 0, Some(100 * MS)); // the first segment starts the clock
        b.adjust(5, 50 * MS, Some(100 * MS)); // under one RTT since the start: nothing
        assert_eq!(b.window_clamp, 64_088);
        b.adjust(20, 100 * MS, Some(100 * MS));
        assert_eq!(
            (b.rcvbuf, b.window_clamp, b.space),
            (501_312, 250_656, 28_960)
        );
        let grown = (0..100).take_while(|_| b.grow()).count();
        assert_eq!(grown, 65);
        assert_eq!(b.rcv_ssthresh, 250_656);
        // The next RTT reads no more than the last: the buffer stays (space only grows).
        b.adjust(35, 200 * MS, Some(100 * MS));
        assert_eq!((b.window_clamp, b.space), (250_656, 28_960));
        // Without an RTT estimate Linux does not adjust (rcv_rtt_est.rtt_us == 0).
        let mut c = RcvBuf::new(1448);
        c.adjust(1000, 10_000 * MS, None);
        assert_eq!(c.window_clamp, 64_088);
    }
}
