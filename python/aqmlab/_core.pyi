"""Type stub of the private compiled module (crates/aqmlab-py)."""

from typing import Any

__version__: str

class ScenarioError(ValueError):
    """A scenario was rejected."""

    path: str
    line: int | None
    detail: str

def run(text: str, seed: int | None = None) -> dict[str, Any]:
    """Runs a scenario (TOML text). Returns {"summary": JSON text, "resolved": TOML text,
    "tables": {name: {column: ("f64", bytes) | ("u64", bytes) | ("cat", u32 code bytes, categories)}}}."""

def validate(text: str) -> str:
    """Checks a scenario without running it; returns the resolved scenario (TOML text)."""

def qdiscs() -> list[tuple[str, str]]:
    """Registered queue disciplines as (name, description)."""
