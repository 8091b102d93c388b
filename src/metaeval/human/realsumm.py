"""The REALSumm crowd annotations (Bhandari et al. 2020): locating, reading and checking them.

The released directory ``human_annotations/`` holds ``selected_documents.md`` (the CNN/DailyMail test
line numbers of the 100 judged documents, in the order of REALSumm's ``doc_id``),
``SCUs_and_annotations/SCUs_list.csv`` and one MTurk results file per system in
``SCU_rating_results_abs_systems/`` and ``SCU_rating_results_ext_systems/``. Both folders hold a file
whose summaries are called ``bart_out``: the abstractive folder's file annotates the real abstractive BART
outputs, which REALSumm's score files lost (their abstractive ``bart_out`` is a copy of the extractive
one). :func:`read_realsumm_annotations` therefore labels that file's system ``bart_out_abs``
(:data:`ABSTRACTIVE_BART`), and keeps ``bart_out`` for the extractive file, as the packaged ``realsumm``
dataset does.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ..data.formats import read_text
from ..errors import InputFileError
from .annotations import PyramidAnnotations, read_scu_list, read_votes

ABSTRACTIVE_BART = "bart_out_abs"
"""System label of the abstractive BART annotations (``SCU_rating_results_abs_systems/bart_out*``)."""
DOCUMENT_PREFIX = "cnndm"
_FOLDERS = ("SCU_rating_results_abs_systems", "SCU_rating_results_ext_systems")


def read_selected_documents(path: str | Path, *, prefix: str = DOCUMENT_PREFIX) -> dict[str, str]:
    """REALSumm's ``selected_documents.md``: event id -> document label.

    The file lists the CNN/DailyMail test line numbers of the judged documents; the k-th number (from 0)
    is REALSumm's ``doc_id`` k, and the MTurk files call that document ``<prefix><line number>``.

    Returns
    -------
    dict
        ``{"cnndm1017": "0", "cnndm10586": "1", ...}``.

    Raises
    ------
    InputFileError
        If the file has no ``[n, n, ...]`` list or a number repeats.
    """
    text = read_text(path)
    match = re.search(r"\[([\d,\s]+)\]", text)
    if match is None:
        raise InputFileError(path, "the file must hold the line numbers as a list like [1017, 10586]; got none.")
    lines = [int(v) for v in match.group(1).replace(",", " ").split()]
    if len(set(lines)) != len(lines):
        twice = next(v for v in lines if lines.count(v) > 1)
        raise InputFileError(path, f"each line number must be listed once; got {twice} twice.")
    return {f"{prefix}{line}": str(k) for k, line in enumerate(lines)}


def read_realsumm_annotations(directory: str | Path) -> PyramidAnnotations:
    """All REALSumm votes, with documents labelled by REALSumm ``doc_id`` ('0' ... '99').

    Parameters
    ----------
    directory : str or path-like
        The released ``human_annotations`` folder.

    Returns
    -------
    PyramidAnnotations
        25 systems (the 24 of the ``realsumm`` dataset plus :data:`ABSTRACTIVE_BART`) x 100 documents;
        no worker ids (the release has none).

    Raises
    ------
    InputFileError
        If a file is missing or malformed.
    """
    directory = Path(directory)
    documents = read_selected_documents(directory / "selected_documents.md")
    base = directory / "SCUs_and_annotations"
    scus = read_scu_list(base / "SCUs_list.csv", documents=documents)
    parts = []
    for folder in _FOLDERS:
        files = sorted((base / folder).glob("*.csv"))
        if not files:
            raise InputFileError(base / folder, "the folder must hold the MTurk result files (*.csv); got none.")
        for path in files:
            system = ABSTRACTIVE_BART if folder.endswith("abs_systems") and path.name.startswith("bart_out") else None
            parts.append(read_votes(path, scus=scus, documents=documents, system=system))
    return replace(PyramidAnnotations.concat(parts), source=f"realsumm:{directory.name}")


_TOKENS = re.compile(r"</?t>|<unk>|\[unk\]|-[lr][rsc]b-")


def normalized_text(text: str) -> str:
    """Lower-case letters and digits only, without PTB bracket tokens (``-lrb-``), ``<unk>`` and ``<t>``
    tags: REALSumm's score files and its MTurk files tokenize the same summaries differently."""
    return re.sub(r"[^0-9a-z]", "", _TOKENS.sub("", text.lower()))


def check_realsumm_texts(annotations: PyramidAnnotations, scores_path: str | Path) -> pd.DataFrame:
    """Match every annotated summary to REALSumm's ``realsumm_scores.jsonl`` through its text.

    Parameters
    ----------
    annotations : PyramidAnnotations
        From :func:`read_realsumm_annotations` (summary texts are needed).
    scores_path : str or path-like
        ``realsumm_scores.jsonl`` (lines ``{split, doc_id, system_id, summary, ...}``).

    Returns
    -------
    pandas.DataFrame
        One row per annotated summary: ``document``, ``system``, ``same_text`` (the score file's summary
        of this system and document has the same letters and digits), ``systems_with_text`` (every
        ``split:system`` of the score file whose summary of this document has this text), ``similarity``
        (:class:`difflib.SequenceMatcher` ratio of the normalized texts; 1 when equal).
    """
    by_doc: dict[str, dict[str, list[str]]] = {}
    own: dict[tuple[str, str], set[str]] = {}
    for line in read_text(scores_path).splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        doc, system = str(record["doc_id"]), str(record["system_id"])
        key = normalized_text(record["summary"])
        by_doc.setdefault(doc, {}).setdefault(key, []).append(f"{record['split']}:{system}")
        own.setdefault((doc, system), set()).add(key)
    rows = []
    for (doc, system), text in sorted(annotations.texts.items()):
        key = normalized_text(text)
        theirs = own.get((doc, system), set())
        similarity = max((difflib.SequenceMatcher(None, key, other, autojunk=False).ratio() if other != key else 1.0
                          for other in theirs), default=0.0)
        rows.append({
            "document": doc,
            "system": system,
            "same_text": key in theirs,
            "systems_with_text": ",".join(by_doc.get(doc, {}).get(key, [])),
            "similarity": similarity,
        })
    return pd.DataFrame(rows, columns=["document", "system", "same_text", "systems_with_text", "similarity"])
