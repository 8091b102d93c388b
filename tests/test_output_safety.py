"""Outputs under hostile conditions (round three): a linked lock, a directory where a file goes, an output inside an
input directory, a shared report directory killed or failing between renames, an unrenameable directory.

Each case is run through the CLI or the writer it concerns and checks what docs/reliability.md promises: the
user's files are never truncated or removed, one line and exit code 2, and the old set or the new one.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.cli.main import main
from metaeval.errors import InputFileError
from metaeval.runtime import file_sets
from metaeval.runtime.file_sets import write_file_set
from metaeval.runtime.files import LOCK_NAME, directory_lock

REPO = Path(__file__).resolve().parents[1]
REPORT = ["report", "--dataset", "summeval", "--metric", "rouge-1.recall", "--metric", "rouge-2.recall",
          "--n-resamples", "40", "--n-repetitions", "4", "--analysis", "none"]


def _cli(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# -- the lock file ------------------------------------------------------------------------------------------

def test_a_symbolic_link_at_the_lock_is_refused_and_its_target_kept(tmp_path, capsys):
    """Regression: the lock opened with O_CREAT through the link and truncated the target to a process id."""
    precious = tmp_path / "thesis.tex"
    precious.write_text("three years of work\n")
    out = tmp_path / "report"
    out.mkdir()
    (out / LOCK_NAME).symlink_to(precious)
    code, stdout, err = _cli(REPORT + ["--output", out], capsys)
    assert code == 2 and stdout == ""
    assert err == (f"metaeval: error: {out / LOCK_NAME}: must be metaeval's lock file (a regular file holding a"
                   " process id) or absent; got a symbolic link: move it away, metaeval never writes through it\n")
    assert precious.read_text() == "three years of work\n"
    (out / LOCK_NAME).unlink()
    (out / LOCK_NAME).symlink_to(tmp_path / "absent")  # a dangling link: O_CREAT would create its target
    with pytest.raises(InputFileError, match="got a symbolic link"):
        with directory_lock(out):
            pass
    assert not (tmp_path / "absent").exists()


def test_a_lock_file_with_other_content_is_refused_not_truncated(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    (out / LOCK_NAME).write_text("not a process id\n")
    with pytest.raises(InputFileError, match="got a file with other content: move it away"):
        with directory_lock(out):
            pass
    assert (out / LOCK_NAME).read_text() == "not a process id\n"
    (out / LOCK_NAME).write_text("12345\n")  # a lock a killed run left: taken over
    with directory_lock(out):
        assert (out / LOCK_NAME).read_text() == f"{os.getpid()}\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs: POSIX")
def test_a_fifo_at_the_lock_is_refused_without_blocking(tmp_path):
    out = tmp_path / "report"
    out.mkdir()
    os.mkfifo(out / LOCK_NAME)
    with pytest.raises(InputFileError, match="got a file that is not a regular file"):
        with directory_lock(out):
            pass


# -- a directory where a file goes ------------------------------------------------------------------------

def test_a_page_path_that_is_a_directory_is_refused_and_kept(tmp_path, capsys):
    """Regression: `--output proj/x.html` with a directory x.html/ swapped proj away with x.html/ and its files."""
    proj = tmp_path / "proj"
    (proj / "x.html").mkdir(parents=True)
    (proj / "x.html" / "notes.txt").write_text("mine\n")
    before = _tree(proj)
    code, stdout, err = _cli(REPORT + ["--output", proj / "x.html"], capsys)
    assert code == 2 and stdout == ""
    assert err == (f"metaeval: error: --output '{proj / 'x.html'}' is a directory; metaeval never replaces a directory"
                   " with a file: choose another output path\n")
    assert _tree(proj) == before


def test_the_writer_refuses_a_member_name_held_by_a_directory(tmp_path):
    proj = tmp_path / "proj"
    (proj / "results.json").mkdir(parents=True)
    (proj / "results.json" / "keep").write_text("k")
    with pytest.raises(InputFileError) as caught:
        write_file_set(proj, {"results.json": b"{}", "report.html": b"p"})
    assert str(caught.value) == (f"{proj / 'results.json'}: must be a file metaeval can replace; got a directory,"
                                 " which it never removes: choose another output path")
    assert (proj / "results.json" / "keep").read_text() == "k" and not (proj / "report.html").exists()


# -- outputs inside input directories ----------------------------------------------------------------------

def test_mt_output_inside_the_mt_metrics_eval_directory_is_refused(tmp_path, capsys):
    root = tmp_path / "wmtfix"
    shutil.copytree(REPO / "tests" / "data" / "mt-metrics-eval" / "wmtfix", root)
    before = _tree(root)
    target = root / "human-scores" / "en-de.mqm.seg.score"
    code, stdout, err = _cli(["mt", "--mt-metrics-eval", root, "--language-pair", "en-de", "--human", "mqm",
                              "--n-resamples", "20", "--output", target], capsys)
    assert code == 2 and stdout == ""
    assert err == (f"metaeval: error: --output '{target}' is an existing file inside the input directory"
                   f" --mt-metrics-eval '{root}'; writing it could destroy an input: choose a path outside that"
                   " directory\n")
    assert _tree(root) == before


def test_nuggets_output_inside_the_annotations_directory_is_refused(shared_data, tmp_path, capsys):
    annotations = tmp_path / "human_annotations"
    shutil.copytree(shared_data / "realsumm" / "human_annotations", annotations)
    target = annotations / "SCUs_and_annotations" / "SCUs_list.csv"
    before = target.read_bytes()
    code, stdout, err = _cli(["nuggets", "realsumm", annotations, "--matcher", "crowd", "--format", "csv",
                              "--output", target], capsys)
    assert code == 2 and stdout == ""
    assert err.startswith(f"metaeval: error: --output '{target}' is an existing file inside the input directory")
    assert target.read_bytes() == before


# -- a shared directory: the in-place commit and its journal -------------------------------------------------

def _shared(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "notes.txt").write_text("mine\n")
    write_file_set(proj, {"results.json": b"old results", "report.html": b"old page", "gone.csv": b"old"},
                   owned=("gone.csv",))
    return proj


def test_an_io_error_between_renames_restores_the_old_set(tmp_path, monkeypatch):
    """Regression: the second rename failing left the new results.json beside the old page."""
    proj = _shared(tmp_path)
    before = _tree(proj)
    real = os.replace
    calls = []

    def failing(source, target, *args, **kwargs):
        calls.append(Path(target).name)
        if Path(target).name == "report.html" and calls.count("report.html") == 1:
            raise OSError(errno.EIO, "Input/output error")
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(file_sets.os, "replace", failing)
    with pytest.raises(OSError) as caught:
        write_file_set(proj, {"results.json": b"new results", "report.html": b"new page"}, owned=("gone.csv",))
    assert caught.value.filename == str(proj / "report.html")
    monkeypatch.setattr(file_sets.os, "replace", real)
    assert _tree(proj) == before  # results.json back to the old one, gone.csv back, notes.txt untouched
    assert sorted(p.name for p in proj.iterdir()) == ["gone.csv", "notes.txt", "report.html", "results.json"]


@pytest.mark.parametrize("after", [0, 1])
def test_a_kill_between_renames_is_rolled_back_by_the_next_run(tmp_path, after):
    proj = _shared(tmp_path)
    before = _tree(proj)
    script = f"""
import os, signal
from pathlib import Path
from metaeval.runtime import file_sets
real = os.replace
moved = []
def dying(source, target, *args, **kwargs):
    if len(moved) == {after}:
        os.kill(os.getpid(), signal.SIGKILL)
    moved.append(target)
    return real(source, target, *args, **kwargs)
file_sets.os.replace = dying
file_sets.write_file_set(Path({str(proj)!r}), {{"results.json": b"new results", "report.html": b"new page"}},
                         owned=("gone.csv",))
"""
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=str(REPO / "src")))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    staged = [p for p in proj.iterdir() if p.name.startswith(file_sets.STAGING_PREFIX)]
    assert len(staged) == 1 and (staged[0] / file_sets.JOURNAL_NAME).exists()
    with directory_lock(proj):
        file_sets.recover(proj)
    assert _tree(proj) == {k: v for k, v in before.items()}
    write_file_set(proj, {"results.json": b"third", "report.html": b"third page"}, owned=("gone.csv",))
    assert _tree(proj) == {"notes.txt": b"mine\n", "report.html": b"third page", "results.json": b"third"}


def test_a_kill_after_every_rename_keeps_the_new_set(tmp_path):
    proj = _shared(tmp_path)
    staging = proj / (file_sets.STAGING_PREFIX + "dead")
    staging.mkdir()
    (staging / file_sets.JOURNAL_NAME).write_text(json.dumps({"names": ["results.json"], "stale": []}))
    (proj / "results.json").write_bytes(b"new, moved in")
    with directory_lock(proj):
        file_sets.recover(proj)
    assert (proj / "results.json").read_bytes() == b"new, moved in" and not staging.exists()


def test_a_report_into_a_shared_directory_is_committed_through_the_journal(tmp_path, capsys):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "notes.txt").write_text("mine\n")
    assert _cli(REPORT + ["--output", proj / "x.html"], capsys)[0] == 0
    assert sorted(p.name for p in proj.iterdir()) == ["comparison.csv", "correlations.csv", "notes.txt",
                                                      "results.json", "x.html"]


# -- a directory that cannot be renamed (a mount point) ------------------------------------------------------

def test_an_unrenameable_directory_is_committed_in_place(tmp_path, monkeypatch):
    """Regression: an empty mount point as the report directory failed with EBUSY (the swap renamed it)."""
    out = tmp_path / "mnt"
    out.mkdir()
    inode = out.stat().st_ino

    def busy(a, b):
        raise OSError(errno.EBUSY, "Device or resource busy", str(b))

    monkeypatch.setattr(file_sets, "_exchange", busy)
    write_file_set(out, {"results.json": b"1", "report.html": b"p"})
    assert out.stat().st_ino == inode and _tree(out) == {"report.html": b"p", "results.json": b"1"}
    assert [p.name for p in tmp_path.iterdir()] == ["mnt"]
    monkeypatch.setattr(file_sets.os.path, "ismount", lambda p: Path(p) == out.resolve())
    monkeypatch.setattr(file_sets, "_exchange", lambda a, b: pytest.fail("a mount point is never renamed"))
    write_file_set(out, {"results.json": b"2", "report.html": b"q"})
    assert out.stat().st_ino == inode and _tree(out) == {"report.html": b"q", "results.json": b"2"}


# -- SIGTERM ---------------------------------------------------------------------------------------------------

@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals: POSIX")
def test_sigterm_is_handled_like_sigint(tmp_path):
    """Regression: SIGTERM killed the run with Python's default action (no message, exit -15). The signal is
    sent once the progress bar has counted the first of 48 cells (a fixed sleep raced the kernels' speed,
    issue 41 item 7)."""
    from signal_helpers import signal_after_first_progress, small_scores

    scores = small_scores(tmp_path / "s.csv")
    output = tmp_path / "out.json"
    code, out, drawn, err = signal_after_first_progress(
        ["correlate", "--scores", scores, "--human", "human", "--ci", "boot-both", "--n-resamples", "20000",
         "--format", "json", "--output", output], signal.SIGTERM)
    assert "/48" in drawn
    assert (code, out, err) == (143, "", "metaeval: terminated\n"), drawn[-500:]
    assert not output.exists() and not list(tmp_path.glob(".*"))


# -- score: the score file and its sidecar are one pair ------------------------------------------------------

@pytest.mark.parametrize("failing", ["scores.csv", "scores.csv.signatures.json"])
def test_a_failure_writing_the_sidecar_leaves_the_old_pair(tmp_path, capsys, monkeypatch, failing):
    """Regression: `score` replaced the score file, then failed writing its sidecar: a new CSV with the old sidecar."""
    from metaeval.runtime import files

    out = tmp_path / "scores.csv"
    examples = REPO / "docs" / "examples"
    argv = ["score", "--candidates", examples / "outputs.jsonl", "--references", examples / "refs.jsonl",
            "--metric", "rouge", "--output", out, "--no-progress"]
    assert _cli(argv, capsys)[0] == 0
    before = _tree(tmp_path)
    real = files._write_fsync

    def full(target, data, mode):
        if target.name == failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(target, data, mode)

    monkeypatch.setattr(files, "_write_fsync", full)
    code, stdout, err = _cli(argv[:-3] + ["--metric", "chrf", "--output", out, "--no-progress"], capsys)
    assert (code, stdout, err) == (2, "", f"metaeval: error: {tmp_path / failing}: No space left on device\n")
    assert _tree(tmp_path) == before
    monkeypatch.setattr(files, "_write_fsync", real)
    assert _cli(argv[:-3] + ["--metric", "chrf", "--output", out, "--no-progress"], capsys)[0] == 0
    side = json.loads((tmp_path / "scores.csv.signatures.json").read_text())
    import hashlib

    assert side["scores_file"]["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert "chrf" in out.read_text().splitlines()[0]


# -- text outputs: spreadsheet formulas, line breaks in names, numpy warnings --------------------------------

def _scores(path: Path, metric: str, system_prefix: str = "s") -> Path:
    rows = [json.dumps({"system": f"{system_prefix}{s}", "input": str(i), metric: (s * 3 + i * 7) % 5 + s,
                        "human": s + (i % 2)}) for s in range(4) for i in range(6)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_csv_outputs_quote_formulas_but_not_numbers(tmp_path, capsys):
    """Regression: a metric named =HYPERLINK(...) was written verbatim, a formula when the CSV is opened."""
    metric = '=HYPERLINK("http://x","y")'
    path = _scores(tmp_path / "s.jsonl", metric, system_prefix="-")
    code, out, err = _cli(["correlate", "--scores", path, "--human", "human", "--ci", "none", "--format", "csv"], capsys)
    assert code == 0, err
    rows = [line for line in out.splitlines() if "HYPERLINK" in line]
    assert rows and all(line.startswith('"\'=HYPERLINK(') for line in rows)
    import pandas as pd

    frame = pd.read_csv(__import__("io").StringIO(out))
    assert pd.api.types.is_numeric_dtype(frame["statistic"])  # numbers are never quoted
    report = tmp_path / "report"
    assert _cli(["report", "--scores", path, "--human", "human", "--n-resamples", "5", "--analysis", "none",
                 "--output", report], capsys)[0] == 0
    text = (report / "correlations.csv").read_text()
    assert "'=HYPERLINK" in text and ',=HYPERLINK' not in text and not text.startswith("=")


def test_spreadsheet_text_leaves_numbers_alone():
    from metaeval.report.formats import spreadsheet_text

    assert [spreadsheet_text(v) for v in ["=1+1", "+x", "-x", "@x", "\tx", "-0.5", "+3", "-inf", "x=1", -1.0, ""]] \
        == ["'=1+1", "'+x", "'-x", "'@x", "'\tx", "-0.5", "+3", "-inf", "x=1", -1.0, ""]


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_a_line_break_in_a_name_keeps_the_table_rows_whole(tmp_path, capsys, fmt):
    """Regression: a metric named "a\\nb" split its Markdown row in two."""
    path = _scores(tmp_path / "s.jsonl", "bad\nname")
    code, out, err = _cli(["correlate", "--scores", path, "--human", "human", "--ci", "none", "--format", fmt], capsys)
    assert code == 0, err
    row = next(line for line in out.splitlines() if "bad" in line)
    assert ("bad\\nname" if fmt == "markdown" else "bad\\textbackslash{}nname") in row
    assert not any(line.startswith("name") for line in out.splitlines())
    if fmt == "markdown":
        assert row.startswith("| ") and row.endswith(" |")


def test_mt_mean_protocol_with_a_constant_human_warns_by_name(tmp_path, capsys):
    """Regression: `metaeval: warning: invalid value encountered in divide` (numpy's, from the pooled accuracy)."""
    root = tmp_path / "wmtfix"
    shutil.copytree(REPO / "tests" / "data" / "mt-metrics-eval" / "wmtfix", root)
    seg = root / "human-scores" / "en-de.mqm.seg.score"
    seg.write_text("".join(line.split("\t")[0] + "\t0\n" for line in seg.read_text().splitlines()))
    (root / "human-scores" / "en-de.mqm.sys.score").unlink()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        code, out, err = _cli(["mt", "--mt-metrics-eval", root, "--language-pair", "en-de", "--human", "mqm",
                               "--protocol", "mean", "--n-resamples", "20"], capsys)
    assert code == 0, err
    assert "invalid value" not in err
    assert ("metaeval: warning: pooled system-level accuracy is undefined (NaN): the human scores tie every pair of"
            " systems in every language pair (human_ties='skip' leaves no pair to count).") in err


# -- size-like options: refused up front ---------------------------------------------------------------------

SIMULATION = ("1000 times its default: the Monte Carlo error is then about 32 times smaller, and a larger value takes"
              " days or exhausts the memory")


@pytest.mark.parametrize("argv, message", [
    (["stability", "--dataset", "summeval", "--n-repetitions", "2000000000"],
     f"`--n-repetitions` must be at most 1,000,000 ({SIMULATION}); got 2,000,000,000."),
    (["extrinsic", "partition", "--dataset", "summeval", "--n-partitions", "1000000000"],
     f"`--n-partitions` must be at most 10,000,000 ({SIMULATION}); got 1,000,000,000."),
    (["report", "--dataset", "summeval", "--n-repetitions", "2000000000", "--output", "{tmp}/r"],
     f"`--n-repetitions` must be at most 1,000,000 ({SIMULATION}); got 2,000,000,000."),
    (["plan", "--dataset", "summeval", "--metric", "rouge-1.recall", "--n-repetitions", "100001"],
     f"`--n-repetitions` must be at most 100,000 ({SIMULATION}); got 100,001."),
    (["simulate", "power", "--dataset", "summeval", "--texts-dir", "{tmp}", "--n-trials", "1000001"],
     f"`--n-trials` must be at most 1,000,000 ({SIMULATION}); got 1,000,001."),
    (["gap", "--dataset", "summeval", "--n-bins", "1000000000"],
     "`--n-bins` must be at most 10,000 (1000 times its default; a larger value exhausts the memory); got"
     " 1,000,000,000."),
    (["gap", "--dataset", "summeval", "--grid-points", "1000000000"],
     "`--grid-points` must be at most 50,000 (1000 times its default; a larger value exhausts the memory); got"
     " 1,000,000,000."),
    (["human", "sample", "--dataset", "summeval", "--metric", "rouge-1.recall", "--n", "3", "--mean-bins", "1000000000"],
     "`--mean-bins` must be at most 10,000 (1000 times its default; a larger value exhausts the memory); got"
     " 1,000,000,000."),
    (["plan", "--dataset", "summeval", "--metric", "rouge-1.recall", "--n-inputs", "10,1000000000"],
     "`--n-inputs` must be at most 1,000,000 (each simulated campaign holds systems x inputs scores); got"
     " 1,000,000,000."),
    (["score", "--candidates", "c.jsonl", "--references", "r.jsonl", "--metric", "rouge", "--batch-size",
      "1000000000", "--output", "{tmp}/s.csv"],
     "`--batch-size` must be at most 256,000 (1000 times its default; a larger value exhausts the memory); got"
     " 1,000,000,000."),
])
def test_size_like_options_are_refused_up_front(tmp_path, capsys, argv, message):
    """Regression: `stability --n-repetitions 2000000000` and `extrinsic --n-partitions 1000000000` ran for days,
    `gap --n-bins 1000000000` was killed for memory, `gap --grid-points` and `plan --n-inputs` hung."""
    import time

    start = time.perf_counter()
    code, out, err = _cli([a.replace("{tmp}", str(tmp_path)) for a in argv], capsys)
    assert (code, out, err) == (2, "", f"metaeval: error: {message}\n")
    assert time.perf_counter() - start < 30
    assert list(tmp_path.iterdir()) == []


def test_every_size_like_option_has_a_limit():
    """Every integer option of every command is a seed, a resample count (its memory check), bounded by the
    data, or has a limit."""
    import click

    from metaeval.cli.guards import SIZE_OPTIONS
    from metaeval.cli.main import cli

    bounded_elsewhere = {"seed", "n_resamples", "min_pairs", "comparisons", "systems", "n", "n_documents", "inputs",
                         "sizes", "n_systems", "ks", "edges", "fractions", "rater_waves",
                         "min_instances"}  # each checked against the data
    ctx = click.Context(cli)
    unchecked = set()

    def walk(command):
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name))
            return
        for param in command.params:
            numeric = isinstance(param.type, click.types.IntParamType) or type(param.type).__name__ == "NumberList"
            if numeric and param.name not in SIZE_OPTIONS and param.name not in bounded_elsewhere:
                unchecked.add((command.name, param.name))

    walk(cli)
    assert not unchecked


# -- paper tables: ties in bold, p-values never 0 ---------------------------------------------------------------

def _mt_result():
    import metaeval as me

    data = me.read_mt_metrics_eval(REPO / "tests" / "data" / "mt-metrics-eval" / "wmtfix", "en-de")
    return me.mt_evaluate(data, human="mqm", n_resamples=50, rng=0)


@pytest.mark.parametrize("fmt", ["latex", "markdown"])
def test_every_value_tied_for_best_at_the_printed_precision_is_bold(fmt):
    """Regression: of two metrics tied at 0.505 only one was bold (the other's cluster rank was 2)."""
    import dataclasses

    import numpy as np

    from metaeval.report.formats import to_paper

    result = _mt_result()
    averages = {scope: np.array([0.5049, 0.5051]) for scope in result.scopes}
    ranks = {scope: np.array([2, 1]) for scope in result.scopes}
    statistics = np.tile([0.70004, 0.7004], (len(result.tasks), 1))
    task_ranks = {task: np.array([2, 1]) for task in result.tasks}
    tied = dataclasses.replace(result, averages=averages, ranks=ranks, statistics=statistics, task_ranks=task_ranks)
    text = to_paper(tied, fmt)
    mark = (lambda v: f"\\textbf{{{v}}}") if fmt == "latex" else (lambda v: f"**{v}**")
    # the table's rows (the signature under it names the metrics too)
    rows = [line for line in text.splitlines() if ("BLEU" in line or "COMET" in line) and "signature" not in line]
    assert len(rows) == 4 and all(f"{mark('0.505')} (" in row for row in rows)
    assert text.count(mark("0.700")) == 2 * len(result.tasks) and "| 0.700 |" not in text
    apart = dataclasses.replace(tied, averages={s: np.array([0.49, 0.5051]) for s in result.scopes})
    assert f"{mark('0.490')}" not in to_paper(apart, fmt)


def test_a_p_value_of_zero_prints_at_the_resolution_of_the_test(capsys):
    """Regression: mt's per-task p-values printed as `0.0` (mt-metrics-eval's count / k with no draw as extreme)."""
    from metaeval.report.formats import pvalue_text, to_paper

    assert [pvalue_text(v, 50) for v in [0.0, 0.0004, 0.02, float("nan"), None]] == \
        ["< 0.02", "< 0.001", "0.020", "n/a", "n/a"]
    assert pvalue_text(0.0) == "< 0.001"
    root = REPO / "tests" / "data" / "mt-metrics-eval" / "wmtfix"
    code, out, err = _cli(["mt", "--mt-metrics-eval", root, "--language-pair", "en-de", "--human", "mqm",
                           "--n-resamples", "50", "--format", "csv"], capsys)
    assert code == 0, err
    cells = [cell for line in out.splitlines()[1:] for cell in line.split(",")[5:]]
    assert "< 0.02" in cells and "0.0" not in cells
    frame = _mt_result().to_frame()
    assert (frame.filter(like="p_vs_") == 0).any().any()  # the computed values stay numbers in the API
    from types import SimpleNamespace

    markdown = to_paper(SimpleNamespace(n_resamples=50, signature=None), "markdown", frame=frame)  # a result's frame
    assert "| < 0.02 |" in markdown and "| 0.000 |" not in markdown and "| 0.0 |" not in markdown  # < as written


# -- corpus metrics: the options of the scores, one set of NIST weights, BLEU within its range ----------------

def _texts():
    examples = REPO / "docs" / "examples"
    candidates = [json.loads(line) for line in open(examples / "outputs.jsonl", encoding="utf-8")]
    references = {d["input"]: d["references"] for d in map(json.loads, open(examples / "refs.jsonl", encoding="utf-8"))}
    return examples, candidates, references


def test_corpus_nist_is_recomputed_with_the_preprocessing_of_the_scores(tmp_path, capsys):
    """Regression: `systems --corpus-metric nist` ignored the --mt-preprocessing preset of the segment scores
    (4.863 for sys0 here, where the scores' own options give 5.683)."""
    from metaeval.metrics.nist import Nist

    examples, candidates, references = _texts()
    scores = tmp_path / "n.csv"
    assert _cli(["score", "--candidates", examples / "outputs.jsonl", "--references", examples / "refs.jsonl",
                 "--metric", "nist", "--mt-preprocessing", "leusch-best", "--output", scores, "--no-progress"],
                capsys)[0] == 0
    expected = {}
    scorer = Nist(preprocessing="leusch-best").with_reference_corpus([references[k] for k in sorted(references)])
    for system in ("sys0", "sys1", "sys2"):
        stats = [scorer.statistics(c["candidate"], references[c["input"]]) for c in candidates if c["system"] == system]
        expected[system] = scorer.corpus_score(stats)["nist"]
    code, out, err = _cli(["systems", "--scores", scores, "--scorer", "nist", "--corpus-metric", "nist",
                           "--candidates", examples / "outputs.jsonl", "--references", examples / "refs.jsonl",
                           "--n-resamples", "20", "--format", "json"], capsys)
    assert code == 0, err
    pairs = json.loads(out)["pairs"] if "pairs" in json.loads(out) else json.loads(out)["comparisons"]
    got = {p["system_a"]: p["score_a"] for p in pairs} | {p["system_b"]: p["score_b"] for p in pairs}
    assert got == pytest.approx(expected, rel=1e-12) and round(expected["sys0"], 3) == 5.683
    side = Path(str(scores) + ".signatures.json")
    recorded = json.loads(side.read_text())
    recorded["signatures"]["nist"] = recorded["signatures"]["nist"].replace("lp:mteval-v13a", "lp:mteval-v11b")
    side.write_text(json.dumps(recorded))
    code, out, err = _cli(["systems", "--scores", scores, "--scorer", "nist", "--corpus-metric", "nist",
                           "--candidates", examples / "outputs.jsonl", "--references", examples / "refs.jsonl",
                           "--n-resamples", "20"], capsys)
    assert (code, out) == (2, "")
    assert err == (f"metaeval: error: `--corpus-metric nist` must recompute nist with the options of the segment scores"
                   f" in {scores}; got other options (lp: mteval-v11b in the scores, mteval-v13a here): score the segments"
                   " again with the registry's options, or leave out --corpus-metric.\n")


def test_nist_corpus_score_refuses_statistics_with_their_own_weights():
    """Regression: statistics() per item, then corpus_score, mixed each item's own information weights (1.60 vs
    2.42 with the corpus weights) without a word."""
    from metaeval.errors import ParameterError
    from metaeval.metrics.nist import Nist

    _, candidates, references = _texts()
    items = [(c["candidate"], references[c["input"]]) for c in candidates if c["system"] == "sys1"]
    bare = Nist()
    with pytest.raises(ParameterError, match="must share one set of information weights for a corpus NIST; got 6 of 6"):
        bare.corpus_score([bare.statistics(c, r) for c, r in items])
    one = bare.statistics(*items[0])
    assert bare.corpus_score([one])["nist"] == bare.score(*items[0])["nist"]  # one item: its own corpus
    fitted = bare.with_reference_corpus([r for _, r in items])
    via_fit = fitted.corpus_score([fitted.statistics(c, r) for c, r in items])["nist"]
    streams = [[r[k] for _, r in items] for k in range(2)]
    assert bare.corpus_score(bare.item_statistics([c for c, _ in items], streams))["nist"] == pytest.approx(via_fit)
    item = Nist(info_weights="item")  # asked for: each item's own weights, summed as documented
    item.corpus_score([item.statistics(c, r) for c, r in items])


def test_a_perfect_bleu_is_100_not_a_few_ulps_more(tmp_path, capsys):
    """Regression: segment BLEU printed 100.00000000000004 (sacrebleu's unrounded exp(mean log p) x 100)."""
    import sacrebleu

    from metaeval.metrics.sacrebleu_metrics import Bleu, Chrf

    text = "a quick brown fox jumps over the lazy dog"
    assert sacrebleu.sentence_bleu(text, [text]).score > 100  # what sacrebleu itself returns
    assert Bleu().score(text, [text]) == {"bleu": 100.0} and Chrf().score(text, [text]) == {"chrf": 100.0}
    other = "the quick brown fox jumped over a lazy dog"
    assert Bleu().score(other, [text])["bleu"] == sacrebleu.sentence_bleu(other, [text]).score  # others untouched
    examples, _, _ = _texts()
    out = tmp_path / "b.csv"
    assert _cli(["score", "--candidates", examples / "outputs.jsonl", "--references", examples / "refs.jsonl",
                 "--metric", "bleu", "--output", out, "--no-progress"], capsys)[0] == 0
    assert "100.00000000000004" not in out.read_text() and ",100.0\n" in out.read_text()


# -- one progress protocol --------------------------------------------------------------------------------------

def test_the_library_reports_progress_through_one_callable_protocol(shared_data, tmp_path):
    """The scoring engine drew its own bar, the report took a rich Progress, the analyses a callable: now every
    one reports through progress(units, step=, total=, done=) and the caller draws."""
    import metaeval as me
    from metaeval.report.build import build_report, write_report

    calls = []

    def record(units=1, *, step=None, total=None, done=False):
        calls.append((step, units, total, done))

    examples = REPO / "docs" / "examples"
    me.score(examples / "outputs.jsonl", examples / "refs.jsonl", metrics=["rouge", "bleu"], progress=record)
    assert {c[0] for c in calls} == {"rouge", "bleu"}
    for metric in ("rouge", "bleu"):
        totals = [c[2] for c in calls if c[0] == metric and c[2] is not None]
        assert totals == [15] and sum(c[1] for c in calls if c[0] == metric) == 15  # every pair, once
    calls.clear()
    ds = me.load_dataset("summeval")
    report = build_report(ds, "expert.relevance", ["rouge-1.recall", "rouge-2.recall"], n_resamples=20,
                          repetitions=4, analyses=[], progress=record)
    write_report(report, tmp_path / "r", progress=record)
    steps = list(dict.fromkeys(c[0] for c in calls))
    assert steps[:3] == ["correlations", "significance matrix", "significance matrix (summary level)"]
    assert steps[-1] == "figures and page"
    assert sum(c[1] for c in calls if c[0] == "correlations") == 12  # 2 metrics x 2 levels x 3 coefficients
    assert all(any(c[0] == s and c[3] for c in calls) for s in steps)  # every step is finished
    calls.clear()
    me.ranking_stability(ds, ["rouge-1.recall"], "expert.relevance", sizes=[10], n_repetitions=200,
                         progress=lambda *args, **kwargs: calls.append(args))
    assert calls  # an analysis: the plain progress() of the same protocol


def test_one_plain_turns_every_non_finite_number_into_null():
    """There were two plain(): the analyses' kept infinities (invalid JSON), serialization's did not."""
    import numpy as np

    from metaeval import serialization
    from metaeval.analyses import _common

    assert _common.plain is serialization.plain
    assert serialization.plain({"a": np.inf, "b": [-np.inf, np.nan, np.float32(1.5)], "c": np.int64(2)}) == \
        {"a": None, "b": [None, None, 1.5], "c": 2}
    modules = [p for p in (REPO / "src" / "metaeval").rglob("*.py") if "def plain(" in p.read_text()]
    assert [p.name for p in modules] == ["serialization.py"]


# -- the report: warnings beside what they qualify, both levels of significance, no interval without a value ----

def test_report_places_warnings_shows_summary_significance_and_no_interval_without_value(shared_data, tmp_path):
    """Regression: the interval warning of a small system sample was shown only at the page's bottom, the
    significance matrix was system level only, and the Delta table showed `n/a` with an interval."""
    import html as html_module

    import metaeval as me
    from metaeval.report.build import build_report, write_report
    from metaeval.report.html import number_cell

    ds = me.load_dataset("summeval").subset(systems=me.load_dataset("summeval").systems[:8])
    with pytest.warns(me.DegenerateWarning, match="the interval is unreliable"):
        report = build_report(ds, "expert.relevance", ["rouge-1.recall", "rouge-2.recall", "bertscore.recall"],
                              n_resamples=50, repetitions=4, analyses=[], seed=0)
    assert report.summary_comparison is not None and report.summary_comparison.level == "summary"
    write_report(report, tmp_path / "r")
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")

    def section(key):
        return page.split(f'id="{key}"', 1)[1].split("<section", 1)[0]

    assert "summary-level" in section("significance-summary") and "system-level" in section("significance")
    interval = [w for w in report.warnings if "interval is unreliable" in w]
    assert interval, report.warnings
    text = html_module.escape(interval[0].split(": ", 1)[1])
    assert text in section("correlations") and text not in section("reproduce")
    rows = (tmp_path / "r" / "comparison.csv").read_text().splitlines()
    assert rows[0].startswith("level,metric_a,metric_b") and {r.split(",")[0] for r in rows[1:]} == {"system", "summary"}
    assert json.loads((tmp_path / "r" / "results.json").read_text())["summary_comparison"]["level"] == "summary"
    assert number_cell(float("nan"), sub="[0.10, 0.20]").sub == ""  # n/a: no interval beside it
    assert number_cell(0.5, sub="[0.10, 0.20]").sub == "[0.10, 0.20]"
