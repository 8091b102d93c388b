"""Local worker processes: how they start, and the thread limits they run with.

Workers start from a fork server that has imported metaeval (``spawn`` where the platform has no fork
server), never as a fork of a possibly threaded caller. Each worker bounds its BLAS / OpenMP threads
(:func:`limit_worker_threads`, the pool initializer's first call) so that ``workers`` processes on as
many cores do not oversubscribe them. The caller's environment is never changed.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["THREAD_VARIABLES", "limit_worker_threads", "pool_context", "process_pool"]

#: Environment variables that bound the threads of BLAS / OpenMP libraries in a worker process.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                    "NUMEXPR_NUM_THREADS")


def limit_worker_threads() -> None:
    """In a worker process metaeval started: one BLAS / OpenMP thread unless the user set the variables.

    The variables are set in the worker's own environment (read by libraries it imports later, e.g.
    torch's OpenMP); the OpenBLAS already loaded with numpy is set to one thread directly; torch, if
    loaded, too. Never call this in the user's process.
    """
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    if os.environ["OPENBLAS_NUM_THREADS"] == "1":
        from ..stats._runtime import limit_blas_threads

        limit_blas_threads(1)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def pool_context(modules: Sequence[str] = ()):
    """``forkserver`` (preloading ``modules``) where the platform has it, ``spawn`` otherwise.

    Both start workers from a fresh, single-threaded interpreter. The fork server imports metaeval once
    and forks every worker from it, so workers start in milliseconds after the first pool of a session.
    """
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    preload = list(getattr(forkserver._forkserver, "_preload_modules", ["__main__"]))
    wanted = [m for m in dict.fromkeys([__name__, *modules]) if m not in preload]
    if wanted:  # takes effect when the fork server starts (the first pool of the session)
        context.set_forkserver_preload([*preload, *wanted])
    return context


def _start_worker(initializer: Callable | None, initargs: tuple) -> None:
    limit_worker_threads()
    if initializer is not None:
        initializer(*initargs)


def process_pool(workers: int, *, initializer: Callable | None = None, initargs: tuple = (),
                 modules: Sequence[str] = ()) -> Any:
    """A ``ProcessPoolExecutor`` of ``workers`` processes started by :func:`pool_context`.

    Every worker first calls :func:`limit_worker_threads`, then ``initializer(*initargs)``; ``modules``
    are preloaded by the fork server.
    """
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(modules), initializer=_start_worker,
                               initargs=(initializer, initargs))
