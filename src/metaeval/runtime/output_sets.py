"""Every command's outputs committed as one set: all of them, or none, and never a mix of two runs.

A command may write several files (``--output``, ``--html``, ``--plot``, ``--delta-plot``, a score file and
its sidecar, a report's page and data files). Inside :func:`output_set` (the CLI runs every command in one)
nothing is written while the command computes: :func:`~metaeval.runtime.files.write_bytes_atomic` and
:func:`~metaeval.runtime.file_sets.write_file_set` hand their files to the set, which is committed when the
command returns, and dropped, with nothing written, when it fails or is interrupted before.

The commit (:func:`~metaeval.runtime.file_sets.write_file_set` for one directory,
:func:`~metaeval.runtime.file_sets.write_file_sets` for several) stages every file and a backup of the old
ones in each directory before the first rename, under every directory's lock: a read-only or full
directory for the second output fails before the first output is replaced; an error, Ctrl-C or SIGTERM
between the renames restores every old file; after a SIGKILL the next run that takes one of the locks
restores the whole set. :func:`recover_outputs` is that next run's first step (the CLI calls it before a
command reads its input), so the set is restored even when that run then fails on its input.

Two outputs of one command at one path are refused (:class:`~metaeval.errors.InputFileError`): one of
them would silently be lost.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from ..errors import InputFileError
from . import files as _files
from .file_sets import LOCK_WAIT, recover, write_file_set, write_file_sets
from .files import directory_lock

__all__ = ["OutputSet", "commit_pending", "output_set", "recover_outputs", "when_written"]


def _key(path: Path) -> Path:
    """One key per file whatever the spelling: the resolved folder and the name."""
    return Path(os.path.realpath(path.parent)) / path.name


class OutputSet:
    """Files (and sets of files) waiting to be written together; :meth:`commit` writes them."""

    def __init__(self) -> None:
        self._folders: dict[Path, dict] = {}  # resolved folder -> {"path", "files", "stale", "whole"}
        self._paths: dict[Path, Path] = {}  # key -> the path as the command named it
        self._announcements: list[Callable[[], None]] = []

    def __len__(self) -> int:
        return len(self._paths)

    @property
    def paths(self) -> list[Path]:
        """The files of the set, in the order they were added."""
        return list(self._paths.values())

    def _folder(self, directory: Path) -> dict:
        key = Path(os.path.realpath(directory))
        return self._folders.setdefault(key, {"path": directory, "files": {}, "stale": set(), "whole": None})

    def _claim(self, path: Path) -> None:
        key = _key(path)
        if key in self._paths:
            raise InputFileError(path, "must be written once by a command; got two of its outputs at this path"
                                       " (one would be lost): give each output its own path")
        self._paths[key] = path

    def add(self, path: str | os.PathLike, data: bytes) -> None:
        """Add one file; a second file at the same path is refused."""
        path = Path(path)
        self._claim(path)
        folder = self._folder(path.parent)
        folder["files"][path.name] = bytes(data)
        folder["whole"] = False  # a single output never swaps its whole directory

    def add_set(self, directory: str | os.PathLike, files: Mapping[str, bytes], *, owned: Iterable[str] = ()) -> None:
        """Add a set of files of one directory (:func:`~metaeval.runtime.file_sets.write_file_set`'s arguments)."""
        directory = Path(directory)
        for name in files:
            self._claim(directory / name)
        folder = self._folder(directory)
        folder["whole"] = folder["whole"] is None  # the directory may be swapped whole if it is the only set there
        folder["files"].update({name: bytes(data) for name, data in files.items()})
        folder["stale"] |= set(owned) - set(files)

    def when_written(self, action: Callable[[], None]) -> None:
        """Run ``action`` (a "wrote ..." message) after the set is committed, not before."""
        self._announcements.append(action)

    def commit(self) -> list[Path]:
        """Write every file of the set as one (see the module docstring), then run the :meth:`when_written`
        actions; the set is empty again afterwards. Returns the paths written."""
        folders = [f for f in self._folders.values() if f["files"] or f["stale"]]
        announcements, self._announcements = self._announcements, []
        self._folders, self._paths = {}, {}
        written: list[Path] = []
        if len(folders) == 1 and folders[0]["whole"]:
            (folder,) = folders
            names = list(folder["files"])
            written = write_file_set(folder["path"], folder["files"], owned=(*names, *folder["stale"]))
        elif folders:
            written = write_file_sets({f["path"]: (f["files"], f["stale"]) for f in folders})
        for action in announcements:
            action()
        return written


@contextlib.contextmanager
def output_set() -> Iterator[OutputSet]:
    """Collect every file written in the block and commit them as one set when the block ends normally.

    On an exception (an error, Ctrl-C, SIGTERM) nothing is written. Nested blocks join the outer set.
    """
    if _files.PENDING_SET.get() is not None:
        yield _files.PENDING_SET.get()
        return
    pending = OutputSet()
    token = _files.PENDING_SET.set(pending)
    try:
        yield pending
    finally:
        _files.PENDING_SET.reset(token)
    pending.commit()


def commit_pending() -> list[Path]:
    """Commit the files written so far (a command that has written all its outputs and then prints what it
    wrote); outside :func:`output_set` nothing is pending and nothing happens."""
    pending = _files.PENDING_SET.get()
    if pending is None:
        return []
    token = _files.PENDING_SET.set(None)
    try:
        return pending.commit()
    finally:
        _files.PENDING_SET.reset(token)


def when_written(action: Callable[[], None]) -> None:
    """Run ``action`` once the current output set is committed (at once outside :func:`output_set`)."""
    pending = _files.PENDING_SET.get()
    if pending is None:
        action()
    else:
        pending.when_written(action)


def recover_outputs(paths: Iterable[str | os.PathLike]) -> None:
    """Restore (or finish) what a killed commit left in the folders of ``paths``: the step the next run takes
    first, before it reads anything. Folders that do not exist are skipped (and not created)."""
    seen: set[Path] = set()
    for path in paths:
        folder = Path(path).parent
        key = Path(os.path.realpath(folder))
        if key in seen or not folder.is_dir():
            continue
        seen.add(key)
        if not any(entry.name.startswith(".metaeval") for entry in _listing(folder)):
            continue  # nothing a killed commit could have left
        with directory_lock(folder, wait=LOCK_WAIT):
            try:
                recover(folder)
            except OSError as error:
                raise _files._named(error, folder) from None


def _listing(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as entries:
            return list(entries)
    except OSError:
        return []
