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
