"""Kernels shared by all metric pairs (stats/kernels/shared.py) == the reference path, for any batch."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.stats.correlations.levels import level_correlation
from metaeval.stats.kernels import compiler
from metaeval.stats.significance.pair_permutations import permutation_pairs as _permutation_pairs, shared_pair_kernel as _shared_pair_kernel
from metaeval.stats.significance.permutation import standardize
from metaeval.stats.resampling.draws import permutation_draws


def _data(seed, n=7, m=30, p=4):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    z = np.round(q * 2) / 2  # tie-heavy human
    z[2] = 0.5  # a system the human cannot order (by-system level)
    z[:, 3] = 1.0  # an input the human cannot order
    xs = np.stack([standardize(q + rng.normal(scale=0.5 + 0.3 * i, size=(n, m))) for i in range(p)])
    return xs, z


def _reference(xs, z, draws, level, coefficient, undefined, rtol=1e-9):
    mask = draws.mask()
    zb = np.broadcast_to(z, mask.shape)
    out = {}
    for i in range(xs.shape[0]):
        for j in range(i + 1, xs.shape[0]):
            kw = dict(level=level, coefficient=coefficient, undefined=undefined, rtol=rtol)
            out[i, j] = (level_correlation(np.where(mask, xs[j], xs[i]), zb, **kw).statistic
                         - level_correlation(np.where(mask, xs[i], xs[j]), zb, **kw).statistic)
    return out


PAIR_COUNTS = ("kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq", "spearman")
CASES = ([("global", "pearson"), ("summary", "pearson"), ("by-system", "pearson")]
         + [(level, c) for level in ("summary", "by-system", "global") for c in PAIR_COUNTS])


@pytest.mark.parametrize("level,coefficient", CASES)
@pytest.mark.parametrize("undefined", ["skip", "zero"])
def test_shared_kernels_equal_reference_and_ignore_batch(level, coefficient, undefined):
    xs, z = _data(len(coefficient))
    draws = permutation_draws(*z.shape, method="both", n_resamples=40, rng=1)
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=0.0)
    pairs = [(i, j) for i in range(xs.shape[0]) for j in range(i + 1, xs.shape[0])]
    if compiler.numba_available():  # every case has a kernel shared by the pairs (none falls back to the reference)
        assert _shared_pair_kernel(xs, z, pairs, kw) is not None
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw)
    ref = _reference(xs, z, draws, level, coefficient, undefined)
    for pair, deltas in ref.items():
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)
        assert np.isfinite(deltas).all()
    for batch in (1, 7):
        again = _permutation_pairs(xs, z, draws, batch, "auto", kw)
        for pair in fast:
            np.testing.assert_array_equal(again[pair], fast[pair])


@pytest.mark.parametrize("level", ["by-system", "global"])
@pytest.mark.parametrize("coefficient", ["kendall-b", "spearman", "acc-eq"])
def test_compiled_group_kernels_without_numba_use_the_reference_path(level, coefficient, monkeypatch):
    from metaeval.stats.kernels import compiler

    xs, z = _data(11)
    draws = permutation_draws(*z.shape, method="both", n_resamples=30, rng=2)
    kw = dict(level=level, coefficient=coefficient, undefined="skip", tie_threshold=0.0)
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw)
    monkeypatch.setattr(compiler, "numba_available", lambda: False)
    pairs = list(fast)
    assert _shared_pair_kernel(xs, z, pairs, kw) is None
    slow = _permutation_pairs(xs, z, draws, None, "auto", kw)
    ref = _permutation_pairs(xs, z, draws, None, "reference", kw)
    for pair in pairs:  # the per-pair kernels of the fallback agree with the reference to rounding
        np.testing.assert_allclose(slow[pair], ref[pair], rtol=0, atol=1e-12)
        np.testing.assert_allclose(fast[pair], slow[pair], rtol=0, atol=1e-12)


@pytest.mark.parametrize("coefficient", ["kendall-b", "kendall-c", "accuracy", "spearman"])
def test_compiled_summary_terms_equal_the_dense_numpy_terms(coefficient):
    pytest.importorskip("numba")
    from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled
    from metaeval.stats.kernels.kendall.summary_pairs import SummaryPairsShared

    xs, z = _data(5, n=9, m=25)
    pairs = [(0, 1), (0, 3), (2, 1), (3, 2)]
    draws = permutation_draws(*z.shape, method="both", n_resamples=50, rng=4)
    kernels = [SummaryPairsShared(xs, z, coefficient, "zero"),
               GroupPairsCompiled(xs, z, coefficient, "zero", "summary")]
    for kernel in kernels:
        kernel.prepare(pairs)
    from metaeval.stats.kernels.batch import BatchCache

    cache = BatchCache(draws, slice(0, 50))
    for i, j in pairs:
        np.testing.assert_array_equal(kernels[0].deltas(cache, i, j), kernels[1].deltas(cache, i, j))


@pytest.mark.parametrize("coefficient", ["kendall-b", "spearman"])
def test_compiled_cross_sums_equal_the_numpy_terms(coefficient, monkeypatch):
    """The pairs' integer terms from the compiled cross sums (inputs as the vector axis, int32 sums) equal the
    numpy terms of the same formula: 8-bit (Kendall) and 16-bit (Spearman) human weights, 32 systems, a tied
    input set to 0 for the pairs that list it."""
    pytest.importorskip("numba")
    from metaeval.stats.kernels import compiler
    from metaeval.stats.kernels.kendall.summary_pairs import SummaryPairsShared

    xs, z = _data(6, n=32, m=40, p=5)
    pairs = [(0, 1), (0, 3), (2, 1), (3, 4), (4, 0)]
    tied = {(0, 1): [5], (2, 1): [5, 7]}
    fast = SummaryPairsShared(xs, z, coefficient, "skip", tied)._chunk_terms(pairs)
    monkeypatch.setattr(compiler, "numba_available", lambda: False)
    slow = SummaryPairsShared(xs, z, coefficient, "skip", tied)._chunk_terms(pairs)
    for compiled, numpy_terms in zip(fast, slow):
        np.testing.assert_array_equal(compiled, numpy_terms)
    d, g = fast
    assert g.dtype == np.int64 and np.abs(g).max() > 32  # beyond int8
    assert not g[0, 5].any() and not g[2, 7].any() and g[3, 5].any() and d[5, 0] == 0


def test_global_level_with_a_constant_human_is_nan():
    xs, z = _data(2)
    z[:] = 3.0
    draws = permutation_draws(*z.shape, method="both", n_resamples=10, rng=0)
    for coefficient in ("kendall-b", "spearman"):
        kw = dict(level="global", coefficient=coefficient, undefined="zero", tie_threshold=0.0)
        fast = _permutation_pairs(xs, z, draws, None, "auto", kw)
        assert all(np.isnan(v).all() for v in fast.values())


@pytest.mark.parametrize("level", ["summary", "by-system", "global"])
@pytest.mark.parametrize("coefficient", ["kendall-b", "spearman"])
def test_pairs_with_metric_ties_use_their_own_path_and_the_others_the_shared_kernel(level, coefficient):
    from metaeval.stats.kernels.kendall.summary_pairs import tie_free_pairs

    xs, z = _data(3)
    xs[1, 0, 5] = xs[0, 2, 5]  # metrics 0 and 1 tie within input 5, row 0 (and globally)
    xs[3, 4, 7] = xs[3, 6, 9]  # metric 3 ties with itself (global level only)
    xs[2, 1, 4] = xs[0, 1, 8]  # metrics 0 and 2 tie within row 1 (by-system and global levels)
    ok = tie_free_pairs(xs, level)
    expected = np.ones((4, 4), dtype=bool)
    if level != "by-system":
        expected[0, 1] = expected[1, 0] = False
    if level == "global":
        expected[3, :] = expected[:, 3] = False
    if level != "summary":
        expected[0, 2] = expected[2, 0] = False
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_array_equal(ok[off], expected[off])
    draws = permutation_draws(*z.shape, method="both", n_resamples=20, rng=1)
    kw = dict(level=level, coefficient=coefficient, undefined="skip", tie_threshold=0.0)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    if compiler.numba_available():
        kernel = _shared_pair_kernel(xs, z, pairs, kw)
        # by-system and global: a pair's groups with a tie are counted per resample (compiled), the other
        # groups come from the shared products; summary: pairs with a tie take their own kernels
        covered = [True] * len(pairs) if level != "summary" else [bool(ok[pair]) for pair in pairs]
        assert [kernel.covers(*pair) for pair in pairs] == covered
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw)
    ref = _reference(xs, z, draws, level, coefficient, "skip")
    for pair, deltas in ref.items():
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)


def test_metric_ties_fall_back_to_the_pair_kernels():
    from metaeval.stats.kernels.kendall.summary_pairs import tie_free

    xs, z = _data(3)
    assert tie_free(xs)
    xs[1, 0, 5] = xs[0, 2, 5]  # two metrics tie within input 5
    assert not tie_free(xs)
    draws = permutation_draws(*z.shape, method="both", n_resamples=20, rng=1)
    kw = dict(level="summary", coefficient="acc-eq", undefined="skip", tie_threshold=0.0)
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw)
    ref = _reference(xs, z, draws, "summary", "acc-eq", "skip")
    for pair, deltas in ref.items():
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)


@pytest.mark.parametrize("coefficient", ["kendall-a", "kendall-b", "kendall-c", "accuracy", "acc-eq", "tau-eq"])
def test_compiled_global_bootstrap_equals_numpy_reference(coefficient):
    pytest.importorskip("numba")
    from metaeval.stats.resampling.bootstrap import bootstrap_samples
    from metaeval.stats.kernels.kendall.global_bootstrap import global_pairs_kernel
    from metaeval.stats.resampling.draws import bootstrap_draws

    rng = np.random.default_rng(7)
    x = rng.integers(0, 6, size=(6, 9)).astype(float)  # tie-heavy metric and human
    z = rng.integers(0, 4, size=(6, 9)).astype(float) / 3.0
    draws = bootstrap_draws(6, 9, method="both", n_resamples=40, rng=1)
    assert global_pairs_kernel(x, z, coefficient, draws, 0.0) is not None
    fast = bootstrap_samples(x, z, level="global", coefficient=coefficient, draws=draws)
    ref = bootstrap_samples(x, z, level="global", coefficient=coefficient, draws=draws, engine="reference")
    np.testing.assert_allclose(fast, ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(np.isnan(fast), np.isnan(ref))
    again = bootstrap_samples(x, z, level="global", coefficient=coefficient, draws=draws, batch=3)
    np.testing.assert_array_equal(again, fast)


def test_import_does_not_load_numba():
    import subprocess
    import sys

    code = "import metaeval.stats.kernels.kendall.global_bootstrap, sys; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- Kendall tau-b of groups with metric ties: the compiled sweep over blocks of resamples -------------------
def _tie_heavy(seed, n=6, m=40):
    """Standardized metrics of the kinds of issue 20 (continuous, rounded to 0.5, 0-100 judges in steps of 5,
    40% zeros) and a human with many ties; metrics 1 and 2 are constant and equal in system 4 (a permuted
    group that is constant for every mask)."""
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    z = -(rng.poisson(np.exp(-0.8 * q)) + 5.0 * rng.poisson(0.2 * np.exp(-0.8 * q)))
    noisy = [q + rng.normal(scale=1.0 + 0.3 * i, size=(n, m)) for i in range(5)]
    xs = [noisy[0], np.round(noisy[1] * 2) / 2, np.round(noisy[2] * 2) / 2,
          5.0 * np.round(20.0 / (1.0 + np.exp(-noisy[3]))), np.where(noisy[4] < np.quantile(noisy[4], 0.4), 0.0, noisy[4])]
    std = np.stack([standardize(x) for x in xs])
    std[1, 4] = std[2, 4] = std[1, 4, 0]
    return std, z


@pytest.mark.parametrize("level", ["by-system", "global"])
@pytest.mark.parametrize("rtol", [1e-9, 0.0])
def test_kendall_b_with_metric_ties_equals_reference_and_ignores_batch(level, rtol):
    pytest.importorskip("numba")
    xs, z = _tie_heavy(3)
    draws = permutation_draws(*z.shape, method="both", n_resamples=40, rng=2)
    kw = dict(level=level, coefficient="kendall-b", undefined="skip", tie_threshold=0.0)
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    kernel = _shared_pair_kernel(xs, z, pairs, kw, rtol)
    assert all(kernel.covers(*pair) and kernel.tied.get(pair) for pair in pairs)  # every pair has tied groups
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw, rtol=rtol)
    again = _permutation_pairs(xs, z, draws, 7, "auto", kw, rtol=rtol)
    ref = _reference(xs, z, draws, level, "kendall-b", "skip", rtol)
    for pair, deltas in ref.items():
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(np.isnan(fast[pair]), np.isnan(deltas))
        np.testing.assert_array_equal(again[pair], fast[pair])


@pytest.mark.parametrize("level", ["by-system", "global"])
def test_near_ties_of_tied_groups_are_decided_per_resample(level):
    """Values closer than the tolerance of their pooled values tie in some permuted vectors and not in others
    (the tolerance follows the spread of each X'): the sweep's per-resample corrections match the reference."""
    pytest.importorskip("numba")
    from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled

    rng = np.random.default_rng(5)
    n, m = 5, 40
    z = rng.integers(0, 4, size=(n, m)).astype(float)
    base = np.round(rng.normal(size=(3, n, m)) * 2) / 2
    shift = rng.choice([0.0, 0.0, 1e-9, 3e-9, 6e-9, 1e-8], size=base.shape) * rng.choice([-1, 1], size=base.shape)
    xs = np.stack([standardize(x) for x in base + shift])
    draws = permutation_draws(n, m, method="both", n_resamples=30, rng=1)
    kw = dict(level=level, coefficient="kendall-b", undefined="skip", tie_threshold=0.0)
    for rtol in (1e-9, 1e-8):
        kernel = _shared_pair_kernel(xs, z, [(0, 1)], kw, rtol)
        _, _, _, _, enew, near = kernel._sweep_inputs(0, 1, np.array(kernel.tied[0, 1]))
        assert GroupPairsCompiled._sweep_regions(enew, near).shape[1] > 0
        fast = _permutation_pairs(xs, z, draws, None, "auto", kw, rtol=rtol)
        ref = _reference(xs, z, draws, level, "kendall-b", "skip", rtol)
        for pair, deltas in ref.items():
            np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)


def test_tied_sweep_counts_equal_the_ordered_pass_for_any_block_width():
    """S, tied pairs and distinct values of X' and Y' from the sweep == the per-resample ordered pass."""
    pytest.importorskip("numba")
    from metaeval.stats.kernels.kendall.group_counts import tied_group_counts
    from metaeval.stats.kernels.kendall.tied_counts import tied_sweep_counts
    from metaeval.stats.kernels.kendall.group_pairs import GroupPairsCompiled
    from metaeval.stats.kernels.kendall.summary_pairs import tied_groups

    xs, z = _tie_heavy(4)
    draws = permutation_draws(*z.shape, method="both", n_resamples=37, rng=0)
    # exact ties (rtol=0): the ordered pass's rule is the generic one
    for i, j in [(0, 1), (1, 3), (3, 4), (0, 4)]:
        kernel = GroupPairsCompiled(xs, z, "kendall-b", "skip", "by-system", tied_groups(xs, "by-system", rtol=0.0),
                                    rtol=0.0)
        groups, args = kernel._tied_inputs(i, j)
        bits = np.ascontiguousarray(draws.cell_bits().reshape(z.size, -1))
        ordered = tied_group_counts(args[:4], *args[4:7], args[7:], np.ascontiguousarray(bits.T), 0.0, False)
        _, eflat, esrc, ez, enew, near = kernel._sweep_inputs(i, j, groups)
        assert not near.any()
        sizes = np.diff(np.flatnonzero(np.append(enew.ravel(), 1)))
        assert sizes.max() >= 8 and (sizes < 8).any()  # both ways of counting a tie group are used
        for width in (1, 5, 128):
            for grouped in (2, 8, 10 ** 9):  # tie groups per human rank (from 2 values, 8) or value by value
                swept = tied_sweep_counts(eflat, esrc, ez, enew, int(ez.max()) + 1, bits, width, grouped)
                np.testing.assert_array_equal(swept[..., :2], ordered[..., :2])  # S, tied pairs
                np.testing.assert_array_equal(swept[..., 2], ordered[..., 3])  # distinct values


def test_sweep_width_gives_every_thread_a_block():
    """One group (global level) is split into blocks of at least SPLIT_WIDTH resamples for the threads;
    enough groups keep SWEEP_WIDTH (the counts do not depend on the width: the sweep test above)."""
    pytest.importorskip("numba")
    from metaeval.stats.kernels import parts
    from metaeval.stats.kernels.kendall.tied_counts import SPLIT_WIDTH, SWEEP_WIDTH, sweep_width

    threads = parts.threads()
    assert sweep_width(128, 15) == SWEEP_WIDTH if threads <= 15 else True
    assert sweep_width(8 * SWEEP_WIDTH, 1) == SWEEP_WIDTH if threads <= 8 else True
    one = sweep_width(128, 1)
    assert one == (SWEEP_WIDTH if threads == 1 else max(SPLIT_WIDTH, -(-128 // threads)))
    assert sweep_width(16, 1) == (SWEEP_WIDTH if threads == 1 else SPLIT_WIDTH)


@pytest.mark.parametrize("coefficient", ["acc-eq", "kendall-b", "spearman", "tau-eq"])
@pytest.mark.parametrize("rtol", [1e-9, 0.0])
def test_summary_pairs_with_a_few_tied_inputs_correct_them_per_resample(coefficient, rtol):
    """A pair whose metrics tie within a few inputs keeps the shared products for its other inputs and counts
    the tied ones per resample: equal to the reference, any batch; the tie-free pairs are unaffected."""
    pytest.importorskip("numba")
    from metaeval.stats.significance.pair_permutations import tied_pair_kernel as _tied_pair_kernel

    xs, z = _data(8, n=9, m=40, p=4)
    xs[1, 0, 5] = xs[0, 2, 5]  # metrics 0 and 1 tie within input 5
    xs[2, 3, 9] = xs[2, 6, 9] + 1e-12  # metric 2 nearly ties with itself within input 9
    draws = permutation_draws(*z.shape, method="both", n_resamples=30, rng=3)
    kw = dict(level="summary", coefficient=coefficient, undefined="skip", tie_threshold=0.0)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    shared = _shared_pair_kernel(xs, z, pairs, kw, rtol)
    left = [pair for pair in pairs if not shared.covers(*pair)]
    tied = _tied_pair_kernel(xs, z, left, kw, rtol)
    assert (0, 1) in left and all(tied.covers(*pair) for pair in left)
    assert tied.tied[0, 1] == [5]
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw, rtol=rtol)
    again = _permutation_pairs(xs, z, draws, 4, "auto", kw, rtol=rtol)
    ref = _reference(xs, z, draws, "summary", coefficient, "skip", rtol)
    for pair, deltas in ref.items():
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(again[pair], fast[pair])


def test_reference_pairs_do_not_set_the_batch_of_the_others(monkeypatch):
    """Pairs left to the reference path run in their own batches after the fast pairs' batches."""
    from metaeval.stats.significance import pair_permutations as pairs_module

    xs, z = _data(9, n=6, m=30, p=3)
    draws = permutation_draws(*z.shape, method="both", n_resamples=50, rng=0)
    kw = dict(level="summary", coefficient="acc-eq", undefined="skip", tie_threshold=0.0)
    expected = _permutation_pairs(xs, z, draws, None, "auto", kw)
    xs[1, 0, 5] = xs[0, 2, 5]
    from metaeval.stats.kernels import routes

    untied = tuple(route for route in routes.PAIR_ROUTES if route.name not in
                   ("kendall-blocks", "summary-pair-counts-tied", "group-pair-counts-tied"))
    monkeypatch.setattr(routes, "PAIR_ROUTES", untied)  # (0, 1): the reference path
    sizes = []
    real = pairs_module._permutation_batch
    monkeypatch.setattr(pairs_module, "_permutation_batch",
                        lambda out, pairs, std, z, draws, sl, *rest: (sizes.append(sl.stop - sl.start),
                                                                       real(out, pairs, std, z, draws, sl, *rest)))
    fast = _permutation_pairs(xs, z, draws, None, "auto", kw)
    ref = _reference(xs, z, draws, "summary", "acc-eq", "skip")
    assert sizes == [50]  # one batch for the fast pairs, however small the reference pairs' batches
    for pair, deltas in ref.items():
        np.testing.assert_allclose(fast[pair], deltas, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fast[0, 2], expected[0, 2])  # a pair with neither changed metric


@pytest.mark.parametrize("level", ["summary", "by-system", "global"])
def test_tied_groups_are_the_groups_whose_chains_join_the_pair(level):
    """By hand: in each group, sort the pooled values of every metric, cut the sorted list where two
    neighbours do not tie; a pair may tie in the group when one run holds values of both metrics, or two
    values of one of them."""
    from metaeval.stats.correlations.ties import are_tied
    from metaeval.stats.kernels.kendall.summary_pairs import tied_groups

    rng = np.random.default_rng(7)
    std = np.round(rng.normal(size=(5, 6, 9)) * 1.5) / 2
    std[3] = rng.normal(size=(6, 9))  # a continuous metric: ties only through the chains of others
    p, n, m = std.shape
    cells = {"summary": [(slice(None), j) for j in range(m)], "by-system": [(i, slice(None)) for i in range(n)],
             "global": [(slice(None), slice(None))]}[level]
    expected: dict = {}
    for g, (rows, cols) in enumerate(cells):
        values = sorted((float(v), k) for k in range(p) for v in np.ravel(std[k][rows, cols]))
        runs, run = [], [values[0]]
        for prev, cur in zip(values, values[1:]):
            if are_tied(np.array(cur[0]), np.array(prev[0])):
                run.append(cur)
            else:
                runs.append(run)
                run = [cur]
        runs.append(run)
        for run in runs:
            if len(run) < 2:
                continue
            owners = [k for _, k in run]
            for a in range(p):
                for b in range(a + 1, p):
                    if (a in owners and b in owners) or owners.count(a) > 1 or owners.count(b) > 1:
                        expected.setdefault((a, b), set()).add(g)
    got = tied_groups(std, level)
    assert {pair: sorted(groups) for pair, groups in expected.items()} == got
    assert all(isinstance(g, int) for groups in got.values() for g in groups)
