"""The rows of a score table must differ in their labels: (system, input), plus scorer and annotator when the
table has them. Checked on integer codes of the labels; a repeated row is named with the row it repeats."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputFileError
from .formats import RawTable

__all__ = ["check_unique"]


def _distinct_rows(codes: list[np.ndarray]) -> bool | None:
    """Whether no two rows have the same codes in every column (codes from 0, -1 for a missing label); None
    when the combined codes would not fit in 62 bits."""
    key = np.zeros(len(codes[0]), dtype=np.int64)
    size = 1
    for column in codes:
        k = int(column.max(initial=-1)) + 2
        if size > (1 << 62) // k:
            return None
        key = key * k + (column + 1)
        size *= k
    return not pd.Series(key).duplicated().any()


def check_unique(table: RawTable, systems: np.ndarray, inputs: np.ndarray, annotators: np.ndarray | None,
                 scorers: np.ndarray | None, codes: tuple[np.ndarray, np.ndarray]) -> None:
    """Raise :class:`~metaeval.errors.InputFileError` at the first row whose labels repeat an earlier row's
    (``codes``: the system and input codes of :func:`pandas.factorize`; labels None are missing annotators)."""
    others = [pd.factorize(labels)[0] for labels in (scorers, annotators) if labels is not None]
    if _distinct_rows([*codes, *others]):  # the common case, on integer codes; otherwise the message is found below
        return
    names = ["system", "input"] + (["scorer"] if scorers is not None else []) + (["annotator"] if annotators is not None else [])
    frame = pd.DataFrame({"system": systems, "input": inputs})
    if scorers is not None:
        frame["scorer"] = scorers
    if annotators is not None:
        frame["annotator"] = np.where(pd.isna(annotators), "\x00none", annotators)
    duplicated = frame.duplicated(keep="first").to_numpy()
    if not duplicated.any():
        return
    position = int(np.flatnonzero(duplicated)[0])
    key = tuple(frame.iloc[position])
    first = int(np.flatnonzero((frame == frame.iloc[position]).all(axis=1).to_numpy())[0])
    shown = tuple(None if k == "\x00none" else k for k in key)
    raise InputFileError(
        table.path,
        f"({', '.join(names)}) must be unique; got {shown!r} again (first on row {int(table.rows[first])}).",
        row=int(table.rows[position]),
    )
