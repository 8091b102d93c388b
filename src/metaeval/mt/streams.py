"""Random streams keyed by what they serve (issue 41 item 1): a result never moves because something unrelated
was added to the call.

Every random procedure of the MT wing draws from ``stream(root, *key)``: a Generator seeded by
``numpy.random.SeedSequence(root, spawn_key=...)`` where ``root`` is the call's seed and ``key`` names what the
numbers serve (``('mt', language pair, task)``, ``('audit', language pair, 'sentinels')``, ...). Each key part is
turned into a 32-bit word by CRC-32 of its text (stable across processes and Python versions, unlike
``hash``). Adding or removing a task, a metric or a language pair leaves every other stream as it was; all metric
pairs of one task still share that task's draws.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from .. import _validation as iv

__all__ = ["root_seed", "stream"]


def root_seed(rng: Any) -> int:
    """The non-negative integer seed of a call: ``rng`` itself when it is one, else one draw of its Generator
    (``None``: fresh entropy) - recorded in the signature, so that ``rng=<that int>`` rebuilds the numbers."""
    gen, seed = iv.rng_and_seed(rng)
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed
    return int(gen.integers(2**63 - 1))


def stream(root: int, *key: Any) -> np.random.Generator:
    """The Generator of the stream ``key`` of the seed ``root``."""
    words = tuple(zlib.crc32(str(part).encode("utf-8")) for part in key)
    return np.random.default_rng(np.random.SeedSequence(root, spawn_key=words))
