"""Sidak and Holm-Sidak corrections, the family-wise error calculator (Riezler & Maxwell 2005, section 4.4)
and the `metaeval familywise` command."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import metaeval as me
from metaeval.cli.main import cli, main
from metaeval.errors import ParameterError
from metaeval.stats.significance.corrections import adjust_pvalues, significance_floor
from metaeval.stats.significance.familywise import familywise_error, n_pairwise_comparisons, per_comparison_level

P4 = [0.01, 0.04, 0.03, 0.005]

# -- validation: every message pinned ---------------------------------------------------------------------


@pytest.mark.parametrize("call,message", [
    (lambda: familywise_error(1.5, 3), "`per_comparison` must be a number in [0, 1]; got 1.5."),
    (lambda: familywise_error(None, 3), "`per_comparison` must be a number in [0, 1]; got None."),
    (lambda: familywise_error(True, 3), "`per_comparison` must be a number in [0, 1]; got True."),
    (lambda: familywise_error([0.1, -2], 3), "`per_comparison` must be a number in [0, 1]; got -2.0."),
    (lambda: familywise_error(0.05, 0), "`comparisons` must be an integer >= 1; got 0."),
    (lambda: familywise_error(0.05, 2.5), "`comparisons` must be an integer >= 1; got 2.5."),
    (lambda: familywise_error(0.05, [3, 0]), "`comparisons` must be an integer >= 1; got [3, 0]."),
    (lambda: per_comparison_level(0.0, 3), "`alpha` must be a number in (0, 1); got 0.0."),
    (lambda: per_comparison_level(1, 3), "`alpha` must be a number in (0, 1); got 1."),
    (lambda: per_comparison_level(0.05, 3, method="holm"),
     "`method` must be one of 'sidak', 'bonferroni'; got 'holm'."),
    (lambda: n_pairwise_comparisons(1), "`n_systems` must be an integer >= 2; got 1."),
])
def test_messages(call, message):
    with pytest.raises(ParameterError) as info:
        call()
    assert str(info.value) == message


# -- the paper's worked numbers ----------------------------------------------------------------------------


def test_riezler_maxwell_worked_numbers():
    # "in benchmark testing of 15 systems, 15(15-1)/2 = 105 pairwise comparisons ... p_e = .9954"
    assert n_pairwise_comparisons(15) == 105
    assert round(familywise_error(0.05, 105), 4) == 0.9954
    # "a per-comparison error rate p_c = .015 was sufficient to achieve an experimentwise error rate p_e ~ .07"
    assert round(familywise_error(0.015, 5), 2) == 0.07
    # Table 2 (NIST, 5 comparisons of equivalent systems): at the restrictive level .015 the bootstrap is
    # significant in 3 of 5 comparisons, approximate randomization in none
    bootstrap = np.array([0.014, 0.013, 0.028, 0.039, 0.013])
    approxrand = np.array([0.03, 0.025, 0.05, 0.079, 0.028])
    assert (bootstrap <= 0.015).sum() == 3 and (approxrand <= 0.015).sum() == 0
    # the Sidak level for a family-wise .05 over 5 comparisons is .0102: nothing of Table 2 survives it, and
    # the Sidak-adjusted p-values say the same
    level = per_comparison_level(0.05, 5)
    assert round(level, 4) == 0.0102
    assert (bootstrap <= level).sum() == 0
    assert (adjust_pvalues(bootstrap, method="sidak") > 0.05).all()


def test_calculator_identities():
    k = np.arange(1, 200)
    for alpha in (0.01, 0.05, 0.1):
        np.testing.assert_allclose(familywise_error(per_comparison_level(alpha, k), k), alpha, rtol=1e-12)
        sidak, bonferroni = per_comparison_level(alpha, k), per_comparison_level(alpha, k, method="bonferroni")
        assert np.all(sidak >= bonferroni)  # Sidak is never stricter than Bonferroni
        assert sidak[0] == pytest.approx(alpha) and bonferroni[0] == pytest.approx(alpha)
    assert familywise_error(0.0, 7) == 0.0 and familywise_error(1.0, 7) == 1.0 and familywise_error(0.2, 1) == 0.2
    assert familywise_error(1e-12, 10) == pytest.approx(1e-11, rel=1e-9)  # no cancellation for tiny p_c
    np.testing.assert_allclose(familywise_error([0.01, 0.05], [1, 2]), [0.01, 1 - 0.95 ** 2])
    assert isinstance(familywise_error(0.05, 3), float) and isinstance(per_comparison_level(0.05, 3), float)


# -- the corrections --------------------------------------------------------------------------------------


@pytest.mark.parametrize("p, method, expected", [
    # by hand: 1 - (1 - p)^4
    (P4, "sidak", [1 - 0.99 ** 4, 1 - 0.96 ** 4, 1 - 0.97 ** 4, 1 - 0.995 ** 4]),
    # step-down: sorted .005, .01, .03, .04 with exponents 4, 3, 2, 1, then a running max
    (P4, "holm-sidak", [1 - 0.99 ** 3, max(1 - 0.97 ** 2, 0.04), max(1 - 0.97 ** 2, 0.04), 1 - 0.995 ** 4]),
    ([0.01, 0.01, 0.5], "holm-sidak", [1 - 0.99 ** 3, 1 - 0.99 ** 3, 0.5]),  # ties share one value
    ([0.0, 1.0], "sidak", [0.0, 1.0]),
    ([0.0, 1.0], "holm-sidak", [0.0, 1.0]),
])
def test_hand_cases(p, method, expected):
    np.testing.assert_allclose(adjust_pvalues(p, method=method), expected, rtol=1e-12)


@pytest.mark.parametrize("m", [1, 2, 7, 50, 300])
def test_against_statsmodels(m):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(m)
    p = rng.uniform(size=m) ** 3
    p[: m // 5] = p[0]  # some ties
    for ours, theirs in (("sidak", "sidak"), ("holm-sidak", "holm-sidak")):
        expected = multitest.multipletests(p, method=theirs)[1]
        np.testing.assert_allclose(adjust_pvalues(p, method=ours), expected, rtol=1e-12, atol=1e-15)


def test_ordering_properties():
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = rng.uniform(size=int(rng.integers(1, 40))) ** 2
        none, bonf, sidak, holm, hs = (adjust_pvalues(p, method=m)
                                       for m in ("none", "bonferroni", "sidak", "holm", "holm-sidak"))
        assert np.all(none <= sidak) and np.all(sidak <= bonf)
        assert np.all(hs <= holm) and np.all(hs <= sidak) and np.all(none <= hs)
        m = p.size
        assert np.all(bonf - sidak <= (m - 1) * m * p ** 2 / 2 + 1e-15)  # the bound stated in the docstring


def test_nan_entries_ignored_and_input_kept():
    matrix = np.array([[np.nan, 0.01, 0.2], [0.03, np.nan, 0.04], [0.5, 0.001, np.nan]])
    before = matrix.copy()
    for method in ("sidak", "holm-sidak"):
        out = adjust_pvalues(matrix, method=method)
        off = ~np.eye(3, dtype=bool)
        np.testing.assert_allclose(out[off], adjust_pvalues(matrix[off], method=method))
        assert np.isnan(np.diag(out)).all()
    np.testing.assert_array_equal(matrix, before)


@pytest.mark.parametrize("k,m,alpha", [(1000, 33, 0.01), (1000, 1122, 0.05), (200, 33, 0.05), (19, 1, 0.05),
                                       (5000, 105, 0.05), (99, 3, 0.1)])
@pytest.mark.parametrize("correction", ["sidak", "holm-sidak"])
def test_significance_floor(k, m, alpha, correction):
    floor = significance_floor(n_resamples=k, family_size=m, correction=correction, alpha=alpha)
    # the floor is what adjust_pvalues gives when every p-value is the smallest Monte Carlo p-value
    assert floor.smallest == adjust_pvalues(np.full(m, 1 / (k + 1)), method=correction).min()
    assert floor.reachable == (floor.smallest < alpha) == (k >= floor.needed_resamples)
    needed = floor.needed_resamples  # the smallest such k
    assert significance_floor(n_resamples=needed, family_size=m, correction=correction, alpha=alpha).reachable
    if needed > 1:
        assert not significance_floor(n_resamples=needed - 1, family_size=m, correction=correction,
                                      alpha=alpha).reachable
    bonferroni = significance_floor(n_resamples=k, family_size=m, correction="bonferroni", alpha=alpha)
    assert needed <= bonferroni.needed_resamples  # Sidak needs at most Bonferroni's resamples


def test_significance_floor_message():
    floor = significance_floor(n_resamples=1000, family_size=33, correction="sidak", alpha=0.01)
    assert floor.message == ("no comparison can be significant: the smallest attainable p-value after sidak over"
                             " each row (33 comparisons) with 1000 resamples is 0.0324 > alpha 0.01; use at"
                             " least 3283 resamples.")


# -- every API and CLI option that takes a correction, on real data ---------------------------------------


@pytest.fixture(scope="module")
def summeval():
    return me.load_dataset("summeval")


def test_compare_systems_sidak_between_bonferroni_and_none(summeval):
    results = {c: me.compare_systems(summeval, "rouge-2.recall", test="randomization", correction=c, rng=0,
                                     n_resamples=5000)
               for c in ("none", "bonferroni", "sidak", "holm", "holm-sidak")}
    raw = results["none"].pvalues
    assert raw.shape == (16 * 15 // 2,) and not np.isnan(raw).any()  # all pairs of the 16 SummEval systems
    adjusted = {c: r.adjusted_pvalues for c, r in results.items()}
    np.testing.assert_allclose(adjusted["sidak"], adjust_pvalues(raw, method="sidak"))
    assert np.all(raw <= adjusted["sidak"]) and np.all(adjusted["sidak"] <= adjusted["bonferroni"])
    assert np.all(adjusted["holm-sidak"] <= adjusted["holm"]) and np.all(adjusted["holm-sidak"] <= adjusted["sidak"])
    assert np.any(adjusted["sidak"] < adjusted["bonferroni"])  # strictly smaller somewhere
    assert "correction:sidak" in str(results["sidak"].signature)
    n_significant = {c: int((adjusted[c] < 0.05).sum()) for c in adjusted}
    assert n_significant["none"] >= n_significant["sidak"] >= n_significant["bonferroni"] > 0


def test_compare_metrics_sidak(summeval):
    metrics = ["rouge-1.recall", "rouge-2.recall", "bertscore.f1"]
    out = {c: me.compare_metrics(summeval, metrics, "expert.relevance", level="system", correction=c, rng=0,
                                 n_resamples=200, family="matrix")
           for c in ("bonferroni", "sidak", "none")}
    off = ~np.eye(3, dtype=bool)
    none, sidak, bonf = (out[c].adjusted_pvalues[off] for c in ("none", "sidak", "bonferroni"))
    assert np.all(none <= sidak) and np.all(sidak <= bonf)
    np.testing.assert_allclose(sidak, adjust_pvalues(out["none"].pvalues[off], method="sidak"))


def test_cli_accepts_sidak():
    runner = CliRunner()
    result = runner.invoke(cli, ["systems", "--dataset", "summeval", "--scorer", "rouge-2.recall",
                                 "--test", "randomization", "--correction", "holm-sidak", "--n-resamples", "200",
                                 "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "holm-sidak over 120 pairs" in result.output


# -- the familywise command --------------------------------------------------------------------------------


def test_cli_familywise_paper_numbers():
    runner = CliRunner()
    result = runner.invoke(cli, ["familywise", "--systems", "15", "--per-comparison", "0.05", "--alpha", "0.05"])
    assert result.exit_code == 0, result.output
    assert "105 comparisons" in result.output
    assert "0.9954" in result.output
    assert "0.000488" in result.output  # Sidak's level
    assert "0.000476" in result.output  # Bonferroni's
    assert "statistic:familywise|comparisons:105|systems:15|alpha:0.05|per_comparison:0.05|" in result.output
    result = runner.invoke(cli, ["familywise", "--comparisons", "5", "--per-comparison", "0.015", "--format", "json"])
    record = json.loads(result.output)
    assert record["comparisons"] == 5 and record["systems"] is None
    given, sidak, bonferroni = record["rows"]
    assert given["familywise_error"] == pytest.approx(1 - 0.985 ** 5)
    assert sidak["familywise_error"] == pytest.approx(0.05) and bonferroni["per_comparison"] == pytest.approx(0.01)


@pytest.mark.parametrize("args,message", [
    (["--comparisons", "0"], "`comparisons` must be an integer >= 1; got 0."),
    (["--comparisons", "3", "--systems", "4"], "exactly one of `--comparisons` and `--systems` must be given;"
                                               " got both."),
    ([], "exactly one of `--comparisons` and `--systems` must be given; got neither."),
    (["--systems", "3", "--per-comparison", "2"], "`per_comparison` must be a number in [0, 1]; got 2.0."),
])
def test_cli_familywise_errors(args, message, capsys):
    assert main(["familywise", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == [f"metaeval: error: {message}"]
