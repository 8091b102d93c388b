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

import functools
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..data.columns import _filtered, check_where
from ..data.formats import MISSING_TOKENS, file_format, read_table
from ..errors import DataWarning, InputFileError, ParameterError
from ..vocabulary import VERDICTS
from .cells import (DEFAULT_COLUMNS, DROPPED, FASTCHAT_COLUMNS, REQUIRED, ROLES, _VERDICT_CODES, _label, _mapping,  # noqa: F401
                    _warn_names, _warn_pooled, verdict_code)
from .comparisons import Comparisons, combine_comparisons, make_comparisons

OPTION_NAMES = {**{role: f"columns[{role!r}]" for role in ROLES}, "verdict_map": "verdict_map"}
CLI_OPTION_NAMES = {**{role: f"--{role.replace('_', '-')}-column" for role in ROLES}, "verdict_map": "--verdict-map"}
def _labels(table, column, role: str, optional: bool = False) -> list[str | None]:
    if not isinstance(column, str):  # an input named by several columns (question and turn): 'q81/1'
        parts = [_labels(table, c, role, optional) for c in column]
        return ["/".join(p) if all(x is not None for x in p) else None for p in zip(*parts)]
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


def _fastchat_rows(table):
    """FastChat's pairwise judgments as comparison rows: game 1 shows ``model_1`` first, game 2 shows
    ``model_2`` first, and both winners are named ``model_1`` / ``model_2`` / ``tie`` (or ``error``)."""
    from dataclasses import replace

    cols = table.columns
    out = {name: list(values) * 2 for name, values in cols.items() if name not in FASTCHAT_COLUMNS}
    m1, m2 = list(cols["model_1"]), list(cols["model_2"])
    out["first"], out["second"] = m1 + m2, m2 + m1

    def verdict(winner, first_is_1):
        label = _label(winner)
        if label == "model_1":
            return "first" if first_is_1 else "second"
        if label == "model_2":
            return "second" if first_is_1 else "first"
        return winner
    out["verdict"] = [verdict(w, True) for w in cols["g1_winner"]] + [verdict(w, False) for w in cols["g2_winner"]]
    return replace(table, columns=out, rows=np.concatenate([table.rows, table.rows]))


def check_verdict_map(verdict_map: Mapping[str, str] | None, param: str = "verdict_map") -> dict[str, str | None]:
    """``verdict_map`` as {label (lower case): first / second / tie, or None to drop the rows}."""
    out: dict[str, str | None] = {}
    for old, new in dict(verdict_map or {}).items():
        target = str(new).strip().lower()
        if target not in (*VERDICTS, "drop"):
            raise ParameterError(f"`{param}` must map a label to one of 'first', 'second', 'tie' or 'drop'; got"
                                 f" {old!r}={new!r}.")
        out[str(old).strip().lower()] = None if target == "drop" else target
    return out


def _listed(value: Any) -> str:
    return "+".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def reading_origin(format=None, columns=None, where=None, judge=None, verdict_map=None) -> tuple[tuple[str, str], ...]:
    """The reading options of :func:`read_comparisons` that are not the default, as signature fields (issue 41:
    a signature names everything that rebuilds its number): ``columns:input=question_id+turn,first=model_a``,
    ``where:split=test+valid``, ``verdict_map:error=drop``, ``judge:NAME``, ``format:csv``."""
    fields = []
    if format is not None:
        fields.append(("format", str(format)))
    for key, mapping in (("columns", columns), ("where", where), ("verdict_map", verdict_map)):
        items = [(k, v) for k, v in (mapping or {}).items() if v not in (None, (), [])] if isinstance(mapping, Mapping) else []
        if items:
            fields.append((key, ",".join(f"{k}={_listed(v)}" for k, v in items)))
    if judge is not None:
        fields.append(("judge", str(judge)))
    return tuple(fields)


def _signed(read):
    """``read`` with the reading options recorded in the result's ``origin`` (its signatures' fields)."""
    @functools.wraps(read)
    def wrapper(path, *, format=None, columns=None, where=None, judge=None, verdict_map=None, option_names=None):
        out = read(path, format=format, columns=columns, where=where, judge=judge, verdict_map=verdict_map,
                   option_names=option_names)
        return replace(out, origin=reading_origin(format, columns, where, judge, verdict_map))
    return wrapper


@_signed
def read_comparisons(path: str | Path | Sequence[str | Path], *, format: str | None = None,
                     columns: Mapping[str, Any] | None = None, where: Mapping[str, Any] | None = None,
                     judge: str | None = None, verdict_map: Mapping[str, str] | None = None,
                     option_names: Mapping[str, str] | None = None) -> Comparisons:
    """Read pairwise comparisons (see the module docstring for the columns).

    Parameters
    ----------
    path : str or path-like, or a sequence of them
        ``.csv``, ``.tsv``, ``.jsonl`` / ``.json`` or ``.parquet`` (text formats may be gzipped). Several files
        are read each with the same options and combined (:func:`~metaeval.judges.comparisons.combine_comparisons`).
    format : {'csv', 'tsv', 'jsonl', 'parquet'}, optional
        Overrides the format told by the extension.
    columns : mapping, optional
        The file's own column for a role, e.g. ``{"first": "model_a", "verdict": "winner"}``; the input may
        be named by several columns (``{"input": ("question_id", "turn")}``), its label their values joined
        by ``/``.
    where : mapping, optional
        Keep the rows whose cell in a column is one of the given values (as for score files).
    judge : str, optional
        The judge's name when the file has no judge column (default: the file name without extensions).
    verdict_map : mapping, optional
        Other verdict labels: ``{"tie (inconsistent)": "tie", "error": "drop"}``; ``drop`` leaves the rows out
        (counted in a :class:`~metaeval.errors.DataWarning`).

    Returns
    -------
    Comparisons
        Systems, inputs and judges in order of first appearance.

    Raises
    ------
    InputFileError
        A missing column, an empty label, a verdict outside the vocabulary, a system compared with itself,
        a length that is not a number >= 0.

    Warns
    -----
    DataWarning
        Rows dropped by the verdict map; one judge's several verdicts on an input and pair in the same order
        without a repeat column (pooled as repeats: separate judgments need another input column); names that
        differ only in case.

    Notes
    -----
    FastChat's pairwise judgment files (columns ``model_1``, ``model_2``, ``g1_winner``, ``g2_winner``) are
    read as they are: each row is two comparisons, game 1 with ``model_1`` shown first and game 2 with
    ``model_2`` shown first; a list-valued judge cell (``["gpt-4", "pair-v2"]``) is named ``gpt-4/pair-v2``.
    """
    if not isinstance(path, (str, Path)):
        paths = list(path)
        if not paths:
            raise ParameterError("`path` must name at least one comparison file; got none.")
        parts = [read_comparisons(one, format=format, columns=columns, where=where, judge=judge,
                                  verdict_map=verdict_map, option_names=option_names) for one in paths]
        return parts[0] if len(parts) == 1 else combine_comparisons(parts)
    names = dict(option_names or OPTION_NAMES)
    mapped = check_verdict_map(verdict_map, names.get("verdict_map", "verdict_map"))
    fmt = file_format(path, format)
    from .columnar_reader import read_columnar

    fast = read_columnar(path, fmt, columns=columns, where=where, judge=judge, verdict_map=mapped, names=names)
    if fast is not None:  # a JSON Lines file read column-wise: the same comparisons, faster and smaller
        return fast
    table = read_table(path, fmt)
    table = _filtered(table, check_where(where), "where", True)
    fastchat = all(c in table.columns for c in FASTCHAT_COLUMNS)
    if fastchat:
        table = _fastchat_rows(table)
    elif "g1_winner" in table.columns or "g2_winner" in table.columns:
        raise InputFileError(table.path, "a FastChat judgment file must have the columns 'model_1', 'model_2',"
                                         " 'g1_winner' and 'g2_winner'; got only some of them.", row=table.header_row)
    roles = _mapping(table, columns, names)
    verdicts = np.empty(table.n_rows, dtype=np.int8)
    keep = np.ones(table.n_rows, dtype=bool)
    accepted = ", ".join(repr(v) for v in VERDICTS)
    hint = names.get("verdict_map", "verdict_map")
    how = f"`{hint}` OLD=NEW" if hint.startswith("--") else f"`{hint}={{OLD: NEW}}`"
    for k, (row, cell) in enumerate(zip(table.rows, table.columns[roles["verdict"]])):
        code = verdict_code(cell, mapped)
        if code == DROPPED:
            keep[k] = False
            continue
        if code is None:
            raise InputFileError(table.path, f"a verdict must be one of {accepted} (or model_a, model_b, a, b, draw,"
                                             f" tie (bothbad)); got {cell!r} (map other labels with {how}, NEW"
                                             " one of first, second, tie or drop).", row=int(row),
                                 column=roles["verdict"])
        verdicts[k] = code
    if not keep.all():
        dropped = int((~keep).sum())
        labels = sorted({str(_label(c)) for c, kept in zip(table.columns[roles["verdict"]], keep) if not kept})
        warnings.warn(f"{table.path}: {dropped} of {table.n_rows} comparisons with the verdict"
                      f" {', '.join(map(repr, labels))} dropped (`{hint}`).", DataWarning, stacklevel=2)
        from dataclasses import replace

        table = replace(table, columns={name: [v for v, kept in zip(values, keep) if kept]
                                        for name, values in table.columns.items()}, rows=table.rows[keep])
        verdicts = verdicts[keep]
        if table.n_rows == 0:
            raise InputFileError(table.path, f"every comparison was dropped by `{hint}`; got no comparison left.")
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
    lengths = [None, None]
    for n, role in enumerate(("first_length", "second_length")):
        if role in roles:
            lengths[n] = _lengths(table, roles[role])
    if "shown_first" in roles:  # the stored order is not the presented order: put the system shown first first
        shown = _labels(table, roles["shown_first"], "system shown first")
        swap = np.zeros(table.n_rows, dtype=bool)
        for k, (label, a, b) in enumerate(zip(shown, first_codes, second_codes)):
            if label == systems[b]:
                swap[k] = True
            elif label != systems[a]:
                raise InputFileError(table.path, f"the system shown first must be one of the two compared"
                                                 f" ({systems[a]!r}, {systems[b]!r}); got {label!r}.",
                                     row=int(table.rows[k]), column=roles["shown_first"])
        first_codes, second_codes = np.where(swap, second_codes, first_codes), np.where(swap, first_codes,
                                                                                        second_codes)
        verdicts = np.where(swap & (verdicts != 2), 1 - verdicts, verdicts).astype(np.int8)
        if lengths[0] is not None and lengths[1] is not None:
            lengths = [np.where(swap, lengths[1], lengths[0]), np.where(swap, lengths[0], lengths[1])]
    repeat = None
    if "repeat" in roles:
        repeat = _codes([label or "" for label in _labels(table, roles["repeat"], "repeat", optional=True)])[1]
    else:
        _warn_pooled(table.path, input_codes, first_codes, second_codes, judge_codes, len(systems), len(judges),
                     names["input"])
    _warn_names("system", systems, table.path)
    _warn_names("judge", judges, table.path)
    if (lengths[0] is None) != (lengths[1] is None):
        missing = "second_length" if lengths[1] is None else "first_length"
        raise InputFileError(table.path, f"lengths need both columns; got no {missing} column (map it with"
                                         f" `{names[missing]}`).", row=table.header_row)
    return make_comparisons(systems=systems, inputs=inputs, judges=judges, input=input_codes, first=first_codes,
                            second=second_codes, judge=judge_codes, verdict=verdicts, repeat=repeat,
                            first_length=lengths[0], second_length=lengths[1], source=str(path))
