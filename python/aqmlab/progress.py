"""A progress bar of simulated time for one long run (rich, on stderr)."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator


@contextlib.contextmanager
def sim_progress(enabled: bool, label: str = "simulating") -> Iterator[Callable[[float, float], None] | None]:
    """Yields a callback `progress(simulated_s, duration_s)` for `aqmlab.run(progress=...)`
    that draws a bar of simulated time, or None when disabled (the run is then not observed)."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[sim]}"),
                   TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task(label, total=None, sim="")

    def update(now: float, end: float) -> None:
        bar.update(task, completed=now, total=end, sim=f"{now:.1f} / {end:g} s simulated")

    with bar:
        yield update
