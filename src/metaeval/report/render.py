"""One way to turn a result into text, in every output format of :data:`metaeval.vocabulary.OUTPUT_FORMATS`.

``table`` is a rich renderable printed without colour at a fixed width (the command's own layout, or a
plain table of the result's frame); ``json`` is the result's ``to_dict()``; ``csv`` its frame;
``latex`` / ``markdown`` paper-ready tables (:func:`metaeval.report.formats.to_paper`). Every command
that prints a result goes through :func:`render_text`, so every format works for every command.
"""
from __future__ import annotations


import io
import re
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..vocabulary import check_format
from . import formats
from .escape import console

__all__ = ["TERMINAL_WIDTH", "WIDE", "ColumnBlocks", "SignatureLines", "column_blocks", "frame_table", "render_text",
           "signature_footer"]

TERMINAL_WIDTH = 100
"""Width of the text tables written to files and pipes (on a terminal the CLI uses the terminal's width,
``cli.common.output_width``). Decision: 100, so that every layout is designed to fit a common terminal."""

WIDE = TERMINAL_WIDTH
"""Kept for callers: wide tables (significance matrices, the Delta grid) fit the same width, in column
blocks (:func:`column_blocks`) rather than a wider page."""


class SignatureLines:
    """``signature: a|b|c...`` wrapped at the ``|`` between fields (a field longer than a line at its
    commas), never inside a name; continuation lines are indented by two spaces. Dim."""

    def __init__(self, signature: Any, label: str = "signature: "):
        self.text, self.label = str(signature), label

    def pieces(self, width: int) -> list[str]:
        out = []
        for n, field in enumerate(self.text.split("|")):
            field = field if n == 0 else "|" + field
            if len(field) + 2 <= width:
                out.append(field)
                continue
            items = re.split(r",(?! )", field)  # a comma followed by a space is text ("stream (0, 1)"), kept whole
            for k, item in enumerate(items):
                out.extend(_folded(item if k == len(items) - 1 else item + ",", width - 2))
        return out

    def lines(self, width: int) -> list[str]:
        width = max(20, width)
        lines, line = [], self.label
        for piece in self.pieces(width):
            if len(line) + len(piece) > width and line.strip():
                lines.append(line)
                line = "  " + piece
            else:
                line += piece
        return lines + [line]

    def __rich_console__(self, console_: Any, options: Any):
        for line in self.lines(options.max_width):
            yield Text(line, style="dim", no_wrap=True, overflow="fold")


def _folded(piece: str, width: int) -> list[str]:
    """``piece`` cut into parts of at most ``width`` characters, each cut between two non-space characters (after
    punctuation where one is near), so that no part starts or ends with a space: joined again without
    separator, the parts give ``piece`` back (a signature is read back that way, never cropped)."""
    parts = []
    while len(piece) > width:
        cuts = [i for i in range(width, 0, -1) if piece[i - 1] != " " and piece[i] != " "]
        if not cuts:
            break
        near = [i for i in cuts if i > width - 30]
        cut = next((i for marks in (";", ":=)") for i in near if piece[i - 1] in marks), cuts[0])
        parts.append(piece[:cut])
        piece = piece[cut:]
    return parts + [piece]


def column_blocks(build: Callable[[Sequence[int]], Table], n_columns: int, width: int,
                  wrapping: bool = False) -> list[Table]:
    """A table too wide for ``width`` as several tables of consecutive columns, each as wide as fits.

    ``build(columns)`` makes the table of those (0-based) data columns, repeating its key columns; at
    least one data column goes in each block. ``wrapping``: the table has columns whose cells wrap (lists of
    names), so a block fits when its narrowest layout (those cells wrapped at their words) does.
    """
    measure = console(file=io.StringIO(), width=100_000)
    blocks, start = [], 0
    while start < n_columns:
        end = start + 1
        while end < n_columns and getattr(measure.measure(build(range(start, end + 1))),
                                          "minimum" if wrapping else "maximum") <= width:
            end += 1
        blocks.append(build(range(start, end)))
        start = end
    return blocks


class ColumnBlocks:
    """A renderable: :func:`column_blocks` at the width it is printed at (each block after a blank line)."""

    def __init__(self, build: Callable[[Sequence[int]], Table], n_columns: int, wrapping: bool = False):
        self.build, self.n_columns, self.wrapping = build, n_columns, wrapping

    def __rich_console__(self, console_: Any, options: Any):
        for n, table in enumerate(column_blocks(self.build, self.n_columns, options.max_width, self.wrapping)):
            if n:
                yield Text("")
            yield table


class FirstThatFits:
    """A renderable: the first of ``choices`` (:class:`ColumnBlocks`) whose whole table fits the width it is
    printed at in one block, else the last (which may split)."""

    def __init__(self, *choices: ColumnBlocks):
        self.choices = choices

    def __rich_console__(self, console_: Any, options: Any):
        measure = console(file=io.StringIO(), width=100_000)
        for choice in self.choices[:-1]:
            if measure.measure(choice.build(range(choice.n_columns))).maximum <= options.max_width:
                yield choice
                return
        yield self.choices[-1]


def frame_table(frame, *, title: str | None = None, columns: Sequence[str] | None = None, digits: int = 3,
                wrap: Sequence[str] = ()):
    """A rich table of (the chosen ``columns`` of) a pandas DataFrame, numbers by :func:`formats.number`,
    p-values by :func:`formats.pvalue_text` (at the resolution ``frame.attrs['n_resamples']``).

    Printed wider than the console, it splits into column blocks (:class:`ColumnBlocks`) that repeat the
    leading text columns, instead of truncating headers and cells. The columns named in ``wrap`` (lists of
    names) wrap their cells at the words instead, every other column stays on one line; the table splits only
    when it does not fit even so.
    """
    from pandas.api.types import is_numeric_dtype

    columns = list(frame.columns if columns is None else columns)
    numeric = [is_numeric_dtype(frame[c]) and frame[c].dtype != bool for c in columns]
    keys = 0
    while keys < len(columns) - 1 and not numeric[keys]:
        keys += 1
    k = frame.attrs.get("n_resamples")
    shown = [(lambda v: formats.pvalue_text(v, k, digits)) if numeric[c] and formats.PVALUE_COLUMN.search(str(name))
             else (lambda v: formats.number(v, digits)) for c, name in enumerate(columns)]
    rows = [[show(value) for show, value in zip(shown, row)] for row in frame[columns].itertuples(index=False, name=None)]

    def build(chosen) -> Table:
        shown = list(range(keys)) + [keys + c for c in chosen]
        table = Table(title=title if not chosen or chosen[0] == 0 else None, title_justify="left")
        for c in shown:
            table.add_column(str(columns[c]), justify="right" if numeric[c] else "left",
                             no_wrap=c < keys or bool(wrap) and columns[c] not in wrap)
        for row in rows:
            table.add_row(*[row[c] for c in shown])
        return table

    return ColumnBlocks(build, len(columns) - keys, wrapping=bool(wrap))


def signature_footer(result: Any, notes: Sequence[str] = ()) -> list[Text]:
    """Dim notes and the result's signature, to print under a table."""
    return [Text(note, style="dim") for note in notes] + [SignatureLines(result.signature)]


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
    if frame is not None and not frame.attrs.get("n_resamples") and formats.resolution(result):
        frame.attrs["n_resamples"] = formats.resolution(result)  # the resolution its p-values print at
    if fmt == "csv":
        return formats.to_csv(frame, n_resamples=formats.resolution(result))
    if fmt in formats.PAPER_FORMATS:
        return formats.to_paper(result, fmt, frame)
    renderable = terminal(result) if terminal is not None else [frame_table(frame), *signature_footer(result)]
    if isinstance(renderable, (list, tuple)):
        renderable = Group(*renderable)
    buffer = io.StringIO()
    console(file=buffer, width=width, force_terminal=False).print(renderable)
    return buffer.getvalue()
