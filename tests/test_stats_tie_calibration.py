"""Tie calibration (Deutsch, Foster & Freitag 2023): exact search against brute force and mt-metrics-eval."""
import itertools
from fractions import Fraction

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.mt.tie_calibration import calibrate_ties


def test_bad_coefficient_message():
    with pytest.raises(ParameterError) as err:
        calibrate_ties([[1.0, 2.0]], [[1.0, 2.0]], coefficient="kendall-b")
    assert str(err.value) == "`coefficient` must be one of 'acc-eq', 'tau-eq'; got 'kendall-b'."


def test_too_many_pairs_message():
    x = np.arange(20.0).reshape(4, 5)
    with pytest.raises(ParameterError) as err:
        calibrate_ties(x, x, level="global", max_pairs=100)
    assert str(err.value) == (
        "`level` 'global' has 190 pairs, more than max_pairs=100 that tie calibration enumerates; calibrate "
        "at an item-grouped level ('summary' or 'by-system') or raise max_pairs.")


def _data(rng, scale):
    x = np.round(rng.normal(size=(7, 9)), 1) * scale
    z = rng.integers(0, 4, size=(7, 9)).astype(float)
    x[0, 2] = np.nan
    z[3, 4] = np.nan
    return x, z


@pytest.mark.parametrize("level", ["summary", "by-system", "system", "global"])
@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq"])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 100.0])
def test_curve_equals_brute_force(level, coefficient, scale):
    rng = np.random.default_rng(int(scale * 1000) + len(level))
    x, z = _data(rng, scale)
    cal = calibrate_ties(x, z, level=level, coefficient=coefficient)
    brute = [float(level_correlation(x, z, level=level, coefficient=coefficient, tie_threshold=t).statistic)
             for t in cal.thresholds]
    np.testing.assert_allclose(cal.statistics, brute, rtol=0, atol=1e-12)
    # no threshold between or beyond the candidates does better (a grid over all of them)
    grid = np.concatenate([cal.thresholds, (cal.thresholds[1:] + cal.thresholds[:-1]) / 2,
                           [cal.thresholds[-1] * 2 + 1]])
    best = max(float(level_correlation(x, z, level=level, coefficient=coefficient, tie_threshold=t).statistic)
               for t in grid)
    assert cal.statistic == pytest.approx(best, abs=1e-12)
    assert cal.threshold == cal.thresholds[int(np.argmax(cal.statistics))]


def _mtme_tau_optimization(x, z, acc):
    """A plain transcription of mt-metrics-eval's tau_optimization (rows are the groups, no sampling)."""
    rows = {}
    pairs = []
    for g in range(x.shape[0]):
        stats = [0, 0, 0, 0, 0]  # con, dis, ties human, ties metric, ties both
        for i, j in itertools.combinations(range(x.shape[1]), 2):
            h1, h2, m1, m2 = z[g, i], z[g, j], x[g, i], x[g, j]
            if h1 == h2 and m1 == m2:
                cat = 4
            elif h1 == h2:
                cat = 2
            elif m1 == m2:
                cat = 3
            elif (h1 > h2) == (m1 > m2):
                cat = 0
            else:
                cat = 1
            stats[cat] += 1
            pairs.append((abs(m1 - m2), g, cat, 4 if h1 == h2 else 3))
        rows[g] = stats

    def fn(s):
        total = sum(s)
        return (s[0] + s[4]) / total if acc else (s[0] + s[4] - s[1] - s[2] - s[3]) / total

    total = sum(fn(s) for s in rows.values())
    thresholds, taus = [0.0], [total / len(rows)]
    for diff, g, cat, tie_cat in sorted(pairs, key=lambda p: p[0]):
        total -= fn(rows[g])
        rows[g][cat] -= 1
        rows[g][tie_cat] += 1
        total += fn(rows[g])
        if thresholds[-1] == diff:
            taus[-1] = total / len(rows)
        else:
            thresholds.append(diff)
            taus.append(total / len(rows))
    best = int(np.argmax(taus))
    return thresholds[best], taus[best]


@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq"])
def test_agrees_with_mt_metrics_eval_algorithm(coefficient):
    rng = np.random.default_rng(5)
    x = rng.integers(0, 40, size=(6, 30)) / 8.0  # exact binary fractions: differences are exact
    z = rng.integers(0, 5, size=(6, 30)).astype(float)
    cal = calibrate_ties(x, z, level="summary", coefficient=coefficient)
    threshold, best = _mtme_tau_optimization(x.T, z.T, coefficient == "acc-eq")
    assert cal.threshold == threshold
    assert cal.statistic == pytest.approx(best, abs=1e-12)


def test_ties_in_metric_and_human_count_at_zero():
    x = [[1.0, 1.0], [1.0, 2.0], [3.0, 3.0]]
    z = [[1.0, 5.0], [1.0, 6.0], [2.0, 7.0]]
    cal = calibrate_ties(x, z, level="summary", coefficient="acc-eq")
    assert cal.thresholds[0] == 0.0
    # input 0: (a,b) tied in both, (a,c), (b,c) concordant: 1; input 1: pairs concordant except (a,c)/(b,c)
    assert cal.statistics[0] == pytest.approx(float(level_correlation(x, z, level="summary",
                                                                       coefficient="acc-eq").statistic))


# ----------------------------------------------------------------------------------------------------
# issue 19: thresholds are real gaps, one tie rule decides every pair, invariant to shift and scale


ISSUE_X = np.array([[-18.0, 0.0, 0.0], [-17.5, 0.5, 0.5]])
ISSUE_H = np.array([[-5.0, 0.0, 0.0], [-5.0, 1.0, 1.0]])


@pytest.mark.parametrize("transform", [lambda x: x, lambda x: x + 100, lambda x: x * 3, lambda x: x - 1e6])
def test_issue_case_every_gap_of_one_half_is_one_candidate(transform):
    # every pair is 0.5 apart: tying them all gives 1/3, tying none 2/3 (input 0 is a human tie, inputs 1
    # and 2 are concordant); no threshold ties input 0's pair without the others (mt-metrics-eval: 0.667 at 0)
    x = transform(ISSUE_X)
    for coefficient, at_zero, all_tied in (("acc-eq", 2 / 3, 1 / 3), ("tau-eq", 1 / 3, -1 / 3)):
        cal = calibrate_ties(x, ISSUE_H, level="summary", coefficient=coefficient)
        assert cal.threshold == 0.0
        assert cal.statistic == pytest.approx(at_zero, abs=1e-15)
        assert len(cal.thresholds) == 2
        assert cal.thresholds[1] == abs(x[1, 0] - x[0, 0])
        assert cal.statistics[1] == pytest.approx(all_tied, abs=1e-15)


def _gap_rule_statistic(x, z, eps, coefficient):
    """acc-eq / tau-eq averaged over the columns, a pair tied in the metric iff |x_a - x_b| <= eps."""
    values = []
    for j in range(x.shape[1]):
        total = n = 0
        for a, b in itertools.combinations(range(x.shape[0]), 2):
            if not (np.isfinite(x[a, j]) and np.isfinite(x[b, j]) and np.isfinite(z[a, j]) and np.isfinite(z[b, j])):
                continue
            tied_x, tied_z = abs(x[a, j] - x[b, j]) <= eps, z[a, j] == z[b, j]
            agree = tied_x and tied_z or (not tied_x and not tied_z
                                           and (x[a, j] > x[b, j]) == (z[a, j] > z[b, j]))
            total += agree if coefficient == "acc-eq" else (1 if agree else -1)
            n += 1
        if n:
            values.append(total / n)
    return float(np.mean(values))


@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq"])
@pytest.mark.parametrize("scale", [0.1, 3.0, 1e-150])
def test_thresholds_are_gaps_and_the_gap_rule_gives_the_statistic(coefficient, scale):
    rng = np.random.default_rng(11)
    x = np.round(rng.normal(size=(6, 25)) * 4) * scale  # multiples of 0.1 or 3: gaps not exact
    z = rng.integers(0, 3, size=(6, 25)).astype(float)
    x[1, 3] = np.nan
    cal = calibrate_ties(x, z, level="summary", coefficient=coefficient)
    gaps = {abs(x[a, j] - x[b, j]) for j in range(25) for a, b in itertools.combinations(range(6), 2)}
    assert set(cal.thresholds[1:]) <= gaps  # every candidate is a pair's gap (0 first)
    for k in range(0, len(cal.thresholds), 3):
        assert cal.statistics[k] == pytest.approx(_gap_rule_statistic(x, z, cal.thresholds[k], coefficient),
                                                  abs=1e-12)
    assert cal.statistic == pytest.approx(_gap_rule_statistic(x, z, cal.threshold, coefficient), abs=1e-12)
    # the fixed-threshold coefficient applies the same rule
    fixed = level_correlation(x, z, level="summary", coefficient=coefficient, tie_threshold=cal.threshold)
    assert float(fixed.statistic) == pytest.approx(cal.statistic, abs=1e-12)


@pytest.mark.parametrize("pairwise", [True, False])
@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq", "accuracy"])
def test_fixed_threshold_ties_a_pair_iff_its_gap_is_at_most_epsilon(monkeypatch, pairwise, coefficient):
    from metaeval.stats.correlations import coefficients

    monkeypatch.setattr(coefficients, "PAIRWISE_MAX_N", 1000 if pairwise else 1)
    rng = np.random.default_rng(4)
    x = np.round(rng.normal(size=90) * 10) / 2 - 18  # -18 + 0.4999999999999982 is -17.5 in floating point
    y = rng.integers(0, 3, size=90).astype(float)
    for eps in (0.5, np.nextafter(0.5, 0), 0.4999999999999982, 1.0 - 2 ** -50, 1.5):
        tied_x = np.abs(x[:, None] - x[None, :]) <= eps
        tied_y = y[:, None] == y[None, :]
        order = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :]) > 0
        iu = np.triu_indices(90, 1)
        con = (order & ~tied_x & ~tied_y)[iu].sum()
        both, only_x, only_y = (tied_x & tied_y)[iu].sum(), (tied_x & ~tied_y)[iu].sum(), (~tied_x & tied_y)[iu].sum()
        pairs = len(iu[0])
        expected = {"acc-eq": (con + both) / pairs, "tau-eq": (2 * (con + both) - pairs) / pairs,
                    "accuracy": con / (pairs - only_y - both)}[coefficient]
        from metaeval.stats.correlations.coefficients import correlation

        assert float(correlation(x, y, coefficient, tie_threshold=eps)) == pytest.approx(expected, abs=1e-15), eps


def test_gap_classes_merge_gaps_within_the_tolerance_and_report_the_largest():
    from metaeval.stats.mt.tie_calibration import gap_classes

    gaps = np.array([0.0, 0.5, 0.5 + 1e-12, 1.0, 0.5 - 1e-12, 2.0, 1.0 + 3e-12, 1.0 + 6e-12, 0.0])
    np.testing.assert_array_equal(gap_classes(gaps, 0.0), gaps)  # exact: the distinct gaps
    e = gap_classes(gaps, 4e-12)  # 1.0, 1 + 3e-12, 1 + 6e-12 chain into one class
    np.testing.assert_array_equal(e, [0.0, 0.5 + 1e-12, 0.5 + 1e-12, 1.0 + 6e-12, 0.5 + 1e-12, 2.0,
                                      1.0 + 6e-12, 1.0 + 6e-12, 0.0])
    # a threshold at a class's largest gap ties, under gap <= eps, exactly that class and those below
    for eps in np.unique(e):
        np.testing.assert_array_equal(gaps <= eps, e <= eps)


def _mtme_exact(x, z, acc):
    """mt-metrics-eval's tau_optimization as documented (rows are the groups, every pair, no sampling),
    in exact rational arithmetic: candidates 0 and every distinct |m1 - m2|, the first maximum."""
    counts, pairs = [], []
    for g in range(x.shape[0]):
        c = [0, 0, 0, 0, 0]  # concordant, discordant, tied in human only, metric only, both
        for i, j in itertools.combinations(range(x.shape[1]), 2):
            m1, m2, h1, h2 = x[g, i], x[g, j], z[g, i], z[g, j]
            cat = (4 if m1 == m2 else 2) if h1 == h2 else 3 if m1 == m2 else 0 if (h1 > h2) == (m1 > m2) else 1
            c[cat] += 1
            pairs.append((abs(m1 - m2), g, cat, 4 if h1 == h2 else 3))
        counts.append(c)

    def fn(c):
        return Fraction(c[0] + c[4] if acc else c[0] + c[4] - c[1] - c[2] - c[3], sum(c))

    total = sum(fn(c) for c in counts)
    thresholds, totals = [0.0], [total]
    for diff, g, cat, tie_cat in sorted(pairs, key=lambda p: p[0]):
        total -= fn(counts[g])
        counts[g][cat] -= 1
        counts[g][tie_cat] += 1
        total += fn(counts[g])
        if thresholds[-1] == diff:
            totals[-1] = total
        else:
            thresholds.append(diff)
            totals.append(total)
    best = totals.index(max(totals))
    return thresholds[best], float(totals[best] / len(counts))


@pytest.fixture(scope="module")
def ende_mqm(shared_data):
    pd = pytest.importorskip("pandas")
    df = pd.read_csv(shared_data / "wmt" / "mqm_newstest2020_ende.avg_seg_scores.tsv", sep=r"\s+",
                     na_values=["None"])
    return df.pivot(index="system", columns="seg_id", values="mqm_avg_score").to_numpy(dtype=float)


# synthetic metrics on WMT20 en-de MQM (10 systems x 1418 segments): c * MQM plus seeded noise, rounded to
# a grid; some make tie calibration pay (epsilon > 0), some have pairs one step apart near -20 and near 0
ENDE_METRICS = {0.5: [(0, 6, 0.6)], 1.0: [(1, 12, 0.8)], 5.0: [(0, 40, 0.6), (1, 8, 0.6)]}


@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq"])
@pytest.mark.parametrize("step", sorted(ENDE_METRICS))
def test_equals_mt_metrics_eval_on_wmt20_ende_mqm(ende_mqm, step, coefficient):
    for seed, c, noise in ENDE_METRICS[step]:
        rng = np.random.default_rng(seed)
        x = np.round((c * ende_mqm + step * rng.normal(scale=noise, size=ende_mqm.shape)) / step) * step
        cal = calibrate_ties(x, ende_mqm, level="summary", coefficient=coefficient)
        threshold, statistic = _mtme_exact(x.T, ende_mqm.T, coefficient == "acc-eq")
        assert cal.threshold == pytest.approx(threshold, rel=0, abs=1e-12)
        assert cal.statistic == pytest.approx(statistic, rel=0, abs=1e-12)


def _grid_data(seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(8, 30)) * 6) / 2 - 12  # multiples of 0.5 around -12
    z = rng.integers(0, 4, size=(8, 30)).astype(float)
    x[2, 5] = z[4, 7] = np.nan
    return x, z


@pytest.mark.parametrize("level", ["summary", "by-system", "system", "global"])
@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq"])
def test_invariant_to_scaling_the_metric(level, coefficient):
    x, z = _grid_data(1)
    ref = calibrate_ties(x, z, level=level, coefficient=coefficient)
    for k in range(-150, 151, 25):
        for s in (10.0 ** k, 3 * 10.0 ** k):
            cal = calibrate_ties(x * s, z, level=level, coefficient=coefficient)
            assert cal.statistic == pytest.approx(ref.statistic, rel=0, abs=1e-12), s
            assert cal.threshold == pytest.approx(ref.threshold * s, rel=1e-9), s
            np.testing.assert_allclose(cal.statistics, ref.statistics, rtol=0, atol=1e-12)
            np.testing.assert_allclose(cal.thresholds, ref.thresholds * s, rtol=1e-9)


SHIFTS = {  # (shift, tie tolerance): see "Tie calibration, exactly" in docs/mt.md
    # item-grouped: scores shifted by c are exact here (multiples of 0.5), and so are their gaps; the
    # default tie rule keeps them apart while 0.5 > TIE_RTOL * |x + c| (c < 5e8); beyond, exact ties do
    "summary": [(100.0, 1e-9), (-1e6, 1e-9), (3.7e7, 1e-9), (1e8, 1e-9), (-1e8, 1e-9), (1e9, 0.0), (1e12, 0.0),
                (-1e12, 0.0)],
    # system means of shifted scores are rounded (~1e-16 |c|): within TIE_RTOL * spread while |c| < ~1e6 spread
    "system": [(100.0, 1e-9), (-1e5, 1e-9), (1e6, 1e-9), (-1e6, 1e-9), (3e6, 1e-9)],
}


@pytest.mark.parametrize("level", ["summary", "by-system", "system"])
@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq"])
def test_invariant_to_shifting_the_metric(level, coefficient):
    x, z = _grid_data(2)
    ref = calibrate_ties(x, z, level=level, coefficient=coefficient)
    for c, rtol in SHIFTS["system" if level == "system" else "summary"]:
        cal = calibrate_ties(x + c, z, level=level, coefficient=coefficient, rtol=rtol)
        assert cal.statistic == pytest.approx(ref.statistic, rel=0, abs=1e-12), c
        atol = 1e-9 * np.ptp(ref.thresholds) if level == "system" else 0.0
        assert cal.threshold == pytest.approx(ref.threshold, rel=0, abs=atol), c
        np.testing.assert_allclose(cal.thresholds, ref.thresholds, rtol=0, atol=atol)


@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq"])
def test_recalibration_uses_the_gap_rule_on_both_paths(monkeypatch, coefficient):
    from metaeval.stats.kernels.kendall import calibration
    from metaeval.stats.resampling.draws import bootstrap_draws, count_weights
    from metaeval.stats.mt.tie_calibration import pair_table, recalibrated

    x, z = _grid_data(3)
    x[2, 5] = z[4, 7] = 0.0  # complete data: integer curves (compiled loop when numba is installed)
    cols = bootstrap_draws(8, 30, method="inputs", n_resamples=20, rng=5).col_indices()
    w = count_weights(cols, 30)
    ref = recalibrated(pair_table(x.T, z.T), coefficient, w)
    for s, c in ((1.0, 0.0), (3e-150, 0.0), (7e150, 0.0), (0.1, 0.0), (1.0, -1e6)):
        xs = x * s + c
        fast = recalibrated(pair_table(xs.T, z.T), coefficient, w)
        monkeypatch.setattr(calibration.compiler, "numba_available", lambda: False)
        slow = recalibrated(pair_table(xs.T, z.T), coefficient, w, batch=3)
        monkeypatch.undo()
        np.testing.assert_array_equal(fast[0], slow[0])
        np.testing.assert_array_equal(fast[1], slow[1])
        np.testing.assert_allclose(fast[0], ref[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(fast[1], ref[1] * s, rtol=1e-9)
        for b in range(0, 20, 4):  # each resample's threshold is a gap, and the gap rule gives its statistic
            cal = calibrate_ties(xs[:, cols[b]], z[:, cols[b]], coefficient=coefficient)
            assert (fast[0][b], fast[1][b]) == (pytest.approx(cal.statistic, abs=1e-12), cal.threshold)
            assert fast[0][b] == pytest.approx(
                _gap_rule_statistic(xs[:, cols[b]], z[:, cols[b]], fast[1][b], coefficient), abs=1e-12)


def test_cli_mt_acc23_of_a_shifted_or_scaled_metric_on_wmt20_ende(ende_mqm, tmp_path, capsys):
    import json

    import metaeval as me
    from metaeval.cli.main import main

    rng = np.random.default_rng(0)
    x = np.round((6 * ende_mqm + 0.5 * rng.normal(scale=0.6, size=ende_mqm.shape)) / 0.5) * 0.5
    scales = {"m": 1.0, "m+100": 1.0, "m*3": 3.0, "m-1e6": 1.0}
    mats = {"mqm": ende_mqm, "m": x, "m+100": x + 100, "m*3": x * 3, "m-1e6": x - 1e6}
    me.write_scores(me.ScoreSet.from_matrices(mats, humans=["mqm"], name="en-de"), tmp_path / "ende.csv")
    assert main(["mt", "--scores", f"en-de={tmp_path / 'ende.csv'}", "--human", "mqm", "--task", "summary/acc23",
                 "--n-resamples", "10", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    threshold, statistic = _mtme_exact(x.T, ende_mqm.T, True)
    assert threshold == 0.5  # tie calibration pays here
    task = out["tasks"].index("en-de:summary/acc23")
    for i, metric in enumerate(out["metrics"]):
        assert out["statistics"][task][i] == pytest.approx(statistic, rel=0, abs=1e-12), metric
        assert out["tie_thresholds"]["en-de:summary/acc23"][i] == threshold * scales[metric], metric


@pytest.mark.parametrize("seed", range(6))
def test_property_random_scores_scales_and_shifts(seed):
    # seeded random draws: a grid step (binary fractions, integers, multiples of 5) or continuous scores,
    # a level, and a scale 10^k * m and a shift that keep the shifted grid exact (|c| <= 1e7 * step)
    rng = np.random.default_rng(100 + seed)
    step = [0.125, 0.5, 1.0, 5.0, None][seed % 5]
    x = rng.normal(size=(6, 20)) * 3
    x = x if step is None else np.round(x / step) * step
    z = rng.integers(0, 3, size=(6, 20)).astype(float)
    level = ["summary", "by-system", "global"][seed % 3]
    ref = calibrate_ties(x, z, level=level, coefficient="acc-eq")
    for _ in range(10):
        s = 10.0 ** rng.integers(-150, 151) * rng.choice([1.0, 3.0, 0.7])
        cal = calibrate_ties(x * s, z, level=level, coefficient="acc-eq")
        assert cal.statistic == pytest.approx(ref.statistic, rel=0, abs=1e-12), s
        assert cal.threshold == pytest.approx(ref.threshold * s, rel=1e-9), s
        if step is not None:
            c = float(rng.integers(-10 ** 7, 10 ** 7)) * step
            cal = calibrate_ties(x + c, z, level=level, coefficient="acc-eq")
            assert (cal.statistic, cal.threshold) == (pytest.approx(ref.statistic, rel=0, abs=1e-12), ref.threshold), c
