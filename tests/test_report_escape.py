"""report/escape.py: the one place that makes user strings terminal-safe."""
from __future__ import annotations

import io

from rich.table import Table
from rich.text import Text

from metaeval.report.escape import console, safe_line, safe_text


def test_safe_text_makes_controls_visible_one_for_one():
    assert safe_text("a\x1b[31mb\rc\x7f\x85\u202ed") == "a\u241b[31mb\u240dc\u2421\ufffd\ufffdd"
    assert safe_text("two\nlines\tand tab") == "two\nlines\tand tab"
    assert safe_line("two\nlines\tand tab") == "two\u2424lines\u2409and tab"
    assert safe_text("[bold]x[/] <b> :smile: \u05e9") == "[bold]x[/] <b> :smile: \u05e9"


def test_console_prints_markup_and_controls_as_text():
    buffer = io.StringIO()
    table = Table(title="[/] title")
    table.add_column("[bold red]x")
    table.add_row("[link=https://example.invalid]y")
    table.add_row(Text("z\x1b[2J", style="bold"))
    console(file=buffer, width=80, force_terminal=False).print(table, "[/]", ":smile:")
    out = buffer.getvalue()
    assert "[/] title" in out and "[bold red]x" in out and "[link=https://example.invalid]y" in out
    assert "z\u241b[2J" in out and "\x1b" not in out and ":smile:" in out
