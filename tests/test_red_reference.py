"""Differential test: the Rust RED and the pure-Python reference (aqmlab.reference.red) fed the
same random trace of arrivals/dequeues and the same uniforms must decide identically."""

import random

import tomli_w
from hypothesis import given, settings
from hypothesis import strategies as st

from aqmlab import _core
from aqmlab.reference.red import RedParams, run_trace


def random_trace(rng: random.Random, n: int, rate_bps: int, load: float, ect_frac: float, sizes):
    """Poisson-ish arrivals at `load` times the link's packet rate, dequeues at the link's rate
    with idle gaps (a dequeue on an empty queue starts an idle period)."""
    mean_size = sum(sizes) / len(sizes)
    service = mean_size * 8 / rate_bps * 1e9  # ns per packet
    t_arr, t_dep, events = 0.0, 0.0, []
    while len(events) < n:
        if t_arr <= t_dep:
            events.append((0, int(t_arr), rng.choice(sizes), rng.random() < ect_frac, rng.random()))
            t_arr += rng.expovariate(load / service)
        else:
            events.append((1, int(t_dep), 0, False, 0.0))
            # Occasionally a long pause of the link's pulls (idle periods, long decays).
            t_dep += service * (50 if rng.random() < 0.01 else 1)
    return events


params_strategy = st.fixed_dictionaries(
    {
        "min_th": st.floats(0.5, 20),
        "width": st.floats(0.5, 30),
        "max_p": st.floats(0.01, 1.0),
        "gentle": st.booleans(),
        "w_q": st.sampled_from([0.002, 0.02, 0.2, 1.0]),
        "spread": st.sampled_from(["wait", "nowait", "none"]),
        "bytes": st.booleans(),
        "mean_pktsize": st.sampled_from([500, 1000, 1040]),
        "limit": st.integers(3, 80),
        "ecn": st.sampled_from(["off", "ns2", "ns3"]),
        "mark_p": st.floats(0.01, 1.0),
        "hard_drop": st.booleans(),
    }
)


@settings(max_examples=60, deadline=None)
@given(p=params_strategy, seed=st.integers(0, 2**32 - 1), load=st.floats(0.5, 3.0))
def test_rust_red_matches_the_python_reference(p, seed, load):
    rng = random.Random(seed)
    rate = 10_000_000
    events = random_trace(rng, 3000, rate, load, ect_frac=0.5, sizes=[40, 500, 1000, 1500])
    ref = RedParams(
        min_th=p["min_th"], max_th=p["min_th"] + p["width"], max_p=p["max_p"], gentle=p["gentle"], w_q=p["w_q"],
        spread=p["spread"], bytes=p["bytes"], mean_pktsize=p["mean_pktsize"], limit=p["limit"], ecn=p["ecn"],
        mark_p=p["mark_p"], hard_drop=p["hard_drop"],
    )
    text = tomli_w.dumps({
        "min_th": ref.min_th, "max_th": ref.max_th, "max_p": ref.max_p, "w_q": ref.w_q, "spread": ref.spread,
        "bytes": ref.bytes, "mean_pktsize": ref.mean_pktsize, "limit": ref.limit, "ecn": ref.ecn,
        "mark_p": ref.mark_p, "hard_drop": ref.hard_drop,
    })
    kind = "gred" if ref.gentle else "red"
    codes, avgs = _core.red_trace(kind, text, events, rate)
    ref_codes, ref_avgs = run_trace(ref, rate, events)
    first = next((i for i, (a, b) in enumerate(zip(codes, ref_codes)) if a != b), None)
    assert first is None, f"first difference at event {first}: {events[first]} rust {codes[first]} ref {ref_codes[first]}"
    assert avgs == ref_avgs


def test_the_differential_test_can_fail():
    # A reference with a different spreading must disagree on a congested trace.
    rng = random.Random(1)
    events = random_trace(rng, 3000, 10_000_000, 2.0, 0.0, [1000])
    text = tomli_w.dumps({"w_q": 0.2, "spread": "wait", "limit": 60})
    codes, _ = _core.red_trace("red", text, events, 10_000_000)
    ref_codes, _ = run_trace(RedParams(w_q=0.2, spread="nowait", limit=60), 10_000_000, events)
    assert codes != ref_codes
    # And all outcome kinds occur in such a trace.
    assert {0, 2, 5}.issubset(set(codes))
