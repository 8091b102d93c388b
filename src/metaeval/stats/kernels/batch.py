"""Batches of resamples: their size, and the per-batch transformations of the draws shared by all pairs."""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.ranks import upper_pairs

__all__ = ["KERNEL_BATCH_CELLS", "BatchCache", "Transposed"]

#: Target size of the temporaries of one kernel batch, in float64 cells (8 MiB): large enough that k = 1000
#: resamples of 25 x 100 scores are one or two batches (each batch costs tens of numpy calls), small enough
#: for the allocator to reuse the memory (see :func:`allocator_headroom`; fresh multi-megabyte arrays cost
#: a page fault per 4 KiB: two live 2.4 MB temporaries measured 2.4 ms, the same arithmetic 0.12 ms).
KERNEL_BATCH_CELLS = 1 << 20

class BatchCache:
    """Per-batch transformations of the draws, computed once and shared by every metric pair."""

    def __init__(self, draws, sl: slice):
        self.draws = draws
        self.sl = sl
        self._store: dict = {}

    def get(self, key, make):
        if key not in self._store:
            self._store[key] = make()
        return self._store[key]

    def put(self, key, value) -> None:
        """Keep ``value`` for a later :meth:`take` in this batch (a kernel's results computed ahead for other pairs)."""
        self._store[key] = value

    def take(self, key):
        """The value :meth:`put` under ``key``, removed from the batch (None when there is none)."""
        return self._store.pop(key, None)

    def has(self, key) -> bool:
        return key in self._store

    # permutation masks ------------------------------------------------------------------------------
    def mask(self) -> np.ndarray:
        return self.get("mask", lambda: self.draws.mask(self.sl))

    def column_bits_f32(self) -> np.ndarray:
        """Cell masks as float32 ``(M, N, b)`` (or ``(1, N, b)`` for PERM-SYSTEMS)."""

        def make():
            if self.draws.method == "systems":
                return np.ascontiguousarray(self.draws.bits[self.sl].T, dtype=np.float32)[None]
            return self.draws.cell_bits(self.sl).astype(np.float32)

        return self.get("bits32", make)

    def input_major_bits(self) -> np.ndarray:
        """PERM-BOTH cell masks as uint8 ``(M, b, N)`` (C-contiguous)."""
        return self.get("bits8", lambda: np.ascontiguousarray(self.draws.cell_bits(self.sl).transpose(0, 2, 1)))

    def packed(self) -> np.ndarray:
        """PERM-BOTH bytes of the batch, ``(G, N, b)`` (see :class:`metaeval.stats.resampling.draws.PermutationDraws`)."""
        return self.draws.packed[:, :, self.sl]

    # bootstrap weights ------------------------------------------------------------------------------
    def row_weights(self) -> np.ndarray:
        return self.get("w", lambda: self.draws.row_weights(self.sl))

    def col_weights(self, human: bool = False) -> np.ndarray:
        return self.get(("c", human), lambda: self.draws.col_weights(self.sl, human=human))

    def pair_weights(self) -> np.ndarray:
        """``w_a w_b`` for the system pairs ``a < b`` of :func:`upper_pairs`: float32 (b, P)."""

        def make():
            w = self.row_weights()
            first, second = upper_pairs(w.shape[1])
            return (w[:, first] * w[:, second]).astype(np.float32)

        return self.get("ww", make)


class Transposed:
    """By-system level = summary level of the transposed matrices; swaps the roles of the axes."""

    def __init__(self, inner):
        self.inner = inner
        self.cells = inner.cells

    def _inner_cache(self, cache: BatchCache) -> BatchCache:
        return cache.get("transposed", lambda: BatchCache(cache.draws.transposed(), cache.sl))

    def evaluate(self, cache: BatchCache):
        return self.inner.evaluate(self._inner_cache(cache))

    def deltas(self, cache: BatchCache):
        return self.inner.deltas(self._inner_cache(cache))
