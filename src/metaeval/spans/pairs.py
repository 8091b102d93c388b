"""Several language pairs at once: each pair's result and the pooled one, from one call.

:func:`evaluate_spans_by_pair` takes a gold per language pair (or MQM ratings per pair) and detectors that
cover them (a detector file covering several pairs names each line's pair in an ``lp`` field; see
:func:`metaeval.spans.model.pool_golds`). Each pair is evaluated on its own gold; the pooled result treats the
pairs as one data set whose systems and segments are those of every pair (a system of one pair is never a
system of another), so the bootstrap resamples the systems and segments of all pairs together.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import ParameterError
from ..serialization import ResultMixin
from ..signature import Signature
from .evaluate import SpanEvaluationResult, evaluate_spans
from .model import SpanAnnotations, gold_from_ratings, pool_golds

__all__ = ["SpanPairsResult", "evaluate_spans_by_pair"]


@dataclass(frozen=True)
class SpanPairsResult(ResultMixin):
    """Result of :func:`evaluate_spans_by_pair`: ``per_pair`` (language pair -> SpanEvaluationResult) and
    ``pooled`` (every pair as one data set)."""

    per_pair: dict
    pooled: SpanEvaluationResult
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        rows = []
        for lp, result in [*self.per_pair.items(), ("pooled", self.pooled)]:
            rows += [{"lp": lp, **row} for row in result.frame_rows()]
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "spans-by-pair", "per_pair": {lp: r.to_dict() for lp, r in self.per_pair.items()},
                "pooled": self.pooled.to_dict(), "signature": str(self.signature)}


def evaluate_spans_by_pair(golds: Mapping[str, Any], detectors: Sequence[SpanAnnotations] = (), *,
                           errors: str | None = None, source_spans: bool | None = None, **options: Any
                           ) -> SpanPairsResult:
    """:func:`~metaeval.spans.evaluate_spans` per language pair and pooled.

    Parameters
    ----------
    golds : mapping
        Language pair -> its gold (SpanAnnotations) or its MQM ratings.
    detectors : sequence of SpanAnnotations
        On the pooled cells (``read_detector_spans(path, pooled.targets)`` with an ``lp`` field per line, or
        :func:`~metaeval.spans.model.pool_golds` of per-pair detectors); each must cover every pair.
    errors, source_spans
        For golds given as ratings (as in :func:`~metaeval.spans.model.gold_from_ratings`).
    **options
        Every other keyword of :func:`~metaeval.spans.evaluate_spans` (the same seed for each pair and the pool).
    """
    from .. import defaults
    from ..data.mqm_ratings import MQMRatings

    if not isinstance(golds, Mapping) or not golds:
        raise ParameterError(f"`golds` must map language pairs to golds; got {golds!r}.")
    if options.get("fair_ceiling"):
        raise ParameterError("`fair_ceiling` applies to one language pair at a time; got several.")
    built = {}
    for lp, gold in golds.items():
        if isinstance(gold, MQMRatings):
            gold = gold_from_ratings(gold, errors=defaults.SPAN_ERRORS if errors is None else errors,
                                     source_spans=defaults.SPAN_SOURCE_SPANS if source_spans is None else source_spans)
        built[lp] = gold
    pooled_gold = pool_golds(built)
    pooled = evaluate_spans(pooled_gold, detectors, source_spans=False if source_spans is False else None, **options)
    per_pair = {}
    for lp, cells in pooled_gold.pairs.items():
        wanted = set(cells)
        gold = pooled_gold.restricted(cells)
        gold.source_file = built[lp].source_file
        rows = [d.restricted([c for c in d.cells if c in wanted]) for d in detectors]
        per_pair[lp] = evaluate_spans(gold, rows, source_spans=False if source_spans is False else None, **options)
    sig = pooled.signature.with_fields(analysis="spans-by-pair", pairs=",".join(built))
    return SpanPairsResult(per_pair=per_pair, pooled=pooled, signature=sig)
