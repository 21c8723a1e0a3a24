"""Type stub of the private compiled module (crates/aqmlab-py)."""

from typing import Any, Callable

__version__: str

class ScenarioError(ValueError):
    """A scenario was rejected."""

    path: str
    line: int | None
    detail: str

def run(
    text: str, seed: int | None = None, progress: Callable[[float, float], object] | None = None, allow_large: bool = False
) -> dict[str, Any]:
    """Runs a scenario (TOML text); `progress(simulated_s, duration_s)` is called every 2^18 events.
    Returns {"summary": JSON text, "resolved": TOML text,
    "tables": {name: {column: ("f64", bytes) | ("u64", bytes) | ("cat", u32 code bytes, categories)}},
    "files": {relative path: bytes}}. Ctrl-C raises KeyboardInterrupt; `allow_large` lifts [limits]."""

def validate(text: str, allow_large: bool = False) -> str:
    """Checks a scenario without running it; returns the resolved scenario (TOML text)."""

def qdiscs() -> list[tuple[str, str]]:
    """Registered queue disciplines as (name, description)."""

def red_curve(kind: str, params: str, avgs: list[float], rate_bps: int = 10_000_000) -> dict[str, Any]:
    """Drop curve of a RED-family discipline: {"p": [...], "min": float, "forced_at": float,
    "resolved": TOML text}. `params` is TOML text with the scenario's parameter names."""

def nlgred1_params(k: float, min_th: float = 100.0, max_th: float = 300.0, max_p0: float = 0.1) -> tuple[float, float]:
    """NLGRED_1(k) -> (max_p, j)."""

def nlgred2_params(
    m: float, min_th: float = 100.0, max_th: float = 300.0, max_p0: float = 0.1, p_target: float = 0.2
) -> tuple[float, float]:
    """NLGRED_2(m) -> (k, j)."""

def red_trace(
    kind: str, params: str, events: list[tuple[int, int, int, bool, float]], rate_bps: int = 10_000_000
) -> tuple[list[int], list[float]]:
    """Runs a RED-family discipline on a trace of (kind 0=arrival/1=dequeue, t_ns, size, ect, u).
    Returns (codes, averages): 0 enqueued, 1 marked, 2 early, 3 forced, 4 overflow, 5 dequeued, 6 empty."""

def schema() -> dict[str, dict[str, Any]]:
    """The declared result schema: {table: {"placement": "table" | "table+summary" | "summary", "doc": str,
    "extra": str | None, "columns": [{"name": str, "type": "f64" | "u64" | "str", "unit": str, "doc": str}]}}."""
