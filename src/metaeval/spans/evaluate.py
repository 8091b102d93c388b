"""Evaluating span detectors against gold spans, with bootstrap intervals and paired permutation tests.

:func:`evaluate_spans` scores every detector (and the trivial baselines of :mod:`metaeval.spans.baselines`)
with one span measure (:mod:`metaeval.spans.measures`), puts a bootstrap percentile interval on precision,
recall and F1 (BOOT-SYSTEMS / INPUTS / BOTH over the systems x segments cells, one set of draws shared by
every detector), and with ``compare=True`` tests every pair of detectors on F1 with a paired permutation test
(PERM-SYSTEMS / INPUTS / BOTH, one set of masks for every pair) and ranks them into significance clusters
(mt-metrics-eval's rule, :func:`metaeval.stats.significance.clusters.significance_clusters`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import defaults
from ..errors import ParameterError, check_int, check_probability
from ..serialization import ResultMixin, plain
from ..signature import Signature
from ..stats.resampling.draws import bootstrap_draws, check_rng, permutation_draws
from ..stats.significance.clusters import rank_ranges, significance_clusters
from ..stats.significance.corrections import adjust_pvalues
from ..vocabulary import check_correction, check_method
from . import measures as _m
from .baselines import BASELINES, baseline_spans
from .model import SpanAnnotations, align
from .resampling import bootstrap_statistics, intervals, permutation_pvalues

__all__ = ["SpanEvaluationResult", "evaluate_spans", "cell_grid", "span_channels"]

SEVERITY_GROUPS = {"minor": ("minor",), "major": ("major", "critical")}


def cell_grid(cells) -> tuple[list[str], list[str], dict]:
    """Systems, segments (first-appearance order) and ``cell -> (a, b)`` positions."""
    systems = list(dict.fromkeys(c[0] for c in cells))
    segments = list(dict.fromkeys(c[1] for c in cells))
    si = {s: i for i, s in enumerate(systems)}
    gi = {g: j for j, g in enumerate(segments)}
    return systems, segments, {c: (si[c[0]], gi[c[1]]) for c in cells}


def span_channels(gold: SpanAnnotations, detectors: Sequence[SpanAnnotations], *, measure: str, severity: str,
                  averaging: str) -> tuple[np.ndarray, np.ndarray, tuple]:
    """Per-cell channels ``(D, K, N, M)`` (micro: the 4 counts; macro: per-cell P and R), the rated-cell mask
    ``(N, M)`` and the grid ``(systems, segments)``. Spans are reduced here, once."""
    systems, segments, pos = cell_grid(gold.cells)
    n, m = len(systems), len(segments)
    counts = np.zeros((len(detectors), 4, n, m))
    present = np.zeros((n, m), dtype=bool)
    for cell, (a, b) in pos.items():
        present[a, b] = True
    for d, det in enumerate(detectors):
        for cell, (a, b) in pos.items():
            counts[d, :, a, b] = _m.cell_counts(gold.cells[cell], det.cells[cell], measure=measure, severity=severity)
    if averaging == "macro":
        channels = np.moveaxis(_m.macro_channels(np.moveaxis(counts, 1, -1)), -1, 1) * present
        return channels, present, (systems, segments)
    return counts, present, (systems, segments)


def corrected_pairs(delta, two, greater, correction):
    """Correct the pairwise p-values as one family of the D (D - 1) / 2 unordered pairs: the two-sided
    p-values, and the one-sided p-value in the direction of the observed difference (the other direction
    of a pair is then 1). Returns ``(two-sided (D, D), "row beats column" (D, D))``."""
    d = delta.shape[0]
    iu = np.triu_indices(d, 1)
    two_out = np.full((d, d), np.nan)
    beats = np.ones((d, d))
    np.fill_diagonal(beats, np.nan)
    if not len(iu[0]):
        return two_out, beats
    winner = np.where(delta[iu] >= 0, iu[0], iu[1])
    loser = np.where(delta[iu] >= 0, iu[1], iu[0])
    one = greater[winner, loser]
    tw = two[iu]
    if correction != "none":
        one = adjust_pvalues(one, method=correction)
        tw = adjust_pvalues(tw, method=correction)
    two_out[iu] = tw
    two_out[(iu[1], iu[0])] = tw
    beats[winner, loser] = one
    return two_out, beats


def _finish(averaging):
    def finish(sums, n_cells):
        n = np.asarray(n_cells, dtype=np.float64).reshape(-1, *([1] * (sums.ndim - 2)))
        return _m.prf_from_sums(sums, n, averaging)
    return finish


@dataclass(frozen=True)
class SpanEvaluationResult(ResultMixin):
    """Result of :func:`evaluate_spans`.

    Attributes
    ----------
    detectors : tuple of str
        Detectors then baselines (``baseline:<name>``) then any human rows, in the order of the arrays.
    kinds : tuple of str
        ``"detector"``, ``"baseline"`` or ``"human"`` per row.
    precision, recall, f1 : ndarray (D,)
    precision_ci, recall_ci, f1_ci : ndarray (D, 2)
        Bootstrap percentile intervals.
    per_severity : dict
        ``severity -> (D, 2)`` precision and recall with gold and predictions restricted to minor or major
        (critical counted as major) spans.
    pvalues : ndarray (D, D) or None
        Two-sided permutation p-values of equal F1, corrected (if asked) as one family of the D (D - 1) / 2
        pairs; the clusters use the one-sided p-values in the direction of each observed difference,
        corrected as the same family.
    ranks : ndarray (D,) or None
        Significance-cluster rank on F1 (1 = top).
    n_cells, n_gold_spans : int
    n_left_out : dict
        Detector -> cells it scored that the gold did not rate (left out).
    signature : Signature
    """

    detectors: tuple
    kinds: tuple
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    precision_ci: np.ndarray
    recall_ci: np.ndarray
    f1_ci: np.ndarray
    per_severity: dict
    pvalues: np.ndarray | None
    ranks: np.ndarray | None
    n_cells: int
    n_systems: int
    n_segments: int
    n_gold_spans: int
    n_spans: tuple
    n_left_out: dict
    measure: str
    averaging: str
    severity: str
    method: str
    n_resamples: int
    confidence_level: float
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        ranges = rank_ranges(self.ranks) if self.ranks is not None else None
        rows = []
        for i, name in enumerate(self.detectors):
            row = {"detector": name, "kind": self.kinds[i], "precision": float(self.precision[i]),
                   "precision_low": float(self.precision_ci[i, 0]), "precision_high": float(self.precision_ci[i, 1]),
                   "recall": float(self.recall[i]), "recall_low": float(self.recall_ci[i, 0]),
                   "recall_high": float(self.recall_ci[i, 1]), "f1": float(self.f1[i]),
                   "f1_low": float(self.f1_ci[i, 0]), "f1_high": float(self.f1_ci[i, 1]),
                   "n_spans": int(self.n_spans[i])}
            for sev, pr in self.per_severity.items():
                row[f"precision_{sev}"] = float(pr[i, 0])
                row[f"recall_{sev}"] = float(pr[i, 1])
            if ranges is not None:
                row["rank"] = int(self.ranks[i])
                row["cluster"] = ranges[i]
            rows.append(row)
        return rows

    def to_dict(self) -> dict[str, Any]:
        out = {"analysis": "spans", "rows": self.frame_rows(), "measure": self.measure, "averaging": self.averaging,
               "severity": self.severity, "method": self.method, "n_resamples": self.n_resamples,
               "confidence_level": self.confidence_level, "n_cells": self.n_cells, "n_systems": self.n_systems,
               "n_segments": self.n_segments, "n_gold_spans": self.n_gold_spans,
               "n_left_out": dict(self.n_left_out), "signature": str(self.signature)}
        if self.pvalues is not None:
            out["pvalues"] = plain(self.pvalues)
        return out


def _iv(gold, detectors, measure, averaging, severity, method, n_resamples, confidence_level, baselines):
    if not isinstance(gold, SpanAnnotations):
        raise ParameterError(f"`gold` must be a SpanAnnotations; got {type(gold).__name__}.")
    if not gold.cells:
        raise ParameterError("`gold` must rate at least one segment; got none.")
    detectors = list(detectors)
    for det in detectors:
        if not isinstance(det, SpanAnnotations):
            raise ParameterError(f"`detectors` must hold SpanAnnotations; got {type(det).__name__}.")
    names = [d.name for d in detectors]
    if len(set(names)) != len(names):
        raise ParameterError(f"`detectors` must have unique names; got {names!r}.")
    measure, averaging, severity = _m.check_measure(measure, averaging, severity)
    method = check_method(method)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    confidence_level = check_probability("confidence_level", confidence_level)
    if baselines is True:
        baselines = BASELINES
    baselines = tuple(baselines or ())
    for b in baselines:
        if b not in BASELINES:
            raise ParameterError(f"`baselines` must name baselines among {', '.join(BASELINES)}; got {b!r}.")
    return detectors, measure, averaging, severity, method, n_resamples, confidence_level, baselines


def evaluate_spans(gold: SpanAnnotations, detectors: Sequence[SpanAnnotations] = (), *,
                   measure: str = _m.DEFAULT_MEASURE, averaging: str = _m.DEFAULT_AVERAGING,
                   severity: str = _m.DEFAULT_SEVERITY_MODE, method: str = defaults.RESAMPLING_METHOD,
                   n_resamples: int = defaults.N_RESAMPLES, confidence_level: float = defaults.CONFIDENCE_LEVEL,
                   compare: bool = False, correction: str = defaults.CORRECTION, alpha: float = defaults.ALPHA,
                   baselines: Any = True, humans: Sequence[SpanAnnotations] = (), rng: Any = None
                   ) -> SpanEvaluationResult:
    """Precision, recall and F1 of span detectors against gold spans, with intervals and (optionally) tests.

    Parameters
    ----------
    gold : SpanAnnotations
        The gold spans (e.g. :func:`metaeval.spans.gold_from_ratings`); its cells are the evaluated cells.
    detectors : sequence of SpanAnnotations
        Each must cover every gold cell (:func:`metaeval.spans.model.align`).
    measure, averaging, severity : str
        See :mod:`metaeval.spans.measures` (defaults: partial overlap with partial credit, micro, ignore).
    method : {"both", "systems", "inputs"}
        What the bootstrap and the permutation test resample: systems x segments cells (both), systems, or
        segments.
    n_resamples : int
        Bootstrap resamples and permutations ``k``.
    confidence_level : float
    compare : bool
        Also run the all-pairs paired permutation test on F1 and the significance clusters.
    correction : str
        Multiple-comparison correction of the pairwise p-values, one family (``"none"`` to keep them).
    alpha : float
        Significance level of the clusters.
    baselines : bool or sequence of str
        The trivial baselines to report (default all of :data:`~metaeval.spans.baselines.BASELINES`).
    humans : sequence of SpanAnnotations
        Human rows scored like detectors on the same gold (the human ceiling when they are not part of it).
    rng : None, int or numpy.random.Generator
        Seeds the random baseline, then the bootstrap draws, then the permutation masks.

    Returns
    -------
    SpanEvaluationResult
    """
    detectors, measure, averaging, severity, method, n_resamples, confidence_level, baselines = _iv(
        gold, detectors, measure, averaging, severity, method, n_resamples, confidence_level, baselines)
    alpha = check_probability("alpha", alpha)
    correction = check_correction(correction)
    gen, seed = check_rng(rng)
    aligned, left_out = [], {}
    for det in detectors:
        a = align(gold, det)
        left_out[det.name] = a.n_left_out
        aligned.append(a)
    rows = aligned + [baseline_spans(gold, b, gen) for b in baselines] + [align(gold, h) for h in humans]
    kinds = ("detector",) * len(aligned) + ("baseline",) * len(baselines) + ("human",) * len(humans)
    channels, present, (systems, segments) = span_channels(gold, rows, measure=measure, severity=severity,
                                                           averaging=averaging)
    finish = _finish(averaging)
    n_cells = int(present.sum())
    point = finish(channels.reshape(len(rows), channels.shape[1], -1).sum(axis=-1)[None], np.array([n_cells]))[0]
    draws = bootstrap_draws(len(systems), len(segments), method=method, n_resamples=n_resamples, rng=gen)
    ci = intervals(bootstrap_statistics(channels, present, draws, finish), confidence_level)
    per_severity = {}
    for sev, group in SEVERITY_GROUPS.items():
        g = gold.filtered(group)
        ch, pr, _ = span_channels(g, [r.filtered(group) for r in rows], measure=measure, severity=severity,
                                  averaging=averaging)
        per_severity[sev] = finish(ch.reshape(len(rows), ch.shape[1], -1).sum(axis=-1)[None],
                                   np.array([n_cells]))[0][:, :2]
    pvalues = ranks = None
    if compare and len(rows) > 1:
        perm = permutation_draws(len(systems), len(segments), method=method, n_resamples=n_resamples, rng=gen)
        delta, two, greater = permutation_pvalues(channels, present, perm, finish)
        pvalues, greater = corrected_pairs(delta, two, greater, correction)
        ranks = significance_clusters(point[:, 2], greater, alpha=alpha)
    sig = Signature.of(analysis="spans", gold=gold.name, measure=measure, averaging=averaging, severity=severity,
                       ci=f"boot-{method}", n_resamples=n_resamples, confidence_level=confidence_level,
                       test=f"perm-{method}" if compare else None, correction=correction if compare else None,
                       seed=seed, cells=n_cells)
    return SpanEvaluationResult(
        detectors=tuple(r.name for r in rows), kinds=kinds, precision=point[:, 0], recall=point[:, 1],
        f1=point[:, 2], precision_ci=ci[:, 0], recall_ci=ci[:, 1], f1_ci=ci[:, 2], per_severity=per_severity,
        pvalues=pvalues, ranks=ranks, n_cells=n_cells, n_systems=len(systems), n_segments=len(segments),
        n_gold_spans=gold.n_spans, n_spans=tuple(r.n_spans for r in rows), n_left_out=left_out, measure=measure,
        averaging=averaging, severity=severity, method=method, n_resamples=n_resamples,
        confidence_level=confidence_level, signature=sig)
