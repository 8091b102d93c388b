"""The labels of the `mt audit --plot` figure do not overlap (issue 41 item 4): tick labels of each axis, the
legend and the points it could hide, the cell labels and the grid."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.report.mt_audit_figure import draw_mt_audit, figure_size
from metaeval.report.svg import new_figure


def _lp(seed, n=8, m=40):
    r = np.random.default_rng(seed)
    q = r.normal(size=(n, 1)) + r.normal(size=(n, m))
    mats = {"mqm": q, "wave": q + 0.5 * r.normal(size=(n, m))}
    mats.update({f"metric-{c}": q + (0.3 + i / 2) * r.normal(size=(n, m)) for i, c in enumerate("ABCDEF")})
    return me.ScoreSet.from_matrices(mats, humans=["mqm", "wave"], name="x")


@pytest.fixture(scope="module")
def audit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return me.mt_audit({"en-de": _lp(1), "zh-en": _lp(2)}, human="mqm", human_baselines=("wave",),
                           n_resamples=30, n_consistency=8, rng=0)


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 - 0.5 and b.x0 < a.x1 - 0.5 and a.y0 < b.y1 - 0.5 and b.y0 < a.y1 - 0.5


def test_no_label_overlaps(audit):
    with new_figure(*figure_size(audit), ncols=2, gridspec_kw={"width_ratios": [3, 2]}) as (fig, (left, right)):
        draw_mt_audit(audit, fig, left, right)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for axis in (left.xaxis, right.xaxis, left.yaxis):
            boxes = [t.get_window_extent(renderer) for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
            assert not any(_overlap(a, b) for a, b in itertools.combinations(boxes, 2)), axis
        legend = right.get_legend()
        assert legend is not None
        # the legend sits outside the plotting area, so it hides no point
        assert not _overlap(legend.get_window_extent(renderer), right.get_window_extent(renderer))
        # no grid line crosses the cell labels of the heatmap
        assert not any(line.get_visible() for line in left.get_xgridlines() + left.get_ygridlines())
