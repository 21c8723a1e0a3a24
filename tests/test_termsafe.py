"""Terminal-safe output: control characters are escaped, rich markup is never interpreted."""

from aqmlab.termsafe import clean, plain


def test_escape_sequences_are_shown_not_sent():
    # an SGR colour, an OSC window-title sequence ended by BEL, and a C1 CSI
    s = "\x1b[31mRED\x1b[0m\x1b]0;pwned\x07\x9b2J"
    out = clean(s)
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert out == "\\x1b[31mRED\\x1b[0m\\x1b]0;pwned\\x07\\x9b2J"


def test_ordinary_text_is_unchanged():
    s = "flow [1] → r1->r2#2 tab\tnewline\n é"
    assert clean(s) == s
    assert plain("[bold]x[/]").plain == "[bold]x[/]"


def test_bidirectional_overrides_are_escaped():
    assert clean("a\u202eb") == "a\\u202eb"


# ---- properties (hypothesis) ----------------------------------------------------------------

import re  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from aqmlab import ScenarioError  # noqa: E402
from aqmlab import _core  # noqa: E402

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@given(st.text())
def test_clean_never_lets_a_control_character_through(s):
    out = clean(s)
    assert not CONTROL.search(out)
    if not CONTROL.search(s) and not re.search("[\u200e\u200f\u202a-\u202e\u2066-\u2069]", s):
        assert out == s


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["..", ".", "a", "b", "net.edges", "", "/", "~", "x\x00y", "..."]), min_size=1, max_size=6))
def test_a_graph_path_either_resolves_inside_the_directory_or_is_refused(tmp_path_factory, parts):
    # the core reads graph files (scenario/load.rs): inside the directory each holds edge a-b,
    # the one outside it edge x-y, so a file read from outside would show
    import tomli_w

    base = tmp_path_factory.getbasetemp() / "paths" / "scen"
    (base / "a").mkdir(parents=True, exist_ok=True)
    (base / "net.edges").write_text("a b\n")
    (base / "a" / "net.edges").write_text("a b\n")
    (base.parent / "net.edges").write_text("x y\n")
    text = tomli_w.dumps({"simulation": {"duration": "1s"},
                          "topology": {"file": "/".join(parts), "default_link": {"rate": "1Mbps", "delay": "1ms"}}})
    try:
        got = _core.load(text, [], str(base), False)
    except ScenarioError as e:
        assert e.path == "topology.file"
        return
    assert 'nodes = ["a", "b"]' in got, got
