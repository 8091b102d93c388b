"""numba's cache saves made one process at a time.

numba's save of a compiled loop (``numba.core.caching.IndexDataCacheFile.save``) reads the function's index,
takes the first free data file number, writes the index, then the machine code. Two processes that compile two
type signatures of one function at once (two commands started together on a fresh installation, pytest-xdist
workers, dask workers on one machine) can take the same number: the index then names, for one signature, the
machine code of the other, and every later process that loads it makes a wrong call or crashes (numba issue
10128 is the same kind of race). :func:`lock_cache_saves` wraps the save in an exclusive ``flock`` on a lock
file in the cache directory, so the read-pick-write sequence of one process ends before another's starts. Where
``fcntl`` is missing (Windows) numba's save is left as it is. Every compiled loop of metaeval goes through
:func:`metaeval.stats.kernels.compiler.jit`, whose module calls this once on import.
"""
from __future__ import annotations

import os

__all__ = ["lock_cache_saves"]


def lock_cache_saves() -> bool:
    """Make numba's cache save exclusive across processes (idempotent); whether saves are locked."""
    try:
        import fcntl
    except ImportError:
        return False
    from numba.core import caching

    save = caching.IndexDataCacheFile.save
    if getattr(save, "locked_across_processes", False):
        return True

    def locked_save(self, key, data):
        try:
            lock = open(os.path.join(self._cache_path, "numba-save.lock"), "a")
        except OSError:  # numba's own write would fail as well: let it say so
            return save(self, key, data)
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            return save(self, key, data)  # closing the file releases the lock

    locked_save.locked_across_processes = True
    caching.IndexDataCacheFile.save = locked_save
    return True
