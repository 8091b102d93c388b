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
every row). The held-out F1 is the human ceiling printed beside the detectors. A detector scored against the
full union gold has one more rater in its gold than the held-out rater (one rater's own spans scored as a
detector get F1 0.670 against the all-rater union but 0.423 as a held-out rater on WMT23 zh-en), so
:func:`fair_scores` also scores every detector against the *same* leave-one-rater-out golds: that is the
number to compare with the ceiling (``evaluate_spans(..., fair_ceiling=True)``, ``--ceiling`` in the CLI).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults
from ..errors import ParameterError, check_probability
from ..serialization import ResultMixin
from ..signature import Signature
from ..runtime.progress import as_progress
from ..runtime.progress import finish as finish_step
from ..runtime.progress import step as progress_step
from ..stats.resampling.draws import bootstrap_draws, check_rng
from ..vocabulary import check_method
from . import measures as _m
from .channels import check_resamples, finisher, span_channels
from .heldout import fair_scores, held_out
from .model import SpanAnnotations, check_known_systems, rater_spans
from .resampling import bootstrap_statistics, intervals

__all__ = ["SpanAgreementResult", "span_agreement", "fair_scores"]


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
    matching: str = defaults.SPAN_MATCHING
    macro: str = defaults.SPAN_MACRO
    critical: str = defaults.SPAN_CRITICAL
    errors: str = defaults.SPAN_ERRORS

    def frame_rows(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self.rows]

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "span-agreement", "rows": self.frame_rows(), "ceiling_f1": self.ceiling_f1,
                "measure": self.measure, "averaging": self.averaging, "macro": self.macro,
                "matching": self.matching, "severity": self.severity, "critical": self.critical,
                "errors": self.errors, "method": self.method, "n_resamples": self.n_resamples,
                "signature": str(self.signature)}


def _score(gold: SpanAnnotations, pred: SpanAnnotations, spec, method, k, level, seed):
    channels, present, (systems, segments) = span_channels(gold, [pred], measure=spec.measure,
                                                           severity=spec.severity, averaging=spec.averaging,
                                                           matching=spec.matching, critical=spec.critical)
    finish = finisher(spec.averaging, spec.macro)
    n = int(present.sum())
    point = finish(channels.reshape(1, channels.shape[1], -1).sum(axis=-1)[None], np.array([n]))[0, 0]
    draws = bootstrap_draws(len(systems), len(segments), method=method, n_resamples=k,
                            rng=np.random.default_rng(seed))
    ci = intervals(bootstrap_statistics(channels, present, draws, finish), level)[0]
    return n, point, ci


def span_agreement(ratings, *, measure: str = _m.DEFAULT_MEASURE, averaging: str = _m.DEFAULT_AVERAGING,
                   severity: str = _m.DEFAULT_SEVERITY_MODE, matching: str = defaults.SPAN_MATCHING,
                   macro: str = defaults.SPAN_MACRO, critical: str = defaults.SPAN_CRITICAL,
                   errors: str = defaults.SPAN_ERRORS, source_spans: bool = defaults.SPAN_SOURCE_SPANS,
                   method: str = defaults.RESAMPLING_METHOD,
                   n_resamples: int = defaults.N_RESAMPLES, confidence_level: float = defaults.CONFIDENCE_LEVEL,
                   pairwise: bool = True, exclude_systems: Any = (), gold_raters: Any = None, rng: Any = None,
                   progress: Any = None) -> SpanAgreementResult:
    """Rater-vs-rater span agreement of MQM ratings (see the module docstring).

    Parameters
    ----------
    ratings : MQMRatings
        From :func:`metaeval.read_mqm_ratings`; needs cells rated by at least two raters.
    measure, averaging, severity, matching, macro, critical, errors, source_spans
        As in :func:`metaeval.spans.evaluate_spans`.
    method, n_resamples, confidence_level : as there.
    pairwise : bool
        Also every ordered rater pair.
    exclude_systems : sequence of str
        Systems left out (each must be a system of the ratings).
    gold_raters : sequence of str, optional
        The gold is these raters' union (as ``evaluate_spans(gold_raters=...)`` builds it): every *other*
        rater is scored against it on the segments it shares with them (``against`` = ``"gold raters"``), and
        the ceiling is their mean F1 - the ceiling ``evaluate_spans(..., gold_raters=..., fair_ceiling=True)``
        prints. Default: every rater held out in turn against the others.
    rng : None or int
        Seed of every row's bootstrap (the same for each row).
    progress : callable, optional
        The progress protocol (:mod:`metaeval.runtime.progress`): step ``"agreement"``, one unit per rater.

    Returns
    -------
    SpanAgreementResult
    """
    spec = _m.check_measure(measure, averaging, severity, matching=matching, macro=macro, critical=critical)
    method = check_method(method)
    n_resamples = check_resamples(n_resamples, len(ratings.scores.systems), len(ratings.scores.inputs))
    confidence_level = check_probability("confidence_level", confidence_level)
    gen, seed = check_rng(rng)
    base = int(gen.integers(0, 2**63 - 1))
    progress = as_progress(progress)
    exclude_systems = tuple(exclude_systems)
    check_known_systems(exclude_systems, ratings.scores.systems, what="systems of the ratings")
    if gold_raters is not None:
        if isinstance(gold_raters, str) or not all(r in ratings.raters for r in gold_raters) or not gold_raters:
            raise ParameterError(f"`gold_raters` must be a non-empty sequence of raters of the ratings "
                                 f"({', '.join(ratings.raters)}); got {gold_raters!r}.")
        gold_raters = tuple(dict.fromkeys(gold_raters))
    against = "others" if gold_raters is None else "gold raters"
    held = held_out(ratings, errors, source_spans, exclude_systems, gold_raters)
    advance = progress_step(progress, "agreement", total=len(held))
    cells_of = {r: {c for c in ratings.spans.get(r, {}) if c[0] not in set(exclude_systems)} for r in ratings.raters}
    rows = []
    for r, others, shared, gold, pred in held:
        n, point, ci = _score(gold, pred, spec, method, n_resamples, confidence_level, base)
        rows.append(_row(r, against, n, point, ci))
        if pairwise:
            for o in others:
                both = [c for c in shared if c in cells_of[o]]
                g = rater_spans(ratings, o, errors=errors, source_spans=source_spans).restricted(both)
                n, point, ci = _score(g, pred.restricted(both), spec, method, n_resamples, confidence_level, base)
                rows.append(_row(r, o, n, point, ci))
        if advance is not None:
            advance()
    finish_step(progress, "agreement")
    if not rows and gold_raters is not None:
        raise ParameterError(f"`gold_raters` must leave out a rater who shares segments with them; got "
                             f"{', '.join(gold_raters)}.")
    if not rows:
        raise ParameterError("`ratings` must have segments rated by at least two raters for span agreement; got one "
                             "rater per segment.")
    held_f1 = [row["f1"] for row in rows if row["against"] == against]
    from pathlib import Path

    sig = Signature.of(analysis="span-agreement", data=ratings.scores.name, gold_file=Path(str(ratings.path)).name,
                       gold="union-of-others" if gold_raters is None else "union-of-gold-raters",
                       **({"gold_raters": ",".join(gold_raters)} if gold_raters else {}),
                       errors=errors, source_spans=source_spans,
                       **({"exclude_system": ",".join(exclude_systems)} if exclude_systems else {}),
                       **{k: v for k, v in spec.fields().items() if v is not None}, ci=f"boot-{method}",
                       n_resamples=n_resamples, confidence_level=confidence_level, pairwise=pairwise, seed=seed)
    return SpanAgreementResult(rows=tuple(rows), ceiling_f1=float(np.mean(held_f1)), measure=spec.measure,
                               averaging=spec.averaging, severity=spec.severity, method=method,
                               n_resamples=n_resamples, confidence_level=confidence_level, signature=sig,
                               matching=spec.matching, macro=spec.macro, critical=spec.critical, errors=errors)


def _row(rater, against, n, point, ci):
    return {"rater": rater, "against": against, "n_cells": n, "precision": float(point[0]),
            "precision_low": float(ci[0, 0]), "precision_high": float(ci[0, 1]), "recall": float(point[1]),
            "recall_low": float(ci[1, 0]), "recall_high": float(ci[1, 1]), "f1": float(point[2]),
            "f1_low": float(ci[2, 0]), "f1_high": float(ci[2, 1])}
