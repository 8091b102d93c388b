"""Sufficient statistics of a corpus metric per (system, input) cell, aligned with a ScoreSet.

MT system scores are corpus scores: BLEU, chrF and TER sum their sufficient statistics (n-gram matches and
totals, character n-gram statistics, edits and reference lengths) over the segments and score the sums,
never the mean of sentence scores. :func:`corpus_statistics` computes those statistics for every cell of a
ScoreSet from the candidates and references files of :mod:`metaeval.scoring.inputs`, so that
:func:`metaeval.mt.evaluate.mt_evaluate` (``corpus_statistics=``, ``metaeval mt --corpus-metric``) can
rebuild corpus system scores from any subset or resample of the segments.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..data.scoreset import ScoreSet
from ..errors import ParameterError, ScoreSetError
from ..metrics.registry import get_scorer
from ..vocabulary import CORPUS_METRICS
from .inputs import CANDIDATES_SOURCE, _source, load_inputs

__all__ = ["CORPUS_METRICS", "corpus_statistics"]

#: Registry metrics whose scores are computed from summed per-item statistics: sacrebleu's, NIST's, and
#: Liu & Gildea's syntactic metrics (clipped matches and totals per depth; docs/syntactic.md).


def corpus_statistics(ds: ScoreSet, candidates: Any, references: Any, metric: str,
                      **options: Any) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Per-cell statistics ``(N, M, S)`` of ``metric`` aligned with ``ds`` and the function that scores sums.

    Parameters
    ----------
    ds : ScoreSet
        The systems x inputs the statistics are aligned with (e.g. one language pair's scores).
    candidates, references
        As for :func:`metaeval.score`: files or records of ``{system, input, candidate}`` and
        ``{input, references}``.
    metric : {'bleu', 'chrf', 'ter', 'nist', 'stm', 'hwcm', 'dstm'}
        A registry metric with sufficient statistics; ``options`` go to its scorer. NIST's information
        weights come from the references of the inputs of ``ds`` and stay fixed in every resample.

    Returns
    -------
    (numpy.ndarray, callable)
        The statistics, NaN where ``ds`` has a cell without a candidate, and ``aggregate`` mapping summed
        statistics ``(..., S)`` to corpus scores ``(...)`` (sacrebleu's, to the last digit): the pair that
        ``corpus_statistics=`` of the correlation functions and :func:`metaeval.mt_evaluate` take, or
        ``metaeval.CorpusScores(*pair, name=metric)``.

    Raises
    ------
    ParameterError
        For a metric without sufficient statistics.
    ScoreSetError
        When no candidate names a system and an input of ``ds``.
    """
    if metric not in CORPUS_METRICS:
        raise ParameterError(f"`metric` must be one of {', '.join(map(repr, CORPUS_METRICS))} (metrics with "
                             f"sufficient statistics); got {metric!r}.")
    scorer = get_scorer(metric, **options)
    texts = load_inputs(candidates, references)
    if callable(getattr(scorer, "with_reference_corpus", None)):  # NIST: weights from the inputs' references
        scorer = scorer.with_reference_corpus([texts.references[t] for t in ds.inputs if t in texts.references])
    systems = {s: i for i, s in enumerate(ds.systems)}
    inputs = {t: j for j, t in enumerate(ds.inputs)}
    stats = None
    for cell, (i, j) in enumerate(texts.cells):
        row, col = systems.get(texts.systems[i]), inputs.get(texts.inputs[j])
        if row is None or col is None:
            continue
        candidate, refs = texts.pair(cell)
        values = np.asarray(scorer.statistics(candidate, refs), dtype=np.float64)
        if stats is None:
            stats = np.full(ds.shape + values.shape, np.nan)
        stats[row, col] = values
    if stats is None:
        raise ScoreSetError(f"{_source(candidates, CANDIDATES_SOURCE)}: the candidates must name systems and inputs of"
                            f" the scores; got none of {len(ds.systems)} systems x {len(ds.inputs)} inputs.")
    return stats, scorer.aggregate
