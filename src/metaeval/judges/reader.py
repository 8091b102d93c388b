"""Reading a comparison file (CSV, TSV, JSON Lines, JSON array, Parquet) into :class:`Comparisons`.

The file is parsed by :mod:`metaeval.data.formats` (the readers of score files) and filtered with the
same ``where=`` rule; this module gives the cells their meaning. One row per comparison, columns (the
file's own names are mapped with ``columns={role: name}``, ``--<role>-column`` on the command line):

================  ==========================================  ========================================
role              default column names                        meaning
================  ==========================================  ========================================
``input``         input, instance_id, question_id             what both systems answered
``first``         first, system_a, model_a                    the system shown first
``second``        second, system_b, model_b                   the system shown second
``judge``         judge, annotator, judge_id                  who gave the verdict (optional: one judge)
``verdict``       verdict, winner                             first / second / tie (and aliases)
``repeat``        repeat                                      repeat id of a query asked again (optional)
``first_length``  first_length, length_a                      length of the first output (optional)
``second_length`` second_length, length_b                     length of the second output (optional)
================  ==========================================  ========================================

Verdicts: ``first``, ``second``, ``tie`` in any case, and the aliases of
:data:`~metaeval.vocabulary.VERDICT_ALIASES` (``model_a`` / ``model_b`` / ``tie (bothbad)`` as Chatbot
Arena writes them). Every problem is one :class:`~metaeval.errors.InputFileError` naming the file, row and
column.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..data.columns import _filtered, check_where
from ..data.formats import MISSING_TOKENS, file_format, read_table
from ..errors import InputFileError, ParameterError
from ..vocabulary import VERDICT_ALIASES, VERDICTS
from .comparisons import Comparisons, make_comparisons

ROLES = ("input", "first", "second", "judge", "verdict", "repeat", "first_length", "second_length")
DEFAULT_COLUMNS = {
    "input": ("input", "instance_id", "question_id"),
    "first": ("first", "system_a", "model_a"),
    "second": ("second", "system_b", "model_b"),
    "judge": ("judge", "annotator", "judge_id"),
    "verdict": ("verdict", "winner"),
    "repeat": ("repeat",),
    "first_length": ("first_length", "length_a"),
    "second_length": ("second_length", "length_b"),
}
REQUIRED = ("input", "first", "second", "verdict")
OPTION_NAMES = {role: f"columns[{role!r}]" for role in ROLES}
CLI_OPTION_NAMES = {role: f"--{role.replace('_', '-')}-column" for role in ROLES}
_VERDICT_CODES = {**{name: k for k, name in enumerate(VERDICTS)},
                  **{alias: VERDICTS.index(name) for alias, name in VERDICT_ALIASES.items()}}


def _label(cell: Any) -> str | None:
    if cell is None or isinstance(cell, bool):
        return None
    if isinstance(cell, float):
        if np.isnan(cell):
            return None
        return str(int(cell)) if cell.is_integer() else repr(cell)
    text = str(cell).strip()
    return None if text.lower() in MISSING_TOKENS else text


def _mapping(table, columns: Mapping[str, str] | None, names: Mapping[str, str]) -> dict[str, str]:
    given = {} if columns is None else dict(columns)
    for role, column in given.items():
        if role not in ROLES:
            raise ParameterError(f"`columns` keys must be one of {', '.join(map(repr, ROLES))}; got {role!r}.")
        if column not in table.columns:
            shown = ", ".join(repr(c) for c in list(table.columns)[:12])
            raise InputFileError(table.path, f"`{names[role]}` must name a column of the file ({shown}); got {column!r}.",
                                 row=table.header_row)
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


def _labels(table, column: str, role: str, optional: bool = False) -> list[str | None]:
    out = []
    for row, cell in zip(table.rows, table.columns[column]):
        label = _label(cell)
        if label is None and not optional:
            raise InputFileError(table.path, f"every comparison must have a {role}; got an empty cell.",
                                 row=int(row), column=column)
        out.append(label)
    return out


def _codes(labels: list[str]) -> tuple[tuple[str, ...], np.ndarray]:
    order: dict[str, int] = {}
    codes = np.array([order.setdefault(label, len(order)) for label in labels], dtype=np.int64)
    return tuple(order), codes


def _lengths(table, column: str) -> np.ndarray:
    out = np.empty(table.n_rows)
    for k, (row, cell) in enumerate(zip(table.rows, table.columns[column])):
        if cell is None or (isinstance(cell, str) and (not cell.strip() or cell.strip().lower() in MISSING_TOKENS)) or (
                isinstance(cell, float) and np.isnan(cell)):
            out[k] = np.nan  # a missing length: the row is left out of the length analysis (counted there)
            continue
        try:
            value = float(cell) if not isinstance(cell, bool) else float("nan")
        except (TypeError, ValueError, OverflowError):  # a 400-digit integer overflows a float
            value = float("nan")
        if not np.isfinite(value) or value < 0:
            shown = repr(cell)
            shown = shown if len(shown) <= 40 else f"{shown[:20]}... ({len(shown)} characters)"
            raise InputFileError(table.path, f"a length must be a finite number >= 0; got {shown}.", row=int(row),
                                 column=column)
        out[k] = value
    return out


def read_comparisons(path: str | Path, *, format: str | None = None, columns: Mapping[str, str] | None = None,
                     where: Mapping[str, Any] | None = None, judge: str | None = None,
                     option_names: Mapping[str, str] | None = None) -> Comparisons:
    """Read pairwise comparisons (see the module docstring for the columns).

    Parameters
    ----------
    path : str or path-like
        ``.csv``, ``.tsv``, ``.jsonl`` / ``.json`` or ``.parquet`` (text formats may be gzipped).
    format : {'csv', 'tsv', 'jsonl', 'parquet'}, optional
        Overrides the format told by the extension.
    columns : mapping, optional
        The file's own column for a role, e.g. ``{"first": "model_a", "verdict": "winner"}``.
    where : mapping, optional
        Keep the rows whose cell in a column is one of the given values (as for score files).
    judge : str, optional
        The judge's name when the file has no judge column (default: the file name without extensions).

    Returns
    -------
    Comparisons
        Systems, inputs and judges in order of first appearance.

    Raises
    ------
    InputFileError
        A missing column, an empty label, a verdict outside the vocabulary, a system compared with itself,
        a length that is not a number >= 0.
    """
    names = dict(option_names or OPTION_NAMES)
    fmt = file_format(path, format)
    table = read_table(path, fmt)
    table = _filtered(table, check_where(where), "where", True)
    roles = _mapping(table, columns, names)
    inputs, input_codes = _codes(_labels(table, roles["input"], "input"))
    first = _labels(table, roles["first"], "first system")
    second = _labels(table, roles["second"], "second system")
    systems, codes = _codes(first + second)
    first_codes, second_codes = codes[: len(first)], codes[len(first):]
    same = np.flatnonzero(first_codes == second_codes)
    if same.size:
        raise InputFileError(table.path, f"a comparison must be between two different systems; got {first[same[0]]!r}"
                                         " twice.", row=int(table.rows[same[0]]), column=roles["second"])
    if "judge" in roles:
        judges, judge_codes = _codes(_labels(table, roles["judge"], "judge"))
    else:
        judges = (judge or Path(str(path)).name.split(".")[0],)
        judge_codes = np.zeros(table.n_rows, dtype=np.int64)
    verdicts = np.empty(table.n_rows, dtype=np.int8)
    accepted = ", ".join(repr(v) for v in VERDICTS)
    for k, (row, cell) in enumerate(zip(table.rows, table.columns[roles["verdict"]])):
        text = _label(cell)
        code = _VERDICT_CODES.get(text.lower()) if text is not None else None
        if code is None:
            raise InputFileError(table.path, f"a verdict must be one of {accepted} (or model_a, model_b, a, b, draw,"
                                             f" tie (bothbad)); got {cell!r}.", row=int(row), column=roles["verdict"])
        verdicts[k] = code
    repeat = None
    if "repeat" in roles:
        repeat = _codes([label or "" for label in _labels(table, roles["repeat"], "repeat", optional=True)])[1]
    lengths = [None, None]
    for n, role in enumerate(("first_length", "second_length")):
        if role in roles:
            lengths[n] = _lengths(table, roles[role])
    if (lengths[0] is None) != (lengths[1] is None):
        missing = "second_length" if lengths[1] is None else "first_length"
        raise InputFileError(table.path, f"lengths need both columns; got no {missing} column (map it with"
                                         f" `{names[missing]}`).", row=table.header_row)
    return make_comparisons(systems=systems, inputs=inputs, judges=judges, input=input_codes, first=first_codes,
                            second=second_codes, judge=judge_codes, verdict=verdicts, repeat=repeat,
                            first_length=lengths[0], second_length=lengths[1], source=str(path))
