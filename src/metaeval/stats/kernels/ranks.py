"""The tie rule of the kernels: tie groups, dense tie ranks and pair signs.

Two values of one vector ``v`` tie when ``|a - b| <= tol(v) = max(rtol * (max v - min v), 2^-46 max|v|)``
(:mod:`metaeval.stats.correlations.ties`, docs/statistics.md "The tie rule"); the tie groups of sorted neighbours
(:func:`tie_ranks`) give the pair signs and tied-pair counts of every kernel.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.correlations import ties
from metaeval.stats.correlations.ties import TIE_RTOL, are_tied, tolerance_from_extent

__all__ = ["cached_index", "fixed_pair_signs", "is_constant_along", "near_constant_groups", "pair_signs",
           "rank_pair_signs", "row_pair_signs", "row_ranks", "tie_ranks", "upper_pairs"]

# ----------------------------------------------------------------------------------------------------
# helpers shared with the generic coefficients


def pair_signs(u: np.ndarray, v: np.ndarray, *, rtol: float = TIE_RTOL) -> np.ndarray:
    """``sgn(u_a - v_b)`` as int8 of shape ``(..., n, n)``; 0 for ties.

    Ties follow :func:`metaeval.stats.correlations.ties.are_tied` with the union of ``u`` and ``v`` as the vector
    and the relative tie tolerance ``rtol``.
    """
    ua = u[..., :, None]
    vb = v[..., None, :]
    return np.where(are_tied(ua, vb, rtol=rtol), 0, np.sign(ua - vb)).astype(np.int8)


def is_constant_along(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Where ``values`` is constant along ``axis`` for Pearson's r (:func:`metaeval.stats.correlations.ties.is_constant`:
    ``max v - min v <= 2^-46 max|v|``, independent of the tie tolerance)."""
    return ties.is_constant(values, axis)


def near_constant_groups(values: np.ndarray):
    """For the columns of ``values`` (N, M) where a subset of two or more systems can be constant for Pearson's r
    (:func:`metaeval.stats.correlations.ties.is_constant`: spread within ``2^-46`` of its largest magnitude, whatever
    the tie tolerance): the dense ranks ``r`` of their groups of sorted neighbours closer than
    ``2^-46 max|column|``, and ``r^2``, as float64 (N, 2 M'), their indices ``cols`` and the columns
    themselves (N, M'). A constant subset lies in one group; a column without such neighbours is
    constant over the chosen systems only if a single system is chosen."""
    n = values.shape[0]
    order = np.argsort(values, axis=0, kind="stable")
    srt = np.take_along_axis(values, order, axis=0)
    floor = ties.NOISE_RTOL * np.maximum(np.abs(srt[0]), np.abs(srt[-1]))  # (M,)
    new = np.ones_like(srt, dtype=bool)
    new[1:] = srt[1:] - srt[:-1] > floor
    cols = np.flatnonzero(~new[1:].all(axis=0)) if n > 1 else np.zeros(0, dtype=np.intp)
    r = np.empty((n, cols.size))
    np.put_along_axis(r, order[:, cols], np.add.accumulate(new[:, cols], axis=0).astype(np.float64), axis=0)
    return np.ascontiguousarray(np.concatenate([r, r * r], axis=1)), cols, np.ascontiguousarray(values[:, cols])


_PAIR_INDEX: dict = {}


def upper_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays ``(first, second)`` of the ``n (n - 1) / 2`` pairs ``first < second``."""
    if n not in _PAIR_INDEX:
        first, second = np.triu_indices(n, 1)
        _PAIR_INDEX[n] = (first.astype(np.intp), second.astype(np.intp))
    return _PAIR_INDEX[n]


_INDEX_CACHE: dict = {}


def cached_index(key, make):
    """Small read-only index arrays (``arange``-like), built once per shape (at most 256 kept)."""
    if key not in _INDEX_CACHE:
        if len(_INDEX_CACHE) >= 256:
            _INDEX_CACHE.clear()
        value = make()
        value.setflags(write=False)
        _INDEX_CACHE[key] = value
    return _INDEX_CACHE[key]


def _rank_dtype(n: int):
    return np.int8 if n <= 127 else np.int16


def _sorted_rows(v: np.ndarray):
    """Flat indices ``(b, n)`` of every row of ``v`` (C-contiguous) in sorted order, and the sorted rows."""
    b, n = v.shape
    flat = v.argsort(axis=1)
    flat += cached_index(("row-offsets", b, n), lambda: np.arange(0, b * n, n)[:, None])
    return flat, v.reshape(-1).take(flat)


def tie_ranks(v: np.ndarray, *, rtol: float = TIE_RTOL):
    """Dense ranks of the tie groups of every row of complete ``v`` (b, n), int8 for n <= 127, and the
    number of tied pairs per row.

    The groups are those of :mod:`metaeval.stats.correlations.ties`: sorted neighbours start a new group where
    ``srt[i] - srt[i-1] > tol(row)`` (the row's own tolerance, from its extent ``srt[-1]``, ``srt[0]``), so
    rank comparisons give exactly the pair signs and tie counts of the generic path. ``rtol``: the relative
    tie tolerance.
    """
    b, n = v.shape
    flat, srt = _sorted_rows(np.ascontiguousarray(v))
    ranks = np.empty(b * n, dtype=_rank_dtype(n))
    tied = _group_ranks(srt, flat, ranks, rtol)
    return ranks.reshape(b, n), tied


def _group_ranks(srt: np.ndarray, flat: np.ndarray, out: np.ndarray, rtol: float) -> np.ndarray:
    """Write the dense tie-group ranks of sorted rows ``srt`` (b, n) to ``out.flat[flat]``; return the
    number of tied pairs per row (the rule of :func:`tie_ranks`)."""
    b, n = srt.shape
    new = np.empty((b, n), dtype=bool)
    new[:, 0] = True
    np.logical_not(are_tied(srt[:, 1:], srt[:, :-1], tolerance_from_extent(srt[:, -1:], srt[:, :1], rtol=rtol),
                            rtol=rtol), out=new[:, 1:])
    pos = cached_index(("positions", n), lambda: np.arange(n))
    out[flat] = np.add.accumulate(new, axis=1, dtype=out.dtype) - 1
    return np.add.reduce(pos - np.maximum.accumulate(np.where(new, pos, 0), axis=1), axis=1)


def rank_pair_signs(ranks: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``sgn(r[s, first[p]] - r[s, second[p]])`` as int8 ``(P, b)`` for ranks ``(b, n)`` of :func:`tie_ranks`."""
    rt = ranks.T.copy()
    d = rt[first] - rt[second]
    return np.sign(d, out=d).astype(np.int8, copy=False)


def row_ranks(v: np.ndarray, *, rtol: float = TIE_RTOL):
    """:func:`tie_ranks` of the rows of complete ``v`` (b, n), computed in full only where a tie is possible.

    A row whose sorted neighbours are all further apart than its tie tolerance ``tol(row)``
    (:func:`metaeval.stats.correlations.ties.tolerance_from_extent`) has no tie: its ranks are the inverse of the sorting permutation. Returns the ranks, the indices of
    the other rows and their numbers of tied pairs.
    """
    b, n = v.shape
    v = np.ascontiguousarray(v)
    flat, srt = _sorted_rows(v)
    bound = tolerance_from_extent(srt[:, -1], srt[:, 0], rtol=rtol)  # tol of each row, from its extent
    near = np.flatnonzero(np.logical_or.reduce(srt[:, 1:] - srt[:, :-1] <= bound[:, None], axis=1))
    dtype = _rank_dtype(n)
    ranks = np.empty(b * n, dtype=dtype)
    ranks[flat] = cached_index(("positions", n, dtype), lambda: np.arange(n, dtype=dtype))
    tied = np.zeros(0, dtype=np.int64)
    if near.size:  # the exact tie groups of these rows, from the same sorting
        tied = _group_ranks(srt[near], flat[near], ranks, rtol)
    return ranks.reshape(b, n), near, tied


def row_pair_signs(v: np.ndarray, *, rtol: float = TIE_RTOL):
    """Signs of the pairs ``a < b`` of every row of ``v`` (b, n): int8 ``(P, b)`` (tie groups of
    :func:`tie_ranks`), the rows that may have ties and their numbers of tied pairs (see :func:`row_ranks`)."""
    first, second = upper_pairs(v.shape[1])
    ranks, near, tied = row_ranks(v, rtol=rtol)
    return rank_pair_signs(ranks, first, second), near, tied

def fixed_pair_signs(zm: np.ndarray, *, rtol: float = TIE_RTOL):
    """Pair signs ``(P, 1)`` and tied pairs of one vector ``zm`` (n,), for :func:`kendall_b_rows`."""
    first, second = upper_pairs(zm.shape[0])
    rz, tz = tie_ranks(zm[None], rtol=rtol)
    return rank_pair_signs(rz, first, second), tz
