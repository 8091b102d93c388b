"""Leave-one-rater-out golds: each rater's spans against the union of the other raters' spans.

The human ceiling (:func:`metaeval.spans.span_agreement`) scores a held-out rater against the union of the
*other* raters; :func:`fair_scores` scores every detector against the same golds, so that "does the detector
reach human agreement" compares like with like (a detector scored against the union of all raters has one
rater more in its gold than any held-out rater).
"""
from __future__ import annotations

import numpy as np

from .. import defaults
from ..errors import ParameterError
from .channels import finisher, span_channels
from .model import gold_from_ratings, rater_spans

__all__ = ["held_out", "fair_scores"]


def held_out(ratings, errors, source_spans, exclude_systems=()):
    """``(rater, shared cells, others' union gold on them, the rater's spans on them)`` per rater (the cells of
    ``exclude_systems`` left out)."""
    raters = ratings.raters
    excluded = set(exclude_systems)
    cells_of = {r: {c for c in ratings.spans.get(r, {}) if c[0] not in excluded} for r in raters}
    out = []
    for r in raters:
        own = cells_of[r]
        shared = [c for c in ratings.spans[r] if c in own and any(c in cells_of[o] for o in raters if o != r)]
        if not shared:
            continue
        others = [o for o in raters if o != r and cells_of[o] & own]
        gold = gold_from_ratings(ratings, raters=others, name="others", errors=errors,
                                 source_spans=source_spans).restricted(shared)
        pred = rater_spans(ratings, r, errors=errors, source_spans=source_spans).restricted(shared)
        out.append((r, others, shared, gold, pred))
    return out


def fair_scores(ratings, rows, spec, *, errors: str = defaults.SPAN_ERRORS,
                source_spans: bool = defaults.SPAN_SOURCE_SPANS) -> dict:
    """Every row (SpanAnnotations on the gold's cells) scored against the leave-one-rater-out golds of the
    human ceiling: for each rater R, the union of the other raters' spans on the cells R shares with them;
    the F1 of each row is averaged over the raters (as the ceiling averages the held-out raters' F1).

    Returns ``{"f1": ndarray (D,), "ceiling_f1": float, "raters": int}``.
    """
    finish = finisher(spec.averaging, spec.macro)
    per_rater, ceiling = [], []
    for _, _, shared, gold, pred in held_out(ratings, errors, source_spans):
        keep = [c for c in shared if all(c in row.cells for row in rows)]
        if not keep:
            continue
        gold, pred = gold.restricted(keep), pred.restricted(keep)
        scored = [row.restricted(keep) for row in rows] + [pred]
        channels, present, _ = span_channels(gold, scored, measure=spec.measure, severity=spec.severity,
                                             averaging=spec.averaging, matching=spec.matching,
                                             critical=spec.critical)
        n = int(present.sum())
        f1 = finish(channels.reshape(len(scored), channels.shape[1], -1).sum(axis=-1)[None], np.array([n]))[0, :, 2]
        per_rater.append(f1[:-1])
        ceiling.append(f1[-1])
    if not per_rater:
        raise ParameterError("`ratings` must have segments rated by at least two raters for the fair ceiling; got "
                             "one rater per segment.")
    return {"f1": np.mean(per_rater, axis=0), "ceiling_f1": float(np.mean(ceiling)), "raters": len(ceiling)}
