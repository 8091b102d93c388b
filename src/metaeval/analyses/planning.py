"""Annotation planning: how many inputs (and systems) must be judged for a target interval width or power?

From a pilot ScoreSet, simulated annotation campaigns of ``n`` systems x ``m`` inputs are drawn from the
pilot (treated as the population), and on each one the bootstrap interval of the metric's correlation
is computed and, given a second metric, the test of whether the first correlates better. The mean
interval width and the rejection rate (power) as functions of ``m`` and ``n`` answer "how many inputs
must we judge for a width <= w?" and "... to detect this difference with 80% power?".
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import (
    DegenerateWarning,
    MetaevalError,
    MetaevalWarning,
    ParameterError,
    check_choice,
    check_int,
    check_probability,
)
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.resampling.bootstrap import bootstrap_samples, percentile_interval
from ..stats.correlations.levels import level_correlation
from ..stats.significance.paired_bootstrap import bootstrap_pvalue
from ..stats.significance.permutation import permutation_test
from ..stats.resampling.draws import bootstrap_draws
from ..vocabulary import METRIC_TESTS
from . import _common as common
from .interface import Call, CommandSpec, Option

__all__ = ["AnnotationPlanResult", "plan_annotation"]

TESTS = tuple(t for t in METRIC_TESTS if t != "williams")  # resampling tests only
#: Default input grid, as multiples of the pilot's number of inputs.
INPUT_MULTIPLES = (0.25, 0.5, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class AnnotationPlanResult(ResultMixin):
    """Simulated interval widths and power for annotation campaigns of ``n`` systems x ``m`` inputs.

    Attributes
    ----------
    n_systems, n_inputs : numpy.ndarray
        (S,) and (G,) the simulated numbers of systems and judged inputs.
    extrapolated : numpy.ndarray of bool
        (G,) ``m`` larger than the pilot: inputs drawn with replacement from the pilot's.
    width_mean, width_sd : numpy.ndarray
        (S, G) mean and sd of the interval width over repetitions with a defined interval.
    power, power_se : numpy.ndarray
        (S, G) share of repetitions in which the test rejects at ``alpha`` and its Monte Carlo standard
        error ``sqrt(p (1 - p) / R)`` (NaN without ``metric_b``).
    n_defined_width, n_defined_power : numpy.ndarray
        (S, G) repetitions whose interval / p-value was defined.
    width_fit : numpy.ndarray
        (S, 2) ``(a, c)`` of the least-squares fit ``width(m) = a + c / sqrt(m)``.
    required_inputs : numpy.ndarray
        (S,) smallest simulated ``m`` whose mean width is <= ``target_width`` (-1: none).
    required_inputs_fit : numpy.ndarray
        (S,) ``m`` solving ``a + c / sqrt(m) = target_width`` (inf when ``target_width <= a``: more
        inputs alone cannot reach it, judge more systems; NaN without a target).
    fit_beyond_grid : numpy.ndarray of bool
        (S,) ``required_inputs_fit`` is finite and larger than the largest simulated ``m``: an
        extrapolation of the fitted curve, not a simulated answer (a warning says so; simulate up to it
        with ``n_inputs`` to check it).
    required_inputs_power : numpy.ndarray
        (S,) smallest simulated ``m`` with ``power >= target_power`` (-1: none).
    pilot_statistic, pilot_statistic_b : float
        The correlations of ``metric`` and ``metric_b`` on the whole pilot.
    """

    metric: str
    metric_b: str | None
    human: str
    level: str
    coefficient: str
    method: str
    test: str | None
    alternative: str
    alpha: float
    n_systems: np.ndarray
    n_inputs: np.ndarray
    extrapolated: np.ndarray
    width_mean: np.ndarray
    width_sd: np.ndarray
    n_defined_width: np.ndarray
    power: np.ndarray
    power_se: np.ndarray
    n_defined_power: np.ndarray
    width_fit: np.ndarray
    target_width: float | None
    target_power: float
    required_inputs: np.ndarray
    required_inputs_fit: np.ndarray
    required_inputs_power: np.ndarray
    fit_beyond_grid: np.ndarray
    pilot_statistic: float
    pilot_statistic_b: float
    pilot_shape: tuple[int, int]
    confidence_level: float
    n_repetitions: int
    n_resamples: int
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per (n_systems, n_inputs)."""
        return [{
            "n_systems": int(n), "n_inputs": int(m), "extrapolated": bool(self.extrapolated[g]),
            "width_mean": common.plain(self.width_mean[s, g]), "width_sd": common.plain(self.width_sd[s, g]),
            "n_defined_width": int(self.n_defined_width[s, g]), "power": common.plain(self.power[s, g]),
            "power_se": common.plain(self.power_se[s, g]), "n_defined_power": int(self.n_defined_power[s, g]),
        } for s, n in enumerate(self.n_systems) for g, m in enumerate(self.n_inputs)]

    def answer_frame(self):
        """One row per number of systems: the inputs needed for the target width and power."""
        import pandas as pd

        return pd.DataFrame([{
            "n_systems": int(n), "target_width": self.target_width,
            "required_inputs": None if self.required_inputs[s] < 0 else int(self.required_inputs[s]),
            "required_inputs_fit": float(self.required_inputs_fit[s]),  # inf stays: no number of inputs suffices
            "fit_beyond_grid": bool(self.fit_beyond_grid[s]),
            "width_floor": common.plain(self.width_fit[s, 0]), "target_power": self.target_power,
            "required_inputs_power": None if self.required_inputs_power[s] < 0 else int(self.required_inputs_power[s]),
        } for s, n in enumerate(self.n_systems)])

    def to_dict(self) -> dict[str, Any]:
        required_fit = [common.plain(v) for v in self.required_inputs_fit]  # JSON: inf (no number suffices) is null
        return {
            "analysis": "plan", "metric": self.metric, "metric_b": self.metric_b, "human": self.human,
            "level": self.level, "coefficient": self.coefficient, "method": self.method, "test": self.test,
            "alternative": self.alternative, "alpha": self.alpha, "pilot_shape": list(self.pilot_shape),
            "pilot_statistic": common.plain(self.pilot_statistic),
            "pilot_statistic_b": common.plain(self.pilot_statistic_b),
            "grid": common.records(self.to_frame()),
            "answers": [dict(row, required_inputs_fit=fit) for row, fit in
                        zip(common.records(self.answer_frame()), required_fit)],
            "signature": str(self.signature),
        }


def _plan_iv(ds, metric, human, metric_b, n_inputs, n_systems, level, coefficient, method, test, alternative,
             alpha, n_repetitions, n_resamples, confidence_level, target_width, target_power):
    ds = iv.check_scoreset(ds)
    human = common.check_human(ds, human)
    (metric,) = common.check_metrics(ds, (metric,), human)
    if metric_b is not None:
        common.check_metrics(ds, (metric, metric_b), human)
    n, m = ds.shape
    n_inputs = tuple(sorted({max(2, int(round(f * m))) for f in INPUT_MULTIPLES})) if n_inputs is None else \
        tuple(sorted(common.check_positive_ints("n_inputs", n_inputs, minimum=2)))
    n_systems = (n,) if n_systems is None else \
        tuple(sorted(common.check_positive_ints("n_systems", n_systems, minimum=3, maximum=n)))
    level = iv.check_level(level)
    iv.check_level_design(ds, level)
    coefficient = iv.check_coefficient(coefficient)
    method = iv.check_method(method)
    test = check_choice("test", test, TESTS)
    alternative = iv.check_alternative(alternative)
    alpha = iv.check_alpha(alpha)
    n_repetitions = check_int("n_repetitions", n_repetitions, minimum=1)
    n_resamples = check_int("n_resamples", n_resamples, minimum=1)
    confidence_level = iv.check_confidence_level(confidence_level)
    if target_width is not None:
        try:
            target_width = float(target_width)
        except (TypeError, ValueError):
            target_width = float("nan")
        if not 0 < target_width <= 2:
            raise ParameterError(f"`target_width` must be a number in (0, 2]; got {target_width!r}.")
    target_power = check_probability("target_power", target_power)
    return (ds, metric, human, metric_b, n_inputs, n_systems, level, coefficient, method, test, alternative, alpha,
            n_repetitions, n_resamples, confidence_level, target_width, target_power)


def _complete(ds: ScoreSet, scorers: tuple[str, ...]) -> list[np.ndarray]:
    """The pilot's matrices restricted to the inputs every scorer has for every system."""
    matrices = [ds.matrix(s) for s in scorers]
    keep = np.logical_and.reduce([np.isfinite(x).all(axis=0) for x in matrices])
    if keep.sum() < 2:
        raise ParameterError(f"the pilot must have at least 2 inputs scored by {', '.join(scorers)} for every system; "
                             f"got {int(keep.sum())}.")
    return [x[:, keep] for x in matrices]


def fit_width(sizes: np.ndarray, widths: np.ndarray) -> tuple[float, float]:
    """Least-squares ``(a, c)`` of ``width = a + c / sqrt(m)`` over the finite points (NaN if < 2)."""
    ok = np.isfinite(widths)
    if ok.sum() < 2:
        return float("nan"), float("nan")
    design = np.stack([np.ones(ok.sum()), 1.0 / np.sqrt(sizes[ok])], axis=1)
    (a, c), *_ = np.linalg.lstsq(design, widths[ok], rcond=None)
    return float(a), float(c)


def plan_annotation(
    ds: ScoreSet,
    metric: str,
    human: str,
    *,
    metric_b: str | None = None,
    n_inputs: Any = None,
    n_systems: Any = None,
    level: str = defaults.LEVEL,
    coefficient: str = defaults.COEFFICIENT,
    method: str = defaults.RESAMPLING_METHOD,
    test: str = defaults.PLAN_TEST,
    alternative: str = defaults.ALTERNATIVE,
    alpha: float = defaults.ALPHA,
    n_repetitions: int = defaults.PLAN_REPETITIONS,
    n_resamples: int = defaults.PLAN_N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    target_width: float | None = None,
    target_power: float = defaults.PLAN_TARGET_POWER,
    rng: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> AnnotationPlanResult:
    """Simulate interval width and power against the numbers of judged inputs and systems, from a pilot.

    Parameters
    ----------
    ds : ScoreSet
        The pilot (only inputs scored by every chosen scorer for every system are used).
    metric, human : str
        The interval is that of ``CORR(metric, human)`` at ``level``.
    metric_b : str, optional
        A second metric: power of the test of ``H1: r(metric) > r(metric_b)`` (``alternative``), i.e. of
        detecting the difference the pilot shows between them.
    n_inputs : sequence of int, optional
        Judged inputs ``m`` to simulate (default 0.25, 0.5, 1, 2 and 4 times the pilot's).
    n_systems : sequence of int, optional
        Systems ``n`` to simulate, each in ``[3, N]`` (default: all ``N``).
    level, coefficient : str
    method : {'systems', 'inputs', 'both'}
        Bootstrap of the interval (BOOT-*) and resampling of the test (PERM-* or paired BOOT-*).
    test : {'permutation', 'bootstrap'}
        Test of the power simulation (default PERM-``method``, the better-calibrated test of Deutsch et
        al. 2021).
    alternative : {'greater', 'less', 'two-sided'}
    alpha : float
        A repetition rejects when ``p < alpha``.
    n_repetitions : int
        Simulated campaigns per grid cell (default 100).
    n_resamples : int
        Bootstrap resamples / permutations within each campaign (default 200).
    confidence_level : float
    target_width : float, optional
        The answer's target: smallest ``m`` with mean width <= ``target_width``.
    target_power : float
        The answer's target power (default 0.8).
    rng : None, int or numpy.random.Generator
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    AnnotationPlanResult

    Notes
    -----
    One simulated campaign of ``n`` systems x ``m`` inputs draws ``n`` of the pilot's systems without
    replacement and ``m`` inputs: without replacement while ``m <= M`` (a subsample of the pilot),
    with replacement beyond (the pilot's inputs stand for the input population; such ``m`` are flagged
    ``extrapolated``). On the campaign, the percentile BOOT-``method`` interval of the correlation is
    computed with ``n_resamples`` resamples (width = high - low) and, with ``metric_b``, the test's
    p-value. The mean width and the rejection rate over ``n_repetitions`` campaigns are reported per
    cell. The width curve is summarized by ``width(m) = a + c / sqrt(m)``: ``c / sqrt(m)`` is the part
    that more inputs remove, ``a`` the floor set by sampling a finite set of systems (under BOOT-SYSTEMS
    and BOOT-BOTH); a target below the floor needs more systems, not more inputs. A fitted answer beyond
    the largest simulated ``m`` is marked (``fit_beyond_grid``) and warned about: it extrapolates the
    curve, it is not refused. The pilot is treated
    as the truth: the planned numbers are as good as the pilot is representative, and a small pilot
    understates uncertainty about the effect itself.

    References
    ----------
    D. Deutsch, R. Dror and D. Roth. A Statistical Analysis of Summarization Evaluation Metrics using
    Resampling Methods. TACL 9, 2021 (the intervals and tests simulated here).
    """
    (ds, metric, human, metric_b, n_inputs, n_systems, level, coefficient, method, test, alternative, alpha,
     n_repetitions, n_resamples, confidence_level, target_width, target_power) = _plan_iv(
        ds, metric, human, metric_b, n_inputs, n_systems, level, coefficient, method, test, alternative, alpha,
        n_repetitions, n_resamples, confidence_level, target_width, target_power)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    scorers = (metric, human) + ((metric_b,) if metric_b else ())
    matrices = _complete(ds, scorers)
    x_all, z_all = matrices[0], matrices[1]
    y_all = matrices[2] if metric_b else None
    big_n, big_m = x_all.shape
    kw = dict(level=level, coefficient=coefficient, rtol=rtol)
    pilot = float(level_correlation(x_all, z_all, **kw).statistic)
    pilot_b = float(level_correlation(y_all, z_all, **kw).statistic) if metric_b else float("nan")

    shape = (len(n_systems), len(n_inputs))
    widths = np.full(shape + (n_repetitions,), np.nan)
    pvalues = np.full(shape + (n_repetitions,), np.nan)
    undefined_tests = 0
    for s, n in enumerate(n_systems):
        for g, m in enumerate(n_inputs):
            for r in range(n_repetitions):
                rows = np.arange(big_n) if n == big_n else np.sort(generator.choice(big_n, n, replace=False))
                cols = generator.choice(big_m, m, replace=False) if m <= big_m else generator.integers(0, big_m, m)
                x, z = x_all[np.ix_(rows, cols)], z_all[np.ix_(rows, cols)]
                draws = bootstrap_draws(n, m, method=method, n_resamples=n_resamples, rng=generator)
                sx = bootstrap_samples(x, z, draws=draws, **kw)
                low, high = percentile_interval(sx, confidence_level)
                widths[s, g, r] = high - low
                if y_all is None:
                    continue
                y = y_all[np.ix_(rows, cols)]
                pvalues[s, g, r] = _pvalue(x, y, z, sx, draws, test, method, alternative, n_resamples, generator, kw)
                undefined_tests += int(np.isnan(pvalues[s, g, r]))
    if undefined_tests:
        warnings.warn(f"{undefined_tests} simulated tests had an undefined p-value (e.g. a constant metric in a "
                      "small campaign) and are left out of the power.", DegenerateWarning, stacklevel=2)

    def summary(values):
        ok = np.isfinite(values)
        count = ok.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(count > 0, np.where(ok, values, 0).sum(axis=-1) / np.maximum(count, 1), np.nan)
            sd = np.sqrt(np.where(count > 0, (np.where(ok, values - mean[..., None], 0) ** 2).sum(axis=-1)
                                  / np.maximum(count, 1), np.nan))
        return mean, sd, count

    width_mean, width_sd, n_width = summary(widths)
    rejected = np.where(np.isfinite(pvalues), (pvalues < alpha).astype(float), np.nan)
    power, _, n_power = summary(rejected) if metric_b else (np.full(shape, np.nan), None, np.zeros(shape, int))
    with np.errstate(invalid="ignore", divide="ignore"):
        power_se = np.sqrt(power * (1 - power) / np.maximum(n_power, 1))
    sizes = np.array(n_inputs, dtype=np.int64)
    fit = np.array([fit_width(sizes.astype(float), width_mean[s]) for s in range(len(n_systems))])
    required = np.full(len(n_systems), -1, dtype=np.int64)
    required_fit = np.full(len(n_systems), np.nan)
    required_power = np.full(len(n_systems), -1, dtype=np.int64)
    for s in range(len(n_systems)):
        if target_width is not None:
            meets = np.flatnonzero(width_mean[s] <= target_width)
            required[s] = sizes[meets[0]] if meets.size else -1
            a, c = fit[s]
            if np.isfinite(a) and np.isfinite(c) and c > 0:
                required_fit[s] = (c / (target_width - a)) ** 2 if target_width > a else np.inf
        if metric_b:
            meets = np.flatnonzero(power[s] >= target_power)
            required_power[s] = sizes[meets[0]] if meets.size else -1
    beyond = np.isfinite(required_fit) & (required_fit > sizes.max())
    if beyond.any():
        listed = ", ".join(f"{n} systems: {required_fit[s]:,.0f}" for s, n in enumerate(n_systems) if beyond[s])
        warnings.warn(f"required_inputs_fit beyond the simulated grid (which ends at {sizes.max():,} inputs) is an"
                      f" extrapolation of width(m) = a + c / sqrt(m), not a simulated answer ({listed}): simulate"
                      " up to it with n_inputs to check it.", MetaevalWarning, stacklevel=2)
    signature = Signature.of(
        **ds.signature_fields(), analysis="plan", metric=metric, metric_b=metric_b, human=human, level=level,
        coefficient=coefficient, ci=f"boot-{method}", test=f"{'perm' if test == 'permutation' else 'boot'}-{method}"
        if metric_b else None, alternative=alternative, alpha=alpha, n_systems=list(n_systems), n_inputs=list(n_inputs),
        repetitions=n_repetitions, resamples=n_resamples, confidence=confidence_level, target_width=target_width,
        target_power=target_power, seed=seed, **iv.tie_field(rtol),
    )
    return AnnotationPlanResult(
        metric=metric, metric_b=metric_b, human=human, level=level, coefficient=coefficient, method=method,
        test=test if metric_b else None, alternative=alternative, alpha=alpha,
        n_systems=np.array(n_systems, dtype=np.int64), n_inputs=sizes, extrapolated=sizes > big_m,
        width_mean=width_mean, width_sd=width_sd, n_defined_width=n_width, power=power, power_se=power_se,
        n_defined_power=n_power, width_fit=fit, target_width=target_width, target_power=target_power,
        required_inputs=required, required_inputs_fit=required_fit, required_inputs_power=required_power,
        fit_beyond_grid=beyond,
        pilot_statistic=pilot, pilot_statistic_b=pilot_b, pilot_shape=(big_n, big_m),
        confidence_level=confidence_level, n_repetitions=n_repetitions, n_resamples=n_resamples, signature=signature,
    )


def _pvalue(x, y, z, sx, draws, test, method, alternative, n_resamples, generator, kw) -> float:
    """p-value of ``H1: r(x) > r(y)`` on one simulated campaign (NaN when undefined)."""
    # An undefined p-value is NaN and counted by the caller, which warns once for all campaigns.
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always", DegenerateWarning)
        if test == "bootstrap":
            sy = bootstrap_samples(y, z, draws=draws, **kw)
            delta = float(level_correlation(x, z, **kw).statistic) - float(level_correlation(y, z, **kw).statistic)
            deltas = sx - sy
            return bootstrap_pvalue(deltas[np.isfinite(deltas)], delta, alternative)
        try:
            return float(permutation_test(x, y, z, method=method, alternative=alternative, n_resamples=n_resamples,
                                          rng=generator, **kw).pvalue)
        except MetaevalError:
            return float("nan")


# -- the command line and the report (declarations read by metaeval.cli and metaeval.report) -------------------

def _command(call: Call) -> AnnotationPlanResult:
    o, metrics = call.options, call.options["metric"]
    if not 1 <= len(metrics) <= 2:
        raise ParameterError(f"`--metric` must be given once or twice (metric, optional second metric); got "
                             f"{len(metrics)} times.")
    return plan_annotation(
        call.ds, metrics[0], call.human, metric_b=metrics[1] if len(metrics) == 2 else None, n_inputs=o["n_inputs"],
        n_systems=o["n_systems"], level=o["level"], coefficient=o["coefficient"], method=o["method"],
        test=o["test"], alternative=o["alternative"], alpha=o["alpha"], n_repetitions=o["n_repetitions"],
        n_resamples=o["n_resamples"], confidence_level=o["confidence_level"], target_width=o["target_width"],
        target_power=o["target_power"], rng=o["seed"], tie_tolerance=o["tie_tolerance"],
    )


CLI = CommandSpec(
    _command,
    options=(
        Option("n_inputs", "integers", help="Judged inputs to simulate, e.g. 25,50,100,200 (default 0.25-4 x the"
                                            " pilot's)."),
        Option("n_systems", "integers", help="Systems to simulate (default all)."),
        Option("level", help="Level of the simulated correlations.", shared=True),
        Option("coefficient", help="Coefficient of the simulated correlations.", shared=True),
        Option("method", help="BOOT-* interval and PERM-* / BOOT-* test.", shared=True),
        Option("test", TESTS, defaults.PLAN_TEST, "Test whose power is simulated.", shared=True),
        "alternative",
        Option("alpha", help="Significance level of the power simulation.", shared=True),
        Option("target_width", float, help="Answer: inputs needed for a mean width <= this."),
        Option("target_power", float, defaults.PLAN_TARGET_POWER, "Answer: inputs needed for at least this power."),
        Option("n_repetitions", int, defaults.PLAN_REPETITIONS, "Simulated annotation campaigns per grid cell.",
               shared=True),
        Option("n_resamples", int, defaults.PLAN_N_RESAMPLES, "Bootstrap resamples / permutations within each"
                                                              " campaign.", shared=True),
        Option("confidence_level", help="Confidence level of the simulated intervals.", shared=True),
    ),
    inputs=("source", "seed", "tie_tolerance"),
    help="The first --metric is the metric whose correlation interval is planned; a second --metric adds the"
         " power of the test that the first correlates better than the second. Simulated from a pilot.",
)
