"""build_report / write_report: validation, files, the page's content without a browser."""
from __future__ import annotations

import dataclasses
import io
import json
import re
from markupsafe import escape

import numpy as np
import pytest

import metaeval as me
from metaeval.report import formats
from metaeval.report.build import PRESETS, Report, build_report, report_paths, write_report
from metaeval.report.page import render_report
from metaeval.report.svg import figure_svg, new_figure, text


@pytest.fixture(scope="module")
def small():
    """SummEval with 4 metrics: a fast, real report."""
    ds = me.load_dataset("summeval")
    metrics = ["rouge-1.recall", "rouge-2.recall", "bertscore.recall", "qa-eval.f1"]
    return ds, metrics, build_report(ds, "expert.relevance", metrics, n_resamples=60, repetitions=10, seed=3)


# -- validation: every message pinned ---------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(metrics=["rouge-1.recall"] * 2), "`metrics` must not repeat a scorer; got ['rouge-1.recall', 'rouge-1.recall']."),
    (dict(metrics=[]), "`metrics` must name at least one scorer; got an empty list."),
    (dict(preset="slow"), "`preset` must be one of 'quick', 'default', 'full'; got 'slow'."),
    (dict(seed=-1), "`seed` must be a non-negative integer; got -1."),
    (dict(seed=True), "`seed` must be a non-negative integer; got True."),
    (dict(repetitions=1), "`repetitions` must be an integer >= 2; got 1."),
    (dict(focus_metrics=["rouge-3.f1"]), "`focus_metrics` must be among the report's metrics; got 'rouge-3.f1'."),
    (dict(family="table"), "`family` must be one of 'matrix', 'row'; got 'table'."),
    (dict(correction="dunn"),
     "`correction` must be one of 'none', 'bonferroni', 'sidak', 'holm', 'holm-sidak', 'benjamini-hochberg'; got 'dunn'."),
])
def test_build_report_validation(kwargs, message):
    ds = me.load_dataset("summeval")
    args = dict(metrics=["rouge-1.recall", "rouge-2.recall"])
    args.update(kwargs)
    with pytest.raises(me.ParameterError) as info:
        build_report(ds, "expert.relevance", args.pop("metrics"), **args)
    assert str(info.value) == message


def test_unknown_analysis_is_rejected():
    ds = me.load_dataset("summeval")
    with pytest.raises(me.ParameterError, match=r"^`analyses` must be one of .*; got 'astrology'\.$"):
        build_report(ds, "expert.relevance", ["rouge-1.recall"], analyses=["astrology"])


def test_presets_keep_the_default_resamples():
    assert PRESETS["default"]["n_resamples"] == me.defaults.N_RESAMPLES == 1000
    assert PRESETS["quick"]["n_resamples"] < 1000 < PRESETS["full"]["n_resamples"]


# -- the report object ----------------------------------------------------------------------------------

def test_report_contents(small):
    ds, metrics, report = small
    assert isinstance(report, Report) and report.human == "expert.relevance"
    assert report.table.metrics == tuple(metrics)
    assert report.comparison.family == "row" and report.comparison.correction == "holm"
    assert report.settings["n_resamples"] == 60 and report.settings["seed"] == 3
    assert report.dataset["agreement"]["n_coders"] == 3
    systems = report.dataset["system_scores"]
    assert len(systems) == 16 and sorted(s["rank"] for s in systems) == list(range(1, 17))
    means = ds.matrix("expert.relevance").mean(axis=1)
    assert [s["human_mean"] for s in systems] == pytest.approx(means.tolist())
    payload = json.loads(formats.to_json(report))
    assert set(payload) >= {"dataset", "settings", "correlations", "comparison", "analyses", "omitted", "command"}


def test_single_metric_report_leaves_out_the_matrix(tmp_path):
    ds = me.load_dataset("summeval")
    report = build_report(ds, "expert.relevance", ["rouge-1.recall"], n_resamples=20, analyses=[])
    assert report.comparison is None and "significance" in report.omitted
    names = sorted(p.name for p in write_report(report, tmp_path))
    assert names == ["correlations.csv", "report.html", "results.json"]
    assert 'data-section="significance"' not in (tmp_path / "report.html").read_text()


def test_same_seed_same_page(small, tmp_path):
    ds, metrics, report = small
    again = build_report(ds, "expert.relevance", metrics, n_resamples=60, repetitions=10, seed=3)
    assert render_report(again) == render_report(report)


# -- files --------------------------------------------------------------------------------------------

def test_output_directory_or_html_path(small, tmp_path):
    _, _, report = small
    assert report_paths(tmp_path / "out") == (tmp_path / "out", tmp_path / "out" / "report.html")
    assert report_paths(tmp_path / "x" / "page.HTML") == (tmp_path / "x", tmp_path / "x" / "page.HTML")
    paths = write_report(report, tmp_path / "x" / "page.html")
    assert sorted(p.name for p in paths) == ["comparison.csv", "correlations.csv", "page.html", "results.json"]
    assert all(p.parent == tmp_path / "x" for p in paths)
    assert (tmp_path / "x" / "page.html").stat().st_mode & 0o044 == 0o044  # readable by others, as open() gives


def test_html_false_writes_only_the_data(small, tmp_path):
    _, _, report = small
    names = sorted(p.name for p in write_report(report, tmp_path, html=False))
    assert names == ["comparison.csv", "correlations.csv", "results.json"]


# -- the page without a browser -------------------------------------------------------------------------

def test_page_is_self_contained_and_complete(small):
    _, metrics, report = small
    html = render_report(report)
    assert html.startswith("<!DOCTYPE html>") and html.count("<script>") == 1
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    for key in ("dataset", "correlations", "forest", "significance", "reproduce"):
        assert f'data-section="{key}"' in html
    for metric in metrics:
        assert metric in html
    assert escape(report.command) in html  # the Python call, when built from the API
    assert str(report.table.signature) in html and str(report.comparison.signature) in html
    assert html.count('<table class="data sortable"') >= 4


@pytest.mark.filterwarnings("ignore::metaeval.errors.DegenerateWarning")  # 6 systems: degenerate bootstrap
def test_user_strings_are_escaped_everywhere():
    rng = np.random.default_rng(0)
    human = rng.normal(size=(6, 5))
    names = {"<b>m&1</b>": human + rng.normal(size=(6, 5)), "m$2$": human + rng.normal(size=(6, 5)), "h": human}
    ds = me.ScoreSet.from_matrices(names, systems=["<script>alert(1)</script>", "a", "b", "c", "d", "e"],
                                   humans=["h"], name="<i>data</i>")
    report = build_report(ds, "h", n_resamples=20, repetitions=5, analyses=[])
    html = render_report(report)
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>m" not in html and "&lt;b&gt;m&amp;1&lt;/b&gt;" in html
    assert "<i>data" not in html and "&lt;i&gt;data&lt;/i&gt;" in html
    assert "m$2$" in html


def test_svg_ids_are_prefixed_and_alt_text_is_escaped():
    with new_figure(2, 2) as (fig, ax):
        ax.plot([0, 1], [0, 1])
        ax.set_title(text("a $b$ <c>"))
        svg = figure_svg(fig, key="demo", alt='alt "<x>"')
    ids = re.findall(r'\bid="([^"]+)"', svg)
    assert ids and all(i.startswith("demo-") for i in ids)
    assert 'aria-label="alt &quot;&lt;x&gt;&quot;"' in svg and "<title>alt \"&lt;x&gt;\"</title>" in svg
    assert "a $b$ &lt;c&gt;" in svg
    for ref in re.findall(r'url\(#([^)]+)\)', svg):
        assert ref in ids


def test_regression_unreachable_significance_is_said_in_the_result_the_page_and_the_terminal():
    # Issue 10, item 4: with Holm over the whole matrix of 12 metrics (132 p-values) and 100 resamples no
    # pair can be significant; the result, the Python warning, the page and the terminal say so.
    ds = me.load_dataset("summeval")
    metrics = list(ds.metrics[:12])
    message = ("no comparison can be significant: the smallest attainable p-value after holm over the whole"
               " matrix (132 comparisons) with 100 resamples is 1 > alpha 0.05; use at least 2640 resamples.")
    with pytest.warns(me.SignificanceWarning) as caught:
        result = me.compare_metrics(ds, metrics, "expert.relevance", n_resamples=100, family="matrix", rng=0)
    assert [str(w.message) for w in caught] == [message] and result.warnings == (message,)
    assert result.to_dict()["warnings"] == [message]
    from rich.console import Console

    from metaeval.report import terminal
    console = Console(width=300, record=True)
    console.print(terminal.comparison_matrix(result))
    assert message in console.export_text()
    with pytest.warns(me.SignificanceWarning):
        report = build_report(ds, "expert.relevance", metrics, n_resamples=100, family="matrix",
                              levels=("system",), coefficients=("kendall-b",), analyses=())
    assert report.comparison.warnings == (message,)
    assert str(escape(message)) in render_report(report)
    console = Console(width=300, record=True)
    console.print(terminal.report_summary(report))
    assert message in console.export_text()
    fine = me.compare_metrics(ds, metrics[:3], "expert.relevance", n_resamples=100, rng=0)
    assert fine.warnings == () and fine.family == "row"


def test_regression_one_default_family_for_the_api_compare_and_report():
    # Issue 10, item 4: compare_metrics and `metaeval compare` corrected over the matrix, `report` over rows.
    import inspect

    from metaeval.cli.correlation_commands import compare
    from metaeval.cli.report_command import report

    assert me.defaults.FAMILY == "row" and not hasattr(me.defaults, "REPORT_FAMILY")
    assert inspect.signature(me.compare_metrics).parameters["family"].default == me.defaults.FAMILY
    assert inspect.signature(build_report).parameters["family"].default == me.defaults.FAMILY
    for command in (compare, report):
        option = next(p for p in command.params if p.name == "family")
        assert option.default == me.defaults.FAMILY


def test_warnings_are_recorded_and_reraised():
    rng = np.random.default_rng(0)
    human = rng.normal(size=(5, 4))
    const = np.ones((5, 4))
    const[:, 0] = np.arange(5)  # only input 0 varies: the other inputs are skipped at summary level
    ds = me.ScoreSet.from_matrices({"c": const, "x": human + 1, "h": human}, humans=["h"])
    with pytest.warns(me.DegenerateWarning):
        report = build_report(ds, "h", n_resamples=20, repetitions=5, analyses=[])
    assert any(w.startswith("correlations: ") for w in report.warnings)
    page = render_report(report)
    section = page.split('id="correlations"', 1)[1].split("<section", 1)[0]  # shown beside the table it qualifies
    message = next(w for w in report.warnings if w.startswith("correlations: ")).split(": ", 1)[1]
    import html

    assert f"warning: {html.escape(message)}" in section
    assert "warning: correlations: " not in page.split('id="reproduce"', 1)[1]


# -- analyses ----------------------------------------------------------------------------------------------

def test_every_analysis_runs_on_the_focus_metrics(small):
    _, metrics, report = small
    assert set(report.analyses) == {"delta", "stability", "topk", "verdicts", "normality"}
    focus = tuple(report.settings["focus_metrics"])
    assert set(focus) == set(metrics)  # 4 metrics < REPORT_FOCUS_METRICS: all of them
    assert report.analyses["delta"].metrics == focus and report.analyses["topk"].metrics == focus
    assert report.analyses["stability"].scorers == ("expert.relevance",) + focus
    assert report.analyses["stability"].n_repetitions == 10
    html = render_report(report)
    for key in ("delta", "stability", "topk", "verdicts", "normality"):
        assert f'data-section="{key}"' in html
        assert str(report.analyses[key].signature) in html


def test_focus_metrics_default_to_the_best_system_level_correlations():
    ds = me.load_dataset("summeval")
    metrics = list(ds.metrics[:10])
    with pytest.warns(me.SignificanceWarning, match="use at least 180 resamples"):  # 20 resamples, 9 per row
        report = build_report(ds, "expert.relevance", metrics, n_resamples=20, repetitions=5, analyses=[])
    table = report.table
    best = sorted(metrics, key=lambda m: -table.get(m, "system", "kendall-b").statistic)[:6]
    assert report.settings["focus_metrics"] == best
    assert report.omitted == {name: "not requested." for name in ("delta", "stability", "topk", "verdicts", "normality")}


def test_a_single_input_keeps_the_system_level_and_says_what_is_left_out():
    rng = np.random.default_rng(2)
    human = rng.normal(size=(20, 1))
    ds = me.ScoreSet.from_matrices({"a": human + rng.normal(scale=0.5, size=(20, 1)),
                                    "b": rng.normal(size=(20, 1)), "h": human}, humans=["h"])
    report = build_report(ds, "h", n_resamples=30, repetitions=5)
    assert report.table.levels == ("system",)
    assert report.omitted == {
        "stability": "ranking stability needs at least 4 inputs (two disjoint samples of at least 2 inputs each);"
                     " the dataset has 1.",
        "verdicts": "system verdicts needs at least 2 inputs (paired tests over inputs); the dataset has 1.",
    }
    assert report.analyses["delta"].n_resamples == 0  # no BOOT-INPUTS interval from one input
    html = render_report(report)
    assert "stability: not in this report: ranking stability needs at least 4 inputs" in html


def test_an_analysis_that_cannot_run_is_left_out_with_its_error(monkeypatch):
    from metaeval.report import analysis_sections

    def refuse(*_):
        raise me.ParameterError("`sizes` must be small; got 1000.")

    spec = analysis_sections.ANALYSES["topk"]
    monkeypatch.setitem(analysis_sections.ANALYSES, "topk", dataclasses.replace(spec, run=refuse))
    ds = me.load_dataset("summeval")
    report = build_report(ds, "expert.relevance", ["rouge-1.recall", "rouge-2.recall"], n_resamples=20,
                          repetitions=5, analyses=["topk"])
    assert report.omitted["topk"] == ("metaeval.topk_correlations cannot run on these data: `sizes` must be small;"
                                      " got 1000.")
    assert "topk" not in report.analyses


def test_progress_gets_one_task_per_step(small, tmp_path):
    from rich.console import Console
    from rich.progress import Progress

    ds, metrics, _ = small
    with Progress(console=Console(file=io.StringIO())) as progress:
        report = build_report(ds, "expert.relevance", metrics[:2], n_resamples=20, repetitions=5,
                              analyses=["normality"], progress=progress)
        write_report(report, tmp_path, progress=progress)
    tasks = {t.description: (t.completed, t.total) for t in progress.tasks}
    assert tasks["correlations"] == (12, 12)  # 2 metrics x 2 levels x 3 coefficients
    assert tasks["figures and page"] == (7, 7)  # dataset, correlations, forest, significance (system, summary), normality, reproduce
    assert set(tasks) >= {"significance matrix", "significance matrix (summary level)", "normality", "annotator agreement"}


def test_report_sections_follow_the_analysis_registry():
    from metaeval.analyses import registry
    from metaeval.report import analysis_sections

    with_section = [entry.name for entry in registry.ANALYSES if entry.section]
    assert list(analysis_sections.ANALYSES) == with_section
    assert set(analysis_sections.SECTIONS) == set(with_section)
    for name in with_section:
        assert analysis_sections.ANALYSES[name].api == registry.analysis(name).function


def _documented_cluster_count(statistics, adjusted, alpha):
    """docs/statistics.md's rule, in plain python: sorted by correlation, a metric opens a new cluster
    when a metric of the current cluster beats it (adjusted p < alpha)."""
    order = sorted(range(len(statistics)), key=lambda i: -statistics[i])
    clusters, current = 0, []
    for i in order:
        if not current or any(adjusted[j][i] < alpha for j in current):
            clusters, current = clusters + 1, []
        current.append(i)
    return clusters


def test_regression_summeval_report_clusters_follow_the_documented_rule():
    # Issue 10, item 3: the old rule (beaten by the current *or a better* cluster) gave 26 clusters for
    # the 34 SummEval metrics, one per metric below the top cluster; mt-metrics-eval's rule gives 4.
    ds = me.load_dataset("summeval")
    report = build_report(ds, "expert.relevance", None, levels=("system",), coefficients=("kendall-b",),
                          analyses=())
    c = report.comparison
    assert len(c.metrics) == 34 and c.family == "row" and c.n_resamples == 1000
    adjusted = np.nan_to_num(c.adjusted_pvalues, nan=1.0).tolist()
    expected = _documented_cluster_count(list(c.statistic), adjusted, c.alpha)
    assert max(c.ranks) == expected == 4
    sizes = [c.ranks.count(r) for r in range(1, expected + 1)]
    first = 1
    for rank, size in enumerate(sizes, start=1):
        span = f"{first}-{first + size - 1}" if size > 1 else str(first)
        assert {c.rank_ranges[i] for i in range(34) if c.ranks[i] == rank} == {span}
        first += size
    frame = c.ranking_frame()
    assert list(frame["rank_range"]) == list(c.rank_ranges)
