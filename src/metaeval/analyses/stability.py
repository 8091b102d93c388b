"""Ranking stability (Deutsch, Dror & Roth 2022, Sec. 3): how much does a system ranking change when it is
computed on another sample of ``m`` inputs? Kendall's tau between the rankings of two random input samples,
for a grid of ``m``, for the human score and every metric; with the full test set, the metrics' rankings
can be compared with the humans' on the judged subset. See :mod:`metaeval.analyses.variance` for the
variance of system scores and interval widths with ``M_jud`` vs ``M_test`` inputs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import check_choice, check_int
from ..runtime.tasks import check_backend, chunk_seeds, chunk_sizes, map_tasks
from ..serialization import ResultMixin
from ..signature import Signature
from ..stats.correlations.coefficients import correlation_rows
from ..stats.corpus import CorpusScores
from ..stats.kernels import system_correlation
from .interface import SectionSpec, focus_corpus
from ..stats.resampling.draws import batch_slices, count_weights, default_batch
from . import _common as common

__all__ = ["RankingStabilityResult", "ranking_stability"]

SAMPLINGS = ("disjoint", "replacement")


@dataclass(frozen=True)
class RankingStabilityResult(ResultMixin):
    """Agreement between the system rankings of two random samples of ``m`` inputs, per scorer and ``m``.

    Attributes
    ----------
    scorers : tuple of str
        The human first, then the metrics.
    sizes : numpy.ndarray
        (G,) the sample sizes ``m``.
    mean, sd : numpy.ndarray
        (S, G) mean and standard deviation (ddof 0, as in the paper's plots) of the correlation over the
        repetitions where it is defined.
    n_defined : numpy.ndarray
        (S, G) repetitions with a defined correlation.
    n_inputs : numpy.ndarray
        (S,) inputs each scorer was sampled from.
    reasons : numpy.ndarray of str
        (S, G) why a point is NaN ('' when defined).
    samples : numpy.ndarray
        (S, G, R) every repetition's correlation (NaN where undefined), for plots; not in ``to_dict``.
    """

    scorers: tuple[str, ...]
    human: str
    sizes: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    n_defined: np.ndarray
    n_inputs: np.ndarray
    reasons: np.ndarray
    coefficient: str
    sampling: str
    n_repetitions: int
    full_test_set: bool
    signature: Signature
    samples: np.ndarray = field(repr=False, compare=False)

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per (scorer, m)."""
        rows = []
        for s, scorer in enumerate(self.scorers):
            for g, m in enumerate(self.sizes):
                rows.append({
                    "scorer": scorer, "human": scorer == self.human, "n_inputs_sampled": int(m),
                    "mean": common.plain(self.mean[s, g]), "sd": common.plain(self.sd[s, g]),
                    "n_defined": int(self.n_defined[s, g]), "n_inputs": int(self.n_inputs[s]),
                    "reason": self.reasons[s, g],
                })
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": "stability", "scorers": list(self.scorers), "human": self.human,
            "coefficient": self.coefficient, "sampling": self.sampling, "n_repetitions": self.n_repetitions,
            "full_test_set": self.full_test_set, "points": common.records(self.to_frame()),
            "signature": str(self.signature),
        }


def _stability_iv(ds, metrics, human, sizes, n_repetitions, sampling, coefficient, full_test_set, workers,
                  scheduler, corpus_statistics):
    checked = common.check_scores(ds, human, metrics, corpus_statistics)
    ds, metrics = checked.ds, checked.metrics
    n_repetitions = check_int("n_repetitions", n_repetitions, minimum=1)
    sampling = check_choice("sampling", sampling, SAMPLINGS)
    coefficient = iv.check_coefficient(coefficient)
    full_test_set = common.check_full_test_set(full_test_set)
    if sizes is not None:
        sizes = common.check_positive_ints("sizes", sizes, minimum=1)
    check_backend(workers, scheduler)
    corpus = checked.corpus
    return ds, metrics, human, sizes, n_repetitions, sampling, coefficient, full_test_set, corpus


def default_sizes(n_inputs: int, sampling: str, points: int = defaults.STABILITY_GRID_POINTS) -> tuple[int, ...]:
    """``points`` evenly spaced sample sizes up to the largest possible one (``M // 2`` when disjoint)."""
    top = n_inputs // 2 if sampling == "disjoint" else n_inputs
    if top < 1:
        return (1,)
    return tuple(int(v) for v in np.unique(np.round(np.linspace(top / points, top, points)).astype(int)) if v >= 1)


def _sample_weights(n_inputs: int, m: int, n_repetitions: int, sampling: str, rng: np.random.Generator):
    """Input multiplicities of the two samples of every repetition: two int arrays (R, M)."""
    if sampling == "disjoint":
        order = np.argsort(rng.random((n_repetitions, n_inputs)), axis=1)
        first = np.zeros((n_repetitions, n_inputs), dtype=np.int32)
        second = np.zeros_like(first)
        rows = np.arange(n_repetitions)[:, None]
        first[rows, order[:, :m]] = 1
        second[rows, order[:, m:2 * m]] = 1
        return first, second
    first = count_weights(rng.integers(0, n_inputs, size=(n_repetitions, m)), n_inputs)
    second = count_weights(rng.integers(0, n_inputs, size=(n_repetitions, m)), n_inputs)
    return first, second


def ranking_stability(
    ds: ScoreSet,
    metrics: Any,
    human: str,
    *,
    sizes: Any = None,
    n_repetitions: int = defaults.STABILITY_REPETITIONS,
    sampling: str = defaults.STABILITY_SAMPLING,
    coefficient: str = defaults.COEFFICIENT,
    full_test_set: bool = False,
    rng: Any = None,
    workers: int = 1,
    scheduler: Any = None,
    progress: Any = None,
    corpus_statistics: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> RankingStabilityResult:
    """Ranking stability: correlation between the system rankings of two random samples of ``m`` inputs.

    Parameters
    ----------
    ds : ScoreSet
    metrics : str or sequence of str
    human : str
        The human scorer (its curve comes first; it defines the judged inputs).
    sizes : sequence of int, optional
        The sample sizes ``m`` (default: 10 evenly spaced values up to ``M // 2``, or ``M`` with
        ``sampling='replacement'``, with ``M`` the largest number of inputs of a scorer).
    n_repetitions : int
        Pairs of samples per ``m`` (default 1000, as in the paper).
    sampling : {'disjoint', 'replacement'}
        'disjoint' (default): the two samples are drawn together without replacement, so they share no
        input and ``2 m <= M``; they are independent samples of the input population and their
        agreement is not inflated by shared inputs. 'replacement': each sample is ``m`` inputs drawn
        with replacement, independently (what the paper's script does; samples may overlap).
    coefficient : str
        Default Kendall tau-b.
    full_test_set : bool
        False: every scorer is sampled from the judged inputs (complete for the human and every metric).
        True: each metric from every input it scored for every system (``M_test``), the human from
        the judged inputs (``M_jud``); sizes beyond a scorer's inputs are NaN with a reason.
    rng : None, int or numpy.random.Generator
    workers : int
        Local processes running the chunks of repetitions (1: in this process).
    scheduler : None, str or distributed.Client
        Run the chunks on a Dask cluster (an address like ``'tcp://host:8786'`` or a Client; needs
        ``metaeval[dask]``). Every backend gives the same result for the same seed.
    progress : callable, optional
        Called with no argument after each chunk of :data:`~metaeval.defaults.STABILITY_CHUNK_REPETITIONS`
        repetitions (for progress bars).
    corpus_statistics : mapping of str to CorpusScores or (statistics, aggregate), optional
        Metrics whose system score is a corpus score (BLEU, chrF, TER: summed sufficient statistics, then
        scored; :class:`metaeval.stats.corpus.CorpusScores`), as in :func:`metaeval.correlate`: a sample of
        ``m`` inputs scores each system by the corpus score of the statistics of those inputs. Their inputs are those where every
        system has statistics (and, in judged-subset mode, every other scorer a score). Recorded as
        ``corpus_level`` in the signature.
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    RankingStabilityResult

    Notes
    -----
    For repetition ``r`` and size ``m``, ``J_1`` and ``J_2`` are the two samples and
    ``CORR(mean_{j in J_1} X[:, j], mean_{j in J_2} X[:, j])`` is the correlation over systems (a corpus
    metric: ``CORR(aggregate(sum_{j in J_1} S[:, j]), aggregate(sum_{j in J_2} S[:, j]))``, a sample with
    replacement counting an input as often as it is drawn). Scorers with the same inputs share the samples. The mean and sd over the repetitions are the paper's
    curve and band (Fig. 3); repetitions where the correlation is undefined (a constant ranking) are
    left out and counted. Vectorized over repetitions: the system scores of all repetitions are one
    matrix product of 0/1 (or count) weights with the score matrix. The repetitions run in chunks of
    :data:`~metaeval.defaults.STABILITY_CHUNK_REPETITIONS`, chunk ``k`` drawing from
    ``np.random.SeedSequence(seed).spawn(n_chunks)[k]``, so every backend gives the same samples.

    References
    ----------
    D. Deutsch, R. Dror and D. Roth. Re-Examining System-Level Correlations of Automatic Summarization
    Evaluation Metrics. NAACL 2022, Sec. 3.
    """
    ds, metrics, human, sizes, n_repetitions, sampling, coefficient, full_test_set, corpus = _stability_iv(
        ds, metrics, human, sizes, n_repetitions, sampling, coefficient, full_test_set, workers, scheduler,
        corpus_statistics)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    scores = common.system_scores(ds, metrics, human, full_test_set=full_test_set, corpus=corpus)
    matrices = [scores.z, *scores.values]
    matrices = _complete_columns(matrices) if full_test_set else matrices
    scorers = (human,) + metrics
    n_inputs = np.array([m.shape[1] for m in matrices])
    if sizes is None:
        sizes = default_sizes(int(n_inputs.max()), sampling)
    sizes_arr = np.array(sizes, dtype=np.int64)
    shape = (len(scorers), sizes_arr.size)
    reasons = np.full(shape, "", dtype=object)
    for g, m in enumerate(sizes_arr):
        for s, values in enumerate(matrices):
            total = values.shape[1]
            if sampling == "disjoint" and 2 * m > total:
                reasons[s, g] = f"two disjoint samples of {m} inputs need {2 * m} inputs; {total} available"
    chunks = chunk_sizes(n_repetitions, defaults.STABILITY_CHUNK_REPETITIONS)
    tasks = list(zip(chunks, chunk_seeds(generator, seed, len(chunks))))
    samples = np.concatenate(map_tasks(_stability_chunk, tasks, workers=workers, scheduler=scheduler,
                                       shared=(matrices, sizes_arr, sampling, coefficient, rtol), progress=progress),
                             axis=-1)
    defined = np.isfinite(samples)
    n_defined = defined.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n_defined > 0, np.where(defined, samples, 0).sum(axis=-1) / np.maximum(n_defined, 1),
                        np.nan)
        sd = np.sqrt(np.where(n_defined > 0, (np.where(defined, samples - mean[..., None], 0) ** 2).sum(axis=-1)
                              / np.maximum(n_defined, 1), np.nan))
    for s, g in zip(*np.nonzero((n_defined == 0) & (reasons == ""))):
        reasons[s, g] = "the ranking correlation is undefined in every repetition (constant system scores)"
    common.warn_reasons("ranking stability points", reasons)
    signature = Signature.of(
        **ds.signature_fields(), analysis="stability", scorers=list(scorers), human=human, level="system",
        coefficient=coefficient, sizes=[int(v) for v in sizes_arr], sampling=sampling,
        repetitions=n_repetitions, full_test_set=full_test_set, **iv.corpus_field(corpus, metrics, ("system",)),
        seed=seed, **iv.tie_field(rtol),
    )
    return RankingStabilityResult(
        scorers=scorers, human=human, sizes=sizes_arr, mean=mean, sd=sd, n_defined=n_defined, n_inputs=n_inputs,
        reasons=reasons, coefficient=coefficient, sampling=sampling, n_repetitions=n_repetitions,
        full_test_set=full_test_set, signature=signature, samples=samples,
    )


def _stability_chunk(setup, task) -> np.ndarray:
    """Correlations (scorers, sizes, repetitions) of one chunk: ``task`` is (repetitions, SeedSequence)."""
    matrices, sizes, sampling, coefficient, rtol = setup
    n_repetitions, seed_sequence = task
    generator = np.random.default_rng(seed_sequence)
    samples = np.full((len(matrices), len(sizes), n_repetitions), np.nan)
    for g, m in enumerate(sizes):
        weights: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for s, values in enumerate(matrices):
            total = values.shape[1]
            if sampling == "disjoint" and 2 * m > total:
                continue
            if total not in weights:
                weights[total] = _sample_weights(total, int(m), n_repetitions, sampling, generator)
            samples[s, g] = _correlations(values, *weights[total], int(m), coefficient, rtol)
    return samples


def _complete_columns(xs: list) -> list:
    """Full-test-set mode: each scorer's inputs scored for every system (a corpus metric: with statistics)."""
    return [x.take(cols=x.present.all(axis=0)) if isinstance(x, CorpusScores) else x[:, np.isfinite(x).all(axis=0)]
            for x in xs]


def _sample_scores(values, weights: np.ndarray, m: int) -> np.ndarray:
    """System scores of samples (R, M) -> (R, N): means of a matrix, corpus scores of the summed statistics."""
    if isinstance(values, CorpusScores):
        return values.system_scores(weights)
    return (weights @ values.T) / m  # a BLAS product (numpy's einsum does not use BLAS here)


def _correlations(values, first: np.ndarray, second: np.ndarray, m: int, coefficient: str, rtol: float) -> np.ndarray:
    """Correlation between the system scores of the two samples of every repetition -> (R,) (``rtol``: the
    relative tie tolerance)."""
    r = first.shape[0]
    out = np.empty(r)
    size = values.statistics.size if isinstance(values, CorpusScores) else values.size
    for sl in batch_slices(r, default_batch(size)):
        a = _sample_scores(values, first[sl].astype(np.float64), m)
        b = _sample_scores(values, second[sl].astype(np.float64), m)
        if coefficient == "kendall-b":
            out[sl] = system_correlation(a, b, coefficient, 0.0, rtol=rtol)
        else:
            out[sl] = correlation_rows(a, b, coefficient, rtol=rtol)
    return out


# -- the command line and the report (declarations read by metaeval.cli and metaeval.report) -------------------

REPORT = SectionSpec(
    "ranking stability",
    lambda ds, human, focus, settings, corpus: ranking_stability(
        ds, list(focus), human, n_repetitions=settings["repetitions"], coefficient=settings["coefficient"],
        rng=settings["seed"], tie_tolerance=settings["tie_tolerance"], **focus_corpus(corpus, focus)),
    min_inputs=4, needs="two disjoint samples of at least 2 inputs each",
)
