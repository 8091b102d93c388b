"""The cell rules of comparison files shared by the row-wise reader (:mod:`metaeval.judges.reader`) and the
column-wise one (:mod:`metaeval.judges.columnar_reader`): the roles and their default columns, a cell as a
label, the verdict vocabulary, the mapping of roles to columns, and the warnings both readers give."""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..data.formats import MISSING_TOKENS
from ..errors import DataWarning, InputFileError, ParameterError
from ..vocabulary import VERDICT_ALIASES, VERDICTS

ROLES = ("input", "first", "second", "judge", "verdict", "repeat", "first_length", "second_length", "shown_first")
DEFAULT_COLUMNS = {
    "input": ("input", "instance_id", "question_id"),
    "first": ("first", "system_a", "model_a"),
    "second": ("second", "system_b", "model_b"),
    "judge": ("judge", "annotator", "judge_id"),
    "verdict": ("verdict", "winner"),
    "repeat": ("repeat",),
    "first_length": ("first_length", "length_a"),
    "second_length": ("second_length", "length_b"),
    "shown_first": ("shown_first",),
}
REQUIRED = ("input", "first", "second", "verdict")
_VERDICT_CODES = {**{name: k for k, name in enumerate(VERDICTS)},
                  **{alias: VERDICTS.index(name) for alias, name in VERDICT_ALIASES.items()}}


FASTCHAT_COLUMNS = ("model_1", "model_2", "g1_winner", "g2_winner")
"""A FastChat pairwise judgment file (``gpt4_pair_judgments.json``): each row is two comparisons."""


def _label(cell: Any) -> str | None:
    if cell is None or isinstance(cell, bool):
        return None
    if isinstance(cell, (list, tuple)):  # FastChat's judge cell: ["gpt-4", "pair-v2"]
        parts = [_label(c) for c in cell]
        return "/".join(p for p in parts if p) or None
    if isinstance(cell, float):
        if np.isnan(cell):
            return None
        return str(int(cell)) if cell.is_integer() else repr(cell)
    text = str(cell).strip()
    return None if text.lower() in MISSING_TOKENS else text


DROPPED = -1
"""The code :func:`verdict_code` gives a verdict the map sends to ``drop``."""


def verdict_code(cell: Any, mapped: Mapping) -> int | None:
    """The verdict code of ``cell`` after the verdict map ``mapped`` (lower-case label -> label, None = drop):
    :data:`DROPPED` for a dropped label, None for a label that names no verdict."""
    text = _label(cell)
    key = text.lower() if text is not None else None
    if key in mapped:
        if mapped[key] is None:
            return DROPPED
        key = mapped[key]
    return _VERDICT_CODES.get(key) if key is not None else None


def _mapping(table, columns: Mapping[str, Any] | None, names: Mapping[str, str]) -> dict[str, Any]:
    given = {} if columns is None else dict(columns)
    for role, column in given.items():
        if role not in ROLES:
            raise ParameterError(f"`columns` keys must be one of {', '.join(map(repr, ROLES))}; got {role!r}.")
        if role == "input" and not isinstance(column, str):
            column = tuple(column)
            given[role] = column[0] if len(column) == 1 else column
        for one in ((column,) if isinstance(column, str) else column):
            if one not in table.columns:
                shown = ", ".join(repr(c) for c in list(table.columns)[:12])
                raise InputFileError(table.path, f"`{names[role]}` must name a column of the file ({shown}); got"
                                                 f" {one!r}.", row=table.header_row)
    out = {}
    for role in ROLES:
        if role in given:
            out[role] = given[role]
            continue
        found = next((c for c in DEFAULT_COLUMNS[role] if c in table.columns), None)
        if found is not None:
            out[role] = found
        elif role in REQUIRED:
            shown = ", ".join(repr(c) for c in list(table.columns)[:12])
            expected = " or ".join(repr(c) for c in DEFAULT_COLUMNS[role])
            raise InputFileError(table.path, f"a comparison file must have a column {expected} (or map one with"
                                             f" `{names[role]}`); got the columns {shown}.", row=table.header_row)
    return out


def _warn_names(kind: str, labels, path) -> None:
    """A warning naming labels that differ only in case (``GPT-4`` and ``gpt-4``): different names here."""
    groups: dict[str, list[str]] = {}
    for label in labels:
        groups.setdefault(label.casefold(), []).append(label)
    clashes = [names for names in groups.values() if len(names) > 1]
    if clashes:
        shown = "; ".join(" and ".join(repr(n) for n in names) for names in clashes[:3])
        more = f" (and {len(clashes) - 3} more)" if len(clashes) > 3 else ""
        warnings.warn(f"{path}: {len(clashes)} {kind} names differ only in case and are kept apart: {shown}{more}.",
                      DataWarning, stacklevel=4)


def _warn_pooled(path, inputs, first, second, judges, n_systems, n_judges, option) -> None:
    """Warn when one judge gave several verdicts on an input and pair shown in the same order and no repeat
    column says they are repeats: they may be separate judgments (turns of a conversation) pooled into one key."""
    order = np.lexsort((judges, second, first, inputs))
    cols = np.stack([inputs, first, second, judges])[:, order]
    repeated = np.all(cols[:, 1:] == cols[:, :-1], axis=0)  # a row like the one before it
    several = int(np.sum(repeated & ~np.concatenate([[False], repeated[:-1]])))  # groups, each counted once
    if several:
        warnings.warn(f"{path}: {several} (input, pair shown in one order, judge) groups hold several verdicts and the"
                      " file has no repeat column: they are pooled as repeats of one query; if they are separate"
                      f" judgments (turns of a conversation), name every column that identifies an input (`{option}`,"
                      " repeatable) or the repeat column.", DataWarning, stacklevel=3)
