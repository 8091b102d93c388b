"""System scores of corpus metrics: sufficient statistics summed over the inputs, then scored.

MT system scores of BLEU, chrF and TER are *corpus* scores: n-gram matches and totals, character n-gram
statistics or edits and reference lengths are summed over the segments and the sums are scored, never
the sentence scores averaged (Papineni et al. 2002; sacrebleu). A :class:`CorpusScores` holds such a
metric as per-cell statistics ``(N, M, S)`` and the function ``aggregate`` that scores summed statistics;
it stands for the metric's ``(N, M)`` matrix wherever metaeval needs *system* scores
(:func:`metaeval.stats.levels.system_means`, the system level of every correlation, interval and test).
Under input resampling each resample re-sums the statistics with the input counts ``c`` (k, M) and
scores them: ``aggregate(sum_m c_m stats[:, m])``, the corpus score of the resampled test set (Koehn
2004). A corpus metric has no per-cell score, so it has no summary, global or by-system level and cannot
be permuted cell by cell (PERM-INPUTS / PERM-BOTH); PERM-SYSTEMS swaps whole system scores and applies.

Inputs: the system score of each system is over the inputs where every system has statistics (a corpus
score compares systems on one test set); in judged-subset mode also where every system has a human
score, in full-test-set mode the human is averaged over the inputs every system has a human score for.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from metaeval.errors import ParameterError

__all__ = ["CorpusScores", "corpus_columns", "corpus_scores", "corpus_system_means", "leave_one_out"]


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
    """A metric whose system score is a corpus score.

    Attributes
    ----------
    statistics : numpy.ndarray, shape (N, M, S)
        Sufficient statistics of each (system, input) cell; NaN where the cell has none.
    aggregate : callable
        Summed statistics ``(..., S)`` -> scores ``(...)`` (e.g. ``Bleu().aggregate``).
    """

    statistics: np.ndarray
    aggregate: Callable[[np.ndarray], np.ndarray]

    def __post_init__(self):
        stats = np.asarray(self.statistics, dtype=np.float64)
        if stats.ndim != 3 or stats.shape[2] < 1:
            raise ParameterError(f"`statistics` must be an array of shape (systems, inputs, statistics); "
                                 f"got shape {stats.shape!r}.")
        if not callable(self.aggregate):
            raise ParameterError(f"`aggregate` must be a callable scoring summed statistics; got "
                                 f"{type(self.aggregate).__name__}.")
        object.__setattr__(self, "statistics", stats)

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
        return CorpusScores(self.statistics[rows][:, cols], self.aggregate)

    def system_scores(self, weights=None) -> np.ndarray:
        """Corpus scores of every system (N,), or of every resample with input counts ``weights`` (k, N)."""
        return corpus_scores(self.statistics, self.aggregate, weights)


def corpus_system_means(x: CorpusScores, z, *, full_test_set: bool = False):
    """``(xbar, zbar, n_inputs_dropped)`` of a corpus metric, as :func:`metaeval.stats.levels.system_means`.

    ``xbar``: corpus scores over the inputs where every system has statistics (and, in judged-subset
    mode, a human score); ``zbar``: the human's means over the inputs used (judged subset) or over the
    inputs where every system has a human score (full test set). ``n_inputs_dropped`` counts the inputs with
    a human score left out.
    """
    z = np.asarray(z, dtype=np.float64)
    stats_ok = x.present.all(axis=0)
    human_ok = np.isfinite(z).all(axis=0)
    judged = np.isfinite(z).any(axis=0)
    if full_test_set:
        xcols, zcols = stats_ok, human_ok
    else:
        xcols = zcols = stats_ok & human_ok
    xbar = x.take(cols=xcols).system_scores() if xcols.any() else np.full(z.shape[0], np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        zbar = z[:, zcols].sum(axis=1) / zcols.sum()
    return xbar, zbar, np.int64((judged & ~zcols).sum())


def corpus_columns(x: CorpusScores, z, *, full_test_set: bool = False):
    """``(x, z)`` restricted to the inputs :func:`corpus_system_means` uses, so both are complete: the inputs
    a resample draws from."""
    z = np.asarray(z, dtype=np.float64)
    stats_ok, human_ok = x.present.all(axis=0), np.isfinite(z).all(axis=0)
    if full_test_set:
        return x.take(cols=stats_ok), z[:, human_ok]
    keep = stats_ok & human_ok
    return x.take(cols=keep), z[:, keep]


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
