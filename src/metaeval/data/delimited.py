"""The column separator of a delimited text file, sniffed from its header line, and its rows.

A tab when the header line holds one (fields taken as written, quotes included: the MQM ratings releases
quote nothing), else a comma read with the csv module's rules (quoted fields may hold commas, doubled
quotes and line breaks). Used by :func:`metaeval.data.mqm_ratings.read_mqm_ratings` and its detection rule.
"""
from __future__ import annotations

import csv
import io

from ..errors import InputFileError

__all__ = ["DELIMITERS", "header_delimiter", "header_names", "rows_after_header"]

#: Column separators of a ratings file, by name: the release's tab, or a comma (quoted fields, csv rules).
DELIMITERS = {"\t": "tab", ",": "comma"}


def header_delimiter(first_line: str) -> str | None:
    """The column separator of a ratings file from its header line: a tab when the line holds one (the
    release's format; fields are taken as written, quotes included), else a comma when the line splits
    into two or more fields by the csv module's rules (quoted fields), else None."""
    if "\t" in first_line:
        return "\t"
    try:
        fields = next(csv.reader([first_line]), [])
    except csv.Error:
        return None
    return "," if len(fields) > 1 else None


def header_names(first_line: str, delimiter: str) -> list[str]:
    """The column names of the header line ``first_line`` split by ``delimiter`` (csv rules for a comma)."""
    if delimiter == "\t":
        return first_line.split("\t")
    return next(csv.reader([first_line]), [])


def rows_after_header(text: str, delimiter: str, path):
    """``(line number, fields)`` of each non-blank row after the header: split on tabs, or read with the
    csv module (a quoted field may hold commas, quotes doubled, and line breaks; the number is the row's
    first line)."""
    if delimiter == "\t":
        for number, line in enumerate(text.split("\n")[1:], start=2):
            line = line.rstrip("\r")
            if line.strip():
                yield number, line.split("\t")
        return
    lines = io.StringIO(text, newline="")
    reader = csv.reader(lines, delimiter=",", quotechar='"', doublequote=True, strict=True)
    try:
        next(reader)
        start = reader.line_num + 1
        for fields in reader:
            if any(f.strip() for f in fields):
                yield start, fields
            start = reader.line_num + 1
    except csv.Error as exc:
        raise InputFileError(path, f"every row must be comma-separated with csv quoting; got {exc}.",
                             row=start) from None
