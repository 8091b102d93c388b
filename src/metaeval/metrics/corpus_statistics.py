"""Corpus-level metrics as per-item sufficient statistics (the :class:`CorpusStatistic` protocol).

A corpus-level metric such as BLEU is not the mean of per-sentence scores: it is computed from the
*sums* over the corpus of per-sentence counts (n-gram matches, n-gram totals, lengths). Resampling such a
metric (paired bootstrap, approximate randomization) must therefore resample the per-item statistics and
recompute the corpus score from their sums, never average sentence scores (Koehn 2004; Riezler & Maxwell
2005; sacrebleu's ``significance.py`` does the same).

A :class:`CorpusStatistic` gives, for a list of outputs and their references, an array of per-item
statistics of shape ``(M, S)``; ``aggregate`` turns summed statistics of shape ``(..., S)`` into corpus
scores of shape ``(...)``. :class:`BleuStatistic` is the registry's BLEU with sacrebleu's corpus defaults
(the statistics and the score are sacrebleu's own). :class:`MeanStatistic` is the
protocol for ordinary per-item scores (the corpus score is the mean), so one resampling engine serves
both kinds of metric.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import ParameterError
from .sacrebleu_metrics import Bleu

__all__ = ["CorpusStatistic", "MeanStatistic", "BleuStatistic"]


@runtime_checkable
class CorpusStatistic(Protocol):
    """A metric whose corpus score is a function of the sums of per-item sufficient statistics.

    Attributes
    ----------
    name : str
        The metric's name (with its settings, e.g. sacrebleu's signature), recorded in results.
    """

    name: str

    def item_statistics(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        """Per-item statistics, float array ``(M, S)`` for ``M`` hypotheses.

        ``references`` holds one sequence per reference *stream* (sacrebleu's layout): ``references[r][j]``
        is the ``r``-th reference of item ``j``.
        """
        ...

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        """Corpus scores from summed statistics: ``(..., S) -> (...)``; NaN where undefined."""
        ...


class MeanStatistic:
    """Per-item scores whose corpus score is their mean: statistics ``(score, 1)``.

    Missing items are given the statistics ``(0, 0)`` so that they drop out of both sums; a corpus with no
    item has an undefined (NaN) score.
    """

    name = "mean"

    def item_statistics(self, hypotheses=None, references=None) -> np.ndarray:  # pragma: no cover - trivial
        raise ParameterError("`MeanStatistic` must be built from scores with `MeanStatistic.from_scores`; "
                             "got texts.")

    @staticmethod
    def from_scores(scores: np.ndarray) -> np.ndarray:
        """Statistics ``(..., 2)`` of per-item ``scores`` (NaN = missing -> ``(0, 0)``)."""
        scores = np.asarray(scores, dtype=np.float64)
        valid = np.isfinite(scores)
        return np.stack([np.where(valid, scores, 0.0), valid.astype(np.float64)], axis=-1)

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sums[..., 1] > 0, sums[..., 0] / np.where(sums[..., 1] > 0, sums[..., 1], 1.0), np.nan)


class BleuStatistic(Bleu):
    """Corpus BLEU (Papineni et al. 2002) with sacrebleu's ``corpus_bleu`` defaults.

    The registry's :class:`metaeval.metrics.Bleu` - the one implementation of BLEU's statistics and
    aggregation in metaeval - with ``effective_order=False`` (sacrebleu's corpus default; the registry's
    default ``True`` is its sentence-level one). Its per-item statistics are those sacrebleu sums for
    :meth:`sacrebleu.metrics.BLEU.corpus_score`, and ``aggregate`` scores summed statistics exactly as
    sacrebleu's paired bootstrap and approximate randomization do, to the last digit.

    Parameters
    ----------
    **options
        Options of :class:`metaeval.metrics.Bleu` (``tokenize``, ``lowercase``, ``smooth_method``, ...).
    """

    def __init__(self, **options: Any):
        options.setdefault("effective_order", False)
        super().__init__(**options)
        self.options = dict(options)
