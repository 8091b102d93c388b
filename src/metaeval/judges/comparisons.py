"""Pairwise comparisons as data: one row per (input, two systems in the order shown, judge, verdict).

A :class:`Comparisons` holds integer codes with their labels. ``first`` is the system shown first (left,
"A") and ``second`` the one shown second; the verdict is ``'first'``, ``'second'`` or ``'tie'``
(:data:`~metaeval.vocabulary.VERDICTS`), relative to that order. A judge is whoever gave the verdict: an
LLM judge, a human annotator, a metric. Optional per-row fields: a repeat id (the same query asked again)
and the lengths of the two outputs.

:func:`comparisons_from_scores` turns any scorer of a :class:`~metaeval.data.scoreset.ScoreSet` into a
judge: on every input, every pair of systems both scored gets the verdict of the larger score, or a tie
under metaeval's tie rule (:func:`metaeval.stats.correlations.ties.are_tied` on that input's scores). With
``annotators=True`` each annotator of a human scorer is a judge of its own.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .. import _validation as iv
from .. import defaults
from ..data.scoreset import DEFAULT_AGGREGATION, ScoreSet
from ..errors import DegenerateDataError, ParameterError
from ..stats.correlations.ties import are_tied, tie_tolerances
from ..vocabulary import VERDICTS
from ..stats.frameworks.bradley_terry import pairs_of

FIRST, SECOND, TIE = 0, 1, 2


@dataclass(frozen=True, eq=False)
class Comparisons:
    """Pairwise comparisons (see the module docstring).

    Attributes
    ----------
    systems, inputs, judges : tuple of str
        The labels; the arrays below hold positions in them.
    input, first, second, judge : ndarray of int, shape (n,)
    verdict : ndarray of int8, shape (n,)
        0 = first wins, 1 = second wins, 2 = tie.
    repeat : ndarray of int or None
        The repeat id of each row (rows differing only in it are the same query asked again).
    first_length, second_length : ndarray of float or None
        Length of the two outputs (any unit: characters, tokens).
    source : str
        Where the comparisons come from (a file, or ``scores:<scorer>``).
    origin : tuple of (str, str)
        The other settings that made them, as signature fields after ``source`` (so that a signature rebuilds
        its comparisons, issue 41): the reading options that are not the default (``columns``, ``where``,
        ``verdict_map``, ``judge``, ``format``), or the scores' ``dataset``, ``subset``, ``aggregation`` and
        ``annotators``.
    tie_tolerance : float or None
        The tie tolerance of the verdicts made from scores (:func:`comparisons_from_scores`); None for
        comparisons read as verdicts. A non-default value is a field of every signature computed from them.
    presented : bool
        Whether ``first`` is the system a judge was shown first (True for files; False for comparisons made
        from scores, whose order is the score file's: the audit's position measures do not apply).
    ratings : dict of str to ndarray, or None
        For comparisons made from scores: each judge's scores, systems x inputs (NaN = missing), the numeric
        ratings behind the verdicts (used by :func:`~metaeval.judges.alt_test` with a numeric alignment).
    """

    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    judges: tuple[str, ...]
    input: np.ndarray
    first: np.ndarray
    second: np.ndarray
    judge: np.ndarray
    verdict: np.ndarray
    repeat: np.ndarray | None = None
    first_length: np.ndarray | None = None
    second_length: np.ndarray | None = None
    source: str = ""
    notes: tuple[str, ...] = field(default=())
    tie_tolerance: float | None = None
    ratings: dict | None = field(default=None, repr=False)
    presented: bool = True
    origin: tuple[tuple[str, str], ...] = ()

    def signature_fields(self) -> dict:
        """The fields every signature computed from these comparisons starts with: ``source``, when the verdicts
        were made from scores with a non-default tie tolerance ``tie_tolerance``, then the ``origin``."""
        return {"source": self.source, **({} if self.tie_tolerance is None else iv.tie_field(self.tie_tolerance)),
                **dict(self.origin)}

    @property
    def n_comparisons(self) -> int:
        return int(self.verdict.size)

    def __len__(self) -> int:
        return self.n_comparisons

    def __repr__(self) -> str:
        return (f"Comparisons({self.source!r}, {self.n_comparisons} comparisons, {len(self.systems)} systems,"
                f" {len(self.inputs)} inputs, {len(self.judges)} judges)")

    def take(self, rows: np.ndarray) -> "Comparisons":
        """The comparisons at ``rows`` (boolean mask or positions), labels unchanged."""
        pick = lambda a: None if a is None else a[rows]  # noqa: E731
        return replace(self, input=self.input[rows], first=self.first[rows], second=self.second[rows],
                       judge=self.judge[rows], verdict=self.verdict[rows], repeat=pick(self.repeat),
                       first_length=pick(self.first_length), second_length=pick(self.second_length))

    def judge_names(self, judges: str | Sequence[str], *, param: str = "judges") -> tuple[str, ...]:
        """The judges named by ``judges``: exact names, or shell-style patterns (``'expert_*'``, ``'mqm/?'``)
        matching several, in the order given (a pattern's matches in the comparisons' order), each once.
        A name or pattern matching no judge is a one-line error listing the judges."""
        from fnmatch import fnmatchcase

        names = (judges,) if isinstance(judges, str) else tuple(judges)
        if not names:
            raise ParameterError(f"`{param}` must name at least one judge; got none.")
        out: dict[str, None] = {}
        for name in names:
            if name in self.judges:
                out[name] = None
                continue
            matched = [j for j in self.judges if any(ch in str(name) for ch in "*?[") and fnmatchcase(j, str(name))]
            if not matched:
                shown = ", ".join(repr(j) for j in self.judges[:10]) + (", ..." if len(self.judges) > 10 else "")
                raise ParameterError(f"`{param}` must name judges of the comparisons ({shown}); got {name!r}.")
            out.update(dict.fromkeys(matched))
        return tuple(out)

    def judged_by(self, judges: str | Sequence[str] | None, *, param: str = "judges") -> "Comparisons":
        """The comparisons of ``judges`` (None: all; names or patterns, :meth:`judge_names`). Unknown names are
        a one-line error listing the judges."""
        if judges is None:
            return self
        codes = [self.judges.index(name) for name in self.judge_names(judges, param=param)]
        return self.take(np.isin(self.judge, codes))

    def oriented(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(low, high, outcome, swapped)``: each comparison as the unordered pair ``low < high`` with
        outcome 0 = low wins, 1 = high wins, 2 = tie, and whether ``first`` was the higher code."""
        swapped = self.first > self.second
        low = np.where(swapped, self.second, self.first)
        high = np.where(swapped, self.first, self.second)
        outcome = self.verdict.astype(np.int64)
        flip = swapped & (outcome != TIE)
        outcome = np.where(flip, 1 - outcome, outcome)
        return low, high, outcome, swapped

    def pair_index(self) -> np.ndarray:
        """Position of each comparison's unordered pair in
        :func:`~metaeval.stats.frameworks.bradley_terry.pairs_of`."""
        n = len(self.systems)
        low, high, _, _ = self.oriented()
        return low * n - low * (low + 1) // 2 + (high - low - 1)

    def pair_counts(self, groups: np.ndarray | None = None, n_groups: int = 1) -> np.ndarray:
        """Counts per unordered pair: shape (P, 3) (low wins, high wins, ties), or (n_groups, P, 3) summed
        within ``groups`` (a group code per comparison, e.g. its input)."""
        n = len(self.systems)
        p = n * (n - 1) // 2
        _, _, outcome, _ = self.oriented()
        cell = self.pair_index() * 3 + outcome
        if groups is None:
            return np.bincount(cell, minlength=3 * p).reshape(p, 3).astype(np.float64)
        flat = np.bincount(groups * (3 * p) + cell, minlength=n_groups * 3 * p)
        return flat.reshape(n_groups, p, 3).astype(np.float64)


def check_verdicts(values: np.ndarray) -> np.ndarray:
    """``values`` (codes 0/1/2) as int8, or a one-line error."""
    v = np.asarray(values)
    bad = ~np.isin(v, (FIRST, SECOND, TIE))
    if bad.any():
        raise ParameterError(f"`verdict` must hold codes 0 (first), 1 (second) or 2 (tie); got {v[bad][0]!r}.")
    return v.astype(np.int8)


def make_comparisons(*, systems, inputs, judges, input, first, second, judge, verdict, repeat=None,
                     first_length=None, second_length=None, source: str = "",
                     tie_tolerance: float | None = None, ratings=None, presented: bool = True,
                     origin: tuple[tuple[str, str], ...] = ()) -> Comparisons:
    """Build :class:`Comparisons` from codes, checking shapes and that no row compares a system with itself."""
    arrays = [np.asarray(a, dtype=np.int64) for a in (input, first, second, judge)]
    verdict = check_verdicts(verdict)
    n = verdict.size
    if any(a.shape != (n,) for a in arrays):
        raise ParameterError("`input`, `first`, `second`, `judge` and `verdict` must be 1-d arrays of one length;"
                             f" got shapes {[a.shape for a in arrays] + [verdict.shape]}.")
    if n == 0:
        raise DegenerateDataError("the comparisons must hold at least one row; got none.")
    for name, codes, labels in (("input", arrays[0], inputs), ("first", arrays[1], systems),
                                ("second", arrays[2], systems), ("judge", arrays[3], judges)):
        bad = np.flatnonzero((codes < 0) | (codes >= len(labels)))
        if bad.size:
            raise ParameterError(f"`{name}` must hold positions in its labels (0 to {len(labels) - 1}); got"
                                 f" {int(codes[bad[0]])} at row {int(bad[0])}.")
    same = np.flatnonzero(arrays[1] == arrays[2])
    if same.size:
        raise ParameterError(f"a comparison must be between two different systems; got {systems[arrays[1][same[0]]]!r}"
                             f" against itself ({same.size} such rows).")
    opt = [None if a is None else np.asarray(a) for a in (repeat, first_length, second_length)]
    return Comparisons(tuple(map(str, systems)), tuple(map(str, inputs)), tuple(map(str, judges)), *arrays, verdict,
                       opt[0], None if opt[1] is None else opt[1].astype(np.float64),
                       None if opt[2] is None else opt[2].astype(np.float64), source, (),
                       None if tie_tolerance is None else float(tie_tolerance), ratings, presented,
                       tuple((str(k), str(v)) for k, v in origin))


def combine_comparisons(parts: Sequence[Comparisons]) -> Comparisons:
    """Several :class:`Comparisons` as one: labels in order of first appearance across the parts, rows in
    order. Repeat ids stay apart per part; a part without lengths gets missing (NaN) lengths when another
    has them. ``source`` joins the parts' sources with ``+``."""
    parts = list(parts)
    if not parts:
        raise ParameterError("`parts` must hold at least one Comparisons; got none.")
    labels: dict[str, dict[str, int]] = {"systems": {}, "inputs": {}, "judges": {}}
    arrays: dict[str, list[np.ndarray]] = {k: [] for k in ("input", "first", "second", "judge", "verdict", "repeat",
                                                          "first_length", "second_length")}
    any_repeat = any(c.repeat is not None for c in parts)
    any_length = any(c.first_length is not None for c in parts)
    offset = 0
    for c in parts:
        remap = {}
        for kind in labels:
            table = labels[kind]
            remap[kind] = np.array([table.setdefault(name, len(table)) for name in getattr(c, kind)], dtype=np.int64)
        arrays["input"].append(remap["inputs"][c.input])
        arrays["first"].append(remap["systems"][c.first])
        arrays["second"].append(remap["systems"][c.second])
        arrays["judge"].append(remap["judges"][c.judge])
        arrays["verdict"].append(c.verdict)
        if any_repeat:
            rep = np.zeros(c.n_comparisons, dtype=np.int64) if c.repeat is None else np.asarray(c.repeat, np.int64)
            arrays["repeat"].append(rep + offset)
            offset += int(rep.max()) + 1 if rep.size else 0
        if any_length:
            for side in ("first_length", "second_length"):
                value = getattr(c, side)
                arrays[side].append(np.full(c.n_comparisons, np.nan) if value is None else value)
    joined = {k: np.concatenate(v) if v else None for k, v in arrays.items()}
    tolerances = {c.tie_tolerance for c in parts}
    origins = {c.origin for c in parts}
    origin = origins.pop() if len(origins) == 1 else tuple(
        (key, "+".join(dict(c.origin).get(key, "none") for c in parts))
        for key in dict.fromkeys(k for c in parts for k, _ in c.origin))
    return make_comparisons(systems=tuple(labels["systems"]), inputs=tuple(labels["inputs"]),
                            judges=tuple(labels["judges"]), **joined, source="+".join(c.source for c in parts),
                            tie_tolerance=tolerances.pop() if len(tolerances) == 1 else None,
                            presented=all(c.presented for c in parts), origin=origin)


def comparisons_from_scores(ds, scorers: str | Sequence[str], *, annotators: bool = False,
                            tie_tolerance: float = defaults.TIE_TOLERANCE) -> Comparisons:
    """Every scorer of ``ds`` as a judge of every pair of systems on every input.

    Parameters
    ----------
    ds : ScoreSet
    scorers : str or sequence of str
        Scorers (metrics or humans) that become judges.
    annotators : bool
        Each annotator of a scorer with several annotators per cell becomes a judge called
        ``'<scorer>/<k>'`` (k from 1); otherwise the scorer's aggregated matrix judges.
    tie_tolerance : float in [0, 0.001], optional
        Relative tolerance under which two scores tie in every rank statistic (Kendall's taus, Spearman, pairwise
        accuracy, acc-eq / tau-eq, the pair signs of the analyses): ``|a - b|`` at most ``tie_tolerance`` times
        the spread of their vector (docs/statistics.md, "The tie rule"). Default
        :data:`metaeval.defaults.TIE_TOLERANCE` (1e-9); 0 compares exactly, as scipy does. A non-default value
        is recorded in the signature.

    Returns
    -------
    Comparisons
        On input m, systems i < j (in ``ds.systems`` order, which is also the order shown) with both
        scores finite: verdict 'first' if ``x_i > x_j``, 'second' if ``x_i < x_j``, 'tie' if the two are
        tied under the tie rule (:func:`metaeval.stats.correlations.ties.are_tied` with the tolerance of the
        input's vector of scores). Higher scores are better. ``source`` names the scorers and
        ``tie_tolerance`` holds the tolerance; every signature computed from the comparisons records both (the
        tolerance in its own field ``tie_tolerance`` when it is not the default).
    """
    ds = iv.check_scoreset(ds)
    rtol = iv.check_tie_tolerance(tie_tolerance)
    names = (scorers,) if isinstance(scorers, str) else tuple(scorers)
    if not names:
        raise ParameterError("`scorers` must name at least one scorer; got none.")
    matrices, judge_names = [], []
    for name in names:
        ds.require(name, param="scorers")
        array = np.asarray(ds.annotations(name), dtype=np.float64)
        if annotators and array.ndim == 3:
            for k in range(array.shape[2]):
                matrices.append(array[:, :, k])
                judge_names.append(f"{name}/{k + 1}")
        else:
            matrices.append(np.asarray(ds.matrix(name), dtype=np.float64))
            judge_names.append(name)
    n_sys, n_inp = ds.shape
    i, j = pairs_of(n_sys)
    parts = []
    for code, x in enumerate(matrices):
        tol = tie_tolerances(x, axis=0, rtol=rtol)  # (1, M): one vector per input
        xi, xj = x[i], x[j]  # (P, M)
        valid = np.isfinite(xi) & np.isfinite(xj)
        tied = are_tied(xi, xj, np.broadcast_to(tol, xi.shape), rtol=rtol)
        verdict = np.where(tied, TIE, np.where(xi > xj, FIRST, SECOND))
        p_idx, m_idx = np.nonzero(valid)
        order = np.lexsort((p_idx, m_idx))  # by input, then pair
        p_idx, m_idx = p_idx[order], m_idx[order]
        parts.append((m_idx, i[p_idx], j[p_idx], np.full(p_idx.size, code), verdict[p_idx, m_idx]))
    cols = [np.concatenate([part[k] for part in parts]) for k in range(5)]
    if cols[0].size == 0:
        raise DegenerateDataError(f"scorers {list(names)!r} give no comparison: no input has two systems scored.")
    return make_comparisons(systems=ds.systems, inputs=ds.inputs, judges=judge_names, input=cols[0], first=cols[1],
                            second=cols[2], judge=cols[3], verdict=cols[4], source=f"scores:{','.join(names)}",
                            tie_tolerance=rtol, ratings=dict(zip(judge_names, matrices)), presented=False,
                            origin=scores_origin(ds, annotators))


def scores_origin(ds: ScoreSet, annotators: bool) -> tuple[tuple[str, str], ...]:
    """The signature fields naming the scores comparisons were made from: ``dataset`` (the ScoreSet's name),
    ``subset`` (its description, when it has one), ``aggregation`` (when not the mean) and ``annotators``."""
    fields = [("dataset", ds.name)]
    if ds.description:
        fields.append(("subset", ds.description))
    if ds.aggregation != DEFAULT_AGGREGATION:
        fields.append(("aggregation", ds.aggregation))
    return (*fields, ("annotators", "yes" if annotators else "no"))


def verdict_names(codes: np.ndarray) -> list[str]:
    """The vocabulary's names of verdict codes."""
    return [VERDICTS[int(c)] for c in codes]
