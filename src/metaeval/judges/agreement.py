"""How well judges agree with humans on pairwise comparisons, and whether one judge beats another.

The unit is a *key*: an input and an unordered pair of systems. A judge's verdict on a key is the most
frequent outcome (low system wins / high system wins / tie) of its comparisons of that key (swapped
presentations and repeats included); when two outcomes are equally frequent the verdict is a tie. The
human verdict is the same vote over every comparison of the human annotators. Agreement is measured on
the keys both judged:

- accuracy with ties: share of keys with the same verdict (three categories);
- accuracy without ties: the same over the keys where neither verdict is a tie;
- Cohen's kappa (1960) over the three categories: ``(p_o - p_e) / (1 - p_e)``, ``p_e`` from the two
  marginal distributions, with every key counted in both orientations (see below);
- Krippendorff's alpha (nominal, :func:`nominal_alpha`: :func:`metaeval.human.krippendorff_alpha` with each
  unit weighted by its majority row's weight) of the two verdict rows, every key again counted in both
  orientations;
- vote-level agreement (Zheng et al. 2023, MT-Bench, Table 5 and App. D.3; FastChat's
  ``compute_agreement.py``): the probability that the judge and a randomly chosen human vote agree on a
  randomly chosen key, over every (judge verdict, human vote) pair of a key; ``S1`` with ties (two ties
  agree), ``S2`` without (a pair where either side is a tie is left out). Beside it, the same statistic
  between two human votes of a key (every unordered pair of the human comparisons of that key), the
  humans' own agreement;
- ranking agreement: Kendall's tau-b between the judge's and the humans' Bradley-Terry scores.

The humans' majority verdict of a key needs a rule for an even split of their votes (no single most frequent
outcome, e.g. one vote each way): ``even_split='half'`` (the default; MT-Bench, Zheng et al. 2023, counts
agreeing with one side of an even split as half an agreement) counts the key once per outcome at the top, each
with weight 1/k, so a judge naming one of the two sides of a 1-1 split scores 1/2; ``even_split='tie'`` makes
the majority a tie. Every majority statistic (accuracy with and without ties, kappa, alpha, the judge-vs-judge
tests) uses those weighted rows; a judge's own verdict on a key stays its vote (a tie when undecided, FastChat's
combination of the two presentation orders). The vote-level statistics need no such rule: every vote counts.

A pairwise verdict has no natural orientation: "the first system of the key wins" depends on which
system is called first (metaeval's codes follow the order of first appearance in the file). Kappa's and
alpha's chance terms use the marginal shares of the categories, so with one orientation they would change
with the order of the rows. Counting each key twice, once as (x, y) and once as (y, x) with the verdict
mirrored (x wins <-> y wins, a tie stays a tie), makes the two win categories equally frequent and both
statistics invariant to any row order and to swapping the two system columns; observed agreement is
unchanged. Kappa is then ``cohen_kappa_score`` of the doubled verdict rows (scikit-learn) and alpha
``krippendorff.alpha`` of the doubled rows.

Intervals come from one bootstrap over inputs shared by every statistic and judge (a resample's keys are
weighted by the multiplicity of their input; the rankings are refitted on the resampled counts of both).
Judge vs judge: a paired permutation (sign-flip) test of the accuracy difference on the keys both judges and
the humans judged, flipping whole inputs, corrected over all ordered pairs, with significance clusters
(:mod:`metaeval.stats.significance`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import defaults
from .._validation import check_confidence_level, rng_and_seed
from ..runtime.progress import ProgressCallback
from ..errors import ParameterError, check_choice, check_int
from ..serialization import ResultMixin, plain
from ..signature import Signature
from ..stats.correlations.coefficients import correlation
from ..stats.resampling.draws import batch_slices
from ..stats.significance.clusters import rank_ranges, significance_clusters
from ..stats.significance.corrections import adjust_pvalues
from ..vocabulary import EVEN_SPLITS, check_correction
from ..stats.frameworks import bradley_terry as bt
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


def majority_rows(votes: np.ndarray, even_split: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The humans' majority verdict of each key as weighted rows ``(key, verdict, weight)``.

    ``votes`` (K, 3) counts each outcome's votes per key. A key with one most frequent outcome is one row of
    weight 1. An even split (k > 1 outcomes share the top count) is, with ``even_split='tie'``, one row whose
    verdict is a tie; with ``'half'``, k rows, one per outcome at the top, each of weight 1/k. The weights of
    a key sum to 1; rows are sorted by key.
    """
    votes = np.asarray(votes)
    at_top = votes == votes.max(axis=1, keepdims=True)
    k = at_top.sum(axis=1)
    if even_split == "tie":
        return np.arange(votes.shape[0]), np.where(k > 1, TIE, votes.argmax(axis=1)), np.ones(votes.shape[0])
    key, verdict = np.nonzero(at_top)
    return key, verdict, 1.0 / k[key]


def nominal_alpha(a: np.ndarray, b: np.ndarray, weight: np.ndarray) -> float:
    """Krippendorff's alpha (nominal) of two coders' verdict rows ``a``, ``b`` whose units carry ``weight``.

    A unit of weight w adds w to the coincidences of its pair of values; with integer weights this is alpha of
    the units repeated w times (``krippendorff.alpha``), with unit weights alpha itself. ``n`` is the weighted
    number of pairable values.
    """
    a, b, weight = (np.asarray(x) for x in (a, b, weight))
    coincidence = np.zeros((3, 3))
    np.add.at(coincidence, (a, b), weight)
    np.add.at(coincidence, (b, a), weight)
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    expected = n_c.sum() ** 2 - np.sum(n_c ** 2)  # sum over c != k of n_c n_k
    if n <= 1 or expected <= 0:
        return float("nan")
    observed = n - np.trace(coincidence)
    return float(1.0 - (n - 1) * observed / expected)


def mirrored(verdict: np.ndarray) -> np.ndarray:
    """The verdicts of the keys read the other way round: low wins <-> high wins, a tie stays a tie."""
    v = np.asarray(verdict)
    return np.where(v == TIE, TIE, 1 - v)


def _kappa(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Cohen's kappa of verdict rows a, b (K,) under key weights w (B, K), every key counted in both
    orientations: the two win categories share the decisive mass equally in each marginal."""
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (w @ (a == b)) / total
        pe = (0.5 * (w @ (a != TIE)) * (w @ (b != TIE)) + (w @ (a == TIE)) * (w @ (b == TIE))) / total ** 2
        return np.where(pe < 1, (po - pe) / (1 - pe), np.nan)


def key_votes(c: Comparisons) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, votes)``: the sorted keys judged in ``c`` and the number of comparisons (votes) of each
    oriented outcome (low wins, high wins, tie) per key, shape (K, 3)."""
    n = len(c.systems)
    p = n * (n - 1) // 2
    _, _, outcome, _ = c.oriented()
    keys, inverse = np.unique(c.input * p + c.pair_index(), return_inverse=True)
    votes = np.zeros((keys.size, 3))
    np.add.at(votes, (inverse, outcome), 1.0)
    return keys, votes


def vote_agreement_counts(verdict: np.ndarray, votes: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per key: agreeing and all (judge verdict, human vote) pairs with ties (S1), and without (S2).

    ``verdict`` (K,) the judge's verdict of each key, ``votes`` (K, 3) the human votes of each outcome.
    """
    rows = np.arange(verdict.size)
    agree = votes[rows, verdict]
    total = votes.sum(axis=1)
    decisive = verdict != TIE
    return agree, total, np.where(decisive, agree, 0.0), np.where(decisive, votes[:, 0] + votes[:, 1], 0.0)


def human_pair_counts(votes: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per key: agreeing and all unordered pairs of human votes with ties (S1), and without (S2)."""
    pairs = lambda k: k * (k - 1) / 2  # noqa: E731
    same = pairs(votes).sum(axis=1)
    decisive = votes[:, 0] + votes[:, 1]
    return same, pairs(votes.sum(axis=1)), pairs(votes[:, 0]) + pairs(votes[:, 1]), pairs(decisive)


@dataclass(frozen=True)
class JudgeAgreementResult(ResultMixin):
    """Agreement of each judge with the humans (see the module docstring).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per judge: ``judge``, ``keys`` (judged by both), ``accuracy`` (+ ``_low`` / ``_high``),
        ``accuracy_no_ties`` (+ interval), ``keys_no_ties`` (keys with a majority row where neither side ties;
        under ``even_split='half'`` a 1-1 split is such a key, each side at weight 1/2), ``kappa`` (+ interval),
        ``alpha``,
        ``vote_agreement`` / ``vote_agreement_no_ties`` (+ intervals; MT-Bench's S1 / S2) with ``vote_pairs`` /
        ``vote_pairs_no_ties``, ``ranking_tau`` (+ interval), ``rank`` (significance cluster by accuracy),
        ``rank_range``.
    pvalues : ndarray (J, J)
        Corrected p-values of ``H1: accuracy(row) > accuracy(column)``.
    humans : tuple of str
    human_agreement : dict
        The humans' own vote-level agreement: ``vote_agreement``, ``vote_agreement_no_ties`` (+ intervals),
        ``vote_pairs``, ``vote_pairs_no_ties`` over every pair of human votes of a key.
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
    human_agreement: dict[str, Any] = field(default_factory=dict)

    def frame_rows(self) -> list[dict[str, Any]]:
        return self.table.to_dict("records")

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "judge-agree", "judges": plain(self.table.to_dict("records")), "humans": list(self.humans),
                "human_agreement": plain(self.human_agreement), "pvalues": plain(self.pvalues),
                "notes": list(self.notes), "n_resamples": self.n_resamples,
                "n_permutations": self.n_permutations, "confidence_level": self.confidence_level,
                "correction": self.correction, "signature": str(self.signature)}


def _agree_iv(comparisons, judges, humans, n_resamples, n_permutations, confidence_level, correction, even_split):
    if not isinstance(comparisons, Comparisons):
        raise ParameterError(f"`comparisons` must be a Comparisons; got {type(comparisons).__name__}.")
    if humans is None:
        raise ParameterError("`humans` must name the human annotators (judges of the comparisons); got None.")
    humans = comparisons.judge_names(humans, param="humans")
    if judges is None:
        judges = tuple(j for j in comparisons.judges if j not in humans)
        if not judges:
            raise ParameterError("`judges` must name at least one judge that is not a human; got none.")
    judges = comparisons.judge_names(judges)
    overlap = set(judges) & set(humans)
    if overlap:
        raise ParameterError(f"`judges` and `humans` must not share a name; got {sorted(overlap)[0]!r} in both.")
    n_resamples = check_int("n_resamples", n_resamples, minimum=0)
    n_permutations = check_int("n_permutations", n_permutations, minimum=1)
    return (judges, humans, n_resamples, n_permutations, check_confidence_level(confidence_level),
            check_correction(correction), check_choice("even_split", even_split, EVEN_SPLITS))


def judge_agreement(comparisons: Comparisons, judges=None, *, humans, ties: str = defaults.TIE_MODEL,
                    n_resamples: int = defaults.N_RESAMPLES, n_permutations: int = defaults.N_RESAMPLES,
                    confidence_level: float = defaults.CONFIDENCE_LEVEL, correction: str = defaults.CORRECTION,
                    alpha: float = defaults.ALPHA, even_split: str = defaults.EVEN_SPLIT, rng: Any = None,
                    progress: ProgressCallback | None = None) -> JudgeAgreementResult:
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
    even_split : {'half', 'tie'}
        The humans' majority verdict of a key whose votes split evenly (no single most frequent outcome):
        ``'half'`` (default, MT-Bench's rule) counts the key once per outcome at the top with weight 1/k (a judge
        naming one side of a 1-1 split agrees by half), ``'tie'`` makes it a tie. Used by every majority
        statistic (``accuracy``, ``accuracy_no_ties``, ``kappa``, ``alpha``, the judge-vs-judge tests).
    rng : int, Generator or None
        None (default): fresh entropy, the seed drawn recorded in the signature.
    progress : callable, optional
        Called with no argument after the humans' ranking and after each judge (``1 + len(judges)`` calls;
        :mod:`metaeval.runtime.progress`).

    Returns
    -------
    JudgeAgreementResult
        ``table`` holds per judge the majority statistics (``accuracy``, ``accuracy_no_ties``, ``kappa``,
        ``alpha``: against the humans' majority verdict of each key, an even split by ``even_split``) and the
        vote-level ones
        (``vote_agreement``, ``vote_agreement_no_ties`` over every (judge verdict, human vote) pair, with
        ``vote_pairs``, ``vote_pairs_no_ties``); ``human_agreement`` the same vote-level statistics between
        two human votes.

    References
    ----------
    Cohen (1960); Krippendorff (2011); Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and
    Chatbot Arena. NeurIPS Datasets and Benchmarks (Table 5, App. D.3: agreement with and without ties).
    """
    judges, humans, n_resamples, n_permutations, confidence_level, correction, even_split = _agree_iv(
        comparisons, judges, humans, n_resamples, n_permutations, confidence_level, correction, even_split)
    rs.check_memory(max(n_resamples, n_permutations), len(comparisons.systems), len(comparisons.inputs), pairs=False)
    generator, seed = rng_and_seed(rng)
    n = len(comparisons.systems)
    p = n * (n - 1) // 2
    human_c = comparisons.judged_by(humans, param="humans")
    h_keys, h_votes = key_votes(human_c)
    n_inputs = len(comparisons.inputs)
    active = rs.active_clusters(human_c.input, n_inputs)  # the inputs the humans judged
    weights = (rs.cluster_weights(generator, n_inputs, n_resamples, active) if n_resamples
               else np.empty((0, n_inputs)))
    tail = (1 - confidence_level) / 2
    notes: list[str] = []
    if n_resamples == 1:
        notes.append("one bootstrap resample gives no interval: the intervals are undefined (n_resamples >= 2).")
    rows, correct = [], {}
    human_rank = _ranking_scores(human_c, weights, ties, notes, "the humans")
    if progress is not None:
        progress()
    w_humans = np.vstack([np.ones(h_keys.size), weights[:, h_keys // p]])
    human_row: dict[str, Any] = {}
    for name, (agree, total) in (("vote_agreement", human_pair_counts(h_votes)[:2]),
                                 ("vote_agreement_no_ties", human_pair_counts(h_votes)[2:])):
        _with_interval(human_row, name, _share(w_humans, agree, total), tail)
    human_row["vote_pairs"] = int(human_pair_counts(h_votes)[1].sum())
    human_row["vote_pairs_no_ties"] = int(human_pair_counts(h_votes)[3].sum())
    for judge in judges:
        jc = comparisons.judged_by(judge)
        j_keys, j_verdict = key_verdicts(jc)
        common, jpos, hpos = np.intersect1d(j_keys, h_keys, return_indices=True)
        row: dict[str, Any] = {"judge": judge, "keys": int(common.size)}
        if common.size == 0:
            notes.append(f"judge {judge!r} shares no comparison (input and system pair) with the humans.")
            rows.append(row)
            if progress is not None:
                progress()
            continue
        key_input = common // p
        w = np.vstack([np.ones(common.size), weights[:, key_input]])
        # the humans' majority of each key as weighted rows (an even split: one row per side, or a tie)
        sub, b, share = majority_rows(h_votes[hpos], even_split)
        a = j_verdict[jpos][sub]
        ws = w[:, sub] * share
        agree = a == b
        no_ties = (a != TIE) & (b != TIE)
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = (ws @ agree) / ws.sum(axis=1)
            acc_nt = (ws @ (agree & no_ties)) / (ws @ no_ties)
        kap = _kappa(a, b, ws)
        for name, values in (("accuracy", acc), ("accuracy_no_ties", acc_nt), ("kappa", kap)):
            _with_interval(row, name, values, tail)
        row["keys_no_ties"] = int(np.unique(sub[no_ties]).size)
        row["alpha"] = nominal_alpha(np.concatenate([a, mirrored(a)]), np.concatenate([b, mirrored(b)]),
                                     np.concatenate([share, share]))
        s1_agree, s1_total, s2_agree, s2_total = vote_agreement_counts(j_verdict[jpos], h_votes[hpos])
        _with_interval(row, "vote_agreement", _share(w, s1_agree, s1_total), tail)
        _with_interval(row, "vote_agreement_no_ties", _share(w, s2_agree, s2_total), tail)
        row["vote_pairs"], row["vote_pairs_no_ties"] = int(s1_total.sum()), int(s2_total.sum())
        judge_rank = _ranking_scores(jc, weights, ties, notes, f"judge {judge!r}")
        row.update(_ranking_tau(judge_rank, human_rank, tail))
        rows.append(row)
        correct[judge] = (common, np.bincount(sub, weights=share * agree, minlength=common.size))
        if progress is not None:
            progress()
    pvalues = _judge_tests(judges, correct, p, n_inputs, n_permutations, generator, correction)
    import pandas as pd

    table = pd.DataFrame(rows)
    stat = table["accuracy"].to_numpy(dtype=float) if "accuracy" in table else np.full(len(rows), np.nan)
    ranks = significance_clusters(stat, pvalues, alpha=alpha)
    table["rank"] = ranks
    table["rank_range"] = rank_ranges(ranks)
    sig = Signature.of(analysis="judge-agree", **comparisons.signature_fields(), judges=_listed(judges),
                       humans=_listed(humans), ties=ties,
                       resampling="inputs", n_resamples=n_resamples, n_permutations=n_permutations,
                       confidence_level=confidence_level, correction=correction, alpha=alpha,
                       kappa="both-orientations", even_split=even_split, seed=seed)
    return JudgeAgreementResult(table, pvalues, humans, tuple(notes), n_resamples, n_permutations, confidence_level,
                                correction, sig, human_row)


def _listed(names, shown: int = 8):
    """Names for a signature: all of them up to ``shown``, else the first ones, a count and a digest of all."""
    names = list(names)
    if len(names) <= shown:
        return names
    import hashlib

    digest = hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest()[:12]
    return [*names[:3], f"...{len(names) - 3} more (sha256:{digest})"]


def _share(w: np.ndarray, agree: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``(w @ agree) / (w @ total)`` per row of key weights ``w`` (NaN where no pair is weighted)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w @ agree) / (w @ total)


def _with_interval(row: dict[str, Any], name: str, values: np.ndarray, tail: float) -> None:
    """``row[name]`` the first value, ``row[name_low / _high]`` the percentile interval of the others (NaN with
    fewer than 2 finite resamples)."""
    row[name] = float(values[0])
    boot = values[1:][np.isfinite(values[1:])]
    ok = boot.size >= 2
    row[f"{name}_low"] = float(np.quantile(boot, tail)) if ok else float("nan")
    row[f"{name}_high"] = float(np.quantile(boot, 1 - tail)) if ok else float("nan")


def _ranking_scores(c: Comparisons, weights: np.ndarray, ties: str, notes: list[str], who: str):
    """Bradley-Terry scores of ``c`` on the data and on every input resample: (1 + B, n), NaN where undefined."""
    n = len(c.systems)
    i, j = bt.pairs_of(n)
    counts = c.pair_counts()
    out = np.full((1 + weights.shape[0], n), np.nan)
    present = np.zeros(n, dtype=bool)
    used = counts.sum(axis=1) > 0
    present[i[used]] = present[j[used]] = True
    if n > rs.MAX_SYSTEMS:
        notes.append(f"the ranking of {who} is not computed: more than {rs.MAX_SYSTEMS} systems ({n}); no ranking"
                     " agreement.")
        return out
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
        for part in batch_slices(weights.shape[0], rs.batch_for(n)):
            w, start = weights[part], part.start
            draws = rs.cluster_counts(matrix, w)
            bad = bt.diverging(draws, i, j, n, ties)
            good = np.flatnonzero(~bad)
            if good.size:
                out[1 + start + good] = bt.fit(draws[good], i, j, n, model=ties, start=s,
                                               start_nu=nu if ties == "davidson" else None)[0]
    return out


def _ranking_tau(judge: np.ndarray, human: np.ndarray, tail: float) -> dict[str, float]:
    row: dict[str, float] = {}
    _with_interval(row, "ranking_tau", correlation(judge, human, "kendall-b", axis=-1), tail)
    return row


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
