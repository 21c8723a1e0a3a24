//! Video: `fps` frames per second, each of `frame_size` bytes (constant, or drawn from an
//! exponential or uniform ±spread distribution), cut into packets of at most `mtu` bytes on the
//! wire (`header` bytes of each packet are overhead, the rest carries frame bytes). The packets
//! of a frame leave back to back at the frame time (`pacing = "burst"`, the default, as a
//! codec hands a whole frame to the network stack) or evenly spread over the frame interval
//! (`pacing = "paced"`). Frame k is due at start + k/fps (no rounding drift).

use super::{check_size, Emit};
use crate::rng::Rng;
use crate::time::{from_secs, SimTime};
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// How frame sizes are drawn.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FrameSizeDistribution {
    /// Every frame has `frame_size` bytes.
    Constant,
    /// Exponential with mean `frame_size` (rounded to whole bytes, at least 1).
    Exponential,
    /// Uniform on [(1 − spread)·frame_size, (1 + spread)·frame_size].
    Uniform,
}

/// When the packets of a frame leave.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Pacing {
    /// All packets of a frame at the frame time, back to back.
    Burst,
    /// Evenly spaced over the frame interval.
    Paced,
}

/// Parameters of a `video` flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VideoParams {
    /// Frames per second (> 0).
    pub fps: f64,
    /// (Mean) frame size: bytes of frame data per frame.
    pub frame_size: Bytes,
    /// Largest packet on the wire. Default 1500B.
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Header bytes added to every packet (IP/UDP/RTP overhead). Default 0B: `frame_size` is
    /// taken as on-the-wire bytes, so the rate is exactly fps × frame_size × 8.
    #[serde(default = "zero")]
    pub header: Bytes,
    /// "constant" (default), "exponential" or "uniform".
    #[serde(default = "constant")]
    pub frame_size_distribution: FrameSizeDistribution,
    /// Half-width of the uniform distribution as a fraction of `frame_size` (0..1). Default 0.2;
    /// used only with `frame_size_distribution = "uniform"`.
    #[serde(default = "default_spread")]
    pub frame_size_spread: f64,
    /// "burst" (default) or "paced".
    #[serde(default = "burst")]
    pub pacing: Pacing,
}

fn default_mtu() -> Bytes {
    Bytes(1500)
}
fn zero() -> Bytes {
    Bytes(0)
}
fn constant() -> FrameSizeDistribution {
    FrameSizeDistribution::Constant
}
fn default_spread() -> f64 {
    0.2
}
fn burst() -> Pacing {
    Pacing::Burst
}

/// State of a video source.
#[derive(Clone, Debug)]
pub struct Video {
    mean_frame: f64,
    dist: FrameSizeDistribution,
    spread: f64,
    pacing: Pacing,
    header: u32,
    payload: u32,
    frame_interval_s: f64,
    start: SimTime,
    stop: SimTime,
    /// Frames begun so far.
    frames: u64,
    /// Time the current frame began.
    frame_time: SimTime,
    /// Frame bytes of the current frame still to send.
    remaining: u64,
    /// Packets of the current frame, and how many were sent.
    packets: u64,
    sent: u64,
}

impl Video {
    /// A video source active in [start, stop).
    pub fn new(p: &VideoParams, start: SimTime, stop: SimTime) -> Result<Self, String> {
        let mtu = check_size("mtu", p.mtu.0)?;
        if !(p.fps.is_finite() && p.fps > 0.0 && p.fps <= 1e6) {
            return Err(format!(
                "fps: must be a positive number of frames per second (at most 1e6), got {}",
                p.fps
            ));
        }
        if p.frame_size.0 == 0 || p.frame_size.0 > 1_000_000_000 {
            return Err(format!(
                "frame_size: must be between 1B and 1GB, got {}",
                p.frame_size
            ));
        }
        if p.header.0 >= mtu as u64 {
            return Err(format!(
                "header: {} leaves no room for frame data in an mtu of {}",
                p.header, p.mtu
            ));
        }
        if !(0.0..=1.0).contains(&p.frame_size_spread) {
            return Err(format!(
                "frame_size_spread: must be in [0, 1], got {}",
                p.frame_size_spread
            ));
        }
        Ok(Video {
            mean_frame: p.frame_size.0 as f64,
            dist: p.frame_size_distribution,
            spread: p.frame_size_spread,
            pacing: p.pacing,
            header: p.header.0 as u32,
            payload: mtu - p.header.0 as u32,
            frame_interval_s: 1.0 / p.fps,
            start,
            stop,
            frames: 0,
            frame_time: start,
            remaining: 0,
            packets: 0,
            sent: 0,
        })
    }

    fn draw_frame(&self, rng: &mut Rng) -> u64 {
        let x = match self.dist {
            FrameSizeDistribution::Constant => return self.mean_frame as u64,
            FrameSizeDistribution::Exponential => rng.exponential(self.mean_frame),
            FrameSizeDistribution::Uniform => {
                self.mean_frame * (1.0 - self.spread + 2.0 * self.spread * rng.uniform())
            }
        };
        (x.round() as u64).max(1)
    }

    /// Emits the next packet of the current frame, starting a new frame when the last one is done.
    pub fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        if now >= self.stop {
            return Emit {
                size: None,
                next: None,
            };
        }
        if self.remaining == 0 {
            self.frame_time = now;
            self.frames += 1;
            self.remaining = self.draw_frame(rng);
            self.packets = self.remaining.div_ceil(self.payload as u64);
            self.sent = 0;
        }
        let chunk = self.remaining.min(self.payload as u64);
        self.remaining -= chunk;
        self.sent += 1;
        let next = if self.remaining > 0 {
            match self.pacing {
                Pacing::Burst => now,
                Pacing::Paced => {
                    let gap = self.frame_interval_s / self.packets as f64;
                    (self.frame_time + from_secs(self.sent as f64 * gap)).max(now)
                }
            }
        } else {
            self.start + from_secs(self.frames as f64 * self.frame_interval_s)
        };
        Emit {
            size: Some(chunk as u32 + self.header),
            next: (next < self.stop).then_some(next),
        }
    }
}

impl super::TrafficSource for Video {
    type Params = VideoParams;
    fn build(p: &VideoParams, start: SimTime, stop: SimTime) -> Result<Self, String> {
        Video::new(p, start, stop)
    }
    fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        Video::fire(self, now, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(fps: f64, frame: u64) -> VideoParams {
        VideoParams {
            fps,
            frame_size: Bytes(frame),
            mtu: Bytes(1500),
            header: Bytes(0),
            frame_size_distribution: FrameSizeDistribution::Constant,
            frame_size_spread: 0.2,
            pacing: Pacing::Burst,
        }
    }

    /// (time, size) of every packet in [0, stop).
    fn trace(p: &VideoParams, stop: SimTime) -> Vec<(SimTime, u32)> {
        let mut s = Video::new(p, 0, stop).unwrap();
        let mut rng = Rng::stream(1, "t");
        let mut t = 0;
        let mut out = vec![];
        loop {
            let e = s.fire(t, &mut rng);
            if let Some(sz) = e.size {
                out.push((t, sz));
            }
            match e.next {
                Some(x) => t = x,
                None => return out,
            }
        }
    }

    #[test]
    fn frames_are_cut_into_mtu_packets_back_to_back() {
        // The RNLGRED paper's source 1: 30 frames/s of 6554 B = 1 572 960 b/s.
        let tr = trace(&params(30.0, 6554), 1_000_000_000);
        assert_eq!(tr.len(), 30 * 5);
        let first: Vec<u32> = tr[..5].iter().map(|x| x.1).collect();
        assert_eq!(first, vec![1500, 1500, 1500, 1500, 554]);
        assert!(tr[..5].iter().all(|x| x.0 == 0));
        assert_eq!(tr[5].0, 33_333_333);
        let bits: u64 = tr.iter().map(|x| x.1 as u64 * 8).sum();
        assert_eq!(bits, 1_572_960);
    }

    #[test]
    fn paced_frames_spread_over_the_interval_and_headers_add_overhead() {
        let mut p = params(10.0, 2000);
        p.pacing = Pacing::Paced;
        p.header = Bytes(40);
        let tr = trace(&p, 1_000_000_000);
        // 2000 B of frame data in 1460-B chunks: 1500 + 580 B, 50 ms apart, frames 100 ms apart.
        assert_eq!(tr.len(), 20);
        assert_eq!((tr[0], tr[1]), ((0, 1500), (50_000_000, 580)));
        assert_eq!(tr[2].0, 100_000_000);
        let bytes: u64 = tr.iter().map(|x| x.1 as u64).sum();
        assert_eq!(bytes, 10 * 2080);
    }

    #[test]
    fn random_frame_sizes_keep_the_mean_rate() {
        for (dist, spread) in [
            (FrameSizeDistribution::Exponential, 0.0),
            (FrameSizeDistribution::Uniform, 0.5),
        ] {
            let mut p = params(25.0, 4000);
            p.frame_size_distribution = dist;
            p.frame_size_spread = spread;
            let tr = trace(&p, 400_000_000_000); // 400 s, 10 000 frames
            let rate = tr.iter().map(|x| x.1 as f64 * 8.0).sum::<f64>() / 400.0;
            let want = 25.0 * 4000.0 * 8.0;
            assert!(
                (rate / want - 1.0).abs() < 0.03,
                "{dist:?}: {rate} vs {want}"
            );
            assert!(tr.iter().all(|x| x.1 >= 1 && x.1 <= 1500));
        }
    }

    #[test]
    fn bad_parameters_are_rejected_with_the_field() {
        let mut p = params(0.0, 100);
        assert!(Video::new(&p, 0, 1).unwrap_err().starts_with("fps:"));
        p.fps = 30.0;
        p.header = Bytes(1500);
        assert!(Video::new(&p, 0, 1).unwrap_err().starts_with("header:"));
        p.header = Bytes(0);
        p.frame_size_spread = 1.5;
        assert!(Video::new(&p, 0, 1)
            .unwrap_err()
            .starts_with("frame_size_spread:"));
        p.frame_size_spread = 0.1;
        p.frame_size = Bytes(0);
        assert!(Video::new(&p, 0, 1).unwrap_err().starts_with("frame_size:"));
    }

    #[test]
    fn scenario_errors_name_the_flow_field() {
        let text = |flow: &str| {
            format!(
                "[simulation]\nduration = \"1s\"\n[topology]\nnodes = [\"a\", \"b\"]\nlinks = [{{ from = \"a\", to = \"b\", rate = \"1Mbps\", delay = \"1ms\" }}]\n[[flows]]\nfrom = \"a\"\nto = \"b\"\n{flow}\n"
            )
        };
        for (flow, path) in [
            (
                "kind = \"video\"\nfps = -1\nframe_size = \"100B\"",
                "flows[0].fps",
            ),
            (
                "kind = \"video\"\nfps = 30\nframe_size = \"0B\"",
                "flows[0].frame_size",
            ),
            (
                "kind = \"video\"\nfps = 30\nframe_size = \"1kB\"\npacing = \"smooth\"",
                "flows[0].pacing",
            ),
            (
                "kind = \"voice\"\nframes_per_packet = 0",
                "flows[0].frames_per_packet",
            ),
            ("kind = \"voice\"\ncodec = \"g729\"", "flows[0].codec"),
        ] {
            let e = crate::scenario::build(&text(flow), None).err().expect(flow);
            assert_eq!(e.path, path, "{flow}: {e:?}");
        }
        assert!(crate::scenario::build(&text("kind = \"voice\"\ntalkspurts = true"), None).is_ok());
    }

    #[test]
    fn a_vanishing_frame_rate_schedules_nothing_in_the_past() {
        // found by the fuzz target: fps = 1e-300 made start + k/fps wrap around
        let p = params(1e-300, 1000);
        let start = 100_000_000_000;
        let mut v = Video::new(&p, start, 1_000_000_000_000).unwrap();
        let mut rng = Rng::stream(1, "v");
        let e = v.fire(start, &mut rng);
        assert!(e.size.is_some());
        assert_eq!(e.next, None); // the next frame is due after the end
    }
}
