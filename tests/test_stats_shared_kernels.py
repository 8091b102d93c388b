"""Kernels shared by all metric pairs (stats/kernels/shared.py) == the reference path, for any batch."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.stats.levels import level_correlation
from metaeval.stats.pairs import _permutation_pairs
from metaeval.stats.permutation import standardize
from metaeval.stats.resampling import permutation_draws


def _data(seed, n=7, m=30, p=4):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    z = np.round(q * 2) / 2  # tie-heavy human
    z[:, 3] = 1.0  # an input the human cannot order
    xs = np.stack([standardize(q + rng.normal(scale=0.5 + 0.3 * i, size=(n, m))) for i in range(p)])
    return xs, z


def _reference(xs, z, draws, level, coefficient, undefined):
    mask = draws.mask()
    zb = np.broadcast_to(z, mask.shape)
    out = {}
    for i in range(xs.shape[0]):
        for j in range(i + 1, xs.shape[0]):
            kw = dict(level=level, coefficient=coefficient, undefined=undefined)
            out[i, j] = (level_correlation(np.where(mask, xs[j], xs[i]), zb, **kw).statistic
                         - level_correlation(np.where(mask, xs[i], xs[j]), zb, **kw).statistic)
    return out


CASES = [("global", "pearson"), ("summary", "pearson")] + [("summary", c) for c in
                                   ("kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq", "spearman")]


@pytest.mark.parametrize("level,coefficient", CASES)
@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_shared_kernels_equal_reference_and_ignore_batch(level, coefficient, undefined):
    xs, z = _data(len(coefficient))
    draws = permutation_draws(*z.shape, method="both", n_resamples=40, rng=1)
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=0.0)
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw)
    ref = _reference(xs, z, draws, level, coefficient, undefined)
    for pair, deltas in ref.items():
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)
    for batch in (1, 7):
        again = _permutation_pairs(xs, z, draws, batch, "auto", kw)
        for pair in fast:
            np.testing.assert_array_equal(again[pair], fast[pair])


def test_metric_ties_fall_back_to_the_pair_kernels():
    from metaeval.stats.kernels.shared import tie_free

    xs, z = _data(3)
    assert tie_free(xs)
    xs[1, 0, 5] = xs[0, 2, 5]  # two metrics tie within input 5
    assert not tie_free(xs)
    draws = permutation_draws(*z.shape, method="both", n_resamples=20, rng=1)
    kw = dict(level="summary", coefficient="acc-eq", undefined="skip", tie_threshold=0.0)
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw)
    ref = _reference(xs, z, draws, "summary", "acc-eq", "skip")
    for pair, deltas in ref.items():
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)


@pytest.mark.parametrize("coefficient", ["kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq"])
def test_compiled_global_bootstrap_equals_numpy_reference(coefficient):
    pytest.importorskip("numba")
    from metaeval.stats.bootstrap import bootstrap_samples
    from metaeval.stats.kernels.global_pairs import global_pairs_kernel
    from metaeval.stats.resampling import bootstrap_draws

    rng = np.random.default_rng(7)
    x = rng.integers(0, 6, size=(6, 9)).astype(float)  # tie-heavy metric and human
    z = rng.integers(0, 4, size=(6, 9)).astype(float) / 3.0
    draws = bootstrap_draws(6, 9, method="both", n_resamples=40, rng=1)
    assert global_pairs_kernel(x, z, coefficient, draws, 0.0) is not None
    fast = bootstrap_samples(x, z, level="global", coefficient=coefficient, draws=draws)
    ref = bootstrap_samples(x, z, level="global", coefficient=coefficient, draws=draws, engine="reference")
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref))
    again = bootstrap_samples(x, z, level="global", coefficient=coefficient, draws=draws, batch=3)
    np.testing.assert_array_equal(again, fast)


def test_import_does_not_load_numba():
    import subprocess
    import sys

    code = "import metaeval.stats.kernels.global_pairs, sys; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
