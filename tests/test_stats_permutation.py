"""Permutation test and paired bootstrap test: kernels == reference, p-value definitions, invariances."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.errors import DegenerateDataError, ParameterError
from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.significance.paired_bootstrap import bootstrap_pvalue, bootstrap_test
from metaeval.stats.significance.permutation import (
    monte_carlo_pvalue,
    permutation_deltas,
    permutation_test,
    standardize,
)
from metaeval.stats.resampling.draws import bootstrap_draws, permutation_draws


def tie_heavy(seed, n=8, m=7):
    rng = np.random.default_rng(seed)
    z = rng.integers(1, 4, size=(n, m)).astype(float)
    x = z + rng.integers(0, 3, size=(n, m))
    y = rng.integers(0, 4, size=(n, m)).astype(float)
    return x, y, z


@pytest.mark.parametrize("level", ["system", "summary", "by-system", "global"])
@pytest.mark.parametrize("coefficient", ["kendall-b", "pearson", "spearman"])
@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
@pytest.mark.parametrize("seed", [0, 1])
def test_kernel_equals_generic_path(level, coefficient, method, seed):
    x, y, z = tie_heavy(seed)
    if seed == 1:  # continuous metrics: the tie-free linear Kendall path
        rng = np.random.default_rng(9)
        x, y = rng.normal(size=x.shape), rng.normal(size=x.shape)
    xs, ys = standardize(x), standardize(y)
    draws = permutation_draws(*x.shape, method=method, n_resamples=64, rng=3)
    kw = dict(level=level, coefficient=coefficient, draws=draws)
    fast = permutation_deltas(xs, ys, z, **kw)
    mask = draws.mask()
    zb = np.broadcast_to(z, mask.shape)
    generic = (level_correlation(np.where(mask, ys, xs), zb, level=level, coefficient=coefficient).statistic
               - level_correlation(np.where(mask, xs, ys), zb, level=level, coefficient=coefficient).statistic)
    np.testing.assert_allclose(fast, generic, rtol=0, atol=1e-12)


def test_summary_kendall_kernel_on_realistic_size():
    x, y, z = tie_heavy(4, n=25, m=30)
    xs, ys = standardize(x), standardize(y)
    for method in ("systems", "both"):
        draws = permutation_draws(25, 30, method=method, n_resamples=40, rng=2)
        kw = dict(level="summary", coefficient="kendall-b", draws=draws)
        np.testing.assert_allclose(permutation_deltas(xs, ys, z, **kw),
                                   permutation_deltas(xs, ys, z, engine="reference", **kw), rtol=0, atol=1e-12)


def test_pvalue_definition_matches_manual_count():
    x, y, z = tie_heavy(2, n=12, m=10)
    for alternative in ("greater", "less", "two-sided"):
        out = permutation_test(x, y, z, level="system", method="both", alternative=alternative, n_resamples=199,
                               rng=5)
        null, d = out.null_distribution, out.delta
        count = {"greater": np.sum(null >= d - 1e-13), "less": np.sum(null <= d + 1e-13),
                 "two-sided": np.sum(np.abs(null) >= abs(d) - 1e-13)}[alternative]
        assert out.pvalue == (1 + count) / (1 + null.size)
        assert 0 < out.pvalue <= 1


def test_tolerance_counts_mathematically_equal_deltas():
    null = np.array([0.1 + 0.2, 0.0, 0.5])
    assert monte_carlo_pvalue(null, 0.3, "greater") == 3 / 4  # 0.1 + 0.2 = 0.30000000000000004 >= 0.3
    assert monte_carlo_pvalue(null, 0.30000000000000004, "less") == 3 / 4
    assert np.isnan(monte_carlo_pvalue(np.array([]), 0.3, "greater"))


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_identical_metrics_give_pvalue_one(level, alternative):
    x, _, z = tie_heavy(3)
    out = permutation_test(x, x.copy(), z, level=level, alternative=alternative, n_resamples=50, rng=0)
    assert out.delta == 0 and out.pvalue == 1.0
    out = bootstrap_test(x, x.copy(), z, level=level, alternative=alternative, n_resamples=50, rng=0)
    assert out.delta == 0 and out.pvalue == 1.0


def test_standardization_makes_scale_irrelevant():
    x, y, z = tie_heavy(6, n=12, m=9)
    a = permutation_test(x, y, z, level="summary", coefficient="pearson", n_resamples=99, rng=1)
    b = permutation_test(100 * x + 7, y / 3, z, level="summary", coefficient="pearson", n_resamples=99, rng=1)
    np.testing.assert_allclose(a.null_distribution, b.null_distribution, atol=1e-12)
    assert a.pvalue == b.pvalue


def test_constant_metric_is_a_clear_error():
    x, y, z = tie_heavy(0)
    with pytest.raises(DegenerateDataError) as info:
        permutation_test(np.full(x.shape, 2.0), y, z, n_resamples=10, rng=0)
    assert str(info.value) == ("`x` must have non-zero variance over its non-missing cells to be standardized "
                               "for a permutation test; got a constant metric (56 non-missing cells).")


def test_batch_size_and_inputs_unchanged():
    x, y, z = tie_heavy(7, n=12, m=9)
    copies = [a.copy() for a in (x, y, z)]
    for level, coefficient in [("system", "kendall-b"), ("summary", "kendall-b"), ("summary", "pearson"),
                               ("global", "pearson")]:
        outs = [permutation_test(x, y, z, level=level, coefficient=coefficient, n_resamples=61, rng=2, batch=b)
                for b in (1, 8, 61, None)]
        for o in outs[1:]:
            np.testing.assert_array_equal(o.null_distribution, outs[0].null_distribution)
            assert o.pvalue == outs[0].pvalue
        outs = [bootstrap_test(x, y, z, level=level, coefficient=coefficient, n_resamples=61, rng=2, batch=b)
                for b in (1, 8, None)]
        for o in outs[1:]:
            np.testing.assert_array_equal(o.samples, outs[0].samples)
    for a, c in zip((x, y, z), copies):
        assert np.array_equal(a, c)


def test_better_metric_is_detected_and_alternatives_are_consistent():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(20, 30))
    x = z + 0.5 * rng.normal(size=z.shape)
    y = z + 3.0 * rng.normal(size=z.shape)
    g = permutation_test(x, y, z, level="summary", coefficient="kendall-b", alternative="greater", n_resamples=200, rng=0)
    l_ = permutation_test(x, y, z, level="summary", coefficient="kendall-b", alternative="less", n_resamples=200, rng=0)
    assert g.pvalue == 1 / 201 and l_.pvalue == 1.0
    b = bootstrap_test(x, y, z, level="summary", coefficient="kendall-b", alternative="greater", n_resamples=200, rng=0)
    assert b.pvalue == 0.0 and b.low > 0


def test_paired_bootstrap_pvalue_definition():
    samples = np.array([0.1, 0.2, 0.25, 0.4, 0.5])
    # greater: #{delta_s - delta >= delta} = #{delta_s >= 0.4}
    assert bootstrap_pvalue(samples, 0.2, "greater") == 2 / 5
    # less: #{delta_s <= 2 delta}
    assert bootstrap_pvalue(samples, 0.2, "less") == 4 / 5
    # two-sided: #{|delta_s - delta| >= |delta|}: 0.4, 0.5 (and none below 0)
    assert bootstrap_pvalue(samples, 0.2, "two-sided") == 2 / 5


def test_paired_bootstrap_uses_one_set_of_indices():
    x, y, z = tie_heavy(8, n=12, m=9)
    out = bootstrap_test(x, y, z, level="system", coefficient="pearson", method="both", n_resamples=30, rng=4)
    draws = bootstrap_draws(12, 9, method="both", n_resamples=30, rng=4)
    manual = []
    for r, c in zip(draws.rows, draws.cols):
        rx = level_correlation(x[r][:, c], z[r][:, c], level="system", coefficient="pearson").statistic
        ry = level_correlation(y[r][:, c], z[r][:, c], level="system", coefficient="pearson").statistic
        manual.append(rx - ry)
    np.testing.assert_allclose(out.samples, manual, atol=1e-12)


@pytest.mark.parametrize("kwargs,message", [
    (dict(alternative="bigger"), "`alternative` must be one of 'two-sided', 'greater', 'less'; got 'bigger'."),
    (dict(method="cells"), "`method` must be one of 'systems', 'inputs', 'both'; got 'cells'."),
    (dict(n_resamples=-1), "`n_resamples` must be an integer >= 1; got -1."),
])
def test_validation_messages(kwargs, message):
    x, y, z = tie_heavy(0)
    for fn in (permutation_test, bootstrap_test):
        with pytest.raises(ParameterError) as info:
            fn(x, y, z, **kwargs)
        assert str(info.value) == message


def test_options_are_keyword_only():
    x, y, z = tie_heavy(0)
    with pytest.raises(TypeError):
        permutation_test(x, y, z, "system")


@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_tie_free_summary_kendall_byte_tables_equal_generic_path(undefined):
    # continuous metrics: tau(X') - tau(Y') is linear in the mask, evaluated from byte lookup tables;
    # one input is constant for the humans (undefined), M is not a multiple of 8
    rng = np.random.default_rng(11)
    x, y = rng.normal(size=(9, 13)), rng.normal(size=(9, 13))
    z = rng.integers(1, 4, size=(9, 13)).astype(float)
    z[:, 5] = 2.0
    xs, ys = standardize(x), standardize(y)
    draws = permutation_draws(9, 13, method="both", n_resamples=97, rng=4)
    kw = dict(level="summary", coefficient="kendall-b", draws=draws, undefined=undefined)
    fast = permutation_deltas(xs, ys, z, **kw)
    np.testing.assert_allclose(fast, permutation_deltas(xs, ys, z, engine="reference", **kw), rtol=0, atol=1e-12)
    for batch in (1, 10):  # the same sums in the same order for any batch
        np.testing.assert_array_equal(permutation_deltas(xs, ys, z, batch=batch, **kw), fast)


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("coefficient", ["kendall-b", "pearson"])
def test_kernels_on_realistic_size(level, coefficient):
    rng = np.random.default_rng(3)
    z = np.clip(np.round(3 + rng.normal(size=(25, 40)) * 3) / 3, 1, 5)  # Likert-like averages: many ties
    x, y = z + rng.normal(size=z.shape), z + 2 * rng.normal(size=z.shape)
    xs, ys = standardize(x), standardize(y)
    for method in ("systems", "inputs", "both"):
        draws = permutation_draws(25, 40, method=method, n_resamples=64, rng=1)
        kw = dict(level=level, coefficient=coefficient, draws=draws)
        np.testing.assert_allclose(permutation_deltas(xs, ys, z, **kw),
                                   permutation_deltas(xs, ys, z, engine="reference", **kw), rtol=0, atol=1e-12)


def test_point_estimates_equal_level_correlation_bitwise():
    # the tests' observed statistics come from fast exact code; they must be the generic path's numbers
    from metaeval.stats.kernels import point_correlations

    rng = np.random.default_rng(0)
    for trial in range(40):
        n, m = int(rng.integers(2, 30)), int(rng.integers(1, 12))
        x, y, z = tie_heavy(trial, n=n, m=m) if trial % 2 else (rng.normal(size=(n, m)) for _ in range(3))
        if trial % 5 == 0:
            x = np.asfortranarray(x)
        for level in ("system", "summary"):
            for coefficient in ("kendall-b", "pearson"):
                for undefined in ("skip", "zero"):
                    kw = dict(level=level, coefficient=coefficient, undefined=undefined)
                    got = point_correlations([x, y], z, **kw)
                    for a, out in zip((x, y), got):
                        ref = level_correlation(a, z, **kw)
                        for field in ("statistic", "n_used", "n_skipped", "n_zeroed", "n_inputs_dropped"):
                            want, have = getattr(ref, field), getattr(out, field)
                            assert type(have) is type(want) and np.array_equal(have, want, equal_nan=True)
