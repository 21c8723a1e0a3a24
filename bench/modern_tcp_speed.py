"""Cost of SACK + timestamps + Linux pacing (issue 12): the 10-flow RED dumbbell of
bench/peer/scenarios/red.toml shortened to 60 s, run alternately with and without them;
prints the median wall times and their ratio (target: at most 1.5x).

    python bench/modern_tcp_speed.py
"""
from pathlib import Path
import copy
import statistics
import time
import tomllib

import aqmlab
base = tomllib.load(open(Path(__file__).parent / "peer" / "scenarios" / "red.toml", "rb"))
base["simulation"]["duration"] = "60s"; base["simulation"]["warmup"] = "10s"
on = copy.deepcopy(base)
on["flows"][0].update({"sack": True, "timestamps": True, "pacing": "linux"})
t = {"off": [], "on": []}; ev = {}
for i in range(3):
    for name, sc in (("off", base), ("on", on)):
        t0 = time.perf_counter(); r = aqmlab.run(sc); t[name].append(time.perf_counter() - t0)
        ev[name] = r.summary["simulation"]["events"]
for k in t: print(k, "median %.2f s" % statistics.median(t[k]), [round(x,2) for x in t[k]], "events", ev[k])
print("ratio %.2f" % (statistics.median(t["on"]) / statistics.median(t["off"])))
