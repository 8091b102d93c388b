"""Every command's outputs are one set (issue 41 item 5, "mixed output sets"): two outputs at one path are
refused, a failing second output leaves the first one old, an interrupt or an I/O error between the renames
restores every output, and after a SIGKILL between the renames the next run restores the set before it reads
its input (even when it then fails on that input). metaeval.runtime.output_sets, cli.guards."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.cli.main import main
from metaeval.errors import InputFileError
from metaeval.runtime import file_sets
from metaeval.runtime.output_sets import output_set, recover_outputs
from metaeval.runtime.files import write_text_atomic

REPO = Path(__file__).resolve().parents[1]
COMPARISONS = ("input,first,second,judge,verdict\nq1,A,B,j,first\nq1,B,C,j,second\nq2,A,C,j,tie\nq2,C,A,j,first\n"
               "q3,B,A,j,first\nq3,C,B,j,second\nq4,A,B,j,second\nq4,C,A,j,tie\n")


def _cli(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _rank(tmp_path: Path) -> list:
    data = tmp_path / "c.csv"
    data.write_text(COMPARISONS)
    return ["judge", "rank", "--comparisons", data, "--n-resamples", "20", "--resampling", "comparisons",
            "--format", "csv"]


# -- two outputs at one path --------------------------------------------------------------------------------

@pytest.mark.parametrize("same", ["x.out", "./x.out", "link"])
def test_two_outputs_of_one_command_at_one_path_are_refused(tmp_path, capsys, monkeypatch, same):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.out").write_text("mine\n")
    (tmp_path / "link").symlink_to(tmp_path / "x.out")
    code, out, err = _cli(_rank(tmp_path) + ["--output", "x.out", "--html", same], capsys)
    assert (code, out) == (2, "")
    assert err == (f"metaeval: error: --html {same!r} is the same file as --output 'x.out'; one of the two outputs"
                   " would be lost: give each output its own path\n")
    assert (tmp_path / "x.out").read_text() == "mine\n"


def test_a_second_write_to_one_path_in_a_set_is_refused(tmp_path):
    with pytest.raises(InputFileError) as caught, output_set():
        write_text_atomic(tmp_path / "a.txt", "1")
        write_text_atomic(tmp_path / "." / "a.txt", "2")
    assert str(caught.value) == (f"{tmp_path / '.' / 'a.txt'}: must be written once by a command; got two of its"
                                 " outputs at this path (one would be lost): give each output its own path")
    assert list(tmp_path.iterdir()) == []


# -- the set is written whole or not at all -------------------------------------------------------------------

def test_a_command_writes_nothing_until_it_returns(tmp_path):
    with pytest.raises(RuntimeError), output_set():
        write_text_atomic(tmp_path / "a.txt", "1")
        assert not (tmp_path / "a.txt").exists()
        raise RuntimeError("fails after its first output")
    assert list(tmp_path.iterdir()) == []


def test_both_outputs_of_a_command_are_written(tmp_path, capsys):
    out, page = tmp_path / "a" / "rank.csv", tmp_path / "b" / "rank.html"
    (tmp_path / "b").mkdir()
    code, stdout, err = _cli(_rank(tmp_path) + ["--output", out, "--html", page], capsys)
    assert code == 0, err
    assert "A" in out.read_text() and "<html" in page.read_text()
    assert err.startswith(f"wrote {page}\n")  # said once written
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["rank.html"]  # no lock, no staging left


def test_an_unwritable_second_directory_leaves_the_first_output_old(tmp_path, capsys, monkeypatch):
    """Regression: a read-only directory for the second output failed after the first had been replaced."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    (first / "rank.csv").write_text("old table\n")
    real = file_sets.tempfile.mkdtemp

    def read_only(*args, dir=None, **kwargs):
        if Path(dir).resolve() == second.resolve():
            raise PermissionError(errno.EACCES, "Permission denied", str(dir))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(file_sets.tempfile, "mkdtemp", read_only)
    code, stdout, err = _cli(_rank(tmp_path) + ["--output", first / "rank.csv", "--html", second / "rank.html"],
                             capsys)
    assert (code, stdout, err) == (2, "", f"metaeval: error: {second}: Permission denied\n")
    assert _tree(first) == {"rank.csv": b"old table\n"} and list(second.iterdir()) == []


@pytest.mark.parametrize("error", [KeyboardInterrupt(), OSError(errno.EIO, "Input/output error")])
def test_an_interrupt_or_an_error_between_the_outputs_restores_both(tmp_path, monkeypatch, error):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    (first / "out.csv").write_text("old table\n")
    (second / "page.html").write_text("old page\n")
    (second / "notes.txt").write_text("mine\n")
    before = _tree(tmp_path)
    real = file_sets.os.replace

    def failing(source, target, *args, **kwargs):
        if Path(target).name == "page.html":
            raise error
        return real(source, target, *args, **kwargs)

    monkeypatch.setattr(file_sets.os, "replace", failing)
    with pytest.raises(type(error)), output_set():
        write_text_atomic(first / "out.csv", "new table\n")
        write_text_atomic(second / "page.html", "new page\n")
    assert _tree(tmp_path) == before  # the first directory's rename is undone too
    assert sorted(p.name for p in tmp_path.rglob(".*")) == []


# -- SIGKILL between the renames of two directories ---------------------------------------------------------------

def _killed_between_directories(first: Path, second: Path) -> None:
    script = f"""
import os, signal
from pathlib import Path
from metaeval.runtime import file_sets
from metaeval.runtime.output_sets import output_set
from metaeval.runtime.files import write_text_atomic
real = os.replace
def dying(source, target, *args, **kwargs):
    if Path(target).name == "rank.html":
        os.kill(os.getpid(), signal.SIGKILL)
    return real(source, target, *args, **kwargs)
file_sets.os.replace = dying
with output_set():
    write_text_atomic(Path({str(first / 'rank.csv')!r}), "new table\\n")
    write_text_atomic(Path({str(second / 'rank.html')!r}), "new page\\n")
"""
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=str(REPO / "src")))
    assert killed.returncode == -signal.SIGKILL, killed.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals: POSIX")
@pytest.mark.parametrize("locked", ["first", "second"])
def test_after_a_kill_the_next_run_restores_the_set_even_if_it_fails_on_its_input(tmp_path, capsys, locked):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    (first / "rank.csv").write_text("old table\n")
    (second / "rank.html").write_text("old page\n")
    before = _tree(tmp_path)
    _killed_between_directories(first, second)
    assert (first / "rank.csv").read_text() == "new table\n"  # mixed: the kill came between the directories
    missing = tmp_path / "missing.csv"
    folder = first if locked == "first" else second
    code, out, err = _cli(["judge", "rank", "--comparisons", missing, "--output", folder / "rank.csv"], capsys)
    assert code == 2 and str(missing) in err
    assert _tree(tmp_path) == before  # both directories restored, through either one's lock
    assert [p for p in tmp_path.rglob(".*")] == []


def test_recovering_a_folder_that_holds_nothing_of_metaeval_does_not_lock_it(tmp_path):
    (tmp_path / "x.csv").write_text("1\n")
    recover_outputs([tmp_path / "x.csv", tmp_path / "missing" / "y.csv"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv"]
