"""Reading raw pyramid annotations: SCU lists and present / absent votes on system summaries.

Two file layouts are read for each kind of file (see ``docs/human.md``):

SCU list
    REALSumm's ``SCUs_list.csv`` (columns ``eventId``, ``questionId``, ``questionText``), or the generic
    ``document,scu,text`` with an optional ``blank`` column (``1``/``true`` marks a padding SCU). An SCU
    whose text is ``BLANK`` (any case) is padding: workers were told to mark it "not present", and it
    never counts in a score or an agreement.
Votes
    Amazon Mechanical Turk batch results as REALSumm released them: one row per worker x summary, columns
    ``Input.eventId`` (document), ``Input.summaryId`` (system), ``Input.qIdList`` (the SCU ids shown, in
    order), ``Answer.S1Answer`` ... (``p`` present / ``n`` not present, for the k-th SCU of the list),
    and optionally ``WorkerId``, ``AssignmentId`` and ``Input.summary_text``. Or the generic long layout
    ``document,system,scu,vote`` with optional ``worker`` and ``assignment`` columns. Votes are ``p``,
    ``present``, ``1``, ``yes``, ``y``, ``true`` or ``n``, ``absent``, ``not present``, ``0``, ``no``,
    ``false`` (any case); an empty cell is a missing vote.

Every problem (a missing column, an SCU id not in the list or of another document, a worker voting twice
on one summary, a vote that is neither present nor absent, ...) is one
:class:`~metaeval.errors.InputFileError` naming the file, the row (the header is line 1) and the column.
"""
from __future__ import annotations

import ast
import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
import numpy as np
import pandas as pd

from ..data.formats import read_text
from ..errors import InputFileError, ParameterError

BLANK_TEXT = "BLANK"
PRESENT_TOKENS = frozenset({"p", "present", "1", "yes", "y", "true"})
ABSENT_TOKENS = frozenset({"n", "absent", "not present", "0", "no", "false"})
REALSUMM_SCU_COLUMNS = ("eventId", "questionId", "questionText")
GENERIC_SCU_COLUMNS = ("document", "scu", "text")
MTURK_COLUMNS = ("Input.eventId", "Input.summaryId", "Input.qIdList")
LONG_VOTE_COLUMNS = ("document", "system", "scu", "vote")
VOTE_FRAME_COLUMNS = ("document", "system", "assignment", "worker", "scu", "vote", "file", "row")


@dataclass(frozen=True, eq=False)
class PyramidAnnotations:
    """SCUs and the present / absent votes cast on system summaries.

    Attributes
    ----------
    votes : pandas.DataFrame
        One row per vote: ``document``, ``system``, ``assignment`` (one worker's submission on one
        summary), ``worker`` (None when the file has no worker ids), ``scu``, ``vote`` (1.0 present,
        0.0 absent, NaN missing), ``file`` and ``row`` (where the vote was read).
    scus : pandas.DataFrame
        One row per SCU: ``document``, ``scu``, ``text``, ``blank`` (padding SCU, never scored).
    texts : dict
        ``(document, system) -> summary text`` where the files carry it.
    has_workers : bool
        Whether every vote carries a worker id (needed to drop a document's noisiest worker).
    source : str
        Where the votes were read (``realsumm:<folder>``, or the votes files joined by ``+``; empty when built in
        Python): the ``source`` field of the signatures computed from them (issue 41: a signature names its data).
    """

    votes: pd.DataFrame
    scus: pd.DataFrame
    texts: dict = field(default_factory=dict, repr=False)
    has_workers: bool = False
    source: str = ""

    @property
    def documents(self) -> tuple[str, ...]:
        """Documents with at least one vote, in natural order ('2' before '10')."""
        return tuple(sorted(self.votes["document"].unique(), key=natural_key))

    @property
    def systems(self) -> tuple[str, ...]:
        """Systems with at least one vote, sorted."""
        return tuple(sorted(self.votes["system"].unique()))

    def subset(self, *, systems: Iterable[str] | None = None,
               documents: Iterable[str] | None = None) -> "PyramidAnnotations":
        """The votes on the given systems and documents only (labels must exist)."""
        keep = np.ones(len(self.votes), dtype=bool)
        for param, column, wanted in (("systems", "system", systems), ("documents", "document", documents)):
            if wanted is None:
                continue
            if isinstance(wanted, str):
                raise ParameterError(f"`{param}` must be a list of labels; got the string {wanted!r}.")
            wanted = [str(w) for w in wanted]
            known = set(self.votes[column].unique().tolist())
            for label in wanted:
                if label not in known:
                    raise ParameterError(f"`{param}` must hold labels of these annotations; got {label!r}.")
            keep &= self.votes[column].isin(wanted).to_numpy()
        votes = self.votes[keep].reset_index(drop=True)
        heads = votes.drop_duplicates(["document", "system"])
        summaries = set(zip(heads["document"].tolist(), heads["system"].tolist()))
        texts = {k: v for k, v in self.texts.items() if k in summaries}
        return PyramidAnnotations(votes, self.scus, texts, self.has_workers, self.source)

    def scored_votes(self) -> pd.DataFrame:
        """The votes on non-BLANK SCUs, the ones that count in scores and agreement."""
        blank = self.scus.set_index(["document", "scu"])["blank"]
        key = pd.MultiIndex.from_arrays([self.votes["document"], self.votes["scu"]])
        return self.votes[~blank.reindex(key).to_numpy(dtype=bool)].reset_index(drop=True)

    def to_frame(self) -> pd.DataFrame:
        """The votes, one row each (a copy)."""
        return self.votes.copy()

    @staticmethod
    def concat(parts: Sequence["PyramidAnnotations"]) -> "PyramidAnnotations":
        """Votes of several files on one SCU list; a summary must not be annotated in two files."""
        if not parts:
            raise ParameterError("`parts` must hold at least one PyramidAnnotations; got none.")
        first_file: dict[tuple[str, str], tuple[str, int]] = {}
        for part in parts:
            if part.scus is not parts[0].scus and not part.scus.equals(parts[0].scus):
                raise ParameterError("`parts` must share one SCU list; got annotations read with different lists.")
            heads = part.votes.drop_duplicates(["document", "system"])
            for doc, system, path, row in zip(heads["document"], heads["system"], heads["file"], heads["row"]):
                if (doc, system) in first_file and first_file[(doc, system)][0] != path:
                    other = first_file[(doc, system)][0]
                    raise InputFileError(
                        path, f"a summary must be annotated in one file only; got system {system!r} on document"
                        f" {doc!r} also in {other} (give one file another system label).",
                        row=int(row), column="system")
                first_file.setdefault((doc, system), (path, int(row)))
        votes = pd.concat([p.votes for p in parts], ignore_index=True)
        texts: dict = {}
        for part in parts:
            texts.update(part.texts)
        return PyramidAnnotations(votes, parts[0].scus, texts, all(p.has_workers for p in parts),
                                  "+".join(dict.fromkeys(p.source for p in parts if p.source)))


def natural_key(label: str) -> tuple:
    """Sort key putting '2' before '10' and numbers before words."""
    text = str(label)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


# -- CSV ------------------------------------------------------------------------------------------
def _read_csv(path: str | Path, required: Sequence[str]) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Header and rows ``(line, {column: cell})``; trailing unnamed all-empty columns (MTurk's trailing
    commas) are dropped; every column of ``required`` must be present."""
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[tuple[int, list[str]]] = []
    while True:
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            first = str(exc).splitlines()[0]
            raise InputFileError(path, f"the row must be valid CSV; got {first!r}.", row=start) from None
        if record:
            records.append((start, record))
    if not records:
        raise InputFileError(path, "the file must hold a header and at least one row; got an empty file.")
    header_row, header = records[0]
    names = [name.strip() for name in header]
    while names and not names[-1]:
        names.pop()
    for position, name in enumerate(names, start=1):
        if not name:
            raise InputFileError(path, f"every column must have a name; got an empty name for column {position}.",
                                 row=header_row)
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise InputFileError(path, f"column names must be unique; got {twice!r} twice.", row=header_row, column=twice)
    for name in required:
        if name not in names:
            raise InputFileError(path, f"the header must have a column {name!r}; got columns {', '.join(names[:8])}"
                                 + (", ..." if len(names) > 8 else "") + ".", row=header_row, column=name)
    rows = []
    for line, record in records[1:]:
        extra = record[len(names):]
        if len(record) < len(names) or any(cell.strip() for cell in extra):
            raise InputFileError(path, f"a row must have as many fields as the header ({len(names)}); got"
                                 f" {len(record)}.", row=line)
        rows.append((line, dict(zip(names, record))))
    if not rows:
        raise InputFileError(path, "the file must hold at least one row after the header; got only the header.")
    return names, rows


_FAST_VOTES = {"p": 1.0, "n": 0.0, "": float("nan")}


def _vote_value(path, cell: str, line: int, column: str) -> float:
    fast = _FAST_VOTES.get(cell)
    if fast is not None:
        return fast
    token = " ".join(cell.strip().lower().split())
    if token == "":
        return float("nan")
    if token in PRESENT_TOKENS:
        return 1.0
    if token in ABSENT_TOKENS:
        return 0.0
    raise InputFileError(path, f"a vote must be present (p) or not present (n); got {cell!r}.", row=line, column=column)


def _relabel(path, documents: Mapping[str, str] | None, raw: str, line: int, column: str) -> str:
    if documents is None:
        return raw
    if raw not in documents:
        raise InputFileError(path, f"the document must be one of the {len(documents)} documents of `documents`;"
                             f" got {raw!r}.", row=line, column=column)
    return str(documents[raw])


# -- SCU lists ------------------------------------------------------------------------------------
def read_scu_list(path: str | Path, *, documents: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Read an SCU list (REALSumm ``SCUs_list.csv`` or generic ``document,scu,text[,blank]``).

    Parameters
    ----------
    path : str or path-like
        The CSV file (may be gzipped).
    documents : mapping of str to str, optional
        Raw document id -> document label (e.g. REALSumm ``cnndm1017`` -> ``0``); every document of the
        file must be in it.

    Returns
    -------
    pandas.DataFrame
        ``document``, ``scu``, ``text``, ``blank``, in file order.

    Raises
    ------
    InputFileError
        A missing column, an SCU listed twice for one document, an empty SCU text.
    """
    text = read_text(path).lstrip("\ufeff")
    first = text.split("\n", 1)[0]
    realsumm = "questionId" in first
    names, rows = _read_csv(path, REALSUMM_SCU_COLUMNS if realsumm else GENERIC_SCU_COLUMNS)
    doc_col, scu_col, text_col = REALSUMM_SCU_COLUMNS if realsumm else GENERIC_SCU_COLUMNS
    seen: dict[tuple[str, str], int] = {}
    out = {"document": [], "scu": [], "text": [], "blank": []}
    for line, row in rows:
        doc = _relabel(path, documents, row[doc_col].strip(), line, doc_col)
        scu = row[scu_col].strip()
        if not scu:
            raise InputFileError(path, "an SCU id must not be empty; got an empty cell.", row=line, column=scu_col)
        if (doc, scu) in seen:
            raise InputFileError(path, f"an SCU must be listed once per document; got {scu!r} again (first at row"
                                 f" {seen[(doc, scu)]}).", row=line, column=scu_col)
        seen[(doc, scu)] = line
        scu_text = row[text_col].strip()
        if not scu_text:
            raise InputFileError(path, f"an SCU text must not be empty (write {BLANK_TEXT} for padding); got an empty"
                                 " cell.", row=line, column=text_col)
        blank = scu_text.upper() == BLANK_TEXT
        if not realsumm and "blank" in names and row["blank"].strip():
            blank = blank or row["blank"].strip().lower() in ("1", "true", "yes", "y")
        out["document"].append(doc)
        out["scu"].append(scu)
        out["text"].append(scu_text)
        out["blank"].append(blank)
    return pd.DataFrame(out)


# -- votes ----------------------------------------------------------------------------------------
class _VoteCollector:
    def __init__(self, path, scus: pd.DataFrame):
        self.path = str(path)
        self.owner: dict[str, set[str]] = {}
        for doc, scu in zip(scus["document"].tolist(), scus["scu"].tolist()):
            self.owner.setdefault(scu, set()).add(doc)
        self.records: list[tuple] = []

    def check_scu(self, doc: str, scu: str, line: int, column: str) -> None:
        owners = self.owner.get(scu)
        if owners is None:
            raise InputFileError(self.path, f"an SCU id must be in the SCU list; got {scu!r}.", row=line, column=column)
        if doc not in owners:
            raise InputFileError(self.path, f"an SCU must belong to the summary's document {doc!r}; got {scu!r} of"
                                 f" document {sorted(owners)[0]!r}.", row=line, column=column)

    def add(self, doc, system, assignment, worker, scu, vote, line) -> None:
        self.records.append((doc, system, assignment, worker, scu, vote, self.path, line))

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame.from_records(self.records, columns=list(VOTE_FRAME_COLUMNS))
        frame["vote"] = frame["vote"].astype(float)
        frame["row"] = frame["row"].astype(np.int64)
        return frame


def read_votes(path: str | Path, *, scus: pd.DataFrame, documents: Mapping[str, str] | None = None,
               system: str | None = None) -> PyramidAnnotations:
    """Read one file of present / absent votes (MTurk batch results or the generic long layout).

    Parameters
    ----------
    path : str or path-like
        The CSV file (may be gzipped).
    scus : pandas.DataFrame
        The SCU list, from :func:`read_scu_list` (with the same ``documents`` mapping).
    documents : mapping of str to str, optional
        Raw document id -> document label; every document of the file must be in it.
    system : str, optional
        Label every summary of the file with this system (e.g. to tell two files that both call their
        system ``bart_out`` apart); default: the file's ``Input.summaryId`` / ``system`` column.

    Returns
    -------
    PyramidAnnotations

    Raises
    ------
    InputFileError
        A missing column; an SCU id not in the list or of another document; an SCU shown twice to one
        worker; a worker voting twice on one summary; a vote that is neither present nor absent; a
        qIdList that is not a list of ids; a summary whose text differs between rows.
    """
    header = read_text(path).lstrip("\ufeff").split("\n", 1)[0]
    if "Input." in header or "Answer." in header:
        return _read_mturk(path, scus, documents, system)
    return _read_long(path, scus, documents, system)


def _read_mturk(path, scus, documents, system_label) -> PyramidAnnotations:
    names, rows = _read_csv(path, MTURK_COLUMNS)
    has_workers = "WorkerId" in names
    collector = _VoteCollector(path, scus)
    texts: dict[tuple[str, str], str] = {}
    text_rows: dict[tuple[str, str], int] = {}
    seen_workers: dict[tuple[str, str, str], int] = {}
    checked: set[tuple[str, tuple[str, ...]]] = set()
    file_name = Path(path).name
    for line, row in rows:
        doc = _relabel(path, documents, row["Input.eventId"].strip(), line, "Input.eventId")
        system = system_label or row["Input.summaryId"].strip()
        if not system:
            raise InputFileError(path, "the system must not be empty; got an empty cell.", row=line,
                                 column="Input.summaryId")
        ids = _id_list(path, row["Input.qIdList"], line)
        worker = row["WorkerId"].strip() if has_workers else None
        if has_workers:
            if not worker:
                raise InputFileError(path, "a worker id must not be empty; got an empty cell.", row=line,
                                     column="WorkerId")
            key = (doc, system, worker)
            if key in seen_workers:
                raise InputFileError(path, f"a worker must vote once per summary; got worker {worker!r} again on system"
                                     f" {system!r}, document {doc!r} (first at row {seen_workers[key]}).",
                                     row=line, column="WorkerId")
            seen_workers[key] = line
        assignment = row["AssignmentId"].strip() if "AssignmentId" in names and row["AssignmentId"].strip() \
            else f"{file_name}:{line}"
        if "Input.summary_text" in names:
            summary = " ".join(row["Input.summary_text"].split())
            if (doc, system) in texts and texts[(doc, system)] != summary:
                raise InputFileError(path, f"a summary's text must be the same on every row; got another text for"
                                     f" system {system!r}, document {doc!r} than at row {text_rows[(doc, system)]}.",
                                     row=line, column="Input.summary_text")
            texts.setdefault((doc, system), summary)
            text_rows.setdefault((doc, system), line)
        if (doc, tuple(ids)) not in checked:
            for k, scu in enumerate(ids, start=1):
                if f"Answer.S{k}Answer" not in row:
                    raise InputFileError(path, f"the header must have a column 'Answer.S{k}Answer' for the {k}-th SCU"
                                         " of Input.qIdList; got none.", row=line, column=f"Answer.S{k}Answer")
                collector.check_scu(doc, scu, line, "Input.qIdList")
            checked.add((doc, tuple(ids)))
        for k, scu in enumerate(ids, start=1):
            column = f"Answer.S{k}Answer"
            collector.add(doc, system, assignment, worker, scu, _vote_value(path, row[column], line, column), line)
    return PyramidAnnotations(collector.frame(), scus, texts, has_workers, Path(path).name)


_SIMPLE_LIST = re.compile(r"\[\s*'[^'\\]*'(?:\s*,\s*'[^'\\]*')*\s*\]")


def _id_list(path, cell: str, line: int) -> list[str]:
    text = cell.strip()
    if _SIMPLE_LIST.fullmatch(text):  # the usual "['1', '2', ...]", without the cost of ast
        ids = [v.strip() for v in re.findall(r"'([^']*)'", text)]
        if len(set(ids)) == len(ids) and all(ids):
            return ids
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = None
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, (str, int)) for v in value):
        raise InputFileError(path, f"Input.qIdList must be a list of SCU ids like ['1', '2']; got {cell[:40]!r}.",
                             row=line, column="Input.qIdList")
    ids = [str(v).strip() for v in value]
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise InputFileError(path, f"Input.qIdList must show each SCU once; got {twice!r} twice.", row=line,
                             column="Input.qIdList")
    return ids


def _read_long(path, scus, documents, system_label) -> PyramidAnnotations:
    names, rows = _read_csv(path, LONG_VOTE_COLUMNS)
    has_workers = "worker" in names
    has_assignments = "assignment" in names
    collector = _VoteCollector(path, scus)
    seen: dict[tuple, int] = {}
    order: dict[tuple, int] = {}
    for line, row in rows:
        doc = _relabel(path, documents, row["document"].strip(), line, "document")
        system = system_label or row["system"].strip()
        if not system:
            raise InputFileError(path, "the system must not be empty; got an empty cell.", row=line, column="system")
        scu = row["scu"].strip()
        collector.check_scu(doc, scu, line, "scu")
        worker = row["worker"].strip() if has_workers else None
        if has_workers and not worker:
            raise InputFileError(path, "a worker id must not be empty; got an empty cell.", row=line, column="worker")
        if has_assignments:
            assignment = row["assignment"].strip()
        elif has_workers:
            assignment = worker
        else:
            order[(doc, system, scu)] = order.get((doc, system, scu), 0) + 1
            assignment = f"vote{order[(doc, system, scu)]}"
        who = worker if has_workers else assignment
        key = (doc, system, scu, who)
        if (has_workers or has_assignments) and key in seen:
            column = "worker" if has_workers else "assignment"
            raise InputFileError(path, f"a {column} must vote once per SCU of a summary; got {who!r} again on SCU"
                                 f" {scu!r} of system {system!r}, document {doc!r} (first at row {seen[key]}).",
                                 row=line, column=column)
        seen[key] = line
        collector.add(doc, system, assignment, worker, scu, _vote_value(path, row["vote"], line, "vote"), line)
    return PyramidAnnotations(collector.frame(), scus, {}, has_workers, Path(path).name)


def votes_reliability_data(annotations: PyramidAnnotations):
    """Reliability matrix of the scored votes: coders (vote slots) x units ((document, system, SCU)).

    Returns ``(data, unit_keys)``: ``data[k, u]`` is the k-th vote cast on unit u (NaN when u got fewer
    votes); ``unit_keys`` is a DataFrame with ``document``, ``system``, ``scu`` per unit. Krippendorff's
    alpha does not use coder identities, so slots stand in for workers when the files have none.
    """
    votes = annotations.scored_votes()
    votes = votes[~votes["vote"].isna()]
    keys = votes[["document", "system", "scu"]]
    codes, uniques = pd.MultiIndex.from_frame(keys).factorize()
    slot = pd.Series(np.arange(len(votes))).groupby(codes).cumcount().to_numpy()
    n_units = len(uniques)
    data = np.full((int(slot.max()) + 1 if len(slot) else 1, n_units), np.nan)
    data[slot, codes] = votes["vote"].to_numpy()
    unit_keys = pd.DataFrame(list(uniques), columns=["document", "system", "scu"])
    return data, unit_keys
