"""Bootstrap intervals: kernels == reference == a plain loop with scipy over the same indices."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from metaeval.errors import DegenerateWarning, ParameterError
from metaeval.stats.resampling.bootstrap import (
    _acceleration,
    bca_interval,
    bootstrap_interval,
    bootstrap_samples,
    percentile_interval,
)
from metaeval.stats.resampling.draws import BootstrapDraws, bootstrap_draws


def scipy_corr(x, z, coefficient):
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(z) == 0:
        return np.nan
    if coefficient == "pearson":
        return stats.pearsonr(x, z)[0]
    if coefficient == "spearman":
        return stats.spearmanr(x, z)[0]
    return stats.kendalltau(x, z, variant="b")[0]


def scipy_level(x, z, level, coefficient):
    if level == "system":
        return scipy_corr(x.mean(axis=1), z.mean(axis=1), coefficient)
    if level == "global":
        return scipy_corr(x.ravel(), z.ravel(), coefficient)
    if level == "by-system":
        x, z = x.T, z.T
    r = [scipy_corr(x[:, j], z[:, j], coefficient) for j in range(x.shape[1])]
    r = [v for v in r if np.isfinite(v)]
    return np.mean(r) if r else np.nan


def tie_heavy(seed, n=7, m=6):
    rng = np.random.default_rng(seed)
    z = rng.integers(1, 4, size=(n, m)).astype(float)
    x = z + rng.integers(0, 3, size=(n, m))
    return x, z


@pytest.mark.parametrize("level", ["system", "summary", "by-system", "global"])
@pytest.mark.parametrize("coefficient", ["kendall-b", "pearson", "spearman"])
@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_kernel_equals_reference_and_plain_loop(level, coefficient, method):
    x, z = tie_heavy(1)
    draws = bootstrap_draws(*x.shape, method=method, n_resamples=60, rng=2)
    kw = dict(level=level, coefficient=coefficient, draws=draws)
    fast = bootstrap_samples(x, z, engine="auto", **kw)
    ref = bootstrap_samples(x, z, engine="reference", **kw)
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
    rows, cols = draws.row_indices(), draws.col_indices()
    loop = [scipy_level(x[r][:, c], z[r][:, c], level, coefficient) for r, c in zip(rows, cols)]
    if coefficient == "spearman" and level == "system":
        pytest.skip("scipy ranks averaged means without our tie tolerance")
    if coefficient == "kendall-b" and level == "global":
        pytest.skip("pairs of two copies of one system or input are left out (tests/test_stats_copies.py)")
    np.testing.assert_allclose(ref, loop, rtol=0, atol=1e-12)


def test_duplicated_systems_are_ties_for_kendall_and_points_for_pearson():
    x = np.array([[1.0], [2.0], [3.0], [4.0]])
    z = np.array([[1.0], [3.0], [2.0], [4.0]])
    xs, zs = x[[0, 0, 1, 3]], z[[0, 0, 1, 3]]
    assert scipy_level(xs, zs, "system", "kendall-b") == pytest.approx(stats.kendalltau([1, 1, 2, 4], [1, 1, 3, 4])[0])
    draws = bootstrap_draws(4, 1, method="systems", n_resamples=1, rng=0)
    draws = type(draws)("systems", 4, 1, np.array([[0, 0, 1, 3]]), None)
    for coefficient in ("kendall-b", "pearson"):
        out = bootstrap_samples(x, z, level="system", coefficient=coefficient, draws=draws)
        assert out[0] == pytest.approx(scipy_corr(xs[:, 0], zs[:, 0], coefficient), abs=1e-12)


def test_summary_kendall_kernel_on_larger_tie_heavy_data():
    x, z = tie_heavy(5, n=25, m=40)
    for method in ("systems", "both"):
        draws = bootstrap_draws(25, 40, method=method, n_resamples=50, rng=1)
        fast = bootstrap_samples(x, z, level="summary", coefficient="kendall-b", draws=draws)
        ref = bootstrap_samples(x, z, level="summary", coefficient="kendall-b", draws=draws, engine="reference")
        np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)


def test_full_test_set_system_level():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 12))
    z = rng.integers(1, 5, size=(6, 5)).astype(float)
    draws = bootstrap_draws(6, 12, method="both", n_resamples=40, rng=1, n_inputs_human=5)
    kw = dict(level="system", coefficient="kendall-b", draws=draws, full_test_set=True)
    fast = bootstrap_samples(x, z, **kw)
    ref = bootstrap_samples(x, z, engine="reference", **kw)
    np.testing.assert_allclose(fast, ref, atol=1e-12)
    loop = [scipy_corr(x[r][:, c].mean(1), z[r][:, ch].mean(1), "kendall-b")
            for r, c, ch in zip(draws.rows, draws.cols, draws.cols_human)]
    np.testing.assert_allclose(ref, loop, atol=1e-12)


def test_missing_values_use_reference_path():
    x, z = tie_heavy(3, n=8, m=6)
    x[2, 3] = np.nan
    draws = bootstrap_draws(8, 6, method="both", n_resamples=30, rng=0)
    a = bootstrap_samples(x, z, level="summary", coefficient="kendall-b", draws=draws)
    b = bootstrap_samples(x, z, level="summary", coefficient="kendall-b", draws=draws, engine="reference")
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("level,coefficient", [("system", "kendall-b"), ("summary", "kendall-b"),
                                               ("summary", "pearson"), ("global", "spearman")])
def test_batch_size_does_not_change_results(level, coefficient):
    x, z = tie_heavy(2, n=14, m=8)
    outs = [bootstrap_interval(x, z, level=level, coefficient=coefficient, method="both", n_resamples=57,
                               rng=4, batch=b) for b in (1, 7, 57, None)]
    for o in outs[1:]:
        np.testing.assert_array_equal(o.samples, outs[0].samples)
        assert (o.low, o.high) == (outs[0].low, outs[0].high)


def test_inputs_not_mutated_and_seed_reproducible():
    x, z = tie_heavy(4, n=14, m=8)
    xc, zc = x.copy(), z.copy()
    a = bootstrap_interval(x, z, level="summary", method="both", n_resamples=50, rng=1, interval="bca")
    b = bootstrap_interval(x, z, level="summary", method="both", n_resamples=50, rng=1, interval="bca")
    assert np.array_equal(x, xc) and np.array_equal(z, zc)
    assert (a.low, a.high) == (b.low, b.high)


def test_percentile_interval_and_outcome_fields():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(20, 10))
    x = z + rng.normal(size=z.shape)
    out = bootstrap_interval(x, z, level="system", coefficient="pearson", method="systems", n_resamples=200,
                             rng=0)
    assert out.low < out.statistic < out.high
    assert out.ci == (out.low, out.high)
    assert out.n_resamples == 200 and out.n_resamples_dropped == 0 and out.samples.shape == (200,)
    assert (out.low, out.high) == percentile_interval(out.samples, 0.95)
    assert out.low == pytest.approx(np.percentile(out.samples, 2.5))


def test_undefined_resamples_are_dropped_and_counted():
    # input 0 is constant for the humans: its per-input correlation is undefined in every resample that
    # only draws input 0
    z = np.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])
    x = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    out = bootstrap_interval(x, z, level="summary", coefficient="pearson", method="inputs", n_resamples=200, rng=0)
    assert 0 < out.n_resamples_dropped < 200
    assert out.samples.size == 200 - out.n_resamples_dropped


def test_all_resamples_undefined_gives_nan_and_warning():
    z = np.array([[1.0, 1.0], [1.0, 1.0], [2.0, 2.0]])
    x = np.array([[1.0, 2.0], [2.0, 1.0], [3.0, 3.0]])
    with pytest.warns(DegenerateWarning, match="undefined"):
        out = bootstrap_interval(x, z[:, :1].repeat(2, 1) * 0 + 1, level="summary", method="inputs",
                                 n_resamples=20, rng=0)
    assert np.isnan(out.low) and np.isnan(out.high)


def test_all_resamples_undefined_with_defined_statistic():
    # 2 systems: every BOOT-SYSTEMS resample with a duplicated system is constant -> undefined
    x = np.array([[1.0, 2.0], [2.0, 3.0]])
    z = np.array([[1.0, 1.0], [2.0, 3.0]])
    with pytest.warns(DegenerateWarning):
        out = bootstrap_interval(x, z, level="system", coefficient="pearson", method="systems", n_resamples=30,
                                 rng=0)
    assert out.n_resamples_dropped > 0


def test_few_distinct_systems_warns():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(5, 10))
    with pytest.warns(DegenerateWarning, match="distinct systems"):
        bootstrap_interval(z + rng.normal(size=z.shape), z, level="system", coefficient="pearson",
                           method="systems", n_resamples=100, rng=0)


def test_no_warning_for_moderate_n():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(16, 20))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bootstrap_interval(z + rng.normal(size=z.shape), z, level="system", coefficient="kendall-b",
                           method="both", n_resamples=200, rng=0)


def test_bca_matches_scipy_for_a_single_sample_statistic():
    # one metric, system level, BOOT-SYSTEMS: BCa with the same resamples as scipy's bootstrap
    rng = np.random.default_rng(0)
    z = rng.normal(size=(30, 1))
    x = z + rng.normal(size=z.shape)
    out = bootstrap_interval(x, z, level="system", coefficient="pearson", method="systems", n_resamples=2000,
                             rng=1, interval="bca")
    ref = stats.bootstrap((x[:, 0], z[:, 0]), lambda a, b, axis=-1: stats.pearsonr(a, b, axis=axis)[0],
                          paired=True, vectorized=True, method="BCa", n_resamples=2000, random_state=1)
    assert out.low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert out.high == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_acceleration_single_sample_formula():
    theta = np.array([0.1, 0.3, 0.2, 0.7, 0.4])
    d = theta.mean() - theta
    assert _acceleration([theta]) == pytest.approx((d**3).sum() / (6 * (d**2).sum() ** 1.5))


def test_bca_without_acceleration_or_bias_is_percentile():
    s = np.linspace(-1, 1, 1001)
    assert bca_interval(s, 0.0, 0.0, 0.9) == pytest.approx(percentile_interval(s, 0.9))
    assert np.isnan(bca_interval(np.ones(10), 0.0, 0.0, 0.9)[0])


@pytest.mark.parametrize("kwargs,message", [
    (dict(method="rows"), "`method` must be one of 'systems', 'inputs', 'both'; got 'rows'."),
    (dict(n_resamples=0), "`n_resamples` must be an integer >= 1; got 0."),
    (dict(confidence_level=95), "`confidence_level` must be a number in (0, 1); got 95."),
    (dict(interval="normal"), "`interval` must be one of 'percentile', 'bca'; got 'normal'."),
    (dict(batch=0), "`batch` must be an integer >= 1; got 0."),
    (dict(engine="gpu"), "`engine` must be one of 'auto', 'reference'; got 'gpu'."),
    (dict(level="summary", full_test_set=True),
     "`full_test_set` must be False unless `level` is 'system'; got level 'summary'."),
])
def test_validation_messages(kwargs, message):
    x, z = tie_heavy(0)
    with pytest.raises(ParameterError) as info:
        bootstrap_interval(x, z, **kwargs)
    assert str(info.value) == message


def test_exact_weighted_sums_do_not_depend_on_order_or_batch():
    from fractions import Fraction

    from metaeval.stats.kernels import ExactWeightedSums

    rng = np.random.default_rng(0)
    values = rng.normal(size=(6, 50)) * np.array([[1e-3], [1.0], [1e3], [7.0], [1e-12], [0.3]])
    values[5, :10] = 1.0 / 3.0
    weights = np.stack([np.bincount(rng.integers(0, 50, 50), minlength=50) for _ in range(20)])
    sums = ExactWeightedSums(values, 50)
    out = sums(weights)
    perm = rng.permutation(50)
    np.testing.assert_array_equal(ExactWeightedSums(values[:, perm], 50)(weights[:, perm]), out)
    np.testing.assert_array_equal(np.concatenate([sums(weights[:7]), sums(weights[7:])]), out)
    for s in range(20):  # within one rounding of the exact rational sum
        for a in range(6):
            exact = sum(Fraction(int(c)) * Fraction(float(v)) for c, v in zip(weights[s], values[a]))
            assert abs(Fraction(float(out[s, a])) - exact) <= abs(exact) * 2.0**-52


@pytest.mark.parametrize("coefficient", ["kendall-b", "pearson", "spearman"])
def test_system_kernels_on_realistic_size(coefficient):
    # Likert-like averages (thirds between 1 and 5): resampled system means often tie exactly. (Means
    # that are 0 in exact arithmetic would be residues of either sign after rounding, which no relative
    # tie tolerance absorbs; scores on a positive scale never meet them.)
    rng = np.random.default_rng(2)
    z = np.clip(np.round(3 + rng.normal(size=(25, 40)) * 3) / 3, 1, 5)
    x = z + rng.normal(size=z.shape)
    for method in ("systems", "inputs", "both"):
        draws = bootstrap_draws(25, 40, method=method, n_resamples=80, rng=5)
        kw = dict(level="system", coefficient=coefficient, draws=draws)
        np.testing.assert_allclose(bootstrap_samples(x, z, **kw), bootstrap_samples(x, z, engine="reference", **kw),
                                   rtol=0, atol=1e-12)


def test_single_blas_thread_restores_the_setting():
    from metaeval.stats import _runtime

    controls = _runtime._openblas_controls()
    if not controls:
        pytest.skip("no OpenBLAS found")
    before = [int(get()) for _, get in controls]
    with _runtime.single_blas_thread():
        with _runtime.single_blas_thread():  # nested blocks: restored by the outermost
            assert [int(get()) for _, get in controls] == [1] * len(controls)
        assert [int(get()) for _, get in controls] == [1] * len(controls)
    assert [int(get()) for _, get in controls] == before


def test_system_drawn_many_times_in_one_resample():
    # multiplicities above 11 switch the Kendall kernel's pair weights from int8 to int16
    x, z = tie_heavy(6, n=24, m=5)
    x = x + np.arange(24)[:, None] / 7.0  # distinct system means
    rows = np.array([[3] * 12 + [5] * 11 + [0], list(range(24)), [7] * 24])  # w_3 w_5 = 132 > 127
    draws = BootstrapDraws("systems", 24, 5, rows, None)
    for coefficient in ("kendall-b", "pearson"):
        kw = dict(level="system", coefficient=coefficient, draws=draws)
        fast = bootstrap_samples(x, z, **kw)
        np.testing.assert_allclose(fast, bootstrap_samples(x, z, engine="reference", **kw), rtol=0, atol=1e-12)
        loop = [scipy_level(x[r], z[r], "system", coefficient) for r in rows]
        np.testing.assert_allclose(fast, loop, rtol=0, atol=1e-12)
