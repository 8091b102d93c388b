"""Output helpers of the analysis commands.

Each command renders its result in every output format (a terminal table, JSON, CSV, LaTeX, Markdown;
:mod:`metaeval.report.render`), to the terminal or atomically to ``--output``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..report.formats import interval, number
from ..report.render import frame_table, render_text
from ..report.render import signature_footer as footer
from .common import NumberList, emit, output_options, output_width

__all__ = ["NumberList", "footer", "frame_table", "interval", "number", "output_options", "render"]


def render(result: Any, fmt: str, frame, table: Callable[[Any], Any], output: str | None, *,
           width: int | None = None) -> None:
    """Emit ``result`` in ``fmt`` (:func:`metaeval.report.render.render_text`; ``table(result)`` is the
    terminal layout) to the terminal or ``output``, at ``width`` (default: :func:`output_width`)."""
    width = output_width(output) if width is None else width
    emit(render_text(result, fmt, terminal=table, frame=frame, width=width), output)
