"""The compiled loop of :mod:`metaeval.stats.kernels.kendall.summary_pairs`: the pairs' cross sign sums (inputs as
the vector axis, int32 sums), the same integers as the numpy terms.

Compiled with :func:`metaeval.stats.kernels.compiler.decorator.jit` (cached on disk); imported on first use only.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit

__all__ = ["cross_sign_sums"]


@jit()
def cross_sign_sums(x, t, first, second, out):
    """``out[q, a, b] = sum_c t[a, c, b] s_ac - sum_c t[c, a, b] s_ca`` with ``s_ac = sgn(X_j[a, b] - X_i[c, b])``
    for the pairs ``(i, j) = (first[q], second[q])`` of ``x`` (P, N, M) and the integer weights ``t`` (N, N, M)
    of every input ``b`` (the same integers as :meth:`metaeval.stats.kernels.kendall.summary_pairs.SummaryPairsShared.
    _cross_terms`). The inputs are the last axis, so the loops over them are vector loops; both sums are kept
    in int32 (``N <= 32`` terms of ``|t| <= 2 (N - 1)``). Serial (``nogil``): the caller splits the pairs among its
    threads (a parallel loop took about as long again to compile)."""
    n = x.shape[1]
    m = x.shape[2]
    for q in range(first.size):
        xi = x[first[q]]
        xj = x[second[q]]
        own = np.zeros(m, dtype=np.int32)  # sum_c t_ac s_ac of the current a
        other = np.zeros((n, m), dtype=np.int32)  # sum_a t_ac s_ac of every c
        o = out[q]
        for a in range(n):
            xa = xj[a]
            own[:] = 0
            for c in range(n):
                xc = xi[c]
                tac = t[a, c]
                oc = other[c]
                for b in range(m):
                    v = np.int32(tac[b]) * (np.int32(xa[b] > xc[b]) - np.int32(xa[b] < xc[b]))
                    own[b] += v
                    oc[b] += v
            oa = o[a]
            for b in range(m):
                oa[b] = own[b]
        for a in range(n):
            oa = o[a]
            na = other[a]
            for b in range(m):
                oa[b] -= na[b]
