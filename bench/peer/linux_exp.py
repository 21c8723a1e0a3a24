"""Experiments behind the causes of the Linux peer's misses (bench/peer/README.md, "The misses and
what is known of each"): the aqmlab side of one case changed in one respect, against the recorded
Linux runs in measured/ (means over Linux runs 1-3 and aqmlab seeds 1-5, flows starting at
Linux's data starts, as `run.py --peer linux --cached`).

    python bench/peer/linux_exp.py CASE [--key 'cc = { kind = "dctcp", cwr = false }'] ...
    python bench/peer/linux_exp.py CASE --ack-jitter MBPS
    python bench/peer/linux_exp.py CASE --shaper htb [--burst BYTES] [--short-rtt] [--slow-reverse]
    python bench/peer/linux_exp.py --fq-pie-collision
    python bench/peer/linux_exp.py --all [options above]      # every core case: the agreement table

--key: a `key = value` line put into every TCP flow (replacing the profile's choice).
--shaper htb (the default, as run.py --peer linux since issue 29's session 5): the bottleneck
  rendered as the guest's shaper: a 10-Gb/s link with an `htb` at the rate (burst rate x 1 ms +
  one packet, or --burst) and the case's discipline as its class's child, so no packet is
  serialized at the rate on the link itself; utilization and queueing delay in frames at the
  case's rate, as the guest counts them. --shaper link: the plain link serializing at the rate
  (the rendering of every experiment recorded before session 5). The htb rendering keeps the
  case's base RTT (the segment's transmission time the plain link pays is added back to the
  receiver's access delay, since session 6); --short-rtt leaves it out (session 5's rendering,
  whose base RTT was 0.61 ms short at 20 Mb/s); --slow-reverse serializes the ACK path at the rate again (an htb on it), as the plain
  rendering's full-duplex bottleneck does.
--rtt-spread MS: the flows' base RTTs spread evenly over [RTT - MS/2, RTT + MS/2] on the aqmlab
  side (a test of synchronization between identical flows).
--ack-jitter MBPS: Poisson 1500-B UDP packets at MBPS from the receiver's side on the aqmlab side
  (ACKs queued behind one leave back to back: a test of sensitivity to uneven ACK spacing; the
  UDP flow counts in goodput and Jain, so compare the forward queue and utilization only).
--per-flow: per flow, Linux's mean `ss` srtt, cwnd and retransmitted segments over the window
  (runs 1-3, from the raw guest records in results/linux_raw/) beside aqmlab's mean RTT and
  retransmissions (seeds 1-5): whose queue a difference in queueing delay is, in an FQ
  discipline (a flow's srtt less the base RTT is about its own queue's sojourn); and the
  percentiles of ssthresh at 1-s samples over all flows on both sides (how deep the flows'
  reductions left them).
--fq-pie-collision: cubic5-fq_pie with flows 2 and 3 in one flow queue (classify = "priority",
  priorities 1, 2, 2, 3, 4) against five queues, beside Linux runs 1-5.
Standard library only; the aqmlab side runs in a child interpreter that imports aqmlab.
"""
import argparse
import json
import re
import statistics
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import linuxpeer as lp  # noqa: E402

METRICS = ("utilization_pct", "queue_delay_ms", "drop_fraction", "mark_fraction", "goodput_total_mbps",
           "jain_index", "bbr_share", "ping_rtt_ms", "mean_srtt_ms", "tcp_retransmissions")


def linux_runs(case, runs=(1, 2, 3)):
    out = []
    for r in runs:
        x = lp.run_linux(case, r, cached=True)
        if x:
            out.append({**x, "run": r})
    return out


def linux_per_flow(case, run) -> list[dict] | None:
    """Per flow of Linux run `run`: mean srtt [ms] and cwnd [segments] of its data connection's
    `ss` samples in the window, and the segments it retransmitted there (None without raw records)."""
    raw = lp.RESULTS / "linux_raw" / (lp.cache_name(case, run).replace(".json", ".tar.gz"))
    if not raw.exists():
        return None
    with tarfile.open(raw) as tf:
        text = {m.name: tf.extractfile(m).read().decode(errors="replace") for m in tf.getmembers() if m.isfile()}
    t0 = float(text["t0"].split()[0])
    w0, w1 = t0 + case.warmup, t0 + case.duration
    ss = [s for s in lp.parse_ss(text["ss.txt"]) if w0 <= s[0] <= w1]
    out = []
    for i, (cc, _) in enumerate(case.flow_list()):
        port = f":{lp.BASE_PORT + i}"
        conns = [max((d for (loc, peer), d in s[2].items() if peer.endswith(port)),
                     key=lambda d: d.get("bytes_acked", 0), default={}) for s in ss]
        conns = [d for d in conns if "rtt_ms" in d]
        out.append({"cc": cc, "srtt_ms": statistics.mean(d["rtt_ms"] for d in conns),
                    "ssthresh": [d["ssthresh"] for d in conns if "ssthresh" in d],
                    "cwnd": statistics.mean(d.get("cwnd", 0) for d in conns),
                    "retx": conns[-1]["retrans_total"] - conns[0]["retrans_total"]})
    return out


def per_flow(case, linux, res):
    for i, (cc, rtt) in enumerate(case.flow_list()):
        lx = [f[i] for f in (linux_per_flow(case, r["run"]) for r in linux) if f]
        a_rtt = [r["srtt_per_flow_ms"][i] for r in res]
        a_rx = [r["retx_per_flow"][i] for r in res]
        print(f"  flow {i + 1} {cc}: srtt linux {statistics.mean(f['srtt_ms'] for f in lx):.2f} ms "
              f"(runs {[round(f['srtt_ms'], 2) for f in lx]}) aqmlab {statistics.mean(a_rtt):.2f} ms "
              f"(seeds {[round(x, 2) for x in a_rtt]}); retransmitted segments linux "
              f"{statistics.mean(f['retx'] for f in lx):.0f} aqmlab {statistics.mean(a_rx):.0f}; "
              f"linux mean cwnd {statistics.mean(f['cwnd'] for f in lx):.1f}")
    # ssthresh at 1-s samples, every flow pooled: how deep the reductions left the windows
    lx = [x for r in linux for f in (linux_per_flow(case, r["run"]) or []) for x in f["ssthresh"]]
    aq = [x for r in res for x in r.get("ssthresh_1s", [])]
    if lx and aq:
        def q(v):
            d = statistics.quantiles(v, n=10)
            return f"p10 {d[0]:.1f} median {statistics.median(v):.1f} p90 {d[-1]:.1f}"
        print(f"  ssthresh (1-s samples, all flows): linux {q(lx)}; aqmlab {q(aq)}")


def child(text: str, spec: dict) -> dict:
    p = subprocess.run([sys.executable, "-c", lp.AQMLAB_CHILD], input=json.dumps({**spec, "scenario": text}),
                       capture_output=True, text=True)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode or not lines:
        raise SystemExit(f"aqmlab failed: {p.stderr[-2000:]}")
    return json.loads(lines[-1])


def render(case, seed, starts, a) -> tuple[str, dict]:
    """The case's scenario for `seed`, changed as the options say, and the child's spec."""
    text = lp.aqmlab_scenario(case, seed, starts)
    spec = {"window_s": case.duration - case.warmup}
    if getattr(a, "rtt_spread", 0):
        # flow i's base RTT moved by (i / (n - 1) - 1/2) x spread: a desynchronizing experiment
        lines = text.splitlines()
        j = next(k for k, l in enumerate(lines) if l.startswith("right_access = "))
        ds = re.findall(r'delay = "([0-9.]+)us"', lines[j])
        n = len(ds)
        it = iter(range(n))
        lines[j] = re.sub(r'delay = "([0-9.]+)us"', lambda m: f'delay = "{float(m.group(1)) + ((next(it) / max(n - 1, 1)) - 0.5) * a.rtt_spread * 1e3 / 2:.3f}us"', lines[j])
        text = "\n".join(lines) + "\n"
    if getattr(a, "ack_jitter", 0):
        # ACK compression: full-size UDP packets from the receiver's side at `ack_jitter` Mb/s
        # (Poisson arrivals) share the ACK path's serialization, so ACKs queued behind one leave
        # back to back (a test of BBR's delivery-rate samples against uneven ACK timing)
        text += (f'\n[[flows]]\nkind = "poisson"\nname = "ackjitter"\nfrom = "d1"\nto = "s1"\n'
                 f'rate = "{a.ack_jitter * 1e6:.0f}bps"\nsize = "1500B"\n')
    if a.shaper == "htb" and not case.qdisc.shapes:
        text = lp.htb_rendering(text, case, a.burst, a.slow_reverse, a.short_rtt)
        spec["shaper_bps"] = case.rate_mbps * 1e6  # frames at the guest's rate
    spec["ping_return_s"] = lp.ping_return_s(case, text)
    return text, spec


def show(name, linux, res):
    print(name)
    for k in METRICS:
        a = [r[k] for r in res if r.get(k) is not None]
        l = [r[k] for r in linux if r.get(k) is not None]
        if a and l:
            print(f"  {k:20s} linux {statistics.mean(l):<10.5g} aqmlab {statistics.mean(a):<10.5g} "
                  f"seeds {[round(x, 4) for x in a]}")


def fq_pie_collision():
    case = next(c for c in lp._cases() if c.name == "cubic5-fq_pie-20M-20ms")
    linux = linux_runs(case, (1, 2, 3, 4, 5))
    a = argparse.Namespace(shaper="htb", burst=None, slow_reverse=False, short_rtt=False)
    for prios in ([1, 2, 3, 4, 5], [1, 2, 2, 3, 4]):
        res = []
        for seed in (1, 2, 3, 4, 5):
            text, spec = render(case, seed, lp.aqmlab_starts(case, seed, linux), a)
            text = text.replace('kind = "fq_pie"', 'kind = "fq_pie", classify = "priority"', 1)
            for i, p in enumerate(prios, start=1):
                text = text.replace(f'name = "cubic{i}"\n', f'name = "cubic{i}"\npriority = {p}\n', 1)
            res.append(child(text, spec))
        print(f"priorities {prios}: Jain {[round(r['jain_index'], 4) for r in res]}, "
              f"goodputs seed 1 {[round(x, 2) for x in res[0]['goodput_per_flow_mbps']]}")
    print(f"Linux runs 1-5: Jain {[round(r['jain_index'], 4) for r in linux]}; run 3 goodputs "
          f"{[round(x, 2) for x in linux[2]['goodput_per_flow_mbps']]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", nargs="?")
    ap.add_argument("--key", action="append", default=[], help="a `key = value` line for every TCP flow")
    ap.add_argument("--shaper", choices=("link", "htb"), default="htb",
                    help="htb (default, as run.py --peer linux since issue 29's session 5) or link (the plain link)")
    ap.add_argument("--burst", type=float, default=None, help="--shaper htb: bucket depth in bytes")
    ap.add_argument("--short-rtt", action="store_true",
                    help="--shaper htb: base RTT one segment's transmission time short (session 5's rendering)")
    ap.add_argument("--slow-reverse", action="store_true")
    ap.add_argument("--rtt-spread", type=float, default=0.0,
                    help="ms: spread the flows' base RTTs evenly over ± half of this (aqmlab side only)")
    ap.add_argument("--ack-jitter", type=float, default=0.0,
                    help="Mb/s of 1500-B UDP packets on the ACK path (aqmlab side only)")
    ap.add_argument("--fq-pie-collision", action="store_true")
    ap.add_argument("--per-flow", action="store_true", help="per-flow srtt and retransmissions on both sides")
    ap.add_argument("--all", action="store_true", help="every core case so changed: the agreement table")
    a = ap.parse_args()
    if a.fq_pie_collision:
        return fq_pie_collision()
    if a.all:
        rows = []
        for case in (c for c in lp._cases() if c.group == "core"):
            case = replace(case, aqmlab_flow_keys=tuple(a.key))
            linux = linux_runs(case)
            print(f"  aqmlab: {case.name}", file=sys.stderr, flush=True)
            rows.append((case, linux, [child(*render(case, s, lp.aqmlab_starts(case, s, linux), a))
                                       for s in (1, 2, 3, 4, 5)]))
        print(lp.compare(rows)[0])
        print(lp.markdown(rows))
        return None
    if not a.case:
        ap.error("name a case (python bench/peer/run.py --peer linux --list shows them)")
    case = next((c for c in lp._cases() if c.name == a.case), None)
    if case is None:
        ap.error(f"unknown case {a.case!r}")
    case = replace(case, aqmlab_flow_keys=tuple(a.key))
    linux = linux_runs(case)
    res = [child(*render(case, s, lp.aqmlab_starts(case, s, linux), a)) for s in (1, 2, 3, 4, 5)]
    show(f"{a.case} {' '.join(sys.argv[2:])}", linux, res)
    if a.per_flow:
        per_flow(case, linux, res)


if __name__ == "__main__":
    main()
