"""Binary decisions per segment: is this translation error-free? is it critical?

Gold labels (per rated (system, segment) cell):

``task="error-free"`` (positive = error-free), ``gold_rule``:
    ``"no-span"`` - the gold marks no error span; ``"score"`` - the human score is at least
    ``human_threshold``; ``"both"`` (default) - both, as WMT26's Task 3 (ESA >= 85 and no span; for MQM,
    ``human_threshold=0``: no weighted error and no span).
``task="critical"`` (positive = critical): the human score is at most ``human_threshold`` (default
    :data:`CRITICAL_THRESHOLD` = -5, one Major error's MQM weight).

Predictions come from span detectors (error-free = no predicted span; critical = a predicted major or
critical span) or from a metric's scores (higher = better) with a threshold: positive when the score is at
least ``t`` (error-free) or at most ``t`` (critical). The threshold is chosen by K-fold cross-validation over
segments (or documents, ``groups=``): for each fold, ``t`` maximises F1 on the other folds' cells and labels
the fold's cells - never the rows it is evaluated on. The thresholds of every fold are reported. The folds
are drawn once per call and shared by every score-based predictor (adding a metric never moves another's
folds); the folds, the bootstrap and the permutations each draw from their own stream of the seed.

Without a positive segment in the gold (or without a negative one) precision, recall and F1 of the positive
class say nothing: the result is computed and a :class:`~metaeval.errors.DegenerateWarning` says so.

Measures: precision, recall, F1 and Matthews' correlation coefficient of the positive class from the summed
confusion counts (P = 1 when nothing is predicted positive, as for spans; MCC = 0 when a margin is empty),
with bootstrap intervals and paired permutation tests on the same counts engine as spans
(:mod:`metaeval.spans.resampling`). Baselines: ``all-error-free`` (every segment positive for
``error-free``, none for ``critical``) and the length rule (a shorter target is better; the threshold
cross-validated like a metric's).

References
----------
Perrella, S., Proietti, L., Huguet Cabot, P.-L., Barba, E. and Navigli, R. (2024). Beyond Correlation:
Interpretable Evaluation of Machine Translation Metrics. EMNLP.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import math
import warnings

import numpy as np

from .. import defaults
from ..errors import DegenerateWarning, ParameterError, check_choice, check_int, check_probability
from ..runtime.progress import as_progress
from ..runtime.progress import finish as finish_step
from ..runtime.progress import step as progress_step
from ..vocabulary import SPAN_GOLD_RULES, SPAN_TASKS
from ..serialization import ResultMixin, plain
from ..signature import Signature
from ..stats.resampling.draws import bootstrap_draws, check_rng, permutation_draws
from ..vocabulary import check_method
from .model import SpanAnnotations, align, check_known_systems
from .resampling import bootstrap_statistics, intervals, permutation_pvalues

__all__ = ["TASKS", "GOLD_RULES", "SpanBinaryResult", "evaluate_binary", "cv_threshold_labels", "fold_assignment",
           "binary_measures"]

TASKS = SPAN_TASKS
GOLD_RULES = SPAN_GOLD_RULES
ERROR_FREE_THRESHOLD = defaults.SPAN_ERROR_FREE_THRESHOLD
CRITICAL_THRESHOLD = defaults.SPAN_CRITICAL_THRESHOLD
N_FOLDS = defaults.SPAN_N_FOLDS


def binary_measures(sums: np.ndarray) -> np.ndarray:
    """``(..., 4)`` precision, recall, F1, MCC from summed ``(tp, fp, fn, tn)``."""
    tp, fp, fn, tn = (sums[..., i] for i in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(tp + fp > 0, tp / np.where(tp + fp > 0, tp + fp, 1), 1.0)
        r = np.where(tp + fn > 0, tp / np.where(tp + fn > 0, tp + fn, 1), 1.0)
        f = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
        den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
        mcc = np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1), 0.0)
    return np.stack([p, r, f, mcc], axis=-1)


def _best_threshold(scores, labels, positive_high):
    values = np.unique(scores)
    best_t, best_f = values[0], -1.0
    for t in values:
        pred = scores >= t if positive_high else scores <= t
        tp = np.sum(pred & labels)
        fp = np.sum(pred & ~labels)
        fn = np.sum(~pred & labels)
        f = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        if f > best_f:
            best_t, best_f = t, f
    return float(best_t)


def fold_assignment(groups: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """The fold of every position: the distinct ``groups`` (segments or documents) shuffled and dealt into
    ``n_folds`` folds."""
    unique = np.unique(groups)
    if unique.size < n_folds:
        raise ParameterError(f"`n_folds` must be at most the number of segments or documents ({unique.size}); "
                             f"got {n_folds}.")
    fold_of = dict(zip(rng.permutation(unique).tolist(), np.arange(unique.size) % n_folds))
    return np.array([fold_of[g] for g in groups.tolist()])


def cv_threshold_labels(scores: np.ndarray, labels: np.ndarray, groups: np.ndarray, *, positive_high: bool,
                        n_folds: int, rng: np.random.Generator | None = None, folds: np.ndarray | None = None
                        ) -> tuple[np.ndarray, tuple]:
    """Out-of-fold predicted labels of 1-d ``scores`` and the threshold of every fold (see the module doc).

    The folds are random groups (``groups``: one label per position, e.g. the segment or the document), drawn
    with ``rng``, or given as ``folds`` (:func:`fold_assignment`, shared by every predictor of a call)."""
    fold = fold_assignment(groups, n_folds, rng) if folds is None else folds
    pred = np.zeros(scores.shape, dtype=bool)
    thresholds = []
    for f in range(n_folds):
        train = fold != f
        t = _best_threshold(scores[train], labels[train], positive_high)
        thresholds.append(t)
        test = ~train
        pred[test] = scores[test] >= t if positive_high else scores[test] <= t
    return pred, tuple(thresholds)


@dataclass(frozen=True)
class SpanBinaryResult(ResultMixin):
    """Result of :func:`evaluate_binary`: per predictor precision, recall, F1, MCC with intervals
    (``ci``: (D, 4, 2)), the two-sided permutation p-values on ``test_measure`` (D, D), the cross-validated
    thresholds of score-based predictors, the number of positives in the gold."""

    predictors: tuple
    kinds: tuple
    values: np.ndarray
    ci: np.ndarray
    pvalues: np.ndarray | None
    thresholds: dict
    task: str
    gold_rule: str
    human_threshold: float
    n_cells: int
    n_positive: int
    n_folds: int
    test_measure: str
    signature: Signature
    folds_by: str = "segment"
    n_negative: int = 0

    def pvalue_rows(self) -> list[dict[str, Any]]:
        """The pairwise p-values (uncorrected) as labelled rows ``{first, second, pvalue}``."""
        if self.pvalues is None:
            return []
        return [{"first": self.predictors[i], "second": self.predictors[j], "pvalue": float(self.pvalues[i, j])}
                for i in range(len(self.predictors)) for j in range(i + 1, len(self.predictors))
                if np.isfinite(self.pvalues[i, j])]

    def frame_rows(self) -> list[dict[str, Any]]:
        rows = []
        for i, name in enumerate(self.predictors):
            row = {"predictor": name, "kind": self.kinds[i]}
            for q, m in enumerate(("precision", "recall", "f1", "mcc")):
                row[m] = float(self.values[i, q])
                row[f"{m}_low"], row[f"{m}_high"] = float(self.ci[i, q, 0]), float(self.ci[i, q, 1])
            row["thresholds"] = ",".join(f"{t:g}" for t in self.thresholds.get(name, ())) or ""
            rows.append(row)
        return rows

    def to_dict(self) -> dict[str, Any]:
        out = {"analysis": "spans-binary", "task": self.task, "gold_rule": self.gold_rule,
               "human_threshold": self.human_threshold, "n_cells": self.n_cells, "n_positive": self.n_positive,
               "rows": self.frame_rows(), "signature": str(self.signature)}
        out["folds_by"] = self.folds_by
        if self.pvalues is not None:
            out["pvalues"] = plain(self.pvalues)
            out["pvalue_rows"] = self.pvalue_rows()
        return out


def _gold_and_systems_iv(scores, gold, errors, source_spans, gold_raters, exclude_systems):
    """``(scores, gold, exclude_systems)``: the gold built from ratings when given those, and both without
    ``exclude_systems`` (each a system of ``scores``)."""
    from .evaluate import _gold_iv

    if gold is not None:
        gold, _ = _gold_iv(gold, errors, source_spans, gold_raters)
    elif errors is not None or source_spans is not None or gold_raters is not None:
        raise ParameterError("`errors`, `source_spans` and `gold_raters` apply to a gold built from MQM ratings; got "
                             "no `gold`.")
    if isinstance(exclude_systems, str) or not isinstance(exclude_systems, (tuple, list)):
        raise ParameterError(f"`exclude_systems` must be a sequence of system names; got {exclude_systems!r}.")
    exclude_systems = tuple(dict.fromkeys(exclude_systems))
    check_known_systems(exclude_systems, scores.systems, what="systems of the scores")
    if exclude_systems:
        kept = [s for s in scores.systems if s not in set(exclude_systems)]
        if not kept:
            raise ParameterError(f"`exclude_systems` must leave at least one system; got every one "
                                 f"({', '.join(exclude_systems)}).")
        scores = scores.subset(systems=kept)
        if gold is not None:
            gold_out = gold.restricted([c for c in gold.cells if c[0] not in set(exclude_systems)])
            gold_out.excluded_systems = ",".join(exclude_systems)
            gold = gold_out
    return scores, gold, exclude_systems


def evaluate_binary(scores, human: str, *, task: str = "error-free", gold: SpanAnnotations | None = None,
                    gold_rule: str = "both", human_threshold: float | None = None,
                    detectors: Sequence[SpanAnnotations] = (), metrics: Sequence[str] = (),
                    labels: Sequence[str] = (),
                    groups: Mapping | None = None, n_folds: int = N_FOLDS, method: str = defaults.RESAMPLING_METHOD,
                    n_resamples: int = defaults.N_RESAMPLES, confidence_level: float = defaults.CONFIDENCE_LEVEL,
                    compare: bool = False, test_measure: str = "f1", baselines: bool = True,
                    folds_by: str | None = None, errors: str | None = None, source_spans: bool | None = None,
                    gold_raters: Sequence[str] | None = None, exclude_systems: Any = (), rng: Any = None,
                    progress: Any = None) -> SpanBinaryResult:
    """Error-free or critical detection per segment (see the module docstring).

    Parameters
    ----------
    scores : ScoreSet
        Holds the human score ``human`` and the ``metrics``; its rated (non-NaN human) cells are evaluated.
    human : str
    task : {"error-free", "critical"}
    gold : SpanAnnotations or MQMRatings, optional
        Gold spans (needed by the rules ``"both"`` / ``"no-span"`` and by span detectors and the length rule),
        or the MQM ratings to build them from (with ``errors``, ``source_spans`` and ``gold_raters``, as
        :func:`~metaeval.spans.evaluate_spans` does).
    gold_rule : {"both", "no-span", "score"}
        Error-free gold (ignored for ``"critical"``).
    human_threshold : float, optional
        Default 0 (error-free) or -5 (critical).
    detectors : sequence of SpanAnnotations
    metrics : sequence of str
        Scorers of ``scores`` whose threshold is cross-validated.
    labels : sequence of str
        Scorers of ``scores`` holding a detector's own decisions, 1 = positive (error-free, or critical) and
        0 = negative; used as they are, no threshold.
    groups : mapping, optional
        Segment -> document (or any group) for the folds; default each segment its own group.
    n_folds, method, n_resamples, confidence_level, compare, rng
        As for spans; ``test_measure`` ("f1" or "mcc") is what the permutation tests compare.
    baselines : bool
        Report ``baseline:all-error-free`` and ``baseline:length``.
    folds_by : str, optional
        What ``groups`` are, for the signature (default ``"segment"`` without groups, ``"groups"`` with).
    errors, source_spans, gold_raters
        Which human errors count, whether source-side spans do, and which raters' union is the gold, for a
        gold given as MQM ratings (as in :func:`~metaeval.spans.evaluate_spans`; defaults ``"reference"``,
        True, every rater).
    exclude_systems : sequence of str
        Systems left out of the scores, the gold and every detector (each must be a system of ``scores``; a
        misspelt one gets a suggestion); named in the signature.
    progress : callable, optional
        The progress protocol (:mod:`metaeval.runtime.progress`): step ``"binary"``.

    Warns
    -----
    DegenerateWarning
        When the gold has no positive (or no negative) segment.
    """
    task = check_choice("task", task, TASKS)
    gold_rule = check_choice("gold_rule", gold_rule, GOLD_RULES)
    test_measure = check_choice("test_measure", test_measure, ("f1", "mcc"))
    method = check_method(method)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    n_folds = check_int("n_folds", n_folds, minimum=2)
    confidence_level = check_probability("confidence_level", confidence_level)
    if human_threshold is None:
        human_threshold = ERROR_FREE_THRESHOLD if task == "error-free" else CRITICAL_THRESHOLD
    if isinstance(human_threshold, bool) or not isinstance(human_threshold, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(human_threshold)):
        raise ParameterError(f"`human_threshold` must be a finite number; got {human_threshold!r}.")
    if folds_by is None:
        folds_by = "segment" if groups is None else "groups"
    scores, gold, exclude_systems = _gold_and_systems_iv(scores, gold, errors, source_spans, gold_raters,
                                                         exclude_systems)
    gen, seed = check_rng(rng)
    streams = dict(zip(("folds", "bootstrap", "permutation"),
                       (np.random.default_rng(s) for s in np.random.SeedSequence(
                           int(gen.integers(0, 2**63 - 1))).spawn(3))))
    progress = as_progress(progress)
    advance = progress_step(progress, "binary", total=2 + (1 if compare else 0))
    h = scores.matrix(scores.require(human, param="human"))
    present = np.isfinite(h)
    systems, segments = scores.systems, scores.inputs
    needs_gold = (task == "error-free" and gold_rule != "score") or detectors or baselines
    if needs_gold and gold is None:
        raise ParameterError("`gold` spans must be given for the gold rule, span detectors and the length baseline; "
                             "got none.")
    has_span = np.zeros(h.shape, dtype=bool)
    lengths = np.zeros(h.shape)
    if gold is not None:
        si = {s: i for i, s in enumerate(systems)}
        gi = {g: j for j, g in enumerate(segments)}
        for (s, g), spans in gold.cells.items():
            if s in si and g in gi:
                has_span[si[s], gi[g]] = bool(spans)
                lengths[si[s], gi[g]] = len(gold.targets[(s, g)])
        rated = np.zeros(h.shape, dtype=bool)
        for (s, g) in gold.cells:
            if s in si and g in gi:
                rated[si[s], gi[g]] = True
        present &= rated
    with np.errstate(invalid="ignore"):
        if task == "critical":
            label = h <= human_threshold
        elif gold_rule == "score":
            label = h >= human_threshold
        elif gold_rule == "no-span":
            label = ~has_span
        else:
            label = (h >= human_threshold) & ~has_span
    label &= present
    positive_high = task == "error-free"
    names, kinds, preds, thresholds = [], [], [], {}
    for det in detectors:
        det = align(gold, det)
        p = np.zeros(h.shape, dtype=bool)
        for (s, g), spans in det.cells.items():
            if s in si and g in gi:
                flag = any(x.severity in ("major", "critical") for x in spans) if task == "critical" else not spans
                p[si[s], gi[g]] = flag
        names.append(det.name), kinds.append("detector"), preds.append(p)
    seg_groups = np.array([(groups or {}).get(g, g) for g in segments], dtype=object)
    a_idx, b_idx = np.nonzero(present)
    from .channels import check_resamples

    n_resamples = check_resamples(n_resamples, len(systems), len(segments), len(detectors) + len(metrics) + 2)
    needs_folds = bool(metrics) or baselines
    folds = (fold_assignment(seg_groups[b_idx].astype(str), n_folds, streams["folds"]) if needs_folds and len(a_idx)
             else None)

    def cross_validated(name, kind, matrix):
        values = matrix[a_idx, b_idx]
        if not np.isfinite(values).all():
            raise ParameterError(f"`metrics`: {name!r} must score every evaluated segment; got "
                                 f"{int((~np.isfinite(values)).sum())} missing.")
        out, ts = cv_threshold_labels(values, label[a_idx, b_idx], seg_groups[b_idx].astype(str),
                                      positive_high=positive_high, n_folds=n_folds, folds=folds)
        p = np.zeros(h.shape, dtype=bool)
        p[a_idx, b_idx] = out
        names.append(name), kinds.append(kind), preds.append(p)
        thresholds[name] = ts

    for metric in metrics:
        cross_validated(metric, "metric", scores.matrix(scores.require(metric, param="metrics")))
    for name in labels:
        values = scores.matrix(scores.require(name, param="labels"))[a_idx, b_idx]
        if not np.isin(values, (0.0, 1.0)).all():
            bad = float(values[~np.isin(values, (0.0, 1.0))][0])
            raise ParameterError(f"`labels`: {name!r} must be 1 (positive) or 0 on every evaluated segment; got {bad!r}.")
        p = np.zeros(h.shape, dtype=bool)
        p[a_idx, b_idx] = values == 1.0
        names.append(name), kinds.append("labels"), preds.append(p)
    if baselines:
        names.append("baseline:all-error-free"), kinds.append("baseline")
        preds.append(np.full(h.shape, task == "error-free"))
        cross_validated("baseline:length", "baseline", -lengths)
    if not names:
        raise ParameterError("`detectors` or `metrics` must name at least one predictor (or keep the baselines); "
                             "got none.")
    pred = np.stack(preds) & present
    truth = label[None]
    channels = np.stack([pred & truth, pred & ~truth & present, ~pred & truth, ~pred & ~truth & present],
                        axis=1).astype(np.float64)

    def finish(sums, n_cells):
        return binary_measures(sums)

    n_cells = int(present.sum())
    n_positive = int(label.sum())
    if n_positive == 0 or n_positive == n_cells:
        which = "positive" if n_positive == 0 else "negative"
        warnings.warn(f"the gold has no {which} segment ({task}, threshold {float(human_threshold):g}, {n_cells} "
                      f"segments): precision, recall, F1 and MCC of the positive class are degenerate.",
                      DegenerateWarning, stacklevel=2)
    if advance is not None:
        advance()
    values = finish(channels.reshape(len(names), 4, -1).sum(axis=-1)[None], None)[0]
    draws = bootstrap_draws(len(systems), len(segments), method=method, n_resamples=n_resamples,
                            rng=streams["bootstrap"])
    ci = intervals(bootstrap_statistics(channels, present, draws, finish), confidence_level)
    if advance is not None:
        advance()
    pvalues = None
    if compare and len(names) > 1:
        perm = permutation_draws(len(systems), len(segments), method=method, n_resamples=n_resamples,
                                 rng=streams["permutation"])
        column = 2 if test_measure == "f1" else 3
        _, pvalues, _ = permutation_pvalues(channels, present, perm, finish, column=column)  # uncorrected
        if advance is not None:
            advance()
    finish_step(progress, "binary")
    from .evaluate import detectors_field, gold_fields, offsets_field

    sig = Signature.of(analysis="spans-binary", task=task, gold_rule=gold_rule if task == "error-free" else None,
                       human=human, human_threshold=human_threshold,
                       **({"subset": scores.description} if getattr(scores, "description", None)
                          and (task == "critical" or gold_rule in ("both", "score")) else {}),
                       **(gold_fields(gold) if gold is not None else {"gold": None}),
                       **({"exclude_system": ",".join(exclude_systems)} if exclude_systems and gold is None else {}),
                       **detectors_field(detectors),
                       **{k: ",".join((v,) if isinstance(v, str) else v) for k, v in (("metrics", metrics),
                                                                                      ("labels", labels)) if v},
                       **({} if baselines else {"baselines": "none"}),
                       **offsets_field(detectors), folds=n_folds, folds_by=folds_by, ci=f"boot-{method}",
                       n_resamples=n_resamples, confidence_level=confidence_level,
                       test=f"perm-{method}:{test_measure}" if compare else None, seed=seed, cells=n_cells)
    return SpanBinaryResult(predictors=tuple(names), kinds=tuple(kinds), values=values, ci=ci, pvalues=pvalues,
                        thresholds=thresholds, task=task, gold_rule=gold_rule, human_threshold=float(human_threshold),
                        n_cells=n_cells, n_positive=n_positive, n_folds=n_folds, test_measure=test_measure,
                        signature=sig, folds_by=folds_by, n_negative=n_cells - n_positive)
