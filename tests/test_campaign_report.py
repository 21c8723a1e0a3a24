"""Figures and the HTML report of a campaign: the RFC 7928 ellipse against its closed form,
`aqmlab plot` commands, and the report rendered by headless Chromium (no console errors,
every figure decoded and painted)."""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aqmlab.campaign import plot, report, runner
from aqmlab.campaign.spec import load_campaign
from test_campaign_run import write


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("camp")
    path = write(tmp, seeds=3)
    c = load_campaign(path)
    out = tmp / "out"
    runner.run_campaign(c, out, workers=2)
    return path, c, out


def test_ellipse_is_the_one_sigma_contour():
    # Points (±a, 0), (0, ±b): sample variances 2a²/3 and 2b²/3 (n - 1 = 3), no covariance, so
    # the full axes are 2·sqrt(2/3)·a along x and 2·sqrt(2/3)·b along y.
    a, b = 3.0, 1.0
    cx, cy, w, h, ang = plot.ellipse([a, -a, 0, 0], [0, 0, b, -b])
    assert (cx, cy) == (0, 0)
    assert w == pytest.approx(2 * math.sqrt(2 / 3) * a) and h == pytest.approx(2 * math.sqrt(2 / 3) * b)
    assert abs(math.sin(math.radians(ang))) < 1e-12
    # Rotating the points by 30° rotates the ellipse by 30° and keeps its axes.
    t = math.radians(30)
    rot = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    pts = rot @ np.array([[a, -a, 0, 0], [0, 0, b, -b]])
    _, _, w2, h2, ang2 = plot.ellipse(pts[0] + 5, pts[1] - 2)
    assert (w2, h2) == (pytest.approx(w), pytest.approx(h))
    assert math.tan(math.radians(ang2)) == pytest.approx(math.tan(t))


@pytest.mark.parametrize("kind", ["delay-goodput", "fairness", "cdf"])
def test_plot_commands_write_figures(done, tmp_path, kind):
    _, _, out = done
    png = tmp_path / f"{kind}.png"
    extra = {"delay-goodput": ["--facet", "delay"], "fairness": ["--hue", "flows"], "cdf": ["--where", "delay=30ms"]}[kind]
    p = subprocess.run([sys.executable, "-m", "aqmlab", "plot", kind, str(out), "-o", str(png), *extra], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    img = plt_image(png)
    assert img.shape[0] > 200 and img.shape[1] > 300 and _ink(img) > 0.02


def test_plot_timeseries_and_errors(done, tmp_path):
    _, c, out = done
    from aqmlab.campaign.store import reader

    run = out / "runs" / reader(out).keys()[0]     # a run kept in a batch, named as if it had its own directory
    p = subprocess.run([sys.executable, "-m", "aqmlab", "plot", "timeseries", str(run), "-o", str(tmp_path / "ts.svg")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    svg = (tmp_path / "ts.svg").read_text()
    for label in ("queue [pkts]", "delay [ms]", "cwnd [pkts]", "simulated time [s]"):
        assert label in svg
    bad = subprocess.run([sys.executable, "-m", "aqmlab", "plot", "fairness", str(out), "-o", str(tmp_path / "x.png"), "--by", "speed"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no column 'speed'" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "aqmlab", "plot", "cdf", str(out), "-o", str(tmp_path / "x.png"), "--where", "delay=7ms"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no rows match" in bad.stderr


def plt_image(path: Path) -> np.ndarray:
    import matplotlib.image

    return matplotlib.image.imread(path)


def _ink(img: np.ndarray) -> float:
    """Fraction of pixels that are not (near) white."""
    rgb = img[..., :3].astype(float)
    if rgb.max() > 1.0:
        rgb = rgb / 255.0
    return float((rgb.min(axis=2) < 0.9).mean())


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=120)


def test_report_is_self_contained_and_valid_html(done):
    _, c, out = done
    text = report.render(c, out)
    assert "<script" not in text and not re.search(r'(src|href)="(?!data:)', text)   # nothing fetched
    figs = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    assert len(figs) >= 4
    assert html.escape('qdisc = {') in text or "qdisc = {" in html.unescape(text)   # the campaign file, escaped
    assert "Student t" in text and runner.core_hash() in text


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (scripts/apt-packages.txt; bash scripts/install as root)")
def test_report_renders_in_headless_chromium(done, tmp_path):
    _, c, out = done
    page = report.write(c, out, tmp_path / "report.html")
    n_figs = page.read_text().count("<img ")

    # 1. The report as written: no console messages (errors, warnings) while loading.
    shot = tmp_path / "shot.png"
    p = _chromium("--window-size=1200,6000", f"--screenshot={shot}", page.as_uri())
    console = [line for line in p.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    with_figs = plt_image(shot)

    # 2. The same page without its figures paints far less: the figures are what is on screen.
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r"<img [^>]*>", "", page.read_text()))
    _chromium("--window-size=1200,6000", f"--screenshot={tmp_path / 'bare.png'}", bare.as_uri())
    ink, ink_bare = _ink(with_figs), _ink(plt_image(tmp_path / "bare.png"))
    assert ink > 2 * ink_bare and ink - ink_bare > 0.01, (ink, ink_bare)

    # 3. Each figure decoded to twice its declared pixel size (checked in the page by a probe script
    #    added to a copy of the report).
    probe = tmp_path / "probe.html"
    script = ("<script>window.addEventListener('load', () => document.body.setAttribute('data-check', JSON.stringify("
              "[...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight, +i.getAttribute('width'), +i.getAttribute('height')]))));</script>")
    probe.write_text(page.read_text().replace("</body>", script + "</body>"))
    dom = _chromium("--virtual-time-budget=10000", "--dump-dom", probe.as_uri()).stdout
    m = re.search(r'data-check="([^"]*)"', dom)
    assert m, dom[:500]
    imgs = json.loads(html.unescape(m.group(1)))
    assert len(imgs) == n_figs >= 4
    for complete, nw, nh, w, h in imgs:
        # embedded at 200 dpi and shown at 100 px per inch: twice the declared size, exactly
        assert complete and (nw, nh) == (2 * w, 2 * h) and nw > 0
