"""All-pairs tests at the system level when some metrics are corpus metrics (:class:`CorpusScores`).

A corpus metric has system scores, not cell scores, so the pairs are tested on what the system level
sees:

* on the inputs where every system has every metric (statistics or scores) and the human score, the
  same inputs for every pair (a corpus score is over one test set);
* the bootstrap test draws systems and / or inputs once for the whole matrix; each metric's resampled
  correlation uses its resampled system scores (corpus scores re-summed with the input counts,
  :class:`metaeval.stats.kernels.bootstrap.BootSystemCorpus`), and ``delta_s = r*_i - r*_j``;
* tests that depend on the system scores only - Williams' test, BOOT-SYSTEMS and PERM-SYSTEMS - run on
  the ``(N, 1)`` matrices of system scores. PERM-SYSTEMS swaps whole system scores between two metrics,
  standardized over the systems (a corpus metric has no cells to standardize over);
* PERM-INPUTS and PERM-BOTH swap cells between two metrics, which a corpus score does not have: refused.
"""
from __future__ import annotations

import numpy as np

from typing import Any

from metaeval import defaults
from metaeval.errors import ParameterError, check_int
from metaeval.stats.resampling.bootstrap import common_iv, bootstrap_samples
from metaeval.stats.corpus import common_corpus_columns
from metaeval.stats.correlations.levels import level_correlation, system_means
from metaeval.stats.significance.pair_permutations import ProgressSteps
from metaeval.stats.significance.pairs import PairwiseOutcome, adjusted_matrix, pairwise_tests, record_bootstrap_pair
from metaeval.stats.resampling.draws import as_generator, bootstrap_draws, check_batch
from metaeval.vocabulary import check_alternative, check_method, check_metric_test
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["corpus_pairwise_tests"]


def corpus_pairwise_tests(
    scores,
    z,
    *,
    test: str = defaults.METRIC_TEST,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    alternative: str = defaults.ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    rng: Any = None,
    batch: int | None = None,
    undefined: str = defaults.UNDEFINED,
    tie_threshold: float = 0.0,
    correction: str | None = None,
    progress: Any = None,
    rtol: float = TIE_RTOL,
) -> PairwiseOutcome:
    """:func:`metaeval.stats.significance.pairs.pairwise_tests` at the system level, for metrics some of which are corpus
    metrics (see the module docstring).

    Parameters
    ----------
    scores : sequence of array_like (N, M) or CorpusScores
        The P >= 2 metrics.
    z : array_like, shape (N, M)
        Human scores.

    Other parameters are those of :func:`metaeval.stats.significance.pairs.pairwise_tests` (the level is 'system').
    """
    scores = list(scores)
    if len(scores) < 2:
        raise ParameterError(f"`scores` must hold at least 2 metrics; got {len(scores)}.")
    for source in scores:  # every metric against z, at the system level
        _, z, _, coefficient, undefined, _, tie_threshold = common_iv(source, z, "system", coefficient, undefined,
                                                                       False, tie_threshold)
    test, method, alternative = check_metric_test(test), check_method(method), check_alternative(alternative)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    scores, z = common_corpus_columns(scores, z)
    if z.shape[1] == 0:
        raise ParameterError("`scores` must share at least one input where every system has every metric and "
                             "the human score; got none.")
    p = len(scores)
    options = dict(test=test, level="system", coefficient=coefficient, method=method, alternative=alternative,
                   n_resamples=n_resamples, rng=rng, batch=batch, undefined=undefined, tie_threshold=tie_threshold,
                   correction=correction, progress=progress, rtol=rtol)
    if test == "williams" or method == "systems":
        means = np.stack([system_means(s, z)[0] for s in scores])[:, :, None]
        return pairwise_tests(means, z.mean(axis=1)[:, None], **options)
    if test == "permutation":
        raise ParameterError(f"`method` must be 'systems' for a permutation test with a corpus metric (PERM-INPUTS "
                             f"and PERM-BOTH swap cells, and a corpus score has none); got {method!r}.")
    kw = dict(level="system", coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
    statistics = np.array([float(level_correlation(s, z, **kw).statistic) for s in scores])
    draws = bootstrap_draws(z.shape[0], z.shape[1], method=method, n_resamples=n_resamples, rng=as_generator(rng))
    check_batch(batch, 1)
    steps = ProgressSteps(progress, n_resamples, p)
    samples = []
    for source in scores:
        samples.append(bootstrap_samples(source, z, draws=draws, batch=batch, **kw))
        steps.done()
    pvalues = np.full((p, p), np.nan)
    dropped = np.zeros((p, p), dtype=np.int64)
    for i in range(p):
        for j in range(i + 1, p):
            record_bootstrap_pair(pvalues, dropped, i, j, samples[i] - samples[j], statistics[i] - statistics[j],
                                  alternative)
    deltas = statistics[:, None] - statistics[None, :]
    np.fill_diagonal(deltas, 0.0)
    return PairwiseOutcome(statistics, deltas, pvalues, adjusted_matrix(pvalues, correction), dropped, "bootstrap",
                           method, alternative, n_resamples)
