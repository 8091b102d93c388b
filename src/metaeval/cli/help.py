"""How `--help` pages are laid out: wrapped at the terminal's width (at most 80 columns) at spaces only.

click wraps help text with :class:`textwrap.TextWrapper`, which also breaks after a hyphen (``acc-`` /
``eq``); :class:`Formatter` wraps at spaces only, so a name such as ``kendall-b`` or ``PERM-BOTH`` is never
cut. :func:`fitted` gives a command (and every subcommand) this layout.
"""
from __future__ import annotations

import textwrap
from collections.abc import Sequence

import click


def wrap(text: str, width: int, initial_indent: str = "", subsequent_indent: str = "") -> str:
    """``text`` wrapped at spaces into lines of at most ``width`` characters (a longer word stays whole);
    paragraphs (blank lines) are kept, and a paragraph starting with click's ``\\b`` keeps its lines."""
    out = []
    for paragraph in text.split("\n\n"):
        if paragraph.startswith("\b"):
            lines = paragraph.splitlines()[1:]
            out.append("\n".join(f"{initial_indent if not n else subsequent_indent}{line}"
                                 for n, line in enumerate(lines)))
            continue
        out.append(textwrap.fill(" ".join(paragraph.split()), max(width, 20), initial_indent=initial_indent,
                                 subsequent_indent=subsequent_indent, break_on_hyphens=False,
                                 break_long_words=False))
        initial_indent = subsequent_indent
    return "\n\n".join(out)


class Formatter(click.HelpFormatter):
    """click's help formatter, wrapping at spaces only."""

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        self.write(wrap(text, self.width, indent, indent))
        self.write("\n")

    def write_dl(self, rows: Sequence[tuple[str, str]], col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first = min(max((len(term) for term, _ in rows), default=0), col_max) + col_spacing
        indent = " " * self.current_indent
        for term, description in rows:
            self.write(f"{indent}{term}")
            if not description:
                self.write("\n")
                continue
            hang = " " * (self.current_indent + first)
            if len(term) + col_spacing > first:
                self.write("\n" + wrap(description, self.width, hang, hang) + "\n")
            else:
                text = wrap(description, self.width, hang, hang)
                self.write(" " * (first - len(term)) + text[len(hang):] + "\n")


class Context(click.Context):
    """A click context whose help pages use :class:`Formatter`."""

    formatter_class = Formatter


def fitted(command: click.Command) -> click.Command:
    """``command`` and its subcommands with :class:`Context` (the help layout of this module)."""
    command.context_class = Context
    for sub in getattr(command, "commands", {}).values():
        fitted(sub)
    return command

