"""Nugget F(beta) of answers and summaries, from matched counts or from an automatic matcher
(Lin & Demner-Fushman 2005).

Three ways in, one result (:class:`NuggetScoresResult`, one row per response):

- :func:`nugget_scores`: a table of counts ``vital_matched``, ``okay_matched`` (optional, 0), ``vital_total``,
  ``length`` per response (assessor judgments);
- :func:`match_nuggets`: an answer key (``input``, ``nugget``, optional ``importance`` vital / okay) and the
  responses (``system``, ``input``, ``text``), matched by term overlap
  (:class:`metaeval.metrics.nugget_match.NuggetMatcher`);
- :func:`litepyramid_nuggets`: the crowd's SCU matches behind LitePyramid (REALSumm): every SCU a vital
  nugget, ``vital_matched`` the SCUs the majority found present.

The F formula is :func:`metaeval.stats.frameworks.nugget.nugget_f`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import InputFileError, ParameterError
from ..metrics.nugget_match import NuggetMatcher, response_length
from ..serialization import EXCLUDED, ResultMixin
from ..signature import Signature
from ..stats.frameworks.nugget import nugget_f, nugget_precision
from . import _common as common
from .nugget_tables import read_columns

__all__ = ["NuggetScoresResult", "litepyramid_nuggets", "match_nuggets", "nugget_scores", "realsumm_nugget_tables"]

SCORER = "nugget_f"
"""Name of the nugget F scorer in :meth:`NuggetScoresResult.scoreset`."""
IMPORTANCE = ("vital", "okay")
COLUMNS = ("system", "input", "vital_matched", "okay_matched", "vital_total", "length", "recall", "precision",
           "nugget_f")


@dataclass(frozen=True)
class NuggetScoresResult(ResultMixin):
    """Nugget F(beta) of every response.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per response: ``system``, ``input`` (None when the counts table has no such column),
        ``vital_matched``, ``okay_matched``, ``vital_total``, ``length``, ``recall`` (r / R), ``precision``
        (length allowance), ``nugget_f``.
    beta, allowance : float
    n_unmatchable : int
        Answer-key nuggets left out because they have no content term (automatic matcher only).
    source : str
        'counts', 'matcher' or 'litepyramid'.
    signature : Signature
    """

    table: pd.DataFrame = field(metadata=EXCLUDED)
    beta: float
    allowance: float
    n_responses: int
    mean: float
    n_unmatchable: int
    source: str
    signature: Signature

    def frame_rows(self) -> list[dict[str, Any]]:
        return common.records(self.table)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["responses"] = self.frame_rows()
        return out

    def scoreset(self, *, name: str = SCORER) -> ScoreSet:
        """Systems x inputs ScoreSet with one metric scorer ``name`` (needs system and input labels)."""
        if self.table["system"].isna().any() or self.table["input"].isna().any():
            raise ParameterError("the responses must have `system` and `input` labels to form a ScoreSet; got a table without them.")
        wide = self.table.pivot(index="system", columns="input", values="nugget_f")
        return ScoreSet.from_matrices({name: wide.to_numpy(dtype=float)}, systems=list(wide.index),
                                      inputs=list(wide.columns), name="nuggets")


def _check_beta(beta: Any, allowance: Any) -> tuple[float, float]:
    values = []
    for name, value in (("beta", beta), ("allowance", allowance)):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ParameterError(f"`{name}` must be a number > 0; got {value!r}.") from None
        if not np.isfinite(number) or number <= 0:
            raise ParameterError(f"`{name}` must be a number > 0; got {value!r}.")
        values.append(number)
    return values[0], values[1]


def _files(**given: Any) -> dict:
    """The signature fields naming the files among ``given`` (tables given as frames are not named)."""
    import os
    from pathlib import Path

    return {key: Path(value).name for key, value in given.items() if isinstance(value, (str, os.PathLike))}


def _result(frame: pd.DataFrame, beta: float, allowance: float, source: str, n_unmatchable: int,
            **fields: Any) -> NuggetScoresResult:
    r, a = frame["vital_matched"].to_numpy(float), frame["okay_matched"].to_numpy(float)
    big_r, l = frame["vital_total"].to_numpy(float), frame["length"].to_numpy(float)
    frame = frame.assign(recall=r / big_r,
                         precision=nugget_precision(r, a, l, allowance=allowance),
                         nugget_f=np.atleast_1d(nugget_f(r, a, big_r, l, beta=beta, allowance=allowance)))
    frame = frame[list(COLUMNS)].reset_index(drop=True)
    signature = Signature.of(analysis="nuggets", source=source, beta=beta, allowance=allowance, **fields,
                             responses=len(frame))
    return NuggetScoresResult(table=frame, beta=beta, allowance=allowance, n_responses=len(frame),
                              mean=float(frame["nugget_f"].mean()), n_unmatchable=n_unmatchable, source=source,
                              signature=signature)


def nugget_scores(counts: Any, *, beta: float = defaults.NUGGET_BETA,
                  allowance: float = defaults.NUGGET_ALLOWANCE) -> NuggetScoresResult:
    """Nugget F(beta) from a table of matched counts (one row per response).

    Parameters
    ----------
    counts : path or pandas.DataFrame
        Columns ``vital_matched``, ``vital_total`` (> 0), ``length`` (non-whitespace characters), optional
        ``okay_matched`` (default 0), optional labels ``system`` and ``input``.
    beta : float, keyword-only
        3 (TREC 2004, default) or 5 (TREC 2003).
    allowance : float, keyword-only
        Characters allowed per matched nugget (100).

    Returns
    -------
    NuggetScoresResult

    Raises
    ------
    InputFileError
        A missing column, a cell that is not a number >= 0 (``vital_total`` > 0), ``vital_matched >
        vital_total``, a (system, input) pair twice.

    References
    ----------
    J. Lin and D. Demner-Fushman (2005). Evaluating Summaries and Answers: Two Sides of the Same Coin?
    ACL 2005 Workshop on Intrinsic and Extrinsic Evaluation Measures for MT and/or Summarization.
    """
    beta, allowance = _check_beta(beta, allowance)
    table = read_columns(counts, required=("vital_matched", "vital_total", "length"), param="counts")
    frame = pd.DataFrame({
        "system": table.labels("system") if table.has("system") else [None] * len(table),
        "input": table.labels("input") if table.has("input") else [None] * len(table),
        "vital_matched": table.numbers("vital_matched", minimum=0),
        "okay_matched": table.numbers("okay_matched", minimum=0) if table.has("okay_matched") else 0.0,
        "vital_total": table.numbers("vital_total", minimum=0),
        "length": table.numbers("length", minimum=0),
    })
    for k, row in enumerate(table.rows):
        if frame["vital_total"].iat[k] <= 0:
            raise InputFileError(table.path, f"the cell must be a number > 0; got {table.raw('vital_total')[k]!r}.",
                                 row=int(row), column="vital_total")
        if frame["vital_matched"].iat[k] > frame["vital_total"].iat[k]:
            raise InputFileError(table.path, f"`vital_matched` must be <= `vital_total` "
                                 f"({frame['vital_total'].iat[k]:g}); got {frame['vital_matched'].iat[k]:g}.",
                                 row=int(row), column="vital_matched")
    _check_unique(frame, table)
    return _result(frame, beta, allowance, "counts", 0, **_files(counts=counts))


def _check_unique(frame: pd.DataFrame, table) -> None:
    if frame["system"].isna().all() and frame["input"].isna().all():
        return
    keys = frame["system"].astype(str) + "\x00" + frame["input"].astype(str)
    twice = keys.duplicated()
    if twice.any():
        k = int(np.flatnonzero(twice.to_numpy())[0])
        raise InputFileError(table.path, f"each (system, input) must have one row; got ({frame['system'].iat[k]!r}, "
                             f"{frame['input'].iat[k]!r}) twice.", row=int(table.rows[k]))


def match_nuggets(nuggets: Any, texts: Any, *, beta: float = defaults.NUGGET_BETA,
                  allowance: float = defaults.NUGGET_ALLOWANCE, match: str = defaults.NUGGET_MATCH,
                  threshold: float = defaults.NUGGET_THRESHOLD, stem: bool = True) -> NuggetScoresResult:
    """Nugget F(beta) with nuggets matched automatically by term overlap (POURPRE style).

    Parameters
    ----------
    nuggets : path or pandas.DataFrame
        The answer key: ``input``, ``nugget`` (its description), optional ``importance`` ('vital' or
        'okay'; default every nugget vital).
    texts : path or pandas.DataFrame
        The responses: ``system``, ``input``, ``text``. Every input of ``texts`` needs a vital nugget.
    beta, allowance : float, keyword-only
        As :func:`nugget_scores`.
    match : {'threshold', 'fraction'}, keyword-only
        A nugget counts 1 when at least ``threshold`` of its content terms occur in the text
        ('threshold'), or counts that share ('fraction', a soft count).
    threshold : float, keyword-only
        In (0, 1]; default 0.6.
    stem : bool, keyword-only
        Porter-stem terms as ROUGE-1.5.5 ``-m``.

    Returns
    -------
    NuggetScoresResult
        ``length`` is the text's non-whitespace characters (``<t>`` tags ignored).
    """
    beta, allowance = _check_beta(beta, allowance)
    matcher = NuggetMatcher(match=match, threshold=threshold, stem=stem)
    key = read_columns(nuggets, required=("input", "nugget"), param="nuggets")
    inputs, descriptions = key.labels("input"), key.texts("nugget")
    importance = key.labels("importance") if key.has("importance") else ["vital"] * len(key)
    by_input: dict[str, list[tuple[str, bool]]] = {}
    unmatchable = 0
    for row, doc, text, kind in zip(key.rows, inputs, descriptions, importance):
        kind = kind.lower()
        if kind not in IMPORTANCE:
            raise InputFileError(key.path, f"the cell must be one of 'vital', 'okay'; got {kind!r}.", row=int(row),
                                 column="importance")
        if not matcher.terms(text):
            unmatchable += 1
            continue
        by_input.setdefault(doc, []).append((text, kind == "vital"))
    responses = read_columns(texts, required=("system", "input", "text"), param="texts")
    rows = []
    for row, system, doc, text in zip(responses.rows, responses.labels("system"), responses.labels("input"),
                                      responses.texts("text")):
        answer_key = by_input.get(doc, [])
        vital = np.array([v for _, v in answer_key], dtype=bool)
        if not vital.any():
            raise InputFileError(responses.path, f"every input must have a vital nugget with a content word in "
                                 f"the answer key; got none for {doc!r}.", row=int(row), column="input")
        credit = matcher.credits(matcher.overlaps([t for t, _ in answer_key], text))
        rows.append({"system": system, "input": doc, "vital_matched": float(credit[vital].sum()),
                     "okay_matched": float(credit[~vital].sum()), "vital_total": float(vital.sum()),
                     "length": float(response_length(text))})
    frame = pd.DataFrame(rows)
    _check_unique(frame, responses)
    return _result(frame, beta, allowance, "matcher", unmatchable, **_files(nuggets=nuggets, texts=texts),
                   **matcher.signature_fields())


def litepyramid_nuggets(result: Any, texts: Mapping[tuple[str, str], str], *, beta: float = defaults.NUGGET_BETA,
                        allowance: float = defaults.NUGGET_ALLOWANCE) -> NuggetScoresResult:
    """Nugget F(beta) from the crowd's SCU matches behind a LitePyramid score.

    Every scored SCU of a summary is a vital nugget (``vital_total = n_scus``), the SCUs the worker majority
    found present are the matched ones (``vital_matched = n_present``); there are no okay nuggets.

    Parameters
    ----------
    result : LitePyramidResult
        From :func:`metaeval.human.litepyramid`.
    texts : mapping (document, system) -> str
        The summaries (``PyramidAnnotations.texts``), for their lengths.
    beta, allowance : float, keyword-only
        As :func:`nugget_scores`.
    """
    beta, allowance = _check_beta(beta, allowance)
    summaries = getattr(result, "summaries", None)
    if not isinstance(summaries, pd.DataFrame):
        raise ParameterError(f"`result` must be a LitePyramidResult; got {type(result).__name__}.")
    summaries = summaries[summaries["n_scus"] > 0]
    missing = [(d, s) for d, s in zip(summaries["document"], summaries["system"]) if (d, s) not in texts]
    if missing:
        raise ParameterError(f"`texts` must hold every annotated summary; got none for (document, system) {missing[0]!r}.")
    frame = pd.DataFrame({
        "system": summaries["system"].to_numpy(), "input": summaries["document"].to_numpy(),
        "vital_matched": summaries["n_present"].to_numpy(float), "okay_matched": 0.0,
        "vital_total": summaries["n_scus"].to_numpy(float),
        "length": [float(response_length(texts[(d, s)])) for d, s in zip(summaries["document"], summaries["system"])],
    })
    return _result(frame, beta, allowance, "litepyramid", 0, ties=str(result.ties), worker_filter=result.worker_filter)


def realsumm_nugget_tables(directory: Any, scores_path: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """REALSumm as an answer key and responses for :func:`match_nuggets`.

    Parameters
    ----------
    directory : path
        The ``human_annotations`` folder (``selected_documents.md``, ``SCUs_and_annotations/SCUs_list.csv``).
    scores_path : path
        ``realsumm_scores.jsonl`` (the summaries).

    Returns
    -------
    (nuggets, texts) : two pandas.DataFrame
        ``nuggets``: ``input`` (REALSumm ``doc_id``), ``nugget`` (the SCU), ``importance`` (every SCU 'vital':
        REALSumm's SCUs carry no weight); ``texts``: ``system``, ``input``, ``text``, the 24 systems of the
        packaged ``realsumm`` dataset (the abstractive ``bart_out``, a copy of the extractive one, left out).
    """
    from pathlib import Path

    from ..data.texts import label_field, read_records, text_field
    from ..human.annotations import read_scu_list
    from ..human.realsumm import read_selected_documents

    directory = Path(directory)
    documents = read_selected_documents(directory / "selected_documents.md")
    scus = read_scu_list(directory / "SCUs_and_annotations" / "SCUs_list.csv", documents=documents)
    scus = scus[~scus["blank"].astype(bool)]
    nuggets = pd.DataFrame({"input": scus["document"].to_numpy(), "nugget": scus["text"].to_numpy(),
                            "importance": "vital"})
    rows = []
    for row, record in read_records(scores_path):
        system = label_field(scores_path, row, record, "system_id")
        if label_field(scores_path, row, record, "split") == "abs" and system == "bart_out":
            continue
        rows.append({"system": system, "input": label_field(scores_path, row, record, "doc_id"),
                     "text": text_field(scores_path, row, record, "summary")})
    return nuggets, pd.DataFrame(rows)
