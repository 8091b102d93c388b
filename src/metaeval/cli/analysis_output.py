"""Output helpers of the analysis commands (delta, stability, topk, normality, gap, plan).

Each command renders its result as a terminal table (rich), as JSON (the result's ``to_dict()``) or as
CSV (the result's main DataFrame), to the terminal or atomically to ``--output``.
"""
from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from typing import Any

import click
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from ..report import formats
from .common import emit

ANALYSIS_FORMATS = ("table", "json", "csv")


def output_options(command: Callable) -> Callable:
    """--format table|json|csv and --output."""
    command = click.option("--output", type=click.Path(dir_okay=False),
                           help="Write to this file (atomically) instead of the terminal.")(command)
    command = click.option("--format", "fmt", type=click.Choice(ANALYSIS_FORMATS), default="table",
                           show_default=True, help="Output format.")(command)
    return command


class NumberList(click.ParamType):
    """A comma-separated list of numbers, e.g. ``10,20,50``."""

    def __init__(self, kind: type = float):
        self.kind = kind
        self.name = "integers" if kind is int else "numbers"

    def convert(self, value: Any, param, ctx) -> tuple:
        if isinstance(value, tuple):
            return value
        try:
            return tuple(self.kind(v) for v in str(value).split(",") if v.strip())
        except ValueError:
            self.fail(f"must be comma-separated {self.name}; got {value!r}.", param, ctx)


def number(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != 0 and (abs(value) < 0.5 * 10 ** -digits or abs(value) >= 10 ** 6):
            return f"{value:.{digits}g}"
        return f"{value:.{digits}f}"
    return str(value)


def frame_table(frame, *, title: str, columns: Sequence[str], digits: int = 3) -> Table:
    """A rich table of the chosen columns of a DataFrame, numbers rounded."""
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, justify="left" if frame[column].dtype == object else "right")
    for row in frame.to_dict(orient="records"):
        table.add_row(*[number(_python(row[c]), digits) for c in columns])
    return table


def _python(value: Any) -> Any:
    if hasattr(value, "item"):
        value = value.item()
    return value


def interval(low: Any, high: Any, digits: int = 2) -> str:
    return f"[{number(_python(low), digits)}, {number(_python(high), digits)}]"


def footer(result: Any, notes: Sequence[str] = ()) -> list[Text]:
    return [Text(note, style="dim") for note in notes] + [Text(f"signature: {result.signature}", style="dim")]


def render(result: Any, fmt: str, frame, table: Callable[[Any], Any], output: str | None, *, width: int = 160) -> None:
    """Emit ``result`` as a table (``table(result)`` gives the rich renderable), JSON or CSV."""
    if fmt == "json":
        text = formats.to_json(result)
    elif fmt == "csv":
        text = formats.to_csv(frame)
    else:
        buffer = io.StringIO()
        renderable = table(result)
        if isinstance(renderable, (list, tuple)):
            renderable = Group(*renderable)
        Console(file=buffer, width=width, force_terminal=False).print(renderable)
        text = buffer.getvalue()
    emit(text, output)
