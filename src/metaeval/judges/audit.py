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
from .agreement import _listed, key_verdicts
from .length_bias import length_effect as _length
from .length_bias import logistic_fit  # noqa: F401 (re-exported: the audit's regression)
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


def _self_preference(c: Comparisons, judge: str, family: set[int], w_inputs: np.ndarray,
                     tail: float) -> dict[str, float] | str:
    """The judge's share of wins for its own systems (``family``) minus the other judges' on the same keys, on
    the keys where both decided (a more decisive judge is not a more partial one)."""
    n = len(c.systems)
    p = n * (n - 1) // 2
    own_first, own_second = np.isin(c.first, list(family)), np.isin(c.second, list(family))
    involved = own_first != own_second  # exactly one of the two systems is the judge's own
    mine = c.take(involved & (c.judge == c.judges.index(judge)))
    others = c.take(involved & (c.judge != c.judges.index(judge)))
    if not mine.n_comparisons or not others.n_comparisons:
        return "no other judge compared the judge's own systems" if mine.n_comparisons else \
            "the judge never compared its own systems with another system"
    mk, mv = key_verdicts(mine)
    ok, ov = key_verdicts(others)
    common, a, b = np.intersect1d(mk, ok, return_indices=True)
    both = (mv[a] != TIE) & (ov[b] != TIE)
    if not both.any():
        return "no input and pair on which the judge and another judge both gave a decisive verdict"
    common, a, b = common[both], a[both], b[both]
    i_all, _ = np.triu_indices(n, 1)
    own_low = np.isin(i_all[common % p], list(family))  # the own system is the pair's lower code
    own_win = lambda v: np.where(own_low, v == 0, v == 1).astype(float)  # noqa: E731
    w = w_inputs[:, common // p]
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = (w @ (own_win(mv[a]) - own_win(ov[b]))) / w.sum(axis=1)
    low_, high_ = _ci(diff, tail)
    return {"self_keys": int(common.size), "self_preference": float(diff[0]), "self_preference_low": low_,
            "self_preference_high": high_}


def _families_iv(comparisons: Comparisons, families) -> dict[str, set[int]]:
    """``families`` as {judge: set of system codes}, or a one-line error."""
    out: dict[str, set[int]] = {}
    for judge, systems in dict(families or {}).items():
        if judge not in comparisons.judges:
            comparisons.judged_by(judge, param="families")
        names = (systems,) if isinstance(systems, str) else tuple(systems)
        for name in names:
            if name not in comparisons.systems:
                shown = ", ".join(repr(x) for x in comparisons.systems[:10])
                raise ParameterError(f"`families` must map a judge to systems of the comparisons ({shown}); got"
                                     f" {name!r} for {judge!r}.")
        out[judge] = {comparisons.systems.index(name) for name in names}
    return out


def _repeat_note(c: Comparisons, first_rate: float) -> str | None:
    """A note when the share of first-shown picks moves once each query counts once (its majority verdict)."""
    if c.repeat is None or not np.isfinite(first_rate):
        return None
    n = len(c.systems)
    key = (c.input * n + c.first) * n + c.second
    keys, inverse = np.unique(key, return_inverse=True)
    if keys.size == c.n_comparisons:
        return None
    votes = _votes(inverse.ravel(), c.verdict.astype(np.int64), keys.size)
    decisive = votes != TIE
    per_query = float(np.mean(votes[decisive] == FIRST)) if decisive.any() else float("nan")
    if not np.isfinite(per_query) or abs(per_query - first_rate) < 0.005:
        return None
    return (f"first chosen counts every repeat ({c.n_comparisons} comparisons of {keys.size} queries): {first_rate:.3f};"
            f" with each query's majority verdict once: {per_query:.3f}.")


def judge_audit(comparisons: Comparisons, judges=None, *, n_resamples: int = defaults.N_RESAMPLES,
                confidence_level: float = defaults.CONFIDENCE_LEVEL, families=None, rng: Any = None,
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
    families : mapping, optional
        ``{judge: system or systems}``: the systems of a judge's family (its own outputs, or its model
        family's) for the self-preference measure. Default: a judge named like a system is that system.
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
    chosen = judges
    judges = comparisons.judges if judges is None else ((judges,) if isinstance(judges, str) else tuple(judges))
    comparisons.judged_by(judges)
    n_resamples = check_int("n_resamples", n_resamples, minimum=0)
    confidence_level = check_confidence_level(confidence_level)
    rs.check_memory(n_resamples, len(comparisons.systems), len(comparisons.inputs), pairs=False)
    families = _families_iv(comparisons, families)
    generator, seed = rng_and_seed(rng)
    tail = (1 - confidence_level) / 2
    m = len(comparisons.inputs)
    active = rs.active_clusters(comparisons.judged_by(judges).input, m)
    w = np.vstack([np.ones(m), rs.cluster_weights(generator, m, n_resamples, active)]) if n_resamples else np.ones((1, m))
    rows, notes = [], []
    for judge in judges:
        c = comparisons.judged_by(judge)
        row: dict[str, Any] = {"judge": judge, "comparisons": c.n_comparisons}
        if not comparisons.presented:
            row["swap_groups"] = 0
            notes.append((judge, "position measures not applicable: comparisons made from scores have no presentation"
                          " order (first is the score file's system order)."))
        else:
            row.update(_position(c, w, tail))
            note = _repeat_note(c, row.get("first_rate", np.nan))
            if note:
                notes.append((judge, note))
        if comparisons.presented and not row["swap_groups"]:
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
        family = families.get(judge) or ({comparisons.systems.index(judge)} if judge in comparisons.systems
                                         else None)
        if family:
            found = _self_preference(comparisons, judge, family, w, tail)
            if isinstance(found, str):
                notes.append((judge, f"self-preference cannot be measured: {found}."))
            else:
                row.update(found)
        else:
            notes.append((judge, "self-preference not applicable: the judge is not one of the systems (name its family"
                          " with families=, --judge-family JUDGE=SYSTEM)."))
        rows.append(row)
        if progress is not None:
            progress()
    if len(judges) > 1 and n_resamples:
        measured = sum(int(f"{m}_low" in row and np.isfinite(row.get(f"{m}_low", np.nan)))
                       for row in rows for m in ("position_consistency", "preference_fairness", "length_effect",
                                                 "self_preference"))
        if measured > 1:
            notes.append((None, f"{measured} intervals over {len(judges)} judges, each at {confidence_level:.0%} on its"
                                f" own: about {1 - confidence_level:.0%} of them miss by chance; for all at once use"
                                f" confidence level {1 - (1 - confidence_level) / measured:.4g} (Bonferroni)."))
    import pandas as pd

    table = pd.DataFrame(rows)
    grouped: dict[str, list[str]] = {}
    for judge, text in notes:
        grouped.setdefault(text, []).append(judge)
    notes = [text if who == [None] else
             f"{'every judge' if len(who) == len(judges) and len(judges) > 1 else ', '.join(who)}: {text}"
             for text, who in grouped.items()]
    family_field = {"families": ";".join(f"{j}=" + "+".join(comparisons.systems[k] for k in sorted(codes))
                                         for j, codes in families.items())} if families else {}
    sig = Signature.of(analysis="judge-audit", **comparisons.signature_fields(),
                       judges="all" if chosen is None else _listed(judges), **family_field, resampling="inputs",
                       n_resamples=n_resamples, confidence_level=confidence_level,
                       length_model="logistic-with-system-effects",
                       length_covariance="cluster-robust", seed=seed)
    return JudgeAuditResult(table, tuple(notes), n_resamples, confidence_level, sig)
