"""A user's protocol from a TOML file (docs/mt.md, "Your own protocol"): :func:`load_protocol`."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..errors import InputFileError, ParameterError
from ..stats.mt.protocol import PROTOCOLS, Protocol, protocol_from_mapping

__all__ = ["load_protocol"]


def load_protocol(source: str | Path | Protocol) -> Protocol:
    """A :class:`~metaeval.stats.mt.protocol.Protocol`: a preset's name (``'wmt23'``, ``'wmt24'``,
    ``'wmt25'``, ``'mean'``), a TOML file (a path ending in ``.toml`` or an existing file), or a Protocol.

    The file's keys are those of :func:`metaeval.stats.mt.protocol.protocol_from_mapping`; a syntax error or a
    wrong key is an :class:`~metaeval.errors.InputFileError` naming the file and the key."""
    import tomllib

    if isinstance(source, Protocol):
        return source
    text = str(source)
    path = Path(text)
    if text in PROTOCOLS and not path.is_file():
        return PROTOCOLS[text]
    if not (text.endswith(".toml") or path.is_file()):
        raise ParameterError(f"`protocol` must be one of {', '.join(map(repr, PROTOCOLS))} or a .toml file; got"
                             f" {text!r}.")
    if not path.is_file():
        raise InputFileError(path, "the protocol file must exist; got no such file.")
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InputFileError(path, f"the protocol must be TOML; got {err}.") from None
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
