"""Local worker processes: how they start, and the thread limits they run with.

Workers start from a fork server that has imported metaeval (``spawn`` where the platform has no fork
server), never as a fork of a possibly threaded caller. Each worker bounds its BLAS / OpenMP threads
(:func:`limit_worker_threads`, the pool initializer's first call) so that ``workers`` processes on as
many cores do not oversubscribe them. The caller's environment is never changed.

Workers exit when the process that started them dies, however it dies (SIGKILL included;
:func:`exit_with_parent`, the pool initializer's second call). Without this an idle worker waits
forever on its task queue (it holds both ends of the queue's pipe, so it never sees end-of-file), and
with the workers the fork server and the resource tracker stay alive too: both exit on their own once
no worker holds their pipes.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["THREAD_VARIABLES", "exit_with_parent", "limit_worker_threads", "pool_context", "process_pool"]

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


#: Exit status of a worker that ends itself because the process that started it died.
ORPHAN_EXIT_CODE = 70
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_WATCH_INTERVAL = 0.5  # seconds between checks when no parent sentinel is available


def _set_parent_death_signal() -> bool:
    """Linux: have the kernel SIGKILL this process when its parent dies. False where prctl is absent."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(sentinel: int | None, owner: int) -> None:
    """Block until the pool's owner is gone, then end this worker at once (``os._exit``)."""
    if sentinel is not None:
        from multiprocessing.connection import wait

        try:
            wait([sentinel])  # end-of-file when the owner dies: it held the pipe's other end
        except OSError:
            pass
    else:  # portable fallback: poll
        import time

        while True:
            try:
                os.kill(owner, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                pass
            time.sleep(_WATCH_INTERVAL)
    os._exit(ORPHAN_EXIT_CODE)


def exit_with_parent(owner: int | None = None) -> None:
    """In a worker process: exit as soon as the process that created the pool dies.

    Two mechanisms, both started here: on Linux the parent-death signal (``prctl(PR_SET_PDEATHSIG,
    SIGKILL)``: the kernel kills the worker when its direct parent, the fork server, dies), and
    everywhere a daemon thread that waits on the multiprocessing parent sentinel (a pipe whose writing
    end only the pool's owner holds, so it reaches end-of-file when the owner dies, whether the worker
    came from the fork server or not) and then ends the worker with ``os._exit``. Without a sentinel the thread polls whether ``owner`` (a pid) still exists. The worker
    holds the fork server's and the resource tracker's pipes, which then close, so both exit too.
    """
    import multiprocessing
    import threading

    if owner is None or os.getppid() != owner:
        # Only for a parent that is not the caller: the kernel signals when the *thread* that started
        # the process ends, and the caller may start workers from a short-lived thread (the fork server
        # forks from its one thread).
        _set_parent_death_signal()
    parent = multiprocessing.parent_process()
    sentinel = getattr(parent, "sentinel", None) if parent is not None else None
    if sentinel is None and owner is None:
        return
    if sentinel is None and owner is not None:
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            os._exit(ORPHAN_EXIT_CODE)
        except PermissionError:
            pass
    threading.Thread(target=_watch, args=(sentinel, owner), daemon=True, name="metaeval-orphan-watch").start()


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


def _start_worker(owner: int, initializer: Callable | None, initargs: tuple) -> None:
    limit_worker_threads()
    exit_with_parent(owner)
    if initializer is not None:
        initializer(*initargs)


def process_pool(workers: int, *, initializer: Callable | None = None, initargs: tuple = (),
                 modules: Sequence[str] = ()) -> Any:
    """A ``ProcessPoolExecutor`` of ``workers`` processes started by :func:`pool_context`.

    Every worker first calls :func:`limit_worker_threads` and :func:`exit_with_parent`, then
    ``initializer(*initargs)``; ``modules`` are preloaded by the fork server.
    """
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, mp_context=pool_context(modules), initializer=_start_worker,
                               initargs=(os.getpid(), initializer, initargs))
