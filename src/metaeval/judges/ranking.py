"""Rankings of systems from pairwise comparisons: Bradley-Terry scores, ranks, intervals, win rates.

:func:`rank_systems` fits the Bradley-Terry model (:mod:`metaeval.stats.frameworks.bradley_terry`) by
maximum likelihood, and bootstraps it (:mod:`metaeval.stats.resampling.pair_counts`, the matrices of
:mod:`metaeval.judges.resampling`) for percentile intervals of every
score and rank and the probability of every rank. Data that give no finite estimate are refused with one
line naming the systems (a system that never loses or never wins), unless a Gaussian prior is asked for
(``regularization > 0``); a comparison graph in several pieces is ranked within each piece, named in a
:class:`~metaeval.errors.DataWarning` (scores of different pieces are not comparable).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults
from .._validation import check_confidence_level, rng_and_seed
from ..runtime.progress import ProgressCallback
from ..errors import DataWarning, DegenerateDataError, DegenerateWarning, ParameterError, check_choice, check_int
from ..serialization import ResultMixin, plain
from ..signature import Signature
from ..vocabulary import JUDGE_RESAMPLING, TIE_MODELS
from ..stats.frameworks import bradley_terry as bt
from ..stats.frameworks import bradley_terry_intervals as bti
from . import resampling as rs
from ..stats.resampling.draws import batch_slices
from .comparisons import Comparisons

SHOWN = 5


@dataclass(frozen=True)
class RankingResult(ResultMixin):
    """Bradley-Terry ranking with bootstrap intervals (see :func:`rank_systems`).

    Attributes
    ----------
    systems : tuple of str
        The ranked systems, best first (within each component, components in order of size).
    scores : ndarray
        Log-strengths, centred to mean 0 within each component (``P(i beats j) = 1 / (1 + e^(s_j - s_i))``
        under the binary models).
    ci : tuple of ndarray
        Percentile interval (low, high) of each score.
    ranks, rank_low, rank_high : ndarray of int
        Rank (1 = best, within the component) and its percentile interval.
    rank_probabilities : ndarray, shape (n, n)
        ``[i, r - 1]``: share of resamples in which system i has rank r.
    component : ndarray of int
        Component (0, 1, ...) of each system; ranks and scores compare only within one.
    wins, losses, ties, comparisons : ndarray of int
    win_rates : ndarray, shape (n, n)
        Observed share of the comparisons of row vs column won by row (ties half), NaN where never compared.
    nu : float
        Davidson's tie parameter (NaN for the other models).
    n_resamples, n_dropped : int
        Resamples asked for, and those dropped because their estimate diverged (no finite maximum).
    notes : tuple of str
        What the intervals cannot show and why (no or too few resamples, all ties, intervals open on a side).
    left_out : tuple of str
        Systems of the comparisons' labels that no selected comparison involves.
    ties_model, resampling, confidence_level, regularization, signature
    """

    systems: tuple[str, ...]
    scores: np.ndarray
    ci: tuple[np.ndarray, np.ndarray]
    ranks: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    rank_probabilities: np.ndarray
    component: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    ties: np.ndarray
    comparisons: np.ndarray
    win_rates: np.ndarray
    nu: float
    n_resamples: int
    n_dropped: int
    left_out: tuple[str, ...]
    ties_model: str
    resampling: str
    confidence_level: float
    regularization: float
    signature: Signature
    notes: tuple[str, ...] = ()

    @property
    def has_intervals(self) -> bool:
        """Whether the bootstrap gave intervals (at least 2 usable resamples)."""
        return self.n_resamples - self.n_dropped >= 2

    def frame_rows(self) -> list[dict[str, Any]]:
        shown = self.has_intervals
        return [{"system": s, "rank": int(self.ranks[k]), "rank_low": int(self.rank_low[k]) if shown else None,
                 "rank_high": int(self.rank_high[k]) if shown else None, "score": float(self.scores[k]),
                 "score_low": float(self.ci[0][k]), "score_high": float(self.ci[1][k]),
                 "wins": int(self.wins[k]), "losses": int(self.losses[k]), "ties": int(self.ties[k]),
                 "comparisons": int(self.comparisons[k]), "component": int(self.component[k])}
                for k, s in enumerate(self.systems)]

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "judge-rank", "systems": self.frame_rows(), "ties_model": self.ties_model,
                "nu": plain(self.nu), "resampling": self.resampling, "n_resamples": self.n_resamples,
                "n_dropped": self.n_dropped, "confidence_level": self.confidence_level,
                "regularization": self.regularization, "left_out": list(self.left_out), "notes": list(self.notes),
                "rank_probabilities": plain(self.rank_probabilities), "win_rates": plain(self.win_rates),
                "signature": str(self.signature)}


def _components(counts: np.ndarray, i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    used = counts.sum(axis=1) > 0
    graph = csr_matrix((np.ones(used.sum()), (i[used], j[used])), shape=(n, n))
    return connected_components(graph, directed=False)[1]


def _divergence_message(counts, i, j, names, model) -> str:
    """One line naming the systems that make the maximum-likelihood estimate diverge."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(names)
    link = model != "drop"
    fwd = (counts[:, 0] > 0) | (link & (counts[:, 2] > 0))
    bwd = (counts[:, 1] > 0) | (link & (counts[:, 2] > 0))
    won = np.zeros(n)
    lost = np.zeros(n)
    np.add.at(won, i, counts[:, 0])
    np.add.at(won, j, counts[:, 1])
    np.add.at(lost, i, counts[:, 1])
    np.add.at(lost, j, counts[:, 0])
    tied = np.zeros(n)
    np.add.at(tied, i, counts[:, 2])
    np.add.at(tied, j, counts[:, 2])
    lost_weight = lost + (tied if link else 0)
    won_weight = won + (tied if link else 0)
    never_lose = [names[k] for k in range(n) if lost_weight[k] == 0 and won_weight[k] > 0]
    never_win = [names[k] for k in range(n) if won_weight[k] == 0 and lost_weight[k] > 0]
    parts = []
    if never_lose:
        parts.append(f"{_names(never_lose)} never lose{'s' if len(never_lose) == 1 else ''}")
    if never_win:
        parts.append(f"{_names(never_win)} never win{'s' if len(never_win) == 1 else ''}")
    if not parts:  # a group that never loses to the rest: a source of the strongly connected condensation
        rows = np.concatenate([i[fwd], j[bwd]])
        cols = np.concatenate([j[fwd], i[bwd]])
        graph = csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
        _, labels = connected_components(graph, directed=True, connection="strong")
        beaten = set(labels[cols[labels[rows] != labels[cols]]])
        top = next(g for g in np.unique(labels) if g not in beaten)
        parts.append(f"{_names([names[k] for k in np.flatnonzero(labels == top)])} never lose to the other systems")
    return (f"the maximum-likelihood Bradley-Terry scores diverge (no finite maximum): {'; '.join(parts)}; rank with"
            " a Gaussian prior (regularization > 0, --regularization) to get finite scores.")


def _note_unjudged(data: Comparisons, resampling: str) -> None:
    """Name the inputs no selected comparison involves (a judge or a filter left them out), and refuse a
    bootstrap over judges with a single judge (every resample would be the data itself)."""
    used = np.bincount(data.input, minlength=len(data.inputs)) > 0
    if not used.all():
        unused = [data.inputs[k] for k in np.flatnonzero(~used)]
        warnings.warn(f"{len(unused)} of {len(data.inputs)} inputs have no comparison (judged by nobody) and are left"
                      f" out: {_names(unused)}.", DataWarning, stacklevel=3)
    judges = np.unique(data.judge)
    if resampling == "judges" and judges.size < 2:
        raise ParameterError(f"`resampling` 'judges' needs comparisons of at least 2 judges; got 1"
                             f" ({data.judges[judges[0]]!r}).")
    if resampling == "judges" and judges.size < 5:
        from math import comb

        k = int(judges.size)
        warnings.warn(f"a bootstrap over {k} judges has only {comb(2 * k - 1, k)} distinct resamples: its intervals"
                      " are coarse.", DegenerateWarning, stacklevel=3)


def _pair_position(low: np.ndarray, high: np.ndarray, n: int) -> np.ndarray:
    """Position of pair (low, high), low < high, in :func:`bradley_terry.pairs_of` (n)."""
    return low * n - low * (low + 1) // 2 + (high - low - 1)


def _names(names) -> str:
    shown = ", ".join(repr(n) for n in names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _rank_systems_iv(comparisons, ties, resampling, n_resamples, confidence_level, regularization):
    if not isinstance(comparisons, Comparisons):
        raise ParameterError(f"`comparisons` must be a Comparisons (read_comparisons, comparisons_from_scores); got"
                             f" {type(comparisons).__name__}.")
    ties = check_choice("ties", ties, TIE_MODELS)
    resampling = check_choice("resampling", resampling, JUDGE_RESAMPLING)
    n_resamples = check_int("n_resamples", n_resamples, minimum=0)
    confidence_level = check_confidence_level(confidence_level)
    try:
        regularization = float(regularization)
    except (TypeError, ValueError):
        regularization = float("nan")
    if not np.isfinite(regularization) or regularization < 0:
        raise ParameterError(f"`regularization` must be a finite number >= 0; got {regularization!r}.")
    return ties, resampling, n_resamples, confidence_level, regularization


def rank_systems(comparisons: Comparisons, *, judges=None, ties: str = defaults.TIE_MODEL,
                 resampling: str = defaults.JUDGE_RESAMPLING, n_resamples: int = defaults.N_RESAMPLES,
                 confidence_level: float = defaults.CONFIDENCE_LEVEL, regularization: float = 0.0,
                 rng: Any = None, progress: ProgressCallback | None = None) -> RankingResult:
    """Rank systems by Bradley-Terry maximum likelihood, with bootstrap intervals of scores and ranks.

    Parameters
    ----------
    comparisons : Comparisons
    judges : str or list of str, optional
        Use only these judges' comparisons (default: all, pooled).
    ties : {'half', 'davidson', 'drop'}
        A tie as half a win for each side (Chatbot Arena, Evalica), Davidson's (1970) model with a tie
        parameter nu, or ties left out.
    resampling : {'comparisons', 'inputs', 'judges'}
        What the bootstrap resamples (:mod:`metaeval.judges.resampling`); ``'inputs'`` (default) keeps the
        comparisons of one input together.
    n_resamples : int
        Bootstrap resamples (0: no intervals).
    confidence_level : float
    regularization : float >= 0
        0 (default): maximum likelihood, refused when it diverges. Otherwise the penalty
        ``regularization * sum s_i^2`` (a Gaussian prior; choix's ``alpha``).
    rng : int, Generator or None
        None (default): fresh entropy, the seed drawn recorded in the signature.
    progress : callable, optional
        Called as ``progress(k)`` after each batch of k resamples (``n_resamples`` units in all;
        :mod:`metaeval.runtime.progress`).

    Returns
    -------
    RankingResult

    Raises
    ------
    DegenerateDataError
        When the maximum-likelihood estimate diverges (a system that never loses or never wins, or a
        group that never loses to the rest) and ``regularization == 0``; Davidson's model without ties or
        with ties only; ``ties='drop'`` when every comparison is a tie.
    ParameterError
        When the pairwise arrays or the resamples cannot fit in the memory available.

    Warns
    -----
    DataWarning
        The comparison graph falls into several components (named): each is ranked on its own.
    DegenerateWarning
        Some bootstrap resamples diverged and were dropped (counted in ``n_dropped``).

    Notes
    -----
    Percentile intervals of the resampled scores and ranks; the resamples of each component are fitted
    together by a batched Newton iteration warm-started at the point estimate. A system's rank is
    ``1 + #{systems of its component with a larger score}``; systems with equal scores share the places
    ``1 + #{larger}`` to ``#{larger or equal}``, so the rank interval runs from the lower percentile of the
    first to the upper percentile of the last. Intervals need at least 2 usable resamples (NaN otherwise,
    with a note). A resample whose estimate diverges has a system or group that never loses (its score is
    unbounded above) or never wins (unbounded below): such resamples are dropped from the percentiles, but
    when a system is unbounded above (below) in more than the tail share of all resamples, its interval is
    open on that side (``inf``) and its rank interval reaches 1 (the last place), with a note.

    References
    ----------
    Bradley & Terry (1952); Davidson (1970); Chiang et al. (2024), Chatbot Arena: an open platform for
    evaluating LLMs by human preference (ICML), for the bootstrap of Bradley-Terry scores.
    """
    ties, resampling, n_resamples, confidence_level, regularization = _rank_systems_iv(
        comparisons, ties, resampling, n_resamples, confidence_level, regularization)
    data = comparisons.judged_by(judges)
    n_all = len(data.systems)
    n_clusters = len(data.inputs) if resampling != "judges" else len(data.judges)
    rs.check_systems(n_all)
    rs.check_memory(n_resamples, n_all, n_clusters)
    generator, seed = rng_and_seed(rng)
    i_all, j_all = bt.pairs_of(n_all)
    counts_all = data.pair_counts()
    if ties == "drop" and counts_all[:, :2].sum() == 0:
        raise DegenerateDataError(f"`ties` 'drop' leaves no comparison: all {data.n_comparisons} comparisons are ties"
                                  " (rank them with ties='half', where every system scores 0).")
    if ties == "drop":
        counts_all = counts_all * np.array([1.0, 1.0, 0.0])  # a system compared only in ties is left out
    present = np.zeros(n_all, dtype=bool)
    used_pairs = counts_all.sum(axis=1) > 0
    present[i_all[used_pairs]] = True
    present[j_all[used_pairs]] = True
    keep = np.flatnonzero(present)
    left_out = tuple(data.systems[k] for k in np.flatnonzero(~present))
    n = keep.size
    if n < 2:
        raise DegenerateDataError(f"a ranking needs comparisons of at least 2 systems; got {n}.")
    names = tuple(data.systems[k] for k in keep)
    i, j = bt.pairs_of(n)
    old_pair = _pair_position(keep[i], keep[j], n_all)  # the pairs of the kept systems among all pairs
    counts = counts_all[old_pair]
    _note_unjudged(data, resampling)
    if ties == "davidson" and counts[:, 2].sum() == 0:
        raise DegenerateDataError("Davidson's tie model needs ties; the comparisons hold none (use ties='half').")
    if ties == "davidson" and counts[:, :2].sum() == 0:
        raise DegenerateDataError("Davidson's tie parameter nu diverges when every comparison is a tie; the"
                                  f" {int(counts.sum())} comparisons hold no win (use ties='half').")
    labels = _components(counts, i, j, n)
    sizes = np.bincount(labels)
    order = np.argsort(-sizes, kind="stable")
    component = np.argsort(order)[labels]  # 0 = largest
    n_comp = sizes.size
    if n_comp > 1:
        groups = [_names([names[k] for k in np.flatnonzero(component == c)]) for c in range(n_comp)]
        warnings.warn(f"the comparisons fall into {n_comp} disconnected groups of systems, ranked separately (their"
                      f" scores are not comparable): " + "; ".join(f"{c + 1}: {g}" for c, g in enumerate(groups)) + ".",
                      DataWarning, stacklevel=2)
    blocks = []
    for c in range(n_comp):
        members = np.flatnonzero(component == c)
        if members.size < 2:
            continue
        ci_, cj_ = bt.pairs_of(members.size)
        pos = _pair_position(members[ci_], members[cj_], n)
        blocks.append((members, ci_, cj_, pos))
        if regularization == 0 and bt.diverging(counts[pos], ci_, cj_, members.size, ties):
            raise DegenerateDataError(_divergence_message(counts[pos], ci_, cj_, [names[k] for k in members], ties))
    scores = np.zeros(n)
    nu = float("nan")
    notes: list[str] = []
    for members, ci_, cj_, pos in blocks:
        s, nu_c, _, converged = bt.fit(counts[pos], ci_, cj_, members.size, model=ties, regularization=regularization)
        if not np.all(converged) or not np.all(np.isfinite(s)) or (ties == "davidson" and not np.isfinite(nu_c)):
            raise DegenerateDataError(f"the Bradley-Terry fit ({ties} ties) of {_names([names[k] for k in members])}"
                                      " did not converge; rank with a Gaussian prior (regularization > 0,"
                                      " --regularization).")
        scores[members] = s
        nu = nu_c if members.size == max(len(b[0]) for b in blocks) else nu
    boot_scores, dropped, unbounded = _bootstrap(data, resampling, counts, old_pair, blocks, scores, nu, ties,
                                                 regularization, n_resamples, generator, progress)
    n_dropped = int(dropped.sum())
    ranks = bti.ranks(scores[None], component)[0]
    low, high, rank_low, rank_high, probs = bti.percentile_intervals(scores, boot_scores[~dropped], component,
                                                                     confidence_level)
    tail = (1.0 - confidence_level) / 2.0
    all_ties = counts[:, :2].sum() == 0
    if n_resamples and n_resamples - n_dropped < 2:
        notes.append(f"{n_resamples - n_dropped} usable bootstrap resample{'s' if n_resamples - n_dropped != 1 else ''}"
                     " (of " f"{n_resamples}): no interval (at least 2 are needed).")
    elif n_resamples == 0:
        notes.append("no bootstrap (n_resamples 0): no interval of scores or ranks.")
    if all_ties:
        low[:], high[:] = np.nan, np.nan
        notes.append("every comparison is a tie: the systems cannot be told apart (every score is 0 in the data and"
                     " in every resample); the score intervals are undefined and every system shares every rank.")
    if n_dropped and n_resamples - n_dropped >= 2:
        up, down = unbounded
        open_high = up > tail * n_resamples
        open_low = down > tail * n_resamples
        high[open_high] = np.inf
        low[open_low] = -np.inf
        rank_low[open_high] = 1
        comp_size = np.bincount(component)[component]
        rank_high[open_low] = comp_size[open_low]
        cut = [names[k] for k in np.flatnonzero(open_high | open_low)]
        if cut:
            notes.append(f"{_names(cut)}: in more than {tail:.1%} of the resamples the estimate diverges with"
                         " the system unbounded (never losing or never winning there): the interval is open on"
                         " that side (inf) and the rank interval reaches the end.")
    if n_dropped:
        notes.append(f"{n_dropped} of {n_resamples} resamples have no finite estimate (a system or group that never"
                     " loses or never wins in the resample) and are left out of the percentiles.")
    won, lost, tied = _tallies(counts, i, j, n)
    best_first = np.lexsort((-scores, component))
    win_rates = _win_rates(counts, i, j, n)
    sig = Signature.of(analysis="judge-rank", **data.signature_fields(),
                       judges=_judges_field(None if judges is None else comparisons.judge_names(judges)),
                       model="bradley-terry", ties=ties, resampling=resampling, n_resamples=n_resamples,
                       confidence_level=confidence_level, regularization=regularization, seed=seed)
    o = best_first
    return RankingResult(tuple(names[k] for k in o), scores[o], (low[o], high[o]), ranks[o], rank_low[o], rank_high[o],
                         probs[o], component[o], won[o].astype(int), lost[o].astype(int), tied[o].astype(int),
                         (won + lost + tied)[o].astype(int), win_rates[np.ix_(o, o)], nu, n_resamples, n_dropped,
                         left_out, ties, resampling, confidence_level, regularization, sig, tuple(notes))


def _judges_field(judges):
    if judges is None:
        return "all"
    from .agreement import _listed

    return _listed((judges,) if isinstance(judges, str) else judges)


def _bootstrap(data, resampling, counts, old_pair, blocks, scores, nu, ties, regularization, n_resamples, generator,
               progress):
    """Resampled scores (B, n) (NaN rows for dropped resamples), which resamples were dropped, and per system
    the number of dropped resamples in which it is unbounded above and below."""
    n = scores.size
    dropped = np.zeros(n_resamples, dtype=bool)
    up, down = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    if n_resamples == 0:
        return np.empty((0, n)), dropped, (up, down)
    out = np.full((n_resamples, n), np.nan)
    matrix = rs.cluster_matrix(data, resampling) if resampling != "comparisons" else None
    batch = rs.batch_for(n)
    if matrix is not None:  # clusters of identical content drawn as one type (pair_counts.cluster_types)
        cols = (old_pair[:, None] * 3 + np.arange(3)).ravel()
        active = rs.active_clusters(*rs.cluster_codes(data, resampling))
        type_of, type_matrix, multiplicity = rs.cluster_types(matrix[:, cols], active)
        drawn = multiplicity.size if 4 * multiplicity.size <= active.size else active.size
        batch = max(1, min(batch, (1 << 23) // max(1, drawn)))  # the draws of a batch stay near 64 MB
    for part in batch_slices(n_resamples, batch):
        size = part.stop - part.start
        if matrix is None:
            draws = rs.comparison_counts(generator, counts, size)
        else:
            draws = rs.cluster_counts(type_matrix, rs.type_weights(generator, type_of, multiplicity, size))
        for members, ci_, cj_, pos in blocks:
            c = draws[:, pos]
            bad = (np.zeros(size, dtype=bool) if regularization > 0
                   else bti.diverging_resamples(c, counts[pos], ci_, cj_, members.size, ties))
            good = np.flatnonzero(~bad)
            if good.size:
                s, _, _, _ = bt.fit(c[good], ci_, cj_, members.size, model=ties, regularization=regularization,
                                    start=scores[members], start_nu=nu if ties == "davidson" else None)
                out[part.start + good[:, None], members[None, :]] = s
            for b in np.flatnonzero(bad):
                high_side, low_side = bti.unbounded_sides(c[b], ci_, cj_, members.size, ties)
                up[members[high_side]] += 1
                down[members[low_side]] += 1
            dropped[part] |= bad
        if progress is not None:
            progress(size)
    out[dropped] = np.nan
    if dropped.any():
        warnings.warn(f"{int(dropped.sum())} of {n_resamples} bootstrap resamples have no finite Bradley-Terry estimate"
                      " (a system that never loses or never wins in the resample) and were dropped; the intervals use"
                      " the others.", DegenerateWarning, stacklevel=3)
    return out, dropped, (up, down)


def _tallies(counts, i, j, n):
    won, lost, tied = np.zeros(n), np.zeros(n), np.zeros(n)
    np.add.at(won, i, counts[:, 0])
    np.add.at(won, j, counts[:, 1])
    np.add.at(lost, i, counts[:, 1])
    np.add.at(lost, j, counts[:, 0])
    np.add.at(tied, i, counts[:, 2])
    np.add.at(tied, j, counts[:, 2])
    return won, lost, tied


def _win_rates(counts, i, j, n):
    rates = np.full((n, n), np.nan)
    total = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = (counts[:, 0] + 0.5 * counts[:, 2]) / total
    ok = total > 0
    rates[i[ok], j[ok]] = share[ok]
    rates[j[ok], i[ok]] = 1.0 - share[ok]
    return rates
