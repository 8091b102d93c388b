"""Resampled system sums of one score matrix, computed once per set of draws and shared by the calls using it.

A correlation table computes, for one seed, the system-level interval of every metric with every coefficient:
the resampled system means of a metric are the same for its three coefficients, and those of the human the same
for every metric. With many inputs they are the costly part (``k x M x N`` multiply-adds per matrix), so from
:data:`~metaeval.stats.kernels.many_inputs.summary_bootstrap.MIN_INPUTS` inputs on the system-level kernel asks
:func:`resampled_sums` for them: exact column-weighted sums (:class:`~metaeval.stats.kernels.exact_sums.ExactWeightedSums`,
so sums equal in exact arithmetic are equal), computed for every resample of the draws on first use and kept
for that matrix object while the same draws object is in use (a new draws object clears them). The blocks of
resamples are summed on :func:`~metaeval.stats.kernels.parts.threads` threads (the sums are exact, so the
values do not depend on it). Only read-only
arrays that own their memory, or views of such, are kept (those of a :class:`~metaeval.data.scoreset.ScoreSet`,
which a table's cells share): an array its caller may still change is summed afresh on every call.
"""
from __future__ import annotations

import numpy as np

from metaeval.stats.kernels import parts
from metaeval.stats.kernels.exact_sums import ExactWeightedSums

__all__ = ["resampled_sums"]

#: Resamples whose input counts are held at once while the sums are computed.
BLOCK = 32

_MEMO: dict = {}


def frozen(values: np.ndarray) -> bool:
    """Whether neither ``values`` nor any array it views can be written."""
    while isinstance(values, np.ndarray):
        if values.flags.writeable:
            return False
        values = values.base
    return values is None


def _weights(draws, sl: slice, out: np.ndarray) -> np.ndarray:
    """The input counts of resamples ``sl`` as float64, written to the leading rows of ``out`` (from the one-byte
    counts when the draws keep them)."""
    kept = getattr(draws.cols, "counts", None)  # RegeneratedDraws
    rows = out[: sl.stop - sl.start]
    np.copyto(rows, kept[sl] if kept is not None else draws.col_weights(sl))
    return rows


def _sums(values: np.ndarray, draws) -> np.ndarray:
    k, m = draws.n_resamples, values.shape[1]
    sums = ExactWeightedSums(values, m)
    out = np.empty((k, values.shape[0]))
    starts = range(0, k, BLOCK)
    n_parts = max(1, min(parts.threads(), len(starts)))

    def part(mine, buffer):
        for start in mine:
            sl = slice(start, min(k, start + BLOCK))
            out[sl] = sums(_weights(draws, sl, buffer))

    # exact sums: any thread, any order; each part's weights allocated here (see summary_inputs._Chunked.buffers)
    parts.run_parts(part, [(starts[i::n_parts], np.empty((BLOCK, m))) for i in range(n_parts)])
    out.setflags(write=False)
    return out


def resampled_sums(values: np.ndarray, draws) -> np.ndarray:
    """``sum_j c_sj values[:, j]`` for every resample ``s`` of ``draws`` (its input counts ``c``): (k, N), read-only."""
    if not frozen(values):
        return _sums(values, draws)
    if _MEMO.get("draws") is not draws:
        _MEMO.clear()
        _MEMO["draws"] = draws
    key = id(values)
    if key not in _MEMO or _MEMO[key][0] is not values:  # the array is kept with its sums: its id stays its own
        _MEMO[key] = (values, _sums(values, draws))
    return _MEMO[key][1]
