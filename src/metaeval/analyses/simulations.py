"""How often does a confidence interval contain the correlation on held-out data? (Deutsch et al. 2021, Sec. 5.1)

The coverage simulation of Deutsch, Dror & Roth (2021), Table 1. In each of ``n_trials`` trials:

1. shuffle the N systems and the M inputs at random and split each into halves: the first
   ``floor(N/2)`` systems and ``floor(M/2)`` inputs form quarter A, the other systems and the other
   inputs form quarter D (the two off-diagonal quarters are unused);
2. build a confidence interval of the level correlation ``r(X_A, Z_A)`` from quarter A only: Fisher-z
   (``n`` = systems of A at both levels), or percentile BOOT-SYSTEMS / BOOT-INPUTS / BOOT-BOTH;
3. record whether the correlation of the held-out quarter, ``r(X_D, Z_D)``, falls inside
   (``low <= r_D <= high``), below (the interval is too high) or above (too low).

Quarter D shares neither systems nor inputs with A, so an interval that accounts for both sources of
variance should contain ``r_D`` close to ``confidence_level`` of the time. BOOT-INPUTS ignores the
variance due to systems and comes out lowest; Fisher's interval is built for i.i.d. pairs and is too
wide at the summary level (Deutsch et al. 2021).

Decisions where the paper is silent: within one trial the bootstrap draws of each method are shared by
every level and coefficient; a trial whose interval or held-out correlation is undefined is counted in
``n_undefined`` and left out of the proportions. The trials run in chunks of
:data:`~metaeval.defaults.SIMULATION_CHUNK_TRIALS`, chunk ``k`` drawing from
``np.random.SeedSequence(seed).spawn(n_chunks)[k]``, so the result for a seed is the same serially, on
``workers`` processes and on a Dask ``scheduler`` (:func:`metaeval.runtime.tasks.map_tasks`).
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError, check_choice, check_int
from ..runtime.tasks import check_backend, chunk_seeds, chunk_sizes, map_tasks
from ..serialization import ResultMixin
from ..serialization import plain as _plain
from ..signature import Signature
from ..stats._runtime import single_blas_thread
from ..stats.resampling.bootstrap import bootstrap_samples, percentile_interval
from ..stats.correlations.fisher import FISHER_COEFFICIENTS, fisher_interval
from ..stats.correlations.levels import level_correlation
from ..stats.resampling.draws import bootstrap_draws

__all__ = ["COVERAGE_METHODS", "CoverageResult", "simulate_coverage", "check_names"]

COVERAGE_METHODS = ("fisher", "boot-systems", "boot-inputs", "boot-both")
OUTCOMES = ("contains", "too_high", "too_low", "undefined")
#: Each half must hold at least this many systems for a correlation across systems.
MIN_HALF_SYSTEMS = 3


@dataclass(frozen=True)
class CoverageResult(ResultMixin):
    """Coverage of confidence intervals on held-out quarters (Deutsch et al. 2021, Table 1).

    Attributes
    ----------
    metric, human : str
    levels, coefficients, methods : tuple of str
    counts : ndarray of int (levels, coefficients, methods, 4)
        Trials whose held-out correlation was inside the interval, below it (interval too high), above it
        (too low), or undefined, in the order of :data:`OUTCOMES`.
    mean_width : ndarray (levels, coefficients, methods)
        Mean interval width over the defined trials.
    n_trials, n_resamples : int
    confidence_level : float
    signature : Signature
    """

    metric: str
    human: str
    levels: tuple[str, ...]
    coefficients: tuple[str, ...]
    methods: tuple[str, ...]
    counts: np.ndarray
    mean_width: np.ndarray
    n_trials: int
    n_resamples: int
    confidence_level: float
    signature: Signature

    @property
    def coverage(self) -> np.ndarray:
        """Share of the defined trials whose interval contains the held-out correlation."""
        defined = self.counts[..., :3].sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(defined > 0, self.counts[..., 0] / np.maximum(defined, 1), np.nan)

    @property
    def statistic(self) -> np.ndarray:
        return self.coverage

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per level x coefficient x method: coverage, too high, too low, undefined, width."""
        cov = self.coverage
        rows = []
        for a, level in enumerate(self.levels):
            for b, coefficient in enumerate(self.coefficients):
                for c, method in enumerate(self.methods):
                    n = self.counts[a, b, c]
                    defined = max(int(n[:3].sum()), 1)
                    rows.append({"level": level, "coefficient": coefficient, "method": method,
                                 "coverage": _plain(cov[a, b, c]), "too_high": n[1] / defined if n[:3].sum() else None,
                                 "too_low": n[2] / defined if n[:3].sum() else None, "n_undefined": int(n[3]),
                                 "mean_width": _plain(self.mean_width[a, b, c])})
        return rows

    def table(self, coefficient: str | None = None):
        """Coverage as in the paper's Table 1: methods as rows, levels as columns (one coefficient)."""
        import pandas as pd

        coefficient = self.coefficients[0] if coefficient is None else coefficient
        if coefficient not in self.coefficients:
            raise ParameterError(f"`coefficient` must be one of {list(self.coefficients)!r}; got {coefficient!r}.")
        b = self.coefficients.index(coefficient)
        return pd.DataFrame(self.coverage[:, b, :].T, index=list(self.methods), columns=list(self.levels))

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "human": self.human, "n_trials": self.n_trials,
                "n_resamples": self.n_resamples, "confidence_level": self.confidence_level,
                "rows": self.to_frame().to_dict(orient="records"), "signature": str(self.signature)}


def check_names(param: str, values: Any, choices: Sequence[str], canonical=None) -> tuple[str, ...]:
    """A non-empty tuple of distinct names, each canonicalized and checked."""
    if isinstance(values, str):
        values = (values,)
    values = tuple(canonical(v) if canonical else check_choice(param, v, choices) for v in values)
    if not values or len(set(values)) != len(values):
        raise ParameterError(f"`{param}` must name at least one choice, each once; got {list(values)!r}.")
    return values


def _simulate_coverage_iv(ds, metric, human, levels, coefficients, methods, n_trials, n_resamples, confidence_level,
                          workers, scheduler):
    ds = iv.check_scoreset(ds)
    x = iv.matrices(ds, metric, param="metric")
    z = iv.matrices(ds, human, param="human")
    levels = check_names("levels", levels, None, iv.check_level)
    for level in levels:
        if level not in ("system", "summary"):
            raise ParameterError(f"`levels` must hold 'system' or 'summary'; got {level!r}.")
    coefficients = check_names("coefficients", coefficients, None, iv.check_coefficient)
    methods = check_names("methods", methods, COVERAGE_METHODS)
    if "fisher" in methods:
        for coefficient in coefficients:
            check_choice("coefficients", coefficient, FISHER_COEFFICIENTS)
    n_trials = check_int("n_trials", n_trials, minimum=1)
    n_resamples = iv.check_n_resamples(n_resamples)
    confidence_level = iv.check_confidence_level(confidence_level)
    check_backend(workers, scheduler)
    return ds, x, z, levels, coefficients, methods, n_trials, n_resamples, confidence_level


def simulate_coverage(
    ds: ScoreSet,
    metric: str,
    human: str,
    *,
    levels: Sequence[str] = defaults.SIMULATION_LEVELS,
    coefficients: Sequence[str] = (defaults.COEFFICIENT,),
    methods: Sequence[str] = defaults.COVERAGE_METHODS,
    n_trials: int = defaults.SIMULATION_TRIALS,
    n_resamples: int = defaults.N_RESAMPLES,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    rng: Any = None,
    workers: int = 1,
    scheduler: Any = None,
    progress: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> CoverageResult:
    """Coverage of Fisher and bootstrap intervals on held-out systems and inputs (Deutsch et al. 2021, Table 1).

    Parameters
    ----------
    ds : ScoreSet
    metric, human : str
        The metric and the human score (the paper uses QAEval against the expert / pyramid scores).
    levels : sequence of {'system', 'summary'}
    coefficients : sequence of str
        Any coefficients (Fisher needs Pearson, Spearman or a Kendall variant).
    methods : sequence of {'fisher', 'boot-systems', 'boot-inputs', 'boot-both'}
    n_trials : int
        Random splits (the paper: 1000).
    n_resamples : int
        Bootstrap resamples per interval.
    confidence_level : float
    rng : None, int or numpy.random.Generator
        Drives the splits and every bootstrap; an int seed is recorded in the signature.
    workers : int
        Local processes running the chunks of trials (1: in this process).
    scheduler : None, str or distributed.Client
        Run the chunks on a Dask cluster (an address like ``'tcp://host:8786'`` or a Client; needs
        ``metaeval[dask]``). Every backend gives the same result for the same seed.

    progress : callable, optional
        Called with no argument after each chunk of trials (for progress bars; the number of chunks is
        :func:`metaeval.runtime.tasks.chunk_sizes` of the trials by ``defaults.SIMULATION_CHUNK_TRIALS``).
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    CoverageResult
        ``coverage`` per level x coefficient x method, ``table()`` in the layout of the paper's Table 1.

    Warns
    -----
    DegenerateWarning
        If a half holds fewer than 3 systems (every coverage is then NaN) or some trials are undefined.

    References
    ----------
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. TACL 9, 1132-1146 (Sec. 5.1, Table 1).
    """
    ds, x, z, levels, coefficients, methods, n_trials, n_resamples, confidence_level = _simulate_coverage_iv(
        ds, metric, human, levels, coefficients, methods, n_trials, n_resamples, confidence_level, workers,
        scheduler)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    n, m = x.shape
    h_sys, h_inp = n // 2, m // 2
    shape = (len(levels), len(coefficients), len(methods))
    counts = np.zeros(shape + (len(OUTCOMES),), dtype=np.int64)
    widths = np.zeros(shape)
    if h_sys < MIN_HALF_SYSTEMS or h_inp < 1:
        warnings.warn(f"The coverage simulation needs at least {2 * MIN_HALF_SYSTEMS} systems and 2 inputs (each "
                      f"half must hold {MIN_HALF_SYSTEMS} systems); got {n} systems and {m} inputs: every "
                      "coverage is NaN.", DegenerateWarning, stacklevel=2)
        counts[..., 3] = n_trials
    else:
        sizes = chunk_sizes(n_trials, defaults.SIMULATION_CHUNK_TRIALS)
        setup = (x, z, h_sys, h_inp, levels, coefficients, methods, n_resamples, confidence_level, rtol)
        tasks = list(zip(sizes, chunk_seeds(generator, seed, len(sizes))))
        for chunk_counts, chunk_widths in map_tasks(_coverage_chunk, tasks, workers=workers, scheduler=scheduler,
                                                    shared=setup, progress=progress):
            counts += chunk_counts
            widths += chunk_widths
    undefined = int(counts[..., 3].sum())
    if undefined and h_sys >= MIN_HALF_SYSTEMS:
        warnings.warn(f"{undefined} interval(s) or held-out correlations were undefined and left out of the "
                      "coverage (see n_undefined).", DegenerateWarning, stacklevel=2)
    defined = counts[..., :3].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_width = np.where(defined > 0, widths / np.maximum(defined, 1), np.nan)
    fields = dict(ds.signature_fields())
    fields.update(metric=metric, human=human, levels=levels, coefficients=coefficients, methods=methods,
                  trials=n_trials, resamples=n_resamples, confidence=confidence_level, seed=seed, **iv.tie_field(rtol))
    return CoverageResult(metric=metric, human=human, levels=levels, coefficients=coefficients, methods=methods,
                          counts=counts, mean_width=mean_width, n_trials=n_trials, n_resamples=n_resamples,
                          confidence_level=confidence_level, signature=Signature.of(**fields))


def _coverage_chunk(setup, task):
    """Counts and summed widths of one chunk of trials: ``task`` is (trials, SeedSequence)."""
    x, z, h_sys, h_inp, levels, coefficients, methods, n_resamples, confidence_level, rtol = setup
    n_trials, seed_sequence = task
    shape = (len(levels), len(coefficients), len(methods))
    counts = np.zeros(shape + (len(OUTCOMES),), dtype=np.int64)
    widths = np.zeros(shape)
    with single_blas_thread():
        _run_trials(x, z, h_sys, h_inp, levels, coefficients, methods, n_trials, n_resamples, confidence_level,
                    np.random.default_rng(seed_sequence), counts, widths, rtol)
    return counts, widths


def _run_trials(x, z, h_sys, h_inp, levels, coefficients, methods, n_trials, n_resamples, confidence_level,
                generator, counts, widths, rtol):
    n, m = x.shape
    for _ in range(n_trials):
        rows = generator.permutation(n)
        cols = generator.permutation(m)
        xa, za = x[np.ix_(rows[:h_sys], cols[:h_inp])], z[np.ix_(rows[:h_sys], cols[:h_inp])]
        xd, zd = x[np.ix_(rows[h_sys:], cols[h_inp:])], z[np.ix_(rows[h_sys:], cols[h_inp:])]
        draws = {meth: bootstrap_draws(h_sys, h_inp, method=meth[5:], n_resamples=n_resamples, rng=generator)
                 for meth in methods if meth != "fisher"}
        _one_trial(xa, za, xd, zd, levels, coefficients, methods, draws, confidence_level, counts, widths, rtol)


def _one_trial(xa, za, xd, zd, levels, coefficients, methods, draws, confidence_level, counts, widths, rtol):
    for a, level in enumerate(levels):
        for b, coefficient in enumerate(coefficients):
            kw = dict(level=level, coefficient=coefficient, rtol=rtol)
            r_a = float(level_correlation(xa, za, **kw).statistic)
            r_d = float(level_correlation(xd, zd, **kw).statistic)
            for c, method in enumerate(methods):
                if method == "fisher":
                    low, high = (float(v) for v in fisher_interval(r_a, xa.shape[0], coefficient=coefficient,
                                                                   confidence_level=confidence_level)
                                 ) if np.isfinite(r_a) else (np.nan, np.nan)
                else:
                    samples = bootstrap_samples(xa, za, draws=draws[method], **kw)
                    low, high = percentile_interval(samples, confidence_level)
                if not (np.isfinite(low) and np.isfinite(high) and np.isfinite(r_d) and np.isfinite(r_a)):
                    counts[a, b, c, 3] += 1
                    continue
                outcome = 0 if low <= r_d <= high else (1 if r_d < low else 2)
                counts[a, b, c, outcome] += 1
                widths[a, b, c] += high - low
