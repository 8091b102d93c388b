"""All-pairs permutation kernels on tie-heavy metrics (issue 20) == the reference path, for any batch.

Metrics as real ones are: rounded to 0.5, 0-100 judges in steps of 5, 40% zeros (and one continuous), under
metaeval's default tie rule and with exact ties (``rtol=0``). The numba loops are cached on disk:
a second process loads them instead of compiling.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metaeval.stats.kernels import compiler
from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.significance.pair_permutations import permutation_pairs as _permutation_pairs, shared_pair_kernel as _shared_pair_kernel
from metaeval.stats.significance.permutation import standardize
from metaeval.stats.resampling.draws import permutation_draws
from metaeval.stats.correlations.ties import TIE_RTOL

SRC = Path(__file__).resolve().parents[1] / "src"


def _tie_heavy(seed, n=6, m=20):
    """A continuous metric, one rounded to 0.5, a 0-100 judge in steps of 5, and two with 40% zeros."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    z = np.round(q * 2) / 2
    noise = [rng.normal(scale=0.5 + 0.3 * i, size=(n, m)) for i in range(5)]
    xs = [q + noise[0], np.round((q + noise[1]) * 2) / 2,
          np.clip(np.round((50 + 15 * (q + noise[2])) / 5) * 5, 0, 100)]
    xs += [np.where(rng.random((n, m)) < 0.4, 0.0, np.abs(q + e)) for e in noise[3:]]
    return np.stack([standardize(x) for x in xs]), z


def _reference(xs, z, draws, level, coefficient, undefined, rtol=TIE_RTOL):
    mask = draws.mask()
    zb = np.broadcast_to(z, mask.shape)
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, rtol=rtol)
    return {(i, j): (level_correlation(np.where(mask, xs[j], xs[i]), zb, **kw).statistic
                     - level_correlation(np.where(mask, xs[i], xs[j]), zb, **kw).statistic)
            for i in range(xs.shape[0]) for j in range(i + 1, xs.shape[0])}


def _check(xs, z, level, coefficient, undefined, n_resamples=20, rtol=TIE_RTOL):
    draws = permutation_draws(*z.shape, method="both", n_resamples=n_resamples, rng=4)
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=0.0)
    pairs = [(i, j) for i in range(xs.shape[0]) for j in range(i + 1, xs.shape[0])]
    if compiler.numba_available():  # every pair is computed by the kernel shared by the pairs, none by the reference
        kernel = _shared_pair_kernel(xs, z, pairs, kw, rtol)
        assert kernel is not None
        assert all(kernel.covers(*pair) for pair in pairs if hasattr(kernel, "covers"))
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw, rtol=rtol)
    ref = _reference(xs, z, draws, level, coefficient, undefined, rtol)
    for pair, deltas in ref.items():
        np.testing.assert_array_equal(np.isnan(fast[pair]), np.isnan(deltas))
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)
    for batch in (3, 7):
        again = _permutation_pairs(xs, z, draws, batch, "auto", kw, rtol=rtol)
        for pair in fast:
            np.testing.assert_array_equal(again[pair], fast[pair])


RULES = {"default tie rule": TIE_RTOL, "exact ties": 0.0}
CASES = ([("summary", "pearson")]
         + [(level, c) for level in ("by-system", "global")
            for c in ("kendall-b", "kendall-c", "accuracy", "tau-eq", "spearman")])


@pytest.mark.parametrize("rule", list(RULES))
@pytest.mark.parametrize("level,coefficient", CASES)
@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_tie_heavy_metrics_equal_the_reference_for_any_batch(level, coefficient, undefined, rule):
    xs, z = _tie_heavy(len(coefficient) + len(level))
    _check(xs, z, level, coefficient, undefined, rtol=RULES[rule])


@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_item_grouped_pearson_with_inputs_a_swap_makes_constant(undefined):
    """Two zero-inflated metrics on 3 systems: some masks make a permuted input all zeros (undefined)."""
    rng = np.random.default_rng(5)
    n, m = 3, 40
    q = rng.normal(size=(n, m))
    xs = np.stack([np.where(rng.random((n, m)) < 0.6, 0.0, np.abs(q + rng.normal(size=(n, m)))) for _ in range(3)])
    z = np.round(q * 2) / 2
    draws = permutation_draws(n, m, method="both", n_resamples=60, rng=2)
    ref = _reference(xs, z, draws, "summary", "pearson", undefined)
    mask = draws.mask()
    constant = (np.where(mask, xs[1], xs[0]) == np.where(mask, xs[1], xs[0])[:, :1]).all(axis=1)
    assert constant.any()  # the case is exercised: some permuted inputs are constant
    _check(xs, z, "summary", "pearson", undefined, n_resamples=60)
    assert all(np.isfinite(v).all() for v in ref.values())


@pytest.mark.parametrize("coefficient", ["kendall-b", "spearman"])
def test_by_system_rows_a_swap_makes_constant_leave_the_mean(coefficient):
    """Binary metrics on rows of 3 segments: some permuted rows are constant and are skipped, as in the
    generic path (the compiled counts flag them and those resamples take the generic path)."""
    rng = np.random.default_rng(8)
    n, m = 5, 3
    xs = rng.integers(0, 2, size=(3, n, m)).astype(float)
    z = rng.normal(size=(n, m)).round(1)
    _check(xs, z, "by-system", coefficient, "skip", n_resamples=50)


def _run(code: str, env: dict) -> str:
    full = {**os.environ, "PYTHONPATH": str(SRC), **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=full,
                          timeout=600).stdout.strip()


_CALL = """
import numpy as np
{patch}
from metaeval.stats.kernels.kendall import calibration_compiled as compiled
from metaeval.stats.kernels.kendall.calibration import best_integer_curves
v, i = best_integer_curves(np.array([0, 1, 0]), np.array([1, 0, 2]), np.array([1, -1, 2]),
                           np.array([True, False, True]), True, np.ones((4, 2), dtype=np.int64))
stats = compiled.integer_curve_maxima.stats
print(int(v[0]), int(i[0]), sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), stats.cache_path)
"""


def test_compiled_loops_are_cached_for_the_next_process(tmp_path):
    pytest.importorskip("numba")
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    first = _run(_CALL.format(patch=""), env).split()
    second = _run(_CALL.format(patch=""), env).split()
    assert first[:2] == second[:2] == ["5", "2"]  # B = 1 + 0 + 2; B + 1 - 1 + 2 = 5 at the second candidate
    assert (first[2], first[3]) == ("0", "1")  # compiled, then written to the cache
    assert (second[2], second[3]) == ("1", "0")  # loaded, not compiled
    assert second[4].startswith(str(tmp_path / "numba"))


# numba's choice when the package directory is not writable (site-packages read-only): simulated by
# refusing the in-tree locator (this test runs as any user, including root, who can write everywhere)
_READ_ONLY = """
from numba.core import caching
caching.InTreeCacheLocator.from_function = classmethod(lambda cls, *a: None)
caching.InTreeCacheLocatorFsAgnostic.from_function = classmethod(lambda cls, *a: None)
"""


def test_read_only_package_directory_caches_in_the_user_cache(tmp_path):
    pytest.importorskip("numba")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path), "NUMBA_CACHE_DIR": ""}
    first = _run(_CALL.format(patch=_READ_ONLY), env).split()
    second = _run(_CALL.format(patch=_READ_ONLY), env).split()
    assert (first[2], first[3], second[2], second[3]) == ("0", "1", "1", "0")
    assert second[4].startswith(str(tmp_path / "cache" / "numba"))


def test_no_writable_cache_location_compiles_in_the_process(tmp_path):
    pytest.importorskip("numba")
    patch = ("from numba.core import caching\n"
             "for name in ('UserProvidedCacheLocator', 'InTreeCacheLocator', 'InTreeCacheLocatorFsAgnostic', "
             "'UserWideCacheLocator', 'IPythonCacheLocator', 'ZipCacheLocator'):\n"
             "    getattr(caching, name).from_function = classmethod(lambda cls, *a: None)\n")
    code = _CALL.format(patch=patch).replace("stats = compiled.integer_curve_maxima.stats\n", "").replace(
        "sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), stats.cache_path",
        "compiled.integer_curve_maxima._cache.__class__.__name__")
    out = _run(code, {"NUMBA_CACHE_DIR": ""}).split()
    assert out == ["5", "2", "NullCache"]


@pytest.mark.parametrize("level", ["by-system", "global"])
@pytest.mark.parametrize("coefficient", ["kendall-b", "acc-eq", "spearman"])
@pytest.mark.parametrize("rule", list(RULES))
def test_graded_metrics_counted_from_contingency_tables_equal_the_reference(level, coefficient, rule):
    """Two graded metrics (rounded to 0.5, a 0-100 judge in steps of 5): few tie groups per row, so the
    tied groups are counted from contingency tables instead of the ordered pass."""
    rng = np.random.default_rng(12)
    n, m = 4, 100
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    z = np.round(q * 2) / 2
    xs = np.stack([standardize(np.round((q + rng.normal(size=(n, m))) * 2) / 2),
                   standardize(np.clip(np.round((50 + 15 * (q + rng.normal(size=(n, m)))) / 5) * 5, 0, 100))])
    if compiler.numba_available():
        kernel = _shared_pair_kernel(xs, z, [(0, 1)], dict(level=level, coefficient=coefficient,
                                                           undefined="skip", tie_threshold=0.0), RULES[rule])
        _, args = kernel._tied_inputs(0, 1)
        assert (args[8] > 0).all()  # every tied group from the tables
    _check(xs, z, level, coefficient, "skip", rtol=RULES[rule])
