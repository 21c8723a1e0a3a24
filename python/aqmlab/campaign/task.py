"""One run for the runner to do (`Task`): what the pool sends a local worker (as a plain tuple)
and what a Dask worker receives."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Task:
    """One run to do: its key, the scenario text the core runs, the parameters that name it
    (for tables and failure records) and, if not None, the seed that replaces the scenario's."""

    key: str
    scenario: str
    params: dict = field(default_factory=dict, compare=False, hash=False)
    seed: int | None = None
    #: `path=value` assignments the core applies to `scenario` first (as `--set`).
    sets: tuple[str, ...] = ()
    #: The result tables to hand back (None: all; an empty tuple: only the summary).
    tables: tuple[str, ...] | None = None

    def wire(self) -> tuple:
        """What a local worker needs, as builtin types (sent with `marshal`; see `worker.serve`)."""
        return (self.key, self.scenario, self.seed, list(self.sets), None if self.tables is None else list(self.tables))
