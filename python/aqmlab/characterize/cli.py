"""Command `aqmlab characterize` (registered on the main `aqmlab` group in `aqmlab.cli`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click
from rich.table import Table

from aqmlab.campaign.cli import _fail, console
from aqmlab.campaign.errors import StoreError
from aqmlab.campaign.spec import CampaignError
from aqmlab.termsafe import clean, plain


@click.command("characterize")
@click.argument("disciplines", nargs=-1)
@click.option("--list", "show_list", is_flag=True, help="List every RFC 7928 section with its scenario set, or why it is not run.")
@click.option("--quick", is_flag=True, help="Smoke run: 20-s runs, one seed, fewer axis values.")
@click.option("--sets", "set_names", metavar="NAMES", help="Comma-separated scenario sets (names or sections) to run (default: all).")
@click.option("--seeds", type=click.IntRange(1, 1000), help="Seeds per configuration (default 3, --quick 1).")
@click.option("-o", "--out", type=click.Path(file_okay=False, path_type=Path), default=Path("out/characterize"), show_default=True,
              help="Output directory (one campaign per set under sets/, metrics.parquet, report.html).")
@click.option("-j", "--jobs", "workers", type=click.IntRange(min=1), help="Local worker processes (default: all cores).")
@click.option("--dask", "dask_address", metavar="ADDRESS", help="Run on the Dask scheduler at ADDRESS.")
@click.option("--no-report", is_flag=True, help="Skip report.html.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--progress/--no-progress", default=None, help="Show progress bars (default: only on a terminal).")
@click.option("--force", is_flag=True, help="Write into -o even if it holds files that are not an aqmlab characterization's.")
def characterize_cmd(disciplines: tuple[str, ...], show_list: bool, quick: bool, set_names: str | None, seeds: int | None, out: Path,
                     workers: int | None, dask_address: str | None, no_report: bool, quiet: bool, progress: bool | None, force: bool) -> None:
    """Run the RFC 7928 AQM characterization suite for DISCIPLINES (qdisc names, optionally
    NAME:key=value,...), e.g. `aqmlab characterize pfifo red pie codel fq_codel` (docs/characterize.md)."""
    from aqmlab import characterize as ch

    if show_list:
        t = Table(title="RFC 7928 scenario sets")
        for col in ("section", "set", "topic", "status"):
            t.add_column(col, overflow="fold")
        for row in ch.listing():
            t.add_row(*(clean(x) for x in row))
        console.print(t)
        return
    show = (not quiet) and (progress if progress is not None else sys.stderr.isatty())
    names = [x.strip() for x in set_names.split(",") if x.strip()] if set_names else None
    t0 = time.perf_counter()
    try:
        outcomes = ch.run(list(disciplines), out, sets=names, quick=quick, seeds=seeds, workers=workers, dask=dask_address,
                          progress=show, report=not no_report, force=force)
    except CampaignError as e:
        _fail(str(e))
        return
    except StoreError as e:
        _fail(str(e), e.code)
        return
    failed = sum(o.failed for o in outcomes)
    if not quiet:
        where = f"on {dask_address}" if dask_address else "locally"
        for o in outcomes:
            console.print(plain(f"§{o.set.section} {o.set.name}: {o.runs} runs ({o.ran} run {where}, {o.failed} failed) in {o.wall_s:.1f} s"),
                          highlight=False)
        console.print(plain(f"{sum(o.runs for o in outcomes)} runs in {time.perf_counter() - t0:.1f} s; metrics in {out}/metrics.parquet"
                            + ("" if no_report else f"; report: {out}/report.html")), highlight=False)
    if failed:
        _fail(f"{failed} runs failed; see {out}/sets/*/failed/", 1)
