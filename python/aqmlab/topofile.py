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
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from aqmlab._core import ScenarioError

RATE_KEYS = ("rate", "bandwidth", "capacity")
DELAY_KEYS = ("delay", "latency")


def _error(path: str, message: str) -> ScenarioError:
    err = ScenarioError(f"{path}: {message}")
    err.path, err.line, err.detail = path, None, message
    return err


def _with_unit(value: str, unit: str) -> str:
    v = value.strip()
    try:
        float(v)
    except ValueError:
        return v
    return f"{v}{unit}"


def _read_graphml(path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise _error("topology.file", f"{path} is not valid GraphML: {e}") from None
    ns = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") else ""
    names = {k.get("id"): (k.get("attr.name") or k.get("id")) for k in root.iter(f"{ns}key")}
    graph = root.find(f"{ns}graph")
    if graph is None:
        raise _error("topology.file", f"{path} has no <graph> element")
    nodes = [n.get("id") for n in graph.iter(f"{ns}node")]
    links = []
    for e in graph.iter(f"{ns}edge"):
        data = {names.get(d.get("key"), d.get("key")).lower(): (d.text or "") for d in e.iter(f"{ns}data")}
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
    for lineno, line in enumerate(path.read_text().splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) not in (2, 3, 4):
            raise _error("topology.file", f"{path}:{lineno}: expected `from to [rate] [delay]`, got {line.strip()!r}")
        link: dict[str, Any] = {"from": fields[0], "to": fields[1]}
        if len(fields) > 2:
            link["rate"] = _with_unit(fields[2], "bps")
        if len(fields) > 3:
            link["delay"] = _with_unit(fields[3], "s")
        nodes.setdefault(fields[0])
        nodes.setdefault(fields[1])
        links.append(link)
    return list(nodes), links


def expand(topology: dict[str, Any], base: Path) -> dict[str, Any]:
    """Returns the topology with `file` replaced by explicit nodes and links."""
    topo = dict(topology)
    file = topo.pop("file")
    kind = topo.pop("kind", "graph")
    if kind != "graph":
        raise _error("topology.kind", f"a topology read from a file is a graph; remove kind = {kind!r}")
    default = topo.pop("default_link", {})
    for k in ("nodes", "links"):
        if k in topo:
            raise _error(f"topology.{k}", "not allowed beside `file`: the file gives the nodes and links")
    path = Path(file)
    if not path.is_absolute():
        path = base / path
    if not path.is_file():
        raise _error("topology.file", f"no such graph file: {path}")
    nodes, links = _read_graphml(path) if path.suffix.lower() in (".graphml", ".xml") else _read_edge_list(path)
    seen = set()
    for i, link in enumerate(links):
        pair = frozenset((link["from"], link["to"]))
        if len(pair) == 1:
            raise _error("topology.file", f"{path}: edge {i + 1} is a self-loop at {link['from']!r}")
        if pair in seen:
            raise _error("topology.file", f"{path}: edge {i + 1} duplicates {link['from']!r} - {link['to']!r}")
        seen.add(pair)
        for key in ("rate", "delay"):
            if key not in link:
                if key not in default:
                    raise _error("topology.default_link", f"edge {i + 1} of {path} has no {key}; give default_link = {{ rate = ..., delay = ... }}")
                link[key] = default[key]
        for key, value in default.items():
            link.setdefault(key, value)
    return {"kind": "graph", "nodes": nodes, "links": links, **topo}
