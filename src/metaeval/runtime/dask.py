"""Connecting to a Dask cluster (the optional extra ``dask``): one validation, one connection, one error."""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from .. import defaults
from ..errors import MetaevalError, ParameterError, require_module

__all__ = ["SchedulerLostError", "check_scheduler", "cluster_faults", "connect", "distributed", "quiet_client_logs"]

#: Seconds to wait when closing a Client whose scheduler may be gone.
CLOSE_TIMEOUT = 2.0


class SchedulerLostError(MetaevalError):
    """The Dask scheduler (or every worker able to run a task) was lost while a run was under way."""

DASK_INSTALL = "'metaeval[dask]'"


def distributed():
    """The ``distributed`` module, or :class:`~metaeval.errors.MissingDependencyError` with the install hint."""
    return require_module("distributed", purpose="running on a Dask scheduler", install=DASK_INSTALL)


def _is_client(value: Any) -> bool:
    try:
        import distributed as module
    except ImportError:
        return False
    return isinstance(value, module.Client)


def check_scheduler(scheduler: Any) -> Any:
    """``scheduler`` if it is None, a non-empty address or a ``distributed.Client``."""
    if scheduler is None or _is_client(scheduler):
        return scheduler
    if isinstance(scheduler, str) and scheduler.strip():
        return scheduler
    if isinstance(scheduler, str):
        raise ParameterError(f"`scheduler` must be a scheduler address like 'tcp://host:8786'; got {scheduler!r}.")
    raise ParameterError("`scheduler` must be a dask.distributed Client or a scheduler address like "
                         f"'tcp://host:8786'; got {scheduler!r}.")


def _check_address(address: str) -> None:
    """A malformed address fails here, at once: a Client given one raises, then its finalizer waits 20 s
    for a connection that never existed and prints a traceback."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
    except ValueError as error:
        raise ParameterError(f"`scheduler` must be a scheduler address like 'tcp://host:8786'; got {address!r}"
                             f" ({error}).") from None


def connect(scheduler: Any) -> tuple[Any, bool]:
    """``(client, owned)``: the given Client (not owned), or a new Client connected to the address (owned:
    the caller closes it)."""
    module = distributed()
    if isinstance(scheduler, module.Client):
        return scheduler, False
    _check_address(scheduler)
    try:
        client = module.Client(scheduler, timeout=defaults.DASK_CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise ParameterError(
            f"`scheduler` must be the address of a running Dask scheduler; could not connect to {scheduler!r}"
            f" within {defaults.DASK_CONNECT_TIMEOUT:g} s ({type(error).__name__})."
        ) from None
    return client, True


def cluster_faults() -> tuple[type[BaseException], ...]:
    """The exceptions by which a ``distributed`` Future says the cluster, not the task, failed: the
    connection to the scheduler was lost (the futures are cancelled), a comm closed, or workers kept dying
    under a task (``KilledWorker``)."""
    module = distributed()
    from distributed.comm.core import CommClosedError
    from distributed.scheduler import KilledWorker

    return (module.client.FutureCancelledError, CommClosedError, KilledWorker)


def lost(address: str, error: BaseException) -> SchedulerLostError:
    """The one-line error of a run whose cluster went away (the caller adds what was kept)."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    reason = text.partition("reason: ")[2].rstrip(".") or type(error).__name__
    return SchedulerLostError(f"`scheduler` must stay reachable for the whole run; lost {address} ({reason}).")


@contextlib.contextmanager
def quiet_client_logs() -> Iterator[None]:
    """Silence the client-side logs of ``distributed`` (a lost scheduler prints some 80 lines of reconnect
    tracebacks) while metaeval owns the Client; the failure is reported as one error instead."""
    loggers = [logging.getLogger(name) for name in ("distributed", "distributed.client", "distributed.comm",
                                                     "distributed.core", "distributed.batched", "tornado")]
    levels = [logger.level for logger in loggers]
    try:
        for logger in loggers:
            logger.setLevel(logging.CRITICAL + 1)
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def close(client: Any) -> None:
    """Close an owned Client without hanging on a scheduler that is gone."""
    try:
        client.close(timeout=CLOSE_TIMEOUT)
    except Exception:  # noqa: BLE001 - closing a client of a dead scheduler raises TimeoutError / OSError
        pass
