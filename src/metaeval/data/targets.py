"""Options that target one of several score files: ``FILE=VALUE``.

A repeatable reading option (``--input-column``, ``--where``, ``--layout``, ...) applies to every file,
or, written ``FILE=VALUE``, to the one file ``FILE``. A file name may itself hold ``=``
(``run=3.csv``), so the text before the first ``=`` is not enough. The rule: ``FILE`` is the **longest**
of the given files such that the option's text starts with that file followed by ``=``; when none does,
the option is for every file. ``--input-column run=3.csv=seg_id`` is thus ``seg_id`` for ``run=3.csv``
even when a file ``run`` is given too, and a file is always targeted by writing its name exactly as given
to ``--scores``.
"""
from __future__ import annotations

from collections.abc import Iterable

__all__ = ["split_target"]


def split_target(value: str, files: Iterable[str]) -> tuple[str | None, str]:
    """``(file, rest)`` of a ``[FILE=]VALUE`` option: the longest of ``files`` that ``value`` starts with,
    followed by ``=``, and the text after it; ``(None, value)`` when no file is named.

    Examples
    --------
    >>> split_target("run=3.csv=seg_id", ["run=3.csv", "run"])
    ('run=3.csv', 'seg_id')
    >>> split_target("seg_id", ["a.csv"])
    (None, 'seg_id')
    """
    named = [f for f in files if value.startswith(f"{f}=")]
    if not named:
        return None, value
    file = max(named, key=len)
    return file, value[len(file) + 1:]
