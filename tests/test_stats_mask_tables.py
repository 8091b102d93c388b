"""Mask tables of small tied groups and constant permuted groups counted in the kernel
(stats/kernels/mask_tables.py, dominance.py) == the per-resample loop and the reference path."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.correlations.ties import TIE_RTOL
from metaeval.stats.kernels.batch import BatchCache
from metaeval.stats.resampling.draws import permutation_draws
from metaeval.stats.significance.pair_permutations import permutation_pairs, tied_pair_kernel
from metaeval.stats.significance.permutation import standardize

pytest.importorskip("numba")

COUNTED = ("kendall-a", "kendall-c", "accuracy", "acc-eq", "tau-eq")
RULES = {"default tie rule": TIE_RTOL, "exact ties": 0.0}


def _graded(seed, n=6, m=40, levels=3):
    """A continuous metric, one rounded to ``levels`` values (inputs where it is constant: a mask taking all
    its values makes the permuted input constant), a copy rounded to 0.5, and a tie-heavy human."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    z = np.round(q * 2) / 2
    z[:, 3] = 1.0  # an input the human cannot order
    base = q + rng.normal(scale=0.7, size=(n, m))
    rounded = np.round((base - base.min()) / np.ptp(base) * (levels - 1))
    rounded[:, :8] = 1.0  # always constant within these inputs
    xs = [q + rng.normal(size=(n, m)), rounded, np.round(base * 2) / 2]
    return np.stack([standardize(x) for x in xs]), z


def _reference(xs, z, draws, coefficient, undefined, rtol):
    mask = draws.mask()
    zb = np.broadcast_to(z, mask.shape)
    kw = dict(level="summary", coefficient=coefficient, undefined=undefined, rtol=rtol)
    return {(i, j): (level_correlation(np.where(mask, xs[j], xs[i]), zb, **kw).statistic
                     - level_correlation(np.where(mask, xs[i], xs[j]), zb, **kw).statistic)
            for i in range(xs.shape[0]) for j in range(i + 1, xs.shape[0])}


def _kernel(xs, z, coefficient, undefined, rtol, pairs):
    kw = dict(level="summary", coefficient=coefficient, undefined=undefined, tie_threshold=0.0)
    kernel = tied_pair_kernel(xs, z, pairs, kw, rtol)
    return kernel.correction if hasattr(kernel, "correction") else kernel


@pytest.mark.parametrize("coefficient", COUNTED)
@pytest.mark.parametrize("undefined", ["skip", "zero"])
@pytest.mark.parametrize("rule", list(RULES))
def test_tie_heavy_inputs_with_constant_masks_equal_the_reference_for_any_batch(coefficient, undefined, rule,
                                                                               monkeypatch):
    """Every pair of a continuous, a 3-level and a 0.5-step metric: the tied inputs from the mask tables, the
    resamples where a permuted input is constant (the mask takes the 3-level metric's values where they tie,
    or all of an input where it is constant) counted in the kernel; equal to the generic path to 1e-12, NaN
    where it is NaN. The 3-level metric ties within every input: its pairs never take the generic path."""
    from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled

    generic = []
    real = GroupPairsCompiled._generic
    monkeypatch.setattr(GroupPairsCompiled, "_generic",
                        lambda self, cache, i, j, rows: (generic.append((i, j)), real(self, cache, i, j, rows))[1])
    rtol = RULES[rule]
    xs, z = _graded(len(coefficient) + len(undefined))
    draws = permutation_draws(*z.shape, method="both", n_resamples=60, rng=5)
    kw = dict(level="summary", coefficient=coefficient, undefined=undefined, tie_threshold=0.0)
    fast = permutation_pairs(xs, z, draws, None, "auto", kw, rtol=rtol)
    ref = _reference(xs, z, draws, coefficient, undefined, rtol)
    mask = draws.mask()
    hybrid = np.where(mask, xs[2], xs[1])
    assert ((hybrid == hybrid[:, :1]).all(axis=1)[:, 8:]).any()  # some masks make an input constant
    for pair, deltas in ref.items():
        np.testing.assert_array_equal(np.isnan(fast[pair]), np.isnan(deltas))
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)
    for batch in (7, 25):
        again = permutation_pairs(xs, z, draws, batch, "auto", kw, rtol=rtol)
        for pair in fast:
            np.testing.assert_array_equal(again[pair], fast[pair])
    assert not {(0, 1), (1, 2)} & set(generic)


@pytest.mark.parametrize("coefficient", COUNTED)
@pytest.mark.parametrize("rule", list(RULES))
def test_table_entries_equal_the_per_resample_loop_bit_for_bit(coefficient, rule):
    """The coefficients read from the tables are the loop's own (same integer counts, same formula)."""
    rtol = RULES[rule]
    xs, z = _graded(3)
    kernel = _kernel(xs, z, coefficient, "skip", rtol, [(1, 2)])
    draws = permutation_draws(*z.shape, method="both", n_resamples=80, rng=2)
    cache = BatchCache(draws, slice(0, 80))
    groups = np.array(kernel.tied[1, 2])
    assert groups.size >= 39  # every input (but the one the human cannot order, where it is undefined)
    tabled = kernel._counted(cache, 1, 2, groups)
    assert kernel._tables is not None and kernel._tables.kept[1, 2][0].all()  # every tied input from a table
    np.testing.assert_array_equal(tabled, kernel._loop(cache, 1, 2, groups))


def test_a_near_tie_keeps_its_input_in_the_loop():
    """An input of many tie classes (no contingency tables) whose pooled values hold a gap within the loop's
    tie rule is counted per resample; the others come from the tables."""
    xs, z = _graded(4)
    z[:, 20] = np.arange(6.0)
    xs[1, :, 20] = 1000.0 + 0.1 * np.arange(6)
    xs[2, :, 20] = 1000.05 + 0.1 * np.arange(6)
    xs[2, 0, 20] = xs[1, 0, 20]  # a tie of the two metrics
    xs[2, 1, 20] = xs[1, 1, 20] + 9e-7  # within 1e-9 of their magnitude, not of the input's spread
    kernel = _kernel(xs, z, "kendall-c", "skip", TIE_RTOL, [(1, 2)])
    draws = permutation_draws(*z.shape, method="both", n_resamples=80, rng=2)
    cache = BatchCache(draws, slice(0, 80))
    groups = np.array(kernel.tied[1, 2])
    r = kernel._counted(cache, 1, 2, groups)
    tabulated = kernel._tables.kept[1, 2][0]
    assert not tabulated[list(groups).index(20)] and tabulated.sum() == groups.size - 1
    np.testing.assert_array_equal(r, kernel._loop(cache, 1, 2, groups))


@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_a_pair_with_untied_inputs_and_constant_masks_equals_the_reference(undefined):
    """A pair tied within some inputs only: a resample with a constant permuted input takes the generic path
    under skip (the untied inputs' coefficients are not counted per resample), 0 under zero."""
    rng = np.random.default_rng(9)
    n, m = 5, 30
    q = rng.normal(size=(n, m))
    z = np.round(q * 2) / 2
    xs = np.stack([q + rng.normal(size=(n, m)), q + rng.normal(size=(n, m))])
    xs[:, :, :6] = np.round(xs[:, :, :6]).clip(0, 1)  # binary within the first inputs: constant masks
    draws = permutation_draws(n, m, method="both", n_resamples=60, rng=1)
    kernel = _kernel(xs, z, "kendall-c", undefined, TIE_RTOL, [(0, 1)])
    assert 0 < len(kernel.tied[0, 1]) < m
    kw = dict(level="summary", coefficient="kendall-c", undefined=undefined, tie_threshold=0.0)
    fast = permutation_pairs(xs, z, draws, None, "auto", kw)
    ref = _reference(xs, z, draws, "kendall-c", undefined, TIE_RTOL)
    np.testing.assert_array_equal(np.isnan(fast[0, 1]), np.isnan(ref[0, 1]))
    np.testing.assert_allclose(fast[0, 1], ref[0, 1], rtol=0, atol=1e-12)


def test_both_metrics_constant_in_every_input_is_nan_under_skip_and_zero_under_zero():
    """Two metrics constant within every input: every permuted input is constant."""
    rng = np.random.default_rng(3)
    n, m = 4, 12
    z = rng.normal(size=(n, m)).round(1)
    xs = np.stack([np.broadcast_to(rng.integers(0, 2, size=m), (n, m)).astype(float) for _ in range(2)])
    draws = permutation_draws(n, m, method="both", n_resamples=40, rng=0)
    for undefined in ("skip", "zero"):
        kw = dict(level="summary", coefficient="kendall-c", undefined=undefined, tie_threshold=0.0)
        fast = permutation_pairs(xs, z, draws, None, "auto", kw)[0, 1]
        ref = _reference(xs, z, draws, "kendall-c", undefined, TIE_RTOL)[0, 1]
        np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref))
        np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
