"""Where batches are scored: in this process, in a local process pool, or on a Dask cluster.

Every backend takes the same stream of :class:`Batch` objects and yields ``(batch, result)`` as
batches finish (in any order), keeping only a bounded number of batches in flight so that finished
work reaches the cache while the rest runs. A batch's result depends only on the scorer and the pairs,
never on the backend, so every backend gives the same scores.

- :class:`SerialBackend`: one batch after another in the calling process.
- :class:`ProcessBackend`: a pool of ``workers`` local processes (:func:`metaeval.runtime.workers.process_pool`:
  fork server or ``spawn``, one BLAS / OpenMP thread per worker); the pickled scorers go to each worker
  once (pool initializer).
- :class:`DaskBackend`: a ``dask.distributed`` Client (given, or connected to a scheduler address and
  closed afterwards); the pickled scorers are scattered to every worker once. The workers must be able
  to import metaeval (and the scorers' own dependencies).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .. import defaults
from ..runtime import dask as _dask
from ..runtime.workers import process_pool
from . import _worker

__all__ = ["Batch", "DaskBackend", "ProcessBackend", "SerialBackend", "make_backend"]


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


class ProcessBackend(_Backend):
    """Score in ``workers`` local processes (``concurrent.futures.ProcessPoolExecutor``)."""

    def __init__(self, workers: int):
        self.parallelism = workers
        self.name = f"processes({workers})"
        self._pool = None
        self._digests: list[str] = []
        self._starter = None

    def __exit__(self, *exc: Any) -> None:
        if self._starter is not None:
            self._starter.join()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def start(self, scorers: Sequence[Any]) -> None:
        """Create the pool and start its workers in a background thread, so that the caller can go on
        (hashing the pairs, reading the cache) while the fork server imports metaeval."""
        import threading

        if self._pool is not None:
            return
        payloads = [_worker.dumps(s) for s in scorers]
        self._digests = [_worker.payload_digest(p) for p in payloads]
        self._pool = process_pool(
            self.parallelism, initializer=_worker.init_process, initargs=(dict(zip(self._digests, payloads)),),
            modules=[_worker.__name__, *(type(s).__module__ for s in scorers)],
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


class DaskBackend(_Backend):
    """Score on a Dask cluster: a ``distributed.Client`` or the address of a running scheduler."""

    def __init__(self, scheduler: Any):
        distributed = _dask.distributed()
        self._scheduler = _dask.check_scheduler(scheduler)
        if isinstance(scheduler, distributed.Client):
            self.address = scheduler.scheduler.address
        else:
            self.address = scheduler
        self.name = f"dask({self.address})"
        self.parallelism = 1
        self._client = None
        self._owned = False
        self._quiet = None

    def __enter__(self):
        self._client, self._owned = _dask.connect(self._scheduler)
        self._quiet = _dask.quiet_client_logs() if self._owned else None
        if self._quiet is not None:
            self._quiet.__enter__()
        self.parallelism = sum(self._client.nthreads().values()) or 1
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if self._owned:
                _dask.close(self._client)
        finally:
            if self._quiet is not None:
                self._quiet.__exit__(None, None, None)
            self._client = None

    def run(self, batches: Iterable[Batch], scorers: Sequence[Any]) -> Iterator[tuple[Batch, Any]]:
        distributed = _dask.distributed()
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
                result = future.result()
                yield batch, result
                following = next(stream, None)
                if following is not None:
                    queue.add(submit(following))
        except _dask.cluster_faults() as error:
            pending.clear()  # cancelled with the connection: nothing left to cancel
            raise _dask.lost(self.address, error) from None
        finally:
            if pending:
                try:
                    client.cancel(list(pending))
                except Exception:  # noqa: BLE001 - the scheduler may be gone; the error that ends the run is raised
                    pass


def make_backend(*, workers: int, scheduler: Any):
    """The backend for ``workers`` local processes or a Dask ``scheduler`` (validated by the caller)."""
    if scheduler is not None:
        return DaskBackend(scheduler)
    if workers == 1:
        return SerialBackend()
    return ProcessBackend(workers)
