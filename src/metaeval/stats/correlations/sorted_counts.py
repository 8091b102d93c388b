"""Exact Kendall pair counts of long vectors in O(n log n): Knight's merge-sort count and its variants.

The sorting path of :func:`metaeval.stats.correlations.coefficients.correlation` (vectors longer than
``PAIRWISE_MAX_N``): it gives the same integer counts as comparing every pair.

References
----------
Knight, W. R. (1966). A computer method for calculating Kendall's tau with ungrouped data. JASA 61(314),
436-439.
"""
from __future__ import annotations

import numpy as np

__all__ = ["counts_sorted"]


def counts_sorted(x_order, rx, ry, nv, xs, t, tx_all, ty_all):
    """S, Tx_all and T_xy per row in O(n log n) (t = 0) or O(n log^2 n) (t > 0), exactly.

    Rows are sorted by (x rank, y rank), starting from ``x_order`` (flat indices of the x order).
    t = 0 (Knight 1966): the inversions of y in this order are the discordant pairs D, so
    ``S = C - D = (P - Tx_all - Ty_all + T_xy - D) - D``. t > 0: position i is tied with j > i when the
    gap ``x_j - x_i <= t`` (:func:`_within_gap`); the partners not tied with it from above are the
    j >= u_i, so ``S = sum_i sum_{j >= u_i} sgn(R_j - R_i)``; the sum over
    all j of ``sgn(R_j - R_i)`` adds up to 0 over i, hence ``S = sum_i sum_{j < u_i} sgn(R_i - R_j)``,
    counted with dyadic blocks (:func:`_dominance`).
    """
    n_rows, n = rx.shape
    w = n + 1
    row = np.arange(n_rows, dtype=np.int64)[:, None]
    pos = np.arange(n, dtype=np.int64)
    valid = pos < nv[:, None]
    x_order = x_order.reshape(n_rows, n)
    kx = (rx.astype(np.int64) * w + ry).ravel()[x_order]
    o = np.argsort(kx, axis=-1, kind="stable")  # sorted by x already: timsort only sorts the x ties
    flat = np.take_along_axis(x_order, o, axis=-1).ravel()
    ks = np.take_along_axis(kx, o, axis=-1)
    rxs, rys = ks // w, ks % w
    if t == 0:
        first = np.ones((n_rows, n), dtype=bool)
        first[:, 1:] = ks[:, 1:] != ks[:, :-1]
        start = np.maximum.accumulate(np.where(first, pos, 0), axis=-1)
        txy = np.where(valid, pos - start, 0).sum(axis=-1)
        pairs = nv * (nv - 1) // 2
        return pairs - tx_all - ty_all + txy - 2 * _inversions(rys, valid), tx_all, txy
    xsorted = xs.ravel()[flat].reshape(n_rows, n)
    u = _within_gap(xsorted, nv, t)
    hi = np.take_along_axis(rxs, np.clip(u - 1, 0, n - 1), axis=-1)  # last x rank tied with i from above
    tx_all = np.where(valid, u - pos - 1, 0).sum(axis=-1)
    # pairs tied in both: order by (y rank, x rank); partners of i in its y group up to x rank hi_i
    hi_orig = np.empty(n_rows * n, dtype=np.int64)
    hi_orig[flat] = hi.ravel()
    key2 = ry.astype(np.int64) * w + rx
    flat2 = (np.argsort(key2, axis=-1) + row * n).ravel()
    k2 = key2.ravel()[flat2].reshape(n_rows, n) + row * w * w
    q = k2 - k2 % w + hi_orig[flat2].reshape(n_rows, n)
    cnt = np.searchsorted(k2.ravel(), q.ravel(), side="right").reshape(n_rows, n) - row * n - pos - 1
    txy = np.where(valid, cnt, 0).sum(axis=-1)
    return _dominance(rys, u, valid), tx_all, txy


def _inversions(r: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row, ``#{i < j: r_i > r_j}`` over the valid prefix, by bottom-up merge sort.

    Blocks of 16 are counted pair by pair; then sorted blocks of size ``s`` are merged pairwise. Keys
    ``2 r + side`` put a left value before an equal right one, so a right value at merged position
    ``m`` with index ``q`` in its half has ``s - (m - q)`` larger values on the left, and the block's
    cross inversions are ``s^2 + s (s - 1) / 2 - sum(m over right values)``.
    """
    n_rows, n = r.shape
    n2 = 1 << max(0, (n - 1).bit_length())
    vals = np.full((n_rows, n2), n, dtype=np.int32)  # invalid and padding values sort last: no inversions
    vals[:, :n] = np.where(valid, r, n)
    size = min(16, n2)
    blocks = vals.reshape(-1, size)
    per_block = np.zeros(blocks.shape[0], dtype=np.int64)
    for d in range(1, size):
        per_block += np.count_nonzero(blocks[:, :-d] > blocks[:, d:], axis=1)
    total = per_block.reshape(n_rows, -1).sum(axis=1)
    vals = np.sort(blocks, axis=-1)
    while size < n2:
        side = (np.arange(2 * size) >= size).astype(np.int32)
        keys = vals.reshape(-1, 2 * size) * 2 + side
        keys.sort(axis=-1, kind="stable")  # two sorted runs: a linear merge
        right_positions = ((keys & 1) * np.arange(2 * size)).sum(axis=-1, dtype=np.int64)
        cross = size * size + size * (size - 1) // 2 - right_positions
        total += cross.reshape(n_rows, -1).sum(axis=1)
        vals = keys >> 1
        size *= 2
    return total


def _within_gap(xsorted: np.ndarray, nv: np.ndarray, t: float) -> np.ndarray:
    """Per row and position i of the increasing valid prefix, the first ``j > i`` with ``x_j - x_i > t``
    (``nv`` if none). ``x_j - x_i`` rounded is non-decreasing in ``j``, so a bisection finds it; the gap
    is the number the pairwise path compares, ``|x_a - x_b| <= t``."""
    n_rows, n = xsorted.shape
    pos = np.arange(n, dtype=np.int64)
    lo = np.broadcast_to(pos + 1, (n_rows, n)).copy()
    hi = np.broadcast_to(nv.astype(np.int64)[:, None], (n_rows, n)).copy()
    lo = np.minimum(lo, hi)
    while True:
        todo = lo < hi
        if not todo.any():
            return lo
        mid = (lo + hi) // 2
        with np.errstate(invalid="ignore"):
            fits = np.take_along_axis(xsorted, np.minimum(mid, n - 1), axis=-1) - xsorted <= t
        lo = np.where(todo & fits, mid + 1, lo)
        hi = np.where(todo & ~fits, mid, hi)


def _dominance(r: np.ndarray, u: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Per row, ``sum_i #(j < u_i: r_j < r_i) - #(j < u_i: r_j > r_i)`` over valid i (u_i <= #valid).

    The prefix ``[0, u_i)`` is split into dyadic blocks (one per set bit of ``u_i``); each block is
    sorted once per level and counted with a binary search on keys ``block * W + r``.
    """
    n_rows, n = r.shape
    w = n + 1
    n2 = 1 << max(0, (n - 1).bit_length())
    dtype = np.int16 if w <= 32767 else np.int32
    blocks = np.full((n_rows, n2), w - 1, dtype=dtype)  # padding never lies in a queried block
    blocks[:, :n] = r
    blocks = blocks.ravel()
    qrow, qcol = np.nonzero(valid)
    qu = u[qrow, qcol]
    qr = r[qrow, qcol].astype(np.int64)
    qbase = qrow * n2
    total = np.zeros(qrow.size, dtype=np.int64)
    idx = np.arange(n_rows * n2, dtype=np.int64)
    for level in range(n2.bit_length()):
        size = 1 << level
        if level > 0:
            blocks = np.sort(blocks.reshape(-1, size), axis=-1, kind="stable").ravel()
        has = ((qu >> level) & 1).astype(bool)
        if not has.any():
            continue
        keys = (idx >> level) * w + blocks
        gb = (qbase[has] >> level) + (qu[has] >> level) - 1
        target = gb * w + qr[has]
        start = gb * size
        less = np.searchsorted(keys, target, side="left") - start
        less_eq = np.searchsorted(keys, target, side="right") - start
        total[has] += less - (size - less_eq)
    return np.bincount(qrow, weights=total, minlength=n_rows).round().astype(np.int64)
