"""Exact products of integer pair terms with PERM-BOTH masks, grouped by weight.

Several shared kernels reduce the permuted difference of every metric pair ``q`` to

    ``delta_s[q] = const[q] + sum_g w_g sum_{c in g} G_g[q, c] m_s[c]``

with integer terms ``G_g`` (one row per pair, one column per cell of the group ``g``), real weights
``w_g`` and the swap bits ``m_s`` of resample ``s``. :class:`PairMaskProducts` stores the terms and
evaluates the inner sums of a batch as one matrix product ``G_g (pairs x cells) @ bits (cells x b)`` per
group and chunk of pairs.

Exactness: the product of an integer term and a bit is the term or 0, and every partial sum of one row
lies within ``sum_c |G_g[q, c]|``. When that bound is below ``2^24`` for every row of a chunk the product
runs in float32, otherwise (bound below ``2^53``) in float64; either way every partial sum is an exact
integer, so the inner sums do not depend on the BLAS, its blocking or the batch size. The weighted sum
over the groups then runs in the fixed order in which the groups were added. Terms are stored a chunk of
pairs at a time in the smallest integer type that holds them, and converted to floating point one chunk
at a time: the temporaries of a batch are ``PAIR_CHUNK`` rows of one group plus the group's bits.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.batch import BatchCache

__all__ = ["PAIR_CHUNK", "PairMaskProducts"]

PAIR_CHUNK = 64
"""Pairs per stored chunk of terms (and per matrix product)."""

_F32_EXACT = 2**24
_F64_EXACT = 2**53


def _int_dtype(bound: int):
    for dtype in (np.int8, np.int16, np.int32):
        if bound <= np.iinfo(dtype).max:
            return dtype
    return np.int64


class PairMaskProducts:
    """``const + sum_g w_g (G_g @ m)`` for every pair and resample of a batch (see the module docstring).

    Parameters
    ----------
    n_pairs : int
        Number of rows (metric pairs).
    n_rows, n_cols : int
        Shape ``(N, M)`` of the score matrices; a cell ``(a, b)`` is column ``b N + a`` of the bits
        ``draws.cell_bits(sl).reshape(M N, b)``.
    """

    def __init__(self, n_pairs: int, n_rows: int, n_cols: int):
        self.n_pairs = n_pairs
        self.shape = (n_rows, n_cols)
        self.const = np.zeros(n_pairs)
        self.groups: list = []  # (weight, cells, [(first pair, int terms, float dtype)])
        self.exact = True

    def add_group(self, weight: float, cells: np.ndarray, constant: np.ndarray) -> list:
        """Open a group of ``cells`` (flat indices ``b N + a``) with weight ``weight``; ``constant``
        (n_pairs,) integer ``D_g`` adds ``weight * D_g`` to ``const``. Returns the list of chunks that
        :meth:`add_terms` fills."""
        self.const = self.const + weight * np.asarray(constant, dtype=np.float64)
        chunks: list = []
        self.groups.append((float(weight), np.asarray(cells, dtype=np.intp), chunks))
        return chunks

    def add_terms(self, chunks: list, first: int, terms: np.ndarray) -> None:
        """Store the integer terms ``(rows, cells)`` of pairs ``first, first + 1, ...`` of a group."""
        terms = np.asarray(terms)
        bound = int(np.abs(terms).sum(axis=1, dtype=np.int64).max()) if terms.size else 0
        if bound >= _F64_EXACT:
            self.exact = False
        ftype = np.float32 if bound < _F32_EXACT else np.float64
        peak = int(np.abs(terms).max()) if terms.size else 0
        chunks.append((first, terms.astype(_int_dtype(peak), copy=False), ftype))

    def evaluate(self, cache: BatchCache) -> np.ndarray:
        """``delta`` of every pair, ``(n_pairs, b)`` float64, for the batch of ``cache``."""

        def make():
            n, m = self.shape
            bits = cache.draws.cell_bits(cache.sl).reshape(n * m, -1)
            out = np.broadcast_to(self.const[:, None], (self.n_pairs, bits.shape[1])).copy()
            for weight, cells, chunks in self.groups:  # fixed order
                blocks = {}
                for first, terms, ftype in chunks:
                    if ftype not in blocks:
                        blocks[ftype] = bits[cells].astype(ftype)
                    part = terms.astype(ftype) @ blocks[ftype]
                    out[first:first + terms.shape[0]] += weight * part.astype(np.float64)
            return out

        return cache.get(("pair-mask-products", id(self)), make)
