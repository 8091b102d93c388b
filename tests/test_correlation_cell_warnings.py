"""Warnings of a correlation table folded into one line per kind (issue 20)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.correlation.cell_warnings import cell_prefix, fold_cell_warnings
from metaeval.errors import DataWarning, DegenerateWarning

DEGENERATE = ("Bootstrap resampling of 10 systems is degenerate: {}% of the resamples have fewer than 5 distinct "
              "systems and {}% have a correlation of exactly +-1; the interval is unreliable (Deutsch et al. 2021).")


def test_fold_names_how_many_cells_and_which_with_ranges():
    items = [(cell_prefix("bleu", "system", "spearman") + DEGENERATE.format(0, 43), DegenerateWarning),
             (cell_prefix("bleu", "system", "kendall-b") + DEGENERATE.format(0, 56), DegenerateWarning),
             (cell_prefix("chrf", "system", "kendall-b") + DEGENERATE.format(0, 7), DegenerateWarning),
             (cell_prefix("chrf", "summary", "pearson") + "one input.", DegenerateWarning),
             ("a warning of no cell.", DataWarning),
             ("a warning of no cell.", DataWarning)]
    assert fold_cell_warnings(items) == [
        (DEGENERATE.format(0, "7 to 56") + " [3 table cells: system level; spearman, kendall-b; 2 metrics: bleu, chrf]",
         DegenerateWarning),
        ("metric chrf, summary level, pearson: one input.", DegenerateWarning),
        ("a warning of no cell.", DataWarning),
    ]


def test_fold_keeps_kinds_of_different_categories_and_texts_apart():
    items = [(cell_prefix("a", "system", "pearson") + "one input.", DegenerateWarning),
             (cell_prefix("b", "system", "pearson") + "one input.", DataWarning),
             (cell_prefix("a", "system", "pearson") + "two inputs.", DegenerateWarning),
             (cell_prefix("b", "global", "pearson") + "one input.", DegenerateWarning)]
    assert fold_cell_warnings(items) == [
        ("one input. [2 table cells: system, global level; pearson; 2 metrics: a, b]", DegenerateWarning),
        ("metric b, system level, pearson: one input.", DataWarning),
        ("metric a, system level, pearson: two inputs.", DegenerateWarning),
    ]


def test_fold_same_numbers_everywhere_are_kept_as_they_are():
    items = [(cell_prefix(m, "system", "pearson") + "1 of 3 inputs is constant (0.5 of them).", DegenerateWarning)
             for m in ("x", "y")]
    assert fold_cell_warnings(items) == [
        ("1 of 3 inputs is constant (0.5 of them). [2 table cells: system level; pearson; 2 metrics: x, y]",
         DegenerateWarning)]


@pytest.fixture(scope="module")
def near_perfect(shared_data):
    """WMT20 MQM en-de (10 systems, 200 segments) and 4 metrics close to it: degenerate system-level bootstraps."""
    mqm = me.read_mqm_averages(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv").matrix("mqm")[:, :200]
    rng = np.random.default_rng(0)
    scores = {"mqm": mqm}
    scores.update({f"m{i}": np.round(2 * (mqm + rng.normal(scale=0.5 + i, size=mqm.shape))) / 2 for i in range(4)})
    return me.ScoreSet.from_matrices(scores, humans=["mqm"])


def test_table_raises_one_folded_warning_whose_ranges_are_the_cells(near_perfect):
    kw = dict(levels=["system"], coefficients=["spearman", "kendall-b"], n_resamples=200)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        me.correlation_table(near_perfect, "mqm", **kw)
    texts = [str(w.message) for w in caught if issubclass(w.category, DegenerateWarning)]
    assert len(texts) == 1
    # each cell alone: its own warning and percentage
    cells, shares = [], []
    for metric in near_perfect.scorers[1:]:
        for coefficient in kw["coefficients"]:
            with warnings.catch_warnings(record=True) as one:
                warnings.simplefilter("always")
                me.bootstrap_ci(near_perfect, metric, "mqm", level="system", coefficient=coefficient, n_resamples=200,
                                rng=0)
            found = [str(w.message) for w in one if "is degenerate" in str(w.message)]
            if found:
                cells.append((metric, coefficient))
                shares.append(re.search(r"(\d+)% of the resamples .* and (\d+)% have", found[0]).groups())
    assert len(cells) >= 2

    def span(values):
        low, high = min(values, key=int), max(values, key=int)
        return low if low == high else f"{low} to {high}"
    metrics = list(dict.fromkeys(m for m, _ in cells))
    coefficients = list(dict.fromkeys(c for _, c in cells))
    ranges = (span([s[i] for s in shares]) for i in (0, 1))
    assert texts[0] == (DEGENERATE.format(*ranges) + f" [{len(cells)} table cells: system level; "
                        f"{', '.join(coefficients)}; {len(metrics)} metric{'s' if len(metrics) > 1 else ''}: "
                        f"{', '.join(metrics)}]")


def test_cli_correlate_prints_one_line_per_kind(near_perfect, tmp_path, capsys):
    path = tmp_path / "scores.csv"
    me.write_scores(near_perfect, path)
    code = main(["correlate", "--scores", str(path), "--human", "mqm", "--level", "system", "--n-resamples", "200",
                 "--no-progress"])
    err = capsys.readouterr().err.splitlines()
    assert code == 0
    degenerate = [line for line in err if "is degenerate" in line]
    assert len(degenerate) == 1 and degenerate[0].startswith("metaeval: warning: Bootstrap resampling of 10 systems")
    assert re.search(r"\[\d+ table cells: system level; [a-z, -]+; \d metrics?: m\d(, m\d)*\]$", degenerate[0])
