"""Tests of metaeval.stats.correlations.levels."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from metaeval.errors import ParameterError
from metaeval.stats.correlations.coefficients import COEFFICIENTS, correlation
from metaeval.stats.correlations.levels import LEVELS, LevelCorrelation, canonical_level, level_correlation

# 3 systems x 4 inputs, small integers so that every level can be computed by hand
X = np.array([[1, 2, 3, 5], [2, 2, 4, 4], [3, 5, 1, 6]], dtype=float)
Z = np.array([[1, 1, 2, 4], [2, 3, 3, 4], [3, 2, 1, 5]], dtype=float)


def _lc(x, z, level, coefficient="kendall-b", **kw):
    return level_correlation(x, z, level=level, coefficient=coefficient, **kw)


# ----------------------------------------------------------------------------------------------------
# validation


def test_canonical_level():
    assert [canonical_level(v) for v in LEVELS] == list(LEVELS)
    assert canonical_level("input") == "summary"
    assert canonical_level("segment") == "summary"
    with pytest.raises(ParameterError) as e:
        canonical_level("foo")
    assert str(e.value) == "`level` must be one of 'system', 'summary', 'global', 'by-system', 'partial'; got 'foo'."


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(undefined="nan"), "`undefined` must be one of 'skip', 'zero'; got 'nan'."),
        (dict(full_test_set="yes"), "`full_test_set` must be True or False; got 'yes'."),
        (dict(full_test_set=True, level="summary"),
         "`full_test_set` must be False at level 'summary' (it applies to the system level); got True."),
        (dict(x=np.zeros(3)), "`x` must be an array of shape (..., systems, inputs); got shape (3,)."),
        (dict(z=np.zeros((2, 4))), "`z` must have shape (..., 3, 4) to match `x`; got shape (2, 4)."),
        (dict(z=np.zeros((3, 5))), "`z` must have shape (..., 3, 4) to match `x`; got shape (3, 5)."),
        (dict(z=np.zeros((2, 5)), full_test_set=True),
         "`z` must have shape (..., 3, M) to match `x`; got shape (2, 5)."),
        (dict(x=np.zeros((2, 3, 4)), z=np.zeros((5, 3, 4))),
         "`z` must have shape (..., 3, 4) to match `x`; got shape (5, 3, 4)."),
        (dict(coefficient="foo"),
         "`coefficient` must be one of 'pearson', 'spearman', 'kendall-a', 'kendall-b', 'kendall-c', "
         "'accuracy', 'tau-eq', 'acc-eq', 'pdp'; got 'foo'."),
        (dict(tie_threshold=0.5),
         "`tie_threshold` must be 0 for coefficient 'kendall-b' (it applies to 'accuracy', 'tau-eq', 'acc-eq'); "
         "got 0.5."),
    ],
)
def test_messages(kwargs, message):
    args = dict(x=X, z=Z, level="system", coefficient="kendall-b")
    args.update(kwargs)
    with pytest.raises(ParameterError) as e:
        level_correlation(args.pop("x"), args.pop("z"), **args)
    assert str(e.value) == message


# ----------------------------------------------------------------------------------------------------
# hand-computed levels


def test_system_level_by_hand():
    # system means: x = (2.75, 3, 3.75), z = (2, 3, 2.75); pairs: C, C, D
    out = _lc(X, Z, "system")
    assert out.statistic == pytest.approx(1 / 3)
    assert (out.n_used, out.n_skipped, out.n_zeroed, out.n_inputs_dropped) == (3, 0, 0, 0)
    # Pearson: centered x = (-5, -2, 7) / 12, z = (-7, 5, 2) / 12 -> 39 / 78
    assert _lc(X, Z, "system", "pearson").statistic == pytest.approx(0.5)


def test_summary_level_by_hand():
    # inputs: tau-b = 1, 0 (C, D, one x tie), 1, 2 / sqrt(3 * 2) (one z tie)
    out = _lc(X, Z, "summary")
    assert out.statistic == pytest.approx((1 + 0 + 1 + 2 / np.sqrt(6)) / 4)
    assert (out.n_used, out.n_skipped) == (4, 0)
    assert _lc(X, Z, "input").statistic == out.statistic


def test_by_system_level_by_hand():
    # systems: S = 5 with one z tie; S = 3 with two x ties and one z tie; S = 4 without ties
    out = _lc(X, Z, "by-system")
    assert out.statistic == pytest.approx((5 / np.sqrt(6 * 5) + 3 / np.sqrt(4 * 5) + 4 / 6) / 3)
    assert (out.n_used, out.n_skipped) == (3, 0)


def test_global_level():
    out = _lc(X, Z, "global")
    assert out.statistic == pytest.approx(stats.kendalltau(X.ravel(), Z.ravel())[0])
    assert out.statistic == pytest.approx(0.6958890006392211)
    assert (out.n_used, out.n_skipped) == (12, 0)
    assert _lc(X, Z, "global", "pearson").statistic == pytest.approx(stats.pearsonr(X.ravel(), Z.ravel())[0])


@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_levels_follow_their_formulas(coefficient):
    rng = np.random.default_rng(4)
    x = rng.integers(0, 5, (6, 9)) / 2.0
    z = rng.integers(0, 4, (6, 9)) + 0.0
    c = lambda a, b: correlation(a, b, coefficient)  # noqa: E731
    assert _lc(x, z, "system", coefficient).statistic == pytest.approx(c(x.mean(1), z.mean(1)), nan_ok=True)
    assert _lc(x, z, "global", coefficient).statistic == pytest.approx(c(x.ravel(), z.ravel()), nan_ok=True)
    if coefficient == "pdp":  # pools the groups' pairs instead of averaging them: tests/test_mt_pdp.py
        return
    per_input = np.array([c(x[:, j], z[:, j]) for j in range(9)])
    assert _lc(x, z, "summary", coefficient).statistic == pytest.approx(np.nanmean(per_input))
    per_system = np.array([c(x[i], z[i]) for i in range(6)])
    assert _lc(x, z, "by-system", coefficient).statistic == pytest.approx(np.nanmean(per_system))


# ----------------------------------------------------------------------------------------------------
# missing values, undefined groups


def test_system_level_judged_subset_drops_inputs_for_every_system():
    x = X.copy()
    x[1, 3] = np.nan  # system 1 lacks input 3: input 3 is dropped for everyone
    z = Z.copy()
    z[:, 2] = np.nan  # input 2 was not judged: not counted as dropped
    out = _lc(x, z, "system", "pearson")
    expected = stats.pearsonr(X[:, :2].mean(1), Z[:, :2].mean(1))[0]
    assert out.statistic == pytest.approx(expected)
    assert (out.n_used, out.n_skipped, out.n_inputs_dropped) == (3, 0, 1)


def test_system_level_full_test_set():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 10))  # metric on the whole test set
    z = rng.normal(size=(4, 3))  # humans judged 3 inputs
    x[0, 7] = np.nan
    z[2, 1] = np.nan
    out = _lc(x, z, "system", "pearson", full_test_set=True)
    expected = stats.pearsonr(np.nanmean(x, axis=1), np.nanmean(z, axis=1))[0]
    assert out.statistic == pytest.approx(expected)
    assert (out.n_used, out.n_skipped, out.n_inputs_dropped) == (4, 0, 0)
    z[3] = np.nan  # a system without human scores is left out and counted
    out = _lc(x, z, "system", "pearson", full_test_set=True)
    assert (out.n_used, out.n_skipped) == (3, 1)
    assert out.statistic == pytest.approx(stats.pearsonr(np.nanmean(x[:3], 1), np.nanmean(z[:3], 1))[0])


def test_system_level_without_complete_input_is_nan():
    x = X.copy()
    x[0, 0] = x[1, 1] = x[2, 2] = x[0, 3] = np.nan
    out = _lc(x, Z, "system")
    assert np.isnan(out.statistic)
    assert (out.n_used, out.n_skipped, out.n_inputs_dropped) == (0, 3, 4)


def test_summary_level_skips_and_counts_undefined_inputs():
    z = Z.copy()
    z[:, 1] = 2.0  # constant human scores on input 1: undefined
    x = X.copy()
    x[:2, 3] = np.nan  # one valid pair left on input 3: undefined
    skip = _lc(x, z, "summary")
    assert skip.statistic == pytest.approx((1 + 1) / 2)
    assert (skip.n_used, skip.n_skipped, skip.n_zeroed) == (2, 2, 0)
    zero = _lc(x, z, "summary", undefined="zero")
    # the constant input counts as 0; the input without 2 valid pairs is still left out
    assert zero.statistic == pytest.approx((1 + 0 + 1) / 3)
    assert (zero.n_used, zero.n_skipped, zero.n_zeroed) == (3, 2, 1)


def test_all_groups_undefined_is_nan():
    out = _lc(X, np.ones_like(Z), "summary")
    assert np.isnan(out.statistic)
    assert (out.n_used, out.n_skipped) == (0, 4)
    out = _lc(X, np.ones_like(Z), "by-system", undefined="zero")
    assert out.statistic == 0.0
    assert (out.n_used, out.n_skipped, out.n_zeroed) == (3, 3, 3)


def test_global_level_counts_judged_cells_without_metric_score():
    x = X.copy()
    x[0, 0] = np.nan
    z = Z.copy()
    z[1, 1] = np.nan  # an unjudged cell is not "skipped"
    out = _lc(x, z, "global")
    keep = np.isfinite(x) & np.isfinite(z)
    assert out.statistic == pytest.approx(stats.kendalltau(x[keep], z[keep])[0])
    assert (out.n_used, out.n_skipped) == (10, 1)


# ----------------------------------------------------------------------------------------------------
# batching


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", ["pearson", "kendall-b", "acc-eq"])
def test_batched_equals_loop(level, coefficient):
    rng = np.random.default_rng(5)
    x = rng.integers(0, 5, (4, 5, 6)) / 3.0
    z = rng.integers(0, 3, (5, 6)) + 0.0  # broadcast against the batch of x
    x[1, 2, 3] = np.nan
    out = _lc(x, z, level, coefficient)
    assert isinstance(out, LevelCorrelation)
    assert np.shape(out.statistic) == (4,)
    for k in range(4):
        one = _lc(x[k], z, level, coefficient)
        for field in ("statistic", "n_used", "n_skipped", "n_zeroed", "n_inputs_dropped"):
            assert getattr(out, field)[k] == pytest.approx(getattr(one, field), abs=1e-14, nan_ok=True), field


def test_inputs_not_mutated():
    x, z = X.copy(), Z.copy()
    x[0, 1] = np.nan
    x0, z0 = x.copy(), z.copy()
    for level in LEVELS:
        _lc(x, z, level)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(z, z0)


def test_system_means_are_what_the_system_level_correlates():
    from metaeval.stats.correlations.levels import system_means

    nan = np.nan
    x = np.array([[1.0, 2.0, 3.0], [4.0, nan, 6.0], [7.0, 8.0, 9.0]])
    z = np.array([[1.0, 1.0, nan], [2.0, 2.0, 2.0], [3.0, 5.0, 3.0]])
    xbar, zbar, dropped = system_means(x, z)  # only input 0 is complete for every system
    np.testing.assert_array_equal(xbar, [1.0, 4.0, 7.0])
    np.testing.assert_array_equal(zbar, [1.0, 2.0, 3.0])
    assert dropped == 2
    xbar, zbar, dropped = system_means(x, z, full_test_set=True)
    np.testing.assert_array_equal(xbar, [2.0, 5.0, 8.0])
    np.testing.assert_array_equal(zbar, [1.0, 2.0, 11.0 / 3.0])
    assert dropped == 0
    r = level_correlation(x, z, level="system", coefficient="pearson")
    assert r.n_inputs_dropped == 2 and r.statistic == pytest.approx(1.0)
