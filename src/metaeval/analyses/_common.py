"""Helpers shared by the analyses of this package: validation, system scores and their resampling.

System scores follow :func:`metaeval.stats.correlations.levels.level_correlation` at the system level:

* judged subset (default): metric and human are both averaged over the same inputs, those where every
  chosen scorer has a score for every system (an input missing anywhere is dropped for all);
* full test set (``full_test_set=True``, Deutsch, Dror & Roth 2022): each system's metric score is the
  mean over every input the metric scored for it (``M_test`` inputs), its human score the mean over the
  judged inputs (``M_jud``); under BOOT-INPUTS the two sets of inputs are resampled independently.

A bootstrap resample of the inputs is a vector of multiplicities ``c`` (from
:func:`metaeval.stats.resampling.draws.bootstrap_draws`, shared by every metric of one call) and the resampled
system score of system ``i`` is ``sum_j c_j X_ij / sum_j c_j [X_ij present]``; the original scores use
``c = 1`` and the same formula, so both go through one code path.

Corpus metrics (``corpus_statistics=``, :class:`metaeval.stats.corpus.CorpusScores`: BLEU, chrF, TER): a
system's score is the corpus score of its summed sufficient statistics, ``aggregate(sum_j c_j S_ij)``, in
the data (``c = 1``) and in every resample (the same counts ``c``). Their inputs are those where every
system has statistics: in judged-subset mode these enter the intersection above (with the human and the
other metrics), in full-test-set mode the corpus score covers every such input.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError, ScoreSetError
from ..serialization import plain  # noqa: F401 - the one plain(), used as common.plain by the analyses
from ..stats.correlations.coefficients import tau_b
from ..stats.corpus import CorpusScores
from ..stats.resampling.draws import (
    BootstrapDraws,
    batch_slices,
    bootstrap_draws,
    default_batch,
)
from ..stats.correlations.ties import are_tied

check_metrics = iv.check_metrics


def check_human(ds: ScoreSet, human: Any) -> str:
    if not isinstance(human, str):
        raise ParameterError(f"`human` must be a scorer name; got {human!r}.")
    return ds.require(human, param="human")


def check_scores(ds: Any, human: Any, metrics: Any, corpus_statistics: Any) -> iv.CheckedScores:
    """An analysis's scores checked once (:func:`metaeval._validation.check_scores`, ``human`` a name), its
    unscored systems left out unless it has corpus statistics; a CheckedScores of the caller is trusted."""
    return iv.check_scores(ds, human, metrics, human_name=True).scored(corpus_statistics)


def check_full_test_set(full_test_set: Any) -> bool:
    return iv.check_full_test_set(full_test_set, "system")


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(f"`{name}` must be True or False; got {value!r}.")
    return bool(value)


def check_positive_ints(name: str, values: Any, *, minimum: int, maximum: int | None = None) -> tuple[int, ...]:
    """A non-empty sequence of distinct integers in ``[minimum, maximum]``, in the order given."""
    if isinstance(values, (int, np.integer)) and not isinstance(values, bool):
        values = (values,)
    try:
        items = tuple(values)
    except TypeError:
        items = None
    bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
    message = f"`{name}` must be a non-empty list of distinct integers {bound}; got {values!r}."
    if not items:
        raise ParameterError(message)
    out = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise ParameterError(message)
        if item < minimum or (maximum is not None and item > maximum):
            raise ParameterError(message)
        out.append(int(item))
    if len(set(out)) != len(out):
        raise ParameterError(message)
    return tuple(out)


@dataclass(frozen=True)
class SystemScores:
    """The scores an analysis resamples, for one human and several metrics (see the module docstring).

    ``values`` holds one entry per metric over the same ``M_x`` inputs: the metric's matrix (N, M_x), or,
    for a corpus metric, its :class:`~metaeval.stats.corpus.CorpusScores` restricted to those inputs. ``z``
    has shape (N, M_z); NaN cells are absent scores. In judged-subset mode ``M_x == M_z`` and every cell
    (every statistic) is present.
    """

    values: tuple[Any, ...]
    z: np.ndarray
    full_test_set: bool
    n_inputs_dropped: int

    @property
    def n_systems(self) -> int:
        return int(self.z.shape[0])

    @property
    def n_inputs_metric(self) -> int:
        return int(self.values[0].shape[-1])

    @property
    def n_inputs_human(self) -> int:
        return int(self.z.shape[-1])

    def metric_scores(self, weights: np.ndarray) -> np.ndarray:
        """System scores of every metric under input weights (b, M_x) -> (metrics, b, N).

        A metric given as a matrix gets the weighted mean of its present cells (:func:`weighted_means`);
        a corpus metric the corpus score ``aggregate(sum_j w_bj stats[:, j])`` over the inputs where every
        system has statistics (:meth:`~metaeval.stats.corpus.CorpusScores.system_scores`).
        """
        out = np.empty((len(self.values), weights.shape[0], self.n_systems))
        means = [a for a, v in enumerate(self.values) if not isinstance(v, CorpusScores)]
        if means:
            out[means] = weighted_means(np.stack([self.values[a] for a in means]), weights)
        for a, v in enumerate(self.values):
            if isinstance(v, CorpusScores):
                keep = v.present.all(axis=0)
                out[a] = v.take(cols=keep).system_scores(weights[:, keep])
        return out

    def point(self) -> tuple[np.ndarray, np.ndarray]:
        """System scores on the original data: ``(metrics, N)`` and ``(N,)``."""
        ones_x = np.ones((1, self.n_inputs_metric))
        ones_z = np.ones((1, self.n_inputs_human))
        return self.metric_scores(ones_x)[:, 0], weighted_means(self.z[None], ones_z)[0, 0]

    def draws(self, n_resamples: int, rng: np.random.Generator) -> BootstrapDraws:
        """BOOT-INPUTS draws shared by every metric (humans resampled independently in full-test-set mode)."""
        return bootstrap_draws(self.n_systems, self.n_inputs_metric, method="inputs", n_resamples=n_resamples,
                               rng=rng, n_inputs_human=self.n_inputs_human if self.full_test_set else None)

    def resampled(self, draws: BootstrapDraws):
        """Yield ``(slice, x_scores (metrics, b, N), z_means (b, N))`` batch by batch.

        A corpus metric's resampled score re-sums its statistics with the input counts of the resample.
        """
        width = max(v.statistics.shape[2] if isinstance(v, CorpusScores) else 1 for v in self.values)
        cells = len(self.values) * width * self.n_systems * max(self.n_inputs_metric, self.n_inputs_human)
        batch = default_batch(cells)
        for sl in batch_slices(draws.n_resamples, batch):
            cx = draws.col_weights(sl).astype(np.float64)
            cz = cx if not self.full_test_set else draws.col_weights(sl, human=True).astype(np.float64)
            yield sl, self.metric_scores(cx), weighted_means(self.z[None], cz)[0]


def weighted_means(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_j w_bj v_aij / sum_j w_bj [v_aij present]`` for values (A, N, M) and weights (b, M) -> (A, b, N).

    NaN where a system has no present cell with positive weight.
    """
    present = np.isfinite(values)
    filled = np.where(present, values, 0.0)
    num = np.matmul(filled, weights.T).transpose(0, 2, 1)  # BLAS products (numpy's einsum does not use BLAS)
    if present.all():
        den = weights.sum(axis=1)[None, :, None]
    else:
        den = np.matmul(present.astype(np.float64), weights.T).transpose(0, 2, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def system_scores(ds: ScoreSet, metrics: Iterable[str], human: str, *, full_test_set: bool,
                  corpus: Mapping[str, CorpusScores] | None = None) -> SystemScores:
    """The scores behind the system scores of ``metrics`` and ``human`` (module docstring).

    ``corpus`` (validated by :func:`metaeval._validation.check_corpus_statistics`) maps metrics to their
    corpus statistics; those metrics get corpus system scores, and their inputs are those where every
    system has statistics (their cell scores are not used).
    """
    metrics = tuple(metrics)
    corpus = corpus or {}
    z = ds.matrix(human)
    values = [corpus[m] if m in corpus else ds.matrix(m) for m in metrics]
    # the inputs each metric can use: every input it scored (a corpus metric: where every system has statistics)
    complete = [v.present.all(axis=0) if isinstance(v, CorpusScores) else np.isfinite(v).all(axis=0)
                for v in values]
    if full_test_set:
        scored = [c if isinstance(v, CorpusScores) else np.isfinite(v).any(axis=0) for c, v in zip(complete, values)]
        x_cols = np.logical_or.reduce(scored)
        z_cols = np.isfinite(z).any(axis=0)
        if not x_cols.any() or not z_cols.any():
            raise ScoreSetError("full-test-set mode needs at least one scored input for the metrics and the human; "
                                "got none.")
        cells = [(m, v[:, x_cols]) for m, v in zip(metrics, values) if not isinstance(v, CorpusScores)]
        for name, matrix in cells + [(human, z[:, z_cols])]:
            empty = ~np.isfinite(matrix).any(axis=1)
            if empty.any():
                system = ds.systems[int(np.flatnonzero(empty)[0])]
                raise ScoreSetError(f"every system needs a score of {name!r}; system {system!r} has none.")
        return SystemScores(_columns(values, x_cols), np.ascontiguousarray(z[:, z_cols]), True, 0)
    keep = np.isfinite(z).all(axis=0) & np.logical_and.reduce(complete)
    judged = np.isfinite(z).any(axis=0)
    if not keep.any():
        raise ScoreSetError("the judged subset must contain an input scored by the human and every metric for "
                            "every system; got none.")
    dropped = int((judged & ~keep).sum())
    if dropped:
        warnings.warn(f"{dropped} judged inputs lack a score for some system or metric and are left out for all "
                      "(judged-subset mode).", DegenerateWarning, stacklevel=3)
    return SystemScores(_columns(values, keep), np.ascontiguousarray(z[:, keep]), False, dropped)


def _columns(values, cols) -> tuple[Any, ...]:
    return tuple(v.take(cols=cols) if isinstance(v, CorpusScores) else np.ascontiguousarray(v[:, cols])
                 for v in values)


def pair_index(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n (n - 1) / 2`` system pairs ``(i, j)``, ``i < j``, in row-major order."""
    return np.triu_indices(n, 1)


def pair_signs(values: np.ndarray, i: np.ndarray, j: np.ndarray, rtol: float = defaults.TIE_TOLERANCE) -> np.ndarray:
    """``sgn(v_i - v_j)`` per pair along the last axis (int8), 0 for ties under the tie rule of :mod:`metaeval.stats.correlations.ties`.

    The tie rule is that of :mod:`metaeval.stats.correlations.coefficients`, so Kendall tau-b over all pairs equals
    :func:`metaeval.stats.correlations.coefficients.correlation` with ``'kendall-b'`` (``rtol``: the relative tie
    tolerance).
    """
    a = values[..., i]
    b = values[..., j]
    d = a - b
    out = np.where(are_tied(a, b, rtol=rtol), 0, np.sign(d))
    return np.where(np.isnan(d), 0, out).astype(np.int8)


def pair_gaps(values: np.ndarray, i: np.ndarray, j: np.ndarray, rtol: float = defaults.TIE_TOLERANCE) -> np.ndarray:
    """``|v_i - v_j|`` per pair; exactly 0 for pairs tied under the tie rule of :func:`pair_signs`."""
    gaps = np.abs(values[..., i] - values[..., j])
    return np.where((pair_signs(values, i, j, rtol) == 0) & ~np.isnan(gaps), 0.0, gaps)


def tau_b_subsets(sx: np.ndarray, sz: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, ...]:
    """Kendall tau-b restricted to subsets of pairs.

    ``sx``, ``sz``: pair signs (..., P); ``masks``: bool (..., C, P), one subset per cell ``c``. For the
    ``n_0`` pairs of a subset, ``S = sum sx sz`` (concordant minus discordant), ``T_x`` / ``T_z`` the pairs
    tied in x / z (both included), ``tau_b = S / sqrt((n_0 - T_x) (n_0 - T_z))``; NaN when a factor is 0.
    Returns ``(tau, n_0, n_0 - T_x, n_0 - T_z)``, each of shape (..., C).
    """
    m = masks.astype(np.float64)
    prod = (sx.astype(np.float64) * sz)[..., None, :]
    num = (m * prod).sum(axis=-1)
    n0 = m.sum(axis=-1)
    untied_x = (m * (sx != 0)[..., None, :]).sum(axis=-1)
    untied_z = (m * (sz != 0)[..., None, :]).sum(axis=-1)
    return tau_b(num, untied_x, untied_z), n0, untied_x, untied_z


def percentile_bounds(samples: np.ndarray, confidence_level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Percentile interval along the first axis over the finite samples; also the count of dropped ones.

    ``samples`` (k, ...) -> ``low``, ``high`` of shape ``samples.shape[1:]`` (NaN where no sample is finite)
    and ``dropped`` (int array), with the linear interpolation of
    :func:`metaeval.stats.resampling.bootstrap.percentile_interval`.
    """
    k = samples.shape[0]
    flat = samples.reshape(k, -1)
    ok = np.isfinite(flat)
    a = 1.0 - confidence_level
    low = np.full(flat.shape[1], np.nan)
    high = np.full(flat.shape[1], np.nan)
    for c in range(flat.shape[1]):
        s = flat[ok[:, c], c]
        if s.size:
            low[c], high[c] = np.percentile(s, [100 * a / 2, 100 * (1 - a / 2)])
    shape = samples.shape[1:]
    return low.reshape(shape), high.reshape(shape), (k - ok.sum(axis=0)).reshape(shape)


# The one JSON-ready conversion (NaN and +-inf -> None, numpy -> Python) is serialization.plain, imported above.


def records(frame) -> list[dict[str, Any]]:
    """The rows of a DataFrame as JSON-ready dicts (NaN -> None)."""
    return [plain(row) for row in frame.to_dict(orient="records")]


def warn_reasons(what: str, reasons: np.ndarray) -> None:
    """One DegenerateWarning summarizing the distinct non-empty ``reasons`` (NaN results) of an analysis."""
    flat = [r for r in np.asarray(reasons, dtype=object).ravel() if r]
    if not flat:
        return
    counts: dict[str, int] = {}
    for r in flat:
        counts[r] = counts.get(r, 0) + 1
    listed = "; ".join(f"{n} x {r}" if n > 1 else r for r, n in counts.items())
    warnings.warn(f"{what}: {len(flat)} undefined (NaN): {listed}.", DegenerateWarning, stacklevel=3)
