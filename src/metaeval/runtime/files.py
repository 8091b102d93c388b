"""Atomic file writes, the one writer of every output file (scores, reports, tables, figures).

A reader, or a crash, sees the old file or the whole new one, never a part: the data go to a temporary
file beside the target, are flushed to disk (fsync), get the permissions of the file they replace (or
of a plain ``open(path, "w")``: 0o666 minus the umask) and are renamed onto the target. On any
exception, Ctrl-C included, the temporary file is removed and the target is untouched.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["write_bytes_atomic", "write_text_atomic"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring); create missing parent folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))
