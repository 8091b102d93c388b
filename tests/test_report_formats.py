"""LaTeX and Markdown tables for papers: layout, escaping, signatures; JSON / CSV unchanged."""
from __future__ import annotations

import numpy as np
import pytest

import metaeval as me
from metaeval.report import formats


@pytest.fixture(scope="module")
def table():
    ds = me.load_dataset("summeval")
    return me.correlation_table(ds, "expert.relevance", ["rouge-2.recall", "bertscore.recall"],
                                levels=["system", "summary"], coefficients=["pearson", "kendall"],
                                n_resamples=50, rng=0)


def test_formats_registry():
    assert formats.FORMATS == ("table", "json", "csv", "latex", "markdown")
    with pytest.raises(me.ParameterError) as info:
        formats.to_paper(None, "html")
    assert str(info.value) == "`format` must be one of 'latex', 'markdown'; got 'html'."


@pytest.mark.parametrize("raw,latex", [
    ("rouge-2.recall", "rouge-2.recall"),
    ("a_b & c%", r"a\_b \& c\%"),
    ("$x$ #1 {y} ~z ^w \\", r"\$x\$ \#1 \{y\} \textasciitilde{}z \textasciicircum{}w \textbackslash{}"),
    ("<script>|", r"\textless{}script\textgreater{}\textbar{}"),
])
def test_latex_escape(raw, latex):
    assert formats.latex_escape(raw) == latex


@pytest.mark.parametrize("raw,markdown", [
    ("rouge-2.recall", "rouge-2.recall"),
    ("a|b", "a\\|b"),
    ("*x* _y_ `z` [l](u)", "\\*x\\* \\_y\\_ \\`z\\` \\[l\\](u)"),
    ("<script>alert(1)</script> & co", "&lt;script&gt;alert(1)&lt;/script&gt; & co"),
    ("p < 0.05, p > 0.01, &amp;", "p < 0.05, p > 0.01, &amp;amp;"),  # only what could make markup (issue 41)
    ("<!-- x --> <a:b> &#60;", "&lt;!-- x --&gt; &lt;a:b&gt; &amp;#60;"),
])
def test_markdown_escape(raw, markdown):
    assert formats.markdown_escape(raw) == markdown


def test_latex_correlation_table(table):
    out = formats.to_paper(table, "latex")
    lines = out.splitlines()
    assert lines[0] == r"\begin{tabular}{lrrrr}" and lines[1] == r"\toprule"
    assert lines[2] == r" & \multicolumn{2}{c}{system} & \multicolumn{2}{c}{summary} \\"
    assert lines[3] == r"\cmidrule(lr){2-3}\cmidrule(lr){4-5}"
    assert lines[4] == r"Metric & pearson & kendall-b & pearson & kendall-b \\"
    r = table.get("rouge-2.recall", "system", "pearson")
    expected = f"rouge-2.recall & {r.statistic:.3f} {{\\scriptsize [{r.ci[0]:.2f}, {r.ci[1]:.2f}]}} & "
    assert lines[6].startswith(expected) and lines[6].endswith(r" \\")
    assert lines[-3:-1] == [r"\bottomrule", r"\end{tabular}"]
    assert lines[-1].startswith("% correlation with expert.relevance; signature: dataset:summeval|")


def test_markdown_correlation_table(table):
    out = formats.to_paper(table, "markdown")
    lines = out.splitlines()
    assert lines[0] == "| metric | system pearson | system kendall-b | summary pearson | summary kendall-b |"
    assert lines[1] == "|:---|---:|---:|---:|---:|"
    r = table.get("bertscore.recall", "summary", "kendall-b")
    assert lines[3].startswith("| bertscore.recall | ")
    assert lines[3].endswith(f" {r.statistic:.3f} [{r.ci[0]:.2f}, {r.ci[1]:.2f}] |")
    assert lines[-1].startswith("Correlation with expert.relevance. signature: dataset:summeval\\|")


def test_comparison_ranking_tables():
    rng = np.random.default_rng(0)
    human = rng.normal(size=(12, 8)) + np.arange(12)[:, None]
    ds = me.ScoreSet.from_matrices({"good_1": human + rng.normal(scale=0.1, size=(12, 8)),
                                    "bad|2": rng.normal(size=(12, 8)), "h": human}, humans=["h"])
    result = me.compare_metrics(ds, ["bad|2", "good_1"], "h", n_resamples=200, rng=0)
    latex = formats.to_paper(result, "latex").splitlines()
    assert latex[:4] == [r"\begin{tabular}{rrrlrl}", r"\toprule",
                         r"Rank & Positions & \# & Metric & kendall-b & Better than \\", r"\midrule"]
    assert latex[4].startswith(r"1 & 1 & 1 & good\_1 & ") and latex[4].endswith(r" & 2 \\")
    assert latex[5].startswith(r"2 & 2 & 2 & bad\textbar{}2 & ") and latex[5].endswith(r" & - \\")
    markdown = formats.to_paper(result, "markdown").splitlines()
    assert markdown[0] == "| Rank | Positions | # | Metric | kendall-b | Better than |"
    assert markdown[3].startswith("| 2 | 2 | 2 | bad\\|2 | ")


def test_any_other_result_uses_its_frame():
    ds = me.load_dataset("summeval")
    r = me.correlate(ds, "rouge-2.recall", "expert.relevance")
    out = formats.to_paper(r, "markdown").splitlines()
    assert out[0].startswith("| metric | human | level | coefficient | statistic |")
    assert out[2].startswith("| rouge-2.recall | expert.relevance | system | kendall-b | ")
    assert out[-1].startswith("signature: dataset:summeval")
