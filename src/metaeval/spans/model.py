"""Error spans as data: per (system, segment) and scorer, a set of character spans with severity and category.

A :class:`Span` is ``[start, end)``, character offsets into the segment's target (Python string indices of
the unmarked text), ``0 <= start < end <= len(target)``. A :class:`SpanAnnotations` holds one scorer's spans
(a human rater, the combined gold, or an automatic detector) over the cells it rated; a cell with an empty
tuple was rated and has no error.

Defined behaviour (every case counted, none silent):

- Overlapping spans of one scorer are kept. Character-level measures count a character once (the union);
  span-level measures match each span on its own. :meth:`SpanAnnotations.n_overlapping` counts them.
- A span out of range, with ``end <= start`` or a negative offset, or with an unknown severity is an error
  (naming the file and line for a file).
- A detector's cells must cover the gold's: a gold cell the detector lacks is an error; a detector cell the
  gold did not rate is left out, counted, and named in a :class:`~metaeval.errors.DataWarning`
  (:func:`align`).

Detector output, JSON Lines (one object per (system, segment))::

    {"system": "sysA", "segment": "17", "spans": [{"start": 3, "end": 9, "severity": "major",
     "category": "Accuracy/Mistranslation"}]}

``segment`` may be named ``seg_id``; ``category`` is optional; ``severity`` is one of :data:`SEVERITIES`
(case-insensitive) and defaults to ``"major"`` when absent. An optional ``"target"`` field, if given,
must equal the gold's target. ``"spans": []`` says the detector found the segment error-free.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..data.formats import read_text
from ..errors import DataWarning, InputFileError, ParameterError

__all__ = ["SEVERITIES", "Span", "SpanAnnotations", "read_detector_spans", "write_detector_spans", "align",
           "gold_from_ratings", "rater_spans"]

#: Severities a span may carry, least to most severe (WMT25 asks for minor / major; critical is scored as
#: major by the WMT25 measure; neutral MQM errors carry no weight and are left out of the gold by default).
SEVERITIES = ("neutral", "minor", "major", "critical")
DEFAULT_SEVERITY = "major"


@dataclass(frozen=True, order=True)
class Span:
    """One error span ``[start, end)`` of a target, with its severity and (optional) category."""

    start: int
    end: int
    severity: str = DEFAULT_SEVERITY
    category: str = ""

    @property
    def length(self) -> int:
        return self.end - self.start


def check_span(start: Any, end: Any, severity: Any, length: int, *, where: str = "span") -> tuple[int, int, str]:
    """Validated ``(start, end, severity)``; raises ParameterError with the one-line message."""
    for name, value in (("start", start), ("end", end)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(f"{where}: `{name}` must be an integer character offset; got {value!r}.")
    if start < 0:
        raise ParameterError(f"{where}: `start` must be >= 0; got {start}.")
    if end <= start:
        raise ParameterError(f"{where}: `end` must be greater than `start` (a span covers at least one character); "
                             f"got start {start}, end {end}.")
    if end > length:
        raise ParameterError(f"{where}: `end` must be at most the target's length {length}; got {end}.")
    sev = str(severity).lower() if severity is not None else DEFAULT_SEVERITY
    if sev not in SEVERITIES:
        raise ParameterError(f"{where}: `severity` must be one of {', '.join(SEVERITIES)}; got {severity!r}.")
    return start, end, sev


class SpanAnnotations:
    """One scorer's spans over the cells it rated.

    Parameters
    ----------
    name : str
        The scorer (a rater, ``"gold"``, a detector).
    spans : mapping
        ``(system, segment) -> iterable of Span`` (or ``(start, end, severity[, category])`` tuples).
    targets : mapping
        ``(system, segment) -> target text``: every cell of ``spans`` must have one; offsets are checked
        against it.
    """

    def __init__(self, name: str, spans: Mapping, targets: Mapping):
        self.name = str(name)
        cells: dict[tuple[str, str], tuple[Span, ...]] = {}
        for cell, items in spans.items():
            cell = (str(cell[0]), str(cell[1]))
            if cell not in targets:
                raise ParameterError(f"spans of {self.name!r}: every cell must have a target; got system {cell[0]!r}, "
                                     f"segment {cell[1]!r} without one.")
            length = len(targets[cell])
            out = []
            for item in items:
                if not isinstance(item, Span):
                    item = Span(*item)
                start, end, sev = check_span(item.start, item.end, item.severity, length,
                                             where=f"{self.name}, system {cell[0]!r}, segment {cell[1]!r}")
                out.append(Span(start, end, sev, item.category))
            cells[cell] = tuple(sorted(out))
        self.cells = cells
        self.targets = {c: targets[c] for c in cells}

    def __repr__(self) -> str:
        return f"SpanAnnotations({self.name!r}, {len(self.cells)} cells, {self.n_spans} spans)"

    @property
    def n_spans(self) -> int:
        return sum(len(v) for v in self.cells.values())

    def n_overlapping(self) -> int:
        """Spans that overlap an earlier span of the same cell (kept; see the module docstring)."""
        count = 0
        for spans in self.cells.values():
            reach = -1
            for s in spans:
                if s.start < reach:
                    count += 1
                reach = max(reach, s.end)
        return count

    def restricted(self, cells: Iterable[tuple[str, str]], *, name: str | None = None) -> "SpanAnnotations":
        """The same spans on ``cells`` only (each must be one of this scorer's)."""
        keep = {c: self.cells[c] for c in cells}
        return SpanAnnotations(self.name if name is None else name, keep, self.targets)

    def filtered(self, severities: Iterable[str]) -> "SpanAnnotations":
        """Only the spans whose severity is in ``severities`` (every cell kept)."""
        wanted = set(severities)
        return SpanAnnotations(self.name, {c: [s for s in v if s.severity in wanted] for c, v in self.cells.items()},
                               self.targets)


def merge_union(span_lists: Iterable[Iterable[Span]]) -> tuple[Span, ...]:
    """The union of several scorers' spans of one cell: overlapping or touching spans merge into one span
    that carries the most severe severity among them (and the first category)."""
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    items = sorted(s for spans in span_lists for s in spans)
    out: list[Span] = []
    for s in items:
        if out and s.start <= out[-1].end:
            last = out[-1]
            sev = last.severity if rank[last.severity] >= rank[s.severity] else s.severity
            out[-1] = Span(last.start, max(last.end, s.end), sev, last.category or s.category)
        else:
            out.append(s)
    return tuple(out)


def _ratings_spans(ratings, rater: str) -> dict:
    return {cell: [Span(s, e, "critical" if sev == "critical" else sev, cat) for s, e, sev, cat in items]
            for cell, items in ratings.spans.get(rater, {}).items()}


def rater_spans(ratings, rater: str, *, severities: Iterable[str] = ("minor", "major", "critical")) -> SpanAnnotations:
    """One rater's target spans (``severities`` kept; Neutral errors carry no MQM weight and are left out by
    default) from :func:`metaeval.read_mqm_ratings`, on every cell it rated."""
    if rater not in ratings.spans:
        raise ParameterError(f"`rater` must be one of {', '.join(ratings.raters)}; got {rater!r}.")
    spans = _ratings_spans(ratings, rater)
    wanted = set(severities)
    return SpanAnnotations(rater, {c: [s for s in v if s.severity in wanted] for c, v in spans.items()},
                           ratings.targets)


def gold_from_ratings(ratings, *, raters: Iterable[str] | None = None,
                      severities: Iterable[str] = ("minor", "major", "critical"), name: str = "gold") -> SpanAnnotations:
    """The gold spans of MQM ratings: on every cell, the union (:func:`merge_union`) of its raters' spans.

    With one rater per cell (WMT21 TED) the gold is that rater's spans (overlaps merged). Why the union,
    not a majority: MQM raters miss errors far more often than they invent them (Freitag et al. 2021), and
    with the two or three raters of a cell a majority is an intersection narrower than any one rater.
    """
    chosen = tuple(ratings.raters if raters is None else raters)
    for r in chosen:
        if r not in ratings.spans:
            raise ParameterError(f"`raters` must name raters of the file ({', '.join(ratings.raters)}); got {r!r}.")
    wanted = set(severities)
    per_cell: dict = {}
    for r in chosen:
        for cell, spans in _ratings_spans(ratings, r).items():
            per_cell.setdefault(cell, []).append([s for s in spans if s.severity in wanted])
    return SpanAnnotations(name, {c: merge_union(v) for c, v in per_cell.items()}, ratings.targets)


def read_detector_spans(path: str | Path, targets: Mapping, *, name: str | None = None) -> SpanAnnotations:
    """Read a detector's spans from JSON Lines (see the module docstring) and check them against ``targets``.

    Raises :class:`~metaeval.errors.InputFileError` (file and line) for an empty file, a line that is not a
    JSON object, a missing field, a cell given twice, an offset out of range, a reversed or empty span, an
    unknown severity, or a ``target`` that differs from the gold's. Cells unknown to ``targets`` are kept
    aside and counted by :func:`align`.
    """
    text = read_text(path)
    spans: dict = {}
    own_targets: dict = {}
    unknown: dict = {}
    n_lines = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        n_lines += 1
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(path, f"every line must be a JSON object; got invalid JSON ({exc.msg}).",
                                 row=number) from None
        if not isinstance(obj, dict):
            raise InputFileError(path, f"every line must be a JSON object; got {type(obj).__name__}.", row=number)
        seg_key = "segment" if "segment" in obj else "seg_id"
        for key in ("system", seg_key, "spans"):
            if key not in obj:
                raise InputFileError(path, f"every line must have the field {key!r}; got fields "
                                           f"{', '.join(map(repr, obj)) or 'none'}.", row=number)
        cell = (str(obj["system"]), str(obj[seg_key]))
        if not isinstance(obj["spans"], list):
            raise InputFileError(path, f"`spans` must be a list; got {type(obj['spans']).__name__}.", row=number,
                                 column="spans")
        if cell in spans or cell in unknown:
            raise InputFileError(path, f"every (system, segment) must appear once; got system {cell[0]!r}, segment "
                                       f"{cell[1]!r} again.", row=number)
        if cell not in targets:
            unknown[cell] = number
            continue
        target = targets[cell]
        if "target" in obj and obj["target"] != target:
            raise InputFileError(path, "`target` must equal the gold's target of the segment; got a different text.",
                                 row=number, column="target")
        items = []
        for i, item in enumerate(obj["spans"]):
            if not isinstance(item, dict) or "start" not in item or "end" not in item:
                raise InputFileError(path, f"every span must be an object with 'start' and 'end'; got {item!r}.",
                                     row=number, column=f"spans[{i}]")
            try:
                start, end, sev = check_span(item["start"], item["end"], item.get("severity"), len(target),
                                             where=f"spans[{i}]")
            except ParameterError as exc:
                raise InputFileError(path, str(exc), row=number) from None
            items.append(Span(start, end, sev, str(item.get("category", "") or "")))
        spans[cell] = items
        own_targets[cell] = target
    if n_lines == 0:
        raise InputFileError(path, "the file must hold at least one JSON line; got an empty file.")
    ann = SpanAnnotations(name or Path(str(path)).name.split(".")[0], spans, own_targets)
    ann.unknown_cells = tuple(unknown)
    return ann


def write_detector_spans(annotations: SpanAnnotations, path: str | Path) -> None:
    """Write ``annotations`` in the detector JSON Lines format (atomically)."""
    from ..runtime.files import write_text_atomic

    lines = []
    for (system, segment), spans in annotations.cells.items():
        lines.append(json.dumps({"system": system, "segment": segment, "spans": [
            {"start": s.start, "end": s.end, "severity": s.severity, "category": s.category} for s in spans]},
            ensure_ascii=False))
    write_text_atomic(path, "\n".join(lines) + "\n")


def align(gold: SpanAnnotations, detector: SpanAnnotations) -> SpanAnnotations:
    """``detector`` on exactly the gold's cells: a gold cell it lacks is an error; its cells outside the gold
    (including those :func:`read_detector_spans` set aside) are left out with a DataWarning that counts them."""
    missing = [c for c in gold.cells if c not in detector.cells]
    if missing:
        s, g = missing[0]
        raise ParameterError(f"detector {detector.name!r} must cover every segment the gold rated; got {len(missing)} "
                             f"missing (first: system {s!r}, segment {g!r}).")
    extra = [c for c in detector.cells if c not in gold.cells] + list(getattr(detector, "unknown_cells", ()))
    if extra:
        s, g = extra[0]
        warnings.warn(f"detector {detector.name!r}: {len(extra)} segment(s) the gold did not rate left out "
                      f"(first: system {s!r}, segment {g!r}).", DataWarning, stacklevel=2)
    for cell in gold.cells:
        if detector.targets[cell] != gold.targets[cell]:
            raise ParameterError(f"detector {detector.name!r} must score the gold's targets; got a different target "
                                 f"for system {cell[0]!r}, segment {cell[1]!r}.")
    out = detector.restricted(gold.cells)
    out.n_left_out = len(extra)
    return out
