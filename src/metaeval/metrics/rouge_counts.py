"""Sufficient statistics of ROUGE and the recall / precision / F formulas of ROUGE-1.5.5.

Every ROUGE measure of one candidate reduces to three totals (what ROUGE-1.5.5 prints with
``-t 1``): the model (reference) total ``M``, the peer (candidate) total ``P`` and the hit count
``H``. With multiple references, ``-f A`` sums the totals over the references and ``-f B`` keeps
those of the best reference. Then

``recall = g(H / M)``, ``precision = g(H / P)``,
``F = precision * recall / ((1 - alpha) * precision + alpha * recall)``,

with ``g(x) = x`` except for ROUGE-W, where ``g(x) = x ** (1 / w)``; a ratio with a zero total and an
F with a zero denominator are 0, as in ROUGE-1.5.5. Corpus-level scores re-aggregate the per-item
totals (see :func:`aggregate`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["RougeCounts", "RougeStatistics", "aggregate", "round5", "scores_from_counts"]


def round5(x: float) -> float:
    """Round as ROUGE-1.5.5 prints (``sprintf("%7.5f")``: correctly rounded binary double)."""
    return float(f"{x:.5f}")


@dataclass(frozen=True)
class RougeCounts:
    """The totals behind one ROUGE measure of one candidate.

    Attributes
    ----------
    hit : float
        Matches between candidate and references (weighted for ROUGE-W).
    model_count : float
        Total of the references (``M``; for ROUGE-W ``sum_k f(sum_i f(len r_ki))``).
    peer_count : float
        Total of the candidate (``P``), once per reference used.
    weight : float
        1, or the ROUGE-W weight ``w`` whose inverse power turns ratios into scores.
    """

    hit: float
    model_count: float
    peer_count: float
    weight: float = 1.0

    def __add__(self, other: "RougeCounts") -> "RougeCounts":
        return RougeCounts(
            self.hit + other.hit,
            self.model_count + other.model_count,
            self.peer_count + other.peer_count,
            self.weight,
        )


@dataclass(frozen=True)
class RougeStatistics:
    """Per-candidate sufficient statistics of every measure a :class:`~metaeval.metrics.Rouge` computes.

    Attributes
    ----------
    counts : Mapping[str, RougeCounts]
        Read-only mapping from measure name (``'rouge-1'``, ``'rouge-l'``, ``'rouge-w-1.2'``,
        ``'rouge-su4'``, ...) to its totals.
    """

    counts: Mapping[str, RougeCounts]

    def __post_init__(self):
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))


def _ratio(hit: float, total: float, weight: float) -> float:
    if total == 0:
        return 0.0
    ratio = hit / total
    return ratio if weight == 1.0 else ratio ** (1.0 / weight)


def _f(recall: float, precision: float, alpha: float) -> float:
    denominator = (1.0 - alpha) * precision + alpha * recall
    return precision * recall / denominator if denominator > 0 else 0.0


def scores_from_counts(counts: RougeCounts, *, alpha: float, rouge155_rounding: bool) -> dict[str, float]:
    """Recall, precision and F of one measure from its totals.

    Parameters
    ----------
    counts : RougeCounts
    alpha : float
        ``-p``: ``F = 1 / (alpha / precision + (1 - alpha) / recall)``; 0.5 is the harmonic mean.
    rouge155_rounding : bool
        Reproduce ROUGE-1.5.5's printed numbers: recall and precision rounded to 5 decimals, F
        computed from the rounded values and rounded. Otherwise full precision.

    Returns
    -------
    dict
        ``{'recall': float, 'precision': float, 'f1': float}`` (``f1`` is F with ``alpha``; 0.5 gives F1).
    """
    recall = _ratio(counts.hit, counts.model_count, counts.weight)
    precision = _ratio(counts.hit, counts.peer_count, counts.weight)
    if rouge155_rounding:
        recall, precision = round5(recall), round5(precision)
        return {"recall": recall, "precision": precision, "f1": round5(_f(recall, precision, alpha))}
    return {"recall": recall, "precision": precision, "f1": _f(recall, precision, alpha)}


def aggregate(
    statistics: Sequence[RougeStatistics],
    *,
    counting_unit: str,
    alpha: float,
    rouge155_rounding: bool,
) -> dict[str, dict[str, float]]:
    """Corpus-level ROUGE from per-candidate statistics.

    Parameters
    ----------
    statistics : sequence of RougeStatistics
        One per candidate, all from the same :class:`~metaeval.metrics.Rouge` settings.
    counting_unit : {'sentence', 'token'}
        ``'sentence'`` (``-t 0``): the mean over candidates of the per-candidate recall, precision
        and F. ``'token'`` (``-t 1``): the scores of the summed totals, each token counting equally.
    alpha : float
    rouge155_rounding : bool
        Round as ROUGE-1.5.5 prints (per-candidate scores before averaging, and the result).

    Returns
    -------
    dict
        Measure name to ``{'recall', 'precision', 'f1'}``.

    Notes
    -----
    ROUGE-1.5.5 itself prints the mean of its 1,000 bootstrap resample means rather than the plain
    mean, and for ROUGE-W with ``-t 1`` it omits the inverse power ``1 / w``; here the plain mean and
    the same ``g`` as per candidate are used.
    """
    names = list(statistics[0].counts)
    out: dict[str, dict[str, float]] = {}
    for name in names:
        items = [s.counts[name] for s in statistics]
        if counting_unit == "token":
            total = items[0]
            for c in items[1:]:
                total = total + c
            out[name] = scores_from_counts(total, alpha=alpha, rouge155_rounding=rouge155_rounding)
            continue
        per_item = [scores_from_counts(c, alpha=alpha, rouge155_rounding=rouge155_rounding) for c in items]
        means = {k: sum(s[k] for s in per_item) / len(per_item) for k in ("recall", "precision", "f1")}
        out[name] = {k: round5(v) for k, v in means.items()} if rouge155_rounding else means
    return out
