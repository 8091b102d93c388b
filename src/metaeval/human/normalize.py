"""Normalizing and aggregating several annotators' scores, and combining criteria.

Per-annotator z-scores (Leusch et al. 2005; the WMT direct-assessment standardization, Graham et al.
2013): every score x of annotator a becomes ``z = (x - mean_a) / std_a`` over all the scores a gave
(population standard deviation, ddof 0), which removes an annotator's leniency and scale before the
per-cell aggregation. Aggregations: 'mean', 'median', or 'majority' (the most frequent score of the cell;
a tie goes to the lowest tied score, as a tied LitePyramid vote counts as "not present"). An annotator
whose scores are all equal has no z-scores: theirs become NaN, with a
:class:`~metaeval.errors.DegenerateWarning`.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .. import defaults
from ..data.formats import file_format, read_table
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, InputFileError, ParameterError, check_choice
from ..serialization import EXCLUDED, RECORDS, ResultMixin
from ..signature import Signature
from .annotations import natural_key

METHODS = ("none", "z")
AGGREGATIONS = ("mean", "median", "majority")
JUDGMENT_COLUMNS = ("system", "input", "annotator", "score")


@dataclass(frozen=True)
class HumanScoresResult(ResultMixin):
    """Human scores built from several annotators (or criteria), one matrix per scorer.

    Attributes
    ----------
    scoreset : ScoreSet
        The new scorers (systems x inputs), marked as human.
    scorers : tuple of str
        Their names.
    method : str
        Normalization ('none', 'z') or, for :func:`combine_criteria`, 'z' / 'none' per criterion.
    aggregation : str
        'mean', 'median', 'majority' or, for :func:`combine_criteria`, 'weighted-mean'.
    details : pandas.DataFrame
        Per annotator (``annotator``, ``n_scores``, ``mean``, ``std``, ``defined``) or per criterion
        (``criterion``, ``weight``, ``mean``, ``std``).
    signature : Signature
    """

    scoreset: ScoreSet = field(metadata=EXCLUDED)  # the table of to_frame
    scorers: tuple[str, ...]
    method: str
    aggregation: str
    details: pd.DataFrame = field(metadata=RECORDS)
    signature: Signature

    def to_frame(self) -> pd.DataFrame:
        return self.scoreset.to_frame()


def read_judgments(path: str | Path) -> pd.DataFrame:
    """Read human judgments in the long layout ``system,input,annotator,score[,criterion]``.

    CSV, TSV, JSON Lines or Parquet (by extension). One row per annotator x cell (x criterion).

    Raises
    ------
    InputFileError
        A missing column, an empty label, a non-numeric score, or an annotator scoring one cell (and
        criterion) twice.
    """
    table = read_table(path, file_format(path))
    for column in JUDGMENT_COLUMNS:
        if column not in table.columns:
            raise InputFileError(path, f"the header must have a column {column!r}; got columns"
                                 f" {', '.join(list(table.columns)[:8])}.", row=table.header_row, column=column)
    has_criterion = "criterion" in table.columns
    rows: dict[str, list] = {"system": [], "input": [], "annotator": [], "score": [], "criterion": []}
    seen: dict[tuple, int] = {}
    for k, line in enumerate(table.rows):
        line = int(line)
        labels = []
        for column in ("system", "input", "annotator") + (("criterion",) if has_criterion else ()):
            value = table.columns[column][k]
            text = "" if value is None else str(value).strip()
            if not text or text.lower() == "nan":
                raise InputFileError(path, f"a {column} label must not be empty; got {value!r}.", row=line,
                                     column=column)
            labels.append(text)
        raw = table.columns["score"][k]
        try:
            score = float(str(raw).strip()) if not isinstance(raw, (int, float)) else float(raw)
        except ValueError:
            score = float("nan")
        if not np.isfinite(score):
            raise InputFileError(path, f"a score must be a finite number; got {raw!r}.", row=line, column="score")
        key = tuple(labels)
        if key in seen:
            raise InputFileError(path, f"an annotator must score a cell once; got annotator {labels[2]!r} again on"
                                 f" system {labels[0]!r}, input {labels[1]!r} (first at row {seen[key]}).",
                                 row=line, column="annotator")
        seen[key] = line
        for column, value in zip(("system", "input", "annotator"), labels):
            rows[column].append(value)
        rows["criterion"].append(labels[3] if has_criterion else None)
        rows["score"].append(score)
    frame = pd.DataFrame(rows)
    return frame if has_criterion else frame.drop(columns="criterion")


def _normalize_iv(source, scorer, method, aggregation, name):
    method = check_choice("method", method, METHODS)
    aggregation = check_choice("aggregation", aggregation, AGGREGATIONS)
    if aggregation == "majority" and method != "none":
        raise ParameterError(f"`aggregation` 'majority' needs `method` 'none' (z-scores are not categories); got"
                             f" method {method!r}.")
    if isinstance(source, ScoreSet):
        if scorer is None:
            raise ParameterError("`scorer` must name a scorer with annotators when `source` is a ScoreSet; got None.")
        source.require(scorer, param="scorer")
        array = source.annotations(scorer)
        if array.ndim == 2:
            array = array[:, :, None]
        n, m, a = array.shape
        frame = pd.DataFrame({
            "system": np.repeat(np.array(source.systems, dtype=object), m * a),
            "input": np.tile(np.repeat(np.array(source.inputs, dtype=object), a), n),
            "annotator": np.tile([str(k + 1) for k in range(a)], n * m),
            "score": array.reshape(-1),
        }).dropna(subset=["score"])
        systems, inputs = list(source.systems), list(source.inputs)
        name = name or scorer
        base = source.signature_fields()
    elif isinstance(source, pd.DataFrame):
        if scorer is not None:
            raise ParameterError(f"`scorer` must be None for a judgments table; got {scorer!r}.")
        for column in JUDGMENT_COLUMNS:
            if column not in source.columns:
                raise ParameterError(f"`source` must have the columns {', '.join(JUDGMENT_COLUMNS)}; got no"
                                     f" {column!r}.")
        frame = source.dropna(subset=["score"]).copy()
        for column in ("system", "input", "annotator"):
            frame[column] = frame[column].astype(str)
        systems = sorted(frame["system"].unique(), key=natural_key)
        inputs = sorted(frame["input"].unique(), key=natural_key)
        name = name or "human"
        base = {"dataset": "user", "systems": len(systems), "inputs": len(inputs)}
    else:
        raise ParameterError(f"`source` must be a ScoreSet or a judgments DataFrame; got {type(source).__name__}.")
    if not isinstance(name, str) or not name:
        raise ParameterError(f"`name` must be a non-empty string; got {name!r}.")
    return frame, systems, inputs, method, aggregation, name, base


def normalize(source: ScoreSet | pd.DataFrame, scorer: str | None = None, *,
              method: str = defaults.NORMALIZATION, aggregation: str = defaults.HUMAN_AGGREGATION,
              name: str | None = None) -> HumanScoresResult:
    """Per-annotator normalization, then aggregation of each cell's scores.

    Parameters
    ----------
    source : ScoreSet or pandas.DataFrame
        A ScoreSet whose ``scorer`` has an annotator axis (a slot is taken as one annotator throughout),
        or a long table ``system, input, annotator, score[, criterion]`` (:func:`read_judgments`),
        where annotator ids are real.
    scorer : str, optional
        The ScoreSet's scorer.
    method : {'z', 'none'}
        'z': per-annotator z-scores before aggregating (module notes); 'none': raw scores.
    aggregation : {'mean', 'median', 'majority'}
        How a cell's scores become one ('majority' only with ``method='none'``).
    name : str, optional
        Name of the new scorer (default: ``scorer``, or 'human'); with a ``criterion`` column one scorer
        ``<name>.<criterion>`` per criterion.

    Returns
    -------
    HumanScoresResult

    Warns
    -----
    DegenerateWarning
        Annotators with constant scores under ``method='z'`` (their scores are dropped).

    References
    ----------
    Leusch, Ueffing, Vilar & Ney (2005), Preprocessing and Normalization for Automatic Evaluation of
    Machine Translation. Graham, Baldwin, Moffat & Zobel (2013), Continuous Measurement Scales in Human
    Evaluation of Machine Translation.
    """
    frame, systems, inputs, method, aggregation, name, base = _normalize_iv(source, scorer, method, aggregation, name)
    stats = frame.groupby("annotator")["score"].agg(n_scores="size", mean="mean", std=lambda s: s.std(ddof=0))
    stats["defined"] = stats["std"] > 0
    if method == "z":
        bad = stats.index[~stats["defined"]]
        if len(bad):
            warnings.warn(f"{len(bad)} annotators gave one constant score, so they have no z-scores and their scores"
                          f" are left out (e.g. {bad[0]!r}).", DegenerateWarning, stacklevel=2)
        mean = stats["mean"].reindex(frame["annotator"]).to_numpy()
        std = stats["std"].where(stats["defined"]).reindex(frame["annotator"]).to_numpy()
        frame = frame.assign(score=(frame["score"].to_numpy() - mean) / std).dropna(subset=["score"])
    criteria = [None] if "criterion" not in frame.columns else sorted(frame["criterion"].unique())
    scores = {}
    for criterion in criteria:
        part = frame if criterion is None else frame[frame["criterion"] == criterion]
        cells = part.groupby(["system", "input"])["score"]
        values = cells.agg(_AGGREGATORS[aggregation])
        matrix = values.unstack("input").reindex(index=systems, columns=inputs).to_numpy(dtype=float)
        scores[name if criterion is None else f"{name}.{criterion}"] = matrix
    ds = ScoreSet(scores, systems=systems, inputs=inputs, humans=list(scores), name=base.get("dataset"),
                  description=f"{method} normalization, {aggregation} aggregation")
    details = stats.reset_index()
    signature = Signature.of(scorers=tuple(scores), normalization=method, aggregation=aggregation,
                             annotators=len(stats), **{k: v for k, v in base.items() if k != "aggregation"})
    return HumanScoresResult(ds, tuple(scores), method, aggregation, details, signature)


def _majority(values: pd.Series) -> float:
    counts = values.value_counts()
    best = counts[counts == counts.max()].index
    return float(min(best))


_AGGREGATORS = {"mean": "mean", "median": "median", "majority": _majority}


def combine_criteria(ds: ScoreSet, scorers: Sequence[str], *, weights: Sequence[float] | None = None,
                     standardize: bool = True, name: str = "combined") -> HumanScoresResult:
    """One human score from several criteria: a weighted mean of their (standardized) matrices.

    Parameters
    ----------
    ds : ScoreSet
    scorers : sequence of str
        The criteria (e.g. SummEval's ``expert.coherence``, ``expert.consistency``, ...), aggregated
        over annotators with ``ds.aggregation``.
    weights : sequence of float, optional
        Non-negative weights, one per criterion (default: equal). They are normalized to sum to 1.
    standardize : bool
        z-score each criterion over all its cells first (criteria on different scales), else raw.
    name : str
        Name of the combined scorer.

    Returns
    -------
    HumanScoresResult
        ``combined = sum_c w_c * s_c`` per cell, NaN where any criterion is missing.
    """
    if not isinstance(ds, ScoreSet):
        raise ParameterError(f"`ds` must be a ScoreSet; got {type(ds).__name__}.")
    if isinstance(scorers, str) or len(scorers) < 2:
        raise ParameterError(f"`scorers` must list at least 2 criteria; got {scorers!r}.")
    for scorer in scorers:
        ds.require(scorer, param="scorers")
    if weights is None:
        weights = [1.0] * len(scorers)
    try:
        w = np.array(weights, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"`weights` must be numbers, one per scorer; got {weights!r}.") from None
    if w.shape != (len(scorers),) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ParameterError(f"`weights` must be {len(scorers)} non-negative numbers with a positive sum; got"
                             f" {list(weights)!r}.")
    if not isinstance(standardize, (bool, np.bool_)):
        raise ParameterError(f"`standardize` must be True or False; got {standardize!r}.")
    w = w / w.sum()
    rows, total = [], 0.0
    for scorer, weight in zip(scorers, w):
        matrix = ds.matrix(scorer)
        mean, std = float(np.nanmean(matrix)), float(np.nanstd(matrix))
        if standardize:
            if not std > 0:
                raise ParameterError(f"`scorers` must have non-constant scores to be standardized; got {scorer!r}"
                                     " constant.")
            matrix = (matrix - mean) / std
        total = total + weight * matrix
        rows.append({"criterion": scorer, "weight": float(weight), "mean": mean, "std": std})
    out = ScoreSet({name: total}, systems=ds.systems, inputs=ds.inputs, humans=[name], name=ds.name,
                   description=f"weighted mean of {len(scorers)} criteria")
    method = "z" if standardize else "none"
    signature = Signature.of(scorer=name, criteria=tuple(scorers), weights=tuple(float(v) for v in w),
                             standardize=bool(standardize), **ds.signature_fields())
    return HumanScoresResult(out, (name,), method, "weighted-mean", pd.DataFrame(rows), signature)
