"""Judged subset vs full test set (Deutsch, Dror & Roth 2022, Sec. 3): ranking stability and score variance."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.report import formats
from metaeval.analyses.stability import _sample_weights, default_sizes

METRICS = ["rouge-1.recall", "rouge-2.recall", "rouge-l.recall", "bertscore.recall", "js-2"]


def pilot(n_systems=8, n_judged=10, n_test=40, seed=0):
    """Metric scored on n_test inputs, the human on the first n_judged."""
    rng = np.random.default_rng(seed)
    quality = np.arange(n_systems)[:, None] / 3
    metric = quality + rng.normal(size=(n_systems, n_test))
    human = quality[:, :1] + rng.normal(size=(n_systems, n_test))
    human[:, n_judged:] = np.nan
    return me.ScoreSet.from_matrices({"m": metric, "h": human}, humans=["h"])


# -- ranking stability ------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(sizes=[0, 5]), "`sizes` must be a non-empty list of distinct integers >= 1; got [0, 5]."),
    (dict(sizes=[]), "`sizes` must be a non-empty list of distinct integers >= 1; got []."),
    (dict(n_repetitions=0), "`n_repetitions` must be an integer >= 1; got 0."),
    (dict(sampling="overlap"), "`sampling` must be one of 'disjoint', 'replacement'; got 'overlap'."),
])
def test_stability_validation(kwargs, message):
    with pytest.raises(me.ParameterError) as info:
        me.ranking_stability(pilot(), "m", "h", **kwargs)
    assert str(info.value) == message


def test_disjoint_samples_share_no_input():
    first, second = _sample_weights(20, 7, 50, "disjoint", np.random.default_rng(0))
    assert (first.sum(axis=1) == 7).all() and (second.sum(axis=1) == 7).all()
    assert not (first * second).any()
    first, second = _sample_weights(20, 30, 5, "replacement", np.random.default_rng(0))
    assert (first.sum(axis=1) == 30).all()


def test_default_sizes():
    assert default_sizes(100, "disjoint") == (5, 10, 15, 20, 25, 30, 35, 40, 45, 50)
    assert default_sizes(100, "replacement")[-1] == 100


def test_identical_inputs_give_perfect_stability():
    column = np.arange(6, dtype=float)[:, None]
    ds = me.ScoreSet.from_matrices({"m": np.tile(column, 10), "h": np.tile(-column, 10)}, humans=["h"])
    r = me.ranking_stability(ds, "m", "h", sizes=[1, 5], n_repetitions=20, rng=0)
    np.testing.assert_array_equal(r.mean, 1.0)
    np.testing.assert_array_equal(r.sd, 0.0)


def test_vectorized_equals_a_loop_over_repetitions():
    ds = pilot(n_test=10)
    r = me.ranking_stability(ds, "m", "h", sizes=[3], n_repetitions=40, rng=7)
    gen = np.random.default_rng(np.random.SeedSequence(7).spawn(1)[0])  # the one chunk of 40 repetitions
    first, second = _sample_weights(10, 3, 40, "disjoint", gen)
    for s, values in enumerate([ds.matrix("h"), ds.matrix("m")]):
        expected = [stats.kendalltau(values[:, f > 0].mean(axis=1), values[:, g > 0].mean(axis=1)).statistic
                    for f, g in zip(first, second)]
        np.testing.assert_allclose(r.samples[s, 0], expected)


def test_too_large_sizes_are_nan_with_reason():
    with pytest.warns(me.DegenerateWarning, match="two disjoint samples of 6 inputs need 12 inputs; 10 available"):
        r = me.ranking_stability(pilot(), "m", "h", sizes=[2, 6], n_repetitions=10, rng=0)
    assert np.isfinite(r.mean[:, 0]).all() and np.isnan(r.mean[:, 1]).all()
    # full test set: the metric has 40 inputs, so m = 6 is possible for it but not for the human
    with pytest.warns(me.DegenerateWarning):
        r = me.ranking_stability(pilot(), "m", "h", sizes=[6], n_repetitions=10, full_test_set=True, rng=0)
    assert np.isnan(r.mean[0, 0]) and np.isfinite(r.mean[1, 0])
    assert r.n_inputs.tolist() == [10, 40]


def test_realsumm_stability_curves(shared_data):
    ds = me.load_dataset("realsumm")
    r = me.ranking_stability(ds, METRICS, "litepyramid.recall", sizes=[5, 25, 50], n_repetitions=200, rng=0)
    assert r.scorers == ("litepyramid.recall",) + tuple(METRICS)
    assert np.all(np.diff(r.mean, axis=1) > 0)  # more inputs, more stable rankings
    assert np.all(r.mean[:, -1] > 0.4) and np.all(r.sd[:, -1] < 0.15)
    again = me.ranking_stability(ds, METRICS, "litepyramid.recall", sizes=[5, 25, 50], n_repetitions=200, rng=0)
    np.testing.assert_array_equal(r.mean, again.mean)
    assert len(r.to_frame()) == 6 * 3
    formats.to_json(r)


# -- score variance -------------------------------------------------------------------------------

def test_variance_validation():
    with pytest.raises(me.ParameterError) as info:
        me.score_variance(pilot(), "m", "h", methods=["rows"])
    assert str(info.value) == ("`methods` must be a list of distinct methods among 'systems', 'inputs', 'both'; "
                               "got ('rows',).")


def test_variance_reduction_matches_the_exact_bootstrap_variance():
    ds = pilot()
    r = me.score_variance(ds, "m", "h", methods=["inputs"], n_resamples=3000, rng=0)
    metric = ds.matrix("m")
    jud = (metric[:, :10].var(axis=1) / 10).mean()
    test = (metric.var(axis=1) / 40).mean()
    assert (r.n_inputs_judged[0], r.n_inputs_test[0]) == (10, 40)
    assert r.analytic_reduction[0] == pytest.approx(100 * (jud - test) / jud)
    assert r.variance_judged[0] == pytest.approx(jud, rel=0.1)
    assert r.variance_test[0] == pytest.approx(test, rel=0.1)
    assert r.width_judged.shape == (1, 1) and r.width_judged[0, 0] > 0 and r.width_test[0, 0] > 0


def test_no_extra_inputs_warns_and_gives_zero_reduction():
    rng = np.random.default_rng(0)
    ds = me.ScoreSet.from_matrices({"m": rng.normal(size=(6, 8)), "h": rng.normal(size=(6, 8))}, humans=["h"])
    with pytest.warns(me.DegenerateWarning, match=r"'m' have no scores beyond the judged inputs"):
        r = me.score_variance(ds, "m", "h", n_resamples=50, rng=0)
    assert r.reduction[0] == 0 and r.analytic_reduction[0] == 0
    np.testing.assert_array_equal(r.width_reduction, 0.0)
