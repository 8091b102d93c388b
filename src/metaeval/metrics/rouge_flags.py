"""ROUGE-1.5.5 command-line flags: parsing them into :class:`~metaeval.metrics.Rouge` options and back.

========  ==========================  =====================================================
flag      option                      meaning
========  ==========================  =====================================================
``-n N``  ``n=N``                     ROUGE-1 ... ROUGE-N
``-m``    ``stem=True``               WordNet exceptions + Porter variant, tokens > 3 chars
``-s``    ``remove_stopwords=True``   drop the SMART stopwords
``-l N``  ``word_limit=N``            keep the first N words
``-b N``  ``byte_limit=N``            keep the first N bytes
``-x``    ``lcs=False``               no ROUGE-L
``-w W``  ``weight=W``                ROUGE-W-W
``-2 D``  ``skip_distance=D``         ROUGE-SD (at most D words between; D < 0: no limit)
``-u``    ``skip_unigrams=True``      ROUGE-SUD instead of ROUGE-SD
``-U``    ``skip_unigrams='both'``    ROUGE-SD and ROUGE-SUD
``-f A``  ``multi_reference=...``     ``'average'`` (A, default) or ``'best'`` (B)
``-p a``  ``alpha=a``                 alpha of F (0.5; 1 gives precision, 0 recall)
``-t T``  ``counting_unit=...``       0: ``'sentence'``, 1 or 2: ``'token'``
========  ==========================  =====================================================

``-a``, ``-d``, ``-v``, ``-c CF``, ``-r R`` and ``-e DIR`` are accepted and change nothing here (they
select systems, printing, confidence intervals or the data directory); ``-z``, ``-3`` and ``-M``
(other input formats, Basic Elements, model-only stemming) are not supported.
"""
from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from ..errors import ParameterError

__all__ = ["options_from_flags", "flags_from_options"]

_VALUE_FLAGS = {"-n", "-l", "-b", "-w", "-2", "-f", "-p", "-t", "-c", "-r", "-e"}
_SWITCHES = {"-m", "-s", "-x", "-u", "-U", "-a", "-d", "-v"}
_UNSUPPORTED = {"-z", "-3", "-M", "-h", "-H"}


def _number(flag: str, text: str, kind: type) -> Any:
    try:
        return kind(text)
    except ValueError:
        noun = "an integer" if kind is int else "a number"
        raise ParameterError(f"`{flag}` must be followed by {noun}; got {text!r}.") from None


def options_from_flags(flags: str | Sequence[str]) -> dict[str, Any]:
    """Translate ROUGE-1.5.5 flags into keyword arguments of :class:`~metaeval.metrics.Rouge`.

    Parameters
    ----------
    flags : str or sequence of str
        E.g. ``"-n 2 -m -s -l 100"``; switches may be combined Perl-style (``"-msx"``).

    Returns
    -------
    dict
        Keyword arguments; options without a flag keep ROUGE-1.5.5's defaults (no ROUGE-N
        without ``-n``, ROUGE-L unless ``-x``).

    Raises
    ------
    ParameterError
        For unknown or unsupported flags, missing or malformed values.
    """
    words = shlex.split(flags) if isinstance(flags, str) else list(flags)
    expanded: list[str] = []
    for word in words:
        # getopts-style bundles: "-ms" is "-m -s"; "-n2" is "-n 2".
        if word.startswith("-") and len(word) > 2 and word[:2] in _SWITCHES | _VALUE_FLAGS:
            head = word[:2]
            expanded.append(head)
            rest = word[2:]
            if head in _VALUE_FLAGS:
                expanded.append(rest)
            else:
                expanded.extend(f"-{c}" for c in rest)
        else:
            expanded.append(word)
    options: dict[str, Any] = {"n": 0}
    skip_unigrams: Any = False
    i = 0
    while i < len(expanded):
        flag = expanded[i]
        if flag in _UNSUPPORTED:
            raise ParameterError(f"`flags` must not contain {flag} (not supported by metaeval); got {flags!r}.")
        if flag in _SWITCHES:
            if flag == "-m":
                options["stem"] = True
            elif flag == "-s":
                options["remove_stopwords"] = True
            elif flag == "-x":
                options["lcs"] = False
            elif flag == "-u":
                skip_unigrams = True if skip_unigrams is False else skip_unigrams
            elif flag == "-U":
                skip_unigrams = "both"
            i += 1
            continue
        if flag not in _VALUE_FLAGS:
            raise ParameterError(f"`flags` must contain only ROUGE-1.5.5 options; got {flag!r}.")
        if i + 1 >= len(expanded):
            raise ParameterError(f"`{flag}` must be followed by a value; got {flags!r}.")
        value = expanded[i + 1]
        if flag == "-n":
            options["n"] = _number(flag, value, int)
        elif flag == "-l":
            options["word_limit"] = _number(flag, value, int) or None
        elif flag == "-b":
            options["byte_limit"] = _number(flag, value, int) or None
        elif flag == "-w":
            options["weight"] = _number(flag, value, float)
        elif flag == "-2":
            options["skip_distance"] = _number(flag, value, int)
        elif flag == "-p":
            options["alpha"] = _number(flag, value, float)
        elif flag == "-f":
            if value not in ("A", "B"):
                raise ParameterError(f"`-f` must be one of 'A', 'B'; got {value!r}.")
            options["multi_reference"] = "average" if value == "A" else "best"
        elif flag == "-t":
            unit = _number(flag, value, int)
            if unit not in (0, 1, 2):
                raise ParameterError(f"`-t` must be one of 0, 1, 2; got {value!r}.")
            options["counting_unit"] = "sentence" if unit == 0 else "token"
        i += 2
    if skip_unigrams is not False:
        options["skip_unigrams"] = skip_unigrams
    return options


def _format(x: float) -> str:
    return f"{x:g}"


def flags_from_options(
    *,
    n: int,
    stem: bool,
    remove_stopwords: bool,
    word_limit: int | None,
    byte_limit: int | None,
    lcs: bool,
    weight: float | None,
    skip_distance: int | None,
    skip_unigrams: bool | str,
    multi_reference: str,
    alpha: float,
    counting_unit: str,
) -> str:
    """The ROUGE-1.5.5 flags equivalent to validated options, in a fixed order.

    ``-f``, ``-p`` and ``-t`` are always written, so that the string states every setting.

    Returns
    -------
    str
        E.g. ``'-n 2 -m -f A -p 0.5 -t 0'``.
    """
    parts: list[str] = []
    if n:
        parts += ["-n", str(n)]
    if stem:
        parts.append("-m")
    if remove_stopwords:
        parts.append("-s")
    if word_limit is not None:
        parts += ["-l", str(word_limit)]
    if byte_limit is not None:
        parts += ["-b", str(byte_limit)]
    if not lcs:
        parts.append("-x")
    if weight is not None:
        parts += ["-w", _format(weight)]
    if skip_distance is not None:
        parts += ["-2", str(skip_distance)]
        if skip_unigrams == "both":
            parts.append("-U")
        elif skip_unigrams:
            parts.append("-u")
    parts += ["-f", "A" if multi_reference == "average" else "B"]
    parts += ["-p", _format(alpha)]
    parts += ["-t", "0" if counting_unit == "sentence" else "1"]
    return " ".join(parts)
