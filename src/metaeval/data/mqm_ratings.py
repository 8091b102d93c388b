"""Reading MQM *ratings* (one row per error, per rater) into human scores and error spans.

The Google release of MQM annotations (Freitag et al. 2021, and the later WMT releases) has one row per
error a rater marked, or one ``No-error`` row for a segment the rater found clean. Tab separated, with the
header ``system doc doc_id|docSegId seg_id|globalSegId rater source target category severity`` (an optional
tenth column ``comment``). The erroneous span is marked ``<v>...</v>`` inside ``target`` (or inside
``source`` for an omission or a source issue).

Scores
    A rater's score of a segment is minus the weighted number of its errors, with Google's MQM weights
    (Freitag et al. 2021, as Marot applies them): Major 5, Minor 1, Neutral 0; a Minor ``Fluency/Punctuation``
    error 0.1; a ``Non-translation`` error 25 whatever its severity; a ``Source issue`` or
    ``Accuracy/Creative Reinterpretation`` error 0 whatever its severity (``weights="google"``, the default:
    the per-segment MQM scores the WMT23 release stores with its ratings use these).
    ``weights="severity"`` weighs those two categories by their severity, as mt-metrics-eval's
    ``converters/score_mqm.py`` does by default. The averaged human ``mqm`` of a (system, segment) is the mean
    over the raters who rated it; each rater is also a scorer ``mqm.<rater>`` (NaN where it did not rate).
    The weights are configurable (:class:`MQMWeights`).
Spans
    Character offsets ``[start, end)`` into the *unmarked* target (the row's target with the two markers
    removed); every row of one (system, segment) must have the same unmarked target (trailing white space
    aside: some rows of the WMT23 release carry an extra trailing space; the longest version is kept and
    the cells are counted). Source-side spans are counted, not kept as target spans; a row with an error
    but no marker is an *unlocated* error (it enters the score, not the spans) and is counted.
Attention checks
    Rows with severity ``HOTW-test`` are errors the organisers injected to check the raters (category
    ``Found`` or ``Missed``). They never enter a score or a span set; each rater's found / missed counts are
    reported.

References
----------
Freitag, M., Foster, G., Grangier, D., Ratnakar, V., Tan, Q. and Macherey, W. (2021). Experts, Errors, and
Context: A Large-Scale Study of Human Evaluation for Machine Translation. TACL 9, 1460-1474.
"""
from __future__ import annotations

import os
import re
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..errors import DataWarning, InputFileError, ParameterError, check_choice
from .delimited import DELIMITERS, header_delimiter, header_names, rows_after_header
from .formats import read_text
from .scoreset import ScoreSet

__all__ = ["MQMWeights", "MQMRatings", "WEIGHT_PRESETS", "read_mqm_ratings", "is_mqm_ratings_file", "unmark", "HUMAN_NAME"]

#: The averaged human scorer's name; per-rater scorers are ``HUMAN_NAME + "." + rater``.
HUMAN_NAME = "mqm"
ATTENTION_SEVERITY = "hotw-test"
NO_ERROR = "no-error"
#: Columns (beside the two id alternatives) a ratings file's header must have; also the detection rule.
REQUIRED = ("system", "rater", "source", "target", "category", "severity")
SEGMENT_KEYS = ("seg_id", "globalSegId")
DOC_KEYS = ("doc",)
OPEN, CLOSE = "<v>", "</v>"
OPEN_SPANS = ("close-at-end", "error")
#: Categories (lower case, the whole category) Google's MQM weights give 0 whatever the severity: Marot's
#: default weights (``:source``, ``:.*reinterpretation``) as they fall on the WMT23 release. The WMT21 TED
#: release's own scores weigh its ``Source error`` category by severity, so the rule names the categories.
GOOGLE_ZERO_CATEGORIES = ("source issue", "accuracy/creative reinterpretation")
#: Named weightings: ``google`` (default; the WMT23 release's own segment scores) and ``severity``
#: (mt-metrics-eval's ``converters/score_mqm.py`` default: every category by its severity).
WEIGHT_PRESETS = ("google", "severity")


@dataclass(frozen=True)
class MQMWeights:
    """Error weights of an MQM score (Freitag et al. 2021 by default).

    Attributes
    ----------
    severities : mapping of str to float
        Weight per severity (case-insensitive): ``{"major": 5, "minor": 1, "neutral": 0}``. A severity not
        listed here (nor ``No-error`` / ``HOTW-test``) is an error in the file; add it here to accept it,
        e.g. ``{"critical": 10}``.
    minor_punctuation : float
        Weight of a Minor ``Fluency/Punctuation`` error (0.1).
    non_translation : float
        Weight of a ``Non-translation`` error, whatever its severity (25).
    zero_categories : tuple of str
        Categories (case-insensitive, the whole category) weighing 0 whatever their severity; default
        Google's (``Source issue``, ``Accuracy/Creative Reinterpretation``); ``()`` weighs them by severity
        as mt-metrics-eval's ``score_mqm.py`` does (:meth:`preset`).
    """

    severities: Mapping[str, float] = field(default_factory=lambda: {"major": 5.0, "minor": 1.0, "neutral": 0.0})
    minor_punctuation: float = 0.1
    non_translation: float = 25.0
    zero_categories: tuple = GOOGLE_ZERO_CATEGORIES

    @classmethod
    def preset(cls, name: str) -> "MQMWeights":
        """The named weighting ``"google"`` (Source issue and Creative Reinterpretation 0) or ``"severity"``
        (every category by its severity)."""
        name = check_choice("weights", name, WEIGHT_PRESETS)
        return cls() if name == "google" else cls(zero_categories=())

    def __post_init__(self):
        clean = {}
        for name, value in dict(self.severities).items():
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not np.isfinite(value) or value < 0:
                raise ParameterError(f"`severities[{name!r}]` must be a finite non-negative number; got {value!r}.")
            clean[str(name).lower()] = float(value)
        object.__setattr__(self, "severities", clean)
        for name in ("minor_punctuation", "non_translation"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not np.isfinite(value) or value < 0:
                raise ParameterError(f"`{name}` must be a finite non-negative number; got {value!r}.")
        zero = self.zero_categories
        if isinstance(zero, str) or not isinstance(zero, (tuple, list)) or not all(
                isinstance(c, str) and c.strip() and not set("|;+") & set(c) for c in zero):
            raise ParameterError(f"`zero_categories` must be a tuple of non-empty category names without '|', ';' "
                                 f"or '+'; got {zero!r}.")
        object.__setattr__(self, "zero_categories", tuple(dict.fromkeys(c.strip().lower() for c in zero)))

    def weight(self, severity: str, category: str) -> float:
        """The weight of one error (``severity`` lower-case, known)."""
        low = category.lower()
        if low.startswith("non-translation"):
            return self.non_translation
        if low in self.zero_categories:
            return 0.0
        if severity == "minor" and low == "fluency/punctuation":
            return self.minor_punctuation
        return self.severities[severity]

    def describe(self) -> str:
        sev = ",".join(f"{k}={v:g}" for k, v in self.severities.items())
        zero = "+".join(self.zero_categories) or "none"
        return (f"{sev},minor-punctuation={self.minor_punctuation:g},non-translation={self.non_translation:g},"
                f"zero={zero}")


@dataclass(frozen=True)
class MQMRatings:
    """What :func:`read_mqm_ratings` reads.

    Attributes
    ----------
    scores : ScoreSet
        ``mqm`` (the mean over each cell's raters; the gold) and ``mqm.<rater>`` per rater (see
        ``per_rater``), systems x segments; all of them marked human.
    targets : dict
        ``(system, segment) -> unmarked target`` of every rated cell.
    spans : dict
        ``rater -> {(system, segment): ((start, end, severity, category), ...)}``: the target-side spans of
        every cell the rater rated (an empty tuple for a clean cell), sorted by offsets.
    raters : tuple of str
    attention : dict
        ``rater -> (found, missed)`` attention checks.
    counts : dict
        ``rows``, ``error_rows``, ``attention_rows``, ``source_spans``, ``unlocated_errors``,
        ``trailing_space_cells``: what was read and what was left out of the spans;
        ``raters_without_ratings``: raters seen only in attention checks (no scorer; a warning names them).
    weights : MQMWeights
    path : str
    documents : dict
        ``segment -> doc`` (the ``doc`` column; empty without one): the groups of document-level folds.
    source_spans : dict
        ``rater -> {(system, segment): ((start, end, severity, category), ...)}``: the source-side spans
        (omissions, source issues), offsets into the unmarked source; only cells with such a span.
    sources : dict
        ``(system, segment) -> unmarked source`` of every rated cell (the longest version, as for targets).
    """

    scores: ScoreSet
    targets: dict
    spans: dict
    raters: tuple
    attention: dict
    counts: dict
    weights: MQMWeights
    path: str
    documents: dict = field(default_factory=dict)
    source_spans: dict = field(default_factory=dict)
    sources: dict = field(default_factory=dict)

    def attention_rates(self) -> dict[str, float]:
        """Each rater's share of attention checks found (NaN for a rater without any)."""
        return {r: (f / (f + m) if f + m else float("nan")) for r, (f, m) in self.attention.items()}


def unmark(text: str, *, path: Any = "<text>", row: int | None = None, column: str = "target",
           open_spans: str = "error"):
    """``(unmarked text, [(start, end), ...], left_open)`` for ``<v>...</v>`` markup; offsets into the
    unmarked text.

    Raises :class:`InputFileError` for a closing marker without an opening one, a nested marker, or (with
    ``open_spans="error"``) a marker left open; with ``open_spans="close-at-end"`` an open span runs to the
    end of the text and ``left_open`` is True.
    """
    spans = []
    out = []
    pos = 0
    start = None
    for m in re.finditer(r"</?v>", text):
        out.append(text[pos:m.start()])
        pos = m.end()
        offset = sum(map(len, out))
        if m.group() == OPEN:
            if start is not None:
                raise InputFileError(path, f"the span markup must not nest; got {OPEN!r} inside an open span at "
                                           f"character {m.start()}.", row=row, column=column)
            start = offset
        else:
            if start is None:
                raise InputFileError(path, f"every {CLOSE!r} must close an open {OPEN!r}; got {CLOSE!r} at "
                                           f"character {m.start()} with no span open.", row=row, column=column)
            spans.append((start, offset))
            start = None
    out.append(text[pos:])
    unmarked = "".join(out)
    if start is not None:
        if open_spans == "error":
            raise InputFileError(path, f"every {OPEN!r} must be closed by {CLOSE!r}; got a span left open at "
                                       f"character {start}.", row=row, column=column)
        spans.append((start, len(unmarked)))
    return unmarked, spans, start is not None


def is_mqm_ratings_file(path: str | Path) -> bool:
    """The detection rule of score files: a tab- or comma-separated header (:func:`~metaeval.data.delimited.header_delimiter`)
    naming ``system``, ``rater``, ``source``, ``target``, ``category``, ``severity`` and a segment id
    (``seg_id`` or ``globalSegId``) is MQM ratings. Never raises nor blocks: an unreadable or special file
    (a FIFO, a device) is left to the reader that reports it."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            head = handle.read(4096)
        if head[:2] == b"\x1f\x8b":
            import zlib

            try:
                head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4096)
            except zlib.error:
                return False
        first = head.decode("utf-8", "replace").split("\n", 1)[0].rstrip("\r").lstrip("\ufeff")
    except OSError:
        return False
    delimiter = header_delimiter(first)
    if delimiter is None:
        return False
    names = {c.strip() for c in header_names(first, delimiter)}
    return set(REQUIRED) <= names and bool(names & set(SEGMENT_KEYS))


def _check_weights(weights):
    if weights is None:
        return MQMWeights()
    if isinstance(weights, str):
        return MQMWeights.preset(weights)
    if isinstance(weights, MQMWeights):
        return weights
    if isinstance(weights, Mapping):
        return MQMWeights(severities=weights)
    raise ParameterError(f"`weights` must be 'google', 'severity', an MQMWeights, a mapping of severity to weight or "
                         f"None; got {weights!r}.")


def read_mqm_ratings(path: str | Path, *, weights: Any = "google", name: str | None = None,
                     open_spans: str = "close-at-end", per_rater: bool | None = None) -> MQMRatings:
    """Read an MQM ratings file into per-rater and averaged scores and per-rater error spans.

    Parameters
    ----------
    path : str or path-like
        A ratings TSV (gzipped or not), see the module docstring for the columns.
    weights : {"google", "severity"}, MQMWeights or mapping of severity to weight, optional
        Error weights. ``"google"`` (default, also None): Google's MQM weights - Freitag et al.'s (2021), with
        ``Source issue`` and ``Accuracy/Creative Reinterpretation`` errors weighing 0 -, which the WMT23
        release's own per-segment scores use (``tests/test_mqm_ratings.py``); ``"severity"``: those two
        categories by severity, as mt-metrics-eval's ``converters/score_mqm.py`` does by default. A mapping
        replaces the per-severity weights only. The weighting is named in the scores' description (and so in
        every signature's ``subset``).
    name : str, optional
        Dataset name for signatures (default: the file name without extensions).
    per_rater : bool, optional
        Add a scorer ``mqm.<rater>`` per rater. Default (None): only when some segment has two or more
        raters - with one rater per segment (WMT21 TED) a rater's scores are ``mqm`` itself on the segments it
        rated, and correlating them with ``mqm`` would only show 1. Every ``mqm.<rater>`` is marked human, as
        ``mqm`` is: it never enters a default list of metrics; name it as a metric (``metrics=``, ``--metric``)
        or as a human baseline (``human_baselines=``, ``--human-baseline``) to score it against the gold.
    open_spans : {"close-at-end", "error"}
        A ``<v>`` never closed: the span runs to the end of the text, and a :class:`~metaeval.errors.DataWarning`
        names the count and the first row (default; the WMT21 TED files have one such row each), or the
        file is refused.

    Returns
    -------
    MQMRatings

    Raises
    ------
    InputFileError
        A missing column, an empty file, a row with the wrong number of fields, markup left open (or
        closed without opening, or nested), an unknown severity, a (system, segment) whose rows disagree on
        the unmarked target, a rater with two ``No-error`` rows or with errors and a ``No-error`` row for one
        segment.

    Examples
    --------
    >>> r = read_mqm_ratings("../shared/data/wmt/mqm_ratings/mqm_ted_ende.tsv.gz")  # doctest: +SKIP
    >>> r.scores.matrix("mqm").shape                                                  # doctest: +SKIP
    (14, 529)
    """
    weights = _check_weights(weights)
    open_spans = check_choice("open_spans", open_spans, OPEN_SPANS)
    text = read_text(path)
    lines = text.split("\n", 2)
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or not lines[0].strip():
        raise InputFileError(path, "the file must hold a header and at least one rating; got an empty file.")
    first = lines[0].rstrip("\r")
    delimiter = header_delimiter(first)
    if delimiter is None:
        raise InputFileError(path, f"the header must separate its columns by tabs or commas; got "
                                   f"{first[:80]!r}.", row=1)
    sep_name = DELIMITERS[delimiter]
    header = [c.strip() for c in header_names(first, delimiter)]
    twice = next((c for c in dict.fromkeys(header) if c and header.count(c) > 1), None)
    if twice is not None:  # the last of two `target` columns was read silently
        raise InputFileError(path, f"the header must name each column once; got {twice!r} {header.count(twice)} times"
                                   f" (columns {', '.join(str(i + 1) for i, c in enumerate(header) if c == twice)}).",
                             row=1)
    index = {c: i for i, c in enumerate(header)}
    for col in REQUIRED:
        if col not in index:
            raise InputFileError(path, f"the header must name the column {col!r}; got {', '.join(header)!r}.", row=1)
    seg_col = next((c for c in SEGMENT_KEYS if c in index), None)
    if seg_col is None:
        raise InputFileError(path, f"the header must name the column 'seg_id' (or 'globalSegId'); got "
                                   f"{', '.join(header)!r}.", row=1)
    if len(lines) == 1:
        raise InputFileError(path, "the file must hold at least one rating; got a header only.")
    known = set(weights.severities) | {NO_ERROR, ATTENTION_SEVERITY}
    systems: dict[str, None] = {}
    segments: dict[str, None] = {}
    raters: dict[str, None] = {}
    totals: dict[tuple, float] = {}          # (rater, system, segment) -> weighted error count
    clean: set = set()                       # (rater, system, segment) with a No-error row
    spans: dict[str, dict] = {}
    versions: dict[tuple, tuple[str, int]] = {}  # cell -> (longest unmarked target, row)
    trailing: set = set()
    left_open: list[int] = []
    documents: dict[str, str] = {}
    attention: dict[str, list[int]] = {}
    counts = dict(rows=0, error_rows=0, attention_rows=0, source_spans=0, unlocated_errors=0)
    sources: dict[tuple, str] = {}
    source_marked: dict[str, dict] = {}
    width = len(header)
    for number, cells in rows_after_header(text, delimiter, path):
        if len(cells) != width:
            raise InputFileError(path, f"every row must have {width} {sep_name}-separated fields like the header; "
                                       f"got {len(cells)}.", row=number)
        counts["rows"] += 1
        system, rater = cells[index["system"]].strip(), cells[index["rater"]].strip()
        segment = cells[index[seg_col]].strip()
        for col, value in (("system", system), ("rater", rater), (seg_col, segment)):
            if not value:
                raise InputFileError(path, f"the {col} must be a non-empty label; got an empty cell.", row=number,
                                     column=col)
        severity_text = cells[index["severity"]].strip()
        severity = severity_text.lower()
        category = cells[index["category"]].strip()
        if severity not in known:
            raise InputFileError(path, f"the severity must be one of {', '.join(sorted(known))} (case-insensitive; "
                                       f"other severities need a weight); got {severity_text!r}.", row=number,
                                 column="severity")
        raters.setdefault(rater, None)
        if severity == ATTENTION_SEVERITY:
            counts["attention_rows"] += 1
            found = attention.setdefault(rater, [0, 0])
            found[0 if category.lower() == "found" else 1] += 1
            continue
        systems.setdefault(system, None)
        segments.setdefault(segment, None)
        if "doc" in index:
            documents.setdefault(segment, cells[index["doc"]].strip())
        cell = (system, segment)
        target, target_spans, open_t = unmark(cells[index["target"]], path=path, row=number, column="target",
                                              open_spans=open_spans)
        source, source_spans, open_s = unmark(cells[index["source"]], path=path, row=number, column="source",
                                              open_spans=open_spans)
        if len(source) > len(sources.get(cell, "")):
            sources[cell] = source
        if open_t or open_s:
            left_open.append(number)
        if cell in versions:
            kept, first = versions[cell]
            if kept != target:
                if kept.rstrip() != target.rstrip():
                    raise InputFileError(path, f"every row of system {system!r}, segment {segment!r} must hold the "
                                               f"same target once the markup is removed; got a target different from "
                                               f"row {first}'s.", row=number, column="target")
                trailing.add(cell)
                if len(target) > len(kept):
                    versions[cell] = (target, first)
        else:
            versions[cell] = (target, number)
        key = (rater, system, segment)
        rater_spans = spans.setdefault(rater, {}).setdefault(cell, [])
        if severity == NO_ERROR:
            if key in clean or key in totals:
                raise InputFileError(path, f"rater {rater!r} must rate system {system!r}, segment {segment!r} either "
                                           f"with errors or with one 'No-error' row; got both or two.", row=number)
            clean.add(key)
            continue
        if key in clean:
            raise InputFileError(path, f"rater {rater!r} must rate system {system!r}, segment {segment!r} either "
                                       f"with errors or with one 'No-error' row; got both.", row=number)
        counts["error_rows"] += 1
        totals[key] = totals.get(key, 0.0) + weights.weight(severity, category)
        counts["source_spans"] += len(source_spans)
        if not target_spans and not source_spans:
            counts["unlocated_errors"] += 1
        for start, end in target_spans:
            rater_spans.append((start, end, severity, category))
        for start, end in source_spans:
            source_marked.setdefault(rater, {}).setdefault(cell, []).append((start, end, severity, category))
    if not systems:
        raise InputFileError(path, "the file must hold at least one rating that is not an attention check; got none.")
    counts["open_spans_closed_at_end"] = len(left_open)
    if left_open:
        warnings.warn(f"{path}: {len(left_open)} span marker(s) {OPEN!r} left open (first at row {left_open[0]}); "
                      f"each span runs to the end of its text.", DataWarning, stacklevel=2)
    sys_list, seg_list, rater_list = list(systems), list(segments), list(raters)
    si = {s: i for i, s in enumerate(sys_list)}
    gi = {g: j for j, g in enumerate(seg_list)}
    matrices = {r: np.full((len(sys_list), len(seg_list)), np.nan) for r in rater_list}
    for (rater, system, segment) in clean:
        matrices[rater][si[system], gi[segment]] = 0.0
    for (rater, system, segment), total in totals.items():
        matrices[rater][si[system], gi[segment]] = -total
    rated = [r for r in rater_list if np.isfinite(matrices[r]).any()]
    unrated = [r for r in rater_list if r not in rated]  # attention checks only: no scorer, named
    counts["raters_without_ratings"] = len(unrated)
    if unrated:
        shown = ", ".join(map(repr, unrated[:3])) + (f" and {len(unrated) - 3} more" if len(unrated) > 3 else "")
        warnings.warn(f"{path}: {len(unrated)} rater(s) with no ratings (attention checks only) left out of the "
                      f"scores: {shown}.", DataWarning, stacklevel=2)
    stack = np.stack([matrices[r] for r in rated])
    with np.errstate(invalid="ignore"):
        n = np.isfinite(stack).sum(axis=0)
        mean = np.where(n > 0, np.nansum(stack, axis=0) / np.maximum(n, 1), np.nan)
    if per_rater is None:
        per_rater_scorers = bool((n > 1).any())
    elif isinstance(per_rater, bool):
        per_rater_scorers = per_rater
    else:
        raise ParameterError(f"`per_rater` must be None, True or False; got {per_rater!r}.")
    scores = {HUMAN_NAME: mean, **({f"{HUMAN_NAME}.{r}": matrices[r] for r in rated} if per_rater_scorers else {})}
    if name is None:
        name = Path(str(path)).name.split(".")[0]
    ds = ScoreSet(scores, systems=sys_list, inputs=seg_list, humans=tuple(scores), name=name,
                  description=f"MQM ratings, weights {weights.describe()}")
    span_sets = {r: {cell: tuple(sorted(v)) for cell, v in cells.items()} for r, cells in spans.items()}
    counts["trailing_space_cells"] = len(trailing)
    return MQMRatings(scores=ds, targets={c: t for c, (t, _) in versions.items()}, spans=span_sets,
                      raters=tuple(rated), attention={r: tuple(v) for r, v in attention.items()}, counts=counts,
                      weights=weights, path=str(path), documents=documents,
                      source_spans={r: {cell: tuple(sorted(v)) for cell, v in cells.items()}
                                    for r, cells in source_marked.items()},
                      sources=sources)
