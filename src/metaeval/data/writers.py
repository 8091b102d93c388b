"""Writing a ScoreSet to CSV, TSV, JSON Lines or Parquet in the generic wide format.

The file has one row per (system, input) with one column per scorer; when some scorer has several
annotators per cell, an ``annotator`` column is added: the cell's row without an annotator holds the
per-cell scorers, and rows with annotators ``1``, ``2``, ... hold the annotated scorers (NaN for a
scorer with fewer annotators). :func:`~metaeval.data.readers.read_scores` reads the file back into the
same ScoreSet: a human scorer without annotators, which the file cannot mark, is recorded in the sidecar
``<file>.signatures.json`` (:mod:`metaeval.data.sidecar`) and read back from it.
The file is written to a temporary file in the same directory and renamed, so a reader never sees a
half-written file.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import numpy as np

from ..errors import ScoreSetError
from ..runtime.files import write_bytes_atomic
from .formats import ANNOTATOR_KEY, INPUT_KEYS, SYSTEM_KEYS, file_format
from .scoreset import ScoreSet
from .sidecar import sidecar_path, write_sidecar

_RESERVED = (*SYSTEM_KEYS, *INPUT_KEYS, ANNOTATOR_KEY)


def encode_scores(scoreset: ScoreSet, path: str | Path, *, format: str | None = None) -> bytes:
    """The bytes :func:`write_scores` writes to ``path`` (for a caller that commits them with other files)."""
    fmt = file_format(path, format, writing=True)
    names, columns = _wide_columns(scoreset)
    gzipped = fmt != "parquet" and Path(path).name.lower().endswith(".gz")
    if fmt == "parquet":
        data = _parquet_bytes(names, columns)
    elif fmt == "jsonl":
        data = _jsonl_text(names, columns).encode("utf-8")
    else:
        data = _delimited_text(names, columns, "," if fmt == "csv" else "\t").encode("utf-8")
    return gzip.compress(data, mtime=0) if gzipped else data


def write_scores(scoreset: ScoreSet, path: str | Path, *, format: str | None = None) -> None:
    """Write ``scoreset`` to ``path`` in the generic wide format.

    Parameters
    ----------
    scoreset : ScoreSet
        The scores; annotator axes are kept (an ``annotator`` column), not aggregated.
    path : str or path-like
        Destination; the format comes from the extension (``.csv``, ``.tsv``, ``.jsonl``, ``.parquet``;
        ``.gz`` after a text format compresses it) unless ``format`` is given.
    format : {'csv', 'tsv', 'jsonl', 'parquet'}, optional
        Overrides the extension.

    Raises
    ------
    InputFileError
        If the extension names no known format and ``format`` is None.
    ScoreSetError
        If a scorer is named like a label column (``system``, ``input``, ``annotator``, ...) or the
        scorers are exactly ``scorer`` and ``score`` (the file would read back as the long format).

    Notes
    -----
    Numbers are written in Python's shortest round-trip form, so reading the file back gives the same
    float64 values; missing scores are empty cells (CSV/TSV), ``null`` (JSON Lines) or NaN (Parquet).
    Text outputs are gzipped with a zero timestamp, so equal scores give equal bytes.
    """
    path = Path(path)
    data = encode_scores(scoreset, path, format=format)
    write_bytes_atomic(path, data)
    unmarked = [h for h in scoreset.humans if scoreset.annotations(h).ndim == 2]
    if unmarked or sidecar_path(path).exists():
        write_sidecar(path, {"humans": list(scoreset.humans)}, data=data)


def _wide_columns(scoreset: ScoreSet) -> tuple[list[str], dict[str, np.ndarray]]:
    """Column names and arrays (labels as object arrays, None = no annotator; scores as float)."""
    scorers = list(scoreset.scorers)
    for scorer in scorers:
        if scorer in _RESERVED:
            raise ScoreSetError(
                f"scorer names must differ from the label columns {', '.join(_RESERVED)}; got {scorer!r}."
            )
    if set(scorers) == {"scorer", "score"}:
        raise ScoreSetError("scorers must not be exactly 'scorer' and 'score' (the long format's columns);"
                            " got both.")
    counts = {s: scoreset.n_annotators(s) for s in scorers}
    annotated = [s for s in scorers if scoreset.annotations(s).ndim == 3]
    plain = [s for s in scorers if s not in annotated]
    n, m = scoreset.shape
    width = max((counts[s] for s in annotated), default=0)
    slots: list[int | None] = ([None] if plain or not annotated else []) + list(range(width))
    per_cell = len(slots)
    systems = np.repeat(np.array(scoreset.systems, dtype=object), m * per_cell)
    inputs = np.tile(np.repeat(np.array(scoreset.inputs, dtype=object), per_cell), n)
    columns: dict[str, np.ndarray] = {"system": systems, "input": inputs}
    if annotated:
        labels = np.array([None if k is None else str(k + 1) for k in slots], dtype=object)
        columns[ANNOTATOR_KEY] = np.tile(labels, n * m)
    for scorer in scorers:
        values = np.full((n, m, per_cell), np.nan)
        array = scoreset.annotations(scorer)
        if scorer in annotated:
            offset = per_cell - width
            values[:, :, offset:offset + array.shape[2]] = array
        else:
            values[:, :, 0] = array
        columns[scorer] = values.reshape(-1)
    return list(columns), columns


def _number_text(value: float) -> str:
    return "" if np.isnan(value) else repr(float(value))


def _delimited_text(names: list[str], columns: dict[str, np.ndarray], delimiter: str) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\n")
    writer.writerow(names)
    texts = []
    for name in names:
        column = columns[name]
        if column.dtype == object:
            texts.append(["" if v is None else str(v) for v in column])
        else:
            texts.append([_number_text(v) for v in column])
    writer.writerows(zip(*texts))
    return buffer.getvalue()


def _jsonl_text(names: list[str], columns: dict[str, np.ndarray]) -> str:
    lines = []
    count = len(columns["system"])
    cells = {name: (list(c) if c.dtype == object else [None if np.isnan(v) else float(v) for v in c])
             for name, c in columns.items()}
    for row in range(count):
        lines.append(json.dumps({name: cells[name][row] for name in names}, allow_nan=False, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def _parquet_bytes(names: list[str], columns: dict[str, np.ndarray]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = []
    for name in names:
        column = columns[name]
        if column.dtype == object:
            arrays.append(pa.array(list(column), type=pa.string()))
        else:
            arrays.append(pa.array(column, type=pa.float64()))
    table = pa.Table.from_arrays(arrays, names=names)
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()

