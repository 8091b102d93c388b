"""Trivial span detectors, reported beside every real one (as sentinels are beside correlations).

``no-spans``
    Predicts every segment error-free (micro P = 1 by convention, R = 0, F1 = 0 whenever the gold has spans).
``whole-segment``
    One major span over the whole target of every segment (recall 1 at the character level).
``random``
    Random spans at the gold's rate and length: for every segment, the number of spans is drawn from the
    gold's distribution of spans per segment, each length from the gold's span lengths (cut to the target),
    the start uniformly where the span fits, the severity from the gold's severities. Seeded.

A detector that does not beat these is not detecting errors; a measure under which one of them looks good
(the whole segment under any-overlap, say) rewards the wrong thing.
"""
from __future__ import annotations

import numpy as np

from .model import Span, SpanAnnotations

__all__ = ["BASELINES", "baseline_spans"]

BASELINES = ("no-spans", "whole-segment", "random")
PREFIX = "baseline:"


def baseline_spans(gold: SpanAnnotations, name: str, rng: np.random.Generator) -> SpanAnnotations:
    """The baseline ``name`` (one of :data:`BASELINES`) on the gold's cells."""
    cells = list(gold.cells)
    if name == "no-spans":
        spans = {c: () for c in cells}
    elif name == "whole-segment":
        spans = {c: ((Span(0, len(gold.targets[c]), "major"),) if gold.targets[c] else ()) for c in cells}
    else:
        counts = np.array([len(gold.cells[c]) for c in cells])
        lengths = np.array([s.length for c in cells for s in gold.cells[c]] or [1])
        sevs = [s.severity for c in cells for s in gold.cells[c]] or ["major"]
        n_spans = rng.choice(counts, size=len(cells)) if len(cells) else np.zeros(0, dtype=int)
        spans = {}
        for c, k in zip(cells, n_spans):
            size = len(gold.targets[c])
            out = []
            if size:
                for length, sev in zip(rng.choice(lengths, size=k), rng.choice(len(sevs), size=k)):
                    length = int(min(length, size))
                    start = int(rng.integers(0, size - length + 1))
                    out.append(Span(start, start + length, sevs[sev]))
            spans[c] = out
    return SpanAnnotations(PREFIX + name, spans, gold.targets)
