"""The partial level: the correlation controlling for the system (Pagnoni et al. 2021, FRANK).

The oracle is FRANK's evaluation script's definition, computed independently: regress metric and human
each on an intercept and one-hot system indicators (least squares over the cells where both are present),
then correlate the residuals with scipy.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.stats.resampling.bootstrap import bootstrap_samples
from metaeval.stats.correlations.levels import level_correlation, system_residuals
from metaeval.stats.resampling.draws import bootstrap_draws

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall-b": stats.kendalltau}


def regression_residuals(x, z):
    """Residuals of x and z on one-hot system dummies plus an intercept (lstsq), over the common cells."""
    valid = np.isfinite(x) & np.isfinite(z)
    rows = np.nonzero(valid)[0]
    design = np.column_stack([np.ones(rows.size), np.eye(x.shape[0])[rows]])
    out = []
    for values in (x[valid], z[valid]):
        coef = np.linalg.lstsq(design, values, rcond=None)[0]
        out.append(values - design @ coef)
    return out


def frank_like(seed, n=6, m=40, missing=0.2):
    rng = np.random.default_rng(seed)
    effect = rng.normal(size=(n, 1))
    x = 2 * effect + rng.normal(size=(n, m))
    z = effect + 0.5 * x + rng.normal(size=(n, m))
    x[rng.random((n, m)) < missing] = np.nan
    z[rng.random((n, m)) < missing / 2] = np.nan
    return x, z


@pytest.mark.parametrize("coefficient", sorted(SCIPY))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_partial_level_equals_the_correlation_of_regression_residuals(coefficient, seed):
    x, z = frank_like(seed)
    rx, rz = regression_residuals(x, z)
    out = level_correlation(x, z, level="partial", coefficient=coefficient)
    assert float(out.statistic) == pytest.approx(SCIPY[coefficient](rx, rz)[0], abs=1e-12)
    assert int(out.n_used) == rx.size
    assert int(out.n_skipped) == int((np.isfinite(z) & ~np.isfinite(x)).sum())


def test_system_residuals_are_centred_within_each_system_over_the_common_cells():
    x = np.array([[1.0, 2.0, np.nan, 6.0], [3.0, 3.0, 5.0, 1.0]])
    z = np.array([[2.0, np.nan, 1.0, 4.0], [1.0, 2.0, 3.0, np.nan]])
    rx, rz = system_residuals(x, z)
    np.testing.assert_allclose(rx, [[-2.5, np.nan, np.nan, 2.5], [-2 / 3, -2 / 3, 4 / 3, np.nan]])
    np.testing.assert_allclose(rz, [[-1.0, np.nan, np.nan, 1.0], [-1.0, 0.0, 1.0, np.nan]])


def test_partial_removes_a_system_effect_that_global_keeps():
    # within each system metric and human are unrelated; the systems differ in both: global is high,
    # partial is near 0
    rng = np.random.default_rng(3)
    effect = np.arange(8.0)[:, None] * 3
    x, z = effect + rng.normal(size=(8, 50)), effect + rng.normal(size=(8, 50))
    glob = level_correlation(x, z, level="global", coefficient="pearson").statistic
    part = level_correlation(x, z, level="partial", coefficient="pearson").statistic
    assert glob > 0.9 and abs(part) < 0.1


def test_partial_level_through_the_api_with_intervals_and_tests():
    x, z = frank_like(4)
    rng = np.random.default_rng(5)
    ds = me.ScoreSet.from_matrices({"a": x, "b": x + rng.normal(size=x.shape), "h": z}, humans=["h"])
    boot = me.bootstrap_ci(ds, "a", "h", level="partial", coefficient="pearson", n_resamples=200, rng=0,
                           method="inputs")
    assert boot.ci[0] < boot.statistic < boot.ci[1] and boot.level == "partial"
    fisher = me.fisher_ci(ds, "a", "h", level="partial", coefficient="pearson")
    assert fisher.signature.as_dict()["n"] == fisher.n_used - (x.shape[0] - 1)
    perm = me.permutation_test(ds, "a", "b", "h", level="partial", coefficient="pearson", n_resamples=200, rng=0)
    assert perm.pvalue < 0.05
    will = me.williams_test(ds, "a", "b", "h", level="partial")
    assert will.n_used == int(((np.isfinite(x)) & np.isfinite(z)).sum())


def _plain_pairs(x, z, copies, coefficient):
    """Pair counts over pairs of positions that are not copies, ties by metaeval's rule."""
    def sign(a, b):
        return 0 if abs(a - b) <= 1e-9 * max(abs(a), abs(b)) else np.sign(a - b)

    c = d = tx = tz = txz = 0
    keep = [i for i in range(len(x)) if np.isfinite(x[i]) and np.isfinite(z[i])]
    for i, j in itertools.combinations(keep, 2):
        if copies(i, j):
            continue
        sx, sz = sign(x[i], x[j]), sign(z[i], z[j])
        if sx == 0 and sz == 0:
            txz += 1
        elif sx == 0:
            tx += 1
        elif sz == 0:
            tz += 1
        elif sx == sz:
            c += 1
        else:
            d += 1
    if coefficient == "kendall-b":
        p = c + d + tx + tz + txz
        den = np.sqrt((p - tx - txz) * (p - tz - txz))
        return np.nan if den == 0 else (c - d) / den
    return (c + txz) / (c + d + tx + tz + txz)  # acc-eq


@pytest.mark.parametrize("coefficient", ["kendall-b", "acc-eq"])
@pytest.mark.parametrize("method", ["systems", "both"])
def test_bootstrap_copies_are_centred_separately_and_never_pair(coefficient, method):
    # each drawn copy of a system is its own group; two copies of one cell are not a pair of the data
    rng = np.random.default_rng(8)
    z = rng.integers(1, 5, size=(5, 6)).astype(float)
    x = np.clip(z + rng.integers(-1, 2, size=(5, 6)), 1, 4)
    x[rng.random(x.shape) < 0.1] = np.nan
    draws = bootstrap_draws(*x.shape, method=method, n_resamples=25, rng=2)
    got = bootstrap_samples(x, z, level="partial", coefficient=coefficient, draws=draws, engine="reference")
    expected = []
    for rows, cols in zip(draws.row_indices(), draws.col_indices()):
        rx, rz = system_residuals(x[rows][:, cols], z[rows][:, cols])
        cells = [(a, b) for a in range(len(rows)) for b in range(len(cols))]

        def copies(i, j):
            (a, b), (a2, b2) = cells[i], cells[j]
            return (a != a2 and rows[a] == rows[a2]) or (b != b2 and cols[b] == cols[b2])

        expected.append(_plain_pairs(rx.ravel(), rz.ravel(), copies, coefficient))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
