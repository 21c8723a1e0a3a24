"""Terminal-safe text: user-supplied strings (names, paths, error messages quoting them) are
printed with control characters escaped, never interpreted by the terminal or by rich markup."""

from __future__ import annotations

import re

from rich.text import Text

# C0 controls except tab and newline, DEL, C1 controls, and the Unicode bidirectional
# overrides/isolates (they reorder what the reader sees).
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(s: object) -> str:
    """`s` as text with every control character shown as an escape (ESC → `\\x1b`)."""
    text = str(s)
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def plain(s: object, style: str = "") -> Text:
    """A rich `Text` of `clean(s)`: printed literally whatever brackets it holds."""
    return Text(clean(s), style=style)


def markup(s: object) -> str:
    """`clean(s)` escaped for rich markup: for the places that take markup strings (progress
    bar descriptions, table cells given as str)."""
    from rich.markup import escape

    return escape(clean(s))
