"""Sets of files that belong together (the report's page and its data files), written as one.

Two ways to commit a set, both under the directory's lock (:func:`~metaeval.runtime.files.directory_lock`):

- **Whole.** When the directory holds nothing but the set (and its lock), the new files are written and
  fsynced in a fresh sibling directory, which then takes the directory's place in one atomic rename (an
  exchange on Linux; elsewhere two renames). A reader or a crash sees the old set or the new one.
- **In place, with a journal.** When the directory holds other files, is the current working directory, a
  mount point (it cannot be renamed), or its parent is not writable, the directory stays and the files
  move in one by one. First the new files are written and fsynced in a staging folder inside it, every old
  member is hard-linked (copied where links are unsupported) into the staging folder's backup, and a
  journal naming the set is written and fsynced; only then do the renames start. Any error or interrupt
  during the renames (an I/O error, Ctrl-C, SIGTERM) restores the old set from the backup before the error
  is raised; after a kill (SIGKILL, power loss) the next metaeval run that takes the directory's lock finds
  the journal and restores the old set the same way (or keeps the new one when every rename had happened)
  before it does anything else. The renames are the only window in which a reader can see two sets mixed.

A member's name held by a directory or a special file is refused (one line), never removed; files that
are not members are never moved or removed.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import InputFileError
from . import files as _files
from .files import LOCK_NAME, directory_lock

__all__ = ["JOURNAL_NAME", "STAGING_PREFIX", "recover", "write_file_set", "write_file_sets"]

#: Prefix of the staging folders (inside the directory, or ``.<directory name>`` + it beside it).
STAGING_PREFIX = ".metaeval-staging."
#: The journal of an in-place commit, inside its staging folder: present while the renames run.
JOURNAL_NAME = ".metaeval-journal"
_BACKUP = ".metaeval-backup"


class _CannotSwap(Exception):
    """The directory cannot be renamed (a mount point: EBUSY); nothing has changed."""


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


def _check_members(directory: Path, members: Iterable[str]) -> None:
    """Refuse a member's name held by something a file cannot replace (a directory, a FIFO, a device)."""
    for name in sorted(members):
        path = directory / name
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue
        if stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
            continue
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a special file"
        raise InputFileError(path, f"must be a file metaeval can replace; got {kind}, which it never removes:"
                                   " choose another output path")


def _can_swap(directory: Path, members: set[str]) -> bool:
    current = {p.name for p in directory.iterdir()}
    resolved = directory.resolve()
    return current <= members | {LOCK_NAME} and resolved != Path.cwd().resolve() and not os.path.ismount(resolved)


def write_file_set(directory: str | os.PathLike, files: Mapping[str, bytes], *, owned: Iterable[str] = ()) -> list[Path]:
    """Write ``files`` (name -> content) into ``directory`` as one set (see the module docstring).

    Names in ``owned`` that are not in ``files`` belong to the set too: an old copy disappears with the old
    set. In place, the files move in the order of ``files`` (put the file that refers to the others last).
    Returns the paths written, in the order of ``files``. An ``OSError`` names ``directory``'s file, not a
    temporary one; a member's name held by a directory is an :class:`~metaeval.errors.InputFileError`.
    """
    directory = Path(directory)
    names = list(files)
    members = set(names) | set(owned)
    pending = _files.PENDING_SET.get()
    if pending is not None:  # a CLI command: the set joins the command's outputs, written when it ends
        pending.add_set(directory, files, owned=owned)
        return [directory / name for name in names]
    with directory_lock(directory):
        try:
            recover(directory)
            _check_members(directory, members)
            whole = _can_swap(directory, members)
        except OSError as error:
            raise _files._named(error, directory) from None
        if whole:
            try:
                _write_whole(directory, files, members)
                return [directory / name for name in names]
            except _CannotSwap:
                pass  # the directory stays: commit in place
        _write_in_place(directory, files, members - set(names))
    return [directory / name for name in names]


def _stage(staging: Path, directory: Path, files: Mapping[str, bytes]) -> None:
    file_mode = 0o666 & ~_files._umask()
    for name, data in files.items():
        try:
            _files._write_fsync(staging / name, data, file_mode)
        except OSError as error:
            raise _files._named(error, directory / name) from None


def _write_whole(directory: Path, files: Mapping[str, bytes], members: set[str]) -> None:
    try:
        mode = directory.stat().st_mode & 0o7777
        parent = directory.resolve().parent
        prefix = f".{directory.resolve().name}{STAGING_PREFIX}"  # no other directory's staging starts so
        _remove_stale(parent, prefix)
        staging = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    except PermissionError:  # the parent is not writable
        raise _CannotSwap() from None
    except OSError as error:
        raise _files._named(error, directory) from None
    try:
        _stage(staging, directory, files)
        _commit_whole(staging, directory, mode, members)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _commit_whole(staging: Path, directory: Path, mode: int, members: set[str]) -> None:
    """``staging`` (plus a hard link to the held lock) takes ``directory``'s place; the old set goes."""
    directory = directory.resolve()  # a symbolic link keeps pointing at the directory that is replaced
    try:
        with contextlib.suppress(OSError):  # a file system without hard links: the set is done anyway
            os.link(directory / LOCK_NAME, staging / LOCK_NAME)  # the lock stays held across the swap
        os.chmod(staging, mode)
        _fsync_directory(staging)
        try:
            swapped = _exchange(staging, directory)
        except OSError as error:
            if error.errno in (errno.EBUSY, errno.EXDEV, errno.EPERM):
                raise _CannotSwap() from None
            raise
        if not swapped:
            old = staging.with_name(staging.name + ".old")
            try:
                os.rename(directory, old)
            except OSError as error:
                if error.errno in (errno.EBUSY, errno.EXDEV, errno.EPERM):
                    raise _CannotSwap() from None
                raise
            try:
                os.rename(staging, directory)
            except BaseException:
                os.rename(old, directory)
                raise
            os.rename(old, staging)
        _fsync_directory(directory.parent)
        # staging now holds the old set: a file another program put there since the listing goes back
        for entry in list(staging.iterdir()):
            if entry.name not in members and entry.name != LOCK_NAME and not os.path.lexists(directory / entry.name):
                os.rename(entry, directory / entry.name)
    except OSError as error:
        raise _files._named(error, directory) from None


# -- in place, with a journal -----------------------------------------------------------------------------

def _write_in_place(directory: Path, files: Mapping[str, bytes], stale: set[str]) -> None:
    try:
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=directory))
    except OSError as error:
        raise _files._named(error, directory) from None
    try:
        _stage(staging, directory, files)
        _commit_in_place(staging, directory, list(files), stale)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _back_up(source: Path, target: Path) -> None:
    try:
        os.link(source, target, follow_symlinks=False)
    except OSError:  # no hard links here: a copy
        shutil.copy2(source, target, follow_symlinks=False)


def _commit_in_place(staging: Path, directory: Path, names: list[str], stale: set[str]) -> None:
    journal = _prepare(staging, directory, names, stale)
    _move(staging, directory, journal)
    (staging / JOURNAL_NAME).unlink()


def _prepare(staging: Path, directory: Path, names: list[str], stale: set[str], peers: list[str] = ()) -> dict:
    """Back up the old members into ``staging`` and write the fsynced journal (``peers``: the staging folders
    of the other directories of one multi-directory set). Nothing in ``directory`` has moved yet."""
    current = directory
    try:
        backup = staging / _BACKUP
        backup.mkdir()
        for name in [*names, *sorted(stale)]:
            current = directory / name
            if os.path.lexists(current):
                _back_up(current, backup / name)
        journal = {"names": names, "stale": sorted(stale)}
        if peers:
            journal["peers"] = list(peers)
        current = directory
        _files._write_fsync(staging / JOURNAL_NAME, json.dumps(journal).encode("utf-8"), 0o600)
        _fsync_directory(backup)
        _fsync_directory(staging)
    except OSError as error:  # nothing has moved yet
        raise _files._named(error, current) from None
    return journal


def _move(staging: Path, directory: Path, journal: dict) -> None:
    """The renames of one directory; any error or interrupt restores its old set before it is raised."""
    current = directory
    try:
        for name in journal["stale"]:
            current = directory / name
            current.unlink(missing_ok=True)
        for name in journal["names"]:
            current = directory / name
            os.replace(staging / name, current)
        _fsync_directory(directory)
    except BaseException as error:
        _roll_back(staging, directory, journal)
        if isinstance(error, OSError):
            raise _files._named(error, current) from None
        raise


# -- several directories, one set ---------------------------------------------------------------------------

def write_file_sets(sets: Mapping[str | os.PathLike, tuple[Mapping[str, bytes], Iterable[str]]]) -> list[Path]:
    """Write files into several directories as one set: ``sets`` maps a directory to ``(files, stale)``
    (``files``: name -> content; ``stale``: names of the set to remove there).

    Every directory is locked (in a fixed order) and recovered first; the new files and a backup of the old
    ones are staged and a journal naming every directory's staging folder is fsynced in each, before any
    rename. An error or an interrupt during the renames restores every directory's old files; after a kill
    the next run that takes any one of the locks restores them all, unless every rename had happened (then
    the new set stays). A single directory is committed by :func:`write_file_set`'s journal (never swapped
    whole). Returns the paths written.
    """
    plan = [(Path(d), dict(files), set(stale) - set(files)) for d, (files, stale) in sets.items()]
    plan.sort(key=lambda item: str(item[0].resolve()))
    written = [d / name for d, files, _ in plan for name in files]
    with contextlib.ExitStack() as stack:
        stagings: list[tuple[Path, Path, dict, set]] = []
        try:
            for directory, files, stale in plan:
                stack.enter_context(directory_lock(directory, wait=LOCK_WAIT))
                try:
                    recover(directory)
                    _check_members(directory, set(files) | stale)
                except OSError as error:
                    raise _files._named(error, directory) from None
            for directory, files, stale in plan:
                try:
                    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=directory))
                except OSError as error:
                    raise _files._named(error, directory) from None
                stagings.append((staging, directory, files, stale))
                _stage(staging, directory, files)
            peers = [str(staging.resolve()) for staging, *_ in stagings]
            journals = [(staging, directory, _prepare(staging, directory, list(files), stale, peers))
                        for staging, directory, files, stale in stagings]
            done: list[tuple[Path, Path, dict]] = []
            try:
                for staging, directory, journal in journals:
                    _move(staging, directory, journal)  # restores its own directory on failure
                    done.append((staging, directory, journal))
            except BaseException:
                for staging, directory, journal in done:
                    _roll_back(staging, directory, journal)
                raise
            for staging, _, _ in journals:
                (staging / JOURNAL_NAME).unlink()
        finally:
            for staging, *_ in stagings:
                shutil.rmtree(staging, ignore_errors=True)
    return written


#: Seconds a set's commit waits for a directory another run is committing to (a commit takes milliseconds).
LOCK_WAIT = 5.0


def _roll_back(staging: Path, directory: Path, journal: dict) -> None:
    """Put the old set back from ``staging``'s backup (a member without an old copy is removed)."""
    backup = staging / _BACKUP
    for name in [*journal["names"], *journal["stale"]]:
        saved, target = backup / name, directory / name
        with contextlib.suppress(OSError):  # each file on its own: one failure does not stop the others
            if os.path.lexists(saved):
                os.replace(saved, target)
            elif name in journal["names"] and not os.path.lexists(staging / name):
                target.unlink(missing_ok=True)  # it moved in, and had no old copy
    _fsync_directory(directory)


def recover(directory: str | os.PathLike) -> None:
    """Finish what a killed in-place commit left in ``directory`` (the caller holds its lock): the old set
    is restored from the backup, unless every new file had moved in (then the new set stays); staging
    folders without a journal are removed. The journal of a set spanning several directories names the
    other directories' staging folders: the set is restored in all of them (each under its lock), or kept
    in all of them."""
    directory = Path(directory)
    if not directory.is_dir():
        return
    for entry in directory.iterdir():
        if not (entry.name.startswith(STAGING_PREFIX) and entry.is_dir() and not entry.is_symlink()):
            continue
        journal = _journal(entry)
        if journal is not None:
            peers = [Path(p) for p in journal.get("peers", ()) if Path(p) != entry.resolve()]
            peer_journals = [(peer, peer_journal) for peer in peers if (peer_journal := _journal(peer)) is not None]
            pending = [(entry, journal), *peer_journals]
            if any(os.path.lexists(staging / name) for staging, j in pending for name in j["names"]):
                _roll_back(entry, directory, journal)
                for peer, peer_journal in peer_journals:
                    with contextlib.suppress(InputFileError, OSError), directory_lock(peer.parent):
                        if (peer / JOURNAL_NAME).exists():
                            _roll_back(peer, peer.parent, peer_journal)
            for peer, _ in peer_journals:
                with contextlib.suppress(InputFileError, OSError), directory_lock(peer.parent):
                    shutil.rmtree(peer, ignore_errors=True)
        shutil.rmtree(entry, ignore_errors=True)


def _journal(staging: Path) -> dict | None:
    """The journal in ``staging``, or None (absent, or not one metaeval wrote)."""
    try:
        journal = json.loads((staging / JOURNAL_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return journal if isinstance(journal, dict) and isinstance(journal.get("names"), list) else None


def _remove_stale(parent: Path, prefix: str) -> None:
    """Sibling staging directories a killed whole commit left (safe: the caller holds the lock)."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if entry.name.startswith(prefix) and entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
