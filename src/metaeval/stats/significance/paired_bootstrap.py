"""Paired bootstrap test for the difference of two metrics' correlations with the humans.

Test of ``H1: rho(X, Z) > rho(Y, Z)`` by resampling ``X``, ``Y`` and ``Z`` together (BOOT-SYSTEMS,
BOOT-INPUTS or BOOT-BOTH, the same indices for the three matrices), as in Deutsch, Dror & Roth (2021),
Sec. 5, who follow the paired bootstrap of Koehn (2004) in the form of Berg-Kirkpatrick et al. (2012):

* Only the cells where ``X``, ``Y`` and ``Z`` are all present are used (:mod:`metaeval.stats.significance.common`).
* ``delta = L(X, Z) - L(Y, Z)`` and ``delta_s = L(X*_s, Z*_s) - L(Y*_s, Z*_s)`` for ``s = 1..k``.
* The bootstrap distribution of ``delta_s`` is centred on ``delta``; shifted to mean zero,
  ``delta_s - delta`` approximates the null distribution of ``delta``. Hence
  ``p = #{delta_s - delta >= delta - gamma} / k'`` ("greater", i.e. ``delta_s >= 2 delta``, the
  ``delta(x^(i)) > 2 delta(x)`` rule of Berg-Kirkpatrick et al. 2012 with ``>=``),
  ``#{delta_s - delta <= delta + gamma} / k'`` ("less") and
  ``#{|delta_s - delta| >= |delta| - gamma} / k'`` ("two-sided"), with ``k'`` the resamples whose
  ``delta_s`` is defined and ``gamma = 100 eps |delta|``.

The comparison is ``>=`` so identical metrics give ``p = 1`` (SacreROUGE makes the same choice). Unlike the
permutation test there is no ``+1``: this is the paper's definition, and ``p`` can be 0. SacreROUGE's
two-sided variant compares ``|delta_s| >= 2 |delta|``; ours centres first, which is the two-sided version
of the same shift argument. The test is known to be less calibrated than PERM-BOTH (Deutsch et al. 2021,
Sec. 6); see ``docs/calibration.md``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from metaeval import defaults
from metaeval.errors import DegenerateWarning, check_probability
from metaeval.stats import kernels as _kernels
from metaeval.stats.resampling.bootstrap import bootstrap_samples, percentile_interval
from metaeval.stats.significance.common import common_cells
from metaeval.stats.corpus import CorpusScores, common_corpus_columns
from metaeval.stats.significance.permutation import TOLERANCE_EPS, metric_test_iv
from metaeval.stats.resampling.draws import as_generator, bootstrap_draws, check_batch
from metaeval.stats.correlations.ties import TIE_RTOL

__all__ = ["BootstrapTestOutcome", "bootstrap_test", "bootstrap_pvalue"]


@dataclass(frozen=True)
class BootstrapTestOutcome:
    """Result of :func:`bootstrap_test`.

    Attributes
    ----------
    delta : float
        ``L(X, Z) - L(Y, Z)``.
    statistic_x, statistic_y : float
    pvalue : float
        ``#{centred delta_s at least as extreme as delta} / k'`` (NaN if undefined).
    low, high : float
        Percentile interval of the ``delta_s`` at ``confidence_level``.
    confidence_level : float
    samples : ndarray
        The defined bootstrap ``delta_s`` (not centred), in draw order.
    alternative, method : str
    n_resamples, n_resamples_dropped : int
    """

    delta: float
    statistic_x: float
    statistic_y: float
    pvalue: float
    low: float
    high: float
    confidence_level: float
    samples: np.ndarray
    alternative: str
    method: str
    n_resamples: int
    n_resamples_dropped: int


def bootstrap_pvalue(samples: np.ndarray, delta: float, alternative: str) -> float:
    """Paired bootstrap p-value of the module docstring from the defined ``samples`` of ``delta_s``."""
    if not np.isfinite(delta) or samples.size == 0:
        return float("nan")
    gamma = TOLERANCE_EPS * np.finfo(np.float64).eps * abs(delta)
    centred = samples - delta
    if alternative == "greater":
        count = np.sum(centred >= delta - gamma)
    elif alternative == "less":
        count = np.sum(centred <= delta + gamma)
    else:
        count = np.sum(np.abs(centred) >= abs(delta) - gamma)
    return float(count / samples.size)


def bootstrap_test(
    x,
    y,
    z,
    *,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    alternative: str = defaults.ALTERNATIVE,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    rng: Any = None,
    batch: int | None = None,
    undefined: str = defaults.UNDEFINED,
    tie_threshold: float = 0.0,
    engine: str = "auto",
    rtol: float = TIE_RTOL,
) -> BootstrapTestOutcome:
    """Paired bootstrap test of ``H1: rho(X, Z) > rho(Y, Z)`` (Deutsch et al. 2021; Koehn 2004).

    Parameters
    ----------
    x, y, z : array_like, shape (N, M)
        Two metrics and the human scores (not standardized: nothing is swapped); at the system level a
        metric may be a :class:`metaeval.stats.corpus.CorpusScores` (corpus scores re-summed in every
        resample, on the inputs where every system has both metrics and the human).
    level, coefficient : str
    method : {"systems", "inputs", "both"}
        BOOT-SYSTEMS / BOOT-INPUTS / BOOT-BOTH; one set of indices for ``X``, ``Y`` and ``Z``.
    alternative : {"greater", "less", "two-sided"}
    n_resamples : int
    confidence_level : float in (0, 1)
        Of the percentile interval of ``delta_s`` returned beside the p-value.
    rng : None, int or numpy.random.Generator
    batch : int, optional
    undefined : {"skip", "zero"}
    tie_threshold : float
    engine : {"auto", "reference"}

    Returns
    -------
    BootstrapTestOutcome

    References
    ----------
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. TACL 9, 1132-1146.
    Koehn, P. (2004). Statistical Significance Tests for Machine Translation Evaluation. EMNLP.
    Berg-Kirkpatrick, T., Burkett, D. and Klein, D. (2012). An Empirical Investigation of Statistical
    Significance in NLP. EMNLP-CoNLL.
    """
    x, y, z, level, coefficient, method, alternative, k, undefined, tie_threshold, engine = metric_test_iv(
        x, y, z, level, coefficient, method, alternative, n_resamples, undefined, tie_threshold, engine)
    confidence_level = check_probability("confidence_level", confidence_level)
    gen = as_generator(rng)
    check_batch(batch, 1)
    if isinstance(x, CorpusScores) or isinstance(y, CorpusScores):  # the inputs every system has for all three
        (x, y), z = common_corpus_columns([x, y], z)
    else:
        cells = common_cells(x, y, z)  # the cells where X, Y and Z are all present, for both statistics
        x, y, z = cells.x, cells.y, cells.z
    kw = dict(level=level, coefficient=coefficient, undefined=undefined, tie_threshold=tie_threshold, rtol=rtol)
    rx, ry = (float(r.statistic) for r in _kernels.point_correlations([x, y], z, **kw))
    delta = rx - ry
    draws = bootstrap_draws(x.shape[0], x.shape[1], method=method, n_resamples=k, rng=gen)
    sx = bootstrap_samples(x, z, draws=draws, batch=batch, engine=engine, **kw)
    sy = bootstrap_samples(y, z, draws=draws, batch=batch, engine=engine, **kw)
    deltas = sx - sy
    samples = deltas[np.isfinite(deltas)]
    pvalue = bootstrap_pvalue(samples, delta, alternative)
    if not np.isfinite(delta):
        warnings.warn("The difference of correlations is undefined on the original data; the p-value is NaN.",
                      DegenerateWarning, stacklevel=2)
    elif samples.size == 0:
        warnings.warn(f"All {k} bootstrap resamples have an undefined difference of correlations; the p-value "
                      "is NaN.", DegenerateWarning, stacklevel=2)
    low, high = percentile_interval(samples, confidence_level)
    return BootstrapTestOutcome(delta, rx, ry, pvalue, low, high, confidence_level, samples, alternative, method, k, int(k - samples.size))
