"""Copies of one drawn unit never form a pair (issue 10, item 1).

A system drawn twice by BOOT-SYSTEMS / BOOT-BOTH (or an input drawn twice where a statistic pairs inputs,
or a cell drawn twice at global level) is one point of the data, not two: its copies are tied in the
metric and in the humans only because of the draw. Counting that pair as agreement biased acc-eq and
tau-eq upward (wmt20-mqm-ende: acc-eq 0.561 with a BOOT-SYSTEMS interval [0.567, 0.661] that excluded
it) and kendall-a toward 0. The oracle here is a plain loop over the pairs of distinct units.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import metaeval as me
from metaeval.errors import DegenerateWarning
from metaeval.stats.resampling.bootstrap import bootstrap_interval, bootstrap_samples
from metaeval.stats.correlations.coefficients import copy_pairs
from metaeval.stats.resampling.draws import BootstrapDraws, bootstrap_draws

PAIR_COEFFICIENTS = ["kendall-a", "kendall-b", "accuracy", "acc-eq", "tau-eq"]


def _from_counts(coefficient, c, d, tx, ty, txy):
    p = c + d + tx + ty + txy
    if p == 0:
        return np.nan
    if coefficient == "kendall-a":
        return np.nan if tx + txy == p or ty + txy == p else (c - d) / p
    if coefficient == "kendall-b":
        den = np.sqrt((p - tx - txy) * (p - ty - txy))
        return np.nan if den == 0 else (c - d) / den
    if coefficient == "accuracy":
        return np.nan if c + d + tx == 0 else c / (c + d + tx)
    if coefficient == "acc-eq":
        return (c + txy) / p
    return (c + txy - d - tx - ty) / p


def plain_pairs(x, z, units, coefficient, copies=None):
    """The coefficient over the pairs of positions that are not copies of one unit (integer scores: exact
    ties). ``copies(i, j)`` decides; by default positions holding the same unit are copies."""
    copies = copies or (lambda i, j: units[i] == units[j])
    c = d = tx = ty = txy = 0
    keep = [i for i in range(len(x)) if np.isfinite(x[i]) and np.isfinite(z[i])]
    for i, j in itertools.combinations(keep, 2):
        if copies(i, j):
            continue
        sx, sz = np.sign(x[i] - x[j]), np.sign(z[i] - z[j])
        if sx == 0 and sz == 0:
            txy += 1
        elif sx == 0:
            tx += 1
        elif sz == 0:
            ty += 1
        elif sx == sz:
            c += 1
        else:
            d += 1
    return _from_counts(coefficient, c, d, tx, ty, txy)


def plain_level(x, z, rows, cols, level, coefficient):
    xs, zs = x[rows][:, cols], z[rows][:, cols]
    if level == "system":
        return plain_pairs(xs.mean(axis=1), zs.mean(axis=1), rows, coefficient)
    if level == "global":
        # cells (a, b) and (a', b') (positions in the resample) are copies when a != a' hold one system or
        # b != b' one input
        cells = [(a, b) for a in range(len(rows)) for b in range(len(cols))]

        def copies(i, j):
            (a, b), (a2, b2) = cells[i], cells[j]
            return (a != a2 and rows[a] == rows[a2]) or (b != b2 and cols[b] == cols[b2])

        return plain_pairs(xs.ravel(), zs.ravel(), None, coefficient, copies)
    if level == "summary":
        vals = [plain_pairs(xs[:, j], zs[:, j], rows, coefficient) for j in range(len(cols))]
    else:
        vals = [plain_pairs(xs[i], zs[i], cols, coefficient) for i in range(len(rows))]
    vals = [v for v in vals if np.isfinite(v)]
    return np.mean(vals) if vals else np.nan


def likert(seed, n=7, m=6, missing=False):
    rng = np.random.default_rng(seed)
    z = rng.integers(1, 5, size=(n, m)).astype(float)
    x = np.clip(z + rng.integers(-1, 2, size=(n, m)), 1, 4)
    if missing:
        x[rng.random((n, m)) < 0.1] = np.nan
    return x, z


@pytest.mark.parametrize("level", ["system", "summary", "by-system", "global"])
@pytest.mark.parametrize("coefficient", PAIR_COEFFICIENTS)
@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_resampled_pair_statistics_equal_a_loop_over_pairs_of_distinct_units(level, coefficient, method):
    x, z = likert(3, missing=level in ("summary", "global", "by-system"))
    if level == "system":
        x = x * 6  # integer system means: exact ties for the plain loop
    draws = bootstrap_draws(*x.shape, method=method, n_resamples=40, rng=4)
    kw = dict(level=level, coefficient=coefficient, draws=draws)
    fast = bootstrap_samples(x, z, engine="auto", **kw)
    ref = bootstrap_samples(x, z, engine="reference", **kw)
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
    loop = [plain_level(x, z, r, c, level, coefficient) for r, c in zip(draws.row_indices(), draws.col_indices())]
    np.testing.assert_allclose(ref, loop, rtol=0, atol=1e-12)


def test_copy_pairs_counts_valid_copies_only():
    units = np.array([[0, 0, 0, 1, 1, 2], [5, 5, 5, 5, 5, 5]])
    valid = np.array([[True, True, False, True, True, True], [True] * 6])
    assert copy_pairs(units, valid).tolist() == [1 + 1, 15]


def test_a_system_paired_with_its_copy_is_not_agreement():
    x = np.array([[1.0], [2.0]])
    z = np.array([[2.0], [1.0]])
    both_same = BootstrapDraws("systems", 2, 1, np.array([[0, 0]]), None)  # no pair of distinct systems
    out = bootstrap_samples(x, z, level="system", coefficient="acc-eq", draws=both_same)
    assert np.isnan(out[0])  # undefined, dropped by the interval - never "perfect agreement"
    distinct = BootstrapDraws("systems", 2, 1, np.array([[0, 1]]), None)
    assert bootstrap_samples(x, z, level="system", coefficient="acc-eq", draws=distinct)[0] == 0.0


@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq", "kendall-a"])
@pytest.mark.parametrize("method", ["systems", "both"])
def test_wmt20_segment_level_interval_is_centred_on_the_statistic(coefficient, method):
    # regression: the case, a metric added to wmt20-mqm-ende at segment (summary) level
    ds = me.load_dataset("wmt20-mqm-ende")
    z = ds.matrix("mqm")
    x = np.round(z + np.random.default_rng(1).normal(scale=2.0, size=z.shape))
    out = bootstrap_interval(x, z, level="summary", coefficient=coefficient, method=method, n_resamples=200,
                             rng=0)
    assert out.low <= out.statistic <= out.high
    assert abs(float(np.mean(out.samples)) - out.statistic) < 0.01  # was 0.043 (acc-eq) and 0.086 (tau-eq)


def _bootstrap_bias(level, coefficient, method, trials, rho, seed):
    """Per trial: mean of the bootstrap distribution minus the statistic, on Likert data of 8 systems.

    System level uses 60 inputs: resampling inputs adds noise to the system means and so attenuates any
    system-level correlation by O(1 / M) (a property of BOOT-INPUTS, not of copies); with 60 inputs that
    is below the Monte Carlo error. The other levels use 6 inputs.
    """
    rng = np.random.default_rng(seed)
    m = 60 if level == "system" else 6
    out = []
    for t in range(trials):
        a = rng.multivariate_normal([0, 0], [[1, rho], [rho, 1]], size=8)
        z = np.clip(np.round(2.5 + a[:, 1:] + rng.normal(size=(8, m))), 1, 5)
        x = np.clip(np.round(2.5 + a[:, :1] + rng.normal(size=(8, m))), 1, 5)
        with warnings.catch_warnings():  # 8 systems: few distinct systems per resample, as intended
            warnings.simplefilter("ignore", DegenerateWarning)
            res = bootstrap_interval(x, z, level=level, coefficient=coefficient, method=method, n_resamples=100,
                                     rng=int(rng.integers(2**31)))
        if np.isfinite(res.statistic) and res.samples.size:
            out.append(float(np.mean(res.samples)) - float(res.statistic))
    return np.array(out)


@pytest.mark.parametrize("coefficient", ["acc-eq", "tau-eq", "kendall-a"])
@pytest.mark.parametrize("level, method", [("system", "systems"), ("summary", "systems"), ("summary", "both")])
def test_bootstrap_mean_matches_the_statistic_on_simulated_data(level, coefficient, method):
    # E[mean of r*] - E[r] within Monte Carlo error (4 standard errors); copies counted as pairs gave
    # biases of 5-15 standard errors here
    d = _bootstrap_bias(level, coefficient, method, trials=60, rho=0.7, seed=11)
    se = d.std(ddof=1) / np.sqrt(d.size)
    assert abs(d.mean()) <= 4 * se + 0.003, (d.mean(), se)


# Pearson, Spearman, tau-c and PDP (a Pearson of pair differences) are not averages over pairs: their
# bootstrap distribution shrinks toward 0 by O(1/N) (the plain estimator's own bias; for PDP also the zero
# differences of a system and its copy), so they are checked where that bias vanishes, at rho = 0.
_RHO = {"pearson": 0.0, "spearman": 0.0, "kendall-c": 0.0, "pdp": 0.0}


@pytest.mark.slow
@pytest.mark.parametrize("coefficient", list(me.stats.correlations.coefficients.COEFFICIENTS))
@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
@pytest.mark.parametrize("level", ["system", "summary", "global"])
def test_bootstrap_mean_matches_the_statistic_for_every_coefficient_and_method(level, coefficient, method):
    d = _bootstrap_bias(level, coefficient, method, trials=150, rho=_RHO.get(coefficient, 0.7), seed=5)
    se = d.std(ddof=1) / np.sqrt(d.size)
    assert abs(d.mean()) <= 4 * se + 0.003, (d.mean(), se)


def test_the_pair_analyses_resample_inputs_only_so_no_copy_pair_can_arise():
    # Delta(l, u), top-k and the verdicts pair distinct systems; their bootstraps draw inputs, never systems
    ds = me.load_dataset("realsumm")
    metrics = ["rouge-2.recall"]
    delta = me.delta_correlations(ds, metrics, "litepyramid.recall", n_resamples=20, rng=0)
    topk = me.topk_correlations(ds, metrics, "litepyramid.recall", n_resamples=20, rng=0)
    verdicts = me.system_verdicts(ds, metrics, "litepyramid.recall", n_resamples=20, rng=0)
    assert "ci:boot-inputs" in str(delta.signature) and "ci:boot-inputs" in str(topk.signature)
    assert "test:bootstrap" in str(verdicts.signature)
    assert int(delta.n_pairs[0, 0, -1]) == 24 * 23 // 2  # the pairs of the 24 distinct systems
