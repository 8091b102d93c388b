"""The report's figures are legible: no text drawn over other text (issue 21 item 10)."""
from __future__ import annotations

import pytest

import metaeval as me
from metaeval.report import figures


@pytest.mark.parametrize("n_metrics", [1, 2, 12])
def test_forest_plot_axis_label_clears_the_tick_labels(monkeypatch, n_metrics):
    ds = me.load_dataset("summeval")
    metrics = [m for m in ds.scorers if m not in ds.humans][:n_metrics]
    table = me.correlation_table(ds, "expert.relevance", metrics, levels=["system"],
                                 coefficients=["pearson", "spearman", "kendall-b"], n_resamples=50, rng=0)
    seen = {}
    original = figures.figure_svg

    def inspect(fig, *, key, alt):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        label = fig._supxlabel.get_window_extent(renderer)
        ticks = [t.get_window_extent(renderer) for ax in fig.axes for t in ax.get_xticklabels() if t.get_text()]
        seen["overlaps"] = [t for t in ticks if t.overlaps(label)]
        seen["ticks"] = len(ticks)
        return original(fig, key=key, alt=alt)

    monkeypatch.setattr(figures, "figure_svg", inspect)
    figures.forest_plot(table, "system", order_by="kendall-b")
    assert seen["ticks"] > 0 and seen["overlaps"] == []


def test_dataset_facts_count_missing_annotator_ratings():
    from metaeval.report.page import _missing_human

    assert _missing_human({"missing_cells": 0, "annotators": 3, "missing_ratings": 5}, 640) == (
        "0 of 640 (5 of 1920 annotator ratings missing)")
    assert _missing_human({"missing_cells": 2, "annotators": 1, "missing_ratings": 2}, 640) == "2 of 640"
