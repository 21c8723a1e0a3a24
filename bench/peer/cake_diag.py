#!/usr/bin/env python3
"""One-side experiments on the Linux peer's CAKE cases (issue 30): the aqmlab side of a case
re-run with one thing changed, against the recorded Linux runs (bench/peer/measured/).

    python bench/peer/cake_diag.py cake-be-reno5-20M-40ms                       # as the peer runs it
    python bench/peer/cake_diag.py cake-be-cubic5-20M-40ms --flow 'cc = { kind = "cubic", variant = "rfc9438" }'
    python bench/peer/cake_diag.py cake-noackfilter-cubic2-20M-40ms --flow 'rto = { min = "1s" }'
    python bench/peer/cake_diag.py cake-ackfilter-cubic2-20M-40ms --reverse 'ack_filter = "off"'
    python bench/peer/cake_diag.py cake-be-reno5-20M-40ms --starts 0.5,0.5,0.5,0.5,0.5
    python bench/peer/cake_diag.py cake-noackfilter-cubic2-20M-40ms --from 30 --decode-raw   # once
    python bench/peer/cake_diag.py cake-noackfilter-cubic2-20M-40ms --from 30
    python bench/peer/cake_diag.py core --flow 'window = { abc_limit = true }'   # a whole group's table

Experiments in aqmlab's TCP code are patches in cake_patches/ (git apply, maturin develop
--release, run, git checkout the files); docs/aqm/cake.md lists each with its numbers.

`--flow 'key = value'` replaces (or adds) a key of every TCP flow; `--cake` / `--reverse`
`key = value` replace a key of the forward / ACK-path CAKE table; `--sub OLD=>NEW` edits the
scenario text. Prints the issue's target cells (Linux mean / aqmlab mean, verdict) and the
diagnostics (retransmissions, timeouts, SRTT, the ACK path). Standard library only; the aqmlab
side runs in a child interpreter as in run.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "linux"))

import linuxpeer as lp  # noqa: E402

EXTRA = [("tcp_retransmissions", "retx"), ("tcp_timeouts", "RTOs"), ("mean_srtt_ms", "srtt [ms]"),
         ("drops", "drops"), ("rev_drop_fraction", "ACK drop"), ("rev_queue_delay_ms", "ACK qdelay [ms]"),
         ("rev_ack_drops", "ACKs filtered"), ("rev_sent_pkts", "ACKs sent")]


def _kv(line: str) -> tuple[str, str]:
    if "=" not in line:
        raise SystemExit(f"expected 'key = value', got {line!r}")
    k, v = (x.strip() for x in line.split("=", 1))
    return k, v


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case")
    ap.add_argument("--flow", action="append", default=[], help="'key = value' for every TCP flow")
    ap.add_argument("--cake", action="append", default=[], help="'key = value' of the forward CAKE table")
    ap.add_argument("--reverse", action="append", default=[], help="'key = value' of the ACK path's table")
    ap.add_argument("--sub", action="append", default=[], help="OLD=>NEW: a text edit of the scenario")
    ap.add_argument("--from", dest="start", type=float, default=None,
                    help="statistics from this time (s) on both sides instead of the case's warmup; the "
                         "Linux side from measured/ files of that window (made by --decode-raw)")
    ap.add_argument("--decode-raw", action="store_true",
                    help="decode the guest runs kept in results/linux_raw/ over the --from window and "
                         "record them in measured/ (linux_<case>_run<r>_<duration>s_w<from>.json)")
    ap.add_argument("--starts", default=None,
                    help="comma-separated flow start times (s) for every seed, instead of the Linux run's")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write the aqmlab results here")
    ap.add_argument("--show", action="store_true", help="print the first seed's scenario and stop")
    args = ap.parse_args()

    if args.case in lp.GROUPS or args.case == "all":
        # A whole group's table (run.py --peer linux --cached --markdown) with the --flow keys
        # on every flow of every case: e.g. a profile change turned off to show the table before it.
        lp.CASES[:] = [replace(c, aqmlab_flow_keys=c.aqmlab_flow_keys + tuple(args.flow)) for c in lp.CASES]
        import run

        sys.argv = ["run.py", "--peer", "linux", "--cached", "--markdown", "-s", args.case, "--seeds", args.seeds,
                    "--jobs", str(args.jobs)]
        return run.main()
    by_name = {c.name: c for c in lp.CASES}
    if args.case not in by_name:
        ap.error(f"unknown case {args.case!r}; cake cases: {', '.join(n for n in by_name if n.startswith('cake'))}")
    case = replace(by_name[args.case], aqmlab_flow_keys=tuple(args.flow))
    if args.start is not None:
        case = replace(case, warmup=args.start)
    if args.decode_raw:
        import tarfile

        base = by_name[args.case]
        for run in (1, 2, 3):
            raw = lp.RESULTS / "linux_raw" / lp.cache_name(base, run).replace(".json", ".tar.gz")
            with tarfile.open(raw) as tf:
                files = {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isfile()}
            res = lp.decode(case, files, run)
            recorded = json.loads((lp.MEASURED / lp.cache_name(base, run)).read_text())
            for k in ("kernel", "image", "starts_s", "data_starts_s", "run_wall_s"):
                if k in recorded:
                    res[k] = recorded[k]
            res["note"] = f"the recorded guest run {lp.cache_name(base, run)} decoded from {case.warmup:g} s"
            out = lp.MEASURED / lp.cache_name(case, run)
            out.write_text(json.dumps(res, indent=1) + "\n")
            print(f"recorded {out.relative_to(HERE)}")
        return 0

    def table_with(q, edits):
        if q is None or q.kind != "cake":
            raise SystemExit("--cake / --reverse edit a CAKE table")
        items = {k: json.dumps(v) for k, v in lp.cake_params(q.cake).items()}
        items.update(map(_kv, edits))  # values as written (TOML)
        return "{ " + ", ".join(f"{k} = {v}" for k, v in items.items()) + " }"

    scen = lp.aqmlab_scenario
    fwd = table_with(case.qdisc, args.cake) if args.cake else None
    rev = table_with(case.reverse, args.reverse) if args.reverse else None

    def patched(c, seed, starts=None):
        text = scen(c, seed, starts)
        if fwd is not None:
            text = text.replace(f"qdisc = {lp.aqmlab_qdisc(c.qdisc)}", f"qdisc = {fwd}", 1)
        if rev is not None:
            text = text.replace(f"reverse_qdisc = {lp.aqmlab_qdisc(c.reverse)}", f"reverse_qdisc = {rev}", 1)
        for s in args.sub:
            old, new = s.split("=>", 1)
            if old not in text:
                raise SystemExit(f"--sub: {old!r} is not in the scenario")
            text = text.replace(old, new)
        return text

    lp.aqmlab_scenario = patched
    lin = [r for r in (lp.run_linux(case, run, cached=True) for run in (1, 2, 3)) if r is not None]
    if args.show:
        s = int(args.seeds.split(",")[0])
        print(lp.aqmlab_scenario(case, s, [float(x) for x in args.starts.split(",")] if args.starts
                                 else lp.aqmlab_starts(case, s, lin)), end="")
        return 0
    seeds = [int(s) for s in args.seeds.split(",")]

    def starts_of(seed):
        if args.starts:
            return [float(x) for x in args.starts.split(",")]
        return lp.aqmlab_starts(case, seed, lin)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        aq = list(pool.map(lambda s: lp.run_aqmlab(case, s, sys.executable, starts_of(s)), seeds))
    bad = [r["unsupported"] for r in aq if "unsupported" in r]
    if bad:
        raise SystemExit(bad[0])
    from run import fmt, verdict

    print(f"{case.name}  flow keys {list(args.flow)}  cake {args.cake}  reverse {args.reverse}  sub {args.sub}")
    print(f"  Linux runs {len(lin)}, aqmlab seeds {seeds}")
    misses = 0
    for key, kind, tol, label in lp.TARGETS:
        lv, av = lp.mean_of(case, lin, key), lp.mean_of(case, aq, key)
        if lv is None and av is None:
            continue
        v, d = verdict(kind, tol, av, lv)
        misses += v == "FAIL"
        dev = "-" if d is None else (f"{d:+.3g}" if kind == "abs" else f"{d * 100:+.1f}%")
        per = " ".join(fmt(lp._value(case, r, key)) for r in aq)
        print(f"  {label:10s} {fmt(lv):>10s} / {fmt(av):<10s} {v} ({dev})   seeds: {per}")
    for key, label in EXTRA:
        lv, av = lp.mean_of(case, lin, key), lp.mean_of(case, aq, key)
        if lv is None and av is None:
            continue
        print(f"  {label:15s} {fmt(lv):>10s} / {fmt(av):<10s}  seeds: {' '.join(fmt(r.get(key)) for r in aq)}")
    lf, af = lp._mean_list(lin, "goodput_per_flow_mbps"), lp._mean_list(aq, "goodput_per_flow_mbps")
    if lf and af:
        print("  flows [Mb/s]    " + " ".join(f"{l:.3f}/{a:.3f}" for l, a in zip(lf, af)))
    print(f"  target misses: {misses}")
    if args.json:
        args.json.write_text(json.dumps(aq, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
