"""LitePyramid scores from raw present / absent votes (Shapira et al. 2019, as used by REALSumm).

For every summary s of document d and every non-BLANK SCU u of d, the workers' votes give a majority
``present(s, u) = 1`` if more votes say present than absent, 0 if fewer, and the ``ties`` value on a tie
('absent' = 0 by default, as in REALSumm; 'present' = 1; 'half' = 1/2). The summary's LitePyramid recall
is ``score(s) = sum_u present(s, u) / U(s)``, U(s) the document's non-BLANK SCUs that received at least
one vote on s (every SCU of the document, in complete annotations).

Before the vote, when the votes carry worker ids, the noisiest worker of each document may be dropped
(Bhandari et al. 2020, sec. 3.3): the worker whose votes on the document's summaries disagree with the
all-workers majority on the most SCUs (ties: the higher share of disagreeing votes, then the first worker
id in sorted order). A worker is only dropped if every summary they voted on keeps at least two votes;
otherwise no worker of that document is dropped, and the reason is recorded.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import defaults
from ..data.scoreset import ScoreSet
from ..errors import DegenerateWarning, ParameterError, check_choice
from ..serialization import EXCLUDED, RECORDS, ResultMixin
from ..signature import Signature
from .annotations import PyramidAnnotations, natural_key

TIES = {"absent": 0.0, "present": 1.0, "half": 0.5}
WORKER_FILTERS = ("auto", "drop-noisiest", "none")
SCORER = "litepyramid.recall"


@dataclass(frozen=True)
class LitePyramidResult(ResultMixin):
    """LitePyramid recall of every annotated summary.

    Attributes
    ----------
    scoreset : ScoreSet
        Systems x documents, one human scorer ``litepyramid.recall``; NaN where a system has no
        annotated summary of a document.
    summaries : pandas.DataFrame
        One row per summary: ``document``, ``system``, ``n_votes`` (assignments kept), ``n_scus``
        (scored SCUs), ``n_unjudged`` (non-BLANK SCUs of the document without a vote), ``n_present``,
        ``n_ties``, ``score``.
    dropped_workers : pandas.DataFrame
        One row per document where the filter ran: ``document``, ``worker`` (None if none dropped),
        ``disagreements``, ``reason``.
    worker_filter : str
        'drop-noisiest' or 'none': what was applied.
    ties : str
        'absent', 'present' or 'half'.
    signature : Signature
    """

    scoreset: ScoreSet = field(metadata=EXCLUDED)
    summaries: pd.DataFrame = field(metadata=RECORDS)
    dropped_workers: pd.DataFrame = field(metadata=RECORDS)
    worker_filter: str
    ties: str
    signature: Signature

    @property
    def statistic(self) -> np.ndarray:
        """The systems x documents matrix of scores."""
        return self.scoreset.matrix(SCORER)

    def to_frame(self) -> pd.DataFrame:
        return self.summaries.copy()

    def to_dict(self) -> dict[str, Any]:
        """The fields (the settings first), led by the scorer's name."""
        out = super().to_dict()
        return {"scorer": SCORER, **{k: out[k] for k in ("worker_filter", "ties", "summaries", "dropped_workers",
                                                        "signature")}}


@dataclass(frozen=True)
class PyramidMatch(ResultMixin):
    """Agreement of rebuilt scores with a reference scorer, cell by cell.

    ``n_compared`` cells present in both, ``n_matched`` equal within ``atol``, ``rate`` =
    ``n_matched / n_compared``; ``cells`` lists every compared cell (``system``, ``document``,
    ``score``, ``reference``, ``match``); ``not_in_reference`` the rebuilt systems the reference lacks.
    """

    n_compared: int
    n_matched: int
    rate: float
    atol: float
    cells: pd.DataFrame = field(metadata=EXCLUDED)  # the table of to_frame
    not_in_reference: tuple[str, ...]
    signature: Signature

    def to_frame(self) -> pd.DataFrame:
        return self.cells.copy()


def _litepyramid_iv(annotations, worker_filter, ties):
    if not isinstance(annotations, PyramidAnnotations):
        raise ParameterError(f"`annotations` must be PyramidAnnotations; got {type(annotations).__name__}.")
    worker_filter = check_choice("worker_filter", worker_filter, WORKER_FILTERS)
    ties = check_choice("ties", ties, tuple(TIES))
    if worker_filter == "drop-noisiest" and not annotations.has_workers:
        raise ParameterError("`worker_filter` must be 'auto' or 'none' for votes without worker ids; got"
                             " 'drop-noisiest'.")
    if worker_filter == "auto":
        worker_filter = "drop-noisiest" if annotations.has_workers else "none"
    return annotations, worker_filter, ties


def majority(votes: pd.DataFrame, ties: str = defaults.LITEPYRAMID_TIES) -> pd.DataFrame:
    """Majority per (document, system, scu) of non-missing votes: columns ``n_votes``, ``n_present``,
    ``present`` (1, 0, or the ``ties`` value), ``tie``."""
    valid = votes[~votes["vote"].isna()]
    grouped = valid.groupby(["document", "system", "scu"], sort=False)["vote"]
    out = grouped.agg(n_votes="size", n_present="sum").reset_index()
    n_absent = out["n_votes"] - out["n_present"]
    out["tie"] = out["n_present"] == n_absent
    out["present"] = np.where(out["n_present"] > n_absent, 1.0, np.where(out["tie"], TIES[ties], 0.0))
    return out


def filter_workers(annotations: PyramidAnnotations) -> tuple[PyramidAnnotations, pd.DataFrame]:
    """Drop each document's noisiest worker (see the module notes); needs worker ids.

    Returns the kept votes and one row per document: ``document``, ``worker`` (None if none dropped),
    ``disagreements``, ``reason``.
    """
    if not annotations.has_workers:
        raise ParameterError("`annotations` must carry worker ids to drop the noisiest worker; got votes without"
                             " a worker column.")
    votes = annotations.scored_votes()
    votes = votes[~votes["vote"].isna()]
    major = majority(votes, "absent").set_index(["document", "system", "scu"])["present"]
    key = pd.MultiIndex.from_frame(votes[["document", "system", "scu"]])
    disagree = votes["vote"].to_numpy() != major.reindex(key).to_numpy()
    table = votes.assign(disagree=disagree)
    drop: set[tuple[str, str]] = set()
    rows = []
    for doc, group in table.groupby("document", sort=False):
        per = group.groupby("worker").agg(disagreements=("disagree", "sum"), n=("disagree", "size"))
        per["share"] = per["disagreements"] / per["n"]
        per = per.reset_index().sort_values(["disagreements", "share", "worker"], ascending=[False, False, True])
        top = per.iloc[0]
        counts = group.groupby("system")["assignment"].nunique()
        theirs = group.loc[group["worker"] == top["worker"], "system"].unique()
        if len(per) < 2 or int(top["disagreements"]) == 0:
            rows.append((doc, None, int(top["disagreements"]), "no worker disagrees with the majority"))
        elif (counts.loc[theirs] - 1 < 2).any():
            rows.append((doc, None, int(top["disagreements"]),
                         f"dropping {top['worker']} would leave a summary with fewer than 2 votes"))
        else:
            drop.add((doc, top["worker"]))
            rows.append((doc, top["worker"], int(top["disagreements"]), "most disagreements with the majority"))
    all_votes = annotations.votes
    keep = ~pd.Series(list(zip(all_votes["document"], all_votes["worker"]))).isin(drop).to_numpy()
    kept = PyramidAnnotations(all_votes[keep].reset_index(drop=True), annotations.scus, annotations.texts, True,
                              annotations.source)
    dropped = pd.DataFrame(rows, columns=["document", "worker", "disagreements", "reason"])
    return kept, dropped


def litepyramid(annotations: PyramidAnnotations, *, worker_filter: str = defaults.WORKER_FILTER,
                ties: str = defaults.LITEPYRAMID_TIES) -> LitePyramidResult:
    """LitePyramid recall of every summary from present / absent votes.

    Parameters
    ----------
    annotations : PyramidAnnotations
        SCUs and votes (:func:`~metaeval.human.annotations.read_votes`,
        :func:`~metaeval.human.realsumm.read_realsumm_annotations`).
    worker_filter : {'auto', 'drop-noisiest', 'none'}
        'auto' drops each document's noisiest worker when the votes carry worker ids, and nothing
        otherwise; 'drop-noisiest' requires worker ids.
    ties : {'absent', 'present', 'half'}
        Value of an SCU whose votes tie (REALSumm: 'absent').

    Returns
    -------
    LitePyramidResult

    Warns
    -----
    DegenerateWarning
        When a summary has no scored SCU (NaN score) or some non-BLANK SCUs of its document got no vote.

    Notes
    -----
    ``score(s) = (1 / U(s)) sum_u [#present(s, u) > #absent(s, u)]`` over the non-BLANK SCUs u of the
    document, ties valued by ``ties`` (module notes give the worker filter).

    References
    ----------
    Shapira et al. (2019), Crowdsourcing Lightweight Pyramids for Manual Summary Evaluation, NAACL.
    Bhandari et al. (2020), Re-evaluating Evaluation in Text Summarization, EMNLP, sec. 3.3.

    Examples
    --------
    >>> from metaeval.human import litepyramid, read_realsumm_annotations
    >>> ann = read_realsumm_annotations("../shared/data/realsumm/human_annotations")  # doctest: +SKIP
    >>> litepyramid(ann).scoreset.matrix("litepyramid.recall").shape  # doctest: +SKIP
    (25, 100)
    """
    annotations, worker_filter, ties = _litepyramid_iv(annotations, worker_filter, ties)
    if worker_filter == "drop-noisiest":
        annotations, dropped = filter_workers(annotations)
    else:
        dropped = pd.DataFrame(columns=["document", "worker", "disagreements", "reason"])
    votes = annotations.scored_votes()
    major = majority(votes, ties)
    summaries = major.groupby(["document", "system"], sort=False).agg(
        n_scus=("present", "size"), n_present=("present", "sum"), n_ties=("tie", "sum")).reset_index()
    n_votes = votes.groupby(["document", "system"])["assignment"].nunique()
    summaries["n_votes"] = n_votes.reindex(pd.MultiIndex.from_frame(summaries[["document", "system"]])).to_numpy()
    scus = annotations.scus[~annotations.scus["blank"]].groupby("document").size()
    summaries["n_unjudged"] = scus.reindex(summaries["document"]).fillna(0).to_numpy().astype(int) - summaries["n_scus"]
    summaries["score"] = summaries["n_present"] / summaries["n_scus"]
    every = annotations.votes.drop_duplicates(["document", "system"])[["document", "system"]]
    summaries = every.merge(summaries, how="left", on=["document", "system"])
    summaries[["n_scus", "n_ties", "n_votes"]] = summaries[["n_scus", "n_ties", "n_votes"]].fillna(0).astype(int)
    summaries["n_unjudged"] = summaries["n_unjudged"].fillna(0).astype(int)
    summaries = summaries[["document", "system", "n_votes", "n_scus", "n_unjudged", "n_present", "n_ties", "score"]]
    _warn_degenerate(summaries)
    systems = sorted(summaries["system"].unique())
    documents = sorted(summaries["document"].unique(), key=natural_key)
    matrix = (summaries.pivot(index="system", columns="document", values="score")
              .reindex(index=systems, columns=documents).to_numpy(dtype=float))
    signature = Signature.of(human=SCORER, **({"source": annotations.source} if annotations.source else {}),
                             worker_filter=worker_filter, ties=ties, blank="excluded",
                             systems=len(systems), documents=len(documents))
    scoreset = ScoreSet({SCORER: matrix}, systems=systems, inputs=documents, humans=[SCORER], name="litepyramid",
                        description=f"LitePyramid from votes; worker_filter {worker_filter}; ties {ties}")
    summaries = summaries.sort_values(["system", "document"], key=_sort_key).reset_index(drop=True)
    return LitePyramidResult(scoreset, summaries, dropped.reset_index(drop=True), worker_filter, ties, signature)


def _sort_key(column: pd.Series) -> pd.Series:
    if column.name == "document":
        return column.map(natural_key)
    return column


def _warn_degenerate(summaries: pd.DataFrame) -> None:
    empty = summaries[summaries["n_scus"] == 0]
    if len(empty):
        first = empty.iloc[0]
        warnings.warn(f"{len(empty)} summaries have no scored SCU and get a NaN score (the first: system"
                      f" {first['system']!r}, document {first['document']!r}): their document lists only BLANK SCUs"
                      " or every vote is missing.", DegenerateWarning, stacklevel=3)
    partial = summaries[summaries["n_unjudged"] > 0]
    if len(partial):
        first = partial.iloc[0]
        warnings.warn(f"{len(partial)} summaries lack votes on some non-BLANK SCUs of their document; their scores"
                      f" use the judged SCUs only (the first: system {first['system']!r}, document"
                      f" {first['document']!r}, {int(first['n_unjudged'])} SCUs without a vote).",
                      DegenerateWarning, stacklevel=3)


def pyramid_match(result: LitePyramidResult | ScoreSet, reference: ScoreSet, scorer: str, *,
                  atol: float = defaults.PYRAMID_MATCH_ATOL) -> PyramidMatch:
    """Compare rebuilt LitePyramid scores with a reference scorer on the cells both hold.

    Parameters
    ----------
    result : LitePyramidResult or ScoreSet
        The rebuilt scores (scorer ``litepyramid.recall``).
    reference : ScoreSet
        E.g. ``load_dataset("realsumm")``.
    scorer : str
        The reference's scorer, e.g. ``litepyramid.recall``.
    atol : float
        Absolute tolerance of a match.

    Returns
    -------
    PyramidMatch
    """
    rebuilt = result.scoreset if isinstance(result, LitePyramidResult) else result
    if not isinstance(rebuilt, ScoreSet) or SCORER not in rebuilt:
        raise ParameterError(f"`result` must be a LitePyramidResult or a ScoreSet with {SCORER!r}; got"
                             f" {type(result).__name__}.")
    if not isinstance(reference, ScoreSet):
        raise ParameterError(f"`reference` must be a ScoreSet; got {type(reference).__name__}.")
    reference.require(scorer, param="scorer")
    try:
        atol = float(atol)
    except (TypeError, ValueError):
        atol = float("nan")
    if not atol >= 0:
        raise ParameterError(f"`atol` must be a number >= 0; got {atol!r}.")
    ref_sys = {s: i for i, s in enumerate(reference.systems)}
    ref_in = {d: j for j, d in enumerate(reference.inputs)}
    mine = rebuilt.matrix(SCORER)
    theirs = reference.matrix(scorer)
    rows = []
    for i, system in enumerate(rebuilt.systems):
        if system not in ref_sys:
            continue
        for j, doc in enumerate(rebuilt.inputs):
            if doc not in ref_in:
                continue
            a, b = mine[i, j], theirs[ref_sys[system], ref_in[doc]]
            if np.isnan(a) or np.isnan(b):
                continue
            rows.append((system, doc, float(a), float(b), bool(abs(a - b) <= atol)))
    cells = pd.DataFrame(rows, columns=["system", "document", "score", "reference", "match"])
    n = len(cells)
    matched = int(cells["match"].sum()) if n else 0
    missing = tuple(s for s in rebuilt.systems if s not in ref_sys)
    signature = Signature.of(scorer=scorer, reference=reference.name or "user", atol=atol)
    return PyramidMatch(n, matched, matched / n if n else float("nan"), atol, cells, missing, signature)
