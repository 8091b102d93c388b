"""Reading the user tables of the nugget and extrinsic analyses (CSV, TSV, JSON Lines, JSON array, Parquet).

Each reader checks the columns it needs and every cell, and raises one
:class:`~metaeval.errors.InputFileError` naming the file, the row and the column. A pandas DataFrame may be
passed instead of a path (the same checks, with ``<DataFrame>`` for the file).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.formats import file_format, read_table
from ..errors import InputFileError, ParameterError

__all__ = ["Columns", "read_columns"]

_FRAME = "<DataFrame>"


class Columns:
    """Checked columns of one table: ``labels(name)``, ``numbers(name)``, ``has(name)``, ``rows``."""

    def __init__(self, path: str, columns: dict[str, list[Any]], rows: np.ndarray):
        self.path, self._columns, self.rows = path, columns, rows

    def __len__(self) -> int:
        return len(self.rows)

    def has(self, name: str) -> bool:
        return name in self._columns

    def raw(self, name: str) -> list[Any]:
        return self._columns[name]

    def labels(self, name: str) -> list[str]:
        """The column as non-empty strings (integers become labels)."""
        out = []
        for row, value in zip(self.rows, self._columns[name]):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if isinstance(value, bool) or value is None or (isinstance(value, float) and math.isnan(value)) \
                    or str(value).strip() == "":
                raise InputFileError(self.path, f"the cell must be a non-empty label; got {value!r}.",
                                     row=int(row), column=name)
            out.append(str(value).strip())
        return out

    def texts(self, name: str) -> list[str]:
        """The column as strings (may be empty)."""
        out = []
        for row, value in zip(self.rows, self._columns[name]):
            if not isinstance(value, str):
                raise InputFileError(self.path, f"the cell must be a text; got {value!r}.", row=int(row), column=name)
            out.append(value)
        return out

    def numbers(self, name: str, *, minimum: float | None = None) -> np.ndarray:
        """The column as finite floats (>= ``minimum`` if given)."""
        out = np.empty(len(self.rows))
        for k, (row, value) in enumerate(zip(self.rows, self._columns[name])):
            try:
                number = float(value) if not isinstance(value, bool) else math.nan
            except (TypeError, ValueError, OverflowError):  # OverflowError: an integer no float64 holds
                number = math.nan
            if not math.isfinite(number) or (minimum is not None and number < minimum):
                rule = f"a finite number >= {minimum:g}" if minimum is not None else "a finite number"
                shown = f"an integer of {len(str(abs(value)))} digits" if isinstance(value, int) and abs(value) > 10**18 \
                    else repr(value)
                raise InputFileError(self.path, f"the cell must be {rule}; got {shown}.", row=int(row), column=name)
            out[k] = number
        return out


def read_columns(source: Any, *, required: Sequence[str], param: str = "table") -> Columns:
    """The table ``source`` (a path or a DataFrame) with the ``required`` columns checked present."""
    if isinstance(source, pd.DataFrame):
        path = _FRAME
        columns = {str(c): source[c].tolist() for c in source.columns}
        rows = np.arange(2, len(source) + 2)
    elif isinstance(source, (str, Path)):
        path = str(source)
        table = read_table(source, file_format(source))
        columns = {str(k): list(v) for k, v in table.columns.items()}
        rows = np.asarray(table.rows)
    else:
        raise ParameterError(f"`{param}` must be a path or a pandas DataFrame; got {type(source).__name__}.")
    missing = [c for c in required if c not in columns]
    if missing:
        raise InputFileError(path, f"the table must have the columns {list(required)!r}; got {sorted(columns)!r}.")
    if not len(rows):
        raise InputFileError(path, "the table must have at least one row; got none.")
    return Columns(path, columns, rows)
