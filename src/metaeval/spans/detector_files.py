"""Detector files: reading and writing a detector's spans (the format is in :mod:`metaeval.spans.model`).

JSON Lines or one JSON array; the field names of common layouts; spans by offsets (characters, UTF-8 bytes
or UTF-16 code units; exclusive or inclusive end) or by their text; every problem a one-line error naming
the file and line (a key given twice, nesting deeper than :data:`MAX_JSON_DEPTH`, an offset out of range,
...). :func:`write_detector_spans` writes what :func:`read_detector_spans` reads back.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, Mapping

from ..data.formats import read_text
from ..errors import DataWarning, InputFileError, ParameterError, check_choice
from .model import SIDES, Span, SpanAnnotations, check_span, pooled_cell

__all__ = ["MAX_JSON_DEPTH", "OFFSET_UNITS", "OFFSET_ENDS", "read_detector_spans", "write_detector_spans",
           "parse_json_line", "json_lines"]

#: Deepest nesting of a detector JSON line (deeper is refused before parsing: no RecursionError).
MAX_JSON_DEPTH = 64


class _DuplicateKey(ValueError):
    pass


def _unique_keys(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def json_depth(line: str) -> int:
    """The deepest nesting of brackets of one JSON text (outside strings)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in line:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json_line(line: str, path: Any, number: int) -> Any:
    """One JSON Lines line, refusing a key given twice and nesting deeper than :data:`MAX_JSON_DEPTH` (with
    the file and line)."""
    if line.count("[") + line.count("{") > MAX_JSON_DEPTH and json_depth(line) > MAX_JSON_DEPTH:
        raise InputFileError(path, f"every line must be a JSON object nested at most {MAX_JSON_DEPTH} deep; got "
                                   f"{json_depth(line)} levels.", row=number)
    try:
        return json.loads(line, object_pairs_hook=_unique_keys)
    except _DuplicateKey as exc:
        raise InputFileError(path, f"every key of a JSON object must appear once; got {exc.args[0]!r} twice.",
                             row=number) from None
    except json.JSONDecodeError as exc:
        raise InputFileError(path, f"every line must be a JSON object; got invalid JSON ({exc.msg}).",
                             row=number) from None


def json_lines(text: str):
    """``(number, line)`` of JSON Lines text: lines end at ``\\n`` only (a U+2028 inside a string is text)."""
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.rstrip("\r")


#: Field names a detector file may use (the first is the canonical one).
SEGMENT_KEYS = ("segment", "seg_id", "segment_id")
SPANS_KEYS = ("spans", "error_spans", "errors")
#: Offset conventions of a detector file (``offsets=``): the unit counted and whether ``end`` is inclusive.
OFFSET_UNITS = ("char", "utf8", "utf16")
OFFSET_ENDS = ("exclusive", "inclusive")


def _records(text: str, path: Any):
    """``(line, object)`` of a detector file: JSON Lines, or one JSON array of objects (line = its index + 1)."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = parse_json_line(stripped, path, 1)
        if not isinstance(data, list):
            raise InputFileError(path, f"a JSON array file must hold a list of objects; got {type(data).__name__}.")
        for i, obj in enumerate(data, start=1):
            yield i, obj
        return
    for number, line in json_lines(text):
        if line.strip():
            yield number, parse_json_line(line, path, number)


def _to_chars(text: str, offset: int, unit: str) -> int | None:
    """The character offset of ``offset`` counted in ``unit`` (None when it falls inside a character)."""
    if unit == "char":
        return offset
    encoded = text.encode("utf-8" if unit == "utf8" else "utf-16-le")
    width = 1 if unit == "utf8" else 2
    if offset < 0 or offset * width > len(encoded):
        return offset if offset < 0 else len(text) + 1  # out of range: check_span says so
    prefix = encoded[:offset * width]
    try:
        return len(prefix.decode("utf-8" if unit == "utf8" else "utf-16-le"))
    except UnicodeDecodeError:
        return None


def _located(text: str, needle: str, path: Any, number: int, cell, where: str) -> tuple[int, int]:
    """``[start, end)`` of span text ``needle`` in ``text``: it must occur exactly once."""
    if not isinstance(needle, str) or not needle:
        raise InputFileError(path, f"{where}: `text` must be a non-empty string; got {needle!r}.", row=number)
    first = text.find(needle)
    if first < 0:
        raise InputFileError(path, f"{where}: `text` must occur in the segment's text (system {cell[0]!r}, segment "
                                   f"{cell[1]!r}); got {needle[:40]!r}, not found.", row=number)
    if text.find(needle, first + 1) >= 0:
        raise InputFileError(path, f"{where}: `text` must occur once in the segment's text to be located (system "
                                   f"{cell[0]!r}, segment {cell[1]!r}); got {needle[:40]!r} "
                                   f"{text.count(needle)} times (give start and end).", row=number)
    return first, first + len(needle)


def _inside_word(text: str, start: int, end: int) -> int:
    """Boundaries of ``[start, end)`` that cut a word (a letter or digit on both sides)."""
    import unicodedata

    def letter(ch):  # scripts written without spaces (CJK) have no word boundaries to cut
        return ch.isalnum() and unicodedata.east_asian_width(ch) not in ("W", "F")

    return sum(1 for at in (start, end) if 0 < at < len(text) and letter(text[at - 1]) and letter(text[at]))


def read_detector_spans(path: str | Path, targets: Mapping, *, name: str | None = None,
                        sources: Mapping | None = None, offsets: str = "char",
                        end: str = "exclusive") -> SpanAnnotations:
    """Read a detector's spans (see the module docstring) and check them against ``targets``.

    Layouts: JSON Lines or one JSON array of objects; the segment field ``segment``, ``seg_id`` or
    ``segment_id``; the span list ``spans``, ``error_spans`` or ``errors``; a span given by ``start`` and
    ``end`` or by its ``text`` alone (located in the target, or the source with ``"side": "source"``; text that
    occurs more than once is an error naming the segment).

    Parameters
    ----------
    offsets : {"char", "utf8", "utf16"}
        What ``start`` / ``end`` count: characters (Python string indices), UTF-8 bytes or UTF-16 code units
        (as some APIs return them); converted to characters (an offset inside a character is an error).
    end : {"exclusive", "inclusive"}
        Whether ``end`` is the first character after the span (default) or its last character.

    Raises :class:`~metaeval.errors.InputFileError` (file and line) for an empty file, a line that is not a
    JSON object, a missing field, a cell given twice, an offset out of range, a reversed or empty span, an
    unknown severity, or a ``target`` that differs from the gold's other than by trailing white space (which
    is accepted and counted in ``trailing_space_targets``). Cells unknown to ``targets`` are kept aside and
    counted by :func:`align`. A :class:`~metaeval.errors.DataWarning` says when more than half of the span
    boundaries cut a word (an inclusive end or byte offsets read as characters).
    """
    offsets = check_choice("offsets", offsets, OFFSET_UNITS)
    end_rule = check_choice("end", end, OFFSET_ENDS)
    text = read_text(path)
    spans: dict = {}
    own_targets: dict = {}
    unknown: dict = {}
    n_lines = trailing = cut = boundaries = 0
    for number, obj in _records(text, path):
        n_lines += 1
        if not isinstance(obj, dict):
            raise InputFileError(path, f"every line must be a JSON object; got {type(obj).__name__}.", row=number)
        seg_key = next((k for k in SEGMENT_KEYS if k in obj), "segment")
        spans_key = next((k for k in SPANS_KEYS if k in obj), "spans")
        for key in ("system", seg_key, spans_key):
            if key not in obj:
                raise InputFileError(path, f"every line must have the field {key!r}; got fields "
                                           f"{', '.join(map(repr, obj)) or 'none'}.", row=number)
        cell = (str(obj["system"]), str(obj[seg_key]))
        if "lp" in obj:  # a file covering several language pairs: the cell of a pooled gold (pool_golds)
            if not isinstance(obj["lp"], str) or not obj["lp"] or "/" in obj["lp"]:
                raise InputFileError(path, f"`lp` must be a non-empty language pair without '/'; got {obj['lp']!r}.",
                                     row=number, column="lp")
            cell = pooled_cell(obj["lp"], cell)
        if not isinstance(obj[spans_key], list):
            raise InputFileError(path, f"`{spans_key}` must be a list; got {type(obj[spans_key]).__name__}.",
                                 row=number, column=spans_key)
        if cell in spans or cell in unknown:
            raise InputFileError(path, f"every (system, segment) must appear once; got system {cell[0]!r}, segment "
                                       f"{cell[1]!r} again.", row=number)
        if cell not in targets:
            unknown[cell] = number
            continue
        target = targets[cell]
        if "target" in obj and obj["target"] != target:
            if not isinstance(obj["target"], str) or obj["target"].rstrip() != target.rstrip():
                raise InputFileError(path, "`target` must equal the gold's target of the segment; got a different "
                                           "text.", row=number, column="target")
            trailing += 1
        items = []
        for i, item in enumerate(obj[spans_key]):
            where = f"{spans_key}[{i}]"
            if not isinstance(item, dict) or not (("start" in item and "end" in item) or "text" in item):
                raise InputFileError(path, f"every span must be an object with 'start' and 'end' (or 'text'); got "
                                           f"{item!r}.", row=number, column=where)
            side = item.get("side", "target")
            if side not in SIDES:
                raise InputFileError(path, f"`side` must be one of {', '.join(SIDES)}; got {side!r}.", row=number,
                                     column=where)
            if side == "source" and (sources is None or cell not in sources):
                raise InputFileError(path, "a span with `side` 'source' needs the gold's source of the segment; got "
                                           "none (the gold file has no source text).", row=number, column=where)
            own = sources[cell] if side == "source" else target
            if "start" in item and "end" in item:
                start, stop = item["start"], item["end"]
                if isinstance(start, int) and isinstance(stop, int) and not isinstance(start, bool) \
                        and not isinstance(stop, bool):
                    if end_rule == "inclusive":
                        stop += 1
                    if offsets != "char":
                        start, stop = _to_chars(own, start, offsets), _to_chars(own, stop, offsets)
                        if start is None or stop is None:
                            raise InputFileError(path, f"{where}: an offset must fall between characters in "
                                                       f"{offsets} units; got one inside a character.", row=number)
            else:
                start, stop = _located(own, item["text"], path, number, cell, where)
            try:
                start, stop, sev = check_span(start, stop, item.get("severity"), len(own), where=where)
            except ParameterError as exc:
                raise InputFileError(path, str(exc), row=number) from None
            cut += _inside_word(own, start, stop)
            boundaries += 2
            items.append(Span(start, stop, sev, str(item.get("category", "") or ""), side))
        spans[cell] = items
        own_targets[cell] = target
    if n_lines == 0:
        raise InputFileError(path, "the file must hold at least one JSON line; got an empty file.")
    if trailing:
        warnings.warn(f"{path}: {trailing} segment(s) whose `target` differs from the gold's by trailing white space "
                      f"only, accepted.", DataWarning, stacklevel=2)
    if boundaries >= 20 and cut > boundaries / 2:
        warnings.warn(f"{path}: {cut} of {boundaries} span boundaries fall inside a word: are the offsets right "
                      f"(offsets={offsets!r}, end={end_rule!r})? An inclusive end or byte offsets read as "
                      f"characters look like this.", DataWarning, stacklevel=2)
    ann = SpanAnnotations(name or Path(str(path)).name.split(".")[0], spans, own_targets,
                          sources={c: sources[c] for c in spans if c in sources} if sources is not None else None)
    ann.unknown_cells = tuple(unknown)
    ann.trailing_space_targets = trailing
    ann.offsets_rule = f"{offsets}-{end_rule}"
    ann.source_file = Path(str(path)).name  # named in signatures (evaluate.detectors_field)
    ann.boundaries_inside_words = (cut, boundaries)
    return ann


def write_detector_spans(annotations: SpanAnnotations, path: str | Path) -> None:
    """Write ``annotations`` in the detector JSON Lines format (atomically)."""
    from ..runtime.files import write_text_atomic

    lines = []
    for (system, segment), spans in annotations.cells.items():
        line = json.dumps({"system": system, "segment": segment, "spans": [
            {"start": s.start, "end": s.end, "severity": s.severity, "category": s.category,
             **({"side": s.side} if s.side != "target" else {})} for s in spans]}, ensure_ascii=False)
        # U+2028 / U+2029 are line breaks to str.splitlines and to some JSON Lines readers: escape them.
        lines.append(line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    write_text_atomic(path, "\n".join(lines) + "\n")
