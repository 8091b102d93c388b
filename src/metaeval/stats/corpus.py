"""System scores of corpus metrics: sufficient statistics summed over the inputs, then scored.

MT system scores of BLEU, chrF and TER are *corpus* scores: n-gram matches and totals, character n-gram
statistics or edits and reference lengths are summed over the segments and the sums are scored, never
the sentence scores averaged (Papineni et al. 2002; sacrebleu). A :class:`CorpusScores` holds such a
metric as per-cell statistics ``(N, M, S)`` and the function ``aggregate`` that scores summed statistics;
it stands for the metric's ``(N, M)`` matrix wherever metaeval needs *system* scores
(:func:`metaeval.stats.correlations.levels.system_means`, the system level of every correlation, interval and test).
Under input resampling each resample re-sums the statistics with the input counts ``c`` (k, M) and
scores them: ``aggregate(sum_m c_m stats[:, m])``, the corpus score of the resampled test set (Koehn
2004). A corpus metric has no per-cell score, so it has no summary, global or by-system level and cannot
be permuted cell by cell (PERM-INPUTS / PERM-BOTH); PERM-SYSTEMS swaps whole system scores and applies.

Inputs: the system score of each system is over the inputs where every system has statistics (a corpus
score compares systems on one test set); in judged-subset mode also where every system has a human
score, in full-test-set mode the human is averaged over the inputs every system has a human score for.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from metaeval.errors import ParameterError

__all__ = ["CorpusScores", "common_corpus_columns", "corpus_columns", "corpus_scores", "corpus_system_means",
           "leave_one_out", "system_pair_deltas"]


def corpus_scores(stats, aggregate, weights=None):
    """System scores from summed per-input sufficient statistics (corpus BLEU / chrF / TER).

    ``stats`` (N, M, S): each system's statistics per input; ``aggregate`` maps summed statistics
    ``(..., S)`` to scores. Returns ``aggregate(sum_m stats[:, m])`` (N,), or under input count weights
    ``c`` (k, M) ``aggregate(sum_m c_km stats[:, m])`` (k, N): the corpus score of every resample.
    """
    stats = np.asarray(stats, dtype=np.float64)
    if weights is None:
        return np.asarray(aggregate(stats.sum(axis=1)), dtype=np.float64)
    sums = np.einsum("km,nms->kns", np.asarray(weights, dtype=np.float64), stats)
    return np.asarray(aggregate(sums), dtype=np.float64)


@dataclass(frozen=True, eq=False)
class CorpusScores:
    """A metric whose system score is a corpus score: per-cell sufficient statistics and their scorer.

    The one representation of a corpus metric in metaeval: :func:`metaeval.compare_systems` compares
    systems with it, and ``corpus_statistics=`` of the correlation functions and :func:`metaeval.mt_evaluate`
    take it as a metric's system scores.

    Attributes
    ----------
    statistics : numpy.ndarray, shape (N, M, S)
        Sufficient statistics of each (system, input) cell; NaN where the cell has none.
    aggregate : callable
        Summed statistics ``(..., S)`` -> scores ``(...)`` (e.g. ``metaeval.metrics.Bleu().aggregate``).
    name : str
        The metric's name (recorded in results).
    systems, inputs : tuple of str, optional
        Labels of the rows and columns (default ``'0'..``).
    source : str
        The texts the statistics were computed from (e.g. ``outputs.jsonl,refs.jsonl``; empty when not known):
        signed as ``corpus_texts`` by every result computed with them, so that it rebuilds (issue 41).
    """

    statistics: np.ndarray
    aggregate: Callable[[np.ndarray], np.ndarray]
    name: str = "corpus"
    systems: tuple[str, ...] | None = None
    inputs: tuple[str, ...] | None = None
    source: str = ""

    def __post_init__(self):
        stats = np.asarray(self.statistics, dtype=np.float64)
        if stats.ndim != 3 or stats.shape[2] < 1:
            raise ParameterError(f"`statistics` must be an array of shape (systems, inputs, statistics); "
                                 f"got shape {stats.shape!r}.")
        if not callable(self.aggregate):
            raise ParameterError(f"`aggregate` must be a callable scoring summed statistics; got "
                                 f"{type(self.aggregate).__name__}.")
        stats.setflags(write=False)
        object.__setattr__(self, "statistics", stats)
        for axis, field in enumerate(("systems", "inputs")):
            labels = getattr(self, field)
            labels = tuple(str(i) for i in range(stats.shape[axis])) if labels is None else tuple(map(str, labels))
            if len(labels) != stats.shape[axis]:
                raise ParameterError(f"`{field}` must name the {stats.shape[axis]} {field} of the statistics; got "
                                     f"{len(labels)} labels.")
            object.__setattr__(self, field, labels)

    @classmethod
    def from_texts(cls, statistic: Any, hypotheses: Mapping[str, Sequence[str]],
                   references: Sequence[Sequence[str]], *, inputs: Sequence[str] | None = None) -> "CorpusScores":
        """Statistics of every system's outputs.

        Parameters
        ----------
        statistic : CorpusStatistic
            An object with ``item_statistics(hypotheses, references)`` and ``aggregate(sums)``, e.g.
            :class:`metaeval.metrics.Bleu` (:class:`metaeval.metrics.corpus_statistics.CorpusStatistic`).
        hypotheses : mapping of str to list of str
            System name -> its M outputs, in input order.
        references : list of list of str
            Reference streams (sacrebleu's layout): ``references[r][j]`` is the r-th reference of input j.
        inputs : list of str, optional
            Input labels (default ``"0" .. "M-1"``).
        """
        if not (callable(getattr(statistic, "item_statistics", None)) and callable(getattr(statistic, "aggregate", None))):
            raise ParameterError(f"`statistic` must implement CorpusStatistic; got {type(statistic).__name__}.")
        if not hypotheses:
            raise ParameterError("`hypotheses` must map at least 2 systems to their outputs; got none.")
        lengths = {len(h) for h in hypotheses.values()} | {len(r) for r in references}
        if len(lengths) != 1:
            raise ParameterError(f"`hypotheses` and `references` must all have one length per input; got lengths "
                                 f"{sorted(lengths)}.")
        stats = np.stack([statistic.item_statistics(list(h), references) for h in hypotheses.values()])
        return cls(stats, statistic.aggregate, getattr(statistic, "name", "corpus"), tuple(hypotheses), inputs)

    @property
    def shape(self) -> tuple[int, int]:
        """``(N, M)``: the matrix this metric stands for."""
        return self.statistics.shape[:2]

    @property
    def present(self) -> np.ndarray:
        """``(N, M)`` bool: the cells with statistics."""
        return np.isfinite(self.statistics).all(axis=2)

    def take(self, rows=slice(None), cols=slice(None)) -> "CorpusScores":
        """The statistics of some systems and inputs."""
        return CorpusScores(self.statistics[rows][:, cols], self.aggregate, self.name,
                            np.asarray(self.systems)[rows], np.asarray(self.inputs)[cols], self.source)

    def system_scores(self, weights=None) -> np.ndarray:
        """Corpus scores of every system (N,), or of every resample with input counts ``weights`` (k, N)."""
        return corpus_scores(self.statistics, self.aggregate, weights)


def system_pair_deltas(stats: np.ndarray, valid: np.ndarray, aggregate, pairs, test: str, weights: np.ndarray):
    """Observed ``delta`` (P,), resampled ``delta_s`` (P, k) and inputs used (P,) of system pairs.

    ``delta = S(a) - S(b)`` with ``S`` the corpus score of a system's statistics ``stats`` ``(N, M, S)`` over the
    inputs both systems have (``valid`` ``(N, M)``). ``test='bootstrap'``: ``weights`` (k, M) are input counts
    and ``delta_s`` the difference of the resampled corpus scores; ``'randomization'``: ``weights`` are swap
    masks and ``delta_s`` the difference after swapping the two systems' statistics on the masked inputs
    (Riezler & Maxwell 2005).
    """
    k = weights.shape[0]
    deltas = np.full(len(pairs), np.nan)
    samples = np.full((len(pairs), k), np.nan)
    used = np.zeros(len(pairs), dtype=np.int64)
    shared = None
    if test == "bootstrap" and valid.all():
        n, m, s = stats.shape
        sums = (weights @ stats.transpose(1, 0, 2).reshape(m, n * s)).reshape(k, n, s)
        shared = aggregate(sums)  # (k, N): every system's resampled score, computed once
    for p, (a, b) in enumerate(pairs):
        w = valid[a] & valid[b]
        used[p] = int(w.sum())
        if not used[p]:
            continue
        ta = np.where(w[:, None], stats[a], 0.0)
        tb = np.where(w[:, None], stats[b], 0.0)
        deltas[p] = float(aggregate(ta.sum(axis=0)) - aggregate(tb.sum(axis=0)))
        if shared is not None:
            samples[p] = shared[:, a] - shared[:, b]
        elif test == "bootstrap":
            samples[p] = aggregate(weights @ ta) - aggregate(weights @ tb)
        else:
            shift = weights @ (tb - ta)
            samples[p] = aggregate(ta.sum(axis=0) + shift) - aggregate(tb.sum(axis=0) - shift)
    return deltas, samples, used


def corpus_system_means(x: CorpusScores, z, *, full_test_set: bool = False):
    """``(xbar, zbar, n_inputs_dropped)`` of a corpus metric, as :func:`metaeval.stats.correlations.levels.system_means`.

    ``xbar``: corpus scores over the inputs where every system has statistics (and, in judged-subset
    mode, a human score); ``zbar``: the human's means over the inputs used (judged subset) or over the
    inputs where every system has a human score (full test set). ``n_inputs_dropped`` counts the inputs with
    a human score left out.
    """
    z = np.asarray(z, dtype=np.float64)
    xcols, zcols = _corpus_inputs(x, z, full_test_set)
    judged = np.isfinite(z).any(axis=0)
    xbar = x.take(cols=xcols).system_scores() if xcols.any() else np.full(z.shape[0], np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        zbar = z[:, zcols].sum(axis=1) / zcols.sum()
    return xbar, zbar, np.int64((judged & ~zcols).sum())


def _corpus_inputs(x: CorpusScores, z: np.ndarray, full_test_set: bool):
    """The inputs of the metric's and of the human's system scores (module docstring)."""
    stats_ok, human_ok = x.present.all(axis=0), np.isfinite(z).all(axis=0)
    if full_test_set:
        return stats_ok, human_ok
    keep = stats_ok & human_ok
    return keep, keep


def corpus_columns(x: CorpusScores, z, *, full_test_set: bool = False):
    """``(x, z)`` restricted to the inputs :func:`corpus_system_means` uses, so both are complete: the inputs
    a resample draws from."""
    z = np.asarray(z, dtype=np.float64)
    xcols, zcols = _corpus_inputs(x, z, full_test_set)
    return x.take(cols=xcols), z[:, zcols]


def leave_one_out(x: CorpusScores, z, statistic, *, systems: bool, inputs: bool, full_test_set: bool = False):
    """Jackknife statistics of a corpus metric: ``statistic(x', z')`` leaving out each system and/or each
    input (full test set: the metric's and the human's inputs separately), one array per sample."""
    n, m = x.shape
    groups = []
    if systems:
        groups.append(np.array([statistic(x.take(rows=np.delete(np.arange(n), i)), np.delete(z, i, axis=0))
                                for i in range(n)]))
    if inputs:
        if full_test_set:
            groups.append(np.array([statistic(x.take(cols=np.delete(np.arange(m), j)), z) for j in range(m)]))
            groups.append(np.array([statistic(x, np.delete(z, j, axis=1)) for j in range(z.shape[1])]))
        else:
            groups.append(np.array([statistic(x.take(cols=np.delete(np.arange(m), j)), np.delete(z, j, axis=1))
                                    for j in range(m)]))
    return groups


def _present(source) -> np.ndarray:
    return source.present if isinstance(source, CorpusScores) else np.isfinite(source)


def common_corpus_columns(scores, z):
    """``(scores, z)`` on the inputs where every system has every metric and the human score."""
    z = np.asarray(z, dtype=np.float64)
    keep = np.isfinite(z).all(axis=0)
    for source in scores:
        keep &= _present(source).all(axis=0)
    out = [s.take(cols=keep) if isinstance(s, CorpusScores) else np.asarray(s, dtype=np.float64)[:, keep]
           for s in scores]
    return out, z[:, keep]
