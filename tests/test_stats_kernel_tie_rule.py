"""The kernels follow the one tie rule of stats.correlations.ties and are safe at extreme magnitudes (issue 22 item 2, follow-up).

Each test failed before its fix: row_ranks missed near-ties in rows holding both signs and under a tie
tolerance below 2^-46; the kernels' Pearson constancy compared values exactly under ``tie_tolerance=0``
(stats.correlations.ties.is_constant is independent of the tolerance); standardize and the array entry points of the
bootstrap and the permutation tests overflowed above about 1e154.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.stats.correlations import ties
from metaeval.stats.resampling.bootstrap import bootstrap_samples
from metaeval.stats.kernels.permutation import PermSummaryPearson
from metaeval.stats.kernels.ranks import is_constant_along as _is_constant, row_ranks, tie_ranks
from metaeval.stats.significance.permutation import permutation_deltas, standardize
from metaeval.stats.resampling.draws import bootstrap_draws, permutation_draws

ULP2 = np.nextafter(2.0, 0.0)  # 1.9999999999999998: 2.0 summed in another order


def _same_ranks(v, rtol=ties.TIE_RTOL):
    fast, near, tied = row_ranks(v, rtol=rtol)
    full, full_tied = tie_ranks(v, rtol=rtol)
    np.testing.assert_array_equal(fast, full)
    np.testing.assert_array_equal(np.isin(np.arange(v.shape[0]), near) | (full_tied == 0), True)
    np.testing.assert_array_equal(full_tied[near], tied)


def test_row_ranks_finds_near_ties_in_rows_of_both_signs():
    # spread 2, so tol = 2e-9; the gap 1.5e-9 is a tie, but above 1e-9 * max|v| (the old bound)
    v = np.array([[-1.0, 1.0 - 1.5e-9, 1.0, 0.3], [0.1, 0.2, 0.3, 0.4]])
    _same_ranks(v)
    assert tie_ranks(v)[1][0] == 1


def test_row_ranks_finds_rounding_ties_under_a_tolerance_below_the_floor():
    # a gap of 16 ulps of 1.0 (3.6e-15) is under the floor 2^-46 max|v| (1.4e-14), above 1e-15 * max|v|
    v = np.array([[0.0, 1.0, 1.0 + 16 * 2.0 ** -52, 0.5]])
    _same_ranks(v, rtol=1e-15)
    assert tie_ranks(v, rtol=1e-15)[1][0] == 1


def test_kernel_pearson_constancy_is_the_rule_of_is_constant():
    v = np.array([[2.0, ULP2, 2.0], [1.0, 2.0, 3.0]])
    np.testing.assert_array_equal(_is_constant(v, axis=1), [True, False])  # whatever the tie tolerance
    np.testing.assert_array_equal(_is_constant(v.T, axis=0), [True, False])
    np.testing.assert_array_equal(_is_constant(v, axis=1), ties.is_constant(v, axis=1))


def test_risky_columns_include_rounding_constants_under_exact_ties():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    x[:, 1] = [2.0, ULP2, 2.0, ULP2]  # the mask "keep X" makes input 1 constant for Pearson
    risky = PermSummaryPearson._risky_columns(x, y, rtol=0.0)
    assert risky[1] and not risky[0] and not risky[2]


def test_permutation_summary_pearson_kernel_equals_reference_under_exact_ties():
    rng = np.random.default_rng(1)
    n, m = 3, 12
    z = rng.normal(size=(n, m))
    x, y = rng.normal(size=(n, m)), rng.normal(size=(n, m))
    x[:, :4] = np.where(rng.random((n, 4)) < 0.5, 2.0, ULP2) * 10.0
    y[:, :4] = rng.normal(size=(n, 4))
    draws = permutation_draws(n, m, method="both", n_resamples=64, rng=3)
    kw = dict(level="summary", coefficient="pearson", draws=draws, undefined="skip", rtol=0.0)
    fast = permutation_deltas(x, y, z, engine="auto", **kw)
    ref = permutation_deltas(x, y, z, engine="reference", **kw)
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("scale", [1e200, 1e-200])
def test_standardize_at_extreme_magnitudes(scale):
    x = np.random.default_rng(2).normal(size=(5, 7))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = standardize(x * scale)
    np.testing.assert_allclose(got, standardize(x), rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def summeval():
    ds = me.load_dataset("summeval")
    return ds.matrix("rouge-2.f1"), ds.matrix("s3.resp"), ds.matrix("expert.relevance")


@pytest.mark.parametrize("level", ["system", "summary", "global", "by-system"])
@pytest.mark.parametrize("coefficient", ["pearson", "kendall-b"])
@pytest.mark.parametrize("scale", [1e160, 1e-160])
def test_bootstrap_samples_at_extreme_magnitudes(summeval, level, coefficient, scale):
    x, _, z = summeval
    draws = bootstrap_draws(*x.shape, method="both", n_resamples=20, rng=5)
    kw = dict(level=level, coefficient=coefficient, draws=draws)
    base = bootstrap_samples(x, z, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = bootstrap_samples(x * scale, z * scale, **kw)
    np.testing.assert_allclose(got, base, rtol=0, atol=1e-12)


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("coefficient", ["pearson", "kendall-b"])
@pytest.mark.parametrize("scale", [1e160, 1e-160])
def test_permutation_deltas_at_extreme_magnitudes(summeval, level, coefficient, scale):
    x, y, z = summeval
    xs, ys = standardize(x), standardize(y)
    draws = permutation_draws(*x.shape, method="both", n_resamples=20, rng=6)
    kw = dict(level=level, coefficient=coefficient, draws=draws)
    base = permutation_deltas(xs, ys, z, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = permutation_deltas(xs * scale, ys * scale, z * scale, **kw)
    np.testing.assert_allclose(got, base, rtol=0, atol=1e-12)


def test_rescaling_moves_the_tie_threshold_with_the_metric(summeval):
    x, _, z = summeval
    draws = bootstrap_draws(*x.shape, method="both", n_resamples=10, rng=7)
    kw = dict(level="summary", coefficient="accuracy", draws=draws)
    base = bootstrap_samples(x, z, tie_threshold=0.01, **kw)
    got = bootstrap_samples(x * 1e160, z, tie_threshold=0.01 * 1e160, **kw)
    np.testing.assert_allclose(got, base, rtol=0, atol=1e-12)


@pytest.mark.parametrize("rtol", [1e-9, 0.0])
@pytest.mark.parametrize("method", ["systems", "both"])
def test_bootstrap_summary_pearson_constancy_is_the_rule_of_is_constant(rtol, method):
    # input 0: 0 and 1e-10 tie under the default rule, but are not constant for Pearson;
    # input 1: 2.0 and its neighbour below are constant for Pearson, but not exactly tied
    rng = np.random.default_rng(0)
    n, m = 3, 6
    x, z = rng.normal(size=(n, m)), rng.normal(size=(n, m))
    x[:, 0] = [0.0, 1e-10, 1.0]
    x[:, 1] = [2.0, ULP2, 3.0]
    z[:, 2] = [-1.0, -1.0 + 1e-10, 5.0]
    draws = bootstrap_draws(n, m, method=method, n_resamples=200, rng=1)
    kw = dict(level="summary", coefficient="pearson", draws=draws, rtol=rtol)
    fast = bootstrap_samples(x, z, engine="auto", **kw)
    ref = bootstrap_samples(x, z, engine="reference", **kw)
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("level", ["system", "summary"])
def test_fused_power_kernels_use_the_constancy_rule_of_is_constant(level):
    # inputs 0-1 vary by 1e-9 relative (not constant: the old (1e-7 max|v|)^2 rule made them undefined);
    # input 2 holds near-copies of 2.0 (constant), input 3 a Likert-like human with ties
    from metaeval.analyses.power import _swap_bits
    from metaeval.stats.kernels.pearson.power import boot_pearson, perm_pearson
    from metaeval.stats.significance.permutation import reference_deltas as _reference_batch
    from metaeval.stats.resampling.draws import PermutationDraws

    rng = np.random.default_rng(8)
    n, m = 4, 6
    z = rng.normal(size=(n, m))
    x, y = rng.normal(size=(n, m)), rng.normal(size=(n, m))
    x[:, :2] = 1.0 + 1e-9 * rng.normal(size=(n, 2))
    y[:, :2] = 1.0 + 1e-9 * rng.normal(size=(n, 2))
    x[:, 2] = [2.0, ULP2, 2.0, ULP2]
    z[:, 3] = [1.0, 1.0, 2.0, 1.0]
    atol = 1e-9
    if level == "system":  # system means 1e-8 relative apart (below the old rule's 1e-7)
        x = 5.0 + 5e-8 * rng.normal(size=(n, 1)) + 1e-9 * rng.normal(size=(n, m))
        y = 5.0 + 5e-8 * rng.normal(size=(n, 1)) + 1e-9 * rng.normal(size=(n, m))
        atol = 1e-6  # the fused means are summed in another order: rounding of 5.0 / spread 1e-8
    xs, ys = x, y  # standardized scale does not matter to the comparison with the reference path
    bits = _swap_bits(n, m, 300, np.random.default_rng(0))
    draws = PermutationDraws("both", n, m, bits.astype(bool).transpose(1, 2, 0))
    px, py = perm_pearson(xs, ys, z, bits, level)
    rx, ry = _reference_batch(xs, ys, z, draws, slice(None), level, "pearson", "skip", 0.0)
    assert np.isfinite(rx).any() and np.isnan(rx).any() == np.isnan(px).any()
    np.testing.assert_allclose(px, rx, rtol=0, atol=atol)
    np.testing.assert_allclose(py, ry, rtol=0, atol=atol)
    boot = bootstrap_draws(n, m, method="both", n_resamples=300, rng=1)
    sx, sy = boot_pearson(x, y, z, boot, level)
    kw = dict(level=level, coefficient="pearson", draws=boot, engine="reference")
    np.testing.assert_allclose(sx, bootstrap_samples(x, z, **kw), rtol=0, atol=atol)
    np.testing.assert_allclose(sy, bootstrap_samples(y, z, **kw), rtol=0, atol=atol)


@pytest.mark.parametrize("test", ["permutation", "bootstrap"])
@pytest.mark.parametrize("scale", [1e160, 1e-160])
def test_pairwise_tests_at_extreme_magnitudes(summeval, test, scale):
    from metaeval.stats.significance.pairs import pairwise_tests

    x, y, z = summeval
    scores = np.stack([x, y, (x + y) / 2])
    kw = dict(test=test, level="summary", coefficient="pearson", n_resamples=100, rng=1)
    base = pairwise_tests(scores, z, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = pairwise_tests(scores * scale, z * scale, **kw)
    np.testing.assert_allclose(np.asarray(got.pvalues), np.asarray(base.pvalues), rtol=0, atol=1e-12)


def _risky_sums_numpy(kernel, cache, i, j):
    """The risky inputs' sums of :class:`PearsonSummaryCompiled` in numpy, as the kernel computed them before
    its compiled loop: the sums over the systems in order, numpy's clip, :func:`is_constant_along`."""
    from metaeval.stats.kernels.ranks import is_constant_along

    cols, li, lj, xi, xj = kernel.risky[i, j]
    mask = cache.mask()[:, :, cols]  # (b, N, c)
    out = []
    for keep, take, vk, vt in ((li, lj, xi, xj), (lj, li, xj, xi)):
        s = np.where(mask[..., None], take, keep).sum(axis=1)  # (b, c, 3), systems in order
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip(s[..., 2] / np.sqrt(s[..., 1] - s[..., 0] * s[..., 0] / kernel.n), -1.0, 1.0)
        bad = is_constant_along(np.where(mask, vt, vk), axis=1)  # (b, c)
        r = np.ascontiguousarray(np.where(bad, 0.0, r))
        out.append((r.sum(axis=1), (~bad).sum(axis=1)))
    return out


@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_compiled_risky_inputs_of_summary_pearson_equal_numpy_to_the_bit(undefined):
    """The risky inputs of a pair (a rounded metric: a mask can make the permuted input constant) are
    computed by a compiled loop; its sums, constancy and r equal the numpy rows' bit for bit, and the deltas
    equal the reference path's."""
    pytest.importorskip("numba")
    from metaeval.stats.kernels.batch import BatchCache
    from metaeval.stats.kernels.pearson.summary_pairs import PearsonSummaryCompiled
    from metaeval.stats.significance.permutation import standardize

    rng = np.random.default_rng(5)
    n, m = 7, 300
    z = np.round(rng.normal(size=(n, m)) * 2)
    rounded = np.round(rng.normal(size=(n, m)) * 1.2)  # five or so levels: constant permuted inputs happen
    rounded[:, :20] = 3.0  # constant in x: constant whenever every system keeps it
    near = rounded.copy()
    near[:, 20:40] = np.where(rng.random((n, 20)) < 0.5, 2.0, ULP2)  # constant for Pearson, not tied exactly
    cont = rng.normal(size=(n, m))
    cont[:, 40:60] = rounded[:, 40:60]  # equal values in both metrics
    std = np.stack([standardize(v) for v in (rounded, near, cont)])
    pairs = [(0, 1), (0, 2), (1, 2)]
    kernel = PearsonSummaryCompiled(std, z, undefined, pairs)
    assert set(kernel.risky) == set(pairs)
    draws = permutation_draws(n, m, method="both", n_resamples=300, rng=4)
    constant = []
    for sl in (slice(0, 300), slice(0, 7), slice(7, 300)):
        cache = BatchCache(draws, sl)
        for pair in pairs:
            for (r1, c1), (r2, c2) in zip(kernel._risky_sums(cache, *pair), _risky_sums_numpy(kernel, cache, *pair)):
                assert r1.tobytes() == r2.tobytes() and c1.tolist() == c2.tolist()
                constant.append(bool((c1 < kernel.risky[pair][0].size).any()))
    assert any(constant) and not all(constant)  # some resamples make a permuted input constant, not all
    for i, j in pairs:
        kw = dict(level="summary", coefficient="pearson", draws=draws, undefined=undefined)
        fast = kernel.deltas(BatchCache(draws, slice(0, 300)), i, j)
        ref = permutation_deltas(std[i], std[j], z, engine="reference", **kw)
        np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)


def test_compiled_permuted_constancy_is_the_rule_of_is_constant():
    """The compiled constancy of permuted inputs equals :func:`is_constant` on the materialised inputs,
    also for values constant only for Pearson (2.0 and its neighbour below) and tied with a tolerance only."""
    pytest.importorskip("numba")
    from metaeval.stats.correlations.ties import NOISE_RTOL, is_constant
    from metaeval.stats.kernels.pearson.summary_pairs_compiled import permuted_constant

    rng = np.random.default_rng(8)
    n, c, b = 6, 40, 200
    x = np.round(rng.normal(size=(n, c)))
    y = np.round(rng.normal(size=(n, c)))
    x[:, :10] = np.where(rng.random((n, 10)) < 0.5, 2.0, ULP2)
    y[:, :10] = 2.0
    x[:, 10:15] = 1.0 + np.where(rng.random((n, 5)) < 0.5, 0.0, 1e-12)  # tied, not constant for Pearson
    y[:, 10:15] = 1.0
    mask = rng.random((b, n, c)) < 0.5
    mask[:, :, 20:25] = False
    got = np.zeros((b, c), dtype=bool)
    permuted_constant(mask, x, y, NOISE_RTOL, got)
    want = is_constant(np.where(mask, y, x), axis=1)
    assert got.tolist() == want.tolist() and want.any() and not want.all()
