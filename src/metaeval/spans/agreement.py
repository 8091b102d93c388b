"""Human agreement on error spans: each rater scored as a detector against the other raters.

For every rater R of multi-rater MQM ratings (WMT23: three raters per segment), on the cells R rated:

``held-out``
    R's spans against the union (:func:`metaeval.spans.model.merge_union`) of the *other* raters' spans of
    the same cells. The union, not a majority: with the two remaining raters a majority is their
    intersection, narrower than either rater, and MQM raters miss far more errors than they invent
    (Freitag et al. 2021); the union is also how :func:`~metaeval.spans.model.gold_from_ratings` builds the
    gold a detector is scored against, so the two numbers are read on the same scale.
``pairwise``
    R against each other rater R' on the cells both rated (swapping the two swaps precision and recall).

Each row carries a bootstrap interval (BOOT over that rater's own systems x segments cells; the same seed for
every row). The held-out F1 is the human ceiling printed beside the detectors: a detector scored against the
full union gold is compared with a rater scored against the union of the remaining raters (one fewer rater
in its gold, so the ceiling is slightly conservative).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults
from ..errors import ParameterError, check_int, check_probability
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.resampling.draws import bootstrap_draws, check_rng
from ..vocabulary import check_method
from . import measures as _m
from .evaluate import _finish, span_channels
from .model import SpanAnnotations, gold_from_ratings, rater_spans
from .resampling import bootstrap_statistics, intervals

__all__ = ["SpanAgreementResult", "span_agreement"]


@dataclass(frozen=True)
class SpanAgreementResult(ResultMixin):
    """Result of :func:`span_agreement`: one row per (rater, reference), ``rows`` as dicts with ``rater``,
    ``against`` (``"others"`` or a rater), ``n_cells``, precision / recall / F1 and their intervals."""

    rows: tuple
    ceiling_f1: float
    measure: str
    averaging: str
    severity: str
    method: str
    n_resamples: int
    confidence_level: float
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.rows]

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "span-agreement", "rows": self.frame_rows(), "ceiling_f1": self.ceiling_f1,
                "measure": self.measure, "averaging": self.averaging, "severity": self.severity,
                "method": self.method, "n_resamples": self.n_resamples, "signature": str(self.signature)}


def _score(gold: SpanAnnotations, pred: SpanAnnotations, measure, averaging, severity, method, k, level, seed):
    channels, present, (systems, segments) = span_channels(gold, [pred], measure=measure, severity=severity,
                                                           averaging=averaging)
    finish = _finish(averaging)
    n = int(present.sum())
    point = finish(channels.reshape(1, channels.shape[1], -1).sum(axis=-1)[None], np.array([n]))[0, 0]
    draws = bootstrap_draws(len(systems), len(segments), method=method, n_resamples=k,
                            rng=np.random.default_rng(seed))
    ci = intervals(bootstrap_statistics(channels, present, draws, finish), level)[0]
    return n, point, ci


def span_agreement(ratings, *, measure: str = _m.DEFAULT_MEASURE, averaging: str = _m.DEFAULT_AVERAGING,
                   severity: str = _m.DEFAULT_SEVERITY_MODE, method: str = defaults.RESAMPLING_METHOD,
                   n_resamples: int = defaults.N_RESAMPLES, confidence_level: float = defaults.CONFIDENCE_LEVEL,
                   pairwise: bool = True, rng: Any = None) -> SpanAgreementResult:
    """Rater-vs-rater span agreement of MQM ratings (see the module docstring).

    Parameters
    ----------
    ratings : MQMRatings
        From :func:`metaeval.read_mqm_ratings`; needs cells rated by at least two raters.
    measure, averaging, severity : str
        As in :func:`metaeval.spans.evaluate_spans`.
    method, n_resamples, confidence_level : as there.
    pairwise : bool
        Also every ordered rater pair.
    rng : None or int
        Seed of every row's bootstrap (the same for each row).

    Returns
    -------
    SpanAgreementResult
    """
    measure, averaging, severity = _m.check_measure(measure, averaging, severity)
    method = check_method(method)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    confidence_level = check_probability("confidence_level", confidence_level)
    gen, seed = check_rng(rng)
    base = int(gen.integers(0, 2**63 - 1))
    raters = ratings.raters
    cells_of = {r: set(ratings.spans.get(r, {})) for r in raters}
    rows = []
    for r in raters:
        own = cells_of[r]
        shared = [c for c in ratings.spans[r] if any(c in cells_of[o] for o in raters if o != r)]
        if not shared:
            continue
        others = [o for o in raters if o != r and cells_of[o] & own]
        gold = gold_from_ratings(ratings, raters=others, name="others").restricted(shared)
        pred = rater_spans(ratings, r).restricted(shared)
        n, point, ci = _score(gold, pred, measure, averaging, severity, method, n_resamples, confidence_level, base)
        rows.append(_row(r, "others", n, point, ci))
        if pairwise:
            for o in others:
                both = [c for c in shared if c in cells_of[o]]
                g = rater_spans(ratings, o).restricted(both)
                n, point, ci = _score(g, pred.restricted(both), measure, averaging, severity, method, n_resamples,
                                      confidence_level, base)
                rows.append(_row(r, o, n, point, ci))
    if not rows:
        raise ParameterError("`ratings` must have segments rated by at least two raters for span agreement; got one "
                             "rater per segment.")
    held = [row["f1"] for row in rows if row["against"] == "others"]
    sig = Signature.of(analysis="span-agreement", data=ratings.scores.name, gold="union-of-others", measure=measure,
                       averaging=averaging, severity=severity, ci=f"boot-{method}", n_resamples=n_resamples,
                       confidence_level=confidence_level, seed=seed)
    return SpanAgreementResult(rows=tuple(rows), ceiling_f1=float(np.mean(held)), measure=measure,
                               averaging=averaging, severity=severity, method=method, n_resamples=n_resamples,
                               confidence_level=confidence_level, signature=sig)


def _row(rater, against, n, point, ci):
    return {"rater": rater, "against": against, "n_cells": n, "precision": float(point[0]),
            "precision_low": float(ci[0, 0]), "precision_high": float(ci[0, 1]), "recall": float(point[1]),
            "recall_low": float(ci[1, 0]), "recall_high": float(ci[1, 1]), "f1": float(point[2]),
            "f1_low": float(ci[2, 0]), "f1_high": float(ci[2, 1])}
