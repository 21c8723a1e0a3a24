"""Slow-start exits and flow starts: the experiments behind the Jain index of many CUBIC flows
through a deep pfifo (bench/peer/README.md, the `cubic20-pfifo1000-50M-80ms` item of "The misses
and what is known of each"). Linux side: the recorded runs (measured/ and the raw guest records in
results/linux_raw/); aqmlab side: the case's scenario as `run.py --peer linux --cached` renders it,
changed as the options say.

    python bench/peer/linux_exits.py [CASE] --exits        # per flow: data start, slow-start exit, goodput
    python bench/peer/linux_exits.py [CASE] --acks         # Linux: ACKs per delivered segment, first `ss` samples
    python bench/peer/linux_exits.py [CASE] --start-jitter 4 --draws 16 [--recycle-starts] [--key ...]
    python bench/peer/linux_exits.py [CASE] --linux-exits [--start-jitter 4 --draws 6]
    python bench/peer/linux_exits.py [CASE] --ack-stalls 5,45 --start-jitter 4 --draws 16 --recycle-starts
    python bench/peer/linux_exits.py [CASE] --windows      # Jain within 3-10, 10-20, 20-30, 30-40 s
    python bench/peer/linux_exits.py [CASE] --count-big [--big 150] [--start-jitter 4 --draws 16 --recycle-starts]

CASE defaults to cubic20-pfifo1000-50M-80ms.
--exits: Linux runs 1-3 and aqmlab seeds 1-3 side by side: each flow's data start, its slow-start
  exit window (the first ssthresh: Linux's first `ss` sample with one, aqmlab's `flow_series`) and
  its goodput over the window.
--acks: for each Linux run, each data connection's `segs_in` (ACKs received) against `delivered`
  in its first `ss` samples (1 ACK per segment gives 1.0, delayed ACKs every second segment 0.5),
  and how busy the guest's CPU was between the first `ss` samples (/proc/stat).
--start-jitter MS: each aqmlab flow starts at its recorded Linux data start plus a uniform draw in
  [-MS, +MS] (the guest records a data start as an `ss` sample's time less `busy`, whose unit is
  a 4-ms jiffy at HZ = 250, so flows recorded at the same instant did not start together);
  --draws N such draws per seed, the Jain index averaged over them. --recycle-starts: seeds
  without a Linux run (4, 5) take run ((seed - 1) mod 3) + 1's data starts instead of the drawn
  offsets mapped onto the recorded span (run.py's rule for them).
--linux-exits: each aqmlab flow's `initial_ssthresh` set to its Linux run's exit window (seeds 1-3
  against runs 1-3): whether the exits decide the Jain index.
--windows: the Jain index within 3-10, 10-20, 20-30 and 30-40 s on both sides (Linux runs 1-3 from
  `ss` bytes_acked, aqmlab seeds 1-5 from `flow_series`): when the unfairness is set.
--count-big: how many flows leave slow start at or above --big segments (default 150), in each
  Linux run and per aqmlab seed (averaged over the start draws).
--ack-stalls ON_MS,OFF_MS: an on-off UDP source on the ACK path at twice the link rate until 2.5 s
  (exponential on and off periods of these means), so ACKs wait up to an on period in the first
  seconds, as they might behind a busy guest CPU: a sensitivity test of the slow-start exits (the
  UDP flow is left out of goodput and Jain; it shares only the reverse direction).
--key: a `key = value` line put into every TCP flow (as linux_exp.py --key).
Standard library only; aqmlab runs in a child interpreter that imports it.
"""
import argparse
import json
import random
import re
import statistics
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import linuxpeer as lp  # noqa: E402

DEFAULT_CASE = "cubic20-pfifo1000-50M-80ms"

# The child: one scenario in, per-flow goodput [Mb/s] and first finite ssthresh [segments] out.
CHILD = r'''
import json, sys, warnings
warnings.filterwarnings("ignore")
try:
    import tomllib
except ModuleNotFoundError:
    import tomli as tomllib
import aqmlab
res = aqmlab.run(tomllib.loads(sys.stdin.read()))
flows = sorted((n for n, f in res.summary["flows"].items() if f.get("kind") == "tcp"),
               key=lambda n: int("".join(c for c in n if c.isdigit()) or 0))
fs = res.tables["flow_series"]
exits = []
for n in flows:
    d = fs[(fs.flow == n) & (fs.ssthresh_pkts < 1e9)]
    exits.append(float(d.ssthresh_pkts.iloc[0]) if len(d) else None)
# each flow's delivered bytes at whole seconds (per-window Jain)
cum = [[float(v) for v in fs[(fs.flow == n) & ((fs.time_s * 10).round() % 10 == 0)].sort_values("time_s").delivered_cum_bytes]
       for n in flows]
secs = [float(t) for t in sorted(set(fs[(fs.time_s * 10).round() % 10 == 0].time_s))]
print(json.dumps({"goodput": [res.summary["flows"][n]["goodput_bps"] / 1e6 for n in flows], "exits": exits,
                  "cum_bytes": cum, "secs": secs}))
'''


def jain(x: list[float]) -> float:
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x))


def parse_ss_fields(text: str) -> list[tuple[float, dict[str, dict]]]:
    """`@ t` + `ss -tinH` records -> [(t, {peer: {field: int}})] with bytes_acked, delivered,
    segs_in, cwnd, ssthresh where present (the data connection to a port is the one with the
    most bytes acknowledged)."""
    out: list[tuple[float, dict[str, dict]]] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("@ "):
            out.append((float(line[2:]), {}))
        elif out and re.match(r"\s*ESTAB", line) and i + 1 < len(lines):
            peer = line.split()[4]
            d = {k: int(m.group(1)) for k in ("bytes_acked", "delivered", "segs_in", "cwnd", "ssthresh")
                 if (m := re.search(rf"\b{k}:(\d+)", lines[i + 1]))}
            if d.get("bytes_acked", 0) >= out[-1][1].get(peer, {}).get("bytes_acked", -1):
                out[-1][1][peer] = d
    return out


def linux_flows(case, run: int) -> list[list[tuple[float, dict]]] | None:
    """Per flow of Linux run `run`: its data connection's samples [(t since the experiment's
    start, fields)], or None without raw records."""
    raw = lp.RESULTS / "linux_raw" / lp.cache_name(case, run).replace(".json", ".tar.gz")
    if not raw.exists():
        return None
    with tarfile.open(raw) as tf:
        text = {m.name: tf.extractfile(m).read().decode(errors="replace") for m in tf.getmembers() if m.isfile()}
    t0 = float(text["t0"].split()[0])
    samples = parse_ss_fields(text["ss.txt"])
    out = []
    for i in range(len(case.flow_list())):
        port = f":{lp.BASE_PORT + i}"
        out.append([(round(t - t0, 3), d) for t, conns in samples for peer, d in conns.items()
                    if peer.endswith(port) and d.get("bytes_acked", 0) > 1000])
    return out


def first_exit(samples: list[tuple[float, dict]]) -> int | None:
    return next((d["ssthresh"] for _, d in samples if "ssthresh" in d), None)


def aqmlab_run(case, seed: int, starts: list[float]) -> dict:
    """Per-flow goodput and slow-start exit of aqmlab's run of `case` for `seed`."""
    text = lp.aqmlab_scenario(case, seed, starts)
    p = subprocess.run([sys.executable, "-c", CHILD], input=text, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"aqmlab failed: {p.stderr[-2000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def stall_flow(case, stalls: str) -> str:
    """An on-off UDP source on the ACK path (receiver side to sender side, through the
    bottleneck's reverse direction) at twice the link rate until 2.5 s: ACKs queued behind an on
    period wait up to its length (`stalls` = "ON_MS,OFF_MS", the periods' means). Named "pong" so
    that run.py's child leaves it out of goodput and Jain, as it does the ping replies."""
    on, off = (float(x) for x in stalls.split(","))
    n = len(case.flow_list())
    rate = 2 * case.rate_mbps * 1e6 * lp.IP_PKT / lp.FRAME
    return (f'\n[[flows]]\nkind = "onoff"\nname = "pong"\nfrom = "d{n}"\nto = "s{n}"\nrate = "{rate:.0f}bps"\n'
            f'size = "1500B"\non_time = "{on:g}ms"\noff_time = "{off:g}ms"\nstop = "2.5s"\n')


def aqmlab_metrics(case, seed: int, starts: list[float], exits: list[int] | None = None,
                   stalls: str | None = None) -> dict:
    """run.py's aqmlab side (`linuxpeer.run_aqmlab`: every metric of the table) for flows starting
    at `starts`, each flow's initial_ssthresh set to `exits` when given, with ACK-path stalls in
    the first 2.5 s when `stalls` is given."""
    if exits is None and stalls is None:
        return lp.run_aqmlab(case, seed, starts=starts)
    render = lp.aqmlab_scenario

    def with_exits(c, s, st):
        text = render(c, s, st)
        if exits is not None:
            it = iter(exits)
            text = re.sub(r'window_bytes = "64MB"',
                          lambda m: f'window = {{ receive_bytes = "64MB", initial_ssthresh = {next(it)} }}', text)
        return text + (stall_flow(c, stalls) if stalls else "")

    lp.aqmlab_scenario = with_exits  # run_aqmlab renders through the module's function
    try:
        return lp.run_aqmlab(case, seed, starts=starts)
    finally:
        lp.aqmlab_scenario = render


def jittered(starts: list[float], ms: float, rng: random.Random) -> list[float]:
    """Each start moved by a uniform draw in [-ms, +ms] milliseconds (never before 1 ms)."""
    return [max(0.001, round(t + rng.uniform(-ms, ms) / 1e3, 6)) for t in starts]


def base_starts(case, seed: int, linux: list[dict], recycle: bool) -> list[float]:
    runs = [r["run"] for r in linux if r.get("data_starts_s")]
    if recycle and seed not in runs and runs:
        seed = runs[(seed - 1) % len(runs)]
    return lp.aqmlab_starts(case, seed, linux)


def show_exits(case, linux):
    fmt = lambda xs, f: " ".join(f"{x:{f}}" if x is not None else "    -" for x in xs)  # noqa: E731
    for r in linux:
        if r["run"] > 3:
            continue
        flows = linux_flows(case, r["run"])
        if flows is None:
            print(f"linux run {r['run']}: no raw records in {lp.RESULTS / 'linux_raw'}")
            continue
        a = aqmlab_run(case, r["run"], lp.aqmlab_starts(case, r["run"], linux))
        print(f"run/seed {r['run']}: Jain linux {r['jain_index']:.4f} aqmlab {jain(a['goodput']):.4f}")
        print(f"  data start [s]   {fmt(r['data_starts_s'], '5.3f')}")
        print(f"  exit  linux      {fmt([first_exit(f) for f in flows], '5d')}")
        print(f"  exit  aqmlab     {fmt([round(x) if x else None for x in a['exits']], '5d')}")
        print(f"  goodput linux    {fmt(r['goodput_per_flow_mbps'], '5.2f')}")
        print(f"  goodput aqmlab   {fmt(a['goodput'], '5.2f')}")


def count_big(case, linux, a):
    """How many flows leave slow start at or above `a.big` segments: each Linux run, and aqmlab
    per seed over the start draws."""
    for r in linux:
        flows = linux_flows(case, r["run"])
        if flows is not None:
            print(f"linux run {r['run']}: {sum((first_exit(f) or 0) >= a.big for f in flows)} flows exit at >= {a.big:g}")
    for s in (int(x) for x in a.seeds.split(",")):
        base = base_starts(case, s, linux, a.recycle_starts)
        n = []
        for d in range(a.draws):
            starts = jittered(base, a.start_jitter, random.Random(f"{case.name}/{s}/{d}")) if a.start_jitter else base
            n.append(sum((x or 0) >= a.big for x in aqmlab_run(case, s, starts)["exits"]))
        print(f"aqmlab seed {s}: {statistics.mean(n):.2f} flows exit at >= {a.big:g} (draws {n})")


WINDOWS = ((3, 10), (10, 20), (20, 30), (30, 40))


def interp(points: list[tuple[float, float]], t: float) -> float:
    """Linear interpolation in sorted (time, value) points (held at the ends)."""
    if t <= points[0][0]:
        return points[0][1]
    for (t0, v0), (t1, v1) in zip(points, points[1:]):
        if t0 <= t <= t1:
            return v0 + (v1 - v0) * (t - t0) / (t1 - t0) if t1 > t0 else v1
    return points[-1][1]


def show_windows(case, linux, a):
    """The Jain index of the flows' goodputs within 3-10, 10-20, 20-30 and 30-40 s: Linux from
    each data connection's `ss` bytes_acked (1-s samples, interpolated), aqmlab from
    `flow_series`' delivered bytes at whole seconds; means over runs and seeds."""
    rows: dict[str, list[list[float]]] = {"linux": [], "aqmlab": []}
    for r in linux:
        flows = linux_flows(case, r["run"])
        if flows is None:
            continue
        pts = [[(t, d.get("bytes_acked", 0)) for t, d in f] for f in flows]
        rows["linux"].append([jain([interp(p, w1) - interp(p, w0) for p in pts]) for w0, w1 in WINDOWS])
    for s in (int(x) for x in a.seeds.split(",")):
        res = aqmlab_run(case, s, lp.aqmlab_starts(case, s, linux))
        pts = [list(zip(res["secs"], c)) for c in res["cum_bytes"]]
        rows["aqmlab"].append([jain([interp(p, w1) - interp(p, w0) for p in pts]) for w0, w1 in WINDOWS])
    for side, v in rows.items():
        if v:
            print(f"{side:6s} ({len(v)} runs) Jain within " + ", ".join(
                f"{w0}-{w1} s: {statistics.mean(x[i] for x in v):.3f}" for i, (w0, w1) in enumerate(WINDOWS)))


def show_acks(case, linux):
    for r in linux:
        flows = linux_flows(case, r["run"])
        if not flows:
            continue
        raw = lp.RESULTS / "linux_raw" / lp.cache_name(case, r["run"]).replace(".json", ".tar.gz")
        with tarfile.open(raw) as tf:
            text = {m.name: tf.extractfile(m).read().decode(errors="replace") for m in tf.getmembers() if m.isfile()}
        t0 = float(text["t0"].split()[0])
        cpu = [(t - t0, c) for t, c, _ in lp.parse_ss(text["ss.txt"]) if c]
        busy = [f"{a[0]:.1f}-{b[0]:.1f} s {1 - (b[1]['idle'] - a[1]['idle']) / max(1, b[1]['total'] - a[1]['total']):.0%}"
                for a, b in zip(cpu, cpu[1:5])]
        print(f"linux run {r['run']}: guest CPU busy (/proc/stat at the `ss` samples) {', '.join(busy)}")
        print(f"linux run {r['run']}: segs_in / delivered of each data connection at its first three `ss` samples")
        for i, f in enumerate(flows):
            cells = [f"{t:.2f}s {d['segs_in']}/{d['delivered']}={d['segs_in'] / d['delivered']:.2f}"
                     for t, d in f[:3] if d.get("delivered")]
            print(f"  flow {i + 1:2d} exit {first_exit(f)}: " + "; ".join(cells))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", nargs="?", default=DEFAULT_CASE)
    ap.add_argument("--exits", action="store_true", help="per flow: start, exit window, goodput (runs/seeds 1-3)")
    ap.add_argument("--acks", action="store_true", help="Linux: segs_in / delivered in the first ss samples")
    ap.add_argument("--start-jitter", type=float, default=0.0, help="ms: uniform start offsets in [-MS, +MS]")
    ap.add_argument("--draws", type=int, default=1, help="jitter draws per seed")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--recycle-starts", action="store_true", help="seeds 4, 5 take runs 1, 2's data starts")
    ap.add_argument("--linux-exits", action="store_true", help="initial_ssthresh per flow = Linux's exit (seeds 1-3)")
    ap.add_argument("--windows", action="store_true", help="Jain within 3-10, 10-20, 20-30, 30-40 s")
    ap.add_argument("--count-big", action="store_true", help="flows exiting slow start at >= --big segments")
    ap.add_argument("--big", type=float, default=150.0)
    ap.add_argument("--ack-stalls", default=None, help="ON_MS,OFF_MS: on-off UDP on the ACK path until 2.5 s")
    ap.add_argument("--key", action="append", default=[], help="a `key = value` line for every TCP flow")
    a = ap.parse_args()
    case = next((c for c in lp._cases() if c.name == a.case), None)
    if case is None:
        ap.error(f"unknown case {a.case!r}")
    case = replace(case, aqmlab_flow_keys=tuple(a.key))
    linux = [{**x, "run": r} for r in (1, 2, 3) if (x := lp.run_linux(case, r, cached=True))]
    if not linux:
        raise SystemExit(f"no recorded Linux runs of {case.name} in {lp.MEASURED}")
    if a.exits:
        return show_exits(case, linux)
    if a.acks:
        return show_acks(case, linux)
    if a.windows:
        return show_windows(case, linux, a)
    if a.count_big:
        return count_big(case, linux, a)
    seeds = [int(s) for s in a.seeds.split(",")]
    exits = {}
    if a.linux_exits:
        seeds = [s for s in seeds if s in (r["run"] for r in linux)]
        for s in seeds:
            flows = linux_flows(case, s)
            if flows is None:
                raise SystemExit(f"--linux-exits needs the raw records of run {s} in {lp.RESULTS / 'linux_raw'}")
            exits[s] = [first_exit(f) for f in flows]
    per: dict[int, list[float]] = {}
    results = []
    for s in seeds:
        base = base_starts(case, s, linux, a.recycle_starts)
        for d in range(a.draws):
            rng = random.Random(f"{case.name}/{s}/{d}")
            starts = jittered(base, a.start_jitter, rng) if a.start_jitter else base
            res = aqmlab_metrics(case, s, starts, exits.get(s), a.ack_stalls)
            if "unsupported" in res:
                raise SystemExit(res["unsupported"])
            results.append(res)
            per.setdefault(s, []).append(res["jain_index"])
    allj = [x for v in per.values() for x in v]
    lj = [r["jain_index"] for r in linux]
    paired = [x for s, v in per.items() if s in (r["run"] for r in linux) for x in v]
    print(f"{case.name} {' '.join(sys.argv[1:])}")
    print(f"  Jain linux {statistics.mean(lj):.4f} (runs {[round(x, 4) for x in lj]})")
    print(f"  Jain aqmlab {statistics.mean(allj):.4f} over {len(allj)} runs (sd {statistics.pstdev(allj):.3f}); "
          f"per seed {', '.join(f'{s}: {statistics.mean(v):.4f}' for s, v in per.items())}; "
          f"seeds with a Linux run {statistics.mean(paired):.4f}")
    print("  every cell of the case (Linux runs against all the aqmlab runs above):")
    print(lp.markdown([(case, linux, results)]))
    return None


if __name__ == "__main__":
    main()
