"""Reading a large JSON Lines comparison file column-wise (Arrow's JSON reader), for speed and memory.

A million Chatbot-Arena battles read row by row (one ``json.loads`` and one dict per line, one Python string
per cell) took most of ``judge rank``'s time and about ten times the file's size in memory. Here the file is
parsed by ``pyarrow.json`` into typed columns, each role's column is dictionary-encoded, and only its
distinct values go through the reader's cell rule (:func:`metaeval.judges.cells._label`): the codes stay
numpy arrays. The result equals :func:`metaeval.judges.reader.read_comparisons`'s row-wise reading, label
for label and code for code (a test holds them equal).

The fast path reads only what it can read exactly; anything else - a gzipped file, a JSON array, a ``where``
filter, FastChat's two-game rows, a missing or empty cell, a verdict outside the vocabulary, a value of
another type than the column's, a repeated key, a system compared with itself, a length that is not a
number >= 0 - sends the file to the row-wise reader, which reads it or names the file, row and column of
the problem.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .comparisons import Comparisons, make_comparisons

__all__ = ["read_columnar"]

BLOCK_SIZE = 8 << 20
"""Bytes of the file parsed at a time (the reader's buffers stay near this, not the file's size)."""


class _Columns:
    """What :func:`metaeval.judges.reader._mapping` needs of a table: its column names and its path."""

    def __init__(self, names, path):
        self.columns = dict.fromkeys(names)
        self.path = str(path)
        self.header_row = None


def _first_appearance(ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Codes renumbered in order of first appearance in ``ids`` (values 0..n-1): (new code per row, old id of
    each new code)."""
    first = np.full(n, ids.size, dtype=np.int64)
    np.minimum.at(first, ids, np.arange(ids.size, dtype=np.int64))
    order = np.argsort(first, kind="stable")
    order = order[first[order] < ids.size]  # ids that occur
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank[ids], order


def _encoded(column) -> tuple[list[Any], np.ndarray] | None:
    """(distinct values, index of each row's value) of an Arrow column without nulls, or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if column.null_count:
        return None
    kind = column.type
    if pa.types.is_dictionary(kind):
        column = column.unify_dictionaries()
        chunks = column.chunks
        values = chunks[0].dictionary.to_pylist() if chunks else []
        index = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks]) if chunks else \
            np.empty(0, dtype=np.int64)
        return values, index.astype(np.int64)
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)
            or pa.types.is_floating(kind)):
        return None
    encoded = pc.dictionary_encode(column)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    return encoded.dictionary.to_pylist(), encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def _labelled(column) -> tuple[tuple[str, ...], np.ndarray] | None:
    """(labels in order of first appearance, code of each row) by the reader's cell rule, or None when a cell
    is empty or of a kind the row-wise reader must judge."""
    from .cells import _label

    found = _encoded(column)
    if found is None:
        return None
    values, index = found
    labels = [_label(v) for v in values]
    if any(label is None for label in labels):
        return None
    if all(label is value for label, value in zip(labels, values)):  # text cells taken as they are
        codes, order = _first_appearance(index, len(values))
        return tuple(labels[k] for k in order), codes
    distinct: dict[str, int] = {}
    merged = np.array([distinct.setdefault(label, len(distinct)) for label in labels], dtype=np.int64)
    codes, order = _first_appearance(merged[index], len(distinct))
    names = list(distinct)
    return tuple(names[k] for k in order), codes


def _lengths(column) -> np.ndarray | None:
    import pyarrow as pa

    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)):
        return None
    out = column.to_numpy(zero_copy_only=False).astype(np.float64)  # nulls become NaN: a missing length
    known = ~np.isnan(out)
    if np.any(~np.isfinite(out[known])) or np.any(out[known] < 0):
        return None
    return out


def read_columnar(path: str | Path, fmt: str, *, columns, where, judge, verdict_map, names) -> Comparisons | None:
    """The comparisons of a JSON Lines file read column-wise, or None when the row-wise reader must read it."""
    if fmt != "jsonl" or where or str(path).lower().endswith((".gz", ".gzip", ".json")):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    from .cells import FASTCHAT_COLUMNS, _mapping, _warn_names, _warn_pooled

    try:  # streamed in blocks, keeping the roles' columns only (a new key or type in a later block: row-wise)
        reader = pj.open_json(str(path), read_options=pj.ReadOptions(block_size=BLOCK_SIZE))
        names_in_file = reader.schema.names
        if any(c in names_in_file for c in FASTCHAT_COLUMNS[2:]):
            return None
        try:
            roles = _mapping(_Columns(names_in_file, path), columns, names)
        except Exception:  # noqa: BLE001 - the row-wise reader says what is wrong, with the row
            return None
        kept = sorted({c for column in roles.values() for c in ((column,) if isinstance(column, str) else column)})
        batches = [pa.record_batch([batch.column(batch.schema.get_field_index(c)) for c in kept], names=kept)
                   for batch in reader]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError):
        return None
    if not batches:
        return None
    table = pa.Table.from_batches(batches)
    del batches
    if table.num_rows == 0:
        return None
    if "shown_first" in roles:
        return None  # the presented order is put in place row by row
    verdict = _encoded(table.column(roles["verdict"]))
    if verdict is None:
        return None
    values, index = verdict
    codes = np.empty(len(values), dtype=np.int8)
    keep_value = np.ones(len(values), dtype=bool)
    from .cells import DROPPED, verdict_code

    for k, value in enumerate(values):
        code = verdict_code(value, verdict_map)
        if code is None:
            return None
        if code == DROPPED:
            keep_value[k] = False
            continue
        codes[k] = code
    if not keep_value.all():
        return None  # the row-wise reader counts and names the dropped rows
    verdicts = codes[index]
    del index
    input_columns = (roles["input"],) if isinstance(roles["input"], str) else tuple(roles["input"])
    parts = [_labelled(table.column(c)) for c in input_columns]
    if any(p is None for p in parts):
        return None
    inputs, input_codes = parts[0]
    for labels, more in parts[1:]:
        joint = input_codes * len(labels) + more
        unique, inverse = np.unique(joint, return_inverse=True)
        input_codes, order = _first_appearance(inverse.ravel(), unique.size)
        inputs = tuple(f"{inputs[unique[k] // len(labels)]}/{labels[unique[k] % len(labels)]}" for k in order)
    first, second = table.column(roles["first"]), table.column(roles["second"])
    if first.type != second.type:
        return None
    both = _labelled(pa.chunked_array(first.chunks + second.chunks, type=first.type))
    if both is None:
        return None
    systems, codes_both = both
    n = table.num_rows
    first_codes, second_codes = codes_both[:n], codes_both[n:]
    del codes_both
    if np.any(first_codes == second_codes):
        return None
    if "judge" in roles:
        found = _labelled(table.column(roles["judge"]))
        if found is None:
            return None
        judges, judge_codes = found
    else:
        judges = (judge or Path(str(path)).name.split(".")[0],)
        judge_codes = np.zeros(n, dtype=np.int64)
    repeat = None
    if "repeat" in roles:
        found = _labelled(table.column(roles["repeat"]))
        if found is None:
            return None
        repeat = found[1]
    lengths = [None, None]
    for k, role in enumerate(("first_length", "second_length")):
        if role in roles:
            lengths[k] = _lengths(table.column(roles[role]))
            if lengths[k] is None:
                return None
    if (lengths[0] is None) != (lengths[1] is None):
        return None
    del table, pc
    pa.default_memory_pool().release_unused()  # the parser's blocks go back to the system before the ranking
    if repeat is None:
        _warn_pooled(str(path), input_codes, first_codes, second_codes, judge_codes, len(systems), len(judges),
                     names["input"])
    _warn_names("system", systems, str(path))
    _warn_names("judge", judges, str(path))
    return make_comparisons(systems=systems, inputs=inputs, judges=judges, input=input_codes, first=first_codes,
                            second=second_codes, judge=judge_codes, verdict=verdicts, repeat=repeat,
                            first_length=lengths[0], second_length=lengths[1], source=str(path))
