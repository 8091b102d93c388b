"""Item-grouped Kendall tau-b PERM-BOTH of pairs whose metrics tie (stats/kernels/kendall_blocks.py, block tables)
== the reference path (materialised X', Y' through level_correlation) for the same draws, for any batch."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.resampling.draws import permutation_draws
from metaeval.stats.significance.pair_permutations import permutation_pairs, shared_pair_kernel, tied_pair_kernel
from metaeval.stats.significance.permutation import standardize

pytest.importorskip("numba")

RULES = {"default tie rule": TIE_RTOL, "exact ties": 0.0}


def _tie_heavy(seed, n=7, m=30):
    """A continuous metric, one rounded to 0.5, a 0-100 judge in steps of 5, one with 40% zeros; an MQM-like
    human (mostly 0, -1, -5, ...), constant in input 0."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    z = -(rng.poisson(np.exp(-0.8 * q)) + 5.0 * rng.poisson(0.2 * np.exp(-0.8 * q)))
    z[:, 0] = -1.0
    noisy = [q + rng.normal(scale=1.0 + 0.3 * i, size=(n, m)) for i in range(4)]
    xs = [noisy[0], np.round(noisy[1] * 2) / 2, 5.0 * np.round(20.0 / (1.0 + np.exp(-noisy[2]))),
          np.where(noisy[3] < np.quantile(noisy[3], 0.4), 0.0, noisy[3])]
    return np.stack([standardize(x) for x in xs]), z.astype(float)


def _reference(xs, z, draws, undefined, rtol=TIE_RTOL):
    mask = draws.mask()
    zb = np.broadcast_to(z, mask.shape)
    kw = dict(level="summary", coefficient="kendall-b", undefined=undefined, rtol=rtol)
    return {(i, j): (level_correlation(np.where(mask, xs[j], xs[i]), zb, **kw).statistic
                     - level_correlation(np.where(mask, xs[i], xs[j]), zb, **kw).statistic)
            for i in range(xs.shape[0]) for j in range(i + 1, xs.shape[0])}


def _kernel(xs, z, undefined="skip", rtol=TIE_RTOL):
    """The kernel that computes the pairs the shared tie-free kernel leaves (the pairs with metric ties)."""
    kw = dict(level="summary", coefficient="kendall-b", undefined=undefined, tie_threshold=0.0)
    pairs = [(i, j) for i in range(xs.shape[0]) for j in range(i + 1, xs.shape[0])]
    shared = shared_pair_kernel(xs, z, pairs, kw, rtol=rtol)
    left = [pair for pair in pairs if shared is None or not shared.covers(*pair)]
    return left, tied_pair_kernel(xs, z, left, kw, rtol=rtol)


def _check(xs, z, undefined, n_resamples=30, batches=(7,), rtol=TIE_RTOL):
    """The fast pairs equal the reference (1e-12, NaN where it is NaN) and do not depend on the batch."""
    draws = permutation_draws(*z.shape, method="both", n_resamples=n_resamples, rng=3)
    kw = dict(level="summary", coefficient="kendall-b", undefined=undefined, tie_threshold=0.0)
    fast = permutation_pairs(xs, z, draws, None, "auto", kw, rtol=rtol)
    ref = _reference(xs, z, draws, undefined, rtol)
    for pair, deltas in ref.items():
        np.testing.assert_array_equal(np.isnan(fast[pair]), np.isnan(deltas))
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)
    for batch in batches:
        again = permutation_pairs(xs, z, draws, batch, "auto", kw, rtol=rtol)
        for pair in fast:
            np.testing.assert_array_equal(again[pair], fast[pair])
    return fast, ref


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_tied_pairs_equal_the_reference_for_the_same_draws(undefined, rule):
    from metaeval.stats.kernels.kendall.blocks import KendallBlockPairs

    xs, z = _tie_heavy(1)
    left, kernel = _kernel(xs, z, undefined, RULES[rule])
    assert isinstance(kernel, KendallBlockPairs) and len(left) == 6  # every pair holds a metric tie
    assert all(kernel.covers(*pair) for pair in left)
    _check(xs, z, undefined, rtol=RULES[rule])


@pytest.mark.parametrize("n", [3, 5, 12, 17, 21])
def test_any_number_of_systems_and_block_plan(n):
    """Tables of one, three or six block pairs, one or two bytes per packed count (more than 16 systems)."""
    from metaeval.stats.kernels.kendall.blocks import block_plan

    xs, z = _tie_heavy(n, n=n, m=12)
    for k in (8, 1000):
        sizes, tables = block_plan(n, k)
        assert sum(sizes) == n and max(sizes) <= 8
        assert tables == [(g, h) for g in range(len(sizes)) for h in range(g + 1, len(sizes))]
    _check(xs, z, "skip", n_resamples=20, batches=(3,))


@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_inputs_a_swap_makes_constant_and_constant_humans(undefined):
    """Input 3: both zero-inflated metrics are 0 in every system (X' and Y' constant under every mask, always
    undefined); input 4: metric 2 is 0 where metric 3 is 1 and 1 where it is 0 (constant under some masks);
    input 0: the human is constant. Resamples with an undefined permuted input leave the mean (skip) or count 0."""
    xs, z = _tie_heavy(2, n=5, m=16)
    xs[2, :, 3] = xs[3, :, 3] = 0.0
    xs[2, :, 4] = [0.0, 1.0, 0.0, 1.0, 1.0]
    xs[3, :, 4] = 1.0 - xs[2, :, 4]
    fast, ref = _check(xs, z, undefined, n_resamples=40)
    mask = permutation_draws(*z.shape, method="both", n_resamples=40, rng=3).mask()
    xp = np.where(mask, xs[3], xs[2])[:, :, 4]
    assert ((xp == xp[:, :1]).all(axis=1)).any()  # some mask makes input 4 of X' constant


def test_near_ties_are_decided_per_resample():
    """Values closer than the tie tolerance of the pair's pooled values, but not equal: whether they tie depends
    on the spread of each X' (the generic rule), so those inputs are counted per resample by the sweep."""
    from metaeval.stats.kernels.kendall.blocks import KendallBlockPairs

    rng = np.random.default_rng(5)
    n, m = 6, 24
    z = rng.integers(0, 4, size=(n, m)).astype(float)
    base = np.round(rng.normal(size=(3, n, m)) * 2) / 2
    shift = rng.choice([0.0, 0.0, 0.0, 1e-9, 3e-9, 1e-8], size=base.shape) * rng.choice([-1, 1], size=base.shape)
    xs = np.stack([standardize(x) for x in base + shift])
    draws = permutation_draws(n, m, method="both", n_resamples=30, rng=1)
    kw = dict(level="summary", coefficient="kendall-b", undefined="skip", tie_threshold=0.0)
    for rtol in (1e-9, 1e-8):
        _, kernel = _kernel(xs, z, rtol=rtol)
        assert isinstance(kernel, KendallBlockPairs)
        kernel.deltas(BatchCache(draws, slice(0, 30)), 0, 1)  # counts every pair: the near ties are known
        fast = permutation_pairs(xs, z, draws, None, "auto", kw, rtol=rtol)
        ref = _reference(xs, z, draws, "skip", rtol)
        assert any(kernel.near.values())  # some inputs hold a near tie and take the sweep
        for pair, deltas in ref.items():
            np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)


def test_pairs_with_a_few_tied_inputs_keep_the_products_for_the_others():
    """Continuous metrics with one exact tie: the pair's other inputs come from the shared integer products,
    the tied input from the tables; a pair tied in most inputs counts every input with the tables."""
    rng = np.random.default_rng(8)
    n, m = 8, 30
    q = rng.normal(size=(n, m))
    z = np.round(q * 2) / 2
    xs = np.stack([standardize(q + rng.normal(scale=0.7 + 0.3 * i, size=(n, m))) for i in range(3)])
    xs[1, 0, 5] = xs[0, 2, 5]  # metrics 0 and 1 tie within input 5
    xs[2] = np.round(xs[2] * 2) / 2  # metric 2 ties with itself almost everywhere
    _, kernel = _kernel(xs, z)
    assert kernel.tied[0, 1] == [5] and kernel.lists[kernel.index[0, 1]].tolist() == [5]
    assert kernel.linear is not None and kernel.linear.covers(0, 1) and not kernel.linear.covers(0, 2)
    assert len(kernel.lists[kernel.index[0, 2]]) == m  # every input with a defined human
    _check(xs, z, "skip", n_resamples=25)


def test_three_blocks_of_five_at_many_resamples():
    """15 systems and 600 resamples: three blocks of five for the pairs counted one at a time, five blocks of three
    for the lanes (the benchmark's workload)."""
    from metaeval.stats.kernels.kendall.blocks import block_plan

    assert block_plan(15, 600) == ([5, 5, 5], [(0, 1), (0, 2), (1, 2)])
    assert block_plan(15, 600, 9.0)[0] == [3, 3, 3, 3, 3]
    xs, z = _tie_heavy(6, n=15, m=6)
    _check(xs, z, "skip", n_resamples=600, batches=(250,))


def _sometimes_constant(n, m, seed):
    """Metrics 2 and 3 hold 0 in most systems and {0, 1} in two (input 0: every system 0 in both, X' and Y'
    constant under every mask; elsewhere constant when the two systems take 0 (or 1), a quarter of the masks);
    metrics 0 and 1 continuous and rounded. The human varies within every input."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, m))
    z = np.round(q * 2) / 2
    z[0] = z.max(axis=0) + 1.0  # never constant
    x2 = np.zeros((n, m))
    x3 = np.zeros((n, m))
    x2[1], x3[1] = 1.0, 0.0
    x2[2], x3[2] = 0.0, 1.0
    x2[:, 0] = x3[:, 0] = 0.0
    return np.stack([q + rng.normal(size=(n, m)), np.round(q + rng.normal(size=(n, m))), x2, x3]), z


@pytest.mark.parametrize("n", [4, 9, 17])
def test_constant_permuted_inputs_are_counted_in_the_kernel(n, monkeypatch):
    """Under skip an input where X' (or Y') is constant leaves that mean, so the divisor changes per resample:
    counted in the kernel (the sums and the number of constant inputs of each side), never recomputed by the
    generic path; equal to the reference to 1e-12 with NaN in the same places, for any batch (8-bit and 16-bit
    packed counts)."""
    from metaeval.stats.kernels.kendall.blocks import KendallBlockPairs

    def no_generic(self, cache, i, j, rows):
        raise AssertionError(f"pair {(i, j)} took the generic path for {rows.size} resamples")

    xs, z = _sometimes_constant(n, 6, n)
    left, kernel = _kernel(xs, z, "skip", rtol=0.0)
    kernel.deltas(BatchCache(permutation_draws(*z.shape, method="both", n_resamples=5, rng=3), slice(0, 5)), 2, 3)
    assert kernel.tracked[kernel.index[2, 3]]
    monkeypatch.setattr(KendallBlockPairs, "_generic", no_generic)
    fast, ref = _check(xs, z, "skip", n_resamples=80, batches=(9,), rtol=0.0)
    deltas = ref[2, 3]
    assert np.isfinite(deltas).any()  # some resamples keep inputs of both sides ...
    mask = permutation_draws(*z.shape, method="both", n_resamples=80, rng=3).mask()
    xp = np.where(mask, xs[3], xs[2])
    gone = (xp == xp[:, :1]).all(axis=1).sum(axis=1)  # constant inputs of X' per resample
    assert (gone > 1).any() and (gone < 6).any() and len(set(gone.tolist())) > 2  # ... the divisor varies


def test_every_input_constant_gives_nan_as_the_reference():
    """Three systems, two inputs, metrics {0, 1} in every system: X' is constant in both inputs under a quarter of
    the masks at each input; where every input of X' or Y' is constant the statistic is undefined (NaN)."""
    z = np.array([[0.0, 2.0], [1.0, 0.0], [2.0, 1.0]])
    xs = np.stack([standardize(x) for x in (np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]),
                                            np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]))])
    fast, ref = _check(xs, z, "skip", n_resamples=200, batches=(7,), rtol=0.0)
    assert np.isnan(ref[0, 1]).any() and np.isfinite(ref[0, 1]).any()
    fast_zero, _ = _check(xs, z, "zero", n_resamples=200, batches=(7,), rtol=0.0)
    assert np.isfinite(fast_zero[0, 1]).all()
