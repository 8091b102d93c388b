"""Shapiro-Wilk normality of system and per-input scores (Deutsch, Dror & Roth 2021, App. A)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.report import formats


def test_validation_messages(tiny_scoreset):
    with pytest.raises(me.ParameterError) as info:
        me.normality(tiny_scoreset, [])
    assert str(info.value) == "`scorers` must name at least one scorer; got an empty list."
    with pytest.raises(me.ParameterError) as info:
        me.normality(tiny_scoreset, alpha=5)
    assert str(info.value) == "`alpha` must be a number in (0, 1); got 5."


def test_against_scipy_with_a_constant_input_skipped(tiny_scoreset):
    a = np.array(tiny_scoreset.matrix("a"))
    a[:, 2] = 1.0
    ds = me.ScoreSet.from_matrices({"a": a, "human": tiny_scoreset.matrix("human")}, humans=["human"])
    r = me.normality(ds)
    assert r.scorers == ("human", "a") and r.humans == ("human",)
    w, p = stats.shapiro(a.mean(axis=1))
    assert r.system_statistic[1] == pytest.approx(w) and r.system_pvalue[1] == pytest.approx(p)
    expected = [stats.shapiro(a[:, j]).pvalue for j in (0, 1, 3, 4, 5)]
    np.testing.assert_allclose(r.input_pvalues[1, [0, 1, 3, 4, 5]], expected)
    assert np.isnan(r.input_pvalues[1, 2])
    assert (r.n_inputs_tested[1], r.n_inputs_skipped[1]) == (5, 1)
    assert r.share_rejected[1] == pytest.approx(np.mean(np.array(expected) < 0.05))


def test_two_systems_are_nan_with_reason():
    ds = me.ScoreSet.from_matrices({"m": [[1.0, 2.0], [2.0, 1.0]]})
    with pytest.warns(me.DegenerateWarning, match="fewer than 3 scores"):
        r = me.normality(ds)
    assert np.isnan(r.system_pvalue[0]) and r.system_reasons[0] == "system scores of 'm': fewer than 3 scores"
    assert np.isnan(r.share_rejected[0]) and r.n_inputs_skipped[0] == 2


def test_realsumm_every_scorer(shared_data):
    ds = me.load_dataset("realsumm")
    r = me.normality(ds)
    assert r.scorers[0] == "litepyramid.recall" and len(r.scorers) == 27
    assert np.isfinite(r.system_pvalue).all()
    assert (r.n_inputs_tested + r.n_inputs_skipped == 100).all()  # qa-eval.em has constant inputs
    assert r.n_inputs_tested[r.scorers.index("rouge-1.recall")] == 100
    frame = r.to_frame()
    assert frame.loc[0, "human"] and 0 <= frame["input_share_rejected"].min() <= 1
    formats.to_json(r)


def test_input_pvalues_equal_scipy_per_input():
    """The per-input tests of many inputs, decided together, are scipy.stats.shapiro's numbers to the bit."""
    from scipy import stats

    from metaeval.analyses.normality import input_pvalues

    rng = np.random.default_rng(4)
    q = rng.normal(size=(15, 400))
    for x in (q, np.round(q * 4) / 4, np.clip(np.round(q + 3), 1, 5)):
        x = x.copy()
        x[:, :5] = 2.0  # constant inputs: untestable (NaN)
        x[2, 5:40:3] = np.nan  # inputs with a missing score
        expected = []
        for j in range(x.shape[1]):
            v = x[np.isfinite(x[:, j]), j]
            expected.append(np.nan if np.ptp(v) == 0 else float(stats.shapiro(v).pvalue))
        np.testing.assert_array_equal(input_pvalues(x), np.array(expected))
