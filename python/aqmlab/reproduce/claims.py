"""Claims tables of the paper packs: every headline claim of a paper, judged on one
pre-registered reading of its setup, with the other readings the pack runs as a sensitivity table.

A pack lists its readings (`Reading`: one interpretation of what the paper leaves unstated or
ambiguous; exactly one per group is pre-registered, chosen from the paper's text alone before
comparing results) and its claims (`Claim`: the paper's statement, where it says it, what counts
as holding, and a `check` that evaluates it on one reading's runs). `judge` turns that into the
verdict vocabulary of docs/reproductions/README.md:

* *reproduced* — holds on the pre-registered reading;
* *reproduced under a fitted reading* — fails there, holds on another reading (named, with how
  many were tried);
* *partly* — holds in part (on the pre-registered reading, or at best on another);
* *not reproduced* — fails on every reading tried;
* *not a result* — a setup figure, a circular figure (one the setup took as input), or a
  judgment with no testable content; the claim's `not_a_result` says why.

`write` puts the claims table, the sensitivity table and the readings table in the pack's
output (tables/claims, tables/sensitivity, tables/readings); `summary` counts the verdicts of
the committed claims tables for docs/reproductions/README.md, and `sync_docs` copies generated
tables into the Markdown pages that quote them (blocks marked `<!-- table: NAME -->` ...
`<!-- /table -->`), so every figure the pages show comes from the pack's own output.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import pandas as pd

HOLDS, PARTLY, FAILS, NA = "holds", "partly", "fails", "n/a"
#: The verdicts, in the order the summaries list them.
VERDICTS = ("reproduced", "reproduced under a fitted reading", "partly", "not reproduced", "not a result")
#: What a claim gets when no reading has the runs to judge it (only in a shortened pack).
NOT_RUN = "not run (shortened pack)"
_MARK = {HOLDS: "✓", PARTLY: "~", FAILS: "✗", NA: "·"}


@dataclass(frozen=True)
class Reading:
    """One reading of the paper's setup: a set of the pack's configurations."""

    key: str
    title: str
    #: The reading chosen from the paper's text alone (one per group).
    preregistered: bool = False
    #: Claims are judged within a group (e.g. a paper's part 1 and part 2 have separate setups).
    group: str = ""
    #: Why this reading was tried (and, for a fitted one, what it was fitted to).
    why: str = ""


@dataclass(frozen=True)
class Outcome:
    """A claim on one reading: holds / partly / fails / n/a, and the figures behind it."""

    status: str
    value: str = ""

    def __post_init__(self):
        if self.status not in (HOLDS, PARTLY, FAILS, NA):
            raise ValueError(f"status {self.status!r}")


def outcome(ok: bool | None, value: str = "", partly: bool = False) -> Outcome:
    """HOLDS if ok, PARTLY if not ok but `partly`, FAILS otherwise; NA if ok is None."""
    if ok is None:
        return Outcome(NA, value)
    return Outcome(HOLDS if ok else (PARTLY if partly else FAILS), value)


def fraction(hits: int, of: int, value: str = "", all_needed: bool = True) -> Outcome:
    """HOLDS if every case holds (or, with `all_needed` false, most do), PARTLY if some do."""
    if of == 0:
        return Outcome(NA, value)
    if hits == of or (not all_needed and hits * 2 > of):
        return Outcome(HOLDS, value)
    return Outcome(PARTLY if hits else FAILS, value)


@dataclass
class Claim:
    """One headline claim of a paper."""

    id: str
    #: The paper's statement, paraphrased.
    claim: str
    #: Where the paper makes it (section, table, figure).
    where: str
    #: The paper's own figures for it ("" if qualitative).
    paper: str = ""
    #: What counts as holding, decided before looking at the results of the pre-registered reading.
    criterion: str = ""
    #: reading key -> Outcome (NA where the reading lacks the runs).
    check: Callable[[str], Outcome] | None = None
    #: Not a result: why (setup figure, circular, judgment). Such a claim gets no verdict on runs.
    not_a_result: str = ""
    #: The experiment behind a miss, or a remark (keep figures out: the check's value carries them).
    note: str = ""
    #: Group of the readings it is judged on (see Reading.group).
    group: str = ""
    #: The same criterion applied to the paper's own figures (None: not applicable). A claim its
    #: own tables do not meet says so in the claims table.
    on_paper: Callable[[], bool] | None = None


@dataclass
class Judgment:
    """A claim's outcomes on every reading of its group and its verdict."""

    claim: Claim
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    verdict: str = ""
    fitted: list[str] = field(default_factory=list)


def judge(claims: Sequence[Claim], readings: Sequence[Reading]) -> list[Judgment]:
    """Evaluates every claim on every reading of its group and gives its verdict."""
    groups: dict[str, list[Reading]] = {}
    for r in readings:
        groups.setdefault(r.group, []).append(r)
    for g, rs in groups.items():
        pre = [r for r in rs if r.preregistered]
        if len(pre) != 1:
            raise ValueError(f"group {g!r}: {len(pre)} pre-registered readings (need exactly one)")
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate claim ids")
    out = []
    for c in claims:
        j = Judgment(c)
        if c.not_a_result:
            j.verdict = "not a result"
        rs = groups.get(c.group)
        if rs is None:
            raise ValueError(f"claim {c.id}: no readings in group {c.group!r}")
        if c.check is not None:
            for r in rs:
                try:
                    j.outcomes[r.key] = c.check(r.key)
                except KeyError:
                    j.outcomes[r.key] = Outcome(NA, "")
        if not c.not_a_result:
            pre = next(r for r in rs if r.preregistered)
            p = j.outcomes.get(pre.key, Outcome(NA))
            others = {k: o for k, o in j.outcomes.items() if k != pre.key}
            j.fitted = [k for k, o in others.items() if o.status == HOLDS]
            if p.status == HOLDS:
                j.verdict = "reproduced"
            elif j.fitted:
                j.verdict = "reproduced under a fitted reading"
            elif p.status == PARTLY or any(o.status == PARTLY for o in others.values()):
                j.verdict = "partly"
            elif p.status == NA and not any(o.status != NA for o in others.values()):
                j.verdict = NOT_RUN  # a shortened (--quick) pack lacks the runs
            else:
                j.verdict = "not reproduced"
        out.append(j)
    return out


def _holds_in(j: Judgment, readings: Sequence[Reading]) -> str:
    tried = [r for r in readings if r.group == j.claim.group and j.outcomes.get(r.key, Outcome(NA)).status != NA]
    hits = [r for r in tried if j.outcomes[r.key].status == HOLDS]
    return f"{len(hits)} of {len(tried)}" if tried else "-"


def _others(what: str, keys: list[str], j: Judgment) -> str:
    """'holds under *a*, *b* (e.g. *a*: figures)': the readings, with the first one's figures."""
    names = ", ".join(f"*{k}*" for k in keys)
    first = j.outcomes[keys[0]].value if keys else ""
    return f"{what} {names}" + (f" (*{keys[0]}*: {first})" if first else "")


def claims_table(judgments: Sequence[Judgment], readings: Sequence[Reading]) -> pd.DataFrame:
    """The claims table: one row per claim, verdict from the pre-registered reading."""
    pre = {r.group: r for r in readings if r.preregistered}
    rows = []
    for j in judgments:
        c = j.claim
        p = j.outcomes.get(pre[c.group].key) if c.group in pre else None
        evidence = p.value if p and p.status != NA else ""
        if j.verdict == "reproduced under a fitted reading":
            evidence = (f"{evidence}; " if evidence else "") + _others("holds under", j.fitted, j)
        elif j.verdict == "partly" and p is not None and p.status != PARTLY:
            evidence = (f"{evidence}; " if evidence else "") + _others(
                "in part under", [k for k, o in j.outcomes.items() if o.status == PARTLY], j)
        rows.append({
            "id": c.id,
            "claim (paper)": f"{c.claim} ({c.where})",
            "paper": c.paper or "-",
            "holds if": c.criterion or "-",
            "paper's own figures meet it": "-" if c.on_paper is None else ("yes" if c.on_paper() else "no"),
            "pre-registered reading": evidence or "-",
            "verdict": j.verdict,
            "holds in readings": "-" if c.not_a_result and c.check is None else _holds_in(j, readings),
            "why / note": c.not_a_result or c.note or "-",
        })
    return pd.DataFrame(rows)


def sensitivity_table(judgments: Sequence[Judgment], readings: Sequence[Reading]) -> pd.DataFrame:
    """Per claim and reading: ✓ holds, ~ partly, ✗ fails, · not run on that reading."""
    rows = []
    for j in judgments:
        if j.claim.check is None:
            continue
        row = {"id": j.claim.id}
        for r in readings:
            if r.group != j.claim.group:
                continue
            o = j.outcomes.get(r.key, Outcome(NA))
            row[r.key + (" (pre-registered)" if r.preregistered and "pre-registered" not in r.key else "")] = _MARK[o.status]
        row["holds in"] = _holds_in(j, readings)
        rows.append(row)
    df = pd.DataFrame(rows)
    return df.fillna("")


def readings_table(readings: Sequence[Reading]) -> pd.DataFrame:
    return pd.DataFrame([{"reading": r.key, **({"part": r.group} if any(x.group for x in readings) else {}),
                          "pre-registered": "yes" if r.preregistered else "no", "what": r.title, "why": r.why or "-"}
                         for r in readings])


def counts(judgments: Sequence[Judgment]) -> dict[str, int]:
    out = {v: 0 for v in (*VERDICTS, NOT_RUN)}
    for j in judgments:
        out[j.verdict] += 1
    return out


def write(results, claims: Sequence[Claim], readings: Sequence[Reading]) -> str:
    """Judges the claims, writes tables/claims, tables/sensitivity and tables/readings through
    `results` (a PackResults) and returns the report section."""
    js = judge(claims, readings)
    ct = claims_table(js, readings)
    rt = readings_table(readings)
    n = counts(js)
    tally = ", ".join(f"{k} {v}" for k, v in n.items() if v or k != NOT_RUN)
    out = ["## Claims (verdicts from the pre-registered reading)\n",
           f"{len(js)} claims: {tally}.\n",
           results.write_table("claims", ct, ".4g") + "\n",
           "## Sensitivity: each claim on every reading run\n",
           "✓ holds, ~ partly, ✗ fails, · not run on that reading.\n"]
    groups = list(dict.fromkeys(r.group for r in readings))
    for g in groups:
        st = sensitivity_table([j for j in js if j.claim.group == g], [r for r in readings if r.group == g])
        name = "sensitivity" if len(groups) == 1 else "sensitivity_" + re.sub(r"\W+", "_", g).strip("_")
        out.append((f"### {g}\n\n" if len(groups) > 1 else "") + results.write_table(name, st) + "\n")
    out += ["## Readings\n", results.write_table("readings", rt) + "\n"]
    return "\n".join(out)


# ------------------------------------------------------------------------ README and docs

PACK_ORDER = ("kato", "ltred", "dqred", "rnlgred", "dsred")


def summary(docs: Path) -> pd.DataFrame:
    """Verdict counts per pack from the committed tables (docs/reproductions/<pack>/tables/claims.csv)."""
    rows = []
    for pack in PACK_ORDER:
        p = docs / pack / "tables" / "claims.csv"
        if not p.exists():
            continue
        v = pd.read_csv(p)["verdict"].value_counts()
        rows.append({"pack": pack, "claims": int(v.sum()), **{k: int(v.get(k, 0)) for k in VERDICTS}})
    df = pd.DataFrame(rows)
    if len(df):
        total = {"pack": "**all**", "claims": int(df["claims"].sum()), **{k: int(df[k].sum()) for k in VERDICTS}}
        df = pd.concat([df, pd.DataFrame([total])], ignore_index=True)
    return df


_BLOCK = re.compile(r"(<!-- table: (?P<name>[\w./-]+) -->\n)(?P<body>.*?)(<!-- /table -->)", re.S)


def render_blocks(text: str, lookup: Callable[[str], str]) -> str:
    """Replaces the body of every `<!-- table: NAME -->` ... `<!-- /table -->` block with lookup(NAME)."""
    def sub(m: re.Match) -> str:
        return m.group(1) + lookup(m.group("name")).rstrip("\n") + "\n" + m.group(4)
    return _BLOCK.sub(sub, text)


def block_names(text: str) -> list[str]:
    return [m.group("name") for m in _BLOCK.finditer(text)]


def table_lookup(docs: Path, pack: str | None) -> Callable[[str], str]:
    """NAME -> Markdown: `<pack>/tables/<name>.md` of a pack page ("pack/name" reaches another
    pack's), or "summary" (the verdict counts)."""
    from aqmlab.reproduce import to_markdown

    def lookup(name: str) -> str:
        if name == "summary":
            return to_markdown(summary(docs), ".4g")
        pk, _, tb = name.rpartition("/")
        path = docs / (pk or pack or "") / "tables" / f"{tb}.md"
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such generated table")
        return path.read_text()
    return lookup


def sync_docs(docs: Path, check: bool = False) -> list[Path]:
    """Copies the generated tables into docs/reproductions/*.md; with `check`, writes nothing and
    returns the pages that are out of date."""
    stale = []
    for page in sorted(docs.glob("*.md")):
        pack = page.stem if page.stem in PACK_ORDER else None
        text = page.read_text()
        new = render_blocks(text, table_lookup(docs, pack))
        if new != text:
            stale.append(page)
            if not check:
                page.write_text(new)
    return stale


def fmt(x: float, spec: str = ".3g") -> str:
    """A number for an evidence cell ('-' for NaN)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return format(x, spec)


def read_csv_exact(path, **kw) -> pd.DataFrame:
    """A CSV written by pandas, read back to the same floats (pandas >= 3 does by default; older
    versions need the round-trip parser)."""
    if int(pd.__version__.split(".")[0]) < 3:
        kw.setdefault("float_precision", "round_trip")
    return pd.read_csv(path, **kw)


def ratio(a: float, b: float) -> float:
    """a / b, NaN when b is 0 (a comparison with NaN is false: the case counts as not holding)."""
    return a / b if b else math.nan


def arrow(values: Iterable[float], spec: str = ".3g") -> str:
    return " → ".join(fmt(v, spec) for v in values)


if __name__ == "__main__":  # python -m aqmlab.reproduce.claims [--check]
    import sys

    docs = Path(__file__).resolve().parents[3] / "docs" / "reproductions"
    stale = sync_docs(docs, check="--check" in sys.argv)
    for p in stale:
        print(("out of date: " if "--check" in sys.argv else "updated: ") + str(p))
    sys.exit(1 if stale and "--check" in sys.argv else 0)
