"""Run - and regenerate - every example in README.md and docs/*.md.

An *example* is a fenced block of one of three kinds:

- a **console session**: a block (language ``console`` or none) whose first line starts with ``$ ``.
  Each ``$ `` line (continued by a trailing backslash) is a shell command; the lines up to the next
  ``$ `` line are what it prints (standard output and error, as a terminal shows them, 100 columns wide);
- a **Python session**: a ``python`` block in doctest form (``>>> `` / ``... `` lines followed by the
  output), run with :mod:`doctest` (``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``);
- a **shell script**: a ``bash`` block, run as a whole; it must exit 0 (its output is not shown).

Every other fenced block (``csv``, ``json``, ``latex``, ``text``, ...) is data, not an example. A block
that cannot run in the test suite is marked on the line before its fence with
``<!-- example: skip REASON -->`` (the reason is required), and a block that takes longer than a few
seconds with ``<!-- example: slow -->`` (it then runs in ``make test-slow`` only). A console block whose
output may not be compared (it prints timings or process ids throughout) is marked
``<!-- example: exit-code -->``. A block marked ``<!-- example: file NAME -->`` (any language) is
written to the sandbox as the file ``NAME`` for the examples after it (a script the page then runs,
an input file the page shows).

All examples of one file run in order in one sandbox directory: a copy of ``docs/examples/`` (the user
files the examples read) in which ``../shared`` and ``tests`` resolve as in the repository's own
``docs/examples/`` (through the links ``docs/shared`` and ``docs/examples/tests``, :data:`LINKS`): the
examples run as written from ``docs/examples``. Outputs are compared after :func:`normalise` (timings, the sandbox path).

Usage::

    python scripts/doc_examples.py                 # check every file, print the differences
    python scripts/doc_examples.py --regenerate    # rewrite every example's output in place
    python scripts/doc_examples.py --regenerate docs/analyses.md [--slow]
"""
from __future__ import annotations

import argparse
import contextlib
import doctest
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
FIXTURES = ROOT / "docs" / "examples"
COLUMNS = 100
COMMAND_TIMEOUT = 600
_MARKER = re.compile(r"<!--\s*example:\s*(skip|slow|exit-code|file)\b\s*(.*?)\s*-->")
_FENCE = re.compile(r"^```(\S*)\s*$")
_DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


@dataclass
class Example:
    """One fenced block of a documentation file (``start``/``end``: 0-based lines of the fences)."""

    path: str
    kind: str  # "console", "python" or "bash"
    start: int
    end: int
    lines: list[str]
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.start + 1}"


def examples(path: str) -> list[Example]:
    """The examples of one Markdown file, in order; raises ValueError for a malformed marker."""
    text = (ROOT / path).read_text(encoding="utf-8").splitlines()
    out = []
    i = 0
    while i < len(text):
        m = _FENCE.match(text[i])
        if not m:
            i += 1
            continue
        lang = m.group(1)
        j = i + 1
        while j < len(text) and not text[j].startswith("```"):
            j += 1
        body = text[i + 1:j]
        marks = {}
        if i > 0:
            marker = _MARKER.search(text[i - 1])
            if marker:
                marks[marker.group(1)] = marker.group(2)
                if marker.group(1) in ("skip", "file") and not marker.group(2):
                    raise ValueError(f"{path}:{i}: `<!-- example: {marker.group(1)} -->` needs an argument")
        kind = "file" if "file" in marks else _kind(lang, body)
        if kind is not None:
            out.append(Example(path, kind, i, j, body, marks))
        i = j + 1
    return out


def _kind(lang: str, body: list[str]) -> str | None:
    first = next((line for line in body if line.strip()), "")
    if lang in ("", "console") and first.startswith("$ "):
        return "console"
    if lang == "python":
        return "python"
    if lang in ("bash", "sh", "shell"):
        return "bash"
    return None


# -- normalisation ------------------------------------------------------------------------------------

_TIMINGS = [
    (re.compile(r"(?<=\bin )\d+(\.\d+)? ?(s|ms|min)\b"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)? ?(s|ms|min)\b(?= (elapsed|remaining|total))"), "<time>"),
    (re.compile(r"\b\d+:\d\d:\d\d\b"), "<time>"),
    (re.compile(r"tcp://127\.0\.0\.1:\d+"), "tcp://127.0.0.1:<port>"),
]


def normalise(text: str, sandbox: str | None = None) -> str:
    """``text`` without what changes from run to run: timings, ports, the sandbox path, trailing blanks."""
    if sandbox:
        text = text.replace(sandbox + os.sep, "").replace(sandbox, ".")
    for pattern, repl in _TIMINGS:
        text = pattern.sub(repl, text)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def unwrapped(text: str) -> str:
    """``text`` with each line holding a ``<time>`` joined to the more-indented lines that follow it, blanks
    collapsed: how such a line wraps depends on how long the timing it replaced was."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        if "<time>" in line:
            indent = len(line) - len(line.lstrip())
            while j < len(lines) and lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > indent:
                j += 1
            line = " " * indent + " ".join(" ".join(part.split()) for part in lines[i:j])
        out.append(line)
        i = j
    return "\n".join(out)


# -- running ------------------------------------------------------------------------------------------

#: The links of the repository that make ``docs/examples`` a working directory (name -> where it points,
#: relative to the link): ``docs/shared`` (so ``../shared/data`` from docs/examples is the data beside the
#: repository) and ``docs/examples/tests`` (the test fixtures).
LINKS = {"docs/shared": "../../shared", "docs/examples/tests": "../../tests"}


@contextlib.contextmanager
def sandbox():
    """A copy of ``docs/examples`` at the same place in a mirror of the repository: ``../shared`` and
    ``tests`` resolve from it as they do from the repository's own ``docs/examples`` (:data:`LINKS`), so
    an example that runs here runs there, as the docs say."""
    top = Path(tempfile.mkdtemp(prefix="metaeval-docs-"))
    work = top / "docs" / "examples"
    if FIXTURES.is_dir():
        shutil.copytree(FIXTURES, work, ignore=lambda folder, names: ["tests"] if Path(folder) == FIXTURES else [])
    else:
        work.mkdir(parents=True)
    for link in LINKS:  # each link points where the repository's does (resolved: the mirror has no ../..)
        (top / link).symlink_to((ROOT / link).resolve())
    try:
        yield work
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    # the commands run this checkout's code (a relative PYTHONPATH such as `src` would not resolve in the
    # sandbox, and the interpreter's installed metaeval may be another checkout)
    paths = [str(ROOT / "src")] + [str(Path(p).resolve()) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(COLUMNS=str(COLUMNS), LINES="50", NO_COLOR="1", TERM="dumb", PYTHONHASHSEED="0")
    env.pop("FORCE_COLOR", None)
    return env


def console_commands(example: Example) -> list[tuple[str, list[str]]]:
    """``(command, expected output lines)`` of each ``$`` command of a console example."""
    out: list[tuple[str, list[str]]] = []
    lines = example.lines
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            raise ValueError(f"{example.where}: output before the first `$` command: {line!r}")
        command = [line[2:]]
        while command[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            command.append(lines[i])
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        out.append(("\n".join(command), expected))
    return out


def run_command(command: str, cwd: Path) -> tuple[int, str]:
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=_environment(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=COMMAND_TIMEOUT)
    return proc.returncode, proc.stdout


@dataclass
class Outcome:
    example: Example
    ok: bool
    message: str = ""
    new_lines: list[str] | None = None  # the regenerated block body
    seconds: float = 0.0


def run_console(example: Example, cwd: Path) -> Outcome:
    body: list[str] = []
    problems = []
    for command, expected in console_commands(example):
        code, output = run_command(command, cwd)
        got = normalise(output, str(cwd))
        body += ["$ " + command.split("\n")[0], *command.split("\n")[1:]]
        body += got.splitlines() if got else []
        if "exit-code" in example.marks:
            if code not in (0, 2):
                problems.append(f"$ {command}\nexit code {code}\n{got}")
            continue
        want = normalise("\n".join(expected))
        if unwrapped(got) != unwrapped(want):
            problems.append(f"$ {command}\n--- documented\n{want}\n--- now prints\n{got}")
    if "exit-code" in example.marks:
        body = example.lines
    return Outcome(example, not problems, "\n\n".join(problems), body)


def run_bash(example: Example, cwd: Path) -> Outcome:
    code, output = run_command("set -e\n" + "\n".join(example.lines), cwd)
    ok = code == 0
    return Outcome(example, ok, "" if ok else f"exit code {code}\n{normalise(output, str(cwd))}", example.lines)


def run_python(example: Example, cwd: Path, globs: dict) -> Outcome:
    parser = doctest.DocTestParser()
    text = "\n".join(example.lines) + "\n"
    parts = parser.parse(text, example.where)
    new: list[str] = []
    problems = []
    here = os.getcwd()
    os.chdir(cwd)
    try:
        for part in parts:
            if isinstance(part, str):
                new += [line for line in part.splitlines() if line.strip()] if part.strip() else []
                continue
            got = _execute(part.source, globs)
            got_text = normalise(got, str(cwd))
            checker = doctest.OutputChecker()
            if not checker.check_output(part.want, got, _DOCTEST_FLAGS) and \
                    normalise(part.want) != got_text:
                problems.append(f">>> {part.source.rstrip()}\n--- documented\n{part.want.rstrip()}\n--- now prints\n"
                                f"{got_text}")
            src = part.source.rstrip("\n").split("\n")
            new += [" " * part.indent + ">>> " + src[0]] + [" " * part.indent + "... " + s for s in src[1:]]
            new += [" " * part.indent + line for line in got_text.splitlines()] if got_text else []
    finally:
        os.chdir(here)
    return Outcome(example, not problems, "\n\n".join(problems), new)


def _execute(source: str, globs: dict) -> str:
    buffer = io.StringIO()

    def display(value):
        if value is not None:
            globs["_"] = value
            buffer.write(repr(value) + "\n")

    old_hook = sys.displayhook
    sys.displayhook = display
    try:
        # as a user's interpreter runs it: default warning filters (a test runner may turn warnings into
        # errors), warnings on stderr, not in the output
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            warnings.simplefilter("default")
            try:
                exec(compile(source, "<doc example>", "single"), globs)
            except Exception as error:  # shown like the interpreter's last line
                buffer.write("Traceback (most recent call last):\n  ...\n"
                             f"{type(error).__module__ + '.' if type(error).__module__ not in ('builtins',) else ''}"
                             f"{type(error).__qualname__}: {error}\n")
    finally:
        sys.displayhook = old_hook
    return buffer.getvalue()


def run_file(path: str, *, slow: bool) -> list[Outcome]:
    """Run the examples of ``path`` (the slow ones only if ``slow``); skipped ones are not run."""
    outcomes = []
    globs: dict = {"__name__": "__main__"}
    with sandbox() as cwd:
        for example in examples(path):
            if "skip" in example.marks or ("slow" in example.marks and not slow):
                continue
            start = time.perf_counter()
            if example.kind == "file":
                (cwd / example.marks["file"]).write_text("\n".join(example.lines) + "\n", encoding="utf-8")
                continue
            if example.kind == "console":
                outcome = run_console(example, cwd)
            elif example.kind == "bash":
                outcome = run_bash(example, cwd)
            else:
                outcome = run_python(example, cwd, globs)
            outcome.seconds = time.perf_counter() - start
            outcomes.append(outcome)
    return outcomes


def regenerate(path: str, outcomes: list[Outcome]) -> int:
    """Rewrite the bodies of ``outcomes``' examples in ``path``; returns how many changed."""
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()
    changed = 0
    for outcome in sorted(outcomes, key=lambda o: -o.example.start):
        ex = outcome.example
        if outcome.new_lines is None or outcome.new_lines == lines[ex.start + 1:ex.end]:
            continue
        lines[ex.start + 1:ex.end] = outcome.new_lines
        changed += 1
    (ROOT / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the outputs in place")
    parser.add_argument("--slow", action="store_true", help="also run the examples marked slow")
    parser.add_argument("--timings", action="store_true", help="print each example's run time")
    args = parser.parse_args(argv)
    failed = 0
    for path in args.files or DOC_FILES:
        path = str(Path(path).resolve().relative_to(ROOT)) if Path(path).is_absolute() else path
        outcomes = run_file(path, slow=args.slow)
        bad = [o for o in outcomes if not o.ok]
        if args.timings:
            for o in outcomes:
                print(f"  {o.seconds:7.1f} s  {o.example.where} ({o.example.kind})")
        if args.regenerate:
            n = regenerate(path, [o for o in outcomes if o.example.kind != "bash"])
            print(f"{path}: {len(outcomes)} examples run, {n} rewritten")
            failed += sum(1 for o in bad if o.example.kind == "bash")
        else:
            print(f"{path}: {len(outcomes)} examples run, {len(bad)} differ")
            failed += len(bad)
        for o in bad:
            if not args.regenerate or o.example.kind == "bash":
                print(f"\n== {o.example.where} ({o.example.kind})\n{o.message}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
