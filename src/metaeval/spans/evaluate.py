"""Evaluating span detectors against gold spans, with bootstrap intervals and paired permutation tests.

:func:`evaluate_spans` scores every detector (and the trivial baselines of :mod:`metaeval.spans.baselines`)
with one span measure (:mod:`metaeval.spans.measures`), puts a bootstrap percentile interval on precision,
recall and F1 (BOOT-SYSTEMS / INPUTS / BOTH over the systems x segments cells, one set of draws shared by
every detector), and with ``compare=True`` tests every pair of detectors on F1 with a paired permutation test
(PERM-SYSTEMS / INPUTS / BOTH, one set of masks for every pair) and ranks them into significance clusters
(mt-metrics-eval's rule, :func:`metaeval.stats.significance.clusters.significance_clusters`).

The gold may be given as MQM ratings (:func:`metaeval.read_mqm_ratings`): it is then built with
:func:`~metaeval.spans.model.gold_from_ratings` under ``errors=`` and ``source_spans=``, and with
``fair_ceiling=True`` every detector is also scored against the same leave-one-rater-out golds as the raters
(:mod:`metaeval.spans.agreement`), so that "does the detector reach human agreement" compares like with like.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import defaults
from ..errors import DataWarning, ParameterError, check_probability
from ..serialization import ResultMixin, plain
from ..signature import Signature
from ..stats.resampling.draws import bootstrap_draws, check_rng, permutation_draws
from ..stats.significance.clusters import rank_ranges, significance_clusters
from ..stats.significance.corrections import adjust_pvalues
from ..runtime.progress import finish as finish_step
from ..runtime.progress import step as progress_step
from ..vocabulary import check_correction, check_method
from . import measures as _m
from .baselines import BASELINES, baseline_spans
from .channels import cell_grid, check_resamples, finisher, span_channels
from .model import SpanAnnotations, align, check_known_systems, gold_from_ratings
from .resampling import bootstrap_statistics, intervals, permutation_pvalues

__all__ = ["SpanEvaluationResult", "evaluate_spans", "cell_grid", "span_channels", "check_resamples"]

_finish = finisher  # the name before channels.py

SEVERITY_GROUPS = {"minor": ("minor",), "major": ("major", "critical")}


def corrected_pairs(delta, two, greater, correction, families=None):
    """Correct the pairwise p-values of the D (D - 1) / 2 unordered pairs: the two-sided p-values, and the
    one-sided p-value in the direction of the observed difference (the other direction of a pair is then 1).
    ``families``: one label per unordered pair (in ``numpy.triu_indices`` order); each family is corrected on
    its own (default: one family). Returns ``(two-sided (D, D), "row beats column" (D, D))``."""
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
        labels = np.zeros(len(one), dtype=int) if families is None else np.asarray(families)
        one, tw = one.copy(), tw.copy()
        for family in np.unique(labels):
            sel = labels == family
            one[sel] = adjust_pvalues(one[sel], method=correction)
            tw[sel] = adjust_pvalues(tw[sel], method=correction)
    two_out[iu] = tw
    two_out[(iu[1], iu[0])] = tw
    beats[winner, loser] = one
    return two_out, beats


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
        Two-sided permutation p-values of equal F1, corrected (if asked): the pairs of detectors (and human
        rows) as one family, the pairs with a baseline as a family of their own (or all D (D - 1) / 2 pairs as
        one family with ``baselines_in_family=True``); the clusters use the one-sided p-values in the direction
        of each observed difference, corrected in the same families.
    ranks : ndarray (D,) or None
        Significance-cluster rank on F1 (1 = top).
    n_cells, n_gold_spans : int
    n_left_out : dict
        Detector -> cells it scored that the gold did not rate (left out).
    n_gold_source_spans : int
        Gold spans marked in the source (omissions); a detector that predicts no source-side span misses them
        all (``missed_source`` names each such detector with that count).
    errors_left_out : dict
        Human errors the gold's rule left out, by reason (:func:`~metaeval.spans.model.gold_from_ratings`).
    fair : dict or None
        With ``fair_ceiling=True``: ``{"f1": (D,), "raters": n, "ceiling_f1": float, "rule": str, "cells": n}``,
        each row scored against the golds of the human ceiling (mean over the scored raters; ``rule``
        ``"leave-one-rater-out"``, or ``"others-against-gold-raters"`` with ``gold_raters``).
    excluded_systems : tuple of str
        The systems ``exclude_systems`` left out of every gold; ``n_excluded`` counts their gold cells.
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
    matching: str = defaults.SPAN_MATCHING
    macro: str = defaults.SPAN_MACRO
    critical: str = defaults.SPAN_CRITICAL
    n_gold_source_spans: int = 0
    missed_source: dict | None = None
    errors_left_out: dict | None = None
    fair: dict | None = None
    baselines_in_family: bool = False
    n_missing: int = 0
    excluded_systems: tuple = ()
    n_excluded: int = 0

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
            if self.fair is not None:
                row["f1_fair"] = float(self.fair["f1"][i])
            if ranges is not None:
                row["rank"] = int(self.ranks[i])
                row["cluster"] = ranges[i]
            rows.append(row)
        return rows

    def pvalue_rows(self) -> list[dict[str, Any]]:
        """The pairwise p-values as labelled rows ``{first, second, delta_f1, pvalue}`` (each unordered pair
        once; empty without ``compare``)."""
        if self.pvalues is None:
            return []
        out = []
        for i in range(len(self.detectors)):
            for j in range(i + 1, len(self.detectors)):
                if np.isfinite(self.pvalues[i, j]):
                    out.append({"first": self.detectors[i], "second": self.detectors[j],
                                "delta_f1": float(self.f1[i] - self.f1[j]), "pvalue": float(self.pvalues[i, j])})
        return out

    def to_dict(self) -> dict[str, Any]:
        out = {"analysis": "spans", "rows": self.frame_rows(), "measure": self.measure, "averaging": self.averaging,
               "macro": self.macro, "matching": self.matching, "severity": self.severity, "critical": self.critical,
               "method": self.method, "n_resamples": self.n_resamples,
               "confidence_level": self.confidence_level, "n_cells": self.n_cells, "n_systems": self.n_systems,
               "n_segments": self.n_segments, "n_gold_spans": self.n_gold_spans,
               "n_left_out": dict(self.n_left_out), "n_gold_source_spans": self.n_gold_source_spans,
               "missed_source": dict(self.missed_source or {}), "n_missing": self.n_missing,
               "errors_left_out": dict(self.errors_left_out or {}),
               "excluded_systems": list(self.excluded_systems), "n_excluded": self.n_excluded,
               "signature": str(self.signature)}
        if self.fair is not None:
            out["ceiling_f1"] = self.fair["ceiling_f1"]
            out["ceiling_rule"] = self.fair["rule"]
            out["ceiling_raters"] = self.fair["raters"]
        if self.pvalues is not None:
            out["pvalues"] = plain(self.pvalues)
            out["pvalue_rows"] = self.pvalue_rows()
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
    for name in names:
        if name.startswith("baseline:") or name.startswith("human:"):
            raise ParameterError(f"`detectors` must not be named like a baseline or a human row ('baseline:...', "
                                 f"'human:...'); got {name!r}.")
    method = check_method(method)
    systems = {c[0] for c in gold.cells}
    n_resamples = check_resamples(n_resamples, len(systems), len(gold.cells) // max(1, len(systems)),
                                  len(detectors) + 3)
    confidence_level = check_probability("confidence_level", confidence_level)
    if baselines is True:
        baselines = BASELINES
    baselines = tuple(baselines or ())
    for b in baselines:
        if b not in BASELINES:
            raise ParameterError(f"`baselines` must name baselines among {', '.join(BASELINES)}; got {b!r}.")
    return detectors, method, n_resamples, confidence_level, baselines


def _gold_iv(gold, errors, source_spans, raters):
    """The gold as SpanAnnotations (built from MQM ratings when given those), and the ratings (or None)."""
    from ..data.mqm_ratings import MQMRatings

    if isinstance(gold, MQMRatings):
        built = gold_from_ratings(gold, raters=raters, errors=defaults.SPAN_ERRORS if errors is None else errors,
                                  source_spans=defaults.SPAN_SOURCE_SPANS if source_spans is None else source_spans)
        return built, gold
    if errors is not None or raters is not None:
        raise ParameterError("`errors` and `gold_raters` apply to a gold built from MQM ratings; got a SpanAnnotations "
                             "gold (build it with gold_from_ratings(..., errors=...)).")
    if isinstance(gold, SpanAnnotations) and source_spans is False:
        gold = gold.target_only()
        gold.source_spans_rule = False
    return gold, None


def _excluded_iv(gold, systems):
    """``(gold without systems, systems as a tuple, cells left out)``; each system must be one of the gold's
    (a misspelt one gets a suggestion)."""
    if isinstance(systems, str) or not isinstance(systems, (tuple, list)):
        raise ParameterError(f"`exclude_systems` must be a sequence of system names; got {systems!r}.")
    systems = tuple(dict.fromkeys(systems))
    if not systems:
        return gold, (), 0
    known = list(dict.fromkeys(c[0] for c in gold.cells))
    check_known_systems(systems, known)
    keep = [c for c in gold.cells if c[0] not in set(systems)]
    if not keep:
        raise ParameterError(f"`exclude_systems` must leave at least one system of the gold; got every one "
                             f"({', '.join(systems)}).")
    out = gold.restricted(keep)
    out.excluded_systems = ",".join(systems)
    return out, systems, len(gold.cells) - len(keep)


def gold_fields(gold: SpanAnnotations) -> dict:
    """The signature fields naming the gold: its file, raters, error rule and sides."""
    return {"gold": gold.name, "gold_file": getattr(gold, "source_file", None),
            "gold_raters": getattr(gold, "raters_rule", None) or "all",
            "errors": getattr(gold, "errors_rule", None) or "as-given",
            "source_spans": getattr(gold, "source_spans_rule", None) if getattr(gold, "source_spans_rule", None)
            is not None else "as-given",
            **({"exclude_system": gold.excluded_systems} if getattr(gold, "excluded_systems", None) else {})}


def offsets_field(detectors) -> dict:
    """The signature field of the detectors' offset conventions (read from files), e.g. ``char-exclusive``."""
    rules = sorted({getattr(d, "offsets_rule", None) for d in detectors} - {None})
    return {"offsets": ",".join(rules)} if rules else {}


def detectors_field(detectors, key: str = "detectors") -> dict:
    """The signature field naming the detectors (issue 41: a signature names what rebuilds its number): each
    detector's file (``NAME=FILE`` when its name is not the file's stem), or its name when it was built in Python."""
    out = []
    for d in detectors:
        file = getattr(d, "source_file", None)
        out.append(d.name if not file else file if file.split(".")[0] == d.name else f"{d.name}={file}")
    return {key: ",".join(out)} if out else {}


def evaluate_spans(gold: Any, detectors: Sequence[SpanAnnotations] = (), *,
                   measure: str = _m.DEFAULT_MEASURE, averaging: str = _m.DEFAULT_AVERAGING,
                   severity: str = _m.DEFAULT_SEVERITY_MODE, matching: str = defaults.SPAN_MATCHING,
                   macro: str = defaults.SPAN_MACRO, critical: str = defaults.SPAN_CRITICAL,
                   errors: str | None = None, source_spans: bool | None = None,
                   gold_raters: Sequence[str] | None = None,
                   method: str = defaults.RESAMPLING_METHOD,
                   n_resamples: int = defaults.N_RESAMPLES, confidence_level: float = defaults.CONFIDENCE_LEVEL,
                   compare: bool = False, correction: str = defaults.CORRECTION, alpha: float = defaults.ALPHA,
                   baselines: Any = True, humans: Sequence[SpanAnnotations] = (), fair_ceiling: bool = False,
                   baselines_in_family: bool = False, allow_missing: bool = False, exclude_systems: Any = (),
                   rng: Any = None, progress: Any = None) -> SpanEvaluationResult:
    """Precision, recall and F1 of span detectors against gold spans, with intervals and (optionally) tests.

    Parameters
    ----------
    gold : SpanAnnotations or MQMRatings
        The gold spans (e.g. :func:`metaeval.spans.gold_from_ratings`), or MQM ratings to build it from;
        its cells are the evaluated cells.
    detectors : sequence of SpanAnnotations
        Each must cover every gold cell (:func:`metaeval.spans.model.align`).
    measure, averaging, severity, matching, macro, critical : str
        See :mod:`metaeval.spans.measures` (defaults: partial overlap with partial credit, micro, ignore,
        optimal matching, mean-f1, critical as major).
    errors : {"reference", "all"}, optional
        Which human errors count, for a gold built from ratings (default ``"reference"``;
        :func:`~metaeval.spans.model.gold_from_ratings`).
    source_spans : bool, optional
        Keep the source-side spans (omissions), default True; False leaves them out of the gold.
    gold_raters : sequence of str, optional
        Build the gold from these raters only (ratings only).
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
    baselines_in_family : bool
        Correct the pairs with a baseline in the same family as the detectors' pairs (default: a family of
        their own, so that adding the baselines never weakens a test between two detectors).
    allow_missing : bool
        Score only the gold cells every detector covers (the rest left out, counted in ``n_missing`` and named
        in a DataWarning) instead of refusing a detector that misses some.
    fair_ceiling : bool
        With ratings of several raters per segment: also score every row against the leave-one-rater-out golds
        of :func:`~metaeval.spans.agreement.span_agreement` (``fair``), beside the all-rater gold. With
        ``gold_raters``, the ceiling is each rater *outside* them against the gold raters' union on the
        segments they share, and every row is scored against the same golds (``fair["rule"]``
        ``"others-against-gold-raters"``; :func:`~metaeval.spans.heldout.fair_scores`).
    exclude_systems : sequence of str
        Systems left out of the gold, of every detector and of the ceiling's golds (each must be a system of
        the gold; a misspelt one gets a suggestion); counted in ``n_excluded`` and named in the signature.
    rng : None, int or numpy.random.Generator
        Seeds the random baseline, then the bootstrap draws, then the permutation masks (each from its own
        stream spawned from the seed).
    progress : callable, optional
        The progress protocol (:mod:`metaeval.runtime.progress`): step ``"spans"``, one unit per scored row,
        per bootstrap and per permutation run.

    Returns
    -------
    SpanEvaluationResult
    """
    spec = _m.check_measure(measure, averaging, severity, matching=matching, macro=macro, critical=critical)
    gold, ratings = _gold_iv(gold, errors, source_spans, gold_raters)
    detectors, method, n_resamples, confidence_level, baselines = _iv(
        gold, detectors, spec.measure, spec.averaging, spec.severity, method, n_resamples, confidence_level,
        baselines)
    alpha = check_probability("alpha", alpha)
    correction = check_correction(correction)
    if fair_ceiling and ratings is None:
        raise ParameterError("`fair_ceiling` needs the gold as MQM ratings (several raters per segment); got a "
                             "SpanAnnotations gold.")
    if source_spans is False:
        detectors = [d.target_only() for d in detectors]
    gold, exclude_systems, n_excluded = _excluded_iv(gold, exclude_systems)
    n_missing = 0
    if allow_missing and detectors:
        covered = [c for c in gold.cells if all(c in d.cells for d in detectors)]
        n_missing = len(gold.cells) - len(covered)
        if n_missing:
            if not covered:
                raise ParameterError("`detectors` must cover at least one gold segment together; got none in common.")
            first = next(c for c in gold.cells if not all(c in d.cells for d in detectors))
            warnings.warn(f"{n_missing} gold segment(s) not covered by every detector left out (first: system "
                          f"{first[0]!r}, segment {first[1]!r}); {len(covered)} scored.", DataWarning, stacklevel=2)
            gold = gold.restricted(covered)
    gen, seed = check_rng(rng)
    # One stream per purpose, spawned from the seed: adding a detector, a baseline or compare=True never
    # moves another stream.
    streams = dict(zip(("baseline", "bootstrap", "permutation"),
                       (np.random.default_rng(s) for s in np.random.SeedSequence(
                           int(gen.integers(0, 2**63 - 1))).spawn(3))))
    from ..runtime.progress import as_progress

    progress = as_progress(progress)
    advance = progress_step(progress, "spans", total=len(detectors) + len(baselines) + len(humans) + 1
                            + (1 if compare else 0) + (1 if fair_ceiling else 0))
    aligned, left_out = [], {}
    for det in detectors:
        a = align(gold, det)
        left_out[det.name] = a.n_left_out
        aligned.append(a)
    rows = aligned + [baseline_spans(gold, b, streams["baseline"]) for b in baselines] + [align(gold, h)
                                                                                           for h in humans]
    kinds = ("detector",) * len(aligned) + ("baseline",) * len(baselines) + ("human",) * len(humans)
    channels, present, (systems, segments) = span_channels(gold, rows, measure=spec.measure,
                                                           severity=spec.severity, averaging=spec.averaging,
                                                           matching=spec.matching, critical=spec.critical,
                                                           advance=advance)
    finish = finisher(spec.averaging, spec.macro)
    n_cells = int(present.sum())
    point = finish(channels.reshape(len(rows), channels.shape[1], -1).sum(axis=-1)[None], np.array([n_cells]))[0]
    draws = bootstrap_draws(len(systems), len(segments), method=method, n_resamples=n_resamples,
                            rng=streams["bootstrap"])
    ci = intervals(bootstrap_statistics(channels, present, draws, finish), confidence_level)
    if advance is not None:
        advance()
    per_severity = {}
    for sev, group in SEVERITY_GROUPS.items():
        g = gold.filtered(group)
        ch, pr, _ = span_channels(g, [r.filtered(group) for r in rows], measure=spec.measure,
                                  severity=spec.severity, averaging=spec.averaging, matching=spec.matching,
                                  critical=spec.critical)
        per_severity[sev] = finish(ch.reshape(len(rows), ch.shape[1], -1).sum(axis=-1)[None],
                                   np.array([n_cells]))[0][:, :2]
    pvalues = ranks = None
    if compare and len(rows) > 1:
        perm = permutation_draws(len(systems), len(segments), method=method, n_resamples=n_resamples,
                                 rng=streams["permutation"])
        delta, two, greater = permutation_pvalues(channels, present, perm, finish)
        iu = np.triu_indices(len(rows), 1)
        is_base = np.array([k == "baseline" for k in kinds])
        families = None if baselines_in_family else (is_base[iu[0]] | is_base[iu[1]]).astype(int)
        pvalues, greater = corrected_pairs(delta, two, greater, correction, families)
        ranks = significance_clusters(point[:, 2], greater, alpha=alpha)
        if advance is not None:
            advance()
    fair = None
    if fair_ceiling:
        from .heldout import fair_scores

        fair = fair_scores(ratings, rows, spec, errors=getattr(gold, "errors_rule", None) or defaults.SPAN_ERRORS,
                           source_spans=getattr(gold, "source_spans_rule", True), exclude_systems=exclude_systems,
                           gold_raters=None if gold_raters is None else tuple(gold_raters))
        if advance is not None:
            advance()
    finish_step(progress, "spans")
    n_source = gold.n_source_spans
    missed = {r.name: n_source for r, k in zip(rows, kinds) if k == "detector" and n_source and not r.n_source_spans}
    sig = Signature.of(analysis="spans", **gold_fields(gold), **detectors_field(detectors),
                       **({} if tuple(baselines) == tuple(BASELINES) else {"baselines": ",".join(baselines) or "none"}),
                       **detectors_field(humans, "humans"),
                       **{k: v for k, v in spec.fields().items() if v is not None}, **offsets_field(detectors),
                       ci=f"boot-{method}", n_resamples=n_resamples, confidence_level=confidence_level,
                       test=f"perm-{method}" if compare else None, correction=correction if compare else None,
                       **({"alpha": alpha} if compare else {}),
                       **({"family": "all-pairs" if baselines_in_family else "baselines-apart"} if compare else {}),
                       **({"ceiling": fair["rule"]} if fair_ceiling else {}),
                       **({"missing": n_missing} if allow_missing else {}), seed=seed, cells=n_cells)
    return SpanEvaluationResult(
        detectors=tuple(r.name for r in rows), kinds=kinds, precision=point[:, 0], recall=point[:, 1],
        f1=point[:, 2], precision_ci=ci[:, 0], recall_ci=ci[:, 1], f1_ci=ci[:, 2], per_severity=per_severity,
        pvalues=pvalues, ranks=ranks, n_cells=n_cells, n_systems=len(systems), n_segments=len(segments),
        n_gold_spans=gold.n_spans, n_spans=tuple(r.n_spans for r in rows), n_left_out=left_out,
        measure=spec.measure, averaging=spec.averaging, severity=spec.severity, method=method,
        n_resamples=n_resamples, confidence_level=confidence_level, signature=sig, matching=spec.matching,
        macro=spec.macro, critical=spec.critical, n_gold_source_spans=n_source, missed_source=missed,
        errors_left_out=dict(gold.left_out), fair=fair, baselines_in_family=bool(baselines_in_family),
        n_missing=n_missing, excluded_systems=exclude_systems, n_excluded=n_excluded)
