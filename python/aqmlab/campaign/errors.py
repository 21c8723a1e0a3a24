"""The errors of campaigns and of their storage (a module of its own so that every campaign
module can raise them without importing the others)."""

from __future__ import annotations


class CampaignError(ValueError):
    """A campaign file was rejected; `path` names the field (e.g. `axes.qdisc.values[1]`) and
    `line`, when known, its line in the campaign file."""

    def __init__(self, path: str, message: str, line: int | None = None):
        text = f"{path}: {message}" if path else message
        super().__init__(f"line {line}: {text}" if line else text)
        self.path = path
        self.detail = message
        self.line = line


class StoreError(Exception):
    """The output directory cannot be used: refused (`code` 2: someone else's directory, a
    directory another process holds) or failing (`code` 1: read-only, full, an I/O error)."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code
