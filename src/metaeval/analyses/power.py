"""Power of PERM-BOTH, BOOT-BOTH and Williams' test against a degraded metric (Deutsch et al. 2021, Sec. 5.2).

``X`` is ROUGE-1 of the whole candidates and ``Y_p`` ROUGE-1 of a random ``p`` share of each candidate's
tokens (:class:`metaeval.metrics.degraded.DegradedRouge`), both of one variant (``rouge_variant``: recall,
precision or F1; by default the paper's choice per dataset, :data:`PAPER_ROUGE_VARIANTS`: F1 on SummEval,
recall on REALSumm, its footnote 9). For ``p < 1``, ``Y_p`` is a worse metric by construction, so a test
of ``H1: rho(X, Z) > rho(Y_p, Z)`` should reject. ``X`` is recomputed by the tokenizer of ``Y_p`` unless
``x_metric`` names a scorer of the dataset (the paper's code takes the packaged ROUGE-1 column). For every ``p`` of a grid and
each of ``n_trials`` trials a fresh ``Y_p`` is drawn and each test is run once at each level; the power is
the share of trials with ``pvalue <= alpha`` (the rule of the paper's code). The tests:

* ``perm-both``: :mod:`metaeval.stats.significance.permutation` with one swap bit per cell (Algorithm 2);
* ``boot-both``: :mod:`metaeval.stats.significance.paired_bootstrap` resampling systems and inputs;
* ``williams``: Williams' test on the signed level correlations ``r(X, Z)``, ``r(Y, Z)``, ``r(X, Y)``
  with ``n`` = the number of systems (at the summary level the three are averages of per-input
  correlations; the test's normal theory does not strictly apply there, as the paper notes).

By default ``X`` is computed by the same tokenizer as ``Y_p`` (at ``p = 1`` the two are identical and no test
rejects); with ``x_metric`` (e.g. ``"rouge-1.f1"``) it is that column, and at ``p = 1`` the tests compare two
implementations of the same metric.
Within a trial the permutation masks and the bootstrap indices are shared by both levels. For Pearson the
two resampling tests run on fused kernels (:mod:`metaeval.stats.kernels.pearson.power`) that evaluate X and Y
together; other coefficients use the generic kernels of :mod:`metaeval.stats`.

For each ``p`` the trials run in chunks of :data:`~metaeval.defaults.SIMULATION_CHUNK_TRIALS`; chunk ``k``
of proportion ``c`` draws from ``np.random.SeedSequence(seed).spawn(P * n_chunks)[c * n_chunks + k]``, so
the result for a seed is the same serially, on ``workers`` processes and on a Dask ``scheduler``.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..data.texts import label_field, read_records, text_field, texts_field
from ..errors import DegenerateDataError, DegenerateWarning, InputFileError, ParameterError, check_int
from ..metrics.degraded import ROUGE_VARIANTS, TOKENIZERS, DegradedRouge
from ..runtime.tasks import check_backend, chunk_seeds, chunk_sizes, map_tasks
from ..serialization import ResultMixin
from ..serialization import plain as _plain
from ..signature import Signature
from ..stats._runtime import single_blas_thread
from ..stats.resampling.bootstrap import bootstrap_samples
from ..stats.kernels.pearson.power import boot_pearson, perm_pearson
from ..stats.correlations.levels import level_correlation
from ..stats.significance.paired_bootstrap import bootstrap_pvalue
from ..stats.significance.permutation import monte_carlo_pvalue, permutation_deltas, standardize
from ..stats.resampling.draws import PermutationDraws, bootstrap_draws
from ..stats.significance.williams import williams_test
from .simulations import check_names

__all__ = ["PAPER_ROUGE_VARIANTS", "POWER_TESTS", "PowerResult", "simulate_power", "load_texts",
           "default_rouge_variant"]

POWER_TESTS = ("perm-both", "boot-both", "williams")
#: The ROUGE-1 variant Deutsch, Dror & Roth (2021) degrade per dataset (footnote 9; their code's
#: ``--rouge-variant``): F1 on SummEval (Fabbri et al.), recall on REALSumm (Bhandari et al.) and TAC'08.
PAPER_ROUGE_VARIANTS = {"summeval": "f1", "realsumm": "recall", "realsumm-abs": "recall", "realsumm-ext": "recall"}
#: The variant of any other ScoreSet.
DEFAULT_ROUGE_VARIANT = "recall"
TEXT_FILES = {"summeval": "summeval/texts.jsonl", "realsumm": "realsumm/realsumm_scores.jsonl"}


def default_rouge_variant(name: str | None) -> str:
    """The paper's ROUGE-1 variant for a packaged dataset (:data:`PAPER_ROUGE_VARIANTS`), else ``'recall'``."""
    return PAPER_ROUGE_VARIANTS.get(name or "", DEFAULT_ROUGE_VARIANT)


def load_texts(name: str, *, directory: str | Path, all_references: bool = False):
    """Candidates and references of SummEval or REALSumm from the shared data files (texts are not packaged).

    Returns ``(candidates, references)``: ``candidates[system][input]`` and ``references[input]`` (a list).
    SummEval keeps only the CNN/DailyMail highlight (``references[0]``, the reference of its packaged ROUGE
    scores) unless ``all_references``; REALSumm has one reference. REALSumm's abstractive copy of
    ``bart_out`` is skipped (the packaged mix keeps the extractive one).
    """
    if name not in TEXT_FILES:
        raise ParameterError(f"`name` must be one of {', '.join(repr(k) for k in TEXT_FILES)}; got {name!r}.")
    path = Path(directory) / TEXT_FILES[name]
    candidates: dict[str, dict[str, str]] = {}
    references: dict[str, list[str]] = {}
    for row, record in read_records(path):
        doc = label_field(path, row, record, "doc_id")
        system = label_field(path, row, record, "system_id")
        if name == "summeval":
            refs = texts_field(path, row, record, "references")
            refs = refs if all_references else refs[:1]
        else:
            if system == "bart_out" and record.get("split") == "abs":
                continue
            refs = [text_field(path, row, record, "reference")]
        cells = candidates.setdefault(system, {})
        if doc in cells:
            raise InputFileError(path, f"(system_id, doc_id) must be unique; got {(system, doc)!r} again.", row=row)
        cells[doc] = text_field(path, row, record, "summary")
        references[doc] = refs
    return candidates, references


@dataclass(frozen=True)
class PowerResult(ResultMixin):
    """Power of each test against ROUGE-1 on a ``p`` share of tokens (Deutsch et al. 2021, Figure 3).

    Attributes
    ----------
    rouge_variant : str
        The ROUGE-1 variant of ``X`` and ``Y_p`` ('recall', 'precision' or 'f1').
    x_metric : str or None
        The dataset's scorer used as ``X``; None when ``X`` is recomputed from the texts.
    proportions : ndarray (P,)
    tests, levels : tuple of str
    rejections : ndarray of int (levels, tests, P)
        Trials with ``pvalue <= alpha``.
    n_undefined : ndarray of int (levels, tests, P)
        Trials whose p-value was undefined (left out of the power).
    n_trials, n_resamples : int
    alpha : float
    """

    human: str
    coefficient: str
    proportions: np.ndarray
    tests: tuple[str, ...]
    levels: tuple[str, ...]
    rejections: np.ndarray
    n_undefined: np.ndarray
    n_trials: int
    n_resamples: int
    alpha: float
    tokenizer: str
    signature: Signature
    rouge_variant: str = DEFAULT_ROUGE_VARIANT
    x_metric: str | None = None

    @property
    def power(self) -> np.ndarray:
        """Rejections over defined trials: (levels, tests, proportions)."""
        defined = self.n_trials - self.n_undefined
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(defined > 0, self.rejections / np.maximum(defined, 1), np.nan)

    @property
    def statistic(self) -> np.ndarray:
        return self.power

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per level x test x proportion."""
        power = self.power
        return [
            {"level": level, "test": test, "proportion": float(p), "power": _plain(power[a, b, c]),
             "rejections": int(self.rejections[a, b, c]), "n_undefined": int(self.n_undefined[a, b, c])}
            for a, level in enumerate(self.levels) for b, test in enumerate(self.tests)
            for c, p in enumerate(self.proportions)]

    def table(self, level: str | None = None):
        """Power with tests as rows and proportions as columns (one level), as the paper's Figure 3."""
        import pandas as pd

        level = self.levels[0] if level is None else level
        if level not in self.levels:
            raise ParameterError(f"`level` must be one of {list(self.levels)!r}; got {level!r}.")
        a = self.levels.index(level)
        return pd.DataFrame(self.power[a], index=list(self.tests), columns=[f"{p:g}" for p in self.proportions])

    def to_dict(self) -> dict[str, Any]:
        return {"human": self.human, "coefficient": self.coefficient, "n_trials": self.n_trials,
                "n_resamples": self.n_resamples, "alpha": self.alpha, "tokenizer": self.tokenizer,
                "rouge_variant": self.rouge_variant, "x_metric": self.x_metric, "rows": self.to_frame().to_dict(orient="records"), "signature": str(self.signature)}


def _texts_iv(ds, candidates, references):
    """Flatten the texts in the ScoreSet's (system, input) order: C = N * M candidates."""
    if not isinstance(candidates, Mapping) or not isinstance(references, Mapping):
        raise ParameterError("`candidates` and `references` must be mappings (system -> input -> text, input -> "
                             f"list of texts); got {type(candidates).__name__} and {type(references).__name__}.")
    flat_c, flat_r = [], []
    for system in ds.systems:
        if system not in candidates:
            raise ParameterError(f"`candidates` must hold every system of the ScoreSet; got none for {system!r}.")
        for inp in ds.inputs:
            if inp not in candidates[system] or inp not in references:
                raise ParameterError(f"`candidates` and `references` must cover every input; got none for system "
                                     f"{system!r}, input {inp!r}.")
            flat_c.append(candidates[system][inp])
            flat_r.append(list(references[inp]))
    return flat_c, flat_r


def _simulate_power_iv(ds, human, candidates, references, proportions, tests, levels, coefficient, n_trials,
                       n_resamples, alpha, tokenizer, rouge_variant, x_metric, workers, scheduler):
    ds = iv.check_scoreset(ds)
    z = iv.matrices(ds, human, param="human")
    if not np.isfinite(z).all():
        raise ParameterError(f"`human` must have a score in every cell for the power simulation; got "
                             f"{int(np.isnan(z).sum())} missing cells.")
    rouge_variant = default_rouge_variant(ds.name) if rouge_variant is None else rouge_variant
    if rouge_variant not in ROUGE_VARIANTS:
        raise ParameterError(f"`rouge_variant` must be one of {', '.join(repr(v) for v in ROUGE_VARIANTS)}; "
                             f"got {rouge_variant!r}.")
    x = None
    if x_metric is not None:
        x = iv.matrices(ds, x_metric, param="x_metric")
        if not np.isfinite(x).all():
            raise ParameterError(f"`x_metric` must have a score in every cell for the power simulation; got "
                                 f"{int(np.isnan(x).sum())} missing cells of {x_metric!r}.")
    proportions = np.array(proportions, dtype=float).reshape(-1)
    if proportions.size == 0 or not ((proportions > 0) & (proportions <= 1)).all():
        raise ParameterError(f"`proportions` must be numbers in (0, 1]; got {proportions.tolist()!r}.")
    tests = check_names("tests", tests, POWER_TESTS)
    levels = check_names("levels", levels, None, iv.check_level)
    for level in levels:
        if level not in ("system", "summary"):
            raise ParameterError(f"`levels` must hold 'system' or 'summary'; got {level!r}.")
    coefficient = iv.check_coefficient(coefficient)
    if "williams" in tests and coefficient != "pearson":
        raise ParameterError(f"`tests` must not include 'williams' unless coefficient is 'pearson'; got {coefficient!r}.")
    n_trials = check_int("n_trials", n_trials, minimum=1)
    n_resamples = iv.check_n_resamples(n_resamples)
    alpha = iv.check_alpha(alpha)
    iv.check_level_design(ds, "system")
    if tokenizer not in TOKENIZERS:
        raise ParameterError(f"`tokenizer` must be one of {', '.join(repr(t) for t in TOKENIZERS)}; got {tokenizer!r}.")
    flat_c, flat_r = _texts_iv(ds, candidates, references)
    check_backend(workers, scheduler)
    return (ds, z, x, flat_c, flat_r, proportions, tests, levels, coefficient, n_trials, n_resamples, alpha,
            rouge_variant)


def simulate_power(
    ds: ScoreSet,
    human: str,
    *,
    candidates: Mapping[str, Mapping[str, str]],
    references: Mapping[str, Sequence[str]],
    proportions: Sequence[float] = defaults.POWER_PROPORTIONS,
    tests: Sequence[str] = defaults.POWER_TESTS,
    levels: Sequence[str] = defaults.SIMULATION_LEVELS,
    coefficient: str = defaults.POWER_COEFFICIENT,
    n_trials: int = defaults.SIMULATION_TRIALS,
    n_resamples: int = defaults.N_RESAMPLES,
    alpha: float = defaults.ALPHA,
    tokenizer: str = "rouge155",
    rouge_variant: str | None = None,
    x_metric: str | None = None,
    rng: Any = None,
    workers: int = 1,
    scheduler: Any = None,
    progress: Any = None,
    tie_tolerance: float = defaults.TIE_TOLERANCE,
) -> PowerResult:
    """Power of PERM-BOTH, BOOT-BOTH and Williams' test to find ROUGE-1 better than ROUGE-1 on p% of tokens.

    Parameters
    ----------
    ds : ScoreSet
        Supplies the systems, the inputs and the human score.
    human : str
    candidates : mapping
        ``candidates[system][input]``: the summary text of every cell (see :func:`load_texts`).
    references : mapping
        ``references[input]``: the list of reference texts of every input.
    proportions : sequence of float in (0, 1]
        Shares ``p`` of tokens kept (the paper: 0.05, 0.1, 0.2, ..., 1.0).
    tests : sequence of {'perm-both', 'boot-both', 'williams'}
    levels : sequence of {'system', 'summary'}
    coefficient : str
        Pearson as in the paper (Williams' test needs it); any coefficient for the resampling tests.
    n_trials, n_resamples : int
    alpha : float
        A trial rejects when ``pvalue <= alpha``.
    tokenizer : {'rouge155', 'simple'}
    rouge_variant : {'recall', 'precision', 'f1'}, optional
        The ROUGE-1 variant of ``X`` and ``Y_p``. Default: the paper's choice for the packaged dataset
        (``PAPER_ROUGE_VARIANTS``: ``'f1'`` for ``summeval``, ``'recall'`` for ``realsumm*``; footnote 9 of
        the paper), ``'recall'`` for any other ScoreSet.
    x_metric : str, optional
        A scorer of ``ds`` to use as ``X`` (the paper's code: the packaged ROUGE-1 column of the variant,
        e.g. ``'rouge-1.f1'`` on SummEval). Default: ``X`` is ROUGE-1 of the whole candidates recomputed with
        ``tokenizer``, so that at ``p = 1`` ``Y_p`` equals ``X`` and no test rejects.
    rng : None, int or numpy.random.Generator
    workers : int
        Local processes running the chunks of trials (1: in this process).
    scheduler : None, str or distributed.Client
        Run the chunks on a Dask cluster (an address like ``'tcp://host:8786'`` or a Client; needs
        ``metaeval[dask]``). Every backend gives the same result for the same seed.

    progress : callable, optional
        Called with no argument after each chunk of trials (for progress bars; the number of chunks is
        :func:`metaeval.runtime.tasks.chunk_sizes` of the trials by ``defaults.SIMULATION_CHUNK_TRIALS``, times the proportions).
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    PowerResult

    References
    ----------
    Deutsch, D., Dror, R. and Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics
    using Resampling Methods. TACL 9, 1132-1146 (Sec. 5.2, Figure 3).
    """
    (ds, z, x, flat_c, flat_r, proportions, tests, levels, coefficient, n_trials, n_resamples, alpha,
     rouge_variant) = _simulate_power_iv(ds, human, candidates, references, proportions, tests, levels, coefficient,
                                         n_trials, n_resamples, alpha, tokenizer, rouge_variant, x_metric, workers,
                                         scheduler)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    generator, seed = iv.rng_and_seed(rng)
    n, m = ds.shape
    rouge = DegradedRouge(flat_c, flat_r, tokenizer=tokenizer, variant=rouge_variant)
    if x is None:
        x = rouge.full().reshape(n, m)
    xs = standardize(x, x_metric or "ROUGE-1")
    shape = (len(levels), len(tests), proportions.size)
    rejections = np.zeros(shape, dtype=np.int64)
    undefined = np.zeros(shape, dtype=np.int64)
    sizes = chunk_sizes(n_trials, defaults.SIMULATION_CHUNK_TRIALS)
    seeds = chunk_seeds(generator, seed, proportions.size * len(sizes))
    tasks = [(c, float(p), size, seeds[c * len(sizes) + k])
             for c, p in enumerate(proportions) for k, size in enumerate(sizes)]
    setup = (rouge, x, xs, z, levels, tests, coefficient, n_resamples, alpha, rtol)
    for (c, *_), (chunk_rejections, chunk_undefined) in zip(tasks, map_tasks(
            _power_chunk, tasks, workers=workers, scheduler=scheduler, shared=setup, progress=progress)):
        rejections[:, :, c] += chunk_rejections
        undefined[:, :, c] += chunk_undefined
    if undefined.any():
        warnings.warn(f"{int(undefined.sum())} test(s) had an undefined p-value and were left out of the power "
                      "(see n_undefined).", DegenerateWarning, stacklevel=2)
    fields = dict(ds.signature_fields())
    fields.update(human=human, coefficient=coefficient, tests=tests, levels=levels,
                  proportions=tuple(float(p) for p in proportions), trials=n_trials, resamples=n_resamples,
                  alpha=alpha, tokenizer=tokenizer, rouge_variant=rouge_variant, x=x_metric or "recomputed",
                  alternative="greater", seed=seed, **iv.tie_field(rtol))
    return PowerResult(human=human, coefficient=coefficient, proportions=proportions, tests=tests, levels=levels,
                       rejections=rejections, n_undefined=undefined, n_trials=n_trials, n_resamples=n_resamples,
                       alpha=alpha, tokenizer=tokenizer, signature=Signature.of(**fields),
                       rouge_variant=rouge_variant, x_metric=x_metric)


def _power_chunk(setup, task):
    """Rejections and undefined p-values (levels, tests) of one chunk: ``task`` is (c, p, trials, SeedSequence)."""
    rouge, x, xs, z, levels, tests, coefficient, n_resamples, alpha, rtol = setup
    _, p, n_trials, seed_sequence = task
    n, m = x.shape
    generator = np.random.default_rng(seed_sequence)
    rejections = np.zeros((len(levels), len(tests)), dtype=np.int64)
    undefined = np.zeros_like(rejections)
    with single_blas_thread():
        for y in rouge.scores(p, n_trials, generator).reshape(n_trials, n, m):
            pvalues = _trial(x, xs, y, z, levels, tests, coefficient, n_resamples, generator, rtol)
            defined = np.isfinite(pvalues)
            rejections += defined & (pvalues <= alpha)
            undefined += ~defined
    return rejections, undefined


def _swap_bits(n: int, m: int, k: int, generator: np.random.Generator) -> np.ndarray:
    """Independent fair swap bits, uint8 ``(M, k, N)`` (input-major, as the stats kernels store them).

    Drawn as random bytes unpacked into bits (8 coins per random byte); the same distribution as
    :func:`metaeval.stats.resampling.draws.permutation_draws`, not the same stream.
    """
    size = m * k * n
    raw = np.frombuffer(generator.bytes((size + 7) // 8), dtype=np.uint8)
    return np.unpackbits(raw, count=size).reshape(m, k, n)


def _trial(x, xs, y, z, levels, tests, coefficient, n_resamples, generator, rtol) -> np.ndarray:
    """p-values (levels, tests) of H1: r(X, Z) > r(Y, Z) for one draw of the degraded metric (``rtol``: the relative
    tie tolerance)."""
    n, m = x.shape
    out = np.full((len(levels), len(tests)), np.nan)
    bits = boot = ys = None
    fused = coefficient == "pearson"
    if "perm-both" in tests:
        bits = _swap_bits(n, m, n_resamples, generator)
        if fused:
            bits = bits.astype(np.float64)  # shared by both levels
        try:
            ys = standardize(y, "degraded ROUGE-1")
        except DegenerateDataError:
            ys = None
    if "boot-both" in tests:
        boot = bootstrap_draws(n, m, method="both", n_resamples=n_resamples, rng=generator)
    identical = bool(np.array_equal(x, y))
    for a, level in enumerate(levels):
        kw = dict(level=level, coefficient=coefficient, rtol=rtol)
        rx = float(level_correlation(x, z, **kw).statistic)
        ry = float(level_correlation(y, z, **kw).statistic)
        delta = rx - ry
        for b, test in enumerate(tests):
            if test == "perm-both" and ys is not None:
                d0 = float(level_correlation(xs, z, **kw).statistic) - float(level_correlation(ys, z, **kw).statistic)
                if fused:
                    px, py = perm_pearson(xs, ys, z, bits, level)
                    null = px - py
                else:
                    draws = PermutationDraws("both", n, m, bits.astype(bool).transpose(1, 2, 0))
                    null = permutation_deltas(xs, ys, z, draws=draws, **kw)
                out[a, b] = monte_carlo_pvalue(null[np.isfinite(null)], d0, "greater")
            elif test == "boot-both":
                if fused:
                    sx, sy = boot_pearson(x, y, z, boot, level)
                else:
                    sx = bootstrap_samples(x, z, draws=boot, **kw)
                    sy = bootstrap_samples(y, z, draws=boot, **kw)
                ds_ = sx - sy
                out[a, b] = bootstrap_pvalue(ds_[np.isfinite(ds_)], delta, "greater")
            elif test == "williams" and identical:
                out[a, b] = 1.0  # Williams' t is 0/0 for identical metrics; no evidence of a difference
            elif test == "williams":
                rxy = float(level_correlation(x, y, **kw).statistic)
                if np.isfinite([rx, ry, rxy]).all() and n >= 4:
                    out[a, b] = float(williams_test(rx, ry, rxy, n, alternative="greater").pvalue)
    return out
