"""Corpus-level metrics as per-item sufficient statistics (the :class:`CorpusStatistic` protocol).

A corpus-level metric such as BLEU is not the mean of per-sentence scores: it is computed from the
*sums* over the corpus of per-sentence counts (n-gram matches, n-gram totals, lengths). Resampling such a
metric (paired bootstrap, approximate randomization) must therefore resample the per-item statistics and
recompute the corpus score from their sums, never average sentence scores (Koehn 2004; Riezler & Maxwell
2005; sacrebleu's ``significance.py`` does the same).

A :class:`CorpusStatistic` gives, for a list of outputs and their references, an array of per-item
statistics of shape ``(M, S)``; ``aggregate`` turns summed statistics of shape ``(..., S)`` into corpus
scores of shape ``(...)``. :class:`BleuStatistic` implements it with sacrebleu (the statistics and the
score are sacrebleu's own; nothing of BLEU is re-implemented here). :class:`MeanStatistic` is the
protocol for ordinary per-item scores (the corpus score is the mean), so one resampling engine serves
both kinds of metric.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import ParameterError, require_module

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


class BleuStatistic:
    """Corpus BLEU (Papineni et al. 2002) through sacrebleu's sufficient statistics.

    The per-item statistics are those sacrebleu itself sums for :meth:`sacrebleu.metrics.BLEU.corpus_score`
    (hypothesis length, closest reference length, n-gram matches and totals for n = 1..4), taken from
    ``BLEU._extract_corpus_statistics``; ``aggregate`` calls ``BLEU._compute_score_from_stats`` on each row of
    summed statistics, exactly as sacrebleu's paired bootstrap and approximate randomization do. The score
    is therefore sacrebleu's to the last digit.

    Parameters
    ----------
    **options
        Passed to :class:`sacrebleu.metrics.BLEU` (``tokenize``, ``lowercase``, ``smooth_method``, ...).

    Notes
    -----
    ``aggregate`` is a Python loop over the rows (one sacrebleu call per resample and system); the
    resampling itself (the sums) is one matrix product. sacrebleu is an optional dependency
    (``pip install sacrebleu``).
    """

    def __init__(self, **options: Any):
        self._bleu = require_module("sacrebleu.metrics", purpose="BleuStatistic").BLEU(**options)
        self.options = dict(options)
        settings = ",".join(f"{k}={v}" for k, v in sorted(options.items()))
        self.name = f"bleu({settings})" if settings else "bleu"

    def item_statistics(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        if isinstance(hypotheses, str):
            raise ParameterError(f"`hypotheses` must be a list of strings; got the string {hypotheses!r}.")
        stats = self._bleu._extract_corpus_statistics(list(hypotheses), [list(r) for r in references])
        return np.asarray(stats, dtype=np.float64).reshape(len(hypotheses), -1)

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums, dtype=np.float64)
        flat = sums.reshape(-1, sums.shape[-1])
        out = np.empty(flat.shape[0])
        for i, row in enumerate(flat):
            out[i] = self._bleu._compute_score_from_stats([int(round(v)) for v in row]).score
        return out.reshape(sums.shape[:-1])

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
        """sacrebleu's corpus BLEU of ``hypotheses`` (for checks)."""
        return float(self._bleu.corpus_score(list(hypotheses), [list(r) for r in references]).score)
