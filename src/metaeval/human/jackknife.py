"""Jackknifing over references: humans and systems scored on equal footing (Lin 2004; DUC practice).

With ``M`` human reference summaries of a document, a system summary ``c`` is scored ``M`` times, each
time against the ``M - 1`` references left after removing one, and the ``M`` scores are averaged:

``J(c) = (1 / M) sum_{j=1..M} s(c, R \\ {r_j})``.

A human reference ``r_j`` used as a peer is scored against the other ``M - 1``: ``J(r_j) = s(r_j, R \\ {r_j})``.
Every score is then against ``M - 1`` references, so humans and systems can be ranked together (how far
above the systems are the humans?). A peer's score is the mean of its per-document jackknifed scores.

``s`` is any scorer with ``score(candidate, references)`` (a :class:`metaeval.metrics.Scorer`, e.g.
ROUGE-1.5.5 :class:`metaeval.metrics.Rouge`) and ``measure`` one of its flattened scores
(``'rouge-2.recall'``). Scorers whose multi-reference statistics are the sum of per-reference ones (ROUGE
with ``multi_reference='average'``, ``-f A``: they expose ``statistics``, ``scores`` and
``multi_reference``) are scored once per (peer, reference) and the subsets re-aggregated, which gives the
same numbers as scoring every subset (the tests check it).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..data.scoreset import ScoreSet
from ..data.texts import label_field, read_records, text_field, texts_field
from ..errors import InputFileError, ParameterError, check_int
from ..serialization import ResultMixin
from ..serialization import plain as _plain
from ..signature import Signature

__all__ = ["JackknifeResult", "MeasuredScorer", "jackknife_scores", "read_summary_texts", "reference_labels"]


def reference_labels(m: int) -> tuple[str, ...]:
    """Labels of the ``m`` references of every document as peers: ``'ref0' .. 'ref{m-1}'`` (list order)."""
    return tuple(f"ref{j}" for j in range(m))


def read_summary_texts(path: str | Path, *, n_documents: int | None = None):
    """System summaries and human references from a SummEval-style JSON Lines file.

    Parameters
    ----------
    path : str or Path
        One line per (system, document): ``{"doc_id", "system_id", "summary", "references": [...]}``
        (the format of ``summeval/texts.jsonl``); the references of a document are its human summaries,
        the same list on each of its lines.
    n_documents : int, optional
        Keep only the first ``n_documents`` documents, in file order.

    Returns
    -------
    (candidates, references)
        ``candidates[system][document]`` and ``references[document]`` (a list).

    Raises
    ------
    InputFileError
        A missing or malformed field, a repeated (system, document), or two lines of one document with
        different references (file, line and field named).
    """
    if n_documents is not None:
        n_documents = check_int("n_documents", n_documents, minimum=1)
    candidates: dict[str, dict[str, str]] = {}
    references: dict[str, list[str]] = {}
    for row, record in read_records(path):
        doc = label_field(path, row, record, "doc_id")
        if doc not in references and n_documents is not None and len(references) == n_documents:
            continue
        system = label_field(path, row, record, "system_id")
        refs = texts_field(path, row, record, "references")
        if references.setdefault(doc, refs) != refs:
            raise InputFileError(path, f"the references of document {doc!r} must be the same on each of its"
                                       " lines; got a different list.", row=row, column="references")
        cells = candidates.setdefault(system, {})
        if doc in cells:
            raise InputFileError(path, f"(system_id, doc_id) must be unique; got {(system, doc)!r} again.", row=row)
        cells[doc] = text_field(path, row, record, "summary")
    return candidates, references


class MeasuredScorer:
    """One measure of a scorer, ``s(candidate, references)``, with per-reference pooling when the scorer's
    multi-reference statistics are sums (see the module docstring)."""

    def __init__(self, scorer: Any, measure: str):
        if not callable(getattr(scorer, "score", None)):
            raise ParameterError(f"`scorer` must have a score(candidate, references) method; got {scorer!r}.")
        if not isinstance(measure, str) or not measure:
            raise ParameterError(f"`measure` must be the name of one of the scorer's scores; got {measure!r}.")
        self.scorer = scorer
        self.measure = measure
        self.pooled = (getattr(scorer, "multi_reference", None) == "average"
                       and callable(getattr(scorer, "statistics", None)) and callable(getattr(scorer, "scores", None)))

    @property
    def signature(self) -> str:
        """The scorer's settings as one signature field (``key=value`` pairs, without its version)."""
        signature = getattr(self.scorer, "signature", None)
        fields = getattr(signature, "fields", None)
        if fields is not None:
            return " ".join(f"{k}={v}" for k, v in fields)
        return str(signature) if signature is not None else type(self.scorer).__name__

    def value(self, scores: Mapping[str, Any]) -> float:
        """``measure`` of a ``score()`` result: a flat key, or ``'outer.inner'`` of a nested mapping."""
        if self.measure in scores and not isinstance(scores[self.measure], Mapping):
            return float(scores[self.measure])
        for key, inner in scores.items():
            if isinstance(inner, Mapping) and self.measure.startswith(f"{key}."):
                rest = self.measure[len(key) + 1:]
                if rest in inner:
                    return float(inner[rest])
        names = [f"{k}.{i}" if isinstance(v, Mapping) else k for k, v in scores.items()
                 for i in (v if isinstance(v, Mapping) else [None])]
        raise ParameterError(f"`measure` must be one of the scorer's scores ({', '.join(names)}); got {self.measure!r}.")

    def score(self, candidate: str, references: Sequence[str]) -> float:
        """``s(candidate, references)``."""
        return self.value(self.scorer.score(candidate, list(references)))

    def leave_one_out(self, candidate: str, references: Sequence[str], skip: int | None = None) -> np.ndarray:
        """``s(candidate, R \\ {r_j})`` for every ``j`` (or only ``j = skip``: a one-element array)."""
        held = range(len(references)) if skip is None else [skip]
        if not self.pooled:
            return np.array([self.score(candidate, [r for i, r in enumerate(references) if i != j]) for j in held])
        stats = [self.scorer.statistics(candidate, [r]) for r in references]
        out = []
        for j in held:
            kept = [s for i, s in enumerate(stats) if i != j]
            totals = {}
            for name in kept[0].counts:
                total = kept[0].counts[name]
                for s in kept[1:]:
                    total = total + s.counts[name]  # in reference order, as the scorer itself sums
                totals[name] = total
            out.append(self.value(self.scorer.scores(type(kept[0])(totals))))
        return np.array(out, dtype=np.float64)


@dataclass(frozen=True)
class JackknifeResult(ResultMixin):
    """Jackknifed scores of systems and of each human reference as a peer.

    Attributes
    ----------
    scoreset : ScoreSet
        Peers (systems, then ``ref0 .. ref{M-1}``) x documents, one scorer named ``measure``.
    peers : pandas.DataFrame
        One row per peer, best first: ``peer``, ``kind`` ('system' or 'human'), ``score`` (mean over
        documents), ``rank`` (1 = best, ties share the lower rank), ``n_documents``.
    measure : str
    n_references : int
        ``M``; every score is against ``M - 1`` references.
    n_systems_below_humans : int
        Systems whose score is below every human's.
    signature : Signature
    """

    scoreset: ScoreSet = field(metadata={"serialize": "exclude"})
    peers: pd.DataFrame
    measure: str
    n_references: int
    n_systems_below_humans: int
    signature: Signature

    @property
    def statistic(self) -> np.ndarray:
        """The peers' scores, in ``peers`` order."""
        return self.peers["score"].to_numpy()

    def frame_rows(self) -> list[dict[str, Any]]:
        return self.peers.to_dict(orient="records")

    def to_dict(self) -> dict[str, Any]:
        return {"measure": self.measure, "n_references": self.n_references,
                "n_systems_below_humans": self.n_systems_below_humans, "peers": records(self.peers),
                "signature": str(self.signature)}


def mean_tokens(candidates: Mapping[str, Mapping[str, str]], references: Mapping[str, Sequence[str]],
                m: int) -> np.ndarray:
    """Mean length in whitespace tokens of each system's summaries, then of each reference slot."""
    systems = [np.mean([len(text.split()) for text in cells.values()]) for cells in candidates.values()]
    humans = [np.mean([len(refs[j].split()) for refs in references.values()]) for j in range(m)]
    return np.array(systems + humans, dtype=np.float64)


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as plain JSON types."""
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def _jackknife_iv(candidates, references, scorer, measure):
    measured = MeasuredScorer(scorer, measure)
    if not isinstance(references, Mapping) or not references:
        raise ParameterError(f"`references` must map each document to its human summaries; got {references!r}.")
    sizes = {len(refs) if isinstance(refs, (list, tuple)) else -1 for refs in references.values()}
    if len(sizes) != 1 or min(sizes) < 2:
        raise ParameterError("`references` must hold the same number (>= 2) of human summaries for every document;"
                             f" got {sorted(sizes)!r}.")
    candidates = {} if candidates is None else candidates
    if not isinstance(candidates, Mapping):
        raise ParameterError(f"`candidates` must map each system to {{document: summary}}; got {candidates!r}.")
    for system, cells in candidates.items():
        if not isinstance(cells, Mapping) or not cells:
            raise ParameterError(f"`candidates` must map system {system!r} to a non-empty {{document: summary}};"
                                 f" got {cells!r}.")
        unknown = [d for d in cells if d not in references]
        if unknown:
            raise ParameterError(f"`candidates` must summarize documents of `references`; got {unknown[0]!r}"
                                 f" for system {system!r}.")
    return dict(candidates), dict(references), measured, sizes.pop()


def jackknife_scores(candidates: Mapping[str, Mapping[str, str]] | None, references: Mapping[str, Sequence[str]],
                     *, scorer: Any, measure: str) -> JackknifeResult:
    """Jackknifed scores of systems and of human references over ``M - 1``-reference subsets.

    Parameters
    ----------
    candidates : mapping or None
        ``candidates[system][document]``: the system summaries (None: humans only).
    references : mapping
        ``references[document]``: the ``M >= 2`` human summaries of each document (same ``M`` for all;
        the ``j``-th is the peer ``ref{j}``).
    scorer : Scorer
        Any object with ``score(candidate, references)``, e.g. ``metaeval.metrics.Rouge(n=2)``.
    measure : str
        One of its flattened scores, e.g. ``'rouge-2.recall'``.

    Returns
    -------
    JackknifeResult

    Raises
    ------
    ParameterError
        Unequal or fewer than 2 references, an unknown measure or document, a scorer without ``score``.

    Notes
    -----
    System ``c``: ``J(c) = (1 / M) sum_j s(c, R \\ {r_j})``; human ``r_j``: ``J(r_j) = s(r_j, R \\ {r_j})``.
    A peer's score is the mean of ``J`` over the documents it summarized.

    References
    ----------
    C.-Y. Lin (2004). ROUGE: A Package for Automatic Evaluation of Summaries. ACL Workshop Text
    Summarization Branches Out (section 2: jackknifing over references, as in DUC).
    B. Kolluru, Y. Gotoh (2005). On the Subjectivity of Human Authored Summaries. ACL-05 Workshop on
    Intrinsic and Extrinsic Evaluation Measures for MT and/or Summarization (human summaries scored
    against each other: :func:`metaeval.human.cross_comprehension`).

    Examples
    --------
    >>> from metaeval.metrics import Rouge
    >>> refs = {"d1": ["the cat sat", "a cat sat down", "the dog ran"]}
    >>> result = jackknife_scores({"sys": {"d1": "the cat ran"}}, refs, scorer=Rouge(n=1), measure="rouge-1.recall")
    >>> result.peers[["peer", "score"]].round(4).to_dict(orient="list")
    {'peer': ['sys', 'ref0', 'ref1', 'ref2'], 'score': [0.5079, 0.4286, 0.3333, 0.1429]}
    """
    candidates, references, measured, m = _jackknife_iv(candidates, references, scorer, measure)
    documents = list(references)
    humans = reference_labels(m)
    peers = list(candidates) + list(humans)
    scores = np.full((len(peers), len(documents)), np.nan)
    for d, doc in enumerate(documents):
        refs = list(references[doc])
        for i, system in enumerate(candidates):
            if doc in candidates[system]:
                scores[i, d] = measured.leave_one_out(candidates[system][doc], refs).mean()
        for j in range(m):
            scores[len(candidates) + j, d] = measured.leave_one_out(refs[j], refs, skip=j)[0]
    kinds = ["system"] * len(candidates) + ["human"] * m
    table = pd.DataFrame({"peer": peers, "kind": kinds, "score": np.nanmean(scores, axis=1),
                          "n_documents": (~np.isnan(scores)).sum(axis=1),
                          "mean_tokens": mean_tokens(candidates, references, m)})
    table = table.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    table.insert(3, "rank", table["score"].rank(ascending=False, method="min").astype(int))
    lowest_human = table.loc[table["kind"] == "human", "score"].min()
    below = int((table.loc[table["kind"] == "system", "score"] < lowest_human).sum())
    signature = Signature.of(statistic="jackknife", measure=measure, references=m, systems=len(candidates),
                             documents=len(documents), scorer=measured.signature)
    scoreset = ScoreSet.from_matrices({measure: scores}, systems=peers, inputs=documents, name="jackknife")
    return JackknifeResult(scoreset, table, measure, m, below, signature)
