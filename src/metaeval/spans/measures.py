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

Span-level matching is one-to-one (``matching=``):

``"optimal"`` (the default, as the reference implementation since 2026-02-26)
    The assignment maximising the summed match objective of the measure (Hungarian algorithm,
    :func:`scipy.optimize.linear_sum_assignment`): 1 for an identical pair (``"exact"``), 1 for an
    overlapping pair (``"overlap"``), the pair's Dice overlap ``2 o / (len(pred) + len(gold))``
    (``"partial"``); pairs of objective 0 are not matched. Each measure has its own assignment.
``"greedy"``
    The candidate pairs (overlapping, or identical for ``"exact"``) taken in decreasing order of their Dice
    overlap (ties: earlier predicted span, then earlier gold span), each span matched at most once.

Then ``p_num`` is the summed credit of the matched predicted spans, ``p_den`` the number of predicted spans,
and likewise for recall.

Sides: a span marks the target (translation) or the source (omissions and source issues are marked in the
source). A span matches only a span of the same side; character measures count the two texts' characters
apart. The counts of a cell are the sums over its two sides.

``severity="match"`` (span and character levels) lets a pair (or a character) count only when the
predicted and gold severities are equal; ``critical="major"`` (default, the reference's
``transform_critical_into_major``) compares a critical severity as major, ``"own"`` keeps it apart.
``"ignore"`` (default) disregards severity. ``"wmt25"`` has its own severity rule (critical as major) and
takes ``severity="ignore"`` only.

Macro-averaging (``averaging="macro"``) averages per-cell precision and recall; its F1 is the mean of the
per-cell F1 (``macro="mean-f1"``, the reference's, following Opitz & Burst 2019) or the F1 of the macro
precision and recall (``"f1-of-means"``).

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

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .. import defaults
from ..errors import ParameterError, check_choice
from ..vocabulary import (SPAN_AVERAGINGS, SPAN_CRITICAL_RULES, SPAN_MACRO_RULES, SPAN_MATCHINGS, SPAN_MEASURES,
                          SPAN_SEVERITY_MODES, SPAN_SIDES)

__all__ = ["MEASURES", "AVERAGINGS", "SEVERITY_MODES", "MATCHINGS", "MACRO_RULES", "DEFAULT_MEASURE",
           "DEFAULT_AVERAGING", "DEFAULT_SEVERITY_MODE", "MeasureSpec", "cell_counts", "check_measure",
           "prf_from_sums", "macro_channels"]

MEASURES = SPAN_MEASURES
AVERAGINGS = SPAN_AVERAGINGS
SEVERITY_MODES = SPAN_SEVERITY_MODES
MATCHINGS = SPAN_MATCHINGS
MACRO_RULES = SPAN_MACRO_RULES
#: Partial overlap with partial credit, micro-averaged: Perrella et al.'s (2026) recommendation (exact match
#: punishes boundary disagreements that humans themselves make; any-overlap rewards one long span covering
#: many errors; macro-averaging gives every error-free segment the same weight as a long erroneous one).
DEFAULT_MEASURE = defaults.SPAN_MEASURE
DEFAULT_AVERAGING = defaults.SPAN_AVERAGING
DEFAULT_SEVERITY_MODE = defaults.SPAN_SEVERITY_MODE


@dataclass(frozen=True)
class MeasureSpec:
    """The validated choices of one span measure (see the module docstring)."""

    measure: str = defaults.SPAN_MEASURE
    averaging: str = defaults.SPAN_AVERAGING
    severity: str = defaults.SPAN_SEVERITY_MODE
    matching: str = defaults.SPAN_MATCHING
    macro: str = defaults.SPAN_MACRO
    critical: str = defaults.SPAN_CRITICAL

    def fields(self) -> dict:
        """The signature fields: every choice that moves the number (matching only for span-level
        measures, the macro rule only when macro-averaged, the critical rule only under severity matching)."""
        return {"measure": self.measure, "averaging": self.averaging,
                "macro": self.macro if self.averaging == "macro" else None,
                "matching": self.matching if self.measure in ("exact", "overlap", "partial") else None,
                "severity": self.severity,
                "critical": self.critical if self.severity == "match" else None}

    def describe(self) -> str:
        """One line for a table title."""
        parts = [f"{self.measure} match"]
        if self.measure in ("exact", "overlap", "partial"):
            parts.append(f"{self.matching} matching")
        parts.append(f"{self.averaging}-averaged" + (f" ({self.macro})" if self.averaging == "macro" else ""))
        parts.append(f"severity {self.severity}" + (f" (critical={self.critical})" if self.severity == "match"
                                                    else ""))
        return ", ".join(parts)


def check_measure(measure: str, averaging: str, severity: str, *, matching: str = defaults.SPAN_MATCHING,
                  macro: str = defaults.SPAN_MACRO, critical: str = defaults.SPAN_CRITICAL) -> MeasureSpec:
    """Validate the choices of a span measure."""
    measure = check_choice("measure", measure, MEASURES)
    averaging = check_choice("averaging", averaging, AVERAGINGS)
    severity = check_choice("severity", severity, SEVERITY_MODES)
    matching = check_choice("matching", matching, MATCHINGS)
    macro = check_choice("macro", macro, MACRO_RULES)
    critical = check_choice("critical", critical, SPAN_CRITICAL_RULES)
    if measure == "wmt25" and severity != "ignore":
        raise ParameterError(f"`severity` must be 'ignore' with measure 'wmt25' (it weighs severities itself); "
                             f"got {severity!r}.")
    return MeasureSpec(measure, averaging, severity, matching, macro, critical)


def _sev_class(severity: str) -> int:
    return 1 if severity in ("major", "critical") else 0  # WMT25: major (critical scored as major) or minor


def _severity_key(severity: str, critical: str) -> str:
    return "major" if critical == "major" and severity == "critical" else severity


def _char_counts(gold, pred, measure: str, severity: str, critical: str = "major"
                 ) -> tuple[float, float, float, float]:
    """Sweep over the span boundaries: for each piece of text know how many gold / predicted spans of each
    severity cover it."""
    events: dict[int, list] = {}
    for owner, spans in ((0, gold), (1, pred)):
        for s in spans:
            key = _severity_key(s.severity, critical) if measure != "wmt25" else _sev_class(s.severity)
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


def _pair_objective(p, g, measure: str) -> tuple[float, int]:
    """``(objective, shared characters)`` of one candidate pair (objective 0: not a candidate)."""
    o = min(p.end, g.end) - max(p.start, g.start)
    if measure == "exact":
        return (1.0, o) if (p.start == g.start and p.end == g.end) else (0.0, 0)
    if o <= 0:
        return 0.0, 0
    if measure == "overlap":
        return 1.0, o
    return 2.0 * o / (p.length + g.length), o


def _matched_pairs(gold, pred, measure: str, severity: str, matching: str, critical: str) -> list:
    """The matched ``(i, j, o)`` pairs of predicted span i and gold span j sharing o characters."""
    candidates = []
    for i, p in enumerate(pred):
        for j, g in enumerate(gold):
            if severity == "match" and _severity_key(p.severity, critical) != _severity_key(g.severity, critical):
                continue
            value, o = _pair_objective(p, g, measure)
            if value > 0:
                candidates.append((value, i, j, o))
    if len({c[1] for c in candidates}) == len(candidates) and len({c[2] for c in candidates}) == len(candidates):
        # no span has two candidates: every candidate pair is matched, by either rule (the common case)
        return [(i, j, o) for _, i, j, o in candidates]
    if matching == "optimal":
        from scipy.optimize import linear_sum_assignment

        objective = np.zeros((len(pred), len(gold)))
        shared = np.zeros((len(pred), len(gold)), dtype=np.int64)
        for value, i, j, o in candidates:
            objective[i, j], shared[i, j] = value, o
        rows, cols = linear_sum_assignment(objective, maximize=True)
        return [(i, j, int(shared[i, j])) for i, j in zip(rows.tolist(), cols.tolist()) if objective[i, j] > 0]
    ranked = sorted((-2.0 * o / (pred[i].length + gold[j].length), i, j, o) for _, i, j, o in candidates)
    used_p, used_g, out = set(), set(), []
    for _, i, j, o in ranked:
        if i in used_p or j in used_g:
            continue
        used_p.add(i)
        used_g.add(j)
        out.append((i, j, o))
    return out


def _span_counts(gold, pred, measure: str, severity: str, matching: str = "greedy", critical: str = "major"
                 ) -> tuple[float, float, float, float]:
    p_num = r_num = 0.0
    if gold and pred:
        for i, j, o in _matched_pairs(gold, pred, measure, severity, matching, critical):
            if measure == "partial":
                p_num += o / pred[i].length
                r_num += o / gold[j].length
            else:
                p_num += 1.0
                r_num += 1.0
    return p_num, float(len(pred)), r_num, float(len(gold))


def _side(spans, side: str) -> list:
    return [s for s in spans if getattr(s, "side", "target") == side]


def cell_counts(gold: Sequence, pred: Sequence, *, measure: str = DEFAULT_MEASURE,
                severity: str = DEFAULT_SEVERITY_MODE, matching: str = defaults.SPAN_MATCHING,
                critical: str = defaults.SPAN_CRITICAL) -> tuple[float, float, float, float]:
    """``(p_num, p_den, r_num, r_den)`` of one cell (see the module docstring); spans are
    :class:`~metaeval.spans.model.Span` objects. The two sides (target, source) are counted apart and
    summed: a span matches only a span of its own side."""
    if not gold and not pred:
        return 0.0, 0.0, 0.0, 0.0
    if all(x.side == "target" for x in gold) and all(x.side == "target" for x in pred):
        if measure in ("char", "wmt25"):
            return _char_counts(gold, pred, measure, severity, critical)
        return _span_counts(list(gold), list(pred), measure, severity, matching, critical)
    total = (0.0, 0.0, 0.0, 0.0)
    for side in SPAN_SIDES:
        g, p = _side(gold, side), _side(pred, side)
        if not g and not p:
            continue
        if measure in ("char", "wmt25"):
            counts = _char_counts(g, p, measure, severity, critical)
        else:
            counts = _span_counts(g, p, measure, severity, matching, critical)
        total = tuple(a + b for a, b in zip(total, counts))
    return total


def _ratio(num, den):
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)


def f1_of(p, r):
    with np.errstate(invalid="ignore", divide="ignore"):
        s = p + r
        return np.where(s > 0, 2.0 * p * r / np.where(s > 0, s, 1.0), 0.0)


def macro_channels(counts: np.ndarray) -> np.ndarray:
    """Per-cell ``(P_c, R_c, F1_c)`` from per-cell counts ``(..., 4)`` (P, R = 1 for an empty denominator,
    so a cell with neither gold nor predicted spans has F1_c = 1, as in the reference)."""
    p = _ratio(counts[..., 0], counts[..., 1])
    r = _ratio(counts[..., 2], counts[..., 3])
    return np.stack([p, r, f1_of(p, r)], axis=-1)


def prf_from_sums(sums: np.ndarray, n_cells, averaging: str, macro: str = defaults.SPAN_MACRO) -> np.ndarray:
    """``(..., 3)`` precision, recall, F1 from channel sums: micro ``(..., 4)`` counts, macro ``(..., 3)``
    summed per-cell P, R and F1 over ``n_cells`` cells (``macro``: the F1 is their mean, ``"mean-f1"``, or
    the F1 of the macro P and R, ``"f1-of-means"``)."""
    if averaging == "micro":
        p = _ratio(sums[..., 0], sums[..., 1])
        r = _ratio(sums[..., 2], sums[..., 3])
        return np.stack([p, r, f1_of(p, r)], axis=-1)
    n = np.asarray(n_cells, dtype=np.float64)
    p = sums[..., 0] / n
    r = sums[..., 1] / n
    f = sums[..., 2] / n if macro == "mean-f1" else f1_of(p, r)
    return np.stack([p, r, f], axis=-1)
