"""How well judges agree with humans on pairwise comparisons, and whether one judge beats another.

The unit is a *key*: an input and an unordered pair of systems. A judge's verdict on a key is the most
frequent outcome (low system wins / high system wins / tie) of its comparisons of that key (swapped
presentations and repeats included); when two outcomes are equally frequent the verdict is a tie. The
human verdict is the same vote over every comparison of the human annotators. Agreement is measured on
the keys both judged:

- accuracy with ties: share of keys with the same verdict (three categories);
- accuracy without ties: the same over the keys where neither verdict is a tie;
- Cohen's kappa (1960) over the three categories: ``(p_o - p_e) / (1 - p_e)``, ``p_e`` from the two
  marginal distributions;
- Krippendorff's alpha (nominal; :func:`metaeval.human.krippendorff_alpha`) of the two verdict rows;
- ranking agreement: Kendall's tau-b between the judge's and the humans' Bradley-Terry scores.

Intervals come from one bootstrap over inputs shared by every statistic and judge (a resample's keys are
weighted by the multiplicity of their input; the rankings are refitted on the resampled counts of both).
Judge vs judge: a paired permutation (sign-flip) test of the accuracy difference on the keys both judges and
the humans judged, flipping whole inputs, corrected over all ordered pairs, with significance clusters
(:mod:`metaeval.stats.significance`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults
from .._validation import check_confidence_level, rng_and_seed
from ..errors import DegenerateWarning, ParameterError, check_int
from ..human.agreement import krippendorff_alpha
from ..serialization import ResultMixin, plain
from ..signature import Signature
from ..stats.correlations.coefficients import correlation
from ..stats.significance.clusters import rank_ranges, significance_clusters
from ..stats.significance.corrections import adjust_pvalues
from ..vocabulary import check_correction
from . import bradley_terry as bt
from . import resampling as rs
from .comparisons import TIE, Comparisons


def key_verdicts(c: Comparisons) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, verdict)``: the sorted keys ``input * P + pair`` judged in ``c`` and the vote of each."""
    n = len(c.systems)
    p = n * (n - 1) // 2
    _, _, outcome, _ = c.oriented()
    key = c.input * p + c.pair_index()
    keys, inverse = np.unique(key, return_inverse=True)
    votes = np.zeros((keys.size, 3))
    np.add.at(votes, (inverse, outcome), 1.0)
    top = votes.max(axis=1)
    winners = (votes == top[:, None]).sum(axis=1)
    verdict = np.where(winners > 1, TIE, votes.argmax(axis=1))
    return keys, verdict


def _kappa(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cohen's kappa of verdict rows a, b (K,) under key weights w (B, K)."""
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (w @ (a == b)) / total
        pe = sum((w @ (a == k)) * (w @ (b == k)) for k in range(3)) / total ** 2
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


@dataclass(frozen=True)
class JudgeAgreementResult(ResultMixin):
    """Agreement of each judge with the humans (see the module docstring).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per judge: ``judge``, ``keys`` (judged by both), ``accuracy`` (+ ``_low`` / ``_high``),
        ``accuracy_no_ties`` (+ interval), ``keys_no_ties``, ``kappa`` (+ interval), ``alpha``,
        ``ranking_tau`` (+ interval), ``rank`` (significance cluster by accuracy), ``rank_range``.
    pvalues : ndarray (J, J)
        Corrected p-values of ``H1: accuracy(row) > accuracy(column)``.
    humans : tuple of str
    notes : tuple of str
        What could not be computed and why.
    n_resamples, n_permutations, confidence_level, correction, signature
    """

    table: Any
    pvalues: np.ndarray
    humans: tuple[str, ...]
    notes: tuple[str, ...]
    n_resamples: int
    n_permutations: int
    confidence_level: float
    correction: str
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        return self.table.to_dict("records")

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "judge-agree", "judges": plain(self.table.to_dict("records")), "humans": list(self.humans),
                "pvalues": plain(self.pvalues), "notes": list(self.notes), "n_resamples": self.n_resamples,
                "n_permutations": self.n_permutations, "confidence_level": self.confidence_level,
                "correction": self.correction, "signature": str(self.signature)}


def _agree_iv(comparisons, judges, humans, n_resamples, n_permutations, confidence_level, correction):
    if not isinstance(comparisons, Comparisons):
        raise ParameterError(f"`comparisons` must be a Comparisons; got {type(comparisons).__name__}.")
    if humans is None:
        raise ParameterError("`humans` must name the human annotators (judges of the comparisons); got None.")
    humans = (humans,) if isinstance(humans, str) else tuple(humans)
    comparisons.judged_by(humans, param="humans")
    if judges is None:
        judges = tuple(j for j in comparisons.judges if j not in humans)
    judges = (judges,) if isinstance(judges, str) else tuple(judges)
    if not judges:
        raise ParameterError("`judges` must name at least one judge that is not a human; got none.")
    comparisons.judged_by(judges)
    overlap = set(judges) & set(humans)
    if overlap:
        raise ParameterError(f"`judges` and `humans` must not share a name; got {sorted(overlap)[0]!r} in both.")
    n_resamples = check_int("n_resamples", n_resamples, minimum=0)
    n_permutations = check_int("n_permutations", n_permutations, minimum=1)
    return (judges, humans, n_resamples, n_permutations, check_confidence_level(confidence_level),
            check_correction(correction))


def judge_agreement(comparisons: Comparisons, judges=None, *, humans, ties: str = defaults.TIE_MODEL,
                    n_resamples: int = defaults.N_RESAMPLES, n_permutations: int = defaults.N_RESAMPLES,
                    confidence_level: float = defaults.CONFIDENCE_LEVEL, correction: str = defaults.CORRECTION,
                    alpha: float = defaults.ALPHA, rng: Any = defaults.SEED) -> JudgeAgreementResult:
    """Agreement of ``judges`` with the ``humans`` on the comparisons both judged, with intervals and tests.

    Parameters
    ----------
    comparisons : Comparisons
    judges : str or list of str, optional
        Default: every judge that is not in ``humans``.
    humans : str or list of str
        The human annotators; their comparisons vote the human verdict of each key.
    ties : {'half', 'davidson', 'drop'}
        Tie model of the two Bradley-Terry rankings of the ranking agreement.
    n_resamples : int
        Bootstrap resamples of inputs (0: no intervals).
    n_permutations : int
        Sign flips of the judge-vs-judge tests.
    correction : str
        Over the J (J - 1) ordered judge pairs (:func:`metaeval.adjust_pvalues`).
    alpha : float
        Significance level of the clusters.

    Returns
    -------
    JudgeAgreementResult
    """
    judges, humans, n_resamples, n_permutations, confidence_level, correction = _agree_iv(
        comparisons, judges, humans, n_resamples, n_permutations, confidence_level, correction)
    generator, seed = rng_and_seed(rng)
    n = len(comparisons.systems)
    p = n * (n - 1) // 2
    human_c = comparisons.judged_by(humans, param="humans")
    h_keys, h_verdict = key_verdicts(human_c)
    n_inputs = len(comparisons.inputs)
    active = rs.active_clusters(human_c.input, n_inputs)  # the inputs the humans judged
    weights = (rs.cluster_weights(generator, n_inputs, n_resamples, active) if n_resamples
               else np.empty((0, n_inputs)))
    tail = (1 - confidence_level) / 2
    notes: list[str] = []
    rows, correct = [], {}
    human_rank = _ranking_scores(human_c, weights, ties, notes, "the humans")
    for judge in judges:
        jc = comparisons.judged_by(judge)
        j_keys, j_verdict = key_verdicts(jc)
        common, jpos, hpos = np.intersect1d(j_keys, h_keys, return_indices=True)
        row: dict[str, Any] = {"judge": judge, "keys": int(common.size)}
        a, b = j_verdict[jpos], h_verdict[hpos]
        if common.size == 0:
            notes.append(f"judge {judge!r} shares no comparison (input and system pair) with the humans.")
            rows.append(row)
            continue
        key_input = common // p
        w = np.vstack([np.ones(common.size), weights[:, key_input]]) if n_resamples else np.ones((1, common.size))
        no_ties = (a != TIE) & (b != TIE)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = (w @ (a == b)) / w.sum(axis=1)
            acc_nt = (w @ ((a == b) & no_ties)) / (w @ no_ties)
        kap = _kappa(a, b, w)
        for name, values in (("accuracy", acc), ("accuracy_no_ties", acc_nt), ("kappa", kap)):
            row[name] = float(values[0])
            boot = values[1:][np.isfinite(values[1:])]
            row[f"{name}_low"] = float(np.quantile(boot, tail)) if boot.size else float("nan")
            row[f"{name}_high"] = float(np.quantile(boot, 1 - tail)) if boot.size else float("nan")
        row["keys_no_ties"] = int(no_ties.sum())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateWarning)
            row["alpha"] = krippendorff_alpha(np.vstack([a, b]).astype(float), level="nominal")
        judge_rank = _ranking_scores(jc, weights, ties, notes, f"judge {judge!r}")
        row.update(_ranking_tau(judge_rank, human_rank, tail))
        rows.append(row)
        correct[judge] = (common, a == b)
    pvalues = _judge_tests(judges, correct, p, n_inputs, n_permutations, generator, correction)
    import pandas as pd

    table = pd.DataFrame(rows)
    stat = table["accuracy"].to_numpy(dtype=float) if "accuracy" in table else np.full(len(rows), np.nan)
    ranks = significance_clusters(stat, pvalues, alpha=alpha)
    table["rank"] = ranks
    table["rank_range"] = rank_ranges(ranks)
    sig = Signature.of(analysis="judge-agree", source=comparisons.source, humans=list(humans), ties=ties,
                       resampling="inputs", n_resamples=n_resamples, n_permutations=n_permutations,
                       confidence_level=confidence_level, correction=correction, alpha=alpha, seed=seed)
    return JudgeAgreementResult(table, pvalues, humans, tuple(notes), n_resamples, n_permutations, confidence_level,
                                correction, sig)


def _ranking_scores(c: Comparisons, weights: np.ndarray, ties: str, notes: list[str], who: str):
    """Bradley-Terry scores of ``c`` on the data and on every input resample: (1 + B, n), NaN where undefined."""
    n = len(c.systems)
    i, j = bt.pairs_of(n)
    counts = c.pair_counts()
    out = np.full((1 + weights.shape[0], n), np.nan)
    present = np.zeros(n, dtype=bool)
    used = counts.sum(axis=1) > 0
    present[i[used]] = present[j[used]] = True
    if present.sum() < 3 or bt.diverging(counts, i, j, n, ties) or not present.all():
        notes.append(f"the ranking of {who} is undefined (fewer than 3 systems, a system never compared, or a"
                     " Bradley-Terry estimate that diverges): no ranking agreement.")
        return out
    if ties == "davidson" and counts[:, 2].sum() == 0:
        ties = "half"
    s, nu, _, _ = bt.fit(counts, i, j, n, model=ties)
    out[0] = s
    if weights.shape[0]:
        matrix = rs.cluster_matrix(c, "inputs")
        for start in range(0, weights.shape[0], rs.BATCH):
            w = weights[start:start + rs.BATCH]
            draws = rs.cluster_counts(matrix, w)
            bad = bt.diverging(draws, i, j, n, ties)
            good = np.flatnonzero(~bad)
            if good.size:
                out[1 + start + good] = bt.fit(draws[good], i, j, n, model=ties, start=s,
                                               start_nu=nu if ties == "davidson" else None)[0]
    return out


def _ranking_tau(judge: np.ndarray, human: np.ndarray, tail: float) -> dict[str, float]:
    taus = correlation(judge, human, "kendall-b", axis=-1)
    boot = taus[1:][np.isfinite(taus[1:])]
    return {"ranking_tau": float(taus[0]),
            "ranking_tau_low": float(np.quantile(boot, tail)) if boot.size else float("nan"),
            "ranking_tau_high": float(np.quantile(boot, 1 - tail)) if boot.size else float("nan")}


def _judge_tests(judges, correct, p, n_inputs, n_permutations, generator, correction) -> np.ndarray:
    """Corrected p-values of H1: accuracy(row) > accuracy(column), paired sign-flip test over inputs."""
    k = len(judges)
    pvalues = np.full((k, k), np.nan)
    signs = 2.0 * generator.integers(0, 2, size=(n_permutations, n_inputs)) - 1.0
    for x in range(k):
        for y in range(k):
            if x == y or judges[x] not in correct or judges[y] not in correct:
                continue
            kx, cx = correct[judges[x]]
            ky, cy = correct[judges[y]]
            common, px, py = np.intersect1d(kx, ky, return_indices=True)
            if common.size == 0:
                continue
            diff = np.bincount(common // p, weights=cx[px].astype(float) - cy[py], minlength=n_inputs)
            observed = diff.sum()
            null = signs @ diff
            tol = 100 * np.finfo(float).eps * max(abs(observed), 1.0)
            pvalues[x, y] = (1 + np.sum(null >= observed - tol)) / (1 + n_permutations)
    if np.isfinite(pvalues).any():
        pvalues = adjust_pvalues(pvalues, method=correction)
    return pvalues
