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

__all__ = ["CEILING_RULES", "held_out", "fair_scores"]


def held_out(ratings, errors, source_spans, exclude_systems=(), gold_raters=None):
    """``(rater, raters of its gold, shared cells, gold on them, the rater's spans on them)`` per scored rater
    (the cells of ``exclude_systems`` left out).

    Without ``gold_raters``: every rater against the union of the *other* raters on the cells it shares with
    them (leave one rater out). With ``gold_raters``: every rater *not* among them against the union of the
    gold raters on the cells it shares with them - the gold a detector is scored against, on those cells.
    """
    raters = ratings.raters
    excluded = set(exclude_systems)
    cells_of = {r: {c for c in ratings.spans.get(r, {}) if c[0] not in excluded} for r in raters}
    if gold_raters is None:
        scored, pool = list(raters), None
    else:
        chosen = set(gold_raters)
        pool = [r for r in raters if r in chosen]
        scored = [r for r in raters if r not in chosen]
    out = []
    for r in scored:
        own = cells_of[r]
        against = [o for o in (raters if pool is None else pool) if o != r and cells_of[o] & own]
        shared = [c for c in ratings.spans[r] if c in own and any(c in cells_of[o] for o in against)]
        if not shared:
            continue
        gold = gold_from_ratings(ratings, raters=against, name="others", errors=errors,
                                 source_spans=source_spans).restricted(shared)
        pred = rater_spans(ratings, r, errors=errors, source_spans=source_spans).restricted(shared)
        out.append((r, against, shared, gold, pred))
    return out


#: The two ceiling rules, as the signature's ``ceiling`` field names them.
CEILING_RULES = ("leave-one-rater-out", "others-against-gold-raters")


def fair_scores(ratings, rows, spec, *, errors: str = defaults.SPAN_ERRORS,
                source_spans: bool = defaults.SPAN_SOURCE_SPANS, exclude_systems=(), gold_raters=None) -> dict:
    """Every row (SpanAnnotations on the gold's cells) scored against the golds of the human ceiling; the
    F1 of each row is averaged over the raters (as the ceiling averages the raters' F1).

    Without ``gold_raters`` (the gold is every rater's union): for each rater R, the union of the other
    raters' spans on the cells R shares with them (leave one rater out). With ``gold_raters``: for each rater
    R outside them, the gold raters' union on the cells R shares with them - the detectors' own gold, on the
    cells a human outside the gold also rated. Cells of ``exclude_systems``, and cells some row lacks, are
    left out of every gold.

    Returns ``{"f1": ndarray (D,), "ceiling_f1": float, "raters": int, "rule": str, "cells": int}``
    (``cells``: the (rater, cell) pairs scored).
    """
    finish = finisher(spec.averaging, spec.macro)
    per_rater, ceiling, n_pairs = [], [], 0
    for _, _, shared, gold, pred in held_out(ratings, errors, source_spans, exclude_systems, gold_raters):
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
        n_pairs += len(keep)
    if not per_rater:
        if gold_raters is not None:
            raise ParameterError(f"`gold_raters` must leave out a rater who shares segments with them for the fair "
                                 f"ceiling; got {', '.join(gold_raters)}.")
        raise ParameterError("`ratings` must have segments rated by at least two raters for the fair ceiling; got "
                             "one rater per segment.")
    return {"f1": np.mean(per_rater, axis=0), "ceiling_f1": float(np.mean(ceiling)), "raters": len(ceiling),
            "rule": CEILING_RULES[gold_raters is not None], "cells": n_pairs}
