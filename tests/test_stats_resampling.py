"""Draws of stats.resampling.draws: shapes, seeding, weights, and PERM-BOTH masks being cellwise."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.errors import ParameterError
from metaeval.stats.resampling.draws import (
    PermutationDraws,
    batch_slices,
    bootstrap_draws,
    count_weights,
    permutation_draws,
)


@pytest.mark.parametrize("kwargs,message", [
    (dict(method="rows"), "`method` must be one of 'systems', 'inputs', 'both'; got 'rows'."),
    (dict(n_resamples=0), "`n_resamples` must be an integer >= 1; got 0."),
    (dict(rng="seed"), "`rng` must be None, a non-negative integer seed or a numpy.random.Generator; got 'seed'."),
])
def test_validation_messages(kwargs, message):
    args = dict(method="both", n_resamples=5, rng=0) | kwargs
    for draw in (bootstrap_draws, permutation_draws):
        with pytest.raises(ParameterError) as info:
            draw(4, 3, **args)
        assert str(info.value) == message


def test_bootstrap_shapes_and_seed():
    d = bootstrap_draws(5, 7, method="both", n_resamples=11, rng=3)
    assert d.rows.shape == (11, 5) and d.cols.shape == (11, 7)
    assert d.rows.min() >= 0 and d.rows.max() < 5 and d.cols.max() < 7
    again = bootstrap_draws(5, 7, method="both", n_resamples=11, rng=np.random.default_rng(3))
    assert np.array_equal(d.rows, again.rows) and np.array_equal(d.cols, again.cols)
    s = bootstrap_draws(5, 7, method="systems", n_resamples=11, rng=3)
    assert s.cols is None and np.array_equal(s.col_indices(), np.broadcast_to(np.arange(7), (11, 7)))
    i = bootstrap_draws(5, 7, method="inputs", n_resamples=11, rng=3)
    assert i.rows is None and np.array_equal(i.row_weights(), np.ones((11, 5)))


def test_full_test_set_resamples_human_inputs_independently():
    d = bootstrap_draws(4, 10, method="inputs", n_resamples=50, rng=1, n_inputs_human=6)
    assert d.cols.shape == (50, 10) and d.cols_human.shape == (50, 6)
    assert d.col_indices(human=True).max() < 6
    assert d.col_weights(human=True).sum(axis=1).tolist() == [6] * 50


def test_count_weights_match_bincount():
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 6, size=(20, 6))
    w = count_weights(idx, 6)
    for row, counts in zip(idx, w):
        assert np.array_equal(np.bincount(row, minlength=6), counts)
    d = bootstrap_draws(6, 3, method="systems", n_resamples=20, rng=0)
    assert np.array_equal(d.distinct_systems(), (d.row_weights() > 0).sum(axis=1))


def test_permutation_masks():
    s = permutation_draws(4, 6, method="systems", n_resamples=9, rng=0)
    m = s.mask()
    assert m.shape == (9, 4, 6) and (m == m[:, :, :1]).all()
    i = permutation_draws(4, 6, method="inputs", n_resamples=9, rng=0)
    m = i.mask()
    assert (m == m[:, :1, :]).all()


def test_perm_both_is_cellwise_not_row_xor_column():
    # nlpstats swaps rows then columns: a cell is swapped iff r_a XOR c_b, so
    # m[a, b] ^ m[a, 0] ^ m[0, b] ^ m[0, 0] == 0 everywhere. Our cells are independent fair coins.
    d = permutation_draws(10, 12, method="both", n_resamples=400, rng=0)
    m = d.mask()
    xor = m ^ m[:, :, :1] ^ m[:, :1, :] ^ m[:, :1, :1]
    assert xor[:, 1:, 1:].mean() == pytest.approx(0.5, abs=0.02)
    assert m.mean() == pytest.approx(0.5, abs=0.01)
    # cells are pairwise independent: P(both swapped) = 1/4
    assert (m[:, 0, 0] & m[:, 3, 5]).mean() == pytest.approx(0.25, abs=0.06)
    # slicing the draws gives the same masks as the whole
    assert np.array_equal(d.mask(slice(100, 150)), m[100:150])


def test_transposed_draws():
    d = permutation_draws(3, 5, method="both", n_resamples=4, rng=0)
    t = d.transposed()
    assert t.method == "both" and np.array_equal(t.mask(), d.mask().transpose(0, 2, 1))
    assert permutation_draws(3, 5, method="systems", n_resamples=4, rng=0).transposed().method == "inputs"
    b = bootstrap_draws(3, 5, method="systems", n_resamples=4, rng=0).transposed()
    assert b.method == "inputs" and b.n_systems == 5 and b.cols.shape == (4, 3)


def test_batch_slices_cover_range():
    assert [(s.start, s.stop) for s in batch_slices(10, 4)] == [(0, 4), (4, 8), (8, 10)]


def test_perm_both_bits_are_packed_eight_inputs_per_byte():
    d = permutation_draws(5, 13, method="both", n_resamples=7, rng=0)
    assert d.packed.shape == (2, 5, 7) and d.packed.dtype == np.uint8  # ceil(13 / 8) bytes per system
    bits = d.bits
    assert bits.shape == (7, 5, 13) and bits.dtype == bool
    # bit t (least significant first) of packed[g, a, s] is the bit of cell (s, a, 8 g + t)
    for s, a, j in [(0, 0, 0), (3, 2, 7), (6, 4, 8), (5, 1, 12)]:
        assert bits[s, a, j] == bool((d.packed[j // 8, a, s] >> (j % 8)) & 1)
    assert np.array_equal(d.cell_bits(slice(2, 5)), bits[2:5].transpose(2, 1, 0))
    # draws given as bits pack to the same bytes (padding bits cleared), and unpack to the same masks
    again = PermutationDraws("both", 5, 13, bits.copy())
    assert np.array_equal(again.mask(), d.mask())
    assert np.array_equal(again.packed[0], d.packed[0])
    assert np.array_equal(again.packed[1] & 0b11111, d.packed[1] & 0b11111)
    assert not (again.packed[1] & 0b11100000).any()


def test_permutation_draws_need_bits_or_packed():
    with pytest.raises(ParameterError):
        PermutationDraws("both", 2, 3)
    with pytest.raises(ParameterError):
        PermutationDraws("systems", 2, 3, packed=np.zeros((1, 2, 4), dtype=np.uint8))


def test_human_column_weights_follow_the_shared_columns_in_judged_mode():
    """Regression: with one set of inputs, the humans' column weights are the metric's, not all ones."""
    draws = bootstrap_draws(5, 7, method="inputs", n_resamples=4, rng=3)
    np.testing.assert_array_equal(draws.col_weights(human=True), draws.col_weights())
    assert not np.all(draws.col_weights(human=True) == 1)
