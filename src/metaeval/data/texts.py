"""Text files in JSON Lines (system outputs and references read by the analyses): checked before use.

:func:`read_records` turns a (possibly gzipped) JSON Lines file into ``(line, object)`` pairs; the
field getters check one field of one line. Every problem is one
:class:`~metaeval.errors.InputFileError` naming the file, the line and the field: not UTF-8, truncated
gzip or JSON, a line that is not an object, an empty file, a missing field, a label that is not a
string or an integer, an empty text, a list of texts that is empty or holds a non-string.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputFileError
from .formats import json_lines, json_type, read_text

__all__ = ["label_field", "read_records", "text_field", "texts_field"]


def read_records(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, JSON object)`` of every non-blank line of ``path`` (UTF-8, optionally gzipped)."""
    records = []
    for row, record in json_lines(path, read_text(path)):
        if not isinstance(record, dict):
            raise InputFileError(path, f"a line must be one JSON object; got {json_type(record)}.", row=row)
        records.append((row, record))
    if not records:
        raise InputFileError(path, "the file must hold at least one JSON line; got an empty file.")
    return records


def _field(path: str | Path, row: int, record: dict[str, Any], key: str) -> Any:
    if key not in record:
        raise InputFileError(path, f"every line must have the field {key!r}; got the fields {sorted(record)!r}.",
                             row=row)
    return record[key]


def label_field(path: str | Path, row: int, record: dict[str, Any], key: str) -> str:
    """The field ``key`` as a non-empty label (a string, or an integer turned into one)."""
    value = _field(path, row, record, key)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise InputFileError(path, f"a label must be a non-empty string or an integer; got {value!r}.",
                             row=row, column=key)
    return str(value)


def text_field(path: str | Path, row: int, record: dict[str, Any], key: str) -> str:
    """The field ``key`` as a non-empty string."""
    value = _field(path, row, record, key)
    if not isinstance(value, str) or not value.strip():
        raise InputFileError(path, f"a text must be a non-empty string; got {_shown(value)}.", row=row, column=key)
    return value


def texts_field(path: str | Path, row: int, record: dict[str, Any], key: str) -> list[str]:
    """The field ``key`` as a non-empty list of non-empty strings."""
    value = _field(path, row, record, key)
    if (not isinstance(value, list) or not value
            or not all(isinstance(item, str) and item.strip() for item in value)):
        raise InputFileError(path, f"a list of texts must be a non-empty array of non-empty strings; got {_shown(value)}.",
                             row=row, column=key)
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
