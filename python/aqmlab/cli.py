"""The `aqmlab` command line: run, validate, qdiscs, ccs, sources, sweep, reproduce, curve, campaign, plot,
characterize."""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from aqmlab._core import ScenarioError
from aqmlab.scenario import ScenarioDeprecationWarning, congestion_controls, qdiscs, run, sources, validate
from aqmlab.schema import columns
from aqmlab.termsafe import clean, plain

console = Console(width=None if sys.stdout.isatty() else 140)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 140)

#: Rows of a terminal summary table: above it, the flows with the highest and the lowest throughput
#: (half each) and the busiest queues and links (most packets) are shown, with a count of the rest (the full
#: tables are in the result files).
MAX_FLOW_ROWS = 20


def _bounded(rows: list, key, limit: int = MAX_FLOW_ROWS) -> tuple[list, list, int]:
    """At most `limit` of `rows` for a terminal table: all of them in their order when they fit;
    else the `limit // 2` with the largest `key` (largest first) and the `limit - limit // 2` with
    the smallest (largest first), and how many are left out between. Ties keep the rows' order."""
    if len(rows) <= limit:
        return rows, [], 0
    ranked = sorted(range(len(rows)), key=lambda i: -_num(key(rows[i])))  # stable: ties by order
    top, bottom = ranked[: limit // 2], ranked[len(rows) - (limit - limit // 2):]
    return [rows[i] for i in top], [rows[i] for i in bottom], len(rows) - limit


def _busiest(rows: list, key, limit: int = MAX_FLOW_ROWS) -> tuple[list, int]:
    """All of `rows` in their order when at most `limit`; else the `limit` with the largest `key`
    (largest first; ties keep the rows' order) and how many are left out."""
    if len(rows) <= limit:
        return rows, 0
    return sorted(rows, key=lambda r: -_num(key(r)))[:limit], len(rows) - limit


def _num(x) -> float:
    """A table value as a number for ranking (None and NaN rank lowest)."""
    return x if isinstance(x, (int, float)) and x == x else float("-inf")


#: Exit status after Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130


def _fail(message: str, code: int = 2) -> None:
    """Prints `message` literally (escaped: it may quote user input) and exits with `code`."""
    err_console.print(plain("error:", "bold red"), plain(message), highlight=False, soft_wrap=True)
    sys.exit(code)


def _parse_value(raw: str):
    """A `--vary` value: TOML syntax if it parses as one value (3, 0.5, true, "x"), else a bare
    string (as `--set` reads values)."""
    from aqmlab._toml import tomllib

    try:
        doc = tomllib.loads(f"v = {raw}")
    except tomllib.TOMLDecodeError:
        return raw
    return doc["v"] if len(doc) == 1 else raw


def _say(message: str) -> None:
    """Prints a status line literally (it may hold user paths or names)."""
    console.print(plain(message), highlight=False, soft_wrap=True)


class _Group(click.Group):
    """The command group: Ctrl-C ends any command with a short note and exit status 130."""

    def invoke(self, ctx: click.Context):
        import signal

        from aqmlab import _leave_on_interrupt

        # while the command runs, Ctrl-C is Python's KeyboardInterrupt (commands stop their
        # workers and keep what completed); before and after it, it ends the process at once
        # (`aqmlab/__init__.py`)
        guarded = signal.getsignal(signal.SIGINT) is _leave_on_interrupt
        try:
            if guarded:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            try:
                return super().invoke(ctx)
            finally:
                if guarded:
                    signal.signal(signal.SIGINT, _leave_on_interrupt)
        except KeyboardInterrupt:
            err_console.print(plain("interrupted", "bold red"), highlight=False)
            # everything aqmlab writes is on disk by now (stores are closed, writes are atomic);
            # leave at once rather than wait for libraries' exit handlers (a Dask client's
            # event loop takes seconds to wind down)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)


def _fmt(x, scale: float = 1.0, digits: int = 3) -> str:
    if x is None:
        return "-"
    try:
        if x != x:  # NaN
            return "-"
    except TypeError:
        return str(x)
    return f"{x * scale:.{digits}g}" if isinstance(x, float) else str(x)


def print_summary(summary: dict, wall_s: float | None = None, flow_order: list[str] | None = None) -> None:
    """Prints the per-queue, per-link and per-flow summary tables."""
    S, Q, L, F, A = (columns(t) for t in ("simulation", "queues", "links", "flows", "aggregate"))
    sim = summary["simulation"]
    head = f"seed {sim[S.seed]}, {sim[S.duration_s]:g} s simulated (window from {sim[S.warmup_s]:g} s), {sim[S.events]:,} events"
    if wall_s is not None and wall_s > 0:
        head += f", {wall_s:.2f} s wall ({sim[S.events] / wall_s / 1e6:.1f} M events/s)"
    console.print(head, highlight=False)

    t = Table(title="Queues (monitored)", title_justify="left")
    for col in ["queue", "qdisc", "arrivals [pkts]", "drops [pkts]", "drop frac", "marks [pkts]", "mean len [pkts]", "max len [pkts]", "sojourn mean [ms]", "sojourn p95 [ms]"]:
        t.add_column(escape(col), justify="left" if col in ("queue", "qdisc") else "right")
    busy = [(n, q) for n, q in summary["queues"].items() if q[Q.arrivals_pkts]]  # not idle directions
    shown, rest = _busiest(busy, lambda r: r[1][Q.arrivals_pkts])
    for name, q in shown:
        t.add_row(plain(name), plain(q[Q.qdisc]), _fmt(q[Q.arrivals_pkts]), _fmt(q[Q.drops_pkts]), _fmt(q[Q.drop_frac]), _fmt(q[Q.marks_pkts]),
                  _fmt(q[Q.mean_len_pkts]), _fmt(q[Q.max_len_pkts]), _fmt(q[Q.sojourn_mean_s], 1e3), _fmt(q[Q.sojourn_p95_s], 1e3))
    if rest:
        t.caption = f"all {len(busy)} in queues.parquet"
        t.add_row(f"… {rest} more", *[""] * 9)
    console.print(t)

    t = Table(title="Links (monitored)", title_justify="left")
    for col in ["link", "rate [Mb/s]", "utilization [%]", "throughput [Mb/s]", "lost [pkts]"]:
        t.add_column(escape(col), justify="left" if col == "link" else "right")
    busy = [(n, l) for n, l in summary["links"].items() if l[L.tx_pkts]]  # not idle directions
    shown, rest = _busiest(busy, lambda r: r[1][L.tx_pkts])
    for name, l in shown:
        t.add_row(plain(name), _fmt(l[L.rate_bps] / 1e6), _fmt(l[L.utilization_frac], 100, 4), _fmt(l[L.throughput_bps], 1e-6, 4), _fmt(l[L.lost_pkts]))
    if rest:
        t.caption = f"all {len(busy)} in links.parquet"
        t.add_row(f"… {rest} more", *[""] * 4)
    console.print(t)

    flows = [(n, summary["flows"][n]) for n in (flow_order or summary["flows"])]
    tcp = any(f[F.kind] == "tcp" for _, f in flows)
    t = Table(title=f"Flows ({len(flows)})", title_justify="left")
    cols = ["flow", "kind", "path", "throughput [Mb/s]", "goodput [Mb/s]", "loss frac", "delay mean [ms]", "delay p95 [ms]", "jitter [ms]"]
    if tcp:
        cols += ["retx [pkts]", "timeouts", "RTT mean [ms]", "FCT [s]"]
    for col in cols:
        t.add_column(escape(col), justify="left" if col in ("flow", "kind", "path") else "right")
    top, bottom, rest = _bounded(flows, lambda r: r[1][F.throughput_bps])
    if rest:
        t.title = f"Flows ({len(flows)}: the {len(top)} with the highest and the {len(bottom)} with the lowest throughput)"
        t.caption = f"all {len(flows)} in flows.parquet"
    for k, (name, f) in enumerate(top + bottom):
        if rest and k == len(top):
            t.add_row(f"… {rest} more", *[""] * (len(cols) - 1))
        row = [plain(name), plain(f[F.kind]), plain(f"{f[F.src]}→{f[F.dst]}"), _fmt(f[F.throughput_bps], 1e-6, 4), _fmt(f[F.goodput_bps], 1e-6, 4),
               _fmt(f[F.loss_frac]), _fmt(f[F.delay_mean_s], 1e3), _fmt(f[F.delay_p95_s], 1e3), _fmt(f[F.jitter_rfc3550_s], 1e3)]
        if tcp:
            is_tcp = f[F.kind] == "tcp"
            row += [_fmt(f.get(F.retransmissions)) if is_tcp else "-", _fmt(f.get(F.timeouts)) if is_tcp else "-",
                    _fmt(f.get(F.rtt_mean_s), 1e3) if is_tcp else "-", _fmt(f.get(F.fct_s)) if is_tcp else "-"]
        t.add_row(*row)
    console.print(t)

    a = summary["aggregate"]
    console.print(
        f"aggregate: throughput {_fmt(a[A.throughput_total_bps], 1e-6, 4)} Mb/s, Jain index {_fmt(a[A.jain_index], 1, 4)}, "
        f"mean delay {_fmt(a[A.delay_mean_s], 1e3)} ms, power {_fmt(a[A.power_bps_per_s], 1, 4)} bit/s²",
        highlight=False,
    )


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Prints a scenario's deprecated spelling as one `warning:` line (escaped); other warnings
    as Python prints them."""
    if issubclass(category, ScenarioDeprecationWarning):
        if str(message) not in _warned:  # once per field (the message names it), however many runs
            _warned.add(str(message))
            err_console.print(plain("warning:", "bold yellow"), plain(str(message)), highlight=False, soft_wrap=True)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


_default_showwarning = warnings.showwarning
_warned: set[str] = set()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="aqmlab")
def main() -> None:
    """aqmlab: packet-level simulation for Active Queue Management research."""
    warnings.filterwarnings("always", category=ScenarioDeprecationWarning)  # _show_warning dedupes
    warnings.showwarning = _show_warning


_allow_large = click.option("--allow-large", is_flag=True, help="Lift the resource limits ([limits] memory/setup) for this run.")
_allow_any_path = click.option("--allow-any-path", is_flag=True, help="Let a graph file lie outside the scenario's directory (absolute or ../ paths).")


@main.command("run")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), help="Directory for summary.json, Parquet tables and the resolved scenario.")
@click.option("--force", is_flag=True, help="Replace an earlier result in --out.")
@click.option("--seed", type=int, help="Override simulation.seed.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario value, e.g. --set topology.bottleneck.rate=5Mbps (repeatable).")
@_allow_large
@_allow_any_path
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
def run_cmd(scenario: Path, out: Path | None, force: bool, seed: int | None, overrides: tuple[str, ...], allow_large: bool, allow_any_path: bool, quiet: bool) -> None:
    """Run SCENARIO (a TOML file) and print a summary.

    Ctrl-C stops the run within a fraction of a second (exit status 130; nothing is written)."""
    from aqmlab.results import check_target

    if out is not None:
        try:
            check_target(out, overwrite=force)
        except OSError as e:
            _fail(str(e), 1)
    try:
        from aqmlab.progress import sim_progress

        t0 = time.perf_counter()
        with sim_progress(not quiet and err_console.is_terminal) as progress:
            results = run(scenario, seed=seed, overrides=overrides, progress=progress, allow_large=allow_large, allow_any_path=allow_any_path)
        wall = time.perf_counter() - t0
    except ScenarioError as e:
        _fail(f"{scenario}: {e}")
        return
    if not quiet:
        flow_names = results.tables.strings("flows", "flow")
        print_summary(results.summary, wall, flow_names or None)
    if out is not None:
        try:
            results.save(out, overwrite=force)
        except OSError as e:
            _fail(f"cannot write results to {out}: {e}", 1)
        if not quiet:
            _say(f"results written to {out}/")


@main.command("validate")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a scenario value (repeatable).")
@click.option("--print", "show", is_flag=True, help="Print the resolved scenario (every default filled in).")
@_allow_large
@_allow_any_path
def validate_cmd(scenario: Path, overrides: tuple[str, ...], show: bool, allow_large: bool, allow_any_path: bool) -> None:
    """Check SCENARIO without running it (including the resource limits)."""
    try:
        resolved = validate(scenario, overrides, allow_large=allow_large, allow_any_path=allow_any_path)
    except ScenarioError as e:
        _fail(f"{scenario}: {e}")
        return
    if show:
        click.echo(resolved)
    else:
        _say(f"{scenario}: ok")


@main.command("sweep")
@click.argument("scenario", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--vary", "vary", multiple=True, metavar="PATH=V1,V2,...", help="Values to sweep for one key path (repeatable: the cartesian product is run).")
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True, help="Replications per point, with seeds 1..N.")
@click.option("-j", "--jobs", "workers", type=click.IntRange(min=1), help="Parallel processes (default: all cores).")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Directory for runs/ and sweep.parquet / sweep.csv.")
@click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Fixed override applied to every run (repeatable).")
@click.option("--per-run", is_flag=True, help="Also write each run's Parquet tables (flows, queues, time series, ...) in its run directory.")
@click.option("--force", is_flag=True, help="Write into OUT even if it holds files that are not an aqmlab sweep's.")
@click.option("--max-runs", type=click.IntRange(min=1), default=100_000, show_default=True, help="Refuse grids of more runs than this.")
@_allow_any_path
def sweep_cmd(scenario: Path, vary: tuple[str, ...], seeds: int, workers: int | None, out: Path, overrides: tuple[str, ...], per_run: bool,
              force: bool, max_runs: int, allow_any_path: bool) -> None:
    """Run SCENARIO over a grid of values and seeds, in parallel and resumably.

    Runs are keyed by a hash of the resolved scenario and seed and stored in OUT (summaries in
    batches; with --per-run each run in OUT/runs/<key>/ with its Parquet tables); re-running
    skips the runs the same code completed. One row per run (labels + summary metrics) goes to
    OUT/sweep.parquet. OUT is locked while the sweep runs. Ctrl-C stops dispatching, cancels
    pending runs and keeps the completed ones (exit status 130); failed runs are recorded in
    OUT/failed/ (exit status 1)."""
    import math

    from aqmlab.campaign.errors import StoreError
    from aqmlab.sweep import collect, grid, run_jobs

    grid_spec: dict[str, list] = {}
    for v in vary:
        if "=" not in v:
            _fail(f"--vary {v!r}: expected PATH=V1,V2,...")
        key, values = v.split("=", 1)
        grid_spec[key.strip()] = [_parse_value(x.strip()) for x in values.split(",") if x.strip()]
    n = math.prod(len(v) for v in grid_spec.values()) * seeds
    if n > max_runs:
        _fail(f"the sweep has {n} runs, more than the {max_runs} allowed; raise the cap with --max-runs N")
    try:
        jobs = grid(scenario, grid_spec, list(range(1, seeds + 1)), overrides, allow_any_path=allow_any_path)
    except ScenarioError as e:
        _fail(f"{scenario}: {e}")
        return
    outcome: list = []
    try:
        dirs = run_jobs(jobs, out, workers=workers, label=scenario.name, per_run=per_run, force=force, outcome=outcome)
    except StoreError as e:
        _fail(str(e), e.code)
        return
    table = collect(dirs)
    from aqmlab.results import write_atomic

    write_atomic(out / "sweep.parquet", lambda p: table.to_parquet(p, index=False))
    write_atomic(out / "sweep.csv", lambda p: table.to_csv(p, index=False))
    _say(f"{len(dirs)} runs; one row each in {out}/sweep.parquet and sweep.csv")
    if outcome and outcome[0].failed:
        _fail(f"{outcome[0].failed} runs failed (the first: {outcome[0].failures[0][1]}); see {out}/failed/", 1)


@main.command("reproduce")
@click.argument("pack", required=False)
@click.option("--list", "list_packs", is_flag=True, help="List the packs.")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), help="Output directory (default: out/reproduce/PACK).")
@click.option("-j", "--jobs", "workers", type=click.IntRange(min=1), help="Parallel processes (default: all cores).")
@click.option("--quick", is_flag=True, help="Shortened runs: a smoke test of the whole pack.")
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True, help="Replications (seeds 1..N); tables report means with 95% confidence intervals.")
@click.option("--force", is_flag=True, help="Write into OUT even if it holds files that are not an aqmlab pack's.")
def reproduce_cmd(pack: str | None, list_packs: bool, out: Path | None, workers: int | None, quick: bool, seeds: int, force: bool) -> None:
    """Run a paper's experiment (PACK) and write tables, figures and report.md.

    Resumable: re-running skips the runs the same code completed (runs made by another build
    run again). OUT is locked meanwhile; Ctrl-C keeps the completed runs (exit status 130)."""
    from aqmlab import reproduce as rep

    if list_packs or pack is None:
        t = Table()
        t.add_column("pack")
        t.add_column("paper")
        for name in rep.PACKS:
            try:
                t.add_row(name, rep.load(name).TITLE)
            except ImportError:
                t.add_row(name, "(not available yet)")
        console.print(t)
        return
    if pack not in rep.PACKS:
        _fail(f"unknown pack {pack!r}; packs: {', '.join(rep.PACKS)}")
    from aqmlab.campaign.errors import StoreError

    out = out or Path("out") / "reproduce" / (pack + ("-quick" if quick else ""))
    try:
        report = rep.reproduce(pack, out, workers=workers, quick=quick, seeds=seeds, force=force)
    except ScenarioError as e:
        _fail(f"pack {pack}: {e}")
        return
    except StoreError as e:
        _fail(str(e), e.code)
        return
    except rep.RunsFailed as e:
        _fail(f"pack {pack}: {e}", 1)
        return
    _say(f"report: {report}")


def _registry_table(rows: list[tuple[str, str]]) -> None:
    t = Table()
    t.add_column("name")
    t.add_column("description")
    for name, doc in rows:
        t.add_row(name, doc)
    console.print(t)


@main.command("examples")
@click.argument("names", nargs=-1)
@click.option("--copy", "dest", type=click.Path(file_okay=False, path_type=Path), help="Copy the named files (all if none) to DEST/scenarios/..., so `aqmlab run scenarios/examples/mm1k.toml` works from DEST.")
@click.option("--force", is_flag=True, help="With --copy: replace files that exist.")
def examples_cmd(names: tuple[str, ...], dest: Path | None, force: bool) -> None:
    """List the shipped scenarios and campaign files, or copy them (NAMES: e.g. mm1k, examples/l4s_dualpi2, campaigns/aqm_comparison)."""
    from aqmlab import examples

    try:
        if dest is None:
            items = examples.find(names) if names else examples.shipped()
            t = Table()
            for col in ("file", "kind", "description"):
                t.add_column(col)
            for e in items:
                t.add_row(escape("scenarios/" + e.name), e.kind, escape(e.description + (f" (needs {', '.join(e.needs)})" if e.needs else "")))
            console.print(t)
            console.print("copy them with: aqmlab examples --copy DIR [NAME ...]  (then, in DIR: aqmlab run scenarios/examples/mm1k.toml)",
                          highlight=False)
            return
        written = examples.copy(dest, names, force)
    except (ValueError, FileExistsError) as e:
        _fail(str(e))
        return
    console.print(f"{len(written)} file(s) written under {dest / 'scenarios'}; from {dest}: aqmlab run {written[0].relative_to(dest)}",
                  highlight=False)


@main.command("qdiscs")
def qdiscs_cmd() -> None:
    """List the queue disciplines."""
    _registry_table(qdiscs())


@main.command("ccs")
def ccs_cmd() -> None:
    """List the TCP congestion controls (`cc = "..."` in a TCP flow)."""
    _registry_table(congestion_controls())


@main.command("sources")
def sources_cmd() -> None:
    """List the open-loop traffic sources (`kind = "..."` of a non-TCP flow)."""
    _registry_table(sources())


@main.command("curve", context_settings={"ignore_unknown_options": True})
@click.argument("specs", nargs=-1, required=True)
@click.option("-o", "--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the figure (PNG, PDF, SVG) here.")
@click.option("--max", "x_max", type=float, help="Right end of the average-queue axis [packets].")
@click.option("--rate", default="10Mbps", show_default=True, help="Link rate for parameters derived from it (w_q = auto, ARED thresholds).")
def curve_cmd(specs: tuple[str, ...], out: Path | None, x_max: float | None, rate: str) -> None:
    """Draw and tabulate RED-family drop curves p(avg).

    SPECS: NAME [key=value | --param key=value]... [NAME ...], e.g.
    `aqmlab curve gred nlgred1 k=5 nlgred2 --param m=0.6 -o fig.png`. NLGRED_1/2 print their
    derived parameters.
    """
    import re

    from aqmlab import curves

    try:
        parsed = curves.parse_specs(specs)
        m = re.fullmatch(r"\s*([0-9.]+)\s*([kMG]?)(bps|b/s|bit/s)?\s*", rate)
        if not m:
            raise ValueError(f"--rate {rate!r}: use e.g. 10Mbps")
        rate_bps = int(float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)])
        for s in parsed:
            if s.name in ("nlgred1", "nlgred2"):
                base = {k: float(s.params[k]) for k in ("min_th", "max_th", "max_p0") if k in s.params}
                if s.name == "nlgred1":
                    max_p, j = curves.nlgred1(float(s.params.get("k", 5.0)), **base)
                    _say(f"{s.label}: max_p = {max_p:.5g}, j = {j:.5g}")
                else:
                    k, j = curves.nlgred2(float(s.params.get("m", 0.6)), p_target=float(s.params.get("p_target", 0.2)), **base)
                    _say(f"{s.label}: k = {k:.6g}, j = {j:.5g}")
        avgs = curves.summary_points(parsed, rate_bps)
        rows = curves.table(parsed, avgs, rate_bps)
    except (ScenarioError, ValueError, TypeError) as e:
        _fail(str(e))
        return
    t = Table(title="p_b(avg)", title_justify="left")
    t.add_column("avg [pkts]", justify="right")
    for s in parsed:
        t.add_column(escape(clean(s.label)), justify="right")
    for row in rows:
        t.add_row(f"{row[0]:g}", *(f"{v:.4f}" for v in row[1:]))
    console.print(t)
    if out is not None:
        try:
            curves.plot(parsed, str(out), x_max=x_max, rate_bps=rate_bps)
        except OSError as e:
            _fail(f"cannot write {out}: {e}", 1)
        _say(f"figure written to {out}")


def _register_campaign_commands() -> None:
    from aqmlab.campaign.cli import campaign_group, plot_group

    main.add_command(campaign_group)
    main.add_command(plot_group)
    from aqmlab.characterize.cli import characterize_cmd

    main.add_command(characterize_cmd)


_register_campaign_commands()


def _register_fluid_commands() -> None:
    from aqmlab.fluid.cli import fluid_cmd, stability_cmd

    main.add_command(fluid_cmd)
    main.add_command(stability_cmd)


_register_fluid_commands()

if __name__ == "__main__":
    main()
