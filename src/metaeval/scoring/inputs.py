"""What the scoring engine reads: candidates (system outputs) and references, from files or memory.

Two JSON Lines files (``.jsonl``, optionally gzipped ``.jsonl.gz``), one JSON object per line:

candidates
    ``{"system": "M0", "input": "doc-1", "candidate": "First sentence .\\nSecond sentence ."}``;
    ``candidate`` is a text (one sentence per line) or a list of sentences. One line per
    (system, input) pair; a system may skip inputs (its cells are then NaN).
references
    ``{"input": "doc-1", "references": ["a reference", ["another", "in two sentences"]]}``: a
    non-empty list of references, each a text or a list of sentences; or ``"reference": "..."`` for
    exactly one. One line per input; inputs that no candidate uses are ignored.

Labels are strings (integers are accepted and turned into strings). Every problem raises
:class:`~metaeval.errors.InputFileError` naming the file, the line and the field: invalid UTF-8 or
JSON, a missing or mistyped field, an empty text, a duplicate (system, input) or input, and a
candidate whose input has no references. In-memory inputs (a list of records, a pandas DataFrame, or a
mapping) get the same checks; their "file" is ``<candidates>`` / ``<references>`` and rows count from 1.
"""
from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from ..data.formats import JsonShapeError, check_regular_file, parse_json
from ..errors import InputFileError, ParameterError

__all__ = ["ScoringInputs", "load_inputs", "read_candidates", "read_references"]

#: A text: one string (sentences one per line) or a tuple of sentences.
Text = Union[str, tuple[str, ...]]

CANDIDATES_SOURCE = "<candidates>"
REFERENCES_SOURCE = "<references>"


@dataclass(frozen=True)
class CandidateRow:
    """One line of a candidates file."""

    system: str
    input: str
    candidate: Text
    row: int


@dataclass(frozen=True)
class ScoringInputs:
    """Candidates and their references, checked and aligned.

    Attributes
    ----------
    systems, inputs : tuple of str
        Labels in order of first appearance in the candidates.
    cells : tuple of (int, int)
        ``(system index, input index)`` of every candidate, in file order.
    candidates : tuple of Text
        The candidate of every cell.
    references : dict of str to tuple of Text
        The references of every input in ``inputs``.
    """

    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    cells: tuple[tuple[int, int], ...]
    candidates: tuple[Text, ...]
    references: Mapping[str, tuple[Text, ...]]

    def pair(self, cell: int) -> tuple[Text, tuple[Text, ...]]:
        """``(candidate, references)`` of the ``cell``-th candidate."""
        return self.candidates[cell], self.references[self.inputs[self.cells[cell][1]]]


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed JSON value)`` of every non-blank line of a (gzipped) JSON Lines file."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    check_regular_file(path)
    try:
        with opener(path, "rb") as stream:
            for number, raw in enumerate(stream, start=1):
                try:
                    line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
                except UnicodeDecodeError as error:
                    raise InputFileError(
                        path,
                        f"must be UTF-8 text; got the byte {raw[error.start]:#04x} at byte"
                        f" {error.start + 1}, which is not UTF-8.",
                        row=number,
                    ) from None
                if not line.strip():
                    continue
                try:
                    value = parse_json(line.rstrip("\r\n"))
                except json.JSONDecodeError as error:
                    raise InputFileError(path, f"must hold one JSON object per line; got invalid JSON ({error.msg}"
                                         f" at character {error.pos + 1}).", row=number) from None
                except JsonShapeError as error:
                    raise InputFileError(path, f"{error}.", row=number) from None
                yield number, value
    except (gzip.BadGzipFile, EOFError) as error:
        raise InputFileError(path, f"must be a readable gzip file (it ends in .gz); got {error}.") from None


def _label(source: str, record: Mapping[str, Any], key: str, row: int) -> str:
    if key not in record:
        raise InputFileError(source, f"must have the field {key!r}; got the fields {sorted(record)!r}.", row=row)
    value = record[key]
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise InputFileError(source, f"must be a label (a string or an integer); got {value!r}.", row=row, column=key)
    label = str(value)
    if not label.strip():
        raise InputFileError(source, "must be a non-empty label; got an empty string.", row=row, column=key)
    return label


def _text(source: str, value: Any, row: int, column: str, what: str) -> Text:
    """A non-empty text (a string, or a list of strings not all blank) from a JSON value."""
    if isinstance(value, str):
        if not value.strip():
            raise InputFileError(source, f"must be a non-empty {what}; got {value!r}.", row=row, column=column)
        return value
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)) and all(isinstance(s, str) for s in value):
        if not any(s.strip() for s in value):
            raise InputFileError(source, f"must be a non-empty {what}; got {list(value)!r}.", row=row, column=column)
        return tuple(value)
    raise InputFileError(source, f"must be a {what}: a text or a list of sentences (strings); got {value!r}.",
                         row=row, column=column)


def _records(data: Any, source: str, param: str) -> Iterator[tuple[int, Any]]:
    """``(row, record)`` of a path (JSON Lines), a DataFrame or a sequence of mappings."""
    if isinstance(data, (str, os.PathLike)):
        path = Path(data)
        if path.is_dir():
            raise InputFileError(path, "must be a file; got a directory.")
        if not path.exists():
            raise InputFileError(path, "must be an existing file; got a path that does not exist.")
        check_regular_file(path)
        return _json_lines(path)
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        return enumerate(data.to_dict(orient="records"), start=1)
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        return enumerate(data, start=1)
    raise ParameterError(
        f"`{param}` must be a path to a JSON Lines file, a list of records or a pandas DataFrame; got {type(data).__name__}."
    )


def _source(data: Any, default: str) -> str:
    return str(data) if isinstance(data, (str, os.PathLike)) else default


def read_candidates(candidates: Any) -> list[CandidateRow]:
    """Read and check candidates (see the module docstring for the format).

    Parameters
    ----------
    candidates : path, list of dict, pandas.DataFrame or mapping
        A JSON Lines file; records with ``system``, ``input`` and ``candidate``; or a mapping
        ``{system: {input: candidate}}``.

    Returns
    -------
    list of CandidateRow

    Raises
    ------
    InputFileError
        If a row is malformed, or a (system, input) pair occurs twice.
    """
    source = _source(candidates, CANDIDATES_SOURCE)
    if isinstance(candidates, Mapping):
        candidates = _nested_records(candidates)
    rows: list[CandidateRow] = []
    seen: dict[tuple[str, str], int] = {}
    for row, record in _records(candidates, source, "candidates"):
        if not isinstance(record, Mapping):
            raise InputFileError(source, f"must be a JSON object with system, input and candidate; got {record!r}.", row=row)
        system = _label(source, record, "system", row)
        item = _label(source, record, "input", row)
        if "candidate" not in record:
            raise InputFileError(source, f"must have the field 'candidate'; got the fields {sorted(record)!r}.", row=row)
        text = _text(source, record["candidate"], row, "candidate", "candidate")
        if (system, item) in seen:
            raise InputFileError(source, f"must hold one candidate per (system, input); got ({system!r}, {item!r})"
                                 f" again (first on row {seen[system, item]}).", row=row, column="input")
        seen[system, item] = row
        rows.append(CandidateRow(system, item, text, row))
    if not rows:
        raise InputFileError(source, "must hold at least one candidate; got none.")
    return rows


def _nested_records(mapping: Mapping[Any, Any]) -> list[dict[str, Any]]:
    records = []
    for system, per_input in mapping.items():
        if not isinstance(per_input, Mapping):
            raise ParameterError(
                f"`candidates` must map each system to a mapping {{input: candidate}}; got {per_input!r} for {system!r}."
            )
        records.extend({"system": system, "input": item, "candidate": text} for item, text in per_input.items())
    return records


def read_references(references: Any) -> dict[str, tuple[Text, ...]]:
    """Read and check references (see the module docstring for the format).

    Parameters
    ----------
    references : path, list of dict, pandas.DataFrame or mapping
        A JSON Lines file; records with ``input`` and ``references`` (or ``reference``); or a mapping
        ``{input: [reference, ...]}``.

    Returns
    -------
    dict of str to tuple of Text

    Raises
    ------
    InputFileError
        If a row is malformed, or an input occurs twice.
    """
    source = _source(references, REFERENCES_SOURCE)
    if isinstance(references, Mapping):
        references = [{"input": item, "references": refs} for item, refs in references.items()]
    out: dict[str, tuple[Text, ...]] = {}
    rows: dict[str, int] = {}
    for row, record in _records(references, source, "references"):
        if not isinstance(record, Mapping):
            raise InputFileError(source, f"must be a JSON object with input and references; got {record!r}.", row=row)
        item = _label(source, record, "input", row)
        if ("references" in record) == ("reference" in record):
            raise InputFileError(source, "must have exactly one of the fields 'references' (a list) and 'reference'"
                                 f" (one text); got the fields {sorted(record)!r}.", row=row)
        if "reference" in record:
            refs: tuple[Text, ...] = (_text(source, record["reference"], row, "reference", "reference"),)
        else:
            value = record["references"]
            if isinstance(value, str) or not isinstance(value, Sequence) or len(value) == 0:
                raise InputFileError(source, "must be a non-empty list of references (each a text or a list of"
                                     f" sentences; use 'reference' for a single text); got {value!r}.",
                                     row=row, column="references")
            refs = tuple(_text(source, r, row, "references", "reference") for r in value)
        if item in out:
            raise InputFileError(source, f"must hold one line per input; got {item!r} again (first on row {rows[item]}).",
                                 row=row, column="input")
        out[item] = refs
        rows[item] = row
    if not out:
        raise InputFileError(source, "must hold at least one input with references; got none.")
    return out


def load_inputs(candidates: Any, references: Any) -> ScoringInputs:
    """Read candidates and references and align them.

    Parameters
    ----------
    candidates, references
        See :func:`read_candidates` and :func:`read_references`.

    Returns
    -------
    ScoringInputs

    Raises
    ------
    InputFileError
        If either is malformed, or a candidate's input has no references (the error names the
        candidates file and row).
    """
    rows = read_candidates(candidates)
    refs = read_references(references)
    source = _source(candidates, CANDIDATES_SOURCE)
    systems: dict[str, int] = {}
    inputs: dict[str, int] = {}
    cells = []
    for row in rows:
        if row.input not in refs:
            where = _source(references, REFERENCES_SOURCE)
            raise InputFileError(source, f"must name an input that has references; got {row.input!r}, which is not"
                                 f" in {where}.", row=row.row, column="input")
        i = systems.setdefault(row.system, len(systems))
        j = inputs.setdefault(row.input, len(inputs))
        cells.append((i, j))
    return ScoringInputs(
        systems=tuple(systems),
        inputs=tuple(inputs),
        cells=tuple(cells),
        candidates=tuple(row.candidate for row in rows),
        references={item: refs[item] for item in inputs},
    )
