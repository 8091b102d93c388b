"""Correlations of a metric with human judgments, with bootstrap or Fisher confidence intervals.

Levels (X metric, Z human, both systems x inputs, NaN missing):

- system: ``CORR(rowmean X, rowmean Z)``
- summary: ``mean_j CORR(X[:, j], Z[:, j])`` (an input = a summary's document / an MT segment)
- global: ``CORR(vec X, vec Z)`` over the cells where both are present
- by-system: ``mean_i CORR(X[i, :], Z[i, :])``
- partial: ``CORR(vec (X - xbar_i), vec (Z - zbar_i))``, the partial correlation controlling for the
  system (each cell minus its system's mean over the cells where both are present; FRANK)

Groups whose correlation is undefined (constant, or fewer than 2 values) are skipped and counted in
``n_skipped`` (or counted as 0 with ``undefined='zero'``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..signature import Signature
from ..stats.resampling import bootstrap as _bootstrap
from ..stats.corpus import CorpusScores
from ..stats.correlations.fisher import fisher_interval
from ..stats.correlations.levels import level_correlation
from ..stats.significance.pvalues import analytic_pvalue, permutation_pvalue
from ..vocabulary import check_pvalue_method
from .results import CorrelationResult


def _correlation_signature(ds: ScoreSet, metric: str, human: str, level: str, coefficient: str,
                           undefined: str, full_test_set: bool, tie_threshold: float, rtol: float,
                           **more: Any) -> Signature:
    fields = dict(ds.signature_fields())
    fields.update(metric=metric, human=human, level=level, coefficient=coefficient, undefined=undefined)
    if tie_threshold:
        fields["tie_threshold"] = tie_threshold
    fields["full_test_set"] = full_test_set
    fields.update(more)
    fields.update(iv.tie_field(rtol))
    return Signature.of(**fields)


def _correlate_iv(ds, metric, human, level, coefficient, undefined, full_test_set, tie_threshold,
                  corpus_statistics=None):
    """The checked options and scores of one correlation; ``ds`` may be the :class:`~metaeval._validation.CheckedScores`
    of an enclosing call (a table, a report), trusted as it is."""
    if not isinstance(ds, iv.CheckedScores):
        iv.check_scoreset(ds)
    level = iv.check_level(level)
    coefficient = iv.check_coefficient(coefficient)
    undefined = iv.check_undefined(undefined)
    full_test_set = iv.check_full_test_set(full_test_set, level)
    tie_threshold = iv.check_tie_threshold(tie_threshold)
    checked = iv.check_pair(ds, metric, human, corpus_statistics)
    ds = checked.ds
    x = checked.metric_matrix(metric, level)
    z = checked.human_matrix()
    iv.check_level_design(ds, level)
    if full_test_set and not isinstance(x, CorpusScores):
        x, z = iv.full_test_set_columns(x, z)
    return ds, x, z, level, coefficient, undefined, full_test_set, tie_threshold


def _pvalue(x, z, level, coefficient, undefined, full_test_set, tie_threshold, pvalue_method, alternative,
            n_resamples, generator, statistic, rtol) -> tuple[float | None, dict[str, Any]]:
    """The p-value of one correlation (``statistic``, computed by the caller) and the signature fields that
    reproduce it."""
    if pvalue_method == "none":
        return None, {}
    fields: dict[str, Any] = {"pvalue": pvalue_method, "alternative": alternative}
    if pvalue_method == "analytic":
        return analytic_pvalue(x, z, level=level, coefficient=coefficient, alternative=alternative,
                               full_test_set=full_test_set, statistic=statistic, rtol=rtol), fields
    out = permutation_pvalue(x, z, level=level, coefficient=coefficient, n_resamples=n_resamples, rng=generator,
                             alternative=alternative, undefined=undefined, full_test_set=full_test_set,
                             tie_threshold=tie_threshold, rtol=rtol)
    fields["pvalue_resamples"] = n_resamples
    return out.pvalue, fields


def _pvalue_iv(pvalue_method, alternative, n_resamples):
    return (check_pvalue_method(pvalue_method), iv.check_alternative(alternative),
            iv.check_n_resamples(n_resamples))


_PVALUE_DOC = """    pvalue_method : {'analytic', 'permutation', 'none'}
        The p-value of H0 "the metric is unrelated to the human scores at this level": scipy's
        (``pearsonr``, ``spearmanr``, ``kendalltau`` b / c on the system means, the cells or the partial
        residuals; NaN at summary / by-system level and for kendall-a and the pairwise coefficients),
        a permutation p-value (``n_resamples`` shuffles of the metric within the groups the level keeps
        apart; see :mod:`metaeval.stats.significance.pvalues`), or none.
    alternative : {'two-sided', 'greater', 'less'}
        H1 of that p-value ('greater': a positive relation).
"""


def correlate(
    ds: ScoreSet,
    metric: str,
    human: str,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    undefined: str = defaults.UNDEFINED,
    full_test_set: bool = False,
    tie_threshold: float = 0.0,
    pvalue_method: str = defaults.PVALUE_METHOD,
    alternative: str = defaults.CORRELATION_ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    rng: Any = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> CorrelationResult:
    """Correlation of ``metric`` with ``human`` at one level, with its p-value.

    Parameters
    ----------
    ds : ScoreSet
        The scores.
    metric, human : str
        Scorer names in ``ds``.
    level : {'system', 'summary', 'global', 'by-system', 'partial'}
        Where to correlate (see the module docstring for the formulas; 'input' and 'segment' are
        accepted as 'summary').
    coefficient : {'pearson', 'spearman', 'kendall-a', 'kendall-b', 'kendall-c', 'accuracy', 'tau-eq', 'acc-eq', 'pdp'}
        'kendall' means 'kendall-b' (the default, robust to the ties of averaged Likert scores).
    undefined : {'skip', 'zero'}
        Groups with an undefined correlation are skipped (and counted) or counted as 0.
    full_test_set : bool
        System level only: average the metric over every input it scored and the human over the
        judged inputs (Deutsch, Dror & Roth 2022). Otherwise both are averaged over the cells where
        both are present, the same inputs for every system.
    tie_threshold : float
        For 'tau-eq' / 'acc-eq': metric differences up to this value count as ties.
{pvalue_doc}    n_resamples : int
        Shuffles of the permutation p-value.
    rng : None, int or numpy.random.Generator
        Seed of the permutation p-value.
{corpus_doc}
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.
    Returns
    -------
    CorrelationResult
        ``statistic``, ``pvalue``, ``n_used``, ``n_skipped`` and ``signature``; ``ci`` is None.

    Examples
    --------
    >>> import metaeval as me
    >>> ds = me.load_dataset("summeval")
    >>> r = me.correlate(ds, "rouge-2.recall", "expert.relevance", level="system", coefficient="kendall")
    >>> round(r.statistic, 3), round(r.pvalue, 4)
    (0.567, 0.0017)
    """
    ds, x, z, level, coefficient, undefined, full_test_set, tie_threshold = _correlate_iv(
        ds, metric, human, level, coefficient, undefined, full_test_set, tie_threshold, corpus_statistics
    )
    pvalue_method, alternative, n_resamples = _pvalue_iv(pvalue_method, alternative, n_resamples)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    more = iv.corpus_flag(x)
    out = level_correlation(x, z, level=level, coefficient=coefficient, undefined=undefined,
                            full_test_set=full_test_set, tie_threshold=tie_threshold, rtol=rtol)
    statistic = float(out.statistic)
    iv.warn_if_undefined(statistic, f"the {level}-level {coefficient} correlation of {metric!r}")
    pvalue, fields = _pvalue(x, z, level, coefficient, undefined, full_test_set, tie_threshold, pvalue_method,
                             alternative, n_resamples, generator, statistic, rtol)
    more.update(fields)
    if pvalue_method == "permutation":
        more["seed"] = seed
    return CorrelationResult(
        metric=metric, human=human, level=level, coefficient=coefficient, statistic=statistic,
        ci=None, confidence_level=None, pvalue=pvalue, n_used=int(out.n_used), n_skipped=int(out.n_skipped),
        interval_method=None, n_resamples=None, n_resamples_dropped=None,
        signature=_correlation_signature(ds, metric, human, level, coefficient, undefined, full_test_set, tie_threshold,
                                         rtol, **more),
    )


def bootstrap_ci(
    ds: ScoreSet,
    metric: str,
    human: str,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    interval: str = defaults.INTERVAL,
    undefined: str = defaults.UNDEFINED,
    full_test_set: bool = False,
    tie_threshold: float = 0.0,
    rng: Any = None,
    batch: int | None = None,
    pvalue_method: str = defaults.PVALUE_METHOD,
    alternative: str = defaults.CORRELATION_ALTERNATIVE,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> CorrelationResult:
    """Correlation with a bootstrap confidence interval (Deutsch, Dror & Roth 2021) and a p-value.

    Parameters
    ----------
    method : {'systems', 'inputs', 'both'}
        BOOT-SYSTEMS resamples systems (rows) with replacement, BOOT-INPUTS inputs (columns),
        BOOT-BOTH both at once. With ``full_test_set=True`` the metric's inputs and the human's judged
        inputs are resampled independently.
    n_resamples : int
        Number of bootstrap resamples k.
    confidence_level : float
        Coverage of the interval.
    interval : {'percentile', 'bca'}
        Percentile interval, or bias-corrected and accelerated (Efron 1987).
    rng : None, int or numpy.random.Generator
        Seed of the resampling; an int seed is recorded in the signature.
    batch : int, optional
        Resamples computed at once (bounds memory; the result does not depend on it).
{pvalue_doc}{corpus_doc}
    Other parameters are those of :func:`correlate`.
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    CorrelationResult
        ``statistic`` is the correlation on the full data, ``ci`` the interval,
        ``n_resamples_dropped`` the resamples on which the statistic was undefined (removed before
        taking quantiles) and ``bootstrap_distribution`` the kept resampled statistics.

    References
    ----------
    D. Deutsch, R. Dror and D. Roth. A Statistical Analysis of Summarization Evaluation Metrics using
    Resampling Methods. TACL 9, 2021.
    """
    ds, x, z, level, coefficient, undefined, full_test_set, tie_threshold = _correlate_iv(
        ds, metric, human, level, coefficient, undefined, full_test_set, tie_threshold, corpus_statistics
    )
    method = iv.check_method(method)
    n_resamples = iv.check_n_resamples(n_resamples)
    confidence_level = iv.check_confidence_level(confidence_level)
    interval = iv.check_interval(interval)
    pvalue_method, alternative, _ = _pvalue_iv(pvalue_method, alternative, n_resamples)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    # an integer seed whose generator serves the draws only is passed as such: the cells of a table (one seed)
    # then share one set of draws and of resampled sums (the same numbers as a fresh generator gives); a
    # permutation p-value continues the generator after the draws, so it keeps the generator
    shared = isinstance(seed, int) and pvalue_method != "permutation"
    out = _bootstrap.bootstrap_interval(
        x, z, level=level, coefficient=coefficient, method=method, n_resamples=n_resamples,
        confidence_level=confidence_level, interval=interval, undefined=undefined,
        full_test_set=full_test_set, tie_threshold=tie_threshold, rng=seed if shared else generator, batch=batch,
        rtol=rtol,
    )
    statistic = float(out.statistic)  # the level correlation of x and z, computed once by the stats layer
    iv.warn_if_undefined(statistic, f"the {level}-level {coefficient} correlation of {metric!r}")
    pvalue, more = _pvalue(x, z, level, coefficient, undefined, full_test_set, tie_threshold, pvalue_method,
                           alternative, n_resamples, generator, statistic, rtol)  # permutation: after the bootstrap
    signature = _correlation_signature(
        ds, metric, human, level, coefficient, undefined, full_test_set, tie_threshold, rtol,
        ci=f"boot-{method}", interval=interval, resamples=n_resamples,
        confidence=confidence_level, seed=seed, **more, **iv.corpus_flag(x),
    )
    return CorrelationResult(
        metric=metric, human=human, level=level, coefficient=coefficient, statistic=statistic,
        ci=(float(out.low), float(out.high)), confidence_level=confidence_level, pvalue=pvalue,
        n_used=int(out.n_used), n_skipped=int(out.n_skipped),
        interval_method=f"boot-{method}" + ("" if interval == "percentile" else "-bca"),
        n_resamples=n_resamples, n_resamples_dropped=int(out.n_resamples_dropped),
        signature=signature, bootstrap_distribution=np.asarray(out.samples),
    )


def fisher_ci(
    ds: ScoreSet,
    metric: str,
    human: str,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    undefined: str = defaults.UNDEFINED,
    full_test_set: bool = False,
    pvalue_method: str = defaults.PVALUE_METHOD,
    alternative: str = defaults.CORRELATION_ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    rng: Any = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> CorrelationResult:
    """Correlation with a Fisher-z confidence interval (Bonett & Wright 2000) and a p-value.

    ``tanh(arctanh(r) +- z_{a/2} c / sqrt(n - b))`` with b = 3, 3, 4 and c = 1, sqrt(1 + r^2/2),
    sqrt(0.437) for Pearson, Spearman and Kendall. ``n`` is the number of points correlated: systems
    at system and summary level (the summary-level statistic is an average of per-input correlations,
    for which this approximation is questionable: Deutsch et al. 2021 find it too wide), cells at
    global level, inputs at by-system level; at partial level the cells less ``G - 1`` for the ``G``
    system means removed (the degrees of freedom of a partial correlation with ``G - 1`` covariates).
    ``pvalue_method``, ``alternative``, ``n_resamples``, ``rng`` and ``corpus_statistics`` are those of
    :func:`correlate`.

    Parameters
    ----------
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.
    """
    ds, x, z, level, coefficient, undefined, full_test_set, _ = _correlate_iv(
        ds, metric, human, level, coefficient, undefined, full_test_set, 0.0, corpus_statistics
    )
    confidence_level = iv.check_confidence_level(confidence_level)
    pvalue_method, alternative, n_resamples = _pvalue_iv(pvalue_method, alternative, n_resamples)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    point = level_correlation(x, z, level=level, coefficient=coefficient, undefined=undefined,
                              full_test_set=full_test_set, rtol=rtol)
    statistic = float(point.statistic)
    n_systems, n_inputs = ds.shape
    if level == "global":
        n_points = int(point.n_used)
    elif level == "partial":  # cells, less one degree of freedom per system mean removed beyond the first
        systems_present = int((np.isfinite(x) & np.isfinite(z)).any(axis=1).sum())
        n_points = int(point.n_used) - max(systems_present - 1, 0)
    elif level == "by-system":
        n_points = n_inputs
    else:
        n_points = n_systems
    low, high = fisher_interval(statistic, n_points, coefficient=coefficient, confidence_level=confidence_level)
    pvalue, more = _pvalue(x, z, level, coefficient, undefined, full_test_set, 0.0, pvalue_method, alternative,
                           n_resamples, generator, statistic, rtol)
    if pvalue_method == "permutation":
        more["seed"] = seed
    return CorrelationResult(
        metric=metric, human=human, level=level, coefficient=coefficient, statistic=statistic,
        ci=(float(low), float(high)), confidence_level=confidence_level, pvalue=pvalue,
        n_used=int(point.n_used), n_skipped=int(point.n_skipped), interval_method="fisher",
        n_resamples=None, n_resamples_dropped=None,
        signature=_correlation_signature(ds, metric, human, level, coefficient, undefined, full_test_set, 0.0, rtol,
                                         ci="fisher", n=n_points, confidence=confidence_level, **more,
                                         **iv.corpus_flag(x)),
    )


_CORPUS_DOC = """    corpus_statistics : mapping, optional
        ``{metric: (statistics, aggregate)}`` (or :class:`metaeval.stats.corpus.CorpusScores`): at the system
        level these metrics' system scores are corpus scores, ``aggregate`` of their ``(N, M, S)``
        sufficient statistics summed over the inputs (BLEU, chrF, TER: see
        :func:`metaeval.scoring.corpus.corpus_statistics`), re-summed inside every input resample; the
        inputs are those where every system has statistics and a human score. Other levels use the
        metric's cell scores. The signature records ``corpus_level``.
"""
correlate.__doc__ = correlate.__doc__.replace("{pvalue_doc}", _PVALUE_DOC).replace("{corpus_doc}", _CORPUS_DOC)
bootstrap_ci.__doc__ = bootstrap_ci.__doc__.replace("{pvalue_doc}", _PVALUE_DOC).replace("{corpus_doc}", _CORPUS_DOC)
