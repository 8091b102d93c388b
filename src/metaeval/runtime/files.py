"""Atomic file writes, the one writer of every output file (scores, reports, tables, figures).

A reader, or a crash, sees the old file or the whole new one, never a part: the data go to a temporary
file beside the target, are flushed to disk (fsync), get the permissions of the file they replace (or
of a plain ``open(path, "w")``: 0o666 minus the umask) and are renamed onto the target. On any
exception, Ctrl-C included, the temporary file is removed and the target is untouched. An error names
the target, never the hidden temporary file.

A set of files that belong together (the report's page and its data files) is written by
:func:`~metaeval.runtime.file_sets.write_file_set` under the directory's lock (:func:`directory_lock`),
which a second run writing the same directory cannot take. The lock file is never followed through a
symbolic link, and a file at its name that is not metaeval's lock is refused, never truncated.
"""
from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputFileError

__all__ = ["LOCK_NAME", "directory_lock", "write_bytes_atomic", "write_text_atomic"]

#: The lock file of a directory being written (present only while a run holds it).
LOCK_NAME = ".metaeval.lock"
_HELD: dict[Path, int] = {}  # directory -> lock descriptor held by this process
#: The output set being collected (:func:`metaeval.runtime.output_sets.output_set`), or None: write at once.
PENDING_SET: contextvars.ContextVar = contextvars.ContextVar("metaeval_pending_output_set", default=None)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _named(error: OSError, path: Path) -> OSError:
    """``error`` with ``path`` as its file name (the output, not a temporary file)."""
    renamed = OSError(error.errno, error.strerror or str(error), str(path))
    return renamed


def _write_fsync(target: Path, data: bytes, mode: int) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.chmod(target, mode)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see the module docstring); create missing parent folders.

    Inside :func:`metaeval.runtime.output_sets.output_set` (every CLI command) the file joins the command's
    output set instead and is written, with the set's other files, when the command ends.
    """
    path = Path(path)
    pending = PENDING_SET.get()
    if pending is not None:
        pending.add(path, data)
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise _named(error, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as error:
        Path(tmp).unlink(missing_ok=True)
        raise _named(error, path) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8, newlines as given) to ``path`` atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))


# -- directory locks ------------------------------------------------------------------------------------

def _holder(lock: Path) -> str:
    try:
        text = lock.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeError):
        return ""
    return f" (pid {text})" if text.isdigit() else ""


@contextlib.contextmanager
def directory_lock(directory: str | os.PathLike, *, wait: float = 0.0) -> Iterator[Path]:
    """Hold ``directory``'s lock (``fcntl.flock`` on ``directory/.metaeval.lock``, created with the
    directory if absent) for the duration of the block.

    A second holder, in any process, fails at once with a one-line
    :class:`~metaeval.errors.InputFileError` naming the directory. Re-entrant within one process. Where
    ``fcntl`` is unavailable (Windows) the block runs unlocked. With ``wait`` > 0 a lock another run holds is
    retried for up to ``wait`` seconds first (an output set's commit holds it for milliseconds). The lock file is removed when the block
    ends, and a directory this call created is removed again if the block leaves it empty (a failed run
    leaves no empty directory behind).
    """
    directory = Path(directory)
    key = directory.resolve()
    if key in _HELD:
        yield directory
        return
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on POSIX
        yield directory
        return
    created = not directory.exists()
    lock = directory / LOCK_NAME
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = _acquire(fcntl, lock, directory, wait)
    except OSError as error:
        raise _named(error, directory) from None
    try:
        _stamp(fd, lock)
    except BaseException:
        os.close(fd)
        if created:
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    _HELD[key] = fd
    try:
        yield directory
    finally:
        del _HELD[key]
        with contextlib.suppress(OSError):
            lock.unlink()  # while still held: a waiter then finds its file gone and starts again
        os.close(fd)
        if created:
            with contextlib.suppress(OSError):
                directory.rmdir()  # only if empty


def _refuse_lock(lock: Path, got: str) -> InputFileError:
    return InputFileError(lock, f"must be metaeval's lock file (a regular file holding a process id) or absent;"
                                f" got {got}: move it away, metaeval never writes through it")


def _open_lock(lock: Path) -> int:
    """A descriptor of ``lock``, created if absent; never through a symbolic link (``O_NOFOLLOW``: a link
    there would make the lock truncate its target), never a FIFO or device (``O_NONBLOCK``, then a
    regular-file check)."""
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    if lock.is_symlink():
        raise _refuse_lock(lock, "a symbolic link")
    try:
        fd = os.open(lock, flags, 0o666 & ~_umask())
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _refuse_lock(lock, "a symbolic link") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise _refuse_lock(lock, "a file that is not a regular file")
    return fd


def _stamp(fd: int, lock: Path) -> None:
    """Write this process's id into the held lock file; refuse a file holding anything but a process id
    (it is not a lock metaeval made, and truncating it would destroy its content)."""
    held = os.pread(fd, 64, 0)
    if held.strip() and not held.strip().isdigit():
        raise _refuse_lock(lock, "a file with other content")
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)


def _acquire(fcntl, lock: Path, directory: Path, wait: float = 0.0) -> int:
    """A descriptor of ``lock`` holding an exclusive flock; the file may be unlinked by a holder that
    finishes, so the lock counts only if the path still names the locked file."""
    deadline = time.monotonic() + wait
    while True:
        fd = _open_lock(lock)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                if time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                raise InputFileError(directory, "must be a directory that no other metaeval run is writing; got"
                                                f" one locked by another run{_holder(lock)}: wait for it to finish"
                                                " or choose another output.") from None
            raise
        try:
            same = os.lstat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)

