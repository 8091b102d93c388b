"""Terminal-safe text: the one place where strings are made harmless before the CLI prints them.

User strings (system, input, metric, annotator and file names, values quoted in error messages) reach
the terminal through tables, warnings, errors, progress bars and signatures. Two things could make
them act instead of show:

rich markup and emoji codes
    ``[bold red]x``, ``[link=...]``, ``[/]`` or ``:smile:`` in a name would restyle the output or
    raise ``rich.errors.MarkupError``. Every console the CLI prints with comes from :func:`console`,
    which never interprets markup, emoji codes or highlighting in any string it is given.
control characters
    ESC sequences, carriage returns, backspaces, C1 controls and the Unicode bidirectional overrides
    could move the cursor, recolour or rewrite the terminal, or reorder what is shown. :func:`safe_text`
    replaces each of them by one visible character of the same length: a C0 control by its Unicode
    "control picture" (ESC -> U+241B, CR -> U+240D), DEL by U+2421, a C1 control or a bidirectional
    control by U+FFFD. :func:`safe_line` also replaces newlines and tabs (for one-line messages).
    The console from :func:`console` applies :func:`safe_text` to every string and every ``Text`` it
    renders, so tables, titles, footers and progress descriptions need no escaping at their call site.

Machine formats keep the data as they are (JSON escapes control characters itself; LaTeX and
Markdown have their own escaping in :mod:`metaeval.report.formats`; the HTML report is autoescaped).
"""
from __future__ import annotations

import re

from typing import Any

__all__ = ["console", "safe_line", "safe_text"]

_REPLACEMENT = "\ufffd"
_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

_TEXT_TABLE = {code: 0x2400 + code for code in range(0x20) if chr(code) not in "\n\t"}
_TEXT_TABLE[0x7F] = 0x2421
_TEXT_TABLE.update({code: _REPLACEMENT for code in range(0x80, 0xA0)})
_TEXT_TABLE.update({ord(c): _REPLACEMENT for c in _BIDI_CONTROLS})
_LINE_TABLE = {**_TEXT_TABLE, ord("\n"): 0x2424, ord("\t"): 0x2409}


def safe_text(value: Any) -> str:
    """``str(value)`` with every control character but newline and tab made visible (same length)."""
    return str(value).translate(_TEXT_TABLE)


def safe_line(value: Any) -> str:
    """``str(value)`` on one line: every control character, newlines and tabs too, made visible."""
    return str(value).translate(_LINE_TABLE)


_TRAILING_BLANKS = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.M)
"""Blanks at the end of a printed line (before the style resets that may close it)."""


def console(**kwargs: Any):
    """A ``rich.console.Console`` (same arguments) that prints every string and ``Text`` as plain text:
    no markup, emoji codes or highlighting, control characters through :func:`safe_text`."""
    from rich.console import Console
    from rich.text import Text

    class SafeConsole(Console):
        def render_str(self, text: str, **options: Any) -> Text:
            options.update(markup=False, emoji=False, highlight=False)
            return super().render_str(safe_text(text), **options)

        def render(self, renderable: Any, options: Any = None):
            if isinstance(renderable, Text) and safe_text(renderable.plain) != renderable.plain:
                renderable = renderable.copy()
                renderable.plain = safe_text(renderable.plain)  # same length: the styles stay in place
            return super().render(renderable, options)

        def _render_buffer(self, buffer: Any) -> str:
            # rich pads titles and some lines to the full width; printed lines end at their last character
            text = super()._render_buffer(buffer)
            return _TRAILING_BLANKS.sub(r"\1", text)

    kwargs.setdefault("markup", False)
    kwargs.setdefault("emoji", False)
    kwargs.setdefault("highlight", False)
    return SafeConsole(**kwargs)
