"""The user's own columns: mapping them to roles, filtering rows, and setting text columns aside.

A benchmark's file rarely says ``system`` and ``input``: FRANK writes ``model_name`` and ``hash``,
WMT MQM ``seg_id``. :func:`prepare_table` works on a parsed :class:`~metaeval.data.formats.RawTable`
before its cells get a meaning:

1. **mapping**: ``columns={"system": "model_name", "input": "hash", "annotator": ..., "human": ...}``
   renames the file's columns to the roles ``system`` / ``input`` / ``annotator``; the ``human``
   column keeps its name and becomes a human scorer;
2. **filtering**: ``where={"split": "test"}`` keeps the rows whose cell in that column is one of the
   given values (a list of values is a choice; several columns must all match);
3. **text columns**: a column none of whose cells is a score (texts such as an article, a split
   name, nested annotation records) is set aside with one :class:`~metaeval.errors.DataWarning` naming
   it, instead of being an error. A column holding both numbers and text stays a score column, so the
   reader reports the first non-numeric cell with its row.

Errors name the option the way the caller spells it: ``columns['system']`` in the API,
``--system-column`` on the command line (:data:`OPTION_NAMES`, set by the CLI).
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import DataWarning, InputFileError, ParameterError
from .formats import ANNOTATOR_KEY, INPUT_KEYS, MISSING_TOKENS, SYSTEM_KEYS, RawTable

ROLES = ("system", "input", "annotator", "human")
"""The roles a file column can be mapped to with ``columns=``."""

API_NAMES = {**{role: f"columns[{role!r}]" for role in ROLES}, "where": "where",
             "where_hint": "where={'COLUMN': 'VALUE'}"}
CLI_NAMES = {**{role: f"--{role}-column" for role in ROLES}, "where": "--where", "where_hint": "--where COLUMN=VALUE"}
OPTION_NAMES: ContextVar[dict[str, str]] = ContextVar("metaeval_option_names", default=API_NAMES)
"""How errors name the mapping and filter options (the CLI sets :data:`CLI_NAMES`)."""
SHARED_OPTIONS: ContextVar[bool] = ContextVar("metaeval_shared_options", default=False)
"""True while one mapping serves several files (the CLI's repeated ``--scores``): a file without the
``human`` column is read without it, and a file without a ``where`` column is left unfiltered with a
:class:`DataWarning`. The system and input mappings apply to every file."""

_STRUCTURAL = frozenset({*SYSTEM_KEYS, *INPUT_KEYS, ANNOTATOR_KEY, "scorer", "score"})
_SHOWN = 5


def check_columns(columns: Any) -> dict[str, str]:
    """``columns`` as a dict role -> file column (None: empty)."""
    if columns is None:
        return {}
    if not isinstance(columns, Mapping):
        raise ParameterError(f"`columns` must be a mapping of role to column name; got {columns!r}.")
    out = {}
    for role, column in columns.items():
        if role not in ROLES:
            raise ParameterError(f"`columns` keys must be one of {', '.join(map(repr, ROLES))}; got {role!r}.")
        if not isinstance(column, str) or not column.strip():
            raise ParameterError(f"`columns[{role!r}]` must be a column name; got {column!r}.")
        out[role] = column.strip()
    return out


def check_where(where: Any) -> dict[str, tuple[str, ...]]:
    """``where`` as a dict column -> accepted values (None: empty). Values compare as text."""
    if where is None:
        return {}
    if not isinstance(where, Mapping):
        raise ParameterError(f"`where` must be a mapping of column name to value(s); got {where!r}.")
    out = {}
    for column, values in where.items():
        if isinstance(values, (str, int, float)):
            values = (values,)
        out[str(column)] = tuple(_text(v) for v in values)
    return out


def parse_where(pairs: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``["split=test", "split=valid", "dataset=bbc"]`` -> ``{"split": ("test", "valid"), "dataset": ("bbc",)}``."""
    name = OPTION_NAMES.get()["where"]
    out: dict[str, tuple[str, ...]] = {}
    for pair in pairs:
        column, sep, value = pair.partition("=")
        if not sep or not column.strip():
            raise ParameterError(f"`{name}` must look like COLUMN=VALUE; got {pair!r}.")
        out[column.strip()] = out.get(column.strip(), ()) + (value.strip(),)
    return out


def _text(cell: Any) -> str:
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell).strip()


def _present(table: RawTable) -> str:
    names = list(table.columns)
    shown = ", ".join(repr(c) for c in names[:12]) + (", ..." if len(names) > 12 else "")
    return shown


def prepare_table(table: RawTable, *, columns: Mapping[str, str] | None = None,
                  where: Mapping[str, Any] | None = None,
                  strict_where: bool = True, layout: str = "wide") -> tuple[RawTable, str | None, tuple[str, ...]]:
    """Map, filter and set aside text columns (see the module notes).

    Returns the table, the mapped human column (or None) and the text columns set aside (to be named
    with :func:`note_ignored` once the file has been read without error). Text columns are kept when
    no score column would remain, so that the reader reports the first non-numeric cell.

    ``strict_where``: a ``where`` column the file lacks is an error (otherwise the file is left
    unfiltered, with a :class:`DataWarning`). ``layout``: ``'wide'`` or ``'long'`` (in the wide layout a
    column named ``score`` is a scorer like any other).
    """
    names = OPTION_NAMES.get()
    columns = check_columns(columns)
    where = check_where(where)
    shared = SHARED_OPTIONS.get()
    if shared and columns.get("human") not in (None, *table.columns):
        columns = {role: column for role, column in columns.items() if role != "human"}
    for role, column in columns.items():
        if column not in table.columns:
            raise InputFileError(table.path, f"`{names[role]}` must name a column of the file ({_present(table)});"
                                             f" got {column!r}.", row=table.header_row)
    renamed = {}
    for role in ("system", "input", "annotator"):
        column = columns.get(role)
        if column is None or column == role:
            continue
        if role in table.columns:
            raise InputFileError(table.path, f"`{names[role]}` must not map {column!r} to {role!r} when the file"
                                             f" already has a column {role!r}; got both.", row=table.header_row)
        renamed[column] = role
    if renamed:
        table = replace(table, columns={renamed.get(c, c): v for c, v in table.columns.items()})
    table = _filtered(table, where, names["where"], strict_where and not shared)
    human = columns.get("human")
    keep = {human} if human else set()
    table, ignored = _without_text_columns(table, keep, layout == "long")
    ignored = tuple(c for c in ignored if c not in where)  # a filter's column was used, not ignored
    return table, human, ignored


def _filtered(table: RawTable, where: dict[str, tuple[str, ...]], name: str, strict: bool) -> RawTable:
    if not where:
        return table
    mask = np.ones(table.n_rows, dtype=bool)
    for column, values in where.items():
        if column not in table.columns:
            if strict:
                raise InputFileError(table.path, f"`{name}` must name a column of the file ({_present(table)});"
                                                 f" got {column!r}.", row=table.header_row)
            warnings.warn(f"{table.path}: not filtered on {column!r} ({name}): the file has no such column.",
                          DataWarning, stacklevel=4)
            continue
        accepted = set(values)
        mask &= np.array([_text(cell) in accepted for cell in table.columns[column]], dtype=bool)
    if not mask.any():
        shown = ", ".join(f"{c}={'|'.join(v)}" for c, v in where.items())
        raise InputFileError(table.path, f"`{name}` must keep at least one row; got none matching {shown}.")
    if mask.all():
        return table
    index = np.flatnonzero(mask)
    cols = {c: (v[index] if isinstance(v, np.ndarray) else [v[i] for i in index]) for c, v in table.columns.items()}
    return replace(table, columns=cols, rows=table.rows[index])


def _is_score_cell(cell: Any) -> bool | None:
    """True for a number (or a list of numbers), False for text or another value, None if missing."""
    if cell is None:
        return None
    if isinstance(cell, bool):
        return False
    if isinstance(cell, (int, float, np.integer, np.floating)):
        return None if isinstance(cell, float) and np.isnan(cell) else True
    if isinstance(cell, str):
        text = cell.strip()
        if text.lower() in MISSING_TOKENS:
            return None
        try:
            float(text)
        except ValueError:
            return False
        return True
    if isinstance(cell, list):
        kinds = {_is_score_cell(item) for item in cell} - {None}
        return None if not kinds else (kinds == {True})
    return False


def _is_text_column(cells: Any) -> bool:
    if isinstance(cells, np.ndarray) and cells.dtype.kind in "fiu":
        return False
    seen_score = seen_text = False
    for cell in cells:
        kind = _is_score_cell(cell)
        if kind is True:
            return False
        seen_text |= kind is False
        seen_score |= kind is True
    return seen_text and not seen_score


def _without_text_columns(table: RawTable, keep: set[str], long: bool) -> tuple[RawTable, tuple[str, ...]]:
    labelled = any(k in table.columns for k in SYSTEM_KEYS) and any(k in table.columns for k in INPUT_KEYS)
    if not labelled:  # the reader reports the missing label column, listing every column
        return table, ()
    structural = _STRUCTURAL if long else _STRUCTURAL - {"scorer", "score"}
    candidates = [c for c in table.columns if c not in structural and c not in keep]
    text = [c for c in candidates if _is_text_column(table.columns[c])]
    kept = [c for c in keep if c in table.columns]
    if not text or (len(text) == len(candidates) and not kept and not long):  # no score column would remain
        return table, ()
    return replace(table, columns={c: v for c, v in table.columns.items() if c not in text}), tuple(text)


def note_ignored(path: str, ignored: tuple[str, ...]) -> None:
    """One :class:`DataWarning` naming the text columns :func:`prepare_table` set aside."""
    if not ignored:
        return
    shown = ", ".join(repr(c) for c in ignored[:_SHOWN])
    if len(ignored) > _SHOWN:
        shown += f" and {len(ignored) - _SHOWN} more"
    hint = OPTION_NAMES.get()["where_hint"]
    warnings.warn(f"{path}: ignored {len(ignored)} column(s) without scores: {shown} (filter rows on them with"
                  f" {hint}).", DataWarning, stacklevel=3)
