"""Soft pairwise accuracy (stats/mt/spa.py): exact ties of the permutation null on grid-valued scores, and the
null between metrics (linear in the metrics) against the hybrids built and scored one by one."""
import itertools

import numpy as np
import pytest

from metaeval.stats.mt.spa import spa_null, system_pvalues
from metaeval.stats.mt.wmt import soft_pairwise_accuracy
from metaeval.stats.mt.wmt_permutation import hybrid_null, random_bits


def _judge_pair(seed=0, m=515):
    """Two systems judged in steps of 5 on 515 segments, most segments judged alike: many sign flips leave the
    sum of differences unchanged, so a large share of the draws equal delta exactly."""
    rng = np.random.default_rng(seed)
    a = 5.0 * rng.integers(1, 20, size=m)
    diff = np.zeros(m)
    diff[rng.choice(m, 3, replace=False)] = (5.0, 5.0, -5.0)  # delta = 5; the null is 5 in half the draws
    return np.stack([a + diff, a])


def _exact_pvalue(s, signs, i, j):
    """c / R with integer arithmetic (scores in steps of 5 are integers): no rounding at all."""
    d = (s[i] - s[j]).astype(np.int64)
    sg = signs.astype(np.int64)
    return int(((sg @ d) >= d.sum()).sum()) / signs.shape[0]


def test_grid_scores_count_the_exact_ties_of_the_null():
    s = _judge_pair()
    rng = np.random.default_rng(1)
    signs = np.where(rng.random((1000, s.shape[1])) < 0.5, -1.0, 1.0)
    expected = _exact_pvalue(s, signs, 0, 1)
    ties = int(((signs.astype(np.int64) @ (s[0] - s[1]).astype(np.int64)) == (s[0] - s[1]).sum()).sum())
    assert ties > 300  # the case of the defect: a large share of the draws equal delta
    assert system_pvalues(s, signs, "fraction")[0, 1] == expected
    assert system_pvalues(s, signs, "fraction")[1, 0] == _exact_pvalue(s, signs, 1, 0)
    # a shift or a scale of the grid changes no count (mean-based comparisons with 100 eps |delta| missed them)
    for t in (s + 0.1, s * 0.01 + 1e3, s / 3.0):
        assert system_pvalues(t, signs, "fraction")[0, 1] == expected


def test_system_pvalues_equal_a_loop_over_draws():
    rng = np.random.default_rng(2)
    s = rng.normal(size=(4, 30))
    signs = np.where(rng.random((50, 30)) < 0.5, -1.0, 1.0)
    p = system_pvalues(s, signs)
    for i, j in itertools.permutations(range(4), 2):
        d = s[i] - s[j]
        null = [(sg * d).sum() for sg in signs]
        assert p[i, j] == (1 + sum(v >= d.sum() for v in null)) / 51


def _metrics(seed, p=4, n=6, m=50):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, m))
    z = np.round(q * 4) / 4
    kinds = [lambda v: 5 * np.round(v * 2), lambda v: np.round(v * 2) / 2, lambda v: v,
             lambda v: np.where(v < 0, 0.0, v)]
    xs = np.stack([kinds[i % 4](q + rng.normal(scale=0.5 + i / 2, size=(n, m))) for i in range(p)])
    return xs, z, np.where(rng.random((200, m)) < 0.5, -1.0, 1.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_spa_null_equals_hybrids_scored_one_by_one(seed):
    xs, z, signs = _metrics(seed)
    n, m = z.shape
    ia, ib = np.triu_indices(n, 1)
    pz = system_pvalues(z, signs, "fraction")

    def spa(h, _z):
        return 1.0 - np.abs(system_pvalues(h, signs, "fraction")[:, ia, ib] - pz[None, ia, ib]).mean(-1)

    def masks(seed):
        g = np.random.default_rng(seed)
        return lambda b: random_bits(g, b, n * m)

    brute = hybrid_null(xs, z, masks(5), 40, spa, batch=16)
    fast = spa_null(xs, z, signs, masks(5), 40, "fraction", batch=16, engine="numpy")
    # pairs of grid metrics (0, 1: steps of 5 and 0.5) have exact float32 sums: equal to the float64 hybrids;
    # with a continuous metric a permuted sum within 2^-26 of delta's operands can count (one count, 1 / (R C(N, 2)))
    np.testing.assert_allclose(fast[0], brute[0], rtol=0, atol=1e-12)
    one_count = 1 / (signs.shape[0] * ia.size)
    assert np.abs(fast - brute).max() <= one_count + 1e-12
    assert (np.abs(fast - brute) > 1e-12).mean() < 0.01
    compiled = spa_null(xs, z, signs, masks(5), 40, "fraction", batch=16, engine="numba")
    np.testing.assert_array_equal(compiled, fast)
    # a mask of ones is the observed statistics: SPA_i - SPA_j
    obs = soft_pairwise_accuracy(xs, z, signs, pvalue="fraction")
    ones = spa_null(xs, z, signs, lambda b: np.ones((b, n * m), dtype=bool), 1, "fraction", engine="numpy")
    qa, qb = np.triu_indices(xs.shape[0], 1)
    np.testing.assert_allclose(ones[0, 0], obs[0] - obs[1], rtol=0, atol=1e-12)  # two grid metrics: exact
    assert np.abs(ones[:, 0] - (obs[qa] - obs[qb])).max() <= one_count + 1e-12


def test_spa_null_does_not_depend_on_the_workers_or_the_engine():
    """The batches run in threads, one BLAS thread each: the draws are the same whatever the thread count
    (the masks are drawn in order, each draw's float32 sums do not depend on the rows of its product)."""
    pytest.importorskip("numba")
    xs, z, signs = _metrics(3, p=5, n=7, m=60)
    n, m = z.shape

    def masks():
        g = np.random.default_rng(11)
        return lambda b: random_bits(g, b, n * m)

    one = spa_null(xs, z, signs, masks(), 37, "randomized", batch=8, engine="numba", workers=1)
    for workers in (2, 3):
        np.testing.assert_array_equal(spa_null(xs, z, signs, masks(), 37, "randomized", batch=8, engine="numba",
                                               workers=workers), one)
    np.testing.assert_array_equal(spa_null(xs, z, signs, masks(), 37, "randomized", batch=8, engine="numpy"), one)
    strided = np.asfortranarray(xs)  # score matrices as the command's selection of segments leaves them
    np.testing.assert_array_equal(spa_null(strided, z, signs, masks(), 37, "randomized", batch=8, engine="numba"), one)


def test_compiled_pair_counts_equal_numpy_counts_with_ties():
    pytest.importorskip("numba")
    from metaeval.stats.mt._compiled import pair_counts

    rng = np.random.default_rng(4)
    for n, r in ((2, 1), (5, 13), (6, 64), (7, 101)):
        h = np.round(rng.normal(size=(n, r)) * 2) / 2  # many differences equal d exactly
        ia, ib = np.triu_indices(n, 1)
        d = np.round(rng.normal(size=ia.size)) / 2
        out = np.full(ia.size, -1.0)
        pair_counts(h, d, out)
        np.testing.assert_array_equal(out, ((h[ia] - h[ib]) >= d[:, None]).sum(axis=1))


def test_compiled_hybrid_sums_round_the_standardized_sums_once():
    """``Q_p = scale_p q_p - shift_p o`` with one rounding after the product ``shift_p o`` (an fma), checked
    against exact rational arithmetic; the hybrids add and subtract their difference as written."""
    pytest.importorskip("numba")
    from fractions import Fraction

    from metaeval.stats.mt._compiled import fma, hybrid_sums

    rng = np.random.default_rng(5)
    for a, b, c in rng.normal(size=(200, 3)) * [1, 1e3, 1e-3]:
        assert fma(a, b, c) == float(Fraction(a) * Fraction(b) + Fraction(c))
    p, n, r = 3, 4, 9
    q = rng.normal(size=(2, p + 1, n, r)).astype(np.float32)
    q[:, p] = rng.integers(-5, 6, size=(2, n, r))
    s = rng.normal(size=(p, n, r))
    scale, shift = rng.uniform(0.3, 3, size=p), rng.normal(size=p)
    hi, hj = np.empty((n, r)), np.empty((n, r))
    hybrid_sums(s, q, scale, shift, 0, 2, 1, hi, hj)

    def standardized(k, a, x):
        o = float(q[1, p, a, x])
        return float(Fraction(scale[k]) * Fraction(float(q[1, k, a, x])) - Fraction(shift[k] * o))

    for a in range(n):
        for x in range(r):
            dq = standardized(0, a, x) - standardized(2, a, x)
            assert hi[a, x] == s[2, a, x] + dq and hj[a, x] == s[0, a, x] - dq
