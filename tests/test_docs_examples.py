"""Every example in README.md and docs/ runs, and prints what the page says (issue 13).

The examples and their markers are described in ``scripts/doc_examples.py``; after a change that moves a
documented number, ``python scripts/doc_examples.py --regenerate [--slow]`` rewrites the outputs.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("doc_examples", ROOT / "scripts" / "doc_examples.py")
doc_examples = importlib.util.module_from_spec(_spec)
sys.modules["doc_examples"] = doc_examples  # dataclasses look their module up
_spec.loader.exec_module(doc_examples)

FILES = doc_examples.DOC_FILES


def _report(outcomes) -> str:
    return "\n\n".join(f"== {o.example.where} ({o.example.kind})\n{o.message}" for o in outcomes if not o.ok)


def test_every_python_block_is_a_session_or_says_why_not():
    loose = [e.where for path in FILES for e in doc_examples.examples(path)
             if e.kind == "python" and "skip" not in e.marks and not any(l.startswith(">>> ") for l in e.lines)]
    assert not loose, f"python blocks without >>> (make them sessions or mark `<!-- example: skip REASON -->`): {loose}"


def test_markers_are_few_and_give_reasons():
    skipped = [(e.where, e.marks["skip"]) for path in FILES for e in doc_examples.examples(path) if "skip" in e.marks]
    assert all(reason for _, reason in skipped)
    assert len(skipped) <= 8, skipped


@pytest.mark.parametrize("path", FILES)
def test_examples_print_what_the_docs_say(path):
    outcomes = doc_examples.run_file(path, slow=False)
    assert all(o.ok for o in outcomes), _report(outcomes) + "\n\nregenerate: python scripts/doc_examples.py --regenerate " + path


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES)
def test_slow_examples_print_what_the_docs_say(path):
    outcomes = [o for o in doc_examples.run_file(path, slow=True) if "slow" in o.example.marks]
    assert all(o.ok for o in outcomes), _report(outcomes)


def test_normalise_removes_timings_and_the_sandbox():
    text = "scored 10 pairs in 44.4 s: done\nwrote /tmp/x/work/out.csv\n0.5 s elapsed  "
    assert doc_examples.normalise(text, "/tmp/x/work") == "scored 10 pairs in <time>: done\nwrote out.csv\n<time> elapsed"


def test_a_timed_line_compares_whatever_its_wrapping():
    """A line with a timing wraps where the timing's length puts it: the comparison joins it with its
    more-indented continuation lines, and nothing else."""
    short = "scored 9 in <time>: 4638 computed,\n  0 from the cache\n  rouge: a|b\nwrote x"
    long = "scored 9 in <time>: 4638\n  computed, 0 from the cache\n  rouge: a|b\nwrote x"
    assert doc_examples.unwrapped(short) == doc_examples.unwrapped(long)
    assert doc_examples.unwrapped(short) != doc_examples.unwrapped(short.replace("4638", "4639"))
    assert doc_examples.unwrapped("a\n  b") == "a\n  b"


def test_no_console_example_documents_a_usage_error():
    """A command written with '...' in the docs runs and prints click's usage error; regenerating the docs
    then documents the error instead of the result (it happened in analyses.md)."""
    bad = [(e.where, command) for path in FILES for e in doc_examples.examples(path) if e.kind == "console"
           for command, expected in doc_examples.console_commands(e)
           if any("(see 'metaeval" in line or line.startswith("Usage: metaeval") for line in expected)]
    assert not bad, bad


def test_figure3_run_is_shown_identically_where_it_is_not_run():
    """reproductions.md shows the 200-trial Figure 3 run without running it again; simulations.md runs it."""
    def block(path):
        command = "$ metaeval simulate power --dataset summeval --texts-dir ../shared/data --n-trials 200"
        found = [e.lines for e in doc_examples.examples(path) if e.lines and e.lines[0] == command]
        assert len(found) == 1, (path, len(found))
        return found[0]
    assert block("docs/reproductions.md") == block("docs/simulations.md")


def test_docs_examples_is_the_working_directory_the_docs_say():
    """The docs say their examples run in docs/examples: ``../shared`` and ``tests`` resolve there (they did
    only in the test sandbox), and the sandbox resolves them the same way."""
    examples = ROOT / "docs" / "examples"
    assert (examples / ".." / "shared").resolve() == (ROOT.parent / "shared").resolve()
    assert (examples / "tests").resolve() == (ROOT / "tests").resolve()
    assert (examples / ".." / "shared" / "data" / "summeval").is_dir()
    with doc_examples.sandbox() as work:
        assert work.name == "examples" and work.parent.name == "docs"
        assert (work / ".." / "shared").resolve() == (examples / ".." / "shared").resolve()
        assert (work / "tests").resolve() == (examples / "tests").resolve()
        assert sorted(p.name for p in work.iterdir()) == sorted(p.name for p in examples.iterdir())
    code, out = doc_examples.run_command("metaeval correlate --scores my.csv --human relevance --metric rouge"
                                         " --level system --ci none --format csv | head -2", examples)
    assert code == 0 and out.startswith("metric,"), out
