"""The p-value of a single correlation: scipy's analytic one, and the permutation one."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.stats.correlations.levels import system_residuals
from metaeval.stats.significance.pvalues import analytic_pvalue, permutation_pvalue


def data(seed=0, n=8, m=30, missing=0.1):
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, m)) + rng.normal(size=(n, 1))
    x = 0.3 * z + rng.normal(size=(n, m))
    x[rng.random((n, m)) < missing] = np.nan
    return x, z


@pytest.mark.parametrize("coefficient, oracle", [("pearson", stats.pearsonr), ("spearman", stats.spearmanr),
                                                 ("kendall-b", stats.kendalltau)])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_analytic_pvalue_is_scipys_on_the_vectors_of_the_level(coefficient, oracle, alternative):
    x, z = data()
    valid = np.isfinite(x) & np.isfinite(z)
    used = valid.all(axis=0)  # system level, judged subset: inputs complete for every system
    vectors = {
        "system": (x[:, used].mean(axis=1), z[:, used].mean(axis=1)),
        "global": (x[valid], z[valid]),
        "partial": tuple(r[valid] for r in system_residuals(x, z)),
    }
    for level, (u, v) in vectors.items():
        got = analytic_pvalue(x, z, level=level, coefficient=coefficient, alternative=alternative)
        assert got == pytest.approx(oracle(u, v, alternative=alternative).pvalue, rel=1e-12), level


def test_analytic_pvalue_is_nan_where_scipy_has_none():
    x, z = data()
    assert np.isnan(analytic_pvalue(x, z, level="summary", coefficient="pearson"))
    assert np.isnan(analytic_pvalue(x, z, level="by-system", coefficient="kendall-b"))
    assert np.isnan(analytic_pvalue(x, z, level="system", coefficient="accuracy"))
    assert np.isnan(analytic_pvalue(np.ones((4, 3)), z[:4, :3], level="system", coefficient="pearson"))


@pytest.mark.parametrize("level", ["system", "summary", "global", "by-system", "partial"])
def test_permutation_pvalue_does_not_depend_on_the_batch_and_keeps_each_group(level):
    x, z = data(1)
    runs = [permutation_pvalue(x, z, level=level, coefficient="kendall-b", n_resamples=60,
                               rng=np.random.default_rng(3), batch=b) for b in (7, 60)]
    np.testing.assert_array_equal(runs[0].null_distribution, runs[1].null_distribution)
    assert runs[0].pvalue == runs[1].pvalue
    assert 1 / 61 <= runs[0].pvalue <= 1


def test_permutation_pvalue_shuffles_within_systems_for_partial_and_by_system():
    from metaeval.stats.significance.pvalues import _shuffle_within_rows

    x, z = data(2)
    valid = np.isfinite(x) & np.isfinite(z)
    out = _shuffle_within_rows(x, valid, np.random.default_rng(0), 5)
    for s in out:
        for i in range(x.shape[0]):  # the same multiset of values per system, missing cells unmoved
            np.testing.assert_array_equal(np.sort(s[i][valid[i]]), np.sort(x[i][valid[i]]))
            np.testing.assert_array_equal(s[i][~valid[i]], x[i][~valid[i]])


def test_permutation_and_analytic_pvalues_agree_on_a_clear_and_a_null_case():
    rng = np.random.default_rng(4)
    z = rng.normal(size=(10, 40))
    strong, null = z + 0.5 * rng.normal(size=z.shape), rng.normal(size=z.shape)
    for x, small in ((strong, True), (null, False)):
        perm = permutation_pvalue(x, z, level="global", coefficient="pearson", n_resamples=400,
                                  rng=np.random.default_rng(0))
        analytic = analytic_pvalue(x, z, level="global", coefficient="pearson")
        assert (perm.pvalue < 0.01) == small and (analytic < 0.01) == small
        if not small:
            assert abs(perm.pvalue - analytic) < 0.1


def test_correlate_reports_the_pvalue_and_records_it_in_the_signature():
    x, z = data(5)
    ds = me.ScoreSet.from_matrices({"m": x, "h": z}, humans=["h"])
    r = me.correlate(ds, "m", "h", level="global", coefficient="pearson")
    valid = np.isfinite(x) & np.isfinite(z)
    assert r.pvalue == pytest.approx(stats.pearsonr(x[valid], z[valid]).pvalue, rel=1e-12)
    assert "pvalue:analytic|alternative:two-sided" in str(r.signature)
    p = me.correlate(ds, "m", "h", level="summary", pvalue_method="permutation", n_resamples=50, rng=1)
    assert 0 < p.pvalue <= 1 and "pvalue:permutation" in str(p.signature) and "seed:1" in str(p.signature)
    assert me.correlate(ds, "m", "h", pvalue_method="none").pvalue is None
    boot = me.bootstrap_ci(ds, "m", "h", level="system", method="inputs", n_resamples=50, rng=0)
    assert boot.pvalue == me.correlate(ds, "m", "h", level="system").pvalue
    fisher = me.fisher_ci(ds, "m", "h", level="partial", coefficient="pearson")
    assert fisher.pvalue == me.correlate(ds, "m", "h", level="partial", coefficient="pearson").pvalue
    table = me.correlation_table(ds, "h", levels=["system", "summary"], coefficients=["pearson"], ci="none")
    assert table.get("m", "system", "pearson").pvalue == me.correlate(ds, "m", "h", level="system",
                                                                      coefficient="pearson").pvalue
    assert np.isnan(table.get("m", "summary", "pearson").pvalue)


def test_pvalue_messages():
    x, z = data(5)
    ds = me.ScoreSet.from_matrices({"m": x, "h": z}, humans=["h"])
    with pytest.raises(me.ParameterError) as info:
        me.correlate(ds, "m", "h", pvalue_method="exact")
    assert str(info.value) == ("`pvalue_method` must be one of 'analytic', 'permutation', 'none'; got 'exact'.")
    with pytest.raises(me.ParameterError) as info:
        me.correlation_table(ds, "h", alternative="bigger", ci="none")
    assert str(info.value) == "`alternative` must be one of 'two-sided', 'greater', 'less'; got 'bigger'."
