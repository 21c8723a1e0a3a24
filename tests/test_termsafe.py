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
