"""A user's protocol from a TOML file (docs/mt.md, "Your own protocol"): :func:`load_protocol`."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..errors import InputFileError, ParameterError
from ..stats.mt.protocol import PROTOCOLS, Protocol, protocol_from_mapping

__all__ = ["MAX_NESTING", "load_protocol"]

MAX_NESTING = 64
"""The deepest nesting of arrays and inline tables a protocol file may have (a protocol needs 2; Python's
TOML reader recurses per level and fails at about a thousand)."""


def _nesting(text: str) -> int:
    """The nesting depth of arrays and inline tables (``[`` / ``{``) in TOML ``text``, outside strings and
    comments (a table header ``[[task]]`` counts 2: an upper bound), checked before the recursive reader."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif char in "\"'":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else char
            j = i + len(quote)
            while j < n and text[j:j + len(quote)] != quote:
                j += 2 if text[j] == "\\" and char == '"' else 1
            i = j + len(quote) - 1
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
        i += 1
    return deepest


def load_protocol(source: str | Path | Protocol) -> Protocol:
    """A :class:`~metaeval.stats.mt.protocol.Protocol`: a preset's name (``'wmt23'``, ``'wmt24'``,
    ``'wmt25'``, ``'mean'``), a TOML file (a path ending in ``.toml`` or an existing file), or a Protocol.

    A preset's name always means the preset, even when a file of that name is in the working directory (the
    signature says ``protocol:wmt23``, so the file must not silently replace it): name such a file
    ``./wmt23`` (a str naming a path) or pass a ``pathlib.Path``. The file's keys are those of
    :func:`metaeval.stats.mt.protocol.protocol_from_mapping`; a syntax error, nesting deeper than
    :data:`MAX_NESTING` or a wrong key is an :class:`~metaeval.errors.InputFileError` naming the file and
    the key."""
    import tomllib

    if isinstance(source, Protocol):
        return source
    text = str(source)
    path = Path(text)
    if text in PROTOCOLS and not isinstance(source, Path):
        return PROTOCOLS[text]
    if not (text.endswith(".toml") or path.is_file()):
        raise ParameterError(f"`protocol` must be one of {', '.join(map(repr, PROTOCOLS))} or a .toml file; got"
                             f" {text!r}.")
    if not path.is_file():
        raise InputFileError(path, "the protocol file must exist; got no such file.")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputFileError(path, f"the protocol must be TOML; got {err}.") from None
    depth = _nesting(text)
    if depth > MAX_NESTING:
        raise InputFileError(path, f"the protocol must be TOML nested at most {MAX_NESTING} deep; got brackets or"
                                   f" braces nested {depth:,} deep.")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputFileError(path, f"the protocol must be TOML; got {err}.") from None
    except RecursionError:  # pragma: no cover - _nesting refuses such a file first
        raise InputFileError(path, "the protocol must be TOML nested at most"
                                   f" {MAX_NESTING} deep; got deeper nesting.") from None
    try:
        return protocol_from_mapping(table)
    except ParameterError as err:
        raise InputFileError(path, str(err)) from None


def protocol_hash(protocol: Protocol) -> str:
    """The first 12 hexadecimal digits of the SHA-256 of a protocol's content: everything that moves a number
    (tasks and weights, rescaling, pooled weight, test, human-tie rule, p-values, golds), not its name or
    description. Two protocols with one name and different weights sign differently (``protocol_hash:``)."""
    content = {"tasks": [[t.level, t.statistic, repr(float(t.weight))] for t in protocol.tasks],
               "rescaling": protocol.rescaling, "pooled_weight": repr(protocol.pooled_weight),
               "significance": protocol.significance, "human_ties": protocol.human_ties, "pvalue": protocol.pvalue,
               "human": protocol.human, "gold": [list(g) for g in protocol.gold]}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode("utf-8")).hexdigest()[:12]
