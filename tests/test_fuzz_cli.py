"""Hostile and broken input: a fuzz harness over every command that reads user files (in-process).

Hypothesis writes score, human-judgment, coverage, SCU, votes, candidate / reference and text files with
hostile names (rich markup, HTML/JS, control characters, RTL, 10k characters), empty and header-only
files, mixed types, decimal commas, NaN / inf, duplicates, a single system or input, truncated files,
gzip under a plain extension, a BOM and CRLF line ends, then runs the command. Every run must exit 0 or
2, print no traceback and no terminal control character, leave no partial output file, and an exit-2
message is one line naming the file (or the option) and what it must be. Bounded and reproducible:
``derandomize=True``, a fixed number of examples per command, no network.
"""
from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import re
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaeval.cli.main import main
from metaeval.report.escape import safe_line

HOSTILE = [
    "[/]", "[bold red]x", "[link=https://example.invalid]click[/link]", "<script>alert(1)</script>",
    "x\x1b[31mred\x1b[0m", "over\rwrite", "\u202eevil\u202c", "\u05e9\u05dc\u05d5\u05dd", ":smile:", "x" * 10_000,
    "-m", "a,b", '"quoted"', "tab\there", "back\\slash", "{0}%s", "NaN", "1e3", "  padded  ", "new\nline",
    "\x00nul", "\u0085c1",
]
PLAIN = ["s1", "s2", "doc-1", "doc 2", "7", "Älpha"]
NAMES = st.one_of(st.sampled_from(HOSTILE), st.sampled_from(PLAIN),
                  st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8))
NUMBERS = st.one_of(st.floats(-5, 5, allow_nan=False), st.integers(-3, 5))
ODD_VALUES = st.sampled_from(["", "NaN", "inf", "-Infinity", "1,5", "abc", "None", "null", "1e400", "0x10", " 2 ",
                              "true", "[1, 2]", "\x1b[31m3"])
CELLS = st.one_of(NUMBERS, NUMBERS, NUMBERS, ODD_VALUES, st.none())
MANGLES = st.sampled_from(["none"] * 6 + ["bom", "crlf", "gzip-plain-extension", "gzip", "truncated-gzip",
                                          "truncated", "header-only", "empty", "not-utf8"])
FORMATS = st.sampled_from(["csv", "csv", "tsv", "jsonl"])
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
TEMPLATE = re.compile(r"\b(must|needs?)\b.*; got\b")  # "<what> must <constraint>; got <value>."
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None, print_blob=True,
                suppress_health_check=list(HealthCheck))


CLEAN_MANGLES = st.sampled_from(["none", "none", "bom", "crlf", "gzip-plain-extension", "gzip"])
RESERVED = {"system", "input", "annotator", "scorer", "score", "summarizer_id", "instance_id"}


@st.composite
def tables(draw, columns, values, *, rows=("system", "input")):
    """(header, rows, clean): a cross product of labels with values; unless ``clean``, a few corruptions.

    Half of the tables are clean (numbers only, at least 3 distinct labels on the first axis), so that the
    commands also run to the end on hostile names; the others get odd values and broken rows."""
    clean = draw(st.booleans())
    labels = {}
    for k, key in enumerate(rows):
        names = st.one_of(st.sampled_from(PLAIN), NAMES)
        if clean:
            labels[key] = draw(st.lists(names.filter(lambda x: x.strip() and "\r" not in x and "\x00" not in x),
                                        min_size=3 if k == 0 else 2, max_size=4, unique_by=str.strip))
        else:
            labels[key] = draw(st.lists(names, min_size=1, max_size=3))
    header = list(columns)
    if not clean and draw(st.integers(0, 4)) == 0:  # a hostile or missing column name
        header[draw(st.integers(0, len(header) - 1))] = draw(NAMES)
    keys = [{}]
    for key in rows:
        keys = [dict(k, **{key: label}) for k in keys for label in labels[key]]
    body = [[key[c] if c in key else draw(NUMBERS if clean and c not in values else values.get(c, CELLS))
             for c in columns] for key in keys]
    for _ in range(0 if clean else draw(st.integers(0, 2))):  # a duplicated row, a hostile cell, a dropped row
        if not body:
            break
        kind = draw(st.sampled_from(["duplicate", "cell", "drop"]))
        i = draw(st.integers(0, len(body) - 1))
        if kind == "duplicate":
            body.append(list(body[i]))
        elif kind == "cell":
            body[i][draw(st.integers(0, len(header) - 1))] = draw(st.one_of(NAMES, ODD_VALUES))
        else:
            body.pop(i)
    return header, body, clean


def serialize(header, body, fmt: str, nested: dict[str, str] | None = None) -> bytes:
    if fmt == "jsonl":
        lines = []
        for row in body:
            record = dict(zip(header, row))
            for key, kind in (nested or {}).items():
                if key in record and kind == "list" and isinstance(record[key], str):
                    record[key] = [record[key]]
            lines.append(json.dumps(record))
        return ("\n".join(lines) + "\n").encode("utf-8")
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="," if fmt == "csv" else "\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows([["" if v is None else v for v in row] for row in body])
    return buffer.getvalue().encode("utf-8")


def mangle(data: bytes, how: str, draw) -> tuple[bytes, str]:
    """The file's bytes after ``how``, and the extension suffix to add (``.gz`` or nothing)."""
    if how == "bom":
        return b"\xef\xbb\xbf" + data, ""
    if how == "crlf":
        return data.replace(b"\n", b"\r\n"), ""
    if how == "gzip-plain-extension":
        return gzip.compress(data, mtime=0), ""
    if how == "gzip":
        return gzip.compress(data, mtime=0), ".gz"
    if how == "truncated-gzip":
        packed = gzip.compress(data, mtime=0)
        return packed[: max(2, len(packed) // 2)], ".gz"
    if how == "truncated":
        return data[: draw(st.integers(0, max(0, len(data) - 1)))], ""
    if how == "header-only":
        return data.split(b"\n", 1)[0] + b"\n", ""
    if how == "empty":
        return b"", ""
    if how == "not-utf8":
        return data[: len(data) // 2] + b"\xff\xfe" + data[len(data) // 2:], ""
    return data, ""


def file_name(draw, stem_default: str, extension: str) -> str:
    stem = draw(st.one_of(st.just(stem_default), st.sampled_from(HOSTILE)))
    stem = re.sub(r"[/\x00]", "_", stem)[:60] or stem_default
    return stem + extension


def write(draw, directory: Path, stem: str, table, fmt, nested=None) -> Path:
    header, body, clean = table
    data, suffix = mangle(serialize(header, body, fmt, nested), draw(CLEAN_MANGLES if clean else MANGLES), draw)
    path = directory / file_name(draw, stem, f".{fmt}{suffix}")
    path.write_bytes(data)
    return path


def run(argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def check(argv, files, output: Path | None, directory: Path) -> int:
    """Run ``argv`` and check the contract; returns the exit code."""
    code, out, err = run(argv)
    assert code in (0, 2), (code, err[-2000:])
    assert "Traceback" not in out + err
    assert not CONTROL.search(out + err), repr(CONTROL.search(out + err))
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        line = lines[0]
        assert line.startswith("metaeval: error: "), line
        assert TEMPLATE.search(line), line  # what to fix
        if not line.startswith("metaeval: error: `"):  # not an option's error: names the file
            assert any(safe_line(f) in line for f in map(str, files)), line
        if output is not None:
            assert not output.exists()
    assert not [p for p in directory.rglob("*.tmp")]
    return code


# -- score files -----------------------------------------------------------------------------------
@st.composite
def score_files(draw, directory: Path):
    metric = draw(NAMES.filter(lambda x: x not in RESERVED))
    human = draw(NAMES.filter(lambda x: x not in RESERVED and x != metric))
    fmt = draw(FORMATS)
    header, body, clean = draw(tables(["system", "input", metric, human], {}))
    if draw(st.booleans()):  # the long layout: one row per (system, input, scorer)
        body = [[row[0], row[1], name, value] for row in body for name, value in zip(header[2:], row[2:])]
        header = ["system", "input", "scorer", "score"]
    table = (header, body, clean)
    return write(draw, directory, "scores", table, fmt), metric, human


SCORE_COMMANDS = {
    "correlate": lambda m, h: ["correlate", f"--human={h}", "--ci", "none"],
    "correlate-boot": lambda m, h: ["correlate", f"--human={h}", f"--metric={m}", "--n-resamples", "5",
                                    "--format", "json"],
    "compare": lambda m, h: ["compare", f"--human={h}", "--n-resamples", "5"],
    "delta": lambda m, h: ["delta", f"--human={h}", "--n-resamples", "5"],
    "stability": lambda m, h: ["stability", f"--human={h}", "--n-repetitions", "2", "--n-resamples", "5"],
    "topk": lambda m, h: ["topk", f"--human={h}", "--n-resamples", "5"],
    "verdicts": lambda m, h: ["verdicts", f"--human={h}", "--n-resamples", "5"],
    "systems": lambda m, h: ["systems", f"--scorer={h}", "--n-resamples", "5"],
    "gap": lambda m, h: ["gap", f"--human={h}", "--n-resamples", "5"],
    "plan": lambda m, h: ["plan", f"--human={h}", f"--metric={m}", "--n-repetitions", "2", "--n-resamples", "5"],
    "normality": lambda m, h: ["normality", f"--human={h}"],
    "simulate-coverage": lambda m, h: ["simulate", "coverage", f"--human={h}", f"--metric={m}", "--n-trials", "2",
                                       "--n-resamples", "5"],
    "human-agreement": lambda m, h: ["human", "agreement", f"--scorer={h}"],
    "human-normalize": lambda m, h: ["human", "normalize", f"--scorer={h}"],
    "human-sample": lambda m, h: ["human", "sample", f"--metric={m}", "--n", "1"],
    "correlate-columns": lambda m, h: ["correlate", "--system-column", "system", "--input-column", "input",
                                      f"--human-column={h}", "--ci", "none"],
    "mt": lambda m, h: ["mt", f"--human={h}", "--task", "system/pearson", "--n-resamples", "5"],
}


@pytest.mark.parametrize("command", list(SCORE_COMMANDS))
@FUZZ
@given(data=st.data())
def test_score_file_commands(command, data):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        path, metric, human = data.draw(score_files(directory))
        output = directory / "out" / "result.txt" if data.draw(st.booleans()) else None
        argv = SCORE_COMMANDS[command](metric, human)
        words = 2 if command.startswith(("simulate", "human")) else 1
        argv[words:words] = ["--scores", f"en-de={path}" if command == "mt" else path]
        if output is not None:
            argv += ["--output", output]
        check(argv, [path], output, directory)


@pytest.mark.parametrize("command", ["correlate", "compare", "delta", "gap", "human-normalize", "mt"])
@settings(max_examples=8, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_output_equal_to_the_input_is_refused_and_the_input_kept(command, data):
    """Issue 22 item 1 in the harness: whatever the file holds, ``--output`` naming the input (or a link to it)
    exits 2 in one line naming both, and the input's bytes are unchanged."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        path, metric, human = data.draw(score_files(directory))
        before = Path(path).read_bytes()
        output = Path(path)
        if data.draw(st.booleans()):
            output = directory / ("link" + Path(path).suffix)
            output.symlink_to(path)
        argv = SCORE_COMMANDS[command](metric, human)
        words = 2 if command.startswith(("simulate", "human")) else 1
        argv[words:words] = ["--scores", f"en-de={path}" if command == "mt" else path]
        code, out, err = run([*argv, "--output", output])
        assert code == 2 and "Traceback" not in out + err, err[-2000:]
        assert len(err.strip().splitlines()) == 1 and "is the same file as --scores" in err, err
        assert Path(path).read_bytes() == before


@FUZZ
@given(data=st.data())
def test_report_on_score_files(data):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        path, metric, human = data.draw(score_files(directory))
        output = directory / "report"
        code = check(["report", "--scores", path, f"--human={human}", "--n-resamples", "5", "--repetitions", "2",
                      "--analysis", "none", "--output", output], [path], None, directory)
        if code == 2:
            assert not output.exists()


# -- human judgment files -----------------------------------------------------------------------------
@FUZZ
@given(data=st.data())
def test_human_judgments(data):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        table = data.draw(tables(["system", "input", "annotator", "score"], {}, rows=("system", "input", "annotator")))
        path = write(data.draw, directory, "judgments", table, data.draw(FORMATS))
        check(["human", "normalize", "--judgments", path], [path], None, directory)


@FUZZ
@given(data=st.data())
def test_human_retention(data):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        coverage = st.one_of(st.sampled_from(["all", "most", "some", "hardly any", "none", "ALL", "0.5", "2"]), CELLS)
        table = data.draw(tables(["system", "document", "unit", "coverage"], {"coverage": coverage},
                                 rows=("system", "document", "unit")))
        path = write(data.draw, directory, "coverage", table, data.draw(FORMATS))
        output = directory / "retention.json"
        check(["human", "retention", "--judgments", path, "--format", "json", "--output", output], [path], output,
              directory)


@FUZZ
@given(data=st.data())
def test_human_votes(data):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        table = data.draw(tables(["document", "scu", "text"], {"text": st.one_of(NAMES, st.just("BLANK"))},
                                 rows=("document", "scu")))
        scus = write(data.draw, directory, "scus", table, "csv")
        vote = st.one_of(st.sampled_from(["p", "n", "present", "absent", "1", "0", "maybe", ""]), CELLS)
        table = data.draw(tables(["document", "system", "scu", "vote", "worker"], {"vote": vote},
                                 rows=("document", "system", "scu", "worker")))
        votes = write(data.draw, directory, "votes", table, "csv")
        command = data.draw(st.sampled_from([["human", "pyramid"], ["human", "agreement"]]))
        check([*command, "--scus", scus, "--votes", votes], [scus, votes], None, directory)


# -- texts --------------------------------------------------------------------------------------------
@FUZZ
@given(data=st.data())
def test_score_candidates_and_references(data):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        text = st.one_of(NAMES, st.just("the cat sat on the mat ."), CELLS)
        table = data.draw(tables(["system", "input", "candidate"], {"candidate": text}))
        candidates = write(data.draw, directory, "candidates", table, "jsonl")
        table = data.draw(tables(["input", "references"], {"references": text}, rows=("input",)))
        references = write(data.draw, directory, "references", table, "jsonl", {"references": "list"})
        output = directory / "scores.csv"
        check(["score", "--candidates", candidates, "--references", references, "--metric", "wer", "--output", output,
               "--no-progress"], [candidates, references], output, directory)


@FUZZ
@given(data=st.data())
def test_simulate_power_texts(data):
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        (directory / "summeval").mkdir()
        text = st.one_of(NAMES, st.just("the cat sat on the mat ."), CELLS)
        header, body, _ = data.draw(tables(["doc_id", "system_id", "summary", "references"],
                                           {"summary": text, "references": text}, rows=("doc_id", "system_id")))
        data_bytes, _ = mangle(serialize(header, body, "jsonl", {"references": "list"}), data.draw(MANGLES), data.draw)
        path = directory / "summeval" / "texts.jsonl"
        path.write_bytes(data_bytes)
        output = directory / "power.json"
        code = check(["simulate", "power", "--dataset", "summeval", "--texts-dir", directory, "--n-trials", "1",
                      "--n-resamples", "5", "--proportion", "0.5", "--format", "json", "--output", output],
                     [path], output, directory)
        assert code == 2  # a few fuzzed lines never cover the 16 x 100 SummEval cells


# -- the two examples and the rendering of hostile names ----------------------------------------
def good_scores(path: Path, metric: str, human: str = "human") -> Path:
    rows = [{"system": f"s{i}", "input": f"d{j}", metric: (i * 7 + j * 3) % 5 + i, human: i + j % 2}
            for i in range(4) for j in range(3)]
    pd.DataFrame(rows).to_csv(path, index=False, quoting=csv.QUOTE_ALL)
    return path


@pytest.mark.parametrize("metric", ["[/]", "[bold red]x", "[link=https://example.invalid]y", "a\x1b[2Jb\rc",
                                    ":smile:", "\u202eevil"])
def test_hostile_metric_names_print_as_text(tmp_path, metric):
    path = good_scores(tmp_path / "r.csv", metric)
    code, out, err = run(["correlate", "--scores", path, "--human", "human", "--ci", "none"])
    assert code == 0, err
    assert safe_line(metric) in out and not CONTROL.search(out)


def test_malformed_texts_file_is_exit_2(tmp_path):
    (tmp_path / "summeval").mkdir()
    path = tmp_path / "summeval" / "texts.jsonl"
    path.write_text('{"doc_id": "d1", "system_id": "M0", "summary": "x"}\n')
    code, out, err = run(["simulate", "power", "--dataset", "summeval", "--texts-dir", tmp_path])
    assert code == 2
    assert err == (f"metaeval: error: {path}, row 1: every line must have the field 'references'; got the fields"
                   " ['doc_id', 'summary', 'system_id'].\n")


# -- SIGINT ----------------------------------------------------------------------------------------------
def test_sigint_prints_one_line_exits_130_and_writes_nothing(tmp_path):
    """SIGINT once the progress bar has counted the first of 48 cells (47 left: the command cannot end first;
    a fixed sleep raced the kernels' speed, issue 41 item 7): one line, exit 130, no output file."""
    import signal

    from signal_helpers import signal_after_first_progress, small_scores

    scores = small_scores(tmp_path / "s.csv")
    output = tmp_path / "out.json"
    code, out, drawn, err = signal_after_first_progress(
        ["correlate", "--scores", scores, "--human", "human", "--ci", "boot-both", "--n-resamples", "20000",
         "--format", "json", "--output", output], signal.SIGINT)
    assert "/48" in drawn
    assert (code, out, err) == (130, "", "metaeval: interrupted\n"), drawn[-500:]
    assert not output.exists() and not list(tmp_path.glob("*.tmp"))


def test_report_shows_hostile_names_as_text(tmp_path):
    metric = "<script>alert(1)</script>[bold red]x\x1b[31m"
    path = good_scores(tmp_path / "r.csv", metric)
    output = tmp_path / "report"
    code, out, err = run(["report", "--scores", path, "--human", "human", "--n-resamples", "5", "--analysis", "none",
                          "--output", output])
    assert code == 0, err
    page = (output / "report.html").read_text(encoding="utf-8")
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;[bold red]x" in page
    assert not CONTROL.search(out + err)


# -- mt-metrics-eval directories -------------------------------------------------------------------
@FUZZ
@given(data=st.data())
def test_mt_metrics_eval_directories(data):
    """``metaeval mt --mt-metrics-eval DIR``: hostile system names, odd scores, ragged or missing files."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        root = directory / "wmtfuzz"
        (root / "human-scores").mkdir(parents=True)
        (root / "metric-scores" / "en-de").mkdir(parents=True)
        systems = data.draw(st.lists(NAMES.filter(lambda x: "\t" not in x and "\n" not in x), min_size=1,
                                     max_size=4, unique=True))
        n_segments = data.draw(st.integers(1, 4))
        files = []
        for path in (root / "human-scores" / "en-de.mqm.seg.score",
                     root / "metric-scores" / "en-de" / "m1-refA.seg.score",
                     root / "metric-scores" / "en-de" / "m2-refA.seg.score"):
            if data.draw(st.integers(0, 9)) == 0:  # a missing file
                continue
            lines = [f"{s}\t{data.draw(CELLS) if data.draw(st.integers(0, 5)) == 0 else float(j + i)}"
                     for i, s in enumerate(systems) for j in range(n_segments)]
            if data.draw(st.integers(0, 7)) == 0:  # ragged: one system with a segment fewer
                lines = lines[:-1]
            path.write_text("\n".join(str(line) for line in lines) + "\n", encoding="utf-8", errors="surrogateescape")
            files.append(path)
        output = directory / "out" / "result.txt" if data.draw(st.booleans()) else None
        argv = ["mt", "--mt-metrics-eval", str(root), "--language-pair", "en-de", "--n-resamples", "5",
                "--task", "system/pearson"]
        if output is not None:
            argv += ["--output", output]
        check(argv, [root, *files], output, directory)


@FUZZ
@given(data=st.data())
def test_corpus_metric_texts(data):
    """`correlate` / `compare --corpus-metric bleu` with fuzzed candidates and references files."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        rows = [{"system": a, "input": b, "bleu": (i * 7 + j * 3) % 5 + i, "human": i + j % 2}
                for i, a in enumerate(["s1", "s2", "7"]) for j, b in enumerate(["doc-1", "doc 2", "Älpha"])]
        scores = directory / "scores.csv"  # labels the fuzzed texts can name (tables draws from PLAIN)
        pd.DataFrame(rows).to_csv(scores, index=False, quoting=csv.QUOTE_ALL)
        text = st.one_of(NAMES, st.just("the cat sat on the mat ."), CELLS)
        table = data.draw(tables(["system", "input", "candidate"], {"candidate": text}))
        candidates = write(data.draw, directory, "candidates", table, "jsonl")
        table = data.draw(tables(["input", "references"], {"references": text}, rows=("input",)))
        references = write(data.draw, directory, "references", table, "jsonl", {"references": "list"})
        command = data.draw(st.sampled_from([["correlate", "--ci", "boot-inputs", "--level", "system"],
                                             ["compare", "--test", "bootstrap", "--method", "inputs",
                                              "--level", "system"]]))
        output = directory / "out.json"
        check([*command, "--scores", scores, "--human", "human", "--n-resamples", "5", "--corpus-metric", "bleu",
               "--candidates", candidates, "--references", references, "--format", "json", "--output", output,
               "--no-progress"], [candidates, references, scores], output, directory)
