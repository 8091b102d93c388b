"""P(humans confirm the metric's ordering | metric gap): Firth logistic fit, degenerate cases, real data."""
from __future__ import annotations

import numpy as np
import pytest

import metaeval as me
from metaeval.report import formats
from metaeval.analyses.gap import centred_band, firth_logistic


def one_input(x, z):
    return me.ScoreSet.from_matrices({"m": np.asarray(x, float)[:, None], "h": np.asarray(z, float)[:, None]},
                                     humans=["h"])


def test_validation_messages(tiny_scoreset):
    with pytest.raises(me.ParameterError) as info:
        me.gap_agreement(tiny_scoreset, "a", "human", deltas=[-1])
    assert str(info.value) == "`deltas` must be a number or a list of numbers >= 0 (metric gaps); got array([-1.])."
    with pytest.raises(me.ParameterError) as info:
        me.gap_agreement(tiny_scoreset, "a", "human", grid_points=1)
    assert str(info.value) == "`grid_points` must be an integer >= 2; got 1."


def test_firth_solves_its_modified_score_equation():
    rng = np.random.default_rng(0)
    d = rng.random((3, 80))
    y = (rng.random((3, 80)) < 1 / (1 + np.exp(-(0.3 + 2 * d)))).astype(float)
    w = (rng.random((3, 80)) < 0.9).astype(float)
    beta = firth_logistic(d, y, w)
    for b in range(3):  # X^T (w (y - p) + h (1/2 - p)) = 0, h = diag of the weighted hat matrix (loop)
        x = np.stack([np.ones(80), d[b]], axis=1)
        p = 1 / (1 + np.exp(-x @ beta[b]))
        v = w[b] * p * (1 - p)
        info = x.T @ (v[:, None] * x)
        h = np.array([v[i] * x[i] @ np.linalg.solve(info, x[i]) for i in range(80)])
        score = x.T @ (w[b] * (y[b] - p) + h * (0.5 - p))
        np.testing.assert_allclose(score, 0, atol=1e-7)


def test_firth_is_finite_under_separation_and_nan_when_degenerate():
    d = np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], [0.5, 0.5, 0.5, 0.5]])
    y = np.array([[1.0, 1, 1, 1], [0, 0, 1, 1], [1, 0, 1, 0]])
    beta = firth_logistic(d, y, np.ones_like(d))
    assert np.isfinite(beta[:2]).all()
    # every pair agrees: the penalty adds half an observation per parameter -> odds (4 + 1) / 1, flat
    assert beta[0, 0] == pytest.approx(np.log(5.0)) and abs(beta[0, 1]) < 1e-9
    assert beta[1, 1] > 0  # complete separation: a finite, positive slope
    assert np.isnan(beta[2]).all()  # a single gap value


def test_centred_band_contains_the_estimate():
    curves = np.random.default_rng(0).uniform(0.1, 0.4, size=(200, 1, 3))
    low, high, median, dropped = centred_band(curves, np.full((1, 3), 0.7), 0.9)
    assert (low < 0.7).all() and (high > 0.7).all() and (dropped == 0).all()
    assert (median < 0.4).all()


def test_metric_equal_to_humans_always_agrees():
    rng = np.random.default_rng(1)
    human = rng.normal(size=(8, 15)) + np.arange(8)[:, None]
    ds = me.ScoreSet.from_matrices({"m": 10 * human, "h": human}, humans=["h"])
    r = me.gap_agreement(ds, "m", "h", deltas=[5.0], n_resamples=50, rng=0)
    assert r.agreement[0] == 1.0 and r.n_pairs[0] == 28 and r.n_excluded[0] == 0
    assert r.at_delta[0, 0] > 0.9 and (r.probability > 0.9).all()
    ds = me.ScoreSet.from_matrices({"m": -human, "h": human}, humans=["h"])
    r = me.gap_agreement(ds, "m", "h", n_resamples=0)
    assert r.agreement[0] == 0.0 and (r.probability < 0.1).all()


@pytest.mark.filterwarnings("ignore:BOOT-INPUTS cannot resample the inputs")  # one input, on purpose
def test_degenerate_fits_are_nan_with_reasons():
    with pytest.warns(me.DegenerateWarning, match="fewer than 2 system pairs ordered by both"):
        r = me.gap_agreement(one_input([1, 2], [1, 2]), "m", "h", deltas=[0.5], n_resamples=10, rng=0)
    assert np.isnan(r.at_delta).all() and np.isnan(r.probability).all()
    with pytest.warns(me.DegenerateWarning, match="fewer than 2 system pairs"):
        r = me.gap_agreement(one_input([1, 2, 3], [5, 5, 5]), "m", "h", n_resamples=0)
    assert r.n_excluded[0] == 3


def test_summeval_rouge1_half_point(shared_data):
    ds = me.load_dataset("summeval")
    r = me.gap_agreement(ds, ["rouge-1.recall", "rouge-2.recall"], "expert.relevance", deltas=[0.5, 2.0],
                         n_resamples=200, rng=0)
    assert r.n_pairs.tolist() == [120, 120]
    assert np.all((r.at_delta_low <= r.at_delta) & (r.at_delta <= r.at_delta_high))
    assert np.all(np.diff(r.probability, axis=1) >= 0)  # agreement rises with the gap
    again = me.gap_agreement(ds, ["rouge-1.recall", "rouge-2.recall"], "expert.relevance", deltas=[0.5, 2.0],
                             n_resamples=200, rng=0)
    np.testing.assert_array_equal(r.at_delta_low, again.at_delta_low)
    assert len(r.to_frame()) == 4 and len(r.curve_frame()) == 100 and len(r.bins_frame()) == 20
    formats.to_json(r)


def test_gaps_beyond_the_data_warn_as_extrapolation(shared_data):
    ds = me.load_dataset("realsumm")
    with pytest.warns(me.MetaevalWarning, match=r"extrapolations \(rouge-1.recall: 0.5 > 0.2212\)"):
        r = me.gap_agreement(ds, "rouge-1.recall", "litepyramid.recall", deltas=[0.5], n_resamples=0)
    assert r.to_frame()["extrapolated"].tolist() == [True]


def test_one_system_is_an_error_not_a_crash():
    """Regression found by tests/test_fuzz_cli.py: one system gave numpy's 'zero-size array' ValueError."""
    ds = me.ScoreSet.from_matrices({"m": np.ones((1, 3)), "h": np.ones((1, 3))}, systems=["s"],
                                   inputs=["a", "b", "c"], humans=["h"])
    with pytest.raises(me.errors.ScoreSetError, match=r"^`ds` must have at least 2 systems \(a gap is between two\);"
                                                      r" got 1\.$"):
        me.gap_agreement(ds, ["m"], "h")
