"""Joining two ScoreSets on (system, input): a packaged dataset and the user's metric file, or two files.

The join is an **outer** join on the labels: systems and inputs are the union (the first set's labels in
their order, then the second's new ones), every scorer keeps all its cells, and a cell that one side
lacks is NaN. Nothing is dropped or overwritten silently:

- a scorer present in both sets is an error unless the two agree on every cell both have (then its
  cells are combined, and a note says so);
- the join matching no (system, input) cell at all is an error (usually the wrong label column);
- systems, inputs and cells present on one side only are counted and shown (first examples) in the
  :class:`JoinReport`, whose lines :meth:`ScoreSet.merge` raises, each as a :class:`~metaeval.errors.DataWarning`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataWarning, ScoreSetError

if TYPE_CHECKING:  # ScoreSet.merge calls this module, which builds the result with the left set's _replace
    from .scoreset import ScoreSet

_SHOWN = 3


@dataclass(frozen=True)
class JoinReport:
    """What an outer join of ``left`` and ``right`` matched and what it did not.

    Attributes
    ----------
    left, right : str
        Names of the two sets.
    systems_only_left, systems_only_right, inputs_only_left, inputs_only_right : tuple of str
        Labels found on one side only.
    cells_matched : int
        (system, input) cells with at least one score on both sides.
    cells_only_left, cells_only_right : int
        Cells with a score on one side only.
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

    def lines(self) -> list[str]:
        """One line per mismatch, with counts and the first examples; empty for a perfect join."""
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
        for count, side, other in ((self.cells_only_left, self.left, self.right),
                                   (self.cells_only_right, self.right, self.left)):
            if count:
                out.append(f"join {self.left} + {self.right}: {count} of {count + self.cells_matched} scored cells"
                           f" of {side} have no score in {other} (kept; NaN there).")
        if self.combined_scorers:
            out.append(f"join {self.left} + {self.right}: scorers in both, equal wherever both have a score,"
                       f" combined: {_examples(self.combined_scorers)}.")
        return out


def _examples(labels: tuple[str, ...]) -> str:
    shown = ", ".join(repr(s) for s in labels[:_SHOWN])
    return shown + (f", ... ({len(labels) - _SHOWN} more)" if len(labels) > _SHOWN else "")


def _scored(ds: ScoreSet) -> np.ndarray:
    """(N, M) cells with at least one score of any scorer."""
    present = np.zeros(ds.shape, dtype=bool)
    for scorer in ds.scorers:
        array = ds.annotations(scorer)
        present |= ~np.isnan(array) if array.ndim == 2 else ~np.isnan(array).all(axis=2)
    return present


def _placed(array: np.ndarray, rows: list[int], cols: list[int], shape: tuple[int, int]) -> np.ndarray:
    out = np.full(shape + array.shape[2:], np.nan)
    out[np.ix_(rows, cols)] = array
    return out


def merge_scoresets(left: ScoreSet, right: ScoreSet) -> tuple[ScoreSet, JoinReport]:
    """The outer join of ``left`` and ``right`` on (system, input) and its :class:`JoinReport`.

    Raises
    ------
    ScoreSetError
        If no (system, input) cell has scores on both sides, or a scorer of both sides disagrees on a
        cell both have (or has annotator axes of different sizes).
    """
    lname, rname = left.name or "left", right.name or "right"
    systems = list(left.systems) + [s for s in right.systems if s not in set(left.systems)]
    inputs = list(left.inputs) + [j for j in right.inputs if j not in set(left.inputs)]
    shape = (len(systems), len(inputs))
    sys_pos, inp_pos = {s: i for i, s in enumerate(systems)}, {j: k for k, j in enumerate(inputs)}
    lrows, lcols = [sys_pos[s] for s in left.systems], [inp_pos[j] for j in left.inputs]
    rrows, rcols = [sys_pos[s] for s in right.systems], [inp_pos[j] for j in right.inputs]
    lcells = _placed(_scored(left).astype(float), lrows, lcols, shape) == 1.0
    rcells = _placed(_scored(right).astype(float), rrows, rcols, shape) == 1.0
    matched = int((lcells & rcells).sum())
    if matched == 0:
        raise ScoreSetError(
            f"the join of {lname} and {rname} on (system, input) must match at least one cell; got none"
            f" (systems {_examples(tuple(left.systems))} vs {_examples(tuple(right.systems))}; inputs"
            f" {_examples(tuple(left.inputs))} vs {_examples(tuple(right.inputs))})."
        )
    scores: dict[str, np.ndarray] = {}
    combined = []
    for scorer in left.scorers:
        scores[scorer] = _placed(np.asarray(left.annotations(scorer)), lrows, lcols, shape)
    for scorer in right.scorers:
        placed = _placed(np.asarray(right.annotations(scorer)), rrows, rcols, shape)
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
    humans = tuple(dict.fromkeys((*left.humans, *right.humans)))
    report = JoinReport(
        left=lname, right=rname,
        systems_only_left=tuple(s for s in left.systems if s not in set(right.systems)),
        systems_only_right=tuple(s for s in right.systems if s not in set(left.systems)),
        inputs_only_left=tuple(j for j in left.inputs if j not in set(right.inputs)),
        inputs_only_right=tuple(j for j in right.inputs if j not in set(left.inputs)),
        cells_matched=matched, cells_only_left=int((lcells & ~rcells).sum()),
        cells_only_right=int((rcells & ~lcells).sum()), combined_scorers=tuple(combined),
    )
    parts = [p for p in (left.description, right.description) if p]
    merged = left._replace(scores=scores, systems=systems, inputs=inputs, humans=humans, name=f"{lname}+{rname}",
                           aggregation=left.aggregation, description="; ".join(parts) or None)
    return merged, report


def merge(left: ScoreSet, right: ScoreSet) -> ScoreSet:
    """:func:`merge_scoresets`, raising each line of the report as a :class:`DataWarning`."""
    merged, report = merge_scoresets(left, right)
    for line in report.lines():
        warnings.warn(line, DataWarning, stacklevel=3)
    return merged
