//! Voice: a constant-bit-rate codec (G.711 by default: 64 kb/s, one 20-ms frame per packet, so
//! 160 B of payload) plus `header` bytes per packet (IP/UDP/RTP: 40 B), i.e. 200-B packets every
//! 20 ms = 80 kb/s on the wire. With `talkspurts = true` the speaker alternates exponential talk
//! spurts (mean `on_time`, default 1.0 s) and silences (mean `off_time`, default 1.35 s; Brady's
//! measurements as used in ITU-T P.59-style models); no packets are sent in silence (no comfort
//! noise). A spurt starts with a packet at its first instant, then one every packet interval.
//! The source starts in a talk spurt.

use super::{check_size, Emit};
use crate::rng::Rng;
use crate::time::SimTime;
use crate::units::{Bytes, Duration, Rate};
use serde::{Deserialize, Serialize};

/// Parameters of a `voice` flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoiceParams {
    /// Codec bit rate (payload only). Default 64kbps (G.711).
    #[serde(default = "default_codec_rate")]
    pub codec_rate: Rate,
    /// Codec frame duration. Default 20ms.
    #[serde(default = "default_frame")]
    pub frame_interval: Duration,
    /// Codec frames per packet. Default 1.
    #[serde(default = "one")]
    pub frames_per_packet: u32,
    /// Header bytes per packet (IP 20 + UDP 8 + RTP 12). Default 40B.
    #[serde(default = "default_header")]
    pub header: Bytes,
    /// Exponential on/off talk spurts. Default false (continuous).
    #[serde(default)]
    pub talkspurts: bool,
    /// Mean talk-spurt length. Default 1s.
    #[serde(default = "default_on")]
    pub on_time: Duration,
    /// Mean silence length. Default 1.35s.
    #[serde(default = "default_off")]
    pub off_time: Duration,
}

fn default_codec_rate() -> Rate {
    Rate(64_000)
}
fn default_frame() -> Duration {
    Duration(20_000_000)
}
fn one() -> u32 {
    1
}
fn default_header() -> Bytes {
    Bytes(40)
}
fn default_on() -> Duration {
    Duration(1_000_000_000)
}
fn default_off() -> Duration {
    Duration(1_350_000_000)
}

/// State of a voice source.
#[derive(Clone, Debug)]
pub struct Voice {
    size: u32,
    interval: SimTime,
    talkspurts: bool,
    mean_on_s: f64,
    mean_off_s: f64,
    on_until: Option<SimTime>,
    start: SimTime,
    stop: SimTime,
    k: u64,
}

impl Voice {
    /// A voice source active in [start, stop).
    pub fn new(p: &VoiceParams, start: SimTime, stop: SimTime) -> Result<Self, String> {
        if p.codec_rate.0 == 0 {
            return Err("codec_rate: must be positive".into());
        }
        if p.frame_interval.0 == 0 {
            return Err("frame_interval: must be positive".into());
        }
        if p.frames_per_packet == 0 || p.frames_per_packet > 1000 {
            return Err(format!(
                "frames_per_packet: must be between 1 and 1000, got {}",
                p.frames_per_packet
            ));
        }
        let interval = p
            .frame_interval
            .0
            .saturating_mul(p.frames_per_packet as u64);
        let payload = p.codec_rate.0 as f64 * interval as f64 / 8e9;
        if payload.round() < 1.0 {
            return Err(format!(
                "codec_rate: {} over {} per packet is less than one byte",
                p.codec_rate, p.frame_interval
            ));
        }
        let size = check_size("header", payload.round() as u64 + p.header.0)?;
        if p.talkspurts && (p.on_time.0 == 0 || p.off_time.0 == 0) {
            return Err("on_time: talk spurts need positive on_time and off_time".into());
        }
        Ok(Voice {
            size,
            interval,
            talkspurts: p.talkspurts,
            mean_on_s: p.on_time.secs(),
            mean_off_s: p.off_time.secs(),
            on_until: None,
            start,
            stop,
            k: 0,
        })
    }

    /// Packet size on the wire.
    pub fn packet_size(&self) -> u32 {
        self.size
    }

    /// Emits a packet; between talk spurts, sleeps through a silence.
    pub fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        if now >= self.stop {
            return Emit {
                size: None,
                next: None,
            };
        }
        if !self.talkspurts {
            self.k += 1;
            let next = self.start + self.k * self.interval;
            return Emit {
                size: Some(self.size),
                next: (next < self.stop).then_some(next),
            };
        }
        let on_until = *self
            .on_until
            .get_or_insert_with(|| now + crate::time::from_secs(rng.exponential(self.mean_on_s)));
        let mut next = now + self.interval;
        if next >= on_until {
            let off = crate::time::from_secs(rng.exponential(self.mean_off_s));
            let spurt = on_until.max(now) + off;
            self.on_until = Some(spurt + crate::time::from_secs(rng.exponential(self.mean_on_s)));
            next = spurt.max(now + 1);
        }
        Emit {
            size: Some(self.size),
            next: (next < self.stop).then_some(next),
        }
    }
}

impl super::TrafficSource for Voice {
    type Params = VoiceParams;
    fn build(p: &VoiceParams, start: SimTime, stop: SimTime) -> Result<Self, String> {
        Voice::new(p, start, stop)
    }
    fn fire(&mut self, now: SimTime, rng: &mut Rng) -> Emit {
        Voice::fire(self, now, rng)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g711() -> VoiceParams {
        VoiceParams {
            codec_rate: default_codec_rate(),
            frame_interval: default_frame(),
            frames_per_packet: 1,
            header: default_header(),
            talkspurts: false,
            on_time: default_on(),
            off_time: default_off(),
        }
    }

    fn count(p: &VoiceParams, stop: SimTime) -> (u64, u64) {
        let mut s = Voice::new(p, 0, stop).unwrap();
        let mut rng = Rng::stream(3, "voice");
        let (mut t, mut n, mut bytes) = (0, 0, 0);
        loop {
            let e = s.fire(t, &mut rng);
            if let Some(sz) = e.size {
                n += 1;
                bytes += sz as u64;
            }
            match e.next {
                Some(x) => t = x,
                None => return (n, bytes),
            }
        }
    }

    #[test]
    fn g711_sends_200_byte_packets_every_20ms() {
        let p = g711();
        assert_eq!(Voice::new(&p, 0, 1).unwrap().packet_size(), 200);
        let (n, bytes) = count(&p, 10_000_000_000);
        assert_eq!(n, 500);
        assert_eq!(bytes * 8 / 10, 80_000); // 64 kb/s payload + 16 kb/s headers
    }

    #[test]
    fn two_frames_per_packet_halve_the_header_overhead() {
        let mut p = g711();
        p.frames_per_packet = 2;
        assert_eq!(Voice::new(&p, 0, 1).unwrap().packet_size(), 360);
        assert_eq!(count(&p, 10_000_000_000).0, 250);
    }

    #[test]
    fn talkspurts_send_during_the_on_fraction() {
        let mut p = g711();
        p.talkspurts = true;
        let secs = 20_000.0;
        let (n, _) = count(&p, (secs * 1e9) as u64);
        // A spurt of length L sends ceil(L / 20 ms) packets: E = on/T + ~0.5 per spurt.
        let cycle = 1.0 + 1.35;
        let want = secs / cycle * (1.0 / 0.02 + 0.5);
        assert!((n as f64 / want - 1.0).abs() < 0.03, "{n} vs {want}");
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let mut p = g711();
        p.frames_per_packet = 0;
        assert!(Voice::new(&p, 0, 1)
            .unwrap_err()
            .starts_with("frames_per_packet:"));
        p.frames_per_packet = 1;
        p.codec_rate = Rate(100);
        assert!(Voice::new(&p, 0, 1).unwrap_err().starts_with("codec_rate:"));
        p.codec_rate = Rate(64_000);
        p.header = Bytes(70_000);
        assert!(Voice::new(&p, 0, 1).unwrap_err().starts_with("header:"));
    }
}
