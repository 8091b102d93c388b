"""The public API: exports, validation messages, and labelled results against scipy."""
from __future__ import annotations

import json
import types
import warnings

import numpy as np
import pytest
from scipy import stats

import metaeval as me
from metaeval.errors import DegenerateWarning


# -- exports ------------------------------------------------------------------------------------

def test_all_is_sorted_and_complete():
    assert me.__all__ == sorted(me.__all__)
    public = {name for name in dir(me)
              if not name.startswith("_") and not isinstance(getattr(me, name), types.ModuleType)}
    assert public - {"__version__"} <= set(me.__all__)
    for name in me.__all__:
        assert hasattr(me, name), name


def test_the_public_api_is_declared_one_way():
    """Issue 38 item 6: one sorted literal table (name -> module) and the same names in ``__all__``; the analyses'
    registry and the judges no longer add names of their own, they are checked against it."""
    import ast
    import inspect

    from metaeval.analyses import registry

    assert list(me._EXPORTS) == sorted(me._EXPORTS)
    assert set(me.__all__) == set(me._EXPORTS) | {"__version__"}
    assert registry.exports().items() <= me._EXPORTS.items()
    tree = ast.parse(inspect.getsource(me))
    updates = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "update"]
    assert not updates  # no _EXPORTS.update(...) bolted on


@pytest.mark.parametrize("old, new", [("pairwise_comparisons", "n_pairwise_comparisons"), ("nugget_f", None)])
def test_renamed_names_warn_for_one_release(old, new):
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(me, old)
    assert str(caught[0].message).startswith(f"metaeval.{old} is deprecated and goes in metaeval 0.2; use ")
    if new is not None:
        assert value is getattr(me, new) and value(15) == 105
    assert old not in me.__all__


def test_delta_to_accuracy_says_what_it_returns():
    """Issue 38 item 6: the delta-to-accuracy curve (deltas) no longer named like delta_correlations'
    sibling; the old name warns for one release."""
    with pytest.warns(DeprecationWarning, match="use metaeval.delta_to_accuracy"):
        old = me.delta_accuracy
    assert old is me.delta_to_accuracy and "delta_accuracy" not in me.__all__
    assert me.delta_to_accuracy.__module__ == "metaeval.mt.delta"


def test_the_two_mqm_readers_say_what_they_read(shared_data):
    """Issue 38 item 6: read_mqm_averages (a file of per-segment averages: one score per cell) beside
    read_mqm_ratings (per-rater ratings); the old name read_wmt_mqm warns for one release."""
    path = shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv"
    with pytest.warns(DeprecationWarning, match="use metaeval.read_mqm_averages"):
        old = me.read_wmt_mqm
    assert old is me.read_mqm_averages and "read_wmt_mqm" not in me.__all__
    assert me.read_mqm_averages(path).n_annotators("mqm") == 1


# -- validation: every message pinned -----------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(level="document"), "`level` must be one of 'system', 'summary', 'global', 'by-system', 'partial'; got 'document'."),
    (dict(coefficient="cosine"), "`coefficient` must be one of 'pearson', 'spearman', 'kendall-a', 'kendall-b',"
                                 " 'kendall-c', 'accuracy', 'tau-eq', 'acc-eq', 'pdp'; got 'cosine'."),
    (dict(undefined="nan"), "`undefined` must be one of 'skip', 'zero'; got 'nan'."),
    (dict(full_test_set="yes"), "`full_test_set` must be True or False; got 'yes'."),
    (dict(level="summary", full_test_set=True),
     "`full_test_set` must be False unless `level` is 'system'; got level 'summary'."),
    (dict(tie_threshold=-1), "`tie_threshold` must be a finite number >= 0; got -1."),
])
def test_correlate_validation(tiny_scoreset, kwargs, message):
    with pytest.raises(me.ParameterError) as info:
        me.correlate(tiny_scoreset, "a", "human", **kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize("kwargs,message", [
    (dict(method="rows"), "`method` must be one of 'systems', 'inputs', 'both'; got 'rows'."),
    (dict(n_resamples=0), "`n_resamples` must be an integer >= 1; got 0."),
    (dict(n_resamples=2.5), "`n_resamples` must be an integer >= 1; got 2.5."),
    (dict(confidence_level=95), "`confidence_level` must be a number in (0, 1); got 95."),
    (dict(interval="normal"), "`interval` must be one of 'percentile', 'bca'; got 'normal'."),
    (dict(rng="seed"), "`rng` must be None, a non-negative integer seed or a numpy.random.Generator; got 'seed'."),
    (dict(rng=-3), "`rng` must be None, a non-negative integer seed or a numpy.random.Generator; got -3."),
])
def test_bootstrap_ci_validation(tiny_scoreset, kwargs, message):
    with pytest.raises(me.ParameterError) as info:
        me.bootstrap_ci(tiny_scoreset, "a", "human", **kwargs)
    assert str(info.value) == message


def test_unknown_scorer_message(tiny_scoreset):
    with pytest.raises(me.ScoreSetError) as info:
        me.correlate(tiny_scoreset, "rouge", "human")
    assert str(info.value) == "`metric` must name a scorer of this ScoreSet ('a', 'b', 'human'); got 'rouge'."


def test_too_few_systems_message():
    ds = me.ScoreSet.from_matrices({"m": np.ones((2, 3)), "h": np.ones((2, 3))})
    with pytest.raises(me.ScoreSetError) as info:
        me.correlate(ds, "m", "h", level="summary")
    assert str(info.value) == "a summary-level correlation needs at least 3 systems; got 2."


def test_permutation_alternative_message(tiny_scoreset):
    with pytest.raises(me.ParameterError) as info:
        me.permutation_test(tiny_scoreset, "a", "b", "human", alternative="bigger")
    assert str(info.value) == "`alternative` must be one of 'two-sided', 'greater', 'less'; got 'bigger'."


def test_williams_level_message(tiny_scoreset):
    with pytest.raises(me.ParameterError) as info:
        me.williams_test(tiny_scoreset, "a", "b", "human", level="summary")
    assert str(info.value) == "`level` must be one of 'system', 'global', 'partial' for Williams' test; got 'summary'."


def test_compare_metrics_messages(tiny_scoreset):
    with pytest.raises(me.ParameterError) as info:
        me.compare_metrics(tiny_scoreset, ["a"], "human")
    assert str(info.value) == "`metrics` must name at least 2 scorers; got ['a']."
    with pytest.raises(me.ParameterError) as info:  # a single string is one metric, never its letters
        me.compare_metrics(tiny_scoreset, "a", "human")
    assert str(info.value) == "`metrics` must name at least 2 scorers; got ['a']."
    with pytest.raises(me.ParameterError) as info:
        me.compare_metrics(tiny_scoreset, ["a", "b"], "human", correction="fdr")
    assert str(info.value) == ("`correction` must be one of 'none', 'bonferroni', 'sidak', 'holm', 'holm-sidak', 'benjamini-hochberg';"
                               " got 'fdr'.")
    with pytest.raises(me.ParameterError) as info:
        me.compare_metrics(tiny_scoreset, ["a", "b"], "human", test="williams", coefficient="kendall")
    assert str(info.value) == (
        "`test` must be 'permutation' or 'bootstrap' unless coefficient is 'pearson' and level is 'system',"
        " 'global' or 'partial'; got test 'williams' with 'kendall-b' at level 'system'.")


# -- values against scipy -----------------------------------------------------------------------

@pytest.mark.parametrize("coefficient,oracle", [
    ("pearson", lambda x, y: stats.pearsonr(x, y)[0]),
    ("spearman", lambda x, y: stats.spearmanr(x, y)[0]),
    ("kendall", lambda x, y: stats.kendalltau(x, y, variant="b")[0]),
    ("kendall-c", lambda x, y: stats.kendalltau(x, y, variant="c")[0]),
])
def test_levels_equal_scipy(tiny_scoreset, coefficient, oracle):
    x, z = tiny_scoreset.matrix("a"), tiny_scoreset.matrix("human")
    system = me.correlate(tiny_scoreset, "a", "human", level="system", coefficient=coefficient)
    assert system.statistic == pytest.approx(oracle(x.mean(1), z.mean(1)), abs=1e-12)
    summary = me.correlate(tiny_scoreset, "a", "human", level="summary", coefficient=coefficient)
    expected = np.mean([oracle(x[:, j], z[:, j]) for j in range(x.shape[1])])
    assert summary.statistic == pytest.approx(expected, abs=1e-12)
    assert (summary.n_used, summary.n_skipped) == (6, 0)
    glob = me.correlate(tiny_scoreset, "a", "human", level="global", coefficient=coefficient)
    assert glob.statistic == pytest.approx(oracle(x.ravel(), z.ravel()), abs=1e-12)
    by_system = me.correlate(tiny_scoreset, "a", "human", level="by-system", coefficient=coefficient)
    assert by_system.statistic == pytest.approx(np.mean([oracle(x[i], z[i]) for i in range(12)]), abs=1e-12)


def test_summary_level_skips_and_counts_constant_inputs():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(6, 5))
    x = z + rng.normal(size=(6, 5))
    z[:, 2] = 3.0  # humans gave every system the same score on input 2
    ds = me.ScoreSet.from_matrices({"m": x, "h": z})
    r = me.correlate(ds, "m", "h", level="summary", coefficient="pearson")
    expected = np.mean([stats.pearsonr(x[:, j], z[:, j])[0] for j in (0, 1, 3, 4)])
    assert r.statistic == pytest.approx(expected)
    assert (r.n_used, r.n_skipped) == (4, 1)
    zero = me.correlate(ds, "m", "h", level="summary", coefficient="pearson", undefined="zero")
    assert zero.statistic == pytest.approx(expected * 4 / 5)


def test_all_undefined_warns_and_is_nan():
    ds = me.ScoreSet.from_matrices({"m": np.ones((4, 3)), "h": np.arange(12.0).reshape(4, 3)})
    with pytest.warns(DegenerateWarning):
        r = me.correlate(ds, "m", "h", level="summary")
    assert np.isnan(r.statistic) and r.n_skipped == 3


def test_full_test_set_mode_averages_each_scorer_over_its_own_inputs():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(6, 10))
    z = x[:, :4] + rng.normal(size=(6, 4))
    z_full = np.full((6, 10), np.nan)
    z_full[:, :4] = z
    ds = me.ScoreSet.from_matrices({"m": x, "h": z_full}, humans=["h"])
    judged = me.correlate(ds, "m", "h", level="system", coefficient="pearson")
    full = me.correlate(ds, "m", "h", level="system", coefficient="pearson", full_test_set=True)
    assert judged.statistic == pytest.approx(stats.pearsonr(x[:, :4].mean(1), z.mean(1))[0])
    assert full.statistic == pytest.approx(stats.pearsonr(x.mean(1), z.mean(1))[0])
    assert "full_test_set:yes" in str(full.signature) and "full_test_set:no" in str(judged.signature)


# -- intervals and tests ------------------------------------------------------------------------

def test_bootstrap_ci_is_seeded_and_signed(tiny_scoreset):
    a = me.bootstrap_ci(tiny_scoreset, "a", "human", level="system", coefficient="pearson", n_resamples=300, rng=7)
    b = me.bootstrap_ci(tiny_scoreset, "a", "human", level="system", coefficient="pearson", n_resamples=300, rng=7)
    c = me.bootstrap_ci(tiny_scoreset, "a", "human", level="system", coefficient="pearson", n_resamples=300, rng=8)
    assert a.ci == b.ci and a.ci != c.ci
    assert a.ci[0] <= a.statistic <= a.ci[1]
    sig = str(a.signature)
    for part in ("dataset:tiny", "level:system", "coefficient:pearson", "ci:boot-both", "resamples:300",
                 "seed:7", "aggregation:mean", "version:"):
        assert part in sig
    json.dumps(a.to_dict())
    assert list(a.to_frame().columns)[:4] == ["metric", "human", "level", "coefficient"]


def test_fisher_ci_formula(tiny_scoreset):
    r = me.fisher_ci(tiny_scoreset, "a", "human", level="system", coefficient="pearson")
    half = stats.norm.ppf(0.975) / np.sqrt(12 - 3)
    expected = np.tanh(np.arctanh(r.statistic) + np.array([-half, half]))
    assert r.ci == pytest.approx(tuple(expected))


def test_identical_metrics_give_p_one_with_one_warning(tiny_scoreset):
    # Issue 10, item 2: Williams' test gave a silent NaN for identical metrics; now p = 1 and the warning of
    # the resampling tests.
    ds = me.ScoreSet.from_matrices({"a": tiny_scoreset.matrix("a"), "a2": tiny_scoreset.matrix("a"),
                                    "h": tiny_scoreset.matrix("human")})
    message = ("`metric_a` and `metric_b` are identical on the 72 cells where both and the human are present;"
               " there is no difference to test, so the p-value is 1.")
    for level in ("system", "summary"):
        for coefficient in ("pearson", "kendall"):
            with pytest.warns(DegenerateWarning) as caught:
                t = me.permutation_test(ds, "a", "a2", "h", level=level, coefficient=coefficient,
                                        n_resamples=200, rng=0)
            assert t.statistic == 0 and t.pvalue == 1.0
            assert [str(w.message) for w in caught] == [message]
    with pytest.warns(DegenerateWarning) as caught:
        b = me.bootstrap_test(ds, "a", "a2", "h", n_resamples=200, rng=0)
    assert b.pvalue == 1.0 and [str(w.message) for w in caught] == [message]
    for level in ("system", "global"):
        for alternative in ("greater", "less", "two-sided"):
            with pytest.warns(DegenerateWarning) as caught:
                w = me.williams_test(ds, "a", "a2", "h", level=level, alternative=alternative)
            assert w.statistic == 0 and w.pvalue == 1.0 and [str(x.message) for x in caught] == [message]


def _missing_cells_scoreset():
    """Global-level data like FRANK's: each metric misses its own cells (a few hundred of 2400)."""
    rng = np.random.default_rng(7)
    z = rng.normal(size=(24, 100))
    a = z + rng.normal(scale=1.6, size=z.shape)
    b = z + rng.normal(scale=2.0, size=z.shape) + 0.3 * (a - z)
    a[rng.random(z.shape) < 0.04] = np.nan
    b[rng.random(z.shape) < 0.08] = np.nan
    z[rng.random(z.shape) < 0.02] = np.nan
    return me.ScoreSet.from_matrices({"a": a, "b": b, "h": z}, humans=["h"]), a, b, z


def test_regression_williams_with_missing_cells_does_not_depend_on_the_argument_order():
    # Issue 10, item 2: r(a, h), r(b, h) and r(a, b) each used their own cells and n came from metric a,
    # so williams(a, b) and williams(b, a) disagreed (FRANK: p = 0.0185 with n = 2246, 0.0208 with n = 2163).
    ds, a, b, z = _missing_cells_scoreset()
    common = np.isfinite(a) & np.isfinite(b) & np.isfinite(z)
    for level, n in (("global", int(common.sum())), ("system", 24)):
        ab = me.williams_test(ds, "a", "b", "h", level=level, alternative="greater")
        ba = me.williams_test(ds, "b", "a", "h", level=level, alternative="less")
        assert ab.n_used == ba.n_used == n
        assert ab.statistic == -ba.statistic and ab.pvalue == ba.pvalue
        assert dict(ab.signature.fields)["n"] == n
        two = [me.williams_test(ds, *pair, "h", level=level, alternative="two-sided").pvalue
               for pair in (("a", "b"), ("b", "a"))]
        assert two[0] == two[1]
    ab = me.williams_test(ds, "a", "b", "h", level="global")
    assert ab.n_dropped_a == int((np.isfinite(a) & np.isfinite(z) & ~np.isfinite(b)).sum()) > 0
    assert ab.n_dropped_b == int((np.isfinite(b) & np.isfinite(z) & ~np.isfinite(a)).sum()) > 0
    x, y, h = (np.where(common, m, np.nan) for m in (a, b, z))
    r = stats.pearsonr(x[common], h[common])[0]
    assert ab.statistic_a == pytest.approx(r, abs=1e-12)


def test_regression_resampling_tests_use_the_cells_common_to_both_metrics():
    # Issue 10, item 2: each metric's correlation used its own cells, so a metric with more missing cells
    # was judged on different items; now both use the cells where a, b and the human are all present.
    ds, a, b, z = _missing_cells_scoreset()
    common = np.isfinite(a) & np.isfinite(b) & np.isfinite(z)
    masked = me.ScoreSet.from_matrices({m: np.where(common, v, np.nan) for m, v in (("a", a), ("b", b), ("h", z))},
                                       humans=["h"])
    for test in (me.permutation_test, me.bootstrap_test):
        for level in ("global", "summary"):
            kw = dict(level=level, coefficient="pearson", n_resamples=100, rng=3)
            ours, reference = test(ds, "a", "b", "h", **kw), test(masked, "a", "b", "h", **kw)
            assert ours.statistic_a == reference.statistic_a and ours.pvalue == reference.pvalue
            assert ours.statistic_a == me.correlate(masked, "a", "h", level=level, coefficient="pearson").statistic
            assert ours.n_dropped_a > 0 and ours.n_dropped_b > 0 and reference.n_dropped_a == 0
        mirrored = test(ds, "b", "a", "h", level="global", coefficient="pearson", n_resamples=100, rng=3)
        assert mirrored.statistic == -test(ds, "a", "b", "h", level="global", coefficient="pearson",
                                           n_resamples=100, rng=3).statistic
    global_test = me.permutation_test(ds, "a", "b", "h", level="global", coefficient="pearson", n_resamples=10)
    assert global_test.n_used == int(common.sum())


def test_compare_metrics_pairs_use_their_own_common_cells():
    ds, a, b, z = _missing_cells_scoreset()
    c = np.where(np.isfinite(z), z, 0) + np.random.default_rng(1).normal(size=z.shape)
    ds3 = me.ScoreSet.from_matrices({"a": a, "b": b, "c": c, "h": z}, humans=["h"])
    for test, level in (("permutation", "global"), ("bootstrap", "global"), ("williams", "global"),
                        ("williams", "system")):
        kw = dict(level=level, coefficient="pearson", n_resamples=100, rng=3)
        if test == "williams":
            kw = dict(level=level, coefficient="pearson")
        m = me.compare_metrics(ds3, ["a", "b", "c"], "h", test=test, correction="none", **kw)
        single = getattr(me, f"{test}_test")(ds3, "a", "b", "h", **{k: v for k, v in kw.items()
                                                                   if k != "coefficient" or test != "williams"})
        assert m.pvalues[0, 1] == pytest.approx(single.pvalue, abs=1e-12)
        assert m.deltas[0, 1] == pytest.approx(single.statistic, abs=1e-12)
        np.testing.assert_allclose(m.deltas, -m.deltas.T, atol=1e-12)


def test_better_metric_wins_permutation_and_bootstrap_tests():
    rng = np.random.default_rng(11)
    z = rng.normal(size=(20, 30)) + rng.normal(size=(20, 1))
    good = z + rng.normal(scale=0.3, size=z.shape)
    bad = z + rng.normal(scale=3.0, size=z.shape)
    ds = me.ScoreSet.from_matrices({"good": good, "bad": bad, "h": z}, humans=["h"])
    for test in (me.permutation_test, me.bootstrap_test):
        result = test(ds, "good", "bad", "h", level="summary", coefficient="kendall", n_resamples=500, rng=1)
        assert result.statistic > 0 and result.pvalue < 0.01
        reverse = test(ds, "bad", "good", "h", level="summary", coefficient="kendall", n_resamples=500, rng=1)
        assert reverse.pvalue > 0.5
    w = me.williams_test(ds, "good", "bad", "h", level="global")
    assert w.pvalue < 0.01


def test_williams_uses_signed_correlations():
    rng = np.random.default_rng(2)
    z = rng.normal(size=(30, 1))
    positive = z + rng.normal(scale=0.8, size=z.shape)
    negative = -z + rng.normal(scale=0.1, size=z.shape)
    ds = me.ScoreSet.from_matrices({"pos": positive, "neg": negative, "h": z})
    result = me.williams_test(ds, "neg", "pos", "h", level="system", alternative="greater")
    assert result.statistic_a < 0 < result.statistic_b
    assert result.pvalue > 0.5


def test_compare_metrics_matrix(tiny_scoreset):
    rng = np.random.default_rng(4)
    z = rng.normal(size=(12, 20)) + rng.normal(size=(12, 1))
    scores = {f"m{k}": z + rng.normal(scale=s, size=z.shape) for k, s in enumerate((0.2, 0.5, 3.0, 6.0))}
    ds = me.ScoreSet.from_matrices(dict(scores, h=z), humans=["h"])
    result = me.compare_metrics(ds, None, "h", level="summary", coefficient="pearson", n_resamples=300, rng=0)
    assert result.metrics == ("m0", "m1", "m2", "m3")
    assert np.all(np.isnan(np.diag(result.pvalues)))
    np.testing.assert_allclose(result.deltas, -result.deltas.T, atol=1e-12)
    assert result.ranks[0] == 1 and result.ranks[-1] > 1
    assert np.all(result.adjusted_pvalues[~np.isnan(result.pvalues)] >= result.pvalues[~np.isnan(result.pvalues)])
    rows = me.compare_metrics(ds, None, "h", level="summary", coefficient="pearson", n_resamples=300, rng=0,
                              family="row")
    np.testing.assert_array_equal(rows.pvalues, result.pvalues)
    assert len(result.to_frame()) == 12
    json.dumps(result.to_dict())


def test_correlation_table_cells(tiny_scoreset):
    table = me.correlation_table(tiny_scoreset, "human", n_resamples=100)
    assert len(table.results) == 2 * 2 * 3
    cell = table.get("b", "summary", "spearman")
    assert cell.interval_method == "boot-both"
    assert cell.statistic == pytest.approx(
        me.correlate(tiny_scoreset, "b", "human", level="summary", coefficient="spearman").statistic)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        json.dumps(table.to_dict())


def test_every_registered_analysis_is_exported_with_its_command():
    import importlib

    from metaeval.analyses import registry

    for entry in registry.ANALYSES:
        module = importlib.import_module(entry.module)
        for name in entry.api:
            assert name in me.__all__ and getattr(me, name) is getattr(module, name)
        command_module, attribute = entry.command.split(":")
        assert importlib.import_module(f"metaeval.cli.{command_module}").__dict__[attribute].name == attribute


def test_a_single_metric_name_is_one_metric_everywhere(tiny_scoreset):
    table = me.correlation_table(tiny_scoreset, "human", "a", levels=["system"], coefficients=["pearson"], ci="none")
    assert table.metrics == ("a",)
    verdicts = me.system_verdicts(tiny_scoreset, "a", "human", n_resamples=20, rng=0)
    assert verdicts.metrics == ("a",)


def test_the_readme_promises_about_result_fields():
    import dataclasses

    results = [getattr(me, n) for n in me.__all__ if n.endswith("Result") or n in ("CorrelationTable",)]
    for cls in results:
        names = {f.name for f in dataclasses.fields(cls)}
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls
        assert "signature" in names and hasattr(cls, "to_frame") and hasattr(cls, "to_dict"), cls
    for cls in (me.CorrelationResult, me.ComparisonResult, me.SystemComparisonResult):
        names = {f.name for f in dataclasses.fields(cls)} | {n for n in dir(cls) if not n.startswith("_")}
        assert {"statistic", "ci", "pvalue", "n_used", "n_skipped"} <= names, cls
