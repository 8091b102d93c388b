"""A user's protocol from a TOML file (docs/mt.md, "Your own protocol"): :func:`load_protocol`."""
from __future__ import annotations

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
