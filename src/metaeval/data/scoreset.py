"""The score model: named systems x inputs score matrices for one dataset.

A :class:`ScoreSet` holds any number of named scorers (automatic metrics and human judgments) over the
same two axes: ``systems`` (N labels) and ``inputs`` (M labels). Missing cells are NaN. A scorer may
carry a third axis of annotators (several human judgments per cell), kept until a statistic needs one
number per cell; then the ScoreSet's ``aggregation`` ('mean' by default, 'median', or 'z-mean': each
annotator z-normalized over all cells, then averaged) turns it into an N x M matrix, and the choice is
recorded in every signature.
"""
from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import defaults
from ..errors import DataWarning, ParameterError, ScoreSetError, check_choice
from .join import LabelledCells, outer_join

AGGREGATIONS = ("mean", "median", "z-mean")
DEFAULT_AGGREGATION = "mean"


def _labels(name: str, values: Iterable[Any]) -> tuple[str, ...]:
    labels = tuple(str(v) for v in values)
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise ScoreSetError(f"`{name}` must hold unique labels; got {label!r} twice.")
        seen.add(label)
    return labels


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _check_magnitude(scorer, array: np.ndarray) -> None:
    """Refuse scores too large to be summed and averaged (:data:`metaeval.defaults.MAX_SCORE_MAGNITUDE`)."""
    if array.size == 0:
        return
    with np.errstate(invalid="ignore"):
        top = np.fmax.reduce(np.abs(array), axis=None)
    if top > defaults.MAX_SCORE_MAGNITUDE:
        raise ScoreSetError(
            f"scores of {scorer!r} must be at most {defaults.MAX_SCORE_MAGNITUDE:g} in magnitude (sums and means of"
            f" larger values overflow); got {top:g}. Divide them by a constant: no correlation changes."
        )


UNMATCHED_ALLOWED = "join:unmatched-allowed"
"""What a join with ``allow_unmatched=True`` adds to the description (and so to every signature)."""

class ScoreSet:
    """Named score matrices (systems x inputs, NaN = missing) of one dataset.

    Parameters
    ----------
    scores : mapping of str to array_like
        Scorer name -> array of shape (N, M), or (N, M, A) for A annotators per cell.
        Names flatten nested fields with dots: ``rouge-2.recall``, ``expert.relevance``.
    systems, inputs : sequence of str
        Unique labels of the N rows and the M columns.
    humans : iterable of str, optional
        The scorers that are human judgments (the others are metrics).
    name : str, optional
        Dataset name, recorded in signatures.
    aggregation : {'mean', 'median', 'z-mean'}
        How several annotators per cell become one score.
    description : str, optional
        How this set was derived (e.g. a label subset), recorded in signatures.
    """

    def __init__(
        self,
        scores: Mapping[str, Any],
        *,
        systems: Sequence[Any],
        inputs: Sequence[Any],
        humans: Iterable[str] = (),
        name: str | None = None,
        aggregation: str = DEFAULT_AGGREGATION,
        description: str | None = None,
    ):
        self._systems = _labels("systems", systems)
        self._inputs = _labels("inputs", inputs)
        shape = (len(self._systems), len(self._inputs))
        self._scores: dict[str, np.ndarray] = {}
        for scorer, values in scores.items():
            try:
                array = np.array(values, dtype=float)
            except (TypeError, ValueError):
                raise ScoreSetError(
                    f"scores of {scorer!r} must be numeric; got values of type {type(values).__name__}."
                ) from None
            if array.ndim not in (2, 3) or array.shape[:2] != shape:
                raise ScoreSetError(
                    f"scores of {scorer!r} must have shape (systems, inputs) = {shape}"
                    f" or (systems, inputs, annotators); got {array.shape}."
                )
            if np.isinf(array).any():
                raise ScoreSetError(f"scores of {scorer!r} must be finite or NaN; got an infinite value.")
            _check_magnitude(scorer, array)
            self._scores[str(scorer)] = _frozen(array)
        humans = tuple(humans)
        for human in humans:
            if human not in self._scores:
                raise ScoreSetError(self._unknown_message("humans", human))
        self._humans = tuple(h for h in self._scores if h in set(humans))
        self._name = name
        self._aggregation = check_choice("aggregation", aggregation, AGGREGATIONS)
        self._description = description
        self._matrix_cache: dict[str, np.ndarray] = {}

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_matrices(
        cls,
        scores: Mapping[str, Any],
        *,
        systems: Sequence[Any] | None = None,
        inputs: Sequence[Any] | None = None,
        humans: Iterable[str] = (),
        name: str | None = None,
        aggregation: str = DEFAULT_AGGREGATION,
    ) -> "ScoreSet":
        """Build a ScoreSet from numpy matrices (N x M, or N x M x annotators; NaN = missing).

        Labels default to ``"0" .. "N-1"`` and ``"0" .. "M-1"``.
        """
        if not scores:
            raise ScoreSetError("`scores` must hold at least one scorer; got an empty mapping.")
        first = np.asarray(next(iter(scores.values())))
        if first.ndim < 2:
            raise ScoreSetError(f"scores must be matrices of shape (systems, inputs); got shape {first.shape}.")
        if systems is None:
            systems = [str(i) for i in range(first.shape[0])]
        if inputs is None:
            inputs = [str(j) for j in range(first.shape[1])]
        return cls(scores, systems=systems, inputs=inputs, humans=humans, name=name, aggregation=aggregation)

    def _replace(self, **changes: Any) -> "ScoreSet":
        state = dict(
            scores=self._scores,
            systems=self._systems,
            inputs=self._inputs,
            humans=self._humans,
            name=self._name,
            aggregation=self._aggregation,
            description=self._description,
        )
        state.update(changes)
        scores = state.pop("scores")
        return ScoreSet(scores, **state)

    # -- labels ---------------------------------------------------------------------------------
    @property
    def name(self) -> str | None:
        return self._name

    @property
    def systems(self) -> tuple[str, ...]:
        return self._systems

    @property
    def inputs(self) -> tuple[str, ...]:
        return self._inputs

    @property
    def scorers(self) -> tuple[str, ...]:
        return tuple(self._scores)

    @property
    def humans(self) -> tuple[str, ...]:
        return self._humans

    @property
    def default_human(self) -> str | None:
        """The human scorer a command uses when none is named: the only human, or the one human ``H`` of which
        every other human is a part ``H.<name>`` (an averaged gold and its raters, as
        :func:`~metaeval.data.mqm_ratings.read_mqm_ratings` reads them); else None."""
        if len(self._humans) == 1:
            return self._humans[0]
        whole = [h for h in self._humans if all(o == h or o.startswith(h + ".") for o in self._humans)]
        return whole[0] if len(whole) == 1 else None

    @property
    def metrics(self) -> tuple[str, ...]:
        """Scorers that are not human judgments."""
        return tuple(s for s in self._scores if s not in self._humans)

    @property
    def aggregation(self) -> str:
        return self._aggregation

    @property
    def description(self) -> str | None:
        return self._description

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self._systems), len(self._inputs))

    def __contains__(self, scorer: object) -> bool:
        return scorer in self._scores

    def __repr__(self) -> str:
        name = f"{self._name!r}, " if self._name else ""
        return (
            f"ScoreSet({name}{len(self._systems)} systems x {len(self._inputs)} inputs, "
            f"{len(self._scores)} scorers, humans={list(self._humans)})"
        )

    def _unknown_message(self, param: str, scorer: Any) -> str:
        import difflib

        known = list(self._scores)
        listed = ", ".join(repr(s) for s in known[:12]) + (", ..." if len(known) > 12 else "")
        message = f"`{param}` must name a scorer of this ScoreSet ({listed}); got {scorer!r}."
        if isinstance(scorer, str):  # names differing only in case first ('MoverScore' -> 'moverscore')
            same = [k for k in known if k.lower() == scorer.lower()]
            lower = {k.lower(): k for k in reversed(known)}
            close = [lower[c] for c in difflib.get_close_matches(scorer.lower(), list(lower), n=3, cutoff=0.6)]
            suggested = list(dict.fromkeys(same + close))[:3]
            if suggested:
                message = message[:-1] + f" (did you mean {' or '.join(repr(s) for s in suggested)}?)."
        return message

    def require(self, scorer: str, *, param: str = "scorer") -> str:
        """Return ``scorer`` if this ScoreSet holds it; raise :class:`ScoreSetError` otherwise."""
        if scorer not in self._scores:
            raise ScoreSetError(self._unknown_message(param, scorer))
        return scorer

    # -- values ---------------------------------------------------------------------------------
    def annotations(self, scorer: str) -> np.ndarray:
        """The stored (read-only) array of ``scorer``: (N, M), or (N, M, A) with annotators."""
        try:
            return self._scores[scorer]
        except KeyError:  # the message of require
            raise ScoreSetError(self._unknown_message("scorer", scorer)) from None

    def n_annotators(self, scorer: str) -> int:
        """Number of annotators per cell (1 for a plain matrix)."""
        array = self.annotations(scorer)
        return 1 if array.ndim == 2 else array.shape[2]

    def matrix(self, scorer: str) -> np.ndarray:
        """The N x M matrix of ``scorer`` (annotators aggregated with ``self.aggregation``), read-only."""
        cached = self._matrix_cache.get(scorer)
        if cached is not None:
            return cached
        array = self.annotations(scorer)
        if array.ndim == 3:
            array = _aggregate(array, self._aggregation)
        else:
            array = array.copy()
        self._matrix_cache[scorer] = _frozen(array)
        return self._matrix_cache[scorer]

    def __getitem__(self, scorer: str) -> np.ndarray:
        return self.matrix(scorer)

    # -- derived sets ---------------------------------------------------------------------------
    def with_aggregation(self, aggregation: str) -> "ScoreSet":
        """A copy that aggregates annotators with ``aggregation`` ('mean', 'median' or 'z-mean')."""
        return self._replace(aggregation=check_choice("aggregation", aggregation, AGGREGATIONS))

    def with_system_names(self, names: Mapping[str, str], *, param: str = "names") -> "ScoreSet":
        """A copy with systems renamed, old -> new (a file's misspelt or differently written system names, so
        that a join pairs them); the renaming is recorded in the description (the signature's ``subset``).

        Raises
        ------
        ParameterError
            An old name that is not a system (with the closest one), or two systems given one name.
        """
        if not isinstance(names, Mapping):
            raise ParameterError(f"`{param}` must map old system names to new ones; got {type(names).__name__}.")
        for old in names:
            if old not in self._systems:
                raise ParameterError(f"`{param}` must rename systems of this ScoreSet; got {old!r}"
                                     f"{_suggestion(str(old), tuple(self._systems))}.")
        renamed = [str(names.get(s, s)) for s in self._systems]
        twice = next((n for n in dict.fromkeys(renamed) if renamed.count(n) > 1), None)
        if twice is not None:
            raise ParameterError(f"`{param}` must leave every system its own name; got {twice!r} for"
                                 f" {', '.join(repr(s) for s, n in zip(self._systems, renamed) if n == twice)}.")
        changed = [f"{old}->{names[old]}" for old in self._systems if old in names and names[old] != old]
        if not changed:
            return self
        note = "systems renamed: " + ",".join(changed)
        return self._replace(systems=renamed, description="; ".join(p for p in (self._description, note) if p))

    def with_humans(self, humans: Iterable[str]) -> "ScoreSet":
        """A copy in which exactly ``humans`` are the human scorers."""
        return self._replace(humans=tuple(humans))

    def subset(
        self,
        *,
        systems: Iterable[str] | None = None,
        inputs: Iterable[str] | None = None,
        scorers: Iterable[str] | None = None,
        name: str | None = None,
        description: str | None = None,
    ) -> "ScoreSet":
        """A ScoreSet restricted to the given system / input labels and scorers (order as given)."""
        rows = self._positions("systems", self._systems, systems)
        cols = self._positions("inputs", self._inputs, inputs)
        keep = self._scores if scorers is None else {s: None for s in scorers}
        scores = {}
        for scorer in keep:
            array = self.annotations(scorer)
            scores[scorer] = array[np.ix_(rows, cols)] if array.ndim == 2 else array[np.ix_(rows, cols, np.arange(array.shape[2]))]
        parts = [p for p in (self._description, description) if p]
        if description is None and systems is not None:
            parts.append(_describe_labels("systems", [self._systems[i] for i in rows], len(self._systems)))
        if description is None and inputs is not None:
            parts.append(_describe_labels("inputs", [self._inputs[j] for j in cols], len(self._inputs)))
        return ScoreSet(
            scores,
            systems=[self._systems[i] for i in rows],
            inputs=[self._inputs[j] for j in cols],
            humans=[h for h in self._humans if h in scores],
            name=self._name if name is None else name,
            aggregation=self._aggregation,
            description="; ".join(parts) or None,
        )

    @staticmethod
    def _positions(param: str, labels: tuple[str, ...], wanted: Iterable[str] | None) -> list[int]:
        if wanted is None:
            return list(range(len(labels)))
        if isinstance(wanted, str):
            raise ParameterError(f"`{param}` must be a list of labels; got the string {wanted!r}.")
        index = {label: i for i, label in enumerate(labels)}
        positions = []
        for label in wanted:
            if str(label) not in index:
                raise ScoreSetError(f"`{param}` must hold labels of this ScoreSet; got {label!r}{_suggestion(label, labels)}.")
            positions.append(index[str(label)])
        if not positions:
            raise ScoreSetError(f"`{param}` must select at least one label; got an empty selection.")
        return positions

    def merge(self, other: "ScoreSet", *, allow_unmatched: bool = False) -> "ScoreSet":
        """This set joined with ``other`` on (system, input): the outer join of
        :func:`metaeval.data.join.outer_join` (labels and cells of both; NaN where one lacks a cell).

        Systems, inputs and cells found on one side only are reported, one
        :class:`~metaeval.errors.DataWarning` per kind and side with counts and first examples. A scorer of
        both sides with different values, or a join matching no cell, is a :class:`ScoreSetError`; so are
        integer labels that match better shifted by one (0-based against 1-based ids) and systems or inputs
        unmatched on both sides, unless ``allow_unmatched=True`` says the mismatch is intended; the joined
        set's description (the signature's ``subset``) then ends in :data:`UNMATCHED_ALLOWED`.

        Examples
        --------
        >>> ds = load_dataset("wmt20-mqm-ende").merge(read_scores("my_metric.csv"))  # doctest: +SKIP
        """
        if not isinstance(other, ScoreSet):
            raise ParameterError(f"`other` must be a ScoreSet; got {type(other).__name__}.")
        if not isinstance(allow_unmatched, bool):
            raise ParameterError(f"`allow_unmatched` must be True or False; got {allow_unmatched!r}.")
        lname, rname = self.name or "left", other.name or "right"
        systems, inputs, scores, report = outer_join(
            LabelledCells(lname, self.systems, self.inputs, {s: self.annotations(s) for s in self.scorers}),
            LabelledCells(rname, other.systems, other.inputs, {s: other.annotations(s) for s in other.scorers}),
            allow_unmatched=allow_unmatched)
        for line in report.lines():
            warnings.warn(line, DataWarning, stacklevel=2)
        parts = _joined_descriptions((lname, self.description), (rname, other.description))
        if allow_unmatched:  # a setting of the join: the signature says it was allowed
            parts = [p for p in parts if p != UNMATCHED_ALLOWED] + [UNMATCHED_ALLOWED]
        return self._replace(scores=scores, systems=systems, inputs=inputs, name=f"{lname}+{rname}",
                             humans=tuple(dict.fromkeys((*self.humans, *other.humans))),
                             description="; ".join(parts) or None)

    # -- tables ---------------------------------------------------------------------------------
    def to_frame(self):
        """A wide pandas DataFrame: one row per (system, input), one column per scorer (aggregated)."""
        import pandas as pd

        n, m = self.shape
        frame = pd.DataFrame(
            {
                "system": np.repeat(np.array(self._systems, dtype=object), m),
                "input": np.tile(np.array(self._inputs, dtype=object), n),
            }
        )
        for scorer in self._scores:
            frame[scorer] = self.matrix(scorer).reshape(-1)
        return frame

    def describe(self) -> dict[str, Any]:
        """Counts a reader wants first: systems, inputs, annotators and missing cells per scorer
        (``missing_ratings``: annotator ratings missing in all, including those of cells that other
        annotators rated, which the cell count does not show; equal to ``missing_cells`` without annotators)."""
        return {
            "name": self._name,
            "systems": len(self._systems),
            "inputs": len(self._inputs),
            "aggregation": self._aggregation,
            "description": self._description,
            "scorers": [
                {
                    "scorer": s,
                    "human": s in self._humans,
                    "annotators": self.n_annotators(s),
                    "missing_cells": int(np.isnan(self.matrix(s)).sum()),
                    "missing_ratings": int(np.isnan(self.annotations(s)).sum()),
                }
                for s in self._scores
            ],
        }

    def signature_fields(self) -> dict[str, Any]:
        """The dataset part of a result signature."""
        return {
            "dataset": self._name or "user",
            "systems": len(self._systems),
            "inputs": len(self._inputs),
            "subset": self._description,
            "aggregation": self._aggregation,
        }


def _describe_labels(axis: str, labels: list[str], total: int) -> str:
    """A reproducible description of a label subset: the labels, or their count and a digest."""
    if len(labels) <= 8:
        return f"{axis}=" + ",".join(labels)
    digest = hashlib.sha1("\n".join(labels).encode("utf-8")).hexdigest()[:10]
    return f"{len(labels)} of {total} {axis} (sha1 {digest})"


def _aggregate(array: np.ndarray, aggregation: str) -> np.ndarray:

    with warnings.catch_warnings():
        # An all-NaN cell stays NaN; numpy's "mean of empty slice" warning says nothing more.
        warnings.filterwarnings("ignore", category=RuntimeWarning, message=".*(empty slice|All-NaN).*")
        if aggregation == "mean":
            return np.nanmean(array, axis=2)
        if aggregation == "median":
            return np.nanmedian(array, axis=2)
        mean = np.nanmean(array, axis=(0, 1), keepdims=True)
        std = np.nanstd(array, axis=(0, 1), keepdims=True)
        std = np.where(std > 0, std, 1.0)
        return np.nanmean((array - mean) / std, axis=2)


def _suggestion(label: object, labels: tuple[str, ...]) -> str:
    """`` (did you mean 'Human-A.0'?)`` for the closest label, else `` (labels: 'a', 'b', ...)``."""
    import difflib

    text = str(label)
    close = difflib.get_close_matches(text, labels, n=1, cutoff=0.6)
    if not close:
        low = text.lower()
        close = sorted((lab for lab in labels if low in lab.lower() or lab.lower() in low),
                       key=lambda lab: abs(len(lab) - len(text)))[:1]
    if close:
        return f" (did you mean {close[0]!r}?)"
    shown = ", ".join(repr(lab) for lab in labels[:5]) + (", ..." if len(labels) > 5 else "")
    return f" (labels: {shown})"


def _joined_descriptions(*sides: tuple[str, str | None]) -> list[str]:
    """The description of a join: the parts every side shares once; a part only some sides have prefixed with
    that side's name (``ratings: columns system=model``), unless the side is itself a join (``a+b``), whose
    parts are already named that way or shared."""
    split = [(name, [p for p in (description or "").split("; ") if p]) for name, description in sides]
    shared = [p for p in split[0][1] if all(p in parts for _, parts in split[1:])]
    out = list(shared)
    for name, parts in split:
        out += [p if "+" in name else f"{name}: {p}" for p in parts if p not in shared and p not in out]
    return out
