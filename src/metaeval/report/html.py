"""Rendering a :class:`~metaeval.report.build.Report` as one self-contained HTML page.

The page model is a list of :class:`Section` (text, facts, figures, tables, signatures); the jinja2
template in :mod:`metaeval.report.template` lays them out with autoescaping on.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._version import __version__
from .figures import Figure


@dataclass(frozen=True)
class Cell:
    """A table cell: ``text`` shown, ``sub`` a smaller second line, ``value`` the sort key."""

    text: str
    value: Any = None
    sub: str = ""
    css: str = ""


@dataclass(frozen=True)
class Table:
    """A table of the page; ``numeric[i]`` right-aligns column i; ``collapsed`` folds it in <details>;
    ``wide`` gives it the full width instead of a column of the section's table grid."""

    key: str
    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    numeric: tuple[bool, ...]
    sortable: bool = True
    collapsed: bool = False
    wide: bool = False


@dataclass(frozen=True)
class Section:
    """One section of the page (``key`` is its anchor and ``data-section`` attribute)."""

    key: str
    title: str
    question: str = ""
    paragraphs: tuple[str, ...] = ()
    facts: tuple[tuple[str, str], ...] = ()
    figures: tuple[Figure, ...] = ()
    tables: tuple[Table, ...] = ()
    notes: tuple[str, ...] = ()
    signatures: tuple[tuple[str, str], ...] = ()
    command: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def number_cell(value: Any, digits: int = 3, *, sub: str = "", css: str = "") -> Cell:
    """A numeric cell: 'n/a' (sorted last) for None or NaN, and then without ``sub`` (an interval or a
    note qualifies a value; there is none)."""
    from .formats import number

    text = number(value, digits)
    if text == "n/a":
        return Cell(text, "", "", css)
    return Cell(text, repr(float(value)), sub, css)


def beside_text(names) -> str:
    """``a``, ``a and b``, ``a, b and c``: the files written beside a page, as its footer names them."""
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" and {names[-1]}" if names else ""


def render_html(*, title: str, subtitle: str, sections: list[Section], beside=()) -> str:
    """The page: ``sections`` in order, every string autoescaped, figure SVG inlined. ``beside``: the names of
    the files written beside the page with the same numbers (the footer names exactly these; none: no claim)."""
    import jinja2
    from markupsafe import Markup

    from .template import CSS, SCRIPT, TEMPLATE

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=False)
    template = env.from_string(TEMPLATE)
    safe_sections = []
    for section in sections:
        figures = tuple(Figure(f.key, Markup(f.svg), f.alt, f.caption) for f in section.figures)
        safe_sections.append(Section(**{**section.__dict__, "figures": figures}))
    return template.render(title=title, subtitle=subtitle, sections=safe_sections, version=__version__,
                           css=Markup(CSS), script=Markup(SCRIPT), beside=beside_text(beside))
