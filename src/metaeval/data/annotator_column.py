"""When a wide file's ``annotator`` column is the annotator axis, and when it is a scorer's scores.

The rule (docs/data.md): the column holds annotator labels when some (system, input) cell has several
rows (the labels tell them apart), when some label is not a number, or when the caller maps it
(``columns={"annotator": ...}``, ``--annotator-column``). A column of numbers with one row per cell is a
scorer that happens to be called "annotator": reading it as labels would make its scores vanish (issue
22), so it is read as the scorer ``annotator`` with a :class:`~metaeval.errors.DataWarning` saying how to
map it instead.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from ..errors import DataWarning
from .columns import API_NAMES, OptionNames
from .formats import ANNOTATOR_KEY, MISSING_TOKENS, RawTable

__all__ = ["is_axis", "use_axis"]


def _missing(cell) -> bool:
    if cell is None:
        return True
    if isinstance(cell, float):
        return math.isnan(cell)
    return isinstance(cell, str) and (not cell.strip() or cell.strip().lower() in MISSING_TOKENS)


def _number(cell) -> bool:
    if isinstance(cell, bool):
        return False
    if isinstance(cell, (int, float, np.integer, np.floating)):
        return True
    if isinstance(cell, str):
        try:
            float(cell)
        except ValueError:
            return False
        return True
    return False


def is_axis(table: RawTable, systems: np.ndarray, inputs: np.ndarray) -> bool:
    """Whether ``table``'s ``annotator`` column is the annotator axis (see the module docstring)."""
    if pd.MultiIndex.from_arrays([systems, inputs]).has_duplicates:
        return True
    return not all(_missing(cell) or _number(cell) for cell in table.columns[ANNOTATOR_KEY])


def _mapping_hint(names: OptionNames) -> str:
    name = names.annotator
    return f"{name} annotator" if name.startswith("--") else f"{name} = 'annotator'"


def use_axis(table: RawTable, systems: np.ndarray, inputs: np.ndarray, *, mapped: bool | None, long: bool,
             names: OptionNames = API_NAMES) -> bool:
    """Whether ``table`` has an annotator axis: its ``annotator`` column, when the caller ``mapped`` it
    (True), in the long shape (a scorer there is named in the ``scorer`` column), or by :func:`is_axis`;
    a column read as a scorer instead gets the DataWarning."""
    if ANNOTATOR_KEY not in table.columns:
        return False
    if mapped or long or is_axis(table, systems, inputs):
        return True
    warnings.warn(f"{table.path}: the column 'annotator' holds one number per (system, input) row, so it is read as a"
                  " scorer named 'annotator' (annotator labels give several rows per cell); to read it as annotator"
                  f" labels, map it: {_mapping_hint(names)}.", DataWarning, stacklevel=4)
    return False
