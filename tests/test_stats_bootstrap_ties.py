"""Bootstrap kernels on tie-heavy metrics (issue 20): fast path == reference path to 1e-12.

Real human scores (WMT20 MQM en-de, averaged over raters: mostly 0 and small negative steps; SummEval's
averaged expert relevance) against metrics with the ties of real metric scores: rounded to 0.5, LLM-judge
integers 0-100 in steps of 5, sentence-BLEU-like with 40% exact zeros; with the default tie rule and with
exact ties (``rtol=0``).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.stats.resampling.bootstrap import bootstrap_interval, bootstrap_samples
from metaeval.stats.kernels import bootstrap_kernel
from metaeval.stats.resampling.draws import BootstrapDraws, bootstrap_draws
from metaeval.stats.correlations.ties import TIE_RTOL

KINDS = ("half", "judge", "zeros")


def tie_heavy_metric(z, kind, seed=0):
    """``z`` plus noise, with the ties of a rounded / judge / zero-inflated metric."""
    noisy = z + np.random.default_rng(seed).normal(scale=2.0, size=z.shape)
    if kind == "half":
        return np.round(noisy * 2) / 2
    if kind == "judge":
        return 5.0 * np.round(20.0 / (1.0 + np.exp(-(noisy + 2.0) / 3.0)))
    return np.where(noisy <= np.quantile(noisy, 0.4), 0.0, noisy - noisy.min())


@pytest.fixture(scope="module")
def mqm(shared_data):
    scores = me.read_mqm_averages(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv")
    return scores.matrix("mqm")[:, :240]  # 10 systems x 240 segments (the reference path is slow)


def rules():
    return [("default", TIE_RTOL), ("exact", 0.0)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("coefficient", ["spearman", "kendall-b", "pearson"])
@pytest.mark.parametrize("level", ["summary", "system"])
@pytest.mark.parametrize("rule", rules(), ids=lambda r: r[0])
def test_kernels_equal_reference_on_tie_heavy_mqm(mqm, kind, coefficient, level, rule):
    x = tie_heavy_metric(mqm, kind)
    for method in ("systems", "inputs", "both"):
        draws = bootstrap_draws(*x.shape, method=method, n_resamples=40, rng=3)
        kw = dict(level=level, coefficient=coefficient, draws=draws, rtol=rule[1])
        assert bootstrap_kernel(x, mqm, level=level, coefficient=coefficient, draws=draws, rtol=rule[1]) is not None
        fast = bootstrap_samples(x, mqm, **kw)
        ref = bootstrap_samples(x, mqm, engine="reference", **kw)
        np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
        assert np.isfinite(fast).all()


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r[0])
def test_summary_spearman_kernel_on_summeval(rule):
    ds = me.load_dataset("summeval")
    z = ds.matrix(ds.humans[0])
    for metric in [m for m in ds.scorers if m not in ds.humans][:4]:
        x = ds.matrix(metric)
        draws = bootstrap_draws(*x.shape, method="both", n_resamples=30, rng=1)
        kw = dict(level="summary", coefficient="spearman", draws=draws, rtol=rule[1])
        fast = bootstrap_samples(x, z, **kw)
        ref = bootstrap_samples(x, z, engine="reference", **kw)
        np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)


def test_summary_spearman_kernel_against_scipy_on_a_hand_built_resample():
    # one input, systems 0 and 2 drawn twice: the copies are tied values of the resampled vector
    x = np.array([[1.0], [2.0], [2.0], [5.0], [0.0]])
    z = np.array([[3.0], [3.0], [1.0], [4.0], [0.0]])
    rows = np.array([[0, 0, 2, 2, 3]])
    draws = BootstrapDraws("systems", 5, 1, rows, None)
    out = bootstrap_samples(x, z, level="summary", coefficient="spearman", draws=draws)
    expected = stats.spearmanr(x[rows[0], 0], z[rows[0], 0])[0]
    assert out[0] == pytest.approx(expected, abs=1e-15)
    # average ranks of [1, 1, 2, 2, 5] are [1.5, 1.5, 3.5, 3.5, 5]; of [3, 3, 1, 1, 4]: [3.5, 3.5, 1.5, 1.5, 5]
    rx, rz = np.array([1.5, 1.5, 3.5, 3.5, 5]), np.array([3.5, 3.5, 1.5, 1.5, 5])
    assert out[0] == pytest.approx(np.corrcoef(rx, rz)[0, 1], abs=1e-15)


def test_summary_spearman_constant_resample_is_undefined_and_skipped():
    x = np.array([[1.0, 1.0], [2.0, 3.0], [3.0, 2.0]])
    z = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    draws = BootstrapDraws("systems", 3, 2, np.array([[0, 0, 0], [1, 1, 2], [0, 1, 2]]), None)
    fast = bootstrap_samples(x, z, level="summary", coefficient="spearman", draws=draws)
    ref = bootstrap_samples(x, z, level="summary", coefficient="spearman", draws=draws, engine="reference")
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-15)
    assert np.isnan(fast[0]) and np.isfinite(fast[1:]).all()


@pytest.mark.parametrize("kind", KINDS)
def test_summary_spearman_does_not_depend_on_the_batch(mqm, kind):
    x = tie_heavy_metric(mqm, kind, seed=1)
    draws = bootstrap_draws(*x.shape, method="both", n_resamples=50, rng=5)
    kw = dict(level="summary", coefficient="spearman", draws=draws)
    whole = bootstrap_samples(x, mqm, **kw)
    for batch in (1, 7, 50):
        np.testing.assert_array_equal(bootstrap_samples(x, mqm, batch=batch, **kw), whole)


def test_summary_spearman_interval_uses_the_kernel_and_matches_reference(mqm):
    x = tie_heavy_metric(mqm, "judge")
    kw = dict(level="summary", coefficient="spearman", method="both", n_resamples=60, rng=0)
    fast = bootstrap_interval(x, mqm, **kw)
    ref = bootstrap_interval(x, mqm, engine="reference", **kw)
    assert fast.ci == pytest.approx(ref.ci, abs=1e-12)
    np.testing.assert_allclose(fast.samples, ref.samples, rtol=0, atol=1e-12)


def test_spearman_kernel_only_where_its_quadratic_tables_are_small():
    draws = bootstrap_draws(15, 2000, method="both", n_resamples=2, rng=0)
    x = np.random.default_rng(0).normal(size=(15, 2000))
    assert bootstrap_kernel(x, x, level="summary", coefficient="spearman", draws=draws) is not None
    # by-system level of the same data: N^2 M = 2000^2 x 15 rank coefficients, the reference path
    assert bootstrap_kernel(x, x, level="by-system", coefficient="spearman", draws=draws) is None
