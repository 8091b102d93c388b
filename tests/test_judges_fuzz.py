"""Hostile and broken comparison files: `metaeval judge` exits 0 or 2 with one line, never a traceback."""
from __future__ import annotations

import contextlib
import csv
import io
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval.cli.main import main

COLUMNS = {"input": ["q1", "q2", "q3"], "first": ["A", "B", "C"], "second": ["A", "B", "C"],
           "judge": ["h", "j", "k"], "verdict": ["first", "second", "tie", "model_a"], "repeat": ["1", "2"],
           "first_length": ["10", "200"], "second_length": ["30", "150"]}
HOSTILE = ["[bold red]x", "<script>alert(1)</script>", "x\x1b[31mred\x1b[0m", "\u202eevil\u202c", "a,b", "", "NaN",
           "  padded  ", "-1", "maybe", "\u0085c1", "x" * 300]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
COMMANDS = [["rank", "--n-resamples", "5"], ["audit", "--n-resamples", "5"],
            ["agree", "--human", "h", "--human", "k", "--n-resamples", "5", "--n-permutations", "5"],
            ["alt-test", "--judge", "j", "--human", "h", "--human", "k", "--min-instances", "1"]]


@st.composite
def files(draw):
    names = draw(st.one_of(st.just(list(COLUMNS)), st.just(list(COLUMNS)[:5]),
                           st.lists(st.sampled_from([*COLUMNS, "other"]), min_size=1, max_size=8, unique=True)))
    rows = []
    for _ in range(draw(st.integers(0, 40))):
        pair = draw(st.sampled_from([("A", "B"), ("B", "A"), ("A", "C"), ("C", "A"), ("B", "C"), ("C", "B")]))
        cells = {n: draw(st.sampled_from(COLUMNS.get(n, ["z"]))) for n in names}
        cells.update({n: v for n, v in zip(("first", "second"), pair) if n in cells})
        rows.append([cells[n] for n in names])
    for _ in range(draw(st.integers(0, 2))):  # a few hostile cells
        if rows:
            r, c = draw(st.integers(0, len(rows) - 1)), draw(st.integers(0, len(names) - 1))
            rows[r][c] = draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=5)))
    return names, rows


@FUZZ
@given(table=files(), command=st.sampled_from(COMMANDS))
def test_broken_comparison_files(tmp_path_factory, table, command):
    names, rows = table
    path = tmp_path_factory.mktemp("fuzz") / "c.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(names)
        writer.writerows(rows)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["judge", command[0], "--comparisons", str(path), *command[1:]])
    text = err.getvalue()
    assert code in (0, 2), text
    assert "Traceback" not in text and not CONTROL.search(out.getvalue() + text)
    if code == 2:
        assert len([line for line in text.splitlines() if line.startswith("metaeval: error:")]) == 1, text
