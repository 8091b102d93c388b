"""Atomic file writes, the one writer of every output file (scores, reports, tables, figures).

A reader, or a crash, sees the old file or the whole new one, never a part: the data go to a temporary
file beside the target, are flushed to disk (fsync), get the permissions of the file they replace (or
of a plain ``open(path, "w")``: 0o666 minus the umask) and are renamed onto the target. On any
exception, Ctrl-C included, the temporary file is removed and the target is untouched. An error names
the target, never the hidden temporary file.

A set of files that belong together (the report's page and its data files) is written by
:func:`write_file_set`: into a temporary directory first, then moved into place as a whole, under the
directory's lock (:func:`directory_lock`), which a second run writing the same directory cannot take.
"""
from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from ..errors import InputFileError

__all__ = ["LOCK_NAME", "directory_lock", "write_bytes_atomic", "write_file_set", "write_text_atomic"]

#: The lock file of a directory being written (present only while a run holds it).
LOCK_NAME = ".metaeval.lock"
_STAGING = ".metaeval-staging"
_HELD: dict[Path, int] = {}  # directory -> lock descriptor held by this process


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
    """Write ``data`` to ``path`` atomically (see the module docstring); create missing parent folders."""
    path = Path(path)
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
def directory_lock(directory: str | os.PathLike) -> Iterator[Path]:
    """Hold ``directory``'s lock (``fcntl.flock`` on ``directory/.metaeval.lock``, created with the
    directory if absent) for the duration of the block.

    A second holder, in any process, fails at once with a one-line
    :class:`~metaeval.errors.InputFileError` naming the directory. Re-entrant within one process. Where
    ``fcntl`` is unavailable (Windows) the block runs unlocked. The lock file is removed when the block
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
        fd = _acquire(fcntl, lock, directory)
    except OSError as error:
        raise _named(error, directory) from None
    _HELD[key] = fd
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield directory
    finally:
        del _HELD[key]
        with contextlib.suppress(OSError):
            lock.unlink()  # while still held: a waiter then finds its file gone and starts again
        os.close(fd)
        if created:
            with contextlib.suppress(OSError):
                directory.rmdir()  # only if empty


def _acquire(fcntl, lock: Path, directory: Path) -> int:
    """A descriptor of ``lock`` holding an exclusive flock; the file may be unlinked by a holder that
    finishes, so the lock counts only if the path still names the locked file."""
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666 & ~_umask())
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise InputFileError(directory, "must be a directory that no other metaeval run is writing; got"
                                                f" one locked by another run{_holder(lock)}: wait for it to finish"
                                                " or choose another output.") from None
            raise
        try:
            same = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


# -- file sets ------------------------------------------------------------------------------------------

def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def _fsync_directory(path: Path) -> None:
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove_stale_staging(parent: Path, prefix: str) -> None:
    """Staging directories a killed run left (safe: the caller holds the directory's lock)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if entry.name.startswith(prefix) and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)


def write_file_set(directory: str | os.PathLike, files: Mapping[str, bytes], *, owned: Iterable[str] = ()) -> list[Path]:
    """Write ``files`` (name -> content) into ``directory`` as one set.

    Under :func:`directory_lock`, the files are written and fsynced in a temporary directory beside
    ``directory``, which then takes ``directory``'s place in one atomic rename (an exchange on Linux; on
    other systems two renames). A reader or a crash sees the old set or the new one, never a mix, and a
    failure (a full disk) leaves the old set untouched. Names in ``owned`` that are not in ``files``
    belong to the set too: an old copy disappears with the old set.

    When ``directory`` holds other files (anything but ``files``, ``owned`` and the lock), or is the
    current working directory, the set cannot move as a whole: the files are staged inside
    ``directory``, then renamed into place one by one in the order of ``files`` (put the file that
    refers to the others last) after the stale ``owned`` files are removed.

    Returns the paths written, in the order of ``files``. An ``OSError`` names ``directory``'s file, not
    the temporary one.
    """
    directory = Path(directory)
    names = list(files)
    members = set(names) | set(owned) | {LOCK_NAME}
    with directory_lock(directory):
        try:
            current = {p.name for p in directory.iterdir()}
            whole = current <= members and directory.resolve() != Path.cwd().resolve()
            mode = directory.stat().st_mode & 0o7777
            parent = directory.resolve().parent if whole else directory
            # .<name>.metaeval-staging.XXXX beside it: no other directory's staging starts the same way
            prefix = f".{directory.resolve().name}{_STAGING}." if whole else f"{_STAGING}."
            _remove_stale_staging(parent, prefix)
            try:
                staging = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
            except PermissionError:  # the parent is not writable: stage inside the directory
                whole, parent, prefix = False, directory, f"{_STAGING}."
                staging = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        except OSError as error:
            raise _named(error, directory) from None
        try:
            file_mode = 0o666 & ~_umask()
            for name in names:
                target = directory / name
                try:
                    _write_fsync(staging / name, files[name], file_mode)
                except OSError as error:
                    raise _named(error, target) from None
            if whole:
                _commit_whole(staging, directory, mode)
            else:
                _commit_each(staging, directory, names, members - set(names) - {LOCK_NAME})
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return [directory / name for name in names]


def _commit_whole(staging: Path, directory: Path, mode: int) -> None:
    """``staging`` (plus a hard link to the held lock) takes ``directory``'s place; the old set goes."""
    directory = directory.resolve()  # a symbolic link keeps pointing at the directory that is replaced
    try:
        with contextlib.suppress(OSError):  # a file system without hard links: the set is done anyway
            os.link(directory / LOCK_NAME, staging / LOCK_NAME)  # the lock stays held across the swap
        os.chmod(staging, mode)
        _fsync_directory(staging)
        if not _exchange(staging, directory):
            old = staging.with_name(staging.name + ".old")
            os.rename(directory, old)
            os.rename(staging, directory)
            os.rename(old, staging)
        _fsync_directory(directory.parent)
    except OSError as error:
        raise _named(error, directory) from None


def _commit_each(staging: Path, directory: Path, names: list[str], stale: set[str]) -> None:
    current = directory
    try:
        for name in sorted(stale):
            current = directory / name
            current.unlink(missing_ok=True)
        for name in names:
            current = directory / name
            os.replace(staging / name, current)
        _fsync_directory(directory)
    except OSError as error:
        raise _named(error, current) from None
