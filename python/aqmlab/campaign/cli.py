"""Commands `aqmlab campaign run|status|results|report` and `aqmlab plot ...` (registered on
the main `aqmlab` group in `aqmlab.cli`)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from aqmlab.campaign.errors import StoreError
from aqmlab.campaign.spec import Campaign, CampaignError, load_campaign
from aqmlab.termsafe import clean, plain

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
    # the report (pandas, matplotlib) only after the runs: importing pandas starts threads, and
    # local workers are forked from a process without any (campaign.pool)
    from aqmlab.campaign import runner

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
        from aqmlab.campaign import report

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
@click.option("--where", multiple=True, metavar="COLUMN=VALUE", help="Keep only rows where COLUMN=VALUE (or !=; VALUE may be a list a,b), e.g. --where delay=40ms (repeatable).")
@click.option("--flows", "per_flow", is_flag=True, help="Summarize the per-flow table instead of the per-run table.")
@click.option("--classes", "per_class", is_flag=True, help="Summarize the per-class table (DualPI2's L and C queues, ...) of the studied queue.")
@click.option("--raw", is_flag=True, help="Print values in base units (s, bit/s) with the column names, not in ms and Mb/s.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), help="Also write the table as CSV here (base units).")
def results_cmd(file: Path, out: Path | None, overrides: tuple[str, ...], by: str, metrics: tuple[str, ...], where: tuple[str, ...],
                per_flow: bool, per_class: bool, raw: bool, csv_path: Path | None) -> None:
    """Means over seeds with 95% confidence intervals (Student t), grouped by axes.

    Every axis not in --by that varies inside a group is named as pooled, in the table's
    caption and in a warning (the interval then mixes unlike conditions)."""
    from aqmlab.campaign import dataset, labels
    from aqmlab.campaign.stats import metric_columns, pooled_axes, pooling_note, resolve_columns, select, summarize

    c = _load(file, overrides)
    out = _out(c, out)
    if per_flow and per_class:
        _fail("--flows and --classes choose different tables; give one")
    table = "flows" if per_flow else "queue_classes" if per_class else "runs"
    try:
        df = dataset.load(out, table)
        if per_class:
            if df.empty:
                raise CampaignError("--classes", "the dataset has no per-class rows (no discipline with several queues, or made before aqmlab had them)")
            runs = dataset.load(out, "runs")
            df = df.merge(runs[["run", "queue"]], on=["run", "queue"])   # the studied queue's classes only
        if where:
            df = select(df, list(where))
        axes_cols = [a.column for a in c.axes]
        keys = resolve_columns(df, [b.strip() for b in by.split(",") if b.strip()] or [a.name for a in c.axes], "--by")
        if per_class and "class" not in keys:
            keys = [*keys, "class"]
        default = (["goodput_bps", "delay_mean_s", "loss_frac"] if per_flow else
                   ["sojourn_mean_s", "sojourn_p99_s", "throughput_bps", "mark_frac", "drop_frac"] if per_class else
                   ["goodput_total_bps", "queue_sojourn_mean_s", "queue_drop_frac", "jain_index"])
        chosen = resolve_columns(df, list(metrics), "--metric") if metrics else [m for m in default if m in df.columns] or metric_columns(df, axes_cols)[:4]
        s = summarize(df, keys, chosen)
        pooled = pooled_axes(df, keys, axes_cols)
    except (CampaignError, FileNotFoundError) as e:
        _fail(str(e))
        return
    note = pooling_note({a: v for a, v in pooled.items()})
    seeds = f"{len(set(df['seed']))} seeds"
    if pooled:
        err_console.print(plain("warning:", "bold yellow"), plain(f"each group {note}, besides {seeds}: the intervals mix unlike conditions "
                          f"(add them to --by to separate them)"), highlight=False, soft_wrap=True)
    caption = f"{c.name}: mean ± 95% CI (Student t over n runs; {seeds}" + (f"; {note}" if note else "; nothing else pooled") + ")"
    t = Table(title=escape(clean(caption)), title_justify="left")
    for k in keys:
        t.add_column(escape(k if raw else labels.axis_name(k)))
    t.add_column("n", justify="right")
    for m in chosen:
        t.add_column(escape(m if raw else labels.header(m) + ("" if not pooled else " (pooled)")), justify="right")
    for _, r in s.iterrows():
        if raw:
            cells = [f"{r[f'{m}_mean']:.4g}" + ("" if r[f"{m}_ci95"] != r[f"{m}_ci95"] else f" ± {r[f'{m}_ci95']:.2g}") for m in chosen]
            keys_txt = [str(r[k]) for k in keys]
        else:
            cells = [labels.cell(m, r[f"{m}_mean"], r[f"{m}_ci95"]) for m in chosen]
            keys_txt = [labels.value(k, r[k]) for k in keys]
        t.add_row(*(escape(clean(x)) for x in keys_txt), str(int(r["n"])), *cells)
    console.print(t)
    if csv_path is not None:
        from aqmlab.results import write_atomic

        write_atomic(csv_path, lambda p: s.to_csv(p, index=False))
        console.print(f"table written to {csv_path}", highlight=False)


@campaign_group.command("report")
@_common
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path), help="Report file (default: OUT/report.html).")
@click.option("--timeseries-by", default="", metavar="AXES", help="Comma-separated axes: one time-series figure per value of each (besides one per value of the first axis), e.g. mix,rtt.")
def report_cmd(file: Path, out: Path | None, overrides: tuple[str, ...], html_path: Path | None, timeseries_by: str) -> None:
    """Write a self-contained HTML report of the campaign (tables, figures, file, versions)."""
    from aqmlab.campaign import report

    c = _load(file, overrides)
    out = _out(c, out)
    try:
        p = report.write(c, out, html_path, [x.strip() for x in timeseries_by.split(",") if x.strip()])
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


def _pair(what: str):
    """A click callback reading "LOW,HIGH" (or "W,H") into a pair of floats."""
    def parse(ctx, param, value):
        if value is None:
            return None
        try:
            a, b = (float(x) for x in value.split(","))
        except ValueError:
            raise click.BadParameter(f"expected {what}, e.g. 0,50") from None
        return (a, b)
    return parse


def _plot_opts(f):
    """The options every plot command takes: data selection, then presentation."""
    f = click.option("--format", "fmt", type=click.Choice(["png", "pdf", "svg"]), help="Figure format (default: from the file's suffix).")(f)
    f = click.option("--dpi", type=click.IntRange(min=20, max=2400), default=150, show_default=True, help="Resolution of a PNG (and of raster parts of a PDF/SVG).")(f)
    f = click.option("--size", callback=_pair("W,H in inches"), metavar="W,H", help="Figure size in inches, e.g. 7,3.5.")(f)
    f = click.option("--title", help="Figure title.")(f)
    f = click.option("--ylabel", help="y-axis label.")(f)
    f = click.option("--xlabel", help="x-axis label.")(f)
    f = click.option("--zero-y/--fit-y", "zero_y", default=None, help="y axis from zero, or fitted to the data (then drawn with break marks); default: per figure.")(f)
    f = click.option("--ylim", callback=_pair("LOW,HIGH"), metavar="LOW,HIGH", help="y-axis bounds, in the axis's unit (ms, Mb/s, ...).")(f)
    f = click.option("--xlim", callback=_pair("LOW,HIGH"), metavar="LOW,HIGH", help="x-axis bounds, in the axis's unit (ms, Mb/s, ...).")(f)
    f = click.option("--log-y", is_flag=True, help="Logarithmic y axis.")(f)
    f = click.option("--log-x", is_flag=True, help="Logarithmic x axis.")(f)
    f = click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Figure file (.png, .pdf, .svg).")(f)
    return f


def _campaign_opts(f):
    f = _plot_opts(f)
    f = click.option("--where", multiple=True, metavar="COLUMN=VALUE", help="Keep only rows where COLUMN=VALUE, COLUMN!=VALUE, or COLUMN=A,B (a list), e.g. --where delay=40ms --where 'qdisc!=pfifo' (repeatable).")(f)
    f = click.option("--by", help="Axis to compare (default: the campaign's first axis).")(f)
    return click.argument("out", type=click.Path(file_okay=False, exists=True, path_type=Path))(f)


#: The presentation options (`plot.FigureOptions`) among a command's keyword arguments.
_FIG = ("log_x", "log_y", "xlim", "ylim", "xlabel", "ylabel", "title", "zero_y")


def _fig_kwargs(kw: dict) -> dict:
    out = {k: kw.pop(k) for k in _FIG}
    size = kw.pop("size")
    if size is not None:
        out["figsize"] = size
    return out


def _done(fig, output: Path, dpi: int = 150, fmt: str | None = None) -> None:
    from aqmlab.campaign import plot

    try:
        plot.save(fig, output, dpi=dpi, fmt=fmt)
    except (OSError, ValueError) as e:
        _fail(f"cannot write {output}: {e}", 1)
    console.print(f"figure written to {output}", highlight=False)


def _note(df, keys: list, out: Path) -> str:
    """The caption note naming the axes pooled in figures grouped by `keys` (warned too)."""
    from aqmlab.campaign import dataset
    from aqmlab.campaign.stats import pooled_axes, pooling_note

    pooled = pooled_axes(df, [k for k in keys if k], [a["column"] for a in dataset.axes(out)])
    note = pooling_note(pooled)
    if note:
        err_console.print(plain("warning:", "bold yellow"), plain(f"the figure's groups are {note} (add --facet or --where to separate them)"),
                          highlight=False, soft_wrap=True)
    return note


@plot_group.command("delay-goodput")
@_campaign_opts
@click.option("--facet", help="One panel column per value of this axis.")
@click.option("--facet-row", help="One panel row per value of this axis.")
@click.option("--no-classes", is_flag=True, help="One point per run even for a discipline with L4S and Classic queues.")
def plot_delay_goodput(out: Path, by: str | None, where: tuple[str, ...], output: Path, facet: str | None, facet_row: str | None,
                       no_classes: bool, dpi: int, fmt: str | None, **kw) -> None:
    """Queueing delay vs goodput per run, with one-standard-deviation ellipses (RFC 7928)."""
    from aqmlab.campaign import dataset, plot
    from aqmlab.campaign.stats import resolve_columns

    runs = _dataset(out, "runs")
    try:
        b = _by(runs, by, out)
        f = resolve_columns(runs, [facet], "--facet")[0] if facet else None
        fr = resolve_columns(runs, [facet_row], "--facet-row")[0] if facet_row else None
        sel = plot.select(runs, where)
        classes = None if no_classes else dataset.load(out, "queue_classes")
        _done(plot.delay_goodput(sel, b, facet=f, facet_row=fr, classes=classes, note=_note(sel, [b, f, fr], out), **_fig_kwargs(kw)),
              output, dpi, fmt)
    except CampaignError as e:
        _fail(str(e))


@plot_group.command("fairness")
@_campaign_opts
@click.option("--hue", help="One bar per value of this axis within each group.")
def plot_fairness(out: Path, by: str | None, where: tuple[str, ...], output: Path, hue: str | None, dpi: int, fmt: str | None, **kw) -> None:
    """Bars of Jain's fairness index (mean, 95% t interval)."""
    from aqmlab.campaign import plot
    from aqmlab.campaign.stats import resolve_columns

    runs = _dataset(out, "runs")
    try:
        b = _by(runs, by, out)
        h = resolve_columns(runs, [hue], "--hue")[0] if hue else None
        sel = plot.select(runs, where)
        _done(plot.fairness(sel, b, hue=h, note=_note(sel, [b, h], out), **_fig_kwargs(kw)), output, dpi, fmt)
    except CampaignError as e:
        _fail(str(e))


@plot_group.command("cdf")
@_campaign_opts
def plot_cdf(out: Path, by: str | None, where: tuple[str, ...], output: Path, dpi: int, fmt: str | None, **kw) -> None:
    """CDFs of sojourn time and of per-flow throughput."""
    from aqmlab.campaign import plot

    runs, flows = _dataset(out, "runs"), _dataset(out, "flows")
    try:
        b = _by(runs, by, out)
        sel = plot.select(runs, where)
        fk = _fig_kwargs(kw)
        for k in ("ylim", "ylabel", "zero_y", "log_y"):
            fk.pop(k, None)
        _done(plot.cdfs(out, sel, flows, b, note=_note(sel, [b], out), **fk), output, dpi, fmt)
    except CampaignError as e:
        _fail(str(e))


@plot_group.command("timeseries")
@click.argument("source", type=click.Path(file_okay=False, path_type=Path))
@_plot_opts
@click.option("--where", multiple=True, metavar="COLUMN=VALUE", help="With a campaign directory: the run to show, e.g. --where qdisc=PIE (repeatable).")
@click.option("--seed", type=int, help="With a campaign directory: the seed of the run to show (default: the first).")
@click.option("--queue", help="Queue to show (default: the campaign's studied queue, or the monitored queue whose link carried the most bytes).")
@click.option("--flows", "max_flows", type=click.IntRange(min=0), default=4, show_default=True, help="Most TCP flows whose cwnd is drawn.")
def plot_timeseries(source: Path, where: tuple[str, ...], seed: int | None, queue: str | None, max_flows: int, output: Path,
                    dpi: int, fmt: str | None, **kw) -> None:
    """Queue length, AQM state, sojourn and cwnd over time for one run.

    SOURCE is a run's results directory (`aqmlab run -o DIR`, or OUT/runs/<key>) or a campaign
    directory, in which --where and --seed pick the run (the first that matches)."""
    from aqmlab.campaign import dataset, labels, plot

    try:
        run_dir = source
        context = ""
        if (source / "dataset").is_dir():
            runs = plot.select(_dataset(source, "runs"), [*where, *([f"seed={seed}"] if seed is not None else [])])
            row = runs.iloc[0]
            run_dir, queue = source / "runs" / row["run"], queue or row["queue"]
            cols = [a["column"] for a in dataset.axes(source)]
            context = " · ".join([*(f"{labels.axis_name(c)} = {labels.value(c, row[c])}" for c in cols), f"seed {row['seed']}"])
            console.print(f"run {row['run']} ({context})", highlight=False)
        elif where or seed is not None:
            raise CampaignError("--where", f"{source} is a single run; --where and --seed choose a run in a campaign directory")
        elif not source.is_dir() and not (source.parent.name == "runs" and (source.parent.parent / "aqmlab-store.json").exists()):
            raise CampaignError("", f"{source}: no such run (a results directory, a campaign directory, or OUT/runs/<key>)")
        fk = _fig_kwargs(kw)
        fk.pop("zero_y", None)
        _done(plot.timeseries(run_dir, queue, max_flows, context=context, **fk), output, dpi, fmt)
    except CampaignError as e:
        _fail(str(e))
