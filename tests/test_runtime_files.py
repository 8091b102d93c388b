"""metaeval.runtime.files: the one atomic writer (permissions, no partial file on any failure)."""
from __future__ import annotations

import os
import stat

import pytest

from metaeval.runtime.files import write_bytes_atomic, write_text_atomic


def test_new_file_gets_the_permissions_of_a_plain_open(tmp_path):
    mask = os.umask(0o027)
    try:
        path = write_text_atomic(tmp_path / "sub" / "a.txt", "x\n")
    finally:
        os.umask(mask)
    assert path.read_text() == "x\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_replaced_file_keeps_its_permissions(tmp_path):
    path = tmp_path / "a.bin"
    path.write_bytes(b"old")
    path.chmod(0o600)
    write_bytes_atomic(path, b"new")
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_failure_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch, error):
    path = tmp_path / "a.txt"
    path.write_text("old")

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr("metaeval.runtime.files.os.replace", broken)
    with pytest.raises(type(error)):
        write_text_atomic(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


@pytest.mark.parametrize("where, code, text", [("replace", 30, "Read-only file system"),
                                               ("fsync", 28, "No space left on device")])
def test_errors_name_the_output_not_the_temporary_file(tmp_path, monkeypatch, capsys, where, code, text):
    """Regression (issue 22 item 7): a full disk printed `metaeval: error: : No space left on device` and a
    read-only error named the hidden temporary file."""
    path = tmp_path / "scores.csv"

    def broken(*args, **kwargs):
        raise OSError(code, text, str(tmp_path / ".scores.csv.abc.tmp") if where == "replace" else None)

    monkeypatch.setattr(f"metaeval.runtime.files.os.{where}", broken)
    with pytest.raises(OSError) as caught:
        write_text_atomic(path, "x\n")
    assert (caught.value.errno, caught.value.strerror, caught.value.filename) == (code, text, str(path))
    assert list(tmp_path.iterdir()) == []
    from metaeval.cli.main import main

    argv = ["correlate", "--dataset", "summeval", "--metric", "rouge-1.recall", "--level", "system",
            "--n-resamples", "20", "--output", str(path)]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"metaeval: error: {path}: {text}\n"


# -- file sets and directory locks (issue 22 item 6) ----------------------------------------------------

from metaeval.runtime.file_sets import write_file_set  # noqa: E402
from metaeval.runtime.files import LOCK_NAME, directory_lock  # noqa: E402


def test_a_file_set_replaces_the_old_set_as_a_whole(tmp_path):
    out = tmp_path / "out"
    write_file_set(out, {"data.csv": b"1", "old.csv": b"x", "page.html": b"p1"}, owned=("old.csv",))
    inode = out.stat().st_ino
    paths = write_file_set(out, {"data.csv": b"2", "page.html": b"p2"}, owned=("old.csv",))
    assert [p.name for p in paths] == ["data.csv", "page.html"]
    assert sorted(p.name for p in out.iterdir()) == ["data.csv", "page.html"]  # the stale old.csv left with its set
    assert (out / "data.csv").read_bytes() == b"2" and out.stat().st_ino != inode  # a new directory took its place
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging left beside it


def test_a_directory_with_other_files_is_updated_file_by_file(tmp_path):
    out = tmp_path / "project"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "old.csv").write_text("stale")
    write_file_set(out, {"data.csv": b"2", "page.html": b"p"}, owned=("old.csv",))
    assert sorted(p.name for p in out.iterdir()) == ["data.csv", "notes.txt", "page.html"]
    assert (out / "notes.txt").read_text() == "mine"


def test_a_symbolic_link_keeps_pointing_at_the_new_set(tmp_path):
    real = tmp_path / "real"
    write_file_set(real, {"a": b"1"})
    link = tmp_path / "link"
    link.symlink_to(real)
    write_file_set(link, {"a": b"2"})
    assert link.is_symlink() and (link / "a").read_bytes() == b"2" and (real / "a").read_bytes() == b"2"


def test_the_lock_is_reentrant_refuses_another_holder_and_goes_away(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "out"
    with directory_lock(out):
        assert (out / LOCK_NAME).read_text() == f"{os.getpid()}\n"
        with directory_lock(out):  # the same process: re-entrant (the CLI holds it, write_report takes it again)
            write_file_set(out, {"a": b"1"})
        probe = subprocess.run([sys.executable, "-c", "from metaeval.runtime.files import directory_lock\n"
                                f"with directory_lock({str(out)!r}): pass"], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        assert probe.returncode == 1 and "InputFileError" in probe.stderr
        assert f"{out}: must be a directory that no other metaeval run is writing; got one locked by another run" \
               f" (pid {os.getpid()})" in probe.stderr
    assert sorted(p.name for p in out.iterdir()) == ["a"]
    with pytest.raises(ValueError), directory_lock(tmp_path / "new"):
        raise ValueError
    assert not (tmp_path / "new").exists()  # a failed first run leaves no empty directory



def test_leftovers_of_a_killed_run_go_and_another_outputs_staging_stays(tmp_path):
    mine = tmp_path / ".report.metaeval-staging.k1ll3d"
    theirs = tmp_path / ".report.v2.metaeval-staging.w0rk1n"  # report.v2 is being written by another run
    mine.mkdir()
    theirs.mkdir()
    write_file_set(tmp_path / "report", {"a": b"1"})
    assert sorted(p.name for p in tmp_path.iterdir()) == [theirs.name, "report"]
