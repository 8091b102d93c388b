"""Is system A better than system B under one scorer? Paired bootstrap and approximate randomization.

For two systems ``a`` and ``b`` scored on the same ``M`` inputs, the statistic is the difference of their
corpus scores ``delta = S(a) - S(b)``, where ``S`` is the mean of per-item scores, or, for a corpus-level
metric such as BLEU, the metric recomputed from the sums of per-item sufficient statistics
(:class:`metaeval.stats.corpus.CorpusScores`). Only the inputs where both systems have a score enter a pair.

``test="bootstrap"`` (paired bootstrap over inputs, Koehn 2004)
    Draw ``k`` resamples of the ``M`` inputs with replacement, as count weights ``c_s`` (``(k, M)``);
    the resampled sums of every system are one matrix product ``C @ T`` and
    ``delta_s = S*_s(a) - S*_s(b)``. The p-value is the shift rule of Berg-Kirkpatrick et al. (2012) used
    throughout metaeval (:func:`metaeval.stats.significance.paired_bootstrap.bootstrap_pvalue`): two-sided
    ``#{|delta_s - delta| >= |delta|} / k``; the interval is the percentile interval of ``delta_s``.
``test="randomization"`` (paired approximate randomization, Riezler & Maxwell 2005)
    Under H0 the two systems' outputs are exchangeable item by item: each of ``k`` shuffles swaps the
    per-item statistics of ``a`` and ``b`` on every input independently with probability 1/2 (masks
    ``m_s``), so ``T'_a = T_a + m_s (T_b - T_a)``; ``p = (c + 1) / (k + 1)`` with ``c`` the shuffles at
    least as extreme as the observed ``delta`` (``|delta_s| >= |delta|`` two-sided, with the relative
    tolerance ``100 eps |delta|`` of :func:`metaeval.stats.significance.permutation.count_extreme`). With
    ``exact=True`` all ``2^M`` assignments are enumerated (``M <= 20``) and ``p = c / 2^M`` (the observed
    assignment is one of them).

The draws (count weights or masks over the inputs) are generated once per call and shared by every
system pair (and, in :func:`metaeval.system_verdicts`, by every scorer).
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError, ScoreSetError
from ..metrics.corpus_statistics import MeanStatistic
from ..serialization import ResultMixin
from ..serialization import plain as _plain
from ..signature import Signature
from ..stats.resampling.bootstrap import percentile_interval
from ..stats.corpus import CorpusScores, system_pair_deltas
from ..stats.significance.corrections import adjust_pvalues
from ..stats.significance.paired_bootstrap import bootstrap_pvalue
from ..stats.significance.permutation import count_extreme, monte_carlo_pvalue
from ..stats.resampling.draws import bootstrap_draws, permutation_draws
from ..vocabulary import SYSTEM_TESTS, check_correction, check_system_test
from .interface import Call, CommandSpec, Option

__all__ = ["SYSTEM_TESTS", "CorpusScores", "SystemComparisonResult", "compare_systems"]

#: Largest number of inputs for which ``exact=True`` enumerates all 2^M assignments.
EXACT_MAX_INPUTS = 20


@dataclass(frozen=True)
class SystemComparisonResult(ResultMixin):
    """Pairwise comparison of systems under one scorer (see the module docstring for the tests).

    Attributes
    ----------
    scorer : str
    systems : tuple of str
    scores : ndarray (N,)
        Each system's corpus score over its own scored inputs.
    pairs : tuple of (str, str)
        The compared pairs ``(a, b)``, ``a`` before ``b`` in ``systems``.
    deltas : ndarray (P,)
        ``S(a) - S(b)`` on the inputs both systems have.
    ci : (ndarray, ndarray)
        Percentile interval of ``delta_s`` at ``confidence_level`` (bootstrap; NaN for randomization).
    pvalues, adjusted_pvalues : ndarray (P,)
        Raw p-values of H1 given by ``alternative`` ("greater": a is better), and after ``correction``
        over the P pairs.
    significant : ndarray of bool (P,)
        ``adjusted_pvalues < 1 - confidence_level``.
    n_used, n_skipped : ndarray of int (P,)
        Inputs both systems have, and inputs left out of the pair.
    samples : ndarray (P, k)
        ``delta_s`` of every resample or shuffle (NaN where undefined); not in ``to_dict``.
    """

    scorer: str
    systems: tuple[str, ...]
    scores: np.ndarray
    pairs: tuple[tuple[str, str], ...]
    deltas: np.ndarray
    ci: tuple[np.ndarray, np.ndarray]
    pvalues: np.ndarray
    adjusted_pvalues: np.ndarray
    significant: np.ndarray
    n_used: np.ndarray
    n_skipped: np.ndarray
    test: str
    alternative: str
    correction: str
    confidence_level: float
    n_resamples: int
    exact: bool
    signature: Signature
    samples: np.ndarray = field(repr=False, compare=False, default=None)

    @property
    def statistic(self) -> np.ndarray:
        """The score differences ``deltas``."""
        return self.deltas

    @property
    def pvalue(self) -> np.ndarray:
        """Alias of ``adjusted_pvalues``."""
        return self.adjusted_pvalues

    def frame_rows(self) -> list[dict[str, Any]]:
        """One row per pair: systems, scores, delta, interval, p-values, significance, inputs used."""
        index = {s: i for i, s in enumerate(self.systems)}
        return [
            {"system_a": a, "system_b": b, "score_a": _plain(self.scores[index[a]]),
             "score_b": _plain(self.scores[index[b]]), "delta": _plain(self.deltas[p]),
             "ci_low": _plain(self.ci[0][p]), "ci_high": _plain(self.ci[1][p]), "pvalue": _plain(self.pvalues[p]),
             "adjusted_pvalue": _plain(self.adjusted_pvalues[p]), "significant": bool(self.significant[p]),
             "n_used": int(self.n_used[p])}
            for p, (a, b) in enumerate(self.pairs)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "scorer": self.scorer, "systems": list(self.systems), "scores": _plain(self.scores),
            "test": self.test, "alternative": self.alternative, "correction": self.correction,
            "confidence_level": self.confidence_level, "n_resamples": self.n_resamples, "exact": self.exact,
            "pairs": self.to_frame().to_dict(orient="records"), "signature": str(self.signature),
        }


# ----------------------------------------------------------------------------------------------------
# the engine shared with analyses.verdicts


def all_pairs(n: int) -> list[tuple[int, int]]:
    """Index pairs ``(a, b)``, ``a < b``, in row-major order."""
    return [(a, b) for a in range(n) for b in range(a + 1, n)]


def draw_weights(test: str, n_inputs: int, n_resamples: int, generator: np.random.Generator,
                 exact: bool = False) -> np.ndarray:
    """Shared draws over the inputs, float ``(k, M)``: bootstrap counts, or swap masks (1 = swap)."""
    if test == "bootstrap":
        draws = bootstrap_draws(1, n_inputs, method="inputs", n_resamples=n_resamples, rng=generator)
        return draws.col_weights().astype(np.float64)
    if exact:
        return ((np.arange(2 ** n_inputs)[:, None] >> np.arange(n_inputs)) & 1).astype(np.float64)
    draws = permutation_draws(1, n_inputs, method="inputs", n_resamples=n_resamples, rng=generator)
    return draws.bits.astype(np.float64)


def pair_pvalue(test: str, samples: np.ndarray, delta: float, alternative: str, exact: bool) -> float:
    """p-value of one pair from its ``delta_s`` (undefined ones dropped); NaN if undefined."""
    null = samples[np.isfinite(samples)]
    if not np.isfinite(delta) or null.size == 0:
        return float("nan")
    if test == "bootstrap":
        return bootstrap_pvalue(null, delta, alternative)
    if exact:
        return count_extreme(null, delta, alternative) / null.size
    return monte_carlo_pvalue(null, delta, alternative)


def check_exact(exact: Any, test: str, n_inputs: int) -> bool:
    if not isinstance(exact, (bool, np.bool_)):
        raise ParameterError(f"`exact` must be True or False; got {exact!r}.")
    if exact and test != "randomization":
        raise ParameterError(f"`exact` must be False unless `test` is 'randomization'; got test {test!r}.")
    if exact and n_inputs > EXACT_MAX_INPUTS:
        raise ParameterError(f"`exact` must be False for more than {EXACT_MAX_INPUTS} inputs (2^M assignments); "
                             f"got {n_inputs} inputs.")
    return bool(exact)


def check_systems(systems: Any, known: Sequence[str]) -> list[int]:
    """Positions of ``systems`` (default: all) in ``known``; at least 2 distinct labels."""
    if systems is None:
        systems = list(known)
    if isinstance(systems, str):
        raise ParameterError(f"`systems` must be a list of system labels; got the string {systems!r}.")
    systems = [str(s) for s in systems]
    index = {s: i for i, s in enumerate(known)}
    for s in systems:
        if s not in index:
            raise ScoreSetError(f"`systems` must hold labels of the scores' systems; got {s!r}.")
    if len(systems) < 2 or len(set(systems)) != len(systems):
        raise ParameterError(f"`systems` must name at least 2 distinct systems; got {systems!r}.")
    return [index[s] for s in systems]


# ----------------------------------------------------------------------------------------------------
# public entry point


def _compare_systems_iv(ds, scorer, systems, test, n_resamples, alternative, confidence_level, correction, exact):
    if isinstance(ds, CorpusScores):
        if scorer is not None and scorer != ds.name:
            raise ParameterError(f"`scorer` must be None or {ds.name!r} for CorpusScores; got {scorer!r}.")
        scorer, stats, aggregate, labels = ds.name, ds.statistics, ds.aggregate, ds.systems
        valid = np.isfinite(stats).all(axis=2)
        fields = {"dataset": "corpus", "systems": len(labels), "inputs": len(ds.inputs),
                  **({"texts": ds.source} if ds.source else {})}
    elif isinstance(ds, ScoreSet):
        if scorer is None:
            raise ParameterError("`scorer` must name a scorer of the ScoreSet; got None.")
        x = iv.matrices(ds, scorer, param="scorer")
        stats, aggregate, labels = MeanStatistic.from_scores(x), MeanStatistic().aggregate, ds.systems
        valid = np.isfinite(x)
        fields = ds.signature_fields()
    else:
        raise ParameterError(f"`ds` must be a ScoreSet or CorpusScores; got {type(ds).__name__}.")
    rows = check_systems(systems, labels)
    test = check_system_test(test)
    n_resamples = iv.check_n_resamples(n_resamples)
    alternative = iv.check_alternative(alternative)
    confidence_level = iv.check_confidence_level(confidence_level)
    correction = check_correction(correction)
    exact = check_exact(exact, test, stats.shape[1])
    return (scorer, stats[rows], valid[rows], aggregate, tuple(labels[r] for r in rows), fields, test, n_resamples,
            alternative, confidence_level, correction, exact)


def compare_systems(
    ds: ScoreSet | CorpusScores,
    scorer: str | None = None,
    *,
    systems: Sequence[str] | None = None,
    test: str = defaults.SYSTEM_TEST,
    n_resamples: int = defaults.N_RESAMPLES,
    alternative: str = defaults.SYSTEM_ALTERNATIVE,
    confidence_level: float = defaults.CONFIDENCE_LEVEL,
    correction: str = defaults.CORRECTION,
    exact: bool = False,
    rng: Any = None,
) -> SystemComparisonResult:
    """Compare two or all systems under one scorer: paired bootstrap or approximate randomization.

    Parameters
    ----------
    ds : ScoreSet or CorpusScores
        Per-item scores (the corpus score is their mean), or per-item sufficient statistics of a
        corpus-level metric such as BLEU (the corpus score is recomputed from their sums).
    scorer : str
        The scorer of ``ds`` (a metric or a human score); None for CorpusScores.
    systems : list of str, optional
        The systems to compare (default: all); every pair ``(a, b)`` with ``a`` listed before ``b``.
    test : {'bootstrap', 'randomization'}
        Paired bootstrap over inputs (Koehn 2004) or paired approximate randomization (Riezler & Maxwell
        2005); see the module docstring for the formulas.
    n_resamples : int
        Bootstrap resamples or random shuffles ``k``.
    alternative : {'two-sided', 'greater', 'less'}
        'greater': system ``a`` scores higher than ``b``.
    confidence_level : float
        Of the bootstrap interval of ``delta``; ``1 - confidence_level`` is the significance level.
    correction : {'holm', 'holm-sidak', 'bonferroni', 'sidak', 'benjamini-hochberg', 'none'}
        Over the P pairs of the call.
    exact : bool
        Randomization only: enumerate all ``2^M`` assignments (``M <= 20``) instead of ``k`` random ones.
    rng : None, int or numpy.random.Generator
        One set of draws for every pair; an int seed is recorded in the signature.

    Returns
    -------
    SystemComparisonResult

    Warns
    -----
    DegenerateWarning
        For a pair without common inputs (its delta and p-value are NaN).

    References
    ----------
    Koehn, P. (2004). Statistical Significance Tests for Machine Translation Evaluation. EMNLP.
    Riezler, S. and Maxwell, J. T. (2005). On Some Pitfalls in Automatic Evaluation and Significance
    Testing for MT. ACL Workshop on Intrinsic and Extrinsic Evaluation Measures.
    Berg-Kirkpatrick, T., Burkett, D. and Klein, D. (2012). An Empirical Investigation of Statistical
    Significance in NLP. EMNLP-CoNLL.

    Examples
    --------
    >>> import metaeval as me
    >>> ds = me.load_dataset("realsumm")
    >>> res = me.compare_systems(ds, "litepyramid.recall", systems=["bart_out", "t5_out_11B"], rng=0)
    >>> res.to_frame()[["system_a", "system_b", "significant"]].to_dict(orient="records")
    [{'system_a': 'bart_out', 'system_b': 't5_out_11B', 'significant': True}]
    """
    (scorer, stats, valid, aggregate, labels, fields, test, n_resamples, alternative, confidence_level, correction,
     exact) = _compare_systems_iv(ds, scorer, systems, test, n_resamples, alternative, confidence_level, correction,
                                  exact)
    generator, seed = iv.rng_and_seed(rng)
    pairs = all_pairs(len(labels))
    weights = draw_weights(test, stats.shape[1], n_resamples, generator, exact)
    deltas, samples, used = system_pair_deltas(stats, valid, aggregate, pairs, test, weights)
    for p in np.flatnonzero(used == 0):
        a, b = pairs[p]
        warnings.warn(f"Systems {labels[a]!r} and {labels[b]!r} have no input in common; their comparison is NaN.",
                      DegenerateWarning, stacklevel=2)
    pvalues = np.array([pair_pvalue(test, samples[p], deltas[p], alternative, exact) for p in range(len(pairs))])
    adjusted = adjust_pvalues(pvalues, method=correction)
    alpha = 1.0 - confidence_level
    significant = np.nan_to_num(adjusted, nan=1.0) < alpha
    low = np.full(len(pairs), np.nan)
    high = np.full(len(pairs), np.nan)
    if test == "bootstrap":
        for p in range(len(pairs)):
            low[p], high[p] = percentile_interval(samples[p], confidence_level)
    scores = np.asarray(aggregate(np.where(valid[..., None], stats, 0.0).sum(axis=1)), dtype=float)
    if systems is not None:  # the systems compared, by name (issue 41: a signature rebuilds its number)
        fields = {**fields, "compared_systems": labels}
    signature = Signature.of(**fields, scorer=scorer, test=test, alternative=alternative, correction=correction,
                             confidence=confidence_level, resamples=2 ** stats.shape[1] if exact else n_resamples,
                             exact=exact, seed=None if exact else seed)
    return SystemComparisonResult(
        scorer=scorer, systems=labels, scores=scores,
        pairs=tuple((labels[a], labels[b]) for a, b in pairs), deltas=deltas, ci=(low, high), pvalues=pvalues,
        adjusted_pvalues=adjusted, significant=significant, n_used=used, n_skipped=stats.shape[1] - used,
        test=test, alternative=alternative, correction=correction, confidence_level=confidence_level,
        n_resamples=int(weights.shape[0]), exact=exact, signature=signature, samples=samples,
    )


# -- the command line and the report (declarations read by metaeval.cli and metaeval.report) -------------------

def _command(call: Call) -> SystemComparisonResult:
    o, corpus = call.options, call.corpus or {}
    scorer = o["scorer"]
    if len(corpus) > 1 or corpus and scorer is not None and scorer not in corpus:
        raise ParameterError(f"`--corpus-metric` must name the one scorer compared (--scorer); got "
                             f"{', '.join(map(repr, corpus))} for scorer {scorer!r}.")
    source = next(iter(corpus.values())) if corpus else call.ds  # CorpusScores: corpus scores of resampled sums
    return compare_systems(source, None if corpus else scorer or call.human, test=o["test"],
                           alternative=o["alternative"], correction=o["correction"],
                           confidence_level=o["confidence_level"], exact=o["exact"], n_resamples=o["n_resamples"],
                           rng=o["seed"])


CLI = CommandSpec(
    _command,
    options=(
        Option("scorer", help="The scorer whose per-item scores are compared (default: the human score).",
               shared=True),
        Option("test", SYSTEM_TESTS, defaults.SYSTEM_TEST, "Test of each pair of systems.", shared=True),
        Option("alternative", default=defaults.SYSTEM_ALTERNATIVE,
               help="'greater': the first system of a pair scores higher.", shared=True),
        Option("correction", help="Multiple-comparison correction over the pairs.", shared=True),
        Option("confidence_level", help="Confidence level of the intervals (significance at 1 - this).",
               shared=True),
        Option("exact", "flag", help="Randomization: enumerate all 2^M assignments (M <= 20)."),
    ),
    inputs=("source", "corpus", "n_resamples", "seed"),
    help="A paired bootstrap (Koehn 2004) or approximate randomization (Riezler & Maxwell 2005) test of every"
         " pair of systems, corrected for multiple comparisons.",
    human_optional=lambda options: options["scorer"] is not None,
)
