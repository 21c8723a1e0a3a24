"""The receivers' side of a Linux peer run, second by second (issue 30, docs/aqm/cake.md
"Session 7"): from the guest's `ss -tinm` samples of the receiving namespace (`ss_rcv.txt`,
recorded since session 7 by bench/peer/linux/guest/init), each data connection's segments in
(data) and out (ACKs) per second, their ratio, the growth of `rcv_ssthresh` in segments of
1448 B, the ratio that growth predicts (one ACK per two segments, plus one more for each
segment that grew the window by 2 MSS: Linux 6.1 `tcp_grow_window` sets quick-ACK mode), the
receiver's RTT estimate (`rcv_rtt`) and its receive buffer (`skmem` rb, `tcp_rcv_space_adjust`).

    python bench/peer/cake_rcv.py diag-cake-noackfilter-cubic2-20M-40ms-spread --run 4

Reads results/linux_raw/ (kept by the run: `python bench/peer/run.py --peer linux -s CASE
--runs N --peer-only`). Standard library only.
"""

import argparse
import re
import sys
import tarfile
from pathlib import Path

RAW = Path(__file__).resolve().parent / "results" / "linux_raw"
MSS = 1448


def samples(files: dict[str, str]) -> list[tuple[float, dict[str, dict]]]:
    """[(t since the case's t0, {peer address: counters})] of the data connections."""
    t0 = float(files["t0"].split()[0])
    out: list[tuple[float, dict[str, dict]]] = []
    cur = None
    for line in files["ss_rcv.txt"].splitlines():
        if line.startswith("@"):
            out.append((float(line[1:]) - t0, {}))
        elif line.startswith("ESTAB"):
            cur = line.split()[4]
        elif out and cur:
            d: dict = {}
            for k in ("segs_in", "segs_out", "rcv_ssthresh"):
                m = re.search(r"\b%s:(\d+)" % k, line)
                d[k] = int(m.group(1)) if m else 0
            m = re.search(r"rcv_rtt:([\d.]+)", line)
            d["rcv_rtt"] = float(m.group(1)) if m else 0.0
            m = re.search(r"skmem:\(r\d+,rb(\d+)", line)
            d["rb"] = int(m.group(1)) if m else 0
            if d["segs_in"] > 1000:
                out[-1][1][cur] = d
            cur = None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case")
    ap.add_argument("--run", type=int, default=4)
    a = ap.parse_args()
    path = RAW / f"linux_{a.case}_run{a.run}_40s_w10.tar.gz"
    if not path.exists():
        print(f"no raw record {path}", file=sys.stderr)
        return 1
    with tarfile.open(path) as tf:
        files = {m.name.split("/")[-1]: tf.extractfile(m).read().decode(errors="replace")
                 for m in tf.getmembers() if m.isfile()}
    if "ss_rcv.txt" not in files:
        print("this run has no receiver samples (recorded before session 7)", file=sys.stderr)
        return 1
    ss = samples(files)
    peers = sorted({p for _, s in ss for p in s})
    print(f"{a.case} run {a.run}: per data connection ({', '.join(peers)}):")
    print("    t |  in  out  ACK/seg  rcv_ssthresh+ [seg]  predicted  rcv_rtt [ms]  rb [MB] | ...")
    for (_, x), (t, y) in zip(ss, ss[1:]):
        row = [f"{t:5.1f}"]
        for p in peers:
            if p in x and p in y:
                di = y[p]["segs_in"] - x[p]["segs_in"]
                do = y[p]["segs_out"] - x[p]["segs_out"]
                dg = (y[p]["rcv_ssthresh"] - x[p]["rcv_ssthresh"]) / MSS
                pred = (0.5 * di + max(dg, 0.0) / 4) / di if di else 0.0
                row.append(f"{di:4d} {do:4d} {do / di if di else 0:6.3f} {dg:8.0f} {pred:9.3f}"
                           f" {y[p]['rcv_rtt']:9.1f} {y[p]['rb'] / 1e6:7.1f}")
        print(" | ".join(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
