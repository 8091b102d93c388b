"""Many bootstrap input draws kept as their input counts, the indices regenerated on demand.

BOOT-INPUTS / BOOT-BOTH on 100,000 inputs with 1000 resamples draws 10^8 input indices: 400 MB even as int32,
held for a whole correlation table. The kernels need only how often each input is drawn in each resample (the
resampled sums and correlations weight input ``j`` by its count ``c_sj``), and counts fit in one byte (a count
above 255 keeps them as int32). :class:`RegeneratedDraws` holds those counts (100 MB) and, to give the indices
themselves to the few callers that need them (the reference path of
:func:`~metaeval.stats.resampling.bootstrap.bootstrap_samples`), the generator's state at the start of every
block of resamples: regenerating a block from its state gives the same numbers, since successive draws of a
:class:`numpy.random.Generator` continue one stream.
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

__all__ = ["RegeneratedDraws"]


def _counts(indices: np.ndarray, size: int, start: int) -> tuple[int, np.ndarray]:
    k = indices.shape[0]
    flat = indices + (np.arange(k) * size)[:, None]
    return start, np.bincount(flat.ravel(), minlength=k * size).reshape(k, size)


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def _background(fn, *args):
    """``fn(*args)`` in the thread pool of :mod:`metaeval.stats.kernels.parts` when it has more than one thread (the
    next block is drawn meanwhile: the generator releases the GIL), else at once; an object with ``result()``."""
    from metaeval.stats.kernels import parts

    if parts.threads() > 1 and not parts.in_pool():
        import contextvars

        return parts.pool(1).submit(contextvars.copy_context().run, fn, *args)
    return _Done(fn(*args))


class RegeneratedDraws:
    """``gen.integers(0, m, size=(k, m))`` drawn in blocks of ``block`` resamples: the int32 index array as an
    array-like (``shape``, ``dtype``, indexing by resample or slice of resamples, ``numpy.asarray``) that
    regenerates the indices it is asked for, and :attr:`counts`, the multiplicity of every input in every
    resample, ``(k, m)`` uint8 (int32 if a count exceeds 255), read-only."""

    ndim = 2
    dtype = np.dtype(np.int32)

    def __init__(self, gen: np.random.Generator, m: int, k: int, block: int):
        self.shape = (k, m)
        self._block = block
        self._kind = type(gen.bit_generator)
        self._states = []
        counts = np.empty((k, m), dtype=np.uint8)
        pending = None  # the counting of the previous block, in the pool while this block is drawn
        for start in range(0, k, block):
            stop = min(k, start + block)
            self._states.append(copy.deepcopy(gen.bit_generator.state))
            indices = gen.integers(0, m, size=(stop - start, m))
            if pending is not None:
                counts = self._store(counts, *pending.result())
            pending = _background(_counts, indices, m, start)
        if pending is not None:
            counts = self._store(counts, *pending.result())
            if not isinstance(pending, _Done):  # the blocks were counted in the pool: return its freed memory
                from metaeval.stats.kernels import parts

                parts.release_freed()
        counts.setflags(write=False)
        self.counts = counts

    @staticmethod
    def _store(counts: np.ndarray, start: int, c: np.ndarray) -> np.ndarray:
        """``counts`` with the block of resamples from ``start`` set to ``c`` (widened to int32 past 255)."""
        if counts.dtype == np.uint8 and c.max() > np.iinfo(np.uint8).max:
            counts = counts.astype(np.int32)
        counts[start:start + c.shape[0]] = c
        return counts

    def __len__(self) -> int:
        return self.shape[0]

    def _rows(self, start: int, stop: int) -> np.ndarray:
        """The indices of resamples ``start .. stop - 1`` (int32)."""
        k, m = self.shape
        out = np.empty((max(0, stop - start), m), dtype=np.int32)
        first = start // self._block
        for b in range(first, (stop - 1) // self._block + 1 if stop > start else first):
            gen = np.random.Generator(self._kind())
            gen.bit_generator.state = self._states[b]
            b0 = b * self._block
            block = gen.integers(0, m, size=(min(k, b0 + self._block) - b0, m))
            lo, hi = max(start, b0), min(stop, b0 + len(block))
            out[lo - start:hi - start] = block[lo - b0:hi - b0]
        out.setflags(write=False)
        return out

    def __getitem__(self, key: Any) -> np.ndarray:
        k = self.shape[0]
        if isinstance(key, (int, np.integer)):
            s = int(key) + (k if key < 0 else 0)
            if not 0 <= s < k:
                raise IndexError("resample index out of range")
            return self._rows(s, s + 1)[0]
        if isinstance(key, slice) and key.step in (None, 1):
            start, stop, _ = key.indices(k)
            return self._rows(start, max(start, stop))
        return np.asarray(self)[key]

    def __iter__(self):
        for start in range(0, self.shape[0], self._block):
            yield from self._rows(start, min(self.shape[0], start + self._block))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self._rows(0, self.shape[0])
        return out if dtype is None else out.astype(dtype)

    def setflags(self, write: bool = False) -> None:
        """Read-only already (the draws cannot be written)."""
        if write:
            raise ValueError("regenerated bootstrap draws are read-only")
