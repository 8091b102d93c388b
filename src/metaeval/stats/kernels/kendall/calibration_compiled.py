"""The compiled loop of :mod:`metaeval.stats.kernels.kendall.calibration`: the maxima of integer calibration curves.

Compiled with :func:`metaeval.stats.kernels.compiler.decorator.jit` (cached on disk); imported on first use only.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels.compiler.decorator import jit

__all__ = ["integer_curve_maxima"]


@jit()
def integer_curve_maxima(rs, v0, dv, last, lead, counts, value, index):
    for b in range(counts.shape[0]):
        c = counts[b]
        base = 0
        for p in range(rs.shape[0]):
            base += c[rs[p]] * v0[p]
        run = base
        best = base
        best_at = 0
        seen = lead
        at = 1 if lead else 0
        for p in range(rs.shape[0]):
            run += c[rs[p]] * dv[p]
            if last[p]:
                if not seen or run > best:
                    best, best_at, seen = run, at, True
                at += 1
        value[b] = best
        index[b] = best_at
