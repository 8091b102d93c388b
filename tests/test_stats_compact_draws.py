"""Many bootstrap input draws are kept as their counts (``RegeneratedDraws``): the same indices, counts and
statistics as the draws kept whole, with a quarter of the memory of int32 indices."""
from __future__ import annotations

import numpy as np
import pytest

from metaeval.stats.kernels import compiler
from metaeval.stats.resampling import draws as draws_module
from metaeval.stats.resampling.bootstrap import bootstrap_samples
from metaeval.stats.resampling.compact_draws import RegeneratedDraws
from metaeval.stats.resampling.draws import bootstrap_draws, count_weights


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request, monkeypatch):
    """Each block counted at once (1 thread) or in the pool while the next is drawn (2): the same draws."""
    from metaeval.stats.kernels import parts

    monkeypatch.setattr(parts, "THREADS", request.param)
    return request.param


def test_regenerated_draws_are_the_generator_s_numbers(threads):
    whole = np.random.default_rng(7).integers(0, 300, size=(50, 300))
    gen = np.random.default_rng(7)
    lazy = RegeneratedDraws(gen, 300, 50, block=7)
    assert lazy.shape == (50, 300) and len(lazy) == 50 and lazy.dtype == np.int32
    assert np.array_equal(np.asarray(lazy), whole)
    for sl in (slice(0, 7), slice(3, 19), slice(45, 50), slice(10, 10), slice(None), slice(40, None), slice(1, 30, 4)):
        assert np.array_equal(lazy[sl], whole[sl]), sl
    assert np.array_equal(lazy[13], whole[13]) and np.array_equal(lazy[-1], whole[-1])
    assert np.array_equal(np.stack(list(lazy)), whole)
    assert lazy.counts.dtype == np.uint8 and np.array_equal(lazy.counts, count_weights(whole, 300))
    with pytest.raises(IndexError):
        lazy[50]
    with pytest.raises(ValueError):
        lazy.setflags(write=True)


def test_the_generator_continues_as_after_drawing_everything(threads):
    gen = np.random.default_rng(3)
    RegeneratedDraws(gen, 100, 20, block=3)
    reference = np.random.default_rng(3)
    reference.integers(0, 100, size=(20, 100))
    assert np.array_equal(gen.integers(0, 10**6, size=5), reference.integers(0, 10**6, size=5))


def test_counts_above_255_are_kept_whole(threads):
    class Repeating:  # draws input 0 every time: its count is m
        bit_generator = np.random.PCG64(0)

        def integers(self, low, high, size):
            return np.zeros(size, dtype=np.int64)

    lazy = RegeneratedDraws(Repeating(), 300, 5, block=2)
    assert lazy.counts.dtype == np.int32 and (lazy.counts[:, 0] == 300).all() and lazy.counts[:, 1:].sum() == 0

    class Late(Repeating):  # counts below 256 in the first blocks, one of 300 from the third block on
        calls = 0

        def integers(self, low, high, size):
            self.calls += 1
            return np.zeros(size, dtype=np.int64) if self.calls >= 3 else np.tile(np.arange(high), (size[0], 1))

    late = RegeneratedDraws(Late(), 300, 7, block=2)
    assert late.counts.dtype == np.int32 and (late.counts[:4] == 1).all() and (late.counts[4:, 0] == 300).all()
    assert RegeneratedDraws(np.random.default_rng(0), 300, 5, block=2).counts.dtype == np.uint8


def test_many_draws_keep_counts_and_give_the_same_indices(monkeypatch):
    k, m = 64, 70_000  # k * m above the compact size
    assert k * m >= draws_module._COMPACT_CELLS
    compact = bootstrap_draws(5, m, method="both", n_resamples=k, rng=11)
    assert isinstance(compact.cols, RegeneratedDraws)
    with monkeypatch.context() as patch:  # the counts are read from memory, never regenerated
        patch.setattr(RegeneratedDraws, "_rows", lambda self, start, stop: pytest.fail("regenerated"))
        counts = compact.col_weights(slice(20, 64))
    monkeypatch.setattr(draws_module, "_COMPACT_CELLS", 10**12)
    draws_module._DRAWS_MEMO.clear()
    whole = bootstrap_draws(5, m, method="both", n_resamples=k, rng=11)
    assert np.array_equal(counts, whole.col_weights(slice(20, 64)))
    assert isinstance(whole.cols, np.ndarray)
    assert np.array_equal(compact.rows, whole.rows)
    assert np.array_equal(compact.col_indices(slice(5, 40)), whole.col_indices(slice(5, 40)))
    assert np.array_equal(compact.col_weights(slice(20, 64)), whole.col_weights(slice(20, 64)))
    assert compact.col_weights(slice(0, 3)).dtype == whole.col_weights(slice(0, 3)).dtype
    assert compact.cols.counts.nbytes == k * m  # one byte a count: 4.5 MB, not 18 (int32) or 36 (int64)


@pytest.mark.skipif(not compiler.numba_available(), reason="the chunked summary kernels are compiled with numba")
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall-b"])
def test_statistics_of_compact_draws_are_bitwise_those_of_whole_draws(monkeypatch, coefficient):
    rng = np.random.default_rng(4)
    n, m, k = 6, 8192, 520  # k * m above the compact size; m from the chunked kernels' size on
    q = rng.normal(size=(n, 1)) + 0.7 * rng.normal(size=(n, m))
    z = np.clip(np.round(3 + q[..., None] + rng.normal(scale=0.8, size=(n, m, 3))), 1, 5).mean(axis=2)
    x = np.round((q + rng.normal(scale=0.6, size=q.shape)) * 20) / 20
    for a in (x, z):
        a.setflags(write=False)
    draws_module._DRAWS_MEMO.clear()
    compact = bootstrap_draws(n, m, method="both", n_resamples=k, rng=5)
    assert isinstance(compact.cols, RegeneratedDraws)
    got = {level: bootstrap_samples(x, z, level=level, coefficient=coefficient, draws=compact)
           for level in ("summary", "system")}
    monkeypatch.setattr(draws_module, "_COMPACT_CELLS", 10**12)
    draws_module._DRAWS_MEMO.clear()
    whole = bootstrap_draws(n, m, method="both", n_resamples=k, rng=5)
    for level, values in got.items():
        expected = bootstrap_samples(x, z, level=level, coefficient=coefficient, draws=whole)
        assert np.array_equal(values, expected, equal_nan=True), level
