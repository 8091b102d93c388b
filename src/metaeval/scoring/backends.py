"""Where batches are scored: in this process, in a local process pool, or on a Dask cluster.

Every backend takes the same stream of :class:`Batch` objects and yields ``(batch, result)`` as
batches finish (in any order), keeping only a bounded number of batches in flight so that finished
work reaches the cache while the rest runs. A batch's result depends only on the scorer and the pairs,
never on the backend, so every backend gives the same scores.

- :class:`SerialBackend`: one batch after another in the calling process.
- :class:`ProcessBackend`: ``concurrent.futures.ProcessPoolExecutor`` with ``workers`` processes,
  started by a fork server that has imported metaeval (``spawn`` where there is none; never a fork of a
  possibly threaded caller); the pickled scorers go to each worker once (pool initializer). Workers run with one BLAS / OpenMP thread (:data:`~._worker.THREAD_VARIABLES`
  set to 1 unless the user set them) so that 2 workers on 2 cores do not oversubscribe them.
- :class:`DaskBackend`: a ``dask.distributed`` Client (given, or connected to a scheduler address and
  closed afterwards); the pickled scorers are scattered to every worker once. The workers must be able
  to import metaeval (and the scorers' own dependencies).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .. import defaults
from ..errors import ParameterError
from . import _worker

__all__ = ["Batch", "DaskBackend", "ProcessBackend", "SerialBackend", "make_backend"]

DASK_HINT = "pip install 'metaeval[dask]', or pip install 'dask[distributed]'"


@dataclass(frozen=True)
class Batch:
    """Pairs to score with one metric.

    Attributes
    ----------
    metric : int
        Position of the metric in the run.
    keys : tuple
        Content keys of the pairs (see :func:`~metaeval.scoring.cache.pair_key`).
    pairs : tuple of (candidate, references)
    """

    metric: int
    keys: tuple
    pairs: tuple


class _Backend:
    """Context manager: ``with backend: backend.run(...)``; resources live between enter and exit."""

    name = "serial"
    parallelism = 1

    def __enter__(self):
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def start(self, scorers: Sequence[Any]) -> None:
        """Start workers ahead of :meth:`run` (in the background; nothing to do here)."""


class SerialBackend(_Backend):
    """Score in the calling process, one batch at a time."""

    def run(self, batches: Iterable[Batch], scorers: Sequence[Any]) -> Iterator[tuple[Batch, Any]]:
        for batch in batches:
            yield batch, _worker.score_pairs(scorers[batch.metric], batch.pairs)


@contextmanager
def _single_threaded_children():
    """Set the BLAS / OpenMP thread variables to 1 (where unset) for processes started meanwhile."""
    added = [name for name in _worker.THREAD_VARIABLES if name not in os.environ]
    for name in added:
        os.environ[name] = "1"
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _pool_context(modules: Sequence[str] = ()):
    """``forkserver`` (preloading the worker module and ``modules``) where the platform has it, ``spawn``
    otherwise.

    Both start workers from a fresh, single-threaded interpreter (never a fork of a threaded caller).
    The fork server imports metaeval once and forks every worker from it, so workers start in
    milliseconds after the first pool of a session instead of importing metaeval each.
    """
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    from multiprocessing import forkserver

    context = multiprocessing.get_context("forkserver")
    preload = list(getattr(forkserver._forkserver, "_preload_modules", ["__main__"]))
    wanted = [m for m in dict.fromkeys([_worker.__name__, *modules]) if m not in preload]
    if wanted:  # takes effect when the fork server starts (the first pool of the session)
        context.set_forkserver_preload([*preload, *wanted])
    return context


class ProcessBackend(_Backend):
    """Score in ``workers`` local processes (``concurrent.futures.ProcessPoolExecutor``)."""

    def __init__(self, workers: int):
        self.parallelism = workers
        self.name = f"processes({workers})"
        self._pool = None
        self._digests: list[str] = []
        self._starter = None
        self._environment = None

    def __enter__(self):
        # The pool's processes start while the variables are set (start() or run() is called inside).
        self._environment = _single_threaded_children()
        self._environment.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if self._starter is not None:
                self._starter.join()
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None
        finally:
            self._environment.__exit__(None, None, None)

    def start(self, scorers: Sequence[Any]) -> None:
        """Create the pool and start its workers in a background thread, so that the caller can go on
        (hashing the pairs, reading the cache) while the fork server imports metaeval."""
        import threading
        from concurrent.futures import ProcessPoolExecutor

        if self._pool is not None:
            return
        payloads = [_worker.dumps(s) for s in scorers]
        self._digests = [_worker.payload_digest(p) for p in payloads]
        self._pool = ProcessPoolExecutor(
            max_workers=self.parallelism,
            mp_context=_pool_context([type(s).__module__ for s in scorers]),
            initializer=_worker.init_process,
            initargs=(dict(zip(self._digests, payloads)),),
        )
        pool = self._pool
        # Each submission starts one worker; the first also starts the fork server and waits for it.
        self._starter = threading.Thread(
            target=lambda: [pool.submit(_worker.ready) for _ in range(self.parallelism)], daemon=True,
            name="metaeval-pool-start")
        self._starter.start()

    def run(self, batches: Iterable[Batch], scorers: Sequence[Any]) -> Iterator[tuple[Batch, Any]]:
        from concurrent.futures import FIRST_COMPLETED, wait

        self.start(scorers)
        self._starter.join()
        pool, digests = self._pool, self._digests
        limit = self.parallelism * defaults.SCORING_IN_FLIGHT
        stream = iter(batches)
        pending: dict[Any, Batch] = {}

        def submit(batch: Batch) -> None:
            pending[pool.submit(_worker.score_batch_in_pool, digests[batch.metric], batch.pairs)] = batch

        try:
            for batch in stream:
                submit(batch)
                if len(pending) >= limit:
                    break
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    batch = pending.pop(future)
                    yield batch, future.result()
                    following = next(stream, None)
                    if following is not None:
                        submit(following)
        finally:
            for future in pending:
                future.cancel()


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ParameterError(
            f"`scheduler` must be used with dask.distributed installed ({DASK_HINT}); got no module named 'distributed'."
        ) from None
    return distributed


class DaskBackend(_Backend):
    """Score on a Dask cluster: a ``distributed.Client`` or the address of a running scheduler."""

    def __init__(self, scheduler: Any):
        distributed = _distributed()
        self._scheduler = scheduler
        if isinstance(scheduler, distributed.Client):
            self.name = f"dask({scheduler.scheduler.address})"
        elif isinstance(scheduler, str):
            self.name = f"dask({scheduler})"
        else:
            raise ParameterError(
                "`scheduler` must be a dask.distributed Client or a scheduler address like 'tcp://host:8786';"
                f" got {scheduler!r}."
            )
        self.parallelism = 1
        self._client = None
        self._owned = False

    def _connect(self):
        distributed = _distributed()
        if isinstance(self._scheduler, distributed.Client):
            return self._scheduler, False
        try:
            client = distributed.Client(self._scheduler, timeout=defaults.DASK_CONNECT_TIMEOUT,
                                        set_as_default=False)
        except (OSError, TimeoutError, ValueError) as error:
            raise ParameterError(
                f"`scheduler` must be the address of a running Dask scheduler; could not connect to"
                f" {self._scheduler!r} within {defaults.DASK_CONNECT_TIMEOUT:g} s ({type(error).__name__})."
            ) from None
        return client, True

    def __enter__(self):
        self._client, self._owned = self._connect()
        self.parallelism = sum(self._client.nthreads().values()) or 1
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._owned:
            self._client.close()
        self._client = None

    def run(self, batches: Iterable[Batch], scorers: Sequence[Any]) -> Iterator[tuple[Batch, Any]]:
        distributed = _distributed()
        client = self._client
        pending: dict[Any, Batch] = {}
        try:
            limit = self.parallelism * defaults.SCORING_IN_FLIGHT
            payloads = [_worker.dumps(s) for s in scorers]
            digests = [_worker.payload_digest(p) for p in payloads]
            shared = [client.scatter(p, broadcast=True, hash=False) for p in payloads]
            stream = iter(batches)

            def submit(batch: Batch):
                m = batch.metric
                future = client.submit(_worker.score_batch, digests[m], shared[m], batch.pairs, pure=False)
                pending[future] = batch
                return future

            first = []
            for batch in stream:
                first.append(submit(batch))
                if len(pending) >= limit:
                    break
            queue = distributed.as_completed(first, loop=client.loop)
            for future in queue:
                batch = pending.pop(future)
                yield batch, future.result()
                following = next(stream, None)
                if following is not None:
                    queue.add(submit(following))
        finally:
            if pending:
                client.cancel(list(pending))


def make_backend(*, workers: int, scheduler: Any):
    """The backend for ``workers`` local processes or a Dask ``scheduler`` (validated by the caller)."""
    if scheduler is not None:
        return DaskBackend(scheduler)
    if workers == 1:
        return SerialBackend()
    return ProcessBackend(workers)
