"""Warnings about the cells of a correlation table, folded into one line per kind.

A table of 30 metrics x 2 levels x 3 coefficients computes 180 cells; a degenerate design (few systems)
makes many of them raise the same warning with different numbers ("43% have a correlation of exactly
+-1", "58% ..."). One line per cell buries everything else, so :func:`fold_cell_warnings` groups the
warnings of one kind - same category, same text once the cell context and the numbers are set aside -
into one line that names how many cells, at which levels and coefficients, and which metrics it concerns,
with every number that varies shown as its range over the cells::

    Bootstrap resampling of 15 systems is degenerate: 0% of the resamples have fewer than 5 distinct
    systems and 5 to 65% have a correlation of exactly +-1; the interval is unreliable (Deutsch et al.
    2021). [60 table cells: system level; spearman, kendall-b; 30 metrics: m01, m02, ..., m30]

A warning raised by one cell only keeps its context prefix (:func:`cell_prefix`), unchanged.
"""
from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from typing import Any

__all__ = ["cell_prefix", "fold_cell_warnings"]

_CONTEXT = re.compile(r"^metric (?P<metric>.+?), (?P<level>[a-z-]+) level, (?P<coefficient>[a-z-]+): ")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def cell_prefix(metric: str, level: str, coefficient: str) -> str:
    """The context of a warning raised for one cell of a table: ``metric X, summary level, kendall-b: ``."""
    return f"metric {metric}, {level} level, {coefficient}: "


def _unique(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def _range(values: list[str]) -> str:
    """One number of the folded text: the value if every cell has it, else ``low to high``."""
    distinct = _unique(values)
    if len(distinct) == 1:
        return distinct[0]
    ordered = sorted(distinct, key=float)
    return f"{ordered[0]} to {ordered[-1]}"


def fold_cell_warnings(items: Iterable[tuple[str, Hashable]]) -> list[tuple[str, Hashable]]:
    """Fold ``(text, category)`` warnings about table cells into one ``(text, category)`` per kind.

    A text starting with :func:`cell_prefix` belongs to a cell; its *kind* is its category and its text
    after the prefix with every number replaced by a placeholder. The warnings of one kind raised by
    several cells become one text: the common text with each number that differs between cells written as
    ``low to high``, followed by ``[N table cells: <levels> level; <coefficients>; K metrics: <names>]``
    (levels, coefficients and metrics in the order they were first seen). A kind raised by a single cell,
    and a text without a cell prefix, is kept as it is; identical texts are kept once. Kinds are listed in
    the order of their first warning.
    """
    groups: dict[Hashable, list[tuple[str, Any]]] = {}
    for text, category in items:
        match = _CONTEXT.match(text)
        if match is None:
            groups.setdefault(("plain", text, category), []).append((text, None))
            continue
        body = text[match.end():]
        key = ("cell", _NUMBER.sub("#", body), category)
        groups.setdefault(key, []).append((text, (match["metric"], match["level"], match["coefficient"], body)))
    folded = []
    for (kind, _, category), members in groups.items():
        texts = _unique(text for text, _ in members)
        cells = _unique(cell[:3] for _, cell in members if cell is not None)
        if kind == "plain" or len(cells) <= 1:
            folded.extend((text, category) for text in texts)
            continue
        bodies = [cell[3] for _, cell in members]
        numbers = [_NUMBER.findall(body) for body in bodies]
        pieces = _NUMBER.split(bodies[0])
        text = pieces[0] + "".join(_range([n[i] for n in numbers]) + piece for i, piece in enumerate(pieces[1:]))
        metrics = _unique(c[0] for c in cells)
        levels = _unique(c[1] for c in cells)
        coefficients = _unique(c[2] for c in cells)
        where = (f"[{len(cells)} table cells: {', '.join(levels)} level; {', '.join(coefficients)}; "
                 f"{len(metrics)} metric{'s' if len(metrics) > 1 else ''}: {', '.join(metrics)}]")
        folded.append((f"{text} {where}", category))
    return folded
