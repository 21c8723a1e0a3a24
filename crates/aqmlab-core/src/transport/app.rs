//! The TCP application model: closed-loop repeated transfers on one connection.
//!
//! With `app = { size = ... }` (kind "transfers"), the application writes one transfer (a
//! fixed size, or drawn from an exponential or Pareto distribution with that mean), waits
//! until every byte of it is acknowledged, thinks for `think` (fixed or exponential), then
//! writes the next —
//! the closed-loop "FTP with think times" of web and file-transfer workloads (RFC 7928
//! section 7; the ON/OFF source of Floyd and Paxson's traffic models). The connection stays
//! open between transfers: cwnd is kept, unless `window.slow_start_after_idle = true`, which applies
//! Linux's `tcp_cwnd_restart` when the idle period exceeds the RTO.
//!
//! Interpretations (docs/tcp.md, "Application model"):
//! - Each transfer is one application write. Sequence numbers still count segments: a write
//!   of B bytes occupies ceil(B / MSS) segments, all full but the last, which carries
//!   B mod MSS bytes (a partial segment) when B is not a multiple of the MSS.
//! - The segment layout (which segments belong to which write, and their sizes) depends only
//!   on the drawn sizes, not on timing: sizes come from their own random stream
//!   (`app_size:<flow>`), think times from another (`app_think:<flow>`), so the pcap writer
//!   can rebuild the same layout from the seed.
//! - A transfer's completion time runs from the write (the flow start for the first one, so
//!   it includes the handshake as `fct_s` does) to the ACK that covers its last byte.

use crate::rng::Rng;

/// A distribution of transfer sizes (bytes) or think times (ns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Always the mean.
    Fixed(f64),
    /// Exponential with this mean.
    Exponential(f64),
    /// Pareto with this mean and shape α > 1 (scale = mean·(α−1)/α).
    Pareto {
        /// The mean.
        mean: f64,
        /// The shape α.
        shape: f64,
    },
}

impl Dist {
    /// One draw.
    pub fn draw(&self, rng: &mut Rng) -> f64 {
        match *self {
            Dist::Fixed(m) => m,
            Dist::Exponential(m) => rng.exponential(m),
            Dist::Pareto { mean, shape } => {
                let scale = mean * (shape - 1.0) / shape;
                scale / rng.uniform_open0().powf(1.0 / shape)
            }
        }
    }

    /// The mean.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Fixed(m) | Dist::Exponential(m) => m,
            Dist::Pareto { mean, .. } => mean,
        }
    }
}

/// Validated settings of the closed-loop application.
#[derive(Clone, Debug, PartialEq)]
pub struct AppConfig {
    /// Transfer sizes (bytes).
    pub sizes: Dist,
    /// Think times (ns).
    pub think: Dist,
    /// Stop after this many transfers (None: until the flow stops).
    pub max_transfers: Option<u64>,
    /// Linux `tcp_slow_start_after_idle`: restart the window after an idle period > RTO.
    pub restart_after_idle: bool,
}

/// Largest transfer a draw may produce (a Pareto tail is unbounded): 1 TB.
/// The largest transfer size (bytes).
pub const MAX_TRANSFER: f64 = 1e12;

/// The segment layout of the writes: which segments each write occupies and its size.
#[derive(Clone, Debug)]
pub struct Layout {
    mss: u64,
    sizes: Dist,
    rng: Rng,
    /// Per write: one past its last segment.
    ends: Vec<u64>,
    /// Per write: bytes written up to and including it.
    cum: Vec<u64>,
}

impl Layout {
    /// The layout of writes drawn from `sizes` with `rng`, `mss` bytes per full segment.
    pub fn new(mss: u32, sizes: Dist, rng: Rng) -> Self {
        Layout {
            mss: mss as u64,
            sizes,
            rng,
            ends: Vec::new(),
            cum: Vec::new(),
        }
    }

    /// Draws writes until write `k` exists.
    pub fn ensure_write(&mut self, k: u64) {
        while self.ends.len() as u64 <= k {
            let b = self
                .sizes
                .draw(&mut self.rng)
                .round()
                .clamp(1.0, MAX_TRANSFER) as u64;
            let (e, c) = match (self.ends.last(), self.cum.last()) {
                (Some(&e), Some(&c)) => (e, c),
                _ => (0, 0),
            };
            self.ends.push(e + b.div_ceil(self.mss));
            self.cum.push(c + b);
        }
    }

    /// Draws writes until segment `seq` is covered.
    pub fn ensure_seg(&mut self, seq: u64) {
        while self.ends.last().is_none_or(|&e| e <= seq) {
            let k = self.ends.len() as u64;
            self.ensure_write(k);
        }
    }

    /// One past the last segment of write `k` (drawn already).
    pub fn end(&self, k: u64) -> u64 {
        self.ends.get(k as usize).copied().unwrap_or(0)
    }

    /// Bytes of write `k` (drawn already).
    pub fn bytes(&self, k: u64) -> u64 {
        let k = k as usize;
        let before = if k == 0 { 0 } else { self.cum[k - 1] };
        self.cum.get(k).map_or(0, |c| c - before)
    }

    /// (write index, its first segment, bytes before it) of segment `seq`, if drawn.
    fn locate(&self, seq: u64) -> Option<(usize, u64, u64)> {
        let k = self.ends.partition_point(|&e| e <= seq);
        (k < self.ends.len()).then(|| {
            if k == 0 {
                (0, 0, 0)
            } else {
                (k, self.ends[k - 1], self.cum[k - 1])
            }
        })
    }

    /// Payload bytes of segment `seq` (the MSS beyond the drawn writes).
    pub fn payload(&self, seq: u64) -> u32 {
        match self.locate(seq) {
            Some((k, first, before)) => {
                let left = self.cum[k] - before - (seq - first) * self.mss;
                left.min(self.mss) as u32
            }
            None => self.mss as u32,
        }
    }

    /// Bytes of the stream before segment `seq` (its byte offset).
    pub fn offset(&self, seq: u64) -> u64 {
        match self.locate(seq) {
            Some((_, first, before)) => before + (seq - first) * self.mss,
            None => {
                let (e, c) = (
                    self.ends.last().copied().unwrap_or(0),
                    self.cum.last().copied().unwrap_or(0),
                );
                c + seq.saturating_sub(e) * self.mss
            }
        }
    }
}

/// One completed transfer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferRecord {
    /// Index of the transfer on its flow (0, 1, ...).
    pub index: u64,
    /// Payload bytes.
    pub bytes: u64,
    /// When the application wrote it.
    pub start: crate::time::SimTime,
    /// When its last byte was acknowledged.
    pub end: crate::time::SimTime,
}

/// The application's state inside a sender.
#[derive(Clone, Debug)]
pub struct AppState {
    /// Settings.
    pub cfg: AppConfig,
    /// Segment layout of the writes.
    pub layout: Layout,
    /// Think-time stream.
    think_rng: Rng,
    /// Index of the current (or last) transfer.
    pub index: u64,
    /// One past the last segment written so far.
    pub end: u64,
    /// A transfer is waiting for its ACKs.
    pub active: bool,
    /// When the current transfer was written.
    pub started: crate::time::SimTime,
    /// The think timer.
    pub timer: super::Timer,
    /// Completed transfers.
    pub done: Vec<TransferRecord>,
}

impl AppState {
    /// The application of `cfg`, with its first transfer written at `start`.
    pub fn new(
        cfg: &AppConfig,
        mss: u32,
        sizes: Rng,
        think: Rng,
        start: crate::time::SimTime,
    ) -> Self {
        let mut layout = Layout::new(mss, cfg.sizes, sizes);
        layout.ensure_write(0);
        AppState {
            cfg: cfg.clone(),
            end: layout.end(0),
            layout,
            think_rng: think,
            index: 0,
            active: true,
            started: start,
            timer: super::Timer::default(),
            done: Vec::new(),
        }
    }

    /// Records the current transfer as complete at `now`; returns the think time before the
    /// next one, or None if no further transfer is allowed.
    pub fn complete(&mut self, now: crate::time::SimTime) -> Option<crate::time::SimTime> {
        self.active = false;
        self.done.push(TransferRecord {
            index: self.index,
            bytes: self.layout.bytes(self.index),
            start: self.started,
            end: now,
        });
        if self.cfg.max_transfers.is_some_and(|m| self.index + 1 >= m) {
            return None;
        }
        let t = self.cfg.think.draw(&mut self.think_rng).max(0.0);
        Some(t.min(1e18) as crate::time::SimTime)
    }

    /// Writes the next transfer at `now`.
    pub fn next(&mut self, now: crate::time::SimTime) {
        self.index += 1;
        self.layout.ensure_write(self.index);
        self.end = self.layout.end(self.index);
        self.active = true;
        self.started = now;
    }
}

/// The q-quantile of sorted `xs` by linear interpolation between closest ranks (numpy's
/// default, Hyndman and Fan type 7); NaN when empty.
fn quantile(xs: &[f64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let h = (xs.len() - 1) as f64 * q;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    xs[lo] + (h - lo as f64) * (xs[hi] - xs[lo])
}

/// The `tcp_transfers` table and the `tcp_transfer_summary` table with its summary section
/// (keyed by flow) of the flows with repeated transfers: (flow name, completed transfers).
pub fn tables<'a>(
    flows: impl Iterator<Item = (&'a str, &'a [TransferRecord])>,
) -> (
    crate::results::Table,
    crate::results::Table,
    serde_json::Map<String, serde_json::Value>,
) {
    use crate::schema::{TransferRow, TransferSummary};
    use crate::time::to_secs;
    let mut rows = crate::results::Table::new();
    let mut sums = crate::results::Table::new();
    let mut json = serde_json::Map::new();
    for (name, done) in flows {
        let mut fct: Vec<f64> = Vec::with_capacity(done.len());
        for r in done {
            let f = to_secs(r.end - r.start);
            fct.push(f);
            let row = TransferRow {
                flow: name.to_string(),
                index: r.index,
                size_bytes: r.bytes,
                start_s: to_secs(r.start),
                end_s: to_secs(r.end),
                fct_s: f,
            };
            rows.push(&row.into_row());
        }
        let mean = if fct.is_empty() {
            f64::NAN
        } else {
            fct.iter().sum::<f64>() / fct.len() as f64
        };
        fct.sort_by(f64::total_cmp);
        let s = TransferSummary {
            flow: name.to_string(),
            transfers: done.len() as u64,
            transfer_bytes: done.iter().map(|r| r.bytes).sum(),
            fct_mean_s: mean,
            fct_p50_s: quantile(&fct, 0.5),
            fct_p95_s: quantile(&fct, 0.95),
        }
        .into_row();
        json.insert(name.to_string(), crate::results::row_to_json(&s));
        sums.push(&s);
    }
    (rows, sums, json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_partial_segment_is_the_write_size_modulo_mss() {
        // Writes of 2500, 1000 and 10 bytes with MSS 1000: segments 1000, 1000, 500 | 1000 | 10.
        let mut l = Layout::new(1000, Dist::Fixed(2500.0), Rng::stream(1, "x"));
        l.ensure_write(0);
        l.sizes = Dist::Fixed(1000.0);
        l.ensure_write(1);
        l.sizes = Dist::Fixed(10.0);
        l.ensure_write(2);
        let p: Vec<u32> = (0..5).map(|s| l.payload(s)).collect();
        assert_eq!(p, vec![1000, 1000, 500, 1000, 10]);
        let o: Vec<u64> = (0..6).map(|s| l.offset(s)).collect();
        assert_eq!(o, vec![0, 1000, 2000, 2500, 3500, 3510]);
        assert_eq!((l.end(0), l.end(1), l.end(2)), (3, 4, 5));
        assert_eq!((l.bytes(0), l.bytes(1), l.bytes(2)), (2500, 1000, 10));
    }

    #[test]
    fn pareto_and_exponential_draws_have_their_mean() {
        // Sample means over 200k draws: within 2% of the mean (Pareto α = 2.5 has finite
        // variance, so the sample mean converges).
        for d in [
            Dist::Exponential(1000.0),
            Dist::Pareto {
                mean: 1000.0,
                shape: 2.5,
            },
        ] {
            let mut r = Rng::stream(7, "d");
            let n = 200_000;
            let m = (0..n).map(|_| d.draw(&mut r)).sum::<f64>() / n as f64;
            assert!((m / 1000.0 - 1.0).abs() < 0.02, "{d:?}: {m}");
        }
        // Pareto's minimum is its scale mean·(α−1)/α.
        let mut r = Rng::stream(7, "d");
        let d = Dist::Pareto {
            mean: 1000.0,
            shape: 1.5,
        };
        let min = (0..10_000).map(|_| d.draw(&mut r)).fold(f64::MAX, f64::min);
        assert!((1000.0 / 3.0..1000.0 / 3.0 * 1.01).contains(&min), "{min}");
    }
}
