"""Tests of metaeval.stats.significance.williams."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metaeval.errors import ParameterError
from metaeval.stats.significance.williams import WilliamsResult, williams_test


def _by_hand(r12, r13, r23, n):
    k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    return (r12 - r13) * math.sqrt((n - 1) * (1 + r23)) / math.sqrt(
        2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3
    )


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((0.5, 0.4, 0.3, 10), dict(alternative="bigger"),
         "`alternative` must be one of 'two-sided', 'greater', 'less'; got 'bigger'."),
        ((1.2, 0.4, 0.3, 10), {}, "`r12` must be in [-1, 1]; got 1.2."),
        ((0.5, -1.5, 0.3, 10), {}, "`r13` must be in [-1, 1]; got -1.5."),
        ((0.5, 0.4, [0.3, 2.0], 10), {}, "`r23` must be in [-1, 1]; got 2.0."),
        ((0.5, 0.4, 0.3, 3), {}, "`n` must be an integer >= 4; got 3."),
        ((0.5, 0.4, 0.3, 10.5), {}, "`n` must be an integer >= 4; got 10.5."),
    ],
)
def test_messages(args, kwargs, message):
    with pytest.raises(ParameterError) as e:
        williams_test(*args, **kwargs)
    assert str(e.value) == message


def test_alternative_is_keyword_only():
    with pytest.raises(TypeError):
        williams_test(0.5, 0.4, 0.3, 10, "greater")


@pytest.mark.parametrize(
    "r12, r13, r23, n",
    [(0.9, 0.8, 0.85, 20), (0.6, 0.7, 0.4, 12), (0.3, -0.2, 0.1, 50), (-0.5, 0.5, -0.6, 8), (0.8, 0.8, 0.9, 30)],
)
def test_against_hand_computation(r12, r13, r23, n):
    t = _by_hand(r12, r13, r23, n)
    out = williams_test(r12, r13, r23, n)
    assert isinstance(out, WilliamsResult)
    assert out.statistic == pytest.approx(t, abs=1e-12)
    assert out.df == n - 3
    assert out.pvalue == pytest.approx(2 * stats.t.sf(abs(t), n - 3), abs=1e-12)
    greater = williams_test(r12, r13, r23, n, alternative="greater").pvalue
    less = williams_test(r12, r13, r23, n, alternative="less").pvalue
    assert greater == pytest.approx(stats.t.sf(t, n - 3), abs=1e-12)
    assert greater + less == pytest.approx(1.0)


def test_pinned_value():
    out = williams_test(0.9, 0.8, 0.85, 20, alternative="greater")
    assert (out.statistic, out.pvalue) == pytest.approx((1.729180, 0.050946), abs=1e-6)


def _data(seed, sign_x=1.0):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(15, 6)) + np.arange(15)[:, None] * 0.3
    x = sign_x * z + rng.normal(scale=0.8, size=z.shape)
    y = z + rng.normal(scale=1.5, size=z.shape)
    return x, y, z


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_matches_nlpstats_on_positive_correlations(seed, alternative):
    nlpstats = pytest.importorskip("nlpstats.correlations")
    x, y, z = _data(seed)
    xs, ys, zs = x.mean(1), y.mean(1), z.mean(1)
    r12, r13, r23 = stats.pearsonr(xs, zs)[0], stats.pearsonr(ys, zs)[0], stats.pearsonr(xs, ys)[0]
    assert min(r12, r13, r23) > 0
    ours = williams_test(r12, r13, r23, 15, alternative=alternative).pvalue
    theirs = nlpstats.williams_test(x, y, z, "system", "pearson", alternative=alternative).pvalue
    assert ours == pytest.approx(theirs, abs=1e-10)


def test_signed_correlations_differ_from_nlpstats():
    """nlpstats uses |r|: a metric anti-correlated with the humans 'beats' a positive one. We do not."""
    nlpstats = pytest.importorskip("nlpstats.correlations")
    x, y, z = _data(3, sign_x=-1.0)
    xs, ys, zs = x.mean(1), y.mean(1), z.mean(1)
    r12, r13, r23 = stats.pearsonr(xs, zs)[0], stats.pearsonr(ys, zs)[0], stats.pearsonr(xs, ys)[0]
    assert r12 < -0.9 and r13 > 0.8
    ours = williams_test(r12, r13, r23, 15, alternative="greater")
    theirs = nlpstats.williams_test(x, y, z, "system", "pearson", alternative="greater").pvalue
    assert ours.statistic < 0 and ours.pvalue > 0.99
    assert theirs < 0.5


def test_undefined_and_vectorized():
    assert math.isnan(williams_test(np.nan, 0.5, 0.5, 10).pvalue)
    identical = williams_test(1.0, 1.0, 1.0, 10, alternative="greater")  # 0 / 0: no difference, p = 1
    assert identical.statistic == 0.0 and identical.pvalue == 1.0
    assert williams_test(0.6, 0.6, 1.0 - 1e-16, 10).pvalue == 1.0
    assert math.isnan(williams_test(0.9, -0.9, 0.9, 10).statistic)  # inconsistent correlations
    same = williams_test(0.7, 0.7, 0.5, 10)
    assert same.statistic == 0.0 and same.pvalue == 1.0
    r12 = np.array([0.9, 0.6, 0.3])
    out = williams_test(r12, 0.5, 0.4, np.array([10, 20, 30]), alternative="greater")
    assert out.pvalue.shape == (3,)
    for i in range(3):
        assert out.pvalue[i] == pytest.approx(williams_test(r12[i], 0.5, 0.4, 10 * (i + 1), alternative="greater").pvalue)


@pytest.mark.parametrize("r12,r13,r23,n", [(0.9, 0.8, 0.85, 20), (0.31, 0.77, 0.42, 9), (-0.2, 0.5, 0.1, 40)])
def test_swapping_the_metrics_mirrors_the_result(r12, r13, r23, n):
    for alternative, mirrored in (("greater", "less"), ("less", "greater"), ("two-sided", "two-sided")):
        ab = williams_test(r12, r13, r23, n, alternative=alternative)
        ba = williams_test(r13, r12, r23, n, alternative=mirrored)
        assert ab.statistic == -ba.statistic and ab.pvalue == ba.pvalue
