"""Span measures: precision, recall and F1 of predicted error spans against gold spans.

Every measure reduces one cell (a system's translation of a segment) to four sufficient counts,
``(p_num, p_den, r_num, r_den)``: precision is ``p_num / p_den`` and recall ``r_num / r_den``. Micro-averaging
sums the counts over the cells first; macro-averaging averages the per-cell precision and recall. Resampling
(:mod:`metaeval.spans.resampling`) re-aggregates these counts; the spans are never looked at again.

Matching rules (``measure=``):

``"char"``
    Character level: ``p_num = r_num = |P & G|``, ``p_den = |P|``, ``r_den = |G|`` for the sets of characters
    covered by the predicted (P) and gold (G) spans (overlapping spans of one scorer count a character once).
``"exact"``
    Span level, a predicted span matches a gold span with the same start and end; credit 1.
``"overlap"``
    Span level, a predicted span matches a gold span it overlaps by at least one character; credit 1.
``"partial"`` (the default)
    Span level, partial overlap with partial credit (Perrella, Morales Agostinho & Zaragoza 2026, "mpp"):
    a matched pair with ``o`` shared characters gives the predicted span ``o / len(pred)`` towards precision
    and the gold span ``o / len(gold)`` towards recall.
``"wmt25"``
    The severity-weighted character F1 of the WMT QE / WMT25 error-span subtask as its organisers' scoring
    script computes it: a gold character covered by a prediction counts 1 if a predicted span covering it
    has a gold severity of that character (minor or major; critical counts as major) and 0.5 otherwise;
    ``p_den`` / ``r_den`` are the predicted / gold covered characters.

Span-level matching is one-to-one and greedy, as in Perrella et al.: the candidate pairs (overlapping, or
identical for ``"exact"``) are taken in decreasing order of their Dice overlap ``2 o / (len(pred) + len(gold))``
(ties: earlier predicted span, then earlier gold span), each span matched at most once. Then
``p_num`` is the summed credit of the matched predicted spans, ``p_den`` the number of predicted spans,
and likewise for recall.

``severity="match"`` (span and character levels) lets a pair (or a character) count only when the
predicted and gold severities are equal; ``"ignore"`` (default) disregards severity. ``"wmt25"`` has its own
severity rule and takes ``severity="ignore"`` only.

Conventions for empty sets (Perrella et al.'s): precision is 1 when nothing is predicted, recall 1 when the
gold has no span, F1 = 2PR / (P + R) and 0 when P + R = 0. So a detector predicting nothing has micro P = 1,
R = 0, F1 = 0 whenever the gold has spans.

References
----------
Perrella, S., Morales Agostinho, E. and Zaragoza, H. (2026). Span-Level Machine Translation Meta-Evaluation.
arXiv:2603.19921.
Lavie, A. et al. (2025). Findings of the WMT25 Shared Task on Automated Translation Evaluation Systems. WMT.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import ParameterError, check_choice

__all__ = ["MEASURES", "AVERAGINGS", "SEVERITY_MODES", "DEFAULT_MEASURE", "DEFAULT_AVERAGING",
           "DEFAULT_SEVERITY_MODE", "cell_counts", "check_measure", "prf_from_sums", "macro_channels"]

MEASURES = ("char", "exact", "overlap", "partial", "wmt25")
AVERAGINGS = ("micro", "macro")
SEVERITY_MODES = ("ignore", "match")
#: Partial overlap with partial credit, micro-averaged: Perrella et al.'s (2026) recommendation (exact match
#: punishes boundary disagreements that humans themselves make; any-overlap rewards one long span covering
#: many errors; macro-averaging gives every error-free segment the same weight as a long erroneous one).
DEFAULT_MEASURE = "partial"
DEFAULT_AVERAGING = "micro"
DEFAULT_SEVERITY_MODE = "ignore"


def check_measure(measure: str, averaging: str, severity: str) -> tuple[str, str, str]:
    """Validate the three choices of a span measure."""
    measure = check_choice("measure", measure, MEASURES)
    averaging = check_choice("averaging", averaging, AVERAGINGS)
    severity = check_choice("severity", severity, SEVERITY_MODES)
    if measure == "wmt25" and severity != "ignore":
        raise ParameterError(f"`severity` must be 'ignore' with measure 'wmt25' (it weighs severities itself); "
                             f"got {severity!r}.")
    return measure, averaging, severity


def _sev_class(severity: str) -> int:
    return 1 if severity in ("major", "critical") else 0  # WMT25: major (critical scored as major) or minor


def _char_counts(gold, pred, measure: str, severity: str) -> tuple[float, float, float, float]:
    """Sweep over the span boundaries: for each piece of text know how many gold / predicted spans of each
    severity cover it."""
    events: dict[int, list] = {}
    for owner, spans in ((0, gold), (1, pred)):
        for s in spans:
            key = s.severity if measure != "wmt25" else _sev_class(s.severity)
            events.setdefault(s.start, []).append((owner, key, 1))
            events.setdefault(s.end, []).append((owner, key, -1))
    cover = ({}, {})
    tp = p_den = r_den = 0.0
    points = sorted(events)
    for x, nxt in zip(points, points[1:] + [None]):
        for owner, key, d in events[x]:
            cover[owner][key] = cover[owner].get(key, 0) + d
        if nxt is None:
            break
        width = nxt - x
        g = {k for k, v in cover[0].items() if v > 0}
        p = {k for k, v in cover[1].items() if v > 0}
        if g:
            r_den += width
        if p:
            p_den += width
        if g and p:
            if measure == "wmt25":
                tp += width * (1.0 if len(g) == 2 or g & p else 0.5)
            elif severity == "match":
                tp += width if g & p else 0
            else:
                tp += width
    return tp, p_den, tp, r_den


def _span_counts(gold, pred, measure: str, severity: str) -> tuple[float, float, float, float]:
    candidates = []
    for i, p in enumerate(pred):
        for j, g in enumerate(gold):
            if severity == "match" and p.severity != g.severity:
                continue
            if measure == "exact":
                if p.start != g.start or p.end != g.end:
                    continue
                o = p.length
            else:
                o = min(p.end, g.end) - max(p.start, g.start)
                if o <= 0:
                    continue
            candidates.append((-2.0 * o / (p.length + g.length), i, j, o))
    candidates.sort()
    used_p, used_g = set(), set()
    p_num = r_num = 0.0
    for _, i, j, o in candidates:
        if i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
        if measure == "partial":
            p_num += o / pred[i].length
            r_num += o / gold[j].length
        else:
            p_num += 1.0
            r_num += 1.0
    return p_num, float(len(pred)), r_num, float(len(gold))


def cell_counts(gold: Sequence, pred: Sequence, *, measure: str = DEFAULT_MEASURE,
                severity: str = DEFAULT_SEVERITY_MODE) -> tuple[float, float, float, float]:
    """``(p_num, p_den, r_num, r_den)`` of one cell (see the module docstring); spans are
    :class:`~metaeval.spans.model.Span` objects."""
    if not gold and not pred:
        return 0.0, 0.0, 0.0, 0.0
    if measure in ("char", "wmt25"):
        return _char_counts(gold, pred, measure, severity)
    return _span_counts(list(gold), list(pred), measure, severity)


def _ratio(num, den):
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)


def f1_of(p, r):
    with np.errstate(invalid="ignore", divide="ignore"):
        s = p + r
        return np.where(s > 0, 2.0 * p * r / np.where(s > 0, s, 1.0), 0.0)


def macro_channels(counts: np.ndarray) -> np.ndarray:
    """Per-cell ``(P_c, R_c)`` from per-cell counts ``(..., 4)`` (1 for an empty denominator)."""
    return np.stack([_ratio(counts[..., 0], counts[..., 1]), _ratio(counts[..., 2], counts[..., 3])], axis=-1)


def prf_from_sums(sums: np.ndarray, n_cells, averaging: str) -> np.ndarray:
    """``(..., 3)`` precision, recall, F1 from channel sums: micro ``(..., 4)`` counts, macro ``(..., 2)``
    summed per-cell P and R over ``n_cells`` cells."""
    if averaging == "micro":
        p = _ratio(sums[..., 0], sums[..., 1])
        r = _ratio(sums[..., 2], sums[..., 3])
    else:
        n = np.asarray(n_cells, dtype=np.float64)
        p = sums[..., 0] / n
        r = sums[..., 1] / n
    return np.stack([p, r, f1_of(p, r)], axis=-1)
