"""Cross-comprehension of human summaries (Kolluru & Gotoh 2005): how much of one author's content the
other authors' summaries hold.

Kolluru & Gotoh had each of four authors write a short summary of every story plus 2-4 questions that
the summary answers, then *crossed* them: every summary was asked the other authors' questions, and a
judge labelled each answer *relevant*, *partially relevant*, *irrelevant* or *not found*. Two views of
the same judgments (their Figure 2):

- **summary relevance** of author ``a``: the share of the other authors' questions answered by ``a``'s
  summaries (row view);
- **questionnaire relevance** of author ``b``: the share of ``b``'s questions answered by the other
  authors' summaries (column view).

The overall share (61% relevant or partially relevant in their study) is the level a machine summary,
asked the same questions, can be compared with (their section 6). :func:`cross_comprehension_labels`
computes these shares from such judgments. :func:`cross_comprehension` is the automatic analogue for
data without questions: the judge is a metric (ROUGE recall is the share of the other summary's
content units found), ``x(a, b) = s(summary_a, [summary_b])`` for every ordered pair of authors of a
document, aggregated the same two ways; a system summary ``c`` gets ``mean_b s(c, [summary_b])``, the
mean over every author, comparable with the humans' mean over the other authors.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.formats import file_format, read_table
from ..errors import InputFileError, ParameterError
from ..serialization import ResultMixin
from ..signature import Signature
from ..serialization import plain as _plain
from .jackknife import _jackknife_iv, mean_tokens, records, reference_labels

__all__ = ["LABELS", "CrossComprehensionLabelsResult", "CrossComprehensionResult", "cross_comprehension",
           "cross_comprehension_labels", "read_cross_judgments"]

LABELS = ("relevant", "partial", "irrelevant", "not-found")
"""The judge's four options (Kolluru & Gotoh 2005, section 4), as the ``label`` column spells them."""
JUDGMENT_COLUMNS = ("document", "summary", "questions", "label")


@dataclass(frozen=True)
class CrossComprehensionResult(ResultMixin):
    """Cross-comprehension of human summaries under a metric.

    Attributes
    ----------
    matrix : pandas.DataFrame
        ``M x M``: row ``a`` (summary author), column ``b`` (questions, i.e. reference, author), the mean
        over documents of ``s(summary_a, [summary_b])``; NaN diagonal.
    per_document : numpy.ndarray
        ``(documents, M, M)``: the same before the mean.
    peers : pandas.DataFrame
        One row per human (then per system), best first: ``peer``, ``kind``, ``summary_relevance`` (humans:
        row mean over the other authors; systems: mean over every author), ``questionnaire_relevance``
        (humans: column mean; NaN for systems), ``mean_tokens`` (mean length in whitespace tokens: the paper
        finds the share of answers found roughly proportional to summary length), ``rank`` by summary
        relevance.
    human_level : float
        Mean of every off-diagonal ``x(a, b)``: the level a system is compared with.
    measure : str
    documents : tuple of str
    signature : Signature
    """

    matrix: pd.DataFrame
    per_document: np.ndarray
    peers: pd.DataFrame
    human_level: float
    measure: str
    documents: tuple[str, ...]
    signature: Signature

    @property
    def statistic(self) -> float:
        """:attr:`human_level`."""
        return self.human_level

    def frame_rows(self) -> list[dict[str, Any]]:
        return self.peers.to_dict(orient="records")

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "human_level": self.human_level, "documents": len(self.documents),
                "matrix": {a: {b: _plain(v) for b, v in row.items()} for a, row in self.matrix.to_dict("index").items()},
                "peers": records(self.peers), "signature": str(self.signature)}


def cross_comprehension(references: Mapping[str, Sequence[str]], *, scorer: Any, measure: str,
                        candidates: Mapping[str, Mapping[str, str]] | None = None) -> CrossComprehensionResult:
    """Score every human summary against each other author's summary, and aggregate both ways.

    Parameters
    ----------
    references : mapping
        ``references[document]``: the ``M >= 2`` human summaries of each document (same ``M``; the ``j``-th
        is the author ``ref{j}``).
    scorer : Scorer
        Any object with ``score(candidate, references)``, e.g. ``metaeval.metrics.Rouge(n=2)``.
    measure : str
        One of its flattened scores; a recall (``'rouge-2.recall'``) reads as "share of the other
        author's content found", the analogue of a question answered.
    candidates : mapping, optional
        ``candidates[system][document]``: system summaries, scored against every author.

    Returns
    -------
    CrossComprehensionResult

    Raises
    ------
    ParameterError
        As :func:`metaeval.human.jackknife_scores`.

    Notes
    -----
    ``x_d(a, b) = s(r_a, [r_b])`` for ``a != b``; summary relevance ``S(a) = mean_{d, b != a} x_d(a, b)``;
    questionnaire relevance ``Q(b) = mean_{d, a != b} x_d(a, b)``; ``human_level = mean_{d, a != b}
    x_d(a, b)``; a system ``c``: ``S(c) = mean_{d, b} s(c, [r_b])``.

    References
    ----------
    B. Kolluru, Y. Gotoh (2005). On the Subjectivity of Human Authored Summaries. ACL-05 Workshop on
    Intrinsic and Extrinsic Evaluation Measures for MT and/or Summarization, 9-16.

    Examples
    --------
    >>> from metaeval.metrics import Rouge
    >>> refs = {"d1": ["the cat sat", "a cat sat down", "the dog ran"]}
    >>> result = cross_comprehension(refs, scorer=Rouge(n=1), measure="rouge-1.recall")
    >>> result.matrix.round(3).values.tolist()   # row: summary author, column: reference author
    [[nan, 0.5, 0.333], [0.667, nan, 0.0], [0.333, 0.0, nan]]
    >>> round(result.human_level, 4)
    0.3056
    """
    candidates, references, measured, m = _jackknife_iv(candidates, references, scorer, measure)
    documents = tuple(references)
    humans = reference_labels(m)
    per_document = np.full((len(documents), m, m), np.nan)
    systems = np.full((len(candidates), len(documents), m), np.nan)
    for d, doc in enumerate(documents):
        refs = list(references[doc])
        for a in range(m):
            for b in range(m):
                if a != b:
                    per_document[d, a, b] = measured.score(refs[a], [refs[b]])
        for i, system in enumerate(candidates):
            if doc in candidates[system]:
                systems[i, d] = [measured.score(candidates[system][doc], [r]) for r in refs]
    off = ~np.eye(m, dtype=bool)
    matrix = np.full((m, m), np.nan)
    matrix[off] = per_document[:, off].mean(axis=0)
    summary = np.array([matrix[a, off[a]].mean() for a in range(m)])
    questions = np.array([matrix[off[:, b], b].mean() for b in range(m)])
    system_level = np.array([np.nanmean(systems[i]) for i in range(len(candidates))])
    table = pd.DataFrame({
        "peer": list(humans) + list(candidates),
        "kind": ["human"] * m + ["system"] * len(candidates),
        "summary_relevance": np.concatenate([summary, system_level]),
        "questionnaire_relevance": np.concatenate([questions, np.full(len(candidates), np.nan)]),
        "mean_tokens": np.roll(mean_tokens(candidates, references, m), m),
    }).sort_values("summary_relevance", ascending=False, kind="stable").reset_index(drop=True)
    table["rank"] = table["summary_relevance"].rank(ascending=False, method="min").astype(int)
    frame = pd.DataFrame(matrix, index=pd.Index(humans, name="summary"), columns=list(humans))
    signature = Signature.of(statistic="cross-comprehension", measure=measure, references=m,
                             systems=len(candidates), documents=len(documents), scorer=measured.signature)
    return CrossComprehensionResult(frame, per_document, table, float(matrix[off].mean()), measure, documents,
                                    signature)


@dataclass(frozen=True)
class CrossComprehensionLabelsResult(ResultMixin):
    """Shares of the judge's labels in a cross-comprehension test (Kolluru & Gotoh 2005, Figure 2).

    Attributes
    ----------
    summaries : pandas.DataFrame
        One row per summary author (Figure 2a): ``author``, ``n_questions`` asked of their summaries,
        ``relevant``, ``partial``, ``irrelevant``, ``not-found`` (shares), ``relevant_or_partial``,
        ``found`` (relevant, partial or irrelevant: an answer was found).
    questionnaires : pandas.DataFrame
        The same per question author (Figure 2b).
    overall : dict
        The shares over every judged question.
    n_judgments : int
    signature : Signature
    """

    summaries: pd.DataFrame
    questionnaires: pd.DataFrame
    overall: dict
    n_judgments: int
    signature: Signature

    @property
    def statistic(self) -> float:
        """The overall share of relevant or partially relevant answers."""
        return self.overall["relevant_or_partial"]

    def frame_rows(self) -> list[dict[str, Any]]:
        rows = [{"view": "summary", **r} for r in self.summaries.to_dict(orient="records")]
        rows += [{"view": "questions", **r} for r in self.questionnaires.to_dict(orient="records")]
        return rows + [{"view": "overall", "author": "all", **self.overall}]

    def to_dict(self) -> dict[str, Any]:
        return {"summaries": records(self.summaries), "questionnaires": records(self.questionnaires),
                "overall": {k: _plain(v) for k, v in self.overall.items()}, "n_judgments": self.n_judgments,
                "signature": str(self.signature)}


def _shares(frame: pd.DataFrame, by: str | None) -> pd.DataFrame | dict:
    def one(labels: pd.Series) -> dict:
        n = len(labels)
        shares = {label: float((labels == label).sum() / n) for label in LABELS}
        shares["relevant_or_partial"] = shares["relevant"] + shares["partial"]
        shares["found"] = 1.0 - shares["not-found"]
        return {"n_questions": n, **shares}

    if by is None:
        return one(frame["label"])
    rows = [{"author": author, **one(group["label"])} for author, group in frame.groupby(by, sort=True)]
    return pd.DataFrame(rows)


def _labels_iv(judgments) -> pd.DataFrame:
    if not isinstance(judgments, pd.DataFrame):
        raise ParameterError(f"`judgments` must be a pandas DataFrame; got {type(judgments).__name__}.")
    missing = [c for c in JUDGMENT_COLUMNS if c not in judgments.columns]
    if missing:
        raise ParameterError(f"`judgments` must have the columns {', '.join(JUDGMENT_COLUMNS)}; got no {missing[0]!r}.")
    frame = judgments[list(JUDGMENT_COLUMNS)].astype({"summary": str, "questions": str}).copy()
    if frame.empty:
        raise ParameterError("`judgments` must hold at least one judged question; got none.")
    frame["label"] = frame["label"].astype(str).str.strip().str.lower()
    bad = ~frame["label"].isin(LABELS)
    if bad.any():
        listed = ", ".join(repr(x) for x in LABELS)
        raise ParameterError(f"`label` must be one of {listed}; got {judgments['label'][bad].iloc[0]!r}.")
    same = frame["summary"] == frame["questions"]
    if same.any():
        raise ParameterError("`judgments` must cross summaries and questions of different authors; got"
                             f" author {frame['summary'][same].iloc[0]!r} asked their own questions.")
    return frame


def cross_comprehension_labels(judgments: pd.DataFrame) -> CrossComprehensionLabelsResult:
    """Shares of relevant / partial / irrelevant / not-found answers per summary and per question author.

    Parameters
    ----------
    judgments : pandas.DataFrame
        One row per question asked of a crossed summary: ``document``, ``summary`` (its author, or a
        system), ``questions`` (the question's author), ``label`` (one of :data:`LABELS`).

    Returns
    -------
    CrossComprehensionLabelsResult

    Raises
    ------
    ParameterError
        A missing column, an unknown label, no rows, or an author asked their own questions.

    Notes
    -----
    For an author ``a``, ``relevant(a) = #{questions of others labelled relevant on a's summaries} /
    #{questions of others asked of a's summaries}``, and likewise for each label; ``relevant_or_partial``
    and ``found = 1 - not-found`` are the paper's 47% / 61% / 65% kind of figures.

    References
    ----------
    B. Kolluru, Y. Gotoh (2005). On the Subjectivity of Human Authored Summaries. ACL-05 Workshop on
    Intrinsic and Extrinsic Evaluation Measures for MT and/or Summarization, 9-16 (sections 4-5).
    """
    source = judgments.attrs.get("source") if isinstance(judgments, pd.DataFrame) else None
    frame = _labels_iv(judgments)
    signature = Signature.of(statistic="cross-comprehension-labels", **({"source": source} if source else {}),
                             judgments=len(frame),
                             documents=int(frame["document"].nunique()), authors=int(frame["summary"].nunique()))
    return CrossComprehensionLabelsResult(_shares(frame, "summary"), _shares(frame, "questions"),
                                          _shares(frame, None), len(frame), signature)


def read_cross_judgments(path) -> pd.DataFrame:
    """Judged questions from a file (CSV, TSV, JSON Lines or Parquet by extension).

    Columns ``document``, ``summary`` (author of the summary asked), ``questions`` (author of the
    question), ``label`` (one of :data:`LABELS`), one row per question; other columns are ignored.

    Raises
    ------
    InputFileError
        A missing column, an empty cell or an unknown label (file, row and column named).
    """
    table = read_table(path, file_format(path))
    missing = [c for c in JUDGMENT_COLUMNS if c not in table.columns]
    if missing:
        raise InputFileError(path, f"the file must have the columns {', '.join(JUDGMENT_COLUMNS)}; got"
                                   f" {', '.join(table.columns)}.")
    columns = {}
    for name in JUDGMENT_COLUMNS:
        values = []
        for row, value in zip(table.rows, table.columns[name]):
            text = "" if value is None else str(value).strip()
            if not text:
                raise InputFileError(path, f"every row must have a {name}; got an empty cell.", row=int(row),
                                     column=name)
            if name == "label" and text.lower() not in LABELS:
                listed = ", ".join(repr(x) for x in LABELS)
                raise InputFileError(path, f"a label must be one of {listed}; got {text!r}.", row=int(row),
                                     column=name)
            values.append(text)
        columns[name] = values
    if not columns["label"]:
        raise InputFileError(path, "the file must hold at least one judged question; got none.")
    frame = pd.DataFrame(columns)
    frame.attrs["source"] = Path(str(path)).name  # the signature's `source` (issue 41: a signature names its data)
    return frame
