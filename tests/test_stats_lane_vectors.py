"""The 16-lane vector reads of the block tables (stats/kernels/lane_vectors.py) == the same arithmetic in numpy,
bit for bit; the lanes' sums do not depend on the block plan (kendall_blocks._LANE_ENTRY_COST)."""
from __future__ import annotations

import numpy as np
import pytest

numba = pytest.importorskip("numba")

from metaeval.stats.kernels.compiler.intrinsics import LANES, lane_weighted_sum, lane_word  # noqa: E402


@numba.njit
def _words(table, rows, bias, words):
    for r in range(rows.shape[1]):
        lane_word(table, rows, r, bias, words[r])


@numba.njit
def _weighted(table, rows, bias, weights, out):
    for r in range(rows.shape[1]):
        lane_weighted_sum(table, rows, r, bias, weights, out)


def _packed_table(rng, entries, dtype):
    """Entries whose sums over 3 tables keep four valid 8-bit fields (S in [-40, 40], T in [0, 60])."""
    s_x, s_y = rng.integers(-13, 14, size=(2, entries, LANES))
    t_x, t_y = rng.integers(0, 21, size=(2, entries, LANES))
    return (s_x + (s_y << 8) + (t_x << 16) + (t_y << 24)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("index", [np.uint16, np.uint32])
def test_lane_word_is_the_wrapping_sum_of_the_rows(dtype, index):
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    table = rng.integers(info.min, info.max, size=(50, LANES), dtype=dtype, endpoint=True)
    rows = rng.integers(0, 50, size=(4, 33)).astype(index)
    bias = int(rng.integers(0, 1 << 20))
    words = np.zeros((33, LANES), dtype=dtype)
    _words(table, rows, bias, words)
    with np.errstate(over="ignore"):
        expected = np.full((33, LANES), bias, dtype=dtype) + table[rows].sum(axis=0, dtype=dtype)
    np.testing.assert_array_equal(words, expected)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_lane_weighted_sum_is_the_scalar_arithmetic_bit_for_bit(dtype):
    rng = np.random.default_rng(2)
    table = _packed_table(rng, 64, dtype)
    rows = rng.integers(0, 64, size=(3, 200)).astype(np.uint16)
    weights = rng.random(256) * np.where(rng.random(256) < 0.1, 0.0, 1.0)
    bias = 128 + (128 << 8)
    out = rng.normal(size=(200, LANES))
    v = (bias + table[rows].sum(axis=0).astype(np.int64)) & 0xFFFFFFFF
    s_x, s_y = (v & 255) - 128, ((v >> 8) & 255) - 128
    expected = out + (s_x * weights[(v >> 16) & 255] - s_y * weights[(v >> 24) & 255])
    _weighted(table, rows, bias, weights, out)
    np.testing.assert_array_equal(out.view(np.int64), expected.view(np.int64))


def test_unusable_arrays_are_a_typing_error():
    table = np.zeros((4, LANES), dtype=np.float64)  # not packed integer counts
    with pytest.raises(numba.core.errors.TypingError):
        _words(table, np.zeros((1, 2), dtype=np.uint16), 0, np.zeros((2, LANES)))


@pytest.mark.parametrize("n", [9, 15, 17])
def test_the_lanes_give_the_same_bits_under_any_block_plan(n, monkeypatch):
    """All pairs in lanes (every input tied): the sums under the lanes' plan (5 blocks of 3 for 15 systems at 300
    resamples) and under the one-pair plan (4, 4, 4, 3) are the same bits; 8-bit and 16-bit counts, pairs whose
    permuted inputs can be constant (tracked, the scalar unpacking after ``lane_word``) and the others."""
    from metaeval.stats.kernels.kendall import blocks as kendall_blocks
    from metaeval.stats.kernels.batch import BatchCache
    from metaeval.stats.resampling.draws import permutation_draws
    from metaeval.stats.significance.permutation import standardize

    rng = np.random.default_rng(n)
    q = rng.normal(size=(n, 20))
    z = np.round(q * 2) / 2
    once_x, once_y = np.zeros((n, 20)), np.zeros((n, 20))
    once_x[1], once_y[2] = 1.0, 1.0  # 0 elsewhere: X' is constant when both swaps meet the zeros
    xs = np.stack([standardize(x) for x in (np.round(q + rng.normal(size=(n, 20))),
                                            np.round(2 * (q + rng.normal(size=(n, 20)))) / 2, once_x, once_y)])
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    draws = permutation_draws(n, 20, method="both", n_resamples=300, rng=4)
    results = []
    for cost in (kendall_blocks._LANE_ENTRY_COST, kendall_blocks._ENTRY_COST):
        monkeypatch.setattr(kendall_blocks, "_LANE_ENTRY_COST", cost)
        kernel = kendall_blocks.KendallBlockPairs(xs, z, "skip", {pair: list(range(20)) for pair in pairs},
                                                  rtol=0.0)
        kernel.prepare(pairs)
        assert not kernel.partial  # every pair counts every input in lanes
        results.append(np.stack([kernel.deltas(BatchCache(draws, slice(0, 300)), *pair) for pair in pairs]))
        assert kernel.tracked[kernel.index[2, 3]] and not kernel.tracked[kernel.index[0, 1]]
    assert kendall_blocks.block_plan(n, 300, 9.0) != kendall_blocks.block_plan(n, 300, kendall_blocks._ENTRY_COST)
    np.testing.assert_array_equal(results[0].view(np.int64), results[1].view(np.int64))
    assert np.isfinite(results[0]).any()
