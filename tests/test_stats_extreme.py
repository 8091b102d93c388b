"""Scores at extreme scale or offset (issue 22, items 2 and 7): no silent wrong numbers, no raw numpy warnings.

Every coefficient at every level is invariant to ``x -> a x + b`` (``a > 0``; ``a < 0`` flips the sign of
the symmetric correlations) for ``a`` in 10^[-150, 150] and shifts ``b`` up to 1e12 (in the data's units)
where the shift is representable relative to the data: the smallest gap ``g`` between distinct values
that are ranked satisfies ``g > 2^-44 (|b| + max|x|)`` (docs/statistics.md, "The tie rule"). Checked on
SummEval, on the WMT20 en-de MQM scores and on tie-heavy rounded data.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.cli.main import main
from metaeval.errors import ScoreSetError
from metaeval.stats.correlations import ties
from metaeval.stats.correlations.coefficients import correlation
from metaeval.stats.correlations.levels import level_correlation, system_means
from metaeval.vocabulary import COEFFICIENTS

LEVELS = ("system", "summary", "global", "by-system")
SYMMETRIC = ("pearson", "spearman", "kendall-a", "kendall-b", "kendall-c")
# coefficients of the values themselves (Pearson, and PDP, Pearson of pair differences): equal up to the rounding
# of the shifted values; the others depend on ranks or pair signs only and are exact
VALUES = [i for i, c in enumerate(COEFFICIENTS) if c in ("pearson", "pdp")]
RANKS = [i for i, c in enumerate(COEFFICIENTS) if c not in ("pearson", "pdp")]
HUMAN = "expert.relevance"
SHIFT_MARGIN = 2.0 ** -44  # the representability condition of a shift (module docstring)


@pytest.fixture(scope="module")
def summeval():
    return me.load_dataset("summeval")


@pytest.fixture(scope="module")
def mqm(shared_data):
    return me.read_mqm_averages(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv").matrix("mqm")


def _datasets(summeval, mqm):
    """(name, x, z) pairs of real and tie-heavy matrices (systems, inputs)."""
    z = summeval.matrix(HUMAN)
    rouge = summeval.matrix("rouge-2.f1")
    yield "summeval-rouge-2.f1", rouge, z
    yield "summeval-s3.resp", summeval.matrix("s3.resp"), z  # near-ties 200 ulps apart (equal in exact arithmetic)
    yield "summeval-rounded", np.round(rouge * 16) / 16, np.round(z * 2) / 2  # grids of 1/16 and 1/2
    # WMT20 MQM: averages of thirds, many ties; correlated with the score of the neighbouring segment
    yield "wmt20-mqm", mqm, np.roll(mqm, 1, axis=1)


def _ranked_vectors(x, level):
    """The vectors whose values are ranked at ``level`` (rows)."""
    if level == "system":
        return system_means(x, np.zeros_like(x))[0][None]
    if level == "summary":
        return x.T
    if level == "global":
        return x.reshape(1, -1)
    return x


def _smallest_gap(x, level):
    """The smallest gap between two distinct tie groups of any ranked vector of ``x`` at ``level``."""
    v = np.sort(_ranked_vectors(x, level), axis=-1)
    gaps = np.diff(v, axis=-1)
    tol = ties.tie_tolerances(v)
    distinct = gaps > tol
    return float(gaps[distinct].min()) if distinct.any() else np.inf


def _all(x, z, level):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw numpy warning escapes
        return np.array([level_correlation(x, z, level=level, coefficient=c).statistic for c in COEFFICIENTS])


def _pearson_tolerance(x, a, b):
    """Pearson moves by the rounding of the shifted values: ``ulp(|b| + max|a x|)`` relative to their spread."""
    spread = float(np.nanmax(x) - np.nanmin(x))
    return 1e-12 + 64 * np.finfo(float).eps * (abs(b) + abs(a) * float(np.nanmax(np.abs(x)))) / (abs(a) * spread)


@pytest.mark.parametrize("level", LEVELS)
def test_every_coefficient_is_invariant_to_scale_and_shift(summeval, mqm, level):
    rng = np.random.default_rng(22)
    for name, x, z in _datasets(summeval, mqm):
        reference = _all(x, z, level)
        gap = _smallest_gap(x, level)
        top = float(np.nanmax(np.abs(x)))
        beta_max = min(1e12, 0.5 * gap / SHIFT_MARGIN - top)  # the largest representable shift (data units)
        assert beta_max > 1e3, (name, level, gap)  # the data do allow large shifts
        for k in [-150, 150, *rng.integers(-150, 151, size=4)]:
            a = 10.0 ** int(k)
            for beta in (0.0, beta_max, -beta_max * rng.uniform(0.01, 1.0)):
                b = a * beta
                got = _all(a * x + b, z, level)
                pearson_tol = _pearson_tolerance(x, a, b)
                np.testing.assert_allclose(got[VALUES], reference[VALUES], atol=pearson_tol, rtol=0,
                                           err_msg=f"{name} {level} pearson, pdp a={a:g} b={b:g}")
                np.testing.assert_allclose(got[RANKS], reference[RANKS], atol=1e-12, rtol=0,
                                           err_msg=f"{name} {level} ranks a={a:g} b={b:g}")
                # the human side too
                got_z = _all(x, a * z + b if beta == 0.0 else a * z, level)
                np.testing.assert_allclose(got_z[RANKS], reference[RANKS], atol=1e-12, rtol=0)


@pytest.mark.parametrize("level", LEVELS)
def test_a_negative_scale_flips_the_symmetric_correlations(summeval, mqm, level):
    index = [COEFFICIENTS.index(c) for c in SYMMETRIC]
    for name, x, z in _datasets(summeval, mqm):
        reference = _all(x, z, level)[index]
        for a in (-1e-150, -3.0, -1e150):
            got = _all(a * x, z, level)[index]
            np.testing.assert_allclose(got, -reference, atol=1e-12, rtol=0, err_msg=f"{name} {level} a={a:g}")


def test_the_issue_examples_through_the_api(summeval):
    """The numbers of issue 22: x * 1e160 gave Pearson 0.0, x + 1e10 'undefined (every group was constant)'."""
    x, z = summeval.matrix("rouge-2.f1"), summeval.matrix(HUMAN)

    def scoreset(values):
        return me.ScoreSet({"m": values, HUMAN: z}, systems=summeval.systems, inputs=summeval.inputs, humans=[HUMAN])

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for level in LEVELS:
            for coefficient in ("pearson", "spearman", "kendall-b"):
                want = me.correlate(scoreset(x), "m", HUMAN, level=level, coefficient=coefficient).statistic
                for values in (x * 1e160, x + 1e10, x * 1e-150, x / np.nanmax(x) * 1e299):
                    got = me.correlate(scoreset(values), "m", HUMAN, level=level, coefficient=coefficient)
                    assert got.statistic == pytest.approx(want, abs=1e-6), (level, coefficient)
                    assert got.n_used > 0


def test_pearson_does_not_overflow_or_underflow():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=50), rng.normal(size=50)
    want = correlation(x, y, "pearson")
    for scale in (1e-300, 1e-160, 1e160, 1e300, 1.7e306):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert correlation(x * scale, y, "pearson") == pytest.approx(want, abs=1e-13)
            assert correlation(x * scale, y / scale, "pearson") == pytest.approx(want, abs=1e-13)


def test_pearson_constancy_does_not_depend_on_the_tie_tolerance():
    y = [1.0, 2.0, 3.0, 5.0]
    nearly = [1.0, 1.0 + 1e-6, 1.0, 1.0 - 1e-6]  # distinct relative to their spread: not constant
    want = correlation(np.array(nearly) - 1.0, y, "pearson")
    for rtol in (0.0, 1e-9, 1e-3):
        assert correlation(nearly, y, "pearson", rtol=rtol) == pytest.approx(want, abs=1e-9)
        # two summation orders of one mean: constant for Pearson whatever the tie tolerance
        assert np.isnan(correlation([2.0, 1.9999999999999998, 2.0, 2.0], y, "pearson", rtol=rtol))


def test_the_tie_rule_is_relative_to_the_spread():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # a 0.5 gap at 1e10 is not a tie (it was under 1e-9 * |value|)
        assert not ties.are_tied(np.array([1e10]), np.array([1e10 + 0.5]))[0]
        assert correlation([1e10, 1e10 + 0.5, 1e10 + 1.0], [1.0, 2.0, 3.0], "kendall-b") == 1.0
        # summation noise: 2 ulps at 1e10 in a vector of spread 1 is a tie (the rounding floor 2^-46 |v|)
        v = np.array([1e10, 1e10 + 1.0, np.nextafter(np.nextafter(1e10, 2e10), 2e10)])
        assert correlation(v, [1.0, 3.0, 1.0], "kendall-b") == 1.0
        # gaps below 1e-9 of the spread tie, whatever the magnitude
        for shift in (0.0, 1e3):
            w = np.array([0.0, 0.4e-9, 1.0]) + shift
            assert correlation(w, [1.0, 1.0, 2.0], "kendall-b") == 1.0
        # exact under rtol=0
        assert correlation([1.0, 1.0 + 1e-15, 2.0], [1.0, 2.0, 3.0], "kendall-b", rtol=0.0) == 1.0


def test_tie_tolerances_and_the_implicit_rule_agree():
    """are_tied without ``tol`` (the union of both arrays along the axis) equals the explicit tolerance."""
    rng = np.random.default_rng(5)
    v = np.round(rng.normal(size=(40, 30)) * 4) / 4 * 10.0 ** rng.integers(-5, 6, size=(40, 1)) + 1e6
    v[rng.random(v.shape) < 0.1] = np.nan
    s = np.sort(v, axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an all-NaN row must not warn
        s[0] = np.nan
        implicit = ties.are_tied(s[:, 1:], s[:, :-1])
        explicit = ties.are_tied(s[:, 1:], s[:, :-1], ties.tie_tolerances(s))
        np.testing.assert_array_equal(implicit, explicit)
        assert ties.tie_tolerances(s)[0, 0] == 0.0


def test_values_that_cannot_be_averaged_are_refused(summeval):
    x = summeval.matrix("rouge-2.f1")
    big = x / np.nanmax(x) * 1.5e307
    with pytest.raises(ScoreSetError) as info:
        me.ScoreSet({"m": big}, systems=summeval.systems, inputs=summeval.inputs)
    assert str(info.value) == (
        "scores of 'm' must be at most 1e+300 in magnitude (sums and means of larger values overflow);"
        " got 1.5e+307. Divide them by a constant: no correlation changes.")
    # the array functions average such values without overflow (a power-of-two rescaled sum)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        xbar, _, _ = system_means(big, summeval.matrix(HUMAN))
        assert np.isfinite(xbar).all()
        np.testing.assert_allclose(xbar / 1.5e307, system_means(x / np.nanmax(x), summeval.matrix(HUMAN))[0],
                                   rtol=1e-12)
        want = level_correlation(x, summeval.matrix(HUMAN), level="system", coefficient="spearman").statistic
        got = level_correlation(big, summeval.matrix(HUMAN), level="system", coefficient="spearman")
        assert got.statistic == want and got.n_used == 16


def test_cli_refuses_unrepresentable_scores_and_handles_large_ones(tmp_path, capsys, summeval):
    x, z = summeval.matrix("rouge-2.f1"), summeval.matrix(HUMAN)
    lines = ["system,input,metric,human"]
    x = x / np.nanmax(x)
    for big, name in ((1e160, "large.csv"), (1e307, "huge.csv")):
        rows = [f"{s},{d},{float(x[i, j] * big)!r},{float(z[i, j])!r}" for i, s in enumerate(summeval.systems)
                for j, d in enumerate(summeval.inputs)]
        (tmp_path / name).write_text("\n".join(lines + rows) + "\n")
    out = tmp_path / "r.json"
    code = main(["correlate", "--scores", str(tmp_path / "large.csv"), "--human", "human", "--metric", "metric",
                 "--level", "system", "--coefficient", "pearson", "--ci", "none", "--format", "json",
                 "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    [result] = json.loads(out.read_text())["results"]
    want = level_correlation(x, z, level="system", coefficient="pearson").statistic
    assert result["statistic"] == pytest.approx(want, abs=1e-12)
    capsys.readouterr()
    code = main(["correlate", "--scores", str(tmp_path / "huge.csv"), "--human", "human", "--ci", "none"])
    err = capsys.readouterr().err
    assert code == 2
    assert "must be at most 1e+300 in magnitude" in err and "Traceback" not in err and err.count("\n") == 1


def test_mt_evaluate_is_invariant_to_scale_and_shift():
    """The WMT protocol (`mt`): a metric * 1e160 gave global Pearson NaN (overflow), + 1e10 gave 1.0 and 0.03
    for 0.69 and 0.99 (raw moments cancelling); every task, ranking and p-value is now unchanged."""
    ds = me.read_mt_metrics_eval("tests/data/mt-metrics-eval/wmtfix", "en-de")
    human = ds.humans[0]
    metrics = [m for m in ds.metrics if m not in ds.humans]

    def evaluate(transform):
        scores = {m: transform(ds.matrix(m)) for m in metrics}
        scores[human] = ds.matrix(human)
        data = me.ScoreSet(scores, systems=ds.systems, inputs=ds.inputs, humans=[human])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return me.mt_evaluate(data, metrics, human, n_resamples=100, rng=3)

    want = evaluate(lambda v: v)
    for transform in (lambda v: v * 1e160, lambda v: v * 1e-150, lambda v: v + 1e10, lambda v: v * 3.0 - 1e6):
        got = evaluate(transform)
        # the shifted values are rounded to 2e-6 (ulp of 1e10): Pearson moves by about that over the spread
        np.testing.assert_allclose(got.statistics, want.statistics, atol=1e-6, rtol=0)
        for scope in want.scopes:
            np.testing.assert_array_equal(got.ranks[scope], want.ranks[scope])
            np.testing.assert_array_equal(got.pvalues[scope], want.pvalues[scope])


@pytest.mark.parametrize("level", LEVELS)
def test_resampling_is_invariant_to_scale_and_shift(summeval, level):
    """Bootstrap intervals and permutation p-values (the resampling kernels) of a metric * 1e160, * 1e-150 or
    + 1e10 equal those of the metric, with the same seed: 1e160 overflowed the kernels' sums of squares."""
    x, y, z = summeval.matrix("rouge-2.f1"), summeval.matrix("rouge-1.f1"), summeval.matrix(HUMAN)

    def run(transform, coefficient):
        data = me.ScoreSet({"m": transform(x), "n": transform(y), HUMAN: z}, systems=summeval.systems,
                           inputs=summeval.inputs, humans=[HUMAN])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ci = me.bootstrap_ci(data, "m", HUMAN, level=level, coefficient=coefficient, n_resamples=60, rng=1)
            test = me.permutation_test(data, "m", "n", HUMAN, level=level, coefficient=coefficient, n_resamples=60,
                                       rng=1)
        return np.array([ci.statistic, *ci.ci, test.pvalue])

    for coefficient in ("pearson", "kendall-b"):
        want = run(lambda v: v, coefficient)
        for transform in (lambda v: v * 1e160, lambda v: v * 1e-150, lambda v: v + 1e10):
            np.testing.assert_allclose(run(transform, coefficient), want, atol=1e-6, rtol=0, equal_nan=True)


def test_system_level_pearson_is_exact_at_a_large_offset():
    """Pearson of system means at +1e10 equals the same data shifted back (it moved by 1.2e-6: the means of
    large values were summed before centring); the point kernels give the same numbers bitwise."""
    from metaeval.stats.correlations.levels import level_correlation
    from metaeval.stats.kernels import point_correlations

    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 100))
    z = x + rng.normal(size=(16, 100))
    shifted = x + 1e10
    back = shifted - 1e10  # exactly the values of ``shifted``, less 1e10
    for level in ("system", "summary", "global", "by-system"):
        at = level_correlation(shifted, z, level=level, coefficient="pearson").statistic
        near = level_correlation(back, z, level=level, coefficient="pearson").statistic
        assert abs(at - near) <= 1e-12, level
        fast = [r.statistic for r in point_correlations([shifted, back], z, level=level, coefficient="pearson")]
        assert fast == [at, near]
    # constant system means stay undefined: a spread at the rounding level of the means' magnitude
    flat = np.full((4, 3), 1e10)
    flat[0, 0] = np.nextafter(1e10, 2e10)
    assert np.isnan(level_correlation(flat, rng.normal(size=(4, 3)), level="system", coefficient="pearson").statistic)
