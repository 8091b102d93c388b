"""Readers for the native formats of the public data sets that metaeval packages.

These read the files as their authors distributed them (see ``../shared/data/README.md``) and are
used by ``scripts/build_datasets.py`` to convert them once into the packaged datasets; users load the
result with :func:`metaeval.data.datasets.load_dataset`. Errors name the file, row and column like
:func:`~metaeval.data.readers.read_scores` does.
"""
from __future__ import annotations

import gzip
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputFileError
from .formats import json_lines, json_type, read_text
from .scoreset import ScoreSet

REALSUMM_SCORER_NAMES = {
    "litepyramid_recall": "litepyramid.recall",
    "rouge_1_recall": "rouge-1.recall",
    "rouge_1_precision": "rouge-1.precision",
    "rouge_1_f_score": "rouge-1.f1",
    "rouge_2_recall": "rouge-2.recall",
    "rouge_2_precision": "rouge-2.precision",
    "rouge_2_f_score": "rouge-2.f1",
    "rouge_l_recall": "rouge-l.recall",
    "rouge_l_precision": "rouge-l.precision",
    "rouge_l_f_score": "rouge-l.f1",
    "js-2": "js-2",
    "mover_score": "moverscore",
    "bert_precision_score": "bertscore.precision",
    "bert_recall_score": "bertscore.recall",
    "bert_f_score": "bertscore.f1",
}
"""``realsumm_scores.jsonl`` score keys -> metaeval's scorer names (lower case, ``<metric>.<variant>``)."""

REALSUMM_HUMAN = "litepyramid.recall"
MQM_HUMAN = "mqm"
WMT19_HUMAN = "da.z"
WMT19_TESTSET = "newstest2019"


def _json_lines(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for row, record in json_lines(path, read_text(path)):
        if not isinstance(record, dict):
            raise InputFileError(path, f"a line must be one JSON object; got {json_type(record)}.", row=row)
        yield row, record


def _field(path: str | Path, row: int, record: dict[str, Any], key: str) -> Any:
    if key not in record:
        raise InputFileError(path, f"every line must have a {key!r} field; got {', '.join(map(repr, record))}.",
                             row=row, column=key)
    return record[key]


def _score(path: str | Path, row: int, column: str, value: Any) -> float:
    """A finite float or NaN (None / 'None' = missing); an error otherwise."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "None", "NaN", "nan")):
        return math.nan
    if isinstance(value, bool):
        raise InputFileError(path, f"a score must be a number; got {value!r}.", row=row, column=column)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputFileError(path, f"a score must be a number; got {value!r}.", row=row, column=column) from None
    if math.isinf(number):
        raise InputFileError(path, f"a score must be finite or missing; got {value!r}.", row=row, column=column)
    return number


class _Cells:
    """Collects (system, input, scorer) -> value, refusing duplicates; builds N x M matrices."""

    def __init__(self, path: str | Path):
        self.path = path
        self.systems: dict[str, None] = {}
        self.inputs: dict[str, None] = {}
        self.values: dict[str, dict[tuple[str, str], float]] = {}
        self.first_row: dict[tuple[str, str], int] = {}

    def add_cell(self, row: int, system: str, input: str, scores: dict[str, float]) -> None:
        key = (system, input)
        if key in self.first_row:
            raise InputFileError(self.path, f"(system, input) must be unique; got {key!r} again"
                                            f" (first on row {self.first_row[key]}).", row=row)
        self.first_row[key] = row
        self.systems.setdefault(system, None)
        self.inputs.setdefault(input, None)
        for scorer, value in scores.items():
            self.values.setdefault(scorer, {})[key] = value

    def scoreset(self, *, humans: tuple[str, ...], name: str, first: tuple[str, ...] = ()) -> ScoreSet:
        systems, inputs = list(self.systems), list(self.inputs)
        rows = {s: i for i, s in enumerate(systems)}
        cols = {x: j for j, x in enumerate(inputs)}
        order = [s for s in first if s in self.values] + [s for s in self.values if s not in first]
        scores = {}
        for scorer in order:
            matrix = np.full((len(systems), len(inputs)), np.nan)
            for (system, input), value in self.values[scorer].items():
                matrix[rows[system], cols[input]] = value
            scores[scorer] = matrix
        return ScoreSet(scores, systems=systems, inputs=inputs, humans=humans, name=name)


def read_realsumm_scores(path: str | Path) -> dict[str, ScoreSet]:
    """REALSumm's ``realsumm_scores.jsonl`` as one ScoreSet per split.

    Parameters
    ----------
    path : str or path-like
        Lines ``{split: abs|ext, doc_id, system_id, summary, reference, scores: {...}}``
        (Bhandari et al., 2020). Texts are ignored.

    Returns
    -------
    dict of str to ScoreSet
        ``{"abs": 14 x 100, "ext": 11 x 100}``; inputs are the ``doc_id`` values as strings; scorer keys
        renamed by :data:`REALSUMM_SCORER_NAMES` (unknown keys kept as they are); the human scorer is
        ``litepyramid.recall``. ROUGE values are fractions (0-1), as in the file.
    """
    splits: dict[str, _Cells] = {}
    for row, record in _json_lines(path):
        split = str(_field(path, row, record, "split"))
        system = str(_field(path, row, record, "system_id"))
        doc = str(_field(path, row, record, "doc_id"))
        raw = _field(path, row, record, "scores")
        if not isinstance(raw, dict):
            raise InputFileError(path, f"'scores' must be an object; got {raw!r}.", row=row, column="scores")
        scores = {REALSUMM_SCORER_NAMES.get(k, k): _score(path, row, k, v) for k, v in raw.items()}
        splits.setdefault(split, _Cells(path)).add_cell(row, system, doc, scores)
    return {
        split: cells.scoreset(humans=(REALSUMM_HUMAN,), name=f"realsumm-{split}",
                              first=tuple(REALSUMM_SCORER_NAMES.values()))
        for split, cells in splits.items()
    }


def read_mqm_averages(path: str | Path, *, name: str | None = None) -> ScoreSet:
    """A WMT MQM ``*.avg_seg_scores.tsv`` file (Freitag et al., 2021) as systems x segments.

    The file is whitespace separated with the header ``system mqm_avg_score seg_id``; ``None`` marks an
    unrated segment (NaN). The human scorer ``mqm`` is minus the weighted MQM error count averaged over
    raters: higher is better. One score per cell: the averages, beside :func:`metaeval.read_mqm_ratings` for the
    per-rater ratings files (named ``read_wmt_mqm`` until 0.1; that name warns for one release).
    """
    lines = read_text(path).splitlines()
    header = lines[0].split() if lines else []
    expected = ["system", "mqm_avg_score", "seg_id"]
    if header != expected:
        raise InputFileError(path, f"the header must be {' '.join(expected)!r}; got {' '.join(header)!r}.", row=1)
    cells = _Cells(path)
    for row, line in enumerate(lines[1:], start=2):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 3:
            raise InputFileError(path, f"a row must have 3 whitespace-separated fields; got {len(fields)}.", row=row)
        system, value, segment = fields
        cells.add_cell(row, system, segment, {MQM_HUMAN: _score(path, row, "mqm_avg_score", value)})
    if not cells.first_row:
        raise InputFileError(path, "the file must hold at least one row of scores; got only a header.")
    return cells.scoreset(humans=(MQM_HUMAN,), name=name or Path(path).name.split(".")[0])


@dataclass(frozen=True)
class Wmt19SystemScores:
    """WMT19 system-level scores: one ScoreSet per language pair and what reconciling the files did.

    Attributes
    ----------
    scoresets : dict of str to ScoreSet
        Language pair -> N systems x 1 input (``newstest2019``), scorers ``da.z`` then the metrics,
        their names lower-cased (``BLEU`` -> ``bleu``, ``sacreBLEU-chrF`` -> ``sacrebleu-chrf``), as every
        scorer name of metaeval.
    notes : tuple of str
        Systems renamed to match the DA file, and systems dropped because they have no DA score.
    """

    scoresets: dict[str, ScoreSet]
    notes: tuple[str, ...]


def _whitespace_rows(path: str | Path, text: str, width: int) -> Iterator[tuple[int, list[str]]]:
    for row, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != width:
            raise InputFileError(path, f"a row must have {width} whitespace-separated fields; got {len(fields)}.",
                                 row=row)
        yield row, fields


def _renamed_system(system: str, language_pair: str, known: dict[str, float]) -> str | None:
    """``system`` or the DA spelling of it (``X.6929`` <-> ``X.de-cs.6929``); None when absent."""
    if system in known:
        return system
    with_pair = re.sub(r"^(.*)\.(\d+)$", rf"\1.{language_pair}.\2", system)
    without_pair = system.replace(f".{language_pair}.", ".")
    for candidate in (with_pair, without_pair):
        if candidate in known:
            return candidate
    return None


def read_wmt19_system_scores(da_path: str | Path, baselines_dir: str | Path) -> Wmt19SystemScores:
    """WMT19 metrics task system-level DA z-scores and baseline metric scores (Ma et al., 2019).

    Parameters
    ----------
    da_path : path-like
        ``DA-syslevel.csv``: header ``LP HUMAN SYSTEM``, whitespace separated.
    baselines_dir : path-like
        Directory of ``*.sys.score.gz`` files: ``METRIC LP TESTSET SYSTEM SCORE`` per line.

    Returns
    -------
    Wmt19SystemScores
        Only language pairs with DA scores; each system of the DA file is a row; a metric file's
        system name that differs from the DA spelling only by the language pair
        (``Unsupervised.6929`` vs ``Unsupervised.de-cs.6929``) is matched and reported in ``notes``;
        systems without a DA score are dropped and reported.
    """
    da_rows = list(_whitespace_rows(da_path, read_text(da_path), 3))
    if not da_rows or da_rows[0][1] != ["LP", "HUMAN", "SYSTEM"]:
        raise InputFileError(da_path, "the header must be 'LP HUMAN SYSTEM'.", row=1)
    human: dict[str, dict[str, float]] = {}
    for row, (pair, value, system) in da_rows[1:]:
        if system in human.setdefault(pair, {}):
            raise InputFileError(da_path, f"(LP, SYSTEM) must be unique; got {(pair, system)!r} again.", row=row)
        human[pair][system] = _score(da_path, row, "HUMAN", value)
    metric: dict[str, dict[str, dict[str, float]]] = {}  # pair -> metric -> system -> score
    unmatched: dict[tuple[str, str, str | None], list[str]] = {}
    for file in sorted(Path(baselines_dir).glob("*.sys.score.gz")):
        with gzip.open(file, "rt", encoding="utf-8") as handle:
            text = handle.read()
        for row, (name, pair, testset, system, value) in _whitespace_rows(file, text, 5):
            if testset != WMT19_TESTSET or pair not in human:
                continue
            renamed = _renamed_system(system, pair, human[pair])
            if renamed != system:
                unmatched.setdefault((pair, system, renamed), []).append(name.lower())
            if renamed is None:
                continue
            table = metric.setdefault(pair, {}).setdefault(name.lower(), {})
            if renamed in table:
                raise InputFileError(file, f"(METRIC, LP, SYSTEM) must be unique; got {(name, pair, system)!r} again.",
                                     row=row)
            table[renamed] = _score(file, row, "SCORE", value)
    notes = []
    for (pair, system, renamed), names in unmatched.items():
        listed = ", ".join(sorted(names, key=str.lower))
        if renamed is None:
            notes.append(f"{pair}: {system!r} has metric scores ({listed}) but no DA score; dropped.")
        else:
            notes.append(f"{pair}: {listed} write {system!r} for the DA file's {renamed!r}; matched.")
    scoresets = {}
    for pair, systems in human.items():
        scores = {WMT19_HUMAN: np.array(list(systems.values()))[:, None]}
        for name in sorted(metric.get(pair, {}), key=str.lower):
            table = metric[pair][name]
            for system in systems:
                if system not in table:
                    notes.append(f"{pair}: {name} has no score for {system!r}; left missing.")
            scores[name] = np.array([table.get(s, math.nan) for s in systems])[:, None]
        scoresets[pair] = ScoreSet(scores, systems=list(systems), inputs=[WMT19_TESTSET], humans=(WMT19_HUMAN,),
                                   name="wmt19-da-sys", description=f"language_pair={pair}")
    return Wmt19SystemScores(scoresets, tuple(notes))
