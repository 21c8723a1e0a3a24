"""Type stub of the private compiled module (crates/aqmlab-py)."""

from typing import Any, Callable

__version__: str

class ScenarioError(ValueError):
    """A scenario was rejected."""

    path: str
    line: int | None
    file: str | None  # the graph file the line is in (None: the scenario itself)
    detail: str

def run(
    text: str,
    seed: int | None = None,
    progress: Callable[[float, float], object] | None = None,
    allow_large: bool = False,
    overrides: list[str] = ...,
    base_dir: str | None = None,
    allow_any_path: bool = False,
) -> dict[str, Any]:
    """Loads (overrides `path=value`, a graph file read relative to `base_dir`), resolves and runs a
    scenario (TOML text); `progress(simulated_s, duration_s)` is called every 2^18 events.
    Returns {"summary": JSON text, "resolved": TOML text, "hash": canonical scenario hash,
    "warnings": [{"path", "old", "new", "message"}],
    "tables": {name: {column: ("f64", bytes) | ("u64", bytes) | ("cat", u32 code bytes, categories)}},
    "files": {relative path: bytes}}. Ctrl-C raises KeyboardInterrupt; `allow_large` lifts [limits]."""

def validate(
    text: str, allow_large: bool = False, overrides: list[str] = ..., base_dir: str | None = None, allow_any_path: bool = False
) -> str:
    """Checks a scenario without running it; returns the resolved scenario (TOML text)."""

def load(text: str, overrides: list[str] = ..., base_dir: str | None = None, allow_any_path: bool = False) -> str:
    """Applies overrides and expands a graph file; returns the document as TOML text."""

def resolve(
    text: str,
    seed: int | None = None,
    allow_large: bool = False,
    overrides: list[str] = ...,
    base_dir: str | None = None,
    allow_any_path: bool = False,
) -> dict[str, Any]:
    """Loads, resolves and builds without running: {"resolved": TOML text, "hash": str, "warnings": [...]}."""

def scenario_hash(resolved: str) -> str:
    """The canonical hash of a resolved scenario's text (SHA-256, hex)."""

def locate(text: str, path: str) -> int | None:
    """The line (1-based) of the value at key path `path` in TOML `text`, if found."""

def sources() -> list[tuple[str, str]]:
    """Registered open-loop traffic sources as (name, description)."""

def qdiscs() -> list[tuple[str, str]]:
    """Registered queue disciplines as (name, description)."""

def congestion_controls() -> list[tuple[str, str]]:
    """Registered TCP congestion controls as (name, description)."""

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

def fluid_schema() -> dict[str, dict[str, Any]]:
    """The fluid model's declared tables and summary sections, in the form of `schema()`."""

def fluid(
    text: str,
    seed: int | None = None,
    allow_large: bool = False,
    overrides: list[str] = ...,
    base_dir: str | None = None,
    allow_any_path: bool = False,
    step: float | None = None,
    sample: float | None = None,
) -> dict[str, Any]:
    """Integrates the fluid model of a scenario's bottleneck; the same shape as `run`'s result."""

def stability(
    text: str,
    seed: int | None = None,
    allow_large: bool = False,
    overrides: list[str] = ...,
    base_dir: str | None = None,
    allow_any_path: bool = False,
    omegas: list[float] = ...,
) -> str:
    """The linearized TCP/AQM loop of a scenario's bottleneck as JSON text."""

def design_pi(
    flows_min: float, rtt_max: float, capacity_pps: float, sample_hz: float = 160.0, crossover: float | None = None, rule: str = "paper"
) -> dict[str, Any]:
    """PI design (Hollot et al. 2001) and the margins it gives."""

def design_red(
    flows_min: float, rtt_max: float, capacity_pps: float, min_th: float, max_th: float, w_q: float = 0.002, spread: str = "wait"
) -> dict[str, Any]:
    """RED's parameter rule (Hollot et al. 2001) and the margins it gives."""
