"""Span measures as per-cell channels: the one reduction of spans to numbers that resampling re-aggregates.

:func:`span_channels` reduces every (detector, cell) to its channels once (micro: the four counts of
:mod:`metaeval.spans.measures`; macro: per-cell P, R and F1); :func:`finisher` turns channel sums into
precision, recall and F1. :func:`check_resamples` is the up-front check of a resample count of every spans
function.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import defaults
from ..errors import check_int
from . import measures as _m
from .model import SpanAnnotations

__all__ = ["cell_grid", "span_channels", "finisher", "check_resamples"]


def cell_grid(cells) -> tuple[list[str], list[str], dict]:
    """Systems, segments (first-appearance order) and ``cell -> (a, b)`` positions."""
    systems = list(dict.fromkeys(c[0] for c in cells))
    segments = list(dict.fromkeys(c[1] for c in cells))
    si = {s: i for i, s in enumerate(systems)}
    gi = {g: j for j, g in enumerate(segments)}
    return systems, segments, {c: (si[c[0]], gi[c[1]]) for c in cells}


def span_channels(gold: SpanAnnotations, detectors: Sequence[SpanAnnotations], *, measure: str, severity: str,
                  averaging: str, matching: str = defaults.SPAN_MATCHING, critical: str = defaults.SPAN_CRITICAL,
                  advance=None) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Per-cell channels ``(D, K, N, M)`` (micro: the 4 counts; macro: per-cell P, R and F1), the rated-cell
    mask ``(N, M)`` and the grid ``(systems, segments)``. Spans are reduced here, once (``advance()`` after
    each detector)."""
    systems, segments, pos = cell_grid(gold.cells)
    n, m = len(systems), len(segments)
    counts = np.zeros((len(detectors), 4, n, m))
    present = np.zeros((n, m), dtype=bool)
    for cell, (a, b) in pos.items():
        present[a, b] = True
    for d, det in enumerate(detectors):
        for cell, (a, b) in pos.items():
            counts[d, :, a, b] = _m.cell_counts(gold.cells[cell], det.cells[cell], measure=measure, severity=severity,
                                                matching=matching, critical=critical)
        if advance is not None:
            advance()
    if averaging == "macro":
        channels = np.moveaxis(_m.macro_channels(np.moveaxis(counts, 1, -1)), -1, 1) * present
        return channels, present, (systems, segments)
    return counts, present, (systems, segments)


def finisher(averaging, macro=defaults.SPAN_MACRO):
    def finish(sums, n_cells):
        n = np.asarray(n_cells, dtype=np.float64).reshape(-1, *([1] * (sums.ndim - 2)))
        return _m.prf_from_sums(sums, n, averaging, macro)
    return finish


def check_resamples(n_resamples: Any, n_systems: int, n_segments: int, n_rows: int = 1) -> int:
    """``n_resamples`` as an int >= 1 whose draws and statistics fit in the memory still available (refused
    up front: ``2000000000`` would otherwise die in an allocation error)."""
    from .._validation import check_resample_memory

    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    check_resample_memory(n_resamples, n_systems, n_segments + 3 * max(1, n_rows))
    return n_resamples
