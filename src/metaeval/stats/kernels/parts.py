"""Independent parts of one computation run on several threads (the compiled loops and numpy release the GIL).

Used where the parts write disjoint results and every value is computed by the same operations whatever the
thread that computes it (the summary-level bootstrap over many inputs, the shared resampled system sums, the
input counts of the compact draws, every compiled loop of ``stats/``: none is a numba parallel loop), so that
the thread count never changes a result. Parts of uneven size run the same loop on every thread, each taking
the next task from a shared counter (:func:`metaeval.stats.kernels.compiler.intrinsics.next_task`). The thread count
(:func:`threads`) follows numba's (``NUMBA_NUM_THREADS``, by default the number of cores); :data:`THREADS`
overrides it (tests pin 1 against 2).
"""
from __future__ import annotations

import contextvars
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["THREADS", "in_pool", "pool", "release_freed", "run_parts", "run_tasks", "threads"]

#: Threads of a split computation (None: numba's thread count, see :func:`threads`); values never depend on it.
THREADS: int | None = None

_POOL: dict = {}


def threads() -> int:
    """The number of threads a computation is split over (at least 1): :data:`THREADS` when set, else numba's
    thread count when numba is loaded, else ``NUMBA_NUM_THREADS``, else the cores this process may use (numba's
    default; numba is not imported for this)."""
    if THREADS is not None:
        return max(1, int(THREADS))
    numba = sys.modules.get("numba")
    if numba is not None:
        return max(1, int(numba.get_num_threads()))
    setting = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if setting.isdigit() and int(setting) > 0:
        return int(setting)
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def pool(workers: int):
    """A process-wide pool of at least ``workers`` threads (created on first use and kept, like numba's own
    threads; a larger one replaces it when more are asked for, a new one in a forked child, which has none of
    its parent's threads)."""
    if _POOL.get("pid") != os.getpid():
        _POOL.clear()
    if _POOL.get("workers", 0) < workers:
        from concurrent.futures import ThreadPoolExecutor

        old = _POOL.get("pool")
        _POOL.update(pool=ThreadPoolExecutor(max_workers=workers, thread_name_prefix="metaeval-part"), workers=workers,
                     pid=os.getpid())
        if old is not None:
            old.shutdown(wait=False)
    return _POOL["pool"]


def in_pool() -> bool:
    """Whether this thread is one of the pool's (work it submits could wait behind itself)."""
    return threading.current_thread().name.startswith("metaeval-part")


def run_parts(fn: Callable[..., Any], parts: Sequence[tuple]) -> list:
    """``[fn(*p) for p in parts]``, the first part in this thread and the others in the pool, each in a copy of
    this thread's context (numpy's error state goes with it); an exception of any part is raised here."""
    if len(parts) <= 1 or in_pool():  # a part's own parts run in its thread (the pool could be all busy)
        return [fn(*p) for p in parts]
    workers = pool(len(parts) - 1)
    futures = [workers.submit(contextvars.copy_context().run, fn, *p) for p in parts[1:]]
    try:
        first = fn(*parts[0])
    finally:
        rest = [f.result() for f in futures]  # waits for every part even when this one failed
    return [first, *rest]


def run_tasks(fn: Callable[..., Any], n_tasks: int, *args) -> None:
    """``fn(counter, *args)`` on up to :func:`threads` threads at once (:func:`run_parts`; never more threads than
    tasks), ``counter`` a new shared task counter (int64, one element, 0): each run of ``fn`` takes the next task
    with :func:`metaeval.stats.kernels.compiler.intrinsics.next_task` until ``n_tasks`` are taken."""
    counter = np.zeros(1, dtype=np.int64)
    run_parts(fn, [(counter, *args)] * min(threads(), n_tasks))


def release_freed() -> None:
    """Give the memory freed in the pool's threads back to the system (glibc's ``malloc_trim``; best effort, a
    no-op elsewhere). glibc keeps each thread's freed blocks in that thread's arena, where the main thread's
    later arrays cannot reuse them: call this after a part allocated large temporaries in the pool."""
    trim = _POOL.get("trim")
    if trim is None:
        trim = False
        try:
            import ctypes

            trim = ctypes.CDLL(None).malloc_trim
            trim.argtypes, trim.restype = (ctypes.c_size_t,), ctypes.c_int
        except (OSError, AttributeError):
            trim = False
        _POOL["trim"] = trim
    if trim:
        trim(0)
