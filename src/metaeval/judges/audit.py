"""Audits of a judge: position bias, repetition stability, length bias, self-preference.

Each measure is computed for each judge when the comparisons have what it needs, and otherwise named in
``notes`` with the reason:

position consistency and preference fairness (Shi et al. 2024) - need one pair shown in both orders
    A *swap group* is an input, judge and unordered pair whose comparisons include both presentation
    orders (with repeats, each order's verdict is its majority vote, a tie when undecided). Position
    consistency: share of swap groups whose two verdicts name the same winner (or both a tie).
    Preference fairness: ``(n_recency - n_primacy) / n_groups`` in [-1, 1], where a primacy (recency)
    group is one in which the judge picked the system shown first (second) in both orders; 0 is fair,
    negative favours the first position. (Shi et al. normalise by the extreme values attainable; this is
    the plain share, which is comparable across data sets of any size.) Also ``first_rate``: the share of
    decisive verdicts (no tie) that pick the system shown first, measurable on any data.
repetition stability - needs a repeat column
    A *repeat group* is an input, judge and ordered pair asked several times. Stability: share of repeat
    groups whose verdicts all agree; ``repeat_agreement``: share of agreeing pairs of repeats.
length bias - needs the two lengths
    Logistic regression of the decisive verdicts, ``logit P(first wins) = b0 + b1 * z``, with ``z`` the
    length difference (first minus second) divided by its standard deviation; ``b1`` (log-odds per
    standard deviation, > 0: longer outputs win) with a Wald interval from the cluster-robust (sandwich,
    clustered by input) covariance; ``b0`` is the position effect at equal length. The difference in
    length may reflect quality as well as bias; only a comparison with humans on the same pairs separates
    the two.
self-preference - needs a judge named like a system
    On the keys (input, pair) where the judge compared its own system and some other judge did too: the
    share of decisive verdicts for its own system by the judge minus that share by the other judges.

Intervals (consistency, fairness, self-preference) are percentile intervals of a bootstrap over inputs.

References
----------
Shi, L., Ma, C., Liang, W., Ma, W., and Vosoughi, S. (2024). Judging the judges: a systematic study of
position bias in LLM-as-a-judge. arXiv:2406.07791.
Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena. NeurIPS Datasets and
Benchmarks (position, verbosity and self-enhancement biases).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults
from .._validation import check_confidence_level, rng_and_seed
from ..runtime.progress import ProgressCallback
from ..errors import ParameterError, check_int
from ..serialization import ResultMixin, plain
from ..signature import Signature
from . import resampling as rs
from .agreement import key_verdicts
from .comparisons import FIRST, SECOND, TIE, Comparisons


@dataclass(frozen=True)
class JudgeAuditResult(ResultMixin):
    """Audit of each judge (see the module docstring).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per judge; NaN where a measure cannot be computed.
    notes : tuple of str
        One line per measure that cannot be computed, and why.
    n_resamples, confidence_level, signature
    """

    table: Any
    notes: tuple[str, ...]
    n_resamples: int
    confidence_level: float
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        return self.table.to_dict("records")

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "judge-audit", "judges": plain(self.table.to_dict("records")), "notes": list(self.notes),
                "n_resamples": self.n_resamples, "confidence_level": self.confidence_level,
                "signature": str(self.signature)}


def _votes(groups: np.ndarray, outcome: np.ndarray, n_groups: int) -> np.ndarray:
    """Majority outcome per group (a tie when two outcomes are equally frequent); -1 for an empty group."""
    votes = np.zeros((n_groups, 3))
    np.add.at(votes, (groups, outcome), 1.0)
    top = votes.max(axis=1)
    out = np.where((votes == top[:, None]).sum(axis=1) > 1, TIE, votes.argmax(axis=1))
    return np.where(votes.sum(axis=1) == 0, -1, out)


def _ci(values_by_weight, tail):
    boot = values_by_weight[1:][np.isfinite(values_by_weight[1:])]
    if not boot.size:
        return float("nan"), float("nan")
    return float(np.quantile(boot, tail)), float(np.quantile(boot, 1 - tail))


def _position(c: Comparisons, w_inputs: np.ndarray, tail: float) -> dict[str, float]:
    n = len(c.systems)
    p = n * (n - 1) // 2
    _, _, outcome, swapped = c.oriented()
    key = c.input * p + c.pair_index()
    keys, inverse = np.unique(key, return_inverse=True)
    by_order = [_votes(inverse[swapped == s], outcome[swapped == s], keys.size) for s in (False, True)]
    shown = [_votes(inverse[swapped == s], c.verdict[swapped == s].astype(np.int64), keys.size) for s in (False, True)]
    both = (by_order[0] >= 0) & (by_order[1] >= 0)
    decisive = c.verdict != TIE
    out: dict[str, float] = {"swap_groups": int(both.sum()),
                             "first_rate": float(np.mean(c.verdict[decisive] == FIRST)) if decisive.any() else np.nan}
    if not both.any():
        return out
    consistent = (by_order[0] == by_order[1])[both]
    primacy = ((shown[0] == FIRST) & (shown[1] == FIRST))[both]
    recency = ((shown[0] == SECOND) & (shown[1] == SECOND))[both]
    w = w_inputs[:, keys[both] // p]
    with np.errstate(invalid="ignore", divide="ignore"):
        pc = (w @ consistent) / w.sum(axis=1)
        pf = (w @ (recency.astype(float) - primacy)) / w.sum(axis=1)
    out.update(position_consistency=float(pc[0]), preference_fairness=float(pf[0]))
    out["position_consistency_low"], out["position_consistency_high"] = _ci(pc, tail)
    out["preference_fairness_low"], out["preference_fairness_high"] = _ci(pf, tail)
    return out


def _repetition(c: Comparisons) -> dict[str, float]:
    n = len(c.systems)
    key = (c.input * n + c.first) * n + c.second
    keys, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    votes = np.zeros((keys.size, 3))
    np.add.at(votes, (inverse, c.verdict.astype(np.int64)), 1.0)
    groups = counts >= 2
    if not groups.any():
        return {"repeat_groups": 0}
    v = votes[groups]
    total = v.sum(axis=1)
    agree_pairs = (v * (v - 1) / 2).sum(axis=1)
    all_pairs = total * (total - 1) / 2
    return {"repeat_groups": int(groups.sum()), "repetition_stability": float(np.mean(v.max(axis=1) == total)),
            "repeat_agreement": float(agree_pairs.sum() / all_pairs.sum())}


def logistic_fit(x: np.ndarray, y: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Logistic regression ``logit P(y = 1) = b0 + b1 x`` by Newton's method.

    Returns the coefficients, the model-based covariance (inverse information) and the cluster-robust
    sandwich covariance ``H^-1 (sum_g s_g s_g^T) H^-1`` (scores summed within each cluster), with the
    small-sample factor ``G / (G - 1) * (N - 1) / (N - 2)`` of Stata and statsmodels (G clusters, N rows).
    """
    X = np.column_stack([np.ones_like(x), x])
    beta = np.zeros(2)
    for _ in range(100):
        eta = X @ beta
        prob = 1.0 / (1.0 + np.exp(-eta))
        info = (X * (prob * (1 - prob))[:, None]).T @ X
        step = np.linalg.solve(info, X.T @ (y - prob))
        beta = beta + step
        if np.max(np.abs(step)) < 1e-12:
            break
    prob = 1.0 / (1.0 + np.exp(-(X @ beta)))
    info = (X * (prob * (1 - prob))[:, None]).T @ X
    bread = np.linalg.inv(info)
    scores = X * (y - prob)[:, None]
    _, g = np.unique(clusters, return_inverse=True)
    summed = np.zeros((g.max() + 1, 2))
    np.add.at(summed, g, scores)
    n_g = summed.shape[0]
    n = x.size
    factor = n_g / (n_g - 1) * (n - 1) / (n - 2) if n_g > 1 and n > 2 else np.nan
    meat = summed.T @ summed * factor
    return beta, bread, bread @ meat @ bread


def _length(c: Comparisons, confidence_level: float) -> dict[str, float]:
    from scipy.stats import norm

    known = np.isfinite(c.first_length) & np.isfinite(c.second_length)
    decisive = (c.verdict != TIE) & known
    diff = (c.first_length - c.second_length)[decisive]
    y = (c.verdict[decisive] == FIRST).astype(float)
    out: dict[str, Any] = {"length_comparisons": int(decisive.sum()), "length_missing": int((~known).sum())}
    sd = float(np.std(diff, ddof=1)) if diff.size > 1 else 0.0
    if diff.size < 10 or not sd > 0 or y.min() == y.max():
        return out
    if diff[y == 1].min() >= diff[y == 0].max() or diff[y == 1].max() <= diff[y == 0].min():
        out["reason"] = ("the length difference separates the verdicts perfectly (every longer first output wins, or"
                         " every one loses): the logistic fit has no finite estimate")
        return out
    try:
        beta, _, robust = logistic_fit(diff / sd, y, c.input[decisive])
    except np.linalg.LinAlgError:
        return out
    if not np.all(np.isfinite(beta)) or not np.all(np.isfinite(robust)):
        return out
    z = norm.ppf(0.5 + confidence_level / 2)
    se = float(np.sqrt(robust[1, 1]))
    out.update(length_effect=float(beta[1]), length_effect_low=float(beta[1] - z * se),
               length_effect_high=float(beta[1] + z * se), length_sd=sd, position_effect=float(beta[0]),
               length_pvalue=float(2 * norm.sf(abs(beta[1]) / se)))
    return out


def _self_preference(c: Comparisons, judge: str, w_inputs: np.ndarray, tail: float) -> dict[str, float] | str:
    own = c.systems.index(judge)
    n = len(c.systems)
    p = n * (n - 1) // 2
    involved = (c.first == own) | (c.second == own)
    mine = c.take(involved & (c.judge == c.judges.index(judge)))
    others = c.take(involved & (c.judge != c.judges.index(judge)))
    if not mine.n_comparisons or not others.n_comparisons:
        return "no other judge compared the judge's own system" if mine.n_comparisons else \
            "the judge never compared its own system"
    mk, mv = key_verdicts(mine)
    ok, ov = key_verdicts(others)
    common, a, b = np.intersect1d(mk, ok, return_indices=True)
    if not common.size:
        return "no other judge compared the same inputs and pairs as the judge"
    low = (common % p)  # pair position -> is the own system the low one?
    i_all, _ = np.triu_indices(n, 1)
    own_low = i_all[low] == own
    own_win = lambda v: np.where(own_low, v == 0, v == 1).astype(float)  # noqa: E731
    decisive_m, decisive_o = mv[a] != TIE, ov[b] != TIE
    w = w_inputs[:, common // p]
    with np.errstate(invalid="ignore", divide="ignore"):
        share_m = (w @ (own_win(mv[a]) * decisive_m)) / (w @ decisive_m)
        share_o = (w @ (own_win(ov[b]) * decisive_o)) / (w @ decisive_o)
    diff = share_m - share_o
    low_, high_ = _ci(diff, tail)
    return {"self_keys": int(common.size), "self_preference": float(diff[0]), "self_preference_low": low_,
            "self_preference_high": high_}


def judge_audit(comparisons: Comparisons, judges=None, *, n_resamples: int = defaults.N_RESAMPLES,
                confidence_level: float = defaults.CONFIDENCE_LEVEL, rng: Any = None,
                progress: ProgressCallback | None = None) -> JudgeAuditResult:
    """Position consistency, preference fairness, repetition stability, length bias and self-preference.

    Parameters
    ----------
    comparisons : Comparisons
    judges : str or list of str, optional
        Default: every judge.
    n_resamples : int
        Bootstrap resamples of inputs for the intervals (0: none).
    confidence_level : float
    rng : int, Generator or None
        None (default): fresh entropy, the seed drawn recorded in the signature.
    progress : callable, optional
        Called with no argument after each judge (:mod:`metaeval.runtime.progress`).

    Returns
    -------
    JudgeAuditResult
        Measures the data cannot support are NaN in the table and explained in ``notes``.
    """
    if not isinstance(comparisons, Comparisons):
        raise ParameterError(f"`comparisons` must be a Comparisons; got {type(comparisons).__name__}.")
    judges = comparisons.judges if judges is None else ((judges,) if isinstance(judges, str) else tuple(judges))
    comparisons.judged_by(judges)
    n_resamples = check_int("n_resamples", n_resamples, minimum=0)
    confidence_level = check_confidence_level(confidence_level)
    rs.check_memory(n_resamples, len(comparisons.systems), len(comparisons.inputs), pairs=False)
    generator, seed = rng_and_seed(rng)
    tail = (1 - confidence_level) / 2
    m = len(comparisons.inputs)
    active = rs.active_clusters(comparisons.judged_by(judges).input, m)
    w = np.vstack([np.ones(m), rs.cluster_weights(generator, m, n_resamples, active)]) if n_resamples else np.ones((1, m))
    rows, notes = [], []
    for judge in judges:
        c = comparisons.judged_by(judge)
        row: dict[str, Any] = {"judge": judge, "comparisons": c.n_comparisons}
        row.update(_position(c, w, tail))
        if not row["swap_groups"]:
            notes.append((judge, "position consistency and preference fairness cannot be measured: no pair was"
                         " shown in both orders on one input."))
        if c.repeat is None:
            row["repeat_groups"] = 0
            notes.append((judge, "repetition stability cannot be measured: the comparisons have no repeat column."))
        else:
            row.update(_repetition(c))
            if not row["repeat_groups"]:
                notes.append((judge, "repetition stability cannot be measured: no query was asked twice."))
        if c.first_length is None:
            notes.append((judge, "length bias cannot be measured: the comparisons have no length columns."))
        else:
            found = _length(c, confidence_level)
            reason = found.pop("reason", None)
            row.update(found)
            if row["length_missing"]:
                notes.append((judge, f"length bias: {row['length_missing']} comparisons with a missing length are"
                              " left out of the length analysis."))
            if "length_effect" not in row:
                notes.append((judge, f"length bias cannot be measured: {reason}." if reason else
                              "length bias cannot be measured: fewer than 10 decisive verdicts, equal lengths, or"
                              " verdicts all one way."))
        if judge in comparisons.systems:
            found = _self_preference(comparisons, judge, w, tail)
            if isinstance(found, str):
                notes.append((judge, f"self-preference cannot be measured: {found}."))
            else:
                row.update(found)
        else:
            notes.append((judge, "self-preference not applicable: the judge is not one of the systems."))
        rows.append(row)
        if progress is not None:
            progress()
    import pandas as pd

    table = pd.DataFrame(rows)
    grouped: dict[str, list[str]] = {}
    for judge, text in notes:
        grouped.setdefault(text, []).append(judge)
    notes = [f"{'every judge' if len(who) == len(judges) and len(judges) > 1 else ', '.join(who)}: {text}"
             for text, who in grouped.items()]
    sig = Signature.of(analysis="judge-audit", **comparisons.signature_fields(), resampling="inputs",
                       n_resamples=n_resamples, confidence_level=confidence_level, length_model="logistic",
                       length_covariance="cluster-robust", seed=seed)
    return JudgeAuditResult(table, tuple(notes), n_resamples, confidence_level, sig)
