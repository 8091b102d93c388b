"""Output helpers of the analysis commands (delta, stability, topk, normality, gap, plan).

Each command renders its result in every output format (a terminal table, JSON, CSV, LaTeX, Markdown;
:mod:`metaeval.report.render`), to the terminal or atomically to ``--output``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from .. import defaults
from ..report.formats import interval, number
from ..report.render import frame_table, render_text
from ..report.render import signature_footer as footer
from ..vocabulary import OUTPUT_FORMATS
from .common import emit, output_width

__all__ = ["NumberList", "footer", "frame_table", "interval", "number", "output_options", "render"]


def output_options(command: Callable) -> Callable:
    """--format (every output format) and --output."""
    command = click.option("--output", type=click.Path(dir_okay=False),
                           help="Write to this file (atomically) instead of the terminal.")(command)
    command = click.option("--format", "fmt", type=click.Choice(OUTPUT_FORMATS), default=defaults.OUTPUT_FORMAT,
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


def render(result: Any, fmt: str, frame, table: Callable[[Any], Any], output: str | None, *,
           width: int | None = None) -> None:
    """Emit ``result`` in ``fmt`` (:func:`metaeval.report.render.render_text`; ``table(result)`` is the
    terminal layout) to the terminal or ``output``, at ``width`` (default: :func:`output_width`)."""
    width = output_width(output) if width is None else width
    emit(render_text(result, fmt, terminal=table, frame=frame, width=width), output)
