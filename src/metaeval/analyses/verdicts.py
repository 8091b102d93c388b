"""Do a metric's pairwise system verdicts agree with the humans'? (REALSumm Exp-III, Bhandari et al. 2020)

For every pair of systems ``(a, b)`` (``a`` before ``b`` in the ScoreSet's order) and every scorer (the
human score and each metric), a paired test over the inputs (:mod:`metaeval.analyses.systems`: paired
bootstrap, Koehn 2004, or paired approximate randomization, Riezler & Maxwell 2005; two-sided, no
correction) gives a *verdict*:

* ``"better"``: ``p < 1 - confidence_level`` and ``S(a) > S(b)``;
* ``"worse"``: ``p < 1 - confidence_level`` and ``S(a) < S(b)``;
* ``"tie"``: no significant difference.

A metric's agreement with the humans is the weighted macro F1 of its verdicts against the human verdicts
(the human verdicts are the truth): ``F1 = sum_c n_c F1_c / sum_c n_c`` over the three classes, where
``n_c`` is the number of pairs the humans put in class ``c`` and ``F1_c = 2 TP_c / (2 TP_c + FP_c + FN_c)``
(0 when the class is never predicted nor true), which is scikit-learn's ``f1_score(average='weighted')``;
and the 3 x 3 confusion matrix (rows: human verdict, columns: metric verdict, order
better / worse / tie). Pairs whose human or metric test is undefined (no common input) are left out of
that metric's F1 and counted.

One set of draws (bootstrap counts or swap masks over the inputs) is shared by every pair and every
scorer of a call, so the verdicts of all scorers are read from the same resamples.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError
from ..metrics.corpus_statistics import MeanStatistic
from ..stats.corpus import system_pair_deltas
from ..serialization import ResultMixin
from ..serialization import plain as _plain
from ..signature import Signature
from ..vocabulary import SYSTEM_TESTS, check_system_test
from .interface import Call, CommandSpec, Option, SectionSpec, focus_corpus
from .systems import (
    all_pairs,
    check_systems,
    draw_weights,
    pair_pvalue,
)

__all__ = ["VERDICTS", "SystemVerdictsResult", "system_verdicts", "verdict_labels", "weighted_f1",
           "confusion_matrix"]

#: Verdict classes, in the order of the confusion matrices.
VERDICTS = ("better", "worse", "tie")
UNDEFINED_VERDICT = "undefined"


def verdict_labels(deltas: np.ndarray, pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """'better' / 'worse' where ``p < alpha`` (by the sign of delta), 'tie' otherwise, 'undefined' for NaN."""
    deltas = np.asarray(deltas, dtype=float)
    pvalues = np.asarray(pvalues, dtype=float)
    out = np.full(deltas.shape, "tie", dtype=object)
    significant = pvalues < alpha
    out[significant & (deltas > 0)] = "better"
    out[significant & (deltas < 0)] = "worse"
    out[~np.isfinite(pvalues) | ~np.isfinite(deltas)] = UNDEFINED_VERDICT
    return out


def confusion_matrix(truth: Sequence[str], predicted: Sequence[str], classes: Sequence[str] = VERDICTS) -> np.ndarray:
    """Counts ``[i, j]`` of items with ``truth == classes[i]`` and ``predicted == classes[j]``."""
    truth = np.asarray(truth, dtype=object)
    predicted = np.asarray(predicted, dtype=object)
    return np.array([[int(np.sum((truth == t) & (predicted == p))) for p in classes] for t in classes])


def weighted_f1(truth: Sequence[str], predicted: Sequence[str], classes: Sequence[str] = VERDICTS) -> float:
    """Support-weighted mean of the per-class F1 (scikit-learn's ``average='weighted'``); NaN if empty.

    ``F1_c = 2 TP / (2 TP + FP + FN)``, 0 when that denominator is 0; weights are the true class counts.
    """
    cm = confusion_matrix(truth, predicted, classes)
    support = cm.sum(axis=1)
    if support.sum() == 0:
        return float("nan")
    tp = np.diag(cm)
    denominator = 2 * tp + (cm.sum(axis=0) - tp) + (support - tp)
    f1 = np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), 0.0)
    return float((support * f1).sum() / support.sum())


@dataclass(frozen=True)
class SystemVerdictsResult(ResultMixin):
    """Pairwise system verdicts of the humans and of every metric, and their agreement.

    Attributes
    ----------
    metrics : tuple of str
    human : str
    systems : tuple of str
    pairs : tuple of (str, str)
    human_deltas, human_pvalues : ndarray (P,)
    human_verdicts : ndarray of str (P,)
    metric_deltas, metric_pvalues : ndarray (n_metrics, P)
    metric_verdicts : ndarray of str (n_metrics, P)
    f1 : ndarray (n_metrics,)
        Weighted macro F1 of each metric's verdicts against the human verdicts.
    agreement : ndarray (n_metrics,)
        Share of the (defined) pairs with the same verdict.
    confusion : ndarray of int (n_metrics, 3, 3)
        Rows: human verdict, columns: metric verdict, in the order of :data:`VERDICTS`.
    n_used, n_skipped : ndarray of int (n_metrics,)
        Pairs entering each metric's F1, and pairs left out (undefined human or metric test).
    """

    metrics: tuple[str, ...]
    human: str
    systems: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    test: str
    confidence_level: float
    n_resamples: int
    human_deltas: np.ndarray
    human_pvalues: np.ndarray
    human_verdicts: np.ndarray
    metric_deltas: np.ndarray
    metric_pvalues: np.ndarray
    metric_verdicts: np.ndarray
    f1: np.ndarray
    agreement: np.ndarray
    confusion: np.ndarray
    n_used: np.ndarray
    n_skipped: np.ndarray
    signature: Signature

    @property
    def statistic(self) -> np.ndarray:
        """The weighted F1 of every metric."""
        return self.f1

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per metric: F1, agreement, pairs used / skipped and the confusion counts."""
        rows = []
        for i, metric in enumerate(self.metrics):
            row = {"metric": metric, "f1": _plain(self.f1[i]), "agreement": _plain(self.agreement[i]),
                   "n_used": int(self.n_used[i]), "n_skipped": int(self.n_skipped[i])}
            for t, truth in enumerate(VERDICTS):
                for p, pred in enumerate(VERDICTS):
                    row[f"human_{truth}_metric_{pred}"] = int(self.confusion[i, t, p])
            rows.append(row)
        return rows

    def pairs_frame(self):
        """One row per system pair: the human verdict and every metric's verdict."""
        import pandas as pd

        frame = pd.DataFrame({"system_a": [a for a, _ in self.pairs], "system_b": [b for _, b in self.pairs],
                              "human_delta": self.human_deltas, "human_pvalue": self.human_pvalues,
                              "human": list(self.human_verdicts)})
        for i, metric in enumerate(self.metrics):
            frame[metric] = list(self.metric_verdicts[i])
        return frame

    def confusion_frame(self, metric: str):
        """The confusion matrix of ``metric`` with labelled rows (human) and columns (metric)."""
        import pandas as pd

        if metric not in self.metrics:
            raise ParameterError(f"`metric` must be one of the result's metrics {list(self.metrics)!r}; got {metric!r}.")
        i = self.metrics.index(metric)
        return pd.DataFrame(self.confusion[i], index=[f"human {v}" for v in VERDICTS],
                            columns=[f"metric {v}" for v in VERDICTS])

    def to_dict(self) -> dict[str, Any]:
        return {
            "metrics": list(self.metrics), "human": self.human, "systems": list(self.systems), "test": self.test,
            "confidence_level": self.confidence_level, "n_resamples": self.n_resamples,
            "classes": list(VERDICTS), "f1": _plain(self.f1), "agreement": _plain(self.agreement),
            "confusion": self.confusion.tolist(), "n_used": _plain(self.n_used), "n_skipped": _plain(self.n_skipped),
            "pairs": self.pairs_frame().to_dict(orient="records"), "signature": str(self.signature),
        }


def _system_verdicts_iv(ds, metrics, human, systems, test, confidence_level, n_resamples, corpus_statistics):
    if not isinstance(ds, iv.CheckedScores):
        iv.check_scoreset(ds)
    if human is None:
        raise ParameterError("`human` must name the human scorer; got None.")
    checked = iv.check_scores(ds, human, metrics).scored(corpus_statistics)
    ds, metrics = checked.ds, checked.metrics
    rows = check_systems(systems, ds.systems)
    test = check_system_test(test)
    confidence_level = iv.check_confidence_level(confidence_level)
    n_resamples = iv.check_n_resamples(n_resamples)
    return ds, metrics, rows, test, confidence_level, n_resamples, checked.corpus


def system_verdicts(
    ds: ScoreSet,
    metrics: Sequence[str] | None = None,
    human: str | None = None,
    *,
    systems: Sequence[str] | None = None,
    test: str = defaults.SYSTEM_TEST,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    n_resamples: int = defaults.N_RESAMPLES,
    rng: Any = None,
    corpus_statistics: Any = None,
) -> SystemVerdictsResult:
    """Humans' and metrics' verdicts on every system pair, and the metrics' agreement with the humans.

    Parameters
    ----------
    ds : ScoreSet
    metrics : list of str, optional
        Default: every scorer of ``ds`` that is not human.
    human : str
        The human score whose verdicts are the truth.
    systems : list of str, optional
        The systems (default: all); pairs ``(a, b)`` with ``a`` listed before ``b``.
    test : {'bootstrap', 'randomization'}
        Paired bootstrap over inputs (Koehn 2004) or paired approximate randomization (Riezler & Maxwell
        2005), two-sided, without correction (as in REALSumm's Exp-III).
    confidence_level : float
        A difference is significant when ``p < 1 - confidence_level``.
    n_resamples : int
    rng : None, int or numpy.random.Generator
        One set of draws shared by all pairs and all scorers; an int seed is recorded in the signature.
    corpus_statistics : mapping of str to CorpusScores or (statistics, aggregate), optional
        Metrics whose system score is a corpus score (BLEU, chrF, TER; as in :func:`metaeval.correlate`):
        a pair's ``delta`` is the difference of the two systems' corpus scores over the inputs both have
        statistics for, and each resample re-sums the statistics (bootstrap: with the input counts;
        randomization: after swapping the two systems' statistics on the swapped inputs), as
        :func:`metaeval.compare_systems` does. The human score stays a mean. Recorded as ``corpus_level``
        in the signature.

    Returns
    -------
    SystemVerdictsResult
        ``f1`` (weighted macro F1 per metric), ``confusion``, the verdicts and their p-values.

    Warns
    -----
    DegenerateWarning
        When some pairs are undefined for the humans or a metric (left out of the F1), or a metric has
        no defined pair (F1 NaN).

    References
    ----------
    Bhandari, M., Gour, P. N., Ashfaq, A., Liu, P. and Neubig, G. (2020). Re-evaluating Evaluation in Text
    Summarization. EMNLP (Exp-III: pairwise system comparisons).
    Koehn, P. (2004). Statistical Significance Tests for Machine Translation Evaluation. EMNLP.
    Riezler, S. and Maxwell, J. T. (2005). On Some Pitfalls in Automatic Evaluation and Significance
    Testing for MT. ACL Workshop on Intrinsic and Extrinsic Evaluation Measures.

    Examples
    --------
    >>> import metaeval as me
    >>> ds = me.load_dataset("realsumm")
    >>> res = me.system_verdicts(ds, ["rouge-2.recall"], "litepyramid.recall", rng=0, n_resamples=200)
    >>> round(float(res.f1[0]), 3)
    0.863
    """
    ds, metrics, rows, test, confidence_level, n_resamples, corpus = _system_verdicts_iv(
        ds, metrics, human, systems, test, confidence_level, n_resamples, corpus_statistics)
    generator, seed = iv.rng_and_seed(rng)
    labels = tuple(ds.systems[r] for r in rows)
    pairs = all_pairs(len(rows))
    alpha = 1.0 - confidence_level
    weights = draw_weights(test, ds.shape[1], n_resamples, generator)
    mean = MeanStatistic().aggregate

    def verdicts(scorer):
        if scorer != human and scorer in corpus:
            c = corpus[scorer].take(rows=rows)
            stats, valid, aggregate = c.statistics, c.present, c.aggregate
        else:
            x = ds.matrix(scorer)[rows]
            stats, valid, aggregate = MeanStatistic.from_scores(x), np.isfinite(x), mean
        deltas, samples, _ = system_pair_deltas(stats, valid, aggregate, pairs, test, weights)
        pvalues = np.array([pair_pvalue(test, samples[p], deltas[p], "two-sided", False) for p in range(len(pairs))])
        return deltas, pvalues, verdict_labels(deltas, pvalues, alpha)

    h_deltas, h_pvalues, h_verdicts = verdicts(human)
    m_deltas = np.empty((len(metrics), len(pairs)))
    m_pvalues = np.empty((len(metrics), len(pairs)))
    m_verdicts = np.empty((len(metrics), len(pairs)), dtype=object)
    f1 = np.full(len(metrics), np.nan)
    agreement = np.full(len(metrics), np.nan)
    confusion = np.zeros((len(metrics), 3, 3), dtype=np.int64)
    used = np.zeros(len(metrics), dtype=np.int64)
    for i, metric in enumerate(metrics):
        m_deltas[i], m_pvalues[i], m_verdicts[i] = verdicts(metric)
        ok = (h_verdicts != UNDEFINED_VERDICT) & (m_verdicts[i] != UNDEFINED_VERDICT)
        used[i] = int(ok.sum())
        if used[i] < len(pairs):
            warnings.warn(f"{len(pairs) - used[i]} of {len(pairs)} system pairs have an undefined test for "
                          f"{human!r} or {metric!r} (no common input); they are left out of its F1.",
                          DegenerateWarning, stacklevel=2)
        if used[i] == 0:
            continue
        confusion[i] = confusion_matrix(h_verdicts[ok], m_verdicts[i][ok])
        f1[i] = weighted_f1(h_verdicts[ok], m_verdicts[i][ok])
        agreement[i] = float(np.mean(h_verdicts[ok] == m_verdicts[i][ok]))
    fields = dict(ds.signature_fields())
    fields.update(human=human, metrics=tuple(metrics), test=test, alternative="two-sided", confidence=confidence_level,
                  resamples=n_resamples, **iv.corpus_field(corpus, metrics, ("system",)), seed=seed)
    if systems is not None:
        fields["compared_systems"] = labels  # by name: a signature rebuilds its number (issue 41)
    return SystemVerdictsResult(
        metrics=metrics, human=human, systems=labels, pairs=tuple((labels[a], labels[b]) for a, b in pairs),
        test=test, confidence_level=confidence_level, n_resamples=n_resamples, human_deltas=h_deltas,
        human_pvalues=h_pvalues, human_verdicts=h_verdicts, metric_deltas=m_deltas, metric_pvalues=m_pvalues,
        metric_verdicts=m_verdicts, f1=f1, agreement=agreement, confusion=confusion, n_used=used,
        n_skipped=len(pairs) - used, signature=Signature.of(**fields),
    )


# -- the command line and the report (declarations read by metaeval.cli and metaeval.report) -------------------

def _command(call: Call) -> SystemVerdictsResult:
    o = call.options
    return system_verdicts(call.ds, call.metrics, call.human, test=o["test"], confidence_level=o["confidence_level"],
                           n_resamples=o["n_resamples"], rng=o["seed"], corpus_statistics=call.corpus)


def _frame(result: SystemVerdictsResult, options) -> Any:
    frame = result.pairs_frame() if options["pairs"] else result.to_frame()
    if options["format"] == "table" and not options["pairs"]:
        # compact: the confusion matrix as three rows "better | worse | tie" of the human verdicts
        frame = frame[["metric", "f1", "agreement", "n_used", "n_skipped"]].assign(
            confusion=[" | ".join(" ".join(str(v) for v in row) for row in cm) for cm in result.confusion])
    return frame


CLI = CommandSpec(
    _command,
    options=(Option("test", SYSTEM_TESTS, defaults.SYSTEM_TEST, "Test of each pair of systems.", shared=True),
             Option("confidence_level", help="Confidence level of the tests (significance at 1 - this).",
                    shared=True),
             Option("pairs", "flag", help="Print every pair's verdicts instead of the summary.")),
    inputs=("source", "corpus", "n_resamples", "seed"),
    help="Bhandari et al. (2020), Exp-III: a paired test over inputs gives each system pair a verdict (better,"
         " worse, tie) for the humans and for each metric; weighted F1 scores the metric's verdicts against"
         " the humans'.",
    frame=_frame,
)

REPORT = SectionSpec(
    "system verdicts",
    lambda ds, human, focus, settings, corpus: system_verdicts(
        ds, list(focus), human, n_resamples=settings["n_resamples"], rng=settings["seed"],
        **focus_corpus(corpus, focus)),
    min_inputs=2, needs="paired tests over inputs",
)
