//! The TCP sink: cumulative ACKs (one per data segment, or per two in-order segments with
//! delayed ACKs), immediate ACKs for out-of-order, duplicate and gap-filling segments, and
//! the RFC 3168 ECN echo (ECE on every ACK from a CE arrival until a CWR segment arrives), or
//! with `ecn = "l4s"` / `"dctcp"` DCTCP's precise echo (RFC 8257 section 3.2: ECE carries the
//! CE state of the segments acknowledged; a state change flushes a held delayed ACK), or with
//! `ecn.feedback = "accurate"` AccECN's ACE field (RFC 9768 section 3.2.2: the count of
//! CE-marked packets received, r.cep, starting at 5, mod 8 in AE/CWR/ECE on every ACK; a CE
//! packet after a non-CE one is acknowledged at once, the "change-triggered ACK" of section
//! 3.2.2.5.1, and so is a second CE packet since the last ACK, its "increment-triggered ACK"
//! with n = 2). The AccECN TCP option is not modelled (the counter only).
//! With `sack`, every ACK carries RFC 2018 blocks (`sack.rs`); they travel beside the packet
//! in a per-flow log keyed by an ACK number carried in the ACK's `seq`, so packets stay small.
//! With `timestamps`, the echoed TSval follows RFC 7323 section 4.3: TS.Recent is taken
//! from a segment only if it starts at or below the last ACK sent (Last.ACK.sent), so a
//! delayed ACK echoes the earlier segment and an ACK for out-of-order data echoes the last
//! in-sequence segment; a retransmission that fills the hole is echoed itself.

use super::config::TcpConfig;
use super::rcvbuf::RcvBuf;
use super::sack::{SackBlocks, SackReceiver};
use super::{flags, OutSeg, Outbox, Timer, TimerKind};
use crate::packet::{Ecn, PacketKind};
use crate::time::SimTime;
use std::collections::VecDeque;

/// Receiver state of one connection.
///
/// What every data segment reads comes first, in declaration order (`repr(C)`, aligned to a
/// cache line): the counters and settings read on every segment (the autotuning's pointer
/// among them), then the held ACK, the reordering buffer's header, the timer and the
/// compressed ACK's tag — three lines; what only AccECN, timestamps, SACK or ACK
/// compression read (their counters, the SACK state) last (`sink_layout`).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct TcpSink {
    /// Next segment expected in order.
    pub rcv_nxt: u64,
    timeout: SimTime,
    last_ack_sent: u64,
    /// SACK compression delay (0: off).
    compress: SimTime,
    /// Linux's receive-buffer autotuning (`ack.autotune`; None: off).
    tune: Option<Box<RcvBuf>>,
    max_blocks: usize,
    header: u32,
    /// Timestamps on: option bytes per ACK, TS.Recent and Last.ACK.sent (RFC 7323).
    ts_opt: u32,
    /// Quick-ACK segments left (Linux: ACK at once at connection start).
    quick_left: u32,
    /// Immediate duplicate ACKs sent at the current `rcv_nxt` (Linux `dup_ack_counter`).
    dup_acks: u32,
    /// Out-of-order segments held for the compressed ACK (Linux `compressed_ack`).
    compressed: u32,
    ece: bool,
    /// DCTCP / L4S precise feedback instead of RFC 3168's latched echo.
    precise: bool,
    /// AccECN (RFC 9768) instead of either.
    accecn: bool,
    /// The last data packet was CE-marked.
    last_ce: bool,
    delayed: bool,
    /// `ack.push`: an in-order PSH segment is ACKed at once instead of held.
    push: bool,
    timestamps: bool,
    /// SACK on (`sack` is Some): read by every ACK's [`TcpSink::sack_for`] without touching
    /// the SACK state's cache lines.
    sack_on: bool,
    /// The in-order segment whose ACK is being delayed: (its timestamp, its RETX flag).
    held: Option<(SimTime, u8)>,
    /// `ooo[i]`: segment `rcv_nxt + i` has arrived (empty, or false at 0 and true at the end).
    ooo: VecDeque<bool>,
    timer: Timer,
    /// The compressed ACK's echo, RETX flag and SACK blocks (the newest segment's).
    comp_pending: Option<(SimTime, u8, SackBlocks)>,
    /// r.cep: CE-marked packets received, from 5 (RFC 9768 section 3.2.1).
    pub r_cep: u64,
    /// r.cep when the last ACK was sent.
    cep_acked: u64,
    /// ACKs sent with SACK on (their number travels in the ACK's `seq`).
    acks_sent: u64,
    ts_recent: SimTime,
    /// `rcv_nxt` the duplicate-ACK count belongs to (Linux `compressed_ack_rcv_nxt`).
    comp_rcv_nxt: u64,
    /// SACK block state (None: SACK off).
    sack: Option<SackReceiver>,
    /// Blocks of the ACKs in flight: (ACK number, blocks).
    sack_log: VecDeque<(u64, SackBlocks)>,
}

/// Linux's `tcp_comp_sack_nr` default: at most this many segments behind one compressed ACK.
const COMP_SACK_NR: u32 = 44;
/// Linux's `TCP_FASTRETRANS_THRESH`: immediate duplicate ACKs before compressing.
const FASTRETRANS_THRESH: u32 = 3;

impl TcpSink {
    /// A sink configured by `cfg`.
    pub fn new(cfg: &TcpConfig) -> Self {
        TcpSink {
            rcv_nxt: 0,
            ooo: VecDeque::new(),
            ece: false,
            precise: cfg.precise_ecn && !cfg.accecn,
            accecn: cfg.accecn,
            r_cep: 5,
            cep_acked: 5,
            last_ce: false,
            delayed: cfg.delayed_ack,
            push: cfg.push,
            timeout: cfg.delayed_ack_timeout,
            header: cfg.header,
            held: None,
            timer: Timer::default(),
            sack: cfg.sack.then(SackReceiver::default),
            sack_on: cfg.sack,
            max_blocks: cfg.max_sack_blocks,
            acks_sent: 0,
            sack_log: VecDeque::new(),
            ts_opt: cfg.ts_opt,
            timestamps: cfg.timestamps,
            ts_recent: 0,
            last_ack_sent: 0,
            quick_left: cfg.quickack,
            compress: cfg.sack_compress,
            dup_acks: 0,
            comp_rcv_nxt: u64::MAX,
            compressed: 0,
            comp_pending: None,
            tune: cfg.autotune.then(|| Box::new(RcvBuf::new(cfg.mss as u64))),
        }
    }

    /// True with `ack.autotune`: the receiver wants the connection's RTT estimate
    /// ([`TcpSink::note_rtt`]) before each data segment.
    #[inline]
    pub fn autotunes(&self) -> bool {
        self.tune.is_some()
    }

    /// With `ack.autotune`: the receiver's RTT estimate (Linux `rcv_rtt_est`, which
    /// measures the same loop as the sender's SRTT) for `tcp_rcv_space_adjust`; called with
    /// the segment's arrival time after it is delivered.
    pub fn note_rtt(&mut self, rtt: Option<SimTime>, now: SimTime) {
        let rcv_nxt = self.rcv_nxt;
        if let Some(t) = self.tune.as_mut() {
            t.adjust(rcv_nxt, now, rtt);
        }
    }

    fn ack(&mut self, ts: SimTime, retx: u8, blocks: SackBlocks, out: &mut Outbox) {
        let fl = retx
            | if self.accecn {
                self.cep_acked = self.r_cep;
                flags::ace_flags(self.r_cep)
            } else if self.ece {
                flags::ECE
            } else {
                0
            };
        let mut seq = 0;
        if self.sack_on {
            self.acks_sent += 1;
            seq = self.acks_sent;
            self.sack_log.push_back((seq, blocks));
        }
        let ts = if self.timestamps { self.ts_recent } else { ts };
        self.last_ack_sent = self.rcv_nxt;
        self.compressed = 0;
        self.comp_pending = None;
        out.segs.push(OutSeg {
            kind: PacketKind::Ack,
            seq,
            ack: self.rcv_nxt,
            flags: fl,
            size: self.header + self.ts_opt + blocks.option_bytes(),
            ts,
            ecn: Ecn::NotEct,
        });
    }

    /// The SACK blocks of ACK `id` without consuming them (for packet capture).
    pub fn peek_sack(&self, id: u64) -> Option<SackBlocks> {
        self.sack_log
            .iter()
            .find(|&&(k, _)| k == id)
            .map(|&(_, b)| b)
    }

    /// The SACK blocks of ACK number `id` as it reaches the sender (None with SACK off or
    /// for an ACK the log no longer holds). Entries of older ACKs (lost ones) are dropped.
    /// Logged ACKs are numbered from 1, so `id` 0 is always None and changes nothing.
    pub fn sack_for(&mut self, id: u64) -> Option<SackBlocks> {
        if !self.sack_on {
            return None;
        }
        while let Some(&(k, b)) = self.sack_log.front() {
            if k > id {
                return None; // reordered: already forgotten
            }
            self.sack_log.pop_front();
            if k == id {
                return Some(b);
            }
        }
        None
    }

    /// A data segment arrived. Returns the range of segments newly delivered in order.
    pub fn on_data(
        &mut self,
        seq: u64,
        fl: u8,
        ecn: Ecn,
        ts: SimTime,
        now: SimTime,
        out: &mut Outbox,
    ) -> std::ops::Range<u64> {
        let before = self.rcv_nxt;
        let retx = fl & flags::RETX;
        if fl & flags::SYN != 0 {
            // AccECN's SYN-ACK (RFC 9768 section 3.1.1): AE, CWR, ECE reflect the
            // SYN's IP-ECN field; a SYN is Not-ECT: 0, 1, 0.
            let accept = if self.accecn && fl & flags::AE != 0 {
                flags::CWR
            } else {
                0
            };
            out.segs.push(OutSeg {
                kind: PacketKind::Ack,
                seq: 0,
                ack: 0,
                flags: flags::SYN | retx | accept,
                size: self.header + self.ts_opt,
                ts,
                ecn: Ecn::NotEct,
            });
            return before..before;
        }
        let mut urgent = false;
        if self.accecn {
            // RFC 9768 section 3.2.2: count every CE packet; ACK at once on a change to CE
            // and on a second CE packet since the last ACK (section 3.2.2.5.1).
            let ce = ecn == Ecn::Ce;
            if ce {
                self.r_cep += 1;
                urgent = !self.last_ce || self.r_cep - self.cep_acked >= 2;
            }
            self.last_ce = ce;
        } else if self.precise {
            // RFC 8257 section 3.2: ECE mirrors the CE state of the segments an ACK covers; a
            // change of state sends the held delayed ACK at once, with the old state.
            let ce = ecn == Ecn::Ce;
            if ce != self.ece {
                if let Some((hts, hretx)) = self.held.take() {
                    self.timer.cancel();
                    self.ack(hts, hretx, SackBlocks::default(), out);
                }
                self.ece = ce;
            }
        } else {
            // CWR first: a segment with both CWR and CE keeps the echo on (RFC 3168 6.1.3).
            if fl & flags::CWR != 0 {
                self.ece = false;
            }
            if ecn == Ecn::Ce {
                self.ece = true;
            }
        }
        let had_gap = !self.ooo.is_empty();
        if seq == self.rcv_nxt && !had_gap {
            self.rcv_nxt += 1; // in order, nothing buffered: the common case
        } else if seq >= self.rcv_nxt {
            let i = (seq - self.rcv_nxt) as usize;
            if i >= self.ooo.len() {
                self.ooo.resize(i + 1, false);
            }
            self.ooo[i] = true;
            while self.ooo.front() == Some(&true) {
                self.ooo.pop_front();
                self.rcv_nxt += 1;
            }
        }
        // RFC 7323 4.3: TS.Recent from segments at or below Last.ACK.sent only.
        if self.timestamps && seq <= self.last_ack_sent && ts >= self.ts_recent {
            self.ts_recent = ts;
        }
        let (rcv_nxt, max) = (self.rcv_nxt, self.max_blocks);
        let mut blocks = SackBlocks::default();
        if self.sack_on {
            if let Some(r) = self.sack.as_mut() {
                blocks = r.on_segment(seq, rcv_nxt, max);
            }
        }
        let in_order_no_gap = seq == before && !had_gap;
        // Linux 6.1 `tcp_grow_window` (from `tcp_event_data_recv`, or `tcp_data_queue_ofo`
        // with SACK): a segment that grows `rcv_ssthresh` sets `icsk_ack.quick |= 1`, so
        // `__tcp_ack_snd_check` ACKs it at once; the ACK takes one quick ACK back
        // (`tcp_dec_quickack_mode`).
        let mut grown = false;
        if seq == before || (seq > before && self.sack_on) {
            if let Some(t) = self.tune.as_mut() {
                grown = t.grow();
            }
        }
        if grown {
            self.quick_left |= 1;
        }
        let quick = self.delayed && in_order_no_gap && self.quick_left > 0;
        if quick {
            self.quick_left -= 1;
        }
        // Linux 6.1 `__tcp_ack_snd_check`: with a hole still open, no more than one segment
        // newly in order and no quick-ACK mode, the first three duplicate ACKs at one
        // `rcv_nxt` go at once, later ones wait (`compressed_ack_timer`) up to `compress`,
        // at most `tcp_comp_sack_nr` of them behind one ACK.
        if self.compress > 0
            && self.sack_on
            && !urgent
            && seq >= before
            && !self.ooo.is_empty()
            && self.rcv_nxt <= self.last_ack_sent + 1
            && self.quick_left == 0
            && self.compressed < COMP_SACK_NR
        {
            if self.comp_rcv_nxt != self.rcv_nxt {
                self.comp_rcv_nxt = self.rcv_nxt;
                self.dup_acks = 0;
            }
            if self.dup_acks < FASTRETRANS_THRESH {
                self.dup_acks += 1;
            } else {
                self.compressed += 1;
                self.comp_pending = Some((ts, retx, blocks));
                if !self.timer.running() {
                    self.timer.set(now + self.compress, TimerKind::DelAck, out);
                }
                return before..self.rcv_nxt;
            }
        }
        if !self.delayed || !in_order_no_gap || quick || urgent {
            if grown && !quick {
                self.quick_left -= 1; // out of order: this ACK is the quick one
            }
            self.held = None;
            self.timer.cancel();
            self.ack(ts, retx, blocks, out);
        } else if let Some((hts, hretx)) = self.held.take() {
            // Second in-order segment: acknowledge both; echo the older timestamp.
            self.timer.cancel();
            self.ack(hts, hretx, blocks, out);
        } else if self.push && fl & flags::PSH != 0 {
            // Linux 6.1.57+ `tcp_measure_rcv_mss`: a full-sized segment with PSH sets
            // ICSK_ACK_PUSHED; `__tcp_ack_snd_check` schedules a delayed ACK, and
            // `tcp_cleanup_rbuf` sends it as soon as the reader has drained the receive
            // queue (not ping-pong): at once here, the application reading every segment.
            self.timer.cancel();
            self.ack(ts, retx, blocks, out);
        } else {
            self.held = Some((ts, retx));
            self.timer.set(now + self.timeout, TimerKind::DelAck, out);
        }
        before..self.rcv_nxt
    }

    /// Handles a delayed-ACK timer event of generation `gen`.
    pub fn on_timer(&mut self, gen: u32, now: SimTime, out: &mut Outbox) {
        if self.timer.fire(gen, now, TimerKind::DelAck, out) {
            if let Some((ts, retx)) = self.held.take() {
                self.ack(ts, retx, SackBlocks::default(), out);
            } else if let Some((ts, retx, blocks)) = self.comp_pending.take() {
                self.ack(ts, retx, blocks, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::config::TcpParams;
    use super::*;

    /// The layout set on purpose: what every data segment reads (everything before the
    /// compressed ACK, whose tag every ACK writes, and that tag) lies in the first three
    /// 64-byte cache lines of a line-aligned sink, the autotuning's pointer among them
    /// (session 8: it was last, a line of its own read by every in-order segment); what
    /// only AccECN, timestamps, SACK or ACK compression read after it.
    #[test]
    fn sink_layout() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<TcpSink>(), 64);
        assert_eq!(offset_of!(TcpSink, rcv_nxt), 0);
        assert!(offset_of!(TcpSink, tune) + 8 <= 64);
        // the compressed ACK's tag (an `Option` of fields without a niche: rustc puts its
        // tag in the first 8 bytes, as the previous guard assumed) in the third line
        let comp = offset_of!(TcpSink, comp_pending);
        assert!(comp + 8 <= 3 * 64, "{comp}");
        assert_eq!(size_of::<TcpSink>(), 7 * 64);
        for o in [
            offset_of!(TcpSink, r_cep),
            offset_of!(TcpSink, acks_sent),
            offset_of!(TcpSink, ts_recent),
            offset_of!(TcpSink, comp_rcv_nxt),
            offset_of!(TcpSink, sack),
        ] {
            assert!(o > comp, "{o}");
        }
    }

    fn sink(extra: &str) -> TcpSink {
        TcpSink::new(&TcpParams::config_from(extra).unwrap())
    }

    fn acks(out: &mut Outbox) -> Vec<(u64, u8)> {
        let v = out.segs.iter().map(|s| (s.ack, s.flags)).collect();
        out.segs.clear();
        v
    }

    #[test]
    fn cumulative_acks_with_holes() {
        let mut s = sink("");
        let mut out = Outbox::default();
        assert_eq!(s.on_data(0, 0, Ecn::NotEct, 0, 0, &mut out), 0..1);
        assert_eq!(s.on_data(2, 0, Ecn::NotEct, 0, 0, &mut out), 1..1);
        assert_eq!(s.on_data(3, 0, Ecn::NotEct, 0, 0, &mut out), 1..1);
        assert_eq!(s.on_data(1, flags::RETX, Ecn::NotEct, 0, 0, &mut out), 1..4);
        assert_eq!(s.on_data(1, 0, Ecn::NotEct, 0, 0, &mut out), 4..4);
        assert_eq!(
            acks(&mut out),
            vec![(1, 0), (1, 0), (1, 0), (4, flags::RETX), (4, 0)]
        );
    }

    #[test]
    fn delayed_ack_every_second_segment_timeout_and_immediate_cases() {
        let mut s = sink("delayed_ack = true");
        let mut out = Outbox::default();
        s.on_data(0, 0, Ecn::NotEct, 10, 10, &mut out);
        assert!(out.segs.is_empty());
        assert_eq!(out.timers.len(), 1);
        s.on_data(1, 0, Ecn::NotEct, 20, 20, &mut out);
        // One ACK for both, echoing the first segment's timestamp.
        assert_eq!(out.segs.len(), 1);
        assert_eq!((out.segs[0].ack, out.segs[0].ts), (2, 10));
        out.segs.clear();
        // A lone segment is acked by the timer (100 ms default).
        s.on_data(2, 0, Ecn::NotEct, 30, 30, &mut out);
        // The event pending from the first hold (at 10 + 100 ms) fires early and re-arms.
        let (t, _, g) = *out.timers.last().unwrap();
        assert_eq!(t, 10 + 100_000_000);
        s.on_timer(g, t, &mut out);
        assert!(out.segs.is_empty());
        let (t, k, g) = *out.timers.last().unwrap();
        assert_eq!((t, k), (30 + 100_000_000, TimerKind::DelAck));
        s.on_timer(g, t, &mut out);
        assert_eq!(acks(&mut out), vec![(3, 0)]);
        // Out of order: immediate duplicate ACK; the gap-filling segment: immediate ACK.
        s.on_data(4, 0, Ecn::NotEct, 40, 40, &mut out);
        assert_eq!(acks(&mut out), vec![(3, 0)]);
        s.on_data(3, 0, Ecn::NotEct, 50, 50, &mut out);
        assert_eq!(acks(&mut out), vec![(5, 0)]);
    }

    #[test]
    fn timestamps_echo_follows_rfc7323_section_4_3() {
        // TSval = send time here. RFC 7323 4.3 worked by hand, delayed ACKs on.
        let mut s = sink("timestamps = true\ndelayed_ack = true");
        let mut out = Outbox::default();
        let echo = |out: &mut Outbox| {
            let v: Vec<(u64, SimTime, u32)> =
                out.segs.iter().map(|a| (a.ack, a.ts, a.size)).collect();
            out.segs.clear();
            v
        };
        // Segments 0 (TSval 10) and 1 (TSval 20): one ACK echoing the earlier TSval 10
        // (segment 1 starts above Last.ACK.sent = 0, so it does not update TS.Recent).
        s.on_data(0, 0, Ecn::NotEct, 10, 10, &mut out);
        s.on_data(1, 0, Ecn::NotEct, 20, 20, &mut out);
        // ACKs are header + 12 option bytes (10-byte option + 2 NOPs).
        assert_eq!(echo(&mut out), vec![(2, 10, 52)]);
        // Segment 3 (TSval 40) out of order: the immediate duplicate ACK echoes TS.Recent = 10,
        // the last in-sequence segment's (an RTT sample from it is conservatively long).
        s.on_data(3, 0, Ecn::NotEct, 40, 40, &mut out);
        assert_eq!(echo(&mut out), vec![(2, 10, 52)]);
        // The retransmitted 2 (TSval 90) fills the hole: 2 <= Last.ACK.sent = 2, so TS.Recent
        // = 90 and the ACK echoes the retransmission (the sender may take its RTT sample).
        s.on_data(2, flags::RETX, Ecn::NotEct, 90, 90, &mut out);
        assert_eq!(echo(&mut out), vec![(4, 90, 52)]);
        // Without timestamps the out-of-order ACK echoes its own segment's send time.
        let mut plain = sink("");
        plain.on_data(0, 0, Ecn::NotEct, 10, 10, &mut out);
        plain.on_data(2, 0, Ecn::NotEct, 30, 30, &mut out);
        assert_eq!(echo(&mut out), vec![(1, 10, 40), (1, 30, 40)]);
    }

    #[test]
    fn sack_acks_carry_blocks_and_their_option_bytes() {
        let mut s = sink("sack = true\ntimestamps = true");
        let mut out = Outbox::default();
        for seq in [0, 2, 4, 6, 8] {
            s.on_data(seq, 0, Ecn::NotEct, 0, 0, &mut out);
        }
        // 40 B header + 12 (timestamps) + SACK: 0, 1, 2, 3, 3 blocks (8·n + 4 bytes);
        // with timestamps at most 3 blocks fit the 40 option bytes.
        let sizes: Vec<u32> = out.segs.iter().map(|a| a.size).collect();
        assert_eq!(sizes, vec![52, 64, 72, 80, 80]);
        let ids: Vec<u64> = out.segs.iter().map(|a| a.seq).collect();
        assert_eq!(ids, vec![1, 2, 3, 4, 5]);
        // Number 0 (a SYN-ACK; every ACK with SACK off) has no entry and takes none from the
        // log, so the world skips the lookup for it (`World::deliver`).
        assert_eq!(s.sack_for(0), None);
        // The sender side looks the blocks up by ACK number; lost ACKs' entries are skipped.
        assert_eq!(s.sack_for(2).unwrap().blocks(), &[(2, 3)]);
        assert_eq!(s.sack_for(5).unwrap().blocks(), &[(8, 9), (6, 7), (4, 5)]);
        assert_eq!(s.sack_for(3), None);
        // Without timestamps four blocks fit (4·8 + 4 = 36 option bytes).
        let mut s = sink("sack = true");
        for seq in [0, 2, 4, 6, 8, 10] {
            s.on_data(seq, 0, Ecn::NotEct, 0, 0, &mut out);
        }
        assert_eq!(out.segs.last().unwrap().size, 40 + 36);
    }

    #[test]
    fn quickack_acks_the_first_segments_at_once_then_every_second() {
        let mut s = sink("delayed_ack = true\nquickack = 3");
        let mut out = Outbox::default();
        for seq in 0..7 {
            s.on_data(seq, 0, Ecn::NotEct, 0, 0, &mut out);
        }
        // 0, 1, 2 acknowledged one by one; then 3+4 and 5+6 together.
        let a: Vec<u64> = out.segs.iter().map(|a| a.ack).collect();
        assert_eq!(a, vec![1, 2, 3, 5, 7]);
    }

    #[test]
    fn ece_is_echoed_until_cwr() {
        let mut s = sink("ecn = true");
        let mut out = Outbox::default();
        s.on_data(0, 0, Ecn::Ce, 0, 0, &mut out);
        s.on_data(1, 0, Ecn::Ect0, 0, 0, &mut out);
        s.on_data(2, flags::CWR, Ecn::Ect0, 0, 0, &mut out);
        s.on_data(3, 0, Ecn::Ect0, 0, 0, &mut out);
        s.on_data(4, flags::CWR, Ecn::Ce, 0, 0, &mut out);
        let e: Vec<bool> = acks(&mut out)
            .iter()
            .map(|(_, f)| f & flags::ECE != 0)
            .collect();
        assert_eq!(e, vec![true, true, false, false, true]);
    }

    #[test]
    fn precise_echo_follows_rfc8257_section_3_2() {
        // No delayed ACKs: every ACK echoes exactly its own segment's CE state; CWR is ignored.
        let mut s = sink("ecn = \"l4s\"");
        let mut out = Outbox::default();
        let ces = [true, false, true, true, false, false];
        for (i, &ce) in ces.iter().enumerate() {
            let e = if ce { Ecn::Ce } else { Ecn::Ect1 };
            let fl = if i == 3 { flags::CWR } else { 0 };
            s.on_data(i as u64, fl, e, 0, 0, &mut out);
        }
        let e: Vec<bool> = acks(&mut out)
            .iter()
            .map(|(_, f)| f & flags::ECE != 0)
            .collect();
        assert_eq!(e, ces.to_vec());
        // Delayed ACKs (RFC 8257 Figure 1): segments 0 (CE) and 1 (CE) acked together with ECE;
        // 2 (not CE) is held; 3 (CE) changes the state: the held ACK for 2 goes out at once
        // without ECE, then 3 is held with state CE; 4 (not CE) flushes 3 with ECE; 4 is held.
        let mut s = sink("ecn = \"l4s\"\ndelayed_ack = true");
        for (i, ce) in [true, true, false, true, false].into_iter().enumerate() {
            let e = if ce { Ecn::Ce } else { Ecn::Ect1 };
            s.on_data(i as u64, 0, e, 0, 0, &mut out);
        }
        let a: Vec<(u64, bool)> = acks(&mut out)
            .iter()
            .map(|&(a, f)| (a, f & flags::ECE != 0))
            .collect();
        assert_eq!(a, vec![(2, true), (3, false), (4, true)]);
    }

    const ACCECN: &str = "ecn = { enabled = true, codepoint = \"ect1\", feedback = \"accurate\" }";

    fn aces(out: &mut Outbox) -> Vec<(u64, u64)> {
        acks(out).iter().map(|&(a, f)| (a, flags::ace(f))).collect()
    }

    #[test]
    fn accecn_ace_is_the_ce_packet_count_from_5_mod_8() {
        // RFC 9768 section 3.2.1: r.cep starts at 5; section 3.2.2: each ACK carries r.cep
        // mod 8 in AE (4), CWR (2), ECE (1). CE on segments 1, 2, 3, 5, 6, 7, 8; r.cep after
        // each segment: 5, 6, 7, 8, 8, 9, 10, 11, 12, 12 -> ACE 5, 6, 7, 0 (the field wraps),
        // 0, 1, 2, 3, 4, 4. A CWR on a data segment changes nothing (no RFC 3168 latch).
        let mut s = sink(ACCECN);
        let mut out = Outbox::default();
        let ce = [1, 2, 3, 5, 6, 7, 8];
        for i in 0..10u64 {
            let e = if ce.contains(&i) { Ecn::Ce } else { Ecn::Ect1 };
            let fl = if i == 4 { flags::CWR } else { 0 };
            s.on_data(i, fl, e, 0, 0, &mut out);
        }
        let got: Vec<u64> = aces(&mut out).iter().map(|&(_, v)| v).collect();
        assert_eq!(got, vec![5, 6, 7, 0, 0, 1, 2, 3, 4, 4]);
        assert_eq!(s.r_cep, 12);
        // The bits: 5 = AE + ECE, 6 = AE + CWR, 0 = none.
        assert_eq!(flags::ace_flags(5), flags::AE | flags::ECE);
        assert_eq!(flags::ace_flags(6), flags::AE | flags::CWR);
        assert_eq!(flags::ace_flags(8), 0);
    }

    #[test]
    fn accecn_acks_at_once_on_a_change_to_ce_and_on_a_second_mark() {
        // Delayed ACKs (every second segment) with RFC 9768 section 3.2.2.5.1's receiver
        // rules: a CE packet after a non-CE one is ACKed at once (change-triggered); two CE
        // packets since the last ACK are ACKed at once (increment-triggered, n = 2).
        // Segments N N C C C N C C C: 0+1 ACKed together (ACE 5); 2 (C after N) at once (6);
        // 3 held; 4 is the second segment (and second mark): ACK (5 + 3 = 8: ACE 0); 5 held;
        // 6 (C after N) at once with 5 (ACE 1); 7 held; 8: ACK (ACE 3).
        let mut s = sink(&format!("{ACCECN}\ndelayed_ack = true"));
        let mut out = Outbox::default();
        for (i, c) in "NNCCCNCCC".chars().enumerate() {
            let e = if c == 'C' { Ecn::Ce } else { Ecn::Ect1 };
            s.on_data(i as u64, 0, e, 0, 0, &mut out);
        }
        assert_eq!(aces(&mut out), vec![(2, 5), (3, 6), (5, 0), (7, 1), (9, 3)]);
    }

    #[test]
    fn accecn_syn_ack_reflects_the_syns_not_ect_field() {
        // RFC 9768 section 3.1.1: a SYN with AE, CWR and ECE requests AccECN; the SYN-ACK's
        // AE, CWR, ECE encode the SYN's IP-ECN field, Not-ECT: 0, 1, 0.
        let mut s = sink(ACCECN);
        let mut out = Outbox::default();
        let syn = flags::SYN | flags::AE | flags::CWR | flags::ECE;
        s.on_data(0, syn, Ecn::NotEct, 0, 0, &mut out);
        let (_, f) = acks(&mut out)[0];
        assert_eq!(f & (flags::AE | flags::CWR | flags::ECE), flags::CWR);
        // A classic sink answers an AccECN SYN without the AccECN reply.
        let mut c = sink("ecn = true");
        c.on_data(0, syn, Ecn::NotEct, 0, 0, &mut out);
        assert_eq!(acks(&mut out)[0].1 & flags::CWR, 0);
    }

    /// Linux 6.1 `tcp_grow_window` + `tcp_rcv_space_adjust` (hand-worked in `rcvbuf.rs`'s
    /// tests): at the initial buffer the window has no room and every second segment is
    /// ACKed; after 20 segments read in one 100-ms RTT window_clamp rises to 250,656 B, 65
    /// segments grow `rcv_ssthresh` (64,088 → 250,656 B, 2,896 B each) and each is ACKed at
    /// once; then every second segment again.
    #[test]
    fn autotune_acks_each_segment_that_grows_the_window() {
        const MS: SimTime = 1_000_000;
        let mut s = sink("profile = \"linux\"\nack = { quickack = 0, autotune = true }");
        let mut out = Outbox::default();
        let rtt = Some(100 * MS);
        for i in 0..20u64 {
            s.on_data(i, 0, Ecn::NotEct, i * MS, i * MS, &mut out);
            s.note_rtt(rtt, i * MS);
        }
        assert_eq!(acks(&mut out).len(), 10, "one ACK per two segments");
        s.note_rtt(rtt, 100 * MS); // one RTT after the first segment: the buffer grows
        let t = 100 * MS;
        for i in 20..85u64 {
            s.on_data(i, 0, Ecn::NotEct, t, t, &mut out);
            assert_eq!(
                acks(&mut out),
                vec![(i + 1, 0)],
                "segment {i} grows the window"
            );
        }
        s.on_data(85, 0, Ecn::NotEct, t, t, &mut out);
        assert!(acks(&mut out).is_empty(), "no room left: delayed again");
        s.on_data(86, 0, Ecn::NotEct, t, t, &mut out);
        assert_eq!(acks(&mut out), vec![(87, 0)]);
        // Off (the default outside the linux profile) nothing changes.
        let mut s = sink("profile = \"linux\"\nack = { quickack = 0, autotune = false }");
        assert!(!s.autotunes());
        for i in 0..40u64 {
            s.on_data(i, 0, Ecn::NotEct, i * MS, i * MS, &mut out);
            s.note_rtt(rtt, 100 * MS + i * MS);
        }
        assert_eq!(acks(&mut out).len(), 20);
        let e = TcpParams::config_from("ack = { delayed = false, autotune = true }").unwrap_err();
        assert!(
            e.contains("ack.autotune") && e.contains("ack.delayed"),
            "{e}"
        );
    }

    #[test]
    fn push_segment_is_acked_at_once_instead_of_held() {
        // Linux 6.1.57+ (tcp: fix delayed ACKs for MSS boundary condition): a full-sized
        // segment with PSH sets ICSK_ACK_PUSHED in tcp_measure_rcv_mss; __tcp_ack_snd_check
        // only schedules the delayed ACK (one segment unacknowledged, not more than rcv_mss),
        // and tcp_cleanup_rbuf sends it when the reader has emptied the queue (copied > 0,
        // PUSHED, not ping-pong, sk_rmem_alloc 0). Worked by hand for the guest's pattern, a
        // lone segment then two-segment units ending in PSH: 0 is held; 1 completes the pair
        // → ACK 2; 2 (PSH) would be held as the first of the next pair → ACK 3 at once; 3 is
        // held; 4 (PSH) completes the pair → ACK 5. Without the option the receiver pairs
        // 2 with 3 (ACK 4) and holds 4.
        let run = |push: bool| {
            let mut s = sink(&format!(
                "ack = {{ delayed = true, quickack = 0, push = {push} }}"
            ));
            let mut out = Outbox::default();
            let p = flags::PSH;
            for (seq, fl) in [(0u64, 0u8), (1, 0), (2, p), (3, 0), (4, p)] {
                s.on_data(seq, fl, Ecn::NotEct, seq * 10, seq * 10, &mut out);
            }
            let v: Vec<(u64, SimTime)> = out.segs.iter().map(|a| (a.ack, a.ts)).collect();
            (v, s.held.is_some())
        };
        // The pair's ACK echoes its first segment (RFC 7323 without timestamps: the held one).
        assert_eq!(run(true), (vec![(2, 0), (3, 20), (5, 30)], false));
        assert_eq!(run(false), (vec![(2, 0), (4, 20)], true));
    }

    #[test]
    fn sack_compression_follows_linux_tcp_ack_snd_check() {
        // Hand-worked from Linux 6.1 `__tcp_ack_snd_check`: segment 2 is lost; 3, 4, 5 give
        // three immediate duplicate ACKs; 6 and 7 wait on one timer started at 6's arrival
        // (+1 ms) and leave as one ACK carrying the newest block [3, 8); the retransmitted 2
        // fills the hole and is acknowledged at once (ICSK_ACK_NOW).
        let mut s =
            sink("sack = true\nack = { delayed = true, quickack = 0, sack_compress = \"1ms\" }");
        let mut out = Outbox::default();
        s.on_data(0, 0, Ecn::NotEct, 0, 0, &mut out);
        s.on_data(1, 0, Ecn::NotEct, 0, 0, &mut out);
        assert_eq!(acks(&mut out), vec![(2, 0)]);
        out.timers.clear();
        for (seq, t) in [(3, 10), (4, 20), (5, 30)] {
            s.on_data(seq, 0, Ecn::NotEct, t, t, &mut out);
        }
        assert_eq!(acks(&mut out), vec![(2, 0), (2, 0), (2, 0)]);
        s.on_data(6, 0, Ecn::NotEct, 40, 40, &mut out);
        s.on_data(7, 0, Ecn::NotEct, 50, 50, &mut out);
        assert!(out.segs.is_empty());
        assert_eq!(out.timers.len(), 1);
        let (t, k, g) = out.timers[0];
        assert_eq!((t, k), (40 + 1_000_000, TimerKind::DelAck));
        s.on_timer(g, t, &mut out);
        assert_eq!(out.segs.len(), 1);
        assert_eq!((out.segs[0].ack, out.segs[0].ts), (2, 50));
        assert_eq!(s.sack_for(out.segs[0].seq).unwrap().blocks()[0], (3, 8));
        out.segs.clear();
        s.on_data(2, flags::RETX, Ecn::NotEct, 60, 60, &mut out);
        assert_eq!(acks(&mut out), vec![(8, flags::RETX)]);
        // A second hole at a new rcv_nxt starts the count of immediate duplicates again.
        for seq in [9, 10, 11] {
            s.on_data(seq, 0, Ecn::NotEct, 70, 70, &mut out);
        }
        assert_eq!(acks(&mut out), vec![(8, 0), (8, 0), (8, 0)]);
        // Linux's tcp_comp_sack_nr (44): the 45th held segment is acknowledged at once.
        for seq in 12..12 + 44 {
            s.on_data(seq, 0, Ecn::NotEct, 80, 80, &mut out);
        }
        assert!(out.segs.is_empty());
        s.on_data(56, 0, Ecn::NotEct, 90, 90, &mut out);
        assert_eq!(acks(&mut out), vec![(8, 0)]);
        // Off by default: every out-of-order segment is acknowledged at once.
        let mut plain = sink("sack = true\ndelayed_ack = true");
        for seq in [0, 2, 3, 4, 5, 6] {
            plain.on_data(seq, 0, Ecn::NotEct, 0, 0, &mut out);
        }
        assert_eq!(out.segs.len(), 5);
    }
}
