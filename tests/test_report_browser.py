"""The HTML report in a real browser: headless Chromium loads the page for the packaged SummEval and
REALSumm (with hostile system, metric and dataset names), and we check the rendered DOM, the console
log and a screenshot.

Needs the Debian packages `chromium` and `chromium-driver` (`.ci/run` installs them). Without them the
browser test is skipped with a loud warning in pytest's warnings summary.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

import metaeval as me
from metaeval.report.analysis_sections import ANALYSES
from metaeval.report.build import build_report, write_report

HOSTILE_SYSTEM = "<script>alert(1)</script>"
HOSTILE_METRIC = "<img src=x onerror=alert(2)>"
MATH_METRIC = "rouge $1$ \\ & 50% {x}_y"
HOSTILE_DATASET = "summeval\"'><svg onload=alert(3)>"


class BrowserTestSkipped(UserWarning):
    """Shown in pytest's warnings summary when the browser test cannot run."""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        message = ("BROWSER TEST SKIPPED: no `chromium` executable found; install the Debian packages `chromium`"
                   " and `chromium-driver` (`apt-get install -y chromium chromium-driver`, as .ci/run does) to"
                   " check the HTML report in a real browser.")
        warnings.warn(message, BrowserTestSkipped, stacklevel=2)
        pytest.skip(message)
    return found


def run_chromium(browser: str, page: Path, work: Path, *, screenshot: Path | None = None,
                 fragment: str = "") -> tuple[str, list[str]]:
    """(stdout, console lines) of one headless Chromium run on ``page``."""
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
            f"--user-data-dir={work / 'profile'}", "--enable-logging=stderr", "--v=0",
            "--window-size=1280,2000"]
    args.append(f"--screenshot={screenshot}" if screenshot else "--dump-dom")
    args.append(page.resolve().as_uri() + fragment)
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    return proc.stdout, console


def hostile(ds: me.ScoreSet, renames: dict[str, str]) -> me.ScoreSet:
    """``ds`` with its first system, some scorers and its name replaced by markup-like strings."""
    systems = [HOSTILE_SYSTEM if i == 0 else s for i, s in enumerate(ds.systems)]
    scores = {renames.get(s, s): ds.annotations(s) for s in ds.scorers}
    return me.ScoreSet(scores, systems=systems, inputs=ds.inputs, humans=[renames.get(h, h) for h in ds.humans],
                       name=HOSTILE_DATASET)


CASES = {
    "summeval": ("expert.relevance", {"bertscore.recall": HOSTILE_METRIC, "rouge-2.recall": MATH_METRIC}),
    "realsumm": ("litepyramid.recall", {"rouge-2.recall": HOSTILE_METRIC, "js-2": MATH_METRIC}),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def rendered(request, tmp_path_factory):
    browser = chromium()
    human, renames = CASES[request.param]
    ds = hostile(me.load_dataset(request.param), renames)
    focus = [HOSTILE_METRIC, MATH_METRIC, "rouge-1.recall"]
    with warnings.catch_warnings():  # 60 resamples cannot reach significance over 25 comparisons: said, not tested here
        warnings.simplefilter("ignore", me.SignificanceWarning)
        report = build_report(ds, human, n_resamples=60, repetitions=20, seed=1, focus_metrics=focus)
    out = tmp_path_factory.mktemp(f"report-{request.param}")
    write_report(report, out)
    page = out / "report.html"
    # One run dumps the DOM after the page's script ran its self-test (sorting a table), one takes the
    # screenshot; both logs are checked for console messages.
    dom, console = run_chromium(browser, page, out, fragment="#selftest")
    shot = out / "screenshot.png"
    _, shot_console = run_chromium(browser, page, out, screenshot=shot)
    return {"name": request.param, "report": report, "page": page, "dom": dom, "console": console + shot_console,
            "screenshot": shot}


def test_page_loads_without_console_messages(rendered):
    assert rendered["console"] == []
    assert 'data-ready="yes"' in rendered["dom"]


def test_screenshot_is_written(rendered):
    data = rendered["screenshot"].read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000


def test_every_section_and_figure_is_present(rendered):
    dom, report = rendered["dom"], rendered["report"]
    assert report.omitted == {}  # every analysis ran on the packaged data
    sections = re.findall(r'data-section="([^"]+)"', dom)
    assert sections == ["dataset", "correlations", "forest", "significance", "significance-summary", *ANALYSES,
                        "reproduce"]
    figures = re.findall(r'data-figure="([^"]+)"', dom)
    assert figures == [f"forest-{level}" for level in report.table.levels] + [
        "significance", "significance", "delta-curve", "delta-heatmaps", "stability", "topk", "verdicts", "normality"]
    svgs = re.findall(r"<svg [^>]*>", dom)
    assert len(svgs) == len(figures)
    for tag in svgs:
        assert 'role="img"' in tag and 'aria-label="' in tag


def test_hostile_names_are_text_not_markup(rendered):
    dom = rendered["dom"]
    assert dom.count("<script") == 1  # the page's own script only
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom
    assert "<img" not in dom and "&lt;img src=x onerror=alert(2)&gt;" in dom
    assert "<svg onload" not in dom and "svg onload=alert(3)" in dom
    assert "rouge $1$ \\ &amp; 50% {x}_y" in dom


def test_tables_sort_in_the_browser(rendered):
    match = re.search(r'data-selftest="([^"]+)"', rendered["dom"])
    assert match is not None
    order, first = match.group(1).split(":", 1)
    best = max(s["human_mean"] for s in rendered["report"].dataset["system_scores"])  # the systems table
    assert order == "descending" and float(first) == pytest.approx(best)


def test_no_network_references(rendered):
    html = rendered["page"].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html
