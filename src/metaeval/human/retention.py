"""Weighted retention and judgment instability (Lin & Hovy 2002).

DUC assessors judged, for every model unit (MU) of a reference summary, how much of it a peer summary
expresses: all, most, some, hardly any or none, coded ``C = 1, 3/4, 1/2, 1/4, 0``. A summary's weighted
retention is ``R = sum_u C_u / U`` over its U judged units; recall at threshold t counts a unit as
retained when ``C_u >= t`` (``R_t = #{u : C_u >= t} / U``). A system's score is its mean over documents.

When the same unit of the same summary was judged several times, the combination of the judgments
changes the scores: MIN, MAX, MAJORITY (most frequent C; a tie goes to the lowest) and AVG (mean C) per
unit, then retention (the threshold applies to the combined C). MIN and MAX bound each system's score:
``[low_x, high_x]``. Two systems form a performance group relation: '+' when x is above y for sure
(``low_x > high_y``), '-' for the reverse, '~' when the bounds overlap. The number of system rankings
consistent with the bounds is the number of strict orders in which x comes before y whenever x '+' y: the
linear extensions of that interval order, counted exactly by dynamic programming over the sets of systems
that can fill the top places (after splitting the systems into blocks that are wholly above one another;
a block with no '+' inside counts ``k!``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import defaults
from ..data.formats import file_format, read_table
from ..data.scoreset import ScoreSet
from ..errors import DegenerateDataError, InputFileError, ParameterError, check_int
from ..serialization import EXCLUDED, RECORDS, ResultMixin
from ..signature import Signature
from .annotations import natural_key

COVERAGE = {"all": 1.0, "most": 0.75, "some": 0.5, "hardly any": 0.25, "none": 0.0}
"""Lin & Hovy's coverage labels and their weights."""
COMBINATIONS = ("min", "max", "majority", "avg")
COVERAGE_COLUMNS = ("system", "document", "unit", "coverage")


@dataclass(frozen=True)
class RetentionResult(ResultMixin):
    """Weighted retention per system under each combination of repeated judgments.

    Attributes
    ----------
    scoreset : ScoreSet
        Systems x documents, scorers ``retention.min``, ``retention.max``, ``retention.majority``,
        ``retention.avg``.
    system_scores : pandas.DataFrame
        One row per system: ``system`` and its mean score under each combination.
    low, high : numpy.ndarray
        The MIN and MAX system scores (bounds), in ``scoreset.systems`` order.
    groups : numpy.ndarray of str
        ``groups[x, y]`` is '+', '-' or '~' ('=' on the diagonal).
    n_rankings : int
        System rankings consistent with the bounds.
    threshold : float or None
        None for weighted retention, else the recall threshold t.
    n_repeated : int
        Units of a summary judged more than once.
    signature : Signature
    """

    scoreset: ScoreSet = field(metadata=EXCLUDED)
    system_scores: pd.DataFrame = field(metadata=RECORDS)
    low: np.ndarray = field(metadata=EXCLUDED)  # in system_scores
    high: np.ndarray = field(metadata=EXCLUDED)
    groups: np.ndarray
    n_rankings: int
    threshold: float | None
    n_repeated: int
    signature: Signature

    @property
    def statistic(self) -> np.ndarray:
        """The AVG system scores."""
        return self.system_scores["avg"].to_numpy()

    def to_frame(self) -> pd.DataFrame:
        return self.system_scores.copy()

    def groups_frame(self) -> pd.DataFrame:
        """The '+' / '-' / '~' matrix with system labels."""
        return pd.DataFrame(self.groups, index=self.scoreset.systems, columns=self.scoreset.systems)

    def to_dict(self) -> dict[str, Any]:
        """The fields, led by the system labels (the order of ``groups``)."""
        return {"systems": list(self.scoreset.systems), **super().to_dict()}


def coverage_value(value: Any) -> float | None:
    """C of a label ('all', 'most', 'some', 'hardly any', 'none', any case) or of a number in [0, 1]."""
    if isinstance(value, str):
        text = " ".join(value.strip().lower().split())
        if text in COVERAGE:
            return COVERAGE[text]
        try:
            value = float(text)
        except ValueError:
            return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if 0.0 <= number <= 1.0 else None


def read_coverage(path: str | Path) -> pd.DataFrame:
    """Read coverage judgments ``system,document,unit,coverage`` (one row per judgment; a unit judged
    again is a repeated row). Coverage is a label of :data:`COVERAGE` or a number in [0, 1].

    Raises
    ------
    InputFileError
        A missing column, an empty label, or a coverage that is neither.
    """
    table = read_table(path, file_format(path))
    for column in COVERAGE_COLUMNS:
        if column not in table.columns:
            raise InputFileError(path, f"the header must have a column {column!r}; got columns"
                                 f" {', '.join(list(table.columns)[:8])}.", row=table.header_row, column=column)
    out: dict[str, list] = {c: [] for c in COVERAGE_COLUMNS}
    for k, line in enumerate(table.rows):
        for column in ("system", "document", "unit"):
            value = table.columns[column][k]
            text = "" if value is None else str(value).strip()
            if not text:
                raise InputFileError(path, f"a {column} label must not be empty; got {value!r}.", row=int(line),
                                     column=column)
            out[column].append(text)
        raw = table.columns["coverage"][k]
        value = coverage_value(raw)
        if value is None:
            raise InputFileError(path, "a coverage must be all, most, some, hardly any, none or a number in [0, 1];"
                                 f" got {raw!r}.", row=int(line), column="coverage")
        out["coverage"].append(value)
    frame = pd.DataFrame(out)
    frame.attrs["source"] = Path(path).name  # the signature's `source` (issue 41: a signature names its data)
    return frame


def performance_groups(low, high) -> np.ndarray:
    """'+' where ``low[x] > high[y]``, '-' where ``high[x] < low[y]``, '~' otherwise, '=' on the diagonal."""
    low, high = _bounds_iv(low, high)
    above = low[:, None] > high[None, :]
    below = high[:, None] < low[None, :]
    groups = np.where(above, "+", np.where(below, "-", "~")).astype("<U1")
    np.fill_diagonal(groups, "=")
    return groups


def _bounds_iv(low, high) -> tuple[np.ndarray, np.ndarray]:
    try:
        low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError("`low` and `high` must be numeric vectors of the same length; got non-numbers.") from None
    if low.ndim != 1 or low.shape != high.shape or not low.size:
        raise ParameterError(f"`low` and `high` must be vectors of the same length; got shapes {low.shape} and"
                             f" {high.shape}.")
    if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
        raise ParameterError("`low` and `high` must be finite; got NaN or an infinite bound.")
    if np.any(low > high):
        x = int(np.argmax(low > high))
        raise ParameterError(f"`low` must not exceed `high`; got {float(low[x])!r} > {float(high[x])!r} at"
                             f" position {x}.")
    return low, high


def count_rankings(low, high, *, limit: int = defaults.RANKING_STATE_LIMIT) -> int:
    """Number of strict rankings of the systems in which x precedes y whenever ``low[x] > high[y]``.

    Parameters
    ----------
    low, high : array_like
        Each system's lower and upper bound (e.g. its MIN and MAX score).
    limit : int
        Most sets of top-ranked systems the count may visit before giving up.

    Returns
    -------
    int
        Exact (Python integer); ``n!`` when every pair overlaps, 1 when none does.

    Raises
    ------
    DegenerateDataError
        When a block of overlapping systems needs more than ``limit`` states.
    """
    low, high = _bounds_iv(low, high)
    limit = check_int("limit", limit, minimum=1)
    order = np.lexsort((-low, -high))
    low, high = low[order], high[order]
    total = 1
    start = 0
    n = len(low)
    for cut in range(1, n + 1):
        if cut == n or low[start:cut].min() > high[cut:].max():
            total *= _count_block(low[start:cut], high[start:cut], limit)
            start = cut
    return total


def _count_block(low: np.ndarray, high: np.ndarray, limit: int) -> int:
    k = len(low)
    above = low[:, None] > high[None, :]
    if not above.any():
        return math.factorial(k)
    must_precede = [sum(1 << y for y in range(k) if above[y, x]) for x in range(k)]
    layer = {0: 1}
    visited = 0
    for _ in range(k):
        nxt: dict[int, int] = {}
        for state, ways in layer.items():
            for x in range(k):
                bit = 1 << x
                if not state & bit and must_precede[x] & state == must_precede[x]:
                    nxt[state | bit] = nxt.get(state | bit, 0) + ways
        visited += len(nxt)
        if visited > limit:
            raise DegenerateDataError(f"the bounds of {k} overlapping systems need more than {limit} states to count"
                                      " their rankings exactly; raise `limit` or narrow the bounds.")
        layer = nxt
    return layer[(1 << k) - 1]


def _majority_value(values: pd.Series) -> float:
    counts = values.value_counts()
    return float(min(counts[counts == counts.max()].index))


def weighted_retention(judgments: pd.DataFrame, *, threshold: float | None = None,
                       limit: int = defaults.RANKING_STATE_LIMIT) -> RetentionResult:
    """Weighted retention (or recall at a threshold) per summary and system, with instability bounds.

    Parameters
    ----------
    judgments : pandas.DataFrame
        Columns ``system``, ``document``, ``unit``, ``coverage`` (labels or numbers in [0, 1]), one row
        per judgment (:func:`read_coverage`).
    threshold : float, optional
        None: weighted retention ``sum C / U``. t in (0, 1]: recall at t, ``#{C >= t} / U``.
    limit : int
        State limit of :func:`count_rankings`.

    Returns
    -------
    RetentionResult

    Notes
    -----
    Per summary, ``R = (1 / U) sum_u f(comb(C_u1, C_u2, ...))`` with comb one of MIN, MAX, MAJORITY, AVG
    and ``f(c) = c`` or ``[c >= t]``; U = the units judged for that summary. System score = mean of R over
    the documents the system summarized.

    References
    ----------
    Lin, C.-Y. & Hovy, E. (2002). Manual and Automatic Evaluation of Summaries. Proceedings of the ACL-02
    Workshop on Automatic Summarization (DUC 2002).
    """
    source = judgments.attrs.get("source") if isinstance(judgments, pd.DataFrame) else None
    frame, threshold, limit = _retention_iv(judgments, threshold, limit)
    cells = frame.groupby(["system", "document", "unit"])["coverage"]
    combined = pd.DataFrame({"min": cells.min(), "max": cells.max(), "majority": cells.agg(_majority_value),
                             "avg": cells.mean(), "n": cells.size()})
    n_repeated = int((combined["n"] > 1).sum())
    if threshold is not None:
        for c in COMBINATIONS:
            combined[c] = (combined[c] >= threshold).astype(float)
    per_summary = combined.groupby(["system", "document"])[list(COMBINATIONS)].mean()
    systems = sorted(frame["system"].unique())
    documents = sorted(frame["document"].unique(), key=natural_key)
    scores = {f"retention.{c}": per_summary[c].unstack("document").reindex(index=systems, columns=documents)
              .to_numpy(dtype=float) for c in COMBINATIONS}
    ds = ScoreSet(scores, systems=systems, inputs=documents, humans=list(scores), name="retention",
                  description="weighted retention" if threshold is None else f"recall at threshold {threshold:g}")
    system_scores = per_summary.groupby("system").mean().reindex(systems)
    low, high = system_scores["min"].to_numpy(), system_scores["max"].to_numpy()
    groups = performance_groups(low, high)
    n_rankings = count_rankings(low, high, limit=limit)
    signature = Signature.of(statistic="weighted-retention" if threshold is None else "recall-at-threshold",
                             **({"source": source} if source else {}),
                             threshold=threshold, combinations=COMBINATIONS, majority_ties="lowest",
                             systems=len(systems), documents=len(documents))
    return RetentionResult(ds, system_scores.reset_index(), low, high, groups, n_rankings, threshold, n_repeated,
                           signature)


def _retention_iv(judgments, threshold, limit):
    if not isinstance(judgments, pd.DataFrame):
        raise ParameterError(f"`judgments` must be a DataFrame with columns {', '.join(COVERAGE_COLUMNS)}; got"
                             f" {type(judgments).__name__}.")
    for column in COVERAGE_COLUMNS:
        if column not in judgments.columns:
            raise ParameterError(f"`judgments` must have the columns {', '.join(COVERAGE_COLUMNS)}; got no {column!r}.")
    if not len(judgments):
        raise ParameterError("`judgments` must hold at least one judgment; got an empty table.")
    values = [coverage_value(v) for v in judgments["coverage"]]
    bad = next((v for v, c in zip(judgments["coverage"], values) if c is None), None)
    if any(c is None for c in values):
        raise ParameterError(f"`judgments` coverage must be all, most, some, hardly any, none or a number in [0, 1];"
                             f" got {bad!r}.")
    frame = pd.DataFrame({"system": judgments["system"].astype(str), "document": judgments["document"].astype(str),
                          "unit": judgments["unit"].astype(str), "coverage": np.array(values, dtype=float)})
    if threshold is not None:
        try:
            t = float(threshold)
        except (TypeError, ValueError):
            t = float("nan")
        if not 0.0 < t <= 1.0:
            raise ParameterError(f"`threshold` must be None or a number in (0, 1]; got {threshold!r}.")
        threshold = t
    return frame, threshold, check_int("limit", limit, minimum=1)
