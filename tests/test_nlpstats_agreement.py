"""Agreement with nlpstats 0.0.1 where the definitions coincide, and the documented differences.

nlpstats draws its swap masks from numpy's global random state; we replay the same masks through our
permutation engine (:func:`metaeval.stats.significance.permutation.permutation_deltas`) and compare the null
distributions value by value. Definitions that coincide: standardization of X and Y, PERM-SYSTEMS,
PERM-INPUTS, the levels' formulas. Documented differences: nlpstats' "both" swaps whole rows then whole
columns (cell swapped iff row bit XOR column bit; ours swaps cells independently), and its p-value is
``count / k`` where ours is ``(1 + count) / (1 + k)``.
"""
from __future__ import annotations

import numpy as np
import pytest

nlpstats = pytest.importorskip("nlpstats.correlations.permutation", reason="nlpstats 0.0.1 not installed")

from metaeval.stats.significance.permutation import permutation_deltas, standardize  # noqa: E402
from metaeval.stats.resampling.draws import PermutationDraws  # noqa: E402

N, M, K = 7, 9, 60


def _data(seed, decimals=1):
    """One-decimal human scores: ties within inputs. Their system means are exact ties too when the
    sums agree mathematically; pass ``decimals=None`` for tie-free system means."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(N, M)) + rng.normal(size=(N, 1))
    if decimals is not None:
        z = np.round(z, decimals)
    x = z + rng.normal(size=(N, M))
    y = 3 * (z + rng.normal(scale=2, size=(N, M))) + 10
    return x, y, z


def _replayed_bits(method, seed):
    """The swap bits nlpstats draws after ``np.random.seed(seed)``, resample by resample."""
    state = np.random.RandomState(seed)
    bits = []
    for _ in range(K):
        if method == "systems":
            bits.append(state.rand(N, 1).reshape(N) > 0.5)
        elif method == "inputs":
            bits.append(state.rand(1, M).reshape(M) > 0.5)
        else:
            rows = state.rand(N, 1).reshape(N) > 0.5
            cols = state.rand(1, M).reshape(M) > 0.5
            bits.append(rows[:, None] ^ cols[None, :])
    return np.array(bits)


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
@pytest.mark.parametrize("level,nlp_level", [("system", "system"), ("summary", "input"), ("global", "global")])
@pytest.mark.parametrize("coefficient", ["pearson", "kendall-b"])
def test_same_masks_give_the_same_null_distribution(method, level, nlp_level, coefficient):
    x, y, z = _data(1, decimals=None if level == "system" else 1)
    np.random.seed(123)
    theirs = nlpstats.permutation_test(x, y, z, nlp_level, coefficient.split("-")[0], method,
                                       alternative="greater", n_resamples=K)
    bits = _replayed_bits(method, 123)
    draws = PermutationDraws(method, N, M, bits)
    ours = permutation_deltas(standardize(x), standardize(y), z, level=level, coefficient=coefficient,
                              draws=draws)
    np.testing.assert_allclose(ours, np.array(theirs.samples), atol=1e-12)


def test_pvalue_conventions_differ_only_by_the_plus_one():
    x, y, z = _data(2)
    np.random.seed(7)
    theirs = nlpstats.permutation_test(x, y, z, "system", "pearson", "systems", alternative="greater",
                                       n_resamples=K)
    bits = _replayed_bits("systems", 7)
    draws = PermutationDraws("systems", N, M, bits)
    xs, ys = standardize(x), standardize(y)
    null = permutation_deltas(xs, ys, z, level="system", coefficient="pearson", draws=draws)
    observed = np.corrcoef(xs.mean(1), z.mean(1))[0, 1] - np.corrcoef(ys.mean(1), z.mean(1))[0, 1]
    count = int(np.sum(null >= observed - 100 * np.finfo(float).eps * abs(observed)))
    assert theirs.pvalue == pytest.approx(count / K)
    assert (1 + count) / (1 + K) > theirs.pvalue or count == K


def test_cellwise_both_is_not_nlpstats_both():
    """Our PERM-BOTH masks have N*M free bits; nlpstats' have N + M - 1 (row XOR column)."""
    from metaeval.stats.resampling.draws import permutation_draws

    ours = permutation_draws(N, M, method="both", n_resamples=200, rng=0).mask()
    xor_patterns = _replayed_bits("both", 0)
    def is_xor(mask):
        # a row-XOR-column mask has every row equal to the first row or to its complement
        first = mask[0]
        return all(np.array_equal(r, first) or np.array_equal(r, ~first) for r in mask)

    assert all(is_xor(m) for m in xor_patterns)
    assert not any(is_xor(m) for m in ours)


def test_system_means_that_tie_in_exact_arithmetic_are_ties_for_us_not_for_scipy():
    """PITFALLS: averaged scores that are equal mathematically differ in the last bit depending on the
    summation order; scipy (hence nlpstats) then sees no tie, we do (relative tolerance 1e-9)."""
    from scipy import stats

    from metaeval.stats.correlations.coefficients import correlation

    z = np.array([[0.1, 0.2, 0.3], [0.2, 0.3, 0.1], [0.3, 0.3, 0.4], [0.9, 0.9, 0.9]])
    means = z.mean(axis=1)
    assert means[0] != means[1] and abs(means[0] - means[1]) < 1e-15  # same sum, different rounding
    x = np.array([1.0, 2.0, 3.0, 4.0])
    ours = float(correlation(x, means, "kendall-b"))
    exact = float(stats.kendalltau(x, np.array([1.0, 1.0, 2.0, 3.0]), variant="b")[0])
    assert ours == pytest.approx(exact)
    assert stats.kendalltau(x, means, variant="b")[0] != pytest.approx(exact)
