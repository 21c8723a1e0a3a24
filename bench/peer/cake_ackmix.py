"""The ACK mix of an aqmlab run of a Linux peer CAKE case, from its packet captures (issue 30,
docs/aqm/cake.md, session 8): per flow, pure ACKs per data segment over a window, and how many
segments each ACK newly acknowledges (0: a duplicate, 1, 2, ...). With `--linux CASE`: the
same ratio on the Linux side from each kept raw guest run's sender `ss` samples (results/linux_raw/):
segs_in / data_segs_out between the samples nearest the window's ends, and how much each data
connection's advertised window (snd_wnd, in 1448-B segments) grew meanwhile.

    python bench/peer/cake_diag.py cake-be-reno5-20M-40ms --seeds 1 --show > s1.toml
    printf '\\n[pcap]\\nlinks = ["s1->r1", "r2->r1"]\\n' >> s1.toml    # data as sent, ACKs as they return
    aqmlab run s1.toml -o out1      # add `ack = { push = true }` to each flow for the option
    python bench/peer/cake_ackmix.py out1 --data s1_to_r1 --from 10 --to 40
    python bench/peer/cake_ackmix.py --linux cake-be-reno5-20M-40ms    # the guest's senders

Counts the data segments in pcap/<data>.pcap and the pure ACKs in pcap/r2_to_r1.pcap (ports as
aqmlab's captures write them: data to 5001, ACKs from it). Standard library only.
"""

import argparse
import collections
import re
import struct
import tarfile
from pathlib import Path

RAW = Path(__file__).resolve().parent / "results" / "linux_raw"


def linux(case: str, t0: float, t1: float) -> None:
    """Each kept raw run of `case`: the senders' ACKs per data segment over [t0, t1]."""
    for path in sorted(RAW.glob(f"linux_{case}_run*_40s_w10.tar.gz")):
        with tarfile.open(path) as tf:
            f = {m.name.split("/")[-1]: tf.extractfile(m).read().decode(errors="replace")
                 for m in tf.getmembers() if m.isfile()}
        start = float(f["t0"].split()[0])
        samples: list[tuple[float, dict]] = []
        cur = None
        for line in f["ss.txt"].splitlines():
            if line.startswith("@"):
                samples.append((float(line[1:]) - start, {}))
            elif line.startswith("ESTAB"):
                cur = line.split()[4]
            elif samples and cur and line.startswith("\t") and "data_segs_out" in line:
                d = {k: int(m.group(1)) for k in ("segs_in", "data_segs_out", "snd_wnd")
                     if (m := re.search(r"\b%s:(\d+)" % k, line))}
                if d.get("data_segs_out", 0) > 1000:
                    samples[-1][1][cur] = d
                cur = None
        a = min(samples, key=lambda s: abs(s[0] - t0))
        b = min(samples, key=lambda s: abs(s[0] - t1))
        ins = outs = 0
        grow = []
        for k, v in b[1].items():
            if k in a[1]:
                ins += v["segs_in"] - a[1][k]["segs_in"]
                outs += v["data_segs_out"] - a[1][k]["data_segs_out"]
                grow.append(round((v["snd_wnd"] - a[1][k]["snd_wnd"]) / 1448))
        print(f"{path.name}: {a[0]:.2f}-{b[0]:.2f} s, {ins} ACKs for {outs} data segments, "
              f"{ins / outs:.4f} per segment; advertised windows grew by {grow} segments")


def packets(path: Path):
    """(time in s, raw packet) of a pcap file (µs or ns time stamps, raw IPv4 or Ethernet)."""
    b = path.read_bytes()
    nano = struct.unpack("<I", b[:4])[0] == 0xA1B23C4D
    off = 24
    while off + 16 <= len(b):
        ts, frac, incl, _ = struct.unpack("<IIII", b[off:off + 16])
        off += 16
        yield ts + frac * (1e-9 if nano else 1e-6), b[off:off + incl]
        off += incl


def tcp(pkt: bytes):
    """(source port, destination port, ack number, payload bytes) of a TCP packet, or None."""
    if pkt[0] >> 4 != 4:
        pkt = pkt[14:]
    ihl = (pkt[0] & 15) * 4
    if pkt[9] != 6:
        return None
    total = struct.unpack(">H", pkt[2:4])[0]
    t = pkt[ihl:]
    sport, dport = struct.unpack(">HH", t[:4])
    ack = struct.unpack(">I", t[8:12])[0]
    return sport, dport, ack, total - ihl - (t[12] >> 4) * 4


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, nargs="?", help="the run's results directory")
    ap.add_argument("--linux", metavar="CASE", help="the guest's side of CASE instead")
    ap.add_argument("--data", default="s1_to_r1", help="capture of the data segments")
    ap.add_argument("--from", dest="t0", type=float, default=10.0)
    ap.add_argument("--to", dest="t1", type=float, default=40.0)
    a = ap.parse_args()
    if a.linux:
        linux(a.linux, a.t0, a.t1)
        return 0
    if a.out is None:
        ap.error("give the run's results directory or --linux CASE")
    data: collections.Counter = collections.Counter()
    acks: collections.Counter = collections.Counter()
    advance: collections.Counter = collections.Counter()
    last: dict[int, int] = {}
    for t, p in packets(a.out / "pcap" / f"{a.data}.pcap"):
        h = tcp(p)
        if a.t0 <= t < a.t1 and h and h[3] > 0:
            data[h[0]] += 1
    mss = 1448
    for t, p in packets(a.out / "pcap" / "r2_to_r1.pcap"):
        h = tcp(p)
        if not (a.t0 <= t < a.t1 and h and h[3] == 0):
            continue
        port, ack = h[1], h[2]
        acks[port] += 1
        if port in last:
            d = (ack - last[port]) & 0xFFFFFFFF
            advance[0 if d == 0 else round(d / mss)] += 1
        last[port] = ack
    nd, na = sum(data.values()), sum(acks.values())
    print(f"{a.out}: {na} ACKs for {nd} data segments, {na / nd:.4f} per segment "
          f"(per flow {' '.join(f'{acks[k] / data[k]:.3f}' for k in sorted(data))})")
    n = sum(advance.values())
    print("  ACKs newly acknowledging 0 / 1 / 2 / more segments: "
          f"{advance[0]} / {advance[1]} / {advance[2]} / {n - advance[0] - advance[1] - advance[2]} "
          f"({100 * advance[0] / n:.1f} / {100 * advance[1] / n:.1f} / {100 * advance[2] / n:.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
