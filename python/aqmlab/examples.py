"""The scenarios and campaign files shipped inside the package (`aqmlab/scenarios/`), for
`aqmlab examples`: list them, and copy one, several or all into a directory as
`DIR/scenarios/<group>/<file>.toml`, so the README's commands (`aqmlab run
scenarios/examples/mm1k.toml`) work as written from DIR, with or without a checkout."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Sequence

from aqmlab._toml import tomllib


@dataclass(frozen=True)
class Example:
    """One shipped file."""

    name: str          # path under scenarios/, e.g. "examples/mm1k.toml"
    kind: str          # "scenario" or "campaign"
    description: str
    needs: tuple[str, ...] = ()   # other shipped files it reads (a campaign's base scenario)


def _root() -> Path:
    return Path(str(resources.files("aqmlab").joinpath("scenarios")))


def _describe(text: str, doc: dict) -> str:
    head = doc.get("campaign", {}) if isinstance(doc.get("campaign"), dict) else doc
    d = head.get("description") if isinstance(head, dict) else None
    if isinstance(d, str) and d:
        return d
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def shipped() -> list[Example]:
    """Every shipped scenario and campaign file, by group then name."""
    root = _root()
    out = []
    for p in sorted(root.rglob("*.toml")):
        rel = p.relative_to(root).as_posix()
        text = p.read_text(encoding="utf-8")
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            doc = {}
        camp = doc.get("campaign") if isinstance(doc.get("campaign"), dict) else None
        needs: tuple[str, ...] = ()
        if camp is not None and isinstance(camp.get("base"), str):
            base = (PurePosixPath(rel).parent / camp["base"]).as_posix()
            needs = (base,)
        out.append(Example(rel, "campaign" if camp is not None else "scenario", _describe(text, doc), needs))
    return out


def find(names: Sequence[str]) -> list[Example]:
    """The shipped files named (as `examples/mm1k.toml`, `examples/mm1k` or, when unique, `mm1k`),
    each with the files it needs; an unknown or ambiguous name is a ValueError listing them."""
    all_ = {e.name: e for e in shipped()}
    chosen: dict[str, Example] = {}
    for n in names:
        key = n if n.endswith(".toml") else n + ".toml"
        hits = [e for e in all_.values() if e.name == key] or [e for e in all_.values() if PurePosixPath(e.name).name == key]
        if len(hits) != 1:
            what = "is ambiguous" if hits else "is not a shipped file"
            raise ValueError(f"{n!r} {what}; shipped: {', '.join(all_)}")
        for e in (hits[0], *(all_[d] for d in hits[0].needs if d in all_)):
            chosen.setdefault(e.name, e)
    return list(chosen.values())


def copy(dest: str | Path, names: Sequence[str] = (), force: bool = False) -> list[Path]:
    """Copies the named shipped files (all if none are named) to `dest/scenarios/...`; returns
    the paths written. An existing file is an error unless `force` (nothing is written then)."""
    items = find(names) if names else shipped()
    root = _root()
    target = Path(dest) / "scenarios"
    pairs = [(root / e.name, target / e.name) for e in items]
    if not force:
        exist = [str(t) for _, t in pairs if t.exists()]
        if exist:
            raise FileExistsError(f"{exist[0]} exists{f' (and {len(exist) - 1} more)' if len(exist) > 1 else ''}; add --force to replace")
    for src, t in pairs:
        t.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, t)
    return [t for _, t in pairs]
