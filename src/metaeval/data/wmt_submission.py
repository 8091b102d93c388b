"""WMT metrics-task submission files: ``*.seg.score``, seven tab-separated fields per line and no header.

The WMT metrics shared task (WMT20-22) asks each participant for a segment-level file ``<METRIC>.seg.score``
whose lines are ``metric, language pair, test set, reference, system, segment id, score``
(:data:`WMT_SEG_COLUMNS`). :func:`~metaeval.data.readers.read_scores` reads one as a
long table (format ``'wmt-seg'``, told by the name or given): one scorer per metric name, or
``<metric>-<reference>`` when the file holds several references (mt-metrics-eval names its metric files so);
the rows it keeps (after ``where``) must be one language pair and one test set.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from ..errors import InputFileError
from .columns import OptionNames
from .formats import RawTable, read_text

__all__ = ["WMT_SEG_COLUMNS", "one_wmt_task", "read_wmt_seg", "wmt_seg_table"]

WMT_SEG_COLUMNS = ("scorer", "lp", "testset", "reference", "system", "input", "score")
"""The seven fields of a WMT metrics-task ``*.seg.score`` line (WMT20-22): metric name, language pair, test set,
reference, system, segment id, segment score; read as a long table (one scorer per metric name)."""


def read_wmt_seg(path: str | Path) -> RawTable:
    """The :class:`~metaeval.data.formats.RawTable` of the submission file ``path``."""
    return wmt_seg_table(path, read_text(path))


def wmt_seg_table(path: str | Path, text: str) -> RawTable:
    """A WMT metrics-task segment-level submission: :data:`WMT_SEG_COLUMNS`, tab-separated, no header."""
    rows: list[int] = []
    cells: list[list[str]] = []
    for row, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(WMT_SEG_COLUMNS):
            raise InputFileError(path, f"a WMT metrics-task segment file (format 'wmt-seg') must have"
                                       f" {len(WMT_SEG_COLUMNS)} tab-separated fields per line (metric, language pair,"
                                       f" test set, reference, system, segment id, score; no header); got"
                                       f" {len(fields)}.", row=row)
        rows.append(row)
        cells.append([f.strip() for f in fields])
    if not rows:
        raise InputFileError(path, "the file must hold at least one line; got an empty file.")
    columns = {name: list(values) for name, values in zip(WMT_SEG_COLUMNS, zip(*cells))}
    return RawTable(str(path), "wmt-seg", columns, np.array(rows, dtype=np.int64), None)


def one_wmt_task(table, where: dict, names: OptionNames):
    """A WMT submission table whose rows (those ``where`` keeps) are one language pair and one test set; its
    scorers named ``<metric>-<reference>`` when it holds several references (mt-metrics-eval's file names)."""
    keep = np.ones(table.n_rows, dtype=bool)
    for column, values in where.items():
        if column in table.columns:
            keep &= np.isin(np.asarray(table.columns[column], dtype=object), list(values))
    for key, what in (("lp", "language pair"), ("testset", "test set")):
        distinct = sorted(set(np.asarray(table.columns[key], dtype=object)[keep]))
        if len(distinct) > 1:
            shown = ", ".join(map(repr, distinct[:5])) + (f" and {len(distinct) - 5} more" if len(distinct) > 5 else "")
            raise InputFileError(table.path, f"a WMT metrics-task file must hold one {what} per read; got"
                                             f" {len(distinct)} ({shown}): keep one with {names.where}"
                                             f" {key}={distinct[0]}.")
    if len(set(np.asarray(table.columns["reference"], dtype=object)[keep])) > 1:
        scorers = [f"{m}-{r}" for m, r in zip(table.columns["scorer"], table.columns["reference"])]
        table = replace(table, columns={**table.columns, "scorer": scorers})
    return table
