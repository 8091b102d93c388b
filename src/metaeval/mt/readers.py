"""Machine-translation score layouts: WMT MQM segment scores and the mt-metrics-eval directory.

:func:`read_mqm_averages` reads a WMT MQM ``*.avg_seg_scores.tsv`` file (Freitag et al. 2021; the reader of
:mod:`metaeval.data.native`, public here). :func:`read_mt_metrics_eval` reads one language pair of a
test set laid out as Google's mt-metrics-eval distributes it::

    <root>/human-scores/<lp>.seg.score                   human scores, named 'human'
    <root>/human-scores/<lp>.<name>.seg.score            human scores named <name> (e.g. 'mqm')
    <root>/metric-scores/<lp>/<metric>-<ref>.seg.score   a metric against reference <ref>
    (the same with .sys.score for system-level scores)

A ``.score`` file has one ``system<TAB>score`` line per item; in a ``.seg.score`` file the k-th line of
a system is its k-th segment (inputs are labelled ``1``, ``2``, ... as in the packaged WMT MQM sets),
and ``None`` (or ``nan``) is a missing score. At system level each system has one line and the
ScoreSet has one input, labelled ``<lp>`` (only system-level statistics are meaningful there).
"""
from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from ..data.formats import read_text
from ..data.native import _score, read_mqm_averages
from ..data.scoreset import ScoreSet
from ..errors import InputFileError, ParameterError, check_choice

__all__ = ["MT_LEVELS", "has_level", "read_mt_metrics_eval", "read_mqm_averages"]

MT_LEVELS = ("seg", "sys")
"""Granularities of the mt-metrics-eval score files."""


def _score_lines(path: Path) -> dict[str, list[float]]:
    """``system -> [score of item 1, item 2, ...]`` from a ``system<TAB>score`` file."""
    values: dict[str, list[float]] = {}
    for row, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.rstrip("\n").split("\t") if "\t" in line else line.split()
        if len(fields) != 2:
            raise InputFileError(path, f"a line must be 'system<TAB>score'; got {len(fields)} fields.", row=row)
        values.setdefault(fields[0].strip(), []).append(_score(path, row, "score", fields[1]))
    if not values:
        raise InputFileError(path, "the file must hold at least one row of scores; got an empty file.")
    return values


def has_level(root: str | Path, language_pair: str, level: str) -> bool:
    """Whether an mt-metrics-eval directory has any ``<lp>*.<level>.score`` file of ``language_pair`` (human or
    metric): e.g. the system-level scores WMT computes over all segments (``.sys.score``)."""
    root, suffix = Path(root), f".{check_choice('level', level, MT_LEVELS)}.score"
    return (any((root / "human-scores").glob(f"{language_pair}.*{suffix}"))
            or (root / "human-scores" / f"{language_pair}{suffix}").is_file()
            or any((root / "metric-scores" / language_pair).glob(f"*{suffix}")))


def read_mt_metrics_eval(root: str | Path, language_pair: str, *, level: str = "seg",
                         name: str | None = None) -> ScoreSet:
    """One language pair of an mt-metrics-eval test-set directory as a ScoreSet.

    Parameters
    ----------
    root : str or path-like
        The test-set directory holding ``human-scores/`` and ``metric-scores/`` (e.g. ``.../wmt22``).
    language_pair : str
        E.g. ``'en-de'``.
    level : {'seg', 'sys'}
        Segment scores (systems x segments) or system scores (systems x 1 input labelled ``<lp>``).
    name : str, optional
        Dataset name for signatures; default ``<root name>-<lp>``.

    Returns
    -------
    ScoreSet
        Systems in order of first appearance (human files first); human scorers ``human`` or
        ``<name>`` from the file names; metrics ``<metric>-<ref>`` as in the file names.

    Raises
    ------
    InputFileError
        For a missing directory or file, a malformed line, or segment counts that differ between systems
        or files.
    """
    level = check_choice("level", level, MT_LEVELS)
    if not isinstance(language_pair, str) or not language_pair:
        raise ParameterError(f"`language_pair` must be a language pair such as 'en-de'; got {language_pair!r}.")
    root = Path(root)
    suffix = f".{level}.score"
    human_dir, metric_dir = root / "human-scores", root / "metric-scores" / language_pair
    humans = sorted(human_dir.glob(f"{language_pair}.*{suffix}")) + sorted(human_dir.glob(f"{language_pair}{suffix}"))
    metrics = sorted(metric_dir.glob(f"*{suffix}"))
    if not humans and not metrics:
        raise InputFileError(root, f"the directory must hold human-scores/{language_pair}[.<name>]{suffix} or"
                                   f" metric-scores/{language_pair}/<metric>-<ref>{suffix}; got neither.")
    files: dict[str, Path] = {}
    for path in humans:
        middle = path.name[len(language_pair):-len(suffix)]
        files[middle.strip(".") or "human"] = path
    human_names = tuple(files)
    for path in metrics:
        files[path.name[:-len(suffix)]] = path
    read = {scorer: _score_lines(path) for scorer, path in files.items()}
    systems = list(dict.fromkeys(s for values in read.values() for s in values))
    lengths = {len(v) for values in read.values() for v in values.values()}
    if level == "sys" and lengths != {1}:
        scorer = next(s for s, values in read.items() if any(len(v) != 1 for v in values.values()))
        raise InputFileError(files[scorer], "a system-level file must have one line per system; got a system twice.")
    if len(lengths) > 1:
        counts = Counter(len(v) for values in read.values() for v in values.values())
        expected = max(counts, key=lambda n: (counts[n], n))
        scorer, system, n = next((s, system, len(v)) for s, values in read.items() for system, v in values.items()
                                 if len(v) != expected)
        raise InputFileError(files[scorer], f"every system must have the same number of segments in every file"
                                            f" ({expected}, one line per segment, in most of them); got {n} lines"
                                            f" for system {system!r}.")
    m = lengths.pop()
    inputs = [language_pair] if level == "sys" else [str(j) for j in range(1, m + 1)]
    scores = {}
    for scorer, values in read.items():
        matrix = np.full((len(systems), m), math.nan)
        for i, system in enumerate(systems):
            if system in values:
                matrix[i] = values[system]
        scores[scorer] = matrix
    return ScoreSet(scores, systems=systems, inputs=inputs, humans=human_names,
                    name=name or f"{root.name}-{language_pair}")
