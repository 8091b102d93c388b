"""Joining two labelled tables of score cells on (system, input): a packaged dataset and the user's metric
file, or two files. :meth:`metaeval.data.scoreset.ScoreSet.merge` is the entry point; this module works on
labels and arrays only (it sits below :mod:`metaeval.data.scoreset`).

The join is an **outer** join on the labels: systems and inputs are the union (the first table's labels in
their order, then the second's new ones), every scorer keeps all its cells, and a cell that one side lacks
is NaN. Nothing is dropped, overwritten or mispaired silently:

- a scorer present in both tables is an error unless the two agree on every cell both have (then its
  cells are combined, and a note says so);
- the join matching no (system, input) cell at all is an error (usually the wrong label column);
- labels that look **shifted by one** (integer ids of which more match after adding or subtracting 1:
  0-based segment ids against 1-based ones) are an error, and so are labels left unmatched **on both
  sides** of one axis (each table has systems, or inputs, that the other lacks): a judged subset explains
  the unmatched labels of one side, not of both. Both errors show the first labels of both tables and
  are lifted by ``allow_unmatched=True`` (CLI ``--allow-unmatched``) when the mismatch is intended;
- systems, inputs and cells present on one side only are counted and named (first examples), per table,
  in the :class:`JoinReport`, whose lines the merge raises, each as a :class:`~metaeval.errors.DataWarning`.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ScoreSetError

_SHOWN = 3
_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")


@dataclass(frozen=True)
class LabelledCells:
    """One side of a join: its name, its labels and its scorers' cells.

    Attributes
    ----------
    name : str
        How messages name the table (a file stem or a dataset name).
    systems, inputs : sequence of str
        The labels of the N rows and M columns.
    scores : mapping of str to numpy.ndarray
        Scorer -> ``(N, M)`` or ``(N, M, A)`` cells, NaN where missing.
    """

    name: str
    systems: Sequence[str]
    inputs: Sequence[str]
    scores: Mapping[str, np.ndarray]


@dataclass(frozen=True)
class JoinReport:
    """What an outer join of ``left`` and ``right`` matched and what it did not.

    Attributes
    ----------
    left, right : str
        Names of the two tables.
    systems_only_left, systems_only_right, inputs_only_left, inputs_only_right : tuple of str
        Labels found on one side only.
    cells_matched : int
        (system, input) cells with at least one score on both sides.
    cells_only_left, cells_only_right : int
        Cells with a score on one side only.
    examples_only_left, examples_only_right : tuple of (str, str)
        The first of those cells, as (system, input), in each table's order.
    combined_scorers : tuple of str
        Scorers present on both sides with equal values wherever both have one (their cells combined).
    """

    left: str
    right: str
    systems_only_left: tuple[str, ...]
    systems_only_right: tuple[str, ...]
    inputs_only_left: tuple[str, ...]
    inputs_only_right: tuple[str, ...]
    cells_matched: int
    cells_only_left: int
    cells_only_right: int
    combined_scorers: tuple[str, ...]
    examples_only_left: tuple[tuple[str, str], ...] = ()
    examples_only_right: tuple[tuple[str, str], ...] = ()

    def lines(self) -> list[str]:
        """One line per mismatch, per table, with counts and the first examples; empty for a perfect join."""
        out = []
        for what, only, side, other in (
            ("systems", self.systems_only_left, self.left, self.right),
            ("systems", self.systems_only_right, self.right, self.left),
            ("inputs", self.inputs_only_left, self.left, self.right),
            ("inputs", self.inputs_only_right, self.right, self.left),
        ):
            if only:
                out.append(f"join {self.left} + {self.right}: {len(only)} {what} of {side} match nothing in"
                           f" {other}: {_examples(only)}.")
        for count, examples, side, other in ((self.cells_only_left, self.examples_only_left, self.left, self.right),
                                             (self.cells_only_right, self.examples_only_right, self.right, self.left)):
            if count:
                shown = f": {_examples(examples, count)}" if examples else ""
                out.append(f"join {self.left} + {self.right}: {count} of {count + self.cells_matched} scored cells"
                           f" of {side} have no score in {other} (kept; NaN there){shown}.")
        if self.combined_scorers:
            out.append(f"join {self.left} + {self.right}: scorers in both, equal wherever both have a score,"
                       f" combined: {_examples(self.combined_scorers)}.")
        return out


def _examples(labels: Sequence, total: int | None = None) -> str:
    total = len(labels) if total is None else total
    shown = ", ".join(repr(s) for s in labels[:_SHOWN])
    return shown + (f", ... ({total - _SHOWN} more)" if total > _SHOWN else "")


def _scored(table: LabelledCells) -> np.ndarray:
    """(N, M) cells with at least one score of any scorer."""
    present = np.zeros((len(table.systems), len(table.inputs)), dtype=bool)
    for array in table.scores.values():
        present |= ~np.isnan(array) if array.ndim == 2 else ~np.isnan(array).all(axis=2)
    return present


def _placed(array: np.ndarray, rows: list[int], cols: list[int], shape: tuple[int, int]) -> np.ndarray:
    out = np.full(shape + array.shape[2:], np.nan)
    out[np.ix_(rows, cols)] = array
    return out


def _first_cells(present: np.ndarray, systems: Sequence[str], inputs: Sequence[str]) -> tuple[tuple[str, str], ...]:
    rows, cols = np.nonzero(present)
    return tuple((systems[i], inputs[j]) for i, j in zip(rows[:_SHOWN], cols[:_SHOWN]))


def shifted_by(left: Sequence[str], right: Sequence[str]) -> int:
    """The shift ``d`` in (+1, -1) for which more integer labels of ``left`` equal a label of ``right`` plus
    ``d`` than equal one unshifted; 0 when the labels are not all integers or no shift matches better."""
    if not left or not right or not all(_INTEGER.fullmatch(x) for x in (*left, *right)):
        return 0
    mine, theirs = {int(x) for x in left}, [int(x) for x in right]
    plain = len(mine.intersection(theirs))
    best, shift = plain, 0
    for d in (1, -1):
        matched = len(mine.intersection(x + d for x in theirs))
        if matched > best:
            best, shift = matched, d
    return shift


def _check_unmatched(lname: str, rname: str, axis: str, left: Sequence[str], right: Sequence[str],
                     only_left: tuple[str, ...], only_right: tuple[str, ...]) -> None:
    """Refuse labels of one axis that look shifted by one, or that are unmatched on both sides."""
    shift = shifted_by(left, right)
    if not shift and not (only_left and only_right):
        return
    first = f"first {axis} of {lname}: {_examples(left)}; of {rname}: {_examples(right)}"
    if shift:
        matched = len({int(x) for x in left}.intersection(int(x) + shift for x in right))
        problem = (f"{axis} that look shifted by one (the labels of {rname} {shift:+d} match {matched} of the"
                   f" {len(left)} of {lname}, unshifted {len(left) - len(only_left)}: 0-based against 1-based ids?)")
    else:
        problem = (f"{axis} unmatched on both sides ({len(only_left)} of {lname}: {_examples(only_left)};"
                   f" {len(only_right)} of {rname}: {_examples(only_right)}), which no judged subset explains")
    raise ScoreSetError(f"the join of {lname} and {rname} must pair the same {axis}; got {problem}; {first}"
                        " (fix the labels, or pass allow_unmatched=True / --allow-unmatched if this is intended).")


def outer_join(left: LabelledCells, right: LabelledCells, *, allow_unmatched: bool = False
               ) -> tuple[list[str], list[str], dict[str, np.ndarray], JoinReport]:
    """The outer join of ``left`` and ``right`` on (system, input): its systems, inputs, scores and report.

    Parameters
    ----------
    left, right : LabelledCells
    allow_unmatched : bool
        Join even when an axis's labels look shifted by one or are unmatched on both sides.

    Raises
    ------
    ScoreSetError
        If no (system, input) cell has scores on both sides; if (unless ``allow_unmatched``) the systems or
        inputs look shifted by one or each side has labels of one axis that the other lacks; if a scorer of
        both sides disagrees on a cell both have (or has annotator axes of different sizes).
    """
    lname, rname = left.name, right.name
    lsys, rsys = set(left.systems), set(right.systems)
    linp, rinp = set(left.inputs), set(right.inputs)
    systems = list(left.systems) + [s for s in right.systems if s not in lsys]
    inputs = list(left.inputs) + [j for j in right.inputs if j not in linp]
    shape = (len(systems), len(inputs))
    sys_pos, inp_pos = {s: i for i, s in enumerate(systems)}, {j: k for k, j in enumerate(inputs)}
    lrows, lcols = [sys_pos[s] for s in left.systems], [inp_pos[j] for j in left.inputs]
    rrows, rcols = [sys_pos[s] for s in right.systems], [inp_pos[j] for j in right.inputs]
    lscored, rscored = _scored(left), _scored(right)
    lcells = _placed(lscored.astype(float), lrows, lcols, shape) == 1.0
    rcells = _placed(rscored.astype(float), rrows, rcols, shape) == 1.0
    matched = int((lcells & rcells).sum())
    if matched == 0:
        raise ScoreSetError(
            f"the join of {lname} and {rname} on (system, input) must match at least one cell; got none"
            f" (systems {_examples(tuple(left.systems))} vs {_examples(tuple(right.systems))}; inputs"
            f" {_examples(tuple(left.inputs))} vs {_examples(tuple(right.inputs))})."
        )
    only = {"systems": (tuple(s for s in left.systems if s not in rsys), tuple(s for s in right.systems if s not in lsys)),
            "inputs": (tuple(j for j in left.inputs if j not in rinp), tuple(j for j in right.inputs if j not in linp))}
    if not allow_unmatched:
        _check_unmatched(lname, rname, "inputs", left.inputs, right.inputs, *only["inputs"])
        _check_unmatched(lname, rname, "systems", left.systems, right.systems, *only["systems"])
    scores: dict[str, np.ndarray] = {}
    combined = []
    for scorer, array in left.scores.items():
        scores[scorer] = _placed(np.asarray(array), lrows, lcols, shape)
    for scorer, array in right.scores.items():
        placed = _placed(np.asarray(array), rrows, rcols, shape)
        if scorer not in scores:
            scores[scorer] = placed
            continue
        mine = scores[scorer]
        both = ~np.isnan(mine) & ~np.isnan(placed) if mine.shape == placed.shape else None
        if both is None or not np.array_equal(mine[both], placed[both]):
            raise ScoreSetError(
                f"scorer {scorer!r} must have one meaning in a join; got it in both {lname} and {rname} with"
                " different values (rename one of the columns)."
            )
        scores[scorer] = np.where(np.isnan(mine), placed, mine)
        combined.append(scorer)
    lonly = lscored & ~rcells[np.ix_(lrows, lcols)]
    ronly = rscored & ~lcells[np.ix_(rrows, rcols)]
    report = JoinReport(
        left=lname, right=rname,
        systems_only_left=only["systems"][0], systems_only_right=only["systems"][1],
        inputs_only_left=only["inputs"][0], inputs_only_right=only["inputs"][1],
        cells_matched=matched, cells_only_left=int(lonly.sum()), cells_only_right=int(ronly.sum()),
        combined_scorers=tuple(combined),
        examples_only_left=_first_cells(lonly, left.systems, left.inputs),
        examples_only_right=_first_cells(ronly, right.systems, right.inputs),
    )
    return systems, inputs, scores, report
