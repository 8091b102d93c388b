"""All-pairs comparison of metrics: significance matrix, multiple-comparison correction, cluster ranks."""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import ParameterError, SignificanceWarning
from ..signature import Signature
from ..stats.significance.clusters import rank_ranges, significance_clusters
from ..stats.significance.corrections import adjust_pvalues, significance_floor
from ..stats.significance.corpus_tests import corpus_pairwise_tests
from ..stats.significance.pairs import pairwise_tests
from ..vocabulary import check_correction, check_family, check_metric_test
from .intervals import correlate
from .results import MetricComparisonResult


def _compare_metrics_iv(ds, metrics, human, level, coefficient, test, method, alternative,
                        n_resamples, correction, family, alpha, undefined):
    checked = iv.check_scores(ds, human, metrics, minimum=2)
    ds, metrics = checked.ds, checked.metrics
    level = iv.check_level(level)
    coefficient = iv.check_coefficient(coefficient)
    test = check_metric_test(test)
    if test == "williams":
        if coefficient != "pearson" or level not in ("system", "global", "partial"):
            raise ParameterError(
                "`test` must be 'permutation' or 'bootstrap' unless coefficient is 'pearson' and level is"
                f" 'system', 'global' or 'partial'; got test 'williams' with {coefficient!r} at level {level!r}."
            )
        method = None
    else:
        method = iv.check_method(method)
    alternative = iv.check_alternative(alternative)
    n_resamples = iv.check_n_resamples(n_resamples)
    correction = check_correction(correction)
    family = check_family(family)
    alpha = iv.check_alpha(alpha)
    undefined = iv.check_undefined(undefined)
    iv.check_level_design(ds, level)
    return (checked, metrics, level, coefficient, test, method, alternative, n_resamples, correction,
            family, alpha, undefined)


def compare_metrics(
    ds: ScoreSet,
    metrics: Sequence[str] | None = None,
    human: str | None = None,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    test: str = defaults.METRIC_TEST,
    method: str = defaults.RESAMPLING_METHOD,
    alternative: str = defaults.ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    correction: str = defaults.CORRECTION,
    family: str = defaults.FAMILY,
    alpha: float = defaults.ALPHA,
    undefined: str = defaults.UNDEFINED,
    rng: Any = None,
    batch: int | None = None,
    progress: Any = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> MetricComparisonResult:
    """Test every ordered pair of metrics and rank them into significance clusters.

    For every ordered pair (a, b) the test asks H1: rho(a, human) > rho(b, human) (with the default
    ``alternative='greater'``). One set of resampling draws is shared by all pairs (as in
    mt-metrics-eval), so the matrix is internally consistent and reproducible from one seed.
    P-values are corrected over an explicit ``family``: 'row' (default, the P-1 comparisons of each row
    metric) or 'matrix' (all P(P-1) ordered pairs of this call, i.e. one dataset x level x coefficient).
    When the permutation test's smallest p-value, ``1 / (n_resamples + 1)``, cannot pass the correction
    (e.g. Holm over the matrix of 34 metrics needs 22,440 resamples), a :class:`SignificanceWarning` is
    raised and the same line is kept in ``warnings`` (see :func:`metaeval.stats.significance.corrections.significance_floor`).
    A table spanning several calls can be corrected as one family with :func:`metaeval.adjust_pvalues`.

    Ranks (mt-metrics-eval's rule): metrics sorted by correlation; a metric joins the current cluster
    unless some metric of the current cluster beats it significantly (corrected p < alpha), and then
    opens a new one (being beaten by a metric of a better cluster does not open a cluster); a metric's
    rank is 1 + the number of clusters above it, and ``rank_ranges`` gives the positions its cluster
    spans ('1-3'). See :mod:`metaeval.stats.significance.clusters` for a worked example.

    Parameters
    ----------
    metrics : list of str, optional
        Default: every scorer of ``ds`` that is not human.
    human : str
        The human score.
    test : {'permutation', 'bootstrap', 'williams'}
        Williams only with Pearson at system or global level.
    correction : {'holm', 'holm-sidak', 'bonferroni', 'sidak', 'benjamini-hochberg', 'none'}
    family : {'row', 'matrix'}
    alpha : float
        Significance level for ``significant`` and the clusters.
    progress : callable, optional
        Called with no argument once per resample, ``n_resamples`` times in all (for progress bars);
        never for Williams' test.
    corpus_statistics : mapping, optional
        ``{metric: (statistics, aggregate)}``: at the system level these metrics' system scores are corpus
        scores (see :func:`metaeval.correlate`); the pairs are then tested on the inputs where every system
        has every metric and the human score, and PERM-INPUTS / PERM-BOTH, which swap cells, are refused
        (:mod:`metaeval.stats.significance.corpus_tests`).

    Other parameters are those of :func:`metaeval.permutation_test`.
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    MetricComparisonResult
    """
    if human is None:
        raise ParameterError("`human` must name the human scorer; got None.")
    (checked, metrics, level, coefficient, test, method, alternative, n_resamples, correction, family,
     alpha, undefined) = _compare_metrics_iv(ds, metrics, human, level, coefficient, test, method,
                                             alternative, n_resamples, correction, family, alpha, undefined)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    checked = checked.scored(corpus_statistics)
    ds, corpus = checked.ds, checked.corpus
    used = iv.corpus_field(corpus, metrics, (level,))
    scores = ([checked.metric_matrix(m, level) for m in metrics] if used
              else np.stack([checked.metric_matrix(m, "cells") for m in metrics]))
    z = checked.human_matrix()
    if test == "permutation" and not used:
        iv.check_permutable(dict(zip(metrics, scores)))
    options = dict(test=test, coefficient=coefficient, method=method or "both", alternative=alternative,
                   n_resamples=n_resamples, undefined=undefined, rng=generator, batch=batch, progress=progress,
                   rtol=rtol)
    out = corpus_pairwise_tests(scores, z, **options) if used else pairwise_tests(scores, z, level=level, **options)
    pvalues = np.array(out.pvalues, dtype=float)
    np.fill_diagonal(pvalues, np.nan)
    if family == "matrix":
        adjusted = adjust_pvalues(pvalues, method=correction)
    else:
        adjusted = np.vstack([adjust_pvalues(row, method=correction) for row in pvalues])
    significant = np.nan_to_num(adjusted, nan=1.0) < alpha
    correlations = tuple(
        correlate(checked, m, human, level=level, coefficient=coefficient, undefined=undefined, corpus_statistics=corpus,
                  tie_tolerance=rtol)
        for m in metrics
    )
    statistics = np.array([c.statistic for c in correlations])
    notes = _unattainable(len(metrics), test, n_resamples, correction, family, alpha)
    ranks = significance_clusters(statistics, np.where(np.isnan(adjusted), 1.0, adjusted), alpha=alpha)
    fields = dict(ds.signature_fields())
    fields.update(human=human, level=level, coefficient=coefficient, undefined=undefined,
                  test=test if method is None else f"{test[:4]}-{method}", alternative=alternative,
                  resamples=None if test == "williams" else n_resamples, correction=correction,
                  family=family, alpha=alpha, seed=None if test == "williams" else seed, **used, **iv.tie_field(rtol))
    return MetricComparisonResult(
        metrics=metrics, human=human, level=level, coefficient=coefficient, test=test, method=method,
        alternative=alternative, correction=correction, family=family, alpha=alpha,
        correlations=correlations, deltas=np.asarray(out.deltas, dtype=float), pvalues=pvalues,
        adjusted_pvalues=adjusted, significant=significant, ranks=tuple(int(r) for r in ranks),
        rank_ranges=rank_ranges(ranks),
        n_resamples=None if test == "williams" else n_resamples, signature=Signature.of(**fields),
        warnings=notes,
    )


def _unattainable(p, test, n_resamples, correction, family, alpha) -> tuple[str, ...]:
    """The warning (also raised as a SignificanceWarning) when no permutation p-value can pass the correction."""
    if test != "permutation":  # bootstrap p-values can be 0; Williams' are analytic
        return ()
    size = p - 1 if family == "row" else p * (p - 1)
    floor = significance_floor(n_resamples=n_resamples, family_size=size, correction=correction, alpha=alpha,
                               family=family)
    if floor.reachable:
        return ()
    warnings.warn(floor.message, SignificanceWarning, stacklevel=3)
    return (floor.message,)
