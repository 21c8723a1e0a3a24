"""Commands `aqmlab campaign run|status|results|report` and `aqmlab plot ...` (registered on
the main `aqmlab` group in `aqmlab.cli`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from aqmlab.campaign.errors import StoreError
from aqmlab.campaign.spec import Campaign, CampaignError, load_campaign
from aqmlab.termsafe import plain

console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def _fail(message: str, code: int = 2) -> None:
    err_console.print(plain("error:", "bold red"), plain(message), highlight=False, soft_wrap=True)
    sys.exit(code)


def _load(file: Path, overrides: tuple[str, ...], max_runs: int | None = None) -> Campaign:
    try:
        return load_campaign(file, overrides, max_runs=max_runs)
    except CampaignError as e:
        _fail(f"{file}: {e}")
        raise  # unreachable


def _size(value: str | None) -> int | None:
    from aqmlab.campaign.units import SIZE_UNITS, parse_quantity

    if value is None:
        return None
    b = parse_quantity(value, SIZE_UNITS)
    if b is None or b < 64e6:
        _fail(f"--worker-memory {value!r}: expected a size of at least 64MB, e.g. 4GB")
    return int(b)


def _out(campaign: Campaign, out: Path | None) -> Path:
    return out if out is not None else Path("out") / "campaigns" / campaign.name


def _common(f):
    f = click.option("--set", "overrides", multiple=True, metavar="PATH=VALUE", help="Override a value of the base scenario for every run (repeatable).")(f)
    f = click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), help="Campaign directory (default: out/campaigns/NAME).")(f)
    return click.argument("file", type=click.Path(dir_okay=False, path_type=Path))(f)


@click.group("campaign")
def campaign_group() -> None:
    """Campaigns: whole-configuration sweeps into one tidy dataset (docs/campaigns.md)."""


@campaign_group.command("run")
@_common
@click.option("-j", "--jobs", "workers", type=click.IntRange(min=1), help="Local worker processes (default: all cores).")
@click.option("--dask", "dask_address", metavar="ADDRESS", help="Run on the Dask scheduler at ADDRESS (overrides [cluster] address).")
@click.option("--local", is_flag=True, help="Run on local processes even if the file has a [cluster] section.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--progress/--no-progress", default=None, help="Show the progress bar (default: only on a terminal).")
@click.option("--report", "with_report", is_flag=True, help="Also write OUT/report.html.")
@click.option("--force", is_flag=True, help="Write into OUT even if it holds files that are not an aqmlab campaign's.")
@click.option("--per-run", is_flag=True, help="Also keep each run's own files (summary, Parquet tables) in OUT/runs/<key>/.")
@click.option("--max-runs", type=click.IntRange(min=1), help="Refuse campaigns of more runs than this (default: the file's max_runs, else 100000).")
@click.option("--worker-memory", metavar="SIZE", help="Cap each local worker's memory (e.g. 4GB): a run that outgrows it fails alone.")
@click.option("--wait", "wait_s", type=click.FloatRange(min=0), default=0.0, help="Wait up to this many seconds for another process using OUT (default: refuse at once).")
def run_cmd(file: Path, out: Path | None, overrides: tuple[str, ...], workers: int | None, dask_address: str | None, local: bool,
            quiet: bool, progress: bool | None, with_report: bool, force: bool, per_run: bool, max_runs: int | None,
            worker_memory: str | None, wait_s: float) -> None:
    """Run the campaign FILE: only runs that are missing, stale or failed; then write the dataset.

    OUT is locked while the campaign runs (a second process is refused, naming the first).
    Ctrl-C stops at once, keeping the completed runs (exit status 130); a run that fails, or
    whose worker dies, is recorded in OUT/failed/ and the others go on (exit status 1)."""
    from aqmlab.campaign import report, runner

    memory = _size(worker_memory)
    c = _load(file, overrides, max_runs)
    out = _out(c, out)
    address = None if local else (dask_address or c.cluster.get("address"))
    cluster = None if local or address else (c.cluster if c.cluster.get("kind") == "slurm" else None)
    show = (not quiet) and (progress if progress is not None else sys.stderr.isatty())
    try:
        o = runner.run_campaign(c, out, workers=workers, dask=address, cluster=cluster, progress=show, force=force, per_run=per_run,
                                memory_limit=memory, wait=wait_s)
    except CampaignError as e:
        _fail(f"{file}: {e}")
        return
    except StoreError as e:
        _fail(str(e), e.code)
        return
    if not quiet:
        where = f"on {address}" if address else "on Slurm" if cluster else "locally"
        console.print(plain(f"{o.total} runs: {o.reused} reused, {o.ran} run {where} ({o.failed} failed) in {o.wall_s:.1f} s; "
                            f"dataset in {out}/dataset/"), highlight=False)
    if with_report and o.failed < o.total:
        p = report.write(c, out)
        if not quiet:
            console.print(f"report: {p}", highlight=False)
    if o.failed:
        first = o.failures[0][1] if o.failures else ""
        _fail(f"{o.failed} runs failed (the first: {first}); see {out}/failed/ (aqmlab campaign status {file})", 1)


@campaign_group.command("status")
@_common
@click.option("--all", "show_all", is_flag=True, help="List every run that is not done (default: the first 20).")
def status_cmd(file: Path, out: Path | None, overrides: tuple[str, ...], show_all: bool) -> None:
    """Say which runs of FILE are done, stale (made by other code), failed or missing."""
    from aqmlab.campaign import runner, store

    c = _load(file, overrides)
    out = _out(c, out)
    try:
        st = runner.statuses(c, out)
    except CampaignError as e:
        _fail(f"{file}: {e}")
        return
    rd = store.reader(out)
    counts = {k: sum(s == k for _, s in st) for k in (runner.DONE, runner.STALE, runner.FAILED_STATUS, runner.MISSING)}
    fp = runner.fingerprint()
    console.print(plain(f"{c.name}: {len(st)} runs — " + ", ".join(f"{v} {k}" for k, v in counts.items())
                        + f" (aqmlab {fp['aqmlab_version']}, core {fp['core_hash']}, Python {fp['python_hash']}; {out})"), highlight=False)
    who = store.holder(out)
    if who:
        console.print(plain(f"in use by process {who.get('pid')} on {who.get('host')} since {who.get('since')}"), highlight=False)
    pending = [(r, s) for r, s in st if s != runner.DONE]
    if pending:
        t = Table()
        for col in ["run", "status", *[a.name for a in c.axes], "seed", "detail"]:
            t.add_column(plain(col))
        for r, s in pending if show_all else pending[:20]:
            detail = ""
            if s == runner.STALE:
                m = rd.meta(r.key) or {}
                detail = f"made by {store.describe(m)}"
            elif s == runner.FAILED_STATUS:
                rec = rd.failure(r.key) or {}
                detail = str(rec.get("cause", rec.get("error", "")))[:160]
            t.add_row(r.key, s, *(plain(v) for v in r.labels(c.axes).values()), str(r.seed), plain(detail))
        console.print(t)
        if len(pending) > 20 and not show_all:
            console.print(f"… {len(pending) - 20} more (--all)", highlight=False)


@campaign_group.command("results")
@_common
@click.option("--by", default="", help="Comma-separated axes (or columns) to group by, e.g. qdisc,flows (default: every axis).")
@click.option("-m", "--metric", "metrics", multiple=True, help="Metric column(s) to summarize (default: goodput, sojourn, drops, Jain index).")
@click.option("--flows", "per_flow", is_flag=True, help="Summarize the per-flow table instead of the per-run table.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the table as CSV here.")
def results_cmd(file: Path, out: Path | None, overrides: tuple[str, ...], by: str, metrics: tuple[str, ...], per_flow: bool, csv_path: Path | None) -> None:
    """Means over seeds with 95% confidence intervals (Student t), grouped by axes."""
    from aqmlab.campaign import dataset
    from aqmlab.campaign.stats import metric_columns, resolve_columns, summarize

    c = _load(file, overrides)
    out = _out(c, out)
    try:
        df = dataset.load(out, "flows" if per_flow else "runs")
        keys = resolve_columns(df, [b.strip() for b in by.split(",") if b.strip()] or [a.name for a in c.axes], "--by")
        axes_cols = [a.column for a in c.axes]
        default = ["goodput_bps", "delay_mean_s", "loss_frac"] if per_flow else ["goodput_total_bps", "queue_sojourn_mean_s", "queue_drop_frac", "jain_index"]
        chosen = resolve_columns(df, list(metrics), "--metric") if metrics else [m for m in default if m in df.columns] or metric_columns(df, axes_cols)[:4]
        s = summarize(df, keys, chosen)
    except (CampaignError, FileNotFoundError) as e:
        _fail(str(e))
        return
    t = Table(title=plain(f"{c.name}: mean ± 95% CI (Student t over n runs)"), title_justify="left")
    for k in keys:
        t.add_column(plain(k))
    t.add_column("n", justify="right")
    for m in chosen:
        t.add_column(plain(m), justify="right")
    for _, r in s.iterrows():
        cells = [f"{r[f'{m}_mean']:.4g}" + ("" if r[f"{m}_ci95"] != r[f"{m}_ci95"] else f" ± {r[f'{m}_ci95']:.2g}") for m in chosen]
        t.add_row(*(plain(r[k]) for k in keys), str(int(r["n"])), *cells)
    console.print(t)
    if csv_path is not None:
        from aqmlab.results import write_atomic

        write_atomic(csv_path, lambda p: s.to_csv(p, index=False))
        console.print(f"table written to {csv_path}", highlight=False)


@campaign_group.command("report")
@_common
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), help="Report file (default: OUT/report.html).")
def report_cmd(file: Path, out: Path | None, overrides: tuple[str, ...], html_path: Path | None) -> None:
    """Write a self-contained HTML report of the campaign (tables, figures, file, versions)."""
    from aqmlab.campaign import report

    c = _load(file, overrides)
    out = _out(c, out)
    try:
        p = report.write(c, out, html_path)
    except (CampaignError, FileNotFoundError) as e:
        _fail(str(e))
        return
    console.print(f"report: {p}", highlight=False)


# ---- aqmlab plot --------------------------------------------------------------------------------

def _dataset(out: Path, table: str):
    from aqmlab.campaign import dataset

    try:
        return dataset.load(out, table)
    except FileNotFoundError as e:
        _fail(str(e))


def _by(df, by: str | None, out: Path) -> str:
    from aqmlab.campaign.stats import resolve_columns

    from aqmlab.campaign import dataset

    if by is None:
        recorded = dataset.axes(out)
        by = recorded[0]["column"] if recorded else "queue_qdisc"
    return resolve_columns(df, [by], "--by")[0]


@click.group("plot")
def plot_group() -> None:
    """Figures of a campaign (OUT: its directory) or of one run (a results directory)."""


def _plot_opts(f):
    f = click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Figure file (.png, .pdf, .svg).")(f)
    f = click.option("--where", multiple=True, metavar="COLUMN=VALUE", help="Keep only rows where COLUMN=VALUE, e.g. --where delay=40ms (repeatable).")(f)
    f = click.option("--by", help="Axis to compare (default: the campaign's first axis).")(f)
    return click.argument("out", type=click.Path(file_okay=False, exists=True, path_type=Path))(f)


def _done(fig, output: Path) -> None:
    from aqmlab.campaign import plot

    try:
        plot.save(fig, output)
    except (OSError, ValueError) as e:
        _fail(f"cannot write {output}: {e}", 1)
    console.print(f"figure written to {output}", highlight=False)


@plot_group.command("delay-goodput")
@_plot_opts
@click.option("--facet", help="One panel per value of this axis.")
def plot_delay_goodput(out: Path, by: str | None, where: tuple[str, ...], output: Path, facet: str | None) -> None:
    """Queueing delay vs goodput per run, with one-standard-deviation ellipses (RFC 7928)."""
    from aqmlab.campaign import plot
    from aqmlab.campaign.stats import resolve_columns

    runs = _dataset(out, "runs")
    try:
        b = _by(runs, by, out)
        f = resolve_columns(runs, [facet], "--facet")[0] if facet else None
        _done(plot.delay_goodput(plot.select(runs, where), b, facet=f), output)
    except CampaignError as e:
        _fail(str(e))


@plot_group.command("fairness")
@_plot_opts
@click.option("--hue", help="One bar per value of this axis within each group.")
def plot_fairness(out: Path, by: str | None, where: tuple[str, ...], output: Path, hue: str | None) -> None:
    """Bars of Jain's fairness index (mean, 95% t interval)."""
    from aqmlab.campaign import plot
    from aqmlab.campaign.stats import resolve_columns

    runs = _dataset(out, "runs")
    try:
        b = _by(runs, by, out)
        h = resolve_columns(runs, [hue], "--hue")[0] if hue else None
        _done(plot.fairness(plot.select(runs, where), b, hue=h), output)
    except CampaignError as e:
        _fail(str(e))


@plot_group.command("cdf")
@_plot_opts
def plot_cdf(out: Path, by: str | None, where: tuple[str, ...], output: Path) -> None:
    """CDFs of sojourn time and of per-flow throughput."""
    from aqmlab.campaign import plot

    runs, flows = _dataset(out, "runs"), _dataset(out, "flows")
    try:
        b = _by(runs, by, out)
        _done(plot.cdfs(out, plot.select(runs, where), flows, b), output)
    except CampaignError as e:
        _fail(str(e))


@plot_group.command("timeseries")
@click.argument("source", type=click.Path(file_okay=False, path_type=Path))
@click.option("--where", multiple=True, metavar="COLUMN=VALUE", help="With a campaign directory: the run to show, e.g. --where qdisc=PIE (repeatable).")
@click.option("--seed", type=int, help="With a campaign directory: the seed of the run to show (default: the first).")
@click.option("--queue", help="Queue to show (default: the campaign's studied queue, or the monitored queue whose link carried the most bytes).")
@click.option("--flows", "max_flows", type=click.IntRange(min=0), default=4, show_default=True, help="Most TCP flows whose cwnd is drawn.")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Figure file (.png, .pdf, .svg).")
def plot_timeseries(source: Path, where: tuple[str, ...], seed: int | None, queue: str | None, max_flows: int, output: Path) -> None:
    """Queue length, AQM state, sojourn and cwnd over time for one run.

    SOURCE is a run's results directory (`aqmlab run -o DIR`, or OUT/runs/<key>) or a campaign
    directory, in which --where and --seed pick the run (the first that matches)."""
    from aqmlab.campaign import plot

    try:
        run_dir = source
        if (source / "dataset").is_dir():
            runs = plot.select(_dataset(source, "runs"), [*where, *([f"seed={seed}"] if seed is not None else [])])
            row = runs.iloc[0]
            run_dir, queue = source / "runs" / row["run"], queue or row["queue"]
            console.print(f"run {row['run']} (seed {row['seed']})", highlight=False)
        elif where or seed is not None:
            raise CampaignError("--where", f"{source} is a single run; --where and --seed choose a run in a campaign directory")
        elif not source.is_dir() and not (source.parent.name == "runs" and (source.parent.parent / "aqmlab-store.json").exists()):
            raise CampaignError("", f"{source}: no such run (a results directory, a campaign directory, or OUT/runs/<key>)")
        _done(plot.timeseries(run_dir, queue, max_flows), output)
    except CampaignError as e:
        _fail(str(e))
