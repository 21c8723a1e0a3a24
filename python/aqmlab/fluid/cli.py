"""Commands `aqmlab fluid` and `aqmlab stability` (registered on the main group in
`aqmlab.cli`; docs/fluid.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from aqmlab._core import ScenarioError
from aqmlab.campaign.units import RATE_UNITS, SIZE_UNITS, TIME_UNITS, parse_quantity
from aqmlab.termsafe import clean, plain

console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def _fail(message: str, code: int = 2) -> None:
    err_console.print(plain("error:", "bold red"), plain(message), highlight=False, soft_wrap=True)
    sys.exit(code)


def _say(message: str) -> None:
    err_console.print(plain(message), highlight=False, soft_wrap=True)


def _quantity(option: str, text: str | None, units: dict[str, float], what: str) -> float | None:
    """A number with an optional unit (`0.5ms`, `15Mbps`, `500B`) in base units."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    v = parse_quantity(text, units)
    if v is None:
        _fail(f"{option}: {clean(text)!r} is not {what}")
    return v


def _capacity(text: str | None, packet_size: str | None) -> float:
    """Packets per second from `3750pps`, a plain number (packets/s) or a rate with
    --packet-size."""
    if text is None:
        _fail("--capacity: required with --design (e.g. 3750pps, or 15Mbps with --packet-size 500B)")
    t = text.strip()
    if t.endswith("pps"):
        try:
            return float(t[:-3])
        except ValueError:
            _fail(f"--capacity: {clean(text)!r} is not a number of packets per second")
    try:
        return float(t)
    except ValueError:
        pass
    bps = parse_quantity(t, RATE_UNITS)
    if bps is None:
        _fail(f"--capacity: {clean(text)!r} is neither packets/s (3750pps) nor a rate (15Mbps)")
    size = _quantity("--packet-size", packet_size or "1000B", SIZE_UNITS, "a size such as 500B")
    return bps / (8.0 * size)


def _opts(f):
    f = click.option("--allow-any-path", is_flag=True, help="Let a graph file lie outside the scenario's directory.")(f)
    f = click.option("--allow-large", is_flag=True, help="Lift the scenario's [limits].")(f)
    f = click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario value (repeatable).")(f)
    return click.option("--seed", type=int, help="Override simulation.seed.")(f)


def _num(x, digits: int = 4) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


@click.command("fluid")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for summary.json, the fluid tables (Parquet), fluid.png and, with --with-packet, packet/.")
@click.option("--force", is_flag=True, help="Replace an earlier result in --out.")
@click.option("--with-packet", is_flag=True, help="Also run the packet simulation of the same scenario and overlay it.")
@click.option("--step", metavar="TIME", help="Integration step, e.g. 0.5ms (default min(1ms, smallest base RTT / 20)).")
@click.option("--sample", metavar="TIME", help="Interval of the time series (default the scenario's sample_interval).")
@click.option("--figure", "figure", type=click.Path(dir_okay=False, path_type=Path), help="Write the figure here (PNG, PDF, SVG).")
@_opts
def fluid_cmd(scenario: Path, out: Path | None, force: bool, with_packet: bool, step: str | None, sample: str | None, figure: Path | None,
              seed: int | None, overrides: tuple[str, ...], allow_large: bool, allow_any_path: bool) -> None:
    """Integrate the Misra–Gong–Towsley fluid model of SCENARIO's bottleneck (docs/fluid.md).

    The model reads the same resolved scenario as the packet run: one shared bottleneck, TCP
    Reno/NewReno classes, a RED-family, PI, PIE or DropTail discipline."""
    from aqmlab.fluid import fluid, plot
    from aqmlab.results import check_target

    if out is not None:
        try:
            check_target(out, overwrite=force)
        except OSError as e:
            _fail(str(e), 1)
    h = _quantity("--step", step, TIME_UNITS, "a time such as 0.5ms")
    d = _quantity("--sample", sample, TIME_UNITS, "a time such as 10ms")
    try:
        res = fluid(scenario, overrides, seed=seed, step=h, sample=d, with_packet=with_packet, allow_large=allow_large,
                    allow_any_path=allow_any_path)
    except ScenarioError as e:
        _fail(f"{scenario}: {e}")
        return
    f = res.summary["fluid"]
    t = Table(title=f"fluid model: {clean(f['qdisc'])} at {clean(f['bottleneck'])} (over the measurement window)")
    t.add_column("")
    t.add_column("fluid", justify="right")
    cmp = res.compare() if res.packet is not None else None
    if cmp:
        t.add_column("packet run", justify="right")
    rows = [("mean queue [pkts]", "mean_queue_pkts"), ("std queue [pkts]", "std_queue_pkts"), ("drop/mark frac", "drop_frac"),
            ("utilization", "utilization_frac")]
    for label, key in rows:
        cells = [_num(f[key])]
        if cmp:
            cells.append(_num(cmp["packet_" + key]))
        t.add_row(escape(label), *cells)
    console.print(t)
    console.print(plain(f"{f['flows']} TCP flows in {f['classes']} classes, C = {f['capacity_per_s']:.1f} packets/s of "
                        f"{f['packet_bytes']} B, buffer {f['buffer_pkts']:g}; step {f['step_s'] * 1e3:g} ms, {f['steps']} steps"),
                  highlight=False)
    for note in res.summary.get("notes", []):
        console.print(plain("note: " + note), highlight=False)
    if figure is not None:
        try:
            plot.save(plot.overlay(res), figure)
        except OSError as e:
            _fail(f"cannot write {figure}: {e}", 1)
        _say(f"figure written to {figure}")
    if out is not None:
        try:
            res.save(out, overwrite=force)
        except OSError as e:
            _fail(f"cannot write results to {out}: {e}", 1)
        _say(f"results written to {out}/")


def _print_analysis(an: dict) -> None:
    op = an["operating_point"]
    t = Table(title=f"linearized loop: {clean(an['qdisc'])} at {clean(an['bottleneck'])}")
    t.add_column("")
    t.add_column("value", justify="right")
    t.add_row("flows N", _num(an["flows"]))
    t.add_row(escape("capacity C [pkts/s]"), _num(an["capacity_pps"]))
    t.add_row(escape("base RTT Tp [s]"), _num(an["base_rtt_s"]))
    t.add_row(escape("window W0 [pkts]"), _num(op["window_pkts"]))
    t.add_row("loss probability p0", _num(op["p"]))
    t.add_row(escape("queue q0 [pkts]"), _num(op["queue_pkts"]))
    t.add_row(escape("RTT R0 [s]"), _num(op["rtt_s"]))
    if "max_p" in op:
        t.add_row("Adaptive RED's max_p", _num(op["max_p"]))
    for k, v in an["controller"].items():
        if k != "kind":
            t.add_row(f"controller {k}", _num(v))
    t.add_row(escape("gain crossover [rad/s]"), _num(an["crossover_rad_s"]))
    t.add_row(escape("phase margin [deg]"), _num(an["phase_margin_deg"]))
    t.add_row(escape("phase crossover [rad/s]"), _num(an["phase_crossover_rad_s"]))
    t.add_row(escape("gain margin [dB]"), _num(an["gain_margin_db"]))
    t.add_row("stable", "yes" if an["stable"] else "NO")
    if an["oscillation_period_s"] is not None:
        t.add_row(escape("predicted period [s]"), _num(an["oscillation_period_s"]))
    console.print(t)
    for note in an.get("notes", []):
        console.print(plain("note: " + note), highlight=False)


@click.command("stability")
@click.argument("scenario", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--bode", type=click.Path(dir_okay=False, path_type=Path), help="Write a Bode plot of the loop here.")
@click.option("--nyquist", type=click.Path(dir_okay=False, path_type=Path), help="Write a Nyquist plot of the loop here.")
@click.option("--design", type=click.Choice(["pi", "red"]), help="Design a controller instead of analysing SCENARIO.")
@click.option("--flows-min", type=float, help="Design: the fewest flows N- to stay stable for.")
@click.option("--rtt-max", metavar="TIME", help="Design: the largest round-trip time R+ (e.g. 0.246 or 246ms).")
@click.option("--capacity", metavar="RATE", help="Design: link capacity, 3750pps or a rate (15Mbps) with --packet-size.")
@click.option("--packet-size", metavar="SIZE", help="Design: packet size for a capacity given as a rate (default 1000B).")
@click.option("--sample-hz", type=float, default=160.0, show_default=True, help="PI design: sampling frequency.")
@click.option("--crossover", type=float, help="PI design: crossover frequency in rad/s (default the zero 2N-/(R+²C)).")
@click.option("--gain-rule", type=click.Choice(["paper", "unity"]), default="paper", show_default=True,
              help="PI design: the published example's gain arithmetic, or unity loop gain at the crossover (docs/fluid.md).")
@click.option("--min-th", type=float, help="RED design: min_th in packets.")
@click.option("--max-th", type=float, help="RED design: max_th in packets.")
@click.option("--w-q", type=float, default=0.002, show_default=True, help="RED design: EWMA weight.")
@click.option("--spread", type=click.Choice(["wait", "nowait", "none"]), default="wait", show_default=True, help="RED design: count spreading.")
@click.option("--campaign", "campaign_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Stability boundary: analyse every run of this campaign directory against its packet run.")
@click.option("--axis", help="Stability boundary: the campaign axis on the x axis (default the first).")
@click.option("--figure", type=click.Path(dir_okay=False, path_type=Path), help="Stability boundary: write the figure here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Stability boundary: write the table here.")
@_opts
def stability_cmd(scenario: Path | None, as_json: bool, bode: Path | None, nyquist: Path | None, design: str | None, flows_min: float | None,
                  rtt_max: str | None, capacity: str | None, packet_size: str | None, sample_hz: float, crossover: float | None,
                  gain_rule: str, min_th: float | None, max_th: float | None, w_q: float, spread: str, campaign_dir: Path | None,
                  axis: str | None, figure: Path | None, csv_path: Path | None, seed: int | None, overrides: tuple[str, ...],
                  allow_large: bool, allow_any_path: bool) -> None:
    """Stability margins of SCENARIO's linearized TCP/AQM loop (Hollot, Misra, Towsley, Gong,
    INFOCOM 2001), or a controller design (--design pi|red), or the stability boundary of a
    campaign (--campaign DIR). docs/fluid.md."""
    from aqmlab import fluid as fl

    modes = sum(x is not None for x in (scenario, design, campaign_dir))
    if modes != 1:
        _fail("give one of SCENARIO, --design pi|red, or --campaign DIR")
    if design is not None:
        _design(design, flows_min, rtt_max, capacity, packet_size, sample_hz, crossover, gain_rule, min_th, max_th, w_q, spread, as_json)
        return
    if campaign_dir is not None:
        from aqmlab.fluid import boundary

        try:
            df, fig = boundary.analyze(campaign_dir, axis)
        except (FileNotFoundError, ValueError, ScenarioError) as e:
            _fail(str(e))
            return
        cols = [c for c in df.columns if c not in ("run",)]
        if as_json:
            click.echo(df[cols].to_json(orient="records", indent=1))
        else:
            t = Table(title=f"stability boundary: {clean(str(campaign_dir))}")
            for c in cols:
                t.add_column(clean(c), justify="right")
            for _, r in df[cols].iterrows():
                t.add_row(*(_num(v, 3) if isinstance(v, float) else clean(str(v)) for v in r))
            console.print(t)
        if csv_path is not None:
            df.to_csv(csv_path, index=False)
            _say(f"table written to {csv_path}")
        if figure is not None:
            from aqmlab.fluid import plot

            plot.save(fig, figure)
            _say(f"figure written to {figure}")
        return
    import numpy as np

    omegas = list(np.logspace(-3, 3, 1200)) if (bode or nyquist) else []
    try:
        an = fl.stability(scenario, overrides, seed=seed, omegas=omegas, allow_large=allow_large, allow_any_path=allow_any_path)
    except ScenarioError as e:
        _fail(f"{scenario}: {e}")
        return
    if omegas:
        # keep the frequencies the controller's response is defined at (below Nyquist)
        r = an["response"]
        keep = [i for i, m in enumerate(r["mag"]) if m is not None and np.isfinite(m)]
        for k in ("omega_rad_s", "mag", "phase_deg"):
            r[k] = [r[k][i] for i in keep]
    if as_json:
        out = {k: v for k, v in an.items() if k != "response"}
        click.echo(json.dumps(out, indent=2, sort_keys=True))
    else:
        _print_analysis(an)
    from aqmlab.fluid import plot

    for path, make in ((bode, plot.bode), (nyquist, plot.nyquist)):
        if path is not None:
            plot.save(make(an), path)
            _say(f"figure written to {path}")


def _design(design: str, flows_min, rtt_max, capacity, packet_size, sample_hz, crossover, gain_rule, min_th, max_th, w_q, spread,
            as_json: bool) -> None:
    from aqmlab import fluid as fl

    if flows_min is None:
        _fail("--flows-min: required with --design")
    r = _quantity("--rtt-max", rtt_max, TIME_UNITS, "a time such as 0.246 or 246ms")
    if r is None:
        _fail("--rtt-max: required with --design")
    c = _capacity(capacity, packet_size)
    try:
        if design == "pi":
            d = fl.design_pi(flows_min, r, c, sample_hz, crossover=crossover, rule=gain_rule)
            paste = f'qdisc = {{ kind = "pi", a = {d["a"]:.4g}, b = {d["b"]:.4g}, w = {d["w"]:g} }}'
        else:
            if min_th is None or max_th is None:
                _fail("--min-th and --max-th: required with --design red")
            d = fl.design_red(flows_min, r, c, min_th, max_th, w_q=w_q, spread=spread)
            paste = (f'qdisc = {{ kind = "red", min_th = {min_th:g}, max_th = {max_th:g}, max_p = {d["max_p"]:.4g}, '
                     f'w_q = {w_q:g}, spread = "{spread}" }}')
    except ValueError as e:
        _fail(f"--{e}")
        return
    if as_json:
        click.echo(json.dumps({**d, "inputs": {"flows_min": flows_min, "rtt_max_s": r, "capacity_pps": c}, "qdisc": paste},
                              indent=2, sort_keys=True))
        return
    t = Table(title=f"{design.upper()} design for N >= {flows_min:g}, R <= {r:g} s, C = {c:g} packets/s")
    t.add_column("")
    t.add_column("value", justify="right")
    for k, v in d.items():
        if k != "margins":
            t.add_row(k, _num(v, 5))
    for k, v in d["margins"].items():
        t.add_row(k, _num(v) if not isinstance(v, bool) else ("yes" if v else "NO"))
    console.print(t)
    console.print(plain(paste), highlight=False)
