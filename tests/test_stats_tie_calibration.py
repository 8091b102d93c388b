"""Tie calibration (Deutsch, Foster & Freitag 2023): exact search against brute force and mt-metrics-eval."""
import itertools

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.levels import level_correlation
from metaeval.stats.tie_calibration import calibrate_ties


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
