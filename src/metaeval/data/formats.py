"""Score files as raw tables: format detection and parsing of CSV, TSV, JSON Lines and Parquet.

This module knows file formats, not scores: it turns a file into a :class:`RawTable` (column name ->
raw cells, plus the row number of every data row as an editor shows it) and raises
:class:`~metaeval.errors.InputFileError` for what is malformed at the file level (not UTF-8, not
gzip, malformed CSV or JSON, unreadable Parquet, empty file). :mod:`metaeval.data.readers` gives the
cells their meaning (labels, scorers, annotators).

Row numbers: for CSV and TSV the header is line 1 and a data row is numbered by the line it starts on;
for JSON Lines a row is its line; Parquet has no lines, so its data rows count from 1.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputFileError, ParameterError, check_choice
from .missing import MISSING_TOKENS

FORMATS = ("csv", "tsv", "jsonl", "parquet")
"""Score file formats that :func:`~metaeval.data.readers.read_scores` and ``write_scores`` handle."""

READ_FORMATS = (*FORMATS, "wmt-seg")
"""What :func:`~metaeval.data.readers.read_scores` reads: :data:`FORMATS` and ``'wmt-seg'``, a WMT metrics-task
segment-level submission (``*.seg.score``: seven tab-separated fields, no header; read by
:mod:`metaeval.data.wmt_submission`)."""

EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl",
              ".parquet": "parquet"}
"""File extension -> format; ``.gz`` may follow the extension of a text format."""

SYSTEM_KEYS = ("system", "summarizer_id")
INPUT_KEYS = ("input", "instance_id")
ANNOTATOR_KEY = "annotator"
NESTED_KEYS = ("metrics", "scores")
"""A JSON line whose ``metrics`` (or ``scores``) field is an object holds its scores there."""

_GZIP_MAGIC = b"\x1f\x8b"
_LABEL_KEYS = frozenset({*SYSTEM_KEYS, *INPUT_KEYS, ANNOTATOR_KEY, "scorer"})


@dataclass(frozen=True)
class RawTable:
    """A parsed score file before its cells get a meaning.

    Attributes
    ----------
    path : str
        The file, as given (used in every error message).
    format : str
        One of :data:`FORMATS`.
    columns : dict of str to sequence
        Column name -> one raw cell per data row: ``str`` for CSV/TSV (a list, or a
        :class:`~metaeval.data.columnar.TextColumn` of the same texts when read column-wise); JSON
        values (numbers, strings, ``None``, lists) for JSON Lines (``None`` where a line lacks the
        field); for Parquet a float array (numeric columns) or a list of Python values.
    rows : numpy.ndarray of int
        The row number of each data row as an editor shows it (see the module notes).
    header_row : int or None
        The row of the header (1 for CSV/TSV), None for formats without one.
    """

    path: str
    format: str
    columns: dict[str, Any]
    rows: np.ndarray
    header_row: int | None

    @property
    def n_rows(self) -> int:
        return len(self.rows)


def file_format(path: str | Path, format: str | None = None, *, writing: bool = False) -> str:
    """The format of ``path``: ``format`` if given, otherwise from the extension (``.gz`` skipped; a name ending
    in ``.seg.score`` is ``'wmt-seg'``). ``writing``: a format to write (:data:`FORMATS` only).

    Raises
    ------
    InputFileError
        If ``format`` is None and the extension names no known format.
    ParameterError
        If ``format`` is not one of :data:`READ_FORMATS` (:data:`FORMATS` when ``writing``).
    """
    if format is not None:
        return check_choice("format", format, FORMATS if writing else READ_FORMATS)
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
        if suffixes and EXTENSIONS.get(suffixes[-1]) == "parquet":
            raise InputFileError(path, "a Parquet file must not be gzipped (Parquet compresses itself); got '.parquet.gz'.")
    if not writing and suffixes[-2:] == [".seg", ".score"]:
        return "wmt-seg"  # a WMT metrics-task submission, x.seg.score
    extension = suffixes[-1] if suffixes else ""
    if extension not in EXTENSIONS:
        listed = ", ".join(repr(e) for e in EXTENSIONS)
        raise InputFileError(
            path,
            f"the extension must be one of {listed} (optionally followed by '.gz'), or pass format=;"
            f" got {extension or 'no extension'!r}.",
        )
    return EXTENSIONS[extension]


def read_table(path: str | Path, format: str, *, columnar: bool = False) -> RawTable:
    """Parse ``path`` in ``format`` (see :data:`FORMATS`) into a :class:`RawTable`.

    ``columnar``: read a CSV / TSV file column-wise when it can be read so exactly
    (:mod:`metaeval.data.columnar`): its columns are then :class:`~metaeval.data.columnar.TextColumn`
    sequences of the same texts instead of lists; any other file is read row by row, as without it.
    """
    if format == "parquet":
        return _parquet_table(path)
    text = read_text(path)
    if format == "jsonl":
        return json_array_table(path, text) if is_json_array(text) else _jsonl_table(path, text)
    if format == "tsv" and _whitespace_layout(text):
        return _whitespace_table(path, text)
    delimiter = "," if format == "csv" else "\t"
    if columnar:
        from .columnar import delimited_columns

        read = delimited_columns(text, delimiter)
        if read is not None:
            _, columns, rows = read
            return RawTable(str(path), format, columns, rows, 1)
    return _delimited_table(path, text, delimiter, format)


def check_regular_file(path: str | Path) -> None:
    """Refuse what is not a regular file (a device such as /dev/zero would be read forever, a FIFO blocks);
    a missing path or a directory is left to the caller's own message. ``path`` must be a str or
    ``os.PathLike``: an int would be taken as an open file descriptor (``read_mqm_ratings(5)`` read
    descriptor 5) and None failed inside ``os.stat``."""
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"`path` must be a file path (a str or os.PathLike); got {path!r}.")
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file")
    raise InputFileError(path, f"the path must name a regular file; got {kind}.")


def read_text(path: str | Path) -> str:
    """The UTF-8 text of ``path``, gunzipped when the file starts with the gzip magic bytes."""
    check_regular_file(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        raise InputFileError(path, "the file must exist; got no such file.") from None
    except IsADirectoryError:
        raise InputFileError(path, "the path must name a file; got a directory.") from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputFileError(path, f"the gzip stream must be complete and valid; got {_first_line(exc)!r}.") from None
    elif str(path).lower().endswith(".gz") and data:
        raise InputFileError(path, "a '.gz' file must be gzip-compressed; got bytes without the gzip header.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputFileError(
            path, f"the file must be UTF-8 text; got byte 0x{data[exc.start]:02x} at offset {exc.start}."
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _empty_file(path: str | Path, *, header_only: bool = False) -> InputFileError:
    got = "only a header" if header_only else "an empty file"
    return InputFileError(path, f"the file must hold at least one row of scores; got {got}.")


# -- CSV / TSV ------------------------------------------------------------------------------------
def _delimited_records(path: str | Path, text: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    while True:
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputFileError(path, f"the row must be valid CSV; got {_first_line(exc)!r}.", row=start) from None
        if record:  # a blank line
            yield start, record


def _delimited_table(path: str | Path, text: str, delimiter: str, format: str) -> RawTable:
    records = _delimited_records(path, text, delimiter)
    first = next(records, None)
    if first is None:
        raise _empty_file(path)
    header_row, header = first
    names = [name.strip() for name in header]
    seen: set[str] = set()
    for position, name in enumerate(names, start=1):
        if not name:
            raise InputFileError(path, f"every column must have a name; got an empty name for column {position}.",
                                 row=header_row)
        if name in seen:
            raise InputFileError(path, f"column names must be unique; got {name!r} twice.", row=header_row, column=name)
        seen.add(name)
    rows: list[int] = []
    cells: list[list[str]] = []
    for row, record in records:
        if len(record) != len(names):
            raise InputFileError(
                path, f"a row must have as many fields as the header ({len(names)}); got {len(record)}.", row=row
            )
        rows.append(row)
        cells.append(record)
    if not rows:
        raise _empty_file(path, header_only=True)
    columns = {name: list(values) for name, values in zip(names, zip(*cells))}
    return RawTable(str(path), format, columns, np.array(rows, dtype=np.int64), header_row)


def _whitespace_layout(text: str) -> bool:
    """A TSV whose header has no tab but several blank-separated names (WMT MQM ``avg_seg_scores.tsv``)."""
    header = next((line for line in text.splitlines() if line.strip()), "")
    return "\t" not in header and len(header.split()) > 1


def _whitespace_table(path: str | Path, text: str) -> RawTable:
    """Fields separated by any run of blanks and tabs (no quoting), as the WMT MQM files are written."""
    records = [(row, line.split()) for row, line in enumerate(text.splitlines(), start=1) if line.strip()]
    header_row, names = records[0]
    for name in names:
        if names.count(name) > 1:
            raise InputFileError(path, f"column names must be unique; got {name!r} twice.", row=header_row, column=name)
    for row, fields in records[1:]:
        if len(fields) != len(names):
            raise InputFileError(path, f"a row must have as many whitespace-separated fields as the header"
                                       f" ({len(names)}); got {len(fields)}.", row=row)
    if len(records) == 1:
        raise _empty_file(path, header_only=True)
    columns = {name: [fields[k] for _, fields in records[1:]] for k, name in enumerate(names)}
    return RawTable(str(path), "tsv", columns, np.array([row for row, _ in records[1:]], dtype=np.int64), header_row)


# -- JSON Lines -----------------------------------------------------------------------------------
def flatten_fields(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested objects with dots: ``{"rouge-2": {"recall": 1}}`` -> ``{"rouge-2.recall": 1}``.

    Two fields that flatten onto one name (``{"m": {"x": 1}, "m.x": -1}``) are a :class:`JsonShapeError`,
    as a key repeated in one object is (no value wins silently). Iterative: any depth the parser accepted.
    """
    flat: dict[str, Any] = {}
    stack = [(prefix, iter(value.items()))]
    while stack:
        base, items = stack[-1]
        for key, item in items:
            name = f"{base}{key}"
            if isinstance(item, dict):
                stack.append((name + ".", iter(item.items())))
                break
            if name in flat:
                raise JsonShapeError(f"fields must keep distinct names when nested objects flatten with dots; got"
                                     f" {name!r} twice")
            flat[name] = item
        else:
            stack.pop()
    return flat


def json_type(value: Any) -> str:
    """How a parsed JSON value is named in messages ('an object', 'an array', ...)."""
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), repr(value))


class JsonShapeError(ValueError):
    """A JSON text that parses but that metaeval refuses: a repeated key, or nesting too deep to parse."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise JsonShapeError(f"a JSON object must not repeat a key; got {key!r} twice")
        seen.add(key)
    return dict(pairs)


def parse_json(text: str) -> Any:
    """``json.loads`` for user files: a key repeated in one object is refused (the standard library keeps the
    last value silently; a CSV with a repeated column is refused too), and so is nesting too deep for the
    parser (:class:`JsonShapeError`); malformed JSON raises :class:`json.JSONDecodeError`."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise JsonShapeError("JSON values must be nested at most a few hundred levels deep; got deeper nesting") from None


def json_lines(path: str | Path, text: str) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` of every non-blank line of JSON Lines ``text`` read from ``path``.

    The one JSON Lines parser of metaeval (score files, the packaged sources, text files); malformed JSON
    is an :class:`~metaeval.errors.InputFileError` naming the line. Callers say what a value must be.
    """
    for row, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = parse_json(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(
                path, f"a line must be one JSON object; got malformed JSON: {exc.msg} at column {exc.colno}.", row=row
            ) from None
        except JsonShapeError as exc:
            raise InputFileError(path, f"{exc}.", row=row) from None
        yield row, value


def jsonl_record_fields(path: str | Path, row: int, record: Any) -> dict[str, Any]:
    if not isinstance(record, dict):
        hint = " (JSON Lines holds one object per line)" if isinstance(record, list) else ""
        raise InputFileError(path, f"a line must be one JSON object; got {json_type(record)}{hint}.", row=row)
    nested = next((key for key in NESTED_KEYS if isinstance(record.get(key), dict)), None)
    try:
        if nested is None:
            return flatten_fields(record)
        scores = flatten_fields(record[nested])
    except JsonShapeError as exc:
        raise InputFileError(path, f"{exc}.", row=row) from None
    label_keys = (*SYSTEM_KEYS, *INPUT_KEYS, ANNOTATOR_KEY)
    inside = next((key for key in label_keys if key in scores), None)
    if inside is not None:
        raise InputFileError(path, f"the {nested!r} object must hold scores only; got the label field {inside!r} in it"
                                   " (it would relabel the row: put it beside the object).", row=row,
                             column=f"{nested}.{inside}")
    labels = {key: record[key] for key in label_keys if key in record}
    return {**labels, **scores}


def _jsonl_table(path: str | Path, text: str) -> RawTable:
    rows: list[int] = []
    records: list[dict[str, Any]] = []
    for row, record in json_lines(path, text):
        records.append(jsonl_record_fields(path, row, record))
        rows.append(row)
    if not records:
        raise _empty_file(path)
    names: dict[str, None] = {}
    for record in records:
        for key in record:
            names.setdefault(key, None)
    columns = {name: [record.get(name) for record in records] for name in names}
    return RawTable(str(path), "jsonl", columns, np.array(rows, dtype=np.int64), None)


# -- Parquet --------------------------------------------------------------------------------------
def _parquet_table(path: str | Path) -> RawTable:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not Path(path).exists():
        raise InputFileError(path, "the file must exist; got no such file.")
    check_regular_file(path)
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError, ValueError) as exc:
        reason = re.sub(r"^Could not open Parquet input source '.*?': ", "", _first_line(exc))
        raise InputFileError(path, f"the file must be readable as Parquet; got {reason!r}.") from None
    if table.num_rows == 0:
        raise _empty_file(path)
    names = [n for n in table.column_names if not n.startswith("__index_level_")]  # a pandas index
    for name in names:
        if names.count(name) > 1:
            raise InputFileError(path, f"column names must be unique; got {name!r} twice.", column=name)
    columns: dict[str, Any] = {}
    for name in names:
        column = table.column(name)
        numeric = pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
        if numeric and name not in _LABEL_KEYS:
            columns[name] = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False)
        else:
            columns[name] = column.to_pylist()
    rows = np.arange(1, table.num_rows + 1, dtype=np.int64)
    return RawTable(str(path), "parquet", columns, rows, None)

# -- JSON arrays of records: ``[{"hash": ..., "model_name": ..., "Factuality": 0.5}, ...]`` ---------------
# The layout FRANK ships (``human_annotations.json``, ``baseline_factuality_metrics_outputs.json``) and
# ``pandas.DataFrame.to_json(orient="records")`` writes. A ``.json`` (or ``.jsonl``) file whose first
# non-blank character is ``[`` is read as one JSON array; otherwise as JSON Lines. Each element must be
# an object, read like one line of JSON Lines (nested objects flatten with dots; a ``metrics`` /
# ``scores`` object holds the scores). Rows are the records counted from 1.


def is_json_array(text: str) -> bool:
    """Whether ``text`` holds a JSON array (its first non-blank character is ``[``)."""
    return text.lstrip()[:1] == "["


def json_array_table(path: str | Path, text: str) -> RawTable:
    """Parse a JSON array of records into a :class:`RawTable` (rows = records from 1)."""
    try:
        records = parse_json(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"the file must be one JSON array of objects; got malformed JSON: {exc.msg}"
                                   f" at line {exc.lineno}, column {exc.colno}.") from None
    except JsonShapeError as exc:
        raise InputFileError(path, f"{exc}.") from None
    if not isinstance(records, list):
        raise InputFileError(path, "the file must be one JSON array of objects; got another JSON value.")
    if not records:
        raise InputFileError(path, "the file must hold at least one row of scores; got an empty array.")
    flat: list[dict[str, Any]] = []
    for row, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise InputFileError(path, f"every element of the array must be a JSON object; got {type(record).__name__}"
                                       " (a JSON array of records holds one object per row).", row=row)
        flat.append(jsonl_record_fields(path, row, record))
    names: dict[str, None] = {}
    for record in flat:
        for key in record:
            names.setdefault(key, None)
    columns = {name: [record.get(name) for record in flat] for name in names}
    return RawTable(str(path), "jsonl", columns, np.arange(1, len(flat) + 1, dtype=np.int64), None)
