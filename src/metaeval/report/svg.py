"""Matplotlib figures as inline SVG for the HTML report: one style, one palette, alt text, unique ids.

Every figure of the report goes through :func:`figure_svg`, which renders a matplotlib figure to SVG
with text kept as text, no timestamp (so the same inputs give the same bytes), an accessible name
(``role="img"``, ``aria-label`` and a ``<title>``) and element ids prefixed by the figure's key, so
several figures inlined in one page never share an id.
"""
from __future__ import annotations

import io
import re
from contextlib import contextmanager
from html import escape
from typing import Any, Iterator

# Okabe & Ito (2008) colour-blind-safe palette; the report uses these colours everywhere.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#8C6D31", "#999999")
HUMAN_COLOUR = "#222222"
COEFFICIENT_COLOURS = {
    "pearson": "#0072B2",
    "spearman": "#009E73",
    "kendall-b": "#D55E00",
    "kendall-a": "#CC79A7",
    "kendall-c": "#E69F00",
    "accuracy": "#56B4E9",
    "tau-eq": "#8C6D31",
    "acc-eq": "#999999",
}
LEVEL_COLOURS = {"system": "#0072B2", "summary": "#E69F00", "global": "#009E73", "by-system": "#CC79A7", "partial": "#D55E00"}
DIVERGING = "RdBu"
SEQUENTIAL = "viridis"

_STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "metaeval",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "legend.frameon": False,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
}


def colour_of(index: int) -> str:
    """The palette colour of the ``index``-th series (metrics keep their index across figures)."""
    return PALETTE[index % len(PALETTE)]


def text(label: Any) -> str:
    """A user-supplied label as literal matplotlib text (``$`` would start mathtext)."""
    return str(label).replace("\\", "\\\\").replace("$", r"\$")


@contextmanager
def new_figure(width: float, height: float, **subplots: Any) -> Iterator[tuple[Any, Any]]:
    """A matplotlib figure in the report style (Agg backend, no global state left behind)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(_STYLE):
        fig, axes = plt.subplots(figsize=(width, height), **subplots)
        try:
            yield fig, axes
        finally:
            plt.close(fig)


_ID = re.compile(r'\bid="([^"]+)"')


def save_figure(fig: Any, path: Any, *, dpi: int = 110) -> Any:
    """Write ``fig`` to ``path`` (PNG or SVG by its suffix) through the one atomic writer: rendered in memory,
    so no partial file is ever left beside it, and inside a command it joins the command's output set
    (:mod:`metaeval.runtime.output_sets`)."""
    from pathlib import Path

    from ..runtime.files import write_bytes_atomic

    path = Path(path)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=dpi, format=path.suffix[1:].lower())
    return write_bytes_atomic(path, buffer.getvalue())


def figure_svg(fig: Any, *, key: str, alt: str) -> str:
    """The SVG markup of ``fig`` for inlining: accessible name ``alt``, ids prefixed by ``key``."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context(_STYLE):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg"):]
    prefix = re.sub(r"[^A-Za-z0-9_-]", "-", key) + "-"
    ids = set(_ID.findall(svg))
    svg = _ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    if ids:
        pattern = re.compile(r"#(" + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True)) + r")\b")
        svg = pattern.sub(lambda m: f"#{prefix}{m.group(1)}", svg)
    label = escape(alt, quote=True)
    svg = svg.replace("<svg ", f'<svg role="img" aria-label="{label}" class="figure-svg" ', 1)
    head_end = svg.index(">") + 1
    return svg[:head_end] + f"<title>{escape(alt, quote=False)}</title>" + svg[head_end:]
