"""Topologies from graph files: `[topology] file = "net.graphml"` (or an edge list) becomes an
explicit `kind = "graph"` topology before the scenario reaches the core.

Formats, chosen by extension:
- GraphML (`.graphml`, `.xml`): nodes by `id`; each edge's rate and delay come from edge
  data keys named `rate`/`bandwidth`/`capacity` and `delay`/`latency` (values with units, e.g.
  "10Mbps", "5ms"; bare numbers are read as bit/s and seconds), else from `default_link`.
- Edge list (any other extension): one link per line, `from to [rate] [delay]`, `#` comments.

Keys beside `file`: `default_link = { rate, delay }` (required when a link has no rate or
delay), and `default_qdisc` as for graphs. Edges are undirected links, listed in file order
(which fixes routing tie-breaks); duplicate edges and self-loops are errors.

Paths (`resolve_path`): relative to the scenario file's directory (the current directory for
a scenario given as text or a dict); absolute paths and paths leading outside that directory
(`..`, symbolic links) are refused unless the caller passes `allow_any_path`. Errors quote at
most a short, escaped excerpt of a file's content.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from aqmlab._core import ScenarioError

#: Longest node name accepted from a graph file.
MAX_NAME = 200

#: Largest graph file read (bytes).
MAX_FILE_BYTES = 64 * 1024 * 1024

RATE_KEYS = ("rate", "bandwidth", "capacity")
DELAY_KEYS = ("delay", "latency")


def _error(path: str, message: str) -> ScenarioError:
    err = ScenarioError(f"{path}: {message}")
    err.path, err.line, err.detail = path, None, message
    return err


def excerpt(text: str, limit: int = 40) -> str:
    """A short, escaped excerpt of file content for an error message (never raw text)."""
    cut = text[:limit]
    return repr(cut) + ("…" if len(text) > limit else "")


def resolve_path(file: Any, base: Path, *, allow_any_path: bool = False, field: str = "topology.file") -> Path:
    """The file a scenario names, resolved against `base` (the scenario's directory). Refuses
    absolute paths and paths escaping `base` (`..` or symbolic links) unless `allow_any_path`;
    the result is an existing regular file of at most MAX_FILE_BYTES."""
    if not isinstance(file, str) or not file:
        raise _error(field, f"expected a file name (a string), got {type(file).__name__}")
    if "\0" in file:
        raise _error(field, "a file name cannot contain NUL characters")
    raw = Path(file)
    how = "pass --allow-any-path (aqmlab.run(..., allow_any_path=True)) to read it anyway"
    if raw.is_absolute() and not allow_any_path:
        raise _error(field, f"{file!r} is an absolute path; graph files are read relative to the scenario's directory ({how})")
    path = (base / raw).resolve()
    if not allow_any_path:
        root = base.resolve()
        if not path.is_relative_to(root):
            raise _error(field, f"{file!r} leads outside the scenario's directory {str(root)!r} ({how})")
    if not path.is_file():
        raise _error(field, f"no such graph file: {str(base / raw)!r}")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise _error(field, f"{file!r} is {size} bytes; graph files are limited to {MAX_FILE_BYTES}")
    return path


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    if b"\0" in data:
        raise _error("topology.file", f"{path.name!r} is not a text file (it contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _error("topology.file", f"{path.name!r} is not UTF-8 text (byte {e.start})") from None


def _with_unit(value: str, unit: str) -> str:
    v = value.strip()
    try:
        float(v)
    except ValueError:
        return v
    return f"{v}{unit}"


def _read_graphml(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    text = _read_text(path)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise _error("topology.file", f"{path.name!r} is not valid GraphML: {e}") from None
    ns = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""
    names = {k.get("id"): (k.get("attr.name") or k.get("id")) for k in root.iter(f"{ns}key") if k.get("id")}
    graph = root.find(f"{ns}graph")
    if graph is None:
        raise _error("topology.file", f"{path.name!r} has no <graph> element")
    nodes = []
    for i, n in enumerate(graph.iter(f"{ns}node")):
        if not n.get("id"):
            raise _error("topology.file", f"{path.name!r}: node {i + 1} has no id")
        nodes.append(n.get("id"))
    links = []
    for i, e in enumerate(graph.iter(f"{ns}edge")):
        if not e.get("source") or not e.get("target"):
            raise _error("topology.file", f"{path.name!r}: edge {i + 1} needs a source and a target")
        data = {}
        for d in e.iter(f"{ns}data"):
            key = d.get("key")
            if not key:
                raise _error("topology.file", f"{path.name!r}: a <data> element of edge {i + 1} has no key attribute")
            data[str(names.get(key, key)).lower()] = d.text or ""
        link: dict[str, Any] = {"from": e.get("source"), "to": e.get("target")}
        for k in RATE_KEYS:
            if k in data:
                link["rate"] = _with_unit(data[k], "bps")
                break
        for k in DELAY_KEYS:
            if k in data:
                link["delay"] = _with_unit(data[k], "s")
                break
        links.append(link)
    return nodes, links


def _read_edge_list(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    nodes: dict[str, None] = {}
    links = []
    for lineno, line in enumerate(_read_text(path).splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) not in (2, 3, 4):
            raise _error("topology.file", f"{path.name!r} line {lineno}: expected `from to [rate] [delay]`, got {excerpt(line.strip())}")
        link: dict[str, Any] = {"from": fields[0], "to": fields[1]}
        if len(fields) > 2:
            link["rate"] = _with_unit(fields[2], "bps")
        if len(fields) > 3:
            link["delay"] = _with_unit(fields[3], "s")
        nodes.setdefault(fields[0])
        nodes.setdefault(fields[1])
        links.append(link)
    return list(nodes), links


def expand(topology: dict[str, Any], base: Path, *, allow_any_path: bool = False) -> dict[str, Any]:
    """Returns the topology with `file` replaced by explicit nodes and links."""
    topo = dict(topology)
    file = topo.pop("file")
    kind = topo.pop("kind", "graph")
    if kind != "graph":
        raise _error("topology.kind", f"a topology read from a file is a graph; remove kind = {kind!r}")
    default = topo.pop("default_link", {})
    if not isinstance(default, dict):
        raise _error("topology.default_link", f"expected a table such as {{ rate = \"10Mbps\", delay = \"5ms\" }}, got {type(default).__name__}")
    for k in ("nodes", "links"):
        if k in topo:
            raise _error(f"topology.{k}", "not allowed beside `file`: the file gives the nodes and links")
    path = resolve_path(file, base, allow_any_path=allow_any_path)
    nodes, links = _read_graphml(path) if path.suffix.lower() in (".graphml", ".xml") else _read_edge_list(path)
    name = repr(path.name)
    # names travel into error messages: keep them short
    for n in [*nodes, *(link[k] for link in links for k in ("from", "to"))]:
        if len(n) > MAX_NAME:
            raise _error("topology.file", f"{name}: node name {excerpt(n)} is longer than {MAX_NAME} characters")
    seen = set()
    for i, link in enumerate(links):
        pair = frozenset((link["from"], link["to"]))
        if len(pair) == 1:
            raise _error("topology.file", f"{name}: edge {i + 1} is a self-loop at {excerpt(link['from'])}")
        if pair in seen:
            raise _error("topology.file", f"{name}: edge {i + 1} duplicates {excerpt(link['from'])} - {excerpt(link['to'])}")
        seen.add(pair)
        for key in ("rate", "delay"):
            if key not in link:
                if key not in default:
                    raise _error("topology.default_link", f"edge {i + 1} of {name} has no {key}; give default_link = {{ rate = ..., delay = ... }}")
                link[key] = default[key]
        for key, value in default.items():
            link.setdefault(key, value)
    return {"kind": "graph", "nodes": nodes, "links": links, **topo}
