"""Pairwise Difference Pearson (DiIanni & Deutsch 2025; mt-metrics-eval ``Pearson(pdp=True)``) against an oracle
written from its definition: within each group every ordered pair of positions gives (x_a - x_b, z_a - z_b), and
PDP is scipy's Pearson of all these differences pooled over the groups (mt-metrics-eval enumerates the ordered
pairs, diagonal included, and flattens them before one Pearson)."""
import json

import numpy as np
import pytest
import scipy.stats

import metaeval as me
from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.resampling.bootstrap import bootstrap_samples
from metaeval.stats.resampling.draws import bootstrap_draws
from metaeval.stats.significance.permutation import permutation_test as permutation


def _oracle(x, z, groups_axis):
    """PDP of (N, M) matrices: groups are the columns (item level, axis 1) or the rows (by system, axis 0)."""
    xg, zg = (x.T, z.T) if groups_axis == 1 else (x, z)
    dx, dz = [], []
    for xr, zr in zip(xg, zg):
        ok = np.isfinite(xr) & np.isfinite(zr)
        xr, zr = xr[ok], zr[ok]
        dx.append((xr[None, :] - xr[:, None]).ravel())
        dz.append((zr[None, :] - zr[:, None]).ravel())
    return scipy.stats.pearsonr(np.concatenate(dx), np.concatenate(dz))[0]


def _data(seed=0, n=7, m=25, holes=True):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    x = np.round(2 * (q + rng.normal(size=q.shape))) / 2  # ties and constant groups happen
    z = q.copy()
    if holes:
        z[rng.random(z.shape) < 0.1] = np.nan
    return x, z


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pdp_equals_its_definition_at_every_level(seed):
    x, z = _data(seed)
    assert level_correlation(x, z, level="summary", coefficient="pdp").statistic == pytest.approx(_oracle(x, z, 1),
                                                                                                  abs=1e-12)
    assert level_correlation(x, z, level="by-system", coefficient="pdp").statistic == pytest.approx(
        _oracle(x, z, 0), abs=1e-12)
    # one vector: the pairs of all cells (global) or of the system means: Pearson's r
    ok = np.isfinite(z).all(axis=0)
    xs, zs = x[:, ok], z[:, ok]
    assert level_correlation(xs, zs, level="system", coefficient="pdp").statistic == pytest.approx(
        _oracle(xs.mean(1)[:, None], zs.mean(1)[:, None], 1), abs=1e-12)
    keep = np.isfinite(z)
    d = _oracle(x[keep][None], z[keep][None], 0)
    assert level_correlation(x, z, level="global", coefficient="pdp").statistic == pytest.approx(d, abs=1e-12)
    assert d == pytest.approx(scipy.stats.pearsonr(x[keep], z[keep])[0], abs=1e-12)


def test_pdp_bootstrap_and_permutation_equal_the_reference_path():
    x, z = _data(3, holes=False)
    draws = bootstrap_draws(*x.shape, method="both", n_resamples=30, rng=0)
    auto = bootstrap_samples(x, z, level="summary", coefficient="pdp", draws=draws)
    rows, cols = draws.row_indices(), draws.col_indices()
    loop = [_oracle(x[np.ix_(r, c)], z[np.ix_(r, c)], 1) for r, c in zip(rows, cols)]
    np.testing.assert_allclose(auto, loop, atol=1e-12)
    y = x + np.random.default_rng(1).normal(size=x.shape)
    test = permutation(x, y, z, level="summary", coefficient="pdp", n_resamples=200, rng=0)
    ref = permutation(x, y, z, level="summary", coefficient="pdp", n_resamples=200, rng=0, engine="reference")
    assert test.pvalue == ref.pvalue


def test_pdp_in_correlate_compare_and_mt(tmp_path, capsys):
    from metaeval.cli.main import main

    x, z = _data(4, holes=False)
    y = z + np.random.default_rng(2).normal(scale=2, size=z.shape)
    ds = me.ScoreSet.from_matrices({"human": z, "a": x, "b": y}, humans=["human"], name="d")
    path = tmp_path / "d.csv"
    me.write_scores(ds, path)
    assert main(["correlate", "--scores", str(path), "--level", "summary", "--coefficient", "pdp", "--ci", "none",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    values = {r["metric"]: r["statistic"] for r in out["results"]}
    assert values["a"] == pytest.approx(_oracle(x, z, 1), abs=1e-12)
    assert values["b"] == pytest.approx(_oracle(y, z, 1), abs=1e-12)
    assert main(["compare", "--scores", str(path), "--level", "summary", "--coefficient", "pdp", "--n-resamples",
                 "100"]) == 0
    assert "coefficient:pdp" in capsys.readouterr().out
    res = me.mt_evaluate({"d": ds}, tasks=["summary/pdp", "system/pdp", "global/pdp"], n_resamples=50, rng=0)
    i = res.metrics.index("a")
    assert res.statistics[res.tasks.index("d:summary/pdp"), i] == pytest.approx(_oracle(x, z, 1), abs=1e-12)
    assert res.statistics[res.tasks.index("d:system/pdp"), i] == pytest.approx(
        scipy.stats.pearsonr(x.mean(1), z.mean(1))[0], abs=1e-12)
    assert np.isfinite(res.task_pvalues["d:summary/pdp"][~np.eye(2, dtype=bool)]).all()
    boot = me.mt_evaluate({"d": ds}, tasks=["summary/pdp"], n_resamples=50, rng=0, significance="bootstrap")
    assert boot.statistics[0, i] == pytest.approx(_oracle(x, z, 1), abs=1e-12)


@pytest.mark.parametrize("level, axis", [("summary", 1), ("by-system", 0)])
def test_pdp_of_a_metric_constant_within_every_group_is_undefined(level, axis):
    """Regression (issue 41 item 6): each group was centred on its rounded mean (0.1 three times has mean
    0.10000000000000002) before the spread test, so a metric constant within every group got PDP +-1e-16 and
    `mt audit` ranked such a sentinel; the oracle's differences are all exactly 0 (no spread: undefined)."""
    rng = np.random.default_rng(0)
    values = rng.random(50)  # 50 groups of 7: several means round away from the value
    x = np.repeat(values[:, None], 7, axis=1) if axis == 0 else np.repeat(values[None, :], 7, axis=0)
    z = rng.normal(size=x.shape)
    xg = x if axis == 0 else x.T
    assert not np.concatenate([(g[None, :] - g[:, None]).ravel() for g in xg]).any()  # no difference at all
    assert (np.array([g.sum() / g.size for g in xg]) != values).any()  # the rounded means of the old centring
    assert np.isnan(level_correlation(x, z, level=level, coefficient="pdp").statistic)
    assert np.isnan(level_correlation(z, x, level=level, coefficient="pdp").statistic)  # the human side too
    # groups with a spread still count, the constant ones add no pair: the same as the oracle
    x2 = x.copy()
    if axis == 0:
        x2[0] = rng.normal(size=x.shape[1])
    else:
        x2[:, 0] = rng.normal(size=x.shape[0])
    assert level_correlation(x2, z, level=level, coefficient="pdp").statistic == pytest.approx(
        _oracle(x2, z, axis), abs=1e-12)
