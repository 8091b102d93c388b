"""Column-wise reading of CSV and TSV score files, with the row-wise parser as the reference.

:func:`metaeval.data.formats.read_table` parses CSV and TSV row by row with the standard library's
:mod:`csv` module: every cell becomes a Python string (about 0.7 KB per row of five columns while a file
is read). For a score file of millions of rows, :func:`delimited_columns` parses the file column-wise with
Arrow's CSV reader instead, keeping each column as one Arrow string array (:class:`TextColumn`), and
:func:`plain_floats` converts a column of numbers in one call.

Both are *fast paths* of the row-wise reader, never a second dialect. They accept only what they can
read exactly as the row-wise reader does and return None otherwise, so that the caller falls back to the
row-wise code, with its own result and its own error message (file, row, column, what was expected):

- a file is read column-wise only without quote characters, carriage returns, NUL bytes or blank lines,
  with a header of at least two distinct, non-empty names, at least one data row, every row with as many
  fields as the header, and no field over the :mod:`csv` module's field size limit. Without quotes and
  blank lines a CSV record is one line split at the delimiter, so rows and cells are the same; a data
  row's number is its line (the header is line 1);
- a column converts column-wise when every cell is either a plain decimal number (``-1.5``, ``3``,
  ``.5e-3``: optional sign, digits, optional point and exponent, nothing around it), exactly as Python's
  ``float`` reads it (both round correctly; ``tests/test_data_columnar.py`` checks the bits), or a
  missing-score spelling of :data:`~metaeval.data.formats.MISSING_TOKENS` without surrounding blanks in
  ASCII letters of any case; and no value is infinite (``1e999``).
"""
from __future__ import annotations

import csv
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .formats import MISSING_TOKENS

_CHUNK = 65_536
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
_BLOCK_BYTES = 1 << 24


class TextColumn(Sequence):
    """The cells of one CSV / TSV column as an Arrow string array (or chunked array), read as a sequence of ``str``.

    Indexing by an integer gives the cell's text (as the row-wise parser's list would); by a slice, an
    integer array or a boolean mask, another :class:`TextColumn`; iteration yields the texts in row order.
    Equal to a list or tuple of the same texts.
    """

    __slots__ = ("_array",)

    def __init__(self, array: Any):
        self._array = array

    @property
    def arrow(self) -> Any:
        """The Arrow string array or chunked array (no nulls)."""
        return self._array

    def __len__(self) -> int:
        return len(self._array)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, (int, np.integer)):
            k = int(key)
            if k < 0:
                k += len(self._array)
            if not 0 <= k < len(self._array):
                raise IndexError("TextColumn index out of range")
            return self._array[k].as_py()
        if isinstance(key, slice):
            return TextColumn(self._array.take(np.arange(len(self._array))[key]))
        index = np.asarray(key)
        if index.dtype == bool:
            index = np.flatnonzero(index)
        return TextColumn(self._array.take(index.astype(np.int64)))

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self._array), _CHUNK):
            yield from self._array.slice(start, _CHUNK).to_pylist()

    def to_list(self) -> list[str]:
        """The texts as a list of ``str`` (the row-wise parser's column)."""
        return self._array.to_pylist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.array(self.to_list(), dtype=dtype)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextColumn):
            return len(other) == len(self) and self.to_list() == other.to_list()
        if isinstance(other, (list, tuple)):
            return len(other) == len(self) and self.to_list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(repr(t) for t in self._array.slice(0, 3).to_pylist())
        return f"TextColumn([{shown}{', ...' if len(self) > 3 else ''}], {len(self)} cells)"

    def coded(self) -> tuple[np.ndarray, list[str]]:
        """``(codes, texts)``: the distinct texts in order of first appearance and each cell's position in them."""
        import pyarrow.compute as pc

        distinct = pc.unique(self._array)
        codes = pc.index_in(self._array, value_set=distinct)
        return np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.intp), distinct.to_pylist()

    def distinct(self) -> list[str]:
        """The distinct texts in order of first appearance."""
        import pyarrow.compute as pc

        return pc.unique(self._array).to_pylist()


def delimited_columns(text: str, delimiter: str) -> tuple[list[str], dict[str, TextColumn], np.ndarray] | None:
    """``(names, columns, rows)`` of CSV / TSV ``text`` read column-wise, or None when the row-wise parser
    must read it (see the module notes for what is read here)."""
    if '"' in text or "\r" in text or "\x00" in text or "\n\n" in text:
        return None
    end = text.find("\n")
    if end <= 0 or end == len(text) - 1:  # a blank first line, or no data row
        return None
    header = text[:end].split(delimiter)
    names = [name.strip() for name in header]
    if len(names) < 2 or not all(names) or len(set(names)) != len(names):
        return None
    limit = csv.field_size_limit()
    if max(len(field) for field in header) >= limit:
        return None
    data = text.encode("utf-8")
    start = len(text[:end].encode("utf-8")) + 1  # the body: the bytes after the header line (not copied)
    table = _arrow_csv(data, start, delimiter, len(names))
    if table is None:
        return None
    n_rows = data.count(b"\n", start) + (not data.endswith(b"\n"))
    if table.num_rows != n_rows:
        return None
    import pyarrow.compute as pc

    columns = {}
    for name, column in zip(names, table.columns):  # chunked arrays, as parsed (not concatenated)
        if column.null_count or pc.max(pc.utf8_length(column)).as_py() >= limit:
            return None
        columns[name] = TextColumn(column)
    return names, columns, np.arange(2, n_rows + 2, dtype=np.int64)


def _arrow_csv(data: bytes, start: int, delimiter: str, n_columns: int) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    generated = [f"f{k}" for k in range(n_columns)]
    try:
        return pacsv.read_csv(
            pa.BufferReader(pa.py_buffer(data)[start:]),
            read_options=pacsv.ReadOptions(column_names=generated, block_size=_BLOCK_BYTES),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False, double_quote=False,
                                             escape_char=False, newlines_in_values=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(column_types={name: pa.string() for name in generated},
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False,
                                                 null_values=[], check_utf8=True),
        )
    except (pa.ArrowException, ValueError):
        return None


def plain_floats(column: TextColumn) -> np.ndarray | None:
    """The float64 values of a column of plain numbers and missing-score spellings (NaN), or None when a cell
    is anything else or a value is infinite (see the module notes)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = column.arrow
    if not len(array):
        return None
    missing = pc.is_in(pc.ascii_lower(array), value_set=pa.array(sorted(MISSING_TOKENS)))
    number = pc.match_substring_regex(array, _NUMBER)
    if not pc.all(pc.or_(missing, number)).as_py():
        return None
    try:
        values = pc.cast(pc.if_else(missing, "0", array), pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowException, ValueError):
        return None
    values = np.array(values, dtype=np.float64)
    values[missing.to_numpy(zero_copy_only=False)] = np.nan
    if np.isinf(values).any():
        return None
    return values


def release_arrow_memory() -> None:
    """Return to the system the memory Arrow's allocator keeps for reuse once a column-wise table is dropped
    (about 200 MB after a file of 2 million rows, which nothing else would reuse)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
