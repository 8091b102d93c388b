"""JSON arrays of records: ``[{"hash": ..., "model_name": ..., "Factuality": 0.5}, ...]``.

The layout FRANK ships (``human_annotations.json``, ``baseline_factuality_metrics_outputs.json``) and
``pandas.DataFrame.to_json(orient="records")`` writes. A ``.json`` (or ``.jsonl``) file whose first
non-blank character is ``[`` is read as one JSON array; otherwise as JSON Lines. Each element must be
an object, read like one line of JSON Lines (nested objects flatten with dots; a ``metrics`` /
``scores`` object holds the scores). Rows are the records counted from 1.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputFileError
from .formats import RawTable, jsonl_record_fields


def is_json_array(text: str) -> bool:
    """Whether ``text`` holds a JSON array (its first non-blank character is ``[``)."""
    return text.lstrip()[:1] == "["


def json_array_table(path: str | Path, text: str) -> RawTable:
    """Parse a JSON array of records into a :class:`RawTable` (rows = records from 1)."""
    try:
        records = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"the file must be one JSON array of objects; got malformed JSON: {exc.msg}"
                                   f" at line {exc.lineno}, column {exc.colno}.") from None
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
