"""Error spans as data: per (system, segment) and scorer, a set of character spans with severity and category.

A :class:`Span` is ``[start, end)``, character offsets into the segment's target - or, for a span with
``side="source"`` (omissions and source issues are marked in the source), into its source - (Python string
indices of the unmarked text), ``0 <= start < end <= len(text)``. A :class:`SpanAnnotations` holds one scorer's spans
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
(case-insensitive) and defaults to ``"major"`` when absent; ``side`` is ``"target"`` (default) or
``"source"`` (offsets into the source: an omission). An optional ``"target"`` field, if given, must equal
the gold's target. ``"spans": []`` says the detector found the segment error-free. A line with a key given
twice, or nested deeper than 64 levels, is refused (:mod:`metaeval.spans.detector_files` reads and writes
the format).

Which human errors count (``errors=``, :func:`gold_from_ratings`, :func:`rater_spans`):

``"reference"`` (default)
    The reference implementation's ``standardize_human_error`` (sted19/span-mt-metaeval): errors of a
    severity outside minor / major / critical (neutral) and errors whose MQM weight is 0 in Google's MQM
    weights - categories ``Source issue`` / ``Source error`` and ``Creative Reinterpretation`` - are left
    out; ``critical`` becomes ``major``; the rest is kept as marked (omissions on the source side).
``"all"``
    Every located minor / major / critical error, as marked.

Errors without a marked span (unlocated) never enter the spans (the reader counts them). Every error left
out is counted by reason in ``SpanAnnotations.left_out``.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from .. import defaults
from ..errors import DataWarning, ParameterError, check_choice
from ..vocabulary import SPAN_ERROR_RULES, SPAN_SIDES

__all__ = ["check_known_systems", "SEVERITIES", "SIDES", "ZERO_WEIGHT_CATEGORIES", "Span", "SpanAnnotations", "align", "pool_golds",
           "pooled_cell",
           "gold_from_ratings", "rater_spans"]

#: Severities a span may carry, least to most severe (WMT25 asks for minor / major; critical is scored as
#: major by the WMT25 measure; neutral MQM errors carry no weight and are left out of the gold by default).
SEVERITIES = ("neutral", "minor", "major", "critical")
DEFAULT_SEVERITY = "major"
SIDES = SPAN_SIDES
#: Category words (lower case, matched as substrings as the reference does) of the errors Google's MQM
#: weights give 0: the reference leaves them out of the gold (``errors="reference"``).
ZERO_WEIGHT_CATEGORIES = ("source issue", "source_issue", "source error", "source_error",
                          "creative reinterpretation")


@dataclass(frozen=True, order=True)
class Span:
    """One error span ``[start, end)`` of a target (or of the source: ``side="source"``), with its severity
    and (optional) category."""

    start: int
    end: int
    severity: str = DEFAULT_SEVERITY
    category: str = ""
    side: str = "target"

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
    sources : mapping, optional
        ``(system, segment) -> source text``: needed by the cells holding a source-side span.
    """

    def __init__(self, name: str, spans: Mapping, targets: Mapping, *, sources: Mapping | None = None):
        self.name = str(name)
        cells: dict[tuple[str, str], tuple[Span, ...]] = {}
        for cell, items in spans.items():
            cell = (str(cell[0]), str(cell[1]))
            if cell not in targets:
                raise ParameterError(f"spans of {self.name!r}: every cell must have a target; got system {cell[0]!r}, "
                                     f"segment {cell[1]!r} without one.")
            out = []
            for item in items:
                if not isinstance(item, Span):
                    item = Span(*item)
                where = f"{self.name}, system {cell[0]!r}, segment {cell[1]!r}"
                if item.side not in SIDES:
                    raise ParameterError(f"{where}: `side` must be one of {', '.join(SIDES)}; got {item.side!r}.")
                if item.side == "source":
                    if sources is None or cell not in sources:
                        raise ParameterError(f"{where}: a source-side span needs the segment's source; got no "
                                             f"source text.")
                    length = len(sources[cell])
                else:
                    length = len(targets[cell])
                start, end, sev = check_span(item.start, item.end, item.severity, length, where=where)
                out.append(Span(start, end, sev, item.category, item.side))
            cells[cell] = tuple(sorted(out))
        self.cells = cells
        self.targets = {c: targets[c] for c in cells}
        self.sources = {c: sources[c] for c in cells if c in sources} if sources is not None else {}
        self.left_out: dict = {}
        #: How the spans were built (set by gold_from_ratings / rater_spans; None = given as they are).
        self.errors_rule: str | None = None
        self.source_spans_rule: bool | None = None
        self.raters_rule: str | None = None
        self.source_file: str | None = None
        self.offsets_rule: str | None = None  # a detector file's offset convention (read_detector_spans)

    def __repr__(self) -> str:
        return f"SpanAnnotations({self.name!r}, {len(self.cells)} cells, {self.n_spans} spans)"

    @property
    def n_spans(self) -> int:
        return sum(len(v) for v in self.cells.values())

    @property
    def n_source_spans(self) -> int:
        """Spans marked in the source (omissions)."""
        return sum(1 for v in self.cells.values() for s in v if s.side == "source")

    def _like(self, name: str, spans: Mapping) -> "SpanAnnotations":
        out = SpanAnnotations(name, spans, self.targets, sources=self.sources)
        out.left_out = dict(self.left_out)
        for key in ("errors_rule", "source_spans_rule", "raters_rule", "source_file", "offsets_rule"):
            setattr(out, key, getattr(self, key))
        if getattr(self, "excluded_systems", None):
            out.excluded_systems = self.excluded_systems
        return out

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
        return self._like(self.name if name is None else name, keep)

    def filtered(self, severities: Iterable[str]) -> "SpanAnnotations":
        """Only the spans whose severity is in ``severities`` (every cell kept)."""
        wanted = set(severities)
        return self._like(self.name, {c: [s for s in v if s.severity in wanted] for c, v in self.cells.items()})

    def target_only(self) -> "SpanAnnotations":
        """Only the target-side spans (every cell kept)."""
        return self._like(self.name, {c: [s for s in v if s.side == "target"] for c, v in self.cells.items()})


def merge_union(span_lists: Iterable[Iterable[Span]]) -> tuple[Span, ...]:
    """The union of several scorers' spans of one cell: spans of one side that *overlap* (share at least one
    character) merge into one span that carries the most severe severity among them (and the first
    category). Touching spans (one ends where the next starts) stay apart: they mark two errors, and the
    reference's ``errors_overlap`` does not call them overlapping."""
    rank = {s: i for i, s in enumerate(SEVERITIES)}
    out: list[Span] = []
    for side in SIDES:
        items = sorted(s for spans in span_lists for s in spans if s.side == side)
        merged: list[Span] = []
        for s in items:
            if merged and s.start < merged[-1].end:
                last = merged[-1]
                sev = last.severity if rank[last.severity] >= rank[s.severity] else s.severity
                merged[-1] = Span(last.start, max(last.end, s.end), sev, last.category or s.category, side)
            else:
                merged.append(s)
        out.extend(merged)
    return tuple(sorted(out))


def _zero_weight(category: str) -> bool:
    low = category.lower()
    return any(word in low for word in ZERO_WEIGHT_CATEGORIES)


def _ratings_spans(ratings, rater: str, errors: str, source_spans: bool, severities, left_out: dict) -> dict:
    """One rater's spans per cell under the rule ``errors`` (see the module docstring); what is left out is
    added to ``left_out`` by reason."""
    wanted = set(severities)
    out: dict = {}
    sides = [("target", ratings.spans.get(rater, {}))]
    sides.append(("source", getattr(ratings, "source_spans", {}).get(rater, {})))
    for cell in ratings.spans.get(rater, {}):
        out[cell] = []
    for side, by_cell in sides:
        for cell, items in by_cell.items():
            for s, e, sev, cat in items:
                if sev not in wanted:
                    reason = f"severity {sev}"
                elif errors == "reference" and _zero_weight(cat):
                    reason = "MQM weight 0 (source issue, creative reinterpretation)"
                elif side == "source" and not source_spans:
                    reason = "source side (source_spans=False)"
                else:
                    if errors == "reference" and sev == "critical":
                        sev = "major"
                    out.setdefault(cell, []).append(Span(s, e, sev, cat, side))
                    continue
                left_out[reason] = left_out.get(reason, 0) + 1
    return out


def _errors_iv(errors: str, source_spans: Any) -> tuple[str, bool]:
    errors = check_choice("errors", errors, SPAN_ERROR_RULES)
    if not isinstance(source_spans, (bool,)):
        raise ParameterError(f"`source_spans` must be True or False; got {source_spans!r}.")
    return errors, source_spans


def rater_spans(ratings, rater: str, *, severities: Iterable[str] = ("minor", "major", "critical"),
                errors: str = defaults.SPAN_ERRORS, source_spans: bool = defaults.SPAN_SOURCE_SPANS
                ) -> SpanAnnotations:
    """One rater's spans (``severities`` kept; Neutral errors carry no MQM weight and are left out by
    default; ``errors`` and ``source_spans`` as in :func:`gold_from_ratings`) from
    :func:`metaeval.read_mqm_ratings`, on every cell it rated."""
    if rater not in ratings.spans:
        raise ParameterError(f"`rater` must be one of {', '.join(ratings.raters)}; got {rater!r}.")
    errors, source_spans = _errors_iv(errors, source_spans)
    left_out: dict = {}
    spans = _ratings_spans(ratings, rater, errors, source_spans, severities, left_out)
    out = SpanAnnotations(rater, spans, ratings.targets, sources=getattr(ratings, "sources", None))
    out.left_out = left_out
    out.errors_rule, out.source_spans_rule, out.raters_rule = errors, source_spans, rater
    out.source_file = Path(str(ratings.path)).name
    return out


def gold_from_ratings(ratings, *, raters: Iterable[str] | None = None,
                      severities: Iterable[str] = ("minor", "major", "critical"), name: str = "gold",
                      errors: str = defaults.SPAN_ERRORS, source_spans: bool = defaults.SPAN_SOURCE_SPANS
                      ) -> SpanAnnotations:
    """The gold spans of MQM ratings: on every cell, the union (:func:`merge_union`) of its raters' spans.

    With one rater per cell (WMT21 TED) the gold is that rater's spans (overlaps merged). Why the union,
    not a majority: MQM raters miss errors far more often than they invent them (Freitag et al. 2021), and
    with the two or three raters of a cell a majority is an intersection narrower than any one rater.

    ``errors`` : {"reference", "all"}
        Which human errors count (the module docstring); what is left out is counted in ``left_out``.
    ``source_spans`` : bool
        Keep the source-side spans (omissions), scored on their own side (default); False leaves them out
        (counted).
    """
    chosen = tuple(ratings.raters if raters is None else raters)
    for r in chosen:
        if r not in ratings.spans:
            raise ParameterError(f"`raters` must name raters of the file ({', '.join(ratings.raters)}); got {r!r}.")
    errors, source_spans = _errors_iv(errors, source_spans)
    per_cell: dict = {}
    left_out: dict = {}
    for r in chosen:
        for cell, spans in _ratings_spans(ratings, r, errors, source_spans, severities, left_out).items():
            per_cell.setdefault(cell, []).append(spans)
    out = SpanAnnotations(name, {c: merge_union(v) for c, v in per_cell.items()}, ratings.targets,
                          sources=getattr(ratings, "sources", None))
    out.left_out = left_out
    out.errors_rule, out.source_spans_rule = errors, source_spans
    out.raters_rule = ",".join(chosen) if raters is not None else None
    out.source_file = Path(str(ratings.path)).name
    return out


def pooled_cell(lp: str, cell: tuple) -> tuple[str, str]:
    """The cell of ``lp``'s ``(system, segment)`` in a pooled gold: ``("lp/system", "lp/segment")``."""
    return f"{lp}/{cell[0]}", f"{lp}/{cell[1]}"


def pool_golds(golds: Mapping[str, SpanAnnotations], *, name: str = "gold") -> SpanAnnotations:
    """Several language pairs' golds as one (cells ``("lp/system", "lp/segment")``, :func:`pooled_cell`): a
    system or a segment of one pair is never one of another's. ``pairs`` holds ``lp -> its pooled cells``."""
    if not golds:
        raise ParameterError("`golds` must hold at least one language pair; got none.")
    spans, targets, sources, left_out = {}, {}, {}, {}
    pairs = {}
    for lp, gold in golds.items():
        if "/" in str(lp) or not str(lp):
            raise ParameterError(f"a language pair must be a non-empty name without '/'; got {lp!r}.")
        pairs[lp] = []
        for cell, items in gold.cells.items():
            key = pooled_cell(lp, cell)
            spans[key], targets[key] = items, gold.targets[cell]
            if cell in gold.sources:
                sources[key] = gold.sources[cell]
            pairs[lp].append(key)
        for reason, n in gold.left_out.items():
            left_out[reason] = left_out.get(reason, 0) + n
    out = SpanAnnotations(name, spans, targets, sources=sources)
    out.left_out = left_out
    first = next(iter(golds.values()))
    out.errors_rule, out.source_spans_rule = first.errors_rule, first.source_spans_rule
    out.source_file = ",".join(f"{lp}={g.source_file}" for lp, g in golds.items())
    out.pairs = pairs
    return out


def _system_hint(gold: SpanAnnotations, detector: SpanAnnotations) -> str:
    """``; system 'x' is not in the gold (did you mean 'X'?)`` for the detector's systems the gold lacks."""
    import difflib

    gold_systems = sorted({c[0] for c in gold.cells})
    own = {c[0] for c in list(detector.cells) + list(getattr(detector, "unknown_cells", ()))}
    hints = []
    for system in sorted(own - set(gold_systems)):
        candidates = {s.lower(): s for s in gold_systems if s not in own}
        close = difflib.get_close_matches(system.lower(), list(candidates), n=1)
        if close:
            hints.append(f"system {system!r} is not in the gold (did you mean {candidates[close[0]]!r}?)")
    return "; " + "; ".join(hints[:3]) if hints else ""


def _id_shift(gold: SpanAnnotations, detector: SpanAnnotations) -> int:
    """+1 or -1 when the detector's integer segment ids, shifted by it, cover the gold's cells (0)."""
    cells = list(detector.cells) + list(getattr(detector, "unknown_cells", ()))
    try:
        ids = [(s, int(g)) for s, g in cells]
    except ValueError:
        return 0
    for shift in (1, -1):
        moved = {(s, str(g + shift)) for s, g in ids}
        if all(c in moved for c in gold.cells):
            return shift
    return 0


def align(gold: SpanAnnotations, detector: SpanAnnotations) -> SpanAnnotations:
    """``detector`` on exactly the gold's cells: a gold cell it lacks is an error; its cells outside the gold
    (including those :func:`~metaeval.spans.detector_files.read_detector_spans` set aside) are left out with a
    DataWarning that counts them."""
    missing = [c for c in gold.cells if c not in detector.cells]
    if missing:
        shift = _id_shift(gold, detector)
        if shift:
            raise ParameterError(f"detector {detector.name!r} must use the gold's segment ids; got ids that match "
                                 f"the gold's only when shifted by {shift:+d} (0-based ids against 1-based ones?): "
                                 f"{len(missing)} gold segment(s) missing.")
        s, g = missing[0]
        raise ParameterError(f"detector {detector.name!r} must cover every segment the gold rated; got {len(missing)} "
                             f"missing (first: system {s!r}, segment {g!r}){_system_hint(gold, detector)}.")
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


def check_known_systems(systems: Iterable[str], known: Iterable[str], *, param: str = "exclude_systems",
                        what: str = "systems of the gold") -> None:
    """Refuse a system of ``systems`` that ``known`` lacks: "`param` must name ``what``; got 'x' (did you mean
    'X'?)." - the one check of every spans command's ``exclude_systems`` / ``--exclude-system``."""
    import difflib

    known = list(known)
    for system in systems:
        if system not in known:
            close = difflib.get_close_matches(str(system), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ParameterError(f"`{param}` must name {what}; got {system!r}{hint}.")
