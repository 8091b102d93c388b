"""Reading score files in the generic format into a :class:`~metaeval.data.scoreset.ScoreSet`.

The generic format (see ``docs/data.md``) comes in three shapes, told apart by their columns:

wide
    One row per (system, input): columns ``system``, ``input``, then one numeric column per scorer,
    named by the scorer (``rouge-2.recall``). An optional ``annotator`` column makes several rows per
    cell: the rows of one cell with different annotators form the annotator axis.
long
    One row per (system, input, scorer): columns ``system``, ``input``, ``scorer``, ``score`` and an
    optional ``annotator``.
JSON Lines
    Either of the above, one JSON object per line, or the SummEval / SacreROUGE line format
    ``{"instance_id", "summarizer_id", "metrics": {...}}`` (also ``system`` / ``input`` with nested
    ``scores``): nested fields flatten with dots, and a list of numbers holds one score per annotator.

``summarizer_id`` and ``instance_id`` are accepted wherever ``system`` and ``input`` are.
Every problem is reported as one :class:`~metaeval.errors.InputFileError` naming the file, the row
and the column.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputFileError, ParameterError, check_choice
from . import annotator_column
from .cells import numeric_cells
from .columnar import TextColumn, release_arrow_memory
from .columns import API_NAMES, OptionNames, check_where, note_ignored, prepare_table, reading_note
from .formats import (
    ANNOTATOR_KEY,
    EXTENSIONS,
    INPUT_KEYS,
    SYSTEM_KEYS,
    RawTable,
    file_format,
    read_table,
)
from .row_keys import check_unique
from .scoreset import ScoreSet
from .sidecar import recorded_humans

LONG_COLUMNS = ("scorer", "score")
LAYOUTS = ("auto", "wide", "long")
"""How a file's columns hold scores (see :func:`read_scores`)."""
_SHOWN_LABELS = 5


def read_scores(
    path: str | Path,
    *,
    format: str | None = None,
    humans: Iterable[str] | None = None,
    name: str | None = None,
    columns: Mapping[str, str] | None = None,
    where: Mapping[str, Any] | None = None,
    layout: str = "auto",
    rename: Mapping[str, str] | None = None,
    scorer: str | None = None,
    option_names: OptionNames = API_NAMES,
    shared_mapping: bool = False,
    required_where: Iterable[str] = (),
) -> ScoreSet:
    """Read a score file in the generic wide, long, JSON Lines or JSON array format.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``, ``.tsv``, ``.jsonl`` (or ``.json`` / ``.ndjson`` holding JSON Lines) or
        ``.parquet`` file; text formats may be gzipped (``.csv.gz``, ...).
    format : {'csv', 'tsv', 'jsonl', 'parquet', 'wmt-seg'}, optional
        Overrides the format told by the extension. ``'wmt-seg'`` (also told by a name ending in
        ``.seg.score``): a WMT metrics-task segment-level submission, seven tab-separated fields per line and
        no header (metric name, language pair, test set, reference, system, segment id, score), read as one
        scorer per metric name (``<metric>-<reference>`` when the file holds several references); the file
        (after ``where``) must hold one language pair and one test set.
    humans : iterable of str, optional
        The scorers that are human judgments. By default, the scorers with several annotators per
        cell (an ``annotator`` column, or JSON lists) are the human judgments.
    name : str, optional
        Dataset name recorded in signatures; default: the file name without its extensions.
    columns : mapping, optional
        The file's own column names for the roles ``'system'``, ``'input'``, ``'annotator'`` and
        ``'human'`` (that column keeps its name and is a human scorer), e.g.
        ``{"system": "model_name", "input": "hash", "human": "Factuality"}`` for FRANK.
    where : mapping, optional
        Keep only the rows whose cell in a column is one of the given values (compared as text), e.g.
        ``{"split": "test"}``; several columns must all match.
    layout : {'auto', 'wide', 'long'}
        ``'wide'``: one column per scorer; ``'long'``: one row per (system, input, scorer) with the columns
        ``scorer`` and ``score``. ``'auto'`` (default) decides from the whole header: long when the file
        has both a ``scorer`` and a ``score`` column, otherwise wide - so a metric file with a column named
        ``score`` (``lp,system,input,score``, the usual COMET / WMT output) is a wide file with one scorer
        ``score`` (name it with ``scorer=``). A tab-separated file whose header names ``system``,
        ``rater``, ``source``, ``target``, ``category``, ``severity`` and ``seg_id`` (or ``globalSegId``)
        is MQM ratings, read by :func:`metaeval.data.mqm_ratings.read_mqm_ratings` (scorers ``mqm`` and
        ``mqm.<rater>``).
    rename, scorer : optional
        New scorer names, old -> new (``{"score": "COMET"}``); ``scorer``: the name of the file's one scorer.
    option_names, shared_mapping, required_where : optional
        How errors name these options (a command line passes its flags); the mapping serves several files;
        the ``where`` columns given for this file alone (see :func:`metaeval.data.columns.prepare_table`).

    Returns
    -------
    ScoreSet
        Systems and inputs in the order they first appear in the file; scorers in column order
        (long format: in order of first appearance); annotators in the order of JSON lists, or in
        natural order of their labels (``a2`` before ``a10``). Empty, ``NaN``, ``None``, ``null``,
        ``NA`` and ``N/A`` cells (any case) are missing scores (NaN).

    Raises
    ------
    InputFileError
        For an unknown extension, an empty or malformed file, missing ``system`` / ``input``
        columns, duplicate rows, non-numeric or infinite scores, inconsistent annotator counts, or a
        scorer without any score for some system, a JSON key repeated or two fields flattening onto one
        name, or a sidecar ``<file>.signatures.json`` that is not a regular file holding one valid JSON
        object. The message names the file, the row (CSV header = row 1; JSON Lines: the line; Parquet:
        the data row from 1) and the column.
    ParameterError
        If ``format`` is not a known format or ``humans`` names a scorer the file lacks.

    Notes
    -----
    A scorer whose value is the same for every annotator of a cell, in every cell, is a per-cell
    score (e.g. a metric repeated on each annotator's row of a merged table): it is stored as one
    matrix and is not a human judgment by default. Pickled data are never loaded.

    Examples
    --------
    >>> ds = read_scores("scores.csv")                                      # doctest: +SKIP
    >>> ds = read_scores("summeval.jsonl.gz", humans=["expert.relevance"])  # doctest: +SKIP
    """
    layout = check_choice("layout", layout, LAYOUTS)
    from .mqm_ratings import is_mqm_ratings_file, read_mqm_ratings  # MQM ratings: detected by header

    if format is None and layout == "auto" and not columns and not where and is_mqm_ratings_file(path):
        if rename or scorer is not None:  # never ignored silently
            raise ParameterError(f"`{option_names.rename if rename else option_names.scorer}` must name a scorer of"
                                 f" a score table; got it for {path}, an MQM ratings file (its scorers are mqm and"
                                 " mqm.<rater>).")
        ds = read_mqm_ratings(path, name=name).scores
        return ds if humans is None else ds.with_humans(humans)
    fmt = file_format(path, format)
    if fmt == "wmt-seg":
        from .wmt_submission import one_wmt_task, read_wmt_seg

        table = one_wmt_task(read_wmt_seg(path), check_where(where), option_names)
    else:
        table = read_table(path, fmt, columnar=True)
    asked_layout, layout = layout, table_layout(table, layout)
    table, human, ignored = prepare_table(table, columns=columns, where=where, layout=layout, rename=rename,
                                          scorer=scorer, names=option_names, shared_mapping=shared_mapping,
                                          required_where=required_where)
    if table.format == "wmt-seg":
        ignored = tuple(c for c in ignored if c not in ("lp", "testset", "reference"))  # checked: one of each
    if human is not None and humans is not None and not isinstance(humans, str):
        humans = tuple(dict.fromkeys((*humans, human)))
    recorded = recorded_humans(path) if humans is None else None
    if recorded is not None:
        humans = tuple(dict.fromkeys((*recorded, *((human,) if human is not None else ()))))
        humans = tuple(h for h in humans if h in _scorer_names(table, layout)) or None
    mapped = isinstance(columns, Mapping) and columns.get("annotator") is not None or None
    ds = scoreset_from_table(table, humans=humans, name=_default_name(path) if name is None else name,
                             layout=layout, annotator_axis=mapped, option_names=option_names)
    if recorded is not None:
        annotated = tuple(s for s in ds.scorers if ds.annotations(s).ndim == 3 and s not in ds.humans)
        if annotated:
            ds = ds.with_humans((*ds.humans, *annotated))
    if human is not None and human not in ds.humans:
        ds = ds.with_humans((*ds.humans, human))
    read_path, columnar = table.path, any(isinstance(c, TextColumn) for c in table.columns.values())
    del table
    if columnar:
        release_arrow_memory()
    note_ignored(read_path, ignored, option_names)
    note = reading_note(columns, where, rename=rename, scorer=scorer, layout=asked_layout, format=format)
    return ds._replace(description="; ".join(p for p in (ds.description, note) if p)) if note else ds


def _default_name(path: str | Path) -> str:
    base = Path(path).name
    if base.lower().endswith(".gz"):
        base = base[:-3]
    stem, dot, extension = base.rpartition(".")
    return stem if dot and f".{extension.lower()}" in EXTENSIONS else base


@dataclass
class _Entries:
    """The cells of one scorer: positions into the table's rows, values and JSON annotator lists."""

    scorer: str
    column: str | None
    index: np.ndarray
    values: np.ndarray
    lists: dict[int, list[float]] = field(default_factory=dict)


def _scorer_names(table: RawTable, layout: str) -> set[str]:
    """The scorers a prepared table holds (columns of the wide layout, labels of the long one)."""
    if layout == "long":
        return {str(label) for label in table.columns["scorer"]}
    return set(table.columns) - {*SYSTEM_KEYS, *INPUT_KEYS, ANNOTATOR_KEY}


def table_layout(table: RawTable, layout: str = "auto") -> str:
    """``'wide'`` or ``'long'``: the layout asked for, or for ``'auto'`` the one the whole header tells (long
    when it has both ``scorer`` and ``score``); ``'long'`` asked for a file without them is an error."""
    has_long = all(c in table.columns for c in LONG_COLUMNS)
    if layout == "auto":
        return "long" if has_long else "wide"
    if layout == "long" and not has_long:
        missing = " and ".join(repr(c) for c in LONG_COLUMNS if c not in table.columns)
        raise InputFileError(table.path, f"the long layout needs the columns 'scorer' and 'score'; got no {missing}"
                                         f" column.", row=table.header_row)
    return layout


def scoreset_from_table(table: RawTable, *, humans: Iterable[str] | None = None, name: str | None = None,
                        layout: str = "auto", annotator_axis: bool | None = None,
                        option_names: OptionNames = API_NAMES) -> ScoreSet:
    """Build a ScoreSet from a parsed file (see :func:`read_scores` for the rules and errors);
    ``annotator_axis``: see :func:`metaeval.data.annotator_column.use_axis`."""
    system_column = _label_column(table, SYSTEM_KEYS, option_names)
    input_column = _label_column(table, INPUT_KEYS, option_names)
    systems = _label_cells(table, system_column, "system")
    inputs = _label_cells(table, input_column, "input")
    is_long = table_layout(table, layout) == "long"
    axis = annotator_column.use_axis(table, systems, inputs, mapped=annotator_axis, long=is_long,
                                     names=option_names)
    annotators = _annotator_cells(table) if axis else None
    label_columns = {system_column, input_column} | ({ANNOTATOR_KEY} if axis else set())
    if is_long:
        groups, scorer_labels = _long_entries(table, label_columns)
    else:
        groups, scorer_labels = _wide_entries(table, label_columns), None
    system_labels, system_codes = _codes(systems)
    input_labels, input_codes = _codes(inputs)
    check_unique(table, systems, inputs, annotators, scorer_labels, (system_codes, input_codes))

    shape = (len(system_labels), len(input_labels))
    scores: dict[str, np.ndarray] = {}
    for entries in groups:
        array = _scorer_array(table, entries, system_codes, input_codes, annotators, shape)
        _check_every_system(table, entries, array, system_labels, is_long)
        scores[entries.scorer] = array
    chosen = _chosen_humans(humans, scores)
    return ScoreSet(scores, systems=system_labels, inputs=input_labels, humans=chosen, name=name)


# -- columns and labels ---------------------------------------------------------------------------
def _label_column(table: RawTable, keys: tuple[str, ...], names: OptionNames = API_NAMES) -> str:
    for key in keys:
        if key in table.columns:
            return key
    got = ", ".join(repr(c) for c in table.columns)
    hint = f" (or map the file's own column: {option_example(names[keys[0]], table, keys[0])})"
    if table.header_row is not None:
        message = f"the header must name the column {keys[0]!r} (or {keys[1]!r}); got {got}{hint}."
    else:
        message = f"every line must have the field {keys[0]!r} (or {keys[1]!r}); got fields {got}{hint}."
    raise InputFileError(table.path, message, row=table.header_row)


def option_example(option: str, table: RawTable, role: str) -> str:
    """``--input-column seg_id`` / ``columns={'input': 'seg_id'}`` with the likeliest column of the file."""
    likely = {"system": ("model", "sys", "system_id", "system_name", "model_name"),
              "input": ("seg_id", "doc", "doc_id", "document", "segment", "item", "id", "hash")}[role]
    column = next((c for c in table.columns if c.lower() in likely), "COLUMN")
    return f"{option} {column}" if option.startswith("--") else f"columns={{{role!r}: {column!r}}}"


def _is_missing(cell: Any) -> bool:
    if cell is None:
        return True
    if isinstance(cell, float):
        return bool(np.isnan(cell))
    return isinstance(cell, str) and not cell.strip()


def _label_text(table: RawTable, column: str, position: int, cell: Any, role: str) -> str:
    if isinstance(cell, str):
        return cell.strip()
    if isinstance(cell, bool) or isinstance(cell, (list, dict)):
        raise InputFileError(table.path, f"the {role} label must be a string or an integer; got {cell!r}.",
                             row=int(table.rows[position]), column=column)
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell)


def _label_cells(table: RawTable, column: str, role: str) -> np.ndarray:
    cells = table.columns[column]
    if table.format in ("csv", "tsv"):  # every cell is a string
        if isinstance(cells, TextColumn):  # each distinct text stripped once; the cells share the label objects
            codes, texts = cells.coded()
            labels = np.array([text.strip() for text in texts], dtype=object)[codes]
        else:
            labels = np.array([cell.strip() for cell in cells], dtype=object)
        empty = np.flatnonzero(labels == "")
        if empty.size:
            position = int(empty[0])
            raise InputFileError(table.path, f"the {role} label must be non-empty; got {cells[position]!r}.",
                                 row=int(table.rows[position]), column=column)
        return labels
    labels = np.empty(table.n_rows, dtype=object)
    for position, cell in enumerate(cells):
        if _is_missing(cell):
            raise InputFileError(table.path, f"the {role} label must be non-empty; got {cell!r}.",
                                 row=int(table.rows[position]), column=column)
        labels[position] = _label_text(table, column, position, cell, role)
    return labels


def _annotator_cells(table: RawTable) -> np.ndarray:
    labels = np.empty(table.n_rows, dtype=object)
    for position, cell in enumerate(table.columns[ANNOTATOR_KEY]):
        labels[position] = None if _is_missing(cell) else _label_text(table, ANNOTATOR_KEY, position, cell, "annotator")
    return labels


def _codes(labels: np.ndarray) -> tuple[list[str], np.ndarray]:
    codes, uniques = pd.factorize(labels, sort=False)
    return [str(u) for u in uniques], codes


# -- wide and long shapes -------------------------------------------------------------------------
def _wide_entries(table: RawTable, label_columns: set[str]) -> list[_Entries]:
    scorer_columns = [c for c in table.columns if c not in label_columns]
    if not scorer_columns:
        raise InputFileError(
            table.path,
            "the file must have at least one scorer column besides system, input and annotator; got none.",
            row=table.header_row,
        )
    index = np.arange(table.n_rows)
    groups = []
    for column in scorer_columns:
        values, lists = numeric_cells(table, column, table.columns[column], index)
        groups.append(_Entries(column, column, index, values, lists))
    return groups


def _long_entries(table: RawTable, label_columns: set[str]) -> tuple[list[_Entries], np.ndarray]:
    extra = [c for c in table.columns if c not in label_columns and c not in LONG_COLUMNS]
    if extra:
        raise InputFileError(
            table.path,
            "the long layout (the file has both a 'scorer' and a 'score' column) takes the columns system, input,"
            " scorer, score, optionally annotator, and text columns (set aside); got also"
            f" {', '.join(repr(c) for c in extra)} (to read one column per scorer, pass layout='wide' /"
            " --layout wide).",
            row=table.header_row,
        )
    scorers = _label_cells(table, "scorer", "scorer")
    values, lists = numeric_cells(table, "score", table.columns["score"], np.arange(table.n_rows))
    labels, codes = _codes(scorers)
    groups = []
    for code, scorer in enumerate(labels):
        index = np.flatnonzero(codes == code)
        own = {k: lists[p] for k, p in enumerate(index) if p in lists}
        groups.append(_Entries(scorer, None, index, values[index], own))
    return groups, scorers


# -- one scorer's array ---------------------------------------------------------------------------
def _scorer_array(table: RawTable, entries: _Entries, system_codes: np.ndarray, input_codes: np.ndarray,
                  annotators: np.ndarray | None, shape: tuple[int, int]) -> np.ndarray:
    rows = system_codes[entries.index]
    cols = input_codes[entries.index]
    finite = np.isfinite(entries.values)
    if entries.lists:
        array = _list_array(table, entries, rows, cols, annotators, shape)
    elif annotators is not None and _annotated(table, entries, annotators[entries.index], finite):
        labels = annotators[entries.index]
        keep = finite & ~pd.isna(labels)
        names, codes = _codes(labels[keep])
        order = sorted(range(len(names)), key=lambda k: _natural_key(names[k]))
        codes = np.argsort(order)[codes]
        array = np.full((*shape, len(names)), np.nan)
        array[rows[keep], cols[keep], codes] = entries.values[keep]
    else:
        array = np.full(shape, np.nan)
        array[rows[finite], cols[finite]] = entries.values[finite]
    return _collapsed(array)


def _natural_key(label: str) -> list[Any]:
    """Sort key putting ``a2`` before ``a10``."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", label)]


def _annotated(table: RawTable, entries: _Entries, labels: np.ndarray, finite: np.ndarray) -> bool:
    """Whether the scorer's values sit in rows with an annotator (error if in both kinds of rows)."""
    without = finite & pd.isna(labels)
    within = finite & ~pd.isna(labels)
    if without.any() and within.any():
        first, second = sorted((int(np.flatnonzero(without)[0]), int(np.flatnonzero(within)[0])))
        raise InputFileError(
            table.path,
            f"scores of {entries.scorer!r} must be either all in rows with an annotator or all in rows"
            f" without one; got both (rows {int(table.rows[entries.index[first]])}"
            f" and {int(table.rows[entries.index[second]])}).",
            row=int(table.rows[entries.index[second]]),
            column=entries.column,
        )
    return bool(within.any())


def _list_array(table: RawTable, entries: _Entries, rows: np.ndarray, cols: np.ndarray,
                annotators: np.ndarray | None, shape: tuple[int, int]) -> np.ndarray:
    column = entries.column or "score"

    def where(k: int) -> int:
        return int(table.rows[entries.index[k]])

    first_position = min(entries.lists)
    if annotators is not None:
        raise InputFileError(table.path, "a score must be one number in a file with an 'annotator' column; got a list.",
                             row=where(first_position), column=column)
    sized = [k for k, values in entries.lists.items() if values]
    if not sized:
        return np.full(shape, np.nan)
    first = sized[0]
    count = len(entries.lists[first])
    for k, values in entries.lists.items():
        if values and len(values) != count:
            raise InputFileError(
                table.path,
                f"every cell of {entries.scorer!r} must hold the same number of annotator scores;"
                f" got {len(values)} here and {count} on row {where(first)}.",
                row=where(k), column=column,
            )
    scalars = np.flatnonzero(np.isfinite(entries.values))
    if scalars.size:
        raise InputFileError(
            table.path,
            f"every cell of {entries.scorer!r} must hold the same number of annotator scores;"
            f" got a single number here and {count} on row {where(first)}.",
            row=where(int(scalars[0])), column=column,
        )
    array = np.full((*shape, count), np.nan)
    for k in sized:
        array[rows[k], cols[k], :] = entries.lists[k]
    return array


def _collapsed(array: np.ndarray) -> np.ndarray:
    """An (N, M, A) array whose annotators agree in every cell becomes the (N, M) matrix."""
    if array.ndim == 2:
        return array
    missing = np.isnan(array)
    high = np.where(missing, -np.inf, array).max(axis=2)
    low = np.where(missing, np.inf, array).min(axis=2)
    present = ~missing.all(axis=2)
    if np.all(high[present] == low[present]):
        return np.where(present, high, np.nan)
    return array


def _check_every_system(table: RawTable, entries: _Entries, array: np.ndarray, systems: list[str],
                        is_long: bool) -> None:
    present = ~np.isnan(array) if array.ndim == 2 else ~np.isnan(array).all(axis=2)
    lacking = [systems[i] for i in np.flatnonzero(~present.any(axis=1))]
    if not lacking:
        return
    shown = ", ".join(repr(s) for s in lacking[:_SHOWN_LABELS])
    if len(lacking) > _SHOWN_LABELS:
        shown += f" and {len(lacking) - _SHOWN_LABELS} more"
    raise InputFileError(
        table.path,
        f"scorer {entries.scorer!r} must have a score for every system; got none for {shown}.",
        column=None if is_long else entries.column,
    )


def _chosen_humans(humans: Iterable[str] | None, scores: dict[str, np.ndarray]) -> tuple[str, ...]:
    if humans is None:
        return tuple(s for s, array in scores.items() if array.ndim == 3)
    if isinstance(humans, str):
        raise ParameterError(f"`humans` must be a list of scorer names; got the string {humans!r}.")
    chosen = tuple(humans)
    for human in chosen:
        if human not in scores:
            listed = ", ".join(repr(s) for s in list(scores)[:12]) + (", ..." if len(scores) > 12 else "")
            raise ParameterError(f"`humans` must name scorers of the file ({listed}); got {human!r}.")
    return chosen
