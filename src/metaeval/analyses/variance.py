"""Judged subset vs full test set (Deutsch, Dror & Roth 2022, Sec. 3): variance of system scores and
the width of correlation intervals with ``M_jud`` judged inputs vs ``M_test`` test inputs.

Human judgments cover a small judged subset of the test set (``M_jud`` inputs, e.g. 100), but a metric
can score every test input (``M_test``, e.g. 11,490). Averaging the metric over the whole test set makes
its system scores more precise, and narrows the confidence interval of the system-level correlation.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError, check_int
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.resampling.bootstrap import bootstrap_samples, percentile_interval
from ..stats.resampling.draws import (
    METHODS,
    batch_slices,
    bootstrap_draws,
    count_weights,
    default_batch,
)
from . import _common as common

__all__ = ["ScoreVarianceResult", "score_variance"]


@dataclass(frozen=True)
class ScoreVarianceResult(ResultMixin):
    """Variance of system scores and interval widths, judged subset vs full test set, per metric.

    Attributes
    ----------
    metrics : tuple of str
    n_inputs_judged, n_inputs_test : numpy.ndarray
        (A,) ``M_jud`` (inputs judged by the human and scored by the metric for every system) and
        ``M_test`` (inputs the metric scored for every system).
    variance_judged, variance_test : numpy.ndarray
        (A,) bootstrap variance of a system's score, averaged over systems.
    reduction : numpy.ndarray
        (A,) ``100 (variance_judged - variance_test) / variance_judged`` (%).
    analytic_judged, analytic_test, analytic_reduction : numpy.ndarray
        (A,) the same from the exact bootstrap variance of a mean, ``s_i^2 / M`` (``s_i^2`` with ddof 0),
        which the resampled values estimate.
    human_variance : float
        The human score's bootstrap variance over the judged inputs (for reference).
    methods : tuple of str
        Resampling methods of the interval widths.
    ci_judged, ci_test : numpy.ndarray
        (A, len(methods), 2) percentile intervals of the system-level correlation (metric over the
        judged inputs, or over the test inputs with the human over the judged ones).
    width_judged, width_test, width_reduction : numpy.ndarray
        (A, len(methods)) interval widths and ``100 (width_judged - width_test) / width_judged`` (%).
    """

    metrics: tuple[str, ...]
    human: str
    n_inputs_judged: np.ndarray
    n_inputs_test: np.ndarray
    variance_judged: np.ndarray
    variance_test: np.ndarray
    reduction: np.ndarray
    analytic_judged: np.ndarray
    analytic_test: np.ndarray
    analytic_reduction: np.ndarray
    human_variance: float
    methods: tuple[str, ...]
    coefficient: str
    ci_judged: np.ndarray
    ci_test: np.ndarray
    width_judged: np.ndarray
    width_test: np.ndarray
    width_reduction: np.ndarray
    confidence_level: float
    n_resamples: int
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per metric: variances and their reduction (%)."""
        return [{
            "metric": m, "n_inputs_judged": int(self.n_inputs_judged[a]), "n_inputs_test": int(self.n_inputs_test[a]),
            "variance_judged": common.plain(self.variance_judged[a]),
            "variance_test": common.plain(self.variance_test[a]),
            "reduction_percent": common.plain(self.reduction[a]),
            "analytic_reduction_percent": common.plain(self.analytic_reduction[a]),
        } for a, m in enumerate(self.metrics)]

    def ci_frame(self):
        """One row per (metric, method): interval widths with M_jud and M_test inputs."""
        import pandas as pd

        return pd.DataFrame([{
            "metric": m, "method": f"boot-{method}", "coefficient": self.coefficient,
            "ci_judged_low": common.plain(self.ci_judged[a, k, 0]), "ci_judged_high": common.plain(self.ci_judged[a, k, 1]),
            "ci_test_low": common.plain(self.ci_test[a, k, 0]), "ci_test_high": common.plain(self.ci_test[a, k, 1]),
            "width_judged": common.plain(self.width_judged[a, k]), "width_test": common.plain(self.width_test[a, k]),
            "width_reduction_percent": common.plain(self.width_reduction[a, k]),
        } for a, m in enumerate(self.metrics) for k, method in enumerate(self.methods)])

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": "variance", "metrics": list(self.metrics), "human": self.human,
            "human_variance": common.plain(self.human_variance), "coefficient": self.coefficient,
            "confidence_level": self.confidence_level, "n_resamples": self.n_resamples,
            "variance": common.records(self.to_frame()),
            "ci_widths": common.records(self.ci_frame()),
            "signature": str(self.signature),
        }


def _variance_iv(ds, metrics, human, methods, coefficient, n_resamples, confidence_level):
    checked = common.check_scores(ds, human, metrics, None)
    ds, metrics = checked.ds, checked.metrics
    if isinstance(methods, str):
        methods = (methods,)
    try:
        methods = tuple(methods)
    except TypeError:
        methods = None
    if methods is None or any(m not in METHODS for m in methods) or len(set(methods)) != len(methods):
        raise ParameterError(f"`methods` must be a list of distinct methods among 'systems', 'inputs', 'both'; "
                             f"got {methods!r}.")
    coefficient = iv.check_coefficient(coefficient)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    confidence_level = iv.check_confidence_level(confidence_level)
    return ds, metrics, human, methods, coefficient, n_resamples, confidence_level


def _reduction(before, after):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(before > 0, 100.0 * (before - after) / np.where(before > 0, before, 1.0), np.nan)


def _bootstrap_variance(values: np.ndarray, cols: np.ndarray) -> float:
    """Mean over systems of the variance (ddof 0) of the system mean over resampled columns ``cols`` (k, M)."""
    means = np.empty((cols.shape[0], values.shape[0]))
    for sl in batch_slices(cols.shape[0], default_batch(cols.shape[1])):
        weights = count_weights(cols[sl], values.shape[1]).astype(np.float64)
        means[sl] = np.einsum("km,nm->kn", weights, values) / values.shape[1]
    return float(means.var(axis=0).mean())


def score_variance(
    ds: ScoreSet,
    metrics: Any,
    human: str,
    *,
    methods: Any = ("systems", "inputs", "both"),
    coefficient: str = defaults.COEFFICIENT,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    rng: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> ScoreVarianceResult:
    """Variance of system scores and correlation interval widths, judged subset vs full test set.

    Parameters
    ----------
    ds : ScoreSet
        The judged inputs are those with a human score; a metric's test inputs are every input it scored
        for every system (``M_test >= M_jud``; metric scores on unjudged inputs have NaN human scores).
    metrics : str or sequence of str
    human : str
    methods : sequence of {'systems', 'inputs', 'both'}
        Resampling methods whose interval widths are compared (empty: none).
    coefficient : str
        Of the system-level correlation whose interval is computed (default Kendall tau-b).
    n_resamples : int
    confidence_level : float
    rng : None, int or numpy.random.Generator
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    ScoreVarianceResult

    Warns
    -----
    DegenerateWarning
        If a metric has no inputs beyond the judged ones (``M_test == M_jud``): both sides are then the
        same data and every reduction is 0.

    Notes
    -----
    Variance: for each system ``i`` the inputs are resampled with replacement (the same draws for all
    systems, ``M`` draws for ``M`` inputs) and the variance over resamples of the system's mean score is
    averaged over systems, as in the paper's Fig. 2 (``reduction = (v_jud - v_test) / v_jud``). When
    ``M_test == M_jud`` the same draws are used on both sides.

    Interval widths: the percentile bootstrap interval of the system-level correlation, judged subset
    (metric and human over the ``M_jud`` inputs, resampled together) vs full test set (metric over its
    ``M_test`` inputs and human over the ``M_jud`` inputs, resampled independently under BOOT-INPUTS and
    BOOT-BOTH). See :func:`metaeval.bootstrap_ci`.

    References
    ----------
    D. Deutsch, R. Dror and D. Roth. Re-Examining System-Level Correlations of Automatic Summarization
    Evaluation Metrics. NAACL 2022, Sec. 3.
    """
    ds, metrics, human, methods, coefficient, n_resamples, confidence_level = _variance_iv(
        ds, metrics, human, methods, coefficient, n_resamples, confidence_level)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    z_all = ds.matrix(human)
    judged = np.isfinite(z_all).all(axis=0)
    n_metrics = len(metrics)
    n_jud = np.zeros(n_metrics, dtype=np.int64)
    n_test = np.zeros(n_metrics, dtype=np.int64)
    var_jud, var_test, an_jud, an_test = (np.full(n_metrics, np.nan) for _ in range(4))
    shape = (n_metrics, len(methods), 2)
    ci_jud, ci_test = np.full(shape, np.nan), np.full(shape, np.nan)
    pairs = []
    for a, metric in enumerate(metrics):
        x_all = ds.matrix(metric)
        test_cols = np.isfinite(x_all).all(axis=0)
        jud_cols = test_cols & judged
        if not jud_cols.any():
            raise ParameterError(f"`metrics` must have scores on the judged inputs for every system; {metric!r} "
                                 "has none.")
        n_jud[a], n_test[a] = jud_cols.sum(), test_cols.sum()
        pairs.append((x_all[:, jud_cols], x_all[:, test_cols], z_all[:, jud_cols]))
    same = n_jud == n_test
    if same.any():
        listed = ", ".join(repr(m) for m, s in zip(metrics, same) if s)
        warnings.warn(f"{listed} have no scores beyond the judged inputs (M_test == M_jud); judged subset and full "
                      "test set are the same data, so every reduction is 0.", DegenerateWarning, stacklevel=2)
    cols_cache: dict[int, np.ndarray] = {}

    def cols(m: int) -> np.ndarray:
        if m not in cols_cache:
            cols_cache[m] = generator.integers(0, m, size=(n_resamples, m))
        return cols_cache[m]

    for a, (x_jud, x_test, _) in enumerate(pairs):
        var_jud[a] = _bootstrap_variance(x_jud, cols(x_jud.shape[1]))
        var_test[a] = var_jud[a] if same[a] else _bootstrap_variance(x_test, cols(x_test.shape[1]))
        an_jud[a] = float((x_jud.var(axis=1) / x_jud.shape[1]).mean())
        an_test[a] = float((x_test.var(axis=1) / x_test.shape[1]).mean())
    z_jud = z_all[:, judged]
    human_variance = _bootstrap_variance(z_jud, cols(z_jud.shape[1])) if z_jud.shape[1] else float("nan")

    kw = dict(level="system", coefficient=coefficient, rtol=rtol)
    for k, method in enumerate(methods):
        draws_cache: dict[tuple[int, int | None], Any] = {}

        def draws(m_x: int, m_z: int | None):
            if (m_x, m_z) not in draws_cache:
                draws_cache[(m_x, m_z)] = bootstrap_draws(ds.shape[0], m_x, method=method, n_resamples=n_resamples,
                                                          rng=generator, n_inputs_human=m_z)
            return draws_cache[(m_x, m_z)]

        for a, (x_jud, x_test, z) in enumerate(pairs):
            samples = bootstrap_samples(x_jud, z, draws=draws(x_jud.shape[1], None), **kw)
            ci_jud[a, k] = percentile_interval(samples, confidence_level)
            if same[a]:
                ci_test[a, k] = ci_jud[a, k]
                continue
            samples = bootstrap_samples(x_test, z, draws=draws(x_test.shape[1], z.shape[1]), full_test_set=True, **kw)
            ci_test[a, k] = percentile_interval(samples, confidence_level)
    width_jud = ci_jud[..., 1] - ci_jud[..., 0]
    width_test = ci_test[..., 1] - ci_test[..., 0]
    signature = Signature.of(
        **ds.signature_fields(), analysis="variance", metrics=list(metrics), human=human, level="system",
        coefficient=coefficient, methods=[f"boot-{m}" for m in methods], resamples=n_resamples,
        confidence=confidence_level, seed=seed, **iv.tie_field(rtol),
    )
    return ScoreVarianceResult(
        metrics=metrics, human=human, n_inputs_judged=n_jud, n_inputs_test=n_test, variance_judged=var_jud,
        variance_test=var_test, reduction=_reduction(var_jud, var_test), analytic_judged=an_jud,
        analytic_test=an_test, analytic_reduction=_reduction(an_jud, an_test), human_variance=human_variance,
        methods=methods, coefficient=coefficient, ci_judged=ci_jud, ci_test=ci_test, width_judged=width_jud,
        width_test=width_test, width_reduction=_reduction(width_jud, width_test),
        confidence_level=confidence_level, n_resamples=n_resamples, signature=signature,
    )
