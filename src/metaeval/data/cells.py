"""Score cells as numbers: the one conversion of a score file's cells to float64.

Empty, ``NaN``, ``None``, ``null``, ``NA`` and ``N/A`` cells (any case) are missing (NaN); infinite values,
text, booleans and integers no float64 can hold are :class:`~metaeval.errors.InputFileError` naming the
file, row and column. JSON lists hold one score per annotator (see :mod:`metaeval.data.readers`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputFileError
from .columnar import TextColumn, plain_floats
from .formats import MISSING_TOKENS, RawTable

def non_numeric(table: RawTable, column: str, position: int, cell: Any) -> InputFileError:
    expected = "a number or empty" if table.format in ("csv", "tsv") else "a number, a list of numbers or null"
    return InputFileError(table.path, f"a score must be {expected}; got {cell!r}.",
                          row=int(table.rows[position]), column=column)


def _infinite(table: RawTable, column: str, position: int, cell: Any) -> InputFileError:
    return InputFileError(table.path, f"a score must be finite or missing; got {cell!r}.",
                          row=int(table.rows[position]), column=column)


def numeric_cells(table: RawTable, column: str, cells: Any, index: np.ndarray) -> tuple[np.ndarray, dict[int, list[float]]]:
    """Float values of ``cells`` (NaN = missing or a list) and the JSON lists by position."""
    if isinstance(cells, np.ndarray) and cells.dtype.kind == "f":
        values = cells.astype(float)
        bad = np.flatnonzero(np.isinf(values))
        if bad.size:
            raise _infinite(table, column, int(bad[0]), float(values[bad[0]]))
        return values, {}
    if isinstance(cells, TextColumn):  # a column read column-wise: converted in one call when it can be exactly
        floats = plain_floats(cells)
        return (floats, {}) if floats is not None else (_numeric_texts(table, column, cells.to_list()), {})
    if table.format in ("csv", "tsv") or all(isinstance(c, str) for c in cells):
        return _numeric_texts(table, column, cells), {}
    values = np.full(len(cells), np.nan)
    lists: dict[int, list[float]] = {}
    for position, cell in enumerate(cells):
        if isinstance(cell, list):
            lists[position] = [_number(table, column, position, item, cell) for item in cell]
        else:
            values[position] = _number(table, column, position, cell, cell)
    return values, lists


def _number(table: RawTable, column: str, position: int, cell: Any, shown: Any) -> float:
    if cell is None:
        return np.nan
    if isinstance(cell, bool) or isinstance(cell, (list, dict)):
        raise non_numeric(table, column, position, shown)
    if isinstance(cell, str):
        if cell.strip().lower() in MISSING_TOKENS:
            return np.nan
        try:
            value = float(cell)
        except ValueError:
            raise non_numeric(table, column, position, shown) from None
    elif isinstance(cell, (int, float, np.integer, np.floating)):
        try:
            value = float(cell)
        except OverflowError:
            raise InputFileError(table.path, "a score must be a number a float64 can hold (magnitude below 1.8e308);"
                                 f" got an integer of {len(str(abs(int(cell))))} digits.",
                                 row=int(table.rows[position]), column=column) from None
    else:
        raise non_numeric(table, column, position, shown)
    if np.isinf(value):
        raise _infinite(table, column, position, shown)
    return value


def _is_number_text(text: str) -> bool:
    try:
        np.array([text]).astype(np.float64)
    except ValueError:
        return False
    return True


def _numeric_texts(table: RawTable, column: str, cells: list[str]) -> np.ndarray:
    texts = np.array(cells, dtype=str)
    missing = texts == ""
    try:  # fast path: missing scores written as empty cells
        values = np.where(missing, "nan", texts).astype(np.float64)
    except ValueError:
        missing = np.isin(np.char.lower(np.char.strip(texts)), list(MISSING_TOKENS))
        try:
            values = np.where(missing, "nan", texts).astype(np.float64)
        except ValueError:
            position = next(k for k, cell in enumerate(cells) if not missing[k] and not _is_number_text(cell))
            raise non_numeric(table, column, position, cells[position]) from None
    bad = np.flatnonzero(np.isinf(values))
    if bad.size:
        raise _infinite(table, column, int(bad[0]), cells[int(bad[0])])
    return values
