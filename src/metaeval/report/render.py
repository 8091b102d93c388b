"""One way to turn a result into text, in every output format of :data:`metaeval.vocabulary.OUTPUT_FORMATS`.

``table`` is a rich renderable printed without colour at a fixed width (the command's own layout, or a
plain table of the result's frame); ``json`` is the result's ``to_dict()``; ``csv`` its frame;
``latex`` / ``markdown`` paper-ready tables (:func:`metaeval.report.formats.to_paper`). Every command
that prints a result goes through :func:`render_text`, so every format works for every command.
"""
from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..vocabulary import check_format
from . import formats
from .escape import console

__all__ = ["TERMINAL_WIDTH", "WIDE", "frame_table", "render_text", "signature_footer"]

TERMINAL_WIDTH = 160
"""Width of the text tables (they are written to files and pipes as well as terminals)."""

WIDE = 200
"""Width of the wide tables: correlations, significance matrices, system pairs, the Delta grid."""


def frame_table(frame, *, title: str | None = None, columns: Sequence[str] | None = None, digits: int = 3) -> Table:
    """A rich table of (the chosen ``columns`` of) a pandas DataFrame, numbers by :func:`formats.number`."""
    from pandas.api.types import is_numeric_dtype

    columns = list(frame.columns if columns is None else columns)
    table = Table(title=title, title_justify="left")
    for column in columns:
        numeric = is_numeric_dtype(frame[column]) and frame[column].dtype != bool
        table.add_column(str(column), justify="right" if numeric else "left")
    for row in frame[columns].itertuples(index=False, name=None):
        table.add_row(*[formats.number(value, digits) for value in row])
    return table


def signature_footer(result: Any, notes: Sequence[str] = ()) -> list[Text]:
    """Dim notes and the result's signature, to print under a table."""
    return [Text(note, style="dim") for note in notes] + [Text(f"signature: {result.signature}", style="dim")]


def render_text(result: Any, fmt: str, *, terminal: Callable[[Any], Any] | None = None, frame: Any = None,
                width: int = TERMINAL_WIDTH) -> str:
    """``result`` as text in ``fmt``.

    Parameters
    ----------
    result
        A result object (``to_dict``, ``to_frame``, ``signature``).
    fmt : {'table', 'json', 'csv', 'latex', 'markdown'}
    terminal : callable, optional
        ``terminal(result)`` -> a rich renderable or a list of them, for ``fmt='table'``; default: the
        frame as a table with the signature under it.
    frame : pandas.DataFrame, optional
        The rows of ``csv``, ``latex``, ``markdown`` and of the default table (default ``result.to_frame()``).
    """
    fmt = check_format(fmt)
    if fmt == "json":
        return formats.to_json(result)
    if frame is None and (fmt != "table" or terminal is None):
        frame = result.to_frame()
    if fmt == "csv":
        return formats.to_csv(frame)
    if fmt in formats.PAPER_FORMATS:
        return formats.to_paper(result, fmt, frame)
    renderable = terminal(result) if terminal is not None else [frame_table(frame), *signature_footer(result)]
    if isinstance(renderable, (list, tuple)):
        renderable = Group(*renderable)
    buffer = io.StringIO()
    console(file=buffer, width=width, force_terminal=False).print(renderable)
    return buffer.getvalue()
