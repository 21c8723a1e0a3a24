//! Packet capture for debugging (`[pcap]`): packets leaving chosen link directions are written
//! as standard pcap files (nanosecond timestamps, `LINKTYPE_RAW` = IPv4) with synthetic
//! headers, so Wireshark/tshark can follow flows, sequence numbers and retransmissions.
//!
//! Interpretation choices (the simulator carries no real headers):
//! - A packet is captured when its transmission starts on the port (as `tcpdump` sees an
//!   egress interface), timestamped with the simulated time; packets dropped by the queue never
//!   appear, packets lost on the wire (`loss`) do.
//! - Node `i` has address 10.0.0.0 + i + 1. A flow's source port is 1024 + (flow index mod
//!   64000); the destination port is 5001 (TCP) or 9 (UDP).
//! - Only headers are captured (up to 80 bytes for TCP with options, 28 for UDP); the IP total length gives the
//!   real size. TCP: 20-byte IPv4 + 20-byte TCP header, plus the options the segment carries in
//!   the simulator: timestamps (NOP, NOP, kind 8: TSval = the sender's clock in milliseconds,
//!   TSecr = the echoed value for ACKs, 0 for data) and SACK blocks on ACKs (NOP, NOP, kind 5,
//!   byte edges as below, RFC 2018), byte sequence numbers `1 + segment × mss` (initial
//!   sequence numbers 0; the SYN takes sequence 0), ACK numbers `1 + min(ack × mss, file
//!   size)`, flags SYN / ACK / PSH / ECE / CWR / AE (AccECN), window 65535. IP total length = 40 + options +
//!   payload, so TCP header sizes other than 40 B (plus options) are not shown. The ECN field is the packet's codepoint.
//!   Checksums: IPv4 computed, TCP/UDP zero (no payload to sum).

use crate::packet::{Ecn, Packet, PacketKind};
use crate::time::SimTime;
use crate::topology::PortId;
use crate::transport::app::Layout;
use crate::transport::flags;
use crate::transport::sack::SackBlocks;

/// The shape of a TCP flow's byte stream (for byte sequence numbers).
#[derive(Clone, Copy, Debug)]
pub struct TcpShape {
    /// Payload bytes per full segment.
    pub mss: u32,
    /// Header bytes per segment in the simulator.
    pub header: u32,
    /// Bytes of a finite transfer.
    pub total_bytes: Option<u64>,
    /// Segments carry the timestamp option (RFC 7323).
    pub timestamps: bool,
}

/// One pcap file being filled.
#[derive(Debug)]
pub struct PcapFile {
    /// File name (without directory), e.g. `r1_to_r2.pcap`.
    pub name: String,
    /// The file's bytes so far.
    pub bytes: Vec<u8>,
    /// Packets written.
    pub packets: u64,
    /// Packets not written because `max_packets` was reached.
    pub skipped: u64,
}

/// Captures on a set of ports.
#[derive(Debug)]
pub struct Capture {
    /// Port id → index into `files` (None: not captured).
    by_port: Vec<Option<u32>>,
    /// Per flow: TCP shape, or None for UDP.
    flows: Vec<Option<TcpShape>>,
    /// The files.
    pub files: Vec<PcapFile>,
    /// Per flow with repeated transfers: its own copy of the write layout (drawn from the
    /// same stream as the sender's), for byte sequence numbers.
    pub layouts: Vec<Option<Layout>>,
    max_packets: u64,
    ip_id: u16,
}

/// Bytes a captured packet takes in memory (record header + at most 80 header bytes).
pub const BYTES_PER_PACKET: u64 = 96;

impl Capture {
    /// A capture writing `files[i]` for the ports listed in `ports[i]`, at most `max_packets`
    /// per file.
    pub fn new(
        n_ports: usize,
        files: Vec<(String, Vec<PortId>)>,
        flows: Vec<Option<TcpShape>>,
        max_packets: u64,
    ) -> Self {
        let mut by_port = vec![None; n_ports];
        let mut out = Vec::with_capacity(files.len());
        for (i, (name, ports)) in files.into_iter().enumerate() {
            for p in ports {
                by_port[p as usize] = Some(i as u32);
            }
            let mut bytes = Vec::with_capacity(4096);
            // global header: nanosecond-resolution magic, version 2.4, snaplen 80, LINKTYPE_RAW
            bytes.extend_from_slice(&0xa1b2_3c4d_u32.to_le_bytes());
            bytes.extend_from_slice(&2u16.to_le_bytes());
            bytes.extend_from_slice(&4u16.to_le_bytes());
            bytes.extend_from_slice(&0i32.to_le_bytes());
            bytes.extend_from_slice(&0u32.to_le_bytes());
            bytes.extend_from_slice(&80u32.to_le_bytes());
            bytes.extend_from_slice(&101u32.to_le_bytes());
            out.push(PcapFile {
                name,
                bytes,
                packets: 0,
                skipped: 0,
            });
        }
        Capture {
            by_port,
            flows,
            files: out,
            layouts: Vec::new(),
            max_packets,
            ip_id: 0,
        }
    }

    /// Records `pkt` starting transmission on `port` at `now`, if that port is captured.
    /// `sack` gives an ACK's SACK blocks, if any (asked only for captured packets).
    #[inline]
    pub fn on_transmit(
        &mut self,
        port: PortId,
        pkt: &Packet,
        now: SimTime,
        sack: impl FnOnce() -> Option<SackBlocks>,
    ) {
        if let Some(f) = self.by_port.get(port as usize).copied().flatten() {
            self.record(f as usize, pkt, now, sack());
        }
    }

    fn record(&mut self, f: usize, pkt: &Packet, now: SimTime, sack: Option<SackBlocks>) {
        if self.files[f].packets >= self.max_packets {
            self.files[f].skipped += 1;
            return;
        }
        self.ip_id = self.ip_id.wrapping_add(1);
        let shape = self.flows.get(pkt.flow as usize).copied().flatten();
        let layout = match self.layouts.get_mut(pkt.flow as usize) {
            Some(Some(l)) => {
                let top = sack
                    .as_ref()
                    .and_then(|b| b.blocks().iter().map(|&(_, r)| r).max())
                    .unwrap_or(0);
                // An ACK's `seq` is a SACK-log key, not a segment: only its `ack` counts.
                let seg = match pkt.kind {
                    PacketKind::Data => pkt.seq,
                    PacketKind::Ack => pkt.ack,
                };
                l.ensure_seg(seg.max(top));
                Some(&*l)
            }
            _ => None,
        };
        let mut hdr = [0u8; 80];
        let (caplen, total_len) = match shape {
            Some(s) => {
                // Byte offset of a segment boundary in the flow's stream.
                let off = |seg: u64| match layout {
                    Some(l) => l.offset(seg),
                    None => {
                        let x = seg.saturating_mul(u64::from(s.mss));
                        s.total_bytes.map_or(x, |t| x.min(t))
                    }
                };
                let opts = tcp_options(&mut hdr[40..80], pkt, &s, sack, now, &off);
                let payload = match pkt.kind {
                    PacketKind::Data if pkt.flags & flags::SYN == 0 => {
                        pkt.size.saturating_sub(s.header + opts)
                    }
                    _ => 0,
                };
                tcp_header(&mut hdr[20..40], pkt, opts, &off);
                (40 + opts, 40 + opts + payload)
            }
            None => {
                let (sport, dport) = ports(pkt);
                let udp_len = pkt.size.saturating_sub(20).clamp(8, 65_515);
                hdr[20..22].copy_from_slice(&sport.to_be_bytes());
                hdr[22..24].copy_from_slice(&dport.to_be_bytes());
                hdr[24..26].copy_from_slice(&(udp_len as u16).to_be_bytes());
                (28u32, pkt.size.max(28))
            }
        };
        let total_len = total_len.min(65_535);
        ipv4_header(
            &mut hdr[..20],
            pkt,
            total_len as u16,
            self.ip_id,
            shape.is_some(),
        );
        let file = &mut self.files[f];
        let sec = (now / 1_000_000_000) as u32;
        let nsec = (now % 1_000_000_000) as u32;
        file.bytes.extend_from_slice(&sec.to_le_bytes());
        file.bytes.extend_from_slice(&nsec.to_le_bytes());
        file.bytes.extend_from_slice(&caplen.to_le_bytes());
        file.bytes.extend_from_slice(&total_len.to_le_bytes());
        file.bytes.extend_from_slice(&hdr[..caplen as usize]);
        file.packets += 1;
    }
}

/// The flow's (source, destination) ports in the data direction, swapped for ACKs.
fn ports(pkt: &Packet) -> (u16, u16) {
    let client = 1024 + (pkt.flow % 64_000) as u16;
    let server = 5001;
    match pkt.kind {
        PacketKind::Data => (client, server),
        PacketKind::Ack => (server, client),
    }
}

/// Node `n`'s address, 10.0.0.0 + n + 1.
fn address(node: u32) -> [u8; 4] {
    (0x0a00_0000u32.wrapping_add((node.wrapping_add(1)) & 0x00ff_ffff)).to_be_bytes()
}

fn ipv4_header(h: &mut [u8], pkt: &Packet, total_len: u16, id: u16, tcp: bool) {
    let ecn = match pkt.ecn {
        Ecn::NotEct => 0,
        Ecn::Ect1 => 1,
        Ecn::Ect0 => 2,
        Ecn::Ce => 3,
    };
    h[0] = 0x45;
    h[1] = (pkt.priority & 0x3f) << 2 | ecn;
    h[2..4].copy_from_slice(&total_len.to_be_bytes());
    h[4..6].copy_from_slice(&id.to_be_bytes());
    h[6] = 0x40; // don't fragment
    h[8] = 64;
    h[9] = if tcp { 6 } else { 17 };
    h[12..16].copy_from_slice(&address(pkt.src));
    h[16..20].copy_from_slice(&address(pkt.dst));
    let sum = checksum(h);
    h[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// The Internet checksum (RFC 1071) of `data` (checksum field zero).
fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Writes the segment's options into `h` (at most 40 bytes); returns their length.
fn tcp_options(
    h: &mut [u8],
    pkt: &Packet,
    s: &TcpShape,
    sack: Option<SackBlocks>,
    now: SimTime,
    off: &dyn Fn(u64) -> u64,
) -> u32 {
    const NOP: u8 = 1;
    let mut n = 0;
    if s.timestamps {
        let ms = |t: SimTime| ((t / 1_000_000) & 0xffff_ffff) as u32;
        let (val, ecr) = match pkt.kind {
            PacketKind::Data => (ms(pkt.ts), 0),
            PacketKind::Ack => (ms(now), ms(pkt.ts)),
        };
        h[..4].copy_from_slice(&[NOP, NOP, 8, 10]);
        h[4..8].copy_from_slice(&val.to_be_bytes());
        h[8..12].copy_from_slice(&ecr.to_be_bytes());
        n = 12;
    }
    if let Some(b) = sack.filter(|b| b.n > 0) {
        let edge = |seg: u64| (off(seg).wrapping_add(1) & 0xffff_ffff) as u32;
        let blocks = &b.blocks()[..b.blocks().len().min((40 - n - 4) / 8)];
        h[n..n + 4].copy_from_slice(&[NOP, NOP, 5, 2 + 8 * blocks.len() as u8]);
        n += 4;
        for &(l, r) in blocks {
            h[n..n + 4].copy_from_slice(&edge(l).to_be_bytes());
            h[n + 4..n + 8].copy_from_slice(&edge(r).to_be_bytes());
            n += 8;
        }
    }
    n as u32
}

fn tcp_header(h: &mut [u8], pkt: &Packet, opts: u32, off: &dyn Fn(u64) -> u64) {
    const SYN: u8 = 0x02;
    const PSH: u8 = 0x08;
    const ACK: u8 = 0x10;
    const ECE: u8 = 0x40;
    const CWR: u8 = 0x80;
    let (sport, dport) = ports(pkt);
    let offset = |seg: u64| (off(seg).wrapping_add(1) & 0xffff_ffff) as u32;
    let syn = pkt.flags & flags::SYN != 0;
    let (seq, ack, mut fl) = match (pkt.kind, syn) {
        (PacketKind::Data, true) => (0, 0, SYN),
        (PacketKind::Data, false) => (offset(pkt.seq), 1, ACK),
        (PacketKind::Ack, true) => (0, 1, SYN | ACK),
        (PacketKind::Ack, false) => (1, offset(pkt.ack), ACK),
    };
    if pkt.flags & flags::ECE != 0 {
        fl |= ECE;
    }
    if pkt.flags & flags::CWR != 0 {
        fl |= CWR;
    }
    if pkt.flags & flags::PSH != 0 {
        fl |= PSH;
    }
    // AccECN's AE (RFC 9768: the former NS bit, bit 8 of the flags, in the offset byte).
    let ae = u8::from(pkt.flags & flags::AE != 0);
    h[0..2].copy_from_slice(&sport.to_be_bytes());
    h[2..4].copy_from_slice(&dport.to_be_bytes());
    h[4..8].copy_from_slice(&seq.to_be_bytes());
    h[8..12].copy_from_slice(&ack.to_be_bytes());
    h[12] = (((5 + opts / 4) as u8) << 4) | ae;
    h[13] = fl;
    h[14..16].copy_from_slice(&65_535u16.to_be_bytes());
}

/// Checks a capture name component: only `A-Z a-z 0-9 . _ -`, not starting with a dot, may
/// reach a file name.
pub fn file_safe(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_checksum_matches_the_rfc_1071_example_header() {
        // A well-known sample IPv4 header whose checksum field is 0xb861.
        let h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(checksum(&h), 0xb861);
    }

    #[test]
    fn records_have_the_pcap_layout() {
        let mut c = Capture::new(2, vec![("x.pcap".into(), vec![1])], vec![None], 10);
        let pkt = Packet {
            size: 1000,
            ecn: Ecn::Ce,
            ..Default::default()
        };
        c.on_transmit(0, &pkt, 5, || None); // not captured
        c.on_transmit(1, &pkt, 1_500_000_123, || None);
        let b = &c.files[0].bytes;
        assert_eq!(b.len(), 24 + 16 + 28);
        assert_eq!(&b[24..28], &1u32.to_le_bytes());
        assert_eq!(&b[28..32], &500_000_123u32.to_le_bytes());
        assert_eq!(&b[32..36], &28u32.to_le_bytes());
        assert_eq!(&b[36..40], &1000u32.to_le_bytes());
        assert_eq!(b[40], 0x45);
        assert_eq!(b[41] & 3, 3); // CE
        assert_eq!(b[40 + 9], 17);
    }

    #[test]
    fn tcp_options_follow_rfc7323_and_rfc2018_layouts() {
        // An ACK of a flow with timestamps and two SACK blocks, mss 1000: segments [3, 5) and
        // [7, 8) are bytes 3001..5001 and 7001..8001 (sequence numbers start at 1).
        let shape = TcpShape {
            mss: 1000,
            header: 40,
            total_bytes: None,
            timestamps: true,
        };
        let mut c = Capture::new(1, vec![("x.pcap".into(), vec![0])], vec![Some(shape)], 10);
        let pkt = Packet {
            kind: PacketKind::Ack,
            ack: 2,
            ts: 7_000_000, // echoed TSval: 7 ms
            size: 40 + 12 + 20,
            ..Default::default()
        };
        let mut b = SackBlocks::default();
        b.b[0] = (3, 5);
        b.b[1] = (7, 8);
        b.n = 2;
        c.on_transmit(0, &pkt, 9_000_000, || Some(b));
        let r = &c.files[0].bytes[24..];
        // 12 timestamp bytes + 4 + 2·8 SACK bytes = 32 option bytes: caplen 72, data offset 13.
        assert_eq!(&r[8..12], &72u32.to_le_bytes());
        let tcp = &r[16 + 20..];
        assert_eq!(tcp[12] >> 4, 13);
        // NOP NOP kind 8 length 10, TSval 9 (now, ms), TSecr 7.
        assert_eq!(&tcp[20..24], &[1, 1, 8, 10]);
        assert_eq!(&tcp[24..28], &9u32.to_be_bytes());
        assert_eq!(&tcp[28..32], &7u32.to_be_bytes());
        // NOP NOP kind 5 length 2 + 16, then the byte edges.
        assert_eq!(&tcp[32..36], &[1, 1, 5, 18]);
        assert_eq!(&tcp[36..40], &3001u32.to_be_bytes());
        assert_eq!(&tcp[40..44], &5001u32.to_be_bytes());
        assert_eq!(&tcp[44..48], &7001u32.to_be_bytes());
        assert_eq!(&tcp[48..52], &8001u32.to_be_bytes());
    }

    #[test]
    fn file_names_are_restricted() {
        assert!(file_safe("r1_to_r2.pcap"));
        assert!(!file_safe("../x"));
        assert!(!file_safe(".hidden"));
        assert!(!file_safe("a/b"));
        assert!(!file_safe("\u{1b}[31m"));
        assert!(!file_safe(""));
    }
}
