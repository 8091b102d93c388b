"""All-pairs matrix: shared draws, equality with the single-pair tests, antisymmetric structure."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.significance.paired_bootstrap import bootstrap_test
from metaeval.stats.significance.pairs import pairwise_tests
from metaeval.stats.significance.permutation import permutation_test


def metrics(seed, p=4, n=10, m=8, ties=True):
    rng = np.random.default_rng(seed)
    z = rng.integers(1, 5, size=(n, m)).astype(float)
    noise = [0.5, 1.0, 2.0, 4.0, 1.5, 3.0][:p]
    if ties:
        scores = np.stack([np.round(z + s * rng.normal(size=z.shape)) for s in noise])
    else:
        scores = np.stack([z + s * rng.normal(size=z.shape) for s in noise])
    return scores, z


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("coefficient", ["pearson", "kendall-b"])
@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_permutation_matrix_equals_single_tests(level, coefficient, method):
    scores, z = metrics(0)
    out = pairwise_tests(scores, z, test="permutation", level=level, coefficient=coefficient, method=method,
                         n_resamples=80, rng=3)
    for i in range(4):
        for j in range(4):
            if i == j:
                assert np.isnan(out.pvalues[i, j])
                continue
            single = permutation_test(scores[i], scores[j], z, level=level, coefficient=coefficient, method=method,
                                      n_resamples=80, rng=3)
            assert out.pvalues[i, j] == pytest.approx(single.pvalue, abs=1e-12)
            assert out.deltas[i, j] == pytest.approx(single.delta, abs=1e-12)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_bootstrap_matrix_equals_single_tests(alternative):
    scores, z = metrics(1)
    out = pairwise_tests(scores, z, test="bootstrap", level="summary", coefficient="kendall-b", method="both",
                         alternative=alternative, n_resamples=60, rng=5)
    for i, j in [(0, 1), (1, 0), (2, 3), (3, 0)]:
        single = bootstrap_test(scores[i], scores[j], z, level="summary", coefficient="kendall-b", method="both",
                                alternative=alternative, n_resamples=60, rng=5)
        assert out.pvalues[i, j] == pytest.approx(single.pvalue, abs=1e-12)


def test_two_sided_matrix_is_symmetric_and_one_sided_directions_complement():
    scores, z = metrics(2, ties=False)
    two = pairwise_tests(scores, z, level="summary", coefficient="kendall-b", alternative="two-sided",
                         n_resamples=100, rng=0)
    np.testing.assert_array_equal(two.pvalues, two.pvalues.T)
    np.testing.assert_allclose(two.deltas, -two.deltas.T)
    g = pairwise_tests(scores, z, level="summary", coefficient="kendall-b", alternative="greater",
                       n_resamples=100, rng=0)
    lo = pairwise_tests(scores, z, level="summary", coefficient="kendall-b", alternative="less",
                        n_resamples=100, rng=0)
    np.testing.assert_array_equal(g.pvalues, lo.pvalues.T)


def test_williams_matrix_and_correction():
    scores, z = metrics(3, ties=False)
    out = pairwise_tests(scores, z, test="williams", level="system", correction="holm")
    assert out.n_resamples is None and out.method is None
    assert out.adjusted_pvalues.shape == (4, 4)
    off = ~np.eye(4, dtype=bool)
    assert (out.adjusted_pvalues[off] >= out.pvalues[off] - 1e-15).all()
    with pytest.raises(ParameterError) as info:
        pairwise_tests(scores, z, test="williams", level="summary")
    assert str(info.value) == "`level` must be 'system', 'global' or 'partial' for Williams' test; got 'summary'."


def test_batch_invariance_and_no_mutation():
    scores, z = metrics(4)
    copy = scores.copy()
    a = pairwise_tests(scores, z, level="summary", coefficient="kendall-b", n_resamples=50, rng=1, batch=7)
    b = pairwise_tests(scores, z, level="summary", coefficient="kendall-b", n_resamples=50, rng=1)
    np.testing.assert_array_equal(a.pvalues, b.pvalues)
    assert np.array_equal(scores, copy)


def test_validation():
    scores, z = metrics(0)
    with pytest.raises(ParameterError) as info:
        pairwise_tests(scores[0], z)
    assert str(info.value) == "`scores` must be an array of shape (P >= 2, N, M); got shape (10, 8)."
    with pytest.raises(ParameterError) as info:
        pairwise_tests(scores, z, test="t-test")
    assert str(info.value) == "`test` must be one of 'permutation', 'bootstrap', 'williams'; got 't-test'."
