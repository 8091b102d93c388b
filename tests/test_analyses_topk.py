"""Top-k systems (REALSumm Exp-II): selection, degenerate k, agreement with bootstrap_ci at k = N."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.report import formats
from metaeval.analyses.topk import top_indices

METRICS = ["rouge-1.recall", "rouge-2.recall", "rouge-l.recall", "bertscore.recall", "js-2"]


def one_input(x, z):
    return me.ScoreSet.from_matrices({"m": np.asarray(x, float)[:, None], "h": np.asarray(z, float)[:, None]},
                                     humans=["h"])


def test_validation_messages():
    ds = one_input([1, 2, 3, 4], [4, 3, 2, 1])
    with pytest.raises(me.ParameterError) as info:
        me.topk_correlations(ds, "m", "h", ks=[5])
    assert str(info.value) == "`ks` must be a non-empty list of distinct integers between 1 and 4; got [5]."
    with pytest.raises(me.ParameterError) as info:
        me.topk_correlations(ds, "m", "h", coefficient="cosine")
    assert str(info.value).startswith("`coefficient` must be one of")


def test_top_indices_are_best_first_ties_by_system_order():
    assert top_indices(np.array([3.0, 5.0, 5.0, 1.0, np.nan]), 3).tolist() == [1, 2, 0]
    assert top_indices(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]), 2).tolist() == [[2, 1], [0, 1]]


def test_hand_computed_top_k():
    x = [1, 2, 3, 5, 4, 0]
    z = [6, 5, 4, 3, 2, 1]
    r = me.topk_correlations(me.ScoreSet.from_matrices(
        {"m": np.array(x, float)[:, None], "h": np.array(z, float)[:, None]}, humans=["h"]),
        "m", "h", n_resamples=0)
    assert r.ks.tolist() == [6, 5, 4, 3]
    for g, k in enumerate(r.ks):
        assert r.statistic[0, g] == pytest.approx(stats.kendalltau(x[:k], z[:k]).statistic)
    assert r.top_systems[-1] == ("0", "1", "2")
    assert r.statistic[0, -1] == pytest.approx(-1.0)


@pytest.mark.filterwarnings("ignore:BOOT-INPUTS cannot resample the inputs")  # one input, on purpose
def test_degenerate_k_and_tied_humans_are_nan_with_reasons():
    ds = one_input([1, 2, 3, 4], [4, 3, 2, 1])
    with pytest.warns(me.DegenerateWarning, match="a correlation over 2 systems is not meaningful"):
        r = me.topk_correlations(ds, "m", "h", ks=[4, 2], n_resamples=10, rng=0)
    assert np.isnan(r.statistic[0, 1]) and np.isnan(r.ci_low[0, 1])
    assert r.reasons[0, 1] == "a correlation over 2 systems is not meaningful (at least 3 needed)"
    ds = one_input([1, 2, 3, 4, 5], [2, 2, 2, 1, 0])
    with pytest.warns(me.DegenerateWarning, match="the human scores of the top 3 systems are all tied"):
        r = me.topk_correlations(ds, "m", "h", n_resamples=0)
    assert np.isfinite(r.statistic[0, 0]) and np.isnan(r.statistic[0, -1])
    # a dataset with 2 systems: the only level is k = 2
    with pytest.warns(me.DegenerateWarning):
        r = me.topk_correlations(one_input([1, 2], [1, 2]), "m", "h", n_resamples=0)
    assert r.ks.tolist() == [2] and np.isnan(r.statistic).all()


def test_realsumm_topk_curves_and_k_equal_n_matches_bootstrap_ci(shared_data):
    ds = me.load_dataset("realsumm")
    r = me.topk_correlations(ds, METRICS, "litepyramid.recall", n_resamples=200, rng=0)
    assert r.ks.tolist() == list(range(24, 2, -1))
    for a, metric in enumerate(METRICS):
        ref = me.bootstrap_ci(ds, metric, "litepyramid.recall", method="inputs", n_resamples=200, rng=0)
        assert r.statistic[a, 0] == pytest.approx(ref.statistic)
        assert (r.ci_low[a, 0], r.ci_high[a, 0]) == pytest.approx(ref.ci)
    # metrics agree less with humans on the best systems (REALSumm's finding)
    assert np.all(r.statistic[:, 0] > np.nanmean(r.statistic[:, -10:], axis=1))
    widths = r.ci_high - r.ci_low
    assert np.all(widths[:, -1] > widths[:, 0])
    assert len(r.to_frame()) == 5 * 22
    formats.to_json(r)
