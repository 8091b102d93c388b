"""Run independent tasks in this process, in a local process pool, or on a Dask cluster.

:func:`map_tasks` is the one place where the simulations (:func:`metaeval.simulate_coverage`,
:func:`metaeval.simulate_power`, :func:`metaeval.ranking_stability`) fan out. It returns the results in
the order of the tasks whatever the backend, so a caller that splits its work into a fixed list of
tasks, each with its own seed (:func:`chunk_seeds`), gets the same numbers serially, on ``workers``
local processes and on a Dask cluster.

- serial (``workers=1``, no ``scheduler``): a loop in the calling process;
- ``workers > 1``: a local process pool (:func:`metaeval.runtime.workers.process_pool`, the scoring
  engine's pool: fork server or ``spawn``, one BLAS / OpenMP thread per worker);
- ``scheduler``: a ``dask.distributed`` Client, or the address of a running scheduler (connected to and
  closed afterwards). The workers must be able to import metaeval.

Data shared by every task (``shared``) is sent once per worker process (pool initializer) or scattered
once to the cluster, instead of once per task.
"""
from __future__ import annotations

import contextlib
import os
import pickle
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import ParameterError, check_int
from . import dask as _dask
from .workers import process_pool

__all__ = ["check_backend", "chunk_seeds", "chunk_sizes", "map_tasks"]

_SHARED: dict[str, Any] = {}


def check_backend(workers: Any, scheduler: Any) -> tuple[int, Any]:
    """Validate ``workers`` (int >= 1) and ``scheduler`` (None, an address or a Client; then ``workers == 1``)."""
    workers = check_int("workers", workers, minimum=1)
    scheduler = _dask.check_scheduler(scheduler)
    if scheduler is not None and workers != 1:
        raise ParameterError(
            f"`workers` must be 1 when `scheduler` is given (the cluster sets the parallelism); got {workers!r}.")
    return workers, scheduler


def chunk_sizes(total: int, size: int) -> list[int]:
    """``total`` split into chunks of ``size`` (the last one shorter): the same for every backend."""
    full, rest = divmod(int(total), int(size))
    return [int(size)] * full + ([rest] if rest else [])


def chunk_seeds(generator: np.random.Generator, seed: Any, n: int) -> list[np.random.SeedSequence]:
    """``n`` independent seeds, ``np.random.SeedSequence(seed).spawn(n)`` for an int ``seed``.

    ``seed`` is what :func:`metaeval._validation.rng_and_seed` records: an int (also for ``rng=None``, which
    draws one), or ``'generator'`` for a Generator, whose root entropy is then drawn once from
    ``generator``, so the run is reproducible from that Generator's state but not from the signature.
    """
    if isinstance(seed, int) and not isinstance(seed, bool):
        root = np.random.SeedSequence(seed)
    else:
        root = np.random.SeedSequence(generator.integers(0, 2 ** 32, size=4, dtype=np.uint64).tolist())
    return root.spawn(n)


def map_tasks(fn: Callable, tasks: Iterable[Any], *, workers: int = 1, scheduler: Any = None,
              shared: Any = None, progress: Callable[[], Any] | None = None) -> list:
    """``[fn(task) for task in tasks]`` (``fn(shared, task)`` when ``shared`` is given), on any backend.

    Parameters
    ----------
    fn : callable
        A module-level function (it is pickled for the pool and the cluster).
    tasks : iterable
        Picklable task arguments.
    workers : int
        Local processes (1: in this process).
    scheduler : None, str or distributed.Client
        A Dask scheduler address like ``'tcp://host:8786'`` or a Client; ``workers`` must then be 1.
    shared : any, optional
        Data every task needs, sent once per process / cluster rather than with every task.
    progress : callable, optional
        Called with no argument after each task is done (serially and in the local pool; on a Dask
        cluster once per task when the results are gathered).

    Returns
    -------
    list
        The results in the order of ``tasks``. The first task that raises stops the run and its error
        is raised here.
    """
    workers, scheduler = check_backend(workers, scheduler)
    tasks = list(tasks)
    if not tasks:
        return []
    tick = progress if progress is not None else (lambda: None)
    if scheduler is not None:
        results = _map_dask(fn, tasks, scheduler, shared)
        for _ in results:
            tick()
        return results
    if workers == 1 or len(tasks) == 1:
        results = []
        for task in tasks:
            results.append(fn(task) if shared is None else fn(shared, task))
            tick()
        return results
    return _map_pool(fn, tasks, min(workers, len(tasks)), shared, tick)


def _init_pool(key: str | None, payload: bytes | None) -> None:
    if key is not None:
        _SHARED.clear()
        _SHARED[key] = pickle.loads(payload)


def _call_shared(fn: Callable, key: str, task: Any) -> Any:
    return fn(_SHARED[key], task)


def _map_pool(fn: Callable, tasks: Sequence[Any], workers: int, shared: Any, tick: Callable[[], Any]) -> list:
    key = payload = None
    if shared is not None:
        payload = pickle.dumps(shared, protocol=pickle.HIGHEST_PROTOCOL)
        key = f"{os.getpid()}-{id(shared)}-{len(payload)}"
    pool = process_pool(workers, initializer=_init_pool, initargs=(key, payload))
    try:
        if shared is None:
            futures = [pool.submit(fn, task) for task in tasks]
        else:
            futures = [pool.submit(_call_shared, fn, key, task) for task in tasks]
        results = []
        for future in futures:
            results.append(future.result())
            tick()
        return results
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _map_dask(fn: Callable, tasks: Sequence[Any], scheduler: Any, shared: Any) -> list:
    client, owned = _dask.connect(scheduler)
    address = scheduler if isinstance(scheduler, str) else client.scheduler.address
    futures = []
    quiet = _dask.quiet_client_logs() if owned else contextlib.nullcontext()
    try:
        with quiet:
            if shared is None:
                futures = [client.submit(fn, task, pure=False) for task in tasks]
            else:
                common = client.scatter(shared, broadcast=True, hash=False)
                futures = [client.submit(fn, common, task, pure=False) for task in tasks]
            return client.gather(futures)
    except _dask.cluster_faults() as error:
        futures = []  # cancelled with the connection
        lost = _dask.lost(address, error)
        raise type(lost)(f"{lost} Nothing of this run is kept: run it again (the same seed gives the same"
                         " results).") from None
    finally:
        if futures:
            with contextlib.suppress(Exception):  # the scheduler may be gone; the error that ends the run is raised
                client.cancel(futures)
        if owned:
            _dask.close(client)
