"""Mask tables: the coefficient of ``X'`` under every swap mask of a small tied group, looked up per resample.

:class:`metaeval.stats.kernels.kendall.group_pairs.GroupPairsCompiled` counts a pair's tied groups per resample
(:func:`metaeval.stats.kernels.kendall.group_counts.tied_group_counts`). A group of ``n <= MAX_CELLS`` cells (an
input's systems at summary level) has only ``2^n`` masks, about as many as the resamples (``k = 1000`` and
``n = 10``: 1,024): its coefficient under every mask is tabulated once per pair, from counts updated in O(n)
per mask (:func:`metaeval.stats.kernels.kendall.mask_tables_compiled.mask_table_counts`), and each resample reads its
mask's entry, ``X'`` at the mask and ``Y'`` at its complement. The counts are the per-resample loop's own:

* a group the loop counts from contingency tables (its pooled values in tie groups each tied end to end)
  uses the same tie classes;
* a group whose pooled values have no gap within the loop's rule (``|a - b| <= rtol max(|a|, |b|)``, checked
  against the group's largest magnitude, so no subset of the values has one either) uses the classes of
  equal values, which is what the loop's ordered pass sees under any mask;
* any other group (a near tie) stays with the per-resample loop.

The coefficient of each entry comes from the same formula on the same integer counts
(:func:`metaeval.stats.correlations.coefficients.coefficient_from_counts`): every value equals the loop's
bit for bit. Spearman and Kendall tau-b keep their own paths.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations.coefficients import coefficient_from_counts

__all__ = ["MAX_CELLS", "CACHE_BYTES", "MaskTables"]

MAX_CELLS = 12
"""Groups of at most this many cells are tabulated (4,096 masks)."""

CACHE_BYTES = 1 << 28
"""Tables kept across batches, in bytes (256 MiB: 12 pairs of 1,418 inputs of 10 systems take 139 MiB);
beyond it a pair's table is rebuilt for each batch (the same values)."""

COST_RATIO = 8
"""A table is built when its masks are at most this many times the resamples: an entry costs about an
eighth of a resample's count of the group (the O(n) update and the formula, against the loop's pass)."""


class MaskTables:
    """The tables of one kernel's pairs (summary level), each built on first use and kept within
    :data:`CACHE_BYTES`."""

    def __init__(self, coefficient: str, size: int, tz: np.ndarray, distinct: np.ndarray, zr: np.ndarray,
                 rtol: float):
        self.coefficient, self.size, self.rtol = coefficient, size, rtol
        self.tz, self.distinct, self.zr = tz, distinct, zr
        self.kept: dict = {}
        self.bytes = 0

    @staticmethod
    def applicable(coefficient: str, size: int, n_resamples: int) -> bool:
        return (coefficient not in ("spearman", "kendall-b") and 2 <= size <= MAX_CELLS
                and (1 << size) <= COST_RATIO * n_resamples)

    def classes(self, args) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(tabulated, cls, n_class)``: which of the groups of :meth:`GroupPairsCompiled._tied_inputs`'s
        ``args`` are tabulated, and their tie classes ``(G', 2, n)`` and class counts."""
        mval, mcell, msrc, _, _, _, _, classes, n_class, _ = args
        size = self.size
        gap = mval[:, 1:] - mval[:, :-1]
        if self.rtol == 0.0:
            clean = np.ones(mval.shape[0], dtype=bool)
        else:
            top = np.abs(mval).max(axis=1, keepdims=True)
            clean = ((gap == 0.0) | (np.abs(gap) > self.rtol * top)).all(axis=1)
        table = n_class > 0
        tabulated = table | clean
        exact = np.zeros(mval.shape, dtype=np.int64)
        exact[:, 1:] = np.cumsum(gap != 0.0, axis=1)
        flat = np.empty(mval.shape, dtype=np.int64)
        np.put_along_axis(flat, msrc.astype(np.int64) * size + mcell, exact, axis=1)
        cls = np.where(table[:, None, None], classes, flat.reshape(-1, 2, size))
        counts = np.where(table, n_class, exact[:, -1] + 1)
        return tabulated, np.ascontiguousarray(cls[tabulated]), np.ascontiguousarray(counts[tabulated])

    def build(self, groups: np.ndarray, cls: np.ndarray, n_class: np.ndarray) -> np.ndarray:
        """The coefficient of ``X'`` under every mask of each group ``groups``, ``(G', 2^n)``."""
        from metaeval.stats.kernels.kendall.mask_tables_compiled import mask_table_counts

        counts = mask_table_counts(cls, np.ascontiguousarray(self.zr[groups], dtype=np.int64), n_class)
        shape = counts.shape[1:]
        full = lambda v: np.broadcast_to(np.asarray(v, dtype=np.int64), shape).ravel()  # noqa: E731
        size = self.size
        k = (full(size), full(size * (size - 1) // 2), counts[0].ravel(), counts[1].ravel(),
             full(self.tz[groups][:, None]), counts[2].ravel(), counts[3].ravel(),
             full(self.distinct[groups][:, None]))
        return coefficient_from_counts(self.coefficient, k).reshape(shape)

    def get(self, pair, make):
        """The pair's ``(tabulated, table)``, from ``make()`` once and then kept (within the budget)."""
        if pair in self.kept:
            return self.kept[pair]
        value = make()
        nbytes = value[1].nbytes
        if self.bytes + nbytes <= CACHE_BYTES:
            self.kept[pair] = value
            self.bytes += nbytes
        return value

    @staticmethod
    def look_up(table: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
        """``(b, G', 2)``: each resample's entry (``index`` (b, G') its masks) for ``X'``, and the complement's
        for ``Y'``."""
        flat = table.ravel()
        at = index + (np.arange(table.shape[0], dtype=np.int64) << size)[None, :]
        out = np.empty(index.shape + (2,))
        out[..., 0] = np.take(flat, at)
        out[..., 1] = np.take(flat, at ^ ((1 << size) - 1))  # the complement within the group's row
        return out
