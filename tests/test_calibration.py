"""Statistical calibration (slow): type-I error of the tests and coverage of the intervals.

Run with::

    METAEVAL_CALIBRATION_OUT=docs/calibration.md .venv/bin/python -m pytest -m slow tests/test_calibration.py

which also rewrites ``docs/calibration.md`` with the measured numbers. Only the permutation tests' type-I
error is asserted (it is exact by construction up to Monte Carlo error); every other number is measured
and reported, not asserted.

Synthetic model (no input effects): system effects ``(a_i, b_i)`` bivariate normal with unit variances and
correlation ``rho``; ``X_ij = a_i + s e_ij``, ``Z_ij = b_i + s f_ij``, all noise i.i.d. N(0, 1). The
population Kendall tau of the system means over M inputs is ``(2/pi) asin(rho / (1 + s^2 / M))`` and of
one input ``(2/pi) asin(rho / (1 + s^2))``; sample Kendall tau is unbiased for both, so they are the
targets of the coverage study. Under H0 the second metric ``Y`` is an independent copy of ``X`` given
``Z`` (``Y_ij = a_i + s e'_ij``), so ``X`` and ``Y`` are exchangeable cell by cell.
"""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from metaeval.stats.resampling.bootstrap import bootstrap_interval
from metaeval.stats.correlations.fisher import fisher_interval
from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.significance.paired_bootstrap import bootstrap_test
from metaeval.stats.significance.permutation import permutation_test
from metaeval.stats.significance.williams import williams_test

pytestmark = pytest.mark.slow

ALPHA = 0.05
N_NULL = 2000
N_COVER = 300
RHO, NOISE, NOISY = 0.6, 1.0, 10.0


def _dataset(rng, n, m, noise=NOISE):
    cov = [[1.0, RHO], [RHO, 1.0]]
    ab = rng.multivariate_normal([0.0, 0.0], cov, size=n)
    x = ab[:, :1] + noise * rng.normal(size=(n, m))
    z = ab[:, 1:] + noise * rng.normal(size=(n, m))
    y = ab[:, :1] + noise * rng.normal(size=(n, m))
    return x, y, z


def _rate(flags):
    flags = np.asarray(flags, dtype=float)
    return flags.mean(), flags.std() / np.sqrt(flags.size)


def _type_one_errors(lines):
    rows = []
    rng = np.random.default_rng(20210101)
    n, m = 16, 100
    configs = [("permutation", lvl, coef, NOISE) for lvl in ("system", "summary") for coef in ("kendall-b", "pearson")]
    # noisy items (s = 10): system means of X and Y differ in ranking, so system-level Kendall deltas rarely tie
    configs += [("permutation", "system", "kendall-b", NOISY), ("permutation", "system", "pearson", NOISY)]
    configs += [("bootstrap", "system", "kendall-b", NOISE), ("bootstrap", "summary", "kendall-b", NOISE),
                ("williams", "system", "pearson", NOISE)]
    results = {}
    for test, level, coef, noise in configs:
        n_data = N_NULL if test != "bootstrap" else 1000
        t0 = time.perf_counter()
        rejected = []
        for _ in range(n_data):
            x, y, z = _dataset(rng, n, m, noise)
            if test == "permutation":
                p = permutation_test(x, y, z, level=level, coefficient=coef, method="both", alternative="greater",
                                     n_resamples=99, rng=rng).pvalue
            elif test == "bootstrap":
                p = bootstrap_test(x, y, z, level=level, coefficient=coef, method="both", alternative="greater",
                                   n_resamples=200, rng=rng).pvalue
            else:
                kw = dict(level="system", coefficient="pearson")
                rxz = float(level_correlation(x, z, **kw).statistic)
                ryz = float(level_correlation(y, z, **kw).statistic)
                rxy = float(level_correlation(x, y, **kw).statistic)
                p = float(williams_test(rxz, ryz, rxy, n, alternative="greater").pvalue)
            rejected.append(p <= ALPHA)
        rate, se = _rate(rejected)
        seconds = time.perf_counter() - t0
        results[test, level, coef, noise] = rate
        method = {"permutation": "PERM-BOTH, k=99", "bootstrap": "BOOT-BOTH, k=200", "williams": "-"}[test]
        rows.append(f"| {test} | {method} | {level} | {coef} | {noise:g} | {n_data} | {rate:.4f} | {se:.4f} |"
                    f" {seconds:.1f} |")
    lines += [
        "## Type-I error at alpha = 0.05 (H0 true: Y is an exchangeable copy of X given Z)",
        "",
        f"N = {n} systems, M = {m} inputs, rho = {RHO}, item noise s as listed, one-sided"
        " (`alternative='greater'`).",
        "",
        "| test | resampling | level | coefficient | noise s | datasets | rejection rate | s.e. | seconds |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
    ]
    return results


def _coverage(lines):
    rows = []
    rng = np.random.default_rng(20210102)
    m = 100
    results = {}
    for n in (16, 25, 50):
        for level in ("system", "summary"):
            denom = 1 + NOISE**2 / m if level == "system" else 1 + NOISE**2
            target = 2 / np.pi * np.arcsin(RHO / denom)
            covered = {key: [] for key in ("fisher", "systems", "inputs", "both")}
            widths = {key: [] for key in covered}
            t0 = time.perf_counter()
            for _ in range(N_COVER):
                x, _, z = _dataset(rng, n, m)
                r = float(level_correlation(x, z, level=level, coefficient="kendall-b").statistic)
                lo, hi = fisher_interval(r, n, coefficient="kendall-b", confidence_level=0.95)
                covered["fisher"].append(lo <= target <= hi)
                widths["fisher"].append(hi - lo)
                for method in ("systems", "inputs", "both"):
                    out = bootstrap_interval(x, z, level=level, coefficient="kendall-b", method=method,
                                             n_resamples=200, rng=rng)
                    covered[method].append(out.low <= target <= out.high)
                    widths[method].append(out.high - out.low)
            seconds = time.perf_counter() - t0
            cells = []
            for key in covered:
                rate, _ = _rate(covered[key])
                results[n, level, key] = rate
                cells.append(f"{rate:.3f} ({np.mean(widths[key]):.3f})")
            rows.append(f"| {n} | {level} | {target:.3f} | " + " | ".join(cells) + f" | {seconds:.1f} |")
    lines += [
        "## Coverage of 95% intervals for Kendall tau-b (mean width in parentheses)",
        "",
        f"M = {m} inputs, rho = {RHO}, noise s = {NOISE}, {N_COVER} datasets per row, 200 bootstrap resamples,",
        "percentile intervals; Fisher uses n = N systems at both levels (Bonett & Wright 2000 constants).",
        "",
        "| N | level | true tau | Fisher | BOOT-SYSTEMS | BOOT-INPUTS | BOOT-BOTH | seconds |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
    ]
    return results


def test_calibration():
    lines = [
        "# Calibration of metaeval's tests and intervals",
        "",
        "Produced by `METAEVAL_CALIBRATION_OUT=docs/calibration.md .venv/bin/python -m pytest -m slow "
        "tests/test_calibration.py` (model and targets: see that file's docstring).",
        "",
    ]
    t0 = time.perf_counter()
    errors = _type_one_errors(lines)
    coverage = _coverage(lines)
    lines += [
        "## Reading the numbers",
        "",
        "- The permutation tests are exact up to Monte Carlo error: `(1 + count) / (1 + k)` with `>=`. System-level",
        "  Kendall is *conservative* here: with M = 100 inputs most PERM-BOTH permutations leave the ranking of the",
        "  16 system means unchanged, so `delta_s == delta` has a large probability and the ties are counted as",
        "  extreme (valid, not randomized). With noisier items (s = 10) the system rankings of X and Y differ,",
        "  ties are rare and the rate is within [0.04, 0.06] like every other configuration (asserted).",
        "- The paired bootstrap test (BOOT-BOTH, shift method of Berg-Kirkpatrick et al. 2012) is very",
        "  conservative under H0, in line with Deutsch et al. (2021), who found it less powerful than PERM-BOTH.",
        "- Coverage: BOOT-INPUTS treats the systems as fixed and badly under-covers a target that averages over",
        "  systems; BOOT-SYSTEMS and BOOT-BOTH are close to 95%. Fisher at summary level uses n = N systems for an",
        "  average of M correlations and is far too wide (coverage 1.0), as Deutsch et al. (2021) report.",
        "",
        f"Total runtime: {time.perf_counter() - t0:.0f} s on the development machine (2 shared cores).",
        "",
    ]
    out = os.environ.get("METAEVAL_CALIBRATION_OUT")
    if out:
        kept = ""  # sections produced elsewhere (`metaeval mt`, tests/test_mt_calibration.py) are kept
        if os.path.exists(out):
            text = open(out, encoding="utf-8").read()
            marker = text.find("\n\n## `metaeval mt`")
            kept = text[marker:] if marker >= 0 else ""
        with open(out + ".tmp", "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + kept)
        os.replace(out + ".tmp", out)
    for (test, level, coef, noise), rate in errors.items():
        if test != "permutation":
            continue
        if (level, coef, noise) == ("system", "kendall-b", NOISE):
            # discrete statistic: most permutations reproduce the observed ranking, the ties count as
            # "at least as extreme", so the test is valid but conservative (documented in calibration.md)
            assert rate <= 0.06, (level, coef, rate)
        else:
            assert 0.04 <= rate <= 0.06, (level, coef, rate)
    assert all(0.0 <= v <= 1.0 for v in coverage.values())
