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
   reader reports the first non-numeric cell with its row;
4. **renaming**: ``rename={"score": "COMET"}`` gives scorers new names; ``scorer="COMET"`` names a
   file's one scorer (a COMET or sacreBLEU file ``system,seg_id,score`` is scorer ``score``
   otherwise, and two such files could not be joined).

Errors name the option the way the caller spells it: ``columns['system']`` in the API (:data:`API_NAMES`);
a caller with other spellings (the command line, with its flags) passes its own :class:`OptionNames`.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any

import numpy as np

from ..errors import DataWarning, InputFileError, ParameterError
from .columnar import TextColumn
from .formats import ANNOTATOR_KEY, INPUT_KEYS, MISSING_TOKENS, SYSTEM_KEYS, RawTable

ROLES = ("system", "input", "annotator", "human")
"""The roles a file column can be mapped to with ``columns=``."""


@dataclass(frozen=True)
class OptionNames:
    """How errors name the options of :func:`prepare_table`: one name per role of ``columns``, ``where``
    and an example of it (``where_hint``), ``rename`` and ``scorer``."""

    system: str
    input: str
    annotator: str
    human: str
    where: str
    where_hint: str
    rename: str
    scorer: str

    def __getitem__(self, key: str) -> str:
        return getattr(self, key)


API_NAMES = OptionNames(**{role: f"columns[{role!r}]" for role in ROLES}, where="where",
                        where_hint="where={'COLUMN': 'VALUE'}", rename="rename", scorer="scorer")
"""The names of the Python API (the default)."""

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


def parse_where(pairs: Iterable[str], names: OptionNames = API_NAMES) -> dict[str, tuple[str, ...]]:
    """``["split=test", "split=valid", "dataset=bbc"]`` -> ``{"split": ("test", "valid"), "dataset": ("bbc",)}``."""
    name = names.where
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
                  where: Mapping[str, Any] | None = None, strict_where: bool = True, layout: str = "wide",
                  rename: Mapping[str, str] | None = None, scorer: str | None = None,
                  names: OptionNames = API_NAMES,
                  shared_mapping: bool = False,
                  required_where: Iterable[str] = ()) -> tuple[RawTable, str | None, tuple[str, ...]]:
    """Map, filter and set aside text columns (see the module notes).

    Returns the table, the mapped human column (or None) and the text columns set aside (to be named
    with :func:`note_ignored` once the file has been read without error). Text columns are kept when
    no score column would remain, so that the reader reports the first non-numeric cell.

    ``strict_where``: a ``where`` column the file lacks is an error (otherwise the file is left
    unfiltered, with a :class:`DataWarning`). ``layout``: ``'wide'`` or ``'long'`` (in the wide layout a
    column named ``score`` is a scorer like any other). ``rename``: old scorer name -> new; ``scorer``: the
    name of the file's one scorer. ``names``: how errors name these options. ``shared_mapping``: one
    mapping serves several files (several score files of one command line): a file without the ``human``
    column is read without it, and a file without a ``where`` column is left unfiltered with a
    :class:`DataWarning`; the system and input mappings apply to every file. ``required_where``: ``where``
    columns given for this file alone (a command line's per-file filter): the file must have them, shared or not.
    """
    columns = check_columns(columns)
    where = check_where(where)
    shared = shared_mapping
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
    own = set(required_where)
    missing = next((c for c in where if c in own and c not in table.columns), None)
    if missing is not None:  # a filter meant for this file alone is never skipped
        raise InputFileError(table.path, f"`{names['where']}` for this file must name a column of it"
                                         f" ({_present(table)}); got {missing!r}.", row=table.header_row)
    table = _filtered(table, where, names["where"], strict_where and not shared)
    human = columns.get("human")
    keep = {human} if human else set()
    table, ignored = _without_text_columns(table, keep, layout == "long")
    ignored = tuple(c for c in ignored if c not in where)  # a filter's column was used, not ignored
    if rename or scorer is not None:
        table, human = _renamed(table, human, _wanted_names(table, rename, scorer, layout == "long", names),
                                layout == "long")
    return table, human, ignored


def _scorers(table: RawTable, long: bool) -> list[str]:
    """The scorers of a mapped table: its score columns (wide) or the labels of its ``scorer`` column (long)."""
    if long:
        return list(dict.fromkeys(_text(label) for label in table.columns["scorer"]))
    return [c for c in table.columns if c not in {*SYSTEM_KEYS, *INPUT_KEYS, ANNOTATOR_KEY}]


def _wanted_names(table: RawTable, rename: Mapping[str, str] | None, scorer: str | None, long: bool,
                  names: OptionNames) -> dict[str, str]:
    """Old scorer name -> new, checked against the file's scorers."""
    present = _scorers(table, long)
    shown = ", ".join(repr(s) for s in present[:12]) + (", ..." if len(present) > 12 else "")
    if rename is not None and not isinstance(rename, Mapping):
        raise ParameterError(f"`{names.rename}` must be a mapping of old to new scorer name; got {rename!r}.")
    wanted = {str(old): str(new) for old, new in (rename or {}).items()}
    if scorer is not None:
        if len(present) != 1:
            raise InputFileError(table.path, f"`{names.scorer}` must name the file's one scorer; got {len(present)}"
                                             f" scorers ({shown}); rename them with `{names.rename}`.",
                                 row=table.header_row)
        wanted[present[0]] = str(scorer)
    for old, new in wanted.items():
        if old not in present:
            raise InputFileError(table.path, f"`{names.rename}` must name a scorer of the file ({shown}); got"
                                             f" {old!r}.", row=table.header_row)
        if not new.strip() or (new in present and new not in wanted):
            raise InputFileError(table.path, f"`{names.rename}` must give {old!r} a new name the file does not"
                                             f" have; got {new!r}.", row=table.header_row)
    return {old: new for old, new in wanted.items() if old != new}


def _renamed(table: RawTable, human: str | None, wanted: dict[str, str], long: bool) -> tuple[RawTable, str | None]:
    if not wanted:
        return table, human
    if long:
        cells = [wanted.get(_text(label), label) for label in table.columns["scorer"]]
        cells = np.asarray(cells, dtype=object) if isinstance(table.columns["scorer"], np.ndarray) else cells
        table = replace(table, columns={**table.columns, "scorer": cells})
    else:
        table = replace(table, columns={wanted.get(c, c): v for c, v in table.columns.items()})
    return table, wanted.get(human, human) if human is not None else None


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
        cells = table.columns[column]
        if isinstance(cells, TextColumn):  # each distinct text compared once
            codes, texts = cells.coded()
            mask &= np.array([_text(text) in accepted for text in texts], dtype=bool)[codes]
        else:
            mask &= np.array([_text(cell) in accepted for cell in cells], dtype=bool)
    if not mask.any():
        shown = ", ".join(f"{c}={'|'.join(v)}" for c, v in where.items())
        raise InputFileError(table.path, f"`{name}` must keep at least one row; got none matching {shown}.")
    if mask.all():
        return table
    index = np.flatnonzero(mask)
    cols = {c: (v[index] if isinstance(v, (np.ndarray, TextColumn)) else [v[i] for i in index])
            for c, v in table.columns.items()}
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
    if isinstance(cells, TextColumn):  # a score among the first cells decides; otherwise the distinct texts do
        if any(_is_score_cell(cell) is True for cell in islice(cells, 1000)):
            return False
        cells = cells.distinct()
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


def note_ignored(path: str, ignored: tuple[str, ...], names: OptionNames = API_NAMES) -> None:
    """One :class:`DataWarning` naming the text columns :func:`prepare_table` set aside."""
    if not ignored:
        return
    shown = ", ".join(repr(c) for c in ignored[:_SHOWN])
    if len(ignored) > _SHOWN:
        shown += f" and {len(ignored) - _SHOWN} more"
    hint = names.where_hint
    warnings.warn(f"{path}: ignored {len(ignored)} column(s) without scores: {shown} (filter rows on them with"
                  f" {hint}).", DataWarning, stacklevel=3)


def reading_note(columns: Mapping[str, str] | None, where: Mapping[str, Any] | None, *,
                 rename: Mapping[str, str] | None = None, scorer: str | None = None, layout: str = "auto",
                 format: str | None = None) -> str:
    """What a signature needs to read a file again as it was read (issue 41: a signature rebuilds its number):
    the columns mapped to roles and the rows kept, e.g. ``columns system=model_name,input=hash; where
    split=test+valid`` (the values a column may take joined by ``+``: a signature's fields are split at ``|``);
    empty when the file was read as it is; and the other reading options given (``layout long``, ``format tsv``,
    ``scorer COMET``, ``renamed score->COMET``), without which the signature could not name the file's columns
    again. Part of the ScoreSet's description, so of the ``subset`` field of every signature made from it."""
    mapped = ",".join(f"{role}={columns[role]}" for role in ("system", "input", "annotator", "human")
                      if isinstance(columns, Mapping) and columns.get(role))
    kept = ",".join(f"{column}={'+'.join(values)}" for column, values in check_where(where).items())
    renamed = ",".join(f"{old}->{new}" for old, new in rename.items()) if isinstance(rename, Mapping) else ""
    return "; ".join(p for p in (f"columns {mapped}" if mapped else "", f"where {kept}" if kept else "",
                                 f"layout {layout}" if layout != "auto" else "", f"format {format}" if format else "",
                                 f"scorer {scorer}" if scorer is not None else "",
                                 f"renamed {renamed}" if renamed else "") if p)
