"""The compiled loops of :mod:`metaeval.stats.kernels.kendall.group_pairs`: the pair terms of large groups from
weighted dominance counts (PERM-BOTH, no metric ties).

Compiled with :func:`metaeval.stats.kernels.compiler.decorator.jit` (cached on disk); imported on first use only.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels import parts
from metaeval.stats.kernels.compiler.decorator import jit
from metaeval.stats.kernels.compiler.intrinsics import next_task

__all__ = ["pair_terms", "signed_sums"]


@jit()
def signed_sums(qv, qorder, dv, dorder, key, less, greater, spearman, tree, out):
    """``out[c] = sum_d t_cd sgn(qv[c] - dv[d])`` (``qorder`` / ``dorder`` sort ``qv`` / ``dv``);
    ``t_cd = key_c - key_d`` (Spearman) or ``sgn`` of the dense human ranks ``key``; ``tree`` is a zero
    Fenwick array of size ``max(key) + 2`` (Kendall), zero again on exit."""
    n = qv.shape[0]
    size = tree.shape[0]
    k = 0
    inserted = 0
    lo_key = 0
    total_key = 0
    if spearman:
        for d in range(n):
            total_key += key[d]
    for qi in range(n):
        c = qorder[qi]
        v = qv[c]
        while k < n and dv[dorder[k]] < v:
            d = dorder[k]
            if spearman:
                lo_key += key[d]
            else:
                r = key[d] + 1
                while r < size:
                    tree[r] += 1
                    r += r & (-r)
            inserted += 1
            k += 1
        if spearman:
            out[c] = key[c] * (2 * inserted - n) - (2 * lo_key - total_key)
        else:
            below = 0  # visited cells with a smaller human rank
            r = key[c]
            while r > 0:
                below += tree[r]
                r -= r & (-r)
            upto = 0  # ... with a smaller or equal human rank
            r = key[c] + 1
            while r > 0:
                upto += tree[r]
                r -= r & (-r)
            out[c] = 2 * (below - (inserted - upto)) + greater[c] - less[c]
    if not spearman:
        tree[:] = 0


def pair_terms(values, orders, first, second, self_terms, key, less, greater, spearman, nz, out):
    """``out[q] = T(X_j; X_i) - T(X_i; X_j) - K_i + K_j`` for the pairs ``(first[q], second[q])``: the pairs dealt
    to the caller's threads (:func:`metaeval.stats.kernels.parts.run_parts`), each taking the next pair when done
    with one (:func:`_pair_terms_of`); each pair's terms are the same integers on any thread."""
    pairs = ((values, orders, first, second, self_terms), (key, less, greater, spearman, nz))
    parts.run_tasks(_pair_terms_of, first.shape[0], pairs, out)


@jit()
def _pair_terms_of(counter, pairs, out):
    """The pairs of :func:`pair_terms` taken in turn from ``counter``
    (:func:`~metaeval.stats.kernels.compiler.intrinsics.next_task`). Serial (``nogil``)."""
    (values, orders, first, second, self_terms), (key, less, greater, spearman, nz) = pairs
    n = values.shape[1]
    tree = np.zeros(nz + 2, dtype=np.int64)  # zero again after each signed_sums
    tmp = np.empty(n, dtype=np.int64)
    while True:
        q = next_task(counter)
        if q >= first.shape[0]:
            break
        i = first[q]
        j = second[q]
        signed_sums(values[j], orders[j], values[i], orders[i], key, less, greater, spearman, tree, tmp)
        for c in range(n):
            out[q, c] = tmp[c] - self_terms[i, c] + self_terms[j, c]
        signed_sums(values[i], orders[i], values[j], orders[j], key, less, greater, spearman, tree, tmp)
        for c in range(n):
            out[q, c] -= tmp[c]
